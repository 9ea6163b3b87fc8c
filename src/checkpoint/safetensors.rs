//! safetensors files through the `safetensors` crate: its parser reads the header (the 8-byte
//! little-endian length, the JSON, `__metadata__`, the offsets), its `Metadata` writes the
//! header of the files lowbit makes. What the crate does not check or does not say precisely
//! is done here: a name given twice in the header (the JSON parser keeps the last one), and, when
//! the crate refuses a file, which tensor and which byte are at fault.
//!
//! Every safetensors dtype of the crate (0.8.0) has an ONNX dtype in lowbit: BOOL, U8..U64,
//! I8..I64, F16, BF16, F32, F64 (DOUBLE), C64 (COMPLEX64, copied as bytes: Cast has no complex
//! numbers), F8_E5M2, F8_E4M3 (torch's float8_e4m3fn, FLOAT8E4M3FN), F8_E8M0, F8_E4M3FNUZ,
//! F8_E5M2FNUZ, F4 (FLOAT4E2M1), F6_E2M3, F6_E3M2. The format fixes only the bit count of the
//! sub-byte types; lowbit reads and writes them in ONNX's order (4-bit: element 2k in the low
//! nibble; 6-bit: four elements in three bytes, least significant bit first). ONNX dtypes with no
//! safetensors dtype (INT4, UINT4, INT2, UINT2, COMPLEX128, STRING) cannot be written.

use super::json::check_json;
use super::{checkpoint_error, StoredTensor, StoredType};
use crate::dtype::DType;
use crate::error::{quoted, Error, Result};
use safetensors::tensor::{Metadata, TensorInfo};
use safetensors::{Dtype, SafeTensorError, SafeTensors};
use std::collections::HashMap;
use std::io::Write;
use std::path::Path;

/// The largest header the format allows (the crate's `MAX_HEADER_SIZE`).
pub(crate) const MAX_HEADER_BYTES: u64 = 100_000_000;

/// The ONNX dtype of a safetensors dtype.
pub(crate) fn dtype_of(dtype: Dtype) -> Option<DType> {
    Some(match dtype {
        Dtype::BOOL => DType::Bool,
        Dtype::F4 => DType::Float4E2M1,
        Dtype::F6_E2M3 => DType::Float6E2M3,
        Dtype::F6_E3M2 => DType::Float6E3M2,
        Dtype::U8 => DType::Uint8,
        Dtype::I8 => DType::Int8,
        Dtype::F8_E5M2 => DType::Float8E5M2,
        Dtype::F8_E4M3 => DType::Float8E4M3FN,
        Dtype::F8_E8M0 => DType::Float8E8M0,
        Dtype::F8_E4M3FNUZ => DType::Float8E4M3FNUZ,
        Dtype::F8_E5M2FNUZ => DType::Float8E5M2FNUZ,
        Dtype::I16 => DType::Int16,
        Dtype::U16 => DType::Uint16,
        Dtype::F16 => DType::Float16,
        Dtype::BF16 => DType::Bfloat16,
        Dtype::I32 => DType::Int32,
        Dtype::U32 => DType::Uint32,
        Dtype::F32 => DType::Float,
        Dtype::C64 => DType::Complex64,
        Dtype::F64 => DType::Double,
        Dtype::I64 => DType::Int64,
        Dtype::U64 => DType::Uint64,
        // The crate's enum is non-exhaustive: a dtype added by a later version is reported by name.
        _ => return None,
    })
}

/// The safetensors dtype of an ONNX dtype, if it has one.
pub(crate) fn safetensors_dtype(dtype: DType) -> Option<Dtype> {
    Some(match dtype {
        DType::Bool => Dtype::BOOL,
        DType::Float4E2M1 => Dtype::F4,
        DType::Float6E2M3 => Dtype::F6_E2M3,
        DType::Float6E3M2 => Dtype::F6_E3M2,
        DType::Uint8 => Dtype::U8,
        DType::Int8 => Dtype::I8,
        DType::Float8E5M2 => Dtype::F8_E5M2,
        DType::Float8E4M3FN => Dtype::F8_E4M3,
        DType::Float8E8M0 => Dtype::F8_E8M0,
        DType::Float8E4M3FNUZ => Dtype::F8_E4M3FNUZ,
        DType::Float8E5M2FNUZ => Dtype::F8_E5M2FNUZ,
        DType::Int16 => Dtype::I16,
        DType::Uint16 => Dtype::U16,
        DType::Float16 => Dtype::F16,
        DType::Bfloat16 => Dtype::BF16,
        DType::Int32 => Dtype::I32,
        DType::Uint32 => Dtype::U32,
        DType::Float => Dtype::F32,
        DType::Complex64 => Dtype::C64,
        DType::Double => Dtype::F64,
        DType::Int64 => Dtype::I64,
        DType::Uint64 => Dtype::U64,
        _ => return None,
    })
}

/// What one safetensors file holds: its tensors (offsets absolute in the file, in file order)
/// and its `__metadata__`.
pub(crate) struct Parsed {
    pub(crate) tensors: Vec<StoredTensor>,
    pub(crate) metadata: Vec<(String, String)>,
}

/// Reads the header of the safetensors file `bytes` (`file` is its index in the checkpoint).
pub(crate) fn parse(bytes: &[u8], path: &Path, file: usize) -> Result<Parsed> {
    let fail =
        |tensor: Option<&str>, offset: Option<u64>, message: String| checkpoint_error(path, tensor, offset, message);
    let size = bytes.len() as u64;
    let Some(prefix) = bytes.get(..8) else {
        return Err(fail(None, Some(0), format!("{size} bytes is shorter than the 8-byte header length")));
    };
    let header_len = u64::from_le_bytes(prefix.try_into().expect("8 bytes"));
    if header_len > MAX_HEADER_BYTES {
        return Err(fail(
            None,
            Some(0),
            format!(
                "the header length {header_len} is over the {MAX_HEADER_BYTES} bytes the safetensors format allows"
            ),
        ));
    }
    if 8 + header_len > size {
        return Err(fail(
            None,
            Some(0),
            format!("the header length {header_len} runs past the end of the file ({size} bytes)"),
        ));
    }
    let header = &bytes[8..8 + header_len as usize];
    check_json(header).map_err(|(message, at)| fail(None, Some(8 + at), format!("header: {message}")))?;
    let data_start = 8 + header_len;
    let (_, metadata) = match SafeTensors::read_metadata(bytes) {
        Ok(parsed) => parsed,
        Err(refusal) => return Err(diagnose(header, data_start, size, path, &refusal)),
    };
    let mut tensors = Vec::with_capacity(metadata.tensors().len());
    for name in metadata.offset_keys() {
        let info = metadata.info(&name).expect("a name the metadata lists");
        let dtype = dtype_of(info.dtype)
            .ok_or_else(|| fail(Some(&name), None, format!("dtype {} has no lowbit dtype", info.dtype)))?;
        let (start, end) = info.data_offsets;
        tensors.push(StoredTensor {
            name,
            stored: StoredType::Plain(dtype),
            shape: info.shape.clone(),
            file,
            offset: data_start + start as u64,
            len: (end - start) as u64,
        });
    }
    let metadata = metadata.metadata().as_ref().map_or_else(Vec::new, |m| {
        let mut pairs: Vec<(String, String)> = m.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        pairs.sort();
        pairs
    });
    Ok(Parsed { tensors, metadata })
}

/// The precise reason the crate refused a header that is valid JSON: which entry, which byte.
fn diagnose(header: &[u8], data_start: u64, size: u64, path: &Path, refusal: &SafeTensorError) -> Error {
    let fail =
        |tensor: Option<&str>, offset: Option<u64>, message: String| checkpoint_error(path, tensor, offset, message);
    let generic = || fail(None, Some(8), format!("the safetensors crate refuses the header: {refusal}"));
    let Ok(serde_json::Value::Object(entries)) = serde_json::from_slice::<serde_json::Value>(header) else {
        return fail(None, Some(8), format!("the header is not a JSON object: {refusal}"));
    };
    let mut spans = Vec::new();
    for (name, entry) in &entries {
        if name == "__metadata__" {
            let ok = entry.as_object().is_some_and(|m| m.values().all(serde_json::Value::is_string));
            if !ok {
                return fail(None, Some(8), "__metadata__ must map names to strings".into());
            }
            continue;
        }
        let info: TensorInfo = match serde_json::from_value(entry.clone()) {
            Ok(info) => info,
            Err(e) => {
                let dtype = entry.get("dtype").and_then(serde_json::Value::as_str);
                let message = match dtype {
                    Some(d) if serde_json::from_value::<Dtype>(d.into()).is_err() => {
                        format!("unknown dtype {}", quoted(d))
                    }
                    _ => format!("its entry is not {{dtype, shape, data_offsets}}: {e}"),
                };
                return fail(Some(name), None, message);
            }
        };
        let (start, end) = info.data_offsets;
        let at = data_start.saturating_add(start as u64);
        let Some(elements) = info.shape.iter().try_fold(1usize, |n, &d| n.checked_mul(d)) else {
            return fail(
                Some(name),
                Some(at),
                format!("the shape {:?} has more elements than fit in memory", info.shape),
            );
        };
        let bits = info.dtype.bitsize();
        let Some(total_bits) = elements.checked_mul(bits) else {
            return fail(Some(name), Some(at), format!("{elements} elements of {} overflow a byte count", info.dtype));
        };
        if total_bits % 8 != 0 {
            return fail(
                Some(name),
                Some(at),
                format!("{elements} elements of {} ({bits} bits each) are not a whole number of bytes", info.dtype),
            );
        }
        if end < start {
            return fail(Some(name), Some(at), format!("data_offsets [{start}, {end}] end before they start"));
        }
        if end - start != total_bits / 8 {
            return fail(
                Some(name),
                Some(at),
                format!(
                    "dtype {} and shape {:?} need {} bytes, but data_offsets [{start}, {end}] hold {}",
                    info.dtype,
                    info.shape,
                    total_bits / 8,
                    end - start
                ),
            );
        }
        spans.push((start, end, name.as_str()));
    }
    spans.sort_unstable();
    let mut expected = 0usize;
    for &(start, end, name) in &spans {
        let at = Some(data_start.saturating_add(start as u64));
        if start > expected {
            return fail(Some(name), at, format!("a hole: bytes {expected}..{start} of the data belong to no tensor"));
        }
        if start < expected {
            return fail(
                Some(name),
                at,
                format!("data_offsets [{start}, {end}] overlap the tensor before (which ends at {expected})"),
            );
        }
        expected = end;
    }
    let data_len = size - data_start;
    if expected as u64 != data_len {
        let at = Some(data_start.saturating_add(expected.min(data_len as usize) as u64));
        let message = if (expected as u64) > data_len {
            format!("the tensors need {expected} bytes of data, but the file holds {data_len} after its header")
        } else {
            format!("{} bytes after the last tensor belong to no tensor", data_len - expected as u64)
        };
        return fail(spans.last().map(|s| s.2), at, message);
    }
    generic()
}

/// One tensor of a file to write: name, dtype, shape; its bytes come from the writer's callback.
pub struct SafetensorsTensor {
    /// The name.
    pub name: String,
    /// The element type.
    pub dtype: DType,
    /// The shape, outermost first (numpy order).
    pub shape: Vec<usize>,
}

/// The header of a safetensors file holding `tensors` in this order, made by the crate's
/// `Metadata` (the 8-byte length and the JSON padded with spaces to a multiple of 8, as the
/// crate's own writer pads it), and each tensor's byte count.
pub(crate) fn header(
    tensors: &[SafetensorsTensor],
    metadata: &[(String, String)],
    path: &Path,
) -> Result<(Vec<u8>, Vec<usize>)> {
    let mut infos = Vec::with_capacity(tensors.len());
    let mut sizes = Vec::with_capacity(tensors.len());
    let mut offset = 0usize;
    for t in tensors {
        let dtype = safetensors_dtype(t.dtype).ok_or_else(|| {
            checkpoint_error(path, Some(&t.name), None, format!("{} has no safetensors dtype", t.dtype))
        })?;
        let elements = crate::tensor::element_count(&t.shape)?;
        let bytes = crate::packing::raw_len(t.dtype, elements)?;
        if t.dtype.packing() == crate::dtype::Packing::Sextets && elements % 4 != 0
            || t.dtype.packing() == crate::dtype::Packing::Nibbles && elements % 2 != 0
        {
            return Err(checkpoint_error(
                path,
                Some(&t.name),
                None,
                format!(
                    "{elements} elements of {} are not a whole number of bytes, which safetensors requires",
                    t.dtype
                ),
            ));
        }
        let end = offset.checked_add(bytes).ok_or_else(|| Error::TooLarge { what: "the tensors' bytes".into() })?;
        infos.push((t.name.clone(), TensorInfo { dtype, shape: t.shape.clone(), data_offsets: (offset, end) }));
        sizes.push(bytes);
        offset = end;
    }
    let extra: Option<HashMap<String, String>> = (!metadata.is_empty()).then(|| metadata.iter().cloned().collect());
    let refused = |e: SafeTensorError| checkpoint_error(path, None, None, format!("cannot make the header: {e}"));
    let metadata = Metadata::new(extra, infos).map_err(refused)?;
    let mut json = serde_json::to_vec(&metadata).map_err(|e| refused(e.into()))?;
    json.resize(json.len().next_multiple_of(8), b' ');
    let mut out = Vec::with_capacity(8 + json.len());
    out.write_all(&(json.len() as u64).to_le_bytes()).expect("a Vec takes every write");
    out.extend_from_slice(&json);
    Ok((out, sizes))
}
