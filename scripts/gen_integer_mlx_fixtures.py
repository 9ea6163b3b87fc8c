#!/usr/bin/env python3
"""Records MLX's affine quantization (`mlx.core.quantize` / `mlx.core.dequantize`, mode "affine",
on the CPU) into tests/data/integer/mlx/cases.json, read by tests/integer_mlx.rs.

Peer: mlx 0.32.4 with its Linux CPU backend (the wheels `mlx` and `mlx-cpu`, x86-64):

    python3 -m venv target/mlx-venv
    target/mlx-venv/bin/pip install "mlx[cpu]==0.32.4" numpy
    target/mlx-venv/bin/python scripts/gen_integer_mlx_fixtures.py

Each case holds the input weight (float32, float16 or bfloat16 bits), the packed uint32 `weight`,
the `scales` and `biases` (the input's dtype) and `mx.dequantize` of them (the scales' dtype), all
as little-endian hex; or the exception MLX raised (type and message). `dequantize` cases hold
random packed words, scales and biases and MLX's dequantize of them (the rounding of
`q * scale + bias` in float16 and bfloat16 is checked apart from the quantizer).
"""

import json
import os
import sys

import mlx.core as mx
import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "integer", "mlx")
DTYPES = {"FLOAT": mx.float32, "FLOAT16": mx.float16, "BFLOAT16": mx.bfloat16}


def to_bits(a: mx.array) -> bytes:
    """The little-endian bytes of an MLX array (bfloat16 through its uint16 view)."""
    if a.dtype == mx.bfloat16:
        return np.array(a.view(mx.uint16)).tobytes()
    return np.array(a).tobytes()


def from_f32(x: np.ndarray, dtype: str) -> mx.array:
    """float32 values in `dtype` (rounded by MLX's own cast)."""
    return mx.array(x.astype(np.float32)).astype(DTYPES[dtype])


def quantize_case(name: str, x: np.ndarray, dtype: str, bits: int, group: int) -> dict:
    w = from_f32(x, dtype)
    case = {"name": name, "kind": "quantize", "dtype": dtype, "bits": bits, "group": group,
            "shape": list(x.shape), "input": to_bits(w).hex()}
    try:
        q, s, b = mx.quantize(w, group_size=group, bits=bits, mode="affine")
        d = mx.dequantize(q, s, b, group_size=group, bits=bits, mode="affine")
        mx.eval(q, s, b, d)
    except Exception as e:  # noqa: BLE001 - a refusal is recorded as the peer's answer
        case["refusal"] = {"type": type(e).__name__, "message": str(e)}
        return case
    assert q.dtype == mx.uint32 and s.dtype == w.dtype and d.dtype == w.dtype
    case.update(weight=to_bits(q).hex(), scales=to_bits(s).hex(), biases=to_bits(b).hex(),
                dequantized=to_bits(d).hex(), weight_shape=list(q.shape), scales_shape=list(s.shape))
    return case


def dequantize_case(name: str, rng, dtype: str, bits: int, group: int, rows: int, cols: int) -> dict:
    words = rng.integers(0, 2**32, size=(rows, cols * bits // 32), dtype=np.uint64).astype(np.uint32)
    scales = from_f32(rng.standard_normal((rows, cols // group)) * 2.0 ** rng.integers(-12, 4, (rows, cols // group)), dtype)
    biases = from_f32(rng.standard_normal((rows, cols // group)) * 2.0 ** rng.integers(-6, 6, (rows, cols // group)), dtype)
    q = mx.array(words)
    d = mx.dequantize(q, scales, biases, group_size=group, bits=bits, mode="affine")
    mx.eval(d)
    return {"name": name, "kind": "dequantize", "dtype": dtype, "bits": bits, "group": group,
            "shape": [rows, cols], "weight": words.tobytes().hex(), "scales": to_bits(scales).hex(),
            "biases": to_bits(biases).hex(), "dequantized": to_bits(d).hex(), "weight_shape": list(words.shape),
            "scales_shape": [rows, cols // group]}


def edge_rows(group: int) -> dict:
    """Rows of one group each: constants, ties, specials, magnitudes."""
    g = group
    ramp = np.arange(g, dtype=np.float32)
    rows = {
        "zeros": np.zeros(g),
        "negative_zeros": -np.zeros(g),
        "constant": np.full(g, 0.75),
        "constant_negative": np.full(g, -3.0),
        "ramp": ramp,
        "ramp_negative": -ramp,
        # min 0, max 15 * k: the scale is -k and every k/2 step is a tie of rint.
        "ties": (np.arange(g) % 31) * 0.5,
        "ties_negative": -(np.arange(g) % 31) * 0.5,
        "nan_one": np.where(np.arange(g) == 3, np.nan, ramp),
        "nan_first": np.where(np.arange(g) == 0, np.nan, ramp),
        "nan_all": np.full(g, np.nan),
        "inf": np.where(np.arange(g) == 5, np.inf, ramp),
        "minus_inf": np.where(np.arange(g) == 5, -np.inf, ramp),
        "inf_both": np.where(np.arange(g) == 5, np.inf, np.where(np.arange(g) == 6, -np.inf, ramp)),
        "huge": np.linspace(-3e38, 3.3e38, g),
        "huge_range": np.linspace(-3.4e38, 3.4e38, g),
        "tiny": np.linspace(-1e-38, 2e-38, g),
        "subnormal": np.linspace(0, 1e-44, g),
        "small_range": 1.0 + np.arange(g) * 1e-8,
        "half_max": np.linspace(-65504, 65504, g),
    }
    return {k: v.astype(np.float32) for k, v in rows.items()}


def main() -> int:
    rng = np.random.default_rng(20261128)
    cases = []
    for bits in (1, 2, 3, 4, 5, 6, 8):
        for group in (32, 64, 128):
            x = rng.standard_normal((2, 128)).astype(np.float32) * np.float32(2.0) ** rng.integers(-8, 8, (2, 1))
            cases.append(quantize_case(f"random_b{bits}_g{group}", x, "FLOAT", bits, group))
        for dtype in ("FLOAT16", "BFLOAT16"):
            x = rng.standard_normal((2, 128)).astype(np.float32)
            cases.append(quantize_case(f"random_b{bits}_g64_{dtype}", x, dtype, bits, 64))
    for dtype in ("FLOAT", "FLOAT16", "BFLOAT16"):
        for bits, group in ((4, 32), (3, 64), (8, 32), (1, 32)):
            edge = edge_rows(group)
            x = np.stack(list(edge.values()))
            cases.append(quantize_case(f"edge_b{bits}_g{group}_{dtype}[{','.join(edge)}]", x, dtype, bits, group))
    for dtype in ("FLOAT", "FLOAT16", "BFLOAT16"):
        for bits in (2, 4, 5, 8):
            cases.append(dequantize_case(f"dequantize_b{bits}_{dtype}", rng, dtype, bits, 32, 2, 128))
    # What MLX refuses (lowbit's parse or shape check refuses the same).
    x = rng.standard_normal((2, 128)).astype(np.float32)
    cases.append(quantize_case("refused_group16", x, "FLOAT", 4, 16))
    cases.append(quantize_case("refused_bits7", x, "FLOAT", 7, 32))
    cases.append(quantize_case("refused_cols", x[:, :96], "FLOAT", 4, 64))
    os.makedirs(OUT, exist_ok=True)
    doc = {"peer": f"mlx {mx.__version__} (CPU)", "script": "scripts/gen_integer_mlx_fixtures.py", "cases": cases}
    with open(os.path.join(OUT, "cases.json"), "w") as f:
        json.dump(doc, f, indent=0)
    print(f"{len(cases)} cases -> {OUT}/cases.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
