//! onnxruntime's `com.microsoft.MatMulNBits` weights: B, scales and zero_points as the node takes
//! them, made as `onnxruntime.quantization.matmul_nbits_quantizer.MatMulNBitsQuantizer`'s default
//! algorithm makes them (the C++ `quantize_matmul_4bits` / `_8bits`, MLAS's
//! `BlockwiseQuantizer<T, block, bits, Columnwise>::quantizeAndTranspose` in `q4_dq.cpp`).
//!
//! Orientation: MatMulNBits computes `Y = A @ W^T` with B holding W of shape (N, K) blocked along
//! K, the transpose of the MatMul's (K, N) initializer it replaces. The scheme takes the weight as
//! (out_features, in_features) = (N, K), that W, so rows are blocked along their length as every
//! integer scheme here is.
//!
//! The quantizer pads K with zeros to whole blocks, then per block of one row works in float32:
//! the minimum and maximum with NaN skipped (`v < min`, `v > max`), and
//! * asymmetric (the default): min and max widened to include 0,
//!   `scale = (max - min) / (2^bits - 1)`, zero point `roundf(-min / scale)` (half away from zero;
//!   0 where the quotient is below 0, NaN included, 2^bits - 1 above), the scale stored in the
//!   weight's dtype (float32 or float16; bfloat16 weights are quantized in float32 and their
//!   scales rounded to bfloat16 afterwards);
//! * symmetric: `scale = -m / 2^(bits-1)` with m the one of min and max of larger magnitude (max on
//!   a tie), the zero point the midpoint 2^(bits-1), not stored (the node's default).
//!
//! Codes are `roundf(v * (1 / s) + zp)` clamped to `[0, 2^bits - 1]` with `s` the stored scale
//! widened (1 / s taken as 0 where s is 0), a NaN code 0 (x86-64's conversion of the release
//! build). The node dequantizes `(q - zp) * s` in float32 (MLAS's dequantize; the float16 node the
//! same product rounded to float16).

use super::{Family, NanBits, Narrowing, Options, Params, StoredTensor, Weight};
use crate::alloc_prelude::*;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::quant::blocks::{Quantized, Scales, Scheme};

/// `MatMulNBitsQuantizer`'s default block size.
const DEFAULT_BLOCK: usize = 128;

/// The row.
pub(crate) const ROW: Family = Family {
    name: "ort",
    grammar: "ort:matmulnbits,bits=4|8,block=N[,sym|asym]",
    source: "onnxruntime 1.31.1 com.microsoft.MatMulNBits (B [N, k_blocks, blob], scales, packed zero_points; \
             default zero point 2^(bits-1)); MatMulNBitsQuantizer's default algorithm (quantize_matmul_4bits/_8bits, \
             MLAS BlockwiseQuantizer); checked by tests/integer_ort.rs on scripts/gen_integer_ort_fixtures.py, live \
             by scripts/crosscheck_ort.py",
    parse,
    quantize,
    dequantize,
    storage,
    from_storage,
};

fn parse(format: &str, options: &mut Options<'_>) -> Result<Params> {
    let bad = |message: String| Error::InvalidOp { op: format!("scheme ort:{format}"), message };
    if format != "matmulnbits" {
        return Err(bad("onnxruntime's weight format is matmulnbits (ort:matmulnbits,bits=4,block=32)".into()));
    }
    let bits = match super::take(options, "bits") {
        None => 4,
        Some("4") => 4,
        Some("8") => 8,
        Some(v) => return Err(bad(format!("bits={v}: MatMulNBits' quantizer here takes bits 4 or 8"))),
    };
    let block = match super::take(options, "block") {
        None => DEFAULT_BLOCK,
        Some(v) => v
            .parse::<usize>()
            .ok()
            .filter(|b| *b >= 16 && b.is_power_of_two())
            .ok_or_else(|| bad(format!("block={v}: MatMulNBits' block_size is a power of two, at least 16")))?,
    };
    let sym = super::take(options, "sym").is_some();
    let asym = super::take(options, "asym").is_some();
    if sym && asym {
        return Err(bad("sym and asym exclude each other".into()));
    }
    Ok(Params { family: "ort", bits, group: Some(block), symmetric: sym, act_order: false, choices: Vec::new() })
}

/// The layout of one weight: blocks per row, bytes per block, zero-point bytes per row.
#[derive(Clone, Copy)]
struct Layout {
    bits: u32,
    block: usize,
    rows: usize,
    cols: usize,
    k_blocks: usize,
    blob: usize,
    zp_bytes: usize,
}

impl Layout {
    fn new(params: &Params, rows: usize, cols: usize) -> Layout {
        let block = params.group.unwrap_or(DEFAULT_BLOCK);
        let k_blocks = cols.div_ceil(block);
        let bits = params.bits;
        Layout {
            bits,
            block,
            rows,
            cols,
            k_blocks,
            blob: block * bits as usize / 8,
            zp_bytes: (k_blocks * bits as usize).div_ceil(8),
        }
    }

    fn max_code(&self) -> f32 {
        ((1u32 << self.bits) - 1) as f32
    }

    /// The zero point the node assumes when none is given.
    fn midpoint(&self) -> i32 {
        1 << (self.bits - 1)
    }
}

/// C's `roundf`: halves away from zero.
fn roundf(x: f32) -> f32 {
    crate::fmath::round(x)
}

/// A code as MLAS computes it: `roundf(v * r + zp)` clamped (`std::clamp`: a NaN passes) and
/// converted (NaN to 0).
fn code(v: f32, reciprocal: f32, zp: f32, max: f32) -> u8 {
    let x = roundf(v * reciprocal + zp);
    let x = if x < 0.0 {
        0.0
    } else if max < x {
        max
    } else {
        x
    };
    x as u8
}

/// The reciprocal MLAS multiplies by (0 for a zero scale; a NaN scale is "true").
fn reciprocal(scale: f32) -> f32 {
    if scale != 0.0 || scale.is_nan() {
        1.0 / scale
    } else {
        0.0
    }
}

fn quantize(scheme: &Scheme, params: &Params, weight: &Weight<'_>) -> Result<Quantized> {
    let layout = Layout::new(params, weight.rows, weight.cols);
    let values = super::widened(weight)?;
    let full = layout.max_code();
    let half = layout.midpoint() as f32;
    let blocks = layout.rows * layout.k_blocks;
    let mut scales = vec![0f32; blocks];
    let mut zero_points = vec![layout.midpoint(); blocks];
    // float16 weights keep float16 scales (rounded before the codes are taken); float32 and
    // bfloat16 weights are quantized with float32 scales.
    let narrowing = match weight.dtype {
        DType::Float16 => Some(Narrowing::new(DType::Float16, NanBits::Core)?),
        _ => None,
    };
    let mut elements = vec![0u8; values.len()];
    for r in 0..layout.rows {
        let row = &values[r * layout.cols..(r + 1) * layout.cols];
        for b in 0..layout.k_blocks {
            let xs = &row[b * layout.block..((b + 1) * layout.block).min(layout.cols)];
            // The Python side pads K to whole blocks, but the C++ sees the K rows only: the
            // padding takes no part in the minimum and maximum.
            let mut min = f32::MAX;
            let mut max = -f32::MAX;
            for &v in xs {
                if v < min {
                    min = v;
                }
                if v > max {
                    max = v;
                }
            }
            let at = r * layout.k_blocks + b;
            let scale = if params.symmetric {
                let m = if max.abs() > min.abs() { max } else { min };
                -m / half
            } else {
                let min = if 0.0 < min { 0.0 } else { min };
                let max = if max < 0.0 { 0.0 } else { max };
                let scale = (max - min) / full;
                let zp = if scale != 0.0 { 0.0 - min / scale } else { min };
                zero_points[at] = if zp < 0.0 {
                    0
                } else if zp > full {
                    full as i32
                } else {
                    i32::from(roundf(zp) as u8)
                };
                scale
            };
            let stored = match &narrowing {
                Some(n) => {
                    let mut v = [scale];
                    n.round(&mut v, &mut [0])?;
                    v[0]
                }
                None => scale,
            };
            scales[at] = stored;
            let r_scale = reciprocal(stored);
            let zp = zero_points[at] as f32;
            let codes = &mut elements[r * layout.cols + b * layout.block..][..xs.len()];
            for (c, &v) in codes.iter_mut().zip(xs) {
                *c = code(v, r_scale, zp, full);
            }
        }
    }
    let scales = match weight.dtype {
        DType::Float => Scales::Float32(scales),
        dtype => {
            let n = Narrowing::new(dtype, NanBits::Core)?;
            let mut codes = vec![0u16; blocks];
            n.codes(&scales, &mut codes)?;
            if dtype == DType::Float16 {
                Scales::Float16(codes)
            } else {
                Scales::Bfloat16(codes)
            }
        }
    };
    Ok(Quantized {
        scheme: scheme.clone(),
        shape: vec![weight.rows, weight.cols],
        axis: -1,
        elements,
        scales,
        global_scale: None,
        extras: (!params.symmetric)
            .then(|| Box::new(super::Extras { zero_points: Some(zero_points), ..super::Extras::default() })),
    })
}

/// Checks a quantized weight's parts: codes within `bits`, a scale and a zero point per block.
fn parts<'a>(params: &Params, q: &'a Quantized) -> Result<(Layout, DType, Option<&'a [i32]>)> {
    let op = || format!("{} dequantize", q.scheme.name());
    let [rows, cols] = super::matrix(&q.scheme, &q.shape)?;
    let layout = Layout::new(params, rows, cols);
    let dtype = super::scales_bits(&q.scales)
        .map(|(d, _)| d)
        .ok_or_else(|| Error::InvalidOp { op: op(), message: "the scales must be floats".into() })?;
    let zero_points = q.extras.as_ref().and_then(|e| e.zero_points.as_deref());
    let blocks = rows * layout.k_blocks;
    let zp_ok =
        zero_points.is_none_or(|z| z.len() == blocks && z.iter().all(|&v| (0..=layout.max_code() as i32).contains(&v)));
    if q.elements.len() != rows * cols || q.scales.len() != blocks || !zp_ok {
        return Err(Error::InvalidOp {
            op: op(),
            message: format!(
                "{} codes and {} scales for a {rows}x{cols} weight in blocks of {} (zero points: {} of {blocks} \
                 within {} bits)",
                q.elements.len(),
                q.scales.len(),
                layout.block,
                zero_points.map_or(0, <[i32]>::len),
                layout.bits
            ),
        });
    }
    if params.symmetric && zero_points.is_some() {
        return Err(Error::InvalidOp { op: op(), message: "a symmetric scheme stores no zero points".into() });
    }
    if let Some(at) = q.elements.iter().position(|&c| u32::from(c) >> layout.bits != 0) {
        return Err(Error::InvalidOp {
            op: op(),
            message: format!("element {at} holds code {} (more than {} bits)", q.elements[at], layout.bits),
        });
    }
    Ok((layout, dtype, zero_points))
}

/// The weight as the node multiplies by it: `(q - zp) * s` in float32 (MLAS), row-major (N, K).
pub(crate) fn dequantized_f32(q: &Quantized) -> Result<Vec<f32>> {
    let params = q.scheme.integer().filter(|p| p.family == "ort").ok_or_else(|| Error::InvalidOp {
        op: format!("{} dequantize", q.scheme.name()),
        message: "not an ort:matmulnbits weight".into(),
    })?;
    let (layout, _, zero_points) = parts(params, q)?;
    let scales = super::scales_widened(&q.scales)?;
    let mut values = vec![0f32; q.elements.len()];
    let mid = layout.midpoint();
    let cols = layout.cols.max(1);
    for (r, (row, codes)) in values.chunks_mut(cols).zip(q.elements.chunks(cols)).enumerate() {
        for (b, (out, cs)) in row.chunks_mut(layout.block).zip(codes.chunks(layout.block)).enumerate() {
            let at = r * layout.k_blocks + b;
            let s = scales[at];
            let zp = zero_points.map_or(mid, |z| z[at]);
            for (o, &c) in out.iter_mut().zip(cs) {
                *o = (i32::from(c) - zp) as f32 * s;
            }
        }
    }
    Ok(values)
}

fn dequantize(params: &Params, q: &Quantized, dtype: DType) -> Result<Vec<u8>> {
    let (_, own, _) = parts(params, q)?;
    let values = dequantized_f32(q)?;
    // float16 and bfloat16 scales: the float32 product rounded once to their type.
    let mut codes = Vec::new();
    if own != DType::Float {
        codes = vec![0u16; values.len()];
        Narrowing::new(own, NanBits::Core)?.codes(&values, &mut codes)?;
    }
    super::output(own, &values, &codes, dtype)
}

fn storage(params: &Params, q: &Quantized) -> Result<Vec<StoredTensor>> {
    let (layout, dtype, zero_points) = parts(params, q)?;
    let mid = layout.midpoint();
    let per_byte = 8 / layout.bits as usize;
    let mut b = vec![0u8; layout.rows * layout.k_blocks * layout.blob];
    let mut block_codes = vec![0u8; layout.block];
    for r in 0..layout.rows {
        for k in 0..layout.k_blocks {
            let at = r * layout.k_blocks + k;
            let start = k * layout.block;
            let end = (start + layout.block).min(layout.cols);
            block_codes[..end - start].copy_from_slice(&q.elements[r * layout.cols + start..r * layout.cols + end]);
            // The padding stays as numpy allocated it (zero bytes), but for an odd K at 4 bits the
            // nibble after the last element: the C++ packs it from its stale second code, the
            // code of element K - 2 where the thread's two blocks hold it, else 0.
            block_codes[end - start..].fill(0);
            if per_byte == 2 && layout.cols % 2 == 1 && end == layout.cols && end > start {
                let last = layout.cols - 1;
                let stale = if last % (2 * layout.block) == 0 { 0 } else { q.elements[r * layout.cols + last - 1] };
                block_codes[end - start] = stale;
            }
            let blob = &mut b[at * layout.blob..(at + 1) * layout.blob];
            if per_byte == 1 {
                blob.copy_from_slice(&block_codes);
            } else {
                crate::packing::pack_byte_codes(DType::Uint4, &block_codes, blob)?;
            }
        }
    }
    let scale_bits = super::scales_bits(&q.scales).expect("float scales checked").1;
    let mut out = vec![
        StoredTensor {
            name: "B".into(),
            dtype: DType::Uint8,
            shape: vec![layout.rows, layout.k_blocks, layout.blob],
            data: b,
        },
        StoredTensor { name: "scales".into(), dtype, shape: vec![layout.rows, layout.k_blocks], data: scale_bits },
    ];
    if let Some(z) = zero_points {
        let mut data = vec![0u8; layout.rows * layout.zp_bytes];
        for (row, zs) in data.chunks_mut(layout.zp_bytes.max(1)).zip(z.chunks(layout.k_blocks.max(1))) {
            // An odd number of blocks: the last byte's high nibble is the C++'s initial zero
            // point, the midpoint.
            let mut codes: Vec<u8> = zs.iter().map(|&v| v as u8).collect();
            if per_byte == 2 && codes.len() % 2 == 1 {
                codes.push(mid as u8);
            }
            if per_byte == 1 {
                row.copy_from_slice(&codes);
            } else {
                crate::packing::pack_byte_codes(DType::Uint4, &codes, row)?;
            }
        }
        out.push(StoredTensor {
            name: "zero_points".into(),
            dtype: DType::Uint8,
            shape: vec![layout.rows, layout.zp_bytes],
            data,
        });
    }
    Ok(out)
}

fn from_storage(scheme: &Scheme, params: &Params, tensors: &[StoredTensor], shape: [usize; 2]) -> Result<Quantized> {
    let [rows, cols] = shape;
    super::checked_size(scheme, rows, cols)?;
    let layout = Layout::new(params, rows, cols);
    let name = scheme.name();
    let b = super::stored(name, tensors, "B", &[DType::Uint8], &[rows, layout.k_blocks, layout.blob])?;
    let floats = [DType::Float, DType::Float16, DType::Bfloat16];
    let scales = super::stored(name, tensors, "scales", &floats, &[rows, layout.k_blocks])?;
    let per_byte = 8 / layout.bits as usize;
    let zero_points = if params.symmetric {
        if tensors.iter().any(|t| t.name == "zero_points") {
            return Err(Error::InvalidOp {
                op: format!("{name} from_storage"),
                message: "a symmetric scheme has no zero_points tensor (the node's default, the midpoint)".into(),
            });
        }
        None
    } else {
        let z = super::stored(name, tensors, "zero_points", &[DType::Uint8], &[rows, layout.zp_bytes])?;
        let mut out = Vec::with_capacity(rows * layout.k_blocks);
        let mut codes = vec![0u8; layout.k_blocks];
        for row in z.data.chunks(layout.zp_bytes.max(1)) {
            if per_byte == 1 {
                codes.copy_from_slice(row);
            } else {
                crate::packing::unpack_byte_codes(DType::Uint4, row, &mut codes)?;
            }
            out.extend(codes.iter().map(|&c| i32::from(c)));
        }
        Some(out)
    };
    let mut elements = vec![0u8; rows * cols];
    let mut block_codes = vec![0u8; layout.block];
    for r in 0..rows {
        for k in 0..layout.k_blocks {
            let at = r * layout.k_blocks + k;
            let blob = &b.data[at * layout.blob..(at + 1) * layout.blob];
            if per_byte == 1 {
                block_codes.copy_from_slice(blob);
            } else {
                crate::packing::unpack_byte_codes(DType::Uint4, blob, &mut block_codes)?;
            }
            let start = k * layout.block;
            let end = (start + layout.block).min(cols);
            elements[r * cols + start..r * cols + end].copy_from_slice(&block_codes[..end - start]);
        }
    }
    Ok(Quantized {
        scheme: scheme.clone(),
        shape: vec![rows, cols],
        axis: -1,
        elements,
        scales: super::scales_from_bits(scales.dtype, &scales.data)?,
        global_scale: None,
        extras: zero_points.map(|z| Box::new(super::Extras { zero_points: Some(z), ..super::Extras::default() })),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_with_the_quantizer_defaults() {
        let p = Scheme::parse("ort:matmulnbits").unwrap().integer().unwrap().clone();
        assert_eq!((p.bits, p.group, p.symmetric), (4, Some(128), false));
        let p = Scheme::parse("ort:matmulnbits,bits=8,block=32,sym").unwrap().integer().unwrap().clone();
        assert_eq!((p.bits, p.group, p.symmetric), (8, Some(32), true));
        for bad in ["ort:matmulnbits,bits=3", "ort:matmulnbits,block=24", "ort:matmulnbits,sym,asym", "ort:int4"] {
            assert!(Scheme::parse(bad).is_err(), "{bad}");
        }
    }
}
