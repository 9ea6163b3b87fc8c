//! The `bytemuck` feature: the scalar types as plain bytes, and zero-copy views between
//! `[T]` and `[u8]`.
//!
//! Every scalar type is `#[repr(transparent)]` over one byte (`u8`, or `i8` for `I4`/`I2`).
//!
//! | types | traits | views |
//! |---|---|---|
//! | `F8E4M3FN`, `F8E4M3FNUZ`, `F8E5M2`, `F8E5M2FNUZ`, `F8E8M0`: every one of the 256 bytes is a code | `Zeroable`, `Pod` | `slice_as_bytes`, `slice_as_bytes_mut`, `slice_from_bytes`, `slice_from_bytes_mut`, `try_slice_from_bytes` (never fails) |
//! | `F6E2M3`, `F6E3M2`, `F4E2M1` (the code is the low 6 or 4 bits; higher bits must be 0), `I4`, `I2`, `U4`, `U2` (the byte is the value as `i8`/`u8`, which must lie in `MIN..=MAX`) | `Zeroable`, `NoUninit`, `CheckedBitPattern` | `slice_as_bytes`, `try_slice_from_bytes`, `try_slice_from_bytes_mut` |
//!
//! The second group is not `Pod`: `Pod` would let safe code make a value from any byte (0xFF as
//! an `F4E2M1`, 0x7F as an `I4`), which the types never hold. For the same reason they have no
//! `slice_as_bytes_mut`, through which any byte could be written. Their `try_slice_from_bytes`
//! checks every byte and names the first bad one's offset.
//!
//! The bytes of `I4`/`U4`/`I2`/`U2` are one value per byte (`I4(-8)` is 0xF8), not the packed
//! nibbles of an ONNX tensor: [`crate::packing`] packs those.
//!
//! The `unsafe impl`s sit in one `#[allow(unsafe_code)]` module below, each with its `SAFETY`
//! comment. bytemuck's derives do pass the crate's `deny(unsafe_code)`, but they cannot say
//! which bytes are valid for the float6/float4/int types, and one place for all the impls is
//! easier to review.
//!
//! ```
//! use lowbit::{F4E2M1, F8E4M3FN};
//!
//! let values = [F8E4M3FN::from_f32(1.0), F8E4M3FN::from_f32(-2.0)];
//! // 1.0 = exponent 7 (the bias), mantissa 0: 0b0_0111_000 = 0x38; -2.0 = 0b1_1000_000 = 0xC0.
//! assert_eq!(F8E4M3FN::slice_as_bytes(&values), &[0x38, 0xC0]);
//! assert_eq!(F8E4M3FN::slice_from_bytes(&[0x38])[0].to_f32(), 1.0);
//!
//! // E2M1's 6.0 is 0b0_11_1 = 0x7; 0x17 sets a bit above the four.
//! assert_eq!(F4E2M1::try_slice_from_bytes(&[0x7]).unwrap()[0].to_f32(), 6.0);
//! let err = F4E2M1::try_slice_from_bytes(&[0x7, 0x17]).unwrap_err();
//! assert!(err.to_string().contains("offset 1"));
//! ```

use super::{F4E2M1, F6E2M3, F6E3M2, F8E4M3FN, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ, F8E8M0, I2, I4, U2, U4};
use crate::error::{Error, Result};

/// Every `unsafe impl` of the crate's scalar types.
#[allow(unsafe_code)]
mod unsafe_impls {
    use super::{F4E2M1, F6E2M3, F6E3M2, F8E4M3FN, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ, F8E8M0, I2, I4, U2, U4};
    use bytemuck::{CheckedBitPattern, NoUninit, Pod, Zeroable};

    macro_rules! pod {
        ($($name:ident),*) => {$(
            // SAFETY: the type is `#[repr(transparent)]` over a `u8` (src/scalar/mod.rs), and the
            // all-zero byte is its code 0x00, a value of every format (+0, or E8M0's 2^-127).
            unsafe impl Zeroable for $name {}
            // SAFETY: `#[repr(transparent)]` over a `u8`: size 1, alignment 1, no padding, and
            // every one of the 256 bytes is a code of the 8-bit format (`from_bits` keeps all 8
            // bits), so any byte is a valid value; the type is `Copy` and `'static`.
            unsafe impl Pod for $name {}
        )*};
    }

    pod!(F8E4M3FN, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ, F8E8M0);

    macro_rules! checked {
        ($($name:ident),*) => {$(
            // SAFETY: `#[repr(transparent)]` over a `u8` or `i8`; the zero byte is the code or
            // the value 0, which every one of these types holds.
            unsafe impl Zeroable for $name {}
            // SAFETY: `#[repr(transparent)]` over one initialised byte: no padding, no
            // uninitialised bytes; the type is `Copy` and `'static`.
            unsafe impl NoUninit for $name {}
            // SAFETY: `Bits` is `u8`, with the size and alignment of the type (one byte), and
            // `is_valid_bit_pattern` accepts exactly the bytes the type's constructors store
            // (`is_valid_byte`: no bit above the code's width for float6/float4, a value in
            // `MIN..=MAX` for the integers), so a checked cast makes only real values.
            unsafe impl CheckedBitPattern for $name {
                type Bits = u8;
                fn is_valid_bit_pattern(bits: &u8) -> bool {
                    $name::is_valid_byte(*bits)
                }
            }
        )*};
    }

    checked!(F6E2M3, F6E3M2, F4E2M1, I4, U4, I2, U2);
}

/// The views of the types whose every byte is a value.
macro_rules! pod_views {
    ($($name:ident),*) => {$(
        impl $name {
            /// The codes as bytes, without copying.
            #[must_use]
            pub fn slice_as_bytes(values: &[Self]) -> &[u8] {
                bytemuck::cast_slice(values)
            }

            /// The codes as mutable bytes, without copying: every byte written is a code.
            #[must_use]
            pub fn slice_as_bytes_mut(values: &mut [Self]) -> &mut [u8] {
                bytemuck::cast_slice_mut(values)
            }

            /// Bytes as codes, without copying (every byte is a code of this type).
            #[must_use]
            pub fn slice_from_bytes(bytes: &[u8]) -> &[Self] {
                bytemuck::cast_slice(bytes)
            }

            /// Mutable bytes as codes, without copying.
            #[must_use]
            pub fn slice_from_bytes_mut(bytes: &mut [u8]) -> &mut [Self] {
                bytemuck::cast_slice_mut(bytes)
            }

            /// [`Self::slice_from_bytes`], which never fails for this type: for code generic
            /// over the 8-bit and the narrower types.
            pub fn try_slice_from_bytes(bytes: &[u8]) -> Result<&[Self]> {
                Ok(Self::slice_from_bytes(bytes))
            }
        }
    )*};
}

pod_views!(F8E4M3FN, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ, F8E8M0);

/// The views of the types with invalid bytes: bytes out freely, bytes in checked.
macro_rules! checked_views {
    ($($name:ident: |$byte:ident| $valid:expr, $why:expr;)*) => {$(
        impl $name {
            /// Whether `byte` is a value of the type as it is stored.
            const fn is_valid_byte($byte: u8) -> bool {
                $valid
            }

            /// The first byte that is no value of the type, as an error naming its offset.
            fn check_bytes(bytes: &[u8]) -> Result<()> {
                match bytes.iter().position(|&byte| !Self::is_valid_byte(byte)) {
                    None => Ok(()),
                    Some(offset) => Err(Error::InvalidElementByte {
                        dtype: Self::DTYPE.onnx_name(),
                        offset,
                        byte: bytes[offset],
                        why: $why,
                    }),
                }
            }

            /// The stored bytes, without copying. (No mutable view: it could write a byte that
            /// is no value of the type.)
            #[must_use]
            pub fn slice_as_bytes(values: &[Self]) -> &[u8] {
                bytemuck::cast_slice(values)
            }

            /// Bytes as values, without copying, after checking every byte; the error names
            /// the offset of the first bad one.
            pub fn try_slice_from_bytes(bytes: &[u8]) -> Result<&[Self]> {
                Self::check_bytes(bytes)?;
                // Cannot panic: every byte was just checked, and size and alignment are 1.
                Ok(bytemuck::checked::cast_slice(bytes))
            }

            /// Mutable bytes as values, without copying, after checking every byte. Writes
            /// through the result store only values, so the bytes stay valid.
            pub fn try_slice_from_bytes_mut(bytes: &mut [u8]) -> Result<&mut [Self]> {
                Self::check_bytes(bytes)?;
                // Cannot panic: every byte was just checked, and size and alignment are 1.
                Ok(bytemuck::checked::cast_slice_mut(bytes))
            }
        }
    )*};
}

checked_views! {
    F6E2M3: |byte| byte & !(F6E2M3::FORMAT.code_mask() as u8) == 0,
        "a bit above the 6-bit code is set";
    F6E3M2: |byte| byte & !(F6E3M2::FORMAT.code_mask() as u8) == 0,
        "a bit above the 6-bit code is set";
    F4E2M1: |byte| byte & !(F4E2M1::FORMAT.code_mask() as u8) == 0,
        "a bit above the 4-bit code is set";
    I4: |byte| I4::MIN.0 <= byte as i8 && byte as i8 <= I4::MAX.0,
        "the byte is the value as i8, which must lie in -8..=7";
    I2: |byte| I2::MIN.0 <= byte as i8 && byte as i8 <= I2::MAX.0,
        "the byte is the value as i8, which must lie in -2..=1";
    U4: |byte| byte <= U4::MAX.0,
        "the byte is the value, which must lie in 0..=15";
    U2: |byte| byte <= U2::MAX.0,
        "the byte is the value, which must lie in 0..=3";
}
