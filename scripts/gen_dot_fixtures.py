#!/usr/bin/env python3
"""Records dot products computed without lowbit, for tests/dot.rs: each a @ b.T of random
operands (float16, bfloat16, float8 E4M3FN and E5M2 codes, decoded by ml_dtypes) under three
accumulation models, every sum formed with Python's exact rationals (fractions.Fraction) and
rounded to float32 by the function below (nearest-even, subnormals, overflow to infinity):

  * exact: the whole sum, rounded once;
  * sequential-fp32: each product rounded to float32, then each partial sum, in index order;
  * fma,format=float32: acc = round(acc + a * b) in index order.

Operands mix ordinary values with the cases that tell the models apart: cancellation of large
terms, terms below the accumulator's last bit, zeros of both signs, ties. (NaN and infinities are
tested by hand in tests/dot.rs.)

    python3 scripts/gen_dot_fixtures.py [--out FILE] [--seed S]   (needs numpy and ml_dtypes)
"""
import argparse
import json
import pathlib
import random
from fractions import Fraction

import ml_dtypes
import numpy as np

DTYPES = {
    "FLOAT16": (np.float16, np.uint16),
    "BFLOAT16": (ml_dtypes.bfloat16, np.uint16),
    "FLOAT8E4M3FN": (ml_dtypes.float8_e4m3fn, np.uint8),
    "FLOAT8E5M2": (ml_dtypes.float8_e5m2, np.uint8),
}


def round_f32(q):
    """The float32 nearest to the rational q (ties to even), as its bits; overflow to infinity."""
    if q == 0:
        return 0
    sign = 0x80000000 if q < 0 else 0
    q = abs(q)
    e = q.numerator.bit_length() - q.denominator.bit_length()
    if Fraction(2) ** e > q:
        e -= 1
    # Now 2^e <= q < 2^(e+1); the step of float32 there (subnormals: 2^-149).
    step_exp = max(e, -126) - 23
    scaled = q / Fraction(2) ** step_exp
    n = scaled.numerator // scaled.denominator
    rest = scaled - n
    if rest > Fraction(1, 2) or (rest == Fraction(1, 2) and n % 2 == 1):
        n += 1
    value = Fraction(n) * Fraction(2) ** step_exp
    if value >= Fraction(2) ** 128 - Fraction(2) ** 103:  # at or past the rounding boundary of MAX
        return sign | 0x7F800000
    bits = np.array([float(value)], np.float64).astype(np.float32).view(np.uint32)[0]
    return sign | int(bits)


def f32_value(bits):
    return Fraction(float(np.array([bits], np.uint32).view(np.float32)[0]))


def codes(rng, dtype, count):
    np_type, int_type = DTYPES[dtype]
    width = np.dtype(int_type).itemsize * 8
    out = []
    finite = lambda c: np.isfinite(np.array([c], int_type).view(np_type).astype(np.float64)[0])
    while len(out) < count:
        c = rng.getrandbits(width)
        if finite(c):
            out.append(c)
    return out


def decode(dtype, code):
    np_type, int_type = DTYPES[dtype]
    value = float(np.array([code], int_type).view(np_type).astype(np.float64)[0])
    return Code(Fraction(value), negative_zero=np.signbit(value))


INF, NEG_INF, NAN = 0x7F800000, 0xFF800000, 0x7FC00000  # NaN: the model's default quiet NaN


def add_f32(acc_bits, term):
    """round(acc + term) for float32 bits acc and an exact term (a Fraction, or float32 bits
    of an infinity): IEEE's rules for infinities, Inf - Inf the default NaN."""
    specials = [x for x in (acc_bits, term) if isinstance(x, int) and x in (INF, NEG_INF, NAN)]
    if NAN in specials or (INF in specials and NEG_INF in specials):
        return NAN
    if specials:
        return specials[0]
    total = f32_value(acc_bits) + (term if isinstance(term, Fraction) else f32_value(term))
    if total == 0:  # an exact zero: -0 only when both terms are -0
        both_negative = acc_bits == 0x80000000 and isinstance(term, int) and term == 0x80000000
        return 0x80000000 if both_negative else 0
    return round_f32(total)


def product_bits(x, y):
    """float32 bits of the product rounded once, -0 for a zero product of unlike signs."""
    p = x * y
    if p == 0:
        return 0x80000000 if (x.negative_zero ^ y.negative_zero) else 0
    return round_f32(p)


class Code(Fraction):
    """An exact value that remembers a negative zero (Fraction has one zero)."""

    def __new__(cls, value, negative_zero=False):
        self = super().__new__(cls, value)
        self.negative_zero = negative_zero or value < 0
        return self


def models(a, b):
    exact = sum((x * y for x, y in zip(a, b)), Fraction(0))
    all_negative_zero = all(x * y == 0 and (x.negative_zero ^ y.negative_zero) for x, y in zip(a, b))
    exact_bits = round_f32(exact) if exact != 0 else (0x80000000 if all_negative_zero and a else 0)
    seq = 0
    fma = 0
    for x, y in zip(a, b):
        seq = add_f32(seq, product_bits(x, y))
        p = x * y
        fma = add_f32(fma, (0x80000000 if x.negative_zero ^ y.negative_zero else 0) if p == 0 else p)
    return exact_bits, seq, fma


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=str(pathlib.Path(__file__).resolve().parent.parent
                                             / "tests/data/dot/gemms.json"))
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    cases = []
    for dtype in DTYPES:
        for m, n, k in [(3, 4, 1), (4, 3, 7), (5, 5, 32), (2, 6, 100)]:
            a, b = codes(rng, dtype, m * k), codes(rng, dtype, n * k)
            # Cancellation: row 0 of a against row 0 of b repeats a large term with both signs.
            if k >= 4:
                a[0], a[1], a[2] = a[2], a[2] ^ (1 << (7 if "8" in dtype else 15)), a[2]
                b[0] = b[1] = b[2]
            exact, seq, fma = [], [], []
            for i in range(m):
                for j in range(n):
                    row = [decode(dtype, c) for c in a[i * k:(i + 1) * k]]
                    col = [decode(dtype, c) for c in b[j * k:(j + 1) * k]]
                    e, s, f = models(row, col)
                    exact.append(e)
                    seq.append(s)
                    fma.append(f)
            cases.append({"dtype": dtype, "m": m, "n": n, "k": k, "a": a, "b": b,
                          "exact": exact, "sequential-fp32": seq, "fma,format=float32": fma})
    record = {"source": "scripts/gen_dot_fixtures.py: Python fractions and its own float32 rounding; "
                        f"ml_dtypes {ml_dtypes.__version__} decodes the codes",
              "cases": cases}
    pathlib.Path(args.out).write_text(json.dumps(record) + "\n")
    print(f"{len(cases)} GEMMs, {sum(c['m'] * c['n'] for c in cases)} dot products per model, written to {args.out}")


if __name__ == "__main__":
    main()
