"""The recorded producer cases of an integer family (manifest.json and data.bin under
tests/data/integer/gptq and tests/data/integer/awq, recorded from the live producer by
scripts/gen_integer_gptq_fixtures.py) read for the Python tests of lowbit.blocks."""
import json
import pathlib

import ml_dtypes
import numpy as np

DATA = pathlib.Path(__file__).resolve().parents[2] / "tests" / "data" / "integer"
NUMPY = {"FLOAT": np.float32, "FLOAT16": np.float16, "BFLOAT16": ml_dtypes.bfloat16, "INT32": np.int32}


def cases(family):
    """(case, input array, g_idx or None, tensors {name: array} or None, float16 values or None)."""
    manifest = json.loads((DATA / family / "manifest.json").read_text())
    data = (DATA / family / "data.bin").read_bytes()

    def blob(at):
        return data[at[0]:at[0] + at[1]]

    for case in manifest["cases"]:
        x = np.frombuffer(blob(case["input"]), dtype=NUMPY[case["dtype"]]).reshape(case["shape"])
        g_idx = None if case["g_idx"] is None else np.asarray(case["g_idx"], dtype=np.int32)
        if "refusal" in case:
            yield case, x, g_idx, None, None
            continue
        tensors = {t["name"]: np.frombuffer(blob(t["data"]), dtype=NUMPY[t["dtype"]]).reshape(t["shape"])
                   for t in case["tensors"]}
        values = np.frombuffer(blob(case["dequantized_float16"]), dtype=np.float16).reshape(case["shape"])
        yield case, x, g_idx, tensors, values


def check(family):
    """Every case through lowbit.blocks, bit for bit; returns (compared, refused)."""
    import lowbit
    from lowbit import blocks

    compared = refused = 0
    for case, x, g_idx, tensors, values in cases(family):
        label = f"{case['scheme']} {case['name']}"
        if tensors is None:
            try:
                blocks.quantize(x, case["scheme"], g_idx=g_idx)
            except lowbit.Error:
                refused += 1
                continue
            raise AssertionError(f"{label}: the producer raised {case['refusal']}, lowbit quantized")
        q = blocks.quantize(x, case["scheme"], g_idx=g_idx)
        stored = q.storage()
        assert list(stored) == list(tensors), label
        for name, t in tensors.items():
            assert stored[name].dtype == t.dtype and stored[name].shape == t.shape, (label, name)
            assert stored[name].tobytes() == t.tobytes(), (label, name)
        got = q.dequantize(dtype=np.float16)
        assert got.shape == values.shape and got.tobytes() == values.tobytes(), label
        back = blocks.from_storage(tensors, case["scheme"], list(x.shape))
        assert back.dequantize(dtype=np.float16).tobytes() == values.tobytes(), label
        assert np.array_equal(back.elements, q.elements), label
        assert np.array_equal(back.zero_points, q.zero_points), label
        compared += 1
    assert compared > 0
    return compared, refused
