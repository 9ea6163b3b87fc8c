//! **The inputs of a run checked against the graph**: every name given is a declared input,
//! given once; every declared input without an initializer is given; each tensor has the
//! declared element type and rank, fixed dimensions match and each symbolic dimension (`N`,
//! `batch`) stands for one length across all inputs. Each error names the input, what the model
//! declares and what was given, so a wrong file is found before anything runs.

use super::proto::{TypeProtoTensor, ValueInfoProto};
use super::runner::Model;
use crate::dtype::DType;
use crate::error::{quoted, shown_shape, Error, Result};
use crate::tensor::Tensor;
use std::collections::{HashMap, HashSet};

fn input_error(message: String) -> Error {
    Error::InvalidOp { op: "run".into(), message }
}

/// The declared inputs: every graph input, with whether an initializer gives it a value.
fn declared(model: &Model) -> Vec<(&ValueInfoProto, bool)> {
    let init: HashSet<&str> = model.graph.initializer.iter().filter_map(|t| t.name.as_deref()).collect();
    model
        .graph
        .input
        .iter()
        .filter(|i| i.name.is_some())
        .map(|i| (i, init.contains(i.name.as_deref().unwrap_or_default())))
        .collect()
}

/// Checks the names of the inputs given, before any file is read: each is a declared input of
/// the graph, none is given twice, and every declared input without an initializer is given.
pub fn check_input_names(model: &Model, names: &[&str]) -> Result<()> {
    let inputs = declared(model);
    let known = || {
        let names: Vec<&str> = inputs.iter().filter_map(|(i, _)| i.name.as_deref()).collect();
        if names.is_empty() {
            "the model declares no input".to_string()
        } else {
            format!("the model's inputs: {}", names.join(", "))
        }
    };
    let mut seen = HashSet::new();
    for name in names {
        if !inputs.iter().any(|(i, _)| i.name.as_deref() == Some(name)) {
            return Err(input_error(format!("input {} is not an input of the model ({})", quoted(name), known())));
        }
        if !seen.insert(*name) {
            return Err(input_error(format!("input {} is given more than once", quoted(name))));
        }
    }
    let missing: Vec<&str> = inputs
        .iter()
        .filter(|(i, initialized)| !initialized && !seen.contains(i.name.as_deref().unwrap_or_default()))
        .filter_map(|(i, _)| i.name.as_deref())
        .collect();
    if !missing.is_empty() {
        let what = if missing.len() == 1 { "input" } else { "inputs" };
        return Err(input_error(format!("the model's {what} {} not given (--input NAME=FILE.pb)", {
            let names: Vec<String> = missing.iter().map(|n| quoted(n)).collect();
            format!("{} {}", names.join(", "), if missing.len() == 1 { "is" } else { "are" })
        })));
    }
    Ok(())
}

/// The declared type in words: `FLOAT [3, N]`, `FLOAT (any shape)`, `any type`.
fn declared_text(tensor_type: Option<&TypeProtoTensor>) -> String {
    let Some(t) = tensor_type else { return "any type".into() };
    let dtype = match t.elem_type.filter(|&n| n != 0).map(|n| DType::from_onnx_number(i64::from(n))) {
        Some(Ok(d)) => d.onnx_name().to_string(),
        Some(Err(_)) => format!("element type {}", t.elem_type.unwrap_or_default()),
        None => "any type".into(),
    };
    let shape = match &t.shape {
        None => "(any shape)".to_string(),
        Some(s) => {
            let dims: Vec<String> = s
                .dim
                .iter()
                .map(|d| match (d.dim_value, d.dim_param.as_deref()) {
                    (Some(v), _) => v.to_string(),
                    (None, Some(p)) if !p.is_empty() => p.to_string(),
                    _ => "?".into(),
                })
                .collect();
            format!("[{}]", dims.join(", "))
        }
    };
    format!("{dtype} {shape}")
}

/// Checks the tensors given against the declared inputs (the names as [`check_input_names`]
/// does, then element type, rank, fixed dimensions, and symbolic dimensions bound to one length
/// across every input) and returns them by name for [`Model::run_with`].
pub fn bind_inputs(model: &Model, given: Vec<(String, Tensor)>) -> Result<HashMap<String, Tensor>> {
    let names: Vec<&str> = given.iter().map(|(n, _)| n.as_str()).collect();
    check_input_names(model, &names)?;
    let inputs = declared(model);
    // Each symbolic dimension's length, and the input that bound it.
    let mut bound: HashMap<String, (usize, String)> = HashMap::new();
    for (name, tensor) in &given {
        let Some((info, _)) = inputs.iter().find(|(i, _)| i.name.as_deref() == Some(name.as_str())) else {
            continue;
        };
        let tensor_type = info.r#type.as_ref().and_then(|t| t.tensor_type.as_ref());
        let Some(t) = tensor_type else { continue };
        let mismatch = |why: String| {
            input_error(format!(
                "input {}: the model declares {}, the file holds {} {}: {why}",
                quoted(name),
                declared_text(tensor_type),
                tensor.dtype(),
                shown_shape(tensor.shape())
            ))
        };
        if let Some(n) = t.elem_type.filter(|&n| n != 0) {
            if i64::from(n) != i64::from(tensor.dtype().onnx_number()) {
                return Err(mismatch("another element type".into()));
            }
        }
        let Some(shape) = &t.shape else { continue };
        if shape.dim.len() != tensor.shape().len() {
            return Err(mismatch(format!("rank {}, not {}", tensor.shape().len(), shape.dim.len())));
        }
        for (axis, (dim, &len)) in shape.dim.iter().zip(tensor.shape()).enumerate() {
            match (dim.dim_value, dim.dim_param.as_deref()) {
                (Some(v), _) if usize::try_from(v).ok() != Some(len) => {
                    return Err(mismatch(format!("dimension {axis} is {len}, not {v}")));
                }
                (None, Some(param)) if !param.is_empty() => match bound.get(param) {
                    Some((first, by)) if *first != len => {
                        return Err(mismatch(format!(
                            "dimension {axis} ({param}) is {len}, but input {} gave {param} = {first}",
                            quoted(by)
                        )));
                    }
                    Some(_) => {}
                    None => {
                        bound.insert(param.to_string(), (len, name.clone()));
                    }
                },
                _ => {}
            }
        }
    }
    Ok(given.into_iter().collect())
}
