"""What the Cast cross-check scripts share: the dtypes, the inputs, how `lowbit cast` is run, which
pairs a profile hands to `spec`, and the tally that fails on any difference.

scripts/crosscheck_cast.py (onnx reference, onnxruntime), scripts/crosscheck_ml_dtypes.py and
scripts/crosscheck_xla.py import it. It needs numpy and ml_dtypes, not onnx.

Inputs (the same for every peer): every bit pattern of every source of 16 bits or fewer; for the
32- and 64-bit sources their specials (zeros, subnormals, infinities, NaN payloads, the largest
values, every float32 pattern whose low 16 bits are 0000, 7FFF, 8000 or 8001, which holds every
rounding decision point of the formats of 16 bits or fewer and a neighbour on each side, double
rounding witnesses next to them in float64, powers of two and their neighbours in the integers)
and random patterns. Every input ends with a tail of 7 specials, so a tensor's length is never a
multiple of 4 or 8 and positional rules (whole vector blocks, then a scalar tail) are exercised on
both sides. STRING sources take three sets of texts: the decimal spellings of every float16 value
and of float32/float64 specials, the integers of the target's range, and odd spellings one text
per tensor (an implementation refuses a whole tensor for one text it cannot read).
"""
import json
import os
import pathlib
import re
import subprocess

import ml_dtypes
import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent


def lowbit_path():
    """$LOWBIT, else the release binary under $CARGO_TARGET_DIR, else under target/."""
    if os.environ.get("LOWBIT"):
        return pathlib.Path(os.environ["LOWBIT"])
    target = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    return target / "release" / "lowbit"


# ONNX names, in the order of onnx.proto's numbers.
NP = {
    "FLOAT": np.float32, "UINT8": np.uint8, "INT8": np.int8, "UINT16": np.uint16, "INT16": np.int16,
    "INT32": np.int32, "INT64": np.int64, "BOOL": np.bool_, "FLOAT16": np.float16, "DOUBLE": np.float64,
    "UINT32": np.uint32, "UINT64": np.uint64, "BFLOAT16": ml_dtypes.bfloat16,
    "FLOAT8E4M3FN": ml_dtypes.float8_e4m3fn, "FLOAT8E4M3FNUZ": ml_dtypes.float8_e4m3fnuz,
    "FLOAT8E5M2": ml_dtypes.float8_e5m2, "FLOAT8E5M2FNUZ": ml_dtypes.float8_e5m2fnuz,
    "UINT4": ml_dtypes.uint4, "INT4": ml_dtypes.int4, "FLOAT4E2M1": ml_dtypes.float4_e2m1fn,
    "FLOAT8E8M0": ml_dtypes.float8_e8m0fnu, "UINT2": ml_dtypes.uint2, "INT2": ml_dtypes.int2,
    "FLOAT6E2M3": ml_dtypes.float6_e2m3fn, "FLOAT6E3M2": ml_dtypes.float6_e3m2fn,
}
BITS = {"FLOAT": 32, "UINT8": 8, "INT8": 8, "UINT16": 16, "INT16": 16, "INT32": 32, "INT64": 64, "BOOL": 8,
        "FLOAT16": 16, "DOUBLE": 64, "UINT32": 32, "UINT64": 64, "BFLOAT16": 16, "FLOAT8E4M3FN": 8,
        "FLOAT8E4M3FNUZ": 8, "FLOAT8E5M2": 8, "FLOAT8E5M2FNUZ": 8, "UINT4": 4, "INT4": 4, "FLOAT4E2M1": 4,
        "FLOAT8E8M0": 8, "UINT2": 2, "INT2": 2, "FLOAT6E2M3": 6, "FLOAT6E3M2": 6}
NUMERIC = list(BITS)
ALL = NUMERIC + ["STRING"]
FLOAT8 = ["FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ", "FLOAT8E8M0"]
INTEGER_RANGE = {
    "INT8": (-128, 127), "UINT8": (0, 255), "INT16": (-32768, 32767), "UINT16": (0, 65535),
    "INT32": (-(1 << 31), (1 << 31) - 1), "UINT32": (0, (1 << 32) - 1), "INT64": (-(1 << 63), (1 << 63) - 1),
    "UINT64": (0, (1 << 64) - 1), "INT4": (-8, 7), "UINT4": (0, 15), "INT2": (-2, 1), "UINT2": (0, 3),
    "BOOL": (0, 1),
}
FLOATS = [t for t in NUMERIC if t not in INTEGER_RANGE]
# ml_dtypes' float types that ONNX does not have: lowbit's named formats, one byte per code. Only
# the ml_dtypes and XLA cross-checks take them (ALL + NAMED); `lowbit profiles --json` says which
# ONNX dtype's rows each follows under a profile.
NAMED = ["float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz"]
for _name in NAMED:
    NP[_name] = getattr(ml_dtypes, _name)
    BITS[_name] = 8
# ml_dtypes' one-bit integers: lowbit's named integer types, eight codes per byte in raw data
# (packed as INT2/INT4 are). Only the ml_dtypes cross-check takes them (XLA cannot cast them).
NAMED_INTEGERS = ["int1", "uint1"]
for _name in NAMED_INTEGERS:
    NP[_name] = getattr(ml_dtypes, _name)
    BITS[_name] = 1
INTEGER_RANGE.update({"int1": (-1, 0), "uint1": (0, 1)})
TAIL = 7


def variants(to):
    """The attribute sets a target is cast with: (saturate, round_mode), None where not given."""
    if to == "FLOAT8E8M0":
        return [(s, m) for s in (1, 0) for m in ("up", "down", "nearest")]
    if to in FLOAT8 or to in NAMED:
        return [(1, None), (0, None)]
    return [(None, None)]


def _unsigned(values, bits):
    return np.array([int(v) & ((1 << bits) - 1) for v in values], dtype=np.uint64)


def _float32_specials():
    s = [0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x007FFFFF, 0x807FFFFF, 0x00800000, 0x80800000,
         0x7F7FFFFF, 0xFF7FFFFF, 0x7F800000, 0xFF800000, 0x3F800000, 0xBF800000, 0x00400000]
    for payload in (0x400000, 0x000001, 0x7FFFFF, 0x3FFFFF, 0x001FFF, 0x002000, 0x400001, 0x000100, 0x012345):
        s += [0x7F800000 | payload, 0xFF800000 | payload]
    # Integer boundaries: +-2^k, one ulp either side, for k up to 65.
    for k in range(66):
        x = np.float32(2.0 ** k)
        b = int(x.view(np.uint32))
        s += [b, b - 1, b + 1, b | 0x80000000, (b - 1) | 0x80000000, (b + 1) | 0x80000000]
    # Values near int boundaries that matter to the x86 conversions.
    for v in (-2147483904.0, 2147483520.0, 4294967040.0, 5e9, -5e9, 9.3e18, 1.9e19, 1e20, -1e20, 300.0, -129.0,
              65536.0, -0.5, 0.5, 1.5, 2.5, -2.5, 7.5, 464.0, 480.0, 61440.0, 65520.0, 1.5 * 2.0 ** 127):
        s.append(int(np.float32(v).view(np.uint32)))
    return s


def _float32_grid():
    """Every float32 pattern whose low 16 bits are 0000, 7FFF, 8000 or 8001."""
    top = np.arange(1 << 16, dtype=np.uint64) << np.uint64(16)
    return np.concatenate([top | np.uint64(low) for low in (0x0000, 0x7FFF, 0x8000, 0x8001)])


def _float64_from_float32(bits32):
    with np.errstate(invalid="ignore"):
        return np.asarray(bits32, dtype=np.uint32).view(np.float32).astype(np.float64).view(np.uint64)


def _float64_specials():
    s = [0, 1 << 63, 1, (1 << 63) | 1, 0x000FFFFFFFFFFFFF, 0x0010000000000000, 0x7FEFFFFFFFFFFFFF, 0xFFEFFFFFFFFFFFFF,
         0x7FF0000000000000, 0xFFF0000000000000]
    for payload in (1 << 51, 1, (1 << 52) - 1, 1 << 29, (1 << 29) - 1, 1 << 28, (1 << 51) | 1, 0x123456789):
        s += [0x7FF0000000000000 | payload, 0xFFF0000000000000 | payload]
    for v in (1e300, -1e300, 1e-300, 1e-50, -1e-50, 3.5e38, -3.5e38, 1e-46, 2.0 ** -127, 2.0 ** -150, 2.0 ** -149,
              1.5 * 2.0 ** 127, 1.4 * 2.0 ** 127, 1.5 - 2.0 ** -30, 2147483647.0, 2147483648.0, 4294967295.0,
              4294967296.0, 2.0 ** 63, 2.0 ** 64, 2.0 ** 63 - 1024, -(2.0 ** 63) - 2048, 1.0 + 2.0 ** -52,
              464.00000001, 1.0625 + 2.0 ** -30, 0.25 + 2.0 ** -40, 1.0 + 2.0 ** -11 + 2.0 ** -30):
        s.append(int(np.float64(v).view(np.uint64)))
    # Around float32's smallest normal: the midpoint with its largest subnormal and its neighbours
    # (a result that rounds up to the normal is not tiny after rounding).
    for v in (2.0 ** -126 - 2.0 ** -150, 2.0 ** -126 - 2.0 ** -149, 2.0 ** -126 - 2.0 ** -151):
        b = int(np.float64(v).view(np.uint64))
        s += [b - 1, b, b + 1, b | (1 << 63)]
    for k in range(-1080, 1030, 7):
        b = int(np.float64(2.0 ** k).view(np.uint64)) if -1075 < k < 1024 else None
        if b:
            s += [b, b - 1, b + 1, b | (1 << 63)]
    return s


def _double_rounding_witnesses():
    """float64 values one float64 ulp either side of the float32 grid's midpoints (low 16 bits 8000)."""
    mid = _float64_from_float32(np.arange(1 << 16, dtype=np.uint64) << np.uint64(16) | np.uint64(0x8000))
    finite = mid[(mid & np.uint64(0x7FF0000000000000)) != np.uint64(0x7FF0000000000000)]
    finite = finite[finite & np.uint64(0x7FFFFFFFFFFFFFFF) != 0]
    return np.concatenate([finite + np.uint64(1), finite - np.uint64(1)])


def _integer_specials(bits, signed):
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    v = set(range(-300, 301)) | {lo, hi, lo + 1, hi - 1}
    for k in range(bits + 1):
        for d in (-2, -1, 0, 1, 2):
            v |= {(1 << k) + d, -(1 << k) + d}
        # Midpoints of float16/bfloat16/float32 spacing and their neighbours (double rounding).
        for m in (9, 12, 25):
            if k > m:
                for d in (-1, 0, 1):
                    v |= {(1 << k) + (1 << (k - m)) + d, -((1 << k) + (1 << (k - m)) + d)}
    v |= {16842753, 2049, 2051, 65519, 65520}
    return _unsigned(sorted(x for x in v if lo <= x <= hi), bits)


def _random(bits, n, rng):
    if bits < 64:
        return rng.integers(0, 1 << bits, size=n, dtype=np.uint64)
    hi = rng.integers(0, 1 << 32, size=n, dtype=np.uint64)
    lo = rng.integers(0, 1 << 32, size=n, dtype=np.uint64)
    return (hi << np.uint64(32)) | lo


def _tail(src):
    """7 specials for the end of the tensor (the scalar tail of a vectorised loop)."""
    if src in ("FLOAT", "DOUBLE", "FLOAT16", "BFLOAT16"):
        x = np.array([np.nan, -np.inf, -np.nan, np.inf, -1e20, -2147483904.0, 5e9], dtype=np.float64)
        with np.errstate(invalid="ignore", over="ignore"):
            arr = x.astype(NP[src])
        width = {16: np.uint16, 32: np.uint32, 64: np.uint64}[BITS[src]]
        return arr.view(width).astype(np.uint64)
    if src in INTEGER_RANGE:
        lo, hi = INTEGER_RANGE[src]
        return _unsigned([lo, hi, -1 if lo < 0 else hi - 1, 0, 1, lo + 1, hi - 1][:TAIL], BITS[src])
    # Small float formats: the codes from the top down (NaN, infinity, the largest values).
    top = (1 << BITS[src]) - 1
    half = 1 << (BITS[src] - 1)
    return np.array([top, half - 1, half, top - 1, half - 2, 0, 1], dtype=np.uint64)


def patterns(src, random_n, rng, sample=None):
    """The source's input codes, as unsigned integers: exhaustive up to 16 bits, specials and random
    above, then the tail. With `sample`, the bulk (every pattern of a 16-bit source, the float32
    grid and the double rounding witnesses, the random patterns) is cut to `sample` codes drawn
    by `rng`; the listed specials and the tail are kept whole."""
    bits = BITS[src]
    if src == "BOOL":
        specials, bulk = np.array([0, 1] * 8, dtype=np.uint64), np.array([], dtype=np.uint64)
    elif bits <= 16:
        specials, bulk = np.array([], dtype=np.uint64), np.arange(1 << bits, dtype=np.uint64)
    elif src == "FLOAT":
        specials = np.array(_float32_specials(), dtype=np.uint64)
        bulk = np.concatenate([_float32_grid(), _random(32, random_n, rng)])
    elif src == "DOUBLE":
        specials = np.concatenate([np.array(_float64_specials(), dtype=np.uint64),
                                   _float64_from_float32(_float32_specials())])
        bulk = np.concatenate([_float64_from_float32(_float32_grid()), _double_rounding_witnesses(),
                               _random(64, random_n, rng)])
    else:
        specials = _integer_specials(bits, src.startswith("INT"))
        bulk = _random(bits, random_n, rng)
    if sample is not None and len(bulk) > sample:
        bulk = np.sort(rng.choice(bulk, size=sample, replace=False))
    body = np.concatenate([specials, bulk])
    # Whole blocks of 8, then the tail: n % 8 == 7.
    body = np.concatenate([body, body[:(-len(body)) % 8]])
    tail = np.array([0, 1, 0, 1, 0, 1, 1], dtype=np.uint64) if src == "BOOL" else _tail(src)
    return np.concatenate([body, tail])


def add_arguments(ap):
    """The options every Cast cross-check takes: which pairs, how many inputs, the seed."""
    ap.add_argument("--random", type=int, default=100000, help="random patterns per 32- or 64-bit source")
    ap.add_argument("--only", default="", help="only pairs whose 'SRC->TO' contains this")
    ap.add_argument("--sample", type=int, default=None,
                    help="at most this many bulk patterns per source (a random sample of the 16-bit "
                         "patterns, the float32 grid and the random patterns; specials kept)")
    ap.add_argument("--seed", type=int, default=20261122, help="seed of the random patterns and the sample")
    ap.add_argument("--record", action="store_true",
                    help="write the figures into docs/crosschecks.json and docs/crosschecks.md")


def record(script, args, tallies):
    """With --record, the run's figures per profile ({profile: Tally}) into the cross-check table."""
    if not args.record:
        return
    import crosscheck_record

    options = " ".join(o for o in (f"--sample {args.sample}" if args.sample else "", f"--random {args.random}",
                                   f"--only {args.only}" if args.only else "") if o)
    crosscheck_record.record(
        script, {t.peer: "" for t in tallies.values()}, args.seed, options,
        [{"what": f"`{p}` profile, every Cast pair and attribute set", "compared": t.compared,
          "differences": t.differences} for p, t in tallies.items()])


def start(args):
    """The random generator of a run, its seed printed so that a sampled run can be repeated."""
    sample = f", a sample of {args.sample:,} bulk patterns per source" if args.sample else ""
    print(f"seed {args.seed}{sample} (rerun with --seed {args.seed})", flush=True)
    return np.random.default_rng(args.seed)


def to_array(src, codes):
    """Bit patterns as a numpy/ml_dtypes array of the source type."""
    bits = BITS[src]
    if src == "BOOL":
        return codes.astype(np.bool_)
    if src in ("INT4", "INT2", "int1"):
        # ml_dtypes keeps a sub-byte integer as its value in one byte: sign-extend the code.
        c = codes.astype(np.int64)
        return np.array(np.where(c >= (1 << (bits - 1)), c - (1 << bits), c), dtype=NP[src])
    if bits < 8:
        return codes.astype(np.uint8).view(NP[src])
    width = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}[bits]
    return codes.astype(width).view(NP[src])


def raw_bytes(dtype, codes):
    """ONNX raw_data of the codes (little-endian; 4- and 2-bit types packed low element first,
    float6 four elements in three bytes, least significant bits first)."""
    bits = BITS[dtype]
    codes = np.asarray(codes, dtype=np.uint64)
    if bits >= 8:
        width = {8: "<u1", 16: "<u2", 32: "<u4", 64: "<u8"}[bits]
        return codes.astype(width).tobytes()
    per_group, group_bytes = (4, 3) if bits == 6 else (8 // bits, 1)
    n = len(codes)
    padded = np.zeros(-(-n // per_group) * per_group, dtype=np.uint64)
    padded[:n] = codes & np.uint64((1 << bits) - 1)
    groups = padded.reshape(-1, per_group)
    word = np.zeros(len(groups), dtype=np.uint64)
    for k in range(per_group):
        word |= groups[:, k] << np.uint64(bits * k)
    out = word.astype("<u4").view(np.uint8).reshape(-1, 4)[:, :group_bytes].tobytes()
    return out[:raw_len(dtype, n)]


def raw_len(t, n):
    return (n * BITS[t] + 7) // 8


def elements(t, raw, n):
    """Element codes from raw bytes."""
    bits = BITS[t]
    if bits >= 8:
        width = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}[bits]
        return np.frombuffer(raw, dtype=width)[:n].astype(np.uint64)
    per_group, group_bytes = (4, 3) if bits == 6 else (8 // bits, 1)
    groups = -(-n // per_group)
    data = np.zeros(groups * group_bytes, dtype=np.uint8)
    got = np.frombuffer(raw, dtype=np.uint8)[:groups * group_bytes]
    data[:len(got)] = got
    b = data.reshape(groups, group_bytes).astype(np.uint64)
    word = np.zeros(groups, dtype=np.uint64)
    for k in range(group_bytes):
        word |= b[:, k] << np.uint64(8 * k)
    mask = np.uint64((1 << bits) - 1)
    out = np.stack([(word >> np.uint64(bits * k)) & mask for k in range(per_group)], axis=1).reshape(-1)
    return out[:n]


def array_codes(t, arr):
    """Element codes of a numpy/ml_dtypes array of dtype t (one element per byte for sub-byte types)."""
    arr = np.asarray(arr)
    bits = BITS[t]
    if t == "BOOL":
        return arr.astype(np.uint64)
    if bits < 8:
        return (arr.view(np.uint8).astype(np.uint64)) & np.uint64((1 << bits) - 1)
    width = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}[bits]
    return arr.view(width).astype(np.uint64)


# ------------------------------------------------------------------------------------------------
# Texts


def decimal_texts():
    """Decimal spellings every reader accepts: every float16 value's repr, float32/float64 specials."""
    h = np.arange(1 << 16, dtype=np.uint16).view(np.float16).astype(np.float64)
    texts = [repr(float(x)) for x in h]
    f = np.array(_float32_specials(), dtype=np.uint32).view(np.float32)
    texts += [repr(float(x)) for x in f] + [str(x) for x in f]
    texts += ["1e+300", "-1e+300", "5e-324", "0.1", "1.0000000000000002", "3.4028235e+38", "3.5e+38", "1e-46",
              "1.401298464324817e-45", "464.00000001", "1.0625000000931323", "0.25000000000090949",
              "5.877471754111438e-39", "1.7014118346046923e+38", "2.552117751907038e+38", "2.38e+38"]
    return texts


def integer_texts(to):
    """Integers in the target's range (all of them for 16 bits or fewer), as decimal texts."""
    lo, hi = INTEGER_RANGE.get(to, (-32768, 65535))
    if to in FLOATS or to == "BOOL":
        lo, hi = -32768, 65535
    if hi - lo <= 1 << 17:
        values = range(lo, hi + 1)
    else:
        values = sorted({int(x) for x in _integer_specials(64, True).astype(np.int64)} | {lo, hi, lo + 1, hi - 1})
        values = [v for v in values if lo <= v <= hi]
    return [str(v) for v in values]


ODD_TEXTS = ["1_000", " 1.5 ", "\t2\n", "+3", "-0", "0", ".5", "5.", "1e5", "1E-5", "0x10", "0x1p3", "1e400", "-1e400",
             "1e-400", "inf", "-inf", "+inf", "Infinity", "-Infinity", "INF", "nan", "-nan", "NaN", "nan(123)", "",
             " ", "abc", "1.5abc", "12abc", "300", "-129", "256", "-1", "65536", "4294967296", "18446744073709551616",
             "-9223372036854775809", "9223372036854775808", "1.9999999999", "3.4028235e38", "3.5e38", "65520", "448",
             "464", "57344", "61440", "1e-8", "1e-46", "2.5", "-2.5", "0.5", "true", "false", "True", "1",
             "\u0661\u0662\u0663", "\u0663.\u0665", "0b101", "00012", "1 000", "1e300", "0.0", "-0.0", "7.5",
             "1.5e-39", "5.9e-39", "1.7e38", "3e38"]


# ------------------------------------------------------------------------------------------------
# lowbit


class LowbitRefused(Exception):
    pass


def lowbit_cast(src, to, payload, n, profile, saturate, round_mode):
    """`lowbit cast` on raw bytes (or a list of texts for STRING); returns bytes or a list of texts."""
    cmd = [str(lowbit_path()), "cast", "--from", src, "--to", to, "--profile", profile, "--threads", "1"]
    # Only the attributes the target has: lowbit refuses a flag that does not apply.
    if saturate is not None:
        cmd += ["--saturate", str(saturate)]
    if round_mode is not None:
        cmd += ["--round", round_mode]
    if src == "STRING":
        data = json.dumps(payload).encode()
    elif src in NAMED + NAMED_INTEGERS or to in NAMED + NAMED_INTEGERS:
        # A named type's raw codes are whole bytes: no count (a packed source's padding
        # elements come out last and are not compared).
        data = payload
    else:
        data = payload
        cmd += ["--count", str(n)]
    p = subprocess.run(cmd, input=data, capture_output=True)
    if p.returncode != 0:
        raise LowbitRefused(p.stderr.decode(errors="replace").strip())
    if to == "STRING":
        return json.loads(p.stdout)
    return p.stdout


def profile_table():
    """`lowbit profiles --json`: every profile with the pairs it hands to `spec`."""
    p = subprocess.run([str(lowbit_path()), "profiles", "--json"], capture_output=True, check=True)
    return {entry["name"]: entry for entry in json.loads(p.stdout)["profiles"]}


def falls_back(profiles, profile, src, to):
    """Whether the profile hands the pair to `spec`; a named format counts as the ONNX dtype whose
    rows it follows under the profile."""
    named = profiles[profile].get("named_formats", {})
    return [named.get(src, src), named.get(to, to)] in profiles[profile]["falls_back"]


# ------------------------------------------------------------------------------------------------
# The tally


class Refusal:
    """An exception a peer raises where it has no behaviour, as its profile declares it: `kind`
    is "no cast" (the profile hands the pair to `spec`) or "text" (the peer cannot read a text:
    lowbit must refuse it too); the exception's type name and a pattern its message matches.
    `echoed`: lowbit's refusal must quote the peer's exception (its type and message), as lowbit
    words a refusal it reproduces exactly."""

    def __init__(self, kind, type_name, pattern, echoed=False):
        self.kind = kind
        self.type_name = type_name
        self.pattern = re.compile(pattern)
        self.echoed = echoed

    def matches(self, error):
        return type(error).__name__ == self.type_name and bool(self.pattern.search(" ".join(str(error).split())))


def declared_refusal(refusals, error):
    """The first declared refusal `error` is, or None for any other exception."""
    return next((r for r in refusals if r.matches(error)), None)


def refusal_kind(refusals, error):
    """The kind of the first declared refusal `error` is, or None for any other exception."""
    declared = declared_refusal(refusals, error)
    return declared.kind if declared else None


def run_model(runner, model, refusals, label, key, counts, diffs):
    """`runner(model)` for the model cross-checks (quant, ops): its outputs, or None when the peer
    raised. A declared refusal is counted as "<label> refused (declared)"; any other exception is
    counted as "<label> raised undeclared" and added to `diffs` (keyed by `key`)."""
    try:
        return runner(model)
    except Exception as e:
        if refusal_kind(refusals, e) is None:
            counts[f"{label} raised undeclared"] += 1
            diffs.append(f"{key}: raises {peer_error_text(e)}, not a declared refusal")
        else:
            counts[f"{label} refused (declared)"] += 1
        return None


class Tally:
    """Counts conversions compared, refusals and every difference. `report` fails (1) on any
    difference and when nothing at all was compared with the peer."""

    def __init__(self, peer):
        self.peer = peer
        self.compared = 0
        self.refused_both = 0
        self.fallback = 0
        self.fallback_pairs = set()
        self.differences = 0
        self.lines = []

    def compare_codes(self, key, to, ours, theirs, n, inputs):
        a, b = elements(to, ours, n), elements(to, theirs, n)
        self._count(key, n, np.nonzero(a != b)[0], inputs, a, b)

    def compare_texts(self, key, ours, theirs, inputs):
        n = len(theirs)
        if len(ours) != n:
            self.differences += n
            self.lines.append(f"{key}: lowbit gave {len(ours)} texts for {n}")
            return
        bad = [i for i in range(n) if ours[i] != theirs[i]]
        self._count(key, n, bad, inputs, ours, theirs)

    def _count(self, key, n, bad, inputs, a, b):
        self.compared += n
        if len(bad):
            i = int(bad[0])
            self.differences += len(bad)
            x = inputs[i]
            shown = f"{int(x):#x}" if isinstance(x, (int, np.integer)) else repr(x)
            self.lines.append(f"{key}: {len(bad)} of {n} differ; first at element {i}, input {shown}: "
                              f"lowbit {_show(a[i])}, {self.peer} {_show(b[i])}")

    def refused(self, key, n, lowbit_refused, peer_error, echoed=False):
        """The peer refused a text it cannot read (its declared refusal): lowbit must refuse too
        (`lowbit_refused`: its refusal's message, or True; None or False if it converted), and its
        message must quote `peer_error` if `echoed`."""
        if not lowbit_refused:
            self.differences += n
            self.lines.append(f"{key}: {self.peer} refuses ({peer_error}) but lowbit converts")
        elif echoed and peer_error not in " ".join(str(lowbit_refused).split()):
            self.differences += n
            self.lines.append(f"{key}: {self.peer} refuses ({peer_error}) but lowbit's refusal does not say so: "
                              f"{str(lowbit_refused).splitlines()[-1][:200]}")
        else:
            self.refused_both += n

    def undeclared(self, key, n, peer_error, why):
        """The peer raised something its profile does not declare: a difference, never a pass."""
        self.differences += n
        self.lines.append(f"{key}: {self.peer} raises {peer_error}, {why}")

    def fell_back(self, key, n, same_as_spec, pair):
        self.fallback += n
        self.fallback_pairs.add(pair)
        if not same_as_spec:
            self.differences += n
            self.lines.append(f"{key}: the profile falls back to spec here but its answer is not spec's")

    def lowbit_refused(self, key, n, message):
        self.differences += n
        self.lines.append(f"{key}: lowbit refuses ({message.splitlines()[-1][:160]}) where {self.peer} converts")

    def report(self, profile):
        for line in self.lines:
            print("DIFF", line)
        print(f"{profile} vs {self.peer}: {self.compared:,} conversions compared, {self.differences:,} differences; "
              f"{self.refused_both:,} refused by both")
        print(f"{profile} vs {self.peer}: not compared (the peer has no cast; the profile gives spec's answer, "
              f"checked against spec): {self.fallback:,} conversions in {len(self.fallback_pairs)} dtype pairs")
        if self.compared == 0:
            print(f"FAIL {profile} vs {self.peer}: nothing was compared (a typo in --only, or a peer that "
                  f"refused everything)")
            return 1
        return 1 if self.differences else 0


def _show(x):
    return f"{int(x):#x}" if isinstance(x, (int, np.integer)) else repr(x)


def peer_error_text(e):
    """A peer's exception as one short line."""
    return f"{type(e).__name__}: {' '.join(str(e).split())[:160]}"


def compare_variant(tally, profiles, profile, refusals, key, src, to, payload, n, theirs, peer_exception, inputs,
                    saturate, round_mode):
    """lowbit's answer under `profile` against the peer's (`theirs`, or `peer_exception` when the
    peer raised). A peer exception counts only when it is a refusal `refusals` declares: "no cast"
    where the profile hands the pair to `spec` (lowbit must then give exactly spec's answer),
    "text" for a STRING source (lowbit must refuse the text too). Any other exception, or a
    declared refusal where the profile does not expect it, is a difference."""
    try:
        ours, refused = lowbit_cast(src, to, payload, n, profile, saturate, round_mode), None
    except LowbitRefused as e:
        ours, refused = None, str(e)
    if peer_exception is not None:
        error = peer_error_text(peer_exception)
        declared = declared_refusal(refusals, peer_exception)
        kind = declared.kind if declared else None
        if falls_back(profiles, profile, src, to):
            if kind != "no cast":
                tally.undeclared(key, n, error, "not the refusal of a dtype pair the profile hands to spec")
                return
            try:
                spec = lowbit_cast(src, to, payload, n, "spec", saturate, round_mode)
            except LowbitRefused:
                spec = None
            tally.fell_back(key, n, ours == spec, (src, to))
        elif kind == "text" and src == "STRING":
            tally.refused(key, n, refused, error, declared.echoed)
        else:
            tally.undeclared(key, n, error, "where the profile says it converts")
    elif refused is not None:
        tally.lowbit_refused(key, n, refused)
    elif to == "STRING":
        tally.compare_texts(key, ours, theirs, inputs)
    else:
        tally.compare_codes(key, to, ours, theirs, n, inputs)
