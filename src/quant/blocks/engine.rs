//! Quantize and dequantize by reading the recipe row: block maxima, then one scale per block
//! (scalar arithmetic in float32 or the input's dtype, casts through the rounding core), then the
//! elements of the whole tensor scaled in one pass and rounded by the element plan in one run.

use super::recipes::{
    Amax, BlockShape, Dequantize, ElementRound, ElementStep, GlobalRule, NanElement, Pow2, Recipe, ScaleFormat,
    ScaleRule, ShortBlock, ZeroScale,
};
use super::{BlockInput, Quantized, Scales, Scheme};
use crate::alloc_prelude::*;
use crate::convert::{convert_code, CastOptions};
use crate::dtype::DType;
use crate::error::{shown_shape, Error, Result};
use crate::format;
use crate::packing;
use crate::plan::Plan;
use crate::round::{self, RoundingMode, RoundingOptions};
use crate::value::Value;

/// NVFP4's per-tensor constant: E4M3's largest value times E2M1's (448 * 6).
const NVFP4_GLOBAL_DIVISOR: f32 = 2688.0;
/// float32's and bfloat16's smallest normal (`torch.finfo(dtype).tiny`).
const TINY: f32 = 1.1754944e-38;
/// ggml's `kvalues_mxfp4`: the E2M1 values doubled, indexed by the E2M1 code.
const GGML_KVALUES: [f32; 16] = [0., 1., 2., 3., 4., 6., 8., 12., 0., -1., -2., -3., -4., -6., -8., -12.];

/// The tensor seen as `rows x cols` with the blocked axis last, and its blocks.
#[derive(Clone, Copy, Debug)]
pub(super) struct Geometry {
    /// Elements before the blocked axis.
    outer: usize,
    /// The blocked axis' length.
    len: usize,
    /// Elements after the blocked axis.
    inner: usize,
    /// Rows and columns of a block in the `rows x cols` view (rows = outer * inner).
    block_rows: usize,
    block_cols: usize,
    /// Blocks along the rows and along the columns.
    row_blocks: usize,
    col_blocks: usize,
}

impl Geometry {
    pub(super) fn new(shape: &[usize], scheme: &Scheme, axis: i64) -> Result<Geometry> {
        let op = || format!("{} quantize", scheme.name());
        let rank = shape.len();
        if rank == 0 {
            return Err(Error::InvalidOp { op: op(), message: "a scalar has no axis to block".into() });
        }
        let a = if axis < 0 { axis + rank as i64 } else { axis };
        if !(0..rank as i64).contains(&a) {
            return Err(Error::OutOfRange {
                op: op(),
                what: format!("axis of a tensor of shape {}", shown_shape(shape)),
                value: i128::from(axis),
                low: -(rank as i128),
                high: rank as i128 - 1,
            });
        }
        let a = a as usize;
        let count = |dims: &[usize]| -> Result<usize> {
            dims.iter()
                .try_fold(1usize, |n, &d| n.checked_mul(d))
                .ok_or_else(|| Error::TooLarge { what: format!("a tensor of shape {}", shown_shape(shape)) })
        };
        let (outer, len, inner) = (count(&shape[..a])?, shape[a], count(&shape[a + 1..])?);
        count(shape)?;
        let rows = outer * inner;
        let (block_rows, block_cols) = match scheme.recipe.block {
            BlockShape::Row(n) => (1, n),
            BlockShape::Channel => (1, len.max(1)),
            BlockShape::Tensor => (rows.max(1), len.max(1)),
            BlockShape::Tile(r, c) => {
                if rank != 2 || a != 1 {
                    return Err(Error::InvalidOp {
                        op: op(),
                        message: format!(
                            "{r}x{c} tiles cover the two axes of a 2-D tensor blocked along its last axis; \
                             the tensor has shape {} and axis {axis}",
                            shown_shape(shape)
                        ),
                    });
                }
                (r, c)
            }
        };
        if let ShortBlock::Refuse(rule) = scheme.recipe.short_block {
            if len % block_cols != 0 || rows % block_rows != 0 {
                return Err(Error::InvalidOp {
                    op: op(),
                    message: format!(
                        "the blocked axis has {len} elements, not a multiple of the block of {block_cols}: {rule}"
                    ),
                });
            }
        }
        Ok(Geometry {
            outer,
            len,
            inner,
            block_rows,
            block_cols,
            row_blocks: rows.div_ceil(block_rows),
            col_blocks: len.div_ceil(block_cols),
        })
    }

    fn elements(&self) -> usize {
        self.outer * self.len * self.inner
    }

    fn rows(&self) -> usize {
        self.outer * self.inner
    }

    fn blocks(&self) -> usize {
        self.row_blocks * self.col_blocks
    }

    /// Whether the blocks are runs of consecutive elements along the last axis, one row each
    /// (what the fused kernels of `fast` take), in a tensor that is not empty.
    fn fused_blocks(&self) -> bool {
        self.inner == 1 && self.block_rows == 1 && self.elements() > 0
    }

    /// The block of element `col` of row `row` in the `rows x cols` view.
    #[inline(always)]
    fn block_of(&self, row: usize, col: usize) -> usize {
        (row / self.block_rows) * self.col_blocks + col / self.block_cols
    }

    /// `f(block, a, b)` for the runs of `a` and `b` (two arrays in the `rows x len` view, `wa`
    /// and `wb` items per element) that one block covers, row by row: no division per element.
    #[inline(always)]
    fn runs<A, B>(&self, a: &[A], wa: usize, b: &mut [B], wb: usize, mut f: impl FnMut(usize, &[A], &mut [B])) {
        let len = self.len.max(1);
        for (row, (ra, rb)) in a.chunks(len * wa).zip(b.chunks_mut(len * wb)).enumerate() {
            let base = (row / self.block_rows) * self.col_blocks;
            for (c, (xa, xb)) in ra.chunks(self.block_cols * wa).zip(rb.chunks_mut(self.block_cols * wb)).enumerate() {
                f(base + c, xa, xb);
            }
        }
    }
}

/// The shape of the scales.
pub(super) fn scales_shape(shape: &[usize], scheme: &Scheme, axis: i64) -> Result<Vec<usize>> {
    let g = Geometry::new(shape, scheme, axis)?;
    Ok(match scheme.recipe.block {
        BlockShape::Tensor => vec![1],
        BlockShape::Tile(..) => vec![g.row_blocks, g.col_blocks],
        _ => {
            let a = if axis < 0 { (axis + shape.len() as i64) as usize } else { axis as usize };
            let mut s = shape.to_vec();
            s[a] = g.col_blocks;
            s
        }
    })
}

/// Row-major data with the blocked axis moved last (`outer x inner x len`), or as it is.
fn axis_last<T: Copy>(data: &[T], g: &Geometry) -> Vec<T> {
    move_axis_last(data, g.outer, g.len, g.inner)
}

/// `data` of shape `outer x len x inner` as `outer x inner x len`.
fn move_axis_last<T: Copy>(data: &[T], outer: usize, len: usize, inner: usize) -> Vec<T> {
    if inner == 1 {
        return data.to_vec();
    }
    let mut out = Vec::with_capacity(data.len());
    for o in 0..outer {
        for i in 0..inner {
            out.extend((0..len).map(|k| data[(o * len + k) * inner + i]));
        }
    }
    out
}

/// The reverse of [`axis_last`] for arrays whose blocked axis is `len` long.
fn axis_back<T: Copy + Default>(data: &[T], outer: usize, len: usize, inner: usize) -> Vec<T> {
    if inner == 1 {
        return data.to_vec();
    }
    let mut out = vec![T::default(); data.len()];
    for o in 0..outer {
        for i in 0..inner {
            for k in 0..len {
                out[(o * len + k) * inner + i] = data[(o * inner + i) * len + k];
            }
        }
    }
    out
}

/// One float32 value through the rounding core to `dtype` and back (float32: unchanged).
fn round_to(dtype: DType, x: f32) -> f32 {
    if dtype == DType::Float {
        return x;
    }
    let code = convert_code(DType::Float, dtype, u64::from(x.to_bits()), &CastOptions::default())
        .expect("float32 converts to every float dtype");
    decode(dtype, code)
}

fn encode(dtype: DType, x: f32) -> u64 {
    convert_code(DType::Float, dtype, u64::from(x.to_bits()), &CastOptions::default())
        .expect("float32 converts to every float dtype")
}

fn decode(dtype: DType, code: u64) -> f32 {
    let bits = convert_code(dtype, DType::Float, code, &CastOptions::default()).expect("float dtypes widen to float32");
    f32::from_bits(bits as u32)
}

/// Every value through the rounding core's plan to `dtype` and back (bfloat16 arithmetic as
/// torch does it: the float32 result rounded).
fn round_all_to(dtype: DType, values: &mut [f32]) -> Result<()> {
    let n = values.len();
    let mut src = vec![0u8; 4 * n];
    src.chunks_exact_mut(4).zip(values.iter()).for_each(|(o, v)| o.copy_from_slice(&v.to_le_bytes()));
    let mut narrow = vec![0u8; packing::raw_len(dtype, n)?];
    Plan::new(DType::Float, dtype, &CastOptions::default())?.run(&src, &mut narrow, n)?;
    Plan::new(dtype, DType::Float, &CastOptions::default())?.run(&narrow, &mut src, n)?;
    for (v, b) in values.iter_mut().zip(src.chunks_exact(4)) {
        *v = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    }
    Ok(())
}

/// [`round_all_to`], with the NaN bits of the implementation's bfloat16 rounding where the row
/// names them.
fn round_all_as(recipe: &Recipe, dtype: DType, values: &mut [f32]) -> Result<()> {
    round_all_to(dtype, values)?;
    if let (DType::Bfloat16, Some(bits)) = (dtype, recipe.bfloat16_nan) {
        let nan = f32::from_bits(u32::from(bits) << 16);
        values.iter_mut().filter(|v| v.is_nan()).for_each(|v| *v = nan);
    }
    Ok(())
}

/// torch's `maximum`/`clamp`: NaN passes.
fn clamp(x: f32, low: f32, high: f32) -> f32 {
    if x.is_nan() {
        x
    } else {
        x.max(low).min(high)
    }
}

/// 2^e as float32 (e in float32's range, subnormals included).
fn pow2(e: i32) -> f32 {
    if e >= -126 {
        f32::from_bits(((e + 127) as u32) << 23)
    } else {
        f32::from_bits(1u32 << (e + 149))
    }
}

/// The compute dtype: the input's where the recipe computes in it (bfloat16 under
/// compressed-tensors), else float32.
fn compute_dtype(recipe: &Recipe, input: DType) -> DType {
    let in_input = recipe.scale == ScaleFormat::InputDtype
        || recipe.global == GlobalRule::CompressedTensorsEncode
        || matches!(recipe.round, ElementRound::Cast { in_compute_dtype: true, .. });
    if in_input && input == DType::Bfloat16 {
        DType::Bfloat16
    } else {
        DType::Float
    }
}

/// What the block stage hands the element stage and the stored scale.
pub(super) struct BlockScale {
    /// The stored scale: a code, or float bits in the scale's dtype.
    stored: u32,
    /// The factor or divisor of the element step (see [`ElementStep`]).
    factor: f32,
}

/// Quantizes `x` (of `shape`, row-major) with `scheme` in blocks along `axis` (tiles: the last two
/// axes); `global_scale` is the per-tensor scale where the recipe has one (None: computed as the
/// implementation computes it, or none).
pub fn quantize<T: BlockInput>(
    x: &[T],
    shape: &[usize],
    scheme: &Scheme,
    axis: i64,
    global_scale: Option<f32>,
) -> Result<Quantized> {
    quantize_with(x, shape, scheme, axis, global_scale, true)
}

/// [`quantize`], through the fused kernels of `fast` where they cover the blocks and `fused` is
/// set (the tests compare both ways).
pub(super) fn quantize_with<T: BlockInput>(
    x: &[T],
    shape: &[usize],
    scheme: &Scheme,
    axis: i64,
    global_scale: Option<f32>,
    fused: bool,
) -> Result<Quantized> {
    let recipe = &scheme.recipe;
    if T::DTYPE != DType::Float && !recipe.inputs.contains(&T::DTYPE) && scheme.mx().is_none() {
        return Err(Error::UnsupportedDType {
            op: "blocks quantize",
            dtype: T::DTYPE.onnx_name(),
            why: "the implementation this scheme reproduces does not take this input dtype",
        });
    }
    let g = Geometry::new(shape, scheme, axis)?;
    if x.len() != g.elements() {
        return Err(Error::ShapeMismatch { shape: shape.to_vec(), elements: g.elements(), actual: x.len() });
    }
    if global_scale.is_some() && recipe.global == GlobalRule::None {
        return Err(Error::InvalidOp {
            op: format!("{} quantize", scheme.name()),
            message: "this recipe has no per-tensor scale; pass none".into(),
        });
    }
    if let Some(opts) = scheme.mx() {
        return quantize_mx(x, shape, scheme, opts, axis);
    }
    let compute = compute_dtype(recipe, T::DTYPE);
    // The fused kernels: blocks of consecutive elements of the last axis, arithmetic in float32.
    let fast = fused && g.fused_blocks() && compute == DType::Float;
    let widened;
    let values: &[f32] = match T::as_float32(x) {
        Some(v) if g.inner == 1 => v,
        _ => {
            widened = axis_last(x, &g).iter().map(|v| v.widen()).collect::<Vec<f32>>();
            &widened
        }
    };
    let global = global_of(recipe, scheme.global_from_amax(), global_scale, values, compute);
    let (codes, scales) = if fast {
        super::fast::quantize_rows(recipe, values, g.len, g.block_cols, global, compute)?
    } else {
        let amaxes = block_amax(recipe.amax, values, &g);
        let scales = block_scales(recipe, &amaxes, global, compute)?;
        (element_codes(recipe, values, &g, &scales, global, compute)?, scales)
    };
    let scale_values: Vec<u32> = scales.iter().map(|s| s.stored).collect();
    let scales_out = stored_scales(recipe, compute, &axis_back(&scale_values, g.outer, g.col_blocks, g.inner));
    Ok(Quantized {
        scheme: scheme.clone(),
        shape: shape.to_vec(),
        axis,
        elements: if g.inner == 1 { codes } else { axis_back(&codes, g.outer, g.len, g.inner) },
        scales: scales_out,
        global_scale: global,
    })
}

/// The stored scales in their representation (`stored` holds the code or the float's bits).
fn stored_scales(recipe: &Recipe, compute: DType, stored: &[u32]) -> Scales {
    match recipe.scale {
        ScaleFormat::E8M0 | ScaleFormat::E4M3 | ScaleFormat::GgmlUe4m3 => {
            Scales::Codes(stored.iter().map(|&c| c as u8).collect())
        }
        ScaleFormat::Float16 => Scales::Float16(stored.iter().map(|&c| c as u16).collect()),
        ScaleFormat::Float32 => Scales::Float32(stored.iter().map(|&c| f32::from_bits(c)).collect()),
        ScaleFormat::InputDtype if compute == DType::Bfloat16 => {
            Scales::Bfloat16(stored.iter().map(|&c| (f32::from_bits(c).to_bits() >> 16) as u16).collect())
        }
        ScaleFormat::InputDtype => Scales::Float32(stored.iter().map(|&c| f32::from_bits(c)).collect()),
    }
}

fn quantize_mx<T: BlockInput>(
    x: &[T],
    shape: &[usize],
    scheme: &Scheme,
    opts: &crate::quant::mx::MxOptions,
    axis: i64,
) -> Result<Quantized> {
    let opts = crate::quant::mx::MxOptions { axis, ..*opts };
    // float16 and bfloat16 widen exactly; quant::mx widens them the same way. float32 is read in
    // place (its bytes are the little-endian raw data on a little-endian machine).
    let widened: Vec<u8>;
    let raw: &[u8] = match T::as_float32(x) {
        Some(v) if cfg!(target_endian = "little") => zerocopy::IntoBytes::as_bytes(v),
        _ => {
            widened = x.iter().flat_map(|v| v.widen().to_le_bytes()).collect();
            &widened
        }
    };
    let n = x.len();
    let element = opts.format.element_dtype();
    let mut scales = vec![0u8; crate::quant::mx::scales_shape(shape, axis, opts.block_size)?.iter().product()];
    let mut packed = vec![0u8; packing::raw_len(element, n)?];
    crate::quant::mx::quantize_into(DType::Float, shape, raw, &opts, &mut scales, &mut packed)?;
    let mut elements = vec![0u8; n];
    packing::unpack_byte_codes(element, &packed, &mut elements)?;
    Ok(Quantized {
        scheme: scheme.clone(),
        shape: shape.to_vec(),
        axis,
        elements,
        scales: Scales::Codes(scales),
        global_scale: None,
    })
}

/// The per-tensor scale: the one given, or computed where the recipe computes one.
fn global_of(recipe: &Recipe, from_amax: bool, given: Option<f32>, values: &[f32], compute: DType) -> Option<f32> {
    if given.is_some() {
        return given;
    }
    let amax = || super::fast::tensor_amax(values);
    match recipe.global {
        GlobalRule::None => None,
        GlobalRule::TorchaoDecode if !from_amax => None,
        GlobalRule::TorchaoDecode | GlobalRule::ModeloptDecode => Some(amax() / NVFP4_GLOBAL_DIVISOR),
        GlobalRule::CompressedTensorsEncode => {
            // generate_gparam: 448 * 6 / max(amax, tiny) in the input dtype (torch's `scalar /
            // tensor` is `tensor.reciprocal() * scalar`, each step rounded); NaN or Inf -> 1.
            let reciprocal = round_to(compute, 1.0 / clamp(amax(), TINY, f32::INFINITY));
            let g = round_to(compute, reciprocal * NVFP4_GLOBAL_DIVISOR);
            Some(if g.is_finite() { g } else { 1.0 })
        }
    }
}

#[inline(always)]
fn nan_propagating_max(m: f32, v: f32) -> f32 {
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
    }
}

/// Every block's maximum (signed for [`Amax::SignedLargest`]), the elements of a block taken in
/// row-major order.
fn block_amax(rule: Amax, values: &[f32], g: &Geometry) -> Vec<f32> {
    let mut acc = vec![0.0f32; g.blocks()];
    let mut best = vec![0.0f32; if rule == Amax::SignedLargest { g.blocks() } else { 0 }];
    let len = g.len.max(1);
    for (row, r) in values.chunks(len).enumerate().take(g.rows()) {
        let base = (row / g.block_rows) * g.col_blocks;
        for (c, xs) in r.chunks(g.block_cols).enumerate() {
            let b = base + c;
            let mut signed = if rule == Amax::SignedLargest { best[b] } else { 0.0 };
            acc[b] = amax_fold(rule, acc[b], &mut signed, xs);
            if rule == Amax::SignedLargest {
                best[b] = signed;
            }
        }
    }
    if rule == Amax::SignedLargest {
        best
    } else {
        acc
    }
}

/// One block's stored scale and element factor from its maximum.
fn block_scale(recipe: &Recipe, amax: f32, global: Option<f32>, compute: DType) -> BlockScale {
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
            let factor = match code {
                0xFF => f32::NAN,
                0xFE => pow2(-127),
                0 => 1.0,
                c => pow2(127 - c as i32),
            };
            BlockScale { stored: code, factor }
        }
        ScaleRule::PowerOfTwoLog2 { mbits, emax, .. } => {
            // round_to_power_2 in int32 (a NaN amax arrives with torch's bits: block_scales).
            let rounded = (amax.to_bits() as i32).wrapping_add(1 << (23 - mbits - 1)) as u32 & 0xFF80_0000;
            let code = match rounded {
                0x7F80_0000 => 255,
                r if r & 0x8000_0000 != 0 || r == 0 => 0,
                r => ((r >> 23) as i32 - emax).clamp(0, 255) as u32,
            };
            let factor = if code == 255 { f32::INFINITY } else { pow2(code as i32 - 127) };
            // compress_mx_scale: (int32)floor(log2(Inf)) is x86's 0x80000000; plus 127, as uint8.
            BlockScale { stored: if code == 255 { 0x7F } else { code }, factor }
        }
        ScaleRule::GgmlLog2Floor => {
            let code = if amax > 0.0 {
                let e = amax.log2().floor() - 2.0 + 127.0;
                // C's (uint8_t) of an out-of-range float is undefined; gguf's numpy cast wraps
                // through an integer, which this reproduces (Inf -> 0).
                if e.is_finite() {
                    (e as i32) as u8
                } else {
                    0
                }
            } else {
                0
            };
            BlockScale { stored: u32::from(code), factor: pow2(i32::from(code) - 128) }
        }
        ScaleRule::Divide { .. } => {
            let s = divide_before_cast(recipe, amax, global, compute);
            let (stored, value) = match recipe.scale {
                ScaleFormat::E4M3 => {
                    let c = encode(DType::Float8E4M3FN, s);
                    (c as u32, decode(DType::Float8E4M3FN, c))
                }
                ScaleFormat::GgmlUe4m3 => {
                    let c = ggml_ue4m3(s);
                    (u32::from(c), ggml_ue4m3_value(c))
                }
                ScaleFormat::Float16 => {
                    let c = encode(DType::Float16, s);
                    (c as u32, decode(DType::Float16, c))
                }
                ScaleFormat::Float32 => (s.to_bits(), s),
                ScaleFormat::InputDtype => {
                    let v = round_to(compute, s);
                    (v.to_bits(), v)
                }
                ScaleFormat::E8M0 => unreachable!("no Divide row stores E8M0"),
            };
            divide_after_cast(recipe, s, stored, value, compute)
        }
    }
}

/// Every block's scale: [`block_scale`], with the casts of `Divide` rows to E4M3 or float16
/// batched through one plan each way.
pub(super) fn block_scales(
    recipe: &Recipe,
    amaxes: &[f32],
    global: Option<f32>,
    compute: DType,
) -> Result<Vec<BlockScale>> {
    if let ScaleRule::PowerOfTwoLog2 { nan_lanes, .. } = recipe.scale_rule {
        let lanes = nan_lanes.iter().find(|(d, _)| *d == compute).map_or(1, |l| l.1);
        let n = amaxes.len();
        return Ok(amaxes
            .iter()
            .enumerate()
            .map(|(b, &a)| {
                let a = if a.is_nan() { f32::from_bits(nan_amax_bits(b, n, lanes)) } else { a };
                block_scale(recipe, a, global, compute)
            })
            .collect());
    }
    let batched = matches!(recipe.scale_rule, ScaleRule::Divide { .. })
        && matches!(recipe.scale, ScaleFormat::E4M3 | ScaleFormat::Float16);
    if !batched {
        return Ok(amaxes.iter().map(|&a| block_scale(recipe, a, global, compute)).collect());
    }
    let dtype = if recipe.scale == ScaleFormat::E4M3 { DType::Float8E4M3FN } else { DType::Float16 };
    let pre: Vec<f32> = amaxes.iter().map(|&a| divide_before_cast(recipe, a, global, compute)).collect();
    let n = pre.len();
    let mut src = vec![0u8; 4 * n];
    src.chunks_exact_mut(4).zip(&pre).for_each(|(o, v)| o.copy_from_slice(&v.to_le_bytes()));
    let mut codes = vec![0u8; packing::raw_len(dtype, n)?];
    Plan::new(DType::Float, dtype, &CastOptions::default())?.run(&src, &mut codes, n)?;
    Plan::new(dtype, DType::Float, &CastOptions::default())?.run(&codes, &mut src, n)?;
    let width = codes.len() / n.max(1);
    Ok((0..n)
        .map(|b| {
            let c = &codes[b * width..(b + 1) * width];
            let stored = if width == 1 { u32::from(c[0]) } else { u32::from(u16::from_le_bytes([c[0], c[1]])) };
            let v = f32::from_le_bytes([src[4 * b], src[4 * b + 1], src[4 * b + 2], src[4 * b + 3]]);
            divide_after_cast(recipe, pre[b], stored, v, compute)
        })
        .collect())
}

/// The float32 bits torch leaves in a NaN block maximum that `calculate_qparams` took through its
/// elementwise `torch.min(min, 0)`, `torch.max(max, 0)` and `torch.max(|min|, |max|)`, for block
/// `index` of `count` (the scale tensor's order): ATen's vectorized loop (AVX-512 dispatch)
/// writes a NaN as every bit set, so the first `count / lanes * lanes` blocks get 0xFFFFFFFF
/// (bfloat16: 0xFFFF), and the scalar tail passes the input's positive NaN (0x7FC00000).
/// Observed with torch 2.15.0: 16 float32 / 32 bfloat16 blocks on both the AVX-512 and the
/// AVX2 dispatch; under ATEN_CPU_CAPABILITY=default every NaN stays positive.
fn nan_amax_bits(index: usize, count: usize, lanes: usize) -> u32 {
    if index < count / lanes.max(1) * lanes {
        0xFFFF_FFFF
    } else {
        0x7FC0_0000
    }
}

/// A `Divide` row's scale before its cast: amax floor, division, the per-tensor step, the power
/// of two, the zero replacement and the clamps.
fn divide_before_cast(recipe: &Recipe, amax: f32, global: Option<f32>, compute: DType) -> f32 {
    let ScaleRule::Divide { divisor, clamp: bounds, zero_before_cast, pow2_ceil, amax_floor, .. } = recipe.scale_rule
    else {
        unreachable!("a Divide row")
    };
    let mut a = amax;
    if let Some(floor) = amax_floor {
        a = nan_propagating_max(floor, a);
    }
    let base = round_to(compute, a / divisor);
    let mut s = match (recipe.global, global) {
        (GlobalRule::TorchaoDecode, Some(g)) => base / g,
        (GlobalRule::ModeloptDecode, Some(g)) => a / (divisor * g),
        (GlobalRule::CompressedTensorsEncode, Some(g)) => base * g,
        _ => base,
    };
    if pow2_ceil {
        s = s.log2().ceil().exp2();
    }
    if let Some(z) = zero_before_cast {
        if s == 0.0 {
            s = z;
        }
    }
    if let Some((lo, hi)) = bounds {
        s = clamp(s, lo, hi);
    }
    s
}

/// A `Divide` row's scale after its cast (`stored`, decoded `value`): the zero replacement and the
/// element factor.
fn divide_after_cast(recipe: &Recipe, s: f32, stored: u32, value: f32, compute: DType) -> BlockScale {
    let ScaleRule::Divide { zero_after_cast, .. } = recipe.scale_rule else { unreachable!("a Divide row") };
    // torch decodes an E4M3 NaN to 0x7FF00000 (with the sign); later NaNs carry those bits, which
    // torchao's custom float4 cast turns into a code.
    let mut value = if recipe.scale == ScaleFormat::E4M3 && value.is_nan() { torch_float8_nan(value) } else { value };
    let replacement = match zero_after_cast {
        ZeroScale::Keep => None,
        ZeroScale::Value(v) => Some(v),
        ZeroScale::DtypeEps => Some(if compute == DType::Bfloat16 { 0.0078125 } else { f32::EPSILON }),
    };
    let mut stored = stored;
    if let (Some(r), true) = (replacement, value == 0.0) {
        value = r;
        stored = match recipe.scale {
            ScaleFormat::E4M3 => encode(DType::Float8E4M3FN, r) as u32,
            _ => r.to_bits(),
        };
    }
    let factor = match recipe.step {
        // ggml Q8_0/Q4_0: the reciprocal of the unrounded d, 0 when d is 0.
        ElementStep::Reciprocal if recipe.scale == ScaleFormat::Float16 => {
            if s != 0.0 {
                1.0 / s
            } else {
                0.0
            }
        }
        _ => value,
    };
    BlockScale { stored, factor }
}

/// ggml's `ggml_fp32_to_ue4m3`: 0 unless above 0; the rounding core's nearest-ties-away E4M3 code
/// (ggml adds the first dropped bit), with ggml's two departures: a result whose exponent field is
/// 15 (256 and above, including amax / 6 beyond 448) becomes 0x7E (448), and a subnormal whose
/// rounding carries into the smallest normal stays at mantissa 7.
fn ggml_ue4m3(x: f32) -> u8 {
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
const GGML_UE4M3: format::FloatFormat = format::FloatFormat {
    name: format::FormatName::Described,
    signed: false,
    non_finite: format::NonFinite::None,
    ..format::E4M3FN
};

/// ggml's `ggml_ue4m3_to_fp32` halved (the kvalues are doubled): 0x00 and 0x7F are 0 (ggml's
/// two exceptions), bit 7 is ignored otherwise (0xFF is 480).
fn ggml_ue4m3_value(byte: u8) -> f32 {
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

/// The element codes of the whole tensor (`rows x len`, blocked axis last).
fn element_codes(
    recipe: &Recipe,
    values: &[f32],
    g: &Geometry,
    scales: &[BlockScale],
    global: Option<f32>,
    compute: DType,
) -> Result<Vec<u8>> {
    let n = values.len();
    let mut scaled = vec![0.0f32; n];
    let (multiply, factors) = element_factors(recipe, scales, global);
    let mut codes = vec![0u8; n];
    if let ElementRound::NearestIndexFirstTie = recipe.round {
        // ggml's best_index_mxfp4: the search in x's units against kvalues * d (d = half the
        // scale), the first index on equal errors.
        g.runs(values, 1, &mut codes, 1, |b, xs, cs| {
            let d = factors[b];
            for (&x, c) in xs.iter().zip(cs.iter_mut()) {
                *c = nearest_kvalue(x, d);
            }
        });
        return Ok(codes);
    }
    g.runs(values, 1, &mut scaled, 1, |b, xs, out| {
        let f = factors[b];
        if multiply {
            xs.iter().zip(out.iter_mut()).for_each(|(&x, o)| *o = nan_first(x, x * f));
        } else {
            xs.iter().zip(out.iter_mut()).for_each(|(&x, o)| *o = nan_first(x, x / f));
        }
    });
    match recipe.round {
        ElementRound::NearestIndexFirstTie => unreachable!("handled above"),
        ElementRound::IntegerTiesAway => {
            for (c, &y) in codes.iter_mut().zip(&scaled) {
                *c = integer(y, RoundingMode::NearestTiesAway).clamp(-128, 127) as i8 as u8;
            }
        }
        ElementRound::IntegerOffsetTruncate => {
            for (c, &y) in codes.iter_mut().zip(&scaled) {
                // (int8_t)(x * id + 8.5f): the sum rounded in float32, then truncated.
                *c = integer(y + 8.5, RoundingMode::TowardZero).clamp(0, 15) as u8;
            }
        }
        ElementRound::Cast { clamp: bound, in_compute_dtype, negative_zero_to_positive, nan } => {
            if in_compute_dtype && compute != DType::Float {
                round_all_as(recipe, compute, &mut scaled)?;
            }
            for y in scaled.iter_mut() {
                if negative_zero_to_positive && y.to_bits() == 0x8000_0000 {
                    *y = 0.0;
                }
                if let Some(b) = bound {
                    *y = clamp(*y, -b, b);
                }
            }
            let dtype = recipe.element;
            let plan = Plan::new(DType::Float, dtype, &CastOptions::saturating(true))?;
            let mut src = vec![0u8; 4 * n];
            src.chunks_exact_mut(4).zip(&scaled).for_each(|(o, v)| o.copy_from_slice(&v.to_le_bytes()));
            let mut packed = vec![0u8; packing::raw_len(dtype, n)?];
            plan.run(&src, &mut packed, n)?;
            if bits_of(dtype) == 8 {
                codes.copy_from_slice(&packed);
            } else {
                packing::unpack_byte_codes(dtype, &packed, &mut codes)?;
            }
            if nan != NanElement::Cast {
                for (row, (c_row, y_row)) in codes.chunks_mut(g.len.max(1)).zip(scaled.chunks(g.len.max(1))).enumerate()
                {
                    for (col, (c, &y)) in c_row.iter_mut().zip(y_row).enumerate() {
                        if y.is_nan() {
                            // A NaN factor is what torch's product carries, even over a NaN x.
                            let f = factors[g.block_of(row, col)];
                            *c = nan_code(recipe, nan, compute, if f.is_nan() { f } else { y });
                        }
                    }
                }
            }
        }
    }
    Ok(codes)
}

/// ggml's `best_index_mxfp4` for one element: the index of the nearest of `kvalues * d` to `x`,
/// the first on equal errors (a NaN error never wins: NaN and Inf give 0).
#[inline(always)]
pub(super) fn nearest_kvalue(x: f32, d: f32) -> u8 {
    let mut best = 0;
    let mut err = (GGML_KVALUES[0] * d - x).abs();
    for (k, kv) in GGML_KVALUES.iter().enumerate().skip(1) {
        let e = (kv * d - x).abs();
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
pub(super) fn nan_first(x: f32, result: f32) -> f32 {
    if x.is_nan() {
        f32::from_bits(x.to_bits() | 0x0040_0000)
    } else {
        result
    }
}

/// The float32 NaN torch's float8 -> float32 conversion gives (c10's `fp8e4m3fn_to_fp32_value`
/// ORs the infinity/NaN mask onto the shifted code: 0x7FF00000), with `nan`'s sign.
fn torch_float8_nan(nan: f32) -> f32 {
    f32::from_bits(0x7FF0_0000 | (nan.to_bits() & 0x8000_0000))
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
            let stored_negative = compute == DType::Bfloat16 && recipe.bfloat16_nan.is_some_and(|b| b & 0x8000 != 0);
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

/// `y` rounded to an integer by the core (NaN and infinities: 0, what the implementations'
/// out-of-range conversions gave in the fixtures).
pub(super) fn integer(y: f32, mode: RoundingMode) -> i64 {
    match Value::from_f32(y) {
        Value::Finite(e) => match round::round_to_integer(e, mode) {
            Some((negative, m)) => {
                let m = m.min(1 << 20) as i64;
                if negative {
                    -m
                } else {
                    m
                }
            }
            None => 0,
        },
        _ => 0,
    }
}

/// The element values in float32.
pub(super) fn dequantize(q: &Quantized) -> Result<Vec<f32>> {
    dequantize_with(q, true)
}

/// [`dequantize`], through the fused kernel of `fast` where it covers the blocks and `fused` is
/// set (the tests compare both ways).
pub(super) fn dequantize_with(q: &Quantized, fused: bool) -> Result<Vec<f32>> {
    let scheme = &q.scheme;
    let recipe = &scheme.recipe;
    let g = Geometry::new(&q.shape, scheme, q.axis)?;
    let n = g.elements();
    if let Some(opts) = scheme.mx() {
        let opts = crate::quant::mx::MxOptions { axis: q.axis, ..*opts };
        let Scales::Codes(scales) = &q.scales else { unreachable!("checked") };
        let element = opts.format.element_dtype();
        let mut packed = vec![0u8; packing::raw_len(element, n)?];
        packing::pack_byte_codes(element, &q.elements, &mut packed)?;
        let mut out = vec![0.0f32; n];
        let bytes = zerocopy::IntoBytes::as_mut_bytes(out.as_mut_slice());
        crate::quant::mx::dequantize_into(&q.shape, &packed, scales, &opts, bytes)?;
        // dequantize_into writes little-endian bytes.
        out.iter_mut().for_each(|v| *v = f32::from_bits(u32::from_le(v.to_bits())));
        return Ok(out);
    }
    let compute = match &q.scales {
        Scales::Bfloat16(_) => DType::Bfloat16,
        _ if recipe.global == GlobalRule::CompressedTensorsEncode => DType::Bfloat16,
        _ => DType::Float,
    };
    // The scale values in the blocked-axis-last order.
    let stored: Vec<f32> = match &q.scales {
        Scales::Codes(c) => {
            let table: [f32; 256] = core::array::from_fn(|b| scale_code_value(recipe, b as u8));
            c.iter().map(|&b| table[usize::from(b)]).collect()
        }
        Scales::Float16(v) => widen_halves(DType::Float16, v)?,
        Scales::Bfloat16(v) => widen_halves(DType::Bfloat16, v)?,
        Scales::Float32(v) => v.clone(),
    };
    let stored = axis_last_blocks(&stored, &g);
    let factors: Vec<f32> = stored
        .iter()
        .map(|&s| match (recipe.dequantize, recipe.global, q.global_scale) {
            (
                Dequantize::Multiply | Dequantize::MultiplyNegativeZeroAsPositive,
                GlobalRule::TorchaoDecode | GlobalRule::ModeloptDecode,
                Some(gs),
            ) => gs * s,
            (Dequantize::DivideGlobalToBf16, _, Some(gs)) => s / gs,
            _ => s,
        })
        .collect();
    // Every code's element value (codes beyond the element's width never get here: checked).
    let table: [f32; 256] = core::array::from_fn(|c| element_value(recipe, c as u8));
    let mut out = if fused && g.fused_blocks() {
        super::fast::values_times_factors(table, factors, &q.elements, g.len, g.block_cols)
    } else {
        let codes = axis_last(&q.elements, &g);
        let element_values: Vec<f32> = codes.iter().map(|&c| table[usize::from(c)]).collect();
        let mut out = vec![0.0f32; n];
        g.runs(&element_values, 1, &mut out, 1, |b, es, os| {
            let f = factors[b];
            es.iter().zip(os.iter_mut()).for_each(|(&e, o)| *o = nan_first(e, e * f));
        });
        out
    };
    let rounding = match recipe.dequantize {
        Dequantize::DivideGlobalToBf16 => DType::Bfloat16,
        Dequantize::MultiplyInComputeDtype => compute,
        _ => DType::Float,
    };
    if rounding != DType::Float {
        round_all_as(recipe, rounding, &mut out)?;
    }
    Ok(if g.inner == 1 { out } else { axis_back(&out, g.outer, g.len, g.inner) })
}

/// The value of a one-byte scale code as the row decodes it.
fn scale_code_value(recipe: &Recipe, b: u8) -> f32 {
    match recipe.scale {
        // ggml_e8m0_to_fp32_half: 2^(e - 128) for every byte, 0xFF included (no NaN).
        ScaleFormat::E8M0 if recipe.dequantize == Dequantize::GgmlHalfScale => pow2(i32::from(b) - 128),
        // compressed-tensors' decompress_mx_scale: 2.0 ** (e - 127), 0xFF too (+Inf, no NaN).
        ScaleFormat::E8M0 if recipe.dequantize == Dequantize::DivideGlobalToBf16 => pow2(i32::from(b) - 127),
        ScaleFormat::E8M0 => decode(DType::Float8E8M0, u64::from(b)),
        ScaleFormat::E4M3 => decode(DType::Float8E4M3FN, u64::from(b)),
        _ => ggml_ue4m3_value(b),
    }
}

/// The value of an element code as the row dequantizes it (NaN for codes wider than the element,
/// which the arrays' check refuses).
fn element_value(recipe: &Recipe, c: u8) -> f32 {
    match recipe.dequantize {
        Dequantize::OffsetNibble => f32::from(c) - 8.0,
        Dequantize::GgmlHalfScale => GGML_KVALUES[usize::from(c & 15)],
        _ if recipe.element == DType::Int8 => f32::from(c as i8),
        _ if u32::from(c) >> bits_of(recipe.element) != 0 => f32::NAN,
        Dequantize::MultiplyNegativeZeroAsPositive => decode(recipe.element, u64::from(c)) + 0.0,
        _ => decode(recipe.element, u64::from(c)),
    }
}

/// float16 or bfloat16 bits to float32 through the rounding core's plan, all at once.
fn widen_halves(dtype: DType, halves: &[u16]) -> Result<Vec<f32>> {
    let src: Vec<u8> = halves.iter().flat_map(|h| h.to_le_bytes()).collect();
    let mut wide = vec![0u8; 4 * halves.len()];
    Plan::new(dtype, DType::Float, &CastOptions::default())?.run(&src, &mut wide, halves.len())?;
    Ok(wide.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect())
}

/// Scales (in the tensor's order) rearranged to the blocked-axis-last order of [`Geometry`].
fn axis_last_blocks(scales: &[f32], g: &Geometry) -> Vec<f32> {
    if g.block_rows != 1 {
        return scales.to_vec();
    }
    move_axis_last(scales, g.outer, g.col_blocks, g.inner)
}

/// The element type's width in bits (every element type here has one).
pub(super) fn bits_of(dtype: DType) -> u32 {
    dtype.bits().unwrap_or(8)
}
