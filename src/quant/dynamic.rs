//! `DynamicQuantizeLinear` (opset 11): uint8 quantization with the scale and zero point computed
//! from the data.
//!
//! ```text
//! y_scale = (max(0, max(x)) - min(0, min(x))) / 255
//! y_zero_point = round(saturate(0 - min(0, min(x)) / y_scale))      (nearest-even)
//! y = saturate(round(x / y_scale) + y_zero_point)                     (nearest-even, [0, 255])
//! ```
//!
//! All arithmetic is float32's, as the function body of the op (ReduceMin, Div, Sub, Clip, Round
//! on float32 tensors) computes it. NaN in `x` and a flat input (where the text divides 0 by 0) are
//! profile rows ([`crate::profile::QuantizePolicy::dynamic_nan`], [`crate::profile::QuantizePolicy::dynamic_flat_scale`]).

use super::linear::{Quantize, ScaleValues};
use super::{check_type, invalid, Groups, DYNAMIC_QUANTIZE_LINEAR_VERSIONS};
use crate::alloc_prelude::*;
use crate::dtype::DType;
use crate::error::Result;
use crate::kernels::encode::IntegerKernel;
use crate::op_output::{AllocationGuard, Unbudgeted};
use crate::profile::{DynamicFlatScale, DynamicNan, Profile, QuantizeSpecials};
use crate::round::RoundingMode;
use crate::tensor::Tensor;

/// ONNX `DynamicQuantizeLinear`: returns `(y, y_scale, y_zero_point)`.
pub fn dynamic_quantize_linear(x: &Tensor, opset: i64, profile: Profile) -> Result<(Tensor, Tensor, Tensor)> {
    dynamic_guarded(x, opset, profile, &mut Unbudgeted)
}

/// [`dynamic_quantize_linear`], telling `guard` about the output before allocating it.
pub(crate) fn dynamic_guarded(
    x: &Tensor,
    opset: i64,
    profile: Profile,
    guard: &mut dyn AllocationGuard,
) -> Result<(Tensor, Tensor, Tensor)> {
    let version = crate::opset::schema_version("DynamicQuantizeLinear", &DYNAMIC_QUANTIZE_LINEAR_VERSIONS, opset)?;
    let name = format!("DynamicQuantizeLinear-{version}");
    check_type(&name, "input x", x.dtype(), &[DType::Float])?;
    let raw = x.raw().ok_or_else(|| invalid(&name, "x has no raw data"))?;
    let n = x.len();
    guard.before_allocating(n, n.saturating_add(super::linear::SCRATCH_BYTES))?;
    let policy = profile.policy();
    let value = |b: &[u8]| f32::from_le_bytes(b.try_into().expect("4 bytes"));
    // Both start at 0: the range always includes zero.
    let (mut low, mut high) = (0f32, 0f32);
    let mut saw_nan = false;
    for b in raw.chunks_exact(4) {
        let v = value(b);
        saw_nan |= v.is_nan();
        low = low.min(v);
        high = high.max(v);
    }
    if saw_nan && policy.quantize.dynamic_nan == DynamicNan::Propagates {
        low = f32::NAN;
        high = f32::NAN;
    }
    let scale = if low == high {
        match policy.quantize.dynamic_flat_scale {
            DynamicFlatScale::OneOver255 => 1.0 / 255.0,
            DynamicFlatScale::One => 1.0,
        }
    } else {
        (high - low) / 255.0
    };
    let initial = 0.0 - low / scale;
    // NaN (a NaN scale, or -Inf / Inf) saturates to 255: what `max(0, min(255, nan))` gives in
    // the reference and what onnxruntime returns.
    let clipped = if initial.is_nan() { 255.0 } else { initial.clamp(0.0, 255.0) };
    let mut rounded = [0i32];
    IntegerKernel { mode: RoundingMode::NearestEven, mask: 0xFF }.round(&[clipped], &mut rounded);
    let zero = rounded[0];
    let quantize = Quantize {
        name: name.clone(),
        target: DType::Uint8,
        groups: Groups::PER_TENSOR,
        division: DType::Float,
        saturate: true,
        // rint, add, clip and a cast to uint8: saturation by sign, NaN to 0, in every profile.
        specials: QuantizeSpecials::SaturateNanToMin,
        split_byte_specials: None,
        adds_zero_point: true,
    };
    let mut out = crate::op_output::zeroed(&name, n)?;
    quantize.run(
        DType::Float,
        raw,
        n,
        ScaleValues::Exact(vec![f64::from(scale)]),
        &[f64::from(zero)],
        &mut out,
        profile,
    )?;
    Ok((
        Tensor::from_raw(DType::Uint8, x.shape().to_vec(), out)?,
        Tensor::from_f32(&[scale]).reshape(vec![])?,
        Tensor::from_codes(DType::Uint8, vec![], &[zero as u64])?,
    ))
}
