"""lowbit: bit-exact ONNX casts, quantization and verification vectors on numpy arrays.

The Rust crate lowbit is the reference for low-precision numerics: ONNX ``Cast`` between every
pair of data types (float8 in four variants, saturating or not, float6, float4, the MX scale
E8M0, bfloat16, float16, int4/uint4/int2/uint2, integers, bool, strings), with every case where
implementations disagree decided by a profile (``PROFILES``): ``spec`` (the ONNX text, rounded
once), ``onnx-reference`` (onnx's ReferenceEvaluator), ``onnxruntime`` and more.

Arrays are numpy arrays; the narrow types are ml_dtypes' dtypes (``ml_dtypes.float8_e4m3fn``,
``ml_dtypes.int4``, ...), which hold one element per byte. ``packed=True`` gives (and
:func:`unpack` reads) the ONNX ``raw_data`` layout instead: two int4 per byte, four int2 per byte,
four float6 per three bytes.

Casts run the Rust library's plans (a conversion resolved once, then run over the buffer with no
per-element dispatch, kept between calls) on the numpy buffer itself, with the GIL released
(above 16,384 elements: below, releasing it costs more than the conversion).
"""

from __future__ import annotations

import math as _math
import operator as _operator
import os as _os
import sys as _sys
from typing import Any as _Any, Dict as _Dict, List as _List, Optional as _Optional, Sequence as _Sequence, Tuple as _Tuple, Union as _Union

import numpy as _np

from . import _native
from . import _torch
from ._dtypes import DESCRIBED as _DESCRIBED, NUMPY as _NUMPY, SUB_BYTE as _SUB_BYTE, described_numpy_dtype as _described_numpy_dtype, is_described as _is_described
from ._dtypes import format_of_array as _format_of_array, numpy_dtype as _numpy_dtype, of_array as _of_array
from ._dtypes import resolve as _resolve, resolve_format as _resolve_format
from ._errors import DTypeError, Error, FileError, InternalError, ParseError, ShapeError

# numpy's element layout is the ONNX one (little-endian), so a result can be written in place.
_LITTLE_ENDIAN = _sys.byteorder == "little"

__version__: str = _native.__version__

#: Every profile name lowbit knows, in the crate's order (``spec`` first, the default).
PROFILES: _Tuple[str, ...] = tuple(_native.profiles())

#: Every ONNX dtype name, in ONNX number order (``UNDEFINED`` is 0).
DTYPES: _Tuple[str, ...] = tuple(_native.dtype_names())

__all__ = [
    "PROFILES",
    "DTYPES",
    "cast",
    "pack",
    "unpack",
    "quantize_linear",
    "dequantize_linear",
    "mx",
    "blocks",
    "dot",
    "convert",
    "checkpoint",
    "vectors",
    "check",
    "sweep",
    "info",
    "onnx_name",
    "numpy_dtype",
    "Error",
    "DTypeError",
    "ShapeError",
    "ParseError",
    "FileError",
    "InternalError",
]


# ------------------------------------------------------------------------------------------------
# helpers
# ------------------------------------------------------------------------------------------------


def _flag(value: _Any, name: str) -> bool:
    """A boolean option: True/False or the ONNX attribute's 1/0."""
    if isinstance(value, (bool, _np.bool_)):
        return bool(value)
    if isinstance(value, (int, _np.integer)) and int(value) in (0, 1):
        return bool(value)
    raise Error(f"{name} must be True or False (or 1 or 0), not {value!r}")


def _shape(shape: _Any) -> _Tuple[int, ...]:
    """A shape: an int or a sequence of non-negative ints."""
    dims = (shape,) if isinstance(shape, (int, _np.integer)) else tuple(shape)
    out = []
    for d in dims:
        if not isinstance(d, (int, _np.integer)) or isinstance(d, (bool, _np.bool_)):
            raise ShapeError(f"shape {shape!r}: dimension {d!r} is not an integer")
        out.append(int(d))
    # Negative dimensions: the library's check, as the command line's.
    return tuple(_native.check_shape(out))


def _little_endian(a: _np.ndarray) -> _np.ndarray:
    """`a` C-contiguous with little-endian elements (lowbit's layout); no copy when it already is."""
    a = _np.ascontiguousarray(a)
    order = a.dtype.byteorder
    if order == ">" or (order == "=" and _sys.byteorder == "big"):
        a = a.astype(a.dtype.newbyteorder("<"))
    return a


def _flat_bytes(a: _np.ndarray) -> _np.ndarray:
    """The elements of `a` as one flat uint8 view (a copy only if `a` is not contiguous or not
    little-endian)."""
    return _little_endian(a).reshape(-1).view(_np.uint8)


def _as_bytes(buf: _Any) -> _np.ndarray:
    """A bytes-like object or a uint8 array as a flat uint8 array (no copy)."""
    if isinstance(buf, _np.ndarray):
        if buf.dtype != _np.uint8:
            raise DTypeError(f"packed data must be uint8 (ONNX raw_data), not {buf.dtype}")
        return _np.ascontiguousarray(buf).reshape(-1)
    try:
        return _np.frombuffer(buf, dtype=_np.uint8)
    except TypeError:
        raise Error(f"packed data must be bytes, bytearray, memoryview or a uint8 array, not {type(buf).__name__}") from None


def _from_native(out: _np.ndarray, name: str, shape: _Tuple[int, ...], packed: bool) -> _np.ndarray:
    """A result buffer as the array the caller gets: the raw bytes (`packed`), or a view with the
    numpy dtype of `name` in `shape`."""
    if packed:
        return out
    result = out.view(_numpy_dtype(name)).reshape(shape)
    if _sys.byteorder == "big" and result.dtype.itemsize > 1:
        result = result.view(result.dtype.newbyteorder("<")).astype(result.dtype)
    return result


def _texts(a: _np.ndarray) -> _List[str]:
    texts = a.reshape(-1).tolist()
    out = []
    for i, t in enumerate(texts):
        if isinstance(t, str):
            out.append(t)
        elif isinstance(t, bytes):
            out.append(t.decode("utf-8"))
        else:
            raise DTypeError(f"element {i} of a string array is {type(t).__name__}, not str or bytes")
    return out


def _string_array(texts: _Sequence[str], shape: _Tuple[int, ...]) -> _np.ndarray:
    out = _np.empty(len(texts), dtype=object)
    out[:] = texts
    return out.reshape(shape)


def _format(x: _Any) -> str:
    """A verification format: a name or description as given, or a dtype's ONNX name."""
    return x if isinstance(x, str) else _resolve(x)


# ------------------------------------------------------------------------------------------------
# names
# ------------------------------------------------------------------------------------------------


def onnx_name(dtype: _Any) -> str:
    """The ONNX name (``"FLOAT8E4M3FN"``) of a dtype given as an ONNX name, a lowbit name or alias
    (``"e4m3fn"``, ``"bf16"``), an ml_dtypes name (``"float8_e4m3fn"``), an ONNX number (17), or
    a numpy / ml_dtypes dtype or type (``ml_dtypes.float8_e4m3fn``, ``np.float32``).

    Strings are read by lowbit first, so ``"float"`` is ONNX FLOAT (float32), then by numpy
    (``"f4"``). Raises :class:`DTypeError` (with every valid name) for an unknown one."""
    return _resolve(dtype)


def numpy_dtype(dtype: _Any) -> _np.dtype:
    """The numpy or ml_dtypes dtype that holds `dtype` (any spelling :func:`onnx_name` takes);
    ``object`` for STRING."""
    return _numpy_dtype(_resolve(dtype))


# ------------------------------------------------------------------------------------------------
# cast, pack, unpack
# ------------------------------------------------------------------------------------------------


def cast(
    x: _Any,
    to: _Any,
    *,
    saturate: _Optional[bool] = None,
    round_mode: str = "up",
    profile: str = "spec",
    threads: _Optional[int] = None,
    packed: bool = False,
    out_type: _Optional[str] = None,
) -> _np.ndarray:
    """ONNX ``Cast(to)`` of every element of `x`, bit-exact under `profile`.

    `x`: a numpy array (or anything ``np.asarray`` takes) of a castable dtype: float32/64,
    float16, ml_dtypes' bfloat16, float8_*, float6_*, float4_e2m1fn, float8_e8m0fnu, int4, uint4,
    int2, uint2, the integers, bool, or strings (``str``/``bytes``/``object`` arrays).

    `to`: an ONNX name (``"FLOAT8E4M3FN"``), a lowbit name or alias (``"float8e4m3fn"``,
    ``"e4m3fn"``), an ml_dtypes name (``"float8_e4m3fn"``), an ONNX number, or a numpy/ml_dtypes
    dtype (see :func:`onnx_name`); or a format description (``"e4m3,special=ieee"``, see
    :func:`info`) or one of ml_dtypes' types that are no ONNX type (``float8_e4m3``,
    ``float8_e3m4``, ``float8_e4m3b11fnuz``), on either side: that conversion follows IEEE rules
    (nearest even, rounded once, NaN payloads kept where both sides have them), and a described
    result without an ml_dtypes type holds its codes as uint8/16/32. Those three ml_dtypes types
    under ``profile="ml-dtypes"`` or ``"xla"`` follow that profile's rows instead (bit-exact with
    ``astype`` and with XLA; bool allowed on the other side). ml_dtypes' ``int1`` and ``uint1``
    are named integer types, taken and returned as ml_dtypes arrays (one code per byte; with
    ``packed=True`` eight per byte, the first in the low bit); under ``profile="ml-dtypes"`` they
    follow its rows (the same codes as ``astype``), elsewhere IEEE integer rules.

    `saturate` (ONNX ``saturate``, float8 targets only): out-of-range values become the largest
    finite value instead of infinity or NaN. Default (None), as ``lowbit cast``: True (ONNX's
    saturate=1) between ONNX types, False (IEEE) with a described format on either side. `round_mode` (``"up"``, ``"down"``, ``"nearest"``;
    FLOAT8E8M0 targets only). `profile`: one of :data:`PROFILES`. `threads`: threads of the
    conversion (None: every core; the result is the same for any count).

    Returns an array of `x`'s shape whose dtype is the numpy/ml_dtypes dtype of `to` (``object``
    of ``str`` for STRING). With ``packed=True``: the ONNX ``raw_data`` bytes as a flat uint8
    array (int4/uint4/float4 two per byte, int2/uint2 four per byte, float6 four per three bytes;
    other types their little-endian bytes); :func:`unpack` reads them back.

    `x` is read in place when it is C-contiguous and little-endian (else one copy is made); the
    result is the one allocation. Errors: :class:`DTypeError` for names and dtypes,
    :class:`ParseError` for strings that are not numbers, :class:`Error` for the rest.

    `x` may be a CPU ``torch.Tensor`` (read in place, see ``lowbit._torch``; torch's float64 ..
    bool, float8 types and ``float4_e2m1fn_x2`` as packed E2M1) and `to` a torch dtype
    (``torch.float8_e4m3fn``); a tensor in gives a tensor out unless ``out_type="numpy"``
    (``out_type="torch"`` asks for one from numpy input).
    """
    want_torch = _torch.wants_torch(out_type, x)
    result = _cast_array(_torch.numpy_in(x), _torch.dtype_in(to), saturate, round_mode, profile, threads, packed)
    return _torch.out(result, want_torch)


def _cast_array(
    x: _Any, to: _Any, saturate: _Optional[bool], round_mode: str, profile: str, threads: _Optional[int], packed: bool
) -> _np.ndarray:
    packed = _flag(packed, "packed")
    a = _np.asarray(x)
    src = _format_of_array(a)
    dst = _resolve_format(to)
    shape = a.shape
    n = a.size
    described = _is_described(src) or _is_described(dst)
    saturate = (not described) if saturate is None else _flag(saturate, "saturate")
    if described:
        return _cast_described(a, src, dst, saturate, round_mode, profile, packed)
    if dst == "STRING" and packed:
        raise Error("packed=True is for fixed-width targets: STRING has no raw_data layout")
    if not packed and dst != "STRING":
        _numpy_dtype(dst)  # fails before any work when ml_dtypes lacks the type
    if src == "STRING":
        texts = _texts(a)
        if dst == "STRING":
            return _string_array(texts, shape)
        out = _np.empty(_native.buffer_size(dst, n, not packed), _np.uint8)
        _native.cast_from_strings(texts, out, dst, saturate, round_mode, profile, not packed)
        return _from_native(out, dst, shape, packed)
    src_bytes = _flat_bytes(a)
    if dst == "STRING":
        texts = _native.cast_to_strings(src_bytes, src, n, saturate, round_mode, profile, src in _SUB_BYTE)
        return _string_array(texts, shape)
    if not packed and _LITTLE_ENDIAN:
        # The result array itself is the buffer the plan writes (one code per element, which is
        # numpy's layout of every fixed-width dtype on a little-endian machine): no view to make
        # afterwards.
        result = _np.empty(shape, _numpy_dtype(dst))
        out = result.reshape(-1).view(_np.uint8)
        _native.cast_into(src_bytes, out, src, dst, n, saturate, round_mode, profile, threads, src in _SUB_BYTE, True)
        return result
    out = _np.empty(_native.buffer_size(dst, n, not packed), _np.uint8)
    _native.cast_into(src_bytes, out, src, dst, n, saturate, round_mode, profile, threads, src in _SUB_BYTE, not packed)
    return _from_native(out, dst, shape, packed)


def _cast_described(a: _np.ndarray, src: str, dst: str, saturate: bool, round_mode: str, profile: str,
                    packed: bool) -> _np.ndarray:
    """A cast where a side is a described format: IEEE semantics (nearest even, one rounding);
    ml_dtypes' named types under a profile that has them: that profile's rows."""
    if profile != "spec" and ("," in src or "," in dst):
        raise Error(
            f"profile={profile!r}: profiles decide ONNX Cast between ONNX dtypes (and ml_dtypes' named "
            f"types); a format description ({src if ',' in src else dst}) converts by IEEE rules (nearest "
            f"even, one rounding)"
        )
    if "STRING" in (src, dst):
        raise DTypeError("STRING does not convert to or from a described format")
    out = _native.cast_described(_flat_bytes(a), src, dst, a.size, saturate, round_mode, profile, src in _SUB_BYTE,
                                 not packed)
    if packed:
        return out
    if _is_described(dst):
        dtype = _described_numpy_dtype(dst, _native.info(dst)["bits"])
        result = out.view(dtype.newbyteorder("<")).reshape(a.shape)
        return result.astype(dtype) if _sys.byteorder == "big" else result
    return _from_native(out, dst, a.shape, False)


def pack(x: _Any, *, out_type: _Optional[str] = None) -> _np.ndarray:
    """The ONNX ``raw_data`` bytes of `x` (a flat uint8 array): int4/uint4/float4 two per byte
    (element 2k in the low nibble), int2/uint2 four per byte, float6 four per three bytes, other
    types their little-endian bytes. The same as ``cast(x, x.dtype, packed=True)``. A torch
    tensor gives a uint8 tensor (``out_type`` as for :func:`cast`)."""
    want_torch = _torch.wants_torch(out_type, x)
    a = _np.asarray(_torch.numpy_in(x))
    return _torch.out(_cast_array(a, a.dtype, None, "up", "spec", None, True), want_torch)


def unpack(buf: _Any, dtype: _Any, shape: _Any, *, out_type: _Optional[str] = None) -> _np.ndarray:
    """Reads ONNX ``raw_data`` bytes (`buf`: bytes, bytearray, memoryview or a uint8 array) as an
    array of `dtype` (any spelling :func:`onnx_name` takes) and `shape`, in the numpy/ml_dtypes
    dtype (sub-byte types one element per byte). `buf` must hold exactly the bytes `shape`'s
    elements take (:class:`ShapeError` otherwise); padding bits are ignored. `buf` may be a uint8
    torch tensor and `dtype` a torch dtype; a tensor in gives a tensor out (``out_type`` as for
    :func:`cast`)."""
    want_torch = _torch.wants_torch(out_type, buf)
    return _torch.out(_unpack_array(_torch.numpy_in(buf), _torch.dtype_in(dtype), shape), want_torch)


def _unpack_array(buf: _Any, dtype: _Any, shape: _Any) -> _np.ndarray:
    name = _resolve(dtype)
    raw = _as_bytes(buf)
    dims = _shape(shape)
    n = _math.prod(dims)
    if name == "STRING":
        raise DTypeError("STRING has no raw_data layout to unpack")
    _numpy_dtype(name)
    out = _np.empty(_native.buffer_size(name, n, True), _np.uint8)
    _native.cast_into(raw, out, name, name, n, True, "up", "spec", 1, False, True)
    return _from_native(out, name, dims, False)


# ------------------------------------------------------------------------------------------------
# quantization
# ------------------------------------------------------------------------------------------------


def _tensor(a: _Any, like: _Optional[_np.dtype] = None) -> _Tuple[_np.ndarray, str, _List[int], bool]:
    """An array handed to the native side: bytes, ONNX name, shape, one-code-per-byte. A Python
    number (not an array) takes the dtype `like`."""
    if like is not None and not isinstance(a, (_np.ndarray, _np.generic)):
        a = _np.asarray(a, dtype=like)
    a = _np.asarray(a)
    name = _of_array(a)
    if name == "STRING":
        raise DTypeError("quantization takes numeric arrays, not strings")
    return _flat_bytes(a), name, list(a.shape), name in _SUB_BYTE


def _number_text(value: _Any) -> _Optional[str]:
    """A Python number (int or float, not a numpy value) as text, for the library to read exactly
    as the command line reads `--zero-point` (so 300 into int8 is lowbit.Error, not numpy's
    OverflowError); None for anything else."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return repr(value)


def _tensor_from_native(result: _Tuple[str, _List[int], _np.ndarray], packed: bool = False) -> _np.ndarray:
    name, shape, data = result
    return _from_native(data, name, tuple(shape), packed)


def quantize_linear(
    x: _Any,
    scale: _Any,
    zero_point: _Any = None,
    *,
    axis: _Optional[int] = None,
    saturate: _Optional[bool] = None,
    block_size: _Optional[int] = None,
    output_dtype: _Any = None,
    precision: _Any = None,
    opset: _Optional[int] = None,
    profile: str = "spec",
    packed: bool = False,
    out_type: _Optional[str] = None,
) -> _np.ndarray:
    """ONNX ``QuantizeLinear``: ``y = saturate(round(x / scale) + zero_point)``, bit-exact.

    `x` float32/float16/bfloat16 (int32 too from opset 10's rules); `scale` per tensor (a scalar),
    per axis (1-D along `axis`) or blocked (`block_size` along `axis`); `zero_point` sets the
    output type (default uint8, or `output_dtype`). The types and attributes `opset` allows are
    checked first (default: the newest opset lowbit knows). A Python number for `scale` takes
    `x`'s dtype when `x` is float32/float16/bfloat16, float32 otherwise; for `zero_point`,
    `output_dtype` (default uint8). `saturate` applies to float8 outputs. `profile` decides where
    the onnx reference and onnxruntime differ. ``packed=True`` returns the ONNX raw_data bytes.
    `x`, `scale` and `zero_point` may be CPU torch tensors and `output_dtype` a torch dtype; a
    tensor `x` gives a tensor out (``out_type`` as for :func:`cast`).
    """
    want_torch = _torch.wants_torch(out_type, x)
    x, scale, zero_point = (_torch.numpy_in(v) for v in (x, scale, zero_point))
    output_dtype = _torch.dtype_in(output_dtype)
    xa = _np.asarray(x)
    x_arg = _tensor(xa)
    scale_like = xa.dtype if x_arg[1] in ("FLOAT", "FLOAT16", "BFLOAT16") else _np.dtype(_np.float32)
    scale_arg = _tensor(scale, like=scale_like)
    out_name = None if output_dtype is None else _resolve(output_dtype)
    zp_arg, zp_text = None, _number_text(zero_point)
    if zero_point is not None and zp_text is None:
        zp_arg = _tensor(zero_point, like=_numpy_dtype(out_name or "UINT8"))
    result = _native.quantize_linear(
        x_arg,
        scale_arg,
        zp_arg,
        axis,
        None if saturate is None else _flag(saturate, "saturate"),
        block_size,
        out_name,
        None if precision is None else _resolve(precision),
        opset,
        profile,
        _flag(packed, "packed"),
        zp_text,
    )
    return _torch.out(_tensor_from_native(result, _flag(packed, "packed")), want_torch)


def dequantize_linear(
    x: _Any,
    scale: _Any,
    zero_point: _Any = None,
    *,
    axis: _Optional[int] = None,
    block_size: _Optional[int] = None,
    output_dtype: _Any = None,
    opset: _Optional[int] = None,
    profile: str = "spec",
) -> _np.ndarray:
    """ONNX ``DequantizeLinear``: ``y = (x - zero_point) * scale`` in the output type
    (`output_dtype`, else the scale's type), bit-exact. `x` is a quantized array (int8, uint8,
    int4, float8_*, float4_e2m1fn, ... in the ml_dtypes dtype); `scale` and `zero_point` as in
    :func:`quantize_linear` (a Python number for `scale` is float32, for `zero_point` `x`'s
    dtype). Default `opset`: the newest lowbit knows."""
    xa = _np.asarray(x)
    x_arg = _tensor(xa)
    scale_arg = _tensor(scale, like=_np.dtype(_np.float32))
    zp_text = _number_text(zero_point)
    zp_arg = None if zero_point is None or zp_text is not None else _tensor(zero_point, like=xa.dtype)
    result = _native.dequantize_linear(
        x_arg,
        scale_arg,
        zp_arg,
        axis,
        block_size,
        None if output_dtype is None else _resolve(output_dtype),
        opset,
        profile,
        zp_text,
    )
    return _tensor_from_native(result)


# ------------------------------------------------------------------------------------------------
# verification
# ------------------------------------------------------------------------------------------------


def _saturate(saturate: _Optional[bool]) -> _Optional[bool]:
    """None keeps the command line's default (ONNX's 1 from an ONNX type into float8, else 0)."""
    return None if saturate is None else _flag(saturate, "saturate")


def _level(level: _Union[int, str]) -> str:
    if isinstance(level, (int, _np.integer)) and not isinstance(level, bool):
        return str(int(level))
    if isinstance(level, str):
        return level
    raise Error(f"level must be 1, 2 or \"all\", not {level!r}")


def convert(
    bits: _Any,
    from_: _Any,
    to: _Any,
    *,
    round: str = "rne",
    tininess: str = "after",
    saturate: _Optional[bool] = None,
    random: _Any = 0,
    flags: bool = True,
) -> _Union[_Tuple[int, int], int]:
    """Converts one code `bits` of `from_` into `to` under the IEEE semantics of :func:`vectors`
    (the same options, the same results): what a testbench's scoreboard asks for one transaction.

    `bits`: the operand's code, an ``int`` from 0 to ``2**width - 1`` (a negative integer
    operand is given as its two's complement code; a code wider than `from_` raises
    :class:`DTypeError`). `random`: the random word of stochastic rounding (``round="sr:R"``
    uses its low R bits); other modes take none. `saturate`: None takes :func:`vectors`'
    default (on from an ONNX type into an ONNX float8 type, off otherwise).

    Returns ``(code, flags)``, `flags` in TestFloat's bits (1 inexact, 2 underflow, 4 overflow,
    8 infinite, 16 invalid); with ``flags=False`` the code alone.
    """
    code = _code(bits, "bits")
    word = _code(random, "random")
    result, status = _native.convert_scalar(
        code, _format(from_), _format(to), round, tininess, _saturate(saturate), word
    )
    return (result, status) if _flag(flags, "flags") else result


def _code(value: _Any, name: str) -> int:
    """A code or random word: a non-negative integer of at most 64 bits."""
    if isinstance(value, (bool, _np.bool_)):
        raise Error(f"{name} must be an integer code, not {value!r}")
    try:
        code = _operator.index(value)
    except TypeError:
        raise Error(f"{name} must be an integer code, not {value!r}") from None
    if not 0 <= code < 1 << 64:
        raise DTypeError(f"{name}={code}: a code is 0 to 2**64 - 1 (give a negative integer as its two's complement)")
    return code


def vectors(
    from_: _Any = None,
    to: _Any = None,
    *,
    round: str = "rne",
    tininess: str = "after",
    saturate: _Optional[bool] = None,
    level: _Union[int, str] = 1,
    count: _Optional[int] = None,
    seed: int = 1,
    layout: _Optional[str] = None,
    scheme: _Optional[str] = None,
    direction: str = "quantize",
    input: _Any = "float32",
) -> _Union[_Dict[str, _Any], str]:
    """TestFloat-style golden vectors of the conversion `from_` -> `to` under IEEE semantics.

    `from_`, `to`: dtype names (any spelling :func:`onnx_name` takes) or format descriptions
    ``eEmM[,bias=B][,special=ieee|fn|fnuz|none][,subnormal=keep|flush][,unsigned]`` (a bare
    ``e4m3`` or ``e5m2`` names the ONNX type). `round`: ``rne``, ``rtz``, ``rdn``, ``rup``,
    ``rmm``, ``raz``, ``rod`` or ``sr:R`` (stochastic, R random bits). `tininess`: ``before``,
    ``after`` or ``delivered``. `level`: 1 or 2 (TestFloat's levels: special operands mixed with
    random ones; `count` raises the number of cases) or ``"all"`` (every pattern of a source of
    16 bits or fewer). `seed` seeds the random operands and stochastic rounding. `saturate`:
    None takes the default of ``lowbit vectors`` (and of :func:`check` and :func:`sweep`): on
    from an ONNX type into an ONNX float8 type (ONNX Cast's saturate=1), off otherwise (IEEE).

    Returns a dict of arrays, one element per case: ``operand`` and ``result`` (codes, uint64),
    ``flags`` (uint8, TestFloat's bits: 1 inexact, 2 underflow, 4 overflow, 8 infinite, 16
    invalid), ``random`` (uint64, stochastic rounding only), and ``specials`` (how many special
    operands the level has). With ``layout="testfloat"`` or ``"csv"``: the text of that layout.

    With ``scheme=`` (a block-scaled scheme, as :data:`lowbit.blocks.SCHEMES` lists them; no
    `from_`/`to`): vectors for a unit that quantizes one block (``direction="dequantize"``: one
    that dequantizes it) of `input` (``float32``, ``bfloat16`` or ``float16``), the answers those
    of :func:`lowbit.blocks.quantize`: the edge blocks first, then random ones from `seed`;
    `count` blocks in all (never fewer than the edge blocks). Returns a dict: ``case`` (why each
    block is there), ``inputs`` (uint32 bit patterns, shape ``(blocks, block)``),
    ``global_scale`` (uint32 float32 bits per block, or None), ``scale`` (uint32: the code or the
    float bits as stored), ``elements`` (uint8 codes, ``(blocks, block)``) and ``values``
    (uint32 float32 bits of the dequantized block); or the text of the lines ``lowbit vectors
    --scheme`` writes (``layout="testfloat"`` or ``"csv"``), which :func:`check` reads.
    """
    if scheme is not None:
        if from_ is not None or to is not None:
            raise Error("vectors(scheme=...) takes no from_ or to: the scheme decides the formats")
        out = _native.block_vectors(str(scheme), _resolve(input), direction, count, seed, layout)
        if isinstance(out, str):
            return out
        n = out.pop("block")
        for key in ("inputs", "elements", "values"):
            out[key] = out[key].reshape(-1, n)
        return out
    if from_ is None or to is None:
        raise Error("vectors() needs from_ and to (or scheme=...)")
    return _native.vectors(
        _format(from_), _format(to), round, tininess, _saturate(saturate), _level(level), count, seed, layout
    )


def check(
    from_: _Any = None,
    to: _Any = None,
    dump: _Any = None,
    *,
    round: str = "rne",
    tininess: str = "after",
    saturate: _Optional[bool] = None,
    check_nans: bool = False,
    check_invalid_integers: bool = False,
    no_flags: bool = False,
    seed: int = 1,
    which: bool = False,
    allow_empty: bool = False,
    scheme: _Optional[str] = None,
    direction: str = "quantize",
    input: _Any = "float32",
) -> _Dict[str, _Any]:
    """Checks a simulator's dump of `from_` -> `to` conversions against the IEEE semantics (the
    options of :func:`vectors`), every mismatch classified, as ``testfloat_ver`` does.

    `dump`: the text of ``operand result [flags]`` lines in TestFloat's layout (``str`` or
    ``bytes``), a path (``os.PathLike``, read as a stream), or a tuple ``(operands, results)`` or
    ``(operands, results, flags)`` of integer arrays. A NaN of another encoding and the value of
    an invalid float-to-integer result count only with `check_nans` / `check_invalid_integers`.

    Returns a dict: ``checked``, ``mismatches``, ``classes`` (count per kind of mismatch),
    ``flags_missing`` / ``flags_extra`` (per flag), ``shown`` (the first mismatches, one line
    each), ``report`` (the text ``lowbit check`` prints). With ``which=True`` (`to` may then be a
    width in bits): ``checked``, ``ranking`` (``(configuration, description, lines agreeing)``,
    best first, over every rounding mode, tininess rule, saturation, format of that width and
    ONNX profile) and ``report``.

    A dump that holds no case (nothing but comment, blank or header lines) raises
    :class:`Error`, as ``lowbit check`` fails on it: a simulator that wrote nothing does not
    pass. ``allow_empty=True`` accepts it on purpose (``checked`` is then 0).

    ``check(dump, scheme=S)`` checks a block unit's dump instead: the lines of
    :func:`vectors` with ``scheme=S`` (same `direction` and `input`) holding the unit's outputs
    (text or a path). Returns a dict: ``checked`` and ``mismatches`` (blocks), ``skipped``,
    ``other_rule`` (blocks whose whole answer another recipe row gives, by row), ``scale``
    (wrong scales, by the rows that give them or the step), ``elements`` (wrong elements by
    class: ``tie``, ``one_step_away_from_zero``, ``one_step_toward_zero``, ``zero_sign``,
    ``saturation``, ``nan``, ``zero_block``, ``nan_inf_block``, ``wrong_scale_block``,
    ``other``), ``element_index`` (wrong elements per index), ``shown`` and ``report``.
    """
    if scheme is not None:
        if dump is None and to is None:
            dump, from_ = from_, None
        if from_ is not None or to is not None:
            raise Error("check(dump, scheme=...) takes no from_ or to: the scheme decides the formats")
        if isinstance(dump, str):
            block_text, block_path = dump.encode("utf-8"), None
        elif isinstance(dump, (bytes, bytearray, memoryview)):
            block_text, block_path = bytes(dump), None
        elif isinstance(dump, _os.PathLike):
            block_text, block_path = None, _os.fspath(dump)
        else:
            raise Error(f"a block dump must be text (str or bytes) or a path (os.PathLike), not {type(dump).__name__}")
        return _native.block_check(
            str(scheme), _resolve(input), direction, block_text, block_path, _flag(allow_empty, "allow_empty")
        )
    if from_ is None or to is None or dump is None:
        raise Error("check() needs from_, to and dump (or a dump and scheme=...)")
    text = path = arrays = None
    if isinstance(dump, str):
        text = dump.encode("utf-8")
    elif isinstance(dump, (bytes, bytearray, memoryview)):
        text = bytes(dump)
    elif isinstance(dump, _os.PathLike):
        path = _os.fspath(dump)
    elif isinstance(dump, tuple) and len(dump) in (2, 3):
        ops = _np.ascontiguousarray(_np.asarray(dump[0]).reshape(-1), dtype=_np.uint64)
        res = _np.ascontiguousarray(_np.asarray(dump[1]).reshape(-1), dtype=_np.uint64)
        flags = None if len(dump) == 2 else _np.ascontiguousarray(_np.asarray(dump[2]).reshape(-1), dtype=_np.uint8)
        arrays = (ops, res, flags)
    else:
        raise Error(
            "dump must be text (str or bytes), a path (os.PathLike) or a tuple (operands, results[, flags]), "
            f"not {type(dump).__name__}"
        )
    return _native.check(
        _format(from_),
        str(to) if isinstance(to, (int, _np.integer)) else _format(to),
        text,
        path,
        arrays,
        round,
        tininess,
        _saturate(saturate),
        _flag(check_nans, "check_nans"),
        _flag(check_invalid_integers, "check_invalid_integers"),
        _flag(no_flags, "no_flags"),
        seed,
        _flag(which, "which"),
        _flag(allow_empty, "allow_empty"),
    )


def sweep(
    from_: _Any,
    to: _Any,
    *,
    round: str = "rne",
    tininess: str = "after",
    saturate: _Optional[bool] = None,
    config: _Optional[str] = None,
    threads: _Optional[int] = None,
) -> _Dict[str, _Any]:
    """Every pattern of a source of at most 32 bits, in ascending order, through the conversion:
    the SHA-256 of the concatenated result codes (each in its little-endian width, sub-byte
    formats one code per byte) and the counts per class and per flag, as ``lowbit sweep``.

    `config`: a configuration instead of `round`/`tininess`/`saturate`, in ``lowbit diff``'s
    grammar, e.g. ``"profile=onnxruntime,saturate=1"`` for ONNX Cast (values only: ``flags`` is
    then None). Returns a dict: ``sha256``, ``patterns``, ``config``, ``classes``, ``flags``,
    ``no_flag``, ``seconds``, ``report``. The GIL is released while it runs.
    """
    return _native.sweep_patterns(
        _format(from_), _format(to), round, tininess, _saturate(saturate), config, threads
    )


# ------------------------------------------------------------------------------------------------
# info
# ------------------------------------------------------------------------------------------------


def info(dtype: _Any) -> _Dict[str, _Any]:
    """The descriptor of a dtype (any spelling :func:`onnx_name` takes) or of a described format
    (``"e4m3,special=ieee"``) as a dict.

    Every dtype: ``name``, ``onnx_number`` (None for a description), ``kind`` (``float``,
    ``integer``, ``bool``, ``string``, ``complex``, ``described float``), ``bits``, ``packing``,
    ``numpy`` (the numpy/ml_dtypes dtype name, or None). Integers: ``signed``, ``min``, ``max``.
    Floats: ``description``, ``exponent_bits``, ``mantissa_bits``, ``bias``, ``signed``,
    ``subnormals``, ``flush_subnormals``, ``special`` (``ieee``, ``fn``, ``fnuz``, ``none``),
    ``zero``, ``has_inf``, ``has_nan``, ``nan_payload``, ``max``, ``lowest``, ``min_normal``,
    ``min_subnormal`` (floats; exact, or infinity beyond float64's range) and ``codes`` (the codes
    of those values and of zero, -0, infinities and NaNs; None where the format has none).
    """
    if isinstance(dtype, str):
        try:
            d = _native.info(dtype)
        except DTypeError as lowbit_error:
            try:
                name = _resolve(dtype)
            except DTypeError:
                raise lowbit_error from None
            d = _native.info(name)
    else:
        d = _native.info(_resolve_format(dtype))
    # An ONNX dtype's numpy dtype, or the ml_dtypes type of a named format.
    np_dtype = _NUMPY.get(d["name"]) if d["onnx_number"] is not None else _DESCRIBED.get(d["name"])
    d["numpy"] = None if np_dtype is None else ("str" if d["name"] == "STRING" else str(np_dtype))
    return d


from . import mx  # noqa: E402  (the submodule uses the helpers above)
from . import blocks  # noqa: E402
from . import checkpoint  # noqa: E402
from . import dot  # noqa: E402

# `from __future__ import annotations` binds the name `annotations`; it is no part of the API.
del annotations
