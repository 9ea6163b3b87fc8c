//! Fused block kernels: the engine's arithmetic for blocks of consecutive elements along the last
//! axis (every `Row` and `Channel` recipe with the blocked axis innermost), in passes that read
//! the input in place and write each output once: block maxima from the float32 bits, the scales
//! by the engine (once per block), then every element scaled and encoded in one loop by the element
//! plan's lane kernel (or the row's integer rule), and on the way back a table of the element
//! values times the block's factor. The passes run through `simd::widest_span`, slices as
//! arguments, so each instruction-set copy knows what aliases nothing.
//!
//! Nothing here decides a result the engine does not: lanes the kernels do not answer (NaN and
//! infinite scaled values, blocks holding a NaN) go back to the engine's own functions, and the
//! tests compare this path with the engine's general one on random data and on every edge class
//! of issue 26, for every row.

use super::engine::{self, BlockScale};
use super::recipes::{Amax, ElementRound, NanElement, Recipe};
use crate::alloc_prelude::*;
use crate::convert::{convert_code, CastOptions};
use crate::dtype::DType;
use crate::error::Result;
use crate::kernels::simd::{widest_span, SpanKernel};
use crate::kernels::{LaneEncoder, WithLaneEncoder};
use crate::plan::Plan;

/// float32's magnitude bits of +Inf: a magnitude above it is a NaN.
const INF_BITS: u32 = 0x7F80_0000;

/// The float32 at `b` (four native-order bytes: the input is viewed in place).
#[inline(always)]
fn lane(b: &[u8]) -> f32 {
    f32::from_ne_bytes([b[0], b[1], b[2], b[3]])
}

/// What the maxima pass needs: the rule, the block and the row length (a row's last block may be
/// short).
#[derive(Clone, Copy)]
struct MaximaShape {
    rule: Amax,
    block: usize,
    row: usize,
}

/// Every block's maximum under the row's [`Amax`] rule, as [`engine::amax_fold`] takes it, from
/// the bits: the largest magnitude is the largest integer of the bits without the sign, which
/// vectorises; blocks whose answer depends on where a NaN sits go to the fold.
struct BlockMaxima;

impl SpanKernel for BlockMaxima {
    type Part = MaximaShape;
    type Scratch = ();
    #[inline(always)]
    fn run(&self, shape: &MaximaShape, src: &[u8], dst: &mut [u8], _n: usize, _scratch: &mut ()) {
        if shape.row % shape.block == 0 {
            match shape.block {
                16 => return whole_maxima::<64>(shape.rule, src, dst),
                32 => return whole_maxima::<128>(shape.rule, src, dst),
                64 => return whole_maxima::<256>(shape.rule, src, dst),
                128 => return whole_maxima::<512>(shape.rule, src, dst),
                _ => {}
            }
        }
        let mut out = dst.chunks_exact_mut(4);
        for row in src.chunks(4 * shape.row) {
            for (xs, o) in row.chunks(4 * shape.block).zip(&mut out) {
                o.copy_from_slice(&block_maximum(shape.rule, xs).to_ne_bytes());
            }
        }
    }
}

/// [`BlockMaxima`] for blocks of `BYTES` bytes filling every row (a constant trip count).
#[inline(always)]
fn whole_maxima<const BYTES: usize>(rule: Amax, src: &[u8], dst: &mut [u8]) {
    for (xs, o) in src.chunks_exact(BYTES).zip(dst.chunks_exact_mut(4)) {
        let xs: &[u8; BYTES] = xs.try_into().expect("BYTES bytes");
        o.copy_from_slice(&block_maximum(rule, xs).to_ne_bytes());
    }
}

#[inline(always)]
fn block_maximum(rule: Amax, xs: &[u8]) -> f32 {
    let skip_nan = matches!(rule, Amax::NanSkipped | Amax::SignedLargest);
    let mut m = 0u32;
    for b in xs.chunks_exact(4) {
        let a = lane(b).to_bits() & 0x7FFF_FFFF;
        m = m.max(if skip_nan && a > INF_BITS { 0 } else { a });
    }
    match rule {
        // The first lane of the largest magnitude, a NaN never wins; none above 0: the fold's 0.
        Amax::SignedLargest => {
            xs.chunks_exact(4).map(lane).find(|v| m != 0 && v.to_bits() & 0x7FFF_FFFF == m).unwrap_or(0.0)
        }
        // Which NaN (and, for a running max, whether it counts) is the fold's to say.
        Amax::NanPropagating | Amax::RunningMax if m > INF_BITS => {
            let values: Vec<f32> = xs.chunks_exact(4).map(lane).collect();
            engine::amax_fold(rule, 0.0, &mut 0.0, &values)
        }
        _ => f32::from_bits(m),
    }
}

/// `max(|x|)` of the whole slice with a NaN anywhere giving the first NaN's magnitude (the
/// engine's per-tensor maximum).
pub(super) fn tensor_amax(values: &[f32]) -> f32 {
    if values.is_empty() {
        return 0.0;
    }
    let shape = MaximaShape { rule: Amax::NanPropagating, block: values.len(), row: values.len() };
    let mut out = [0u8; 4];
    widest_span(&BlockMaxima, &shape, zerocopy::IntoBytes::as_bytes(values), &mut out, values.len(), &mut ());
    f32::from_ne_bytes(out)
}

/// The maxima of the blocks of `values` (`rows x row`, blocks of `block` along each row).
pub(super) fn block_maxima(rule: Amax, values: &[f32], row: usize, block: usize, blocks: usize) -> Vec<f32> {
    let mut maxima = vec![0.0f32; blocks];
    let shape = MaximaShape { rule, block, row };
    let out = zerocopy::IntoBytes::as_mut_bytes(maxima.as_mut_slice());
    widest_span(&BlockMaxima, &shape, zerocopy::IntoBytes::as_bytes(values), out, values.len(), &mut ());
    maxima
}

/// How one scaled lane becomes a code: `code(x, factor)` returns the code and whether the lane is
/// one the rule does not answer (the caller then asks the engine).
trait ElementRule {
    fn code(&self, x: f32, factor: f32) -> (u8, bool);
}

/// `x * factor` or `x / factor`, as the row's step says.
#[inline(always)]
fn scaled<const MULTIPLY: bool>(x: f32, factor: f32) -> f32 {
    if MULTIPLY {
        x * factor
    } else {
        x / factor
    }
}

/// [`ElementRound::Cast`]: the clamp (NaN passes), -0 to +0 where the row says, then the element
/// plan's lane kernel, which answers every finite lane; NaN and infinite lanes are the engine's.
struct CastLane<'a, E, const MULTIPLY: bool> {
    encoder: &'a E,
    bound: f32,
    positive_zero: bool,
}

impl<E: LaneEncoder, const MULTIPLY: bool> ElementRule for CastLane<'_, E, MULTIPLY> {
    #[inline(always)]
    fn code(&self, x: f32, factor: f32) -> (u8, bool) {
        let y = cast_input::<MULTIPLY>(x, factor, self.bound, self.positive_zero);
        (self.encoder.encode_lane(y) as u8, y.to_bits() & 0x7FFF_FFFF >= INF_BITS)
    }
}

/// The value the element cast rounds: scaled, -0 made +0 (adding +0 changes nothing else), and
/// clamped to +-`bound` with a NaN passing.
#[inline(always)]
fn cast_input<const MULTIPLY: bool>(x: f32, factor: f32, bound: f32, positive_zero: bool) -> f32 {
    let y = scaled::<MULTIPLY>(x, factor);
    let y = if positive_zero { y + 0.0 } else { y };
    if y < -bound {
        -bound
    } else if y > bound {
        bound
    } else {
        y
    }
}

/// [`ElementRound::IntegerTiesAway`] (ggml Q8_0's `roundf`, then int8): the scaled value clamped
/// into (-2^31, 2^31) so the truncating conversion is exact, its integer part moved one away from
/// zero where the dropped fraction is at least a half, clamped to [-128, 127]; NaN and the
/// infinities give 0 as [`engine::integer`] says.
struct TiesAwayInt8<const MULTIPLY: bool>;

impl<const MULTIPLY: bool> ElementRule for TiesAwayInt8<MULTIPLY> {
    #[inline(always)]
    fn code(&self, x: f32, factor: f32) -> (u8, bool) {
        let y = scaled::<MULTIPLY>(x, factor);
        let bounded = y.clamp(-1024.0, 1024.0);
        let whole = bounded as i32;
        let fraction = bounded - whole as f32;
        let rounded = whole + i32::from(fraction >= 0.5) - i32::from(fraction <= -0.5);
        let code = if y.to_bits() & 0x7FFF_FFFF < INF_BITS { rounded.clamp(-128, 127) } else { 0 };
        (code as i8 as u8, false)
    }
}

/// [`ElementRound::IntegerOffsetTruncate`] (ggml Q4_0's `(int8_t)(x * id + 8.5f)`, at most 15):
/// the sum rounded in float32, truncated toward zero, clamped to [0, 15]; a NaN or infinite sum
/// gives 0 as [`engine::integer`] says.
struct OffsetTruncate<const MULTIPLY: bool>;

impl<const MULTIPLY: bool> ElementRule for OffsetTruncate<MULTIPLY> {
    #[inline(always)]
    fn code(&self, x: f32, factor: f32) -> (u8, bool) {
        let sum = scaled::<MULTIPLY>(x, factor) + 8.5;
        let code = if sum.to_bits() & 0x7FFF_FFFF < INF_BITS { (sum.clamp(-1.0, 16.0) as i32).clamp(0, 15) } else { 0 };
        (code as u8, false)
    }
}

/// [`ElementRound::NearestIndexFirstTie`]: the engine's search itself, on x and the block's `d`.
struct NearestKvalue;

impl ElementRule for NearestKvalue {
    #[inline(always)]
    fn code(&self, x: f32, d: f32) -> (u8, bool) {
        (engine::nearest_kvalue(x, d), false)
    }
}

/// The element pass: every lane of every block through `rule` with its block's factor, one code
/// byte per element; a block with a lane the rule does not answer is marked in the scratch.
struct ElementPass<R> {
    rule: R,
    block: usize,
    row: usize,
}

impl<R: ElementRule> SpanKernel for ElementPass<R> {
    type Part = Vec<f32>;
    type Scratch = Vec<bool>;
    #[inline(always)]
    fn run(&self, factors: &Vec<f32>, src: &[u8], dst: &mut [u8], _n: usize, marks: &mut Vec<bool>) {
        // The usual blocks, every row whole blocks: loops of a constant trip count (vectorised
        // and unrolled, no remainder).
        if self.row % self.block == 0 {
            match self.block {
                16 => return self.whole_blocks::<16, 64>(factors, src, dst, marks),
                32 => return self.whole_blocks::<32, 128>(factors, src, dst, marks),
                64 => return self.whole_blocks::<64, 256>(factors, src, dst, marks),
                128 => return self.whole_blocks::<128, 512>(factors, src, dst, marks),
                _ => {}
            }
        }
        let mut blocks = factors.iter().zip(marks.iter_mut());
        for (row, codes) in src.chunks(4 * self.row).zip(dst.chunks_mut(self.row)) {
            for ((xs, cs), (&factor, mark)) in
                row.chunks(4 * self.block).zip(codes.chunks_mut(self.block)).zip(&mut blocks)
            {
                let mut unanswered = false;
                for (b, c) in xs.chunks_exact(4).zip(cs.iter_mut()) {
                    let (code, other) = self.rule.code(lane(b), factor);
                    *c = code;
                    unanswered |= other;
                }
                *mark = unanswered;
            }
        }
    }
}

impl<R: ElementRule> ElementPass<R> {
    /// [`SpanKernel::run`] for blocks of `B` lanes (`BYTES` = 4 `B` bytes of float32) filling
    /// every row.
    #[inline(always)]
    fn whole_blocks<const B: usize, const BYTES: usize>(
        &self,
        factors: &[f32],
        src: &[u8],
        dst: &mut [u8],
        marks: &mut [bool],
    ) {
        let blocks = src.chunks_exact(BYTES).zip(dst.chunks_exact_mut(B));
        for ((xs, cs), (&factor, mark)) in blocks.zip(factors.iter().zip(marks.iter_mut())) {
            let xs: &[u8; BYTES] = xs.try_into().expect("BYTES bytes");
            let cs: &mut [u8; B] = cs.try_into().expect("B codes");
            let mut unanswered = false;
            for (b, c) in xs.chunks_exact(4).zip(cs.iter_mut()) {
                let (code, other) = self.rule.code(lane(b), factor);
                *c = code;
                unanswered |= other;
            }
            *mark = unanswered;
        }
    }
}

/// Runs `rule` over the tensor; returns which blocks hold lanes it does not answer.
fn element_pass<R: ElementRule>(
    rule: R,
    src: &[u8],
    codes: &mut [u8],
    factors: &Vec<f32>,
    row: usize,
    block: usize,
) -> Vec<bool> {
    let mut marks = vec![false; factors.len()];
    widest_span(&ElementPass { rule, block, row }, factors, src, codes, codes.len(), &mut marks);
    marks
}

/// The element codes of `values` (`rows x row`, blocks of `block` along each row, blocks in
/// row-major order with their `scales`), as the engine's `element_codes` gives them.
pub(super) fn element_codes(
    recipe: &Recipe,
    values: &[f32],
    row: usize,
    block: usize,
    scales: &[BlockScale],
    global: Option<f32>,
) -> Result<Vec<u8>> {
    let (multiply, factors) = engine::element_factors(recipe, scales, global);
    let src = zerocopy::IntoBytes::as_bytes(values);
    let mut codes = vec![0u8; values.len()];
    match recipe.round {
        ElementRound::NearestIndexFirstTie => {
            element_pass(NearestKvalue, src, &mut codes, &factors, row, block);
        }
        ElementRound::IntegerTiesAway if multiply => {
            element_pass(TiesAwayInt8::<true>, src, &mut codes, &factors, row, block);
        }
        ElementRound::IntegerTiesAway => {
            element_pass(TiesAwayInt8::<false>, src, &mut codes, &factors, row, block);
        }
        ElementRound::IntegerOffsetTruncate if multiply => {
            element_pass(OffsetTruncate::<true>, src, &mut codes, &factors, row, block);
        }
        ElementRound::IntegerOffsetTruncate => {
            element_pass(OffsetTruncate::<false>, src, &mut codes, &factors, row, block);
        }
        ElementRound::Cast { clamp, negative_zero_to_positive, nan, .. } => {
            let dtype = recipe.element;
            let plan = Plan::new(DType::Float, dtype, &CastOptions::saturating(true))?;
            let bound = clamp.unwrap_or(f32::INFINITY);
            let pass = CastPass {
                src,
                codes: &mut codes,
                factors: &factors,
                row,
                block,
                bound,
                multiply,
                positive_zero: negative_zero_to_positive,
            };
            let marks = plan.with_finite_lane_encoder(pass).ok_or_else(|| crate::error::Error::InvalidOp {
                op: "blocks quantize".into(),
                message: format!("no float32 lane kernel for FLOAT -> {dtype}"),
            })?;
            // The lanes the kernel does not answer: the plan's code (the core's) and the row's NaN rule.
            let cast = CastOptions::saturating(true);
            for (b, _) in marks.iter().enumerate().filter(|(_, m)| **m) {
                let (r, c) = (b / row.div_ceil(block), b % row.div_ceil(block));
                let start = r * row + c * block;
                let end = (start + block).min(r * row + row);
                let f = factors[b];
                for i in start..end {
                    let y = if multiply {
                        cast_input::<true>(values[i], f, bound, negative_zero_to_positive)
                    } else {
                        cast_input::<false>(values[i], f, bound, negative_zero_to_positive)
                    };
                    if y.is_finite() {
                        continue;
                    }
                    codes[i] = if y.is_nan() && nan != NanElement::Cast {
                        // A NaN factor is what torch's product carries, even over a NaN x.
                        engine::nan_code(nan, dtype, if f.is_nan() { f } else { y })
                    } else {
                        convert_code(DType::Float, dtype, u64::from(y.to_bits()), &cast)? as u8
                    };
                }
            }
        }
    }
    Ok(codes)
}

/// The cast rows' element pass with the plan's lane kernel (generic over its type).
struct CastPass<'a> {
    src: &'a [u8],
    codes: &'a mut [u8],
    factors: &'a Vec<f32>,
    row: usize,
    block: usize,
    bound: f32,
    multiply: bool,
    positive_zero: bool,
}

impl WithLaneEncoder for CastPass<'_> {
    type Output = Vec<bool>;
    #[inline(always)]
    fn run<E: LaneEncoder>(self, encoder: &E) -> Vec<bool> {
        let CastPass { src, codes, factors, row, block, bound, multiply, positive_zero } = self;
        if multiply {
            element_pass(CastLane::<E, true> { encoder, bound, positive_zero }, src, codes, factors, row, block)
        } else {
            element_pass(CastLane::<E, false> { encoder, bound, positive_zero }, src, codes, factors, row, block)
        }
    }
}

/// The dequantizing pass: each code's value from the 256-entry table times its block's factor.
struct ValuesTimesFactor {
    block: usize,
    row: usize,
}

impl SpanKernel for ValuesTimesFactor {
    type Part = ([f32; 256], Vec<f32>);
    type Scratch = ();
    #[inline(always)]
    fn run(&self, part: &([f32; 256], Vec<f32>), codes: &[u8], out: &mut [u8], _n: usize, _scratch: &mut ()) {
        let (table, factors) = part;
        if self.row % self.block == 0 && self.block == 32 {
            const B: usize = 32;
            for ((cs, os), &f) in codes.chunks_exact(B).zip(out.chunks_exact_mut(4 * B)).zip(factors) {
                let cs: &[u8; B] = cs.try_into().expect("B codes");
                let os: &mut [u8; 4 * B] = os.try_into().expect("4 B bytes");
                for (&c, o) in cs.iter().zip(os.chunks_exact_mut(4)) {
                    o.copy_from_slice(&(table[usize::from(c)] * f).to_ne_bytes());
                }
            }
            return;
        }
        let mut factors = factors.iter();
        for (row, outs) in codes.chunks(self.row).zip(out.chunks_mut(4 * self.row)) {
            for ((cs, os), &f) in row.chunks(self.block).zip(outs.chunks_mut(4 * self.block)).zip(&mut factors) {
                for (&c, o) in cs.iter().zip(os.chunks_exact_mut(4)) {
                    o.copy_from_slice(&(table[usize::from(c)] * f).to_ne_bytes());
                }
            }
        }
    }
}

/// `out[i] = table[codes[i]] * factors[block of i]` for `rows x row` codes in blocks of `block`.
pub(super) fn values_times_factors(
    table: [f32; 256],
    factors: Vec<f32>,
    codes: &[u8],
    row: usize,
    block: usize,
) -> Vec<f32> {
    let mut out = vec![0.0f32; codes.len()];
    let part = (table, factors);
    let bytes = zerocopy::IntoBytes::as_mut_bytes(out.as_mut_slice());
    widest_span(&ValuesTimesFactor { block, row }, &part, codes, bytes, codes.len(), &mut ());
    out
}
