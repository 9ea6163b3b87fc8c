//! **The rounding rule.** This is the one place where lowbit rounds: every float-to-float
//! conversion, every integer-to-float conversion and every float-to-integer rounding goes through
//! [`round_right_shift`], and every float result is assembled by [`encode`] from a
//! [`FloatFormat`] descriptor. There are no per-format copies of this logic; fast kernels live
//! elsewhere and are tested against this module and against the independent oracle in
//! `tests/support/oracle.rs`.
//!
//! The rule (SEMANTICS.md, `spec` rule): take the exact value, round it **once** to the target's
//! precision with the exponent range unbounded above (subnormals kept below), then judge
//! overflow on the rounded value. ±Inf and overflow become ±MAX when saturating, otherwise
//! infinity, NaN or ±MAX as the format allows.

use crate::format::{FloatFormat, NonFinite};
use crate::value::{Exact, Value};
use core::cmp::Ordering;

/// How to round a value that falls between two representable ones.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum RoundingMode {
    /// To nearest, ties to the even neighbour (IEEE 754 default; every ONNX cast but E8M0's).
    #[default]
    NearestEven,
    /// Toward zero (truncation). E8M0 `round_mode="down"`.
    TowardZero,
    /// Away from zero. E8M0 `round_mode="up"` (the Cast-24 default).
    AwayFromZero,
    /// To nearest, ties away from zero. E8M0 `round_mode="nearest"` ("ties round up").
    NearestTiesAway,
}

/// What to produce for a NaN input when the target format has no NaN (float4, float6).
/// Which one applies is a profile decision (SEMANTICS.md row 8 and research §11).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NanFallback {
    /// +MAX whatever the sign: the ONNX float4 technical note ("NaN -> 6").
    PositiveMax,
    /// The code of -0 with its sign bit flipped by the NaN's sign (+NaN -> -0, -NaN -> +0): what
    /// ml_dtypes, and so the onnx reference, produce.
    SignFlippedNegativeZero,
}

/// Options of one rounding. `saturate` is honoured for every target: callers that implement
/// ONNX `Cast` pass `true` only where the attribute applies (float8 and E8M0 targets).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RoundingOptions {
    pub mode: RoundingMode,
    /// Overflow and ±Inf become ±MAX instead of infinity or NaN.
    pub saturate: bool,
    pub nan_fallback: NanFallback,
}

impl RoundingOptions {
    /// IEEE 754 default: nearest-even, overflow to infinity.
    pub const IEEE: RoundingOptions =
        RoundingOptions { mode: RoundingMode::NearestEven, saturate: false, nan_fallback: NanFallback::PositiveMax };
}

/// Where the discarded part of a shifted significand lies relative to half an ulp.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Remainder {
    vs_half: Ordering,
    inexact: bool,
}

/// Shifts `significand` (with the `sticky` fraction below it) right by `shift >= 1` bits and
/// rounds the result according to `mode`. Returns the rounded quotient and whether it is inexact.
#[must_use]
pub fn round_right_shift(significand: u64, shift: u32, sticky: bool, mode: RoundingMode) -> (u64, bool) {
    let (quotient, rem) = split(significand, shift, sticky);
    (quotient + u64::from(rounds_up(mode, rem, quotient & 1 == 1)), rem.inexact)
}

/// Splits `significand` (with the `sticky` fraction below it) at bit `shift >= 1`: the truncated
/// quotient and where the dropped part lies. The quotient is below 2^63, so adding 1 cannot wrap.
///
/// With `sticky`, the dropped part is `rem + t` for some `0 < t < 1`: it equals half only if `rem`
/// does and `t` were 0, so a sticky bit turns an exact tie into "above half" and leaves "below
/// half" below half (`rem < half` means `rem + 1 <= half`).
fn split(significand: u64, shift: u32, sticky: bool) -> (u64, Remainder) {
    debug_assert!(shift >= 1);
    if shift >= 65 {
        // The whole significand (< 2^64 <= 2^(shift-1)) lies below half of the rounding unit.
        return (0, Remainder { vs_half: Ordering::Less, inexact: significand != 0 || sticky });
    }
    let wide = u128::from(significand);
    let dropped = wide & ((1u128 << shift) - 1);
    let half = 1u128 << (shift - 1);
    let vs_half = match (dropped.cmp(&half), sticky) {
        (Ordering::Equal, true) => Ordering::Greater,
        (ord, _) => ord,
    };
    ((wide >> shift) as u64, Remainder { vs_half, inexact: dropped != 0 || sticky })
}

/// **The rounding decision** of the crate: whether the truncated result moves one unit away from
/// zero. `truncated_is_odd` is the parity of the truncated result's last digit (for a format
/// without fraction bits, such as E8M0, that digit is the exponent's last bit).
fn rounds_up(mode: RoundingMode, rem: Remainder, truncated_is_odd: bool) -> bool {
    match mode {
        RoundingMode::NearestEven => {
            rem.vs_half == Ordering::Greater || (rem.vs_half == Ordering::Equal && truncated_is_odd)
        }
        RoundingMode::NearestTiesAway => rem.vs_half != Ordering::Less,
        RoundingMode::TowardZero => false,
        RoundingMode::AwayFromZero => rem.inexact,
    }
}

/// Rounds an exact value to an integer with `mode`. Returns the sign and the magnitude, or `None`
/// when the magnitude does not fit in 64 bits.
#[must_use]
pub fn round_to_integer(x: Exact, mode: RoundingMode) -> Option<(bool, u64)> {
    if x.is_zero() {
        return Some((x.negative, 0));
    }
    if x.exponent >= 0 {
        let shift = x.exponent as u32;
        // Too large for 64 bits, whatever bits a sticky flag stands for (an exact integer wider
        // than 64 bits, such as a Range term beyond i128, arrives with one).
        if shift >= 64 || x.significand.leading_zeros() < shift {
            return None;
        }
        // An integer that fits; a sticky fraction here would need more than 64 significant bits,
        // which no producer in the crate hands over (see `Exact`).
        debug_assert!(!x.sticky);
        return Some((x.negative, x.significand << shift));
    }
    let shift = x.exponent.unsigned_abs();
    let (q, _) = round_right_shift(x.significand, shift, x.sticky, mode);
    Some((x.negative, q))
}

/// Encodes a value into a code of `format`, rounding once. See the module docs for the rule.
#[must_use]
pub fn encode(format: &FloatFormat, value: Value, opts: RoundingOptions) -> u64 {
    match value {
        Value::Nan { negative, payload } => encode_nan(format, negative, payload, opts),
        Value::Infinite { negative } => overflow(format, negative, opts.saturate),
        Value::Finite(x) => encode_finite(format, x, opts),
    }
}

fn sign_of(format: &FloatFormat, negative: bool) -> u64 {
    if negative {
        format.sign_mask()
    } else {
        0
    }
}

fn encode_nan(format: &FloatFormat, negative: bool, payload: u64, opts: RoundingOptions) -> u64 {
    match format.nan_code(negative) {
        None => match opts.nan_fallback {
            NanFallback::PositiveMax => format.max_code(),
            NanFallback::SignFlippedNegativeZero => sign_of(format, !negative),
        },
        Some(canonical) if format.nan_payload && format.mantissa_bits > 0 => {
            // Keep the top payload bits and set the quiet bit, as x86 hardware does between f32
            // and f64 (SEMANTICS.md row 17). A source without payload hands over just the quiet
            // bit, which yields `canonical`.
            let quiet = 1u64 << (format.mantissa_bits - 1);
            let kept = payload >> (64 - format.mantissa_bits);
            (canonical & !(format.fraction_field_mask())) | kept | quiet
        }
        Some(canonical) => canonical,
    }
}

/// The result for ±Inf and for a finite value whose rounded magnitude exceeds MAX.
fn overflow(format: &FloatFormat, negative: bool, saturate: bool) -> u64 {
    let sign = sign_of(format, negative);
    if saturate {
        return format.max_code() | sign;
    }
    match format.non_finite {
        NonFinite::Ieee => format.infinity_code(negative).unwrap_or(format.max_code() | sign),
        NonFinite::NanAtAllOnes | NonFinite::NanAtNegativeZero => {
            format.nan_code(negative).unwrap_or(format.max_code() | sign)
        }
        // No infinity and no NaN to overflow into: the value clamps (float4, float6).
        NonFinite::None => format.max_code() | sign,
    }
}

/// The result for a nonzero value below the smallest positive magnitude of a format without zero
/// (E8M0). The Cast-24 table: "x < MIN -> MIN" when saturating, NaN otherwise.
fn underflow(format: &FloatFormat, negative: bool, saturate: bool) -> u64 {
    let sign = sign_of(format, negative);
    let smallest = format.min_positive_code() | sign;
    if saturate {
        smallest
    } else {
        format.nan_code(negative).unwrap_or(smallest)
    }
}

fn encode_finite(format: &FloatFormat, x: Exact, opts: RoundingOptions) -> u64 {
    let negative = x.negative && format.signed;
    if x.is_zero() {
        return match format.zero_code(negative) {
            Some(code) => code,
            None => underflow(format, negative, opts.saturate),
        };
    }
    debug_assert!(x.significand != 0, "a sticky fraction needs a nonzero significand");
    // Normalise to a 64-bit significand so that the rounding position is always inside it
    // (every format has at most 53 significant bits) and a sticky tail stays below it.
    let lz = x.significand.leading_zeros();
    let significand = x.significand << lz;
    let exponent = i64::from(x.exponent) - i64::from(lz);
    // The value lies in [2^top, 2^(top+1)).
    let top = exponent + 63;
    let mantissa_bits = i64::from(format.mantissa_bits);
    // Exponent of the smallest normal binade; below it the quantum stops shrinking (subnormals).
    let min_normal_exp = i64::from(if format.subnormals { 1 - format.bias } else { -format.bias });
    if !format.subnormals && top < min_normal_exp {
        return underflow(format, negative, opts.saturate);
    }
    // Exponent of one unit in the last place at the value's binade.
    let quantum = top.max(min_normal_exp) - mantissa_bits;
    // quantum - exponent >= 63 - mantissa_bits >= 10, and it fits u32 for any i32 exponent.
    let shift = (quantum - exponent) as u32;
    let (truncated, rem) = split(significand, shift, x.sticky);
    // The last digit of the truncated code: the fraction's last bit, or with no fraction bits
    // (E8M0, always normal here) the biased exponent's.
    let truncated_is_odd =
        if format.mantissa_bits == 0 { (quantum + i64::from(format.bias)) & 1 == 1 } else { truncated & 1 == 1 };
    let mut m = truncated + u64::from(rounds_up(opts.mode, rem, truncated_is_odd));
    let mut quantum = quantum;
    if m == 0 {
        return match format.zero_code(negative) {
            Some(code) => code,
            None => underflow(format, negative, opts.saturate),
        };
    }
    if m >> (mantissa_bits + 1) != 0 {
        // Rounding carried into the next binade: m was 2^(p) - 1 and became 2^p.
        m >>= 1;
        quantum += 1;
    }
    let sign = sign_of(format, negative);
    if m < 1 << mantissa_bits {
        // Subnormal: exponent field 0 (only reachable at the bottom binade).
        return m | sign;
    }
    let biased = quantum + mantissa_bits + i64::from(format.bias);
    if biased >= 1 << format.exponent_bits {
        return overflow(format, negative, opts.saturate);
    }
    let magnitude = ((biased as u64) << format.mantissa_bits) | (m & ((1 << format.mantissa_bits) - 1));
    if magnitude > format.max_finite_magnitude() {
        return overflow(format, negative, opts.saturate);
    }
    magnitude | sign
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::*;

    const SAT: RoundingOptions = RoundingOptions { saturate: true, ..RoundingOptions::IEEE };

    fn f32_to(format: &FloatFormat, x: f32, opts: RoundingOptions) -> u64 {
        encode(format, Value::from_f32(x), opts)
    }

    #[test]
    fn e4m3fn_boundaries() {
        assert_eq!(f32_to(&E4M3FN, 464.0, RoundingOptions::IEEE), 0x7E);
        assert_eq!(f32_to(&E4M3FN, f32::from_bits(0x43E8_0001), RoundingOptions::IEEE), 0x7F);
        assert_eq!(f32_to(&E4M3FN, 480.0, SAT), 0x7E);
        assert_eq!(f32_to(&E4M3FN, -480.0, RoundingOptions::IEEE), 0xFF);
        assert_eq!(f32_to(&E4M3FN, 2f32.powi(-10), RoundingOptions::IEEE), 0x00);
        assert_eq!(f32_to(&E4M3FN, 3.0 * 2f32.powi(-10), RoundingOptions::IEEE), 0x02);
        assert_eq!(f32_to(&E4M3FN, -1e-10, RoundingOptions::IEEE), 0x80);
        assert_eq!(f32_to(&E4M3FNUZ, -1e-10, RoundingOptions::IEEE), 0x00);
    }

    #[test]
    fn carries_and_ties() {
        // 15.5 ulps at the top of a binade carries into the next exponent.
        assert_eq!(f32_to(&E4M3FN, 1.9375, RoundingOptions::IEEE), 0x40);
        assert_eq!(f32_to(&E5M2, 1.125, RoundingOptions::IEEE), 0x3C);
        assert_eq!(f32_to(&E5M2, 1.375, RoundingOptions::IEEE), 0x3E);
        assert_eq!(f32_to(&F16, 65520.0, RoundingOptions::IEEE), 0x7C00);
        assert_eq!(f32_to(&F16, 65519.996, RoundingOptions::IEEE), 0x7BFF);
    }

    #[test]
    fn integer_rounding() {
        let r = |x: f64, m| {
            round_to_integer(
                match Value::from_f64(x) {
                    Value::Finite(e) => e,
                    _ => unreachable!(),
                },
                m,
            )
        };
        assert_eq!(r(2.5, RoundingMode::NearestEven), Some((false, 2)));
        assert_eq!(r(3.5, RoundingMode::NearestEven), Some((false, 4)));
        assert_eq!(r(-2.5, RoundingMode::NearestTiesAway), Some((true, 3)));
        assert_eq!(r(-2.9, RoundingMode::TowardZero), Some((true, 2)));
        assert_eq!(r(0.1, RoundingMode::AwayFromZero), Some((false, 1)));
        assert_eq!(r(1e30, RoundingMode::TowardZero), None);
        assert_eq!(r(18446744073709549568.0, RoundingMode::TowardZero), Some((false, 18446744073709549568)));
    }

    #[test]
    fn e8m0_nearest_even_uses_the_code_parity() {
        let ne = RoundingOptions { mode: RoundingMode::NearestEven, saturate: true, ..RoundingOptions::IEEE };
        // 1.5 lies between 0x7F (1) and 0x80 (2); 3 between 0x80 (2) and 0x81 (4): both go to 0x80.
        assert_eq!(f32_to(&E8M0, 1.5, ne), 0x80);
        assert_eq!(f32_to(&E8M0, 3.0, ne), 0x80);
        assert_eq!(f32_to(&E8M0, 6.0, ne), 0x82);
    }

    #[test]
    fn sticky_breaks_ties() {
        // 1 + 2^-4 is a tie for E4M3 (3 fraction bits); a sticky tail pushes it up.
        let tie = Exact { negative: false, significand: 0b10001, exponent: -4, sticky: false };
        assert_eq!(encode(&E4M3FN, Value::Finite(tie), RoundingOptions::IEEE), 0x38);
        let above = Exact { sticky: true, ..tie };
        assert_eq!(encode(&E4M3FN, Value::Finite(above), RoundingOptions::IEEE), 0x39);
    }
}
