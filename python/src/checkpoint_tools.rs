//! `lowbit._native` checkpoint quantize / which / convert (the Python side is
//! `lowbit/_checkpoint_tools.py`): the crate's `lowbit::checkpoint` functions, the GIL released
//! while they run, their reports as dicts.

use crate::{guarded, OrRaise};
use lowbit::checkpoint::{convert_checkpoint, overall, quantize_checkpoint, summary, which, Checkpoint, Reproduced, Selection};
use lowbit::quant::blocks::Scheme;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

fn threads_or_all(threads: Option<usize>) -> usize {
    threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())).max(1)
}

fn shard_of(py: Python<'_>, shard: Option<(usize, usize)>) -> PyResult<Option<(usize, usize)>> {
    match shard {
        Some((k, n)) if k == 0 || k > n => Err(crate::usage(py, format!("shard ({k}, {n}) is not (K, N) with 1 <= K <= N"))),
        other => Ok(other),
    }
}

/// Quantizes a checkpoint under `scheme` in its producer's convention; returns
/// `{"written": [...], "tensors": [{"name", "quantized", "why"}, ...]}`.
#[pyfunction]
#[pyo3(signature = (path, scheme, out, only=None, skip=None, threads=None, shard=None, imatrix=None))]
#[allow(clippy::too_many_arguments)]
pub fn checkpoint_quantize<'py>(
    py: Python<'py>,
    path: &str,
    scheme: &str,
    out: &str,
    only: Option<&str>,
    skip: Option<&str>,
    threads: Option<usize>,
    shard: Option<(usize, usize)>,
    imatrix: Option<&str>,
) -> PyResult<Bound<'py, PyDict>> {
    guarded(py, || {
        if let Some(ftype) = lowbit::checkpoint::ggml_mixture_of_scheme(scheme) {
            let written = py
                .detach(|| {
                    lowbit::checkpoint::quantize_ggml_mixture(
                        std::path::Path::new(path),
                        ftype,
                        imatrix.map(std::path::Path::new),
                        std::path::Path::new(out),
                    )
                })
                .or_raise(py)?;
            let d = PyDict::new(py);
            d.set_item("written", vec![out.to_string()])?;
            let list = PyList::empty(py);
            for t in &written {
                let e = PyDict::new(py);
                e.set_item("name", &t.name)?;
                e.set_item("quantized", t.converted)?;
                e.set_item("why", format!("ggml {}", t.ggml.name()))?;
                list.append(e)?;
            }
            d.set_item("tensors", list)?;
            return Ok(d);
        }
        let selection = Selection::new(only, skip).or_raise(py)?;
        let scheme = Scheme::parse(scheme).or_raise(py)?;
        let shard = shard_of(py, shard)?;
        let report = py
            .detach(|| {
                let ckpt = Checkpoint::open(path)?;
                quantize_checkpoint(&ckpt, &scheme, &selection, std::path::Path::new(out), threads_or_all(threads), shard, &mut |_, _| {})
            })
            .or_raise(py)?;
        let d = PyDict::new(py);
        let written: Vec<String> = report.written.iter().map(|p| p.display().to_string()).collect();
        d.set_item("written", written)?;
        let list = PyList::empty(py);
        for c in &report.choices {
            let t = PyDict::new(py);
            t.set_item("name", &c.name)?;
            t.set_item("quantized", c.quantized)?;
            t.set_item("why", &c.why)?;
            list.append(t)?;
        }
        d.set_item("tensors", list)?;
        Ok(d)
    })
}

fn reproduced<'py>(py: Python<'py>, r: &Reproduced) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("scheme", &r.scheme)?;
    d.set_item("share", r.share())?;
    d.set_item("elements_matched", r.elements_matched)?;
    d.set_item("elements", r.elements)?;
    d.set_item("scales_matched", r.scales_matched)?;
    d.set_item("scales", r.scales)?;
    d.set_item("error", r.error.clone())?;
    Ok(d)
}

/// Which recipe made `quantized` from `original`: `{"summary", "exact", "overall": [...],
/// "weights": [{"name", "stored_scheme", "ranking": [...]}, ...]}`, rankings best first.
#[pyfunction]
#[pyo3(signature = (quantized, original, threads=None, shard=None, only=None, skip=None))]
pub fn checkpoint_which<'py>(
    py: Python<'py>,
    quantized: &str,
    original: &str,
    threads: Option<usize>,
    shard: Option<(usize, usize)>,
    only: Option<&str>,
    skip: Option<&str>,
) -> PyResult<Bound<'py, PyDict>> {
    guarded(py, || {
        let shard = shard_of(py, shard)?;
        let selection = Selection::new(only, skip).or_raise(py)?;
        let origins = py
            .detach(|| {
                let (q, o) = (Checkpoint::open(quantized)?, Checkpoint::open(original)?);
                which(&q, &o, &selection, threads_or_all(threads), shard, &mut |_, _| {})
            })
            .or_raise(py)?;
        let totals = overall(&origins);
        let d = PyDict::new(py);
        d.set_item("summary", summary(&totals))?;
        d.set_item(
            "exact",
            totals.first().is_some_and(|r| r.elements_matched == r.elements && r.scales_matched == r.scales),
        )?;
        let all = PyList::empty(py);
        for r in &totals {
            all.append(reproduced(py, r)?)?;
        }
        d.set_item("overall", all)?;
        let weights = PyList::empty(py);
        for o in &origins {
            let w = PyDict::new(py);
            w.set_item("name", &o.name)?;
            w.set_item("stored_scheme", &o.stored_scheme)?;
            let ranking = PyList::empty(py);
            for r in &o.ranking {
                ranking.append(reproduced(py, r)?)?;
            }
            w.set_item("ranking", ranking)?;
            weights.append(w)?;
        }
        d.set_item("weights", weights)?;
        Ok(d)
    })
}

/// Converts MXFP4 / NVFP4 weights to the convention `to`; returns the files written.
#[pyfunction]
#[pyo3(signature = (path, to, out, threads=None, shard=None, only=None, skip=None))]
#[allow(clippy::too_many_arguments)]
pub fn checkpoint_convert(
    py: Python<'_>,
    path: &str,
    to: &str,
    out: &str,
    threads: Option<usize>,
    shard: Option<(usize, usize)>,
    only: Option<&str>,
    skip: Option<&str>,
) -> PyResult<Vec<String>> {
    guarded(py, || {
        let shard = shard_of(py, shard)?;
        let selection = Selection::new(only, skip).or_raise(py)?;
        let written = py
            .detach(|| {
                let ckpt = Checkpoint::open(path)?;
                convert_checkpoint(&ckpt, to, std::path::Path::new(out), &selection, threads_or_all(threads), shard, &mut |_, _| {})
            })
            .or_raise(py)?;
        Ok(written.iter().map(|p| p.display().to_string()).collect())
    })
}

/// Registers the functions in `_native`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(checkpoint_quantize, m)?)?;
    m.add_function(wrap_pyfunction!(checkpoint_which, m)?)?;
    m.add_function(wrap_pyfunction!(checkpoint_convert, m)?)?;
    Ok(())
}
