#!/usr/bin/env python3
"""Records dot products of block-scaled operands computed without lowbit, for tests/dot.rs: each
a @ b.T of random operands given as element codes and block scale codes (OCP MXFP4 and MXFP8
E4M3 with E8M0 scales over blocks of 32, NVFP4 with E4M3 scales over blocks of 16 and a float32
per-tensor scale), the elements decoded by ml_dtypes, E8M0 as 2^(e - 127), every sum formed with
Python's exact rationals and rounded to float32 by scripts/gen_dot_fixtures.py's rounding:

  * exact: sum of (element x scale x per-tensor scale) products over K, rounded once;
  * sequential-fp32: per block, each product of two elements rounded to float32 and added in
    index order to a float32 block sum; the two block scales' product rounded to float32; the
    block sum times it, rounded; added to a float32 accumulator, rounded; at the end the
    accumulator times the product of the per-tensor scales (rounded), rounded.

    python3 scripts/gen_dot_block_fixtures.py [--out FILE] [--seed S]   (needs numpy and ml_dtypes)
"""
import argparse
import json
import pathlib
import random
import sys
from fractions import Fraction

import ml_dtypes
import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from gen_dot_fixtures import NAN, add_f32, f32_value, round_f32  # noqa: E402

# scheme: (element numpy type, bits per element code, block, scale kind)
SCHEMES = {
    "ocp:mxfp4": (ml_dtypes.float4_e2m1fn, 4, 32, "e8m0"),
    "ocp:mxfp8e4m3": (ml_dtypes.float8_e4m3fn, 8, 32, "e8m0"),
    "modelopt:nvfp4": (ml_dtypes.float4_e2m1fn, 4, 16, "e4m3"),
}


def element(scheme, code):
    np_type = SCHEMES[scheme][0]
    return Fraction(float(np.array([code], np.uint8).view(np_type).astype(np.float64)[0]))


def scale(scheme, code):
    if SCHEMES[scheme][3] == "e8m0":
        return Fraction(2) ** (code - 127)
    return Fraction(float(np.array([code], np.uint8).view(ml_dtypes.float8_e4m3fn).astype(np.float64)[0]))


def f32_bits(q):
    return 0 if q == 0 else round_f32(q)


def operand(rng, scheme, rows, k):
    _, bits, block, kind = SCHEMES[scheme]
    elements = []
    for _ in range(rows * k):
        c = rng.getrandbits(bits)
        while bits == 8 and c & 0x7F == 0x7F:  # no NaN elements here (tested by hand)
            c = rng.getrandbits(bits)
        elements.append(c)
    blocks = (k + block - 1) // block
    if kind == "e8m0":
        scales = [rng.randint(110, 140) for _ in range(rows * blocks)]
    else:
        scales = [rng.choice([c for c in range(1, 0x7F) if c != 0]) for _ in range(rows * blocks)]
    glob = None
    if scheme == "modelopt:nvfp4":
        glob = float(np.float32(rng.uniform(1e-3, 4.0)))
    return {"elements": elements, "scales": scales, "global_scale": glob}


def models(scheme_a, a, i, scheme_b, b, j, k):
    block_a, block_b = SCHEMES[scheme_a][2], SCHEMES[scheme_b][2]
    block = min(block_a, block_b)

    def value(scheme, op, row, t):
        blk = SCHEMES[scheme][2]
        per_row = (k + blk - 1) // blk
        s = scale(scheme, op["scales"][row * per_row + t // blk])
        g = Fraction(op["global_scale"]) if op["global_scale"] is not None else Fraction(1)
        return element(scheme, op["elements"][row * k + t]), s, g

    exact = Fraction(0)
    acc = 0
    for start in range(0, k, block):
        bsum = 0
        for t in range(start, min(start + block, k)):
            ea, sa, ga = value(scheme_a, a, i, t)
            eb, sb, gb = value(scheme_b, b, j, t)
            exact += ea * sa * ga * eb * sb * gb
            p = ea * eb
            bsum = add_f32(bsum, 0 if p == 0 else round_f32(p))
        _, sa, ga = value(scheme_a, a, i, start)
        _, sb, gb = value(scheme_b, b, j, start)
        s = round_f32(sa * sb)
        term = f32_value(bsum) * f32_value(s)
        acc = add_f32(acc, 0 if term == 0 else round_f32(term))
    gs = [Fraction(op["global_scale"]) for op in (a, b) if op["global_scale"] is not None]
    if gs:
        g = round_f32(gs[0] * (gs[1] if len(gs) > 1 else 1))
        prod = f32_value(acc) * f32_value(g)
        acc = 0 if prod == 0 else round_f32(prod)
    return f32_bits(exact), acc


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=str(pathlib.Path(__file__).resolve().parent.parent
                                             / "tests/data/dot/block_gemms.json"))
    parser.add_argument("--seed", type=int, default=2)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    cases = []
    for sa, sb in [("ocp:mxfp4", "ocp:mxfp4"), ("ocp:mxfp8e4m3", "ocp:mxfp8e4m3"), ("ocp:mxfp4", "ocp:mxfp8e4m3"),
                   ("modelopt:nvfp4", "modelopt:nvfp4")]:
        for m, n, k in [(2, 3, 32), (3, 2, 96), (2, 2, 256)]:
            a, b = operand(rng, sa, m, k), operand(rng, sb, n, k)
            exact, seq = [], []
            for i in range(m):
                for j in range(n):
                    e, s = models(sa, a, i, sb, b, j, k)
                    exact.append(e)
                    seq.append(s)
            cases.append({"a_scheme": sa, "b_scheme": sb, "m": m, "n": n, "k": k, "a": a, "b": b,
                          "exact": exact, "sequential-fp32": seq})
    record = {"source": "scripts/gen_dot_block_fixtures.py: Python fractions and its own float32 rounding; "
                        f"ml_dtypes {ml_dtypes.__version__} decodes the element codes",
              "cases": cases}
    pathlib.Path(args.out).write_text(json.dumps(record) + "\n")
    print(f"{len(cases)} GEMMs, {sum(c['m'] * c['n'] for c in cases)} dot products per model, written to {args.out}")


if __name__ == "__main__":
    main()
