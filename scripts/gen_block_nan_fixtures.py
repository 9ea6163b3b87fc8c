#!/usr/bin/env python3
"""Records compressed-tensors' FP8 weights of float16 models holding NaN (tests/data/blocks_nan):
the codes, scales and float32 dequantized values of rows where NaN elements meet NaN scales, over
inner-loop lengths that show torch's float16 multiply keeping one NaN or the other by place (1,
2, 7, 16, 33, 40, 64 ...) and tensor sizes that are not whole blocks of 8 (its float16 ->
float32 widening's scalar tail). Run with torch 2.15.0 and compressed-tensors 0.20.0:

    python scripts/gen_block_nan_fixtures.py [--check]
"""
import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_block_fixtures  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "blocks_nan", "fp8_f16.json")

CASES = [
    ("tensor", (1, 16)),
    ("tensor", (3, 7)),
    ("tensor", (2, 40)),
    ("channel", (3, 1)),
    ("channel", (3, 2)),
    ("channel", (3, 7)),
    ("channel", (4, 33)),
    ("channel", (4, 40)),
    ("channel", (2, 64)),
    ("channel", (3, 100)),
    ("group=16", (3, 48)),
    ("group=32", (3, 96)),
    ("group=48", (2, 96)),
    ("group=128", (3, 256)),
]


def weight(shape, seed):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * 0.5).astype(np.float16)
    rows, cols = shape
    # Row 1 (or 0) holds a NaN, a row after it a negative NaN with a payload.
    x[min(1, rows - 1), cols // 2] = np.float16(np.nan)
    if rows > 2:
        x[2, cols - 1] = np.uint16(0xFE55).view(np.float16)
    return x


def record():
    gen_block_fixtures.import_peers()
    cases = []
    for k, (strategy, shape) in enumerate(CASES):
        x = weight(shape, 1000 + k)
        r = gen_block_fixtures.compressed_tensors_fp8(x, strategy)
        cases.append({
            "scheme": f"fp8:{strategy}",
            "shape": list(shape),
            "input_f16": [int(v) for v in x.view(np.uint16).reshape(-1)],
            "elements": [int(v) for v in r["elements"].reshape(-1)],
            "scales_f16": [int(v) for v in np.asarray(r["scales"]).reshape(-1)],
            "dequantized_f32": [int(v) for v in r["dequantized"].view(np.uint32).reshape(-1)],
        })
    import compressed_tensors
    import torch
    return {
        "generator": "scripts/gen_block_nan_fixtures.py",
        "versions": {"torch": torch.__version__, "compressed-tensors": compressed_tensors.__version__},
        "cases": cases,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="compare with the committed file")
    opts = parser.parse_args()
    text = json.dumps(record(), separators=(",", ":")) + "\n"
    if opts.check:
        same = open(OUT).read() == text
        print("same" if same else "differs")
        sys.exit(0 if same else 1)
    with open(OUT, "w") as f:
        f.write(text)
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
