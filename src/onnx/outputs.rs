//! Writing a run's outputs all or nothing: every output goes to a new temporary file in the
//! output directory; only when all of them are written are they renamed into place. On an error
//! the temporary files are removed, as are the folders this call created, so nothing new remains.

use super::tensor_proto::write_tensor_proto;
use crate::error::{Error, Result};
use crate::files::check_output_name;
use crate::tensor::Tensor;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

/// The folders `create_dir_all(dir)` would create, outermost first.
fn missing_folders(dir: &Path) -> Vec<PathBuf> {
    let mut missing: Vec<PathBuf> = dir
        .ancestors()
        .take_while(|p| !p.as_os_str().is_empty() && std::fs::symlink_metadata(p).is_err())
        .map(Path::to_path_buf)
        .collect();
    missing.reverse();
    missing
}

/// Files and folders made by [`write_outputs`] that are removed unless it succeeds.
struct Undo {
    temporary: Vec<PathBuf>,
    placed: Vec<PathBuf>,
    folders: Vec<PathBuf>,
    done: bool,
}

impl Drop for Undo {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        // Best effort: the error being reported matters more than one that cleaning up meets.
        for path in self.temporary.iter().chain(&self.placed) {
            let _ = std::fs::remove_file(path);
        }
        for folder in self.folders.iter().rev() {
            let _ = std::fs::remove_dir(folder);
        }
    }
}

/// Writes each output as a serialized TensorProto `dir/NAME.pb` (creating `dir` if needed), all or
/// nothing: names are checked first ([`check_output_name`]), each output is written to a new
/// temporary file in `dir`, and only when every one is written are they renamed into place. An
/// existing `NAME.pb` is replaced; one that is not a regular file is an error before anything is
/// renamed. Returns the paths written, in order.
pub fn write_outputs(dir: &Path, outputs: &[(String, Tensor)]) -> Result<Vec<PathBuf>> {
    for (name, _) in outputs {
        check_output_name(name)?;
    }
    let mut undo = Undo { temporary: Vec::new(), placed: Vec::new(), folders: missing_folders(dir), done: false };
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let mut finals = Vec::new();
    for (k, (name, tensor)) in outputs.iter().enumerate() {
        let target = dir.join(format!("{name}.pb"));
        if let Ok(existing) = std::fs::symlink_metadata(&target) {
            if !existing.file_type().is_file() {
                return Err(Error::Io {
                    path: target.display().to_string(),
                    message: "exists and is not a regular file; lowbit replaces only regular files".into(),
                });
            }
        }
        let temporary = dir.join(format!(".lowbit-{}-{k}.pb.tmp", std::process::id()));
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temporary)
            .map_err(|e| Error::io(&temporary, e))?;
        undo.temporary.push(temporary.clone());
        let mut writer = BufWriter::new(file);
        write_tensor_proto(&mut writer, tensor, Some(name)).map_err(|e| Error::io(&target, e))?;
        let file = writer.into_inner().map_err(|e| Error::io(&target, e.into_error()))?;
        file.sync_all().map_err(|e| Error::io(&target, e))?;
        finals.push((temporary, target));
    }
    for (temporary, target) in &finals {
        std::fs::rename(temporary, target).map_err(|e| Error::io(target, e))?;
        undo.temporary.retain(|p| p != temporary);
        undo.placed.push(target.clone());
    }
    undo.done = true;
    Ok(finals.into_iter().map(|(_, target)| target).collect())
}
