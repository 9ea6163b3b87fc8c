//! Text -> number at speed, with [`parse_to_code`] as the definition.
//!
//! A [`TextReader`] is resolved once per cast (target dtype, grammar, options). Each string is
//! first tried as a **plain decimal**: ASCII only, `[+-]? digits [. digits] [(e|E) [+-]? digits]`
//! with at least one mantissa digit, nothing before or after it, at most 19 significant digits
//! and at most 4 exponent digits. Every grammar reads such a text the same way (Python's `float()`
//! and `int()` have nothing to normalise in it, `strtod` reads all of it), so its value is
//! `w * 10^q` with `w < 10^19`. Everything else (whitespace, `_`, non-ASCII digits, hex, `inf`,
//! `nan`, long or huge-exponent input, errors) goes to [`parse_to_code`].
//!
//! From `w * 10^q`:
//!
//! - **float64** (every grammar reads through float64): the correctly rounded float64 `r`. When
//!   `w <= 2^53` and `|q| <= 22`, `w` and `10^|q|` are exact doubles and one IEEE multiplication or
//!   division rounds once (Clinger's fast path); otherwise Rust's `f64::from_str`, documented to
//!   return the closest double with ties to even.
//! - **float32, `spec`** (one rounding, decimal to float32): with `w <= 2^24` and `|q| <= 10` the
//!   same fast path in float32 arithmetic. Otherwise `r as f32` is the correct rounding of the
//!   decimal x unless a float32 rounding boundary (a midpoint, the overflow threshold; each has at
//!   most 25 significant bits and is a double) lies between x and r or on r: none can lie strictly
//!   between, r being the double nearest x, so only an `r` of at most 25 significant bits that is
//!   not known to equal x needs Rust's one-rounding `f32::from_str` instead.
//! - **narrower floats, `spec`**: the same argument with the target's boundaries (at most 13
//!   significant bits; all within the normal doubles), rounded by the core with the exact code's
//!   own options; a doubtful `r` goes to the exact code.
//! - **Python**: `float()` is the correctly rounded float64 by definition, then the profile's
//!   float64 -> target conversion, as in [`parse_to_code`].
//! - **strtod**: `r`, unless `strtod` would set `ERANGE` (an infinite `r`, or a nonzero `r` at or
//!   below DBL_MIN: the exact code decides those), then the profile's conversion.
//! - **integers and bool**: the integer read from the same decimal, with each grammar's
//!   truncation, range and prefix rules; anything out of range goes to the exact code for its
//!   error.

use super::{integer_code, parse_to_code, strtod_bits_to_small_integer, StringGrammar};
use crate::convert::{self, CastOptions};
use crate::dtype::integer_bounds;
use crate::dtype::{DType, Kind};
use crate::error::Result;
use crate::format::FloatFormat;
use crate::round;
use crate::value::Value;

/// Reads strings as elements of one dtype under one grammar.
pub struct TextReader {
    dtype: DType,
    grammar: StringGrammar,
    opts: CastOptions,
    /// float64 -> float32 is the hardware's nearest-even under the profile (no flushing of
    /// subnormals), so the fast path may narrow with `as f32`.
    plain_narrowing: bool,
}

impl TextReader {
    /// A reader of texts into `dtype` under `grammar` and the cast options `opts` (their profile
    /// decides whether float64 -> float32 may be narrowed by the hardware).
    #[must_use]
    pub fn new(dtype: DType, grammar: StringGrammar, opts: &CastOptions) -> TextReader {
        let plain_narrowing = !opts.profile.policy().flush_subnormals.contains(&(DType::Double, DType::Float));
        TextReader { dtype, grammar, opts: *opts, plain_narrowing }
    }

    /// The code of one string, as [`parse_to_code`] gives it (errors included).
    pub fn code(&self, text: &str) -> Result<u64> {
        match self.fast_code(text) {
            Some(code) => Ok(code),
            None => parse_to_code(text, self.dtype, self.grammar, &self.opts),
        }
    }

    fn fast_code(&self, text: &str) -> Option<u64> {
        match (self.dtype.kind(), self.grammar) {
            (Kind::Integer { bits, .. }, StringGrammar::Strtod) if bits > 4 => {
                strtoll_prefix(text).map(|v| v & self.dtype.code_mask())
            }
            (Kind::Bool, StringGrammar::Python) => None,
            (Kind::Bool, StringGrammar::Spec) => {
                if text.eq_ignore_ascii_case("true") {
                    return Some(1);
                }
                if text.eq_ignore_ascii_case("false") {
                    return Some(0);
                }
                plain_decimal(text).map(|p| u64::from(p.significand != 0))
            }
            (Kind::Bool, StringGrammar::Strtod) => strtoll_prefix(text).map(|v| u64::from(v != 0)),
            (Kind::Float(format), grammar) => {
                let p = plain_decimal(text)?;
                self.float_code(format, grammar, &p, text)
            }
            (Kind::Integer { bits, signed }, StringGrammar::Spec) => {
                let p = plain_decimal(text)?;
                in_range_code(p.truncated()?, bits, signed)
            }
            (Kind::Integer { bits, signed }, StringGrammar::Python) => {
                let p = plain_decimal(text)?;
                if !p.integer_syntax {
                    return None;
                }
                in_range_code(p.truncated()?, bits, signed)
            }
            (Kind::Integer { .. }, StringGrammar::Strtod) => {
                // int4/uint4/int2/uint2: std::stod, then the exact code's own tail.
                let p = plain_decimal(text)?;
                let r = strtod_without_erange(&p, text)?;
                strtod_bits_to_small_integer(r.to_bits(), self.dtype, &self.opts).ok()
            }
            _ => None,
        }
    }

    fn float_code(&self, format: &'static FloatFormat, grammar: StringGrammar, p: &Plain, text: &str) -> Option<u64> {
        match (self.dtype, grammar) {
            (DType::Double, StringGrammar::Spec | StringGrammar::Python) => Some(p.nearest_f64(text)?.to_bits()),
            (DType::Double, StringGrammar::Strtod) => Some(strtod_without_erange(p, text)?.to_bits()),
            (DType::Float, StringGrammar::Spec) => Some(u64::from(p.nearest_f32(text)?.to_bits())),
            // float64 -> float32 is IEEE's nearest-even in every profile that does not flush
            // subnormals (the exact code's convert_code; checked against it in
            // tests/strings_fast.rs); the others take the exact code.
            (DType::Float, StringGrammar::Python) if self.plain_narrowing => {
                Some(u64::from((p.nearest_f64(text)? as f32).to_bits()))
            }
            (DType::Float, StringGrammar::Strtod) if self.plain_narrowing => {
                Some(u64::from((strtod_without_erange(p, text)? as f32).to_bits()))
            }
            (_, StringGrammar::Spec) => {
                let r = p.nearest_f64(text)?;
                if !p.equals(r) && (r == 0.0 || !r.is_normal() || significant_bits(r) <= NARROW_BOUNDARY_BITS) {
                    return None;
                }
                Some(round::encode(format, Value::from_f64(r), self.opts.rounding_for(format)))
            }
            (_, StringGrammar::Python) => {
                convert::convert_code(DType::Double, self.dtype, p.nearest_f64(text)?.to_bits(), &self.opts).ok()
            }
            (_, StringGrammar::Strtod) => {
                super::strtod_to_float(strtod_without_erange(p, text)?.to_bits(), self.dtype, &self.opts).ok()
            }
        }
    }
}

/// The most significant bits any rounding boundary of a float narrower than 32 bits has: a
/// float16 midpoint (11 + 1 bits), with one bit to spare.
const NARROW_BOUNDARY_BITS: u32 = 13;

/// The most significant bits a float32 rounding boundary has (a midpoint: 24 + 1).
const FLOAT32_BOUNDARY_BITS: u32 = 25;

/// Significant bits of a normal double (53 minus the trailing zeros of its significand).
fn significant_bits(r: f64) -> u32 {
    let significand = (r.to_bits() & ((1 << 52) - 1)) | (1 << 52);
    53 - significand.trailing_zeros()
}

fn in_range_code(value: i128, bits: u32, signed: bool) -> Option<u64> {
    let (low, high) = integer_bounds(bits, signed);
    (low..=high).contains(&value).then(|| integer_code(value, bits))
}

/// `strtod`'s reading of a plain decimal, unless it sets `ERANGE` or might (the exact code then
/// decides): an infinite result, or a nonzero result at or below DBL_MIN.
fn strtod_without_erange(p: &Plain, text: &str) -> Option<f64> {
    let r = p.nearest_f64(text)?;
    let fine = r.is_finite() && (r.abs() > f64::MIN_POSITIVE || p.significand == 0);
    fine.then_some(r)
}

/// `std::stoll` / `std::stoull` on text that starts with an optional sign and at most 18
/// digits (what follows the digits is ignored, as C does); `None` for anything else (leading
/// whitespace, no digit, 19 or more digits: the exact code reads those).
fn strtoll_prefix(text: &str) -> Option<u64> {
    let s = text.as_bytes();
    let (negative, start) = match s.first() {
        Some(b'-') => (true, 1),
        Some(b'+') => (false, 1),
        _ => (false, 0),
    };
    let digits = s.get(start..)?.iter().take(19).take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 || digits > 18 {
        return None;
    }
    let magnitude = s[start..start + digits].iter().fold(0u64, |acc, &b| acc * 10 + u64::from(b - b'0'));
    // 18 digits stay below 2^63, so neither stoll nor stoull is out of range; stoull negates a
    // negative number modulo 2^64, and so does two's complement for stoll.
    Some(if negative { magnitude.wrapping_neg() } else { magnitude })
}

// ------------------------------------------------------------------------------------------------
// Plain decimals
// ------------------------------------------------------------------------------------------------

/// A plain decimal text: `±significand * 10^exp10`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Plain {
    negative: bool,
    /// At most 19 significant digits, so below 10^19.
    significand: u64,
    exp10: i32,
    /// Only a sign and digits (what Python's `int()` takes).
    integer_syntax: bool,
}

/// Longest text tried as a plain decimal; longer ones go to the exact code.
const PLAIN_MAX_LEN: usize = 64;
const PLAIN_MAX_DIGITS: u32 = 19;

fn plain_decimal(text: &str) -> Option<Plain> {
    let s = text.as_bytes();
    if s.len() > PLAIN_MAX_LEN {
        return None;
    }
    let mut i = 0;
    let negative = match s.first() {
        Some(b'-') => {
            i = 1;
            true
        }
        Some(b'+') => {
            i = 1;
            false
        }
        _ => false,
    };
    let mut significand: u64 = 0;
    let mut significant_digits = 0u32;
    let mut exp10: i32 = 0;
    let mut any_digit = false;
    let mut push = |d: u8, fraction: bool, significand: &mut u64| -> Option<()> {
        if *significand != 0 || d != 0 {
            significant_digits += 1;
            if significant_digits > PLAIN_MAX_DIGITS {
                return None;
            }
            *significand = *significand * 10 + u64::from(d);
        }
        if fraction {
            exp10 -= 1;
        }
        Some(())
    };
    while let Some(&b) = s.get(i).filter(|b| b.is_ascii_digit()) {
        push(b - b'0', false, &mut significand)?;
        any_digit = true;
        i += 1;
    }
    let mut integer_syntax = true;
    if s.get(i) == Some(&b'.') {
        integer_syntax = false;
        i += 1;
        while let Some(&b) = s.get(i).filter(|b| b.is_ascii_digit()) {
            push(b - b'0', true, &mut significand)?;
            any_digit = true;
            i += 1;
        }
    }
    if !any_digit {
        return None;
    }
    if s.get(i).is_some_and(|b| b.eq_ignore_ascii_case(&b'e')) {
        integer_syntax = false;
        i += 1;
        let exponent_negative = match s.get(i) {
            Some(b'-') => {
                i += 1;
                true
            }
            Some(b'+') => {
                i += 1;
                false
            }
            _ => false,
        };
        let start = i;
        let mut exponent: i32 = 0;
        while let Some(&b) = s.get(i).filter(|b| b.is_ascii_digit()) {
            exponent = exponent * 10 + i32::from(b - b'0');
            i += 1;
            if i - start > 4 {
                return None;
            }
        }
        if i == start {
            return None;
        }
        exp10 += if exponent_negative { -exponent } else { exponent };
    }
    (i == s.len()).then_some(Plain { negative, significand, exp10, integer_syntax })
}

/// Powers of ten that are exact doubles (10^22 = 2^22 * 5^22, and 5^22 < 2^53).
const EXACT_POW10_F64: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20,
    1e21, 1e22,
];
/// Powers of ten that are exact floats (5^10 < 2^24).
const EXACT_POW10_F32: [f32; 11] = [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10];

impl Plain {
    fn with_sign_f64(&self, magnitude: f64) -> f64 {
        if self.negative {
            -magnitude
        } else {
            magnitude
        }
    }

    /// The double nearest the value (ties to even; overflow to infinity, as IEEE reads it).
    fn nearest_f64(&self, text: &str) -> Option<f64> {
        if self.significand == 0 {
            return Some(self.with_sign_f64(0.0));
        }
        let q = self.exp10;
        if self.significand <= 1 << 53 && (-22..=22).contains(&q) {
            let w = self.significand as f64;
            let power = EXACT_POW10_F64[q.unsigned_abs() as usize];
            return Some(self.with_sign_f64(if q >= 0 { w * power } else { w / power }));
        }
        text.parse::<f64>().ok()
    }

    /// The float nearest the value, rounded once.
    fn nearest_f32(&self, text: &str) -> Option<f32> {
        let q = self.exp10;
        if self.significand <= 1 << 24 && (-10..=10).contains(&q) {
            let w = self.significand as f32;
            let power = EXACT_POW10_F32[q.unsigned_abs() as usize];
            let magnitude = if q >= 0 { w * power } else { w / power };
            return Some(if self.negative { -magnitude } else { magnitude });
        }
        let r = self.nearest_f64(text)?;
        if r.is_normal() && !self.equals(r) && significant_bits(r) <= FLOAT32_BOUNDARY_BITS {
            return text.parse::<f32>().ok();
        }
        // A zero, subnormal or infinite r lies far beyond every float32 boundary but the ones
        // it shares with x (x tiny -> ±0, x huge -> ±inf).
        Some(r as f32)
    }

    /// Whether the value is exactly `r` (a double that [`Plain::nearest_f64`] returned), decided
    /// only where it is cheap: `false` means "not known".
    fn equals(&self, r: f64) -> bool {
        let w = self.significand;
        if w == 0 {
            return true;
        }
        let q = self.exp10;
        let exact_in_f64 = if q >= 0 {
            // An integer below 2^53 is a double.
            q <= 22 && u128::from(w).checked_mul(10u128.pow(q as u32)).is_some_and(|v| v <= 1 << 53)
        } else {
            // w / 10^-q is a double iff 5^-q divides w (leaving w / 5^-q / 2^-q) and the rest
            // fits 53 bits; the exponent is then far inside the normal range.
            q >= -27 && {
                let five = 5u64.pow(q.unsigned_abs());
                w % five == 0 && w / five <= 1 << 53
            }
        };
        // r is the nearest double to the value; if the value is a double, r is it.
        exact_in_f64 && r.is_finite()
    }

    /// The value truncated toward zero (`None` beyond what an i128 of 10^38 holds).
    fn truncated(&self) -> Option<i128> {
        let w = u128::from(self.significand);
        let q = self.exp10;
        let magnitude = if q >= 0 {
            w.checked_mul(10u128.checked_pow(q as u32)?)?
        } else if q < -19 {
            0
        } else {
            w / 10u128.pow(q.unsigned_abs())
        };
        let magnitude = i128::try_from(magnitude).ok()?;
        Some(if self.negative { -magnitude } else { magnitude })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_decimals() {
        let p = |t| plain_decimal(t);
        assert_eq!(p("-12.50e-3"), Some(Plain { negative: true, significand: 1250, exp10: -5, integer_syntax: false }));
        assert_eq!(p("+007"), Some(Plain { negative: false, significand: 7, exp10: 0, integer_syntax: true }));
        assert_eq!(p(".5").map(|p| (p.significand, p.exp10)), Some((5, -1)));
        assert_eq!(p("5.").map(|p| (p.significand, p.exp10)), Some((5, 0)));
        assert_eq!(p("0.000").map(|p| (p.significand, p.exp10)), Some((0, -3)));
        for bad in ["", ".", "-", "e5", "1e", "1e+", "1e12345", " 1", "1 ", "1_0", "0x1", "inf", "nan", "1.2.3", "١"] {
            assert_eq!(p(bad), None, "{bad:?}");
        }
        assert!(p("1234567890123456789").is_some());
        assert!(p("12345678901234567890").is_none());
        assert!(p("0.00000000000000000001234567890123456789").is_some());
    }

    #[test]
    fn truncation_toward_zero() {
        let t = |s| plain_decimal(s).unwrap().truncated();
        assert_eq!(t("-2.9"), Some(-2));
        assert_eq!(t("-0.5"), Some(0));
        assert_eq!(t("1.5e3"), Some(1500));
        assert_eq!(t("9e-30"), Some(0));
        assert_eq!(t("1e38"), Some(10i128.pow(38)));
        assert_eq!(t("-1.7e38"), Some(-17 * 10i128.pow(37)));
        assert_eq!(t("9e38"), None);
    }

    #[test]
    fn stoll_prefixes() {
        assert_eq!(strtoll_prefix("12abc"), Some(12));
        assert_eq!(strtoll_prefix("-3.7"), Some(3u64.wrapping_neg()));
        assert_eq!(strtoll_prefix(" 1"), None);
        assert_eq!(strtoll_prefix("x"), None);
        assert_eq!(strtoll_prefix("1234567890123456789"), None);
    }
}
