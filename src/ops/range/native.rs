//! The accumulate types with native arithmetic (IEEE float32 and float64), for the numpy and
//! repeated-addition profiles.

use super::*;

pub(super) trait Accum:
    Copy + PartialEq + Add<Output = Self> + Sub<Output = Self> + Mul<Output = Self> + Div<Output = Self>
{
    const DTYPE: DType;
    fn from_code(code: u64) -> Self;
    fn code(self) -> u64;
    fn is_zero(self) -> bool;
    fn to_f64(self) -> f64;

    fn value(self) -> Value {
        match Self::DTYPE.float_format() {
            Some(f) => f.decode(self.code()),
            None => unreachable!("accumulate types are floats"),
        }
    }
}

impl Accum for f32 {
    const DTYPE: DType = DType::Float;
    fn from_code(code: u64) -> Self {
        f32::from_bits(code as u32)
    }
    fn code(self) -> u64 {
        u64::from(self.to_bits())
    }
    fn is_zero(self) -> bool {
        self == 0.0
    }
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
}

impl Accum for f64 {
    const DTYPE: DType = DType::Double;
    fn from_code(code: u64) -> Self {
        f64::from_bits(code)
    }
    fn code(self) -> u64 {
        self.to_bits()
    }
    fn is_zero(self) -> bool {
        self == 0.0
    }
    fn to_f64(self) -> f64 {
        self
    }
}

/// An element in accumulate type A, rounded once by the Cast core.
pub(super) fn accum<A: Accum>(el: Element) -> Result<A> {
    Ok(A::from_code(encode_element(A::DTYPE, el, &IEEE)?))
}
