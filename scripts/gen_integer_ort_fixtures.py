#!/usr/bin/env python3
"""Records onnxruntime's MatMulNBits weight quantization into tests/data/integer/ort/cases.json,
read by tests/integer_ort.rs.

Peer: onnxruntime 1.31.1 (CPU) with onnx and onnx-ir (the quantizer imports it):

    python3 -m venv target/ort-venv
    target/ort-venv/bin/pip install onnxruntime==1.31.1 onnx onnx-ir ml_dtypes numpy
    target/ort-venv/bin/python scripts/gen_integer_ort_fixtures.py

Per case a weight W of shape (N, K) = (out_features, in_features) becomes the initializer
B = W^T (K, N) of a MatMul, which `MatMulNBitsQuantizer` (its default algorithm: the C++
`quantize_matmul_4bits` / `_8bits`) turns into a `com.microsoft.MatMulNBits` node; the case holds
the node's B, scales and zero_points (absent for symmetric quantization) as hex, or the peer's
exception. The dequantized weight is what the node multiplies by: the model run on A = the
identity (K, K) gives Y = W_deq^T, exactly (one product per sum, the others zero) except for the
sign of zero, which a sum of products does not keep: the cases record `Y` and tests compare every
element, a zero by value. `dequantize` cases hold random B bytes, scales and zero points fed to
the node directly.
"""

import json
import os
import sys

import ml_dtypes
import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper
from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "integer", "ort")
NP = {"FLOAT": np.float32, "FLOAT16": np.float16, "BFLOAT16": ml_dtypes.bfloat16}
PROTO = {"FLOAT": TensorProto.FLOAT, "FLOAT16": TensorProto.FLOAT16, "BFLOAT16": TensorProto.BFLOAT16}


def bits_of(a: np.ndarray) -> str:
    return np.ascontiguousarray(a).tobytes().hex()


def matmul_model(b: np.ndarray, dtype: str) -> onnx.ModelProto:
    k, n = b.shape
    a = helper.make_tensor_value_info("A", PROTO[dtype], [None, k])
    y = helper.make_tensor_value_info("Y", PROTO[dtype], [None, n])
    init = numpy_helper.from_array(b, "B") if dtype != "BFLOAT16" else helper.make_tensor(
        "B", TensorProto.BFLOAT16, [k, n], b.view(np.uint16).tobytes(), raw=True)
    graph = helper.make_graph([helper.make_node("MatMul", ["A", "B"], ["Y"])], "g", [a], [y], [init])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)


def run_identity(model: onnx.ModelProto, k: int, dtype: str) -> np.ndarray:
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    sess = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    return sess.run(None, {"A": np.eye(k, dtype=NP[dtype])})[0]


def nbits_node_model(k: int, n: int, bits: int, block: int, b: np.ndarray, scales: np.ndarray,
                     zero_points, dtype: str) -> onnx.ModelProto:
    a = helper.make_tensor_value_info("A", PROTO[dtype], [None, k])
    y = helper.make_tensor_value_info("Y", PROTO[dtype], [None, n])
    inits = [numpy_helper.from_array(b, "Bq"), numpy_helper.from_array(scales, "scales")]
    inputs = ["A", "Bq", "scales"]
    if zero_points is not None:
        inits.append(numpy_helper.from_array(zero_points, "zp"))
        inputs.append("zp")
    node = helper.make_node("MatMulNBits", inputs, ["Y"], domain="com.microsoft", K=k, N=n, bits=bits,
                            block_size=block)
    graph = helper.make_graph([node], "g", [a], [y], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21),
                                                   helper.make_opsetid("com.microsoft", 1)], ir_version=10)


def quantize_case(name: str, w: np.ndarray, dtype: str, bits: int, block: int, sym: bool) -> dict:
    """w: float32 (N, K), rounded to `dtype` first."""
    wd = w.astype(NP[dtype])
    n, k = wd.shape
    case = {"name": name, "kind": "quantize", "dtype": dtype, "bits": bits, "block": block, "sym": sym,
            "shape": [n, k], "input": bits_of(wd)}
    try:
        q = MatMulNBitsQuantizer(matmul_model(np.ascontiguousarray(wd.T), dtype), bits=bits, block_size=block,
                                 is_symmetric=sym)
        q.process()
        model = q.model.model
    except Exception as e:  # noqa: BLE001 - a refusal is the peer's answer
        case["refusal"] = {"type": type(e).__name__, "message": str(e)}
        return case
    nodes = [x for x in model.graph.node if x.op_type == "MatMulNBits"]
    if not nodes:
        case["refusal"] = {"type": "NotQuantized", "message": "the quantizer left the MatMul as it was"}
        return case
    inits = {t.name: t for t in model.graph.initializer}
    node = nodes[0]
    b = numpy_helper.to_array(inits[node.input[1]])
    s_proto = inits[node.input[2]]
    s = numpy_helper.to_array(s_proto)
    case.update(B=bits_of(b), B_shape=list(b.shape), scales=bits_of(s.view(np.uint16) if dtype == "BFLOAT16" else s),
                scales_shape=list(s.shape), scales_dtype=onnx.helper.tensor_dtype_to_np_dtype(s_proto.data_type).name
                if s_proto.data_type != TensorProto.BFLOAT16 else "bfloat16")
    if len(node.input) > 3 and node.input[3]:
        zp = numpy_helper.to_array(inits[node.input[3]])
        case.update(zero_points=bits_of(zp), zero_points_shape=list(zp.shape))
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    case["attributes"] = {k2: attrs[k2] for k2 in ("K", "N", "bits", "block_size")}
    if dtype != "BFLOAT16":
        y = run_identity(model, k, dtype)
        case["identity_product"] = bits_of(y)
    return case


def dequantize_case(name: str, rng, dtype: str, bits: int, block: int, n: int, k: int, with_zp: bool) -> dict:
    kb = (k + block - 1) // block
    blob = block * bits // 8
    b = rng.integers(0, 256, (n, kb, blob), dtype=np.uint8)
    s = (rng.standard_normal((n, kb)) * 2.0 ** rng.integers(-10, 6, (n, kb))).astype(NP[dtype])
    zp = rng.integers(0, 256, (n, (kb * bits + 7) // 8), dtype=np.uint8) if with_zp else None
    model = nbits_node_model(k, n, bits, block, b, s, zp, dtype)
    y = run_identity(model, k, dtype)
    case = {"name": name, "kind": "dequantize", "dtype": dtype, "bits": bits, "block": block, "sym": not with_zp,
            "shape": [n, k], "B": bits_of(b), "B_shape": list(b.shape), "scales": bits_of(s),
            "scales_shape": list(s.shape), "identity_product": bits_of(y)}
    if zp is not None:
        case.update(zero_points=bits_of(zp), zero_points_shape=list(zp.shape))
    return case


def node_case(name: str, rng, dtype: str, bits: int, block: int, m: int, n: int, k: int, with_zp: bool,
              with_bias: bool) -> dict:
    """A MatMulNBits node whose every product and partial sum is exact in float32 (small integer
    A, power-of-two scales and bias): onnxruntime's result is then the exact sum rounded once,
    whatever order its kernels add in, and lowbit's runner must give the same bits."""
    kb = (k + block - 1) // block
    b = rng.integers(0, 256, (n, kb, block * bits // 8), dtype=np.uint8)
    s = (2.0 ** rng.integers(-3, 1, (n, kb)) * rng.choice([-1, 1], (n, kb))).astype(NP[dtype])
    zp = rng.integers(0, 256, (n, (kb * bits + 7) // 8), dtype=np.uint8) if with_zp else None
    a = rng.integers(-8, 9, (m, k)).astype(NP[dtype])
    model = nbits_node_model(k, n, bits, block, b, s, zp, dtype)
    inputs = {"A": a}
    if with_bias:
        bias = (rng.integers(-64, 65, n) * 0.125).astype(NP[dtype])
        node = model.graph.node[0]
        node.input.extend([""] * (5 - len(node.input)) + ["bias"])
        model.graph.initializer.append(numpy_helper.from_array(bias, "bias"))
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    sess = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    y = sess.run(None, inputs)[0]
    return {"name": name, "kind": "node", "dtype": dtype, "model": model.SerializeToString().hex(),
            "A": bits_of(a), "A_shape": [m, k], "Y": bits_of(y), "Y_shape": list(y.shape)}


def qdq_case(name: str, rng, dtype: str, sym: bool, block: int, k: int, n: int) -> dict:
    """MatMulNBitsQuantizer's QDQ form: a DequantizeLinear of INT4 (symmetric) or UINT4 weights
    blocked along K; the DequantizeLinear alone is recorded, run by onnxruntime."""
    from onnxruntime.quantization.quant_utils import QuantFormat
    w = (rng.standard_normal((k, n)) * 2.0 ** rng.integers(-4, 4, (1, n))).astype(NP[dtype])
    q = MatMulNBitsQuantizer(matmul_model(w, dtype), bits=4, block_size=block, is_symmetric=sym,
                             quant_format=QuantFormat.QDQ)
    q.process()
    model = q.model.model
    dq = [x for x in model.graph.node if x.op_type == "DequantizeLinear"][0]
    inits = [t for t in model.graph.initializer if t.name in dq.input]
    out = helper.make_tensor_value_info("W", PROTO[dtype], [k, n])
    node = helper.make_node("DequantizeLinear", list(dq.input), ["W"], **{a.name: helper.get_attribute_value(a)
                                                                          for a in dq.attribute})
    graph = helper.make_graph([node], "g", [], [out], inits)
    alone = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    sess = ort.InferenceSession(alone.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    y = sess.run(None, {})[0]
    return {"name": name, "kind": "dequantizelinear", "dtype": dtype, "model": alone.SerializeToString().hex(),
            "Y": bits_of(y), "Y_shape": list(y.shape)}


def edge_rows(k: int) -> dict:
    r = np.arange(k, dtype=np.float32)
    at = np.arange(k)
    rows = {
        "zeros": np.zeros(k),
        "negative_zeros": -np.zeros(k),
        "constant": np.full(k, 0.75),
        "constant_negative": np.full(k, -3.0),
        "positive_ramp": r + 1,
        "negative_ramp": -r - 1,
        "ties4": (at % 16) - 7.5,
        "ties_half": (at % 31) * 0.5 - 7.0,
        "nan_one": np.where(at == 3, np.nan, r),
        "inf": np.where(at == 5, np.inf, r),
        "minus_inf": np.where(at == 5, -np.inf, r),
        "huge": np.linspace(-3e38, 3.3e38, k),
        "tiny": np.linspace(-1e-38, 2e-38, k),
        "subnormal": np.linspace(0, 1e-44, k),
        "half_max": np.linspace(-65504, 65504, k),
        "big_for_half": np.linspace(-1e6, 1e6, k),
    }
    return {name: v.astype(np.float32) for name, v in rows.items()}


def main() -> int:
    rng = np.random.default_rng(20261128)
    cases = []
    for bits in (4, 8):
        for block in (16, 32, 128):
            for sym in (False, True):
                k = 96 if block < 128 else 256
                w = (rng.standard_normal((4, k)) * 2.0 ** rng.integers(-6, 6, (4, 1))).astype(np.float32)
                cases.append(quantize_case(f"random_b{bits}_blk{block}_{'sym' if sym else 'asym'}", w, "FLOAT",
                                           bits, block, sym))
        for sym in (False, True):
            w = rng.standard_normal((3, 80)).astype(np.float32)  # K = 80: padded to 3 blocks of 32
            cases.append(quantize_case(f"padded_b{bits}_{'sym' if sym else 'asym'}", w, "FLOAT", bits, 32, sym))
            for k in (77, 33):  # odd K: the 4-bit packing's stale nibble after the last element
                w = rng.standard_normal((2, k)).astype(np.float32)
                cases.append(quantize_case(f"odd_k{k}_b{bits}_{'sym' if sym else 'asym'}", w, "FLOAT", bits, 16, sym))
            w = rng.standard_normal((3, 64)).astype(np.float32)
            cases.append(quantize_case(f"random_b{bits}_f16_{'sym' if sym else 'asym'}", w, "FLOAT16", bits, 32, sym))
            cases.append(quantize_case(f"random_b{bits}_bf16_{'sym' if sym else 'asym'}", w, "BFLOAT16", bits, 32, sym))
    for dtype in ("FLOAT", "FLOAT16"):
        for bits in (4, 8):
            for sym in (False, True):
                edge = edge_rows(32)
                w = np.stack(list(edge.values()))
                cases.append(quantize_case(f"edge_b{bits}_{dtype}_{'sym' if sym else 'asym'}[{','.join(edge)}]", w,
                                           dtype, bits, 16, sym))
    for dtype in ("FLOAT", "FLOAT16"):
        for bits in (4, 8):
            for with_zp in (True, False):
                cases.append(dequantize_case(f"dequantize_b{bits}_{dtype}_{'zp' if with_zp else 'nozp'}", rng, dtype,
                                             bits, 16, 3, 48, with_zp))
    for dtype in ("FLOAT", "FLOAT16"):
        for bits in (4, 8):
            for with_zp, with_bias in ((True, False), (False, True)):
                cases.append(node_case(f"node_b{bits}_{dtype}_{'zp' if with_zp else 'nozp'}"
                                       f"{'_bias' if with_bias else ''}", rng, dtype, bits, 32, 5, 6, 80, with_zp,
                                       with_bias))
    for dtype in ("FLOAT", "FLOAT16"):
        for sym in (True, False):
            cases.append(qdq_case(f"qdq_int4_{dtype}_{'sym' if sym else 'asym'}", rng, dtype, sym, 32, 64, 5))
    os.makedirs(OUT, exist_ok=True)
    doc = {"peer": f"onnxruntime {ort.__version__} (CPU)", "script": "scripts/gen_integer_ort_fixtures.py",
           "cases": cases}
    with open(os.path.join(OUT, "cases.json"), "w") as f:
        json.dump(doc, f, indent=0)
    print(f"{len(cases)} cases -> {OUT}/cases.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
