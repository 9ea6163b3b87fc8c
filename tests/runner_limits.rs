//! The graph runner's budgets, freeing and scheduling: models that ask for unbounded memory or
//! work stop quickly with an `OverBudget` error naming the node and the budget; intermediates are
//! freed after their last consumer (a long chain runs in flat memory); nodes are ordered in linear
//! time (a long chain stored in reverse order runs at once).

#[path = "support/models.rs"]
mod models;

use lowbit::onnx::limits::Limits;
use lowbit::onnx::proto::{GraphProto, ModelProto};
use lowbit::onnx::runner::{Model, RunStats};
use lowbit::BudgetKind;
use lowbit::Profile;
use lowbit::{DType, Error, Tensor};
use models::*;
use prost::Message;
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// Far more than any of these runs needs; only there so that a regression fails instead of hanging.
const GUARD: Duration = Duration::from_secs(60);

fn limits(max_memory: u64, max_work: u64) -> Limits {
    Limits { max_memory, max_work, max_input_bytes: 1 << 30 }
}

fn load(m: &ModelProto) -> Model {
    Model::from_bytes(&m.encode_to_vec()).unwrap()
}

fn run(
    m: &ModelProto,
    inputs: &[(&str, Tensor)],
    limits: &Limits,
) -> lowbit::Result<(Vec<(String, Tensor)>, RunStats)> {
    let inputs: HashMap<String, Tensor> = inputs.iter().map(|(n, t)| (n.to_string(), t.clone())).collect();
    let start = Instant::now();
    let result = load(m).run_measured(&inputs, Profile::Spec, limits);
    assert!(start.elapsed() < GUARD, "took {:?}", start.elapsed());
    result
}

/// Asserts an `OverBudget` error of `kind` whose node description contains `node`.
fn assert_over(result: lowbit::Result<(Vec<(String, Tensor)>, RunStats)>, kind: BudgetKind, node: &str) -> Error {
    let err = result.expect_err("the run should go over its budget");
    match &err {
        Error::OverBudget { budget, node: site, .. } => {
            assert_eq!(*budget, kind, "{err}");
            assert!(site.contains(node), "{err}");
        }
        other => panic!("expected OverBudget, got {other}"),
    }
    err
}

const MIB: u64 = 1 << 20;

#[test]
fn a_broadcast_beyond_the_memory_budget_is_an_error_naming_the_node() {
    let g = graph(vec![node("Add", "big_add", &["a", "b"], &["y"])], &["a", "b"], &["y"]);
    let a = Tensor::from_f32(&vec![1.0; 65536]).reshape(vec![65536, 1]).unwrap();
    let b = Tensor::from_f32(&vec![2.0; 32768]).reshape(vec![1, 32768]).unwrap();
    let err = assert_over(
        run(&model(g, 14), &[("a", a), ("b", b)], &limits(64 * MIB, u64::MAX)),
        BudgetKind::Memory,
        "Add node \"big_add\"",
    );
    let message = err.to_string();
    assert!(message.contains("memory budget of 67108864 bytes (--max-memory)"), "{message}");
    // 2^31 float32 elements: 8 GiB asked for.
    assert!(message.contains("needs 8589934592 more"), "{message}");
}

#[test]
fn a_gather_repeating_a_long_string_stops_at_the_memory_budget() {
    let data = Tensor::from_strings(vec![1], vec!["x".repeat(100_000)]).unwrap();
    let indices = int64s(vec![100_000], &vec![0; 100_000]);
    let g = graph(vec![node("Gather", "repeat", &["data", "indices"], &["y"])], &["data", "indices"], &["y"]);
    let result = run(&model(g, 13), &[("data", data), ("indices", indices)], &limits(64 * MIB, u64::MAX));
    assert_over(result, BudgetKind::Memory, "Gather node \"repeat\"");
}

#[test]
fn a_range_beyond_the_memory_budget_is_refused_before_it_is_allocated() {
    let g = graph(vec![node("Range", "r", &["s", "l", "d"], &["y"])], &["s", "l", "d"], &["y"]);
    let inputs = [("s", int64_scalar(0)), ("l", int64_scalar(1 << 40)), ("d", int64_scalar(1))];
    assert_over(run(&model(g, 11), &inputs, &limits(64 * MIB, u64::MAX)), BudgetKind::Memory, "Range node \"r\"");
}

#[test]
fn a_cast_to_string_is_charged_before_it_runs() {
    let g = graph(vec![cast("to_text", "x", "y", DType::String)], &["x"], &["y"]);
    let result = run(&model(g, 21), &[("x", floats(1 << 20))], &limits(16 * MIB, u64::MAX));
    assert_over(result, BudgetKind::Memory, "Cast node \"to_text\"");
}

#[test]
fn a_slice_of_strings_is_charged_by_its_contents() {
    let data = Tensor::from_strings(vec![4], vec!["y".repeat(1 << 20); 4]).unwrap();
    let g = graph(vec![node("Slice", "s", &["data", "starts", "ends"], &["y"])], &["data", "starts", "ends"], &["y"]);
    let inputs = [("data", data), ("starts", int64s(vec![1], &[0])), ("ends", int64s(vec![1], &[4]))];
    // The input is the caller's; the 4 MiB copy does not fit in 3 MiB.
    assert_over(
        run(&model(g.clone(), 13), &inputs, &limits(3 * MIB, u64::MAX)),
        BudgetKind::Memory,
        "Slice node \"s\"",
    );
    let (out, _) = run(&model(g, 13), &inputs, &limits(8 * MIB, u64::MAX)).unwrap();
    assert_eq!(out[0].1.strings().unwrap().len(), 4);
}

/// A Loop with trip count `m` whose body passes `x` (from outside) out as a scan output.
fn scanning_loop(m: i64) -> ModelProto {
    let body = GraphProto {
        node: vec![node("Identity", "pass", &["x"], &["part"])],
        input: vec![value("i"), value("c_in")],
        output: vec![value("c_in"), typed_value("part", DType::Float)],
        ..GraphProto::default()
    };
    let mut g = graph(vec![loop_node("scan", "m", "", &[], &["stacked"], body)], &["m", "x"], &["stacked"]);
    g.initializer.push(named(&int64_scalar(m), "m"));
    g.input.retain(|v| v.name.as_deref() != Some("m"));
    model(g, 16)
}

#[test]
fn a_loop_scan_output_stops_at_the_memory_budget() {
    let result = run(&scanning_loop(1 << 40), &[("x", floats(256))], &limits(16 * MIB, u64::MAX));
    assert_over(result, BudgetKind::Memory, "Loop node \"scan\"");
    // A small trip count runs and stacks.
    let (out, _) = run(&scanning_loop(3), &[("x", floats(256))], &limits(16 * MIB, u64::MAX)).unwrap();
    assert_eq!(out[0].1.shape(), [3, 256]);
}

/// A Loop with trip count `m` carrying `v` through a body of `n` Add nodes (v + 1 each).
fn long_body_loop(n: usize) -> ModelProto {
    let mut nodes = vec![constant("one", "one", &Tensor::from_f32(&[1.0]))];
    for k in 0..n {
        let from = if k == 0 { "v_in".to_string() } else { format!("t{k}") };
        nodes.push(node("Add", &format!("add{k}"), &[&from, "one"], &[&format!("t{}", k + 1)]));
    }
    let last = format!("t{n}");
    let body = GraphProto {
        node: nodes,
        input: vec![value("i"), value("c_in"), value("v_in")],
        output: vec![value("c_in"), value(&last)],
        ..GraphProto::default()
    };
    let g = graph(vec![loop_node("long", "m", "", &["v"], &["v_out"], body)], &["m", "v"], &["v_out"]);
    model(g, 16)
}

#[test]
fn a_loop_with_a_hundred_node_body_stops_at_the_work_budget() {
    let m = long_body_loop(100);
    let err = assert_over(
        run(&m, &[("m", int64_scalar(1 << 60)), ("v", Tensor::from_f32(&[0.0]))], &limits(u64::MAX, 10_000_000)),
        BudgetKind::Work,
        "Loop node \"long\"",
    );
    assert!(err.to_string().contains("work budget of 10000000 elements (--max-work)"), "{err}");
    // Two iterations of the same body fit and compute 200 additions.
    let (out, stats) =
        run(&m, &[("m", int64_scalar(2)), ("v", Tensor::from_f32(&[0.0]))], &limits(u64::MAX, 10_000_000)).unwrap();
    assert_eq!(out[0].1.to_f32_vec().unwrap(), [200.0]);
    assert!(stats.work > 200 && stats.work < 100_000, "{stats:?}");
}

#[test]
fn nested_loops_share_one_work_budget() {
    // 2^24 outer iterations of 2^24 inner ones: 2^48 runs of the inner body.
    let inner_body = GraphProto {
        node: vec![node("Add", "step", &["w_in", "w_in"], &["w_out"])],
        input: vec![value("j"), value("c2"), value("w_in")],
        output: vec![value("c2"), value("w_out")],
        ..GraphProto::default()
    };
    let outer_body = GraphProto {
        node: vec![loop_node("inner", "m", "", &["v_in"], &["v_next"], inner_body)],
        input: vec![value("i"), value("c1"), value("v_in")],
        output: vec![value("c1"), value("v_next")],
        ..GraphProto::default()
    };
    let g = graph(vec![loop_node("outer", "m", "", &["v"], &["v_out"], outer_body)], &["m", "v"], &["v_out"]);
    let inputs = [("m", int64_scalar(1 << 24)), ("v", Tensor::from_f32(&[1.0]))];
    let result = run(&model(g, 16), &inputs, &limits(u64::MAX, 1 << 24));
    assert_over(result, BudgetKind::Work, "Loop node \"outer\" body: Loop node \"inner\"");
}

#[test]
fn a_loop_running_a_large_range_each_iteration_stops_at_the_work_budget() {
    let body = GraphProto {
        node: vec![node("Range", "big_range", &["zero", "n", "one"], &["r"])],
        input: vec![value("i"), value("c_in")],
        output: vec![value("c_in")],
        initializer: vec![named(&int64_scalar(0), "zero"), named(&int64_scalar(1), "one")],
        ..GraphProto::default()
    };
    let g = graph(vec![loop_node("ranges", "m", "", &[], &[], body)], &["m", "n"], &[]);
    let inputs = [("m", int64_scalar(1 << 40)), ("n", int64_scalar(1 << 20))];
    let result = run(&model(g, 11), &inputs, &limits(u64::MAX, 1 << 25));
    assert_over(result, BudgetKind::Work, "Loop node \"ranges\"");
}

/// A chain of `n` nodes made by `link(k, from, to)`, from input `x` to output `y`, stored in file
/// order or reversed.
fn chain(n: usize, reversed: bool, link: impl Fn(usize, &str, &str) -> lowbit::onnx::proto::NodeProto) -> ModelProto {
    let name = |k: usize| {
        if k == 0 {
            "x".to_string()
        } else if k == n {
            "y".to_string()
        } else {
            format!("v{k}")
        }
    };
    let mut nodes: Vec<_> = (0..n).map(|k| link(k, &name(k), &name(k + 1))).collect();
    if reversed {
        nodes.reverse();
    }
    model(graph(nodes, &["x"], &["y"]), 21)
}

#[test]
fn a_chain_of_4000_identities_on_a_1_mb_tensor_runs_in_flat_memory() {
    let m = chain(4000, false, |k, from, to| node("Identity", &format!("id{k}"), &[from], &[to]));
    let x = floats(1 << 18);
    let (out, stats) = run(&m, &[("x", x.clone())], &limits(16 * MIB, u64::MAX)).unwrap();
    assert_eq!(out[0].1, x);
    // Identity passes the caller's tensor on; only the final copy out of the run is charged.
    assert!(stats.peak_memory <= 2 * MIB, "{stats:?}");
}

#[test]
fn a_chain_of_4000_casts_frees_each_intermediate_after_its_consumer() {
    // Alternating float -> double -> float: every node makes a new 1 or 2 MiB tensor.
    let m = chain(4000, false, |k, from, to| {
        cast(&format!("c{k}"), from, to, if k % 2 == 0 { DType::Double } else { DType::Float })
    });
    let x = floats(1 << 18);
    let (out, stats) = run(&m, &[("x", x.clone())], &limits(16 * MIB, u64::MAX)).unwrap();
    assert_eq!(out[0].1, x);
    // At most an input, its output and the charge for the output: well under 4000 MiB.
    assert!(stats.peak_memory <= 6 * MIB, "{stats:?}");
    // Kept until the end, the intermediates would need 6000 MiB: the budget proves they are not.
}

#[test]
fn a_chain_of_100000_nodes_stored_in_reverse_order_runs() {
    let m = chain(100_000, true, |k, from, to| node("Identity", &format!("id{k}"), &[from], &[to]));
    let x = Tensor::from_f32(&[1.5, -2.0]);
    let start = Instant::now();
    let (out, _) = run(&m, &[("x", x.clone())], &Limits::default()).unwrap();
    assert_eq!(out[0].1, x);
    eprintln!("reversed 100,000-node chain: {:?}", start.elapsed());
}

#[test]
fn a_cycle_is_an_error_naming_a_node_in_it() {
    let g =
        graph(vec![node("Identity", "a", &["x", "q"], &["p"]), node("Identity", "b", &["p"], &["q"])], &["x"], &["q"]);
    let err = run(&model(g, 21), &[("x", floats(1))], &Limits::default()).unwrap_err().to_string();
    assert!(err.contains("Identity node \"a\"") && err.contains("cycle") && err.contains("\"q\""), "{err}");
}

#[test]
fn a_loop_waits_for_the_outer_values_its_body_reads() {
    // The body reads `offset`, produced by a node stored after the Loop.
    let body = GraphProto {
        node: vec![node("Add", "shift", &["v_in", "offset"], &["v_out"])],
        input: vec![value("i"), value("c_in"), value("v_in")],
        output: vec![value("c_in"), value("v_out")],
        ..GraphProto::default()
    };
    let g = graph(
        vec![loop_node("l", "m", "", &["v"], &["y"], body), node("Add", "make_offset", &["v", "v"], &["offset"])],
        &["m", "v"],
        &["y"],
    );
    let (out, _) =
        run(&model(g, 16), &[("m", int64_scalar(3)), ("v", Tensor::from_f32(&[1.0]))], &Limits::default()).unwrap();
    // v = 1, offset = 2: 1 + 3 * 2.
    assert_eq!(out[0].1.to_f32_vec().unwrap(), [7.0]);
}

#[test]
fn a_value_read_by_several_nodes_lives_until_the_last_one() {
    let g = graph(
        vec![
            node("Add", "double", &["x", "x"], &["d"]),
            node("Relu", "r", &["d"], &["r"]),
            node("Sub", "back", &["d", "x"], &["e"]),
            node("Add", "sum", &["r", "e"], &["y"]),
        ],
        &["x"],
        &["y", "d"],
    );
    let (out, _) = run(&model(g, 14), &[("x", Tensor::from_f32(&[1.0, -2.0]))], &Limits::default()).unwrap();
    assert_eq!(out[0].1.to_f32_vec().unwrap(), [3.0, -2.0]);
    assert_eq!(out[1].1.to_f32_vec().unwrap(), [2.0, -4.0]);
}

#[test]
fn an_output_that_is_an_input_or_repeated_is_copied_within_the_budget() {
    let g = graph(vec![node("Identity", "i", &["x"], &["y"])], &["x"], &["y", "y", "x"]);
    let x = floats(1 << 18);
    let (out, _) = run(&model(g.clone(), 21), &[("x", x.clone())], &limits(16 * MIB, u64::MAX)).unwrap();
    assert!(out.iter().all(|(_, t)| *t == x));
    assert_over(run(&model(g, 21), &[("x", x)], &limits(MIB / 2, u64::MAX)), BudgetKind::Memory, "graph outputs");
}
