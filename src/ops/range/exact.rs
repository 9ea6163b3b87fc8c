//! Exact arithmetic on binary rationals: the counts and values of `spec`, rounded once by the
//! Cast core.

use super::*;

pub(super) enum Num {
    Finite(Dyadic),
    Infinite,
    Nan,
}

pub(super) fn number(el: Element) -> Num {
    match el {
        Element::Int(i) => Num::Finite(Dyadic::int(i)),
        Element::Bool(b) => Num::Finite(Dyadic::int(i128::from(b))),
        // Decoded codes are exact: their `sticky` is always false.
        Element::Float(Value::Finite(x)) => Num::Finite(Dyadic::from_exact(&x)),
        Element::Float(Value::Infinite { .. }) => Num::Infinite,
        Element::Float(Value::Nan { .. }) => Num::Nan,
    }
}

/// An exact binary rational `mantissa * 2^exponent`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Dyadic {
    pub(super) mantissa: BigInt,
    pub(super) exponent: i64,
}

impl Dyadic {
    pub(super) fn int(i: i128) -> Dyadic {
        Dyadic { mantissa: BigInt::from(i), exponent: 0 }
    }

    pub(super) fn from_exact(x: &Exact) -> Dyadic {
        let m = BigInt::from(x.significand);
        Dyadic { mantissa: if x.negative { -m } else { m }, exponent: i64::from(x.exponent) }
    }

    pub(super) fn is_zero(&self) -> bool {
        self.mantissa == BigInt::ZERO
    }

    /// Both mantissas over the smaller exponent.
    pub(super) fn aligned(&self, other: &Dyadic) -> (BigInt, BigInt, i64) {
        let e = self.exponent.min(other.exponent);
        let widen = |x: &Dyadic| &x.mantissa << (x.exponent - e) as usize;
        (widen(self), widen(other), e)
    }

    pub(super) fn add(&self, other: &Dyadic) -> Dyadic {
        let (a, b, exponent) = self.aligned(other);
        Dyadic { mantissa: a + b, exponent }
    }

    pub(super) fn sub(&self, other: &Dyadic) -> Dyadic {
        let (a, b, exponent) = self.aligned(other);
        Dyadic { mantissa: a - b, exponent }
    }

    /// Toward zero, exactly.
    pub(super) fn trunc(&self) -> Dyadic {
        if self.exponent >= 0 {
            return self.clone();
        }
        let magnitude = self.mantissa.magnitude() >> (-self.exponent) as usize;
        Dyadic { mantissa: BigInt::from_biguint(self.mantissa.sign(), magnitude), exponent: 0 }
    }

    /// The value if it is an integer that fits `i128`.
    pub(super) fn to_i128(&self) -> Option<i128> {
        if self.exponent < 0 {
            let tz = self.mantissa.trailing_zeros().unwrap_or(u64::MAX);
            if self.is_zero() {
                return Some(0);
            }
            if tz < (-self.exponent) as u64 {
                return None;
            }
            return i128::try_from(&self.mantissa >> (-self.exponent) as usize).ok();
        }
        if self.exponent > 127 && !self.is_zero() {
            return None;
        }
        i128::try_from(&self.mantissa << self.exponent as usize).ok()
    }

    /// The exact value, as the Cast core takes it: a 64-bit significand and a sticky bit for
    /// anything below it.
    pub(super) fn value(&self) -> Value {
        big_value(&self.mantissa, self.exponent)
    }
}

/// `|a|` and `|b|` scaled to one exponent, as integers.
pub(super) fn aligned_magnitudes(a: &Dyadic, b: &Dyadic) -> (BigUint, BigUint) {
    let (x, y, _) = a.aligned(b);
    (x.into_parts().1, y.into_parts().1)
}

pub(super) fn exponent32(e: i64) -> i32 {
    // Exponents come from decoded dtypes (at most a few thousand in magnitude) plus a shift of
    // at most the bits of a product: far inside i32.
    e.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32
}

pub(super) fn small_value(negative: bool, magnitude: u128, exponent: i64) -> Value {
    if magnitude == 0 {
        return Value::Finite(Exact::zero(false));
    }
    let bits = 128 - magnitude.leading_zeros();
    let shift = bits.saturating_sub(64);
    let sticky = shift > 0 && magnitude & ((1u128 << shift) - 1) != 0;
    Value::Finite(Exact {
        negative,
        significand: (magnitude >> shift) as u64,
        exponent: exponent32(exponent + i64::from(shift)),
        sticky,
    })
}

pub(super) fn big_value(mantissa: &BigInt, exponent: i64) -> Value {
    if let Ok(m) = i128::try_from(mantissa) {
        return small_value(m < 0, m.unsigned_abs(), exponent);
    }
    let negative = mantissa.sign() == Sign::Minus;
    let magnitude = crate::strings::BigUint::from_u32_limbs(mantissa.magnitude().to_u32_digits());
    Value::Finite(crate::strings::binary_to_exact(negative, magnitude, exponent, false))
}

/// The exact quotient `num / den` (`den != 0`) as a value the Cast core rounds once.
pub(super) fn ratio(num: i128, den: i128) -> Value {
    if num == 0 {
        return Value::Finite(Exact::zero((den < 0) != (num < 0)));
    }
    let (n, d) = (BigUint::from(num.unsigned_abs()), BigUint::from(den.unsigned_abs()));
    // Enough quotient bits that the significand is full and the rest is only a sticky bit.
    let shift = (66 + d.bits()).saturating_sub(n.bits());
    let scaled = n << shift as usize;
    let q = &scaled / &d;
    let remainder = &scaled % &d != BigUint::ZERO;
    match big_value(&BigInt::from(q), -(shift as i64)) {
        Value::Finite(x) => {
            Value::Finite(Exact { negative: (num < 0) != (den < 0), sticky: x.sticky || remainder, ..x })
        }
        other => other,
    }
}

/// `start + i * delta` for i = 0, 1, ..., exactly: both over one exponent, so that each term is
/// an integer times `2^exponent`; in i128 while that fits.
pub(super) struct Progression {
    pub(super) start: BigInt,
    pub(super) delta: BigInt,
    pub(super) small: Option<(i128, i128)>,
    pub(super) exponent: i64,
}

impl Progression {
    pub(super) fn new(start: &Dyadic, delta: &Dyadic) -> Progression {
        let (a, b, exponent) = start.aligned(delta);
        let small = i128::try_from(&a).ok().zip(i128::try_from(&b).ok());
        Progression { start: a, delta: b, small, exponent }
    }

    pub(super) fn term(&self, i: u64) -> Dyadic {
        let small = self.small.and_then(|(a, b)| b.checked_mul(i128::from(i)).and_then(|p| a.checked_add(p)));
        let mantissa = match small {
            Some(m) => BigInt::from(m),
            None => &self.start + &self.delta * i,
        };
        Dyadic { mantissa, exponent: self.exponent }
    }
}
