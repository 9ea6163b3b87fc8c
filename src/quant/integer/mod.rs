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

mod bnb;

use crate::alloc_prelude::*;
use crate::dtype::DType;
use crate::error::{quoted, Error, Result};
use crate::quant::blocks::{Quantized, Scheme};

mod affine;
mod awq;
mod compressed_tensors;
mod gptq;
mod mlx;
pub(crate) mod ort;

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
    /// The weight's dtype where the producer records it beside the codes (bitsandbytes'
    /// `quant_state` `dtype`, the dtype its dequantize returns).
    pub source_dtype: Option<DType>,
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
pub(crate) const FAMILIES: &[Family] =
    &[gptq::GPTQ, awq::AWQ, compressed_tensors::FAMILY, bnb::ROW, mlx::ROW, ort::ROW];

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

/// The weight's values widened to float32 (exact; NaN payloads kept as the rounding core widens);
/// aligned float32 input is read in place.
pub(crate) fn widened<'a>(weight: &Weight<'a>) -> Result<alloc::borrow::Cow<'a, [f32]>> {
    use alloc::borrow::Cow;
    let n = weight.rows * weight.cols;
    if weight.dtype == DType::Float {
        if let (true, Ok(v)) =
            (cfg!(target_endian = "little"), <[f32] as zerocopy::FromBytes>::ref_from_bytes(weight.raw))
        {
            return Ok(Cow::Borrowed(v));
        }
        return Ok(Cow::Owned(
            weight.raw.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect(),
        ));
    }
    let mut wide = vec![0u8; 4 * n];
    crate::plan::Plan::new(weight.dtype, DType::Float, &crate::CastOptions::default())?
        .run(weight.raw, &mut wide, n)?;
    Ok(Cow::Owned(wide.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect()))
}

/// Group scales (or MLX's biases) of `dtype` from their little-endian bits.
pub(crate) fn scales_from_bits(dtype: DType, raw: &[u8]) -> Result<crate::quant::blocks::Scales> {
    use crate::quant::blocks::Scales;
    Ok(match dtype {
        DType::Float => {
            Scales::Float32(raw.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect())
        }
        DType::Float16 => Scales::Float16(raw.chunks_exact(2).map(|b| u16::from_le_bytes([b[0], b[1]])).collect()),
        DType::Bfloat16 => Scales::Bfloat16(raw.chunks_exact(2).map(|b| u16::from_le_bytes([b[0], b[1]])).collect()),
        other => {
            return Err(Error::UnsupportedDType {
                op: "integer scales",
                dtype: other.onnx_name(),
                why: "scales are FLOAT, FLOAT16 or BFLOAT16",
            })
        }
    })
}

/// The little-endian bits of float scales (FLOAT, FLOAT16 or BFLOAT16; byte codes refused).
pub(crate) fn scales_bits(scales: &crate::quant::blocks::Scales) -> Option<(DType, Vec<u8>)> {
    use crate::quant::blocks::Scales;
    match scales {
        Scales::Float32(v) => Some((DType::Float, v.iter().flat_map(|x| x.to_le_bytes()).collect())),
        Scales::Float16(v) => Some((DType::Float16, v.iter().flat_map(|x| x.to_le_bytes()).collect())),
        Scales::Bfloat16(v) => Some((DType::Bfloat16, v.iter().flat_map(|x| x.to_le_bytes()).collect())),
        Scales::Codes(_) => None,
    }
}

/// Float scales widened to float32 (exact).
pub(crate) fn scales_widened(scales: &crate::quant::blocks::Scales) -> Result<Vec<f32>> {
    let (dtype, raw) = scales_bits(scales).ok_or_else(|| Error::InvalidOp {
        op: "integer dequantize".into(),
        message: "the scales are byte codes, not float scales".into(),
    })?;
    let rows = raw.len() / (dtype.bits().unwrap_or(32) as usize / 8);
    Ok(widened(&Weight { dtype, raw: &raw, rows, cols: 1, group_index: None })?.into_owned())
}

/// A tensor of `tensors` named `name`, its dtype and shape checked (`what` names the scheme).
pub(crate) fn stored<'a>(
    what: &str,
    tensors: &'a [StoredTensor],
    name: &str,
    dtypes: &[DType],
    shape: &[usize],
) -> Result<&'a StoredTensor> {
    let bad = |message: String| Error::InvalidOp { op: format!("{what} from_storage"), message };
    let t = tensors.iter().find(|t| t.name == name).ok_or_else(|| bad(format!("no tensor {}", quoted(name))))?;
    if !dtypes.contains(&t.dtype) {
        let names: Vec<&str> = dtypes.iter().map(|d| d.onnx_name()).collect();
        return Err(bad(format!("tensor {} is {}, not {}", quoted(name), t.dtype.onnx_name(), names.join(" or "))));
    }
    if t.shape != shape {
        return Err(bad(format!(
            "tensor {} has shape {}, the weight needs {}",
            quoted(name),
            crate::error::shown_shape(&t.shape),
            crate::error::shown_shape(shape)
        )));
    }
    let elements: usize = shape.iter().product();
    let need = crate::packing::raw_len(t.dtype, elements)?;
    if t.data.len() != need {
        return Err(bad(format!("tensor {} holds {} bytes, its shape needs {need}", quoted(name), t.data.len())));
    }
    Ok(t)
}

/// The bits a producer writes for a NaN when it narrows float32 to a 16-bit float (its own
/// conversion routine, not the rounding core's payload-keeping one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NanBits {
    /// The rounding core's (IEEE: the top payload bits kept, quieted).
    Core,
    /// One code for a NaN of each sign: (positive, negative).
    Fixed(u16, u16),
}

/// float32 -> FLOAT16 or BFLOAT16 rounding to nearest even through the rounding core's plans,
/// in chunks, with the producer's NaN bits.
pub(crate) struct Narrowing {
    to: crate::plan::Plan,
    back: crate::plan::Plan,
    nan: NanBits,
}

impl Narrowing {
    pub(crate) fn new(dtype: DType, nan: NanBits) -> Result<Narrowing> {
        let opts = crate::CastOptions::default();
        Ok(Narrowing {
            to: crate::plan::Plan::new(DType::Float, dtype, &opts)?,
            back: crate::plan::Plan::new(dtype, DType::Float, &opts)?,
            nan,
        })
    }

    /// Rounds `values` to the 16-bit type: `codes` receives the codes (as long as `values`).
    pub(crate) fn codes(&self, values: &[f32], codes: &mut [u16]) -> Result<()> {
        use zerocopy::IntoBytes;
        self.to.run(values.as_bytes(), codes.as_mut_bytes(), values.len())?;
        if let NanBits::Fixed(positive, negative) = self.nan {
            for (c, v) in codes.iter_mut().zip(values) {
                if v.is_nan() {
                    *c = if v.is_sign_negative() { negative } else { positive };
                }
            }
        }
        Ok(())
    }

    /// Rounds `values` in place to the 16-bit type's values (widened back, exact), `codes`
    /// receiving the codes.
    pub(crate) fn round(&self, values: &mut [f32], codes: &mut [u16]) -> Result<()> {
        use zerocopy::IntoBytes;
        self.codes(values, codes)?;
        let n = values.len();
        self.back.run(codes.as_bytes(), values.as_mut_bytes(), n)
    }
}

/// Values a producer computed in `own` (float32 `values`, or 16-bit `codes`) as little-endian
/// bytes of `dtype`: its own bits where `dtype` is `own`, else converted by the rounding core
/// (widening exact).
pub(crate) fn output(own: DType, values: &[f32], codes: &[u16], dtype: DType) -> Result<Vec<u8>> {
    use zerocopy::IntoBytes;
    let (src, n): (&[u8], usize) =
        if own == DType::Float { (values.as_bytes(), values.len()) } else { (codes.as_bytes(), codes.len()) };
    if dtype == own {
        return Ok(src.to_vec());
    }
    if !matches!(dtype, DType::Float | DType::Float16 | DType::Bfloat16) {
        return Err(Error::UnsupportedDType {
            op: "integer dequantize",
            dtype: dtype.onnx_name(),
            why: "the output is FLOAT, FLOAT16 or BFLOAT16",
        });
    }
    let width = if dtype == DType::Float { 4 } else { 2 };
    let mut out = vec![0u8; n * width];
    crate::plan::Plan::new(own, dtype, &crate::CastOptions::default())?.run(src, &mut out, n)?;
    Ok(out)
}

/// Refuses a (rows, cols) whose element count, or its bit count, overflows `usize`, before any
/// size is computed from it.
pub(crate) fn checked_size(scheme: &Scheme, rows: usize, cols: usize) -> Result<usize> {
    rows.checked_mul(cols)
        .filter(|n| n.checked_mul(32).is_some())
        .ok_or_else(|| Error::TooLarge { what: format!("a {rows}x{cols} weight of {}", scheme.name()) })
}

/// Little-endian bytes of `own` as bytes of `dtype`: themselves where `dtype` is `own`, else
/// converted by the rounding core (widening exact).
pub(crate) fn convert_output(own: DType, bytes: Vec<u8>, dtype: DType) -> Result<Vec<u8>> {
    if dtype == own {
        return Ok(bytes);
    }
    if !matches!(dtype, DType::Float | DType::Float16 | DType::Bfloat16) {
        return Err(Error::UnsupportedDType {
            op: "integer dequantize",
            dtype: dtype.onnx_name(),
            why: "the output is FLOAT, FLOAT16 or BFLOAT16",
        });
    }
    let n = bytes.len() / if own == DType::Float { 4 } else { 2 };
    let mut out = vec![0u8; n * if dtype == DType::Float { 4 } else { 2 }];
    crate::plan::Plan::new(own, dtype, &crate::CastOptions::default())?.run(&bytes, &mut out, n)?;
    Ok(out)
}
