"""Shared tables of the tests: the ONNX dtypes numpy/ml_dtypes hold, their widths, and bit patterns
as arrays. Written here independently of the package (the tests must not take their expected
values from the code under test)."""

import ml_dtypes
import numpy as np
from onnx import TensorProto as T

# ONNX type number -> numpy/ml_dtypes dtype, for every castable dtype numpy can hold but STRING.
NP = {
    T.FLOAT: np.float32,
    T.DOUBLE: np.float64,
    T.FLOAT16: np.float16,
    T.BFLOAT16: ml_dtypes.bfloat16,
    T.INT8: np.int8,
    T.UINT8: np.uint8,
    T.INT16: np.int16,
    T.UINT16: np.uint16,
    T.INT32: np.int32,
    T.UINT32: np.uint32,
    T.INT64: np.int64,
    T.UINT64: np.uint64,
    T.BOOL: np.bool_,
    T.FLOAT8E4M3FN: ml_dtypes.float8_e4m3fn,
    T.FLOAT8E4M3FNUZ: ml_dtypes.float8_e4m3fnuz,
    T.FLOAT8E5M2: ml_dtypes.float8_e5m2,
    T.FLOAT8E5M2FNUZ: ml_dtypes.float8_e5m2fnuz,
    T.FLOAT8E8M0: ml_dtypes.float8_e8m0fnu,
    T.INT4: ml_dtypes.int4,
    T.UINT4: ml_dtypes.uint4,
    T.FLOAT4E2M1: ml_dtypes.float4_e2m1fn,
    T.INT2: ml_dtypes.int2,
    T.UINT2: ml_dtypes.uint2,
    T.FLOAT6E2M3: ml_dtypes.float6_e2m3fn,
    T.FLOAT6E3M2: ml_dtypes.float6_e3m2fn,
}

# Bits of one element's code (ONNX's widths; bool is one byte).
BITS = {
    T.FLOAT: 32, T.DOUBLE: 64, T.FLOAT16: 16, T.BFLOAT16: 16, T.INT8: 8, T.UINT8: 8, T.INT16: 16,
    T.UINT16: 16, T.INT32: 32, T.UINT32: 32, T.INT64: 64, T.UINT64: 64, T.BOOL: 8,
    T.FLOAT8E4M3FN: 8, T.FLOAT8E4M3FNUZ: 8, T.FLOAT8E5M2: 8, T.FLOAT8E5M2FNUZ: 8, T.FLOAT8E8M0: 8,
    T.INT4: 4, T.UINT4: 4, T.FLOAT4E2M1: 4, T.INT2: 2, T.UINT2: 2, T.FLOAT6E2M3: 6, T.FLOAT6E3M2: 6,
}

UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}

SUB_BYTE = {T.INT4, T.UINT4, T.FLOAT4E2M1, T.INT2, T.UINT2, T.FLOAT6E2M3, T.FLOAT6E3M2}
FLOAT8_TARGETS = {T.FLOAT8E4M3FN, T.FLOAT8E4M3FNUZ, T.FLOAT8E5M2, T.FLOAT8E5M2FNUZ, T.FLOAT8E8M0}


def name(t):
    return T.DataType.Name(t)


def from_codes(t, codes):
    """An array of dtype `t` whose elements have the given codes (unsigned ints of the width)."""
    codes = np.asarray(codes, dtype=np.uint64)
    if t == T.BOOL:
        return codes.astype(np.bool_)
    itemsize = np.dtype(NP[t]).itemsize
    return codes.astype(UINT[itemsize]).view(NP[t])


def codes_of(t, a):
    """The element codes of an array of dtype `t` (sub-byte types: the low bits of each byte)."""
    a = np.ascontiguousarray(a)
    if t == T.BOOL:
        return a.view(np.uint8).astype(np.uint64)
    codes = a.view(UINT[a.dtype.itemsize]).astype(np.uint64)
    return codes & np.uint64((1 << BITS[t]) - 1)


def patterns(t, rng, random_count=20000):
    """Bit patterns to feed: every pattern of 16 bits or fewer; above that, specials and random."""
    bits = BITS[t]
    if t == T.BOOL:
        return np.array([0, 1], dtype=np.uint64)
    if bits <= 16:
        return np.arange(1 << bits, dtype=np.uint64)
    specials = {
        # float32: infinities, NaNs (quiet, signalling, payloads), -0, the E4M3FN overflow edges,
        # a float8 midpoint plus one, the smallest subnormal, the largest finite.
        32: [0x7F800000, 0xFF800000, 0x7FC00000, 0x7F800001, 0xFFC00001, 0x80000000, 0x43E80001,
             0x43F00000, 0x43E80000, 0x47700000, 0x3F880000, 0x00000001, 0x00400000, 0x7F7FFFFF],
        64: [0x7FF0000000000000, 0xFFF0000000000000, 0x7FF8000000000000, 0x7FF0000000000001,
             0x8000000000000000, 0x3FF1000000400000, 0x407D000000000001, 0x36A0000000000000, 1],
    }[bits]
    high = rng.integers(0, 1 << 32, size=random_count, dtype=np.uint64)
    low = rng.integers(0, 1 << 32, size=random_count, dtype=np.uint64)
    r = (high << np.uint64(32) | low) if bits == 64 else low
    return np.concatenate([np.array(specials, dtype=np.uint64), r])
