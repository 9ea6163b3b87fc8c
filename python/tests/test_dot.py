"""lowbit.dot against sums computed without lowbit (tests/data/dot/gemms.json, recorded by
scripts/gen_dot_fixtures.py with Python's exact rationals), bit for bit, and its argument checks."""

import json
import pathlib

import ml_dtypes
import numpy as np
import pytest

import lowbit

DATA = pathlib.Path(__file__).resolve().parents[2] / "tests" / "data" / "dot" / "gemms.json"
NUMPY = {"FLOAT16": np.float16, "BFLOAT16": ml_dtypes.bfloat16, "FLOAT8E4M3FN": ml_dtypes.float8_e4m3fn,
         "FLOAT8E5M2": ml_dtypes.float8_e5m2}


def test_matmul_t_equals_the_rational_computation():
    compared = 0
    for case in json.loads(DATA.read_text())["cases"]:
        t = NUMPY[case["dtype"]]
        width = np.dtype(t).itemsize
        ints = np.uint8 if width == 1 else np.uint16
        a = np.array(case["a"], ints).view(t).reshape(case["m"], case["k"])
        b = np.array(case["b"], ints).view(t).reshape(case["n"], case["k"])
        for model in ("exact", "sequential-fp32", "fma,format=float32"):
            got = lowbit.dot.matmul_t(a, b, model=model)
            assert got.dtype == np.float32 and got.shape == (case["m"], case["n"])
            assert got.reshape(-1).view(np.uint32).tolist() == case[model], (case["dtype"], model)
            compared += got.size
    assert compared >= 700


def test_output_dtype_and_refusals():
    a = np.array([[16777216.0, 1.0, 1.0]], np.float32)
    b = np.ones((1, 3), np.float32)
    assert lowbit.dot.matmul_t(a, b)[0, 0] == 16777218.0
    assert lowbit.dot.matmul_t(a, b, model="sequential-fp32")[0, 0] == 16777216.0
    half = lowbit.dot.matmul_t(a, b, out_dtype="float16")
    assert half.dtype == np.float16 and np.isinf(half[0, 0])
    with pytest.raises(lowbit.ShapeError):
        lowbit.dot.matmul_t(a, np.ones((1, 2), np.float32))
    with pytest.raises(lowbit.DTypeError):
        lowbit.dot.matmul_t(a, b.astype(np.float16))
    with pytest.raises(lowbit.Error, match="models"):
        lowbit.dot.matmul_t(a, b, model="kahan")
