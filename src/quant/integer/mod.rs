//! Integer and codebook weight schemes: the 4- and 8-bit weights of GPTQ, AWQ, compressed-tensors
//! (`pack-quantized`, `int-quantized`), bitsandbytes NF4/FP4, onnxruntime's `MatMulNBits` and
//! MLX's affine quantization.
//!
//! Each producer is a [`Family`] row: how its scheme name reads, its quantizer, its dequantize
//! (in the producer's own precision and order of operations) and its storage (the tensors its
//! checkpoints hold, exactly). They reach users through `blocks::Scheme` (`gptq:int4,group=128`,
//! ...), whose [`blocks::Quantized`](crate::quant::blocks::Quantized) carries the integer code of
//! each element, the group scales as the producer stores them, the zero points and, for GPTQ's
//! act-order, the group of each input column.
//!
//! A weight is a matrix (out_features, in_features) grouped along its last axis, as every one of
//! these producers lays out a linear layer's weight.

use crate::alloc_prelude::*;
use crate::dtype::DType;
use crate::error::{quoted, Error, Result};
use crate::quant::blocks::{Quantized, Scheme};

mod affine;
mod awq;
mod gptq;

/// One tensor as a producer saves it: its name without the layer prefix (`qweight`, `scales`,
/// `weight_packed`, ...), its ONNX dtype, shape and little-endian bytes.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredTensor {
    /// The name in the producer's checkpoints, without the layer prefix.
    pub name: String,
    /// The element type.
    pub dtype: DType,
    /// The shape.
    pub shape: Vec<usize>,
    /// The elements, little-endian, row-major.
    pub data: Vec<u8>,
}

/// What an integer or codebook scheme keeps beside its element codes and group scales.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Extras {
    /// The zero point of each group, as an integer code, in the scales' order (`None`: the
    /// scheme stores none).
    pub zero_points: Option<Vec<i32>>,
    /// MLX's float bias of each group (`w = scale * q + bias`), in the scales' order.
    pub biases: Option<crate::quant::blocks::Scales>,
    /// GPTQ act-order's `g_idx`: the group of each input column.
    pub group_index: Option<Vec<i32>>,
    /// bitsandbytes' nested quantization of the block scales: `scales` then hold one byte code
    /// per block, and these the second level.
    pub nested: Option<Nested>,
}

/// bitsandbytes' nested ("double") quantization of the per-block absmax: the absmax less
/// `offset`, quantized in blocks of `block` by the 8-bit dynamic map with float32 scales.
#[derive(Clone, Debug, PartialEq)]
pub struct Nested {
    /// The second-level scale of each block of `block` first-level scales.
    pub scales: Vec<f32>,
    /// The mean subtracted from the absmax before it was quantized.
    pub offset: f32,
    /// First-level scales per second-level scale (256).
    pub block: usize,
}

/// The options of an integer scheme, parsed from its name by its family's row.
#[derive(Clone, Debug, PartialEq)]
pub struct Params {
    /// The family's row name (`gptq`).
    pub family: &'static str,
    /// Bits per element code.
    pub bits: u32,
    /// Elements per group along the input dimension; `None`: one group per output channel.
    pub group: Option<usize>,
    /// A symmetric quantizer (no zero point stored, or the fixed midpoint).
    pub symmetric: bool,
    /// GPTQ's act-order: groups follow `g_idx`, a group index per input column.
    pub act_order: bool,
    /// Family-specific choices, each one of the row's words (`zeros=v2`, `nested`, ...).
    pub choices: Vec<(&'static str, &'static str)>,
}

impl Params {
    /// The value chosen for `key` among the row's words, if the name gave one.
    #[must_use]
    pub fn choice(&self, key: &str) -> Option<&'static str> {
        self.choices.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
    }
}

/// The weight to quantize: raw little-endian FLOAT, FLOAT16 or BFLOAT16 of shape (rows, cols).
#[derive(Clone, Copy, Debug)]
pub struct Weight<'a> {
    /// The input's dtype.
    pub dtype: DType,
    /// Its bytes.
    pub raw: &'a [u8],
    /// Output features (rows) and input features (cols).
    pub rows: usize,
    /// Input features.
    pub cols: usize,
    /// GPTQ act-order's group of each input column, as the producer was given it.
    pub group_index: Option<&'a [i32]>,
}

/// A scheme name's options as `key=value` pairs (a flag such as `sym`: the key, an empty value).
pub type Options<'a> = Vec<(&'a str, &'a str)>;

/// A producer's row: its name grammar, source and the four things it does.
pub struct Family {
    /// The scheme family (`gptq`).
    pub name: &'static str,
    /// The name with its formats and options, as `lowbit schemes` lists it
    /// (`gptq:int4|int8,group=N[,sym|asym][,actorder][,zeros=v1|v2]`).
    pub grammar: &'static str,
    /// Implementation, version, functions, and the script that checks the row.
    pub source: &'static str,
    /// The options of `family:format,options...` (each option consumed is removed from
    /// `options`; what is left is refused by the caller).
    pub parse: fn(format: &str, options: &mut Options<'_>) -> Result<Params>,
    /// The producer's quantizer.
    pub quantize: fn(&Scheme, &Params, &Weight<'_>) -> Result<Quantized>,
    /// The producer's dequantize into `dtype` (its own precision and order of operations),
    /// little-endian bytes of the weight's shape.
    pub dequantize: fn(&Params, &Quantized, DType) -> Result<Vec<u8>>,
    /// The tensors the producer saves.
    pub storage: fn(&Params, &Quantized) -> Result<Vec<StoredTensor>>,
    /// The reverse of `storage` for a weight of `shape` (rows, cols), every length checked first.
    pub from_storage: fn(&Scheme, &Params, &[StoredTensor], [usize; 2]) -> Result<Quantized>,
}

/// Every family, one row per producer.
pub(crate) const FAMILIES: &[Family] = &[gptq::GPTQ, awq::AWQ];

/// The family row of `name`.
pub(crate) fn family(name: &str) -> Option<&'static Family> {
    FAMILIES.iter().find(|f| f.name == name)
}

/// Parses `family:format` with its options, when `family` is one of the rows.
pub(crate) fn parse(name: &str, family_name: &str, format: &str, options: &[(&str, &str)]) -> Option<Result<Params>> {
    let row = family(family_name)?;
    // A family may also have float recipes (compressed-tensors): the row claims its formats only.
    let formats = row.grammar.split_once(':').map_or("", |(_, rest)| rest.split([',', '[']).next().unwrap_or(""));
    if !formats.split('|').any(|f| f == format) {
        return None;
    }
    let mut left: Options<'_> = options.to_vec();
    Some((row.parse)(format, &mut left).and_then(|p| match left.first() {
        None => Ok(p),
        Some((k, _)) => Err(Error::InvalidOp {
            op: format!("scheme {}", quoted(name)),
            message: format!("{family_name}:{format} takes no option {}", quoted(k)),
        }),
    }))
}

/// Takes `key` out of `options`.
pub(crate) fn take<'a>(options: &mut Options<'a>, key: &str) -> Option<&'a str> {
    let at = options.iter().position(|(k, _)| *k == key)?;
    Some(options.remove(at).1)
}

/// The shape (rows, cols) of a weight: a matrix.
pub(crate) fn matrix(scheme: &Scheme, shape: &[usize]) -> Result<[usize; 2]> {
    match shape {
        [rows, cols] => Ok([*rows, *cols]),
        _ => Err(Error::InvalidOp {
            op: format!("{} quantize", scheme.name()),
            message: format!(
                "a weight of shape {} is not a matrix (out_features, in_features)",
                crate::error::shown_shape(shape)
            ),
        }),
    }
}
