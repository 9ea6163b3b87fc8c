"""Type stubs of lowbit.mx (OCP Microscaling)."""

from typing import Any, Literal, Tuple

import numpy as np
import numpy.typing as npt

FORMATS: Tuple[str, ...]
DEFAULT_BLOCK_SIZE: int

def element_dtype(format: str) -> np.dtype[Any]: ...
def quantize(
    x: npt.ArrayLike,
    format: str,
    *,
    block_size: int = 32,
    axis: int = -1,
    scale_round: Literal["floor", "ceil"] = "floor",
    packed: bool = False,
) -> Tuple[npt.NDArray[Any], npt.NDArray[Any]]: ...
def dequantize(
    elements: npt.ArrayLike,
    scales: npt.ArrayLike,
    format: str,
    *,
    block_size: int = 32,
    axis: int = -1,
) -> npt.NDArray[np.float32]: ...
