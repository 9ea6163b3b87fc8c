#!/usr/bin/env python3
"""Checks ModelOpt's exported ONNX form of NVFP4 as `lowbit quantize --scheme modelopt:nvfp4 --onnx`
writes it: `lowbit run` of the graph against onnx 1.23.2's ReferenceEvaluator, bit for bit, and
against `lowbit dequantize` of the same files (equal except the sign of an element code 8's zero:
ModelOpt's dequantize looks code 8 up as +0, DequantizeLinear multiplies -0). Fails on any
difference and when nothing was compared.

    PY=$(bash scripts/peers-venv.sh) && cargo build --release && "$PY" scripts/crosscheck_nvfp4_onnx.py

Weights: random float32 and float16 matrices whose magnitude changes per 16 elements, with zero
blocks, E2M1 ties, tiny negative values (code 8), values at the block scale's clamps, an all-zero
weight (ModelOpt's exporter takes a per-tensor scale of 1 there), and a 3-D weight. onnxruntime
1.31.1 has no CPU kernel for a FLOAT4E2M1 DequantizeLinear; the script reports whether it loads.
"""
import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper
from onnx.reference import ReferenceEvaluator

import crosscheck_common as cc


def weights(rng):
    """(name, array) pairs."""
    out = []
    for i, (rows, cols) in enumerate([(4, 64), (8, 256), (1, 16), (33, 48)]):
        x = rng.standard_normal((rows, cols)).astype(np.float32)
        x *= np.repeat(np.exp2(rng.integers(-12, 12, size=(rows, cols // 16))), 16, axis=1).astype(np.float32)
        out.append((f"random_{rows}x{cols}", x))
    x = rng.standard_normal((4, 64)).astype(np.float32)
    x[0, :16] = 0.0  # a zero block: scale 1.0
    x[1, :16] = [6.0, 0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, -0.25, -0.75, -1.25, -1.75, -2.5, -3.5, -5.0, -6.0]
    x[2, :16] = -1e-30  # tiny negatives: code 8
    x[2, 0] = 6.0
    x[3, :16] *= 1e-30  # far below the rest: its block scale clamps to 2^-9
    out.append(("edge_4x64", x))
    out.append(("random_f16_16x32", (rng.standard_normal((16, 32)) * 3).astype(np.float16)))
    out.append(("all_zero_2x32", np.zeros((2, 32), np.float32)))
    out.append(("random_3d_2x3x32", rng.standard_normal((2, 3, 32)).astype(np.float32)))
    return out


def lowbit(args, cwd):
    p = subprocess.run([str(cc.lowbit_path()), *args], cwd=cwd, capture_output=True, text=True)
    if p.returncode:
        raise RuntimeError(p.stderr.strip())


def load(path):
    return numpy_helper.to_array(onnx.load_tensor(str(path)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=20261126)
    ap.add_argument("--only", default="", help="only weights whose name contains this")
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    tally = cc.Tally(f"onnx {onnx.__version__} ReferenceEvaluator")
    zero_signs = 0
    ort_note = "not tried"
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        for name, x in weights(rng):
            if args.only not in name:
                continue
            onnx.save_tensor(numpy_helper.from_array(x, "w"), str(d / "w.pb"))
            files = ["--scales", "s.pb", "--global-scale", "g.pb"]
            lowbit(["quantize", "--scheme", "modelopt:nvfp4", "w.pb", *files, "--out", "e.pb", "--onnx", "m.onnx"], d)
            lowbit(["run", "m.onnx", "--output-dir", "out"], d)
            ours = load(d / "out" / "w.pb")
            with np.errstate(all="ignore"):
                (reference,) = ReferenceEvaluator(onnx.load(str(d / "m.onnx"))).run(None, {})
            flat = x.astype(np.float32).reshape(-1)
            tally.compare_codes(f"{name} lowbit run vs reference", "FLOAT", ours.tobytes(),
                                reference.astype(np.float32).tobytes(), ours.size, flat)
            if not x.any():
                continue  # the exporter's per-tensor scale (1.0) is not the torch path's (0)
            lowbit(["dequantize", "--scheme", "modelopt:nvfp4", "e.pb", *files, "--out", "y.pb"], d)
            deq = load(d / "y.pb").reshape(-1)
            run = ours.reshape(-1)
            codes = cc.array_codes("FLOAT4E2M1", load(d / "e.pb")).reshape(-1)
            zero = (codes == 8) & (run == 0) & (deq == 0)
            zero_signs += int(zero.sum())
            keep = ~zero
            tally.compare_codes(f"{name} lowbit run vs lowbit dequantize (code 8 zeros apart)", "FLOAT",
                                run[keep].tobytes(), deq[keep].tobytes(), int(keep.sum()), flat[keep])
            if ort_note == "not tried":
                try:
                    import onnxruntime as ort

                    so = ort.SessionOptions()
                    so.log_severity_level = 3
                    ort.InferenceSession(str(d / "m.onnx"), so, providers=["CPUExecutionProvider"]).run(None, {})
                    ort_note = f"onnxruntime {ort.__version__} runs the graph (not compared)"
                except Exception as e:
                    ort_note = f"onnxruntime cannot run the graph: {cc.peer_error_text(e)}"
    print(ort_note)
    print(f"{zero_signs:,} elements of code 8: -0 in the graph, +0 in ModelOpt's dequantize (not compared)")
    return tally.report("lowbit run of ModelOpt's NVFP4 graph")


if __name__ == "__main__":
    sys.exit(main())
