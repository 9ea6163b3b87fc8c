//! Writing checkpoints all or nothing, one tensor at a time: the header is made from the
//! tensors' names, types and shapes, then `fill` writes each tensor's bytes in order, into a
//! temporary file that is renamed into place only when every byte is written. A `fill` that
//! writes more or fewer bytes than the tensor takes is an error, and nothing remains.

use super::checkpoint_error;
use super::gguf::{self, GgufTensor, GgufValue};
use super::safetensors::{self, SafetensorsTensor};
use crate::error::{quoted, Error, Result};
use crate::staging::Staging;
use std::collections::HashSet;
use std::io::Write;
use std::path::Path;

/// Counts the bytes written through it.
struct Counted<'a> {
    inner: &'a mut dyn Write,
    written: usize,
}

impl Write for Counted<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.written += n;
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

fn check_unique<'a>(path: &Path, names: impl Iterator<Item = &'a str>) -> Result<()> {
    let mut seen = HashSet::new();
    for name in names {
        if !seen.insert(name) {
            return Err(checkpoint_error(path, Some(name), None, "two tensors have this name".into()));
        }
    }
    Ok(())
}

/// Writes the body: `header`, then each tensor's bytes from `fill` (checked against `sizes`),
/// each followed by `padding[i]` zero bytes.
fn write_body(
    path: &Path,
    header: &[u8],
    names: &[&str],
    sizes: &[(usize, usize)],
    mut fill: impl FnMut(usize, &mut dyn Write) -> Result<()>,
) -> Result<()> {
    let mut failure: Option<Error> = None;
    let mut staging = Staging::new();
    let staged = staging.stage(path, |out| {
        out.write_all(header)?;
        for (k, &(size, padding)) in sizes.iter().enumerate() {
            let mut counted = Counted { inner: out, written: 0 };
            if let Err(e) = fill(k, &mut counted) {
                failure = Some(e);
                return Err(std::io::Error::other("a tensor could not be written"));
            }
            if counted.written != size {
                failure = Some(checkpoint_error(
                    path,
                    Some(names[k]),
                    None,
                    format!("{} bytes were written for a tensor of {size} bytes", counted.written),
                ));
                return Err(std::io::Error::other("a tensor has the wrong size"));
            }
            out.write_all(&vec![0u8; padding])?;
        }
        Ok(())
    });
    match (staged, failure) {
        (_, Some(e)) | (Err(e), None) => Err(e),
        (Ok(()), None) => staging.commit(),
    }
}

/// Writes a safetensors file holding `tensors` (in this order) and `metadata` (its
/// `__metadata__`), the bytes of tensor `k` written by `fill(k, out)` in the tensor's raw layout.
pub fn write_safetensors(
    path: &Path,
    tensors: &[SafetensorsTensor],
    metadata: &[(String, String)],
    fill: impl FnMut(usize, &mut dyn Write) -> Result<()>,
) -> Result<()> {
    check_unique(path, tensors.iter().map(|t| t.name.as_str()))?;
    let (header, sizes) = safetensors::header(tensors, metadata, path)?;
    let names: Vec<&str> = tensors.iter().map(|t| t.name.as_str()).collect();
    let sizes: Vec<(usize, usize)> = sizes.into_iter().map(|s| (s, 0)).collect();
    write_body(path, &header, &names, &sizes, fill)
}

/// Writes a GGUF v3 file holding `metadata` (key/values in this order; `general.alignment`, if
/// given, must be `alignment`) and `tensors`, the bytes of tensor `k` (ggml's blocks or plain
/// elements) written by `fill(k, out)`; each tensor is padded to `alignment`.
pub fn write_gguf(
    path: &Path,
    tensors: &[GgufTensor],
    metadata: &[(String, GgufValue)],
    alignment: u64,
    fill: impl FnMut(usize, &mut dyn Write) -> Result<()>,
) -> Result<()> {
    check_unique(path, tensors.iter().map(|t| t.name.as_str()))?;
    if alignment == 0 || !alignment.is_power_of_two() || alignment > u64::from(u32::MAX) {
        return Err(checkpoint_error(
            path,
            None,
            None,
            format!("alignment {alignment} is not a power of two that fits a UINT32"),
        ));
    }
    let mut seen = HashSet::new();
    for (key, value) in metadata {
        if !seen.insert(key.as_str()) {
            return Err(checkpoint_error(path, None, None, format!("the key {} is given twice", quoted(key))));
        }
        if key == "general.alignment" && *value != GgufValue::U32(alignment as u32) {
            return Err(checkpoint_error(
                path,
                None,
                None,
                format!("general.alignment is {}, not {alignment}", value.summary()),
            ));
        }
    }
    let (header, sizes) = gguf::header(tensors, metadata, alignment, path)?;
    let names: Vec<&str> = tensors.iter().map(|t| t.name.as_str()).collect();
    write_body(path, &header, &names, &sizes, fill)
}
