//! Floating formats as data, in the style of LLVM's APFloat `fltSemantics`: a format is its field
//! widths, its bias, whether it has subnormals, a sign, and what its top codes mean. Everything
//! else (maximum, minimum, NaN and infinity codes, classification, decoding) is derived here from
//! those few numbers, so a new format is one `const` and cannot get its constants wrong by hand.

use crate::alloc_prelude::*;
use crate::error::{Error, Result};
use crate::value::{Exact, Value, QUIET_NAN_PAYLOAD};
use core::fmt;
use core::num::FpCategory;

/// What the format does with its top codes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NonFinite {
    /// IEEE 754: exponent all ones is infinity (fraction 0) or NaN (fraction != 0).
    /// f64, f32, f16, bf16, float8e5m2.
    Ieee,
    /// No infinity; the single magnitude with every bit set is NaN (with either sign where the
    /// format is signed). float8e4m3fn (0x7F/0xFF), float8e8m0 (0xFF).
    NanAtAllOnes,
    /// No infinity, no negative zero: the code of "-0" is the one NaN. The FNUZ formats (0x80).
    NanAtNegativeZero,
    /// Every code is a finite number. float4e2m1, float6e2m3, float6e3m2.
    None,
}

/// How a format represents zero.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Zero {
    /// Zero has a sign: +0 and -0 are two codes (IEEE formats, E4M3FN, E5M2, float6, float4).
    Signed,
    /// One zero, code 0; the negative-zero pattern means something else (FNUZ: NaN).
    Unsigned,
    /// float8e8m0 has no zero: code 0 is 2^-127.
    None,
}

/// A binary floating-point format. See the module docs; the consts below are the instances.
///
/// ```
/// use lowbit::format::{FloatFormat, E4M3FN};
///
/// // E4M3FN: 1 sign, 4 exponent, 3 fraction bits, bias 7, no infinity, NaN only at S.1111.111.
/// assert_eq!((E4M3FN.width(), E4M3FN.bias), (8, 7));
/// assert_eq!(E4M3FN.max_code(), 0x7E); // 1.75 * 2^(15 - 7) = 448
/// assert_eq!((E4M3FN.nan_code(false), E4M3FN.infinity_code(false)), (Some(0x7F), None));
/// // A described format: the same fields with IEEE specials (exponent 1111 is Inf/NaN), so the
/// // largest finite code is 0 1110 111 = 1.875 * 2^7 = 240.
/// let ieee = FloatFormat::describe("e4m3,special=ieee")?;
/// assert_eq!((ieee.max_code(), ieee.infinity_code(true)), (0x77, Some(0xF8)));
/// # Ok::<(), lowbit::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FloatFormat {
    /// Where the format comes from: an ONNX dtype (its name, for messages) or a description
    /// (`Display` spells it back).
    pub name: FormatName,
    /// Exponent field width.
    pub exponent_bits: u32,
    /// Stored fraction bits (precision minus one).
    pub mantissa_bits: u32,
    /// Exponent bias: a normal code's value is `1.f * 2^(e - bias)`.
    pub bias: i32,
    /// Whether the top bit of a code is a sign bit (false only for float8e8m0).
    pub signed: bool,
    /// Whether exponent field 0 means subnormal (`0.f * 2^(1-bias)`). False for float8e8m0, whose
    /// exponent field 0 is the normal value 2^-127: such a format has no zero.
    pub subnormals: bool,
    /// Which codes are NaN and infinity, if any.
    pub non_finite: NonFinite,
    /// Whether NaN payload bits survive a conversion into or out of this format. True for the
    /// IEEE interchange formats, whose hardware conversions keep the top payload bits. The
    /// narrow formats have fixed NaN codes (profile fields `e5m2_nan` and
    /// `fnuz_nan_is_negative`).
    pub nan_payload: bool,
    /// Subnormal results flush to zero of the same sign (with UNDERFLOW|INEXACT) and subnormal
    /// codes read as zero. False for every ONNX format; `subnormal=flush` in a description.
    pub flush_subnormals: bool,
}

/// Where a [`FloatFormat`] comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FormatName {
    /// An ONNX dtype's format, with the ONNX name.
    Onnx(&'static str),
    /// A format parsed from a description (`e4m3,special=ieee`): see [`FloatFormat::describe`].
    Described,
    /// A described format that another library names (ml_dtypes' `float8_e3m4`, ...): see
    /// [`NAMED_FORMATS`]. Not an ONNX type.
    Named(&'static str),
}

/// IEEE binary64.
pub const F64: FloatFormat = FloatFormat {
    name: FormatName::Onnx("DOUBLE"),
    exponent_bits: 11,
    mantissa_bits: 52,
    bias: 1023,
    signed: true,
    subnormals: true,
    non_finite: NonFinite::Ieee,
    nan_payload: true,
    flush_subnormals: false,
};
/// IEEE binary32.
pub const F32: FloatFormat = FloatFormat {
    name: FormatName::Onnx("FLOAT"),
    exponent_bits: 8,
    mantissa_bits: 23,
    bias: 127,
    signed: true,
    subnormals: true,
    non_finite: NonFinite::Ieee,
    nan_payload: true,
    flush_subnormals: false,
};
/// IEEE binary16.
pub const F16: FloatFormat = FloatFormat {
    name: FormatName::Onnx("FLOAT16"),
    exponent_bits: 5,
    mantissa_bits: 10,
    bias: 15,
    signed: true,
    subnormals: true,
    non_finite: NonFinite::Ieee,
    nan_payload: true,
    flush_subnormals: false,
};
/// bfloat16: the top half of binary32.
pub const BF16: FloatFormat = FloatFormat {
    name: FormatName::Onnx("BFLOAT16"),
    exponent_bits: 8,
    mantissa_bits: 7,
    bias: 127,
    signed: true,
    subnormals: true,
    non_finite: NonFinite::Ieee,
    nan_payload: true,
    flush_subnormals: false,
};
/// OCP E4M3 (ONNX FLOAT8E4M3FN): max 448, NaN 0x7F/0xFF, no infinity.
pub const E4M3FN: FloatFormat = FloatFormat {
    name: FormatName::Onnx("FLOAT8E4M3FN"),
    exponent_bits: 4,
    mantissa_bits: 3,
    bias: 7,
    signed: true,
    subnormals: true,
    non_finite: NonFinite::NanAtAllOnes,
    nan_payload: false,
    flush_subnormals: false,
};
/// Graphcore E4M3 (ONNX FLOAT8E4M3FNUZ): bias 8, max 240, NaN 0x80, no -0.
pub const E4M3FNUZ: FloatFormat = FloatFormat {
    name: FormatName::Onnx("FLOAT8E4M3FNUZ"),
    exponent_bits: 4,
    mantissa_bits: 3,
    bias: 8,
    signed: true,
    subnormals: true,
    non_finite: NonFinite::NanAtNegativeZero,
    nan_payload: false,
    flush_subnormals: false,
};
/// OCP E5M2 (ONNX FLOAT8E5M2): IEEE-like, max 57344, infinity 0x7C.
pub const E5M2: FloatFormat = FloatFormat {
    name: FormatName::Onnx("FLOAT8E5M2"),
    exponent_bits: 5,
    mantissa_bits: 2,
    bias: 15,
    signed: true,
    subnormals: true,
    non_finite: NonFinite::Ieee,
    nan_payload: false,
    flush_subnormals: false,
};
/// Graphcore E5M2 (ONNX FLOAT8E5M2FNUZ): bias 16, max 57344, NaN 0x80, no -0.
pub const E5M2FNUZ: FloatFormat = FloatFormat {
    name: FormatName::Onnx("FLOAT8E5M2FNUZ"),
    exponent_bits: 5,
    mantissa_bits: 2,
    bias: 16,
    signed: true,
    subnormals: true,
    non_finite: NonFinite::NanAtNegativeZero,
    nan_payload: false,
    flush_subnormals: false,
};
/// OCP MX scale E8M0 (ONNX FLOAT8E8M0): 2^(e-127), unsigned, no zero, NaN 0xFF.
pub const E8M0: FloatFormat = FloatFormat {
    name: FormatName::Onnx("FLOAT8E8M0"),
    exponent_bits: 8,
    mantissa_bits: 0,
    bias: 127,
    signed: false,
    subnormals: false,
    non_finite: NonFinite::NanAtAllOnes,
    nan_payload: false,
    flush_subnormals: false,
};
/// OCP MXFP6 E2M3 (ONNX FLOAT6E2M3): max 7.5, finite only.
pub const E2M3: FloatFormat = FloatFormat {
    name: FormatName::Onnx("FLOAT6E2M3"),
    exponent_bits: 2,
    mantissa_bits: 3,
    bias: 1,
    signed: true,
    subnormals: true,
    non_finite: NonFinite::None,
    nan_payload: false,
    flush_subnormals: false,
};
/// OCP MXFP6 E3M2 (ONNX FLOAT6E3M2): max 28, finite only.
pub const E3M2: FloatFormat = FloatFormat {
    name: FormatName::Onnx("FLOAT6E3M2"),
    exponent_bits: 3,
    mantissa_bits: 2,
    bias: 3,
    signed: true,
    subnormals: true,
    non_finite: NonFinite::None,
    nan_payload: false,
    flush_subnormals: false,
};
/// OCP MXFP4 E2M1 (ONNX FLOAT4E2M1): max 6, finite only.
pub const E2M1: FloatFormat = FloatFormat {
    name: FormatName::Onnx("FLOAT4E2M1"),
    exponent_bits: 2,
    mantissa_bits: 1,
    bias: 1,
    signed: true,
    subnormals: true,
    non_finite: NonFinite::None,
    nan_payload: false,
    flush_subnormals: false,
};

/// ml_dtypes' `float8_e3m4`: IEEE-like 1-3-4 (bias 3, infinities and NaNs at exponent 111),
/// max 1.9375 * 2^3 = 15.5, smallest subnormal 2^-6. Its NaNs carry no payload (ml_dtypes writes
/// the one quiet NaN 0x78 with the sign, and reads every NaN code as the quiet NaN).
pub const FLOAT8_E3M4: FloatFormat = FloatFormat {
    name: FormatName::Named("float8_e3m4"),
    exponent_bits: 3,
    mantissa_bits: 4,
    bias: 3,
    signed: true,
    subnormals: true,
    non_finite: NonFinite::Ieee,
    nan_payload: false,
    flush_subnormals: false,
};
/// ml_dtypes' `float8_e4m3`: IEEE-like 1-4-3 (bias 7, infinities 0x78/0xF8), max 1.875 * 2^7 =
/// 240, smallest subnormal 2^-9. Not FLOAT8E4M3FN (max 448, no infinity). NaNs as [`FLOAT8_E3M4`].
pub const FLOAT8_E4M3: FloatFormat = FloatFormat {
    name: FormatName::Named("float8_e4m3"),
    exponent_bits: 4,
    mantissa_bits: 3,
    bias: 7,
    signed: true,
    subnormals: true,
    non_finite: NonFinite::Ieee,
    nan_payload: false,
    flush_subnormals: false,
};
/// ml_dtypes' `float8_e4m3b11fnuz` (XLA on TPU): 1-4-3 with bias 11, FNUZ (NaN only at 0x80, no
/// -0, no infinity), max 1.875 * 2^4 = 30, smallest subnormal 2^-13.
pub const FLOAT8_E4M3B11FNUZ: FloatFormat = FloatFormat {
    name: FormatName::Named("float8_e4m3b11fnuz"),
    exponent_bits: 4,
    mantissa_bits: 3,
    bias: 11,
    signed: true,
    subnormals: true,
    non_finite: NonFinite::NanAtNegativeZero,
    nan_payload: false,
    flush_subnormals: false,
};

/// The described formats known by name: ml_dtypes 0.6.0's float types that ONNX does not have.
/// Each is a description with a name (`FLOAT8_E3M4.description()` is `e3m4,special=ieee`); none
/// is an ONNX type, so ONNX files and ops refuse them.
pub const NAMED_FORMATS: [&FloatFormat; 3] = [&FLOAT8_E3M4, &FLOAT8_E4M3, &FLOAT8_E4M3B11FNUZ];

/// An integer type that another library names and ONNX lacks: ml_dtypes' `int1` and `uint1`, the
/// integer counterpart of [`NAMED_FORMATS`]. The width and signedness are all there is to it; its
/// conversions are the core's integer ones at that width (two's complement, as INT2/INT4), and
/// its raw layout is [`crate::packing::pack_bits`]'s (8 one-bit codes per byte).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct IntegerFormat {
    /// The library's name for it.
    pub name: &'static str,
    /// Bits per code.
    pub bits: u32,
    /// Two's complement (else unsigned).
    pub signed: bool,
}

/// ml_dtypes' `int1`: one two's-complement bit, so its values are -1 (code 1) and 0.
pub const INT1: IntegerFormat = IntegerFormat { name: "int1", bits: 1, signed: true };
/// ml_dtypes' `uint1`: one bit, values 0 and 1.
pub const UINT1: IntegerFormat = IntegerFormat { name: "uint1", bits: 1, signed: false };

/// The integer types known by name ([`IntegerFormat`]); none is an ONNX type, so ONNX files and
/// ops refuse them.
pub const NAMED_INTEGERS: [&IntegerFormat; 2] = [&INT1, &UINT1];

impl IntegerFormat {
    /// The named integer type spelled `name` (case, `_` and `-` ignored, as for dtype names).
    ///
    /// ```
    /// use lowbit::format::{IntegerFormat, INT1};
    ///
    /// assert_eq!(IntegerFormat::named("int1"), Some(&INT1));
    /// assert_eq!(IntegerFormat::named("int4"), None); // an ONNX dtype
    /// ```
    #[must_use]
    pub fn named(name: &str) -> Option<&'static IntegerFormat> {
        let wanted = name_key(name);
        NAMED_INTEGERS.iter().copied().find(|f| name_key(f.name) == wanted)
    }

    /// The smallest and largest values: -2^(bits-1) .. 2^(bits-1) - 1, or 0 .. 2^bits - 1.
    #[must_use]
    pub const fn range(&self) -> (i128, i128) {
        if self.signed {
            (-(1i128 << (self.bits - 1)), (1i128 << (self.bits - 1)) - 1)
        } else {
            (0, (1i128 << self.bits) - 1)
        }
    }
}

impl fmt::Display for IntegerFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

/// A name as the lookups compare it: trimmed, lower case, without `_` and `-`.
fn name_key(text: &str) -> String {
    text.trim().chars().filter(|c| *c != '_' && *c != '-').map(|c| c.to_ascii_lowercase()).collect()
}

impl FloatFormat {
    /// Bits per code.
    #[must_use]
    pub const fn width(&self) -> u32 {
        self.exponent_bits + self.mantissa_bits + self.signed as u32
    }

    /// The sign bit's mask, or 0 for an unsigned format.
    #[must_use]
    pub const fn sign_mask(&self) -> u64 {
        if self.signed {
            1 << (self.exponent_bits + self.mantissa_bits)
        } else {
            0
        }
    }

    /// Mask of every bit of a code.
    #[must_use]
    pub const fn code_mask(&self) -> u64 {
        self.sign_mask() | self.magnitude_mask()
    }

    /// Mask of the exponent and fraction fields.
    #[must_use]
    pub const fn magnitude_mask(&self) -> u64 {
        (1 << (self.exponent_bits + self.mantissa_bits)) - 1
    }

    /// Mask of the fraction (mantissa) field.
    #[must_use]
    pub const fn fraction_field_mask(&self) -> u64 {
        (1 << self.mantissa_bits) - 1
    }

    const fn exponent_field_max(&self) -> u64 {
        (1 << self.exponent_bits) - 1
    }

    /// The magnitude bits of the largest finite value. Codes of one sign are ordered like their
    /// values, so "the rounded magnitude code exceeds this" is the overflow test.
    #[must_use]
    pub const fn max_finite_magnitude(&self) -> u64 {
        match self.non_finite {
            // The all-ones exponent is reserved, so the top finite binade is one below it.
            NonFinite::Ieee => ((self.exponent_field_max() - 1) << self.mantissa_bits) | self.fraction_field_mask(),
            // Only the single all-ones magnitude is NaN.
            NonFinite::NanAtAllOnes => self.magnitude_mask() - 1,
            // NaN sits at the negative-zero code, so every magnitude is finite.
            NonFinite::NanAtNegativeZero | NonFinite::None => self.magnitude_mask(),
        }
    }

    /// The code of the largest finite value.
    #[must_use]
    pub const fn max_code(&self) -> u64 {
        self.max_finite_magnitude()
    }

    /// The code of the most negative finite value (the smallest finite value for E8M0).
    #[must_use]
    pub const fn lowest_code(&self) -> u64 {
        if self.signed {
            self.max_finite_magnitude() | self.sign_mask()
        } else {
            0
        }
    }

    /// The code of the smallest positive normal value.
    #[must_use]
    pub const fn min_positive_normal_code(&self) -> u64 {
        if self.subnormals {
            1 << self.mantissa_bits
        } else {
            0
        }
    }

    /// The code of the smallest positive value (subnormal where the format has subnormals).
    #[must_use]
    pub const fn min_positive_code(&self) -> u64 {
        if self.subnormals {
            1
        } else {
            0
        }
    }

    /// The code of the positive power of two 2^k, if the format holds it exactly.
    #[must_use]
    pub const fn power_of_two_code(&self, k: i32) -> Option<u64> {
        let biased = k + self.bias;
        let code = if biased >= 1 || (!self.subnormals && biased == 0) {
            (biased as u64) << self.mantissa_bits
        } else if self.subnormals && biased > -(self.mantissa_bits as i32) {
            // Subnormal: 2^k = 2^(mantissa_bits + biased - 1) units of 2^(1 - bias - mantissa_bits).
            1 << (self.mantissa_bits as i32 + biased - 1)
        } else {
            return None;
        };
        if code > self.max_finite_magnitude() {
            None
        } else {
            Some(code)
        }
    }

    /// How the format represents zero.
    #[must_use]
    pub const fn zero(&self) -> Zero {
        if !self.subnormals {
            Zero::None
        } else if !self.signed || matches!(self.non_finite, NonFinite::NanAtNegativeZero) {
            Zero::Unsigned
        } else {
            Zero::Signed
        }
    }

    /// The code of zero with the requested sign (`-0` becomes `+0` where there is no `-0`).
    /// `None` for a format without zero.
    #[must_use]
    pub const fn zero_code(&self, negative: bool) -> Option<u64> {
        match self.zero() {
            Zero::None => None,
            Zero::Unsigned => Some(0),
            Zero::Signed => Some(if negative { self.sign_mask() } else { 0 }),
        }
    }

    /// The code of +/-infinity, where the format has infinities.
    #[must_use]
    pub const fn infinity_code(&self, negative: bool) -> Option<u64> {
        match self.non_finite {
            NonFinite::Ieee => {
                Some((self.exponent_field_max() << self.mantissa_bits) | if negative { self.sign_mask() } else { 0 })
            }
            _ => None,
        }
    }

    /// The canonical NaN code with the requested sign, where the format has NaN. For the IEEE
    /// formats it is the quiet NaN with an empty payload (0x7E for E5M2, 0x7E00 for f16); the
    /// FNUZ formats and E8M0 have a single NaN whose sign cannot be chosen.
    #[must_use]
    pub const fn nan_code(&self, negative: bool) -> Option<u64> {
        let sign = if negative { self.sign_mask() } else { 0 };
        match self.non_finite {
            NonFinite::Ieee => {
                Some((self.exponent_field_max() << self.mantissa_bits) | (1 << (self.mantissa_bits - 1)) | sign)
            }
            NonFinite::NanAtAllOnes => Some(self.magnitude_mask() | sign),
            NonFinite::NanAtNegativeZero => Some(self.sign_mask()),
            NonFinite::None => None,
        }
    }

    /// Whether the code's sign bit is set. FNUZ NaN (0x80) counts as negative: it decodes to -NaN
    /// in both the onnx reference and onnxruntime (docs/research/onnx_cast.md §4.1).
    #[must_use]
    pub const fn is_sign_negative(&self, code: u64) -> bool {
        code & self.sign_mask() != 0
    }

    /// IEEE classification of a code. Bits above the format's width are ignored.
    #[must_use]
    #[inline]
    pub const fn classify(&self, code: u64) -> FpCategory {
        let code = code & self.code_mask();
        let mag = code & self.magnitude_mask();
        let exp_field = mag >> self.mantissa_bits;
        let frac = mag & self.fraction_field_mask();
        match self.non_finite {
            NonFinite::Ieee if exp_field == self.exponent_field_max() => {
                return if frac == 0 { FpCategory::Infinite } else { FpCategory::Nan };
            }
            NonFinite::NanAtAllOnes if mag == self.magnitude_mask() => return FpCategory::Nan,
            NonFinite::NanAtNegativeZero if code == self.sign_mask() => return FpCategory::Nan,
            _ => {}
        }
        if !self.subnormals {
            return FpCategory::Normal;
        }
        match (exp_field, frac) {
            (0, 0) => FpCategory::Zero,
            (0, _) => FpCategory::Subnormal,
            _ => FpCategory::Normal,
        }
    }

    /// The exact value of a code. Bits above the format's width are ignored.
    #[must_use]
    #[inline]
    pub const fn decode(&self, code: u64) -> Value {
        let negative = self.is_sign_negative(code);
        let mag = code & self.magnitude_mask();
        let exp_field = mag >> self.mantissa_bits;
        let frac = mag & self.fraction_field_mask();
        match self.classify(code) {
            FpCategory::Nan => {
                let payload = if self.nan_payload {
                    // Left-align the fraction so formats of any width compare bit for bit.
                    frac << (64 - self.mantissa_bits)
                } else {
                    QUIET_NAN_PAYLOAD
                };
                Value::Nan { negative, payload }
            }
            FpCategory::Infinite => Value::Infinite { negative },
            FpCategory::Zero => Value::Finite(Exact::zero(negative)),
            // A flushing format reads its subnormal codes as zero of their sign.
            FpCategory::Subnormal if self.flush_subnormals => Value::Finite(Exact::zero(negative)),
            FpCategory::Subnormal => Value::Finite(Exact {
                negative,
                significand: frac,
                exponent: 1 - self.bias - self.mantissa_bits as i32,
                sticky: false,
            }),
            FpCategory::Normal => Value::Finite(Exact {
                negative,
                significand: frac | (1 << self.mantissa_bits),
                exponent: exp_field as i32 - self.bias - self.mantissa_bits as i32,
                sticky: false,
            }),
        }
    }
}

/// The exact value of the IEEE binary formats' codes, here beside their descriptors so that
/// [`Value`] itself depends on nothing.
impl Value {
    /// Exact value of an `f32`.
    #[must_use]
    pub fn from_f32(x: f32) -> Value {
        F32.decode(u64::from(x.to_bits()))
    }

    /// Exact value of an `f64`.
    #[must_use]
    pub fn from_f64(x: f64) -> Value {
        F64.decode(x.to_bits())
    }
}

/// The widest exponent field a description may ask for: every exponent and rounding shift of
/// such a format still fits the core's 32-bit arithmetic with room to spare.
pub const MAX_DESCRIBED_EXPONENT_BITS: u32 = 24;

/// The narrowest and widest described formats, in bits per code.
pub const DESCRIBED_WIDTHS: core::ops::RangeInclusive<u32> = 3..=32;

fn description_error(text: &str, why: String) -> Error {
    Error::FormatDescription { text: text.to_string(), why }
}

impl FloatFormat {
    /// The ONNX name of an ONNX format; `None` for a described one.
    #[must_use]
    pub const fn onnx_name(&self) -> Option<&'static str> {
        match self.name {
            FormatName::Onnx(name) => Some(name),
            FormatName::Described | FormatName::Named(_) => None,
        }
    }

    /// The name of a named format ([`NAMED_FORMATS`]).
    #[must_use]
    pub const fn name_of_named(&self) -> Option<&'static str> {
        match self.name {
            FormatName::Named(name) => Some(name),
            _ => None,
        }
    }

    /// The named format spelled `name` ([`NAMED_FORMATS`]; case, `_` and `-` ignored, as for
    /// dtype names): `float8_e3m4`, `float8_e4m3`, `float8_e4m3b11fnuz`.
    ///
    /// ```
    /// use lowbit::format::{FloatFormat, FLOAT8_E4M3};
    ///
    /// assert_eq!(FloatFormat::named("float8_e4m3"), Some(&FLOAT8_E4M3));
    /// assert_eq!(FloatFormat::named("FLOAT8E4M3FN"), None); // an ONNX dtype, not a named format
    /// ```
    #[must_use]
    pub fn named(name: &str) -> Option<&'static FloatFormat> {
        let wanted = name_key(name);
        NAMED_FORMATS.iter().copied().find(|f| matches!(f.name, FormatName::Named(n) if name_key(n) == wanted))
    }

    /// Parses a format description `eEmM[,bias=B][,special=ieee|fn|fnuz|none]
    /// [,subnormal=keep|flush][,unsigned]` into a described format.
    ///
    /// Defaults: bias `2^(E-1) - 1`, `special=ieee` (infinities and NaNs at the all-ones exponent,
    /// quiet bit the top fraction bit, NaN payloads kept as x86 keeps them), subnormals kept,
    /// signed. `special=fn`: no infinity, NaN at the all-ones magnitude (like FLOAT8E4M3FN);
    /// `fnuz`: NaN at the code of -0, no -0 (needs a sign bit); `none`: every code is finite.
    /// `subnormal=flush`: subnormal results become zero and subnormal codes read as zero.
    ///
    /// Limits: `E` from 1 to [`MAX_DESCRIBED_EXPONENT_BITS`] (2 or more with `special=ieee`, which
    /// reserves the top exponent), `M` from 1, a total width in [`DESCRIBED_WIDTHS`], and a bias
    /// in `[-2^E, 2^E]`. Every problem is an [`Error::FormatDescription`] naming the bad part.
    /// This never looks at ONNX names: `e4m3` parses to the IEEE-style 1-4-3 format here
    /// (`crate::verify::Format::parse` is where a bare ONNX spelling means the ONNX type).
    pub fn describe(text: &str) -> Result<FloatFormat> {
        let lowered = text.trim().to_ascii_lowercase();
        let mut parts = lowered.split(',').map(str::trim);
        let widths = parts.next().unwrap_or("");
        let (exponent_bits, mantissa_bits) = parse_widths(widths)
            .ok_or_else(|| description_error(text, format!("{widths:?} is not eEmM (for example e4m3)")))?;
        let mut bias = None;
        let mut non_finite = NonFinite::Ieee;
        let mut flush_subnormals = false;
        let mut signed = true;
        let mut seen: Vec<&str> = Vec::new();
        for part in parts {
            let (key, value) = match part.split_once('=') {
                Some((k, v)) => (k.trim(), Some(v.trim())),
                None => (part, None),
            };
            if seen.contains(&key) {
                return Err(description_error(text, format!("option {key:?} is given twice")));
            }
            seen.push(key);
            let bad_value = |want: &str| {
                description_error(text, format!("option {key}={} is not valid: {want}", value.unwrap_or("")))
            };
            match (key, value) {
                ("bias", Some(v)) => {
                    bias = Some(v.parse::<i32>().map_err(|_| bad_value("the bias is a decimal integer"))?);
                }
                ("special", Some(v)) => {
                    non_finite = match v {
                        "ieee" => NonFinite::Ieee,
                        "fn" => NonFinite::NanAtAllOnes,
                        "fnuz" => NonFinite::NanAtNegativeZero,
                        "none" => NonFinite::None,
                        _ => return Err(bad_value("special is ieee, fn, fnuz or none")),
                    };
                }
                ("subnormal", Some(v)) => {
                    flush_subnormals = match v {
                        "keep" => false,
                        "flush" => true,
                        _ => return Err(bad_value("subnormal is keep or flush")),
                    };
                }
                ("unsigned", None) => signed = false,
                ("bias" | "special" | "subnormal", None) => {
                    return Err(description_error(text, format!("option {key:?} needs a value ({key}=...)")));
                }
                ("unsigned", Some(_)) => {
                    return Err(description_error(text, "option \"unsigned\" takes no value".to_string()));
                }
                _ => {
                    return Err(description_error(
                        text,
                        format!("unknown option {part:?}; the options are bias=B, special=ieee|fn|fnuz|none, subnormal=keep|flush and unsigned"),
                    ));
                }
            }
        }
        if !(1..=MAX_DESCRIBED_EXPONENT_BITS).contains(&exponent_bits) {
            return Err(description_error(
                text,
                format!("{exponent_bits} exponent bits; a described format has 1 to {MAX_DESCRIBED_EXPONENT_BITS}"),
            ));
        }
        if mantissa_bits == 0 {
            return Err(description_error(text, "a described format needs at least one fraction bit (m1)".to_string()));
        }
        let width = exponent_bits + mantissa_bits + u32::from(signed);
        if !DESCRIBED_WIDTHS.contains(&width) {
            return Err(description_error(
                text,
                format!(
                    "{width} bits per code; a described format is {} to {} bits wide",
                    DESCRIBED_WIDTHS.start(),
                    DESCRIBED_WIDTHS.end()
                ),
            ));
        }
        if non_finite == NonFinite::Ieee && exponent_bits < 2 {
            return Err(description_error(
                text,
                "special=ieee reserves the top exponent, so it needs at least 2 exponent bits".to_string(),
            ));
        }
        if non_finite == NonFinite::NanAtNegativeZero && !signed {
            return Err(description_error(
                text,
                "special=fnuz puts NaN at the code of -0, which an unsigned format does not have".to_string(),
            ));
        }
        let limit = 1i64 << exponent_bits;
        let bias = bias.unwrap_or((1 << (exponent_bits - 1)) - 1);
        if !(-limit..=limit).contains(&i64::from(bias)) {
            return Err(description_error(
                text,
                format!("bias={bias} is outside [-{limit}, {limit}] for {exponent_bits} exponent bits"),
            ));
        }
        Ok(FloatFormat {
            name: FormatName::Described,
            exponent_bits,
            mantissa_bits,
            bias,
            signed,
            subnormals: true,
            non_finite,
            nan_payload: non_finite == NonFinite::Ieee,
            flush_subnormals,
        })
    }

    /// The format as a description: `eEmM`, the bias if it is not the default, `special=` always
    /// (so the spelling never reads as an ONNX name such as `e4m3`), then `subnormal=flush` and
    /// `unsigned` where they apply. [`FloatFormat::describe`] reads it back into an equal
    /// described format. Formats without zero (E8M0) have no description: theirs is approximate.
    #[must_use]
    pub fn description(&self) -> String {
        let mut s = format!("e{}m{}", self.exponent_bits, self.mantissa_bits);
        if self.exponent_bits >= 1 && self.bias != (1 << (self.exponent_bits - 1)) - 1 {
            s.push_str(&format!(",bias={}", self.bias));
        }
        match self.non_finite {
            NonFinite::Ieee => s.push_str(",special=ieee"),
            NonFinite::NanAtAllOnes => s.push_str(",special=fn"),
            NonFinite::NanAtNegativeZero => s.push_str(",special=fnuz"),
            NonFinite::None => s.push_str(",special=none"),
        }
        if self.flush_subnormals {
            s.push_str(",subnormal=flush");
        }
        if !self.signed {
            s.push_str(",unsigned");
        }
        s
    }
}

/// `eEmM` with decimal widths.
fn parse_widths(s: &str) -> Option<(u32, u32)> {
    let rest = s.strip_prefix('e')?;
    let (e, m) = rest.split_once('m')?;
    let digits = |t: &str| !t.is_empty() && t.len() <= 3 && t.bytes().all(|b| b.is_ascii_digit());
    if !digits(e) || !digits(m) {
        return None;
    }
    Some((e.parse().ok()?, m.parse().ok()?))
}

impl fmt::Display for FloatFormat {
    /// The ONNX name, the name of a named format, or the description of a described format.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name {
            FormatName::Onnx(name) | FormatName::Named(name) => f.write_str(name),
            FormatName::Described => f.write_str(&self.description()),
        }
    }
}

/// Every floating format lowbit knows, widest first.
pub const ALL_FORMATS: [&FloatFormat; 12] =
    [&F64, &F32, &F16, &BF16, &E4M3FN, &E4M3FNUZ, &E5M2, &E5M2FNUZ, &E8M0, &E2M3, &E3M2, &E2M1];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derived_codes_match_the_published_tables() {
        // docs/research/onnx_cast.md §4.1, §10, §11 and §6.
        assert_eq!(E4M3FN.max_code(), 0x7E);
        assert_eq!(E4M3FNUZ.max_code(), 0x7F);
        assert_eq!(E5M2.max_code(), 0x7B);
        assert_eq!(E5M2FNUZ.max_code(), 0x7F);
        assert_eq!(E8M0.max_code(), 0xFE);
        assert_eq!(E2M3.max_code(), 0x1F);
        assert_eq!(E3M2.max_code(), 0x1F);
        assert_eq!(E2M1.max_code(), 0x7);
        assert_eq!(F16.max_code(), 0x7BFF);
        assert_eq!(F32.max_code(), 0x7F7F_FFFF);
        assert_eq!(E5M2.infinity_code(true), Some(0xFC));
        assert_eq!(E4M3FN.nan_code(true), Some(0xFF));
        assert_eq!(E5M2.nan_code(false), Some(0x7E));
        assert_eq!(E4M3FNUZ.nan_code(false), Some(0x80));
        assert_eq!(E8M0.nan_code(false), Some(0xFF));
        assert_eq!(BF16.nan_code(false), Some(0x7FC0));
        assert_eq!(F32.nan_code(true), Some(0xFFC0_0000));
        assert_eq!(E2M1.nan_code(false), None);
        assert_eq!(E4M3FNUZ.zero(), Zero::Unsigned);
        assert_eq!(E8M0.zero(), Zero::None);
        assert_eq!(E4M3FN.zero(), Zero::Signed);
    }

    #[test]
    fn classification() {
        assert_eq!(E4M3FN.classify(0x7F), FpCategory::Nan);
        assert_eq!(E4M3FN.classify(0x7E), FpCategory::Normal);
        assert_eq!(E4M3FN.classify(0x80), FpCategory::Zero);
        assert_eq!(E4M3FN.classify(0x01), FpCategory::Subnormal);
        assert_eq!(E4M3FNUZ.classify(0x80), FpCategory::Nan);
        assert_eq!(E5M2.classify(0x7C), FpCategory::Infinite);
        assert_eq!(E5M2.classify(0x7D), FpCategory::Nan);
        assert_eq!(E8M0.classify(0x00), FpCategory::Normal);
        assert_eq!(E8M0.classify(0xFF), FpCategory::Nan);
        assert_eq!(E2M1.classify(0x8), FpCategory::Zero);
    }
}
