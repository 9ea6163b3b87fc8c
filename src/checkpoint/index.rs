//! Sharded safetensors checkpoints: `model.safetensors.index.json` maps each tensor name to the
//! shard holding it (`{"metadata": {...}, "weight_map": {"NAME": "model-00001-of-00002.safetensors"}}`).
//! A shard name is checked as ONNX external data locations are: a relative path of plain
//! components (no root, no `..`), which, with every symbolic link resolved, is a regular file
//! inside the index's folder.

use super::checkpoint_error;
use super::json::check_json;
use crate::error::{quoted, Result};
use crate::files::{check_regular, is_plain_relative, read_file_limited};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The largest index file read (real ones are well under 10 MB).
const MAX_INDEX_BYTES: u64 = 100_000_000;

/// The index: every shard (canonical paths, in first-use order) and each tensor's shard.
pub(crate) struct ShardIndex {
    pub(crate) shards: Vec<PathBuf>,
    pub(crate) tensor_shard: BTreeMap<String, usize>,
}

/// Reads and checks the index file at `path`.
pub(crate) fn read_index(path: &Path) -> Result<ShardIndex> {
    let bytes = read_file_limited(path, MAX_INDEX_BYTES)?;
    let fail =
        |tensor: Option<&str>, offset: Option<u64>, message: String| checkpoint_error(path, tensor, offset, message);
    check_json(&bytes).map_err(|(message, at)| fail(None, Some(at), message))?;
    let value: serde_json::Value = serde_json::from_slice(&bytes).map_err(|e| fail(None, None, e.to_string()))?;
    let map = value
        .get("weight_map")
        .and_then(serde_json::Value::as_object)
        .ok_or_else(|| fail(None, None, "no \"weight_map\" object".into()))?;
    let folder = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let folder = folder.canonicalize().map_err(|e| crate::Error::io(folder, e))?;
    let mut shards: Vec<PathBuf> = Vec::new();
    let mut by_location: BTreeMap<String, usize> = BTreeMap::new();
    let mut tensor_shard = BTreeMap::new();
    for (name, location) in map {
        let shown = quoted(name);
        let location = location.as_str().ok_or_else(|| fail(Some(&shown), None, "its shard is not a string".into()))?;
        if let Some(&k) = by_location.get(location) {
            tensor_shard.insert(name.clone(), k);
            continue;
        }
        let relative = Path::new(location);
        if location.contains('\0') || !is_plain_relative(relative) {
            return Err(fail(
                Some(&shown),
                None,
                format!(
                    "shard {} must be a relative path inside the index's folder (no root, no '..')",
                    quoted(location)
                ),
            ));
        }
        let resolved = folder
            .join(relative)
            .canonicalize()
            .map_err(|e| fail(Some(&shown), None, format!("shard {}: {e}", quoted(location))))?;
        if !resolved.starts_with(&folder) {
            return Err(fail(
                Some(&shown),
                None,
                format!(
                    "shard {} leads outside the index's folder (to {})",
                    quoted(location),
                    quoted(&resolved.display().to_string())
                ),
            ));
        }
        let metadata = std::fs::metadata(&resolved).map_err(|e| crate::Error::io(&resolved, e))?;
        check_regular(&resolved, &metadata)?;
        // Two spellings of one file (`a` and `./a`) are one shard.
        let k = shards.iter().position(|s| *s == resolved).unwrap_or_else(|| {
            shards.push(resolved);
            shards.len() - 1
        });
        by_location.insert(location.to_string(), k);
        tensor_shard.insert(name.clone(), k);
    }
    Ok(ShardIndex { shards, tensor_shard })
}
