"""lowbit.blocks' gptq schemes against GPTQModel 7.7.0's recorded cases (integer_cases.py), and the
shape of what Quantized and storage() hand back."""
import numpy as np
import pytest

import lowbit
from lowbit import blocks
from integer_cases import check


def test_recorded_gptqmodel_cases():
    compared, refused = check("gptq")
    assert compared >= 20 and refused >= 1


def test_quantized_parts_and_storage_names():
    rng = np.random.default_rng(0)
    w = rng.standard_normal((64, 128)).astype(np.float16)
    q = blocks.quantize(w, "gptq:int4,group=32,asym")
    assert q.elements.dtype == np.uint8 and q.elements.shape == (64, 128) and q.elements.max() <= 15
    assert q.scales.dtype == np.float16 and q.scales.shape == (64, 4)
    assert q.zero_points.shape == (64, 4) and q.zero_points.dtype == np.int32
    stored = q.storage()
    assert list(stored) == ["qweight", "qzeros", "scales", "g_idx"]
    assert stored["qweight"].dtype == np.int32 and stored["qweight"].shape == (16, 64)
    assert stored["qzeros"].shape == (4, 8) and stored["scales"].shape == (4, 64)
    assert np.array_equal(stored["g_idx"], np.arange(128, dtype=np.int32) // 32)
    # float32 values are the float16 values widened: GPTQModel dequantizes in float16.
    assert np.array_equal(q.dequantize(dtype=np.float32), q.dequantize(dtype=np.float16).astype(np.float32))


def test_actorder_keeps_g_idx():
    rng = np.random.default_rng(1)
    w = rng.standard_normal((32, 64)).astype(np.float32)
    g_idx = (rng.permutation(64) // 16).astype(np.int32)
    q = blocks.quantize(w, "gptq:int4,group=16,actorder", g_idx=g_idx)
    assert np.array_equal(q.g_idx, g_idx)
    assert np.array_equal(q.storage()["g_idx"], g_idx)


def test_refusals():
    w = np.ones((32, 64), dtype=np.float32)
    w[3, 7] = np.nan
    with pytest.raises(lowbit.Error, match=r"weight\[3, 7\]"):
        blocks.quantize(w, "gptq:int4,group=32")
    with pytest.raises(lowbit.Error):
        blocks.quantize(np.ones((32, 64), np.float32), "gptq:int4,group=12")
    with pytest.raises(lowbit.Error):
        blocks.quantize(np.ones((32, 64), np.float32), "gptq:int4,group=32", g_idx=np.zeros(64, np.int32))
