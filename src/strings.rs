//! ONNX `Cast` to and from STRING, one element at a time (profile rows `strings.grammar` and
//! `strings.number_style`).
//!
//! Text is read with one of three grammars ([`StringGrammar`]) and numbers are written in one of
//! three styles ([`NumberStyle`]): the `spec` profile's, the onnx reference's (Python and numpy)
//! and onnxruntime's (`strtod`/`stoll`/`stoull` and `%.8g`). Which one applies to which dtype is the
//! caller's decision (the profile table); every grammar and style works for every numeric dtype.
//!
//! Everything here is exact: a decimal string becomes an [`Exact`] through big-integer arithmetic
//! and meets the rounding core once, and every digit string written is derived from the exact
//! binary value of the code. Nothing goes through the host's float parsing or printing except
//! one speed-up: Rust's shortest `{:e}` output for float32 and float64 tells how many digits to
//! try first (the digits themselves are recomputed exactly from the code's value).

use crate::convert::{self, CastOptions, Element};
use crate::dtype::{DType, Kind};
use crate::error::{Error, Result};
use crate::format::{FloatFormat, NonFinite, F32, F64};
pub use crate::profile::{NumberStyle, StringGrammar};
use crate::round::{self, RoundingOptions};
use crate::value::{Exact, Value, QUIET_NAN_PAYLOAD};
use core::cmp::Ordering;
use num_bigint::BigUint;

mod fast_format;
mod fast_parse;

pub use fast_format::TextWriter;
pub use fast_parse::TextReader;

// ------------------------------------------------------------------------------------------------
// Number -> text
// ------------------------------------------------------------------------------------------------

/// The exact decimal expansion of a dyadic value: `sig * 2^exp`, signed.
#[must_use]
pub fn exact_decimal(negative: bool, significand: u64, exponent: i32) -> String {
    let sign = if negative { "-" } else { "" };
    if significand == 0 {
        return format!("{sign}0");
    }
    if exponent >= 0 {
        return format!("{sign}{}", BigUint::from(significand) << exponent.unsigned_abs());
    }
    // sig * 2^-k = sig * 5^k / 10^k: the digits of sig * 5^k with the point k places from the right.
    let k = exponent.unsigned_abs() as usize;
    let digits = (BigUint::from(significand) * BigUint::from(5u32).pow(k as u32)).to_string();
    let padded = if digits.len() <= k { format!("{}{digits}", "0".repeat(k + 1 - digits.len())) } else { digits };
    let (int_part, frac_part) = padded.split_at(padded.len() - k);
    let frac_part = frac_part.trim_end_matches('0');
    if frac_part.is_empty() {
        format!("{sign}{int_part}")
    } else {
        format!("{sign}{int_part}.{frac_part}")
    }
}

/// The exact decimal of a decoded value: `nan`, `-nan`, `inf`, `-inf`, `-0`, `0.001953125`.
#[must_use]
pub fn value_to_exact_decimal(value: &Value) -> String {
    match *value {
        Value::Nan { negative, .. } => if negative { "-nan" } else { "nan" }.to_string(),
        Value::Infinite { negative } => if negative { "-inf" } else { "inf" }.to_string(),
        Value::Finite(e) => {
            debug_assert!(!e.sticky);
            exact_decimal(e.negative, e.significand, e.exponent)
        }
    }
}

/// One element to text. `code` is the element's bits (as [`convert::decode_element`] takes
/// them). Every numeric dtype and BOOL works in every style; other dtypes are an `Err`.
///
/// ```
/// use lowbit::strings::{format_code, NumberStyle};
/// use lowbit::DType;
///
/// // float16 0x4248 is 2 * (1 + 584/1024) = 3.140625; its neighbours are 3.138671875 and
/// // 3.142578125, so any decimal in (3.1396484375, 3.1416015625) reads back as 0x4248:
/// // "3.14" is the shortest.
/// assert_eq!(format_code(DType::Float16, 0x4248, NumberStyle::Spec)?, "3.14");
/// // E4M3FN 0x7F is NaN: the spec's literal, numpy's spelling under the onnx reference.
/// assert_eq!(format_code(DType::Float8E4M3FN, 0x7F, NumberStyle::Spec)?, "NaN");
/// assert_eq!(format_code(DType::Float8E4M3FN, 0x7F, NumberStyle::Numpy)?, "nan");
/// # Ok::<(), lowbit::Error>(())
/// ```
pub fn format_code(dtype: DType, code: u64, style: NumberStyle) -> Result<String> {
    let code = code & dtype.code_mask();
    match dtype.kind() {
        Kind::Float(format) => Ok(format_float(format, code, style)),
        Kind::Integer { .. } | Kind::Bool => Ok(match convert::decode_element(dtype, code)? {
            Element::Bool(b) => match (style, b) {
                (NumberStyle::PrintfG8, true) => "1".to_string(),
                (NumberStyle::PrintfG8, false) => "0".to_string(),
                (_, true) => "True".to_string(),
                (_, false) => "False".to_string(),
            },
            Element::Int(i) => i.to_string(),
            // decode_element gives a float only for float dtypes, handled above.
            Element::Float(_) => unreachable_float(dtype),
        }),
        _ => Err(Error::UnsupportedDType {
            op: "Cast to STRING",
            dtype: dtype.onnx_name(),
            why: "only numeric types and BOOL are written as text",
        }),
    }
}

#[cold]
fn unreachable_float(dtype: DType) -> String {
    // Kept total instead of panicking: an integer dtype never decodes to a float.
    format!("<{dtype} decoded as a float>")
}

fn format_float(format: &FloatFormat, code: u64, style: NumberStyle) -> String {
    let x = match format.decode(code) {
        Value::Nan { .. } => return if style == NumberStyle::Numpy { "nan" } else { "NaN" }.to_string(),
        Value::Infinite { negative } => {
            return match (style == NumberStyle::Numpy, negative) {
                (true, false) => "inf",
                (true, true) => "-inf",
                (false, false) => "INF",
                (false, true) => "-INF",
            }
            .to_string()
        }
        Value::Finite(x) => x,
    };
    let sign = if x.negative { "-" } else { "" };
    if x.is_zero() {
        return match style {
            NumberStyle::PrintfG8 => format!("{sign}0"),
            _ => format!("{sign}0.0"),
        };
    }
    let magnitude = Exact { negative: false, ..x };
    let body = match style {
        NumberStyle::PrintfG8 => printf_g(&magnitude, 8),
        NumberStyle::Spec | NumberStyle::Numpy => {
            let (digits, exp10) = shortest_digits(format, code & format.magnitude_mask(), &magnitude);
            layout(&digits, exp10, is_positional(format, &magnitude))
        }
    };
    format!("{sign}{body}")
}

/// numpy's switch between positional and scientific notation: `1e-4 <= |x| < 10^P`, compared
/// exactly (every value of every format is exact as a double, and so are 1e3, 1e6 and 1e16; the
/// lower bound is the double nearest 1e-4, so float32(1e-4) = 9.99999974e-05 is below it).
fn is_positional(format: &FloatFormat, magnitude: &Exact) -> bool {
    let upper = if *format == F64 {
        1e16
    } else if *format == F32 {
        1e6
    } else {
        1e3
    };
    let x = f64::from_bits(round::encode(&F64, Value::Finite(*magnitude), RoundingOptions::IEEE));
    (1e-4..upper).contains(&x)
}

/// Lays out significant `digits` (no trailing zeros) whose first digit has weight `10^exp10`.
fn layout(digits: &str, exp10: i32, positional: bool) -> String {
    if positional {
        if exp10 >= 0 {
            let int_len = exp10 as usize + 1;
            if digits.len() > int_len {
                format!("{}.{}", &digits[..int_len], &digits[int_len..])
            } else {
                format!("{digits}{}.0", "0".repeat(int_len - digits.len()))
            }
        } else {
            format!("0.{}{digits}", "0".repeat((-exp10 - 1) as usize))
        }
    } else {
        let mantissa = if digits.len() > 1 { format!("{}.{}", &digits[..1], &digits[1..]) } else { digits.to_string() };
        format!("{mantissa}e{}{:02}", if exp10 < 0 { '-' } else { '+' }, exp10.unsigned_abs())
    }
}

/// The rounding a round-trip check reads digits back with: nearest-even, overflow not absorbed.
const ROUND_TRIP: RoundingOptions = RoundingOptions { saturate: false, ..RoundingOptions::IEEE };

/// The shortest decimal digits that read back (nearest-even) as the code `magnitude_code` of
/// `format`, whose positive value is `x`; among the shortest, the closest to `x`, an exact tie
/// going to the even last digit (numpy's Dragon4 "unique" mode, whose interval ends are inclusive
/// when the code is even, exactly as a nearest-even reader decides).
///
/// Returns the digits without trailing zeros and the decimal exponent of the first digit.
///
/// At each length n only two candidates can be in the rounding interval, `floor` and `floor + 1`
/// of x at n digits, so both are read back through the rounding core.
fn shortest_digits(format: &FloatFormat, magnitude_code: u64, x: &Exact) -> (String, i32) {
    let (num, den) = ratio(x);
    let k = decimal_exponent(&num, &den, x);
    // Rust's shortest round-trip output has the right length for float32 and float64 (its digits
    // are recomputed here because its tie rule is not numpy's). Narrower formats start at 1.
    let start = if *format == F64 {
        rust_digit_count(&format!("{:e}", f64::from_bits(magnitude_code)))
    } else if *format == F32 {
        rust_digit_count(&format!("{:e}", f32::from_bits(magnitude_code as u32)))
    } else {
        1
    };
    // 17 digits always round-trip for float64 and fewer for everything narrower; the bound only
    // keeps the loop finite.
    for n in start..=40 {
        let scale = k - n + 1;
        let (floor, rest) = scaled_floor(&num, &den, scale);
        if rest.exact {
            return strip_zeros(&floor, scale);
        }
        let ceil = &floor + 1u32;
        let floor_ok = round_trips(format, magnitude_code, &floor, scale);
        let ceil_ok = round_trips(format, magnitude_code, &ceil, scale);
        let pick = match (floor_ok, ceil_ok) {
            (true, true) => match rest.vs_half {
                Ordering::Less => &floor,
                Ordering::Greater => &ceil,
                Ordering::Equal => {
                    if floor.bit(0) {
                        &ceil
                    } else {
                        &floor
                    }
                }
            },
            (true, false) => &floor,
            (false, true) => &ceil,
            (false, false) => continue,
        };
        return strip_zeros(pick, scale);
    }
    // Unreachable for every format lowbit knows; fall back to 40 correctly rounded digits.
    let scale = k - 39;
    let (floor, _) = scaled_floor(&num, &den, scale);
    strip_zeros(&floor, scale)
}

/// Number of significant digits in Rust's `{:e}` output (`1.2345e8` has 5).
fn rust_digit_count(s: &str) -> i32 {
    s.split('e').next().map_or(1, |m| m.bytes().filter(u8::is_ascii_digit).count()) as i32
}

/// Whether `digits * 10^scale` reads back as `magnitude_code`.
fn round_trips(format: &FloatFormat, magnitude_code: u64, digits: &BigUint, scale: i32) -> bool {
    let ndigits = digits.to_string().len() as i64;
    let value = decimal_to_exact(false, digits, ndigits, i64::from(scale), false);
    if round::encode(format, Value::Finite(value), ROUND_TRIP) != magnitude_code {
        return false;
    }
    if format.non_finite != NonFinite::None || magnitude_code != format.max_finite_magnitude() {
        return true;
    }
    // float4/float6 clamp every large value to MAX, so reading back alone would accept "30" for
    // float6e3m2's 28. With an unbounded exponent range MAX rounds from [MAX - ulp/2, MAX + ulp/2):
    // the upper end is the midpoint to the next (nonexistent) value, a tie going to the even one.
    let Value::Finite(max) = format.decode(magnitude_code) else { return false };
    let bound = BigUint::from(max.significand) * 2u32 + 1u32;
    match cmp_decimal_binary(digits, scale, &bound, max.exponent - 1) {
        Ordering::Less => true,
        Ordering::Equal => max.significand & 1 == 0,
        Ordering::Greater => false,
    }
}

/// Compares `d * 10^s` with `b * 2^e` exactly.
fn cmp_decimal_binary(d: &BigUint, s: i32, b: &BigUint, e: i32) -> Ordering {
    let mut lhs = d.clone();
    let mut rhs = b.clone();
    if s >= 0 {
        lhs *= pow10(s.unsigned_abs());
    } else {
        rhs *= pow10(s.unsigned_abs());
    }
    if e >= 0 {
        rhs <<= e.unsigned_abs() as usize;
    } else {
        lhs <<= e.unsigned_abs() as usize;
    }
    lhs.cmp(&rhs)
}

/// C's `%.<precision>g` of a positive value (exact as a double), correctly rounded with ties to
/// even like glibc: `precision` significant digits, trailing zeros removed, scientific iff the
/// rounded value's decimal exponent X is < -4 or >= precision.
fn printf_g(x: &Exact, precision: i32) -> String {
    let (num, den) = ratio(x);
    let mut k = decimal_exponent(&num, &den, x);
    let (floor, rest) = scaled_floor(&num, &den, k - precision + 1);
    let up = match rest.vs_half {
        Ordering::Greater => true,
        Ordering::Equal => floor.bit(0),
        Ordering::Less => false,
    };
    let mut digits = if up { floor + 1u32 } else { floor }.to_string();
    if digits.len() > precision as usize {
        // 99999999.5 -> 100000000: one more digit, one more power of ten.
        digits.truncate(precision as usize);
        k += 1;
    }
    if k < -4 || k >= precision {
        let fraction = digits[1..].trim_end_matches('0');
        let mantissa =
            if fraction.is_empty() { digits[..1].to_string() } else { format!("{}.{fraction}", &digits[..1]) };
        format!("{mantissa}e{}{:02}", if k < 0 { '-' } else { '+' }, k.unsigned_abs())
    } else {
        let (int, fraction) = if k >= 0 {
            (digits[..=k as usize].to_string(), digits[k as usize + 1..].to_string())
        } else {
            ("0".to_string(), format!("{}{digits}", "0".repeat((-k - 1) as usize)))
        };
        let fraction = fraction.trim_end_matches('0');
        if fraction.is_empty() {
            int
        } else {
            format!("{int}.{fraction}")
        }
    }
}

// ------------------------------------------------------------------------------------------------
// Exact decimal arithmetic
// ------------------------------------------------------------------------------------------------

fn pow10(n: u32) -> BigUint {
    BigUint::from(10u32).pow(n)
}

/// A finite positive `Exact` (no sticky) as `num / den`.
fn ratio(x: &Exact) -> (BigUint, BigUint) {
    let significand = BigUint::from(x.significand);
    if x.exponent >= 0 {
        (significand << x.exponent as usize, BigUint::ONE)
    } else {
        (significand, BigUint::ONE << x.exponent.unsigned_abs() as usize)
    }
}

/// `floor(log10(num / den))` for the positive value `x = num / den`.
fn decimal_exponent(num: &BigUint, den: &BigUint, x: &Exact) -> i32 {
    let estimate = (x.significand as f64).log10() + f64::from(x.exponent) * core::f64::consts::LOG10_2;
    let mut k = estimate.floor() as i32;
    // The estimate is off by at most one; settle it exactly.
    while !at_least_pow10(num, den, k) {
        k -= 1;
    }
    while at_least_pow10(num, den, k + 1) {
        k += 1;
    }
    k
}

/// `num / den >= 10^k`.
fn at_least_pow10(num: &BigUint, den: &BigUint, k: i32) -> bool {
    if k >= 0 {
        *num >= den * pow10(k.unsigned_abs())
    } else {
        num * pow10(k.unsigned_abs()) >= *den
    }
}

/// Where a remainder lies relative to half of its divisor.
#[derive(Clone, Copy, Debug)]
struct Rest {
    exact: bool,
    vs_half: Ordering,
}

/// `floor(num / den / 10^scale)` and where the rest lies.
fn scaled_floor(num: &BigUint, den: &BigUint, scale: i32) -> (BigUint, Rest) {
    let (dividend, divisor) = if scale >= 0 {
        (num.clone(), den * pow10(scale.unsigned_abs()))
    } else {
        (num * pow10(scale.unsigned_abs()), den.clone())
    };
    let (q, r) = (&dividend / &divisor, &dividend % &divisor);
    let rest = Rest { exact: r == BigUint::ZERO, vs_half: (r << 1usize).cmp(&divisor) };
    (q, rest)
}

/// `digits * 10^scale` as significant digits without trailing zeros and the exponent of the
/// first digit.
fn strip_zeros(digits: &BigUint, scale: i32) -> (String, i32) {
    let s = digits.to_string();
    let exp10 = scale + s.len() as i32 - 1;
    let trimmed = s.trim_end_matches('0');
    (if trimmed.is_empty() { "0".to_string() } else { trimmed.to_string() }, exp10)
}

/// Above this decimal exponent every format overflows, below its negative every format
/// underflows (float64 spans 4.9e-324 to 1.8e308): such values are replaced by one representative,
/// so `1e999999999` costs nothing.
const DECIMAL_EXPONENT_CLAMP: i64 = 400;
/// Exponents in text saturate here before any arithmetic.
const EXPONENT_TEXT_CLAMP: i64 = 1_000_000_000;
/// Significant digits kept from text; the rest only count as "nonzero or not". Every midpoint
/// between two float64 values has at most 768 significant digits, so truncating a decimal at 800
/// digits never moves it across one: rounding the truncated value with a sticky bit is exact.
const MAX_SIGNIFICANT_DIGITS: usize = 800;

/// A huge finite value that overflows every format the same way.
const HUGE: Exact = Exact { negative: false, significand: 1 << 63, exponent: 2000, sticky: false };
/// A tiny nonzero value that underflows every format the same way.
const TINY: Exact = Exact { negative: false, significand: 1 << 63, exponent: -2200, sticky: true };

/// The exact value `±(digits + t) * 10^exp10` where `t` is 0 if `tail` is false and strictly
/// between 0 and 1 otherwise (digits dropped from the text), as an [`Exact`] whose 64-bit
/// significand and sticky bit round exactly like the real value. `ndigits` is the number of
/// decimal digits of `digits` (for the overflow and underflow clamps).
fn decimal_to_exact(negative: bool, digits: &BigUint, ndigits: i64, exp10: i64, tail: bool) -> Exact {
    if *digits == BigUint::ZERO && !tail {
        return Exact::zero(negative);
    }
    if exp10 + ndigits - 1 > DECIMAL_EXPONENT_CLAMP {
        return Exact { negative, ..HUGE };
    }
    if exp10 + ndigits < -DECIMAL_EXPONENT_CLAMP {
        return Exact { negative, ..TINY };
    }
    if exp10 >= 0 {
        // With a tail the digit string was cut at 800 digits, so the integer has far more than
        // 64 bits and the tail lies below the bits `binary_to_exact` drops.
        return binary_to_exact(negative, digits * pow10(exp10 as u32), 0, tail);
    }
    let den = pow10(exp10.unsigned_abs() as u32);
    // Scale so that the quotient has at least 64 bits: then the rest, and the tail, lie below
    // the 64 bits kept. (The truncated decimal and every value up to the next 800-digit decimal
    // round the same, see MAX_SIGNIFICANT_DIGITS, so the tail only needs to make the result
    // inexact.)
    let shift = (64 + den.bits() as i64 - digits.bits() as i64 + 1).max(0);
    let scaled = digits << shift as usize;
    let (q, r) = (&scaled / &den, &scaled % &den);
    binary_to_exact(negative, q, -shift, tail || r != BigUint::ZERO)
}

/// `±(int + t) * 2^exp2` (t as in [`decimal_to_exact`]) cut to a 64-bit significand. A sticky
/// result always has a full 64-bit significand, so the sticky part lies below every rounding
/// position (the core's contract). Also Range's exact big values (`ops::range`).
pub(crate) fn binary_to_exact(negative: bool, int: BigUint, exp2: i64, sticky: bool) -> Exact {
    let bits = int.bits() as i64;
    if int == BigUint::ZERO {
        return if sticky { Exact { negative, ..TINY } } else { Exact::zero(negative) };
    }
    // Clamp absurd binary exponents (hex floats): beyond these everything overflows or underflows.
    if bits + exp2 > 4000 {
        return Exact { negative, ..HUGE };
    }
    if bits + exp2 < -4000 {
        return Exact { negative, ..TINY };
    }
    if bits <= 64 {
        debug_assert!(!sticky || bits == 64, "a sticky significand must be 64 bits wide");
        let significand = u64::try_from(&int).unwrap_or(u64::MAX);
        return Exact { negative, significand, exponent: exp2 as i32, sticky };
    }
    let drop = (bits - 64) as u64;
    let lost = int.trailing_zeros().is_some_and(|tz| tz < drop);
    let significand = u64::try_from(int >> drop as usize).unwrap_or(u64::MAX);
    Exact { negative, significand, exponent: (exp2 + drop as i64) as i32, sticky: sticky || lost }
}

// ------------------------------------------------------------------------------------------------
// Scanning
// ------------------------------------------------------------------------------------------------

/// C's `isspace` in the C locale (also what the spec grammar trims).
const fn is_c_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0B | 0x0C | b'\r')
}

/// A number read from text.
#[derive(Clone, Debug)]
enum Number {
    Nan { negative: bool },
    Infinite { negative: bool },
    Decimal(Decimal),
}

/// `±(digits + tail) * 10^exp10` (see [`decimal_to_exact`]).
#[derive(Clone, Debug)]
struct Decimal {
    negative: bool,
    digits: BigUint,
    ndigits: i64,
    exp10: i64,
    tail: bool,
}

impl Decimal {
    fn exact(&self) -> Exact {
        decimal_to_exact(self.negative, &self.digits, self.ndigits, self.exp10, self.tail)
    }

    /// The value truncated toward zero, if its magnitude is below 10^30.
    fn truncated(&self) -> Option<i128> {
        if self.digits == BigUint::ZERO {
            return Some(0);
        }
        if self.exp10 + self.ndigits > 30 {
            return None;
        }
        if self.exp10 + self.ndigits <= 0 {
            return Some(0);
        }
        let magnitude = if self.exp10 >= 0 {
            &self.digits * pow10(self.exp10 as u32)
        } else {
            &self.digits / pow10(self.exp10.unsigned_abs() as u32)
        };
        let magnitude = i128::try_from(u128::try_from(magnitude).ok()?).ok()?;
        Some(if self.negative { -magnitude } else { magnitude })
    }
}

impl Number {
    fn value(&self) -> Value {
        match self {
            Number::Nan { negative } => Value::Nan { negative: *negative, payload: QUIET_NAN_PAYLOAD },
            Number::Infinite { negative } => Value::Infinite { negative: *negative },
            Number::Decimal(d) => Value::Finite(d.exact()),
        }
    }
}

/// The digits of a mantissa (`digits [. digits]`) in radix 10 or 16.
struct Mantissa {
    /// Significant digits (ASCII), leading zeros removed, at most [`MAX_SIGNIFICANT_DIGITS`].
    digits: Vec<u8>,
    /// Value = digits * radix^scale (before any exponent), plus the tail.
    scale: i64,
    tail: bool,
    end: usize,
}

impl Mantissa {
    fn number(&self, radix: u32) -> BigUint {
        if self.digits.is_empty() {
            BigUint::ZERO
        } else {
            BigUint::parse_bytes(&self.digits, radix).unwrap_or_default()
        }
    }
}

fn is_radix_digit(b: u8, hex: bool) -> bool {
    if hex {
        b.is_ascii_hexdigit()
    } else {
        b.is_ascii_digit()
    }
}

/// Reads `digits [. digits]` (at least one digit) at `start`; `None` if there is no digit. A
/// point not followed by a digit is consumed only after digits (`5.`), as C and Python do.
fn scan_mantissa(s: &[u8], start: usize, hex: bool) -> Option<Mantissa> {
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
fn scan_exponent(s: &[u8], i: usize, marker: u8) -> Option<(i64, usize)> {
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

fn starts_with_ignore_case(s: &[u8], i: usize, word: &str) -> bool {
    s.len() >= i + word.len() && s[i..i + word.len()].eq_ignore_ascii_case(word.as_bytes())
}

/// Reads an optional sign at `i`.
fn scan_sign(s: &[u8], i: usize) -> (bool, usize) {
    match s.get(i) {
        Some(b'-') => (true, i + 1),
        Some(b'+') => (false, i + 1),
        _ => (false, i),
    }
}

/// Reads `[sign] (inf | infinity | nan | decimal)` at `start` (the grammar shared by `spec` and
/// Python's `float()`); returns the number and where it ends.
fn scan_number(s: &[u8], start: usize) -> Option<(Number, usize)> {
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
fn unexpected(text: &str, i: usize) -> String {
    match text.get(i..).and_then(|rest| rest.chars().next()) {
        Some(c) => format!("unexpected {:?} at byte {i}", c.to_string()),
        None => "unexpected end of text".to_string(),
    }
}

/// The `spec` grammar for a whole string (whitespace trimmed).
fn parse_spec_number(text: &str) -> core::result::Result<Number, String> {
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

// ------------------------------------------------------------------------------------------------
// Text -> number
// ------------------------------------------------------------------------------------------------

/// The exact value of a decimal text in the `spec` grammar (the same numbers, NaN and infinity
/// spellings [`parse_to_code`] reads): for rounding it into a format that is not an ONNX dtype.
pub fn parse_exact_value(text: &str) -> Result<Value> {
    parse_spec_number(text).map(|n| n.value()).map_err(|why| Error::ParseString {
        text: shorten(text),
        dtype: "a described format",
        why,
    })
}

/// One string to an element code of `dtype` (numeric dtypes and BOOL). `opts` gives saturate
/// and round_mode for float8 and E8M0 targets, and the policy that narrows the float64 (Python)
/// or float32 (strtod) reading to the target. Errors name the problem and quote the text.
///
/// ```
/// use lowbit::strings::{parse_to_code, StringGrammar};
/// use lowbit::{CastOptions, DType};
///
/// let opts = CastOptions::default();
/// // 3.14 = 1.57 * 2^1: exponent 1 + 15 = 16 -> 0x4000; fraction 0.57 * 1024 = 583.68 -> 584
/// // = 0x248.
/// assert_eq!(parse_to_code("3.14", DType::Float16, StringGrammar::Spec, &opts)?, 0x4248);
/// // Integers: truncated toward zero, as the Cast text says ("100.5" -> 100).
/// assert_eq!(parse_to_code(" -100.5 ", DType::Int8, StringGrammar::Spec, &opts)?, 0x9C); // -100
/// assert!(parse_to_code("1e3", DType::Int8, StringGrammar::Spec, &opts).is_err()); // past 127
/// assert!(parse_to_code("three", DType::Float, StringGrammar::Spec, &opts).is_err());
/// # Ok::<(), lowbit::Error>(())
/// ```
pub fn parse_to_code(text: &str, dtype: DType, grammar: StringGrammar, opts: &CastOptions) -> Result<u64> {
    let fail = |why: String| Error::ParseString { text: shorten(text), dtype: dtype.onnx_name(), why };
    match dtype.kind() {
        Kind::Float(format) => match grammar {
            StringGrammar::Spec => {
                let n = parse_spec_number(text).map_err(fail)?;
                Ok(round::encode(format, n.value(), opts.rounding_for(format)))
            }
            StringGrammar::Python => {
                let bits = python_float(text).map_err(fail)?;
                convert::convert_code(DType::Double, dtype, bits, opts)
            }
            StringGrammar::Strtod => {
                let bits = strtod(text).map_err(fail)?;
                strtod_to_float(bits, dtype, opts)
            }
        },
        Kind::Integer { bits, signed } => match grammar {
            StringGrammar::Spec => spec_integer(text, bits, signed).map_err(fail),
            StringGrammar::Python => python_integer(text, bits, signed).map_err(fail),
            StringGrammar::Strtod if bits <= 4 => {
                let bits64 = strtod(text).map_err(fail)?;
                strtod_bits_to_small_integer(bits64, dtype, opts)
            }
            StringGrammar::Strtod => {
                // std::stoll for signed targets, std::stoull for unsigned ones, then
                // gsl::narrow_cast (the low bits).
                let v = c_strtoint(text, !signed).map_err(fail)?;
                Ok(v & dtype.code_mask())
            }
        },
        Kind::Bool => match grammar {
            StringGrammar::Spec => spec_bool(text).map(u64::from).map_err(fail),
            // numpy: a non-empty string is true. numpy's fixed-width strings cannot end in NUL
            // characters (they are padding), so trailing NULs do not count.
            StringGrammar::Python => Ok(u64::from(!text.trim_end_matches('\0').is_empty())),
            StringGrammar::Strtod => c_strtoint(text, true).map(|v| u64::from(v != 0)).map_err(fail),
        },
        _ => Err(Error::UnsupportedDType {
            op: "Cast from STRING",
            dtype: dtype.onnx_name(),
            why: "only numeric types and BOOL are read from text",
        }),
    }
}

/// onnxruntime's int4/uint4/int2/uint2 from the `std::stod` result `bits64`: narrowed to float,
/// `std::roundf` (half away from zero), `static_cast<int>` (NaN, Inf and |x| >= 2^31 give INT_MIN,
/// whose low bits are 0), then the low bits.
fn strtod_bits_to_small_integer(bits64: u64, dtype: DType, opts: &CastOptions) -> Result<u64> {
    let f32_bits = convert::convert_code(DType::Double, DType::Float, bits64, opts)?;
    let x = f32::from_bits(f32_bits as u32).round();
    let i = if x.is_finite() && x.abs() < 2_147_483_648.0 { x as i64 } else { 0 };
    Ok((i as u64) & dtype.code_mask())
}

/// The text for an error message: long texts are cut.
fn shorten(text: &str) -> String {
    const KEEP: usize = 64;
    if text.chars().count() <= KEEP {
        text.to_string()
    } else {
        let mut s: String = text.chars().take(KEEP - 4).collect();
        s.push_str("...");
        s
    }
}

fn integer_code(i: i128, bits: u32) -> u64 {
    let mask = if bits >= 64 { u64::MAX } else { (1u64 << bits) - 1 };
    (i as u64) & mask
}

/// Profile row `strings.grammar`, `spec`, into integers: a decimal (fraction and exponent
/// allowed) truncated toward zero.
fn spec_integer(text: &str, bits: u32, signed: bool) -> core::result::Result<u64, String> {
    let (lo, hi) = crate::dtype::integer_bounds(bits, signed);
    let out_of_range = || format!("out of the range {lo} to {hi}");
    match parse_spec_number(text)? {
        Number::Nan { .. } => Err("NaN is not an integer".to_string()),
        Number::Infinite { .. } => Err(out_of_range()),
        Number::Decimal(d) => match d.truncated() {
            Some(i) if (lo..=hi).contains(&i) => Ok(integer_code(i, bits)),
            _ => Err(out_of_range()),
        },
    }
}

/// Profile row `strings.grammar`, `spec`, into BOOL: `true`/`false` in any case, or a number
/// (nonzero is true; NaN is true, as `x != 0` of profile field `float8_to_bool`).
fn spec_bool(text: &str) -> core::result::Result<bool, String> {
    let word = text.trim_matches(|c: char| c.is_ascii() && is_c_space(c as u8));
    if word.eq_ignore_ascii_case("true") {
        return Ok(true);
    }
    if word.eq_ignore_ascii_case("false") {
        return Ok(false);
    }
    match parse_spec_number(text) {
        Ok(Number::Decimal(d)) => Ok(!d.exact().is_zero()),
        Ok(_) => Ok(true),
        Err(why) => Err(format!("neither true, false nor a number ({why})")),
    }
}

// ---- Python --------------------------------------------------------------------------------------

/// The first code point of each run of ten Unicode decimal digits (general category Nd), digit 0
/// first. Derived from the Unicode Character Database 15.0 (the Python 3.12 and 3.13 versions):
/// Python's `float()` and `int()` read every one of these as its digit.
const UNICODE_DIGIT_ZEROS: [u32; 68] = [
    0x30, 0x660, 0x6F0, 0x7C0, 0x966, 0x9E6, 0xA66, 0xAE6, 0xB66, 0xBE6, 0xC66, 0xCE6, 0xD66, 0xDE6, 0xE50, 0xED0,
    0xF20, 0x1040, 0x1090, 0x17E0, 0x1810, 0x1946, 0x19D0, 0x1A80, 0x1A90, 0x1B50, 0x1BB0, 0x1C40, 0x1C50, 0xA620,
    0xA8D0, 0xA900, 0xA9D0, 0xA9F0, 0xAA50, 0xABF0, 0xFF10, 0x104A0, 0x10D30, 0x11066, 0x110F0, 0x11136, 0x111D0,
    0x112F0, 0x11450, 0x114D0, 0x11650, 0x116C0, 0x11730, 0x118E0, 0x11950, 0x11C50, 0x11D50, 0x11DA0, 0x11F50,
    0x16A60, 0x16AC0, 0x16B50, 0x1D7CE, 0x1D7D8, 0x1D7E2, 0x1D7EC, 0x1D7F6, 0x1E140, 0x1E2F0, 0x1E4F0, 0x1E950,
    0x1FBF0,
];

/// The value of a Unicode decimal digit.
fn unicode_digit(c: char) -> Option<u8> {
    let c = u32::from(c);
    let run = UNICODE_DIGIT_ZEROS.partition_point(|&zero| zero <= c).checked_sub(1)?;
    let d = c - UNICODE_DIGIT_ZEROS[run];
    (d < 10).then_some(d as u8)
}

/// Text as Python's `float()` and `int()` see it: trailing NULs dropped (numpy storage), every
/// non-ASCII whitespace character a space and every Unicode decimal digit its ASCII digit
/// (CPython's `_PyUnicode_TransformDecimalAndSpaceToASCII`), underscores checked (each one
/// between two digits) and removed, surrounding whitespace stripped. Returns the ASCII text and,
/// for each of its bytes, the byte of `text` it came from (for error positions).
fn python_normalize(text: &str) -> core::result::Result<(Vec<u8>, Vec<usize>), String> {
    let text = text.trim_end_matches('\0');
    let mut mapped: Vec<(u8, usize)> = Vec::with_capacity(text.len());
    for (i, c) in text.char_indices() {
        let b = if c.is_ascii() {
            c as u8
        } else if c.is_whitespace() {
            b' '
        } else if let Some(d) = unicode_digit(c) {
            b'0' + d
        } else {
            return Err(unexpected(text, i));
        };
        mapped.push((b, i));
    }
    let mut out: Vec<(u8, usize)> = Vec::with_capacity(mapped.len());
    for (k, &(b, i)) in mapped.iter().enumerate() {
        if b == b'_' {
            let before = k > 0 && mapped[k - 1].0.is_ascii_digit();
            let after = mapped.get(k + 1).is_some_and(|(n, _)| n.is_ascii_digit());
            if !(before && after) {
                return Err(format!("misplaced underscore at byte {i}"));
            }
        } else {
            out.push((b, i));
        }
    }
    let first = out.iter().position(|(b, _)| !is_c_space(*b)).unwrap_or(out.len());
    let last = out.iter().rposition(|(b, _)| !is_c_space(*b)).map_or(first, |p| p + 1);
    let kept = &out[first..last];
    if kept.is_empty() {
        return Err(if text.is_empty() { "empty string" } else { "only whitespace" }.to_string());
    }
    Ok((kept.iter().map(|(b, _)| *b).collect(), kept.iter().map(|(_, i)| *i).collect()))
}

/// Python's `float(text)` as float64 bits (correctly rounded; `1e400` is inf, `1e-400` is 0).
fn python_float(text: &str) -> core::result::Result<u64, String> {
    let (s, origin) = python_normalize(text)?;
    let at = |i: usize| origin.get(i).copied().unwrap_or(text.len());
    match scan_number(&s, 0) {
        Some((n, end)) if end == s.len() => Ok(round::encode(&F64, n.value(), RoundingOptions::IEEE)),
        Some((_, end)) => Err(format!("Python float() rejects it: {}", unexpected(text, at(end)))),
        None => Err(format!("Python float() rejects it: {}", unexpected(text, at(0)))),
    }
}

/// CPython's limit on the digits of a decimal integer string (`sys.int_info.default_max_str_digits`).
const PYTHON_MAX_STR_DIGITS: usize = 4300;

/// Python's `int(text)` (base 10), then numpy's range check for the target.
fn python_integer(text: &str, bits: u32, signed: bool) -> core::result::Result<u64, String> {
    let (s, origin) = python_normalize(text)?;
    let (negative, start) = scan_sign(&s, 0);
    let digits = &s[start..];
    if let Some(bad) = digits.iter().position(|b| !b.is_ascii_digit()) {
        let i = origin.get(start + bad).copied().unwrap_or(text.len());
        return Err(format!("Python int() rejects it: {}", unexpected(text, i)));
    }
    if digits.is_empty() {
        return Err("Python int() rejects it: no digits".to_string());
    }
    if digits.len() > PYTHON_MAX_STR_DIGITS {
        return Err(format!("Python int() rejects more than {PYTHON_MAX_STR_DIGITS} digits"));
    }
    let (lo, hi) = crate::dtype::integer_bounds(bits, signed);
    let significant = digits.iter().position(|&b| b != b'0').map_or(&digits[digits.len()..], |p| &digits[p..]);
    let value = if significant.len() > 30 {
        None
    } else {
        // At most 30 ASCII digits: fits i128.
        let m = significant.iter().fold(0i128, |acc, &b| acc * 10 + i128::from(b - b'0'));
        Some(if negative { -m } else { m })
    };
    match value {
        Some(i) if (lo..=hi).contains(&i) => Ok(integer_code(i, bits)),
        _ => Err(format!("Python integer out of bounds ({lo} to {hi})")),
    }
}

// ---- strtod / stoll / stoull -------------------------------------------------------------------

/// `std::stod(text)` (glibc `strtod` in the C locale) as float64 bits. Leading whitespace is
/// skipped and the longest valid prefix read; what follows is ignored. Errors: no number at the
/// start (`std::invalid_argument`) and `ERANGE` (`std::out_of_range`).
///
/// `ERANGE` is glibc's rule: a finite input whose rounded result is infinite, or a nonzero input
/// that is tiny and inexact. glibc judges tininess after rounding to 53 bits with an unbounded
/// exponent (x86): tiny means below DBL_MIN - 2^-1076, the midpoint between DBL_MIN and the
/// next smaller 53-bit number. So `1e400`, `-1e400`, `1e-400` are errors, so is every decimal
/// that lands among the subnormals (or zero), except the rare one that equals a subnormal exactly
/// (`0x1p-1074`, or the 751-digit decimal of 2^-1074), and so is `2.2250738585072012e-308`,
/// which rounds to DBL_MIN itself.
fn strtod(text: &str) -> core::result::Result<u64, String> {
    const NO_NUMBER: &str = "no number at the start (std::stod throws std::invalid_argument)";
    let s = text.as_bytes();
    let start = s.iter().position(|b| !is_c_space(*b)).unwrap_or(s.len());
    let (negative, i) = scan_sign(s, start);
    let sign_bit = if negative { 1u64 << 63 } else { 0 };
    if starts_with_ignore_case(s, i, "inf") {
        return Ok(sign_bit | 0x7FF0_0000_0000_0000);
    }
    if starts_with_ignore_case(s, i, "nan") {
        let payload = strtod_nan_payload(s, i + 3)?;
        return Ok(sign_bit | 0x7FF8_0000_0000_0000 | payload);
    }
    let hex = s.get(i) == Some(&b'0')
        && matches!(s.get(i + 1), Some(b'x' | b'X'))
        && (s.get(i + 2).is_some_and(u8::is_ascii_hexdigit)
            || (s.get(i + 2) == Some(&b'.') && s.get(i + 3).is_some_and(u8::is_ascii_hexdigit)));
    let exact = if hex {
        let m = scan_mantissa(s, i + 2, true).ok_or_else(|| NO_NUMBER.to_string())?;
        let (exponent, _) = scan_exponent(s, m.end, b'p').unwrap_or((0, m.end));
        binary_to_exact(negative, m.number(16), exponent.saturating_add(4 * m.scale), m.tail)
    } else {
        let m = scan_mantissa(s, i, false).ok_or_else(|| NO_NUMBER.to_string())?;
        let (exponent, _) = scan_exponent(s, m.end, b'e').unwrap_or((0, m.end));
        decimal_to_exact(negative, &m.number(10), m.digits.len() as i64, m.scale + exponent, m.tail)
    };
    let bits = round::encode(&F64, Value::Finite(exact), RoundingOptions::IEEE);
    let magnitude = bits & !(1 << 63);
    if magnitude == 0x7FF0_0000_0000_0000 {
        return Err("out of the range of double (strtod sets ERANGE; std::stod throws std::out_of_range)".into());
    }
    if !exact.is_zero() && below_glibc_tininess(&exact) && !same_value(&exact, &F64.decode(bits)) {
        return Err("too small for a normal double (strtod sets ERANGE; std::stod throws std::out_of_range)".into());
    }
    Ok(bits)
}

/// Whether |x| < DBL_MIN - 2^-1076 = (2^54 - 1) * 2^-1076. A sticky `x` has a 64-bit
/// significand, so its sticky part cannot cross that 54-bit boundary.
fn below_glibc_tininess(x: &Exact) -> bool {
    let bound = BigUint::from((1u64 << 54) - 1);
    cmp_binary(x.significand, x.exponent, &bound, -1076) == Ordering::Less
}

/// Compares `a * 2^ea` with `b * 2^eb` exactly.
fn cmp_binary(a: u64, ea: i32, b: &BigUint, eb: i32) -> Ordering {
    let low = ea.min(eb);
    let lhs = BigUint::from(a) << (ea - low) as usize;
    let rhs = b << (eb - low) as usize;
    lhs.cmp(&rhs)
}

/// Whether an `Exact` (possibly sticky) equals a decoded finite value.
fn same_value(x: &Exact, v: &Value) -> bool {
    let Value::Finite(y) = v else { return false };
    if x.sticky {
        return false;
    }
    let norm = |e: &Exact| {
        if e.significand == 0 {
            (0, 0)
        } else {
            let tz = e.significand.trailing_zeros();
            (e.significand >> tz, i64::from(e.exponent) + i64::from(tz))
        }
    };
    norm(x) == norm(y)
}

/// glibc's `nan(n-char-sequence)`: the sequence `[0-9A-Za-z_]*` in parentheses, read by
/// `strtoull(seq, &end, 0)`; if that reads all of it, its low 51 bits are the payload under the
/// quiet bit. Without the closing parenthesis only `nan` is read (and the rest ignored). An
/// overflowing number sets `ERANGE`, which `std::stod` reports.
fn strtod_nan_payload(s: &[u8], i: usize) -> core::result::Result<u64, String> {
    if s.get(i) != Some(&b'(') {
        return Ok(0);
    }
    let seq_start = i + 1;
    let seq_len = s[seq_start..].iter().take_while(|b| b.is_ascii_alphanumeric() || **b == b'_').count();
    if s.get(seq_start + seq_len) != Some(&b')') {
        return Ok(0);
    }
    let seq = &s[seq_start..seq_start + seq_len];
    let (radix, digits) = if seq.len() > 2 && seq[0] == b'0' && (seq[1] | 0x20) == b'x' {
        (16, &seq[2..])
    } else if seq.len() > 1 && seq[0] == b'0' {
        (8, &seq[1..])
    } else {
        (10, seq)
    };
    let mut value: u128 = 0;
    for &b in digits {
        let Some(d) = (b as char).to_digit(radix) else { return Ok(0) };
        value = (value * u128::from(radix) + u128::from(d)).min(1 << 70);
    }
    if value > u128::from(u64::MAX) {
        return Err("NaN payload overflows (strtoull sets ERANGE; std::stod throws std::out_of_range)".into());
    }
    Ok((value as u64) & ((1 << 51) - 1))
}

/// `std::stoll` (signed) or `std::stoull` (unsigned) in base 10, as 64 bits: leading whitespace,
/// an optional sign, digits up to the first non-digit. `stoull` negates a `-` number modulo 2^64.
fn c_strtoint(text: &str, unsigned: bool) -> core::result::Result<u64, String> {
    let name = if unsigned { "std::stoull" } else { "std::stoll" };
    let s = text.as_bytes();
    let start = s.iter().position(|b| !is_c_space(*b)).unwrap_or(s.len());
    let (negative, i) = scan_sign(s, start);
    let digits = s[i..].iter().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 {
        return Err(format!("no digits at the start ({name} throws std::invalid_argument)"));
    }
    let magnitude = s[i..i + digits].iter().fold(0u128, |acc, &b| (acc * 10 + u128::from(b - b'0')).min(1 << 70));
    let erange = || {
        format!(
            "out of the range of {} ({name} throws std::out_of_range)",
            if unsigned { "unsigned long long" } else { "long long" }
        )
    };
    if unsigned {
        let m = u64::try_from(magnitude).map_err(|_| erange())?;
        Ok(if negative { m.wrapping_neg() } else { m })
    } else if negative {
        if magnitude > 1 << 63 {
            return Err(erange());
        }
        Ok((magnitude as u64).wrapping_neg())
    } else {
        if magnitude >= 1 << 63 {
            return Err(erange());
        }
        Ok(magnitude as u64)
    }
}

/// onnxruntime's float targets from a `std::stod` result: DOUBLE keeps it; everything else is
/// `static_cast<float>` first, then the float32 -> target conversion of `opts`' policy (float8
/// honours saturate there). bfloat16's `BFloat16(float)` constructor, which the string path uses,
/// writes every NaN as 0x7FC1, sign dropped (docs/research/onnx_cast.md §5; observed with
/// scripts/crosscheck_cast.py: "-nan" -> 0x7FC1).
fn strtod_to_float(bits: u64, dtype: DType, opts: &CastOptions) -> Result<u64> {
    if dtype == DType::Double {
        return Ok(bits);
    }
    let f32_bits = convert::convert_code(DType::Double, DType::Float, bits, opts)?;
    if dtype == DType::Float {
        return Ok(f32_bits);
    }
    if dtype == DType::Bfloat16 && f32::from_bits(f32_bits as u32).is_nan() {
        return Ok(0x7FC1);
    }
    convert::convert_code(DType::Float, dtype, f32_bits, opts)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec_f32(text: &str) -> u64 {
        parse_to_code(text, DType::Float, StringGrammar::Spec, &CastOptions::default()).unwrap()
    }

    #[test]
    fn long_decimals_round_once() {
        // 1 + 3*2^-24 - 2^-60: just below a float32 midpoint.
        assert_eq!(spec_f32("1.00000017881393432530451326201159645279"), 0x3F80_0001);
        // The midpoint itself ties to even; one more digit far down breaks the tie upward.
        assert_eq!(spec_f32("1.000000178813934326171875"), 0x3F80_0002);
        let mut above = "1.000000059604644775390625".to_string();
        assert_eq!(spec_f32(&above), 0x3F80_0000);
        above.push_str(&"0".repeat(1000));
        above.push('1');
        assert_eq!(spec_f32(&above), 0x3F80_0001);
    }

    #[test]
    fn exponent_clamps() {
        assert_eq!(spec_f32("1e999999999999999999999"), 0x7F80_0000);
        assert_eq!(spec_f32("-1e-999999999999999999999"), 0x8000_0000);
        assert_eq!(spec_f32("0e999999999999"), 0);
        assert_eq!(spec_f32(&format!("0.{}1e1000", "0".repeat(999))), 0x3F80_0000);
    }

    #[test]
    fn printf_g_edges() {
        let g = |x: f64| match Value::from_f64(x) {
            Value::Finite(e) => printf_g(&e, 8),
            _ => unreachable!(),
        };
        assert_eq!(g(99999999.5), "1e+08");
        assert_eq!(g(0.0001), "0.0001");
        assert_eq!(g(0.00001), "1e-05");
        assert_eq!(g(2097152.25), "2097152.2");
        assert_eq!(g(1.5), "1.5");
        assert_eq!(g(12345678.0), "12345678");
    }

    #[test]
    fn unicode_digit_table() {
        assert_eq!(unicode_digit('\u{663}'), Some(3));
        assert_eq!(unicode_digit('\u{FF19}'), Some(9));
        assert_eq!(unicode_digit('\u{1D7FF}'), Some(9));
        assert_eq!(unicode_digit('\u{66A}'), None);
        assert!(UNICODE_DIGIT_ZEROS.windows(2).all(|w| w[0] + 10 <= w[1]));
    }
}
