//! The integer and codebook schemes of `quant::integer`'s families through the blocks API:
//! quantize with GPTQ's `g_idx`, dequantize in the producer's precision, and the tensors the
//! producer saves, both ways.

use super::{Quantized, Scheme};
use crate::alloc_prelude::*;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::quant::integer::{self, Family, Params, StoredTensor, Weight};

/// The row and options of an integer scheme, or an error naming the operation.
fn row<'a>(scheme: &'a Scheme, what: &str) -> Result<(&'static Family, &'a Params)> {
    let params = scheme.integer().ok_or_else(|| Error::InvalidOp {
        op: format!("{} {what}", scheme.name()),
        message: "the scheme is not an integer or codebook scheme (gptq, awq, bnb, ...)".into(),
    })?;
    let family = integer::family(params.family).expect("parsed from a family row");
    Ok((family, params))
}

/// Quantizes a weight matrix (raw little-endian `dtype`, FLOAT, FLOAT16 or BFLOAT16, of `shape`
/// (out_features, in_features)) as the scheme's producer does; `group_index` is GPTQ
/// act-order's `g_idx` (one group per input column), where the scheme takes one.
pub fn quantize_weight(
    dtype: DType,
    raw: &[u8],
    shape: &[usize],
    scheme: &Scheme,
    group_index: Option<&[i32]>,
) -> Result<Quantized> {
    let (family, params) = row(scheme, "quantize")?;
    let [rows, cols] = integer::matrix(scheme, shape)?;
    let width = crate::quant::blocks::float_width(dtype, "blocks quantize")?;
    let elements = rows.checked_mul(cols).ok_or_else(|| Error::TooLarge { what: format!("a {rows}x{cols} weight") })?;
    if raw.len() != elements.saturating_mul(width) {
        return Err(Error::ShapeMismatch { shape: shape.to_vec(), elements, actual: raw.len() / width });
    }
    if let Some(g) = group_index {
        if g.len() != cols {
            return Err(Error::InvalidOp {
                op: format!("{} quantize", scheme.name()),
                message: format!("g_idx holds {} groups, the weight has {cols} input columns", g.len()),
            });
        }
    }
    (family.quantize)(scheme, params, &Weight { dtype, raw, rows, cols, group_index })
}

/// The values of an integer scheme's `q` in `dtype` (FLOAT, FLOAT16 or BFLOAT16), computed as
/// its producer's dequantize computes them, little-endian bytes in the weight's order.
pub fn dequantize_as(q: &Quantized, dtype: DType) -> Result<Vec<u8>> {
    let (family, params) = row(&q.scheme, "dequantize")?;
    (family.dequantize)(params, q, dtype)
}

/// The tensors the scheme's producer saves for `q`, named as in its checkpoints without the
/// layer prefix (`qweight`, `qzeros`, `scales`, `g_idx`; `weight_packed`, ...).
pub fn storage(q: &Quantized) -> Result<Vec<StoredTensor>> {
    let (family, params) = row(&q.scheme, "storage")?;
    (family.storage)(params, q)
}

/// The reverse of [`storage`] for a weight of `shape` (out_features, in_features).
pub fn from_storage(tensors: &[StoredTensor], scheme: &Scheme, shape: &[usize]) -> Result<Quantized> {
    let (family, params) = row(scheme, "from_storage")?;
    let shape = integer::matrix(scheme, shape)?;
    (family.from_storage)(scheme, params, tensors, shape)
}
