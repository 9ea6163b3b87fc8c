//! The `torch` profile, row by row (tables/profiles.md). Every expected code is an observation of
//! PyTorch 2.15.0 `Tensor.to(dtype)` on the CPU (x86-64, ATEN_CPU_CAPABILITY avx2 and avx512), run
//! by hand and by scripts/crosscheck_torch.py; docs/research/torch_casts.md has the tables.

use lowbit::{cast, convert_code, CastOptions, DType, Profile, RoundMode, Tensor};

fn torch(from: DType, to: DType, code: u64) -> u64 {
    convert_code(from, to, code, &CastOptions::with_profile(Profile::Torch)).unwrap()
}

fn torch_with(from: DType, to: DType, code: u64, saturate: bool, round_mode: RoundMode) -> u64 {
    convert_code(from, to, code, &CastOptions { saturate, round_mode, profile: Profile::Torch }).unwrap()
}

fn f32c(x: f32) -> u64 {
    u64::from(x.to_bits())
}

fn f64c(x: f64) -> u64 {
    x.to_bits()
}

fn tensor_cast(from: DType, to: DType, codes: &[u64]) -> Vec<u64> {
    tensor_cast_under(Profile::Torch, from, to, codes)
}

fn tensor_cast_under(profile: Profile, from: DType, to: DType, codes: &[u64]) -> Vec<u64> {
    let x = Tensor::from_codes(from, vec![codes.len()], codes).unwrap();
    let y = cast(&x, to, &CastOptions::with_profile(profile)).unwrap();
    (0..codes.len()).map(|i| y.code(i).unwrap()).collect()
}

/// Row `via_float32`: float64 and the wide integers round to float32 first.
#[test]
fn torch_rounds_wide_sources_through_float32() {
    assert_eq!(torch(DType::Double, DType::Float16, f64c(1.0 + 2f64.powi(-11) + 2f64.powi(-30))), 0x3C00);
    assert_eq!(torch(DType::Double, DType::Bfloat16, f64c(1.0 + 2f64.powi(-8) + 2f64.powi(-30))), 0x3F80);
    assert_eq!(torch(DType::Double, DType::Float8E4M3FN, f64c(1.0625 + 2f64.powi(-30))), 0x38);
    assert_eq!(torch(DType::Double, DType::Float8E8M0, f64c(1.5 - 2f64.powi(-30))), 0x80);
    assert_eq!(torch(DType::Int64, DType::Bfloat16, 16_842_753), 0x4B80);
    assert_eq!(torch(DType::Int32, DType::Float8E8M0, 0x17FF_FFFF), 0x9C);
}

/// Rows `fixed_saturate` and `saturate_by_target`: E4M3FN saturates, E5M2 and the FNUZ types do
/// not, whatever the attribute says.
#[test]
fn torch_saturates_e4m3fn_only() {
    for saturate in [true, false] {
        let at = |to, x: f32| torch_with(DType::Float, to, f32c(x), saturate, RoundMode::Up);
        assert_eq!(at(DType::Float8E4M3FN, 1e10), 0x7E);
        assert_eq!(at(DType::Float8E4M3FN, f32::INFINITY), 0x7E);
        assert_eq!(at(DType::Float8E4M3FN, f32::NEG_INFINITY), 0xFE);
        assert_eq!(at(DType::Float8E4M3FN, 464.0), 0x7E);
        assert_eq!(at(DType::Float8E5M2, 61440.0), 0x7C);
        assert_eq!(at(DType::Float8E5M2, 1e10), 0x7C);
        assert_eq!(at(DType::Float8E4M3FNUZ, 248.0), 0x80);
        assert_eq!(at(DType::Float8E5M2FNUZ, f32::INFINITY), 0x80);
    }
    assert_eq!(torch(DType::Float8E5M2, DType::Float8E4M3FN, 0x7C), 0x7E);
    assert_eq!(torch(DType::Int32, DType::Float8E5M2, (-65535i32) as u32 as u64), 0xFC);
}

/// Rows `e5m2_nan` and `fnuz_nan_is_negative`.
#[test]
fn torch_e5m2_nan_and_the_fnuz_nan_sign() {
    assert_eq!(torch(DType::Float, DType::Float8E5M2, 0x7FC0_0000), 0x7F);
    assert_eq!(torch(DType::Float, DType::Float8E5M2, 0xFFC0_0000), 0xFF);
    assert_eq!(torch(DType::Float16, DType::Float8E5M2, 0xFC01), 0xFF);
    assert_eq!(torch(DType::Float8E4M3FNUZ, DType::Float8E5M2, 0x80), 0x7F);
    assert_eq!(torch(DType::Float8E4M3FNUZ, DType::Float8E4M3FN, 0x80), 0x7F);
}

/// Row `e8m0`: the nearest power of two of |x| from the float32, 1.5 * 2^k up; ±0 and below
/// 2^-127 -> 0x00; NaN, ±Inf and overflow -> 0xFF; no attribute applies.
#[test]
fn torch_e8m0() {
    let observed = [
        (0.0f32, 0x00),
        (-0.0, 0x00),
        (-4.0, 0x81),
        (-0.75, 0x7F),
        (1.5, 0x80),
        (3.0 * 2f32.powi(-128), 0x01),
        (f32::from_bits(0x0050_0000), 0x01),
        (f32::MAX, 0xFF),
        (f32::INFINITY, 0xFF),
        (f32::NEG_INFINITY, 0xFF),
        (f32::NAN, 0xFF),
    ];
    for (x, code) in observed {
        for round_mode in [RoundMode::Up, RoundMode::Down, RoundMode::Nearest] {
            for saturate in [true, false] {
                let got = torch_with(DType::Float, DType::Float8E8M0, f32c(x), saturate, round_mode);
                assert_eq!(got, code, "{x:e} {saturate} {round_mode:?}");
            }
        }
    }
    assert_eq!(torch(DType::Int32, DType::Float8E8M0, 0), 0x00);
    assert_eq!(torch(DType::Int32, DType::Float8E8M0, 0xFFFF_FFFF), 0x7F);
    assert_eq!(torch(DType::Int32, DType::Float8E8M0, 3), 0x81);
}

/// Row `nan_by_pair`: float8 NaN into the IEEE formats, and float32 -> bfloat16.
#[test]
fn torch_float8_nan_into_ieee_formats() {
    assert_eq!(torch(DType::Float8E4M3FN, DType::Float, 0x7F), 0x7FF0_0000);
    assert_eq!(torch(DType::Float8E4M3FN, DType::Float, 0xFF), 0xFFF0_0000);
    assert_eq!(torch(DType::Float8E4M3FN, DType::Double, 0x7F), 0x7FFE_0000_0000_0000);
    assert_eq!(torch(DType::Float8E4M3FN, DType::Float16, 0xFF), 0xFF80);
    assert_eq!(torch(DType::Float8E4M3FN, DType::Bfloat16, 0xFF), 0x7FC0);
    assert_eq!(torch(DType::Float8E5M2, DType::Float, 0x7D), 0x7FE0_0000);
    assert_eq!(torch(DType::Float8E5M2, DType::Float, 0xFE), 0xFFC0_0000);
    assert_eq!(torch(DType::Float8E5M2, DType::Float16, 0x7D), 0x7F00);
    for fnuz in [DType::Float8E4M3FNUZ, DType::Float8E5M2FNUZ] {
        assert_eq!(torch(fnuz, DType::Float, 0x80), 0x7F80_0001);
        assert_eq!(torch(fnuz, DType::Double, 0x80), 0x7FF8_0000_2000_0000);
        assert_eq!(torch(fnuz, DType::Float16, 0x80), 0x7E00);
        assert_eq!(torch(fnuz, DType::Bfloat16, 0x80), 0x7FC0);
    }
    assert_eq!(torch(DType::Float8E8M0, DType::Float, 0xFF), 0x7F80_0001);
    assert_eq!(torch(DType::Float8E8M0, DType::Double, 0xFF), 0x7FF8_0000_2000_0000);
    assert_eq!(torch(DType::Float, DType::Bfloat16, 0x7FC0_0000), 0xFFFF);
    assert_eq!(torch(DType::Float, DType::Bfloat16, 0xFF80_0001), 0xFFFF);
}

/// Row `nan_payloads` (outside the vector blocks).
#[test]
fn torch_nan_payloads() {
    assert_eq!(torch(DType::Float16, DType::Double, 0x7C01), 0x7FF8_0400_0000_0000);
    assert_eq!(torch(DType::Bfloat16, DType::Float, 0x7F81), 0x7F81_0000);
    assert_eq!(torch(DType::Float, DType::Float16, 0x7F80_0001), 0x7E00);
    assert_eq!(torch(DType::Float, DType::Float16, 0x7FFF_FFFF), 0x7FFF);
    assert_eq!(torch(DType::Float16, DType::Bfloat16, 0xFE00), 0x7FC0);
    assert_eq!(torch(DType::Bfloat16, DType::Float16, 0x7F81), 0x7E08);
    assert_eq!(torch(DType::Double, DType::Bfloat16, 0x7FF8_0000_0000_0000), 0x7FC0);
}

/// Row `vector_blocks`: the answers that depend on the element's position.
#[test]
fn torch_positional_rules() {
    let nan32 = f32c(f32::NAN);
    assert_eq!(
        tensor_cast(DType::Float, DType::Uint32, &[nan32; 7]),
        [0x8000_0000, 0x8000_0000, 0x8000_0000, 0x8000_0000, 0, 0, 0]
    );
    let low = f32c(-2_147_483_904.0);
    assert_eq!(
        tensor_cast(DType::Float, DType::Uint32, &[low; 5]),
        [0x8000_0000, 0x8000_0000, 0x8000_0000, 0x8000_0000, 0x7FFF_FF00]
    );
    assert_eq!(tensor_cast(DType::Bfloat16, DType::Uint32, &[0x7FC0; 9]), [[0x8000_0000; 8].as_slice(), &[0]].concat());
    assert_eq!(tensor_cast(DType::Float16, DType::Uint32, &[0x7E00; 9]), [0; 9]);
    let got = tensor_cast(DType::Float16, DType::Float, &[0x7E00; 9]);
    assert_eq!(got, [[0x7FC0_0000; 8].as_slice(), &[0x7FFF_FFFF]].concat());
    assert_eq!(tensor_cast(DType::Float16, DType::Float, &[0xFE00]), [0x7FFF_FFFF]);
    let nan64 = f64c(f64::NAN);
    let got = tensor_cast(DType::Double, DType::Bfloat16, &[nan64; 17]);
    assert_eq!(got, [[0xFFFF; 16].as_slice(), &[0x7FC0]].concat());
}

/// Rows `float_to_uint8_through_int64`, `float8_specials_to_integer` and `nan_to_integer_zero`.
#[test]
fn torch_floats_into_integers() {
    assert_eq!(torch(DType::Double, DType::Uint8, f64c(4_294_967_295.0)), 0xFF);
    assert_eq!(torch(DType::Double, DType::Uint8, f64c(2f64.powi(40) + 7.0)), 0x07);
    assert_eq!(torch(DType::Double, DType::Uint8, f64c(-1.0)), 0xFF);
    assert_eq!(torch(DType::Float, DType::Int8, f32c(300.0)), 0x2C);
    assert_eq!(torch(DType::Float, DType::Int8, f32c(5e9)), 0x00);
    assert_eq!(torch(DType::Float, DType::Uint64, f32c(-5e9)), 0xFFFF_FFFE_D5FA_0E00);
    assert_eq!(torch(DType::Float, DType::Uint64, f32c(f32::NAN)), 0x8000_0000_0000_0000);
    assert_eq!(torch(DType::Float8E5M2, DType::Int8, 0x7C), 0x00);
    assert_eq!(torch(DType::Float8E5M2, DType::Int32, 0x7C), 0x8000_0000);
    assert_eq!(torch(DType::Float8E5M2, DType::Uint64, 0x7E), 0x8000_0000_0000_0000);
    assert_eq!(torch(DType::Float8E4M3FN, DType::Int32, 0x7F), 0x8000_0000);
    for to in [DType::Int32, DType::Int64, DType::Uint64] {
        assert_eq!(torch(DType::Float8E4M3FNUZ, to, 0x80), 0);
        assert_eq!(torch(DType::Float8E5M2FNUZ, to, 0x80), 0);
    }
}

/// Row `float8_to_bool`, and `cast_falls_back`: the dtypes torch has no cast for are `spec`'s.
#[test]
fn torch_bool_and_fallbacks() {
    assert_eq!(torch(DType::Float8E4M3FN, DType::Bool, 0x80), 0);
    assert_eq!(torch(DType::Float8E8M0, DType::Bool, 0x00), 1);
    let policy = Profile::Torch.policy();
    for d in [DType::Float4E2M1, DType::Float6E2M3, DType::Int4, DType::Uint2, DType::String] {
        assert!(policy.falls_back(DType::Float, d), "{d:?}");
    }
    assert!(!policy.falls_back(DType::Float, DType::Float8E8M0));
    // float32 NaN -> FLOAT4E2M1 is spec's +MAX (0x7), not a torch answer.
    assert_eq!(torch(DType::Float, DType::Float4E2M1, 0x7FC0_0000), 0x7);
}

/// `torch-default`: the NaN codes of the eight pairs where ATEN_CPU_CAPABILITY=default differs;
/// every other row is `torch`'s.
#[test]
fn torch_default_capability() {
    let opts = CastOptions::with_profile(Profile::TorchDefault);
    let at = |from, to, code| convert_code(from, to, code, &opts).unwrap();
    assert_eq!(at(DType::Float, DType::Bfloat16, 0xFFC0_0000), 0x7FC0);
    assert_eq!(at(DType::Double, DType::Float16, 0xFFFF_FFFF_FFFF_FFFF), 0xFE00);
    assert_eq!(at(DType::Bfloat16, DType::Float16, 0x7F81), 0x7E00);
    assert_eq!(at(DType::Bfloat16, DType::Float16, 0xFFC1), 0xFE00);
    assert_eq!(at(DType::Float8E4M3FN, DType::Float16, 0xFF), 0xFE00);
    assert_eq!(at(DType::Float8E5M2, DType::Float16, 0x7D), 0x7E00);
    // Unchanged from `torch`.
    assert_eq!(at(DType::Float8E4M3FN, DType::Float, 0xFF), 0xFFF0_0000);
    assert_eq!(at(DType::Float, DType::Float8E4M3FN, f32c(f32::INFINITY)), 0x7E);
    let run = |from, to, codes: &[u64]| tensor_cast_under(Profile::TorchDefault, from, to, codes);
    assert_eq!(run(DType::Double, DType::Bfloat16, &[f64c(f64::NAN); 17]), [0x7FC0; 17]);
    assert_eq!(run(DType::Float16, DType::Uint32, &[0xFC00; 9]), [[0x8000_0000; 8].as_slice(), &[0]].concat());
    assert_eq!(run(DType::Float8E5M2, DType::Uint32, &[0x7E; 17]), [[0x8000_0000; 16].as_slice(), &[0]].concat());
    assert_eq!(run(DType::Float16, DType::Float, &[0x7E00; 9]), [[0x7FC0_0000; 8].as_slice(), &[0x7FFF_FFFF]].concat());
}
