//! Scalar types: `F8E4M3FN`, `F8E4M3FNUZ`, `F8E5M2`, `F8E5M2FNUZ`, `F8E8M0`, `F6E2M3`, `F6E3M2`,
//! `F4E2M1` and the integers `I4`, `U4`, `I2`, `U2`.
//!
//! Each float type is a code plus its [`FloatFormat`]; every conversion goes through the one
//! rounding core, and every constant is derived from the descriptor. Following `half`: methods take
//! `self` by value, there is no lossy `From` (only the exact widenings to `f32` and `f64`), and
//! comparison is IEEE (NaN != NaN, -0 == +0); [`Bits`] compares, orders and hashes the code.
//!
//! Optional features: `num-traits` (`num_traits_impl`: `Float`, `NumCast`, ...), `serde`
//! (`serde_impl`, `serde_bits`) and `bytemuck` (`bytemuck_impl`: `Pod` and zero-copy
//! byte views).

use crate::convert::{self, CastOptions, Element, RoundMode};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::format::{self, FloatFormat};
use crate::kernels::decode::DecodeTable;
use crate::kernels::F32Kernel;
use crate::once::Once;
use crate::round::{self, RoundingMode};
use crate::value::Value;
use core::cmp::Ordering;
use core::fmt;
use core::num::FpCategory;

mod bits;
mod traits;
pub use bits::Bits;
pub use traits::Scalar;

#[cfg(feature = "bytemuck")]
pub mod bytemuck_impl;
#[cfg(feature = "num-traits")]
pub mod num_traits_impl;
#[cfg(feature = "serde")]
pub mod serde_impl;
#[cfg(feature = "serde")]
pub use serde_impl::serde_bits;

macro_rules! minifloat {
    ($(#[$doc:meta])* $name:ident, $format:path, $dtype:expr) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Default)]
        #[repr(transparent)]
        pub struct $name(u8);

        impl $name {
            /// The format descriptor.
            pub const FORMAT: &'static FloatFormat = &$format;
            /// The ONNX dtype.
            pub const DTYPE: DType = $dtype;
            /// Largest finite value.
            /// The largest value.
            pub const MAX: Self = Self($format.max_code() as u8);
            /// Most negative finite value (for the unsigned E8M0: the smallest value, 2^-127).
            /// The smallest value.
            pub const MIN: Self = Self($format.lowest_code() as u8);
            /// Smallest positive normal value.
            pub const MIN_POSITIVE: Self = Self($format.min_positive_normal_code() as u8);
            /// Smallest positive value (a subnormal where the format has subnormals).
            pub const MIN_POSITIVE_SUBNORMAL: Self = Self($format.min_positive_code() as u8);
            /// The difference between 1 and the next larger value: 2^-mantissa_bits.
            pub const EPSILON: Self = Self(match $format.power_of_two_code(-($format.mantissa_bits as i32)) {
                Some(c) => c as u8,
                None => panic!("every format holds its epsilon"),
            });
            /// One.
            /// One.
            pub const ONE: Self = Self(match $format.power_of_two_code(0) {
                Some(c) => c as u8,
                None => panic!("every format holds one"),
            });

            /// The value with these bits. Bits above the format's width are ignored (masked off);
            /// use [`Self::try_from_bits`] to reject them instead.
            #[must_use]
            #[inline]
            pub const fn from_bits(bits: u8) -> Self {
                Self(bits & $format.code_mask() as u8)
            }

            /// The value with these bits, or an error if a bit above the format's width is set.
            pub fn try_from_bits(bits: u8) -> Result<Self> {
                if u64::from(bits) & !$format.code_mask() != 0 {
                    return Err(Error::BitsOutOfRange { dtype: $dtype.onnx_name(), bits: bits.into(), width: $format.width() });
                }
                Ok(Self(bits))
            }

            /// The code.
            #[must_use]
            #[inline]
            pub const fn to_bits(self) -> u8 {
                self.0
            }

            /// ONNX `Cast` of an exact value with the given attributes and the profile's rules for
            /// this target (its NaN codes, E8M0 rule and overflow quirks). Rules that depend on the
            /// source type or on an element's position in a tensor (a float64 source rounded through
            /// float32, vector blocks) belong to [`crate::cast::cast`]; use it, or the slice API, to
            /// reproduce a profile from a typed source.
            #[must_use]
            pub fn from_value(value: Value, opts: &CastOptions) -> Self {
                let code = convert::encode_element(Self::DTYPE, Element::Float(value), opts)
                    .expect("every float value converts to every float dtype");
                Self(code as u8)
            }

            /// Rounds an `f32` to nearest-even (E8M0: `round_mode` up), saturating: ±Inf and
            /// overflow become ±MAX. This is ONNX `Cast` with its default `saturate=1`.
            #[must_use]
            pub fn from_f32(x: f32) -> Self {
                static KERNEL: Once<F32Kernel> = Once::new();
                Self(KERNEL.get_or_init(|| Self::kernel(true)).encode(x))
            }

            /// The plan's float32 kernel for this type under `spec` (built once per process).
            fn kernel(saturate: bool) -> F32Kernel {
                F32Kernel::new(Self::DTYPE, &CastOptions::saturating(saturate))
                    .expect("every narrow float type has a float32 kernel")
            }

            /// Like [`Self::from_f32`] with `saturate=0`: overflow becomes infinity or NaN where the
            /// format has one (float4 and float6 have neither and still clamp).
            #[must_use]
            pub fn from_f32_nonsaturating(x: f32) -> Self {
                static KERNEL: Once<F32Kernel> = Once::new();
                Self(KERNEL.get_or_init(|| Self::kernel(false)).encode(x))
            }

            /// Rounds an `f64` once (never through `f32`), saturating.
            #[must_use]
            pub fn from_f64(x: f64) -> Self {
                Self::from_value(Value::from_f64(x), &CastOptions::saturating(true))
            }

            /// Rounds an `f64` once, not saturating.
            #[must_use]
            pub fn from_f64_nonsaturating(x: f64) -> Self {
                Self::from_value(Value::from_f64(x), &CastOptions::saturating(false))
            }

            /// Exact conversion to `f32` (every value of the format is an `f32`; NaN keeps its sign).
            #[must_use]
            pub fn to_f32(self) -> f32 {
                static TABLE: Once<DecodeTable> = Once::new();
                TABLE.get_or_init(|| DecodeTable::new(Self::FORMAT).expect("narrow formats have a decode table")).decode(self.0)
            }

            /// Exact conversion to `f64`.
            #[must_use]
            pub fn to_f64(self) -> f64 {
                Self::FORMAT.to_f64(self.0.into())
            }

            /// IEEE classification.
            #[must_use]
            pub const fn classify(self) -> FpCategory {
                $format.classify(self.0 as u64)
            }

            /// Whether this is a NaN code.
            #[must_use]
            pub const fn is_nan(self) -> bool {
                matches!(self.classify(), FpCategory::Nan)
            }

            /// Whether this is ±infinity (formats with infinities only).
            #[must_use]
            pub const fn is_infinite(self) -> bool {
                matches!(self.classify(), FpCategory::Infinite)
            }

            /// Whether this is neither NaN nor infinite.
            #[must_use]
            pub const fn is_finite(self) -> bool {
                !matches!(self.classify(), FpCategory::Nan | FpCategory::Infinite)
            }

            /// Whether this is a normal number (not zero, subnormal, infinite or NaN).
            #[must_use]
            pub const fn is_normal(self) -> bool {
                matches!(self.classify(), FpCategory::Normal)
            }

            /// Whether this is a subnormal number.
            #[must_use]
            pub const fn is_subnormal(self) -> bool {
                matches!(self.classify(), FpCategory::Subnormal)
            }

            /// Whether the sign bit is set (FNUZ NaN, code 0x80, counts as negative).
            #[must_use]
            pub const fn is_sign_negative(self) -> bool {
                $format.is_sign_negative(self.0 as u64)
            }

            /// Whether the sign bit is clear.
            #[must_use]
            pub const fn is_sign_positive(self) -> bool {
                !self.is_sign_negative()
            }
        }

        impl PartialEq for $name {
            fn eq(&self, other: &Self) -> bool {
                // Through f32, which holds every value exactly: NaN != NaN and -0 == +0 for free.
                self.to_f32() == other.to_f32()
            }
        }

        impl PartialOrd for $name {
            fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
                self.to_f32().partial_cmp(&other.to_f32())
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Debug::fmt(&self.to_f32(), f)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(&self.to_f32(), f)
            }
        }

        impl fmt::LowerHex for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::LowerHex::fmt(&self.0, f)
            }
        }

        impl fmt::UpperHex for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::UpperHex::fmt(&self.0, f)
            }
        }

        impl fmt::Binary for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Binary::fmt(&self.0, f)
            }
        }

        impl From<$name> for f32 {
            fn from(x: $name) -> f32 {
                x.to_f32()
            }
        }

        impl From<$name> for f64 {
            fn from(x: $name) -> f64 {
                x.to_f64()
            }
        }
    };
}

minifloat!(
    /// OCP E4M3 as ONNX `FLOAT8E4M3FN`: bias 7, max 448, NaN 0x7F/0xFF, no infinity.
    F8E4M3FN, format::E4M3FN, DType::Float8E4M3FN
);
minifloat!(
    /// ONNX `FLOAT8E4M3FNUZ`: bias 8, max 240, one NaN (0x80), no -0, no infinity.
    F8E4M3FNUZ, format::E4M3FNUZ, DType::Float8E4M3FNUZ
);
minifloat!(
    /// OCP E5M2 as ONNX `FLOAT8E5M2`: IEEE-like, max 57344, infinity 0x7C.
    F8E5M2, format::E5M2, DType::Float8E5M2
);
minifloat!(
    /// ONNX `FLOAT8E5M2FNUZ`: bias 16, max 57344, one NaN (0x80), no -0, no infinity.
    F8E5M2FNUZ, format::E5M2FNUZ, DType::Float8E5M2FNUZ
);
minifloat!(
    /// OCP MX scale E8M0 as ONNX `FLOAT8E8M0`: 2^(code-127), unsigned, no zero, NaN 0xFF.
    /// `from_f32` rounds with ONNX's default `round_mode="up"`; see [`F8E8M0::from_f32_rounded`].
    F8E8M0, format::E8M0, DType::Float8E8M0
);
minifloat!(
    /// OCP MXFP6 E2M3 as ONNX `FLOAT6E2M3`: max 7.5, no infinity, no NaN. The code is the low 6
    /// bits. `saturate` does not apply: overflow always clamps. NaN converts to -0 (+NaN) or +0
    /// (-NaN), as the onnx reference does, since the Cast-28 text says nothing.
    F6E2M3, format::E2M3, DType::Float6E2M3
);
minifloat!(
    /// OCP MXFP6 E3M2 as ONNX `FLOAT6E3M2`: max 28, no infinity, no NaN. The code is the low 6
    /// bits; NaN and overflow as for [`F6E2M3`].
    F6E3M2, format::E3M2, DType::Float6E3M2
);
minifloat!(
    /// OCP MXFP4 E2M1 as ONNX `FLOAT4E2M1`: max 6, no infinity, no NaN. The code is the low 4 bits.
    /// Overflow and ±Inf clamp to ±6; NaN converts to +6 (the ONNX float4 technical note).
    F4E2M1, format::E2M1, DType::Float4E2M1
);

/// The special-value constants a format has, each read from the descriptor's encoding
/// (`zero_code`, `nan_code`, `infinity_code`); one the format lacks fails const evaluation.
macro_rules! constants {
    ($name:ident, $format:path: $($const:ident)*) => {
        impl $name {
            $(constants!(@one $format, $const);)*
        }
    };
    (@one $format:path, ZERO) => {
        /// Zero (+0).
        pub const ZERO: Self = Self(unwrap_const!($format.zero_code(false)) as u8);
    };
    (@one $format:path, NEG_ZERO) => {
        /// Negative zero (the sign bit alone).
        pub const NEG_ZERO: Self = Self(unwrap_const!($format.zero_code(true)) as u8);
    };
    (@one $format:path, NAN) => {
        /// The NaN `from_f32(f32::NAN)` gives: the positive quiet NaN where NaN has a sign (0x7F
        /// E4M3FN, 0x7E E5M2), else the format's single NaN (0x80 FNUZ, 0xFF E8M0).
        pub const NAN: Self = Self(unwrap_const!($format.nan_code(false)) as u8);
    };
    (@one $format:path, INFINITY) => {
        /// +Inf.
        pub const INFINITY: Self = Self(unwrap_const!($format.infinity_code(false)) as u8);
    };
    (@one $format:path, NEG_INFINITY) => {
        /// -Inf.
        pub const NEG_INFINITY: Self = Self(unwrap_const!($format.infinity_code(true)) as u8);
    };
}

macro_rules! unwrap_const {
    ($e:expr) => {
        match $e {
            Some(c) => c,
            None => panic!("constant missing from the format"),
        }
    };
}

constants!(F8E4M3FN, format::E4M3FN: ZERO NEG_ZERO NAN);
constants!(F8E4M3FNUZ, format::E4M3FNUZ: ZERO NAN);
constants!(F8E5M2, format::E5M2: ZERO NEG_ZERO NAN INFINITY NEG_INFINITY);
constants!(F8E5M2FNUZ, format::E5M2FNUZ: ZERO NAN);
constants!(F8E8M0, format::E8M0: NAN);
constants!(F6E2M3, format::E2M3: ZERO NEG_ZERO);
constants!(F6E3M2, format::E3M2: ZERO NEG_ZERO);
constants!(F4E2M1, format::E2M1: ZERO NEG_ZERO);

impl F8E8M0 {
    /// ONNX `Cast` to FLOAT8E8M0 with an explicit `saturate` and `round_mode`.
    #[must_use]
    pub fn from_f32_rounded(x: f32, saturate: bool, round_mode: RoundMode) -> Self {
        Self::from_value(Value::from_f32(x), &CastOptions { saturate, round_mode, ..CastOptions::default() })
    }

    /// ONNX `Cast` from `f64` to FLOAT8E8M0, rounded once.
    #[must_use]
    pub fn from_f64_rounded(x: f64, saturate: bool, round_mode: RoundMode) -> Self {
        Self::from_value(Value::from_f64(x), &CastOptions { saturate, round_mode, ..CastOptions::default() })
    }
}

macro_rules! small_int {
    ($(#[$doc:meta])* $name:ident, $repr:ty, $dtype:expr, bits = $bits:expr, signed = $signed:expr) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[repr(transparent)]
        pub struct $name($repr);

        impl $name {
            /// The ONNX dtype.
            pub const DTYPE: DType = $dtype;
            /// Bits per element.
            pub const BITS: u32 = $bits;
            /// The smallest value.
            pub const MIN: Self = Self(if $signed { -(1i16 << ($bits - 1)) as $repr } else { 0 });
            /// The largest value.
            pub const MAX: Self = Self((if $signed { (1i16 << ($bits - 1)) - 1 } else { (1i16 << $bits) - 1 }) as $repr);
            /// Zero.
            pub const ZERO: Self = Self(0);
            /// One.
            pub const ONE: Self = Self(1);
            const MASK: u8 = ((1u16 << $bits) - 1) as u8;

            /// The value whose two's complement (or plain binary) code is the low bits of `bits`;
            /// higher bits are ignored. Use [`Self::try_from_bits`] to reject them.
            #[must_use]
            pub const fn from_bits(bits: u8) -> Self {
                let code = bits & Self::MASK;
                if $signed && code >> ($bits - 1) != 0 {
                    Self((code as i16 - (1i16 << $bits)) as $repr)
                } else {
                    Self(code as $repr)
                }
            }

            /// Like [`Self::from_bits`], but a set bit above the width is an error.
            pub fn try_from_bits(bits: u8) -> Result<Self> {
                if bits & !Self::MASK != 0 {
                    return Err(Error::BitsOutOfRange { dtype: $dtype.onnx_name(), bits: bits.into(), width: $bits });
                }
                Ok(Self::from_bits(bits))
            }

            /// The code (the low bits of the two's complement).
            #[must_use]
            pub const fn to_bits(self) -> u8 {
                (self.0 as u8) & Self::MASK
            }

            /// ONNX `Cast` (`spec`): round to the nearest integer, ties to even, and keep the low
            /// bits; NaN, ±Inf and |x| >= 2^31 give 0.
            #[must_use]
            pub fn from_f32(x: f32) -> Self {
                Self::from_f64(f64::from(x))
            }

            /// ONNX `Cast` (`spec`) from `f64`, as [`Self::from_f32`].
            #[must_use]
            pub fn from_f64(x: f64) -> Self {
                let element = Element::Float(Value::from_f64(x));
                let code = convert::encode_element($dtype, element, &CastOptions::default())
                    .expect("a float converts to every integer dtype");
                Self::from_bits(code as u8)
            }

            /// Rounds to the nearest integer, ties to even, and clamps to `MIN..=MAX`; NaN gives 0.
            #[must_use]
            pub fn saturating_from_f32(x: f32) -> Self {
                Self::saturating_from_f64(f64::from(x))
            }

            /// As [`Self::saturating_from_f32`], from `f64`.
            #[must_use]
            pub fn saturating_from_f64(x: f64) -> Self {
                let rounded = match Value::from_f64(x) {
                    Value::Nan { .. } => 0,
                    Value::Infinite { negative } => if negative { i128::MIN } else { i128::MAX },
                    Value::Finite(e) => match round::round_to_integer(e, RoundingMode::NearestEven) {
                        Some((neg, mag)) => if neg { -i128::from(mag) } else { i128::from(mag) },
                        None => if e.negative { i128::MIN } else { i128::MAX },
                    },
                };
                Self(rounded.clamp(Self::MIN.0.into(), Self::MAX.0.into()) as $repr)
            }

            /// Keeps the low bits of an integer (ONNX int -> int `Cast`: two's complement wrap).
            #[must_use]
            pub const fn wrapping_from_i64(i: i64) -> Self {
                Self::from_bits(i as u8)
            }

            /// The value as `i8`.
            #[must_use]
            pub const fn to_i8(self) -> i8 {
                self.0 as i8
            }

            /// The value as `f32` (exact).
            #[must_use]
            pub fn to_f32(self) -> f32 {
                f32::from(self.0)
            }

            /// The value as `f64` (exact).
            #[must_use]
            pub fn to_f64(self) -> f64 {
                f64::from(self.0)
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Debug::fmt(&self.0, f)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(&self.0, f)
            }
        }

        impl fmt::LowerHex for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::LowerHex::fmt(&self.to_bits(), f)
            }
        }

        impl From<$name> for i8 {
            fn from(x: $name) -> i8 {
                x.0 as i8
            }
        }

        impl From<$name> for f32 {
            fn from(x: $name) -> f32 {
                x.to_f32()
            }
        }
    };
}

small_int!(
    /// ONNX `INT4`: -8..=7, stored two per byte in tensors.
    I4, i8, DType::Int4, bits = 4, signed = true
);
small_int!(
    /// ONNX `UINT4`: 0..=15, stored two per byte in tensors.
    U4, u8, DType::Uint4, bits = 4, signed = false
);
small_int!(
    /// ONNX `INT2`: -2..=1, stored four per byte in tensors.
    I2, i8, DType::Int2, bits = 2, signed = true
);
small_int!(
    /// ONNX `UINT2`: 0..=3, stored four per byte in tensors.
    U2, u8, DType::Uint2, bits = 2, signed = false
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn e4m3fn_constants() {
        assert_eq!(F8E4M3FN::MAX.to_f32(), 448.0);
        assert_eq!(F8E4M3FN::MIN.to_f32(), -448.0);
        assert_eq!(F8E4M3FN::MIN_POSITIVE.to_f32(), 2f32.powi(-6));
        assert_eq!(F8E4M3FN::MIN_POSITIVE_SUBNORMAL.to_f32(), 2f32.powi(-9));
        assert_eq!(F8E4M3FN::EPSILON.to_f32(), 0.125);
        assert!(F8E4M3FN::NAN.is_nan());
        assert_eq!(F8E4M3FN::NEG_ZERO, F8E4M3FN::ZERO);
        assert_ne!(F8E4M3FN::NAN, F8E4M3FN::NAN);
    }

    #[test]
    fn from_bits_masks_and_try_from_bits_rejects() {
        assert_eq!(F6E2M3::from_bits(0x41).to_bits(), 0x01);
        assert!(F6E2M3::try_from_bits(0x40).is_err());
        assert!(F4E2M1::try_from_bits(0x10).unwrap_err().to_string().contains("FLOAT4E2M1"));
        assert_eq!(I4::from_bits(0xF8).to_i8(), -8);
        assert!(U2::try_from_bits(4).is_err());
    }

    #[test]
    fn from_value_applies_the_profile_rules_for_the_target() {
        use crate::profile::Profile;
        let ort = CastOptions::with_profile(Profile::OnnxRuntime);
        // Profile row `e8m0`: onnxruntime sends negative inputs to 0x00 when saturating.
        assert_eq!(F8E8M0::from_value(Value::from_f32(-1.5), &ort).to_bits(), 0x00);
        assert_eq!(F8E8M0::from_value(Value::from_f32(-1.5), &CastOptions::default()).to_bits(), 0x80);
        // Row 4: onnxruntime's E5M2 NaN is 0x7F.
        assert_eq!(F8E5M2::from_value(Value::from_f32(f32::NAN), &ort).to_bits(), 0x7F);
        assert_eq!(F8E5M2::from_f32(f32::NAN).to_bits(), 0x7E);
    }

    #[test]
    fn small_int_ranges() {
        assert_eq!((I4::MIN.to_i8(), I4::MAX.to_i8()), (-8, 7));
        assert_eq!((U4::MIN.to_i8(), U4::MAX.to_i8()), (0, 15));
        assert_eq!((I2::MIN.to_i8(), I2::MAX.to_i8()), (-2, 1));
        assert_eq!((U2::MIN.to_i8(), U2::MAX.to_i8()), (0, 3));
        assert_eq!(I4::saturating_from_f32(100.0), I4::MAX);
        assert_eq!(U4::saturating_from_f32(-3.0), U4::MIN);
        assert_eq!(I4::saturating_from_f32(f32::NAN), I4::ZERO);
        assert_eq!(I4::wrapping_from_i64(200).to_i8(), -8);
        assert_eq!(I4::from_f32(7.5).to_i8(), -8);
    }
}
