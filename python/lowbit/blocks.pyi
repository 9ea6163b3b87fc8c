"""Type stubs of lowbit.blocks (block-scaled recipes)."""

from typing import Any, Dict, Mapping, Optional, Tuple

import numpy as np
import numpy.typing as npt

SCHEMES: Tuple[Tuple[str, str], ...]
SCALE_LAYOUTS: Tuple[Tuple[str, str], ...]

class Quantized:
    scheme: str
    axis: int
    # numpy arrays (read-only), or torch tensors when the tensor came from torch (out_type);
    # `elements` is taken out of Rust when first read.
    @property
    def elements(self) -> Any: ...
    scales: Any
    global_scale: Optional[np.float32]
    # Integer schemes: zero-point codes per group and GPTQ's g_idx, or None.
    zero_points: Optional[Any]
    g_idx: Optional[Any]
    def storage(self) -> Dict[str, Any]: ...
    def to_bytes(self, layout: str = ...) -> bytes: ...
    def dequantize(self, dtype: Any = ...) -> Any: ...

def quantize(
    x: Any,
    scheme: str,
    *,
    axis: int = -1,
    global_scale: Optional[Any] = None,
    imatrix: Optional[Any] = None,
    g_idx: Optional[Any] = None,
    out_type: Optional[str] = None,
) -> Quantized: ...
def from_storage(tensors: Mapping[str, Any], scheme: str, shape: Any, *, out_type: Optional[str] = None) -> Quantized: ...
def from_bytes(
    data: Any,
    scheme: str,
    shape: Any,
    *,
    axis: int = -1,
    layout: str = ...,
    scale_dtype: Any = None,
    out_type: Optional[str] = None,
) -> Quantized: ...
def from_arrays(
    elements: Any,
    scales: Any,
    scheme: str,
    *,
    axis: int = -1,
    global_scale: Optional[Any] = None,
    out_type: Optional[str] = None,
) -> Quantized: ...
def swizzle_scales(scales: Any, layout: str = ...) -> npt.NDArray[np.uint8]: ...
def unswizzle_scales(data: Any, shape: Any, layout: str = ...) -> npt.NDArray[np.uint8]: ...
