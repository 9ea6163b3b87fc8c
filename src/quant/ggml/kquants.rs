//! ggml's K-quants: super-blocks of 256 elements in sub-blocks of 16 or 32 with quantized
//! scales (Q2_K, Q3_K, Q4_K, Q5_K, Q6_K), and Q8_K (a float32 `d`, 256 int8 and their sums per
//! 16), with ggml's search for the scales (`make_qx_quants`, `make_q3_quants`,
//! `make_qkx2_quants`, `make_qkx3_quants`, `make_qp_quants`) in its float32 order.

// The searches index several arrays by one position, as ggml's loops do.
#![allow(clippy::needless_range_loop)]

use super::arith::{abs, add, div, max, mul, nearest_int, neg, sqrt, sub};
use super::{finite, half_at, put_half, Codec, Exact, Finite, Ops};
use crate::error::Result;

const SOURCE: &str = "ggml 0.10.1 (ggml-py 0.10.1) ggml-quants.c: dequantize_row_*, quantize_row_*_ref, quantize_* \
                      with an importance matrix; scripts/crosscheck_ggml.py, tests/fixtures/ggml";
const Q8_K_SOURCE: &str = "ggml 0.10.1 (ggml-py 0.10.1) ggml-quants.c: dequantize_row_q8_K, quantize_row_q8_K_ref \
                           (no importance matrix: ggml_quantize_chunk has no Q8_K; one given is not used); \
                           scripts/crosscheck_ggml.py, tests/fixtures/ggml";

/// ggml's `QK_K`.
const QK_K: usize = 256;
/// ggml's `GROUP_MAX_EPS`.
const GROUP_MAX_EPS: f32 = 1e-15;

pub(super) const CODECS: &[Codec] = &[
    Codec {
        name: "q2_k",
        ggml_type: 10,
        block_elements: QK_K,
        block_bytes: 84,
        decode: decode_q2_k,
        quantize: Some(quantize_q2_k),
        needs_imatrix: false,
        source: SOURCE,
    },
    Codec {
        name: "q3_k",
        ggml_type: 11,
        block_elements: QK_K,
        block_bytes: 110,
        decode: decode_q3_k,
        quantize: Some(quantize_q3_k),
        needs_imatrix: false,
        source: SOURCE,
    },
    Codec {
        name: "q4_k",
        ggml_type: 12,
        block_elements: QK_K,
        block_bytes: 144,
        decode: decode_q4_k,
        quantize: Some(quantize_q4_k),
        needs_imatrix: false,
        source: SOURCE,
    },
    Codec {
        name: "q5_k",
        ggml_type: 13,
        block_elements: QK_K,
        block_bytes: 176,
        decode: decode_q5_k,
        quantize: Some(quantize_q5_k),
        needs_imatrix: false,
        source: SOURCE,
    },
    Codec {
        name: "q6_k",
        ggml_type: 14,
        block_elements: QK_K,
        block_bytes: 210,
        decode: decode_q6_k,
        quantize: Some(quantize_q6_k),
        needs_imatrix: false,
        source: SOURCE,
    },
    Codec {
        name: "q8_k",
        ggml_type: 15,
        block_elements: QK_K,
        block_bytes: 292,
        decode: decode_q8_k,
        quantize: Some(quantize_q8_k),
        needs_imatrix: false,
        source: Q8_K_SOURCE,
    },
];

// ---------------------------------------------------------------- decoding

/// Q2_K: `scales[16]` (scale nibble low, min nibble high), `qs[64]` (2-bit codes: byte l of
/// each 32 holds elements l, l + 32, l + 64, l + 96 of its 128), `d`, `dmin`;
/// `(d * sc) * q - dmin * m`.
fn decode_q2_k_with<O: Ops>(block: &[u8], out: &mut [f32]) {
    let (d, min) = (half_at(block, 80), half_at(block, 82));
    let mut y = 0;
    let mut is = 0;
    for half in 0..2 {
        let q = &block[16 + 32 * half..16 + 32 * half + 32];
        for shift in [0, 2, 4, 6] {
            for part in 0..2 {
                let sc = block[is];
                is += 1;
                let (dl, ml) = (O::mul(d, f32::from(sc & 0xF)), O::mul(min, f32::from(sc >> 4)));
                for l in 0..16 {
                    out[y] = O::sub(O::mul(dl, f32::from((q[l + 16 * part] >> shift) & 3)), ml);
                    y += 1;
                }
            }
        }
    }
}

fn decode_q2_k(block: &[u8], out: &mut [f32]) {
    if finite(block, &[80, 82]) {
        decode_q2_k_with::<Finite>(block, out)
    } else {
        decode_q2_k_with::<Exact>(block, out)
    }
}

/// Q3_K's sixteen 6-bit scales from their 12 bytes, as `dequantize_row_q3_K` unpacks them.
fn q3_scales(packed: &[u8]) -> [i8; 16] {
    let word = |k: usize| u32::from_le_bytes([packed[4 * k], packed[4 * k + 1], packed[4 * k + 2], packed[4 * k + 3]]);
    let (a0, a1, tmp) = (word(0), word(1), word(2));
    let (kmask1, kmask2) = (0x0303_0303u32, 0x0f0f_0f0fu32);
    let aux = [
        (a0 & kmask2) | ((tmp & kmask1) << 4),
        (a1 & kmask2) | (((tmp >> 2) & kmask1) << 4),
        ((a0 >> 4) & kmask2) | (((tmp >> 4) & kmask1) << 4),
        ((a1 >> 4) & kmask2) | (((tmp >> 6) & kmask1) << 4),
    ];
    core::array::from_fn(|i| aux[i / 4].to_le_bytes()[i % 4] as i8)
}

/// Q3_K: `hmask[32]` (the high bit, clear: less 4), `qs[64]`, `scales[12]`, `d`;
/// `(d * (sc - 32)) * q`.
fn decode_q3_k_with<O: Ops>(block: &[u8], out: &mut [f32]) {
    let d_all = half_at(block, 108);
    let scales = q3_scales(&block[96..108]);
    let hm = &block[0..32];
    let mut y = 0;
    let mut is = 0;
    let mut m = 1u8;
    for half in 0..2 {
        let q = &block[32 + 32 * half..32 + 32 * half + 32];
        for shift in [0, 2, 4, 6] {
            for part in 0..2 {
                let dl = O::mul(d_all, f32::from(i16::from(scales[is]) - 32));
                is += 1;
                for l in 0..16 {
                    let k = l + 16 * part;
                    let v = i32::from((q[k] >> shift) & 3) - if hm[k] & m != 0 { 0 } else { 4 };
                    out[y] = O::mul(dl, v as f32);
                    y += 1;
                }
            }
            m <<= 1;
        }
    }
}

fn decode_q3_k(block: &[u8], out: &mut [f32]) {
    if finite(block, &[108]) {
        decode_q3_k_with::<Finite>(block, out)
    } else {
        decode_q3_k_with::<Exact>(block, out)
    }
}

/// ggml's `get_scale_min_k4`: the 6-bit scale and min of sub-block `j` from 12 bytes.
#[inline(always)]
fn scale_min_k4(j: usize, q: &[u8]) -> (u8, u8) {
    if j < 4 {
        (q[j] & 63, q[j + 4] & 63)
    } else {
        ((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4), (q[j + 4] >> 4) | ((q[j] >> 6) << 4))
    }
}

/// Q4_K: `d`, `dmin`, `scales[12]`, `qs[128]` (byte l of each 32: element l low, l + 32 high);
/// `(d * sc) * q - dmin * m`.
fn decode_q4_k_with<O: Ops>(block: &[u8], out: &mut [f32]) {
    let (d, min) = (half_at(block, 0), half_at(block, 2));
    let scales = &block[4..16];
    for (n, y) in out.chunks_exact_mut(64).enumerate() {
        let q = &block[16 + 32 * n..48 + 32 * n];
        let (sc1, m1) = scale_min_k4(2 * n, scales);
        let (sc2, m2) = scale_min_k4(2 * n + 1, scales);
        let (d1, m1) = (O::mul(d, f32::from(sc1)), O::mul(min, f32::from(m1)));
        let (d2, m2) = (O::mul(d, f32::from(sc2)), O::mul(min, f32::from(m2)));
        for l in 0..32 {
            y[l] = O::sub(O::mul(d1, f32::from(q[l] & 0xF)), m1);
            y[l + 32] = O::sub(O::mul(d2, f32::from(q[l] >> 4)), m2);
        }
    }
}

fn decode_q4_k(block: &[u8], out: &mut [f32]) {
    if finite(block, &[0, 2]) {
        decode_q4_k_with::<Finite>(block, out)
    } else {
        decode_q4_k_with::<Exact>(block, out)
    }
}

/// Q5_K: `d`, `dmin`, `scales[12]`, `qh[32]` (bit 2n and 2n + 1 of byte l: the fifth bit of
/// elements l and l + 32 of the n-th 64), `qs[128]`.
fn decode_q5_k_with<O: Ops>(block: &[u8], out: &mut [f32]) {
    let (d, min) = (half_at(block, 0), half_at(block, 2));
    let scales = &block[4..16];
    let qh = &block[16..48];
    for (n, y) in out.chunks_exact_mut(64).enumerate() {
        let ql = &block[48 + 32 * n..80 + 32 * n];
        let (sc1, m1) = scale_min_k4(2 * n, scales);
        let (sc2, m2) = scale_min_k4(2 * n + 1, scales);
        let (d1, m1) = (O::mul(d, f32::from(sc1)), O::mul(min, f32::from(m1)));
        let (d2, m2) = (O::mul(d, f32::from(sc2)), O::mul(min, f32::from(m2)));
        let (u1, u2) = (1u8 << (2 * n), 2u8 << (2 * n));
        for l in 0..32 {
            let h1 = if qh[l] & u1 != 0 { 16 } else { 0 };
            let h2 = if qh[l] & u2 != 0 { 16 } else { 0 };
            y[l] = O::sub(O::mul(d1, f32::from((ql[l] & 0xF) + h1)), m1);
            y[l + 32] = O::sub(O::mul(d2, f32::from((ql[l] >> 4) + h2)), m2);
        }
    }
}

fn decode_q5_k(block: &[u8], out: &mut [f32]) {
    if finite(block, &[0, 2]) {
        decode_q5_k_with::<Finite>(block, out)
    } else {
        decode_q5_k_with::<Exact>(block, out)
    }
}

/// Q6_K: `ql[128]`, `qh[64]`, `scales[16]` (int8), `d`; `(d * sc) * (q - 32)`.
fn decode_q6_k_with<O: Ops>(block: &[u8], out: &mut [f32]) {
    let d = half_at(block, 208);
    for (n, y) in out.chunks_exact_mut(128).enumerate() {
        let ql = &block[64 * n..64 * n + 64];
        let qh = &block[128 + 32 * n..160 + 32 * n];
        let sc = &block[192 + 8 * n..200 + 8 * n];
        for l in 0..32 {
            let is = l / 16;
            let q1 = i32::from((ql[l] & 0xF) | ((qh[l] & 3) << 4)) - 32;
            let q2 = i32::from((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
            let q3 = i32::from((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
            let q4 = i32::from((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
            let s = |k: usize| f32::from(sc[is + k] as i8);
            y[l] = O::mul(O::mul(d, s(0)), q1 as f32);
            y[l + 32] = O::mul(O::mul(d, s(2)), q2 as f32);
            y[l + 64] = O::mul(O::mul(d, s(4)), q3 as f32);
            y[l + 96] = O::mul(O::mul(d, s(6)), q4 as f32);
        }
    }
}

fn decode_q6_k(block: &[u8], out: &mut [f32]) {
    if finite(block, &[208]) {
        decode_q6_k_with::<Finite>(block, out)
    } else {
        decode_q6_k_with::<Exact>(block, out)
    }
}

/// Q8_K: a float32 `d` (its bits as stored), `qs[256]`, `bsums[16]` (not read); `d * q`.
fn decode_q8_k_with<O: Ops>(block: &[u8], out: &mut [f32]) {
    let d = f32::from_le_bytes([block[0], block[1], block[2], block[3]]);
    for (o, &q) in out.iter_mut().zip(&block[4..260]) {
        *o = O::mul(d, f32::from(q as i8));
    }
}

fn decode_q8_k(block: &[u8], out: &mut [f32]) {
    if f32::from_le_bytes([block[0], block[1], block[2], block[3]]).is_finite() {
        decode_q8_k_with::<Finite>(block, out)
    } else {
        decode_q8_k_with::<Exact>(block, out)
    }
}

// ---------------------------------------------------------------- ggml's scale searches

/// `make_qx_quants`: codes `L` (of `-nmax..nmax-1`, stored plus `nmax`) and the scale.
pub(super) fn make_qx_quants(nmax: i32, x: &[f32], big_l: &mut [i8], rmse_type: i32, qw: Option<&[f32]>) -> f32 {
    let n = x.len();
    let (mut mx, mut amax) = (0.0f32, 0.0f32);
    for &v in x {
        let ax = abs(v);
        if ax > amax {
            amax = ax;
            mx = v;
        }
    }
    if amax < GROUP_MAX_EPS {
        big_l[..n].fill(0);
        return 0.0;
    }
    let mut iscale = div(-nmax as f32, mx);
    let clamp = |l: i32| (-nmax).max(l.min(nmax - 1));
    if rmse_type == 0 {
        for i in 0..n {
            big_l[i] = (nmax + clamp(nearest_int(mul(iscale, x[i])))) as i8;
        }
        return div(1.0, iscale);
    }
    let (rmse_type, return_early) = if rmse_type < 0 { (-rmse_type, true) } else { (rmse_type, false) };
    let weight = |i: usize| match qw {
        Some(w) => w[i],
        None => match rmse_type {
            1 => mul(x[i], x[i]),
            2 => 1.0,
            3 => abs(x[i]),
            _ => sqrt(abs(x[i])),
        },
    };
    let (mut sumlx, mut suml2) = (0.0f32, 0.0f32);
    for i in 0..n {
        let l = clamp(nearest_int(mul(iscale, x[i])));
        big_l[i] = (l + nmax) as i8;
        let w = weight(i);
        sumlx = add(sumlx, mul(mul(w, x[i]), l as f32));
        suml2 = add(suml2, mul(mul(w, l as f32), l as f32));
    }
    let mut scale = if suml2 != 0.0 { div(sumlx, suml2) } else { 0.0 };
    if return_early {
        return if suml2 > 0.0 { mul(0.5, add(scale, div(1.0, iscale))) } else { div(1.0, iscale) };
    }
    let mut best = mul(scale, sumlx);
    for is in -9i32..=9 {
        if is == 0 {
            continue;
        }
        iscale = div(neg(add(nmax as f32, mul(0.1, is as f32))), mx);
        sumlx = 0.0;
        suml2 = 0.0;
        for i in 0..n {
            let l = clamp(nearest_int(mul(iscale, x[i])));
            let w = weight(i);
            sumlx = add(sumlx, mul(mul(w, x[i]), l as f32));
            suml2 = add(suml2, mul(mul(w, l as f32), l as f32));
        }
        if suml2 > 0.0 && mul(sumlx, sumlx) > mul(best, suml2) {
            for i in 0..n {
                big_l[i] = (nmax + clamp(nearest_int(mul(iscale, x[i])))) as i8;
            }
            scale = div(sumlx, suml2);
            best = mul(scale, sumlx);
        }
    }
    scale
}

/// `make_q3_quants`.
fn make_q3_quants(nmax: i32, x: &[f32], big_l: &mut [i8], do_rmse: bool) -> f32 {
    let n = x.len();
    let (mut mx, mut amax) = (0.0f32, 0.0f32);
    for &v in x {
        let ax = abs(v);
        if ax > amax {
            amax = ax;
            mx = v;
        }
    }
    if amax < GROUP_MAX_EPS {
        big_l[..n].fill(0);
        return 0.0;
    }
    let iscale = div(-nmax as f32, mx);
    let clamp = |l: i32| (-nmax).max(l.min(nmax - 1));
    if do_rmse {
        let (mut sumlx, mut suml2) = (0.0f32, 0.0f32);
        for i in 0..n {
            let l = clamp(nearest_int(mul(iscale, x[i])));
            big_l[i] = l as i8;
            let w = mul(x[i], x[i]);
            sumlx = add(sumlx, mul(mul(w, x[i]), l as f32));
            suml2 = add(suml2, mul(mul(w, l as f32), l as f32));
        }
        for _ in 0..5 {
            let mut changed = 0;
            for i in 0..n {
                let w = mul(x[i], x[i]);
                let li = f32::from(big_l[i]);
                let mut slx = sub(sumlx, mul(mul(w, x[i]), li));
                if slx > 0.0 {
                    let mut sl2 = sub(suml2, mul(mul(w, li), li));
                    let new_l = clamp(nearest_int(div(mul(x[i], sl2), slx)));
                    if new_l != i32::from(big_l[i]) {
                        slx = add(slx, mul(mul(w, x[i]), new_l as f32));
                        sl2 = add(sl2, mul(mul(w, new_l as f32), new_l as f32));
                        if sl2 > 0.0 && mul(mul(slx, slx), suml2) > mul(mul(sumlx, sumlx), sl2) {
                            big_l[i] = new_l as i8;
                            sumlx = slx;
                            suml2 = sl2;
                            changed += 1;
                        }
                    }
                }
            }
            if changed == 0 {
                break;
            }
        }
        for l in big_l[..n].iter_mut() {
            *l = l.wrapping_add(nmax as i8);
        }
        return if suml2 > 0.0 { div(sumlx, suml2) } else { 0.0 };
    }
    for i in 0..n {
        big_l[i] = (clamp(nearest_int(mul(iscale, x[i]))) + nmax) as i8;
    }
    div(1.0, iscale)
}

/// `make_qkx2_quants` (weights given) and `make_qkx3_quants` (weights or `x * x`, and `max <=
/// min` for the flat test): codes `0..=nmax`, the scale and the minimum (negated, as ggml's
/// `the_min`).
#[allow(clippy::too_many_arguments)]
fn make_qkx_quants<const X3: bool>(
    nmax: i32,
    x: &[f32],
    weights: Option<&[f32]>,
    big_l: &mut [u8],
    aux: &mut [u8],
    rmin: f32,
    rdelta: f32,
    nstep: i32,
    use_mad: bool,
) -> (f32, f32) {
    let n = x.len();
    let weight = |i: usize| match weights {
        Some(w) => w[i],
        None => mul(x[i], x[i]),
    };
    let (mut min, mut max) = (x[0], x[0]);
    let mut sum_w = weight(0);
    let mut sum_x = mul(sum_w, x[0]);
    for i in 1..n {
        if x[i] < min {
            min = x[i];
        }
        if x[i] > max {
            max = x[i];
        }
        let w = weight(i);
        sum_w = add(sum_w, w);
        sum_x = add(sum_x, mul(w, x[i]));
    }
    if min > 0.0 {
        min = 0.0;
    }
    let flat = if X3 { max <= min } else { max == min };
    if flat {
        big_l[..n].fill(0);
        return (0.0, neg(min));
    }
    let mut iscale = div(nmax as f32, sub(max, min));
    let mut scale = div(1.0, iscale);
    let err = |diff: f32| if use_mad { abs(diff) } else { mul(diff, diff) };
    let mut best = 0.0f32;
    for i in 0..n {
        let l = nearest_int(mul(iscale, sub(x[i], min)));
        big_l[i] = 0.max(nmax.min(l)) as u8;
        let diff = sub(add(mul(scale, f32::from(big_l[i])), min), x[i]);
        best = add(best, mul(weight(i), err(diff)));
    }
    if nstep < 1 {
        return (scale, neg(min));
    }
    for is in 0..=nstep {
        iscale = div(add(add(rmin, mul(rdelta, is as f32)), nmax as f32), sub(max, min));
        let (mut sum_l, mut sum_l2, mut sum_xl) = (0.0f32, 0.0f32, 0.0f32);
        for i in 0..n {
            let l = 0.max(nmax.min(nearest_int(mul(iscale, sub(x[i], min)))));
            aux[i] = l as u8;
            let (w, lf) = (weight(i), l as f32);
            sum_l = add(sum_l, mul(w, lf));
            sum_l2 = add(sum_l2, mul(mul(w, lf), lf));
            sum_xl = add(sum_xl, mul(mul(w, lf), x[i]));
        }
        let big_d = sub(mul(sum_w, sum_l2), mul(sum_l, sum_l));
        if big_d > 0.0 {
            let mut this_scale = div(sub(mul(sum_w, sum_xl), mul(sum_x, sum_l)), big_d);
            let mut this_min = div(sub(mul(sum_l2, sum_x), mul(sum_l, sum_xl)), big_d);
            if this_min > 0.0 {
                this_min = 0.0;
                this_scale = div(sum_xl, sum_l2);
            }
            let mut cur = 0.0f32;
            for i in 0..n {
                let diff = sub(add(mul(this_scale, f32::from(aux[i])), this_min), x[i]);
                cur = add(cur, mul(weight(i), err(diff)));
            }
            if cur < best {
                big_l[..n].copy_from_slice(&aux[..n]);
                best = cur;
                scale = this_scale;
                min = this_min;
            }
        }
    }
    (scale, neg(min))
}

/// `make_qkx3_quants`.
#[allow(clippy::too_many_arguments)]
pub(super) fn make_qkx3_quants(
    nmax: i32,
    x: &[f32],
    weights: Option<&[f32]>,
    big_l: &mut [u8],
    aux: &mut [u8],
    rmin: f32,
    rdelta: f32,
    nstep: i32,
    use_mad: bool,
) -> (f32, f32) {
    make_qkx_quants::<true>(nmax, x, weights, big_l, aux, rmin, rdelta, nstep, use_mad)
}

/// `make_qp_quants`: codes `0..=nmax` of non-negative `x` (the sub-block scales).
fn make_qp_quants(nmax: i32, x: &[f32], big_l: &mut [u8], qw: &[f32]) -> f32 {
    let n = x.len();
    let mut mx = 0.0f32;
    for &v in x {
        mx = max(mx, v);
    }
    if mx < GROUP_MAX_EPS {
        big_l[..n].fill(0);
        return 0.0;
    }
    let mut iscale = div(nmax as f32, mx);
    for i in 0..n {
        big_l[i] = nearest_int(mul(iscale, x[i])) as u8;
    }
    let scale = div(1.0, iscale);
    let mut best = 0.0f32;
    for i in 0..n {
        let diff = sub(x[i], mul(scale, f32::from(big_l[i])));
        best = add(best, mul(mul(qw[i], diff), diff));
    }
    for is in -4i32..=4 {
        if is == 0 {
            continue;
        }
        let iscale_is = div(add(mul(0.1, is as f32), nmax as f32), mx);
        let scale_is = div(1.0, iscale_is);
        let mut mse = 0.0f32;
        for i in 0..n {
            let l = nmax.min(nearest_int(mul(iscale_is, x[i])));
            let diff = sub(x[i], mul(scale_is, l as f32));
            mse = add(mse, mul(mul(qw[i], diff), diff));
        }
        if mse < best {
            best = mse;
            iscale = iscale_is;
        }
    }
    let (mut sumlx, mut suml2) = (0.0f32, 0.0f32);
    for i in 0..n {
        let l = nmax.min(nearest_int(mul(iscale, x[i])));
        big_l[i] = l as u8;
        let (w, lf) = (qw[i], l as f32);
        sumlx = add(sumlx, mul(mul(w, x[i]), lf));
        suml2 = add(suml2, mul(mul(w, lf), lf));
    }
    for _ in 0..5 {
        let mut changed = 0;
        for i in 0..n {
            let w = qw[i];
            let li = f32::from(big_l[i]);
            let mut slx = sub(sumlx, mul(mul(w, x[i]), li));
            let mut sl2 = sub(suml2, mul(mul(w, li), li));
            if slx > 0.0 && sl2 > 0.0 {
                let new_l = nmax.min(nearest_int(div(mul(x[i], sl2), slx)));
                if new_l != i32::from(big_l[i]) {
                    slx = add(slx, mul(mul(w, x[i]), new_l as f32));
                    sl2 = add(sl2, mul(mul(w, new_l as f32), new_l as f32));
                    if mul(mul(slx, slx), suml2) > mul(mul(sumlx, sumlx), sl2) {
                        big_l[i] = new_l as u8;
                        sumlx = slx;
                        suml2 = sl2;
                        changed += 1;
                    }
                }
            }
        }
        if changed == 0 {
            break;
        }
    }
    if suml2 > 0.0 {
        div(sumlx, suml2)
    } else {
        0.0
    }
}

// ---------------------------------------------------------------- quantizing

/// Byte l of each 32 of `qs` holds codes l, l + 32, l + 64, l + 96 of its 128 (2 bits each).
fn pack_2bit(codes: &[u8], qs: &mut [u8]) {
    for j in (0..QK_K).step_by(128) {
        for l in 0..32 {
            qs[j / 4 + l] =
                codes[j + l] | (codes[j + l + 32] << 2) | (codes[j + l + 64] << 4) | (codes[j + l + 96] << 6);
        }
    }
}

/// `sum(x*x) / 256` times `factor` over one super-block.
fn sigma2(x: &[f32], factor: f32) -> f32 {
    div(mul(factor, super::sum_of_squares(x)), QK_K as f32)
}

fn quantize_q2_k(x: &[f32], imatrix: Option<&[f32]>, out: &mut [u8], _row: usize) -> Result<()> {
    let mut big_l = [0u8; QK_K];
    let mut aux = [0u8; 16];
    let mut weights = [0f32; 16];
    let (mut mins, mut scales) = ([0f32; 16], [0f32; 16]);
    for (i, (xb, y)) in x.chunks_exact(QK_K).zip(out.chunks_exact_mut(84)).enumerate() {
        let (d, dmin);
        match imatrix {
            None => {
                let (mut max_scale, mut max_min) = (0.0f32, 0.0f32);
                for j in 0..16 {
                    let xs = &xb[16 * j..16 * j + 16];
                    for l in 0..16 {
                        weights[l] = abs(xs[l]);
                    }
                    let (s, m) = make_qkx_quants::<false>(
                        3,
                        xs,
                        Some(&weights),
                        &mut big_l[16 * j..],
                        &mut aux,
                        -0.5,
                        0.1,
                        15,
                        true,
                    );
                    scales[j] = s;
                    mins[j] = m;
                    if s > max_scale {
                        max_scale = s;
                    }
                    if m > max_min {
                        max_min = m;
                    }
                }
                if max_scale > 0.0 {
                    let iscale = div(15.0, max_scale);
                    for j in 0..16 {
                        y[j] = nearest_int(mul(iscale, scales[j])) as u8;
                    }
                    put_half(y, 80, div(max_scale, 15.0));
                } else {
                    y[..16].fill(0);
                    put_half(y, 80, 0.0);
                }
                if max_min > 0.0 {
                    let iscale = div(15.0, max_min);
                    for j in 0..16 {
                        y[j] |= (nearest_int(mul(iscale, mins[j])) << 4) as u8;
                    }
                    put_half(y, 82, div(max_min, 15.0));
                } else {
                    put_half(y, 82, 0.0);
                }
                d = half_at(y, 80);
                dmin = half_at(y, 82);
            }
            Some(qw) => {
                let qw = &qw[QK_K * i..QK_K * i + QK_K];
                let s2 = sigma2(xb, 1.0);
                let mut sw = [0f32; 16];
                for j in 0..16 {
                    let xs = &xb[16 * j..16 * j + 16];
                    for l in 0..16 {
                        weights[l] = super::importance_weight(qw[16 * j + l], s2, xs[l]);
                    }
                    for &w in &weights {
                        sw[j] = add(sw[j], w);
                    }
                    let (s, m) =
                        make_qkx3_quants(3, xs, Some(&weights), &mut big_l[16 * j..], &mut aux, -0.9, 0.05, 36, false);
                    scales[j] = s;
                    mins[j] = m;
                }
                let (mut ls, mut lm) = ([0u8; 16], [0u8; 16]);
                let dm = make_qp_quants(15, &scales, &mut ls, &sw);
                let mm = make_qp_quants(15, &mins, &mut lm, &sw);
                put_half(y, 80, dm);
                put_half(y, 82, mm);
                for j in 0..16 {
                    y[j] = ls[j] | (lm[j] << 4);
                }
                d = half_at(y, 80);
                dmin = half_at(y, 82);
            }
        }
        for j in 0..16 {
            let dl = mul(d, f32::from(y[j] & 0xF));
            if dl == 0.0 {
                continue;
            }
            let dm = mul(dmin, f32::from(y[j] >> 4));
            for ii in 0..16 {
                let l = nearest_int(div(add(xb[16 * j + ii], dm), dl));
                big_l[16 * j + ii] = 0.max(3.min(l)) as u8;
            }
        }
        pack_2bit(&big_l, &mut y[16..80]);
    }
    Ok(())
}

/// Q3_K's 6-bit scale `l` (0..63) of sub-block `j` into `scales[12]`.
fn put_q3_scale(scales: &mut [u8], j: usize, l: i32) {
    if j < 8 {
        scales[j] = (l & 0xF) as u8;
    } else {
        scales[j - 8] |= ((l & 0xF) << 4) as u8;
    }
    let l = l >> 4;
    scales[j % 4 + 8] |= (l << (2 * (j / 4))) as u8;
}

/// Q3_K's scale of sub-block `j` as the quantizer reads it back (`sc - 32`).
fn q3_scale(scales: &[u8], j: usize) -> i8 {
    let sc = if j < 8 { scales[j] & 0xF } else { scales[j - 8] >> 4 };
    ((sc | (((scales[8 + j % 4] >> (2 * (j / 4))) & 3) << 4)) as i8).wrapping_sub(32)
}

fn quantize_q3_k(x: &[f32], imatrix: Option<&[f32]>, out: &mut [u8], _row: usize) -> Result<()> {
    let mut big_l = [0i8; QK_K];
    let mut scales = [0f32; 16];
    for (i, (xb, y)) in x.chunks_exact(QK_K).zip(out.chunks_exact_mut(110)).enumerate() {
        match imatrix {
            None => {
                let (mut max_scale, mut amax) = (0.0f32, 0.0f32);
                for j in 0..16 {
                    scales[j] = make_q3_quants(4, &xb[16 * j..16 * j + 16], &mut big_l[16 * j..16 * j + 16], true);
                    let s = abs(scales[j]);
                    if s > amax {
                        amax = s;
                        max_scale = scales[j];
                    }
                }
                y[96..108].fill(0);
                if max_scale != 0.0 {
                    let iscale = div(-32.0, max_scale);
                    for j in 0..16 {
                        // `int8_t l = nearest_int(...)`: the low byte, then clamped.
                        let l = nearest_int(mul(iscale, scales[j])) as i8;
                        let l = i32::from((-32i8).max(l.min(31))) + 32;
                        put_q3_scale(&mut y[96..108], j, l);
                    }
                    put_half(y, 108, div(1.0, iscale));
                } else {
                    put_half(y, 108, 0.0);
                }
            }
            Some(qw) => {
                let qw = &qw[QK_K * i..QK_K * i + QK_K];
                let s2 = sigma2(xb, 2.0);
                let (mut weight, mut sw) = ([0f32; 16], [0f32; 16]);
                for j in 0..16 {
                    let xs = &xb[16 * j..16 * j + 16];
                    for l in 0..16 {
                        weight[l] = super::importance_weight(qw[16 * j + l], s2, xs[l]);
                    }
                    let mut sumw = 0.0f32;
                    for &w in &weight {
                        sumw = add(sumw, w);
                    }
                    sw[j] = sumw;
                    scales[j] = make_qx_quants(4, xs, &mut big_l[16 * j..16 * j + 16], 1, Some(&weight));
                }
                y[96..108].fill(0);
                let mut ls = [0i8; 16];
                let d_block = make_qx_quants(32, &scales, &mut ls, 1, Some(&sw));
                for (j, &l) in ls.iter().enumerate() {
                    put_q3_scale(&mut y[96..108], j, i32::from(l));
                }
                put_half(y, 108, d_block);
            }
        }
        let d_all = half_at(y, 108);
        for j in 0..16 {
            let d = mul(d_all, f32::from(q3_scale(&y[96..108], j)));
            if d == 0.0 {
                continue;
            }
            for ii in 0..16 {
                let l = nearest_int(div(xb[16 * j + ii], d));
                big_l[16 * j + ii] = ((-4).max(3.min(l)) + 4) as i8;
            }
        }
        y[0..32].fill(0);
        let mut codes = [0u8; QK_K];
        let (mut m, mut hm) = (0usize, 1u8);
        for j in 0..QK_K {
            let mut l = big_l[j];
            if l > 3 {
                y[m] |= hm;
                l -= 4;
            }
            codes[j] = l as u8;
            m += 1;
            if m == QK_K / 8 {
                m = 0;
                hm <<= 1;
            }
        }
        pack_2bit(&codes, &mut y[32..96]);
    }
    Ok(())
}

/// Q4_K/Q5_K's scales and mins (6 bits each) into `scales[12]`.
fn put_scale_min_k4(scales: &mut [u8], j: usize, ls: u8, lm: u8) {
    if j < 4 {
        scales[j] = ls;
        scales[j + 4] = lm;
    } else {
        scales[j + 4] = (ls & 0xF) | ((lm & 0xF) << 4);
        scales[j - 4] |= (ls >> 4) << 6;
        scales[j] |= (lm >> 4) << 6;
    }
}

/// Q4_K and Q5_K (`nmax` 15 and 31): the codes of one super-block into `big_l`, the scales,
/// `d` and `dmin` into the block's first 16 bytes.
fn q45_k_block(nmax: i32, xb: &[f32], qw: Option<&[f32]>, y: &mut [u8], big_l: &mut [u8; QK_K]) {
    let mut aux = [0u8; 32];
    let mut weights = [0f32; 32];
    let (mut mins, mut scales) = ([0f32; 8], [0f32; 8]);
    let scales_bytes = 4..16;
    match qw {
        None => {
            let (rmin, nstep) = if nmax == 15 { (-1.0, 20) } else { (-0.5, 15) };
            let (mut max_scale, mut max_min) = (0.0f32, 0.0f32);
            for j in 0..8 {
                let xs = &xb[32 * j..32 * j + 32];
                let mut sum_x2 = 0.0f32;
                for &v in xs {
                    sum_x2 = add(sum_x2, mul(v, v));
                }
                let av_x = sqrt(div(sum_x2, 32.0));
                for l in 0..32 {
                    weights[l] = add(av_x, abs(xs[l]));
                }
                let (s, m) = make_qkx_quants::<false>(
                    nmax,
                    xs,
                    Some(&weights),
                    &mut big_l[32 * j..],
                    &mut aux,
                    rmin,
                    0.1,
                    nstep,
                    false,
                );
                scales[j] = s;
                mins[j] = m;
                if s > max_scale {
                    max_scale = s;
                }
                if m > max_min {
                    max_min = m;
                }
            }
            let inv_scale = if max_scale > 0.0 { div(63.0, max_scale) } else { 0.0 };
            let inv_min = if max_min > 0.0 { div(63.0, max_min) } else { 0.0 };
            y[scales_bytes.clone()].fill(0);
            for j in 0..8 {
                let ls = 63u8.min(nearest_int(mul(inv_scale, scales[j])) as u8);
                let lm = 63u8.min(nearest_int(mul(inv_min, mins[j])) as u8);
                put_scale_min_k4(&mut y[scales_bytes.clone()], j, ls, lm);
            }
            put_half(y, 0, div(max_scale, 63.0));
            put_half(y, 2, div(max_min, 63.0));
        }
        Some(qw) => {
            let s2 = sigma2(xb, 2.0);
            let mut sw = [0f32; 8];
            for j in 0..8 {
                let xs = &xb[32 * j..32 * j + 32];
                for l in 0..32 {
                    weights[l] = super::importance_weight(qw[32 * j + l], s2, xs[l]);
                }
                let mut sumw = 0.0f32;
                for &w in &weights {
                    sumw = add(sumw, w);
                }
                sw[j] = sumw;
                let (s, m) =
                    make_qkx3_quants(nmax, xs, Some(&weights), &mut big_l[32 * j..], &mut aux, -0.9, 0.05, 36, false);
                scales[j] = s;
                mins[j] = m;
            }
            let (mut ls, mut lm) = ([0u8; 8], [0u8; 8]);
            let d_block = make_qp_quants(63, &scales, &mut ls, &sw);
            let m_block = make_qp_quants(63, &mins, &mut lm, &sw);
            y[scales_bytes.clone()].fill(0);
            for j in 0..8 {
                // Q5_K clamps to 63 here, Q4_K does not (make_qp_quants' codes are at most 63).
                let (a, b) = if nmax == 31 { (ls[j].min(63), lm[j].min(63)) } else { (ls[j], lm[j]) };
                put_scale_min_k4(&mut y[scales_bytes.clone()], j, a, b);
            }
            put_half(y, 0, d_block);
            put_half(y, 2, m_block);
        }
    }
    let (d_all, dmin_all) = (half_at(y, 0), half_at(y, 2));
    for j in 0..8 {
        let (sc, m) = scale_min_k4(j, &y[scales_bytes.clone()]);
        let d = mul(d_all, f32::from(sc));
        if d == 0.0 {
            continue;
        }
        let dm = mul(dmin_all, f32::from(m));
        for ii in 0..32 {
            // gcc vectorises this loop of the reference quantizers four at a time and adds the
            // last four as `dm + x` (`addps`: which of two NaNs is kept), the others as `x + dm`.
            let sum = if qw.is_none() && ii >= 28 { add(dm, xb[32 * j + ii]) } else { add(xb[32 * j + ii], dm) };
            let l = nearest_int(div(sum, d));
            big_l[32 * j + ii] = 0.max(nmax.min(l)) as u8;
        }
    }
}

fn quantize_q4_k(x: &[f32], imatrix: Option<&[f32]>, out: &mut [u8], _row: usize) -> Result<()> {
    let mut big_l = [0u8; QK_K];
    for (i, (xb, y)) in x.chunks_exact(QK_K).zip(out.chunks_exact_mut(144)).enumerate() {
        q45_k_block(15, xb, imatrix.map(|w| &w[QK_K * i..QK_K * i + QK_K]), y, &mut big_l);
        for (n, q) in y[16..144].chunks_exact_mut(32).enumerate() {
            for l in 0..32 {
                q[l] = big_l[64 * n + l] | (big_l[64 * n + l + 32] << 4);
            }
        }
    }
    Ok(())
}

fn quantize_q5_k(x: &[f32], imatrix: Option<&[f32]>, out: &mut [u8], _row: usize) -> Result<()> {
    let mut big_l = [0u8; QK_K];
    for (i, (xb, y)) in x.chunks_exact(QK_K).zip(out.chunks_exact_mut(176)).enumerate() {
        q45_k_block(31, xb, imatrix.map(|w| &w[QK_K * i..QK_K * i + QK_K]), y, &mut big_l);
        y[16..48].fill(0);
        let (mut m1, mut m2) = (1u8, 2u8);
        for n in 0..4 {
            for j in 0..32 {
                let mut l1 = big_l[64 * n + j];
                if l1 > 15 {
                    l1 -= 16;
                    y[16 + j] |= m1;
                }
                let mut l2 = big_l[64 * n + j + 32];
                if l2 > 15 {
                    l2 -= 16;
                    y[16 + j] |= m2;
                }
                y[48 + 32 * n + j] = l1 | (l2 << 4);
            }
            m1 <<= 2;
            m2 <<= 2;
        }
    }
    Ok(())
}

fn quantize_q6_k(x: &[f32], imatrix: Option<&[f32]>, out: &mut [u8], _row: usize) -> Result<()> {
    let mut big_l = [0i8; QK_K];
    let mut scales = [0f32; 16];
    for (i, (xb, y)) in x.chunks_exact(QK_K).zip(out.chunks_exact_mut(210)).enumerate() {
        let (mut max_scale, mut max_abs_scale) = (0.0f32, 0.0f32);
        for ib in 0..16 {
            let qw = imatrix.map(|w| &w[QK_K * i + 16 * ib..QK_K * i + 16 * ib + 16]);
            let scale = make_qx_quants(32, &xb[16 * ib..16 * ib + 16], &mut big_l[16 * ib..16 * ib + 16], 1, qw);
            scales[ib] = scale;
            let abs_scale = abs(scale);
            if abs_scale > max_abs_scale {
                max_abs_scale = abs_scale;
                max_scale = scale;
            }
        }
        if max_abs_scale < GROUP_MAX_EPS {
            y.fill(0);
            put_half(y, 208, 0.0);
            continue;
        }
        let iscale = div(-128.0, max_scale);
        put_half(y, 208, div(1.0, iscale));
        for ib in 0..16 {
            y[192 + ib] = 127.min(nearest_int(mul(iscale, scales[ib]))) as u8;
        }
        let d_all = half_at(y, 208);
        for j in 0..16 {
            let d = mul(d_all, f32::from(y[192 + j] as i8));
            if d == 0.0 {
                continue;
            }
            for ii in 0..16 {
                let l = nearest_int(div(xb[16 * j + ii], d));
                big_l[16 * j + ii] = ((-32).max(31.min(l)) + 32) as i8;
            }
        }
        let codes: [u8; QK_K] = core::array::from_fn(|k| big_l[k] as u8);
        for n in 0..2 {
            let (j, ql, qh) = (128 * n, 64 * n, 128 + 32 * n);
            for l in 0..32 {
                let q = |k: usize| codes[j + l + k];
                y[ql + l] = (q(0) & 0xF) | ((q(64) & 0xF) << 4);
                y[ql + l + 32] = (q(32) & 0xF) | ((q(96) & 0xF) << 4);
                y[qh + l] = (q(0) >> 4) | ((q(32) >> 4) << 2) | ((q(64) >> 4) << 4) | ((q(96) >> 4) << 6);
            }
        }
    }
    Ok(())
}

/// Q8_K: `quantize_row_q8_K_ref`. An all-zero block (no |x| > 0) is `d = 0` and zero codes;
/// ggml leaves its `bsums` as they were in the output buffer, lowbit writes zeros.
fn quantize_q8_k(x: &[f32], _imatrix: Option<&[f32]>, out: &mut [u8], _row: usize) -> Result<()> {
    for (xb, y) in x.chunks_exact(QK_K).zip(out.chunks_exact_mut(292)) {
        let (mut mx, mut amax) = (0.0f32, 0.0f32);
        for &v in xb {
            let ax = abs(v);
            if ax > amax {
                amax = ax;
                mx = v;
            }
        }
        if amax == 0.0 {
            y.fill(0);
            continue;
        }
        let iscale = div(-127.0, mx);
        let mut qs = [0i8; QK_K];
        for (q, &v) in qs.iter_mut().zip(xb) {
            *q = 127.min(nearest_int(mul(iscale, v))) as i8;
        }
        for (k, &q) in qs.iter().enumerate() {
            y[4 + k] = q as u8;
        }
        for j in 0..16 {
            let sum: i32 = qs[16 * j..16 * j + 16].iter().map(|&q| i32::from(q)).sum();
            y[260 + 2 * j..262 + 2 * j].copy_from_slice(&(sum as i16).to_le_bytes());
        }
        y[0..4].copy_from_slice(&div(1.0, iscale).to_le_bytes());
    }
    Ok(())
}
