"""Type stubs of lowbit.dot (dot products under an accumulation model)."""

from typing import Any

import numpy as np
import numpy.typing as npt

def matmul_t(a: Any, b: Any, *, model: str = "exact", out_dtype: Any = "float32") -> npt.NDArray[Any]: ...
