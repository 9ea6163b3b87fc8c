//! Which recipe made a quantized checkpoint: each quantized weight's original (the tensor of the
//! same name in the unquantized checkpoint) is quantized again under every recipe of the same
//! family, and the recipes are ranked by the share of element codes and scales (the per-tensor
//! scale counted as one scale) they reproduce bit for bit.
//!
//! A recipe belongs to the weight's family when it stores what the file stores: the same element
//! type, the same storage layout, the same kind of scales (codes or floats) and as many of them.
//! So an NVFP4 weight is tried under torchao's, ModelOpt's and compressed-tensors' NVFP4, an
//! MXFP4 weight under OCP MX (floor and ceil) and torchao's four scale modes, a float-scaled FP8
//! weight under DeepSeek's (both scale formats) and compressed-tensors' recipes of that shape.

use super::conventions::recognise;
use super::decode::scale_rows;
use super::quantize::{quantize_stored, Selection};
use super::weight::{ElementStorage, LogicalWeight};
use super::{checkpoint_error, Checkpoint, StoredType};
use crate::packing;
use crate::quant::blocks::{self, BlockShape, Quantized, Scales, Scheme};
use crate::{DType, Result};

/// How well one recipe reproduces one weight.
#[derive(Clone, Debug, PartialEq)]
pub struct Reproduced {
    /// The recipe's scheme name.
    pub scheme: String,
    /// Element codes equal to the file's.
    pub elements_matched: u64,
    /// Element codes compared.
    pub elements: u64,
    /// Scales (and the per-tensor scale) equal to the file's, bit for bit.
    pub scales_matched: u64,
    /// Scales compared.
    pub scales: u64,
    /// Why the recipe could not quantize the original (it then reproduces nothing).
    pub error: Option<String>,
}

impl Reproduced {
    /// The share of elements and scales reproduced, 0 to 1.
    #[must_use]
    pub fn share(&self) -> f64 {
        let total = self.elements + self.scales;
        if total == 0 {
            0.0
        } else {
            (self.elements_matched + self.scales_matched) as f64 / total as f64
        }
    }
}

/// One quantized weight and its recipes, best first.
#[derive(Clone, Debug)]
pub struct WeightOrigin {
    /// The weight's name.
    pub name: String,
    /// The scheme its convention names.
    pub stored_scheme: String,
    /// Every recipe of its family, best first (ties in the order of `quant::blocks::concrete_schemes`).
    pub ranking: Vec<Reproduced>,
}

/// The stored weight as a [`Quantized`] of `scheme` (its codes, scales and per-tensor scale).
pub(super) fn stored(ckpt: &Checkpoint, w: &LogicalWeight, scheme: &Scheme) -> Result<Quantized> {
    let part = |name: &str| {
        ckpt.tensor(name).ok_or_else(|| checkpoint_error(ckpt.files()[0], Some(name), None, "tensor missing".into()))
    };
    let elements = part(&w.elements)?;
    let bytes = ckpt.bytes_checked(elements)?;
    let shape = w.shape.clone();
    if w.storage == ElementStorage::GgmlBlocks {
        return blocks::from_bytes(bytes, scheme, &shape, -1);
    }
    if w.storage == ElementStorage::Producer {
        let tensors = super::integer_conventions::read_parts(ckpt, w, scheme)?;
        return blocks::from_storage(&tensors, scheme, &shape);
    }
    let codes = match w.storage {
        ElementStorage::PackedE2M1 => {
            let mut codes = vec![0u8; bytes.len() * 2];
            packing::unpack_byte_codes(DType::Float4E2M1, bytes, &mut codes)?;
            codes
        }
        _ => bytes.to_vec(),
    };
    let scales = part(w.scales.as_deref().ok_or_else(|| {
        checkpoint_error(ckpt.files()[elements.file], Some(&w.name), None, "no scale tensor".into())
    })?)?;
    let rows: usize = shape[..shape.len().saturating_sub(1)].iter().product();
    let tile_rows = match scheme.recipe().block {
        BlockShape::Tile(r, _) => r,
        _ => 1,
    };
    let scales = scale_rows(ckpt, scales, rows, 0, rows.max(1), tile_rows)?;
    let global = match w.global_scale.as_deref() {
        Some(n) => {
            let g = part(n)?;
            match (g.stored, ckpt.bytes_checked(g)?) {
                (StoredType::Plain(DType::Float), &[a, b, c, d]) => Some(f32::from_le_bytes([a, b, c, d])),
                _ => {
                    return Err(checkpoint_error(
                        ckpt.files()[g.file],
                        Some(n),
                        Some(g.offset),
                        "the per-tensor scale is not one float32".into(),
                    ))
                }
            }
        }
        None => None,
    };
    blocks::from_arrays(codes, &shape, scales, scheme, -1, global)
}

/// The scales as comparable bit patterns, with their kind.
fn scale_bits(s: &Scales) -> (u8, Vec<u32>) {
    match s {
        Scales::Codes(v) => (0, v.iter().map(|&c| u32::from(c)).collect()),
        Scales::Float16(v) => (1, v.iter().map(|&c| u32::from(c)).collect()),
        Scales::Bfloat16(v) => (2, v.iter().map(|&c| u32::from(c)).collect()),
        Scales::Float32(v) => (3, v.iter().map(|c| c.to_bits()).collect()),
    }
}

/// True when `candidate` stores what `file` stores for a tensor of `shape`.
fn same_family(file: &Scheme, candidate: &Scheme, shape: &[usize]) -> bool {
    let (a, b) = (file.recipe(), candidate.recipe());
    let scale_kind = |r: &blocks::Recipe| {
        matches!(
            r.scale,
            blocks::ScaleFormat::Float16
                | blocks::ScaleFormat::GgmlFloat16
                | blocks::ScaleFormat::Float32
                | blocks::ScaleFormat::InputDtype
        )
    };
    a.element == b.element
        && a.layout == b.layout
        && scale_kind(a) == scale_kind(b)
        && blocks::scales_shape(shape, file, -1).ok() == blocks::scales_shape(shape, candidate, -1).ok()
}

fn compare(name: &str, file: &Quantized, candidate: Result<Quantized>) -> Reproduced {
    let mut r = Reproduced {
        scheme: name.to_string(),
        elements_matched: 0,
        elements: file.elements.len() as u64,
        scales_matched: 0,
        scales: file.scales.len() as u64 + u64::from(file.global_scale.is_some()),
        error: None,
    };
    let q = match candidate {
        Ok(q) => q,
        Err(e) => {
            r.error = Some(e.to_string());
            return r;
        }
    };
    if q.elements.len() == file.elements.len() {
        r.elements_matched = q.elements.iter().zip(&file.elements).filter(|(a, b)| a == b).count() as u64;
    }
    let ((ka, a), (kb, b)) = (scale_bits(&q.scales), scale_bits(&file.scales));
    if ka == kb && a.len() == b.len() {
        r.scales_matched = a.iter().zip(&b).filter(|(x, y)| x == y).count() as u64;
    }
    if let (Some(x), Some(y)) = (q.global_scale, file.global_scale) {
        r.scales_matched += u64::from(x.to_bits() == y.to_bits());
    }
    r
}

/// Ranks the recipes of each quantized weight of `quantized` (those of slice `shard` = (K, N):
/// the K-th of N equal runs of its logical weights) against `original`, `threads` weights at once;
/// `progress(done, total)` is called as each batch of weights starts and once all are done.
pub fn which(
    quantized: &Checkpoint,
    original: &Checkpoint,
    selection: &Selection,
    threads: usize,
    shard: Option<(usize, usize)>,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Vec<WeightOrigin>> {
    let mut weights: Vec<LogicalWeight> = recognise(quantized).into_iter().filter(|w| selection.selects(w)).collect();
    if let Some((k, n)) = shard {
        let len = weights.len();
        weights = weights.drain(len * (k - 1) / n..len * k / n).collect();
    }
    let weights: Vec<LogicalWeight> = weights.into_iter().filter(|w| w.scheme.is_some()).collect();
    if let Some(w) = weights.iter().find(|w| !w.problems.is_empty()) {
        return Err(checkpoint_error(
            quantized.files()[0],
            Some(&w.name),
            None,
            format!("cannot be read: {}", w.problems[0]),
        ));
    }
    let one = |w: &LogicalWeight| -> Result<WeightOrigin> {
        let scheme = Scheme::parse(w.scheme.as_deref().expect("quantized weights"))?;
        let file = stored(quantized, w, &scheme)?;
        let t = original.tensor(&w.name).ok_or_else(|| {
            checkpoint_error(
                original.files()[0],
                Some(&w.name),
                None,
                "the original checkpoint has no tensor of this quantized weight's name".into(),
            )
        })?;
        if t.shape != w.shape {
            return Err(checkpoint_error(
                original.files()[t.file],
                Some(&w.name),
                Some(t.offset),
                format!("the original's shape {:?} is not the quantized weight's {:?}", t.shape, w.shape),
            ));
        }
        // The stored scheme itself is tried too when no listed name stands for it.
        let mut names = blocks::concrete_schemes(32);
        let same = |n: &String| Scheme::parse(n).is_ok_and(|c| (c.recipe(), c.mx()) == (scheme.recipe(), scheme.mx()));
        if !names.iter().any(same) {
            names.push(scheme.name().to_string());
        }
        let mut ranking = Vec::new();
        for name in &names {
            let candidate = Scheme::parse(name)?;
            if same_family(&scheme, &candidate, &w.shape) {
                ranking.push(compare(name, &file, quantize_stored(original, t, &candidate)));
            }
        }
        ranking.sort_by(|a, b| b.share().total_cmp(&a.share()));
        Ok(WeightOrigin { name: w.name.clone(), stored_scheme: scheme.name().to_string(), ranking })
    };
    let mut out = Vec::with_capacity(weights.len());
    for batch in weights.chunks(threads.max(1)) {
        progress(out.len(), weights.len());
        let results: Vec<Result<WeightOrigin>> = std::thread::scope(|scope| {
            let handles: Vec<_> = batch.iter().map(|w| scope.spawn(move || one(w))).collect();
            handles.into_iter().map(|h| h.join().expect("a which thread does not panic")).collect()
        });
        for r in results {
            out.push(r?);
        }
    }
    progress(out.len(), weights.len());
    Ok(out)
}

/// The recipes ranked over all weights: per recipe tried on every weight, the elements and scales
/// reproduced summed over the weights, best first.
#[must_use]
pub fn overall(origins: &[WeightOrigin]) -> Vec<Reproduced> {
    let mut totals: Vec<Reproduced> = Vec::new();
    for name in
        origins.first().map(|o| o.ranking.iter().map(|r| r.scheme.clone()).collect::<Vec<_>>()).unwrap_or_default()
    {
        let rows: Vec<&Reproduced> =
            origins.iter().filter_map(|o| o.ranking.iter().find(|r| r.scheme == name)).collect();
        if rows.len() != origins.len() {
            continue;
        }
        totals.push(Reproduced {
            scheme: name,
            elements_matched: rows.iter().map(|r| r.elements_matched).sum(),
            elements: rows.iter().map(|r| r.elements).sum(),
            scales_matched: rows.iter().map(|r| r.scales_matched).sum(),
            scales: rows.iter().map(|r| r.scales).sum(),
            error: rows.iter().find_map(|r| r.error.clone()),
        });
    }
    totals.sort_by(|a, b| b.share().total_cmp(&a.share()));
    totals
}

/// "this file was made by ..., 100.000 %" for the best of `overall`, naming the recipes that tie
/// with it.
#[must_use]
pub fn summary(overall: &[Reproduced]) -> String {
    let Some(best) = overall.first() else {
        return "no quantized weight to identify".into();
    };
    let source = Scheme::parse(&best.scheme).map(|s| {
        let src = s.recipe().source;
        format!("{} {}", src.implementation, src.version)
    });
    let tied: Vec<&str> =
        overall[1..].iter().filter(|r| r.share() == best.share()).map(|r| r.scheme.as_str()).collect();
    let mut text = format!(
        "this file was made by {} ({}), {:.3} %",
        best.scheme,
        source.unwrap_or_default(),
        100.0 * best.share()
    );
    if !tied.is_empty() {
        text.push_str(&format!(" (as well reproduced by {}: the data does not tell them apart)", tied.join(", ")));
    }
    text
}

impl From<&Reproduced> for serde_json::Value {
    fn from(r: &Reproduced) -> serde_json::Value {
        serde_json::json!({
            "scheme": r.scheme,
            "share": r.share(),
            "elements_matched": r.elements_matched,
            "elements": r.elements,
            "scales_matched": r.scales_matched,
            "scales": r.scales,
            "error": r.error,
        })
    }
}
