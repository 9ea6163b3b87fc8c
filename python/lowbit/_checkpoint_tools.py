"""`lowbit.checkpoint.quantize`, `which` and `convert`: the `lowbit checkpoint` commands of the
same names, as functions (the work is done by the crate, outside the GIL)."""

from __future__ import annotations

import os
from typing import Any, Dict, List, Optional, Tuple

from . import _native


def quantize(path: Any, scheme: str, out: Any, *, only: Optional[str] = None, skip: Optional[str] = None,
             threads: Optional[int] = None, shard: Optional[Tuple[int, int]] = None,
             imatrix: Any = None) -> Dict[str, Any]:
    """Quantizes the checkpoint at `path` under `scheme` (`lowbit.blocks.SCHEMES`) and writes it in
    the convention of the producer the scheme reproduces to `out` (a folder; a .gguf file for
    `ggml:*`), all or nothing. `only` / `skip` are regular expressions on tensor names; `shard=(K, N)`
    does the K-th of N slices. `ggml:FTYPE` in upper case (`ggml:Q4_K_M`) writes llama.cpp's mixture
    of that ftype from a GGUF file, with llama-imatrix's importance matrix `imatrix` if given.
    Returns `{"written": [files], "tensors": [{"name", "quantized", "why"}]}`."""
    return _native.checkpoint_quantize(os.fspath(path), scheme, os.fspath(out), only, skip, threads, shard,
                                       None if imatrix is None else os.fspath(imatrix))


def which(quantized: Any, original: Any, *, only: Optional[str] = None, skip: Optional[str] = None,
          threads: Optional[int] = None, shard: Optional[Tuple[int, int]] = None) -> Dict[str, Any]:
    """Which recipe made `quantized` from `original`: each quantized weight re-quantized under every
    recipe of its family, ranked by the share of element codes and scales reproduced; `only` /
    `skip` are regular expressions on weight and tensor names. Returns
    `{"summary": "this file was made by ..., 100.000 %", "exact": bool, "overall": [...],
    "weights": [{"name", "stored_scheme", "ranking": [...]}]}`."""
    return _native.checkpoint_which(os.fspath(quantized), os.fspath(original), threads, shard, only, skip)


def convert(path: Any, to: str, out: Any, *, only: Optional[str] = None, skip: Optional[str] = None,
            threads: Optional[int] = None, shard: Optional[Tuple[int, int]] = None) -> List[str]:
    """Re-encodes the MXFP4 / NVFP4 weights of `path` in the convention `to` ("gpt-oss", "modelopt",
    "compressed-tensors", "ggml") when it holds the same values bit for bit; raises naming the first
    tensor and element it cannot hold; `only` / `skip` are regular expressions on weight and tensor
    names; `shard=(K, N)` does the K-th of N slices of the weights.
    Returns the files written."""
    return _native.checkpoint_convert(os.fspath(path), to, os.fspath(out), threads, shard, only, skip)
