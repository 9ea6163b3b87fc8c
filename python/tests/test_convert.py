"""lowbit.convert: one code with its IEEE flags, every option. Expected codes and flags are
computed by hand in the comments (flags in TestFloat's bits: 1 inexact, 2 underflow, 4 overflow,
8 infinite, 16 invalid)."""

import struct

import numpy as np
import pytest

import lowbit

INEXACT, UNDERFLOW, OVERFLOW, INVALID = 1, 2, 4, 16


def f32(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


# float32 -> FLOAT8E4M3FN (1-4-3, bias 7, no infinity, NaN 0x7F, max 448 = 0x7E).
E4M3_CASES = [
    # 1.5 = 1.100b * 2^0: exponent 0 + 7 = 0111, fraction 100 -> 0 0111 100, exact.
    (f32(1.5), "rne", False, 0x3C, 0),
    # 1.0625 = 1.0001b: halfway between 1.000b (0x38) and 1.001b (0x39); even is 0x38.
    (f32(1.0625), "rne", False, 0x38, INEXACT),
    (f32(1.0625), "rtz", False, 0x38, INEXACT),
    (f32(1.0625), "rmm", False, 0x39, INEXACT),  # ties away
    (f32(1.0625), "raz", False, 0x39, INEXACT),  # away from zero
    (f32(1.0625), "rod", False, 0x39, INEXACT),  # truncate to 1.000b, then set the last bit
    (f32(1.0), "rod", False, 0x38, 0),  # exact: nothing to mark
    # 1.1875 = 1.0011b: halfway between 1.001b and 1.010b; even is 1.010b -> 0x3A.
    (f32(1.1875), "rne", False, 0x3A, INEXACT),
    (f32(1.1875), "rtz", False, 0x39, INEXACT),
    # -1.0625: down (toward -inf) is -1.125 = 0xB9, up is -1.0 = 0xB8.
    (f32(-1.0625), "rdn", False, 0xB9, INEXACT),
    (f32(-1.0625), "rup", False, 0xB8, INEXACT),
    # 464 = 1.1101b * 2^8: halfway between 448 (1.110b, 0x7E) and 480 (1.111b, which would be
    # 0x7F, the NaN); even is 448, so no overflow.
    (f32(464.0), "rne", False, 0x7E, INEXACT),
    # 480 rounds to itself, above MAX 448: overflow. Nearest: no infinity, so NaN 0x7F;
    # saturating or toward zero: MAX.
    (f32(480.0), "rne", False, 0x7F, OVERFLOW | INEXACT),
    (f32(480.0), "rne", True, 0x7E, OVERFLOW | INEXACT),
    (f32(480.0), "rtz", False, 0x7E, OVERFLOW | INEXACT),
    (f32(-480.0), "rne", False, 0xFF, OVERFLOW | INEXACT),
    # Infinity: no infinity in the target, invalid; NaN, or -MAX saturating.
    (0xFF800000, "rne", False, 0xFF, INVALID),
    (0xFF800000, "rne", True, 0xFE, INVALID),
    # NaNs keep their sign; a signalling one (quiet bit clear) raises invalid.
    (0x7FC00000, "rne", False, 0x7F, 0),
    (0xFFC00000, "rne", True, 0xFF, 0),
    (0x7F800001, "rne", False, 0x7F, INVALID),
    # 2^-10: half the smallest subnormal 2^-9, a tie -> +0 (even); tiny and inexact.
    (f32(2.0**-10), "rne", False, 0x00, UNDERFLOW | INEXACT),
    # 3 * 2^-11 = 0.75 steps of 2^-9: nearest is 1 step (0x01); toward zero 0.
    (f32(3 * 2.0**-11), "rne", False, 0x01, UNDERFLOW | INEXACT),
    (f32(3 * 2.0**-11), "rtz", False, 0x00, UNDERFLOW | INEXACT),
    # 2^-7 = 0.100b * 2^-6: the subnormal 0 0000 100, exact: no underflow though tiny.
    (f32(2.0**-7), "rne", False, 0x04, 0),
    # -0 stays -0.
    (0x80000000, "rne", False, 0x80, 0),
]


@pytest.mark.parametrize("bits,round,saturate,code,flags", E4M3_CASES)
def test_float32_to_e4m3fn(bits, round, saturate, code, flags):
    assert lowbit.convert(bits, "float32", "e4m3", round=round, saturate=saturate) == (code, flags)


# float32 -> FLOAT8E5M2 (1-5-2, bias 15, infinity 0x7C, max 57344 = 0x7B).
E5M2_CASES = [
    # 0.3 = 1.0011b * 2^-2: exponent 13 = 01101, fraction .0011.. -> 01 (nearest) -> 0x35.
    (f32(0.3), "rne", False, 0x35, INEXACT),
    # 61440 = 1.111b * 2^15: halfway between 57344 (1.11b, odd) and 65536 (1.00b * 2^16, even):
    # rounds to 2^16, overflow -> +Inf; saturating: MAX; toward zero it truncates to MAX without
    # overflowing.
    (f32(61440.0), "rne", False, 0x7C, OVERFLOW | INEXACT),
    (f32(61440.0), "rne", True, 0x7B, OVERFLOW | INEXACT),
    (f32(61440.0), "rtz", False, 0x7B, INEXACT),
    # Infinity is exact without saturation; saturating it is invalid and gives MAX.
    (0x7F800000, "rne", False, 0x7C, 0),
    (0xFF800000, "rne", True, 0xFB, INVALID),
    # 2^-17: half of the smallest subnormal 2^-16, a tie -> 0.
    (f32(2.0**-17), "rne", False, 0x00, UNDERFLOW | INEXACT),
]


@pytest.mark.parametrize("bits,round,saturate,code,flags", E5M2_CASES)
def test_float32_to_e5m2(bits, round, saturate, code, flags):
    assert lowbit.convert(bits, "float32", "e5m2", round=round, saturate=saturate) == (code, flags)


def test_float16_to_e5m2_is_rounding_off_the_low_byte():
    # E5M2 is float16's top byte: the low byte is what gets rounded.
    assert lowbit.convert(0x3C00, "float16", "e5m2") == (0x3C, 0)
    assert lowbit.convert(0x3C01, "float16", "e5m2") == (0x3C, INEXACT)
    assert lowbit.convert(0x3C80, "float16", "e5m2") == (0x3C, INEXACT)  # tie, 0x3C even
    assert lowbit.convert(0x3D80, "float16", "e5m2") == (0x3E, INEXACT)  # tie, 0x3E even
    assert lowbit.convert(0x3D80, "float16", "e5m2", round="rtz") == (0x3D, INEXACT)


def test_tininess_rules():
    # x = 1.1111b * 2^-7, just below E4M3's smallest normal 2^-6. At the subnormal quantum 2^-9
    # it is 7.75 steps -> 8, the smallest normal 0x08. Rounded to 3 fraction bits with an
    # unbounded exponent it is 2^-6 too, so it is tiny only before rounding.
    x = 0x3C780000
    assert lowbit.convert(x, "f32", "e4m3", saturate=False) == (0x08, INEXACT)
    assert lowbit.convert(x, "f32", "e4m3", tininess="after", saturate=False) == (0x08, INEXACT)
    assert lowbit.convert(x, "f32", "e4m3", tininess="before", saturate=False) == (0x08, UNDERFLOW | INEXACT)
    # Delivered: the result is normal, not tiny.
    assert lowbit.convert(x, "f32", "e4m3", tininess="delivered", saturate=False) == (0x08, INEXACT)


def test_stochastic_rounding_takes_the_random_word():
    # 1.0625 = 1.000|1000b: the 4 dropped bits below the kept fraction are 1000 = 8; with 4
    # random bits it rounds away iff 8 + random >= 16.
    one = f32(1.0625)
    assert lowbit.convert(one, "f32", "e4m3", round="sr:4", random=7) == (0x38, INEXACT)
    assert lowbit.convert(one, "f32", "e4m3", round="sr:4", random=8) == (0x39, INEXACT)
    assert lowbit.convert(one, "f32", "e4m3", round="sr:4") == (0x38, INEXACT)  # no random bits
    # Only the low R bits count: 0x10 + 7 is 7.
    assert lowbit.convert(one, "f32", "e4m3", round="sr:4", random=0x17) == (0x38, INEXACT)


def test_saturate_defaults_to_onnx_cast_into_float8():
    # As lowbit.vectors: saturation on from an ONNX type into an ONNX float8 type.
    assert lowbit.convert(f32(480.0), "f32", "e4m3") == (0x7E, OVERFLOW | INEXACT)
    # Off into a described format: 300 is past 240 + 8, +Inf 0x78.
    assert lowbit.convert(f32(300.0), "f32", "e4m3,special=ieee") == (0x78, OVERFLOW | INEXACT)


def test_integers():
    # 2.5 -> 2 (even), inexact; -2.5 -> -2 = 0xFE.
    assert lowbit.convert(f32(2.5), "f32", "int8") == (0x02, INEXACT)
    assert lowbit.convert(f32(-2.5), "f32", "int8") == (0xFE, INEXACT)
    assert lowbit.convert(f32(2.5), "f32", "int8", round="rup") == (0x03, INEXACT)
    # 300 is out of int8's range: invalid, x86's integer indefinite -128 = 0x80; saturating: 127.
    assert lowbit.convert(f32(300.0), "f32", "int8") == (0x80, INVALID)
    assert lowbit.convert(f32(300.0), "f32", "int8", saturate=True) == (0x7F, INVALID)
    # int8 0x81 = -127 = -1.111111b * 2^6 -> 3 fraction bits: rounds up to -2^7 = 1 1110 000.
    assert lowbit.convert(0x81, "int8", "e4m3") == (0xF0, INEXACT)
    assert lowbit.convert(0x81, "int8", "e4m3", round="rtz") == (0xEF, INEXACT)  # -120 = 1.111b * 2^6


def test_flags_false_gives_the_code_alone():
    assert lowbit.convert(f32(1.0625), "f32", "e4m3", flags=False) == 0x38
    code = lowbit.convert(np.uint32(f32(1.5)), np.float32, "e4m3", flags=False)
    assert code == 0x3C and isinstance(code, int)


@pytest.mark.parametrize(
    "call,error",
    [
        (lambda: lowbit.convert(1 << 32, "f32", "e4m3"), lowbit.DTypeError),  # wider than float32
        (lambda: lowbit.convert(0x100, "e4m3", "f32"), lowbit.DTypeError),
        (lambda: lowbit.convert(-1, "int8", "f32"), lowbit.DTypeError),  # give 0xFF
        (lambda: lowbit.convert(1 << 64, "f64", "f32"), lowbit.DTypeError),
        (lambda: lowbit.convert(True, "f32", "e4m3"), lowbit.Error),
        (lambda: lowbit.convert(1.5, "f32", "e4m3"), lowbit.Error),
        (lambda: lowbit.convert(0, "f32", "e4m3", round="rnx"), lowbit.Error),
        (lambda: lowbit.convert(0, "f32", "e4m3", tininess="never"), lowbit.Error),
        (lambda: lowbit.convert(0, "f32", "e4m3", round="sr:0"), lowbit.Error),
        (lambda: lowbit.convert(0, "f32", "e4m3", random=1), lowbit.Error),  # rne takes none
        (lambda: lowbit.convert(0, "f32", "no_such_type"), lowbit.DTypeError),
        (lambda: lowbit.convert(0, "f32", "string"), lowbit.DTypeError),
    ],
)
def test_bad_input_raises(call, error):
    with pytest.raises(error):
        call()


@pytest.mark.parametrize("round", ["rtz", "rup", "sr:3"])
def test_one_code_at_a_time_agrees_with_the_vectors(round):
    # The scalar call and lowbit.vectors pass the same options down: every case of a level-1 set
    # (special operands first, then random ones, stochastic random words included).
    v = lowbit.vectors("f32", "e5m2", round=round, tininess="before", saturate=False, count=500)
    randoms = v["random"] if "random" in v else [0] * len(v["operand"])
    assert len(v["operand"]) >= 500
    for operand, result, flags, random in zip(v["operand"], v["result"], v["flags"], randoms):
        got = lowbit.convert(
            int(operand), "f32", "e5m2", round=round, tininess="before", saturate=False, random=int(random)
        )
        assert got == (int(result), int(flags)), hex(int(operand))
