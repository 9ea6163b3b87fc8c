"""Checks `lowbit checkpoint quantize` outputs with the loaders that read them in Hugging Face
transformers: the gpt-oss MXFP4 layout and the DeepSeek-V3 FP8 layout.

Optional, not in CI (it needs torch). Run in a venv with the pinned versions:
    pip install torch==2.15.0 transformers==5.24.0 safetensors==0.8.0 numpy==2.4.6
    python scripts/crosscheck_checkpoint_loaders.py --lowbit target/release/lowbit

The functions called are the ones transformers 5.24.0 runs on the CPU when it loads these files
with dequantization:
- gpt-oss MXFP4 (`NAME_blocks` U8 [..., G, 16], `NAME_scales` U8 [..., G]):
  `transformers.integrations.mxfp4.convert_moe_packed_tensors(blocks, scales, dtype=...)`, which
  returns the experts' weight transposed to [E, N, M] for gpt-oss's forward pass (so it is
  compared transposed back);
- DeepSeek FP8 (`NAME` F8_E4M3, `NAME_scale_inv` F32 [ceil(M/128), ceil(N/128)]):
  `transformers.integrations.finegrained_fp8.Fp8Dequantize(...).convert({"weight": ...,
  "weight_scale_inv": ...})`, the conversion op of `from_pretrained(..., dequantize=True)`
  (it requires whole 128 x 128 tiles, so the shapes here are multiples of 128).

An original checkpoint (normal float32 values, one MoE expert tensor and one linear weight) is
quantized by `lowbit checkpoint quantize` under ocp:mxfp4 (written in the gpt-oss layout),
deepseek:fp8 and deepseek:fp8,scale_fmt=ue8m0, dequantized by `lowbit checkpoint dequantize`
(float32, and bfloat16 for MXFP4, whose loader decodes in bfloat16), and compared bit for bit
with the loader's output. It prints what it compared and fails (exit 1) on any difference or
when it compared nothing.
"""

import argparse
import json
import pathlib
import subprocess
import sys
import tempfile

import numpy as np
import torch
from safetensors.numpy import save_file
from safetensors.torch import load_file
from transformers.integrations.finegrained_fp8 import Fp8Dequantize
from transformers.integrations.mxfp4 import convert_moe_packed_tensors

EXPERTS = "model.layers.0.mlp.experts.down_proj"
LINEAR = "model.layers.0.self_attn.o_proj.weight"


def _lowbit(binary, *args):
    done = subprocess.run([binary, "checkpoint", *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"lowbit checkpoint {' '.join(args)} failed: {done.stderr}")


def _same_bits(ours, theirs, what):
    """Counts the elements compared; reports and counts a difference."""
    if ours.shape != theirs.shape or ours.dtype != theirs.dtype:
        print(f"DIFFERENT {what}: ours {ours.dtype}{list(ours.shape)}, theirs {theirs.dtype}{list(theirs.shape)}")
        return ours.numel(), 1
    a, b = ours.contiguous().view(torch.int16 if ours.dtype == torch.bfloat16 else torch.int32), theirs.contiguous().view(
        torch.int16 if theirs.dtype == torch.bfloat16 else torch.int32
    )
    differ = int((a != b).sum())
    first = ""
    if differ:
        k = int((a != b).flatten().nonzero()[0])
        first = f"; first at flat index {k}: ours {ours.flatten()[k].item()!r}, theirs {theirs.flatten()[k].item()!r}"
    print(f"{'identical' if differ == 0 else 'DIFFERENT'} {what}: {ours.numel()} elements, {differ} differ{first}")
    return ours.numel(), differ


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lowbit", required=True, help="the lowbit binary")
    args = parser.parse_args()
    rng = np.random.default_rng(27)
    compared = differing = 0
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        original = tmp / "original"
        original.mkdir()
        # Wide-ranging values so that many scale codes occur; zeros and a few large blocks too.
        experts = (rng.standard_normal((4, 256, 384)) * np.exp2(rng.integers(-20, 20, size=(4, 256, 1)))).astype(np.float32)
        experts[0, :4] = 0.0
        # Blocks whose scales are at the ends of E8M0: subnormal and near-overflow values.
        experts[1, :8] = (rng.standard_normal((8, 384)) * 2.0**-135).astype(np.float32)
        experts[1, 8:16] = (rng.standard_normal((8, 384)) * 2.0**120).astype(np.float32)
        linear = (rng.standard_normal((384, 512)) * np.exp2(rng.integers(-12, 12, size=(384, 1)))).astype(np.float32)
        save_file({EXPERTS: experts, LINEAR: linear}, str(original / "model.safetensors"), metadata={"format": "pt"})
        (original / "config.json").write_text(json.dumps({"model_type": "test"}))

        # gpt-oss MXFP4.
        mx = tmp / "mxfp4"
        _lowbit(args.lowbit, "quantize", str(original), "--scheme", "ocp:mxfp4", "--only", "experts", "--out", str(mx))
        stored = load_file(str(mx / "model.safetensors"))
        blocks, scales = stored[EXPERTS + "_blocks"], stored[EXPERTS + "_scales"]
        for dtype, name in [(torch.float32, "f32"), (torch.bfloat16, "bf16")]:
            out = tmp / f"mxfp4-{name}.safetensors"
            _lowbit(args.lowbit, "dequantize", str(mx), "--out", str(out), "--dtype", name)
            ours = load_file(str(out))[EXPERTS]
            theirs = convert_moe_packed_tensors(blocks, scales, dtype=dtype).transpose(1, 2)
            n, d = _same_bits(ours, theirs, f"gpt-oss MXFP4 {EXPERTS} to {name} (mxfp4.convert_moe_packed_tensors)")
            compared, differing = compared + n, differing + d

        # DeepSeek FP8, both scale formats.
        for scheme in ["deepseek:fp8", "deepseek:fp8,scale_fmt=ue8m0"]:
            fp8 = tmp / scheme.replace(":", "-").replace(",", "-").replace("=", "-")
            _lowbit(args.lowbit, "quantize", str(original), "--scheme", scheme, "--only", "o_proj", "--out", str(fp8))
            stored = load_file(str(fp8 / "model.safetensors"))
            weight, scale_inv = stored[LINEAR], stored[LINEAR.removesuffix("weight") + "weight_scale_inv"]
            out = tmp / "fp8-f32.safetensors"
            _lowbit(args.lowbit, "dequantize", str(fp8), "--out", str(out), "--dtype", "f32")
            ours = load_file(str(out))[LINEAR]
            theirs = Fp8Dequantize(None).convert({"weight": weight, "weight_scale_inv": scale_inv})["weight"]
            n, d = _same_bits(ours, theirs, f"{scheme} {LINEAR} to f32 (finegrained_fp8.Fp8Dequantize)")
            compared, differing = compared + n, differing + d
    print(f"{compared} elements compared, {differing} comparisons with differences")
    if compared == 0 or differing:
        sys.exit(1)


if __name__ == "__main__":
    main()
