#!/usr/bin/env python3
"""Compares lowbit's QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear with the onnx
reference and onnxruntime, bit for bit, on random models.

Optional: not part of `cargo test`. Needs `cargo build --release` and a venv with
    pip install numpy==2.4.6 ml_dtypes==0.6.0 onnx==1.23.2 onnxruntime==1.31.1 (scripts/peers-venv.sh)
Usage: python scripts/crosscheck_quant.py [--cases N] [--only OP] [--write-fixtures] [--specials-paths]

Each case is a model whose inputs are Constant nodes, run in the reference evaluator (every
version, 10 to 28), in onnxruntime (optimisations off; it loads opsets up to 25) and with
`lowbit run --profile <the one named after it>`. A peer's exception counts only when it is a
refusal declared in REFUSALS (its type and message; lowbit gives `spec`'s answer there by design):
that case is reported as refused, not compared; any other exception is a difference. It prints the
cases compared per op and peer, and exits 1 on any difference and when nothing was compared (a
typo in --only). With --write-fixtures, the first cases of each op that a peer runs are written
to tests/data/quant/<profile>/<case>/ in the node-test layout (model.onnx,
test_data_set_0/output_K.pb with the peer's outputs), which tests/quant_fixtures.rs checks.
"""
import argparse
import collections
import ctypes
import pathlib
import shutil
import subprocess
import sys
import tempfile

import ml_dtypes
import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto as T, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import crosscheck_common as cc

ROOT = pathlib.Path(__file__).resolve().parent.parent
LOWBIT = cc.lowbit_path()
FIXTURES = ROOT / "tests" / "data" / "quant"

VERSIONS = [10, 13, 19, 21, 23, 24, 25, 28]
NP = {
    T.FLOAT: np.float32, T.FLOAT16: np.float16, T.BFLOAT16: ml_dtypes.bfloat16, T.INT32: np.int32,
    T.INT8: np.int8, T.UINT8: np.uint8, T.INT16: np.int16, T.UINT16: np.uint16,
    T.INT4: ml_dtypes.int4, T.UINT4: ml_dtypes.uint4, T.INT2: ml_dtypes.int2, T.UINT2: ml_dtypes.uint2,
    T.FLOAT8E4M3FN: ml_dtypes.float8_e4m3fn, T.FLOAT8E4M3FNUZ: ml_dtypes.float8_e4m3fnuz,
    T.FLOAT8E5M2: ml_dtypes.float8_e5m2, T.FLOAT8E5M2FNUZ: ml_dtypes.float8_e5m2fnuz,
    T.FLOAT4E2M1: ml_dtypes.float4_e2m1fn, T.FLOAT6E2M3: ml_dtypes.float6_e2m3fn,
    T.FLOAT6E3M2: ml_dtypes.float6_e3m2fn, T.FLOAT8E8M0: ml_dtypes.float8_e8m0fnu,
}
INTEGERS = {T.INT8: (-128, 127), T.UINT8: (0, 255), T.INT16: (-32768, 32767), T.UINT16: (0, 65535),
            T.INT4: (-8, 7), T.UINT4: (0, 15), T.INT2: (-2, 1), T.UINT2: (0, 3)}


def allowed(op, version):
    """The type constraints of the version, from onnx's own schema."""
    s = onnx.defs.get_schema(op, version)
    names = {tc.type_param_str: [getattr(T, t[len("tensor("):-1].upper()) for t in tc.allowed_type_strs] for tc in s.type_constraints}
    return s, names


def input_types(op, version):
    s, tc = allowed(op, version)
    def types(i):
        ts = s.inputs[i].type_str
        return tc[ts] if ts in tc else [getattr(T, ts[len("tensor("):-1].upper())]
    return [types(i) for i in range(len(s.inputs))], s.inputs

ort.set_default_logger_severity(3)  # its warnings about declared output shapes are not results

# What each peer raises where it has no behaviour (observed with the pinned versions).
REFUSALS = {
    # The reference evaluator implements DequantizeLinear from version 19 on only.
    "onnx-reference": [
        cc.Refusal("no kernel", "RuntimeError",
                   r"^No implementation for operator 'DequantizeLinear' domain '' and version (10|13), found 19"),
    ],
    "onnxruntime": [
        # No CPU kernel for the type combination (float8 with some scales, int2/uint2, float4, ...).
        cc.Refusal("no kernel", "NotImplemented", r"NOT_IMPLEMENTED : (Could not find an implementation|Failed to find "
                   r"kernel) for (Quantize|Dequantize)Linear\(\d+\)"),
        # A float16 x with a float32 scale (or the reverse) fails at run time.
        cc.Refusal("no kernel", "Fail", r"running QuantizeLinear node.* Tensor type mismatch\."),
        # A blocked layout whose scale has one element is refused as per-tensor.
        cc.Refusal("no kernel", "Fail", r"running QuantizeLinear node.* block_size must be 0 for per-tensor "
                   r"quantization\."),
    ],
}


def model(op, consts, attrs, opset, outputs):
    nodes, names = [], []
    for i, a in enumerate(consts):
        if a is None:
            names.append("")
            continue
        nodes.append(helper.make_node("Constant", [], [f"c{i}"], value=numpy_helper.from_array(a)))
        names.append(f"c{i}")
    while names and names[-1] == "":
        names.pop()
    nodes.append(helper.make_node(op, names, outputs, **attrs))
    g = helper.make_graph(nodes, "g", [], [onnx.ValueInfoProto(name=o) for o in outputs])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 11 if opset >= 25 else 10 if opset >= 23 else 8
    return m


def x_values(rng, dtype, n, scale):
    """Float inputs: quotients around small integers and halfway points, plus specials."""
    kind = rng.integers(4)
    if kind == 0:
        v = rng.standard_normal(n) * 40 * scale
    elif kind == 1:
        v = (rng.integers(-300, 300, n) + rng.choice([0.5, -0.5, 0.25, 0.0], n)) * scale
    elif kind == 2:
        v = rng.standard_normal(n) * 3 * scale
    else:
        v = rng.standard_normal(n) * 1e6 * scale
    if rng.random() < 0.3:
        specials = [np.inf, -np.inf, np.nan, 3e9, -3e9, 1e38, -0.0, 65504.0, 70000.0]
        idx = rng.integers(0, n, max(1, n // 6))
        v[idx] = rng.choice(specials, len(idx))
    if dtype == np.int32:
        v = np.nan_to_num(v, nan=0, posinf=2**31 - 1, neginf=-(2**31))
        return np.clip(np.rint(v), -(2**31), 2**31 - 1).astype(np.int32)
    return v.astype(dtype)


def scale_values(rng, dtype, count):
    if dtype == T.FLOAT8E8M0:
        return np.exp2(rng.integers(-6, 4, count).astype(np.float64)).astype(ml_dtypes.float8_e8m0fnu)
    if dtype == T.INT32:
        return rng.integers(1, 5, count).astype(np.int32)
    v = rng.uniform(0.01, 4, count)
    if rng.random() < 0.05:
        v[rng.integers(count)] = rng.choice([0.0, -1.5, np.nan, np.inf])
    return v.astype(NP[dtype])


def zero_values(rng, dtype, count):
    if dtype in INTEGERS:
        lo, hi = INTEGERS[dtype]
        return rng.integers(lo, hi + 1, count).astype(NP[dtype])
    if rng.random() < 0.7:
        return np.zeros(count, dtype=np.float32).astype(NP[dtype])
    return rng.choice([0.0, 0.5, 1.0, -2.0], count).astype(np.float32).astype(NP[dtype])


def layout(rng, version, shape_rank=None):
    """(x shape, scale shape, attributes) for a granularity the version has."""
    rank = shape_rank or int(rng.integers(1, 4))
    shape = [int(d) for d in rng.integers(1, 7, rank)]
    modes = ["tensor"] + (["axis"] if version >= 13 else []) + (["blocked"] if version >= 21 else [])
    mode = modes[rng.integers(len(modes))]
    if mode == "tensor":
        return shape, ([] if rng.random() < 0.7 else [1]), {}
    axis = int(rng.integers(-rank, rank))
    a = axis % rank
    if mode == "axis":
        return shape, [shape[a]], {"axis": axis}
    block = int(rng.integers(1, 4))
    s = list(shape)
    s[a] = -(-shape[a] // block)
    return shape, s, {"axis": axis, "block_size": block}


def quantize_cases(rng, n):
    for _ in range(n):
        v = VERSIONS[rng.integers(len(VERSIONS))]
        types, _ = input_types("QuantizeLinear", v)
        xt = types[0][rng.integers(len(types[0]))]
        st = xt if v in (19, 21) else types[1][rng.integers(len(types[1]))]
        zt = types[2][rng.integers(len(types[2]))]
        shape, sshape, attrs = layout(rng, v)
        count = int(np.prod(sshape)) if sshape else 1
        scale = scale_values(rng, st, count).reshape(sshape)
        base = float(np.abs(np.asarray(scale, dtype=np.float64)).reshape(-1)[0]) if count else 1.0
        base = base if np.isfinite(base) and base > 0 else 1.0
        x = x_values(rng, NP[xt], int(np.prod(shape)), base).reshape(shape)
        consts = [x, scale]
        if v >= 21 and rng.random() < 0.3:
            attrs["output_dtype"] = zt
        else:
            consts.append(zero_values(rng, zt, count).reshape(sshape))
        if v >= 19 and zt in (T.FLOAT8E4M3FN, T.FLOAT8E4M3FNUZ, T.FLOAT8E5M2, T.FLOAT8E5M2FNUZ) and rng.random() < 0.4:
            attrs["saturate"] = 0
        if v >= 23 and rng.random() < 0.15:
            attrs["precision"] = int(rng.choice([T.FLOAT, T.FLOAT16, T.BFLOAT16]))
        yield "QuantizeLinear", consts, attrs, v, ["y"]


def dequantize_cases(rng, n):
    for _ in range(n):
        v = VERSIONS[rng.integers(len(VERSIONS))]
        types, _ = input_types("DequantizeLinear", v)
        xt = types[0][rng.integers(len(types[0]))]
        st = types[1][rng.integers(len(types[1]))]
        shape, sshape, attrs = layout(rng, v)
        count = int(np.prod(sshape)) if sshape else 1
        total = int(np.prod(shape))
        if xt in INTEGERS:
            lo, hi = INTEGERS[xt]
            x = rng.integers(lo, hi + 1, total).astype(NP[xt])
        elif xt == T.INT32:
            x = rng.integers(-(2**31), 2**31 - 1, total, dtype=np.int64).astype(np.int32)
        else:
            width = 8 if xt not in (T.FLOAT4E2M1, T.FLOAT6E2M3, T.FLOAT6E3M2) else (4 if xt == T.FLOAT4E2M1 else 6)
            codes = rng.integers(0, 2**width, total).astype(np.uint8)
            x = codes.view(NP[xt]) if width == 8 else np.array([NP[xt](0)] * total)
            if width != 8:
                x = rng.choice([-6.0, -1.5, -0.5, 0.0, 0.5, 1.0, 3.0, 4.0], total).astype(np.float32).astype(NP[xt])
        x = x.reshape(shape)
        scale = scale_values(rng, st, count).reshape(sshape)
        consts = [x, scale]
        if xt in INTEGERS or xt == T.INT32 or xt in (T.FLOAT6E2M3, T.FLOAT6E3M2, T.FLOAT4E2M1):
            if rng.random() < 0.7:
                z = zero_values(rng, xt, count) if xt != T.INT32 else rng.integers(-1000, 1000, count).astype(np.int32)
                consts.append(z.reshape(sshape))
        if v >= 23 and (st == T.FLOAT8E8M0 or rng.random() < 0.3):
            attrs["output_dtype"] = int(rng.choice([T.FLOAT, T.FLOAT16, T.BFLOAT16]))
        yield "DequantizeLinear", consts, attrs, v, ["y"]


def dynamic_cases(rng, n):
    for _ in range(n):
        shape = [int(d) for d in rng.integers(1, 6, int(rng.integers(1, 3)))]
        x = (rng.standard_normal(shape) * rng.choice([0.01, 1, 100, 1e30])).astype(np.float32)
        r = rng.random()
        if r < 0.1:
            x[...] = 0
        elif r < 0.2:
            x.reshape(-1)[0] = np.nan
        elif r < 0.3:
            x.reshape(-1)[0] = rng.choice([np.inf, -np.inf])
        elif r < 0.4:
            x = np.abs(x)
        yield "DynamicQuantizeLinear", [x], {}, 11, ["y", "y_scale", "y_zero_point"]


def row_cases(rng, n):
    """The cases behind the profile rows, always among the fixtures."""
    specials = np.array([np.inf, -np.inf, np.nan, 3e9, -3e9, 2.5, -2.5, 0.5, 1.5], dtype=np.float32)
    for zp in (np.int8(0), np.int8(-5), np.uint8(7), np.int16(-300), ml_dtypes.int4(-3)):
        yield "QuantizeLinear", [specials, np.float32(1.0), np.array(zp)], {}, 21, ["y"]
    yield "QuantizeLinear", [np.array([1.0, -2.0, 0.0], np.float32), np.float32(0.0), np.array(np.int8(1))], {}, 21, ["y"]
    # float16 quotients that round to a tie in float16 but not in float32.
    x = (rng.integers(-300, 300, 256) * 0.37).astype(np.float16)
    yield "QuantizeLinear", [x, np.array(np.float16(0.37)), np.array(np.uint8(128))], {}, 21, ["y"]
    yield "QuantizeLinear", [x.astype(np.float32), np.float32(0.37), np.array(np.int8(0))], {"precision": T.FLOAT16}, 23, ["y"]
    yield "QuantizeLinear", [specials, np.float32(0.5), np.array(ml_dtypes.float8_e4m3fn(2.0))], {}, 21, ["y"]
    yield "QuantizeLinear", [specials, np.float32(0.5), np.array(ml_dtypes.float8_e5m2(0.0))], {"saturate": 0}, 21, ["y"]
    big = rng.integers(-(2**31), 2**31 - 1, 64, dtype=np.int64).astype(np.int32)
    yield "DequantizeLinear", [big, np.float32(0.3), np.array(np.int32(12345))], {}, 21, ["y"]
    yield "DequantizeLinear", [big, np.float32(0.3)], {}, 21, ["y"]
    yield "DequantizeLinear", [rng.integers(-128, 128, 64).astype(np.int8), np.array(np.float16(0.013)), np.array(np.int8(3))], {}, 21, ["y"]
    for x in ([1.0, np.nan, 3.0, -2.0], [0.0, 0.0], [np.nan], [1.0, np.inf, -3.0], [1.0, -np.inf, 3.0]):
        yield "DynamicQuantizeLinear", [np.array(x, np.float32)], {}, 11, ["y", "y_scale", "y_zero_point"]


def specials_path_cases(rng, n):
    """QuantizeLinear of NaN, +-Inf and finite values beyond int32 (with ordinary values around
    them) along every path: x FLOAT or FLOAT16, every integer output, per-tensor, per-axis on the
    last or an earlier axis, blocked on the last axis (block 1, 2, 3) or an earlier one, zero point
    0 and not. onnxruntime 1.31.1 takes a float -> int32 step on some of these paths (the x86
    integer indefinite, then the zero point added with wraparound): QuantizeLinear-25 models,
    opset 25 being the first with INT2/UINT2."""
    specials = [np.inf, -np.inf, np.nan, 3e9, -3e9, 2147483520.0, 1e38, 2.5, -1.5, 0.5]
    layouts = [((4, 64), None, None), ((64,), 0, None), ((4, 64), 1, None), ((4, 8, 8), 1, None),
               ((4, 64), 1, 1), ((4, 64), 1, 2), ((4, 64), 1, 3), ((4, 63), 1, 2), ((64, 4), 0, 2), ((4, 8, 8), 1, 2),
               ((4, 63, 1), 1, 2), ((63,), None, None), ((7, 9), 0, None)]
    for xt in (np.float32, np.float16):
        for out in INTEGERS:
            lo, hi = INTEGERS[out]
            for shape, axis, block in layouts:
                for zp in (0, -1 if lo < 0 else 1):
                    total = int(np.prod(shape))
                    v = rng.standard_normal(total) * 3
                    v[rng.choice(total, total // 4, replace=False)] = rng.choice(specials, total // 4)
                    x = v.astype(np.float32).astype(xt).reshape(shape)
                    attrs = {}
                    if axis is None:
                        sshape = []
                    elif block is None:
                        sshape, attrs["axis"] = [shape[axis]], axis
                    else:
                        sshape = list(shape)
                        sshape[axis] = -(-shape[axis] // block)
                        attrs["axis"], attrs["block_size"] = axis, block
                    scale = np.full(sshape, 0.5, dtype=xt)
                    zero = np.full(sshape, zp).astype(NP[out])
                    yield "QuantizeLinear", [x, scale, zero], attrs, 25, ["y"]


def run_ref(m):
    """The reference evaluator's outputs as TensorProtos."""
    return [numpy_helper.from_array(np.asarray(v)) for v in ReferenceEvaluator(m).run(None, {})]


def run_ort(m):
    """onnxruntime's outputs as TensorProtos, read from its own memory (its Python binding has no
    numpy type for float8, int4 and the other narrow outputs, so they are taken as raw bytes)."""
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.intra_op_num_threads = 1
    s = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
    out = []
    for v in s.run_with_ort_values(None, {}):
        elem = getattr(T, v.data_type()[len("tensor("):-1].upper())
        shape = list(v.shape())
        n = int(np.prod(shape)) if shape else 1
        raw = ctypes.string_at(v.data_ptr(), cc.raw_len(T.DataType.Name(elem), n)) if n else b""
        out.append(helper.make_tensor("y", elem, shape, raw, raw=True))
    return out


def run_lowbit(m, profile, tmp, outputs):
    path = pathlib.Path(tmp) / "m.onnx"
    path.write_bytes(m.SerializeToString())
    out = pathlib.Path(tmp) / "out"
    shutil.rmtree(out, ignore_errors=True)
    p = subprocess.run([str(LOWBIT), "run", str(path), "--output-dir", str(out), "--profile", profile], capture_output=True)
    if p.returncode != 0:
        return None, p.stderr.decode().strip()
    return [onnx.load_tensor(str(out / f"{o}.pb")) for o in outputs], None


def canonical(t):
    """(element type, shape, ONNX raw bytes) of a TensorProto, however its data is stored."""
    a = numpy_helper.to_array(t)
    return t.data_type, list(t.dims), numpy_helper.from_array(a).raw_data


def same(ours, theirs):
    return len(ours) == len(theirs) and all(canonical(o) == canonical(t) for o, t in zip(ours, theirs))


def write_fixture(name, m, outputs, profile):
    d = FIXTURES / profile / name
    ds = d / "test_data_set_0"
    ds.mkdir(parents=True, exist_ok=True)
    (d / "model.onnx").write_bytes(m.SerializeToString())
    for k, a in enumerate(outputs):
        a = np.asarray(a)
        (ds / f"output_{k}.pb").write_bytes(numpy_helper.from_array(a).SerializeToString())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=300)
    ap.add_argument("--only", default="", help="only the ops whose name contains this")
    ap.add_argument("--specials-paths", action="store_true",
                    help="only the NaN/Inf/beyond-int32 path classes (specials_path_cases)")
    ap.add_argument("--write-fixtures", action="store_true")
    ap.add_argument("--fixtures-per-op", type=int, default=25)
    args = ap.parse_args()
    rng = np.random.default_rng(20261123)
    tally = collections.Counter()
    diffs = []
    written = collections.Counter()
    if args.write_fixtures:
        shutil.rmtree(FIXTURES, ignore_errors=True)
    with tempfile.TemporaryDirectory() as tmp:
        gens = (specials_path_cases,) if args.specials_paths else (row_cases, quantize_cases, dequantize_cases,
                                                                    dynamic_cases, specials_path_cases)
        for gen in gens:
            for case, (op, consts, attrs, opset, outputs) in enumerate(gen(rng, args.cases)):
                if args.only not in op:
                    continue
                m = model(op, consts, attrs, opset, outputs)
                for profile, runner in (("onnx-reference", run_ref), ("onnxruntime", run_ort)):
                    if profile == "onnxruntime" and opset > 25:
                        continue
                    theirs = cc.run_model(runner, m, REFUSALS[profile], f"{op} {profile}",
                                          f"{op}-{opset} {profile} {attrs}", tally, diffs)
                    if theirs is None:
                        continue
                    ours, err = run_lowbit(m, profile, tmp, outputs)
                    if ours is not None and same(ours, theirs):
                        tally[f"{op} {profile} equal"] += 1
                        row = gen is row_cases
                        if args.write_fixtures and (row or written[(op, profile)] < args.fixtures_per_op):
                            written[(op, profile)] += not row
                            # lowbit's typed tensors, just found equal byte for byte.
                            typed = [numpy_helper.to_array(o) for o in ours]
                            prefix = "row_" if row else ""
                            write_fixture(f"{prefix}{op.lower()}_{case:03d}", m, typed, profile)
                        continue
                    tally[f"{op} {profile} differ"] += 1
                    inputs = ", ".join(f"{np.asarray(c).dtype}{list(np.shape(c))}={np.asarray(c).astype(np.float64).reshape(-1)[:12].tolist()}" for c in consts)
                    got = err if ours is None else [numpy_helper.to_array(o).reshape(-1)[:12].tolist() for o in ours]
                    want = [numpy_helper.to_array(t).reshape(-1)[:12].tolist() for t in theirs]
                    diffs.append(f"{op}-{opset} {profile} {attrs} {inputs}: lowbit {got} | theirs {want}")
    for d in diffs[:40]:
        print("DIFF", d[:900])
    for k in sorted(tally):
        print(f"{k}: {tally[k]}")
    compared = sum(v for k, v in tally.items() if k.endswith(" equal") or k.endswith(" differ"))
    print(f"{compared} cases compared, {len(diffs)} differences")
    if compared == 0:
        print("FAIL: nothing was compared (a typo in --only, or a peer that refused everything)")
        return 1
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
