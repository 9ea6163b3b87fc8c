//! `lowbit cast`: raw little-endian elements (or a JSON array of strings) from standard input to
//! standard output, or values from the command line shown as a table.

use core::num::FpCategory;
use lowbit::cast;
use lowbit::packing;
use lowbit::profile::StringGrammar;
use lowbit::strings::value_to_exact_decimal;
use lowbit::strings::{self};
use lowbit::Tensor;
use lowbit::{decode_element, CastOptions, Element};
use lowbit::{DType, Kind, Packing};
use lowbit::{Error, Result};

/// The number of elements in `bytes` bytes of raw `dtype` data: `count` if given (checked), else
/// the whole number of elements the bytes hold, which must fill them exactly.
pub fn element_count(dtype: DType, bytes: usize, count: Option<usize>) -> Result<usize> {
    let bits =
        dtype.bits().ok_or(Error::UnsupportedDType { op: "cast", dtype: dtype.onnx_name(), why: "no raw layout" })?;
    let n = match count {
        Some(n) => n,
        None => {
            packing::whole_elements(dtype, bytes).ok_or(Error::RawNotWhole { dtype: dtype.onnx_name(), bytes, bits })?
        }
    };
    let need = packing::raw_len(dtype, n)?;
    if need != bytes {
        return Err(Error::RawLength { dtype: dtype.onnx_name(), elements: n, expected: need, actual: bytes });
    }
    Ok(n)
}

/// The default largest standard input `lowbit cast` reads whole (a JSON array of strings, or raw
/// input cast to STRING): 1 GiB. Raw input between fixed-width dtypes is streamed and has no limit.
pub const DEFAULT_MAX_TEXT_INPUT_BYTES: u64 = 1 << 30;

/// Reads standard input (or any reader) whole, at most `limit` bytes: more is
/// [`Error::InputTooLarge`], found while reading (nothing beyond `limit` + 1 bytes is held).
pub fn read_input(reader: impl std::io::Read, limit: u64) -> Result<Vec<u8>> {
    lowbit::files::read_bounded(reader, 0, limit, std::path::Path::new("standard input"))
}

/// Casts raw input bytes (or JSON strings) and returns the output bytes (or JSON).
pub fn cast_stream(input: &[u8], from: DType, to: DType, count: Option<usize>, opts: &CastOptions) -> Result<Vec<u8>> {
    let tensor = if from == DType::String {
        let text = std::str::from_utf8(input).map_err(|e| Error::InvalidOp {
            op: "cast".into(),
            message: format!("standard input is not UTF-8: invalid byte at position {}", e.valid_up_to()),
        })?;
        let strings: Vec<String> = serde_json::from_str(text).map_err(|e| Error::InvalidOp {
            op: "cast".into(),
            // serde_json's message names the line and column.
            message: format!("standard input is not a JSON array of strings: {e}"),
        })?;
        Tensor::from_strings(vec![strings.len()], strings)?
    } else {
        if matches!(from.packing(), Packing::Bytes(_)) && count.is_none() {
            let k = from.bits().unwrap_or(8) as usize / 8;
            if input.len() % k != 0 {
                return Err(Error::RawNotWhole { dtype: from.onnx_name(), bytes: input.len(), bits: k as u32 * 8 });
            }
        }
        let n = element_count(from, input.len(), count)?;
        Tensor::from_raw(from, vec![n], input.to_vec())?
    };
    let out = cast(&tensor, to, opts)?;
    Ok(match out.strings() {
        Some(s) => {
            let mut json = Vec::new();
            write_json(&mut json, s);
            json.push(b'\n');
            json
        }
        None => out.raw().expect("numeric tensors are raw").to_vec(),
    })
}

fn describe(dtype: DType, code: u64) -> Result<(String, String)> {
    Ok(match decode_element(dtype, code)? {
        Element::Float(v) => {
            let f = dtype.float_format().expect("float element");
            let class = match f.classify(code) {
                FpCategory::Nan => "nan",
                FpCategory::Infinite => "infinite",
                FpCategory::Zero => "zero",
                FpCategory::Subnormal => "subnormal",
                FpCategory::Normal => "normal",
            };
            (value_to_exact_decimal(&v), class.into())
        }
        Element::Int(i) => (i.to_string(), "integer".into()),
        Element::Bool(b) => (if b { "true" } else { "false" }.into(), "bool".into()),
    })
}

/// The table `lowbit cast --from F --to T VALUES...` prints.
pub fn cast_values_table(values: &[String], from: DType, to: DType, opts: &CastOptions) -> Result<String> {
    if matches!(from.kind(), Kind::String) || matches!(to.kind(), Kind::String) {
        let texts: Vec<String> = values.to_vec();
        let input = if from == DType::String {
            Tensor::from_strings(vec![texts.len()], texts)?
        } else {
            let codes = parse_values(values, from, opts)?;
            Tensor::from_codes(from, vec![codes.len()], &codes)?
        };
        let out = cast(&input, to, opts)?;
        let mut lines = vec![format!("{:<24} {}", "input", "output")];
        for (i, v) in values.iter().enumerate() {
            let shown = match out.strings() {
                Some(s) => format!("{:?}", &s[i]),
                None => {
                    let code = out.code(i).expect("element exists");
                    let (value, class) = describe(to, code)?;
                    format!("{value} ({class}, code {code:#x})")
                }
            };
            lines.push(format!("{v:<24} {shown}"));
        }
        return Ok(lines.join("\n"));
    }
    let codes = parse_values(values, from, opts)?;
    let input = Tensor::from_codes(from, vec![codes.len()], &codes)?;
    let out = cast(&input, to, opts)?;
    let bits = to.bits().unwrap_or(8) as usize;
    let hex_width = bits.div_ceil(4);
    let mut lines = vec![format!(
        "{:<16} {:<22} {:<hw$} {:<bw$} {:<24} {}",
        "input",
        format!("as {from}"),
        "hex",
        "binary",
        "value",
        "class",
        hw = hex_width + 2,
        bw = bits.max(6)
    )];
    for (i, text) in values.iter().enumerate() {
        let (in_value, _) = describe(from, codes[i])?;
        let code = out.code(i).expect("element exists");
        let (value, class) = describe(to, code)?;
        lines.push(format!(
            "{:<16} {:<22} {:<hw$} {:<bw$} {:<24} {}",
            text,
            in_value,
            format!("0x{code:0hex_width$x}"),
            format!("{code:0bits$b}"),
            value,
            class,
            hw = hex_width + 2,
            bw = bits.max(6)
        ));
    }
    Ok(lines.join("\n"))
}

/// Values typed on the command line are read as the source dtype with the `spec` grammar (the
/// exact decimal, rounded once), so `--from f32 464.00000001` is the float32 nearest to it.
fn parse_values(values: &[String], from: DType, opts: &CastOptions) -> Result<Vec<u64>> {
    values
        .iter()
        .enumerate()
        .map(|(i, v)| {
            strings::parse_to_code(v, from, StringGrammar::Spec, opts).map_err(|e| Error::InvalidOp {
                op: "cast".into(),
                message: format!("value {i} ({}): {e}", Error::quote(v)),
            })
        })
        .collect()
}

/// Writes `texts` as a JSON array of strings.
pub fn write_json(out: &mut Vec<u8>, texts: &lowbit::Texts) {
    out.push(b'[');
    for (i, s) in texts.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        // Writing a string to a Vec cannot fail.
        let _ = serde_json::to_writer(&mut *out, s);
    }
    out.push(b']');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts() {
        assert_eq!(element_count(DType::Int4, 2, None).unwrap(), 4);
        assert_eq!(element_count(DType::Int4, 2, Some(3)).unwrap(), 3);
        assert!(element_count(DType::Int4, 2, Some(5)).is_err());
        assert_eq!(element_count(DType::Float6E2M3, 3, None).unwrap(), 4);
        // Without a count, the largest count the bytes hold: 4 bytes of float6 are 5 elements.
        assert_eq!(element_count(DType::Float6E2M3, 4, None).unwrap(), 5);
        assert_eq!(element_count(DType::Float6E2M3, 4, Some(5)).unwrap(), 5);
        let err = element_count(DType::Float6E2M3, 4, Some(6)).unwrap_err().to_string();
        assert!(err.contains("5 bytes") && err.contains("4 bytes"), "{err}");
    }

    #[test]
    fn stream() {
        let raw: Vec<u8> = [448.0f32, 464.0, 480.0].iter().flat_map(|x| x.to_le_bytes()).collect();
        let out = cast_stream(&raw, DType::Float, DType::Float8E4M3FN, None, &CastOptions::saturating(false)).unwrap();
        assert_eq!(out, [0x7E, 0x7E, 0x7F]);
        let err = cast_stream(&raw[..5], DType::Float, DType::Float8E4M3FN, None, &CastOptions::default());
        assert!(err.unwrap_err().to_string().contains("5 bytes"));
    }
}
