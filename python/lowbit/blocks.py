"""Block-scaled recipes: MX in every scale mode, NVFP4, ggml blocks, FP8 blocks, each
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
per-tensor scale as float32) and ``dequantize(dtype=np.float32)``. The tensor itself stays in
Rust; ``scales`` are taken out at once, ``elements`` when first asked for, each once and
read-only (``from_arrays`` makes a new one from changed arrays).

ggml's block types of its table (``ggml:q4_k``, ``ggml:q2_k``, ``ggml:tq1_0``, ... as ``SCHEMES``
lists them) keep their scales inside the blocks: ``elements`` are the tensor's bytes as a GGUF
holds them (uint8, shape ``x.shape[:-1] + (bytes per row,)``), ``scales`` is empty, and
``quantize(x, "ggml:q4_k", imatrix=w)`` takes ggml's importance matrix (float32, one weight per
column of the last axis), as ``ggml_quantize_chunk`` does.

Integer and codebook weights (GPTQ, AWQ, compressed-tensors ``pack-quantized``, bitsandbytes
NF4/FP4, onnxruntime ``MatMulNBits``, MLX affine, as ``SCHEMES`` lists them) take a weight of shape
(out_features, in_features) grouped along its last axis: ``quantize(w, "gptq:int4,group=128",
g_idx=...)`` gives ``elements`` (the integer code of each element in the low bits: unsigned
0..2^b-1 where the scheme stores unsigned values, else two's complement; NF4/FP4: the 4-bit
index), ``scales`` as the producer stores them, ``zero_points`` (integer codes per group, or
None), ``g_idx``, ``dequantize(dtype)`` computed as the producer computes it in that dtype, and
``storage()``: the tensors exactly as the producer saves them, named as in its checkpoints without
the layer prefix; ``from_storage(tensors, scheme, shape)`` reads them back.

CPU ``torch.Tensor`` inputs are read in place as :func:`lowbit.cast` reads them; given a tensor,
``elements``, ``scales`` and ``dequantize()`` are tensors too (``out_type="numpy"`` keeps numpy,
``out_type="torch"`` asks for tensors from numpy input); ``global_scale`` stays a numpy float32.
"""

from __future__ import annotations

from typing import Any, Optional, Tuple

import numpy as np

from . import _native
from . import _dtypes
from . import _torch
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
    a = np.asarray(_torch.numpy_in(value), dtype=np.float32).reshape(-1)
    if a.size != 1:
        raise Error(f"global_scale is one value, not {a.size}")
    return float(a[0])


def _read_only(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


class Quantized:
    """A block-quantized tensor: element codes, scales and the per-tensor scale of a scheme."""

    __slots__ = ("scheme", "axis", "scales", "global_scale", "zero_points", "g_idx", "_native", "_torch_out",
                 "_elements")

    def __init__(self, native: Any, scheme: str, axis: int, torch_out: bool = False) -> None:
        self._native = native
        self._torch_out = torch_out
        self.scheme = scheme
        self.axis = axis
        kind, scale_bytes, scales_shape = native.scales()
        scales = scale_bytes.view(_SCALE_DTYPES[kind]).reshape(scales_shape)
        self.scales = _torch.out(scales, True) if torch_out else _read_only(scales)
        g = native.global_scale()
        self.global_scale = None if g is None else np.float32(g)
        z = native.zero_points()
        self.zero_points = None if z is None else self._out(z.reshape(self.scales.shape))
        gi = native.group_index()
        self.g_idx = None if gi is None else self._out(gi)
        # The element codes (one byte per element) are copied out of Rust when first asked for:
        # `to_bytes()` and `dequantize()` do not need them.
        self._elements: Any = None

    def _out(self, a: np.ndarray) -> Any:
        return _torch.out(a, True) if self._torch_out else _read_only(a)

    @property
    def elements(self) -> Any:
        """The element codes: uint8, one per element, the tensor's shape (read-only)."""
        if self._elements is None:
            shape = tuple(self._native.shape())
            if self._native.is_ggml_blocks():
                shape = shape[:-1] + (-1,)
            elements = self._native.elements().reshape(shape)
            self._elements = _torch.out(elements, True) if self._torch_out else _read_only(elements)
        return self._elements

    def to_bytes(self, layout: str = "linear") -> bytes:
        """The tensor in its scheme's storage layout; `layout` places one-byte scales as a
        kernel reads them (:data:`SCALE_LAYOUTS`: ``"cublas128x4"``, padded)."""
        return self._native.to_bytes(layout).tobytes()

    def storage(self) -> dict:
        """Integer and codebook schemes: the tensors the producer saves, by name (numpy arrays,
        or CPU tensors for torch input), in the producer's order."""
        out = {}
        for name, dtype, shape, data in self._native.storage():
            out[name] = _torch.out(data.view(_dtypes.numpy_dtype(dtype)).reshape(shape), self._torch_out)
        return out

    def dequantize(self, dtype: Any = np.float32) -> Any:
        """The values as the implementation dequantizes them (float32), cast to `dtype` (a numpy,
        ml_dtypes or torch dtype) by :func:`lowbit.cast` when another dtype is asked for.
        Integer and codebook schemes compute in `dtype` as their producer does."""
        if self._native.is_integer():
            target = _dtypes.resolve(_torch.dtype_in(dtype))
            data = self._native.dequantize_as(target)
            values = data.view(_dtypes.numpy_dtype(target)).reshape(tuple(self._native.shape()))
            return _torch.out(values, self._torch_out)
        # Filled in place: numpy's allocation (huge pages for large arrays), no copy.
        values = np.empty(tuple(self._native.shape()), dtype=np.float32)
        self._native.dequantize_into(values.reshape(-1))
        target = _torch.dtype_in(dtype)
        if np.dtype(target) != np.float32:
            from . import cast

            values = cast(values, target)
        return _torch.out(values, self._torch_out)

    def __repr__(self) -> str:
        return (f"Quantized(scheme={self.scheme!r}, shape={tuple(self._native.shape())}, "
                f"scales={tuple(self.scales.shape)} {self.scales.dtype}, global_scale={self.global_scale!r})")


def quantize(x: Any, scheme: str, *, axis: int = -1, global_scale: Any = None, imatrix: Any = None,
             g_idx: Any = None, out_type: Optional[str] = None) -> Quantized:
    """Quantizes `x` (numpy float32, float16 or ml_dtypes.bfloat16, or a CPU torch tensor of
    those) with `scheme` in blocks along `axis` (tiles: the last two axes). `global_scale`: the
    per-tensor scale of two-level recipes (None: computed as the implementation computes it).
    `imatrix`: ggml's importance matrix for ggml's block types (float32, one weight per column of
    the last axis; None: ggml's quantizer without one). `g_idx`: GPTQ act-order's group of each
    input column (int32)."""
    from . import _flat_bytes

    want_torch = _torch.wants_torch(out_type, x)
    a = np.asarray(_torch.numpy_in(x))
    name = _dtypes.of_array(a)
    shape = [int(d) for d in a.shape]
    w = None
    if imatrix is not None:
        w = np.asarray(_torch.numpy_in(imatrix))
        if w.dtype != np.float32:
            raise DTypeError(f"imatrix is float32, not {w.dtype}")
        w = np.ascontiguousarray(w).reshape(-1)
    gi = None
    if g_idx is not None:
        gi = np.ascontiguousarray(np.asarray(_torch.numpy_in(g_idx)))
        if gi.dtype.kind not in "iu":
            raise DTypeError(f"g_idx holds integers, not {gi.dtype}")
        gi = gi.astype(np.int32).reshape(-1)
    native = _native.blocks_quantize(_flat_bytes(a), name, shape, scheme, int(axis), _global(global_scale), w, gi)
    return Quantized(native, scheme, int(axis), want_torch)


def from_bytes(data: Any, scheme: str, shape: Any, *, axis: int = -1, layout: str = "linear",
               scale_dtype: Any = None, out_type: Optional[str] = None) -> Quantized:
    """The reverse of :meth:`Quantized.to_bytes` for a tensor of `shape` (`data`: bytes, a uint8
    array or a uint8 CPU tensor) whose scales are in `layout`. Schemes whose scales are in the
    input's dtype (``fp8:*``) cannot tell float16 from bfloat16 scales by their bytes: two-byte
    scales are read as bfloat16 unless `scale_dtype` (``np.float16``, ``"float16"``, ...) says."""
    from . import _as_bytes, _shape

    want_torch = _torch.wants_torch(out_type, data)
    dims = _shape(shape)
    d = None if scale_dtype is None else _dtypes.resolve(_torch.dtype_in(scale_dtype))
    native = _native.blocks_from_bytes(_as_bytes(_torch.numpy_in(data)), scheme, list(dims), int(axis), str(layout), d)
    return Quantized(native, scheme, int(axis), want_torch)


def from_storage(tensors: Any, scheme: str, shape: Any, *, out_type: Optional[str] = None) -> Quantized:
    """The reverse of :meth:`Quantized.storage`: `tensors` maps the producer's names (without the
    layer prefix) to numpy arrays or CPU tensors; `shape` is the weight's (out_features,
    in_features)."""
    from . import _shape

    want_torch = _torch.wants_torch(out_type, *tensors.values())
    parts = []
    for name, t in tensors.items():
        a = np.ascontiguousarray(_torch.numpy_in(t))
        parts.append((str(name), _dtypes.of_array(a), [int(d) for d in a.shape], a.reshape(-1).view(np.uint8)))
    native = _native.blocks_from_storage(parts, scheme, list(_shape(shape)))
    return Quantized(native, scheme, -1, want_torch)


def from_arrays(elements: Any, scales: Any, scheme: str, *, axis: int = -1,
                global_scale: Any = None, out_type: Optional[str] = None) -> Quantized:
    """A :class:`Quantized` from its arrays (element codes as uint8, scales as uint8 codes or
    float16/bfloat16/float32 values; numpy or CPU torch), every length and code checked."""
    want_torch = _torch.wants_torch(out_type, elements, scales)
    e = np.asarray(_torch.numpy_in(elements))
    if e.dtype != np.uint8 and e.dtype.itemsize == 1:
        e = e.view(np.uint8)
    if e.dtype != np.uint8:
        raise DTypeError(f"elements are uint8 codes, not {e.dtype}")
    s = np.ascontiguousarray(_torch.numpy_in(scales))
    native = _native.blocks_from_arrays(np.ascontiguousarray(e).reshape(-1), [int(d) for d in e.shape], _kind_of(s),
                                        s.reshape(-1).view(np.uint8), scheme, int(axis), _global(global_scale))
    return Quantized(native, scheme, int(axis), want_torch)


SCALE_LAYOUTS: Tuple[Tuple[str, str], ...] = tuple(tuple(s) for s in _native.blocks_scale_layouts())
"""Every layout of one-byte block scales: ``(name, source)``."""


def swizzle_scales(scales: Any, layout: str = "cublas128x4") -> np.ndarray:
    """A 2-D uint8 array of block scales (rows, scale columns; numpy or CPU torch) in `layout`:
    the padded bytes as the kernels read them (uint8, 1-D)."""
    s = np.asarray(_torch.numpy_in(scales))
    if s.dtype != np.uint8 and s.dtype.itemsize == 1:
        s = s.view(np.uint8)
    if s.dtype != np.uint8 or s.ndim != 2:
        raise DTypeError(f"scales are a 2-D uint8 array, not {s.ndim}-D {s.dtype}")
    rows, cols = (int(d) for d in s.shape)
    return _native.blocks_swizzle_scales(np.ascontiguousarray(s).reshape(-1), rows, cols, str(layout))


def unswizzle_scales(data: Any, shape: Any, layout: str = "cublas128x4") -> np.ndarray:
    """The reverse of :func:`swizzle_scales`: the (rows, scale columns) uint8 scales of `data`
    (bytes or a uint8 array holding the padded layout)."""
    from . import _as_bytes, _shape

    dims = _shape(shape)
    if len(dims) != 2:
        raise DTypeError(f"the scales' shape is 2-D (rows, scale columns), not {tuple(dims)}")
    rows, cols = (int(d) for d in dims)
    out = _native.blocks_unswizzle_scales(_as_bytes(_torch.numpy_in(data)), rows, cols, str(layout))
    return out.reshape(rows, cols)


__all__ = ["SCHEMES", "SCALE_LAYOUTS", "Quantized", "quantize", "from_bytes", "from_arrays", "swizzle_scales",
           "unswizzle_scales"]
