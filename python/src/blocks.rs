//! `lowbit.blocks` on the Rust side: [`lowbit::quant::blocks`] over flat buffers. A quantized
//! tensor crosses the boundary as its parts: the element codes (one byte each), the scales' kind
//! (`codes`, `float16`, `bfloat16`, `float32`) with their little-endian bytes, the scales' shape
//! and the per-tensor scale; `lowbit/blocks.py` holds them in its `Quantized`.

use crate::{guarded, slice, usage, OrRaise};
use lowbit::quant::blocks::{self, Quantized, Scales, Scheme};
use lowbit::DType;
use numpy::{PyArray1, PyReadonlyArray1};
use pyo3::prelude::*;

/// The parts of a quantized tensor: elements, scales kind, scales bytes, scales shape, global.
type Parts<'py> = (Bound<'py, PyArray1<u8>>, &'static str, Bound<'py, PyArray1<u8>>, Vec<usize>, Option<f32>);

fn parts<'py>(py: Python<'py>, q: Quantized) -> PyResult<Parts<'py>> {
    let scales_shape = q.scales_shape().or_raise(py)?;
    let (kind, bytes): (&'static str, Vec<u8>) = match q.scales {
        Scales::Codes(c) => ("codes", c),
        Scales::Float16(v) => ("float16", v.iter().flat_map(|h| h.to_le_bytes()).collect()),
        Scales::Bfloat16(v) => ("bfloat16", v.iter().flat_map(|h| h.to_le_bytes()).collect()),
        Scales::Float32(v) => ("float32", v.iter().flat_map(|f| f.to_le_bytes()).collect()),
    };
    Ok((PyArray1::from_vec(py, q.elements), kind, PyArray1::from_vec(py, bytes), scales_shape, q.global_scale))
}

fn scales_of(py: Python<'_>, kind: &str, bytes: &[u8]) -> PyResult<Scales> {
    let halves = || bytes.chunks_exact(2).map(|b| u16::from_le_bytes([b[0], b[1]])).collect();
    let width = match kind {
        "codes" => 1,
        "float16" | "bfloat16" => 2,
        "float32" => 4,
        other => return Err(usage(py, format!("scales kind {other:?} is none of codes, float16, bfloat16, float32"))),
    };
    if bytes.len() % width != 0 {
        return Err(usage(py, format!("{} bytes of {kind} scales is not a whole number of scales", bytes.len())));
    }
    Ok(match kind {
        "codes" => Scales::Codes(bytes.to_vec()),
        "float16" => Scales::Float16(halves()),
        "bfloat16" => Scales::Bfloat16(halves()),
        _ => Scales::Float32(bytes.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect()),
    })
}

/// Every scheme family with its source.
#[pyfunction]
pub(crate) fn blocks_schemes() -> Vec<(&'static str, &'static str)> {
    blocks::SCHEMES.to_vec()
}

/// The canonical check of a scheme name: the element's ONNX dtype name.
#[pyfunction]
pub(crate) fn blocks_element_dtype(py: Python<'_>, scheme: &str) -> PyResult<&'static str> {
    guarded(py, || Ok(Scheme::parse(scheme).or_raise(py)?.element_dtype().onnx_name()))
}

/// Quantizes `x` (raw little-endian FLOAT, FLOAT16 or BFLOAT16 of `shape`).
#[pyfunction]
#[pyo3(signature = (x, dtype_, shape, scheme, axis, global_scale))]
pub(crate) fn blocks_quantize<'py>(
    py: Python<'py>,
    x: PyReadonlyArray1<'_, u8>,
    dtype_: &str,
    shape: Vec<usize>,
    scheme: &str,
    axis: i64,
    global_scale: Option<f32>,
) -> PyResult<Parts<'py>> {
    guarded(py, || {
        let scheme = Scheme::parse(scheme).or_raise(py)?;
        let d = DType::parse(dtype_).or_raise(py)?;
        let raw = slice(py, &x, "x")?;
        let q = py.detach(|| blocks::quantize_raw(d, raw, &shape, &scheme, axis, global_scale)).or_raise(py)?;
        parts(py, q)
    })
}

/// A `Quantized` from its parts, every length and code checked.
#[allow(clippy::too_many_arguments)]
fn quantized(
    py: Python<'_>,
    elements: &PyReadonlyArray1<'_, u8>,
    shape: Vec<usize>,
    kind: &str,
    scales: &PyReadonlyArray1<'_, u8>,
    scheme: &str,
    axis: i64,
    global_scale: Option<f32>,
) -> PyResult<Quantized> {
    let scheme = Scheme::parse(scheme).or_raise(py)?;
    let scales = scales_of(py, kind, slice(py, scales, "scales")?)?;
    let elements = slice(py, elements, "elements")?.to_vec();
    blocks::from_arrays(elements, &shape, scales, &scheme, axis, global_scale).or_raise(py)
}

/// Checks parts and gives them back (the scales' shape computed).
#[pyfunction]
#[pyo3(signature = (elements, shape, kind, scales, scheme, axis, global_scale))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn blocks_from_arrays<'py>(
    py: Python<'py>,
    elements: PyReadonlyArray1<'_, u8>,
    shape: Vec<usize>,
    kind: &str,
    scales: PyReadonlyArray1<'_, u8>,
    scheme: &str,
    axis: i64,
    global_scale: Option<f32>,
) -> PyResult<Parts<'py>> {
    guarded(py, || {
        let q = quantized(py, &elements, shape, kind, &scales, scheme, axis, global_scale)?;
        parts(py, q)
    })
}

/// The float32 values of a quantized tensor.
#[pyfunction]
#[pyo3(signature = (elements, shape, kind, scales, scheme, axis, global_scale))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn blocks_dequantize<'py>(
    py: Python<'py>,
    elements: PyReadonlyArray1<'_, u8>,
    shape: Vec<usize>,
    kind: &str,
    scales: PyReadonlyArray1<'_, u8>,
    scheme: &str,
    axis: i64,
    global_scale: Option<f32>,
) -> PyResult<Bound<'py, PyArray1<f32>>> {
    guarded(py, || {
        let q = quantized(py, &elements, shape, kind, &scales, scheme, axis, global_scale)?;
        let values = py.detach(|| q.dequantize()).or_raise(py)?;
        Ok(PyArray1::from_vec(py, values))
    })
}

/// A quantized tensor in its scheme's storage layout.
#[pyfunction]
#[pyo3(signature = (elements, shape, kind, scales, scheme, axis, global_scale))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn blocks_to_bytes<'py>(
    py: Python<'py>,
    elements: PyReadonlyArray1<'_, u8>,
    shape: Vec<usize>,
    kind: &str,
    scales: PyReadonlyArray1<'_, u8>,
    scheme: &str,
    axis: i64,
    global_scale: Option<f32>,
) -> PyResult<Bound<'py, PyArray1<u8>>> {
    guarded(py, || {
        let q = quantized(py, &elements, shape, kind, &scales, scheme, axis, global_scale)?;
        Ok(PyArray1::from_vec(py, q.to_bytes().or_raise(py)?))
    })
}

/// The reverse of `blocks_to_bytes`.
#[pyfunction]
pub(crate) fn blocks_from_bytes<'py>(
    py: Python<'py>,
    data: PyReadonlyArray1<'_, u8>,
    scheme: &str,
    shape: Vec<usize>,
    axis: i64,
) -> PyResult<Parts<'py>> {
    guarded(py, || {
        let scheme = Scheme::parse(scheme).or_raise(py)?;
        let q = blocks::from_bytes(slice(py, &data, "data")?, &scheme, &shape, axis).or_raise(py)?;
        parts(py, q)
    })
}

/// Registers the functions above.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(blocks_schemes, m)?)?;
    m.add_function(wrap_pyfunction!(blocks_element_dtype, m)?)?;
    m.add_function(wrap_pyfunction!(blocks_quantize, m)?)?;
    m.add_function(wrap_pyfunction!(blocks_from_arrays, m)?)?;
    m.add_function(wrap_pyfunction!(blocks_dequantize, m)?)?;
    m.add_function(wrap_pyfunction!(blocks_to_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(blocks_from_bytes, m)?)?;
    Ok(())
}
