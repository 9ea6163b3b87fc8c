#!/usr/bin/env python3
"""Compares lowbit's Range, Slice and Gather with the onnx reference and onnxruntime, bit for bit.

Optional: not part of `cargo test`. Needs `cargo build --release` and a venv with
    pip install numpy==2.4.6 ml_dtypes==0.6.0 onnx==1.23.2 onnxruntime==1.31.1 (scripts/peers-venv.sh)
Usage: python scripts/crosscheck_ops.py [--cases N] [--only OP]

Each case is a model whose inputs are Constant nodes, run in the reference evaluator, in
onnxruntime (optimisations off) and with `lowbit run --profile <the one named after it>`. A peer's
exception counts only when it is a refusal declared in REFUSALS (its type and message; lowbit's
profile gives `spec`'s answer there by design): that case is reported as refused, not compared; any
other exception is a difference. It prints the cases compared per op and peer, and exits 1 on any
difference and when nothing was compared (a typo in --only).
"""
import argparse
import collections
import pathlib
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto as T, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import crosscheck_common as cc

ROOT = pathlib.Path(__file__).resolve().parent.parent
LOWBIT = cc.lowbit_path()

ort.set_default_logger_severity(3)  # its warnings about declared output shapes are not results

# What each peer raises where it has no behaviour: neither refuses any case these generators make
# (observed with the pinned versions), so any exception is a difference.
REFUSALS = {
    "onnx-reference": [],
    "onnxruntime": [],
}


def model(op, consts, attrs, opset):
    nodes = [helper.make_node("Constant", [], [f"c{i}"], value=numpy_helper.from_array(a)) for i, a in enumerate(consts)]
    nodes.append(helper.make_node(op, [f"c{i}" for i in range(len(consts))], ["y"], **attrs))
    out_type = helper.np_dtype_to_tensor_dtype(consts[0].dtype)
    g = helper.make_graph(nodes, "g", [], [helper.make_tensor_value_info("y", out_type, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def run_ref(m):
    return np.asarray(ReferenceEvaluator(m).run(None, {})[0])


def run_ort(m):
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return np.asarray(ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"]).run(None, {})[0])


def run_lowbit(m, profile, tmp):
    path = pathlib.Path(tmp) / "m.onnx"
    path.write_bytes(m.SerializeToString())
    out = pathlib.Path(tmp) / "out"
    p = subprocess.run([str(LOWBIT), "run", str(path), "--output-dir", str(out), "--profile", profile], capture_output=True)
    if p.returncode != 0:
        return None, p.stderr.decode().strip()
    return numpy_helper.to_array(onnx.load_tensor(str(out / "y.pb"))), None


def same(a, b):
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


def range_cases(rng, n):
    kinds = [np.float32, np.float64, np.int32, np.int64, np.int16]
    for _ in range(n):
        t = kinds[rng.integers(len(kinds))]
        if np.issubdtype(t, np.integer):
            lim = np.iinfo(t)
            start, limit = rng.integers(-50, 50, size=2)
            delta = rng.choice([-7, -3, -1, 1, 2, 5, 13])
            if rng.random() < 0.1:
                start, limit, delta = lim.max - 10, lim.max, rng.choice([1, 3])
            vals = [t(start), t(limit), t(delta)]
        else:
            choice = rng.integers(4)
            if choice == 0:
                vals = [t(rng.uniform(-10, 10)), t(rng.uniform(-10, 10)), t(rng.choice([0.1, -0.1, 0.3, 0.7, -1.3]))]
            elif choice == 1:
                vals = [t(0), t(1), t(0.1)]
            elif choice == 2:
                vals = [t(rng.uniform(1e6, 1e8)), t(rng.uniform(1e8, 1.0001e8)), t(rng.choice([1.0, 3.0, 7.5]))]
            else:
                vals = [t(rng.integers(-5, 5)), t(rng.integers(-5, 30)), t(rng.choice([0.25, 0.5, 1.5, -0.75]))]
        yield "Range", [np.array(v, dtype=t) for v in vals], {}, 11


def slice_cases(rng, n):
    big = [np.iinfo(np.int64).max, np.iinfo(np.int64).min, np.iinfo(np.int32).max]
    for _ in range(n):
        rank = rng.integers(1, 4)
        shape = tuple(int(d) for d in rng.integers(0, 6, size=rank))
        data = rng.standard_normal(shape).astype(np.float32)
        k = rng.integers(1, rank + 1)
        axes = rng.permutation(rank)[:k] - (rank if rng.random() < 0.3 else 0)
        pick = lambda: int(rng.choice(big)) if rng.random() < 0.15 else int(rng.integers(-8, 8))
        starts = np.array([pick() for _ in range(k)], dtype=np.int64)
        ends = np.array([pick() for _ in range(k)], dtype=np.int64)
        steps = np.array([int(rng.choice([-3, -2, -1, 1, 2, 3])) for _ in range(k)], dtype=np.int64)
        yield "Slice", [data, starts, ends, axes.astype(np.int64), steps], {}, 13


def gather_cases(rng, n):
    for _ in range(n):
        rank = rng.integers(1, 4)
        shape = tuple(int(d) for d in rng.integers(1, 5, size=rank))
        data = rng.integers(-100, 100, size=shape).astype(rng.choice([np.int8, np.float32, np.int64]))
        axis = int(rng.integers(-rank, rank))
        s = shape[axis]
        idx = rng.integers(-s, s, size=tuple(int(d) for d in rng.integers(0, 4, size=rng.integers(0, 3))))
        yield "Gather", [data, idx.astype(rng.choice([np.int32, np.int64]))], {"axis": axis}, 13


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=300)
    ap.add_argument("--only", default="", help="only the ops whose name contains this")
    args = ap.parse_args()
    rng = np.random.default_rng(20261122)
    tally = collections.Counter()
    diffs = []
    with tempfile.TemporaryDirectory() as tmp:
        for gen in (range_cases, slice_cases, gather_cases):
            for op, consts, attrs, opset in gen(rng, args.cases):
                if args.only not in op:
                    continue
                m = model(op, consts, attrs, opset)
                for profile, runner in (("onnx-reference", run_ref), ("onnxruntime", run_ort)):
                    theirs = cc.run_model(runner, m, REFUSALS[profile], f"{op} {profile}",
                                          f"{op}-{opset} {profile} {attrs}", tally, diffs)
                    if theirs is None:
                        continue
                    ours, err = run_lowbit(m, profile, tmp)
                    if ours is not None and same(ours, theirs):
                        tally[f"{op} {profile} equal"] += 1
                        continue
                    tally[f"{op} {profile} differ"] += 1
                    inputs = ", ".join(f"{c.dtype}{list(c.shape)}={c.tolist()}" for c in consts)
                    got = err if ours is None else f"{ours.dtype}{list(ours.shape)} {ours.tolist()}"
                    diffs.append(f"{op} {profile} {attrs} {inputs}: lowbit {got} | theirs {theirs.dtype}{list(theirs.shape)} {theirs.tolist()}")
    for d in diffs[:40]:
        print("DIFF", d[:600])
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
