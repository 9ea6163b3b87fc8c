//! The `ml-dtypes` and `xla` profiles, row by row (tables/profiles.md). Every expected code is a
//! published observation: ml_dtypes 0.6.0 `astype` under numpy 2.4.6, and jax/jaxlib 0.12.0.1 on
//! CPU under `jax.jit` (XLA), both on x86-64 with AVX2, run by hand and by
//! scripts/crosscheck_ml_dtypes.py and scripts/crosscheck_xla.py.

use lowbit::cast;
use lowbit::DType;
use lowbit::Profile;
use lowbit::Tensor;
use lowbit::{convert_code, CastOptions, RoundMode};

fn under(profile: Profile, from: DType, to: DType, code: u64) -> u64 {
    convert_code(from, to, code, &CastOptions::with_profile(profile)).unwrap()
}

fn under_with(profile: Profile, from: DType, to: DType, code: u64, saturate: bool, round_mode: RoundMode) -> u64 {
    convert_code(from, to, code, &CastOptions { saturate, round_mode, profile }).unwrap()
}

fn f32c(x: f32) -> u64 {
    u64::from(x.to_bits())
}

fn f64c(x: f64) -> u64 {
    x.to_bits()
}

fn tensor_cast(from: DType, to: DType, codes: &[u64], opts: &CastOptions) -> Vec<u64> {
    let x = Tensor::from_codes(from, vec![codes.len()], codes).unwrap();
    let y = cast(&x, to, opts).unwrap();
    (0..codes.len()).map(|i| y.code(i).unwrap()).collect()
}

// ------------------------------------------------------------------------------------------------
// ml-dtypes

/// ml_dtypes' float8_e8m0fnu from float32 (observed, ml_dtypes 0.6.0): NaN, ±Inf, ±0 and
/// negatives -> 0xFF; (0, 2^-127] -> 0x00; (2^-127, 2^-126) -> 0x01; the nearest power of two with
/// 1.5 * 2^k going up; above 2^127 -> 0xFF.
#[test]
fn ml_dtypes_e8m0() {
    let e8m0 = |x: f32| under(Profile::MlDtypes, DType::Float, DType::Float8E8M0, f32c(x));
    let observed = [
        (0.0, 0xFF),
        (-0.0, 0xFF),
        (f32::NAN, 0xFF),
        (f32::INFINITY, 0xFF),
        (f32::NEG_INFINITY, 0xFF),
        (-1.0, 0xFF),
        (-1e-45, 0xFF),
        (1e-45, 0x00),
        (2f32.powi(-127), 0x00),
        (1.5 * 2f32.powi(-127), 0x01),
        (0.99 * 2f32.powi(-126), 0x01),
        (2f32.powi(-126), 0x01),
        (1.4999 * 2f32.powi(-126), 0x01),
        (1.5 * 2f32.powi(-126), 0x02),
        (1.0, 0x7F),
        (1.4999999, 0x7F),
        (1.5, 0x80),
        (1.75, 0x80),
        (3.0, 0x81),
        (2f32.powi(127), 0xFE),
        (1.4 * 2f32.powi(127), 0xFE),
        (1.4999999 * 2f32.powi(127), 0xFE),
        (1.5 * 2f32.powi(127), 0xFF),
        (3e38, 0xFF),
    ];
    for (x, want) in observed {
        assert_eq!(e8m0(x), want, "{x:e}");
    }
    // float64 goes through float32: 1.5 - 2^-30 is 1.5 there (observed 0x80).
    assert_eq!(under(Profile::MlDtypes, DType::Double, DType::Float8E8M0, f64c(1.5 - 2f64.powi(-30))), 0x80);
    assert_eq!(under(Profile::MlDtypes, DType::Double, DType::Float8E8M0, f64c(1e300)), 0xFF);
    // round_mode is not an ml_dtypes attribute.
    for mode in [RoundMode::Up, RoundMode::Down, RoundMode::Nearest] {
        let code = under_with(Profile::MlDtypes, DType::Float, DType::Float8E8M0, f32c(1.5), true, mode);
        assert_eq!(code, 0x80, "{mode:?}");
    }
}

/// ml_dtypes has no saturate: float8 overflow and infinities as saturate=0 (observed: float32
/// 1000 -> E4M3FN 0x7F, E5M2 +Inf stays 0x7C, 1e5 -> E5M2 0x7C).
#[test]
fn ml_dtypes_ignores_saturate() {
    for saturate in [true, false] {
        let to = |to, x: f32| under_with(Profile::MlDtypes, DType::Float, to, f32c(x), saturate, RoundMode::Up);
        assert_eq!(to(DType::Float8E4M3FN, 1000.0), 0x7F);
        assert_eq!(to(DType::Float8E5M2, f32::INFINITY), 0x7C);
        assert_eq!(to(DType::Float8E5M2, 1e5), 0x7C);
        assert_eq!(to(DType::Float8E4M3FNUZ, -1000.0), 0x80);
        // An identity cast is a copy (astype to the same dtype).
        let e5m2 = under_with(Profile::MlDtypes, DType::Float8E5M2, DType::Float8E5M2, 0x7C, saturate, RoundMode::Up);
        assert_eq!(e5m2, 0x7C);
    }
}

/// numpy's float32/float64 -> uint32 loop: whole blocks of 4 from the first element give
/// 0x80000000 for NaN and -Inf, the 1-3 elements after them 0; ml_dtypes' bfloat16 -> uint32
/// blocks of 8; float16 one by one (observed with tensors of 1 to 19 elements).
#[test]
fn ml_dtypes_uint32_depends_on_the_position() {
    let opts = CastOptions::with_profile(Profile::MlDtypes);
    let nan = f32c(f32::NAN);
    let got = tensor_cast(DType::Float, DType::Uint32, &[nan; 7], &opts);
    assert_eq!(got, [0x8000_0000, 0x8000_0000, 0x8000_0000, 0x8000_0000, 0, 0, 0]);
    let got = tensor_cast(DType::Double, DType::Uint32, &[f64c(f64::NEG_INFINITY); 9], &opts);
    assert_eq!(got, [[0x8000_0000; 8].as_slice(), &[0]].concat());
    let got = tensor_cast(DType::Bfloat16, DType::Uint32, &[0x7FC0; 12], &opts);
    assert_eq!(got, [[0x8000_0000; 8].as_slice(), &[0; 4]].concat());
    assert_eq!(tensor_cast(DType::Float16, DType::Uint32, &[0x7E00; 4], &opts), [0; 4]);
}

/// The 36 pairs ml_dtypes 0.6.0 has no cast for (astype raises TypeError), and every ml_dtypes
/// type to or from STRING: the profile gives spec's answer there.
#[test]
fn ml_dtypes_falls_back_where_it_has_no_cast() {
    let policy = Profile::MlDtypes.policy();
    let missing =
        Profile::MlDtypes.fallback_pairs().into_iter().filter(|(f, t)| *f != DType::String && *t != DType::String);
    assert_eq!(missing.count(), 36);
    for (from, to) in [
        (DType::Int4, DType::Uint4),
        (DType::Uint4, DType::Int4),
        (DType::Int4, DType::Int2),
        (DType::Float8E8M0, DType::Float8E4M3FN),
        (DType::Float8E5M2, DType::Float8E8M0),
        (DType::Float6E2M3, DType::Int4),
        (DType::Bfloat16, DType::String),
        (DType::String, DType::Float8E8M0),
    ] {
        assert!(policy.falls_back(from, to), "{from} -> {to}");
    }
    for (from, to) in
        [(DType::Float6E3M2, DType::Int4), (DType::Float, DType::Float8E8M0), (DType::Float, DType::String)]
    {
        assert!(!policy.falls_back(from, to), "{from} -> {to}");
    }
    // The onnx reference reaches E8M0 through float32, so it has those 11 casts.
    let reference = Profile::OnnxReference.policy();
    assert!(!reference.falls_back(DType::Float8E5M2, DType::Float8E8M0));
    assert!(reference.falls_back(DType::Int4, DType::Uint4));
    // Into E8M0 from float8 under spec's rule: 1.0 (E5M2 0x3C) -> 0x7F.
    assert_eq!(under(Profile::MlDtypes, DType::Float8E5M2, DType::Float8E8M0, 0x3C), 0x7F);
}

/// Elsewhere ml_dtypes is what the onnx reference calls, so the profile shares its Cast rows with
/// saturate=0 (observed with ml_dtypes 0.6.0).
#[test]
fn ml_dtypes_shares_the_reference_rows() {
    // float64 -> bfloat16 through float32 (double rounding): 1 + 2^-8 + 2^-30 is 1 + 2^-8 in
    // float32, a tie in bfloat16, to even: 0x3F80.
    let x = f64c(1.0 + 2f64.powi(-8) + 2f64.powi(-30));
    assert_eq!(under(Profile::MlDtypes, DType::Double, DType::Bfloat16, x), 0x3F80);
    // NaN -> float4: +NaN -> 0x8 (-0).
    assert_eq!(under(Profile::MlDtypes, DType::Float, DType::Float4E2M1, f32c(f32::NAN)), 0x8);
    // float -> int4 truncates: 2.9 -> 2.
    assert_eq!(under(Profile::MlDtypes, DType::Float, DType::Int4, f32c(2.9)), 0x2);
    // A float8 NaN -> int8 is 0.
    assert_eq!(under(Profile::MlDtypes, DType::Float8E4M3FN, DType::Int8, 0x7F), 0);
}

// ------------------------------------------------------------------------------------------------
// xla (jax and jaxlib 0.12.0.1, XLA on CPU, `jax.jit(lambda a: a.astype(T))`, x86-64)

fn xla(from: DType, to: DType, code: u64) -> u64 {
    under(Profile::Xla, from, to, code)
}

/// float -> integers of every width truncate toward zero and saturate (observed: float32 [300, -1,
/// NaN, +Inf, -Inf, 1e20] -> int8 [127, -1, 0, 127, -128, 127]; [-1, 300] -> uint8 [0, 255];
/// [300, -1, NaN, +Inf, -Inf, 7.9, -8.9] -> int4 [7, -1, 0, 7, -8, 7, -8]).
#[test]
fn xla_float_to_integer_saturates() {
    let int8: Vec<u64> = [300.0, -1.0, f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 1e20]
        .iter()
        .map(|&x| xla(DType::Float, DType::Int8, f32c(x)))
        .collect();
    assert_eq!(int8, [0x7F, 0xFF, 0x00, 0x7F, 0x80, 0x7F]);
    assert_eq!(xla(DType::Float, DType::Uint8, f32c(-1.0)), 0);
    assert_eq!(xla(DType::Float, DType::Uint8, f32c(300.0)), 0xFF);
    let int4: Vec<u64> = [300.0, -1.0, f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 7.9, -8.9]
        .iter()
        .map(|&x| xla(DType::Float, DType::Int4, f32c(x)))
        .collect();
    assert_eq!(int4, [0x7, 0xF, 0x0, 0x7, 0x8, 0x7, 0x8]);
    // The same through the plan, whose integer kernel hands out-of-range lanes to the core.
    let opts = CastOptions::with_profile(Profile::Xla);
    let codes: Vec<u64> = [300.0f32, -1.0, 2.9, -200.0].iter().map(|&x| f32c(x)).collect();
    assert_eq!(tensor_cast(DType::Float, DType::Int8, &codes, &opts), [0x7F, 0xFF, 0x02, 0x80]);
    assert_eq!(tensor_cast(DType::Float, DType::Uint16, &codes, &opts), [300, 0, 2, 0]);
}

/// XLA compares with the bounds as the source type holds them: float4's largest value 6 is what
/// 7, 15, 127 and 255 become there, so 6.0 saturates (observed: float4 [6, -6, 4] -> int8 [127,
/// -128, 4]; 6 -> uint8 255; [6, -6] -> int4 [7, -8]; 6 -> uint4 15).
#[test]
fn xla_saturates_at_bounds_in_the_source_type() {
    assert_eq!(xla(DType::Float4E2M1, DType::Int8, 0x7), 0x7F);
    assert_eq!(xla(DType::Float4E2M1, DType::Int8, 0xF), 0x80);
    assert_eq!(xla(DType::Float4E2M1, DType::Int8, 0x6), 0x04);
    assert_eq!(xla(DType::Float4E2M1, DType::Uint8, 0x7), 0xFF);
    assert_eq!(xla(DType::Float4E2M1, DType::Int4, 0x7), 0x7);
    assert_eq!(xla(DType::Float4E2M1, DType::Int4, 0xF), 0x8);
    assert_eq!(xla(DType::Float4E2M1, DType::Uint4, 0x7), 0xF);
}

/// Subnormal inputs and results are zero in float32 <-> float64, float64 -> bfloat16, bfloat16 ->
/// float64 and float32/bfloat16/float64 -> bool (observed: float32 [1e-45, 1e-38] -> bool [false,
/// false], 1e-45 -> float64 0; float64 [2^-127, 2^-126 - 2^-150, 2^-126 - 2^-151] -> float32 [0, 0,
/// 0x00800000]; bfloat16 0x0001 -> float64 0 and bool false); float16 keeps them (0x0001 -> bool
/// true).
#[test]
fn xla_flushes_subnormals() {
    assert_eq!(xla(DType::Float, DType::Bool, 1), 0);
    assert_eq!(xla(DType::Float, DType::Bool, f32c(1e-38)), 0);
    assert_eq!(xla(DType::Float, DType::Double, 1), 0);
    assert_eq!(xla(DType::Float, DType::Double, 0x8000_0001), 1 << 63);
    assert_eq!(xla(DType::Double, DType::Float, f64c(2f64.powi(-127))), 0);
    // Tiny after rounding with an unbounded exponent: the midpoint below 2^-126 is exact in 24
    // bits, so it is tiny; a quarter-step closer rounds up to 2^-126.
    assert_eq!(xla(DType::Double, DType::Float, f64c(2f64.powi(-126) - 2f64.powi(-150))), 0);
    assert_eq!(xla(DType::Double, DType::Float, f64c(2f64.powi(-126) - 2f64.powi(-151))), 0x0080_0000);
    assert_eq!(xla(DType::Double, DType::Bfloat16, f64c(2f64.powi(-127))), 0);
    assert_eq!(xla(DType::Bfloat16, DType::Double, 0x0001), 0);
    assert_eq!(xla(DType::Bfloat16, DType::Bool, 0x0001), 0);
    assert_eq!(xla(DType::Float16, DType::Bool, 0x0001), 1);
    // The plan hands such lanes to the core.
    let opts = CastOptions::with_profile(Profile::Xla);
    let codes = [1, f32c(1.5), 0x8000_0001, f32c(-2.0)];
    let wide = tensor_cast(DType::Float, DType::Double, &codes, &opts);
    assert_eq!(wide, [0, f64c(1.5), 1 << 63, f64c(-2.0)]);
}

/// float64 and 64-bit integers reach float16/bfloat16 through float32 (observed: int64 16842753 ->
/// bfloat16 0x4B80); float64 -> float8 is rounded once (464.00000001 -> E4M3FN 0x7F, NaN).
#[test]
fn xla_rounding_routes() {
    assert_eq!(xla(DType::Int64, DType::Bfloat16, 16_842_753), 0x4B80);
    assert_eq!(xla(DType::Double, DType::Float8E4M3FN, f64c(464.000_000_01)), 0x7F);
    // No saturate attribute: overflow as saturate=0 (float32 1000 -> E4M3FN 0x7F).
    for saturate in [true, false] {
        let code = under_with(Profile::Xla, DType::Float, DType::Float8E4M3FN, f32c(1000.0), saturate, RoundMode::Up);
        assert_eq!(code, 0x7F);
    }
}

/// NaN codes (observed): into E5M2 0x7F without the sign from float16, bfloat16, the 8-bit formats
/// (float16 0xFC01 -> 0x7F, E8M0 0xFF -> 0x7F), 0x7E with it from float32 (-NaN -> 0xFE); FNUZ 0x80
/// reads as +NaN (-> float32 0x7FC00000, -> E4M3FN 0x7F); NaN -> float4 0x8 whatever the sign.
#[test]
fn xla_nan_codes() {
    assert_eq!(xla(DType::Float16, DType::Float8E5M2, 0xFC01), 0x7F);
    assert_eq!(xla(DType::Float8E8M0, DType::Float8E5M2, 0xFF), 0x7F);
    assert_eq!(xla(DType::Float8E4M3FNUZ, DType::Float8E5M2, 0x80), 0x7F);
    assert_eq!(xla(DType::Float, DType::Float8E5M2, 0xFFC0_0000), 0xFE);
    assert_eq!(xla(DType::Float, DType::Float8E5M2, 0x7FC0_0000), 0x7E);
    assert_eq!(xla(DType::Float8E4M3FNUZ, DType::Float, 0x80), 0x7FC0_0000);
    assert_eq!(xla(DType::Float8E4M3FNUZ, DType::Float8E4M3FN, 0x80), 0x7F);
    assert_eq!(xla(DType::Float, DType::Float4E2M1, f32c(f32::NAN)), 0x8);
    assert_eq!(xla(DType::Float, DType::Float4E2M1, f32c(-f32::NAN)), 0x8);
    // Payloads: float16 0x7C01 -> float32 0x7FC02000; bfloat16 0x7F81 -> float16 0x7E08; float32
    // 0x7FFFE000 -> float16 0x7FFF; float64 0x7FFFFFFFFFFFFFFF -> float16 0x7E00.
    assert_eq!(xla(DType::Float16, DType::Float, 0x7C01), 0x7FC0_2000);
    assert_eq!(xla(DType::Bfloat16, DType::Float16, 0x7F81), 0x7E08);
    assert_eq!(xla(DType::Float, DType::Float16, 0x7FFF_E000), 0x7FFF);
    assert_eq!(xla(DType::Double, DType::Float16, 0x7FFF_FFFF_FFFF_FFFF), 0x7E00);
}

/// float6 targets (observed, E2M3): +NaN -> 0x00, -NaN -> 0x20; overflow and ±Inf -> ±0 (100 ->
/// 0x00, -100 -> 0x20, 7.75, which rounds to 8, -> 0x00, +Inf -> 0x00); 7.7 -> 0x1F (7.5).
#[test]
fn xla_float6_targets() {
    let e2m3: Vec<u64> = [f32::NAN, -f32::NAN, 100.0, -100.0, 7.75, 7.7, f32::INFINITY]
        .iter()
        .map(|&x| xla(DType::Float, DType::Float6E2M3, f32c(x)))
        .collect();
    assert_eq!(e2m3, [0x00, 0x20, 0x00, 0x20, 0x00, 0x1F, 0x00]);
}

/// E8M0 (observed): ml_dtypes' rule from float32 (1e-39 -> 0x00); from float64 rounded once (1.5 -
/// 2^-30 -> 0x7F) and below 2^-127 NaN (1e-39 -> 0xFF; 2^-127 -> 0x00, 1.1 * 2^-127 -> 0x01).
#[test]
fn xla_e8m0() {
    assert_eq!(xla(DType::Float, DType::Float8E8M0, f32c(1e-39)), 0x00);
    assert_eq!(xla(DType::Double, DType::Float8E8M0, f64c(1.5 - 2f64.powi(-30))), 0x7F);
    assert_eq!(xla(DType::Double, DType::Float8E8M0, f64c(1e-39)), 0xFF);
    assert_eq!(xla(DType::Double, DType::Float8E8M0, f64c(2f64.powi(-127))), 0x00);
    assert_eq!(xla(DType::Double, DType::Float8E8M0, f64c(1.1 * 2f64.powi(-127))), 0x01);
}

/// XLA has no strings and does not compile conversions from float6: spec's answers there.
#[test]
fn xla_falls_back() {
    let policy = Profile::Xla.policy();
    for (from, to) in [
        (DType::Float6E2M3, DType::Float),
        (DType::Float6E3M2, DType::Float6E3M2),
        (DType::String, DType::Float),
        (DType::Float, DType::String),
    ] {
        assert!(policy.falls_back(from, to), "{from} -> {to}");
    }
    assert!(!policy.falls_back(DType::Float, DType::Float6E2M3));
    // spec's float6 -> int8: E2M3 0x1F (7.5) truncates to 7.
    assert_eq!(xla(DType::Float6E2M3, DType::Int8, 0x1F), 7);
}
