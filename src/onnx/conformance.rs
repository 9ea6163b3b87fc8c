//! The ONNX backend node-test runner: a test folder holds `model.onnx` and
//! `test_data_set_N/input_K.pb`, `output_K.pb`. `exact` compares bits (NaN payloads included);
//! `onnx` is the ONNX backend runner's comparison (`assert_allclose` with rtol 1e-3, atol 1e-7,
//! NaN equal to NaN; strings and integers exactly).

use super::runner::Model;
use super::tensor_proto::read_tensor_file;
use crate::convert::{decode_element, Element};
use crate::error::{Error, Result};
use crate::format;
use crate::profile::Profile;
use crate::round::{self, RoundingOptions};
use crate::tensor::Tensor;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// How outputs are compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tolerance {
    /// Bit for bit, NaN payloads included.
    Exact,
    /// The ONNX backend runner's `assert_allclose(rtol=1e-3, atol=1e-7)`.
    Onnx,
}

impl Tolerance {
    /// Parses `exact` or `onnx`.
    pub fn parse(s: &str) -> Result<Tolerance> {
        match s {
            "exact" => Ok(Tolerance::Exact),
            "onnx" => Ok(Tolerance::Onnx),
            other => Err(Error::InvalidOp {
                op: "conformance".into(),
                message: format!("unknown tolerance {}; use exact or onnx", crate::error::quoted(other)),
            }),
        }
    }
}

/// Why an output differs, or `None` if it matches.
#[must_use]
pub fn compare(expected: &Tensor, actual: &Tensor, tolerance: Tolerance) -> Option<String> {
    if expected.dtype() != actual.dtype() {
        return Some(format!("dtype: expected {}, actual {}", expected.dtype(), actual.dtype()));
    }
    if expected.shape() != actual.shape() {
        return Some(format!(
            "shape: expected {}, actual {}",
            crate::error::shown_shape(expected.shape()),
            crate::error::shown_shape(actual.shape())
        ));
    }
    if let (Some(e), Some(a)) = (expected.strings(), actual.strings()) {
        return e
            .iter()
            .zip(a)
            .position(|(x, y)| x != y)
            .map(|i| format!("element {i}: expected {:?}, actual {:?}", &e[i], &a[i]));
    }
    let dtype = expected.dtype();
    let width = dtype.bits().unwrap_or(8).div_ceil(4) as usize;
    let (Ok(e), Ok(a)) = (expected.codes(), actual.codes()) else {
        // Complex values: compare the raw bytes.
        return (expected.raw() != actual.raw()).then(|| "raw bytes differ".to_string());
    };
    for (i, (&x, &y)) in e.iter().zip(&a).enumerate() {
        let same = match tolerance {
            Tolerance::Exact => x == y,
            Tolerance::Onnx => close(dtype, x, y),
        };
        if !same {
            return Some(format!("element {i}: expected 0x{x:0width$x}, actual 0x{y:0width$x}"));
        }
    }
    None
}

/// `assert_allclose(actual, desired, rtol=1e-3, atol=1e-7)` on one element: NaN matches NaN,
/// infinities match when equal, -0 matches +0.
fn close(dtype: crate::DType, expected: u64, actual: u64) -> bool {
    let as_f64 = |code| match decode_element(dtype, code) {
        Ok(Element::Float(v)) => f64::from_bits(round::encode(&format::F64, v, RoundingOptions::IEEE)),
        Ok(Element::Int(i)) => i as f64,
        Ok(Element::Bool(b)) => f64::from(u8::from(b)),
        Err(_) => f64::NAN,
    };
    let (e, a) = (as_f64(expected), as_f64(actual));
    if e.is_nan() || a.is_nan() {
        return e.is_nan() && a.is_nan();
    }
    if e.is_infinite() || a.is_infinite() {
        return e == a;
    }
    (a - e).abs() <= 1e-7 + 1e-3 * e.abs()
}

/// The result of one test folder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// The test folder's name (`test_cast_FLOAT_to_FLOAT8E4M3FN`, ...).
    pub name: String,
    /// `None` if every data set matched; otherwise the first problem.
    pub failure: Option<String>,
}

fn data_sets(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut sets: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| Error::io(dir, e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir() && p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("test_data_set_")))
        .collect();
    sets.sort();
    Ok(sets)
}

fn numbered(dir: &Path, prefix: &str) -> Vec<PathBuf> {
    (0..).map(|k| dir.join(format!("{prefix}_{k}.pb"))).take_while(|p| p.exists()).collect()
}

/// Runs every data set of one test folder.
pub fn run_test(dir: &Path, profile: Profile, tolerance: Tolerance) -> Outcome {
    let name = dir.file_name().map_or_else(|| dir.display().to_string(), |n| n.to_string_lossy().into_owned());
    let failure = match run_test_inner(dir, profile, tolerance) {
        Ok(f) => f,
        Err(e) => Some(e.to_string()),
    };
    Outcome { name, failure }
}

fn run_test_inner(dir: &Path, profile: Profile, tolerance: Tolerance) -> Result<Option<String>> {
    let model = Model::load(&dir.join("model.onnx"))?;
    let sets = data_sets(dir)?;
    if sets.is_empty() {
        return Err(Error::InvalidOp {
            op: "conformance".into(),
            message: format!("{} has no test_data_set_N folder", dir.display()),
        });
    }
    let input_names = model.input_names();
    for set in sets {
        let mut inputs = HashMap::new();
        for (k, path) in numbered(&set, "input").iter().enumerate() {
            let name = input_names.get(k).cloned().ok_or_else(|| Error::InvalidOp {
                op: "conformance".into(),
                message: format!("{} has more inputs than the model", set.display()),
            })?;
            inputs.insert(name, read_tensor_file(path)?);
        }
        let outputs = model.run(&inputs, profile)?;
        let expected = numbered(&set, "output");
        if expected.len() != outputs.len() {
            return Ok(Some(format!("expected {} outputs, the model produced {}", expected.len(), outputs.len())));
        }
        for (k, (path, (_, actual))) in expected.iter().zip(&outputs).enumerate() {
            if let Some(why) = compare(&read_tensor_file(path)?, actual, tolerance) {
                let set_name = set.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                return Ok(Some(format!("{set_name} output {k}: {why}")));
            }
        }
    }
    Ok(None)
}

/// One line per test (`PASS name` or `FAIL name: why`), then `N passed, M failed`.
#[must_use]
pub fn report(outcomes: &[Outcome]) -> String {
    let mut lines: Vec<String> = outcomes
        .iter()
        .map(|o| match &o.failure {
            None => format!("PASS {}", o.name),
            Some(why) => format!("FAIL {}: {why}", o.name),
        })
        .collect();
    let failed = outcomes.iter().filter(|o| o.failure.is_some()).count();
    lines.push(format!("{} passed, {failed} failed", outcomes.len() - failed));
    lines.join("\n")
}

/// Test folders: each argument is a test folder, or a folder of test folders.
pub fn test_dirs(args: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut dirs = Vec::new();
    for arg in args {
        if arg.join("model.onnx").exists() {
            dirs.push(arg.clone());
            continue;
        }
        let mut inner: Vec<PathBuf> = std::fs::read_dir(arg)
            .map_err(|e| Error::io(arg, e))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.join("model.onnx").exists())
            .collect();
        if inner.is_empty() {
            return Err(Error::Io {
                path: arg.display().to_string(),
                message: "no model.onnx here or in its folders".into(),
            });
        }
        inner.sort();
        dirs.extend(inner);
    }
    Ok(dirs)
}
