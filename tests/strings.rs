//! ONNX `Cast` to and from STRING (profile rows `strings.grammar` and `strings.number_style`).
//!
//! The exact strings of research §8.2 and the parsing vectors of §8.1, per style and grammar;
//! digests of numpy's and glibc's own output over every float16 and large samples of float32 and
//! float64; glibc `strtod`/`strtoll`/`strtoull` and CPython `float()`/`int()` vectors; and the
//! round-trip property of the `spec` style over every code of every 16-bit-and-narrower float.
//!
//! The golden data was produced with numpy 2.4.6, CPython 3.11 and glibc (via ctypes), as
//! described next to each table, so that the tests need none of them.

use lowbit::format::{FloatFormat, BF16, E2M1, E2M3, E3M2, E4M3FN, E4M3FNUZ, E5M2, E5M2FNUZ, E8M0, F16};
use lowbit::profile::NumberStyle;
use lowbit::profile::StringGrammar;
use lowbit::strings::{format_code, parse_to_code};
use lowbit::{CastOptions, DType, Error, RoundMode};
use sha2::{Digest, Sha256};
use std::num::FpCategory;

fn fmt(dtype: DType, code: u64, style: NumberStyle) -> String {
    format_code(dtype, code, style).unwrap()
}

fn f32_code(x: f32) -> u64 {
    u64::from(x.to_bits())
}

fn parse(text: &str, dtype: DType, grammar: StringGrammar) -> Result<u64, Error> {
    parse_to_code(text, dtype, grammar, &CastOptions::default())
}

fn ok(text: &str, dtype: DType, grammar: StringGrammar) -> u64 {
    parse(text, dtype, grammar).unwrap_or_else(|e| panic!("{text:?} as {dtype} ({grammar:?}): {e}"))
}

fn err(text: &str, dtype: DType, grammar: StringGrammar) -> String {
    match parse(text, dtype, grammar) {
        Ok(code) => panic!("{text:?} as {dtype} ({grammar:?}) gave {code:#x}, expected an error"),
        Err(e) => e.to_string(),
    }
}

// ---- number -> text: research §8.2 ------------------------------------------------------------

/// (f32 input, numpy/reference string, onnxruntime string): docs/research/onnx_cast.md §8.2.
const F32_TABLE: &[(f32, &str, &str)] = &[
    (0.1, "0.1", "0.1"),
    (1e10, "1e+10", "1e+10"),
    (1e-7, "1e-07", "1e-07"),
    (3.0, "3.0", "3"),
    (-0.0, "-0.0", "-0"),
    (1.0 / 3.0, "0.33333334", "0.33333334"),
    (123456789.0, "1.2345679e+08", "1.2345679e+08"),
    (1e-5, "1e-05", "9.9999997e-06"),
    (1e-4, "1e-04", "9.9999997e-05"),
    (0.0001234, "0.0001234", "0.00012339999"),
    (100.0, "100.0", "100"),
    (1e15, "1e+15", "9.9999999e+14"),
    (16777216.0, "1.6777216e+07", "16777216"),
    (3.4028235e38, "3.4028235e+38", "3.4028235e+38"),
    (1.4e-45, "1e-45", "1.4012985e-45"),
    (0.3, "0.3", "0.30000001"),
    (0.2961402, "0.2961402", "0.29614019"),
    (999999.94, "999999.94", "999999.94"),
    (1e6, "1e+06", "1000000"),
];

#[test]
fn float32_strings_match_numpy_and_onnxruntime() {
    for &(x, numpy, ort) in F32_TABLE {
        assert_eq!(fmt(DType::Float, f32_code(x), NumberStyle::Numpy), numpy, "numpy {x:e}");
        assert_eq!(fmt(DType::Float, f32_code(x), NumberStyle::Spec), numpy, "spec {x:e}");
        assert_eq!(fmt(DType::Float, f32_code(x), NumberStyle::PrintfG8), ort, "%.8g {x:e}");
    }
}

#[test]
fn non_finite_spellings() {
    let nan = f32_code(f32::NAN);
    let neg_nan = f32_code(-f32::NAN);
    for (code, numpy, spec) in [
        (nan, "nan", "NaN"),
        (neg_nan, "nan", "NaN"),
        (f32_code(f32::INFINITY), "inf", "INF"),
        (f32_code(f32::NEG_INFINITY), "-inf", "-INF"),
    ] {
        assert_eq!(fmt(DType::Float, code, NumberStyle::Numpy), numpy);
        assert_eq!(fmt(DType::Float, code, NumberStyle::Spec), spec);
        assert_eq!(fmt(DType::Float, code, NumberStyle::PrintfG8), spec);
    }
    assert_eq!(fmt(DType::Float8E4M3FN, 0x7F, NumberStyle::PrintfG8), "NaN");
    assert_eq!(fmt(DType::Float8E5M2FNUZ, 0x80, NumberStyle::Numpy), "nan");
    assert_eq!(fmt(DType::Float8E5M2, 0xFC, NumberStyle::Spec), "-INF");
    assert_eq!(fmt(DType::Float8E8M0, 0xFF, NumberStyle::Spec), "NaN");
}

#[test]
fn float64_strings() {
    for (x, numpy, ort) in [
        (0.1, "0.1", "0.1"),
        (1e10, "10000000000.0", "1e+10"),
        (1.0 / 3.0, "0.3333333333333333", "0.33333333"),
        (123456789.123, "123456789.123", "1.2345679e+08"),
        (5e-324, "5e-324", "4.9406565e-324"),
        (1.7976931348623157e308, "1.7976931348623157e+308", "1.7976931e+308"),
        (1e16, "1e+16", "1e+16"),
        (9999999999999998.0, "9999999999999998.0", "1e+16"),
        (-2.5e-5, "-2.5e-05", "-2.5e-05"),
    ] {
        let code = f64::to_bits(x);
        assert_eq!(fmt(DType::Double, code, NumberStyle::Numpy), numpy, "{x:e}");
        assert_eq!(fmt(DType::Double, code, NumberStyle::Spec), numpy, "{x:e}");
        assert_eq!(fmt(DType::Double, code, NumberStyle::PrintfG8), ort, "{x:e}");
    }
}

#[test]
fn float16_bfloat16_float8_strings() {
    // (dtype, code, numpy layout, %.8g): research §8.2 (float16 0.1 = 0.0999755859375).
    for (dtype, code, numpy, ort) in [
        (DType::Float16, 0x2E66, "0.1", "0.099975586"),
        (DType::Float16, 0x7BFF, "6.55e+04", "65504"),
        (DType::Float16, 0x0001, "6e-08", "5.9604645e-08"),
        (DType::Float16, 0x3555, "0.3333", "0.33325195"),
        (DType::Float16, 0x8000, "-0.0", "-0"),
        (DType::Bfloat16, 0x3DCD, "0.1", "0.10009766"),
        (DType::Bfloat16, 0x5015, "1e+10", "9.9992207e+09"),
        (DType::Bfloat16, 0x3EAB, "0.334", "0.33398438"),
        (DType::Float8E4M3FN, 0x1D, "0.1", "0.1015625"),
        (DType::Float8E4M3FN, 0x01, "0.002", "0.001953125"),
        (DType::Float4E2M1, 0x7, "6.0", "6"),
        (DType::Float4E2M1, 0xF, "-6.0", "-6"),
        (DType::Float6E2M3, 0x1F, "7.5", "7.5"),
        (DType::Float8E8M0, 0x00, "6e-39", "5.8774718e-39"),
        (DType::Float8E8M0, 0xFE, "2e+38", "1.7014118e+38"),
        (DType::Float8E8M0, 0x7F, "1.0", "1"),
    ] {
        assert_eq!(fmt(dtype, code, NumberStyle::Numpy), numpy, "{dtype} {code:#x}");
        assert_eq!(fmt(dtype, code, NumberStyle::PrintfG8), ort, "{dtype} {code:#x}");
    }
    assert_eq!(fmt(DType::Float8E4M3FN, 0x7E, NumberStyle::PrintfG8), "448");
}

#[test]
fn shortest_digits_follow_numpy_at_ties_and_interval_ends() {
    // numpy 2.4.6: an exact tie between two shortest candidates goes to the even digit
    // (2097152.25 -> 2097152.2, not .3) ...
    // 0x4A000001 = 2097152.25 = 2^21 + 2^-2.
    assert_eq!(fmt(DType::Float, 0x4A00_0001, NumberStyle::Numpy), "2.0971522e+06");
    // ... and the rounding interval of an even code includes its ends: float16 16992 (even) reads
    // back from 17000, the midpoint to 17008.
    assert_eq!(fmt(DType::Float16, 0x7426, NumberStyle::Numpy), "1.7e+04");
    assert_eq!(fmt(DType::Float16, 0x6800, NumberStyle::Numpy), "2.048e+03");
    assert_eq!(fmt(DType::Float16, 0x3C00, NumberStyle::Numpy), "1.0");
}

#[test]
fn narrow_formats_use_their_own_shortest_digits() {
    // Shortest round-trip in the source type, read back nearest-even without saturation, as if
    // the exponent range were unbounded: float8e4m3fn 448 reads back from [432, 464], so two
    // digits suffice; E8M0's 16 reads back from (12, 24).
    assert_eq!(fmt(DType::Float8E4M3FN, 0x7E, NumberStyle::Spec), "450.0");
    assert_eq!(fmt(DType::Float8E8M0, 0x83, NumberStyle::Spec), "20.0");
    assert_eq!(fmt(DType::Float8E5M2, 0x7B, NumberStyle::Spec), "6e+04");
    // float6e3m2's MAX 28 must not print as 30 (clamping would read 30 back as 28; an unbounded
    // exponent range would not).
    assert_eq!(fmt(DType::Float6E3M2, 0x1F, NumberStyle::Spec), "28.0");
    assert_eq!(fmt(DType::Float4E2M1, 0x1, NumberStyle::Spec), "0.5");
}

#[test]
fn bool_and_integer_strings() {
    assert_eq!(fmt(DType::Bool, 1, NumberStyle::Spec), "True");
    assert_eq!(fmt(DType::Bool, 0, NumberStyle::Numpy), "False");
    assert_eq!(fmt(DType::Bool, 1, NumberStyle::PrintfG8), "1");
    assert_eq!(fmt(DType::Bool, 0, NumberStyle::PrintfG8), "0");
    for style in [NumberStyle::Spec, NumberStyle::Numpy, NumberStyle::PrintfG8] {
        assert_eq!(fmt(DType::Int8, 0x80, style), "-128");
        assert_eq!(fmt(DType::Int64, 1 << 63, style), "-9223372036854775808");
        assert_eq!(fmt(DType::Uint64, u64::MAX, style), "18446744073709551615");
        assert_eq!(fmt(DType::Int4, 0x8, style), "-8");
        assert_eq!(fmt(DType::Uint2, 0x3, style), "3");
    }
}

#[test]
fn non_numeric_dtypes_are_errors() {
    assert!(format_code(DType::String, 0, NumberStyle::Spec).is_err());
    assert!(format_code(DType::Complex64, 0, NumberStyle::Numpy).is_err());
    assert!(parse("1", DType::Complex128, StringGrammar::Spec).is_err());
    assert!(parse("1", DType::String, StringGrammar::Python).is_err());
}

// ---- digests of numpy's and glibc's output ----------------------------------------------------

/// The splitmix64 sequence (same in the Python that produced the digests).
fn splitmix64(seed: u64, n: usize) -> Vec<u64> {
    let mut state = seed;
    (0..n)
        .map(|_| {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        })
        .collect()
}

/// 100 000 random float32 codes, then every exponent with a few mantissas, both signs.
fn float32_sample() -> Vec<u64> {
    let mut codes: Vec<u64> = splitmix64(32, 100_000).into_iter().map(|x| x & 0xFFFF_FFFF).collect();
    for e in 0..256u64 {
        for m in [0u64, 1, 2, 3, 0x40_0000, 0x7F_FFFE, 0x7F_FFFF, 0x12_3456] {
            for s in [0u64, 1] {
                codes.push((s << 31) | (e << 23) | m);
            }
        }
    }
    codes
}

/// 30 000 random float64 codes, then every exponent with a few mantissas.
fn float64_sample() -> Vec<u64> {
    let mut codes = splitmix64(64, 30_000);
    for e in 0..2048u64 {
        for m in [0u64, 1, 2, 1 << 51, (1 << 52) - 1] {
            codes.push((e << 52) | m);
        }
    }
    codes
}

fn digest_of(dtype: DType, codes: &[u64], style: NumberStyle) -> String {
    let text: Vec<String> = codes.iter().map(|&c| fmt(dtype, c, style)).collect();
    Sha256::digest(text.join("\n").as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

// Produced by:
//   f16 = np.arange(65536, dtype=np.uint16).view(np.float16)
//   sha256("\n".join(f16.astype(np.str_)))                   (numpy 2.4.6)
//   sha256("\n".join(g8(x) for x in f16)), g8 = glibc snprintf("%.8g", double(x)) through ctypes,
//     with "NaN", "INF", "-INF" for the non-finite values (onnxruntime's spellings)
// and likewise for float32_sample() and float64_sample() viewed as float32 and float64.
const NUMPY_F16: &str = "5baf57605d69995333cea03d643c0552104ff7db8e65ec915748ee12e9eba768";
const NUMPY_F32: &str = "fea2fa701bdfdafe3b92e0f436aa168235894137bc2b2504bbbd67822d93011f";
const NUMPY_F64: &str = "5fb875ed65ffe0398e81f2e5d9334519206dcaa69051f60fd66dabe84da032dd";
const G8_F16: &str = "d4baea1fa415ad3c9046216e72715ea154db92a8f07d18e9d93f30cd3716f8c6";
const G8_F32: &str = "cccb6b17061f5fcc007d5770f20784b4065a0418bee1c749fa99a12305508a44";
const G8_F64: &str = "4abacd463b318418520ccb5f95747b4763ca50a6d5537faf07c3cccc70766797";

#[test]
fn every_float16_matches_numpy_and_glibc() {
    let codes: Vec<u64> = (0..65536).collect();
    assert_eq!(digest_of(DType::Float16, &codes, NumberStyle::Numpy), NUMPY_F16);
    assert_eq!(digest_of(DType::Float16, &codes, NumberStyle::PrintfG8), G8_F16);
}

#[test]
fn float32_sample_matches_numpy_and_glibc() {
    let codes = float32_sample();
    assert_eq!(codes.len(), 104_096);
    assert_eq!(digest_of(DType::Float, &codes, NumberStyle::Numpy), NUMPY_F32);
    assert_eq!(digest_of(DType::Float, &codes, NumberStyle::PrintfG8), G8_F32);
}

#[test]
fn float64_sample_matches_numpy_and_glibc() {
    let codes = float64_sample();
    assert_eq!(codes.len(), 40_240);
    assert_eq!(digest_of(DType::Double, &codes, NumberStyle::Numpy), NUMPY_F64);
    assert_eq!(digest_of(DType::Double, &codes, NumberStyle::PrintfG8), G8_F64);
}

// ---- round trip -------------------------------------------------------------------------------

#[test]
fn spec_strings_read_back_as_the_same_code() {
    // E8M0 reads back with round_mode "nearest": its digits are the shortest that round to the
    // code under nearest rounding (no digit string shorter than the exact value round-trips
    // under "up" and "down" at once).
    let opts = CastOptions { saturate: false, round_mode: RoundMode::Nearest, ..CastOptions::default() };
    let formats: [(DType, &FloatFormat); 10] = [
        (DType::Float16, &F16),
        (DType::Bfloat16, &BF16),
        (DType::Float8E4M3FN, &E4M3FN),
        (DType::Float8E4M3FNUZ, &E4M3FNUZ),
        (DType::Float8E5M2, &E5M2),
        (DType::Float8E5M2FNUZ, &E5M2FNUZ),
        (DType::Float8E8M0, &E8M0),
        (DType::Float6E2M3, &E2M3),
        (DType::Float6E3M2, &E3M2),
        (DType::Float4E2M1, &E2M1),
    ];
    for (dtype, format) in formats {
        for code in 0..1u64 << format.width() {
            let text = fmt(dtype, code, NumberStyle::Spec);
            let back = parse_to_code(&text, dtype, StringGrammar::Spec, &opts)
                .unwrap_or_else(|e| panic!("{dtype} {code:#x} -> {text:?}: {e}"));
            if format.classify(code) == FpCategory::Nan {
                assert_eq!(format.classify(back), FpCategory::Nan, "{dtype} {code:#x} -> {text:?}");
            } else {
                assert_eq!(back, code, "{dtype} {code:#x} -> {text:?} -> {back:#x}");
            }
        }
    }
}

// ---- text -> number: spec ---------------------------------------------------------------------

#[test]
fn spec_grammar_floats() {
    let spec = StringGrammar::Spec;
    for (text, want) in [
        ("2.75", 2.75f32),
        (" 3.5 ", 3.5),
        ("\t7\n", 7.0),
        ("1e-5", 1e-5),
        ("1E8", 1e8),
        (".5", 0.5),
        ("5.", 5.0),
        ("+1.5", 1.5),
        ("1e+2", 100.0),
        ("-0", -0.0),
        ("0.1", 0.1),
        ("1e400", f32::INFINITY),
        ("-1e-400", -0.0),
        ("inf", f32::INFINITY),
        ("+INF", f32::INFINITY),
        ("-Infinity", f32::NEG_INFINITY),
        ("iNfInItY", f32::INFINITY),
    ] {
        assert_eq!(ok(text, DType::Float, spec), f32_code(want), "{text:?}");
    }
    assert_eq!(ok("NaN", DType::Float, spec), 0x7FC0_0000);
    assert_eq!(ok("-nan", DType::Float, spec), 0xFFC0_0000);
    assert_eq!(ok("0.1", DType::Double, spec), 0x3FB9_9999_9999_999A);
    assert_eq!(ok("65519.99", DType::Float16, spec), 0x7BFF);
    assert_eq!(ok("65520", DType::Float16, spec), 0x7C00);
    for bad in [
        "", "   ", "abc", "3.5abc", "1,5", "1_000", "nan(123)", "0x10", "0x1p3", "1e", ".", "--1", "infinit", "\u{663}",
    ] {
        err(bad, DType::Float, spec);
    }
}

#[test]
fn spec_rounds_the_exact_decimal_once() {
    // 1 + 3*2^-24 - 2^-60, just below a float32 midpoint: research §8.1. Parsing to double first
    // (Python, strtod) lands on the midpoint and rounds up; the exact value rounds down.
    let text = "1.00000017881393432530451326201159645279";
    assert_eq!(ok(text, DType::Float, StringGrammar::Spec), 0x3F80_0001);
    assert_eq!(ok(text, DType::Float, StringGrammar::Python), 0x3F80_0002);
    assert_eq!(ok(text, DType::Float, StringGrammar::Strtod), 0x3F80_0002);
    // Same for float16: 1 + 2^-11 + 2^-40 is above the midpoint; as a double it is exact.
    assert_eq!(ok("1.00048828125000090949470177292823791503906250", DType::Float16, StringGrammar::Spec), 0x3C01);
}

#[test]
fn spec_float8_and_e8m0_follow_the_attributes() {
    let sat = CastOptions::saturating(true);
    let no_sat = CastOptions::saturating(false);
    let spec = StringGrammar::Spec;
    assert_eq!(parse_to_code("1e3", DType::Float8E4M3FN, spec, &sat).unwrap(), 0x7E);
    assert_eq!(parse_to_code("-1e3", DType::Float8E4M3FN, spec, &no_sat).unwrap(), 0xFF);
    assert_eq!(parse_to_code("inf", DType::Float8E5M2, spec, &sat).unwrap(), 0x7B);
    assert_eq!(parse_to_code("inf", DType::Float8E5M2, spec, &no_sat).unwrap(), 0x7C);
    assert_eq!(parse_to_code("nan", DType::Float8E4M3FNUZ, spec, &sat).unwrap(), 0x80);
    assert_eq!(parse_to_code("-0.0", DType::Float8E4M3FNUZ, spec, &sat).unwrap(), 0x00);
    // 3 lies between 2 (0x80) and 4 (0x81).
    for (mode, want) in [(RoundMode::Up, 0x81), (RoundMode::Down, 0x80), (RoundMode::Nearest, 0x81)] {
        let opts = CastOptions { round_mode: mode, ..CastOptions::default() };
        assert_eq!(parse_to_code("3", DType::Float8E8M0, spec, &opts).unwrap(), want, "{mode:?}");
    }
    assert_eq!(parse_to_code("1e-100", DType::Float8E8M0, spec, &sat).unwrap(), 0x00);
    assert_eq!(parse_to_code("1e-100", DType::Float8E8M0, spec, &no_sat).unwrap(), 0xFF);
    assert_eq!(parse_to_code("0.25", DType::Float4E2M1, spec, &sat).unwrap(), 0x0);
    assert_eq!(parse_to_code("0.2500000000000000000001", DType::Float4E2M1, spec, &sat).unwrap(), 0x1);
    assert_eq!(parse_to_code("nan", DType::Float4E2M1, spec, &sat).unwrap(), 0x7);
}

#[test]
fn spec_huge_and_long_inputs_are_cheap_and_exact() {
    let spec = StringGrammar::Spec;
    assert_eq!(ok("1e999999999", DType::Float, spec), 0x7F80_0000);
    assert_eq!(ok("-1e-999999999999999999999999", DType::Double, spec), 1 << 63);
    assert_eq!(ok("0e999999999999", DType::Float, spec), 0);
    // One nonzero digit 2000 places down breaks a float32 tie (1 + 2^-24 ties to 1).
    let tie = "1.000000059604644775390625";
    assert_eq!(ok(tie, DType::Float, spec), 0x3F80_0000);
    let above = format!("{tie}{}1", "0".repeat(2000));
    assert_eq!(ok(&above, DType::Float, spec), 0x3F80_0001);
    // The exact decimal of 2^-1074 (751 significant digits) and one unit less in its last digit.
    let exact = format!("{}e-324", SMALLEST_SUBNORMAL_DIGITS);
    assert_eq!(ok(&exact, DType::Double, spec), 1);
    let below = format!("{}4e-324", &SMALLEST_SUBNORMAL_DIGITS[..SMALLEST_SUBNORMAL_DIGITS.len() - 1]);
    assert_eq!(ok(&below, DType::Double, spec), 1);
    assert_eq!(ok("2.4703282292062327e-324", DType::Double, spec), 0);
    assert_eq!(ok("2.4703282292062328e-324", DType::Double, spec), 1);
}

#[test]
fn spec_grammar_integers() {
    let spec = StringGrammar::Spec;
    assert_eq!(ok("100.5", DType::Int32, spec), 100);
    assert_eq!(ok("-100.5", DType::Int8, spec), 0x9C);
    assert_eq!(ok("1e3", DType::Int16, spec), 1000);
    assert_eq!(ok(" 255.9 ", DType::Uint8, spec), 255);
    assert_eq!(ok("-0.5", DType::Uint8, spec), 0);
    assert_eq!(ok("1e-999999999", DType::Int64, spec), 0);
    assert_eq!(ok("9223372036854775807", DType::Int64, spec), i64::MAX as u64);
    assert_eq!(ok("-9223372036854775808", DType::Int64, spec), 1 << 63);
    assert_eq!(ok("18446744073709551615", DType::Uint64, spec), u64::MAX);
    assert_eq!(ok("7.9", DType::Int4, spec), 7);
    assert_eq!(ok("-8", DType::Int4, spec), 0x8);
    assert_eq!(ok("3", DType::Uint2, spec), 3);
    assert_eq!(ok("-2", DType::Int2, spec), 2);
    for (bad, dtype) in [
        ("300", DType::Int8),
        ("-1", DType::Uint8),
        ("-1.5", DType::Uint8),
        ("8", DType::Int4),
        ("4", DType::Uint2),
        ("9223372036854775808", DType::Int64),
        ("18446744073709551616", DType::Uint64),
        ("1e999999999", DType::Int64),
        ("nan", DType::Int32),
        ("inf", DType::Int32),
        ("abc", DType::Int32),
        ("", DType::Int32),
        ("1_000", DType::Int32),
    ] {
        err(bad, dtype, spec);
    }
    assert!(err("300", DType::Int8, spec).contains("-128 to 127"));
}

#[test]
fn spec_grammar_bool() {
    let spec = StringGrammar::Spec;
    for (text, want) in [
        ("true", 1),
        ("TRUE", 1),
        (" False ", 0),
        ("0", 0),
        ("0.0", 0),
        ("-0", 0),
        ("2", 1),
        ("0.5", 1),
        ("1e-999", 1),
        ("nan", 1),
        ("-inf", 1),
    ] {
        assert_eq!(ok(text, DType::Bool, spec), want, "{text:?}");
    }
    for bad in ["yes", "", "t", "truee"] {
        err(bad, DType::Bool, spec);
    }
}

#[test]
fn errors_quote_the_text_and_point_at_the_problem() {
    assert_eq!(
        err("3.5abc", DType::Float, StringGrammar::Spec),
        r#"cannot parse "3.5abc" as FLOAT: unexpected "a" at byte 3"#
    );
    assert_eq!(err("", DType::Float16, StringGrammar::Spec), r#"cannot parse "" as FLOAT16: empty string"#);
    let python = err("3.5abc", DType::Float, StringGrammar::Python);
    assert!(python.contains(r#""3.5abc""#) && python.contains("byte 3"), "{python}");
    let python = err("\u{663}x", DType::Float, StringGrammar::Python);
    assert!(python.contains("byte 2"), "{python}");
    let strtod = err("abc", DType::Double, StringGrammar::Strtod);
    assert!(strtod.contains(r#""abc""#) && strtod.contains("invalid_argument"), "{strtod}");
    let erange = err("1e400", DType::Float, StringGrammar::Strtod);
    assert!(erange.contains("out_of_range"), "{erange}");
    let long = err(&"9".repeat(5000), DType::Int8, StringGrammar::Spec);
    assert!(long.len() < 200, "{long}");
}

// ---- text -> number: Python (onnx reference) --------------------------------------------------

#[test]
fn python_float_grammar_matches_cpython() {
    for &(text, want) in PYTHON_FLOAT {
        match want {
            Some(bits) => assert_eq!(ok(text, DType::Double, StringGrammar::Python), bits, "{text:?}"),
            None => {
                err(text, DType::Double, StringGrammar::Python);
            }
        }
    }
}

#[test]
fn python_floats_narrow_from_float64() {
    let py = StringGrammar::Python;
    assert_eq!(ok("1e400", DType::Float, py), 0x7F80_0000);
    assert_eq!(ok("-1e400", DType::Float16, py), 0xFC00);
    assert_eq!(ok("1e-400", DType::Float, py), 0);
    assert_eq!(ok("-nan", DType::Float, py), 0xFFC0_0000);
    assert_eq!(ok("nan", DType::Float16, py), 0x7E00);
    assert_eq!(ok("1_000", DType::Float, py), f32_code(1000.0));
    assert_eq!(ok(" 3.5 ", DType::Float16, py), 0x4300);
    // float64 -> float16 in one step: 1 + 2^-11 + 2^-30 is a double, and rounds up.
    assert_eq!(ok("1.000488281250000931322574615478515625", DType::Float16, py), 0x3C01);
}

#[test]
fn python_int_grammar_matches_cpython_and_numpy_bounds() {
    for &(text, want) in PYTHON_INT {
        for dtype in [DType::Int64, DType::Int8, DType::Uint8, DType::Uint64] {
            let lowbit::Kind::Integer { bits, signed } = dtype.kind() else { unreachable!() };
            let (lo, hi) =
                if signed { (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1) } else { (0, (1i128 << bits) - 1) };
            match want {
                Some(v) if (lo..=hi).contains(&v) => {
                    assert_eq!(ok(text, dtype, StringGrammar::Python), (v as u64) & dtype.code_mask(), "{text:?}")
                }
                _ => {
                    err(text, dtype, StringGrammar::Python);
                }
            }
        }
    }
    assert!(err("300", DType::Int8, StringGrammar::Python).contains("out of bounds"));
    // CPython refuses integer strings of more than 4300 digits, even with leading zeros.
    err(&format!("{}1", "0".repeat(4300)), DType::Int64, StringGrammar::Python);
    assert_eq!(ok(&format!("{}1", "0".repeat(4299)), DType::Int64, StringGrammar::Python), 1);
}

/// The onnx reference's Cast from STRING to an integer is numpy's `astype` of an object array of
/// texts: Python's `int(text)`, then numpy stores that int, and raises OverflowError where it
/// cannot. numpy reads the int as a C long (int64), for uint32 and uint64 as a long or an unsigned
/// long long ([-2^63, 2^64)); outside that "Python int too large to convert to C long", inside it
/// but outside the target "Python integer V out of bounds for DTYPE" (V as Python prints the int:
/// no sign for positives, no leading zeros). The profile refuses exactly those texts, quoting
/// numpy's exception; the values just inside each bound convert.
#[test]
fn onnx_reference_refuses_integer_overflow_as_numpy_does() {
    use lowbit::{cast, Profile, Tensor};
    let reference = CastOptions::with_profile(Profile::OnnxReference);
    let run =
        |text: &str, to: DType| cast(&Tensor::from_strings(vec![1], vec![text.to_string()]).unwrap(), to, &reference);
    let too_large = "numpy raises OverflowError: Python int too large to convert to C long";
    let bounds =
        |v: &str, name: &str| format!("numpy raises OverflowError: Python integer {v} out of bounds for {name}");
    let refused: &[(&str, DType, String)] = &[
        ("128", DType::Int8, bounds("128", "int8")),
        ("-129", DType::Int8, bounds("-129", "int8")),
        ("+00300", DType::Int8, bounds("300", "int8")),
        ("-1", DType::Uint8, bounds("-1", "uint8")),
        ("256", DType::Uint8, bounds("256", "uint8")),
        ("65536", DType::Uint16, bounds("65536", "uint16")),
        ("-32769", DType::Int16, bounds("-32769", "int16")),
        ("2147483648", DType::Int32, bounds("2147483648", "int32")),
        ("-1", DType::Uint32, bounds("-1", "uint32")),
        ("4294967296", DType::Uint32, bounds("4294967296", "uint32")),
        ("-1", DType::Uint64, bounds("-1", "uint64")),
        // 2^63 is no C long: too large for every target but uint32 (read as unsigned long long,
        // then out of its bounds) and uint64 (which holds it).
        ("9223372036854775808", DType::Int64, too_large.to_string()),
        ("9223372036854775808", DType::Int8, too_large.to_string()),
        ("9223372036854775808", DType::Uint16, too_large.to_string()),
        ("9223372036854775808", DType::Uint32, bounds("9223372036854775808", "uint32")),
        ("-9223372036854775808", DType::Uint64, bounds("-9223372036854775808", "uint64")),
        // Below -2^63 and from 2^64 on: too large for a C long whatever the target.
        ("-9223372036854775809", DType::Int64, too_large.to_string()),
        ("-9223372036854775809", DType::Uint64, too_large.to_string()),
        ("18446744073709551616", DType::Uint64, too_large.to_string()),
        ("1000000000000000000000000000000000000000", DType::Int32, too_large.to_string()),
    ];
    for (text, to, why) in refused {
        match run(text, *to) {
            Err(e) => {
                let message = e.to_string();
                let parse = format!("element 0: cannot parse \"{text}\" as {to}: {why}");
                assert_eq!(message, format!("Cast: {parse}"), "{text:?} as {to}");
                // The element's own error, typed.
                let e = parse_to_code(text, *to, StringGrammar::Python, &CastOptions::default()).unwrap_err();
                assert!(matches!(e, Error::ParseString { .. }), "{text:?} as {to}: {e}");
            }
            Ok(t) => panic!("{text:?} as {to} converted to {:?}; the reference raises", t.codes()),
        }
    }
    // Just inside the bounds: numpy stores them.
    let converted: &[(&str, DType, u64)] = &[
        ("127", DType::Int8, 0x7F),
        ("-128", DType::Int8, 0x80),
        ("255", DType::Uint8, 0xFF),
        ("4294967295", DType::Uint32, 0xFFFF_FFFF),
        ("-9223372036854775808", DType::Int64, 1 << 63),
        ("9223372036854775807", DType::Int64, (1 << 63) - 1),
        ("18446744073709551615", DType::Uint64, u64::MAX),
    ];
    for &(text, to, want) in converted {
        let out = run(text, to).unwrap_or_else(|e| panic!("{text:?} as {to}: {e}"));
        assert_eq!(out.codes().unwrap(), [want], "{text:?} as {to}");
    }
}

#[test]
fn python_bool_is_non_empty() {
    let py = StringGrammar::Python;
    for (text, want) in [("", 0), ("0", 1), ("False", 1), (" ", 1), ("abc", 1), ("\0", 0)] {
        assert_eq!(ok(text, DType::Bool, py), want, "{text:?}");
    }
}

// ---- text -> number: strtod / stoll / stoull (onnxruntime) -------------------------------------

#[test]
fn strtod_matches_glibc() {
    for &(text, want) in STRTOD_GLIBC {
        match want {
            Some(bits) => assert_eq!(ok(text, DType::Double, StringGrammar::Strtod), bits, "{text:?}"),
            None => {
                err(text, DType::Double, StringGrammar::Strtod);
            }
        }
    }
}

#[test]
fn strtod_float_targets_go_through_float32() {
    let st = StringGrammar::Strtod;
    assert_eq!(ok("3.5abc", DType::Float, st), f32_code(3.5));
    assert_eq!(ok("0x1p3", DType::Float, st), f32_code(8.0));
    assert_eq!(ok("1e39", DType::Float, st), 0x7F80_0000);
    assert_eq!(ok("1e-46", DType::Float, st), 0);
    assert_eq!(ok("-nan", DType::Float, st), 0xFFC0_0000);
    assert_eq!(ok("nan(0x4000000000000)", DType::Float, st), 0x7FE0_0000);
    // BFloat16(float), the constructor onnxruntime's string path uses: NaN is 0x7FC1, sign dropped
    // (observed with onnxruntime 1.31.1 on x86-64: "-NaN" and "-nan" -> 0x7FC1).
    assert_eq!(ok("nan", DType::Bfloat16, st), 0x7FC1);
    assert_eq!(ok("-NaN", DType::Bfloat16, st), 0x7FC1);
    assert_eq!(ok("0.1", DType::Bfloat16, st), 0x3DCD);
    assert_eq!(ok("65504", DType::Float16, st), 0x7BFF);
    assert_eq!(parse_to_code("1e3", DType::Float8E4M3FN, st, &CastOptions::saturating(true)).unwrap(), 0x7E);
    assert_eq!(parse_to_code("1e3", DType::Float8E4M3FN, st, &CastOptions::saturating(false)).unwrap(), 0x7F);
    assert_eq!(ok("1.5e308", DType::Double, st), f64::to_bits(1.5e308));
    // Double rounding through float32 to float16: 1 + 2^-11 + 2^-30 becomes 1 + 2^-11 (a tie).
    assert_eq!(ok("1.000488281250000931322574615478515625", DType::Float16, st), 0x3C00);
    for bad in ["", "   ", "abc", "\u{663}", "1e400", "-1e400", "1e-400"] {
        err(bad, DType::Float, st);
    }
}

#[test]
fn stoll_and_stoull_match_glibc_then_wrap() {
    for &(text, stoll, stoull) in STRTOLL_STRTOULL_GLIBC {
        for dtype in [DType::Int64, DType::Int32, DType::Int16, DType::Int8] {
            match stoll {
                Some(v) => {
                    assert_eq!(ok(text, dtype, StringGrammar::Strtod), v & dtype.code_mask(), "{text:?} {dtype}")
                }
                None => {
                    err(text, dtype, StringGrammar::Strtod);
                }
            }
        }
        for dtype in [DType::Uint64, DType::Uint32, DType::Uint16, DType::Uint8] {
            match stoull {
                Some(v) => {
                    assert_eq!(ok(text, dtype, StringGrammar::Strtod), v & dtype.code_mask(), "{text:?} {dtype}")
                }
                None => {
                    err(text, dtype, StringGrammar::Strtod);
                }
            }
        }
        match stoull {
            Some(v) => assert_eq!(ok(text, DType::Bool, StringGrammar::Strtod), u64::from(v != 0), "{text:?}"),
            None => {
                err(text, DType::Bool, StringGrammar::Strtod);
            }
        }
    }
    // research §8.1
    assert_eq!(ok("300", DType::Int8, StringGrammar::Strtod), 44);
    assert_eq!(ok("-1", DType::Uint8, StringGrammar::Strtod), 0xFF);
    assert_eq!(ok("-100.5", DType::Uint64, StringGrammar::Strtod), 0xFFFF_FFFF_FFFF_FF9C);
    assert_eq!(ok("0x1A", DType::Bool, StringGrammar::Strtod), 0);
    err("true", DType::Bool, StringGrammar::Strtod);
}

#[test]
fn strtod_subbyte_integers_use_roundf() {
    let st = StringGrammar::Strtod;
    assert_eq!(ok("100.5", DType::Int4, st), 0x5); // roundf(100.5) = 101 -> low nibble 5
    assert_eq!(ok("-100.5", DType::Int4, st), 0xB); // -101 -> -5
    assert_eq!(ok("1e3", DType::Int4, st), 0x8); // 1000 -> -8
    assert_eq!(ok("2.5", DType::Uint4, st), 3);
    assert_eq!(ok("-1", DType::Uint4, st), 0xF);
    assert_eq!(ok("6.5abc", DType::Uint2, st), 3);
    assert_eq!(ok("nan", DType::Int4, st), 0);
    assert_eq!(ok("inf", DType::Int4, st), 0);
    assert_eq!(ok("3e9", DType::Int4, st), 0);
    // 2.4999999999 becomes the float 2.5 first, then rounds away from zero.
    assert_eq!(ok("2.49999999999", DType::Int4, st), 3);
    err("1e400", DType::Int4, st);
    err("x", DType::Int2, st);
}

// ---- golden vectors ---------------------------------------------------------------------------

/// The significant digits of 2^-1074 (the exact decimal is these digits times 10^-324, with the
/// point after the first digit).
const SMALLEST_SUBNORMAL_DIGITS: &str = "4.940656458412465441765687928682213723650598026143247644255856825006755072702087518652998363616359923797965646954457177309266567103559397963987747960107818781263007131903114045278458171678489821036887186360569987307230500063874091535649843873124733972731696151400317153853980741262385655911710266585566867681870395603106249319452715914924553293054565444011274801297099995419319894090804165633245247571478690147267801593552386115501348035264934720193790268107107491703332226844753335720832431936092382893458368060106011506169809753078342277318329247904982524730776375927247874656084778203734469699533647017972677717585125660551199131504891101451037862738167250955837389733598993664809941164205702637090279242767544565229087538682506419718265533447265625";

// The tables below were produced with ctypes calls into glibc's strtod/strtoll/strtoull (an
// error is no characters consumed or errno == ERANGE, the two cases libstdc++'s std::stod,
// std::stoll and std::stoull throw for) and with CPython 3.11's float() and int() (trailing NULs
// stripped first, as numpy's fixed-width strings do).

const STRTOD_GLIBC: &[(&str, Option<u64>)] = &[
    ("3.5", Some(0x400C000000000000)),
    (" 3.5 ", Some(0x400C000000000000)),
    ("\u{9}7\u{a}", Some(0x401C000000000000)),
    ("3.5abc", Some(0x400C000000000000)),
    ("1_000", Some(0x3FF0000000000000)),
    ("1,5", Some(0x3FF0000000000000)),
    ("0x1p3", Some(0x4020000000000000)),
    ("0x10", Some(0x4030000000000000)),
    ("0X1.8P1", Some(0x4008000000000000)),
    ("0x.8", Some(0x3FE0000000000000)),
    ("0x", Some(0x0000000000000000)),
    ("0xg", Some(0x0000000000000000)),
    ("0x1p", Some(0x3FF0000000000000)),
    ("0x1p+", Some(0x3FF0000000000000)),
    ("0x1p-1074", Some(0x0000000000000001)),
    ("0x1p-1075", None),
    ("0x1.8p-1074", None),
    ("0x1p-1022", Some(0x0010000000000000)),
    ("0x1p1024", None),
    ("0x1.fffffffffffffp1023", Some(0x7FEFFFFFFFFFFFFF)),
    ("0x1.fffffffffffff8p1023", None),
    ("0x1.fffffffffffff7ffffffffp1023", Some(0x7FEFFFFFFFFFFFFF)),
    ("0x1.00000000000008p0", Some(0x3FF0000000000000)),
    ("0x1.00000000000008000000001p0", Some(0x3FF0000000000001)),
    ("0x1.00000000000018p0", Some(0x3FF0000000000002)),
    ("nan", Some(0x7FF8000000000000)),
    ("-nan", Some(0xFFF8000000000000)),
    ("NaN(123)", Some(0x7FF800000000007B)),
    ("nan(0x1A)", Some(0x7FF800000000001A)),
    ("nAn(abc)", Some(0x7FF8000000000000)),
    ("nan(", Some(0x7FF8000000000000)),
    ("nan()", Some(0x7FF8000000000000)),
    ("nan(1", Some(0x7FF8000000000000)),
    ("nan(017)", Some(0x7FF800000000000F)),
    ("nan(08)", Some(0x7FF8000000000000)),
    ("nan(0x)", Some(0x7FF8000000000000)),
    ("nan(1_2)", Some(0x7FF8000000000000)),
    ("nan(18446744073709551615)", Some(0x7FFFFFFFFFFFFFFF)),
    ("nan(18446744073709551616)", None),
    ("nan(0x7ffffffffffff)", Some(0x7FFFFFFFFFFFFFFF)),
    ("-nan(0xfffffffffffff)", Some(0xFFFFFFFFFFFFFFFF)),
    ("inf", Some(0x7FF0000000000000)),
    ("-Infinity", Some(0xFFF0000000000000)),
    ("infinit", Some(0x7FF0000000000000)),
    ("INFx", Some(0x7FF0000000000000)),
    ("+inf", Some(0x7FF0000000000000)),
    ("1e400", None),
    ("-1e400", None),
    ("1e-400", None),
    ("1e-320", None),
    ("2.2250738585072014e-308", Some(0x0010000000000000)),
    ("2.2250738585072011e-308", None),
    ("2.2250738585072012e-308", None),
    ("4.9406564584124654e-324", None),
    ("2.4703282292062328e-324", None),
    ("2.4703282292062327e-324", None),
    ("1e", Some(0x3FF0000000000000)),
    ("1e+", Some(0x3FF0000000000000)),
    ("1e+5x", Some(0x40F86A0000000000)),
    (".5", Some(0x3FE0000000000000)),
    ("5.", Some(0x4014000000000000)),
    (".", None),
    ("-.5e1", Some(0xC014000000000000)),
    ("+-1", None),
    ("", None),
    ("   ", None),
    ("abc", None),
    ("\u{663}", None),
    ("1.00000017881393432530451326201159645279", Some(0x3FF0000030000000)),
    ("1.7976931348623157e308", Some(0x7FEFFFFFFFFFFFFF)),
    ("1.7976931348623158e308", Some(0x7FEFFFFFFFFFFFFF)),
    ("1.797693134862315807e308", Some(0x7FEFFFFFFFFFFFFF)),
    ("1.7976931348623158079e308", Some(0x7FEFFFFFFFFFFFFF)),
    ("-0", Some(0x8000000000000000)),
    ("-0.0e5", Some(0x8000000000000000)),
    ("0e99999999999", Some(0x0000000000000000)),
    ("1e-99999999999", None),
    ("1e99999999999", None),
    ("0.0000000000000000000000000000000001e-99999999999999999999", None),
    ("00000.000001e6", Some(0x3FF0000000000000)),
    ("4.940656458412465441765687928682213723650598026143247644255856825006755072702087518652998363616359923797965646954457177309266567103559397963987747960107818781263007131903114045278458171678489821036887186360569987307230500063874091535649843873124733972731696151400317153853980741262385655911710266585566867681870395603106249319452715914924553293054565444011274801297099995419319894090804165633245247571478690147267801593552386115501348035264934720193790268107107491703332226844753335720832431936092382893458368060106011506169809753078342277318329247904982524730776375927247874656084778203734469699533647017972677717585125660551199131504891101451037862738167250955837389733598993664809941164205702637090279242767544565229087538682506419718265533447265625e-324", Some(0x0000000000000001)),
    ("4.940656458412465441765687928682213723650598026143247644255856825006755072702087518652998363616359923797965646954457177309266567103559397963987747960107818781263007131903114045278458171678489821036887186360569987307230500063874091535649843873124733972731696151400317153853980741262385655911710266585566867681870395603106249319452715914924553293054565444011274801297099995419319894090804165633245247571478690147267801593552386115501348035264934720193790268107107491703332226844753335720832431936092382893458368060106011506169809753078342277318329247904982524730776375927247874656084778203734469699533647017972677717585125660551199131504891101451037862738167250955837389733598993664809941164205702637090279242767544565229087538682506419718265533447265624e-324", None),
    ("123456789012345678901234567890123456789012345678901234567890", Some(0x4C33AAF504E4BC1E)),
    ("0.1", Some(0x3FB999999999999A)),
    ("1e23", Some(0x44B52D02C7E14AF6)),
    ("8.589973e9", Some(0x42000004B0400000)),
    ("  -0x1P-2", Some(0xBFD0000000000000)),
    ("\u{b}\u{c}1", Some(0x3FF0000000000000)),
    ("1e-5", Some(0x3EE4F8B588E368F1)),
    ("1E8", Some(0x4197D78400000000)),
];

const STRTOLL_STRTOULL_GLIBC: &[(&str, Option<u64>, Option<u64>)] = &[
    ("300", Some(0x000000000000012C), Some(0x000000000000012C)),
    ("-1", Some(0xFFFFFFFFFFFFFFFF), Some(0xFFFFFFFFFFFFFFFF)),
    ("100.5", Some(0x0000000000000064), Some(0x0000000000000064)),
    ("-100.5", Some(0xFFFFFFFFFFFFFF9C), Some(0xFFFFFFFFFFFFFF9C)),
    ("1e3", Some(0x0000000000000001), Some(0x0000000000000001)),
    ("0x1A", Some(0x0000000000000000), Some(0x0000000000000000)),
    ("0.5", Some(0x0000000000000000), Some(0x0000000000000000)),
    (" 42", Some(0x000000000000002A), Some(0x000000000000002A)),
    ("+7", Some(0x0000000000000007), Some(0x0000000000000007)),
    ("-", None, None),
    ("", None, None),
    ("abc", None, None),
    ("9223372036854775807", Some(0x7FFFFFFFFFFFFFFF), Some(0x7FFFFFFFFFFFFFFF)),
    ("9223372036854775808", None, Some(0x8000000000000000)),
    ("-9223372036854775808", Some(0x8000000000000000), Some(0x8000000000000000)),
    ("-9223372036854775809", None, Some(0x7FFFFFFFFFFFFFFF)),
    ("18446744073709551615", None, Some(0xFFFFFFFFFFFFFFFF)),
    ("18446744073709551616", None, None),
    ("-18446744073709551615", None, Some(0x0000000000000001)),
    ("-18446744073709551616", None, None),
    ("1e400", Some(0x0000000000000001), Some(0x0000000000000001)),
    ("\u{663}", None, None),
    ("\u{9}-3x", Some(0xFFFFFFFFFFFFFFFD), Some(0xFFFFFFFFFFFFFFFD)),
    ("  +0", Some(0x0000000000000000), Some(0x0000000000000000)),
    ("-0", Some(0x0000000000000000), Some(0x0000000000000000)),
    ("007", Some(0x0000000000000007), Some(0x0000000000000007)),
    ("1_000", Some(0x0000000000000001), Some(0x0000000000000001)),
    ("99999999999999999999999999", None, None),
];

const PYTHON_FLOAT: &[(&str, Option<u64>)] = &[
    ("3.5", Some(0x400C000000000000)),
    (" 3.5 ", Some(0x400C000000000000)),
    ("\u{9}7\u{a}", Some(0x401C000000000000)),
    ("1_000", Some(0x408F400000000000)),
    ("1_000.5", Some(0x408F440000000000)),
    ("1e1_0", Some(0x4202A05F20000000)),
    ("1_e5", None),
    ("_1", None),
    ("1_", None),
    ("1__0", None),
    ("1._5", None),
    ("1_.5", None),
    ("\u{661}\u{662}\u{663}", Some(0x405EC00000000000)),
    ("\u{661}.\u{665}", Some(0x3FF8000000000000)),
    ("\u{ff11}\u{ff10}", Some(0x4024000000000000)),
    ("\u{a0}1\u{2003}", Some(0x3FF0000000000000)),
    ("\u{200b}1", None),
    ("\u{1c}1", None),
    ("\u{b}1\u{c}", Some(0x3FF0000000000000)),
    ("-nan", Some(0xFFF8000000000000)),
    ("+nan", Some(0x7FF8000000000000)),
    ("NaN", Some(0x7FF8000000000000)),
    ("infinity", Some(0x7FF0000000000000)),
    ("iNfInItY", Some(0x7FF0000000000000)),
    ("-Infinity", Some(0xFFF0000000000000)),
    ("infinit", None),
    ("inf ", Some(0x7FF0000000000000)),
    ("1e", None),
    (".", None),
    (".e1", None),
    ("5.", Some(0x4014000000000000)),
    (".5", Some(0x3FE0000000000000)),
    ("+.5e-3", Some(0x3F40624DD2F1A9FC)),
    ("nan(1)", None),
    ("", None),
    ("   ", None),
    ("abc", None),
    ("3.5abc", None),
    ("1,5", None),
    ("0x1p3", None),
    ("0x10", None),
    ("1e400", Some(0x7FF0000000000000)),
    ("-1e400", Some(0xFFF0000000000000)),
    ("1e-400", Some(0x0000000000000000)),
    ("1\u{0}", Some(0x3FF0000000000000)),
    ("1\u{0}\u{0}", Some(0x3FF0000000000000)),
    ("1.00000017881393432530451326201159645279", Some(0x3FF0000030000000)),
    ("1e-5", Some(0x3EE4F8B588E368F1)),
    ("1E8", Some(0x4197D78400000000)),
    ("- 1", None),
    ("+-1", None),
    ("1 000", None),
    ("\u{663}", Some(0x4008000000000000)),
];

const PYTHON_INT: &[(&str, Option<i128>)] = &[
    ("42", Some(42)),
    (" -7 ", Some(-7)),
    ("1_000", Some(1000)),
    ("+0", Some(0)),
    ("-0", Some(0)),
    ("007", Some(7)),
    ("127", Some(127)),
    ("128", Some(128)),
    ("-128", Some(-128)),
    ("-129", Some(-129)),
    ("255", Some(255)),
    ("256", Some(256)),
    ("100.5", None),
    ("1e3", None),
    ("0x1A", None),
    ("nan", None),
    ("", None),
    ("  ", None),
    ("\u{663}", Some(3)),
    ("\u{ff11}\u{ff12}", Some(12)),
    ("1__0", None),
    ("_1", None),
    ("1_", None),
    ("- 1", None),
    ("18446744073709551615", Some(18446744073709551615)),
    ("18446744073709551616", Some(18446744073709551616)),
    ("-9223372036854775808", Some(-9223372036854775808)),
    ("-9223372036854775809", Some(-9223372036854775809)),
    ("9999999999999999999999999999999999999999", Some(i128::MAX)),
    ("000000000000000000000000000000000000000000000000005", Some(5)),
];
