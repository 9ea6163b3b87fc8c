#!/usr/bin/env python3
"""Times lowbit's bnb rows against bitsandbytes 0.50.2's CPU backend in the same run: quantize
and dequantize of a 4096x4096 weight (16M elements), one thread on both sides (torch and OpenMP
set to one thread before they load), best of --repeat runs. Environment as for
scripts/crosscheck_bnb.py (torch, bitsandbytes and the lowbit package importable).

    PYTHONPATH=DIR target/blocks-venv/bin/python scripts/bench_bnb.py [--repeat N]
"""
import argparse
import logging
import os
import time

os.environ["OMP_NUM_THREADS"] = "1"
import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402

logging.disable(logging.WARNING)
import bitsandbytes.functional as F  # noqa: E402

import lowbit.blocks as lb  # noqa: E402


def best(fn, repeat):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--rows", type=int, default=4096)
    ap.add_argument("--cols", type=int, default=4096)
    args = ap.parse_args()
    torch.set_num_threads(1)
    n = args.rows * args.cols
    w = torch.randn(args.rows, args.cols, generator=torch.Generator().manual_seed(1))
    x = w.numpy()
    for scheme, qt, nested in (("bnb:nf4", "nf4", False), ("bnb:fp4,nested", "fp4", True)):
        peer_q = best(lambda: F.quantize_4bit(w, blocksize=64, quant_type=qt, compress_statistics=nested), args.repeat)
        ours_q = best(lambda: lb.quantize(x, scheme), args.repeat)
        ours_qs = best(lambda: lb.quantize(x, scheme).storage(), args.repeat)
        q, state = F.quantize_4bit(w, blocksize=64, quant_type=qt, compress_statistics=nested)
        mine = lb.quantize(x, scheme)
        for name, tdt, ndt in (("float32", torch.float32, np.float32), ("bfloat16", torch.bfloat16, ml_dtypes.bfloat16)):
            state.dtype = tdt
            peer_d = best(lambda: F.dequantize_4bit(q, state), args.repeat)
            ours_d = best(lambda: mine.dequantize(ndt), args.repeat)
            print(f"{scheme} dequantize {name}: lowbit {n / ours_d / 1e9:.2f} G/s, bitsandbytes "
                  f"{n / peer_d / 1e9:.2f} G/s, ratio {peer_d / ours_d:.1f}x")
        print(f"{scheme} quantize: lowbit {n / ours_q / 1e6:.0f} M/s ({n / ours_qs / 1e6:.0f} M/s with storage()), "
              f"bitsandbytes {n / peer_q / 1e6:.0f} M/s, ratio {peer_q / ours_q:.1f}x ({peer_q / ours_qs:.1f}x)")


if __name__ == "__main__":
    main()
