//! Writing a GGUF file as llama.cpp's `llama_model_quantize` writes it for an ftype (a mixture,
//! [`super::ggml_mixture`]): each tensor in the type the rules give it, quantized by the
//! type's codec (`crate::quant::ggml`) or, for the types whose ggml recipe lowbit already has
//! (Q8_0, Q4_0, MXFP4), by that recipe; tensors that keep their type copied byte for byte;
//! F16/F32/BF16 converted by the rounding core as ggml's `ggml_quantize_chunk` does (round to
//! nearest even).
//!
//! The file, as llama.cpp (0c1e57098bba, `llama_model_quantize_impl` and ggml's `gguf.cpp`)
//! writes it: the input's key/values in order, without `general.quantization_version`,
//! `general.file_type` and the `split.*` keys, then `general.quantization_version` (2) and
//! `general.file_type` (the ftype's number), both UINT32; the tensors in llama.cpp's order
//! (layer, then name), each with `ggml_n_dims` dimensions (trailing ones dropped); alignment 32.
//! An input whose `general.alignment` is not 32 is refused: llama.cpp copies the key but lays
//! the file out at 32, so its output contradicts itself.

use super::ggml_mixture::{ftype_named, inputs, mixture, model_facts, role_of, Ftype, GgmlMixtureTensor, Role};
use super::gguf::DEFAULT_ALIGNMENT;
use super::{checkpoint_error, Checkpoint, GgufTensor, GgufValue, StoredTensor};
use crate::error::{Error, Result};
use crate::quant::blocks::{quantize_raw, Scheme};
use crate::{CastOptions, DType, Plan};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// ggml's `GGML_QNT_VERSION`.
const QUANTIZATION_VERSION: u32 = 2;

/// Keys llama.cpp drops from the input before appending its own (`gguf_remove_key` of the split
/// keys; `gguf_set_val_u32` removes a key before appending it).
const DROPPED_KEYS: &[&str] =
    &["general.quantization_version", "general.file_type", "split.no", "split.count", "split.tensors.count"];

/// Types lowbit quantizes by an existing block recipe while the codec table lacks them:
/// (ggml type, scheme, whether ggml ignores an importance matrix for it). ggml's `quantize_q8_0`
/// and `quantize_mxfp4` always run the reference quantizer; `quantize_q4_0` with an importance
/// matrix runs another search (`quantize_row_q4_0_impl`: `quant::ggml`'s importance quantizers).
const RECIPES: &[(&str, &str, bool)] =
    &[("Q8_0", "ggml:q8_0", true), ("Q4_0", "ggml:q4_0", false), ("MXFP4", "ggml:mxfp4", true)];

/// An importance matrix: per tensor name, `ne0 * n_experts` weights.
#[derive(Clone, Debug, Default)]
pub struct Imatrix {
    entries: HashMap<String, Vec<f32>>,
}

impl Imatrix {
    /// Reads llama-imatrix's GGUF form: per tensor `NAME.in_sum2` (F32, `[n_mat, ne0]`) and
    /// `NAME.counts` (F32, `[n_mat, 1]`), each weight `in_sum2 / count` (1 where the count is
    /// 0), as llama-quantize's `load_imatrix` makes it.
    pub fn open(path: &Path) -> Result<Imatrix> {
        let ckpt = Checkpoint::open(path)?;
        let fail = |t: Option<&str>, m: String| checkpoint_error(path, t, None, m);
        let floats = |t: &StoredTensor| -> Result<Vec<f32>> {
            if t.stored != super::StoredType::Plain(DType::Float) {
                return Err(fail(Some(&t.name), format!("an imatrix tensor is F32, not {}", t.stored)));
            }
            Ok(ckpt.bytes_checked(t)?.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect())
        };
        let mut entries = HashMap::new();
        for t in ckpt.tensors() {
            let Some(name) = t.name.strip_suffix(".in_sum2") else { continue };
            let counts_name = format!("{name}.counts");
            let counts =
                ckpt.tensor(&counts_name).ok_or_else(|| fail(Some(&t.name), format!("no {counts_name} beside it")))?;
            let sums = floats(t)?;
            let counts = floats(counts)?;
            if counts.is_empty() || sums.len() % counts.len() != 0 {
                return Err(fail(Some(&t.name), format!("{} sums for {} counts", sums.len(), counts.len())));
            }
            let ne0 = sums.len() / counts.len();
            let mut e = Vec::with_capacity(sums.len());
            for (j, &count) in counts.iter().enumerate() {
                for &s in &sums[j * ne0..(j + 1) * ne0] {
                    e.push(if count > 0.0 { s / count } else { 1.0 });
                }
            }
            entries.insert(name.to_string(), e);
        }
        if entries.is_empty() {
            return Err(fail(None, "no NAME.in_sum2 tensors: not a llama-imatrix GGUF file".into()));
        }
        Ok(Imatrix { entries })
    }

    /// The weights of tensor `name`, if the matrix has them.
    #[must_use]
    pub fn get(&self, name: &str) -> Option<&[f32]> {
        self.entries.get(name).map(Vec::as_slice)
    }
}

/// A GGUF checkpoint planned under an ftype: each tensor's type, and how to make its bytes.
pub struct GgmlMixture<'a> {
    ckpt: &'a Checkpoint,
    path: PathBuf,
    ftype: &'static Ftype,
    tensors: Vec<GgmlMixtureTensor>,
    by_name: HashMap<String, usize>,
    imatrix: Option<&'a Imatrix>,
}

impl<'a> GgmlMixture<'a> {
    /// Plans `ckpt` (a GGUF file) under the ftype named `ftype` (`Q4_K_M`); refuses, as llama.cpp
    /// does, a mixture that needs an importance matrix when none is given.
    pub fn new(ckpt: &'a Checkpoint, ftype: &str, imatrix: Option<&'a Imatrix>) -> Result<GgmlMixture<'a>> {
        let f = ftype_named(ftype)?;
        let path = ckpt.files().first().map_or_else(|| PathBuf::from("input"), |p| p.to_path_buf());
        if ckpt.gguf_alignment() != DEFAULT_ALIGNMENT {
            return Err(checkpoint_error(
                &path,
                None,
                None,
                format!(
                    "general.alignment is {}: llama.cpp would copy it but lay its output out at 32",
                    ckpt.gguf_alignment()
                ),
            ));
        }
        let list = inputs(ckpt)?;
        let facts = model_facts(ckpt.gguf_metadata());
        let choices = mixture(f, &facts, &list, imatrix.is_some(), &path)?;
        let tensors: Vec<GgmlMixtureTensor> = choices
            .into_iter()
            .map(|c| GgmlMixtureTensor {
                name: list[c.input].name.to_string(),
                ggml: c.ggml,
                converted: c.quantized && c.ggml != list[c.input].ggml,
                needs_imatrix: c.needs_imatrix,
            })
            .collect();
        if imatrix.is_none() {
            if let Some(t) = tensors.iter().find(|t| t.needs_imatrix) {
                return Err(checkpoint_error(
                    &path,
                    Some(&t.name),
                    None,
                    format!("{} needs an importance matrix for {} (llama.cpp refuses too)", f.name, t.ggml.name()),
                ));
            }
        }
        let by_name = tensors.iter().enumerate().map(|(k, t)| (t.name.clone(), k)).collect();
        Ok(GgmlMixture { ckpt, path, ftype: f, tensors, by_name, imatrix })
    }

    /// The tensors in the order they are written, with their types.
    #[must_use]
    pub fn tensors(&self) -> &[GgmlMixtureTensor] {
        &self.tensors
    }

    /// The key/values written, in order.
    #[must_use]
    pub fn metadata(&self) -> Vec<(String, GgufValue)> {
        let mut out: Vec<(String, GgufValue)> =
            self.ckpt.gguf_metadata().iter().filter(|(k, _)| !DROPPED_KEYS.contains(&k.as_str())).cloned().collect();
        out.push(("general.quantization_version".into(), GgufValue::U32(QUANTIZATION_VERSION)));
        out.push(("general.file_type".into(), GgufValue::U32(self.ftype.id)));
        out
    }

    /// Whether lowbit can make tensor `k`'s bytes today (a copy, a float conversion, a recipe,
    /// or a codec with a quantizer).
    #[must_use]
    pub fn can_make(&self, k: usize) -> bool {
        let t = &self.tensors[k];
        !t.converted || t.ggml.plain().is_some() || self.quantizer(t).is_some()
    }

    fn quantizer(&self, t: &GgmlMixtureTensor) -> Option<Quantizer> {
        let lower = t.ggml.name().to_ascii_lowercase();
        if let Some(q) = crate::quant::ggml::codec(&lower).and_then(|c| c.quantize) {
            return Some(Quantizer::Codec(q));
        }
        let weights = self.imatrix.is_some_and(|m| m.get(&t.name).is_some());
        if let (true, Some((_, _, q))) = (weights, crate::quant::ggml::importance_quantizer(&format!("ggml:{lower}"))) {
            return Some(Quantizer::Codec(q));
        }
        RECIPES
            .iter()
            .find(|(name, _, ignores)| *name == t.ggml.name() && (*ignores || !weights))
            .and_then(|(_, scheme, _)| Scheme::parse(scheme).ok())
            .map(|s| Quantizer::Recipe(Box::new(s)))
    }

    /// The bytes of tensor `k` (in [`GgmlMixture::tensors`]'s order) as llama.cpp writes them;
    /// a typed error naming the tensor and type where lowbit has no quantizer for its type.
    pub fn tensor_bytes(&self, k: usize) -> Result<Vec<u8>> {
        let t = &self.tensors[k];
        let stored = self.ckpt.tensor(&t.name).expect("planned from this checkpoint");
        let raw = self.ckpt.bytes_checked(stored)?;
        if !t.converted {
            return Ok(raw.to_vec());
        }
        let named = |e: Error| checkpoint_error(&self.path, Some(&t.name), Some(stored.offset), e.to_string());
        let super::StoredType::Plain(from) = stored.stored else {
            return Err(named(Error::InvalidOp {
                op: format!("ggml mixture {}", self.ftype.name),
                message: format!("requantizing from {} is disabled (as in llama.cpp)", stored.stored),
            }));
        };
        let n = stored.elements();
        // llama.cpp widens F16/BF16 to float32 first (llama_tensor_dequantize_impl).
        let wide = if from == DType::Float {
            raw.to_vec()
        } else {
            let plan = Plan::new(from, DType::Float, &CastOptions::default()).map_err(named)?;
            let mut wide = vec![0u8; n * 4];
            plan.run(raw, &mut wide, n).map_err(named)?;
            wide
        };
        if let Some(to) = t.ggml.plain() {
            let plan = Plan::new(DType::Float, to, &CastOptions::default()).map_err(named)?;
            let mut out = vec![0u8; crate::packing::raw_len(to, n).map_err(named)?];
            plan.run(&wide, &mut out, n).map_err(named)?;
            return Ok(out);
        }
        let Some(quantizer) = self.quantizer(t) else {
            return Err(checkpoint_error(
                &self.path,
                Some(&t.name),
                None,
                format!("lowbit cannot quantize ggml type {} yet (no codec)", t.ggml.name()),
            ));
        };
        let ne0 = stored.shape.last().copied().unwrap_or(1);
        let rows = n / ne0.max(1);
        let per_expert = if stored.shape.len() >= 2 { stored.shape[stored.shape.len() - 2] } else { 1 };
        let weights = self.imatrix_for(t, stored, ne0)?;
        match quantizer {
            Quantizer::Recipe(scheme) => {
                let shape = [rows, ne0];
                let q = quantize_raw(DType::Float, &wide, &shape, &scheme, -1, None).map_err(named)?;
                q.to_bytes().map_err(named)
            }
            Quantizer::Codec(quantize) => {
                let (block_elements, block_bytes) = t.ggml.block();
                let row_bytes = ne0 / block_elements * block_bytes;
                let floats: Vec<f32> =
                    wide.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
                let mut out = vec![0u8; rows * row_bytes];
                for r in 0..rows {
                    let w = weights.map(|w| &w[(r / per_expert) * ne0..(r / per_expert + 1) * ne0]);
                    quantize(&floats[r * ne0..(r + 1) * ne0], w, &mut out[r * row_bytes..(r + 1) * row_bytes], r)
                        .map_err(named)?;
                }
                Ok(out)
            }
        }
    }

    /// The importance weights for tensor `t` (llama.cpp: used when their count is `ne0` times
    /// the expert count; another count is an error except for the token embeddings).
    fn imatrix_for(&self, t: &GgmlMixtureTensor, stored: &StoredTensor, ne0: usize) -> Result<Option<&'a [f32]>> {
        let Some(w) = self.imatrix.and_then(|m| m.get(&t.name)) else {
            if t.needs_imatrix {
                return Err(checkpoint_error(
                    &self.path,
                    Some(&t.name),
                    None,
                    format!("the importance matrix has no entry for it, and {} needs one", t.ggml.name()),
                ));
            }
            return Ok(None);
        };
        let experts = if stored.shape.len() >= 3 { stored.shape[stored.shape.len() - 3] } else { 1 };
        if w.len() == ne0 * experts {
            return Ok(Some(w));
        }
        if role_of(&t.name) == Role::TokenEmbd {
            return Ok(None);
        }
        Err(checkpoint_error(
            &self.path,
            Some(&t.name),
            None,
            format!("the importance matrix has {} weights for it, not {}", w.len(), ne0 * experts),
        ))
    }

    /// Writes the GGUF file `out` all or nothing.
    pub fn write(&self, out: &Path) -> Result<()> {
        let specs: Vec<GgufTensor> = self
            .tensors
            .iter()
            .map(|t| {
                let shape = &self.ckpt.tensor(&t.name).expect("planned from this checkpoint").shape;
                // ggml_n_dims: trailing (outermost) dimensions of 1 are not written.
                let keep = shape.iter().position(|&d| d != 1).unwrap_or(shape.len().saturating_sub(1));
                GgufTensor { name: t.name.clone(), ggml: t.ggml, shape: shape[keep..].to_vec() }
            })
            .collect();
        super::write_gguf(out, &specs, &self.metadata(), DEFAULT_ALIGNMENT, |k, sink| {
            let bytes = self.tensor_bytes(k)?;
            sink.write_all(&bytes).map_err(|e| Error::io(out, e))
        })
    }

    /// The index of the tensor named `name`.
    #[must_use]
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.by_name.get(name).copied()
    }
}

enum Quantizer {
    Codec(crate::quant::ggml::QuantizeRow),
    Recipe(Box<Scheme>),
}

/// `lowbit checkpoint quantize SRC --scheme ggml:FTYPE --out OUT`: the GGUF file `src`
/// quantized as llama.cpp's `llama_model_quantize` does under `ftype` (with the llama-imatrix
/// file `imatrix`, if given), written all or nothing to `out`. Returns the tensors written.
pub fn quantize_ggml_mixture(
    src: &Path,
    ftype: &str,
    imatrix: Option<&Path>,
    out: &Path,
) -> Result<Vec<GgmlMixtureTensor>> {
    let ckpt = Checkpoint::open(src)?;
    let matrix = imatrix.map(Imatrix::open).transpose()?;
    let plan = GgmlMixture::new(&ckpt, ftype, matrix.as_ref())?;
    plan.write(out)?;
    Ok(plan.tensors().to_vec())
}

/// The ftype of a scheme naming a llama.cpp mixture: `Q4_K_M` of `ggml:Q4_K_M` (upper case:
/// `ggml:q4_k` names one block type).
#[must_use]
pub fn ggml_mixture_of_scheme(scheme: &str) -> Option<&'static str> {
    let name = scheme.strip_prefix("ggml:")?;
    if name.chars().any(|c| c.is_ascii_lowercase()) {
        return None;
    }
    super::ggml_mixture::ftype(name).map(|f| f.name)
}
