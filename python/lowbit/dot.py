"""Dot products and GEMMs of low-precision operands under an accumulation model
(``lowbit::dot``): every sum formed exactly and rounded by lowbit's rounding core only where the
model rounds.

Models: ``"exact"`` (one rounding at the end), ``"sequential-fp32"`` (each product rounded to
float32, then each partial sum, in index order; ``"sequential,format=F"`` for another format),
``"fma,format=F[,round=R]"`` (a fused multiply-add chain: ``acc = round(acc + a * b)``). A NaN
product, Inf x 0 or Inf - Inf gives the result type's default NaN; the chains start from +0.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _dtypes
from . import _native
from . import _torch
from ._errors import DTypeError, ShapeError


def _operand(x: Any) -> Any:
    """A block-scaled tensor's native object, or (codes, dtype, rows, k) of a 2-D array."""
    from .blocks import Quantized

    if isinstance(x, Quantized):
        shape = tuple(x._native.shape())
        if len(shape) != 2:
            raise ShapeError(f"a block-scaled operand is 2-D (rows x K), not of shape {shape}")
        return x._native, shape
    a = np.asarray(_torch.numpy_in(x))
    if a.ndim != 2:
        raise ShapeError(f"an operand is 2-D (rows x K), not {a.ndim}-D")
    return (np.ascontiguousarray(a).reshape(-1).view(np.uint8), _dtypes.of_array(a), a.shape[0], a.shape[1]), a.shape


def matmul_t(a: Any, b: Any, *, model: str = "exact", out_dtype: Any = "float32") -> np.ndarray:
    """``a @ b.T`` for `a` of shape (M, K) and `b` of shape (N, K), numpy arrays (or CPU torch
    tensors) of one dtype: float32/float16/bfloat16/float64, the ml_dtypes float8/float6/float4
    types, or integers; or :class:`lowbit.blocks.Quantized` tensors blocked along K (MX, NVFP4,
    FP8 with scales, ggml's Q8_0/Q4_0, ...; each element times its block's scale and per-tensor
    scale), in any mix. Accumulated under `model` (module docs; ``"sequential-fp32"`` sums each
    block in float32, then adds it times the two block scales) and rounded to `out_dtype` (a
    float dtype; nearest-even). Returns an (M, N) array of `out_dtype`."""
    from .blocks import Quantized

    if isinstance(a, Quantized) or isinstance(b, Quantized):
        (oa, sa), (ob, sb) = _operand(a), _operand(b)
        if sa[1] != sb[1]:
            raise ShapeError(f"a is {sa[0]} x {sa[1]} and b {sb[0]} x {sb[1]}: K differs")
        out = _dtypes.resolve(out_dtype)
        raw = _native.dot_matmul_operands(oa, ob, str(model), out)
        return raw.view(_dtypes.numpy_dtype(out)).reshape(sa[0], sb[0])
    x, y = np.asarray(_torch.numpy_in(a)), np.asarray(_torch.numpy_in(b))
    if x.ndim != 2 or y.ndim != 2:
        raise ShapeError(f"a and b are 2-D (M x K and N x K), not {x.ndim}-D and {y.ndim}-D")
    if x.shape[1] != y.shape[1]:
        raise ShapeError(f"a is {x.shape[0]} x {x.shape[1]} and b {y.shape[0]} x {y.shape[1]}: K differs")
    if x.dtype != y.dtype:
        raise DTypeError(f"a and b are of one dtype, not {x.dtype} and {y.dtype}")
    name = _dtypes.of_array(x)
    out = _dtypes.resolve(out_dtype)
    (m, k), n = x.shape, y.shape[0]
    raw = _native.dot_matmul_t(np.ascontiguousarray(x).reshape(-1).view(np.uint8),
                               np.ascontiguousarray(y).reshape(-1).view(np.uint8), name, m, n, k, str(model), out)
    return raw.view(_dtypes.numpy_dtype(out)).reshape(m, n)


__all__ = ["matmul_t"]
