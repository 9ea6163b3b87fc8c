#!/usr/bin/env python3
"""Writes tests/data/blocks/: block-scaled quantization computed by the live implementations
(torchao, NVIDIA ModelOpt, compressed-tensors, and gguf's numpy port of ggml's block types), and by a
torch transcription of DeepSeek-V3's FP8 kernel arithmetic, so that lowbit's tests check its recipes
bit for bit without torch. docs/research/block_recipes.md says what each recipe does;
tests/data/blocks/README.md describes the files.

    python3 -m venv target/blocks-venv
    target/blocks-venv/bin/pip install torch==2.15.0 torchao==0.18.0 compressed-tensors==0.20.0 \
        nvidia-modelopt==0.47.0 gguf==0.19.0 safetensors==0.8.0 numpy==2.4.6 ml_dtypes==0.6.0
    target/blocks-venv/bin/python scripts/gen_block_fixtures.py

It refuses to run (exit 2) when a package is missing or not at its pinned version, so the files
always say which code made them. Every run writes the same bytes (seeded inputs, single-threaded
torch); `--check` regenerates into memory and exits 1 if any file differs from the one on disk.
Both print how many cases and elements they wrote or compared and fail (exit 1) on none.
"""

import argparse
import hashlib
import importlib.metadata
import json
import os
import sys
import warnings

PINS = {
    "torch": "2.15.0",
    "torchao": "0.18.0",
    "compressed-tensors": "0.20.0",
    "nvidia-modelopt": "0.47.0",
    "gguf": "0.19.0",
    "numpy": "2.4.6",  # gguf's quantizers are numpy code: their NaN casts depend on it
    "ml_dtypes": "0.6.0",
}
FORMAT_VERSION = 1
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "blocks")


def fail(message):
    print(f"gen_block_fixtures: {message}", file=sys.stderr)
    sys.exit(2)


def check_pins():
    versions = {}
    for name, pin in PINS.items():
        try:
            have = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            fail(f"{name} is not installed (pinned: {pin or 'any'})")
        if pin is not None and have != pin:
            fail(f"{name} {have} is installed, the fixtures are pinned to {pin}")
        versions[name] = have
    return versions


# The imports need the pinned packages; they come after the version check.
versions = None
np = ml_dtypes = torch = None


def import_peers():
    global np, ml_dtypes, torch
    import numpy
    import ml_dtypes as mld
    import torch as t

    np, ml_dtypes, torch = numpy, mld, t
    torch.set_num_threads(1)
    warnings.filterwarnings("ignore")


# ---------------------------------------------------------------------------------------------
# Inputs
# ---------------------------------------------------------------------------------------------

F32_MAX = 3.4028234663852886e38


def f32(bits):
    return float(np.array([bits], dtype=np.uint32).view(np.float32)[0])


def motifs():
    """The edge blocks of the recipes, each 16 values (tiled to the scheme's block length)."""
    nan, inf = float("nan"), float("inf")
    below4 = f32(0x407FFFFF)  # largest float32 below 4
    above4 = f32(0x40800001)
    ramp = [1.0, -0.5, 0.25, 0.75, -1.5, 2.0, -3.0, 0.125, 1.25, -2.5, 0.375, -0.0625, 1.75, 0.5, -1.0]
    out = []
    out.append(("zeros", [0.0] * 16))
    out.append(("negative_zeros", [-0.0] * 16))
    out.append(("signed_zeros_and_tiny", [2.0, -0.0, 0.0, -1e-30, 1e-30, -0.0] + ramp[:10]))
    out.append(("nan", [1.0, nan] + ramp[:14]))
    out.append(("pos_inf", [1.0, inf] + ramp[:14]))
    out.append(("neg_inf", [-inf, 1.0] + ramp[:14]))
    out.append(("nan_last", ramp[:15] + [nan]))
    out.append(("f32_subnormals", [f32(k) for k in (1, 2, 3, 7, 0x100, 0x3FFFFF, 0x400000, 0x7FFFFF)]
                + [-f32(k) for k in (1, 5, 0x1000, 0x200000, 0x7FFFFE, 9, 0x12345, 0x400001)]))
    out.append(("f32_max", [F32_MAX, -F32_MAX, 1.0, 1e38, -3e38] + ramp[:11]))
    # The ramp's largest magnitude is 3, so the first value is the block's amax.
    out.append(("amax_pow2", [4.0] + ramp))
    out.append(("amax_below_pow2", [below4] + ramp))
    out.append(("amax_above_pow2", [above4] + ramp))
    # Just below 2^20 and 2^-20: a float32 log2 rounds these up to the power of two.
    out.append(("amax_below_2^20", [f32(0x497FFFFF)] + [v * 2.0 ** 18 for v in ramp]))
    out.append(("amax_below_2^-20", [f32(0x357FFFFF)] + [v * 2.0 ** -22 for v in ramp]))
    out.append(("negative_amax", [-5.0] + ramp))
    out.append(("e2m1_ties", [6.0, 0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0,
                              -0.25, -0.75, -1.25, -1.75, -2.5, -3.5, -5.0, -6.0]))
    # amax/6 on a UE4M3 midpoint: 1.0625 (between 1 and 1.125, even below), 1.1875 (even above),
    # 1.5 * 2^-9 (subnormal scales 2^-9 and 2^-8), 300 (ggml's [256, 448] range), 500 (over 448).
    for name, scale in (("ue4m3_tie_1.0625", 1.0625), ("ue4m3_tie_1.1875", 1.1875),
                        ("ue4m3_tie_subnormal", 1.5 * 2.0 ** -9), ("ue4m3_scale_300", 300.0),
                        ("ue4m3_scale_over_448", 500.0)):
        amax = 6.0 * scale
        out.append((name, [amax] + [v * scale * 2.0 for v in ramp]))
    # E4M3 element ties under a unit scale (amax 448): 1.0625, 1.1875, 2^-10, 3 * 2^-10, 464.
    out.append(("e4m3_ties", [448.0, 1.0625, 1.1875, 2.0 ** -10, 3 * 2.0 ** -10, -1.0625, -1.1875,
                              -(2.0 ** -10), -3 * 2.0 ** -10, 240.0, 232.0, -232.0, 0.9375 + 2 ** -5,
                              17.0, 19.0, -21.0]))
    # Integer ties under d = 1: Q8_0 (amax 127) and Q4_0 (max -8).
    out.append(("int8_ties", [127.0, 0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 126.5, -126.5, 3.5, -3.5,
                              0.49999997, -0.49999997, 63.5, -63.5, 100.0]))
    out.append(("int4_ties", [-8.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 7.5, 7.4, -7.5, 6.5, -6.5,
                              0.49999997, -0.49999997, 3.5, -3.5]))
    # One large value and many that underflow the element format.
    out.append(("outlier", [1e6] + [v * 1e-4 for v in ramp]))
    # rceil: descale = amax / max_pos just above a power of two, at 2^0 and 2^-100 (float32 log2
    # cannot see the excess at -100).
    for name, k in (("rceil_above_2^0", 0), ("rceil_above_2^-100", -100)):
        amax = float(np.float32(448.0 * 2.0 ** k * (1 + 2.0 ** -22)))
        out.append((name, [amax] + [v * 2.0 ** k for v in ramp]))
    # EVEN mode: amax 7.0 rounds up to 8 at 1 mantissa bit, 5.5 does not.
    out.append(("even_round_up", [7.0] + ramp))
    out.append(("even_no_round", [5.5] + ramp))
    return out


def edge_input(block, dtype):
    """[n_motifs, block] float32 (or bfloat16/float16): motif i tiled across row i."""
    rows = []
    names = []
    for name, values in motifs():
        assert len(values) == 16, name
        rows.append(np.tile(np.array(values, dtype=np.float32), max(1, block // 16)))
        names.append(name)
    x = np.stack(rows).astype(np.float32)
    return names, in_dtype(x, dtype)


def random_input(rows, cols, seed, dtype):
    """Normal values whose magnitude changes every 16 elements (2^-20 .. 2^20), so that blocks of
    every size see different scales; a few heavy tails."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    groups = rng.integers(-20, 21, size=(rows, (cols + 15) // 16))
    x *= np.repeat(np.exp2(groups.astype(np.float32)), 16, axis=1)[:, :cols]
    tails = rng.random((rows, cols)) < 0.01
    x[tails] *= 50.0
    return in_dtype(x, dtype)


def in_dtype(x, dtype):
    """float32 values rounded to the case's input dtype (numpy's nearest-even casts; a float16
    overflow is the infinity, a NaN keeps its sign and top payload bits)."""
    if dtype == "bf16":
        return x.astype(ml_dtypes.bfloat16)
    if dtype == "f16":
        with np.errstate(all="ignore"):
            return x.astype(np.float16)
    return x


def to_torch(x):
    if x.dtype == ml_dtypes.bfloat16:
        return torch.from_numpy(x.view(np.uint16).astype(np.int16)).view(torch.bfloat16).clone()
    if x.dtype == np.float16:
        return torch.from_numpy(x.view(np.uint16).astype(np.int16)).view(torch.float16).clone()
    return torch.from_numpy(x.copy())


def as_f32(t):
    return t.detach().to(torch.float32).contiguous().numpy()


def unpack_nibbles_low_first(packed):
    packed = np.asarray(packed, dtype=np.uint8)
    out = np.empty(packed.shape[:-1] + (packed.shape[-1] * 2,), dtype=np.uint8)
    out[..., 0::2] = packed & 0x0F
    out[..., 1::2] = packed >> 4
    return out


# ---------------------------------------------------------------------------------------------
# Recipes: each takes (x as numpy float32 or bfloat16 array, params) and returns a dict of arrays
# ---------------------------------------------------------------------------------------------


def torchao_mx(x, fmt, mode):
    from torchao.prototype.mx_formats.config import ScaleCalculationMode
    from torchao.prototype.mx_formats.constants import DTYPE_FP6_E2M3, DTYPE_FP6_E3M2
    from torchao.prototype.mx_formats.kernels import unpack_uint4
    from torchao.prototype.mx_formats.mx_tensor import to_dtype, to_mx

    elem = {
        "mxfp8e4m3": torch.float8_e4m3fn,
        "mxfp8e5m2": torch.float8_e5m2,
        "mxfp6e2m3": DTYPE_FP6_E2M3,
        "mxfp6e3m2": DTYPE_FP6_E3M2,
        "mxfp4": torch.float4_e2m1fn_x2,
    }[fmt]
    t = to_torch(x)
    scale, data = to_mx(t, elem, 32, ScaleCalculationMode(mode))
    deq = to_dtype(data, scale, elem, 32, torch.float32)
    out = {"scales": scale.view(torch.uint8).numpy().copy(), "dequantized": as_f32(deq)}
    if fmt.startswith("mxfp8"):
        out["elements"] = data.view(torch.uint8).numpy().copy()
    elif fmt == "mxfp4":
        out["bytes"] = data.view(torch.uint8).numpy().copy()
        out["elements"] = unpack_uint4(data.view(torch.uint8)).numpy().copy()
    else:
        out["elements"] = data.numpy().copy()
    return out


def torchao_nvfp4(x, global_mode):
    from torchao.prototype.mx_formats.kernels import unpack_uint4
    from torchao.prototype.mx_formats.nvfp4_tensor import NVFP4Tensor, per_tensor_amax_to_scale

    t = to_torch(x)
    if global_mode is None:
        g = None
    elif global_mode == "amax":
        g = per_tensor_amax_to_scale(torch.amax(torch.abs(t)))
    else:
        g = torch.tensor(float(global_mode), dtype=torch.float32)
    q = NVFP4Tensor.to_nvfp4(t, per_tensor_scale=g)
    packed = q.qdata.view(torch.uint8)
    out = {
        "scales": q.scale.view(torch.uint8).numpy().copy(),
        "bytes": packed.numpy().copy(),
        "elements": unpack_uint4(packed.contiguous()).numpy().copy(),
        "dequantized": as_f32(q.dequantize(torch.float32)),
    }
    if g is not None:
        out["global_scale"] = np.array([g.item()], dtype=np.float32)
    return out


def modelopt_nvfp4(x, global_mode):
    from modelopt.torch.quantization.qtensor.nvfp4_tensor import NVFP4QTensor

    t = to_torch(x)
    if global_mode == "amax":
        g = None  # the quantizer derives it: amax / (6 * 448)
    else:
        g = torch.tensor(float(global_mode), dtype=torch.float32)
    q, scale, g_used = NVFP4QTensor.quantize(t, 16, weights_scaling_factor_2=g)
    packed = q._quantized_data
    out = {
        "scales": scale.view(torch.uint8).numpy().copy(),
        "global_scale": np.array([float(g_used)], dtype=np.float32),
        "bytes": packed.numpy().copy(),
        "elements": unpack_nibbles_low_first(packed.numpy()),
    }
    try:
        deq = q.dequantize(dtype=torch.float32, scale=scale, double_scale=g_used,
                           block_sizes={-1: 16})
        out["dequantized"] = as_f32(deq)
    except Exception as e:  # quantize pads a short block, dequantize then refuses the shape
        out["dequantize_error"] = error_text(e)
    return out


def ct_args(preset, **override):
    from compressed_tensors.quantization import QuantizationArgs
    from compressed_tensors.quantization.quant_scheme import PRESET_SCHEMES

    args = PRESET_SCHEMES[preset]["weights"]
    fields = args.model_dump()
    fields.update(override)
    return QuantizationArgs(**fields)


def group_min_max(t, n):
    """Per-group min and max along the last axis, as the observer hands them to
    calculate_qparams; a short last group is zero-padded here so that the implementation's own
    quantize decides what a short group gives (it refuses)."""
    rows, cols = t.shape
    padded = torch.nn.functional.pad(t, (0, (-cols) % n))
    groups = padded.reshape(rows, -1, n)
    return torch.amin(groups, dim=-1), torch.amax(groups, dim=-1)


def compressed_tensors_nvfp4(x, global_mode):
    from compressed_tensors.compressors.nvfp4.base import NVFP4PackedCompressor
    from compressed_tensors.compressors.nvfp4.helpers import quantize_and_pack_fp4
    from compressed_tensors.quantization import QuantizationScheme
    from compressed_tensors.quantization.utils.helpers import calculate_qparams, generate_gparam

    t = to_torch(x)
    args = ct_args("NVFP4")
    if global_mode == "amax":
        g = generate_gparam(torch.amin(t), torch.amax(t))
    else:
        g = torch.tensor([float(global_mode)], dtype=torch.float32)
    lo, hi = group_min_max(t, 16)
    scale, _ = calculate_qparams(lo, hi, args, global_scale=g)
    packed = quantize_and_pack_fp4(t, scale, global_scale=g, group_size=16)
    stored_scale = scale.to(torch.float8_e4m3fn)
    scheme = QuantizationScheme(targets=["Linear"], weights=args)
    restored = NVFP4PackedCompressor.decompress(
        {"weight_packed": packed, "weight_scale": stored_scale, "weight_global_scale": g}, scheme)
    return {
        "scales": stored_scale.view(torch.uint8).numpy().copy(),
        "global_scale": g.to(torch.float32).numpy().copy(),
        "bytes": packed.numpy().copy(),
        "elements": unpack_nibbles_low_first(packed.numpy()),
        "dequantized": as_f32(restored["weight"]),
    }


def compressed_tensors_mxfp4(x):
    """compressed-tensors' MXFP4 (preset `MXFP4`, format `mxfp4-pack-quantized`): E8M0 scales
    from calculate_qparams (generate_mx_scales), quantize_and_pack_fp4, the compressor's uint8
    scale, and MXFP4PackedCompressor.decompress."""
    from compressed_tensors.compressors.mxfp4.base import MXFP4PackedCompressor
    from compressed_tensors.compressors.nvfp4.helpers import quantize_and_pack_fp4
    from compressed_tensors.quantization import QuantizationScheme
    from compressed_tensors.quantization.utils.helpers import calculate_qparams

    t = to_torch(x)
    args = ct_args("MXFP4")
    lo, hi = group_min_max(t, 32)
    scale, _ = calculate_qparams(lo, hi, args)
    packed = quantize_and_pack_fp4(t, scale, group_size=32)
    stored_scale = MXFP4PackedCompressor._compress_scale(scale, args)
    scheme = QuantizationScheme(targets=["Linear"], weights=args)
    restored = MXFP4PackedCompressor.decompress(
        {"weight_packed": packed, "weight_scale": stored_scale}, scheme)
    return {
        "scales": stored_scale.view(torch.uint8).numpy().copy(),
        "bytes": packed.numpy().copy(),
        "elements": unpack_nibbles_low_first(packed.numpy()),
        "dequantized": as_f32(restored["weight"]),
    }


def compressed_tensors_fp8(x, strategy):
    """compressed-tensors' float-quantized FP8 weights: qparams from the min/max the observer
    would give (taken here in the input's dtype), quantize to float8_e4m3fn, dequantize."""
    from compressed_tensors.quantization import QuantizationStrategy
    from compressed_tensors.quantization.lifecycle.forward import dequantize, quantize
    from compressed_tensors.quantization.utils.helpers import calculate_qparams

    t = to_torch(x)
    rows, cols = t.shape
    if strategy == "tensor":
        args = ct_args("FP8")
        lo, hi = torch.amin(t).reshape(1), torch.amax(t).reshape(1)
    elif strategy == "channel":
        args = ct_args("FP8_DYNAMIC")
        lo, hi = torch.amin(t, dim=1, keepdim=True), torch.amax(t, dim=1, keepdim=True)
    elif strategy.startswith("group="):
        n = int(strategy.split("=")[1])
        args = ct_args("FP8", strategy=QuantizationStrategy.GROUP, group_size=n)
        lo, hi = group_min_max(t, n)
    elif strategy.startswith("block="):
        bh, bw = (int(v) for v in strategy.split("=")[1].split("x"))
        args = ct_args("FP8_BLOCK", block_structure=[bh, bw])
        pr, pc = (-rows) % bh, (-cols) % bw
        padded = torch.nn.functional.pad(t, (0, pc, 0, pr))
        tiles = padded.reshape((rows + pr) // bh, bh, (cols + pc) // bw, bw)
        lo, hi = torch.amin(tiles, dim=(1, 3)), torch.amax(tiles, dim=(1, 3))
    else:
        raise ValueError(strategy)
    scale, zp = calculate_qparams(lo, hi, args)
    q = quantize(t, scale, zp, args, dtype=torch.float8_e4m3fn)
    deq = dequantize(q, scale, zp, args, dtype=torch.float32)
    return {
        "elements": q.view(torch.uint8).numpy().copy(),
        "scales": scale.detach().numpy().copy() if scale.dtype == torch.float32
        else scale.view(torch.int16).numpy().view(np.uint16).copy(),
        "scales_dtype": {torch.bfloat16: "bf16", torch.float16: "f16"}.get(scale.dtype, "f32"),
        "dequantized": as_f32(deq),
    }


def deepseek_fp8(x, tile, scale_fmt):
    """DeepSeek-V3 inference/kernel.py act_quant's arithmetic (a Triton kernel, not runnable on a
    CPU) written with torch ops on the CPU, per tile: amax in float32, clamped to >= 1e-4,
    s = amax / 448, ue8m0: s = 2^ceil(log2 s); y = x / s cast to float8_e4m3fn (torch's cast).
    Dequantization is weight_dequant's x.float() * s. Short tiles are what weight_dequant's mask
    reads: the tile's amax over the elements that exist (the 1 x 128 form refuses them, as
    act_quant asserts)."""
    t = to_torch(x).to(torch.float32)
    rows, cols = t.shape
    th, tw = tile
    if th == 1 and cols % tw:
        # act_quant's own check (the 1 x 128 form is the activation quantizer).
        raise AssertionError(f"Last dimension size must be divisible by block_size (block_size={tw})")
    nr, nc = -(-rows // th), -(-cols // tw)
    q = torch.empty((rows, cols), dtype=torch.float8_e4m3fn)
    s_all = torch.empty((nr, nc), dtype=torch.float32)
    deq = torch.empty((rows, cols), dtype=torch.float32)
    for i in range(nr):
        for j in range(nc):
            blk = t[i * th:(i + 1) * th, j * tw:(j + 1) * tw]
            amax = torch.amax(torch.abs(blk))
            amax = torch.maximum(amax, torch.tensor(1e-4, dtype=torch.float32))
            s = amax / 448.0
            if scale_fmt == "ue8m0":
                s = torch.exp2(torch.ceil(torch.log2(s)))
            y = (blk / s).to(torch.float8_e4m3fn)
            q[i * th:(i + 1) * th, j * tw:(j + 1) * tw] = y
            s_all[i, j] = s
            deq[i * th:(i + 1) * th, j * tw:(j + 1) * tw] = y.to(torch.float32) * s
    return {
        "elements": q.view(torch.uint8).numpy().copy(),
        "scales": s_all.numpy().copy(),
        "dequantized": deq.numpy().copy(),
    }


GGML_BLOCKS = {"q8_0": (32, 34), "q4_0": (32, 18), "mxfp4": (32, 17), "nvfp4": (64, 36)}

# Edge rows on which gguf's numpy port and ggml's C reference give different blocks, by the rules
# read in ggml-quants.c (docs/research/block_recipes.md, `ggml:*`): the C running maximum skips a
# NaN (Q8_0: unless it is the block's last element), numpy's max and argmax propagate it; Q4_0's C
# keeps +0 as the maximum of an all -0.0 block, numpy's argmax picks the first -0.0.
GGUF_DIFFERS_FROM_GGML_C = {
    "q8_0": ["nan"],
    "q4_0": ["nan", "nan_last", "negative_zeros"],
    "mxfp4": ["nan", "nan_last"],
}


def split_ggml_blocks(name, blocks, shape):
    """Scale and element codes out of ggml block structs (layouts of ggml-common.h)."""
    block, size = GGML_BLOCKS[name]
    rows = shape[0]
    b = np.ascontiguousarray(blocks).reshape(-1, size)
    out = {}
    if name in ("q8_0", "q4_0"):
        out["scales"] = b[:, :2].copy().view(np.uint16).reshape(rows, -1)
        out["scales_dtype"] = "f16"
        if name == "q8_0":
            out["elements"] = b[:, 2:].reshape(shape).copy()
        else:  # byte j: element j low nibble, element j + 16 high nibble
            qs = b[:, 2:]
            out["elements"] = np.concatenate([qs & 0x0F, qs >> 4], axis=1).reshape(shape)
    elif name == "mxfp4":
        out["scales"] = b[:, 0].reshape(rows, -1).copy()
        qs = b[:, 1:]
        out["elements"] = np.concatenate([qs & 0x0F, qs >> 4], axis=1).reshape(shape)
    else:  # four UE4M3 scales, then per 16-element sub-block 8 bytes: element j low, j + 8 high
        out["scales"] = b[:, :4].reshape(rows, -1).copy()
        qs = b[:, 4:].reshape(-1, 4, 8)
        out["elements"] = np.concatenate([qs & 0x0F, qs >> 4], axis=2).reshape(shape)
    return out


def gguf_ggml(name, x):
    """gguf-py's numpy port of ggml's block types: gguf.quants.quantize, then its dequantize of
    those bytes. (ggml's C code is not run here; where the port differs from it is documented.)"""
    import gguf

    qtype = getattr(gguf.GGMLQuantizationType, name.upper())
    x = np.ascontiguousarray(x, dtype=np.float32)
    blocks = gguf.quants.quantize(x, qtype)
    deq = gguf.quants.dequantize(blocks, qtype).reshape(x.shape)
    out = {"bytes": np.ascontiguousarray(blocks).reshape(x.shape[0], -1), "dequantized": deq}
    out.update(split_ggml_blocks(name, blocks, x.shape))
    return out


# E2M1 values doubled, by E2M1 code (ggml's kvalues_mxfp4 convention, ggml-common.h).
E2M1_DOUBLED = (0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12)


def ue4m3_half(code):
    """Half the value of a ggml NVFP4 scale byte (ggml-impl.h ggml_ue4m3_to_fp32): 0x00 and 0x7F
    give 0; otherwise bits 6..3 are the exponent (bias 7, 0 = subnormal, m * 2^-9), bits 2..0 the
    mantissa, bit 7 is ignored. Exact, as a Fraction."""
    from fractions import Fraction

    if code in (0x00, 0x7F):
        return Fraction(0)
    exp, man = (code >> 3) & 0xF, code & 0x7
    raw = Fraction(man, 512) if exp == 0 else Fraction(8 + man, 8) * Fraction(2) ** (exp - 7)
    return raw / 2


def nvfp4_decode_grid():
    """Every NVFP4 scale byte (0..255) with every element code (0..15), as ggml block structs
    built here by the documented layout, and the value each element must decode to, computed by
    hand: kvalue * ue4m3_half (a zero product takes the sign of the kvalue). Sub-block c holds
    scale byte c; its element i has code (i + c) mod 16, so every code visits every position."""
    n_sub = 256
    scales = np.arange(n_sub, dtype=np.uint8).reshape(-1, 4)  # one super-block per row of 4
    codes = (np.arange(16)[None, :] + np.arange(n_sub)[:, None]) % 16  # [sub-block, element]
    codes = codes.astype(np.uint8).reshape(-1, 4, 16)
    qs = codes[..., :8] | (codes[..., 8:] << 4)  # byte j: element j low, element j + 8 high
    blocks = np.concatenate([scales, qs.reshape(-1, 32)], axis=1)  # [64 super-blocks, 36]
    expected = np.empty((n_sub, 16), dtype=np.float32)
    for c in range(n_sub):
        half = ue4m3_half(c)
        for i in range(16):
            k = E2M1_DOUBLED[int(codes.reshape(n_sub, 16)[c, i])]
            v = float(half * k)
            expected[c, i] = -0.0 if v == 0 and k < 0 else v
    rows = 4
    return blocks.reshape(rows, -1), expected.reshape(rows, -1)


def gguf_nvfp4_decode(blocks, expected):
    """gguf's NVFP4.dequantize_blocks on hand-built blocks; refuses (fail) unless it reproduces
    the hand-computed values bit for bit, so that the fixture rests on both."""
    import gguf

    with np.errstate(all="ignore"):
        deq = gguf.quants.dequantize(blocks, gguf.GGMLQuantizationType.NVFP4).reshape(expected.shape)
    differ = int(np.count_nonzero(deq.view(np.uint32) != expected.view(np.uint32)))
    if differ:
        fail(f"gguf's NVFP4 dequantize differs from the hand-computed values in {differ} of "
             f"{expected.size} elements: the documented scale/layout rules or gguf changed")
    out = {"bytes": blocks, "dequantized": deq}
    out.update(split_ggml_blocks("nvfp4", blocks, expected.shape))
    return out


# ---------------------------------------------------------------------------------------------
# Schemes and cases
# ---------------------------------------------------------------------------------------------


def schemes():
    """(scheme name, block length along the last axis (for the edge rows), input dtypes,
    function, implementation string)."""
    out = []
    for fmt in ("mxfp8e4m3", "mxfp8e5m2", "mxfp6e2m3", "mxfp6e3m2", "mxfp4"):
        for mode in ("floor", "rceil", "ceil", "even"):
            out.append((f"torchao:{fmt},scale={mode}", 32, ("f32", "bf16", "f16"),
                        lambda x, f=fmt, m=mode, g=None: torchao_mx(x, f, m),
                        "torchao 0.18.0 torchao.prototype.mx_formats.mx_tensor.to_mx + to_dtype"))
    out.append(("torchao:nvfp4", 16, ("f32", "bf16", "f16"), lambda x, g=None: torchao_nvfp4(x, g),
                "torchao 0.18.0 NVFP4Tensor.to_nvfp4 (nvfp4_quantize) + dequantize"))
    out.append(("torchao:nvfp4,global=amax", 16, ("f32", "bf16", "f16"),
                lambda x, g="amax": torchao_nvfp4(x, g),
                "torchao 0.18.0 NVFP4Tensor.to_nvfp4(per_tensor_scale=per_tensor_amax_to_scale(amax))"))
    out.append(("modelopt:nvfp4", 16, ("f32", "bf16", "f16"), lambda x, g="amax": modelopt_nvfp4(x, g),
                "nvidia-modelopt 0.47.0 NVFP4QTensor.quantize + dequantize"))
    out.append(("compressed-tensors:nvfp4", 16, ("f32", "bf16", "f16"),
                lambda x, g="amax": compressed_tensors_nvfp4(x, g),
                "compressed-tensors 0.20.0 generate_gparam + calculate_qparams + "
                "quantize_and_pack_fp4 + NVFP4PackedCompressor.decompress"))
    out.append(("compressed-tensors:mxfp4", 32, ("f32", "bf16", "f16"),
                lambda x, g=None: compressed_tensors_mxfp4(x),
                "compressed-tensors 0.20.0 calculate_qparams (generate_mx_scales) + "
                "quantize_and_pack_fp4 + MXFP4PackedCompressor"))
    for name in ("q8_0", "q4_0", "mxfp4"):
        out.append((f"ggml:{name}", GGML_BLOCKS[name][0], ("f32",),
                    lambda x, n=name, g=None: gguf_ggml(n, x),
                    f"gguf 0.19.0 gguf.quants.quantize + dequantize ({name.upper()}.quantize_blocks"
                    f" / dequantize_blocks: numpy port of ggml-quants.c quantize_row_{name}_ref /"
                    f" dequantize_row_{name})"))
    out.append(("ggml:nvfp4", None, (), lambda blocks, g=None: gguf_nvfp4_decode(*blocks),
                "blocks built by this script from ggml's documented NVFP4 layout and scale/element "
                "code meanings; values: gguf 0.19.0 NVFP4.dequantize_blocks (numpy port of "
                "ggml-quants.c dequantize_row_nvfp4), equal to the hand-computed values"))
    for fmt in (None, "ue8m0"):
        suffix = "" if fmt is None else ",scale_fmt=ue8m0"
        out.append((f"deepseek:fp8,tile=1x128{suffix}", 128, ("f32", "bf16", "f16"),
                    lambda x, f=fmt, g=None: deepseek_fp8(x, (1, 128), f),
                    "transcription (not DeepSeek's code): DeepSeek-V3 inference/kernel.py act_quant / "
                    "weight_dequant arithmetic rewritten in torch ops, run on the CPU"))
        out.append((f"deepseek:fp8,tile=128x128{suffix}", None, ("bf16", "f16"),
                    lambda x, f=fmt, g=None: deepseek_fp8(x, (128, 128), f),
                    "transcription (not DeepSeek's code): DeepSeek-V3 inference/kernel.py act_quant / "
                    "weight_dequant arithmetic rewritten in torch ops, run on the CPU"))
    for strategy, block in (("tensor", 16), ("channel", 16), ("group=128", 128),
                            ("block=128x128", None)):
        dtypes = ("bf16", "f16") if strategy.startswith("block") else ("f32", "bf16", "f16")
        out.append((f"fp8:{strategy}", block, dtypes,
                    lambda x, s=strategy, g=None: compressed_tensors_fp8(x, s),
                    "compressed-tensors 0.20.0 calculate_qparams + quantize/dequantize "
                    "(float-quantized)"))
    return out


GLOBAL_CASES = {
    # Second-level scale given explicitly: 0, Inf, NaN (and what each recipe does with them).
    "torchao:nvfp4,global=amax": lambda v: (lambda x, g=v: torchao_nvfp4(x, g)),
    "modelopt:nvfp4": lambda v: (lambda x, g=v: modelopt_nvfp4(x, g)),
    "compressed-tensors:nvfp4": lambda v: (lambda x, g=v: compressed_tensors_nvfp4(x, g)),
}


PER_TENSOR_SCALE = ("torchao:nvfp4,global=amax", "modelopt:nvfp4", "compressed-tensors:nvfp4",
                    "fp8:tensor")


def reference_of(scheme):
    """What made a case's outputs (README: `reference`)."""
    if scheme.startswith("deepseek:"):
        return "transcription"
    if scheme == "ggml:nvfp4":
        return "hand-built+gguf-dequantize"
    if scheme.startswith("ggml:"):
        return "gguf-port"
    return "live"


def slug(scheme):
    return scheme.replace(":", "_").replace(",", "_").replace("=", "-")


def cases_for(block, dtypes, scheme):
    """(case name, input array) pairs."""
    out = []
    if scheme.endswith("tile=128x128") or scheme.endswith("tile=128x128,scale_fmt=ue8m0") or \
            scheme == "fp8:block=128x128":
        for dt in dtypes:
            out.append((f"random_{dt}", random_input(132, 136, 26, dt)))
        return out
    for dt in dtypes:
        names, x = edge_input(block, dt)
        if scheme in PER_TENSOR_SCALE:
            # A per-tensor scale would mix the edge rows: each row is a tensor of its own.
            for i, name in enumerate(names):
                out.append((f"edge_{dt}/{name}", x[i:i + 1]))
        else:
            out.append((f"edge_{dt}", x))
        out.append((f"random_{dt}", random_input(8, 256, 26, dt)))
    short = block * 2 + block // 2
    out.append(("short_last_block_f32", random_input(2, short, 27, "f32")))
    return out


class Writer:
    def __init__(self):
        self.files = {}

    def add(self, file, array, dtype_name):
        buf = self.files.setdefault(file, bytearray())
        raw = np.ascontiguousarray(array).tobytes()
        entry = {"dtype": dtype_name, "shape": list(np.shape(array)), "offset": len(buf),
                 "nbytes": len(raw)}
        buf.extend(raw)
        return entry


def dtype_name(array, hint=None):
    if hint:
        return hint
    if array.dtype == ml_dtypes.bfloat16:
        return "bf16"
    if array.dtype == np.float16:
        return "f16"
    return {np.dtype(np.float32): "f32", np.dtype(np.uint8): "u8", np.dtype(np.uint16): "u16",
            np.dtype(np.int8): "i8"}[array.dtype]


def raw(array):
    if array.dtype in (ml_dtypes.bfloat16, np.float16):
        return array.view(np.uint16)
    return array


def error_text(e):
    return f"{type(e).__name__}: {e}".strip()


def generate():
    writer = Writer()
    counts = {"cases": 0, "elements": 0}
    manifest = {"format_version": FORMAT_VERSION, "generator": "scripts/gen_block_fixtures.py",
                "versions": versions, "inputs_file": "inputs.bin",
                "edge_rows": [name for name, _ in motifs()], "inputs": {}, "schemes": []}
    inputs_seen = {}

    def input_ref(case, x):
        key = (case, x.shape, str(x.dtype), hashlib.sha256(raw(x).tobytes()).hexdigest())
        if key not in inputs_seen:
            name = f"{case}_{x.shape[0]}x{x.shape[1]}"
            manifest["inputs"][name] = writer.add("inputs.bin", raw(x), dtype_name(x))
            inputs_seen[key] = name
        return inputs_seen[key]

    for scheme, block, dtypes, fn, impl in schemes():
        entry = {"scheme": scheme, "implementation": impl, "file": slug(scheme) + ".bin",
                 "axis": -1, "cases": []}
        if scheme == "ggml:nvfp4":
            # No runnable NVFP4 quantizer of ggml here: decode-side data only.
            blocks, expected = nvfp4_decode_grid()
            case_list = [("decode_every_code", blocks, lambda x, e=expected: fn((x, e)))]
        else:
            case_list = [(name, x, fn) for name, x in cases_for(block, dtypes, scheme)]
        if scheme in GLOBAL_CASES:
            for gname, gval in (("global_0", 0.0), ("global_inf", float("inf")),
                                ("global_nan", float("nan"))):
                case_list.append((f"random_f32_{gname}", random_input(4, 64, 28, "f32"),
                                  GLOBAL_CASES[scheme](gval)))
            # Under a global scale of 1 the block scale is amax / 6 itself, so the UE4M3 ties
            # and clamps of the edge rows reach the scale rounding.
            case_list.append(("edge_f32_global_1", edge_input(16, "f32")[1],
                              GLOBAL_CASES[scheme](1.0)))
        for case, x, f in case_list:
            record = {"case": case, "input": input_ref(case, x), "reference": reference_of(scheme)}
            if scheme == "ggml:nvfp4":
                record["direction"] = "dequantize"
            try:
                with np.errstate(all="ignore"):
                    result = f(x)
            except Exception as e:  # the implementation's refusal is a fact to record
                record["error"] = error_text(e)
                entry["cases"].append(record)
                continue
            scales_dtype = result.pop("scales_dtype", None)
            if "dequantize_error" in result:
                record["dequantize_error"] = result.pop("dequantize_error")
            arrays = {}
            for key in ("elements", "scales", "global_scale", "dequantized", "bytes"):
                if key in result:
                    a = result[key]
                    hint = scales_dtype if key == "scales" and scales_dtype else None
                    if hint == "f16":
                        a = a.astype(np.uint16)
                    arrays[key] = writer.add(entry["file"], a, dtype_name(a, hint))
            record["arrays"] = arrays
            name = scheme.split(":")[1]
            if scheme.startswith("ggml:") and case.startswith("edge_"):
                record["differs_from_ggml_c"] = GGUF_DIFFERS_FROM_GGML_C[name]
            counts["cases"] += 1
            counts["elements"] += int(result["elements"].size)
            entry["cases"].append(record)
        manifest["schemes"].append(entry)
    return manifest, writer.files, counts


def main():
    global versions
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=OUT)
    parser.add_argument("--check", action="store_true",
                        help="regenerate in memory and compare with the files in --out")
    opts = parser.parse_args()
    versions = check_pins()
    import_peers()
    manifest, files, counts = generate()
    if counts["cases"] == 0 or counts["elements"] == 0:
        print("gen_block_fixtures: no case produced any output", file=sys.stderr)
        sys.exit(1)
    tally = f"{counts['cases']} cases, {counts['elements']} elements"
    files["manifest.json"] = (json.dumps(manifest, indent=1, sort_keys=True) + "\n").encode()
    if opts.check:
        bad = []
        for name, data in sorted(files.items()):
            path = os.path.join(opts.out, name)
            if not os.path.exists(path) or open(path, "rb").read() != bytes(data):
                bad.append(name)
        if bad:
            print(f"differ from {opts.out}: {', '.join(bad)}", file=sys.stderr)
            sys.exit(1)
        print(f"{len(files)} files identical to {opts.out} ({tally} compared)")
        return
    os.makedirs(opts.out, exist_ok=True)
    for name, data in sorted(files.items()):
        with open(os.path.join(opts.out, name), "wb") as f:
            f.write(bytes(data))
    total = sum(len(d) for d in files.values())
    print(f"wrote {len(files)} files, {total} bytes, to {opts.out} ({tally})")


if __name__ == "__main__":
    main()
