"""lowbit.vectors, check, sweep and info: hand-computed cases, the onnx reference's bytes hashed
by hashlib, and ml_dtypes' finfo/iinfo as peers."""

import hashlib
import warnings

import ml_dtypes
import numpy as np
import pytest
from onnx import TensorProto as T, helper
from onnx.reference import ReferenceEvaluator

import lowbit

# TestFloat's flag bits.
INEXACT, UNDERFLOW, OVERFLOW, INFINITE, INVALID = 1, 2, 4, 8, 16


def test_vectors_every_float16_into_e5m2_by_hand():
    # IEEE semantics asked for (an ONNX float8 target saturates by default, as the CLI's).
    v = lowbit.vectors("f16", "e5m2", level="all", saturate=False)
    assert np.array_equal(v["operand"], np.arange(1 << 16, dtype=np.uint64))
    result, flags = v["result"], v["flags"]
    # E5M2 is the top byte of float16 with the low 8 bits rounded off (nearest even):
    # 1.0 = 0x3C00 -> 0x3C exactly; 0x3C01 (1 + 2^-10) -> 0x3C, inexact; 0x3C80 (1.125) is the
    # midpoint of 1.0 (0x3C, even) and 1.25 (0x3D): 0x3C, inexact; 0x3D80 (1.375) is the midpoint of
    # 1.25 (0x3D, odd) and 1.5 (0x3E): 0x3E, inexact; 65504 (0x7BFF) is above the overflow threshold
    # 61440: infinity 0x7C, overflow and inexact; a signalling NaN 0x7C01 raises invalid.
    assert (result[0x3C00], flags[0x3C00]) == (0x3C, 0)
    assert (result[0x3C01], flags[0x3C01]) == (0x3C, INEXACT)
    assert (result[0x3C80], flags[0x3C80]) == (0x3C, INEXACT)
    assert (result[0x3D80], flags[0x3D80]) == (0x3E, INEXACT)
    assert (result[0x7BFF], flags[0x7BFF]) == (0x7C, OVERFLOW | INEXACT)
    assert flags[0x7C01] & INVALID
    # Saturating: MAX 0x7B instead of infinity; the default between ONNX types into float8, as
    # `lowbit vectors` (ONNX Cast's saturate=1).
    s = lowbit.vectors("f16", "e5m2", level="all", saturate=True)
    assert s["result"][0x7BFF] == 0x7B
    assert lowbit.vectors("f16", "e5m2", level="all")["result"][0x7BFF] == 0x7B
    # A described target keeps IEEE's default: infinity 0x7C (e5m2,special=ieee is E5M2's layout).
    assert lowbit.vectors("f16", "e5m2,special=ieee", level="all")["result"][0x7BFF] == 0x7C


def test_vectors_layouts_and_levels():
    v = lowbit.vectors("f32", "e4m3,special=ieee", round="rtz", level=1, count=3000, seed=9)
    assert len(v["operand"]) == 3000 and v["specials"] > 0 and "random" not in v
    text = lowbit.vectors("f32", "e4m3,special=ieee", round="rtz", level=1, count=3000, seed=9, layout="testfloat")
    lines = text.splitlines()
    assert len(lines) == 3000
    # TestFloat's layout: 8 hex digits, 2, 2 (flags).
    op, res, fl = lines[0].split()
    assert (int(op, 16), int(res, 16), int(fl, 16)) == (v["operand"][0], v["result"][0], v["flags"][0])
    csv = lowbit.vectors("f32", "e4m3,special=ieee", round="sr:5", count=10, layout="csv")
    assert csv.splitlines()[0] == "operand,result,flags,random"
    sr = lowbit.vectors("f32", "e4m3,special=ieee", round="sr:5", count=10)
    assert len(sr["random"]) == len(sr["operand"])
    with pytest.raises(lowbit.Error, match="round"):
        lowbit.vectors("f32", "e4m3fn", round="nearest")
    with pytest.raises(lowbit.Error, match="all"):
        lowbit.vectors("f32", "e4m3fn", level="all")
    with pytest.raises(lowbit.DTypeError, match="bias"):
        lowbit.vectors("f32", "e4m3,bias=x")


def test_check_text_arrays_and_files(tmp_path):
    v = lowbit.vectors("f16", "e5m2", level="all")
    clean = lowbit.check("f16", "e5m2", (v["operand"], v["result"], v["flags"]))
    assert (clean["checked"], clean["mismatches"]) == (65536, 0)
    assert clean["report"].endswith("65536 checked, 0 mismatches")
    # One result one step too far from zero: 0x3C00 -> 0x3D instead of 0x3C.
    wrong = v["result"].copy()
    wrong[0x3C00] = 0x3D
    bad = lowbit.check("f16", "e5m2", (v["operand"], wrong, v["flags"]))
    assert bad["mismatches"] == 1
    assert list(bad["classes"].values()) == [1] and "too far from zero" in next(iter(bad["classes"]))
    assert bad["shown"][0].startswith("line 15361: 3C00")
    # The same dump as text and as a file.
    lines = "".join(f"{o:04X} {r:02X} {f:02X}\n" for o, r, f in zip(v["operand"], wrong, v["flags"]))
    assert lowbit.check("f16", "e5m2", lines)["mismatches"] == 1
    path = tmp_path / "dump.txt"
    path.write_text(lines)
    assert lowbit.check("f16", "e5m2", path)["mismatches"] == 1
    # Missing flags: a flag due but absent.
    no_flags = lowbit.check("f16", "e5m2", (v["operand"], v["result"], np.zeros(65536, np.uint8)))
    assert no_flags["flags_missing"]["inexact"] > 0 and no_flags["mismatches"] > 0
    # Which configuration a round-toward-zero dump follows (every 16th pattern: the ranking tries
    # thousands of configurations).
    rtz = lowbit.vectors("f16", "e5m2", level="all", round="rtz")
    which = lowbit.check("f16", 8, (rtz["operand"][::16], rtz["result"][::16], rtz["flags"][::16]), which=True)
    best = which["ranking"][0]
    assert best[0].startswith("rtz") and best[2] == which["checked"] == 4096
    assert all(not r[0].startswith("rne") for r in which["ranking"] if r[2] == 4096)


def test_check_errors(tmp_path):
    with pytest.raises(lowbit.ParseError, match="line 2"):
        lowbit.check("f16", "e5m2", "3C00 3C 00\n3C0 3C 00\n")
    with pytest.raises(lowbit.FileError) as e:
        lowbit.check("f16", "e5m2", tmp_path / "missing.txt")
    assert isinstance(e.value, OSError)
    with pytest.raises(lowbit.Error, match="differ in length"):
        lowbit.check("f16", "e5m2", (np.zeros(3), np.zeros(2)))
    with pytest.raises(lowbit.Error, match="dump must be"):
        lowbit.check("f16", "e5m2", 42)


def test_check_empty_dump_is_an_error_unless_allowed(tmp_path):
    # As `lowbit check` fails on a dump with no case: a simulator that wrote nothing is no pass.
    for dump in ("", b"# comment only\n\n", (np.zeros(0, np.uint64), np.zeros(0, np.uint64))):
        with pytest.raises(lowbit.Error, match="holds no case to check"):
            lowbit.check("f16", "e5m2", dump)
    empty = tmp_path / "empty.txt"
    empty.write_text("# header\n")
    with pytest.raises(lowbit.Error, match="1 comment, blank or header lines skipped"):
        lowbit.check("f16", "e5m2", empty)
    with pytest.raises(lowbit.Error, match="holds no case to check"):
        lowbit.check("f16", 8, "", which=True)
    accepted = lowbit.check("f16", "e5m2", "# c\n", allow_empty=True)
    assert accepted["checked"] == 0 and accepted["mismatches"] == 0
    assert lowbit.check("f16", 8, "", which=True, allow_empty=True)["checked"] == 0
    with pytest.raises(lowbit.Error, match="allow_empty"):
        lowbit.check("f16", "e5m2", "", allow_empty=2)


def test_sweep_counts_by_hand():
    r = lowbit.sweep("f16", "e5m2", saturate=False)
    assert r["patterns"] == 65536
    # Zero: E5M2's smallest subnormal is 2^-16; |x| <= 2^-17 (float16 0x0080, 128 * 2^-24) rounds
    # to zero (the tie 2^-17 to the even code 0): 0x0000..0x0080 of either sign, 2 * 129 = 258.
    # NaN: float16's NaNs, 2 * 1023 = 2046. Infinity: +/-Inf and |x| >= 61440 (0x7B80..0x7BFF),
    # 2 * (1 + 128) = 258.
    assert r["classes"]["zero"] == 258
    assert r["classes"]["NaN"] == 2046
    assert r["classes"]["infinity"] == 258
    assert sum(r["classes"].values()) == 65536
    assert r["flags"]["overflow"] == 2 * 128
    assert len(r["sha256"]) == 64 and "sha256 " + r["sha256"] in r["report"]


def test_sweep_digest_equals_onnx_reference_bytes():
    # ONNX Cast under the onnx-reference profile over every float16 pattern: the digest of the
    # result codes equals hashlib's over the reference's own output bytes.
    x = np.arange(1 << 16, dtype=np.uint16).view(np.float16)
    node = helper.make_node("Cast", ["x"], ["y"], to=T.FLOAT8E4M3FN, saturate=1)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", T.FLOAT16, None)], [helper.make_tensor_value_info("y", T.FLOAT8E4M3FN, None)]
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 25)])
    model.ir_version = 13
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y = ReferenceEvaluator(model).run(None, {"x": x})[0]
    r = lowbit.sweep("f16", "e4m3fn", config="profile=onnx-reference,saturate=1")
    assert r["sha256"] == hashlib.sha256(np.ascontiguousarray(y).view(np.uint8).tobytes()).hexdigest()
    assert r["flags"] is None


# ------------------------------------------------------------------------------------------------
# info
# ------------------------------------------------------------------------------------------------

FLOATS = ["bfloat16", "float16", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz",
          "float8_e8m0fnu", "float6_e2m3fn", "float6_e3m2fn", "float4_e2m1fn"]


@pytest.mark.parametrize("name", FLOATS)
def test_info_equals_ml_dtypes_finfo(name):
    t = np.float16 if name == "float16" else getattr(ml_dtypes, name)
    fi = ml_dtypes.finfo(t)
    d = lowbit.info(t)
    assert d["kind"] == "float" and d["numpy"] == name
    assert d["bits"] == fi.bits
    assert d["max"] == float(fi.max)
    assert d["min_normal"] == float(fi.smallest_normal)
    assert d["mantissa_bits"] == fi.nmant
    if d["min_subnormal"] is not None:
        assert d["min_subnormal"] == float(fi.smallest_subnormal)
    assert d["has_inf"] == bool(np.isinf(np.array(np.inf, np.float32).astype(t).astype(np.float32)))


@pytest.mark.parametrize("name", ["int4", "uint4", "int2", "uint2", "int8", "uint16", "int64"])
def test_info_equals_ml_dtypes_iinfo(name):
    t = getattr(ml_dtypes, name, None) or getattr(np, name)
    ii = ml_dtypes.iinfo(t)
    d = lowbit.info(name)
    assert (d["kind"], d["min"], d["max"], d["bits"]) == ("integer", ii.min, ii.max, ii.bits)


def test_info_by_hand():
    d = lowbit.info("e4m3fn")
    assert d["name"] == "FLOAT8E4M3FN" and d["onnx_number"] == 17
    # 448 = 0x7E, NaN 0x7F and 0xFF, no infinity, -0 = 0x80.
    assert d["codes"] == {
        "max": 0x7E, "lowest": 0xFE, "min_normal": 0x08, "min_subnormal": 0x01, "zero": 0x00,
        "negative_zero": 0x80, "inf": None, "negative_inf": None, "nan": 0x7F, "negative_nan": 0xFF,
    }
    # A described format: IEEE 1-4-3 reserves the top exponent, so MAX is 1.875 * 2^7 = 240.
    ieee = lowbit.info("e4m3,special=ieee")
    assert ieee["onnx_number"] is None and ieee["max"] == 240.0 and ieee["has_inf"]
    assert lowbit.info(np.float32)["bits"] == 32
    assert lowbit.info("STRING")["kind"] == "string"
    assert lowbit.info(ml_dtypes.int4)["packing"].startswith("nibbles")
    with pytest.raises(lowbit.DTypeError):
        lowbit.info("float7")
