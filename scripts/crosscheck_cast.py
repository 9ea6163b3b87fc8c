#!/usr/bin/env python3
"""Compares `lowbit cast` with the onnx reference and onnxruntime, bit for bit.

Optional: not part of `cargo test`. Needs a virtual environment with
    pip install onnx==1.23.2 onnxruntime==1.31.1 ml_dtypes numpy
and a release build (`cargo build --release`). Usage:
    python scripts/crosscheck_cast.py [--random N] [--only SUBSTRING]

For every (source, target) pair it builds `Constant -> Cast` (the input is a constant, so float8,
int4 and friends need no input binding), runs it in the onnx ReferenceEvaluator and in
onnxruntime (graph optimisations off), and compares the raw output bytes with `lowbit cast
--profile onnx-reference` and `--profile onnxruntime`. Inputs: every bit pattern of every source
of 16 bits or fewer, and N random bit patterns of 32- and 64-bit sources (plus specials).
Implementations that raise for a pair are reported as such and skipped (lowbit's profile falls
back to `spec` there, by design).
"""
import argparse
import collections
import ctypes
import subprocess
import sys
import pathlib

import ml_dtypes
import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import onnx_dtypes  # scripts/onnx_dtypes.py

ROOT = pathlib.Path(__file__).resolve().parent.parent
LOWBIT = ROOT / "target" / "release" / "lowbit"

T = TensorProto
NP, BITS = onnx_dtypes.NP, onnx_dtypes.BITS
FIRST_VERSION = {T.BFLOAT16: 13, T.FLOAT8E4M3FN: 19, T.FLOAT8E4M3FNUZ: 19, T.FLOAT8E5M2: 19, T.FLOAT8E5M2FNUZ: 19,
                 T.INT4: 21, T.UINT4: 21, T.FLOAT4E2M1: 23, T.FLOAT8E8M0: 24, T.INT2: 25, T.UINT2: 25,
                 T.FLOAT6E2M3: 28, T.FLOAT6E3M2: 28}


def name(t):
    return T.DataType.Name(t)


def raw_len(t, n):
    return (n * BITS[t] + 7) // 8


def inputs_for(src, random_n, rng):
    """Bit patterns (as unsigned ints) to feed: exhaustive up to 16 bits, random above."""
    bits = BITS[src]
    if src == T.BOOL:
        return np.array([0, 1], dtype=np.uint64)
    if bits <= 16:
        return np.arange(1 << bits, dtype=np.uint64)
    specials = {32: [0x7F800000, 0xFF800000, 0x7FC00000, 0x7F800001, 0x80000000, 0x43E80001, 0x43F00000,
                     0x47700000, 0x3F880000, 0x00000001, 0x00400000, 0x7F7FFFFF],
                64: [0x7FF0000000000000, 0x7FF8000000000000, 0x3FF1000000400000, 0x407D000000000001, 1]}[bits]
    r = rng.integers(0, 1 << bits, size=random_n, dtype=np.uint64, endpoint=False) if bits < 64 else \
        rng.integers(0, np.iinfo(np.int64).max, size=random_n, dtype=np.int64).astype(np.uint64) * 2 + rng.integers(0, 2, size=random_n).astype(np.uint64)
    return np.concatenate([np.array(specials, dtype=np.uint64), r])


def to_array(src, patterns):
    """Turns bit patterns into a numpy/ml_dtypes array of the source type."""
    bits = BITS[src]
    if src == T.BOOL:
        return patterns.astype(np.bool_)
    if src in (T.INT4, T.INT2):
        # ml_dtypes keeps a sub-byte integer as its value in one byte: sign-extend the code.
        codes = patterns.astype(np.int64)
        values = np.where(codes >= (1 << (bits - 1)), codes - (1 << bits), codes)
        return np.array(values, dtype=NP[src])
    if bits < 8:
        # float4 and the unsigned sub-byte types keep the code in the low bits of one byte.
        return patterns.astype(np.uint8).view(NP[src])
    width = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}[bits]
    return patterns.astype(width).view(NP[src])


def model(src_proto, to, opset, saturate):
    attrs = {"to": to}
    if saturate is not None:
        attrs["saturate"] = saturate
    nodes = [helper.make_node("Constant", [], ["x"], value=src_proto), helper.make_node("Cast", ["x"], ["y"], **attrs)]
    graph = helper.make_graph(nodes, "g", [], [helper.make_tensor_value_info("y", to, None)])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 10 if opset <= 21 else (11 if opset == 23 else (13 if opset <= 26 else 14))
    return m


def run_reference(m, to, n):
    out = ReferenceEvaluator(m).run(None, {})[0]
    return numpy_helper.from_array(np.asarray(out).astype(NP[to]) if to in NP else out).raw_data


def run_ort(m, to, n):
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
    val = sess.run_with_ort_values(None, {})[0]
    return ctypes.string_at(val.data_ptr(), raw_len(to, n))


def run_lowbit(src, to, raw, n, profile, saturate):
    cmd = [str(LOWBIT), "cast", "--from", name(src), "--to", name(to), "--profile", profile,
           "--saturate", str(1 if saturate in (None, 1) else 0), "--count", str(n)]
    p = subprocess.run(cmd, input=raw, capture_output=True)
    if p.returncode != 0:
        raise RuntimeError(p.stderr.decode().strip())
    return p.stdout


def elements(t, raw, n):
    """Element codes from raw bytes (for reporting the first mismatch)."""
    bits = BITS[t]
    if bits >= 8:
        width = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}[bits]
        return np.frombuffer(raw, dtype=width)[:n].astype(np.uint64)
    if bits == 6:
        stream = int.from_bytes(raw, "little")
        return np.array([(stream >> (6 * i)) & 0x3F for i in range(n)], dtype=np.uint64)
    per = 8 // bits
    b = np.frombuffer(raw, dtype=np.uint8).astype(np.uint64)
    out = np.zeros(len(b) * per, dtype=np.uint64)
    for k in range(per):
        out[k::per] = (b >> (bits * k)) & ((1 << bits) - 1)
    return out[:n]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--random", type=int, default=20000)
    ap.add_argument("--only", default="")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    rng = np.random.default_rng(20261122)
    types = list(BITS)
    summary = collections.Counter()
    raised = collections.Counter()
    mismatched = []
    for src in types:
        patterns = inputs_for(src, args.random, rng)
        arr = to_array(src, patterns)
        proto = numpy_helper.from_array(arr)
        n = arr.size
        for to in types:
            if src == to or (args.only and args.only not in f"{name(src)}->{name(to)}"):
                continue
            opset = max(FIRST_VERSION.get(src, 13), FIRST_VERSION.get(to, 13), 19)
            opset = 25 if opset <= 25 else opset
            f8 = to in (T.FLOAT8E4M3FN, T.FLOAT8E4M3FNUZ, T.FLOAT8E5M2, T.FLOAT8E5M2FNUZ, T.FLOAT8E8M0)
            for saturate in ([1, 0] if f8 else [None]):
                m = model(proto, to, opset, saturate)
                for profile, runner in (("onnx-reference", run_reference), ("onnxruntime", run_ort)):
                    key = f"{name(src)}->{name(to)} sat={saturate} {profile}"
                    try:
                        theirs = runner(m, to, n)
                    except Exception as e:  # the implementation has no behaviour here
                        summary["raises"] += 1
                        raised[f"{profile}: {type(e).__name__}"] += 1
                        if args.verbose:
                            print("RAISES", key, str(e).splitlines()[0][:160])
                        continue
                    ours = run_lowbit(src, to, bytes(proto.raw_data), n, profile, saturate)
                    if ours == theirs:
                        summary["equal"] += 1
                        continue
                    a, b = elements(to, ours, n), elements(to, theirs, n)
                    bad = np.nonzero(a != b)[0]
                    i = int(bad[0]) if len(bad) else -1
                    summary["differ"] += 1
                    mismatched.append(f"{key}: {len(bad)} of {n} differ; first at input {int(patterns[i]):#x}: "
                                      f"lowbit {int(a[i]):#x}, theirs {int(b[i]):#x}")
    for line in mismatched:
        print("DIFF", line)
    for what, count in sorted(raised.items()):
        print(f"raised: {what} x{count}")
    print(f"{summary['equal']} equal, {summary['differ']} differ, {summary['raises']} raised (skipped)")
    return 1 if mismatched else 0


if __name__ == "__main__":
    sys.exit(main())
