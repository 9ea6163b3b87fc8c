"""OCP Microscaling (MX v1.0): blocks of elements (32 by default) sharing one power-of-two scale
stored as FLOAT8E8M0.

``quantize`` returns ``(scales, elements)`` laid out as the inputs of an ONNX
``DequantizeLinear`` with a float8e8m0 scale and ``block_size`` (for the float formats):
``scales`` has the input's shape with the blocked axis ``ceil(len / block_size)`` long,
``elements`` the input's shape. The rules (scale ``2^(floor(log2(max|V|)) - emax)``, a NaN or
infinity in a block gives the NaN scale, elements rounded to nearest even and clamped) are the
crate's ``lowbit::quant::mx``.
"""

from __future__ import annotations

import math
from typing import Any, Tuple

import numpy as np

from . import _native
from . import _dtypes
from ._errors import DTypeError, ShapeError

#: The MX format names: ``mxfp8e4m3``, ``mxfp8e5m2``, ``mxfp6e2m3``, ``mxfp6e3m2``, ``mxfp4``,
#: ``mxint8``.
FORMATS: Tuple[str, ...] = tuple(_native.mx_formats())

#: Elements per block of every concrete MX format of the spec.
DEFAULT_BLOCK_SIZE = 32


def element_dtype(format: str) -> np.dtype:
    """The numpy/ml_dtypes dtype of a format's elements (``float8_e4m3fn`` for ``mxfp8e4m3``,
    ``float4_e2m1fn`` for ``mxfp4``, ``int8`` for ``mxint8``, ...)."""
    return _dtypes.numpy_dtype(_native.mx_element_dtype(format))


def quantize(
    x: Any,
    format: str,
    *,
    block_size: int = DEFAULT_BLOCK_SIZE,
    axis: int = -1,
    scale_round: str = "floor",
    packed: bool = False,
) -> Tuple[np.ndarray, np.ndarray]:
    """Quantizes `x` (float32, float16 or bfloat16) to MX `format` in blocks of `block_size`
    along `axis` (negative counts from the end). `scale_round`: ``"floor"`` (the spec) or
    ``"ceil"`` (the smallest scale with nothing clamped).

    Returns ``(scales, elements)``: scales as ``ml_dtypes.float8_e8m0fnu``, elements in the
    format's element dtype (:func:`element_dtype`), or with ``packed=True`` as ONNX raw_data bytes
    (flat uint8; :func:`lowbit.unpack` reads them)."""
    from . import _flag, _flat_bytes

    a = np.asarray(x)
    name = _dtypes.of_array(a)
    shape = [int(d) for d in a.shape]
    scales_shape = _native.mx_scales_shape(shape, axis, block_size)
    element_name = _native.mx_element_dtype(format)
    packed = _flag(packed, "packed")
    n = math.prod(shape)
    scales = np.empty(math.prod(scales_shape), np.uint8)
    elements = np.empty(_native.buffer_size(element_name, n, not packed), np.uint8)
    _native.mx_quantize_into(
        _flat_bytes(a), name, shape, format, block_size, axis, scale_round, scales, elements, not packed
    )
    scales = scales.view(_dtypes.numpy_dtype("FLOAT8E8M0")).reshape(scales_shape)
    if packed:
        return scales, elements
    return scales, elements.view(_dtypes.numpy_dtype(element_name)).reshape(shape)


def dequantize(
    elements: Any,
    scales: Any,
    format: str,
    *,
    block_size: int = DEFAULT_BLOCK_SIZE,
    axis: int = -1,
) -> np.ndarray:
    """The float32 values ``scale * element`` of MX `elements` (in the format's element dtype)
    with their `scales` (``float8_e8m0fnu``, or uint8 codes), as :func:`quantize` lays them out."""
    from . import _flat_bytes, _from_native

    e = np.asarray(elements)
    s = np.asarray(scales)
    element_name = _native.mx_element_dtype(format)
    if _dtypes.of_array(e) != element_name:
        raise DTypeError(f"{format} elements are {_dtypes.numpy_dtype(element_name)}, not {e.dtype}")
    if s.dtype not in (_dtypes.numpy_dtype("FLOAT8E8M0"), np.dtype(np.uint8)):
        raise DTypeError(f"MX scales are float8_e8m0fnu (or uint8 codes), not {s.dtype}")
    shape = [int(d) for d in e.shape]
    want = tuple(_native.mx_scales_shape(shape, axis, block_size))
    if s.shape != want:
        raise ShapeError(
            f"the scales have shape {s.shape}, but elements of shape {tuple(shape)} in blocks of {block_size} "
            f"along axis {axis} need scales of shape {want}"
        )
    n = math.prod(shape)
    out = np.empty(4 * n, np.uint8)
    _native.mx_dequantize_into(
        _flat_bytes(e),
        shape,
        _flat_bytes(s),
        format,
        block_size,
        axis,
        out,
        element_name in _dtypes.SUB_BYTE,
    )
    return _from_native(out, "FLOAT", tuple(shape), False)


__all__ = ["FORMATS", "DEFAULT_BLOCK_SIZE", "element_dtype", "quantize", "dequantize"]
