//! `lowbit._native` checkpoint functions (the Python side is `lowbit/checkpoint.py`): a checkpoint
//! opened and checked by the crate (`lowbit::checkpoint`), its tensors listed with the file and
//! byte range of each (the Python side maps the file and views the bytes without copying), its
//! logical weights with convention and scheme, and a weight dequantized to float32.

use crate::{guarded, OrRaise};
use lowbit::checkpoint::{
    dequantize_f32, recognise, scale_problems, shard_of, write_dequantized, write_gguf, Checkpoint, GgmlType,
    GgufTensor, GgufValue, LogicalWeight, StoredType,
};
use numpy::PyArray1;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

/// An open checkpoint.
#[pyclass(frozen, module = "lowbit._native")]
pub struct NativeCheckpoint {
    checkpoint: Checkpoint,
    weights: Vec<LogicalWeight>,
}

/// Opens and checks a checkpoint (a file, an index or a folder).
#[pyfunction]
pub fn checkpoint_open(py: Python<'_>, path: &str) -> PyResult<NativeCheckpoint> {
    guarded(py, || {
        let checkpoint = py.detach(|| Checkpoint::open(path)).or_raise(py)?;
        let mut weights = recognise(&checkpoint);
        for w in &mut weights {
            let found = scale_problems(&checkpoint, w).or_raise(py)?;
            w.problems.extend(found);
        }
        Ok(NativeCheckpoint { checkpoint, weights })
    })
}

#[pymethods]
impl NativeCheckpoint {
    /// "safetensors" or "gguf".
    fn container(&self) -> &'static str {
        match self.checkpoint.container() {
            lowbit::checkpoint::Container::Safetensors => "safetensors",
            lowbit::checkpoint::Container::Gguf => "gguf",
        }
    }

    /// Every tensor as a dict: name, dtype (an ONNX name, or `ggml:TYPE` for ggml blocks), shape,
    /// file, offset, nbytes.
    fn tensors<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let files = self.checkpoint.files();
        let list = PyList::empty(py);
        for t in self.checkpoint.tensors() {
            let d = PyDict::new(py);
            d.set_item("name", &t.name)?;
            let dtype = match t.stored {
                StoredType::Plain(dtype) => dtype.onnx_name().to_string(),
                StoredType::Ggml(g) => format!("ggml:{}", g.name()),
            };
            d.set_item("dtype", dtype)?;
            d.set_item("shape", t.shape.clone())?;
            d.set_item("file", files[t.file].display().to_string())?;
            d.set_item("offset", t.offset)?;
            d.set_item("nbytes", t.len)?;
            list.append(d)?;
        }
        Ok(list)
    }

    /// Every logical weight as a dict: name, convention, scheme, why, shape, tensors, problems.
    fn weights<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        for w in &self.weights {
            let d = PyDict::new(py);
            d.set_item("name", &w.name)?;
            d.set_item("convention", w.convention)?;
            d.set_item("scheme", w.scheme.clone())?;
            d.set_item("why", &w.why)?;
            d.set_item("shape", w.shape.clone())?;
            d.set_item("tensors", w.tensors())?;
            d.set_item("problems", w.problems.clone())?;
            list.append(d)?;
        }
        Ok(list)
    }

    /// The logical weight `name` dequantized (or converted) to float32, flat.
    fn dequantize<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyArray1<f32>>> {
        guarded(py, || {
            let w = self
                .weights
                .iter()
                .find(|w| w.name == name)
                .ok_or_else(|| crate::usage(py, format!("no weight named {}", lowbit::Error::quote(name))))?;
            let values = py.detach(|| dequantize_f32(&self.checkpoint, w)).or_raise(py)?;
            Ok(PyArray1::from_vec(py, values))
        })
    }
}

/// Dequantizes the checkpoint at `path` (or slice `shard` = (K, N) of its weights, K from 1)
/// into the safetensors file `out`, all or nothing: `lowbit checkpoint dequantize`. The answer
/// lists the weights copied as stored under `keep_unsupported`, with the reason.
#[pyfunction]
#[pyo3(signature = (path, out, dtype, shard=None, threads=1, keep_unsupported=false))]
pub fn checkpoint_dequantize(
    py: Python<'_>,
    path: &str,
    out: &str,
    dtype: &str,
    shard: Option<(usize, usize)>,
    threads: usize,
    keep_unsupported: bool,
) -> PyResult<Vec<String>> {
    guarded(py, || {
        let float = match dtype {
            "float32" => lowbit::DType::Float,
            "bfloat16" => lowbit::DType::Bfloat16,
            "float16" => lowbit::DType::Float16,
            other => {
                return Err(crate::usage(
                    py,
                    format!("dtype {} is not float32, bfloat16 or float16", lowbit::Error::quote(other)),
                ))
            }
        };
        py.detach(|| {
            let checkpoint = Checkpoint::open(path)?;
            let weights = shard_of(recognise(&checkpoint), shard)?;
            let out = std::path::Path::new(out);
            write_dequantized(&checkpoint, &weights, out, float, threads, keep_unsupported, &mut |_| {})
        })
        .or_raise(py)
    })
}

/// Writes a GGUF v3 file, all or nothing: `tensors` as (name, ggml type name, shape in numpy
/// order, raw bytes: ggml's blocks or plain little-endian elements), `metadata` as string
/// key/values, data aligned to 32 bytes.
#[pyfunction]
pub fn checkpoint_write_gguf(
    py: Python<'_>,
    path: &str,
    tensors: Vec<(String, String, Vec<usize>, Vec<u8>)>,
    metadata: Vec<(String, String)>,
) -> PyResult<()> {
    guarded(py, || {
        let mut infos = Vec::with_capacity(tensors.len());
        for (name, ggml, shape, _) in &tensors {
            let ggml = GgmlType::from_name(ggml)
                .ok_or_else(|| crate::usage(py, format!("{} is not a ggml type name", lowbit::Error::quote(ggml))))?;
            infos.push(GgufTensor { name: name.clone(), ggml, shape: shape.clone() });
        }
        let metadata: Vec<(String, GgufValue)> =
            metadata.into_iter().map(|(k, v)| (k, GgufValue::String(v.into_bytes()))).collect();
        py.detach(|| {
            write_gguf(std::path::Path::new(path), &infos, &metadata, 32, |k, out| {
                out.write_all(&tensors[k].3).map_err(|e| lowbit::Error::io(std::path::Path::new(path), e))
            })
        })
        .or_raise(py)
    })
}

/// Registers the checkpoint functions in `_native`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<NativeCheckpoint>()?;
    m.add_function(wrap_pyfunction!(checkpoint_open, m)?)?;
    m.add_function(wrap_pyfunction!(checkpoint_dequantize, m)?)?;
    m.add_function(wrap_pyfunction!(checkpoint_write_gguf, m)?)?;
    Ok(())
}
