//! ONNX Range and OpenVINO Range-1/Range-4: the worked examples of
//! docs/research/range_slice_gather.md (§1.2 to §1.8, §2.3, §2.4, §5.1) under every profile whose
//! column they belong to, the errors, the command line, and a property: under `spec` the count is
//! the exact formula.
//!
//! Expected bits come from the research file's verified columns. Where `spec` has no column, its
//! expectation is computed here from the exact value `start + i*delta`, rounded once by the
//! independent oracle (tests/support/oracle.rs), which shares no code with the crate.

#[path = "support/oracle.rs"]
mod oracle;

use lowbit::ops::{openvino_range, range, range1, range4, range_with, RangeOptions};
use lowbit::DType;
use lowbit::Error;
use lowbit::Profile;
use lowbit::Tensor;
use num_bigint::{BigInt, Sign};
use oracle::{OFormat, OMode, OValue};
use proptest::prelude::*;

const SPEC: Profile = Profile::Spec;
const REF: Profile = Profile::OnnxReference;
const ORT: Profile = Profile::OnnxRuntime;
const OV: Profile = Profile::OpenVino;

fn scalar(dtype: DType, code: u64) -> Tensor {
    Tensor::from_codes(dtype, vec![], &[code]).unwrap()
}
fn f32t(x: f32) -> Tensor {
    scalar(DType::Float, x.to_bits().into())
}
fn f64t(x: f64) -> Tensor {
    scalar(DType::Double, x.to_bits())
}
fn f16t(code: u16) -> Tensor {
    scalar(DType::Float16, code.into())
}
fn i64t(x: i64) -> Tensor {
    scalar(DType::Int64, x as u64)
}
fn i32t(x: i32) -> Tensor {
    scalar(DType::Int32, u64::from(x as u32))
}
fn codes(t: &Tensor) -> Vec<u64> {
    t.codes().unwrap()
}
fn i64s(t: &Tensor) -> Vec<i64> {
    codes(t).into_iter().map(|c| c as i64).collect()
}
fn f32_codes(xs: &[f32]) -> Vec<u64> {
    xs.iter().map(|x| u64::from(x.to_bits())).collect()
}

/// ONNX Range-11 under a profile.
fn onnx(profile: Profile, start: &Tensor, limit: &Tensor, delta: &Tensor) -> lowbit::Result<Tensor> {
    range(start, limit, delta, 11, profile)
}

// ---------------------------------------------------------------------------------------------
// The independent exact computation for `spec`.

fn signed_mantissa(v: &OValue) -> (BigInt, i64) {
    match v {
        OValue::Finite { negative, mant, exp } => {
            let m = BigInt::from(mant.clone());
            (if *negative { -m } else { m }, *exp)
        }
        other => panic!("not finite: {other:?}"),
    }
}

/// `start + i * delta`, exactly.
fn term(start: &OValue, delta: &OValue, i: u64) -> OValue {
    let ((sm, se), (dm, de)) = (signed_mantissa(start), signed_mantissa(delta));
    let e = se.min(de);
    let m = (sm << (se - e) as usize) + (dm << (de - e) as usize) * BigInt::from(i);
    OValue::finite(m.sign() == Sign::Minus, m.magnitude().clone(), e)
}

/// The `spec` codes of `n` terms rounded once into `format` (IEEE overflow to infinity).
fn spec_terms(format: OFormat, start: &OValue, delta: &OValue, n: u64) -> Vec<u64> {
    (0..n).map(|i| oracle::encode(format, &term(start, delta, i), false, OMode::NearestEven)).collect()
}

fn f32v(x: f32) -> OValue {
    oracle::value_from_f32_bits(x.to_bits())
}

/// `max(ceil((limit - start) / delta), 0)` on exact values.
fn exact_count(start: &OValue, limit: &OValue, delta: &OValue) -> BigInt {
    let ((sm, se), (lm, le), (dm, de)) = (signed_mantissa(start), signed_mantissa(limit), signed_mantissa(delta));
    let e = se.min(le);
    let diff = (lm << (le - e) as usize) - (sm << (se - e) as usize);
    let (num, den) = if e >= de { (diff << (e - de) as usize, dm) } else { (diff, dm << (de - e) as usize) };
    let (q, r) = (&num / &den, &num % &den);
    let up = r != BigInt::from(0) && (num.sign() == Sign::Minus) == (den.sign() == Sign::Minus);
    let c = if up { q + 1 } else { q };
    c.max(BigInt::from(0))
}

// ---------------------------------------------------------------------------------------------
// §1.2 and §1.3: counts

#[test]
fn int64_counts_1_3() {
    let two60 = 1i64 << 60;
    // (0, 2^60 + 1, 2^60): both implementations count in float64 and find 1; the exact formula 2.
    let (s, l, d) = (i64t(0), i64t(two60 + 1), i64t(two60));
    assert_eq!(i64s(&onnx(REF, &s, &l, &d).unwrap()), [0]);
    assert_eq!(i64s(&onnx(ORT, &s, &l, &d).unwrap()), [0]);
    assert_eq!(i64s(&onnx(SPEC, &s, &l, &d).unwrap()), [0, two60]);
    // Exact difference -1 over a negative delta: a tiny positive quotient, one element; ORT's
    // float64 operands are equal, so none.
    let (s, l, d) = (i64t(3604257586228107864), i64t(3604257586228107863), i64t(-3995954281778806));
    for p in [SPEC, REF] {
        assert_eq!(i64s(&onnx(p, &s, &l, &d).unwrap()), [3604257586228107864], "{p:?}");
    }
    assert!(onnx(ORT, &s, &l, &d).unwrap().is_empty());
    // Both limits round to 2^63 in float64.
    let (s, l, d) = (i64t(i64::MAX - 2), i64t(i64::MAX), i64t(2));
    for p in [SPEC, REF] {
        assert_eq!(i64s(&onnx(p, &s, &l, &d).unwrap()), [i64::MAX - 2], "{p:?}");
    }
    assert!(onnx(ORT, &s, &l, &d).unwrap().is_empty());
    // No overflow anywhere.
    let (s, l, d) = (i64t(i64::MIN), i64t(i64::MAX), i64t(1 << 62));
    for p in Profile::ALL {
        assert_eq!(i64s(&onnx(p, &s, &l, &d).unwrap()), [i64::MIN, -(1 << 62), 0, 1 << 62], "{p:?}");
    }
}

#[test]
fn infinite_and_underflowing_deltas_1_3() {
    // f32 (0, 1, +inf): numpy's underflow rule gives [0]; ORT ceil(0) = 0; `spec` evaluates the
    // formula, ceil(1 / inf) = 0.
    let (s, l, d) = (f32t(0.0), f32t(1.0), f32t(f32::INFINITY));
    assert_eq!(codes(&onnx(REF, &s, &l, &d).unwrap()), [0]);
    for p in [SPEC, ORT, OV] {
        assert!(onnx(p, &s, &l, &d).unwrap().is_empty(), "{p:?}");
    }
    // f64 (0, 1e-300, 1e300): the quotient underflows in float64; the exact quotient 1e-600 has
    // ceiling 1.
    let (s, l, d) = (f64t(0.0), f64t(1e-300), f64t(1e300));
    for p in [SPEC, REF] {
        assert_eq!(codes(&onnx(p, &s, &l, &d).unwrap()), [0], "{p:?}");
    }
    assert!(onnx(ORT, &s, &l, &d).unwrap().is_empty());
    // (0, -1, inf): empty everywhere.
    for p in Profile::ALL {
        assert!(onnx(p, &f32t(0.0), &f32t(-1.0), &f32t(f32::INFINITY)).unwrap().is_empty(), "{p:?}");
    }
}

#[test]
fn last_element_equals_limit_1_2() {
    // Shape inference says 3 (float32 subtraction); every runtime gives 4: [-0.1, 1e7, 2e7, 3e7].
    let want = f32_codes(&[-0.1, 1e7, 2e7, 3e7]);
    for p in Profile::ALL {
        assert_eq!(codes(&onnx(p, &f32t(-0.1), &f32t(3e7), &f32t(1e7)).unwrap()), want, "{p:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// §1.4: values

const TENTHS_REFERENCE: [u32; 10] = [
    0x00000000, 0x3dcccccd, 0x3e4ccccd, 0x3e99999a, 0x3ecccccd, 0x3f000000, 0x3f19999a, 0x3f333333, 0x3f4ccccd,
    0x3f666667,
];
const TENTHS_REPEATED_ADD: [u32; 10] = [
    0x00000000, 0x3dcccccd, 0x3e4ccccd, 0x3e99999a, 0x3ecccccd, 0x3f000000, 0x3f19999a, 0x3f333334, 0x3f4cccce,
    0x3f666668,
];

#[test]
fn tenths_in_float32_1_4() {
    let run = |p| codes(&onnx(p, &f32t(0.0), &f32t(1.0), &f32t(0.1)).unwrap());
    assert_eq!(run(REF), TENTHS_REFERENCE.map(u64::from));
    assert_eq!(run(ORT), TENTHS_REPEATED_ADD.map(u64::from));
    let spec = spec_terms(OFormat::F32, &f32v(0.0), &f32v(0.1), 10);
    assert_eq!(run(SPEC), spec);
    assert_eq!(run(OV), spec);
    // The research notes that the exact value rounded once is the reference column here.
    assert_eq!(spec, TENTHS_REFERENCE.map(u64::from));
}

#[test]
fn float64_values_1_4() {
    let run = |p| codes(&onnx(p, &f64t(0.1), &f64t(0.7), &f64t(0.2)).unwrap());
    assert_eq!(run(REF), [0.1, 0.30000000000000004, 0.5000000000000001].map(f64::to_bits));
    assert_eq!(run(ORT), [0.1, 0.30000000000000004, 0.5].map(f64::to_bits));
    let (s, d) = (oracle::value_from_f64_bits(0.1f64.to_bits()), oracle::value_from_f64_bits(0.2f64.to_bits()));
    assert_eq!(run(SPEC), spec_terms(OFormat::F64, &s, &d, 3));
}

#[test]
fn large_magnitude_1_4() {
    // f32 limit 1e8 + 10 is 100000008; 8 elements.
    let run = |p| codes(&onnx(p, &f32t(1e8), &f32t(1e8 + 10.0), &f32t(1.0)).unwrap());
    let mut reference = vec![1e8f32; 5];
    reference.extend([100000008.0; 3]);
    assert_eq!(run(REF), f32_codes(&reference));
    assert_eq!(run(ORT), f32_codes(&[1e8; 8]));
    assert_eq!(run(SPEC), spec_terms(OFormat::F32, &f32v(1e8), &f32v(1.0), 8));
}

#[test]
fn int32_near_the_top_1_4() {
    for p in Profile::ALL {
        let out = onnx(p, &i32t(2147483640), &i32t(2147483647), &i32t(3)).unwrap();
        assert_eq!(out.dtype(), DType::Int32);
        assert_eq!(codes(&out), [2147483640u64, 2147483643, 2147483646], "{p:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// §1.5 and §1.6: errors and types

#[test]
fn bad_inputs_are_errors_in_every_profile_1_5() {
    let cases: [(&str, Tensor, Tensor, Tensor); 7] = [
        ("delta is 0", i32t(0), i32t(5), i32t(0)),
        ("delta is 0", f32t(0.0), f32t(5.0), f32t(-0.0)),
        ("not a finite", f32t(0.0), f32t(f32::INFINITY), f32t(1.0)),
        ("not a finite", f32t(f32::NEG_INFINITY), f32t(0.0), f32t(1.0)),
        ("not a finite", f32t(f32::NAN), f32t(1.0), f32t(1.0)),
        ("not a finite", f32t(0.0), f32t(f32::NAN), f32t(1.0)),
        ("not a finite", f64t(0.0), f64t(1.0), f64t(f64::NAN)),
    ];
    for p in Profile::ALL {
        for (needle, s, l, d) in &cases {
            let err = onnx(p, s, l, d).unwrap_err().to_string();
            assert!(err.contains(needle) && err.contains("Range-11"), "{p:?}: {err}");
        }
    }
}

#[test]
fn counts_are_capped_before_allocating() {
    for p in Profile::ALL {
        let err = onnx(p, &i64t(0), &i64t(1 << 40), &i64t(1)).unwrap_err();
        assert!(matches!(err, Error::TooLarge { .. }), "{p:?}: {err}");
    }
    // 1e600 elements: an exact count too large to allocate, or a float64 count that overflows.
    let err = onnx(SPEC, &f64t(0.0), &f64t(1e300), &f64t(1e-300)).unwrap_err();
    assert!(matches!(err, Error::TooLarge { .. }), "{err}");
    for p in [REF, ORT] {
        let err = onnx(p, &f64t(0.0), &f64t(1e300), &f64t(1e-300)).unwrap_err().to_string();
        assert!(err.contains("not a finite"), "{p:?}: {err}");
    }
    let small = RangeOptions { max_elements: 10, ..RangeOptions::default() };
    assert_eq!(range_with(&i32t(0), &i32t(10), &i32t(1), 11, &small).unwrap().len(), 10);
    let err = range_with(&i32t(0), &i32t(11), &i32t(1), 11, &small).unwrap_err().to_string();
    assert!(err.contains("11 elements") && err.contains("10"), "{err}");
}

#[test]
fn types_shapes_and_versions_1_6() {
    // Scalar-like: [] and [1]; anything else is an error.
    let one = Tensor::from_codes(DType::Int64, vec![1], &[5]).unwrap();
    assert_eq!(i64s(&onnx(SPEC, &i64t(0), &one, &i64t(2)).unwrap()), [0, 2, 4]);
    let two = Tensor::from_codes(DType::Int64, vec![2], &[5, 6]).unwrap();
    assert!(onnx(SPEC, &i64t(0), &two, &i64t(1)).unwrap_err().to_string().contains("limit must be a scalar"));
    // One type for all three.
    let err = onnx(SPEC, &i64t(0), &i32t(5), &i64t(1)).unwrap_err().to_string();
    assert!(err.contains("INT64") && err.contains("INT32"), "{err}");
    // Range-11 has no int8, uint, float16 or bfloat16; Range-27 adds float16 and bfloat16.
    let i8t = |x: i8| scalar(DType::Int8, u64::from(x as u8));
    assert!(onnx(SPEC, &i8t(0), &i8t(5), &i8t(1)).is_err());
    assert!(onnx(SPEC, &f16t(0), &f16t(0x3C00), &f16t(0x2E66)).is_err());
    assert!(range(&f16t(0), &f16t(0x3C00), &f16t(0x2E66), 27, SPEC).is_ok());
    let int16 = |x: i16| scalar(DType::Int16, u64::from(x as u16));
    assert_eq!(codes(&onnx(ORT, &int16(-3), &int16(3), &int16(2)).unwrap()), [0xFFFD, 0xFFFF, 1]);
    // Opsets below 11 and above 28 do not exist; opset 26 is still Range-11.
    assert!(range(&i64t(0), &i64t(1), &i64t(1), 10, SPEC).is_err());
    assert!(range(&i64t(0), &i64t(1), &i64t(1), 29, SPEC).is_err());
    assert!(range(&f16t(0), &f16t(0x3C00), &f16t(0x2E66), 26, SPEC).is_err());
    // stash_type only from Range-27, and only FLOAT or DOUBLE.
    let stash = |n| RangeOptions { stash_type: Some(n), ..RangeOptions::default() };
    assert!(range_with(&f16t(0), &f16t(0x3C00), &f16t(0x2E66), 11, &stash(1)).is_err());
    assert!(range_with(&f16t(0), &f16t(0x3C00), &f16t(0x2E66), 27, &stash(10)).is_err());
    assert!(range_with(&f16t(0), &f16t(0x3C00), &f16t(0x2E66), 27, &stash(11)).is_ok());
}

// ---------------------------------------------------------------------------------------------
// §1.8: Range-27 float16

const F16_TENTHS_11: [u64; 11] =
    [0x0000, 0x2e66, 0x3266, 0x34cc, 0x3666, 0x3800, 0x38cc, 0x3999, 0x3a66, 0x3b33, 0x3c00];

#[test]
fn range27_float16_1_8() {
    let (s, l, d) = (f16t(0), f16t(0x3C00), f16t(0x2E66));
    assert_eq!(codes(&range(&s, &l, &d, 27, REF).unwrap()), F16_TENTHS_11);
    let stash_double = RangeOptions { profile: REF, stash_type: Some(11), ..RangeOptions::default() };
    assert_eq!(codes(&range_with(&s, &l, &d, 27, &stash_double).unwrap()), F16_TENTHS_11);
    let exact = spec_terms(OFormat::F16, &oracle::value_from_f16_bits(0), &oracle::value_from_f16_bits(0x2E66), 11);
    assert_eq!(codes(&range(&s, &l, &d, 27, SPEC).unwrap()), exact);
    // onnxruntime 1.31.1 cannot load opset 27: `spec` decides.
    assert_eq!(codes(&range(&s, &l, &d, 27, ORT).unwrap()), exact);
    // Pure float16 repeated addition would drift (research: ...0x38cd 0x399a 0x3a67 0x3b34).
    assert_ne!(exact[6..10], [0x38cd, 0x399a, 0x3a67, 0x3b34]);
}

#[test]
fn backend_test_vectors_5_1() {
    for p in Profile::ALL {
        assert_eq!(codes(&onnx(p, &f32t(1.0), &f32t(5.0), &f32t(2.0)).unwrap()), f32_codes(&[1.0, 3.0]));
        assert_eq!(codes(&onnx(p, &i32t(10), &i32t(6), &i32t(-3)).unwrap()), [10, 7]);
        // float16 1, 5, 2 -> [1, 3]; bfloat16 likewise.
        let h = |c: u16| f16t(c);
        assert_eq!(codes(&range(&h(0x3C00), &h(0x4500), &h(0x4000), 27, p).unwrap()), [0x3C00, 0x4200]);
        let b = |c: u16| scalar(DType::Bfloat16, c.into());
        assert_eq!(codes(&range(&b(0x3F80), &b(0x40A0), &b(0x4000), 27, p).unwrap()), [0x3F80, 0x4040]);
    }
}

// ---------------------------------------------------------------------------------------------
// §2.3: OpenVINO Range-4

/// A scalar input as (code, dtype).
type Input = (u64, DType);

/// Range-4 with inputs given as (code, dtype).
fn r4(profile: Profile, start: Input, stop: Input, step: Input, out: DType) -> lowbit::Result<Tensor> {
    let t = |(c, d): Input| scalar(d, c);
    range4(&t(start), &t(stop), &t(step), out, &RangeOptions::with_profile(profile))
}
fn f(x: f32) -> Input {
    (x.to_bits().into(), DType::Float)
}
fn i(x: i32) -> Input {
    (u64::from(x as u32), DType::Int32)
}
fn l(x: i64) -> Input {
    (x as u64, DType::Int64)
}
/// Two's complement codes of `values` in a `bits`-bit integer.
fn ints(values: &[i64], bits: u32) -> Vec<u64> {
    values.iter().map(|&v| v as u64 & if bits == 64 { u64::MAX } else { (1 << bits) - 1 }).collect()
}

#[test]
fn range4_where_core_and_text_agree_2_3() {
    // Each row: the core reference's column, which the text (exact, truncating integral outputs
    // first) also gives.
    let rows: Vec<(Input, Input, Input, DType, Vec<u64>)> = vec![
        (f(1.0), f(2.5), f(0.5), DType::Float, f32_codes(&[1.0, 1.5, 2.0])),
        (f(2.5), f(-1.0), f(-1.0), DType::Int32, ints(&[2, 1, 0], 32)),
        ((2.5f64.to_bits(), DType::Double), i(-1), l(-1), DType::Int32, ints(&[2, 1, 0], 32)),
        (f(0.9), f(10.3), f(1.7), DType::Int32, ints(&(0..10).collect::<Vec<_>>(), 32)),
        (f(1.2), f(11.3), f(1.6), DType::Uint8, (1..=10).collect()),
        (i(-2), i(3), i(1), DType::Uint8, vec![254, 255, 0, 1, 2]),
        (f(-2.7), f(3.9), f(1.5), DType::Uint8, vec![254, 255, 0, 1, 2]),
        (i(-2), i(3), i(1), DType::Uint32, vec![4294967294, 4294967295, 0, 1, 2]),
        (i(-2), i(3), i(1), DType::Uint64, vec![18446744073709551614, 18446744073709551615, 0, 1, 2]),
        (i(5), i(-3), i(-2), DType::Uint8, vec![5, 3, 1, 255]),
        (i(120), i(130), i(1), DType::Int8, ints(&[120, 121, 122, 123, 124, 125, 126, 127, -128, -127], 8)),
        (i(250), i(260), i(2), DType::Uint8, vec![250, 252, 254, 0, 2]),
        (f(-3.9), f(3.9), f(2.9), DType::Int32, ints(&[-3, -1, 1], 32)),
        (f(5.0), f(1.0), f(1.0), DType::Float, vec![]),
        (f(2048.0), f(2060.0), f(1.0), DType::Float16, {
            let h = [2048.0f32, 2048.0, 2050.0, 2052.0, 2052.0, 2052.0, 2054.0, 2056.0, 2056.0, 2056.0, 2058.0, 2060.0];
            h.iter().map(|&x| u64::from(half::f16::from_f32(x).to_bits())).collect()
        }),
        (f(65504.0), f(65600.0), f(16.0), DType::Float16, vec![0x7BFF, 0x7C00, 0x7C00, 0x7C00, 0x7C00, 0x7C00]),
    ];
    for (k, (s, e, d, out, want)) in rows.into_iter().enumerate() {
        for p in Profile::ALL {
            let got = r4(p, s, e, d, out).unwrap();
            assert_eq!(got.dtype(), out);
            assert_eq!(codes(&got), want, "row {k} {p:?}");
        }
    }
}

#[test]
fn range4_tenths_2_3() {
    let tenths = |p, out| codes(&r4(p, f(0.0), f(1.0), f(0.1), out).unwrap());
    // float32: the core computes start + f32(i) * step in float32, which is the exact value
    // rounded once here.
    assert_eq!(tenths(OV, DType::Float), TENTHS_REFERENCE.map(u64::from));
    assert_eq!(tenths(SPEC, DType::Float), spec_terms(OFormat::F32, &f32v(0.0), &f32v(0.1), 10));
    // float16: computed in float32, then rounded to nearest even.
    let core_f16 = [0x0000, 0x2e66, 0x3266, 0x34cd, 0x3666, 0x3800, 0x38cd, 0x399a, 0x3a66, 0x3b33];
    assert_eq!(tenths(OV, DType::Float16), core_f16);
    assert_eq!(tenths(SPEC, DType::Float16), spec_terms(OFormat::F16, &f32v(0.0), &f32v(0.1), 10));
    // bfloat16: OpenVINO's own float32 -> bfloat16 rounding.
    let core_bf16 = [0x0000, 0x3dcc, 0x3e4c, 0x3e9a, 0x3ecc, 0x3f00, 0x3f1a, 0x3f33, 0x3f4c, 0x3f66];
    assert_eq!(tenths(OV, DType::Bfloat16), core_bf16);
    assert_eq!(tenths(SPEC, DType::Bfloat16), spec_terms(OFormat::BF16, &f32v(0.0), &f32v(0.1), 10));
    // float64: start + i * f64(0.1f), exact here in every profile.
    let first = [0.0, 0.10000000149011612, 0.20000000298023224, 0.30000000447034836].map(f64::to_bits);
    for p in [OV, SPEC] {
        let got = tenths(p, DType::Double);
        assert_eq!(got.len(), 10);
        assert_eq!(got[..4], first);
        assert_eq!(got, spec_terms(OFormat::F64, &f32v(0.0), &f32v(0.1), 10), "{p:?}");
    }
    // float16 inputs: step 0.0999756, 11 elements, the last one 1.0 = stop.
    let h = |c: u64| (c, DType::Float16);
    assert_eq!(codes(&r4(OV, h(0), h(0x3C00), h(0x2E66), DType::Float16).unwrap()), F16_TENTHS_11);
}

#[test]
fn range4_where_core_and_text_differ_2_3() {
    let two53 = 1i64 << 53;
    // Through float64, the core's start is 2^53; the text keeps the exact start and counts the
    // float64 difference (2^53+4) - 2^53 = 4.
    let got = |p| i64s(&r4(p, l(two53 + 1), l(two53 + 5), l(1), DType::Int64).unwrap());
    assert_eq!(got(OV), [two53, two53 + 1, two53 + 2, two53 + 3]);
    assert_eq!(got(SPEC), [two53 + 1, two53 + 2, two53 + 3, two53 + 4]);
    // Both limits round to 2^62 in float64.
    for p in [OV, SPEC] {
        assert!(r4(p, l(1 << 62), l((1 << 62) + 4), l(1), DType::Int64).unwrap().is_empty(), "{p:?}");
    }
    // A step truncated to 0 for an integral output: the core's count is UB, 0 on x86-64; the text
    // calls it undefined, so `spec` refuses.
    assert!(r4(OV, f(0.0), f(5.0), f(0.5), DType::Int32).unwrap().is_empty());
    let err = r4(SPEC, f(0.0), f(5.0), f(0.5), DType::Int32).unwrap_err().to_string();
    assert!(err.contains("truncates to 0"), "{err}");
    // An infinite step: the core rejects it; the text's count is ceil(5 / inf) = 0.
    let err = r4(OV, f(0.0), f(5.0), f(f32::INFINITY), DType::Float).unwrap_err().to_string();
    assert!(err.contains("'step' cannot be zero, nan, or infinite."), "{err}");
    assert!(r4(SPEC, f(0.0), f(5.0), f(f32::INFINITY), DType::Float).unwrap().is_empty());
}

#[test]
fn range4_errors_2_3() {
    for p in [OV, SPEC] {
        for (s, e, d) in [(f(0.0), f(5.0), f(0.0)), (i(0), i(5), i(0))] {
            let out = if s.1 == DType::Int32 { DType::Int32 } else { DType::Float };
            assert!(r4(p, s, e, d, out).is_err(), "{p:?} zero step");
        }
        for (s, e) in [(f(f32::INFINITY), f(1.0)), (f(f32::NAN), f(1.0)), (f(0.0), f(f32::NEG_INFINITY))] {
            let err = r4(p, s, e, f(1.0), DType::Float).unwrap_err().to_string();
            assert!(err.contains("cannot be nan or infinite"), "{p:?}: {err}");
        }
        // Scalars only ([1] is rejected by OpenVINO's shape inference), numeric only.
        let one = Tensor::from_codes(DType::Float, vec![1], &[0]).unwrap();
        let opts = RangeOptions::with_profile(p);
        assert!(range4(&one, &f32t(1.0), &f32t(1.0), DType::Float, &opts).is_err());
        let yes = scalar(DType::Bool, 1);
        assert!(range4(&f32t(0.0), &f32t(1.0), &yes, DType::Float, &opts).is_err());
        assert!(range4(&f32t(0.0), &f32t(1.0), &f32t(1.0), DType::Bool, &opts).is_err());
        assert!(range4(&f32t(0.0), &f32t(1.0), &f32t(1.0), DType::String, &opts).is_err());
    }
}

#[test]
fn range4_terms_beyond_i128_into_integers() {
    // Found by the ops fuzz target (fuzz/fuzz_targets/ops.rs): an integral output_type with terms
    // too large for i128 handed the Cast core an exact integer whose low bits only survive as a
    // sticky bit, and the core's debug assertion that integers never carry one panicked. Such a
    // term is far outside every integer type.
    let (start, stop, step) =
        (f64t(f64::from(9.9086256e17f32)), f64t(3.298194606497775e137), f64t(8.245112292481659e136));
    for p in [SPEC, REF, ORT, OV] {
        for out in [DType::Int16, DType::Int64, DType::Uint64, DType::Int4] {
            let y = range4(&start, &stop, &step, out, &RangeOptions::with_profile(p)).unwrap();
            assert_eq!(y.len(), 5, "{p:?} {out}");
            let first = 9.9086256e17f32 as i64 as u64 & out.code_mask();
            assert_eq!(y.code(0), Some(first), "{p:?} {out}");
        }
    }
}

#[test]
fn range4_narrow_outputs() {
    // Any numeric output type: float8, float4 and int4 included; packed outputs are packed.
    for p in [SPEC, OV] {
        let out = r4(p, f(0.0), f(3.0), f(0.5), DType::Float8E4M3FN).unwrap();
        assert_eq!(codes(&out), [0x00, 0x30, 0x38, 0x3C, 0x40, 0x42], "{p:?}");
        let out = r4(p, f(0.0), f(3.0), f(0.5), DType::Float4E2M1).unwrap();
        // 2.5 is a tie between 2 (0x4) and 3 (0x5): to even.
        assert_eq!(out.raw().unwrap(), [0x10, 0x32, 0x44], "{p:?}");
        let out = r4(p, i(-3), i(4), i(2), DType::Int4).unwrap();
        assert_eq!(out.raw().unwrap(), [0xFD, 0x31], "{p:?}");
    }
}

#[test]
fn type_prop_counts_2_5() {
    // openvino:src/core/tests/type_prop/range.cpp shape cases, for every type they apply to.
    let cases: [(f64, f64, f64, usize, bool); 11] = [
        (0.0, 5.0, 1.0, 5, false),
        (0.0, 22.0, 2.0, 11, false),
        (1.0, 23.0, 2.0, 11, false),
        (1.0, 22.0, 2.0, 11, false),
        (0.0, 0.0, 1.0, 0, false),
        (1.0, 0.0, 2.0, 0, false),
        (2.0, 0.0, -2.0, 1, true),
        (2.0, 0.0, -1.0, 2, true),
        (-19.0, 19.0, 1.0, 38, true),
        (-19.0, 19.0, 3.0, 13, true),
        (20.0, -19.0, 1.0, 0, true),
    ];
    let types = [DType::Int8, DType::Int16, DType::Int32, DType::Int64, DType::Uint8, DType::Uint32, DType::Float];
    for p in [OV, SPEC] {
        for t in types {
            for (s, e, d, n, negative) in cases {
                if negative && matches!(t, DType::Uint8 | DType::Uint32) {
                    continue;
                }
                let as_t = |x: f64| {
                    let code = match t {
                        DType::Float => u64::from((x as f32).to_bits()),
                        _ => x as i64 as u64 & t.code_mask(),
                    };
                    scalar(t, code)
                };
                let opts = RangeOptions::with_profile(p);
                let v1 = range1(&as_t(s), &as_t(e), &as_t(d), &opts).unwrap();
                let v4 = openvino_range(4, &as_t(s), &as_t(e), &as_t(d), Some(t), &opts).unwrap();
                assert_eq!((v1.len(), v4.len()), (n, n), "{p:?} {t} ({s}, {e}, {d})");
            }
        }
        for (s, e, d, n) in [(0.0f32, 1.0, 0.25, 4), (-1.0, 1.0, 0.25, 8), (-1.0, 0.875, 0.25, 8)] {
            assert_eq!(r4(p, f(s), f(e), f(d), DType::Float).unwrap().len(), n);
        }
        // range_v4_trunc_inputs_shape_inference: f32 (0.9, 10.3, 1.7) into i32 gives 10.
        assert_eq!(r4(p, f(0.9), f(10.3), f(1.7), DType::Int32).unwrap().len(), 10);
        assert_eq!(r4(p, i(0), i(500), i(5), DType::Int32).unwrap().len(), 100);
    }
}

#[test]
fn range1_2_4() {
    let two53 = 1i64 << 53;
    let opts = |p| RangeOptions::with_profile(p);
    // Range-1 reads the typed values: int64 precision survives in the core reference.
    for p in [OV, SPEC] {
        let out = range1(&i64t(two53 + 1), &i64t(two53 + 5), &i64t(1), &opts(p)).unwrap();
        assert_eq!(i64s(&out), [two53 + 1, two53 + 2, two53 + 3, two53 + 4], "{p:?}");
    }
    // float16 through float32 and back: 11 elements ending in 1.0.
    let out = range1(&f16t(0), &f16t(0x3C00), &f16t(0x2E66), &opts(OV)).unwrap();
    assert_eq!(codes(&out), F16_TENTHS_11);
    // One type for all three; no output_type; versions 1 and 4 only.
    assert!(range1(&i64t(0), &i32t(5), &i64t(1), &opts(OV)).unwrap_err().to_string().contains("do not match"));
    assert!(openvino_range(1, &i64t(0), &i64t(5), &i64t(1), Some(DType::Int64), &opts(OV)).is_err());
    assert!(openvino_range(4, &i64t(0), &i64t(5), &i64t(1), None, &opts(OV)).is_err());
    assert!(openvino_range(3, &i64t(0), &i64t(5), &i64t(1), None, &opts(OV)).is_err());
    let i4 = |x: u64| scalar(DType::Int4, x);
    assert!(range1(&i4(0), &i4(5), &i4(1), &opts(SPEC)).is_err());
    assert!(range1(&f32t(0.0), &f32t(1.0), &f32t(0.0), &opts(SPEC)).is_err());
}

// ---------------------------------------------------------------------------------------------
// The command line

fn lowbit(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_lowbit")).args(args).output().unwrap()
}

#[test]
fn cli_range4() {
    let out =
        lowbit(&["range4", "0:f16", "1:f16", "0.1:f16", "--output-type", "f16", "--profile", "openvino", "--raw"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let want: Vec<u8> = F16_TENTHS_11.iter().flat_map(|&c| (c as u16).to_le_bytes()).collect();
    assert_eq!(out.stdout, want);
    let out = lowbit(&["range4", "2.5:f32", "-1:i64", "-1:i64", "--output-type", "i32"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("3 elements of INT32"), "{text}");
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.len() == 4 && lines[1].contains(" 2 ") && lines[1].ends_with("0x00000002"), "{text}");
    assert!(lines[3].contains(" 0 ") && lines[3].ends_with("0x00000000"), "{text}");
    let out = lowbit(&["range4", "-2.7:f32", "3.9:f32", "1.5:f32", "--output-type", "uint8", "--raw"]);
    assert_eq!(out.stdout, [254, 255, 0, 1, 2]);
    // Bad arguments: one line on standard error, nonzero exit.
    for args in [
        ["range4", "2.5", "1:f32", "1:f32", "--output-type", "f32"],
        ["range4", "0:f32", "1:f32", "0:f32", "--output-type", "f32"],
        ["range4", "0:f32", "1:f99", "1:f32", "--output-type", "f32"],
        ["range4", "0:f32", "1:f32", "1:f32", "--output-type", "string"],
    ] {
        let out = lowbit(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && err.starts_with("lowbit: ") && err.trim_end().lines().count() == 1, "{err}");
    }
}

// ---------------------------------------------------------------------------------------------
// Property: under `spec` the count is the exact formula.

fn count_under_spec(s: &Tensor, l: &Tensor, d: &Tensor, want: &BigInt) {
    let opts = RangeOptions { max_elements: 4096, ..RangeOptions::default() };
    match range_with(s, l, d, 11, &opts) {
        Ok(out) => assert_eq!(BigInt::from(out.len()), *want),
        Err(Error::TooLarge { .. }) => assert!(*want > BigInt::from(4096)),
        Err(e) => panic!("{e}"),
    }
}

proptest! {
    #[test]
    fn integer_count_is_exact(start in any::<i64>(), delta in any::<i64>().prop_filter("nonzero", |d| *d != 0),
                              k in -3i128..300, nudge in -3i128..3) {
        let limit = (i128::from(start) + k * i128::from(delta) + nudge).clamp(i64::MIN.into(), i64::MAX.into()) as i64;
        let want = exact_count(&OValue::from_i128(start.into()), &OValue::from_i128(limit.into()),
                               &OValue::from_i128(delta.into()));
        count_under_spec(&i64t(start), &i64t(limit), &i64t(delta), &want);
    }

    #[test]
    fn float32_count_is_exact(start in any::<f32>().prop_filter("finite", |x| x.is_finite()),
                              delta in any::<f32>().prop_filter("finite, nonzero", |x| x.is_finite() && *x != 0.0),
                              k in -3.0f64..300.0, ulps in -2i32..3) {
        let target = (f64::from(start) + k * f64::from(delta)) as f32;
        let limit = f32::from_bits((target.to_bits() as i32).wrapping_add(ulps) as u32);
        prop_assume!(limit.is_finite());
        let want = exact_count(&f32v(start), &f32v(limit), &f32v(delta));
        count_under_spec(&f32t(start), &f32t(limit), &f32t(delta), &want);
    }

    #[test]
    fn float64_count_is_exact(start in -1e18f64..1e18, delta in prop_oneof![1e-300f64..1e300, -1e300f64..-1e-300],
                              k in 0.0f64..100.0) {
        let limit = start + k * delta;
        prop_assume!(limit.is_finite());
        let v = |x: f64| oracle::value_from_f64_bits(x.to_bits());
        let want = exact_count(&v(start), &v(limit), &v(delta));
        count_under_spec(&f64t(start), &f64t(limit), &f64t(delta), &want);
    }
}
