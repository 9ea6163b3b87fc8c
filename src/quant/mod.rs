//! **Quantization**: tensors of wide floats to narrow codes with scales, and back. ONNX linear
//! quantization, `QuantizeLinear` and `DequantizeLinear` (versions 10, 13, 19, 21, 23, 24, 25 and
//! 28) and `DynamicQuantizeLinear` (11), callable without the graph runner; and OCP Microscaling.
//!
//! | what | where |
//! |---|---|
//! | OCP Microscaling (MX v1.0): MXFP8, MXFP6, MXFP4, MXINT8 blocks sharing one E8M0 scale, laid out as the inputs of a `DequantizeLinear` with a float8e8m0 scale and `block_size` | [`mx`] |
//! | each version's types and attributes, as tables | [`QUANTIZE_SCHEMAS`], [`DEQUANTIZE_SCHEMAS`] |
//! | `QuantizeLinear` / `DequantizeLinear` | [`quantize_linear`], [`dequantize_linear`] |
//! | `DynamicQuantizeLinear` | [`dynamic_quantize_linear`] |
//!
//! Every check (types against the version's table, attributes the version has, axis, block size,
//! the shapes of the scale and the zero point) runs before anything is allocated. The arithmetic
//! is per scale group: `x / y_scale` for a chunk of elements in the precision the profile decides
//! ([`crate::profile::QuantizeDivision`]), then the conversion to the output type by a
//! [`crate::plan::Plan`] (float targets: the Cast with `saturate`) or by the plan's integer
//! rounding kernel (nearest-even) followed by the zero point and the clamp to the type's range.
//! Where the text is silent or the implementations disagree, the profile's rows decide
//! ([`crate::profile::QuantizePolicy`]).

// The recipes take float32 log2 as torch and gguf do, the platform's: with `std` only.
#[cfg(feature = "std")]
pub mod blocks;
pub mod dynamic;
#[cfg(feature = "std")]
pub(crate) mod ggml;
#[cfg(feature = "std")]
pub(crate) mod integer;
pub mod linear;
pub mod mx;

pub use dynamic::dynamic_quantize_linear;
pub use linear::{dequantize_linear, quantize_linear};

/// Refuses an input of shape `shape` that a block-scaled `scheme` has no answer for and that
/// [`blocks::quantize`] does not refuse itself: an empty tensor under a recipe with one scale for
/// the whole tensor (`fp8:tensor`), whose scale comes from `max(|x|)` and an empty tensor has no
/// maximum (compressed-tensors' dynamic per-tensor qparams, `torch.aminmax`, raise RuntimeError
/// on it). The command line, the Python package and `checkpoint quantize` call it first.
///
/// ```
/// use lowbit::quant::{blocks::Scheme, check_blocks_input};
///
/// let tensor = Scheme::parse("fp8:tensor")?;
/// assert!(check_blocks_input(&[0, 4], &tensor).is_err());
/// assert!(check_blocks_input(&[2, 4], &tensor).is_ok());
/// // One scale per row: an empty tensor has no rows, and no scales.
/// assert!(check_blocks_input(&[0, 4], &Scheme::parse("fp8:channel")?).is_ok());
/// # Ok::<(), lowbit::Error>(())
/// ```
#[cfg(feature = "std")]
pub fn check_blocks_input(shape: &[usize], scheme: &blocks::Scheme) -> Result<()> {
    if shape.contains(&0) && scheme.recipe().block == blocks::BlockShape::Tensor {
        return Err(Error::InvalidOp {
            op: format!("{} quantize", scheme.name()),
            message: format!(
                "the tensor (shape {}) has no elements, so no max(|x|) for its one scale (compressed-tensors' \
                 torch.aminmax raises on an empty tensor)",
                shown_shape(shape)
            ),
        });
    }
    Ok(())
}

use crate::alloc_prelude::*;
use crate::dtype::DType;
use crate::error::{shown_shape, Error, Result};

/// Versions of `QuantizeLinear` (the schema in force at opset N is the newest one <= N).
pub const QUANTIZE_LINEAR_VERSIONS: [i64; 8] = [10, 13, 19, 21, 23, 24, 25, 28];
/// Versions of `DequantizeLinear`.
pub const DEQUANTIZE_LINEAR_VERSIONS: [i64; 8] = [10, 13, 19, 21, 23, 24, 25, 28];
/// Versions of `DynamicQuantizeLinear`.
pub const DYNAMIC_QUANTIZE_LINEAR_VERSIONS: [i64; 1] = [11];

/// One version of an op's schema: the types each input may have and the attributes it knows
/// (transcribed from `onnx.defs.get_schema(op, version)` of onnx 1.23.2).
#[derive(Clone, Copy, Debug)]
pub struct Schema {
    /// The version this schema was introduced in.
    pub version: i64,
    /// `x`.
    pub inputs: &'static [DType],
    /// The scale.
    pub scales: &'static [DType],
    /// The quantized side: QuantizeLinear's output (and zero point), DequantizeLinear's `x`.
    pub quantized: &'static [DType],
    /// DequantizeLinear's output types (empty for QuantizeLinear).
    pub outputs: &'static [DType],
    /// `x` and the scale share one type variable (QuantizeLinear 19 and 21: `T1`).
    pub scale_matches_input: bool,
    /// The output is the scale's type (DequantizeLinear 19 and 21: `T2`) or, for 10 and 13, float.
    pub output_is_scale_type: bool,
    /// The scale may be a 1-D tensor (per-axis); before 13 it is a scalar.
    pub per_axis: bool,
    /// The attributes this version knows (any other is an error).
    pub attributes: &'static [&'static str],
}

use DType::{
    Bfloat16 as BF16, Float as F32, Float16 as F16, Float4E2M1 as F4, Float6E2M3 as F6A, Float6E3M2 as F6B,
    Float8E4M3FN as E4M3FN, Float8E4M3FNUZ as E4M3FNUZ, Float8E5M2 as E5M2, Float8E5M2FNUZ as E5M2FNUZ,
    Float8E8M0 as E8M0, Int16 as I16, Int2 as I2, Int32 as I32, Int4 as I4, Int8 as I8, Uint16 as U16, Uint2 as U2,
    Uint4 as U4, Uint8 as U8,
};

const FLOATS: &[DType] = &[F32, F16, BF16];
const FLOATS_I32: &[DType] = &[F32, F16, BF16, I32];
const FLOATS_I32_E8M0: &[DType] = &[F32, F16, BF16, I32, E8M0];
const FLOATS_E8M0: &[DType] = &[F32, F16, BF16, E8M0];
const Q8: &[DType] = &[I8, U8];
const Q19: &[DType] = &[I8, U8, E4M3FN, E4M3FNUZ, E5M2, E5M2FNUZ];
const Q21: &[DType] = &[I8, U8, I16, U16, I4, U4, E4M3FN, E4M3FNUZ, E5M2, E5M2FNUZ];
const Q23: &[DType] = &[I8, U8, I16, U16, I4, U4, E4M3FN, E4M3FNUZ, E5M2, E5M2FNUZ, F4];
const Q25: &[DType] = &[I8, U8, I16, U16, I4, U4, I2, U2, E4M3FN, E4M3FNUZ, E5M2, E5M2FNUZ, F4];
const Q28: &[DType] = &[I8, U8, I16, U16, I4, U4, I2, U2, E4M3FN, E4M3FNUZ, E5M2, E5M2FNUZ, F4, F6A, F6B];

const Q_ATTRS_21: &[&str] = &["axis", "saturate", "block_size", "output_dtype"];
const Q_ATTRS_23: &[&str] = &["axis", "saturate", "block_size", "output_dtype", "precision"];

/// QuantizeLinear's versions: `x` (T1), `y_scale`, `y_zero_point` and `y` (T2/T3).
pub const QUANTIZE_SCHEMAS: [Schema; 8] = {
    const fn q(
        version: i64,
        inputs: &'static [DType],
        scales: &'static [DType],
        quantized: &'static [DType],
        attributes: &'static [&'static str],
    ) -> Schema {
        Schema {
            version,
            inputs,
            scales,
            quantized,
            outputs: &[],
            scale_matches_input: version == 19 || version == 21,
            output_is_scale_type: false,
            per_axis: version >= 13,
            attributes,
        }
    }
    [
        q(10, &[F32, I32], &[F32], Q8, &[]),
        q(13, &[F32, I32], &[F32], Q8, &["axis"]),
        q(19, FLOATS_I32, FLOATS_I32, Q19, &["axis", "saturate"]),
        q(21, FLOATS_I32, FLOATS_I32, Q21, Q_ATTRS_21),
        q(23, FLOATS_I32, FLOATS_I32, Q23, Q_ATTRS_23),
        q(24, FLOATS_I32, FLOATS_I32_E8M0, Q23, Q_ATTRS_23),
        q(25, FLOATS_I32, FLOATS_I32_E8M0, Q25, Q_ATTRS_23),
        q(28, FLOATS_I32, FLOATS_I32_E8M0, Q28, Q_ATTRS_23),
    ]
};

const D19: &[DType] = &[I8, U8, I32, E4M3FN, E4M3FNUZ, E5M2, E5M2FNUZ];
const D21: &[DType] = &[I8, U8, I16, U16, I32, I4, U4, E4M3FN, E4M3FNUZ, E5M2, E5M2FNUZ];
const D23: &[DType] = &[I8, U8, I16, U16, I32, I4, U4, E4M3FN, E4M3FNUZ, E5M2, E5M2FNUZ, F4];
const D25: &[DType] = &[I8, U8, I16, U16, I32, I4, U4, I2, U2, E4M3FN, E4M3FNUZ, E5M2, E5M2FNUZ, F4];
const D28: &[DType] = &[I8, U8, I16, U16, I32, I4, U4, I2, U2, E4M3FN, E4M3FNUZ, E5M2, E5M2FNUZ, F4, F6A, F6B];
const D_ATTRS_23: &[&str] = &["axis", "block_size", "output_dtype"];

/// DequantizeLinear's versions: `x` and `x_zero_point` (T/T1), `x_scale` (T2), `y`.
pub const DEQUANTIZE_SCHEMAS: [Schema; 8] = {
    const fn d(
        version: i64,
        quantized: &'static [DType],
        scales: &'static [DType],
        outputs: &'static [DType],
        attributes: &'static [&'static str],
    ) -> Schema {
        Schema {
            version,
            inputs: quantized,
            scales,
            quantized,
            outputs,
            scale_matches_input: false,
            output_is_scale_type: version < 23,
            per_axis: version >= 13,
            attributes,
        }
    }
    [
        d(10, &[I8, U8, I32], &[F32], &[F32], &[]),
        d(13, &[I8, U8, I32], &[F32], &[F32], &["axis"]),
        d(19, D19, FLOATS, FLOATS, &["axis"]),
        d(21, D21, FLOATS, FLOATS, &["axis", "block_size"]),
        d(23, D23, FLOATS, FLOATS, D_ATTRS_23),
        d(24, D23, FLOATS_E8M0, FLOATS, D_ATTRS_23),
        d(25, D25, FLOATS_E8M0, FLOATS, D_ATTRS_23),
        d(28, D28, FLOATS_E8M0, FLOATS, D_ATTRS_23),
    ]
};

/// The attributes of a `QuantizeLinear` node as they appear in a model (`None`: absent).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct QuantizeAttributes {
    /// `axis`: the axis of a per-axis or blocked scale (default 1; negative counts from the end).
    pub axis: Option<i64>,
    /// `saturate` (float8 outputs, 19 and later): 1 (default) clamps overflow to ±MAX, 0 gives NaN or infinity.
    pub saturate: Option<i64>,
    /// `block_size` (21 and later): elements per scale along `axis`; 0 or absent: not blocked.
    pub block_size: Option<i64>,
    /// `output_dtype` (21 and later): the output's ONNX type number when there is no zero point.
    pub output_dtype: Option<i64>,
    /// `precision` (23 and later): the ONNX type number of the division `x / y_scale`.
    pub precision: Option<i64>,
}

/// The attributes of a `DequantizeLinear` node as they appear in a model.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DequantizeAttributes {
    /// `axis`: the axis of a per-axis or blocked scale (default 1; negative counts from the end).
    pub axis: Option<i64>,
    /// `block_size` (21 and later): elements per scale along `axis`; 0 or absent: not blocked.
    pub block_size: Option<i64>,
    /// `output_dtype` (23 and later): the output's ONNX type number (default: the scale's type).
    pub output_dtype: Option<i64>,
}

pub(crate) fn invalid(op: &str, message: impl Into<String>) -> Error {
    Error::InvalidOp { op: op.into(), message: message.into() }
}

/// The schema of `op` in force at `opset`, and the op's name with its version (`QuantizeLinear-21`).
pub(crate) fn schema_at(op: &str, schemas: &'static [Schema], opset: i64) -> Result<(&'static Schema, String)> {
    let versions: Vec<i64> = schemas.iter().map(|s| s.version).collect();
    let version = crate::opset::schema_version(op, &versions, opset)?;
    let schema = schemas.iter().find(|s| s.version == version).expect("the version comes from the table");
    Ok((schema, format!("{op}-{version}")))
}

/// Refuses an attribute the version does not have.
pub(crate) fn check_attributes(name: &str, schema: &Schema, given: &[(&str, bool)]) -> Result<()> {
    for &(attribute, present) in given {
        if present && !schema.attributes.contains(&attribute) {
            return Err(invalid(name, format!("has no attribute {attribute}")));
        }
    }
    Ok(())
}

pub(crate) fn check_type(name: &str, role: &str, dtype: DType, allowed: &[DType]) -> Result<()> {
    if allowed.contains(&dtype) {
        return Ok(());
    }
    let listed: Vec<&str> = allowed.iter().map(|d| d.onnx_name()).collect();
    Err(invalid(name, format!("{role} type {dtype} is not allowed (allowed: {})", listed.join(", "))))
}

/// How the elements of `x` map to the scale's elements: element `(o, i, j)` of `x` viewed as
/// `[outer, axis_len, inner]` uses scale element `o * outer_stride + (i / block) * axis_stride +
/// j * inner_stride`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Groups {
    pub axis_len: usize,
    pub inner: usize,
    pub block: usize,
    pub outer_stride: usize,
    pub axis_stride: usize,
    pub inner_stride: usize,
    /// One scale for every element.
    pub per_tensor: bool,
}

impl Groups {
    /// One scale for the whole tensor.
    pub const PER_TENSOR: Groups =
        Groups { axis_len: 1, inner: 1, block: 1, outer_stride: 0, axis_stride: 0, inner_stride: 0, per_tensor: true };

    /// Whether element `i` uses scale `i / size`, for every `i`: blocks of `size` along the last
    /// axis (or an axis with nothing after it), every block whole, scales in row-major order.
    pub fn is_blocks_of(&self, size: usize) -> bool {
        !self.per_tensor
            && self.inner == 1
            && self.block == size
            && self.axis_len % size == 0
            && self.axis_stride == 1
            && self.outer_stride == self.axis_len / size
    }

    /// Whether elements `2k` and `2k + 1` share a scale, for every `k` (the two elements of a
    /// packed 4-bit byte). False where unsure: it only picks the faster of two exact paths.
    pub fn pairs_share_scale(&self) -> bool {
        if self.per_tensor {
            true
        } else if self.inner > 1 {
            // Per axis (one scale for every inner element) with pairs inside one axis index.
            self.inner_stride == 0 && self.inner % 2 == 0
        } else {
            // Blocks along the last axis, pairs inside one block of one row.
            self.block % 2 == 0 && self.axis_len % 2 == 0
        }
    }

    /// The length of the runs of consecutive elements that share a scale, away from the ends of
    /// blocks cut short by the axis: the whole tensor, `inner` elements per axis index, a block
    /// along the last axis, or 1 (blocks along an earlier axis change scale at every element).
    pub fn run_length(&self) -> usize {
        if self.per_tensor {
            usize::MAX
        } else if self.inner > 1 && self.inner_stride != 0 {
            1
        } else {
            self.block.min(self.axis_len).saturating_mul(self.inner)
        }
    }

    /// Calls `f(offset, run, scale_index)` for each run of consecutive elements among
    /// `start..start + len` that share a scale, in order; `offset` counts from `start`. The same
    /// scale indices as [`Groups::indices`], one call per run instead of one entry per element.
    pub fn for_each_run(&self, start: usize, len: usize, mut f: impl FnMut(usize, usize, usize)) {
        if self.per_tensor || len == 0 {
            if len > 0 {
                f(0, len, 0);
            }
            return;
        }
        let (inner, axis_len, block) = (self.inner, self.axis_len, self.block);
        // Element `start` is (o, i, j) of [outer, axis_len, inner], in block b of its axis, which
        // ends at block_end; the divisions are done once, then the position steps run by run
        // (a division per run costs as much as quantizing a block of 32).
        let mut j = start % inner;
        let mut i = (start / inner) % axis_len;
        let mut o = start / (inner * axis_len);
        let mut b = i / block;
        let mut block_end = ((b + 1) * block).min(axis_len);
        // Blocked along an earlier axis: the scale changes with every inner element.
        let per_element = inner > 1 && self.inner_stride != 0;
        let mut offset = 0;
        while offset < len {
            let index = o * self.outer_stride + b * self.axis_stride + j * self.inner_stride;
            // The rest of this axis index's inner elements, then the rest of its block.
            let full = if per_element { 1 } else { (inner - j) + (block_end - i - 1) * inner };
            let run = full.min(len - offset);
            f(offset, run, index);
            offset += run;
            // Only a full run is followed by another: step past it.
            if per_element {
                j += 1;
                if j < inner {
                    continue;
                }
                j = 0;
                i += 1;
            } else {
                j = 0;
                i = block_end;
            }
            if i == axis_len {
                (i, o, b, block_end) = (0, o + 1, 0, block.min(axis_len));
            } else if i == block_end {
                b += 1;
                block_end = (block_end + block).min(axis_len);
            }
        }
    }

    /// Writes the scale index of elements `start..start + out.len()` into `out`.
    pub fn indices(&self, start: usize, out: &mut [usize]) {
        if self.per_tensor {
            out.fill(0);
            return;
        }
        let mut j = start % self.inner;
        let mut i = (start / self.inner) % self.axis_len;
        let mut o = start / (self.inner * self.axis_len);
        for slot in out {
            *slot = o * self.outer_stride + (i / self.block) * self.axis_stride + j * self.inner_stride;
            j += 1;
            if j == self.inner {
                j = 0;
                i += 1;
                if i == self.axis_len {
                    i = 0;
                    o += 1;
                }
            }
        }
    }
}

/// Checks the scale's and the zero point's shapes against `x` (per-tensor, per-axis, blocked) and
/// returns how elements find their scale. `scale_role` and `zero_role` name the inputs.
#[allow(clippy::too_many_arguments)]
pub(crate) fn groups(
    name: &str,
    schema: &Schema,
    x_shape: &[usize],
    scale_shape: &[usize],
    zero_shape: Option<&[usize]>,
    axis: Option<i64>,
    block_size: Option<i64>,
    (scale_role, zero_role): (&str, &str),
) -> Result<Groups> {
    let scale_len: usize = scale_shape.iter().product();
    if let Some(z) = zero_shape {
        let zero_len: usize = z.iter().product();
        // A one-element zero point goes with a one-element scale whatever their ranks (the node
        // tests pair a scalar scale with a [1] zero point).
        if z != scale_shape && !(zero_len == 1 && scale_len == 1) {
            return Err(invalid(
                name,
                format!(
                    "{zero_role} has shape {} but {scale_role} has shape {}; they must match",
                    shown_shape(z),
                    shown_shape(scale_shape)
                ),
            ));
        }
    }
    let block = block_size.unwrap_or(0);
    if block < 0 {
        return Err(invalid(name, format!("block_size must be positive, not {block}")));
    }
    let rank = x_shape.len();
    let per_tensor = Groups::PER_TENSOR;
    let axis_index = |what: &str| -> Result<usize> {
        let a = axis.unwrap_or(1);
        let r = i64::try_from(rank).unwrap_or(i64::MAX);
        if a < -r || a >= r {
            return Err(invalid(
                name,
                format!("axis {a} is out of range for input x of rank {rank} ({what}; accepted: [-{r}, {}])", r - 1),
            ));
        }
        Ok(usize::try_from(if a < 0 { a + r } else { a }).expect("in range"))
    };
    if scale_len == 1 && (block == 0 || scale_shape.len() <= 1) {
        return Ok(per_tensor);
    }
    if block == 0 {
        if scale_shape.len() != 1 || !schema.per_axis {
            let allowed = if schema.per_axis { "a scalar or a 1-D tensor" } else { "a scalar" };
            let extra =
                if schema.attributes.contains(&"block_size") { " (blocked quantization needs block_size)" } else { "" };
            return Err(invalid(
                name,
                format!("{scale_role} has shape {} but must be {allowed}{extra}", shown_shape(scale_shape)),
            ));
        }
        let a = axis_index("per-axis quantization")?;
        if scale_shape[0] != x_shape[a] {
            return Err(invalid(
                name,
                format!("{scale_role} has {} elements but axis {a} of x has {}", scale_shape[0], x_shape[a]),
            ));
        }
        let inner: usize = x_shape[a + 1..].iter().product();
        return Ok(Groups {
            axis_len: x_shape[a],
            inner: inner.max(1),
            block: 1,
            outer_stride: 0,
            axis_stride: 1,
            inner_stride: 0,
            per_tensor: false,
        });
    }
    let a = axis_index("blocked quantization")?;
    if scale_shape.len() != rank {
        return Err(invalid(
            name,
            format!(
                "blocked quantization: {scale_role} has shape {} but must have the rank of x {}",
                shown_shape(scale_shape),
                shown_shape(x_shape)
            ),
        ));
    }
    let block = usize::try_from(block).unwrap_or(usize::MAX);
    for (d, (&s, &xd)) in scale_shape.iter().zip(x_shape).enumerate() {
        let expected = if d == a { xd.div_ceil(block) } else { xd };
        if s != expected {
            return Err(invalid(
                name,
                format!(
                    "blocked quantization: {scale_role} has shape {} but x {} with block_size {block} along axis {a} needs {expected} at axis {d}",
                    shown_shape(scale_shape),
                    shown_shape(x_shape),
                ),
            ));
        }
    }
    let inner: usize = x_shape[a + 1..].iter().product();
    let blocks = scale_shape[a];
    Ok(Groups {
        axis_len: x_shape[a],
        inner: inner.max(1),
        block,
        outer_stride: blocks * inner,
        axis_stride: inner,
        inner_stride: 1,
        per_tensor: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocked_indices_walk_the_scale() {
        // x [2, 5], axis 1, block 2: scale [2, 3]; row 0 uses 0 0 1 1 2, row 1 uses 3 3 4 4 5.
        let g =
            groups("Q", &QUANTIZE_SCHEMAS[3], &[2, 5], &[2, 3], None, Some(1), Some(2), ("y_scale", "y_zero_point"))
                .unwrap();
        let mut out = [0; 10];
        g.indices(0, &mut out);
        assert_eq!(out, [0, 0, 1, 1, 2, 3, 3, 4, 4, 5]);
        let mut tail = [0; 4];
        g.indices(6, &mut tail);
        assert_eq!(tail, [3, 4, 4, 5]);
    }

    /// `for_each_run` gives, run by run, what `indices` gives element by element, from any start.
    #[test]
    fn runs_agree_with_indices() {
        // (x shape, scale shape, axis, block size)
        type Case = (&'static [usize], &'static [usize], Option<i64>, Option<i64>);
        let cases: [Case; 6] = [
            (&[2, 5], &[2, 3], Some(1), Some(2)),
            (&[3, 4, 5], &[3, 2, 5], Some(1), Some(3)),
            (&[2, 3, 2], &[3], Some(1), None),
            (&[4, 7], &[4], Some(0), None),
            (&[6, 33], &[6, 2], Some(-1), Some(32)),
            (&[5], &[], None, None),
        ];
        for (x, scale, axis, block) in cases {
            let g = groups("Q", &QUANTIZE_SCHEMAS[3], x, scale, None, axis, block, ("s", "z")).unwrap();
            let n: usize = x.iter().product();
            let mut expected = vec![0; n];
            g.indices(0, &mut expected);
            for start in 0..n {
                for len in 0..=n - start {
                    let mut got = Vec::new();
                    g.for_each_run(start, len, |at, run, k| {
                        assert_eq!(at, got.len(), "{x:?} runs are in order");
                        assert!(run > 0);
                        got.extend(core::iter::repeat_n(k, run));
                    });
                    if g.per_tensor {
                        assert!(got.iter().all(|&k| k == 0));
                        assert_eq!(got.len(), len);
                    } else {
                        assert_eq!(got, expected[start..start + len], "{x:?} {scale:?} from {start}, {len}");
                    }
                }
            }
        }
    }

    /// Where `is_blocks_of` says so, element i uses scale i / size (by `indices`); and it says so for
    /// blocks of 32 along the last axis.
    #[test]
    fn blocks_of_a_size_are_what_indices_say() {
        type Case = (&'static [usize], &'static [usize], Option<i64>, Option<i64>, bool);
        let cases: [Case; 6] = [
            (&[3, 64], &[3, 2], Some(1), Some(32), true),
            (&[2, 3, 64], &[2, 3, 2], Some(-1), Some(32), true),
            (&[6, 33], &[6, 2], Some(-1), Some(32), false),
            (&[64, 2], &[2, 2], Some(0), Some(32), false),
            (&[3, 64], &[3, 4], Some(1), Some(16), false),
            (&[64], &[], None, None, false),
        ];
        for (x, scale, axis, block, want) in cases {
            let g = groups("Q", &QUANTIZE_SCHEMAS[3], x, scale, None, axis, block, ("s", "z")).unwrap();
            assert_eq!(g.is_blocks_of(32), want, "{x:?} {scale:?}");
            if want {
                let n: usize = x.iter().product();
                let mut indices = vec![0; n];
                g.indices(0, &mut indices);
                assert!(indices.iter().enumerate().all(|(i, &k)| k == i / 32), "{x:?}");
            }
        }
    }

    #[test]
    fn per_axis_indices_repeat_over_outer_and_inner() {
        // x [2, 3, 2], axis 1: scale [3]; each axis index covers 2 inner elements.
        let g = groups("Q", &QUANTIZE_SCHEMAS[3], &[2, 3, 2], &[3], None, Some(1), None, ("s", "z")).unwrap();
        let mut out = [0; 12];
        g.indices(0, &mut out);
        assert_eq!(out, [0, 0, 1, 1, 2, 2, 0, 0, 1, 1, 2, 2]);
    }
}
