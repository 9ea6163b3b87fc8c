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

/// A signed big integer: a sign and a magnitude (zero is never negative).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Signed {
    negative: bool,
    magnitude: BigUint,
}

impl Signed {
    fn new(negative: bool, magnitude: BigUint) -> Signed {
        Signed { negative: negative && !magnitude.is_zero(), magnitude }
    }

    pub(super) fn from_i128(i: i128) -> Signed {
        Signed::new(i < 0, BigUint::from_u128(i.unsigned_abs()))
    }

    fn is_zero(&self) -> bool {
        self.magnitude.is_zero()
    }

    /// -1, 0 or 1.
    pub(super) fn signum(&self) -> i8 {
        if self.is_zero() {
            0
        } else if self.negative {
            -1
        } else {
            1
        }
    }

    fn shl(&self, n: u64) -> Signed {
        Signed::new(self.negative, self.magnitude.shl(n))
    }

    fn add(&self, other: &Signed) -> Signed {
        if self.negative == other.negative {
            return Signed::new(self.negative, self.magnitude.add(&other.magnitude));
        }
        // Opposite signs: the larger magnitude keeps its sign.
        let negative = if self.magnitude >= other.magnitude { self.negative } else { other.negative };
        Signed::new(negative, self.magnitude.abs_diff(&other.magnitude))
    }

    fn neg(&self) -> Signed {
        Signed::new(!self.negative, self.magnitude.clone())
    }

    fn mul_u64(&self, m: u64) -> Signed {
        Signed::new(self.negative, self.magnitude.mul(&BigUint::from(m)))
    }

    /// The value if it fits `i128`.
    pub(super) fn to_i128(&self) -> Option<i128> {
        let m = self.magnitude.to_u128()?;
        if self.negative {
            0i128.checked_sub_unsigned(m)
        } else {
            i128::try_from(m).ok()
        }
    }
}

/// An exact binary rational `mantissa * 2^exponent`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Dyadic {
    pub(super) mantissa: Signed,
    pub(super) exponent: i64,
}

impl Dyadic {
    pub(super) fn int(i: i128) -> Dyadic {
        Dyadic { mantissa: Signed::from_i128(i), exponent: 0 }
    }

    pub(super) fn from_exact(x: &Exact) -> Dyadic {
        Dyadic { mantissa: Signed::new(x.negative, BigUint::from(x.significand)), exponent: i64::from(x.exponent) }
    }

    pub(super) fn is_zero(&self) -> bool {
        self.mantissa.is_zero()
    }

    /// Both mantissas over the smaller exponent.
    pub(super) fn aligned(&self, other: &Dyadic) -> (Signed, Signed, i64) {
        let e = self.exponent.min(other.exponent);
        let widen = |x: &Dyadic| x.mantissa.shl((x.exponent - e) as u64);
        (widen(self), widen(other), e)
    }

    pub(super) fn add(&self, other: &Dyadic) -> Dyadic {
        let (a, b, exponent) = self.aligned(other);
        Dyadic { mantissa: a.add(&b), exponent }
    }

    pub(super) fn sub(&self, other: &Dyadic) -> Dyadic {
        let (a, b, exponent) = self.aligned(other);
        Dyadic { mantissa: a.add(&b.neg()), exponent }
    }

    /// Toward zero, exactly.
    pub(super) fn trunc(&self) -> Dyadic {
        if self.exponent >= 0 {
            return self.clone();
        }
        let magnitude = self.mantissa.magnitude.shr(self.exponent.unsigned_abs());
        Dyadic { mantissa: Signed::new(self.mantissa.negative, magnitude), exponent: 0 }
    }

    /// The value if it is an integer that fits `i128`.
    pub(super) fn to_i128(&self) -> Option<i128> {
        if self.is_zero() {
            return Some(0);
        }
        if self.exponent < 0 {
            let shift = self.exponent.unsigned_abs();
            if self.mantissa.magnitude.trailing_zeros().unwrap_or(u64::MAX) < shift {
                return None;
            }
            return Signed::new(self.mantissa.negative, self.mantissa.magnitude.shr(shift)).to_i128();
        }
        if self.exponent > 127 {
            return None;
        }
        self.mantissa.shl(self.exponent as u64).to_i128()
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
    (x.magnitude, y.magnitude)
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

pub(super) fn big_value(mantissa: &Signed, exponent: i64) -> Value {
    if let Some(m) = mantissa.magnitude.to_u128() {
        return small_value(mantissa.negative, m, exponent);
    }
    Value::Finite(crate::strings::binary_to_exact(mantissa.negative, mantissa.magnitude.clone(), exponent, false))
}

/// The exact quotient `num / den` (`den != 0`) as a value the Cast core rounds once.
pub(super) fn ratio(num: i128, den: i128) -> Value {
    if num == 0 {
        return Value::Finite(Exact::zero((den < 0) != (num < 0)));
    }
    let (n, d) = (BigUint::from_u128(num.unsigned_abs()), BigUint::from_u128(den.unsigned_abs()));
    // Enough quotient bits that the significand is full and the rest is only a sticky bit.
    let shift = (66 + d.bits()).saturating_sub(n.bits());
    let (q, r) = n.shl(shift).div_rem(&d);
    let remainder = !r.is_zero();
    match big_value(&Signed::new(false, q), -(shift as i64)) {
        Value::Finite(x) => {
            Value::Finite(Exact { negative: (num < 0) != (den < 0), sticky: x.sticky || remainder, ..x })
        }
        other => other,
    }
}

/// `start + i * delta` for i = 0, 1, ..., exactly: both over one exponent, so that each term is
/// an integer times `2^exponent`; in i128 while that fits.
pub(super) struct Progression {
    pub(super) start: Signed,
    pub(super) delta: Signed,
    pub(super) small: Option<(i128, i128)>,
    pub(super) exponent: i64,
}

impl Progression {
    pub(super) fn new(start: &Dyadic, delta: &Dyadic) -> Progression {
        let (a, b, exponent) = start.aligned(delta);
        let small = a.to_i128().zip(b.to_i128());
        Progression { start: a, delta: b, small, exponent }
    }

    pub(super) fn term(&self, i: u64) -> Dyadic {
        let small = self.small.and_then(|(a, b)| b.checked_mul(i128::from(i)).and_then(|p| a.checked_add(p)));
        let mantissa = match small {
            Some(m) => Signed::from_i128(m),
            None => self.start.add(&self.delta.mul_u64(i)),
        };
        Dyadic { mantissa, exponent: self.exponent }
    }
}
