"""lowbit.quantize_linear / dequantize_linear against hand values and onnx's ReferenceEvaluator,
and lowbit.mx against hand-computed blocks and numpy's own products."""

import warnings

import ml_dtypes
import numpy as np
import pytest
from onnx import TensorProto as T, helper
from onnx.reference import ReferenceEvaluator

import lowbit
from conftest import codes_of


def test_quantize_by_hand():
    x = np.array([1.0, 2.0, 300.0, -1.25, 1.25], np.float32)
    # x / 0.5 = 2, 4, 600, -2.5, 2.5; rounded to nearest even: 2, 4, 600, -2, 2; uint8 clamps 600
    # to 255 and -2 to 0; int8 clamps 600 to 127.
    assert lowbit.quantize_linear(x, 0.5).tolist() == [2, 4, 255, 0, 2]
    assert lowbit.quantize_linear(x, 0.5, np.int8(0)).tolist() == [2, 4, 127, -2, 2]
    # With a zero point of 10 (uint8): 12, 14, 255 (610 clamped), 8, 12.
    assert lowbit.quantize_linear(x, np.float32(0.5), np.uint8(10)).tolist() == [12, 14, 255, 8, 12]
    q = lowbit.quantize_linear(x, 0.5, output_dtype="int4")
    # int4 clamps to [-8, 7]: 2, 4, 7, -2, 2.
    assert q.dtype == np.dtype(ml_dtypes.int4) and q.tolist() == [2, 4, 7, -2, 2]
    # Packed: codes 2, 4, 7, 0xE, 2 -> 0x42, 0xE7, 0x02.
    assert lowbit.quantize_linear(x, 0.5, output_dtype="int4", packed=True).tobytes() == b"\x42\xe7\x02"
    assert lowbit.dequantize_linear(np.array([1, 2, 3], np.int8), 0.5).tolist() == [0.5, 1.0, 1.5]
    assert lowbit.dequantize_linear(q, np.float32(2.0)).tolist() == [4.0, 8.0, 14.0, -4.0, 4.0]


def _model(op, inputs, attrs, out_type, opset):
    node = helper.make_node(op, [n for n, _ in inputs], ["y"], **attrs)
    graph = helper.make_graph(
        [node],
        op,
        [helper.make_tensor_value_info(n, t, None) for n, t in inputs],
        [helper.make_tensor_value_info("y", out_type, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 13
    return model


def _onnx_type(a):
    return helper.np_dtype_to_tensor_dtype(a.dtype)


def reference(op, feeds, attrs, out_type, opset=25):
    inputs = [(n, _onnx_type(a)) for n, a in feeds.items()]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.asarray(ReferenceEvaluator(_model(op, inputs, attrs, out_type, opset)).run(None, feeds)[0])


RNG = np.random.default_rng(5)
X = (RNG.normal(size=(4, 6, 8)) * 6).astype(np.float32)
X.flat[:6] = [0.0, -0.0, 2.5, -2.5, 1e30, -1e30]

# (output type, zero point, extra attributes, scale shape)
QUANTIZE_CASES = [
    (T.UINT8, np.uint8(128), {}, ()),
    (T.INT8, np.int8(-3), {}, ()),
    (T.INT8, np.array([1, -2, 0, 3, 5, -7], np.int8), {"axis": 1}, (6,)),
    (T.UINT16, np.uint16(1000), {}, ()),
    (T.INT16, np.int16(0), {}, ()),
    (T.INT4, np.zeros((4, 6, 2), ml_dtypes.int4), {"axis": 2, "block_size": 4}, (4, 6, 2)),
    (T.UINT4, np.uint8(3).astype(ml_dtypes.uint4), {}, ()),
    (T.INT2, np.int8(0).astype(ml_dtypes.int2), {}, ()),
    (T.UINT2, np.uint8(1).astype(ml_dtypes.uint2), {}, ()),
    (T.FLOAT8E4M3FN, np.float32(0).astype(ml_dtypes.float8_e4m3fn), {"saturate": 1}, ()),
    (T.FLOAT8E4M3FN, np.float32(0).astype(ml_dtypes.float8_e4m3fn), {"saturate": 0}, ()),
    (T.FLOAT8E5M2, np.float32(0).astype(ml_dtypes.float8_e5m2), {"axis": 0}, (4,)),
    (T.FLOAT4E2M1, np.float32(0).astype(ml_dtypes.float4_e2m1fn), {}, ()),
]


@pytest.mark.parametrize("out_type,zero_point,attrs,scale_shape", QUANTIZE_CASES)
def test_quantize_linear_equals_onnx_reference(out_type, zero_point, attrs, scale_shape):
    scale = (RNG.uniform(0.05, 0.5, size=scale_shape)).astype(np.float32)
    zp = np.asarray(zero_point)
    if zp.shape != scale.shape:
        zp = np.broadcast_to(zp, scale.shape).copy() if scale.shape else zp
    expected = reference("QuantizeLinear", {"x": X, "y_scale": scale, "y_zero_point": zp}, attrs, out_type)
    got = lowbit.quantize_linear(
        X, scale, zp, axis=attrs.get("axis"), block_size=attrs.get("block_size"),
        saturate=attrs.get("saturate"), profile="onnx-reference",
    )
    assert got.dtype == expected.dtype and got.shape == X.shape
    assert np.array_equal(codes_of(out_type, got), codes_of(out_type, expected))


DEQUANTIZE_CASES = [
    (np.arange(-128, 128, dtype=np.int8).reshape(16, 16), np.int8(-5), {}, ()),
    (np.arange(256, dtype=np.uint8).reshape(16, 16), np.full(16, 7, np.uint8), {"axis": 1}, (16,)),
    (np.arange(16, dtype=np.uint8).view(ml_dtypes.int4).reshape(4, 4), np.zeros((4, 2), ml_dtypes.int4), {"axis": 1, "block_size": 2}, (4, 2)),
    (np.arange(256, dtype=np.uint8).view(ml_dtypes.float8_e4m3fn).reshape(16, 16), None, {}, ()),
    (np.arange(16, dtype=np.uint8).view(ml_dtypes.float4_e2m1fn), None, {}, ()),
]


@pytest.mark.parametrize("x,zero_point,attrs,scale_shape", DEQUANTIZE_CASES)
def test_dequantize_linear_equals_onnx_reference(x, zero_point, attrs, scale_shape):
    scale = RNG.uniform(0.05, 0.5, size=scale_shape).astype(np.float32)
    feeds = {"x": x, "x_scale": scale}
    if zero_point is not None:
        feeds["x_zero_point"] = np.asarray(zero_point)
    expected = reference("DequantizeLinear", feeds, attrs, T.FLOAT)
    got = lowbit.dequantize_linear(
        x, scale, zero_point, axis=attrs.get("axis"), block_size=attrs.get("block_size"), profile="onnx-reference"
    )
    assert got.dtype == np.float32 and got.shape == x.shape
    assert np.array_equal(got.view(np.uint32), expected.astype(np.float32).view(np.uint32))


def test_quantize_errors():
    x = np.ones((2, 4), np.float32)
    with pytest.raises(lowbit.Error, match="axis"):
        lowbit.quantize_linear(x, np.ones(3, np.float32), axis=1)
    with pytest.raises(lowbit.Error, match="DOUBLE"):
        lowbit.quantize_linear(x.astype(np.float64), np.float64(1.0))
    with pytest.raises(lowbit.Error, match="block_size"):
        lowbit.quantize_linear(x, np.ones((2, 4), np.float32), opset=19, block_size=1, axis=1)
    with pytest.raises(lowbit.DTypeError):
        lowbit.quantize_linear(np.array(["1"]), 1.0)


# ------------------------------------------------------------------------------------------------
# MX
# ------------------------------------------------------------------------------------------------


def test_mx_block_by_hand():
    x = np.linspace(-3, 3, 8, dtype=np.float32)  # -3, -15/7, -9/7, -3/7, 3/7, 9/7, 15/7, 3
    scales, elements = lowbit.mx.quantize(x, "mxfp4", block_size=4)
    # Block 1: max|V| = 3, floor(log2 3) = 1, FP4's emax = 2 (6 = 1.5 * 2^2): X = 2^(1-2) = 0.5.
    # V / X = -6, -4.29, -2.57, -0.86, rounded to FP4 (0, 0.5, 1, 1.5, 2, 3, 4, 6): -6, -4, -3, -1.
    # Block 2 mirrors it.
    assert scales.dtype == np.dtype(ml_dtypes.float8_e8m0fnu) and scales.tolist() == [0.5, 0.5]
    assert elements.dtype == np.dtype(ml_dtypes.float4_e2m1fn)
    assert elements.astype(np.float32).tolist() == [-6, -4, -3, -1, 1, 3, 4, 6]
    # E8M0 code of 0.5: 127 - 1 = 126.
    assert scales.view(np.uint8).tolist() == [126, 126]
    back = lowbit.mx.dequantize(elements, scales, "mxfp4", block_size=4)
    assert back.tolist() == [-3, -2, -1.5, -0.5, 0.5, 1.5, 2, 3]
    packed_scales, packed = lowbit.mx.quantize(x, "mxfp4", block_size=4, packed=True)
    assert np.array_equal(packed, lowbit.pack(elements))
    assert np.array_equal(lowbit.unpack(packed, "float4e2m1", 8).view(np.uint8), elements.view(np.uint8))


@pytest.mark.parametrize("fmt", lowbit.mx.FORMATS)
def test_mx_dequantize_is_scale_times_element(fmt):
    rng = np.random.default_rng(3)
    x = (rng.normal(size=(3, 64)) * 10).astype(np.float32)
    scales, elements = lowbit.mx.quantize(x, fmt, axis=-1)
    assert scales.shape == (3, 2) and elements.shape == x.shape
    assert elements.dtype == lowbit.mx.element_dtype(fmt)
    # The oracle: ml_dtypes decodes the element and the scale, numpy multiplies in float32 (exact
    # here: a power of two times a short significand, far from the limits). MXINT8's elements
    # carry an implicit 2^-6.
    implicit = np.float32(2.0**-6) if fmt == "mxint8" else np.float32(1)
    want = elements.astype(np.float32) * implicit * np.repeat(scales.astype(np.float32), 32, axis=1)
    got = lowbit.mx.dequantize(elements, scales, fmt)
    assert np.array_equal(got, want)
    # Every element is within half a step of the block's grid: |x - got| <= scale * step.
    assert np.all(np.abs(got - x) <= np.abs(x).max())


def test_mx_errors():
    x = np.ones(8, np.float32)
    with pytest.raises(lowbit.Error, match="mxfp4"):
        lowbit.mx.quantize(x, "mxfp5")
    with pytest.raises(lowbit.Error):
        lowbit.mx.quantize(x, "mxfp4", block_size=0)
    with pytest.raises(lowbit.Error, match="floor"):
        lowbit.mx.quantize(x, "mxfp4", scale_round="round")
    s, e = lowbit.mx.quantize(x, "mxfp8e4m3", block_size=4)
    with pytest.raises(lowbit.ShapeError, match=r"need scales of shape \(2,\)"):
        lowbit.mx.dequantize(e, s[:1], "mxfp8e4m3", block_size=4)
    with pytest.raises(lowbit.ShapeError, match="shape"):
        lowbit.mx.dequantize(e, s.reshape(2, 1), "mxfp8e4m3", block_size=4)
    with pytest.raises(lowbit.DTypeError, match="float4_e2m1fn"):
        lowbit.mx.dequantize(e, s, "mxfp4", block_size=4)
