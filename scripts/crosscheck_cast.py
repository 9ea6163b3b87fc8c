#!/usr/bin/env python3
"""Compares `lowbit cast --profile onnx-reference` with the live onnx reference evaluator and
`--profile onnxruntime` with onnxruntime, bit for bit (texts character for character), and fails
on any difference.

Optional: not part of `cargo test`. Needs a release build (`cargo build --release`; the binary is
$LOWBIT, else $CARGO_TARGET_DIR/release/lowbit, else target/release/lowbit) and the venv of
scripts/peers-venv.sh (onnx 1.23.2, onnxruntime 1.31.1, ml_dtypes, numpy). Usage:
    PY=$(bash scripts/peers-venv.sh) && "$PY" scripts/crosscheck_cast.py [--random N] [--only SRC->TO] \
        [--sample N --seed S] [--profile onnx-reference|onnxruntime]

Every pair of the 26 castable dtypes, identity and STRING included, no pair skipped; float8 targets
with saturate 1 and 0, FLOAT8E8M0 with every round_mode too. Each pair runs as a model
`Constant -> Cast` (opset 25, 28 where float6 is involved) in the reference evaluator and in
onnxruntime (graph optimisations off). The inputs are those of scripts/crosscheck_common.py: every
bit pattern of every source of 16 bits or fewer, the wide sources' specials and N random patterns,
STRING sources as decimal texts, the target's integers and odd spellings one at a time.

A peer's exception counts only when it is one of the refusals declared below (REFUSALS: its type
and message): "no cast" where the profile hands the pair to `spec` (as `lowbit profiles --json`
lists; lowbit must then give exactly `spec`'s answer, reported apart from the comparisons), "text"
where the peer cannot read a text (lowbit must refuse it too). Any other exception is a
difference. Exit status 1 on any difference, and when nothing was compared (a typo in --only).
"""
import argparse
import ctypes
import sys
import warnings

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import crosscheck_common as cc

FIRST_VERSION = {"BFLOAT16": 13, "FLOAT8E4M3FN": 19, "FLOAT8E4M3FNUZ": 19, "FLOAT8E5M2": 19, "FLOAT8E5M2FNUZ": 19,
                 "INT4": 21, "UINT4": 21, "FLOAT4E2M1": 23, "FLOAT8E8M0": 24, "INT2": 25, "UINT2": 25,
                 "FLOAT6E2M3": 28, "FLOAT6E3M2": 28}


def number(t):
    return getattr(TensorProto, t)


def constant(src, codes=None, texts=None):
    if src == "STRING":
        return helper.make_tensor("x", TensorProto.STRING, [len(texts)], [t.encode() for t in texts])
    return numpy_helper.from_array(cc.to_array(src, codes))


def model(value, src, to, saturate, round_mode):
    opset = max(FIRST_VERSION.get(src, 13), FIRST_VERSION.get(to, 13), 19)
    opset = 25 if opset <= 25 else opset
    attrs = {"to": number(to)}
    if saturate is not None:
        attrs["saturate"] = saturate
    if round_mode is not None:
        attrs["round_mode"] = round_mode
    nodes = [helper.make_node("Constant", [], ["x"], value=value), helper.make_node("Cast", ["x"], ["y"], **attrs)]
    graph = helper.make_graph(nodes, "g", [], [helper.make_tensor_value_info("y", number(to), None)])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 11 if opset <= 25 else 14
    return m


def run_reference(m, to, n):
    out = ReferenceEvaluator(m).run(None, {})[0]
    if to == "STRING":
        return [str(x) for x in np.asarray(out).reshape(-1)]
    return numpy_helper.from_array(np.asarray(out).astype(cc.NP[to])).raw_data


def run_ort(m, to, n):
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
    if to == "STRING":
        return [str(x) for x in sess.run(None, {})[0].reshape(-1)]
    val = sess.run_with_ort_values(None, {})[0]
    return ctypes.string_at(val.data_ptr(), cc.raw_len(to, n))


ort.set_default_logger_severity(4)

PEERS = {"onnx-reference": ("onnx reference 1.23.2", run_reference), "onnxruntime": ("onnxruntime 1.31.1", run_ort)}

# What each peer raises where it has no behaviour (observed with the pinned versions).
REFUSALS = {
    "onnx-reference": [
        # The pairs ml_dtypes' astype has no cast for (profile row pairs_fall_back).
        cc.Refusal("no cast", "TypeError", r"^Issues with types .* \(operator 'Cast_\d+'\)"),
        cc.Refusal("text", "ValueError", r"^(could not convert string to float|invalid literal for int\(\))"),
        # An integer text beyond the integer target: numpy's astype refuses it, and lowbit's
        # refusal quotes numpy's exception.
        cc.Refusal("text", "OverflowError",
                   r"^Python int(eger -?\d+ out of bounds for u?int\d+| too large to convert to C long)$", echoed=True),
    ],
    "onnxruntime": [
        # No CPU kernel for FLOAT4E2M1 (row cast_falls_back).
        cc.Refusal("no cast", "NotImplemented",
                   r"NOT_IMPLEMENTED : (Could not find an implementation|Failed to find kernel) for Cast\("),
        # Opset 28 (float6) needs IR version 14: the model does not load.
        cc.Refusal("no cast", "Fail", r"Unsupported model IR version: 14, max supported IR version: 13"),
        cc.Refusal("text", "RuntimeException",
                   r"RUNTIME_EXCEPTION : Non-zero status code returned while running Cast node"),
    ],
}


def check_one(tally, profiles, profile, runner, src, to, saturate, round_mode, key, payload, n, inputs, value):
    """One tensor through one peer and through lowbit."""
    m = model(value, src, to, saturate, round_mode)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            theirs = runner(m, to, n)
        peer_exception = None
    except Exception as e:  # compare_variant accepts only the refusals REFUSALS declares
        theirs, peer_exception = None, e
    cc.compare_variant(tally, profiles, profile, REFUSALS[profile], key, src, to, payload, n, theirs, peer_exception,
                       inputs, saturate, round_mode)


def main():
    ap = argparse.ArgumentParser()
    cc.add_arguments(ap)
    ap.add_argument("--profile", choices=sorted(PEERS), action="append", help="default: both")
    args = ap.parse_args()
    rng = cc.start(args)
    profiles = cc.profile_table()
    chosen = args.profile or sorted(PEERS)
    tallies = {p: cc.Tally(PEERS[p][0]) for p in chosen}
    for src in cc.ALL:
        targets = [t for t in cc.ALL if not args.only or args.only in f"{src}->{t}"]
        if not targets:
            continue
        if src == "STRING":
            sets = None
        else:
            codes = cc.patterns(src, args.random, rng, args.sample)
            value, payload, n = constant(src, codes), cc.raw_bytes(src, codes), len(codes)
        for to in targets:
            for saturate, round_mode in cc.variants(to):
                key = f"{src}->{to} saturate={saturate} round_mode={round_mode}"
                if src == "STRING":
                    sets = [("decimal", cc.decimal_texts()), ("integers", cc.integer_texts(to))]
                    sets += [(f"text {t!r}", [t]) for t in cc.ODD_TEXTS]
                    for label, texts in sets:
                        v = constant("STRING", texts=texts)
                        for p in chosen:
                            check_one(tallies[p], profiles, p, PEERS[p][1], src, to, saturate, round_mode,
                                      f"{key} [{label}] {p}", texts, len(texts), texts, v)
                    continue
                for p in chosen:
                    check_one(tallies[p], profiles, p, PEERS[p][1], src, to, saturate, round_mode, f"{key} {p}",
                              payload, n, codes, value)
        print(f"{src}: done", file=sys.stderr, flush=True)
    status = 0
    for p in chosen:
        status |= tallies[p].report(p)
    cc.record("crosscheck_cast.py", args, tallies)
    return status


if __name__ == "__main__":
    sys.exit(main())
