//! The bulk API (`lowbit::bulk`): slices of f32/f64/f16/bf16 to and from every scalar type
//! against the independent oracle (tests/support/oracle.rs); saturating packing against `std`'s
//! own rounding and a packing written here; fused quantize/dequantize against the tensor
//! `QuantizeLinear`/`DequantizeLinear` (the reference implementation) and hand-computed values;
//! TensorProto bytes against the files onnx 1.23.2 wrote (tests/fixtures/tensor_proto).

#[path = "support/harness.rs"]
mod harness;
#[path = "support/oracle.rs"]
mod oracle;
#[path = "support/rng.rs"]
mod rng;

use half::{bf16, f16};
use lowbit::bulk::{
    dequantize, dequantize_packed, pack_saturating_into, pack_wrapping_into, quantize, quantize_packed, unpack_into,
    PackedQuantizeTarget, QuantizeTarget,
};
use lowbit::quant::{dequantize_linear, quantize_linear, DequantizeAttributes, QuantizeAttributes};
use lowbit::CastOptions;
use lowbit::Error;
use lowbit::Profile;
use lowbit::Tensor;
use lowbit::{DType, Kind};
use lowbit::{ScalarSliceExt, WideFloat};
use lowbit::{F4E2M1, F6E2M3, F6E3M2, F8E4M3FN, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ, F8E8M0, I2, I4, U2, U4};
use oracle::OMode;
use std::path::{Path, PathBuf};

// ---------------------------------------------------------------------------------------------
// Slices <-> every scalar type, against the oracle.

/// Converts `src` (of dtype `from`, each element's code by `code_of`) into the scalar type of
/// `to` under every attribute set the harness tests `to` with, and compares each element with the
/// oracle's `spec` answer. Returns the number of elements compared.
fn check_from<T: Copy, S: WideFloat>(
    zero: T,
    bits: fn(T) -> u8,
    to: DType,
    src: &[S],
    from: DType,
    code_of: fn(S) -> u64,
) -> usize
where
    [T]: ScalarSliceExt,
{
    let mut checked = 0;
    for (opts, mode) in harness::option_sets(to) {
        let mut dst = vec![zero; src.len()];
        dst.convert_from_slice_with(src, &opts).unwrap();
        for (i, (&s, &d)) in src.iter().zip(&dst).enumerate() {
            let Some(want) = harness::oracle_cast(from, to, code_of(s), &opts, mode) else { continue };
            assert_eq!(u64::from(bits(d)), want, "{from} {:#x} -> {to} {opts:?} (element {i})", code_of(s));
            checked += 1;
        }
        if opts == CastOptions::default() {
            let mut again = vec![zero; src.len()];
            again.convert_from_slice(src).unwrap();
            assert!(again.iter().zip(&dst).all(|(&a, &b)| bits(a) == bits(b)), "{to}: defaults differ");
        }
    }
    checked
}

/// Every code of the scalar type `from`, repeated past several chunks, into `D` with `Cast`
/// defaults, against the oracle.
fn check_to<T: Copy, D: WideFloat>(
    from_bits: fn(u8) -> T,
    from: DType,
    zero: D,
    to: DType,
    bits_of: fn(D) -> u64,
) -> usize
where
    [T]: ScalarSliceExt,
{
    let mask = from.code_mask();
    // 3001 elements: several chunks of the plan, and a length that is no multiple of anything.
    let codes: Vec<u64> = (0..=mask).cycle().take(3001).collect();
    let src: Vec<T> = codes.iter().map(|&c| from_bits(c as u8)).collect();
    let mut dst = vec![zero; src.len()];
    src.convert_to_slice(&mut dst).unwrap();
    let mut checked = 0;
    for (&c, &d) in codes.iter().zip(&dst) {
        let want = harness::oracle_cast(from, to, c, &CastOptions::default(), OMode::NearestEven)
            .expect("narrow sources have the oracle's answer");
        assert_eq!(bits_of(d), want, "{from} {c:#x} -> {to}");
        checked += 1;
    }
    checked
}

macro_rules! each_scalar {
    ($check:ident ( $($arg:expr),* )) => {{
        let mut checked = 0;
        checked += $check(F8E4M3FN::from_bits(0), F8E4M3FN::to_bits, F8E4M3FN::DTYPE, $($arg),*);
        checked += $check(F8E4M3FNUZ::from_bits(0), F8E4M3FNUZ::to_bits, F8E4M3FNUZ::DTYPE, $($arg),*);
        checked += $check(F8E5M2::from_bits(0), F8E5M2::to_bits, F8E5M2::DTYPE, $($arg),*);
        checked += $check(F8E5M2FNUZ::from_bits(0), F8E5M2FNUZ::to_bits, F8E5M2FNUZ::DTYPE, $($arg),*);
        checked += $check(F8E8M0::from_bits(0), F8E8M0::to_bits, F8E8M0::DTYPE, $($arg),*);
        checked += $check(F6E2M3::from_bits(0), F6E2M3::to_bits, F6E2M3::DTYPE, $($arg),*);
        checked += $check(F6E3M2::from_bits(0), F6E3M2::to_bits, F6E3M2::DTYPE, $($arg),*);
        checked += $check(F4E2M1::from_bits(0), F4E2M1::to_bits, F4E2M1::DTYPE, $($arg),*);
        checked += $check(I4::from_bits(0), I4::to_bits, I4::DTYPE, $($arg),*);
        checked += $check(U4::from_bits(0), U4::to_bits, U4::DTYPE, $($arg),*);
        checked += $check(I2::from_bits(0), I2::to_bits, I2::DTYPE, $($arg),*);
        checked += $check(U2::from_bits(0), U2::to_bits, U2::DTYPE, $($arg),*);
        checked
    }};
}

macro_rules! each_scalar_to {
    ($($arg:expr),*) => {{
        let mut checked = 0;
        checked += check_to(F8E4M3FN::from_bits, F8E4M3FN::DTYPE, $($arg),*);
        checked += check_to(F8E4M3FNUZ::from_bits, F8E4M3FNUZ::DTYPE, $($arg),*);
        checked += check_to(F8E5M2::from_bits, F8E5M2::DTYPE, $($arg),*);
        checked += check_to(F8E5M2FNUZ::from_bits, F8E5M2FNUZ::DTYPE, $($arg),*);
        checked += check_to(F8E8M0::from_bits, F8E8M0::DTYPE, $($arg),*);
        checked += check_to(F6E2M3::from_bits, F6E2M3::DTYPE, $($arg),*);
        checked += check_to(F6E3M2::from_bits, F6E3M2::DTYPE, $($arg),*);
        checked += check_to(F4E2M1::from_bits, F4E2M1::DTYPE, $($arg),*);
        checked += check_to(I4::from_bits, I4::DTYPE, $($arg),*);
        checked += check_to(U4::from_bits, U4::DTYPE, $($arg),*);
        checked += check_to(I2::from_bits, I2::DTYPE, $($arg),*);
        checked += check_to(U2::from_bits, U2::DTYPE, $($arg),*);
        checked
    }};
}

#[test]
fn every_f16_and_bf16_pattern_into_every_scalar_type() {
    let f16s: Vec<f16> = (0..=u16::MAX).map(f16::from_bits).collect();
    let checked = each_scalar!(check_from(&f16s, DType::Float16, |x: f16| u64::from(x.to_bits())));
    // NaN inputs into float targets are compared too (narrow targets have one NaN rule).
    assert!(checked > 28 * 60_000, "{checked}");
    let bf16s: Vec<bf16> = (0..=u16::MAX).map(bf16::from_bits).collect();
    let checked = each_scalar!(check_from(&bf16s, DType::Bfloat16, |x: bf16| u64::from(x.to_bits())));
    assert!(checked > 28 * 60_000, "{checked}");
}

/// float32 and float64 values: specials, ties and near-ties of every small format, and random
/// bit patterns (mostly huge or tiny) and random small values.
fn f64_values() -> Vec<f64> {
    let mut v = vec![0.0, -0.0, f64::NAN, -f64::NAN, f64::INFINITY, f64::NEG_INFINITY, f64::MAX, f64::MIN_POSITIVE];
    for k in -40..=40 {
        let base = 2f64.powi(k);
        for m in [1.0, 1.0625, 1.125, 1.1875, 1.25, 1.5, 1.75, 1.875, 1.9375] {
            let x = base * m;
            v.extend([x, -x, x * (1.0 + 2f64.powi(-30)), x * (1.0 - 2f64.powi(-30))]);
        }
    }
    for i in -40..=40 {
        v.extend([f64::from(i) + 0.5, f64::from(i) - 2f64.powi(-40), 2f64.powi(31) + f64::from(i)]);
    }
    let mut rng = rng::Rng(0x5EED_B01C);
    for _ in 0..6000 {
        v.push(f64::from_bits(rng.next()));
        v.push((rng.below(1 << 24) as f64 - f64::from(1 << 23)) / 2f64.powi(rng.below(30) as i32));
    }
    v
}

#[test]
fn f32_and_f64_values_into_every_scalar_type() {
    let f64s = f64_values();
    let checked = each_scalar!(check_from(&f64s, DType::Double, f64::to_bits));
    assert!(checked > 28 * f64s.len() / 2, "{checked}");
    let mut f32s: Vec<f32> = f64s.iter().map(|&x| x as f32).collect();
    let mut rng = rng::Rng(7);
    f32s.extend((0..6000).map(|_| f32::from_bits(rng.next() as u32)));
    let checked = each_scalar!(check_from(&f32s, DType::Float, |x: f32| u64::from(x.to_bits())));
    assert!(checked > 28 * f32s.len() / 2, "{checked}");
}

#[test]
fn every_scalar_code_into_every_wide_type() {
    let n = each_scalar_to!(0f32, DType::Float, |x: f32| u64::from(x.to_bits()));
    assert_eq!(n, 12 * 3001);
    let n = each_scalar_to!(0f64, DType::Double, f64::to_bits);
    assert_eq!(n, 12 * 3001);
    let n = each_scalar_to!(f16::ZERO, DType::Float16, |x: f16| u64::from(x.to_bits()));
    assert_eq!(n, 12 * 3001);
    let n = each_scalar_to!(bf16::ZERO, DType::Bfloat16, |x: bf16| u64::from(x.to_bits()));
    assert_eq!(n, 12 * 3001);
}

#[test]
fn slice_conversions_by_hand_and_errors() {
    // E5M2 from bfloat16 1.75 (exact: 0 01111 11 = 0x3F) and 57344 (the largest finite, 0x7B).
    let mut f8 = [F8E5M2::ZERO; 2];
    f8.convert_from_slice(&[bf16::from_f32(1.75), bf16::from_f32(57344.0)]).unwrap();
    assert_eq!(f8.map(F8E5M2::to_bits), [0x3F, 0x7B]);
    // U2 from f16: 2.5 -> 2 (ties to even), 3.5 -> 4 -> low bits 0, -1 -> 3 (two's complement).
    let mut u2 = [U2::ZERO; 3];
    u2.convert_from_slice(&[f16::from_f32(2.5), f16::from_f32(3.5), f16::from_f32(-1.0)]).unwrap();
    assert_eq!(u2.map(U2::to_bits), [2, 0, 3]);
    // I2 -> f64: codes 2 and 3 are -2 and -1.
    let mut wide = [0f64; 4];
    [I2::from_bits(0), I2::from_bits(1), I2::from_bits(2), I2::from_bits(3)].convert_to_slice(&mut wide).unwrap();
    assert_eq!(wide, [0.0, 1.0, -2.0, -1.0]);
    // Lengths.
    let err = f8.convert_from_slice(&[1.0f32]).unwrap_err();
    assert!(matches!(err, Error::InvalidOp { .. }) && err.to_string().contains("destination has 2 elements, source 1"));
    assert!(f8.convert_to_slice(&mut [0f32; 3]).is_err());
    let mut empty: [I4; 0] = [];
    empty.convert_from_slice::<f64>(&[]).unwrap();
}

// ---------------------------------------------------------------------------------------------
// Packing: wrapping (Cast) and saturating.

/// Packs codes as ONNX raw data, written here from onnx.proto's rule: one little-endian bit
/// stream, element i in bits `i * width..(i + 1) * width` (a float6 field may span two bytes).
fn pack_here(width: usize, codes: &[u64]) -> Vec<u8> {
    let mut raw = vec![0u8; (codes.len() * width).div_ceil(8)];
    for (i, &c) in codes.iter().enumerate() {
        let bit = i * width;
        let field = (c as u16 & ((1u16 << width) - 1)) << (bit % 8);
        raw[bit / 8] |= field as u8;
        if bit % 8 + width > 8 {
            raw[bit / 8 + 1] |= (field >> 8) as u8;
        }
    }
    raw
}

const PACKED_INTEGERS: [DType; 4] = [DType::Int4, DType::Uint4, DType::Int2, DType::Uint2];

/// The saturating code of `x` written with `std` alone: nearest-even, clamped, NaN -> 0.
fn saturated_code(dtype: DType, x: f64) -> u64 {
    let Kind::Integer { bits, signed } = dtype.kind() else { unreachable!() };
    let (low, high) = if signed { (-(1i64 << (bits - 1)), (1i64 << (bits - 1)) - 1) } else { (0, (1i64 << bits) - 1) };
    let v = if x.is_nan() { 0 } else { (x.round_ties_even().clamp(low as f64, high as f64)) as i64 };
    v as u64 & ((1u64 << bits) - 1)
}

#[test]
fn saturating_packing_clamps_and_rounds_to_even() {
    let f64s = f64_values();
    for dtype in PACKED_INTEGERS {
        let width = dtype.bits().unwrap() as usize;
        let want = pack_here(width, &f64s.iter().map(|&x| saturated_code(dtype, x)).collect::<Vec<_>>());
        let mut raw = vec![0u8; want.len()];
        pack_saturating_into(dtype, &f64s, &mut raw).unwrap();
        assert_eq!(raw, want, "{dtype} from f64");
        // float32, float16, bfloat16 sources: their values as f64 are exact.
        let f32s: Vec<f32> = f64s.iter().map(|&x| x as f32).collect();
        let want = pack_here(width, &f32s.iter().map(|&x| saturated_code(dtype, x.into())).collect::<Vec<_>>());
        pack_saturating_into(dtype, &f32s, &mut raw).unwrap();
        assert_eq!(raw, want, "{dtype} from f32");
        let f16s: Vec<f16> = (0..=u16::MAX).map(f16::from_bits).collect();
        let want = pack_here(width, &f16s.iter().map(|&x| saturated_code(dtype, x.into())).collect::<Vec<_>>());
        let mut raw = vec![0u8; want.len()];
        pack_saturating_into(dtype, &f16s, &mut raw).unwrap();
        assert_eq!(raw, want, "{dtype} from f16");
        let bf16s: Vec<bf16> = (0..=u16::MAX).map(bf16::from_bits).collect();
        let want = pack_here(width, &bf16s.iter().map(|&x| saturated_code(dtype, x.into())).collect::<Vec<_>>());
        pack_saturating_into(dtype, &bf16s, &mut raw).unwrap();
        assert_eq!(raw, want, "{dtype} from bf16");
    }
}

#[test]
fn wrapping_packing_is_cast() {
    // The complaint: int4 9.0 -> 0x9 (-7) by Cast; saturating gives 7.
    let mut raw = [0u8; 1];
    pack_wrapping_into(DType::Int4, &[9.0f32], &mut raw, &CastOptions::default()).unwrap();
    assert_eq!(raw, [0x09]);
    pack_saturating_into(DType::Int4, &[9.0], &mut raw).unwrap();
    assert_eq!(raw, [0x07]);
    // Every packed dtype from f64 values and every f16 pattern, against the oracle's Cast.
    let f64s = f64_values();
    let f16s: Vec<f16> = (0..=u16::MAX).map(f16::from_bits).collect();
    let packed = [DType::Float4E2M1, DType::Float6E2M3, DType::Float6E3M2].into_iter().chain(PACKED_INTEGERS);
    for dtype in packed {
        let width = dtype.bits().unwrap() as usize;
        let cast = |from: DType, code: u64| {
            harness::oracle_cast(from, dtype, code, &CastOptions::default(), OMode::NearestEven).unwrap()
        };
        let want = pack_here(width, &f64s.iter().map(|x| cast(DType::Double, x.to_bits())).collect::<Vec<_>>());
        let mut raw = vec![0u8; want.len()];
        pack_wrapping_into(dtype, &f64s, &mut raw, &CastOptions::default()).unwrap();
        assert_eq!(raw, want, "{dtype} from f64");
        let want = pack_here(width, &f16s.iter().map(|x| cast(DType::Float16, x.to_bits().into())).collect::<Vec<_>>());
        let mut raw = vec![0u8; want.len()];
        pack_wrapping_into(dtype, &f16s, &mut raw, &CastOptions::default()).unwrap();
        assert_eq!(raw, want, "{dtype} from f16");
        if matches!(dtype.kind(), Kind::Float(_)) {
            // Float targets saturate in both functions (they have no infinities).
            let mut saturated = vec![0u8; want.len()];
            pack_saturating_into(dtype, &f16s, &mut saturated).unwrap();
            assert_eq!(saturated, want, "{dtype} saturating from f16");
        }
    }
}

#[test]
fn unpacking_into_every_wide_type() {
    for dtype in [DType::Float4E2M1, DType::Float6E2M3, DType::Float6E3M2].into_iter().chain(PACKED_INTEGERS) {
        let width = dtype.bits().unwrap() as usize;
        let codes: Vec<u64> = (0..=dtype.code_mask()).cycle().take(2999).collect();
        let raw = pack_here(width, &codes);
        let want = |to: DType, c: u64| harness::oracle_cast(dtype, to, c, &CastOptions::default(), OMode::NearestEven);
        let mut f16s = vec![f16::ZERO; codes.len()];
        unpack_into(dtype, &raw, &mut f16s).unwrap();
        let mut bf16s = vec![bf16::ZERO; codes.len()];
        unpack_into(dtype, &raw, &mut bf16s).unwrap();
        let mut f64s = vec![0f64; codes.len()];
        unpack_into(dtype, &raw, &mut f64s).unwrap();
        for (i, &c) in codes.iter().enumerate() {
            assert_eq!(Some(u64::from(f16s[i].to_bits())), want(DType::Float16, c), "{dtype} {c}");
            assert_eq!(Some(u64::from(bf16s[i].to_bits())), want(DType::Bfloat16, c), "{dtype} {c}");
            assert_eq!(Some(f64s[i].to_bits()), want(DType::Double, c), "{dtype} {c}");
        }
    }
}

#[test]
fn packing_errors() {
    let err = pack_saturating_into(DType::Int4, &[1.0; 3], &mut [0u8; 1]).unwrap_err();
    assert!(matches!(err, Error::RawLength { dtype: "INT4", elements: 3, expected: 2, actual: 1 }), "{err}");
    let err = pack_saturating_into(DType::Int8, &[1.0f64], &mut [0u8; 1]).unwrap_err();
    assert!(matches!(err, Error::UnsupportedDType { dtype: "INT8", .. }), "{err}");
    assert!(unpack_into(DType::Float8E4M3FN, &[0], &mut [0f32; 1]).is_err());
    assert!(unpack_into(DType::Uint2, &[0, 0], &mut [0f32; 4]).is_err());
}

// ---------------------------------------------------------------------------------------------
// Fused quantize / dequantize against the tensor ops.

const OPSET: i64 = 25;

fn scalar_tensor(dtype: DType, code: u64) -> Tensor {
    Tensor::from_codes(dtype, vec![], &[code]).unwrap()
}

/// Inputs for quantization: specials, ties at the scales used, and values over the whole range of
/// every target, more than two pieces' worth (16384 elements each) and an odd count.
fn quantize_inputs() -> Vec<f32> {
    let mut v = vec![0.0, -0.0, f32::NAN, -f32::NAN, f32::INFINITY, f32::NEG_INFINITY, f32::MAX, f32::MIN, 1e-40];
    let mut rng = rng::Rng(0xC0FFEE);
    while v.len() < 40_001 {
        match rng.below(4) {
            0 => v.push((rng.below(4001) as f32 - 2000.0) / 8.0),
            1 => v.push((rng.below(1 << 20) as f32 - f32::from(1u16 << 15) * 16.0) / 97.0),
            2 => v.push(f32::from_bits(rng.next() as u32)),
            _ => v.push((rng.below(201) as f32 - 100.0) * 0.5),
        }
    }
    v
}

const SCALES: [f32; 5] = [1.0, 0.5, 0.1, 3.0, 1e-3];

/// [`quantize`] and [`quantize_packed`] equal QuantizeLinear (opset 25, `spec`) on tensors for
/// every scale and zero point given.
fn check_quantize<Q: QuantizeTarget + Copy>(to_code: fn(Q) -> u8, from_code: fn(u8) -> Q, dtype: DType, zeros: &[u8]) {
    let x = quantize_inputs();
    let xt = Tensor::from_f32(&x);
    for &scale in &SCALES {
        for &z in zeros {
            let zp = from_code(z);
            let reference = quantize_linear(
                &xt,
                &Tensor::from_f32(&[scale]).reshape(vec![]).unwrap(),
                Some(&scalar_tensor(dtype, u64::from(z))),
                &QuantizeAttributes::default(),
                OPSET,
                Profile::Spec,
            )
            .unwrap();
            let mut out = vec![zp; x.len()];
            quantize(&x, scale, zp, &mut out).unwrap();
            let codes: Vec<u64> = out.iter().map(|&q| u64::from(to_code(q))).collect();
            assert_eq!(codes, reference.codes().unwrap(), "{dtype} scale {scale} zero point {z:#x}");
        }
    }
}

fn check_quantize_packed<Q: PackedQuantizeTarget + Copy>(from_code: fn(u8) -> Q, dtype: DType) {
    let x = quantize_inputs();
    let xt = Tensor::from_f32(&x);
    for &scale in &SCALES {
        for z in 0..=dtype.code_mask() as u8 {
            let reference = quantize_linear(
                &xt,
                &Tensor::from_f32(&[scale]),
                Some(&scalar_tensor(dtype, u64::from(z))),
                &QuantizeAttributes::default(),
                OPSET,
                Profile::Spec,
            )
            .unwrap();
            let mut raw = vec![0u8; reference.raw().unwrap().len()];
            quantize_packed(&x, scale, from_code(z), &mut raw).unwrap();
            assert_eq!(raw, reference.raw().unwrap(), "{dtype} scale {scale} zero point {z}");
            // Dequantizing the packed codes equals DequantizeLinear on them.
            let back = dequantize_linear(
                &reference,
                &Tensor::from_f32(&[scale]),
                Some(&scalar_tensor(dtype, u64::from(z))),
                &DequantizeAttributes::default(),
                OPSET,
                Profile::Spec,
            )
            .unwrap();
            let mut y = vec![0f32; x.len()];
            dequantize_packed(&raw, scale, from_code(z), &mut y).unwrap();
            let bits: Vec<u64> = y.iter().map(|v| u64::from(v.to_bits())).collect();
            assert_eq!(bits, back.codes().unwrap(), "{dtype} dequantize scale {scale} zero point {z}");
        }
    }
}

#[test]
fn quantize_equals_quantize_linear() {
    check_quantize(|q: i8| q as u8, |c| c as i8, DType::Int8, &[0, 3, 0x80, 0x7F, 0xF0]);
    check_quantize(|q: u8| q, |c| c, DType::Uint8, &[0, 128, 255, 17]);
    check_quantize(I4::to_bits, I4::from_bits, DType::Int4, &[0, 1, 7, 8, 0xF]);
    check_quantize(U4::to_bits, U4::from_bits, DType::Uint4, &[0, 8, 15]);
    check_quantize(I2::to_bits, I2::from_bits, DType::Int2, &[0, 1, 2, 3]);
    check_quantize(U2::to_bits, U2::from_bits, DType::Uint2, &[0, 1, 2, 3]);
    // float8: the zero point is added in `spec` (0x38 is 1.0 in E4M3FN, 0x3C in E5M2).
    check_quantize(F8E4M3FN::to_bits, F8E4M3FN::from_bits, DType::Float8E4M3FN, &[0, 0x80, 0x38]);
    check_quantize(F8E4M3FNUZ::to_bits, F8E4M3FNUZ::from_bits, DType::Float8E4M3FNUZ, &[0, 0x40]);
    check_quantize(F8E5M2::to_bits, F8E5M2::from_bits, DType::Float8E5M2, &[0, 0x3C]);
    check_quantize(F8E5M2FNUZ::to_bits, F8E5M2FNUZ::from_bits, DType::Float8E5M2FNUZ, &[0]);
}

#[test]
fn packed_quantize_and_dequantize_equal_the_tensor_ops() {
    check_quantize_packed(I4::from_bits, DType::Int4);
    check_quantize_packed(U4::from_bits, DType::Uint4);
    check_quantize_packed(I2::from_bits, DType::Int2);
    check_quantize_packed(U2::from_bits, DType::Uint2);
}

/// [`dequantize`] of every code (repeated past a piece) equals DequantizeLinear.
fn check_dequantize<Q: QuantizeTarget + Copy>(from_code: fn(u8) -> Q, dtype: DType, zeros: &[u8]) {
    let codes: Vec<u64> = (0..=dtype.code_mask()).cycle().take(20_000).collect();
    let src: Vec<Q> = codes.iter().map(|&c| from_code(c as u8)).collect();
    let xt = Tensor::from_codes(dtype, vec![codes.len()], &codes).unwrap();
    for scale in SCALES.into_iter().chain([f32::MAX, 2f32.powi(-140), -0.75]) {
        for &z in zeros {
            let reference = dequantize_linear(
                &xt,
                &Tensor::from_f32(&[scale]),
                Some(&scalar_tensor(dtype, u64::from(z))),
                &DequantizeAttributes::default(),
                OPSET,
                Profile::Spec,
            )
            .unwrap();
            let mut y = vec![0f32; src.len()];
            dequantize(&src, scale, from_code(z), &mut y).unwrap();
            let bits: Vec<u64> = y.iter().map(|v| u64::from(v.to_bits())).collect();
            assert_eq!(bits, reference.codes().unwrap(), "{dtype} scale {scale} zero point {z:#x}");
        }
    }
}

#[test]
fn dequantize_equals_dequantize_linear() {
    check_dequantize(|c| c as i8, DType::Int8, &[0, 3, 0x80, 0x7F]);
    check_dequantize(|c| c, DType::Uint8, &[0, 128, 255]);
    check_dequantize(I4::from_bits, DType::Int4, &[0, 7, 8]);
    check_dequantize(U4::from_bits, DType::Uint4, &[0, 15]);
    check_dequantize(I2::from_bits, DType::Int2, &[0, 2]);
    check_dequantize(U2::from_bits, DType::Uint2, &[0, 3]);
    check_dequantize(F8E4M3FN::from_bits, DType::Float8E4M3FN, &[0]);
    check_dequantize(F8E4M3FNUZ::from_bits, DType::Float8E4M3FNUZ, &[0]);
    check_dequantize(F8E5M2::from_bits, DType::Float8E5M2, &[0, 0x80]);
    check_dequantize(F8E5M2FNUZ::from_bits, DType::Float8E5M2FNUZ, &[0]);
}

#[test]
fn quantize_by_hand() {
    // uint8, scale 0.1 (float32: 0.100000001490116), zero point 128. The division is in float32:
    // 0.25 / 0.1f = 2.49999996... rounds to 2.5f, ties to even: 2 (+128 = 130); 0.35f / 0.1f =
    // 3.49999989 rounds to 3.5f -> 4 (132; a float64 division would give 3, 131); -12.8f / 0.1f =
    // -128.0000000 -> -128 + 128 = 0; 30 / 0.1f = 299.9999955 -> 300f -> 428, saturated to 255.
    let mut q = [0u8; 4];
    quantize(&[0.25, 0.35, -12.8, 30.0], 0.1, 128u8, &mut q).unwrap();
    assert_eq!(q, [130, 132, 0, 255]);
    // int2, scale 2, zero point -1: 1/2 = 0.5 -> 0 (ties to even) - 1 = -1 (code 3); 3/2 = 1.5 -> 2
    // - 1 = 1; -5/2 = -2.5 -> -2 - 1 = -3 -> clamped to -2 (code 2); 2 -> 1 - 1 = 0.
    let mut raw = [0u8; 1];
    quantize_packed(&[1.0, 3.0, -5.0, 2.0], 2.0, I2::from_bits(3), &mut raw).unwrap();
    assert_eq!(raw, [0b00_10_01_11]);
    // E4M3FNUZ, scale 0.25: 100 / 0.25 = 400 -> 240 (the largest, saturate=1).
    let mut f8 = [F8E4M3FNUZ::ZERO; 1];
    quantize(&[100.0], 0.25, F8E4M3FNUZ::ZERO, &mut f8).unwrap();
    assert_eq!(f8[0].to_f32(), 240.0);
    // E4M3FN: `spec` adds the zero point to a float8 quotient, so -0.0 / 1 + 0 = +0 (0x00, not
    // 0x80); 1.0625 / 1 + 1 = 2.0625 -> 2 (0x40; the neighbours are 2 and 2.25).
    let mut f8 = [F8E4M3FN::ZERO; 2];
    quantize(&[-0.0, 1.0625], 1.0, F8E4M3FN::ONE, &mut f8).unwrap();
    assert_eq!(f8.map(F8E4M3FN::to_bits), [0x38, 0x40]);
    quantize(&[-0.0], 1.0, F8E4M3FN::ZERO, &mut f8[..1]).unwrap();
    assert_eq!(f8[0].to_bits(), 0x00);
    // Dequantize int8 -128 with zero point 127 and scale 0.5: (-128 - 127) * 0.5 = -127.5.
    let mut y = [0f32; 1];
    dequantize(&[-128i8], 0.5, 127i8, &mut y).unwrap();
    assert_eq!(y, [-127.5]);
    // Lengths and float8 zero points.
    assert!(matches!(quantize(&[1.0; 2], 1.0, 0i8, &mut [0i8; 3]), Err(Error::InvalidOp { .. })));
    assert!(matches!(quantize_packed(&[1.0; 3], 1.0, U4::ZERO, &mut [0u8; 1]), Err(Error::RawLength { .. })));
    assert!(matches!(dequantize_packed(&[0u8; 1], 1.0, U2::ZERO, &mut [0f32; 5]), Err(Error::RawLength { .. })));
    let err = dequantize(&[F8E4M3FN::ZERO], 1.0, F8E4M3FN::ONE, &mut y).unwrap_err();
    assert!(err.to_string().contains("x_zero_point of a FLOAT8E4M3FN input must be zero"), "{err}");
    quantize::<u8>(&[], 1.0, 0, &mut []).unwrap();
}

// ---------------------------------------------------------------------------------------------
// TensorProto bytes.

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tensor_proto")
}

#[test]
fn tensor_proto_bytes_from_onnx_files() {
    let mut checked = 0;
    for dtype in DType::ALL.into_iter().filter(|d| !matches!(d, DType::Undefined | DType::String)) {
        let name = dtype.file_name();
        for kind in ["raw", "typed"] {
            let bytes = std::fs::read(fixtures().join(format!("{name}.{kind}.pb"))).unwrap();
            let t = Tensor::from_tensor_proto_bytes(&bytes).unwrap();
            assert_eq!(t.dtype(), dtype, "{name}.{kind}");
            // The codes onnx 1.23.2 wrote next to each file (hex; complex as the raw bytes).
            let want = std::fs::read_to_string(fixtures().join(format!("{name}.{kind}.codes"))).unwrap();
            let got: Vec<String> = match dtype {
                DType::Complex64 | DType::Complex128 => {
                    vec![t.raw().unwrap().iter().map(|b| format!("{b:02x}")).collect()]
                }
                _ => t.codes().unwrap().iter().map(|c| format!("{c:x}")).collect(),
            };
            assert_eq!(got, want.lines().collect::<Vec<_>>(), "{name}.{kind}");
            checked += 1;
        }
        if !matches!(dtype, DType::Complex64 | DType::Complex128) {
            // The bytes onnx was shown to read back (written by lowbit, checked by onnx).
            let t = Tensor::from_tensor_proto_bytes(&std::fs::read(fixtures().join(format!("{name}.raw.pb"))).unwrap())
                .unwrap();
            let verified = std::fs::read(fixtures().join(format!("{name}.lowbit.pb"))).unwrap();
            assert_eq!(t.to_tensor_proto_bytes(None), verified, "{name}");
        }
    }
    assert_eq!(checked, 54);
}

#[test]
fn tensor_proto_bytes_round_trip() {
    let tensors = [
        Tensor::from_codes(DType::Int4, vec![3, 3], &[1, 2, 3, 4, 5, 6, 7, 8, 9]).unwrap(),
        Tensor::from_codes(DType::Float6E3M2, vec![5], &[0x3F, 0, 1, 0x20, 0x15]).unwrap(),
        Tensor::from_codes(DType::Float8E8M0, vec![], &[0xFF]).unwrap(),
        Tensor::from_f64(&[1.0, f64::NAN, -0.0]),
        Tensor::from_codes(DType::Bfloat16, vec![0, 4], &[]).unwrap(),
        Tensor::from_strings(vec![2], vec!["é".to_string(), String::new()]).unwrap(),
    ];
    for t in &tensors {
        for name in [None, Some("weights")] {
            let bytes = t.to_tensor_proto_bytes(name);
            assert_eq!(&Tensor::from_tensor_proto_bytes(&bytes).unwrap(), t);
        }
    }
}

#[test]
fn truncated_or_corrupt_tensor_proto_bytes_are_errors() {
    let bytes = std::fs::read(fixtures().join("float8e4m3fn.raw.pb")).unwrap();
    assert!(Tensor::from_tensor_proto_bytes(&bytes).is_ok());
    // Every strict prefix lacks the end of raw_data (the last field): the bytes do not parse, or
    // parse into a tensor with no data for its dims.
    for end in 0..bytes.len() {
        let err = Tensor::from_tensor_proto_bytes(&bytes[..end]).unwrap_err();
        assert!(matches!(err, Error::InvalidOp { .. } | Error::RawLength { .. }), "prefix of {end} bytes: {err}");
    }
    let not_a_message = |b: &[u8]| {
        let err = Tensor::from_tensor_proto_bytes(b).unwrap_err();
        assert!(err.to_string().contains("the bytes are not a TensorProto"), "{b:?}: {err}");
    };
    // A varint of eleven bytes; wire type 7 (none exists); raw_data claiming 100 bytes with 2 there.
    not_a_message(&[0x10; 1].iter().chain(&[0xFF; 11]).copied().collect::<Vec<_>>());
    not_a_message(&[0x0F, 0x00]);
    not_a_message(&[0x10, 0x01, 0x4A, 100, 0, 0]);
    // Well-formed protobuf that is no valid tensor: dims [2] of FLOAT with 4 bytes of data.
    let err = Tensor::from_tensor_proto_bytes(&[0x0A, 0x01, 0x02, 0x10, 0x01, 0x4A, 0x04, 0, 0, 0, 0]).unwrap_err();
    assert!(matches!(err, Error::RawLength { dtype: "FLOAT", elements: 2, expected: 8, actual: 4 }), "{err}");
    // An unknown data_type (99).
    assert!(Tensor::from_tensor_proto_bytes(&[0x10, 99]).is_err());
    // Over the input limit.
    let limits = lowbit::onnx::limits::Limits { max_input_bytes: 8, ..lowbit::onnx::limits::Limits::default() };
    let err = Tensor::from_tensor_proto_bytes_with(&bytes, &limits).unwrap_err();
    assert!(matches!(err, Error::InputTooLarge { limit: 8, .. }), "{err}");
}

/// [`dequantize_packed`] past the size where it builds its per-byte table, with a last byte only
/// partly used (4,097 int4 elements, 4,099 int2 elements), equals DequantizeLinear.
#[test]
fn packed_dequantize_with_a_partial_last_byte_equals_the_tensor_op() {
    for (dtype, n, zero) in
        [(DType::Int4, 4097usize, 3u8), (DType::Uint4, 4097, 9), (DType::Int2, 4099, 1), (DType::Uint2, 4099, 2)]
    {
        // Every code, in an order that puts different codes side by side in a byte.
        let codes: Vec<u64> = (0..n as u64).map(|i| (i * 7 + i / 5) & dtype.code_mask()).collect();
        let xt = Tensor::from_codes(dtype, vec![n], &codes).unwrap();
        let reference = dequantize_linear(
            &xt,
            &Tensor::from_f32(&[0.375]),
            Some(&scalar_tensor(dtype, u64::from(zero))),
            &DequantizeAttributes::default(),
            OPSET,
            Profile::Spec,
        )
        .unwrap();
        let mut y = vec![0f32; n];
        match dtype {
            DType::Int4 => dequantize_packed(xt.raw().unwrap(), 0.375, I4::from_bits(zero), &mut y),
            DType::Uint4 => dequantize_packed(xt.raw().unwrap(), 0.375, U4::from_bits(zero), &mut y),
            DType::Int2 => dequantize_packed(xt.raw().unwrap(), 0.375, I2::from_bits(zero), &mut y),
            _ => dequantize_packed(xt.raw().unwrap(), 0.375, U2::from_bits(zero), &mut y),
        }
        .unwrap();
        let bits: Vec<u64> = y.iter().map(|v| u64::from(v.to_bits())).collect();
        assert_eq!(bits, reference.codes().unwrap(), "{dtype}");
        // By hand: the last element's code and value.
        let last = codes[n - 1] as i64;
        let signed = if dtype == DType::Int4 && last >= 8 {
            last - 16
        } else if dtype == DType::Int2 && last >= 2 {
            last - 4
        } else {
            last
        };
        let zero = if dtype == DType::Int2 && zero >= 2 { i64::from(zero) - 4 } else { i64::from(zero) };
        assert_eq!(y[n - 1], (signed - zero) as f32 * 0.375, "{dtype} last element");
    }
}
