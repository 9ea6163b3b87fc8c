"""lowbit.blocks' compressed-tensors:int4|int8 schemes against compressed-tensors 0.20.0's own
outputs (tests/data/integer/compressed_tensors, made by
scripts/gen_integer_compressed_tensors_fixtures.py): codes, scales, zero points, the stored
tensors and the dequantized weight, bit for bit, both from the weight and from the stored
tensors."""

import json
import pathlib

import ml_dtypes
import numpy as np
import pytest

import lowbit
import lowbit.blocks

DATA = pathlib.Path(__file__).resolve().parents[2] / "tests" / "data" / "integer" / "compressed_tensors"
DTYPES = {"f32": np.float32, "f16": np.float16, "bf16": ml_dtypes.bfloat16, "i8": np.int8, "i32": np.int32,
          "i64": np.int64}
MANIFEST = json.loads((DATA / "manifest.json").read_text())
BLOB = (DATA / "data.bin").read_bytes()


def array(a):
    raw = BLOB[a["offset"]:a["offset"] + a["nbytes"]]
    return np.frombuffer(raw, dtype=DTYPES[a["dtype"]]).reshape(a["shape"])


def bits(a):
    a = np.ascontiguousarray(a)
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize])


def check(q, case):
    nbits = 4 if ":int4" in case["scheme"] else 8
    assert np.array_equal(np.asarray(q.elements), array(case["q"]).view(np.uint8) & ((1 << nbits) - 1))
    assert np.array_equal(bits(q.scales), bits(array(case["scale"])))
    if "asym" in case["scheme"]:
        assert np.array_equal(np.asarray(q.zero_points), array(case["zero_point"]).astype(np.int32))
    else:
        assert q.zero_points is None
    want = array(case["dequantized"])
    assert np.array_equal(bits(q.dequantize(want.dtype)), bits(want))


CASES = [c for c in MANIFEST["cases"]]


@pytest.mark.parametrize("case", CASES, ids=[f"{c['case']}-{c['scheme']}" for c in CASES])
def test_compressed_tensors_case(case):
    w = array(case["input"])
    if "refusal" in case:
        with pytest.raises(Exception, match=case["refusal"]["message"]):
            lowbit.blocks.quantize(w, case["scheme"])
        return
    q = lowbit.blocks.quantize(w, case["scheme"])
    check(q, case)
    stored = q.storage()
    want = {t["name"]: array(t) for t in case["stored"]}
    assert list(stored) == list(want)
    for name, t in want.items():
        assert stored[name].dtype == t.dtype and stored[name].shape == t.shape
        assert stored[name].tobytes() == t.tobytes(), name
    check(lowbit.blocks.from_storage(want, case["scheme"], w.shape), case)


def test_cases_were_recorded():
    assert sum("refusal" not in c for c in CASES) > 50 and any("refusal" in c for c in CASES)
