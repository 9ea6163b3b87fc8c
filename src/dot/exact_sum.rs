//! An exact sum of products: a fixed-point accumulator (a "long accumulator") wide enough for any
//! sum of up to 2^64 products of two float64 values, kept as two magnitudes (the positive and the
//! negative terms) so that adding is carry propagation only.

use crate::round::RoundingMode;
use crate::value::{Exact, Value, QUIET_NAN_PAYLOAD};

/// The weight of the accumulator's lowest bit: below the smallest product of two float64
/// subnormals (2^-1074 * 2^-1074).
const LOWEST: i32 = -2200;
/// 68 words: up to 2^2112, above the largest product of two float64 values (< 2^2048) with 64
/// bits of headroom for the count of terms.
const WORDS: usize = 68;

/// A sum of products held exactly (module docs), with the IEEE 754 bookkeeping of its special
/// terms: NaN, infinities, Inf x 0, and the signs of zero terms.
#[derive(Clone, Debug)]
pub struct ExactSum {
    positive: [u64; WORDS],
    negative: [u64; WORDS],
    nan: bool,
    infinite: [bool; 2],
    terms: usize,
    nonzero: bool,
    negative_zeros: usize,
    /// The words written since the last clear (`touched.0 > touched.1`: none), so that a sum of a
    /// few terms clears and reads a few words, not all of them.
    touched: (usize, usize),
}

impl Default for ExactSum {
    fn default() -> Self {
        ExactSum::new()
    }
}

impl ExactSum {
    /// An empty sum (its value is +0).
    #[must_use]
    pub fn new() -> ExactSum {
        ExactSum {
            positive: [0; WORDS],
            negative: [0; WORDS],
            nan: false,
            infinite: [false; 2],
            terms: 0,
            nonzero: false,
            negative_zeros: 0,
            touched: (WORDS, 0),
        }
    }

    /// Empties the sum.
    pub fn clear(&mut self) {
        let (low, high) = self.touched;
        if low <= high {
            self.positive[low..=high].fill(0);
            self.negative[low..=high].fill(0);
        }
        self.nan = false;
        self.infinite = [false; 2];
        self.terms = 0;
        self.nonzero = false;
        self.negative_zeros = 0;
        self.touched = (WORDS, 0);
    }

    /// Adds `a * b`, exactly.
    pub fn add_product(&mut self, a: &Value, b: &Value) {
        self.terms += 1;
        let negative = a.is_negative() != b.is_negative();
        match (a, b) {
            (Value::Nan { .. }, _) | (_, Value::Nan { .. }) => self.nan = true,
            (Value::Infinite { .. }, Value::Finite(x)) | (Value::Finite(x), Value::Infinite { .. }) if x.is_zero() => {
                self.nan = true; // Inf x 0: invalid
            }
            (Value::Infinite { .. }, _) | (_, Value::Infinite { .. }) => self.infinite[usize::from(negative)] = true,
            (Value::Finite(x), Value::Finite(y)) => {
                debug_assert!(!x.sticky && !y.sticky, "decoded codes are exact");
                let magnitude = u128::from(x.significand) * u128::from(y.significand);
                if magnitude == 0 {
                    self.negative_zeros += usize::from(negative);
                } else {
                    self.nonzero = true;
                    self.add_magnitude(magnitude, x.exponent + y.exponent, negative);
                }
            }
        }
    }

    /// Adds one value, exactly.
    pub fn add(&mut self, value: &Value) {
        self.add_product(value, &Value::Finite(Exact { negative: false, significand: 1, exponent: 0, sticky: false }));
    }

    fn add_magnitude(&mut self, magnitude: u128, exponent: i32, negative: bool) {
        // Every product of two float64 codes (or integers up to 64 bits) lies in range.
        let offset = u32::try_from(exponent - LOWEST).expect("a product below the accumulator's lowest bit") as usize;
        let (word, shift) = (offset / 64, (offset % 64) as u32);
        let low = magnitude << shift;
        let high = if shift == 0 { 0 } else { (magnitude >> (128 - shift)) as u64 };
        let words = if negative { &mut self.negative } else { &mut self.positive };
        let mut carry = 0u64;
        for (i, part) in [low as u64, (low >> 64) as u64, high].into_iter().enumerate() {
            let (s1, c1) = words[word + i].overflowing_add(part);
            let (s2, c2) = s1.overflowing_add(carry);
            words[word + i] = s2;
            carry = u64::from(c1) + u64::from(c2);
        }
        let mut i = word + 3;
        while carry != 0 {
            let (s, c) = words[i].overflowing_add(carry);
            words[i] = s;
            carry = u64::from(c);
            i += 1;
        }
        self.touched = (self.touched.0.min(word), self.touched.1.max(i.min(WORDS) - 1).max(word + 2));
    }

    /// The sum's exact value (a 64-bit significand with a sticky bit below it, which the rounding
    /// core rounds once), its NaN or infinity, or its zero with IEEE 754's sign for `mode`.
    #[must_use]
    pub fn value(&self, mode: RoundingMode) -> Value {
        if self.nan || (self.infinite[0] && self.infinite[1]) {
            return Value::Nan { negative: false, payload: QUIET_NAN_PAYLOAD };
        }
        if self.infinite[0] || self.infinite[1] {
            return Value::Infinite { negative: self.infinite[1] };
        }
        let (low, high) = if self.touched.0 <= self.touched.1 { self.touched } else { (0, 0) };
        let range = low..high + 1;
        let (negative, magnitude) = match compare(&self.positive[range.clone()], &self.negative[range.clone()]) {
            core::cmp::Ordering::Less => (true, difference(&self.negative, &self.positive, low, high)),
            _ => (false, difference(&self.positive, &self.negative, low, high)),
        };
        let Some(top) = range.rev().find(|&i| magnitude[i] != 0) else {
            let toward_negative = mode == RoundingMode::TowardNegative;
            let negative = if self.nonzero {
                toward_negative // cancellation
            } else {
                (self.terms > 0 && self.negative_zeros == self.terms) || (toward_negative && self.negative_zeros > 0)
            };
            return Value::Finite(Exact::zero(negative));
        };
        // The highest set bit, then the 64 bits from it down, and whether anything lies below.
        let top_bit = top * 64 + 63 - magnitude[top].leading_zeros() as usize;
        let low_bit = top_bit.saturating_sub(63);
        let mut significand = 0u64;
        for bit in (low_bit..=top_bit).rev() {
            significand = (significand << 1) | ((magnitude[bit / 64] >> (bit % 64)) & 1);
        }
        let below_word = low_bit / 64;
        let sticky = magnitude[low..below_word.max(low)].iter().any(|&w| w != 0)
            || (low_bit % 64 != 0 && magnitude[below_word] & ((1u64 << (low_bit % 64)) - 1) != 0);
        Value::Finite(Exact { negative, significand, exponent: LOWEST + low_bit as i32, sticky })
    }
}

fn compare(a: &[u64], b: &[u64]) -> core::cmp::Ordering {
    a.iter().rev().cmp(b.iter().rev())
}

/// `a - b` for `a >= b`, over words `low..=high` (the others are zero in both).
fn difference(a: &[u64; WORDS], b: &[u64; WORDS], low: usize, high: usize) -> [u64; WORDS] {
    let mut out = [0u64; WORDS];
    let mut borrow = 0u64;
    for i in low..=high {
        let (d1, b1) = a[i].overflowing_sub(b[i]);
        let (d2, b2) = d1.overflowing_sub(borrow);
        out[i] = d2;
        borrow = u64::from(b1) + u64::from(b2);
    }
    out
}
