#!/usr/bin/env python3
"""Records ggml's I-quants from ggml's own C (ggml-py 0.10.1's libggml-base, x86-64 release build)
into tests/fixtures/ggml_iquants/, which lowbit's tests (src/quant/ggml/iquants.rs) compare with
every bit:

  * dequantize.bin: per type, block bytes and the float32 bits `dequantize_row_iq*` gives for
    them. The blocks are random bytes whose grid indices sweep every grid entry, whose sign fields
    sweep every sign pattern, and whose float16 `d` is a random normal value, or one of a sample
    of special codes (every NaN class and sign, +-Inf, +-0, subnormals, the largest), and for
    IQ4_NL (32-element blocks) a sample of 512 more codes spread over all 65536.
  * quantize.txt: per type, rows from a generator that lowbit's tests run too (splitmix64 and
    integer-only float32 construction: no numpy RNG to reproduce), with and without an importance
    matrix (llama-imatrix's per-column float32 weights), with exact edits (zeros, -0.0,
    subnormals, huge values, NaN, Inf, ties) given as float32 bits, and the bytes of
    `ggml_quantize_chunk`; a case whose C call aborts (ggml's GGML_ASSERT) is recorded as `abort`
    (each C call runs in a forked child).

Needs ggml-py 0.10.1 (pip install ggml-py==0.10.1) and numpy.

    python3 scripts/gen_ggml_iquant_fixtures.py
"""
import ctypes
import os
import pathlib
import struct
import sys

import numpy as np

GGML_PY = "0.10.1"
OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "ggml_iquants"

# name: (ggml_type, block elements, block bytes, grid size, grid slots per block)
TYPES = {
    "iq2_xxs": (16, 256, 66, 256, 32),
    "iq2_xs": (17, 256, 74, 512, 32),
    "iq3_xxs": (18, 256, 98, 256, 64),
    "iq1_s": (19, 256, 50, 2048, 32),
    "iq4_nl": (20, 32, 18, 16, 32),
    "iq3_s": (21, 256, 110, 512, 64),
    "iq2_s": (22, 256, 82, 1024, 32),
    "iq4_xs": (23, 256, 136, 16, 256),
    "iq1_m": (29, 256, 56, 2048, 32),
}

SPECIAL_D = [0x7C00, 0xFC00, 0x7C01, 0xFC01, 0x7E00, 0xFE00, 0x7FFF, 0xFFFF, 0x7D55, 0x0000, 0x8000, 0x0001,
             0x8001, 0x03FF, 0x0400, 0x7BFF, 0xFBFF, 0x3C00, 0xBC00, 0x5BFF, 0x1000, 0x2E66]


def load():
    from importlib.metadata import version

    if version("ggml-py") != GGML_PY:
        sys.exit(f"ggml-py {version('ggml-py')} is installed; the fixtures are pinned to {GGML_PY}")
    import ggml

    base = ctypes.CDLL(str(pathlib.Path(ggml.__file__).parent / "lib" / "libggml-base.so"))
    for name in TYPES:
        f = getattr(base, f"dequantize_row_{name}")
        f.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64]
        f.restype = None
    base.ggml_quantize_chunk.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64,
                                         ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p]
    base.ggml_quantize_chunk.restype = ctypes.c_size_t
    for t, *_ in TYPES.values():  # the search tables once, before the children are forked
        base.ggml_quantize_init(t)
    return base


# ---------------------------------------------------------------------------------------------
# dequantize

def set_slot(name, b, s, idx, sign):
    """Writes grid index `idx` and sign pattern `sign` into grid slot `s` of block `b` (bytes)."""
    if name == "iq2_xxs":
        ib, l = divmod(s, 4)
        b[2 + 8 * ib + l] = idx
        w = struct.unpack_from("<I", b, 2 + 8 * ib + 4)[0]
        w = (w & ~(127 << (7 * l))) | (sign % 128) << (7 * l)
        struct.pack_into("<I", b, 2 + 8 * ib + 4, w)
    elif name == "iq2_xs":
        struct.pack_into("<H", b, 2 + 2 * s, idx | (sign % 128) << 9)
    elif name == "iq2_s":
        b[2 + s] = idx & 255
        b[34 + s] = sign % 256
        q = 66 + s // 4
        sh = 2 * (s % 4)
        b[q] = (b[q] & ~(3 << sh)) | (idx >> 8) << sh
    elif name == "iq3_xxs":
        b[2 + s] = idx
        if s % 2 == 0:
            ib, l = divmod(s // 2, 4)
            w = struct.unpack_from("<I", b, 66 + 4 * ib)[0]
            w = (w & ~(127 << (7 * l))) | (sign % 128) << (7 * l)
            struct.pack_into("<I", b, 66 + 4 * ib, w)
    elif name == "iq3_s":
        b[2 + s] = idx & 255
        ib, p = divmod(s, 8)
        b[66 + ib] = (b[66 + ib] & ~(1 << p)) | (idx >> 8) << p
        if s % 2 == 0:
            b[74 + s // 2] = sign % 256
    elif name == "iq1_s":
        b[2 + s] = idx & 255
        ib, l = divmod(s, 4)
        w = struct.unpack_from("<H", b, 34 + 2 * ib)[0]
        w = (w & ~(7 << (3 * l))) | (idx >> 8) << (3 * l)
        struct.pack_into("<H", b, 34 + 2 * ib, w)
    elif name == "iq1_m":
        b[s] = idx & 255
        ib, l = divmod(s, 4)
        q = 32 + 2 * ib + l // 2
        sh = 0 if l % 2 == 0 else 4
        b[q] = (b[q] & ~(7 << sh)) | (idx >> 8) << sh
    elif name == "iq4_nl":
        pass  # every byte of random nibbles: the 16 values
    elif name == "iq4_xs":
        pass


def set_d(name, b, code):
    if name == "iq1_m":
        for k in range(4):
            w = struct.unpack_from("<H", b, 48 + 2 * k)[0]
            w = (w & 0x0FFF) | ((code >> (4 * k)) & 0xF) << 12
            struct.pack_into("<H", b, 48 + 2 * k, w)
    else:
        struct.pack_into("<H", b, 0, code)


def dequantize_blocks(name, rng):
    _, _, nbytes, grid, slots = TYPES[name]
    coverage = max(1, -(-grid // slots), -(-256 // slots) if name not in ("iq4_nl", "iq4_xs") else 4)
    ds = []
    for _ in range(coverage + 8):  # normal d: exponent field 4..27
        ds.append(int(rng.integers(4, 28)) << 10 | int(rng.integers(0, 1024)) | int(rng.integers(0, 2)) << 15)
    ds += SPECIAL_D
    if name == "iq4_nl":
        ds += [int(c) for c in rng.choice(65536, 512, replace=False)]
    blocks = []
    count = 0
    for i, code in enumerate(ds):
        b = bytearray(rng.integers(0, 256, nbytes, dtype=np.uint8).tobytes())
        for s in range(slots if grid > 16 else 0):
            set_slot(name, b, s, count % grid, count * 37 + 5)
            count += 1
        set_d(name, b, code)
        blocks.append(bytes(b))
    return blocks


def write_dequantize(base, rng):
    out = bytearray(b"LBIQDQ01")
    total = 0
    for name, (_, block, nbytes, _, _) in TYPES.items():
        blocks = dequantize_blocks(name, rng)
        raw = np.frombuffer(b"".join(blocks), dtype=np.uint8).copy()
        y = np.zeros(len(blocks) * block, dtype=np.float32)
        getattr(base, f"dequantize_row_{name}")(raw.ctypes.data, y.ctypes.data, y.size)
        out += struct.pack("<B", len(name)) + name.encode() + struct.pack("<I", len(blocks))
        out += raw.tobytes() + y.view(np.uint32).astype("<u4").tobytes()
        total += y.size
        print(f"dequantize {name}: {len(blocks)} blocks, {y.size} values", flush=True)
    (OUT / "dequantize.bin").write_bytes(bytes(out))
    print(f"dequantize.bin: {len(out)} bytes, {total} values")


# ---------------------------------------------------------------------------------------------
# quantize inputs: the generator lowbit's test runs too

MASK = (1 << 64) - 1


class SplitMix:
    def __init__(self, seed):
        self.s = seed & MASK

    def next(self):
        self.s = (self.s + 0x9E3779B97F4A7C15) & MASK
        z = self.s
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return z ^ (z >> 31)


def pow2(k):
    """2^k as float32 (k from -149 to 127), built from bits."""
    if k >= -126:
        return np.uint32((k + 127) << 23).view(np.float32)
    return np.uint32(1 << (k + 149)).view(np.float32)


def gen_row(kind, seed, n):
    """Float32 row `kind` ('normal', 'wide', 'narrow', 'ints', 'sparse') of `n` values from
    `seed`: a sum of four signed 20-bit integers (exact in float32) times a power of two (per 16
    elements for 'wide'); 'sparse' is three quarters zeros."""
    r = SplitMix(seed)
    out = np.zeros(n, dtype=np.float32)
    scale = np.float32(1)
    for i in range(n):
        if kind == "wide" and i % 16 == 0:
            scale = pow2(int(r.next() % 240) - 149)
        elif kind == "narrow" and i % 16 == 0:
            scale = pow2(int(r.next() % 40) - 40)
        elif i == 0:
            scale = pow2(-20)
        if kind == "ints":
            v = np.float32(int(r.next() % 17) - 8)
        elif kind == "sparse" and r.next() % 4 != 0:
            v = np.float32(0)
        else:
            s = sum(int(r.next() >> 44) - (1 << 19) for _ in range(4))
            v = np.float32(s) * scale
        out[i] = v
    return out


def gen_imatrix(seed, n, zeros):
    """Positive per-column weights (23-bit integers times 2^-20), every 7th zero where `zeros`."""
    r = SplitMix(seed ^ 0x5DEECE66D)
    w = np.zeros(n, dtype=np.float32)
    for i in range(n):
        v = np.float32(int(r.next() >> 41) + 1) * pow2(-20)
        w[i] = 0 if zeros and i % 7 == 3 else v
    return w


def c_quantize(base, t, x, w, rows, n, nbytes):
    """`ggml_quantize_chunk` in a forked child: the bytes, or None where it aborts."""
    rd, wr = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(rd)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)  # ggml prints its search state before some aborts
        os.dup2(devnull, 2)  # and its abort message; the status is what is recorded
        try:
            dst = np.zeros(rows * nbytes, dtype=np.uint8)
            xs = np.ascontiguousarray(x, dtype=np.float32)
            ws = None if w is None else np.ascontiguousarray(w, dtype=np.float32)
            base.ggml_quantize_chunk(t, xs.ctypes.data, dst.ctypes.data, 0, rows, n,
                                     None if ws is None else ws.ctypes.data)
            os.write(wr, dst.tobytes())
        finally:
            os._exit(0)
    os.close(wr)
    data = b""
    while True:
        chunk = os.read(rd, 1 << 16)
        if not chunk:
            break
        data += chunk
    os.close(rd)
    _, status = os.waitpid(pid, 0)
    if status != 0 or len(data) != rows * nbytes:
        return None
    return data


F32 = lambda bits: np.uint32(bits).view(np.float32)  # noqa: E731


def edits_for(kind, n, seed):
    """(index, float32 bits) edits of a row of `n` for the edge kinds."""
    r = SplitMix(seed * 7 + 1)
    pick = lambda: int(r.next() % n)  # noqa: E731
    if kind == "zeros":
        return [(i, 0) for i in range(n)]
    if kind == "negzero":
        return [(i, 0x80000000) for i in range(n)]
    if kind == "zero_block":
        return [(i, 0x80000000 if i % 3 else 0) for i in range(32)] + [(i, 0) for i in range(256, 288)]
    if kind == "subnormal":
        return [(i, (int(r.next() % 0x7FFFFF) + 1) | (0x80000000 if i % 2 else 0)) for i in range(n)]
    if kind == "tiny":
        return [(i, 0x26000000 + int(r.next() % 0x800000) | (0x80000000 if i % 2 else 0)) for i in range(n)]
    if kind == "huge":
        return [(pick(), 0x7F000000 + int(r.next() % 0x7FFFFF)) for _ in range(4)]
    if kind == "max":
        return [(i, 0x7F7FFFFF if i % 2 else 0xFF7FFFFF) for i in range(n)]
    if kind == "big":
        return [(pick(), 0x47800000 + int(r.next() % 0x1000000)) for _ in range(8)]
    if kind == "nan":
        return [(pick(), 0x7FC00000), (pick(), 0xFFA5A5A5)]
    if kind == "inf":
        return [(pick(), 0x7F800000)]
    if kind == "neginf":
        return [(pick(), 0xFF800000)]
    if kind == "one_value":
        return [(i, 0x3F800000) for i in range(n)]
    if kind == "ties":  # values at the midpoints of kvalues / grid steps times a power of two
        return [(i, int(np.float32((int(r.next() % 64) - 32) * 0.5).view(np.uint32))) for i in range(n)]
    return []


def quantize_cases():
    """(kind of values, edit kind, rows, n per row, imatrix: 0 none / 1 / 2 with zeros)."""
    cases = []
    for kind in ["normal", "wide", "narrow", "ints"]:
        for imat in (0, 1, 2):
            cases.append((kind, "", 2, 512, imat))
    for edit in ["zeros", "negzero", "zero_block", "subnormal", "tiny", "huge", "max", "big", "nan", "inf",
                 "neginf", "one_value", "ties"]:
        for imat in (0, 1):
            cases.append(("normal", edit, 1, 512, imat))
    for rep in range(4):  # more random rows, longer, and sparse ones (whole zero groups)
        cases.append(("normal", "", 1, 1024, 1 + rep % 2))
        cases.append(("wide", "", 1, 1024, rep % 3))
        cases.append(("sparse", "", 1, 512, rep % 3))
    cases.append(("normal", "", 1, 288, 0))  # not a whole number of 256-blocks for the K-size types
    return cases


def write_quantize(base, types):
    lines = ["# ggml-py 0.10.1 ggml_quantize_chunk; see scripts/gen_ggml_iquant_fixtures.py",
             "# type kind edit rows n imatrix seed result(hex|abort)"]
    seed = 1
    for name in types:
        t, block, nbytes, _, _ = TYPES[name]
        aborts = done = 0
        for kind, edit, rows, n, imat in quantize_cases():
            seed += 1
            x = gen_row(kind, seed, rows * n)
            for i, bits in edits_for(edit, rows * n, seed):
                x[i] = F32(bits)
            w = gen_imatrix(seed, n, imat == 2) if imat else None
            res = c_quantize(base, t, x.reshape(rows, n), w, rows, n, n // block * nbytes)
            text = "abort" if res is None else res.hex()
            aborts += res is None
            done += 1
            lines.append(f"{name} {kind} {edit or '-'} {rows} {n} {imat} {seed} {text}")
        print(f"quantize {name}: {done} cases, {aborts} abort", flush=True)
    (OUT / "quantize.txt").write_text("\n".join(lines) + "\n")


def main():
    os.environ["GGML_NO_BACKTRACE"] = "1"  # an abort in a child: no debugger backtrace
    base = load()
    OUT.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(20261128)
    write_dequantize(base, rng)
    write_quantize(base, list(TYPES))


if __name__ == "__main__":
    main()
