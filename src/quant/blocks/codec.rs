//! The schemes of ggml's table of block types (`ggml:q4_k`, `ggml:tq1_0`, ... one per row of
//! `quant::ggml`'s codecs) through the blocks API.
//!
//! A [`Quantized`] of such a scheme carries the tensor's bytes as a GGUF holds them: its
//! `elements` are the blocks, row after row (a row: the last axis, a whole number of blocks),
//! and its `scales` are empty (`Scales::Codes` of none; the scales live inside the blocks, and
//! `scales_shape` is `[0]`). `to_bytes` returns those bytes, `from_bytes` takes them.

use super::{BlockInput, Quantized, Scales, Scheme};
use crate::error::{shown_shape, Error, Result};
use crate::quant::ggml::Codec;

fn op(scheme: &Scheme, what: &str) -> String {
    format!("{} {what}", scheme.name())
}

/// Rows and columns of `shape` blocked along `axis` (only the last), and the bytes they take.
fn geometry(codec: &Codec, scheme: &Scheme, shape: &[usize], axis: i64, what: &str) -> Result<(usize, usize, usize)> {
    let rank = shape.len() as i64;
    if rank == 0 {
        return Err(Error::InvalidOp { op: op(scheme, what), message: "a scalar has no axis to block".into() });
    }
    if axis != -1 && axis != rank - 1 {
        return Err(Error::InvalidOp {
            op: op(scheme, what),
            message: format!("ggml blocks the last axis (axis -1), not axis {axis}"),
        });
    }
    let cols = shape[shape.len() - 1];
    let rows = shape[..shape.len() - 1]
        .iter()
        .try_fold(1usize, |n, &d| n.checked_mul(d))
        .ok_or_else(|| Error::TooLarge { what: format!("a tensor of shape {}", shown_shape(shape)) })?;
    let row_bytes = codec.row_bytes(cols, what)?;
    let bytes = rows
        .checked_mul(row_bytes)
        .ok_or_else(|| Error::TooLarge { what: format!("a tensor of shape {}", shown_shape(shape)) })?;
    Ok((rows, cols, bytes))
}

/// Quantizes as ggml's `ggml_quantize_chunk` does (`imatrix`: one weight per column, or none).
pub(super) fn quantize<T: BlockInput>(
    codec: &Codec,
    x: &[T],
    shape: &[usize],
    scheme: &Scheme,
    axis: i64,
    imatrix: Option<&[f32]>,
) -> Result<Quantized> {
    let (rows, cols, _) = geometry(codec, scheme, shape, axis, "quantize")?;
    if x.len() != rows * cols {
        return Err(Error::ShapeMismatch { shape: shape.to_vec(), elements: rows * cols, actual: x.len() });
    }
    // ggml quantizes float32 rows: float16 and bfloat16 widen exactly (as llama.cpp's tools
    // convert them first).
    let widened: Vec<f32>;
    let values = match T::as_float32(x) {
        Some(v) => v,
        None => {
            widened = x.iter().map(|v| v.widen()).collect();
            &widened
        }
    };
    let elements = codec.quantize_rows(values, cols, imatrix)?;
    Ok(Quantized {
        scheme: scheme.clone(),
        shape: shape.to_vec(),
        axis,
        elements,
        scales: Scales::Codes(Vec::new()),
        global_scale: None,
        extras: None,
    })
}

/// Every length of `q` against its codec.
pub(super) fn check(codec: &Codec, q: &Quantized) -> Result<()> {
    let (_, _, bytes) = geometry(codec, &q.scheme, &q.shape, q.axis, "storage")?;
    if q.elements.len() != bytes {
        return Err(Error::InvalidOp {
            op: op(&q.scheme, "storage"),
            message: format!("{} bytes of blocks, the shape {} needs {bytes}", q.elements.len(), shown_shape(&q.shape)),
        });
    }
    if !q.scales.is_empty() || q.global_scale.is_some() {
        return Err(Error::InvalidOp {
            op: op(&q.scheme, "storage"),
            message: "ggml's block types keep their scales inside the blocks: give no scales".into(),
        });
    }
    Ok(())
}

/// The tensor from its GGUF bytes (checked for length before anything is kept).
pub(super) fn from_bytes(codec: &Codec, data: &[u8], scheme: &Scheme, shape: &[usize], axis: i64) -> Result<Quantized> {
    let (_, _, bytes) = geometry(codec, scheme, shape, axis, "from_bytes")?;
    if data.len() != bytes {
        return Err(Error::InvalidOp {
            op: op(scheme, "from_bytes"),
            message: format!("{} bytes given, the shape {} takes {bytes}", data.len(), shown_shape(shape)),
        });
    }
    Ok(Quantized {
        scheme: scheme.clone(),
        shape: shape.to_vec(),
        axis,
        elements: data.to_vec(),
        scales: Scales::Codes(Vec::new()),
        global_scale: None,
        extras: None,
    })
}

/// ggml's `dequantize_row_*` of every row into `out` (the tensor's element count).
pub(super) fn dequantize_into(codec: &Codec, q: &Quantized, out: &mut [f32]) -> Result<()> {
    check(codec, q)?;
    let (rows, cols, _) = geometry(codec, &q.scheme, &q.shape, q.axis, "dequantize")?;
    if out.len() != rows * cols {
        return Err(Error::ShapeMismatch { shape: q.shape.clone(), elements: rows * cols, actual: out.len() });
    }
    codec.decode_blocks(&q.elements, out)
}
