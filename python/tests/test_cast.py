"""lowbit.cast, pack and unpack: saturation against plain ml_dtypes astype, names, packing,
strings, layouts, threads and errors. Expected values are computed by hand (the arithmetic is in
the comments), come from ml_dtypes and onnx as peers, or are the input itself (round trips)."""

import ml_dtypes
import numpy as np
import pytest
from onnx import numpy_helper

import lowbit

ALL_F16 = np.arange(1 << 16, dtype=np.uint16).view(np.float16)


# ------------------------------------------------------------------------------------------------
# saturate=True (ONNX's default) against ml_dtypes' astype, which never saturates
# ------------------------------------------------------------------------------------------------

# (ml_dtypes type, the smallest float16 pattern that overflows, the code of +MAX).
# E4M3FN: MAX 448 = 1.75 * 2^8, one ulp there is 2^(8-3) = 32, the midpoint to the next step 464
# ties to even (448 is mantissa 110, even), so |x| > 464 overflows: the first float16 above 464
# is 464.25 = 0x5F41 (464 = 1.8125 * 2^8 -> exponent field 23, fraction 0x340: 0x5F40).
# E5M2: MAX 57344 = 1.75 * 2^15, ulp 2^13, midpoint 61440 ties to even, away from 57344 (mantissa
# 11, odd) to infinity: |x| >= 61440 = 0x7B80 overflows. E4M3FNUZ: MAX 240 = 1.875 * 2^7, ulp 16,
# midpoint 248 ties away from 240 (mantissa 111, odd): |x| >= 248 = 0x5BC0 overflows. E5M2FNUZ:
# MAX 57344 as E5M2 (bias 16, no infinity code), the same threshold 0x7B80.
OVERFLOW = [
    (ml_dtypes.float8_e4m3fn, 0x5F41, 0x7E),
    (ml_dtypes.float8_e5m2, 0x7B80, 0x7B),
    (ml_dtypes.float8_e4m3fnuz, 0x5BC0, 0x7F),
    (ml_dtypes.float8_e5m2fnuz, 0x7B80, 0x7F),
]


@pytest.mark.parametrize("t,first_overflow,max_code", OVERFLOW, ids=[np.dtype(t).name for t, _, _ in OVERFLOW])
def test_saturate_differs_from_astype_exactly_on_overflow(t, first_overflow, max_code):
    with np.errstate(invalid="ignore", over="ignore"):
        plain = ALL_F16.astype(t).view(np.uint8)
    non_saturating = lowbit.cast(ALL_F16, t, saturate=False).view(np.uint8)
    saturating = lowbit.cast(ALL_F16, t).view(np.uint8)
    # saturate=False is ml_dtypes' astype on every float16 pattern.
    assert np.array_equal(non_saturating, plain)
    # saturate=True differs exactly where |x| overflows (infinities included, NaN excluded):
    # float16 patterns first_overflow..0x7C00 of either sign.
    magnitude = np.arange(1 << 16, dtype=np.uint32) & 0x7FFF
    overflow = (magnitude >= first_overflow) & (magnitude <= 0x7C00)
    differs = saturating != plain
    assert np.array_equal(differs, overflow)
    assert differs.sum() == 2 * (0x7C00 - first_overflow + 1)
    # There saturate gives +/-MAX where astype gives NaN or infinity.
    sign = (np.arange(1 << 16) >> 15).astype(np.uint8) << 7
    assert np.array_equal(saturating[overflow], (max_code | sign[overflow]).astype(np.uint8))
    assert not np.isfinite(plain[overflow].view(t).astype(np.float32)).any()


def test_saturation_shown_on_float32_values():
    x = np.array([448, 464, 480, 1e6, np.inf, -480, np.nan], dtype=np.float32)
    # 448 is MAX (0x7E); 464 ties to even, down to 448; 480 and above overflow: MAX with
    # saturation, NaN (0x7F, E4M3FN has no infinity) without, as ml_dtypes' astype.
    assert lowbit.cast(x, "e4m3fn").view(np.uint8).tolist() == [0x7E, 0x7E, 0x7E, 0x7E, 0x7E, 0xFE, 0x7F]
    off = lowbit.cast(x, "e4m3fn", saturate=False)
    assert off.view(np.uint8).tolist()[:4] == [0x7E, 0x7E, 0x7F, 0x7F]
    with np.errstate(invalid="ignore", over="ignore"):
        assert np.array_equal(off.view(np.uint8), x.astype(ml_dtypes.float8_e4m3fn).view(np.uint8))
    # onnxruntime's quirk (480 <= |x| < 496 -> 0x7E without saturation) is its profile's.
    assert lowbit.cast(x[:3], "e4m3fn", saturate=False, profile="onnxruntime").view(np.uint8).tolist() == [0x7E, 0x7E, 0x7E]


# ------------------------------------------------------------------------------------------------
# names
# ------------------------------------------------------------------------------------------------

SPELLINGS = [
    ("FLOAT8E4M3FN", "FLOAT8E4M3FN"),
    ("float8e4m3fn", "FLOAT8E4M3FN"),
    ("e4m3fn", "FLOAT8E4M3FN"),
    ("float8_e4m3fn", "FLOAT8E4M3FN"),
    (ml_dtypes.float8_e4m3fn, "FLOAT8E4M3FN"),
    (np.dtype(ml_dtypes.float8_e4m3fn), "FLOAT8E4M3FN"),
    (17, "FLOAT8E4M3FN"),
    ("float4_e2m1fn", "FLOAT4E2M1"),
    ("float8_e8m0fnu", "FLOAT8E8M0"),
    ("float6_e3m2fn", "FLOAT6E3M2"),
    (ml_dtypes.int4, "INT4"),
    ("uint2", "UINT2"),
    ("bf16", "BFLOAT16"),
    (ml_dtypes.bfloat16, "BFLOAT16"),
    ("float", "FLOAT"),
    ("f4", "FLOAT"),
    (np.float64, "DOUBLE"),
    ("half", "FLOAT16"),
    (bool, "BOOL"),
    (str, "STRING"),
]


@pytest.mark.parametrize("spelling,onnx", SPELLINGS, ids=[str(s) for s, _ in SPELLINGS])
def test_names(spelling, onnx):
    assert lowbit.onnx_name(spelling) == onnx
    if onnx != "STRING":
        got = lowbit.cast(np.array([1.0, 0.5], np.float32), spelling)
        assert got.dtype == lowbit.numpy_dtype(onnx)


def test_result_dtypes_are_ml_dtypes():
    x = np.array([0.5, -1.5], dtype=np.float32)
    for name, want in [
        ("FLOAT8E5M2FNUZ", ml_dtypes.float8_e5m2fnuz),
        ("FLOAT8E8M0", ml_dtypes.float8_e8m0fnu),
        ("FLOAT6E2M3", ml_dtypes.float6_e2m3fn),
        ("INT2", ml_dtypes.int2),
        ("UINT8", np.uint8),
    ]:
        assert lowbit.cast(x, name).dtype == np.dtype(want), name


def test_bad_names_raise_with_lowbit_message():
    x = np.ones(3, np.float32)
    with pytest.raises(lowbit.DTypeError) as e:
        lowbit.cast(x, "float7")
    assert isinstance(e.value, ValueError) and isinstance(e.value, TypeError)
    assert '"float7"' in str(e.value) and "FLOAT8E4M3FN" in str(e.value) and "e4m3fn" in str(e.value)
    # ml_dtypes' int1 is a named integer type (test_named_integers.py), not a bad name.
    assert lowbit.cast(x, ml_dtypes.int1).dtype == np.dtype(ml_dtypes.int1)
    with pytest.raises(lowbit.DTypeError, match="datetime64"):
        lowbit.cast(np.zeros(2, "datetime64[s]"), "f32")
    with pytest.raises(lowbit.DTypeError):
        lowbit.cast(x, None)
    with pytest.raises(lowbit.DTypeError, match="29"):
        lowbit.cast(x, 29)
    with pytest.raises(lowbit.DTypeError, match="COMPLEX64"):
        lowbit.cast(x, "COMPLEX64")
    with pytest.raises(lowbit.DTypeError, match="COMPLEX64"):
        lowbit.cast(x.astype(np.complex64), "f32")
    with pytest.raises(lowbit.Error, match="onnx-reference"):
        lowbit.cast(x, "e4m3fn", profile="nope")
    with pytest.raises(lowbit.Error, match="round_mode"):
        lowbit.cast(x, "e8m0", round_mode="sideways")
    with pytest.raises(lowbit.Error, match="threads"):
        lowbit.cast(x, "e4m3fn", threads=0)
    with pytest.raises(lowbit.Error, match="saturate"):
        lowbit.cast(x, "e4m3fn", saturate="yes")


def test_profiles_come_from_the_crate():
    assert lowbit.PROFILES[0] == "spec"
    assert {"spec", "onnx-reference", "onnxruntime"} <= set(lowbit.PROFILES)
    x = np.array([480.0], np.float32)
    # 480 is past E4M3FN's largest value (448): saturate=1 clamps it to 0x7E. ml_dtypes' astype and
    # XLA have no saturate attribute and give NaN (0x7F) (observed: ml_dtypes 0.6.0, jax 0.12.0.1).
    never_saturate = {"ml-dtypes", "xla"}
    for p in lowbit.PROFILES:
        want = 0x7F if p in never_saturate else 0x7E
        assert lowbit.cast(x, "e4m3fn", profile=p).view(np.uint8)[0] == want, p
    assert never_saturate <= set(lowbit.PROFILES)


# ------------------------------------------------------------------------------------------------
# packing
# ------------------------------------------------------------------------------------------------

SUB_BYTE = [
    (ml_dtypes.int4, 4),
    (ml_dtypes.uint4, 4),
    (ml_dtypes.float4_e2m1fn, 4),
    (ml_dtypes.int2, 2),
    (ml_dtypes.uint2, 2),
    (ml_dtypes.float6_e2m3fn, 6),
    (ml_dtypes.float6_e3m2fn, 6),
]


def test_packed_layout_by_hand():
    # int4 [1, -2, 3]: codes 1, 0xE, 3; element 2k in the low nibble: e1 03.
    x = np.array([1, -2, 3], dtype=ml_dtypes.int4)
    assert lowbit.pack(x).tobytes() == b"\xe1\x03"
    assert lowbit.cast(np.array([1, -2, 3], np.float32), "int4", packed=True).tobytes() == b"\xe1\x03"
    # float6e2m3 1, 2, 3, -1, 0.5 are codes 08, 10, 14, 28, 04 (bias 1: 1 = 01 000, 2 = 10 000,
    # 3 = 10 100, -1 = 1 01 000, 0.5 = subnormal 00 100); four per three bytes LSB first:
    # 08 | 10<<6 | 14<<12 | 28<<18 = 0xA14408 -> 08 44 a1, then 04.
    y = np.array([1, 2, 3, -1, 0.5], dtype=np.float32)
    assert lowbit.cast(y, "float6e2m3", packed=True).tobytes() == b"\x08\x44\xa1\x04"
    # int2 [1, -2, -1, 0, 1, -2, -1]: codes 1, 2, 3, 0, ...: 1 | 2<<2 | 3<<4 | 0<<6 = 0x39.
    z = np.array([1, -2, -1, 0, 1, -2, -1], dtype=ml_dtypes.int2)
    assert lowbit.pack(z).tobytes() == b"\x39\x39"
    assert lowbit.unpack(b"\x39\x39", "int2", 7).tolist() == z.tolist()
    assert lowbit.unpack(b"\xe1\x03", ml_dtypes.int4, (3,)).tolist() == [1, -2, 3]


@pytest.mark.parametrize("t,bits", SUB_BYTE, ids=[np.dtype(t).name for t, _ in SUB_BYTE])
def test_packed_round_trips_and_onnx_layout(t, bits):
    rng = np.random.default_rng(bits)
    every = np.arange(1 << bits, dtype=np.uint8)
    for n in list(range(0, 13)) + [1000, 4097]:
        codes = np.resize(every, n) if n <= 64 else rng.integers(0, 1 << bits, n, dtype=np.uint8)
        x = codes.view(t)
        raw = lowbit.pack(x)
        assert raw.dtype == np.uint8 and raw.size == (n * bits + 7) // 8
        back = lowbit.unpack(raw, t, x.shape)
        assert back.dtype == np.dtype(t)
        assert np.array_equal(back.view(np.uint8), codes)
        # The bytes onnx itself writes for the same array (numpy_helper.from_array).
        if n:
            assert raw.tobytes() == numpy_helper.from_array(x).raw_data
        # Through float32 and back, packed on the way.
        f = lowbit.cast(x, "FLOAT")
        assert np.array_equal(lowbit.unpack(lowbit.cast(f, t, packed=True), t, n).view(np.uint8), codes)


def test_packed_sources_and_shapes():
    x = np.arange(-8, 8, dtype=np.float32).reshape(4, 4)
    q = lowbit.cast(x, "int4")
    assert q.shape == (4, 4) and q.dtype == np.dtype(ml_dtypes.int4)
    assert lowbit.cast(q, np.float32).tolist() == x.tolist()
    raw = lowbit.cast(x, "int4", packed=True)
    assert raw.shape == (8,)
    assert np.array_equal(lowbit.unpack(raw, "int4", (4, 4)), q)
    # Upper bits of ml_dtypes' one-byte-per-element storage are not part of the code.
    odd = np.array([0xF1, 0x0E], np.uint8).view(ml_dtypes.int4)
    assert lowbit.cast(odd, np.float32).tolist() == [1.0, -2.0]


def test_bad_shapes_raise():
    with pytest.raises(lowbit.ShapeError, match="2 bytes"):
        lowbit.unpack(b"\x00", "int4", (3,))
    with pytest.raises(lowbit.ShapeError, match="negative"):
        lowbit.unpack(b"\x00", "int4", (-1,))
    with pytest.raises(lowbit.ShapeError, match="not an integer"):
        lowbit.unpack(b"\x00", "int4", (2.5,))
    with pytest.raises(lowbit.ShapeError):
        lowbit.unpack(np.zeros(5, np.uint8), "float16", (2, 1))
    with pytest.raises(lowbit.DTypeError, match="uint8"):
        lowbit.unpack(np.zeros(2, np.float32), "int4", 3)
    with pytest.raises(lowbit.DTypeError, match="STRING"):
        lowbit.unpack(b"", "STRING", 0)
    with pytest.raises(lowbit.Error, match="STRING"):
        lowbit.cast(np.ones(2, np.float32), "STRING", packed=True)


# ------------------------------------------------------------------------------------------------
# layouts, threads
# ------------------------------------------------------------------------------------------------


def test_any_layout_and_shape():
    rng = np.random.default_rng(7)
    x = rng.normal(size=(6, 8)).astype(np.float32) * 100
    want = lowbit.cast(x, "e5m2")
    assert want.shape == (6, 8)
    # A strided view, a Fortran-ordered copy and big-endian data give the same values.
    assert np.array_equal(lowbit.cast(x[:, ::2], "e5m2").view(np.uint8), want[:, ::2].view(np.uint8))
    assert np.array_equal(lowbit.cast(np.asfortranarray(x), "e5m2").view(np.uint8), want.view(np.uint8))
    assert np.array_equal(lowbit.cast(x.astype(">f4"), "e5m2").view(np.uint8), want.view(np.uint8))
    # 0-d and empty arrays, lists.
    assert lowbit.cast(np.float32(1.5), "e4m3fn").shape == ()
    assert float(lowbit.cast(np.float32(1.5), "e4m3fn")) == 1.5
    assert lowbit.cast(np.zeros((0, 3), np.float32), "int4").shape == (0, 3)
    assert lowbit.cast([1.0, 2.0], "f16").tolist() == [1.0, 2.0]


@pytest.mark.parametrize("to,profile", [("e4m3fn", "spec"), ("float16", "onnxruntime"), ("int4", "spec"), ("bf16", "onnx-reference")])
def test_threads_do_not_change_the_result(to, profile):
    rng = np.random.default_rng(11)
    bits = rng.integers(0, 1 << 32, size=1_000_003, dtype=np.uint64).astype(np.uint32)
    x = bits.view(np.float32)
    one = lowbit.cast(x, to, profile=profile, threads=1)
    for t in (2, 3, None):
        assert np.array_equal(lowbit.cast(x, to, profile=profile, threads=t).view(np.uint8), one.view(np.uint8))


# ------------------------------------------------------------------------------------------------
# strings
# ------------------------------------------------------------------------------------------------


def test_numbers_to_strings_by_hand():
    x = np.array([0.1, 1 / 3, 3, -0.0, 1e10, 1e-5, np.nan, np.inf, -np.inf], dtype=np.float32)
    # spec: shortest digits that round-trip in float32 (1/3 is 0.3333333432674408: 8 digits are
    # not enough, 0.33333334 is), positional for 1e-4 <= |x| < 1e6 with a fractional part,
    # else d.ddde+XX.
    assert lowbit.cast(x, "STRING").tolist() == ["0.1", "0.33333334", "3.0", "-0.0", "1e+10", "1e-05", "NaN", "INF", "-INF"]
    # onnxruntime: %.8g of the value as a double (float32 1e-5 is 9.99999974737875e-06).
    assert lowbit.cast(x, "STRING", profile="onnxruntime").tolist() == [
        "0.1", "0.33333334", "3", "-0", "1e+10", "9.9999997e-06", "NaN", "INF", "-INF"
    ]
    assert lowbit.cast(np.array([[True, False]]), str).tolist() == [["True", "False"]]


def test_strings_to_numbers_by_hand():
    texts = np.array(["0.1", "65504", "65520", "1e-8", " 7.25 ", "-inf"])
    # float16: 0.1 -> 0x2E66 (0.0999755859375); 65504 is MAX 0x7BFF; 65520 is the midpoint to
    # 2^16 and ties away from 0x7BFF (odd) to infinity 0x7C00; 1e-8 is below half the smallest
    # subnormal 2^-24 (5.96e-8): 0; 7.25 = 1.8125 * 2^2 -> exponent field 17, fraction 0x340: 0x4740.
    got = lowbit.cast(texts, "FLOAT16").view(np.uint16).tolist()
    assert got == [0x2E66, 0x7BFF, 0x7C00, 0x0000, 0x4740, 0xFC00]
    assert lowbit.cast(texts.astype("S"), "FLOAT16").view(np.uint16).tolist() == got
    assert lowbit.cast(texts.astype(object).reshape(2, 3), "FLOAT16").shape == (2, 3)
    # float8 with saturation: 464 ties down to 448, 1000 saturates.
    assert lowbit.cast(np.array(["464", "1000"]), "e4m3fn").view(np.uint8).tolist() == [0x7E, 0x7E]


def test_float16_strings_round_trip():
    texts = lowbit.cast(ALL_F16, "STRING")
    back = lowbit.cast(texts, "FLOAT16")
    finite = ~np.isnan(ALL_F16)
    assert np.array_equal(back.view(np.uint16)[finite], ALL_F16.view(np.uint16)[finite])
    assert np.isnan(back[~finite]).all()


def test_bad_strings_raise():
    with pytest.raises(lowbit.ParseError) as e:
        lowbit.cast(np.array(["1.5", "abc"]), "FLOAT")
    assert "element 1" in str(e.value) and '"abc"' in str(e.value)
    assert isinstance(e.value, ValueError)
    with pytest.raises(lowbit.DTypeError, match="element 0"):
        lowbit.cast(np.array([1.5], dtype=object), "FLOAT")
    assert lowbit.cast(np.array(["a", "b"]), "STRING").tolist() == ["a", "b"]


def test_internal_error_is_not_a_value_error():
    # A panic in the crate would surface as this class (caught at the boundary).
    assert issubclass(lowbit.InternalError, RuntimeError)
    assert not issubclass(lowbit.InternalError, ValueError)
    assert issubclass(lowbit.FileError, OSError) and issubclass(lowbit.FileError, lowbit.Error)


# ------------------------------------------------------------------------------------------------
# described formats, and ml_dtypes' types that are no ONNX type
# ------------------------------------------------------------------------------------------------

EXTRA = [ml_dtypes.float8_e4m3, ml_dtypes.float8_e3m4, ml_dtypes.float8_e4m3b11fnuz]


@pytest.mark.parametrize("t", EXTRA, ids=[np.dtype(t).name for t in EXTRA])
def test_ml_dtypes_extra_types_equal_astype(t):
    # Every float16 pattern in (IEEE rules, nearest even, no saturation), every code out: the
    # values ml_dtypes' astype gives; NaN where it gives NaN (payloads are not compared).
    with np.errstate(invalid="ignore", over="ignore"):
        plain = ALL_F16.astype(t)
    got = lowbit.cast(ALL_F16, t, saturate=False)
    assert got.dtype == np.dtype(t)
    nan = np.isnan(plain.astype(np.float32))
    assert np.array_equal(np.isnan(got.astype(np.float32)), nan)
    assert np.array_equal(got.view(np.uint8)[~nan], plain.view(np.uint8)[~nan])
    codes = np.arange(256, dtype=np.uint8).view(t)
    wide = lowbit.cast(codes, np.float32)
    finite = ~np.isnan(codes.astype(np.float32))
    assert np.array_equal(wide[finite], codes.astype(np.float32)[finite])


# Every source the named types meet in ml_dtypes and XLA: numpy's and ml_dtypes' fixed-width types.
NAMED_PEERS = [np.float32, np.float64, np.float16, ml_dtypes.bfloat16, np.int8, np.uint8, np.int32, np.int64,
               np.bool_, ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2fnuz, ml_dtypes.float4_e2m1fn,
               ml_dtypes.float6_e3m2fn, ml_dtypes.int4] + EXTRA


def _patterns(t):
    """Every code of a type of 16 bits or fewer; float32/float64: every float16 value, the
    specials and a double-rounding witness; the wide integers: their edges."""
    d = np.dtype(t)
    if d == np.bool_:
        return np.array([False, True])
    if d in (np.float32, np.float64):
        extra = np.array([np.nan, -np.nan, np.inf, -np.inf, 1e30, -1e30, 1e-30, 1.0625 + 2.0 ** -30])
        return np.concatenate([ALL_F16.astype(d), extra.astype(d)])
    if d in (np.int32, np.int64):
        info = np.iinfo(d)
        return np.array([info.min, info.max, -1, 0, 1, 17, 100, -100, 1000, 2 ** 20 + 1], dtype=d)
    if d.itemsize == 1 and d.kind in "iu" and d not in (np.int8, np.uint8):
        # ml_dtypes' int4: its values, one per byte.
        info = ml_dtypes.iinfo(d)
        return np.arange(info.min, info.max + 1).astype(d)
    width = {1: np.uint8, 2: np.uint16}[d.itemsize]
    codes = np.arange(1 << (8 * d.itemsize), dtype=width)
    if d in (np.dtype(ml_dtypes.float4_e2m1fn), np.dtype(ml_dtypes.float6_e3m2fn)):
        codes = codes[: 1 << (4 if d == np.dtype(ml_dtypes.float4_e2m1fn) else 6)]
    return codes.view(d)


@pytest.mark.parametrize("t", EXTRA, ids=[np.dtype(t).name for t in EXTRA])
@pytest.mark.parametrize("other", NAMED_PEERS, ids=[np.dtype(t).name for t in NAMED_PEERS])
def test_named_types_under_ml_dtypes_equal_astype_bit_for_bit(t, other):
    # profile="ml-dtypes": the same bits as astype both ways, NaN codes included.
    with np.errstate(all="ignore"):
        for src, dst in [(other, t), (t, other)]:
            x = _patterns(src)
            want = x.astype(dst)
            got = lowbit.cast(x, dst, profile="ml-dtypes")
            assert got.dtype == np.dtype(dst)
            bad = np.nonzero(got.view(np.uint8) != want.view(np.uint8))[0]
            assert bad.size == 0, (np.dtype(src).name, np.dtype(dst).name, bad[:5])


def test_named_types_by_name_and_profile():
    x = np.array([0.53, 240.0, np.nan], np.float32)
    e4m3 = lowbit.cast(x, "float8_e4m3", profile="ml-dtypes")
    assert e4m3.dtype == np.dtype(ml_dtypes.float8_e4m3)
    # 0.53 = 1.06 * 2^-1 -> 1.0 * 2^-1 (0 0110 000 = 0x30); 240 = 0x77; NaN: 0x7C (quiet, no payload).
    assert e4m3.view(np.uint8).tolist() == [0x30, 0x77, 0x7C]
    # Into int8: ml_dtypes truncates and takes 240 through int32's low byte (-16); XLA saturates.
    assert lowbit.cast(e4m3, np.int8, profile="ml-dtypes").tolist() == [0, -16, 0]
    assert lowbit.cast(e4m3, np.int8, profile="xla").tolist() == [0, 127, 0]
    # Without a profile that has them: IEEE (0.5 to nearest even is 0; 240 and NaN are invalid
    # for int8 and give x86's integer indefinite, -128).
    assert lowbit.cast(e4m3, np.int8).tolist() == [0, -128, -128]
    # Not an ONNX type.
    with pytest.raises(lowbit.DTypeError):
        lowbit.onnx_name("float8_e3m4")
    info = lowbit.info(ml_dtypes.float8_e4m3b11fnuz)
    assert (info["name"], info["description"], info["max"], info["min_subnormal"]) == (
        "float8_e4m3b11fnuz", "e4m3,bias=11,special=fnuz", 30.0, 2.0 ** -13)
    assert info["codes"]["nan"] == 0x80 and info["numpy"] == "float8_e4m3b11fnuz"


def test_described_formats_by_hand():
    x = np.array([1.0, 1.5, 1000.0, -0.0], np.float32)
    # e2m5,special=fn: bias 1, 1.0 = exponent field 1, fraction 0: 0 01 00000 = 0x20; 1.5 adds the
    # top fraction bit 0x10: 0x30; MAX is the all-ones magnitude less one (all ones is NaN):
    # 0x7E = 2^(3-1) * (1 + 30/32) = 7.75, so 1000 saturates to 0x7E; -0 is 0x80. Without
    # saturate (the default for a described format, IEEE's, as `lowbit cast`) 1000 is NaN, 0x7F.
    got = lowbit.cast(x, "e2m5,special=fn", saturate=True)
    assert got.dtype == np.uint8 and got.tolist() == [0x20, 0x30, 0x7E, 0x80]
    assert lowbit.cast(x, "e2m5,special=fn").tolist() == [0x20, 0x30, 0x7F, 0x80]
    assert lowbit.cast(np.array([1.0], np.float32), "e4m3,special=ieee").dtype == np.dtype(ml_dtypes.float8_e4m3)
    # From a packed ONNX type: int4 -8 and 7 into E4M3 (IEEE): -8 = 1 1010 000 = 0xD0, 7 = 1.75 * 2^2
    # = 0 1001 110 = 0x4E.
    q = np.array([-8, 7], dtype=ml_dtypes.int4)
    assert lowbit.cast(q, ml_dtypes.float8_e4m3).view(np.uint8).tolist() == [0xD0, 0x4E]
    with pytest.raises(lowbit.Error, match="IEEE"):
        lowbit.cast(x, "e4m3,special=ieee", profile="onnxruntime")
    with pytest.raises(lowbit.DTypeError, match="bias"):
        lowbit.cast(x, "e4m3,bias=x")
