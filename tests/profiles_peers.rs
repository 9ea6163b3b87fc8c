//! The `ml-dtypes` and `xla` profiles, row by row (tables/profiles.md). Every expected code is a
//! published observation: ml_dtypes 0.6.0 `astype` under numpy 2.4.6, and jax/jaxlib 0.12.0.1 on
//! CPU under `jax.jit` (XLA), both on x86-64 with AVX2, run by hand and by
//! scripts/crosscheck_ml_dtypes.py and scripts/crosscheck_xla.py.

use lowbit::cast::cast;
use lowbit::convert::{convert_code, CastOptions, RoundMode};
use lowbit::profile::Profile;
use lowbit::tensor::Tensor;
use lowbit::DType;

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
