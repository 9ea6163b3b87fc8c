"""Checkpoints: safetensors files (single, or shards through ``model.safetensors.index.json``) and
GGUF v3 files, opened and checked by the Rust crate (``lowbit::checkpoint``: every damaged-file
case is a :class:`lowbit.FileError` naming the file, the tensor and the byte).

``open(path)`` gives a read-only mapping of tensor names to numpy arrays. An array is a view of
the memory-mapped file (no copy) when numpy holds its dtype as stored: float32/16/64, bfloat16 and
the float8 types (ml_dtypes), integers, bool; ggml blocks are viewed as their raw uint8 bytes.
float4 and float6 tensors, which the file packs below a byte, are unpacked (a copy, one element a
byte as ml_dtypes holds them).

>>> ckpt = lowbit.checkpoint.open("model.safetensors")       # doctest: +SKIP
>>> ckpt["layer.weight_scale"]                               # doctest: +SKIP
>>> ckpt.scheme("layer.weight")                               # "modelopt:nvfp4"  # doctest: +SKIP
>>> ckpt.dequantize("layer.weight")                           # float32, the logical shape  # doctest: +SKIP

A *logical weight* (:meth:`Checkpoint.weights`) groups a quantized weight's tensors (elements,
block scales, per-tensor scale) under the weight's name, with the convention recognised (gpt-oss
MXFP4, DeepSeek FP8, ModelOpt NVFP4, compressed-tensors, GGUF) and why.
"""

from __future__ import annotations

import mmap
import os
import warnings
from typing import Any, Dict, Iterator, List, Mapping, Optional

import numpy as np

from . import _native
from . import _dtypes
from ._checkpoint_tools import convert, quantize, which  # noqa: F401 (the module's API)

__all__ = ["open", "dequantize", "write_gguf", "Checkpoint", "quantize", "which", "convert"]

_builtin_open = open


class Checkpoint(Mapping[str, np.ndarray]):
    """An open checkpoint: a mapping of tensor names to numpy arrays (see the module's text)."""

    def __init__(self, path: Any) -> None:
        self._native = _native.checkpoint_open(os.fspath(path))
        self._tensors: Dict[str, Dict[str, Any]] = {t["name"]: t for t in self._native.tensors()}
        self._weights: Dict[str, Dict[str, Any]] = {w["name"]: w for w in self._native.weights()}
        self._maps: Dict[str, mmap.mmap] = {}

    @property
    def container(self) -> str:
        """``"safetensors"`` or ``"gguf"``."""
        return self._native.container()

    def tensors(self) -> List[Dict[str, Any]]:
        """Every stored tensor: name, dtype (an ONNX name, or ``ggml:TYPE``), shape (numpy order),
        file, offset and nbytes."""
        return [dict(t) for t in self._tensors.values()]

    def weights(self) -> List[Dict[str, Any]]:
        """Every logical weight: name, convention, scheme, why, shape, tensors, problems."""
        return [dict(w) for w in self._weights.values()]

    def _weight(self, name: str) -> Dict[str, Any]:
        w = self._weights.get(name)
        if w is None:
            for candidate in self._weights.values():
                if name in candidate["tensors"]:
                    return candidate
            raise KeyError(name)
        return w

    def scheme(self, name: str) -> Optional[str]:
        """The lowbit scheme of the weight `name` (or of the weight a tensor `name` belongs to):
        ``"ocp:mxfp4"``, ``"modelopt:nvfp4"``, ``"ggml:q8_0"``, ...; None when not quantized."""
        return self._weight(name)["scheme"]

    def dequantize(self, name: str) -> np.ndarray:
        """The weight `name` decoded as its convention says (float32, its logical shape); a plain
        tensor converted to float32."""
        w = self._weight(name)
        return self._native.dequantize(w["name"]).reshape(w["shape"])

    def _map(self, file: str) -> mmap.mmap:
        m = self._maps.get(file)
        if m is None:
            with _builtin_open(file, "rb") as f:
                m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
            self._maps[file] = m
        return m

    def __getitem__(self, name: str) -> np.ndarray:
        t = self._tensors[name]
        shape = tuple(t["shape"])
        raw = np.frombuffer(self._map(t["file"]), np.uint8, count=t["nbytes"], offset=t["offset"]) if t["nbytes"] else np.zeros(0, np.uint8)
        dtype = t["dtype"]
        if dtype.startswith("ggml:"):
            return raw
        if dtype in _dtypes.SUB_BYTE:
            from . import unpack

            return unpack(raw, dtype, shape)
        if dtype == "COMPLEX64":
            return raw.view(np.complex64).reshape(shape)
        return raw.view(_dtypes.numpy_dtype(dtype)).reshape(shape)

    def __iter__(self) -> Iterator[str]:
        return iter(self._tensors)

    def __len__(self) -> int:
        return len(self._tensors)

    def __repr__(self) -> str:
        return f"<lowbit.checkpoint.Checkpoint {self.container}, {len(self)} tensors, {len(self._weights)} weights>"


def open(path: Any) -> Checkpoint:  # noqa: A001 (`lowbit.checkpoint.open`, as `open` reads a file)
    """Opens a checkpoint: a ``.safetensors`` file, a GGUF file, a shard index, or a folder holding
    one (with its ``config.json`` / ``hf_quant_config.json``)."""
    return Checkpoint(path)



def dequantize(path: Any, out: Any, dtype: str = "float32", shard: Optional[tuple] = None, threads: int = 1,
               keep_unsupported: bool = False) -> None:
    """Writes the checkpoint at `path` dequantized into the safetensors file `out`, all or nothing,
    as ``lowbit checkpoint dequantize`` does: every quantized weight decoded as its convention says,
    other float tensors converted to `dtype` (``"float32"``, ``"bfloat16"`` or ``"float16"``), the
    rest copied. ``shard=(k, n)`` writes only the k-th of n contiguous slices of the weights (k from
    1; the n slices hold every weight once), so that n workers can each take one: a Dask or Ray task
    per shard, for instance. One thread streams each weight a piece at a time (bounded memory);
    ``threads=N`` decodes N weights at once, each whole in memory. The GIL is released meanwhile.
    A weight lowbit cannot decode raises :class:`lowbit.Error` naming it; with
    ``keep_unsupported=True`` its tensors are copied as stored and a :class:`UserWarning` names
    each."""
    if shard is not None:
        k, n = shard
        shard = (int(k), int(n))
    kept = _native.checkpoint_dequantize(os.fspath(path), os.fspath(out), dtype, shard, int(threads),
                                         bool(keep_unsupported))
    for note in kept:
        warnings.warn(note, UserWarning, stacklevel=2)


def write_gguf(path: Any, tensors: Mapping[str, tuple], metadata: Optional[Mapping[str, str]] = None) -> None:
    """Writes a GGUF v3 file, all or nothing (data aligned to 32 bytes, as gguf-py writes it).
    `tensors` maps each name to ``(ggml_type, shape, data)``: the type's name as gguf-py spells it
    (``"F32"``, ``"F16"``, ``"BF16"``, ``"Q8_0"``, ``"Q4_0"``, ``"MXFP4"``, ``"NVFP4"``), the
    logical shape in numpy order, and the raw bytes (a numpy array or bytes): plain little-endian
    elements, or ggml's blocks. `metadata` holds string key/values."""
    items = []
    for name, (ggml_type, shape, data) in tensors.items():
        raw = data.tobytes() if isinstance(data, np.ndarray) else bytes(data)
        items.append((name, str(ggml_type), [int(d) for d in shape], raw))
    _native.checkpoint_write_gguf(os.fspath(path), items, list((metadata or {}).items()))
