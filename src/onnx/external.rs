//! Tensors whose bytes live in another file (onnx.proto `data_location = EXTERNAL`), as ONNX
//! models over 2 GB store their weights.
//!
//! onnx.proto: the tensor's `external_data` holds key-value pairs: `location` (required; a path
//! relative to the directory of the model file), `offset` (optional; where the bytes start,
//! decimal, default 0) and `length` (optional; how many bytes, decimal, default: the rest of the
//! file), and `checksum` (optional; a SHA-1 digest of the file). The bytes are what `raw_data`
//! would hold. lowbit reads them into `raw_data` when it loads the model ([`resolve`]), after these
//! checks, each failure an [`Error::ExternalData`] naming the tensor:
//!
//! - `location` is a relative path of plain components: no root, no `..` (the ONNX text says such
//!   components "are disallowed"; lowbit refuses them rather than strip them), no NUL;
//! - the file, with every symbolic link resolved, is inside the model's directory (also resolved),
//!   and is a regular file;
//! - `offset` and `length` are decimal integers, `offset + length` is within the file, and
//!   `length` is exactly the bytes the tensor's type and dims need;
//! - the bytes read for the whole model stay within [`Limits::max_memory`] (checked before each
//!   read);
//! - the tensor is not STRING (which has no raw layout), has no `raw_data` of its own, and has
//!   `data_location = EXTERNAL` exactly when it has `external_data`.
//!
//! `checksum` is accepted and not verified; `basepath` (which some tools add after loading) and
//! any other key are ignored.

use super::limits::Limits;
use super::proto::{GraphProto, TensorProto};
use super::quoted;
use crate::dtype::DType;
use crate::error::{BudgetKind, Error, Result};
use crate::files::{check_regular, is_plain_relative};
use crate::packing;
use crate::tensor::element_count;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// onnx.proto `TensorProto.DataLocation.EXTERNAL`.
pub const EXTERNAL: i32 = 1;

/// True if the tensor's bytes are in another file.
#[must_use]
pub fn is_external(p: &TensorProto) -> bool {
    p.data_location == Some(EXTERNAL) || !p.external_data.is_empty()
}

/// The keys of one tensor's `external_data`, parsed.
struct Entry {
    location: String,
    offset: u64,
    length: Option<u64>,
}

fn entry(p: &TensorProto, fail: &dyn Fn(String) -> Error) -> Result<Entry> {
    let (mut location, mut offset, mut length) = (None, None, None);
    for pair in &p.external_data {
        let key = pair.key.as_deref().unwrap_or("");
        let value = pair.value.clone().unwrap_or_default();
        let slot = match key {
            "location" => &mut location,
            "offset" => &mut offset,
            "length" => &mut length,
            _ => continue,
        };
        if slot.is_some() {
            return Err(fail(format!("the key {key} is given twice")));
        }
        *slot = Some(value);
    }
    let number = |key: &str, text: Option<String>| -> Result<Option<u64>> {
        let Some(text) = text else { return Ok(None) };
        if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
            return Err(fail(format!("{key} {} is not a decimal byte count", quoted(&text))));
        }
        text.parse().map(Some).map_err(|_| fail(format!("{key} {} is too large", quoted(&text))))
    };
    let location = location.ok_or_else(|| fail("the location key is missing".into()))?;
    Ok(Entry { offset: number("offset", offset)?.unwrap_or(0), length: number("length", length)?, location })
}

/// The bytes `p` needs in `raw_data`, from its type and dims.
fn needed_bytes(p: &TensorProto, fail: &dyn Fn(String) -> Error) -> Result<u64> {
    let dtype = DType::from_onnx_number(i64::from(p.data_type.unwrap_or(0)))?;
    if matches!(dtype, DType::String | DType::Undefined) {
        return Err(fail(format!("a {dtype} tensor cannot be stored as external data (it has no raw layout)")));
    }
    let shape = p
        .dims
        .iter()
        .map(|&d| usize::try_from(d).map_err(|_| fail(format!("a dim is negative ({d})"))))
        .collect::<Result<Vec<_>>>()?;
    Ok(packing::raw_len(dtype, element_count(&shape)?)? as u64)
}

/// Reads the external bytes of `p` into its `raw_data`, from the file named relative to
/// `model_dir` (canonical), adding the bytes read to `*loaded`.
fn load_tensor(p: &mut TensorProto, model_dir: &Path, limits: &Limits, loaded: &mut u64) -> Result<()> {
    let name = quoted(p.name.as_deref().unwrap_or(""));
    let fail = |message: String| Error::ExternalData { tensor: name.clone(), message };
    if p.data_location != Some(EXTERNAL) {
        return Err(fail("external_data is given but data_location is not EXTERNAL".into()));
    }
    if p.raw_data.is_some() {
        return Err(fail("the tensor has both raw_data and external data".into()));
    }
    let Entry { location, offset, length } = entry(p, &fail)?;
    let needed = needed_bytes(p, &fail)?;
    let relative = Path::new(&location);
    if location.contains('\0') || !is_plain_relative(relative) {
        return Err(fail(format!(
            "location {} must be a relative path inside the model's directory (no root, no '..')",
            quoted(&location)
        )));
    }
    let shown = quoted(&location);
    let path: PathBuf = model_dir.join(relative);
    let resolved = path.canonicalize().map_err(|e| fail(format!("location {shown}: {e}")))?;
    if !resolved.starts_with(model_dir) {
        return Err(fail(format!(
            "location {shown} leads outside the model's directory (to {})",
            quoted(&resolved.display().to_string())
        )));
    }
    let metadata = std::fs::metadata(&resolved).map_err(|e| fail(format!("location {shown}: {e}")))?;
    check_regular(&resolved, &metadata).map_err(|e| fail(e.to_string()))?;
    let size = metadata.len();
    let end = match length {
        Some(length) => offset.checked_add(length).filter(|&end| end <= size).ok_or_else(|| {
            fail(format!("offset {offset} + length {length} is past the end of {shown} ({size} bytes)"))
        })?,
        None if offset <= size => size,
        None => return Err(fail(format!("offset {offset} is past the end of {shown} ({size} bytes)"))),
    };
    let length = end - offset;
    if length != needed {
        return Err(fail(format!(
            "the tensor's type and dims need {needed} bytes, but the external data has {length}"
        )));
    }
    if loaded.checked_add(length).is_none_or(|total| total > limits.max_memory) {
        return Err(Error::OverBudget {
            budget: BudgetKind::Memory,
            node: format!("tensor {name} (external data)"),
            needed: length,
            used: *loaded,
            limit: limits.max_memory,
        });
    }
    let io = |e: std::io::Error| fail(format!("location {shown}: {e}"));
    let mut file = File::open(&resolved).map_err(io)?;
    let opened = file.metadata().map_err(io)?;
    check_regular(&resolved, &opened).map_err(|e| fail(e.to_string()))?;
    file.seek(SeekFrom::Start(offset)).map_err(io)?;
    let mut bytes = Vec::new();
    let wanted = usize::try_from(length).map_err(|_| fail(format!("length {length} does not fit in memory")))?;
    bytes.try_reserve_exact(wanted).map_err(|_| fail(format!("cannot allocate {length} bytes")))?;
    // Exactly `length` bytes: the file may go on after them.
    file.take(length).read_to_end(&mut bytes).map_err(io)?;
    if bytes.len() as u64 != length {
        return Err(fail(format!("location {shown} ended after {} of {length} bytes (it shrank)", bytes.len())));
    }
    *loaded += length;
    p.raw_data = Some(bytes);
    p.external_data.clear();
    p.data_location = None;
    Ok(())
}

/// Reads every external tensor of `graph` (initializers, Constant values, tensors in attributes,
/// subgraphs) into its `raw_data`, from files in `model_dir`.
pub fn resolve(graph: &mut GraphProto, model_dir: &Path, limits: &Limits) -> Result<()> {
    let dir = model_dir.canonicalize().map_err(|e| Error::io(model_dir, e))?;
    let mut loaded = 0;
    resolve_graph(graph, &dir, limits, &mut loaded)
}

/// Reads the external bytes of one tensor (a TensorProto file's) from a file in `dir`.
pub fn resolve_tensor(p: &mut TensorProto, dir: &Path, limits: &Limits) -> Result<()> {
    let dir = dir.canonicalize().map_err(|e| Error::io(dir, e))?;
    load_tensor(p, &dir, limits, &mut 0)
}

fn resolve_graph(graph: &mut GraphProto, dir: &Path, limits: &Limits, loaded: &mut u64) -> Result<()> {
    let visit = |t: &mut TensorProto, loaded: &mut u64| {
        if is_external(t) {
            load_tensor(t, dir, limits, loaded)
        } else {
            Ok(())
        }
    };
    for t in &mut graph.initializer {
        visit(t, loaded)?;
    }
    for node in &mut graph.node {
        for a in &mut node.attribute {
            if let Some(t) = a.t.as_mut() {
                visit(t, loaded)?;
            }
            for t in &mut a.tensors {
                visit(t, loaded)?;
            }
            if let Some(g) = a.g.as_deref_mut() {
                resolve_graph(g, dir, limits, loaded)?;
            }
            for g in &mut a.graphs {
                resolve_graph(g, dir, limits, loaded)?;
            }
        }
    }
    Ok(())
}
