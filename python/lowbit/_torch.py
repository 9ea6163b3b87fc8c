"""PyTorch tensors in and out of lowbit's array functions, without importing torch.

A tensor can only exist once its caller imported torch, so torch is looked up in ``sys.modules``
and never imported here: ``import lowbit`` does not load torch. A CPU tensor becomes a numpy
array over the same memory (``tensor.view(torch.uint8).numpy()``, then numpy's view of the dtype):
no copy of a contiguous input; a non-contiguous one is made contiguous first (one copy).
``torch.float4_e2m1fn_x2`` is packed E2M1, two elements per byte with the first in the low nibble
(as ONNX's FLOAT4E2M1 raw_data and torchao's ``pack_uint4``): its shape ``(..., k)`` holds
``(..., 2k)`` elements, which are unpacked (one byte each) for lowbit's functions and packed back
for a torch result. Results go back to torch the same way, without a copy.
"""

from __future__ import annotations

import sys
from typing import Any, Optional

import ml_dtypes
import numpy as np

from ._errors import DTypeError, Error

# torch's dtypes by their attribute name, and the numpy/ml_dtypes dtype with the same codes.
_NUMPY_OF = {
    "float64": np.dtype(np.float64),
    "float32": np.dtype(np.float32),
    "float16": np.dtype(np.float16),
    "bfloat16": np.dtype(ml_dtypes.bfloat16),
    "float8_e4m3fn": np.dtype(ml_dtypes.float8_e4m3fn),
    "float8_e5m2": np.dtype(ml_dtypes.float8_e5m2),
    "float8_e4m3fnuz": np.dtype(ml_dtypes.float8_e4m3fnuz),
    "float8_e5m2fnuz": np.dtype(ml_dtypes.float8_e5m2fnuz),
    "float8_e8m0fnu": np.dtype(ml_dtypes.float8_e8m0fnu),
    "int8": np.dtype(np.int8),
    "int16": np.dtype(np.int16),
    "int32": np.dtype(np.int32),
    "int64": np.dtype(np.int64),
    "uint8": np.dtype(np.uint8),
    "uint16": np.dtype(np.uint16),
    "uint32": np.dtype(np.uint32),
    "uint64": np.dtype(np.uint64),
    "bool": np.dtype(np.bool_),
}
_FLOAT4 = np.dtype(ml_dtypes.float4_e2m1fn)
_PACKED_FLOAT4 = "float4_e2m1fn_x2"
_OUT_TYPES = (None, "numpy", "torch")


def _torch() -> Any:
    return sys.modules.get("torch")


def is_tensor(x: Any) -> bool:
    """Whether `x` is a torch.Tensor (False whenever torch was never imported)."""
    torch = _torch()
    return torch is not None and isinstance(x, torch.Tensor)


def _name(dtype: Any) -> str:
    return str(dtype).rsplit(".", 1)[-1]


def wants_torch(out_type: Optional[str], *inputs: Any) -> bool:
    """Whether a function's result goes back to torch: `out_type` ``"torch"``, or None with a
    tensor among `inputs`."""
    if out_type not in _OUT_TYPES:
        raise Error(f"out_type must be None, 'numpy' or 'torch', not {out_type!r}")
    if out_type == "torch":
        if _torch() is None:
            import torch  # noqa: F401  (asked for explicitly)
        return True
    return out_type is None and any(is_tensor(x) for x in inputs)


def dtype_in(to: Any) -> Any:
    """A torch dtype as the numpy/ml_dtypes dtype lowbit names (float4_e2m1fn_x2: FLOAT4E2M1);
    anything else unchanged."""
    torch = _torch()
    if torch is None or not isinstance(to, torch.dtype):
        return to
    name = _name(to)
    if name == _PACKED_FLOAT4:
        return _FLOAT4
    if name not in _NUMPY_OF:
        raise DTypeError(f"torch.{name} has no lowbit dtype; lowbit takes torch's {', '.join(_NUMPY_OF)} and "
                         f"{_PACKED_FLOAT4}")
    return _NUMPY_OF[name]


def numpy_in(x: Any) -> Any:
    """A CPU tensor as a numpy array over its memory (a non-contiguous one copied first; packed
    float4 unpacked); anything else unchanged."""
    if not is_tensor(x):
        return x
    torch = _torch()
    if x.device.type != "cpu":
        raise Error(f"lowbit reads CPU tensors; this one is on {x.device} (move it with .cpu())")
    name = _name(x.dtype)
    if name != _PACKED_FLOAT4 and name not in _NUMPY_OF:
        raise DTypeError(f"torch.{name} has no lowbit dtype; lowbit takes torch's {', '.join(_NUMPY_OF)} and "
                         f"{_PACKED_FLOAT4}")
    t = x.detach()
    if not t.is_contiguous():
        t = t.contiguous()
    shape = tuple(t.shape)
    raw = t.reshape(-1).view(torch.uint8).numpy()
    if name == _PACKED_FLOAT4:
        from . import unpack

        return unpack(raw, _FLOAT4, shape[:-1] + (2 * shape[-1],) if shape else (2,))
    return raw.view(_NUMPY_OF[name]).reshape(shape)


def _torch_dtype_of(d: np.dtype) -> Any:
    torch = _torch()
    for name, candidate in _NUMPY_OF.items():
        if candidate == d:
            return getattr(torch, name)
    return None


def out(result: np.ndarray, want_torch: bool) -> Any:
    """`result` as a tensor over the same memory when `want_torch` (FLOAT4E2M1 packed into
    float4_e2m1fn_x2); else `result`."""
    if not want_torch:
        return result
    torch = _torch()
    a = np.ascontiguousarray(result)
    if a.dtype == _FLOAT4:
        if a.ndim == 0 or a.shape[-1] % 2:
            raise _odd_float4_error(a.shape)
        from . import pack

        packed = torch.from_numpy(pack(a)).view(getattr(torch, _PACKED_FLOAT4))
        return packed.reshape(a.shape[:-1] + (a.shape[-1] // 2,))
    target = _torch_dtype_of(a.dtype)
    if target is None:
        raise DTypeError(f"torch has no dtype for {a.dtype}: pass out_type='numpy' to get the numpy array")
    flat = torch.from_numpy(a.reshape(-1).view(np.uint8))
    return flat.view(target).reshape(a.shape)


def _odd_float4_error(shape: Any) -> Error:
    """torch.float4_e2m1fn_x2 holds pairs along the last axis."""
    from ._errors import ShapeError

    return ShapeError(f"a float4_e2m1fn_x2 tensor holds pairs along the last axis; shape {tuple(shape)} has an odd "
                      f"last axis (pass out_type='numpy')")
