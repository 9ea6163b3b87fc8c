//! Scanning number texts: sign, mantissa, exponent, `inf`/`nan`, as each grammar reads them.

use super::*;
use crate::alloc_prelude::*;

/// C's `isspace` in the C locale (also what the spec grammar trims).
pub(super) const fn is_c_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0B | 0x0C | b'\r')
}

/// A number read from text.
#[derive(Clone, Debug)]
pub(super) enum Number {
    Nan { negative: bool },
    Infinite { negative: bool },
    Decimal(Decimal),
}

/// `±(digits + tail) * 10^exp10` (see [`decimal_to_exact`]).
#[derive(Clone, Debug)]
pub(super) struct Decimal {
    pub(super) negative: bool,
    pub(super) digits: BigUint,
    pub(super) ndigits: i64,
    pub(super) exp10: i64,
    pub(super) tail: bool,
}

impl Decimal {
    pub(super) fn exact(&self) -> Exact {
        decimal_to_exact(self.negative, &self.digits, self.ndigits, self.exp10, self.tail)
    }

    /// The value truncated toward zero, if its magnitude is below 10^30.
    pub(super) fn truncated(&self) -> Option<i128> {
        if self.digits.is_zero() {
            return Some(0);
        }
        if self.exp10 + self.ndigits > 30 {
            return None;
        }
        if self.exp10 + self.ndigits <= 0 {
            return Some(0);
        }
        let magnitude = if self.exp10 >= 0 {
            self.digits.mul(&pow10(self.exp10 as u32))
        } else {
            self.digits.div_rem(&pow10(self.exp10.unsigned_abs() as u32)).0
        };
        let magnitude = i128::try_from(magnitude.to_u128()?).ok()?;
        Some(if self.negative { -magnitude } else { magnitude })
    }
}

impl Number {
    pub(super) fn value(&self) -> Value {
        match self {
            Number::Nan { negative } => Value::Nan { negative: *negative, payload: QUIET_NAN_PAYLOAD },
            Number::Infinite { negative } => Value::Infinite { negative: *negative },
            Number::Decimal(d) => Value::Finite(d.exact()),
        }
    }
}

/// The digits of a mantissa (`digits [. digits]`) in radix 10 or 16.
pub(super) struct Mantissa {
    /// Significant digits (ASCII), leading zeros removed, at most [`MAX_SIGNIFICANT_DIGITS`].
    pub(super) digits: Vec<u8>,
    /// Value = digits * radix^scale (before any exponent), plus the tail.
    pub(super) scale: i64,
    pub(super) tail: bool,
    pub(super) end: usize,
}

impl Mantissa {
    pub(super) fn number(&self, radix: u32) -> BigUint {
        if self.digits.is_empty() {
            BigUint::ZERO
        } else {
            BigUint::parse(&self.digits, radix).unwrap_or_default()
        }
    }
}

pub(super) fn is_radix_digit(b: u8, hex: bool) -> bool {
    if hex {
        b.is_ascii_hexdigit()
    } else {
        b.is_ascii_digit()
    }
}

/// Reads `digits [. digits]` (at least one digit) at `start`; `None` if there is no digit. A
/// point not followed by a digit is consumed only after digits (`5.`), as C and Python do.
pub(super) fn scan_mantissa(s: &[u8], start: usize, hex: bool) -> Option<Mantissa> {
    let mut m = Mantissa { digits: Vec::new(), scale: 0, tail: false, end: start };
    let push = |m: &mut Mantissa, d: u8, fraction: bool| {
        if m.digits.is_empty() && d == b'0' {
            if fraction {
                m.scale -= 1;
            }
        } else if m.digits.len() < MAX_SIGNIFICANT_DIGITS {
            m.digits.push(d);
            if fraction {
                m.scale -= 1;
            }
        } else {
            m.tail |= d != b'0';
            if !fraction {
                m.scale += 1;
            }
        }
    };
    let mut i = start;
    let mut any = false;
    while i < s.len() && is_radix_digit(s[i], hex) {
        push(&mut m, s[i], false);
        any = true;
        i += 1;
    }
    if i < s.len() && s[i] == b'.' && (any || (i + 1 < s.len() && is_radix_digit(s[i + 1], hex))) {
        i += 1;
        while i < s.len() && is_radix_digit(s[i], hex) {
            push(&mut m, s[i], true);
            any = true;
            i += 1;
        }
    }
    m.end = i;
    any.then_some(m)
}

/// Reads an exponent `marker [sign] digits` at `i` (markers are case-insensitive); returns the
/// (saturated) exponent and its end, or `None` if there is no complete exponent there.
pub(super) fn scan_exponent(s: &[u8], i: usize, marker: u8) -> Option<(i64, usize)> {
    if i >= s.len() || s[i].to_ascii_lowercase() != marker {
        return None;
    }
    let mut j = i + 1;
    let negative = j < s.len() && s[j] == b'-';
    if j < s.len() && (s[j] == b'+' || s[j] == b'-') {
        j += 1;
    }
    let first = j;
    let mut e: i64 = 0;
    while j < s.len() && s[j].is_ascii_digit() {
        e = (e * 10 + i64::from(s[j] - b'0')).min(EXPONENT_TEXT_CLAMP);
        j += 1;
    }
    (j > first).then_some((if negative { -e } else { e }, j))
}

pub(super) fn starts_with_ignore_case(s: &[u8], i: usize, word: &str) -> bool {
    s.len() >= i + word.len() && s[i..i + word.len()].eq_ignore_ascii_case(word.as_bytes())
}

/// Reads an optional sign at `i`.
pub(super) fn scan_sign(s: &[u8], i: usize) -> (bool, usize) {
    match s.get(i) {
        Some(b'-') => (true, i + 1),
        Some(b'+') => (false, i + 1),
        _ => (false, i),
    }
}

/// Reads `[sign] (inf | infinity | nan | decimal)` at `start` (the grammar shared by `spec` and
/// Python's `float()`); returns the number and where it ends.
pub(super) fn scan_number(s: &[u8], start: usize) -> Option<(Number, usize)> {
    let (negative, i) = scan_sign(s, start);
    if starts_with_ignore_case(s, i, "infinity") {
        return Some((Number::Infinite { negative }, i + 8));
    }
    if starts_with_ignore_case(s, i, "inf") {
        return Some((Number::Infinite { negative }, i + 3));
    }
    if starts_with_ignore_case(s, i, "nan") {
        return Some((Number::Nan { negative }, i + 3));
    }
    let m = scan_mantissa(s, i, false)?;
    let (exponent, end) = scan_exponent(s, m.end, b'e').unwrap_or((0, m.end));
    let decimal = Decimal {
        negative,
        digits: m.number(10),
        ndigits: m.digits.len() as i64,
        exp10: m.scale + exponent,
        tail: m.tail,
    };
    Some((Number::Decimal(decimal), end))
}

/// Describes the character at byte `i` of `text` (or the end) for an error message.
pub(super) fn unexpected(text: &str, i: usize) -> String {
    match text.get(i..).and_then(|rest| rest.chars().next()) {
        Some(c) => format!("unexpected {:?} at byte {i}", c.to_string()),
        None => "unexpected end of text".to_string(),
    }
}

/// The `spec` grammar for a whole string (whitespace trimmed).
pub(super) fn parse_spec_number(text: &str) -> core::result::Result<Number, String> {
    let s = text.as_bytes();
    let start = s.iter().position(|b| !is_c_space(*b));
    let Some(start) = start else {
        return Err(if s.is_empty() { "empty string" } else { "only whitespace" }.to_string());
    };
    let end = s.iter().rposition(|b| !is_c_space(*b)).map_or(s.len(), |p| p + 1);
    let s = &s[..end];
    match scan_number(s, start) {
        Some((n, stop)) if stop == end => Ok(n),
        Some((_, stop)) => Err(unexpected(text, stop)),
        None => {
            // Point at the first character that cannot start a number (after the sign).
            let (_, i) = scan_sign(s, start);
            let i = if i < end && s[i] == b'.' { i + 1 } else { i };
            Err(unexpected(text, i.min(end)))
        }
    }
}
