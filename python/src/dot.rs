//! `lowbit.dot` on the Rust side: [`lowbit::dot::matmul_t`] over the codes of two numpy arrays.

use crate::blocks::BlocksQuantized;
use crate::{guarded, slice, usage, OrRaise};
use lowbit::dot::{self, Accumulation, Operand};
use lowbit::DType;
use numpy::{PyArray1, PyReadonlyArray1};
use pyo3::prelude::*;

/// The codes of `raw` (little-endian elements of `width` bytes).
fn codes(raw: &[u8], width: usize) -> Vec<u64> {
    raw.chunks_exact(width)
        .map(|c| c.iter().rev().fold(0u64, |code, &byte| (code << 8) | u64::from(byte)))
        .collect()
}

/// `a @ b.T` of `a` (m x k) and `b` (n x k) elements of `dtype` (raw little-endian bytes, one
/// element per byte or more), under `model`, as the raw bytes of `out` (m x n).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
pub(crate) fn dot_matmul_t<'py>(
    py: Python<'py>,
    a: PyReadonlyArray1<'_, u8>,
    b: PyReadonlyArray1<'_, u8>,
    dtype: &str,
    m: usize,
    n: usize,
    k: usize,
    model: &str,
    out: &str,
) -> PyResult<Bound<'py, PyArray1<u8>>> {
    guarded(py, || {
        let dtype = DType::parse(dtype).or_raise(py)?;
        let out = DType::parse(out).or_raise(py)?;
        let model = Accumulation::parse(model).or_raise(py)?;
        // numpy holds one element per byte or more (sub-byte types one per byte, the code in the
        // low bits).
        let bits = dtype.bits().ok_or_else(|| usage(py, format!("{} has no numeric codes", dtype.onnx_name())))?;
        let width = bits.div_ceil(8) as usize;
        let (a, b) = (codes(slice(py, &a, "a")?, width), codes(slice(py, &b, "b")?, width));
        let result = py.detach(|| dot::matmul_t(&a, &b, m, n, k, dtype, &model, out)).or_raise(py)?;
        let out_width = out.bits().unwrap_or(32).div_ceil(8) as usize;
        let bytes: Vec<u8> = result.iter().flat_map(|c| c.to_le_bytes().into_iter().take(out_width)).collect();
        Ok(PyArray1::from_vec(py, bytes))
    })
}

/// An operand as it crosses: a block-scaled tensor, or (raw little-endian codes, dtype, rows, k).
#[derive(FromPyObject)]
pub(crate) enum OperandIn<'py> {
    Blocks(PyRef<'py, BlocksQuantized>),
    Codes((PyReadonlyArray1<'py, u8>, String, usize, usize)),
}

fn operand(py: Python<'_>, o: &OperandIn<'_>, name: &str) -> PyResult<Operand> {
    match o {
        OperandIn::Blocks(q) => Operand::from_blocks(q.quantized()).or_raise(py),
        OperandIn::Codes((raw, dtype, rows, k)) => {
            let dtype = DType::parse(dtype).or_raise(py)?;
            let bits = dtype.bits().ok_or_else(|| usage(py, format!("{} has no numeric codes", dtype.onnx_name())))?;
            let codes = codes(slice(py, raw, name)?, bits.div_ceil(8) as usize);
            Operand::from_codes(&codes, dtype, *rows, *k).or_raise(py)
        }
    }
}

/// `a @ b.T` of two operands, each block-scaled (`lowbit.blocks` tensors blocked along K) or
/// plain codes, under `model`, as the raw bytes of `out` (rows of a x rows of b).
#[pyfunction]
pub(crate) fn dot_matmul_operands<'py>(
    py: Python<'py>,
    a: OperandIn<'py>,
    b: OperandIn<'py>,
    model: &str,
    out: &str,
) -> PyResult<Bound<'py, PyArray1<u8>>> {
    guarded(py, || {
        let out = DType::parse(out).or_raise(py)?;
        let model = Accumulation::parse(model).or_raise(py)?;
        let (a, b) = (operand(py, &a, "a")?, operand(py, &b, "b")?);
        let result = py.detach(|| dot::matmul_operands(&a, &b, &model, out)).or_raise(py)?;
        let out_width = out.bits().unwrap_or(32).div_ceil(8) as usize;
        let bytes: Vec<u8> = result.iter().flat_map(|c| c.to_le_bytes().into_iter().take(out_width)).collect();
        Ok(PyArray1::from_vec(py, bytes))
    })
}

/// Registers the functions above.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(dot_matmul_t, m)?)?;
    m.add_function(wrap_pyfunction!(dot_matmul_operands, m)?)?;
    Ok(())
}
