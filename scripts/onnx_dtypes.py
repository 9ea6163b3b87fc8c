"""ONNX dtypes as numpy/ml_dtypes see them, shared by the cross-check and benchmark scripts."""
import ml_dtypes
import numpy as np
from onnx import TensorProto

T = TensorProto
NP = {
    T.FLOAT: np.float32, T.DOUBLE: np.float64, T.FLOAT16: np.float16, T.BFLOAT16: ml_dtypes.bfloat16,
    T.INT8: np.int8, T.UINT8: np.uint8, T.INT16: np.int16, T.UINT16: np.uint16, T.INT32: np.int32,
    T.UINT32: np.uint32, T.INT64: np.int64, T.UINT64: np.uint64, T.BOOL: np.bool_,
    T.FLOAT8E4M3FN: ml_dtypes.float8_e4m3fn, T.FLOAT8E4M3FNUZ: ml_dtypes.float8_e4m3fnuz,
    T.FLOAT8E5M2: ml_dtypes.float8_e5m2, T.FLOAT8E5M2FNUZ: ml_dtypes.float8_e5m2fnuz,
    T.FLOAT8E8M0: ml_dtypes.float8_e8m0fnu, T.INT4: ml_dtypes.int4, T.UINT4: ml_dtypes.uint4,
    T.FLOAT4E2M1: ml_dtypes.float4_e2m1fn, T.INT2: ml_dtypes.int2, T.UINT2: ml_dtypes.uint2,
    T.FLOAT6E2M3: ml_dtypes.float6_e2m3fn, T.FLOAT6E3M2: ml_dtypes.float6_e3m2fn,
}
BITS = {T.FLOAT: 32, T.DOUBLE: 64, T.FLOAT16: 16, T.BFLOAT16: 16, T.INT8: 8, T.UINT8: 8, T.INT16: 16,
        T.UINT16: 16, T.INT32: 32, T.UINT32: 32, T.INT64: 64, T.UINT64: 64, T.BOOL: 8,
        T.FLOAT8E4M3FN: 8, T.FLOAT8E4M3FNUZ: 8, T.FLOAT8E5M2: 8, T.FLOAT8E5M2FNUZ: 8, T.FLOAT8E8M0: 8,
        T.INT4: 4, T.UINT4: 4, T.FLOAT4E2M1: 4, T.INT2: 2, T.UINT2: 2, T.FLOAT6E2M3: 6, T.FLOAT6E3M2: 6}
