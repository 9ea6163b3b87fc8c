//! `lowbit.vectors(scheme=...)` and `lowbit.check(dump, scheme=...)` on the Rust side: block-unit
//! vectors and the block dump check of [`lowbit::verify::BlockUnit`].

use crate::{guarded, usage, OrRaise};
use lowbit::verify::{BlockDirection, BlockUnit};
use numpy::PyArray1;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};

fn unit(py: Python<'_>, scheme: &str, input: &str, direction: &str) -> PyResult<BlockUnit> {
    let input = lowbit::DType::parse(input).or_raise(py)?;
    let direction = BlockDirection::parse(direction).or_raise(py)?;
    BlockUnit::new(scheme, input, direction).or_raise(py)
}

/// Block vectors: a dict of flat arrays (`layout` None; `lowbit/__init__.py` shapes them) or the
/// text of the lines (`testfloat`, `csv`).
#[pyfunction]
#[pyo3(signature = (scheme, input, direction, count, seed, layout))]
pub(crate) fn block_vectors<'py>(
    py: Python<'py>,
    scheme: &str,
    input: &str,
    direction: &str,
    count: Option<u64>,
    seed: u64,
    layout: Option<&str>,
) -> PyResult<Bound<'py, PyAny>> {
    guarded(py, || {
        let u = unit(py, scheme, input, direction)?;
        let csv = match layout {
            None | Some("testfloat") => false,
            Some("csv") => true,
            Some(other) => {
                return Err(usage(py, format!("layout must be None, \"testfloat\" or \"csv\", not {other:?}")))
            }
        };
        let vectors = py.detach(|| u.vectors(count, seed)).or_raise(py)?;
        if layout.is_some() {
            let mut text = Vec::new();
            u.write_lines(&mut text, &vectors, csv).map_err(|e| usage(py, format!("writing the vectors: {e}")))?;
            return Ok(PyString::new(py, &String::from_utf8_lossy(&text)).into_any());
        }
        let dict = PyDict::new(py);
        let flat32 =
            |f: &dyn Fn(&lowbit::verify::BlockVector) -> Vec<u32>| -> Vec<u32> { vectors.iter().flat_map(f).collect() };
        dict.set_item("block", u.block())?;
        dict.set_item("case", vectors.iter().map(|v| v.case).collect::<Vec<_>>())?;
        dict.set_item("inputs", PyArray1::from_vec(py, flat32(&|v| v.inputs.clone())))?;
        if u.has_global() {
            dict.set_item("global_scale", PyArray1::from_vec(py, flat32(&|v| v.global.into_iter().collect())))?;
        } else {
            dict.set_item("global_scale", py.None())?;
        }
        dict.set_item("scale", PyArray1::from_vec(py, flat32(&|v| vec![v.scale])))?;
        let elements: Vec<u8> = vectors.iter().flat_map(|v| v.elements.iter().copied()).collect();
        dict.set_item("elements", PyArray1::from_vec(py, elements))?;
        dict.set_item("values", PyArray1::from_vec(py, flat32(&|v| v.values.clone())))?;
        Ok(dict.into_any())
    })
}

/// Checks a block unit's dump (text, or the file at `path`).
#[pyfunction]
#[pyo3(signature = (scheme, input, direction, text, path, allow_empty))]
pub(crate) fn block_check<'py>(
    py: Python<'py>,
    scheme: &str,
    input: &str,
    direction: &str,
    text: Option<&[u8]>,
    path: Option<std::path::PathBuf>,
    allow_empty: bool,
) -> PyResult<Bound<'py, PyDict>> {
    guarded(py, || {
        let u = unit(py, scheme, input, direction)?;
        let (s, name) = match (text, path) {
            (Some(t), None) => (py.detach(|| u.check(t, "the dump")).or_raise(py)?, "the dump".to_string()),
            (None, Some(p)) => {
                let name = p.display().to_string();
                let file = std::fs::File::open(&p)
                    .map_err(|e| lowbit::Error::Io { path: name.clone(), message: e.to_string() })
                    .or_raise(py)?;
                (py.detach(|| u.check(std::io::BufReader::new(file), &name)).or_raise(py)?, name)
            }
            _ => return Err(usage(py, "give the dump as text or as a path, not both")),
        };
        lowbit::arguments::nonempty_dump(&name, s.checked, s.skipped, allow_empty).or_raise(py)?;
        let dict = PyDict::new(py);
        dict.set_item("checked", s.checked)?;
        dict.set_item("mismatches", s.mismatches)?;
        dict.set_item("skipped", s.skipped)?;
        dict.set_item("other_rule", s.other_rule.clone())?;
        dict.set_item("scale", s.scale.clone())?;
        let elements = PyDict::new(py);
        for (class, n) in &s.elements {
            elements.set_item(class.key(), n)?;
        }
        dict.set_item("elements", elements)?;
        dict.set_item("element_index", s.element_index.clone())?;
        dict.set_item("shown", s.shown.clone())?;
        dict.set_item("report", format!("{}: {}\n{}", u.scheme(), u.describe(), s.report()))?;
        Ok(dict)
    })
}

/// Registers the functions above.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(block_vectors, m)?)?;
    m.add_function(wrap_pyfunction!(block_check, m)?)?;
    Ok(())
}
