#!/usr/bin/env python3
"""Compares lowbit's `ort:matmulnbits` with onnxruntime run live, and reports how far
onnxruntime's own MatMulNBits results are from the exact sum.

1. Quantize, bit for bit: `MatMulNBitsQuantizer` (its default algorithm) on a MatMul whose
   initializer is W^T, against `lowbit.blocks.quantize(W, scheme).storage()` (B, scales,
   zero_points), for bits 4 and 8, blocks 16 .. 256, symmetric and not, float32 and float16
   weights, random rows over a wide range of magnitudes, edge rows (zeros, constants, ties, NaN,
   +-Inf, huge, tiny) and K that is not a whole number of blocks.
2. Dequantize: the node run on the identity gives W_deq^T exactly, but for the sign of zero (a
   sum of products keeps none: zeros are compared by value, the one comparison that is not bit
   for bit) and rows holding a NaN or an infinity (0 * Inf makes their column NaN: counted
   apart, their bytes compared in part 1).
3. The runner: `lowbit run` on MatMulNBits nodes with random A, against onnxruntime's output:
   the difference in float32 ulps (onnxruntime's kernels sum in float32 in a CPU-dependent
   order; lowbit sums exactly and rounds once). Reported, not failed on.
A peer exception is a failure unless one of DECLARED_REFUSALS; a difference or nothing compared
fails.

    target/mlx-venv/bin/pip install onnxruntime==1.31.1 onnx onnx-ir ml_dtypes numpy maturin
    PATH=$PWD/target/mlx-venv/bin:$PATH target/mlx-venv/bin/pip install --no-build-isolation ./python
    cargo build --release --bin lowbit
    python scripts/crosscheck_ort.py [--rows N] [--seed S]

About 5 seconds with the defaults (--rows 64).
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper

import lowbit

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cargo_target  # noqa: E402
import gen_integer_ort_fixtures as gen  # noqa: E402

DECLARED_REFUSALS: list = []


def ulps(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Distance in float32 ulps (the ordered integer encoding)."""
    def ordered(x):
        i = x.astype(np.float32).view(np.int32).astype(np.int64)
        return np.where(i < 0, -(i & 0x7FFFFFFF), i)
    return np.abs(ordered(a) - ordered(b))


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rows", type=int, default=64)
    p.add_argument("--seed", type=int, default=20261128)
    args = p.parse_args()
    rng = np.random.default_rng(args.seed)
    start = time.time()
    failures, tensors, values, zeros_by_value, poisoned = [], 0, 0, 0, 0
    for bits in (4, 8):
        for block in (16, 32, 64, 128, 256):
            for sym in (False, True):
                for dtype in ("FLOAT", "FLOAT16"):
                    k = block * 3 - (block // 2 if block >= 32 else 0)
                    w = (rng.standard_normal((args.rows, k)) * 2.0 ** rng.integers(-20, 20, (args.rows, 1)))
                    edge = np.stack(list(gen.edge_rows(k).values()))
                    w = np.concatenate([w, edge]).astype(np.float32)
                    with np.errstate(over="ignore"):
                        case = gen.quantize_case("live", w, dtype, bits, block, sym)
                    scheme = f"ort:matmulnbits,bits={bits},block={block}{',sym' if sym else ''}"
                    if "refusal" in case:
                        failures.append(f"{scheme} {dtype}: onnxruntime refused: {case['refusal']}")
                        continue
                    wd = np.frombuffer(bytes.fromhex(case["input"]), gen.NP[dtype]).reshape(w.shape)
                    st = lowbit.blocks.quantize(wd, scheme).storage()
                    peer = {"B": case["B"], "scales": case["scales"]}
                    if "zero_points" in case:
                        peer["zero_points"] = case["zero_points"]
                    if sorted(st) != sorted(peer):
                        failures.append(f"{scheme} {dtype}: tensors {sorted(st)} vs {sorted(peer)}")
                        continue
                    for name, h in peer.items():
                        tensors += 1
                        values += len(h) // 2
                        if st[name].tobytes().hex() != h:
                            failures.append(f"{scheme} {dtype}: {name} differs")
                    # Dequantize against the node's product with the identity.
                    q = lowbit.blocks.quantize(wd, scheme)
                    ours = np.asarray(q.dequantize(gen.NP[dtype]))
                    y = np.frombuffer(bytes.fromhex(case["identity_product"]), gen.NP[dtype]).reshape(k, -1).T
                    for r in range(ours.shape[0]):
                        if np.isnan(y[r]).all() and not np.isfinite(ours[r]).all():
                            poisoned += 1
                            continue
                        tensors += 1
                        same_bits = ours[r].view(np.uint32 if dtype == "FLOAT" else np.uint16) == \
                            y[r].view(np.uint32 if dtype == "FLOAT" else np.uint16)
                        zero = (ours[r] == 0) & (y[r] == 0)
                        zeros_by_value += int((zero & ~same_bits).sum())
                        values += k
                        if not (same_bits | zero).all():
                            failures.append(f"{scheme} {dtype}: dequantized row {r} differs")
    # The runner against onnxruntime's own kernels, in ulps.
    lowbit_bin = str(cargo_target.release_lowbit())
    worst, total = 0, 0
    with tempfile.TemporaryDirectory() as tmp:
        for bits in (4, 8):
            for with_zp in (True, False):
                n, k, m, block = 24, 256, 8, 32
                kb = k // block
                b = rng.integers(0, 256, (n, kb, block * bits // 8), dtype=np.uint8)
                s = (rng.standard_normal((n, kb)) * 0.05).astype(np.float32)
                zp = rng.integers(0, 256, (n, (kb * bits + 7) // 8), dtype=np.uint8) if with_zp else None
                model = gen.nbits_node_model(k, n, bits, block, b, s, zp, "FLOAT")
                a = rng.standard_normal((m, k)).astype(np.float32)
                opts = ort.SessionOptions()
                opts.intra_op_num_threads = 1
                sess = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
                peer = sess.run(None, {"A": a})[0]
                path = os.path.join(tmp, "m.onnx")
                onnx.save(model, path)
                with open(os.path.join(tmp, "a.pb"), "wb") as f:
                    f.write(numpy_helper.from_array(a, "A").SerializeToString())
                subprocess.run([lowbit_bin, "run", path, "--input", f"A={tmp}/a.pb", "--output-dir", f"{tmp}/out"],
                               check=True, capture_output=True)
                with open(os.path.join(tmp, "out", "Y.pb"), "rb") as f:
                    ours = numpy_helper.to_array(onnx.TensorProto.FromString(f.read()))
                d = ulps(ours, peer)
                worst, total = max(worst, int(d.max())), total + d.size
                print(f"MatMulNBits bits={bits} {'zero_points' if with_zp else 'default zero point'} "
                      f"(M={m}, N={n}, K={k}): onnxruntime vs the exact sum: max {int(d.max())} ulp, "
                      f"mean {d.mean():.3f} ulp, {int((d == 0).sum())} of {d.size} equal")
    took = time.time() - start
    print(f"onnxruntime {ort.__version__} vs lowbit: {tensors} tensors/rows, {values} values compared, "
          f"{zeros_by_value} zeros compared by value (their sign is not observable through the node), "
          f"{poisoned} rows with NaN/Inf checked by bytes only, {len(failures)} differences; "
          f"runner outputs {total}, worst {worst} ulp; {took:.1f} s")
    for f in failures[:20]:
        print("  " + f)
    return 1 if failures or tensors == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
