//! `Cast` where a side is a described format (`e4m3,special=ieee`): raw little-endian codes in,
//! raw codes out, through the verification converter; what `lowbit cast` and the Python
//! package's `cast` run when a side is not an ONNX dtype.

use super::{Converter, Format, VerifyOptions};
use crate::convert::{convert_sides, decode_element, sign_extend, CastOptions, Element, Named, Side};
use crate::dtype::{DType, Kind};
use crate::error::{Error, Result};
use crate::format::IntegerFormat;
use crate::packing;
use crate::plan::StreamError;
use crate::profile::{Policy, Profile, StringGrammar};
use crate::round::{RoundingMode, Tininess};
use crate::strings::{self, value_to_exact_decimal};

/// `lowbit cast` where a side is a described format (an ONNX dtype on the other side, or another
/// described format): IEEE conversion through the core ([`Converter`]), rounded to
/// nearest even once, saturating as `--saturate` says, with the IEEE flags. ONNX's profile rules
/// are for ONNX dtype pairs; the one exception is a named format (`float8_e3m4`, ...) under a
/// profile whose implementation has it ([`Policy::named_formats`]): the profile's rows then apply
/// ([`DescribedCast::under_profile`]).
pub struct DescribedCast {
    from: Format,
    to: Format,
    rule: Rule,
}

/// How each code converts.
enum Rule {
    /// IEEE 754 through the verification converter.
    Ieee(Converter),
    /// The profile's Cast rows, a named side taking those of its `rows_of` dtype.
    Profile { policy: &'static Policy, from: Side, to: Side, opts: CastOptions },
}

impl Rule {
    fn convert(&self, code: u64) -> Result<(u64, Option<crate::round::Status>)> {
        match self {
            Rule::Ieee(converter) => {
                let (out, status) = converter.convert(code, 0);
                Ok((out, Some(status)))
            }
            Rule::Profile { policy, from, to, opts } => Ok((convert_sides(policy, *from, *to, code, opts)?, None)),
        }
    }
}

/// A side of a cast under a profile that has every named format on it: the side and its raw
/// layout. `None` where a side is a free description or a named format the profile lacks (the
/// IEEE conversion applies).
fn profile_side(text: &str, policy: &Policy) -> Result<Option<(Side, Format)>> {
    if let Some(named) = crate::format::FloatFormat::named(text) {
        let side = |rows| (Side { rows, named: Some(Named::Float(named)) }, Format::Described(*named));
        return Ok(policy.named_rows(named).map(side));
    }
    if let Some(named) = crate::format::IntegerFormat::named(text) {
        let side = |rows| (Side { rows, named: Some(Named::Integer(named)) }, Format::NamedInteger(*named));
        return Ok(policy.named_integer_rows(named).map(side));
    }
    match DType::parse(text) {
        Ok(DType::String) => Err(Error::UnsupportedDType {
            op: "cast",
            dtype: "STRING",
            why: "it does not convert to or from a named or described format",
        }),
        // Any fixed-width dtype, BOOL included (the implementations cast their types to bool).
        Ok(d) if matches!(d.kind(), Kind::Float(_) | Kind::Integer { .. } | Kind::Bool) => {
            Ok(Some((Side::onnx(d), Format::Onnx(d))))
        }
        Ok(d) => Format::onnx(d).map(|_| None),
        Err(_) => Ok(None),
    }
}

/// The code of a named integer type for a decimal text (an integer within its range).
fn named_integer_code(text: &str, format: &IntegerFormat) -> Result<u64> {
    let wide = strings::parse_to_code(text, DType::Int64, StringGrammar::Spec, &CastOptions::default())?;
    let value = i128::from(wide as i64);
    let (low, high) = format.range();
    if !(low..=high).contains(&value) {
        return Err(Error::OutOfRange {
            op: "cast".into(),
            what: format!("the {format} value {text:?}"),
            value,
            low,
            high,
        });
    }
    Ok(value as u64 & ((1 << format.bits) - 1))
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
        DescribedCast::under_profile(
            from,
            to,
            &CastOptions { saturate, profile: Profile::Spec, ..CastOptions::default() },
        )
    }

    /// As [`DescribedCast::new`], under a profile: where every non-ONNX side is a named format the
    /// profile's implementation has (`float8_e3m4` under `ml-dtypes` or `xla`), the profile's Cast
    /// rows apply (no IEEE flags; `saturate` and `round_mode` as the profile takes them, BOOL
    /// allowed on the other side); otherwise the IEEE conversion with `opts.saturate`, as every
    /// profile without the format does (`spec`'s).
    pub fn under_profile(from: &str, to: &str, opts: &CastOptions) -> Result<Option<DescribedCast>> {
        DescribedCast::under_profile_rounding(from, to, opts, RoundingMode::NearestEven)
    }

    /// As [`DescribedCast::under_profile`], the IEEE conversion rounding by `mode` (the words of
    /// `lowbit vectors --round`: rne, rtz, ..., sr:R) instead of to nearest even.
    pub fn under_profile_rounding(
        from: &str,
        to: &str,
        opts: &CastOptions,
        mode: RoundingMode,
    ) -> Result<Option<DescribedCast>> {
        let (saturate, profile) = (opts.saturate, opts.profile);
        let described = |text: &str| DType::parse(text).is_err();
        if !described(from) && !described(to) {
            return Ok(None);
        }
        let policy = profile.policy();
        let sides = (profile_side(from, policy)?, profile_side(to, policy)?);
        if let (Some((from_side, from)), Some((to_side, to))) = sides {
            // A pair the implementation has no cast for gets `spec`'s answer: the IEEE conversion.
            // A named integer type's missing casts are its own (ml_dtypes has float6 -> int1 but
            // no float6 -> int4): its rows' dtype says nothing about them.
            let named_integer = |side: &Side| matches!(side.named, Some(Named::Integer(_)));
            let with_named_integer = named_integer(&from_side) || named_integer(&to_side);
            let missing = if with_named_integer {
                policy.named_integer_falls_back(&from.to_string(), &to.to_string())
            } else {
                policy.falls_back(from_side.rows, to_side.rows)
            };
            if missing {
                return DescribedCast::ieee(from.to_string().as_str(), to.to_string().as_str(), saturate, mode);
            }
            let opts = *opts;
            let policy = if with_named_integer { policy } else { policy.for_cast(from_side.rows, to_side.rows) };
            let rule = Rule::Profile { policy, from: from_side, to: to_side, opts };
            return Ok(Some(DescribedCast { from, to, rule }));
        }
        DescribedCast::ieee(from, to, saturate, mode)
    }

    /// The IEEE conversion between two formats (either may be an ONNX dtype).
    fn ieee(from: &str, to: &str, saturate: bool, mode: RoundingMode) -> Result<Option<DescribedCast>> {
        let (from, to) = (Format::parse(from)?, Format::parse(to)?);
        // As ONNX's attribute: it applies to float targets of 8 bits or fewer (float8's place);
        // a wider float target keeps its infinities.
        let saturate = saturate && to.float_format().is_some_and(|f| f.width() <= 8);
        let options = VerifyOptions { mode, tininess: Tininess::AfterRounding, saturate };
        options.validate()?;
        Ok(Some(DescribedCast { from, to, rule: Rule::Ieee(Converter::new(&from, &to, &options)) }))
    }

    /// Whether a profile's Cast rows decide the codes (else the IEEE conversion, with flags).
    #[must_use]
    pub fn follows_profile(&self) -> bool {
        matches!(self.rule, Rule::Profile { .. })
    }

    /// Bytes of `n` elements of `format` in raw data as [`DescribedCast::stream`] reads and writes
    /// them: ONNX's layout for a dtype, eight codes per byte for `int1`/`uint1`, else one
    /// little-endian code of 1, 2 or 4 bytes per element.
    pub fn raw_len(format: &Format, n: usize) -> Result<usize> {
        match format {
            Format::Onnx(d) => packing::raw_len(*d, n),
            Format::Described(f) => n
                .checked_mul(code_bytes(f.width()))
                .ok_or(Error::TooLarge { what: format!("{n} elements of {}", f.description()) }),
            Format::NamedInteger(i) => packing::raw_len_bits(i.bits, n),
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
            Format::NamedInteger(i) => packing::unpack_bits(i.name, i.bits, raw, n),
        }
    }

    fn pack(format: &Format, codes: &[u64]) -> Result<Vec<u8>> {
        match format {
            Format::Onnx(d) => packing::pack(*d, codes),
            Format::Described(f) => {
                let k = code_bytes(f.width());
                Ok(codes.iter().flat_map(|c| c.to_le_bytes()[..k].to_vec()).collect())
            }
            Format::NamedInteger(i) => packing::pack_bits(i.bits, codes),
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
                // Every byte holds whole codes (the padding of the last one included).
                Format::NamedInteger(i) => got.checked_mul((8 / i.bits) as usize),
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
            let out = codes.iter().map(|&c| self.rule.convert(c).map(|(out, _)| out)).collect::<Result<Vec<u64>>>()?;
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
            let width = match self.from {
                Format::Onnx(d) => d.bits(),
                Format::Described(f) => Some(f.width()),
                Format::NamedInteger(i) => Some(i.bits),
            };
            let hex = width.and_then(|bits| crate::names::code_from_hex(text, bits)).transpose()?;
            let code = match self.from {
                _ if hex.is_some() => hex.expect("a bit pattern"),
                Format::Onnx(d) => strings::parse_to_code(text, d, StringGrammar::Spec, &CastOptions::default())?,
                Format::Described(f) => {
                    let value = strings::parse_exact_value(text)?;
                    let opts =
                        crate::round::EncodeOptions::ieee(source_options.mode, false, source_options.tininess, 0);
                    crate::round::encode_with_status(&f, value, &opts).0
                }
                Format::NamedInteger(i) => named_integer_code(text, &i)?,
            };
            let (out, status) = self.rule.convert(code)?;
            let shown = match self.to.float_format() {
                Some(f) => value_to_exact_decimal(&f.decode(out)),
                None => match self.to {
                    Format::Onnx(d) => decode_element(d, out).map(|e| match e {
                        Element::Int(i) => i.to_string(),
                        Element::Bool(b) => b.to_string(),
                        other => format!("{other:?}"),
                    })?,
                    Format::NamedInteger(i) => sign_extend(out, i.bits, i.signed).to_string(),
                    Format::Described(_) => unreachable!("described formats are floats"),
                },
            };
            lines.push(format!(
                "{:<14} {:>10} {:>10} {:>6}  {shown}",
                text,
                format!("{code:#x}"),
                format!("{out:#x}"),
                status.map_or("-".to_string(), |status| format!("{:02x}", status.bits()))
            ));
        }
        Ok(lines.join("\n"))
    }
}
