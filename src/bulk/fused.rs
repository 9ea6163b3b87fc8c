//! Per-tensor `QuantizeLinear` / `DequantizeLinear` over slices, fused (feature `quant`).

use super::*;
use crate::alloc_prelude::*;
use crate::error::Error;
use crate::packing;
use crate::profile::Profile;
use crate::quant::linear::{quantize_per_tensor, PerTensorDequantizer};
use crate::scalar::{F8E4M3FN, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ, I2, I4, U2, U4};
use crate::slice::{raw_length_is, CodeStage};

/// Elements per piece of the fused quantization calls: a multiple of 4 (a byte boundary for every
/// packing) and the chunk of the quantization loop, so each piece is one of its chunks.
const PIECE: usize = 16384;

fn same_length(what: &str, dst: usize, src: usize) -> Result<()> {
    if dst == src {
        Ok(())
    } else {
        Err(Error::InvalidOp { op: what.into(), message: format!("destination has {dst} elements, source {src}") })
    }
}

mod sealed {
    /// What the fused quantization needs of a quantized element type: its code (through
    /// `CodeSlot`) and the value of a zero point.
    pub trait Sealed: crate::slice::CodeSlot {
        fn zero_point_value(self) -> f64;
    }
}

/// The element types of [`quantize`] and [`dequantize`]: `i8`, `u8`, [`I4`], [`U4`], [`I2`],
/// [`U2`] and the four float8 types [`F8E4M3FN`], [`F8E4M3FNUZ`], [`F8E5M2`], [`F8E5M2FNUZ`]
/// (sealed).
///
/// ```
/// fn takes<Q: lowbit::bulk::QuantizeTarget>(_: Q) {}
/// takes(0i8);
/// takes(lowbit::F8E5M2::ZERO);
/// ```
pub trait QuantizeTarget: sealed::Sealed {}

/// The types [`quantize_packed`] and [`dequantize_packed`] store packed (ONNX `raw_data`): [`I4`],
/// [`U4`] two per byte, [`I2`], [`U2`] four per byte (sealed).
///
/// ```
/// fn takes<Q: lowbit::bulk::PackedQuantizeTarget>(_: Q) {}
/// takes(lowbit::U2::ONE);
/// ```
pub trait PackedQuantizeTarget: QuantizeTarget {}

macro_rules! quantized {
    ($($t:ty => $value:expr),*) => {$(
        impl sealed::Sealed for $t {
            fn zero_point_value(self) -> f64 {
                $value(self)
            }
        }
        impl QuantizeTarget for $t {}
    )*};
}

quantized!(
    i8 => f64::from, u8 => f64::from,
    I4 => I4::to_f64, U4 => U4::to_f64, I2 => I2::to_f64, U2 => U2::to_f64,
    F8E4M3FN => F8E4M3FN::to_f64, F8E4M3FNUZ => F8E4M3FNUZ::to_f64,
    F8E5M2 => F8E5M2::to_f64, F8E5M2FNUZ => F8E5M2FNUZ::to_f64
);

impl PackedQuantizeTarget for I4 {}
impl PackedQuantizeTarget for U4 {}
impl PackedQuantizeTarget for I2 {}
impl PackedQuantizeTarget for U2 {}

/// ONNX `QuantizeLinear` with one scale and zero point for the whole slice (per-tensor, a FLOAT
/// `y_scale`, `y_zero_point` given, saturate=1, the `spec` profile), into one element of `dst` per
/// element of `src`: `y = saturate(round(x / scale) + zero_point)` for integers (the division in
/// float32, nearest-even, NaN -> the type's minimum), `y = Cast(x / scale + zero_point,
/// saturate=1)` for float8. Fused: no tensor and no copy of the input, the same kernels and the
/// same results as [`crate::quant::quantize_linear`].
///
/// ```
/// use lowbit::{bulk::quantize, F8E4M3FN};
/// let mut q = [0i8; 4];
/// quantize(&[1.0, -0.26, 100.0, f32::NAN], 0.5, 3i8, &mut q).unwrap();
/// // 1/0.5 + 3 = 5; -0.52 -> -1, + 3 = 2; 200 + 3 saturates to 127; NaN -> -128.
/// assert_eq!(q, [5, 2, 127, -128]);
///
/// let mut f8 = [F8E4M3FN::ZERO; 2];
/// quantize(&[3.0, 1000.0], 2.0, F8E4M3FN::ZERO, &mut f8).unwrap();
/// assert_eq!(f8.map(F8E4M3FN::to_f32), [1.5, 448.0]); // 500 saturates to 448
/// ```
pub fn quantize<Q: QuantizeTarget>(src: &[f32], scale: f32, zero_point: Q, dst: &mut [Q]) -> Result<()> {
    same_length("quantize", dst.len(), src.len())?;
    let mut codes = CodeStage::new(Q::DTYPE);
    quantize_pieces(src, scale, zero_point, |start, len, raw| {
        codes.unpack(raw, &mut dst[start..start + len]);
    })
}

/// [`quantize`] into a packed type, writing ONNX `raw_data` into `dst` (exactly
/// `ceil(len * bits / 8)` bytes): INT4/UINT4 two elements per byte, INT2/UINT2 four, the first in
/// the low bits.
///
/// ```
/// use lowbit::{bulk::quantize_packed, I4};
/// let mut raw = [0u8; 2];
/// quantize_packed(&[0.9, -2.0, 30.0], 0.25, I4::from_bits(1), &mut raw).unwrap();
/// // 0.9/0.25 = 3.6 -> 4, + 1 = 5; -8 + 1 = -7 (0x9); 120 + 1 saturates to 7.
/// assert_eq!(raw, [0x95, 0x07]);
/// ```
pub fn quantize_packed<Q: PackedQuantizeTarget>(src: &[f32], scale: f32, zero_point: Q, dst: &mut [u8]) -> Result<()> {
    raw_length_is(Q::DTYPE, src.len(), dst.len())?;
    quantize_pieces(src, scale, zero_point, |start, _, raw| {
        let at = packing::raw_len(Q::DTYPE, start).expect("checked above");
        dst[at..at + raw.len()].copy_from_slice(raw);
    })
}

/// Quantizes `src` a piece at a time, handing `write(start, len, raw)` each piece's raw data.
fn quantize_pieces<Q: QuantizeTarget>(
    src: &[f32],
    scale: f32,
    zero_point: Q,
    mut write: impl FnMut(usize, usize, &[u8]),
) -> Result<()> {
    let n = src.len();
    let zero = zero_point.zero_point_value();
    let mut staged = vec![0u8; 4 * PIECE.min(n)];
    let mut out = vec![0u8; packing::raw_len(Q::DTYPE, PIECE.min(n))?];
    for start in (0..n).step_by(PIECE) {
        let len = PIECE.min(n - start);
        for (b, x) in staged.chunks_exact_mut(4).zip(&src[start..start + len]) {
            b.copy_from_slice(&x.to_le_bytes());
        }
        let out_len = packing::raw_len(Q::DTYPE, len)?;
        quantize_per_tensor(&staged[..4 * len], len, scale, zero, Q::DTYPE, Profile::Spec, &mut out[..out_len])?;
        write(start, len, &out[..out_len]);
    }
    Ok(())
}

/// ONNX `DequantizeLinear` to FLOAT with one scale and zero point for the whole slice (per-tensor,
/// a FLOAT `x_scale`, `x_zero_point` given, the `spec` profile): `y = (x - zero_point) * scale`,
/// computed exactly and rounded once to float32. A float8 zero point must be zero (as in ONNX).
/// The same results as [`crate::quant::dequantize_linear`], with no tensor.
///
/// ```
/// use lowbit::{bulk::dequantize, F8E5M2};
/// let mut y = [0f32; 3];
/// dequantize(&[5u8, 0, 255], 0.5, 3u8, &mut y).unwrap();
/// assert_eq!(y, [1.0, -1.5, 126.0]); // (5-3)*0.5, (0-3)*0.5, (255-3)*0.5
///
/// let mut y = [0f32; 1];
/// dequantize(&[F8E5M2::from_f32(3.0)], 2.0, F8E5M2::ZERO, &mut y).unwrap();
/// assert_eq!(y, [6.0]);
/// assert!(dequantize(&[F8E5M2::ZERO], 1.0, F8E5M2::ONE, &mut y).is_err());
/// ```
pub fn dequantize<Q: QuantizeTarget>(src: &[Q], scale: f32, zero_point: Q, dst: &mut [f32]) -> Result<()> {
    same_length("dequantize", dst.len(), src.len())?;
    let mut codes = CodeStage::new(Q::DTYPE);
    dequantize_pieces::<Q>(scale, zero_point, dst, |start, len, raw| codes.pack(&src[start..start + len], raw))
}

/// [`dequantize`] from a packed type's ONNX `raw_data` (`src`, exactly `ceil(len * bits / 8)`
/// bytes for the `dst.len()` elements).
///
/// ```
/// use lowbit::{bulk::dequantize_packed, U4};
/// let mut y = [0f32; 3];
/// dequantize_packed(&[0xF0, 0x08], 0.25, U4::from_bits(8), &mut y).unwrap();
/// assert_eq!(y, [-2.0, 1.75, 0.0]); // (0-8)/4, (15-8)/4, (8-8)/4
/// ```
pub fn dequantize_packed<Q: PackedQuantizeTarget>(
    src: &[u8],
    scale: f32,
    zero_point: Q,
    dst: &mut [f32],
) -> Result<()> {
    raw_length_is(Q::DTYPE, dst.len(), src.len())?;
    dequantize_pieces::<Q>(scale, zero_point, dst, |start, _, raw| {
        let at = packing::raw_len(Q::DTYPE, start).expect("checked above");
        raw.copy_from_slice(&src[at..at + raw.len()]);
    })
}

/// Dequantizes `dst.len()` elements a piece at a time, `read(start, len, raw)` filling each
/// piece's raw data.
fn dequantize_pieces<Q: QuantizeTarget>(
    scale: f32,
    zero_point: Q,
    dst: &mut [f32],
    mut read: impl FnMut(usize, usize, &mut [u8]),
) -> Result<()> {
    let n = dst.len();
    let zero = zero_point.zero_point_value();
    let mut staged = vec![0u8; packing::raw_len(Q::DTYPE, PIECE.min(n))?];
    let mut dequantizer = PerTensorDequantizer::new(Q::DTYPE, scale, zero, Profile::Spec, n)?;
    for start in (0..n).step_by(PIECE) {
        let len = PIECE.min(n - start);
        let raw_len = packing::raw_len(Q::DTYPE, len)?;
        read(start, len, &mut staged[..raw_len]);
        dequantizer.run_into_f32(&staged[..raw_len], &mut dst[start..start + len])?;
    }
    Ok(())
}
