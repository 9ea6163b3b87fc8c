//! Number -> text: the exact decimal of a value, and every profile's number style.

use super::*;
use crate::alloc_prelude::*;

// Binary -> decimal on big integers.

/// A finite positive `Exact` (no sticky) as `num / den`.
fn ratio(x: &Exact) -> (BigUint, BigUint) {
    let significand = BigUint::from(x.significand);
    if x.exponent >= 0 {
        (significand.shl(x.exponent as u64), BigUint::one())
    } else {
        (significand, BigUint::one().shl(u64::from(x.exponent.unsigned_abs())))
    }
}

/// `floor(log10(num / den))` for the positive value `x = num / den`.
fn decimal_exponent(num: &BigUint, den: &BigUint, x: &Exact) -> i32 {
    // x lies in [2^m, 2^(m+1)) with m from the significand's bit length, so floor(m * log10(2))
    // (log10(2) as 78913 / 2^18, in integers: no float logarithm, which `core` lacks) is off by at
    // most one; settle it exactly.
    let m = i64::from(63 - x.significand.leading_zeros() as i32) + i64::from(x.exponent);
    let mut k = (m * 78913).div_euclid(1 << 18) as i32;
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
        *num >= den.mul(&pow10(k.unsigned_abs()))
    } else {
        num.mul(&pow10(k.unsigned_abs())) >= *den
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
        (num.clone(), den.mul(&pow10(scale.unsigned_abs())))
    } else {
        (num.mul(&pow10(scale.unsigned_abs())), den.clone())
    };
    let (q, r) = dividend.div_rem(&divisor);
    let rest = Rest { exact: r.is_zero(), vs_half: r.shl(1).cmp(&divisor) };
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

/// The exact decimal expansion of a dyadic value: `sig * 2^exp`, signed.
#[must_use]
pub fn exact_decimal(negative: bool, significand: u64, exponent: i32) -> String {
    let sign = if negative { "-" } else { "" };
    if significand == 0 {
        return format!("{sign}0");
    }
    if exponent >= 0 {
        return format!("{sign}{}", BigUint::from(significand).shl(u64::from(exponent.unsigned_abs())));
    }
    // sig * 2^-k = sig * 5^k / 10^k: the digits of sig * 5^k with the point k places from the right.
    let k = exponent.unsigned_abs() as usize;
    let digits = BigUint::from(significand).mul(&BigUint::pow(5, k as u32)).to_string();
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
/// use lowbit::profile::NumberStyle;
/// use lowbit::strings::format_code;
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
pub(super) fn unreachable_float(dtype: DType) -> String {
    // Kept total instead of panicking: an integer dtype never decodes to a float.
    format!("<{dtype} decoded as a float>")
}

pub(super) fn format_float(format: &FloatFormat, code: u64, style: NumberStyle) -> String {
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
pub(super) fn is_positional(format: &FloatFormat, magnitude: &Exact) -> bool {
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
pub(super) fn layout(digits: &str, exp10: i32, positional: bool) -> String {
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
pub(super) const ROUND_TRIP: RoundingOptions = RoundingOptions { saturate: false, ..RoundingOptions::IEEE };

/// The shortest decimal digits that read back (nearest-even) as the code `magnitude_code` of
/// `format`, whose positive value is `x`; among the shortest, the closest to `x`, an exact tie
/// going to the even last digit (numpy's Dragon4 "unique" mode, whose interval ends are inclusive
/// when the code is even, exactly as a nearest-even reader decides).
///
/// Returns the digits without trailing zeros and the decimal exponent of the first digit.
///
/// At each length n only two candidates can be in the rounding interval, `floor` and `floor + 1`
/// of x at n digits, so both are read back through the rounding core.
pub(super) fn shortest_digits(format: &FloatFormat, magnitude_code: u64, x: &Exact) -> (String, i32) {
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
        let ceil = floor.clone().add_small(1);
        let floor_ok = round_trips(format, magnitude_code, &floor, scale);
        let ceil_ok = round_trips(format, magnitude_code, &ceil, scale);
        let pick = match (floor_ok, ceil_ok) {
            (true, true) => match rest.vs_half {
                Ordering::Less => &floor,
                Ordering::Greater => &ceil,
                Ordering::Equal => {
                    if floor.is_odd() {
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
pub(super) fn rust_digit_count(s: &str) -> i32 {
    s.split('e').next().map_or(1, |m| m.bytes().filter(u8::is_ascii_digit).count()) as i32
}

/// Whether `digits * 10^scale` reads back as `magnitude_code`.
pub(super) fn round_trips(format: &FloatFormat, magnitude_code: u64, digits: &BigUint, scale: i32) -> bool {
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
    let bound = BigUint::from_u128(u128::from(max.significand) * 2 + 1);
    match cmp_decimal_binary(digits, scale, &bound, max.exponent - 1) {
        Ordering::Less => true,
        Ordering::Equal => max.significand & 1 == 0,
        Ordering::Greater => false,
    }
}

/// Compares `d * 10^s` with `b * 2^e` exactly.
pub(super) fn cmp_decimal_binary(d: &BigUint, s: i32, b: &BigUint, e: i32) -> Ordering {
    let mut lhs = d.clone();
    let mut rhs = b.clone();
    if s >= 0 {
        lhs = lhs.mul(&pow10(s.unsigned_abs()));
    } else {
        rhs = rhs.mul(&pow10(s.unsigned_abs()));
    }
    if e >= 0 {
        rhs = rhs.shl(u64::from(e.unsigned_abs()));
    } else {
        lhs = lhs.shl(u64::from(e.unsigned_abs()));
    }
    lhs.cmp(&rhs)
}

/// C's `%.<precision>g` of a positive value (exact as a double), correctly rounded with ties to
/// even like glibc: `precision` significant digits, trailing zeros removed, scientific iff the
/// rounded value's decimal exponent X is < -4 or >= precision.
pub(super) fn printf_g(x: &Exact, precision: i32) -> String {
    let (num, den) = ratio(x);
    let mut k = decimal_exponent(&num, &den, x);
    let (floor, rest) = scaled_floor(&num, &den, k - precision + 1);
    let up = match rest.vs_half {
        Ordering::Greater => true,
        Ordering::Equal => floor.is_odd(),
        Ordering::Less => false,
    };
    let mut digits = if up { floor.add_small(1) } else { floor }.to_string();
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
