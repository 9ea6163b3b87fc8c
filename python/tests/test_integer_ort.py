"""lowbit.blocks' `ort:matmulnbits` against onnxruntime 1.31.1's MatMulNBitsQuantizer, recorded
(tests/data/integer/ort/cases.json, made by scripts/gen_integer_ort_fixtures.py): B, scales and
zero_points of `storage()` byte for byte, `zero_points` as the codes of each block, and
`dequantize()` against the node's product with the identity (exact but for the sign of zero,
compared by value, and rows holding NaN or Inf, which poison their column). Counts what it
compared and fails on zero."""

import json
import pathlib

import ml_dtypes
import numpy as np

from lowbit import blocks

CASES = json.loads((pathlib.Path(__file__).resolve().parents[2] / "tests" / "data" / "integer" / "ort" /
                    "cases.json").read_text())["cases"]
NUMPY = {"FLOAT": np.float32, "FLOAT16": np.float16, "BFLOAT16": ml_dtypes.bfloat16}


def _arr(case, key, dtype, shape):
    return np.frombuffer(bytes.fromhex(case[key]), dtype).reshape(shape)


def _scheme(case):
    return f"ort:matmulnbits,bits={case['bits']},block={case['block']}{',sym' if case['sym'] else ''}"


def _peer(case):
    out = {"B": _arr(case, "B", np.uint8, case["B_shape"]),
           "scales": _arr(case, "scales", NUMPY[case["dtype"]], case["scales_shape"])}
    if "zero_points" in case:
        out["zero_points"] = _arr(case, "zero_points", np.uint8, case["zero_points_shape"])
    return out


def test_quantizer_storage_byte_for_byte():
    compared = 0
    for case in CASES:
        if case["kind"] != "quantize":
            continue
        w = _arr(case, "input", NUMPY[case["dtype"]], case["shape"])
        q = blocks.quantize(w, _scheme(case))
        st = q.storage()
        peer = _peer(case)
        assert list(st) == list(peer), case["name"]
        for name, want in peer.items():
            assert st[name].tobytes() == want.tobytes(), f"{case['name']}: {name}"
            compared += 1
        if case["sym"]:
            assert q.zero_points is None
        else:
            zp = np.unpackbits(peer["zero_points"], axis=-1, bitorder="little") if case["bits"] == 4 else None
            kb = q.scales.shape[-1]
            if zp is not None:
                codes = (zp.reshape(zp.shape[0], -1, 4) * (1 << np.arange(4))).sum(-1)[:, :kb]
            else:
                codes = peer["zero_points"][:, :kb]
            assert np.array_equal(np.asarray(q.zero_points).reshape(codes.shape), codes), case["name"]
    assert compared > 0


def test_dequantize_against_the_node():
    compared = 0
    for case in CASES:
        if "identity_product" not in case:
            continue
        dt = NUMPY[case["dtype"]]
        n, k = case["shape"]
        back = blocks.from_storage(_peer(case), _scheme(case), [n, k])
        ours = np.asarray(back.dequantize(dt))
        y = _arr(case, "identity_product", dt, [k, n]).T
        view = np.uint32 if dt == np.float32 else np.uint16
        for r in range(n):
            if np.isnan(y[r]).all() and not np.isfinite(ours[r]).all():
                continue
            same = (ours[r].view(view) == y[r].view(view)) | ((ours[r] == 0) & (y[r] == 0))
            assert same.all(), f"{case['name']}: row {r}"
            compared += k
    assert compared > 0
