//! The recipe rows' arithmetic, one block or one element at a time: block maxima, each block's
//! scale under the row's rule, the factor its elements are scaled by, and the element rules the
//! rounding core is not asked for (ggml's integer and nearest-value rules, NaN codes). The
//! engine (the definition) and the fused kernels both call these; neither is called from here.

use super::recipes::{
    Amax, ElementStep, GlobalRule, NanElement, Pow2, ProductNan, Recipe, ScaleFormat, ScaleRule, ZeroScale,
};
use crate::alloc_prelude::*;
use crate::convert::{convert_code, CastOptions};
use crate::dtype::DType;
use crate::error::Result;
use crate::format;
use crate::packing;
use crate::plan::Plan;
use crate::round::{self, RoundingMode, RoundingOptions};
use crate::value::Value;
use crate::Profile;

/// NVFP4's per-tensor constant: E4M3's largest value times E2M1's (448 * 6).
pub(super) const NVFP4_GLOBAL_DIVISOR: f32 = 2688.0;
/// float32's and bfloat16's smallest normal (`torch.finfo(dtype).tiny`).
pub(super) const TINY: f32 = 1.1754944e-38;
/// ggml's `kvalues_mxfp4`: the E2M1 values doubled, indexed by the E2M1 code.
pub(super) const GGML_KVALUES: [f32; 16] = [0., 1., 2., 3., 4., 6., 8., 12., 0., -1., -2., -3., -4., -6., -8., -12.];

/// The row's cast options: ONNX's saturating defaults under the row's profile (whose NaN codes
/// and payloads its conversions write, both ways).
pub(super) fn casts(profile: Profile) -> CastOptions {
    CastOptions::with_profile(profile)
}

/// One float32 value through the rounding core to `dtype` and back (float32: unchanged).
pub(super) fn round_to(profile: Profile, dtype: DType, x: f32) -> f32 {
    if dtype == DType::Float {
        return x;
    }
    decode(profile, dtype, encode(profile, dtype, x))
}

/// float32 `x` as a code of `dtype` under the row's casts.
pub(super) fn encode(profile: Profile, dtype: DType, x: f32) -> u64 {
    convert_code(DType::Float, dtype, u64::from(x.to_bits()), &casts(profile))
        .expect("float32 converts to every float dtype")
}

/// A code of `dtype` as float32 under the row's casts.
pub(super) fn decode(profile: Profile, dtype: DType, code: u64) -> f32 {
    let bits = convert_code(dtype, DType::Float, code, &casts(profile)).expect("float dtypes widen to float32");
    f32::from_bits(bits as u32)
}

/// Every value through the rounding core's plan to `dtype` and back (bfloat16 arithmetic as
/// torch does it: the float32 result rounded), then every NaN as the row's `nan.bfloat16`.
pub(super) fn round_all_as(recipe: &Recipe, dtype: DType, values: &mut [f32]) -> Result<()> {
    let n = values.len();
    let mut src = vec![0u8; 4 * n];
    src.chunks_exact_mut(4).zip(values.iter()).for_each(|(o, v)| o.copy_from_slice(&v.to_le_bytes()));
    let mut narrow = vec![0u8; packing::raw_len(dtype, n)?];
    Plan::new(DType::Float, dtype, &casts(recipe.profile))?.run(&src, &mut narrow, n)?;
    // Back to float32 exactly, sign and payload of a NaN kept: the value stands for the narrow
    // one in the steps that follow (torch casts a float16 NaN straight to float8, sign kept),
    // not for a conversion the implementation makes.
    let exact = crate::CastOptions::with_profile(crate::Profile::Spec);
    Plan::new(dtype, DType::Float, &exact)?.run(&narrow, &mut src, n)?;
    for (v, b) in values.iter_mut().zip(src.chunks_exact(4)) {
        *v = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    }
    if let (DType::Bfloat16, Some(bits)) = (dtype, recipe.nan.bfloat16) {
        let nan = f32::from_bits(u32::from(bits) << 16);
        values.iter_mut().filter(|v| v.is_nan()).for_each(|v| *v = nan);
    }
    Ok(())
}

/// torch's `maximum`/`clamp`: NaN passes.
pub(super) fn clamp(x: f32, low: f32, high: f32) -> f32 {
    if x.is_nan() {
        x
    } else {
        x.max(low).min(high)
    }
}

/// 2^e as float32 (e in float32's range, subnormals included).
pub(super) fn pow2(e: i32) -> f32 {
    if e >= -126 {
        f32::from_bits(((e + 127) as u32) << 23)
    } else {
        f32::from_bits(1u32 << (e + 149))
    }
}

/// What the block stage hands the element stage and the stored scale.
#[derive(Clone, Copy)]
pub(super) struct BlockScale {
    /// The stored scale: a code, or float bits in the scale's dtype.
    pub(super) stored: u32,
    /// The factor or divisor of the element step (see [`ElementStep`]).
    pub(super) factor: f32,
}

#[inline(always)]
pub(super) fn nan_propagating_max(m: f32, v: f32) -> f32 {
    if m.is_nan() {
        m
    } else if v.is_nan() || v > m {
        v
    } else {
        m
    }
}

/// `xs` folded into the running maximum `m` under `rule` (for [`Amax::SignedLargest`], `signed`
/// follows the value of the largest magnitude).
#[inline(always)]
pub(super) fn amax_fold(rule: Amax, m: f32, signed: &mut f32, xs: &[f32]) -> f32 {
    match rule {
        Amax::NanPropagating => xs.iter().fold(m, |m, &v| nan_propagating_max(m, v.abs())),
        Amax::NanSkipped => xs.iter().fold(m, |m, &v| if v.abs() > m { v.abs() } else { m }),
        Amax::RunningMax => xs.iter().fold(m, |m, &v| if m > v.abs() { m } else { v.abs() }),
        Amax::SignedLargest => {
            let mut m = m;
            for &v in xs {
                if v.abs() > m {
                    m = v.abs();
                    *signed = v;
                }
            }
            m
        }
        Amax::SignedArgmax => {
            // Nothing seen yet (a maximum of +0 with +0 taken): the first element stands, so an
            // all-zero block gives its first element, -0.0 included. A NaN ends the search.
            let mut m = m;
            if m == 0.0 && signed.to_bits() == 0 {
                if let Some(&v) = xs.first() {
                    *signed = v;
                }
            }
            for &v in xs {
                if m.is_nan() {
                    break;
                }
                if v.is_nan() || v.abs() > m {
                    m = v.abs();
                    *signed = v;
                }
            }
            m
        }
    }
}

/// One block's stored scale and element factor from its maximum.
pub(super) fn block_scale(recipe: &Recipe, amax: f32, global: Option<f32>, compute: DType) -> BlockScale {
    match recipe.scale_rule {
        ScaleRule::OcpMx => unreachable!("OCP MX runs in quant::mx"),
        ScaleRule::Exponent { pow2: rule, emax } => {
            let code = if amax.is_nan() {
                0xFF
            } else {
                let mut bits = amax.to_bits() & 0x7FFF_FFFF;
                let mut carry = 0;
                match rule {
                    Pow2::Floor => {}
                    Pow2::Ceil => carry = i32::from(bits & 0x007F_FFFF != 0),
                    Pow2::Even { mbits } => bits = (bits + (1 << (23 - mbits - 1))) & 0x7F80_0000,
                }
                let e = (bits >> 23) as i32 - 127 + carry;
                ((e - emax).clamp(-127, 128) + 127) as u32
            };
            BlockScale { stored: code, factor: f32::from_bits(code << 23) }
        }
        ScaleRule::ReciprocalCeil { max_element } => {
            let descale = amax / max_element;
            let code = if descale.is_nan() {
                0xFF
            } else if descale.is_infinite() {
                0xFE
            } else {
                let e = descale.log2().ceil();
                (e.clamp(-127.0, 127.0) as i32 + 127) as u32
            };
            reciprocal_ceil_scale(code)
        }
        ScaleRule::PowerOfTwoLog2 { mbits, emax, zero_divisor } => {
            // round_to_power_2 on the compute dtype's bits in int32 (a NaN amax arrives with
            // torch's bits: block_scales); a 16-bit dtype's result is cast back to uint16.
            let format = compute.float_format().expect("a float compute dtype");
            let (fraction, width) = (format.mantissa_bits, 1 + format.exponent_bits + format.mantissa_bits);
            let bits = code_held_in(recipe.profile, compute, amax);
            let sign_exponent = ((1u32 << (format.exponent_bits + 1)) - 1) << fraction;
            let rounded = bits.wrapping_add(1 << (fraction - mbits - 1)) & sign_exponent;
            let inf = ((1u32 << format.exponent_bits) - 1) << fraction;
            let code = match rounded {
                r if r == inf => 255,
                r if r >> (width - 1) != 0 || r == 0 => 0,
                // A power of two 2^(e - bias), its field e: 127 + (e - bias) - emax.
                r => (127 + (r >> fraction) as i32 - format.bias - emax).clamp(0, 255) as u32,
            };
            let divisor =
                if code == 255 { f32::INFINITY } else { round_to(recipe.profile, compute, pow2(code as i32 - 127)) };
            let (factor, code) = if divisor == 0.0 {
                (zero_divisor, (127 + zero_divisor.log2().floor() as i32) as u32)
            } else {
                (divisor, code)
            };
            // compress_mx_scale: (int32)floor(log2(Inf)) is x86's 0x80000000; plus 127, as uint8.
            BlockScale { stored: if code == 255 { 0x7F } else { code }, factor }
        }
        ScaleRule::GgmlLog2Floor => {
            let floor_log2 = amax.log2().floor();
            // C's (uint8_t) of an out-of-range float is undefined; gguf's numpy cast wraps
            // through an integer, which this reproduces (Inf -> 0).
            if amax > 0.0 && floor_log2.is_finite() {
                ggml_log2_floor_scale(floor_log2 as i32)
            } else {
                ggml_log2_floor_scale(-125)
            }
        }
        ScaleRule::Divide { .. } => {
            let steps = DivideSteps::new(recipe, global, compute);
            let s = steps.before_cast(amax);
            let (stored, value) = match recipe.scale {
                ScaleFormat::E4M3 => {
                    let c = encode(recipe.profile, DType::Float8E4M3FN, s);
                    (c as u32, decode(recipe.profile, DType::Float8E4M3FN, c))
                }
                ScaleFormat::GgmlUe4m3 => {
                    let c = ggml_ue4m3(s);
                    (u32::from(c), ggml_ue4m3_value(c))
                }
                ScaleFormat::Float16 | ScaleFormat::GgmlFloat16 => {
                    let c = encode(recipe.profile, DType::Float16, s);
                    (c as u32, decode(recipe.profile, DType::Float16, c))
                }
                ScaleFormat::Float32 => (s.to_bits(), s),
                ScaleFormat::InputDtype => {
                    let v = round_in_compute(recipe.profile, compute, s);
                    (v.to_bits(), v)
                }
                ScaleFormat::E8M0 => unreachable!("no Divide row stores E8M0"),
            };
            steps.after_cast(s, stored, value)
        }
    }
}

/// A [`ScaleRule::GgmlLog2Floor`] block's scale from `floor(log2(amax))` (-125 gives code 0,
/// the scale of a zero block): the code `floor - 2 + 127` wrapped to a byte, as gguf's cast
/// through an integer wraps it, and the element factor `2^(code - 128)` (half the scale: the
/// kvalues are doubled).
#[inline(always)]
pub(super) fn ggml_log2_floor_scale(floor_log2: i32) -> BlockScale {
    let code = (floor_log2 - 2 + 127) as u8;
    BlockScale { stored: u32::from(code), factor: pow2(i32::from(code) - 128) }
}

/// A [`ScaleRule::ReciprocalCeil`] block's scale from its code: the element factor is the
/// reciprocal of the code's power of two (NaN for 0xFF, 1 for code 0).
#[inline(always)]
pub(super) fn reciprocal_ceil_scale(code: u32) -> BlockScale {
    let factor = match code {
        0xFF => f32::NAN,
        0xFE => pow2(-127),
        0 => 1.0,
        c => pow2(127 - c as i32),
    };
    BlockScale { stored: code, factor }
}

/// The plans that cast a `Divide` row's scales to E4M3 or float16 and back, made once for all
/// the blocks of a tensor ([`block_scales`]).
pub(super) struct ScaleCasts {
    pub(super) dtype: DType,
    pub(super) to: Plan,
    pub(super) back: Plan,
}

/// The row's [`ScaleCasts`], where its scales are cast in a batch.
pub(super) fn scale_casts(recipe: &Recipe) -> Result<Option<ScaleCasts>> {
    let batched = matches!(recipe.scale_rule, ScaleRule::Divide { .. })
        && matches!(recipe.scale, ScaleFormat::E4M3 | ScaleFormat::Float16 | ScaleFormat::GgmlFloat16);
    if !batched {
        return Ok(None);
    }
    let dtype = if recipe.scale == ScaleFormat::E4M3 { DType::Float8E4M3FN } else { DType::Float16 };
    Ok(Some(ScaleCasts {
        dtype,
        to: Plan::new(DType::Float, dtype, &casts(recipe.profile))?,
        back: Plan::new(dtype, DType::Float, &casts(recipe.profile))?,
    }))
}

/// Every block's scale: [`block_scale`], with the casts of `Divide` rows to E4M3 or float16
/// batched through the plans of `casts` ([`scale_casts`] of the row).
pub(super) fn block_scales(
    recipe: &Recipe,
    amaxes: &[f32],
    global: Option<f32>,
    compute: DType,
    casts: Option<&ScaleCasts>,
) -> Result<Vec<BlockScale>> {
    if matches!(recipe.scale_rule, ScaleRule::PowerOfTwoLog2 { .. }) {
        return Ok(amaxes.iter().map(|&a| block_scale(recipe, a, global, compute)).collect());
    }
    let Some(casts) = casts else {
        return Ok(amaxes.iter().map(|&a| block_scale(recipe, a, global, compute)).collect());
    };
    // The casts through the plans each way, on the scales' bytes (little-endian raw data).
    let steps = DivideSteps::new(recipe, global, compute);
    let mut pre: Vec<f32> = amaxes.iter().map(|&a| steps.before_cast(a)).collect();
    let n = pre.len();
    if cfg!(target_endian = "big") {
        pre.iter_mut().for_each(|v| *v = f32::from_bits(v.to_bits().to_le()));
    }
    let mut codes = vec![0u8; packing::raw_len(casts.dtype, n)?];
    casts.to.run(zerocopy::IntoBytes::as_bytes(pre.as_slice()), &mut codes, n)?;
    let mut values = vec![0.0f32; n];
    casts.back.run(&codes, zerocopy::IntoBytes::as_mut_bytes(values.as_mut_slice()), n)?;
    let pre_value = |v: f32| if cfg!(target_endian = "big") { f32::from_bits(u32::from_le(v.to_bits())) } else { v };
    Ok(if codes.len() == n {
        codes
            .iter()
            .zip(pre.iter().zip(&values))
            .map(|(&c, (&p, &v))| steps.after_cast(pre_value(p), u32::from(c), pre_value(v)))
            .collect()
    } else {
        codes
            .chunks_exact(2)
            .zip(pre.iter().zip(&values))
            .map(|(c, (&p, &v))| {
                let stored = u32::from(u16::from_le_bytes([c[0], c[1]]));
                steps.after_cast(pre_value(p), stored, pre_value(v))
            })
            .collect()
    })
}

/// The float32 bits torch leaves in a NaN block maximum that `calculate_qparams` took through its
/// elementwise `torch.min(min, 0)`, `torch.max(max, 0)` and `torch.max(|min|, |max|)`, for block
/// `index` of `count` (the scale tensor's order): ATen's vectorized loop (AVX-512 dispatch)
/// writes a NaN as every bit set, so the first `count / lanes * lanes` blocks get 0xFFFFFFFF
/// (bfloat16: 0xFFFF), and the scalar tail passes the input's positive NaN (0x7FC00000).
/// Observed with torch 2.15.0: 16 float32 / 32 bfloat16 blocks on both the AVX-512 and the
/// AVX2 dispatch; under ATEN_CPU_CAPABILITY=default every NaN stays positive.
/// Each NaN of `amaxes` (blocks `first..` of `count`, in the scale tensor's order) replaced by the
/// bits of its place ([`nan_amax_bits`], the row's `nan.lanes` for `compute`), before the scales
/// are computed; rows without `nan.lanes` keep their maxima.
pub(super) fn place_nan_maxima(recipe: &Recipe, compute: DType, amaxes: &mut [f32], first: usize, count: usize) {
    if recipe.nan.lanes.is_empty() {
        return;
    }
    let lanes = recipe.nan.lanes.iter().find(|(d, _)| *d == compute).map_or(1, |l| l.1);
    for (b, a) in amaxes.iter_mut().enumerate().filter(|(_, a)| a.is_nan()) {
        *a = f32::from_bits(nan_amax_bits(first + b, count, lanes));
    }
}

pub(crate) fn nan_amax_bits(index: usize, count: usize, lanes: usize) -> u32 {
    if index < count / lanes.max(1) * lanes {
        0xFFFF_FFFF
    } else {
        0x7FC0_0000
    }
}

/// A `Divide` row's per-block arithmetic with the row's choices (and the per-tensor scale) read
/// once, as flags and constants that leave each step a select (a loop over many blocks then
/// vectorises): an absent step is its identity (no per-tensor scale: times 1; no clamp: to the
/// infinities, which a NaN passes as it passes any clamp).
#[derive(Clone, Copy)]
pub(super) struct DivideSteps {
    divisor: f32,
    /// Whose casts round to the compute dtype.
    profile: Profile,
    /// DeepSeek's floor under the maximum, where `has_floor`.
    has_floor: bool,
    floor: f32,
    compute: DType,
    /// The per-tensor step: `numerator / global` or `numerator * global`, the numerator the
    /// maximum (ModelOpt: amax / (divisor * g), the product once) or amax / divisor.
    of_amax: bool,
    divides: bool,
    global: f32,
    pow2_ceil: bool,
    /// A zero scale before the cast becomes `zero_before`, where `has_zero_before`.
    has_zero_before: bool,
    zero_before: f32,
    bounds: (f32, f32),
    /// A zero scale after the cast becomes `zero_after`, stored as `zero_after_stored` (an E4M3
    /// code or float bits), where `has_zero_after`.
    has_zero_after: bool,
    zero_after: f32,
    zero_after_stored: u32,
    /// ggml Q8_0/Q4_0: the element factor is the reciprocal of the unrounded scale.
    reciprocal: bool,
    /// The scale is [`ScaleFormat::GgmlFloat16`]: a NaN is stored 0x7E00 with its sign.
    ggml_half: bool,
}

impl DivideSteps {
    pub(super) fn new(recipe: &Recipe, global: Option<f32>, compute: DType) -> DivideSteps {
        let ScaleRule::Divide { divisor, clamp: bounds, zero_before_cast, zero_after_cast, pow2_ceil, amax_floor } =
            recipe.scale_rule
        else {
            unreachable!("a Divide row")
        };
        let (of_amax, divides, global) = match (recipe.global, global) {
            (GlobalRule::TorchaoDecode, Some(g)) => (false, true, g),
            (GlobalRule::ModeloptDecode, Some(g)) => (true, true, divisor * g),
            (GlobalRule::CompressedTensorsEncode, Some(g)) => (false, false, g),
            _ => (false, false, 1.0),
        };
        let zero_after = match zero_after_cast {
            ZeroScale::Keep => None,
            ZeroScale::Value(v) => Some(v),
            // torch.finfo(dtype).eps: 2^-(stored fraction bits) of the compute dtype.
            ZeroScale::DtypeEps => Some(pow2(-(compute.float_format().map_or(23, |f| f.mantissa_bits) as i32))),
        };
        let float8 = recipe.scale == ScaleFormat::E4M3;
        let zero_after_stored = match zero_after {
            Some(r) if float8 => encode(recipe.profile, DType::Float8E4M3FN, r) as u32,
            Some(r) => r.to_bits(),
            None => 0,
        };
        DivideSteps {
            divisor,
            profile: recipe.profile,
            has_floor: amax_floor.is_some(),
            floor: amax_floor.unwrap_or(0.0),
            compute,
            of_amax,
            divides,
            global,
            pow2_ceil,
            has_zero_before: zero_before_cast.is_some(),
            zero_before: zero_before_cast.unwrap_or(0.0),
            bounds: bounds.unwrap_or((f32::NEG_INFINITY, f32::INFINITY)),
            has_zero_after: zero_after.is_some(),
            zero_after: zero_after.unwrap_or(0.0),
            zero_after_stored,
            reciprocal: recipe.step == ElementStep::Reciprocal
                && matches!(recipe.scale, ScaleFormat::Float16 | ScaleFormat::GgmlFloat16),
            ggml_half: recipe.scale == ScaleFormat::GgmlFloat16,
        }
    }

    /// The scale before its cast: amax floor, division, the per-tensor step, the power of two,
    /// the zero replacement and the clamps.
    #[inline(always)]
    pub(super) fn before_cast(&self, amax: f32) -> f32 {
        self.before_cast_as::<false>(amax)
    }

    /// Whether the steps call no function (no rounding to a compute dtype, no power of two):
    /// [`Self::before_cast_as`] may then be told so.
    pub(super) fn is_plain(&self) -> bool {
        self.compute == DType::Float && !self.pow2_ceil
    }

    /// [`Self::before_cast`]; `PLAIN` (only where [`Self::is_plain`]) leaves out the steps that
    /// call a function.
    #[inline(always)]
    pub(super) fn before_cast_as<const PLAIN: bool>(&self, amax: f32) -> f32 {
        let a = if self.has_floor { nan_propagating_max(self.floor, amax) } else { amax };
        let quotient = a / self.divisor;
        let base = if PLAIN || self.compute == DType::Float {
            quotient
        } else {
            round_in_compute(self.profile, self.compute, quotient)
        };
        let numerator = if self.of_amax { a } else { base };
        let mut s = if self.divides { numerator / self.global } else { numerator * self.global };
        if !PLAIN && self.pow2_ceil {
            s = s.log2().ceil().exp2();
        }
        if self.has_zero_before && s == 0.0 {
            s = self.zero_before;
        }
        clamp(s, self.bounds.0, self.bounds.1)
    }

    /// The scale after its cast (`stored`, decoded `value`; `s` before the cast): the zero
    /// replacement and the element factor.
    #[inline(always)]
    pub(super) fn after_cast(&self, s: f32, stored: u32, value: f32) -> BlockScale {
        let stored = if self.ggml_half && value.is_nan() { (stored & 0x8000) | 0x7E00 } else { stored };
        let replaced = self.has_zero_after && value == 0.0;
        let (value, stored) = if replaced { (self.zero_after, self.zero_after_stored) } else { (value, stored) };
        let reciprocal = if s != 0.0 { 1.0 / s } else { 0.0 };
        BlockScale { stored, factor: if self.reciprocal { reciprocal } else { value } }
    }
}

/// ggml's `ggml_fp32_to_ue4m3`: 0 unless above 0; the rounding core's nearest-ties-away E4M3 code
/// (ggml adds the first dropped bit), with ggml's two departures: a result whose exponent field is
/// 15 (256 and above, including amax / 6 beyond 448) becomes 0x7E (448), and a subnormal whose
/// rounding carries into the smallest normal stays at mantissa 7.
pub(super) fn ggml_ue4m3(x: f32) -> u8 {
    if x.is_nan() || x <= 0.0 {
        return 0;
    }
    let opts = RoundingOptions { mode: RoundingMode::NearestTiesAway, saturate: true, ..RoundingOptions::IEEE };
    let code = round::encode(&format::E4M3FN, Value::from_f32(x), opts) as u8;
    if code >= 0x78 {
        0x7E
    } else if x < 0.015625 && code == 0x08 {
        0x07
    } else {
        code
    }
}

/// ggml's UE4M3 as it decodes it (`ggml_ue4m3_to_fp32`): bit 7 ignored, unsigned 1-4-3 with no
/// special codes (0x7F is 480, not NaN), as a described format for the rounding core.
pub(super) const GGML_UE4M3: format::FloatFormat = format::FloatFormat {
    name: format::FormatName::Described,
    signed: false,
    non_finite: format::NonFinite::None,
    ..format::E4M3FN
};

/// ggml's `ggml_ue4m3_to_fp32` halved (the kvalues are doubled): 0x00 and 0x7F are 0 (ggml's
/// two exceptions), bit 7 is ignored otherwise (0xFF is 480).
pub(super) fn ggml_ue4m3_value(byte: u8) -> f32 {
    if byte == 0 || byte == 0x7F {
        return 0.0;
    }
    GGML_UE4M3.to_f32(u64::from(byte & 0x7F)) * 0.5
}

/// Every block's element factor, and whether the step multiplies by it (else divides): per
/// block, y = x * factor or x / factor, as the row's [`ElementStep`] says.
pub(super) fn element_factors(recipe: &Recipe, scales: &[BlockScale], global: Option<f32>) -> (bool, Vec<f32>) {
    match recipe.step {
        // torch's clamp(min=): a NaN scale stays NaN.
        ElementStep::Divide { min_divisor } => {
            (false, scales.iter().map(|s| if s.factor < min_divisor { min_divisor } else { s.factor }).collect())
        }
        ElementStep::ReciprocalPow2 | ElementStep::Reciprocal => (true, scales.iter().map(|s| s.factor).collect()),
        ElementStep::Global => match (recipe.global, global) {
            (GlobalRule::TorchaoDecode, None) => (true, scales.iter().map(|s| 1.0 / s.factor).collect()),
            (GlobalRule::TorchaoDecode, Some(gs)) => (true, scales.iter().map(|s| (1.0 / gs) / s.factor).collect()),
            (GlobalRule::ModeloptDecode, Some(gs)) => (false, scales.iter().map(|s| s.factor * gs).collect()),
            (GlobalRule::CompressedTensorsEncode, Some(gs)) => (false, scales.iter().map(|s| s.factor / gs).collect()),
            _ => (false, scales.iter().map(|s| s.factor).collect()),
        },
    }
}

/// ggml's `best_index_mxfp4` for one element: the index of the nearest of `kvalues * d` to `x`,
/// the first on equal errors (a NaN error never wins: NaN and Inf give 0); `fused`: each error
/// `kvalue * d - x` rounded once ([`fused_multiply_add`]).
#[inline(always)]
pub(super) fn nearest_kvalue(x: f32, d: f32, fused: bool) -> u8 {
    let error = |kv: f32| if fused { fused_multiply_add(kv, d, -x) } else { kv * d - x };
    let mut best = 0;
    let mut err = error(GGML_KVALUES[0]).abs();
    for (k, &kv) in GGML_KVALUES.iter().enumerate().skip(1) {
        let e = error(kv).abs();
        if e < err {
            best = k;
            err = e;
        }
    }
    best as u8
}

/// `result` (of `x` and a factor), but `x` quieted where `x` is a NaN: which NaN a product of two
/// NaNs is, is then fixed (x86's scalar instructions give the first operand's; a vectorised loop
/// may take either).
#[inline(always)]
pub(crate) fn nan_first(x: f32, result: f32) -> f32 {
    if x.is_nan() {
        f32::from_bits(x.to_bits() | 0x0040_0000)
    } else {
        result
    }
}

/// The code of `x` (a value of `dtype`, float32, bfloat16 or float16) as torch holds it in a
/// tensor of `dtype`: a number's exact code, a NaN's sign, exponent and top fraction bits (the
/// bits its arithmetic wrote, unquieted).
pub(crate) fn code_held_in(profile: Profile, dtype: DType, x: f32) -> u32 {
    let Some(format) = dtype.float_format().filter(|f| f.mantissa_bits < 23) else { return x.to_bits() };
    if !x.is_nan() {
        return encode(profile, dtype, x) as u32;
    }
    let (fraction, width) = (format.mantissa_bits, 1 + format.exponent_bits + format.mantissa_bits);
    let b = x.to_bits();
    let exponent = ((1u32 << format.exponent_bits) - 1) << fraction;
    (b >> 31) << (width - 1) | exponent | (b & 0x007F_FFFF) >> (23 - fraction)
}

/// A tensor maximum taken in the input dtype, as float32 under the row's casts (`.float()` of
/// the 0-dim result: torch's float16 -> float32 scalar loop writes every NaN as 0x7FFFFFFF).
pub(super) fn widened_from(profile: Profile, input: DType, x: f32) -> f32 {
    if input == DType::Float {
        return x;
    }
    decode(profile, input, u64::from(code_held_in(profile, input, x)))
}

/// A scale step's result in the compute dtype: a NaN keeps its top bits (the bits torch's loop
/// wrote: a NaN block maximum already has them, [`nan_lane_maxima`]), a number is rounded.
fn round_in_compute(profile: Profile, compute: DType, x: f32) -> f32 {
    let fraction = compute.float_format().map_or(23, |f| f.mantissa_bits);
    if x.is_nan() && fraction < 23 {
        // The top payload bits the narrower dtype holds (torch's bfloat16 and float16 stores).
        f32::from_bits(quiet(x).to_bits() & !((1u32 << (23 - fraction)) - 1))
    } else {
        round_to(profile, compute, x)
    }
}

/// x86-64's default NaN (SSE and AVX: an invalid operation on numbers, such as 0 * Inf, gives
/// the negative quiet NaN).
pub(crate) const X86_DEFAULT_NAN: u32 = 0xFFC0_0000;

/// `x` with its quiet bit set (what an operation writes for a NaN operand).
#[inline(always)]
pub(crate) fn quiet(x: f32) -> f32 {
    f32::from_bits(x.to_bits() | 0x0040_0000)
}

/// An element value times its block's factor, with the NaN the row's implementation writes
/// (`rule`), independent of the machine lowbit runs on.
#[inline(always)]
pub(crate) fn product(rule: ProductNan, value: f32, factor: f32) -> f32 {
    let r = value * factor;
    let (kept, other) = match rule {
        ProductNan::Element => (value, factor),
        ProductNan::Factor => (factor, value),
    };
    if kept.is_nan() {
        quiet(kept)
    } else if other.is_nan() {
        quiet(other)
    } else if r.is_nan() {
        f32::from_bits(X86_DEFAULT_NAN)
    } else {
        r
    }
}

/// The code a NaN gets under `rule`.
pub(super) fn nan_code(recipe: &Recipe, rule: NanElement, compute: DType, y: f32) -> u8 {
    let dtype = recipe.element;
    let bits = bits_of(dtype);
    let sign = ((y.to_bits() >> 31) as u8) << (bits - 1);
    match rule {
        NanElement::Cast => unreachable!("the cast's own code"),
        NanElement::Code(c) => c,
        NanElement::StoredNan(code) => {
            let stored_negative = compute == DType::Bfloat16 && recipe.nan.bfloat16.is_some_and(|b| b & 0x8000 != 0);
            code | (u8::from(stored_negative) << (bits - 1))
        }
        NanElement::TorchaoBits => {
            // torchao's _f32_to_floatx_unpacked, "normal" branch (a NaN takes it: both range tests
            // are false), on the magnitude's bits in int32 arithmetic.
            let (ebits, mbits) = match dtype {
                DType::Float4E2M1 => (2, 1),
                DType::Float6E2M3 => (2, 3),
                DType::Float6E3M2 => (3, 2),
                _ => unreachable!("torchao's custom cast is for float4 and float6"),
            };
            let exp_bias = (1i32 << (ebits - 1)) - 1;
            let magnitude = (y.to_bits() & 0x7FFF_FFFF) as i32;
            let mant_odd = (magnitude >> (23 - mbits)) & 1;
            let add = ((exp_bias - 127) << 23).wrapping_add((1 << (23 - mbits - 1)) - 1);
            let code = (magnitude.wrapping_add(add).wrapping_add(mant_odd) >> (23 - mbits)) as u8;
            (code | sign) & ((1u16 << bits) - 1) as u8
        }
    }
}

/// `a * b + c` rounded once to float32 (nearest even), as a fused multiply-add instruction gives
/// it: the exact sum of the exact product and `c`, through the rounding core. Where an operand is
/// not finite, the float32 arithmetic (the same infinity or a NaN; which NaN is not modelled: no
/// caller reads it), but an infinite `c` with a finite product is `c` (the product never
/// overflows inside the fused operation).
pub(super) fn fused_multiply_add(a: f32, b: f32, c: f32) -> f32 {
    if !(a.is_finite() && b.is_finite()) {
        return a * b + c;
    }
    if !c.is_finite() {
        return c;
    }
    // (sign, integer significand, exponent) of a finite float32.
    let parts = |x: f32| {
        let bits = x.to_bits();
        let (field, fraction) = ((bits >> 23) & 0xFF, bits & 0x7F_FFFF);
        let (m, e) = if field == 0 { (fraction, -149) } else { (fraction | 0x80_0000, field as i32 - 150) };
        (bits >> 31 != 0, u128::from(m), e)
    };
    let ((sa, ma, ea), (sb, mb, eb), (sc, mc, ec)) = (parts(a), parts(b), parts(c));
    let (sp, mp, ep) = (sa != sb, ma * mb, ea + eb);
    if mp == 0 && mc == 0 {
        // Both zero: -0 only when both are -0 (nearest even).
        return if sp && sc { -0.0 } else { 0.0 };
    }
    // The term with the larger exponent shifted onto the other's; where they lie more than 78
    // bits apart, the smaller one (below 2^48 units) is only a sticky nudge under 30 more bits.
    let ((s1, m1, e1), (s2, m2, e2)) =
        if ep >= ec { ((sp, mp, ep), (sc, mc, ec)) } else { ((sc, mc, ec), (sp, mp, ep)) };
    let gap = (e1 - e2) as u32;
    let (magnitude, negative, exponent, sticky) = if m1 == 0 {
        (m2, s2, e2, false)
    } else if gap <= 78 {
        let big = m1 << gap;
        match (s1 == s2, big >= m2) {
            (true, _) => (big + m2, s1, e2, false),
            (false, true) => (big - m2, s1, e2, false),
            (false, false) => (m2 - big, s2, e2, false),
        }
    } else {
        let big = m1 << 30;
        if m2 == 0 {
            (big, s1, e1 - 30, false)
        } else if s1 == s2 {
            (big, s1, e1 - 30, true)
        } else {
            (big - 1, s1, e1 - 30, true)
        }
    };
    if magnitude == 0 {
        return 0.0; // an exact cancellation: +0 under nearest even
    }
    // At most 64 significant bits for the core, the dropped ones as sticky.
    let shift = 64u32.saturating_sub(magnitude.leading_zeros());
    let dropped = shift > 0 && magnitude & ((1u128 << shift) - 1) != 0;
    let exact = crate::value::Exact {
        negative,
        significand: (magnitude >> shift) as u64,
        exponent: exponent + shift as i32,
        sticky: sticky || dropped,
    };
    f32::from_bits(round::encode(&format::F32, Value::Finite(exact), RoundingOptions::IEEE) as u32)
}

/// C's conversion of a float to `int8_t` as gcc compiles it for x86-64 (what ggml's release build
/// does): `cvttss2si` truncates toward zero to int32, giving the "integer indefinite" 0x80000000
/// for NaN, the infinities and magnitudes from 2^31 on, and the narrowing keeps the low 8 bits.
/// A float32 of magnitude 2^31 or more is a multiple of 256, so every finite value gives its
/// truncation modulo 256 and only NaN and the infinities take the indefinite's low byte (0).
/// `mode` is the rounding to an integer before the conversion (`roundf`: ties away; the
/// conversion's own truncation: toward zero).
pub(crate) fn c_int8_x86(y: f32, mode: RoundingMode) -> i8 {
    match Value::from_f32(y) {
        Value::Finite(e) => match round::round_to_integer(e, mode) {
            Some((negative, m)) => {
                let low = (m & 0xFF) as u8;
                (if negative { low.wrapping_neg() } else { low }) as i8
            }
            None => 0,
        },
        _ => 0,
    }
}

/// The element type's width in bits (every element type here has one).
pub(super) fn bits_of(dtype: DType) -> u32 {
    dtype.bits().unwrap_or(8)
}
