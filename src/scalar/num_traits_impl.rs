//! The `num-traits` feature: `num_traits` impls for the scalar types.
//!
//! Every trait method that makes a value rounds exactly as the type's `from_f32`/`from_f64` do:
//! once, to nearest-even (E8M0: up), with ONNX `Cast`'s default `saturate=1`. So in a format
//! without infinity `Float::infinity()` is `from_f32(f32::INFINITY)`, which is MAX (E5M2's is
//! its +Inf), and `Float::nan()` of float4/float6 (which have no NaN) is `from_f32(f32::NAN)`:
//! +6 for `F4E2M1`, -0 for the float6 types (the onnx reference's choice); `is_nan()` of it is
//! false. As with the crate's `+ - * /`, an infinite `f32` result becomes ±MAX even in E5M2
//! (`saturate=1` sends ±Inf to ±MAX): `Float::recip(+0)` is MAX. The operations that only move
//! the sign or pick an operand (`abs`, `copysign`, `min`, `max`, `Neg`), and `floor`, `ceil`,
//! `round`, `trunc` of ±Inf or NaN, return the code they were given, infinities included.
//!
//! | types | traits |
//! |---|---|
//! | float8 (but E8M0), float6, float4 | `Zero`, `One`, `Num`, `Signed`, `Bounded`, `ToPrimitive`, `FromPrimitive`, `NumCast`, `FloatCore`, `Float`, `TotalOrder` |
//! | `F8E8M0` | `Bounded`, `ToPrimitive`, `FromPrimitive`, `NumCast`, `TotalOrder` |
//! | `I4`, `U4`, `I2`, `U2` | `Zero`, `One`, `Num`, `Bounded`, `ToPrimitive`, `FromPrimitive`, `NumCast`; `Signed` for `I4`, `I2` |
//!
//! E8M0 (unsigned powers of two, no zero) has no zero and no arithmetic, so none of the traits
//! built on `Zero`/`One` (`Num`, `Signed`, `Float`, `FloatCore`) apply to it.
//!
//! The `Float` math functions (`sqrt`, `exp`, `sin`, `powf`, ...) compute the `f32` function of
//! the exact `f32` value and round that result once to the type. `floor`, `ceil`, `round`,
//! `trunc`, `fract`, `abs`, `min`, `max`, `sqrt` and the basic operations are exact or correctly
//! rounded that way; the transcendental ones are as accurate as std's `f32` functions (not
//! guaranteed correctly rounded), so a true result within an `f32` ulp of a midpoint between
//! two neighbours of the narrow type may round to the other one. `mul_add` is `f32::mul_add`
//! (one `f32` rounding) rounded again to the type.
//!
//! `ToPrimitive` behaves as it does for the value as an `f32` (truncation toward zero, `None`
//! out of range or for NaN). For the small integers, `FromPrimitive`/`NumCast` round a float
//! to the nearest integer, ties to even (as their `from_f32` does, and unlike the truncation of
//! `num_traits` for `i8`), and give `None` when the result is outside `MIN..=MAX` or the input
//! is NaN or infinite: the `num_traits` convention, where `from_f32` would wrap.
//!
//! ```
//! use lowbit::F8E4M3FN;
//! use num_traits::{Float, FromPrimitive, NumCast, ToPrimitive};
//!
//! // 2.25 = 2^1 * (1 + 1/8) is a value of E4M3 (3 mantissa bits); sqrt(2.25) = 1.5 exactly.
//! let x = F8E4M3FN::from_f32(2.25);
//! assert_eq!(x.sqrt().to_f32(), 1.5);
//! // E4M3FN has no infinity: infinity() is from_f32(inf), which saturates to MAX = 448.
//! assert_eq!(<F8E4M3FN as Float>::infinity().to_f32(), 448.0);
//! // 1000 rounds (saturating) to 448.
//! assert_eq!(F8E4M3FN::from_i32(1000).unwrap().to_f32(), 448.0);
//! assert_eq!(<F8E4M3FN as NumCast>::from(3u8).unwrap().to_f32(), 3.0);
//! assert_eq!(F8E4M3FN::from_f32(-2.5).to_i32(), Some(-2));
//! ```

use super::traits::quoted;
use super::{F4E2M1, F6E2M3, F6E3M2, F8E4M3FN, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ, F8E8M0, I2, I4, U2, U4};
use crate::alloc_prelude::*;
use crate::error::Error;
use crate::round::{self, RoundingMode};
use crate::value::Value;
use core::cmp::Ordering;
use core::num::FpCategory;
use num_traits::float::{FloatCore, TotalOrder};
use num_traits::{Bounded, Float, FromPrimitive, Num, One, Signed, ToPrimitive, Zero};

/// 2^53: from here on an `f64` may have dropped low bits of the integer it came from.
const F64_EXACT_INTEGERS: f64 = 9_007_199_254_740_992.0;

/// The error of `from_str_radix` with a radix it does not take.
fn radix_error(text: &str, dtype: &'static str, radix: u32, supported: &str) -> Error {
    Error::ParseString { text: quoted(text), dtype, why: format!("radix {radix} is not supported ({supported})") }
}

/// `x` rounded to the nearest integer, ties to even, by the rounding core; `None` for NaN, ±Inf
/// and magnitudes beyond 64 bits.
fn nearest_integer(x: f64) -> Option<i128> {
    match Value::from_f64(x) {
        Value::Finite(e) => round::round_to_integer(e, RoundingMode::NearestEven).map(|(negative, magnitude)| {
            if negative {
                -i128::from(magnitude)
            } else {
                i128::from(magnitude)
            }
        }),
        _ => None,
    }
}

/// `ToPrimitive`, `FromPrimitive`, `NumCast`, `Bounded` and `TotalOrder` of a float type.
macro_rules! float_conversions {
    ($($name:ident),*) => {$(
        /// As for the value as an `f32` (every value of the type is one): truncation toward
        /// zero, `None` for NaN, infinities and values outside the target's range.
        impl ToPrimitive for $name {
            fn to_i64(&self) -> Option<i64> {
                $name::to_f32(*self).to_i64()
            }
            fn to_u64(&self) -> Option<u64> {
                $name::to_f32(*self).to_u64()
            }
            fn to_i128(&self) -> Option<i128> {
                $name::to_f32(*self).to_i128()
            }
            fn to_u128(&self) -> Option<u128> {
                $name::to_f32(*self).to_u128()
            }
            fn to_f32(&self) -> Option<f32> {
                Some($name::to_f32(*self))
            }
            fn to_f64(&self) -> Option<f64> {
                Some($name::to_f64(*self))
            }
        }

        /// Always `Some`: the value rounded once as `from_f64` rounds (nearest-even, E8M0 up,
        /// `saturate=1`: beyond the range gives ±MAX, and NaN gives what `from_f32(NaN)`
        /// gives). Integers are rounded from their exact value, never through a float.
        impl FromPrimitive for $name {
            fn from_i64(n: i64) -> Option<Self> {
                Some(Self::from_exact_integer(n.into()))
            }
            fn from_u64(n: u64) -> Option<Self> {
                Some(Self::from_exact_integer(n.into()))
            }
            fn from_i128(n: i128) -> Option<Self> {
                Some(Self::from_exact_integer(n))
            }
            fn from_u128(n: u128) -> Option<Self> {
                Some(Self::from_exact_unsigned(n))
            }
            fn from_f32(x: f32) -> Option<Self> {
                Some($name::from_f32(x))
            }
            fn from_f64(x: f64) -> Option<Self> {
                Some($name::from_f64(x))
            }
        }

        /// `n` as `f64`, rounded once as `from_f64` rounds; an integer beyond 2^53 (where the
        /// `f64` may be inexact) is rounded from its exact value. `None` only when `n` has no
        /// `f64` value.
        impl num_traits::NumCast for $name {
            fn from<T: ToPrimitive>(n: T) -> Option<Self> {
                let x = n.to_f64()?;
                if x.is_finite() && x.abs() >= F64_EXACT_INTEGERS {
                    if let Some(i) = n.to_i128() {
                        return Some(Self::from_exact_integer(i));
                    }
                    if let Some(u) = n.to_u128() {
                        return Some(Self::from_exact_unsigned(u));
                    }
                }
                Some($name::from_f64(x))
            }
        }

        /// The finite extremes, `MIN` and `MAX`, as `f32`'s `Bounded` (E8M0's MIN is its
        /// smallest value, 2^-127).
        impl Bounded for $name {
            fn min_value() -> Self {
                $name::MIN
            }
            fn max_value() -> Self {
                $name::MAX
            }
        }

        /// IEEE totalOrder, the inherent `total_cmp`.
        impl TotalOrder for $name {
            fn total_cmp(&self, other: &Self) -> Ordering {
                $name::total_cmp(self, other)
            }
        }
    )*};
}

float_conversions!(F8E4M3FN, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ, F8E8M0, F6E2M3, F6E3M2, F4E2M1);

/// A unary `f32` function of the exact value, rounded once to the type.
macro_rules! via_f32 {
    ($name:ident: $($f:ident)*) => {$(
        fn $f(self) -> Self {
            $name::from_f32(<f32 as Float>::$f($name::to_f32(self)))
        }
    )*};
}

/// The methods `FloatCore` and `Float` share.
macro_rules! shared_float_methods {
    ($name:ident) => {
        /// +Inf where the format has it (E5M2), else `from_f32(f32::INFINITY)`: MAX.
        fn infinity() -> Self {
            match $name::FORMAT.infinity_code(false) {
                Some(code) => $name::from_bits(code as u8),
                None => $name::from_f32(f32::INFINITY),
            }
        }
        /// -Inf where the format has it (E5M2), else `from_f32(f32::NEG_INFINITY)`: MIN.
        fn neg_infinity() -> Self {
            match $name::FORMAT.infinity_code(true) {
                Some(code) => $name::from_bits(code as u8),
                None => $name::from_f32(f32::NEG_INFINITY),
            }
        }
        /// `from_f32(f32::NAN)`: the type's NaN; for float4 +6 and for float6 -0, which have
        /// no NaN (see the module docs).
        fn nan() -> Self {
            $name::from_f32(f32::NAN)
        }
        /// `from_f32(-0.0)`: +0 in the FNUZ formats, which have no -0.
        fn neg_zero() -> Self {
            $name::from_f32(-0.0)
        }
        fn min_value() -> Self {
            $name::MIN
        }
        /// The smallest positive normal value, `MIN_POSITIVE`.
        fn min_positive_value() -> Self {
            $name::MIN_POSITIVE
        }
        fn epsilon() -> Self {
            $name::EPSILON
        }
        fn max_value() -> Self {
            $name::MAX
        }
        fn is_nan(self) -> bool {
            $name::is_nan(self)
        }
        fn is_infinite(self) -> bool {
            $name::is_infinite(self)
        }
        fn is_finite(self) -> bool {
            $name::is_finite(self)
        }
        fn is_normal(self) -> bool {
            $name::is_normal(self)
        }
        fn is_subnormal(self) -> bool {
            $name::is_subnormal(self)
        }
        fn classify(self) -> FpCategory {
            $name::classify(self)
        }
        fn is_sign_positive(self) -> bool {
            $name::is_sign_positive(self)
        }
        fn is_sign_negative(self) -> bool {
            $name::is_sign_negative(self)
        }
        /// Clears the sign; an FNUZ NaN stays NaN (see `Neg`).
        fn abs(self) -> Self {
            if $name::is_sign_negative(self) { -self } else { self }
        }
        /// ±1 by the sign bit (±0 too, as `f32::signum`); NaN stays NaN.
        fn signum(self) -> Self {
            $name::from_f32($name::to_f32(self).signum())
        }
        /// The smaller operand, as `f32::min`: a NaN operand is ignored.
        fn min(self, other: Self) -> Self {
            let (a, b) = ($name::to_f32(self), $name::to_f32(other));
            if a.is_nan() || b < a { other } else { self }
        }
        /// The larger operand, as `f32::max`: a NaN operand is ignored.
        fn max(self, other: Self) -> Self {
            let (a, b) = ($name::to_f32(self), $name::to_f32(other));
            if a.is_nan() || b > a { other } else { self }
        }
        /// Exact; ±Inf and NaN are returned as they are (as `f32::floor` does).
        fn floor(self) -> Self {
            if $name::is_finite(self) { $name::from_f32(crate::fmath::floor($name::to_f32(self))) } else { self }
        }
        /// Exact; ±Inf and NaN are returned as they are.
        fn ceil(self) -> Self {
            if $name::is_finite(self) { $name::from_f32(crate::fmath::ceil($name::to_f32(self))) } else { self }
        }
        /// Exact (half away from zero, as `f32::round`); ±Inf and NaN are returned as they are.
        fn round(self) -> Self {
            if $name::is_finite(self) { $name::from_f32(crate::fmath::round($name::to_f32(self))) } else { self }
        }
        /// Exact; ±Inf and NaN are returned as they are.
        fn trunc(self) -> Self {
            if $name::is_finite(self) { $name::from_f32(crate::fmath::trunc($name::to_f32(self))) } else { self }
        }
        /// `f32::powi` rounded once to the type.
        fn powi(self, n: i32) -> Self {
            $name::from_f32(FloatCore::powi($name::to_f32(self), n))
        }
        /// `(mantissa, exponent, sign)` with `mantissa * 2^exponent * sign` the value: a normal
        /// value's mantissa has the format's `mantissa_bits + 1` bits; subnormals share the
        /// smallest normal exponent. Zero gives mantissa 0; NaN and ±Inf give `f32`'s
        /// decoding of the value as an `f32`.
        fn integer_decode(self) -> (u64, i16, i8) {
            integer_decode(
                $name::to_f32(self),
                $name::MIN_POSITIVE.to_f32(),
                $name::FORMAT.mantissa_bits as i32,
            )
        }
        via_f32!($name: fract recip to_degrees to_radians);
    };
}

/// See `integer_decode` in [`shared_float_methods`].
fn integer_decode(x: f32, min_positive_normal: f32, mantissa_bits: i32) -> (u64, i16, i8) {
    if !x.is_finite() {
        return FloatCore::integer_decode(x);
    }
    let sign = if x.is_sign_negative() { -1 } else { 1 };
    if x == 0.0 {
        return (0, 0, sign);
    }
    let magnitude = f64::from(x.abs());
    let floor_log2 = |y: f64| ((y.to_bits() >> 52) as i32) - 1023;
    let exponent = floor_log2(magnitude).max(floor_log2(f64::from(min_positive_normal))) - mantissa_bits;
    // The value is an integer multiple of 2^exponent below 2^(mantissa_bits + 1): exact.
    let mantissa = magnitude * crate::fmath::pow2_f64(-exponent);
    (mantissa as u64, exponent as i16, sign)
}

macro_rules! float_num {
    ($($name:ident),*) => {$(
        impl Zero for $name {
            fn zero() -> Self {
                $name::ZERO
            }
            /// True for +0 and -0.
            fn is_zero(&self) -> bool {
                $name::to_f32(*self) == 0.0
            }
        }

        impl One for $name {
            fn one() -> Self {
                $name::ONE
            }
        }

        /// `from_str_radix` with radix 10 is `FromStr` (the exact decimal rounded once as
        /// `from_f32` rounds, ONNX `saturate=1`); any other radix is an error.
        impl Num for $name {
            type FromStrRadixErr = Error;
            fn from_str_radix(text: &str, radix: u32) -> Result<Self, Error> {
                if radix != 10 {
                    return Err(radix_error(text, $name::DTYPE.onnx_name(), radix, "only 10"));
                }
                text.parse()
            }
        }

        /// As `f32`'s `Signed`; `signum` of ±0 is ±1 (of an FNUZ zero, +1).
        impl Signed for $name {
            fn abs(&self) -> Self {
                <$name as Float>::abs(*self)
            }
            /// `self - other` if it is positive, else 0 (NaN stays NaN).
            fn abs_sub(&self, other: &Self) -> Self {
                <$name as Float>::abs_sub(*self, *other)
            }
            fn signum(&self) -> Self {
                <$name as Float>::signum(*self)
            }
            /// Sign bit clear (+0 included).
            fn is_positive(&self) -> bool {
                $name::is_sign_positive(*self)
            }
            /// Sign bit set (-0 included; the FNUZ NaN, 0x80, counts as negative).
            fn is_negative(&self) -> bool {
                $name::is_sign_negative(*self)
            }
        }

        /// Every value made is `from_f32` of the `f32` result: rounded once, ONNX
        /// `saturate=1` (see the module docs for the exceptions that keep a code as it is).
        impl FloatCore for $name {
            shared_float_methods!($name);
        }

        /// The math functions compute the `f32` function of the exact value and round its
        /// result once to the type as `from_f32` does (ONNX `saturate=1`: an infinite result is
        /// ±MAX); see the module docs for the accuracy and for the methods that keep a code.
        impl Float for $name {
            shared_float_methods!($name);
            via_f32!($name: sqrt exp exp2 ln log2 log10 cbrt sin cos tan asin acos atan exp_m1
                ln_1p sinh cosh tanh asinh acosh atanh);
            fn mul_add(self, a: Self, b: Self) -> Self {
                $name::from_f32($name::to_f32(self).mul_add($name::to_f32(a), $name::to_f32(b)))
            }
            fn powf(self, n: Self) -> Self {
                $name::from_f32($name::to_f32(self).powf($name::to_f32(n)))
            }
            fn log(self, base: Self) -> Self {
                $name::from_f32($name::to_f32(self).log($name::to_f32(base)))
            }
            fn hypot(self, other: Self) -> Self {
                $name::from_f32($name::to_f32(self).hypot($name::to_f32(other)))
            }
            fn atan2(self, other: Self) -> Self {
                $name::from_f32($name::to_f32(self).atan2($name::to_f32(other)))
            }
            fn sin_cos(self) -> (Self, Self) {
                let (sin, cos) = $name::to_f32(self).sin_cos();
                ($name::from_f32(sin), $name::from_f32(cos))
            }
            /// `self` with the sign bit of `sign`, by negation (see `Neg`: an FNUZ zero and NaN
            /// keep their code); ±Inf stays ±Inf.
            fn copysign(self, sign: Self) -> Self {
                if $name::is_sign_negative(self) == $name::is_sign_negative(sign) { self } else { -self }
            }
            /// `self - other` if it is positive, else 0; NaN stays NaN.
            fn abs_sub(self, other: Self) -> Self {
                let (a, b) = ($name::to_f32(self), $name::to_f32(other));
                $name::from_f32(if a <= b { 0.0 } else { a - b })
            }
        }
    )*};
}

float_num!(F8E4M3FN, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ, F6E2M3, F6E3M2, F4E2M1);

/// The traits of the small integers.
macro_rules! int_traits {
    ($($name:ident),*) => {$(
        impl Zero for $name {
            fn zero() -> Self {
                $name::ZERO
            }
            fn is_zero(&self) -> bool {
                *self == $name::ZERO
            }
        }

        impl One for $name {
            fn one() -> Self {
                $name::ONE
            }
        }

        /// `from_str_radix` takes radices 2 to 36 as `i64::from_str_radix` does; a value
        /// outside `MIN..=MAX` is an error (not wrapped).
        impl Num for $name {
            type FromStrRadixErr = Error;
            fn from_str_radix(text: &str, radix: u32) -> Result<Self, Error> {
                let dtype = $name::DTYPE.onnx_name();
                if !(2..=36).contains(&radix) {
                    return Err(radix_error(text, dtype, radix, "2 to 36"));
                }
                let fail = |why: String| Error::ParseString { text: quoted(text), dtype, why };
                let wide = i64::from_str_radix(text, radix).map_err(|e| fail(e.to_string()))?;
                <$name as FromPrimitive>::from_i64(wide)
                    .ok_or_else(|| fail(format!("{wide} is outside {}..={}", $name::MIN, $name::MAX)))
            }
        }

        impl Bounded for $name {
            fn min_value() -> Self {
                $name::MIN
            }
            fn max_value() -> Self {
                $name::MAX
            }
        }

        impl ToPrimitive for $name {
            fn to_i64(&self) -> Option<i64> {
                Some(i64::from(self.0))
            }
            fn to_u64(&self) -> Option<u64> {
                u64::try_from(self.0).ok()
            }
        }

        /// `None` outside `MIN..=MAX` (the `num_traits` convention; `from_f32` would wrap).
        /// Floats round to the nearest integer, ties to even, as `from_f32` does; NaN and
        /// ±Inf give `None`.
        impl FromPrimitive for $name {
            fn from_i64(n: i64) -> Option<Self> {
                let inside = i64::from($name::MIN.0) <= n && n <= i64::from($name::MAX.0);
                inside.then(|| $name::wrapping_from_i64(n))
            }
            fn from_u64(n: u64) -> Option<Self> {
                <$name as FromPrimitive>::from_i64(i64::try_from(n).ok()?)
            }
            fn from_f32(x: f32) -> Option<Self> {
                <$name as FromPrimitive>::from_f64(f64::from(x))
            }
            fn from_f64(x: f64) -> Option<Self> {
                <$name as FromPrimitive>::from_i64(i64::try_from(nearest_integer(x)?).ok()?)
            }
        }

        /// An integer `n` exactly (`None` outside `MIN..=MAX`); a float rounded to nearest,
        /// ties to even, as [`FromPrimitive`] does.
        impl num_traits::NumCast for $name {
            fn from<T: ToPrimitive>(n: T) -> Option<Self> {
                let x = n.to_f64()?;
                if crate::fmath::trunc(x) == x {
                    // An integer (or a float holding one): exact through i64 where it fits.
                    if let Some(i) = n.to_i64() {
                        return <$name as FromPrimitive>::from_i64(i);
                    }
                }
                <$name as FromPrimitive>::from_f64(x)
            }
        }
    )*};
}

int_traits!(I4, U4, I2, U2);

macro_rules! signed_int_traits {
    ($($name:ident),*) => {$(
        /// As the primitive integers' `Signed`, with wrapping: `abs(MIN) == MIN`.
        impl Signed for $name {
            fn abs(&self) -> Self {
                if self.0 < 0 { -*self } else { *self }
            }
            fn abs_sub(&self, other: &Self) -> Self {
                if *self <= *other { $name::ZERO } else { *self - *other }
            }
            fn signum(&self) -> Self {
                $name::wrapping_from_i64(i64::from(self.0.signum()))
            }
            fn is_positive(&self) -> bool {
                self.0 > 0
            }
            fn is_negative(&self) -> bool {
                self.0 < 0
            }
        }
    )*};
}

signed_int_traits!(I4, I2);
