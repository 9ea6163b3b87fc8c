//! Described formats (`eEmM[,bias=B][,special=...][,subnormal=...][,unsigned]`): parsing, the
//! derived constants (worked by hand below), the ONNX spellings, the errors, and `lowbit info`.

use lowbit::format::{FloatFormat, NonFinite, Zero};
use lowbit::round::Tininess;
use lowbit::verify::{convert_with_status, Format, VerifyOptions};
use std::process::Command;

fn described(s: &str) -> FloatFormat {
    match Format::parse(s).unwrap() {
        Format::Described(f) => f,
        other => panic!("{s} parsed as {other}"),
    }
}

#[test]
fn bare_onnx_spellings_keep_meaning_the_onnx_types() {
    use lowbit::DType;
    for (text, dtype) in [
        ("e4m3", DType::Float8E4M3FN),
        ("e5m2", DType::Float8E5M2),
        ("e2m1", DType::Float4E2M1),
        ("e2m3", DType::Float6E2M3),
        ("e3m2", DType::Float6E3M2),
        ("e8m0", DType::Float8E8M0),
        ("int8", DType::Int8),
        ("bf16", DType::Bfloat16),
    ] {
        assert_eq!(Format::parse(text).unwrap(), Format::Onnx(dtype), "{text}");
    }
    assert!(Format::parse("bool").is_err());
    assert!(Format::parse("string").is_err());
}

#[test]
fn described_ieee_formats_have_the_ieee_constants() {
    // e4m3,special=ieee: bias 2^3 - 1 = 7, top finite exponent field 14 -> 2^7 * 1.875 = 240.
    let f = described("e4m3,special=ieee");
    assert_eq!((f.exponent_bits, f.mantissa_bits, f.bias, f.non_finite), (4, 3, 7, NonFinite::Ieee));
    assert_eq!(f.max_code(), 0x77);
    assert_eq!(f.to_f64(0x77), 240.0);
    assert_eq!(f.infinity_code(false), Some(0x78));
    assert_eq!(f.nan_code(true), Some(0xFC));
    // Smallest subnormal 2^(1 - 7 - 3) = 2^-9.
    assert_eq!(f.to_f64(0x01), 2f64.powi(-9));
    // e5m10 is binary16's layout: max 65504 (0x7BFF), infinity 0x7C00, quiet NaN 0x7E00.
    let h = described("e5m10");
    assert_eq!((h.max_code(), h.to_f64(0x7BFF)), (0x7BFF, 65504.0));
    assert_eq!(h.nan_code(false), Some(0x7E00));
    // e8m7 is bfloat16's and e8m23 float32's: max (2 - 2^-7) * 2^127 and (2 - 2^-23) * 2^127.
    assert_eq!(described("e8m7").to_f64(0x7F7F), (2.0 - 2f64.powi(-7)) * 2f64.powi(127));
    assert_eq!(described("e8m23").to_f32(0x7F7F_FFFF), f32::MAX);
    // e5m2 written with an option is the FLOAT8E5M2 layout (max 57344 = 1.75 * 2^15 at 0x7B).
    let e5m2 = described("e5m2,special=ieee");
    assert_eq!((e5m2.max_code(), e5m2.to_f64(0x7B)), (0x7B, 57344.0));
    // e3m4: bias 3, max exponent field 6 -> 2^3 * (1 + 15/16) = 15.5 at 0x6F.
    let e3m4 = described("e3m4");
    assert_eq!((e3m4.max_code(), e3m4.to_f64(0x6F)), (0x6F, 15.5));
    // e2m5: bias 1, max exponent field 2 -> 2 * (1 + 31/32) = 3.9375 at 0x5F.
    assert_eq!(described("e2m5").to_f64(0x5F), 3.9375);
}

#[test]
fn options_change_the_descriptor() {
    let fn_ = described("e4m3,special=fn");
    // Same layout as FLOAT8E4M3FN (max 448 at 0x7E, NaN 0x7F) but a described format.
    assert_eq!((fn_.max_code(), fn_.to_f64(0x7E), fn_.nan_code(false)), (0x7E, 448.0, Some(0x7F)));
    assert_ne!(fn_, lowbit::format::E4M3FN);
    let fnuz = described("e4m3,special=fnuz,bias=8");
    // FNUZ: NaN at 0x80, no -0, every other magnitude finite: max 0x7F = 2^(15-8) * 1.875 = 240.
    assert_eq!((fnuz.nan_code(false), fnuz.zero(), fnuz.to_f64(0x7F)), (Some(0x80), Zero::Unsigned, 240.0));
    let none = described("e2m1,special=none");
    // All finite: max 0x7 = 2^(3-1) * 1.5 = 6, like float4.
    assert_eq!((none.nan_code(false), none.to_f64(0x7)), (None, 6.0));
    let unsigned = described("e4m4,unsigned");
    assert_eq!((unsigned.width(), unsigned.zero()), (8, Zero::Unsigned));
    let biased = described("e4m3,bias=3");
    // bias 3: 1.0 is exponent field 3 -> 0x18.
    assert_eq!(biased.to_f64(0x18), 1.0);
    // Spellings are case- and space-tolerant, and descriptions read back.
    for text in ["e4m3,special=ieee", "E3M4, subnormal=flush", "e5m2,unsigned,bias=10", "e6m9,special=fnuz"] {
        let f = described(text);
        assert_eq!(described(&f.description()), f, "{text} -> {}", f.description());
        assert_eq!(Format::parse(&f.to_string()).unwrap(), Format::Described(f));
    }
}

#[test]
fn flush_reads_subnormals_as_zero_and_flushes_results() {
    let flush = Format::parse("e5m2,subnormal=flush").unwrap();
    let f16 = Format::parse("f16").unwrap();
    let opts = VerifyOptions { tininess: Tininess::AfterRounding, ..VerifyOptions::default() };
    // Code 0x01 (2^-16 when kept) reads as +0: +0 in float16, exact.
    assert_eq!(convert_with_status(0x01, &flush, &f16, &opts), (0x0000, Default::default()));
    assert_eq!(convert_with_status(0x81, &flush, &f16, &opts).0, 0x8000);
    // float16 2^-16 (0x0100) would be e5m2's subnormal 0x01: flushed to +0, underflow|inexact.
    let (code, status) = convert_with_status(0x0100, &f16, &flush, &opts);
    assert_eq!((code, status.bits()), (0x00, 0x03));
    // 2^-14 (0x0400) is e5m2's smallest normal 0x04: exact.
    assert_eq!(convert_with_status(0x0400, &f16, &flush, &opts).0, 0x04);
}

#[test]
fn bad_descriptions_name_the_bad_part() {
    for (text, needle) in [
        ("e4m3,bias=x", "bias=x"),
        ("e4m3,special=ieee754", "special=ieee754"),
        ("e4m3,subnormal=drop", "subnormal=drop"),
        ("e4m3,foo", "\"foo\""),
        ("e4m3,unsigned=1", "unsigned"),
        ("e4m3,bias", "\"bias\""),
        ("e4m3,special=fn,special=ieee", "twice"),
        ("e1m1", "at least 2 exponent bits"),
        ("e4m0,special=fn", "fraction bit"),
        ("e30m1", "30 exponent bits"),
        ("e20m20", "41 bits"),
        ("e1m1,special=none,unsigned", "2 bits"),
        ("e4m3,special=fnuz,unsigned", "fnuz"),
        ("e4m3,bias=100", "bias=100"),
        ("e4x3", "eEmM"),
    ] {
        let err = Format::parse(text).unwrap_err().to_string();
        assert!(err.contains(needle), "{text}: {err}");
    }
}

#[test]
fn info_prints_the_descriptor() {
    let run = |arg: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_lowbit")).args(["info", arg]).output().unwrap();
        (out.status.success(), String::from_utf8(out.stdout).unwrap(), String::from_utf8(out.stderr).unwrap())
    };
    let (ok, out, _) = run("e4m3,special=ieee");
    assert!(ok);
    for needle in [
        "kind: described format",
        "description: e4m3,special=ieee",
        "max: 240 (code 0x77)",
        "min positive: 0.001953125 (code 0x1)",
        "min positive normal: 0.015625 (code 0x8)",
        "+0: code 0x0, -0: code 0x80",
        "infinity: code 0x78, -infinity: code 0xf8",
        "NaN: quiet 0x7c",
    ] {
        assert!(out.contains(needle), "{needle} not in {out}");
    }
    let (ok, out, _) = run("e4m3");
    assert!(ok && out.contains("FLOAT8E4M3FN (ONNX 17)") && out.contains("kind: ONNX type"), "{out}");
    let (ok, _, err) = run("e4m3,special=maybe");
    assert!(!ok && err.contains("special=maybe"), "{err}");
}
