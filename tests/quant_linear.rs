//! The quant module's library API: hand-computed values (the arithmetic is in the comments), the
//! profile rows on the inputs that separate the peers (observed values named), the version tables,
//! and bad input (a typed error naming the input and the version, never a panic).

use lowbit::quant::{
    dequantize_linear, dynamic_quantize_linear, quantize_linear, DequantizeAttributes, QuantizeAttributes,
};
use lowbit::Profile;
use lowbit::{DType, Tensor};

fn f32s(v: &[f32]) -> Tensor {
    Tensor::from_f32(v)
}

fn scalar(dtype: DType, code: u64) -> Tensor {
    Tensor::from_codes(dtype, vec![], &[code]).unwrap()
}

fn scale(v: f32) -> Tensor {
    f32s(&[v]).reshape(vec![]).unwrap()
}

fn q(x: &Tensor, s: &Tensor, z: Option<&Tensor>, attrs: &QuantizeAttributes, opset: i64, p: Profile) -> Tensor {
    quantize_linear(x, s, z, attrs, opset, p).unwrap()
}

fn error(result: lowbit::Result<Tensor>) -> String {
    result.unwrap_err().to_string()
}

#[test]
fn int8_rounds_half_to_even_then_adds_the_zero_point_then_saturates() {
    // x / 0.5 = [0, 0.5, 1.5, 2.5, -2.5, 5, 2000, -2000]; nearest-even: [0, 0, 2, 2, -2, 5, 2000,
    // -2000]; + 1: [1, 1, 3, 3, -1, 6, 2001, -1999]; saturated to [-128, 127].
    let x = f32s(&[0.0, 0.25, 0.75, 1.25, -1.25, 2.5, 1000.0, -1000.0]);
    let zp = scalar(DType::Int8, 1);
    for p in Profile::ALL {
        let y = q(&x, &scale(0.5), Some(&zp), &QuantizeAttributes::default(), 21, p);
        assert_eq!(y.dtype(), DType::Int8);
        let codes: Vec<i8> = y.codes().unwrap().iter().map(|&c| c as u8 as i8).collect();
        assert_eq!(codes, [1, 1, 3, 3, -1, 6, 127, -128], "{p:?}");
    }
    // No zero point: uint8, zero 0; -1.25 / 0.5 = -2.5 -> -2 -> 0.
    let y = q(&x, &scale(0.5), None, &QuantizeAttributes::default(), 10, Profile::Spec);
    assert_eq!(y.dtype(), DType::Uint8);
    assert_eq!(y.codes().unwrap(), [0, 0, 2, 2, 0, 5, 255, 0]);
}

#[test]
fn per_axis_and_blocked_scales() {
    // x [2, 3], axis 0, scales [1, 10]: row 0 / 1, row 1 / 10.
    let x = f32s(&[1.0, 2.0, 3.0, 10.0, 20.0, 35.0]).reshape(vec![2, 3]).unwrap();
    let s = f32s(&[1.0, 10.0]);
    let attrs = QuantizeAttributes { axis: Some(0), ..Default::default() };
    let y = q(&x, &s, Some(&Tensor::from_codes(DType::Uint8, vec![2], &[0, 100]).unwrap()), &attrs, 13, Profile::Spec);
    // 35 / 10 = 3.5 -> 4 (even); + 100.
    assert_eq!(y.codes().unwrap(), [1, 2, 3, 101, 102, 104]);
    // Blocked: x [1, 5], axis 1, block 2: scales [1, 3] over columns {0,1}, {2,3}, {4} (3 blocks,
    // the last one short): [1/1, 2/1, 3/2, 10/2, 20/4] = [1, 2, 1.5, 5, 5] -> [1, 2, 2, 5, 5].
    let x = f32s(&[1.0, 2.0, 3.0, 10.0, 20.0]).reshape(vec![1, 5]).unwrap();
    let s = f32s(&[1.0, 2.0, 4.0]).reshape(vec![1, 3]).unwrap();
    let attrs = QuantizeAttributes { axis: Some(1), block_size: Some(2), output_dtype: Some(3), ..Default::default() };
    let y = q(&x, &s, None, &attrs, 21, Profile::Spec);
    assert_eq!(y.dtype(), DType::Int8);
    assert_eq!(y.codes().unwrap(), [1, 2, 2, 5, 5]);
}

#[test]
fn float8_saturates_or_not_and_sub_byte_outputs_pack() {
    // 1.0 is E4M3FN 0x38; 500 rounds past 448: 0x7E saturating, NaN 0x7F without.
    let x = f32s(&[1.0, 500.0, -500.0]);
    let zp = scalar(DType::Float8E4M3FN, 0);
    let y = q(&x, &scale(1.0), Some(&zp), &QuantizeAttributes::default(), 19, Profile::Spec);
    assert_eq!(y.raw().unwrap(), [0x38, 0x7E, 0xFE]);
    let attrs = QuantizeAttributes { saturate: Some(0), ..Default::default() };
    let y = q(&x, &scale(1.0), Some(&zp), &attrs, 19, Profile::Spec);
    assert_eq!(y.raw().unwrap(), [0x38, 0x7F, 0xFF]);
    // int4 [1, -2, 3] -> nibbles 1, 0xE, 3 -> raw e1 03 (element 0 in the low nibble).
    let y =
        q(&f32s(&[1.0, -2.0, 3.0]), &scale(1.0), Some(&scalar(DType::Int4, 0)), &Default::default(), 21, Profile::Spec);
    assert_eq!(y.raw().unwrap(), [0xE1, 0x03]);
    // float4e2m1 [0.5, 1, -6] -> 1, 2, 0xF -> raw 21 0f; x / 2 with x = [1, 2, -12].
    let zp4 = scalar(DType::Float4E2M1, 0);
    let y = q(&f32s(&[1.0, 2.0, -12.0]), &scale(2.0), Some(&zp4), &Default::default(), 23, Profile::Spec);
    assert_eq!(y.raw().unwrap(), [0x21, 0x0F]);
}

#[test]
fn specials_into_integers_follow_the_profile() {
    // int8, zero point -5, x / 1 = [Inf, -Inf, NaN, 3e9]. Observed (scripts/crosscheck_quant.py):
    // the onnx reference [127, 127, 127, 127] (INT32_MIN - 5 wraps), onnxruntime [127, -128, -128,
    // 127] (saturation by sign, NaN to the minimum), which `spec` shares.
    let x = f32s(&[f32::INFINITY, f32::NEG_INFINITY, f32::NAN, 3e9]);
    let zp = scalar(DType::Int8, (-5i8) as u8 as u64);
    let codes = |p| -> Vec<i8> {
        q(&x, &scale(1.0), Some(&zp), &Default::default(), 21, p)
            .codes()
            .unwrap()
            .iter()
            .map(|&c| c as u8 as i8)
            .collect()
    };
    assert_eq!(codes(Profile::OnnxReference), [127, 127, 127, 127]);
    assert_eq!(codes(Profile::OnnxRuntime), [127, -128, -128, 127]);
    assert_eq!(codes(Profile::Spec), [127, -128, -128, 127]);
    // A zero point of 5: INT32_MIN + 5 clips to -128 in the reference for all four.
    let zp = scalar(DType::Int8, 5);
    let y = q(&x, &scale(1.0), Some(&zp), &Default::default(), 21, Profile::OnnxReference);
    assert_eq!(y.codes().unwrap(), [0x80; 4]);
}

/// onnxruntime's paths for NaN, ±Inf and quotients beyond int32 (the `quantize.specials` row's
/// paths; observed with `scripts/crosscheck_quant.py --specials-paths`, onnxruntime 1.31.1): some
/// saturate by sign, others take a float -> int32 step that gives INT32_MIN (the x86 integer
/// indefinite) before the zero point is added and the sum clamped.
#[test]
fn onnxruntime_specials_depend_on_the_path() {
    let ort = Profile::OnnxRuntime;
    let signed = |t: Tensor| -> Vec<i8> { t.codes().unwrap().iter().map(|&c| c as u8 as i8).collect() };
    let specials = [f32::INFINITY, f32::NEG_INFINITY, f32::NAN, 3e9];
    // FLOAT16 input into INT8, zero point -5: INT32_MIN - 5 wraps to INT32_MAX - 4, clamped to 127
    // for all four (3e9 is Inf in float16). The same values in FLOAT saturate by sign.
    let x16 = Tensor::from_codes(DType::Float16, vec![4], &[0x7C00, 0xFC00, 0x7E00, 0x7C00]).unwrap();
    let s16 = Tensor::from_codes(DType::Float16, vec![], &[0x3C00]).unwrap();
    let zp = scalar(DType::Int8, (-5i8) as u8 as u64);
    assert_eq!(signed(q(&x16, &s16, Some(&zp), &Default::default(), 21, ort)), [127; 4]);
    assert_eq!(
        signed(q(&f32s(&specials), &scale(1.0), Some(&zp), &Default::default(), 21, ort)),
        [127, -128, -128, 127]
    );
    // FLOAT into INT2, zero point 0: INT32_MIN clamps to -2 (code 0b10) for all four; `spec`
    // saturates: [1, -2, -2, 1] = codes [01, 10, 10, 01], four to a byte from bit 0.
    let zp2 = scalar(DType::Int2, 0);
    let int2 = |p| q(&f32s(&specials), &scale(1.0), Some(&zp2), &Default::default(), 25, p).raw().unwrap().to_vec();
    assert_eq!(int2(ort), [0b10_10_10_10]);
    assert_eq!(int2(Profile::Spec), [0b01_10_10_01]);
    // FLOAT into INT8 blocked along axis 0 of [2, 2] (block 2, one element after the axis): wraps,
    // INT32_MIN clamps to -128 for +Inf too. Along axis 1 of [1, 4] (nothing after it): saturates.
    let zp8 =
        |shape: Vec<usize>| Tensor::from_codes(DType::Int8, shape.clone(), &vec![0; shape.iter().product()]).unwrap();
    let before_inner = QuantizeAttributes { axis: Some(0), block_size: Some(2), ..Default::default() };
    let x = f32s(&specials).reshape(vec![2, 2]).unwrap();
    let s = f32s(&[1.0, 1.0]).reshape(vec![1, 2]).unwrap();
    assert_eq!(signed(q(&x, &s, Some(&zp8(vec![1, 2])), &before_inner, 21, ort)), [-128; 4]);
    let last = QuantizeAttributes { axis: Some(1), block_size: Some(2), ..Default::default() };
    let x = f32s(&specials).reshape(vec![1, 4]).unwrap();
    let s = f32s(&[1.0, 1.0]).reshape(vec![1, 2]).unwrap();
    assert_eq!(signed(q(&x, &s, Some(&zp8(vec![1, 2])), &last, 21, ort)), [127, -128, -128, 127]);
    // FLOAT into INT4 per tensor, three +Inf: the first byte holds two elements of one scale
    // (saturate: 7, 7 = 0x77); the third element is alone in its byte (wraps: -8 = nibble 8).
    let zp4 = scalar(DType::Int4, 0);
    let inf3 = f32s(&[f32::INFINITY; 3]);
    assert_eq!(q(&inf3, &scale(1.0), Some(&zp4), &Default::default(), 21, ort).raw().unwrap(), [0x77, 0x08]);
    assert_eq!(q(&inf3, &scale(1.0), Some(&zp4), &Default::default(), 21, Profile::Spec).raw().unwrap(), [0x77, 0x07]);
    // Per axis 0 of [3, 1]: each element has its own scale, so no byte pairs one scale: all wrap.
    let per_axis = QuantizeAttributes { axis: Some(0), ..Default::default() };
    let x = inf3.reshape(vec![3, 1]).unwrap();
    let zps = Tensor::from_codes(DType::Int4, vec![3], &[0, 0, 0]).unwrap();
    assert_eq!(q(&x, &f32s(&[1.0, 1.0, 1.0]), Some(&zps), &per_axis, 21, ort).raw().unwrap(), [0x88, 0x08]);
}

#[test]
fn float16_division_precision_is_a_profile_row() {
    // 2.0 / 0.8: in float16 0.8 is 0.7998046875 (0x3A66) and 2 / 0.7998046875 = 2.50061..., whose
    // nearest float16 is 2.5 (0x4100; the float16 spacing at 2.5 is 2^-9 = 0.00195 and 2.50061 is
    // within half of it): nearest-even of 2.5 is 2. In float32 the quotient stays 2.50061 -> 3.
    let x = Tensor::from_codes(DType::Float16, vec![1], &[0x4000]).unwrap();
    let s = Tensor::from_codes(DType::Float16, vec![], &[0x3A66]).unwrap();
    let zp = scalar(DType::Uint8, 0);
    let y = |p| q(&x, &s, Some(&zp), &Default::default(), 21, p).codes().unwrap()[0];
    assert_eq!(y(Profile::Spec), 2);
    assert_eq!(y(Profile::OnnxReference), 2);
    assert_eq!(y(Profile::OnnxRuntime), 3);
}

#[test]
fn dequantize_subtracts_then_multiplies() {
    // (x - (-1)) * 0.5 for x = [-128, 0, 127]: [-63.5, 0.5, 64].
    let x = Tensor::from_codes(DType::Int8, vec![3], &[0x80, 0, 0x7F]).unwrap();
    let zp = scalar(DType::Int8, 0xFF);
    for p in Profile::ALL {
        let y = dequantize_linear(&x, &scale(0.5), Some(&zp), &DequantizeAttributes::default(), 21, p).unwrap();
        assert_eq!(y.to_f32_vec().unwrap(), [-63.5, 0.5, 64.0]);
    }
    // int32 2^31 - 1 with scale 1: exactly 2147483647 rounds once to float32 2^31; the same.
    let big = Tensor::from_codes(DType::Int32, vec![1], &[0x7FFF_FFFF]).unwrap();
    let y = dequantize_linear(&big, &scale(1.0), None, &Default::default(), 13, Profile::Spec).unwrap();
    assert_eq!(y.to_f32_vec().unwrap(), [2147483648.0]);
    // output_dtype float16 from a float32 scale: 3 * 0.1f32 = 3 * 0.100000001490116... =
    // 0.300000004470348...; float16 steps by 2^-12 in [0.25, 0.5): 0.3000000045 / 2^-12 =
    // 1228.80001..., up to 1229, so 0.300048828125 = 0x3400 + (1229 - 1024) = 0x34CD.
    let x = Tensor::from_codes(DType::Uint8, vec![1], &[3]).unwrap();
    let attrs = DequantizeAttributes { output_dtype: Some(10), ..Default::default() };
    let y = dequantize_linear(&x, &scale(0.1), None, &attrs, 23, Profile::Spec).unwrap();
    assert_eq!((y.dtype(), y.codes().unwrap()), (DType::Float16, vec![0x34CD]));
}

#[test]
fn dynamic_quantize_linear_by_hand() {
    // x = [0, 2, -1]: range [-1, 2], scale 3/255; zero point 0 - (-1) / (3/255) = 85;
    // y = [0 + 85, 170 + 85, -85 + 85] = [85, 255, 0].
    for p in Profile::ALL {
        let (y, s, z) = dynamic_quantize_linear(&f32s(&[0.0, 2.0, -1.0]), 11, p).unwrap();
        assert_eq!(y.codes().unwrap(), [85, 255, 0]);
        assert_eq!(s.to_f32_vec().unwrap(), [3.0f32 / 255.0]);
        assert_eq!(z.codes().unwrap(), [85]);
    }
    // A NaN: the reference's scale is NaN, its zero point 255 and every y 0; onnxruntime skips it
    // ([1, NaN, 3, -2] -> [153, 0, 255, 0], zero point 102, observed).
    let x = f32s(&[1.0, f32::NAN, 3.0, -2.0]);
    let (y, s, z) = dynamic_quantize_linear(&x, 11, Profile::OnnxReference).unwrap();
    assert!(s.to_f32_vec().unwrap()[0].is_nan());
    assert_eq!((y.codes().unwrap(), z.codes().unwrap()), (vec![0, 0, 0, 0], vec![255]));
    let (y, _, z) = dynamic_quantize_linear(&x, 11, Profile::OnnxRuntime).unwrap();
    assert_eq!((y.codes().unwrap(), z.codes().unwrap()), (vec![153, 0, 255, 0], vec![102]));
    // All zeros: 1/255 (reference) or 1 (onnxruntime).
    let (_, s, _) = dynamic_quantize_linear(&f32s(&[0.0, 0.0]), 11, Profile::OnnxReference).unwrap();
    assert_eq!(s.to_f32_vec().unwrap(), [1.0f32 / 255.0]);
    let (_, s, _) = dynamic_quantize_linear(&f32s(&[0.0, 0.0]), 11, Profile::OnnxRuntime).unwrap();
    assert_eq!(s.to_f32_vec().unwrap(), [1.0]);
}

#[test]
fn versions_gate_types_and_attributes() {
    let x = f32s(&[1.0]);
    let s = scale(1.0);
    let run =
        |z: &Tensor, attrs: &QuantizeAttributes, opset| quantize_linear(&x, &s, Some(z), attrs, opset, Profile::Spec);
    let none = QuantizeAttributes::default();
    assert!(error(run(&scalar(DType::Int4, 0), &none, 20)).contains("QuantizeLinear-19"));
    assert!(run(&scalar(DType::Int4, 0), &none, 21).is_ok());
    assert!(error(run(&scalar(DType::Float8E4M3FN, 0), &none, 18)).contains("QuantizeLinear-13"));
    assert!(error(run(&scalar(DType::Int2, 0), &none, 24)).contains("INT2"));
    assert!(run(&scalar(DType::Int2, 0), &none, 25).is_ok());
    assert!(error(run(&scalar(DType::Float6E2M3, 0), &none, 25)).contains("FLOAT6E2M3"));
    assert!(run(&scalar(DType::Float6E3M2, 0), &none, 28).is_ok());
    assert!(error(run(&scalar(DType::Int8, 0), &none, 9)).contains("first version is 10"));
    let blocked = QuantizeAttributes { block_size: Some(1), ..Default::default() };
    assert!(
        error(run(&scalar(DType::Int8, 0), &blocked, 19)).contains("QuantizeLinear-19: has no attribute block_size")
    );
    let precision = QuantizeAttributes { precision: Some(10), ..Default::default() };
    assert!(error(run(&scalar(DType::Int8, 0), &precision, 21)).contains("precision"));
    let axis = QuantizeAttributes { axis: Some(0), ..Default::default() };
    assert!(error(run(&scalar(DType::Int8, 0), &axis, 10)).contains("QuantizeLinear-10: has no attribute axis"));
    // float8e8m0 scales from 24.
    let e8m0 = scalar(DType::Float8E8M0, 127);
    assert!(error(quantize_linear(&x, &e8m0, None, &none, 23, Profile::Spec)).contains("y_scale type FLOAT8E8M0"));
    assert_eq!(quantize_linear(&x, &e8m0, None, &none, 24, Profile::Spec).unwrap().codes().unwrap(), [1]);
    // 19 and 21: x and y_scale share T1.
    let half = Tensor::from_codes(DType::Float16, vec![], &[0x3C00]).unwrap();
    assert!(error(quantize_linear(&x, &half, None, &none, 21, Profile::Spec)).contains("must have the type of x"));
    assert!(quantize_linear(&x, &half, None, &none, 23, Profile::Spec).is_ok());
    // Dequantize: float4 from 23, int2 from 25, e8m0 needs output_dtype.
    let f4 = Tensor::from_codes(DType::Float4E2M1, vec![1], &[2]).unwrap();
    let d = |x: &Tensor, s: &Tensor, attrs: &DequantizeAttributes, opset| {
        dequantize_linear(x, s, None, attrs, opset, Profile::Spec)
    };
    assert!(error(d(&f4, &s, &Default::default(), 21)).contains("DequantizeLinear-21"));
    assert_eq!(d(&f4, &s, &Default::default(), 23).unwrap().to_f32_vec().unwrap(), [1.0]);
    let i8x = Tensor::from_codes(DType::Int8, vec![1], &[4]).unwrap();
    assert!(error(d(&i8x, &e8m0, &Default::default(), 24)).contains("FLOAT8E8M0"));
    let out = DequantizeAttributes { output_dtype: Some(1), ..Default::default() };
    assert_eq!(d(&i8x, &e8m0, &out, 24).unwrap().to_f32_vec().unwrap(), [4.0]);
    assert!(error(d(&i8x, &s, &out, 21)).contains("has no attribute output_dtype"));
}

#[test]
fn bad_shapes_and_attributes_are_errors_naming_the_input() {
    let x = f32s(&[1.0; 10]).reshape(vec![2, 5]).unwrap();
    let ones = |shape: Vec<usize>| Tensor::from_f32(&vec![1.0; shape.iter().product()]).reshape(shape).unwrap();
    let zeros =
        |shape: Vec<usize>| Tensor::from_codes(DType::Int8, shape.clone(), &vec![0; shape.iter().product()]).unwrap();
    let attrs =
        |axis: Option<i64>, block: Option<i64>| QuantizeAttributes { axis, block_size: block, ..Default::default() };
    let run =
        |s: &Tensor, z: Option<&Tensor>, a: &QuantizeAttributes| error(quantize_linear(&x, s, z, a, 21, Profile::Spec));
    assert!(run(&ones(vec![5]), None, &attrs(Some(2), None)).contains("axis 2 is out of range for input x of rank 2"));
    assert!(run(&ones(vec![4]), None, &attrs(Some(1), None)).contains("y_scale has 4 elements but axis 1 of x has 5"));
    assert!(run(&ones(vec![5]), Some(&zeros(vec![4])), &attrs(Some(1), None)).contains("y_zero_point has shape [4]"));
    // block 2 along 5 needs 3 blocks; 2 given.
    assert!(run(&ones(vec![2, 2]), None, &attrs(Some(1), Some(2))).contains("needs 3 at axis 1"));
    assert!(run(&ones(vec![2, 3]), None, &attrs(Some(1), Some(-1))).contains("block_size must be positive"));
    assert!(run(&ones(vec![2, 3]), None, &attrs(Some(1), None)).contains("blocked quantization needs block_size"));
    let mismatch = QuantizeAttributes { output_dtype: Some(2), ..Default::default() };
    assert!(run(&scale(1.0), Some(&scalar(DType::Int8, 0)), &mismatch).contains("output_dtype UINT8 differs"));
    let sat = QuantizeAttributes { saturate: Some(2), ..Default::default() };
    assert!(run(&scale(1.0), None, &sat).contains("saturate must be 0 or 1"));
    let absurd = QuantizeAttributes { output_dtype: Some(1 << 40), ..Default::default() };
    assert!(run(&scale(1.0), None, &absurd).contains("output_dtype"));
    // Scale of the wrong type, x of a type no version takes.
    let int64 = Tensor::from_codes(DType::Int64, vec![], &[1]).unwrap();
    assert!(run(&int64, None, &Default::default()).contains("y_scale type INT64 is not allowed"));
    let f64x = Tensor::from_f64(&[1.0]);
    assert!(error(quantize_linear(&f64x, &scale(1.0), None, &Default::default(), 21, Profile::Spec))
        .contains("input x type DOUBLE"));
    // Dequantize: zero point type, float8 zero point not zero.
    let i8x = zeros(vec![3]);
    let u8z = scalar(DType::Uint8, 0);
    let e = error(dequantize_linear(&i8x, &scale(1.0), Some(&u8z), &Default::default(), 21, Profile::Spec));
    assert!(e.contains("DequantizeLinear-21: x_zero_point must have the type of x (INT8), not UINT8"), "{e}");
    let f8 = Tensor::from_codes(DType::Float8E4M3FN, vec![1], &[0x38]).unwrap();
    let f8z = scalar(DType::Float8E4M3FN, 0x38);
    for p in Profile::ALL {
        let e = error(dequantize_linear(&f8, &scale(1.0), Some(&f8z), &Default::default(), 21, p));
        assert!(e.contains("must be zero"), "{e}");
    }
}

#[test]
fn zero_negative_and_nan_scales_compute() {
    // The text asks for no positive scale, and both implementations compute: x / 0 is ±Inf or NaN
    // (then the specials row), x / -1 negates. Observed: onnxruntime int8 [1, -2, 0] / 0 + 1 ->
    // [127, -128, -128]; the reference -> [-128, -128, -128].
    let x = f32s(&[1.0, -2.0, 0.0]);
    let zp = scalar(DType::Int8, 1);
    let codes = |s: f32, p| -> Vec<i8> {
        q(&x, &scale(s), Some(&zp), &Default::default(), 21, p)
            .codes()
            .unwrap()
            .iter()
            .map(|&c| c as u8 as i8)
            .collect()
    };
    assert_eq!(codes(0.0, Profile::OnnxRuntime), [127, -128, -128]);
    assert_eq!(codes(0.0, Profile::OnnxReference), [-128, -128, -128]);
    assert_eq!(codes(-1.0, Profile::Spec), [0, 3, 1]);
    assert_eq!(codes(f32::NAN, Profile::Spec), [-128, -128, -128]);
    // x / Inf = 0 (or -0): the zero point.
    assert_eq!(codes(f32::INFINITY, Profile::Spec), [1, 1, 1]);
}

/// `saturate(round(x / scale) + zero)` into `[qmin, qmax]` from the core: the float32 quotient
/// (FLOAT x and scale divide in float32 under `spec`), the core's nearest-even rounding of its
/// exact value, the zero point added, then the bounds (NaN takes qmin, as `spec`'s row says).
fn quantized_by_the_core(x: f32, scale: f32, zero: i64, qmin: i64, qmax: i64) -> u64 {
    use lowbit::round::{round_to_integer, RoundingMode};
    use lowbit::Value;
    let value = match Value::from_f64(f64::from(x / scale)) {
        Value::Finite(e) => match round_to_integer(e, RoundingMode::NearestEven) {
            Some((negative, magnitude)) => {
                let m = i64::try_from(magnitude).unwrap_or(i64::MAX);
                (if negative { -m } else { m }).saturating_add(zero)
            }
            None if e.negative => i64::MIN,
            None => i64::MAX,
        },
        Value::Infinite { negative: true } => i64::MIN,
        Value::Infinite { negative: false } => i64::MAX,
        Value::Nan { .. } => i64::MIN,
    };
    (value.clamp(qmin, qmax) as u64) & 0xFF
}

/// Every top-16-bit float32 pattern with the low halves that decide ties (zero, one, half, all
/// ones): zeros, subnormals, normals, infinities and NaNs of both signs, as [256, 1024].
fn every_float32_pattern_class() -> (Vec<f32>, Tensor) {
    let xs: Vec<f32> = (0..=0xFFFFu32)
        .flat_map(|high| [0u32, 1, 0x8000, 0xFFFF].map(|low| f32::from_bits(high << 16 | low)))
        .collect();
    let tensor = Tensor::from_f32(&xs).reshape(vec![256, 1024]).unwrap();
    (xs, tensor)
}

/// Scales that make exact ties, huge and tiny quotients, zero, negative and non-finite scales.
const PATTERN_SCALES: [f32; 12] = [1.0, 0.5, 2.0, 3.0, 0.1, 1e-3, -2.0, 1e30, 1e-30, 0.0, f32::INFINITY, f32::NAN];

/// QuantizeLinear FLOAT -> INT8 and UINT8 with one scale (the quantizing loop's one-byte path and
/// its tail) against the core, on every float32 pattern class; whichever copy of the loop this
/// CPU runs (AVX-512 with the `avx512` feature, AVX2, or portable under `LOWBIT_PORTABLE=1`).
#[test]
fn one_scale_into_bytes_agrees_with_the_core_on_every_pattern_class() {
    let (xs, x) = every_float32_pattern_class();
    // An odd length too, so that the last lanes are not a whole vector.
    let odd = Tensor::from_f32(&xs[..16_411]);
    for (dtype, qmin, qmax, zeros) in
        [(DType::Int8, -128, 127, [0, -128, 127, 1]), (DType::Uint8, 0, 255, [0, 255, 128, 1])]
    {
        for zero in zeros {
            let zp = Tensor::from_codes(dtype, vec![], &[(zero as u64) & 0xFF]).unwrap();
            for s in PATTERN_SCALES {
                for (input, count) in [(&x, xs.len()), (&odd, 16_411)] {
                    let y = q(input, &scale(s), Some(&zp), &QuantizeAttributes::default(), 21, Profile::Spec);
                    let codes = y.codes().unwrap();
                    assert_eq!(codes.len(), count);
                    for (i, (&x, &code)) in xs.iter().zip(&codes).enumerate() {
                        let want = quantized_by_the_core(x, s, zero, qmin, qmax);
                        assert_eq!(code, want, "element {i}: {x:e} / {s:e} + {zero} -> {dtype}");
                    }
                }
            }
        }
    }
}

/// QuantizeLinear FLOAT -> INT8 and UINT8 in blocks of 32 along the last axis (one pass that
/// divides each block by its own scale), against the core on every float32 pattern class, each
/// block's scale taken in turn from the scales above.
#[test]
fn blocks_of_32_into_bytes_agree_with_the_core_on_every_pattern_class() {
    let (xs, x) = every_float32_pattern_class();
    let scales: Vec<f32> = (0..256 * 32).map(|b| PATTERN_SCALES[(b * 7 + b / 32) % PATTERN_SCALES.len()]).collect();
    let scale_tensor = Tensor::from_f32(&scales).reshape(vec![256, 32]).unwrap();
    for (dtype, qmin, qmax) in [(DType::Int8, -128, 127), (DType::Uint8, 0, 255)] {
        let attrs = QuantizeAttributes {
            axis: Some(1),
            block_size: Some(32),
            output_dtype: Some(i64::from(dtype.onnx_number())),
            ..Default::default()
        };
        let y = q(&x, &scale_tensor, None, &attrs, 21, Profile::Spec);
        assert_eq!(y.dtype(), dtype);
        for (i, (&x, &code)) in xs.iter().zip(&y.codes().unwrap()).enumerate() {
            let s = scales[i / 32];
            assert_eq!(code, quantized_by_the_core(x, s, 0, qmin, qmax), "element {i}: {x:e} / {s:e} -> {dtype}");
        }
    }
}

/// The quantizer's blocks-of-32 pass (ONNX `block_size` 32 along the last axis, no zero point):
/// CI runs this file with `LOWBIT_PORTABLE=1` too, so its portable loop is checked as well as the
/// AVX2 one. Expected codes from the formula with the standard library's float32 division and
/// ties-to-even: `clamp(round_ties_even(x / scale), qmin, qmax)`, NaN to qmin, ±Inf and values
/// beyond int32 saturated by sign (the spec and onnxruntime rows).
#[test]
fn blocks_of_32_quantize_like_the_formula() {
    let (rows, blocks) = (3usize, 3usize);
    let scales = [0.5f32, 0.1, 3.0, 0.25, 1.0, 7.0, 0.3, 2.0, 0.05];
    let scale_of = |i: usize| scales[(i / (32 * blocks)) * blocks + (i % (32 * blocks)) / 32];
    let values: Vec<f32> = (0..rows * 32 * blocks)
        .map(|i| match i % 32 {
            0 => f32::NAN,
            1 => f32::INFINITY,
            2 => f32::NEG_INFINITY,
            3 => 3e9,
            4 => -3e9,
            // Half-integer quotients (ties) and in-between values, both signs; the last row past
            // the int8 range.
            k => (k as f32 - 18.0) * 0.5 * scale_of(i) * if i >= 64 * blocks { 23.0 } else { 1.0 },
        })
        .collect();
    let x = f32s(&values).reshape(vec![rows, 32 * blocks]).unwrap();
    let s = f32s(&scales).reshape(vec![rows, blocks]).unwrap();
    for (dtype, qmin, qmax) in [(DType::Int8, -128i64, 127i64), (DType::Uint8, 0, 255), (DType::Int4, -8, 7)] {
        let attrs = QuantizeAttributes {
            axis: Some(1),
            block_size: Some(32),
            output_dtype: Some(i64::from(dtype.onnx_number())),
            ..Default::default()
        };
        let expected: Vec<i64> = values
            .iter()
            .enumerate()
            .map(|(i, &v)| {
                let q = v / scale_of(i);
                if q.is_nan() {
                    qmin
                } else {
                    (f64::from(q).round_ties_even() as i64).clamp(qmin, qmax)
                }
            })
            .collect();
        // onnxruntime's INT4 specials are a row of their own; spec's rule is the formula's.
        let profiles: &[Profile] =
            if dtype == DType::Int4 { &[Profile::Spec] } else { &[Profile::Spec, Profile::OnnxRuntime] };
        let bits = dtype.bits().unwrap();
        for &p in profiles {
            let y = q(&x, &s, None, &attrs, 21, p);
            assert_eq!(y.dtype(), dtype);
            let got: Vec<i64> = y
                .codes()
                .unwrap()
                .iter()
                .map(|&c| if qmin < 0 && c >> (bits - 1) & 1 == 1 { c as i64 - (1i64 << bits) } else { c as i64 })
                .collect();
            assert_eq!(got, expected, "{dtype:?} {p:?}");
        }
    }
}
