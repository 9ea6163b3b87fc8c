"""Type stubs of the lowbit package (see the docstrings in lowbit/__init__.py)."""

import os
from typing import Any, Dict, List, Literal, Optional, Tuple, TypedDict, Union, overload

import numpy as np
import numpy.typing as npt

from . import blocks as blocks
from . import mx as mx
from . import checkpoint as checkpoint
from . import dot as dot
from ._errors import (
    DTypeError as DTypeError,
    Error as Error,
    FileError as FileError,
    InternalError as InternalError,
    ParseError as ParseError,
    ShapeError as ShapeError,
)

__version__: str
PROFILES: Tuple[str, ...]
DTYPES: Tuple[str, ...]

# A dtype: an ONNX name ("FLOAT8E4M3FN"), a lowbit name or alias ("e4m3fn", "bf16"), an ml_dtypes
# name ("float8_e4m3fn"), an ONNX number, or a numpy / ml_dtypes dtype or scalar type.
DTypeLike = Union[str, int, np.dtype[Any], type]
# A verification format: a DTypeLike or a description "eEmM[,bias=B][,special=...][,subnormal=...][,unsigned]".
FormatLike = Union[str, np.dtype[Any], type]
RoundMode = Literal["up", "down", "nearest"]

def onnx_name(dtype: DTypeLike) -> str: ...
def numpy_dtype(dtype: DTypeLike) -> np.dtype[Any]: ...
def cast(
    x: npt.ArrayLike,
    to: DTypeLike,
    *,
    saturate: Optional[bool] = None,
    round_mode: RoundMode = "up",
    profile: str = "spec",
    threads: Optional[int] = None,
    packed: bool = False,
    out_type: Optional[Literal["numpy", "torch"]] = None,
) -> Any: ...
def pack(x: Any, *, out_type: Optional[Literal["numpy", "torch"]] = None) -> Any: ...
def unpack(
    buf: Any,
    dtype: Any,
    shape: Union[int, Tuple[int, ...], List[int]],
    *,
    out_type: Optional[Literal["numpy", "torch"]] = None,
) -> Any: ...
def quantize_linear(
    x: npt.ArrayLike,
    scale: npt.ArrayLike,
    zero_point: Optional[npt.ArrayLike] = None,
    *,
    axis: Optional[int] = None,
    saturate: Optional[bool] = None,
    block_size: Optional[int] = None,
    output_dtype: Optional[DTypeLike] = None,
    precision: Optional[DTypeLike] = None,
    opset: Optional[int] = None,
    profile: str = "spec",
    packed: bool = False,
    out_type: Optional[Literal["numpy", "torch"]] = None,
) -> Any: ...
def dequantize_linear(
    x: npt.ArrayLike,
    scale: npt.ArrayLike,
    zero_point: Optional[npt.ArrayLike] = None,
    *,
    axis: Optional[int] = None,
    block_size: Optional[int] = None,
    output_dtype: Optional[DTypeLike] = None,
    opset: Optional[int] = None,
    profile: str = "spec",
) -> npt.NDArray[Any]: ...

class Vectors(TypedDict, total=False):
    operand: npt.NDArray[np.uint64]
    result: npt.NDArray[np.uint64]
    flags: npt.NDArray[np.uint8]
    random: npt.NDArray[np.uint64]
    specials: int

# One code `bits` of `from_` converted into `to` under vectors()' IEEE semantics: (code, flags),
# flags in TestFloat's bits (1 inexact, 2 underflow, 4 overflow, 8 infinite, 16 invalid), or the
# code alone with flags=False. round: rne, rtz, rdn, rup, rmm, raz, rod or sr:R, with `random`
# the random word of stochastic rounding (its low R bits).
@overload
def convert(
    bits: int,
    from_: FormatLike,
    to: FormatLike,
    *,
    round: str = "rne",
    tininess: Literal["before", "after", "delivered"] = "after",
    saturate: Optional[bool] = None,
    random: int = 0,
    flags: Literal[True] = True,
) -> Tuple[int, int]: ...
@overload
def convert(
    bits: int,
    from_: FormatLike,
    to: FormatLike,
    *,
    round: str = "rne",
    tininess: Literal["before", "after", "delivered"] = "after",
    saturate: Optional[bool] = None,
    random: int = 0,
    flags: Literal[False],
) -> int: ...
def vectors(
    from_: Optional[FormatLike] = None,
    to: Optional[FormatLike] = None,
    *,
    round: str = "rne",
    tininess: Literal["before", "after", "delivered"] = "after",
    saturate: Optional[bool] = None,
    level: Union[int, Literal["all"]] = 1,
    count: Optional[int] = None,
    seed: int = 1,
    layout: Optional[Literal["testfloat", "csv"]] = None,
    scheme: Optional[str] = None,
    direction: Literal["quantize", "dequantize"] = "quantize",
    input: Any = "float32",
) -> Union[Vectors, Dict[str, Any], str]:
    """Scalar vectors of `from_` -> `to`, or with ``scheme=`` block-unit vectors (a dict:
    ``case``, ``inputs``, ``global_scale``, ``scale``, ``elements``, ``values``)."""
    ...
def check(
    from_: Any = None,
    to: Optional[Union[FormatLike, int]] = None,
    dump: Optional[
        Union[
            str,
            bytes,
            os.PathLike[str],
            Tuple[npt.ArrayLike, npt.ArrayLike],
            Tuple[npt.ArrayLike, npt.ArrayLike, npt.ArrayLike],
        ]
    ] = None,
    *,
    round: str = "rne",
    tininess: Literal["before", "after", "delivered"] = "after",
    saturate: Optional[bool] = None,
    check_nans: bool = False,
    check_invalid_integers: bool = False,
    no_flags: bool = False,
    seed: int = 1,
    which: bool = False,
    allow_empty: bool = False,
    scheme: Optional[str] = None,
    direction: Literal["quantize", "dequantize"] = "quantize",
    input: Any = "float32",
) -> Dict[str, Any]:
    """A dump of `from_` -> `to` lines, or ``check(dump, scheme=S)``: a block unit's dump (the
    lines of ``vectors(scheme=S, layout="testfloat")`` with the unit's outputs)."""
    ...
def sweep(
    from_: FormatLike,
    to: FormatLike,
    *,
    round: str = "rne",
    tininess: Literal["before", "after", "delivered"] = "after",
    saturate: Optional[bool] = None,
    config: Optional[str] = None,
    threads: Optional[int] = None,
) -> Dict[str, Any]: ...
def info(dtype: FormatLike) -> Dict[str, Any]: ...
