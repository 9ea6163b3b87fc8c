#!/usr/bin/env python3
"""Compares lowbit's `ggml:*` block recipes with ggml's own C code, run live, bit for bit: the
quantize bytes (`ggml_quantize_chunk`, which runs ggml-quants.c's `quantize_row_*_ref`) and the
float32 bits of the dequantize (`dequantize_row_*`, exported by libggml-base).

The C library is the one the PyPI package ggml-py 0.10.1 builds from its vendored ggml with cmake
(a source package: pip compiles it, about 1.5 minutes on two cores; it needs cmake and a C
compiler) and loads by ctypes. Its `libggml-base.so` is a release build for the machine's default
target: on x86-64, gcc with SSE2 and no FMA in ggml-base (the CPU backend's own SIMD kernels are not
the reference and are not called). Needs a venv with it and lowbit's Python package:

    python3 -m venv target/ggml-venv
    target/ggml-venv/bin/pip install ggml-py==0.10.1 numpy==2.4.6 maturin
    PATH=$PWD/target/ggml-venv/bin:$PATH target/ggml-venv/bin/pip install --no-build-isolation ./python
    target/ggml-venv/bin/python scripts/crosscheck_ggml.py [--only TEXT] [--sample N] [--seed S]
    target/ggml-venv/bin/python scripts/crosscheck_ggml.py --self-test

Per scheme (`ggml:q8_0`, `ggml:q4_0`, `ggml:mxfp4`, `ggml:nvfp4`), inputs are float32 rows of whole
blocks:
  * random: normal values whose magnitude changes per 16 elements over 2^-140 .. 2^120, and a
    narrow range (2^-20 .. 2^20), 1 % heavy tails;
  * edge blocks: zeros, -0.0 (alone and first), NaN at every position of a block, with several
    payloads (quiet, signalling, all bits) and both signs, +-Inf at every position and beside a
    NaN, float32 subnormals (whole blocks of them and mixed), float32's largest values, maxima
    whose d overflows float16 (amax / 127 > 65504) or underflows it, maxima at, just below and
    just above powers of two, maxima that make UE4M3 subnormal scales (and their ties), element
    ties at every scale rule's midpoints, and random blocks with such values at random places.
Compared, every bit (NaN codes and payloads, the sign of zero; no equivalence class):
  * `lowbit.blocks.quantize(x, scheme).to_bytes()` (the GGUF block layout) against the bytes of
    `ggml_quantize_chunk`;
  * `dequantize()` of lowbit's quantized tensor against `dequantize_row_*` of lowbit's bytes, and
    `from_bytes(C's bytes).dequantize()` against `dequantize_row_*` of C's bytes;
  * the dequantize of random block bytes holding every scale: each of the 65536 float16 `d` (NaN
    and Inf included) for Q8_0 and Q4_0, each E8M0 byte for MXFP4, each UE4M3 byte in each of the
    four sub-block slots for NVFP4.
A C function never raises; an exception from the ctypes call is a failure. lowbit refusing a
tensor is a difference. (No peer refusal is declared: `DECLARED_REFUSALS` is empty.)

ggml's block types of lowbit's table (`ggml:q4_1`, `ggml:q4_k`, `ggml:tq1_0`, ... every `ggml:`
scheme `lowbit.blocks.SCHEMES` lists beyond the four above, so new rows join by themselves) are
found in ggml by name (`ggml_type_name`), their block and functions from `ggml_get_type_traits`
(`to_float` = `dequantize_row_*`; quantize through `ggml_quantize_chunk`, Q8_K, which it has
not, through `from_float_ref` = `quantize_row_q8_K_ref`). Per type:
  * quantize, without and with an importance matrix (positive weights over 2^-8 .. 2^8, some 0),
    of the random rows and the edge blocks above (each edge block a row), bytes against
    `ggml_quantize_chunk`'s; lowbit's dequantize against `to_float` of lowbit's bytes;
    `from_bytes(C's bytes).dequantize()` against `to_float` of C's bytes;
  * dequantize of random blocks whose float16 `d` (and `dmin`) take each of the 65536 codes
    (NaN and Inf included; below `--sample 64` the NaN and Inf codes and a random sample), and
    whose packed scale bytes take each byte value in turn (every 6-bit scale and min pattern
    of Q4_K/Q5_K, every Q3_K/Q2_K/Q6_K scale byte);
  * inputs on which ggml's C aborts (GGML_ASSERT kills the process) are not given to C; lowbit
    must refuse them with an error naming why (`C_ABORTS`, listed in the output as declared
    refusals): a row that is not a whole number of blocks (ggml_row_size asserts), and no
    importance matrix for a type that requires one (ggml_quantize_chunk asserts).

`--library PATH --contract fma` checks the `ggml:q4_0,contract=fma` and `ggml:mxfp4,contract=fma`
rows against another build of ggml's reference functions (a shared library exporting
`quantize_row_*_ref` and `dequantize_row_*`, e.g. ggml-quants.c compiled by gcc with
`-O2 -march=native` on an FMA CPU, which fuses both multiply-adds; `-O3 -march=native` fuses
Q4_0's only). `--library` alone compares the default rows with such a build.

Prints, per scheme, the elements and blocks compared and the differences; exit status 1 on any
difference, on a scheme that compared nothing, and when nothing at all was compared; exit 2 when
ggml-py is missing or not version 0.10.1. `--self-test` shows that an empty selection fails and that
a byte flipped in each scheme's quantize bytes, and a bit flipped in its dequantize, fail.
"""
import argparse
import ctypes
import pathlib
import sys

import numpy as np

import crosscheck_record

GGML_PY = "0.10.1"
OTHER = None  # --library: another build's quantize_row_*_ref / dequantize_row_*
CONTRACT = ""  # --contract fma: the option appended to ggml:q4_0 and ggml:mxfp4

# scheme: (ggml_type, elements per block, bytes per block, C dequantize function)
SCHEMES = {
    "ggml:q8_0": (8, 32, 34, "dequantize_row_q8_0"),
    "ggml:q4_0": (2, 32, 18, "dequantize_row_q4_0"),
    "ggml:mxfp4": (39, 32, 17, "dequantize_row_mxfp4"),
    "ggml:nvfp4": (40, 64, 36, "dequantize_row_nvfp4"),
}

# ggml's block types of lowbit's table: where each block keeps its float16 d/dmin (byte offsets;
# Q8_K's d is a float32 at 0) and its packed scale bytes (a range), for the random-bytes check.
# A type not named here (a row added later) is read with d at byte 0 and no scale bytes.
CODEC_FIELDS = {
    "q4_1": ((0, 2), None), "q5_0": ((0,), None), "q5_1": ((0, 2), None), "q1_0": ((0,), None),
    "q2_k": ((80, 82), (0, 16)), "q3_k": ((108,), (96, 108)), "q4_k": ((0, 2), (4, 16)),
    "q5_k": ((0, 2), (4, 16)), "q6_k": ((208,), (192, 208)), "q8_k": ((), None),
    "tq1_0": ((52,), None), "tq2_0": ((64,), None),
}
# Inputs on which ggml's C aborts, so not given to it: (what, the text lowbit's refusal names).
C_ABORTS = [
    ("a row that is not a whole number of blocks (ggml_row_size: GGML_ASSERT)", "not a whole number of blocks"),
    ("no importance matrix for a type that requires one (ggml_quantize_chunk: GGML_ASSERT)", "importance matrix"),
]
CODECS = {}  # scheme: (ggml_type, block elements, block bytes, to_float, from_float_ref or None)
# The I-quants: their quantizers abort the process on many edge rows (NaN, Inf, overflowing
# squares: GGML_ASSERT on the grid index or the scale), which this script's in-process calls
# cannot survive; they are checked against the same C, each call in a forked child, by
# scripts/gen_ggml_iquant_fixtures.py's recordings (tests/fixtures/ggml_iquants, cargo test).
RECORDED_ONLY = {"iq1_s", "iq1_m", "iq2_xxs", "iq2_xs", "iq2_s", "iq3_xxs", "iq3_s", "iq4_nl", "iq4_xs"}


ROW_FN = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64]
# Types ggml_quantize_chunk has no case for (its default asserts the size written, and aborts):
# quantized by their exported quantize_row_*_ref instead, with no importance matrix.
NOT_IN_CHUNK = {"q8_k"}


def find_codecs():
    """ggml's block types of lowbit's table: each `ggml:` scheme lowbit lists beyond SCHEMES,
    looked up in ggml by name; returns the schemes ggml has no such type or function for."""
    BASE.ggml_type_name.restype = ctypes.c_char_p
    BASE.ggml_type_name.argtypes = [ctypes.c_int]
    BASE.ggml_blck_size.restype = ctypes.c_int64
    BASE.ggml_blck_size.argtypes = [ctypes.c_int]
    BASE.ggml_type_size.restype = ctypes.c_size_t
    BASE.ggml_type_size.argtypes = [ctypes.c_int]
    by_name = {}
    for t in range(int(GGML.GGML_TYPE_COUNT)):  # beyond it ggml_type_name reads past its table
        name = BASE.ggml_type_name(t)
        if name and name.decode().lower() not in by_name:
            by_name[name.decode().lower()] = (t, name.decode())
    missing = []
    for scheme, _ in lowbit.blocks.SCHEMES:
        if not scheme.startswith("ggml:") or "|" in scheme or "," in scheme or scheme in SCHEMES:
            continue
        if scheme.split(":")[1] in RECORDED_ONLY:
            continue
        found = by_name.get(scheme.split(":")[1])
        try:
            t, spelled = found
            to_float = getattr(BASE, f"dequantize_row_{spelled}")
        except (TypeError, AttributeError):
            missing.append(scheme)
            continue
        to_float.argtypes, to_float.restype = ROW_FN, None
        ref = None
        if scheme.split(":")[1] in NOT_IN_CHUNK:
            ref = getattr(BASE, f"quantize_row_{spelled}_ref")
            ref.argtypes, ref.restype = ROW_FN, None
        CODECS[scheme] = (t, int(BASE.ggml_blck_size(t)), int(BASE.ggml_type_size(t)), to_float, ref)
    return missing


def c_codec_quantize(scheme, x, imatrix):
    """`ggml_quantize_chunk` (with `imatrix` or NULL) of rows `x`: the bytes."""
    t, block, nbytes, _, ref = CODECS[scheme]
    x = np.ascontiguousarray(x, dtype=np.float32)
    rows, n = x.shape
    out = np.zeros(rows * n // block * nbytes, dtype=np.uint8)
    if ref is not None:
        ref(x.ctypes.data_as(ctypes.c_void_p), out.ctypes.data_as(ctypes.c_void_p), x.size)
        return out
    w = None if imatrix is None else np.ascontiguousarray(imatrix, np.float32).ctypes.data_as(ctypes.POINTER(ctypes.c_float))
    written = GGML.ggml_quantize_chunk(t, x.ctypes.data_as(ctypes.POINTER(ctypes.c_float)),
                                       out.ctypes.data_as(ctypes.c_void_p), 0, rows, n, w)
    if written != out.size:
        raise RuntimeError(f"ggml_quantize_chunk wrote {written} bytes, not {out.size}")
    return out


def c_codec_dequantize(scheme, raw, count):
    raw = np.ascontiguousarray(raw, dtype=np.uint8)
    out = np.zeros(count, dtype=np.float32)
    CODECS[scheme][3](raw.ctypes.data_as(ctypes.c_void_p), out.ctypes.data_as(ctypes.c_void_p), count)
    return out.view(np.uint32)


def codec_random_bytes(scheme, rng, sample):
    """Random blocks: each float16 field takes every code (NaN, Inf included) in turn, the
    packed scale bytes every byte value."""
    _, block, nbytes, _, _ = CODECS[scheme]
    halves, scale_range = CODEC_FIELDS.get(scheme.split(":")[1], ((0,), None))
    if sample >= 64:
        codes = np.arange(65536, dtype=np.uint16)
    else:
        codes = np.concatenate([np.arange(0x7C00, 0x7E01, dtype=np.uint16), np.arange(0xFC00, 0xFE01, dtype=np.uint16),
                                np.array([0, 0x8000, 1, 0x8001, 0x3C00, 0x7BFF], np.uint16),
                                rng.integers(0, 65536, size=64 * sample, dtype=np.uint16)])
    parts = []
    for k, at in enumerate(halves or (None,)):
        raw = rng.integers(0, 256, size=(len(codes), nbytes), dtype=np.uint8)
        if at is None:  # Q8_K: a float32 d; its special values and random ones
            specials = np.array([0, 0x80000000, 1, 0x7F7FFFFF, 0x7F800000, 0xFF800000, 0x7FC00000, 0x7F800001,
                                 0xFFA5A5A5, 0x7FFFFFFF, 0x3F800000], np.uint32)
            d = np.concatenate([specials, rng.integers(0, 2 ** 32, size=len(codes) - len(specials), dtype=np.uint32)])
            raw[:, 0:4] = d.view(np.uint8).reshape(-1, 4)
        else:
            raw[:, at:at + 2] = codes.view(np.uint8).reshape(-1, 2)
            for other in halves:  # the other field: finite, so that this one's NaN and Inf show
                if other != at:
                    raw[:, other:other + 2] = rng.integers(0, 0x7C00, size=len(codes), dtype=np.uint16).view(
                        np.uint8).reshape(-1, 2)
        if scale_range is not None:
            lo, hi = scale_range
            raw[:256, lo:hi] = np.arange(256, dtype=np.uint8)[:, None]
        parts.append(raw)
    raw = np.concatenate(parts)
    return raw, len(raw) * block


def codec_inputs(scheme, rng, sample):
    """(name, rows x n float32) inputs for a codec's quantize: random rows and the edge blocks,
    each edge block a row."""
    block = CODECS[scheme][1]
    rows = max(1, sample)
    cols = block * max(1, 256 // block) * 2
    edges = np.stack(edge_blocks(rng, block))
    if sample < 64:
        edges = edges[rng.permutation(len(edges))[: max(64, 8 * sample)]]
    return [
        ("random_wide", wide_random(rng, rows, cols, -140, 120)),
        ("random_narrow", wide_random(rng, rows, cols, -20, 20)),
        ("edge", edges.reshape(-1, block)),
    ]


def importance(rng, cols):
    w = (np.abs(rng.standard_normal(cols)) * np.exp2(rng.integers(-8, 9, size=cols))).astype(np.float32)
    w[rng.random(cols) < 0.05] = 0.0
    return w


def check_codec_quantize(tally, scheme, name, x, imatrix, inject):
    _, block, nbytes, _, ref = CODECS[scheme]
    key = f"{scheme} {name}{' imatrix' if imatrix is not None else ''}"
    if imatrix is not None and ref is not None:
        return  # ggml quantizes this type with no importance matrix
    theirs, refused = peer_call(tally, key, c_codec_quantize, scheme, x, imatrix)
    try:
        q = lowbit.blocks.quantize(x, scheme, imatrix=imatrix)
        ours = np.frombuffer(q.to_bytes(), dtype=np.uint8).copy()
    except Exception as e:
        if refused is None:
            tally.failed(key, f"lowbit refuses ({type(e).__name__}: {e}) where ggml quantizes")
        return
    if theirs is None:
        return
    tally.elements += x.size
    tally.blocks += x.size // block
    if inject == "bytes":
        ours[len(ours) // 2] ^= 0x10
    tally.same(key, ours, theirs, "bytes", None, byte_position(nbytes))
    mine = np.array(q.dequantize(dtype=np.float32), dtype=np.float32).reshape(-1).view(np.uint32).copy()
    if inject == "values":
        mine[len(mine) // 3] ^= 1
    c_of_mine, _ = peer_call(tally, key, c_codec_dequantize, scheme, ours if inject != "bytes" else theirs, x.size)
    if c_of_mine is not None:
        tally.same(key, mine, c_of_mine, "dequantize (lowbit's bytes)", None, describe_input(x))
    c_values, _ = peer_call(tally, key, c_codec_dequantize, scheme, theirs, x.size)
    try:
        back = lowbit.blocks.from_bytes(theirs.tobytes(), scheme, x.shape)
        decoded = np.array(back.dequantize(dtype=np.float32), dtype=np.float32).reshape(-1).view(np.uint32)
    except Exception as e:
        tally.failed(key, f"lowbit refuses from_bytes of ggml's bytes ({type(e).__name__}: {e})")
        return
    if c_values is not None:
        tally.same(key, decoded, c_values, "dequantize (ggml's bytes)", None, describe_input(x))


def check_codec_random_bytes(tally, scheme, rng, sample, inject):
    _, block, nbytes, _, _ = CODECS[scheme]
    raw, count = codec_random_bytes(scheme, rng, sample)
    key = f"{scheme} random bytes (every d, dmin and scale byte)"
    theirs, _ = peer_call(tally, key, c_codec_dequantize, scheme, raw.reshape(-1), count)
    try:
        q = lowbit.blocks.from_bytes(raw.tobytes(), scheme, (len(raw), block))
        ours = np.array(q.dequantize(dtype=np.float32), dtype=np.float32).reshape(-1).view(np.uint32).copy()
    except Exception as e:
        tally.failed(key, f"lowbit refuses from_bytes ({type(e).__name__}: {e})")
        return
    if theirs is None:
        return
    if inject == "values":
        ours[0] ^= 0x80000000
    tally.blocks += len(raw)
    tally.same(key, ours, theirs, "dequantize", None, lambda i: f"block {i // block} bytes {raw[i // block][:4].tobytes().hex()}")


def check_codec_refusals(tally, scheme, rng):
    """The inputs ggml's C aborts on (not given to it): lowbit must refuse each, naming why."""
    _, block, _, _, _ = CODECS[scheme]
    cases = [(C_ABORTS[0], lambda: lowbit.blocks.quantize(rng.standard_normal((2, block + 1)).astype(np.float32), scheme))]
    if GGML.ggml_quantize_requires_imatrix(CODECS[scheme][0]):
        cases.append((C_ABORTS[1], lambda: lowbit.blocks.quantize(rng.standard_normal((2, block)).astype(np.float32),
                                                                  scheme)))
    for (what, text), call in cases:
        try:
            call()
            tally.failed(f"{scheme} {what}", "lowbit quantizes what ggml aborts on")
        except Exception as e:
            if text not in str(e):
                tally.failed(f"{scheme} {what}", f"lowbit's refusal does not say why: {e}")
            else:
                tally.refusals += 1


# (exception type name, message substring) a peer may raise where lowbit must refuse too. ggml's C
# functions have no error path for the inputs given here (whole blocks), so there is none.
DECLARED_REFUSALS = []

F32_MAX = np.float32(3.4028234663852886e38)
NAN_PAYLOADS = [0x7FC00000, 0xFFC00000, 0x7F800001, 0xFF800001, 0x7FFFFFFF, 0xFFFFFFFF, 0x7FA5A5A5, 0xFFC00001]


def load_ggml():
    """ggml-py's module (its ggml_quantize_chunk) and libggml-base (dequantize_row_*)."""
    try:
        from importlib.metadata import version

        found = version("ggml-py")
    except Exception:
        print("ggml-py is not installed (pip install ggml-py==0.10.1)")
        sys.exit(2)
    if found != GGML_PY:
        print(f"ggml-py {found} is installed; this check is pinned to {GGML_PY}")
        sys.exit(2)
    import ggml

    base = ctypes.CDLL(str(pathlib.Path(ggml.__file__).parent / "lib" / "libggml-base.so"))
    for name in {s[3] for s in SCHEMES.values()}:
        f = getattr(base, name)
        f.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64]
        f.restype = None
    return ggml, base


def c_quantize(scheme, x):
    """`ggml_quantize_chunk` of float32 rows `x` (rows x n): the bytes, rows one after another
    (with `--library`: that library's `quantize_row_*_ref` over the whole array)."""
    t, block, nbytes, _ = SCHEMES[scheme]
    x = np.ascontiguousarray(x, dtype=np.float32)
    rows, n = x.shape
    out = np.zeros(rows * n // block * nbytes, dtype=np.uint8)
    if OTHER is not None:
        f = getattr(OTHER, f"quantize_row_{scheme.split(':')[1]}_ref")
        f.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64]
        f.restype = None
        f(x.ctypes.data_as(ctypes.c_void_p), out.ctypes.data_as(ctypes.c_void_p), x.size)
        return out
    written = GGML.ggml_quantize_chunk(t, x.ctypes.data_as(ctypes.POINTER(ctypes.c_float)),
                                       out.ctypes.data_as(ctypes.c_void_p), 0, rows, n, None)
    if written != out.size:
        raise RuntimeError(f"ggml_quantize_chunk wrote {written} bytes, not {out.size}")
    return out


def c_dequantize(scheme, raw, count):
    """`dequantize_row_*` of `count` elements' blocks: the float32 values' bits."""
    raw = np.ascontiguousarray(raw, dtype=np.uint8)
    out = np.zeros(count, dtype=np.float32)
    getattr(BASE if OTHER is None else OTHER, SCHEMES[scheme][3])(raw.ctypes.data_as(ctypes.c_void_p), out.ctypes.data_as(ctypes.c_void_p),
                                      count)
    return out.view(np.uint32)


# ---------------------------------------------------------------------------------------------
# Inputs


def f32(bits):
    return np.asarray(bits, dtype=np.uint32).view(np.float32)


def wide_random(rng, rows, cols, low, high):
    """Normal values, magnitude 2^k per 16 elements with k in [low, high], 1 % times 50."""
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    k = rng.integers(low, high + 1, size=(rows, (cols + 15) // 16)).astype(np.float32)
    with np.errstate(over="ignore", under="ignore"):
        x *= np.repeat(np.exp2(k), 16, axis=1)[:, :cols]
        x[rng.random((rows, cols)) < 0.01] *= 50.0
    return x.astype(np.float32)


def edge_blocks(rng, block):
    """Edge blocks of `block` float32 values (a list of arrays, each one block)."""
    out = []
    base = lambda: rng.standard_normal(block).astype(np.float32)  # noqa: E731
    out.append(np.zeros(block, np.float32))
    out.append(np.full(block, -0.0, np.float32))
    z = np.zeros(block, np.float32)
    z[0] = -0.0
    out.append(z)
    z = np.full(block, -0.0, np.float32)
    z[-1] = 0.0
    out.append(z)
    # NaN at every position, each payload, in a random block and in a zero block.
    for p, bits in enumerate(NAN_PAYLOADS):
        for i in range(block):
            b = base()
            b[i] = f32(bits)
            out.append(b)
        for i in (0, block // 2, block - 1):
            b = np.zeros(block, np.float32)
            b[i] = f32(bits)
            out.append(b)
        out.append(np.full(block, f32(bits), np.float32))
    # +-Inf at every position, alone, with a NaN, with a larger finite value.
    for sign in (1.0, -1.0):
        for i in range(block):
            b = base()
            b[i] = sign * np.inf
            out.append(b)
        b = base()
        b[1], b[5] = sign * np.inf, np.nan
        out.append(b)
        b = np.zeros(block, np.float32)
        b[3] = sign * np.inf
        out.append(b)
    b = np.full(block, np.inf, np.float32)
    b[::2] = -np.inf
    out.append(b)
    # float32 subnormals: whole blocks, and beside normals.
    for _ in range(24):
        bits = rng.integers(1, 0x800000, size=block, dtype=np.uint32) >> rng.integers(0, 23)
        bits |= (rng.integers(0, 2, size=block, dtype=np.uint32) << 31)
        out.append(f32(bits))
    for k in range(1, 23):
        b = f32(np.full(block, 1 << k, np.uint32)) * np.sign(rng.standard_normal(block)).astype(np.float32)
        out.append(b.astype(np.float32))
    b = base() * np.float32(2.0 ** -130)
    out.append(b.astype(np.float32))
    # float32's largest values, and maxima whose float16 d overflows or underflows.
    for v in (F32_MAX, -F32_MAX, np.float32(1e38), np.float32(65504 * 127), np.float32(65504 * 127 * 1.0001),
              np.float32(65504 * 8), np.float32(65520 * 8), np.float32(65519 * 8), np.float32(1e7),
              np.float32(1e-3), np.float32(6e-8 * 127), np.float32(2.0 ** -24 * 127), np.float32(1e-8),
              np.float32(2.0 ** -126), np.float32(2.0 ** -122), np.float32(2.0 ** -121), np.float32(2.0 ** -127)):
        for sign in (1, -1):
            b = (base() * v / np.float32(4)).astype(np.float32)
            b[rng.integers(0, block)] = sign * v
            out.append(b)
    # Maxima at, just below and just above powers of two, over the whole range.
    for k in range(-149, 128, 3):
        p = np.float32(2.0 ** k)
        for m in (p, np.nextafter(p, np.float32(0)), np.nextafter(p, np.float32(np.inf))):
            if not np.isfinite(m) or m == 0:
                continue
            b = (rng.uniform(-1, 1, block) * m).astype(np.float32)
            b[rng.integers(0, block)] = m
            out.append(b)
    # Element ties: every multiple of a quarter of d's unit at several scales.
    for k in (-130, -126, -20, -1, 0, 5, 30, 100, 125):
        for unit in (1.0 / 127, 1.0 / 8, 0.25, 0.5, 1.0 / 6):
            steps = (np.arange(block) - block // 2).astype(np.float32) * np.float32(0.5)
            b = (steps * np.float32(unit) * np.float32(2.0 ** k)).astype(np.float32)
            out.append(b)
        b = (np.arange(block) % 16 * np.float32(0.25) + np.float32(0.125)).astype(np.float32) * np.float32(2.0 ** k)
        b[0] = np.float32(6.0 * 2.0 ** k)
        out.append(b.astype(np.float32))
    # UE4M3 subnormal scales (amax / 6 below 2^-6) and scale ties (amax / 6 = 1.0625 * 2^k, ...).
    for m in np.concatenate([np.arange(1, 40) * np.float32(6.0 / 1024), np.arange(1, 16) * np.float32(6.0 / 512)]):
        b = (rng.uniform(-1, 1, block) * m).astype(np.float32)
        b[0] = m
        out.append(b)
    for k in range(-12, 10):
        for frac in (1.0625, 1.1875, 1.9375, 1.99, 1.5):
            m = np.float32(6.0 * frac * 2.0 ** k)
            b = (rng.uniform(-1, 1, block) * m).astype(np.float32)
            b[block - 1] = m
            out.append(b)
    for _ in range(16):
        m = np.float32(rng.uniform(0, 0.1))
        b = (rng.uniform(-1, 1, block) * m).astype(np.float32)
        b[0] = m
        out.append(b)
    # Random blocks with edge values at random places.
    specials = f32([0, 0x80000000, 0x7FC00000, 0xFFC00000, 0x7F800001, 0x7F800000, 0xFF800000, 0x7F7FFFFF,
                    0xFF7FFFFF, 1, 0x80000001, 0x00800000, 0x3F000000, 0xBF400000, 0x3FE00000, 0x40C00000])
    for _ in range(64):
        b = wide_random(rng, 1, block, -30, 30).reshape(-1)
        where = rng.integers(0, block, size=rng.integers(1, 4))
        b[where] = rng.choice(specials, size=len(where)) * np.float32(2.0 ** int(rng.integers(-4, 5)))
        out.append(b.astype(np.float32))
    return out


def quantize_inputs(scheme, rng, sample):
    """(name, rows x n float32) inputs for `scheme`'s quantize."""
    block = SCHEMES[scheme][1]
    rows = max(1, sample)
    cols = block * 8
    edges = np.stack(edge_blocks(rng, block))
    return [
        ("random_wide", wide_random(rng, rows, cols, -140, 120)),
        ("random_narrow", wide_random(rng, rows, cols, -20, 20)),
        ("edge", edges.reshape(-1, block)),
    ]


def random_bytes(scheme, rng, sample):
    """Random blocks holding every scale value (the scale field written over random bytes)."""
    _, block, nbytes, _ = SCHEMES[scheme]
    per = max(1, sample // 64)
    if scheme in ("ggml:q8_0", "ggml:q4_0"):
        scales = np.repeat(np.arange(65536, dtype=np.uint16), per if sample >= 64 else 1)
        if sample < 64:
            scales = np.concatenate([np.arange(0x7C00, 0x7E01, dtype=np.uint16),
                                     np.arange(0xFC00, 0xFE01, dtype=np.uint16),
                                     rng.integers(0, 65536, size=64 * sample, dtype=np.uint16)])
        raw = rng.integers(0, 256, size=(len(scales), nbytes), dtype=np.uint8)
        raw[:, 0:2] = scales.view(np.uint8).reshape(-1, 2)
    elif scheme == "ggml:mxfp4":
        scales = np.repeat(np.arange(256, dtype=np.uint8), 4 * per)
        raw = rng.integers(0, 256, size=(len(scales), nbytes), dtype=np.uint8)
        raw[:, 0] = scales
    else:
        scales = np.repeat(np.arange(256, dtype=np.uint8), 4 * per)
        raw = rng.integers(0, 256, size=(len(scales), nbytes), dtype=np.uint8)
        for s in range(4):
            raw[:, s] = np.roll(scales, 37 * s)
    # Every element code with every scale: the first blocks hold the codes in order.
    raw[: min(len(raw), 16), 2 if nbytes in (34, 18) else (1 if nbytes == 17 else 4):] = np.arange(
        nbytes - (2 if nbytes in (34, 18) else (1 if nbytes == 17 else 4)), dtype=np.uint8) * np.uint8(17)
    return raw, len(raw) * block


# ---------------------------------------------------------------------------------------------
# The comparison


class Tally:
    """What one scheme compared: elements, blocks, bytes, and every difference."""

    def __init__(self, scheme):
        self.scheme = scheme
        self.elements = 0
        self.blocks = 0
        self.bytes = 0
        self.values = 0
        self.differences = 0
        self.refusals = 0
        self.lines = []

    def same(self, key, ours, theirs, what, inputs, shown):
        ours, theirs = np.asarray(ours).reshape(-1), np.asarray(theirs).reshape(-1)
        if ours.shape != theirs.shape:
            self.differences += max(ours.size, theirs.size)
            self.lines.append(f"{key} {what}: lowbit gave {ours.size}, ggml {theirs.size}")
            return
        if what == "bytes":
            self.bytes += ours.size
        else:
            self.values += ours.size
        bad = np.nonzero(ours != theirs)[0]
        if len(bad):
            self.differences += len(bad)
            i = int(bad[0])
            self.lines.append(f"{key} {what}: {len(bad)} of {ours.size} differ; first at {i} ({shown(i)}): "
                              f"lowbit {int(ours[i]):#x}, ggml {int(theirs[i]):#x}")

    def failed(self, key, message):
        self.differences += 1
        self.lines.append(f"{key}: {message}")

    def report(self):
        for line in self.lines[:40]:
            print("DIFF", line)
        if len(self.lines) > 40:
            print(f"DIFF ... and {len(self.lines) - 40} more")
        refused = f"; {self.refusals} declared refusals (inputs ggml aborts on) refused" if self.refusals else ""
        print(f"{self.scheme} vs ggml C: {self.elements:,} elements, {self.blocks:,} blocks; {self.bytes:,} bytes "
              f"and {self.values:,} float32 values compared; {self.differences:,} differences{refused}")
        if self.bytes + self.values == 0:
            print(f"FAIL {self.scheme}: nothing was compared")
            return 1
        return 1 if self.differences else 0


def peer_call(tally, key, fn, *args):
    """A C call; an exception from it counts only when DECLARED_REFUSALS names it."""
    try:
        return fn(*args), None
    except Exception as e:
        text = f"{type(e).__name__}: {' '.join(str(e).split())[:160]}"
        if any(type(e).__name__ == t and m in str(e) for t, m in DECLARED_REFUSALS):
            return None, text
        tally.failed(key, f"ggml raised {text} (not a declared refusal)")
        return None, None


def describe_input(x):
    flat = np.asarray(x, dtype=np.float32).reshape(-1)
    return lambda i: f"input {int(flat[min(i, flat.size - 1)].view(np.uint32)):#010x}"


def byte_position(block_bytes):
    return lambda i: f"block {i // block_bytes}, byte {i % block_bytes}"


def lowbit_name(scheme):
    """The lowbit scheme checked against `scheme`'s C functions (with `--contract`'s option where
    the scheme takes it)."""
    return scheme + CONTRACT if CONTRACT and scheme in ("ggml:q4_0", "ggml:mxfp4") else scheme


def check_quantize(tally, scheme, name, x, inject):
    _, block, nbytes, _ = SCHEMES[scheme]
    key = f"{lowbit_name(scheme)} {name}"
    theirs, refused = peer_call(tally, key, c_quantize, scheme, x)
    try:
        q = lowbit.blocks.quantize(x, lowbit_name(scheme))
        ours = np.frombuffer(q.to_bytes(), dtype=np.uint8).copy()
    except Exception as e:
        if refused is None:
            tally.failed(key, f"lowbit refuses ({type(e).__name__}: {e}) where ggml quantizes")
        return
    if theirs is None:
        if refused is not None:
            tally.failed(key, f"ggml refuses ({refused}) where lowbit quantizes")
        return
    tally.elements += x.size
    tally.blocks += x.size // block
    if inject == "bytes":
        ours[len(ours) // 2] ^= 0x10
    tally.same(key, ours, theirs, "bytes", None, byte_position(nbytes))
    # lowbit's dequantize against C's dequantize of lowbit's bytes.
    mine = np.array(q.dequantize(dtype=np.float32), dtype=np.float32).reshape(-1).view(np.uint32).copy()
    if inject == "values":
        mine[len(mine) // 3] ^= 1
    c_of_mine, _ = peer_call(tally, key, c_dequantize, scheme, ours if inject != "bytes" else theirs, x.size)
    if c_of_mine is not None:
        tally.same(key, mine, c_of_mine, "dequantize (lowbit's bytes)", None, describe_input(x))
    # from_bytes of C's bytes against C's dequantize of them.
    c_values, _ = peer_call(tally, key, c_dequantize, scheme, theirs, x.size)
    try:
        back = lowbit.blocks.from_bytes(theirs.tobytes(), lowbit_name(scheme), x.shape)
        decoded = np.array(back.dequantize(dtype=np.float32), dtype=np.float32).reshape(-1).view(np.uint32)
    except Exception as e:
        tally.failed(key, f"lowbit refuses from_bytes of ggml's bytes ({type(e).__name__}: {e})")
        return
    if c_values is not None:
        tally.same(key, decoded, c_values, "dequantize (ggml's bytes)", None, describe_input(x))


def check_random_bytes(tally, scheme, rng, sample, inject):
    _, block, nbytes, _ = SCHEMES[scheme]
    raw, count = random_bytes(scheme, rng, sample)
    key = f"{scheme} random bytes (every scale)"
    theirs, _ = peer_call(tally, key, c_dequantize, scheme, raw.reshape(-1), count)
    try:
        q = lowbit.blocks.from_bytes(raw.tobytes(), scheme, (1, count))
        ours = np.array(q.dequantize(dtype=np.float32), dtype=np.float32).reshape(-1).view(np.uint32).copy()
    except Exception as e:
        tally.failed(key, f"lowbit refuses from_bytes ({type(e).__name__}: {e})")
        return
    if theirs is None:
        return
    if inject == "values":
        ours[0] ^= 0x80000000
    tally.blocks += len(raw)
    tally.same(key, ours, theirs, "dequantize", None,
               lambda i: f"block {i // block} bytes {raw[i // block][:4].tobytes().hex()}")


def selected(only):
    return [s for s in list(SCHEMES) + list(CODECS) if only in s]


def run(args, inject=None):
    """Every selected scheme; returns the exit status."""
    print(f"seed {args.seed}, sample {args.sample} (rerun with --seed {args.seed} --sample {args.sample})",
          flush=True)
    rng = np.random.default_rng(args.seed)
    chosen = selected(args.only)
    status = 0
    total = 0
    tallies = []
    for scheme in chosen:
        tally = Tally(lowbit_name(scheme))
        if scheme in CODECS:
            for name, x in codec_inputs(scheme, rng, args.sample):
                check_codec_quantize(tally, scheme, name, x, None, inject)
                check_codec_quantize(tally, scheme, name, x, importance(rng, x.shape[1]), inject)
            check_codec_random_bytes(tally, scheme, rng, args.sample, inject)
            check_codec_refusals(tally, scheme, rng)
            status |= tally.report()
            total += tally.bytes + tally.values
            tallies.append(tally)
            continue
        for name, x in quantize_inputs(scheme, rng, args.sample):
            check_quantize(tally, scheme, name, x, inject)
        check_random_bytes(tally, scheme, rng, args.sample, inject)
        status |= tally.report()
        total += tally.bytes + tally.values
        tallies.append(tally)
    if total == 0:
        print("FAIL: nothing was compared (a typo in --only?)")
        status = 1
    if getattr(args, "record", False) and total:
        options = " ".join(o for o in (f"--sample {args.sample}", f"--only {args.only}" if args.only else "",
                                       CONTRACT and "--contract fma") if o)
        crosscheck_record.record(
            "crosscheck_ggml.py", {"ggml-py (ggml's C)": GGML_PY}, args.seed, options,
            [{"what": f"`{t.scheme}`: quantize bytes and dequantized float32", "compared": t.bytes + t.values,
              "blocks": t.blocks, "differences": t.differences} for t in tallies])
    return status


def self_test(args):
    """An empty selection must fail; so must each ggml scheme with a flipped byte or value (and
    the same run without the flip must pass)."""
    results = []
    print("self-test: nothing selected")
    results.append(("empty selection", run(argparse.Namespace(only="NO_SUCH_SCHEME", seed=args.seed,
                                                               sample=args.sample)), 1))
    print("self-test: every scheme as it is")
    results.append(("clean run", run(argparse.Namespace(only="", seed=args.seed, sample=args.sample)), 0))
    for scheme in list(SCHEMES) + list(CODECS):
        for inject in ("bytes", "values"):
            print(f"self-test: {scheme} with one {'byte' if inject == 'bytes' else 'value bit'} flipped")
            ns = argparse.Namespace(only=scheme, seed=args.seed, sample=args.sample)
            results.append((f"{scheme} {inject} injected", run(ns, inject=inject), 1))
    ok = all(got == want for _, got, want in results)
    for what, got, want in results:
        print(f"  {what}: exit {got} (must be {want})")
    print(f"self-test {'passed' if ok else 'FAILED'}")
    return 0 if ok else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", default="", help="only schemes whose name contains this")
    ap.add_argument("--sample", type=int, default=64,
                    help="rows of 8 blocks per random input, and blocks per scale value / 64 of the "
                         "random bytes (below 64: the float16 NaN/Inf scales and a random sample of the others)")
    ap.add_argument("--seed", type=int, default=20261128)
    ap.add_argument("--self-test", action="store_true",
                    help="show that an empty selection and an injected difference in each scheme fail")
    ap.add_argument("--record", action="store_true",
                    help="write the figures into docs/crosschecks.json and docs/crosschecks.md")
    ap.add_argument("--library", default=None,
                    help="another build of ggml's reference functions (quantize_row_*_ref, dequantize_row_*)")
    ap.add_argument("--contract", choices=["fma"], default=None,
                    help="check ggml:q4_0 and ggml:mxfp4 with contract=fma (a build that fuses multiply-adds)")
    args = ap.parse_args()
    np.seterr(all="ignore")  # the edge inputs overflow and make NaN on purpose
    global GGML, BASE, OTHER, CONTRACT, lowbit
    GGML, BASE = load_ggml()
    CONTRACT = f",contract={args.contract}" if args.contract else ""
    if args.library:
        # ggml-base first, global: the library's undefined symbols (ggml_abort, ...) resolve to it.
        ctypes.CDLL(BASE._name, mode=ctypes.RTLD_GLOBAL)
        OTHER = ctypes.CDLL(str(pathlib.Path(args.library).resolve()))
        print(f"reference functions from {args.library}", flush=True)
    import lowbit
    import lowbit.blocks  # noqa: F401

    print(f"ggml-py {GGML_PY} ({pathlib.Path(GGML.__file__).parent / 'lib'}), lowbit {lowbit.__version__}",
          flush=True)
    if OTHER is None:
        missing = find_codecs()
        if missing:
            print(f"FAIL: ggml has no type or dequantize_row_* for {', '.join(missing)}")
            sys.exit(1)
        print(f"ggml block types of lowbit's table: {', '.join(CODECS)}", flush=True)
        print(f"checked against ggml's C on recordings, not here: {', '.join('ggml:' + n for n in sorted(RECORDED_ONLY))}",
              flush=True)
    sys.exit(self_test(args) if args.self_test else run(args))


if __name__ == "__main__":
    main()
