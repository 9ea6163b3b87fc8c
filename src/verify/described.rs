//! `Cast` where a side is a described format (`e4m3,special=ieee`): raw little-endian codes in,
//! raw codes out, through the verification converter; what `lowbit cast` and the Python
//! package's `cast` run when a side is not an ONNX dtype.

use super::{Converter, Format, VerifyOptions};
use crate::convert::{decode_element, CastOptions, Element};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::packing;
use crate::plan::StreamError;
use crate::profile::StringGrammar;
use crate::round::{RoundingMode, Tininess};
use crate::strings::{self, value_to_exact_decimal};

/// `lowbit cast` where a side is a described format (an ONNX dtype on the other side, or another
/// described format): IEEE conversion through the core ([`Converter`]), rounded to
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
