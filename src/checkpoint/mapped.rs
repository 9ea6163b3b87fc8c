//! A checkpoint file held open and memory-mapped: tensors are borrowed from the map (zero-copy),
//! or read piece by piece at an offset when a command streams through a file larger than memory
//! (pages of a map that were read stay counted in the process's resident memory; a positioned
//! read goes through the page cache only).
//!
//! A map cannot report an error: if another process truncates the file while it is mapped, reading
//! a page past the new end raises SIGBUS, which ends the process. So the map is read only while
//! the file is opened (its headers parsed) and where a tensor is borrowed whole, and each borrow
//! first checks that the file still has its mapped length ([`MappedFile::bytes_checked`]): a file
//! that shrank before then is an error naming it. What no check can catch is a truncation during
//! the read itself. The positioned reads of the streaming commands never touch the map: there a
//! file that shrank is an ordinary read error.

use crate::error::{Error, Result};
use crate::files::open_regular;
use std::fs::File;
use std::path::{Path, PathBuf};

/// One regular file, open and mapped read-only.
pub(crate) struct MappedFile {
    path: PathBuf,
    file: File,
    /// `None` for an empty file (a map cannot be empty).
    map: Option<memmap2::Mmap>,
}

impl MappedFile {
    /// Opens `path` (a regular file: devices, FIFOs and folders are refused) and maps it.
    pub(crate) fn open(path: &Path) -> Result<MappedFile> {
        let (file, metadata) = open_regular(path)?;
        let map = if metadata.len() == 0 { None } else { Some(map_read_only(&file, path)?) };
        Ok(MappedFile { path: path.to_path_buf(), file, map })
    }

    /// The whole file.
    pub(crate) fn bytes(&self) -> &[u8] {
        self.map.as_deref().unwrap_or(&[])
    }

    /// The whole file, after checking that it still has the length it was mapped with (see the
    /// module's note): an `Err` naming the file where another process truncated (or extended) it.
    pub(crate) fn bytes_checked(&self) -> Result<&[u8]> {
        let mapped = self.bytes().len() as u64;
        let now = self.file.metadata().map_err(|e| Error::io(&self.path, e))?.len();
        if now != mapped {
            return Err(Error::Io {
                path: self.path.display().to_string(),
                message: format!(
                    "the file is {now} bytes now, {mapped} when it was opened: another process changed it while \
                     lowbit was reading it"
                ),
            });
        }
        Ok(self.bytes())
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Reads `buf.len()` bytes at `offset` without touching the map (see the module's note).
    pub(crate) fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::FileExt;
            self.file.read_exact_at(buf, offset).map_err(|e| Error::io(&self.path, e))
        }
        #[cfg(not(unix))]
        {
            let start = usize::try_from(offset).ok();
            let piece = start.and_then(|s| self.bytes().get(s..s.checked_add(buf.len())?));
            let piece = piece.ok_or_else(|| Error::Io {
                path: self.path.display().to_string(),
                message: format!("{} bytes at offset {offset} are past the end of the file", buf.len()),
            })?;
            buf.copy_from_slice(piece);
            Ok(())
        }
    }
}

#[allow(unsafe_code)]
fn map_read_only(file: &File, path: &Path) -> Result<memmap2::Mmap> {
    // SAFETY: the map is read-only and lowbit never writes to a file it has mapped (outputs go
    // to a new temporary file that is renamed into place, never over an open input). What no
    // reader of a map can rule out is another process truncating or rewriting the file while it
    // is mapped; that is the documented condition of the safetensors crate's own memory-mapped
    // loading, and the reason `read_at` exists for the long streaming commands.
    unsafe { memmap2::Mmap::map(file) }.map_err(|e| Error::io(path, e))
}
