"""Names and numpy dtypes: which numpy (or ml_dtypes) dtype holds each ONNX dtype, and how a `to`
argument (a name, an ONNX number, a numpy dtype or type) becomes an ONNX name."""

from __future__ import annotations

from typing import Any, Dict, Optional

import ml_dtypes
import numpy as np

from . import _native
from ._errors import DTypeError


def _ml(name: str) -> Optional[np.dtype]:
    """An ml_dtypes dtype, or None with an ml_dtypes too old to have it."""
    t = getattr(ml_dtypes, name, None)
    return None if t is None else np.dtype(t)


# The numpy dtype of each ONNX dtype; None where numpy and ml_dtypes have none.
NUMPY: Dict[str, Optional[np.dtype]] = {
    "FLOAT": np.dtype(np.float32),
    "UINT8": np.dtype(np.uint8),
    "INT8": np.dtype(np.int8),
    "UINT16": np.dtype(np.uint16),
    "INT16": np.dtype(np.int16),
    "INT32": np.dtype(np.int32),
    "INT64": np.dtype(np.int64),
    "STRING": np.dtype(object),
    "BOOL": np.dtype(np.bool_),
    "FLOAT16": np.dtype(np.float16),
    "DOUBLE": np.dtype(np.float64),
    "UINT32": np.dtype(np.uint32),
    "UINT64": np.dtype(np.uint64),
    "COMPLEX64": np.dtype(np.complex64),
    "COMPLEX128": np.dtype(np.complex128),
    "BFLOAT16": _ml("bfloat16"),
    "FLOAT8E4M3FN": _ml("float8_e4m3fn"),
    "FLOAT8E4M3FNUZ": _ml("float8_e4m3fnuz"),
    "FLOAT8E5M2": _ml("float8_e5m2"),
    "FLOAT8E5M2FNUZ": _ml("float8_e5m2fnuz"),
    "UINT4": _ml("uint4"),
    "INT4": _ml("int4"),
    "FLOAT4E2M1": _ml("float4_e2m1fn"),
    "FLOAT8E8M0": _ml("float8_e8m0fnu"),
    "UINT2": _ml("uint2"),
    "INT2": _ml("int2"),
    "FLOAT6E2M3": _ml("float6_e2m3fn"),
    "FLOAT6E3M2": _ml("float6_e3m2fn"),
}

# ml_dtypes' types that are no ONNX type: lowbit's named formats (described formats with a name:
# IEEE-style 1-4-3 and 1-3-4 with infinities; 1-4-3 with bias 11, NaN at -0), by that name.
DESCRIBED = {
    name: d
    for name, d in [
        ("float8_e4m3", _ml("float8_e4m3")),
        ("float8_e3m4", _ml("float8_e3m4")),
        ("float8_e4m3b11fnuz", _ml("float8_e4m3b11fnuz")),
        # lowbit's named integer types, one code per byte as ml_dtypes holds them.
        ("int1", _ml("int1")),
        ("uint1", _ml("uint1")),
    ]
    if d is not None
}


def is_described(name: str) -> bool:
    """Whether a resolved name is a described format (a description or a named format), not an
    ONNX dtype."""
    return "," in name or name in DESCRIBED

# The dtypes numpy holds one element per byte although ONNX packs them.
SUB_BYTE = frozenset({"UINT4", "INT4", "FLOAT4E2M1", "UINT2", "INT2", "FLOAT6E2M3", "FLOAT6E3M2"})


def numpy_dtype(onnx_name: str) -> np.dtype:
    """The numpy dtype holding `onnx_name`, or DTypeError."""
    d = NUMPY.get(onnx_name)
    if d is None:
        raise DTypeError(f"{onnx_name} has no numpy dtype (ml_dtypes {ml_dtypes.__version__} has none for it)")
    return d


def _from_numpy(d: np.dtype, described: bool = False) -> str:
    if d.kind in "USO":
        return "STRING"
    if described:
        for description, extra in DESCRIBED.items():
            if extra == d.newbyteorder("="):
                return description
    for name, candidate in NUMPY.items():
        if candidate is not None and name != "STRING" and candidate == d.newbyteorder("="):
            return name
    known = ", ".join(str(v) for k, v in NUMPY.items() if v is not None and k != "STRING")
    raise DTypeError(f"numpy dtype {d} has no ONNX type; lowbit takes {known}, strings and {', '.join(map(str, DESCRIBED.values()))} (as named formats)")


def resolve(to: Any) -> str:
    """The ONNX name of `to`: an ONNX name, a lowbit name or alias (`e4m3fn`, `bf16`), an ml_dtypes
    name (`float8_e4m3fn`), an ONNX number, or a numpy / ml_dtypes dtype or scalar type.

    A string is read by lowbit first (so `"float"` is ONNX FLOAT, float32), then by numpy (`"f4"`).
    """
    if isinstance(to, str):
        try:
            return _native.resolve_dtype(to)
        except DTypeError as lowbit_error:
            try:
                d = np.dtype(to)
            except TypeError:
                raise lowbit_error from None
            return _from_numpy(d)
    if to is None:
        raise DTypeError("no dtype given (None)")
    if isinstance(to, (int, np.integer)) and not isinstance(to, (bool, np.bool_)):
        return _native.resolve_dtype(str(int(to)))
    try:
        d = np.dtype(to)
    except TypeError:
        raise DTypeError(
            f"{to!r} is neither a dtype name, an ONNX number nor a numpy dtype"
        ) from None
    return _from_numpy(d)


def of_array(a: np.ndarray) -> str:
    """The ONNX name of an array's dtype."""
    return _from_numpy(a.dtype)


# format_of_array's answers by dtype (the fixed-width dtypes only: a handful per program), so a
# call on a small array does not search the tables again.
_FORMAT_OF_DTYPE: Dict[np.dtype, str] = {}


def format_of_array(a: np.ndarray) -> str:
    """The ONNX name of an array's dtype, or the name of an ml_dtypes type that is no ONNX type
    (float8_e4m3, float8_e3m4, float8_e4m3b11fnuz)."""
    d = a.dtype
    name = _FORMAT_OF_DTYPE.get(d)
    if name is None:
        name = _from_numpy(d, described=True)
        if name != "STRING":
            _FORMAT_OF_DTYPE[d] = name
    return name


# resolve_format's answers by (type, argument) for names, dtypes and scalar types; a program asks
# for a few. Kept below _RESOLVED_KEPT entries (cleared when full).
_RESOLVED: Dict[Any, str] = {}
_RESOLVED_KEPT = 256


def resolve_format(to: Any) -> str:
    """Like :func:`resolve`, but a format description (``"e4m3,special=ieee"``) gives the
    normalized description (it always contains a comma) and an ml_dtypes type that is no ONNX
    type its name (``"float8_e3m4"``): :func:`is_described` tells them from ONNX names."""
    if not isinstance(to, (str, np.dtype, type)):
        return _resolve_format(to)
    # The type is part of the key: 1 == True, and np.dtype("float32") == "float32".
    key = (type(to), to)
    name = _RESOLVED.get(key)
    if name is None:
        name = _resolve_format(to)
        if len(_RESOLVED) >= _RESOLVED_KEPT:
            _RESOLVED.clear()
        _RESOLVED[key] = name
    return name


def _resolve_format(to: Any) -> str:
    if isinstance(to, str):
        try:
            return _native.resolve_dtype(to)
        except DTypeError as lowbit_error:
            if "," in to or to.strip().lower().startswith("e"):
                return _native.format_name(to)
            named = to.strip().lower().replace("-", "_")
            if named in DESCRIBED:
                return named
            try:
                d = np.dtype(to)
            except TypeError:
                raise lowbit_error from None
            return _from_numpy(d, described=True)
    if to is None or isinstance(to, (int, np.integer)):
        return resolve(to)
    try:
        d = np.dtype(to)
    except TypeError:
        return resolve(to)
    return _from_numpy(d, described=True)


# The descriptions whose codes are those of an ml_dtypes type (NaN payloads aside).
_DESCRIPTION_DTYPES = {
    description: DESCRIBED[name]
    for description, name in [
        ("e4m3,special=ieee", "float8_e4m3"),
        ("e3m4,special=ieee", "float8_e3m4"),
        ("e4m3,bias=11,special=fnuz", "float8_e4m3b11fnuz"),
    ]
    if name in DESCRIBED
}


def described_numpy_dtype(description: str, bits: int) -> np.dtype:
    """The array dtype of a described format's codes: ml_dtypes' type where it has one (for its
    name or its description), else the unsigned integer of the code's width (1, 2 or 4 bytes)."""
    if description in DESCRIBED:
        return DESCRIBED[description]
    if description in _DESCRIPTION_DTYPES:
        return _DESCRIPTION_DTYPES[description]
    return np.dtype(np.uint8 if bits <= 8 else np.uint16 if bits <= 16 else np.uint32)
