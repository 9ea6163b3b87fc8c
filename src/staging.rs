//! Writing files all or nothing: each file is written to a new temporary file in its destination
//! folder, and only when every one is complete are they renamed into place. On an error (or a
//! panic) the temporary files are removed, as are the folders and new files this call created, so
//! nothing half-written remains. A rename within one folder is atomic: a reader sees the old file
//! or the new one, never a part.
//!
//! A destination that is a symbolic link is written through, as `sort -o` does: the file at the
//! end of its chain of links is replaced (its temporary is made in that file's folder, so the
//! rename stays atomic) and the link stays a link. So `lowbit cast IN.pb OUT.pb` with OUT a
//! link to IN casts in place. The chain must end at an existing regular file: a link to nothing
//! or to a folder is an error before anything is written.

use crate::error::{Error, Result};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Makes temporary names unique within the process (the process id makes them unique across).
static NEXT_TEMPORARY: AtomicU64 = AtomicU64::new(0);

/// The most links followed from one destination (Linux's own limit for a path, MAXSYMLINKS).
const MAX_LINKS: usize = 40;

/// The file a write to `target` replaces: `target` itself, or the end of its chain of symbolic
/// links. A missing `target` is a new file; a link to nothing, to anything but a regular file, or
/// a chain of more than [`MAX_LINKS`] links is an error naming `target` and where the chain ends.
fn destination(target: &Path) -> Result<PathBuf> {
    let refused = |message: String| Error::Io { path: target.display().to_string(), message };
    let mut path = target.to_path_buf();
    for _ in 0..=MAX_LINKS {
        let metadata = match std::fs::symlink_metadata(&path) {
            Ok(metadata) => metadata,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && path == target => return Ok(path),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(refused(format!(
                    "is a symbolic link to {}, which does not exist; lowbit writes through a link only to an \
                     existing regular file",
                    path.display()
                )))
            }
            Err(e) => return Err(Error::io(&path, e)),
        };
        let kind = metadata.file_type();
        if kind.is_file() {
            return Ok(path);
        }
        if !kind.is_symlink() {
            return Err(refused(if path == target {
                "exists and is not a regular file; lowbit replaces only regular files".into()
            } else {
                format!(
                    "is a symbolic link to {}, which is not a regular file; lowbit replaces only regular files",
                    path.display()
                )
            }));
        }
        let link = std::fs::read_link(&path).map_err(|e| Error::io(&path, e))?;
        // A relative link is read from the link's own folder (an absolute one replaces it all).
        path = path.parent().map_or_else(|| link.clone(), |folder| folder.join(&link));
    }
    Err(refused(format!("is a chain of more than {MAX_LINKS} symbolic links (a loop?)")))
}

/// Files staged for writing, renamed into place by [`Staging::commit`]; dropped without a commit,
/// everything it made is removed.
#[derive(Default)]
pub struct Staging {
    /// (temporary file, destination), in the order staged.
    staged: Vec<(PathBuf, PathBuf)>,
    /// Folders created, outermost first.
    folders: Vec<PathBuf>,
    /// Destinations that did not exist before and have been renamed into place.
    placed: Vec<PathBuf>,
    committed: bool,
}

impl Staging {
    /// Nothing staged yet.
    pub fn new() -> Staging {
        Staging::default()
    }

    /// Creates `dir` and its missing parents, remembering which were created. A file where a
    /// folder must go is an error.
    pub fn create_folders(&mut self, dir: &Path) -> Result<()> {
        let mut missing: Vec<&Path> = dir
            .ancestors()
            .take_while(|p| !p.as_os_str().is_empty() && std::fs::symlink_metadata(p).is_err())
            .collect();
        missing.reverse();
        for folder in missing {
            std::fs::create_dir(folder).map_err(|e| Error::io(folder, e))?;
            self.folders.push(folder.to_path_buf());
        }
        let metadata = std::fs::metadata(dir).map_err(|e| Error::io(dir, e))?;
        if !metadata.is_dir() {
            return Err(Error::Io { path: dir.display().to_string(), message: "exists and is not a folder".into() });
        }
        Ok(())
    }

    /// Writes `target`'s contents through `write` into a new temporary file in the folder of the
    /// file it replaces (`target`, or the end of its links; the folder must exist). An existing
    /// `target` that is not a regular file or a link to one is an error before anything is
    /// written.
    pub fn stage(
        &mut self,
        target: &Path,
        write: impl FnOnce(&mut BufWriter<File>) -> std::io::Result<()>,
    ) -> Result<()> {
        let destination = destination(target)?;
        let folder = destination.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let number = NEXT_TEMPORARY.fetch_add(1, Ordering::Relaxed);
        let temporary = folder.join(format!(".lowbit-{}-{number}.tmp", std::process::id()));
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temporary)
            .map_err(|e| Error::io(target, e))?;
        self.staged.push((temporary, destination));
        let mut writer = BufWriter::new(file);
        write(&mut writer).and_then(|()| writer.flush()).map_err(|e| Error::io(target, e))?;
        let file = writer.into_inner().map_err(|e| Error::io(target, e.into_error()))?;
        file.sync_all().map_err(|e| Error::io(target, e))
    }

    /// Renames every staged file into place.
    pub fn commit(mut self) -> Result<()> {
        for k in 0..self.staged.len() {
            let (temporary, target) = &self.staged[k];
            let existed = std::fs::symlink_metadata(target).is_ok();
            std::fs::rename(temporary, target).map_err(|e| Error::io(target, e))?;
            if !existed {
                self.placed.push(target.clone());
            }
        }
        self.committed = true;
        Ok(())
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if self.committed {
            return;
        }
        // Best effort: the error being reported matters more than one that cleaning up meets.
        // A temporary already renamed is simply not found.
        for path in self.staged.iter().map(|(temporary, _)| temporary).chain(&self.placed) {
            let _ = std::fs::remove_file(path);
        }
        for folder in self.folders.iter().rev() {
            let _ = std::fs::remove_dir(folder);
        }
    }
}

/// Writes one file all or nothing: into a temporary file in `path`'s folder (which must exist),
/// renamed into place when complete; on an error nothing new remains.
pub fn write_file_atomically(
    path: &Path,
    write: impl FnOnce(&mut BufWriter<File>) -> std::io::Result<()>,
) -> Result<()> {
    let mut staging = Staging::new();
    staging.stage(path, write)?;
    staging.commit()
}
