"""Block-scaled recipes (issue 26): MX in every scale mode, NVFP4, ggml blocks, FP8 blocks, each
exactly as the implementation that made the weights computes it (``lowbit::quant::blocks``).

``SCHEMES`` lists the scheme names with their sources, e.g. ``torchao:mxfp4,scale=rceil``,
``modelopt:nvfp4``, ``compressed-tensors:nvfp4``, ``ggml:q8_0``, ``deepseek:fp8,tile=1x128``,
``fp8:channel``, ``ocp:mxfp8e4m3``.

``quantize(x, scheme)`` gives a :class:`Quantized`: ``elements`` (uint8, one code per element, x's
shape: the ONNX code of the element type; ggml Q8_0 the int8 byte, Q4_0 the stored nibble),
``scales`` (uint8 codes for E8M0/E4M3/UE4M3 scales, float16/float32/bfloat16 values for float
scales; x's shape with the blocked axis divided by the block, rounded up; tiles divide both
axes), ``global_scale`` (numpy float32 or None), ``to_bytes()`` (the scheme's storage layout:
ggml's block structs, otherwise the elements packed as ONNX packs them, then the scales, then the
per-tensor scale as float32) and ``dequantize(dtype=np.float32)``.
"""

from __future__ import annotations

from typing import Any, Optional, Tuple

import numpy as np

from . import _native
from . import _dtypes
from ._errors import DTypeError, Error

#: Every scheme family (with its options) and the implementation it reproduces.
SCHEMES: Tuple[Tuple[str, str], ...] = tuple(tuple(s) for s in _native.blocks_schemes())

_SCALE_DTYPES = {
    "codes": np.dtype(np.uint8),
    "float16": np.dtype(np.float16),
    "float32": np.dtype(np.float32),
    "bfloat16": _dtypes.numpy_dtype("BFLOAT16"),
}


def _kind_of(scales: np.ndarray) -> str:
    for kind, d in _SCALE_DTYPES.items():
        if scales.dtype == d:
            return kind
    # ml_dtypes' E8M0 and E4M3 arrays hold the codes as their bytes.
    if scales.dtype.itemsize == 1:
        return "codes"
    raise DTypeError(f"scales must be uint8 codes, float16, bfloat16 or float32, not {scales.dtype}")


def _global(value: Any) -> Optional[float]:
    if value is None:
        return None
    a = np.asarray(value, dtype=np.float32).reshape(-1)
    if a.size != 1:
        raise Error(f"global_scale is one value, not {a.size}")
    return float(a[0])


class Quantized:
    """A block-quantized tensor: element codes, scales and the per-tensor scale of a scheme."""

    __slots__ = ("scheme", "axis", "elements", "scales", "global_scale")

    def __init__(self, scheme: str, axis: int, elements: np.ndarray, scales: np.ndarray,
                 global_scale: Optional[np.float32]) -> None:
        self.scheme = scheme
        self.axis = axis
        self.elements = elements
        self.scales = scales
        self.global_scale = global_scale

    @classmethod
    def _from_parts(cls, scheme: str, axis: int, shape: Tuple[int, ...], parts: Any) -> "Quantized":
        elements, kind, scale_bytes, scales_shape, global_scale = parts
        scales = scale_bytes.view(_SCALE_DTYPES[kind]).reshape(scales_shape)
        g = None if global_scale is None else np.float32(global_scale)
        return cls(scheme, axis, elements.reshape(shape), scales, g)

    def _parts(self) -> Tuple[np.ndarray, list, str, np.ndarray, str, int, Optional[float]]:
        scales = np.ascontiguousarray(self.scales)
        kind = _kind_of(scales)
        return (
            np.ascontiguousarray(self.elements, dtype=np.uint8).reshape(-1),
            [int(d) for d in self.elements.shape],
            kind,
            scales.reshape(-1).view(np.uint8),
            self.scheme,
            self.axis,
            _global(self.global_scale),
        )

    def to_bytes(self) -> bytes:
        """The tensor in its scheme's storage layout."""
        return _native.blocks_to_bytes(*self._parts()).tobytes()

    def dequantize(self, dtype: Any = np.float32) -> np.ndarray:
        """The values as the implementation dequantizes them (float32), cast to `dtype` by
        :func:`lowbit.cast` when another float dtype is asked for."""
        values = _native.blocks_dequantize(*self._parts()).reshape(self.elements.shape)
        if np.dtype(dtype) == np.float32:
            return values
        from . import cast

        return cast(values, dtype)

    def __repr__(self) -> str:
        return (f"Quantized(scheme={self.scheme!r}, shape={tuple(self.elements.shape)}, "
                f"scales={tuple(self.scales.shape)} {self.scales.dtype}, global_scale={self.global_scale!r})")


def quantize(x: Any, scheme: str, *, axis: int = -1, global_scale: Any = None) -> Quantized:
    """Quantizes `x` (numpy float32, float16 or ml_dtypes.bfloat16) with `scheme` in blocks
    along `axis` (tiles: the last two axes). `global_scale`: the per-tensor scale of two-level
    recipes (None: computed as the implementation computes it)."""
    from . import _flat_bytes

    a = np.asarray(x)
    name = _dtypes.of_array(a)
    shape = tuple(int(d) for d in a.shape)
    parts = _native.blocks_quantize(_flat_bytes(a), name, list(shape), scheme, int(axis), _global(global_scale))
    return Quantized._from_parts(scheme, int(axis), shape, parts)


def from_bytes(data: Any, scheme: str, shape: Any, *, axis: int = -1) -> Quantized:
    """The reverse of :meth:`Quantized.to_bytes` for a tensor of `shape`."""
    from . import _as_bytes, _shape

    dims = _shape(shape)
    parts = _native.blocks_from_bytes(_as_bytes(data), scheme, list(dims), int(axis))
    return Quantized._from_parts(scheme, int(axis), dims, parts)


def from_arrays(elements: Any, scales: Any, scheme: str, *, axis: int = -1,
                global_scale: Any = None) -> Quantized:
    """A :class:`Quantized` from its arrays (element codes as uint8, scales as uint8 codes or
    float16/bfloat16/float32 values), every length and code checked."""
    e = np.asarray(elements)
    if e.dtype != np.uint8 and e.dtype.itemsize == 1:
        e = e.view(np.uint8)
    if e.dtype != np.uint8:
        raise DTypeError(f"elements are uint8 codes, not {e.dtype}")
    s = np.asarray(scales)
    q = Quantized(scheme, int(axis), e, s, None if global_scale is None else np.float32(_global(global_scale)))
    parts = _native.blocks_from_arrays(*q._parts())
    return Quantized._from_parts(scheme, int(axis), tuple(int(d) for d in e.shape), parts)


__all__ = ["SCHEMES", "Quantized", "quantize", "from_bytes", "from_arrays"]

