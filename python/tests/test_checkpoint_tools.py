"""lowbit.checkpoint.quantize / which / convert: the committed producer-made fixtures
(tests/fixtures/checkpoints/quantize, made by scripts/crosscheck_checkpoint_quantize.py
--write-fixtures with compressed-tensors 0.20.0, nvidia-modelopt 0.47.0 and gguf 0.19.0) are
reproduced byte for byte and named; hand-built blocks give hand-computed bytes."""

import pathlib

import numpy as np
import pytest

import lowbit
import lowbit.checkpoint

safetensors_numpy = pytest.importorskip("safetensors.numpy", reason="the safetensors package (0.8.0) is not installed")

REPO = pathlib.Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "checkpoints" / "quantize"


@pytest.mark.parametrize("scheme, producer", [
    ("compressed-tensors:nvfp4", "compressed-tensors-nvfp4"),
    ("modelopt:nvfp4", "modelopt-nvfp4"),
    ("fp8:channel", "compressed-tensors-fp8-channel"),
])
def test_quantize_reproduces_the_producers_file(tmp_path, scheme, producer):
    report = lowbit.checkpoint.quantize(FIXTURES / "original", scheme, tmp_path / "out")
    quantized = sorted(t["name"] for t in report["tensors"] if t["quantized"])
    assert quantized == ["model.layers.0.mlp.up_proj.weight", "model.layers.0.self_attn.o_proj.weight"]
    ours = lowbit.checkpoint.open(tmp_path / "out")
    theirs = lowbit.checkpoint.open(FIXTURES / producer)
    compared = 0
    for w in theirs.weights():
        if w["scheme"] is None:
            continue
        for name in w["tensors"]:
            assert ours[name].tobytes() == theirs[name].tobytes(), name
            compared += 1
    assert compared >= 4


def test_which_names_the_producer():
    found = lowbit.checkpoint.which(FIXTURES / "modelopt-nvfp4", FIXTURES / "original")
    assert found["exact"]
    assert found["summary"].startswith("this file was made by modelopt:nvfp4 (nvidia-modelopt 0.47.0), 100.000 %")
    assert [w["stored_scheme"] for w in found["weights"]] == ["modelopt:nvfp4", "modelopt:nvfp4"]


def test_convert_gpt_oss_to_ggml_hand_computed(tmp_path):
    # gpt-oss MXFP4: E2M1 codes 2, 4, 9, 7 (1.0, 2.0, -0.5, 6.0), two a byte low nibble first;
    # scale E8M0 127. ggml's block: the scale byte, then element j | element j + 16 << 4.
    blocks = np.zeros((1, 1, 16), np.uint8)
    blocks[0, 0, :2] = [0x42, 0x79]
    (tmp_path / "src").mkdir()
    safetensors_numpy.save_file({"w_blocks": blocks, "w_scales": np.array([[127]], np.uint8)},
                                str(tmp_path / "src" / "model.safetensors"))
    written = lowbit.checkpoint.convert(tmp_path / "src", "ggml", tmp_path / "w.gguf")
    assert written == [str(tmp_path / "w.gguf")]
    gguf = pytest.importorskip("gguf", reason="the gguf package (0.19.0) is not installed")
    t = gguf.GGUFReader(str(tmp_path / "w.gguf")).tensors[0]
    assert bytes(np.asarray(t.data).reshape(-1)) == bytes([127, 2, 4, 9, 7] + [0] * 12)


def test_convert_refuses_what_the_target_cannot_hold(tmp_path):
    blocks = np.zeros((1, 1, 16), np.uint8)
    blocks[0, 0, 2] = 0x80  # element 5: code 8, -0.0; ggml decodes code 8 as +0
    (tmp_path / "src").mkdir()
    safetensors_numpy.save_file({"w_blocks": blocks, "w_scales": np.array([[127]], np.uint8)},
                                str(tmp_path / "src" / "model.safetensors"))
    with pytest.raises(lowbit.Error, match="element 5"):
        lowbit.checkpoint.convert(tmp_path / "src", "ggml", tmp_path / "w.gguf")
    assert not (tmp_path / "w.gguf").exists()


def test_which_and_convert_take_only_and_skip(tmp_path):
    found = lowbit.checkpoint.which(FIXTURES / "modelopt-nvfp4", FIXTURES / "original", only="up_proj")
    assert [w["name"] for w in found["weights"]] == ["model.layers.0.mlp.up_proj.weight"]
    found = lowbit.checkpoint.which(FIXTURES / "modelopt-nvfp4", FIXTURES / "original", skip="up_proj")
    assert [w["name"] for w in found["weights"]] == ["model.layers.0.self_attn.o_proj.weight"]
    # Two gpt-oss weights; the one left out is copied as stored, not converted: to a GGUF, whose
    # types hold no UINT8 tensor, that is refused naming it; to compressed-tensors it is copied.
    good = np.zeros((1, 1, 16), np.uint8)
    bad = good.copy()
    bad[0, 0, 2] = 0x80
    (tmp_path / "src").mkdir()
    safetensors_numpy.save_file({"a_blocks": good, "a_scales": np.array([[127]], np.uint8),
                                 "b_blocks": bad, "b_scales": np.array([[127]], np.uint8)},
                                str(tmp_path / "src" / "model.safetensors"))
    with pytest.raises(lowbit.Error, match="element 5"):
        lowbit.checkpoint.convert(tmp_path / "src", "ggml", tmp_path / "all.gguf")
    with pytest.raises(lowbit.Error, match="b_blocks"):
        lowbit.checkpoint.convert(tmp_path / "src", "ggml", tmp_path / "a.gguf", skip="^b")
    lowbit.checkpoint.convert(tmp_path / "src", "compressed-tensors", tmp_path / "ct", only="^a")
    out = lowbit.checkpoint.open(tmp_path / "ct")
    assert out["b_blocks"].tobytes() == bad.tobytes()
    names = [t["name"] for t in out.tensors()]
    assert "a_blocks" not in names and any(n.startswith("a") and n.endswith("packed") for n in names), names
    with pytest.raises(lowbit.Error, match="regular expression|regex"):
        lowbit.checkpoint.convert(tmp_path / "src", "ggml", tmp_path / "x.gguf", only="(")
