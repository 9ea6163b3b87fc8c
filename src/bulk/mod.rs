//! **Bulk API**: whole slices in one call, for data that is not an ONNX graph.
//!
//! | what | where |
//! |---|---|
//! | `f32`/`f64`/`f16`/`bf16` slices <-> slices of every scalar type (`Cast`) | [`ScalarSliceExt`](crate::ScalarSliceExt) (and [`NarrowFloatSliceExt`](crate::NarrowFloatSliceExt)) |
//! | wide floats -> packed int4/uint4/int2/uint2/float4/float6 raw data: wrapping (`Cast`) or saturating | [`pack_wrapping_into`], [`pack_saturating_into`] |
//! | packed raw data -> wide floats | [`unpack_into`] |
//! | `QuantizeLinear` / `DequantizeLinear` with one scale and zero point, fused | [`quantize`], [`dequantize`], [`quantize_packed`], [`dequantize_packed`] |
//! | `Tensor` <-> serialized `TensorProto` bytes in memory | [`Tensor::to_tensor_proto_bytes`](crate::Tensor::to_tensor_proto_bytes), [`Tensor::from_tensor_proto_bytes`](crate::Tensor::from_tensor_proto_bytes) |
//!
//! Every conversion runs a [`crate::Plan`] (the engine behind [`crate::cast()`]) or the
//! quantization kernels behind [`crate::quant::quantize_linear`], a piece at a time through
//! buffers of a fixed size: no call holds a copy of the whole input.

use crate::convert::CastOptions;
use crate::dtype::{DType, Kind};
use crate::error::Result;
use crate::slice::{pack_staged, unpack_staged};

use crate::slice::WideFloat;

#[cfg(feature = "quant")]
mod fused;
#[cfg(feature = "quant")]
pub use fused::{dequantize, dequantize_packed, quantize, quantize_packed, PackedQuantizeTarget, QuantizeTarget};

/// Casts `src` to a packed sub-byte type (INT4, UINT4, INT2, UINT2, FLOAT4E2M1, FLOAT6E2M3,
/// FLOAT6E3M2) with `opts`, writing ONNX `raw_data` into `dst` (exactly `ceil(len * bits / 8)`
/// bytes). This is ONNX `Cast`: integers are rounded to nearest (ties to even) and **wrap** (their
/// low bits are kept: int4 9.0 -> -7; NaN and infinities -> 0).
///
/// ```
/// use lowbit::{bulk::pack_wrapping_into, CastOptions, DType};
/// let mut raw = [0u8; 1];
/// pack_wrapping_into(DType::Int4, &[half::f16::from_f32(9.0), half::f16::from_f32(-1.0)], &mut raw, &CastOptions::default()).unwrap();
/// assert_eq!(raw, [0xF9]); // 9 -> 0x9 (-7), -1 -> 0xF
/// ```
pub fn pack_wrapping_into<S: WideFloat>(dtype: DType, src: &[S], dst: &mut [u8], opts: &CastOptions) -> Result<()> {
    pack_staged(dtype, src, dst, opts, |x| x)
}

/// Converts `src` to a packed sub-byte type **with saturation**, writing ONNX `raw_data` into `dst`
/// (exactly `ceil(len * bits / 8)` bytes). Integer targets (INT4, UINT4, INT2, UINT2): rounded to
/// the nearest integer, ties to even, clamped to the type's `MIN..=MAX`; NaN -> 0 (the bulk form of
/// [`crate::I4::saturating_from_f32`]). Float targets (FLOAT4E2M1, FLOAT6E2M3, FLOAT6E3M2): ONNX
/// `Cast` with saturate=1, which they always have (no infinities). The `spec` profile.
///
/// ```
/// use lowbit::{bulk::pack_saturating_into, DType};
/// let mut raw = [0u8; 2];
/// pack_saturating_into(DType::Int4, &[9.0f64, -8.5, f64::NAN, 2.5], &mut raw).unwrap();
/// // 9 -> 7, -8.5 -> -8 (0x8), NaN -> 0, 2.5 -> 2 (ties to even); low nibble first.
/// assert_eq!(raw, [0x87, 0x20]);
/// ```
pub fn pack_saturating_into<S: WideFloat>(dtype: DType, src: &[S], dst: &mut [u8]) -> Result<()> {
    let opts = CastOptions::default();
    match dtype.kind() {
        Kind::Integer { bits, signed } => {
            // Every integer of the target's range is exact in every wide type; after the clamp,
            // Cast's nearest-even rounding stays inside the range, so nothing wraps.
            let (low, high) = crate::dtype::integer_bounds(bits, signed);
            let (low, high) = (i8::try_from(low), i8::try_from(high));
            match (low, high) {
                (Ok(low), Ok(high)) => pack_staged(dtype, src, dst, &opts, |x| x.clamp_to_integers(low, high)),
                // Wider integers are not packed: pack_staged refuses them by name.
                _ => pack_staged(dtype, src, dst, &opts, |x| x),
            }
        }
        _ => pack_staged(dtype, src, dst, &opts, |x| x),
    }
}

/// Unpacks `dst.len()` elements of a packed sub-byte type from `src` (ONNX `raw_data`, exactly
/// `ceil(len * bits / 8)` bytes) into `f32`, `f64`, `f16` or `bf16` (ONNX `Cast` defaults: every
/// value of these types is exact in all four).
///
/// ```
/// use lowbit::{bulk::unpack_into, DType};
/// let mut out = [half::bf16::ZERO; 3];
/// unpack_into(DType::Float4E2M1, &[0x21, 0x0F], &mut out).unwrap();
/// assert_eq!(out.map(half::bf16::to_f32), [0.5, 1.0, -6.0]);
/// ```
pub fn unpack_into<D: WideFloat>(dtype: DType, src: &[u8], dst: &mut [D]) -> Result<()> {
    unpack_staged(dtype, src, dst, &CastOptions::default())
}
