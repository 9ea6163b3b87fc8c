//! **Block-scaled recipes**: MX in every scale mode, NVFP4, ggml blocks, FP8 blocks, each exactly
//! as the implementation that made the weights computes it.
//!
//! A [`Scheme`] is a named recipe with its options (`torchao:mxfp4,scale=rceil`,
//! `modelopt:nvfp4`, `ggml:q8_0`, `deepseek:fp8,tile=1x128`, `fp8:channel`, `ocp:mxfp8e4m3`;
//! [`SCHEMES`] lists them with their sources). A recipe is a row of the table in
//! `recipes.rs` ([`Recipe`]): element format, block shape, scale format and rule, second-level
//! scale, the arithmetic of the element step, the tie rule, what zero/NaN/Inf blocks give, the
//! storage layout, and the implementation, version and script that check it. The engine reads the
//! row; element and scale casts go through the rounding core's plans.
//!
//! ```
//! use lowbit::quant::blocks::{quantize, Scales, Scheme};
//!
//! // ggml Q8_0: d = amax / 127 = 1/127 stored as float16, elements roundf(x * (1 / d)) (ties
//! // away from zero): 0.5/127 scaled is 0.5 -> 1 and -0.5/127 -> -1.
//! let mut x = [0.0f32; 32];
//! x[0] = 1.0;
//! x[1] = 0.5 / 127.0;
//! x[2] = -0.5 / 127.0;
//! let q = quantize(&x, &[32], &Scheme::parse("ggml:q8_0")?, -1, None)?;
//! assert_eq!(&q.elements[..3], &[127, 1, 0xFF]);
//! assert_eq!(q.scales, Scales::Float16(vec![0x2008])); // 1/127 in float16
//! # Ok::<(), lowbit::Error>(())
//! ```

mod codec;
mod engine;
mod fast;
mod integer_glue;
mod layout;
mod recipes;
mod rules;
mod scale_layout;

pub use crate::quant::integer::{Extras, Nested, Params as IntegerParams, StoredTensor};
/// Block-scaled operands of `dot`.
#[cfg(feature = "dot")]
pub(crate) use engine::block_operand;
pub use engine::quantize;
pub use integer_glue::{dequantize_as, from_storage, quantize_weight, storage};
pub use layout::from_arrays;
pub(crate) use recipes::{TORCH_BFLOAT16_NAN, TORCH_LANES};
pub(crate) use rules::{c_int8_x86, code_held_in, nan_amax_bits, product};
pub use scale_layout::{from_bytes_in, swizzle_scales, to_bytes_in, unswizzle_scales, ScaleLayout, SCALE_LAYOUTS};

pub use recipes::{
    Amax, BlockShape, Dequantize, ElementRound, ElementStep, GlobalRule, Layout, NanElement, NanRules, Pow2,
    ProductNan, Recipe, ScaleFormat, ScaleRule, ShortBlock, Source, ZeroScale,
};

use crate::alloc_prelude::*;
use crate::dtype::DType;
use crate::error::{quoted, Error, Result};
use crate::quant::integer;
use crate::quant::mx::{MxFormat, MxOptions, ScaleRound};

/// Every scheme family with its options and source: what `lowbit schemes` and
/// `lowbit.blocks.SCHEMES` list.
pub const SCHEMES: &[(&str, &str)] = &[
    (
        "ocp:mxfp8e4m3|mxfp8e5m2|mxfp6e2m3|mxfp6e3m2|mxfp4|mxint8[,block=N][,scale=floor|ceil]",
        "OCP MX v1.0 (lowbit quant::mx; checked against Graphcore gfloat)",
    ),
    (
        "torchao:mxfp8e4m3|mxfp8e5m2|mxfp6e2m3|mxfp6e3m2|mxfp4,scale=floor|rceil|ceil|even",
        "torchao 0.18.0 torchao.prototype.mx_formats to_mx / to_dtype",
    ),
    ("torchao:nvfp4[,global=amax]", "torchao 0.18.0 nvfp4_quantize / NVFP4Tensor.dequantize"),
    ("modelopt:nvfp4", "nvidia-modelopt 0.47.0 NVFP4QTensor.quantize / dequantize"),
    (
        "compressed-tensors:nvfp4",
        "compressed-tensors 0.20.0 NVFP4 preset (generate_gparam, calculate_qparams, NVFP4PackedCompressor)",
    ),
    (
        "compressed-tensors:mxfp4",
        "compressed-tensors 0.20.0 MXFP4 preset (generate_mx_scales, calculate_qparams, MXFP4PackedCompressor)",
    ),
    (
        "ggml:q8_0|q4_0|mxfp4|nvfp4 (q4_0, mxfp4: [,contract=fma])",
        "ggml 0.10.1 ggml-quants.c quantize_row_*_ref / dequantize_row_*, the x86-64 build (run live by \
         scripts/crosscheck_ggml.py); contract=fma: a build that fuses multiply-adds",
    ),
    (
        "gguf-py:q8_0|q4_0|mxfp4",
        "gguf 0.19.0 gguf.quants numpy port (convert_hf_to_gguf.py); departs from ggml's C on NaN and Q4_0 -0.0 blocks",
    ),
    (
        "deepseek:fp8[,tile=128x128|1x128][,scale_fmt=ue8m0]",
        "DeepSeek-V3 inference/kernel.py act_quant / weight_dequant (transcribed)",
    ),
    (
        "fp8:tensor|channel|group=N|block=N|block=MxN",
        "compressed-tensors 0.20.0 float-quantized (FP8, FP8_DYNAMIC, FP8_BLOCK)",
    ),
];

/// [`SCHEMES`] and one row per ggml block type of `quant::ggml`'s table (`ggml:q4_k`, ...),
/// with its source: every scheme `Scheme::parse` takes, as `lowbit schemes` lists them.
#[must_use]
pub fn schemes() -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = SCHEMES.iter().map(|(n, s)| ((*n).to_string(), (*s).to_string())).collect();
    for c in crate::quant::ggml::codecs() {
        let imatrix = if c.needs_imatrix { " (an importance matrix required)" } else { "" };
        out.push((format!("ggml:{}", c.name), format!("{}{imatrix}", c.source)));
    }
    out.extend(integer::FAMILIES.iter().map(|f| (f.grammar.to_string(), f.source.to_string())));
    out
}

/// A recipe with its options, parsed from its name.
#[derive(Clone, Debug, PartialEq)]
pub struct Scheme {
    name: String,
    recipe: Recipe,
    /// OCP MX: the options `quant::mx` takes.
    mx: Option<MxOptions>,
    /// torchao NVFP4 `global=amax`: the per-tensor scale computed from the tensor.
    global_from_amax: bool,
    /// A ggml block type of `quant::ggml`'s table (its name there): the codec reads and writes it.
    ggml_codec: Option<&'static str>,
    /// An integer or codebook scheme of `quant::integer`'s families: its parsed options.
    integer: Option<integer::Params>,
}

/// Every `family:format` a scheme name can start with, from the rows' names (`ocp:mxfp4`,
/// `torchao:mxfp4`, `ggml:q4_0`, `fp8:tensor`, ...).
fn scheme_heads() -> Vec<String> {
    let mut heads = Vec::new();
    let integer_names = integer::FAMILIES.iter().map(|f| f.grammar.to_string());
    for name in recipes().into_iter().map(|(name, _)| name).chain(integer_names) {
        let head = name.split([',', '[', ' ']).next().unwrap_or_default();
        let Some((family, formats)) = head.split_once(':') else {
            heads.push(head.to_string());
            continue;
        };
        for format in formats.split('|').filter(|f| !f.contains('=')) {
            let head = format!("{family}:{format}");
            if !heads.contains(&head) {
                heads.push(head);
            }
        }
    }
    heads
}

impl Scheme {
    /// Parses a scheme name (module docs; [`SCHEMES`]); an unknown family or format is an error
    /// led by the nearest valid ones ("did you mean ggml:q4_0?").
    pub fn parse(name: &str) -> Result<Scheme> {
        Scheme::parse_exact(name).map_err(|e| {
            let head = name.split(',').next().unwrap_or_default();
            let heads = scheme_heads();
            if heads.iter().any(|h| h == head) {
                return e;
            }
            let near = crate::names::nearest_names(head, heads.iter().map(String::as_str));
            match (near.is_empty(), e) {
                (false, Error::InvalidOp { op, message }) => {
                    Error::InvalidOp { op, message: format!("did you mean {}? {message}", near.join(" or ")) }
                }
                (_, e) => e,
            }
        })
    }

    fn parse_exact(name: &str) -> Result<Scheme> {
        let mut parts = name.split(',');
        let head = parts.next().unwrap_or_default();
        // A word without `=` is a flag (`sym`, `actorder`, `nested`): only integer families take them.
        let options: Vec<(&str, &str)> = parts.map(|p| p.split_once('=').unwrap_or((p, ""))).collect();
        let (family, format) = head.split_once(':').ok_or_else(|| bad(name, "a scheme is family:format"))?;
        if let Some(params) = integer::parse(name, family, format, &options) {
            let params = params?;
            let recipe = recipes::integer_row(&params);
            return Ok(Scheme {
                name: name.to_string(),
                recipe,
                mx: None,
                global_from_amax: false,
                ggml_codec: None,
                integer: Some(params),
            });
        }
        if let Some((flag, _)) = options.iter().find(|(_, v)| v.is_empty()) {
            return Err(bad(name, &format!("option {} is not key=value", quoted(flag))));
        }
        let mut global_from_amax = false;
        let mut mx = None;
        let mut ggml_codec = None;
        let mut used = Vec::new();
        let option = |key: &str, used: &mut Vec<String>| {
            used.push(key.to_string());
            options.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
        };
        let mut recipe = match family {
            "ocp" => {
                let mx_format = MxFormat::parse(format)?;
                let mut opts = MxOptions::new(mx_format);
                if let Some(b) = option("block", &mut used) {
                    opts.block_size = parse_count(name, "block", b)?;
                }
                if let Some(s) = option("scale", &mut used) {
                    opts.scale_round = ScaleRound::parse(s)?;
                }
                mx = Some(opts);
                Recipe { element: mx_format.element_dtype(), block: BlockShape::Row(opts.block_size), ..row("ocp") }
            }
            "torchao" if format == "nvfp4" => {
                match option("global", &mut used) {
                    None => {}
                    Some("amax") => global_from_amax = true,
                    Some(v) => return Err(bad(name, &format!("global={v}: the only value is amax"))),
                }
                row("torchao:nvfp4")
            }
            "torchao" => {
                let index = recipes::TORCHAO_MX_ELEMENTS.iter().position(|e| e.0 == format).ok_or_else(|| {
                    bad(name, "torchao's formats are mxfp8e4m3, mxfp8e5m2, mxfp6e2m3, mxfp6e3m2, mxfp4, nvfp4")
                })?;
                let mode = option("scale", &mut used).unwrap_or("floor");
                recipes::torchao_mx_row(index, mode)
                    .ok_or_else(|| bad(name, "torchao's scale modes are floor, ceil, even, rceil"))?
            }
            "modelopt" | "compressed-tensors" if format == "nvfp4" => row(head),
            "compressed-tensors" if format == "mxfp4" => row(head),
            "ggml" if matches!(format, "q8_0" | "q4_0" | "mxfp4" | "nvfp4") => {
                let mut r = row(head);
                match (option("contract", &mut used), &mut r.round) {
                    (None, _) => {}
                    (
                        Some("fma"),
                        ElementRound::IntegerOffsetTruncate { fused } | ElementRound::NearestIndexFirstTie { fused },
                    ) if format != "nvfp4" => *fused = true,
                    (Some(v), _) => {
                        return Err(bad(
                            name,
                            &format!(
                                "contract={v}: only ggml:q4_0 and ggml:mxfp4 take contract=fma (a build of ggml that \
                                 fuses a multiply-add changes them; q8_0 and nvfp4 have none)"
                            ),
                        ))
                    }
                }
                r
            }
            "ggml" if crate::quant::ggml::codec(format).is_some() => {
                let c = crate::quant::ggml::codec(format).expect("found");
                ggml_codec = Some(c.name);
                recipes::ggml_codec_row(c)
            }
            "gguf-py" if matches!(format, "q8_0" | "q4_0" | "mxfp4") => row(head),
            "deepseek" if format == "fp8" => {
                let mut r = row("deepseek:fp8");
                match option("tile", &mut used) {
                    None | Some("128x128") => {}
                    Some("1x128") => r.block = BlockShape::Row(128),
                    Some(v) => return Err(bad(name, &format!("tile={v}: DeepSeek's tiles are 128x128 and 1x128"))),
                }
                match option("scale_fmt", &mut used) {
                    None => {}
                    Some("ue8m0") => {
                        if let ScaleRule::Divide { ref mut pow2_ceil, .. } = r.scale_rule {
                            *pow2_ceil = true;
                        }
                    }
                    Some(v) => return Err(bad(name, &format!("scale_fmt={v}: the only value is ue8m0"))),
                }
                if r.block == BlockShape::Tile(128, 128) {
                    // weight_dequant masks the edges: short tiles hold the elements that exist.
                    r.short_block = ShortBlock::OwnBlock;
                }
                r
            }
            "fp8" => {
                let mut r = row("fp8");
                let granularity = match format {
                    "tensor" => BlockShape::Tensor,
                    "channel" => BlockShape::Channel,
                    _ => {
                        let (key, value) = format
                            .split_once('=')
                            .ok_or_else(|| bad(name, "fp8's forms are tensor, channel, group=N, block=N, block=MxN"))?;
                        match (key, value.split_once('x')) {
                            ("group" | "block", None) => BlockShape::Row(parse_count(name, key, value)?),
                            ("block", Some((m, n))) => {
                                // compressed-tensors zero-pads tiles and crops: short tiles allowed.
                                r.short_block = ShortBlock::OwnBlock;
                                BlockShape::Tile(parse_count(name, key, m)?, parse_count(name, key, n)?)
                            }
                            _ => return Err(bad(name, "fp8's forms are tensor, channel, group=N, block=N, block=MxN")),
                        }
                    }
                };
                if matches!(granularity, BlockShape::Tensor | BlockShape::Channel) {
                    r.short_block = ShortBlock::OwnBlock;
                }
                r.block = granularity;
                r
            }
            _ => return Err(bad(name, "unknown scheme")),
        };
        if let Some((k, _)) = options.iter().find(|(k, _)| !used.iter().any(|u| u == k)) {
            return Err(bad(name, &format!("{} takes no option {}", head, quoted(k))));
        }
        if let (Some(opts), BlockShape::Row(_)) = (mx, recipe.block) {
            recipe.block = BlockShape::Row(opts.block_size);
        }
        Ok(Scheme { name: name.to_string(), recipe, mx, global_from_amax, ggml_codec, integer: None })
    }

    /// The name as given.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The recipe row (with the options applied).
    #[must_use]
    pub fn recipe(&self) -> &Recipe {
        &self.recipe
    }

    /// The element's ONNX type.
    #[must_use]
    pub fn element_dtype(&self) -> DType {
        self.recipe.element
    }

    pub(crate) fn mx(&self) -> Option<&MxOptions> {
        self.mx.as_ref()
    }

    pub(crate) fn global_from_amax(&self) -> bool {
        self.global_from_amax
    }

    /// The ggml block type of a scheme of ggml's table (`ggml:q4_k`, ...).
    pub(crate) fn ggml_codec(&self) -> Option<&'static crate::quant::ggml::Codec> {
        self.ggml_codec.and_then(crate::quant::ggml::codec)
    }

    /// Elements and bytes per block of one of ggml's block types of its table.
    #[must_use]
    pub fn ggml_block(&self) -> Option<(usize, usize)> {
        self.ggml_codec().map(|c| (c.block_elements, c.block_bytes))
    }

    /// The options of an integer or codebook scheme (`gptq:int4,group=128`, `bnb:nf4`, ...).
    #[must_use]
    pub fn integer(&self) -> Option<&IntegerParams> {
        self.integer.as_ref()
    }

    /// Whether the scheme is one of ggml's block types whose [`Quantized`] carries the GGUF
    /// bytes (module `codec`: `elements` the blocks row after row, no separate scales).
    #[must_use]
    pub fn is_ggml_blocks(&self) -> bool {
        self.ggml_codec.is_some()
    }
}

impl core::fmt::Display for Scheme {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(&self.name)
    }
}

/// Every recipe row with its options applied as `SCHEMES` names them (torchao MX: each element
/// format in each scale mode), in the order of [`SCHEMES`].
#[must_use]
pub fn recipes() -> Vec<(String, Recipe)> {
    let mut out = Vec::new();
    for r in recipes::RECIPES {
        let name = match r.options {
            "" => r.family.to_string(),
            o if o.starts_with('[') => format!("{}{o}", r.family),
            o => format!("{}:{o}", r.family),
        };
        out.push((name, *r));
        if r.family == "ocp" {
            for (i, e) in recipes::TORCHAO_MX_ELEMENTS.iter().enumerate() {
                for mode in ["floor", "ceil", "even", "rceil"] {
                    let row = recipes::torchao_mx_row(i, mode).expect("a torchao mode");
                    out.push((format!("torchao:{},scale={mode}", e.0), row));
                }
            }
        }
    }
    out
}

/// Every concrete scheme name a recipe row stands for, options spelled out: each MX element
/// format in each scale mode (OCP MX in blocks of `block`), both NVFP4 global-scale forms of
/// torchao, DeepSeek's tiles in both scale formats, FP8 per tensor, per channel, in blocks of
/// `block` and in 128x128 tiles. The candidates a diagnosis compares a block or a weight with
/// (`checkpoint which`, the block-unit check); each caller keeps those that store what it has.
#[must_use]
pub fn concrete_schemes(block: usize) -> Vec<String> {
    let mut names = Vec::new();
    // Defaults (OCP MX's blocks of 32 and floor, DeepSeek's 128x128 tiles) are left unsaid, as users write the names.
    let block_option =
        if block == crate::quant::mx::DEFAULT_BLOCK_SIZE { String::new() } else { format!(",block={block}") };
    for f in ["mxfp8e4m3", "mxfp8e5m2", "mxfp6e2m3", "mxfp6e3m2", "mxfp4", "mxint8"] {
        for mode_option in ["", ",scale=ceil"] {
            names.push(format!("ocp:{f}{block_option}{mode_option}"));
        }
    }
    for (f, ..) in recipes::TORCHAO_MX_ELEMENTS {
        for mode in ["floor", "ceil", "even", "rceil"] {
            names.push(format!("torchao:{f},scale={mode}"));
        }
    }
    let fixed = [
        "torchao:nvfp4",
        "torchao:nvfp4,global=amax",
        "modelopt:nvfp4",
        "compressed-tensors:nvfp4",
        "compressed-tensors:mxfp4",
        "ggml:q8_0",
        "ggml:q4_0",
        "ggml:mxfp4",
        "ggml:nvfp4",
        "ggml:q4_0,contract=fma",
        "ggml:mxfp4,contract=fma",
        "gguf-py:q8_0",
        "gguf-py:q4_0",
        "gguf-py:mxfp4",
        "fp8:tensor",
        "fp8:channel",
        "fp8:block=128x128",
    ];
    names.extend(fixed.iter().map(|s| (*s).to_string()));
    for tile_option in ["", ",tile=1x128"] {
        for scale_option in ["", ",scale_fmt=ue8m0"] {
            names.push(format!("deepseek:fp8{tile_option}{scale_option}"));
        }
    }
    names.push(format!("fp8:block={block}"));
    names
}

/// The recipe table as Markdown (`tables/recipes.md`): one row per recipe, every field, and the
/// implementation, version and functions it reproduces with the script that checks it.
#[must_use]
pub fn recipes_markdown() -> String {
    let mut md = String::from(
        "# Block-scaled recipes\n\nGenerated from the recipe rows of `lowbit::quant::blocks` (`lowbit tables --out \
         tables`); do not edit by hand. One row per recipe: what the engine reads. The facts and their \
         sources are in `docs/research/block_recipes.md`; the fixtures the rows are checked against are \
         in `tests/data/blocks/`.\n\n| scheme | element | block | scale | block maximum | scale rule | \
         per-tensor scale | element step | element rounding | dequantize | casts | NaN of NaN times NaN | \
         NaN of NaN scale times NaN per-tensor scale | NaN block maximum | bfloat16 NaN | short last block | layout | implementation | version | functions | \
         checked by |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for (name, r) in recipes() {
        let cells = [
            format!("`{name}`"),
            if r.scale_rule == ScaleRule::OcpMx {
                "the format's".to_string()
            } else {
                r.element.onnx_name().to_string()
            },
            format!("{:?}", r.block),
            format!("{:?}", r.scale),
            format!("{:?}", r.amax),
            format!("{:?}", r.scale_rule),
            format!("{:?}", r.global),
            format!("{:?}", r.step),
            format!("{:?}", r.round),
            format!("{:?}", r.dequantize),
            r.profile.name().to_string(),
            format!("the {:?}'s", r.nan.product).to_lowercase(),
            match r.nan.global_tail {
                (_, 0) => "as the previous column".to_string(),
                (step, period) => format!(
                    "the per-tensor scale's, the block scale's in the last (r - 1) % {period} of N, r = N % {step}"
                ),
            },
            if r.nan.lanes.is_empty() {
                "0x7FC00000".to_string()
            } else {
                let lanes: Vec<String> = r.nan.lanes.iter().map(|(d, n)| format!("{} {n}", d.onnx_name())).collect();
                format!("every bit set in lanes of {}, 0x7FC00000 in the tail", lanes.join(", "))
            },
            r.nan.bfloat16.map_or_else(|| "the core's".to_string(), |b| format!("{b:#06X}")),
            format!("{:?}", r.short_block),
            format!("{:?}", r.layout),
            r.source.implementation.to_string(),
            r.source.version.to_string(),
            r.source.functions.to_string(),
            r.source.checked_by.to_string(),
        ];
        let cells: Vec<String> = cells.iter().map(|c| c.replace('|', "\\|")).collect();
        md.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
    md
}

fn row(family: &str) -> Recipe {
    *recipes::RECIPES.iter().find(|r| r.family == family).expect("every family parsed has a row")
}

fn bad(name: &str, why: &str) -> Error {
    Error::InvalidOp { op: format!("scheme {}", quoted(name)), message: why.to_string() }
}

fn parse_count(name: &str, key: &str, value: &str) -> Result<usize> {
    match value.parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(bad(name, &format!("{key}={value}: a positive integer is needed"))),
    }
}

/// A block's scales as stored.
#[derive(Clone, Debug, PartialEq)]
pub enum Scales {
    /// One byte code per block: E8M0, E4M3 or ggml UE4M3.
    Codes(Vec<u8>),
    /// float16 bits (ggml's `d`).
    Float16(Vec<u16>),
    /// bfloat16 bits (compressed-tensors FP8 scales of bfloat16 input).
    Bfloat16(Vec<u16>),
    /// float32 values.
    Float32(Vec<f32>),
}

impl Scales {
    /// How many scales.
    #[must_use]
    pub fn len(&self) -> usize {
        match self {
            Scales::Codes(v) => v.len(),
            Scales::Float16(v) | Scales::Bfloat16(v) => v.len(),
            Scales::Float32(v) => v.len(),
        }
    }

    /// No scales.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The ONNX type of the stored scales.
    #[must_use]
    pub fn dtype(&self, scheme: &Scheme) -> DType {
        match self {
            Scales::Codes(_) if scheme.recipe.scale == ScaleFormat::E8M0 => DType::Float8E8M0,
            Scales::Codes(_) if scheme.recipe.scale == ScaleFormat::E4M3 => DType::Float8E4M3FN,
            Scales::Codes(_) => DType::Uint8,
            Scales::Float16(_) => DType::Float16,
            Scales::Bfloat16(_) => DType::Bfloat16,
            Scales::Float32(_) => DType::Float,
        }
    }
}

/// A quantized tensor: one element code per element (the code in the low bits: the ONNX code of
/// the element type; ggml Q8_0 the int8 byte, Q4_0 the stored nibble), the scales, and the
/// per-tensor scale of two-level recipes.
///
/// ggml's block types of its table ([`Scheme::is_ggml_blocks`]: `ggml:q4_k`, `ggml:tq1_0`, ...,
/// whose blocks hold sub-block scales, minima and bit planes) carry the tensor's bytes as a
/// GGUF holds them instead: `elements` are the blocks, row after row (blocked along the last
/// axis, a whole number of blocks per row), `scales` are empty and `scales_shape` is `[0]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Quantized {
    /// The scheme.
    pub scheme: Scheme,
    /// The tensor's shape.
    pub shape: Vec<usize>,
    /// The blocked axis (negative counts from the end).
    pub axis: i64,
    /// One code per element, the tensor's shape, row-major.
    pub elements: Vec<u8>,
    /// The scales, of shape [`Quantized::scales_shape`].
    pub scales: Scales,
    /// The per-tensor scale (a decode scale for torchao and ModelOpt, an encode scale for
    /// compressed-tensors, as each stores it).
    pub global_scale: Option<f32>,
    /// What integer and codebook schemes keep beside the codes and scales (zero points, MLX's
    /// biases, GPTQ's `g_idx`, bitsandbytes' nested scales); `None` for the other schemes.
    pub extras: Option<Box<Extras>>,
}

/// [`quantize`] with an importance matrix, for ggml's block types that take one
/// ([`Scheme::is_ggml_blocks`]; ggml's `ggml_quantize_chunk` with `imatrix`): `imatrix` holds
/// one float32 weight per column of the last axis, the axis ggml blocks.
/// `ggml:q4_0` takes one too (ggml's `quantize_q4_0` then runs `quantize_row_q4_0_impl`).
pub fn quantize_with_importance(x: &[f32], shape: &[usize], scheme: &Scheme, imatrix: &[f32]) -> Result<Quantized> {
    if let Some((per_block, block_bytes, quantize_row)) = crate::quant::ggml::importance_quantizer(scheme.name()) {
        let bad = |message: String| Error::InvalidOp { op: format!("{} quantize", scheme.name()), message };
        let cols = *shape.last().ok_or_else(|| bad("a scalar has no axis to block".into()))?;
        let rows = shape[..shape.len() - 1]
            .iter()
            .try_fold(1usize, |n, &d| n.checked_mul(d))
            .filter(|r| r.checked_mul(cols).is_some())
            .ok_or_else(|| Error::TooLarge {
                what: format!("a tensor of shape {}", crate::error::shown_shape(shape)),
            })?;
        if cols % per_block != 0 {
            return Err(bad(format!("a row of {cols} elements is not a whole number of blocks of {per_block}")));
        }
        if imatrix.len() != cols {
            return Err(bad(format!("the importance matrix holds {} weights for rows of {cols}", imatrix.len())));
        }
        if x.len() != rows * cols {
            return Err(Error::ShapeMismatch { shape: shape.to_vec(), elements: rows * cols, actual: x.len() });
        }
        let row_bytes = cols / per_block * block_bytes;
        let mut bytes = vec![0u8; rows * row_bytes];
        for (r, (row, out)) in x.chunks_exact(cols.max(1)).zip(bytes.chunks_exact_mut(row_bytes.max(1))).enumerate() {
            quantize_row(row, Some(imatrix), out, r)?;
        }
        return from_bytes(&bytes, scheme, shape, -1);
    }
    let codec = scheme.ggml_codec().ok_or_else(|| Error::InvalidOp {
        op: format!("{} quantize", scheme.name()),
        message: "an importance matrix is for ggml's block types of its table (ggml:q4_k, ...) and ggml:q4_0".into(),
    })?;
    codec::quantize(codec, x, shape, scheme, -1, Some(imatrix))
}

/// float32, float16 or bfloat16 input.
pub trait BlockInput: Copy + sealed::Sealed {
    /// The ONNX type.
    const DTYPE: DType;
    /// The value widened to float32 (exact).
    fn widen(self) -> f32;
    /// Appends the value's little-endian bytes (the integer schemes take raw input).
    fn push_le(self, out: &mut Vec<u8>);
    /// The slice itself where it is float32 (read in place), else `None`.
    fn as_float32(xs: &[Self]) -> Option<&[f32]> {
        let _ = xs;
        None
    }
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for half::f16 {}
    impl Sealed for half::bf16 {}
}

impl BlockInput for f32 {
    fn push_le(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes());
    }
    const DTYPE: DType = DType::Float;
    #[inline(always)]
    fn widen(self) -> f32 {
        self
    }
    fn as_float32(xs: &[f32]) -> Option<&[f32]> {
        Some(xs)
    }
}

impl BlockInput for half::f16 {
    fn push_le(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_bits().to_le_bytes());
    }
    const DTYPE: DType = DType::Float16;
    #[inline(always)]
    fn widen(self) -> f32 {
        self.to_f32()
    }
}

impl BlockInput for half::bf16 {
    fn push_le(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_bits().to_le_bytes());
    }
    const DTYPE: DType = DType::Bfloat16;
    #[inline(always)]
    fn widen(self) -> f32 {
        // bfloat16 is the top half of float32: widening is a shift, NaN payloads kept.
        f32::from_bits(u32::from(self.to_bits()) << 16)
    }
}

/// The bytes of one element of the float types weights come in and values go out as (FLOAT,
/// FLOAT16, BFLOAT16); any other type is an error of `op`.
pub(crate) fn float_width(dtype: DType, op: &'static str) -> Result<usize> {
    match dtype {
        DType::Float => Ok(4),
        DType::Float16 | DType::Bfloat16 => Ok(2),
        other => Err(Error::UnsupportedDType {
            op,
            dtype: other.onnx_name(),
            why: "the values are FLOAT, FLOAT16 or BFLOAT16",
        }),
    }
}

/// [`quantize`] on ONNX raw data: `raw` holds `dtype` (FLOAT, FLOAT16 or BFLOAT16) little-endian
/// elements of `shape`.
pub fn quantize_raw(
    dtype: DType,
    raw: &[u8],
    shape: &[usize],
    scheme: &Scheme,
    axis: i64,
    global_scale: Option<f32>,
) -> Result<Quantized> {
    let width = float_width(dtype, "blocks quantize")?;
    if raw.len() % width != 0 {
        return Err(Error::RawNotWhole { dtype: dtype.onnx_name(), bytes: raw.len(), bits: 8 * width as u32 });
    }
    let halves = || raw.chunks_exact(2).map(|b| u16::from_le_bytes([b[0], b[1]]));
    match dtype {
        DType::Float => {
            // Read in place where the bytes are aligned float32 in this machine's order (a numpy
            // array's are): a copy of a large tensor costs more than the quantizing.
            if let (true, Ok(v)) = (cfg!(target_endian = "little"), <[f32] as zerocopy::FromBytes>::ref_from_bytes(raw))
            {
                return quantize(v, shape, scheme, axis, global_scale);
            }
            let v: Vec<f32> = raw.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
            quantize(&v, shape, scheme, axis, global_scale)
        }
        DType::Float16 => {
            let v: Vec<half::f16> = halves().map(half::f16::from_bits).collect();
            quantize(&v, shape, scheme, axis, global_scale)
        }
        _ => {
            let v: Vec<half::bf16> = halves().map(half::bf16::from_bits).collect();
            quantize(&v, shape, scheme, axis, global_scale)
        }
    }
}

/// The values of `q` in float32, as the implementation dequantizes them (a new vector:
/// [`dequantize_into`] fills one the caller keeps).
pub fn dequantize(q: &Quantized) -> Result<Vec<f32>> {
    layout::check_arrays(q)?;
    let mut out = vec![0.0f32; engine::Geometry::new(&q.shape, &q.scheme, q.axis)?.elements()];
    engine::dequantize_into(q, &mut out)?;
    Ok(out)
}

/// [`dequantize`] into `out`, which must hold exactly the tensor's element count (else
/// [`Error::ShapeMismatch`], `out` untouched): every value is written, none read.
pub fn dequantize_into(q: &Quantized, out: &mut [f32]) -> Result<()> {
    layout::check_arrays(q)?;
    engine::dequantize_into(q, out)
}

/// The shape of the scales of a tensor of `shape` under `scheme` ([`Quantized::scales_shape`]).
pub fn scales_shape(shape: &[usize], scheme: &Scheme, axis: i64) -> Result<Vec<usize>> {
    engine::scales_shape(shape, scheme, axis)
}

/// `q` in its scheme's storage layout ([`Layout`]).
pub fn to_bytes(q: &Quantized) -> Result<Vec<u8>> {
    layout::to_bytes(q)
}

/// The reverse of [`to_bytes`] for a tensor of `shape`.
///
/// A scheme whose scales are in the input's dtype (`fp8:*`) does not say in its bytes which
/// dtype that was: two-byte scales are read as bfloat16 here; [`from_bytes_with_scale_dtype`]
/// reads them as float16.
pub fn from_bytes(data: &[u8], scheme: &Scheme, shape: &[usize], axis: i64) -> Result<Quantized> {
    layout::from_bytes(data, scheme, shape, axis)
}

/// [`from_bytes`] with the dtype of scales stored in the input's dtype said: FLOAT, FLOAT16 or
/// BFLOAT16 (a float16 model's `fp8:*` weights); an error where the bytes hold scales of
/// another width, or the scheme's scales are not in the input's dtype.
pub fn from_bytes_with_scale_dtype(
    data: &[u8],
    scheme: &Scheme,
    shape: &[usize],
    axis: i64,
    scale_dtype: DType,
) -> Result<Quantized> {
    let mut q = layout::from_bytes(data, scheme, shape, axis)?;
    let refuse = |message: String| Error::InvalidOp { op: format!("{} from_bytes", scheme.name()), message };
    if scheme.recipe.scale != ScaleFormat::InputDtype {
        return Err(refuse(format!(
            "its scales are not stored in the input's dtype: give no scale dtype ({} given)",
            scale_dtype.onnx_name()
        )));
    }
    q.scales = match (q.scales, scale_dtype) {
        (Scales::Bfloat16(v), DType::Float16) => Scales::Float16(v),
        (s @ Scales::Bfloat16(_), DType::Bfloat16) | (s @ Scales::Float32(_), DType::Float) => s,
        (s, d) => {
            return Err(refuse(format!(
                "the bytes hold {} scales of {} bytes each, not {}",
                s.len(),
                if matches!(s, Scales::Float32(_)) { 4 } else { 2 },
                d.onnx_name()
            )))
        }
    };
    Ok(q)
}

impl Quantized {
    /// The shape of the scales: the tensor's with the blocked axis divided by the block, rounded
    /// up (tiles: both axes; `fp8:tensor`: `[1]`).
    pub fn scales_shape(&self) -> Result<Vec<usize>> {
        let shape = scales_shape(&self.shape, &self.scheme, self.axis);
        // Integer schemes whose producer allows a short last group (onnxruntime's MatMulNBits):
        // a scale per (row, group), as many as the row holds.
        match (shape, self.scheme.integer(), self.shape.as_slice()) {
            (Err(_), Some(_), [rows, _]) if *rows > 0 && self.scales.len() % rows == 0 => {
                Ok(vec![*rows, self.scales.len() / rows])
            }
            (shape, ..) => shape,
        }
    }

    /// [`to_bytes`].
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        to_bytes(self)
    }

    /// [`dequantize`].
    pub fn dequantize(&self) -> Result<Vec<f32>> {
        dequantize(self)
    }

    /// [`dequantize_into`].
    pub fn dequantize_into(&self, out: &mut [f32]) -> Result<()> {
        dequantize_into(self, out)
    }
}
