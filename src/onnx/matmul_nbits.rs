//! `com.microsoft.MatMulNBits` (onnxruntime's contrib op): `Y = A @ W^T (+ bias)` with W of shape
//! (N, K) stored as `ort:matmulnbits` weights (B [N, k_blocks, blob], scales, packed zero_points).
//!
//! W is dequantized bit for bit as onnxruntime's CPU kernel does, `(q - zp) * scale` in float32
//! (for float16 too: the node multiplies in float32); then each output element, with the bias,
//! is summed exactly (`dot::Accumulation::Exact`) and rounded once to A's type. onnxruntime's own
//! kernels sum in float32 in a CPU-dependent order: scripts/crosscheck_ort.py reports the
//! difference in ulps.

use super::err;
use crate::dot::{matmul_t, Accumulation};
use crate::dtype::DType;
use crate::error::Result;
use crate::quant::blocks::{self, Scheme, StoredTensor};
use crate::tensor::Tensor;

/// The node's attributes.
pub(super) struct Attributes {
    pub k: Option<i64>,
    pub n: Option<i64>,
    pub bits: Option<i64>,
    pub block_size: Option<i64>,
}

const OP: &str = "MatMulNBits";

fn positive(name: &str, v: Option<i64>) -> Result<usize> {
    match v {
        Some(v) if v > 0 => usize::try_from(v).map_err(|_| err(OP, format!("{name}={v} is too large"))),
        Some(v) => Err(err(OP, format!("{name}={v}: a positive integer is needed"))),
        None => Err(err(OP, format!("the {name} attribute is missing"))),
    }
}

fn tensor_bytes(t: &Tensor, what: &str) -> Result<Vec<u8>> {
    t.raw().map(<[u8]>::to_vec).ok_or_else(|| err(OP, format!("{what} holds no numbers")))
}

/// Where the sum of products over K is charged as work: the elements written times K.
pub(super) fn work(attrs: &Attributes) -> u64 {
    attrs.k.map_or(1, |k| k.max(1) as u64)
}

/// Runs the node on its inputs: A, B, scales, zero_points, g_idx, bias (the last three optional).
pub(super) fn matmul_nbits(
    a: &Tensor,
    b: &Tensor,
    scales: &Tensor,
    zero_points: Option<&Tensor>,
    g_idx: Option<&Tensor>,
    bias: Option<&Tensor>,
    attrs: &Attributes,
) -> Result<Tensor> {
    let k = positive("K", attrs.k)?;
    let n = positive("N", attrs.n)?;
    let bits = positive("bits", attrs.bits)?;
    let block = positive("block_size", attrs.block_size)?;
    if g_idx.is_some() {
        return Err(err(OP, "g_idx (act-order) is not supported; the weights of ort:matmulnbits have none"));
    }
    let dtype = a.dtype();
    if !matches!(dtype, DType::Float | DType::Float16) {
        return Err(err(OP, format!("A is {}; FLOAT and FLOAT16 are supported", dtype.onnx_name())));
    }
    let (a_shape, a_k) = match a.shape().split_last() {
        Some((&last, lead)) => (lead.to_vec(), last),
        None => return Err(err(OP, "A is a scalar; it needs a last axis of K")),
    };
    if a_k != k {
        return Err(err(OP, format!("A's last axis is {a_k}, K is {k}")));
    }
    let m: usize = a_shape.iter().product();
    if scales.dtype() != dtype {
        return Err(err(OP, format!("scales are {}, A is {}", scales.dtype().onnx_name(), dtype.onnx_name())));
    }
    let k_blocks = k.div_ceil(block);
    let sym = if zero_points.is_none() { ",sym" } else { "" };
    let scheme = Scheme::parse(&format!("ort:matmulnbits,bits={bits},block={block}{sym}"))
        .map_err(|e| err(OP, format!("bits={bits}, block_size={block}: {e}")))?;
    // The contrib op's older 1-D scales and zero points hold the same bytes as the 2-D ones.
    let mut tensors = vec![
        StoredTensor { name: "B".into(), dtype: b.dtype(), shape: b.shape().to_vec(), data: tensor_bytes(b, "B")? },
        StoredTensor {
            name: "scales".into(),
            dtype,
            shape: if scales.shape().len() == 1 { vec![n, k_blocks] } else { scales.shape().to_vec() },
            data: tensor_bytes(scales, "scales")?,
        },
    ];
    if let Some(z) = zero_points {
        if z.dtype() != DType::Uint8 {
            return Err(err(OP, format!("zero_points are {}; packed UINT8 is supported", z.dtype().onnx_name())));
        }
        let zp_bytes = (k_blocks * bits).div_ceil(8);
        tensors.push(StoredTensor {
            name: "zero_points".into(),
            dtype: DType::Uint8,
            shape: if z.shape().len() == 1 { vec![n, zp_bytes] } else { z.shape().to_vec() },
            data: tensor_bytes(z, "zero_points")?,
        });
    }
    let q = blocks::from_storage(&tensors, &scheme, &[n, k]).map_err(|e| err(OP, e.to_string()))?;
    let w = crate::quant::integer::ort::dequantized_f32(&q)?;
    if let Some(bias) = bias {
        if bias.dtype() != dtype || bias.shape() != [n] {
            return Err(err(OP, format!("bias must be {} of shape [{n}]", dtype.onnx_name())));
        }
    }
    // The bias joins each sum as one more product (1 x bias): rounded once with it.
    let width = k + usize::from(bias.is_some());
    let widen = |t: &Tensor| -> Result<Vec<u64>> {
        let codes = t.codes()?;
        Ok(match t.dtype() {
            DType::Float16 => codes.iter().map(|&c| u64::from(half_bits_to_f32(c as u16).to_bits())).collect(),
            _ => codes,
        })
    };
    let a_codes = widen(a)?;
    let one = u64::from(1f32.to_bits());
    let mut lhs = Vec::with_capacity(m * width);
    for row in a_codes.chunks(k) {
        lhs.extend_from_slice(row);
        if bias.is_some() {
            lhs.push(one);
        }
    }
    let bias_codes = bias.map(widen).transpose()?;
    let mut rhs = Vec::with_capacity(n * width);
    for (j, row) in w.chunks(k).enumerate() {
        rhs.extend(row.iter().map(|v| u64::from(v.to_bits())));
        if let Some(b) = &bias_codes {
            rhs.push(b[j]);
        }
    }
    let y = matmul_t(&lhs, &rhs, m, n, width, DType::Float, &Accumulation::Exact, dtype)?;
    let mut shape = a_shape;
    shape.push(n);
    Tensor::from_codes(dtype, shape, &y)
}

/// float16 bits widened to float32 (exact) through the rounding core.
fn half_bits_to_f32(bits: u16) -> f32 {
    let code = crate::convert_code(DType::Float16, DType::Float, u64::from(bits), &crate::CastOptions::default())
        .expect("float16 widens to float32");
    f32::from_bits(code as u32)
}
