#!/usr/bin/env python3
"""Times ggml's C `dequantize_row_iq*` (ggml-py 0.10.1's libggml-base, one thread) over 16M
elements per I-quant type, on the block bytes lowbit's `decode_speed` test decodes (splitmix64
bytes, each block's float16 d set to 1.0), then runs that test, so both figures come from one run:

    python3 scripts/bench_ggml_iquants.py
"""
import ctypes
import os
import pathlib
import subprocess
import time

import numpy as np

TYPES = {"iq2_xxs": (256, 66), "iq2_xs": (256, 74), "iq3_xxs": (256, 98), "iq1_s": (256, 50), "iq4_nl": (32, 18),
         "iq3_s": (256, 110), "iq2_s": (256, 82), "iq4_xs": (256, 136), "iq1_m": (256, 56)}
ELEMENTS = 1 << 24
MASK = (1 << 64) - 1


def splitmix_bytes(n):
    """The low bytes of splitmix64 from 0x12345678, vectorised."""
    k = np.arange(1, n + 1, dtype=np.uint64)
    with np.errstate(over="ignore"):
        z = np.uint64(0x12345678) + k * np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
    return (z & np.uint64(0xFF)).astype(np.uint8)


def main():
    import ggml

    base = ctypes.CDLL(str(pathlib.Path(ggml.__file__).parent / "lib" / "libggml-base.so"))
    for name, (block, nbytes) in TYPES.items():
        blocks = ELEMENTS // block
        raw = splitmix_bytes(blocks * nbytes).reshape(blocks, nbytes)
        if nbytes != 56:
            raw[:, 0] = 0x00
            raw[:, 1] = 0x3C
        raw = np.ascontiguousarray(raw)
        out = np.zeros(ELEMENTS, dtype=np.float32)
        f = getattr(base, f"dequantize_row_{name}")
        f.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64]
        f.restype = None
        best = min(_timed(f, raw, out) for _ in range(5))
        print(f"{name:8} ggml   decode {ELEMENTS / best / 1e6:7.0f} M elements/s", flush=True)
    root = pathlib.Path(__file__).resolve().parent.parent
    subprocess.run(["cargo", "test", "--lib", "decode_speed", "--", "--ignored", "--nocapture"],
                   cwd=root, check=True, env=dict(os.environ, RAYON_NUM_THREADS="1"))


def _timed(f, raw, out):
    t = time.perf_counter()
    f(raw.ctypes.data, out.ctypes.data, out.size)
    return time.perf_counter() - t


if __name__ == "__main__":
    main()
