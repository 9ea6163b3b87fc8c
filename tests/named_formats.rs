//! ml_dtypes' float8 types that ONNX does not have (`float8_e3m4`, `float8_e4m3`,
//! `float8_e4m3b11fnuz`): named described formats. Their constants are hand-computed from the
//! field widths; the profile values were observed with ml_dtypes 0.6.0 and jax 0.12.0.1
//! (scripts/crosscheck_ml_dtypes.py and scripts/crosscheck_xla.py compare every pair).

use lowbit::format::{FloatFormat, NonFinite, Zero, FLOAT8_E3M4, FLOAT8_E4M3, FLOAT8_E4M3B11FNUZ, NAMED_FORMATS};
use lowbit::round::Status;
use lowbit::verify::{convert_with_status, DescribedCast, Format, VerifyOptions};
use lowbit::{CastOptions, DType, Profile, Value};

fn value(f: &FloatFormat, code: u64) -> f64 {
    match f.decode(code) {
        Value::Finite(e) => {
            let magnitude = e.significand as f64 * 2f64.powi(e.exponent);
            if e.negative {
                -magnitude
            } else {
                magnitude
            }
        }
        Value::Infinite { negative: false } => f64::INFINITY,
        Value::Infinite { negative: true } => f64::NEG_INFINITY,
        Value::Nan { .. } => f64::NAN,
    }
}

#[test]
fn the_named_formats_hold_their_hand_computed_constants() {
    // 1-3-4, bias 3: max 0 110 1111 = 1.9375 * 2^3; smallest subnormal 2^(1-3-4).
    assert_eq!((FLOAT8_E3M4.max_code(), value(&FLOAT8_E3M4, 0x6F)), (0x6F, 15.5));
    assert_eq!(value(&FLOAT8_E3M4, 0x01), 2f64.powi(-6));
    assert_eq!(value(&FLOAT8_E3M4, 0x10), 0.25); // smallest normal 2^(1-3)
    assert_eq!((FLOAT8_E3M4.infinity_code(true), FLOAT8_E3M4.nan_code(false)), (Some(0xF0), Some(0x78)));
    assert_eq!(FLOAT8_E3M4.zero(), Zero::Signed);
    // 1-4-3, bias 7, IEEE specials: max 0 1110 111 = 1.875 * 2^7 (not FLOAT8E4M3FN's 448).
    assert_eq!((FLOAT8_E4M3.max_code(), value(&FLOAT8_E4M3, 0x77)), (0x77, 240.0));
    assert_eq!(value(&FLOAT8_E4M3, 0x01), 2f64.powi(-9));
    assert_eq!((FLOAT8_E4M3.infinity_code(false), FLOAT8_E4M3.nan_code(true)), (Some(0x78), Some(0xFC)));
    // 1-4-3, bias 11, FNUZ: max 0 1111 111 = 1.875 * 2^4; NaN only at 0x80; one zero.
    assert_eq!((FLOAT8_E4M3B11FNUZ.max_code(), value(&FLOAT8_E4M3B11FNUZ, 0x7F)), (0x7F, 30.0));
    assert_eq!(value(&FLOAT8_E4M3B11FNUZ, 0x01), 2f64.powi(-13));
    assert_eq!(value(&FLOAT8_E4M3B11FNUZ, 0x08), 2f64.powi(-10));
    assert_eq!((FLOAT8_E4M3B11FNUZ.nan_code(false), FLOAT8_E4M3B11FNUZ.infinity_code(false)), (Some(0x80), None));
    assert_eq!(FLOAT8_E4M3B11FNUZ.zero(), Zero::Unsigned);
    assert_eq!(FLOAT8_E4M3B11FNUZ.non_finite, NonFinite::NanAtNegativeZero);
}

#[test]
fn each_named_format_is_its_description_with_a_name() {
    for (f, description) in
        NAMED_FORMATS.iter().zip(["e3m4,special=ieee", "e4m3,special=ieee", "e4m3,bias=11,special=fnuz"])
    {
        assert_eq!(f.description(), description);
        let described = FloatFormat::describe(description).unwrap();
        // The same fields; ml_dtypes keeps no NaN payloads (one quiet NaN per sign).
        assert_eq!(FloatFormat { name: f.name, nan_payload: f.nan_payload, ..described }, **f);
        assert!(!f.nan_payload);
        assert_eq!(f.onnx_name(), None);
    }
}

#[test]
fn names_parse_to_the_named_formats_and_never_to_an_onnx_type() {
    assert_eq!(Format::parse("float8_e4m3").unwrap(), Format::Described(FLOAT8_E4M3));
    assert_eq!(Format::parse("FLOAT8_E3M4").unwrap(), Format::Described(FLOAT8_E3M4));
    assert_eq!(Format::parse("float8-e4m3b11fnuz").unwrap(), Format::Described(FLOAT8_E4M3B11FNUZ));
    assert_eq!(Format::parse("float8_e4m3").unwrap().to_string(), "float8_e4m3");
    // ONNX's e4m3 stays FLOAT8E4M3FN.
    assert_eq!(Format::parse("e4m3").unwrap(), Format::Onnx(DType::Float8E4M3FN));
    assert_eq!(Format::parse("float8_e4m3fn").unwrap(), Format::Onnx(DType::Float8E4M3FN));
}

#[test]
fn onnx_refuses_the_named_formats_by_name() {
    for name in ["float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz"] {
        let message = DType::parse(name).unwrap_err().to_string();
        assert!(message.contains(&format!("ONNX does not support dtype {name}")), "{message}");
        assert!(message.contains("not an ONNX one"), "{message}");
    }
}

fn ieee(from: &str, to: &str, code: u64, saturate: bool) -> (u64, Status) {
    let options = VerifyOptions { saturate, ..VerifyOptions::default() };
    convert_with_status(code, &Format::parse(from).unwrap(), &Format::parse(to).unwrap(), &options)
}

fn f32_code(x: f32) -> u64 {
    u64::from(x.to_bits())
}

#[test]
fn ieee_rounding_into_the_named_formats() {
    // 15.75 is the midpoint of 15.5 (0x6F, odd) and 16 (beyond max): to even, so it overflows.
    assert_eq!(ieee("f32", "float8_e3m4", f32_code(15.75), false).0, 0x70);
    assert_eq!(ieee("f32", "float8_e3m4", f32_code(15.7), false).0, 0x6F);
    assert_eq!(ieee("f32", "float8_e3m4", f32_code(15.75), true).0, 0x6F);
    // Half the smallest subnormal ties to 0 (even); 1.5 times it rounds up to it.
    assert_eq!(ieee("f32", "float8_e3m4", f32_code(2f32.powi(-7)), false).0, 0x00);
    assert_eq!(ieee("f32", "float8_e3m4", f32_code(1.5 * 2f32.powi(-7)), false).0, 0x01);
    // 248: midpoint of 240 (0x77) and 256: overflow to +Inf 0x78; 247 stays 240.
    assert_eq!(ieee("f32", "float8_e4m3", f32_code(248.0), false).0, 0x78);
    assert_eq!(ieee("f32", "float8_e4m3", f32_code(247.0), false).0, 0x77);
    // 31: midpoint of 30 and 32: FNUZ has no infinity, so NaN 0x80 (saturating: 30).
    assert_eq!(ieee("f32", "float8_e4m3b11fnuz", f32_code(31.0), false).0, 0x80);
    assert_eq!(ieee("f32", "float8_e4m3b11fnuz", f32_code(31.0), true).0, 0x7F);
    // -0 has no code of its own: +0.
    assert_eq!(ieee("f32", "float8_e4m3b11fnuz", f32_code(-0.0), false).0, 0x00);
    // NaN: the one quiet NaN with the sign, no payload carried.
    assert_eq!(ieee("f32", "float8_e3m4", 0xFFBF_FFFF, false).0, 0xF8);
    assert_eq!(ieee("float8_e4m3", "f32", 0x7B, false).0, 0x7FC0_0000);
}

/// A cast through `DescribedCast` under a profile, on raw bytes.
fn under(profile: Profile, from: &str, to: &str, input: &[u8]) -> Vec<u8> {
    let opts = CastOptions { saturate: false, profile, ..CastOptions::default() };
    let cast = DescribedCast::under_profile(from, to, &opts).unwrap().unwrap();
    assert!(cast.follows_profile());
    let mut out = Vec::new();
    cast.stream(&mut &input[..], &mut out).unwrap();
    out
}

#[test]
fn ml_dtypes_rows_apply_to_the_named_formats() {
    // Observed with ml_dtypes 0.6.0: float8 -> integer truncates (0.53 -> 0), Inf saturates, NaN
    // is 0; 240 -> int8 through int32's low byte (-16).
    assert_eq!(under(Profile::MlDtypes, "float8_e3m4", "int8", &[0x21, 0x70, 0xF0, 0x78, 0x6F]), [0, 127, 0x80, 0, 15]);
    assert_eq!(under(Profile::MlDtypes, "float8_e4m3", "int8", &[0x77, 0xF7]), [0xF0, 0x10]);
    // NaN into float4: +NaN -> 0x8, -NaN -> 0x0; into float32: the quiet NaN with the sign.
    assert_eq!(under(Profile::MlDtypes, "float8_e3m4", "FLOAT4E2M1", &[0x71, 0xF1]), [0x08]);
    assert_eq!(under(Profile::MlDtypes, "float8_e3m4", "f32", &[0xF1]), 0xFFC0_0000u32.to_le_bytes());
    // The FNUZ NaN reads as -NaN.
    assert_eq!(under(Profile::MlDtypes, "float8_e4m3b11fnuz", "f32", &[0x80]), 0xFFC0_0000u32.to_le_bytes());
    // float64 goes through float32: 1.0625 + 2^-30 becomes the tie 1.0625, then even (1.0).
    assert_eq!(under(Profile::MlDtypes, "f64", "float8_e4m3", &0x3FF1_0000_0040_0000u64.to_le_bytes()), [0x38]);
    // An identity cast is a copy (NaN payload kept); bool is x != 0.
    assert_eq!(under(Profile::MlDtypes, "float8_e3m4", "float8_e3m4", &[0x71]), [0x71]);
    assert_eq!(under(Profile::MlDtypes, "float8_e3m4", "bool", &[0x80, 0x01, 0x71]), [0, 1, 1]);
}

#[test]
fn xla_rows_apply_to_the_named_formats() {
    // Observed with jax 0.12.0.1 on CPU: float -> integer saturates; NaN -> float4 0x8 whatever
    // its sign; NaN -> E5M2 0x7F without the sign; FNUZ NaN reads as +NaN; float64 rounded once.
    assert_eq!(under(Profile::Xla, "float8_e4m3", "int8", &[0x77, 0xF7, 0x78]), [127, 0x80, 127]);
    assert_eq!(under(Profile::Xla, "float8_e3m4", "FLOAT4E2M1", &[0x71, 0xF1]), [0x88]);
    assert_eq!(under(Profile::Xla, "float8_e3m4", "FLOAT8E5M2", &[0x71, 0xF1]), [0x7F, 0x7F]);
    assert_eq!(under(Profile::Xla, "float8_e4m3b11fnuz", "FLOAT8E5M2", &[0x80]), [0x7F]);
    assert_eq!(under(Profile::Xla, "float8_e4m3b11fnuz", "f32", &[0x80]), 0x7FC0_0000u32.to_le_bytes());
    assert_eq!(under(Profile::Xla, "f64", "float8_e4m3", &0x3FF1_0000_0040_0000u64.to_le_bytes()), [0x39]);
}

#[test]
fn profiles_without_the_named_formats_convert_them_as_ieee() {
    // onnxruntime has no float8_e3m4: spec's answer, the IEEE conversion (with flags).
    let opts = CastOptions { saturate: false, profile: Profile::OnnxRuntime, ..CastOptions::default() };
    let cast = DescribedCast::under_profile("float8_e3m4", "int8", &opts).unwrap().unwrap();
    assert!(!cast.follows_profile());
    let mut out = Vec::new();
    cast.stream(&mut &[0x21u8][..], &mut out).unwrap();
    assert_eq!(out, [1]); // 0.53 rounded to nearest
                          // STRING has no conversion to a named format.
    let opts = CastOptions::with_profile(Profile::MlDtypes);
    assert!(DescribedCast::under_profile("STRING", "float8_e3m4", &opts).is_err());
}

fn lowbit(args: &[&str]) -> (bool, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_lowbit")).args(args).output().unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into())
}

#[test]
fn the_command_line_names_them_and_onnx_refuses_them() {
    let (ok, info, _) = lowbit(&["info", "float8_e4m3b11fnuz"]);
    assert!(ok);
    assert!(info.starts_with("float8_e4m3b11fnuz\n"), "{info}");
    assert!(info.contains("description: e4m3,bias=11,special=fnuz"), "{info}");
    assert!(info.contains("max: 30 (code 0x7f)"), "{info}");
    // A TensorProto cast (ONNX) refuses the name with the reason.
    let (ok, _, err) = lowbit(&["cast", "--to", "float8_e3m4", "in.pb", "out.pb"]);
    assert!(!ok);
    assert!(err.contains("float8_e3m4: it is an ml_dtypes type, not an ONNX one"), "{err}");
    // cast --from/--to: IEEE without a profile (flags shown), the profile's rows with one.
    let (ok, table, _) = lowbit(&["cast", "--from", "f32", "--to", "float8_e3m4", "15.75"]);
    assert!(ok && table.contains("0x70") && table.contains("inf"), "{table}");
    let (ok, table, _) = lowbit(&["cast", "--from", "float8_e4m3", "--to", "int8", "--profile", "xla", "240"]);
    assert!(ok && table.contains("profile xla") && table.contains("127"), "{table}");
}
