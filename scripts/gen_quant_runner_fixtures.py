#!/usr/bin/env python3
"""Writes the fixtures of tests/quant_runner_ops.rs: one-node models of the ops the expanded
DynamicQuantizeLinear body uses (Clip, Max, Min, Round, ReduceMax, ReduceMin), at the opsets
where their inputs and attributes changed, with the onnx reference's outputs.

Optional: not part of `cargo test` (the fixtures are committed). Needs the peers' venv
(`PY=$(bash scripts/peers-venv.sh)`, onnx 1.23.2). Usage: "$PY" scripts/gen_quant_runner_fixtures.py

Layout (the ONNX node-test one, read by `lowbit::onnx::conformance::run_test`):
    tests/data/quant_runner/<case>/model.onnx
    tests/data/quant_runner/<case>/test_data_set_0/input_<K>.pb, output_0.pb
"""
import pathlib
import shutil
import sys

import numpy as np
import onnx
from onnx import TensorProto as T, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "data" / "quant_runner"
ELEM = {np.dtype(np.float32): T.FLOAT, np.dtype(np.float16): T.FLOAT16, np.dtype(np.float64): T.DOUBLE,
        np.dtype(np.int8): T.INT8, np.dtype(np.int32): T.INT32, np.dtype(np.int64): T.INT64,
        np.dtype(np.uint8): T.UINT8}

NAN, INF = float("nan"), float("inf")
# Bounds, NaN, infinities, signed zeros, values either side of the bounds.
SPECIALS = [-INF, INF, NAN, -3e38, 3e38, -2.5, -1.0, -0.0, 0.0, 0.999, 1.0, 2.0, 2.0000002, 7.5]


def f32(values):
    return np.array(values, dtype=np.float32)


def case(name, op, opset, inputs, attrs=None, input_names=None):
    """One model: graph inputs are the given arrays (None leaves an optional input out)."""
    names = input_names or [f"i{k}" for k in range(len(inputs))]
    node_inputs = ["" if a is None else n for n, a in zip(names, inputs)]
    while node_inputs and node_inputs[-1] == "":
        node_inputs.pop()
    given = [(n, a) for n, a in zip(names, inputs) if a is not None]
    graph = helper.make_graph(
        [helper.make_node(op, node_inputs, ["y"], **(attrs or {}))], name,
        [helper.make_tensor_value_info(n, ELEM[a.dtype], a.shape) for n, a in given],
        [helper.make_tensor_value_info("y", ELEM[given[0][1].dtype], None)])
    opsets = [helper.make_opsetid("", opset)]
    model = helper.make_model(graph, opset_imports=opsets)
    model.ir_version = helper.find_min_ir_version_for(opsets)
    (y,) = ReferenceEvaluator(model).run(None, {n: a for n, a in given})
    y = np.asarray(y)
    if y.dtype != given[0][1].dtype:
        raise RuntimeError(f"{name}: the reference gave {y.dtype}")
    d = OUT / name
    (d / "test_data_set_0").mkdir(parents=True)
    onnx.save(model, d / "model.onnx")
    for k, (n, a) in enumerate(given):
        (d / "test_data_set_0" / f"input_{k}.pb").write_bytes(numpy_helper.from_array(a, n).SerializeToString())
    (d / "test_data_set_0" / "output_0.pb").write_bytes(numpy_helper.from_array(y, "y").SerializeToString())
    print(f"{name}: {y.dtype}{list(y.shape)}", file=sys.stderr)


def main():
    if OUT.exists():
        shutil.rmtree(OUT)
    x = f32(SPECIALS)
    # Clip-6: the bounds are float attributes, defaulting to float32's lowest and largest.
    case("clip6_bounds", "Clip", 6, [x], {"min": -1.0, "max": 2.0})
    case("clip6_default_bounds", "Clip", 6, [x])
    case("clip6_min_only", "Clip", 6, [x], {"min": 0.5})
    case("clip6_max_only", "Clip", 6, [x], {"max": -0.0})
    case("clip6_nan_min", "Clip", 6, [x], {"min": NAN, "max": 1.0})
    case("clip6_min_above_max", "Clip", 6, [x], {"min": 3.0, "max": 1.0})
    case("clip6_float16_default_bounds", "Clip", 6, [np.array(SPECIALS[:3] + [-65504, 65504, 1.5], np.float16)])
    case("clip6_double_default_bounds", "Clip", 6, [np.array(SPECIALS, np.float64)])
    case("clip6_double_bounds", "Clip", 6, [np.array([0.1, 0.3, 0.2, 1e300], np.float64)], {"min": 0.2, "max": 1e30})
    # Clip-11 and later: the bounds are optional scalar inputs of the input's type.
    case("clip11_bounds", "Clip", 11, [x, f32(-1.0).reshape(()), f32(2.0).reshape(())])
    case("clip11_max_only", "Clip", 11, [x, None, f32(0.5).reshape(())])
    case("clip13_nan_bound", "Clip", 13, [x, f32(NAN).reshape(()), f32(1.0).reshape(())])
    case("clip13_int8", "Clip", 13, [np.array([-128, -5, 0, 5, 127], np.int8), np.array(-3, np.int8),
                                     np.array(4, np.int8)])
    # Max / Min: several operands, broadcasting, NaN propagating, signed zeros.
    a = f32([[NAN, 1.0, -0.0, 0.0, -INF, 2.5]])
    b = f32([[0.0], [NAN], [-1.0]])
    case("max13_broadcast_nan", "Max", 13, [a, b])
    case("min13_broadcast_nan", "Min", 13, [a, b])
    case("max13_three", "Max", 13, [f32([1, 5, -2]), f32([3, 2, -7]), f32([0, 6, -3])])
    case("min13_one", "Min", 13, [f32([1, NAN, -0.0])])
    case("max13_signed_zeros", "Max", 13, [f32([-0.0, 0.0, -0.0, 0.0]), f32([0.0, -0.0, -0.0, 0.0])])
    case("min13_signed_zeros", "Min", 13, [f32([-0.0, 0.0, -0.0, 0.0]), f32([0.0, -0.0, -0.0, 0.0])])
    case("max13_int32", "Max", 13, [np.array([-2**31, 7, 0], np.int32), np.array([5], np.int32)])
    # Round: half to even, signed zeros, specials, the float32 integers.
    case("round11", "Round", 11, [f32([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999997, -0.0, 0.3, -0.3, NAN,
                                       INF, -INF, 8388607.5, 8388609.0, 3e38])])
    case("round11_float16", "Round", 11, [np.array([0.5, 1.5, 2.5, -0.5, 1023.5, 2047.0, 65504.0], np.float16)])
    # ReduceMax / ReduceMin 18: axes is an optional int64 input.
    cube = np.arange(24, dtype=np.float32).reshape(2, 3, 4) - 11.5
    cube[1, 2, 3] = NAN
    cube[0, 1, 0] = -0.0
    axes = lambda *a: np.array(a, np.int64)
    case("reducemax18_axis1_keepdims", "ReduceMax", 18, [cube, axes(1)])
    case("reducemin18_axis1_keepdims", "ReduceMin", 18, [cube, axes(1)])
    case("reducemax18_two_axes_nokeep", "ReduceMax", 18, [cube, axes(-1, 0)], {"keepdims": 0})
    case("reducemin18_two_axes_nokeep", "ReduceMin", 18, [cube, axes(0, 2)], {"keepdims": 0})
    case("reducemax18_no_axes", "ReduceMax", 18, [cube])
    case("reducemin18_no_axes_nokeep", "ReduceMin", 18, [cube], {"keepdims": 0})
    case("reducemax18_empty_axes", "ReduceMax", 18, [cube, axes()])
    case("reducemax18_empty_axes_noop", "ReduceMax", 18, [cube, axes()], {"noop_with_empty_axes": 1})
    case("reducemin18_no_axes_noop", "ReduceMin", 18, [cube], {"noop_with_empty_axes": 1})
    case("reducemin18_axes_with_noop", "ReduceMin", 18, [cube, axes(2)], {"noop_with_empty_axes": 1})
    case("reducemax18_empty_input", "ReduceMax", 18, [np.zeros((0, 3), np.float32), axes(0)], {"keepdims": 0})
    case("reducemin18_empty_input", "ReduceMin", 18, [np.zeros((2, 0), np.float32), axes(1)])
    case("reducemax18_empty_input_int32", "ReduceMax", 18, [np.zeros((0, 2), np.int32), axes(0)])
    case("reducemin18_empty_input_uint8", "ReduceMin", 18, [np.zeros((0, 2), np.uint8), axes(0)])
    case("reducemax18_signed_zeros", "ReduceMax", 18, [f32([[-0.0, 0.0], [0.0, -0.0]]), axes(1)])
    case("reducemin18_signed_zeros", "ReduceMin", 18, [f32([[-0.0, 0.0], [0.0, -0.0]]), axes(1)])
    case("reducemax18_int8", "ReduceMax", 18, [np.array([[-128, 5], [3, -7]], np.int8), axes(0)])
    case("reducemin18_scalar", "ReduceMin", 18, [f32(3.5).reshape(())])
    # Before 18: axes is an attribute.
    case("reducemax13_axes_attribute", "ReduceMax", 13, [cube], {"axes": [1], "keepdims": 0})
    case("reducemin11_no_axes", "ReduceMin", 11, [cube])
    (OUT / "README.md").write_text(
        "Written by scripts/gen_quant_runner_fixtures.py: one-node models with the outputs of the onnx\n"
        f"reference (onnx {onnx.__version__}, numpy {np.__version__}); checked by tests/quant_runner_ops.rs.\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
