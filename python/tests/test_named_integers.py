"""ml_dtypes' int1 and uint1 (lowbit's named integer types): accepted and returned as ml_dtypes
arrays; under profile="ml-dtypes" the same codes as ml_dtypes 0.6.0's astype."""
import ml_dtypes
import numpy as np
import pytest

import lowbit

ONE_BIT = [ml_dtypes.int1, ml_dtypes.uint1]
PEERS = [np.float32, np.float64, np.float16, ml_dtypes.bfloat16, np.int8, np.uint8, np.int32, np.uint64, np.bool_,
         ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2, ml_dtypes.float8_e3m4, ml_dtypes.float4_e2m1fn,
         ml_dtypes.float6_e2m3fn, ml_dtypes.int4, ml_dtypes.uint4, ml_dtypes.int2] + ONE_BIT


def _patterns(t):
    """Every code of a type of 16 bits or fewer; wider types: specials and edges."""
    d = np.dtype(t)
    if d == np.bool_:
        return np.array([False, True])
    if d in (np.float32, np.float64):
        return np.array([0.0, -0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, -1.0, -1.5, -2.0, 1e10, -1e10, np.nan, np.inf,
                         -np.inf, 2.0 ** 31, 2.0 ** 31 + 2 ** 8, 4294967297.0], dtype=d)
    if d in (np.dtype(np.int32), np.dtype(np.uint64)):
        info = np.iinfo(d)
        return np.array([info.min, info.max, 0, 1, 2, 3, 100, info.max - 1], dtype=d)
    if d.itemsize == 1 and d.kind in "iu" and d not in (np.int8, np.uint8):
        info = ml_dtypes.iinfo(d)
        return np.arange(int(info.min), int(info.max) + 1).astype(d)
    width = {1: np.uint8, 2: np.uint16}[d.itemsize]
    codes = np.arange(1 << (8 * d.itemsize), dtype=width)
    if d == np.dtype(ml_dtypes.float4_e2m1fn):
        codes = codes[:16]
    if d == np.dtype(ml_dtypes.float6_e2m3fn):
        codes = codes[:64]
    return codes.view(d)


@pytest.mark.parametrize("t", ONE_BIT, ids=["int1", "uint1"])
@pytest.mark.parametrize("other", PEERS, ids=[np.dtype(t).name for t in PEERS])
def test_under_ml_dtypes_equal_astype(t, other):
    compared = 0
    with np.errstate(all="ignore"):
        for src, dst in [(other, t), (t, other)]:
            x = _patterns(src)
            got = lowbit.cast(x, dst, profile="ml-dtypes")
            try:
                want = x.astype(dst)
            except TypeError:
                # ml_dtypes has no such cast (int1 <-> uint1, int4 -> int1, ...): spec's answer.
                want = lowbit.cast(x, dst)
            assert got.dtype == np.dtype(dst)
            mask = 1 if np.dtype(dst) in (np.dtype(ml_dtypes.int1), np.dtype(ml_dtypes.uint1)) else 0xFF
            bad = np.nonzero((got.view(np.uint8) & mask) != (want.view(np.uint8) & mask))[0]
            assert bad.size == 0, (np.dtype(src).name, np.dtype(dst).name, bad[:5])
            compared += x.size
    assert compared > 0


def test_int1_by_hand():
    x = np.array([1.0, 2.0, -1.0, 1.5, np.nan, 0.5, 3.0], np.float32)
    # ml_dtypes 0.6.0: the low bit of the integer part (code 1 is -1); NaN -> 0.
    got = lowbit.cast(x, "int1", profile="ml-dtypes")
    assert got.dtype == np.dtype(ml_dtypes.int1)
    assert got.astype(np.int8).tolist() == [-1, 0, -1, -1, 0, 0, -1]
    assert lowbit.cast(x, ml_dtypes.uint1, profile="ml-dtypes").astype(np.int8).tolist() == [1, 0, 1, 1, 0, 0, 1]
    # Back: int1's code 1 is -1.0, uint1's 1.0; packed=True gives the codes eight per byte.
    assert lowbit.cast(got, np.float32, profile="ml-dtypes").tolist() == [-1.0, 0.0, -1.0, -1.0, 0.0, 0.0, -1.0]
    assert lowbit.cast(x, "int1", profile="ml-dtypes", packed=True).tolist() == [0b1001101]
    info = lowbit.info("int1")
    assert (info["name"], info["bits"], info["min"], info["max"]) == ("int1", 1, -1, 0)
    with pytest.raises(lowbit.DTypeError):
        lowbit.onnx_name("uint1")
