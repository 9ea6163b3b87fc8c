//! ONNX Gather: the worked examples of docs/research/range_slice_gather.md §4.3 and §4.4 and the
//! backend tests of §5.1 under every profile (the profile table has no Gather field: they do
//! not differ), the errors, and a property: Gather on packed data equals Gather on the unpacked codes,
//! packed again.

use lowbit::ops::gather;
use lowbit::DType;
use lowbit::Error;
use lowbit::Profile;
use lowbit::Tensor;
use proptest::prelude::*;

fn floats(shape: &[usize], values: &[f32]) -> Tensor {
    Tensor::from_f32(values).reshape(shape.to_vec()).unwrap()
}
/// The spec's 3x2 data [[1.0, 1.2], [2.3, 3.4], [4.5, 5.7]].
fn d32() -> Tensor {
    floats(&[3, 2], &[1.0, 1.2, 2.3, 3.4, 4.5, 5.7])
}
fn arange(n: usize) -> Tensor {
    floats(&[n], &(0..n).map(|x| x as f32).collect::<Vec<_>>())
}
fn idx(shape: &[usize], values: &[i64]) -> Tensor {
    Tensor::from_codes(DType::Int64, shape.to_vec(), &values.iter().map(|&v| v as u64).collect::<Vec<_>>()).unwrap()
}
fn got(t: &Tensor) -> (Vec<usize>, Vec<f32>) {
    (t.shape().to_vec(), t.to_f32_vec().unwrap())
}
fn want(shape: &[usize], values: &[f32]) -> (Vec<usize>, Vec<f32>) {
    (shape.to_vec(), values.to_vec())
}

/// Gather-13 in every profile, which must all agree.
fn g(data: &Tensor, indices: &Tensor, axis: i64) -> lowbit::Result<Tensor> {
    let results: Vec<lowbit::Result<Tensor>> =
        Profile::ALL.iter().map(|&p| gather(data, indices, axis, 13, p)).collect();
    for r in &results[1..] {
        assert_eq!(r, &results[0]);
    }
    results.into_iter().next().unwrap()
}

#[test]
fn worked_examples_4_3() {
    let out = g(&d32(), &idx(&[2, 2], &[0, 1, 1, 2]), 0).unwrap();
    assert_eq!(got(&out), want(&[2, 2, 2], &[1.0, 1.2, 2.3, 3.4, 2.3, 3.4, 4.5, 5.7]));
    let m33 = floats(&[3, 3], &[1.0, 1.2, 1.9, 2.3, 3.4, 3.9, 4.5, 5.7, 5.9]);
    let out = g(&m33, &idx(&[1, 2], &[0, 2]), 1).unwrap();
    assert_eq!(got(&out), want(&[3, 1, 2], &[1.0, 1.9, 2.3, 3.9, 4.5, 5.9]));
    assert_eq!(got(&g(&arange(5), &idx(&[3], &[-1, -5, 0]), 0).unwrap()), want(&[3], &[4.0, 0.0, 0.0]));
    for opset in [1, 11, 13] {
        for p in Profile::ALL {
            let out = gather(&arange(5), &idx(&[1], &[-1]), 0, opset, p).unwrap();
            assert_eq!(got(&out), want(&[1], &[4.0]), "opset {opset} {p:?}");
        }
    }
    // Scalar indices remove the axis.
    assert_eq!(got(&g(&d32(), &idx(&[], &[1]), 0).unwrap()), want(&[2], &[2.3, 3.4]));
    assert_eq!(got(&g(&d32(), &idx(&[], &[-1]), 1).unwrap()), want(&[3], &[1.2, 3.4, 5.7]));
    assert_eq!(got(&g(&arange(5), &idx(&[], &[2]), 0).unwrap()), want(&[], &[2.0]));
    // Empty indices, empty data.
    assert_eq!(got(&g(&d32(), &idx(&[0], &[]), 0).unwrap()), want(&[0, 2], &[]));
    assert_eq!(got(&g(&d32(), &idx(&[2, 0], &[]), 1).unwrap()), want(&[3, 2, 0], &[]));
    assert_eq!(g(&d32(), &idx(&[1, 2], &[0, 1]), -1).unwrap().shape(), [3, 1, 2]);
    assert_eq!(got(&g(&floats(&[0, 3], &[]), &idx(&[2], &[1, 2]), 1).unwrap()), want(&[0, 2], &[]));
    assert_eq!(got(&g(&floats(&[3, 0], &[]), &idx(&[0], &[]), 1).unwrap()), want(&[3, 0], &[]));
    // int32 indices.
    let i32_idx = Tensor::from_codes(DType::Int32, vec![3], &[2, 0, 2]).unwrap();
    assert_eq!(got(&g(&d32(), &i32_idx, 0).unwrap()), want(&[3, 2], &[4.5, 5.7, 1.0, 1.2, 4.5, 5.7]));
    // bool and strings.
    let bools = Tensor::from_codes(DType::Bool, vec![3], &[1, 0, 1]).unwrap();
    assert_eq!(g(&bools, &idx(&[2], &[2, 1]), 0).unwrap().codes().unwrap(), [1, 0]);
    let words = Tensor::from_strings(vec![3], vec!["x".into(), "yy".into(), "zzz".into()]).unwrap();
    assert_eq!(g(&words, &idx(&[2], &[2, 1]), 0).unwrap().strings().unwrap(), ["zzz", "yy"]);
}

#[test]
fn errors_4_3() {
    for (v, low, high) in [(5, -5, 4), (-6, -5, 4), (i64::MIN, -5, 4), (1 << 31, -5, 4)] {
        let err = g(&arange(5), &idx(&[1], &[v]), 0).unwrap_err();
        assert!(
            matches!(err, Error::OutOfRange { value, low: l, high: h, .. } if value == i128::from(v) && l == low && h == high),
            "{err}"
        );
    }
    // Checked even when nothing would be read: (0, 3) data, index 5 on axis 1.
    let err = g(&floats(&[0, 3], &[]), &idx(&[1], &[5]), 1).unwrap_err();
    assert!(matches!(err, Error::OutOfRange { value: 5, low: -3, high: 2, .. }), "{err}");
    // An empty axis accepts no index: the range is [0, -1].
    let err = g(&floats(&[3, 0], &[]), &idx(&[1], &[0]), 1).unwrap_err().to_string();
    assert!(err.contains("[0, -1]"), "{err}");
    // The position of the bad index is named.
    let err = g(&d32(), &idx(&[2, 2], &[0, 1, 1, 3]), 0).unwrap_err().to_string();
    assert!(err.contains("element 3") && err.contains("[1, 1]"), "{err}");
    for axis in [2, -3] {
        let err = g(&d32(), &idx(&[1], &[0]), axis).unwrap_err();
        assert!(matches!(err, Error::OutOfRange { low: -2, high: 1, .. }), "{err}");
    }
    let scalar = floats(&[], &[3.0]);
    assert!(g(&scalar, &idx(&[1], &[0]), 0).unwrap_err().to_string().contains("rank >= 1"));
    assert!(g(&scalar, &idx(&[], &[0]), 0).is_err());
    let float_idx = Tensor::from_f32(&[0.0]);
    assert!(g(&d32(), &float_idx, 0).unwrap_err().to_string().contains("integer"));
    assert!(gather(&d32(), &idx(&[1], &[0]), 0, 0, Profile::Spec).is_err());
    assert!(gather(&d32(), &idx(&[1], &[0]), 0, 29, Profile::Spec).is_err());
}

#[test]
fn packed_4_4() {
    // int4 [1, -2, 3, -4, 5] (raw e1 c3 05) with indices [4, 0, -1] gives [5, 1, 5]: 15 05.
    let int4 = Tensor::from_raw(DType::Int4, vec![5], vec![0xE1, 0xC3, 0x05]).unwrap();
    let out = g(&int4, &idx(&[3], &[4, 0, -1]), 0).unwrap();
    assert_eq!(out.raw().unwrap(), [0x15, 0x05]);
    // Rows of 3 nibbles start at odd offsets: rows 1 and 0 of a 2x3 uint4 [[1,2,3],[4,5,6]].
    let u4 = Tensor::from_codes(DType::Uint4, vec![2, 3], &[1, 2, 3, 4, 5, 6]).unwrap();
    assert_eq!(g(&u4, &idx(&[2], &[1, 0]), 0).unwrap().raw().unwrap(), [0x54, 0x16, 0x32]);
    // float6 columns, and complex128 as 16 raw bytes.
    let f6 = Tensor::from_codes(DType::Float6E2M3, vec![2, 3], &[0x01, 0x3F, 0x20, 0x11, 0x2A, 0x05]).unwrap();
    assert_eq!(g(&f6, &idx(&[2], &[2, 0]), 1).unwrap().codes().unwrap(), [0x20, 0x01, 0x05, 0x11]);
    let raw: Vec<u8> = (0..48).collect();
    let c128 = Tensor::from_raw(DType::Complex128, vec![3], raw.clone()).unwrap();
    let out = g(&c128, &idx(&[2], &[2, 0]), 0).unwrap();
    assert_eq!(out.raw().unwrap(), [&raw[32..48], &raw[0..16]].concat());
}

#[test]
fn backend_tests_5_1() {
    // test_gather_negative_indices: arange(10) with [0, -9, -10] gives [0, 1, 0].
    assert_eq!(got(&g(&arange(10), &idx(&[3], &[0, -9, -10]), 0).unwrap()), want(&[3], &[0.0, 1.0, 0.0]));
    // test_gather_0 and test_gather_1 shapes on (5, 4, 3, 2) data, against np.take written out.
    let data = floats(&[5, 4, 3, 2], &(0..120).map(|x| x as f32 * 0.5).collect::<Vec<_>>());
    let values = data.to_f32_vec().unwrap();
    let rows = [0usize, 1, 3];
    let out = g(&data, &idx(&[3], &[0, 1, 3]), 0).unwrap();
    let expected: Vec<f32> = rows.iter().flat_map(|&r| values[r * 24..(r + 1) * 24].to_vec()).collect();
    assert_eq!(got(&out), want(&[3, 4, 3, 2], &expected));
    let out = g(&data, &idx(&[3], &[0, 1, 3]), 1).unwrap();
    let mut expected = Vec::new();
    for a in 0..5 {
        for &r in &rows {
            expected.extend_from_slice(&values[a * 24 + r * 6..a * 24 + r * 6 + 6]);
        }
    }
    assert_eq!(got(&out), want(&[5, 3, 3, 2], &expected));
}

proptest! {
    #[test]
    fn packed_equals_unpacked_then_packed(
        shape in prop::collection::vec(1usize..6, 1..4),
        dtype in prop::sample::select(vec![DType::Int4, DType::Uint4, DType::Float4E2M1, DType::Int2,
                                           DType::Uint2, DType::Float6E2M3, DType::Float6E3M2]),
        axis_pick in any::<usize>(),
        picks in prop::collection::vec(any::<u32>(), 0..7),
        negative in any::<bool>(),
        seed in any::<u64>(),
    ) {
        let axis = axis_pick % shape.len();
        let s = shape[axis] as i64;
        let indices: Vec<i64> = picks.iter().map(|&r| {
            let v = i64::from(r) % s;
            if negative && r % 2 == 1 { v - s } else { v }
        }).collect();
        let n: usize = shape.iter().product();
        let codes: Vec<u64> = (0..n as u64).map(|i| (i.wrapping_mul(seed | 1) >> 7) & dtype.code_mask()).collect();
        let packed = Tensor::from_codes(dtype, shape.clone(), &codes).unwrap();
        let unpacked = Tensor::from_codes(DType::Uint8, shape.clone(), &codes).unwrap();
        let index_tensor = idx(&[indices.len()], &indices);
        let from_packed = gather(&packed, &index_tensor, axis as i64, 13, Profile::Spec).unwrap();
        let from_unpacked = gather(&unpacked, &index_tensor, axis as i64, 13, Profile::Spec).unwrap();
        let repacked = Tensor::from_codes(dtype, from_unpacked.shape().to_vec(), &from_unpacked.codes().unwrap()).unwrap();
        prop_assert_eq!(from_packed, repacked);
    }
}
