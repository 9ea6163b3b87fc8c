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


def test_block_scaled_operands_equal_the_rational_computation():
    record = json.loads((DATA.parent / "block_gemms.json").read_text())
    compared = 0

    def operand(scheme, v, rows, k):
        elements = np.array(v["elements"], np.uint8).reshape(rows, k)
        scales = np.array(v["scales"], np.uint8).reshape(rows, -1)
        g = v["global_scale"]
        return lowbit.blocks.from_arrays(elements, scales, scheme, global_scale=None if g is None else np.float32(g))

    for case in record["cases"]:
        a = operand(case["a_scheme"], case["a"], case["m"], case["k"])
        b = operand(case["b_scheme"], case["b"], case["n"], case["k"])
        for model in ("exact", "sequential-fp32"):
            got = lowbit.dot.matmul_t(a, b, model=model)
            assert got.shape == (case["m"], case["n"])
            assert got.reshape(-1).view(np.uint32).tolist() == case[model], (case["a_scheme"], case["b_scheme"], model)
            compared += got.size
    assert compared >= 100
    # A block-scaled operand against a plain one: MXFP4 ones (code 2, scale 1) against 0.5s.
    ones = lowbit.blocks.from_arrays(np.full((1, 32), 2, np.uint8), np.array([[127]], np.uint8), "ocp:mxfp4")
    assert lowbit.dot.matmul_t(np.full((2, 32), 0.5, np.float32), ones).tolist() == [[16.0], [16.0]]
    with pytest.raises(lowbit.ShapeError):
        lowbit.dot.matmul_t(np.full((2, 16), 0.5, np.float32), ones)
