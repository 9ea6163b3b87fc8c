//! ggml's I-quant quantizers (`quantize_iq*` in `ggml-quants.c`, as `ggml_quantize_chunk` calls
//! them), operation by operation in float32 in ggml's order: the x86-64 release build of
//! ggml-base evaluates each C expression in float32 without fused multiply-adds, so each Rust
//! expression below keeps the C's operands, parentheses and order. ggml's `MAX`/`MIN` macros
//! (`a > b ? a : b`) and its `nearest_int` (the 1.5 * 2^23 trick, whose assert is compiled out)
//! are reproduced as written, NaN behaviour included. Where the C stops the process
//! (`GGML_ASSERT`, `GGML_ABORT`) the row is refused with an error naming the row, the block and
//! the assertion.

// The loops index several arrays at once, as the C they reproduce does.
#![allow(clippy::needless_range_loop)]

use super::iq_grids::{IQ1S_GRID, IQ2S_GRID, IQ2XS_GRID, IQ2XXS_GRID, IQ3S_GRID, IQ3XXS_GRID, KVALUES_IQ4NL};
use super::iquants::{check_row, to_half};
use crate::alloc_prelude::*;
use crate::error::{Error, Result};
use crate::once::Once;

const QK_K: usize = 256;

/// ggml's `nearest_int`: the float32 sum with 1.5 * 2^23, its low 23 bits less 2^22 (its assert on
/// the range is compiled out in the release build, so larger inputs give what the bits give).
#[inline(always)]
pub(super) fn nearest_int(x: f32) -> i32 {
    let v = x + 12582912.0f32;
    (v.to_bits() as i32 & 0x007f_ffff) - 0x0040_0000
}

/// ggml's `MAX(a, b)` on floats: `a > b ? a : b`.
#[inline(always)]
fn c_max(a: f32, b: f32) -> f32 {
    if a > b {
        a
    } else {
        b
    }
}

/// ggml's `best_index_int8`: the index of the value nearest `x` in the increasing `values`
/// (ties to the upper one; NaN to the last).
#[inline]
fn best_index_int8(values: &[i8; 16], x: f32) -> usize {
    let n = values.len();
    if x <= f32::from(values[0]) {
        return 0;
    }
    if x >= f32::from(values[n - 1]) {
        return n - 1;
    }
    let (mut ml, mut mu) = (0usize, n - 1);
    while mu - ml > 1 {
        let mav = (ml + mu) / 2;
        if x < f32::from(values[mav]) {
            mu = mav;
        } else {
            ml = mav;
        }
    }
    if x - f32::from(values[mu - 1]) < f32::from(values[mu]) - x {
        mu - 1
    } else {
        mu
    }
}

/// The error for a block where ggml's C aborts.
fn aborts(name: &str, row_index: usize, block: usize, block_elements: usize, why: &str) -> Error {
    Error::InvalidOp {
        op: format!("ggml:{name} quantize"),
        message: format!(
            "row {row_index}, block {block} (elements {}..{}): ggml's C aborts here ({why})",
            block * block_elements,
            (block + 1) * block_elements
        ),
    }
}

/// Runs `quantize_block` over the row's blocks into a buffer and copies it to `out` only when every
/// block succeeded.
#[allow(clippy::too_many_arguments)]
fn by_blocks(
    name: &str,
    block_elements: usize,
    block_bytes: usize,
    needs_imatrix: bool,
    row: &[f32],
    imatrix: Option<&[f32]>,
    out: &mut [u8],
    row_index: usize,
    mut quantize_block: impl FnMut(&[f32], Option<&[f32]>, &mut [u8]) -> core::result::Result<(), &'static str>,
) -> Result<()> {
    check_row(name, block_elements, row, imatrix, needs_imatrix, out.len(), block_bytes, row_index)?;
    let mut buffer = vec![0u8; out.len()];
    for (b, (x, y)) in row.chunks_exact(block_elements).zip(buffer.chunks_exact_mut(block_bytes)).enumerate() {
        let w = imatrix.map(|w| &w[b * block_elements..(b + 1) * block_elements]);
        quantize_block(x, w, y).map_err(|why| aborts(name, row_index, b, block_elements, why))?;
    }
    out.copy_from_slice(&buffer);
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// IQ4_NL, IQ4_XS

/// `quantize_row_iq4_nl_impl` with `ntry` = 7 (as `quantize_iq4_nl` / `quantize_iq4_xs` call it):
/// one super-block of `x.len()` elements in sub-blocks of 32, into `d`, the scales and the nibbles.
fn iq4_block(x: &[f32], quant_weights: Option<&[f32]>, out: &mut [u8]) {
    const BLOCK: usize = 32;
    const NTRY: i32 = 7;
    let values = &KVALUES_IQ4NL;
    let super_block_size = x.len();
    let nb = super_block_size / BLOCK;
    let mut sigma2 = 0f32;
    for &v in x {
        sigma2 += v * v;
    }
    sigma2 *= 2.0 / super_block_size as f32;

    let mut scales = [0f32; QK_K / BLOCK];
    let mut l_all = [0u8; QK_K];
    let mut weight = [0f32; BLOCK];
    let (mut max_scale, mut amax_scale) = (0f32, 0f32);
    for ib in 0..nb {
        let xb = &x[ib * BLOCK..(ib + 1) * BLOCK];
        let lb = &mut l_all[ib * BLOCK..(ib + 1) * BLOCK];
        match quant_weights {
            Some(qw) => {
                let qw = &qw[ib * BLOCK..(ib + 1) * BLOCK];
                for j in 0..BLOCK {
                    weight[j] = qw[j] * (sigma2 + xb[j] * xb[j]).sqrt();
                }
            }
            None => {
                for j in 0..BLOCK {
                    weight[j] = xb[j] * xb[j];
                }
            }
        }
        let (mut amax, mut max) = (0f32, 0f32);
        for &v in xb {
            let ax = v.abs();
            if ax > amax {
                amax = ax;
                max = v;
            }
        }
        if amax < 1e-15 {
            scales[ib] = 0.0;
            continue;
        }
        let v0 = f32::from(values[0]);
        let mut d = -max / v0;
        let mut id = 1.0 / d;
        let (mut sumqx, mut sumq2) = (0f32, 0f32);
        for j in 0..BLOCK {
            let al = id * xb[j];
            let l = best_index_int8(values, al);
            lb[j] = l as u8;
            let q = f32::from(values[l]);
            let w = weight[j];
            sumqx += w * q * xb[j];
            sumq2 += w * q * q;
        }
        d = if sumq2 > 0.0 { sumqx / sumq2 } else { 0.0 };
        let mut best = d * sumqx;
        for itry in -NTRY..=NTRY {
            id = (itry + i32::from(values[0])) as f32 / max;
            sumqx = 0.0;
            sumq2 = 0.0;
            for j in 0..BLOCK {
                let al = id * xb[j];
                let l = best_index_int8(values, al);
                let q = f32::from(values[l]);
                let w = weight[j];
                sumqx += w * q * xb[j];
                sumq2 += w * q * q;
            }
            if sumq2 > 0.0 && sumqx * sumqx > best * sumq2 {
                d = sumqx / sumq2;
                best = d * sumqx;
            }
        }
        scales[ib] = d;
        let abs_d = d.abs();
        if abs_d > amax_scale {
            amax_scale = abs_d;
            max_scale = d;
        }
    }

    let qs_at;
    if nb > 1 {
        // IQ4_XS: d (2), scales_h (2), scales_l (nb / 2), nibbles
        let mut scales_h = 0u16;
        let mut scales_l = [0u8; QK_K / BLOCK / 2];
        let d = -max_scale / 32.0;
        out[0..2].copy_from_slice(&to_half(d).to_le_bytes());
        let id = if d != 0.0 { 1.0 / d } else { 0.0 };
        for ib in 0..nb {
            let mut l = nearest_int(id * scales[ib]);
            l = (-32).max(l.min(31));
            let dl = d * l as f32;
            let idl = if dl != 0.0 { 1.0 / dl } else { 0.0 };
            let xb = &x[ib * BLOCK..(ib + 1) * BLOCK];
            for j in 0..BLOCK {
                l_all[ib * BLOCK + j] = best_index_int8(values, idl * xb[j]) as u8;
            }
            let l = (l + 32) as u8;
            let (l_l, l_h) = (l & 0xf, l >> 4);
            if ib % 2 == 0 {
                scales_l[ib / 2] = l_l;
            } else {
                scales_l[ib / 2] |= l_l << 4;
            }
            scales_h |= u16::from(l_h) << (2 * (ib % 8));
        }
        out[2..4].copy_from_slice(&scales_h.to_le_bytes());
        out[4..4 + nb / 2].copy_from_slice(&scales_l[..nb / 2]);
        qs_at = 4 + nb / 2;
    } else {
        out[0..2].copy_from_slice(&to_half(scales[0]).to_le_bytes());
        let id = if scales[0] != 0.0 { 1.0 / scales[0] } else { 0.0 };
        for j in 0..super_block_size {
            l_all[j] = best_index_int8(values, id * x[j]) as u8;
        }
        qs_at = 2;
    }
    for i in 0..super_block_size / 32 {
        for j in 0..16 {
            out[qs_at + 16 * i + j] = l_all[32 * i + j] | (l_all[32 * i + 16 + j] << 4);
        }
    }
}

/// `quantize_iq4_nl` of one row.
pub(super) fn quantize_iq4_nl(row: &[f32], imatrix: Option<&[f32]>, out: &mut [u8], row_index: usize) -> Result<()> {
    by_blocks("iq4_nl", 32, 18, false, row, imatrix, out, row_index, |x, w, y| {
        iq4_block(x, w, y);
        Ok(())
    })
}

/// `quantize_iq4_xs` of one row.
pub(super) fn quantize_iq4_xs(row: &[f32], imatrix: Option<&[f32]>, out: &mut [u8], row_index: usize) -> Result<()> {
    by_blocks("iq4_xs", QK_K, 136, false, row, imatrix, out, row_index, |x, w, y| {
        iq4_block(x, w, y);
        Ok(())
    })
}

// ---------------------------------------------------------------------------------------------
// The grid searches: `iq2xs_init_impl` / `iq3xs_init_impl`

/// A grid as ggml's quantizers search it: each point's coordinates `2l + 1` (l the level index),
/// the map from a point's packed level indices to its grid index (or, negative, to its list of
/// nearest grid points), and the neighbour lists (a count, then grid indices).
struct Search<const N: usize> {
    points: Vec<[i8; N]>,
    map: Vec<i32>,
    neighbours: Vec<u16>,
}

impl<const N: usize> Search<N> {
    /// As ggml's init: `levels` are the grid's values in level order, `bits` the bits of a level
    /// index in a map key, `map_size` and `nwant` (how many distinct distances the neighbour lists
    /// hold) as ggml sets them.
    fn new(grid: &[[u8; N]], levels: &[u8], bits: u32, map_size: usize, nwant: usize) -> Search<N> {
        let points: Vec<[i8; N]> = grid
            .iter()
            .map(|g| {
                let mut p = [0i8; N];
                for i in 0..N {
                    let l = levels.iter().position(|&v| v == g[i]).expect("a grid value is a level");
                    p[i] = 2 * l as i8 + 1;
                }
                p
            })
            .collect();
        let mut map = vec![-1i32; map_size];
        for (i, p) in points.iter().enumerate() {
            let mut index = 0usize;
            for k in 0..N {
                index |= (((p[k] - 1) / 2) as usize) << (bits as usize * k);
            }
            map[index] = i as i32;
        }
        let mask = (1usize << bits) - 1;
        let mut neighbours = Vec::new();
        let mut dist2 = vec![0i32; points.len()];
        for i in 0..map_size {
            if map[i] >= 0 {
                continue;
            }
            let mut pos = [0i32; N];
            for k in 0..N {
                pos[k] = 2 * ((i >> (bits as usize * k)) & mask) as i32 + 1;
            }
            for (d, pg) in dist2.iter_mut().zip(&points) {
                let mut d2 = 0i32;
                for k in 0..N {
                    let t = i32::from(pg[k]) - pos[k];
                    d2 += t * t;
                }
                *d = d2;
            }
            // ggml sorts (distance, index) pairs and keeps those of the `nwant` smallest
            // distances: the same list is each of those distances, ascending, with its indices
            // ascending.
            map[i] = -(neighbours.len() as i32 + 1);
            let start = neighbours.len();
            neighbours.push(0u16);
            let mut below = i32::MIN;
            for _ in 0..nwant {
                let Some(&next) = dist2.iter().filter(|&&d| d > below).min() else { break };
                neighbours.extend(dist2.iter().enumerate().filter(|&(_, &d)| d == next).map(|(j, _)| j as u16));
                below = next;
            }
            neighbours[start] = (neighbours.len() - start - 1) as u16;
        }
        Search { points, map, neighbours }
    }

    /// `iq2_find_best_neighbour` / `iq3_find_best_neighbour`: the neighbour at `list` (a negative
    /// map entry's offset) with the least weighted squared error at `scale`, its levels into `l`;
    /// `None` where ggml asserts (no distance below FLT_MAX).
    fn best_neighbour(&self, list: usize, xval: &[f32], weight: &[f32], scale: f32, l: &mut [i8]) -> Option<usize> {
        let count = usize::from(self.neighbours[list]);
        let mut best_d2 = f32::MAX;
        let mut grid_index = None;
        for &j in &self.neighbours[list + 1..list + 1 + count] {
            let pg = &self.points[usize::from(j)];
            let mut d2 = 0f32;
            for i in 0..N {
                let q = f32::from(pg[i]);
                let diff = scale * q - xval[i];
                d2 += weight[i] * diff * diff;
            }
            if d2 < best_d2 {
                best_d2 = d2;
                grid_index = Some(usize::from(j));
            }
        }
        let g = grid_index?;
        for i in 0..N {
            l[i] = (self.points[g][i] - 1) / 2;
        }
        Some(g)
    }
}

fn grid_bytes<const N: usize, T: Copy>(grid: &[T], bytes: impl Fn(T) -> [u8; N]) -> Vec<[u8; N]> {
    grid.iter().map(|&g| bytes(g)).collect()
}

static IQ3XXS_SEARCH: Once<Search<4>> = Once::new();
static IQ3S_SEARCH: Once<Search<4>> = Once::new();

fn iq3xxs_search() -> &'static Search<4> {
    IQ3XXS_SEARCH.get_or_init(|| {
        let grid = grid_bytes(&IQ3XXS_GRID, u32::to_le_bytes);
        Search::new(&grid, &[0x04, 0x0c, 0x14, 0x1c, 0x24, 0x2c, 0x34, 0x3e], 3, 4096, 2)
    })
}

fn iq3s_search() -> &'static Search<4> {
    IQ3S_SEARCH.get_or_init(|| {
        let grid = grid_bytes(&IQ3S_GRID, u32::to_le_bytes);
        Search::new(&grid, &[1, 3, 5, 7, 9, 11, 13, 15], 3, 4096, 3)
    })
}

// ---------------------------------------------------------------------------------------------
// IQ3_XXS, IQ3_S

const ASSERT_NEIGHBOUR: &str = "GGML_ASSERT(grid_index >= 0) in iq2/iq3_find_best_neighbour: every \
                                neighbour's weighted distance is NaN or at least FLT_MAX";
const ASSERT_SCALE: &str = "GGML_ASSERT(scale >= 0): the sub-block's scale is NaN";
const ABORT_OFF_GRID: &str = "GGML_ABORT: a point not on the grid";

/// Which groups the fit puts on the grid again at the chosen scale.
#[derive(Clone, Copy, PartialEq)]
enum Resnap {
    /// Those off the grid, when any is and the scale is above 0 (IQ3_XXS, IQ2_XS, IQ2_S).
    OffGrid,
    /// All, when any is off the grid and the scale is above 0 (IQ3_S).
    AllIfAnyOff,
    /// All, when the scale is above 0 (IQ2_XXS).
    Always,
}

/// The scale search of the grid types: try inverse scales `(2*kMaxQ-1 + is*step)/max`, put each
/// group of `N` values on the grid (the nearest levels, or the best neighbour), keep the best by
/// `sumqx^2/sumq2`, then put groups on the grid again at the chosen scale and refit.
struct Fit {
    /// Levels per value (`kMaxQ`).
    kmax: i32,
    /// Bits of a level in a map key.
    bits: u32,
    tries: core::ops::RangeInclusive<i32>,
    step: f32,
    /// The groups' initial on-grid flag (true in IQ3_XXS, IQ2_XS, IQ2_S; false in IQ3_S).
    on_grid_start: bool,
    resnap: Resnap,
}

const IQ3_XXS_FIT: Fit =
    Fit { kmax: 8, bits: 3, tries: -15..=15, step: 0.2, on_grid_start: true, resnap: Resnap::OffGrid };
const IQ3_S_FIT: Fit =
    Fit { kmax: 8, bits: 3, tries: -9..=9, step: 0.2, on_grid_start: false, resnap: Resnap::AllIfAnyOff };
const IQ2_XXS_FIT: Fit =
    Fit { kmax: 3, bits: 2, tries: -6..=6, step: 0.1, on_grid_start: false, resnap: Resnap::Always };
const IQ2_XS_FIT: Fit =
    Fit { kmax: 3, bits: 2, tries: -9..=9, step: 0.1, on_grid_start: true, resnap: Resnap::OffGrid };

impl Fit {
    /// The levels of `N` values at inverse scale `id` (`nearest_int(0.5f*(id*x-1))` clamped to
    /// 0..kMaxQ-1) into `l`, and their map key.
    #[inline(always)]
    fn levels<const N: usize>(&self, id: f32, xval: &[f32], l: &mut [i8]) -> usize {
        let mut u = 0usize;
        for i in 0..N {
            let q = nearest_int(0.5 * (id * xval[i] - 1.0));
            let q = 0.max((self.kmax - 1).min(q));
            l[i] = q as i8;
            u |= (q as usize) << (self.bits as usize * i);
        }
        u
    }

    /// The search over `xval` (groups of `N`), from `scale` (the starting scale) with inverse
    /// scales over `max`; the chosen levels in `l` (which holds the levels to keep where no try
    /// improves). Returns the scale, or the assertion where ggml's C aborts.
    #[allow(clippy::too_many_arguments)]
    fn run<const N: usize>(
        &self,
        search: &Search<N>,
        xval: &[f32],
        weight: &[f32],
        waux: &[f32],
        max: f32,
        mut scale: f32,
        l: &mut [i8],
        laux: &mut [i8],
    ) -> core::result::Result<f32, &'static str> {
        let n = xval.len();
        let groups = n / N;
        let mut best = 0f32;
        let mut is_on_grid = [self.on_grid_start; 8];
        let mut is_on_grid_aux = [false; 8];
        let top = (2 * self.kmax - 1) as f32;
        for is in self.tries.clone() {
            let id = (top + is as f32 * self.step) / max;
            let this_scale = 1.0 / id;
            for k in 0..groups {
                let g = k * N..(k + 1) * N;
                let u = self.levels::<N>(id, &xval[g.clone()], &mut laux[g.clone()]);
                is_on_grid_aux[k] = true;
                let gi = search.map[u];
                if gi < 0 {
                    is_on_grid_aux[k] = false;
                    search
                        .best_neighbour(
                            (-gi - 1) as usize,
                            &xval[g.clone()],
                            &waux[g.clone()],
                            this_scale,
                            &mut laux[g],
                        )
                        .ok_or(ASSERT_NEIGHBOUR)?;
                }
            }
            let (mut sumqx, mut sumq2) = (0f32, 0f32);
            for i in 0..n {
                let w = weight[i];
                let q = (2 * i32::from(laux[i]) + 1) as f32;
                sumqx += w * xval[i] * q;
                sumq2 += w * q * q;
            }
            if sumq2 > 0.0 && sumqx * sumqx > best * sumq2 {
                scale = sumqx / sumq2;
                best = scale * sumqx;
                l[..n].copy_from_slice(&laux[..n]);
                is_on_grid = is_on_grid_aux;
            }
        }
        let any_off = is_on_grid[..groups].iter().any(|&g| !g);
        if (self.resnap == Resnap::Always || any_off) && scale > 0.0 {
            let id = 1.0 / scale;
            for k in 0..groups {
                if self.resnap == Resnap::OffGrid && is_on_grid[k] {
                    continue;
                }
                let g = k * N..(k + 1) * N;
                let mut levels = [0i8; N];
                let u = self.levels::<N>(id, &xval[g.clone()], &mut levels);
                l[g.clone()].copy_from_slice(&levels);
                let gi = search.map[u];
                if gi < 0 {
                    search
                        .best_neighbour((-gi - 1) as usize, &xval[g.clone()], &waux[g.clone()], scale, &mut l[g])
                        .ok_or(ASSERT_NEIGHBOUR)?;
                }
            }
            let (mut sumqx, mut sumq2) = (0f32, 0f32);
            for i in 0..n {
                let w = weight[i];
                let q = (2 * i32::from(l[i]) + 1) as f32;
                sumqx += w * xval[i] * q;
                sumq2 += w * q * q;
            }
            if sumq2 > 0.0 {
                scale = sumqx / sumq2;
            }
        }
        Ok(scale)
    }
}

/// `quantize_row_iq3_xxs_impl` (grid of 256) for one block.
fn iq3_xxs_block(x: &[f32], quant_weights: Option<&[f32]>, out: &mut [u8]) -> core::result::Result<(), &'static str> {
    let search = iq3xxs_search();
    let mut scales = [0f32; 8];
    let mut weight = [0f32; 32];
    let mut waux = [0f32; 32];
    let mut xval = [0f32; 32];
    let mut l = [0i8; 32];
    let mut laux = [0i8; 32];
    let mut block_signs = [0u8; 4];
    let mut q3 = [0u8; 96];
    let mut scales_and_signs = [0u32; 8];
    let mut max_scale = 0f32;

    let mut sumx2 = 0f32;
    for &v in x {
        sumx2 += v * v;
    }
    let sigma2 = 2.0 * sumx2 / QK_K as f32;

    for ib in 0..8 {
        let xb = &x[32 * ib..32 * ib + 32];
        sub_block_weights(xb, quant_weights.map(|w| &w[32 * ib..32 * ib + 32]), sigma2, &mut weight, &mut waux);
        for k in 0..4 {
            let mut nflip = 0;
            let mut s = 0u8;
            for i in 0..8 {
                if xb[8 * k + i] >= 0.0 {
                    xval[8 * k + i] = xb[8 * k + i];
                } else {
                    xval[8 * k + i] = -xb[8 * k + i];
                    nflip += 1;
                    s |= 1 << i;
                }
            }
            if nflip % 2 != 0 {
                let mut imin = 0;
                let mut min = weight[8 * k] * xb[8 * k] * xb[8 * k];
                for i in 1..8 {
                    let ax = weight[8 * k + i] * xb[8 * k + i] * xb[8 * k + i];
                    if ax < min {
                        min = ax;
                        imin = i;
                    }
                }
                xval[8 * k + imin] = -xval[8 * k + imin];
                s ^= 1 << imin;
            }
            block_signs[k] = s & 127;
        }
        let mut max = xval[0];
        for &v in &xval[1..] {
            max = c_max(max, v);
        }
        l.fill(0);
        if max < 1e-8 {
            scales[ib] = 0.0;
            continue;
        }
        let scale = IQ3_XXS_FIT.run(search, &xval, &weight, &waux, max, max / 15.0, &mut l, &mut laux)?;
        let mut scale = scale;
        if scale < 0.0 {
            scale = -scale;
            for s in &mut block_signs {
                *s = !*s & 127;
            }
        }
        for k in 0..8 {
            let mut u = 0usize;
            for i in 0..4 {
                u |= (l[4 * k + i] as usize) << (3 * i);
            }
            let g = search.map[u];
            if g < 0 {
                return Err(ABORT_OFF_GRID);
            }
            q3[8 * ib + k] = g as u8;
        }
        scales_and_signs[ib] = u32::from(block_signs[0])
            | (u32::from(block_signs[1]) << 7)
            | (u32::from(block_signs[2]) << 14)
            | (u32::from(block_signs[3]) << 21);
        if scale.is_nan() || scale < 0.0 {
            return Err(ASSERT_SCALE);
        }
        scales[ib] = scale;
        max_scale = c_max(max_scale, scale);
    }
    out.fill(0);
    if max_scale == 0.0 {
        return Ok(());
    }
    let d = max_scale / 31.0;
    out[0..2].copy_from_slice(&to_half(d * 1.0125).to_le_bytes());
    let id = 1.0 / d;
    for ib in 0..8 {
        let l = nearest_int(0.5 * (id * scales[ib] - 1.0));
        let l = 0.max(15.min(l));
        scales_and_signs[ib] |= (l as u32) << 28;
    }
    out[2..66].copy_from_slice(&q3[..64]);
    for (ib, w) in scales_and_signs.iter().enumerate() {
        out[66 + 4 * ib..70 + 4 * ib].copy_from_slice(&w.to_le_bytes());
    }
    Ok(())
}

/// A sub-block's weights: the importance times `sqrtf(sigma2 + x*x)`, or `x*x`; and their roots.
#[inline]
fn sub_block_weights(xb: &[f32], qw: Option<&[f32]>, sigma2: f32, weight: &mut [f32], waux: &mut [f32]) {
    match qw {
        Some(qw) => {
            for i in 0..xb.len() {
                weight[i] = qw[i] * (sigma2 + xb[i] * xb[i]).sqrt();
            }
        }
        None => {
            for i in 0..xb.len() {
                weight[i] = xb[i] * xb[i];
            }
        }
    }
    for i in 0..xb.len() {
        waux[i] = weight[i].sqrt();
    }
}

/// `quantize_row_iq3_s_impl` (sub-blocks of 32) for one block. A sub-block whose values are all
/// zero leaves the `qs` and `signs` cursors where they are, as ggml's does, so the next
/// sub-block's grid bytes and signs land in its place.
fn iq3_s_block(x: &[f32], quant_weights: Option<&[f32]>, out: &mut [u8]) -> core::result::Result<(), &'static str> {
    let search = iq3s_search();
    out.fill(0);
    let mut scales = [0f32; 8];
    let mut weight = [0f32; 32];
    let mut waux = [0f32; 32];
    let mut xval = [0f32; 32];
    let mut l = [0i8; 32];
    let mut laux = [0i8; 32];
    let mut block_signs = [0u8; 4];
    let (qs0, qh0, signs0, scales0) = (2usize, 66usize, 74usize, 106usize);
    let (mut qs, mut signs) = (qs0, signs0);
    let mut max_scale = 0f32;

    let mut sumx2 = 0f32;
    for &v in x {
        sumx2 += v * v;
    }
    let sigma2 = 2.0 * sumx2 / QK_K as f32;

    for ib in 0..8 {
        let xb = &x[32 * ib..32 * ib + 32];
        sub_block_weights(xb, quant_weights.map(|w| &w[32 * ib..32 * ib + 32]), sigma2, &mut weight, &mut waux);
        for k in 0..4 {
            let mut s = 0u8;
            for i in 0..8 {
                if xb[8 * k + i] >= 0.0 {
                    xval[8 * k + i] = xb[8 * k + i];
                } else {
                    xval[8 * k + i] = -xb[8 * k + i];
                    s |= 1 << i;
                }
            }
            block_signs[k] = s;
        }
        let mut max = xval[0];
        for &v in &xval[1..] {
            max = c_max(max, v);
        }
        l.fill(0);
        if max == 0.0 {
            scales[ib] = 0.0;
            continue;
        }
        let mut scale = IQ3_S_FIT.run(search, &xval, &weight, &waux, max, max / 15.0, &mut l, &mut laux)?;
        if scale < 0.0 {
            scale = -scale;
            for s in &mut block_signs {
                *s = !*s;
            }
        }
        for k in 0..8 {
            let mut u = 0usize;
            for i in 0..4 {
                u |= (l[4 * k + i] as usize) << (3 * i);
            }
            let g = search.map[u];
            if g < 0 {
                return Err(ABORT_OFF_GRID);
            }
            out[qs + k] = (g & 255) as u8;
            out[qh0 + (ib * 8 + k) / 8] |= ((g >> 8) as u8) << ((ib * 8 + k) % 8);
        }
        qs += 8;
        out[signs..signs + 4].copy_from_slice(&block_signs);
        signs += 4;
        if scale.is_nan() || scale < 0.0 {
            return Err(ASSERT_SCALE);
        }
        scales[ib] = scale;
        max_scale = c_max(max_scale, scale);
    }
    if max_scale == 0.0 {
        return Ok(());
    }
    let d = max_scale / 31.0;
    out[0..2].copy_from_slice(&to_half(d * 1.033).to_le_bytes());
    let id = 1.0 / d;
    for ib in (0..8).step_by(2) {
        let l1 = 0.max(15.min(nearest_int(0.5 * (id * scales[ib] - 1.0))));
        let l2 = 0.max(15.min(nearest_int(0.5 * (id * scales[ib + 1] - 1.0))));
        out[scales0 + ib / 2] = (l1 | (l2 << 4)) as u8;
    }
    Ok(())
}

/// `quantize_iq3_xxs` of one row.
pub(super) fn quantize_iq3_xxs(row: &[f32], imatrix: Option<&[f32]>, out: &mut [u8], row_index: usize) -> Result<()> {
    by_blocks("iq3_xxs", QK_K, 98, false, row, imatrix, out, row_index, iq3_xxs_block)
}

/// `quantize_iq3_s` of one row.
pub(super) fn quantize_iq3_s(row: &[f32], imatrix: Option<&[f32]>, out: &mut [u8], row_index: usize) -> Result<()> {
    by_blocks("iq3_s", QK_K, 110, false, row, imatrix, out, row_index, iq3_s_block)
}

// ---------------------------------------------------------------------------------------------
// IQ2_XXS, IQ2_XS, IQ2_S

/// The IQ2 grids' values in level order (`iq2xs_init_impl`'s `2l+1` for l = 0, 1, 2).
const IQ2_LEVELS: [u8; 3] = [0x08, 0x19, 0x2b];
/// `iq2xs_init_impl`'s map size (keys of eight 2-bit levels up to 0xAAAA).
const IQ2_MAP_SIZE: usize = 43692;

static IQ2XXS_SEARCH: Once<Search<8>> = Once::new();
static IQ2XS_SEARCH: Once<Search<8>> = Once::new();
static IQ2S_SEARCH: Once<Search<8>> = Once::new();

fn iq2xxs_search() -> &'static Search<8> {
    IQ2XXS_SEARCH
        .get_or_init(|| Search::new(&grid_bytes(&IQ2XXS_GRID, u64::to_le_bytes), &IQ2_LEVELS, 2, IQ2_MAP_SIZE, 2))
}

fn iq2xs_search() -> &'static Search<8> {
    IQ2XS_SEARCH
        .get_or_init(|| Search::new(&grid_bytes(&IQ2XS_GRID, u64::to_le_bytes), &IQ2_LEVELS, 2, IQ2_MAP_SIZE, 2))
}

fn iq2s_search() -> &'static Search<8> {
    IQ2S_SEARCH.get_or_init(|| Search::new(&grid_bytes(&IQ2S_GRID, u64::to_le_bytes), &IQ2_LEVELS, 2, IQ2_MAP_SIZE, 1))
}

/// ggml's `make_qp_quants`: levels 0..=nmax for non-negative `x` under `quant_weights`, into `l`;
/// returns the scale.
fn make_qp_quants(nmax: i32, x: &[f32], l: &mut [i8], quant_weights: &[f32]) -> f32 {
    let n = x.len();
    let mut max = 0f32;
    for &v in x {
        max = c_max(max, v);
    }
    if max < 1e-15 {
        l[..n].fill(0);
        return 0.0;
    }
    let nmaxf = nmax as f32;
    let mut iscale = nmaxf / max;
    for i in 0..n {
        // ggml stores the int in a uint8_t; the levels are read back as int8 by its callers
        l[i] = nearest_int(iscale * x[i]) as i8;
    }
    let scale = 1.0 / iscale;
    let mut best_mse = 0f32;
    for i in 0..n {
        let diff = x[i] - scale * f32::from(l[i] as u8);
        let w = quant_weights[i];
        best_mse += w * diff * diff;
    }
    for is in -4..=4 {
        if is == 0 {
            continue;
        }
        let iscale_is = (0.1 * is as f32 + nmaxf) / max;
        let scale_is = 1.0 / iscale_is;
        let mut mse = 0f32;
        for i in 0..n {
            let q = nmax.min(nearest_int(iscale_is * x[i]));
            let diff = x[i] - scale_is * q as f32;
            let w = quant_weights[i];
            mse += w * diff * diff;
        }
        if mse < best_mse {
            best_mse = mse;
            iscale = iscale_is;
        }
    }
    let (mut sumlx, mut suml2) = (0f32, 0f32);
    let mut levels = [0i32; 32];
    for i in 0..n {
        let q = nmax.min(nearest_int(iscale * x[i]));
        levels[i] = q & 0xff;
        let w = quant_weights[i];
        sumlx += w * x[i] * q as f32;
        suml2 += w * q as f32 * q as f32;
    }
    for _ in 0..5 {
        let mut n_changed = 0;
        for i in 0..n {
            let w = quant_weights[i];
            let li = levels[i] as f32;
            let mut slx = sumlx - w * x[i] * li;
            let mut sl2 = suml2 - w * li * li;
            if slx > 0.0 && sl2 > 0.0 {
                let new_l = nmax.min(nearest_int(x[i] * sl2 / slx));
                if new_l != levels[i] {
                    slx += w * x[i] * new_l as f32;
                    sl2 += w * new_l as f32 * new_l as f32;
                    if slx * slx * suml2 > sumlx * sumlx * sl2 {
                        levels[i] = new_l & 0xff;
                        sumlx = slx;
                        suml2 = sl2;
                        n_changed += 1;
                    }
                }
            }
        }
        if n_changed == 0 {
            break;
        }
    }
    for i in 0..n {
        l[i] = levels[i] as u8 as i8;
    }
    if suml2 > 0.0 {
        sumlx / suml2
    } else {
        0.0
    }
}

/// The sign bytes of `xb` in groups of 8 into `xval` (magnitudes) and `signs`; with `parity`
/// (IQ2_XXS, IQ2_XS, IQ3_XXS) an odd count of negatives flips the value of least `w*x*x` back and
/// keeps 7 bits.
fn group_signs(xb: &[f32], weight: &[f32], parity: bool, xval: &mut [f32], signs: &mut [u8]) {
    for k in 0..xb.len() / 8 {
        let mut nflip = 0;
        let mut s = 0u8;
        for i in 0..8 {
            if xb[8 * k + i] >= 0.0 {
                xval[8 * k + i] = xb[8 * k + i];
            } else {
                xval[8 * k + i] = -xb[8 * k + i];
                nflip += 1;
                s |= 1 << i;
            }
        }
        if parity && nflip % 2 != 0 {
            let mut imin = 0;
            let mut min = weight[8 * k] * xb[8 * k] * xb[8 * k];
            for i in 1..8 {
                let ax = weight[8 * k + i] * xb[8 * k + i] * xb[8 * k + i];
                if ax < min {
                    min = ax;
                    imin = i;
                }
            }
            xval[8 * k + imin] = -xval[8 * k + imin];
            s ^= 1 << imin;
        }
        signs[k] = if parity { s & 127 } else { s };
    }
}

/// The grid index of the levels of group `k` of `l`, or ggml's abort.
fn on_grid<const N: usize>(
    search: &Search<N>,
    bits: u32,
    l: &[i8],
    k: usize,
) -> core::result::Result<usize, &'static str> {
    // ggml's key is a uint16_t of the int8 levels shifted as int
    let mut u = 0u16;
    for i in 0..N {
        u |= (i32::from(l[N * k + i]) << (bits as usize * i)) as u16;
    }
    match search.map.get(usize::from(u)) {
        Some(&g) if g >= 0 => Ok(g as usize),
        _ => Err(ABORT_OFF_GRID),
    }
}

/// `quantize_row_iq2_xxs_impl` for one block (an importance matrix is required).
fn iq2_xxs_block(x: &[f32], quant_weights: Option<&[f32]>, out: &mut [u8]) -> core::result::Result<(), &'static str> {
    let search = iq2xxs_search();
    let qw_all = quant_weights.ok_or("GGML_ASSERT(quant_weights): IQ2_XXS needs an importance matrix")?;
    let mut scales = [0f32; 8];
    let mut weight = [0f32; 32];
    let mut waux = [0f32; 32];
    let mut xval = [0f32; 32];
    let mut l = [0i8; 32];
    let mut laux = [0i8; 32];
    let mut block_signs = [0u8; 4];
    let mut q2 = [0u32; 16];
    let mut max_scale = 0f32;
    let mut sumx2 = 0f32;
    for &v in x {
        sumx2 += v * v;
    }
    let sigma2 = sumx2 / QK_K as f32;
    for ib in 0..8 {
        let xb = &x[32 * ib..32 * ib + 32];
        let qw = &qw_all[32 * ib..32 * ib + 32];
        for i in 0..32 {
            weight[i] = qw[i] * (sigma2 + xb[i] * xb[i]).sqrt();
        }
        for i in 0..32 {
            waux[i] = weight[i].sqrt();
        }
        group_signs(xb, &weight, true, &mut xval, &mut block_signs);
        let mut max = xval[0];
        for &v in &xval[1..] {
            max = c_max(max, v);
        }
        if max < 1e-15 {
            scales[ib] = 0.0;
            l.fill(0);
            continue;
        }
        let scale = make_qp_quants(3 + 1, &xval, &mut l, &weight);
        let eff_max = scale * 3.0;
        if eff_max <= 0.0 {
            scales[ib] = 0.0;
            l.fill(0);
            continue;
        }
        let mut scale = IQ2_XXS_FIT.run(search, &xval, &weight, &waux, eff_max, scale, &mut l, &mut laux)?;
        if scale < 0.0 {
            scale = -scale;
            for s in &mut block_signs {
                *s = !*s & 127;
            }
        }
        for k in 0..4 {
            let g = on_grid(search, 2, &l, k)?;
            q2[2 * ib] |= (g as u32) << (8 * k);
            q2[2 * ib + 1] |= u32::from(block_signs[k]) << (7 * k);
        }
        if scale.is_nan() || scale < 0.0 {
            return Err(ASSERT_SCALE);
        }
        scales[ib] = scale;
        max_scale = c_max(max_scale, scale);
    }
    out.fill(0);
    if max_scale == 0.0 {
        return Ok(());
    }
    let d = max_scale / 31.0;
    out[0..2].copy_from_slice(&to_half(d).to_le_bytes());
    let id = 1.0 / d;
    for ib in 0..8 {
        let l = 0.max(15.min(nearest_int(0.5 * (id * scales[ib] - 1.0))));
        q2[2 * ib + 1] |= (l as u32) << 28;
    }
    for (i, w) in q2.iter().enumerate() {
        out[2 + 4 * i..6 + 4 * i].copy_from_slice(&w.to_le_bytes());
    }
    Ok(())
}

/// `quantize_row_iq2_xs_impl` (`xs`) or `quantize_row_iq2_s_impl` for one block: sub-blocks of
/// 16 in two groups of 8.
fn iq2_xs_or_s_block(
    x: &[f32],
    quant_weights: Option<&[f32]>,
    out: &mut [u8],
    xs: bool,
) -> core::result::Result<(), &'static str> {
    let search = if xs { iq2xs_search() } else { iq2s_search() };
    if xs && quant_weights.is_none() {
        return Err("GGML_ASSERT(quant_weights): IQ2_XS needs an importance matrix");
    }
    let mut scales = [0f32; 16];
    let mut weight = [0f32; 16];
    let mut waux = [0f32; 16];
    let mut xval = [0f32; 16];
    let mut l = [0i8; 16];
    let mut laux = [0i8; 16];
    let mut block_signs = [0u8; 2];
    let mut grid = [0u16; 32];
    let mut max_scale = 0f32;
    let mut sumx2 = 0f32;
    for &v in x {
        sumx2 += v * v;
    }
    let sigma2 = if xs { sumx2 / QK_K as f32 } else { 2.0 * sumx2 / QK_K as f32 };
    for ib in 0..16 {
        let xb = &x[16 * ib..16 * ib + 16];
        match quant_weights {
            Some(qw) => {
                let qw = &qw[16 * ib..16 * ib + 16];
                for i in 0..16 {
                    weight[i] = qw[i] * (sigma2 + xb[i] * xb[i]).sqrt();
                }
            }
            None => {
                for i in 0..16 {
                    weight[i] = 0.25 * sigma2 + xb[i] * xb[i];
                }
            }
        }
        for i in 0..16 {
            waux[i] = weight[i].sqrt();
        }
        group_signs(xb, &weight, xs, &mut xval, &mut block_signs);
        let mut max = xval[0];
        for &v in &xval[1..] {
            max = c_max(max, v);
        }
        l.fill(0);
        if max < if xs { 1e-15 } else { 1e-8 } {
            scales[ib] = 0.0;
            continue;
        }
        let mut scale = IQ2_XS_FIT.run(search, &xval, &weight, &waux, max, max / 5.0, &mut l, &mut laux)?;
        if scale < 0.0 {
            scale = -scale;
            for s in &mut block_signs {
                *s = if xs { !*s & 127 } else { !*s };
            }
        }
        for k in 0..2 {
            let g = on_grid(search, 2, &l, k)?;
            let i8 = 2 * ib + k;
            if xs {
                grid[i8] = g as u16 | (u16::from(block_signs[k]) << 9);
            } else {
                out[2 + i8] = (g & 255) as u8;
                out[66 + i8 / 4] |= ((g >> 8) as u8) << (2 * (i8 % 4));
                out[34 + i8] = block_signs[k];
            }
        }
        if scale.is_nan() || scale < 0.0 {
            return Err(ASSERT_SCALE);
        }
        scales[ib] = scale;
        max_scale = c_max(max_scale, scale);
    }
    if max_scale == 0.0 {
        if xs {
            out.fill(0);
        }
        return Ok(());
    }
    let d = max_scale / 31.0;
    out[0..2].copy_from_slice(&to_half(if xs { d } else { d * 0.9875 }).to_le_bytes());
    let id = 1.0 / d;
    let scales_at = if xs { 66 } else { 74 };
    for ib in 0..16 {
        let l = 0.max(15.min(nearest_int(0.5 * (id * scales[ib] - 1.0)))) as u8;
        if ib % 2 == 0 {
            out[scales_at + ib / 2] = l;
        } else {
            out[scales_at + ib / 2] |= l << 4;
        }
    }
    if xs {
        for (i, g) in grid.iter().enumerate() {
            out[2 + 2 * i..4 + 2 * i].copy_from_slice(&g.to_le_bytes());
        }
    }
    Ok(())
}

/// `quantize_iq2_xxs` of one row.
pub(super) fn quantize_iq2_xxs(row: &[f32], imatrix: Option<&[f32]>, out: &mut [u8], row_index: usize) -> Result<()> {
    by_blocks("iq2_xxs", QK_K, 66, true, row, imatrix, out, row_index, iq2_xxs_block)
}

/// `quantize_iq2_xs` of one row.
pub(super) fn quantize_iq2_xs(row: &[f32], imatrix: Option<&[f32]>, out: &mut [u8], row_index: usize) -> Result<()> {
    by_blocks("iq2_xs", QK_K, 74, true, row, imatrix, out, row_index, |x, w, y| {
        y.fill(0);
        iq2_xs_or_s_block(x, w, y, true)
    })
}

/// `quantize_iq2_s` of one row.
pub(super) fn quantize_iq2_s(row: &[f32], imatrix: Option<&[f32]>, out: &mut [u8], row_index: usize) -> Result<()> {
    by_blocks("iq2_s", QK_K, 82, false, row, imatrix, out, row_index, |x, w, y| {
        y.fill(0);
        iq2_xs_or_s_block(x, w, y, false)
    })
}

// ---------------------------------------------------------------------------------------------
// IQ1_S, IQ1_M

static IQ1S_SEARCH: Once<Search<8>> = Once::new();

fn iq1s_search() -> &'static Search<8> {
    IQ1S_SEARCH
        .get_or_init(|| Search::new(&grid_bytes(&IQ1S_GRID, u64::to_le_bytes), &[0xff, 0x00, 0x01], 2, IQ2_MAP_SIZE, 3))
}

/// `x_p` and `x_m` of the IQ1 quantizers: the levels -1, 0, 1 shifted by +-`IQ1S_DELTA`.
const IQ1_X_P: [f32; 3] = [-1.0 + 0.125, 0.125, 1.0 + 0.125];
const IQ1_X_M: [f32; 3] = [-1.0 - 0.125, -0.125, 1.0 - 0.125];

/// The positions of `xb` in ascending order as ggml's `qsort` with `iq1_sort_helper` leaves them:
/// glibc 2.36's qsort is a merge sort for arrays this small, so equal values (0.0 and -0.0
/// included) keep their order. A NaN makes ggml's comparison inconsistent; no output depends on
/// the order then (every weight of the super-block is NaN), so NaN sorts as zero here.
fn iq1_order(xb: &[f32], order: &mut [usize]) {
    for (j, o) in order.iter_mut().enumerate() {
        *o = j;
    }
    let key = |v: f32| if v == 0.0 || v.is_nan() { 0.0 } else { v };
    order.sort_by(|&a, &b| key(xb[a]).total_cmp(&key(xb[b])));
}

/// `iq1_find_best_neighbour2`: the neighbour of least weighted squared error with the shifted
/// levels `xg` at `scale`. When none is below FLT_MAX ggml's fallback loop reads `xval[i]` for
/// every grid index `i` (its index slip), that is the row's values from `at` on: lowbit runs it
/// where those values are inside the row and refuses where ggml reads past it.
#[allow(clippy::too_many_arguments)]
fn iq1_best_neighbour2(
    search: &Search<8>,
    list: usize,
    row: &[f32],
    at: usize,
    weight: &[f32],
    scale: f32,
    xg: &[f32; 3],
    l: &mut [i8],
) -> core::result::Result<usize, &'static str> {
    let xval = &row[at..at + 8];
    let count = usize::from(search.neighbours[list]);
    let mut best_score = f32::MAX;
    let mut grid_index = None;
    for &j in &search.neighbours[list + 1..list + 1 + count] {
        let pg = &search.points[usize::from(j)];
        let mut d2 = 0f32;
        for i in 0..8 {
            let q = xg[((pg[i] - 1) / 2) as usize];
            let w = weight[i];
            let diff = scale * q - xval[i];
            d2 += w * diff * diff;
        }
        if d2 < best_score {
            best_score = d2;
            grid_index = Some(usize::from(j));
        }
    }
    if grid_index.is_none() {
        let ngrid = search.points.len();
        if at + ngrid > row.len() {
            return Err("iq1_find_best_neighbour2's fallback reads past the row (undefined behaviour in ggml)");
        }
        for (i, pg) in search.points.iter().enumerate() {
            let mut d2 = 0f32;
            for j in 0..8 {
                let w = weight[j];
                let q = xg[((pg[j] - 1) / 2) as usize];
                let diff = scale * q - row[at + i];
                d2 += w * diff * diff;
            }
            if d2 < best_score {
                best_score = d2;
                grid_index = Some(i);
            }
        }
    }
    let g = grid_index
        .ok_or("GGML_ASSERT(grid_index >= 0) in iq1_find_best_neighbour2: no grid point at a distance below FLT_MAX")?;
    for i in 0..8 {
        l[i] = (search.points[g][i] - 1) / 2;
    }
    Ok(g)
}

/// `quantize_row_iq1_s_impl` for block `b` of `row` (an importance matrix is required).
fn iq1_s_block(
    row: &[f32],
    b: usize,
    quant_weights: Option<&[f32]>,
    out: &mut [u8],
) -> core::result::Result<(), &'static str> {
    const BS: usize = 32;
    let search = iq1s_search();
    let qw_all = quant_weights.ok_or("GGML_ASSERT(quant_weights): IQ1_S needs an importance matrix")?;
    let x = &row[b * QK_K..(b + 1) * QK_K];
    out.fill(0);
    let mut scales = [0f32; 8];
    let mut shifts = [0i8; 8];
    let mut weight = [0f32; BS];
    let mut l = [0i8; BS];
    let mut order = [0usize; BS];
    let mut sumx = [0f32; BS + 1];
    let mut sumw = [0f32; BS + 1];
    let mut index = [0usize; BS / 8];
    let mut max_scale = 0f32;
    let mut sumx2 = 0f32;
    for &v in x {
        sumx2 += v * v;
    }
    let sigma2 = 2.0 * sumx2 / QK_K as f32;
    for ib in 0..QK_K / BS {
        let xb = &x[BS * ib..BS * ib + BS];
        let qw = &qw_all[BS * ib..BS * ib + BS];
        for i in 0..BS {
            weight[i] = qw[i] * (sigma2 + xb[i] * xb[i]).sqrt();
        }
        let mut max = xb[0].abs();
        for &v in &xb[1..] {
            max = c_max(max, v.abs());
        }
        if max < 1e-12 {
            scales[ib] = 0.0;
            shifts[ib] = 1;
            continue;
        }
        iq1_order(xb, &mut order);
        for j in 0..BS {
            let i = order[j];
            sumx[j + 1] = sumx[j] + weight[i] * xb[i];
            sumw[j + 1] = sumw[j] + weight[i];
        }
        let mut best_score = -f32::MAX;
        let mut scale = max;
        let (mut besti1, mut besti2, mut best_shift) = (None, None, 0i8);
        for i1 in 0..=BS {
            for i2 in i1..=BS {
                for (xs, shift) in [(&IQ1_X_P, 1i8), (&IQ1_X_M, -1)] {
                    let sumqx =
                        (sumx[i1] - sumx[0]) * xs[0] + (sumx[i2] - sumx[i1]) * xs[1] + (sumx[BS] - sumx[i2]) * xs[2];
                    let sumq2 = (sumw[i1] - sumw[0]) * xs[0] * xs[0]
                        + (sumw[i2] - sumw[i1]) * xs[1] * xs[1]
                        + (sumw[BS] - sumw[i2]) * xs[2] * xs[2];
                    if sumq2 > 0.0 && sumqx * sumqx > best_score * sumq2 {
                        scale = sumqx / sumq2;
                        best_score = scale * sumqx;
                        besti1 = Some(i1);
                        besti2 = Some(i2);
                        best_shift = shift;
                    }
                }
            }
        }
        let (Some(i1), Some(i2)) = (besti1, besti2) else {
            scales[ib] = 0.0;
            shifts[ib] = 1;
            continue;
        };
        for j in 0..BS {
            l[order[j]] = if j < i1 {
                0
            } else if j < i2 {
                1
            } else {
                2
            };
        }
        if scale < 0.0 {
            for v in &mut l {
                *v = 2 - *v;
            }
            scale = -scale;
            best_shift = -best_shift;
        }
        let xx = if best_shift == 1 { &IQ1_X_P } else { &IQ1_X_M };
        let mut all_on_grid = true;
        for k in 0..BS / 8 {
            let mut u = 0u16;
            for j in 0..8 {
                u |= (i32::from(l[8 * k + j]) << (2 * j)) as u16;
            }
            let g = search.map[usize::from(u)];
            index[k] = if g < 0 {
                all_on_grid = false;
                let at = b * QK_K + BS * ib + 8 * k;
                iq1_best_neighbour2(
                    search,
                    (-g - 1) as usize,
                    row,
                    at,
                    &weight[8 * k..8 * k + 8],
                    scale,
                    xx,
                    &mut l[8 * k..8 * k + 8],
                )?
            } else {
                g as usize
            };
        }
        if !all_on_grid {
            let (mut sumqx, mut sumq2) = (0f32, 0f32);
            for k in 0..BS / 8 {
                let pg = &search.points[index[k]];
                for j in 0..8 {
                    let w = weight[8 * k + j];
                    let q = xx[((pg[j] - 1) / 2) as usize];
                    sumqx += w * q * xb[8 * k + j];
                    sumq2 += w * q * q;
                }
            }
            if sumqx > 0.0 && sumq2 > 0.0 {
                scale = sumqx / sumq2;
            }
        }
        let mut h = 0u16;
        for k in 0..BS / 8 {
            out[2 + 4 * ib + k] = (index[k] & 255) as u8;
            h |= ((index[k] >> 8) as u16) << (3 * k);
        }
        out[34 + 2 * ib..36 + 2 * ib].copy_from_slice(&h.to_le_bytes());
        if scale.is_nan() || scale < 0.0 {
            return Err(ASSERT_SCALE);
        }
        scales[ib] = scale;
        shifts[ib] = best_shift;
        max_scale = c_max(max_scale, scale);
    }
    if max_scale == 0.0 {
        return Ok(());
    }
    let d = max_scale / 15.0;
    out[0..2].copy_from_slice(&to_half(d * 1.125).to_le_bytes());
    let id = 1.0 / d;
    for ib in 0..QK_K / BS {
        let mut l = 0.max(7.min(nearest_int(0.5 * (id * scales[ib] - 1.0))));
        if shifts[ib] == -1 {
            l |= 8;
        }
        let at = 34 + 2 * ib;
        let h = u16::from_le_bytes([out[at], out[at + 1]]) | ((l as u16) << 12);
        out[at..at + 2].copy_from_slice(&h.to_le_bytes());
    }
    Ok(())
}

/// `quantize_row_iq1_m_impl` for block `b` of `row` (sub-blocks of 16, a shift sign per 8).
fn iq1_m_block(
    row: &[f32],
    b: usize,
    quant_weights: Option<&[f32]>,
    out: &mut [u8],
) -> core::result::Result<(), &'static str> {
    const BS: usize = 16;
    const MASKS: [u8; 4] = [0x00, 0x80, 0x08, 0x88];
    let search = iq1s_search();
    let x = &row[b * QK_K..(b + 1) * QK_K];
    out.fill(0);
    let mut scales = [0f32; 16];
    let mut shifts = [0usize; 16];
    let mut weight = [0f32; BS];
    let mut l = [0i8; BS];
    let mut order = [0usize; BS];
    let mut index = [0usize; BS / 8];
    let mut max_scale = 0f32;
    let mut sumx2 = 0f32;
    for &v in x {
        sumx2 += v * v;
    }
    let sigma2 = 2.0 * sumx2 / QK_K as f32;
    let weights_of = |ib: usize, weight: &mut [f32; BS]| {
        let xb = &x[BS * ib..BS * ib + BS];
        match quant_weights {
            Some(qw) => {
                let qw = &qw[BS * ib..BS * ib + BS];
                for i in 0..BS {
                    weight[i] = qw[i] * (sigma2 + xb[i] * xb[i]).sqrt();
                }
            }
            None => {
                for i in 0..BS {
                    weight[i] = xb[i] * xb[i];
                }
            }
        }
    };
    // the shifted levels of group k (0: the first 8, 1: the second) under shift pattern `s`
    let levels_of = |s: usize, k: usize| if (k == 0 && s < 2) || (k == 1 && s % 2 == 0) { &IQ1_X_P } else { &IQ1_X_M };
    for ib in 0..QK_K / BS {
        let xb = &x[BS * ib..BS * ib + BS];
        weights_of(ib, &mut weight);
        let mut max = xb[0].abs();
        for &v in &xb[1..] {
            max = c_max(max, v.abs());
        }
        if max < 1e-7 {
            scales[ib] = 0.0;
            shifts[ib] = 0;
            continue;
        }
        iq1_order(xb, &mut order);
        let mut best_score = -f32::MAX;
        let mut scale = max;
        let mut best = None;
        for i1 in 0..=BS {
            for i2 in i1..=BS {
                let mut sumqx = [0f32; 4];
                let mut sumq2 = [0f32; 4];
                for (j, &i) in order.iter().enumerate() {
                    let level = if j < i1 {
                        0
                    } else if j < i2 {
                        1
                    } else {
                        2
                    };
                    let (p, m) = (IQ1_X_P[level], IQ1_X_M[level]);
                    let w = weight[i];
                    // patterns 0..3: (first half, second half) shifted (+,+), (+,-), (-,+), (-,-)
                    let (a, bb, c, d) = if i < BS / 2 { (p, p, m, m) } else { (p, m, p, m) };
                    sumqx[0] += w * a * xb[i];
                    sumqx[1] += w * bb * xb[i];
                    sumqx[2] += w * c * xb[i];
                    sumqx[3] += w * d * xb[i];
                    sumq2[0] += w * a * a;
                    sumq2[1] += w * bb * bb;
                    sumq2[2] += w * c * c;
                    sumq2[3] += w * d * d;
                }
                for k in 0..4 {
                    if sumq2[k] > 0.0 && sumqx[k] * sumqx[k] > best_score * sumq2[k] {
                        scale = sumqx[k] / sumq2[k];
                        best_score = scale * sumqx[k];
                        best = Some((i1, i2, k));
                    }
                }
            }
        }
        let Some((i1, i2, mut best_k)) = best else {
            scales[ib] = 0.0;
            shifts[ib] = 0;
            continue;
        };
        for j in 0..BS {
            l[order[j]] = if j < i1 {
                0
            } else if j < i2 {
                1
            } else {
                2
            };
        }
        if scale < 0.0 {
            for v in &mut l {
                *v = 2 - *v;
            }
            scale = -scale;
            best_k = 3 - best_k;
        }
        let mut all_on_grid = true;
        for k in 0..BS / 8 {
            let xx = levels_of(best_k, k);
            let mut u = 0u16;
            for j in 0..8 {
                u |= (i32::from(l[8 * k + j]) << (2 * j)) as u16;
            }
            let g = search.map[usize::from(u)];
            index[k] = if g < 0 {
                all_on_grid = false;
                let at = b * QK_K + BS * ib + 8 * k;
                iq1_best_neighbour2(
                    search,
                    (-g - 1) as usize,
                    row,
                    at,
                    &weight[8 * k..8 * k + 8],
                    scale,
                    xx,
                    &mut l[8 * k..8 * k + 8],
                )?
            } else {
                g as usize
            };
        }
        if !all_on_grid {
            let (mut sumqx, mut sumq2) = (0f32, 0f32);
            for k in 0..BS / 8 {
                let xx = levels_of(best_k, k);
                let pg = &search.points[index[k]];
                for j in 0..8 {
                    let w = weight[8 * k + j];
                    let q = xx[((pg[j] - 1) / 2) as usize];
                    sumqx += w * q * xb[8 * k + j];
                    sumq2 += w * q * q;
                }
            }
            if sumqx > 0.0 && sumq2 > 0.0 {
                scale = sumqx / sumq2;
            }
        }
        out[2 * ib] = (index[0] & 255) as u8;
        out[2 * ib + 1] = (index[1] & 255) as u8;
        out[32 + ib] = ((index[0] >> 8) | ((index[1] >> 8) << 4)) as u8;
        if scale.is_nan() || scale < 0.0 {
            return Err(ASSERT_SCALE);
        }
        scales[ib] = scale;
        shifts[ib] = best_k;
        max_scale = c_max(max_scale, scale);
    }
    if max_scale == 0.0 {
        return Ok(());
    }
    let mut sc = [0u16; 4];
    let mut d = max_scale / 15.0;
    let id = 1.0 / d;
    let (mut sumqx, mut sumq2) = (0f32, 0f32);
    for ib in 0..QK_K / BS {
        let l = 0.max(7.min(nearest_int(0.5 * (id * scales[ib] - 1.0))));
        sc[ib / 4] |= (l as u16) << (3 * (ib % 4));
        out[32 + ib] |= MASKS[shifts[ib]];
        let xb = &x[BS * ib..BS * ib + BS];
        weights_of(ib, &mut weight);
        for k in 0..BS / 8 {
            let xx = levels_of(shifts[ib], k);
            let g = usize::from(out[2 * ib + k]) + ((usize::from(out[32 + ib]) << (8 - 4 * k)) & 0x700);
            let pg = &search.points[g];
            for j in 0..8 {
                let w = weight[8 * k + j];
                let q = xx[((pg[j] - 1) / 2) as usize] * (2 * l + 1) as f32;
                sumqx += w * q * xb[8 * k + j];
                sumq2 += w * q * q;
            }
        }
    }
    if sumq2 > 0.0 {
        d = sumqx / sumq2;
    }
    let s = to_half(d * 1.1125);
    sc[0] |= (s & 0x000f) << 12;
    sc[1] |= (s & 0x00f0) << 8;
    sc[2] |= (s & 0x0f00) << 4;
    sc[3] |= s & 0xf000;
    for (i, v) in sc.iter().enumerate() {
        out[48 + 2 * i..50 + 2 * i].copy_from_slice(&v.to_le_bytes());
    }
    Ok(())
}

/// An IQ1 block quantizer: the row, the block's number, its importance and its bytes.
type Iq1Block = fn(&[f32], usize, Option<&[f32]>, &mut [u8]) -> core::result::Result<(), &'static str>;

/// Runs an IQ1 block quantizer (which may read the row beyond its block) over the row's blocks.
#[allow(clippy::too_many_arguments)]
fn iq1_row(
    name: &str,
    block_bytes: usize,
    needs_imatrix: bool,
    row: &[f32],
    imatrix: Option<&[f32]>,
    out: &mut [u8],
    row_index: usize,
    quantize_block: Iq1Block,
) -> Result<()> {
    check_row(name, QK_K, row, imatrix, needs_imatrix, out.len(), block_bytes, row_index)?;
    let mut buffer = vec![0u8; out.len()];
    for (b, y) in buffer.chunks_exact_mut(block_bytes).enumerate() {
        let w = imatrix.map(|w| &w[b * QK_K..(b + 1) * QK_K]);
        quantize_block(row, b, w, y).map_err(|why| aborts(name, row_index, b, QK_K, why))?;
    }
    out.copy_from_slice(&buffer);
    Ok(())
}

/// `quantize_iq1_s` of one row.
pub(super) fn quantize_iq1_s(row: &[f32], imatrix: Option<&[f32]>, out: &mut [u8], row_index: usize) -> Result<()> {
    iq1_row("iq1_s", 50, true, row, imatrix, out, row_index, iq1_s_block)
}

/// `quantize_iq1_m` of one row.
pub(super) fn quantize_iq1_m(row: &[f32], imatrix: Option<&[f32]>, out: &mut [u8], row_index: usize) -> Result<()> {
    iq1_row("iq1_m", 56, false, row, imatrix, out, row_index, iq1_m_block)
}

#[cfg(test)]
mod tests {
    use super::super::codec;
    use super::super::iquants::tests::fixture;

    /// splitmix64, as scripts/gen_ggml_iquant_fixtures.py runs it.
    struct SplitMix(u64);

    impl SplitMix {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        }
    }

    fn pow2(k: i32) -> f32 {
        if k >= -126 {
            f32::from_bits(((k + 127) as u32) << 23)
        } else {
            f32::from_bits(1u32 << (k + 149))
        }
    }

    /// The script's `gen_row`.
    fn gen_row(kind: &str, seed: u64, n: usize) -> Vec<f32> {
        let mut r = SplitMix(seed);
        let mut out = vec![0f32; n];
        let mut scale = 1f32;
        for i in 0..n {
            if kind == "wide" && i % 16 == 0 {
                scale = pow2((r.next() % 240) as i32 - 149);
            } else if kind == "narrow" && i % 16 == 0 {
                scale = pow2((r.next() % 40) as i32 - 40);
            } else if i == 0 {
                scale = pow2(-20);
            }
            out[i] = if kind == "ints" {
                ((r.next() % 17) as i32 - 8) as f32
            } else if kind == "sparse" && r.next() % 4 != 0 {
                0.0
            } else {
                let s: i64 = (0..4).map(|_| (r.next() >> 44) as i64 - (1 << 19)).sum();
                s as f32 * scale
            };
        }
        out
    }

    /// The script's `gen_imatrix`.
    fn gen_imatrix(seed: u64, n: usize, zeros: bool) -> Vec<f32> {
        let mut r = SplitMix(seed ^ 0x5_DEEC_E66D);
        (0..n)
            .map(|i| {
                let v = ((r.next() >> 41) + 1) as f32 * pow2(-20);
                if zeros && i % 7 == 3 {
                    0.0
                } else {
                    v
                }
            })
            .collect()
    }

    /// The script's `edits_for`: (index, float32 bits).
    fn edits_for(kind: &str, n: usize, seed: u64) -> Vec<(usize, u32)> {
        let mut r = SplitMix(seed.wrapping_mul(7).wrapping_add(1));
        let sign = |i: usize| if i % 2 == 1 { 0x8000_0000u32 } else { 0 };
        match kind {
            "zeros" => (0..n).map(|i| (i, 0)).collect(),
            "negzero" => (0..n).map(|i| (i, 0x8000_0000)).collect(),
            "zero_block" => (0..32)
                .map(|i| (i, if i % 3 != 0 { 0x8000_0000 } else { 0 }))
                .chain((256..288).map(|i| (i, 0)))
                .collect(),
            "subnormal" => (0..n).map(|i| (i, ((r.next() % 0x7F_FFFF) as u32 + 1) | sign(i))).collect(),
            "tiny" => (0..n).map(|i| (i, (0x2600_0000 + (r.next() % 0x80_0000) as u32) | sign(i))).collect(),
            "huge" => (0..4)
                .map(|_| {
                    let i = (r.next() % n as u64) as usize;
                    (i, 0x7F00_0000 + (r.next() % 0x7F_FFFF) as u32)
                })
                .collect(),
            "max" => (0..n).map(|i| (i, if i % 2 == 1 { 0x7F7F_FFFF } else { 0xFF7F_FFFF })).collect(),
            "big" => (0..8)
                .map(|_| {
                    let i = (r.next() % n as u64) as usize;
                    (i, 0x4780_0000 + (r.next() % 0x100_0000) as u32)
                })
                .collect(),
            "nan" => {
                let a = (r.next() % n as u64) as usize;
                let b = (r.next() % n as u64) as usize;
                vec![(a, 0x7FC0_0000), (b, 0xFFA5_A5A5)]
            }
            "inf" => vec![((r.next() % n as u64) as usize, 0x7F80_0000)],
            "neginf" => vec![((r.next() % n as u64) as usize, 0xFF80_0000)],
            "one_value" => (0..n).map(|i| (i, 0x3F80_0000)).collect(),
            "ties" => (0..n).map(|i| (i, (((r.next() % 64) as i32 - 32) as f32 * 0.5).to_bits())).collect(),
            _ => Vec::new(),
        }
    }

    fn unhex(s: &str) -> Vec<u8> {
        (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
    }

    /// Every case of `quantize.txt` (ggml's `ggml_quantize_chunk` of generated rows, with and
    /// without an importance matrix) for the types whose quantizer lowbit has: the same bytes, or
    /// an error where ggml's C aborts.
    #[test]
    fn quantize_matches_ggml() {
        let text = String::from_utf8(fixture("quantize.txt")).unwrap();
        let mut counts: std::collections::BTreeMap<(String, bool), (usize, usize, usize)> = Default::default();
        let mut bad = 0;
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            let f: Vec<&str> = line.split(' ').collect();
            let (name, kind, edit) = (f[0], f[1], f[2]);
            let (rows, n, imat, seed): (usize, usize, u32, u64) =
                (f[3].parse().unwrap(), f[4].parse().unwrap(), f[5].parse().unwrap(), f[6].parse().unwrap());
            let c = codec(name).unwrap();
            let Some(quantize) = c.quantize else { continue };
            let mut x = gen_row(kind, seed, rows * n);
            for (i, bits) in edits_for(edit, rows * n, seed) {
                x[i] = f32::from_bits(bits);
            }
            let w = (imat > 0).then(|| gen_imatrix(seed, n, imat == 2));
            let row_bytes = n / c.block_elements * c.block_bytes;
            let mut got = vec![0u8; rows * row_bytes];
            let mut refused = None;
            for r in 0..rows {
                if let Err(e) =
                    quantize(&x[r * n..(r + 1) * n], w.as_deref(), &mut got[r * row_bytes..(r + 1) * row_bytes], r)
                {
                    refused = Some(e);
                    break;
                }
            }
            let entry = counts.entry((name.to_string(), imat > 0)).or_default();
            if f[7] == "abort" {
                if refused.is_none() {
                    eprintln!("{line:.60}: ggml aborts, lowbit quantized");
                    bad += 1;
                }
                entry.1 += 1;
            } else {
                let want = unhex(f[7]);
                if let Some(e) = refused {
                    eprintln!("{line:.60}: lowbit refused ({e}), ggml quantized");
                    bad += 1;
                } else if got != want {
                    let first = got.iter().zip(&want).position(|(a, b)| a != b).unwrap_or(got.len().min(want.len()));
                    eprintln!(
                        "{line:.60}: byte {first} (block {}) differs: {:02x?} vs ggml {:02x?}",
                        first / c.block_bytes,
                        &got[first.min(got.len())..(first + 8).min(got.len())],
                        &want[first.min(want.len())..(first + 8).min(want.len())]
                    );
                    bad += 1;
                }
                entry.0 += 1;
                entry.2 += want.len();
            }
        }
        for ((name, imat), (cases, aborts, bytes)) in &counts {
            eprintln!("{name} imatrix={imat}: {cases} cases ({bytes} bytes) equal, {aborts} aborts refused");
        }
        assert_eq!(bad, 0, "{bad} cases differ from ggml");
        assert!(counts.values().map(|c| c.2).sum::<usize>() > 0, "nothing compared");
    }

    /// Refusals name the row (and the block and ggml's assertion where the C aborts) and leave the
    /// output as it was, even when earlier blocks quantized.
    #[test]
    fn refusals_name_the_row_and_write_nothing() {
        let q = |name: &str| codec(name).unwrap().quantize.unwrap();
        let mut out = vec![0xAAu8; 2 * 136];
        let e = q("iq4_xs")(&[1.0; 300], None, &mut out, 7).unwrap_err().to_string();
        assert!(e.contains("row 7") && e.contains("not a multiple of the 256-element block"), "{e}");
        let mut out = vec![0xAAu8; 66];
        let e = q("iq2_xxs")(&[1.0; 256], None, &mut out, 3).unwrap_err().to_string();
        assert!(e.contains("row 3") && e.contains("importance matrix"), "{e}");
        let mut row = gen_row("normal", 5, 512);
        row[300] = f32::NAN;
        let mut out = vec![0xAAu8; 2 * 110];
        let e = q("iq3_s")(&row, None, &mut out, 2).unwrap_err().to_string();
        assert!(e.contains("row 2, block 1 (elements 256..512)") && e.contains("GGML_ASSERT"), "{e}");
        assert!(out.iter().all(|&b| b == 0xAA), "a refused row wrote bytes");
    }
}
