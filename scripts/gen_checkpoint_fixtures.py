"""Makes the checkpoint fixtures of tests/fixtures/checkpoints/ with the producers' own code.

Run in a venv with the pinned producers (scripts/peers-venv.sh's pins plus):
    pip install safetensors==0.8.0 gguf==0.19.0 numpy==2.4.6 torch==2.15.0
    python scripts/gen_checkpoint_fixtures.py tests/fixtures/checkpoints

Files (each small; the tests read them with lowbit and compare with the values recorded here):
- plain.safetensors: written by safetensors.torch.save_file (torch 2.15.0): float32, float16,
  bfloat16, float8_e4m3fn, float8_e5m2, float8_e8m0fnu, int64, uint8 and bool tensors.
  plain.expected.json: each tensor's values as float64 (torch's own .double()), dtype and shape.
- sharded/: model-0000K-of-00002.safetensors + model.safetensors.index.json, written by
  safetensors.numpy.save_file and json (the layout transformers writes).
- ggml.gguf: written by gguf.GGUFWriter 0.19.0: F32, F16, BF16, and Q8_0, Q4_0, MXFP4, NVFP4
  tensors quantized by gguf.quants.quantize (gguf-py's numpy port of ggml-quants.c; NVFP4,
  which gguf-py cannot quantize, as random blocks).
  ggml.expected.safetensors: gguf.quants.dequantize of each tensor (float32, numpy shape).
"""

import json
import os
import sys

import numpy as np
import torch
from safetensors.numpy import save_file as save_numpy
from safetensors.torch import save_file as save_torch

import gguf
from gguf.quants import dequantize, quantize

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(27)

# plain.safetensors
base = torch.tensor([0.0, -0.0, 1.0, -2.5, 0.333, 448.0, 1e-3, -7.0], dtype=torch.float32)
plain = {
    "f32": base.reshape(2, 4),
    "f16": base.to(torch.float16),
    "bf16": base.to(torch.bfloat16).reshape(4, 2),
    "e4m3": base.to(torch.float8_e4m3fn),
    "e5m2": base.to(torch.float8_e5m2),
    "e8m0": torch.tensor([1.0, 2.0, 0.5, 2.0**-127], dtype=torch.float32).to(torch.float8_e8m0fnu),
    "i64": torch.tensor([-3, 0, 2**40], dtype=torch.int64),
    "u8": torch.tensor([[0, 255]], dtype=torch.uint8),
    "flag": torch.tensor([True, False, True]),
}
save_torch(plain, os.path.join(out, "plain.safetensors"), metadata={"format": "pt"})
expected = {
    name: {"shape": list(t.shape), "dtype": str(t.dtype).removeprefix("torch."), "values": t.double().flatten().tolist()}
    for name, t in plain.items()
}
with open(os.path.join(out, "plain.expected.json"), "w") as f:
    json.dump(expected, f, indent=1, sort_keys=True)
    f.write("\n")

# sharded/
shard_dir = os.path.join(out, "sharded")
os.makedirs(shard_dir, exist_ok=True)
shards = {
    "model-00001-of-00002.safetensors": {"a.weight": np.arange(6, dtype=np.float32).reshape(2, 3)},
    "model-00002-of-00002.safetensors": {"b.weight": np.array([1.5, -2.0], dtype=np.float16), "b.bias": np.array([7], dtype=np.int32)},
}
weight_map = {}
for name, tensors in shards.items():
    save_numpy(tensors, os.path.join(shard_dir, name), metadata={"format": "pt"})
    weight_map.update({t: name for t in tensors})
with open(os.path.join(shard_dir, "model.safetensors.index.json"), "w") as f:
    json.dump({"metadata": {"total_size": 40}, "weight_map": dict(sorted(weight_map.items()))}, f, indent=2)
    f.write("\n")

# ggml.gguf
writer = gguf.GGUFWriter(os.path.join(out, "ggml.gguf"), "llama")
writer.add_string("general.name", "lowbit fixture")
dequantized = {}
x = (rng.standard_normal((2, 64)) * np.array([[1.0], [1e-3]])).astype(np.float32)
x[0, 5] = 0.0
for name, qtype in [
    ("q8_0", gguf.GGMLQuantizationType.Q8_0),
    ("q4_0", gguf.GGMLQuantizationType.Q4_0),
    ("mxfp4", gguf.GGMLQuantizationType.MXFP4),
]:
    q = quantize(x, qtype)
    writer.add_tensor(name, q, raw_shape=q.shape, raw_dtype=qtype)
    dequantized[name] = dequantize(q, qtype).astype(np.float32).reshape(x.shape)
# gguf-py 0.19.0 has no NVFP4 quantizer (only dequantize_blocks): random blocks, four UE4M3
# scale bytes (0x20..0x5F: 2^-3 .. 2^4.9) then 32 bytes of E2M1 nibbles, decoded by gguf-py.
nvfp4 = rng.integers(0, 256, size=(2, 2, 36), dtype=np.uint8)
nvfp4[:, :, :4] = rng.integers(0x20, 0x60, size=(2, 2, 4), dtype=np.uint8)
nvfp4 = nvfp4.reshape(2, 72)
writer.add_tensor("nvfp4", nvfp4, raw_shape=nvfp4.shape, raw_dtype=gguf.GGMLQuantizationType.NVFP4)
dequantized["nvfp4"] = dequantize(nvfp4, gguf.GGMLQuantizationType.NVFP4).astype(np.float32).reshape(2, 128)
for name, dtype, qtype in [
    ("f32", np.float32, gguf.GGMLQuantizationType.F32),
    ("f16", np.float16, gguf.GGMLQuantizationType.F16),
]:
    t = x[:, :8].astype(dtype)
    writer.add_tensor(name, t, raw_dtype=qtype)
    dequantized[name] = t.astype(np.float32)
bf16 = quantize(x[:, :8], gguf.GGMLQuantizationType.BF16)
writer.add_tensor("bf16", bf16, raw_shape=bf16.shape, raw_dtype=gguf.GGMLQuantizationType.BF16)
dequantized["bf16"] = dequantize(bf16, gguf.GGMLQuantizationType.BF16).astype(np.float32)
writer.write_header_to_file()
writer.write_kv_data_to_file()
writer.write_tensors_to_file()
writer.close()
save_numpy(dequantized, os.path.join(out, "ggml.expected.safetensors"))
print("wrote", sorted(os.listdir(out)))
