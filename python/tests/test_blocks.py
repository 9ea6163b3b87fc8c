"""lowbit.blocks against the live implementations' outputs (tests/data/blocks, made by
scripts/gen_block_fixtures.py from torchao, ModelOpt, compressed-tensors and gguf) and against
blocks computed by hand. The fixture walk counts what it compared and fails on zero; every value
is compared bit for bit, NaN payloads and signs included (as tests/blocks_fixtures.rs does for
every case)."""

import json
import pathlib

import ml_dtypes
import numpy as np
import pytest

import lowbit
from lowbit import blocks

DATA = pathlib.Path(__file__).resolve().parents[2] / "tests" / "data" / "blocks"
NOT_OFFERED = set()  # every recorded scheme is offered
NUMPY = {"f32": np.float32, "bf16": ml_dtypes.bfloat16, "f16": np.float16, "u8": np.uint8, "u16": np.uint16}


def _array(path, spec):
    raw = path.read_bytes()[spec["offset"]:spec["offset"] + spec["nbytes"]]
    return np.frombuffer(raw, NUMPY[spec["dtype"]]).reshape(spec["shape"])


def _same(a, b):
    """float32 values bit for bit (NaN payloads and signs included)."""
    a, b = np.asarray(a, np.float32), np.asarray(b, np.float32)
    return bool(np.array_equal(a.view(np.uint32), b.view(np.uint32)))


def test_schemes_listed():
    names = [name for name, _ in blocks.SCHEMES]
    assert any(n.startswith("torchao:mxfp8e4m3") for n in names)
    assert "modelopt:nvfp4" in names and "compressed-tensors:nvfp4" in names and "compressed-tensors:mxfp4" in names
    assert all(source for _, source in blocks.SCHEMES)


def test_random_cases_bit_exact():
    """Every scheme's random-data cases (no NaN or infinity), every array, bit for bit."""
    manifest = json.loads((DATA / "manifest.json").read_text())
    inputs = DATA / manifest["inputs_file"]
    compared = 0
    for s in manifest["schemes"]:
        if s["scheme"] in NOT_OFFERED:
            continue
        for case in s["cases"]:
            if not case["case"].startswith("random") or "arrays" not in case:
                continue
            want = {k: _array(DATA / s["file"], v) for k, v in case["arrays"].items()}
            x = _array(inputs, manifest["inputs"][case["input"]])
            g = want["global_scale"][0] if "global_" in case["case"] else None
            q = blocks.quantize(x, s["scheme"], axis=s["axis"], global_scale=g)
            label = f'{s["scheme"]} {case["case"]}'
            assert q.elements.dtype == np.uint8 and q.elements.shape == x.shape, label
            assert np.array_equal(q.elements, want["elements"]), label
            scales = q.scales.view(np.uint16) if q.scales.dtype.itemsize == 2 else q.scales
            want_scales = want["scales"]
            if want_scales.dtype.itemsize == 2:
                want_scales = want_scales.view(np.uint16)
            if want_scales.dtype == np.float32:
                assert _same(scales, want_scales), label
            else:
                assert np.array_equal(scales.reshape(want_scales.shape), want_scales), label
            if "global_scale" in want:
                assert isinstance(q.global_scale, np.float32) and _same(q.global_scale, want["global_scale"][0]), label
            else:
                assert q.global_scale is None, label
            if "bytes" in want:
                packed = np.frombuffer(q.to_bytes(), np.uint8)
                assert np.array_equal(packed[:want["bytes"].size], want["bytes"].reshape(-1)), label
            assert _same(q.dequantize(), want["dequantized"]), label
            compared += x.size
    assert compared > 100_000, compared


def test_bfloat16_and_float16_inputs():
    x = (np.arange(64, dtype=np.float32) - 20.0) * 0.25
    for dtype in (ml_dtypes.bfloat16, np.float16):
        # These values are exact in both, so each gives what float32 gives.
        a = blocks.quantize(x.astype(dtype), "torchao:mxfp4,scale=floor") if dtype != np.float16 else None
        b = blocks.quantize(x.astype(dtype), "modelopt:nvfp4")
        ref = blocks.quantize(x, "modelopt:nvfp4")
        assert np.array_equal(b.elements, ref.elements) and np.array_equal(b.scales, ref.scales)
        if a is not None:
            assert np.array_equal(a.elements, blocks.quantize(x, "torchao:mxfp4,scale=floor").elements)
    with pytest.raises(lowbit.DTypeError):
        blocks.quantize(x.astype(np.float16), "torchao:mxfp4,scale=floor")  # torchao takes f32/bf16
    with pytest.raises(lowbit.DTypeError):
        blocks.quantize(x.astype(np.float64), "ggml:q8_0")


def test_ggml_q8_0_by_hand():
    # amax 127 -> d = 1.0 (float16 0x3C00); roundf ties away: 1.5 -> 2, 0.5 -> 1, -0.5 -> -1, 2.5 -> 3.
    x = np.zeros((1, 32), np.float32)
    x[0, :5] = [127.0, 1.5, 0.5, -0.5, 2.5]
    q = blocks.quantize(x, "ggml:q8_0")
    assert q.elements[0, :5].tolist() == [127, 2, 1, 0xFF, 3]
    assert q.scales.dtype == np.float16 and q.scales.shape == (1, 1) and q.scales.view(np.uint16)[0, 0] == 0x3C00
    data = q.to_bytes()
    # ggml's block_q8_0: d (float16, little-endian), then 32 int8.
    assert len(data) == 34 and data[:7] == bytes([0x00, 0x3C, 127, 2, 1, 0xFF, 3])
    back = blocks.from_bytes(data, "ggml:q8_0", (1, 32))
    assert np.array_equal(back.elements, q.elements)
    assert back.dequantize()[0, :5].tolist() == [127.0, 2.0, 1.0, -1.0, 3.0]
    # The arrays are what the tensor holds: changing them in place would not change it, so they
    # are read-only (from_arrays makes another tensor).
    with pytest.raises(ValueError):
        q.elements[0, 0] = 0
    with pytest.raises(ValueError):
        q.scales[0, 0] = 0


def test_nvfp4_global_conventions_and_arrays():
    # amax 5376: ModelOpt's decode scale 5376 / 2688 = 2, compressed-tensors' encode scale 0.5.
    x = np.zeros((2, 16), np.float32)
    x[0, 0] = 5376.0
    assert blocks.quantize(x, "modelopt:nvfp4").global_scale == np.float32(2.0)
    q = blocks.quantize(x, "compressed-tensors:nvfp4")
    assert q.global_scale == np.float32(0.5)
    # Block 1: 5376 / 6 * 0.5 = 448 (E4M3 0x7E); block 2 (zeros): 0 -> 0.125 (0x20).
    assert q.scales.reshape(-1).tolist() == [0x7E, 0x20]
    again = blocks.from_arrays(q.elements, q.scales, "compressed-tensors:nvfp4", global_scale=q.global_scale)
    assert _same(again.dequantize(), q.dequantize())
    assert again.dequantize(dtype=ml_dtypes.bfloat16).dtype == np.dtype(ml_dtypes.bfloat16)
    with pytest.raises(lowbit.Error):
        blocks.from_arrays(q.elements, q.scales[:, :0], "compressed-tensors:nvfp4")
    bad = q.elements.copy()
    bad[0, 0] = 0x10  # a bit above float4's width
    with pytest.raises(lowbit.Error):
        blocks.from_arrays(bad, q.scales, "compressed-tensors:nvfp4")


def test_refusals():
    with pytest.raises(lowbit.Error, match="divisible by block_size 32"):
        blocks.quantize(np.ones((2, 80), np.float32), "torchao:mxfp4,scale=floor")
    with pytest.raises(lowbit.Error):
        blocks.quantize(np.ones(32, np.float32), "ggml:q9_0")
    # A misspelt scheme is answered with the nearest ones.
    with pytest.raises(lowbit.Error, match=r"did you mean ggml:q4_0\?"):
        blocks.quantize(np.ones(32, np.float32), "ggml:q4k")
    with pytest.raises(lowbit.Error, match=r"did you mean torchao:mxfp4\?"):
        blocks.quantize(np.ones(32, np.float32), "torchao:mxfp9")


def test_empty_tensor():
    # compressed-tensors' per-tensor FP8 scale is max(|x|) by torch.aminmax, which raises on an
    # empty tensor; one scale per row gives empty arrays.
    with pytest.raises(lowbit.Error, match=r"fp8:tensor quantize: the tensor \(shape \[0, 4\]\) has no elements"):
        blocks.quantize(np.zeros((0, 4), np.float32), "fp8:tensor")
    q = blocks.quantize(np.zeros((0, 4), np.float32), "fp8:channel")
    assert q.elements.shape == (0, 4) and q.scales.shape == (0, 1)


def test_cublas_scale_layout_equals_torchaos_to_blocked():
    """The fixture recorded from torchao's to_blocked (scripts/gen_scale_layout_fixtures.py)."""
    record = json.loads((DATA.parent / "scale_layout" / "cublas128x4.json").read_text())
    compared = 0
    for case in record["cases"]:
        rows, cols = case["rows"], case["cols"]
        scales = ((7 * np.arange(rows * cols) + 3) % 256).astype(np.uint8).reshape(rows, cols)
        want = np.frombuffer(bytes.fromhex(case["swizzled"]), np.uint8)
        got = blocks.swizzle_scales(scales)
        assert got.dtype == np.uint8 and np.array_equal(got, want), (rows, cols)
        assert np.array_equal(blocks.unswizzle_scales(want, (rows, cols)), scales)
        compared += want.size
    assert compared > 10_000
    assert [name for name, _ in blocks.SCALE_LAYOUTS] == ["linear", "cublas128x4"]


def test_to_bytes_layout_round_trip():
    x = np.linspace(-3, 3, 130 * 64, dtype=np.float32).reshape(130, 64)
    q = blocks.quantize(x, "modelopt:nvfp4")
    linear, swizzled = q.to_bytes(), q.to_bytes(layout="cublas128x4")
    scales = q.scales.shape
    assert scales == (130, 4)
    start = 130 * 32  # packed E2M1 elements
    assert swizzled[:start] == linear[:start]
    assert swizzled[start:start + 256 * 4] == blocks.swizzle_scales(np.asarray(q.scales).view(np.uint8)).tobytes()
    assert swizzled[-4:] == linear[-4:]  # the per-tensor scale
    back = blocks.from_bytes(swizzled, "modelopt:nvfp4", (130, 64), layout="cublas128x4")
    assert np.array_equal(back.dequantize().view(np.uint32), q.dequantize().view(np.uint32))
    with pytest.raises(lowbit.Error, match="not a scale layout"):
        q.to_bytes(layout="cublas")
    with pytest.raises(lowbit.Error, match="one-byte scales"):
        blocks.quantize(np.ones(32, np.float32), "ggml:q8_0").to_bytes(layout="cublas128x4")


def test_from_bytes_reads_float16_scales_when_told():
    x = np.array([[1.0, -2.0]], np.float16)
    q = lowbit.blocks.quantize(x, "fp8:channel")
    assert q.scales.dtype == np.float16
    data = q.to_bytes()
    back = lowbit.blocks.from_bytes(data, "fp8:channel", (1, 2), scale_dtype=np.float16)
    assert back.scales.dtype == np.float16 and back.scales.tobytes() == q.scales.tobytes()
    assert back.dequantize().tobytes() == q.dequantize().tobytes()
    guessed = lowbit.blocks.from_bytes(data, "fp8:channel", (1, 2))
    assert guessed.scales.dtype == lowbit.blocks._SCALE_DTYPES["bfloat16"]
    with pytest.raises(lowbit.Error, match="not stored in the input's dtype"):
        lowbit.blocks.from_bytes(bytes(17), "ocp:mxfp8e4m3", (16,), scale_dtype="float16")
