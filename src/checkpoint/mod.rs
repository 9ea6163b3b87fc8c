//! Checkpoints: the files low-bit weights ship in. safetensors files (one file, or shards listed
//! by a `model.safetensors.index.json`) and GGUF v3 files, opened memory-mapped so that a tensor's
//! bytes are borrowed from the file ([`Checkpoint::bytes`]) or read piece by piece
//! ([`Checkpoint::read_at`]), and written all or nothing ([`write_safetensors`], [`write_gguf`]:
//! a temporary file renamed into place when complete).
//!
//! Opening checks everything a damaged or hostile file can get wrong and answers with
//! [`Error::Checkpoint`] naming the file, the tensor and the byte offset: a header length past
//! the file or over 100 MB, JSON that does not parse, is nested more than 32 deep or names a
//! tensor twice, offsets out of range, overlapping or leaving holes, dtype and shape not matching
//! the byte count, shapes whose element count overflows, sub-byte tensors that are not whole
//! bytes, unknown dtypes; GGUF counts, string lengths and alignments the file cannot hold,
//! truncated data; an index naming missing shards or leading outside its folder.
//!
//! Shapes are in numpy order (outermost first) for both containers: a GGUF tensor's dimensions,
//! stored innermost first, are reversed.

mod conventions;
mod convert;
mod decode;
mod ggml_mixture;
mod ggml_mixture_write;
mod ggml_tiles;
mod gguf;
mod index;
mod integer_conventions;
mod json;
mod mapped;
mod products;
mod quantize;
mod safetensors;
mod tile_parts;
mod tiles;
mod weight;
mod which;
mod write;

pub use conventions::recognise;
pub use convert::{convert_checkpoint, CONVERT_TARGETS};
pub use decode::{decoded_dtype, dequantize_f32, dequantize_pieces, scale_problems, shard_of, write_dequantized};
pub use ggml_mixture::{ggml_mixture, which_ggml_mixture, Ftype, GgmlMixtureTensor, FTYPES as GGML_FTYPES};
pub use ggml_mixture_write::{ggml_mixture_of_scheme, quantize_ggml_mixture, GgmlMixture, Imatrix};
pub use gguf::{GgmlType, GgufTensor, GgufValue};
pub use quantize::{choose, quantize_checkpoint, Choice, Convention, QuantizeReport, Selection};
pub use safetensors::SafetensorsTensor;
pub use tiles::{element_steps, ElementSteps};
pub use weight::{ElementStorage, LogicalWeight};
pub use which::{overall, summary, which, Reproduced, WeightOrigin};
pub use write::{write_gguf, write_safetensors};

use crate::dtype::DType;
use crate::error::{quoted, Error, Result};
use crate::files::read_file_limited;
use mapped::MappedFile;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The error for a problem in `path` (with the tensor's quoted name and the byte, when known).
pub(crate) fn checkpoint_error(path: &Path, tensor: Option<&str>, offset: Option<u64>, message: String) -> Error {
    Error::Checkpoint {
        file: path.display().to_string().into(),
        tensor: tensor.map(|t| if t.starts_with('"') { t.into() } else { quoted(t).into() }),
        offset,
        message: message.into(),
    }
}

/// The two containers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Container {
    /// safetensors (one file or shards).
    Safetensors,
    /// GGUF version 3.
    Gguf,
}

/// How a tensor's elements are stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StoredType {
    /// Elements of an ONNX dtype, in ONNX's raw layout (every safetensors dtype; GGUF's F32,
    /// F16, BF16, F64 and integer types).
    Plain(DType),
    /// GGUF blocks of a ggml quantized type.
    Ggml(GgmlType),
}

impl core::fmt::Display for StoredType {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            StoredType::Plain(d) => write!(f, "{d}"),
            StoredType::Ggml(g) => write!(f, "ggml {}", g.name()),
        }
    }
}

/// One tensor as a checkpoint file stores it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredTensor {
    /// Its name.
    pub name: String,
    /// How its elements are stored.
    pub stored: StoredType,
    /// Its shape, outermost first.
    pub shape: Vec<usize>,
    /// Which of the checkpoint's files holds it ([`Checkpoint::files`]).
    pub file: usize,
    /// Where its bytes start in that file.
    pub offset: u64,
    /// How many bytes it takes.
    pub len: u64,
}

impl StoredTensor {
    /// The element count (the file's checks guarantee it fits).
    #[must_use]
    pub fn elements(&self) -> usize {
        self.shape.iter().product()
    }
}

/// The largest config.json / hf_quant_config.json read.
const MAX_CONFIG_BYTES: u64 = 10_000_000;

/// An open checkpoint.
pub struct Checkpoint {
    container: Container,
    files: Vec<MappedFile>,
    tensors: Vec<StoredTensor>,
    by_name: HashMap<String, usize>,
    metadata: Vec<(String, String)>,
    gguf_metadata: Vec<(String, GgufValue)>,
    gguf_alignment: u64,
    config: Option<serde_json::Value>,
    quant_config: Option<serde_json::Value>,
}

/// Reads `bytes` as one checkpoint file (GGUF if it starts with GGUF's magic, else safetensors)
/// and lists its tensors; `Checkpoint::open` without the file system (for the fuzz targets).
pub fn parse_bytes(bytes: &[u8]) -> Result<(Container, Vec<StoredTensor>)> {
    let path = Path::new("input");
    if gguf::is_gguf(bytes) {
        Ok((Container::Gguf, gguf::parse(bytes, path, 0)?.tensors))
    } else {
        Ok((Container::Safetensors, safetensors::parse(bytes, path, 0)?.tensors))
    }
}

impl Checkpoint {
    /// Opens a checkpoint: a `.safetensors` file, a GGUF file (recognised by its magic), a
    /// shard index (`*.json`), or a folder holding `model.safetensors.index.json`,
    /// `model.safetensors`, or exactly one `.safetensors` or `.gguf` file. A `config.json` and
    /// `hf_quant_config.json` beside it are read too.
    pub fn open(path: impl AsRef<Path>) -> Result<Checkpoint> {
        let path = path.as_ref();
        let target = if path.is_dir() { pick_in_folder(path)? } else { path.to_path_buf() };
        let folder = target.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new(".")).to_path_buf();
        let mut checkpoint =
            if target.extension().is_some_and(|e| e == "json") { open_sharded(&target)? } else { open_file(&target)? };
        checkpoint.config = read_config(&folder.join("config.json"))?;
        checkpoint.quant_config = read_config(&folder.join("hf_quant_config.json"))?;
        Ok(checkpoint)
    }

    /// safetensors or GGUF.
    #[must_use]
    pub fn container(&self) -> Container {
        self.container
    }

    /// The files read (one, or the shards in the index's order of first use).
    #[must_use]
    pub fn files(&self) -> Vec<&Path> {
        self.files.iter().map(MappedFile::path).collect()
    }

    /// Every tensor, file by file in the order of their bytes.
    #[must_use]
    pub fn tensors(&self) -> &[StoredTensor] {
        &self.tensors
    }

    /// The tensor named `name`.
    #[must_use]
    pub fn tensor(&self, name: &str) -> Option<&StoredTensor> {
        self.by_name.get(name).map(|&k| &self.tensors[k])
    }

    /// The tensor's bytes, borrowed from the memory map.
    ///
    /// Reading them raises SIGBUS (the process ends) if another process truncates the file
    /// underneath; [`Checkpoint::bytes_checked`] checks the file's length first.
    #[must_use]
    pub fn bytes(&self, tensor: &StoredTensor) -> &[u8] {
        let start = tensor.offset as usize;
        &self.files[tensor.file].bytes()[start..start + tensor.len as usize]
    }

    /// [`Checkpoint::bytes`], after checking that the tensor's file still has the length it was
    /// opened with: an `Err` naming the file where another process truncated or extended it (a
    /// truncation after the check, while the bytes are read, still raises SIGBUS).
    pub fn bytes_checked(&self, tensor: &StoredTensor) -> Result<&[u8]> {
        let start = tensor.offset as usize;
        Ok(&self.files[tensor.file].bytes_checked()?[start..start + tensor.len as usize])
    }

    /// Reads `buf.len()` bytes of the tensor from byte `start` of its data, without the map (for
    /// streaming through files larger than memory).
    pub fn read_at(&self, tensor: &StoredTensor, start: u64, buf: &mut [u8]) -> Result<()> {
        let end = start.checked_add(buf.len() as u64).filter(|&e| e <= tensor.len);
        if end.is_none() {
            return Err(Error::TooLarge {
                what: format!(
                    "{} bytes at {start} of tensor {} ({} bytes)",
                    buf.len(),
                    quoted(&tensor.name),
                    tensor.len
                ),
            });
        }
        self.files[tensor.file].read_at(tensor.offset + start, buf)
    }

    /// safetensors `__metadata__` (of the first file; sorted by name).
    #[must_use]
    pub fn metadata(&self) -> &[(String, String)] {
        &self.metadata
    }

    /// GGUF key/values, in file order (empty for safetensors).
    #[must_use]
    pub fn gguf_metadata(&self) -> &[(String, GgufValue)] {
        &self.gguf_metadata
    }

    /// The GGUF data alignment (32 unless `general.alignment` says otherwise; 0 for safetensors).
    #[must_use]
    pub fn gguf_alignment(&self) -> u64 {
        self.gguf_alignment
    }

    /// `config.json` beside the checkpoint, if any.
    #[must_use]
    pub fn config(&self) -> Option<&serde_json::Value> {
        self.config.as_ref()
    }

    /// `hf_quant_config.json` beside the checkpoint (ModelOpt), if any.
    #[must_use]
    pub fn quant_config(&self) -> Option<&serde_json::Value> {
        self.quant_config.as_ref()
    }
}

fn pick_in_folder(folder: &Path) -> Result<PathBuf> {
    for name in ["model.safetensors.index.json", "model.safetensors"] {
        let candidate = folder.join(name);
        if candidate.exists() {
            return Ok(candidate);
        }
    }
    let mut found = Vec::new();
    for entry in std::fs::read_dir(folder).map_err(|e| Error::io(folder, e))? {
        let path = entry.map_err(|e| Error::io(folder, e))?.path();
        if path.extension().is_some_and(|e| {
            e == "safetensors"
                || e == "gguf"
                || e == "json" && path.to_string_lossy().ends_with(".safetensors.index.json")
        }) {
            found.push(path);
        }
    }
    found.sort();
    match found.len() {
        1 => Ok(found.remove(0)),
        0 => Err(checkpoint_error(
            folder,
            None,
            None,
            "holds no .safetensors, .safetensors.index.json or .gguf file".into(),
        )),
        n => Err(checkpoint_error(
            folder,
            None,
            None,
            format!(
                "holds {n} checkpoint files ({}); name the one to open",
                found.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
            ),
        )),
    }
}

fn open_file(path: &Path) -> Result<Checkpoint> {
    let file = MappedFile::open(path)?;
    let (container, tensors, metadata, gguf_metadata, gguf_alignment) = if gguf::is_gguf(file.bytes()) {
        let parsed = gguf::parse(file.bytes(), path, 0)?;
        (Container::Gguf, parsed.tensors, Vec::new(), parsed.metadata, parsed.alignment)
    } else {
        let parsed = safetensors::parse(file.bytes(), path, 0)?;
        (Container::Safetensors, parsed.tensors, parsed.metadata, Vec::new(), 0)
    };
    let by_name = tensors.iter().enumerate().map(|(k, t)| (t.name.clone(), k)).collect();
    Ok(Checkpoint {
        container,
        files: vec![file],
        tensors,
        by_name,
        metadata,
        gguf_metadata,
        gguf_alignment,
        config: None,
        quant_config: None,
    })
}

fn open_sharded(index_path: &Path) -> Result<Checkpoint> {
    let index = index::read_index(index_path)?;
    let mut files = Vec::with_capacity(index.shards.len());
    let mut tensors = Vec::new();
    let mut metadata = Vec::new();
    let mut by_name: HashMap<String, usize> = HashMap::new();
    for (k, shard) in index.shards.iter().enumerate() {
        let file = MappedFile::open(shard)?;
        let parsed = safetensors::parse(file.bytes(), shard, k)?;
        if k == 0 {
            metadata = parsed.metadata;
        }
        for t in parsed.tensors {
            let shown = quoted(&t.name);
            match index.tensor_shard.get(&t.name) {
                Some(&listed) if listed == k => {}
                Some(&listed) => {
                    return Err(checkpoint_error(
                        shard,
                        Some(&shown),
                        Some(t.offset),
                        format!("the index puts this tensor in {}", index.shards[listed].display()),
                    ))
                }
                None => {
                    return Err(checkpoint_error(
                        shard,
                        Some(&shown),
                        Some(t.offset),
                        format!("the index {} does not list this tensor", index_path.display()),
                    ))
                }
            }
            by_name.insert(t.name.clone(), tensors.len());
            tensors.push(t);
        }
        files.push(file);
    }
    if let Some((name, &k)) = index.tensor_shard.iter().find(|(name, _)| !by_name.contains_key(*name)) {
        return Err(checkpoint_error(
            index_path,
            Some(name),
            None,
            format!("the index lists this tensor in {}, which does not hold it", index.shards[k].display()),
        ));
    }
    Ok(Checkpoint {
        container: Container::Safetensors,
        files,
        tensors,
        by_name,
        metadata,
        gguf_metadata: Vec::new(),
        gguf_alignment: 0,
        config: None,
        quant_config: None,
    })
}

fn read_config(path: &Path) -> Result<Option<serde_json::Value>> {
    if !path.exists() {
        return Ok(None);
    }
    let bytes = read_file_limited(path, MAX_CONFIG_BYTES)?;
    json::check_json(&bytes).map_err(|(message, at)| checkpoint_error(path, None, Some(at), message))?;
    serde_json::from_slice(&bytes).map(Some).map_err(|e| checkpoint_error(path, None, None, e.to_string()))
}
