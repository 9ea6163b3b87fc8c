#!/usr/bin/env python3
"""Writes tests/data/mx/gfloat_<format>.json: OCP Microscaling blocks quantized by gfloat
(Graphcore's reference implementation of the formats, https://github.com/graphcore-research/gfloat),
which tests/mx_gfloat.rs compares with lowbit's `quant::mx` so that `cargo test` needs no Python.

    PY=$(bash scripts/peers-venv.sh) && "$PY" -m pip install gfloat && "$PY" scripts/crosscheck_mx.py

Each case is a 1-D float32 input cut into blocks of `block_size` along its only axis (a short last
block is a block of its own). Per block, gfloat computes the scale with `compute_scale_amax(emax,
values)` (2^(floor(log2(amax)) - emax) clipped to [2^-127, 2^127]; 2^-127 for an all-zero block) and
the codes with `encode_block` (round to nearest even, saturating); `decode_block` gives the values.

The values are handed to gfloat as float64. Known deviations, recorded in the cases that show them:

* `float32_log2`: given float32 data, gfloat's log2 is computed in float32, and for an amax just below
  2^k (|k| large enough) it rounds up to k, doubling the scale. The case records both; lowbit
  takes the scale from the bits and agrees with the float64 call.
* `infinity`: gfloat clips an infinite amax's scale to 2^127 (0xFE) and saturates the infinity to
  the element's largest value; the MX rule lowbit follows gives the block the NaN scale (0xFF).
* `nan`: gfloat gives the NaN scale (0xFF) and NaN elements for FP8; for FP6, FP4 and INT8 (no NaN
  code) it raises, so those formats have no NaN case. lowbit writes +0 elements under a NaN scale.

The layout is the one of ONNX `DequantizeLinear` with a float8e8m0 scale and `block_size`: for the
float formats, each case also records what onnx's reference implementation (opset 24,
`output_dtype` FLOAT) gives for gfloat's codes and scales (`onnx_dequantized_f32_bits`), where it
runs. MXINT8 has none: that node has no implicit 2^-6.
"""

import importlib.metadata
import json
import math
import os
import sys

import ml_dtypes
import numpy as np
import onnx
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator
from gfloat.block import compute_scale_amax, decode_block, encode_block
from gfloat.formats import (
    format_info_mxfp4_e2m1,
    format_info_mxfp6_e2m3,
    format_info_mxfp6_e3m2,
    format_info_mxfp8_e4m3,
    format_info_mxfp8_e5m2,
    format_info_mxint8,
)

FORMATS = {
    "mxfp8e4m3": format_info_mxfp8_e4m3,
    "mxfp8e5m2": format_info_mxfp8_e5m2,
    "mxfp6e2m3": format_info_mxfp6_e2m3,
    "mxfp6e3m2": format_info_mxfp6_e3m2,
    "mxfp4": format_info_mxfp4_e2m1,
    "mxint8": format_info_mxint8,
}

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "mx")


def f32_bits(values):
    return [int(b) for b in np.asarray(values, dtype=np.float32).view(np.uint32)]


def quantize(fi, values, block_size, as_float32=False):
    """(scale codes, element codes, dequantized float32 bits) by gfloat, block by block."""
    scales, elements, back = [], [], []
    x = np.asarray(values, dtype=np.float32)
    for start in range(0, len(x), block_size):
        block = x[start : start + block_size]
        data = block if as_float32 else block.astype(np.float64)
        scale = compute_scale_amax(fi.etype.emax, data)
        codes = list(encode_block(fi, float(scale), data.astype(np.float64) / scale))
        scales.append(int(codes[0]))
        elements.extend(int(c) for c in codes[1:])
        with np.errstate(over="ignore"):
            back.extend(f32_bits(np.array(list(decode_block(fi, codes)), dtype=np.float64).astype(np.float32)))
    return scales, elements, back


ONNX_ELEMENTS = {
    "mxfp8e4m3": (TensorProto.FLOAT8E4M3FN, ml_dtypes.float8_e4m3fn),
    "mxfp8e5m2": (TensorProto.FLOAT8E5M2, ml_dtypes.float8_e5m2),
    "mxfp6e2m3": (TensorProto.FLOAT6E2M3, ml_dtypes.float6_e2m3fn),
    "mxfp6e3m2": (TensorProto.FLOAT6E3M2, ml_dtypes.float6_e3m2fn),
    "mxfp4": (TensorProto.FLOAT4E2M1, ml_dtypes.float4_e2m1fn),
}


def onnx_dequantize(name, codes, scales, block_size):
    """onnx's reference DequantizeLinear (opset 24) on 1-D codes with E8M0 scales, or None."""
    if name not in ONNX_ELEMENTS:
        return None
    elem_type, np_type = ONNX_ELEMENTS[name]
    n = len(codes)
    node = helper.make_node("DequantizeLinear", ["x", "s"], ["y"], axis=0, block_size=block_size,
                            output_dtype=TensorProto.FLOAT)
    graph = helper.make_graph(
        [node],
        "mx",
        [helper.make_tensor_value_info("x", elem_type, [n]),
         helper.make_tensor_value_info("s", TensorProto.FLOAT8E8M0, [len(scales)])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [n])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 24)])
    x = np.array(codes, dtype=np.uint8).view(np_type)
    s = np.array(scales, dtype=np.uint8).view(ml_dtypes.float8_e8m0fnu)
    try:
        with np.errstate(over="ignore", invalid="ignore"):
            (y,) = ReferenceEvaluator(model).run(None, {"x": x, "s": s})
    except Exception as e:  # an element type this onnx does not dequantize
        print(f"onnx reference DequantizeLinear, {name}: {type(e).__name__}: {e}", file=sys.stderr)
        return None
    return f32_bits(y)


def random_values(rng, blocks, block_size):
    """Blocks whose values share an exponent drawn from float32's whole range, with zeros of both
    signs, subnormals, ties of the narrow grids and values just below powers of two."""
    out = []
    for _ in range(blocks):
        e = int(rng.integers(-150, 130))
        for _ in range(block_size):
            kind = int(rng.integers(0, 10))
            sign = -1.0 if rng.integers(0, 2) else 1.0
            if kind == 0:
                v = 0.0 * sign
            elif kind == 1:
                v = sign * float(np.uint32(rng.integers(1, 1 << 23)).view(np.float32))
            elif kind == 2:
                v = sign * math.ldexp(1.0 - 2.0**-24, max(min(e, 127), -125))
            elif kind == 3:
                v = sign * int(rng.integers(0, 64)) * 2.0 ** max(e - 5, -149)
            else:
                v = sign * float(rng.uniform(1.0, 2.0)) * 2.0 ** max(min(e - int(rng.integers(0, 10)), 127), -149)
            out.append(v)
    with np.errstate(over="ignore"):
        return np.array(out, dtype=np.float64).astype(np.float32)


def cases_for(name, fi, rng):
    cases = []

    def add(case, values, block_size, deviation=None, **extra):
        scales, elements, back = quantize(fi, values, block_size)
        onnx_back = onnx_dequantize(name, elements, scales, block_size)
        if onnx_back is not None:
            extra["onnx_dequantized_f32_bits"] = onnx_back
        cases.append(
            dict(
                name=case,
                block_size=block_size,
                input_f32_bits=f32_bits(values),
                scales=scales,
                elements=elements,
                dequantized_f32_bits=back,
                deviation=deviation,
                **extra,
            )
        )

    add("random", random_values(rng, 48, 32), 32)
    add("short_last_block", random_values(rng, 3, 25)[:70], 32)
    add("block_size_7", random_values(rng, 8, 7)[:50], 7)
    add("zeros_and_tiny", np.array([0.0, -0.0, 2.0**-149, -(2.0**-140), 2.0**-126, 0.0, -0.0, 0.0], np.float32), 4)
    add("huge", np.array([3.4028234663852886e38, -1e38, 2.0**127, 1.0], np.float32), 2)
    # Just below 2^20: floor(log2) is 19; gfloat's float32 log2 says 20.
    below = np.array([2.0**20 * (1 - 2.0**-24), 1.0], np.float32)
    s32, _, _ = quantize(fi, below, 2, as_float32=True)
    add(
        "float32_log2",
        below,
        2,
        deviation="gfloat given float32 data computes log2 in float32: 20 - 8.6e-8 rounds to 20 and "
        "the scale doubles (gfloat_float32_scales); with float64 data it agrees with the rule",
        gfloat_float32_scales=s32,
    )
    add(
        "infinity",
        np.array([1.0, np.inf, 2.0, -np.inf], np.float32),
        2,
        deviation="gfloat clips an infinite amax's scale to 2^127 (0xFE) and saturates the "
        "infinities; the MX rule gives the block the NaN scale (0xFF)",
    )
    if name.startswith("mxfp8"):
        add(
            "nan",
            np.array([1.0, np.nan, 3.0, 4.0], np.float32),
            2,
            deviation="gfloat writes NaN elements under the NaN scale; lowbit writes +0 "
            "(the spec leaves them open)",
        )
    return cases


def main():
    os.makedirs(OUT, exist_ok=True)
    for i, (name, fi) in enumerate(FORMATS.items()):
        rng = np.random.default_rng(20240 + i)
        doc = dict(
            source=f"gfloat {importlib.metadata.version('gfloat')} (compute_scale_amax, encode_block, decode_block), "
            f"onnx {onnx.__version__} reference DequantizeLinear, ml_dtypes {ml_dtypes.__version__}, "
            f"numpy {np.__version__}; written by scripts/crosscheck_mx.py",
            format=name,
            element_codes="one code per element (unpacked); MXINT8 as the 8-bit two's complement code",
            cases=cases_for(name, fi, rng),
        )
        path = os.path.join(OUT, f"gfloat_{name}.json")
        with open(path, "w") as f:
            json.dump(doc, f, separators=(",", ":"))
            f.write("\n")
        print(f"wrote {path}: {sum(len(c['input_f32_bits']) for c in doc['cases'])} elements", file=sys.stderr)


if __name__ == "__main__":
    main()
