"""lowbit.blocks' awq schemes against AutoAWQ 0.2.9's recorded cases (integer_cases.py), and the
shape of what Quantized and storage() hand back."""
import numpy as np
import pytest

import lowbit
from lowbit import blocks
from integer_cases import check


def test_recorded_autoawq_cases():
    compared, refused = check("awq")
    assert compared >= 10 and refused >= 3


def test_quantized_parts_and_storage_names():
    rng = np.random.default_rng(0)
    w = rng.standard_normal((64, 128)).astype(np.float16)
    q = blocks.quantize(w, "awq:int4,group=64")
    assert q.elements.shape == (64, 128) and q.elements.max() <= 15
    assert q.scales.dtype == np.float16 and q.scales.shape == (64, 2)
    assert q.g_idx is None
    stored = q.storage()
    assert list(stored) == ["qweight", "qzeros", "scales"]
    assert stored["qweight"].shape == (128, 8) and stored["qzeros"].shape == (2, 8)
    assert stored["scales"].shape == (2, 64)


def test_refusals():
    with pytest.raises(lowbit.Error):
        blocks.quantize(np.ones((16, 64), np.float16), "awq:int4,group=32")  # 16 output rows
    w = np.ones((32, 64), np.float32)
    w[0, 0], w[0, 1] = 40000.0, -40000.0
    with pytest.raises(lowbit.Error, match="row 0 group 0"):
        blocks.quantize(w, "awq:int4,group=32")
