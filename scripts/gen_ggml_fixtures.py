#!/usr/bin/env python3
"""Records ggml's own outputs for lowbit's ggml block codecs (`lowbit::quant::ggml`): the
fixtures `tests/ggml_codecs.rs` compares lowbit with, every bit.

ggml's C is the one ggml-py 0.10.1 builds (see scripts/crosscheck_ggml.py, the live and larger
check), loaded by ctypes:

    target/blocks-venv/bin/python scripts/gen_ggml_fixtures.py [--out tests/fixtures/ggml] [--scale N]

Per type, one file `<name>.bin` of records, little-endian:
  u8 kind, u32 rows, u32 cols, then
  kind 0 (dequantize): the blocks' bytes, then the rows * cols float32 bits `dequantize_row_*` wrote;
  kind 1 (quantize):   rows * cols float32 inputs, then the bytes `ggml_quantize_chunk` wrote
                       with no importance matrix (Q8_K: `quantize_row_q8_K_ref`);
  kind 2 (quantize with an importance matrix): `cols` float32 weights, then the bytes, of the
                       inputs of the kind 1 record before it.
The blocks to dequantize are random bytes whose float16 `d` (and `dmin`) run through zeros,
subnormals, normals, the largest, Inf and NaN with several payloads (quiet, signalling, both
signs); the rows to quantize are random rows (narrow and wide magnitudes) and edge rows (zeros,
-0.0, a NaN, an Inf, subnormals, float32's largest values). `--scale` multiplies the counts (the
committed files use 1, under 1 MB in all).
"""
import argparse
import ctypes
import pathlib
import struct

import numpy as np

GGML_PY = "0.10.1"

# name: (ggml_type, block elements, block bytes, dequantize function, float16 fields, quantized by chunk)
TYPES = {
    "q4_1": (3, 32, 20, "dequantize_row_q4_1", (0, 2), True),
    "q5_0": (6, 32, 22, "dequantize_row_q5_0", (0,), True),
    "q5_1": (7, 32, 24, "dequantize_row_q5_1", (0, 2), True),
    "q1_0": (41, 128, 18, "dequantize_row_q1_0", (0,), True),
    "q2_k": (10, 256, 84, "dequantize_row_q2_K", (80, 82), True),
    "q3_k": (11, 256, 110, "dequantize_row_q3_K", (108,), True),
    "q4_k": (12, 256, 144, "dequantize_row_q4_K", (0, 2), True),
    "q5_k": (13, 256, 176, "dequantize_row_q5_K", (0, 2), True),
    "q6_k": (14, 256, 210, "dequantize_row_q6_K", (208,), True),
    "q8_k": (15, 256, 292, "dequantize_row_q8_K", (), False),
    "tq1_0": (34, 256, 54, "dequantize_row_tq1_0", (52,), True),
    "tq2_0": (35, 256, 66, "dequantize_row_tq2_0", (64,), True),
}

HALVES = [0x0000, 0x8000, 0x0001, 0x8001, 0x03FF, 0x0400, 0x3C00, 0xBC00, 0x2E66, 0x7BFF, 0xFBFF, 0x7C00, 0xFC00,
          0x7C01, 0xFC01, 0x7E00, 0xFE00, 0x7FFF, 0xFFFF, 0x7D55, 0x1234, 0x0200]
FLOATS = [0x00000000, 0x80000000, 0x00000001, 0x3F800000, 0xBF800000, 0x7F7FFFFF, 0x7F800000, 0xFF800000,
          0x7FC00000, 0x7F800001, 0xFFA5A5A5, 0x7FFFFFFF, 0x3A000000, 0x00800000]


def load():
    from importlib.metadata import version

    found = version("ggml-py")
    if found != GGML_PY:
        raise SystemExit(f"ggml-py {found} is installed; the fixtures are of {GGML_PY}")
    import ggml

    base = ctypes.CDLL(str(pathlib.Path(ggml.__file__).parent / "lib" / "libggml-base.so"))
    return ggml, base


def f32(bits):
    return np.asarray(bits, dtype=np.uint32).view(np.float32)


def dequantize_blocks(rng, info, count):
    t, block, nbytes, _, halves, _ = info
    raw = rng.integers(0, 256, size=(count, nbytes), dtype=np.uint8)
    for i in range(count):
        for k, at in enumerate(halves):
            h = HALVES[(i + 7 * k) % len(HALVES)] if i < 2 * len(HALVES) else int(rng.integers(0, 65536))
            raw[i, at:at + 2] = np.frombuffer(struct.pack("<H", h), np.uint8)
        if not halves:  # Q8_K: a float32 d
            bits = FLOATS[i % len(FLOATS)] if i < 2 * len(FLOATS) else int(rng.integers(0, 2 ** 32))
            raw[i, 0:4] = np.frombuffer(struct.pack("<I", bits), np.uint8)
    return raw


def rows_for(rng, cols, scale):
    rows = []
    for _ in range(scale):
        rows.append(rng.standard_normal(cols).astype(np.float32))
        k = rng.integers(-40, 40, size=cols).astype(np.float32)
        rows.append((rng.standard_normal(cols) * np.exp2(k)).astype(np.float32))
        r = rng.standard_normal(cols).astype(np.float32)
        r[rng.random(cols) < 0.3] = 0.0
        rows.append(r)
        rows.append(np.abs(rng.standard_normal(cols)).astype(np.float32) + np.float32(3.0))
    rows.append(np.zeros(cols, np.float32))
    rows.append(np.full(cols, -0.0, np.float32))
    for bits in (0x7FC00000, 0xFFC00001, 0x7F800001):
        r = rng.standard_normal(cols).astype(np.float32)
        r[int(rng.integers(0, cols))] = f32(bits)
        rows.append(r)
    # Two NaNs of other signs and payloads in one row: which one a sum keeps is gcc's operand
    # order (scripts/crosscheck_ggml.py runs many more).
    for first, second in ((0x7FC00001, 0xFFC00000), (0xFFC00000, 0x7FC00001)):
        r = rng.standard_normal(cols).astype(np.float32)
        r[5], r[22] = f32(first), f32(second)
        rows.append(r)
    # A super-block scale that overflows float16 (d = dmin = Inf: a sub-block scale code 0 makes
    # d * 0 a NaN) with a NaN element at each of the last four places of a 32 (gcc's last
    # vector of four in Q4_K/Q5_K's requantizing loop).
    for at in (28, 29, 30, 31):
        r = (rng.standard_normal(cols) * 1e-5).astype(np.float32)
        r[7] = np.float32(1e8)
        r[64 + at] = f32(0x7FC00001)
        rows.append(r)
    for v in (np.inf, -np.inf):
        r = rng.standard_normal(cols).astype(np.float32)
        r[int(rng.integers(0, cols))] = v
        rows.append(r)
    bits = rng.integers(1, 0x800000, size=cols, dtype=np.uint32) | (rng.integers(0, 2, size=cols, dtype=np.uint32) << 31)
    rows.append(f32(bits))
    r = rng.standard_normal(cols).astype(np.float32)
    r[3] = np.float32(3.4028234663852886e38)
    r[9] = np.float32(-3.4028234663852886e38)
    rows.append(r)
    rows.append((rng.standard_normal(cols) * 1e-30).astype(np.float32))
    rows.append((rng.standard_normal(cols) * 1e30).astype(np.float32))
    return np.stack(rows)


def c_quantize(ggml, base, name, x, imatrix):
    t, block, nbytes, _, _, by_chunk = TYPES[name]
    x = np.ascontiguousarray(x, np.float32)
    rows, cols = x.shape
    out = np.zeros(rows * cols // block * nbytes, np.uint8)
    if not by_chunk:
        f = base.quantize_row_q8_K_ref
        f.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64]
        f.restype = None
        f(x.ctypes.data_as(ctypes.c_void_p), out.ctypes.data_as(ctypes.c_void_p), x.size)
        return out
    w = None if imatrix is None else imatrix.ctypes.data_as(ctypes.POINTER(ctypes.c_float))
    written = ggml.ggml_quantize_chunk(t, x.ctypes.data_as(ctypes.POINTER(ctypes.c_float)),
                                       out.ctypes.data_as(ctypes.c_void_p), 0, rows, cols, w)
    assert written == out.size, (name, written, out.size)
    return out


def c_dequantize(base, name, raw, count):
    f = getattr(base, TYPES[name][3])
    f.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64]
    f.restype = None
    raw = np.ascontiguousarray(raw, np.uint8)
    out = np.zeros(count, np.float32)
    f(raw.ctypes.data_as(ctypes.c_void_p), out.ctypes.data_as(ctypes.c_void_p), count)
    return out


def record(kind, rows, cols, *parts):
    return struct.pack("<BII", kind, rows, cols) + b"".join(np.ascontiguousarray(p).tobytes() for p in parts)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="tests/fixtures/ggml")
    ap.add_argument("--scale", type=int, default=1)
    ap.add_argument("--seed", type=int, default=20261128)
    args = ap.parse_args()
    ggml, base = load()
    out_dir = pathlib.Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    total = 0
    for name, info in TYPES.items():
        rng = np.random.default_rng([args.seed, info[0]])
        t, block, nbytes = info[:3]
        data = []
        count = max(len(HALVES), len(FLOATS)) + 4 * args.scale
        raw = dequantize_blocks(rng, info, count)
        data.append(record(0, count, block, raw, c_dequantize(base, name, raw, count * block)))
        cols = block * max(1, 256 // block)
        x = rows_for(rng, cols, args.scale)
        data.append(record(1, x.shape[0], cols, x, c_quantize(ggml, base, name, x, None)))
        if info[5]:
            for k in range(args.scale):
                imatrix = (np.abs(rng.standard_normal(cols)) * np.exp2(rng.integers(-8, 8, size=cols))).astype(np.float32)
                imatrix[: k % 3] = 0.0
                data.append(record(2, x.shape[0], cols, imatrix, c_quantize(ggml, base, name, x, imatrix)))
        blob = b"".join(data)
        (out_dir / f"{name}.bin").write_bytes(blob)
        total += len(blob)
        print(f"{name}: {len(blob)} bytes")
    print(f"total {total} bytes")


if __name__ == "__main__":
    main()
