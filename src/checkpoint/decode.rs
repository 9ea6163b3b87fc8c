//! Dequantizing a checkpoint's weights, a piece at a time: MXFP4, NVFP4 and FP8 weights go
//! through the tile decoder (`tiles`: lookup tables made by `quant::blocks` itself), the other
//! quantized weights a band of rows at once (whole scale tiles) through the block-scaled recipes
//! (`quant::blocks`), and a plain float tensor a run of elements at once, through a conversion
//! plan; so memory stays bounded by the tile or band, not the tensor. Bytes are read with
//! positioned reads, not through the map.

use super::weight::{ElementStorage, LogicalWeight};
use super::{checkpoint_error, write_safetensors, Checkpoint, SafetensorsTensor, StoredTensor, StoredType};
use crate::dtype::{DType, Kind};
use crate::error::{quoted, Error, Result};
use crate::packing;
use crate::quant::blocks::{self, BlockShape, Scales, Scheme};
use crate::{CastOptions, Plan};

/// The elements one piece holds at most (16 MB of float32).
pub(crate) const PIECE_ELEMENTS: usize = 1 << 22;

/// The dtype a weight has once dequantized to `float`: `float` for quantized weights and float
/// tensors; other tensors (integers, BOOL, complex) keep theirs.
#[must_use]
pub fn decoded_dtype(ckpt: &Checkpoint, w: &LogicalWeight, float: DType) -> DType {
    if w.scheme.is_some() {
        return float;
    }
    match ckpt.tensor(&w.elements).map(|t| t.stored) {
        Some(StoredType::Plain(d)) if matches!(d.kind(), Kind::Float(_)) => float,
        Some(StoredType::Plain(d)) => d,
        _ => float,
    }
}

fn read(ckpt: &Checkpoint, t: &StoredTensor, start: u64, len: usize) -> Result<Vec<u8>> {
    let mut buf = Vec::new();
    buf.try_reserve_exact(len).map_err(|_| Error::TooLarge { what: format!("{len} bytes of {}", quoted(&t.name)) })?;
    buf.resize(len, 0);
    ckpt.read_at(t, start, &mut buf)?;
    Ok(buf)
}

fn part<'a>(ckpt: &'a Checkpoint, w: &LogicalWeight, name: &str) -> Result<&'a StoredTensor> {
    ckpt.tensor(name).ok_or_else(|| {
        checkpoint_error(ckpt.files()[0], Some(name), None, format!("weight {}: tensor missing", quoted(&w.name)))
    })
}

/// Calls `out` with the weight's values converted to `dtype` (see [`decoded_dtype`]), as raw
/// bytes, piece by piece in order. Weights the tile decoder covers (see `tiles`) go through it;
/// the rest through `quant::blocks` a band of rows at a time.
pub fn dequantize_pieces(
    ckpt: &Checkpoint,
    w: &LogicalWeight,
    float: DType,
    out: &mut dyn FnMut(&[u8]) -> Result<()>,
) -> Result<()> {
    pieces(ckpt, w, float, Path::Tiles, out)
}

/// Which decoder [`pieces`] may use: `General` is the definition the tile decoder is tested
/// against.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Path {
    Tiles,
    #[cfg_attr(not(test), allow(dead_code))]
    General,
}

pub(super) fn pieces(
    ckpt: &Checkpoint,
    w: &LogicalWeight,
    float: DType,
    path: Path,
    out: &mut dyn FnMut(&[u8]) -> Result<()>,
) -> Result<()> {
    let elements = part(ckpt, w, &w.elements)?;
    let refuse =
        |message: String| checkpoint_error(ckpt.files()[elements.file], Some(&w.name), Some(elements.offset), message);
    if let Some(problem) = w.problems.first() {
        return Err(refuse(format!("cannot be decoded: {problem}")));
    }
    let target = decoded_dtype(ckpt, w, float);
    let Some(scheme_name) = &w.scheme else {
        return plain_pieces(ckpt, elements, target, out);
    };
    let scheme = Scheme::parse(scheme_name)?;
    if w.storage == ElementStorage::Producer {
        return producer_pieces(ckpt, w, &scheme, target, out);
    }
    let shape = if w.shape.is_empty() { vec![1] } else { w.shape.clone() };
    let cols = *shape.last().expect("not empty");
    let rows: usize = shape[..shape.len() - 1].iter().product();
    let tile_rows = match scheme.recipe().block {
        BlockShape::Tile(r, _) => r,
        _ => 1,
    };
    let row_bytes = match w.storage {
        ElementStorage::PackedE2M1 => cols / 2,
        ElementStorage::Codes => cols,
        ElementStorage::GgmlBlocks => match elements.stored {
            StoredType::Ggml(g) => cols / g.block().0 * g.block().1,
            _ => return Err(refuse("a ggml scheme on a tensor that is not ggml blocks".into())),
        },
        ElementStorage::Plain => return Err(refuse("a scheme on plain elements".into())),
        ElementStorage::Producer => unreachable!("read by producer_pieces above"),
    };
    if row_bytes as u64 * rows as u64 != elements.len {
        return Err(refuse(format!("{} bytes hold {rows} rows of {cols} elements", elements.len)));
    }
    let scales = w.scales.as_deref().map(|n| part(ckpt, w, n)).transpose()?;
    let global = match w.global_scale.as_deref() {
        Some(n) => {
            let g = part(ckpt, w, n)?;
            if g.stored != StoredType::Plain(DType::Float) || g.len != 4 {
                return Err(refuse(format!("the per-tensor scale {} is not one float32", quoted(n))));
            }
            let b = read(ckpt, g, 0, 4)?;
            Some(f32::from_le_bytes(b.try_into().expect("4 bytes")))
        }
        None => None,
    };
    // The implementations' NaN bits can depend on an element's place in the whole tensor (torch's
    // vector loops and their tails): a weight holding a NaN under such a row is decoded whole.
    let whole = position_rules(&scheme) && nan_anywhere(ckpt, w, &scheme, elements, scales, global)?;
    if path == Path::Tiles && !whole {
        if let Some(fast) = super::tiles::fast_weight(ckpt, w, &scheme, global, target)? {
            return fast.run(ckpt, out);
        }
    }
    let band = if whole { rows.max(1) } else { (PIECE_ELEMENTS / cols.max(1)).max(1).div_ceil(tile_rows) * tile_rows };
    let plan =
        (target != DType::Float).then(|| Plan::new(DType::Float, target, &CastOptions::default())).transpose()?;
    let mut r0 = 0;
    while r0 < rows.max(1) {
        let r1 = (r0 + band).min(rows.max(1));
        let piece_shape: Vec<usize> = if shape.len() == 1 { vec![cols] } else { vec![r1 - r0, cols] };
        let raw = read(ckpt, elements, (r0 * row_bytes) as u64, (r1 - r0) * row_bytes)?;
        let q = if w.storage == ElementStorage::GgmlBlocks {
            blocks::from_bytes(&raw, &scheme, &piece_shape, -1)?
        } else {
            let codes = match w.storage {
                ElementStorage::PackedE2M1 => {
                    let mut codes = vec![0u8; raw.len() * 2];
                    packing::unpack_byte_codes(DType::Float4E2M1, &raw, &mut codes)?;
                    codes
                }
                _ => raw,
            };
            let scales = scales.ok_or_else(|| refuse("no scale tensor".into()))?;
            let scale_piece = scale_rows(ckpt, scales, rows, r0, r1, tile_rows)?;
            blocks::from_arrays(codes, &piece_shape, scale_piece, &scheme, -1, global)?
        };
        let values = q.dequantize()?;
        match &plan {
            None => out(as_bytes(&values))?,
            Some(plan) => {
                let mut buf = vec![0u8; packing::raw_len(target, values.len())?];
                plan.run(as_bytes(&values), &mut buf, values.len())?;
                out(&buf)?;
            }
        }
        r0 = r1;
    }
    Ok(())
}

/// Whether the scheme's row writes NaN bits that depend on an element's or a block's place in
/// the whole tensor (`NanRules`: vector lanes and their tails, the per-tensor scale's tail).
fn position_rules(scheme: &Scheme) -> bool {
    let nan = &scheme.recipe().nan;
    !nan.lanes.is_empty() || nan.global_tail.1 > 0 || nan.float16_broadcast_lanes > 0
}

/// Whether any element code, block scale or the per-tensor scale of `w` may be a NaN (one-byte
/// scale codes are taken as NaN where any of the scale formats reads them so: E8M0 0xFF,
/// E4M3's 0x7F with either sign).
fn nan_anywhere(
    ckpt: &Checkpoint,
    w: &LogicalWeight,
    scheme: &Scheme,
    elements: &StoredTensor,
    scales: Option<&StoredTensor>,
    global: Option<f32>,
) -> Result<bool> {
    if global.is_some_and(f32::is_nan) {
        return Ok(true);
    }
    let any_nan_in = |t: &StoredTensor, is_nan: &dyn Fn(&[u8]) -> bool, width: usize| -> Result<bool> {
        let mut start = 0u64;
        while start < t.len {
            let len = ((t.len - start).min(PIECE_ELEMENTS as u64 * 4) as usize) / width * width;
            let chunk = read(ckpt, t, start, len.max(width))?;
            if chunk.chunks_exact(width).any(is_nan) {
                return Ok(true);
            }
            start += len.max(width) as u64;
        }
        Ok(false)
    };
    if let Some(s) = scales {
        let found = match s.stored {
            StoredType::Plain(DType::Float) => {
                any_nan_in(s, &|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]).is_nan(), 4)?
            }
            StoredType::Plain(DType::Float16) => {
                any_nan_in(s, &|b| half::f16::from_bits(u16::from_le_bytes([b[0], b[1]])).is_nan(), 2)?
            }
            StoredType::Plain(DType::Bfloat16) => {
                any_nan_in(s, &|b| half::bf16::from_bits(u16::from_le_bytes([b[0], b[1]])).is_nan(), 2)?
            }
            _ => any_nan_in(s, &|b| b[0] == 0xFF || b[0] & 0x7F == 0x7F, 1)?,
        };
        if found {
            return Ok(true);
        }
    }
    // Element codes one a byte: the codes of the element type that decode to NaN.
    let element = scheme.recipe().element;
    if w.storage != ElementStorage::Codes {
        return Ok(false);
    }
    let mut nan_codes = [false; 256];
    for (c, n) in nan_codes.iter_mut().enumerate() {
        *n = matches!(crate::convert::decode_element(element, c as u64), Ok(crate::convert::Element::Float(v)) if matches!(v, crate::value::Value::Nan { .. }));
    }
    if !nan_codes.contains(&true) {
        return Ok(false);
    }
    any_nan_in(elements, &|b| nan_codes[usize::from(b[0])], 1)
}

/// An integer or codebook weight: its producer's tensors read whole (each checked against the
/// file first), through the scheme's `from_storage`, dequantized in `target` as the producer
/// does, then handed out a piece at a time.
fn producer_pieces(
    ckpt: &Checkpoint,
    w: &LogicalWeight,
    scheme: &Scheme,
    target: DType,
    out: &mut dyn FnMut(&[u8]) -> Result<()>,
) -> Result<()> {
    let tensors = super::integer_conventions::read_parts(ckpt, w, scheme)?;
    let first = part(ckpt, w, &w.elements)?;
    let at = |e: Error| {
        checkpoint_error(ckpt.files()[first.file], Some(&w.name), Some(first.offset), format!("{}: {e}", scheme.name()))
    };
    let q = blocks::from_storage(&tensors, scheme, &w.shape).map_err(at)?;
    drop(tensors);
    let values = blocks::dequantize_as(&q, target).map_err(at)?;
    let width = target.bits().unwrap_or(32) as usize / 8;
    for piece in values.chunks((PIECE_ELEMENTS * width).max(1)) {
        out(piece)?;
    }
    Ok(())
}

/// The scales of rows `r0..r1` of a `rows`-row weight: all of a per-tensor scale, the tiles'
/// rows for 2-D tiles, else the same rows.
pub(crate) fn scale_rows(
    ckpt: &Checkpoint,
    scales: &StoredTensor,
    rows: usize,
    r0: usize,
    r1: usize,
    tile_rows: usize,
) -> Result<Scales> {
    let count = scales.elements();
    let (s0, s1, scale_rows_total) = if count == 1 {
        (0, 1, 1)
    } else if tile_rows > 1 {
        (r0 / tile_rows, r1.div_ceil(tile_rows), rows.div_ceil(tile_rows))
    } else {
        (r0, r1, rows.max(1))
    };
    let bytes_per_row = scales.len as usize / scale_rows_total;
    let raw = read(ckpt, scales, (s0 * bytes_per_row) as u64, (s1 - s0) * bytes_per_row)?;
    Ok(match scales.stored {
        StoredType::Plain(DType::Uint8 | DType::Float8E4M3FN | DType::Float8E8M0) => Scales::Codes(raw),
        StoredType::Plain(DType::Float) => {
            Scales::Float32(raw.chunks_exact(4).map(|b| f32::from_le_bytes(b.try_into().expect("4"))).collect())
        }
        StoredType::Plain(DType::Float16) => {
            Scales::Float16(raw.chunks_exact(2).map(|b| u16::from_le_bytes([b[0], b[1]])).collect())
        }
        StoredType::Plain(DType::Bfloat16) => {
            Scales::Bfloat16(raw.chunks_exact(2).map(|b| u16::from_le_bytes([b[0], b[1]])).collect())
        }
        other => {
            return Err(checkpoint_error(
                ckpt.files()[scales.file],
                Some(&scales.name),
                Some(scales.offset),
                format!("scales stored as {other} are not a scale type"),
            ))
        }
    })
}

fn as_bytes(values: &[f32]) -> &[u8] {
    zerocopy::IntoBytes::as_bytes(values)
}

/// A plain tensor converted to `target` (a copy when it is already `target`), piece by piece.
fn plain_pieces(
    ckpt: &Checkpoint,
    t: &StoredTensor,
    target: DType,
    out: &mut dyn FnMut(&[u8]) -> Result<()>,
) -> Result<()> {
    let StoredType::Plain(source) = t.stored else {
        return Err(checkpoint_error(
            ckpt.files()[t.file],
            Some(&t.name),
            Some(t.offset),
            "ggml blocks with no recipe".into(),
        ));
    };
    let n = t.elements();
    let plan = (source != target).then(|| Plan::new(source, target, &CastOptions::default())).transpose()?;
    // A multiple of 8 elements is a whole number of bytes in every packing.
    let mut start = 0;
    while start < n {
        let end = (start + PIECE_ELEMENTS).min(n);
        let from = packing::raw_len(source, start)?;
        let raw = read(ckpt, t, from as u64, packing::raw_len(source, end)? - from)?;
        match &plan {
            None => out(&raw)?,
            Some(plan) => {
                let mut buf = vec![0u8; packing::raw_len(target, end - start)?];
                plan.run(&raw, &mut buf, end - start)?;
                out(&buf)?;
            }
        }
        start = end;
    }
    Ok(())
}

/// The whole weight as float32 (see [`decoded_dtype`]: integers are converted too).
pub fn dequantize_f32(ckpt: &Checkpoint, w: &LogicalWeight) -> Result<Vec<f32>> {
    let elements: usize = w.shape.iter().product();
    let mut values: Vec<f32> = Vec::new();
    values.try_reserve_exact(elements).map_err(|_| Error::TooLarge { what: format!("{elements} float32 values") })?;
    let t = part(ckpt, w, &w.elements)?;
    if w.scheme.is_none() {
        if let StoredType::Plain(source) = t.stored {
            if !matches!(source.kind(), Kind::Float(_)) {
                let plan = Plan::new(source, DType::Float, &CastOptions::default())?;
                let raw = read(ckpt, t, 0, t.len as usize)?;
                let mut buf = vec![0u8; elements * 4];
                plan.run(&raw, &mut buf, elements)?;
                return Ok(buf.chunks_exact(4).map(|b| f32::from_le_bytes(b.try_into().expect("4"))).collect());
            }
        }
    }
    dequantize_pieces(ckpt, w, DType::Float, &mut |bytes| {
        values.extend(bytes.chunks_exact(4).map(|b| f32::from_le_bytes(b.try_into().expect("4 bytes"))));
        Ok(())
    })?;
    Ok(values)
}

/// What the scale tensors of `w` hold that no recipe produces: NaN or infinite scales (E8M0
/// 0xFF, E4M3 0x7F/0xFF, float32 NaN/Inf), negative scales, a per-tensor scale that is zero.
/// The scales are read a piece at a time.
pub fn scale_problems(ckpt: &Checkpoint, w: &LogicalWeight) -> Result<Vec<String>> {
    let mut problems = Vec::new();
    for (name, per_tensor) in [(w.scales.as_deref(), false), (w.global_scale.as_deref(), true)] {
        let Some(t) = name.and_then(|n| ckpt.tensor(n)) else { continue };
        let StoredType::Plain(dtype) = t.stored else { continue };
        let (mut nan, mut inf, mut negative, mut zero) = (0u64, 0u64, 0u64, 0u64);
        let mut start = 0u64;
        while start < t.len {
            let n = (t.len - start).min(1 << 20) as usize;
            let raw = read(ckpt, t, start, n - n % dtype.bits().map_or(1, |b| (b as usize / 8).max(1)))?;
            match dtype {
                DType::Uint8 | DType::Float8E8M0 if w.convention != "gguf" => {
                    // E8M0 scales (gpt-oss, compressed-tensors mxfp4).
                    nan += raw.iter().filter(|&&b| b == 0xFF).count() as u64;
                }
                DType::Float8E4M3FN => {
                    nan += raw.iter().filter(|&&b| b & 0x7F == 0x7F).count() as u64;
                    negative += raw.iter().filter(|&&b| b & 0x80 != 0 && b & 0x7F != 0x7F && b != 0x80).count() as u64;
                }
                DType::Float => {
                    for b in raw.chunks_exact(4) {
                        let v = f32::from_le_bytes(b.try_into().expect("4 bytes"));
                        nan += u64::from(v.is_nan());
                        inf += u64::from(v.is_infinite());
                        negative += u64::from(v < 0.0);
                        zero += u64::from(v == 0.0);
                    }
                }
                _ => {}
            }
            start += raw.len().max(1) as u64;
        }
        let what = if per_tensor { "per-tensor scale" } else { "block scales" };
        let shown = quoted(&t.name);
        if nan > 0 {
            problems.push(format!("{what} {shown}: {nan} NaN codes"));
        }
        if inf > 0 {
            problems.push(format!("{what} {shown}: {inf} infinite"));
        }
        if negative > 0 {
            problems.push(format!("{what} {shown}: {negative} negative (no recipe makes a negative scale)"));
        }
        if per_tensor && zero > 0 {
            problems.push(format!("{what} {shown}: zero"));
        }
    }
    Ok(problems)
}

/// The weights of slice `k` of `n` (`shard = Some((k, n))`, `k` from 1): contiguous, as even as
/// the count allows, so that the `n` slices hold every weight once (`--shard K/N`).
pub fn shard_of(weights: Vec<LogicalWeight>, shard: Option<(usize, usize)>) -> Result<Vec<LogicalWeight>> {
    let Some((k, n)) = shard else { return Ok(weights) };
    if k == 0 || k > n {
        return Err(Error::InvalidOp {
            op: "checkpoint shard".into(),
            message: format!("shard {k} of {n}: K must be 1 to N"),
        });
    }
    let len = weights.len();
    let (start, end) = (len * (k - 1) / n, len * k / n);
    Ok(weights.into_iter().skip(start).take(end - start).collect())
}

/// One tensor of the output: a weight decoded, or a tensor of a weight lowbit cannot decode
/// copied as stored (`keep_unsupported`).
enum Output<'a> {
    Decoded(&'a LogicalWeight),
    Kept(&'a StoredTensor),
}

/// Writes `weights` of `ckpt` dequantized (see [`dequantize_pieces`]) into the safetensors file
/// `out`, all or nothing, with the checkpoint's `__metadata__` (or `format: pt`). With one
/// thread each weight streams a piece at a time; with more, `threads` weights are decoded at
/// once, each whole in memory. `progress(k)` is called as output tensor `k` starts.
///
/// A weight that cannot be decoded (a convention or type lowbit has no scheme for) is an error
/// naming it, or with `keep_unsupported` its tensors are copied as stored; the answer then
/// lists each such weight with the reason, for the caller to warn of.
pub fn write_dequantized(
    ckpt: &Checkpoint,
    weights: &[LogicalWeight],
    out: &std::path::Path,
    float: DType,
    threads: usize,
    keep_unsupported: bool,
    progress: &mut dyn FnMut(usize),
) -> Result<Vec<String>> {
    let mut kept_notes = Vec::new();
    let mut jobs: Vec<Output<'_>> = Vec::with_capacity(weights.len());
    for w in weights {
        let Some(problem) = w.problems.first() else {
            jobs.push(Output::Decoded(w));
            continue;
        };
        let t = ckpt.tensor(&w.elements);
        let refuse =
            |message: String| checkpoint_error(ckpt.files()[t.map_or(0, |t| t.file)], Some(&w.name), None, message);
        if !keep_unsupported {
            return Err(refuse(format!(
                "cannot be decoded: {problem}; --skip REGEX leaves it out, --keep-unsupported copies its tensors as stored"
            )));
        }
        for name in w.tensors() {
            let t = part(ckpt, w, name)?;
            if !matches!(t.stored, StoredType::Plain(_)) {
                return Err(refuse(format!(
                    "cannot be decoded ({problem}), and its tensor {} of {} has no safetensors dtype to be copied as",
                    quoted(name),
                    t.stored
                )));
            }
            jobs.push(Output::Kept(t));
        }
        kept_notes.push(format!("{}: copied as stored ({problem})", w.name));
    }
    let outputs: Vec<SafetensorsTensor> = jobs
        .iter()
        .map(|job| match job {
            Output::Decoded(w) => {
                SafetensorsTensor { name: w.name.clone(), dtype: decoded_dtype(ckpt, w, float), shape: w.shape.clone() }
            }
            Output::Kept(t) => SafetensorsTensor {
                name: t.name.clone(),
                dtype: match t.stored {
                    StoredType::Plain(d) => d,
                    _ => unreachable!("checked above"),
                },
                shape: t.shape.clone(),
            },
        })
        .collect();
    let mut metadata: Vec<(String, String)> = ckpt.metadata().to_vec();
    if metadata.is_empty() {
        metadata.push(("format".into(), "pt".into()));
    }
    let threads = threads.max(1);
    // Weights decoded ahead of the writer when threads > 1 (whole, in memory), kept by index.
    let mut ready: std::collections::BTreeMap<usize, Vec<u8>> = std::collections::BTreeMap::new();
    write_safetensors(out, &outputs, &metadata, |k, sink| {
        progress(k);
        let w = match jobs[k] {
            Output::Kept(t) => {
                let mut start = 0u64;
                while start < t.len {
                    let len = (t.len - start).min(PIECE_ELEMENTS as u64 * 4) as usize;
                    sink.write_all(&read(ckpt, t, start, len)?).map_err(|e| Error::io(out, e))?;
                    start += len as u64;
                }
                return Ok(());
            }
            Output::Decoded(w) => w,
        };
        if threads == 1 {
            return dequantize_pieces(ckpt, w, float, &mut |bytes| {
                sink.write_all(bytes).map_err(|e| Error::io(out, e))
            });
        }
        if !ready.contains_key(&k) {
            let batch: Vec<(usize, &LogicalWeight)> = jobs[k..]
                .iter()
                .enumerate()
                .filter_map(|(i, job)| match job {
                    Output::Decoded(w) => Some((k + i, *w)),
                    Output::Kept(_) => None,
                })
                .take(threads)
                .collect();
            let decoded: Vec<Result<Vec<u8>>> = std::thread::scope(|scope| {
                let handles: Vec<_> = batch
                    .iter()
                    .map(|&(_, w)| {
                        scope.spawn(move || {
                            let mut all = Vec::new();
                            dequantize_pieces(ckpt, w, float, &mut |bytes| {
                                all.extend_from_slice(bytes);
                                Ok(())
                            })
                            .map(|()| all)
                        })
                    })
                    .collect();
                handles.into_iter().map(|h| h.join().expect("a decoding thread does not panic")).collect()
            });
            for ((i, _), result) in batch.into_iter().zip(decoded) {
                ready.insert(i, result?);
            }
        }
        let bytes = ready.remove(&k).expect("decoded above");
        sink.write_all(&bytes).map_err(|e| Error::io(out, e))
    })?;
    Ok(kept_notes)
}
