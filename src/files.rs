//! Reading model and tensor files with a size limit, and the checks on names and paths that
//! reading and writing share (`onnx::outputs` writes a run's outputs with them).
//!
//! Reading: only regular files are read (a device such as `/dev/zero`, a FIFO or a directory is
//! refused by its type before it is opened, and again from the opened handle), the length is
//! checked against the limit before reading, and the read itself stops one byte past the limit so
//! that a file that grows (or lies about its length) is still caught.

use crate::error::quoted;
use crate::error::{Error, Result};
use std::fs::{File, Metadata};
use std::io::Read;
use std::path::{Component, Path};

/// What a file that is not a regular file is, for the error message.
fn kind_of(metadata: &Metadata) -> Option<&'static str> {
    let file_type = metadata.file_type();
    if file_type.is_file() {
        return None;
    }
    if file_type.is_dir() {
        return Some("a directory");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if file_type.is_fifo() {
            return Some("a FIFO (named pipe)");
        }
        if file_type.is_char_device() {
            return Some("a character device");
        }
        if file_type.is_block_device() {
            return Some("a block device");
        }
        if file_type.is_socket() {
            return Some("a socket");
        }
    }
    Some("not a regular file")
}

/// Refuses anything but a regular file (symbolic links are followed).
pub(crate) fn check_regular(path: &Path, metadata: &Metadata) -> Result<()> {
    match kind_of(metadata) {
        None => Ok(()),
        Some(kind) => Err(Error::NotARegularFile { path: path.display().to_string(), kind }),
    }
}

/// Opens a regular file for reading: the type is checked before opening (opening a FIFO would
/// wait for a writer) and again on the handle (the path may have changed in between).
pub(crate) fn open_regular(path: &Path) -> Result<(File, Metadata)> {
    let before = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
    check_regular(path, &before)?;
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    let metadata = file.metadata().map_err(|e| Error::io(path, e))?;
    check_regular(path, &metadata)?;
    Ok((file, metadata))
}

/// Reads at most `limit` bytes from `reader` (which claims `expected` bytes) into a new buffer;
/// more than `limit` is [`Error::InputTooLarge`].
pub fn read_bounded(reader: impl Read, expected: u64, limit: u64, path: &Path) -> Result<Vec<u8>> {
    let too_large = |size| Error::InputTooLarge { path: path.display().to_string(), size, limit };
    let mut bytes = Vec::new();
    bytes
        .try_reserve_exact(usize::try_from(expected.min(limit)).map_err(|_| too_large(Some(expected)))?)
        .map_err(|_| Error::TooLarge { what: format!("{}: cannot allocate {expected} bytes", path.display()) })?;
    reader.take(limit.saturating_add(1)).read_to_end(&mut bytes).map_err(|e| Error::io(path, e))?;
    if bytes.len() as u64 > limit {
        return Err(too_large(None));
    }
    Ok(bytes)
}

/// Reads a whole regular file of at most `max_bytes` bytes.
pub fn read_file_limited(path: &Path, max_bytes: u64) -> Result<Vec<u8>> {
    let (file, metadata) = open_regular(path)?;
    if metadata.len() > max_bytes {
        return Err(Error::InputTooLarge {
            path: path.display().to_string(),
            size: Some(metadata.len()),
            limit: max_bytes,
        });
    }
    read_bounded(file, metadata.len(), max_bytes, path)
}

/// The longest file name lowbit writes (the usual `NAME_MAX`).
const MAX_FILE_NAME_BYTES: usize = 255;

/// Checks that a graph output name can be the file name `NAME.pb` inside the output directory:
/// not empty, no `/` or `\`, not `.` or `..`, not starting with `.` (hidden files, and lowbit's own
/// temporary files), no control character, at most 252 bytes. Names are refused, never rewritten,
/// so an output file is always exactly `NAME.pb`.
pub fn check_output_name(name: &str) -> Result<()> {
    let why = if name.is_empty() {
        Some("the name is empty")
    } else if name.contains('/') || name.contains('\\') {
        Some("the name contains a path separator")
    } else if name == "." || name == ".." {
        Some("the name is a directory reference")
    } else if name.starts_with('.') {
        Some("the name starts with '.'")
    } else if name.chars().any(char::is_control) {
        Some("the name contains a control character")
    } else if name.len() + ".pb".len() > MAX_FILE_NAME_BYTES {
        Some("the name is longer than a file name can be")
    } else {
        None
    };
    match why {
        None => Ok(()),
        Some(why) => Err(Error::UnsafeOutputName { name: quoted(name), why }),
    }
}

/// True if `location` is a relative path made only of normal components (no root, no `..`).
#[cfg_attr(not(feature = "onnx"), allow(dead_code))]
pub(crate) fn is_plain_relative(location: &Path) -> bool {
    location.components().all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
        && location.components().any(|c| matches!(c, Component::Normal(_)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_names() {
        for good in ["y", "output_0", "a.b", "onnx::Add_3", "ÿ", "..y"] {
            // "..y" starts with '.', so it is refused; the others are fine.
            assert_eq!(check_output_name(good).is_ok(), good != "..y", "{good:?}");
        }
        for bad in ["", ".", "..", "../escaped", "/tmp/x", "a/b", "a\\b", ".hidden", "a\nb", "a\0b"] {
            assert!(matches!(check_output_name(bad), Err(Error::UnsafeOutputName { .. })), "{bad:?}");
        }
        assert!(check_output_name(&"x".repeat(252)).is_ok());
        assert!(check_output_name(&"x".repeat(253)).is_err());
    }

    #[test]
    fn plain_relative_locations() {
        for good in ["w.bin", "./w.bin", "sub/w.bin"] {
            assert!(is_plain_relative(Path::new(good)), "{good}");
        }
        for bad in ["", "/w.bin", "../w.bin", "sub/../../w.bin", "."] {
            assert!(!is_plain_relative(Path::new(bad)), "{bad}");
        }
    }
}
