//! ggml's legacy block types: Q4_1, Q5_0, Q5_1 (blocks of 32 with a float16 `d`, and a float16
//! minimum `m` for the `_1` types) and Q1_0 (blocks of 128 signs with one float16 magnitude).
//!
//! ggml's Q8_1 is not here: ggml 0.10.1 has no `dequantize_row_q8_1` (its type traits give
//! Q8_1 no `to_float`; it is an activation format for the CPU's dot products), and
//! `ggml_quantize_chunk` refuses it.

use super::arith::{abs, add, div, mul, sub, to_int};
use super::{finite, half_at, put_half, Codec, Exact, Finite, Ops};
use crate::error::Result;

const SOURCE: &str = "ggml 0.10.1 (ggml-py 0.10.1) ggml-quants.c: dequantize_row_*, quantize_row_*_ref, quantize_* \
                      with an importance matrix; scripts/crosscheck_ggml.py, tests/fixtures/ggml";

pub(super) const CODECS: &[Codec] = &[
    Codec {
        name: "q4_1",
        ggml_type: 3,
        block_elements: 32,
        block_bytes: 20,
        decode: decode_q4_1,
        quantize: Some(quantize_q4_1),
        needs_imatrix: false,
        source: SOURCE,
    },
    Codec {
        name: "q5_0",
        ggml_type: 6,
        block_elements: 32,
        block_bytes: 22,
        decode: decode_q5_0,
        quantize: Some(quantize_q5_0),
        needs_imatrix: false,
        source: SOURCE,
    },
    Codec {
        name: "q5_1",
        ggml_type: 7,
        block_elements: 32,
        block_bytes: 24,
        decode: decode_q5_1,
        quantize: Some(quantize_q5_1),
        needs_imatrix: false,
        source: SOURCE,
    },
    Codec {
        name: "q1_0",
        ggml_type: 41,
        block_elements: 128,
        block_bytes: 18,
        decode: decode_q1_0,
        quantize: Some(quantize_q1_0),
        needs_imatrix: false,
        source: SOURCE,
    },
];

/// Q4_1: `d`, `m`, 16 bytes of nibbles (element j low, j + 16 high); `x * d + m`.
fn decode_q4_1_with<O: Ops>(block: &[u8], out: &mut [f32]) {
    let (d, m) = (half_at(block, 0), half_at(block, 2));
    for j in 0..16 {
        let q = block[4 + j];
        out[j] = O::add(O::mul(f32::from(q & 0x0F), d), m);
        out[j + 16] = O::add(O::mul(f32::from(q >> 4), d), m);
    }
}

fn decode_q4_1(block: &[u8], out: &mut [f32]) {
    if finite(block, &[0, 2]) {
        decode_q4_1_with::<Finite>(block, out)
    } else {
        decode_q4_1_with::<Exact>(block, out)
    }
}

/// The 5-bit codes of Q5_0/Q5_1: low nibbles in `qs`, fifth bits in the u32 `qh`.
#[inline(always)]
fn five_bit(qh: u32, qs: &[u8], j: usize) -> (u8, u8) {
    let h0 = (((qh >> j) << 4) & 0x10) as u8;
    let h1 = ((qh >> (j + 12)) & 0x10) as u8;
    ((qs[j] & 0x0F) | h0, (qs[j] >> 4) | h1)
}

/// Q5_0: `d`, `qh`, `qs`; `(code - 16) * d`.
fn decode_q5_0_with<O: Ops>(block: &[u8], out: &mut [f32]) {
    let d = half_at(block, 0);
    let qh = u32::from_le_bytes([block[2], block[3], block[4], block[5]]);
    for j in 0..16 {
        let (a, b) = five_bit(qh, &block[6..22], j);
        out[j] = O::mul((i32::from(a) - 16) as f32, d);
        out[j + 16] = O::mul((i32::from(b) - 16) as f32, d);
    }
}

fn decode_q5_0(block: &[u8], out: &mut [f32]) {
    if finite(block, &[0]) {
        decode_q5_0_with::<Finite>(block, out)
    } else {
        decode_q5_0_with::<Exact>(block, out)
    }
}

/// Q5_1: `d`, `m`, `qh`, `qs`; `code * d + m`.
fn decode_q5_1_with<O: Ops>(block: &[u8], out: &mut [f32]) {
    let (d, m) = (half_at(block, 0), half_at(block, 2));
    let qh = u32::from_le_bytes([block[4], block[5], block[6], block[7]]);
    for j in 0..16 {
        let (a, b) = five_bit(qh, &block[8..24], j);
        out[j] = O::add(O::mul(f32::from(a), d), m);
        out[j + 16] = O::add(O::mul(f32::from(b), d), m);
    }
}

fn decode_q5_1(block: &[u8], out: &mut [f32]) {
    if finite(block, &[0, 2]) {
        decode_q5_1_with::<Finite>(block, out)
    } else {
        decode_q5_1_with::<Exact>(block, out)
    }
}

/// Q1_0: `d`, 16 bytes of signs (bit j of the block: element j); `d` where set, `-d` (a sign
/// flip, a NaN's payload kept) where clear.
fn decode_q1_0(block: &[u8], out: &mut [f32]) {
    let d = half_at(block, 0);
    let neg_d = super::arith::neg(d);
    for (j, o) in out.iter_mut().enumerate().take(128) {
        *o = if (block[2 + j / 8] >> (j % 8)) & 1 == 1 { d } else { neg_d };
    }
}

/// The float's minimum and maximum as `quantize_row_q4_1_ref` finds them (from FLT_MAX and
/// -FLT_MAX, `<` and `>`: a NaN never taken).
fn min_max(x: &[f32]) -> (f32, f32) {
    let (mut lo, mut hi) = (f32::MAX, -f32::MAX);
    for &v in x {
        if v < lo {
            lo = v;
        }
        if v > hi {
            hi = v;
        }
    }
    (lo, hi)
}

/// C's `(int8_t)f` as gcc compiles it: `cvttss2si` to 32 bits, the low byte.
#[inline(always)]
fn to_i8(f: f32) -> i8 {
    to_int(f) as i8
}

/// The row's sum of squares over its length (`sigma2` of the `quantize_*_impl` with weights).
fn row_sigma2(x: &[f32]) -> f32 {
    div(super::sum_of_squares(x), x.len() as f32)
}

/// `qw[j] * sqrtf(sigma2 + x[j]*x[j])`.
fn weights(qw: &[f32], x: &[f32], sigma2: f32, out: &mut [f32]) {
    for ((w, &q), &v) in out.iter_mut().zip(qw).zip(x) {
        *w = super::importance_weight(q, sigma2, v);
    }
}

fn quantize_q4_1(x: &[f32], imatrix: Option<&[f32]>, out: &mut [u8], _row: usize) -> Result<()> {
    if let Some(qw) = imatrix {
        let sigma2 = row_sigma2(x);
        let (mut w, mut l, mut aux) = ([0f32; 32], [0u8; 32], [0u8; 32]);
        for ((xb, qb), o) in x.chunks_exact(32).zip(qw.chunks_exact(32)).zip(out.chunks_exact_mut(20)) {
            weights(qb, xb, sigma2, &mut w);
            let (d, min) = super::kquants::make_qkx3_quants(15, xb, Some(&w), &mut l, &mut aux, -0.9, 0.05, 36, false);
            put_half(o, 0, d);
            put_half(o, 2, super::arith::neg(min));
            for j in 0..16 {
                o[4 + j] = l[j] | (l[j + 16] << 4);
            }
        }
        return Ok(());
    }
    for (xb, o) in x.chunks_exact(32).zip(out.chunks_exact_mut(20)) {
        let (lo, hi) = min_max(xb);
        let d = div(sub(hi, lo), 15.0);
        let id = if d != 0.0 { div(1.0, d) } else { 0.0 };
        put_half(o, 0, d);
        put_half(o, 2, lo);
        for j in 0..16 {
            let x0 = mul(sub(xb[j], lo), id);
            let x1 = mul(sub(xb[j + 16], lo), id);
            let q0 = 15i8.min(to_i8(add(x0, 0.5))) as u8;
            let q1 = 15i8.min(to_i8(add(x1, 0.5))) as u8;
            o[4 + j] = q0 | (q1 << 4);
        }
    }
    Ok(())
}

/// Q5_0/Q5_1's `qs` and `qh` from 32 codes.
fn put_five_bit(codes: &[u8; 32], qh_at: usize, o: &mut [u8]) {
    let mut qh = 0u32;
    for j in 0..16 {
        let (a, b) = (codes[j], codes[j + 16]);
        o[qh_at + 4 + j] = (a & 0x0F) | ((b & 0x0F) << 4);
        qh |= u32::from((a & 0x10) >> 4) << j;
        qh |= u32::from((b & 0x10) >> 4) << (j + 16);
    }
    o[qh_at..qh_at + 4].copy_from_slice(&qh.to_le_bytes());
}

/// ggml's `quantize_q4_0` given an importance matrix (`quantize_row_q4_0_impl`): per block,
/// `make_qx_quants` with 8 levels each side over the importance-weighted errors, `d` stored by
/// ggml's float16 conversion, element `j` in the low nibble and `j + 16` in the high one. Without
/// one ggml runs the reference quantizer, which is the `ggml:q4_0` recipe, so this takes one.
pub(super) fn quantize_q4_0_with_importance(
    x: &[f32],
    imatrix: Option<&[f32]>,
    out: &mut [u8],
    _row: usize,
) -> Result<()> {
    let qw = imatrix.expect("called with an importance matrix only (IMPORTANCE_QUANTIZERS)");
    let sigma2 = row_sigma2(x);
    let (mut w, mut l) = ([0f32; 32], [0i8; 32]);
    for ((xb, qb), o) in x.chunks_exact(32).zip(qw.chunks_exact(32)).zip(out.chunks_exact_mut(18)) {
        weights(qb, xb, sigma2, &mut w);
        let d = super::kquants::make_qx_quants(8, xb, &mut l, 1, Some(&w));
        put_half(o, 0, d);
        for j in 0..16 {
            o[2 + j] = (l[j] as u8) | ((l[j + 16] as u8) << 4);
        }
    }
    Ok(())
}

fn quantize_q5_0(x: &[f32], imatrix: Option<&[f32]>, out: &mut [u8], _row: usize) -> Result<()> {
    if let Some(qw) = imatrix {
        let sigma2 = row_sigma2(x);
        let (mut w, mut l) = ([0f32; 32], [0i8; 32]);
        for ((xb, qb), o) in x.chunks_exact(32).zip(qw.chunks_exact(32)).zip(out.chunks_exact_mut(22)) {
            weights(qb, xb, sigma2, &mut w);
            let d = super::kquants::make_qx_quants(16, xb, &mut l, 1, Some(&w));
            put_half(o, 0, d);
            let codes: [u8; 32] = core::array::from_fn(|j| l[j] as u8);
            put_five_bit(&codes, 2, o);
        }
        return Ok(());
    }
    for (xb, o) in x.chunks_exact(32).zip(out.chunks_exact_mut(22)) {
        let (mut amax, mut mx) = (0.0f32, 0.0f32);
        for &v in xb {
            if amax < abs(v) {
                amax = abs(v);
                mx = v;
            }
        }
        let d = div(mx, -16.0);
        let id = if d != 0.0 { div(1.0, d) } else { 0.0 };
        put_half(o, 0, d);
        let codes: [u8; 32] = core::array::from_fn(|j| 31i8.min(to_i8(add(mul(xb[j], id), 16.5))) as u8);
        put_five_bit(&codes, 2, o);
    }
    Ok(())
}

fn quantize_q5_1(x: &[f32], imatrix: Option<&[f32]>, out: &mut [u8], _row: usize) -> Result<()> {
    if let Some(qw) = imatrix {
        let sigma2 = row_sigma2(x);
        let (mut w, mut l, mut aux) = ([0f32; 32], [0u8; 32], [0u8; 32]);
        for ((xb, qb), o) in x.chunks_exact(32).zip(qw.chunks_exact(32)).zip(out.chunks_exact_mut(24)) {
            weights(qb, xb, sigma2, &mut w);
            let (d, min) = super::kquants::make_qkx3_quants(31, xb, Some(&w), &mut l, &mut aux, -0.9, 0.05, 36, false);
            put_half(o, 0, d);
            put_half(o, 2, super::arith::neg(min));
            put_five_bit(&l, 4, o);
        }
        return Ok(());
    }
    for (xb, o) in x.chunks_exact(32).zip(out.chunks_exact_mut(24)) {
        let (lo, hi) = min_max(xb);
        let d = div(sub(hi, lo), 31.0);
        let id = if d != 0.0 { div(1.0, d) } else { 0.0 };
        put_half(o, 0, d);
        put_half(o, 2, lo);
        // `(uint8_t)(x + 0.5f)`: gcc's cvttss2si to 32 bits, the low byte.
        let codes: [u8; 32] = core::array::from_fn(|j| to_int(add(mul(sub(xb[j], lo), id), 0.5)) as u8);
        put_five_bit(&codes, 4, o);
    }
    Ok(())
}

/// Q1_0 takes no importance matrix (`quantize_q1_0` runs the reference per row).
fn quantize_q1_0(x: &[f32], _imatrix: Option<&[f32]>, out: &mut [u8], _row: usize) -> Result<()> {
    for (xb, o) in x.chunks_exact(128).zip(out.chunks_exact_mut(18)) {
        let mut sum = 0.0f32;
        for &v in xb {
            sum = add(sum, abs(v));
        }
        put_half(o, 0, div(sum, 128.0));
        o[2..18].fill(0);
        for (j, &v) in xb.iter().enumerate() {
            if v >= 0.0 {
                o[2 + j / 8] |= 1 << (j % 8);
            }
        }
    }
    Ok(())
}
