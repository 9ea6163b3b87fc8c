//! **Conversions for hardware verification**: IEEE 754 semantics on every format lowbit knows
//! (the ONNX dtypes, floats and integers) and on described formats (`e4m3,special=ieee`), with
//! every rounding mode, the three tininess rules, optional saturation, and the exception flags
//! in TestFloat's layout. ONNX `Cast` and its profiles keep their own rules ([`crate::convert_code`]);
//! this module is what the verification commands (`lowbit vectors`, `check`, `sweep`, `diff`)
//! build on.
//!
//! The semantics, element by element (all of it in [`crate::round::encode_with_status`] for float
//! targets and [`convert_with_random`] for integer targets):
//!
//! * Float targets: the exact value rounded once with the mode; flags as the core documents them.
//!   Overflow follows the direction (toward zero, round to odd and toward the other sign's
//!   infinity give MAX; the others infinity, else NaN, else MAX) unless saturating, which gives
//!   MAX. A NaN keeps its sign, is quieted, and keeps its top payload bits between formats that
//!   carry payloads (the IEEE ones, ONNX float8 excepted); a target without NaN gets +MAX. A
//!   signalling NaN (an IEEE-style source whose top fraction bit is clear) raises INVALID. A
//!   negative value into an unsigned format is INVALID unless it rounds to zero.
//! * Integer targets (int2 .. int64, uint2 .. uint64): the value rounded with the mode; INEXACT if
//!   it was not an integer (TestFloat's `-exact`). NaN, ±Inf and rounded values out of range
//!   raise INVALID (only INVALID) and return, without saturation, x86's "integer indefinite" as
//!   SoftFloat's 8086-SSE build does (`i32_fromNaN = i32_fromPosOverflow = -0x7FFFFFFF - 1`,
//!   `ui32_... = 0xFFFFFFFF`), extended to every width: the most negative value for signed
//!   targets, all ones for unsigned ones. With saturation they return the nearest bound (NaN: 0).
//! * Integer sources are exact values.

use crate::dtype::{DType, Kind};
use crate::error::{Error, Result};
use crate::format::{FloatFormat, IntegerFormat, NonFinite};
use crate::round::{self, EncodeOptions};
use crate::value::{Exact, Value};
use core::fmt;
use core::ops::Range;
use rayon::prelude::*;

use crate::round::{RoundingMode, Status, Tininess};
// Block units quantize with `quant::blocks`.
#[cfg(feature = "quant")]
pub use blocks::{BlockDirection, BlockSummary, BlockUnit, BlockVector, BlockVerdict, ElementClass};
pub use described::DescribedCast;

/// A format a verification conversion reads or writes: an ONNX dtype (a float or an integer)
/// or a described float format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// An ONNX dtype: a float format or an integer type.
    Onnx(DType),
    /// A described float format (`e4m3,special=ieee`, ...).
    Described(FloatFormat),
    /// A named integer type ONNX lacks (ml_dtypes' `int1`, `uint1`): converts as the ONNX
    /// integers do, at its width.
    NamedInteger(IntegerFormat),
}

/// What a [`Format`] holds, resolved once for a loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// A float format.
    Float(FloatFormat),
    /// An integer type.
    Integer {
        /// Its width.
        bits: u32,
        /// Two's complement (else unsigned).
        signed: bool,
    },
}

impl Format {
    /// Parses a dtype name or a format description.
    ///
    /// A name without options that names an ONNX dtype means that dtype (so `e4m3` is
    /// FLOAT8E4M3FN, `e5m2` FLOAT8E5M2, `e2m1`, `e2m3`, `e3m2`, `e8m0` their ONNX types, and `int8`,
    /// `f16`, ... as everywhere in lowbit); anything else, and every spelling with options, is a
    /// description read by [`FloatFormat::describe`]. The named formats (`float8_e3m4`,
    /// `float8_e4m3`, `float8_e4m3b11fnuz`: [`crate::format::NAMED_FORMATS`]) are described formats
    /// with a name, and `int1`, `uint1` ([`crate::format::NAMED_INTEGERS`]) named integer types.
    /// BOOL, STRING and the complex types are not formats here.
    pub fn parse(text: &str) -> Result<Format> {
        if let Some(named) = FloatFormat::named(text) {
            return Ok(Format::Described(*named));
        }
        if let Some(named) = IntegerFormat::named(text) {
            return Ok(Format::NamedInteger(*named));
        }
        if !text.contains(',') {
            if let Ok(dtype) = DType::parse(text) {
                return Format::onnx(dtype);
            }
            let looks_described = text.trim().to_ascii_lowercase().starts_with('e');
            if !looks_described {
                // Report it as an unknown dtype (the message lists the valid names).
                return DType::parse(text).and_then(Format::onnx);
            }
        }
        FloatFormat::describe(text).map(Format::Described)
    }

    /// An ONNX dtype as a format; only floats and integers are.
    pub fn onnx(dtype: DType) -> Result<Format> {
        match dtype.kind() {
            Kind::Float(_) | Kind::Integer { .. } => Ok(Format::Onnx(dtype)),
            _ => Err(Error::UnsupportedDType {
                op: "verification",
                dtype: dtype.onnx_name(),
                why: "only float and integer formats convert with IEEE flags",
            }),
        }
    }

    /// What the format holds.
    #[must_use]
    pub fn shape(&self) -> Shape {
        match *self {
            Format::Described(f) => Shape::Float(f),
            Format::NamedInteger(i) => Shape::Integer { bits: i.bits, signed: i.signed },
            Format::Onnx(d) => match d.kind() {
                Kind::Float(f) => Shape::Float(*f),
                Kind::Integer { bits, signed } => Shape::Integer { bits, signed },
                // `Format::onnx` admits nothing else; a hand-built one reads as an 8-bit code.
                _ => Shape::Integer { bits: 8, signed: false },
            },
        }
    }

    /// The float descriptor, for float formats.
    #[must_use]
    pub fn float_format(&self) -> Option<FloatFormat> {
        match self.shape() {
            Shape::Float(f) => Some(f),
            Shape::Integer { .. } => None,
        }
    }

    /// Bits per code.
    #[must_use]
    pub fn width(&self) -> u32 {
        match self.shape() {
            Shape::Float(f) => f.width(),
            Shape::Integer { bits, .. } => bits,
        }
    }

    /// Mask of the bits of one code.
    #[must_use]
    pub fn code_mask(&self) -> u64 {
        low_mask(self.width())
    }
}

impl fmt::Display for Format {
    /// The ONNX name, the format's name, or the description.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Format::Onnx(d) => f.write_str(d.onnx_name()),
            // A named format by its name, any other by its description.
            Format::Described(format) => write!(f, "{format}"),
            Format::NamedInteger(format) => write!(f, "{format}"),
        }
    }
}

/// How every element of a verification conversion is rounded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct VerifyOptions {
    /// The rounding mode (default: nearest even).
    pub mode: RoundingMode,
    /// When a result counts as tiny for UNDERFLOW (default: after rounding, as TestFloat).
    pub tininess: Tininess,
    /// Overflow and ±Inf give ±MAX (finite overflow: OVERFLOW|INEXACT; infinity: INVALID);
    /// integer targets clamp out-of-range values to their bounds (INVALID).
    pub saturate: bool,
}

impl VerifyOptions {
    /// Checks the options: stochastic rounding takes 1 to 63 random bits.
    pub fn validate(&self) -> Result<()> {
        match self.mode {
            RoundingMode::Stochastic { bits } if !(1..=63).contains(&bits) => Err(Error::InvalidOp {
                op: "stochastic rounding".to_string(),
                message: format!("{bits} random bits; use 1 to 63"),
            }),
            _ => Ok(()),
        }
    }
}

/// Where the random bits of stochastic rounding come from, element by element.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RandomBits<'a> {
    /// All zero (stochastic rounding then truncates). What every other mode uses.
    Zero,
    /// [`seeded_random`]`(seed, index)` for the element at `index` of the run (0-based from the
    /// run's first code), so a testbench can regenerate them.
    Seeded(u64),
    /// Given per element (a column of the input), indexed like the run.
    Column(&'a [u64]),
}

impl RandomBits<'_> {
    /// The random word of the element at `index`.
    #[must_use]
    #[inline]
    pub fn at(&self, index: u64) -> u64 {
        match *self {
            RandomBits::Zero => 0,
            RandomBits::Seeded(seed) => seeded_random(seed, index),
            RandomBits::Column(column) => usize::try_from(index).ok().and_then(|i| column.get(i)).copied().unwrap_or(0),
        }
    }
}

/// The random word of element `index` for a seed: SplitMix64's output for the state
/// `seed + (index + 1) * 0x9E3779B97F4A7C15` (wrapping), that is the `(index + 1)`-th output of a
/// SplitMix64 generator started at `seed`. Stochastic rounding with `R` bits uses its low `R` bits.
#[must_use]
#[inline]
pub const fn seeded_random(seed: u64, index: u64) -> u64 {
    let mut z = seed.wrapping_add(index.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Converts one code (its low bits; higher ones are ignored) with no random bits. See the module
/// docs for the semantics.
#[must_use]
pub fn convert_with_status(code: u64, from: &Format, to: &Format, options: &VerifyOptions) -> (u64, Status) {
    convert_with_random(code, from, to, options, 0)
}

/// Converts one code with the random word of stochastic rounding (its low `bits` bits).
#[must_use]
pub fn convert_with_random(
    code: u64,
    from: &Format,
    to: &Format,
    options: &VerifyOptions,
    random: u64,
) -> (u64, Status) {
    Converter::new(from, to, options).convert(code, random)
}

/// A conversion resolved once (formats and options), to run over many codes.
#[derive(Clone, Copy, Debug)]
pub struct Converter {
    from: Shape,
    to: Shape,
    from_mask: u64,
    options: VerifyOptions,
}

impl Converter {
    /// Resolves the conversion from `from` to `to` with `options`.
    ///
    /// ```
    /// use lowbit::round::Status;
    /// use lowbit::verify::{Converter, Format, VerifyOptions};
    ///
    /// let from = Format::parse("f32")?;
    /// let to = Format::parse("e4m3,special=ieee")?; // 1-4-3, bias 7, Inf at 0x78, max 240
    /// let c = Converter::new(&from, &to, &VerifyOptions::default()); // nearest even, no saturation
    /// // 1.5 = 1.1b * 2^0: exponent 0111, fraction 100 -> 0x3C, exact.
    /// assert_eq!(c.convert(1.5f32.to_bits().into(), 0), (0x3C, Status::empty()));
    /// // 300 is past 240 + half its step (16 / 2 = 8): +Inf, overflow and inexact.
    /// assert_eq!(c.convert(300f32.to_bits().into(), 0), (0x78, Status::OVERFLOW | Status::INEXACT));
    /// // 2^-10 is below the smallest normal 2^-6, a subnormal of step 2^-9: exactly 0.5 steps, a
    /// // tie -> 0 (even); tiny and inexact: underflow.
    /// let (code, flags) = c.convert(2f32.powi(-10).to_bits().into(), 0);
    /// assert_eq!((code, flags), (0x00, Status::UNDERFLOW | Status::INEXACT));
    /// # Ok::<(), lowbit::Error>(())
    /// ```
    #[must_use]
    pub fn new(from: &Format, to: &Format, options: &VerifyOptions) -> Converter {
        Converter { from: from.shape(), to: to.shape(), from_mask: from.code_mask(), options: *options }
    }

    /// Converts one code with the given random word.
    #[must_use]
    #[inline]
    pub fn convert(&self, code: u64, random: u64) -> (u64, Status) {
        let code = code & self.from_mask;
        let (value, signalling) = match self.from {
            Shape::Float(f) => {
                let value = f.decode(code);
                (value, matches!(value, Value::Nan { .. }) && is_signalling(&f, code))
            }
            Shape::Integer { bits, signed } => {
                (Value::Finite(Exact::from_i128(sign_extend(code, bits, signed))), false)
            }
        };
        let invalid_input = if signalling { Status::INVALID } else { Status::empty() };
        let (out, status) = match self.to {
            Shape::Float(f) => {
                let opts = EncodeOptions::ieee(self.options.mode, self.options.saturate, self.options.tininess, random);
                round::encode_with_status(&f, value, &opts)
            }
            Shape::Integer { bits, signed } => to_integer(value, bits, signed, &self.options, random),
        };
        (out, status | invalid_input)
    }
}

/// Converts the codes `codes` (in order) into `out`, and their flags into `flags` when given,
/// on every core (rayon). `out` (and `flags`) must hold exactly `codes.end - codes.start`
/// elements; element `i` uses `random.at(i)`.
pub fn convert_range(
    from: &Format,
    to: &Format,
    options: &VerifyOptions,
    random: RandomBits<'_>,
    codes: Range<u64>,
    out: &mut [u64],
    flags: Option<&mut [Status]>,
) -> Result<()> {
    options.validate()?;
    let count = codes.end.saturating_sub(codes.start);
    let matches = |len: usize| u64::try_from(len).is_ok_and(|l| l == count);
    if !matches(out.len()) || flags.as_ref().is_some_and(|f| !matches(f.len())) {
        return Err(Error::InvalidOp {
            op: "convert_range".to_string(),
            message: format!("{count} codes need output slices of that length"),
        });
    }
    let converter = Converter::new(from, to, options);
    const SWEEP_PIECE: usize = 1 << 14;
    let run = |offset: usize, out: &mut [u64], mut flags: Option<&mut [Status]>| {
        for (i, o) in out.iter_mut().enumerate() {
            let index = (offset + i) as u64;
            let (code, status) = converter.convert(codes.start + index, random.at(index));
            *o = code;
            if let Some(f) = flags.as_deref_mut() {
                f[i] = status;
            }
        }
    };
    match flags {
        Some(flags) => out
            .par_chunks_mut(SWEEP_PIECE)
            .zip(flags.par_chunks_mut(SWEEP_PIECE))
            .enumerate()
            .for_each(|(k, (o, f))| run(k * SWEEP_PIECE, o, Some(f))),
        None => out.par_chunks_mut(SWEEP_PIECE).enumerate().for_each(|(k, o)| run(k * SWEEP_PIECE, o, None)),
    }
    Ok(())
}

fn low_mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1 << bits) - 1
    }
}

fn sign_extend(code: u64, bits: u32, signed: bool) -> i128 {
    if signed && bits >= 1 && code >> (bits - 1) & 1 == 1 {
        i128::from(code) - (1i128 << bits)
    } else {
        i128::from(code)
    }
}

/// Whether a code is a signalling NaN: an IEEE-style format's NaN with the top fraction bit (the
/// quiet bit) clear. The ONNX float8 E5M2 counts too: its 0x7D and 0xFD are signalling by IEEE's
/// convention even though ONNX reads them as plain NaN.
#[must_use]
pub fn is_signalling(format: &FloatFormat, code: u64) -> bool {
    format.non_finite == NonFinite::Ieee
        && format.mantissa_bits >= 1
        && format.classify(code) == core::num::FpCategory::Nan
        && code & (1 << (format.mantissa_bits - 1)) == 0
}

/// The float-to-integer (and integer-to-integer) rule of the module docs.
fn to_integer(value: Value, bits: u32, signed: bool, options: &VerifyOptions, random: u64) -> (u64, Status) {
    let (low, high) = crate::dtype::integer_bounds(bits, signed);
    let mask = low_mask(bits);
    // `toward`: the bound an out-of-range value saturates to (None for NaN, which gives 0).
    let invalid = |toward: Option<i128>| {
        let code = if options.saturate {
            toward.unwrap_or(0) as u64 & mask
        } else if signed {
            1 << (bits - 1)
        } else {
            mask
        };
        (code, Status::INVALID)
    };
    match value {
        Value::Nan { .. } => invalid(None),
        Value::Infinite { negative } => invalid(Some(if negative { low } else { high })),
        Value::Finite(x) => match round::round_to_integer_exactly(x, options.mode, random) {
            Some((negative, magnitude, inexact)) => {
                let i = if negative { -i128::from(magnitude) } else { i128::from(magnitude) };
                if i < low {
                    invalid(Some(low))
                } else if i > high {
                    invalid(Some(high))
                } else {
                    (i as u64 & mask, if inexact { Status::INEXACT } else { Status::empty() })
                }
            }
            None => invalid(Some(if x.negative { low } else { high })),
        },
    }
}

#[cfg(feature = "quant")]
mod blocks;
pub mod check;
pub mod config;
mod described;
pub mod sweep;
pub mod testfloat;
pub mod vectors;
