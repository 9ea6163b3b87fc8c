//! ggml's I-quants (IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ4_NL, IQ4_XS): blocks
//! of grid indices, sign bits and small scales under one float16 `d`, decoded and searched as
//! `ggml-quants.c` does on x86-64 (float32 arithmetic in ggml's order, no fused multiply-adds: the
//! release build of ggml-base is SSE2 code).
//!
//! The grids come from `iq_grids.rs` (generated from gguf's tables); the quantizers' search maps
//! and neighbour lists are derived from them as ggml's `iq2xs_init_impl` / `iq3xs_init_impl` do.

use super::iq_grids::{
    IQ1S_GRID, IQ2S_GRID, IQ2XS_GRID, IQ2XXS_GRID, IQ3S_GRID, IQ3XXS_GRID, KMASK_IQ2XS, KSIGNS_IQ2XS, KVALUES_IQ4NL,
};
use super::iq_search;
use super::Codec;
use crate::alloc_prelude::*;
use crate::error::{Error, Result};

/// Elements of a 256-element super-block (`QK_K`).
const QK_K: usize = 256;
/// IQ1_S/IQ1_M's grid shift (`IQ1S_DELTA`, `IQ1M_DELTA`).
const IQ1_DELTA: f32 = 0.125;

/// The version and checker every row names.
const SOURCE: &str = "ggml 0.10.1 as ggml-py 0.10.1 builds it for x86-64 (ggml-quants.c: dequantize_row_iq*, \
                      ggml_quantize_chunk -> quantize_iq*); tests/fixtures/ggml_iquants recorded by \
                      scripts/gen_ggml_iquant_fixtures.py";

pub(super) const CODECS: &[Codec] = &[
    Codec {
        name: "iq2_xxs",
        ggml_type: 16,
        block_elements: QK_K,
        block_bytes: 66,
        decode: decode_iq2_xxs,
        quantize: Some(iq_search::quantize_iq2_xxs),
        needs_imatrix: true,
        source: SOURCE,
    },
    Codec {
        name: "iq2_xs",
        ggml_type: 17,
        block_elements: QK_K,
        block_bytes: 74,
        decode: decode_iq2_xs,
        quantize: Some(iq_search::quantize_iq2_xs),
        needs_imatrix: true,
        source: SOURCE,
    },
    Codec {
        name: "iq3_xxs",
        ggml_type: 18,
        block_elements: QK_K,
        block_bytes: 98,
        decode: decode_iq3_xxs,
        quantize: Some(iq_search::quantize_iq3_xxs),
        needs_imatrix: false,
        source: SOURCE,
    },
    Codec {
        name: "iq1_s",
        ggml_type: 19,
        block_elements: QK_K,
        block_bytes: 50,
        decode: decode_iq1_s,
        quantize: Some(iq_search::quantize_iq1_s),
        needs_imatrix: true,
        source: SOURCE,
    },
    Codec {
        name: "iq4_nl",
        ggml_type: 20,
        block_elements: 32,
        block_bytes: 18,
        decode: decode_iq4_nl,
        quantize: Some(iq_search::quantize_iq4_nl),
        needs_imatrix: false,
        source: SOURCE,
    },
    Codec {
        name: "iq3_s",
        ggml_type: 21,
        block_elements: QK_K,
        block_bytes: 110,
        decode: decode_iq3_s,
        quantize: Some(iq_search::quantize_iq3_s),
        needs_imatrix: false,
        source: SOURCE,
    },
    Codec {
        name: "iq2_s",
        ggml_type: 22,
        block_elements: QK_K,
        block_bytes: 82,
        decode: decode_iq2_s,
        quantize: Some(iq_search::quantize_iq2_s),
        needs_imatrix: false,
        source: SOURCE,
    },
    Codec {
        name: "iq4_xs",
        ggml_type: 23,
        block_elements: QK_K,
        block_bytes: 136,
        decode: decode_iq4_xs,
        quantize: Some(iq_search::quantize_iq4_xs),
        needs_imatrix: false,
        source: SOURCE,
    },
    Codec {
        name: "iq1_m",
        ggml_type: 29,
        block_elements: QK_K,
        block_bytes: 56,
        decode: decode_iq1_m,
        quantize: Some(iq_search::quantize_iq1_m),
        needs_imatrix: false,
        source: SOURCE,
    },
];

// ---------------------------------------------------------------------------------------------
// float16 `d`

/// The float32 value of the float16 stored little-endian at `bytes[0..2]` (ggml's
/// `GGML_FP16_TO_FP32`, [`super::half_to_f32`]).
#[inline]
pub(super) fn half_at(bytes: &[u8]) -> f32 {
    super::half_to_f32(u16::from_le_bytes([bytes[0], bytes[1]]))
}

/// ggml's `GGML_FP32_TO_FP16` ([`super::f32_to_half`]).
pub(super) fn to_half(x: f32) -> u16 {
    super::f32_to_half(x)
}

// ---------------------------------------------------------------------------------------------
// Decoding

/// `value * (negative ? -1.f : 1.f)` as ggml's release build computes it: gcc turns the product
/// into a sign flip, so a NaN's sign flips too (a multiply would keep it).
#[inline(always)]
fn signed(value: f32, negative: bool) -> f32 {
    if negative {
        -value
    } else {
        value
    }
}

#[inline(always)]
fn grid8(grid: u64) -> [u8; 8] {
    grid.to_le_bytes()
}

#[inline(always)]
fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
}

#[inline(always)]
fn u16_at(bytes: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([bytes[at], bytes[at + 1]])
}

/// `dequantize_row_iq2_xxs`: `d`, then per 32 elements four grid bytes and a word of four 7-bit
/// sign indices and a 4-bit scale.
pub(super) fn decode_iq2_xxs(block: &[u8], out: &mut [f32]) {
    let d = half_at(block);
    let qs = &block[2..66];
    for (ib, y32) in out.chunks_exact_mut(32).enumerate() {
        let aux1 = u32_at(qs, 8 * ib + 4);
        let db = d * (0.5 + (aux1 >> 28) as f32) * 0.25;
        for (l, y) in y32.chunks_exact_mut(8).enumerate() {
            let grid = grid8(IQ2XXS_GRID[usize::from(qs[8 * ib + l])]);
            let signs = KSIGNS_IQ2XS[((aux1 >> (7 * l)) & 127) as usize];
            for j in 0..8 {
                y[j] = signed(db * f32::from(grid[j]), signs & KMASK_IQ2XS[j] != 0);
            }
        }
    }
}

/// `dequantize_row_iq2_xs`: 16-bit entries of a 9-bit grid index and a 7-bit sign index, two
/// 4-bit scales per 32 elements.
pub(super) fn decode_iq2_xs(block: &[u8], out: &mut [f32]) {
    let d = half_at(block);
    let qs = &block[2..66];
    let scales = &block[66..74];
    for (ib, y32) in out.chunks_exact_mut(32).enumerate() {
        let db = [d * (0.5 + f32::from(scales[ib] & 0xf)) * 0.25, d * (0.5 + f32::from(scales[ib] >> 4)) * 0.25];
        for (l, y) in y32.chunks_exact_mut(8).enumerate() {
            let q = u16_at(qs, 2 * (4 * ib + l));
            let grid = grid8(IQ2XS_GRID[usize::from(q & 511)]);
            let signs = KSIGNS_IQ2XS[usize::from(q >> 9)];
            for j in 0..8 {
                y[j] = signed(db[l / 2] * f32::from(grid[j]), signs & KMASK_IQ2XS[j] != 0);
            }
        }
    }
}

/// `dequantize_row_iq2_s`: 10-bit grid indices (8 bits in `qs`, 2 in `qh`), a sign byte per 8
/// elements, two 4-bit scales per 32.
pub(super) fn decode_iq2_s(block: &[u8], out: &mut [f32]) {
    let d = half_at(block);
    let qs = &block[2..34];
    let signs = &block[34..66];
    let qh = &block[66..74];
    let scales = &block[74..82];
    for (ib, y32) in out.chunks_exact_mut(32).enumerate() {
        let db = [d * (0.5 + f32::from(scales[ib] & 0xf)) * 0.25, d * (0.5 + f32::from(scales[ib] >> 4)) * 0.25];
        for (l, y) in y32.chunks_exact_mut(8).enumerate() {
            let dl = db[l / 2];
            let index = usize::from(qs[4 * ib + l]) | ((usize::from(qh[ib]) << (8 - 2 * l)) & 0x300);
            let grid = grid8(IQ2S_GRID[index]);
            let s = signs[4 * ib + l];
            for j in 0..8 {
                y[j] = signed(dl * f32::from(grid[j]), s & KMASK_IQ2XS[j] != 0);
            }
        }
    }
}

/// `dequantize_row_iq3_xxs`: 8-bit indices into a grid of 4 values, per 32 elements a word of
/// four 7-bit sign indices and a 4-bit scale.
pub(super) fn decode_iq3_xxs(block: &[u8], out: &mut [f32]) {
    let d = half_at(block);
    let qs = &block[2..66];
    let scales_and_signs = &block[66..98];
    for (ib, y32) in out.chunks_exact_mut(32).enumerate() {
        let aux = u32_at(scales_and_signs, 4 * ib);
        let db = d * (0.5 + (aux >> 28) as f32) * 0.5;
        for (l, y) in y32.chunks_exact_mut(8).enumerate() {
            let signs = KSIGNS_IQ2XS[((aux >> (7 * l)) & 127) as usize];
            let grid1 = IQ3XXS_GRID[usize::from(qs[8 * ib + 2 * l])].to_le_bytes();
            let grid2 = IQ3XXS_GRID[usize::from(qs[8 * ib + 2 * l + 1])].to_le_bytes();
            for j in 0..4 {
                y[j] = signed(db * f32::from(grid1[j]), signs & KMASK_IQ2XS[j] != 0);
                y[j + 4] = signed(db * f32::from(grid2[j]), signs & KMASK_IQ2XS[j + 4] != 0);
            }
        }
    }
}

/// `dequantize_row_iq3_s`: 9-bit indices into a grid of 4 values, a sign byte per 8 elements,
/// a 4-bit odd scale per 32.
pub(super) fn decode_iq3_s(block: &[u8], out: &mut [f32]) {
    let d = half_at(block);
    let qs = &block[2..66];
    let qh = &block[66..74];
    let signs = &block[74..106];
    let scales = &block[106..110];
    for (ib, y32) in out.chunks_exact_mut(32).enumerate() {
        let scale = (scales[ib / 2] >> (4 * (ib % 2))) & 0xf;
        let db = d * (1 + 2 * i32::from(scale)) as f32;
        let h = usize::from(qh[ib]);
        for (l, y) in y32.chunks_exact_mut(8).enumerate() {
            let grid1 = IQ3S_GRID[usize::from(qs[8 * ib + 2 * l]) | ((h << (8 - 2 * l)) & 256)].to_le_bytes();
            let grid2 = IQ3S_GRID[usize::from(qs[8 * ib + 2 * l + 1]) | ((h << (7 - 2 * l)) & 256)].to_le_bytes();
            let s = signs[4 * ib + l];
            for j in 0..4 {
                y[j] = signed(db * f32::from(grid1[j]), s & KMASK_IQ2XS[j] != 0);
                y[j + 4] = signed(db * f32::from(grid2[j]), s & KMASK_IQ2XS[j + 4] != 0);
            }
        }
    }
}

/// `dl * (g + delta)` for the grid values g = -1, 0, 1 (indexed by the grid byte plus one): the
/// same float32 operations as ggml's per element, done once per scale.
#[inline(always)]
fn iq1_values(dl: f32, delta: f32) -> [f32; 3] {
    [dl * (-1.0 + delta), dl * (0.0 + delta), dl * (1.0 + delta)]
}

/// `dequantize_row_iq1_s`: 11-bit indices into a grid of -1/0/1 (8 bits in `qs`, 3 in `qh`), per
/// 32 elements a 3-bit odd scale and the sign of the shift.
pub(super) fn decode_iq1_s(block: &[u8], out: &mut [f32]) {
    let d = half_at(block);
    let qs = &block[2..34];
    for (ib, y32) in out.chunks_exact_mut(32).enumerate() {
        let qh = u16_at(block, 34 + 2 * ib);
        let dl = d * (2 * i32::from((qh >> 12) & 7) + 1) as f32;
        let delta = if qh & 0x8000 != 0 { -IQ1_DELTA } else { IQ1_DELTA };
        let values = iq1_values(dl, delta);
        for (l, y) in y32.chunks_exact_mut(8).enumerate() {
            let index = usize::from(qs[4 * ib + l]) | (usize::from((qh >> (3 * l)) & 7) << 8);
            let grid = grid8(IQ1S_GRID[index]);
            for j in 0..8 {
                y[j] = values[usize::from(grid[j].wrapping_add(1))];
            }
        }
    }
}

/// `dequantize_row_iq1_m`: as IQ1_S with a shift sign per 8 elements and two 3-bit scales per 32;
/// the float16 `d` is spread over the top nibbles of the four scale words.
pub(super) fn decode_iq1_m(block: &[u8], out: &mut [f32]) {
    let qs = &block[0..32];
    let qh = &block[32..48];
    let sc = [u16_at(block, 48), u16_at(block, 50), u16_at(block, 52), u16_at(block, 54)];
    let d_code = (sc[0] >> 12) | ((sc[1] >> 8) & 0x00f0) | ((sc[2] >> 4) & 0x0f00) | (sc[3] & 0xf000);
    let d = super::half_to_f32(d_code);
    for (ib, y32) in out.chunks_exact_mut(32).enumerate() {
        let s = sc[ib / 2] >> (6 * (ib % 2));
        let dl1 = d * (2 * i32::from(s & 7) + 1) as f32;
        let dl2 = d * (2 * i32::from((s >> 3) & 7) + 1) as f32;
        let (h0, h1) = (u16::from(qh[2 * ib]), u16::from(qh[2 * ib + 1]));
        let index = [
            usize::from(qs[4 * ib]) | usize::from((h0 << 8) & 0x700),
            usize::from(qs[4 * ib + 1]) | usize::from((h0 << 4) & 0x700),
            usize::from(qs[4 * ib + 2]) | usize::from((h1 << 8) & 0x700),
            usize::from(qs[4 * ib + 3]) | usize::from((h1 << 4) & 0x700),
        ];
        let shift = |bit: bool| if bit { -IQ1_DELTA } else { IQ1_DELTA };
        let delta = [shift(h0 & 0x08 != 0), shift(h0 & 0x80 != 0), shift(h1 & 0x08 != 0), shift(h1 & 0x80 != 0)];
        for (l, y) in y32.chunks_exact_mut(8).enumerate() {
            let values = iq1_values(if l < 2 { dl1 } else { dl2 }, delta[l]);
            let grid = grid8(IQ1S_GRID[index[l]]);
            for j in 0..8 {
                y[j] = values[usize::from(grid[j].wrapping_add(1))];
            }
        }
    }
}

/// `dequantize_row_iq4_nl`: 32 nibbles into `kvalues_iq4nl` times `d`.
pub(super) fn decode_iq4_nl(block: &[u8], out: &mut [f32]) {
    let d = half_at(block);
    let qs = &block[2..18];
    for j in 0..16 {
        out[j] = d * f32::from(KVALUES_IQ4NL[usize::from(qs[j] & 0xf)]);
        out[j + 16] = d * f32::from(KVALUES_IQ4NL[usize::from(qs[j] >> 4)])
    }
}

/// `dequantize_row_iq4_xs`: as IQ4_NL per 32 elements, with a 6-bit scale (`ls - 32`) each.
pub(super) fn decode_iq4_xs(block: &[u8], out: &mut [f32]) {
    let d = half_at(block);
    let scales_h = u16_at(block, 2);
    let scales_l = &block[4..8];
    let qs = &block[8..136];
    for (ib, y) in out.chunks_exact_mut(32).enumerate() {
        let ls = i32::from((scales_l[ib / 2] >> (4 * (ib % 2))) & 0xf) | (i32::from((scales_h >> (2 * ib)) & 3) << 4);
        let dl = d * (ls - 32) as f32;
        let q = &qs[16 * ib..16 * ib + 16];
        for j in 0..16 {
            y[j] = dl * f32::from(KVALUES_IQ4NL[usize::from(q[j] & 0xf)]);
            y[j + 16] = dl * f32::from(KVALUES_IQ4NL[usize::from(q[j] >> 4)]);
        }
    }
}

/// A row's checks before any block is written: whole blocks, an importance matrix of the row's
/// length where given, and one where ggml requires it.
#[allow(clippy::too_many_arguments)]
pub(super) fn check_row(
    codec_name: &str,
    block: usize,
    row: &[f32],
    imatrix: Option<&[f32]>,
    needs: bool,
    out_len: usize,
    block_bytes: usize,
    row_index: usize,
) -> Result<()> {
    let op = format!("ggml:{codec_name} quantize");
    if row.len() % block != 0 {
        return Err(Error::InvalidOp {
            op,
            message: format!("row {row_index} has {} elements, not a multiple of the {block}-element block", row.len()),
        });
    }
    if let Some(w) = imatrix {
        if w.len() != row.len() {
            return Err(Error::InvalidOp {
                op,
                message: format!(
                    "row {row_index}: the importance matrix has {} columns, the row {}",
                    w.len(),
                    row.len()
                ),
            });
        }
    } else if needs {
        return Err(Error::InvalidOp {
            op,
            message: format!("row {row_index}: ggml requires an importance matrix for {codec_name}"),
        });
    }
    if out_len != row.len() / block * block_bytes {
        return Err(Error::InvalidOp {
            op,
            message: format!(
                "row {row_index}: {} output bytes for {} blocks of {block_bytes}",
                out_len,
                row.len() / block
            ),
        });
    }
    Ok(())
}

#[cfg(test)]
pub(super) mod tests {
    use super::super::codec;
    use super::*;

    pub(crate) fn fixture(name: &str) -> Vec<u8> {
        let path = format!("{}/tests/fixtures/ggml_iquants/{name}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    /// Every value of `dequantize.bin` (ggml's `dequantize_row_iq*` of swept block bytes) against
    /// the codec's decoder, every bit.
    #[test]
    fn decode_matches_ggml_dequantize() {
        let data = fixture("dequantize.bin");
        assert_eq!(&data[..8], b"LBIQDQ01");
        let mut at = 8;
        let mut compared = 0usize;
        let mut types = 0;
        while at < data.len() {
            let len = usize::from(data[at]);
            let name = core::str::from_utf8(&data[at + 1..at + 1 + len]).unwrap();
            at += 1 + len;
            let blocks = u32::from_le_bytes(data[at..at + 4].try_into().unwrap()) as usize;
            at += 4;
            let c = codec(name).unwrap_or_else(|| panic!("no codec {name}"));
            let raw = &data[at..at + blocks * c.block_bytes];
            at += blocks * c.block_bytes;
            let want = &data[at..at + 4 * blocks * c.block_elements];
            at += 4 * blocks * c.block_elements;
            let mut out = vec![0f32; c.block_elements];
            let mut bad = 0;
            for (b, block) in raw.chunks_exact(c.block_bytes).enumerate() {
                (c.decode)(block, &mut out);
                for (j, v) in out.iter().enumerate() {
                    let k = 4 * (b * c.block_elements + j);
                    let w = u32::from_le_bytes(want[k..k + 4].try_into().unwrap());
                    if v.to_bits() != w {
                        if bad < 5 {
                            eprintln!("{name} block {b} element {j}: {:#010x}, ggml {w:#010x}", v.to_bits());
                        }
                        bad += 1;
                    }
                    compared += 1;
                }
            }
            assert_eq!(bad, 0, "{name}: {bad} values differ from ggml");
            types += 1;
        }
        assert_eq!(types, CODECS.len());
        assert!(compared > 0);
        eprintln!("{compared} dequantized values compared over {types} types");
    }

    /// Decode speed over 16M elements per type, one thread (`cargo test --lib
    /// decode_speed -- --ignored --nocapture`); scripts/bench_ggml_iquants.py times ggml's C on
    /// the same blocks.
    #[test]
    #[ignore]
    fn decode_speed() {
        const ELEMENTS: usize = 1 << 24;
        for c in CODECS {
            let blocks = ELEMENTS / c.block_elements;
            let raw = speed_blocks(c.block_bytes, blocks);
            let mut out = vec![0f32; ELEMENTS];
            let mut best = f64::MAX;
            for _ in 0..5 {
                let t = std::time::Instant::now();
                for (b, y) in raw.chunks_exact(c.block_bytes).zip(out.chunks_exact_mut(c.block_elements)) {
                    (c.decode)(b, y);
                }
                best = best.min(t.elapsed().as_secs_f64());
                std::hint::black_box(&out);
            }
            eprintln!("{:8} lowbit decode {:7.0} M elements/s", c.name, ELEMENTS as f64 / best / 1e6);
        }
    }

    /// Block bytes for the speed runs: splitmix64 bytes (as scripts/bench_ggml_iquants.py makes
    /// them), with each block's float16 `d` set to 1.0 so every value is finite.
    pub(crate) fn speed_blocks(block_bytes: usize, blocks: usize) -> Vec<u8> {
        let mut state = 0x1234_5678u64;
        let mut raw: Vec<u8> = (0..block_bytes * blocks)
            .map(|_| {
                state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
                let mut z = state;
                z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
                (z ^ (z >> 31)) as u8
            })
            .collect();
        if block_bytes != 56 {
            for b in raw.chunks_exact_mut(block_bytes) {
                b[0..2].copy_from_slice(&0x3C00u16.to_le_bytes());
            }
        }
        raw
    }

    #[test]
    fn half_conversions_follow_ggml() {
        assert_eq!(to_half(f32::from_bits(0xFFA5A5A5)), 0xFE00);
        assert_eq!(to_half(f32::from_bits(0x7F800001)), 0x7E00);
        assert_eq!(to_half(70000.0), 0x7C00);
        assert_eq!(to_half(65519.0), 0x7BFF);
        assert_eq!(to_half(-0.0), 0x8000);
        assert_eq!(super::super::half_to_f32(0x7C01).to_bits(), 0x7FC02000);
    }
}
