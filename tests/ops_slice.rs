//! ONNX Slice: the 35 worked examples of docs/research/range_slice_gather.md §3.4 under every profile
//! (the `spec` column is the Slice-13 text and ONNX shape inference, which the research file gives
//! next to the reference's and onnxruntime's), the backend tests of §5.1, packed and other
//! dtypes, the errors, and a property: Slice equals a naive per-element reference written here.

use lowbit::ops::{slice, slice_lists, SliceArgs};
use lowbit::DType;
use lowbit::Error;
use lowbit::Profile;
use lowbit::Tensor;
use proptest::prelude::*;

const SPEC: Profile = Profile::Spec;
const REF: Profile = Profile::OnnxReference;
const ORT: Profile = Profile::OnnxRuntime;
const OV: Profile = Profile::OpenVino;
const MAX: i64 = i64::MAX;
const MIN: i64 = i64::MIN;

fn floats(shape: &[usize], values: &[f32]) -> Tensor {
    Tensor::from_f32(values).reshape(shape.to_vec()).unwrap()
}
fn a10() -> Tensor {
    floats(&[10], &(0..10).map(|x| x as f32).collect::<Vec<_>>())
}
fn x34() -> Tensor {
    floats(&[3, 4], &(0..12).map(|x| x as f32).collect::<Vec<_>>())
}
fn x24() -> Tensor {
    floats(&[2, 4], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0])
}
fn i64s(values: &[i64]) -> Tensor {
    Tensor::from_codes(DType::Int64, vec![values.len()], &values.iter().map(|&v| v as u64).collect::<Vec<_>>()).unwrap()
}
fn i32s(values: &[i32]) -> Tensor {
    let codes: Vec<u64> = values.iter().map(|&v| u64::from(v as u32)).collect();
    Tensor::from_codes(DType::Int32, vec![values.len()], &codes).unwrap()
}

/// Slice-13 with int64 inputs.
fn s13(
    p: Profile,
    data: &Tensor,
    starts: &[i64],
    ends: &[i64],
    axes: Option<&[i64]>,
    steps: Option<&[i64]>,
) -> lowbit::Result<Tensor> {
    let (st, en) = (i64s(starts), i64s(ends));
    let (ax, sp) = (axes.map(i64s), steps.map(i64s));
    let args = SliceArgs::Inputs { starts: &st, ends: &en, axes: ax.as_ref(), steps: sp.as_ref() };
    slice(data, &args, 13, p)
}

/// Slice-1 with attributes.
fn s1(p: Profile, data: &Tensor, starts: &[i64], ends: &[i64], axes: Option<&[i64]>) -> lowbit::Result<Tensor> {
    slice(data, &SliceArgs::Attributes { starts, ends, axes }, 1, p)
}

/// The output's shape and float values.
fn got(t: &Tensor) -> (Vec<usize>, Vec<f32>) {
    (t.shape().to_vec(), t.to_f32_vec().unwrap())
}
fn want(shape: &[usize], values: &[f32]) -> (Vec<usize>, Vec<f32>) {
    (shape.to_vec(), values.to_vec())
}

/// One row of §3.4: what `spec`, the reference and onnxruntime return (None: an error).
struct Row {
    n: usize,
    run: fn(Profile) -> lowbit::Result<Tensor>,
    spec: Expected,
    reference: Expected,
    ort: Expected,
}

type Expected = Option<(Vec<usize>, Vec<f32>)>;

fn all(n: usize, run: fn(Profile) -> lowbit::Result<Tensor>, [spec, reference, ort]: [Expected; 3]) -> Row {
    Row { n, run, spec, reference, ort }
}

fn same(x: (Vec<usize>, Vec<f32>)) -> [Expected; 3] {
    [Some(x.clone()), Some(x.clone()), Some(x)]
}

fn rows() -> Vec<Row> {
    let nine_to_zero: Vec<f32> = (0..10).rev().map(|x| x as f32).collect();
    vec![
        all(1, |p| s13(p, &x24(), &[1, 0], &[2, 3], Some(&[0, 1]), Some(&[1, 2])), same(want(&[1, 2], &[5.0, 7.0]))),
        all(2, |p| s13(p, &x24(), &[0, 1], &[-1, 1000], None, None), same(want(&[1, 3], &[2.0, 3.0, 4.0]))),
        all(3, |p| s13(p, &a10(), &[-1], &[MIN], Some(&[0]), Some(&[-1])), same(want(&[10], &nine_to_zero))),
        all(
            4,
            |p| s13(p, &a10(), &[9], &[MAX], Some(&[0]), Some(&[-1])),
            [Some(want(&[0], &[])), Some(want(&[0], &[])), Some(want(&[10], &nine_to_zero))],
        ),
        all(
            5,
            |p| s13(p, &a10(), &[9], &[2147483647], Some(&[0]), Some(&[-1])),
            [Some(want(&[0], &[])), Some(want(&[0], &[])), Some(want(&[10], &nine_to_zero))],
        ),
        all(
            6,
            |p| s13(p, &a10(), &[100], &[-100], Some(&[0]), Some(&[-2])),
            same(want(&[5], &[9.0, 7.0, 5.0, 3.0, 1.0])),
        ),
        all(7, |p| s13(p, &a10(), &[-100], &[3], None, None), same(want(&[3], &[0.0, 1.0, 2.0]))),
        all(8, |p| s13(p, &a10(), &[5], &[2], None, None), same(want(&[0], &[]))),
        all(9, |p| s13(p, &a10(), &[0], &[10], Some(&[0]), Some(&[100])), same(want(&[1], &[0.0]))),
        all(9, |p| s13(p, &a10(), &[0], &[10], Some(&[0]), Some(&[MAX])), same(want(&[1], &[0.0]))),
        all(10, |p| s13(p, &a10(), &[9], &[MIN], Some(&[0]), Some(&[MIN])), same(want(&[1], &[9.0]))),
        all(11, |p| s13(p, &x34(), &[1], &[2], None, None), same(want(&[1, 4], &[4.0, 5.0, 6.0, 7.0]))),
        all(
            12,
            |p| s13(p, &x34(), &[1], &[3], Some(&[-1]), None),
            same(want(&[3, 2], &[1.0, 2.0, 5.0, 6.0, 9.0, 10.0])),
        ),
        all(
            13,
            |p| s13(p, &x34(), &[0, 1], &[3, 2], Some(&[0, 0]), None),
            [None, Some(want(&[1, 4], &[4.0, 5.0, 6.0, 7.0])), None],
        ),
        all(14, |p| s13(p, &x34(), &[0], &[1], Some(&[2]), None), [None, None, None]),
        all(15, |p| s13(p, &a10(), &[0], &[5], Some(&[0]), Some(&[0])), [None, None, None]),
        all(
            16,
            |p| s13(p, &floats(&[], &[3.0]), &[], &[], None, None),
            [Some(want(&[], &[3.0])), Some(want(&[], &[3.0])), None],
        ),
        all(17, |p| s13(p, &floats(&[0], &[]), &[-1], &[MIN], Some(&[0]), Some(&[-1])), same(want(&[0], &[]))),
        all(18, |p| s13(p, &floats(&[0, 3], &[]), &[0, 1], &[5, 2], None, None), same(want(&[0, 1], &[]))),
        all(19, |p| s13(p, &x34(), &[], &[], None, None), same(got(&x34()))),
        all(19, |p| s13(p, &x34(), &[], &[], Some(&[]), None), same(got(&x34()))),
        all(20, |p| s13(p, &a10(), &[1], &[9], Some(&[0]), Some(&[-1])), same(want(&[0], &[]))),
        all(21, |p| s13(p, &a10(), &[-3], &[-8], Some(&[0]), Some(&[-2])), same(want(&[3], &[7.0, 5.0, 3.0]))),
        all(22, |p| s13(p, &a10(), &[8], &[-1], Some(&[0]), Some(&[-1])), same(want(&[0], &[]))),
        all(23, |p| s13(p, &a10(), &[2], &[-11], Some(&[0]), Some(&[-1])), same(want(&[3], &[2.0, 1.0, 0.0]))),
        all(24, |p| s13(p, &a10(), &[2], &[-10], Some(&[0]), Some(&[-1])), same(want(&[2], &[2.0, 1.0]))),
        all(25, |p| s13(p, &a10(), &[MIN], &[MAX], None, None), same(got(&a10()))),
        all(26, |p| s13(p, &a10(), &[0, 0], &[1, 1], None, None), [None, None, None]),
        all(
            27,
            |p| s13(p, &x34(), &[2, 3], &[0, 0], Some(&[0, 1]), Some(&[-1, -2])),
            same(want(&[2, 2], &[11.0, 9.0, 7.0, 5.0])),
        ),
        all(
            28,
            |p| s13(p, &a10(), &[-100], &[MIN], Some(&[0]), Some(&[-1])),
            [Some(want(&[1], &[0.0])), Some(want(&[0], &[])), Some(want(&[1], &[0.0]))],
        ),
        all(29, |p| s13(p, &a10(), &[10], &[5], Some(&[0]), Some(&[-1])), same(want(&[4], &[9.0, 8.0, 7.0, 6.0]))),
        all(30, |p| s13(p, &a10(), &[8], &[2], None, Some(&[-2])), same(want(&[3], &[8.0, 6.0, 4.0]))),
        all(31, |p| s1(p, &x34(), &[2], &[1], None), same(want(&[0, 4], &[]))),
        all(32, |p| s1(p, &x24(), &[1, 0], &[2, 3], Some(&[0, 1])), same(want(&[1, 3], &[5.0, 6.0, 7.0]))),
        all(
            33,
            |p| s1(p, &x34(), &[0, 0], &[1, 1], Some(&[0, 0])),
            [None, Some(want(&[1, 4], &[0.0, 1.0, 2.0, 3.0])), None],
        ),
        all(34, |p| s1(p, &x34(), &[1], &[3], Some(&[-1])), same(want(&[3, 2], &[1.0, 2.0, 5.0, 6.0, 9.0, 10.0]))),
        all(
            35,
            |p| {
                let (st, en, ax, sp) = (i64s(&[9]), i64s(&[MAX]), i64s(&[0]), i64s(&[-1]));
                slice(&a10(), &SliceArgs::Inputs { starts: &st, ends: &en, axes: Some(&ax), steps: Some(&sp) }, 10, p)
            },
            [Some(want(&[0], &[])), Some(want(&[0], &[])), Some(want(&[10], &nine_to_zero))],
        ),
    ]
}

#[test]
fn worked_examples_3_4() {
    for row in rows() {
        // openvino has no Slice of its own: it is `spec`.
        for (p, expected) in [(SPEC, &row.spec), (REF, &row.reference), (ORT, &row.ort), (OV, &row.spec)] {
            let result = (row.run)(p);
            match (expected, result) {
                (Some(e), Ok(t)) => assert_eq!(&got(&t), e, "row {} {p:?}", row.n),
                (None, Err(_)) => {}
                (e, r) => panic!("row {} {p:?}: expected {e:?}, got {r:?}", row.n),
            }
        }
    }
}

#[test]
fn errors_name_the_problem() {
    let msg = |r: lowbit::Result<Tensor>| r.unwrap_err().to_string();
    let err = s13(SPEC, &x34(), &[0, 1], &[3, 2], Some(&[0, 0]), None).unwrap_err().to_string();
    assert!(err.contains("axis 0") && err.contains("more than once"), "{err}");
    let err = s13(SPEC, &x34(), &[0], &[1], Some(&[2]), None).unwrap_err();
    assert!(matches!(err, Error::OutOfRange { value: 2, low: -2, high: 1, .. }), "{err}");
    assert!(err.to_string().contains("axes[0]"), "{err}");
    assert!(msg(s13(SPEC, &a10(), &[0], &[5], None, Some(&[0]))).contains("steps[0] is 0"));
    assert!(msg(s13(ORT, &floats(&[], &[3.0]), &[], &[], None, None)).contains("scalar"));
    let err = msg(s13(SPEC, &floats(&[], &[3.0]), &[0], &[1], None, None));
    assert!(err.contains("outside"), "{err}");
    // starts, ends, axes and steps: same length, 1-D, integers.
    assert!(msg(s13(SPEC, &x34(), &[0, 0], &[1], None, None)).contains("ends has 1"));
    assert!(msg(s13(SPEC, &x34(), &[0], &[1], Some(&[0, 1]), None)).contains("axes has 2"));
    assert!(msg(s13(SPEC, &x34(), &[0], &[1], None, Some(&[1, 1]))).contains("steps has 2"));
    assert!(msg(s1(SPEC, &x34(), &[0], &[1, 2], None)).contains("ends has 2"));
    let scalar_starts = Tensor::from_codes(DType::Int64, vec![], &[0]).unwrap();
    let ends = i64s(&[1]);
    let args = SliceArgs::Inputs { starts: &scalar_starts, ends: &ends, axes: None, steps: None };
    assert!(msg(slice(&a10(), &args, 13, SPEC)).contains("starts must be a 1-D tensor"));
    let float_starts = Tensor::from_f32(&[0.0]);
    let args = SliceArgs::Inputs { starts: &float_starts, ends: &ends, axes: None, steps: None };
    for p in Profile::ALL {
        assert!(msg(slice(&a10(), &args, 13, p)).contains("integer"), "{p:?}");
    }
    // Tind: one integer type for all; the reference indexes with whatever it is given.
    let (st32, en64) = (i32s(&[1]), i64s(&[3]));
    let mixed = SliceArgs::Inputs { starts: &st32, ends: &en64, axes: None, steps: None };
    for p in [SPEC, ORT] {
        assert!(msg(slice(&a10(), &mixed, 13, p)).contains("Tind"), "{p:?}");
    }
    assert_eq!(slice(&a10(), &mixed, 13, REF).unwrap().to_f32_vec().unwrap(), [1.0, 2.0]);
    // Versions: attributes only in Slice-1, inputs only from Slice-10.
    assert!(slice(&a10(), &SliceArgs::Attributes { starts: &[0], ends: &[1], axes: None }, 10, SPEC).is_err());
    let (st, en) = (i64s(&[0]), i64s(&[1]));
    let inputs = SliceArgs::Inputs { starts: &st, ends: &en, axes: None, steps: None };
    assert!(slice(&a10(), &inputs, 9, SPEC).is_err());
    assert!(slice(&a10(), &inputs, 0, SPEC).is_err());
    for opset in [10, 11, 12, 13, 21, 28] {
        assert_eq!(slice(&a10(), &inputs, opset, SPEC).unwrap().to_f32_vec().unwrap(), [0.0]);
    }
}

#[test]
fn int32_inputs_and_versions_10_11() {
    // Row 12 at opset 10 and 11, with int32 tensors (Tind = int32).
    let (st, en, ax) = (i32s(&[1]), i32s(&[3]), i32s(&[-1]));
    for opset in [10, 11] {
        let args = SliceArgs::Inputs { starts: &st, ends: &en, axes: Some(&ax), steps: None };
        let out = slice(&x34(), &args, opset, SPEC).unwrap();
        assert_eq!(got(&out), want(&[3, 2], &[1.0, 2.0, 5.0, 6.0, 9.0, 10.0]));
    }
    // Row 5 with an int32 end of INT32_MAX.
    let (st, en, ax, sp) = (i32s(&[9]), i32s(&[i32::MAX]), i32s(&[0]), i32s(&[-1]));
    let args = SliceArgs::Inputs { starts: &st, ends: &en, axes: Some(&ax), steps: Some(&sp) };
    assert!(slice(&a10(), &args, 13, SPEC).unwrap().is_empty());
    assert_eq!(slice(&a10(), &args, 13, ORT).unwrap().len(), 10);
}

/// x[:, :, :] of a (20, 10, 5) tensor, by a naive triple loop, for the backend tests of §5.1.
fn basic_slicing(x: &Tensor, ranges: [(i64, i64, i64); 3]) -> (Vec<usize>, Vec<f32>) {
    let v = x.to_f32_vec().unwrap();
    let walk = |(s, e, st): (i64, i64, i64)| -> Vec<usize> {
        let mut out = Vec::new();
        let mut i = s;
        while (st > 0 && i < e) || (st < 0 && i > e) {
            out.push(i as usize);
            i += st;
        }
        out
    };
    let (a, b, c) = (walk(ranges[0]), walk(ranges[1]), walk(ranges[2]));
    let mut values = Vec::new();
    for &i in &a {
        for &j in &b {
            for &k in &c {
                values.push(v[i * 50 + j * 5 + k]);
            }
        }
    }
    (vec![a.len(), b.len(), c.len()], values)
}

#[test]
fn backend_tests_5_1() {
    let x = floats(&[20, 10, 5], &(0..1000).map(|i| (i as f32) * 0.25 - 7.0).collect::<Vec<_>>());
    type Case<'a> = (&'a [i64], &'a [i64], Option<&'a [i64]>, Option<&'a [i64]>, [(i64, i64, i64); 3]);
    let cases: [Case; 8] = [
        (&[0, 0], &[3, 10], Some(&[0, 1]), Some(&[1, 1]), [(0, 3, 1), (0, 10, 1), (0, 5, 1)]),
        (&[0], &[-1], Some(&[1]), Some(&[1]), [(0, 20, 1), (0, 9, 1), (0, 5, 1)]),
        (&[1000], &[1000], Some(&[1]), Some(&[1]), [(0, 20, 1), (10, 10, 1), (0, 5, 1)]),
        (&[1], &[1000], Some(&[1]), Some(&[1]), [(0, 20, 1), (1, 10, 1), (0, 5, 1)]),
        (&[0, 0, 3], &[20, 10, 4], None, None, [(0, 20, 1), (0, 10, 1), (3, 4, 1)]),
        (&[0, 0, 3], &[20, 10, 4], Some(&[0, 1, 2]), None, [(0, 20, 1), (0, 10, 1), (3, 4, 1)]),
        // x[20:0:-1, 10:0:-3, 4:1:-2]: starts clamp to the last index.
        (&[20, 10, 4], &[0, 0, 1], Some(&[0, 1, 2]), Some(&[-1, -3, -2]), [(19, 0, -1), (9, 0, -3), (4, 1, -2)]),
        (&[0, 0, 3], &[20, 10, 4], Some(&[0, -2, -1]), None, [(0, 20, 1), (0, 10, 1), (3, 4, 1)]),
    ];
    for (starts, ends, axes, steps, ranges) in cases {
        let expected = basic_slicing(&x, ranges);
        for p in Profile::ALL {
            assert_eq!(got(&s13(p, &x, starts, ends, axes, steps).unwrap()), expected, "{starts:?} {p:?}");
        }
    }
    assert_eq!(
        s13(SPEC, &x, &[20, 10, 4], &[0, 0, 1], Some(&[0, 1, 2]), Some(&[-1, -3, -2])).unwrap().shape(),
        [19, 3, 2]
    );
}

#[test]
fn packed_and_other_dtypes() {
    // int4 [1, -2, 3, -4, 5] is raw e1 c3 05 (research §4.4). [1:4] starts at an odd nibble:
    // [-2, 3, -4] -> codes e, 3, c -> 3e 0c.
    let int4 = Tensor::from_raw(DType::Int4, vec![5], vec![0xE1, 0xC3, 0x05]).unwrap();
    let out = slice_lists(&int4, &[1], &[4], None, None, SPEC).unwrap();
    assert_eq!(out.raw().unwrap(), [0x3E, 0x0C]);
    // Reversed with a step: [5, 3, 1] -> 35 01.
    let out = slice_lists(&int4, &[4], &[MIN], None, Some(&[-2]), SPEC).unwrap();
    assert_eq!(out.raw().unwrap(), [0x35, 0x01]);
    // float6: four elements in three bytes; rows of 3 start at every bit offset.
    let codes: Vec<u64> = (0..12).map(|i| (i * 5 + 1) & 0x3F).collect();
    let f6 = Tensor::from_codes(DType::Float6E3M2, vec![4, 3], &codes).unwrap();
    let out = slice_lists(&f6, &[1], &[3], Some(&[1]), None, SPEC).unwrap();
    let picked: Vec<u64> = (0..4).flat_map(|r| [codes[r * 3 + 1], codes[r * 3 + 2]]).collect();
    assert_eq!(out.codes().unwrap(), picked);
    assert_eq!(out.raw().unwrap(), Tensor::from_codes(DType::Float6E3M2, vec![4, 2], &picked).unwrap().raw().unwrap());
    // uint2, strings, bool and complex64 (raw bytes: 8 per element).
    let u2 = Tensor::from_codes(DType::Uint2, vec![7], &[0, 1, 2, 3, 0, 1, 2]).unwrap();
    assert_eq!(slice_lists(&u2, &[5], &[0], None, Some(&[-1]), SPEC).unwrap().codes().unwrap(), [1, 0, 3, 2, 1]);
    let words: Vec<String> = ["a", "bb", "", "dddd", "e"].iter().map(|s| s.to_string()).collect();
    let strings = Tensor::from_strings(vec![5], words).unwrap();
    let out = slice_lists(&strings, &[-1], &[MIN], None, Some(&[-2]), SPEC).unwrap();
    assert_eq!(out.strings().unwrap(), ["e", "", "a"]);
    let bools = Tensor::from_codes(DType::Bool, vec![2, 2], &[1, 0, 0, 1]).unwrap();
    assert_eq!(slice_lists(&bools, &[1], &[2], Some(&[1]), None, SPEC).unwrap().codes().unwrap(), [0, 1]);
    let raw: Vec<u8> = (0..32).collect();
    let c64 = Tensor::from_raw(DType::Complex64, vec![4], raw.clone()).unwrap();
    let out = slice_lists(&c64, &[1], &[3], None, None, SPEC).unwrap();
    assert_eq!(out.raw().unwrap(), &raw[8..24]);
}

// ---------------------------------------------------------------------------------------------
// Property: Slice equals a naive per-element reference.

/// The input indices one axis reads, by walking from the clamped start (the Slice-13 text's
/// clamping, with the reference's start clamp when `python_start`).
fn walk_axis(dim: usize, start: i64, end: i64, step: i64, python_start: bool) -> Vec<usize> {
    if dim == 0 {
        return vec![];
    }
    let d = dim as i128;
    let from_back = |x: i64| if x < 0 { i128::from(x) + d } else { i128::from(x) };
    let (s, e, st) = (from_back(start), from_back(end), i128::from(step));
    let mut out = Vec::new();
    if st > 0 {
        let mut i = s.clamp(0, d);
        while i < e.clamp(0, d) {
            out.push(i as usize);
            i += st;
        }
    } else {
        if python_start && s < 0 {
            return out;
        }
        let mut i = s.clamp(0, d - 1);
        while i > e.clamp(-1, d - 1) {
            out.push(i as usize);
            i += st;
        }
    }
    out
}

/// Every output element, each located by its own multi-index.
fn naive_slice(codes: &[u64], shape: &[usize], picks: &[Vec<usize>]) -> (Vec<usize>, Vec<u64>) {
    let out_shape: Vec<usize> = picks.iter().map(Vec::len).collect();
    let n: usize = out_shape.iter().product();
    let mut out = Vec::with_capacity(n);
    for flat in 0..n {
        let mut rest = flat;
        let mut index = vec![0; shape.len()];
        for a in (0..shape.len()).rev() {
            index[a] = picks[a][rest % out_shape[a]];
            rest /= out_shape[a];
        }
        let src = index.iter().zip(shape).fold(0, |acc, (&i, &d)| acc * d + i);
        out.push(codes[src]);
    }
    (out_shape, out)
}

fn bound() -> impl Strategy<Value = i64> {
    prop_oneof![8 => -9i64..10, 1 => Just(MIN), 1 => Just(MAX), 1 => Just(i64::from(i32::MAX))]
}

fn step() -> impl Strategy<Value = i64> {
    prop_oneof![8 => prop_oneof![-3i64..0, 1i64..4], 1 => Just(MIN), 1 => Just(MAX)]
}

proptest! {
    #[test]
    fn slice_equals_naive(
        shape in prop::collection::vec(0usize..6, 1..5),
        dtype in prop::sample::select(vec![DType::Float, DType::Int4, DType::Float6E2M3, DType::Uint2, DType::Int16]),
        entries in prop::collection::vec((bound(), bound(), step(), any::<bool>()), 0..5),
        order in any::<u64>(),
        with_steps in any::<bool>(),
    ) {
        let rank = shape.len();
        // Distinct axes, in a shuffled order, each given as itself or counted from the back.
        let mut axes: Vec<usize> = (0..rank).collect();
        let mut seed = order;
        for i in (1..axes.len()).rev() {
            axes.swap(i, (seed % (i as u64 + 1)) as usize);
            seed /= i as u64 + 1;
        }
        let entries = &entries[..entries.len().min(rank)];
        let given: Vec<i64> = entries.iter().zip(&axes)
            .map(|(e, &a)| if e.3 { a as i64 - rank as i64 } else { a as i64 }).collect();
        let starts: Vec<i64> = entries.iter().map(|e| e.0).collect();
        let ends: Vec<i64> = entries.iter().map(|e| e.1).collect();
        let steps: Vec<i64> = entries.iter().map(|e| if with_steps { e.2 } else { 1 }).collect();
        let n: usize = shape.iter().product();
        let codes: Vec<u64> = (0..n as u64).map(|i| (i * 0x9E37_79B9 + 7) & dtype.code_mask()).collect();
        let data = Tensor::from_codes(dtype, shape.clone(), &codes).unwrap();
        for (p, python_start) in [(SPEC, false), (REF, true)] {
            let mut picks: Vec<Vec<usize>> = shape.iter().map(|&d| (0..d).collect()).collect();
            for (k, &a) in axes.iter().take(entries.len()).enumerate() {
                picks[a] = walk_axis(shape[a], starts[k], ends[k], steps[k], python_start);
            }
            let (want_shape, want_codes) = naive_slice(&codes, &shape, &picks);
            let out = slice_lists(&data, &starts, &ends, Some(&given), Some(&steps), p).unwrap();
            prop_assert_eq!(out.shape(), want_shape.as_slice());
            prop_assert_eq!(out.codes().unwrap(), want_codes.clone());
            // The packed bytes are what packing the expected codes gives (zero padding).
            let packed = Tensor::from_codes(dtype, want_shape, &want_codes).unwrap();
            prop_assert_eq!(out.raw().unwrap(), packed.raw().unwrap());
        }
    }
}
