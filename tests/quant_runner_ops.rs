//! The graph runner's quantization ops and the ops the expanded DynamicQuantizeLinear body uses
//! (Clip, Max, Min, Round, ReduceMax, ReduceMin): their budgets, Clip-6's attribute bounds and
//! ReduceMax/ReduceMin-18's `axes` input, with hand-computed values; and one-node models against
//! the live onnx reference's outputs (tests/data/quant_runner, written by
//! scripts/gen_quant_runner_fixtures.py).

#[path = "support/models.rs"]
mod models;

use lowbit::onnx::conformance::{run_test, test_dirs, Tolerance};
use lowbit::onnx::limits::Limits;
use lowbit::onnx::proto::{AttributeProto, ModelProto};
use lowbit::onnx::runner::Model;
use lowbit::BudgetKind;
use lowbit::Profile;
use lowbit::{DType, Error, Tensor};
use models::*;
use prost::Message;
use std::collections::HashMap;
use std::path::PathBuf;

const MIB: u64 = 1 << 20;

fn limits(max_memory: u64, max_work: u64) -> Limits {
    Limits { max_memory, max_work, max_input_bytes: 1 << 30 }
}

fn run_model(m: &ModelProto, inputs: &[(&str, Tensor)], limits: &Limits) -> lowbit::Result<Vec<(String, Tensor)>> {
    let inputs: HashMap<String, Tensor> = inputs.iter().map(|(n, t)| (n.to_string(), t.clone())).collect();
    Model::from_bytes(&m.encode_to_vec()).unwrap().run_with(&inputs, Profile::OnnxReference, limits)
}

/// A one-node model `op` named `name` with the given inputs (graph inputs, "" for an absent
/// optional input) and attributes, output `y`.
fn one_node(op: &str, name: &str, inputs: &[&str], attributes: Vec<AttributeProto>, opset: i64) -> ModelProto {
    one_node_outputs(op, name, inputs, attributes, opset, &["y"])
}

fn one_node_outputs(
    op: &str,
    name: &str,
    inputs: &[&str],
    attributes: Vec<AttributeProto>,
    opset: i64,
    outputs: &[&str],
) -> ModelProto {
    let given: Vec<&str> = inputs.iter().copied().filter(|i| !i.is_empty()).collect();
    model(graph(vec![with_attributes(node(op, name, inputs, outputs), attributes)], &given, outputs), opset)
}

fn float_attribute(name: &str, f: f32) -> AttributeProto {
    AttributeProto { name: Some(name.into()), f: Some(f), r#type: Some(1), ..AttributeProto::default() }
}

fn scalar_f32(v: f32) -> Tensor {
    Tensor::from_f32(&[v]).reshape(vec![]).unwrap()
}

fn int8s(shape: Vec<usize>, codes: &[u64]) -> Tensor {
    Tensor::from_codes(DType::Int8, shape, codes).unwrap()
}

fn bits(t: &Tensor) -> Vec<u32> {
    t.to_f32_vec().unwrap().iter().map(|v| v.to_bits()).collect()
}

fn only_output(result: lowbit::Result<Vec<(String, Tensor)>>) -> Tensor {
    let mut outputs = result.unwrap();
    assert_eq!(outputs.len(), 1);
    outputs.remove(0).1
}

// ------------------------------------------------------------------------------------------------
// Budgets
// ------------------------------------------------------------------------------------------------

/// Elements of the budget tests' inputs: 4 MiB of float32, 1 MiB of int8 (the caller's: inputs are
/// not charged, what a node makes is).
const N: usize = 1 << 20;

/// An op type, a one-node model of it, and its inputs.
type BudgetCase = (&'static str, ModelProto, Vec<(&'static str, Tensor)>);

/// The budget tests' models: one node of each op over N elements, and its inputs.
fn budget_cases() -> Vec<BudgetCase> {
    let x = floats(N);
    let halves = floats(N).reshape(vec![N / 2, 2]).unwrap();
    let q = int8s(vec![N], &vec![5; N]);
    let axis1 = int64s(vec![1], &[1]);
    vec![
        (
            "QuantizeLinear",
            one_node("QuantizeLinear", "q", &["x", "s", "z"], vec![], 21),
            vec![("x", x.clone()), ("s", scalar_f32(0.5)), ("z", int8s(vec![], &[0]))],
        ),
        (
            "DequantizeLinear",
            one_node("DequantizeLinear", "dq", &["x", "s", "z"], vec![], 21),
            vec![("x", q), ("s", scalar_f32(0.5)), ("z", int8s(vec![], &[1]))],
        ),
        (
            "DynamicQuantizeLinear",
            one_node_outputs("DynamicQuantizeLinear", "dyn", &["x"], vec![], 11, &["y", "y_scale", "y_zero_point"]),
            vec![("x", x.clone())],
        ),
        (
            "Clip",
            one_node("Clip", "clip", &["x", "lo", "hi"], vec![], 13),
            vec![("x", x.clone()), ("lo", scalar_f32(1.0)), ("hi", scalar_f32(100.0))],
        ),
        ("Clip", one_node("Clip", "clip6", &["x"], vec![float_attribute("min", 1.0)], 6), vec![("x", x.clone())]),
        ("Max", one_node("Max", "max", &["a", "b"], vec![], 13), vec![("a", x.clone()), ("b", x.clone())]),
        (
            "Min",
            one_node("Min", "min", &["a", "b", "c"], vec![], 13),
            vec![("a", x.clone()), ("b", x.clone()), ("c", scalar_f32(3.0))],
        ),
        ("Min", one_node("Min", "min_one", &["a"], vec![], 13), vec![("a", x.clone())]),
        ("Round", one_node("Round", "round", &["x"], vec![], 11), vec![("x", x.clone())]),
        (
            "ReduceMax",
            one_node("ReduceMax", "rmax", &["x", "axes"], vec![], 18),
            vec![("x", halves.clone()), ("axes", axis1.clone())],
        ),
        (
            "ReduceMin",
            one_node("ReduceMin", "rmin_noop", &["x"], vec![int_attribute("noop_with_empty_axes", 1)], 18),
            vec![("x", halves.clone())],
        ),
        (
            "ReduceMin",
            one_node("ReduceMin", "rmin13", &["x"], vec![ints_attribute("axes", &[1])], 13),
            vec![("x", halves)],
        ),
    ]
}

fn ints_attribute(name: &str, ints: &[i64]) -> AttributeProto {
    AttributeProto { name: Some(name.into()), ints: ints.to_vec(), r#type: Some(7), ..AttributeProto::default() }
}

fn assert_over(result: lowbit::Result<Vec<(String, Tensor)>>, kind: BudgetKind, site: &str) {
    match result {
        Err(Error::OverBudget { budget, node, .. }) => {
            assert_eq!(budget, kind, "{site}");
            assert!(node.contains(site), "{node} should name {site}");
        }
        Err(other) => panic!("{site}: expected OverBudget {kind:?}, got {other}"),
        Ok(_) => panic!("{site}: ran within a budget it should exceed"),
    }
}

#[test]
fn each_op_stops_at_the_memory_budget_naming_its_node() {
    // Each makes at least 1 MiB (an int8 or uint8 output of N elements; a float32 one is 4 MiB;
    // QuantizeLinear also holds 800 KiB of scratch; the reductions hold N / 2 partial results).
    for (op, m, inputs) in budget_cases() {
        let name = &m.graph.as_ref().unwrap().node[0].name.clone().unwrap();
        let site = format!("{op} node \"{name}\"");
        assert_over(run_model(&m, &inputs, &limits(MIB / 2, u64::MAX)), BudgetKind::Memory, &site);
        // The same model runs within a budget that holds it.
        let outputs = run_model(&m, &inputs, &limits(256 * MIB, u64::MAX)).unwrap();
        assert!(!outputs.is_empty(), "{site}");
    }
}

#[test]
fn each_op_stops_at_the_work_budget_naming_its_node() {
    // Every op is charged at least one unit per element it reads or writes: N is over 100,000.
    for (op, m, inputs) in budget_cases() {
        let name = &m.graph.as_ref().unwrap().node[0].name.clone().unwrap();
        let site = format!("{op} node \"{name}\"");
        assert_over(run_model(&m, &inputs, &limits(u64::MAX, 100_000)), BudgetKind::Work, &site);
    }
}

#[test]
fn a_broadcast_max_beyond_both_budgets_is_refused_before_it_is_allocated() {
    // [65536, 1] against [1, 32768]: 2^31 float32 elements, 8 GiB.
    let m = one_node("Max", "wide", &["a", "b"], vec![], 13);
    let a = floats(65536).reshape(vec![65536, 1]).unwrap();
    let b = floats(32768).reshape(vec![1, 32768]).unwrap();
    let inputs = [("a", a), ("b", b)];
    let err = run_model(&m, &inputs, &limits(64 * MIB, u64::MAX)).unwrap_err().to_string();
    assert!(err.contains("Max node \"wide\"") && err.contains("needs 8589934592 more"), "{err}");
    // Within memory but not within 2^31 elements of work (16 per element of Max).
    assert_over(run_model(&m, &inputs, &limits(u64::MAX, 1 << 31)), BudgetKind::Work, "Max node \"wide\"");
}

#[test]
fn a_quantize_output_larger_than_the_memory_left_is_refused() {
    // QuantizeLinear to INT4 with a blocked scale: N / 2 bytes of packed output, plus the scale's
    // N / 32 values (16 bytes each held while running) and the scratch: not within 1 MiB, within 4.
    let x = floats(N).reshape(vec![N / 64, 64]).unwrap();
    let s = Tensor::from_f32(&vec![0.5; N / 32]).reshape(vec![N / 64, 2]).unwrap();
    let m = one_node(
        "QuantizeLinear",
        "blocked",
        &["x", "s"],
        vec![
            int_attribute("axis", 1),
            int_attribute("block_size", 32),
            int_attribute("output_dtype", i64::from(DType::Int4.onnx_number())),
        ],
        21,
    );
    let inputs = [("x", x), ("s", s)];
    assert_over(run_model(&m, &inputs, &limits(MIB, u64::MAX)), BudgetKind::Memory, "QuantizeLinear node \"blocked\"");
    let y = only_output(run_model(&m, &inputs, &limits(4 * MIB, u64::MAX)));
    assert_eq!((y.dtype(), y.raw().unwrap().len()), (DType::Int4, N / 2));
}

// ------------------------------------------------------------------------------------------------
// Clip-6: the bounds are float attributes
// ------------------------------------------------------------------------------------------------

const NAN: f32 = f32::NAN;
const INF: f32 = f32::INFINITY;

fn clip6(x: Tensor, attributes: Vec<AttributeProto>) -> Tensor {
    only_output(run_model(&one_node("Clip", "c", &["x"], attributes, 6), &[("x", x)], &Limits::default()))
}

#[test]
fn clip6_applies_its_attribute_bounds_exactly() {
    // min -1, max 2: below -1 -> -1, above 2 -> 2 (2.0000002, the next float32 after 2, too);
    // the bounds themselves, the values between and both zeros are kept; NaN stays NaN.
    let x = Tensor::from_f32(&[-INF, INF, -2.5, -1.0, -0.0, 0.0, 0.999, 1.0, 2.0, 2.000_000_2, 7.5]);
    let y = clip6(x, vec![float_attribute("min", -1.0), float_attribute("max", 2.0)]);
    assert_eq!(bits(&y), [-1.0f32, 2.0, -1.0, -1.0, -0.0, 0.0, 0.999, 1.0, 2.0, 2.0, 2.0].map(f32::to_bits));
    // The attribute is a float32: on a DOUBLE input, min 0.1 is float32's 0.1 =
    // 13421773 * 2^-27 = 0.100000001490116119384765625, above the double 0.1, which becomes it;
    // 0.2 is above both and is kept.
    let y = clip6(Tensor::from_f64(&[0.1, 0.2]), vec![float_attribute("min", 0.1)]);
    let values: Vec<f64> = y.codes().unwrap().iter().map(|&c| f64::from_bits(c)).collect();
    assert_eq!(values, [13_421_773.0 * 2f64.powi(-27), 0.2]);
}

#[test]
fn clip6_without_attributes_clips_to_float32_range() {
    // The schema's defaults are numeric_limits<float>::lowest() and max(): the infinities become
    // -3.4028235e38 and 3.4028235e38 (0xFF7FFFFF, 0x7F7FFFFF), finite values stay.
    let y = clip6(Tensor::from_f32(&[INF, -INF, 1.5, f32::MAX]), vec![]);
    assert_eq!(bits(&y), [0x7F7F_FFFF, 0xFF7F_FFFF, 1.5f32.to_bits(), 0x7F7F_FFFF]);
    // Only max given: min is still the lowest float32.
    let y = clip6(Tensor::from_f32(&[-INF, 5.0]), vec![float_attribute("max", 4.0)]);
    assert_eq!(bits(&y), [0xFF7F_FFFF, 4.0f32.to_bits()]);
}

#[test]
fn clip6_nan_as_the_onnx_reference_gives_it() {
    // numpy's clip: a NaN value stays NaN; a NaN bound makes every element NaN (what the
    // reference gives: tests/data/quant_runner/clip6_nan_min); min above max gives max.
    let y = clip6(Tensor::from_f32(&[NAN, 0.5]), vec![float_attribute("min", 0.0), float_attribute("max", 1.0)]);
    let y = y.to_f32_vec().unwrap();
    assert!(y[0].is_nan() && y[1] == 0.5);
    let y = clip6(Tensor::from_f32(&[-1.0, 0.5, 9.0]), vec![float_attribute("min", NAN)]);
    assert!(y.to_f32_vec().unwrap().iter().all(|v| v.is_nan()));
    let y = clip6(Tensor::from_f32(&[-1.0, 2.0, 9.0]), vec![float_attribute("min", 3.0), float_attribute("max", 1.0)]);
    assert_eq!(y.to_f32_vec().unwrap(), [1.0, 1.0, 1.0]);
}

// ------------------------------------------------------------------------------------------------
// ReduceMax / ReduceMin 18: axes is an input
// ------------------------------------------------------------------------------------------------

fn reduce18(op: &str, x: &Tensor, axes: Option<&[i64]>, attributes: Vec<AttributeProto>) -> lowbit::Result<Tensor> {
    let mut inputs = vec![("x", x.clone())];
    let m = match axes {
        Some(a) => {
            inputs.push(("axes", int64s(vec![a.len()], a)));
            one_node(op, "r", &["x", "axes"], attributes, 18)
        }
        None => one_node(op, "r", &["x"], attributes, 18),
    };
    run_model(&m, &inputs, &Limits::default()).map(|mut o| o.remove(0).1)
}

#[test]
fn reduce18_takes_axes_as_an_input_with_keepdims() {
    // x = [[1, 5, -2], [7, NaN, 0]]
    let x = Tensor::from_f32(&[1.0, 5.0, -2.0, 7.0, NAN, 0.0]).reshape(vec![2, 3]).unwrap();
    // ReduceMax over axis 1, kept: [[max(1, 5, -2)], [max(7, NaN, 0)]] = [[5], [NaN]].
    let y = reduce18("ReduceMax", &x, Some(&[1]), vec![]).unwrap();
    let v = y.to_f32_vec().unwrap();
    assert!(y.shape() == [2, 1] && v[0] == 5.0 && v[1].is_nan(), "{v:?}");
    // Over axis 0, dropped: [max(1, 7), max(5, NaN), max(-2, 0)] = [7, NaN, 0].
    let y = reduce18("ReduceMax", &x, Some(&[0]), vec![int_attribute("keepdims", 0)]).unwrap();
    let v = y.to_f32_vec().unwrap();
    assert!(y.shape() == [3] && v[0] == 7.0 && v[1].is_nan() && v[2] == 0.0, "{v:?}");
    // ReduceMin over the last axis (-1), dropped: [min(1, 5, -2), min(7, NaN, 0)] = [-2, NaN].
    let y = reduce18("ReduceMin", &x, Some(&[-1]), vec![int_attribute("keepdims", 0)]).unwrap();
    let v = y.to_f32_vec().unwrap();
    assert!(y.shape() == [2] && v[0] == -2.0 && v[1].is_nan(), "{v:?}");
    // Both axes ([0, -1]), the first row only: ReduceMin of [[1, 5, -2]] = [[-2]].
    let row = Tensor::from_f32(&[1.0, 5.0, -2.0]).reshape(vec![1, 3]).unwrap();
    let y = reduce18("ReduceMin", &row, Some(&[0, -1]), vec![]).unwrap();
    assert_eq!((y.shape(), y.to_f32_vec().unwrap()), (&[1usize, 1][..], vec![-2.0]));
    // An axis out of range names it.
    let e = reduce18("ReduceMax", &x, Some(&[2]), vec![]).unwrap_err().to_string();
    assert!(e.contains("axis 2 is out of range for rank 2"), "{e}");
}

#[test]
fn reduce18_empty_axes_and_noop_with_empty_axes() {
    let x = Tensor::from_f32(&[1.0, 5.0, -2.0, 7.0, 3.0, 0.0]).reshape(vec![2, 3]).unwrap();
    // No axes (absent or empty), noop_with_empty_axes 0: every axis, so [[7]] (keepdims) or 7.
    for axes in [None, Some(&[][..])] {
        let y = reduce18("ReduceMax", &x, axes, vec![]).unwrap();
        assert_eq!((y.shape(), y.to_f32_vec().unwrap()), (&[1usize, 1][..], vec![7.0]), "{axes:?}");
    }
    let y = reduce18("ReduceMin", &x, None, vec![int_attribute("keepdims", 0)]).unwrap();
    assert_eq!((y.shape(), y.to_f32_vec().unwrap()), (&[][..], vec![-2.0]));
    // noop_with_empty_axes 1 and no axes: the input unchanged.
    let noop = vec![int_attribute("noop_with_empty_axes", 1)];
    for axes in [None, Some(&[][..])] {
        let y = reduce18("ReduceMin", &x, axes, noop.clone()).unwrap();
        assert_eq!(y, x, "{axes:?}");
    }
    // noop_with_empty_axes 1 with axes given: those axes are reduced as usual, [[-2], [0]].
    let y = reduce18("ReduceMin", &x, Some(&[1]), noop).unwrap();
    assert_eq!((y.shape(), y.to_f32_vec().unwrap()), (&[2usize, 1][..], vec![-2.0, 0.0]));
}

#[test]
fn reduce_of_no_elements_is_the_identity_of_max_or_min() {
    // "Reduction over an empty set of values yields minus infinity (if supported by the datatype)
    // or the minimum value of the data type otherwise" (ReduceMax-18; plus infinity or the
    // maximum for ReduceMin).
    let empty = Tensor::from_f32(&[]).reshape(vec![0, 3]).unwrap();
    let y = reduce18("ReduceMax", &empty, Some(&[0]), vec![int_attribute("keepdims", 0)]).unwrap();
    assert_eq!((y.shape(), y.to_f32_vec().unwrap()), (&[3usize][..], vec![-INF; 3]));
    let y = reduce18("ReduceMin", &empty, Some(&[0]), vec![]).unwrap();
    assert_eq!((y.shape(), y.to_f32_vec().unwrap()), (&[1usize, 3][..], vec![INF; 3]));
    // INT8: -128 (0x80) and 127 (0x7F); E4M3FN has no infinity: -448 (0xFE) and 448 (0x7E).
    let empty8 = int8s(vec![2, 0], &[]);
    assert_eq!(reduce18("ReduceMax", &empty8, Some(&[1]), vec![]).unwrap().codes().unwrap(), [0x80, 0x80]);
    assert_eq!(reduce18("ReduceMin", &empty8, Some(&[1]), vec![]).unwrap().codes().unwrap(), [0x7F, 0x7F]);
    let empty_f8 = Tensor::from_codes(DType::Float8E4M3FN, vec![0, 1], &[]).unwrap();
    assert_eq!(reduce18("ReduceMax", &empty_f8, Some(&[0]), vec![]).unwrap().codes().unwrap(), [0xFE]);
    assert_eq!(reduce18("ReduceMin", &empty_f8, Some(&[0]), vec![]).unwrap().codes().unwrap(), [0x7E]);
}

#[test]
fn max_min_and_reductions_give_signed_zeros_as_numpy() {
    // numpy's maximum/minimum return the second operand when the two are equal, so +0 vs -0
    // depends on the order: max(-0, +0) = +0, max(+0, -0) = -0; a reduction keeps the later one.
    let a = Tensor::from_f32(&[-0.0, 0.0]);
    let b = Tensor::from_f32(&[0.0, -0.0]);
    for op in ["Max", "Min"] {
        let m = one_node(op, "z", &["a", "b"], vec![], 13);
        let y = only_output(run_model(&m, &[("a", a.clone()), ("b", b.clone())], &Limits::default()));
        assert_eq!(bits(&y), [0.0f32.to_bits(), (-0.0f32).to_bits()], "{op}");
    }
    let x = Tensor::from_f32(&[-0.0, 0.0, 0.0, -0.0]).reshape(vec![2, 2]).unwrap();
    for op in ["ReduceMax", "ReduceMin"] {
        let y = reduce18(op, &x, Some(&[1]), vec![]).unwrap();
        assert_eq!(bits(&y), [0.0f32.to_bits(), (-0.0f32).to_bits()], "{op}");
    }
}

// ------------------------------------------------------------------------------------------------
// The live onnx reference
// ------------------------------------------------------------------------------------------------

#[test]
fn one_node_models_match_the_onnx_reference() {
    let root = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/quant_runner"));
    let dirs = test_dirs(&[root]).unwrap();
    let failed: Vec<(String, String)> = dirs
        .iter()
        .map(|d| run_test(d, Profile::OnnxReference, Tolerance::Exact))
        .filter_map(|o| o.failure.map(|f| (o.name, f)))
        .collect();
    assert_eq!(failed, Vec::<(String, String)>::new());
    assert!(dirs.len() >= 42, "{}", dirs.len());
}
