"""lowbit.vectors(scheme=...) and lowbit.check(dump, scheme=...): block-unit vectors and the
block dump check."""

import numpy as np
import pytest

import lowbit

MXFP4 = "torchao:mxfp4,scale=floor"


def test_vectors_as_arrays():
    v = lowbit.vectors(scheme=MXFP4, count=40, seed=2)
    assert v["inputs"].shape == (40, 32) and v["inputs"].dtype == np.uint32
    assert v["elements"].shape == (40, 32) and v["elements"].dtype == np.uint8
    assert v["values"].shape == (40, 32) and v["scale"].shape == (40,)
    assert v["global_scale"] is None
    # The all-zero block first: amax 0 has the float32 exponent -127, minus E2M1's largest
    # exponent 2 is -129, clamped to -127: the E8M0 code 0; every element +0 (code 0).
    assert v["case"][0] == "all zero"
    assert v["scale"][0] == 0 and not v["elements"][0].any() and not v["values"][0].any()
    nvfp4 = lowbit.vectors(scheme="modelopt:nvfp4", count=20)
    assert nvfp4["inputs"].shape == (20, 16) and nvfp4["global_scale"].shape == (20,)
    # The edge blocks take the per-tensor scale 1.0 (float32 bits 0x3F800000).
    assert nvfp4["global_scale"][0] == 0x3F800000


def test_round_trip_and_a_planted_fault():
    text = lowbit.vectors(scheme=MXFP4, count=40, seed=2, layout="testfloat")
    r = lowbit.check(text, scheme=MXFP4)
    assert (r["checked"], r["mismatches"], r["skipped"]) == (40, 0, 1)
    assert r["report"].endswith("40 checked, 0 mismatches (1 comment, blank or header line skipped)")
    lines = text.splitlines()
    last = lines[-1]
    lines[-1] = last[:-2] + ("01" if last[-2:] != "01" else "00")
    r = lowbit.check("\n".join(lines), scheme=MXFP4)
    assert (r["checked"], r["mismatches"]) == (40, 1)
    assert r["element_index"][31] == 1 and sum(r["elements"].values()) == 1
    assert r["shown"][0].startswith("line 41: element 31 expected")


def test_dequantize_direction_with_bfloat16_input(tmp_path):
    scheme = "compressed-tensors:nvfp4"
    text = lowbit.vectors(scheme=scheme, input="bfloat16", direction="dequantize", count=30, layout="csv")
    assert text.startswith("global,scale,e0,")
    path = tmp_path / "dump.csv"
    path.write_text(text)
    r = lowbit.check(path, scheme=scheme, input="bfloat16", direction="dequantize")
    assert (r["checked"], r["mismatches"]) == (30, 0)


def test_empty_dumps_and_bad_lines_raise():
    with pytest.raises(lowbit.Error, match="holds no case to check"):
        lowbit.check("# nothing\n", scheme="ggml:q8_0")
    assert lowbit.check("# nothing\n", scheme="ggml:q8_0", allow_empty=True)["checked"] == 0
    with pytest.raises(lowbit.Error, match="line 2: column 1: x0"):
        lowbit.check("# c\nZZ\n", scheme="ggml:q8_0")
    with pytest.raises(lowbit.Error, match="takes no from_ or to"):
        lowbit.vectors("f32", "e4m3", scheme="ggml:q8_0")
