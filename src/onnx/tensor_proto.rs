//! `TensorProto` <-> [`Tensor`], for every dtype, through `raw_data` and through the typed fields
//! (onnx.proto: `float_data`, `int32_data` with 4-bit and 2-bit elements packed into each entry and
//! 16/8-bit floats as bit patterns, `int64_data`, `uint64_data`, `double_data`, `string_data`).
//!
//! Sizes are checked against the data actually present before anything is allocated, so a file
//! that claims dims of 2^40 elements costs nothing.

use super::limits::Limits;
use super::proto::TensorProto;
use crate::dtype::{DType, Packing};
use crate::error::{Error, Result};
use crate::files::read_file_limited;
use crate::packing;
use crate::tensor::{element_count, Tensor};
use prost::Message;
use std::io::Write;
use std::path::Path;

fn bad(message: impl Into<String>) -> Error {
    Error::InvalidOp { op: "TensorProto".into(), message: message.into() }
}

/// The shape of a `TensorProto`: every dim must be non-negative and the product must fit.
fn shape_of(p: &TensorProto) -> Result<Vec<usize>> {
    let shape = p
        .dims
        .iter()
        .enumerate()
        .map(|(i, &d)| usize::try_from(d).map_err(|_| bad(format!("dims[{i}] is negative ({d})"))))
        .collect::<Result<Vec<_>>>()?;
    element_count(&shape)?;
    Ok(shape)
}

fn count_matches(field: &str, have: usize, want: usize, dtype: DType) -> Result<()> {
    if have == want {
        Ok(())
    } else {
        Err(bad(format!("{dtype} tensor of {want} entries expected in {field}, found {have}")))
    }
}

/// Reads a tensor out of a `TensorProto`.
pub fn tensor_from_proto(p: &TensorProto) -> Result<Tensor> {
    let dtype = DType::from_onnx_number(i64::from(p.data_type.unwrap_or(0)))?;
    if dtype == DType::Undefined {
        return Err(bad("data_type is UNDEFINED"));
    }
    if super::external::is_external(p) {
        return Err(bad(format!(
            "tensor {}: its bytes live in another file (external data), which is read when a model or tensor is \
             loaded from a file, not from bytes alone",
            super::quoted(p.name.as_deref().unwrap_or(""))
        )));
    }
    if p.segment.is_some() {
        return Err(bad("segmented tensors are not supported"));
    }
    let shape = shape_of(p)?;
    let n = element_count(&shape)?;
    if dtype == DType::String {
        count_matches("string_data", p.string_data.len(), n, dtype)?;
        let mut strings = crate::texts::Texts::with_capacity(n, p.string_data.iter().map(Vec::len).sum());
        for (i, s) in p.string_data.iter().enumerate() {
            let text = std::str::from_utf8(s)
                .map_err(|e| bad(format!("string_data[{i}] is not UTF-8 (invalid byte at {})", e.valid_up_to())))?;
            strings.push(text);
        }
        return Tensor::from_strings(shape, strings);
    }
    if let Some(raw) = &p.raw_data {
        return Tensor::from_raw(dtype, shape, raw.clone());
    }
    let raw = typed_to_raw(p, dtype, n)?;
    Tensor::from_raw(dtype, shape, raw)
}

/// The raw bytes of a tensor stored in its typed field.
fn typed_to_raw(p: &TensorProto, dtype: DType, n: usize) -> Result<Vec<u8>> {
    let le = |v: &mut Vec<u8>, bytes: &[u8]| v.extend_from_slice(bytes);
    let mut raw = Vec::new();
    match dtype {
        DType::Float | DType::Complex64 => {
            let per = if dtype == DType::Complex64 { 2 } else { 1 };
            count_matches("float_data", p.float_data.len(), n.saturating_mul(per), dtype)?;
            p.float_data.iter().for_each(|x| le(&mut raw, &x.to_le_bytes()));
        }
        DType::Double | DType::Complex128 => {
            let per = if dtype == DType::Complex128 { 2 } else { 1 };
            count_matches("double_data", p.double_data.len(), n.saturating_mul(per), dtype)?;
            p.double_data.iter().for_each(|x| le(&mut raw, &x.to_le_bytes()));
        }
        DType::Int64 => {
            count_matches("int64_data", p.int64_data.len(), n, dtype)?;
            p.int64_data.iter().for_each(|x| le(&mut raw, &x.to_le_bytes()));
        }
        DType::Uint32 | DType::Uint64 => {
            count_matches("uint64_data", p.uint64_data.len(), n, dtype)?;
            let width = if dtype == DType::Uint32 { 4 } else { 8 };
            p.uint64_data.iter().for_each(|x| le(&mut raw, &x.to_le_bytes()[..width]));
        }
        _ => match dtype.packing() {
            // One element per entry: the integer, or a float's bit pattern.
            Packing::Bytes(k) => {
                count_matches("int32_data", p.int32_data.len(), n, dtype)?;
                p.int32_data.iter().for_each(|x| le(&mut raw, &x.to_le_bytes()[..k as usize]));
            }
            // Each entry holds one packed byte (two 4-bit or four 2-bit elements).
            Packing::Nibbles | Packing::Crumbs => {
                let bytes = packing::raw_len(dtype, n)?;
                count_matches("int32_data", p.int32_data.len(), bytes, dtype)?;
                raw.extend(p.int32_data.iter().map(|&x| x as u8));
            }
            // One 6-bit code per entry, repacked into the sextet stream.
            Packing::Sextets => {
                count_matches("int32_data", p.int32_data.len(), n, dtype)?;
                let codes: Vec<u64> = p.int32_data.iter().map(|&x| u64::from(x as u32 & 0x3F)).collect();
                raw = packing::pack(dtype, &codes)?;
            }
            Packing::Strings | Packing::None => unreachable!("handled above"),
        },
    }
    Ok(raw)
}

/// A `TensorProto` holding the tensor, in `raw_data` (strings in `string_data`).
#[must_use]
pub fn tensor_to_proto(t: &Tensor, name: Option<&str>) -> TensorProto {
    let mut p = TensorProto {
        dims: t.shape().iter().map(|&d| d as i64).collect(),
        data_type: Some(t.dtype().onnx_number()),
        name: name.map(str::to_string),
        ..TensorProto::default()
    };
    match t.strings() {
        Some(s) => p.string_data = s.iter().map(|x| x.as_bytes().to_vec()).collect(),
        None => p.raw_data = Some(t.raw().expect("numeric tensors are raw").to_vec()),
    }
    p
}

/// Writes `t` as a serialized `TensorProto` to `out` field by field, straight from the tensor's own
/// storage (no copy of its data, so writing a large output takes no memory of its own): the same
/// bytes as `tensor_to_proto(t, name).encode_to_vec()`.
pub fn write_tensor_proto(out: &mut impl Write, t: &Tensor, name: Option<&str>) -> std::io::Result<()> {
    // onnx.proto field numbers, in the order prost writes them.
    const DIMS: u32 = 1;
    const DATA_TYPE: u32 = 2;
    const STRING_DATA: u32 = 6;
    const NAME: u32 = 8;
    const RAW_DATA: u32 = 9;
    let bytes_field = |out: &mut dyn Write, tag: u32, bytes: &[u8]| -> std::io::Result<()> {
        write_key(out, tag, WIRE_LENGTH_DELIMITED)?;
        write_varint(out, bytes.len() as u64)?;
        out.write_all(bytes)
    };
    if !t.shape().is_empty() {
        let packed: u64 = t.shape().iter().map(|&d| varint_len(d as u64)).sum();
        write_key(out, DIMS, WIRE_LENGTH_DELIMITED)?;
        write_varint(out, packed)?;
        for &d in t.shape() {
            write_varint(out, d as u64)?;
        }
    }
    write_key(out, DATA_TYPE, WIRE_VARINT)?;
    // An int32 is written as its sign-extended 64-bit value.
    write_varint(out, i64::from(t.dtype().onnx_number()) as u64)?;
    for s in t.strings().into_iter().flatten() {
        bytes_field(out, STRING_DATA, s.as_bytes())?;
    }
    if let Some(name) = name {
        bytes_field(out, NAME, name.as_bytes())?;
    }
    if let Some(raw) = t.raw() {
        bytes_field(out, RAW_DATA, raw)?;
    }
    Ok(())
}

const WIRE_VARINT: u32 = 0;
const WIRE_LENGTH_DELIMITED: u32 = 2;

fn write_key(out: &mut dyn Write, tag: u32, wire_type: u32) -> std::io::Result<()> {
    write_varint(out, u64::from(tag << 3 | wire_type))
}

fn write_varint(out: &mut dyn Write, mut v: u64) -> std::io::Result<()> {
    let mut buf = [0u8; 10];
    let mut n = 0;
    while v >= 0x80 {
        buf[n] = (v as u8) | 0x80;
        v >>= 7;
        n += 1;
    }
    buf[n] = v as u8;
    out.write_all(&buf[..=n])
}

fn varint_len(v: u64) -> u64 {
    u64::from((64 - (v | 1).leading_zeros()).div_ceil(7))
}

/// Reads a serialized `TensorProto` file with the default [`Limits`].
pub fn read_tensor_file(path: &Path) -> Result<Tensor> {
    read_tensor_file_with(path, &Limits::default())
}

/// Reads a serialized `TensorProto` file: a regular file of at most `limits.max_input_bytes`
/// bytes (see [`crate::files`]); external data is read from the file's directory
/// ([`super::external`]).
pub fn read_tensor_file_with(path: &Path, limits: &Limits) -> Result<Tensor> {
    if let Some(kind) = checkpoint_kind(path) {
        return Err(Error::Io {
            path: path.display().to_string(),
            message: format!(
                "this is a {kind} checkpoint, not an ONNX TensorProto: the checkpoint commands read it \
                 (`lowbit checkpoint inspect|quantize|dequantize PATH`, or lowbit.checkpoint in Python)"
            ),
        });
    }
    let bytes = read_file_limited(path, limits.max_input_bytes)?;
    let mut proto = TensorProto::decode(bytes.as_slice()).map_err(|e| Error::Io {
        path: path.display().to_string(),
        message: format!("not a valid TensorProto: {e}"),
    })?;
    drop(bytes);
    if super::external::is_external(&proto) {
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        super::external::resolve_tensor(&mut proto, dir, limits)?;
    }
    tensor_from_proto(&proto).map_err(|e| Error::Io { path: path.display().to_string(), message: e.to_string() })
}

/// Whether the file at `path` starts as a GGUF file (the magic `GGUF`) or a safetensors file
/// (a little-endian u64 header length no larger than the rest of the file, then `{"`), which a
/// serialized TensorProto cannot (`G` is an invalid wire type; `{` opens a group, which
/// TensorProto has none of).
fn checkpoint_kind(path: &Path) -> Option<&'static str> {
    use std::io::Read;
    // Regular files only: opening a FIFO would wait for a writer, and a device has no size.
    let meta = std::fs::metadata(path).ok().filter(std::fs::Metadata::is_file)?;
    let size = meta.len();
    let mut file = std::fs::File::open(path).ok()?;
    let mut head = [0u8; 10];
    file.read_exact(&mut head).ok()?;
    if &head[..4] == b"GGUF" {
        return Some("GGUF");
    }
    let header = u64::from_le_bytes(head[..8].try_into().expect("8 bytes"));
    (size.checked_sub(8).is_some_and(|rest| header <= rest) && &head[8..] == b"{\"").then_some("safetensors")
}

/// Writes a tensor as a serialized `TensorProto` file, all or nothing: into a temporary file in
/// `path`'s folder, renamed into place when complete. On an error (a full disk, a file size limit,
/// `path` a folder, its folder missing) nothing new remains and an existing file is untouched.
pub fn write_tensor_file(path: &Path, t: &Tensor, name: Option<&str>) -> Result<()> {
    crate::staging::write_file_atomically(path, |out| write_tensor_proto(out, t, name))
}

impl Tensor {
    /// The tensor as the bytes of a serialized ONNX `TensorProto` (`raw_data`, or `string_data`
    /// for STRING), named `name`: the bytes [`write_tensor_file`] writes. No protobuf library is
    /// needed by the caller.
    ///
    /// ```
    /// use lowbit::{DType, Tensor};
    /// let t = Tensor::from_codes(DType::Int4, vec![3], &[1, 0xE, 3]).unwrap();
    /// let bytes = t.to_tensor_proto_bytes(Some("w"));
    /// // dims [3], data_type 22 (INT4), name "w", raw_data [0xE1, 0x03].
    /// assert_eq!(bytes, [0x0A, 0x01, 0x03, 0x10, 0x16, 0x42, 0x01, b'w', 0x4A, 0x02, 0xE1, 0x03]);
    /// assert_eq!(Tensor::from_tensor_proto_bytes(&bytes).unwrap(), t);
    /// ```
    #[must_use]
    pub fn to_tensor_proto_bytes(&self, name: Option<&str>) -> Vec<u8> {
        let mut out = Vec::new();
        write_tensor_proto(&mut out, self, name).expect("writing into a Vec does not fail");
        out
    }

    /// A tensor from the bytes of a serialized ONNX `TensorProto`, checked as a `TensorProto`
    /// file is ([`read_tensor_file`]) under the default [`Limits`]: at most
    /// `max_input_bytes`, every dtype through `raw_data` or its typed field, sizes checked against
    /// the data present before anything is allocated. Bytes that are not a `TensorProto`
    /// (truncated, corrupt), an UNDEFINED or unknown dtype, a count that does not match the shape,
    /// and external data (which lives in another file) are an `Err`.
    ///
    /// ```
    /// use lowbit::Tensor;
    /// let bytes = Tensor::from_f32(&[1.5, -2.0]).to_tensor_proto_bytes(None);
    /// let t = Tensor::from_tensor_proto_bytes(&bytes).unwrap();
    /// assert_eq!(t.raw().unwrap(), [0, 0, 0xC0, 0x3F, 0, 0, 0, 0xC0]);
    /// assert!(Tensor::from_tensor_proto_bytes(&bytes[..bytes.len() - 1]).is_err());
    /// ```
    pub fn from_tensor_proto_bytes(bytes: &[u8]) -> Result<Tensor> {
        Tensor::from_tensor_proto_bytes_with(bytes, &Limits::default())
    }

    /// [`Tensor::from_tensor_proto_bytes`] under `limits` (only `max_input_bytes` applies).
    ///
    /// ```
    /// use lowbit::onnx::limits::Limits;
    /// use lowbit::Tensor;
    /// let bytes = Tensor::from_f32(&[0.0; 100]).to_tensor_proto_bytes(None);
    /// let small = Limits { max_input_bytes: 64, ..Limits::default() };
    /// assert!(Tensor::from_tensor_proto_bytes_with(&bytes, &small).unwrap_err().to_string().contains("64"));
    /// ```
    pub fn from_tensor_proto_bytes_with(bytes: &[u8], limits: &Limits) -> Result<Tensor> {
        let size = bytes.len() as u64;
        if size > limits.max_input_bytes {
            return Err(Error::InputTooLarge {
                path: "TensorProto bytes".into(),
                size: Some(size),
                limit: limits.max_input_bytes,
            });
        }
        let proto = TensorProto::decode(bytes).map_err(|e| bad(format!("the bytes are not a TensorProto: {e}")))?;
        tensor_from_proto(&proto)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn proto(dtype: DType, dims: &[i64]) -> TensorProto {
        TensorProto { dims: dims.to_vec(), data_type: Some(dtype.onnx_number()), ..TensorProto::default() }
    }

    #[test]
    fn typed_fields() {
        // research §7: onnx 1.18 wrote FLOAT -> INT4 as int32_data [136, 169, ...] (one packed byte each).
        let p = TensorProto { int32_data: vec![0xE1, 0x03], ..proto(DType::Int4, &[3]) };
        assert_eq!(tensor_from_proto(&p).unwrap().codes().unwrap(), [1, 0xE, 3]);
        let p = TensorProto { int32_data: vec![0x3C00, 0xC000], ..proto(DType::Float16, &[2]) };
        assert_eq!(tensor_from_proto(&p).unwrap().raw().unwrap(), [0x00, 0x3C, 0x00, 0xC0]);
        let p = TensorProto { int32_data: vec![0x08, 0x10, 0x14, 0x28, 0x04], ..proto(DType::Float6E2M3, &[5]) };
        assert_eq!(tensor_from_proto(&p).unwrap().raw().unwrap(), [0x08, 0x44, 0xA1, 0x04]);
        let p = TensorProto { uint64_data: vec![u64::from(u32::MAX)], ..proto(DType::Uint32, &[1]) };
        assert_eq!(tensor_from_proto(&p).unwrap().raw().unwrap(), [0xFF; 4]);
        let p = TensorProto { float_data: vec![1.0, 2.0], ..proto(DType::Complex64, &[1]) };
        assert_eq!(tensor_from_proto(&p).unwrap().raw().unwrap().len(), 8);
    }

    #[test]
    fn bad_tensors() {
        let err = |p: TensorProto| tensor_from_proto(&p).unwrap_err().to_string();
        assert!(err(TensorProto { raw_data: Some(vec![0; 7]), ..proto(DType::Float, &[2]) }).contains("7 bytes"));
        assert!(err(proto(DType::Float, &[2, -1])).contains("negative"));
        assert!(err(TensorProto { raw_data: Some(vec![]), ..proto(DType::Float, &[1 << 40, 1 << 40]) })
            .contains("too large"));
        assert!(err(TensorProto { float_data: vec![1.0], ..proto(DType::Float, &[3]) }).contains("found 1"));
        let external = TensorProto { data_location: Some(1), ..proto(DType::Float, &[1]) };
        assert!(err(external).contains("external"));
        assert!(err(proto(DType::Undefined, &[1])).contains("UNDEFINED"));
        assert!(err(TensorProto { string_data: vec![vec![0xFF]], ..proto(DType::String, &[1]) }).contains("UTF-8"));
    }

    #[test]
    fn streamed_bytes_equal_prost_bytes() {
        let tensors = [
            Tensor::from_codes(DType::Int2, vec![2, 3], &[0, 1, 2, 3, 1, 2]).unwrap(),
            Tensor::from_f32(&[1.0; 300]).reshape(vec![3, 100]).unwrap(),
            Tensor::from_codes(DType::Float, vec![0], &[]).unwrap(),
            Tensor::from_codes(DType::Int64, vec![], &[u64::MAX]).unwrap(),
            Tensor::from_codes(DType::Uint8, vec![1 << 20, 0, 3], &[]).unwrap(),
            Tensor::from_strings(vec![3], vec!["a".into(), String::new(), "é".repeat(200)]).unwrap(),
            Tensor::from_strings(vec![0], vec![]).unwrap(),
        ];
        for t in &tensors {
            for name in [None, Some(""), Some("output_0")] {
                let mut streamed = Vec::new();
                write_tensor_proto(&mut streamed, t, name).unwrap();
                assert_eq!(streamed, tensor_to_proto(t, name).encode_to_vec(), "{t:?} {name:?}");
            }
        }
        for v in [0, 1, 127, 128, 16383, 16384, u64::MAX] {
            let mut out = Vec::new();
            write_varint(&mut out, v).unwrap();
            assert_eq!(out.len() as u64, varint_len(v), "{v}");
        }
    }

    #[test]
    fn round_trip_through_bytes() {
        let t = Tensor::from_codes(DType::Int2, vec![2, 3], &[0, 1, 2, 3, 1, 2]).unwrap();
        let bytes = tensor_to_proto(&t, Some("x")).encode_to_vec();
        let back = tensor_from_proto(&TensorProto::decode(bytes.as_slice()).unwrap()).unwrap();
        assert_eq!(back, t);
        let s = Tensor::from_strings(vec![2], vec!["a".into(), "é".into()]).unwrap();
        let bytes = tensor_to_proto(&s, None).encode_to_vec();
        assert_eq!(tensor_from_proto(&TensorProto::decode(bytes.as_slice()).unwrap()).unwrap(), s);
    }
}
