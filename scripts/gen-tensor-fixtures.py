#!/usr/bin/env python3
"""TensorProto fixtures for tests/tensor_proto.rs, made with onnx 1.23.2.

For every dtype it writes, under tests/fixtures/tensor_proto/:
  <dtype>.raw.pb     numpy_helper.from_array(values)            (raw_data)
  <dtype>.typed.pb   helper.make_tensor(..., raw=False)          (the typed *_data fields), where onnx can
  <dtype>.<kind>.codes  the element codes onnx reads from <dtype>.<kind>.pb (numpy_helper.to_array), one
                     hex code per line (strings: JSON lines); make_tensor saturates float8, so they can differ
  <dtype>.lowbit.pb  what `lowbit cast --to <dtype> <dtype>.raw.pb out.pb` writes; this script checks
                     that onnx reads it back to the same values, and the cargo test checks that lowbit
                     still writes exactly these bytes.
Needs `cargo build --release` and a venv with onnx==1.23.2 ml_dtypes numpy.
"""
import json
import pathlib
import subprocess
import sys

import ml_dtypes
import numpy as np
import onnx
from onnx import TensorProto as T, helper, numpy_helper

from cargo_target import release_lowbit

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "fixtures" / "tensor_proto"
LOWBIT = release_lowbit()

f32_specials = [0.0, -0.0, 1.5, -2.25, 3.4e38, 1e-45, float("inf"), float("-inf")]
VALUES = {
    T.FLOAT: np.array(f32_specials, dtype=np.float32).reshape(2, 4),
    T.DOUBLE: np.array([0.1, -1e300, 5e-324, float("inf"), -0.0], dtype=np.float64),
    T.FLOAT16: np.array([1.0, -65504.0, 6e-8, float("inf"), -0.0], dtype=np.float16),
    T.BFLOAT16: np.array([1.0, -3.0e38, 1e-39, float("-inf"), 0.5], dtype=ml_dtypes.bfloat16),
    T.INT8: np.array([-128, -1, 0, 127], dtype=np.int8),
    T.UINT8: np.array([0, 1, 255], dtype=np.uint8),
    T.INT16: np.array([-32768, 7, 32767], dtype=np.int16),
    T.UINT16: np.array([0, 65535, 300], dtype=np.uint16),
    T.INT32: np.array([-(2**31), 2**31 - 1, 5], dtype=np.int32),
    T.UINT32: np.array([0, 2**32 - 1, 70000], dtype=np.uint32),
    T.INT64: np.array([-(2**63), 2**63 - 1, -5], dtype=np.int64),
    T.UINT64: np.array([0, 2**64 - 1, 2**40], dtype=np.uint64),
    T.BOOL: np.array([[True, False, True]], dtype=np.bool_),
    T.STRING: np.array(["", "a", "héllo", "3.5"], dtype=object),
    T.COMPLEX64: np.array([1 + 2j, -3.5 - 0.25j], dtype=np.complex64),
    T.COMPLEX128: np.array([1e300 + 1j], dtype=np.complex128),
    T.FLOAT8E4M3FN: np.array([448, -0.001953125, 1.0, float("nan")], dtype=ml_dtypes.float8_e4m3fn),
    T.FLOAT8E4M3FNUZ: np.array([240, -1.0, 0.0], dtype=ml_dtypes.float8_e4m3fnuz),
    T.FLOAT8E5M2: np.array([57344, float("-inf"), 1.5e-5], dtype=ml_dtypes.float8_e5m2),
    T.FLOAT8E5M2FNUZ: np.array([57344, -2.0], dtype=ml_dtypes.float8_e5m2fnuz),
    T.FLOAT8E8M0: np.array([1.0, 2.0**127, 2.0**-127, 0.5], dtype=ml_dtypes.float8_e8m0fnu),
    T.UINT4: np.array([0, 15, 7], dtype=ml_dtypes.uint4),
    T.INT4: np.array([[1, -2, 3], [-8, 7, 0]], dtype=ml_dtypes.int4),
    T.FLOAT4E2M1: np.array([0.5, 1.0, -6.0], dtype=ml_dtypes.float4_e2m1fn),
    T.UINT2: np.array([0, 1, 2, 3, 1], dtype=ml_dtypes.uint2),
    T.INT2: np.array([-2, -1, 0, 1, 1, -2, 0], dtype=ml_dtypes.int2),
    T.FLOAT6E2M3: np.array([1, 2, 3, -1, 0.5], dtype=ml_dtypes.float6_e2m3fn),
    T.FLOAT6E3M2: np.array([28, -0.0625, 0.25], dtype=ml_dtypes.float6_e3m2fn),
}


def codes(t, arr):
    """Element codes as lowbit's Tensor::codes() sees them (raw bits, low bits for sub-byte types)."""
    if t == T.STRING:
        return [json.dumps(s) for s in arr.reshape(-1)]
    if t in (T.COMPLEX64, T.COMPLEX128):
        return [arr.tobytes().hex()]
    flat = arr.reshape(-1)
    bits = {T.UINT4: 4, T.INT4: 4, T.FLOAT4E2M1: 4, T.UINT2: 2, T.INT2: 2, T.FLOAT6E2M3: 6, T.FLOAT6E3M2: 6}.get(t)
    if bits:
        if t in (T.INT4, T.INT2, T.UINT4, T.UINT2):
            return [f"{int(v) & ((1 << bits) - 1):x}" for v in flat.astype(np.int64)]
        return [f"{int(v):x}" for v in flat.view(np.uint8)]
    width = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[flat.dtype.itemsize]
    return [f"{int(v):x}" for v in flat.view(width)]


def main():
    assert onnx.__version__ == "1.23.2"
    OUT.mkdir(parents=True, exist_ok=True)
    for t, arr in VALUES.items():
        name = T.DataType.Name(t).lower()
        raw = numpy_helper.from_array(arr, name)
        (OUT / f"{name}.raw.pb").write_bytes(raw.SerializeToString())
        (OUT / f"{name}.raw.codes").write_text("\n".join(codes(t, numpy_helper.to_array(raw))) + "\n")
        vals = arr.reshape(-1).tolist() if t != T.STRING else list(arr.reshape(-1))
        typed = helper.make_tensor(name, t, arr.shape, vals, raw=False)
        assert typed.raw_data == b""
        (OUT / f"{name}.typed.pb").write_bytes(typed.SerializeToString())
        (OUT / f"{name}.typed.codes").write_text("\n".join(codes(t, numpy_helper.to_array(typed))) + "\n")
        if t in (T.COMPLEX64, T.COMPLEX128):
            continue  # Cast rejects complex types, so `lowbit cast` cannot write them.
        out = OUT / f"{name}.lowbit.pb"
        subprocess.run([str(LOWBIT), "cast", "--to", T.DataType.Name(t), str(OUT / f"{name}.raw.pb"), str(out)], check=True,
                       capture_output=True)
        back = numpy_helper.to_array(onnx.load_tensor(str(out)))
        same = back.shape == arr.shape and (back.tobytes() == arr.tobytes() if t != T.STRING else list(back.reshape(-1)) == list(arr.reshape(-1)))
        if not same:
            sys.exit(f"{name}: onnx reads lowbit's file as {back!r}, expected {arr!r}")
    print(f"wrote {len(VALUES)} dtypes; onnx reads every file lowbit wrote back to the same values", file=sys.stderr)


if __name__ == "__main__":
    main()
