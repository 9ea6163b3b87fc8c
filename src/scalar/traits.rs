//! What the scalar types add to make them as usable as `half::f16`: IEEE `total_cmp`, exact
//! `f16`/`bf16` conversions, arithmetic rounded once, `FromStr`, and the sealed [`Scalar`] trait;
//! and wrapping arithmetic for the small integers `I4`, `U4`, `I2`, `U2`.
//!
//! Arithmetic is computed in `f32` and rounded once to the type as [`F8E4M3FN::from_f32`] rounds
//! (ONNX `Cast` with its default `saturate=1`: a finite result beyond MAX clamps to ±MAX, in
//! E5M2 too). The `f32` result equals the exactly rounded one: both operands have at most 4
//! significant bits and an exponent well inside `f32`'s range, and rounding first to `f32`'s 24
//! bits and then to at most 4 bits is innocuous for `+ - * /` because 24 >= 2 * 4 + 2
//! (Figueroa's double-rounding condition); `%` is exact in `f32`. The unsigned power-of-two
//! E8M0 gets no arithmetic: its `from_f32` rounds up, and rounding up after a nearest-even `f32`
//! sum is not one rounding.

use super::{F4E2M1, F6E2M3, F6E3M2, F8E4M3FN, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ, F8E8M0, I2, I4, U2, U4};
use crate::alloc_prelude::*;
use crate::convert::{self, CastOptions, Element};
use crate::dtype::DType;
use crate::error::Error;
use crate::format::FloatFormat;
use crate::strings;
use crate::value::Value;
use core::cmp::Ordering;
use core::ops::{Add, AddAssign, Div, DivAssign, Mul, MulAssign, Neg, Rem, RemAssign, Sub, SubAssign};
use core::str::FromStr;

mod sealed {
    pub trait Sealed {}
}

/// Every scalar type of the crate, so generic code can name them. Sealed: only this crate's
/// types implement it.
pub trait Scalar: sealed::Sealed + Copy + Default + core::fmt::Debug + core::fmt::Display + 'static {
    /// The format descriptor (`None` for the integer types).
    const FORMAT: Option<&'static FloatFormat>;
    /// The ONNX dtype.
    const DTYPE: DType;
    /// The code.
    fn to_bits(self) -> u8;
    /// The value with these bits; bits above the type's width are ignored.
    fn from_bits(bits: u8) -> Self;
    /// The value with these bits, or an error naming the type if a bit above its width is set.
    fn try_from_bits(bits: u8) -> Result<Self, Error>;
    /// The exact value as `f32`.
    fn to_f32(self) -> f32;
    /// ONNX `Cast` from `f32` (`saturate=1` for the float types).
    fn from_f32(x: f32) -> Self;
}

/// The text quoted in an error: at most 64 characters, so an error never copies a huge input.
pub(super) fn quoted(text: &str) -> String {
    text.chars().take(64).collect()
}

/// Sort key of a code for IEEE totalOrder: the value with NaNs at the ends. A format's single
/// unsigned NaN (FNUZ 0x80, E8M0 0xFF) sorts last whatever its sign bit.
fn total_key(format: &FloatFormat, code: u8, value: f32) -> (i8, f32, u8) {
    let code = u64::from(code);
    if value.is_nan() {
        let single_nan = format.nan_code(true) == format.nan_code(false);
        let magnitude = (code & format.magnitude_mask()) as u8;
        if format.is_sign_negative(code) && !single_nan {
            // -NaN below everything; a larger payload sorts further down.
            (-1, 0.0, u8::MAX - magnitude)
        } else {
            (1, 0.0, magnitude)
        }
    } else {
        (0, value, 0)
    }
}

fn compare_keys(a: (i8, f32, u8), b: (i8, f32, u8)) -> Ordering {
    a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)).then(a.2.cmp(&b.2))
}

/// The sealed [`Scalar`] impl of one type, from its inherent items.
macro_rules! scalar_impl {
    ($name:ident, $format:expr) => {
        impl sealed::Sealed for $name {}

        impl Scalar for $name {
            const FORMAT: Option<&'static FloatFormat> = $format;
            const DTYPE: DType = $name::DTYPE;
            #[inline]
            fn to_bits(self) -> u8 {
                $name::to_bits(self)
            }
            #[inline]
            fn from_bits(bits: u8) -> Self {
                $name::from_bits(bits)
            }
            #[inline]
            fn try_from_bits(bits: u8) -> Result<Self, Error> {
                $name::try_from_bits(bits)
            }
            #[inline]
            fn to_f32(self) -> f32 {
                $name::to_f32(self)
            }
            #[inline]
            fn from_f32(x: f32) -> Self {
                $name::from_f32(x)
            }
        }
    };
}

macro_rules! float_extras {
    ($($name:ident),*) => {$(
        scalar_impl!($name, Some($name::FORMAT));

        impl $name {
            /// IEEE 754 totalOrder: -NaN < -Inf < ... < -0 < +0 < ... < +Inf < +NaN. A format
            /// with a single NaN (FNUZ's 0x80, E8M0's 0xFF) sorts it last.
            #[must_use]
            pub fn total_cmp(&self, other: &Self) -> Ordering {
                compare_keys(
                    total_key(Self::FORMAT, self.0, self.to_f32()),
                    total_key(Self::FORMAT, other.0, other.to_f32()),
                )
            }

            /// Rounds an `f16` once, exactly as [`Self::from_f32`] rounds (every `f16` is an
            /// `f32`): nearest-even (E8M0: up), saturating.
            #[must_use]
            pub fn from_f16(x: half::f16) -> Self {
                Self::from_f32(x.to_f32())
            }

            /// Rounds a `bf16` once, exactly as [`Self::from_f32`] rounds (every `bf16` is an
            /// `f32`).
            #[must_use]
            pub fn from_bf16(x: half::bf16) -> Self {
                Self::from_f32(x.to_f32())
            }

            /// ONNX `Cast` to FLOAT16: exact for every type but E8M0, whose values outside
            /// `f16`'s range round once to nearest-even: 2^16 and up become +Inf (`saturate`
            /// applies only to float8 targets), and 2^-25 and below become +0.
            #[must_use]
            pub fn to_f16(self) -> half::f16 {
                half::f16::from_bits(Self::encode_wide(DType::Float16, self) as u16)
            }

            /// ONNX `Cast` to BFLOAT16: exact for every type (E8M0's 2^-127 is a `bf16`
            /// subnormal).
            #[must_use]
            pub fn to_bf16(self) -> half::bf16 {
                half::bf16::from_bits(Self::encode_wide(DType::Bfloat16, self) as u16)
            }

            /// An exact integer rounded once, as [`Self::from_f64`] rounds (`saturate=1`).
            /// Beyond `i128` every type saturates (E8M0's MAX is 2^127), so the `f64` of such
            /// an `n` gives the same code.
            #[cfg(any(feature = "serde", feature = "num-traits"))]
            pub(super) fn from_exact_integer(n: i128) -> Self {
                Self::from_value(Value::Finite(crate::value::Exact::from_i128(n)), &CastOptions::saturating(true))
            }

            /// As [`Self::from_exact_integer`], for a `u128`.
            #[cfg(any(feature = "serde", feature = "num-traits"))]
            pub(super) fn from_exact_unsigned(n: u128) -> Self {
                match i128::try_from(n) {
                    Ok(i) => Self::from_exact_integer(i),
                    Err(_) => Self::from_f64(n as f64),
                }
            }

            #[inline]
            fn encode_wide(target: DType, x: Self) -> u64 {
                let value = Self::FORMAT.decode(u64::from(x.0));
                convert::encode_element(target, Element::Float(value), &CastOptions::default())
                    .expect("every float value converts to FLOAT16 and BFLOAT16")
            }
        }

        impl FromStr for $name {
            type Err = Error;

            /// The exact decimal value of the text (the `spec` grammar: `1.5`, `-2e-3`, `inf`,
            /// `infinity`, `nan` in any case), rounded once as [`Self::from_f32`] rounds: so
            /// `inf` saturates to MAX in a format without infinity. `nan` for a format without
            /// NaN is an error naming the type; errors quote the text.
            #[inline]
            fn from_str(text: &str) -> Result<Self, Error> {
                let fail = |why: String| Error::ParseString {
                    text: quoted(text),
                    dtype: Self::DTYPE.onnx_name(),
                    why,
                };
                let value = strings::parse_exact_value(text).map_err(|e| match e {
                    Error::ParseString { why, .. } => fail(why),
                    other => other,
                })?;
                if matches!(value, Value::Nan { .. }) && Self::FORMAT.nan_code(false).is_none() {
                    return Err(fail(format!("{} has no NaN", Self::DTYPE.onnx_name())));
                }
                Ok(Self::from_value(value, &CastOptions::saturating(true)))
            }
        }
    )*};
}

float_extras!(F8E4M3FN, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ, F8E8M0, F6E2M3, F6E3M2, F4E2M1);

/// The by-reference forms and the compound assignment of a binary operator, from its by-value
/// impl (as `half` has them).
macro_rules! forward_by_value {
    ($name:ident, $trait:ident $method:ident $assign_trait:ident $assign_method:ident $op:tt) => {
        impl $trait<&$name> for $name {
            type Output = $name;
            fn $method(self, rhs: &$name) -> $name {
                self $op *rhs
            }
        }
        impl $trait<$name> for &$name {
            type Output = $name;
            fn $method(self, rhs: $name) -> $name {
                *self $op rhs
            }
        }
        impl $trait<&$name> for &$name {
            type Output = $name;
            fn $method(self, rhs: &$name) -> $name {
                *self $op *rhs
            }
        }
        impl $assign_trait for $name {
            fn $assign_method(&mut self, rhs: $name) {
                *self = *self $op rhs;
            }
        }
        impl $assign_trait<&$name> for $name {
            fn $assign_method(&mut self, rhs: &$name) {
                *self = *self $op *rhs;
            }
        }
    };
}

macro_rules! float_arithmetic {
    ($name:ident: $($trait:ident $method:ident $assign_trait:ident $assign_method:ident $op:tt),*) => {$(
        impl $trait for $name {
            type Output = $name;
            /// Computed in `f32` and rounded once as `from_f32` rounds (ONNX's default,
            /// `saturate=1`: a finite result beyond MAX clamps to ±MAX).
            fn $method(self, rhs: $name) -> $name {
                $name::from_f32(self.to_f32() $op rhs.to_f32())
            }
        }
        forward_by_value!($name, $trait $method $assign_trait $assign_method $op);
    )*};
}

macro_rules! arithmetic {
    ($($name:ident),*) => {$(
        float_arithmetic!($name:
            Add add AddAssign add_assign +,
            Sub sub SubAssign sub_assign -,
            Mul mul MulAssign mul_assign *,
            Div div DivAssign div_assign /,
            Rem rem RemAssign rem_assign %);

        /// Flips the sign bit. In the FNUZ formats, which have no -0 and whose one NaN is the
        /// code a -0 would have, 0 stays 0 and NaN stays NaN.
        impl Neg for $name {
            type Output = $name;
            #[inline]
            fn neg(self) -> $name {
                let format = $name::FORMAT;
                let code = u64::from(self.0);
                if code & format.magnitude_mask() == 0 && format.zero_code(true) == Some(0) {
                    return self;
                }
                $name((code ^ format.sign_mask()) as u8)
            }
        }
        impl Neg for &$name {
            type Output = $name;
            #[inline]
            fn neg(self) -> $name {
                -*self
            }
        }

        /// The sum accumulated in `f32` and rounded once at the end (as `half` does); empty is
        /// zero.
        impl core::iter::Sum for $name {
            #[inline]
            fn sum<I: Iterator<Item = $name>>(iter: I) -> $name {
                $name::from_f32(iter.map($name::to_f32).sum())
            }
        }
        impl<'a> core::iter::Sum<&'a $name> for $name {
            #[inline]
            fn sum<I: Iterator<Item = &'a $name>>(iter: I) -> $name {
                iter.copied().sum()
            }
        }
        /// The product accumulated in `f32` and rounded once at the end; empty is one.
        impl core::iter::Product for $name {
            #[inline]
            fn product<I: Iterator<Item = $name>>(iter: I) -> $name {
                $name::from_f32(iter.map($name::to_f32).product())
            }
        }
        impl<'a> core::iter::Product<&'a $name> for $name {
            #[inline]
            fn product<I: Iterator<Item = &'a $name>>(iter: I) -> $name {
                iter.copied().product()
            }
        }
    )*};
}

arithmetic!(F8E4M3FN, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ, F6E2M3, F6E3M2, F4E2M1);

macro_rules! int_scalar {
    ($($name:ident),*) => {$(
        scalar_impl!($name, None);
        int_arithmetic!($name:
            Add add AddAssign add_assign +,
            Sub sub SubAssign sub_assign -,
            Mul mul MulAssign mul_assign *,
            Div div DivAssign div_assign /,
            Rem rem RemAssign rem_assign %);
    )*};
}

macro_rules! int_arithmetic {
    ($name:ident: $($trait:ident $method:ident $assign_trait:ident $assign_method:ident $op:tt),*) => {$(
        impl $trait for $name {
            type Output = $name;
            /// Computed exactly in `i64` and wrapped to the type's width (two's complement for
            /// the signed types), as ONNX integer `Cast` and [`I4::wrapping_from_i64`] wrap:
            /// `I4(7) + I4(1) == I4(-8)`. Division and remainder by zero panic, as they do for
            /// the primitive integers.
            fn $method(self, rhs: $name) -> $name {
                $name::wrapping_from_i64(i64::from(self.0) $op i64::from(rhs.0))
            }
        }
        forward_by_value!($name, $trait $method $assign_trait $assign_method $op);
    )*};
}

int_scalar!(I4, U4, I2, U2);

macro_rules! signed_int_neg {
    ($($name:ident),*) => {$(
        /// Wrapping negation: `-MIN == MIN` (`-I4(-8) == I4(-8)`), as `i8::wrapping_neg`.
        impl Neg for $name {
            type Output = $name;
            #[inline]
            fn neg(self) -> $name {
                $name::wrapping_from_i64(-i64::from(self.0))
            }
        }
        impl Neg for &$name {
            type Output = $name;
            #[inline]
            fn neg(self) -> $name {
                -*self
            }
        }
    )*};
}

signed_int_neg!(I4, I2);
