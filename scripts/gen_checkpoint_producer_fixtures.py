"""Makes tests/fixtures/checkpoints/producers/: small quantized checkpoints saved by their
producers' own exporters, each with the values the producer's own dequantizer gives.

Run in a venv with the pinned producers:
    pip install torch==2.15.0 compressed-tensors==0.20.0 nvidia-modelopt==0.47.0 \
        transformers==5.24.0 safetensors==0.8.0 numpy==2.4.6
    python scripts/gen_checkpoint_producer_fixtures.py tests/fixtures/checkpoints/producers

Folders (each a checkpoint as the producer writes it) and, beside each, NAME.expected.safetensors:
every quantized weight dequantized by the producer (float32, the weight's name and shape).
- compressed-tensors-nvfp4/, compressed-tensors-fp8/, compressed-tensors-fp8-block/: a model of
  one bias-free Linear with compressed-tensors 0.20.0's presets NVFP4, FP8 and FP8_BLOCK applied
  (apply_quantization_config); the weight scales are set as an observer sets them (min/max per
  group, tile or tensor, through compressed-tensors' own calculate_qparams and generate_gparam:
  compressed-tensors 0.20.0 leaves calibration to llm-compressor), then
  ModelCompressor.compress_model, safetensors.torch.save_file of the state dict and
  ModelCompressor.update_config (config.json). Expected: ModelCompressor.decompress_model.
- modelopt-nvfp4/: a one-layer LlamaForCausalLM (transformers 5.24.0, random weights, made from a
  config: nothing downloaded) quantized by nvidia-modelopt 0.47.0 mtq.quantize(NVFP4_DEFAULT_CFG)
  with a forward pass over random tokens as calibration, exported by export_hf_checkpoint on the
  CPU (model.safetensors, config.json, hf_quant_config.json; generation_config.json dropped).
  Expected: NVFP4QTensor(...).dequantize with the exported weight_scale and weight_scale_2.
"""

import json
import os
import shutil
import sys

import torch
from safetensors.torch import load_file, save_file

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
torch.manual_seed(27)


def compressed_tensors(name, preset, fmt, rows, cols):
    from compressed_tensors.compressors import ModelCompressor
    from compressed_tensors.quantization import (QuantizationConfig, QuantizationScheme, QuantizationStatus,
                                                 apply_quantization_config)
    from compressed_tensors.quantization.quant_scheme import PRESET_SCHEMES
    from compressed_tensors.quantization.utils.helpers import calculate_qparams, generate_gparam

    model = torch.nn.Sequential()
    model.add_module("proj", torch.nn.Linear(cols, rows, bias=False))
    with torch.no_grad():
        # Rows of different magnitudes, so the block scales differ.
        model.proj.weight.mul_(torch.logspace(-3, 1, rows).reshape(rows, 1))
    scheme = QuantizationScheme(targets=["Linear"], **PRESET_SCHEMES[preset])
    apply_quantization_config(model, QuantizationConfig(config_groups={"group_0": scheme}, format=fmt))
    layer = model.proj
    args = layer.quantization_scheme.weights
    w = layer.weight.detach()
    params = {}
    if args.strategy == "tensor_group":
        params["weight_global_scale"] = generate_gparam(w.amin(), w.amax())
        groups = w.reshape(rows, -1, args.group_size)
        lo, hi = groups.amin(-1), groups.amax(-1)
    elif args.strategy == "block":
        bh, bw = args.block_structure
        tiles = w.reshape(rows // bh, bh, cols // bw, bw)
        lo, hi = tiles.amin(dim=(1, 3)), tiles.amax(dim=(1, 3))
    elif args.strategy == "channel":
        lo, hi = w.amin(1, keepdim=True), w.amax(1, keepdim=True)
    else:
        lo, hi = w.amin().reshape(1), w.amax().reshape(1)
    scale, zero_point = calculate_qparams(lo, hi, args, global_scale=params.get("weight_global_scale"))
    params["weight_scale"], params["weight_zero_point"] = scale, zero_point
    with torch.no_grad():
        for key, value in params.items():
            getattr(layer, key).copy_(value.reshape(getattr(layer, key).shape))
    layer.quantization_status = QuantizationStatus.FROZEN
    compressor = ModelCompressor.from_pretrained_model(model, quantization_format=fmt)
    compressor.compress_model(model)
    folder = os.path.join(out, name)
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    save_file({k: v.contiguous() for k, v in model.state_dict().items()}, os.path.join(folder, "model.safetensors"),
              metadata={"format": "pt"})
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump({"architectures": ["Linear"]}, f)
    compressor.update_config(folder)
    compressor.decompress_model(model)
    expected = {"proj.weight": model.proj.weight.detach().to(torch.float32).contiguous()}
    save_file(expected, os.path.join(out, f"{name}.expected.safetensors"))


def modelopt_nvfp4(name):
    import modelopt.torch.quantization as mtq
    from modelopt.torch.export import export_hf_checkpoint
    from modelopt.torch.quantization.qtensor.nvfp4_tensor import NVFP4QTensor
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(vocab_size=32, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                         num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=16,
                         architectures=["LlamaForCausalLM"])
    model = LlamaForCausalLM(config).float()
    tokens = torch.randint(0, 32, (2, 16))
    model = mtq.quantize(model, mtq.NVFP4_DEFAULT_CFG, lambda m: m(tokens))
    folder = os.path.join(out, name)
    shutil.rmtree(folder, ignore_errors=True)
    export_hf_checkpoint(model, dtype=torch.float32, export_dir=folder)
    os.remove(os.path.join(folder, "generation_config.json"))
    tensors = load_file(os.path.join(folder, "model.safetensors"))
    expected = {}
    for key, packed in tensors.items():
        if not key.endswith(".weight") or key + "_scale_2" not in tensors:
            continue
        shape = torch.Size([packed.shape[0], packed.shape[1] * 2])
        q = NVFP4QTensor(shape, torch.float32, packed)
        values = q.dequantize(dtype=torch.float32, scale=tensors[key + "_scale"],
                              double_scale=tensors[key + "_scale_2"], block_sizes={-1: 16})
        expected[key] = values.to(torch.float32).contiguous()
    save_file(expected, os.path.join(out, f"{name}.expected.safetensors"))


compressed_tensors("compressed-tensors-nvfp4", "NVFP4", "nvfp4-pack-quantized", 8, 64)
compressed_tensors("compressed-tensors-fp8", "FP8", "float-quantized", 8, 64)
compressed_tensors("compressed-tensors-fp8-block", "FP8_BLOCK", "float-quantized", 256, 128)
modelopt_nvfp4("modelopt-nvfp4")
print("wrote", sorted(os.listdir(out)))
