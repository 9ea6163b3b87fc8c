//! Fused block kernels: the engine's arithmetic for blocks of consecutive elements along the last
//! axis (every `Row` and `Channel` recipe with the blocked axis innermost) and for 2-D tiles and
//! whole tensors (a band of rows at a time: the tile maxima folded from the rows' block maxima,
//! then each row's element pass with its band's factors), in passes that read
//! the input in place and write each output once: block maxima from the float32 bits (the SIMD
//! module's magnitudes kernel where the CPU has one), the scales with lanes = blocks (the row's
//! `DivideSteps` and the scale plan's lane kernel, or exponents from the bits; the engine's
//! `block_scale` for the other rules and blocks), then every element scaled and encoded in one
//! loop by the element plan's lane kernel (or the row's integer rule), and on the way back a table
//! of the element values times the block's factor. The passes run through `simd::widest_span`,
//! slices as arguments, so each instruction-set copy knows what aliases nothing.
//!
//! Nothing here decides a result the engine does not: lanes the kernels do not answer (NaN and
//! infinite scaled values, blocks holding a NaN) go back to the engine's own functions, and the
//! tests compare this path with the engine's general one on random data and on every edge class
//! of the recipes' edge list, for every row.

use super::recipes::{Amax, ElementRound, NanElement, ProductNan, Recipe, ScaleRule};
use super::rules::{self, BlockScale, DivideSteps, ScaleCasts};
use crate::alloc_prelude::*;
use crate::convert::convert_code;
use crate::dtype::DType;
use crate::error::Result;
use crate::kernels::simd::{self, widest_span, SpanKernel};
use crate::kernels::{LaneEncoder, WithLaneEncoder};
use crate::plan::Plan;

/// float32's magnitude bits of +Inf: a magnitude above it is a NaN.
const INF_BITS: u32 = 0x7F80_0000;
/// float32's magnitude bits of 2^64: from it on (infinities and NaN included) the core rounds to no
/// 64-bit integer and [`rules::c_int8_x86`] gives 0.
const NO_INTEGER_BITS: u32 = (64 + 127) << 23;

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

/// Every block's maximum under the row's [`Amax`] rule, as [`rules::amax_fold`] takes it, from
/// the bits: the largest magnitude is the largest integer of the bits without the sign, which
/// vectorises; blocks whose answer depends on where a NaN sits go to the fold.
struct BlockMaxima;

impl SpanKernel for BlockMaxima {
    type Part = MaximaShape;
    type Scratch = ();
    #[inline(always)]
    fn run(&self, shape: &MaximaShape, src: &[u8], dst: &mut [u8], _n: usize, _scratch: &mut ()) {
        if let (true, Some(values)) = (shape.row % shape.block == 0, float_lanes(src)) {
            match shape.block {
                16 => return whole_maxima::<16>(shape.rule, values, dst),
                32 => return whole_maxima::<32>(shape.rule, values, dst),
                64 => return whole_maxima::<64>(shape.rule, values, dst),
                128 => return whole_maxima::<128>(shape.rule, values, dst),
                _ => {}
            }
        }
        let mut out = dst.chunks_exact_mut(4);
        for row in src.chunks(4 * shape.row) {
            for (xs, o) in row.chunks(4 * shape.block).zip(&mut out) {
                o.copy_from_slice(&block_maximum(shape.rule, xs.chunks_exact(4).map(lane)).to_ne_bytes());
            }
        }
    }
}

/// The bytes as float32 lanes where they are aligned (always: they are a float32 slice viewed as
/// bytes); read lane by lane from bytes, the compiler gathered them.
#[inline(always)]
fn float_lanes(src: &[u8]) -> Option<&[f32]> {
    <[f32] as zerocopy::FromBytes>::ref_from_bytes(src).ok()
}

/// [`BlockMaxima`] for blocks of `B` lanes (a multiple of 8) filling every row: every block's
/// largest magnitude (and for the signed maximum the first lane holding it) first, by the SIMD
/// module's kernel where the CPU has one, then the rule's answer from it ([`finish_maximum`]).
#[inline(always)]
fn whole_maxima<const B: usize>(rule: Amax, values: &[f32], dst: &mut [u8]) {
    let blocks = values.len() / B;
    let skip_nan = matches!(rule, Amax::NanSkipped | Amax::SignedLargest);
    let signed = rule.signed();
    let mut magnitudes = vec![0u32; blocks];
    let mut first = vec![0u32; if signed { blocks } else { 0 }];
    if !simd::block_magnitudes(values, B, skip_nan, &mut magnitudes, &mut first) {
        for (xs, m) in values.chunks_exact(B).zip(magnitudes.iter_mut()) {
            let xs: &[f32; B] = xs.try_into().expect("B lanes");
            *m = if skip_nan {
                largest_magnitude::<true>(xs.iter().copied())
            } else {
                largest_magnitude::<false>(xs.iter().copied())
            };
        }
        for ((xs, f), &m) in values.chunks_exact(B).zip(first.iter_mut()).zip(&magnitudes) {
            *f = first_of_magnitude(xs, m) as u32;
        }
    }
    let Ok(maxima) = <[f32] as zerocopy::FromBytes>::mut_from_bytes(dst) else {
        unreachable!("the maxima are a float32 slice viewed as bytes")
    };
    // The rule's answer, in loops that branch only where it depends on the lanes.
    if signed {
        for ((xs, o), (&m, &f)) in values.chunks_exact(B).zip(maxima.iter_mut()).zip(magnitudes.iter().zip(&first)) {
            *o = finish_maximum(rule, m, f as usize, xs);
        }
        return;
    }
    for (o, &m) in maxima.iter_mut().zip(&magnitudes) {
        *o = f32::from_bits(m);
    }
    if rule != Amax::NanSkipped {
        for ((xs, o), &m) in values.chunks_exact(B).zip(maxima.iter_mut()).zip(&magnitudes) {
            if m > INF_BITS {
                *o = finish_maximum(rule, m, B, xs);
            }
        }
    }
}

/// The first lane of `xs` whose magnitude's bits are `m` (`xs.len()` where none is).
#[inline(always)]
fn first_of_magnitude(xs: &[f32], m: u32) -> usize {
    xs.iter().position(|v| v.to_bits() & 0x7FFF_FFFF == m).unwrap_or(xs.len())
}

/// The largest magnitude's bits (as i32: SSE2 compares signed, and magnitudes fit), NaN lanes
/// left out where `SKIP_NAN`.
#[inline(always)]
fn largest_magnitude<const SKIP_NAN: bool>(xs: impl Iterator<Item = f32>) -> u32 {
    xs.fold(0i32, |m, x| {
        let a = (x.to_bits() & 0x7FFF_FFFF) as i32;
        m.max(if SKIP_NAN && a > INF_BITS as i32 { 0 } else { a })
    }) as u32
}

#[inline(always)]
fn block_maximum(rule: Amax, xs: impl Iterator<Item = f32> + Clone) -> f32 {
    let m = if matches!(rule, Amax::NanSkipped | Amax::SignedLargest) {
        largest_magnitude::<true>(xs.clone())
    } else {
        largest_magnitude::<false>(xs.clone())
    };
    let values: Vec<f32> = if rule.signed() || m > INF_BITS { xs.collect() } else { Vec::new() };
    finish_maximum(rule, m, first_of_magnitude(&values, m), &values)
}

/// A block's maximum under `rule` from its largest magnitude `m` ([`largest_magnitude`], NaN
/// lanes left out for [`Amax::NanSkipped`] and [`Amax::SignedLargest`]) and, for the signed
/// rules, the first lane holding it; `xs` are the block's lanes (read only for the signed
/// maximum and for blocks holding a NaN).
#[inline(always)]
fn finish_maximum(rule: Amax, m: u32, first: usize, xs: &[f32]) -> f32 {
    match rule {
        // The first lane of the largest magnitude, a NaN never wins; none above 0: the fold's 0.
        Amax::SignedLargest => match xs.get(first) {
            Some(&v) if m != 0 => v,
            _ => 0.0,
        },
        // NaN lanes counted: the first NaN wins; else the first lane of the largest magnitude
        // (lane 0 of an all-zero block).
        Amax::SignedArgmax => {
            let lane = if m > INF_BITS { xs.iter().position(|v| v.is_nan()).unwrap_or(first) } else { first };
            xs.get(lane).copied().unwrap_or(0.0)
        }
        // Which NaN (and, for a running max, whether it counts) is the fold's to say.
        Amax::NanPropagating | Amax::RunningMax if m > INF_BITS => rules::amax_fold(rule, 0.0, &mut 0.0, xs),
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

/// How one lane becomes a code: `prepare` gives the value the rule rounds from `x` and its
/// block's factor, `code` its code, and `unanswered` whether it is a lane the rule does not
/// answer (the caller then asks the engine). The three run in one loop over a block's lanes,
/// which vectorises (three loops over a buffer of the block's values kept the selects of the cast
/// lanes as branches: twice the time).
trait ElementRule: Clone {
    /// Whether the element pass works on a copy of the rule (measured with rustc 1.95: the cast
    /// lanes' selects vectorised only then, ggml's kvalue thresholds ran slower so).
    const COPIED: bool = false;
    fn prepare(&self, x: f32, factor: f32) -> f32;
    fn code(&self, y: f32, factor: f32) -> u8;
    fn unanswered(&self, y: f32) -> bool {
        let _ = y;
        false
    }
}

/// `x * factor` or `x / factor`, as the row's step says.
#[inline(always)]
fn scaled<const MULTIPLY: bool>(x: f32, factor: f32) -> f32 {
    rules::nan_first(x, if MULTIPLY { x * factor } else { x / factor })
}

/// [`ElementRound::Cast`]: the clamp (NaN passes), -0 to +0 where the row says, then the element
/// plan's lane kernel, which answers every finite lane; NaN and infinite lanes are the engine's.
#[derive(Clone)]
struct CastLane<E, const MULTIPLY: bool> {
    /// Owned: the kernel's fields are then read through the kernel argument itself, which the
    /// compiler knows it may read ahead (through a second reference, its selects stayed branches).
    encoder: E,
    bound: f32,
    positive_zero: bool,
}

impl<E: LaneEncoder, const MULTIPLY: bool> ElementRule for CastLane<E, MULTIPLY> {
    const COPIED: bool = true;
    #[inline(always)]
    fn prepare(&self, x: f32, factor: f32) -> f32 {
        // [`cast_input`] without its choice of NaN (no NaN lane is answered here): the selects
        // stay vector selects.
        let (bound, positive_zero) = (self.bound, self.positive_zero);
        let y = if MULTIPLY { x * factor } else { x / factor };
        let y = if positive_zero { y + 0.0 } else { y };
        let y = if y < -bound { -bound } else { y };
        if y > bound {
            bound
        } else {
            y
        }
    }
    #[inline(always)]
    fn code(&self, y: f32, _factor: f32) -> u8 {
        self.encoder.encode_lane(y) as u8
    }
    #[inline(always)]
    fn unanswered(&self, y: f32) -> bool {
        y.to_bits() & 0x7FFF_FFFF >= INF_BITS
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

/// [`ElementRound::IntegerTiesAway`] (ggml Q8_0's `(int8_t)roundf(y)`): the scaled value rounded
/// to an integer, ties away from zero, and its low 8 bits (x86-64's conversion, as
/// [`rules::c_int8_x86`] says: a value beyond int8 wraps); NaN and the infinities give 0.
#[derive(Clone)]
struct TiesAwayInt8<const MULTIPLY: bool>;

impl<const MULTIPLY: bool> ElementRule for TiesAwayInt8<MULTIPLY> {
    #[inline(always)]
    fn prepare(&self, x: f32, factor: f32) -> f32 {
        // Which NaN does not matter: every NaN gives 0.
        if MULTIPLY {
            x * factor
        } else {
            x / factor
        }
    }
    #[inline(always)]
    fn code(&self, y: f32, _factor: f32) -> u8 {
        // Rust's `round` is C's `roundf` (ties away; with SSE4.1 an addition and a vector
        // rounding); the integer modulo 256 as `r - 256 floor(r / 256)`, every step exact (a
        // finite r is an integer, r / 256 a power-of-two scaling, the difference in [0, 256)),
        // then the byte from the low bits of an exact biased sum: no float-to-integer conversion
        // (the compiler's saturating one does not vectorise). NaN and the infinities: 0.
        let rounded = y.round();
        let modulo = rounded - 256.0 * (rounded * (1.0 / 256.0)).floor();
        let byte = (modulo + ROUNDING_BIAS).to_bits() as u8;
        if y.to_bits() & 0x7FFF_FFFF < INF_BITS {
            byte
        } else {
            0
        }
    }
}

/// [`ElementRound::IntegerOffsetTruncate`] (ggml Q4_0's `(int8_t)(x * id + 8.5f)`, at most 15):
/// the sum rounded in float32, truncated toward zero, clamped to [0, 15]; a NaN or infinite sum,
/// or one from 2^64 on, gives 0 as [`rules::c_int8_x86`] says (a finite sum beyond 16.5 never
/// occurs: the engine's comment).
#[derive(Clone)]
struct OffsetTruncate<const MULTIPLY: bool>;

impl<const MULTIPLY: bool> ElementRule for OffsetTruncate<MULTIPLY> {
    #[inline(always)]
    fn prepare(&self, x: f32, factor: f32) -> f32 {
        // Which NaN does not matter: every NaN gives 0.
        (if MULTIPLY { x * factor } else { x / factor }) + 8.5
    }
    #[inline(always)]
    fn code(&self, sum: f32, _factor: f32) -> u8 {
        // Truncation toward zero of a sum bounded to [0, 15] (below 1 truncates to 0 anyway; a
        // NaN bounds to 0), as a byte as in TiesAwayInt8.
        let bounded = if sum > 0.0 { sum } else { 0.0 };
        let bounded = if bounded < 15.0 { bounded } else { 15.0 };
        let code = small_integer(bounded.trunc());
        if sum.to_bits() & 0x7FFF_FFFF < NO_INTEGER_BITS {
            code as u8
        } else {
            0
        }
    }
}

/// [`OffsetTruncate`] of a fused multiply-add (`fmaf(x, id, 8.5f)`, rounded once: the row's
/// `fused`), lane by lane through [`rules::fused_multiply_add`].
#[derive(Clone)]
struct FusedOffsetTruncate;

impl ElementRule for FusedOffsetTruncate {
    #[inline(always)]
    fn prepare(&self, x: f32, factor: f32) -> f32 {
        rules::fused_multiply_add(x, factor, 8.5)
    }
    #[inline(always)]
    fn code(&self, sum: f32, factor: f32) -> u8 {
        OffsetTruncate::<true>.code(sum, factor)
    }
}

/// float32's 2^23: adding it to a value in [0, 2^22] rounds the value to an integer (the unit in
/// the last place there is 1), which the low bits of the sum then hold.
const ROUNDING_BIAS: f32 = 8_388_608.0;

/// An integer-valued `x` in [0, 1024] as an integer: the low bits of `x + 2^23`.
#[inline(always)]
fn small_integer(x: f32) -> u32 {
    (x + ROUNDING_BIAS).to_bits() & 0x7FF
}

/// [`ElementRound::NearestIndexFirstTie`]: the engine's search itself, on x and the block's `d`
/// (the lanes [`KvalueSteps`] does not answer, and every lane if its derivation fails), its
/// errors fused where the row says.
#[derive(Clone)]
struct NearestKvalue {
    fused: bool,
}

impl ElementRule for NearestKvalue {
    #[inline(always)]
    fn prepare(&self, x: f32, _d: f32) -> f32 {
        x
    }
    #[inline(always)]
    fn code(&self, x: f32, d: f32) -> u8 {
        rules::nearest_kvalue(x, d, self.fused)
    }
}

/// The block factors `d` (powers of two) for which [`KvalueSteps`] answers: within them `x / d`
/// is exact (or too small to leave code 0), and `kvalue * d - x`, the engine's error, is `d`
/// times `kvalue - x / d` rounded, since every such difference is a normal float32 or exact
/// (`kvalue * d` is exact there, so a fused error is the same).
const KVALUE_D_RANGE: (f32, f32) = (7.888_609e-31, 1.267_650_6e30); // 2^-100, 2^100
/// `|x / d|` below this is answered by [`KvalueSteps`]; far above 12 the rounded errors of
/// several kvalues tie, and the first index wins where the thresholds would not say so.
const KVALUE_Y_RANGE: f32 = 1_048_576.0; // 2^20

/// ggml's nearest-kvalue search (the engine's `nearest_kvalue`, first index on equal errors) as
/// seven thresholds on `|x / d|`, derived from the search itself at `d` = 1: code `c` (the
/// number of thresholds reached) for positive `x`, `c + 8` for negative `x` (0 stays 0). The
/// derivation checks that layout at every step; the tests compare the rule with the search on
/// every top-16-bit float32 pattern at several `d`.
#[derive(Clone, Copy)]
struct KvalueSteps {
    thresholds: [f32; 7],
}

impl KvalueSteps {
    /// The thresholds of the search, or `None` where the search does not have this form.
    fn derive() -> Option<KvalueSteps> {
        let search = |y: f32| rules::nearest_kvalue(y, 1.0, false);
        let top = f32::from_bits(KVALUE_Y_RANGE.to_bits() - 1);
        let mut thresholds = [0.0f32; 7];
        for (k, t) in thresholds.iter_mut().enumerate() {
            let code = k as u8 + 1;
            if search(top) < code {
                return None;
            }
            // The smallest non-negative float32 whose code is at least `code` (their bits are in
            // the order of their values).
            let (mut low, mut high) = (0u32, top.to_bits());
            while low < high {
                let mid = low + (high - low) / 2;
                if search(f32::from_bits(mid)) >= code {
                    high = mid;
                } else {
                    low = mid + 1;
                }
            }
            *t = f32::from_bits(low);
            let below = f32::from_bits(low.saturating_sub(1));
            if search(*t) != code || search(-*t) != code + 8 || search(below) != code - 1 {
                return None;
            }
        }
        Some(KvalueSteps { thresholds })
    }

    /// The thresholds, derived once for the process (not once per chunk of the element pass).
    fn get() -> Option<&'static KvalueSteps> {
        static STEPS: crate::once::Once<Option<KvalueSteps>> = crate::once::Once::new();
        STEPS.get_or_init(KvalueSteps::derive).as_ref()
    }
}

/// The factor [`KvalueSteps`] takes for a block's `d`: `1 / d` (exact) where `d` is a power of
/// two in [`KVALUE_D_RANGE`], else NaN (every lane then unanswered). `x * (1 / d)` is `x / d`:
/// both are the exact quotient rounded once, and the product is the faster step.
fn kvalue_factor(d: f32) -> f32 {
    let power_of_two = d.to_bits() & 0x807F_FFFF == 0;
    if power_of_two && d >= KVALUE_D_RANGE.0 && d <= KVALUE_D_RANGE.1 {
        1.0 / d
    } else {
        f32::NAN
    }
}

impl ElementRule for KvalueSteps {
    /// `r` is the block's [`kvalue_factor`].
    #[inline(always)]
    fn prepare(&self, x: f32, r: f32) -> f32 {
        x * r
    }
    #[inline(always)]
    fn code(&self, y: f32, _d: f32) -> u8 {
        let magnitude = f32::from_bits(y.to_bits() & 0x7FFF_FFFF);
        let reached: u8 = self.thresholds.iter().map(|&t| u8::from(magnitude >= t)).sum();
        let negative = u8::from(y.to_bits() >> 31 != 0 && reached != 0);
        reached + 8 * negative
    }
    #[inline(always)]
    fn unanswered(&self, y: f32) -> bool {
        // NaN: a NaN or infinite x, or a factor outside the range.
        let magnitude = f32::from_bits(y.to_bits() & 0x7FFF_FFFF);
        magnitude >= KVALUE_Y_RANGE || magnitude.is_nan()
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
        if let (true, Some(values)) = (self.row % self.block == 0, float_lanes(src)) {
            match self.block {
                16 => return self.whole_blocks::<16>(factors, values, dst, marks),
                32 => return self.whole_blocks::<32>(factors, values, dst, marks),
                64 => return self.whole_blocks::<64>(factors, values, dst, marks),
                128 => return self.whole_blocks::<128>(factors, values, dst, marks),
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
                    let y = self.rule.prepare(lane(b), factor);
                    *c = self.rule.code(y, factor);
                    unanswered |= self.rule.unanswered(y);
                }
                *mark = unanswered;
            }
        }
    }
}

impl<R: ElementRule> ElementPass<R> {
    /// [`SpanKernel::run`] for blocks of `B` lanes filling every row.
    #[inline(always)]
    fn whole_blocks<const B: usize>(&self, factors: &[f32], values: &[f32], dst: &mut [u8], marks: &mut [bool]) {
        if R::COPIED {
            // The rule as a local: its fields are then known not to change under the stores.
            Self::blocks_with::<B>(&self.rule.clone(), factors, values, dst, marks);
        } else {
            Self::blocks_with::<B>(&self.rule, factors, values, dst, marks);
        }
    }

    #[inline(always)]
    fn blocks_with<const B: usize>(rule: &R, factors: &[f32], values: &[f32], dst: &mut [u8], marks: &mut [bool]) {
        let blocks = values.chunks_exact(B).zip(dst.chunks_exact_mut(B));
        for ((xs, cs), (&factor, mark)) in blocks.zip(factors.iter().zip(marks.iter_mut())) {
            let xs: &[f32; B] = xs.try_into().expect("B lanes");
            let cs: &mut [u8; B] = cs.try_into().expect("B codes");
            let mut unanswered = false;
            for (c, &x) in cs.iter_mut().zip(xs) {
                let y = rule.prepare(x, factor);
                *c = rule.code(y, factor);
                unanswered |= rule.unanswered(y);
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

/// Lanes per chunk of [`quantize_rows`] (whole rows, at least one): a chunk's float32 input
/// (512 KiB) is still in the second-level cache when the element pass reads it after the maxima
/// pass, so the input is read from memory once.
const CHUNK: usize = 1 << 17;

/// The element codes, the stored block scales (`BlockScale::stored`) and the per-tensor scale of
/// `values` (`rows x row`, blocks of `block` along each row, or tiles of `band` rows by `block`
/// columns, the tiles row-major), as the engine's block maxima, `block_scales` and
/// `element_codes` give them, chunk by chunk of whole bands of rows. `global_of` gives the
/// per-tensor scale from a function of the tensor's maximum, which it calls where it needs it:
/// for rows of NaN-propagating 1-D blocks that maximum is the fold of the block maxima, taken
/// in a first pass over the whole tensor (the elements' pass then reads the input a second time,
/// where a pass of its own for the maximum would make three).
pub(super) fn quantize_rows(
    recipe: &Recipe,
    values: &[f32],
    row: usize,
    block: usize,
    band: usize,
    global_of: impl FnOnce(&mut dyn FnMut() -> f32) -> Option<f32>,
    compute: DType,
) -> Result<(Vec<u8>, Vec<u32>, Option<f32>)> {
    let blocks_per_row = row.div_ceil(block);
    let rows = values.len() / row;
    let chunk = (CHUNK / (band * row)).max(1) * band * row;
    let mut codes = vec![0u8; values.len()];
    let stored_blocks = rows.div_ceil(band) * blocks_per_row;
    let mut stored = vec![0u32; stored_blocks];
    // The element plan and the scales' casts once for all chunks.
    let plan = match recipe.round {
        ElementRound::Cast { .. } => Some(Plan::new(DType::Float, recipe.element, &rules::casts(recipe.profile))?),
        _ => None,
    };
    let mut all_maxima: Option<Vec<f32>> = None;
    let global = if band == 1 && recipe.amax == Amax::NanPropagating {
        global_of(&mut || {
            let maxima = tile_maxima(recipe.amax, values, row, block, 1);
            // Block maxima are magnitudes (a NaN one too): the largest bits are the largest
            // value, and where they are a NaN's, the first NaN block says which.
            let largest = maxima.iter().fold(0u32, |m, b| m.max(b.to_bits()));
            let amax = if largest > INF_BITS {
                maxima.iter().fold(0.0, |m, &b| rules::nan_propagating_max(m, b))
            } else {
                f32::from_bits(largest)
            };
            all_maxima = Some(maxima);
            amax
        })
    } else {
        global_of(&mut || tensor_amax(values))
    };
    let casts = rules::scale_casts(recipe)?;
    let cast_scales = match &casts {
        Some(casts) => CastScaleSteps::new(recipe, casts, global, compute)?,
        None => None,
    };
    let chunk_blocks = (chunk / row).div_ceil(band) * blocks_per_row;
    for (c, ((xs, cs), ss)) in
        values.chunks(chunk).zip(codes.chunks_mut(chunk)).zip(stored.chunks_mut(chunk_blocks)).enumerate()
    {
        let chunk_maxima;
        let maxima = match &all_maxima {
            Some(all) => &all[c * chunk_blocks..][..ss.len()],
            None => {
                chunk_maxima = tile_maxima(recipe.amax, xs, row, block, band);
                &chunk_maxima
            }
        };
        let placed;
        let maxima = if recipe.nan.lanes.is_empty() || !maxima.iter().any(|m| m.is_nan()) {
            maxima
        } else {
            let mut m = maxima.to_vec();
            rules::place_nan_maxima(recipe, compute, &mut m, c * chunk_blocks, stored_blocks);
            placed = m;
            &placed[..]
        };
        let chunk_scales = match recipe.scale_rule {
            ScaleRule::ReciprocalCeil { max_element } => {
                reciprocal_ceil_scales(recipe, maxima, max_element, global, compute)
            }
            ScaleRule::GgmlLog2Floor => ggml_log2_floor_scales(recipe, maxima, global, compute),
            _ => match (&cast_scales, &casts) {
                (Some(steps), Some(casts)) => steps.scales(recipe, casts, maxima, global, compute)?,
                _ => rules::block_scales(recipe, maxima, global, compute, casts.as_ref())?,
            },
        };
        if band == 1 {
            element_codes(recipe, plan.as_ref(), xs, row, block, &chunk_scales, global, cs)?;
        } else {
            // Each row's blocks are its band's tiles: the element pass takes them row by row.
            let of_rows = tiles_of_rows(&chunk_scales, xs.len() / row, band, blocks_per_row);
            element_codes(recipe, plan.as_ref(), xs, row, block, &of_rows, global, cs)?;
        }
        ss.iter_mut().zip(&chunk_scales).for_each(|(s, b)| *s = b.stored);
    }
    Ok((codes, stored, global))
}

/// The scales of a `Divide` row whose scale is cast to E4M3 (NVFP4) or float16 (ggml Q8_0 and
/// Q4_0) by a plan with a finite lane kernel, lanes = blocks, in one pass compiled for the widest
/// instruction set: each block's [`DivideSteps`] before the cast, the code from the plan's lane
/// kernel, its value from the back plan's value of every code, the steps after the cast. Blocks
/// whose scale before the cast is not finite (a NaN maximum or per-tensor scale) get the engine's
/// `block_scale`. Only for plain steps ([`DivideSteps::is_plain`]).
struct CastScaleSteps {
    steps: DivideSteps,
    /// The back plan's value of every code (256 or 65536 of them).
    values: Vec<f32>,
}

impl CastScaleSteps {
    /// None where the row's steps are not plain.
    fn new(recipe: &Recipe, casts: &ScaleCasts, global: Option<f32>, compute: DType) -> Result<Option<CastScaleSteps>> {
        let steps = DivideSteps::new(recipe, global, compute);
        let bits = rules::bits_of(casts.dtype);
        if !steps.is_plain() || !matches!(bits, 8 | 16) {
            return Ok(None);
        }
        let count = 1usize << bits;
        let codes: Vec<u8> =
            if bits == 8 { (0..=255).collect() } else { (0..=u16::MAX).flat_map(u16::to_le_bytes).collect() };
        let mut bytes = vec![0u8; 4 * count];
        casts.back.run(&codes, &mut bytes, count)?;
        let values = bytes.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
        Ok(Some(CastScaleSteps { steps, values }))
    }

    /// The scales of the blocks of `maxima`, as `rules::block_scales` gives them.
    fn scales(
        &self,
        recipe: &Recipe,
        casts: &ScaleCasts,
        maxima: &[f32],
        global: Option<f32>,
        compute: DType,
    ) -> Result<Vec<BlockScale>> {
        let mut out = ScaleOut {
            scales: vec![BlockScale { stored: 0, factor: 0.0 }; maxima.len()],
            unanswered: vec![false; maxima.len()],
        };
        let pass = CastScalePass { steps: self.steps, values: &self.values, maxima, out: &mut out };
        if casts.to.with_finite_lane_encoder(pass).is_none() {
            return rules::block_scales(recipe, maxima, global, compute, Some(casts));
        }
        for (b, _) in out.unanswered.iter().enumerate().filter(|(_, u)| **u) {
            out.scales[b] = rules::block_scale(recipe, maxima[b], global, compute);
        }
        Ok(out.scales)
    }
}

/// What [`CastScaleKernel`] writes: every block's scale, and the blocks it did not answer.
struct ScaleOut {
    scales: Vec<BlockScale>,
    unanswered: Vec<bool>,
}

/// [`CastScaleSteps::scales`] with the plan's lane kernel (generic over its type).
struct CastScalePass<'a> {
    steps: DivideSteps,
    values: &'a Vec<f32>,
    maxima: &'a [f32],
    out: &'a mut ScaleOut,
}

impl WithLaneEncoder for CastScalePass<'_> {
    type Output = ();
    #[inline(always)]
    fn run<E: LaneEncoder>(self, encoder: &E) {
        let CastScalePass { steps, values, maxima, out } = self;
        let kernel = CastScaleKernel { encoder: encoder.clone(), steps };
        let src = zerocopy::IntoBytes::as_bytes(maxima);
        widest_span(&kernel, values, src, &mut [], maxima.len(), out);
    }
}

struct CastScaleKernel<E> {
    encoder: E,
    steps: DivideSteps,
}

impl<E: LaneEncoder> SpanKernel for CastScaleKernel<E> {
    type Part = Vec<f32>;
    type Scratch = ScaleOut;
    #[inline(always)]
    fn run(&self, values: &Vec<f32>, src: &[u8], _dst: &mut [u8], _n: usize, out: &mut ScaleOut) {
        let maxima = float_lanes(src);
        match (maxima, <&[f32; 256]>::try_from(values.as_slice()), <&[f32; 65536]>::try_from(values.as_slice())) {
            (Some(maxima), Ok(table), _) => self.scales_with(table, maxima, out),
            (Some(maxima), _, Ok(table)) => self.scales_with(table, maxima, out),
            // Not reached (the maxima are a float32 slice, the table one of 8 or 16 bits): every
            // block then goes to the engine rather than keeping scales this pass never wrote.
            _ => out.unanswered.fill(true),
        }
    }
}

impl<E: LaneEncoder> CastScaleKernel<E> {
    /// [`SpanKernel::run`] with the table of the `N` codes' values (a code indexes it masked: no
    /// bounds test; the codes of unanswered lanes may be anything).
    #[inline(always)]
    fn scales_with<const N: usize>(&self, values: &[f32; N], maxima: &[f32], out: &mut ScaleOut) {
        let (encoder, steps) = (self.encoder.clone(), self.steps);
        let ScaleOut { scales, unanswered } = out;
        // Groups of blocks: the steps before the cast and the cast in one loop (vectorised: no
        // table, no branch), the table and the steps after the cast in a second.
        const GROUP: usize = 64;
        let mut pre = [0.0f32; GROUP];
        let mut codes = [0u16; GROUP];
        for ((amaxes, group), u) in maxima.chunks(GROUP).zip(scales.chunks_mut(GROUP)).zip(unanswered.chunks_mut(GROUP))
        {
            for (((&a, p), c), u) in amaxes.iter().zip(pre.iter_mut()).zip(codes.iter_mut()).zip(u.iter_mut()) {
                let s = steps.before_cast_as::<true>(a);
                *p = s;
                *c = encoder.encode_lane(s);
                *u = s.to_bits() & 0x7FFF_FFFF >= INF_BITS;
            }
            for ((scale, &s), &c) in group.iter_mut().zip(&pre).zip(&codes) {
                *scale = steps.after_cast(s, u32::from(c), values[usize::from(c) & (N - 1)]);
            }
        }
    }
}

/// `ceil(log2(d))` or `floor(log2(d))` of a positive normal float32 `d` exactly as float32's
/// `log2` then `ceil` or `floor` give it, from the bits: `d`'s exponent `k`, plus one where its
/// fraction bits reach `first_up[k]`, the first fraction whose rounded form reaches `k + 1` (near
/// large `|k|` the `log2` of fractions just above 1 rounds down to `k`, and of fractions just
/// below 2 up to `k + 1`). Derived from the float form itself by bisection, each threshold checked
/// on both sides; the tests compare it with the float form on every top-16-bit pattern.
struct Log2Steps {
    /// By biased exponent (1 to 254): the smallest fraction bits giving `k + 1` (2^23: none).
    first_up: [u32; 256],
}

/// torchao's `rceil` exponent: `ceil(log2(d))`.
fn ceil_log2_form(d: f32) -> f32 {
    d.log2().ceil()
}

/// ggml MXFP4's exponent: `floor(log2(amax))`.
fn floor_log2_form(d: f32) -> f32 {
    d.log2().floor()
}

impl Log2Steps {
    /// The thresholds of `float_form`, or `None` where it does not have this shape.
    fn derive(float_form: fn(f32) -> f32) -> Option<Log2Steps> {
        let form = |bits: u32| float_form(f32::from_bits(bits));
        let mut first_up = [0u32; 256];
        for biased in 1..=254u32 {
            let (base, k) = (biased << 23, biased as f32 - 127.0);
            let top = form(base | 0x7F_FFFF);
            if form(base) != k || (top != k && top != k + 1.0) {
                return None;
            }
            if top == k {
                first_up[usize::from(biased as u8)] = 0x80_0000;
                continue;
            }
            let (mut low, mut high) = (1u32, 0x7F_FFFF);
            while low < high {
                let mid = low + (high - low) / 2;
                if form(base | mid) == k + 1.0 {
                    high = mid;
                } else {
                    low = mid + 1;
                }
            }
            if form(base | low) != k + 1.0 || form(base | (low - 1)) != k {
                return None;
            }
            first_up[usize::from(biased as u8)] = low;
        }
        Some(Log2Steps { first_up })
    }

    /// The thresholds of `ceil(log2(d))`, derived once for the process.
    fn ceil() -> Option<&'static Log2Steps> {
        static STEPS: crate::once::Once<Option<Log2Steps>> = crate::once::Once::new();
        STEPS.get_or_init(|| Log2Steps::derive(ceil_log2_form)).as_ref()
    }

    /// The thresholds of `floor(log2(d))`, derived once for the process.
    fn floor() -> Option<&'static Log2Steps> {
        static STEPS: crate::once::Once<Option<Log2Steps>> = crate::once::Once::new();
        STEPS.get_or_init(|| Log2Steps::derive(floor_log2_form)).as_ref()
    }

    /// The form of `d`, or `None` for what is not a positive normal float32 (zero, subnormals,
    /// the infinities, NaN, negatives: the float form's).
    #[inline(always)]
    fn log2_of(&self, d: f32) -> Option<i32> {
        let bits = d.to_bits();
        let biased = bits >> 23;
        if biased == 0 || biased >= 255 {
            return None;
        }
        Some(biased as i32 - 127 + i32::from(bits & 0x7F_FFFF >= self.first_up[biased as usize]))
    }
}

/// The block scales of a [`ScaleRule::ReciprocalCeil`] row (torchao's `rceil`): the code from
/// [`Log2Steps`] where it answers, the engine's `block_scale` for the other blocks.
fn reciprocal_ceil_scales(
    recipe: &Recipe,
    maxima: &[f32],
    max_element: f32,
    global: Option<f32>,
    compute: DType,
) -> Vec<BlockScale> {
    let steps = Log2Steps::ceil();
    maxima
        .iter()
        .map(|&amax| match steps.and_then(|s| s.log2_of(amax / max_element)) {
            Some(e) => rules::reciprocal_ceil_scale((e.clamp(-127, 127) + 127) as u32),
            None => rules::block_scale(recipe, amax, global, compute),
        })
        .collect()
}

/// The block scales of a [`ScaleRule::GgmlLog2Floor`] row (ggml MXFP4): the exponent from
/// [`Log2Steps`] where it answers, the engine's `block_scale` for the other blocks.
fn ggml_log2_floor_scales(recipe: &Recipe, maxima: &[f32], global: Option<f32>, compute: DType) -> Vec<BlockScale> {
    let steps = Log2Steps::floor();
    maxima
        .iter()
        .map(|&amax| match steps.and_then(|s| s.log2_of(amax)) {
            Some(e) => rules::ggml_log2_floor_scale(e),
            None => rules::block_scale(recipe, amax, global, compute),
        })
        .collect()
}

/// Whether [`quantize_rows`] takes tiles of several rows under `rule`: the rule's fold over a
/// tile equals its fold over the rows' block maxima (a NaN-propagating or NaN-skipping maximum;
/// ggml's running and signed maxima, which only its 1-D blocks use, depend on the lanes' order).
pub(super) fn folds_rows(rule: Amax) -> bool {
    matches!(rule, Amax::NanPropagating | Amax::NanSkipped)
}

/// The maxima of the tiles of `band` rows by `block` columns of `values` (`rows x row`): each
/// row's block maxima by the fused pass, folded down the band as the engine folds its rows.
fn tile_maxima(rule: Amax, values: &[f32], row: usize, block: usize, band: usize) -> Vec<f32> {
    let blocks_per_row = row.div_ceil(block);
    let rows = values.len() / row;
    let row_maxima = block_maxima(rule, values, row, block, rows * blocks_per_row);
    if band == 1 {
        return row_maxima;
    }
    let mut tiles = vec![0.0f32; rows.div_ceil(band) * blocks_per_row];
    for (r, maxima) in row_maxima.chunks_exact(blocks_per_row).enumerate() {
        let band_tiles = &mut tiles[r / band * blocks_per_row..][..blocks_per_row];
        for (t, m) in band_tiles.iter_mut().zip(maxima.chunks_exact(1)) {
            *t = rules::amax_fold(rule, *t, &mut 0.0, m);
        }
    }
    tiles
}

/// Per-tile items (`bands x blocks_per_row`) repeated for every row of their band (`rows x
/// blocks_per_row`, the last band possibly short).
pub(super) fn tiles_of_rows<T: Copy>(tiles: &[T], rows: usize, band: usize, blocks_per_row: usize) -> Vec<T> {
    (0..rows).flat_map(|r| tiles[r / band * blocks_per_row..][..blocks_per_row].iter().copied()).collect()
}

/// The element codes of `values` (`rows x row`, blocks of `block` along each row, blocks in
/// row-major order with their `scales`) into `codes`, as the engine's `element_codes` gives them
/// (`plan`: the element cast, for [`ElementRound::Cast`] rows).
#[allow(clippy::too_many_arguments)]
fn element_codes(
    recipe: &Recipe,
    plan: Option<&Plan>,
    values: &[f32],
    row: usize,
    block: usize,
    scales: &[BlockScale],
    global: Option<f32>,
    codes: &mut [u8],
) -> Result<()> {
    let (multiply, factors) = rules::element_factors(recipe, scales, global);
    let src = zerocopy::IntoBytes::as_bytes(values);
    match recipe.round {
        ElementRound::NearestIndexFirstTie { fused } => match KvalueSteps::get() {
            Some(&steps) => {
                let reciprocals = factors.iter().map(|&d| kvalue_factor(d)).collect();
                let marks = element_pass(steps, src, codes, &reciprocals, row, block);
                // The blocks with lanes the thresholds do not answer: the search itself.
                let blocks_per_row = row.div_ceil(block);
                for (b, _) in marks.iter().enumerate().filter(|(_, m)| **m) {
                    let start = b / blocks_per_row * row + b % blocks_per_row * block;
                    let end = (start + block).min(b / blocks_per_row * row + row);
                    for (c, &x) in codes[start..end].iter_mut().zip(&values[start..end]) {
                        *c = rules::nearest_kvalue(x, factors[b], fused);
                    }
                }
            }
            None => {
                element_pass(NearestKvalue { fused }, src, codes, &factors, row, block);
            }
        },
        ElementRound::IntegerTiesAway if multiply => {
            element_pass(TiesAwayInt8::<true>, src, codes, &factors, row, block);
        }
        ElementRound::IntegerTiesAway => {
            element_pass(TiesAwayInt8::<false>, src, codes, &factors, row, block);
        }
        ElementRound::IntegerOffsetTruncate { fused: true } => {
            element_pass(FusedOffsetTruncate, src, codes, &factors, row, block);
        }
        ElementRound::IntegerOffsetTruncate { .. } if multiply => {
            element_pass(OffsetTruncate::<true>, src, codes, &factors, row, block);
        }
        ElementRound::IntegerOffsetTruncate { .. } => {
            element_pass(OffsetTruncate::<false>, src, codes, &factors, row, block);
        }
        ElementRound::Cast { clamp, negative_zero_to_positive, nan, .. } => {
            let dtype = recipe.element;
            let plan = plan.expect("a cast row has its element plan");
            let bound = clamp.unwrap_or(f32::INFINITY);
            let pass = CastPass {
                src,
                codes: &mut *codes,
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
            let cast = rules::casts(recipe.profile);
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
                        rules::nan_code(recipe, nan, DType::Float, if f.is_nan() { f } else { y })
                    } else {
                        convert_code(DType::Float, dtype, u64::from(y.to_bits()), &cast)? as u8
                    };
                }
            }
        }
    }
    Ok(())
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
            let encoder = encoder.clone();
            element_pass(CastLane::<E, true> { encoder, bound, positive_zero }, src, codes, factors, row, block)
        } else {
            let encoder = encoder.clone();
            element_pass(CastLane::<E, false> { encoder, bound, positive_zero }, src, codes, factors, row, block)
        }
    }
}

/// The value of an element code in the dequantizing pass.
trait CodeValue {
    /// Whether a vector of values is a gather from a table.
    #[cfg_attr(not(feature = "avx512"), allow(dead_code))]
    const GATHERS: bool = false;
    fn value(&self, c: u8) -> f32;
}

/// Any row: the 256-entry table of the engine's values.
struct Table([f32; 256]);

impl CodeValue for Table {
    const GATHERS: bool = true;
    #[inline(always)]
    fn value(&self, c: u8) -> f32 {
        self.0[usize::from(c)]
    }
}

/// Rows whose table is the code as an integer plus a constant (ggml Q8_0: the int8 itself; Q4_0:
/// the nibble minus 8), found so by comparing every entry: a conversion that vectorises, where the
/// table is a load per element.
struct ByteInteger<const SIGNED: bool>(f32);

impl<const SIGNED: bool> CodeValue for ByteInteger<SIGNED> {
    #[inline(always)]
    fn value(&self, c: u8) -> f32 {
        (if SIGNED { f32::from(c as i8) } else { f32::from(c) }) + self.0
    }
}

/// One-byte float elements (FP8) decoded by the element plan's arithmetic (fields shifted into
/// place, the exceptions selected lane by lane), found equal to the table on every code: no
/// gather, so its AVX-512 copy may run.
struct PlanDecoded(crate::kernels::decode::FloatCodeValue);

impl CodeValue for PlanDecoded {
    #[inline(always)]
    fn value(&self, c: u8) -> f32 {
        self.0.value(u32::from(c))
    }
}

/// What the dequantizing pass does with each product: nothing, or the rounding to bfloat16 of
/// rows that dequantize in bfloat16 (by the bfloat16 plan's lane kernel); lanes it does not answer
/// (non-finite products) mark their block for the engine's rounding.
trait Finish {
    fn finish(&self, y: f32) -> f32;
    fn unanswered(&self, y: f32) -> bool {
        let _ = y;
        false
    }
}

/// Rows whose products are the values.
struct Exact;

impl Finish for Exact {
    #[inline(always)]
    fn finish(&self, y: f32) -> f32 {
        y
    }
}

/// The product rounded to bfloat16 by the plan's lane kernel and widened back (a shift).
struct Bfloat16Lane<E>(E);

impl<E: LaneEncoder> Finish for Bfloat16Lane<E> {
    #[inline(always)]
    fn finish(&self, y: f32) -> f32 {
        f32::from_bits(u32::from(self.0.encode_lane(y)) << 16)
    }
    #[inline(always)]
    fn unanswered(&self, y: f32) -> bool {
        y.to_bits() & 0x7FFF_FFFF >= INF_BITS
    }
}

/// A factor whose products make no NaN of their own (finite and not zero: no 0 x Inf, no NaN
/// factor), so a product is NaN only where the value is, and that NaN is the value's under
/// either [`ProductNan`] rule.
#[inline(always)]
fn ordinary(factor: f32) -> bool {
    factor.is_finite() && factor != 0.0
}

/// The dequantizing pass: each code's value times its block's factor, finished; a block with a
/// lane the finish does not answer is marked in the scratch.
struct ValuesTimesFactor<V, F> {
    values: V,
    finish: F,
    nan: ProductNan,
    block: usize,
    row: usize,
}

impl<V: CodeValue, F: Finish> SpanKernel for ValuesTimesFactor<V, F> {
    type Part = Vec<f32>;
    type Scratch = Vec<bool>;
    // The table's AVX-512 copy (16-lane gathers) ran at 0.8x its AVX2 copy on the project's AMD
    // Zen 4 (torchao MXFP8 dequantize into a buffer: 2,440 against 3,100 M elements/s).
    const AVX512: bool = !V::GATHERS;
    #[inline(always)]
    fn run(&self, factors: &Vec<f32>, codes: &[u8], out: &mut [u8], _n: usize, marks: &mut Vec<bool>) {
        // The usual blocks, every row whole blocks: loops of a constant trip count.
        if self.row % self.block == 0 {
            match self.block {
                16 => return self.whole_blocks::<16, 64>(factors, codes, out, marks),
                32 => return self.whole_blocks::<32, 128>(factors, codes, out, marks),
                64 => return self.whole_blocks::<64, 256>(factors, codes, out, marks),
                128 => return self.whole_blocks::<128, 512>(factors, codes, out, marks),
                _ => {}
            }
        }
        let mut blocks = factors.iter().zip(marks.iter_mut());
        for (row, outs) in codes.chunks(self.row).zip(out.chunks_mut(4 * self.row)) {
            for ((cs, os), (&f, mark)) in row.chunks(self.block).zip(outs.chunks_mut(4 * self.block)).zip(&mut blocks) {
                let mut unanswered = false;
                for (&c, o) in cs.iter().zip(os.chunks_exact_mut(4)) {
                    let y = rules::product(self.nan, self.values.value(c), f);
                    o.copy_from_slice(&self.finish.finish(y).to_ne_bytes());
                    unanswered |= self.finish.unanswered(y);
                }
                *mark = unanswered;
            }
        }
    }
}

impl<V: CodeValue, F: Finish> ValuesTimesFactor<V, F> {
    /// [`SpanKernel::run`] for blocks of `B` codes (`BYTES` = 4 `B` bytes of float32) filling
    /// every row.
    #[inline(always)]
    fn whole_blocks<const B: usize, const BYTES: usize>(
        &self,
        factors: &[f32],
        codes: &[u8],
        out: &mut [u8],
        marks: &mut [bool],
    ) {
        let blocks = codes.chunks_exact(B).zip(out.chunks_exact_mut(BYTES));
        for ((cs, os), (&f, mark)) in blocks.zip(factors.iter().zip(marks.iter_mut())) {
            let cs: &[u8; B] = cs.try_into().expect("B codes");
            let os: &mut [u8; BYTES] = os.try_into().expect("BYTES bytes");
            let mut ys = [0.0f32; B];
            if ordinary(f) {
                // No NaN but a NaN value's can come out: the plain product, vectorised.
                for (y, &c) in ys.iter_mut().zip(cs) {
                    let v = self.values.value(c);
                    *y = rules::nan_first(v, v * f);
                }
            } else {
                for (y, &c) in ys.iter_mut().zip(cs) {
                    *y = rules::product(self.nan, self.values.value(c), f);
                }
            }
            for (o, &y) in os.chunks_exact_mut(4).zip(&ys) {
                o.copy_from_slice(&self.finish.finish(y).to_ne_bytes());
            }
            *mark = ys.iter().fold(false, |u, &y| u | self.finish.unanswered(y));
        }
    }
}

/// `out[i] = table[codes[i]] * factors[block of i]` for `rows x row` codes in blocks of `block`,
/// rounded to `rounding` (float32: as is; bfloat16: in the same pass by the plan's lane kernel,
/// the rare non-finite lanes by the engine's `round_all_as`), as the engine gives them.
#[allow(clippy::too_many_arguments)]
pub(super) fn values_times_factors(
    recipe: &Recipe,
    table: [f32; 256],
    factors: Vec<f32>,
    codes: &[u8],
    row: usize,
    block: usize,
    rounding: DType,
    out: &mut [f32],
) -> Result<()> {
    let bytes = zerocopy::IntoBytes::as_mut_bytes(&mut *out);
    let offset = table[0];
    let matches =
        |value: &dyn Fn(u8) -> f32| (0..=255u8).all(|c| value(c).to_bits() == table[usize::from(c)].to_bits());
    let marks = if rounding == DType::Float {
        if matches(&|c| ByteInteger::<true>(offset).value(c)) {
            run_values(ByteInteger::<true>(offset), Exact, recipe.nan.product, &factors, row, block, codes, bytes)
        } else if matches(&|c| ByteInteger::<false>(offset).value(c)) {
            run_values(ByteInteger::<false>(offset), Exact, recipe.nan.product, &factors, row, block, codes, bytes)
        } else if let Some(decoded) = plan_decoded(recipe).filter(|d| matches(&|c| d.value(c))) {
            // AVX-512 only (see `plan_decoded`).
            run_values(decoded, Exact, recipe.nan.product, &factors, row, block, codes, bytes)
        } else {
            run_values(Table(table), Exact, recipe.nan.product, &factors, row, block, codes, bytes)
        }
    } else if rounding == DType::Bfloat16 {
        let plan = Plan::new(DType::Float, rounding, &rules::casts(recipe.profile))?;
        let pass = RoundedValues { table, nan: recipe.nan.product, factors: &factors, row, block, codes, out: bytes };
        match plan.with_finite_lane_encoder(pass) {
            Some(marks) => marks,
            // No lane kernel: every block to the engine's rounding.
            None => vec![true; factors.len()],
        }
    } else {
        // No other rounding is fused: every block to the engine's.
        vec![true; factors.len()]
    };
    // The marked blocks again, as the engine computes them.
    let blocks_per_row = row.div_ceil(block);
    for (b, _) in marks.iter().enumerate().filter(|(_, m)| **m) {
        let (r, c) = (b / blocks_per_row, b % blocks_per_row);
        let start = r * row + c * block;
        let end = (start + block).min(r * row + row);
        let f = factors[b];
        for (o, &c) in out[start..end].iter_mut().zip(&codes[start..end]) {
            *o = rules::product(recipe.nan.product, table[usize::from(c)], f);
        }
        if rounding != DType::Float {
            rules::round_all_as(recipe, rounding, &mut out[start..end])?;
        }
    }
    Ok(())
}

/// The element plan's arithmetic decoding of one-byte codes, where it has one and the kernels run
/// their AVX-512 copies. On the project's AMD Zen 4, FP8 dequantize into a buffer ran at
/// 3,400-3,800 M elements/s so with AVX-512, against 2,800-3,600 for the table's AVX2 copy; the
/// AVX2 copy of this decoding ran at 2,100-2,700, so AVX2 keeps the table.
fn plan_decoded(recipe: &Recipe) -> Option<PlanDecoded> {
    if simd::isa() != simd::Isa::Avx512 {
        return None;
    }
    Plan::new(recipe.element, DType::Float, &rules::casts(recipe.profile)).ok()?.byte_code_value().map(PlanDecoded)
}

/// The dequantizing pass with the rounding plan's lane kernel (generic over its type).
struct RoundedValues<'a> {
    table: [f32; 256],
    nan: ProductNan,
    factors: &'a Vec<f32>,
    row: usize,
    block: usize,
    codes: &'a [u8],
    out: &'a mut [u8],
}

impl WithLaneEncoder for RoundedValues<'_> {
    type Output = Vec<bool>;
    #[inline(always)]
    fn run<E: LaneEncoder>(self, encoder: &E) -> Vec<bool> {
        let RoundedValues { table, nan, factors, row, block, codes, out } = self;
        run_values(Table(table), Bfloat16Lane(encoder.clone()), nan, factors, row, block, codes, out)
    }
}

#[allow(clippy::too_many_arguments)]
fn run_values<V: CodeValue, F: Finish>(
    values: V,
    finish: F,
    nan: ProductNan,
    factors: &Vec<f32>,
    row: usize,
    block: usize,
    codes: &[u8],
    out: &mut [u8],
) -> Vec<bool> {
    let mut marks = vec![false; factors.len()];
    let kernel = ValuesTimesFactor { values, finish, nan, block, row };
    widest_span(&kernel, factors, codes, out, codes.len(), &mut marks);
    marks
}

#[cfg(test)]
mod tests {
    //! The fused path against the engine's general one (the definition), bit for bit, on every
    //! row: random data and the edge classes of the recipes, float32, bfloat16 and float16 input,
    //! with and without a per-tensor scale (0, Inf and NaN among them). CI runs these with the
    //! widest instruction set, with `LOWBIT_NO_AVX512=1` and with `LOWBIT_PORTABLE=1`.
    use super::super::engine::{dequantize_into_with, quantize_with};
    use super::super::{recipes, BlockInput, GlobalRule, Quantized, Scales, Scheme};
    use crate::alloc_prelude::*;

    /// Every concrete scheme, and the FP8 shapes it does not spell (groups, 2-D tiles other than
    /// 128x128): `every_row_is_covered` checks that no row is missing.
    fn schemes() -> Vec<String> {
        let mut names = super::super::concrete_schemes(32);
        names.extend(["fp8:group=32", "fp8:block=64x64", "fp8:block=3x40"].map(String::from));
        names
    }

    /// The tiled and per-tensor rows are compared above through the fused path, not the general
    /// one: their float32 quantize and their dequantize take the fused kernels.
    #[test]
    fn tiles_take_the_fused_path() {
        use super::super::engine::Geometry;
        use crate::dtype::DType;
        let mut tiled = 0;
        for name in &schemes() {
            let scheme = Scheme::parse(name).expect("a scheme");
            let Ok(g) = Geometry::new(&[384, 384], &scheme, -1) else { continue };
            if matches!(scheme.recipe().block, super::super::recipes::BlockShape::Tile(..)) {
                tiled += 1;
            }
            assert!(g.fused_blocks(), "{name}: dequantize not fused");
            assert!(
                scheme.mx().is_some() || g.fused_quantize(scheme.recipe(), DType::Float),
                "{name}: quantize not fused"
            );
        }
        // deepseek:fp8 in both scale formats, fp8:block=128x128, 64x64 and 3x40.
        assert_eq!(tiled, 5, "tiled schemes");
    }

    #[test]
    fn every_row_is_covered() {
        for (name, _) in recipes() {
            let family = name.split([',', '[']).next().unwrap_or_default();
            let family = family.split(':').next().filter(|f| *f == "fp8" || *f == "ocp").unwrap_or(family);
            assert!(schemes().iter().any(|s| s.starts_with(family)), "no scheme of row {name} in the fused test");
        }
    }

    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
        /// Uniform in [-1, 1).
        fn unit(&mut self) -> f32 {
            (self.below(1 << 24) as f32 / (1u32 << 23) as f32) - 1.0
        }
        fn pow2(&mut self, low: i32, high: i32) -> f32 {
            let e = low + self.below((high - low + 1) as u64) as i32;
            if e >= -126 {
                f32::from_bits(((e + 127) as u32) << 23)
            } else {
                f32::from_bits(1 << (e + 149).max(0))
            }
        }
    }

    /// A run of `n` values of edge class `class` (the recipes' edge list).
    fn edge_run(class: u64, n: usize, rng: &mut Rng) -> Vec<f32> {
        let mut v: Vec<f32> = (0..n).map(|_| rng.unit()).collect();
        let at = rng.below(n as u64) as usize;
        let step = rng.pow2(-20, 20);
        match class {
            0 => v.fill(0.0),
            1 => v.iter_mut().enumerate().for_each(|(i, x)| *x = if i % 2 == 0 { -0.0 } else { 0.0 }),
            2 => v.iter_mut().for_each(|x| *x *= rng.pow2(-140, 127)),
            3 => v[at] = f32::from_bits(0x7FC0_0000 | (rng.next() as u32 & 0x803F_FFFF)),
            4 => v[at] = f32::INFINITY,
            5 => v[at] = f32::NEG_INFINITY,
            6 => v.iter_mut().for_each(|x| *x = f32::from_bits(rng.next() as u32 & 0x807F_FFFF)),
            7 => v.iter_mut().for_each(|x| *x = f32::MAX * (0.75 + 0.25 * *x)),
            // amax exactly a power of two, and just below one.
            8 => {
                v.iter_mut().for_each(|x| *x *= step);
                v[at] = if rng.below(2) == 0 { step } else { -step };
            }
            9 => {
                v.iter_mut().for_each(|x| *x *= step);
                v[at] = f32::from_bits(step.to_bits() - 1);
            }
            // E2M1 midpoints once scaled by amax / 6, and integer-and-a-half ties.
            10 => {
                v.iter_mut().for_each(|x| *x = (rng.below(25) as f32 * 0.25 - 3.0) * step);
                v[at] = 6.0 * step;
            }
            11 => {
                v.iter_mut().for_each(|x| *x = (rng.below(255) as f32 - 127.0 + 0.5) * step);
                v[at] = 127.0 * step;
            }
            // A UE4M3/E4M3 midpoint as the block scale: amax / 6 = 1.0625 * 2^k.
            12 => {
                v.iter_mut().for_each(|x| *x *= step);
                v[at] = 6.375 * step;
            }
            13 => {
                v[at] = f32::from_bits(0xFFC0_0001);
                v[(at + 1) % n] = f32::from_bits(0x7FA0_0000);
            }
            _ => v.iter_mut().for_each(|x| *x *= step),
        }
        v
    }

    /// `rows x len` values: whole rows of one class, then rows mixing classes in runs of 16.
    fn tensor(rows: usize, len: usize, rng: &mut Rng) -> Vec<f32> {
        let mut x = Vec::with_capacity(rows * len);
        for r in 0..rows {
            if r < 15 {
                x.extend(edge_run(r as u64, len, rng));
            } else {
                for start in (0..len).step_by(16) {
                    x.extend(edge_run(rng.below(16), 16.min(len - start), rng));
                }
            }
        }
        x
    }

    fn scale_bits(s: &Scales) -> Vec<u32> {
        match s {
            Scales::Codes(v) => v.iter().map(|&c| u32::from(c)).collect(),
            Scales::Float16(v) | Scales::Bfloat16(v) => v.iter().map(|&c| u32::from(c)).collect(),
            Scales::Float32(v) => v.iter().map(|c| c.to_bits()).collect(),
        }
    }

    fn same(a: &Quantized, b: &Quantized, what: &str) {
        first_difference(&a.elements, &b.elements, &format!("{what}: elements"));
        first_difference(&scale_bits(&a.scales), &scale_bits(&b.scales), &format!("{what}: scales"));
        assert_eq!(a.global_scale.map(f32::to_bits), b.global_scale.map(f32::to_bits), "{what}: global");
    }

    /// The fused and the general dequantize into buffers holding other values (a NaN pattern: a
    /// lane either path left unwritten shows), and the public calls, all alike.
    fn dequantized_same(q: &Quantized, what: &str) {
        let n = q.elements.len();
        let dirty =
            |k: u32| (0..n as u32).map(|i| f32::from_bits(0x7FC0_0000 | i.wrapping_mul(k) & 0x3F_FFFF)).collect();
        let mut fused: Vec<f32> = dirty(7);
        dequantize_into_with(q, &mut fused, true).expect("dequantize");
        let mut general: Vec<f32> = dirty(13);
        dequantize_into_with(q, &mut general, false).expect("dequantize");
        let bits = |v: &[f32]| v.iter().map(|v| v.to_bits()).collect::<Vec<u32>>();
        first_difference(&bits(&fused), &bits(&general), &format!("{what}: dequantized"));
        let allocated = q.dequantize().expect("dequantize");
        first_difference(&bits(&allocated), &bits(&general), &format!("{what}: dequantize"));
    }

    fn first_difference<T: PartialEq + core::fmt::Debug>(a: &[T], b: &[T], what: &str) {
        assert_eq!(a.len(), b.len(), "{what}: lengths");
        if let Some(i) = (0..a.len()).find(|&i| a[i] != b[i]) {
            panic!("{what}: first difference at {i}: {:?} against {:?}", a[i], b[i]);
        }
    }

    fn both_ways<T: BlockInput>(x: &[T], shape: &[usize], scheme: &Scheme, global: Option<f32>) {
        let what = format!("{} {:?} {shape:?} global {global:?}", scheme.name(), T::DTYPE);
        match (quantize_with(x, shape, scheme, -1, global, true), quantize_with(x, shape, scheme, -1, global, false)) {
            (Ok(a), Ok(b)) => {
                same(&a, &b, &what);
                dequantized_same(&a, &what);
            }
            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{what}"),
            (a, b) => panic!("{what}: {a:?} against {b:?}"),
        }
    }

    #[test]
    fn fused_quantize_and_dequantize_equal_the_engine_on_edges_and_random_data() {
        let mut rng = Rng(0x2545_F491_4F6C_DD1D);
        for name in &schemes() {
            let scheme = Scheme::parse(name).expect("a scheme");
            let globals: &[Option<f32>] = if scheme.recipe().global == GlobalRule::None {
                &[None]
            } else {
                &[None, Some(0.37), Some(3.0e-5), Some(0.0), Some(f32::INFINITY), Some(f32::NAN)]
            };
            // Whole blocks of every size, and rows that end in a short block (refused by some rows).
            // The fourth and fifth span several chunks of the fused pass (rows of 200 do not divide
            // one); the last is whole 128x128 tiles in three bands of two chunks.
            for (rows, len) in [(40, 256), (24, 200), (3, 1), (1100, 256), (1400, 200), (384, 384)] {
                let x = tensor(rows, len, &mut rng);
                let globals = if rows * len > super::CHUNK { &globals[..2.min(globals.len())] } else { globals };
                for &global in globals {
                    both_ways(&x, &[rows, len], &scheme, global);
                }
                if rows * len > super::CHUNK {
                    continue;
                }
                let bf16: Vec<half::bf16> = x.iter().map(|&v| half::bf16::from_f32(v)).collect();
                both_ways(&bf16, &[rows, len], &scheme, None);
                let f16: Vec<half::f16> = x.iter().map(|&v| half::f16::from_f32(v)).collect();
                both_ways(&f16, &[rows, len], &scheme, None);
            }
        }
    }

    #[test]
    fn dequantize_into_refuses_a_buffer_of_another_length_and_leaves_it_as_it_was() {
        let x: Vec<f32> = (0..128).map(|i| i as f32 - 20.0).collect();
        for name in ["ggml:q8_0", "modelopt:nvfp4", "ocp:mxfp4", "fp8:block=4x4"] {
            let q = super::super::quantize(&x, &[4, 32], &Scheme::parse(name).expect("a scheme"), -1, None)
                .expect("quantize");
            for len in [0, 127, 129] {
                let mut out = vec![1.5f32; len];
                let err = q.dequantize_into(&mut out).expect_err("a buffer of another length");
                assert_eq!(err.to_string(), format!("shape [4, 32] has 128 elements, but {len} were given"), "{name}");
                assert!(out.iter().all(|&v| v == 1.5), "{name}: the buffer was written");
            }
        }
    }

    #[test]
    fn fused_dequantize_equals_the_engine_on_every_code_and_scale() {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        for name in &schemes() {
            let scheme = Scheme::parse(name).expect("a scheme");
            let (rows, len) = (64, 256);
            let x = tensor(rows, len, &mut rng);
            let Ok(mut q) = quantize_with(&x, &[rows, len], &scheme, -1, None, false) else { continue };
            let bits = scheme.element_dtype().bits().unwrap_or(8).min(8);
            q.elements
                .iter_mut()
                .enumerate()
                .for_each(|(i, c)| *c = (i as u64 ^ rng.next()) as u8 & ((1u16 << bits) - 1) as u8);
            let mut k = 0u32;
            let mut next = || {
                k += 1;
                k
            };
            q.scales = match &q.scales {
                Scales::Codes(v) => Scales::Codes(v.iter().map(|_| next() as u8).collect()),
                Scales::Float16(v) => Scales::Float16(v.iter().map(|_| rng.next() as u16).collect()),
                Scales::Bfloat16(v) => Scales::Bfloat16(v.iter().map(|_| rng.next() as u16).collect()),
                Scales::Float32(v) => Scales::Float32(v.iter().map(|_| f32::from_bits(rng.next() as u32)).collect()),
            };
            for global in [None, Some(0.5), Some(f32::NAN)] {
                if global.is_some() && scheme.recipe().global == GlobalRule::None {
                    continue;
                }
                q.global_scale = global;
                dequantized_same(&q, &format!("{name} global {global:?}"));
            }
        }
    }
}

#[cfg(test)]
mod integer_rule_tests {
    use super::super::rules::{c_int8_x86, nearest_kvalue};
    use super::{
        ceil_log2_form, floor_log2_form, ElementRule, FusedOffsetTruncate, KvalueSteps, Log2Steps, OffsetTruncate,
        TiesAwayInt8,
    };
    use crate::round::RoundingMode;

    /// `steps` against `float_form` on `bits`: equal where they answer, and they answer every
    /// positive normal float32; returns whether they answered.
    fn log2_equals_the_float_form(steps: &Log2Steps, float_form: fn(f32) -> f32, bits: u32) -> bool {
        let d = f32::from_bits(bits);
        match steps.log2_of(d) {
            Some(e) => {
                assert_eq!(e as f32, float_form(d), "d {d:e} ({bits:#x})");
                true
            }
            None => {
                assert!(!(d.is_normal() && d > 0.0), "d {d:e} ({bits:#x}) not answered");
                false
            }
        }
    }

    /// torchao's `rceil` exponent (`ceil`) and ggml MXFP4's (`floor`) from the bits against the
    /// float forms on every top-16-bit pattern with seven low halves (both signs, zeros,
    /// subnormals, infinities and NaN among them).
    #[test]
    fn log2_from_the_bits_equals_the_float_forms_on_every_top_16_bit_pattern() {
        for form in [ceil_log2_form, floor_log2_form] {
            let steps = Log2Steps::derive(form).expect("float32 log2 has the threshold form");
            let mut answered = 0u64;
            for top in 0..=0xFFFFu32 {
                for low in [0, 1, 2, 0x7FFF, 0x8000, 0xFFFE, 0xFFFF] {
                    answered += u64::from(log2_equals_the_float_form(&steps, form, top << 16 | low));
                }
            }
            // The positive normal patterns: 254 exponents of 128 top fractions, seven low halves each.
            assert_eq!(answered, 254 * 128 * 7);
        }
    }

    /// The same over every float32 (about 30 s in release on one core; run by hand:
    /// `cargo test --release --lib log2_from_the_bits -- --ignored`).
    #[test]
    #[ignore]
    fn log2_from_the_bits_equals_the_float_forms_on_every_float32() {
        for form in [ceil_log2_form, floor_log2_form] {
            let steps = Log2Steps::derive(form).expect("float32 log2 has the threshold form");
            let answered = (0..=u32::MAX).filter(|&bits| log2_equals_the_float_form(&steps, form, bits)).count();
            assert_eq!(answered, 254 << 23);
        }
    }

    /// The thresholds of ggml's nearest-kvalue search against the search itself on every
    /// top-16-bit float32 pattern with four low halves, at factors from the smallest to the
    /// largest E8M0 half scale: the lanes they answer give the search's code.
    #[test]
    fn kvalue_thresholds_equal_the_search_on_every_top_16_bit_pattern() {
        let steps = KvalueSteps::derive().expect("ggml's kvalues have the threshold form");
        let mut answered = 0u64;
        for e in [-128, -100, -60, -3, 0, 1, 5, 40, 100, 127] {
            let d = super::rules::pow2(e);
            for top in 0..=0xFFFFu32 {
                for low in [0, 1, 0x8000, 0xFFFF] {
                    let x = f32::from_bits(top << 16 | low);
                    let y = steps.prepare(x, super::kvalue_factor(d));
                    if steps.unanswered(y) {
                        continue;
                    }
                    answered += 1;
                    let want = nearest_kvalue(x, d, false);
                    assert_eq!(steps.code(y, d), want, "x {x:e} ({:#x}), d 2^{e}", x.to_bits());
                    assert_eq!(nearest_kvalue(x, d, true), want, "fused x {x:e} ({:#x}), d 2^{e}", x.to_bits());
                }
            }
        }
        // Each answered factor answers the patterns below 2^20 times it: most of them.
        assert!(answered > 5 * 4 * 0x8000, "{answered} lanes answered");
    }

    /// The fused multiply-add through the rounding core against the standard library's
    /// `mul_add` (the CPU's FMA or libm's `fmaf`, both rounded once), `a` every top-16-bit pattern
    /// with two low halves, `b` and `c` values that make ties, cancellations, far-apart terms,
    /// subnormal and overflowing results; and the fused Q4_0 rule against the engine's form.
    #[test]
    fn fused_multiply_add_equals_std_on_every_top_16_bit_pattern() {
        let bs = [
            f32::from_bits(0xBF92_4925),
            3.0,
            1.0 + f32::EPSILON,
            7.0e-38,
            7.888_609e-31,
            1.267_650_6e30,
            -0.5,
            f32::MAX,
        ];
        let cs = [8.5, -8.5, -3.0, 1e-40, 1e30, -f32::MAX, 0.0, -0.0, f32::MIN_POSITIVE];
        for top in 0..=0xFFFFu32 {
            for low in [0, 0x8001] {
                let a = f32::from_bits(top << 16 | low);
                if !a.is_finite() {
                    continue;
                }
                for &b in &bs {
                    for &c in &cs {
                        let (got, want) = (super::super::rules::fused_multiply_add(a, b, c), a.mul_add(b, c));
                        assert_eq!(got.to_bits(), want.to_bits(), "fma({a:e}, {b:e}, {c:e}): {got:e} against {want:e}");
                    }
                }
                let code = FusedOffsetTruncate.code(FusedOffsetTruncate.prepare(a, bs[0]), bs[0]);
                let sum = a.mul_add(bs[0], 8.5);
                if sum.abs() < 128.0 || !sum.is_finite() {
                    assert_eq!(code, c_int8_x86(sum, RoundingMode::TowardZero).clamp(0, 15) as u8, "fused {a:e}");
                }
            }
        }
    }

    /// The branch-free integer rules against the rounding core on every top-16-bit float32
    /// pattern with four low halves (zero, one, a half, all ones).
    #[test]
    fn integer_rules_equal_the_core_on_every_top_16_bit_pattern() {
        for top in 0..=0xFFFFu32 {
            for low in [0, 1, 0x8000, 0xFFFF] {
                let y = f32::from_bits(top << 16 | low);
                let want = c_int8_x86(y, RoundingMode::NearestTiesAway) as u8;
                assert_eq!(TiesAwayInt8::<true>.code(y, 1.0), want, "ties away {y:e} ({:#x})", y.to_bits());
                let sum = TiesAwayInt8::<true>.prepare(y, 1.0) + 8.5;
                // Sums within int8 and the non-finite ones (a finite sum beyond 16.5 never occurs:
                // the engine's comment).
                if sum.abs() < 128.0 || !sum.is_finite() {
                    let want = c_int8_x86(sum, RoundingMode::TowardZero).clamp(0, 15) as u8;
                    assert_eq!(OffsetTruncate::<true>.code(sum, 1.0), want, "offset {y:e} ({:#x})", y.to_bits());
                }
            }
        }
    }
}

#[cfg(test)]
mod pass_tests {
    //! The scale and maxima passes against the engine's functions on every top-16-bit float32
    //! pattern (with four low halves), whichever instruction set the process runs them with.
    use super::super::recipes::{Amax, GlobalRule};
    use super::super::rules::{self, BlockScale};
    use super::super::Scheme;
    use super::CastScaleSteps;
    use crate::alloc_prelude::*;
    use crate::dtype::DType;

    /// Every top-16-bit pattern with four low halves (zero, one, a half, all ones), the tops in
    /// the order of an odd multiple (so a block mixes signs, NaN, infinities and sizes).
    fn every_top_16_bit_pattern() -> Vec<f32> {
        (0..0x10000u32)
            .flat_map(|i| {
                let top = i.wrapping_mul(40_503) & 0xFFFF;
                [0, 1, 0x8000, 0xFFFF].map(|low| f32::from_bits(top << 16 | low))
            })
            .collect()
    }

    fn same_scale(a: &BlockScale, b: &BlockScale) -> bool {
        a.stored == b.stored && a.factor.to_bits() == b.factor.to_bits()
    }

    /// The scale pass ([`CastScaleSteps`]: NVFP4's E4M3 and ggml's float16 scales) against the engine's
    /// `block_scale` with every pattern as a block maximum, for every row it takes, with and
    /// without per-tensor scales (0, Inf and NaN among them).
    #[test]
    fn cast_scales_equal_the_engine_on_every_top_16_bit_maximum() {
        let maxima = every_top_16_bit_pattern();
        let mut rows = 0;
        for name in super::super::concrete_schemes(32) {
            let scheme = Scheme::parse(&name).expect("a scheme");
            let recipe = scheme.recipe();
            let Some(casts) = rules::scale_casts(recipe).expect("the scale casts") else { continue };
            let globals: &[Option<f32>] = if recipe.global == GlobalRule::None {
                &[None]
            } else {
                &[None, Some(0.37), Some(3.0e-5), Some(0.0), Some(f32::INFINITY), Some(f32::NAN)]
            };
            for &global in globals {
                let Some(steps) = CastScaleSteps::new(recipe, &casts, global, DType::Float).expect("the steps") else {
                    continue;
                };
                rows += 1;
                let fast = steps.scales(recipe, &casts, &maxima, global, DType::Float).expect("the scales");
                for (&amax, got) in maxima.iter().zip(&fast) {
                    let want = rules::block_scale(recipe, amax, global, DType::Float);
                    assert!(
                        same_scale(got, &want),
                        "{name} global {global:?} amax {amax:e} ({:#x}): {:#x} {:e} against {:#x} {:e}",
                        amax.to_bits(),
                        got.stored,
                        got.factor,
                        want.stored,
                        want.factor
                    );
                }
            }
        }
        // torchao:nvfp4 (twice: with and without global=amax), modelopt:nvfp4 and
        // compressed-tensors:nvfp4, each without and with the five per-tensor scales of the loop;
        // ggml:q8_0, ggml:q4_0 (and with contract=fma), and gguf-py's two.
        assert_eq!(rows, 29, "rows with E4M3 or float16 scales");
    }

    /// The fused block maxima (the SIMD module's magnitudes where the CPU has them) against the
    /// engine's fold under every rule, in blocks of 16, 32, 64 and 128 and of 24 (no kernel).
    #[test]
    fn block_maxima_equal_the_engine_on_every_top_16_bit_pattern() {
        let values = every_top_16_bit_pattern();
        for rule in [Amax::NanPropagating, Amax::NanSkipped, Amax::RunningMax, Amax::SignedLargest, Amax::SignedArgmax]
        {
            for block in [16, 32, 64, 128, 24] {
                let n = values.len() / block * block;
                let fast = super::block_maxima(rule, &values[..n], n, block, n / block);
                for (b, (xs, got)) in values[..n].chunks_exact(block).zip(&fast).enumerate() {
                    let mut signed = 0.0;
                    let folded = rules::amax_fold(rule, 0.0, &mut signed, xs);
                    let want = if rule.signed() { signed } else { folded };
                    assert_eq!(
                        got.to_bits(),
                        want.to_bits(),
                        "{rule:?} block {block}, block {b}: {got:e} against {want:e}"
                    );
                }
            }
        }
    }
}
