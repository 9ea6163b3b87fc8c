#!/usr/bin/env python3
"""lowbit.cast against ml_dtypes' astype: 16M float32 values into each target, one thread each.

    python python/bench.py [--elements N] [--rounds R] [--targets a,b,...]

Both sides convert the same float32 array (normal values spread over the float8 range, with a
few NaNs and infinities) into a new array; the figure is the best of R rounds, interleaved, in
millions of elements per second. lowbit runs with threads=1 and its default profile (spec,
saturate=1); ml_dtypes' astype does not saturate, so the results differ on overflow (that is
the point of saturate), not in the work done. Targets: >= 5x ml_dtypes for the float8 types,
>= 1x for float16 and bfloat16.
"""

import argparse
import os
import sys
import time

import ml_dtypes
import numpy as np

# Python puts this script's folder first on the path; in a checkout that folder holds the
# package's sources without the compiled module, so import the installed package instead.
if sys.path and os.path.abspath(sys.path[0] or ".") == os.path.dirname(os.path.abspath(__file__)):
    sys.path.pop(0)

import lowbit  # noqa: E402

TARGETS = {
    "float8_e4m3fn": (ml_dtypes.float8_e4m3fn, 5.0),
    "float8_e4m3fnuz": (ml_dtypes.float8_e4m3fnuz, 5.0),
    "float8_e5m2": (ml_dtypes.float8_e5m2, 5.0),
    "float8_e5m2fnuz": (ml_dtypes.float8_e5m2fnuz, 5.0),
    "float8_e8m0fnu": (ml_dtypes.float8_e8m0fnu, None),
    "float16": (np.float16, 1.0),
    "bfloat16": (ml_dtypes.bfloat16, 1.0),
    "float4_e2m1fn": (ml_dtypes.float4_e2m1fn, None),
    "float6_e2m3fn": (ml_dtypes.float6_e2m3fn, None),
    "int4": (ml_dtypes.int4, None),
}


def best_of(rounds, runs):
    """The best time of each function over `rounds` interleaved rounds."""
    best = [float("inf")] * len(runs)
    for _ in range(rounds):
        for k, run in enumerate(runs):
            t = time.perf_counter()
            run()
            best[k] = min(best[k], time.perf_counter() - t)
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--elements", type=int, default=1 << 24)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--targets", default=",".join(TARGETS))
    args = ap.parse_args()
    rng = np.random.default_rng(1)
    x = (rng.standard_normal(args.elements) * 64).astype(np.float32)
    x[:: 1 << 16] = np.nan
    x[1 :: 1 << 16] = np.inf
    n = x.size
    print(f"lowbit {lowbit.__version__}, ml_dtypes {ml_dtypes.__version__}, numpy {np.__version__}")
    print(f"{n:,} float32 elements, best of {args.rounds}, one thread, M elements/s")
    print(f"{'target':<18}{'lowbit':>10}{'ml_dtypes':>12}{'ratio':>9}{'goal':>8}")
    failed = []
    with np.errstate(all="ignore"):
        for name in args.targets.split(","):
            dtype, goal = TARGETS[name]
            lowbit.cast(x[:4096], dtype, threads=1)  # the plan is built once per process
            t_lowbit, t_astype = best_of(
                args.rounds, [lambda: lowbit.cast(x, dtype, threads=1), lambda: x.astype(dtype)]
            )
            ratio = t_astype / t_lowbit
            shown_goal = "-" if goal is None else f">={goal:g}x"
            print(f"{name:<18}{n / t_lowbit / 1e6:>10.0f}{n / t_astype / 1e6:>12.0f}{ratio:>8.2f}x{shown_goal:>8}")
            if goal is not None and ratio < goal:
                failed.append(name)
    if failed:
        print("below the goal: " + ", ".join(failed))


if __name__ == "__main__":
    main()
