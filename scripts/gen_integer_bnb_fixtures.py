#!/usr/bin/env python3
"""Records bitsandbytes' 4-bit quantization (NF4/FP4, plain and nested) from the live peer into
tests/data/integer/bnb/fixtures.json, read by tests/integer_bnb.rs.

Peer: bitsandbytes 0.50.2 (CPU backend) with torch, one thread, on an x86-64 machine with
AVX-512 (the dequantize kernel the backend picks depends on it). Run with the blocks venv:

    /work/main/target/blocks-venv/bin/python scripts/gen_integer_bnb_fixtures.py

Every case holds the input's raw bytes, the tensors `QuantState.as_dict(packed=True)` gives with
the packed `weight` (what a transformers checkpoint holds, without the layer prefix) and
`dequantize_4bit` in float32, float16 and bfloat16. Dequantize-only cases hold chosen codes and
maxima (NaN payloads, subnormal products, infinities) for each of the backend's kernels.
"""

import json
import logging
import os
import sys

import numpy as np
import torch

logging.disable(logging.WARNING)
import bitsandbytes  # noqa: E402
import bitsandbytes.functional as F  # noqa: E402

torch.set_num_threads(1)

# bitsandbytes wraps its torch fallback kernels in torch.compile; once a function has been
# recompiled for 8 shapes, torch runs it eagerly, which writes a NaN as bfloat16 0xFFFF instead
# of 0x7FC0. The rows model the compiled kernel: the limits are lifted so that every shape is.
torch._dynamo.config.recompile_limit = 1 << 20
torch._dynamo.config.accumulated_recompile_limit = 1 << 20
OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "data", "integer", "bnb", "fixtures.json")
DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
ONNX = {torch.float32: "FLOAT", torch.float16: "FLOAT16", torch.bfloat16: "BFLOAT16", torch.uint8: "UINT8"}


# Byte strings longer than this are recorded as their FNV-1a 64-bit digest (the file stays small;
# a digest is compared as exactly as the bytes).
INLINE_BYTES = 1024


def hexbytes(t):
    return t.contiguous().view(torch.uint8).numpy().tobytes().hex()


def fnv1a64(data):
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def recorded(t):
    """The bytes as hex, or their digest where long."""
    data = t.contiguous().view(torch.uint8).numpy().tobytes()
    return data.hex() if len(data) <= INLINE_BYTES else "fnv1a64:" + fnv1a64(data)


def lcg(seed, n, scale):
    """Deterministic input both sides can make: a 32-bit LCG's top 24 bits as a fraction in
    [0, 1), less 0.5, times `scale` (a power of two: every step is exact in float32)."""
    out = np.empty(n, dtype=np.float32)
    s = seed
    for i in range(n):
        s = (s * 1664525 + 1013904223) & 0xFFFFFFFF
        out[i] = ((s >> 8) / 16777216.0 - 0.5) * scale
    return torch.from_numpy(out)


def stored(name, t):
    return {"name": name, "dtype": ONNX[t.dtype], "shape": list(t.shape), "hex": recorded(t)}


def dequantized(q, state):
    out = {}
    for name, dt in DTYPES.items():
        saved = state.dtype
        state.dtype = dt
        out[name] = recorded(F.dequantize_4bit(q, state))
        state.dtype = saved
    return out


def quantize_case(label, x, quant_type, blocksize, nested, lcg_input=None):
    q, state = F.quantize_4bit(x, blocksize=blocksize, compress_statistics=nested, quant_type=quant_type)
    tensors = [stored("weight", q)]
    for k, v in state.as_dict(packed=True).items():
        tensors.append(stored(k, v))
    scheme = f"bnb:{quant_type}" + ("" if blocksize == 64 else f",blocksize={blocksize}") + (",nested" if nested else "")
    return {
        "label": label,
        "scheme": scheme,
        "dtype": ONNX[x.dtype],
        "shape": list(x.shape),
        "input": hexbytes(x) if lcg_input is None else None,
        "lcg": lcg_input,
        "storage": tensors,
        "dequantized": dequantized(q, state),
    }


def edge_values(n, gen):
    """Zeros, constants, NaN with a payload, infinities, huge and subnormal values, -0.0, and
    values exactly on the midpoints between codes (torch.bucketize's ties)."""
    x = torch.randn(n, generator=gen)
    x[0:64] = 0.0
    x[64:128] = 0.75
    x[128:192] = torch.randn(64, generator=gen)
    bits = x.view(torch.int32)
    bits[130] = 0x7F812345  # a signalling NaN with a payload, the block's first NaN
    x[131] = float("nan")
    bits[132] = int(np.uint32(0xFFA00001).view(np.int32))  # a negative signalling NaN
    x[192:256] = torch.randn(64, generator=gen)
    x[200] = float("inf")
    x[201] = -float("inf")
    x[256:320] = torch.randn(64, generator=gen) * 3e38
    x[320:384] = torch.randn(64, generator=gen) * 1e-39
    x[384:448] = -0.0
    x[448] = 1e-45
    # Exact ties: the block's maximum is 1, so every value is its own scaled value.
    for qt in ("nf4", "fp4"):
        code = F.get_4bit_type(qt, device="cpu")
        s = torch.sort(code).values
        mids = (s[:-1] + s[1:]) / 2
        base = 512 if qt == "nf4" else 576
        x[base : base + 64] = 0.0
        x[base] = 1.0
        x[base + 1 : base + 16] = mids
        x[base + 16 : base + 31] = -mids
    return x


def main():
    gen = torch.Generator().manual_seed(20261128)
    cases = []
    for qt in ("nf4", "fp4"):
        # Shapes for each dequantize kernel: cols % 16 == 0 (AVX-512; 96 % 64 != 0 shows its
        # per-row block index), an odd cols (torch), an even cols % 16 != 0 (scalar).
        cases.append(quantize_case(f"{qt} randn 4x96", torch.randn(4, 96, generator=gen), qt, 64, False))
        cases.append(quantize_case(f"{qt} randn 3x128", torch.randn(3, 128, generator=gen), qt, 64, False))
        cases.append(quantize_case(f"{qt} randn 5x33 bs32", torch.randn(5, 33, generator=gen), qt, 32, False))
        cases.append(quantize_case(f"{qt} randn 2x50", torch.randn(2, 50, generator=gen), qt, 64, False))
        cases.append(quantize_case(f"{qt} randn 3x50 bs128", torch.randn(3, 50, generator=gen), qt, 128, False))
        cases.append(quantize_case(f"{qt} lcg 8x512 bs2048", lcg(11, 4096, 4.0).reshape(8, 512), qt, 2048, False, [11, 4.0]))
        cases.append(quantize_case(f"{qt} lcg 2x4096 bs4096", lcg(12, 8192, 4.0).reshape(2, 4096), qt, 4096, False, [12, 4.0]))
        cases.append(quantize_case(f"{qt} 1x7 short", torch.randn(1, 7, generator=gen), qt, 64, False))
        cases.append(
            quantize_case(f"{qt} bfloat16 4x64 bs128", torch.randn(4, 64, generator=gen).to(torch.bfloat16), qt, 128, False)
        )
        cases.append(
            quantize_case(f"{qt} float16 8x64 bs256", torch.randn(8, 64, generator=gen).to(torch.float16), qt, 256, False)
        )
        edge = edge_values(16 * 64, gen).reshape(16, 64)
        cases.append(quantize_case(f"{qt} edge 16x64", edge, qt, 64, False))
        cases.append(quantize_case(f"{qt} edge 16x64 float16", edge.to(torch.float16), qt, 64, False))
        cases.append(quantize_case(f"{qt} edge 16x64 bfloat16", edge.to(torch.bfloat16), qt, 64, False))
        tail = torch.zeros(1, 70)
        cases.append(quantize_case(f"{qt} zero short block", tail, qt, 64, False))
        # A NaN in the short block (torch's full-reduction max writes 0xFFFFFFFF) and in a whole one.
        nan_tail = torch.randn(1, 70, generator=gen)
        nan_tail.view(torch.int32)[0, 66] = 0x7F812345
        nan_tail.view(torch.int32)[0, 5] = 0x7F812345
        cases.append(quantize_case(f"{qt} NaN in short block", nan_tail, qt, 64, False))
        # Nested: one second-level block, several with a short one, a constant weight (every
        # maximum equals the mean), a float16 weight.
        cases.append(quantize_case(f"{qt} nested lcg 64x256", lcg(13, 16384, 4.0).reshape(64, 256), qt, 64, True, [13, 4.0]))
        cases.append(quantize_case(f"{qt} nested lcg 40x250 bs32", lcg(14, 10000, 0.0625).reshape(40, 250), qt, 32, True, [14, 0.0625]))
        cases.append(quantize_case(f"{qt} nested constant", torch.full((8, 64), 0.5), qt, 64, True))
        cases.append(
            quantize_case(f"{qt} nested float16 6x90", torch.randn(6, 90, generator=gen).to(torch.float16), qt, 64, True)
        )
        cases.append(quantize_case(f"{qt} nested edge", edge[:, :], qt, 64, True))
        # An empty weight: no blocks; nested, the mean of nothing (NaN in the JSON).
        cases.append(quantize_case(f"{qt} empty", torch.zeros(0, 64), qt, 64, False))
        cases.append(quantize_case(f"{qt} empty nested", torch.zeros(0, 64), qt, 64, True))

    # Dequantize-only: chosen codes and maxima through each kernel.
    dq = []
    special = [0x7F812345, 0xFFC00001, 0x00000001, 0x00800000, 0x3F800000, 0x7F800000, 0x00000000, 0x3F808000]
    for qt in ("nf4", "fp4"):
        for rows, cols, bs in ((4, 64, 32), (8, 34, 32), (8, 33, 32), (6, 96, 64)):
            n = rows * cols
            blocks = -(-n // bs)
            codes = torch.randint(0, 256, ((n + 1) // 2, 1), dtype=torch.uint8, generator=gen)
            am = torch.from_numpy(np.array([special[i % len(special)] for i in range(blocks)], dtype=np.uint32).view(np.float32))
            state = F.QuantState(
                absmax=am, shape=torch.Size([rows, cols]), dtype=torch.float32, blocksize=bs, quant_type=qt,
                code=F.get_4bit_type(qt, device="cpu"),
            )
            dq.append(
                {
                    "label": f"{qt} {rows}x{cols} bs{bs}",
                    "scheme": f"bnb:{qt},blocksize={bs}",
                    "shape": [rows, cols],
                    "weight": hexbytes(codes),
                    "absmax": hexbytes(am),
                    "dequantized": dequantized(codes, state),
                }
            )

    # torch's float32 mean (the nested offset) over lengths around its vector and cascade steps.
    means = []
    for n in (1, 3, 15, 16, 17, 63, 64, 65, 100, 257, 1000, 1030, 4100):
        v = (torch.rand(n, generator=gen) * 4).float() if n <= 512 else lcg(n, n, 4.0).abs()
        means.append({"input": hexbytes(v) if n <= 512 else None, "lcg": None if n <= 512 else [n, 4.0], "mean": hexbytes(v.mean().reshape(1))})

    # NaN maxima: which NaN the sum keeps follows the operand order of torch's compiled loops.
    nan_bits = np.array([0x7FC00000, 0x7F812345, 0x7FFFFFFF, 0x7F900001], dtype=np.uint32).view(np.int32)
    for n in (5, 7, 40, 129, 300, 700):
        for _ in range(3):
            v = (torch.rand(n, generator=gen) * 4).float()
            at = torch.randint(0, n, (int(torch.randint(1, 5, (1,), generator=gen)),), generator=gen)
            for a in at.tolist():
                k = int(torch.randint(0, 4, (1,), generator=gen))
                v.view(torch.int32)[a] = int(nan_bits[k])
            means.append({"input": hexbytes(v), "lcg": None, "mean": hexbytes(v.mean().reshape(1))})

    tables = {
        qt: hexbytes(F.get_4bit_type(qt, device="cpu")) for qt in ("nf4", "fp4")
    }
    tables["dynamic"] = hexbytes(F.create_dynamic_map())
    from bitsandbytes.backends.default.ops import _get_4bit_quantize_bounds

    orders = {qt: _get_4bit_quantize_bounds(qt, torch.device("cpu"))[1].tolist() for qt in ("nf4", "fp4")}
    doc = {
        "peer": f"bitsandbytes {bitsandbytes.__version__}, torch {torch.__version__} "
        f"({torch.backends.cpu.get_cpu_capability()}), one thread",
        "tables": tables,
        "orders": orders,
        "quantize": cases,
        "dequantize": dq,
        "means": means,
    }
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        json.dump(doc, f, indent=0, separators=(",", ":"))
        f.write("\n")
    print(f"{len(cases)} quantize cases, {len(dq)} dequantize cases, {len(means)} means -> {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
