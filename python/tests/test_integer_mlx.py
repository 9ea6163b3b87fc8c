"""lowbit.blocks' `mlx:affine` against MLX 0.32.4's recorded quantize and dequantize
(tests/data/integer/mlx/cases.json, made by scripts/gen_integer_mlx_fixtures.py): the packed
uint32 weight, scales and biases of `storage()`, `elements` as the codes unpacked, and
`dequantize()` in the weight's dtype, bit for bit (NaN codes and signs of zero included), of
lowbit's tensors and of `from_storage` of MLX's. Counts what it compared and fails on zero."""

import json
import pathlib

import ml_dtypes
import numpy as np
import pytest

from lowbit import blocks

CASES = json.loads((pathlib.Path(__file__).resolve().parents[2] / "tests" / "data" / "integer" / "mlx" /
                    "cases.json").read_text())["cases"]
NUMPY = {"FLOAT": np.float32, "FLOAT16": np.float16, "BFLOAT16": ml_dtypes.bfloat16}
BITS = {"FLOAT": np.uint32, "FLOAT16": np.uint16, "BFLOAT16": np.uint16}


def _arr(case, key, dtype, shape):
    return np.frombuffer(bytes.fromhex(case[key]), dtype).reshape(shape)


def _scheme(case):
    return f"mlx:affine,bits={case['bits']},group={case['group']}"


def _peer(case):
    dt = NUMPY[case["dtype"]]
    return {"weight": _arr(case, "weight", np.uint32, case["weight_shape"]),
            "scales": _arr(case, "scales", dt, case["scales_shape"]),
            "biases": _arr(case, "biases", dt, case["scales_shape"])}


def test_quantize_and_dequantize_bit_exact():
    compared = 0
    for case in CASES:
        if case["kind"] != "quantize" or "refusal" in case:
            continue
        dt = NUMPY[case["dtype"]]
        w = _arr(case, "input", dt, case["shape"])
        q = blocks.quantize(w, _scheme(case))
        peer = _peer(case)
        st = q.storage()
        assert list(st) == ["weight", "scales", "biases"], case["name"]
        for name, want in peer.items():
            assert st[name].tobytes() == want.tobytes(), f"{case['name']}: {name}"
            compared += 1
        # The codes, LSB-first in the uint32 words.
        words = peer["weight"].view(np.uint8)
        bits = np.unpackbits(words, axis=-1, bitorder="little").reshape(w.shape[0], w.shape[1], case["bits"])
        codes = (bits.astype(np.uint32) << np.arange(case["bits"], dtype=np.uint32)).sum(-1)
        assert np.array_equal(np.asarray(q.elements), codes), case["name"]
        assert q.zero_points is None
        want = _arr(case, "dequantized", BITS[case["dtype"]], case["shape"])
        got = np.asarray(q.dequantize(dt)).view(BITS[case["dtype"]])
        assert np.array_equal(got, want), case["name"]
        compared += 2
    assert compared > 0


def test_from_storage_of_mlx_tensors():
    compared = 0
    for case in CASES:
        if "refusal" in case:
            continue
        dt = NUMPY[case["dtype"]]
        back = blocks.from_storage(_peer(case), _scheme(case), case["shape"])
        want = _arr(case, "dequantized", BITS[case["dtype"]], case["shape"])
        assert np.array_equal(np.asarray(back.dequantize(dt)).view(BITS[case["dtype"]]), want), case["name"]
        assert {k: v.tobytes() for k, v in back.storage().items()} == {k: v.tobytes() for k, v in _peer(case).items()}
        compared += 1
    assert compared > 0


def test_mlx_refusals_are_refused():
    refused = [c for c in CASES if "refusal" in c]
    assert refused
    for case in refused:
        w = _arr(case, "input", NUMPY[case["dtype"]], case["shape"])
        with pytest.raises(Exception):
            blocks.quantize(w, _scheme(case))
