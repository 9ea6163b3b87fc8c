//! Exact decimal arithmetic on big integers: decimal -> binary, rounded once by the core (the
//! other direction is in `write.rs`).

use super::*;

pub(super) fn pow10(n: u32) -> BigUint {
    BigUint::pow(10, n)
}

/// Above this decimal exponent every format overflows, below its negative every format
/// underflows (float64 spans 4.9e-324 to 1.8e308): such values are replaced by one representative,
/// so `1e999999999` costs nothing.
pub(super) const DECIMAL_EXPONENT_CLAMP: i64 = 400;
/// Exponents in text saturate here before any arithmetic.
pub(super) const EXPONENT_TEXT_CLAMP: i64 = 1_000_000_000;
/// Significant digits kept from text; the rest only count as "nonzero or not". Every midpoint
/// between two float64 values has at most 768 significant digits, so truncating a decimal at 800
/// digits never moves it across one: rounding the truncated value with a sticky bit is exact.
pub(super) const MAX_SIGNIFICANT_DIGITS: usize = 800;

/// A huge finite value that overflows every format the same way.
pub(super) const HUGE: Exact = Exact { negative: false, significand: 1 << 63, exponent: 2000, sticky: false };
/// A tiny nonzero value that underflows every format the same way.
pub(super) const TINY: Exact = Exact { negative: false, significand: 1 << 63, exponent: -2200, sticky: true };

/// The exact value `±(digits + t) * 10^exp10` where `t` is 0 if `tail` is false and strictly
/// between 0 and 1 otherwise (digits dropped from the text), as an [`Exact`] whose 64-bit
/// significand and sticky bit round exactly like the real value. `ndigits` is the number of
/// decimal digits of `digits` (for the overflow and underflow clamps).
pub(super) fn decimal_to_exact(negative: bool, digits: &BigUint, ndigits: i64, exp10: i64, tail: bool) -> Exact {
    if digits.is_zero() && !tail {
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
        return binary_to_exact(negative, digits.mul(&pow10(exp10 as u32)), 0, tail);
    }
    let den = pow10(exp10.unsigned_abs() as u32);
    // Scale so that the quotient has at least 64 bits: then the rest, and the tail, lie below
    // the 64 bits kept. (The truncated decimal and every value up to the next 800-digit decimal
    // round the same, see MAX_SIGNIFICANT_DIGITS, so the tail only needs to make the result
    // inexact.)
    let shift = (64 + den.bits() as i64 - digits.bits() as i64 + 1).max(0);
    let scaled = digits.shl(shift as u64);
    let (q, r) = scaled.div_rem(&den);
    binary_to_exact(negative, q, -shift, tail || !r.is_zero())
}

/// `±(int + t) * 2^exp2` (t as in [`decimal_to_exact`]) cut to a 64-bit significand. A sticky
/// result always has a full 64-bit significand, so the sticky part lies below every rounding
/// position (the core's contract). Also Range's exact big values (`ops::range`).
pub(crate) fn binary_to_exact(negative: bool, int: BigUint, exp2: i64, sticky: bool) -> Exact {
    let bits = int.bits() as i64;
    if int.is_zero() {
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
        let significand = int.to_u64().unwrap_or(u64::MAX);
        return Exact { negative, significand, exponent: exp2 as i32, sticky };
    }
    let drop = (bits - 64) as u64;
    let lost = int.trailing_zeros().is_some_and(|tz| tz < drop);
    let significand = int.shr(drop).to_u64().unwrap_or(u64::MAX);
    Exact { negative, significand, exponent: (exp2 + drop as i64) as i32, sticky: sticky || lost }
}
