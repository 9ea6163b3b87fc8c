//! The storage layouts of [`super::Layout`]: `to_bytes`, `from_bytes`, and the checks of a
//! [`Quantized`] built from parts.

use super::engine::scales_shape;
use super::recipes::{Layout, ScaleFormat};
use super::rules::bits_of;
use super::{Quantized, Scales, Scheme};
use crate::alloc_prelude::*;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::packing;

fn invalid(scheme: &Scheme, message: String) -> Error {
    Error::InvalidOp { op: format!("{} storage", scheme.name()), message }
}

/// The ggml block of a layout: elements per block and bytes per block.
fn ggml_block(layout: Layout) -> Option<(usize, usize)> {
    match layout {
        Layout::Onnx => None,
        Layout::GgmlQ8_0 => Some((32, 34)),
        Layout::GgmlQ4_0 => Some((32, 18)),
        Layout::GgmlMxfp4 => Some((32, 17)),
        Layout::GgmlNvfp4 => Some((64, 36)),
    }
}

/// Every length, shape and code of `q` against its scheme.
pub(super) fn check_arrays(q: &Quantized) -> Result<()> {
    let scheme = &q.scheme;
    if let Some(codec) = scheme.ggml_codec() {
        return super::codec::check(codec, q);
    }
    if scheme.integer().is_some() {
        // The family checks its own arrays when it reads them.
        return Ok(());
    }
    let n: usize = q.shape.iter().product();
    if q.elements.len() != n {
        return Err(Error::ShapeMismatch { shape: q.shape.clone(), elements: n, actual: q.elements.len() });
    }
    let want: usize = scales_shape(&q.shape, scheme, q.axis)?.iter().product();
    if q.scales.len() != want {
        return Err(invalid(scheme, format!("{} scales given, the shape needs {want}", q.scales.len())));
    }
    let kind_ok = matches!(
        (&q.scales, scheme.recipe.scale),
        (Scales::Codes(_), ScaleFormat::E8M0 | ScaleFormat::E4M3 | ScaleFormat::GgmlUe4m3)
            | (Scales::Float16(_), ScaleFormat::Float16 | ScaleFormat::GgmlFloat16)
            | (Scales::Float32(_), ScaleFormat::Float32 | ScaleFormat::InputDtype)
            | (Scales::Bfloat16(_) | Scales::Float16(_), ScaleFormat::InputDtype)
    );

    if !kind_ok {
        return Err(invalid(scheme, format!("its scales are {:?}, not the kind given", scheme.recipe.scale)));
    }
    let bits = bits_of(scheme.recipe.element);
    // One OR over all codes (it vectorises); the position only when a code is too wide.
    let too_wide = bits < 8 && u32::from(q.elements.iter().fold(0u8, |all, &c| all | c)) >> bits != 0;
    let first_too_wide = || q.elements.iter().position(|&c| u32::from(c) >> bits != 0);
    if let Some(i) = too_wide.then(first_too_wide).flatten() {
        return Err(Error::InvalidElementByte {
            dtype: scheme.recipe.element.onnx_name(),
            offset: i,
            byte: q.elements[i],
            why: "a bit above the element's width is set",
        });
    }
    let has_global = q.global_scale.is_some();
    let wants_global = scheme.recipe.global != super::GlobalRule::None;
    if has_global && !wants_global {
        return Err(invalid(scheme, "this recipe has no per-tensor scale".into()));
    }
    Ok(())
}

/// A [`Quantized`] from its parts, every length and code checked.
pub fn from_arrays(
    elements: Vec<u8>,
    shape: &[usize],
    scales: Scales,
    scheme: &Scheme,
    axis: i64,
    global_scale: Option<f32>,
) -> Result<Quantized> {
    let q =
        Quantized { scheme: scheme.clone(), shape: shape.to_vec(), axis, elements, scales, global_scale, extras: None };
    check_arrays(&q)?;
    Ok(q)
}

fn scale_bytes(scales: &Scales, out: &mut Vec<u8>) {
    match scales {
        Scales::Codes(c) => out.extend_from_slice(c),
        Scales::Float16(v) | Scales::Bfloat16(v) => v.iter().for_each(|s| out.extend_from_slice(&s.to_le_bytes())),
        Scales::Float32(v) => v.iter().for_each(|s| out.extend_from_slice(&s.to_le_bytes())),
    }
}

/// ggml blocks run along rows whose length is a multiple of the block (the recipe refuses the
/// rest): `(rows, blocks per row)`.
fn ggml_rows(q_shape: &[usize], axis: i64, per_block: usize, scheme: &Scheme) -> Result<(usize, usize)> {
    let rank = q_shape.len() as i64;
    if axis != -1 && axis != rank - 1 {
        return Err(invalid(scheme, "ggml blocks run along the last axis".into()));
    }
    let len = *q_shape.last().unwrap_or(&0);
    if len % per_block != 0 {
        return Err(invalid(scheme, format!("rows of {len} elements are not whole blocks of {per_block}")));
    }
    Ok((q_shape.iter().product::<usize>() / len.max(1), len / per_block))
}

pub(super) fn to_bytes(q: &Quantized) -> Result<Vec<u8>> {
    check_arrays(q)?;
    if q.scheme.ggml_codec().is_some() {
        return Ok(q.elements.clone());
    }
    if q.scheme.integer().is_some() {
        return Err(Error::InvalidOp {
            op: format!("{} to_bytes", q.scheme.name()),
            message: "an integer scheme is stored as several tensors: use storage / from_storage".into(),
        });
    }
    let recipe = &q.scheme.recipe;
    let Some((per_block, block_bytes)) = ggml_block(recipe.layout) else {
        let dtype = recipe.element;
        let mut out = vec![0u8; packing::raw_len(dtype, q.elements.len())?];
        if bits_of(dtype) == 8 {
            out.copy_from_slice(&q.elements);
        } else {
            packing::pack_byte_codes(dtype, &q.elements, &mut out)?;
        }
        scale_bytes(&q.scales, &mut out);
        if let Some(g) = q.global_scale {
            out.extend_from_slice(&g.to_le_bytes());
        }
        return Ok(out);
    };
    let (rows, blocks) = ggml_rows(&q.shape, q.axis, per_block, &q.scheme)?;
    let mut out = vec![0u8; rows * blocks * block_bytes];
    for (b, (block, codes)) in out.chunks_exact_mut(block_bytes).zip(q.elements.chunks_exact(per_block)).enumerate() {
        match (&q.scales, recipe.layout) {
            (Scales::Float16(d), Layout::GgmlQ8_0) => {
                block[..2].copy_from_slice(&d[b].to_le_bytes());
                block[2..].copy_from_slice(codes);
            }
            (Scales::Float16(d), Layout::GgmlQ4_0) => {
                block[..2].copy_from_slice(&d[b].to_le_bytes());
                nibbles(codes, &mut block[2..])?;
            }
            (Scales::Codes(e), Layout::GgmlMxfp4) => {
                block[0] = e[b];
                nibbles(codes, &mut block[1..])?;
            }
            (Scales::Codes(d), Layout::GgmlNvfp4) => {
                block[..4].copy_from_slice(&d[4 * b..4 * b + 4]);
                for (sub, bytes) in codes.chunks(16).zip(block[4..].chunks_exact_mut(8)) {
                    nibbles(sub, bytes)?;
                }
            }
            _ => return Err(invalid(&q.scheme, "the scales do not match the ggml block".into())),
        }
    }
    Ok(out)
}

/// ggml's nibble layout into `out` (`codes.len() / 2` bytes, at most 16): byte j holds element j
/// (low) and element j + half (high); the elements are reordered so that the ONNX 4-bit packing
/// (element 2i low, 2i + 1 high) writes exactly that.
fn nibbles(codes: &[u8], out: &mut [u8]) -> Result<()> {
    let half = out.len();
    let mut order = [0u8; 32];
    for j in 0..half {
        order[2 * j] = codes[j];
        order[2 * j + 1] = codes[j + half];
    }
    packing::pack_byte_codes(DType::Uint4, &order[..2 * half], out)
}

/// The reverse of [`nibbles`]: `bytes` (at most 16) into `2 * bytes.len()` element codes.
fn from_nibbles(bytes: &[u8], out: &mut [u8]) -> Result<()> {
    let half = bytes.len();
    let mut order = [0u8; 32];
    packing::unpack_byte_codes(DType::Uint4, bytes, &mut order[..2 * half])?;
    for j in 0..half {
        out[j] = order[2 * j];
        out[j + half] = order[2 * j + 1];
    }
    Ok(())
}

pub(super) fn from_bytes(data: &[u8], scheme: &Scheme, shape: &[usize], axis: i64) -> Result<Quantized> {
    if let Some(codec) = scheme.ggml_codec() {
        return super::codec::from_bytes(codec, data, scheme, shape, axis);
    }
    if scheme.integer().is_some() {
        return Err(Error::InvalidOp {
            op: format!("{} from_bytes", scheme.name()),
            message: "an integer scheme is stored as several tensors: use storage / from_storage".into(),
        });
    }
    let recipe = &scheme.recipe;
    let n = shape
        .iter()
        .try_fold(1usize, |a, &d| a.checked_mul(d))
        .ok_or_else(|| Error::TooLarge { what: "the shape's element count".into() })?;
    let scale_count: usize = scales_shape(shape, scheme, axis)?.iter().product();
    let wrong_len = |expected: usize| Error::RawLength {
        dtype: recipe.element.onnx_name(),
        elements: n,
        expected,
        actual: data.len(),
    };
    let Some((per_block, block_bytes)) = ggml_block(recipe.layout) else {
        let dtype = recipe.element;
        let element_bytes = packing::raw_len(dtype, n)?;
        let width = match recipe.scale {
            ScaleFormat::E8M0 | ScaleFormat::E4M3 | ScaleFormat::GgmlUe4m3 => 1,
            ScaleFormat::Float16 | ScaleFormat::GgmlFloat16 => 2,
            ScaleFormat::Float32 => 4,
            // The input's dtype is not in the bytes: the length tells bfloat16 from float32.
            ScaleFormat::InputDtype => {
                let global = usize::from(recipe.global != super::GlobalRule::None) * 4;
                if data.len() == element_bytes + 2 * scale_count + global {
                    2
                } else {
                    4
                }
            }
        };
        let global_bytes =
            if recipe.global != super::GlobalRule::None && data.len() == element_bytes + width * scale_count + 4 {
                4
            } else {
                0
            };
        let expected = element_bytes + width * scale_count + global_bytes;
        if data.len() != expected {
            return Err(wrong_len(expected));
        }
        let mut elements = vec![0u8; n];
        if bits_of(dtype) == 8 {
            elements.copy_from_slice(&data[..element_bytes]);
        } else {
            packing::unpack_byte_codes(dtype, &data[..element_bytes], &mut elements)?;
        }
        let s = &data[element_bytes..element_bytes + width * scale_count];
        let scales = match (width, recipe.scale) {
            (1, _) => Scales::Codes(s.to_vec()),
            (2, ScaleFormat::Float16 | ScaleFormat::GgmlFloat16) => {
                Scales::Float16(s.chunks_exact(2).map(|b| u16::from_le_bytes([b[0], b[1]])).collect())
            }
            (2, _) => Scales::Bfloat16(s.chunks_exact(2).map(|b| u16::from_le_bytes([b[0], b[1]])).collect()),
            _ => Scales::Float32(s.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect()),
        };
        let global = (global_bytes == 4).then(|| {
            let b = &data[expected - 4..];
            f32::from_le_bytes([b[0], b[1], b[2], b[3]])
        });
        return from_arrays(elements, shape, scales, scheme, axis, global);
    };
    let (rows, blocks) = ggml_rows(shape, axis, per_block, scheme)?;
    let expected = rows * blocks * block_bytes;
    if data.len() != expected {
        return Err(wrong_len(expected));
    }
    let mut elements = vec![0u8; n];
    let mut codes = Vec::new();
    let mut halves = Vec::new();
    for (b, block) in data.chunks_exact(block_bytes).enumerate() {
        let out = &mut elements[b * per_block..(b + 1) * per_block];
        match recipe.layout {
            Layout::GgmlQ8_0 => {
                halves.push(u16::from_le_bytes([block[0], block[1]]));
                out.copy_from_slice(&block[2..]);
            }
            Layout::GgmlQ4_0 => {
                halves.push(u16::from_le_bytes([block[0], block[1]]));
                from_nibbles(&block[2..], out)?;
            }
            Layout::GgmlMxfp4 => {
                codes.push(block[0]);
                from_nibbles(&block[1..], out)?;
            }
            _ => {
                codes.extend_from_slice(&block[..4]);
                for (s, sub) in out.chunks_mut(16).enumerate() {
                    from_nibbles(&block[4 + 8 * s..12 + 8 * s], sub)?;
                }
            }
        }
    }
    let scales = if halves.is_empty() { Scales::Codes(codes) } else { Scales::Float16(halves) };
    from_arrays(elements, shape, scales, scheme, axis, None)
}
