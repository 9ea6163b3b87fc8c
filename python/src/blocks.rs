//! `lowbit.blocks` on the Rust side: [`lowbit::quant::blocks`] over flat buffers. A quantized
//! tensor stays a Rust [`Quantized`] inside [`BlocksQuantized`]; `lowbit/blocks.py` wraps it and
//! takes its element codes and scales out once, as numpy arrays (the scales as their kind,
//! `codes`, `float16`, `bfloat16` or `float32`, and little-endian bytes).

use crate::{guarded, slice, usage, OrRaise};
use lowbit::quant::blocks::{self, Quantized, ScaleLayout, Scales, Scheme, StoredTensor};
use lowbit::DType;
use numpy::{PyArray1, PyReadonlyArray1, PyReadwriteArray1};
use pyo3::prelude::*;

/// A block-quantized tensor (the crate's `Quantized`), checked when it was made.
#[pyclass(frozen, module = "lowbit._native")]
pub(crate) struct BlocksQuantized {
    quantized: Quantized,
}

/// Scales as they cross: their kind, their little-endian bytes, their shape.
type ScaleParts<'py> = (&'static str, Bound<'py, PyArray1<u8>>, Vec<usize>);

/// A stored tensor as it crosses: name, ONNX dtype name, shape, little-endian bytes.
type StoredParts<'py> = (String, &'static str, Vec<usize>, Bound<'py, PyArray1<u8>>);

fn scale_kind_bytes(scales: &Scales) -> (&'static str, Vec<u8>) {
    match scales {
        Scales::Codes(c) => ("codes", c.clone()),
        Scales::Float16(v) => ("float16", v.iter().flat_map(|h| h.to_le_bytes()).collect()),
        Scales::Bfloat16(v) => ("bfloat16", v.iter().flat_map(|h| h.to_le_bytes()).collect()),
        Scales::Float32(v) => ("float32", v.iter().flat_map(|f| f.to_le_bytes()).collect()),
    }
}

impl BlocksQuantized {
    /// The crate's tensor (for `lowbit.dot`).
    pub(crate) fn quantized(&self) -> &Quantized {
        &self.quantized
    }
}

#[pymethods]
impl BlocksQuantized {
    /// The tensor's shape.
    fn shape(&self) -> Vec<usize> {
        self.quantized.shape.clone()
    }

    /// The element codes, one byte each, in the tensor's order.
    fn elements<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u8>> {
        PyArray1::from_slice(py, &self.quantized.elements)
    }

    /// The scales: their kind, their little-endian bytes and their shape.
    fn scales<'py>(&self, py: Python<'py>) -> PyResult<ScaleParts<'py>> {
        let mut shape = self.quantized.scales_shape().or_raise(py)?;
        // Scales that run across rows (bitsandbytes' blocks of the flattened weight) stay flat.
        if shape.iter().product::<usize>() != self.quantized.scales.len() {
            shape = vec![self.quantized.scales.len()];
        }
        let (kind, bytes) = scale_kind_bytes(&self.quantized.scales);
        Ok((kind, PyArray1::from_vec(py, bytes), shape))
    }

    /// Whether the scheme is an integer or codebook scheme (gptq, awq, bnb, ...).
    fn is_integer(&self) -> bool {
        self.quantized.scheme.integer().is_some()
    }

    /// The zero point of each group (integer codes), where the scheme stores them.
    fn zero_points<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyArray1<i32>>> {
        let z = self.quantized.extras.as_ref()?.zero_points.as_ref()?;
        Some(PyArray1::from_slice(py, z))
    }

    /// GPTQ act-order's group of each input column, where the scheme keeps one.
    fn group_index<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyArray1<i32>>> {
        let g = self.quantized.extras.as_ref()?.group_index.as_ref()?;
        Some(PyArray1::from_slice(py, g))
    }

    /// MLX's bias of each group: kind and little-endian bytes, where the scheme has them.
    fn biases<'py>(&self, py: Python<'py>) -> Option<(&'static str, Bound<'py, PyArray1<u8>>)> {
        let (kind, bytes) = scale_kind_bytes(self.quantized.extras.as_ref()?.biases.as_ref()?);
        Some((kind, PyArray1::from_vec(py, bytes)))
    }

    /// bitsandbytes' nested scales: second-level scales, the offset and the block.
    fn nested<'py>(&self, py: Python<'py>) -> Option<(Bound<'py, PyArray1<f32>>, f32, usize)> {
        let n = self.quantized.extras.as_ref()?.nested.as_ref()?;
        Some((PyArray1::from_slice(py, &n.scales), n.offset, n.block))
    }

    /// The values as the scheme's producer dequantizes them in `dtype` (FLOAT, FLOAT16 or
    /// BFLOAT16): little-endian bytes.
    fn dequantize_as<'py>(&self, py: Python<'py>, dtype: &str) -> PyResult<Bound<'py, PyArray1<u8>>> {
        guarded(py, || {
            let d = DType::parse(dtype).or_raise(py)?;
            Ok(PyArray1::from_vec(py, py.detach(|| blocks::dequantize_as(&self.quantized, d)).or_raise(py)?))
        })
    }

    /// The tensors the scheme's producer saves, in its order.
    fn storage<'py>(&self, py: Python<'py>) -> PyResult<Vec<StoredParts<'py>>> {
        guarded(py, || {
            let tensors = py.detach(|| blocks::storage(&self.quantized)).or_raise(py)?;
            Ok(tensors
                .into_iter()
                .map(|t| (t.name, t.dtype.onnx_name(), t.shape, PyArray1::from_vec(py, t.data)))
                .collect())
        })
    }

    /// Whether the tensor is ggml's block bytes (`elements` are the blocks, row after row).
    fn is_ggml_blocks(&self) -> bool {
        self.quantized.scheme.is_ggml_blocks()
    }

    /// The per-tensor scale, where the scheme has one.
    fn global_scale(&self) -> Option<f32> {
        self.quantized.global_scale
    }

    /// The float32 values, as the implementation dequantizes them, written into `out` (a
    /// contiguous float32 array of the tensor's element count that numpy allocated: numpy asks
    /// for huge pages on large arrays, so the pages fault in faster than a Rust vector's).
    fn dequantize_into(&self, py: Python<'_>, mut out: PyReadwriteArray1<'_, f32>) -> PyResult<()> {
        guarded(py, || {
            let out =
                out.as_slice_mut().map_err(|_| usage(py, "dequantize_into: the output is not contiguous"))?;
            py.detach(|| self.quantized.dequantize_into(out)).or_raise(py)
        })
    }

    /// The tensor in its scheme's storage layout, the scales in `layout` (a scale layout's name).
    #[pyo3(signature = (layout = "linear"))]
    fn to_bytes<'py>(&self, py: Python<'py>, layout: &str) -> PyResult<Bound<'py, PyArray1<u8>>> {
        guarded(py, || {
            let layout = ScaleLayout::parse(layout).or_raise(py)?;
            Ok(PyArray1::from_vec(py, blocks::to_bytes_in(&self.quantized, layout).or_raise(py)?))
        })
    }
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
pub(crate) fn blocks_schemes() -> Vec<(String, String)> {
    blocks::schemes()
}

/// The canonical check of a scheme name: the element's ONNX dtype name.
#[pyfunction]
pub(crate) fn blocks_element_dtype(py: Python<'_>, scheme: &str) -> PyResult<&'static str> {
    guarded(py, || Ok(Scheme::parse(scheme).or_raise(py)?.element_dtype().onnx_name()))
}

/// Quantizes `x` (raw little-endian FLOAT, FLOAT16 or BFLOAT16 of `shape`); `imatrix` (ggml's
/// block types: one float32 weight per column of the last axis) needs FLOAT input.
#[pyfunction]
#[pyo3(signature = (x, dtype_, shape, scheme, axis, global_scale, imatrix=None, g_idx=None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn blocks_quantize(
    py: Python<'_>,
    x: PyReadonlyArray1<'_, u8>,
    dtype_: &str,
    shape: Vec<usize>,
    scheme: &str,
    axis: i64,
    global_scale: Option<f32>,
    imatrix: Option<PyReadonlyArray1<'_, f32>>,
    g_idx: Option<PyReadonlyArray1<'_, i32>>,
) -> PyResult<BlocksQuantized> {
    guarded(py, || {
        let scheme = Scheme::parse(scheme).or_raise(py)?;
        let d = DType::parse(dtype_).or_raise(py)?;
        let raw = slice(py, &x, "x")?;
        lowbit::quant::check_blocks_input(&shape, &scheme).or_raise(py)?;
        if scheme.integer().is_some() {
            if imatrix.is_some() || global_scale.is_some() || (axis != -1 && axis + 1 != shape.len() as i64) {
                return Err(usage(
                    py,
                    format!("{}: a weight grouped along its last axis, with no imatrix or global_scale", scheme.name()),
                ));
            }
            let g = match &g_idx {
                Some(g) => Some(g.as_slice().map_err(|_| usage(py, "g_idx: not contiguous".to_string()))?),
                None => None,
            };
            let quantized = py.detach(|| blocks::quantize_weight(d, raw, &shape, &scheme, g)).or_raise(py)?;
            return Ok(BlocksQuantized { quantized });
        }
        if g_idx.is_some() {
            return Err(usage(py, format!("{}: g_idx is for GPTQ's act-order schemes", scheme.name())));
        }
        let quantized = match &imatrix {
            None => py.detach(|| blocks::quantize_raw(d, raw, &shape, &scheme, axis, global_scale)).or_raise(py)?,
            Some(w) => {
                if d != DType::Float || global_scale.is_some() || (axis != -1 && axis + 1 != shape.len() as i64) {
                    return Err(usage(
                        py,
                        "imatrix: float32 input blocked along the last axis, with no global_scale".to_string(),
                    ));
                }
                let w = w.as_slice().map_err(|_| usage(py, "imatrix: not contiguous".to_string()))?;
                let x: Vec<f32> =
                    raw.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
                py.detach(|| blocks::quantize_with_importance(&x, &shape, &scheme, w)).or_raise(py)?
            }
        };
        Ok(BlocksQuantized { quantized })
    })
}

/// A quantized tensor from its arrays (element codes of `shape`, scales of `kind` as bytes),
/// every length and code checked.
#[pyfunction]
#[pyo3(signature = (elements, shape, kind, scales, scheme, axis, global_scale))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn blocks_from_arrays(
    py: Python<'_>,
    elements: PyReadonlyArray1<'_, u8>,
    shape: Vec<usize>,
    kind: &str,
    scales: PyReadonlyArray1<'_, u8>,
    scheme: &str,
    axis: i64,
    global_scale: Option<f32>,
) -> PyResult<BlocksQuantized> {
    guarded(py, || {
        let scheme = Scheme::parse(scheme).or_raise(py)?;
        let scales = scales_of(py, kind, slice(py, &scales, "scales")?)?;
        let elements = slice(py, &elements, "elements")?.to_vec();
        let quantized = blocks::from_arrays(elements, &shape, scales, &scheme, axis, global_scale).or_raise(py)?;
        Ok(BlocksQuantized { quantized })
    })
}

/// The reverse of `BlocksQuantized.storage` for a weight of `shape`: the tensors as (name,
/// ONNX dtype name, shape, little-endian bytes).
#[pyfunction]
pub(crate) fn blocks_from_storage(
    py: Python<'_>,
    tensors: Vec<(String, String, Vec<usize>, PyReadonlyArray1<'_, u8>)>,
    scheme: &str,
    shape: Vec<usize>,
) -> PyResult<BlocksQuantized> {
    guarded(py, || {
        let scheme = Scheme::parse(scheme).or_raise(py)?;
        let mut stored = Vec::with_capacity(tensors.len());
        for (name, dtype, dims, data) in &tensors {
            let data = slice(py, data, name)?.to_vec();
            stored.push(StoredTensor { name: name.clone(), dtype: DType::parse(dtype).or_raise(py)?, shape: dims.clone(), data });
        }
        let quantized = py.detach(|| blocks::from_storage(&stored, &scheme, &shape)).or_raise(py)?;
        Ok(BlocksQuantized { quantized })
    })
}

/// The reverse of `BlocksQuantized.to_bytes` (`scale_dtype`: the dtype of scales stored in the
/// input's dtype).
#[pyfunction]
#[pyo3(signature = (data, scheme, shape, axis, layout, scale_dtype=None))]
pub(crate) fn blocks_from_bytes(
    py: Python<'_>,
    data: PyReadonlyArray1<'_, u8>,
    scheme: &str,
    shape: Vec<usize>,
    axis: i64,
    layout: &str,
    scale_dtype: Option<&str>,
) -> PyResult<BlocksQuantized> {
    guarded(py, || {
        let scheme = Scheme::parse(scheme).or_raise(py)?;
        let layout = ScaleLayout::parse(layout).or_raise(py)?;
        let data = slice(py, &data, "data")?;
        let quantized = match scale_dtype {
            None => blocks::from_bytes_in(data, &scheme, &shape, axis, layout).or_raise(py)?,
            Some(d) => {
                if layout.name != "linear" {
                    return Err(usage(py, "scale_dtype is for the linear layout (scales in the input's dtype)".to_string()));
                }
                let d = DType::parse(d).or_raise(py)?;
                blocks::from_bytes_with_scale_dtype(data, &scheme, &shape, axis, d).or_raise(py)?
            }
        };
        Ok(BlocksQuantized { quantized })
    })
}

/// Every scale layout: name and source.
#[pyfunction]
pub(crate) fn blocks_scale_layouts() -> Vec<(&'static str, &'static str)> {
    blocks::SCALE_LAYOUTS.iter().map(|l| (l.name, l.source)).collect()
}

/// `rows` x `cols` one-byte scales (row-major) in `layout`, padded.
#[pyfunction]
pub(crate) fn blocks_swizzle_scales<'py>(
    py: Python<'py>,
    scales: PyReadonlyArray1<'_, u8>,
    rows: usize,
    cols: usize,
    layout: &str,
) -> PyResult<Bound<'py, PyArray1<u8>>> {
    guarded(py, || {
        let layout = ScaleLayout::parse(layout).or_raise(py)?;
        let out = blocks::swizzle_scales(slice(py, &scales, "scales")?, rows, cols, layout).or_raise(py)?;
        Ok(PyArray1::from_vec(py, out))
    })
}

/// The reverse of `blocks_swizzle_scales`.
#[pyfunction]
pub(crate) fn blocks_unswizzle_scales<'py>(
    py: Python<'py>,
    data: PyReadonlyArray1<'_, u8>,
    rows: usize,
    cols: usize,
    layout: &str,
) -> PyResult<Bound<'py, PyArray1<u8>>> {
    guarded(py, || {
        let layout = ScaleLayout::parse(layout).or_raise(py)?;
        let out = blocks::unswizzle_scales(slice(py, &data, "data")?, rows, cols, layout).or_raise(py)?;
        Ok(PyArray1::from_vec(py, out))
    })
}

/// Registers the class and functions above.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<BlocksQuantized>()?;
    m.add_function(wrap_pyfunction!(blocks_schemes, m)?)?;
    m.add_function(wrap_pyfunction!(blocks_element_dtype, m)?)?;
    m.add_function(wrap_pyfunction!(blocks_quantize, m)?)?;
    m.add_function(wrap_pyfunction!(blocks_from_arrays, m)?)?;
    m.add_function(wrap_pyfunction!(blocks_from_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(blocks_from_storage, m)?)?;
    m.add_function(wrap_pyfunction!(blocks_scale_layouts, m)?)?;
    m.add_function(wrap_pyfunction!(blocks_swizzle_scales, m)?)?;
    m.add_function(wrap_pyfunction!(blocks_unswizzle_scales, m)?)?;
    Ok(())
}
