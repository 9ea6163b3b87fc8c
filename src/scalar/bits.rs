//! [`Bits`]: a scalar compared, ordered and hashed by its code.

use super::Scalar;
use core::cmp::Ordering;
use core::hash::{Hash, Hasher};

/// A scalar compared, ordered and hashed by its code, for use as a `HashMap`/`BTreeMap` key or
/// wherever `Eq` is needed. The float types themselves compare as IEEE numbers (NaN != NaN,
/// -0 == +0), so they are neither `Eq` nor `Hash`; `Bits` is.
///
/// Two `Bits` are equal exactly when their codes are: `Bits(NaN) == Bits(NaN)` for the same NaN
/// code, and `Bits(-0) != Bits(+0)`. The order is that of the codes as `u8` (all positive
/// values below all negative ones), not of the values: use `total_cmp` for that.
///
/// ```
/// use lowbit::Bits;
/// use lowbit::F8E4M3FN;
/// use std::collections::HashSet;
///
/// assert_ne!(F8E4M3FN::NAN, F8E4M3FN::NAN);
/// assert_eq!(Bits(F8E4M3FN::NAN), Bits(F8E4M3FN::NAN));
/// assert_eq!(F8E4M3FN::ZERO, F8E4M3FN::NEG_ZERO);
/// assert_ne!(Bits(F8E4M3FN::ZERO), Bits(F8E4M3FN::NEG_ZERO));
/// // Codes: +0 is 0x00, -0 is 0x80.
/// assert!(Bits(F8E4M3FN::ZERO) < Bits(F8E4M3FN::NEG_ZERO));
///
/// let set: HashSet<_> = [F8E4M3FN::ZERO, F8E4M3FN::NEG_ZERO, F8E4M3FN::ZERO].map(Bits).into();
/// assert_eq!(set.len(), 2);
/// ```
#[derive(Clone, Copy, Debug, Default)]
#[repr(transparent)]
pub struct Bits<T>(pub T);

impl<T: Scalar> From<T> for Bits<T> {
    fn from(x: T) -> Self {
        Bits(x)
    }
}

impl<T: Scalar> PartialEq for Bits<T> {
    fn eq(&self, other: &Self) -> bool {
        self.0.to_bits() == other.0.to_bits()
    }
}

impl<T: Scalar> Eq for Bits<T> {}

impl<T: Scalar> Hash for Bits<T> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.to_bits().hash(state);
    }
}

impl<T: Scalar> PartialOrd for Bits<T> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<T: Scalar> Ord for Bits<T> {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.to_bits().cmp(&other.0.to_bits())
    }
}
