//! The `serde` feature: the scalar types serialize as their value (`f32` for the float types,
//! `i8` for `I4`/`I2`, `u8` for `U4`/`U2`); [`serde_bits`] serializes the code instead.
//!
//! E8M0 serializes as `f64` (its shortest text is exact for a correctly rounding reader).
//!
//! Deserializing a float type rounds the number it is given once, as `from_f64` rounds
//! (nearest-even, ONNX's default `saturate=1`); an integer is rounded from its exact value.
//! E8M0 rounds up, as its `from_f64` does, except that a float number within half an `f32` ulp
//! of a power of two reads as that power: a decimal text of 2^k is seldom read back exactly
//! (serde_json's default number parser reads 22 of E8M0's 255 powers of two, 2^-114 for one,
//! an `f64` ulp or two above; an `f32` text such as `5.877472e-39` for 2^-127 lies 2^-25
//! above), and rounding up would turn each of those into 2^(k+1). So every finite E8M0 code
//! survives a round trip through its text. For the other types any `f64` within an `f32` ulp
//! of a value of the type rounds to nearest back to it.
//!
//! A NaN for a type without NaN (float4, float6) is an error naming the type. A small integer
//! outside `MIN..=MAX` is an error naming the type (never wrapped).
//!
//! A format's NaN and infinities serialize as `f32` NaN and infinities, which some formats
//! cannot write (serde_json writes `null`, which does not read back): use [`serde_bits`] to
//! keep every code.
//!
//! ```
//! use lowbit::{F4E2M1, F8E4M3FN, I4};
//!
//! assert_eq!(serde_json::to_string(&F8E4M3FN::from_f32(1.5)).unwrap(), "1.5");
//! // 0.3 lies between the E4M3 neighbours 0.28125 (9 * 2^-5) and 0.3125 (10 * 2^-5), nearer
//! // 0.3125 (0.0125 away, against 0.01875).
//! let x: F8E4M3FN = serde_json::from_str("0.3").unwrap();
//! assert_eq!(x.to_f32(), 0.3125);
//! assert_eq!(serde_json::from_str::<I4>("-8").unwrap().to_i8(), -8);
//! assert!(serde_json::from_str::<I4>("8").unwrap_err().to_string().contains("INT4"));
//! assert!(serde_json::from_str::<F4E2M1>("7").is_ok()); // saturates to 6
//! ```

use super::{Scalar, F4E2M1, F6E2M3, F6E3M2, F8E4M3FN, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ, F8E8M0, I2, I4, U2, U4};
use core::fmt;
use serde::de::{self, Deserialize, Deserializer, Visitor};
use serde::ser::{Serialize, Serializer};

/// Serializes a scalar as its code (`u8`) rather than its value, and checks the code on the
/// way back ([`Scalar::try_from_bits`]: a bit above the type's width is an error naming the
/// type). Every code round-trips, NaN payloads and -0 included.
///
/// ```
/// use lowbit::{F4E2M1, F8E5M2};
/// use serde::{Deserialize, Serialize};
///
/// #[derive(Serialize, Deserialize)]
/// struct Codes {
///     #[serde(with = "lowbit::serde_bits")]
///     x: F8E5M2,
///     #[serde(with = "lowbit::serde_bits")]
///     y: F4E2M1,
/// }
///
/// let codes = Codes { x: F8E5M2::NEG_INFINITY, y: F4E2M1::MAX };
/// // -Inf in E5M2 is sign 1, exponent 11111, mantissa 00: 0xFC = 252; E2M1's 6 is 0b0111 = 7.
/// let text = serde_json::to_string(&codes).unwrap();
/// assert_eq!(text, r#"{"x":252,"y":7}"#);
/// let back: Codes = serde_json::from_str(&text).unwrap();
/// assert_eq!(back.x.to_bits(), 0xFC);
/// // 0x10 sets a bit above E2M1's four.
/// assert!(serde_json::from_str::<Codes>(r#"{"x":0,"y":16}"#).is_err());
/// ```
pub mod serde_bits {
    use super::Scalar;
    use serde::de::{Deserialize, Deserializer, Error as _};
    use serde::ser::Serializer;

    /// Writes the code as a `u8`.
    pub fn serialize<T: Scalar, S: Serializer>(value: &T, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u8(value.to_bits())
    }

    /// Reads a `u8` code; a bit above the type's width is an error naming the type.
    pub fn deserialize<'de, T: Scalar, D: Deserializer<'de>>(deserializer: D) -> Result<T, D::Error> {
        let bits = u8::deserialize(deserializer)?;
        T::try_from_bits(bits).map_err(D::Error::custom)
    }
}

/// Reads any number into a float type, rounding once.
struct FloatVisitor<T>(core::marker::PhantomData<T>);

/// A float number read into E8M0: a power of two once rounded to `f32` (to nearest) is taken
/// as that power, so a text of 2^k read a few ulps above it does not round up to 2^(k+1) (see
/// the module docs); any other number rounds up, as `from_f64` does.
fn e8m0_from_read_f64(x: f64) -> F8E8M0 {
    let near = x as f32;
    let bits = near.to_bits();
    // A positive finite f32 is a power of two when its fraction is zero (normal) or its one
    // set bit is the whole code (subnormal).
    let power_of_two =
        near > 0.0 && near.is_finite() && if bits >> 23 == 0 { bits.is_power_of_two() } else { bits & 0x7F_FFFF == 0 };
    F8E8M0::from_f64(if power_of_two { f64::from(near) } else { x })
}

macro_rules! float_serde {
    ($($name:ident: $serialize:ident $deserialize:ident $to:ident $from_read:path),*) => {$(
        /// The value as `f32` (`f64` for E8M0), exactly.
        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.$serialize($name::$to(*self))
            }
        }

        impl<'de> Visitor<'de> for FloatVisitor<$name> {
            type Value = $name;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "a number to round to {}", $name::DTYPE.onnx_name())
            }

            fn visit_f64<E: de::Error>(self, x: f64) -> Result<$name, E> {
                if x.is_nan() && $name::FORMAT.nan_code(false).is_none() {
                    return Err(E::custom(format_args!("{} has no NaN", $name::DTYPE.onnx_name())));
                }
                Ok($from_read(x))
            }

            fn visit_i64<E: de::Error>(self, n: i64) -> Result<$name, E> {
                Ok($name::from_exact_integer(n.into()))
            }

            fn visit_u64<E: de::Error>(self, n: u64) -> Result<$name, E> {
                Ok($name::from_exact_integer(n.into()))
            }

            fn visit_i128<E: de::Error>(self, n: i128) -> Result<$name, E> {
                Ok($name::from_exact_integer(n))
            }

            fn visit_u128<E: de::Error>(self, n: u128) -> Result<$name, E> {
                Ok($name::from_exact_unsigned(n))
            }
        }

        /// Any number, rounded once as `from_f64` rounds (`saturate=1`; E8M0 takes a number
        /// within half an `f32` ulp of a power of two as that power); NaN for a type without NaN
        /// is an error naming the type.
        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<$name, D::Error> {
                deserializer.$deserialize(FloatVisitor::<$name>(core::marker::PhantomData))
            }
        }
    )*};
}

float_serde!(
    F8E4M3FN: serialize_f32 deserialize_f32 to_f32 F8E4M3FN::from_f64,
    F8E4M3FNUZ: serialize_f32 deserialize_f32 to_f32 F8E4M3FNUZ::from_f64,
    F8E5M2: serialize_f32 deserialize_f32 to_f32 F8E5M2::from_f64,
    F8E5M2FNUZ: serialize_f32 deserialize_f32 to_f32 F8E5M2FNUZ::from_f64,
    F8E8M0: serialize_f64 deserialize_f64 to_f64 e8m0_from_read_f64,
    F6E2M3: serialize_f32 deserialize_f32 to_f32 F6E2M3::from_f64,
    F6E3M2: serialize_f32 deserialize_f32 to_f32 F6E3M2::from_f64,
    F4E2M1: serialize_f32 deserialize_f32 to_f32 F4E2M1::from_f64
);

/// Reads an integer in `MIN..=MAX` into a small integer type.
struct IntVisitor<T>(core::marker::PhantomData<T>);

macro_rules! int_serde {
    ($($name:ident: $serialize:ident $deserialize:ident),*) => {$(
        /// The value as a primitive integer (`i8` signed, `u8` unsigned).
        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.$serialize(self.0)
            }
        }

        impl<'de> Visitor<'de> for IntVisitor<$name> {
            type Value = $name;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "an integer in {}..={} ({})", $name::MIN, $name::MAX, $name::DTYPE.onnx_name())
            }

            fn visit_i64<E: de::Error>(self, n: i64) -> Result<$name, E> {
                if n < i64::from($name::MIN.0) || n > i64::from($name::MAX.0) {
                    return Err(E::custom(format_args!(
                        "{n} is outside {}..={} of {}",
                        $name::MIN,
                        $name::MAX,
                        $name::DTYPE.onnx_name()
                    )));
                }
                Ok($name::wrapping_from_i64(n))
            }

            fn visit_u64<E: de::Error>(self, n: u64) -> Result<$name, E> {
                self.visit_i64(i64::try_from(n).unwrap_or(i64::MAX))
            }
        }

        /// An integer in `MIN..=MAX`; anything else is an error naming the type.
        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<$name, D::Error> {
                deserializer.$deserialize(IntVisitor::<$name>(core::marker::PhantomData))
            }
        }
    )*};
}

int_serde!(I4: serialize_i8 deserialize_i8, I2: serialize_i8 deserialize_i8, U4: serialize_u8 deserialize_u8, U2: serialize_u8 deserialize_u8);
