//! Hand-worked vectors in TestFloat's conventions (flags: invalid 0x10, overflow 0x04,
//! underflow 0x02, inexact 0x01), each with its arithmetic. Integer results of invalid
//! conversions follow SoftFloat 3e's 8086-SSE build (`i32_fromPosOverflow = -0x7FFFFFFF - 1`,
//! `ui32_fromNaN = 0xFFFFFFFF`, ...: x86's "integer indefinite").

use lowbit::round::RoundingMode;
use lowbit::round::Tininess;
use lowbit::verify::{convert_with_random, convert_with_status, Format, VerifyOptions};

fn fmt(s: &str) -> Format {
    Format::parse(s).unwrap()
}

fn run(from: &str, to: &str, code: u64, mode: RoundingMode, tininess: Tininess, saturate: bool) -> (u64, u8) {
    let (c, s) = convert_with_status(code, &fmt(from), &fmt(to), &VerifyOptions { mode, tininess, saturate });
    (c, s.bits())
}

fn mode(m: RoundingMode) -> (u64, u8) {
    // f32 1e5 = 0x47C35000 into f16. Even toward zero it overflows: at binade 2^16 f16's quantum
    // is 2^(16-10) = 64, and 100000 / 64 = 1562.5, so the candidates are 1562*64 = 99968 and
    // 1563*64 = 100032, both above f16's MAX 65504 (0x7BFF).
    run("f32", "f16", 0x47C3_5000, m, Tininess::AfterRounding, false)
}

#[test]
fn float32_to_float16_overflow_in_each_mode() {
    // Overflow|inexact (0x05) always; the result follows the direction (IEEE 754 §7.4):
    // infinity (0x7C00) for the nearest modes, away and toward +inf; MAX (0x7BFF) for toward
    // zero, toward -inf (a positive value) and round to odd.
    assert_eq!(mode(RoundingMode::NearestEven), (0x7C00, 0x05));
    assert_eq!(mode(RoundingMode::NearestTiesAway), (0x7C00, 0x05));
    assert_eq!(mode(RoundingMode::AwayFromZero), (0x7C00, 0x05));
    assert_eq!(mode(RoundingMode::TowardPositive), (0x7C00, 0x05));
    assert_eq!(mode(RoundingMode::TowardZero), (0x7BFF, 0x05));
    assert_eq!(mode(RoundingMode::TowardNegative), (0x7BFF, 0x05));
    assert_eq!(mode(RoundingMode::ToOdd), (0x7BFF, 0x05));
    // -1e5 = 0xC7C35000: toward -inf gives -inf (0xFC00), toward +inf gives -MAX (0xFBFF).
    let neg = |m| run("f32", "f16", 0xC7C3_5000, m, Tininess::AfterRounding, false);
    assert_eq!(neg(RoundingMode::TowardNegative), (0xFC00, 0x05));
    assert_eq!(neg(RoundingMode::TowardPositive), (0xFBFF, 0x05));
    // 65520 = 0x477FF000 is the midpoint of 65504 and 65536: nearest-even picks 65536 (65504's
    // last fraction bit is 1) and overflows; toward zero gives 65504, inexact, no overflow.
    assert_eq!(
        run("f32", "f16", 0x477F_F000, RoundingMode::NearestEven, Tininess::AfterRounding, false),
        (0x7C00, 0x05)
    );
    assert_eq!(
        run("f32", "f16", 0x477F_F000, RoundingMode::TowardZero, Tininess::AfterRounding, false),
        (0x7BFF, 0x01)
    );
}

#[test]
fn a_tiny_value_under_each_tininess_rule() {
    let tiny = |code, t| run("f32", "f16", code, RoundingMode::NearestEven, t, false);
    // x = 2^-14 - 2^-26 = 0x387FF000 (f32: exponent field 0x70 = 2^-15, fraction eleven ones).
    // f16's smallest normal is 2^-14 (0x0400); the subnormal quantum is 2^-24.
    // Delivered: x / 2^-24 = 1023.75 -> 1024 units = 2^-14, a normal result, inexact.
    // Before rounding: x < 2^-14, tiny; inexact -> underflow|inexact (0x03).
    // After rounding (unbounded exponent, 11 bits at binade 2^-15, quantum 2^-25):
    //   x / 2^-25 = 2047.5, a tie -> 2048 (even) = 2^-14, not tiny -> inexact only (0x01).
    // Delivered: 0x0400 is normal -> 0x01.
    assert_eq!(tiny(0x387F_F000, Tininess::BeforeRounding), (0x0400, 0x03));
    assert_eq!(tiny(0x387F_F000, Tininess::AfterRounding), (0x0400, 0x01));
    assert_eq!(tiny(0x387F_F000, Tininess::Delivered), (0x0400, 0x01));
    // x = 2047 * 2^-25 = 2^-14 - 2^-25 = 0x387FE000 (fraction ten ones).
    // Delivered: x / 2^-24 = 1023.5, a tie -> 1024 (even) = 0x0400, inexact.
    // After rounding: 2047 fits 11 bits, so x is exact at unbounded range and below 2^-14:
    //   tiny, and the delivered result is inexact -> 0x03. Before rounding: 0x03.
    // Delivered: normal -> 0x01.
    assert_eq!(tiny(0x387F_E000, Tininess::BeforeRounding), (0x0400, 0x03));
    assert_eq!(tiny(0x387F_E000, Tininess::AfterRounding), (0x0400, 0x03));
    assert_eq!(tiny(0x387F_E000, Tininess::Delivered), (0x0400, 0x01));
    // An exact subnormal raises nothing (underflow needs inexact): 2^-24 = 0x33800000 -> 0x0001.
    assert_eq!(tiny(0x3380_0000, Tininess::BeforeRounding), (0x0001, 0x00));
    // 2^-26 = 0x32800000 rounds to +0 under nearest-even (a quarter of the quantum): 0x03.
    assert_eq!(tiny(0x3280_0000, Tininess::Delivered), (0x0000, 0x03));
}

#[test]
fn signalling_nans_raise_invalid_and_are_quieted() {
    let nan = |code, to| run("f32", to, code, RoundingMode::NearestEven, Tininess::AfterRounding, false);
    // 0x7F800001: signalling (quiet bit 22 clear). SoftFloat's 8086-SSE f32_to_f16 keeps the
    // top payload bits: the fraction left-aligned is 2^-23, whose top 10 bits are 0, plus the
    // quiet bit -> 0x7E00, invalid.
    assert_eq!(nan(0x7F80_0001, "f16"), (0x7E00, 0x10));
    // 0x7FA00000: fraction 0x200000 (bit 21); its top 10 bits are 0x100; | quiet 0x200 -> 0x7F00.
    assert_eq!(nan(0x7FA0_0000, "f16"), (0x7F00, 0x10));
    // 0xFFC00000, a quiet NaN: no flag, sign kept -> 0xFE00.
    assert_eq!(nan(0xFFC0_0000, "f16"), (0xFE00, 0x00));
    // Into float8 E4M3FN (no payloads): its NaN 0x7F, invalid for the signalling input.
    assert_eq!(nan(0x7F80_0001, "e4m3"), (0x7F, 0x10));
    // E5M2's 0x7D has its quiet bit (fraction bit 1) clear: signalling by IEEE's rule.
    assert_eq!(run("e5m2", "f16", 0x7D, RoundingMode::NearestEven, Tininess::AfterRounding, false), (0x7E00, 0x10));
}

#[test]
fn saturation_and_specials_without_a_code() {
    let e4m3 = |code, saturate| run("f32", "e4m3", code, RoundingMode::NearestEven, Tininess::AfterRounding, saturate);
    // 1000.0 = 0x447A0000 into FLOAT8E4M3FN (MAX 448 = 0x7E): saturating gives 0x7E with
    // overflow|inexact (0x05); without saturation nearest-even overflows to its NaN 0x7F, 0x05.
    assert_eq!(e4m3(0x447A_0000, true), (0x7E, 0x05));
    assert_eq!(e4m3(0x447A_0000, false), (0x7F, 0x05));
    // +Inf (0x7F800000) has no E4M3FN code: 0x7E saturating, NaN 0x7F otherwise; invalid.
    assert_eq!(e4m3(0x7F80_0000, true), (0x7E, 0x10));
    assert_eq!(e4m3(0x7F80_0000, false), (0x7F, 0x10));
    // A quiet NaN into float4 (no NaN): +MAX 6.0 = 0x7, invalid.
    assert_eq!(run("f32", "e2m1", 0x7FC0_0000, RoundingMode::NearestEven, Tininess::AfterRounding, false), (0x7, 0x10));
    // The described 1-4-3 IEEE format (MAX 240 = 0x77, +Inf 0x78): 1000 -> +Inf, 0x05.
    let ieee = |code| run("f32", "e4m3,special=ieee", code, RoundingMode::NearestEven, Tininess::AfterRounding, false);
    assert_eq!(ieee(0x447A_0000), (0x78, 0x05));
    // 240 exact -> 0x77; 248 = 0x43780000 is the midpoint of 240 and 256, 240's last fraction
    // bit is 1, so it goes to 256: overflow -> 0x78, 0x05.
    assert_eq!(ieee(0x4370_0000), (0x77, 0x00));
    assert_eq!(ieee(0x4378_0000), (0x78, 0x05));
}

#[test]
fn float32_to_int32_inexact_and_invalid() {
    let int = |code, to, m, saturate| run("f32", to, code, m, Tininess::AfterRounding, saturate);
    // 2.5 = 0x40200000: nearest-even 2, inexact.
    assert_eq!(int(0x4020_0000, "int32", RoundingMode::NearestEven, false), (2, 0x01));
    // -2.5 = 0xC0200000 toward -inf: -3 = 0xFFFFFFFD, inexact.
    assert_eq!(int(0xC020_0000, "int32", RoundingMode::TowardNegative, false), (0xFFFF_FFFD, 0x01));
    // 3.0 exact: no flag.
    assert_eq!(int(0x4040_0000, "int32", RoundingMode::TowardZero, false), (3, 0x00));
    // 3e9 = 0x4F32D05E > 2^31 - 1: invalid only, integer indefinite 0x80000000 (8086-SSE);
    // saturating: 0x7FFFFFFF.
    assert_eq!(int(0x4F32_D05E, "int32", RoundingMode::NearestEven, false), (0x8000_0000, 0x10));
    assert_eq!(int(0x4F32_D05E, "int32", RoundingMode::NearestEven, true), (0x7FFF_FFFF, 0x10));
    // NaN: invalid, 0x80000000 (saturating: 0).
    assert_eq!(int(0x7FC0_0000, "int32", RoundingMode::NearestEven, false), (0x8000_0000, 0x10));
    assert_eq!(int(0x7FC0_0000, "int32", RoundingMode::NearestEven, true), (0, 0x10));
    // -0.3 = 0xBE99999A into uint32 toward zero rounds to 0: in range, inexact (SoftFloat judges
    // the rounded value). -1.0 = 0xBF800000 is out of range: invalid, 0xFFFFFFFF.
    assert_eq!(int(0xBE99_999A, "uint32", RoundingMode::TowardZero, false), (0, 0x01));
    assert_eq!(int(0xBF80_0000, "uint32", RoundingMode::TowardZero, false), (0xFFFF_FFFF, 0x10));
    // int8: 127.5 = 0x42FF0000 nearest-even -> 128, out of range: 0x80 (indefinite).
    assert_eq!(int(0x42FF_0000, "int8", RoundingMode::NearestEven, false), (0x80, 0x10));
    assert_eq!(int(0x42FF_0000, "int8", RoundingMode::TowardZero, false), (0x7F, 0x01));
}

#[test]
fn round_to_odd_and_stochastic_rounding() {
    // Into FLOAT8E4M3FN (3 fraction bits, quantum 2^-3 at [1, 2)).
    // 1.0625 = 0x3F880000 is 1 + half a quantum: truncated 1.000 (even), inexact -> 1.125 = 0x39.
    // 1.1875 = 0x3F980000: truncated 1.001 (odd) stays 0x39.
    let odd = |code| run("f32", "e4m3", code, RoundingMode::ToOdd, Tininess::AfterRounding, false);
    assert_eq!(odd(0x3F88_0000), (0x39, 0x01));
    assert_eq!(odd(0x3F98_0000), (0x39, 0x01));
    // Stochastic, 2 random bits: 1.09375 = 0x3F8C0000 = 1 + 3/4 quantum, so the two dropped bits
    // are 0b11 = 3. Random 0: 3 + 0 < 4, truncate to 1.0 = 0x38. Random 1: 3 + 1 = 4 carries:
    // 1.125 = 0x39. Only the low 2 random bits count (0b100 = 0 again).
    let sr = |random| {
        let opts = VerifyOptions { mode: RoundingMode::Stochastic { bits: 2 }, ..VerifyOptions::default() };
        let (c, s) = convert_with_random(0x3F8C_0000, &fmt("f32"), &fmt("e4m3"), &opts, random);
        (c, s.bits())
    };
    assert_eq!(sr(0), (0x38, 0x01));
    assert_eq!(sr(1), (0x39, 0x01));
    assert_eq!(sr(0b100), (0x38, 0x01));
}

#[test]
fn the_plan_integer_kernel_agrees_with_the_core_in_the_new_modes() {
    // No ONNX profile builds these kernels; the check keeps their arms honest. Lanes below 2^31
    // in magnitude, against the core's rounding to an integer (low 4 bits kept, as for int4).
    use lowbit::__private::IntegerKernel;
    use lowbit::round::round_to_integer_exactly;
    use lowbit::Value;
    for mode in [RoundingMode::TowardNegative, RoundingMode::TowardPositive, RoundingMode::ToOdd] {
        let kernel = IntegerKernel { mode, mask: 0xF };
        for bits in (0u32..0x4F00_0000).step_by(0x1_0001).chain([0x3F00_0000, 0xBFC0_0000, 0x4040_0000]) {
            for x in [f32::from_bits(bits), -f32::from_bits(bits)] {
                let Value::Finite(e) = Value::from_f32(x) else { continue };
                let (negative, magnitude, _) = round_to_integer_exactly(e, mode, 0).unwrap();
                let want = if negative { magnitude.wrapping_neg() } else { magnitude } & 0xF;
                assert_eq!(kernel.encode(x), want, "{mode:?} {x}");
                let mut out = [0i32];
                kernel.round_f32(&x.to_le_bytes(), &mut out);
                assert_eq!(out[0] as u64 & 0xF, want, "round_f32 {mode:?} {x}");
            }
        }
    }
}
