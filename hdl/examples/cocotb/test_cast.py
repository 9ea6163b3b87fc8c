"""cocotb testbench of the example cast unit (../cast_f32_fp8.sv): drives special and random
float32 operands in every mode the unit has (E4M3FN or E5M2, nearest even or toward zero,
saturating or not) and compares every result and flag with lowbit.convert, the reference model.

The operands mix the special values of both formats (zeros, subnormals, the smallest normal,
MAX and the first value past it, exact ties, infinities, quiet and signalling NaNs) with random
ones whose low fraction bits are cleared at a random position, so that exact ties and exact
values come up often rather than once in a million. LOWBIT_COCOTB_CASES sets the number of
random operands per mode; cocotb's seed (COCOTB_RANDOM_SEED) makes a run repeatable.

With LOWBIT_COCOTB_RESULTS set, the test writes there, as JSON, how many conversions it compared
and how many differed from lowbit, once it has compared them all (run.py reads it: a run that
ends before, as a crashed simulator does, leaves no file).
"""

import json
import os
import random
import struct

import cocotb
from cocotb.triggers import Timer

import lowbit

# The unit's modes: (to_e5m2, rtz, saturate) and the same conversion in lowbit's words.
TARGETS = {0: "float8e4m3fn", 1: "float8e5m2"}
ROUNDING = {0: "rne", 1: "rtz"}
FLAG_NAMES = ("inexact", "underflow", "overflow", "infinite", "invalid")


def f32(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def special_operands() -> list:
    """Values at the edges of both formats, each with both signs."""
    values = [
        0.0, 1.0, 1.5, 1.0625, 1.1875,          # exact, and ties to even below and above
        448.0, 449.0, 464.0, 480.0, 512.0,      # E4M3FN: MAX, past it, the tie at MAX, overflow
        57344.0, 61440.0, 65536.0, 1e10,        # E5M2: MAX, the tie at MAX, overflow
        2.0**-6, 2.0**-7, 2.0**-9, 2.0**-10,    # E4M3FN: smallest normal, subnormals, half of min
        3 * 2.0**-11, 2.0**-14, 2.0**-16, 2.0**-17, 3 * 2.0**-18,  # E5M2 alike
    ]
    codes = [f32(v) for v in values]
    codes += [
        0x3C780000,  # 1.1111b * 2^-7: rounds up to E4M3's smallest normal (tiny before only)
        0x38700000,  # 1.111b * 2^-15: the same for E5M2
        0x00000001, 0x007FFFFF, 0x00800000, 0x7F7FFFFF,  # float32's subnormals, min normal, MAX
        0x7F800000,  # infinity
        0x7FC00000, 0x7FFFFFFF, 0x7F800001, 0x7FA00000,  # quiet and signalling NaNs
    ]
    return codes + [c | 0x80000000 for c in codes]


def random_operand(rng: random.Random) -> int:
    sign = rng.getrandbits(1) << 31
    # Half of them in or near the two formats' ranges (2^-20 .. 2^17), half anywhere.
    exponent = rng.randint(127 - 20, 127 + 17) if rng.getrandbits(1) else rng.randint(0, 255)
    fraction = rng.getrandbits(23) & ~((1 << rng.randint(0, 23)) - 1)
    return sign | exponent << 23 | fraction


@cocotb.test()
async def cast_matches_lowbit(dut):
    rng = random.Random(cocotb.RANDOM_SEED)
    cases = int(os.environ.get("LOWBIT_COCOTB_CASES", "2000"))
    checked, mismatches = 0, []
    for to_e5m2 in (0, 1):
        for rtz in (0, 1):
            for saturate in (0, 1):
                operands = special_operands() + [random_operand(rng) for _ in range(cases)]
                dut.to_e5m2.value = to_e5m2
                dut.rtz.value = rtz
                dut.saturate.value = saturate
                for a in operands:
                    dut.a.value = a
                    await Timer(1, unit="ns")
                    got = (int(dut.result.value), int(dut.flags.value))
                    want = lowbit.convert(
                        a, "float32", TARGETS[to_e5m2], round=ROUNDING[rtz], tininess="after", saturate=bool(saturate)
                    )
                    checked += 1
                    if got != want:
                        mismatches.append((a, to_e5m2, rtz, saturate, got, want))
    for a, to_e5m2, rtz, saturate, got, want in mismatches[:10]:
        wrong = [n for i, n in enumerate(FLAG_NAMES) if (got[1] ^ want[1]) >> i & 1]
        dut._log.error(
            "a=%08X -> %s %s saturate=%d: unit %02X flags %02X, lowbit %02X flags %02X%s",
            a, TARGETS[to_e5m2], ROUNDING[rtz], saturate, got[0], got[1], want[0], want[1],
            f" (flags differ: {', '.join(wrong)})" if wrong else "",
        )
    dut._log.info("%d conversions compared with lowbit.convert, %d mismatches", checked, len(mismatches))
    results = os.environ.get("LOWBIT_COCOTB_RESULTS")
    if results:
        with open(results, "w") as f:
            json.dump({"compared": checked, "mismatches": len(mismatches)}, f)
    assert checked > 0, "nothing was compared"
    assert not mismatches, f"{len(mismatches)} of {checked} conversions differ from lowbit"
