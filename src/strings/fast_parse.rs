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
use crate::{Error, Packing, Texts};

/// The last texts the exact code read, with their codes (see [`TextReader::read_into`]).
#[derive(Default)]
struct RecentTexts<'a> {
    entries: [Option<(&'a str, u64)>; 4],
    next: usize,
}

impl<'a> RecentTexts<'a> {
    /// Texts longer than this are not remembered (comparing them would cost more than it saves).
    const LONGEST: usize = 16;

    fn code(&mut self, text: &'a str, read: impl FnOnce() -> Result<u64>) -> Result<u64> {
        if let Some((_, code)) = self.entries.iter().flatten().find(|(seen, _)| *seen == text) {
            return Ok(*code);
        }
        let code = read()?;
        if text.len() <= Self::LONGEST {
            self.entries[self.next] = Some((text, code));
            self.next = (self.next + 1) % self.entries.len();
        }
        Ok(code)
    }
}

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
        match self.fast_code(text.as_bytes(), 0, text) {
            Some(code) => Ok(code),
            None => parse_to_code(text, self.dtype, self.grammar, &self.opts),
        }
    }

    /// The codes of every element of `texts` into `out`, which holds `texts.len()` elements of
    /// the reader's dtype in its raw layout ([`crate::packing::raw_len`] bytes); on an error,
    /// the index of the first element that has one and [`parse_to_code`]'s error for it.
    ///
    /// The texts are read in place from the tensor's one buffer (see [`plain_decimal_in`]), and
    /// the last few texts the exact code read are remembered with their codes: a tensor that
    /// spells NaN or infinity does so again and again, and each reading is the same.
    pub(crate) fn read_into(&self, texts: &Texts, out: &mut [u8]) -> core::result::Result<(), (usize, Error)> {
        match self.dtype.packing() {
            Packing::Bytes(1) => self.read_into_bytes::<1>(texts, out),
            Packing::Bytes(2) => self.read_into_bytes::<2>(texts, out),
            Packing::Bytes(4) => self.read_into_bytes::<4>(texts, out),
            Packing::Bytes(8) => self.read_into_bytes::<8>(texts, out),
            _ => self.read_each(texts, |i, code| crate::packing::set(self.dtype, out, i, code)),
        }
    }

    fn read_into_bytes<const WIDTH: usize>(
        &self,
        texts: &Texts,
        out: &mut [u8],
    ) -> core::result::Result<(), (usize, Error)> {
        debug_assert_eq!(out.len(), texts.len() * WIDTH);
        let mut slots = out.chunks_exact_mut(WIDTH);
        self.read_each(texts, |_, code| {
            if let Some(slot) = slots.next() {
                slot.copy_from_slice(&code.to_le_bytes()[..WIDTH]);
            }
        })
    }

    /// Calls `put(i, code)` for every element `i` of `texts`, in order, until one fails.
    #[inline]
    fn read_each(&self, texts: &Texts, mut put: impl FnMut(usize, u64)) -> core::result::Result<(), (usize, Error)> {
        let buf = texts.joined().as_bytes();
        let mut recent = RecentTexts::default();
        // Element i is joined()[ends[i - 1]..ends[i]]: each text starts where the last one ended.
        let mut start = 0;
        for (i, text) in texts.iter().enumerate() {
            let code = match self.fast_code(buf, start, text) {
                Some(code) => code,
                None => recent
                    .code(text, || parse_to_code(text, self.dtype, self.grammar, &self.opts))
                    .map_err(|e| (i, e))?,
            };
            put(i, code);
            start += text.len();
        }
        Ok(())
    }

    /// The fast reading of `text`, which is `buf[start..start + text.len()]` (`buf` may go on
    /// past it), or `None` for the exact code to decide.
    #[inline]
    fn fast_code(&self, buf: &[u8], start: usize, text: &str) -> Option<u64> {
        debug_assert_eq!(buf.get(start..start + text.len()), Some(text.as_bytes()));
        let end = start + text.len();
        let plain = || plain_decimal_in(buf, start, end);
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
                plain().map(|p| u64::from(p.significand != 0))
            }
            (Kind::Bool, StringGrammar::Strtod) => strtoll_prefix(text).map(|v| u64::from(v != 0)),
            (Kind::Float(format), grammar) => {
                let p = plain()?;
                self.float_code(format, grammar, &p, text)
            }
            (Kind::Integer { bits, signed }, StringGrammar::Spec) => {
                let p = plain()?;
                in_range_code(p.truncated()?, bits, signed)
            }
            (Kind::Integer { bits, signed }, StringGrammar::Python) => {
                let p = plain()?;
                if !p.integer_syntax {
                    return None;
                }
                in_range_code(p.truncated()?, bits, signed)
            }
            (Kind::Integer { .. }, StringGrammar::Strtod) => {
                // int4/uint4/int2/uint2: std::stod, then the exact code's own tail.
                let p = plain()?;
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

#[cfg(test)]
fn plain_decimal(text: &str) -> Option<Plain> {
    let s = text.as_bytes();
    plain_decimal_in(s, 0, s.len())
}

/// [`plain_decimal`] of the text `buf[start..end]`, eight digits at a time. Bytes of `buf` past
/// `end` (the next texts of a [`crate::Texts`] buffer) are read but never count: eight-byte loads
/// that cross `end` are masked there. Texts of more than 19 digits in all (leading zeros
/// included) are read by [`plain_decimal_digit_by_digit`], which counts only significant digits.
#[inline]
fn plain_decimal_in(buf: &[u8], start: usize, end: usize) -> Option<Plain> {
    let first = *buf[start..end].first()?;
    let negative = first == b'-';
    let mut i = start + usize::from(negative || first == b'+');
    let (mut significand, mut digits) = (0u64, 0usize);
    loop {
        let (value, k) = leading_digits(buf, i, end);
        significand = significand.wrapping_mul(POW10_U64[k]).wrapping_add(value);
        digits += k;
        i += k;
        if k < 8 || digits > PLAIN_MAX_DIGITS as usize {
            break;
        }
    }
    let mut integer_syntax = true;
    let mut fraction_digits = 0usize;
    if i < end && buf[i] == b'.' {
        integer_syntax = false;
        i += 1;
        loop {
            let (value, k) = leading_digits(buf, i, end);
            significand = significand.wrapping_mul(POW10_U64[k]).wrapping_add(value);
            fraction_digits += k;
            i += k;
            if k < 8 || digits + fraction_digits > PLAIN_MAX_DIGITS as usize {
                break;
            }
        }
    }
    digits += fraction_digits;
    if digits == 0 {
        return None;
    }
    if digits > PLAIN_MAX_DIGITS as usize {
        // Leading zeros may still leave at most 19 significant digits.
        return core::str::from_utf8(&buf[start..end]).ok().and_then(plain_decimal_digit_by_digit);
    }
    // At most 19 digits: the text fits 64 bits with its point dropped.
    let mut exp10 = -(fraction_digits as i32);
    if i < end && buf[i] | 0x20 == b'e' {
        integer_syntax = false;
        i += 1;
        let exponent_negative = buf.get(i) == Some(&b'-') && i < end;
        if i < end && (buf[i] == b'-' || buf[i] == b'+') {
            i += 1;
        }
        let (exponent, k) = leading_digits(buf, i, end);
        if k == 0 || k > 4 {
            return None;
        }
        i += k;
        exp10 += if exponent_negative { -(exponent as i32) } else { exponent as i32 };
    }
    (i == end).then_some(Plain { negative, significand, exp10, integer_syntax })
}

/// 10^k for k = 0..=8.
const POW10_U64: [u64; 9] = [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000];

/// The ASCII digits that start `buf[at..end]`, at most eight: their value and how many there are.
#[inline]
fn leading_digits(buf: &[u8], at: usize, end: usize) -> (u64, usize) {
    let available = end.saturating_sub(at);
    let word = match buf.get(at..at + 8) {
        Some(bytes) => u64::from_le_bytes(bytes.try_into().unwrap_or([0; 8])),
        None => {
            let mut bytes = [0u8; 8];
            let tail = &buf[at.min(end)..end];
            let n = tail.len().min(8);
            bytes[..n].copy_from_slice(&tail[..n]);
            u64::from_le_bytes(bytes)
        }
    };
    // Bytes at or past `end` become 0, which is no digit.
    let word = if available >= 8 { word } else { word & ((1u64 << (8 * available)) - 1) };
    // A byte is a digit iff its high nibble is 3 and its low nibble plus 6 stays below 16 (the
    // sum stays inside its byte, so no carry crosses into the next one).
    let high = (word & 0xF0F0_F0F0_F0F0_F0F0) ^ 0x3030_3030_3030_3030;
    let low = ((word & 0x0F0F_0F0F_0F0F_0F0F) + 0x0606_0606_0606_0606) & 0xF0F0_F0F0_F0F0_F0F0;
    // Each byte of `not_digit` is 0 or at least 0x10; its top bit marks a byte that is no digit.
    let not_digit = high | low;
    let marks = ((not_digit >> 4) & 0x0F0F_0F0F_0F0F_0F0F).wrapping_add(0x7F7F_7F7F_7F7F_7F7F) & 0x8080_8080_8080_8080;
    let k = (marks.trailing_zeros() / 8) as usize;
    // The k digits moved to the top bytes, below them zeros: the same number with leading zeros.
    let digits = (word & 0x0F0F_0F0F_0F0F_0F0F).checked_shl(64 - 8 * k as u32).unwrap_or(0);
    (eight_digits(digits), k)
}

/// The number written by eight digit values, one per byte, the first in the lowest byte.
#[inline]
fn eight_digits(v: u64) -> u64 {
    // Pairs, then quadruples, then all eight, each step a multiply that adds neighbours.
    let pairs = v.wrapping_mul(10).wrapping_add(v >> 8);
    let mask = 0x0000_00FF_0000_00FF;
    let high_pairs = (pairs & mask).wrapping_mul(100 + (1_000_000 << 32));
    let low_pairs = ((pairs >> 16) & mask).wrapping_mul(1 + (10_000 << 32));
    high_pairs.wrapping_add(low_pairs) >> 32
}

/// The digit-by-digit reading of a plain decimal, which skips leading zeros when it counts the
/// 19 significant digits (the eight-at-a-time [`plain_decimal_in`] hands it those texts).
fn plain_decimal_digit_by_digit(text: &str) -> Option<Plain> {
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
        // Most texts first, with no branch on how many digits they have: the double nearest x
        // (one IEEE operation, as in `nearest_f64`), which narrows to x's float32 whenever it has
        // more significant bits than any float32 boundary (see the module's note).
        if self.significand <= 1 << 53 && (-22..=22).contains(&q) {
            let w = self.significand as f64;
            let power = EXACT_POW10_F64[q.unsigned_abs() as usize];
            let r = if q >= 0 { w * power } else { w / power };
            if significant_bits(r) > FLOAT32_BOUNDARY_BITS {
                let r = r as f32;
                return Some(if self.negative { -r } else { r });
            }
        }
        if self.significand <= 1 << 24 && (-10..=10).contains(&q) {
            let w = self.significand as f32;
            let power = EXACT_POW10_F32[q.unsigned_abs() as usize];
            let magnitude = if q >= 0 { w * power } else { w / power };
            return Some(if self.negative { -magnitude } else { magnitude });
        }
        let r = self.nearest_f64(text)?;
        if r.is_normal() && significant_bits(r) <= FLOAT32_BOUNDARY_BITS && !self.equals(r) {
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

    /// The eight-at-a-time reader against the digit-by-digit one, on texts of every length up
    /// to 30 built from the characters a plain decimal has (and a few it must not have), alone
    /// and followed by more text in the same buffer (which must not count).
    #[test]
    fn eight_at_a_time_reads_as_digit_by_digit() {
        let alphabet = b"0123456789.e-+E5/:x ";
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut checked = 0;
        for len in 0..=30 {
            for _ in 0..4000 {
                let mut text: String = (0..len)
                    .map(|_| {
                        let r = next();
                        // Mostly digits, so that long runs of them occur.
                        let i = if r % 3 == 0 { (r >> 8) as usize % alphabet.len() } else { (r >> 8) as usize % 10 };
                        char::from(alphabet[i])
                    })
                    .collect();
                if next() % 4 == 0 {
                    text.insert(0, '-');
                }
                let expected = plain_decimal_digit_by_digit(&text);
                assert_eq!(plain_decimal(&text), expected, "{text:?}");
                let joined = format!("{text}123456789.5");
                assert_eq!(plain_decimal_in(joined.as_bytes(), 0, text.len()), expected, "{text:?} in {joined:?}");
                let joined = format!("7.25e1{text}9876");
                assert_eq!(plain_decimal_in(joined.as_bytes(), 6, 6 + text.len()), expected, "{text:?} in {joined:?}");
                checked += usize::from(expected.is_some());
            }
        }
        assert!(checked > 10_000, "only {checked} plain decimals among the texts");
    }

    #[test]
    fn eight_digits_at_once() {
        for (text, value) in [("00000000", 0), ("12345678", 12_345_678), ("99999999", 99_999_999), ("00000102", 102)] {
            let word = u64::from_le_bytes(text.as_bytes().try_into().unwrap()) & 0x0F0F_0F0F_0F0F_0F0F;
            assert_eq!(eight_digits(word), value, "{text}");
        }
        assert_eq!(leading_digits(b"123.5", 0, 5), (123, 3));
        assert_eq!(leading_digits(b"12345678901", 0, 11), (12_345_678, 8));
        assert_eq!(leading_digits(b"12345678901", 8, 11), (901, 3));
        assert_eq!(leading_digits(b"1234", 0, 2), (12, 2));
        assert_eq!(leading_digits(b"x1", 0, 2), (0, 0));
        assert_eq!(leading_digits(b"", 0, 0), (0, 0));
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
