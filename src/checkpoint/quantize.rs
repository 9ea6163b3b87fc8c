//! Quantizing a checkpoint's weights under a block-scaled scheme (`quant::blocks`) and writing
//! them in the convention of the producer the scheme reproduces, so that the producer's loader
//! reads the file: tensor names, dtypes and shapes as it stores them, and its config
//! (`config.json`'s `quantization_config`, ModelOpt's `hf_quant_config.json`), or a GGUF file of
//! ggml blocks for the `ggml:*` schemes.
//!
//! | scheme | convention written |
//! |---|---|
//! | `ocp:mxfp4`, `torchao:mxfp4,scale=...` | gpt-oss: `NAME_blocks` (U8 `[..., G, 16]`), `NAME_scales` (U8 `[..., G]`), `quant_method` `mxfp4` |
//! | `modelopt:nvfp4` | ModelOpt: `NAME` (U8 `[M, N/2]`), `NAME_scale` (F8_E4M3), `NAME_scale_2` (F32 `[]`), `hf_quant_config.json` `W4A16_NVFP4` |
//! | `compressed-tensors:nvfp4` | `P.weight_packed`, `P.weight_scale` (F8_E4M3), `P.weight_global_scale` (F32 `[1]`), format `nvfp4-pack-quantized` |
//! | `compressed-tensors:mxfp4` | `P.weight_packed` (U8 `[M, N/2]`), `P.weight_scale` (U8 E8M0 `[M, N/32]`), format `mxfp4-pack-quantized` |
//! | `fp8:tensor|channel|group=N|block=...` | compressed-tensors `float-quantized`: `NAME` (F8_E4M3), `NAME_scale` |
//! | `deepseek:fp8[,...]` | DeepSeek-V3: `NAME` (F8_E4M3), `NAME_scale_inv` (F32), `quant_method` `fp8` |
//! | `ggml:q8_0|q4_0|mxfp4|nvfp4` | GGUF: each weight one tensor of that ggml type |
//!
//! Which tensors are quantized by default (`--only` and `--skip` change it): float tensors
//! (F32, F16, BF16) of two or more dimensions whose name ends in `weight`, except embeddings,
//! norms, the output head and MoE routers (names holding `embed`, `norm`, `lm_head`, `router`,
//! `mlp.gate.`, `shared_expert_gate`, `output_layer`, `token_embd`, `wte`, `wpe`, or starting
//! with `output.`). That is what the producers do: compressed-tensors' presets target `Linear`
//! modules and ignore `lm_head`; ModelOpt quantizes linear layers and its default disabled
//! quantizers are `*lm_head*`, `*router*`, `*mlp.gate.*`, `*output_layer*`, `output.*`;
//! llama.cpp quantizes 2-D weights and leaves norms (1-D) alone. A tensor whose last dimension
//! is not a whole number of the scheme's blocks is left as it is by default, and is an error when
//! `--only` names it.

use super::conventions::recognise;
use super::write::{write_gguf, write_safetensors};
use super::{checkpoint_error, Checkpoint, Container, GgmlType, GgufTensor, GgufValue, SafetensorsTensor};
use super::{StoredTensor, StoredType};
use crate::packing;
use crate::quant::blocks::{
    quantize_raw, scales_shape, BlockShape, Layout, Quantized, ScaleFormat, Scales, Scheme, ShortBlock,
};
use crate::staging::Staging;
use crate::{CastOptions, DType, Error, Plan, Result};
use regex::Regex;
use std::collections::{BTreeMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The checkpoint conventions `quantize` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Convention {
    /// gpt-oss MXFP4 (`_blocks`, `_scales`).
    GptOss,
    /// NVIDIA ModelOpt NVFP4 (`weight`, `weight_scale`, `weight_scale_2`).
    Modelopt,
    /// compressed-tensors `nvfp4-pack-quantized`.
    CompressedTensorsNvfp4,
    /// compressed-tensors `mxfp4-pack-quantized` (no per-tensor scale).
    CompressedTensorsMxfp4,
    /// compressed-tensors `float-quantized` (FP8 with float scales).
    CompressedTensorsFp8,
    /// DeepSeek-V3 FP8 (`weight_scale_inv`).
    DeepSeek,
    /// GGUF with ggml blocks.
    Gguf,
}

/// Which scheme names each convention stores: (name prefix, convention).
const CONVENTIONS: &[(&str, Convention)] = &[
    ("ocp:mxfp4", Convention::GptOss),
    ("torchao:mxfp4", Convention::GptOss),
    ("modelopt:nvfp4", Convention::Modelopt),
    ("compressed-tensors:nvfp4", Convention::CompressedTensorsNvfp4),
    ("compressed-tensors:mxfp4", Convention::CompressedTensorsMxfp4),
    ("fp8:", Convention::CompressedTensorsFp8),
    ("deepseek:fp8", Convention::DeepSeek),
    ("ggml:", Convention::Gguf),
    ("gguf-py:", Convention::Gguf),
];

/// The ggml type name of a GGUF scheme: `q8_0` of `ggml:q8_0` (ggml's C) and of `gguf-py:q8_0`
/// (gguf-py's numpy port, which writes the same blocks), `q4_0` of `ggml:q4_0,contract=fma`.
fn ggml_type_name(scheme: &Scheme) -> &str {
    let name = scheme.name();
    let head = name.split(',').next().unwrap_or_default();
    head.strip_prefix("ggml:").or_else(|| head.strip_prefix("gguf-py:")).unwrap_or_default()
}

impl Convention {
    /// The convention that stores `scheme`, or an error saying no checkpoint convention does.
    pub fn of_scheme(scheme: &Scheme) -> Result<Convention> {
        let found = CONVENTIONS.iter().find(|(prefix, _)| scheme.name().starts_with(prefix)).map(|&(_, c)| c);
        match found {
            // gpt-oss stores 16 bytes (32 elements) a block.
            Some(Convention::GptOss) if scheme.recipe().block != BlockShape::Row(32) => {
                Err(no_convention(scheme, "gpt-oss MXFP4 stores blocks of 32"))
            }
            Some(c) => Ok(c),
            None => Err(no_convention(
                scheme,
                "no checkpoint convention stores this scheme (written: ocp:mxfp4 and torchao:mxfp4 as \
                 gpt-oss, modelopt:nvfp4, compressed-tensors:nvfp4, compressed-tensors:mxfp4, fp8:*, deepseek:fp8, ggml:*)",
            )),
        }
    }

    /// Its name, as `lowbit checkpoint inspect` calls it.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Convention::GptOss => "gpt-oss mxfp4",
            Convention::Modelopt => "modelopt nvfp4",
            Convention::CompressedTensorsNvfp4 => "compressed-tensors nvfp4-pack-quantized",
            Convention::CompressedTensorsMxfp4 => "compressed-tensors mxfp4-pack-quantized",
            Convention::CompressedTensorsFp8 => "compressed-tensors float-quantized",
            Convention::DeepSeek => "deepseek fp8",
            Convention::Gguf => "gguf",
        }
    }
}

fn no_convention(scheme: &Scheme, why: &str) -> Error {
    Error::InvalidOp {
        op: format!("checkpoint quantize --scheme {}", Error::quote(scheme.name())),
        message: why.into(),
    }
}

/// Names that the producers leave unquantized by default (module docs).
const DEFAULT_SKIP: &str =
    r"embed|norm|lm_head|router|mlp\.gate\.|shared_expert_gate|output_layer|token_embd|wte|wpe|^output\.";

/// Which tensors (or logical weights) a checkpoint command takes.
#[derive(Clone, Debug, Default)]
pub struct Selection {
    /// Only tensors whose name this matches (instead of the default rule's names).
    pub only: Option<Regex>,
    /// Never tensors whose name this matches (besides the default rule's).
    pub skip: Option<Regex>,
    /// `quantize`: a selected weight the scheme cannot take (its dtype, or a last dimension
    /// that is not a whole number of blocks) is copied as it is instead of being an error.
    pub keep_unsupported: bool,
}

impl Selection {
    /// The selection of the regular expressions `only` and `skip` (`regex` crate syntax).
    pub fn new(only: Option<&str>, skip: Option<&str>) -> Result<Selection> {
        let pattern = |flag: &str, text: Option<&str>| {
            text.map(|t| {
                Regex::new(t).map_err(|e| Error::InvalidOp {
                    op: format!("checkpoint {flag} {}", Error::quote(t)),
                    message: e.to_string(),
                })
            })
            .transpose()
        };
        Ok(Selection { only: pattern("--only", only)?, skip: pattern("--skip", skip)?, keep_unsupported: false })
    }

    /// Whether a logical weight is selected: `only` (when given) matches its name or one of its
    /// tensors' names, and `skip` matches none of them.
    #[must_use]
    pub fn selects(&self, weight: &super::LogicalWeight) -> bool {
        let names = || std::iter::once(weight.name.as_str()).chain(weight.tensors());
        self.only.as_ref().is_none_or(|r| names().any(|n| r.is_match(n)))
            && !self.skip.as_ref().is_some_and(|r| names().any(|n| r.is_match(n)))
    }
}

/// One tensor's fate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Choice {
    /// The tensor's name.
    pub name: String,
    /// Quantized, or kept as it is.
    pub quantized: bool,
    /// Why.
    pub why: String,
    /// Selected, but the scheme cannot take it: copied under `Selection::keep_unsupported`.
    pub unsupported: bool,
}

/// Why `scheme` cannot quantize the selected float weight `t` (last dimension `cols`), if it
/// cannot.
fn unsupported(scheme: &Scheme, t: &StoredTensor, cols: usize, block: usize) -> Option<String> {
    let recipe = scheme.recipe();
    if cols % block != 0 {
        return Some(format!("its last dimension {cols} is not a multiple of the block {block}"));
    }
    // The ggml conventions widen every float weight to float32 first (as llama-quantize does).
    let StoredType::Plain(dtype) = t.stored else { return None };
    let widened = recipe.layout != Layout::Onnx;
    let taken = dtype == DType::Float || widened || recipe.inputs.contains(&dtype) || scheme.mx().is_some();
    (!taken).then(|| {
        format!(
            "{} refuses {dtype} input (as {} does; convert it to float32{})",
            scheme.name(),
            recipe.source.implementation,
            if recipe.inputs.contains(&DType::Bfloat16) { " or bfloat16" } else { "" }
        )
    })
}

/// Elements a stored row must hold a whole number of: the convention's block for packed layouts
/// (gpt-oss's 16 bytes, NVFP4's 16 elements, a ggml block), else the recipe's block unless it
/// quantizes a short last block as a block of its own.
fn row_block(scheme: &Scheme, convention: Convention) -> usize {
    let recipe = scheme.recipe();
    let block = match recipe.block {
        BlockShape::Row(n) => n,
        _ => 1,
    };
    match convention {
        Convention::Gguf => GgmlType::from_name(ggml_type_name(scheme)).map_or(block, |g| g.block().0),
        Convention::GptOss
        | Convention::Modelopt
        | Convention::CompressedTensorsNvfp4
        | Convention::CompressedTensorsMxfp4 => block,
        _ if recipe.short_block == ShortBlock::OwnBlock => 1,
        _ => block,
    }
}

/// Decides, tensor by tensor, what `quantize_checkpoint` does with `ckpt` under `scheme`.
pub fn choose(ckpt: &Checkpoint, scheme: &Scheme, selection: &Selection) -> Result<Vec<Choice>> {
    let default_skip = Regex::new(DEFAULT_SKIP).expect("a valid pattern");
    let mut already = HashSet::new();
    for w in recognise(ckpt) {
        if w.scheme.is_some() {
            already.extend(w.tensors().into_iter().map(str::to_string));
        }
    }
    let block = row_block(scheme, Convention::of_scheme(scheme)?);
    let mut out = Vec::new();
    for t in ckpt.tensors() {
        let float = matches!(t.stored, StoredType::Plain(DType::Float | DType::Float16 | DType::Bfloat16));
        let named = match &selection.only {
            Some(only) => only.is_match(&t.name),
            None => t.name.ends_with("weight") && !default_skip.is_match(&t.name),
        };
        let skipped = selection.skip.as_ref().is_some_and(|s| s.is_match(&t.name));
        let cols = t.shape.last().copied().unwrap_or(0);
        let (quantized, why) = if already.contains(&t.name) {
            (false, "part of a weight that is already quantized: copied".to_string())
        } else if skipped {
            (false, "--skip matches it".into())
        } else if !named {
            (
                false,
                if selection.only.is_some() { "--only does not match it" } else { "not a quantized kind of weight" }
                    .into(),
            )
        } else if !float || t.shape.len() < 2 {
            if selection.only.is_some() {
                return Err(checkpoint_error(
                    ckpt.files()[t.file],
                    Some(&t.name),
                    Some(t.offset),
                    format!(
                        "--only names it, but a {} tensor of shape {:?} is not a float weight of two or more \
                         dimensions",
                        t.stored, t.shape
                    ),
                ));
            }
            (false, format!("{} of {} dimensions: not a float weight matrix", t.stored, t.shape.len()))
        } else if let Some(why) = unsupported(scheme, t, cols, block) {
            if !selection.keep_unsupported {
                return Err(checkpoint_error(
                    ckpt.files()[t.file],
                    Some(&t.name),
                    Some(t.offset),
                    format!(
                        "{} selects it, but {why}; --skip REGEX leaves it out, --keep-unsupported copies every such \
                         tensor as it is",
                        if selection.only.is_some() { "--only" } else { "the default rule" }
                    ),
                ));
            }
            out.push(Choice {
                name: t.name.clone(),
                quantized: false,
                why: format!("{why}: copied (--keep-unsupported)"),
                unsupported: true,
            });
            continue;
        } else {
            (true, format!("{} weight of shape {:?}", t.stored, t.shape))
        };
        out.push(Choice { name: t.name.clone(), quantized, why, unsupported: false });
    }
    Ok(out)
}

/// What one output tensor holds.
#[derive(Clone, Debug)]
enum Content {
    /// The input tensor's bytes as they are.
    Copy(usize),
    /// Part `part` of the weight of item `item`.
    Part { item: usize, part: usize },
}

/// One output tensor.
#[derive(Clone, Debug)]
struct Output {
    name: String,
    stored: StoredType,
    shape: Vec<usize>,
    content: Content,
}

/// The parts (tensors) a quantized weight is stored as, with their types and shapes.
pub(super) fn parts(
    convention: Convention,
    scheme: &Scheme,
    t: &StoredTensor,
) -> Result<Vec<(String, StoredType, Vec<usize>)>> {
    let shape = &t.shape;
    let mut packed = shape.clone();
    let cols = packed.pop().unwrap_or(0);
    let scale_shape = scales_shape(shape, scheme, -1)?;
    let plain = StoredType::Plain;
    let name = &t.name;
    Ok(match convention {
        Convention::GptOss => {
            let mut blocks = packed.clone();
            blocks.extend([cols / 32, 16]);
            vec![
                (format!("{name}_blocks"), plain(DType::Uint8), blocks),
                (format!("{name}_scales"), plain(DType::Uint8), scale_shape),
            ]
        }
        Convention::Modelopt => {
            packed.push(cols / 2);
            vec![
                (name.clone(), plain(DType::Uint8), packed),
                (format!("{name}_scale"), plain(DType::Float8E4M3FN), scale_shape),
                (format!("{name}_scale_2"), plain(DType::Float), Vec::new()),
            ]
        }
        Convention::CompressedTensorsNvfp4 | Convention::CompressedTensorsMxfp4 => {
            packed.push(cols / 2);
            // A module's `weight` becomes its `weight_packed`; a weight not named so (gpt-oss's
            // `..._proj`) is taken as a module of its own.
            let prefix = name.strip_suffix("weight").map_or_else(|| format!("{name}."), str::to_string);
            let mut stored = vec![(format!("{prefix}weight_packed"), plain(DType::Uint8), packed)];
            if convention == Convention::CompressedTensorsNvfp4 {
                stored.push((format!("{prefix}weight_scale"), plain(DType::Float8E4M3FN), scale_shape));
                stored.push((format!("{prefix}weight_global_scale"), plain(DType::Float), vec![1]));
            } else {
                // MXFP4PackedCompressor: E8M0 exponents as uint8 (the preset's scale_dtype), no
                // global scale (strategy "group", not "tensor_group").
                stored.push((format!("{prefix}weight_scale"), plain(DType::Uint8), scale_shape));
            }
            stored
        }
        Convention::CompressedTensorsFp8 | Convention::DeepSeek => {
            let suffix = if convention == Convention::DeepSeek { "_scale_inv" } else { "_scale" };
            // Recipes that compute the scale in the input's dtype store it so (compressed-tensors:
            // BF16 for a bfloat16 model, F16 for a float16 one).
            let scale_dtype = match (scheme.recipe().scale, t.stored) {
                (ScaleFormat::InputDtype, StoredType::Plain(d @ (DType::Bfloat16 | DType::Float16))) => d,
                _ => DType::Float,
            };
            vec![
                (name.clone(), plain(DType::Float8E4M3FN), shape.clone()),
                (format!("{name}{suffix}"), plain(scale_dtype), scale_shape),
            ]
        }
        Convention::Gguf => {
            let ggml = GgmlType::from_name(ggml_type_name(scheme))
                .ok_or_else(|| no_convention(scheme, "no ggml type of this name"))?;
            vec![(name.clone(), StoredType::Ggml(ggml), shape.clone())]
        }
    })
}

/// The bytes of each part of `q` as `convention` stores them.
pub(super) fn part_bytes(
    convention: Convention,
    q: &Quantized,
    parts: &[(String, StoredType, Vec<usize>)],
) -> Result<Vec<Vec<u8>>> {
    if convention == Convention::Gguf {
        return Ok(vec![q.to_bytes()?]);
    }
    let elements = match convention {
        Convention::CompressedTensorsFp8 | Convention::DeepSeek => q.elements.clone(),
        _ => {
            let mut packed = vec![0u8; q.elements.len().div_ceil(2)];
            packing::pack_byte_codes(DType::Float4E2M1, &q.elements, &mut packed)?;
            packed
        }
    };
    let scales = match &q.scales {
        Scales::Codes(c) => c.clone(),
        Scales::Float32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        Scales::Float16(v) | Scales::Bfloat16(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
    };
    let declared = parts[1].1;
    let stored = match &q.scales {
        Scales::Codes(_) => declared,
        _ => StoredType::Plain(q.scales.dtype(&q.scheme)),
    };
    if stored != declared {
        return Err(no_convention(&q.scheme, &format!("its scales came as {stored}, the file declares {declared}")));
    }
    let mut out = vec![elements, scales];
    if parts.len() == 3 {
        let g = q.global_scale.ok_or_else(|| Error::InvalidOp {
            op: format!("checkpoint quantize {}", q.scheme.name()),
            message: "the recipe gave no per-tensor scale".into(),
        })?;
        out.push(g.to_le_bytes().to_vec());
    }
    Ok(out)
}

/// The plain float tensor `t` quantized under `scheme` along its last axis; errors name the
/// tensor.
pub(crate) fn quantize_stored(ckpt: &Checkpoint, t: &StoredTensor, scheme: &Scheme) -> Result<Quantized> {
    let named = |e: Error| checkpoint_error(ckpt.files()[t.file], Some(&t.name), Some(t.offset), e.to_string());
    let StoredType::Plain(dtype) = t.stored else {
        return Err(named(Error::InvalidOp {
            op: "quantize".into(),
            message: format!("{} is not plain floats", t.stored),
        }));
    };
    crate::quant::check_blocks_input(&t.shape, scheme).map_err(named)?;
    // Borrowed from the memory map: the only copy is the quantized result.
    let raw = ckpt.bytes_checked(t)?;
    if scheme.recipe().layout != Layout::Onnx && dtype != DType::Float {
        // llama-quantize widens F16/BF16 weights to float32 before quantizing
        // (llama_tensor_dequantize_impl); the ggml recipes take float32.
        let plan = Plan::new(dtype, DType::Float, &CastOptions::default()).map_err(named)?;
        let n = t.elements();
        let mut wide = vec![0u8; packing::raw_len(DType::Float, n)?];
        plan.run(raw, &mut wide, n).map_err(named)?;
        return quantize_raw(DType::Float, &wide, &t.shape, scheme, -1, None).map_err(named);
    }
    quantize_raw(dtype, raw, &t.shape, scheme, -1, None).map_err(named)
}

/// Quantizes input tensor `t` and returns its parts' bytes.
fn quantize_tensor(
    ckpt: &Checkpoint,
    t: &StoredTensor,
    scheme: &Scheme,
    convention: Convention,
) -> Result<Vec<Vec<u8>>> {
    let q = quantize_stored(ckpt, t, scheme)?;
    let named = |e: Error| checkpoint_error(ckpt.files()[t.file], Some(&t.name), Some(t.offset), e.to_string());
    part_bytes(convention, &q, &parts(convention, scheme, t)?).map_err(named)
}

/// What `quantize_checkpoint` did.
#[derive(Clone, Debug)]
pub struct QuantizeReport {
    /// Every input tensor's fate.
    pub choices: Vec<Choice>,
    /// The files written.
    pub written: Vec<PathBuf>,
}

/// Where the output goes: a GGUF file for `ggml:*`, else a folder receiving `model.safetensors`
/// and the convention's config files.
fn model_file(out: &Path, convention: Convention) -> PathBuf {
    if convention == Convention::Gguf {
        out.to_path_buf()
    } else {
        out.join("model.safetensors")
    }
}

/// Quantizes the chosen tensors of `ckpt` (those of slice `shard` = (K, N) when given: the K-th
/// of N equal runs of the input's tensors) under `scheme` and writes them, with every other
/// tensor copied, in the scheme's convention to `out` (a folder; a `.gguf` file for `ggml:*`),
/// all or nothing. `threads` tensors are quantized at once (each whole in memory).
/// `progress(done, total)` is called as each output tensor starts (`done` of `total` written).
pub fn quantize_checkpoint(
    ckpt: &Checkpoint,
    scheme: &Scheme,
    selection: &Selection,
    out: &Path,
    threads: usize,
    shard: Option<(usize, usize)>,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<QuantizeReport> {
    let convention = Convention::of_scheme(scheme)?;
    let mut choices = choose(ckpt, scheme, selection)?;
    if let Some((k, n)) = shard {
        let len = choices.len();
        choices = choices.drain(len * (k - 1) / n..len * k / n).collect();
    }
    let items: Vec<Item> = choices
        .iter()
        .map(|c| {
            let index = ckpt.tensors().iter().position(|t| t.name == c.name).expect("chosen from the checkpoint");
            if c.quantized {
                Item::Weight(ckpt.tensors()[index].clone())
            } else {
                Item::Copy(index)
            }
        })
        .collect();
    let kept = kept_modules(ckpt, &choices);
    let produce = |i: usize| match &items[i] {
        Item::Weight(t) => quantize_tensor(ckpt, t, scheme, convention),
        Item::Copy(_) => unreachable!("copies are not produced"),
    };
    let written = write_items(ckpt, scheme, convention, &items, &kept, out, threads, &produce, progress)?;
    Ok(QuantizeReport { choices, written })
}

/// One item of an output checkpoint.
pub(super) enum Item {
    /// The input tensor of this index, copied as it is.
    Copy(usize),
    /// A weight written as its convention's parts: its name, shape and input dtype.
    Weight(StoredTensor),
}

/// Writes `items` in `convention` to `out` (module docs of [`quantize_checkpoint`]), all or
/// nothing: copies streamed, each weight's parts made by `produce(item index)`, `threads` weights
/// at once; `kept` are the modules the config lists as not quantized; `progress(done, total)` as
/// each output tensor starts.
#[allow(clippy::too_many_arguments)]
pub(super) fn write_items(
    ckpt: &Checkpoint,
    scheme: &Scheme,
    convention: Convention,
    items: &[Item],
    kept: &[String],
    out: &Path,
    threads: usize,
    produce: &(dyn Fn(usize) -> Result<Vec<Vec<u8>>> + Sync),
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Vec<PathBuf>> {
    let mut outputs = Vec::new();
    for (i, item) in items.iter().enumerate() {
        match item {
            Item::Weight(t) => {
                for (part, (name, stored, shape)) in parts(convention, scheme, t)?.into_iter().enumerate() {
                    outputs.push(Output { name, stored, shape, content: Content::Part { item: i, part } });
                }
            }
            &Item::Copy(index) => {
                let t = &ckpt.tensors()[index];
                outputs.push(Output {
                    name: t.name.clone(),
                    stored: t.stored,
                    shape: t.shape.clone(),
                    content: Content::Copy(index),
                });
            }
        }
    }
    let model = model_file(out, convention);
    let threads = threads.max(1);
    // Weights' parts, made `threads` weights ahead of the writer.
    let mut ready: BTreeMap<usize, Vec<Vec<u8>>> = BTreeMap::new();
    let weight_order: Vec<usize> = outputs
        .iter()
        .filter_map(|o| match o.content {
            Content::Part { item, part: 0 } => Some(item),
            _ => None,
        })
        .collect();
    let mut fill = |k: usize, sink: &mut dyn Write| -> Result<()> {
        progress(k, outputs.len());
        match outputs[k].content {
            Content::Copy(index) => copy_tensor(ckpt, &ckpt.tensors()[index], sink, &model),
            Content::Part { item, part } => {
                if !ready.contains_key(&item) {
                    let at = weight_order.iter().position(|&i| i == item).expect("listed");
                    let batch = &weight_order[at..weight_order.len().min(at + threads)];
                    let results: Vec<Result<Vec<Vec<u8>>>> = std::thread::scope(|scope| {
                        let handles: Vec<_> = batch.iter().map(|&i| scope.spawn(move || produce(i))).collect();
                        handles.into_iter().map(|h| h.join().expect("a quantizing thread does not panic")).collect()
                    });
                    for (&i, r) in batch.iter().zip(results) {
                        ready.insert(i, r?);
                    }
                }
                let bytes = std::mem::take(&mut ready.get_mut(&item).expect("made above")[part]);
                if ready[&item].iter().all(Vec::is_empty) {
                    ready.remove(&item);
                }
                sink.write_all(&bytes).map_err(|e| Error::io(&model, e))
            }
        }
    };
    let mut staging = Staging::new();
    let mut written = vec![model.clone()];
    if convention == Convention::Gguf {
        let tensors = outputs
            .iter()
            .map(|o| {
                let ggml = match o.stored {
                    StoredType::Ggml(g) => Some(g),
                    StoredType::Plain(d) => GgmlType::of_plain(d),
                };
                let ggml = ggml.ok_or_else(|| {
                    checkpoint_error(&model, Some(&o.name), None, format!("GGUF has no type for {}", o.stored))
                })?;
                Ok(GgufTensor { name: o.name.clone(), ggml, shape: o.shape.clone() })
            })
            .collect::<Result<Vec<_>>>()?;
        let mut metadata: Vec<(String, GgufValue)> = ckpt.gguf_metadata().to_vec();
        let alignment = if ckpt.container() == Container::Gguf { ckpt.gguf_alignment() } else { 32 };
        if !metadata.iter().any(|(k, _)| k == "general.quantized_by") {
            metadata.push((
                "general.quantized_by".into(),
                GgufValue::String(format!("lowbit {}", scheme.name()).into_bytes()),
            ));
        }
        write_gguf(&model, &tensors, &metadata, alignment, &mut fill)?;
    } else {
        let tensors = outputs
            .iter()
            .map(|o| match o.stored {
                StoredType::Plain(dtype) => {
                    Ok(SafetensorsTensor { name: o.name.clone(), dtype, shape: o.shape.clone() })
                }
                StoredType::Ggml(g) => Err(checkpoint_error(
                    &model,
                    Some(&o.name),
                    None,
                    format!("ggml type {} has no safetensors dtype (quantize it with a ggml:* scheme)", g.name()),
                )),
            })
            .collect::<Result<Vec<_>>>()?;
        staging.create_folders(out)?;
        for (file, json) in config_files(ckpt, scheme, convention, kept) {
            let path = out.join(file);
            staging.stage(&path, |w| w.write_all(json.as_bytes()))?;
            written.push(path);
        }
        let mut metadata: Vec<(String, String)> = ckpt.metadata().to_vec();
        if !metadata.iter().any(|(k, _)| k == "format") {
            metadata.push(("format".into(), "pt".into()));
        }
        write_safetensors(&model, &tensors, &metadata, &mut fill)?;
    }
    if let Err(e) = staging.commit() {
        let _ = std::fs::remove_file(&model);
        return Err(e);
    }
    Ok(written)
}

fn copy_tensor(ckpt: &Checkpoint, t: &StoredTensor, sink: &mut dyn Write, out: &Path) -> Result<()> {
    let mut buf = vec![0u8; (t.len as usize).min(1 << 20)];
    let mut start = 0u64;
    while start < t.len {
        let n = (t.len - start).min(buf.len() as u64) as usize;
        ckpt.read_at(t, start, &mut buf[..n])?;
        sink.write_all(&buf[..n]).map_err(|e| Error::io(out, e))?;
        start += n as u64;
    }
    Ok(())
}

/// The module names (weight names without `.weight`) of the 2-D+ weights left unquantized: the
/// producers' `ignore` / `exclude_modules` / `modules_to_not_convert` lists.
fn kept_modules(ckpt: &Checkpoint, choices: &[Choice]) -> Vec<String> {
    kept_modules_of(ckpt, choices.iter().filter(|c| !c.quantized).map(|c| c.name.as_str()))
}

/// [`kept_modules`] of the tensors named `kept`.
pub(super) fn kept_modules_of<'a>(ckpt: &Checkpoint, kept: impl Iterator<Item = &'a str>) -> Vec<String> {
    kept.filter_map(|name| {
        let t = ckpt.tensor(name)?;
        let module = name.strip_suffix(".weight")?;
        (t.shape.len() >= 2).then(|| module.to_string())
    })
    .collect()
}

/// The config files of `convention`: (file name, JSON text).
fn config_files(
    ckpt: &Checkpoint,
    scheme: &Scheme,
    convention: Convention,
    kept: &[String],
) -> Vec<(&'static str, String)> {
    use serde_json::json;
    let producer = json!({ "name": "lowbit", "version": env!("CARGO_PKG_VERSION") });
    // The compressed-tensors QuantizationConfig of a weight-only scheme (its preset's fields).
    let compressed = |format: &str, weights: serde_json::Value| {
        json!({
            "quant_method": "compressed-tensors",
            "format": format,
            "quantization_status": "compressed",
            "config_groups": { "group_0": {
                "targets": ["Linear"], "weights": weights, "input_activations": null,
                "output_activations": null, "format": null } },
            "ignore": kept,
            "kv_cache_scheme": null,
            "global_compression_ratio": null,
            "moe_sparsity_config": null,
        })
    };
    let recipe = scheme.recipe();
    let mut files = Vec::new();
    let quantization_config = match convention {
        Convention::GptOss => json!({ "quant_method": "mxfp4", "modules_to_not_convert": kept }),
        Convention::Modelopt => {
            let hf_quant = json!({
                "producer": producer,
                "quantization": { "quant_algo": "W4A16_NVFP4", "kv_cache_quant_algo": null, "group_size": 16,
                                  "exclude_modules": kept },
            });
            files.push(("hf_quant_config.json", pretty(&hf_quant)));
            // ModelOpt 0.47's convert_hf_quant_config_format of the above.
            json!({
                "config_groups": { "group_0": {
                    "weights": { "dynamic": false, "num_bits": 4, "type": "float", "group_size": 16 },
                    "targets": ["Linear"] } },
                "ignore": kept, "quant_algo": "W4A16_NVFP4", "producer": producer, "quant_method": "modelopt",
            })
        }
        Convention::CompressedTensorsNvfp4 => compressed(
            "nvfp4-pack-quantized",
            json!({ "num_bits": 4, "type": "float", "symmetric": true, "group_size": 16,
                    "strategy": "tensor_group", "dynamic": false, "scale_dtype": "torch.float8_e4m3fn" }),
        ),
        Convention::CompressedTensorsMxfp4 => compressed(
            "mxfp4-pack-quantized",
            json!({ "num_bits": 4, "type": "float", "symmetric": true, "group_size": 32,
                    "strategy": "group", "dynamic": false, "scale_dtype": "torch.uint8" }),
        ),
        Convention::CompressedTensorsFp8 => {
            let (strategy, group, block) = match recipe.block {
                BlockShape::Tensor => ("tensor", None, None),
                BlockShape::Channel => ("channel", None, None),
                BlockShape::Row(n) => ("group", Some(n), None),
                BlockShape::Tile(r, c) => ("block", None, Some([r, c])),
            };
            let mut weights = json!({ "num_bits": 8, "type": "float", "symmetric": true, "group_size": group,
                                      "strategy": strategy, "dynamic": false });
            if let Some(b) = block {
                weights["block_structure"] = json!(b);
            }
            compressed("float-quantized", weights)
        }
        Convention::DeepSeek => {
            let tile = match recipe.block {
                BlockShape::Tile(r, c) => [r, c],
                BlockShape::Row(n) => [1, n],
                _ => [128, 128],
            };
            let mut q = json!({ "quant_method": "fp8", "fmt": "e4m3", "activation_scheme": "dynamic",
                                "weight_block_size": tile });
            if scheme.name().contains("scale_fmt=ue8m0") {
                q["scale_fmt"] = json!("ue8m0");
            }
            q
        }
        Convention::Gguf => return files,
    };
    let mut config = ckpt.config().cloned().filter(serde_json::Value::is_object).unwrap_or_else(|| json!({}));
    config["quantization_config"] = quantization_config;
    files.push(("config.json", pretty(&config)));
    files
}

fn pretty(v: &serde_json::Value) -> String {
    let mut text = serde_json::to_string_pretty(v).expect("JSON values print");
    text.push('\n');
    text
}
