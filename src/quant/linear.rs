//! `QuantizeLinear` and `DequantizeLinear`: validation, then the arithmetic chunk by chunk.
//!
//! QuantizeLinear, per chunk of `x`: the quotient `x / y_scale` in the division precision (the
//! profile's [`QuantizeDivision`]); then for float targets the zero point where it applies and a
//! [`Plan`] (ONNX Cast with `saturate`, which rounds to nearest even and packs); for integer
//! targets the plan's integer kernel (nearest-even), the zero point, the clamp to the type's range
//! and the packing of [`crate::packing`]. Quotients are float32 lanes when `x` is float32 and the
//! division is in float32 (the common case, divided in place), float64 lanes otherwise (every
//! precision's values are float64 values, and float64 rounds a quotient of float32s once more
//! harmlessly: 53 >= 2 * 24 + 2).

use super::{
    check_attributes, check_type, groups, invalid, schema_at, DequantizeAttributes, Groups, QuantizeAttributes,
};
use super::{DEQUANTIZE_SCHEMAS, QUANTIZE_SCHEMAS};
use crate::alloc_prelude::*;
use crate::convert::CastOptions;
use crate::dtype::{DType, Kind, Packing};
use crate::error::Result;
use crate::kernels::encode::{FloatLane, IntegerKernel};
use crate::kernels::quantize::IntegerQuantizer;
use crate::op_output::{AllocationGuard, Unbudgeted};
use crate::packing;
use crate::plan::Plan;
use crate::profile::{DequantizeArithmetic, Policy, Profile, QuantizeDivision, QuantizeSpecials};
use crate::round::{self, RoundingMode, RoundingOptions};
use crate::tensor::Tensor;
use crate::value::{Exact, Value};

/// Elements per pass through the scratch: a multiple of 4 (a byte boundary for every packing), small enough that the
/// scratch stays in cache.
const PASS_ELEMENTS: usize = 16384;

/// Runs of one scale shorter than this take [`Quantize::integer_short_runs`]: a call of the plan's
/// loop per run costs more than the run's arithmetic below it.
const SHORT_RUN: usize = 256;

/// Bytes of scratch a call uses besides its output and the decoded scales and zero points.
pub(crate) const SCRATCH_BYTES: usize = PASS_ELEMENTS * (4 + 8 + 8 + 8 + 4 + 2 + 8 + 8);

/// The integer range of an integer quantized type.
fn integer_range(dtype: DType) -> Option<(i64, i64)> {
    match dtype.kind() {
        // Quantized integer types have at most 16 bits: their bounds fit an i64.
        Kind::Integer { bits, signed } => {
            let (low, high) = crate::dtype::integer_bounds(bits, signed);
            Some((low as i64, high as i64))
        }
        _ => None,
    }
}

/// The plans of an arithmetic rounding (IEEE, `spec`): to `dtype` and back to float64.
struct Rounding {
    down: Plan,
    up: Plan,
}

impl Rounding {
    fn new(dtype: DType) -> Result<Option<Rounding>> {
        if dtype == DType::Double {
            return Ok(None);
        }
        let opts = CastOptions::default();
        Ok(Some(Rounding {
            down: Plan::new(DType::Double, dtype, &opts)?,
            up: Plan::new(dtype, DType::Double, &opts)?,
        }))
    }

    /// Rounds every lane to the precision once (nearest-even).
    fn apply(&self, lanes: &mut [f64], bytes: &mut Vec<u8>, wide: &mut Vec<u8>) -> Result<()> {
        let n = lanes.len();
        f64s_to_bytes(lanes, wide);
        bytes.resize(packing::raw_len(self.down.to(), n)?, 0);
        self.down.run(wide, bytes, n)?;
        self.up.run(bytes, wide, n)?;
        bytes_to_f64s(wide, lanes);
        Ok(())
    }
}

fn f64s_to_bytes(lanes: &[f64], out: &mut Vec<u8>) {
    out.resize(lanes.len() * 8, 0);
    for (b, x) in out.chunks_exact_mut(8).zip(lanes) {
        // An array store, not `copy_from_slice`: that one became a memmove call per element.
        if let Ok(bytes) = <&mut [u8; 8]>::try_from(b) {
            *bytes = x.to_le_bytes();
        }
    }
}

fn bytes_to_f64s(bytes: &[u8], out: &mut [f64]) {
    for (o, b) in out.iter_mut().zip(bytes.chunks_exact(8)) {
        *o = f64::from_le_bytes(b.try_into().expect("8 bytes"));
    }
}

/// Every element of a fixed-width tensor as float64 (exact: every quantization type, scale type
/// and input type is a float64 value).
fn values(t: &Tensor, what: &str, name: &str) -> Result<Vec<f64>> {
    if t.raw().is_none() {
        return Err(invalid(name, format!("{what} must be numeric, not {}", t.dtype())));
    }
    t.f64_values()
}

/// numpy's result type of a division or subtraction between two of these dtypes.
fn numpy_result(a: DType, b: DType) -> DType {
    if a == DType::Int32 || b == DType::Int32 || a == DType::Double || b == DType::Double {
        DType::Double
    } else if a == b && matches!(a, DType::Float16 | DType::Bfloat16 | DType::Float) {
        a
    } else {
        DType::Float
    }
}

/// QuantizeLinear adds `y_zero_point` to its quotient: always, except into float8 where the
/// profile decides (row `quantize.float8_adds_zero_point`).
fn adds_zero_point(policy: &Policy, target: DType) -> bool {
    !target.is_float8() || policy.quantize.float8_adds_zero_point
}

/// DequantizeLinear ignores `x_zero_point`: always for float8 inputs, for float4e2m1 where the
/// profile says so (row `quantize.dequantize_float4_ignores_zero_point`).
fn ignores_zero_point(policy: &Policy, x: DType) -> bool {
    x.is_float8() || (x == DType::Float4E2M1 && policy.quantize.dequantize_float4_ignores_zero_point)
}

/// The dtype in which `x / y_scale` is computed and rounded.
fn division_type(policy: &Policy, x: DType, scale: DType, precision: Option<DType>) -> DType {
    match policy.quantize.division {
        QuantizeDivision::ScaleType => precision.unwrap_or(match scale {
            DType::Int32 | DType::Float8E8M0 => numpy_result(x, scale),
            s => s,
        }),
        QuantizeDivision::NumpyPromotion => precision.unwrap_or_else(|| numpy_result(x, scale)),
        QuantizeDivision::Float32 => DType::Float,
    }
}

/// The profile's rules for NaN, ±Inf and quotients beyond int32 on this path:
/// `(specials, split_byte_specials)` of [`Quantize`].
fn specials_rules(
    policy: &Policy,
    x: DType,
    target: DType,
    groups: &Groups,
) -> (QuantizeSpecials, Option<QuantizeSpecials>) {
    // Blocked along an axis with elements after it: the scale changes from element to element.
    let blocked_before_inner = !groups.per_tensor && groups.inner > 1 && groups.inner_stride != 0;
    let (rule, split) = policy.quantize.specials_on(x, target, blocked_before_inner);
    let packs_pairs = target.packing() == Packing::Nibbles;
    (rule, (packs_pairs && split != rule).then_some(split))
}

/// A validated QuantizeLinear call.
pub(crate) struct Quantize {
    pub name: String,
    pub target: DType,
    pub groups: Groups,
    pub division: DType,
    pub saturate: bool,
    /// Integer targets: NaN, ±Inf and quotients beyond int32 (the profile's rule for this path).
    pub specials: QuantizeSpecials,
    /// Packed 4-bit targets where the profile has another rule for an element that shares its
    /// byte with no element of its scale (row `quantize.specials`, layout `SplitByte`).
    pub split_byte_specials: Option<QuantizeSpecials>,
    /// Float targets: the zero point is given and added to the quotient.
    pub adds_zero_point: bool,
}

fn quantize_checked(
    x: &Tensor,
    scale: &Tensor,
    zero_point: Option<&Tensor>,
    attrs: &QuantizeAttributes,
    opset: i64,
    profile: Profile,
) -> Result<Quantize> {
    let (schema, name) = schema_at("QuantizeLinear", &QUANTIZE_SCHEMAS, opset)?;
    let name = name.as_str();
    check_attributes(
        name,
        schema,
        &[
            ("axis", attrs.axis.is_some()),
            ("saturate", attrs.saturate.is_some()),
            ("block_size", attrs.block_size.is_some()),
            ("output_dtype", attrs.output_dtype.is_some()),
            ("precision", attrs.precision.is_some()),
        ],
    )?;
    check_type(name, "input x", x.dtype(), schema.inputs)?;
    check_type(name, "y_scale", scale.dtype(), schema.scales)?;
    if schema.scale_matches_input && scale.dtype() != x.dtype() {
        return Err(invalid(name, format!("y_scale must have the type of x ({}), not {}", x.dtype(), scale.dtype())));
    }
    let output_dtype = match attrs.output_dtype {
        None | Some(0) => None,
        Some(n) => Some(
            DType::from_onnx_number(n).map_err(|_| invalid(name, format!("output_dtype {n} is not a data type")))?,
        ),
    };
    let target = match (zero_point.map(Tensor::dtype), output_dtype) {
        (Some(z), Some(o)) if z != o => {
            return Err(invalid(name, format!("output_dtype {o} differs from the type of y_zero_point ({z})")))
        }
        (Some(z), _) => z,
        (None, Some(o)) => o,
        (None, None) => DType::Uint8,
    };
    check_type(name, "output (y_zero_point, output_dtype)", target, schema.quantized)?;
    let saturate = match attrs.saturate {
        None | Some(1) => true,
        Some(0) => false,
        Some(other) => return Err(invalid(name, format!("saturate must be 0 or 1, not {other}"))),
    };
    let precision = match attrs.precision {
        None | Some(0) => None,
        Some(n) => {
            let d =
                DType::from_onnx_number(n).map_err(|_| invalid(name, format!("precision {n} is not a data type")))?;
            check_type(name, "precision", d, &[DType::Float, DType::Float16, DType::Bfloat16])?;
            Some(d)
        }
    };
    let groups = groups(
        name,
        schema,
        x.shape(),
        scale.shape(),
        zero_point.map(Tensor::shape),
        attrs.axis,
        attrs.block_size,
        ("y_scale", "y_zero_point"),
    )?;
    let policy = profile.policy();
    let (specials, split_byte_specials) = specials_rules(policy, x.dtype(), target, &groups);
    Ok(Quantize {
        name: name.to_string(),
        target,
        groups,
        division: division_type(policy, x.dtype(), scale.dtype(), precision),
        saturate,
        specials,
        split_byte_specials,
        adds_zero_point: zero_point.is_some() && adds_zero_point(policy, target),
    })
}

/// ONNX `QuantizeLinear` at opset `opset`: `y = saturate(round(x / y_scale) + y_zero_point)`.
/// The types and attributes the version allows are checked first, then the shapes of the scale and
/// the zero point against `x` (per-tensor, per-axis with `axis`, blocked with `block_size`).
///
/// ```
/// use lowbit::quant::{quantize_linear, QuantizeAttributes};
/// use lowbit::{DType, Profile, Tensor};
///
/// let x = Tensor::from_f32(&[0.0, 1.0, -2.6, 300.0]);
/// let scale = Tensor::from_f32(&[0.5]).reshape(vec![])?; // per-tensor: a scalar
/// let zero_point = Tensor::from_codes(DType::Uint8, vec![], &[128])?;
/// let y = quantize_linear(&x, &scale, Some(&zero_point), &QuantizeAttributes::default(), 21, Profile::Spec)?;
/// // x / 0.5 = 0, 2, -5.2, 600; rounded (nearest even) 0, 2, -5, 600; + 128 = 128, 130, 123, 728;
/// // saturated to UINT8's [0, 255].
/// assert_eq!(y.dtype(), DType::Uint8);
/// assert_eq!(y.codes()?, [128, 130, 123, 255]);
/// # Ok::<(), lowbit::Error>(())
/// ```
pub fn quantize_linear(
    x: &Tensor,
    scale: &Tensor,
    zero_point: Option<&Tensor>,
    attrs: &QuantizeAttributes,
    opset: i64,
    profile: Profile,
) -> Result<Tensor> {
    quantize_guarded(x, scale, zero_point, attrs, opset, profile, &mut Unbudgeted)
}

/// [`quantize_linear`], telling `guard` about the output and the scratch before allocating them.
pub(crate) fn quantize_guarded(
    x: &Tensor,
    scale: &Tensor,
    zero_point: Option<&Tensor>,
    attrs: &QuantizeAttributes,
    opset: i64,
    profile: Profile,
    guard: &mut dyn AllocationGuard,
) -> Result<Tensor> {
    let q = quantize_checked(x, scale, zero_point, attrs, opset, profile)?;
    let n = x.len();
    let out_bytes = packing::raw_len(q.target, n)?;
    let (scales, zeros) = quantize_scales_and_zeros(&q, x.dtype(), scale, zero_point, (n, out_bytes), guard)?;
    let mut out = crate::op_output::zeroed(&q.name, out_bytes)?;
    let raw = x.raw().ok_or_else(|| invalid(&q.name, "x has no raw data"))?;
    q.run(x.dtype(), raw, n, scales, &zeros, &mut out, profile)?;
    Tensor::from_raw(q.target, x.shape().to_vec(), out)
}

/// [`quantize_linear`] into the caller's buffer (for timing the arithmetic without an allocation
/// each call, as `lowbit bench --quantize` does): `out` must have the packed size of `x.len()`
/// elements of the output type, which is returned (the zero point's type, else `output_dtype`,
/// else UINT8). Every byte of `out` is written.
pub fn quantize_linear_into(
    x: &Tensor,
    scale: &Tensor,
    zero_point: Option<&Tensor>,
    attrs: &QuantizeAttributes,
    opset: i64,
    profile: Profile,
    out: &mut [u8],
) -> Result<DType> {
    let q = quantize_checked(x, scale, zero_point, attrs, opset, profile)?;
    let n = x.len();
    let out_bytes = packing::raw_len(q.target, n)?;
    if out.len() != out_bytes {
        return Err(crate::error::Error::RawLength {
            dtype: q.target.onnx_name(),
            elements: n,
            expected: out_bytes,
            actual: out.len(),
        });
    }
    let (scales, zeros) = quantize_scales_and_zeros(&q, x.dtype(), scale, zero_point, (n, out_bytes), &mut Unbudgeted)?;
    let raw = x.raw().ok_or_else(|| invalid(&q.name, "x has no raw data"))?;
    q.run(x.dtype(), raw, n, scales, &zeros, out, profile)?;
    Ok(q.target)
}

/// Charges `guard` with the output (`elements`, `out_bytes`), the scale and zero point values and the scratch
/// of one call, then reads the scale's and the zero point's values (`names`; no zero point is 0).
fn scales_and_zeros(
    scale: &Tensor,
    zero_point: Option<&Tensor>,
    names: (&str, &str),
    op: &str,
    (elements, out_bytes): (usize, usize),
    guard: &mut dyn AllocationGuard,
) -> Result<(Vec<f64>, Vec<f64>)> {
    charge_scales(scale, (elements, out_bytes), guard)?;
    let scales = values(scale, names.0, op)?;
    Ok((scales, zero_values(zero_point, names.1, op)?))
}

/// [`scales_and_zeros`] for QuantizeLinear: a FLOAT scale of a float32 division is read as its
/// float32 values, which are the division's operands, with no float64 copy.
fn quantize_scales_and_zeros(
    q: &Quantize,
    x_dtype: DType,
    scale: &Tensor,
    zero_point: Option<&Tensor>,
    sizes: (usize, usize),
    guard: &mut dyn AllocationGuard,
) -> Result<(ScaleValues, Vec<f64>)> {
    let names = ("y_scale", "y_zero_point");
    if !(q.divides_in_float32(x_dtype) && scale.dtype() == DType::Float) {
        let (scales, zeros) = scales_and_zeros(scale, zero_point, names, &q.name, sizes, guard)?;
        return Ok((ScaleValues::Exact(scales), zeros));
    }
    charge_scales(scale, sizes, guard)?;
    let raw = scale.raw().ok_or_else(|| invalid(&q.name, "y_scale has no raw data"))?;
    let scales = raw.chunks_exact(4).map(|b| f32::from_le_bytes(b.try_into().expect("4 bytes"))).collect();
    Ok((ScaleValues::Float32(scales), zero_values(zero_point, names.1, &q.name)?))
}

fn charge_scales(scale: &Tensor, (elements, out_bytes): (usize, usize), guard: &mut dyn AllocationGuard) -> Result<()> {
    let charged = out_bytes.saturating_add(scale.len().saturating_mul(16)).saturating_add(SCRATCH_BYTES);
    guard.before_allocating(elements, charged)
}

fn zero_values(zero_point: Option<&Tensor>, name: &str, op: &str) -> Result<Vec<f64>> {
    match zero_point {
        Some(z) => values(z, name, op),
        None => Ok(vec![0.0]),
    }
}

/// [`packing::pack_u16`] compiled for the widest instruction set the CPU has (the 4-bit and 2-bit
/// packings vectorise far better with AVX2).
fn pack_codes(dtype: DType, codes: &[u16], raw: &mut [u8]) {
    struct Pack<'a> {
        dtype: DType,
        codes: &'a [u16],
        raw: &'a mut [u8],
    }
    impl crate::kernels::simd::Kernel for Pack<'_> {
        type Output = ();
        #[inline(always)]
        fn run(self) {
            packing::pack_u16(self.dtype, self.codes, self.raw);
        }
    }
    crate::kernels::simd::widest(Pack { dtype, codes, raw });
}

/// A QuantizeLinear scale's values.
pub(crate) enum ScaleValues {
    /// Exact, as float64 (every scale type's values are float64 values).
    Exact(Vec<f64>),
    /// A FLOAT scale's own values, for a division in float32.
    Float32(Vec<f32>),
}

/// Scratch of one call, reused chunk after chunk.
#[derive(Default)]
struct Scratch {
    indices: Vec<usize>,
    f32s: Vec<f32>,
    f64s: Vec<f64>,
    bytes: Vec<u8>,
    wide: Vec<u8>,
    ints: Vec<i32>,
    codes: Vec<u16>,
}

impl Quantize {
    /// Whether `x` of this dtype is divided in float32 (the fast path: float32 `x`, float32
    /// division precision).
    fn divides_in_float32(&self, x_dtype: DType) -> bool {
        x_dtype == DType::Float && self.division == DType::Float
    }

    /// Runs over `n` elements of `x` (raw data of `x_dtype`): `scales` and `zeros` are the scale's
    /// and zero point's values (`zeros` may hold one value for all).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn run(
        &self,
        x_dtype: DType,
        raw: &[u8],
        n: usize,
        scales: ScaleValues,
        zeros: &[f64],
        out: &mut [u8],
        profile: Profile,
    ) -> Result<()> {
        let spec = CastOptions::default();
        let fast = self.divides_in_float32(x_dtype);
        let rounding = Rounding::new(self.division)?;
        let mut s = Scratch::default();
        let (scales, scales32) = match scales {
            ScaleValues::Float32(scales32) if fast => (Vec::new(), scales32),
            ScaleValues::Float32(scales32) => (scales32.iter().map(|&v| f64::from(v)).collect(), Vec::new()),
            ScaleValues::Exact(scales) => {
                // Scales that are float32 values already (float16, bfloat16 and E8M0 scales all
                // are) are their own rounding to float32, the fast path's division precision:
                // taken as they are, without a round trip through the plans.
                let as_f32: Vec<f32> = if fast { scales.iter().map(|&v| v as f32).collect() } else { Vec::new() };
                let already = fast && as_f32.iter().zip(&scales).all(|(&a, &b)| f64::from(a) == b);
                // Otherwise the scales in the division precision (rounded once, as the operands
                // of the division are).
                let mut scales = if already { Vec::new() } else { scales };
                if let (Some(r), false) = (&rounding, already) {
                    r.apply(&mut scales, &mut s.bytes, &mut s.wide)?;
                }
                let scales32: Vec<f32> = match (already, fast) {
                    (true, _) => as_f32,
                    (false, true) => scales.iter().map(|&v| v as f32).collect(),
                    (false, false) => Vec::new(),
                };
                (scales, scales32)
            }
        };
        // x into the division precision, then widened (one plan when that precision is float64).
        let x_to_division = if fast { None } else { Some(Plan::new(x_dtype, self.division, &spec)?) };
        let division_to_f64 = match (&rounding, fast) {
            (Some(r), false) => Some(&r.up),
            _ => None,
        };
        let target_opts = CastOptions { saturate: self.saturate, profile, ..CastOptions::default() };
        let integer = integer_range(self.target);
        let target_plan = match integer {
            Some(_) => None,
            None => Some(Plan::new(if fast { DType::Float } else { DType::Double }, self.target, &target_opts)?),
        };
        let kernel = IntegerKernel { mode: RoundingMode::NearestEven, mask: self.target.code_mask() };
        // Split bytes exist only where some byte pairs two scales, or the count is odd.
        let split = self.split_byte_specials.filter(|_| !(self.groups.pairs_share_scale() && n % 2 == 0));
        let x_width = (x_dtype.bits().expect("fixed width") / 8) as usize;
        let mut start = 0;
        while start < n {
            let len = PASS_ELEMENTS.min(n - start);
            let src = &raw[start * x_width..(start + len) * x_width];
            let dst = &mut out[packing::raw_len(self.target, start)?..packing::raw_len(self.target, start + len)?];
            // Runs of elements sharing a scale, found from the geometry: long enough to pay for a
            // loop each (per tensor, per axis over a long inner extent, blocks along the last axis).
            let by_runs = fast && split.is_none() && self.groups.run_length() >= 8;
            if by_runs
                && self.groups.run_length() < SHORT_RUN
                && self.integer_short_runs(src, &scales32, zeros, start, integer, &mut s, dst)
            {
                start += len;
                continue;
            }
            if by_runs && self.integer_runs(src, &scales32, zeros, start, integer, &mut s.codes, dst) {
                start += len;
                continue;
            }
            if by_runs && self.float_runs(src, &scales32, zeros, start, &mut s.bytes) {
                target_plan.as_ref().expect("float targets have a plan").run(&s.bytes, dst, len)?;
                start += len;
                continue;
            }
            s.indices.resize(len, 0);
            if !self.groups.per_tensor {
                self.groups.indices(start, &mut s.indices);
            }
            if fast {
                s.f32s.resize(len, 0.0);
                if self.groups.per_tensor {
                    let d = scales32[0];
                    for (q, b) in s.f32s.iter_mut().zip(src.chunks_exact(4)) {
                        *q = f32::from_le_bytes(b.try_into().expect("4 bytes")) / d;
                    }
                } else {
                    for ((q, b), &k) in s.f32s.iter_mut().zip(src.chunks_exact(4)).zip(&s.indices) {
                        *q = f32::from_le_bytes(b.try_into().expect("4 bytes")) / scales32[k];
                    }
                }
                self.finish(
                    &mut s.f32s,
                    zeros,
                    &mut s.indices,
                    &kernel,
                    integer,
                    split,
                    target_plan.as_ref(),
                    dst,
                    &mut s.bytes,
                    &mut s.ints,
                    &mut s.codes,
                )?;
            } else {
                s.f64s.resize(len, 0.0);
                let to_division = x_to_division.as_ref().expect("built when not fast");
                s.bytes.resize(packing::raw_len(self.division, len)?, 0);
                to_division.run(src, &mut s.bytes, len)?;
                match division_to_f64 {
                    Some(up) => {
                        s.wide.resize(len * 8, 0);
                        up.run(&s.bytes, &mut s.wide, len)?;
                        bytes_to_f64s(&s.wide, &mut s.f64s);
                    }
                    None => bytes_to_f64s(&s.bytes, &mut s.f64s),
                }
                for (q, &k) in s.f64s.iter_mut().zip(&s.indices) {
                    *q /= scales[k];
                }
                if let Some(r) = &rounding {
                    r.apply(&mut s.f64s, &mut s.bytes, &mut s.wide)?;
                }
                self.finish(
                    &mut s.f64s,
                    zeros,
                    &mut s.indices,
                    &kernel,
                    integer,
                    split,
                    target_plan.as_ref(),
                    dst,
                    &mut s.bytes,
                    &mut s.ints,
                    &mut s.codes,
                )?;
            }
            start += len;
        }
        Ok(())
    }

    /// float32 `x` into an integer target under [`QuantizeSpecials::SaturateNanToMin`]: the plan's
    /// quantizing loop over each run of elements that share a scale and a zero point (elements
    /// `start..start + len` of `x`, `len` being `src`'s), into `dst` (one-byte targets straight,
    /// others through `codes`). Returns false where the loop does not apply: the general path
    /// then writes the whole chunk again.
    #[allow(clippy::too_many_arguments)]
    fn integer_runs(
        &self,
        src: &[u8],
        scales: &[f32],
        zeros: &[f64],
        start: usize,
        integer: Option<(i64, i64)>,
        codes: &mut Vec<u16>,
        dst: &mut [u8],
    ) -> bool {
        let Some((qmin, qmax)) = integer else { return false };
        if self.specials != QuantizeSpecials::SaturateNanToMin {
            return false;
        }
        let len = src.len() / 4;
        let mask = self.target.code_mask() as u16;
        let one_byte = self.target.packing() == Packing::Bytes(1);
        if !one_byte {
            codes.resize(len, 0);
        }
        let mut applies = true;
        self.groups.for_each_run(start, len, |at, run, k| {
            let zero = zeros[if zeros.len() == 1 { 0 } else { k }];
            let src = &src[4 * at..4 * (at + run)];
            match IntegerQuantizer::new(scales[k], zero as i32, qmin as i32, qmax as i32, mask) {
                Some(q) if applies && one_byte => q.run_bytes(src, &mut dst[at..at + run]),
                Some(q) if applies => q.run(src, &mut codes[at..at + run]),
                _ => applies = false,
            }
        });
        if applies && !one_byte {
            pack_codes(self.target, codes, dst);
        }
        applies
    }

    /// [`Quantize::integer_runs`] for runs too short to pay for a call of the plan's loop each
    /// (blocks of 32) with one zero point for all: the float32 quotients of every run first, each
    /// run a loop of its own scale, then the plan's loop once over the chunk with divisor 1 (exact:
    /// `q / 1 = q`), which clamps, rounds and adds the zero point as it does per run.
    #[allow(clippy::too_many_arguments)]
    fn integer_short_runs(
        &self,
        src: &[u8],
        scales: &[f32],
        zeros: &[f64],
        start: usize,
        integer: Option<(i64, i64)>,
        s: &mut Scratch,
        dst: &mut [u8],
    ) -> bool {
        let Some((qmin, qmax)) = integer else { return false };
        if self.specials != QuantizeSpecials::SaturateNanToMin || zeros.len() != 1 {
            return false;
        }
        let mask = self.target.code_mask() as u16;
        let Some(quantizer) = IntegerQuantizer::new(1.0, zeros[0] as i32, qmin as i32, qmax as i32, mask) else {
            return false;
        };
        let len = src.len() / 4;
        // Blocks of 32 (ONNX's usual block size) along the last axis: element i's scale is
        // scale i / 32, and one pass divides each block by its scale inside the quantizing loop
        // (one-byte targets written straight to `dst`).
        const BLOCK: usize = 32;
        if self.groups.is_blocks_of(BLOCK) && start % BLOCK == 0 && len % BLOCK == 0 {
            let divisors = &scales[start / BLOCK..(start + len) / BLOCK];
            if self.target.packing() == Packing::Bytes(1) {
                quantizer.run_blocks_of_32_bytes(src, divisors, dst);
            } else {
                s.codes.resize(len, 0);
                quantizer.run_blocks_of_32(src, divisors, &mut s.codes);
                pack_codes(self.target, &s.codes, dst);
            }
            return true;
        }
        s.bytes.resize(4 * len, 0);
        let quotients = &mut s.bytes;
        self.groups.for_each_run(start, len, |at, run, k| {
            let d = scales[k];
            let (out, from) = (&mut quotients[4 * at..4 * (at + run)], &src[4 * at..4 * (at + run)]);
            for (o, b) in out.chunks_exact_mut(4).zip(from.chunks_exact(4)) {
                o.copy_from_slice(&(f32::from_le_bytes(b.try_into().expect("4 bytes")) / d).to_le_bytes());
            }
        });
        if self.target.packing() == Packing::Bytes(1) {
            quantizer.run_bytes(&s.bytes, dst);
        } else {
            s.codes.resize(len, 0);
            quantizer.run(&s.bytes, &mut s.codes);
            pack_codes(self.target, &s.codes, dst);
        }
        true
    }

    /// float32 `x` into a float target: the float32 quotients (plus the zero point where the
    /// profile adds it) written straight into `bytes` for the target's plan, one loop per run of
    /// elements sharing a scale (elements `start..start + len` of `x`, `len` being `src`'s).
    /// Returns false (the general path) for an integer target.
    fn float_runs(&self, src: &[u8], scales: &[f32], zeros: &[f64], start: usize, bytes: &mut Vec<u8>) -> bool {
        if integer_range(self.target).is_some() {
            return false;
        }
        let len = src.len() / 4;
        bytes.resize(4 * len, 0);
        self.groups.for_each_run(start, len, |at, run, k| {
            let d = scales[k];
            let (out, from) = (&mut bytes[4 * at..4 * (at + run)], &src[4 * at..4 * (at + run)]);
            if self.adds_zero_point {
                // Zero points are float4/float6/float8 values: exact in float32.
                let z = zeros[if zeros.len() == 1 { 0 } else { k }] as f32;
                for (o, b) in out.chunks_exact_mut(4).zip(from.chunks_exact(4)) {
                    o.copy_from_slice(&(f32::from_le_bytes(b.try_into().expect("4 bytes")) / d + z).to_le_bytes());
                }
            } else {
                for (o, b) in out.chunks_exact_mut(4).zip(from.chunks_exact(4)) {
                    o.copy_from_slice(&(f32::from_le_bytes(b.try_into().expect("4 bytes")) / d).to_le_bytes());
                }
            }
        });
        true
    }

    /// Quotients to output codes: the zero point and the target's conversion.
    #[allow(clippy::too_many_arguments)]
    fn finish<L: Lane>(
        &self,
        quotients: &mut [L],
        zeros: &[f64],
        indices: &mut [usize],
        kernel: &IntegerKernel,
        integer: Option<(i64, i64)>,
        split: Option<QuantizeSpecials>,
        target_plan: Option<&Plan>,
        dst: &mut [u8],
        bytes: &mut Vec<u8>,
        ints: &mut Vec<i32>,
        codes: &mut Vec<u16>,
    ) -> Result<()> {
        let len = quotients.len();
        match integer {
            Some((qmin, qmax)) => {
                if let Some(split) = split {
                    // The split bytes' rule for every element first, on a copy (the other rule
                    // clamps the quotients in place), then kept where the element's byte partner
                    // has another scale or, at the end of the tensor, there is none (chunks start
                    // at even elements).
                    let mut copy = quotients.to_vec();
                    let mut split_codes = Vec::new();
                    self.integer_codes(split, &mut copy, zeros, indices, kernel, (qmin, qmax), ints, &mut split_codes);
                    self.integer_codes(self.specials, quotients, zeros, indices, kernel, (qmin, qmax), ints, codes);
                    for k in 0..len {
                        let partner = k ^ 1;
                        if partner >= len || indices[partner] != indices[k] {
                            codes[k] = split_codes[k];
                        }
                    }
                } else {
                    self.integer_codes(self.specials, quotients, zeros, indices, kernel, (qmin, qmax), ints, codes);
                }
                pack_codes(self.target, codes, dst);
            }
            None => {
                let zero_at = |k: usize| zeros[if zeros.len() == 1 { 0 } else { indices[k] }];
                // Added even when zero: -0 + 0 is +0, as the implementations that add give.
                if self.adds_zero_point {
                    for (k, q) in quotients.iter_mut().enumerate() {
                        *q = q.plus(zero_at(k));
                    }
                }
                L::to_bytes(quotients, bytes);
                target_plan.expect("float targets have a plan").run(bytes, dst, len)?;
            }
        }
        Ok(())
    }

    /// Quotients to integer codes under `rule` (the zero point added, the result clamped).
    #[allow(clippy::too_many_arguments)]
    fn integer_codes<L: Lane>(
        &self,
        rule: QuantizeSpecials,
        quotients: &mut [L],
        zeros: &[f64],
        indices: &[usize],
        kernel: &IntegerKernel,
        (qmin, qmax): (i64, i64),
        ints: &mut Vec<i32>,
        codes: &mut Vec<u16>,
    ) {
        let len = quotients.len();
        let zero_at = |k: usize| zeros[if zeros.len() == 1 { 0 } else { indices[k] }];
        ints.resize(len, 0);
        codes.resize(len, 0);
        let mask = self.target.code_mask() as i64;
        match rule {
            QuantizeSpecials::SaturateNanToMin => {
                // saturate(round(q) + z) = round(clamp(q, qmin - z, qmax - z)) + z, as the
                // bounds are integers; clamping first keeps every lane in the kernel's
                // range, and a NaN lane clamps to the low bound (qmin), as the row says.
                if zeros.len() == 1 {
                    let z = zeros[0];
                    let (low, high) = (qmin as f64 - z, qmax as f64 - z);
                    for q in quotients.iter_mut() {
                        *q = q.clamp_nan_low(low, high);
                    }
                    kernel.round(quotients, ints);
                    let z = z as i32;
                    for (c, &r) in codes.iter_mut().zip(ints.iter()) {
                        *c = (i64::from(r + z) & mask) as u16;
                    }
                } else {
                    for (k, q) in quotients.iter_mut().enumerate() {
                        let z = zero_at(k);
                        *q = q.clamp_nan_low(qmin as f64 - z, qmax as f64 - z);
                    }
                    kernel.round(quotients, ints);
                    for (k, (c, &r)) in codes.iter_mut().zip(ints.iter()).enumerate() {
                        *c = (i64::from(r + zero_at(k) as i32) & mask) as u16;
                    }
                }
            }
            QuantizeSpecials::Int32Wraparound => {
                kernel.round(quotients, ints);
                for (k, ((c, &r), &q)) in codes.iter_mut().zip(ints.iter()).zip(quotients.iter()).enumerate() {
                    let r = if q.fits_i32() { r } else { i32::MIN };
                    let v = i64::from(r.wrapping_add(zero_at(k) as i32)).clamp(qmin, qmax);
                    *c = (v & mask) as u16;
                }
            }
        }
    }
}

/// The lanes quotients are held in: float32 (the fast path) or float64.
trait Lane: FloatLane {
    /// `self` clamped to `[low, high]` (integers of the lane's type), NaN to `low`.
    fn clamp_nan_low(self, low: f64, high: f64) -> Self;
    /// `self + z`, rounded to the lane's type.
    fn plus(self, z: f64) -> Self;
    fn to_bytes(lanes: &[Self], out: &mut Vec<u8>);
}

impl Lane for f32 {
    fn clamp_nan_low(self, low: f64, high: f64) -> f32 {
        // `max` returns the other operand for a NaN lane.
        self.max(low as f32).min(high as f32)
    }
    fn plus(self, z: f64) -> f32 {
        // Zero points are float4/float6/float8 values: exact in float32.
        self + z as f32
    }
    fn to_bytes(lanes: &[f32], out: &mut Vec<u8>) {
        out.resize(lanes.len() * 4, 0);
        for (b, x) in out.chunks_exact_mut(4).zip(lanes) {
            b.copy_from_slice(&x.to_le_bytes());
        }
    }
}

impl Lane for f64 {
    fn clamp_nan_low(self, low: f64, high: f64) -> f64 {
        self.max(low).min(high)
    }
    fn plus(self, z: f64) -> f64 {
        self + z
    }
    fn to_bytes(lanes: &[f64], out: &mut Vec<u8>) {
        f64s_to_bytes(lanes, out);
    }
}

/// A validated DequantizeLinear call.
struct Dequantize {
    name: String,
    output: DType,
    groups: Groups,
    subtract_zero_point: bool,
}

fn dequantize_checked(
    x: &Tensor,
    scale: &Tensor,
    zero_point: Option<&Tensor>,
    attrs: &DequantizeAttributes,
    opset: i64,
    profile: Profile,
) -> Result<Dequantize> {
    let (schema, name) = schema_at("DequantizeLinear", &DEQUANTIZE_SCHEMAS, opset)?;
    let name = name.as_str();
    check_attributes(
        name,
        schema,
        &[
            ("axis", attrs.axis.is_some()),
            ("block_size", attrs.block_size.is_some()),
            ("output_dtype", attrs.output_dtype.is_some()),
        ],
    )?;
    check_type(name, "input x", x.dtype(), schema.inputs)?;
    check_type(name, "x_scale", scale.dtype(), schema.scales)?;
    if let Some(z) = zero_point {
        if z.dtype() != x.dtype() {
            return Err(invalid(
                name,
                format!("x_zero_point must have the type of x ({}), not {}", x.dtype(), z.dtype()),
            ));
        }
    }
    let output = match attrs.output_dtype {
        None | Some(0) if schema.version < 19 => DType::Float,
        None | Some(0) => scale.dtype(),
        Some(n) => {
            DType::from_onnx_number(n).map_err(|_| invalid(name, format!("output_dtype {n} is not a data type")))?
        }
    };
    let output_role = if attrs.output_dtype.is_some() { "output_dtype" } else { "output (the type of x_scale)" };
    check_type(name, output_role, output, schema.outputs)?;
    let groups = groups(
        name,
        schema,
        x.shape(),
        scale.shape(),
        zero_point.map(Tensor::shape),
        attrs.axis,
        attrs.block_size,
        ("x_scale", "x_zero_point"),
    )?;
    let policy = profile.policy();
    let subtract_zero_point = zero_point.is_some() && !ignores_zero_point(policy, x.dtype());
    Ok(Dequantize { name: name.to_string(), output, groups, subtract_zero_point })
}

/// ONNX `DequantizeLinear` at opset `opset`: `y = (x - x_zero_point) * x_scale`, in the output
/// type (`output_dtype`, else the scale's type).
pub fn dequantize_linear(
    x: &Tensor,
    scale: &Tensor,
    zero_point: Option<&Tensor>,
    attrs: &DequantizeAttributes,
    opset: i64,
    profile: Profile,
) -> Result<Tensor> {
    dequantize_guarded(x, scale, zero_point, attrs, opset, profile, &mut Unbudgeted)
}

/// [`dequantize_linear`], telling `guard` about the output and the scratch before allocating them.
pub(crate) fn dequantize_guarded(
    x: &Tensor,
    scale: &Tensor,
    zero_point: Option<&Tensor>,
    attrs: &DequantizeAttributes,
    opset: i64,
    profile: Profile,
    guard: &mut dyn AllocationGuard,
) -> Result<Tensor> {
    let d = dequantize_checked(x, scale, zero_point, attrs, opset, profile)?;
    let n = x.len();
    let out_bytes = packing::raw_len(d.output, n)?;
    let (scales, zeros) =
        scales_and_zeros(scale, zero_point, ("x_scale", "x_zero_point"), &d.name, (n, out_bytes), guard)?;
    if x.dtype().is_float8() && zeros.iter().any(|&z| z != 0.0) {
        // Both implementations refuse it (the onnx reference and onnxruntime).
        return Err(invalid(&d.name, format!("x_zero_point of a {} input must be zero", x.dtype())));
    }
    let mut out = crate::op_output::zeroed(&d.name, out_bytes)?;
    let raw = x.raw().ok_or_else(|| invalid(&d.name, "x has no raw data"))?;
    d.run(x.dtype(), scale.dtype(), zero_point.map(Tensor::dtype), raw, n, &scales, &zeros, &mut out, profile)?;
    Tensor::from_raw(d.output, x.shape().to_vec(), out)
}

/// Per-tensor `QuantizeLinear` (saturate=1, a FLOAT scale, the zero point given) of `n` float32
/// values (`raw`, little-endian) into `out` (the target's raw data): the same arithmetic as
/// [`quantize_linear`] with scalar `y_scale` and `y_zero_point`, without tensors, for the bulk API
/// ([`crate::bulk`]), which calls it piece by piece.
pub(crate) fn quantize_per_tensor(
    raw: &[u8],
    n: usize,
    scale: f32,
    zero_point: f64,
    target: DType,
    profile: Profile,
    out: &mut [u8],
) -> Result<()> {
    let policy = profile.policy();
    let (specials, split_byte_specials) = specials_rules(policy, DType::Float, target, &Groups::PER_TENSOR);
    let q = Quantize {
        name: "QuantizeLinear".into(),
        target,
        groups: Groups::PER_TENSOR,
        division: division_type(policy, DType::Float, DType::Float, None),
        saturate: true,
        specials,
        split_byte_specials,
        adds_zero_point: adds_zero_point(policy, target),
    };
    q.run(DType::Float, raw, n, ScaleValues::Float32(vec![scale]), &[zero_point], out, profile)
}

/// Per-tensor `DequantizeLinear` to FLOAT (a FLOAT scale, the zero point given) for the bulk API
/// ([`crate::bulk`]): [`dequantize_linear`] with scalar `x_scale` and `x_zero_point`, without
/// tensors, its plans built once and run piece by piece.
pub(crate) struct PerTensorDequantizer {
    op: Dequantize,
    plans: DequantizePlans,
    scratch: DequantizeScratch,
    x_dtype: DType,
    scale: f64,
    zero_point: f64,
    profile: Profile,
    /// For inputs stored one, two or four elements to a byte: the outputs of every byte, computed
    /// once by the exact path (every profile's rule is a function of the element's value alone,
    /// so a byte's outputs do not depend on where it lies).
    by_byte: Option<ByteOutputs>,
    /// The float32 bytes of the exact path, kept between calls.
    exact_out: Vec<u8>,
}

/// The float32 outputs of each of the 256 bytes of a byte-wide, nibble-packed or crumb-packed
/// input (one, two or four elements to a byte).
enum ByteOutputs {
    One(Vec<f32>),
    Two(Vec<[f32; 2]>),
    Four(Vec<[f32; 4]>),
}

impl ByteOutputs {
    /// The table from the outputs of the 256 bytes in order (`256 * K` values).
    fn new(per_byte: usize, values: &[f32]) -> Option<ByteOutputs> {
        fn rows<const K: usize>(values: &[f32]) -> Vec<[f32; K]> {
            values.chunks_exact(K).map(|c| core::array::from_fn(|i| c[i])).collect()
        }
        match per_byte {
            1 => Some(ByteOutputs::One(values.to_vec())),
            2 => Some(ByteOutputs::Two(rows(values))),
            4 => Some(ByteOutputs::Four(rows(values))),
            _ => None,
        }
    }

    fn spread(&self, raw: &[u8], out: &mut [f32]) {
        /// Whole bytes a row at a time (`K` is a constant, so each row is `K` stores), then the
        /// elements of a last, partly used byte.
        fn spread<const K: usize>(rows: &[[f32; K]], raw: &[u8], out: &mut [f32]) {
            let last_byte = out.len() / K;
            let mut whole = out.chunks_exact_mut(K);
            for (o, &byte) in (&mut whole).zip(raw) {
                o.copy_from_slice(&rows[usize::from(byte)]);
            }
            let rest = whole.into_remainder();
            if !rest.is_empty() {
                let row = &rows[usize::from(raw[last_byte])];
                rest.copy_from_slice(&row[..rest.len()]);
            }
        }
        match self {
            ByteOutputs::One(values) => {
                let raw = &raw[..out.len()];
                for (o, &byte) in out.iter_mut().zip(raw) {
                    *o = values[usize::from(byte)];
                }
            }
            ByteOutputs::Two(rows) => spread(rows, raw, out),
            ByteOutputs::Four(rows) => spread(rows, raw, out),
        }
    }
}

/// Elements below which building [`ByteOutputs`] (256 bytes through the exact path) costs more
/// than it saves.
const BYTE_TABLE_MIN_ELEMENTS: usize = 4096;

impl PerTensorDequantizer {
    /// A dequantizer for about `elements` elements (a byte table is built where it pays).
    pub(crate) fn new(x_dtype: DType, scale: f32, zero_point: f64, profile: Profile, elements: usize) -> Result<Self> {
        let name = "DequantizeLinear";
        if x_dtype.is_float8() && zero_point != 0.0 {
            // As dequantize_guarded: both implementations refuse it.
            return Err(invalid(name, format!("x_zero_point of a {x_dtype} input must be zero")));
        }
        let policy = profile.policy();
        let ignored = ignores_zero_point(policy, x_dtype);
        let op = Dequantize {
            name: name.into(),
            output: DType::Float,
            groups: Groups::PER_TENSOR,
            subtract_zero_point: !ignored,
        };
        let plans = op.plans(x_dtype, profile)?;
        let mut dequantizer = PerTensorDequantizer {
            op,
            plans,
            scratch: DequantizeScratch::default(),
            x_dtype,
            scale: f64::from(scale),
            zero_point,
            profile,
            by_byte: None,
            exact_out: Vec::new(),
        };
        let per_byte = match x_dtype.packing() {
            Packing::Bytes(1) => Some(1),
            Packing::Nibbles => Some(2),
            Packing::Crumbs => Some(4),
            _ => None,
        };
        if let Some(per_byte) = per_byte.filter(|_| elements >= BYTE_TABLE_MIN_ELEMENTS) {
            let every_byte: Vec<u8> = (0..=255).collect();
            let mut out = vec![0u8; 4 * 256 * per_byte];
            dequantizer.run_exact(&every_byte, 256 * per_byte, &mut out)?;
            let values: Vec<f32> = out.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
            dequantizer.by_byte = ByteOutputs::new(per_byte, &values);
        }
        Ok(dequantizer)
    }

    /// `out.len()` elements of the input dtype (`raw`) into `out`.
    pub(crate) fn run_into_f32(&mut self, raw: &[u8], out: &mut [f32]) -> Result<()> {
        let n = out.len();
        let Some(table) = &self.by_byte else {
            let mut bytes = core::mem::take(&mut self.exact_out);
            bytes.resize(4 * n, 0);
            let run = self.run_exact(raw, n, &mut bytes);
            for (o, b) in out.iter_mut().zip(bytes.chunks_exact(4)) {
                *o = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            }
            self.exact_out = bytes;
            return run;
        };
        table.spread(raw, out);
        Ok(())
    }

    fn run_exact(&mut self, raw: &[u8], n: usize, out: &mut [u8]) -> Result<()> {
        let (scales, zeros) = ([self.scale], [self.zero_point]);
        let types = (self.x_dtype, DType::Float, Some(self.x_dtype));
        self.op.run_with(&self.plans, &mut self.scratch, types, raw, n, &scales, &zeros, out, self.profile)
    }
}

/// Significant bits a value of `dtype` can have (for deciding whether a float64 product is exact).
fn significant_bits(dtype: DType) -> u32 {
    match dtype.kind() {
        Kind::Float(f) => f.mantissa_bits + 1,
        Kind::Integer { bits, .. } => bits,
        _ => 64,
    }
}

/// `d * s` exactly (both finite float64 values), as the core's exact value.
fn exact_product(d: f64, s: f64) -> Value {
    let parts = |v: f64| -> (bool, u64, i32) {
        let bits = v.to_bits();
        let exponent = ((bits >> 52) & 0x7FF) as i32;
        let fraction = bits & ((1u64 << 52) - 1);
        let (m, e) = if exponent == 0 { (fraction, -1074) } else { (fraction | 1 << 52, exponent - 1075) };
        (v.is_sign_negative(), m, e)
    };
    let (nd, md, ed) = parts(d);
    let (ns, ms, es) = parts(s);
    let product = u128::from(md) * u128::from(ms);
    // Keep 64 significant bits; what is shifted out becomes the sticky bit.
    let shift = (128 - product.leading_zeros()).saturating_sub(64);
    let kept = (product >> shift) as u64;
    let sticky = shift > 0 && product & ((1u128 << shift) - 1) != 0;
    Value::Finite(Exact { negative: nd != ns, significand: kept, exponent: ed + es + shift as i32, sticky })
}

/// The two plans of a dequantization: the input to float64 (exact), float64 to the output.
/// Built once per run (or once for every piece of a bulk call): building a plan costs far more
/// than running it over a piece.
struct DequantizePlans {
    to_f64: Plan,
    out_plan: Plan,
}

/// The per-chunk buffers of a dequantization, kept across the pieces of a bulk call: each is a
/// chunk of 16,384 eight-byte lanes, large enough that allocating it anew for every piece costs
/// page faults.
#[derive(Default)]
struct DequantizeScratch {
    indices: Vec<usize>,
    lanes: Vec<f64>,
    wide: Vec<u8>,
}

impl Dequantize {
    fn plans(&self, x_dtype: DType, profile: Profile) -> Result<DequantizePlans> {
        let spec = CastOptions::default();
        let out_plan = match profile.policy().quantize.dequantize_arithmetic {
            // The exact product is rounded by the IEEE rule; the implementations' own conversions
            // follow the profile.
            DequantizeArithmetic::Exact => Plan::new(DType::Double, self.output, &spec)?,
            _ => Plan::new(DType::Double, self.output, &CastOptions::with_profile(profile))?,
        };
        Ok(DequantizePlans { to_f64: Plan::new(x_dtype, DType::Double, &spec)?, out_plan })
    }

    #[allow(clippy::too_many_arguments)]
    fn run(
        &self,
        x_dtype: DType,
        scale_dtype: DType,
        zero_dtype: Option<DType>,
        raw: &[u8],
        n: usize,
        scales: &[f64],
        zeros: &[f64],
        out: &mut [u8],
        profile: Profile,
    ) -> Result<()> {
        let plans = self.plans(x_dtype, profile)?;
        let scratch = &mut DequantizeScratch::default();
        self.run_with(&plans, scratch, (x_dtype, scale_dtype, zero_dtype), raw, n, scales, zeros, out, profile)
    }

    /// [`Dequantize::run`] with its plans built and its buffers given; `types` are the input's,
    /// the scale's and the zero point's dtypes.
    #[allow(clippy::too_many_arguments)]
    fn run_with(
        &self,
        plans: &DequantizePlans,
        scratch: &mut DequantizeScratch,
        types: (DType, DType, Option<DType>),
        raw: &[u8],
        n: usize,
        scales: &[f64],
        zeros: &[f64],
        out: &mut [u8],
        profile: Profile,
    ) -> Result<()> {
        let (x_dtype, scale_dtype, zero_dtype) = types;
        let arithmetic = profile.policy().quantize.dequantize_arithmetic;
        let (to_f64, out_plan) = (&plans.to_f64, &plans.out_plan);
        let difference_bits = if self.subtract_zero_point && !matches!(x_dtype.kind(), Kind::Integer { .. }) {
            64
        } else {
            significant_bits(x_dtype) + 1
        };
        let product_exact = difference_bits + significant_bits(scale_dtype) <= 53;
        let format = self.output.float_format().expect("outputs are float types");
        // numpy: x - zero point is float64 when either is int32, the product float64 when the
        // difference is.
        let numpy_wide = x_dtype == DType::Int32 && (self.subtract_zero_point && zero_dtype == Some(DType::Int32));
        scratch.indices.resize(PASS_ELEMENTS.min(n), 0);
        scratch.lanes.resize(PASS_ELEMENTS.min(n), 0.0);
        let DequantizeScratch { indices, lanes, wide } = scratch;
        let mut start = 0;
        while start < n {
            let len = PASS_ELEMENTS.min(n - start);
            let src = &raw[packing::raw_len(x_dtype, start)?..packing::raw_len(x_dtype, start + len)?];
            let dst = &mut out[packing::raw_len(self.output, start)?..packing::raw_len(self.output, start + len)?];
            self.groups.indices(start, &mut indices[..len]);
            wide.resize(len * 8, 0);
            to_f64.run(src, wide, len)?;
            let lanes = &mut lanes[..len];
            bytes_to_f64s(wide, lanes);
            let zero = |k: usize| {
                if self.subtract_zero_point {
                    zeros[if zeros.len() == 1 { 0 } else { indices[k] }]
                } else {
                    0.0
                }
            };
            let scale = |k: usize| scales[indices[k]];
            match arithmetic {
                DequantizeArithmetic::Exact
                    if product_exact || x_dtype.float_format().is_some() && !self.subtract_zero_point =>
                {
                    for (k, v) in lanes.iter_mut().enumerate() {
                        *v = (*v - zero(k)) * scale(k);
                    }
                }
                DequantizeArithmetic::Exact => {
                    // The float64 product may round: each element goes to the core exactly.
                    let opts = RoundingOptions::IEEE;
                    for (k, &x) in lanes.iter().enumerate() {
                        let d = x - zero(k);
                        let value = if d.is_finite() && scale(k).is_finite() && d != 0.0 && scale(k) != 0.0 {
                            exact_product(d, scale(k))
                        } else {
                            Value::from_f64(d * scale(k))
                        };
                        packing::set(self.output, dst, k, round::encode(format, value, opts));
                    }
                    start += len;
                    continue;
                }
                DequantizeArithmetic::Numpy => {
                    for (k, v) in lanes.iter_mut().enumerate() {
                        let x32 = f64::from(*v as f32);
                        if numpy_wide {
                            *v = (x32 - zero(k)) * scale(k);
                        } else {
                            let d = f64::from((x32 - zero(k)) as f32);
                            *v = f64::from((d * scale(k)) as f32);
                        }
                    }
                }
                DequantizeArithmetic::Float32 => {
                    for (k, v) in lanes.iter_mut().enumerate() {
                        let d = if matches!(x_dtype.kind(), Kind::Integer { .. }) {
                            (*v as i64 - zero(k) as i64) as i32 as f32
                        } else {
                            (*v - zero(k)) as f32
                        };
                        *v = f64::from(d * scale(k) as f32);
                    }
                }
            }
            f64s_to_bytes(lanes, wide);
            out_plan.run(wide, dst, len)?;
            start += len;
        }
        Ok(())
    }
}
