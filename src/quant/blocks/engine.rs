//! Quantize and dequantize by reading the recipe row: block maxima, then one scale per block
//! (scalar arithmetic in float32 or the input's dtype, casts through the rounding core), then the
//! elements of the whole tensor scaled in one pass and rounded by the element plan in one run.

use super::recipes::{
    Amax, BlockShape, Dequantize, ElementRound, GlobalRule, NanElement, Recipe, ScaleFormat, ShortBlock,
};
use super::rules::{
    amax_fold, bits_of, block_scales, c_int8_x86, casts, clamp, decode, element_factors, encode, fused_multiply_add,
    ggml_ue4m3_value, nan_code, nan_first, nearest_kvalue, place_nan_maxima, pow2, product, round_all_as, round_to,
    scale_casts, widened_from, BlockScale, GGML_KVALUES, NVFP4_GLOBAL_DIVISOR, TINY,
};
use super::{BlockInput, Quantized, Scales, Scheme};
use crate::alloc_prelude::*;
use crate::dtype::DType;
use crate::error::{shown_shape, Error, Result};
use crate::packing;
use crate::plan::Plan;
use crate::round::RoundingMode;

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

    pub(super) fn elements(&self) -> usize {
        self.outer * self.len * self.inner
    }

    fn rows(&self) -> usize {
        self.outer * self.inner
    }

    fn blocks(&self) -> usize {
        self.row_blocks * self.col_blocks
    }

    /// Whether the blocks are runs of consecutive elements along the last axis, one row each or
    /// tiles of bands of rows (what the fused kernels of `fast` take), in a tensor that is not
    /// empty.
    pub(super) fn fused_blocks(&self) -> bool {
        self.inner == 1 && self.elements() > 0
    }

    /// Whether quantizing under `recipe` in `compute` takes the fused kernels of `fast`.
    pub(super) fn fused_quantize(&self, recipe: &Recipe, compute: DType) -> bool {
        self.fused_blocks() && compute == DType::Float && (self.block_rows == 1 || super::fast::folds_rows(recipe.amax))
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
    if scheme.ggml_codec().is_some() {
        // The scales live inside the blocks.
        return Ok(vec![0]);
    }
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

/// The reverse of [`axis_last`] for arrays whose blocked axis is `len` long (`data` itself where
/// the axis is last).
fn axis_back<T: Copy + Default>(data: &[T], outer: usize, len: usize, inner: usize) -> alloc::borrow::Cow<'_, [T]> {
    if inner == 1 {
        return alloc::borrow::Cow::Borrowed(data);
    }
    let mut out = vec![T::default(); data.len()];
    axis_back_into(data, outer, len, inner, &mut out);
    alloc::borrow::Cow::Owned(out)
}

/// [`axis_back`] into `out` (of `data`'s length).
fn axis_back_into<T: Copy>(data: &[T], outer: usize, len: usize, inner: usize, out: &mut [T]) {
    for o in 0..outer {
        for i in 0..inner {
            for k in 0..len {
                out[(o * len + k) * inner + i] = data[(o * inner + i) * len + k];
            }
        }
    }
}

/// The compute dtype: the input's where the recipe computes in it (bfloat16 or float16 under
/// compressed-tensors), else float32.
fn compute_dtype(recipe: &Recipe, input: DType) -> DType {
    let in_input = recipe.scale == ScaleFormat::InputDtype
        || recipe.global == GlobalRule::CompressedTensorsEncode
        || matches!(recipe.round, ElementRound::Cast { in_compute_dtype: true, .. });
    if in_input && matches!(input, DType::Bfloat16 | DType::Float16) {
        input
    } else {
        DType::Float
    }
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
    if scheme.integer().is_some() {
        if global_scale.is_some() || (axis != -1 && axis + 1 != shape.len() as i64) {
            return Err(Error::InvalidOp {
                op: format!("{} quantize", scheme.name()),
                message: "integer schemes group a weight's last axis and have no per-tensor scale".into(),
            });
        }
        let mut raw = Vec::with_capacity(x.len() * if T::DTYPE == DType::Float { 4 } else { 2 });
        x.iter().for_each(|v| v.push_le(&mut raw));
        return super::quantize_weight(T::DTYPE, &raw, shape, scheme, None);
    }
    if let Some(codec) = scheme.ggml_codec() {
        if global_scale.is_some() {
            return Err(Error::InvalidOp {
                op: format!("{} quantize", scheme.name()),
                message: "ggml's block types have no per-tensor scale; pass none".into(),
            });
        }
        return super::codec::quantize(codec, x, shape, scheme, axis, None);
    }
    let recipe = &scheme.recipe;
    if T::DTYPE != DType::Float && !recipe.inputs.contains(&T::DTYPE) && scheme.mx().is_none() {
        return Err(Error::UnsupportedDType {
            op: "blocks quantize",
            dtype: T::DTYPE.onnx_name(),
            why: "the implementation this scheme reproduces refuses this input dtype (float32 always works: convert \
                  the tensor to float32, or to bfloat16 where the scheme takes it; `lowbit checkpoint quantize \
                  --skip REGEX` leaves a tensor as it is)",
        });
    }
    // One scale for no elements: refused here too, not only by the faces that check first.
    crate::quant::check_blocks_input(shape, scheme)?;
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
    // The fused kernels: blocks (or tiles) along the last axis, arithmetic in float32.
    let fast = fused && g.fused_quantize(recipe, compute);
    let widened;
    let values: &[f32] = match T::as_float32(x) {
        Some(v) if g.inner == 1 => v,
        _ => {
            widened = axis_last(x, &g).iter().map(|v| v.widen()).collect::<Vec<f32>>();
            &widened
        }
    };
    let from_amax = scheme.global_from_amax();
    let (codes, stored, global) = if fast {
        // The fused path takes the tensor's maximum from its block maxima where it can.
        let global_from =
            |amax: &mut dyn FnMut() -> f32| global_of(recipe, from_amax, global_scale, amax, compute, T::DTYPE);
        super::fast::quantize_rows(recipe, values, g.len, g.block_cols, g.block_rows, global_from, compute)?
    } else {
        let global =
            global_of(recipe, from_amax, global_scale, &mut || super::fast::tensor_amax(values), compute, T::DTYPE);
        let mut amaxes = block_amax(recipe.amax, values, &g);
        let count = amaxes.len();
        place_nan_maxima(recipe, compute, &mut amaxes, 0, count);
        let scales = block_scales(recipe, &amaxes, global, compute, scale_casts(recipe)?.as_ref())?;
        let codes = element_codes(recipe, values, &g, &scales, global, compute)?;
        (codes, scales.iter().map(|s| s.stored).collect(), global)
    };
    let scales_out = stored_scales(recipe, compute, &axis_back(&stored, g.outer, g.col_blocks, g.inner));
    Ok(Quantized {
        scheme: scheme.clone(),
        shape: shape.to_vec(),
        axis,
        elements: if g.inner == 1 { codes } else { axis_back(&codes, g.outer, g.len, g.inner).into_owned() },
        scales: scales_out,
        global_scale: global,
        extras: None,
    })
}

/// The stored scales in their representation (`stored` holds the code or the float's bits).
fn stored_scales(recipe: &Recipe, compute: DType, stored: &[u32]) -> Scales {
    let stored = stored.iter().copied();
    match recipe.scale {
        ScaleFormat::E8M0 | ScaleFormat::E4M3 | ScaleFormat::GgmlUe4m3 => {
            Scales::Codes(stored.map(|c| c as u8).collect())
        }
        ScaleFormat::Float16 | ScaleFormat::GgmlFloat16 => Scales::Float16(stored.map(|c| c as u16).collect()),
        ScaleFormat::Float32 => Scales::Float32(stored.map(f32::from_bits).collect()),
        ScaleFormat::InputDtype if compute == DType::Bfloat16 => {
            Scales::Bfloat16(stored.map(|c| (c >> 16) as u16).collect())
        }
        ScaleFormat::InputDtype if compute == DType::Float16 => {
            // The value is a float16 already (rounded in the compute dtype): its exact code.
            Scales::Float16(stored.map(|c| encode(recipe.profile, DType::Float16, f32::from_bits(c)) as u16).collect())
        }
        ScaleFormat::InputDtype => Scales::Float32(stored.map(f32::from_bits).collect()),
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
        extras: None,
    })
}

/// The per-tensor scale: the one given, or computed where the recipe computes one (`amax`: the
/// tensor's `max(|x|)`, a NaN anywhere giving the first NaN's magnitude; called at most once).
fn global_of(
    recipe: &Recipe,
    from_amax: bool,
    given: Option<f32>,
    amax: &mut dyn FnMut() -> f32,
    compute: DType,
    input: DType,
) -> Option<f32> {
    if given.is_some() {
        return given;
    }
    match recipe.global {
        GlobalRule::None => None,
        GlobalRule::TorchaoDecode if !from_amax => None,
        // The maximum is reduced in the input dtype and widened by `.float()`.
        GlobalRule::TorchaoDecode | GlobalRule::ModeloptDecode => {
            Some(widened_from(recipe.profile, input, amax()) / NVFP4_GLOBAL_DIVISOR)
        }
        GlobalRule::CompressedTensorsEncode => {
            // generate_gparam: 448 * 6 / max(amax, tiny) in the input dtype (torch's `scalar /
            // tensor` is `tensor.reciprocal() * scalar`, each step rounded); NaN or Inf -> 1.
            let reciprocal = round_to(recipe.profile, compute, 1.0 / clamp(amax(), TINY, f32::INFINITY));
            let g = round_to(recipe.profile, compute, reciprocal * NVFP4_GLOBAL_DIVISOR);
            Some(if g.is_finite() { g } else { 1.0 })
        }
    }
}

/// Every block's maximum (signed where [`Amax::signed`]), the elements of a block taken in
/// row-major order.
fn block_amax(rule: Amax, values: &[f32], g: &Geometry) -> Vec<f32> {
    let mut acc = vec![0.0f32; g.blocks()];
    let mut best = vec![0.0f32; if rule.signed() { g.blocks() } else { 0 }];
    let len = g.len.max(1);
    for (row, r) in values.chunks(len).enumerate().take(g.rows()) {
        let base = (row / g.block_rows) * g.col_blocks;
        for (c, xs) in r.chunks(g.block_cols).enumerate() {
            let b = base + c;
            let mut signed = if rule.signed() { best[b] } else { 0.0 };
            acc[b] = amax_fold(rule, acc[b], &mut signed, xs);
            if rule.signed() {
                best[b] = signed;
            }
        }
    }
    if rule.signed() {
        best
    } else {
        acc
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
    if let ElementRound::NearestIndexFirstTie { fused } = recipe.round {
        // ggml's best_index_mxfp4: the search in x's units against kvalues * d (d = half the
        // scale), the first index on equal errors.
        g.runs(values, 1, &mut codes, 1, |b, xs, cs| {
            let d = factors[b];
            for (&x, c) in xs.iter().zip(cs.iter_mut()) {
                *c = nearest_kvalue(x, d, fused);
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
        ElementRound::NearestIndexFirstTie { .. } => unreachable!("handled above"),
        ElementRound::IntegerTiesAway => {
            for (c, &y) in codes.iter_mut().zip(&scaled) {
                // (int8_t)roundf(x * id), as x86-64 converts it (an out-of-range value wraps).
                *c = c_int8_x86(y, RoundingMode::NearestTiesAway) as u8;
            }
        }
        ElementRound::IntegerOffsetTruncate { fused } => {
            // MIN(15, (int8_t)(x * id + 8.5f)): the sum rounded in float32, then converted as
            // x86-64 converts it (NaN and Inf: 0). The sum is never negative (|x * id| is at most
            // 8 (1 + 2^-20): a d small enough to round coarsely has an infinite 1/d).
            let code = |sum: f32| c_int8_x86(sum, RoundingMode::TowardZero).clamp(0, 15) as u8;
            if fused {
                // fmaf(x, id, 8.5f): the product not rounded on its own (ggml's steps multiply).
                g.runs(values, 1, &mut codes, 1, |b, xs, cs| {
                    let f = factors[b];
                    cs.iter_mut().zip(xs).for_each(|(c, &x)| *c = code(fused_multiply_add(x, f, 8.5)));
                });
            } else {
                codes.iter_mut().zip(&scaled).for_each(|(c, &y)| *c = code(y + 8.5));
            }
        }
        ElementRound::Cast { clamp: bound, in_compute_dtype, negative_zero_to_positive, nan, through_input_dtype } => {
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
            let plan = Plan::new(DType::Float, dtype, &casts(recipe.profile))?;
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
            if through_input_dtype && compute != DType::Float && bits_of(dtype) == 8 {
                let opts = casts(recipe.profile);
                let mut round_trip = [0u8; 256];
                for (c, r) in round_trip.iter_mut().enumerate() {
                    let wide = crate::convert::convert_code(dtype, compute, c as u64, &opts)?;
                    *r = crate::convert::convert_code(compute, dtype, wide, &opts)? as u8;
                }
                codes.iter_mut().for_each(|c| *c = round_trip[usize::from(*c)]);
            }
        }
    }
    Ok(codes)
}

/// The element values in float32 into `out` (its length checked by the caller).
pub(super) fn dequantize_into(q: &Quantized, out: &mut [f32]) -> Result<()> {
    dequantize_into_with(q, out, true)
}

/// [`dequantize_into`], through the fused kernel of `fast` where it covers the blocks and `fused`
/// is set (the tests compare both ways). Every value of `out` is written once (the caller's buffer
/// is never zero-filled first).
pub(super) fn dequantize_into_with(q: &Quantized, out: &mut [f32], fused: bool) -> Result<()> {
    let scheme = &q.scheme;
    if let Some(codec) = scheme.ggml_codec() {
        return super::codec::dequantize_into(codec, q, out);
    }
    if scheme.integer().is_some() {
        let bytes = super::dequantize_as(q, DType::Float)?;
        if bytes.len() != 4 * out.len() {
            return Err(Error::ShapeMismatch { shape: q.shape.clone(), elements: bytes.len() / 4, actual: out.len() });
        }
        for (o, b) in out.iter_mut().zip(bytes.chunks_exact(4)) {
            *o = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        }
        return Ok(());
    }
    let recipe = &scheme.recipe;
    let g = Geometry::new(&q.shape, scheme, q.axis)?;
    let n = g.elements();
    if out.len() != n {
        return Err(Error::ShapeMismatch { shape: q.shape.clone(), elements: n, actual: out.len() });
    }
    if let Some(opts) = scheme.mx() {
        let opts = crate::quant::mx::MxOptions { axis: q.axis, ..*opts };
        let Scales::Codes(scales) = &q.scales else { unreachable!("checked") };
        let element = opts.format.element_dtype();
        let mut packed = vec![0u8; packing::raw_len(element, n)?];
        packing::pack_byte_codes(element, &q.elements, &mut packed)?;
        let bytes = zerocopy::IntoBytes::as_mut_bytes(out);
        crate::quant::mx::dequantize_into(&q.shape, &packed, scales, &opts, bytes)?;
        if cfg!(target_endian = "big") {
            // dequantize_into writes little-endian bytes.
            out.iter_mut().for_each(|v| *v = f32::from_bits(u32::from_le(v.to_bits())));
        }
        return Ok(());
    }
    let compute = match &q.scales {
        Scales::Bfloat16(_) => DType::Bfloat16,
        Scales::Float16(_) if recipe.scale == ScaleFormat::InputDtype => DType::Float16,
        _ if recipe.global == GlobalRule::CompressedTensorsEncode => DType::Bfloat16,
        _ => DType::Float,
    };
    // Each block's factor: its stored scale's value, times or over the per-tensor scale as the
    // row dequantizes.
    let factor = |s: f32| match (recipe.dequantize, recipe.global, q.global_scale) {
        (
            Dequantize::Multiply | Dequantize::MultiplyNegativeZeroAsPositive,
            GlobalRule::TorchaoDecode | GlobalRule::ModeloptDecode,
            Some(gs),
        ) => product(recipe.nan.product, s, gs),
        (Dequantize::DivideGlobalToBf16, _, Some(gs)) => s / gs,
        _ => s,
    };
    // In one vector built in one pass (a scale code's factor from a 256-entry table): these
    // vectors are a few MiB for a large tensor, and each new one is fresh pages to fault in.
    let mut factors: Vec<f32> = match &q.scales {
        Scales::Codes(c) => {
            let table: [f32; 256] = core::array::from_fn(|b| factor(scale_code_value(recipe, b as u8)));
            c.iter().map(|&b| table[usize::from(b)]).collect()
        }
        Scales::Float16(v) => widen_halves(recipe.profile, DType::Float16, v)?,
        Scales::Bfloat16(v) => widen_halves(recipe.profile, DType::Bfloat16, v)?,
        Scales::Float32(v) => v.iter().map(|&s| factor(s)).collect(),
    };
    if matches!(q.scales, Scales::Float16(_) | Scales::Bfloat16(_)) {
        factors.iter_mut().for_each(|s| *s = factor(*s));
    }
    global_tail_nans(recipe, q, &mut factors);
    // The blocked-axis-last order (the tensor's own where the blocks run along its last axis).
    if g.block_rows == 1 && g.inner != 1 {
        factors = move_axis_last(&factors, g.outer, g.col_blocks, g.inner);
    }
    // Every code's element value (codes beyond the element's width never get here: checked).
    let table: [f32; 256] = core::array::from_fn(|c| element_value(recipe, c as u8));
    let rounding = match recipe.dequantize {
        Dequantize::DivideGlobalToBf16 => DType::Bfloat16,
        Dequantize::MultiplyInComputeDtype => compute,
        _ => DType::Float,
    };
    if let (DType::Float16, Scales::Float16(halves), 1) = (rounding, &q.scales, g.inner) {
        let rows_of_one = g.block_rows == 1 || recipe.block == BlockShape::Tensor;
        if recipe.nan.float16_broadcast_lanes > 0 && q.global_scale.is_none() && rows_of_one {
            return float16_products(recipe, q, &g, halves, out);
        }
    }
    if fused && g.fused_blocks() {
        // Tiles: each row's blocks are its band's tiles.
        let factors = if g.block_rows == 1 {
            factors
        } else {
            super::fast::tiles_of_rows(&factors, g.rows(), g.block_rows, g.col_blocks)
        };
        super::fast::values_times_factors(recipe, table, factors, &q.elements, g.len, g.block_cols, rounding, out)?;
        scalar_tail_nans(recipe, &g, rounding, out);
        return Ok(());
    }
    let codes = axis_last(&q.elements, &g);
    // The products in the blocked-axis-last order: `out` itself where that is the tensor's order.
    let mut moved = Vec::new();
    let products = if g.inner == 1 {
        &mut *out
    } else {
        moved.resize(n, 0.0f32);
        &mut moved[..]
    };
    g.runs(&codes, 1, products, 1, |b, cs, os| {
        let f = factors[b];
        cs.iter().zip(os.iter_mut()).for_each(|(&c, o)| {
            *o = product(recipe.nan.product, table[usize::from(c)], f);
        });
    });
    if rounding != DType::Float {
        round_all_as(recipe, rounding, products)?;
    }
    if g.inner != 1 {
        axis_back_into(&moved, g.outer, g.len, g.inner, out);
    }
    scalar_tail_nans(recipe, &g, rounding, out);
    Ok(())
}

/// The float16 dequantize of a row with `nan.float16_broadcast_lanes` (compressed-tensors' `FP8`
/// weights of a float16 model: `q.to(float16) * scale`, then the float16 tensor to float32), as
/// torch computes it on x86-64: each element code cast to float16 by the row's profile, each
/// product of two float16 values rounded once to float16 (a NaN operand: that NaN, quieted; both
/// NaN: the one the place in the loop keeps, [`keeps_element_nan`]), then the whole tensor
/// widened to float32 by the profile's float16 -> float32 conversion (torch: its vector blocks
/// keep NaN payloads, its scalar tail does not). Blocks along the last axis, one row each.
fn float16_products(recipe: &Recipe, q: &Quantized, g: &Geometry, scales: &[u16], out: &mut [f32]) -> Result<()> {
    let n = g.elements();
    let profile = recipe.profile;
    // Every element code in float16, as the profile's cast writes it.
    let codes: Vec<u8> = (0..=255u8).collect();
    let mut packed = vec![0u8; packing::raw_len(recipe.element, 256)?];
    packing::pack_byte_codes(recipe.element, &codes, &mut packed).or_else(|_| {
        // Narrower elements: the codes their width holds (the arrays' check refuses the others).
        let width = 1usize << bits_of(recipe.element);
        packed = vec![0u8; packing::raw_len(recipe.element, width)?];
        packing::pack_byte_codes(recipe.element, &codes[..width], &mut packed)
    })?;
    let count = packed.len() * 8 / bits_of(recipe.element) as usize;
    let mut table16 = vec![0u8; 2 * count];
    Plan::new(recipe.element, DType::Float16, &casts(profile))?.run(&packed, &mut table16, count)?;
    let element16 = |c: u8| u16::from_le_bytes([table16[2 * usize::from(c)], table16[2 * usize::from(c) + 1]]);
    let lanes = recipe.nan.float16_broadcast_lanes;
    let whole_tensor = recipe.block == BlockShape::Tensor;
    let mut halves = vec![0u16; n];
    g.runs(&q.elements, 1, &mut halves, 1, |b, cs, hs| {
        let s = scales[if whole_tensor { 0 } else { b }];
        let run = cs.len();
        for (i, (&c, h)) in cs.iter().zip(hs.iter_mut()).enumerate() {
            let element_first = !whole_tensor && keeps_element_nan(i, run, lanes);
            *h = float16_product(profile, element16(c), s, element_first);
        }
    });
    let src: Vec<u8> = halves.iter().flat_map(|h| h.to_le_bytes()).collect();
    let bytes = zerocopy::IntoBytes::as_mut_bytes(out);
    Plan::new(DType::Float16, DType::Float, &casts(profile))?.run(&src, bytes, n)?;
    if cfg!(target_endian = "big") {
        out.iter_mut().for_each(|v| *v = f32::from_bits(u32::from_le(v.to_bits())));
    }
    Ok(())
}

/// Whether product `i` of an inner loop of `run` products sharing one scale keeps the element's
/// NaN where both operands are NaN (`nan.float16_broadcast_lanes` = `lanes`, module docs of the
/// field).
fn keeps_element_nan(i: usize, run: usize, lanes: usize) -> bool {
    if run == 1 {
        return true;
    }
    let chunk = 2 * lanes;
    let whole = run / chunk * chunk;
    if i < whole {
        i % chunk < lanes
    } else {
        i != whole
    }
}

/// Two float16 values' product rounded once to float16 (the exact product of two float16 values
/// fits a float32), with x86-64's NaN rules: a NaN operand's bits quieted, the kept one where
/// both are NaN, the default NaN for 0 times infinity.
fn float16_product(profile: crate::Profile, element: u16, scale: u16, element_first: bool) -> u16 {
    let is_nan = |h: u16| h & 0x7C00 == 0x7C00 && h & 0x03FF != 0;
    match (is_nan(element), is_nan(scale)) {
        (true, true) if element_first => element | 0x0200,
        (true, true) => scale | 0x0200,
        (true, false) => element | 0x0200,
        (false, true) => scale | 0x0200,
        (false, false) => {
            let p = half::f16::from_bits(element).to_f32() * half::f16::from_bits(scale).to_f32();
            if p.is_nan() {
                // x86-64's default NaN 0xFFC00000 narrowed.
                0xFE00
            } else {
                encode(profile, DType::Float16, p) as u16
            }
        }
    }
}

/// Where the per-tensor scale is a NaN and a block's decoded scale is a NaN too, which of the two
/// the factor keeps depends on the block's place: torch multiplies the vector of scales by the
/// 0-dim per-tensor scale keeping the second operand's NaN, except in the last `(r - 1) % 4`
/// products, `r = N % 16` (none when `r` is 0), which keep the first's (the row's
/// `nan.global_tail`, observed with torch 2.15 on x86-64 for every N from 1 to 72). Every other
/// factor is as the row's `nan.product` made it.
fn global_tail_nans(recipe: &Recipe, q: &Quantized, factors: &mut [f32]) {
    let (Some(gs), Scales::Codes(codes)) = (q.global_scale, &q.scales) else { return };
    let (step, period) = recipe.nan.global_tail;
    if period == 0 || !gs.is_nan() || recipe.scale != ScaleFormat::E4M3 {
        return;
    }
    let n = factors.len();
    let r = n % step;
    let start = n - if r == 0 { 0 } else { (r - 1) % period };
    for (f, &c) in factors[start..].iter_mut().zip(&codes[start..]) {
        let s = scale_code_value(recipe, c);
        if s.is_nan() {
            *f = super::rules::quiet(s);
        }
    }
}

/// torch's bfloat16 multiply writes a NaN product as 0xFFFF in its vectorized loop but as 0x7FC0
/// in the scalar tail of each inner loop (the elements past the last whole step of the row's
/// `nan.lanes`). For a row that dequantizes in its compute dtype, the inner loop of `q * scale`
/// is a block's run along the last axis (a scale per row, group or tile column), or the whole
/// tensor under one scale; the NaNs `round_all_as` wrote as the vectorized loop's get the tail's
/// bits there. Blocks along another axis are left as they are (the implementations block the
/// last axis only).
fn scalar_tail_nans(recipe: &Recipe, g: &Geometry, rounding: DType, out: &mut [f32]) {
    let lanes = recipe.nan.lanes.iter().find(|(d, _)| *d == rounding).map_or(0, |l| l.1);
    if rounding != DType::Bfloat16 || recipe.dequantize != Dequantize::MultiplyInComputeDtype || lanes == 0 {
        return;
    }
    if g.inner != 1 || !out.iter().any(|v| v.is_nan()) {
        return;
    }
    let tail_nan = f32::from_bits(0x7FC0_0000);
    // One loop over the whole tensor, or one per block run along each row.
    let run = if recipe.block == BlockShape::Tensor { out.len() } else { g.block_cols.min(g.len).max(1) };
    let whole_steps = |len: usize| len / lanes * lanes;
    if recipe.block == BlockShape::Tensor {
        let start = whole_steps(run);
        out[start..].iter_mut().filter(|v| v.is_nan()).for_each(|v| *v = tail_nan);
        return;
    }
    for row in out.chunks_mut(g.len.max(1)) {
        for block in row.chunks_mut(run) {
            let start = whole_steps(block.len());
            block[start..].iter_mut().filter(|v| v.is_nan()).for_each(|v| *v = tail_nan);
        }
    }
}

/// The value of a one-byte scale code as the row decodes it.
fn scale_code_value(recipe: &Recipe, b: u8) -> f32 {
    match recipe.scale {
        // ggml_e8m0_to_fp32_half: 2^(e - 128) for every byte, 0xFF included (no NaN).
        ScaleFormat::E8M0 if recipe.dequantize == Dequantize::GgmlHalfScale => pow2(i32::from(b) - 128),
        // compressed-tensors' decompress_mx_scale: 2.0 ** (e - 127), 0xFF too (+Inf, no NaN).
        ScaleFormat::E8M0 if recipe.dequantize == Dequantize::DivideGlobalToBf16 => pow2(i32::from(b) - 127),
        // torchao's get_fp_scale computes 2^(e - 127) itself, with Python's float('nan') for 0xFF
        // (0x7FC00000), not torch's cast (0x7F800001): the rounding core's decoding.
        ScaleFormat::E8M0 => decode(crate::Profile::Spec, DType::Float8E8M0, u64::from(b)),
        ScaleFormat::E4M3 => decode(recipe.profile, DType::Float8E4M3FN, u64::from(b)),
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
        Dequantize::MultiplyNegativeZeroAsPositive => decode(recipe.profile, recipe.element, u64::from(c)) + 0.0,
        _ => decode(recipe.profile, recipe.element, u64::from(c)),
    }
}

/// float16 or bfloat16 bits to float32 through the rounding core's plan, all at once.
fn widen_halves(profile: crate::Profile, dtype: DType, halves: &[u16]) -> Result<Vec<f32>> {
    let src: Vec<u8> = halves.iter().flat_map(|h| h.to_le_bytes()).collect();
    let mut wide = vec![0u8; 4 * halves.len()];
    Plan::new(dtype, DType::Float, &casts(profile))?.run(&src, &mut wide, halves.len())?;
    Ok(wide.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect())
}

/// A block-scaled matrix as a dot product reads it: each element's value, the length of a
/// block along the rows (the last axis), each (row, block)'s scale, and the per-tensor factor.
/// Element value times its block's scale times the factor is the value the recipe dequantizes
/// to (before the recipe's own rounding of that product).
#[cfg(feature = "dot")]
pub(crate) struct BlockOperand {
    /// One per element, row-major.
    pub(crate) values: Vec<f32>,
    /// Elements per block along a row.
    pub(crate) block: usize,
    /// One per row and block of the row: `rows x ceil(cols / block)`.
    pub(crate) scales: Vec<f32>,
    /// The per-tensor factor, where the recipe multiplies by one.
    pub(crate) factor: Option<f32>,
}

/// `q` (a matrix blocked along its last axis) as a [`BlockOperand`]; refused for the schemes a
/// dot product cannot take apart that way (ggml's block types with sub-block scales, integer
/// schemes, a per-tensor scale that divides).
#[cfg(feature = "dot")]
pub(crate) fn block_operand(q: &Quantized) -> Result<BlockOperand> {
    let scheme = &q.scheme;
    let refuse = |why: &str| Error::InvalidOp { op: format!("{} dot operand", scheme.name()), message: why.into() };
    if scheme.ggml_codec().is_some() || scheme.integer().is_some() {
        return Err(refuse("a dot product takes block-scaled schemes with one scale per block (MX, NVFP4, FP8, ggml:q8_0, ggml:q4_0, ...)"));
    }
    let [rows, cols] = q.shape[..] else {
        return Err(refuse("an operand is a matrix (rows x K)"));
    };
    let rank = q.shape.len() as i64;
    if q.axis != -1 && q.axis != rank - 1 {
        return Err(refuse("an operand is blocked along K, its last axis"));
    }
    super::layout::check_arrays(q)?;
    let recipe = &scheme.recipe;
    let factor = match (recipe.global, q.global_scale) {
        (_, None) => None,
        (GlobalRule::TorchaoDecode | GlobalRule::ModeloptDecode, Some(g)) => Some(g),
        _ => return Err(refuse("its per-tensor scale divides the block scales: not taken by a dot product yet")),
    };
    let g = Geometry::new(&q.shape, scheme, q.axis)?;
    let table: [f32; 256] = core::array::from_fn(|c| element_value(recipe, c as u8));
    let values: Vec<f32> = q.elements.iter().map(|&c| table[usize::from(c)]).collect();
    let exact = crate::CastOptions::with_profile(crate::Profile::Spec);
    let block_values: Vec<f32> = match &q.scales {
        Scales::Codes(c) => c.iter().map(|&b| scale_code_value(recipe, b)).collect(),
        Scales::Float16(v) | Scales::Bfloat16(v) => {
            let dtype = if matches!(q.scales, Scales::Float16(_)) { DType::Float16 } else { DType::Bfloat16 };
            let src: Vec<u8> = v.iter().flat_map(|h| h.to_le_bytes()).collect();
            let mut wide = vec![0u8; 4 * v.len()];
            Plan::new(dtype, DType::Float, &exact)?.run(&src, &mut wide, v.len())?;
            wide.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect()
        }
        Scales::Float32(v) => v.clone(),
    };
    let block = g.block_cols.min(cols).max(1);
    let per_row = cols.div_ceil(block);
    let mut scales = Vec::with_capacity(rows * per_row);
    for row in 0..rows {
        for b in 0..per_row {
            scales.push(block_values[g.block_of(row, b * block)]);
        }
    }
    Ok(BlockOperand { values, block, scales, factor })
}
