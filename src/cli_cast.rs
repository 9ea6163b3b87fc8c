//! `lowbit cast`: raw little-endian elements (or a JSON array of strings) from standard input to
//! standard output, or values from the command line shown as a table.

use crate::cast::cast;
use crate::convert::{decode_element, CastOptions, Element};
use crate::dtype::{DType, Kind, Packing};
use crate::error::{quoted, Error, Result};
use crate::packing;
use crate::plan::StreamError;
use crate::round::{RoundingMode, Tininess};
use crate::strings::{self, StringGrammar};
use crate::tables::value_to_exact_decimal;
use crate::tensor::Tensor;
use crate::verify::{Converter, Format, VerifyOptions};
use core::num::FpCategory;

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
    crate::onnx::files::read_bounded(reader, 0, limit, std::path::Path::new("standard input"))
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
            crate::texts::write_json(&mut json, s);
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
            strings::parse_to_code(v, from, StringGrammar::Spec, opts)
                .map_err(|e| Error::InvalidOp { op: "cast".into(), message: format!("value {i} ({}): {e}", quoted(v)) })
        })
        .collect()
}

// ------------------------------------------------------------------------------------------------
// Described formats (`e4m3,special=ieee`, ...)
// ------------------------------------------------------------------------------------------------

/// `lowbit cast` where a side is a described format (an ONNX dtype on the other side, or another
/// described format): IEEE conversion through the core ([`crate::verify::Converter`]), rounded to
/// nearest even once, saturating as `--saturate` says, with the IEEE flags. ONNX's profile rules
/// are for ONNX dtype pairs; here there are none.
pub struct DescribedCast {
    from: Format,
    to: Format,
    converter: Converter,
}

/// Bytes of one code of a described format in raw data: 1, 2 or 4 (little-endian).
fn code_bytes(width: u32) -> usize {
    match width {
        0..=8 => 1,
        9..=16 => 2,
        _ => 4,
    }
}

/// Elements per piece of a raw stream: a multiple of 4 (whole bytes of every ONNX packing).
const DESCRIBED_PIECE: usize = 1 << 16;

impl DescribedCast {
    /// `None` when both sides are ONNX dtypes (the ONNX Cast applies); an error when a side is
    /// neither a dtype nor a format description, or is BOOL, STRING or complex next to a described
    /// format.
    pub fn new(from: &str, to: &str, saturate: bool) -> Result<Option<DescribedCast>> {
        let described = |text: &str| DType::parse(text).is_err();
        if !described(from) && !described(to) {
            return Ok(None);
        }
        let (from, to) = (Format::parse(from)?, Format::parse(to)?);
        // As ONNX's attribute: it applies to float targets of 8 bits or fewer (float8's place);
        // a wider float target keeps its infinities.
        let saturate = saturate && to.float_format().is_some_and(|f| f.width() <= 8);
        let options = VerifyOptions { mode: RoundingMode::NearestEven, tininess: Tininess::AfterRounding, saturate };
        options.validate()?;
        Ok(Some(DescribedCast { from, to, converter: Converter::new(&from, &to, &options) }))
    }

    /// Bytes of `n` elements of `format` in raw data: ONNX's layout for a dtype, else one
    /// little-endian code of 1, 2 or 4 bytes per element.
    fn raw_len(format: &Format, n: usize) -> Result<usize> {
        match format {
            Format::Onnx(d) => packing::raw_len(*d, n),
            Format::Described(f) => n
                .checked_mul(code_bytes(f.width()))
                .ok_or(Error::TooLarge { what: format!("{n} elements of {}", f.description()) }),
        }
    }

    fn unpack(format: &Format, raw: &[u8], n: usize) -> Result<Vec<u64>> {
        match format {
            Format::Onnx(d) => packing::unpack(*d, raw, n),
            Format::Described(f) => {
                let (k, mask) = (code_bytes(f.width()), format.code_mask());
                let code = |b: &[u8]| {
                    let mut bytes = [0u8; 8];
                    bytes[..k].copy_from_slice(b);
                    u64::from_le_bytes(bytes)
                };
                raw.chunks_exact(k)
                    .enumerate()
                    .map(|(i, b)| match code(b) {
                        c if c & !mask == 0 => Ok(c),
                        c => Err(Error::BitsOutOfRange { dtype: "the described source", bits: c, width: f.width() })
                            .map_err(|e| Error::InvalidOp { op: "cast".into(), message: format!("element {i}: {e}") }),
                    })
                    .collect()
            }
        }
    }

    fn pack(format: &Format, codes: &[u64]) -> Result<Vec<u8>> {
        match format {
            Format::Onnx(d) => packing::pack(*d, codes),
            Format::Described(f) => {
                let k = code_bytes(f.width());
                Ok(codes.iter().flat_map(|c| c.to_le_bytes()[..k].to_vec()).collect())
            }
        }
    }

    /// Raw input to raw output, piece by piece (memory stays flat); returns the input's byte
    /// count. A trailing part of an element is an error naming the byte where the input ends.
    pub fn stream(
        &self,
        input: &mut impl std::io::Read,
        output: &mut impl std::io::Write,
    ) -> core::result::Result<u64, StreamError> {
        let piece_bytes = Self::raw_len(&self.from, DESCRIBED_PIECE)?;
        let mut buf = vec![0u8; piece_bytes];
        let mut total = 0u64;
        loop {
            // Fill a whole piece (reads may return less), or up to the end of the input.
            let mut got = 0;
            while got < buf.len() {
                match input.read(&mut buf[got..]) {
                    Ok(0) => break,
                    Ok(k) => got += k,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(StreamError::Input(e)),
                }
            }
            if got == 0 {
                output.flush().map_err(StreamError::Output)?;
                return Ok(total);
            }
            let n = match self.from {
                Format::Onnx(d) => packing::whole_elements(d, got),
                Format::Described(f) => (got % code_bytes(f.width()) == 0).then(|| got / code_bytes(f.width())),
            }
            .ok_or_else(|| Error::InvalidOp {
                op: "cast".into(),
                message: format!(
                    "standard input ends inside an element of {} (after byte {})",
                    self.from,
                    total + got as u64
                ),
            })?;
            let codes = Self::unpack(&self.from, &buf[..got], n)?;
            let out: Vec<u64> = codes.iter().map(|&c| self.converter.convert(c, 0).0).collect();
            output.write_all(&Self::pack(&self.to, &out)?).map_err(StreamError::Output)?;
            total += got as u64;
            if got < buf.len() {
                output.flush().map_err(StreamError::Output)?;
                return Ok(total);
            }
        }
    }

    /// A table of values given as text: each read as the source (exact decimal rounded once to
    /// nearest even into it), then converted; the codes, the result's value and the IEEE flags.
    pub fn table(&self, values: &[String]) -> Result<String> {
        let source_options = VerifyOptions { mode: RoundingMode::NearestEven, ..VerifyOptions::default() };
        let mut lines = vec![format!("{:<14} {:>10} {:>10} {:>6}  {}", "input", self.from, self.to, "flags", "value")];
        for text in values {
            let code = match self.from {
                Format::Onnx(d) => strings::parse_to_code(text, d, StringGrammar::Spec, &CastOptions::default())?,
                Format::Described(f) => {
                    let value = strings::parse_exact_value(text)?;
                    let opts =
                        crate::round::EncodeOptions::ieee(source_options.mode, false, source_options.tininess, 0);
                    crate::round::encode_with_status(&f, value, &opts).0
                }
            };
            let (out, status) = self.converter.convert(code, 0);
            let shown = match self.to.float_format() {
                Some(f) => value_to_exact_decimal(&f.decode(out)),
                None => match self.to {
                    Format::Onnx(d) => decode_element(d, out).map(|e| match e {
                        Element::Int(i) => i.to_string(),
                        other => format!("{other:?}"),
                    })?,
                    Format::Described(_) => unreachable!("described formats are floats"),
                },
            };
            lines.push(format!(
                "{:<14} {:>10} {:>10} {:>6}  {shown}",
                text,
                format!("{code:#x}"),
                format!("{out:#x}"),
                format!("{:02x}", status.bits())
            ));
        }
        Ok(lines.join("\n"))
    }
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
