//! `lowbit info`: a dtype or a described format in words (or JSON).

use crate::{printed, Outcome};

#[derive(clap::Args)]
pub struct Args {
    /// An ONNX name or alias (e.g. FLOAT8E4M3FN, e4m3fn, float8_e4m3fn, bf16), or a format
    /// description eEmM[,bias=B][,special=ieee|fn|fnuz|none][,subnormal=keep|flush][,unsigned]
    /// (a bare eEmM that names an ONNX type, such as e4m3 or e5m2, is that type), or one of
    /// ml_dtypes' other types: float8_e3m4, float8_e4m3, float8_e4m3b11fnuz, int1, uint1.
    #[arg(value_parser = crate::format_name)]
    dtype: String,
    /// One JSON object with the keys of Python's `lowbit.info` (but `numpy`): `name`,
    /// `onnx_number` (null for a description), `kind`, `bits`, `packing`; integers `signed`, `min`,
    /// `max`; floats `description`, `exponent_bits`, `mantissa_bits`, `bias`, `signed`,
    /// `subnormals`, `flush_subnormals`, `special`, `zero`, `has_inf`, `has_nan`, `nan_payload`,
    /// `max`, `lowest`, `min_normal`, `min_subnormal` (exact values as JSON numbers, null where
    /// the format has none or beyond float64) and `codes` (those values' codes and zero, -0,
    /// infinities and NaNs; null where the format has none).
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Outcome {
    let format = lowbit::verify::Format::parse(&args.dtype)?;
    if args.json {
        return printed(&info_json(&format).to_string());
    }
    printed(&describe(&format))
}

/// An integer bound as a JSON number (u64's maximum does not fit i64).
fn bound(v: i128) -> serde_json::Value {
    i64::try_from(v).map_or_else(|_| serde_json::Value::from(v as u64), serde_json::Value::from)
}

/// The facts of `lowbit.info` (python/src/lib.rs `info`), key for key.
fn info_json(format: &lowbit::verify::Format) -> serde_json::Value {
    use lowbit::format::{NonFinite, Zero};
    use lowbit::verify::Format;
    use serde_json::{json, Map, Value};
    let mut d = Map::new();
    let float = match *format {
        Format::Onnx(dtype) => {
            d.insert("name".into(), dtype.onnx_name().into());
            d.insert("onnx_number".into(), dtype.onnx_number().into());
            d.insert("bits".into(), json!(dtype.bits()));
            let packing = match dtype.packing() {
                lowbit::Packing::Bytes(1) => "1 byte".into(),
                lowbit::Packing::Bytes(k) => format!("{k} bytes"),
                lowbit::Packing::Nibbles => "nibbles (2 per byte)".into(),
                lowbit::Packing::Crumbs => "crumbs (4 per byte)".into(),
                lowbit::Packing::Sextets => "sextets (4 per 3 bytes)".into(),
                lowbit::Packing::Strings => "strings".into(),
                _ => "none".to_string(),
            };
            d.insert("packing".into(), packing.into());
            let kind = match dtype.kind() {
                lowbit::Kind::Float(_) => "float",
                lowbit::Kind::Integer { .. } => "integer",
                lowbit::Kind::Bool => "bool",
                lowbit::Kind::String => "string",
                lowbit::Kind::Complex => "complex",
                lowbit::Kind::Undefined => "undefined",
            };
            d.insert("kind".into(), kind.into());
            if let (lowbit::Kind::Integer { signed, .. }, Some((low, high))) = (dtype.kind(), dtype.integer_range()) {
                d.insert("signed".into(), signed.into());
                d.insert("min".into(), bound(low));
                d.insert("max".into(), bound(high));
            }
            dtype.float_format().copied()
        }
        Format::Described(f) => {
            d.insert("name".into(), f.to_string().into());
            d.insert("onnx_number".into(), Value::Null);
            d.insert("bits".into(), f.width().into());
            d.insert("packing".into(), Value::Null);
            d.insert("kind".into(), "described float".into());
            Some(f)
        }
        Format::NamedInteger(i) => {
            let (low, high) = i.range();
            d.insert("name".into(), i.name.into());
            d.insert("onnx_number".into(), Value::Null);
            d.insert("bits".into(), i.bits.into());
            d.insert("packing".into(), Value::Null);
            d.insert("kind".into(), "named integer".into());
            d.insert("signed".into(), i.signed.into());
            d.insert("min".into(), bound(low));
            d.insert("max".into(), bound(high));
            None
        }
    };
    if let Some(f) = float {
        let subnormal = f.subnormals && !f.flush_subnormals;
        // Exact values as JSON numbers; an infinity (beyond float64) has none: null.
        let value = |code: u64| {
            let v = f.to_f64(code);
            if v.is_finite() {
                json!(v)
            } else {
                Value::Null
            }
        };
        d.insert("description".into(), json!(f.subnormals.then(|| f.description())));
        d.insert("exponent_bits".into(), f.exponent_bits.into());
        d.insert("mantissa_bits".into(), f.mantissa_bits.into());
        d.insert("bias".into(), f.bias.into());
        d.insert("signed".into(), f.signed.into());
        d.insert("subnormals".into(), subnormal.into());
        d.insert("flush_subnormals".into(), f.flush_subnormals.into());
        let special = match f.non_finite {
            NonFinite::Ieee => "ieee",
            NonFinite::NanAtAllOnes => "fn",
            NonFinite::NanAtNegativeZero => "fnuz",
            NonFinite::None => "none",
        };
        d.insert("special".into(), special.into());
        let zero = match f.zero() {
            Zero::Signed => "signed",
            Zero::Unsigned => "unsigned",
            Zero::None => "none",
        };
        d.insert("zero".into(), zero.into());
        d.insert("has_inf".into(), f.infinity_code(false).is_some().into());
        d.insert("has_nan".into(), f.nan_code(false).is_some().into());
        d.insert("nan_payload".into(), f.nan_payload.into());
        d.insert("max".into(), value(f.max_code()));
        d.insert("lowest".into(), value(f.lowest_code()));
        d.insert("min_normal".into(), value(f.min_positive_normal_code()));
        d.insert("min_subnormal".into(), if subnormal { value(f.min_positive_code()) } else { Value::Null });
        d.insert(
            "codes".into(),
            json!({
                "max": f.max_code(),
                "lowest": f.lowest_code(),
                "min_normal": f.min_positive_normal_code(),
                "min_subnormal": subnormal.then(|| f.min_positive_code()),
                "zero": f.zero_code(false),
                "negative_zero": f.zero_code(true).filter(|&n| Some(n) != f.zero_code(false)),
                "inf": f.infinity_code(false),
                "negative_inf": f.infinity_code(true).filter(|_| f.signed),
                "nan": f.nan_code(false),
                "negative_nan": f.nan_code(true).filter(|&n| Some(n) != f.nan_code(false)),
            }),
        );
    }
    Value::Object(d)
}

/// A packing in words.
fn packing_words(packing: lowbit::Packing) -> String {
    match packing {
        lowbit::Packing::Bytes(1) => "one byte per element".into(),
        lowbit::Packing::Bytes(n) => format!("{n} bytes per element, little-endian"),
        lowbit::Packing::Nibbles => "two 4-bit elements per byte, the first in the low nibble".into(),
        lowbit::Packing::Crumbs => "four 2-bit elements per byte, the first in the low bits".into(),
        lowbit::Packing::Sextets => "four 6-bit elements per three bytes, least significant bit first".into(),
        lowbit::Packing::Strings => "strings (string_data, not raw_data)".into(),
        _ => "no storage".into(),
    }
}

fn describe(format: &lowbit::verify::Format) -> String {
    use lowbit::verify::Format;
    let mut lines = match *format {
        Format::Onnx(dtype) => vec![
            format!("{} (ONNX {})", dtype.onnx_name(), dtype.onnx_number()),
            "kind: ONNX type".to_string(),
            format!("bits: {}", dtype.bits().map_or("variable".to_string(), |b| b.to_string())),
            format!("packing: {}", packing_words(dtype.packing())),
        ],
        Format::Described(f) => match f.name_of_named() {
            Some(name) => vec![
                name.to_string(),
                "kind: named described format (ml_dtypes 0.6.0's type; not an ONNX type)".to_string(),
                format!("bits: {}", f.width()),
                "packing: one byte per element (as ml_dtypes stores it)".to_string(),
            ],
            None => vec![
                f.description(),
                "kind: described format (not an ONNX type)".to_string(),
                format!("bits: {}", f.width()),
            ],
        },
        Format::NamedInteger(i) => {
            let (low, high) = i.range();
            vec![
                i.name.to_string(),
                "kind: named integer type (ml_dtypes 0.6.0's type; not an ONNX type)".to_string(),
                format!("bits: {}", i.bits),
                format!(
                    "packing: {} 1-bit elements per byte, the first in the low bit (ml_dtypes stores one per byte)",
                    8 / i.bits
                ),
                format!("signed: {}, range: {low} .. {high}", i.signed),
            ]
        }
    };
    if let Some(f) = format.float_format() {
        float_info(&f, &mut lines);
    }
    lines.join("\n")
}

/// The descriptor of a float format, its extreme values and the codes of its specials.
fn float_info(f: &lowbit::format::FloatFormat, lines: &mut Vec<String>) {
    use lowbit::format::{NonFinite, Zero};
    // Codes print with the format's width: 0x01, not 0x1.
    let digits = (f.width() as usize).div_ceil(4);
    let hex = |code: u64| format!("0x{code:0digits$x}");
    // Exact decimals are short for every format up to float64's exponent range; beyond it a
    // value prints as significand * 2^exponent.
    let value = |code: u64| match f.decode(code) {
        lowbit::Value::Finite(e) if f.exponent_bits > 11 => {
            format!("{}{} * 2^{}", if e.negative { "-" } else { "" }, e.significand, e.exponent)
        }
        v => lowbit::strings::value_to_exact_decimal(&v),
    };
    if f.subnormals {
        lines.push(format!("description: {}", f.description()));
    } else {
        lines.push("description: none (a format without zero is not describable)".to_string());
    }
    lines.push(format!(
        "exponent bits: {}, mantissa bits: {}, bias: {}, signed: {}, subnormals: {}",
        f.exponent_bits,
        f.mantissa_bits,
        f.bias,
        f.signed,
        if !f.subnormals {
            "none (exponent field 0 is normal)"
        } else if f.flush_subnormals {
            "flushed to zero"
        } else {
            "kept"
        }
    ));
    let special = match f.non_finite {
        NonFinite::Ieee => "ieee (infinity and NaN at the all-ones exponent)",
        NonFinite::NanAtAllOnes => "fn (no infinity, NaN at the all-ones magnitude)",
        NonFinite::NanAtNegativeZero => "fnuz (no infinity, NaN at the code of -0)",
        NonFinite::None => "none (every code is finite)",
    };
    let zero = match f.zero() {
        Zero::Signed => "signed (+0 and -0)",
        Zero::Unsigned => "unsigned (one zero, code 0)",
        Zero::None => "none",
    };
    lines.push(format!("special: {special}; zero: {zero}"));
    lines.push(format!("NaN payloads kept: {}", f.nan_payload));
    lines.push(format!("max: {} (code {})", value(f.max_code()), hex(f.max_code())));
    lines.push(format!("lowest: {} (code {})", value(f.lowest_code()), hex(f.lowest_code())));
    lines.push(format!(
        "min positive normal: {} (code {})",
        value(f.min_positive_normal_code()),
        hex(f.min_positive_normal_code())
    ));
    if f.flush_subnormals {
        lines.push("min positive: subnormals flush to zero (subnormal codes read as 0)".to_string());
    } else {
        lines.push(format!("min positive: {} (code {})", value(f.min_positive_code()), hex(f.min_positive_code())));
    }
    match (f.zero_code(false), f.zero_code(true)) {
        (Some(p), Some(n)) if p != n => lines.push(format!("+0: code {}, -0: code {}", hex(p), hex(n))),
        (Some(p), _) => lines.push(format!("zero: code {} (no -0)", hex(p))),
        (None, _) => lines.push("zero: none".to_string()),
    }
    match (f.infinity_code(false), f.infinity_code(true)) {
        (Some(p), Some(n)) if f.signed => lines.push(format!("infinity: code {}, -infinity: code {}", hex(p), hex(n))),
        (Some(p), _) => lines.push(format!("infinity: code {}", hex(p))),
        (None, _) => lines.push("infinity: none".to_string()),
    }
    match f.non_finite {
        NonFinite::Ieee if f.mantissa_bits >= 2 => {
            let quiet = f.nan_code(false).unwrap_or_default();
            let first = f.infinity_code(false).unwrap_or_default() + 1;
            lines.push(format!(
                "NaN: quiet {q} (canonical; codes {q}..={} and their negatives are quiet), signalling {}..={}",
                hex(quiet | f.fraction_field_mask()),
                hex(first),
                hex(quiet - 1),
                q = hex(quiet),
            ));
        }
        _ => match (f.nan_code(false), f.nan_code(true)) {
            (Some(p), Some(n)) if p != n => lines.push(format!("NaN: codes {} and {}", hex(p), hex(n))),
            (Some(p), _) => lines.push(format!("NaN: code {}", hex(p))),
            (None, _) => lines.push("NaN: none".to_string()),
        },
    }
}
