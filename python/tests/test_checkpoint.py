"""lowbit.checkpoint against the producers' own readers and writers: the safetensors package
(0.8.0) and gguf-py (0.19.0), files written by them at test time and the committed fixtures
(tests/fixtures/checkpoints, made by scripts/gen_checkpoint_fixtures.py with torch and gguf-py),
and hand-built files with hand-computed values. Expected values never come from lowbit."""

import json
import pathlib
import struct
import subprocess

import ml_dtypes
import numpy as np
import pytest

import lowbit
import lowbit.checkpoint
from lowbit_binary import lowbit_binary

safetensors_numpy = pytest.importorskip("safetensors.numpy", reason="the safetensors package (0.8.0) is not installed")
gguf = pytest.importorskip("gguf", reason="the gguf package (0.19.0) is not installed")

REPO = pathlib.Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "checkpoints"


def _binary():
    return lowbit_binary(("release", "debug"))


def test_safetensors_written_by_the_package_read_back_zero_copy(tmp_path):
    tensors = {
        "f32": np.array([[1.5, -2.0], [0.0, 3.25]], np.float32),
        "f16": np.array([65504.0, -0.0], np.float16),
        "f64": np.array([1e300], np.float64),
        "i64": np.array([-(2**62), 7], np.int64),
        "u16": np.array([65535], np.uint16),
        "flag": np.array([True, False]),
        "empty": np.zeros((0, 3), np.float32),
    }
    path = tmp_path / "m.safetensors"
    safetensors_numpy.save_file(tensors, str(path), metadata={"format": "np"})
    ckpt = lowbit.checkpoint.open(path)
    assert ckpt.container == "safetensors"
    assert sorted(ckpt) == sorted(tensors)
    for name, want in tensors.items():
        got = ckpt[name]
        assert got.dtype == want.dtype and got.shape == want.shape, name
        assert got.tobytes() == want.tobytes(), name
        assert ckpt.scheme(name) is None
    # A view of the mapped file, not a copy.
    assert not ckpt["f32"].flags.owndata and not ckpt["f32"].flags.writeable


def test_torch_fixture_values():
    # plain.safetensors was written by safetensors.torch (torch 2.15.0); the values are torch's own.
    expected = json.loads((FIXTURES / "plain.expected.json").read_text())
    ckpt = lowbit.checkpoint.open(FIXTURES / "plain.safetensors")
    dtypes = {"float8_e4m3fn": ml_dtypes.float8_e4m3fn, "float8_e5m2": ml_dtypes.float8_e5m2,
              "float8_e8m0fnu": ml_dtypes.float8_e8m0fnu, "bfloat16": ml_dtypes.bfloat16}
    assert sorted(ckpt) == sorted(expected)
    for name, want in expected.items():
        got = ckpt[name]
        assert list(got.shape) == want["shape"], name
        if want["dtype"] in dtypes:
            assert got.dtype == dtypes[want["dtype"]], name
        np.testing.assert_array_equal(got.astype(np.float64).ravel(), np.array(want["values"]), err_msg=name)
        np.testing.assert_array_equal(ckpt.dequantize(name).astype(np.float64).ravel(), np.array(want["values"]), err_msg=name)


def test_lowbit_output_reads_in_the_safetensors_package(tmp_path):
    binary = _binary()
    if binary is None:
        pytest.skip("no lowbit binary built in this checkout (cargo build --release)")
    out = tmp_path / "out.safetensors"
    subprocess.run([str(binary), "checkpoint", "dequantize", str(FIXTURES / "plain.safetensors"), "--out", str(out)], check=True)
    loaded = safetensors_numpy.load_file(str(out))
    expected = json.loads((FIXTURES / "plain.expected.json").read_text())
    for name, want in expected.items():
        values = np.array(want["values"])
        if want["dtype"] in ("int64", "uint8", "bool"):
            # Not floats: copied in their own dtype.
            assert loaded[name].dtype == {"int64": np.int64, "uint8": np.uint8, "bool": np.bool_}[want["dtype"]]
        else:
            assert loaded[name].dtype == np.float32, name
        np.testing.assert_array_equal(loaded[name].astype(np.float64).ravel(), values, err_msg=name)


def test_sharded_fixture():
    ckpt = lowbit.checkpoint.open(FIXTURES / "sharded")
    np.testing.assert_array_equal(ckpt["a.weight"], np.arange(6, dtype=np.float32).reshape(2, 3))
    np.testing.assert_array_equal(ckpt["b.weight"], np.array([1.5, -2.0], np.float16))
    assert ckpt["b.bias"].tolist() == [7]
    assert len({t["file"] for t in ckpt.tensors()}) == 2


def test_gguf_written_by_gguf_py_reads_and_dequantizes_as_gguf_py(tmp_path):
    rng = np.random.default_rng(5)
    x = (rng.standard_normal((3, 96)) * 4).astype(np.float32)
    path = tmp_path / "m.gguf"
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_uint32("test.count", 3)
    quantized = {}
    for name, qtype in [("q8_0", gguf.GGMLQuantizationType.Q8_0), ("q4_0", gguf.GGMLQuantizationType.Q4_0),
                        ("mxfp4", gguf.GGMLQuantizationType.MXFP4)]:
        q = gguf.quants.quantize(x, qtype)
        writer.add_tensor(name, q, raw_shape=q.shape, raw_dtype=qtype)
        quantized[name] = (q, qtype)
    writer.add_tensor("f16", x.astype(np.float16))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    ckpt = lowbit.checkpoint.open(path)
    assert ckpt.container == "gguf"
    reader = gguf.GGUFReader(str(path))
    for t in reader.tensors:
        # The same bytes where gguf-py's reader finds them, shape in numpy order.
        assert ckpt[t.name].tobytes() == np.asarray(t.data).tobytes(), t.name
    for name, (q, qtype) in quantized.items():
        assert ckpt.scheme(name) == f"ggml:{name}"
        got = ckpt.dequantize(name)
        want = gguf.quants.dequantize(q, qtype).reshape(x.shape).astype(np.float32)
        assert got.shape == x.shape
        assert got.tobytes() == want.tobytes(), name
    np.testing.assert_array_equal(ckpt["f16"], x.astype(np.float16))


def test_gguf_fixture_nvfp4_matches_gguf_py():
    ckpt = lowbit.checkpoint.open(FIXTURES / "ggml.gguf")
    expected = safetensors_numpy.load_file(str(FIXTURES / "ggml.expected.safetensors"))
    for name, want in expected.items():
        assert ckpt.dequantize(name).tobytes() == want.tobytes(), name
    # And against gguf-py run now on the same blocks.
    raw = ckpt["nvfp4"]
    live = gguf.quants.dequantize(raw.reshape(2, 72), gguf.GGMLQuantizationType.NVFP4).reshape(2, 128)
    assert ckpt.dequantize("nvfp4").tobytes() == live.astype(np.float32).tobytes()


def test_hand_built_gpt_oss_and_bad_files(tmp_path):
    # gpt-oss MXFP4: bytes 0x21 (E2M1 0.5 low nibble, 1.0 high), E8M0 scale 128 (x2).
    path = tmp_path / "g.safetensors"
    safetensors_numpy.save_file({"w_blocks": np.full((1, 1, 16), 0x21, np.uint8), "w_scales": np.array([[128]], np.uint8)}, str(path))
    ckpt = lowbit.checkpoint.open(path)
    assert ckpt.scheme("w") == "ocp:mxfp4" and ckpt.scheme("w_scales") == "ocp:mxfp4"
    assert ckpt.weights()[0]["convention"] == "gpt-oss mxfp4"
    np.testing.assert_array_equal(ckpt.dequantize("w"), np.array([[1.0, 2.0] * 16], np.float32))
    # A header length past the end: FileError naming the byte.
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(struct.pack("<Q", 1000) + b"{}")
    with pytest.raises(lowbit.FileError, match="at byte 0: the header length 1000 runs past the end"):
        lowbit.checkpoint.open(bad)
    with pytest.raises(KeyError):
        ckpt.dequantize("missing")


def test_gguf_written_by_lowbit_reads_back_in_gguf_py(tmp_path):
    """lowbit.checkpoint.write_gguf's file through gguf-py's GGUFReader: the same names, types,
    shapes, bytes and metadata, and gguf-py's dequantize of each block tensor equals its
    dequantize of the blocks its own quantizer made."""
    rng = np.random.default_rng(11)
    x = (rng.standard_normal((4, 64)) * 3).astype(np.float32)
    tensors, quantized = {}, {}
    for name, qtype in [("q8_0", gguf.GGMLQuantizationType.Q8_0), ("q4_0", gguf.GGMLQuantizationType.Q4_0),
                        ("mxfp4", gguf.GGMLQuantizationType.MXFP4)]:
        q = gguf.quants.quantize(x, qtype)
        tensors[f"blk.{name}"] = (qtype.name, x.shape, q)
        quantized[f"blk.{name}"] = (q, qtype)
    tensors["f32"] = ("F32", x.shape, x)
    tensors["f16"] = ("F16", (2, 64), x[:2].astype(np.float16))
    path = tmp_path / "lowbit.gguf"
    lowbit.checkpoint.write_gguf(path, tensors, {"general.name": "lowbit round trip"})
    reader = gguf.GGUFReader(str(path))
    field = reader.get_field("general.name")
    assert bytes(field.parts[field.data[0]]).decode() == "lowbit round trip"
    read = {t.name: t for t in reader.tensors}
    assert sorted(read) == sorted(tensors)
    for name, (ggml_type, shape, data) in tensors.items():
        t = read[name]
        assert t.tensor_type.name == ggml_type, name
        # gguf-py's shape is innermost first; the logical shape reversed.
        assert [int(d) for d in t.shape] == list(reversed(shape)), name
        assert np.asarray(t.data).tobytes() == data.tobytes(), name
    for name, (q, qtype) in quantized.items():
        got = gguf.quants.dequantize(np.asarray(read[name].data), qtype).reshape(x.shape)
        want = gguf.quants.dequantize(q, qtype).reshape(x.shape)
        assert got.tobytes() == want.tobytes(), name
        # And lowbit reads its own file as gguf-py decodes it.
        assert lowbit.checkpoint.open(path).dequantize(name).tobytes() == want.astype(np.float32).tobytes(), name
    # A wrong byte count: an error, and nothing left behind.
    bad = tmp_path / "bad.gguf"
    with pytest.raises(lowbit.Error):
        lowbit.checkpoint.write_gguf(bad, {"t": ("F32", (3,), np.zeros(2, np.float32))})
    assert not bad.exists()
