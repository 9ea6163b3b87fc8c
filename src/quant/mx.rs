//! **OCP Microscaling (MX v1.0)**: blocks of `k` elements (32 by default) that share one scale
//! `X`, a power of two stored as FLOAT8E8M0. A value is `X * P` with `P` an element of
//! FP8 (E4M3, E5M2), FP6 (E2M3, E3M2), FP4 (E2M1) or INT8.
//!
//! ## The rules
//!
//! Quantizing a block `V` (MX v1.0 section 6.3, with the choices below where the text leaves one):
//!
//! * `X = 2^(floor(log2(max|V|)) - emax)`, where `emax` is the exponent of the element format's
//!   largest normal value (E4M3 8, E5M2 15, E2M3 2, E3M2 4, E2M1 2, INT8 0), clamped to E8M0's
//!   range `[2^-127, 2^127]`. With [`ScaleRound::Ceil`], `X` is instead the smallest power of two
//!   (in that range) with `max|V| / X` within the element format's largest magnitude, so nothing
//!   clamps (some training recipes scale this way).
//! * A block of zeros (either sign) gets `X = 2^-127` (code 0x00).
//! * A block holding a NaN or an infinity gets the scale NaN (0xFF; E8M0 has no other code for
//!   it), so the whole block dequantizes to NaN. The spec leaves such a block's elements open:
//!   lowbit writes +0 codes, which depend on nothing else in the block.
//! * `P = V / X` rounded to nearest even and clamped to the element format's range; -0 stays -0
//!   where the element format has it (every float element format; INT8 has one zero).
//! * MXINT8's elements are 8-bit two's complement integers with an implicit scale of 2^-6 (so
//!   their values run from -2 to 127/64 = 1.984375); stored as ONNX INT8, the integer itself.
//!
//! Dequantizing: `X * P` in float32, rounded once (E5M2's 57344 times 2^127 overflows to
//! infinity; an element times 2^-127 may become a float32 subnormal). A NaN scale gives NaN for the
//! whole block; a NaN element (E4M3 0x7F/0xFF, E5M2's NaNs) stays that NaN.
//!
//! ## The layout
//!
//! A tensor is blocked along one axis (the last by default); a short last block along that axis is
//! a block of its own. The scales are a FLOAT8E8M0 tensor of the input's shape with the blocked
//! axis `ceil(len / k)` long; the elements are a tensor of the input's shape in the element's ONNX
//! type (FLOAT8E4M3FN, FLOAT8E5M2, FLOAT6E2M3, FLOAT6E3M2, FLOAT4E2M1, INT8), packed as ONNX packs
//! it. For the float formats these are exactly the `x`, `x_scale`, `axis` and `block_size` of an
//! ONNX `DequantizeLinear` (opset 23 and later) whose scale is float8e8m0. For MXINT8 that node
//! would need each scale code lowered by 6 to carry the implicit 2^-6, which E8M0 cannot hold for
//! codes below 6.
//!
//! ## How it runs
//!
//! Per block, the largest magnitude is a maximum over the float32 bit patterns with the sign
//! cleared (finite values order like their bits, and anything at or above the infinity pattern is
//! an infinity or a NaN); the scale's exponent comes from that pattern's exponent field (or, for a
//! subnormal, its leading bit): no float `log2`. Every element is multiplied by `1 / X`, a power of
//! two and encoded at once by the lane kernel of the [`Plan`] from FLOAT to the element type
//! (saturating, nearest even; the plan is resolved once per call and its kernel derived from the
//! core), piece by piece, then packed. MXINT8 rounds with the plans' integer kernel
//! ([`crate::kernels::quantize::IntegerQuantizer`], nearest even) after a clamp to [-128, 127].
//! Dequantizing runs the element -> FLOAT plan and multiplies by the scales, which the E8M0 ->
//! FLOAT plan decodes. In whole blocks of 32 the decoding and the multiplication share
//! one loop: one-byte elements through the plan's arithmetic decoding (a function of the code,
//! checked against the core's table when the plan is built), 4-bit elements through their 16
//! values (from the plan) held in vector registers where the CPU has AVX2.

use crate::alloc_prelude::*;
use crate::convert::{convert_code, CastOptions};
use crate::dtype::DType;
use crate::error::{shown_shape, Error, Result};
use crate::format;
use crate::kernels::quantize::IntegerQuantizer;
use crate::packing;
use crate::plan::Plan;
use crate::tensor::{element_count, Tensor};

/// The block size of every concrete MX format in the spec.
pub const DEFAULT_BLOCK_SIZE: usize = 32;

/// MXINT8's implicit scale: an element's value is its integer times 2^-6.
pub const MXINT8_IMPLICIT_EXPONENT: i32 = -6;

/// The E8M0 code of the NaN scale.
pub const NAN_SCALE_CODE: u8 = match format::E8M0.nan_code(false) {
    Some(code) => code as u8,
    None => panic!("E8M0 has a NaN"),
};

/// The E8M0 code of 2^-127, the smallest scale (and an all-zero block's).
pub const MIN_SCALE_CODE: u8 = format::E8M0.min_positive_code() as u8;

/// The smallest and largest scale exponents E8M0 holds (-127 and 127).
const MIN_SCALE_EXPONENT: i32 = -format::E8M0.bias;
const MAX_SCALE_EXPONENT: i32 = format::E8M0.max_code() as i32 - format::E8M0.bias;

/// float32's fields, from its descriptor.
const F32_FRACTION_BITS: u32 = format::F32.mantissa_bits;
const F32_BIAS: i32 = format::F32.bias;
/// The bit pattern of +infinity: a magnitude pattern at or above it is an infinity or a NaN.
const F32_INFINITY_BITS: u32 = 0x7F80_0000;
const F32_MAGNITUDE_MASK: u32 = 0x7FFF_FFFF;
/// The exponent of float32's smallest subnormal, 2^-149.
const F32_MIN_EXPONENT: i32 = 1 - F32_BIAS - F32_FRACTION_BITS as i32;

/// The concrete MX formats of the spec (its section 5), named by their element type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MxFormat {
    /// MXFP8 with E4M3 elements (ONNX FLOAT8E4M3FN).
    Fp8E4M3,
    /// MXFP8 with E5M2 elements (ONNX FLOAT8E5M2).
    Fp8E5M2,
    /// MXFP6 with E2M3 elements (ONNX FLOAT6E2M3).
    Fp6E2M3,
    /// MXFP6 with E3M2 elements (ONNX FLOAT6E3M2).
    Fp6E3M2,
    /// MXFP4 with E2M1 elements (ONNX FLOAT4E2M1).
    Fp4E2M1,
    /// MXINT8: two's complement INT8 elements with an implicit scale of 2^-6.
    Int8,
}

impl MxFormat {
    /// Every format.
    pub const ALL: [MxFormat; 6] =
        [MxFormat::Fp8E4M3, MxFormat::Fp8E5M2, MxFormat::Fp6E2M3, MxFormat::Fp6E3M2, MxFormat::Fp4E2M1, MxFormat::Int8];

    /// Every format's name, in the order of [`MxFormat::ALL`]: the `FMT` of the scheme `ocp:FMT`.
    pub const NAMES: [&'static str; 6] = {
        let mut names = [""; 6];
        let mut i = 0;
        while i < names.len() {
            names[i] = MxFormat::ALL[i].name();
            i += 1;
        }
        names
    };

    /// The command-line name (`mxfp8e4m3`, `mxfp8e5m2`, `mxfp6e2m3`, `mxfp6e3m2`, `mxfp4`, `mxint8`).
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            MxFormat::Fp8E4M3 => "mxfp8e4m3",
            MxFormat::Fp8E5M2 => "mxfp8e5m2",
            MxFormat::Fp6E2M3 => "mxfp6e2m3",
            MxFormat::Fp6E3M2 => "mxfp6e3m2",
            MxFormat::Fp4E2M1 => "mxfp4",
            MxFormat::Int8 => "mxint8",
        }
    }

    /// Reads a command-line name (case-insensitive; `mxfp4e2m1` is also accepted).
    pub fn parse(name: &str) -> Result<MxFormat> {
        let lower = name.to_ascii_lowercase();
        if lower == "mxfp4e2m1" {
            return Ok(MxFormat::Fp4E2M1);
        }
        MxFormat::ALL.into_iter().find(|f| f.name() == lower).ok_or_else(|| Error::InvalidOp {
            op: "MX format".into(),
            message: format!(
                "unknown MX format {}; valid formats: {}",
                crate::error::quoted(name),
                MxFormat::ALL.map(MxFormat::name).join(", ")
            ),
        })
    }

    /// The ONNX type of the elements.
    #[must_use]
    pub const fn element_dtype(self) -> DType {
        match self {
            MxFormat::Fp8E4M3 => DType::Float8E4M3FN,
            MxFormat::Fp8E5M2 => DType::Float8E5M2,
            MxFormat::Fp6E2M3 => DType::Float6E2M3,
            MxFormat::Fp6E3M2 => DType::Float6E3M2,
            MxFormat::Fp4E2M1 => DType::Float4E2M1,
            MxFormat::Int8 => DType::Int8,
        }
    }

    /// The largest element value (448, 57344, 7.5, 28, 6; MXINT8: 127 * 2^-6), as the core decodes
    /// the format's largest code.
    pub fn element_max(self) -> Result<f32> {
        let dtype = self.element_dtype();
        let (code, exponent) = match dtype.float_format() {
            Some(f) => (f.max_code(), 0),
            None => (dtype.code_mask() >> 1, MXINT8_IMPLICIT_EXPONENT),
        };
        let max = f32::from_bits(convert_code(dtype, DType::Float, code, &CastOptions::default())? as u32);
        Ok(max * power_of_two(exponent))
    }

    /// `emax`: the exponent of the largest element value, floor(log2(element_max)).
    pub fn emax(self) -> Result<i32> {
        Ok(split_magnitude(self.element_max()?.to_bits()).0)
    }
}

impl core::fmt::Display for MxFormat {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name())
    }
}

/// How a block's scale exponent is chosen.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ScaleRound {
    /// The spec: `floor(log2(amax)) - emax`; the largest elements may clamp.
    #[default]
    Floor,
    /// The smallest power of two with `amax / X` within the element format's largest value.
    Ceil,
}

impl ScaleRound {
    /// `floor` or `ceil`.
    pub fn parse(name: &str) -> Result<ScaleRound> {
        match name {
            "floor" => Ok(ScaleRound::Floor),
            "ceil" => Ok(ScaleRound::Ceil),
            other => Err(Error::InvalidOp {
                op: "MX scale rounding".into(),
                message: format!("{} is neither floor nor ceil", crate::error::quoted(other)),
            }),
        }
    }
}

/// What to quantize to and along which axis.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MxOptions {
    /// The element format.
    pub format: MxFormat,
    /// Elements per block (at least 1). The last block along the axis may be shorter.
    pub block_size: usize,
    /// The blocked axis; negative counts from the end (ONNX style).
    pub axis: i64,
    /// How each block's scale exponent is chosen.
    pub scale_round: ScaleRound,
}

impl MxOptions {
    /// The spec's defaults for `format`: blocks of 32 along the last axis, floor scales.
    #[must_use]
    pub const fn new(format: MxFormat) -> MxOptions {
        MxOptions { format, block_size: DEFAULT_BLOCK_SIZE, axis: -1, scale_round: ScaleRound::Floor }
    }
}

/// The result of [`quantize`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Quantized {
    /// FLOAT8E8M0, the input's shape with the blocked axis `ceil(len / block_size)` long.
    pub scales: Tensor,
    /// The element type, the input's shape.
    pub elements: Tensor,
}

/// The shape of the scales of a tensor of `shape` blocked by `block_size` along `axis`.
pub fn scales_shape(shape: &[usize], axis: i64, block_size: usize) -> Result<Vec<usize>> {
    let g = Geometry::new(shape, axis, block_size, "MX scales shape", "input")?;
    Ok(g.scales_shape(shape))
}

/// The E8M0 code of the scale of a block whose largest magnitude is `amax` (its sign is ignored;
/// NaN or an infinity gives the NaN code, zero the smallest scale).
pub fn block_scale_code(amax: f32, format: MxFormat, scale_round: ScaleRound) -> Result<u8> {
    let element = ElementLimits::new(format)?;
    Ok(element.scale_code(amax.to_bits() & F32_MAGNITUDE_MASK, scale_round))
}

/// Quantizes a FLOAT, FLOAT16 or BFLOAT16 tensor to MX scales and elements (module docs).
///
/// ```
/// use lowbit::quant::mx::{dequantize, quantize, MxFormat, MxOptions};
/// use lowbit::Tensor;
///
/// // One MXFP4 block of 4 (the spec's blocks are 32; any size works).
/// let opts = MxOptions { block_size: 4, ..MxOptions::new(MxFormat::Fp4E2M1) };
/// let q = quantize(&Tensor::from_f32(&[1.0, -0.5, 3.0, 0.1]), &opts)?;
/// // amax 3: X = 2^(floor(log2 3) - emax) = 2^(1 - 2) = 1/2, E8M0 code -1 + 127 = 0x7E.
/// assert_eq!(q.scales.codes()?, [0x7E]);
/// // V / X = 2, -1, 6, 0.2 in E2M1 (0, 0.5, 1, 1.5, 2, 3, 4, 6): 2 = 0x4, -1 = 0x8|0x2,
/// // 6 = 0x7, 0.2 -> 0 (nearer 0 than 0.5).
/// assert_eq!(q.elements.codes()?, [0x4, 0xA, 0x7, 0x0]);
/// let back = dequantize(&q.elements, &q.scales, &opts)?;
/// assert_eq!(back.to_f32_vec()?, [1.0, -0.5, 3.0, 0.0]);
/// # Ok::<(), lowbit::Error>(())
/// ```
pub fn quantize(input: &Tensor, opts: &MxOptions) -> Result<Quantized> {
    let g = Geometry::new(input.shape(), opts.axis, opts.block_size, "MX quantize", "input")?;
    check_input_dtype(input.dtype())?;
    let element_dtype = opts.format.element_dtype();
    let mut scales = vec![0u8; g.scale_count];
    let mut elements = vec![0u8; packing::raw_len(element_dtype, g.elements)?];
    let raw = input.raw().expect("FLOAT, FLOAT16 and BFLOAT16 tensors are raw");
    quantize_into(input.dtype(), input.shape(), raw, opts, &mut scales, &mut elements)?;
    Ok(Quantized {
        scales: Tensor::from_raw(DType::Float8E8M0, g.scales_shape(input.shape()), scales)?,
        elements: Tensor::from_raw(element_dtype, input.shape().to_vec(), elements)?,
    })
}

/// [`quantize`] on ONNX raw data into the caller's buffers: `raw` holds the input (`dtype` FLOAT,
/// FLOAT16 or BFLOAT16, of `shape`), `scales` receives the FLOAT8E8M0 codes (one byte per block,
/// in the scales' row-major order) and `elements` the packed elements. Every length is checked.
pub fn quantize_into(
    dtype: DType,
    shape: &[usize],
    raw: &[u8],
    opts: &MxOptions,
    scales: &mut [u8],
    elements: &mut [u8],
) -> Result<()> {
    let g = Geometry::new(shape, opts.axis, opts.block_size, "MX quantize", "input")?;
    check_input_dtype(dtype)?;
    let n = g.elements;
    let element_dtype = opts.format.element_dtype();
    check_len(dtype, n, raw.len())?;
    check_len(DType::Float8E8M0, g.scale_count, scales.len())?;
    check_len(element_dtype, n, elements.len())?;
    // float16 and bfloat16 widen to float32 exactly (the plan's arithmetic, NaN payloads kept).
    let widened;
    let src: &[u8] = if dtype == DType::Float {
        raw
    } else {
        let mut wide = vec![0u8; packing::raw_len(DType::Float, n)?];
        Plan::new(dtype, DType::Float, &CastOptions::default())?.run(raw, &mut wide, n)?;
        widened = wide;
        &widened
    };
    let element = ElementLimits::new(opts.format)?;
    // The block loops compiled for the widest instruction set the CPU has.
    crate::kernels::simd::widest(QuantizeBlocks { g: &g, src, element: &element, opts, scales, elements })
}

/// [`quantize_into`] after the checks: scales, then elements through the plan.
struct QuantizeBlocks<'a> {
    g: &'a Geometry,
    src: &'a [u8],
    element: &'a ElementLimits,
    opts: &'a MxOptions,
    scales: &'a mut [u8],
    elements: &'a mut [u8],
}

impl crate::kernels::simd::Kernel for QuantizeBlocks<'_> {
    type Output = Result<()>;
    #[inline(always)]
    fn run(self) -> Result<()> {
        let QuantizeBlocks { g, src, element, opts, scales, elements } = self;
        quantize_blocks(g, src, element, opts, scales, elements)
    }
}

#[inline(always)]
fn quantize_blocks(
    g: &Geometry,
    src: &[u8],
    element: &ElementLimits,
    opts: &MxOptions,
    scales: &mut [u8],
    elements: &mut [u8],
) -> Result<()> {
    // Strided blocks: every scale first (one pass over the input), then the elements.
    let factors = if g.inner > 1 { Some(strided_scales(g, src, element, opts.scale_round, scales)) } else { None };
    let blocks = Blocks { g, src, element, round: opts.scale_round, factors: factors.as_deref() };
    if opts.format == MxFormat::Int8 {
        return quantize_int8(&blocks, scales, elements);
    }
    // ONNX Cast FLOAT -> element with saturate=1 under `spec`: nearest even, out-of-range values
    // clamp to the largest magnitude (float6 and float4 always clamp). Its lane kernel encodes each
    // scaled value as it is computed; the scaled values are never stored.
    let element_dtype = opts.format.element_dtype();
    let plan = Plan::new(DType::Float, element_dtype, &CastOptions::saturating(true))?;
    let encode = EncodeScaled { blocks: &blocks, element_dtype, scales, elements };
    plan.with_finite_lane_encoder(encode).unwrap_or_else(|| {
        Err(Error::InvalidOp {
            op: "MX quantize".into(),
            message: format!("no float32 lane kernel for FLOAT -> {element_dtype}"),
        })
    })
}

/// Where the blocks' values come from and how their scales are found: what every quantizing pass
/// over pieces of the input shares.
struct Blocks<'a> {
    g: &'a Geometry,
    src: &'a [u8],
    element: &'a ElementLimits,
    round: ScaleRound,
    /// Strided blocks: the factor of every block, computed beforehand.
    factors: Option<&'a [f32]>,
}

impl Blocks<'_> {
    /// `map` of the scaled values of elements `start..start + out.len()` into `out`; for blocks of
    /// consecutive elements, the scale of every block they touch is computed here and stored.
    #[inline(always)]
    fn scaled_piece<T: Copy>(&self, scales: &mut [u8], start: usize, out: &mut [T], map: impl Fn(f32) -> T) {
        match self.factors {
            Some(factors) => fill_strided(self.g, self.src, factors, start, out, map),
            None => fill_contiguous(self.g, self.src, self.element, self.round, scales, start, out, map),
        }
    }
}

/// The float element formats: each scaled value straight through the element plan's lane kernel,
/// piece by piece, then packed.
struct EncodeScaled<'a> {
    blocks: &'a Blocks<'a>,
    element_dtype: DType,
    scales: &'a mut [u8],
    elements: &'a mut [u8],
}

impl crate::kernels::WithLaneEncoder for EncodeScaled<'_> {
    type Output = Result<()>;
    #[inline(always)]
    fn run<E: crate::kernels::LaneEncoder>(self, encoder: &E) -> Result<()> {
        let EncodeScaled { blocks, element_dtype, scales, elements } = self;
        // Scaled values are finite (a block with a NaN or an infinity is written as zeros), the
        // lanes on which the kernel gives the plan's codes.
        let mut codes = vec![0u16; PIECE];
        let n = blocks.g.elements;
        let mut start = 0;
        while start < n {
            let len = PIECE.min(n - start);
            let codes = &mut codes[..len];
            blocks.scaled_piece(scales, start, codes, |x| encoder.encode_lane(x));
            let out = packing::raw_len(element_dtype, start)?..packing::raw_len(element_dtype, start + len)?;
            packing::pack_u16(element_dtype, codes, &mut elements[out]);
            start += len;
        }
        Ok(())
    }
}

/// MXINT8: the scaled value divided by its implicit 2^-6 (exact: a power of two), clamped to
/// [-128, 127] and rounded to nearest even by the plans' quantizing loop, piece by piece.
#[inline(always)]
fn quantize_int8(blocks: &Blocks, scales: &mut [u8], elements: &mut [u8]) -> Result<()> {
    let int8 = IntegerQuantizer::new(power_of_two(MXINT8_IMPLICIT_EXPONENT), 0, -128, 127, 0xFF)
        .expect("int8's bounds are exact in float32");
    let mut values = vec![[0u8; 4]; PIECE];
    let mut codes = vec![0u16; PIECE];
    let n = blocks.g.elements;
    let mut start = 0;
    while start < n {
        let len = PIECE.min(n - start);
        blocks.scaled_piece(scales, start, &mut values[..len], f32::to_le_bytes);
        int8.run(values[..len].as_flattened(), &mut codes[..len]);
        for (o, &c) in elements[start..start + len].iter_mut().zip(&codes[..len]) {
            *o = c as u8;
        }
        start += len;
    }
    Ok(())
}

/// The 16 codes 0..=15 packed as ONNX packs 4-bit elements (the low nibble first).
const NIBBLE_CODES_IN_ORDER: [u8; 8] = [0x10, 0x32, 0x54, 0x76, 0x98, 0xBA, 0xDC, 0xFE];

/// Elements per piece of the block loops: a multiple of 4, and small enough that a piece's scaled
/// values stay in the first-level cache.
const PIECE: usize = 2048;

fn check_input_dtype(dtype: DType) -> Result<()> {
    if matches!(dtype, DType::Float | DType::Float16 | DType::Bfloat16) {
        return Ok(());
    }
    Err(Error::UnsupportedDType {
        op: "MX quantize input",
        dtype: dtype.onnx_name(),
        why: "the input must be FLOAT, FLOAT16 or BFLOAT16",
    })
}

fn check_len(dtype: DType, n: usize, actual: usize) -> Result<()> {
    let expected = packing::raw_len(dtype, n)?;
    if actual != expected {
        return Err(Error::RawLength { dtype: dtype.onnx_name(), elements: n, expected, actual });
    }
    Ok(())
}

/// Dequantizes MX elements with their scales to a FLOAT tensor of the elements' shape.
pub fn dequantize(elements: &Tensor, scales: &Tensor, opts: &MxOptions) -> Result<Tensor> {
    const OP: &str = "MX dequantize";
    let g = Geometry::new(elements.shape(), opts.axis, opts.block_size, OP, "elements")?;
    let element_dtype = opts.format.element_dtype();
    if elements.dtype() != element_dtype {
        return Err(Error::InvalidOp {
            op: OP.into(),
            message: format!(
                "the elements are {}, but {} elements are {element_dtype}",
                elements.dtype(),
                opts.format.name()
            ),
        });
    }
    if scales.dtype() != DType::Float8E8M0 {
        return Err(Error::InvalidOp {
            op: OP.into(),
            message: format!("the scales are {}; MX scales are FLOAT8E8M0", scales.dtype()),
        });
    }
    let want = g.scales_shape(elements.shape());
    if scales.shape() != want.as_slice() {
        return Err(Error::InvalidOp {
            op: OP.into(),
            message: format!(
                "the scales have shape {}, but elements of shape {} in blocks of {} along axis {} need \
                 scales of shape {}",
                shown_shape(scales.shape()),
                shown_shape(elements.shape()),
                g.block,
                opts.axis,
                shown_shape(&want)
            ),
        });
    }
    let mut out = vec![0u8; packing::raw_len(DType::Float, g.elements)?];
    let (element_raw, scale_raw) =
        (elements.raw().expect("numeric tensors are raw"), scales.raw().expect("numeric tensors are raw"));
    dequantize_into(elements.shape(), element_raw, scale_raw, opts, &mut out)?;
    Tensor::from_raw(DType::Float, elements.shape().to_vec(), out)
}

/// [`dequantize`] on ONNX raw data into the caller's buffer: `elements` (packed, of `shape`),
/// `scales` (FLOAT8E8M0 codes in the scales' row-major order) and `out` (float32, little-endian).
/// Every length is checked.
pub fn dequantize_into(
    shape: &[usize],
    elements: &[u8],
    scales: &[u8],
    opts: &MxOptions,
    out: &mut [u8],
) -> Result<()> {
    let g = Geometry::new(shape, opts.axis, opts.block_size, "MX dequantize", "elements")?;
    let n = g.elements;
    let element_dtype = opts.format.element_dtype();
    check_len(element_dtype, n, elements.len())?;
    check_len(DType::Float8E8M0, g.scale_count, scales.len())?;
    check_len(DType::Float, n, out.len())?;
    // The scales' values, as the core decodes E8M0 (0x00 is 2^-127, 0xFF NaN).
    let mut decoded = vec![0u8; packing::raw_len(DType::Float, g.scale_count)?];
    Plan::new(DType::Float8E8M0, DType::Float, &CastOptions::default())?.run(scales, &mut decoded, g.scale_count)?;
    // MXINT8's implicit 2^-6 joins the scale: a power of two times a power of two of at least
    // 2^-133, exact in float32 (whose smallest subnormal is 2^-149); NaN stays NaN.
    let implicit = if opts.format == MxFormat::Int8 { power_of_two(MXINT8_IMPLICIT_EXPONENT) } else { 1.0 };
    let factors: Vec<f32> = decoded.chunks_exact(4).map(|b| f32_at(b) * implicit).collect();
    drop(decoded);
    let plan = Plan::new(element_dtype, DType::Float, &CastOptions::default())?;
    crate::kernels::simd::widest(DequantizeBlocks { g: &g, plan: &plan, elements, factors: &factors, out })
}

/// [`dequantize_into`] after the checks: elements through the plan, times their block's scale.
struct DequantizeBlocks<'a> {
    g: &'a Geometry,
    plan: &'a Plan,
    elements: &'a [u8],
    factors: &'a [f32],
    out: &'a mut [u8],
}

impl crate::kernels::simd::Kernel for DequantizeBlocks<'_> {
    type Output = Result<()>;
    #[inline(always)]
    fn run(self) -> Result<()> {
        let DequantizeBlocks { g, plan, elements, factors, out } = self;
        dequantize_blocks(g, plan, elements, factors, out)
    }
}

#[inline(always)]
fn dequantize_blocks(g: &Geometry, plan: &Plan, elements: &[u8], factors: &[f32], out: &mut [u8]) -> Result<()> {
    // One-byte elements in whole blocks of 32 that the plan decodes by arithmetic: decoded and
    // scaled in one loop, no value stored in between.
    if let Some(value) = plan.byte_code_value().filter(|_| g.whole_default_blocks(0, g.elements)) {
        const B: usize = DEFAULT_BLOCK_SIZE;
        let blocks = elements.chunks_exact(B).zip(out.chunks_exact_mut(4 * B));
        for ((codes, run), &f) in blocks.zip(factors) {
            let codes: &[u8; B] = codes.try_into().expect("B codes");
            let run: &mut [u8; 4 * B] = run.try_into().expect("4 * B bytes");
            for (d, &c) in run.chunks_exact_mut(4).zip(codes) {
                d.copy_from_slice(&product(value.value(u32::from(c)), f).to_le_bytes());
            }
        }
        return Ok(());
    }
    let element_dtype = plan.from();
    // Nibble-packed elements in whole blocks of 32: the 16 values (from the plan) in registers.
    if element_dtype.packing() == crate::dtype::Packing::Nibbles && g.whole_default_blocks(0, g.elements) {
        let mut values = [0u8; 64];
        plan.run(&NIBBLE_CODES_IN_ORDER, &mut values, 16)?;
        let values: [f32; 16] = core::array::from_fn(|c| f32_at(&values[4 * c..4 * c + 4]));
        if crate::kernels::simd::nibble_blocks_to_f32(&values, elements, factors, out) {
            return Ok(());
        }
    }
    let mut values = vec![0u8; 4 * PIECE];
    let mut start = 0;
    while start < g.elements {
        let len = PIECE.min(g.elements - start);
        let codes = &elements[packing::raw_len(element_dtype, start)?..packing::raw_len(element_dtype, start + len)?];
        plan.run(codes, &mut values[..4 * len], len)?;
        multiply(g, factors, start, &values[..4 * len], &mut out[start * 4..(start + len) * 4]);
        start += len;
    }
    Ok(())
}

/// How a tensor splits into blocks: `outer` slabs of `len` rows (the blocked axis) of `inner`
/// elements; each slab has `blocks` blocks of `block` rows (the last may be shorter).
#[derive(Clone, Copy, Debug)]
struct Geometry {
    outer: usize,
    len: usize,
    inner: usize,
    block: usize,
    blocks: usize,
    axis: usize,
    elements: usize,
    scale_count: usize,
}

impl Geometry {
    /// Checks the shape, axis and block size before anything is allocated.
    fn new(shape: &[usize], axis: i64, block: usize, op: &str, input: &str) -> Result<Geometry> {
        let invalid = |message: String| Error::InvalidOp { op: op.into(), message };
        if block == 0 {
            return Err(invalid("block_size must be at least 1; it is 0".into()));
        }
        let rank = shape.len();
        if rank == 0 {
            return Err(invalid(format!("{input} is a scalar (rank 0); MX blocks run along an axis")));
        }
        let rank_i = rank as i128;
        let a = i128::from(axis);
        if !(-rank_i..rank_i).contains(&a) {
            return Err(Error::OutOfRange {
                op: op.into(),
                what: format!("axis for {input} of rank {rank}"),
                value: a,
                low: -rank_i,
                high: rank_i - 1,
            });
        }
        let axis = if a < 0 { (a + rank_i) as usize } else { a as usize };
        let elements = element_count(shape)?;
        if elements == 0 {
            return Err(invalid(format!(
                "{input} has no elements (shape {}): there is no block to scale",
                shown_shape(shape)
            )));
        }
        // Factors of a nonzero product that fits: none of these overflow.
        let outer: usize = shape[..axis].iter().product();
        let inner: usize = shape[axis + 1..].iter().product();
        let len = shape[axis];
        let blocks = len.div_ceil(block);
        let scale_count = outer * blocks * inner;
        Ok(Geometry { outer, len, inner, block, blocks, axis, elements, scale_count })
    }

    /// Whether elements `start..start + len` are whole blocks of the spec's size along a contiguous
    /// axis whose every block is whole (the block loops then have a fixed shape).
    #[inline]
    fn whole_default_blocks(&self, start: usize, len: usize) -> bool {
        let whole = |k: usize| k % DEFAULT_BLOCK_SIZE == 0;
        self.inner == 1 && self.block == DEFAULT_BLOCK_SIZE && whole(self.len) && whole(start) && whole(len)
    }

    fn scales_shape(&self, shape: &[usize]) -> Vec<usize> {
        let mut s = shape.to_vec();
        s[self.axis] = self.blocks;
        s
    }

    /// For blocks of consecutive elements (`inner == 1`): the block holding element `i`.
    #[inline]
    fn contiguous_block(&self, i: usize) -> BlockCursor {
        let (row, within) = (i / self.len, i % self.len);
        let b = within / self.block;
        let start = row * self.len + b * self.block;
        let row_end = row * self.len + self.len;
        // Never `start + block`: a block size beyond the row (up to usize::MAX) is one block.
        let end = start + self.block.min(row_end - start);
        BlockCursor { block: row * self.blocks + b, in_row: b, start, end, row_end }
    }

    /// For strided blocks: the run of elements from `i` to the end of its row (of `inner`
    /// elements) or `end`, and the block of its first element; element `i + j` is in block
    /// `first + j`.
    #[inline]
    fn strided_run(&self, i: usize, end: usize) -> (usize, usize) {
        let q = i / self.inner;
        let (o, l) = (q / self.len, q % self.len);
        let run_end = ((q + 1) * self.inner).min(end);
        ((o * self.blocks + l / self.block) * self.inner + i % self.inner, run_end)
    }
}

/// A block of consecutive elements and where it sits, stepped from block to block without a
/// division.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct BlockCursor {
    /// The block's index (row-major over the scales).
    block: usize,
    /// Its index within its row.
    in_row: usize,
    start: usize,
    end: usize,
    row_end: usize,
}

impl BlockCursor {
    #[inline]
    fn advance(&mut self, g: &Geometry) {
        self.block += 1;
        self.in_row += 1;
        if self.in_row == g.blocks {
            self.in_row = 0;
            self.row_end += g.len;
        }
        self.start = self.end;
        self.end = self.start + g.block.min(self.row_end - self.start);
    }
}

/// What the scale computation needs of the element format.
struct ElementLimits {
    emax: i32,
    /// The largest element value's significand, with its leading one at bit 23 (as float32's).
    max_significand: u32,
}

impl ElementLimits {
    fn new(format: MxFormat) -> Result<ElementLimits> {
        let (emax, max_significand) = split_magnitude(format.element_max()?.to_bits());
        Ok(ElementLimits { emax, max_significand })
    }

    /// The E8M0 code of a block's scale from its largest magnitude's float32 bits (sign cleared).
    #[inline]
    fn scale_code(&self, amax_bits: u32, round: ScaleRound) -> u8 {
        if amax_bits >= F32_INFINITY_BITS {
            return NAN_SCALE_CODE;
        }
        if amax_bits == 0 {
            return MIN_SCALE_CODE;
        }
        let (exponent, significand) = split_magnitude(amax_bits);
        self.code_of(exponent, round == ScaleRound::Ceil && significand > self.max_significand)
    }

    #[inline]
    fn code_of(&self, exponent: i32, up: bool) -> u8 {
        // floor(log2(amax)) - emax puts amax / X in [2^emax, 2^(emax+1)); the element format's
        // largest value is m * 2^emax, so amax / X <= max exactly when amax's significand is at most
        // m's. Otherwise one more power of two makes amax / X < 2^emax <= max.
        let s = (exponent - self.emax + i32::from(up)).clamp(MIN_SCALE_EXPONENT, MAX_SCALE_EXPONENT);
        // E8M0's code of 2^s is s plus its bias (tests/mx.rs checks it against the core).
        (s + format::E8M0.bias) as u8
    }
}

/// floor(log2(x)) and the significand (leading one at bit 23) of a positive finite nonzero float32
/// given by its bits.
#[inline]
fn split_magnitude(bits: u32) -> (i32, u32) {
    let field = bits >> F32_FRACTION_BITS;
    if field != 0 {
        (field as i32 - F32_BIAS, bits & ((1 << F32_FRACTION_BITS) - 1) | 1 << F32_FRACTION_BITS)
    } else {
        // A subnormal: its leading bit at position p is 2^(p - 149).
        let top = 31 - bits.leading_zeros();
        (top as i32 + F32_MIN_EXPONENT, bits << (F32_FRACTION_BITS - top))
    }
}

/// 2^k as a float32, for k in [-149, 127] (exact: every such power of two is a float32).
#[inline]
fn power_of_two(k: i32) -> f32 {
    debug_assert!((F32_MIN_EXPONENT..=F32_BIAS).contains(&k));
    if k > -F32_BIAS {
        f32::from_bits(((k + F32_BIAS) as u32) << F32_FRACTION_BITS)
    } else {
        f32::from_bits(1 << (k - F32_MIN_EXPONENT))
    }
}

/// The factor that divides a block by its scale: `1 / X = 2^-s`, or NaN for the NaN scale.
///
/// Multiplying a float32 `v` by it is exact wherever the result matters: `s` is at least
/// `floor(log2(amax)) - emax`, so `|v / X| < 2^(emax + 1) <= 2^16` (no overflow); a result of at
/// least 2^-126 is a normal float32 and keeps all of `v`'s 24 significant bits; a result below
/// 2^-126 (which may be rounded) is far below half the smallest element (2^-17 for E5M2, the
/// smallest; 2^-7 for MXINT8 after its 2^6), so it becomes a zero of the same sign either way,
/// and the product keeps the sign.
#[inline]
fn inverse_scale(code: u8) -> f32 {
    if code == NAN_SCALE_CODE {
        f32::NAN
    } else {
        power_of_two(format::E8M0.bias - i32::from(code))
    }
}

/// Four bytes of a lane (a chunk of exactly 4).
#[inline(always)]
fn lane(b: &[u8]) -> [u8; 4] {
    b.try_into().expect("4 bytes")
}

#[inline(always)]
fn f32_at(b: &[u8]) -> f32 {
    f32::from_le_bytes(b.try_into().expect("4 bytes"))
}

/// The largest magnitude's bits over float32 little-endian bytes. Eight independent lanes of signed
/// maxima (the magnitudes fit an i32, and SSE2 has a signed compare but no unsigned one), so the
/// loop vectorises on any x86-64.
#[inline(always)]
fn amax_bits(src: &[u8]) -> u32 {
    const LANES: usize = 8;
    let lane = |b: &[u8]| i32::from_le_bytes(b.try_into().expect("4 bytes")) & F32_MAGNITUDE_MASK as i32;
    let mut acc = [0i32; LANES];
    let groups = src.chunks_exact(4 * LANES);
    let tail = groups.remainder().chunks_exact(4).fold(0, |m, b| m.max(lane(b)));
    for group in groups {
        for (a, b) in acc.iter_mut().zip(group.chunks_exact(4)) {
            let v = lane(b);
            *a = if v > *a { v } else { *a };
        }
    }
    acc.iter().fold(tail, |m, &a| m.max(a)) as u32
}

/// `x * factor`, or +0 in a NaN-scale block (factor NaN).
#[inline(always)]
fn scaled(x: f32, factor: f32) -> f32 {
    if factor.is_nan() {
        0.0
    } else {
        x * factor
    }
}

/// `map` of the scaled values of elements `start..start + out.len()` for blocks of consecutive
/// elements, computing (and storing) the scale of every block they touch from the whole block.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn fill_contiguous<T: Copy>(
    g: &Geometry,
    src: &[u8],
    element: &ElementLimits,
    round: ScaleRound,
    scales: &mut [u8],
    start: usize,
    out: &mut [T],
    map: impl Fn(f32) -> T,
) {
    // The spec's block size, every block whole: a loop of fixed shape (vectorised and unrolled,
    // no block cursor), since every block of the piece starts at a multiple of 32.
    if g.whole_default_blocks(start, out.len()) {
        return fill_whole_blocks(src, element, round, scales, start, out, map);
    }
    let end = start + out.len();
    let mut i = start;
    // Divisions once per piece; then block by block.
    let mut cursor = g.contiguous_block(i);
    while i < end {
        let code = element.scale_code(amax_bits(&src[cursor.start * 4..cursor.end * 4]), round);
        scales[cursor.block] = code;
        let run_end = cursor.end.min(end);
        scale_run(code, &src[i * 4..run_end * 4], &mut out[i - start..run_end - start], &map);
        i = run_end;
        if i < end {
            cursor.advance(g);
        }
    }
}

/// [`fill_contiguous`] where every block is the spec's 32 consecutive elements, `start` is the start
/// of one and `out` holds whole blocks.
#[inline(always)]
fn fill_whole_blocks<T: Copy>(
    src: &[u8],
    element: &ElementLimits,
    round: ScaleRound,
    scales: &mut [u8],
    start: usize,
    out: &mut [T],
    map: impl Fn(f32) -> T,
) {
    // Arrays of B lanes: loops of a constant trip count (unrolled, no remainder).
    const B: usize = DEFAULT_BLOCK_SIZE;
    let blocks = src[start * 4..(start + out.len()) * 4].chunks_exact(4 * B).zip(out.chunks_exact_mut(B));
    for ((block, run), scale) in blocks.zip(&mut scales[start / B..]) {
        let block: &[u8; 4 * B] = block.try_into().expect("4 * B bytes");
        let run: &mut [T; B] = run.try_into().expect("B elements");
        // Signed maxima: the magnitudes fit an i32, and SSE2 (the portable build) compares signed.
        let amax = block.chunks_exact(4).fold(0, |m, b| m.max(i32::from_le_bytes(lane(b)) & F32_MAGNITUDE_MASK as i32));
        let code = element.scale_code(amax as u32, round);
        *scale = code;
        scale_run(code, block, run, &map);
    }
}

/// `map` of a run's values (`src`, float32 bytes) divided by the scale of `code` into `out`; a NaN
/// scale's run is `map(0.0)` throughout.
#[inline(always)]
fn scale_run<T: Copy>(code: u8, src: &[u8], out: &mut [T], map: &impl Fn(f32) -> T) {
    if code == NAN_SCALE_CODE {
        out.fill(map(0.0));
    } else {
        let factor = inverse_scale(code);
        for (d, s) in out.iter_mut().zip(src.chunks_exact(4)) {
            *d = map(f32::from_le_bytes(lane(s)) * factor);
        }
    }
}

/// Every scale of strided blocks (one pass over the input, row by row), and the factors that
/// divide by them.
#[inline(always)]
fn strided_scales(g: &Geometry, src: &[u8], element: &ElementLimits, round: ScaleRound, scales: &mut [u8]) -> Vec<f32> {
    let mut amax = vec![0u32; g.inner];
    let mut factors = vec![0f32; g.scale_count];
    for o in 0..g.outer {
        for b in 0..g.blocks {
            amax.fill(0);
            let rows = b * g.block..b * g.block + g.block.min(g.len - b * g.block);
            for l in rows {
                let at = (o * g.len + l) * g.inner * 4;
                for (m, s) in amax.iter_mut().zip(src[at..at + g.inner * 4].chunks_exact(4)) {
                    *m = (*m).max(u32::from_le_bytes([s[0], s[1], s[2], s[3]]) & F32_MAGNITUDE_MASK);
                }
            }
            let first = (o * g.blocks + b) * g.inner;
            for (j, &m) in amax.iter().enumerate() {
                let code = element.scale_code(m, round);
                scales[first + j] = code;
                factors[first + j] = inverse_scale(code);
            }
        }
    }
    factors
}

/// `map` of the scaled values of elements `start..start + out.len()` for strided blocks.
#[inline(always)]
fn fill_strided<T: Copy>(
    g: &Geometry,
    src: &[u8],
    factors: &[f32],
    start: usize,
    out: &mut [T],
    map: impl Fn(f32) -> T,
) {
    let end = start + out.len();
    let mut i = start;
    while i < end {
        let (first, run_end) = g.strided_run(i, end);
        let run = out[i - start..run_end - start].iter_mut().zip(src[i * 4..run_end * 4].chunks_exact(4));
        for ((d, s), &f) in run.zip(&factors[first..]) {
            *d = map(scaled(f32_at(s), f));
        }
        i = run_end;
    }
}

/// `x * f`; a NaN product is `x` if `x` is a NaN, else `f` (the NaN scale): the same bits on every
/// machine, whatever NaN the hardware's multiplication would give.
#[inline(always)]
fn product(x: f32, f: f32) -> f32 {
    let p = x * f;
    if p.is_nan() {
        if x.is_nan() {
            x
        } else {
            f
        }
    } else {
        p
    }
}

/// `x * X` ([`product`]) for decoded elements `start..` of `values`, into `out`.
#[inline(always)]
fn multiply(g: &Geometry, factors: &[f32], start: usize, values: &[u8], out: &mut [u8]) {
    if g.whole_default_blocks(start, values.len() / 4) {
        // Loops of fixed trip count, as in `fill_whole_blocks`.
        const B: usize = DEFAULT_BLOCK_SIZE;
        let blocks = values.chunks_exact(4 * B).zip(out.chunks_exact_mut(4 * B));
        for ((block, run), &f) in blocks.zip(&factors[start / B..]) {
            let block: &[u8; 4 * B] = block.try_into().expect("4 * B bytes");
            let run: &mut [u8; 4 * B] = run.try_into().expect("4 * B bytes");
            for (d, s) in run.chunks_exact_mut(4).zip(block.chunks_exact(4)) {
                d.copy_from_slice(&product(f32::from_le_bytes(lane(s)), f).to_le_bytes());
            }
        }
        return;
    }
    let end = start + values.len() / 4;
    let mut i = start;
    let mut cursor = g.contiguous_block(if g.inner == 1 { i } else { 0 });
    while i < end {
        let (o, v) = (&mut out[(i - start) * 4..], &values[(i - start) * 4..]);
        if g.inner == 1 {
            let run_end = cursor.end.min(end);
            let f = factors[cursor.block];
            for (d, s) in o[..(run_end - i) * 4].chunks_exact_mut(4).zip(v.chunks_exact(4)) {
                d.copy_from_slice(&product(f32_at(s), f).to_le_bytes());
            }
            i = run_end;
            if i < end {
                cursor.advance(g);
            }
        } else {
            let (first, run_end) = g.strided_run(i, end);
            let run = o[..(run_end - i) * 4].chunks_exact_mut(4).zip(v.chunks_exact(4)).zip(&factors[first..]);
            for ((d, s), &f) in run {
                d.copy_from_slice(&product(f32_at(s), f).to_le_bytes());
            }
            i = run_end;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn powers_of_two() {
        for k in F32_MIN_EXPONENT..=F32_BIAS {
            assert_eq!(f64::from(power_of_two(k)), 2f64.powi(k), "{k}");
        }
    }

    #[test]
    fn split() {
        // 100 = 1.5625 * 2^6; 2^-149 (bits 1); 3 * 2^-149 = 1.5 * 2^-148.
        assert_eq!(split_magnitude(100f32.to_bits()), (6, 0xC8_0000));
        assert_eq!(split_magnitude(1), (-149, 0x80_0000));
        assert_eq!(split_magnitude(3), (-148, 0xC0_0000));
    }

    #[test]
    fn geometry() {
        let g = Geometry::new(&[2, 5], -1, 2, "t", "x").unwrap();
        assert_eq!((g.outer, g.len, g.inner, g.blocks, g.scale_count), (2, 5, 1, 3, 6));
        // Element 9 is row 1, position 4: the short block 2 of row 1 (block 5), elements 9..10.
        let c = g.contiguous_block(9);
        assert_eq!((c.block, c.start, c.end), (5, 9, 10));
        // Stepping from block 0 visits every block in order with its elements.
        let mut c = g.contiguous_block(0);
        let mut seen = vec![(c.block, c.start, c.end)];
        for _ in 0..5 {
            c.advance(&g);
            seen.push((c.block, c.start, c.end));
        }
        assert_eq!(seen, [(0, 0, 2), (1, 2, 4), (2, 4, 5), (3, 5, 7), (4, 7, 9), (5, 9, 10)]);
        let g = Geometry::new(&[2, 5, 3], 1, 2, "t", "x").unwrap();
        // Element 20 is (1, 1, 2): block (1, 0, 2) = 1 * 3 * 3 + 0 + 2; its row ends at 21.
        assert_eq!(g.strided_run(20, 30), (11, 21));
    }
}
