//! ggml's I-quant quantizers (`quantize_iq*` in `ggml-quants.c`, as `ggml_quantize_chunk` calls
//! them), operation by operation in float32 in ggml's order: the x86-64 release build of
//! ggml-base evaluates each C expression in float32 without fused multiply-adds, so each Rust
//! expression below keeps the C's operands, parentheses and order. ggml's `MAX`/`MIN` macros
//! (`a > b ? a : b`) and its `nearest_int` (the 1.5 * 2^23 trick, whose assert is compiled out)
//! are reproduced as written, NaN behaviour included. Where the C stops the process
//! (`GGML_ASSERT`, `GGML_ABORT`) the row is refused with an error naming the row, the block and
//! the assertion.

use super::iq_grids::{IQ3S_GRID, IQ3XXS_GRID, KVALUES_IQ4NL};
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
        let mut dist2: Vec<(i32, i32)> = Vec::with_capacity(points.len());
        for i in 0..map_size {
            if map[i] >= 0 {
                continue;
            }
            let mut pos = [0i32; N];
            for k in 0..N {
                pos[k] = 2 * ((i >> (bits as usize * k)) & mask) as i32 + 1;
            }
            dist2.clear();
            for (j, pg) in points.iter().enumerate() {
                let mut d2 = 0i32;
                for k in 0..N {
                    let t = i32::from(pg[k]) - pos[k];
                    d2 += t * t;
                }
                dist2.push((d2, j as i32));
            }
            dist2.sort_unstable();
            map[i] = -(neighbours.len() as i32 + 1);
            let start = neighbours.len();
            neighbours.push(0u16);
            let (mut d2, mut nhave, mut n) = (dist2[0].0, 1, 0u16);
            for &(dj, j) in &dist2 {
                if dj > d2 {
                    if nhave == nwant {
                        break;
                    }
                    d2 = dj;
                    nhave += 1;
                }
                neighbours.push(j as u16);
                n += 1;
            }
            neighbours[start] = n;
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

const ASSERT_NEIGHBOUR: &str = "GGML_ASSERT(grid_index >= 0) in iq3_find_best_neighbour: every neighbour's \
                                weighted distance is NaN or above FLT_MAX";
const ASSERT_SCALE: &str = "GGML_ASSERT(scale >= 0): the sub-block's scale is NaN";
const ABORT_OFF_GRID: &str = "GGML_ABORT: a point not on the grid";

/// The 3-bit levels of 4 values at inverse scale `id`: `nearest_int(0.5f*(id*x-1))` clamped to
/// 0..7, and their map key.
#[inline(always)]
fn levels4(id: f32, xval: &[f32], l: &mut [i8]) -> usize {
    let mut u = 0usize;
    for i in 0..4 {
        let q = nearest_int(0.5 * (id * xval[i] - 1.0));
        let q = 0.max(7.min(q));
        l[i] = q as i8;
        u |= (q as usize) << (3 * i);
    }
    u
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
    let mut is_on_grid = [false; 8];
    let mut is_on_grid_aux = [false; 8];
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
        let scale = search_scale(
            search,
            &xval,
            &weight,
            &waux,
            max,
            -15..=15,
            true,
            &mut l,
            &mut laux,
            &mut is_on_grid,
            &mut is_on_grid_aux,
        )?;
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
        if !(scale >= 0.0) {
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

/// The scale search shared by IQ3_XXS and IQ3_S (32 values in 8 groups of 4): try inverse scales
/// `(15 + is*0.2f)/max`, snap each group to the grid, keep the best by `sumqx^2/sumq2`, then put
/// groups that were off the grid on it at the chosen scale and refit. `on_grid_start` is the
/// groups' initial flag (true in IQ3_XXS, false in IQ3_S), and IQ3_XXS re-snaps only groups off
/// the grid where IQ3_S re-snaps all.
#[allow(clippy::too_many_arguments)]
fn search_scale(
    search: &Search<4>,
    xval: &[f32; 32],
    weight: &[f32; 32],
    waux: &[f32; 32],
    max: f32,
    tries: core::ops::RangeInclusive<i32>,
    xxs: bool,
    l: &mut [i8; 32],
    laux: &mut [i8; 32],
    is_on_grid: &mut [bool; 8],
    is_on_grid_aux: &mut [bool; 8],
) -> core::result::Result<f32, &'static str> {
    let mut best = 0f32;
    let mut scale = max / 15.0;
    *is_on_grid = [xxs; 8];
    for is in tries {
        let id = (15.0 + is as f32 * 0.2) / max;
        let this_scale = 1.0 / id;
        for k in 0..8 {
            let u = levels4(id, &xval[4 * k..4 * k + 4], &mut laux[4 * k..4 * k + 4]);
            is_on_grid_aux[k] = true;
            let g = search.map[u];
            if g < 0 {
                is_on_grid_aux[k] = false;
                search
                    .best_neighbour(
                        (-g - 1) as usize,
                        &xval[4 * k..4 * k + 4],
                        &waux[4 * k..4 * k + 4],
                        this_scale,
                        &mut laux[4 * k..4 * k + 4],
                    )
                    .ok_or(ASSERT_NEIGHBOUR)?;
            }
        }
        let (mut sumqx, mut sumq2) = (0f32, 0f32);
        for i in 0..32 {
            let w = weight[i];
            let q = (2 * i32::from(laux[i]) + 1) as f32;
            sumqx += w * xval[i] * q;
            sumq2 += w * q * q;
        }
        if sumq2 > 0.0 && sumqx * sumqx > best * sumq2 {
            scale = sumqx / sumq2;
            best = scale * sumqx;
            *l = *laux;
            *is_on_grid = *is_on_grid_aux;
        }
    }
    let n_not_ongrid = is_on_grid.iter().filter(|&&g| !g).count();
    if n_not_ongrid > 0 && scale > 0.0 {
        let id = 1.0 / scale;
        for k in 0..8 {
            if xxs && is_on_grid[k] {
                continue;
            }
            let mut levels = [0i8; 4];
            let u = levels4(id, &xval[4 * k..4 * k + 4], &mut levels);
            let mut g = search.map[u];
            if g < 0 {
                g = search
                    .best_neighbour(
                        (-g - 1) as usize,
                        &xval[4 * k..4 * k + 4],
                        &waux[4 * k..4 * k + 4],
                        scale,
                        &mut l[4 * k..4 * k + 4],
                    )
                    .ok_or(ASSERT_NEIGHBOUR)? as i32;
            }
            let pg = &search.points[g as usize];
            for i in 0..4 {
                l[4 * k + i] = (pg[i] - 1) / 2;
            }
        }
        let (mut sumqx, mut sumq2) = (0f32, 0f32);
        for i in 0..32 {
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
    let mut is_on_grid = [false; 8];
    let mut is_on_grid_aux = [false; 8];
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
        let mut scale = search_scale(
            search,
            &xval,
            &weight,
            &waux,
            max,
            -9..=9,
            false,
            &mut l,
            &mut laux,
            &mut is_on_grid,
            &mut is_on_grid_aux,
        )?;
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
        if !(scale >= 0.0) {
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
}
