//! Hostile inputs into Slice, Gather and Range (ONNX and OpenVINO), every version and profile.
//!
//! Input (structured): a small tensor (any dtype, int4/float6/string/bool/complex included; rank
//! <= 4, dims <= 6, its bytes or strings), Slice starts/ends/axes/steps, Gather indices and axis,
//! and Range start/limit/delta. Integers are drawn so that i64::MIN/MAX, the int32 limits and
//! their neighbours come up often; Range operands can be NaN, +-inf, huge or tiny.
//!
//! Asserts:
//! * every call returns `Ok` or `Err`, never panics;
//! * Slice (every version, and `slice_lists`) under `spec`: `Ok` exactly when a naive per-element
//!   reference written here says the arguments are valid, and then the same shape and elements
//!   (packed outputs with zero padding);
//! * Gather (every profile: they agree): `Ok` exactly when the reference says so, and then the same
//!   shape and elements;
//! * Range: an `Ok` output is 1-D with at most `max_elements` (here 2^12, to keep runs fast)
//!   elements; ONNX Range under `spec` with an integer type: `Ok` exactly when delta != 0 and the
//!   exact count `max(ceil((limit - start) / delta), 0)` is within the cap, with the low bits of
//!   `start + i * delta` as values.

#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use lowbit::ops::{self, RangeOptions, SliceArgs};
use lowbit::DType;
use lowbit::Profile;
use lowbit::{convert_code, CastOptions};
use lowbit::{Data, Tensor};
use lowbit::{Kind, Packing};

const CAP: usize = 1 << 12;

// ---------------------------------------------------------------------------------------------
// Input description

/// An i64 that is often one of the values where index arithmetic breaks.
#[derive(Arbitrary, Debug, Clone, Copy)]
enum Int {
    Special(u8),
    Small(i8),
    Any(i64),
}

const SPECIAL_INTS: [i64; 14] = [
    i64::MIN,
    i64::MIN + 1,
    i64::MAX,
    i64::MAX - 1,
    i32::MIN as i64,
    i32::MAX as i64,
    i32::MIN as i64 - 1,
    i32::MAX as i64 + 1,
    u32::MAX as i64,
    0,
    1,
    -1,
    i64::MIN / 2,
    i64::MAX / 2 + 1,
];

impl Int {
    fn get(self) -> i64 {
        match self {
            Int::Special(k) => SPECIAL_INTS[usize::from(k) % SPECIAL_INTS.len()],
            Int::Small(v) => i64::from(v),
            Int::Any(v) => v,
        }
    }
}

#[derive(Arbitrary, Debug)]
struct TensorSpec {
    dtype: u8,
    dims: Vec<u8>,
    bytes: Vec<u8>,
    strings: Vec<String>,
}

/// Integer dtypes for starts/ends/axes/steps and indices, then one that is not an integer.
const INDEX_DTYPES: [DType; 13] = [
    DType::Int64,
    DType::Int32,
    DType::Int16,
    DType::Int8,
    DType::Uint64,
    DType::Uint32,
    DType::Uint16,
    DType::Uint8,
    DType::Int4,
    DType::Uint4,
    DType::Int2,
    DType::Uint2,
    DType::Float,
];

#[derive(Arbitrary, Debug)]
struct SliceSpec {
    /// (start, end, axis, step) per entry.
    entries: Vec<(Int, Int, Int, Int)>,
    with_axes: bool,
    with_steps: bool,
    index_dtype: u8,
    /// One of starts/ends/axes/steps (0..4) gets another dtype.
    mixed_dtype: Option<(u8, u8)>,
    /// One of starts/ends/axes/steps (0..4) loses its last entry.
    shorter: Option<u8>,
    /// One of starts/ends/axes/steps (0..4) gets shape [1, n].
    two_d: Option<u8>,
}

#[derive(Arbitrary, Debug)]
struct GatherSpec {
    values: Vec<Int>,
    /// Rank 0 to 2, each dim at most 4.
    dims: Vec<u8>,
    index_dtype: u8,
    axis: Int,
}

/// A Range operand.
#[derive(Arbitrary, Debug, Clone, Copy)]
enum Num {
    Bits(u64),
    F64(f64),
    F32(f32),
    I64(Int),
    Special(u8),
}

const SPECIAL_FLOATS: [f64; 25] = [
    f64::NAN,
    f64::INFINITY,
    f64::NEG_INFINITY,
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.5,
    1e300,
    -1e300,
    f64::MAX,
    f64::MIN,
    f64::MIN_POSITIVE,
    5e-324,
    -5e-324,
    9223372036854775808.0,
    -9223372036854775808.0,
    1.8446744073709552e19,
    2147483648.0,
    3.4028234663852886e38,
    65504.0,
    1.401298464324817e-45,
    1e-30,
    4096.5,
    9223372036854774784.0,
];

#[derive(Arbitrary, Debug)]
struct RangeSpec {
    dtype: u8,
    /// limit and delta of another dtype (an error in ONNX Range and Range-1).
    other_dtype: Option<(u8, u8)>,
    start: Num,
    limit: Num,
    delta: Num,
    /// 0: shape [], 1: [1], 2: [2] (not a scalar), 3: [0].
    shape: u8,
    stash_type: Option<Int>,
    output_type: u8,
    openvino_version: u8,
}

#[derive(Arbitrary, Debug)]
struct Input {
    data: TensorSpec,
    slice: SliceSpec,
    gather: GatherSpec,
    range: RangeSpec,
}

// ---------------------------------------------------------------------------------------------
// Building tensors

fn dtype_of(k: u8) -> DType {
    DType::ALL[usize::from(k) % DType::ALL.len()]
}

fn build_data(spec: &TensorSpec) -> Option<Tensor> {
    let dtype = dtype_of(spec.dtype);
    let shape: Vec<usize> = spec.dims.iter().take(4).map(|&d| usize::from(d % 7)).collect();
    let n: usize = shape.iter().product();
    if dtype == DType::String {
        let strings = (0..n).map(|i| spec.strings.get(i).cloned().unwrap_or_default()).collect::<Vec<String>>();
        return Some(Tensor::from_strings(shape, strings).expect("one string per element"));
    }
    let len = lowbit::packing::raw_len(dtype, n).ok()?;
    let raw = (0..len).map(|i| spec.bytes.get(i).copied().unwrap_or(0)).collect();
    Tensor::from_raw(dtype, shape, raw).ok()
}

fn mask(dtype: DType) -> u64 {
    dtype.code_mask()
}

/// An integer tensor holding the low bits of each value (a FLOAT tensor for the non-integer choice).
fn index_tensor(dtype: DType, values: &[i64], shape: Vec<usize>) -> Tensor {
    let codes: Vec<u64> = values.iter().map(|&v| v as u64 & mask(dtype)).collect();
    Tensor::from_codes(dtype, shape, &codes).expect("shape matches the values")
}

/// What an integer tensor's element means: the code sign-extended (or not) from its width.
fn index_value(dtype: DType, v: i64) -> Option<i128> {
    let Kind::Integer { bits, signed } = dtype.kind() else { return None };
    let code = v as u64 & mask(dtype);
    Some(if signed && bits < 64 {
        let shift = 64 - bits;
        i128::from(((code << shift) as i64) >> shift)
    } else if signed {
        i128::from(code as i64)
    } else {
        i128::from(code)
    })
}

// ---------------------------------------------------------------------------------------------
// Element access, written independently of lowbit's packing code

#[derive(Debug, PartialEq, Eq)]
enum Elem {
    Bits(u128),
    Text(String),
}

fn element(t: &Tensor, i: usize) -> Elem {
    match t.data() {
        Data::Strings(s) => Elem::Text(s[i].to_string()),
        Data::Raw(raw) => match t.dtype().packing() {
            Packing::Bytes(k) => {
                let k = k as usize;
                let mut buf = [0u8; 16];
                buf[..k].copy_from_slice(&raw[i * k..(i + 1) * k]);
                Elem::Bits(u128::from_le_bytes(buf))
            }
            _ => {
                // Sub-byte types: an LSB-first bit stream of `w`-bit elements.
                let w = t.dtype().bits().expect("packed types have a width") as usize;
                let mut v = 0u128;
                for b in 0..w {
                    let bit = i * w + b;
                    v |= u128::from(raw[bit / 8] >> (bit % 8) & 1) << b;
                }
                Elem::Bits(v)
            }
        },
    }
}

/// Packed outputs are in the ONNX layout: the bits after the last element are zero.
fn assert_zero_padding(t: &Tensor, what: &str) {
    let (Some(raw), Some(w)) = (t.raw(), t.dtype().bits()) else { return };
    if matches!(t.dtype().packing(), Packing::Bytes(_)) {
        return;
    }
    let used = t.len() * w as usize;
    for bit in used..raw.len() * 8 {
        assert_eq!(raw[bit / 8] >> (bit % 8) & 1, 0, "{what}: padding bit {bit} of {} is set", t.dtype());
    }
}

fn strides(shape: &[usize]) -> Vec<usize> {
    let mut s = vec![1; shape.len()];
    for a in (0..shape.len().saturating_sub(1)).rev() {
        s[a] = s[a + 1] * shape[a + 1];
    }
    s
}

/// Row-major multi-index of flat position `i`.
fn unflatten(mut i: usize, shape: &[usize]) -> Vec<usize> {
    let mut index = vec![0; shape.len()];
    for (slot, &d) in index.iter_mut().zip(shape).rev() {
        *slot = i % d;
        i /= d;
    }
    index
}

// ---------------------------------------------------------------------------------------------
// Slice

/// `ceil(a / b)` for `b != 0`.
fn ceil_div(a: i128, b: i128) -> i128 {
    let (a, b) = if b < 0 { (-a, -b) } else { (a, b) };
    -((-a).div_euclid(b))
}

/// Per axis (first input index, step, count) under `spec`, or `None` where Slice must fail.
fn slice_plan(
    shape: &[usize],
    starts: &[i128],
    ends: &[i128],
    axes: Option<&[i128]>,
    steps: Option<&[i128]>,
) -> Option<Vec<(i128, i128, usize)>> {
    let n = starts.len();
    if ends.len() != n || axes.is_some_and(|a| a.len() != n) || steps.is_some_and(|s| s.len() != n) {
        return None;
    }
    let rank = shape.len() as i128;
    let mut plan: Vec<(i128, i128, usize)> = shape.iter().map(|&d| (0, 1, d)).collect();
    let mut seen = vec![false; shape.len()];
    for k in 0..n {
        let mut axis = axes.map_or(k as i128, |a| a[k]);
        if axis < 0 {
            axis += rank;
        }
        if axis < 0 || axis >= rank {
            return None;
        }
        let axis = axis as usize;
        if seen[axis] {
            return None;
        }
        seen[axis] = true;
        let step = steps.map_or(1, |s| s[k]);
        if step == 0 {
            return None;
        }
        let d = shape[axis] as i128;
        if d == 0 {
            plan[axis] = (0, step, 0);
            continue;
        }
        let (mut s, mut e) = (starts[k], ends[k]);
        if s < 0 {
            s += d;
        }
        if e < 0 {
            e += d;
        }
        if step > 0 {
            s = s.clamp(0, d);
            e = e.clamp(0, d);
        } else {
            s = s.clamp(0, d - 1);
            e = e.clamp(-1, d - 1);
        }
        let count = ceil_div(e - s, step).max(0);
        plan[axis] = (s, step, count as usize);
    }
    Some(plan)
}

fn check_slice_result(what: &str, data: &Tensor, plan: Option<Vec<(i128, i128, usize)>>, got: &lowbit::Result<Tensor>) {
    let (plan, out) = match (plan, got) {
        (None, Err(_)) => return,
        (None, Ok(t)) => panic!("{what}: the reference rejects these arguments, Slice gave shape {:?}", t.shape()),
        (Some(_), Err(e)) => panic!("{what}: the reference accepts these arguments, Slice failed: {e}"),
        (Some(p), Ok(t)) => (p, t),
    };
    let want_shape: Vec<usize> = plan.iter().map(|p| p.2).collect();
    assert_eq!(out.shape(), want_shape.as_slice(), "{what}: output shape");
    assert_eq!(out.dtype(), data.dtype(), "{what}: output dtype");
    let in_strides = strides(data.shape());
    for i in 0..out.len() {
        let index = unflatten(i, &want_shape);
        let source: i128 = index
            .iter()
            .zip(&plan)
            .zip(&in_strides)
            .map(|((&j, &(start, step, _)), &stride)| (start + j as i128 * step) * stride as i128)
            .sum();
        assert_eq!(element(out, i), element(data, source as usize), "{what}: output element {index:?}");
    }
    assert_zero_padding(out, what);
}

fn run_slice(data: &Tensor, spec: &SliceSpec) {
    let entries = &spec.entries[..spec.entries.len().min(6)];
    let mut lists: [Vec<i64>; 4] = Default::default();
    for &(s, e, a, st) in entries {
        for (list, v) in lists.iter_mut().zip([s, e, a, st]) {
            list.push(v.get());
        }
    }
    if let Some(which) = spec.shorter {
        lists[usize::from(which) % 4].pop();
    }
    let [starts, ends, axes, steps] = &lists;
    let axes_opt = spec.with_axes.then_some(axes.as_slice());
    let steps_opt = spec.with_steps.then_some(steps.as_slice());
    let widen = |v: &[i64]| v.iter().map(|&x| i128::from(x)).collect::<Vec<_>>();

    // Slice-1: attributes (no steps).
    let plan = slice_plan(data.shape(), &widen(starts), &widen(ends), axes_opt.map(widen).as_deref(), None);
    for profile in Profile::ALL {
        let args = SliceArgs::Attributes { starts, ends, axes: axes_opt };
        for opset in [0, 1, 9, 10] {
            let got = ops::slice(data, &args, opset, profile);
            if profile == Profile::Spec && (1..10).contains(&opset) {
                check_slice_result(&format!("Slice-1 {spec:?}"), data, plan.clone(), &got);
            }
        }
        // slice_lists: Slice-13 on plain lists.
        let got = ops::slice_lists(data, starts, ends, axes_opt, steps_opt, profile);
        if profile == Profile::Spec {
            let plan = slice_plan(
                data.shape(),
                &widen(starts),
                &widen(ends),
                axes_opt.map(widen).as_deref(),
                steps_opt.map(widen).as_deref(),
            );
            check_slice_result(&format!("slice_lists {spec:?}"), data, plan, &got);
        }
    }

    // Slice-10/11/13: integer tensors.
    let base = INDEX_DTYPES[usize::from(spec.index_dtype) % INDEX_DTYPES.len()];
    let mut dtypes = [base; 4];
    if let Some((which, d)) = spec.mixed_dtype {
        dtypes[usize::from(which) % 4] = INDEX_DTYPES[usize::from(d) % INDEX_DTYPES.len()];
    }
    let two_d = spec.two_d.map(|w| usize::from(w) % 4);
    let tensors: Vec<Tensor> = lists
        .iter()
        .zip(dtypes)
        .enumerate()
        .map(|(k, (values, dtype))| {
            let shape = if two_d == Some(k) { vec![1, values.len()] } else { vec![values.len()] };
            index_tensor(dtype, values, shape)
        })
        .collect();
    let args = SliceArgs::Inputs {
        starts: &tensors[0],
        ends: &tensors[1],
        axes: spec.with_axes.then_some(&tensors[2]),
        steps: spec.with_steps.then_some(&tensors[3]),
    };
    // What the op sees, and whether `spec` must reject the tensors before looking at values.
    let used = [true, true, spec.with_axes, spec.with_steps];
    let seen: Option<Vec<Vec<i128>>> = lists
        .iter()
        .zip(dtypes)
        .map(|(values, dtype)| values.iter().map(|&v| index_value(dtype, v)).collect::<Option<Vec<_>>>())
        .zip(used)
        .map(|(v, u)| if u { v } else { Some(Vec::new()) })
        .collect();
    let used_dtypes: Vec<DType> = dtypes.iter().zip(used).filter(|(_, u)| *u).map(|(d, _)| *d).collect();
    let mixed = used_dtypes.windows(2).any(|w| w[0] != w[1]);
    let non_integer = used_dtypes.iter().any(|d| !matches!(d.kind(), Kind::Integer { .. }));
    let not_1d = two_d.is_some_and(|k| used[k]);
    let plan = match seen {
        Some(v) if !mixed && !non_integer && !not_1d => slice_plan(
            data.shape(),
            &v[0],
            &v[1],
            spec.with_axes.then_some(v[2].as_slice()),
            spec.with_steps.then_some(v[3].as_slice()),
        ),
        _ => None,
    };
    for profile in Profile::ALL {
        for opset in [1, 10, 11, 12, 13, 28, 29] {
            let got = ops::slice(data, &args, opset, profile);
            if profile == Profile::Spec && (10..=28).contains(&opset) {
                check_slice_result(&format!("Slice-{opset} {spec:?} {dtypes:?}"), data, plan.clone(), &got);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Gather

fn run_gather(data: &Tensor, spec: &GatherSpec) {
    let dtype = INDEX_DTYPES[usize::from(spec.index_dtype) % INDEX_DTYPES.len()];
    let ishape: Vec<usize> = spec.dims.iter().take(2).map(|&d| usize::from(d % 5)).collect();
    let count: usize = ishape.iter().product();
    let values: Vec<i64> = (0..count).map(|i| spec.values.get(i).map_or(0, |v| v.get())).collect();
    let indices = index_tensor(dtype, &values, ishape.clone());
    let axis = spec.axis.get();

    // The reference: the axis and every index checked first, then out[o, j, i] = data[o, idx[j], i].
    let shape = data.shape();
    let rank = shape.len() as i128;
    let a = if axis < 0 { i128::from(axis) + rank } else { i128::from(axis) };
    let seen: Option<Vec<i128>> = values.iter().map(|&v| index_value(dtype, v)).collect();
    let valid = rank > 0 && (0..rank).contains(&a) && matches!(dtype.kind(), Kind::Integer { .. });
    let rows: Option<Vec<usize>> = match (valid, seen) {
        (true, Some(seen)) => {
            let s = shape[a as usize] as i128;
            seen.iter().map(|&v| (-s..s).contains(&v).then(|| if v < 0 { v + s } else { v } as usize)).collect()
        }
        _ => None,
    };
    for profile in Profile::ALL {
        for opset in [0, 1, 11, 13, 28, 29] {
            let got = ops::gather(data, &indices, axis, opset, profile);
            if !(1..=28).contains(&opset) {
                continue;
            }
            let what = format!("Gather-{opset} {profile:?} axis {axis} indices {dtype} {ishape:?} {values:?}");
            let (rows, out) = match (&rows, &got) {
                (None, Err(_)) => continue,
                (None, Ok(t)) => panic!("{what}: the reference rejects this, Gather gave shape {:?}", t.shape()),
                (Some(_), Err(e)) => panic!("{what}: the reference accepts this, Gather failed: {e}"),
                (Some(r), Ok(t)) => (r, t),
            };
            let a = a as usize;
            let want_shape: Vec<usize> = shape[..a].iter().chain(&ishape).chain(&shape[a + 1..]).copied().collect();
            assert_eq!(out.shape(), want_shape.as_slice(), "{what}: output shape");
            let in_strides = strides(shape);
            for i in 0..out.len() {
                let index = unflatten(i, &want_shape);
                let (outer, rest) = index.split_at(a);
                let (j, inner) = rest.split_at(ishape.len());
                let row =
                    rows[if ishape.is_empty() { 0 } else { j.iter().zip(strides(&ishape)).map(|(x, s)| x * s).sum() }];
                let source: usize =
                    outer.iter().chain(std::iter::once(&row)).chain(inner).zip(&in_strides).map(|(x, s)| x * s).sum();
                assert_eq!(element(out, i), element(data, source), "{what}: output element {index:?}");
            }
            assert_zero_padding(out, &what);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Range

const RANGE_TYPES: [DType; 7] =
    [DType::Float, DType::Double, DType::Int16, DType::Int32, DType::Int64, DType::Float16, DType::Bfloat16];

fn range_dtype(k: u8) -> DType {
    // Mostly the types ONNX Range takes; sometimes any dtype.
    if k < 224 {
        RANGE_TYPES[usize::from(k) % RANGE_TYPES.len()]
    } else {
        dtype_of(k)
    }
}

/// The code of `x` in `dtype` (any numeric dtype), `None` for the others.
fn code_of(dtype: DType, x: Num) -> Option<u64> {
    let opts = CastOptions::default();
    match x {
        Num::Bits(b) => Some(b & mask(dtype)),
        Num::F64(v) => convert_code(DType::Double, dtype, v.to_bits(), &opts).ok(),
        Num::F32(v) => convert_code(DType::Float, dtype, u64::from(v.to_bits()), &opts).ok(),
        Num::I64(i) => convert_code(DType::Int64, dtype, i.get() as u64, &opts).ok(),
        Num::Special(k) => {
            let v = SPECIAL_FLOATS[usize::from(k) % SPECIAL_FLOATS.len()];
            convert_code(DType::Double, dtype, v.to_bits(), &opts).ok()
        }
    }
}

fn scalar(dtype: DType, x: Num, shape: u8) -> Option<Tensor> {
    let code = code_of(dtype, x)?;
    let (shape, codes) = match shape % 4 {
        0 => (vec![], vec![code]),
        1 => (vec![1], vec![code]),
        2 => (vec![2], vec![code, code]),
        _ => (vec![0], vec![]),
    };
    Tensor::from_codes(dtype, shape, &codes).ok()
}

fn check_range_output(what: &str, got: &lowbit::Result<Tensor>) {
    if let Ok(t) = got {
        assert_eq!(t.shape().len(), 1, "{what}: Range output must be 1-D, got {:?}", t.shape());
        assert!(t.len() <= CAP, "{what}: {} elements exceed max_elements {CAP}", t.len());
        assert_zero_padding(t, what);
    }
}

fn run_range(spec: &RangeSpec) {
    let t = range_dtype(spec.dtype);
    let (tl, td) = match spec.other_dtype {
        Some((a, b)) => (range_dtype(a), range_dtype(b)),
        None => (t, t),
    };
    let (Some(start), Some(limit), Some(delta)) =
        (scalar(t, spec.start, spec.shape), scalar(tl, spec.limit, spec.shape), scalar(td, spec.delta, spec.shape))
    else {
        return;
    };
    let stash_type = spec.stash_type.map(Int::get);
    for profile in Profile::ALL {
        let opts = RangeOptions { profile, stash_type, max_elements: CAP };
        for opset in [10, 11, 26, 27, 28, 29] {
            let what = format!("Range opset {opset} {profile:?} {spec:?}");
            let got = ops::range_with(&start, &limit, &delta, opset, &opts);
            check_range_output(&what, &got);
            if let Ok(out) = &got {
                assert_eq!(out.dtype(), t, "{what}: output dtype");
            }
            if profile == Profile::Spec && (11..=28).contains(&opset) && stash_type.is_none() {
                check_integer_range(&what, &start, &limit, &delta, spec.shape, &got);
            }
        }
        let plain = RangeOptions { profile, stash_type: None, max_elements: CAP };
        let output_type = dtype_of(spec.output_type);
        let what = format!("OpenVINO Range {profile:?} {spec:?} output {output_type}");
        check_range_output(&what, &ops::range1(&start, &limit, &delta, &plain));
        check_range_output(&what, &ops::range4(&start, &limit, &delta, output_type, &plain));
        let version = i64::from(spec.openvino_version % 6);
        let output = (spec.output_type & 1 == 0).then_some(output_type);
        check_range_output(&what, &ops::openvino_range(version, &start, &limit, &delta, output, &plain));
    }
}

/// ONNX Range under `spec` for integer types: the exact count and the wrapped values.
fn check_integer_range(
    what: &str,
    start: &Tensor,
    limit: &Tensor,
    delta: &Tensor,
    shape: u8,
    got: &lowbit::Result<Tensor>,
) {
    let t = start.dtype();
    if !matches!(t, DType::Int16 | DType::Int32 | DType::Int64) || limit.dtype() != t || delta.dtype() != t {
        return;
    }
    if shape % 4 >= 2 {
        assert!(got.is_err(), "{what}: operands of shape [2] or [0] are not scalars");
        return;
    }
    let value = |x: &Tensor| index_value(t, x.code(0).expect("a scalar") as i64).expect("an integer type");
    let (s, l, d) = (value(start), value(limit), value(delta));
    if d == 0 {
        assert!(got.is_err(), "{what}: delta 0 must be an error");
        return;
    }
    let count = ceil_div(l - s, d).max(0);
    if count > CAP as i128 {
        assert!(got.is_err(), "{what}: {count} elements exceed the cap");
        return;
    }
    let out = match got {
        Ok(out) => out,
        Err(e) => panic!("{what}: {count} elements expected, got {e}"),
    };
    assert_eq!(out.len() as i128, count, "{what}: count");
    for i in 0..out.len() {
        let want = (s + i as i128 * d) as u64 & mask(t);
        assert_eq!(out.code(i), Some(want), "{what}: element {i}");
    }
}

fuzz_target!(|input: Input| {
    if let Some(data) = build_data(&input.data) {
        run_slice(&data, &input.slice);
        run_gather(&data, &input.gather);
    }
    run_range(&input.range);
});
