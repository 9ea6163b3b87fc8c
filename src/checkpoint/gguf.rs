//! GGUF version 3, read and written by lowbit (no maintained Rust crate reads and writes it with
//! the checks below). The layout, from ggml's `gguf.cpp` and gguf-py 0.19.0 (`constants.py`,
//! `gguf_reader.py`): the magic `GGUF`, version (u32, 3), tensor count (u64), key/value count
//! (u64); the key/values (a string key, a u32 value type, the value; strings are a u64 length and
//! UTF-8 bytes; arrays a u32 item type, a u64 count and the items); the tensor infos (name, u32
//! dimension count, u64 dimensions innermost first, u32 ggml type, u64 offset in the data
//! section); zero padding to `general.alignment` (u32, a power of two, default 32); the data.
//! As in ggml's reader, tensor i starts where tensor i-1 ends, rounded up to the alignment, and
//! the first at 0; at most 4 dimensions; the innermost a multiple of the type's block.
//!
//! Every count and length is checked against the bytes left before anything is allocated for
//! it, so a 40-byte file cannot make the reader reserve gigabytes.

use super::{checkpoint_error, StoredTensor, StoredType};
use crate::dtype::DType;
use crate::error::{quoted, Result};
use std::path::Path;

/// `GGUF` as a little-endian u32.
const MAGIC: &[u8; 4] = b"GGUF";
const VERSION: u32 = 3;
/// ggml's `GGUF_DEFAULT_ALIGNMENT`.
pub(crate) const DEFAULT_ALIGNMENT: u64 = 32;
/// ggml's `GGML_MAX_DIMS`.
const MAX_DIMS: u32 = 4;

/// A ggml tensor type: the id GGUF stores, its name, its block (elements, bytes), the ONNX dtype
/// of a type that is plain elements, and whether lowbit decodes its blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GgmlType {
    id: u32,
    name: &'static str,
    block_elements: u32,
    block_bytes: u32,
    plain: Option<DType>,
    decoded: bool,
}

/// Every type of gguf-py 0.19.0's `GGMLQuantizationType` with `GGML_QUANT_SIZES` (ids 4, 5 and
/// 31..33, 36..38 were removed from ggml and are unknown here as there).
const GGML_TYPES: [GgmlType; 33] = {
    const fn t(id: u32, name: &'static str, block_elements: u32, block_bytes: u32) -> GgmlType {
        GgmlType { id, name, block_elements, block_bytes, plain: None, decoded: false }
    }
    const fn plain(id: u32, name: &'static str, dtype: DType, bytes: u32) -> GgmlType {
        GgmlType { id, name, block_elements: 1, block_bytes: bytes, plain: Some(dtype), decoded: true }
    }
    const fn blocks(id: u32, name: &'static str, block_elements: u32, block_bytes: u32) -> GgmlType {
        GgmlType { id, name, block_elements, block_bytes, plain: None, decoded: true }
    }
    [
        plain(0, "F32", DType::Float, 4),
        plain(1, "F16", DType::Float16, 2),
        blocks(2, "Q4_0", 32, 2 + 16),
        t(3, "Q4_1", 32, 2 + 2 + 16),
        t(6, "Q5_0", 32, 2 + 4 + 16),
        t(7, "Q5_1", 32, 2 + 2 + 4 + 16),
        blocks(8, "Q8_0", 32, 2 + 32),
        // ggml's `block_q8_1` (float16 d and s, 32 int8): 36 bytes, as ggml's type size and
        // the files ggml writes have it; gguf-py 0.19.0's GGML_QUANT_SIZES says 40 (float32 d and s).
        t(9, "Q8_1", 32, 2 + 2 + 32),
        t(10, "Q2_K", 256, 2 + 2 + 16 + 64),
        t(11, "Q3_K", 256, 2 + 64 + 32 + 12),
        t(12, "Q4_K", 256, 2 + 2 + 128 + 12),
        t(13, "Q5_K", 256, 2 + 2 + 128 + 32 + 12),
        t(14, "Q6_K", 256, 2 + 128 + 64 + 16),
        t(15, "Q8_K", 256, 4 + 256 + 32),
        t(16, "IQ2_XXS", 256, 2 + 64),
        t(17, "IQ2_XS", 256, 2 + 64 + 8),
        t(18, "IQ3_XXS", 256, 2 + 64 + 32),
        t(19, "IQ1_S", 256, 2 + 32 + 16),
        t(20, "IQ4_NL", 32, 2 + 16),
        t(21, "IQ3_S", 256, 2 + 64 + 32 + 8 + 4),
        t(22, "IQ2_S", 256, 2 + 64 + 16),
        t(23, "IQ4_XS", 256, 2 + 2 + 128 + 4),
        plain(24, "I8", DType::Int8, 1),
        plain(25, "I16", DType::Int16, 2),
        plain(26, "I32", DType::Int32, 4),
        plain(27, "I64", DType::Int64, 8),
        plain(28, "F64", DType::Double, 8),
        t(29, "IQ1_M", 256, 32 + 16 + 8),
        plain(30, "BF16", DType::Bfloat16, 2),
        t(34, "TQ1_0", 256, 2 + 52),
        t(35, "TQ2_0", 256, 2 + 64),
        blocks(39, "MXFP4", 32, 1 + 16),
        blocks(40, "NVFP4", 64, 4 + 32),
    ]
};

/// Q1_0 is in gguf-py 0.19.0 (id 41, 128 elements in 18 bytes) and listed like the others.
const Q1_0: GgmlType =
    GgmlType { id: 41, name: "Q1_0", block_elements: 128, block_bytes: 18, plain: None, decoded: false };

impl GgmlType {
    /// The type with GGUF id `id`, if ggml has one.
    #[must_use]
    pub fn from_id(id: u32) -> Option<GgmlType> {
        GGML_TYPES.iter().copied().chain([Q1_0]).find(|t| t.id == id)
    }

    /// The type named `name` (`Q8_0`, `MXFP4`, ... as ggml spells it).
    #[must_use]
    pub fn from_name(name: &str) -> Option<GgmlType> {
        GGML_TYPES.iter().copied().chain([Q1_0]).find(|t| t.name.eq_ignore_ascii_case(name))
    }

    /// The plain type GGUF stores elements of `dtype` as, if any.
    #[must_use]
    pub fn of_plain(dtype: DType) -> Option<GgmlType> {
        GGML_TYPES.iter().copied().find(|t| t.plain == Some(dtype))
    }

    /// The id GGUF stores.
    #[must_use]
    pub fn id(self) -> u32 {
        self.id
    }

    /// ggml's name (`Q4_K`).
    #[must_use]
    pub fn name(self) -> &'static str {
        self.name
    }

    /// Elements per block, bytes per block.
    #[must_use]
    pub fn block(self) -> (usize, usize) {
        (self.block_elements as usize, self.block_bytes as usize)
    }

    /// The ONNX dtype of a type that is plain elements (F32, F16, BF16, I8..I64, F64).
    #[must_use]
    pub fn plain(self) -> Option<DType> {
        self.plain
    }

    /// True for the types lowbit reads and converts: the plain ones, the block recipes (Q8_0,
    /// Q4_0, MXFP4, NVFP4) and every type with a row in `quant::ggml`'s table of block types.
    #[must_use]
    pub fn is_decoded(self) -> bool {
        self.decoded || crate::quant::ggml::codec_of_type(self.id).is_some()
    }
}

/// One metadata value.
#[derive(Clone, Debug, PartialEq)]
pub enum GgufValue {
    /// UINT8
    U8(u8),
    /// INT8
    I8(i8),
    /// UINT16
    U16(u16),
    /// INT16
    I16(i16),
    /// UINT32
    U32(u32),
    /// INT32
    I32(i32),
    /// FLOAT32
    F32(f32),
    /// BOOL (one byte, 0 or 1)
    Bool(bool),
    /// STRING (its bytes: GGUF says UTF-8, lowbit keeps what the file has)
    String(Vec<u8>),
    /// UINT64
    U64(u64),
    /// INT64
    I64(i64),
    /// FLOAT64
    F64(f64),
    /// ARRAY of one item type (never of arrays, as in ggml)
    Array(Vec<GgufValue>),
}

/// Value type ids (gguf-py's `GGUFValueType`).
const TYPE_STRING: u32 = 8;
const TYPE_ARRAY: u32 = 9;

/// The smallest encoding of one value of type `id`, for checking counts before allocating.
fn min_value_bytes(id: u32) -> Option<u64> {
    Some(match id {
        0 | 1 | 7 => 1,
        2 | 3 => 2,
        4..=6 => 4,
        10..=12 => 8,
        TYPE_STRING => 8,
        TYPE_ARRAY => 12,
        _ => return None,
    })
}

impl GgufValue {
    fn type_id(&self) -> u32 {
        match self {
            GgufValue::U8(_) => 0,
            GgufValue::I8(_) => 1,
            GgufValue::U16(_) => 2,
            GgufValue::I16(_) => 3,
            GgufValue::U32(_) => 4,
            GgufValue::I32(_) => 5,
            GgufValue::F32(_) => 6,
            GgufValue::Bool(_) => 7,
            GgufValue::String(_) => TYPE_STRING,
            GgufValue::Array(_) => TYPE_ARRAY,
            GgufValue::U64(_) => 10,
            GgufValue::I64(_) => 11,
            GgufValue::F64(_) => 12,
        }
    }

    /// A short text for `inspect` (arrays by item count).
    #[must_use]
    pub fn summary(&self) -> String {
        match self {
            GgufValue::U8(v) => v.to_string(),
            GgufValue::I8(v) => v.to_string(),
            GgufValue::U16(v) => v.to_string(),
            GgufValue::I16(v) => v.to_string(),
            GgufValue::U32(v) => v.to_string(),
            GgufValue::I32(v) => v.to_string(),
            GgufValue::F32(v) => v.to_string(),
            GgufValue::Bool(v) => v.to_string(),
            GgufValue::String(v) => quoted(&String::from_utf8_lossy(v)),
            GgufValue::U64(v) => v.to_string(),
            GgufValue::I64(v) => v.to_string(),
            GgufValue::F64(v) => v.to_string(),
            GgufValue::Array(items) => format!("[{} items]", items.len()),
        }
    }
}

/// A reader over the file's bytes that names the byte where it fails.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
    path: &'a Path,
}

impl<'a> Cursor<'a> {
    fn fail(&self, tensor: Option<&str>, message: String) -> crate::Error {
        checkpoint_error(self.path, tensor, Some(self.at as u64), message)
    }

    fn left(&self) -> u64 {
        (self.bytes.len() - self.at) as u64
    }

    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8]> {
        match self.bytes.get(self.at..).and_then(|rest| rest.get(..n)) {
            Some(piece) => {
                self.at += n;
                Ok(piece)
            }
            None => {
                Err(self.fail(None, format!("the file ends inside {what} ({n} bytes needed, {} left)", self.left())))
            }
        }
    }

    fn array<const N: usize>(&mut self, what: &str) -> Result<[u8; N]> {
        Ok(self.take(N, what)?.try_into().expect("N bytes"))
    }

    fn u32(&mut self, what: &str) -> Result<u32> {
        Ok(u32::from_le_bytes(self.array(what)?))
    }

    fn u64(&mut self, what: &str) -> Result<u64> {
        Ok(u64::from_le_bytes(self.array(what)?))
    }

    /// A count of items of at least `min_bytes` each, checked against the bytes left.
    fn count(&mut self, what: &str, min_bytes: u64) -> Result<usize> {
        let start = self.at;
        let n = self.u64(what)?;
        if n.saturating_mul(min_bytes) > self.left() {
            self.at = start;
            return Err(self.fail(
                None,
                format!("{what} {n} cannot fit in the {} bytes left (each takes at least {min_bytes})", self.left()),
            ));
        }
        Ok(n as usize)
    }

    fn string(&mut self, what: &str) -> Result<&'a [u8]> {
        let n = self.count(what, 1)?;
        self.take(n, what)
    }

    fn text(&mut self, what: &str) -> Result<String> {
        let start = self.at;
        let bytes = self.string(what)?;
        String::from_utf8(bytes.to_vec()).map_err(|_| {
            self.at = start;
            self.fail(None, format!("{what} is not UTF-8"))
        })
    }

    fn value(&mut self, type_id: u32, in_array: bool) -> Result<GgufValue> {
        Ok(match type_id {
            0 => GgufValue::U8(self.array::<1>("a UINT8")?[0]),
            1 => GgufValue::I8(i8::from_le_bytes(self.array("an INT8")?)),
            2 => GgufValue::U16(u16::from_le_bytes(self.array("a UINT16")?)),
            3 => GgufValue::I16(i16::from_le_bytes(self.array("an INT16")?)),
            4 => GgufValue::U32(self.u32("a UINT32")?),
            5 => GgufValue::I32(i32::from_le_bytes(self.array("an INT32")?)),
            6 => GgufValue::F32(f32::from_le_bytes(self.array("a FLOAT32")?)),
            7 => {
                let byte = self.array::<1>("a BOOL")?[0];
                if byte > 1 {
                    self.at -= 1;
                    return Err(self.fail(None, format!("a BOOL is the byte {byte:#04x}, not 0 or 1")));
                }
                GgufValue::Bool(byte == 1)
            }
            TYPE_STRING => GgufValue::String(self.string("a string's length")?.to_vec()),
            TYPE_ARRAY if in_array => return Err(self.fail(None, "an array of arrays (ggml refuses them too)".into())),
            TYPE_ARRAY => {
                let item = self.u32("an array's item type")?;
                let Some(min) = min_value_bytes(item) else {
                    self.at -= 4;
                    return Err(self.fail(None, format!("unknown array item type {item}")));
                };
                let n = self.count("an array's item count", min)?;
                let mut items = Vec::with_capacity(n);
                for _ in 0..n {
                    items.push(self.value(item, true)?);
                }
                GgufValue::Array(items)
            }
            other => {
                self.at -= 4;
                return Err(self.fail(None, format!("unknown value type {other} (GGUF has 0 to 12)")));
            }
        })
    }
}

/// What a GGUF file holds.
pub(crate) struct Parsed {
    pub(crate) tensors: Vec<StoredTensor>,
    pub(crate) metadata: Vec<(String, GgufValue)>,
    pub(crate) alignment: u64,
}

/// True if `bytes` start with GGUF's magic.
pub(crate) fn is_gguf(bytes: &[u8]) -> bool {
    bytes.starts_with(MAGIC)
}

/// Reads a GGUF file (`file` is its index in the checkpoint).
pub(crate) fn parse(bytes: &[u8], path: &Path, file: usize) -> Result<Parsed> {
    let mut c = Cursor { bytes, at: 0, path };
    if c.take(4, "the magic")? != MAGIC {
        c.at = 0;
        return Err(c.fail(None, "not a GGUF file (the magic is not \"GGUF\")".into()));
    }
    let version = c.u32("the version")?;
    if version != VERSION {
        c.at -= 4;
        return Err(c.fail(None, format!("GGUF version {version}; lowbit reads version 3")));
    }
    // A tensor info takes at least 24 bytes (empty name, no dims), a key/value at least 13.
    let n_tensors = c.count("the tensor count", 24)?;
    let n_kv = c.count("the key/value count", 13)?;
    let mut metadata: Vec<(String, GgufValue)> = Vec::with_capacity(n_kv);
    let mut keys = std::collections::HashSet::with_capacity(n_kv);
    let mut alignment = DEFAULT_ALIGNMENT;
    for _ in 0..n_kv {
        let key_at = c.at;
        let key = c.text("a key")?;
        if !keys.insert(key.clone()) {
            c.at = key_at;
            return Err(c.fail(None, format!("the key {} is given twice", quoted(&key))));
        }
        let type_id = c.u32("a value type")?;
        let value_at = c.at;
        let value = c.value(type_id, false)?;
        if key == "general.alignment" {
            alignment = match value {
                GgufValue::U32(a) if a != 0 && a.is_power_of_two() => u64::from(a),
                ref other => {
                    c.at = value_at;
                    return Err(c.fail(
                        None,
                        format!("general.alignment must be a UINT32 power of two, not {}", other.summary()),
                    ));
                }
            };
        }
        metadata.push((key, value));
    }
    let mut tensors: Vec<StoredTensor> = Vec::with_capacity(n_tensors);
    let mut names = std::collections::HashSet::with_capacity(n_tensors);
    let mut infos = Vec::with_capacity(n_tensors);
    for _ in 0..n_tensors {
        let info_at = c.at;
        let name = c.text("a tensor name")?;
        if !names.insert(name.clone()) {
            c.at = info_at;
            return Err(c.fail(None, format!("the tensor name {} is given twice", quoted(&name))));
        }
        let shown = quoted(&name);
        let n_dims = c.u32("a dimension count")?;
        if n_dims > MAX_DIMS {
            c.at -= 4;
            return Err(c.fail(Some(&shown), format!("{n_dims} dimensions; ggml tensors have at most {MAX_DIMS}")));
        }
        let mut dims = Vec::with_capacity(n_dims as usize);
        for _ in 0..n_dims {
            let d = c.u64("a dimension")?;
            let d = usize::try_from(d)
                .ok()
                .filter(|&d| d as u64 <= i64::MAX as u64)
                .ok_or_else(|| c.fail(Some(&shown), format!("the dimension {d} is beyond ggml's int64 dimensions")))?;
            dims.push(d);
        }
        let type_at = c.at;
        let type_id = c.u32("a tensor type")?;
        let Some(ggml) = GgmlType::from_id(type_id) else {
            c.at = type_at;
            return Err(c.fail(Some(&shown), format!("unknown ggml type id {type_id}")));
        };
        let offset = c.u64("a tensor offset")?;
        let fail = |message: String| checkpoint_error(path, Some(&shown), Some(info_at as u64), message);
        let elements = dims.iter().try_fold(1u64, |n, &d| n.checked_mul(d as u64)).filter(|&n| n <= i64::MAX as u64);
        let Some(elements) = elements else {
            return Err(fail(format!("the dimensions {dims:?} have more elements than ggml can count")));
        };
        let (block_elements, block_bytes) = ggml.block();
        let innermost = dims.first().copied().unwrap_or(1);
        if innermost % block_elements != 0 {
            return Err(fail(format!(
                "{} blocks hold {block_elements} elements, but the innermost dimension is {innermost}",
                ggml.name
            )));
        }
        let len = (elements / block_elements as u64)
            .checked_mul(block_bytes as u64)
            .ok_or_else(|| fail(format!("{elements} elements of {} overflow a byte count", ggml.name)))?;
        infos.push((name, dims, ggml, offset, info_at, len));
    }
    let data_start = (c.at as u64).next_multiple_of(alignment);
    let size = bytes.len() as u64;
    if n_tensors > 0 && data_start > size {
        return Err(checkpoint_error(
            path,
            None,
            Some(c.at as u64),
            format!("the data section would start at byte {data_start} (alignment {alignment}), past the end of the file ({size} bytes)"),
        ));
    }
    let mut expected = 0u64;
    for (name, dims, ggml, offset, info_at, len) in infos {
        let shown = quoted(&name);
        let fail = |at: u64, message: String| checkpoint_error(path, Some(&shown), Some(at), message);
        if offset != expected {
            return Err(fail(
                info_at as u64,
                format!("the tensor's data offset is {offset}, but ggml's layout puts it at {expected} (the previous tensor's end, rounded up to {alignment})"),
            ));
        }
        let start = data_start + offset;
        let end = start.checked_add(len).filter(|&end| end <= size).ok_or_else(|| {
            fail(
                start.min(size),
                format!("its {len} bytes at byte {start} run past the end of the file ({size} bytes): truncated"),
            )
        })?;
        expected = (end - data_start).next_multiple_of(alignment);
        let stored = match ggml.plain {
            Some(dtype) => StoredType::Plain(dtype),
            None => StoredType::Ggml(ggml),
        };
        // numpy order: outermost first.
        let shape = dims.iter().rev().copied().collect();
        tensors.push(StoredTensor { name, stored, shape, file, offset: start, len });
    }
    Ok(Parsed { tensors, metadata, alignment })
}

/// One tensor of a GGUF file to write: its name, type and numpy-order shape.
pub struct GgufTensor {
    /// The name.
    pub name: String,
    /// The ggml type.
    pub ggml: GgmlType,
    /// The shape, outermost first (numpy order).
    pub shape: Vec<usize>,
}

/// Each tensor's byte count and the zero padding after it.
pub(crate) type Sizes = Vec<(usize, usize)>;

/// The header (everything before the data section, padded) of a GGUF file, and each tensor's
/// byte count and the padding after it.
pub(crate) fn header(
    tensors: &[GgufTensor],
    metadata: &[(String, GgufValue)],
    alignment: u64,
    path: &Path,
) -> Result<(Vec<u8>, Sizes)> {
    let mut out = Vec::new();
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&(tensors.len() as u64).to_le_bytes());
    let has_alignment = metadata.iter().any(|(k, _)| k == "general.alignment");
    let extra = usize::from(!has_alignment && alignment != DEFAULT_ALIGNMENT);
    out.extend_from_slice(&((metadata.len() + extra) as u64).to_le_bytes());
    let write_string = |out: &mut Vec<u8>, s: &[u8]| {
        out.extend_from_slice(&(s.len() as u64).to_le_bytes());
        out.extend_from_slice(s);
    };
    fn write_value(out: &mut Vec<u8>, value: &GgufValue) {
        match value {
            GgufValue::U8(v) => out.push(*v),
            GgufValue::I8(v) => out.extend_from_slice(&v.to_le_bytes()),
            GgufValue::U16(v) => out.extend_from_slice(&v.to_le_bytes()),
            GgufValue::I16(v) => out.extend_from_slice(&v.to_le_bytes()),
            GgufValue::U32(v) => out.extend_from_slice(&v.to_le_bytes()),
            GgufValue::I32(v) => out.extend_from_slice(&v.to_le_bytes()),
            GgufValue::F32(v) => out.extend_from_slice(&v.to_le_bytes()),
            GgufValue::Bool(v) => out.push(u8::from(*v)),
            GgufValue::String(s) => {
                out.extend_from_slice(&(s.len() as u64).to_le_bytes());
                out.extend_from_slice(s);
            }
            GgufValue::U64(v) => out.extend_from_slice(&v.to_le_bytes()),
            GgufValue::I64(v) => out.extend_from_slice(&v.to_le_bytes()),
            GgufValue::F64(v) => out.extend_from_slice(&v.to_le_bytes()),
            GgufValue::Array(items) => {
                let item = items.first().map_or(0, GgufValue::type_id);
                out.extend_from_slice(&item.to_le_bytes());
                out.extend_from_slice(&(items.len() as u64).to_le_bytes());
                for v in items {
                    write_value(out, v);
                }
            }
        }
    }
    for (key, value) in metadata {
        if let GgufValue::Array(items) = value {
            let first = items.first().map(GgufValue::type_id);
            if items.iter().any(|v| Some(v.type_id()) != first || v.type_id() == TYPE_ARRAY) {
                return Err(checkpoint_error(
                    path,
                    None,
                    None,
                    format!("metadata {}: an array must hold one item type, and no arrays", quoted(key)),
                ));
            }
        }
        write_string(&mut out, key.as_bytes());
        out.extend_from_slice(&value.type_id().to_le_bytes());
        write_value(&mut out, value);
    }
    if extra == 1 {
        write_string(&mut out, b"general.alignment");
        out.extend_from_slice(&4u32.to_le_bytes());
        out.extend_from_slice(&(alignment as u32).to_le_bytes());
    }
    let mut sizes = Vec::with_capacity(tensors.len());
    let mut offset = 0u64;
    for t in tensors {
        let refuse = |message: String| checkpoint_error(path, Some(&quoted(&t.name)), None, message);
        if t.shape.len() > MAX_DIMS as usize {
            return Err(refuse(format!("{} dimensions; GGUF holds at most {MAX_DIMS}", t.shape.len())));
        }
        let elements = crate::tensor::element_count(&t.shape)?;
        let (block_elements, block_bytes) = t.ggml.block();
        let innermost = t.shape.last().copied().unwrap_or(1);
        if innermost % block_elements != 0 {
            return Err(refuse(format!(
                "{} blocks hold {block_elements} elements; the innermost dimension is {innermost}",
                t.ggml.name
            )));
        }
        let len = elements / block_elements * block_bytes;
        let padded = (len as u64).next_multiple_of(alignment);
        write_string(&mut out, t.name.as_bytes());
        out.extend_from_slice(&(t.shape.len() as u32).to_le_bytes());
        for &d in t.shape.iter().rev() {
            out.extend_from_slice(&(d as u64).to_le_bytes());
        }
        out.extend_from_slice(&t.ggml.id.to_le_bytes());
        out.extend_from_slice(&offset.to_le_bytes());
        sizes.push((len, (padded - len as u64) as usize));
        offset += padded;
    }
    out.resize((out.len() as u64).next_multiple_of(alignment) as usize, 0);
    Ok((out, sizes))
}
