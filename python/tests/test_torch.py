"""torch.Tensor in and out of lowbit.cast, pack, unpack, quantize_linear and lowbit.blocks
(lowbit/_torch.py).

torch is optional: these tests skip without it (docs/guide/python.md, "torch tensors": how to run them with torch
2.15.0). The import test runs everywhere."""

import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest

import lowbit


def test_importing_lowbit_does_not_import_torch():
    code = "import sys, lowbit; lowbit.cast([1.0], 'f16'); sys.exit(1 if 'torch' in sys.modules else 0)"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


try:
    import torch
except ImportError:
    torch = None

# Every test below needs torch; the module's other tests run without it.
needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed (docs/guide/python.md: torch tensors)")


def _bytes(t):
    return t.contiguous().view(torch.uint8).numpy().tobytes()


@needs_torch
def test_cast_to_a_torch_dtype_gives_a_tensor():
    t = torch.tensor([448.0, 480.0, 1e6, 2.5, 2.7, float("nan")])
    got = lowbit.cast(t, torch.float8_e4m3fn)
    assert isinstance(got, torch.Tensor) and got.dtype == torch.float8_e4m3fn and got.shape == t.shape
    # saturate=1: 448 = 1.75 * 2^8 = 0 1111 110; 480 and 1e6 saturate to it; 2.5 = 1.25 * 2 =
    # 0 1000 010; 2.7 rounds to 2.75 = 0 1000 011; NaN 0x7F.
    assert _bytes(got) == bytes([0x7E, 0x7E, 0x7E, 0x42, 0x43, 0x7F])
    as_numpy = lowbit.cast(t, "float8_e4m3fn", out_type="numpy")
    assert isinstance(as_numpy, np.ndarray) and as_numpy.dtype == np.dtype(ml_dtypes.float8_e4m3fn)
    assert as_numpy.view(np.uint8).tobytes() == _bytes(got)


@needs_torch
def test_a_contiguous_tensor_is_read_in_place():
    t = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    a = lowbit._torch.numpy_in(t)
    assert a.__array_interface__["data"][0] == t.data_ptr() and a.shape == (3, 4)
    t[0, 0] = 5.0  # the same memory
    assert a[0, 0] == 5.0


@needs_torch
def test_non_contiguous_tensors_and_every_torch_dtype_match_torch_itself():
    # profile="torch" is bit-exact with Tensor.to (tests/profiles_torch.rs); here through tensors:
    # every float16 pattern, transposed (non-contiguous), into each of torch's float8 types.
    x = torch.arange(1 << 16, dtype=torch.int32).to(torch.int16).view(torch.float16).reshape(256, 256).t()
    assert not x.is_contiguous()
    for to in (torch.float8_e4m3fn, torch.float8_e5m2, torch.float8_e4m3fnuz, torch.float8_e5m2fnuz,
               torch.float8_e8m0fnu, torch.bfloat16, torch.float32, torch.int8, torch.uint8, torch.bool):
        got = lowbit.cast(x, to, profile="torch")
        want = x.to(to)
        assert got.dtype == to and got.shape == want.shape
        assert _bytes(got) == _bytes(want), to


@needs_torch
def test_packed_float4_both_ways():
    # float4_e2m1fn_x2: two E2M1 codes per byte, the first in the low nibble. 0x21: 0x1 = 0.5,
    # 0x2 = 1.0; 0xA7: 0x7 = 6.0, 0xA = -1.0.
    packed = torch.tensor([0x21, 0xA7], dtype=torch.uint8).view(torch.float4_e2m1fn_x2)
    wide = lowbit.cast(packed, torch.float32)
    assert wide.shape == (4,) and wide.tolist() == [0.5, 1.0, 6.0, -1.0]
    back = lowbit.cast(wide, torch.float4_e2m1fn_x2)
    assert back.dtype == torch.float4_e2m1fn_x2 and back.shape == (2,) and _bytes(back) == bytes([0x21, 0xA7])
    with pytest.raises(lowbit.ShapeError, match="odd"):
        lowbit.cast(torch.ones(3), torch.float4_e2m1fn_x2)


@needs_torch
def test_pack_unpack_and_quantize_linear_take_tensors():
    raw = lowbit.pack(torch.tensor([1, -2, 3], dtype=torch.int8))
    assert raw.dtype == torch.uint8 and _bytes(raw) == bytes([0x01, 0xFE, 0x03])
    # bfloat16 1.0 = 0x3F80, -2.0 = 0xC000, little-endian.
    bf = lowbit.unpack(torch.tensor([0x80, 0x3F, 0x00, 0xC0], dtype=torch.uint8), torch.bfloat16, (2,))
    assert bf.dtype == torch.bfloat16 and bf.tolist() == [1.0, -2.0]
    # x / 0.5 rounded to nearest even, saturated to int8: 2, -2.6 -> -3, 200 -> 127.
    q = lowbit.quantize_linear(torch.tensor([1.0, -1.3, 100.0]), torch.tensor(0.5), torch.tensor(0, dtype=torch.int8))
    assert q.dtype == torch.int8 and q.tolist() == [2, -3, 127]
    assert isinstance(lowbit.quantize_linear(torch.tensor([1.0]), 0.5, np.int8(0), out_type="numpy"), np.ndarray)


@needs_torch
def test_what_torch_cannot_hold_is_refused_by_name():
    with pytest.raises(lowbit.DTypeError, match="complex64"):
        lowbit.cast(torch.zeros(2, dtype=torch.complex64), "f32")
    with pytest.raises(lowbit.DTypeError, match="out_type='numpy'"):
        lowbit.cast(torch.ones(2), "int4")
    assert lowbit.cast(torch.ones(2), "int4", out_type="numpy").dtype == np.dtype(ml_dtypes.int4)
    with pytest.raises(lowbit.Error, match="out_type"):
        lowbit.cast(torch.ones(2), "f16", out_type="jax")


@needs_torch
def test_blocks_quantize_takes_and_gives_tensors():
    # torchao MXFP4, scale=floor: amax 7 = 1.75 * 2^2, exponent 2 - emax 2 = 0: scale 2^0 (E8M0
    # 0x7F); 7 / 1 saturates to 6 (E2M1 code 7), 0.5 is code 1, -1.0 code 0xA.
    x = torch.zeros(2, 32)
    x[0, :3] = torch.tensor([7.0, 0.5, -1.0])
    q = lowbit.blocks.quantize(x, "torchao:mxfp4,scale=floor")
    assert isinstance(q.elements, torch.Tensor) and q.elements.dtype == torch.uint8 and q.elements.shape == (2, 32)
    assert q.elements[0, :3].tolist() == [7, 1, 0xA] and int(q.elements[1].sum()) == 0
    # The zero block: floor of the exponent field 0 minus 2, clamped to -127: code 0.
    assert q.scales.dtype == torch.uint8 and q.scales.tolist() == [[0x7F], [0x00]]
    assert q.global_scale is None
    back = q.dequantize()
    assert isinstance(back, torch.Tensor) and back.dtype == torch.float32
    assert back[0, :3].tolist() == [6.0, 0.5, -1.0] and back[1].abs().sum().item() == 0.0
    assert q.dequantize(dtype=torch.bfloat16).dtype == torch.bfloat16
    as_numpy = lowbit.blocks.quantize(x, "torchao:mxfp4,scale=floor", out_type="numpy")
    assert isinstance(as_numpy.elements, np.ndarray) and isinstance(as_numpy.dequantize(), np.ndarray)


@needs_torch
def test_blocks_read_non_contiguous_bfloat16_tensors():
    # A transposed bfloat16 tensor quantizes as its contiguous copy does, and as the same values
    # from numpy (ml_dtypes.bfloat16) do.
    x = (torch.arange(64 * 32, dtype=torch.float32).reshape(64, 32) / 7 - 100).to(torch.bfloat16).t()
    assert not x.is_contiguous()
    got = lowbit.blocks.quantize(x, "torchao:nvfp4")
    dense = lowbit.blocks.quantize(x.contiguous(), "torchao:nvfp4")
    from_numpy = lowbit.blocks.quantize(x.contiguous().view(torch.int16).numpy().view(ml_dtypes.bfloat16),
                                        "torchao:nvfp4")
    assert torch.equal(got.elements, dense.elements) and torch.equal(got.scales, dense.scales)
    assert got.elements.numpy().tobytes() == from_numpy.elements.tobytes()


@needs_torch
def test_blocks_from_arrays_and_from_bytes_take_tensors():
    # E2M1 code 7 (6.0) and 0xA (-1.0) under the E8M0 scale 0x80 = 2^1: 12 and -2.
    elements = torch.zeros(1, 32, dtype=torch.uint8)
    elements[0, :2] = torch.tensor([7, 0xA], dtype=torch.uint8)
    scales = torch.tensor([[0x80]], dtype=torch.uint8).view(torch.float8_e8m0fnu)
    q = lowbit.blocks.from_arrays(elements, scales, "torchao:mxfp4,scale=floor")
    values = q.dequantize()
    assert isinstance(values, torch.Tensor) and values[0, :3].tolist() == [12.0, -2.0, 0.0]
    # ggml's block_q8_0 as a uint8 tensor: d = float16 2.0 (0x4000, little-endian), then 32 int8:
    # 3 and -4 (0xFC) give 6 and -8.
    raw = torch.tensor([0x00, 0x40, 3, 0xFC] + [0] * 30, dtype=torch.uint8)
    g = lowbit.blocks.from_bytes(raw, "ggml:q8_0", (1, 32))
    assert isinstance(g.elements, torch.Tensor) and g.scales.dtype == torch.float16
    assert g.dequantize()[0, :3].tolist() == [6.0, -8.0, 0.0]
    with pytest.raises(lowbit.Error, match="CPU"):
        lowbit.blocks.quantize(torch.zeros(1, 32, device="meta"), "ggml:q8_0")
