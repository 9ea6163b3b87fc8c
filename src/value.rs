//! The exact value every conversion goes through: a sign, an integer significand and a binary
//! exponent (minifloat's idea). Decoding a code into a [`Value`] is exact for every format lowbit
//! knows, so a conversion rounds exactly once: in [`crate::round`].

/// A finite value `(-1)^negative * (significand + t) * 2^exponent`, where `t = 0` if `sticky` is
/// false and `0 < t < 1` otherwise.
///
/// `sticky` lets a producer that cannot hold every bit (a long decimal string, say) hand over a
/// truncated significand and still be rounded once and correctly: it means "there is more, strictly
/// between this value and the next significand". The rounding core normalises the significand
/// to 64 bits first, so the dropped part always lies below the rounding position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Exact {
    /// The sign (zeros carry one too).
    pub negative: bool,
    /// The significand: the value is `significand * 2^exponent`.
    pub significand: u64,
    /// The power of two the significand is scaled by.
    pub exponent: i32,
    /// Nonzero bits were dropped below the significand's last bit (see above).
    pub sticky: bool,
}

impl Exact {
    /// Zero with the given sign.
    #[must_use]
    pub const fn zero(negative: bool) -> Exact {
        Exact { negative, significand: 0, exponent: 0, sticky: false }
    }

    /// The exact value of an integer.
    #[must_use]
    pub const fn from_i128(i: i128) -> Exact {
        // Every integer lowbit handles (int64, uint64) has a magnitude below 2^64; wider
        // magnitudes are clamped by the caller's range checks before they get here.
        let mag = i.unsigned_abs();
        debug_assert!(mag <= u64::MAX as u128);
        Exact { negative: i < 0, significand: mag as u64, exponent: 0, sticky: false }
    }

    /// True for +0 and -0.
    #[must_use]
    pub const fn is_zero(&self) -> bool {
        self.significand == 0 && !self.sticky
    }
}

/// Any value a code of a floating format can hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Value {
    /// A NaN. `payload` is the source's fraction field left-aligned to bit 63 (bit 63 is the IEEE
    /// quiet bit). Formats that carry no payload decode to the plain quiet NaN `1 << 63`.
    Nan {
        /// The sign bit.
        negative: bool,
        /// The payload, left-aligned to bit 63.
        payload: u64,
    },
    /// An infinity.
    Infinite {
        /// The sign.
        negative: bool,
    },
    /// A finite value, zero included, exactly.
    Finite(Exact),
}

/// The payload of a plain quiet NaN: only the quiet bit.
pub const QUIET_NAN_PAYLOAD: u64 = 1 << 63;

impl Value {
    /// The sign bit.
    #[must_use]
    pub const fn is_negative(&self) -> bool {
        match *self {
            Value::Nan { negative, .. } | Value::Infinite { negative } => negative,
            Value::Finite(e) => e.negative,
        }
    }
}
