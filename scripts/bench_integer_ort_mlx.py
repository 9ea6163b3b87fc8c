#!/usr/bin/env python3
"""Times lowbit's `mlx:affine` and `ort:matmulnbits` against their producers on the CPU, in one
run: a 4096 x 4096 float32 weight (16M elements), best of --repeat runs each, one thread where
the peer lets us choose (MLX's CPU quantize and dequantize run on one thread; onnxruntime's
quantizer makes its own thread pool, reported as is; lowbit's integer rows run on one thread).

    target/mlx-venv/bin/python scripts/bench_integer_ort_mlx.py [--repeat N]

Needs the venv of scripts/crosscheck_mlx.py with onnxruntime and onnx-ir added.
"""

import argparse
import time

import mlx.core as mx
import numpy as np
from onnxruntime.capi._pybind_state import quantize_matmul_4bits

from lowbit import blocks


def best(f, repeat):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repeat", type=int, default=5)
    args = p.parse_args()
    rng = np.random.default_rng(1)
    n = k = 4096
    w = rng.standard_normal((n, k)).astype(np.float32)
    elems = w.size
    rows = []

    scheme = "mlx:affine,bits=4,group=64"
    wm = mx.array(w)
    mx.eval(wm)
    peer_q = best(lambda: mx.eval(*mx.quantize(wm, group_size=64, bits=4)), args.repeat)
    qm = mx.quantize(wm, group_size=64, bits=4)
    mx.eval(*qm)
    peer_d = best(lambda: mx.eval(mx.dequantize(*qm, group_size=64, bits=4)), args.repeat)
    ours_q = best(lambda: blocks.quantize(w, scheme), args.repeat)
    q = blocks.quantize(w, scheme)
    ours_d = best(lambda: q.dequantize(np.float32), args.repeat)
    rows.append((scheme + " float32", ours_q, peer_q, ours_d, peer_d, "mlx 0.32.4"))

    wh = w.astype(np.float16)
    wmh = mx.array(wh)
    mx.eval(wmh)
    peer_q = best(lambda: mx.eval(*mx.quantize(wmh, group_size=64, bits=4)), args.repeat)
    qm = mx.quantize(wmh, group_size=64, bits=4)
    mx.eval(*qm)
    peer_d = best(lambda: mx.eval(mx.dequantize(*qm, group_size=64, bits=4)), args.repeat)
    ours_q = best(lambda: blocks.quantize(wh, scheme), args.repeat)
    q = blocks.quantize(wh, scheme)
    ours_d = best(lambda: q.dequantize(np.float16), args.repeat)
    rows.append((scheme + " float16", ours_q, peer_q, ours_d, peer_d, "mlx 0.32.4"))

    scheme = "ort:matmulnbits,bits=4,block=32"
    bt = np.ascontiguousarray(w.T)  # the MatMul's (K, N) initializer
    kb = k // 32

    def ort_quantize():
        packed = np.zeros((n, kb, 16), np.uint8)
        zp = np.zeros((n, (kb + 1) // 2), np.uint8)
        sc = np.zeros((n, kb), np.float32)
        quantize_matmul_4bits(packed, bt, sc, zp, 32, n, k, False)

    peer_q = best(ort_quantize, args.repeat)
    ours_q = best(lambda: blocks.quantize(w, scheme), args.repeat)
    q = blocks.quantize(w, scheme)
    ours_d = best(lambda: q.dequantize(np.float32), args.repeat)
    rows.append((scheme + " float32", ours_q, peer_q, ours_d, None, "onnxruntime 1.31.1 (its thread pool)"))

    print(f"{elems} elements, best of {args.repeat}:")
    print("| scheme | lowbit quantize | peer quantize | ratio | lowbit dequantize | peer dequantize | ratio | peer |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    for name, oq, pq, od, pd, peer in rows:
        rate = lambda t: f"{elems / t / 1e6:.0f} M/s"  # noqa: E731
        pd_s = rate(pd) if pd else "n/a"
        ratio_d = f"{pd / od:.1f}x" if pd else "n/a"
        print(f"| {name} | {rate(oq)} | {rate(pq)} | {pq / oq:.1f}x | {rate(od)} | {pd_s} | {ratio_d} | {peer} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
