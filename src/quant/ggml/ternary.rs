//! ggml's ternary types (BitNet b1.58, TriLMs): TQ1_0 (five trits per byte, as a fixed-point
//! fraction of 3^5, and four per byte in `qh`) and TQ2_0 (2 bits per element), blocks of 256
//! with one float16 `d` stored last; values `(q - 1) * d`.

use super::arith::{abs, div, lround, max, mul};
use super::{finite, half_at, put_half, Codec, Exact, Finite, Ops};
use crate::error::Result;

const SOURCE: &str = "ggml 0.10.1 (ggml-py 0.10.1) ggml-quants.c: dequantize_row_tq*_0, quantize_row_tq*_0_ref (no \
                      importance matrix: quantize_tq*_0 does not use one); scripts/crosscheck_ggml.py, \
                      tests/fixtures/ggml";

pub(super) const CODECS: &[Codec] = &[
    Codec {
        name: "tq1_0",
        ggml_type: 34,
        block_elements: 256,
        block_bytes: 54,
        decode: decode_tq1_0,
        quantize: Some(quantize_tq1_0),
        needs_imatrix: false,
        source: SOURCE,
    },
    Codec {
        name: "tq2_0",
        ggml_type: 35,
        block_elements: 256,
        block_bytes: 66,
        decode: decode_tq2_0,
        quantize: Some(quantize_tq2_0),
        needs_imatrix: false,
        source: SOURCE,
    },
];

const POW3: [u8; 6] = [1, 3, 9, 27, 81, 243];

/// The trit at position `n` of a TQ1_0 byte (its top trit after multiplying by 3^n, mod 256).
#[inline(always)]
fn trit(byte: u8, n: usize) -> f32 {
    let q = byte.wrapping_mul(POW3[n]);
    ((u16::from(q) * 3) >> 8) as f32 - 1.0
}

/// TQ1_0: `qs[48]` (bytes 0..32 give elements m + 32 n, bytes 32..48 elements 160 + m + 16 n,
/// n the trit), `qh[4]` (elements 240 + j + 4 n), `d`.
fn decode_tq1_0_with<O: Ops>(block: &[u8], out: &mut [f32]) {
    let d = half_at(block, 52);
    let mut y = 0;
    for (start, width) in [(0, 32), (32, 16)] {
        for n in 0..5 {
            for m in 0..width {
                out[y] = O::mul(trit(block[start + m], n), d);
                y += 1;
            }
        }
    }
    for n in 0..4 {
        for j in 0..4 {
            out[y] = O::mul(trit(block[48 + j], n), d);
            y += 1;
        }
    }
}

fn decode_tq1_0(block: &[u8], out: &mut [f32]) {
    if finite(block, &[52]) {
        decode_tq1_0_with::<Finite>(block, out)
    } else {
        decode_tq1_0_with::<Exact>(block, out)
    }
}

/// TQ2_0: `qs[64]` (byte m of each 32: elements m + 32 l at bits 2 l), `d`.
fn decode_tq2_0_with<O: Ops>(block: &[u8], out: &mut [f32]) {
    let d = half_at(block, 64);
    let mut y = 0;
    for j in [0, 32] {
        for l in 0..4 {
            for m in 0..32 {
                let q = (block[j + m] >> (2 * l)) & 3;
                out[y] = O::mul(f32::from(q) - 1.0, d);
                y += 1;
            }
        }
    }
}

fn decode_tq2_0(block: &[u8], out: &mut [f32]) {
    if finite(block, &[64]) {
        decode_tq2_0_with::<Finite>(block, out)
    } else {
        decode_tq2_0_with::<Exact>(block, out)
    }
}

/// `d = max |x|` (C's `MAX`: a NaN is kept only until a later number replaces it) and `1 / d`
/// (0 for d = 0).
fn amax_scale(x: &[f32]) -> (f32, f32) {
    let mut amax = 0.0f32;
    for &v in x {
        amax = max(amax, abs(v));
    }
    (amax, if amax != 0.0 { div(1.0, amax) } else { 0.0 })
}

/// `lroundf(x * id) + 1` as C's `int`, then added to a byte (mod 256).
#[inline(always)]
fn trit_code(x: f32, id: f32) -> u8 {
    (lround(mul(x, id)).wrapping_add(1) as i32) as u8
}

/// Trits into a byte as `quantize_row_tq1_0_ref` does: `q = q * 3 + xi` (mod 256), then the
/// ceiling of `q * 256 / 243`.
fn pack_trits(codes: impl Iterator<Item = u8>, extra_shift: bool) -> u8 {
    let mut q = 0u8;
    for xi in codes {
        q = q.wrapping_mul(3).wrapping_add(xi);
    }
    if extra_shift {
        q = q.wrapping_mul(3);
    }
    (u32::from(q) * 256).div_ceil(243) as u8
}

fn quantize_tq1_0(x: &[f32], _imatrix: Option<&[f32]>, out: &mut [u8], _row: usize) -> Result<()> {
    for (xb, y) in x.chunks_exact(256).zip(out.chunks_exact_mut(54)) {
        let (d, id) = amax_scale(xb);
        put_half(y, 52, d);
        for m in 0..32 {
            y[m] = pack_trits((0..5).map(|n| trit_code(xb[m + 32 * n], id)), false);
        }
        for m in 0..16 {
            y[32 + m] = pack_trits((0..5).map(|n| trit_code(xb[160 + m + 16 * n], id)), false);
        }
        for j in 0..4 {
            y[48 + j] = pack_trits((0..4).map(|m| trit_code(xb[240 + j + 4 * m], id)), true);
        }
    }
    Ok(())
}

fn quantize_tq2_0(x: &[f32], _imatrix: Option<&[f32]>, out: &mut [u8], _row: usize) -> Result<()> {
    for (xb, y) in x.chunks_exact(256).zip(out.chunks_exact_mut(66)) {
        let (d, id) = amax_scale(xb);
        put_half(y, 64, d);
        for half in 0..2 {
            for m in 0..32 {
                let mut q = 0u8;
                for n in 0..4 {
                    q = q.wrapping_add((trit_code(xb[128 * half + m + 32 * n], id) & 3) << (2 * n));
                }
                y[32 * half + m] = q;
            }
        }
    }
    Ok(())
}
