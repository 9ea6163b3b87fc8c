#!/usr/bin/env python3
"""Compares lowbit's `mlx:affine` with MLX run live, bit for bit: `mx.quantize` (the packed uint32
weight, scales, biases) against `lowbit.blocks.quantize(w, scheme).storage()`, and
`mx.dequantize` against `Quantized.dequantize(dtype)`, of lowbit's tensors and of `from_storage`
of MLX's. Every bit width (1, 2, 3, 4, 5, 6, 8) and group (32, 64, 128) MLX accepts, float32,
float16 and bfloat16 weights, random rows over a wide range of magnitudes and edge rows (zeros,
constants, ties, NaN, +-Inf, huge, tiny). A peer exception counts only as one of
DECLARED_REFUSALS (type and message); a difference or nothing compared fails.

    python3 -m venv target/mlx-venv
    target/mlx-venv/bin/pip install "mlx[cpu]==0.32.4" numpy maturin
    PATH=$PWD/target/mlx-venv/bin:$PATH target/mlx-venv/bin/pip install --no-build-isolation ./python
    target/mlx-venv/bin/python scripts/crosscheck_mlx.py [--rows N] [--seed S]

About 5 seconds with the defaults (--rows 256), most of it importing MLX.
"""

import argparse
import re
import sys
import time

import mlx.core as mx
import numpy as np

import lowbit

DTYPES = {"float32": mx.float32, "float16": mx.float16, "bfloat16": mx.bfloat16}
# Exceptions MLX raises that are its answer, not a failure: none for the shapes sent here.
DECLARED_REFUSALS: list = []


def np_bits(a: mx.array) -> np.ndarray:
    if a.dtype == mx.bfloat16:
        return np.array(a.view(mx.uint16))
    return np.array(a).view(np.uint16 if a.dtype == mx.float16 else np.uint32)


def to_numpy_input(w: mx.array):
    """The weight as lowbit takes it (numpy float32, float16, or ml_dtypes bfloat16)."""
    import ml_dtypes

    if w.dtype == mx.bfloat16:
        return np.array(w.view(mx.uint16)).view(ml_dtypes.bfloat16)
    return np.array(w)


def rows(rng, n: int, cols: int) -> np.ndarray:
    x = rng.standard_normal((n, cols)) * 2.0 ** rng.integers(-30, 30, (n, 1))
    edge = [np.zeros(cols), np.full(cols, -2.5), (np.arange(cols) % 31) * 0.5,
            np.where(np.arange(cols) % 17 == 3, np.nan, 1.0 + np.arange(cols)),
            np.where(np.arange(cols) % 29 == 5, np.inf, np.arange(cols)),
            np.where(np.arange(cols) % 29 == 5, -np.inf, np.arange(cols)),
            np.linspace(-3.3e38, 3.3e38, cols), np.linspace(-1e-40, 1e-40, cols)]
    return np.concatenate([x, np.stack(edge)]).astype(np.float32)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rows", type=int, default=256)
    p.add_argument("--seed", type=int, default=20261128)
    args = p.parse_args()
    rng = np.random.default_rng(args.seed)
    start = time.time()
    compared = values = 0
    failures = []
    for bits in (1, 2, 3, 4, 5, 6, 8):
        for group in (32, 64, 128):
            for dname, dt in DTYPES.items():
                scheme = f"mlx:affine,bits={bits},group={group}"
                w = mx.array(rows(rng, args.rows, 256)).astype(dt)
                try:
                    q, s, b = mx.quantize(w, group_size=group, bits=bits, mode="affine")
                    d = mx.dequantize(q, s, b, group_size=group, bits=bits, mode="affine")
                    mx.eval(q, s, b, d)
                except Exception as e:  # noqa: BLE001
                    if not any(isinstance(e, t) and re.search(m, str(e)) for t, m in DECLARED_REFUSALS):
                        failures.append(f"{scheme} {dname}: MLX raised {type(e).__name__}: {e}")
                    continue
                ours = lowbit.blocks.quantize(to_numpy_input(w), scheme)
                st = ours.storage()
                peer = {"weight": np.array(q), "scales": np_bits(s), "biases": np_bits(b)}
                for name, arr in peer.items():
                    mine = st[name].view(arr.dtype)
                    compared += 1
                    values += arr.size
                    if mine.shape != arr.shape or not np.array_equal(mine, arr):
                        failures.append(f"{scheme} {dname}: {name} differs")
                back = lowbit.blocks.from_storage({"weight": np.array(q), "scales": to_numpy_input(s),
                                                   "biases": to_numpy_input(b)}, scheme, w.shape)
                want = np_bits(d)
                for label, qq in (("lowbit's", ours), ("MLX's", back)):
                    got = np.asarray(qq.dequantize(to_numpy_input(d).dtype))
                    got = got.view(want.dtype)
                    compared += 1
                    values += want.size
                    if not np.array_equal(got, want):
                        at = np.argwhere(got != want)[0]
                        failures.append(f"{scheme} {dname}: dequantize of {label} tensors differs at {tuple(at)}: "
                                        f"{got[tuple(at)]:#x} vs {want[tuple(at)]:#x}")
    took = time.time() - start
    print(f"mlx {mx.__version__} vs lowbit: {compared} tensors, {values} values compared, "
          f"{len(failures)} differences, {took:.1f} s")
    for f in failures[:20]:
        print("  " + f)
    return 1 if failures or compared == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
