"""Type stubs of lowbit.blocks (block-scaled recipes)."""

from typing import Any, Optional, Tuple

import numpy as np
import numpy.typing as npt

SCHEMES: Tuple[Tuple[str, str], ...]

class Quantized:
    scheme: str
    axis: int
    elements: npt.NDArray[np.uint8]
    scales: npt.NDArray[Any]
    global_scale: Optional[np.float32]
    def to_bytes(self) -> bytes: ...
    def dequantize(self, dtype: Any = ...) -> npt.NDArray[Any]: ...

def quantize(x: npt.ArrayLike, scheme: str, *, axis: int = -1, global_scale: Optional[float] = None) -> Quantized: ...
def from_bytes(data: Any, scheme: str, shape: Any, *, axis: int = -1) -> Quantized: ...
def from_arrays(
    elements: npt.ArrayLike,
    scales: npt.ArrayLike,
    scheme: str,
    *,
    axis: int = -1,
    global_scale: Optional[float] = None,
) -> Quantized: ...
