//! The Cast decision table (tables/profiles.md), row by row: what the ONNX profiles return. Each
//! array is `[spec, onnx-reference, onnxruntime, openvino]`; the bytes were observed with onnx
//! 1.23.2's reference evaluator (numpy 2.4.6, ml_dtypes 0.6.0) and onnxruntime 1.31.1 on x86-64
//! (AVX2, F16C), by hand and with scripts/crosscheck_cast.py. tests/profiles_peers.rs has the
//! ml-dtypes and xla profiles.

use lowbit::DType;
use lowbit::Profile;
use lowbit::Tensor;
use lowbit::{cast, cast_op, CastAttributes, CastTo};
use lowbit::{convert_code, CastOptions, RoundMode};

fn each(from: DType, to: DType, code: u64, saturate: bool) -> [u64; 4] {
    each_with(from, to, code, saturate, RoundMode::Up)
}

/// The ONNX profiles, in the order of the arrays below.
const ONNX: [Profile; 4] = [Profile::Spec, Profile::OnnxReference, Profile::OnnxRuntime, Profile::OpenVino];

fn each_with(from: DType, to: DType, code: u64, saturate: bool, round_mode: RoundMode) -> [u64; 4] {
    ONNX.map(|profile| convert_code(from, to, code, &CastOptions { saturate, round_mode, profile }).unwrap())
}

fn f32c(x: f32) -> u64 {
    u64::from(x.to_bits())
}

fn f64c(x: f64) -> u64 {
    x.to_bits()
}

#[test]
fn row_01_float_to_float8_rounds_once_in_spec() {
    let x = f64c(1.0625 + 2f64.powi(-30));
    assert_eq!(each(DType::Double, DType::Float8E4M3FN, x, true), [0x39, 0x38, 0x38, 0x39]);
    assert_eq!(each(DType::Float, DType::Float8E4M3FN, f32c(1.0625), true), [0x38; 4]);
    assert_eq!(each(DType::Float, DType::Float8E5M2, f32c(1.375), true), [0x3E; 4]);
}

#[test]
fn row_02_infinity_saturates_to_max_in_every_variant() {
    for (to, max) in [
        (DType::Float8E4M3FN, 0x7E),
        (DType::Float8E4M3FNUZ, 0x7F),
        (DType::Float8E5M2, 0x7B),
        (DType::Float8E5M2FNUZ, 0x7F),
    ] {
        assert_eq!(each(DType::Float, to, f32c(f32::INFINITY), true), [max; 4], "{to}");
        assert_eq!(each(DType::Float, to, f32c(f32::NEG_INFINITY), true), [max | 0x80; 4], "{to}");
    }
}

#[test]
fn row_03_non_saturating_overflow() {
    assert_eq!(each(DType::Float, DType::Float8E4M3FN, f32c(480.0), false), [0x7F, 0x7F, 0x7E, 0x7F]);
    assert_eq!(each(DType::Float, DType::Float8E4M3FN, f32c(-488.0), false), [0xFF, 0xFF, 0xFE, 0xFF]);
    assert_eq!(each(DType::Float, DType::Float8E4M3FN, f32c(496.0), false), [0x7F; 4]);
    assert_eq!(each(DType::Float, DType::Float8E5M2, f32c(61440.0), false), [0x7C, 0x7C, 0x7F, 0x7C]);
    assert_eq!(each(DType::Float, DType::Float8E5M2, f32c(-61440.004), false), [0xFC, 0xFC, 0xFF, 0xFC]);
    assert_eq!(each(DType::Float, DType::Float8E5M2, f32c(65536.0), false), [0x7C; 4]);
    assert_eq!(each(DType::Float, DType::Float8E4M3FNUZ, f32c(248.0), false), [0x80; 4]);
    // float16 source, research §5: 65504 -> E5M2 sat=0 is Inf, or NaN 0x7F in onnxruntime.
    let f16_65504 = u64::from(half::f16::from_f32(65504.0).to_bits());
    assert_eq!(each(DType::Float16, DType::Float8E5M2, f16_65504, false), [0x7C, 0x7C, 0x7F, 0x7C]);
}

#[test]
fn row_04_nan_codes() {
    let nan = f32c(f32::NAN);
    let neg_nan = f32c(-f32::NAN);
    assert_eq!(each(DType::Float, DType::Float8E4M3FN, neg_nan, true), [0xFF; 4]);
    assert_eq!(each(DType::Float, DType::Float8E5M2, nan, true), [0x7E, 0x7E, 0x7F, 0x7E]);
    assert_eq!(each(DType::Float, DType::Float8E5M2, neg_nan, false), [0xFE, 0xFE, 0xFF, 0xFE]);
    assert_eq!(each(DType::Float, DType::Float8E4M3FNUZ, neg_nan, true), [0x80; 4]);
    assert_eq!(each(DType::Float, DType::Float8E5M2FNUZ, nan, false), [0x80; 4]);
    // FNUZ NaN is -NaN: into E5M2 it keeps the sign (research §5).
    assert_eq!(each(DType::Float8E5M2FNUZ, DType::Float8E5M2, 0x80, true), [0xFE, 0xFE, 0xFF, 0xFE]);
}

#[test]
fn row_05_fnuz_zero_is_unsigned() {
    for x in [-0.0f32, -1e-10, -f32::from_bits(1)] {
        assert_eq!(each(DType::Float, DType::Float8E4M3FNUZ, f32c(x), true), [0x00; 4]);
        assert_eq!(each(DType::Float, DType::Float8E5M2FNUZ, f32c(x), false), [0x00; 4]);
        assert_eq!(each(DType::Float, DType::Float8E4M3FN, f32c(x), true), [0x80; 4]);
    }
}

#[test]
fn row_06_float64_to_float16() {
    let x = f64c(1.0 + 2f64.powi(-11) + 2f64.powi(-30));
    assert_eq!(each(DType::Double, DType::Float16, x, true), [0x3C01, 0x3C01, 0x3C00, 0x3C01]);
}

#[test]
fn row_07_wide_sources_into_narrow_floats() {
    let x = f64c(1.0 + 2f64.powi(-8) + 2f64.powi(-30));
    assert_eq!(each(DType::Double, DType::Bfloat16, x, true), [0x3F81, 0x3F80, 0x3F80, 0x3F81]);
    assert_eq!(each(DType::Int64, DType::Bfloat16, 16842753, true), [0x4B81, 0x4B80, 0x4B80, 0x4B81]);
    assert_eq!(each(DType::Int32, DType::Bfloat16, 16842753, true), [0x4B81, 0x4B80, 0x4B80, 0x4B81]);
    // float4: onnxruntime has no kernel, so its profile does what spec does.
    let q = f64c(0.25 + 2f64.powi(-40));
    assert_eq!(each(DType::Double, DType::Float4E2M1, q, true), [0x1, 0x0, 0x1, 0x1]);
    // 464.00000001 into E4M3FN without saturation: NaN when rounded once, 448 through float32.
    assert_eq!(each(DType::Double, DType::Float8E4M3FN, f64c(464.00000001), false), [0x7F, 0x7E, 0x7E, 0x7F]);
    // E8M0 from 1e300 (research §10): MAX in spec; through float32 it is Inf, which the
    // reference turns into NaN and onnxruntime saturates.
    assert_eq!(each(DType::Double, DType::Float8E8M0, f64c(1e300), true), [0xFE, 0xFF, 0xFE, 0xFE]);
}

#[test]
fn row_08_nan_to_float4() {
    assert_eq!(each(DType::Float, DType::Float4E2M1, f32c(f32::NAN), true), [0x7, 0x8, 0x7, 0x7]);
    assert_eq!(each(DType::Float, DType::Float4E2M1, f32c(-f32::NAN), true), [0x7, 0x0, 0x7, 0x7]);
}

#[test]
fn row_09_float4_clamps_whatever_saturate_says() {
    for saturate in [true, false] {
        assert_eq!(each(DType::Float, DType::Float4E2M1, f32c(f32::INFINITY), saturate), [0x7; 4]);
        assert_eq!(each(DType::Float, DType::Float4E2M1, f32c(-100.0), saturate), [0xF; 4]);
    }
}

#[test]
fn row_10_float_to_int4_rounding() {
    // spec: half to even; reference: truncate; onnxruntime: half away from zero.
    assert_eq!(each(DType::Float, DType::Int4, f32c(2.5), true), [2, 2, 3, 2]);
    assert_eq!(each(DType::Float, DType::Int4, f32c(1.5), true), [2, 1, 2, 2]);
    assert_eq!(each(DType::Float, DType::Int4, f32c(-2.5), true), [0xE, 0xE, 0xD, 0xE]);
    assert_eq!(each(DType::Float, DType::Int4, f32c(7.5), true), [0x8, 0x7, 0x8, 0x8]);
    assert_eq!(each(DType::Float, DType::Uint4, f32c(-0.5), true), [0, 0, 15, 0]);
    assert_eq!(each(DType::Float, DType::Int2, f32c(2.5), true), [2, 2, 3, 2]);
    for x in [f32::NAN, f32::INFINITY, 1e10] {
        assert_eq!(each(DType::Float, DType::Int4, f32c(x), true), [0; 4], "{x}");
    }
}

#[test]
fn row_11_integers_keep_the_low_bits() {
    assert_eq!(each(DType::Int32, DType::Int4, 200, true), [0x8; 4]);
    assert_eq!(each(DType::Int16, DType::Int8, 200, true), [0xC8; 4]);
    assert_eq!(each(DType::Int16, DType::Uint16, (-200i16) as u16 as u64, true), [65336; 4]);
    assert_eq!(each(DType::Uint64, DType::Int32, (1 << 32) + 5, true), [5; 4]);
}

#[test]
fn row_12_int4_uint4_reinterpret() {
    assert_eq!(each(DType::Int4, DType::Uint4, 0xF, true), [15; 4]);
    assert_eq!(each(DType::Uint4, DType::Int4, 0x9, true), [0x9; 4]);
}

#[test]
fn row_13_float_to_integer_truncates() {
    assert_eq!(each(DType::Float, DType::Int32, f32c(2.9), true), [2; 4]);
    assert_eq!(each(DType::Float, DType::Int32, f32c(-2.9), true), [(-2i32) as u32 as u64; 4]);
    assert_eq!(each(DType::Float, DType::Uint8, f32c(255.9), true), [255; 4]);
}

#[test]
fn row_14_float_to_integer_out_of_range_follows_cvtt() {
    assert_eq!(each(DType::Float, DType::Int32, f32c(f32::NAN), true), [0x8000_0000; 4]);
    assert_eq!(each(DType::Float, DType::Int64, f32c(1e20), true), [1 << 63; 4]);
    assert_eq!(each(DType::Float, DType::Uint8, f32c(256.0), true), [0; 4]);
    assert_eq!(each(DType::Float, DType::Int8, f32c(200.0), true), [0xC8; 4]);
}

#[test]
fn row_15_to_bool() {
    assert_eq!(each(DType::Float8E4M3FN, DType::Bool, 0x80, true), [0, 0, 1, 0]);
    assert_eq!(each(DType::Float8E5M2, DType::Bool, 0x80, true), [0, 0, 1, 0]);
    assert_eq!(each(DType::Float8E8M0, DType::Bool, 0x00, true), [1, 1, 0, 1]);
    assert_eq!(each(DType::Float, DType::Bool, f32c(f32::NAN), true), [1; 4]);
    assert_eq!(each(DType::Float, DType::Bool, f32c(-0.0), true), [0; 4]);
    assert_eq!(each(DType::Float8E4M3FNUZ, DType::Bool, 0x80, true), [1; 4]);
}

#[test]
fn row_16_narrow_to_wider_is_exact() {
    assert_eq!(each(DType::Float8E4M3FNUZ, DType::Float, 0x80, true), [0xFFC0_0000; 4]);
    assert_eq!(each(DType::Float8E4M3FN, DType::Float, 0x7F, true), [0x7FC0_0000; 4]);
    assert_eq!(each(DType::Float8E5M2, DType::Float16, 0xFD, true), [0xFE00; 4]);
    assert_eq!(each(DType::Float4E2M1, DType::Float, 0xF, true), [0xC0C0_0000; 4]);
    assert_eq!(each(DType::Int4, DType::Float, 0x8, true), [0xC100_0000; 4]);
}

#[test]
fn row_17_nan_payloads() {
    assert_eq!(each(DType::Float, DType::Float16, 0x7F80_0001, true), [0x7E00, 0x7C01, 0x7E00, 0x7E00]);
    assert_eq!(each(DType::Float, DType::Float16, 0xFFBF_FFFF, true), [0xFFFF, 0xFDFF, 0xFE00, 0xFFFF]);
    assert_eq!(each(DType::Float, DType::Bfloat16, 0x7F80_0001, true), [0x7FC0; 4]);
    assert_eq!(each(DType::Double, DType::Float16, 0x7FF0_0000_0000_0001, true), [0x7E00, 0x7C01, 0x7E00, 0x7E00]);
    assert_eq!(
        each(DType::Float16, DType::Double, 0x7C01, true),
        [0x7FF8_0400_0000_0000, 0x7FF0_0400_0000_0000, 0x7FF8_0400_0000_0000, 0x7FF8_0400_0000_0000]
    );
    assert_eq!(each(DType::Float16, DType::Float, 0x7C01, true), [0x7FC0_2000, 0x7F80_2000, 0x7F80_2000, 0x7FC0_2000]);
    assert_eq!(each(DType::Bfloat16, DType::Float, 0x7F81, true), [0x7FC1_0000, 0x7F81_0000, 0x7F81_0000, 0x7FC1_0000]);
    // float <-> double is the hardware conversion everywhere.
    assert_eq!(each(DType::Float, DType::Double, 0x7F80_0001, true), [0x7FF8_0000_2000_0000; 4]);
}

#[test]
fn row_22_e8m0() {
    let up = |x: f32, saturate| each_with(DType::Float, DType::Float8E8M0, f32c(x), saturate, RoundMode::Up);
    assert_eq!(up(f32::INFINITY, true), [0xFE, 0xFF, 0xFE, 0xFE]);
    assert_eq!(up(f32::NEG_INFINITY, true), [0xFE, 0xFF, 0x00, 0xFE]);
    assert_eq!(up(0.0, false), [0xFF, 0x00, 0xFF, 0xFF]);
    assert_eq!(up(-1.5, true), [0x80, 0x80, 0x00, 0x80]);
    assert_eq!(up(-1.5, false), [0x80, 0x80, 0xFF, 0x80]);
    assert_eq!(up(f32::from_bits(0x0040_0000), true), [0x00, 0x01, 0x00, 0x00]);
    assert_eq!(up(f32::from_bits(0x0000_0001), false), [0xFF, 0x01, 0xFF, 0xFF]);
    let down = each_with(DType::Float, DType::Float8E8M0, 0x7F40_0000, false, RoundMode::Down);
    assert_eq!(down, [0xFE, 0xFE, 0xFF, 0xFE]);
    let nearest = each_with(DType::Float, DType::Float8E8M0, f32c(1.5), true, RoundMode::Nearest);
    assert_eq!(nearest, [0x80; 4]);
    // float16 [1.5, 3, inf, 0] (research §10).
    let f16 = |x: f32| u64::from(half::f16::from_f32(x).to_bits());
    let got: Vec<[u64; 4]> =
        [1.5, 3.0, f32::INFINITY, 0.0].iter().map(|&x| each(DType::Float16, DType::Float8E8M0, f16(x), true)).collect();
    assert_eq!(got, [[0x80; 4], [0x81; 4], [0xFE, 0xFF, 0xFE, 0xFE], [0x00; 4]]);
}

#[test]
fn row_23_saturate_zero_on_other_targets() {
    let x = Tensor::from_f32(&[1.5]);
    let attrs = CastAttributes { to: Some(CastTo::Number(10)), saturate: Some(0), round_mode: None };
    let results = ONNX.map(|p| cast_op(&x, &attrs, 21, p).is_ok());
    assert_eq!(results, [true, true, false, true]);
    // Where it is accepted it changes nothing.
    let plain = cast(&x, DType::Float16, &CastOptions::default()).unwrap();
    assert_eq!(cast_op(&x, &attrs, 21, Profile::Spec).unwrap(), plain);
}

/// Row 14 for float8 sources (observed with scripts/crosscheck_cast.py): the reference returns 0
/// for NaN and saturates ±Inf (spec follows it, the text leaving these undefined); onnxruntime
/// goes through float32 and x86's cvtt.
#[test]
fn row_14_float8_nan_and_infinity_to_integers() {
    assert_eq!(each(DType::Float8E5M2, DType::Int8, 0x7C, true), [0x7F, 0x7F, 0x00, 0x7F]);
    assert_eq!(each(DType::Float8E5M2, DType::Int8, 0xFC, true), [0x80, 0x80, 0x00, 0x80]);
    assert_eq!(each(DType::Float8E5M2, DType::Uint16, 0x7C, true), [0xFFFF, 0xFFFF, 0x0000, 0xFFFF]);
    assert_eq!(each(DType::Float8E5M2, DType::Int32, 0x7C, true), [0x7FFF_FFFF, 0x7FFF_FFFF, 0x8000_0000, 0x7FFF_FFFF]);
    assert_eq!(each(DType::Float8E5M2, DType::Uint64, 0x7C, true), [u64::MAX, u64::MAX, 0, u64::MAX]);
    assert_eq!(each(DType::Float8E5M2, DType::Int4, 0x7C, true), [0xF, 0xF, 0x0, 0xF]);
    assert_eq!(each(DType::Float8E4M3FN, DType::Int32, 0x7F, true), [0, 0, 0x8000_0000, 0]);
    assert_eq!(each(DType::Float8E4M3FNUZ, DType::Int64, 0x80, true), [0, 0, 1 << 63, 0]);
    assert_eq!(each(DType::Float8E8M0, DType::Int32, 0xFF, true), [0; 4]);
    // Finite values out of range wrap like any float in every profile.
    assert_eq!(each(DType::Float8E5M2, DType::Int8, 0x7B, true), [0x00; 4]);
}

#[test]
fn row_17_bfloat16_to_float16_nan() {
    assert_eq!(each(DType::Bfloat16, DType::Float16, 0x7F81, true), [0x7E08, 0x7E00, 0x7E00, 0x7E08]);
}

/// onnxruntime converts float32 <-> float16 with F16C in whole blocks (8 elements one way, 16 the
/// other) and one by one in the tail; NaN payloads differ between the two (observed).
#[test]
fn row_17_onnxruntime_vector_blocks() {
    let ort = CastOptions::with_profile(Profile::OnnxRuntime);
    let mut bits = [0u32; 9];
    bits[0] = 0xFFBF_FFFF;
    bits[8] = 0xFFBF_FFFF;
    let x = Tensor::from_codes(DType::Float, vec![9], &bits.iter().map(|&b| u64::from(b)).collect::<Vec<_>>()).unwrap();
    let y = cast(&x, DType::Float16, &ort).unwrap();
    assert_eq!((y.code(0), y.code(8)), (Some(0xFFFF), Some(0xFE00)));
    let mut halves = vec![0u64; 17];
    halves[0] = 0x7C01;
    halves[16] = 0x7C01;
    let h = Tensor::from_codes(DType::Float16, vec![17], &halves).unwrap();
    let y = cast(&h, DType::Float, &ort).unwrap();
    assert_eq!((y.code(0), y.code(16)), (Some(0x7FC0_2000), Some(0x7F80_2000)));
    // spec has no positions.
    let y = cast(&h, DType::Float, &CastOptions::default()).unwrap();
    assert_eq!((y.code(0), y.code(16)), (Some(0x7FC0_2000), Some(0x7FC0_2000)));
}

/// onnxruntime: a bfloat16 NaN cast to float8 without saturation loses its sign (observed).
#[test]
fn bfloat16_negative_nan_into_float8() {
    assert_eq!(each(DType::Bfloat16, DType::Float8E4M3FN, 0xFF81, false), [0xFF, 0xFF, 0x7F, 0xFF]);
    assert_eq!(each(DType::Bfloat16, DType::Float8E4M3FN, 0xFF81, true), [0xFF; 4]);
    assert_eq!(each(DType::Bfloat16, DType::Float8E5M2, 0xFFC0, false), [0xFE, 0xFE, 0x7F, 0xFE]);
}

/// Casts one string under every profile: `Some(code)` or `None` for an error.
fn parse_each(text: &str, to: DType) -> [Option<u64>; 4] {
    ONNX.map(|profile| {
        let x = Tensor::from_strings(vec![1], vec![text.to_string()]).unwrap();
        cast(&x, to, &CastOptions::with_profile(profile)).ok().map(|y| y.code(0).unwrap())
    })
}

/// Formats one code under every profile.
fn format_each(from: DType, code: u64) -> [String; 4] {
    ONNX.map(|profile| {
        let x = Tensor::from_codes(from, vec![1], &[code]).unwrap();
        cast(&x, DType::String, &CastOptions::with_profile(profile)).unwrap().strings().unwrap()[0].to_string()
    })
}

#[test]
fn row_18_string_to_float() {
    // Exact decimal just below a float32 midpoint: one rounding vs parse-to-double-then-narrow.
    let near_tie = "1.00000017881393432530451326201159645279";
    assert_eq!(
        parse_each(near_tie, DType::Float),
        [Some(0x3F80_0001), Some(0x3F80_0002), Some(0x3F80_0002), Some(0x3F80_0001)]
    );
    assert_eq!(parse_each("1_000", DType::Float), [None, Some(0x447A_0000), Some(0x3F80_0000), None]);
    assert_eq!(parse_each("3.5abc", DType::Float), [None, None, Some(0x4060_0000), None]);
    assert_eq!(parse_each("0x1p3", DType::Float), [None, None, Some(0x4100_0000), None]);
    assert_eq!(parse_each("1e400", DType::Float), [Some(0x7F80_0000), Some(0x7F80_0000), None, Some(0x7F80_0000)]);
    assert_eq!(parse_each(" -Infinity ", DType::Float), [Some(0xFF80_0000); 4]);
    assert_eq!(parse_each("-nan", DType::Float).map(|c| c.map(|c| c >> 31)), [Some(1); 4]);
    // bfloat16: the reference cannot (TypeError) and falls back to spec; onnxruntime's NaN is 7FC1
    // whatever its sign (observed: "-nan" -> 0x7FC1).
    assert_eq!(parse_each("nan", DType::Bfloat16), [Some(0x7FC0), Some(0x7FC0), Some(0x7FC1), Some(0x7FC0)]);
    assert_eq!(parse_each("-nan", DType::Bfloat16), [Some(0xFFC0), Some(0xFFC0), Some(0x7FC1), Some(0xFFC0)]);
    // float4: the reference cannot, so every rule is spec's, NaN -> 0x7 included.
    assert_eq!(parse_each("nan", DType::Float4E2M1), [Some(0x7), Some(0x7), Some(0x7), Some(0x7)]);
    // float8 honours saturate in every profile that has it.
    assert_eq!(parse_each("1e3", DType::Float8E4M3FN), [Some(0x7E); 4]);
}

#[test]
fn row_19_string_to_integer() {
    assert_eq!(parse_each("100.5", DType::Int32), [Some(100), None, Some(100), Some(100)]);
    assert_eq!(parse_each("300", DType::Int8), [None, None, Some(44), None]);
    assert_eq!(parse_each("-1", DType::Uint8), [None, None, Some(255), None]);
    assert_eq!(parse_each("1e3", DType::Int32), [Some(1000), None, Some(1), Some(1000)]);
    assert_eq!(parse_each(" -42 ", DType::Int64), [Some((-42i64) as u64); 4]);
}

#[test]
fn row_20_string_to_bool() {
    assert_eq!(parse_each("false", DType::Bool), [Some(0), Some(1), None, Some(0)]);
    assert_eq!(parse_each("TRUE", DType::Bool), [Some(1), Some(1), None, Some(1)]);
    assert_eq!(parse_each("0", DType::Bool), [Some(0), Some(1), Some(0), Some(0)]);
    assert_eq!(parse_each("2", DType::Bool), [Some(1); 4]);
    assert_eq!(parse_each("", DType::Bool), [None, Some(0), None, None]);
}

#[test]
fn row_21_number_to_string() {
    let f = |x: f32| u64::from(x.to_bits());
    assert_eq!(format_each(DType::Float, f(3.0)), ["3.0", "3.0", "3", "3.0"]);
    assert_eq!(format_each(DType::Float, f(f32::NAN)), ["NaN", "nan", "NaN", "NaN"]);
    assert_eq!(format_each(DType::Float, f(f32::NEG_INFINITY)), ["-INF", "-inf", "-INF", "-INF"]);
    assert_eq!(format_each(DType::Float, f(0.3)), ["0.3", "0.3", "0.30000001", "0.3"]);
    assert_eq!(format_each(DType::Float, f(-0.0)), ["-0.0", "-0.0", "-0", "-0.0"]);
    assert_eq!(format_each(DType::Float, f(1e-4)), ["1e-04", "1e-04", "9.9999997e-05", "1e-04"]);
    assert_eq!(format_each(DType::Bool, 1), ["True", "True", "1", "True"]);
    // bfloat16 and float8: the reference raises, so its profile writes what spec writes.
    assert_eq!(format_each(DType::Bfloat16, 0x3DCD), ["0.1", "0.1", "0.10009766", "0.1"]);
    assert_eq!(format_each(DType::Float8E4M3FN, 0x1D), ["0.1", "0.1", "0.1015625", "0.1"]);
    assert_eq!(format_each(DType::Int8, 0x80), ["-128"; 4]);
}

/// Casts `codes` as one tensor under a profile and returns the output codes.
fn tensor_cast(from: DType, to: DType, codes: &[u64], opts: &CastOptions) -> Vec<u64> {
    let x = Tensor::from_codes(from, vec![codes.len()], codes).unwrap();
    let y = cast(&x, to, opts).unwrap();
    (0..codes.len()).map(|i| y.code(i).unwrap()).collect()
}

/// Row 14, UINT32 (undefined in the text for NaN, ±Inf and out-of-range values). Observed with
/// numpy 2.4.6 (`astype`, the reference's Cast), ml_dtypes 0.6.0 and onnxruntime 1.31.1 on x86-64
/// with AVX2, on tensors of 1 to 35 copies of one value: float32 and float64 tensors convert in
/// whole blocks of 4 from the first element (NaN, -Inf, -1e20 -> 0x80000000) and one by one in the
/// remaining 1-3 elements (NaN, -Inf, -1e20 -> 0; -2147483904 -> 0x7FFFFF00); bfloat16 in blocks
/// of 8; float16 (and, in onnxruntime, float8) always one by one.
#[test]
fn row_14_uint32_depends_on_the_position() {
    let nan32 = f32c(f32::NAN);
    let expect_7 = [0x8000_0000, 0x8000_0000, 0x8000_0000, 0x8000_0000, 0, 0, 0];
    for profile in [Profile::OnnxReference, Profile::OnnxRuntime] {
        let opts = CastOptions::with_profile(profile);
        assert_eq!(tensor_cast(DType::Float, DType::Uint32, &[nan32; 7], &opts), expect_7, "{profile:?}");
        let neg_inf = f64c(f64::NEG_INFINITY);
        assert_eq!(tensor_cast(DType::Double, DType::Uint32, &[neg_inf; 7], &opts), expect_7, "{profile:?}");
        let x = f32c(-2_147_483_904.0);
        let got = tensor_cast(DType::Float, DType::Uint32, &[x; 5], &opts);
        assert_eq!(got, [0x8000_0000, 0x8000_0000, 0x8000_0000, 0x8000_0000, 0x7FFF_FF00], "{profile:?}");
        // 5e9: its low 32 bits alone (5e9 - 2^32 = 705032704 = 0x2A05F200), 0 in a block.
        let got = tensor_cast(DType::Float, DType::Uint32, &[f32c(5e9); 5], &opts);
        assert_eq!(got, [0, 0, 0, 0, 0x2A05_F200], "{profile:?}");
        let bf16_nan = vec![0x7FC0; 11];
        let got = tensor_cast(DType::Bfloat16, DType::Uint32, &bf16_nan, &opts);
        assert_eq!(got, [[0x8000_0000; 8].as_slice(), &[0, 0, 0]].concat(), "{profile:?}");
        assert_eq!(tensor_cast(DType::Float16, DType::Uint32, &[0x7E00; 9], &opts), [0; 9], "{profile:?}");
    }
    // Element by element (outside the blocks) and under spec, which has no positions.
    assert_eq!(each(DType::Float, DType::Uint32, f32c(f32::NAN), true), [0x8000_0000, 0, 0, 0x8000_0000]);
    assert_eq!(each(DType::Float, DType::Uint32, f32c(f32::NEG_INFINITY), true), [0, 0, 0, 0]);
    assert_eq!(each(DType::Float8E5M2, DType::Uint32, 0x7F, true), [0, 0, 0, 0]);
    let spec = tensor_cast(DType::Float, DType::Uint32, &[nan32; 7], &CastOptions::default());
    assert_eq!(spec, [0x8000_0000; 7]);
    // In range every rule truncates, and (-2^31, 0) wraps.
    assert_eq!(each(DType::Float, DType::Uint32, f32c(-1.0), true), [0xFFFF_FFFF; 4]);
}

/// The reference computes some identity casts: `saturate_cast` (np.clip, then astype) for float8
/// with saturate=1, `to_float8e8m0` for E8M0 (observed with onnx 1.23.2, ml_dtypes 0.6.0).
#[test]
fn identity_casts_of_the_reference() {
    let e5m2 = |code, saturate| each(DType::Float8E5M2, DType::Float8E5M2, code, saturate);
    assert_eq!(e5m2(0x7C, true), [0x7C, 0x7B, 0x7C, 0x7C]);
    assert_eq!(e5m2(0xFC, true), [0xFC, 0xFB, 0xFC, 0xFC]);
    assert_eq!(e5m2(0x7D, true), [0x7D, 0x7E, 0x7D, 0x7D]);
    assert_eq!(e5m2(0xFF, true), [0xFF, 0xFE, 0xFF, 0xFF]);
    assert_eq!(e5m2(0x7C, false), [0x7C; 4]);
    let e8m0 = |code, mode| each_with(DType::Float8E8M0, DType::Float8E8M0, code, false, mode);
    // 0x00 is 2^-127, float32 0x00400000: a fraction, so "up" adds one to the exponent field.
    assert_eq!(e8m0(0x00, RoundMode::Up), [0x00, 0x01, 0x00, 0x00]);
    assert_eq!(e8m0(0x00, RoundMode::Down), [0x00; 4]);
    assert_eq!(e8m0(0x00, RoundMode::Nearest), [0x00; 4]);
    assert_eq!(e8m0(0xFF, RoundMode::Up), [0xFF; 4]);
    // The tensor path agrees.
    let reference = CastOptions::with_profile(Profile::OnnxReference);
    assert_eq!(tensor_cast(DType::Float8E5M2, DType::Float8E5M2, &[0x7C, 0x7D, 0x3C], &reference), [0x7B, 0x7E, 0x3C]);
}

/// STRING -> FLOAT8E8M0 in the reference is `to_float8e8m0(np.asarray(x, dtype=float32))`
/// (observed: "inf" -> 0xFF with saturate=1, "0" -> 0x00 with saturate=0).
#[test]
fn reference_reads_e8m0_from_text() {
    let read = |text: &str, saturate| {
        let x = Tensor::from_strings(vec![1], vec![text.to_string()]).unwrap();
        ONNX.map(|profile| {
            let opts = CastOptions { saturate, round_mode: RoundMode::Up, profile };
            cast(&x, DType::Float8E8M0, &opts).ok().map(|y| y.code(0).unwrap())
        })
    };
    assert_eq!(read("inf", true), [Some(0xFE), Some(0xFF), Some(0xFE), Some(0xFE)]);
    assert_eq!(read("0", false), [Some(0xFF), Some(0x00), Some(0xFF), Some(0xFF)]);
    assert_eq!(read("3", true), [Some(0x81); 4]);
}

/// Pairs ml_dtypes 0.6.0 has no cast for raise TypeError in the reference; its profile gives
/// spec's answer there.
#[test]
fn reference_falls_back_where_ml_dtypes_has_no_cast() {
    let policy = Profile::OnnxReference.policy();
    for (from, to) in [(DType::Int4, DType::Uint4), (DType::Float8E8M0, DType::Float4E2M1), (DType::Int2, DType::Uint2)]
    {
        assert!(policy.falls_back(from, to), "{from} -> {to}");
    }
    assert!(!policy.falls_back(DType::Float6E3M2, DType::Int4));
    // E8M0 -> float4: spec's NaN rule (0x7), not the reference's (+NaN -> 0x8).
    assert_eq!(each(DType::Float8E8M0, DType::Float4E2M1, 0xFF, true), [0x7; 4]);
}
