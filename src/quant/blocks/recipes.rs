//! The recipe table: one row per implementation's way of quantizing blocks. Every field is a
//! choice the implementation makes, named by what it computes; the engine reads the row and has no
//! branch on a recipe's name. `docs/research/block_recipes.md` gives each fact's source.

use crate::dtype::DType;
use crate::Profile;

/// Where an implementation's facts were read and which script checks lowbit against it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Source {
    /// The package or project.
    pub implementation: &'static str,
    /// The version (or source commit) whose behaviour the row reproduces.
    pub version: &'static str,
    /// The functions that compute it.
    pub functions: &'static str,
    /// The script that compares lowbit with the implementation (or made the fixtures it is
    /// tested against).
    pub checked_by: &'static str,
}

/// How many elements share one scale.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum BlockShape {
    /// `n` consecutive elements along the blocked axis.
    Row(usize),
    /// `rows x cols` tiles over the last two axes (2-D tensors).
    Tile(usize, usize),
    /// The whole row along the blocked axis (one scale per channel).
    Channel,
    /// The whole tensor (one scale).
    Tensor,
}

/// What a block's stored scale is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ScaleFormat {
    /// FLOAT8E8M0 codes (a power of two, 0xFF NaN).
    E8M0,
    /// FLOAT8E4M3FN codes (NVFP4's block scale; only positive values occur).
    E4M3,
    /// ggml's UE4M3 bytes (its own decoding: 0x00 and 0x7F are 0, bit 7 ignored).
    GgmlUe4m3,
    /// float16 through the rounding core (gguf-py's numpy `astype(float16)` of ggml's `d`: a NaN
    /// keeps its sign and top payload bits).
    Float16,
    /// float16 by ggml's own conversion (`ggml_compute_fp32_to_fp16`, ggml-impl.h: ggml's `d`):
    /// round to nearest even as [`ScaleFormat::Float16`], but every NaN becomes 0x7E00 with its
    /// sign, its payload dropped (observed live: 0x7FE5A5A5 gives 0x7E00 where numpy gives 0x7F2D).
    GgmlFloat16,
    /// float32.
    Float32,
    /// The input's dtype (float32, bfloat16 or float16): the implementation computes the scale in it.
    InputDtype,
}

/// How the largest magnitude of a block is taken.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Amax {
    /// `max(|x|)` with a NaN anywhere giving NaN (torch's `amax`).
    NanPropagating,
    /// A running `|x| > m` from 0: a NaN never wins (ggml's strict greater-than).
    NanSkipped,
    /// ggml's `MAX(m, |x|)` macro, `m > |x| ? m : |x|` from 0: a NaN replaces the running value
    /// and the next element replaces the NaN, so only a NaN in last place counts.
    RunningMax,
    /// The signed value of largest magnitude, the first on equal magnitudes, a NaN never wins
    /// (ggml Q4_0).
    SignedLargest,
    /// numpy's `take_along_axis(x, argmax(|x|))` (gguf-py's Q4_0): the signed value of largest
    /// magnitude, the first on equal magnitudes, the first NaN beating every number (taken with
    /// its sign and payload), and the first element where every magnitude is 0 (a block of zeros
    /// led by -0.0 gives -0.0).
    SignedArgmax,
}

impl Amax {
    /// Whether the rule takes the signed value it found (ggml Q4_0's `max`), not a magnitude.
    pub(crate) fn signed(self) -> bool {
        matches!(self, Amax::SignedLargest | Amax::SignedArgmax)
    }
}

/// How the block's scale code is made from its amax (and the per-tensor scale).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ScaleRule {
    /// OCP MX, computed by `quant::mx` (the scheme's `scale=` option decides floor or ceil).
    OcpMx,
    /// E8M0 from the bits of the float32 amax: exponent field minus 127 (`Pow2`), minus the
    /// element's largest exponent `emax`, clamped to [-127, 128], plus 127; NaN amax -> 0xFF.
    Exponent {
        /// How the power of two is taken from the bits.
        pow2: Pow2,
        /// The element format's largest power of two.
        emax: i32,
    },
    /// `ceil(log2(amax / max_element))` with float32 division and a float32 `log2`, clamped to
    /// [-127, 127] + 127; NaN -> 0xFF, Inf -> 0xFE.
    ReciprocalCeil {
        /// The element format's largest value.
        max_element: f32,
    },
    /// ggml MXFP4: `floor(log2f(amax)) - 2 + 127` when amax > 0, else 0.
    GgmlLog2Floor,
    /// compressed-tensors MX (`generate_mx_scales`, `compress_mx_scale`): the bits of amax in the
    /// compute dtype (float32, bfloat16 or float16: `m` fraction bits) plus `1 << (m - mbits - 1)`
    /// in int32, sign and exponent kept (`round_to_power_2`; a float16 subnormal amax gives 0);
    /// `code = clamp(127 + floor(log2(.)) - emax, 0, 255)` (0 -> -Inf -> 0); the element divisor
    /// `2^(code - 127)` in the compute dtype (255, reached only by a carry into Inf: +Inf), a
    /// divisor that is 0 there (float16 below 2^-24) replaced by `zero_divisor`; the stored byte
    /// `127 + (int32)floor(log2(divisor))` as uint8, where x86 converts Inf to 0x80000000: 0x7F.
    PowerOfTwoLog2 {
        /// The element format's mantissa bits (the rounding of amax).
        mbits: u32,
        /// The element format's largest power of two.
        emax: i32,
        /// What a divisor that is zero in the compute dtype becomes (compressed-tensors'
        /// `calculate_qparams`: `_get_dtype_eps` of the uint8 scale dtype, 1).
        zero_divisor: f32,
    },
    /// `amax / divisor` (after the per-tensor step of [`GlobalRule`]), then the clamps of
    /// `clamp`, then the cast to the scale format; zero replaced by `zero_scale`.
    Divide {
        /// 6 for E2M1 elements, 448 for E4M3, 127 for Q8_0, -8 for Q4_0.
        divisor: f32,
        /// Clamp bounds applied before the cast (NaN passes).
        clamp: Option<(f32, f32)>,
        /// A scale equal to zero before the clamp becomes this (ModelOpt's 1.0).
        zero_before_cast: Option<f32>,
        /// A scale equal to zero after the cast becomes this (compressed-tensors' 0.125 and
        /// `finfo.eps`: see [`ZeroScale`]).
        zero_after_cast: ZeroScale,
        /// DeepSeek's `ue8m0`: the scale rounded up to a power of two (`exp2(ceil(log2 s))`).
        pow2_ceil: bool,
        /// DeepSeek's `amax = max(amax, 1e-4)` before the division.
        amax_floor: Option<f32>,
    },
}

/// A scale that comes out zero is replaced by...
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ZeroScale {
    /// ... nothing: it stays zero.
    Keep,
    /// ... this value.
    Value(f32),
    /// ... the compute dtype's machine epsilon (`torch.finfo(dtype).eps`: 2^-23 float32, 2^-7
    /// bfloat16).
    DtypeEps,
}

/// How `Exponent` takes the power of two from float32 bits.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Pow2 {
    /// The exponent field (torchao `floor`).
    Floor,
    /// Plus one when the mantissa field is not zero (torchao `ceil`).
    Ceil,
    /// The bits rounded at `mbits` mantissa bits first, `1 << (23 - mbits - 1)` added and the
    /// mantissa masked off (torchao `even`).
    Even {
        /// The element format's mantissa bits.
        mbits: u32,
    },
}

/// The second-level (per-tensor) scale.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum GlobalRule {
    /// No per-tensor scale.
    None,
    /// A decode scale `G` = amax(tensor) / 2688 when asked (`global=amax` or a given value),
    /// block scale `(amax_b / 6) / G`, element factor `(1 / G) / s` (torchao).
    TorchaoDecode,
    /// A decode scale `G` = amax(tensor) / 2688, always; block scale `amax_b / (6 * G)`, element
    /// divisor `s * G` (ModelOpt).
    ModeloptDecode,
    /// An encode scale `G` = 2688 / max(amax(tensor), tiny) in the input dtype, NaN/Inf -> 1,
    /// computed as torch computes `scalar / tensor`: the reciprocal, rounded, times 2688;
    /// block scale `(amax_b / 6) * G`, element divisor `s / G` (compressed-tensors).
    CompressedTensorsEncode,
}

/// How a block's elements are scaled before they are rounded.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ElementStep {
    /// `x / X` with X the decoded scale, but not below `min_divisor` (torchao's
    /// `F32_MIN_NORMAL` clamp; 0 for none).
    Divide {
        /// The smallest divisor.
        min_divisor: f32,
    },
    /// `x * 2^(127 - code)` (0xFF: NaN, 0xFE: 2^-127, 0x00: 1.0), torchao `rceil`.
    ReciprocalPow2,
    /// `x * (1 / X)` with the float32 reciprocal of the decoded scale (torchao NVFP4, ggml).
    Reciprocal,
    /// The per-tensor rule decides ([`GlobalRule`]).
    Global,
}

/// How a scaled value becomes an element code.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ElementRound {
    /// The ONNX Cast from float32 to the element type (nearest even, saturating), after a clamp
    /// to +-`clamp` where given.
    Cast {
        /// Clamp before the cast (torchao's FP8 clamp, NVFP4's +-6).
        clamp: Option<f32>,
        /// The scaled value rounded to the compute dtype first (bfloat16 input under
        /// compressed-tensors).
        in_compute_dtype: bool,
        /// `-0.0` (an exact negative zero after scaling) becomes +0 (compressed-tensors adds its
        /// zero point, ModelOpt takes the sign from `x < 0`).
        negative_zero_to_positive: bool,
        /// What a NaN scaled value gives.
        nan: NanElement,
        /// The code is cast to the input dtype and back after the cast (compressed-tensors'
        /// `round_to_quantized_type_args` returns `rounded.to(original_dtype)`, which `quantize`
        /// casts to FLOAT8E4M3FN again): a NaN code takes the round trip's NaN (torch: bfloat16
        /// 0x7FC0, so 0x7F whatever the sign), every other code comes back as it was.
        through_input_dtype: bool,
    },
    /// ggml: the index of the nearest of the 16 E2M1 values, the first on a tie (so ties go
    /// toward zero and a zero result is +0); NaN and Inf give 0.
    NearestIndexFirstTie {
        /// The error `kvalue * d - x` is one fused multiply-add (a build of ggml that contracts
        /// it: gcc -O2 -march=native on an FMA CPU); else the product is rounded first, and a
        /// product that overflows float32 makes its error infinite.
        fused: bool,
    },
    /// ggml Q8_0: `roundf` (nearest, ties away from zero), then C's conversion to `int8_t` as
    /// x86-64 makes it (`cvttss2si`: NaN and the infinities give the "integer indefinite"
    /// 0x80000000, whose low byte 0 is kept; a finite value beyond int8 wraps modulo 256, as a
    /// block whose NaN hid a larger magnitude from ggml's running maximum gives).
    IntegerTiesAway,
    /// ggml Q4_0: `MIN(15, (int8_t)(x + 8.5f))`, the sum rounded in float32 and converted as
    /// x86-64 converts it (NaN and the infinities: 0): the nibble.
    IntegerOffsetTruncate {
        /// `x * id + 8.5f` is one fused multiply-add, rounded once (a build of ggml that
        /// contracts it: gcc -march=native on an FMA CPU, at -O2 and -O3); else the product is
        /// rounded first.
        fused: bool,
    },
}

/// The element code a NaN gets.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum NanElement {
    /// The cast's NaN (float8: the NaN code with the sign; float4/float6 have none: 0).
    Cast,
    /// This code (ModelOpt's `searchsorted`: 7), with the NaN's sign bit.
    Code(u8),
    /// This magnitude code, with the sign of the NaN the implementation stores in the input dtype
    /// before it packs its values by their sign bit: positive in float32, the sign of the row's
    /// `nan.bfloat16` in bfloat16 (compressed-tensors: see its row).
    StoredNan(u8),
    /// torchao's `_f32_to_floatx_unpacked` bit arithmetic on the NaN's bits: a NaN scale factor's
    /// bits where the factor is NaN (an E4M3 NaN scale decodes, as torch decodes it, to
    /// 0x7FF00000 with its sign), else the element's own.
    TorchaoBits,
}

/// Which NaN an implementation's product of an element value and its block's factor keeps when
/// both are NaN (one NaN: that one, quieted; none, but 0 times infinity: x86-64's default NaN
/// 0xFFC00000).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ProductNan {
    /// The element's (x86-64's rule for `value * factor` as written: the first operand).
    Element,
    /// The factor's: torch 2.15's float32 `mul` kernel on x86-64 (AVX2 and AVX-512 builds) keeps
    /// its second operand's NaN over the whole vectorized loop, which covers every block length
    /// that is a multiple of 16 (observed; its scalar tail of a broadcast loop can keep the
    /// first).
    Factor,
}

/// How elements and scales become values again.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Dequantize {
    /// `element * X` in float32 (X the decoded scale; times `G` first with a decode global).
    Multiply,
    /// As `Multiply`, but the E2M1 code 8 is +0 (ModelOpt's value table holds `-0` as the
    /// integer 0, so a negative-zero element dequantizes to +0).
    MultiplyNegativeZeroAsPositive,
    /// `element * (X / G)` with an encode global (`element * X` without one), result rounded
    /// to bfloat16 (compressed-tensors' decompress).
    DivideGlobalToBf16,
    /// `element * X` rounded to the compute dtype (compressed-tensors FP8 `q.to(scale dtype) *
    /// scale`).
    MultiplyInComputeDtype,
    /// ggml Q4_0: `(nibble - 8) * d`.
    OffsetNibble,
    /// ggml MXFP4/NVFP4: the doubled E2M1 value times half the scale.
    GgmlHalfScale,
}

/// What an input whose blocked axis is not a whole number of blocks gets.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ShortBlock {
    /// A block of its own.
    OwnBlock,
    /// An error quoting the implementation's rule.
    Refuse(&'static str),
}

/// How `to_bytes` lays the quantized tensor out.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Layout {
    /// The elements packed as ONNX packs the element type, then the scales (one byte per code,
    /// or little-endian float16/bfloat16/float32 values), then the per-tensor scale (float32 LE)
    /// where there is one.
    Onnx,
    /// ggml's `block_q8_0` (float16 `d`, 32 int8).
    GgmlQ8_0,
    /// ggml's `block_q4_0` (float16 `d`, 16 bytes: element j low nibble, j + 16 high).
    GgmlQ4_0,
    /// ggml's `block_mxfp4` (E8M0 `e`, 16 bytes: element j low nibble, j + 16 high).
    GgmlMxfp4,
    /// ggml's `block_nvfp4` (4 UE4M3 bytes, 32 bytes: sub-block s in bytes 8s..8s+7, element j of
    /// it low, j + 8 high).
    GgmlNvfp4,
}

/// The NaN bits an implementation's arithmetic writes, where they are not the operands' (each
/// observed on x86-64; `docs/research/block_recipes.md`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NanRules {
    /// Which NaN a dequantized product of two NaNs keeps.
    pub product: ProductNan,
    /// Where a NaN per-tensor scale meets a NaN block scale: `(step, period)` of torch's
    /// vector-times-0-dim multiply over the N block scales, which keeps the per-tensor scale's NaN
    /// except in the last `(r - 1) % period` products, `r = N % step` (none when `r` is 0), which
    /// keep the block scale's (engine's `global_tail_nans`; `(0, 0)`: no such multiply).
    pub global_tail: (usize, usize),
    /// How many blocks torch's vectorized elementwise max takes at once, per input dtype, where
    /// the implementation takes its block maxima through one (`torch.maximum(|min|, |max|)` of
    /// the per-block minima and maxima: compressed-tensors' `calculate_qparams`, ModelOpt's
    /// `reduce_amax`): a NaN block maximum then has every bit set in the vectorized part and is
    /// positive in the scalar tail (`rules::nan_amax_bits`); also the lanes of its bfloat16
    /// multiply's vector loop. Empty: torch's reductions' positive NaN, or the implementation's
    /// own maximum.
    pub lanes: &'static [(DType, usize)],
    /// The bits every NaN gets where the implementation rounds float32 values to bfloat16 (its
    /// bfloat16 arithmetic and stores); None: the rounding core's NaN.
    pub bfloat16: Option<u16>,
    /// torch's float16 multiply of the elements (cast to float16) by a broadcast float16 scale,
    /// on x86-64: where both are NaN, which one each product keeps, by its place in the inner
    /// loop of `n` products that share one scale (`L` here; 0: no such rule, the row's
    /// `product` everywhere). Whole chunks of `2L` keep the element's NaN in their first `L`
    /// products and the scale's in the last `L`; past the last whole chunk the first product
    /// keeps the scale's and the others the element's; a one-product loop (a scale per element)
    /// keeps the element's; one scale for the whole tensor keeps the scale's everywhere
    /// (observed with torch 2.15: `tests/data/blocks` `edge_f16` cases, `fp8:*` rows).
    pub float16_broadcast_lanes: usize,
}

/// Arithmetic that keeps the operands' NaNs in the order written (ggml's C, the OCP rule).
const AS_WRITTEN: NanRules = NanRules {
    product: ProductNan::Element,
    global_tail: (0, 0),
    lanes: &[],
    bfloat16: None,
    float16_broadcast_lanes: 0,
};

/// torch 2.15's elementwise max on x86-64 (AVX2 and AVX-512 dispatch: the same counts observed)
/// takes 16 float32 or 32 bfloat16 values per vectorized step.
pub(crate) const TORCH_LANES: &[(DType, usize)] = &[(DType::Float, 16), (DType::Bfloat16, 32), (DType::Float16, 32)];
/// torch 2.15's float32 -> bfloat16 conversion on its AVX2 and AVX-512 dispatch (ATen's vectorized
/// cvtfp32_bf16, every length) writes each NaN as 0xFFFF; under ATEN_CPU_CAPABILITY=default,
/// 0x7FC0 (observed).
pub(crate) const TORCH_BFLOAT16_NAN: u16 = 0xFFFF;

/// torch's multiply (torchao MX, the DeepSeek transcription): the second operand's NaN.
const TORCH: NanRules = NanRules { product: ProductNan::Factor, ..AS_WRITTEN };
/// torch's multiply by a 0-dim per-tensor scale as well (torchao NVFP4).
const TORCH_PER_TENSOR: NanRules = NanRules { global_tail: (16, 4), ..TORCH };
/// ModelOpt: block maxima through torch's vectorized max, and the per-tensor multiply.
const MODELOPT: NanRules = NanRules { lanes: TORCH_LANES, ..TORCH_PER_TENSOR };
/// compressed-tensors: block maxima through torch's vectorized max, bfloat16 arithmetic.
const COMPRESSED_TENSORS: NanRules =
    NanRules { lanes: TORCH_LANES, bfloat16: Some(TORCH_BFLOAT16_NAN), float16_broadcast_lanes: 16, ..TORCH };

/// One recipe: a named set of choices (module docs).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Recipe {
    /// The scheme's name without options (`torchao:mxfp4`).
    pub family: &'static str,
    /// The options the name takes, as text (`scale=floor|ceil|even|rceil`).
    pub options: &'static str,
    /// The element's ONNX type (ggml Q8_0: INT8; Q4_0: UINT4, the stored nibble).
    pub element: DType,
    /// The default block.
    pub block: BlockShape,
    /// The stored scale.
    pub scale: ScaleFormat,
    /// The block maximum.
    pub amax: Amax,
    /// The scale rule.
    pub scale_rule: ScaleRule,
    /// The per-tensor scale.
    pub global: GlobalRule,
    /// Scaling of the elements.
    pub step: ElementStep,
    /// Rounding of the elements.
    pub round: ElementRound,
    /// Back to values.
    pub dequantize: Dequantize,
    /// Short last blocks.
    pub short_block: ShortBlock,
    /// `to_bytes`.
    pub layout: Layout,
    /// Input dtypes the implementation takes beyond float32 (bfloat16, float16).
    pub inputs: &'static [DType],
    /// Whose casts the row's element and scale conversions are, both ways (the NaN codes and
    /// payloads they write): `torch` where the implementation calls torch's `Tensor.to`.
    pub profile: Profile,
    /// The NaN bits the implementation's arithmetic writes ([`NanRules`]).
    pub nan: NanRules,
    /// Where the facts come from.
    pub source: Source,
}

const TORCHAO: &str = "torchao";
const TORCHAO_V: &str = "0.18.0";
const FIXTURES: &str = "scripts/gen_block_fixtures.py (tests/data/blocks)";
const F32_MIN_NORMAL: f32 = 1.1754944e-38;
const E4M3_MAX: f32 = 448.0;
/// torchao 0.18's MX and NVFP4 quantizers assert bfloat16 or float32 (`to_mx`: "torch.float16 is
/// not supported yet"; `nvfp4_quantize`: "torch.float16 not supported"; recorded as refusals by
/// scripts/gen_block_fixtures.py).
const TORCH_FLOATS: &[DType] = &[DType::Bfloat16];
/// Implementations that take float16 as well (each recorded on float16 input by
/// scripts/gen_block_fixtures.py).
const ALL_FLOATS: &[DType] = &[DType::Bfloat16, DType::Float16];

const TORCHAO_MX_SHORT: ShortBlock =
    ShortBlock::Refuse("torchao's to_mx asserts the last dimension is divisible by block_size 32");

/// A torchao MX row (floor/ceil/even/rceil differ in `scale_rule` and `step` only).
const fn torchao_mx(
    family: &'static str,
    element: DType,
    scale_rule: ScaleRule,
    step: ElementStep,
    clamp: Option<f32>,
) -> Recipe {
    Recipe {
        family,
        options: "scale=floor|ceil|even|rceil",
        element,
        block: BlockShape::Row(32),
        scale: ScaleFormat::E8M0,
        amax: Amax::NanPropagating,
        scale_rule,
        global: GlobalRule::None,
        step,
        round: ElementRound::Cast {
            clamp,
            in_compute_dtype: false,
            negative_zero_to_positive: false,
            nan: if matches!(element.bits(), Some(8)) { NanElement::Cast } else { NanElement::TorchaoBits },
            through_input_dtype: false,
        },
        dequantize: Dequantize::Multiply,
        short_block: TORCHAO_MX_SHORT,
        layout: Layout::Onnx,
        inputs: TORCH_FLOATS,
        profile: Profile::Torch,
        nan: TORCH,
        source: Source {
            implementation: TORCHAO,
            version: TORCHAO_V,
            functions: "torchao.prototype.mx_formats.mx_tensor.to_mx / to_dtype",
            checked_by: FIXTURES,
        },
    }
}

/// The torchao MX element formats: name, ONNX type, largest value, largest exponent, mantissa
/// bits, and whether torchao clamps before its cast (FP8) or its own cast saturates (FP6/FP4).
pub(crate) const TORCHAO_MX_ELEMENTS: [(&str, DType, f32, i32, u32); 5] = [
    ("mxfp8e4m3", DType::Float8E4M3FN, 448.0, 8, 3),
    ("mxfp8e5m2", DType::Float8E5M2, 57344.0, 15, 2),
    ("mxfp6e2m3", DType::Float6E2M3, 7.5, 2, 3),
    ("mxfp6e3m2", DType::Float6E3M2, 28.0, 4, 2),
    ("mxfp4", DType::Float4E2M1, 6.0, 2, 1),
];

/// torchao's row for one element format and scale mode (`floor`, `ceil`, `even`, `rceil`).
pub(crate) fn torchao_mx_row(element_index: usize, mode: &str) -> Option<Recipe> {
    let (_, dtype, max, emax, mbits) = TORCHAO_MX_ELEMENTS[element_index];
    let family = ["torchao:mxfp8e4m3", "torchao:mxfp8e5m2", "torchao:mxfp6e2m3", "torchao:mxfp6e3m2", "torchao:mxfp4"]
        [element_index];
    // FP8: `clamp(x / X, -max, max)` before torch's cast; FP6/FP4: the custom cast saturates.
    let clamp = if matches!(dtype.bits(), Some(8)) { Some(max) } else { None };
    let divide = ElementStep::Divide { min_divisor: F32_MIN_NORMAL };
    let (rule, step) = match mode {
        "floor" => (ScaleRule::Exponent { pow2: Pow2::Floor, emax }, divide),
        "ceil" => (ScaleRule::Exponent { pow2: Pow2::Ceil, emax }, divide),
        "even" => (ScaleRule::Exponent { pow2: Pow2::Even { mbits }, emax }, divide),
        "rceil" => (ScaleRule::ReciprocalCeil { max_element: max }, ElementStep::ReciprocalPow2),
        _ => return None,
    };
    Some(torchao_mx(family, dtype, rule, step, clamp))
}

const NVFP4_CAST: ElementRound = ElementRound::Cast {
    clamp: Some(6.0),
    in_compute_dtype: false,
    negative_zero_to_positive: false,
    nan: NanElement::TorchaoBits,
    through_input_dtype: false,
};

/// The rows that are not torchao MX (which [`torchao_mx_row`] builds) nor OCP MX.
pub(crate) const RECIPES: &[Recipe] = &[
    Recipe {
        family: "ocp",
        options: "mxfp8e4m3|mxfp8e5m2|mxfp6e2m3|mxfp6e3m2|mxfp4|mxint8[,block=N][,scale=floor|ceil]",
        element: DType::Float4E2M1, // replaced by the MX format's element type
        block: BlockShape::Row(32),
        scale: ScaleFormat::E8M0,
        amax: Amax::NanPropagating,
        scale_rule: ScaleRule::OcpMx,
        global: GlobalRule::None,
        step: ElementStep::Divide { min_divisor: 0.0 },
        round: ElementRound::Cast {
            clamp: None,
            in_compute_dtype: false,
            negative_zero_to_positive: false,
            nan: NanElement::Cast,
            through_input_dtype: false,
        },
        dequantize: Dequantize::Multiply,
        short_block: ShortBlock::OwnBlock,
        layout: Layout::Onnx,
        inputs: ALL_FLOATS,
        profile: Profile::Spec,
        nan: AS_WRITTEN,
        source: Source {
            implementation: "OCP Microscaling Formats (MX) v1.0 (lowbit quant::mx)",
            version: "1.0",
            functions: "section 6.3",
            checked_by: "scripts/crosscheck_mx.py (Graphcore gfloat)",
        },
    },
    Recipe {
        family: "torchao:nvfp4",
        options: "[,global=amax]",
        element: DType::Float4E2M1,
        block: BlockShape::Row(16),
        scale: ScaleFormat::E4M3,
        amax: Amax::NanPropagating,
        scale_rule: ScaleRule::Divide {
            divisor: 6.0,
            // E4M3_EPS = torch.finfo(float8_e4m3fn).tiny = 2^-6, the smallest normal.
            clamp: Some((0.015625, E4M3_MAX)),
            zero_before_cast: None,
            zero_after_cast: ZeroScale::Keep,
            pow2_ceil: false,
            amax_floor: None,
        },
        global: GlobalRule::TorchaoDecode,
        step: ElementStep::Global,
        round: NVFP4_CAST,
        dequantize: Dequantize::Multiply,
        short_block: ShortBlock::Refuse("torchao's nvfp4_quantize asserts the K dim is divisible by block_size 16"),
        layout: Layout::Onnx,
        inputs: TORCH_FLOATS,
        profile: Profile::Torch,
        nan: TORCH_PER_TENSOR,
        source: Source {
            implementation: TORCHAO,
            version: TORCHAO_V,
            functions: "torchao.prototype.mx_formats.nvfp4_tensor.nvfp4_quantize, NVFP4Tensor.dequantize",
            checked_by: FIXTURES,
        },
    },
    Recipe {
        family: "modelopt:nvfp4",
        options: "",
        element: DType::Float4E2M1,
        block: BlockShape::Row(16),
        scale: ScaleFormat::E4M3,
        amax: Amax::NanPropagating,
        scale_rule: ScaleRule::Divide {
            divisor: 6.0,
            clamp: Some((0.001953125, E4M3_MAX)),
            zero_before_cast: Some(1.0),
            zero_after_cast: ZeroScale::Keep,
            pow2_ceil: false,
            amax_floor: None,
        },
        global: GlobalRule::ModeloptDecode,
        step: ElementStep::Global,
        round: ElementRound::Cast {
            clamp: Some(6.0),
            in_compute_dtype: false,
            negative_zero_to_positive: true,
            nan: NanElement::Code(7),
            through_input_dtype: false,
        },
        dequantize: Dequantize::MultiplyNegativeZeroAsPositive,
        short_block: ShortBlock::Refuse(
            "ModelOpt pads a short last block with zeros and its dequantize then fails to reshape",
        ),
        layout: Layout::Onnx,
        inputs: ALL_FLOATS,
        profile: Profile::Torch,
        nan: MODELOPT,
        source: Source {
            implementation: "nvidia-modelopt",
            version: "0.47.0",
            functions: "modelopt.torch.quantization.qtensor.nvfp4_tensor.NVFP4QTensor.quantize / dequantize",
            checked_by: FIXTURES,
        },
    },
    Recipe {
        family: "compressed-tensors:nvfp4",
        options: "",
        element: DType::Float4E2M1,
        block: BlockShape::Row(16),
        scale: ScaleFormat::E4M3,
        amax: Amax::NanPropagating,
        scale_rule: ScaleRule::Divide {
            divisor: 6.0,
            clamp: Some((-E4M3_MAX, E4M3_MAX)),
            zero_before_cast: None,
            zero_after_cast: ZeroScale::Value(0.125),
            pow2_ceil: false,
            amax_floor: None,
        },
        global: GlobalRule::CompressedTensorsEncode,
        step: ElementStep::Global,
        round: ElementRound::Cast {
            clamp: Some(6.0),
            in_compute_dtype: false,
            negative_zero_to_positive: true,
            // A NaN matches none of cast_to_fp4's thresholds (magnitude index 0) and leaves it
            // positive: `abs(x) * sign(x)` with torch.sign(NaN) = 0 keeps abs's positive NaN.
            // _process_quantization then stores the float32 result in the input dtype
            // (forward_helpers.py, `output.flatten(start_dim=-2).to(output_dtype)`): float32
            // keeps it positive, but torch's float32 -> bfloat16 `.to()` writes every NaN as
            // 0xFFFF on its AVX2 and AVX-512 dispatch (ATen's vectorized cvtfp32_bf16; 0x7FC0 only
            // under ATEN_CPU_CAPABILITY=default: `nan.bfloat16`), and pack_fp4_to_uint8 takes
            // torch.signbit: code 8 for bfloat16 input.
            nan: NanElement::StoredNan(0),
            through_input_dtype: false,
        },
        dequantize: Dequantize::DivideGlobalToBf16,
        short_block: ShortBlock::Refuse(
            "compressed-tensors requires the column count to be divisible by the group_size 16",
        ),
        layout: Layout::Onnx,
        inputs: ALL_FLOATS,
        profile: Profile::Torch,
        nan: COMPRESSED_TENSORS,
        source: Source {
            implementation: "compressed-tensors",
            version: "0.20.0",
            functions: "generate_gparam, calculate_qparams, quantize_and_pack_fp4, NVFP4PackedCompressor.decompress",
            checked_by: FIXTURES,
        },
    },
    Recipe {
        family: "compressed-tensors:mxfp4",
        options: "",
        element: DType::Float4E2M1,
        block: BlockShape::Row(32),
        scale: ScaleFormat::E8M0,
        amax: Amax::NanPropagating,
        scale_rule: ScaleRule::PowerOfTwoLog2 {
            mbits: 1,
            emax: 2,
            zero_divisor: 1.0,
        },
        global: GlobalRule::None,
        // x / 2^(code - 127) in the input dtype, no smallest divisor (2^-127 divides).
        step: ElementStep::Divide { min_divisor: 0.0 },
        round: ElementRound::Cast {
            clamp: Some(6.0),
            in_compute_dtype: true,
            negative_zero_to_positive: true,
            // As compressed-tensors:nvfp4: the same quantize, store and packer.
            nan: NanElement::StoredNan(0),
            through_input_dtype: false,
        },
        dequantize: Dequantize::DivideGlobalToBf16,
        short_block: ShortBlock::Refuse(
            "compressed-tensors requires the column count to be divisible by the group_size 32",
        ),
        layout: Layout::Onnx,
        inputs: ALL_FLOATS,
        profile: Profile::Torch,
        nan: COMPRESSED_TENSORS,
        source: Source {
            implementation: "compressed-tensors",
            version: "0.20.0",
            functions: "generate_mx_scales, calculate_qparams, quantize_and_pack_fp4, compress_mx_scale, MXFP4PackedCompressor.decompress",
            checked_by: FIXTURES,
        },
    },
    ggml_q8_0("ggml:q8_0", Amax::RunningMax, ScaleFormat::GgmlFloat16, GGML),
    ggml_q4_0("ggml:q4_0", CONTRACT, Amax::SignedLargest, ScaleFormat::GgmlFloat16, GGML),
    ggml_mxfp4("ggml:mxfp4", CONTRACT, Amax::NanSkipped, GGML),
    Recipe {
        family: "ggml:nvfp4",
        options: "",
        element: DType::Float4E2M1,
        block: BlockShape::Row(16),
        scale: ScaleFormat::GgmlUe4m3,
        amax: Amax::NanSkipped,
        scale_rule: ggml_divide(6.0),
        global: GlobalRule::None,
        step: ElementStep::Reciprocal,
        round: ElementRound::NearestIndexFirstTie { fused: false },
        dequantize: Dequantize::GgmlHalfScale,
        short_block: ShortBlock::Refuse("ggml's quantize_row_nvfp4_ref asserts the row is a multiple of 64"),
        layout: Layout::GgmlNvfp4,
        inputs: &[],
        profile: Profile::Spec,
        nan: AS_WRITTEN,
        source: GGML,
    },
    Recipe {
        family: "deepseek:fp8",
        options: "[,tile=128x128|1x128][,scale_fmt=ue8m0]",
        element: DType::Float8E4M3FN,
        block: BlockShape::Tile(128, 128),
        scale: ScaleFormat::Float32,
        amax: Amax::NanPropagating,
        scale_rule: ScaleRule::Divide {
            divisor: E4M3_MAX,
            clamp: None,
            zero_before_cast: None,
            zero_after_cast: ZeroScale::Keep,
            pow2_ceil: false,
            amax_floor: Some(1e-4),
        },
        global: GlobalRule::None,
        step: ElementStep::Divide { min_divisor: 0.0 },
        round: ElementRound::Cast {
            clamp: None,
            in_compute_dtype: false,
            negative_zero_to_positive: false,
            nan: NanElement::Cast,
            through_input_dtype: false,
        },
        dequantize: Dequantize::Multiply,
        short_block: ShortBlock::Refuse(
            "DeepSeek's act_quant asserts the last dimension is divisible by block_size 128",
        ),
        layout: Layout::Onnx,
        inputs: ALL_FLOATS,
        profile: Profile::Torch,
        nan: TORCH,
        source: Source {
            implementation: "DeepSeek-V3 inference/kernel.py (transcribed, not run: Triton needs CUDA)",
            version: "9b4e9788e4a3",
            functions: "act_quant_kernel, weight_dequant_kernel",
            checked_by: FIXTURES,
        },
    },
    Recipe {
        family: "fp8",
        options: "tensor|channel|group=N|block=N|block=MxN",
        element: DType::Float8E4M3FN,
        block: BlockShape::Tensor,
        scale: ScaleFormat::InputDtype,
        amax: Amax::NanPropagating,
        scale_rule: ScaleRule::Divide {
            divisor: E4M3_MAX,
            clamp: None,
            zero_before_cast: None,
            zero_after_cast: ZeroScale::DtypeEps,
            pow2_ceil: false,
            amax_floor: None,
        },
        global: GlobalRule::None,
        step: ElementStep::Divide { min_divisor: 0.0 },
        round: ElementRound::Cast {
            clamp: Some(E4M3_MAX),
            in_compute_dtype: true,
            negative_zero_to_positive: true,
            nan: NanElement::Cast,
            through_input_dtype: true,
        },
        dequantize: Dequantize::MultiplyInComputeDtype,
        short_block: ShortBlock::Refuse(
            "compressed-tensors requires the column count to be divisible by the group_size",
        ),
        layout: Layout::Onnx,
        inputs: ALL_FLOATS,
        profile: Profile::Torch,
        nan: COMPRESSED_TENSORS,
        source: Source {
            implementation: "compressed-tensors",
            version: "0.20.0",
            functions: "calculate_qparams, quantize, dequantize (float-quantized)",
            checked_by: FIXTURES,
        },
    },
    // gguf-py's numpy port of the same blocks, a producer of its own (convert_hf_to_gguf.py writes
    // Q8_0 with it): C's rows but for the block maximum (numpy's max and argmax let a NaN win;
    // argmax takes the first element of an all-zero block) and numpy's float16 cast of a NaN d
    // (payload kept). gguf has no NVFP4 quantizer.
    ggml_q8_0("gguf-py:q8_0", Amax::NanPropagating, ScaleFormat::Float16, GGUF_PY),
    ggml_q4_0("gguf-py:q4_0", "", Amax::SignedArgmax, ScaleFormat::Float16, GGUF_PY),
    ggml_mxfp4("gguf-py:mxfp4", "", Amax::NanPropagating, GGUF_PY),
];

/// ggml's option for a build that fuses multiply-adds (gcc's default `-ffp-contract=fast` with FMA
/// available): Q4_0's `x * id + 8.5f` and MXFP4's `kvalue * d - x` rounded once.
const CONTRACT: &str = "[,contract=fma]";

/// ggml's C reference as ggml-py 0.10.1 builds it (its vendored ggml 0.10.1, ggml-base compiled by
/// gcc for x86-64: SSE2, no FMA contraction), run live against lowbit.
const GGML: Source = Source {
    implementation: "ggml (ggml-quants.c, the C reference; built by ggml-py for x86-64)",
    version: "0.10.1 (ggml-py 0.10.1)",
    functions: "ggml_quantize_chunk (quantize_row_*_ref), dequantize_row_*",
    checked_by: "scripts/crosscheck_ggml.py",
};

/// gguf-py's numpy port of ggml's blocks (`gguf.quants`), which `convert_hf_to_gguf.py` uses.
const GGUF_PY: Source = Source {
    implementation: "gguf (gguf-py's numpy port of ggml's blocks)",
    version: "0.19.0 (numpy 2.4.6)",
    functions: "gguf.quants Q8_0 / Q4_0 / MXFP4 quantize_blocks, dequantize_blocks",
    checked_by: FIXTURES,
};

/// ggml's scale `amax / divisor` (Q8_0 127, Q4_0 -8, NVFP4 6), its elements multiplied by its
/// float32 reciprocal; nothing clamped or replaced.
const fn ggml_divide(divisor: f32) -> ScaleRule {
    ScaleRule::Divide {
        divisor,
        clamp: None,
        zero_before_cast: None,
        zero_after_cast: ZeroScale::Keep,
        pow2_ceil: false,
        amax_floor: None,
    }
}

/// A ggml Q8_0 row (ggml's C and gguf-py's port differ in the block maximum and a NaN d).
const fn ggml_q8_0(family: &'static str, amax: Amax, scale: ScaleFormat, source: Source) -> Recipe {
    Recipe {
        family,
        options: "",
        element: DType::Int8,
        block: BlockShape::Row(32),
        scale,
        amax,
        scale_rule: ggml_divide(127.0),
        global: GlobalRule::None,
        step: ElementStep::Reciprocal,
        round: ElementRound::IntegerTiesAway,
        dequantize: Dequantize::Multiply,
        short_block: ShortBlock::Refuse("ggml's quantize_row_q8_0_ref asserts the row is a multiple of 32"),
        layout: Layout::GgmlQ8_0,
        inputs: &[],
        profile: Profile::Spec,
        nan: AS_WRITTEN,
        source,
    }
}

/// The row a scheme of `quant::ggml`'s table of block types stands on: the type's block along
/// the last axis, its bytes as the elements (the codec reads and writes them; the engine's
/// fields beyond the block are not used), and the codec's source.
pub(crate) fn ggml_codec_row(codec: &crate::quant::ggml::Codec) -> Recipe {
    Recipe {
        family: "ggml",
        element: DType::Uint8,
        block: BlockShape::Row(codec.block_elements),
        short_block: ShortBlock::Refuse("ggml's ggml_row_size asserts a row is a whole number of blocks"),
        source: Source { functions: codec.source, checked_by: "scripts/crosscheck_ggml.py", ..GGML },
        ..ggml_q8_0("ggml", Amax::RunningMax, ScaleFormat::GgmlFloat16, GGML)
    }
}

/// The row an integer or codebook scheme shows as a recipe: its element width, group and
/// source (its arithmetic is its family's, `quant::integer`).
pub(crate) fn integer_row(params: &crate::quant::integer::Params) -> Recipe {
    let family = crate::quant::integer::family(params.family).expect("parsed from a family row");
    let element = match params.bits {
        2 => DType::Uint2,
        4 => DType::Uint4,
        _ => DType::Uint8,
    };
    Recipe {
        family: family.name,
        options: family.grammar,
        element,
        block: params.group.map_or(BlockShape::Channel, BlockShape::Row),
        short_block: ShortBlock::Refuse("a weight's input features are a whole number of groups"),
        layout: Layout::Onnx,
        source: Source { implementation: family.name, version: "", functions: family.source, checked_by: "" },
        ..ggml_q8_0("integer", Amax::RunningMax, ScaleFormat::Float16, GGML)
    }
}

/// A ggml Q4_0 row (C and the port differ in the block maximum and a NaN d).
const fn ggml_q4_0(
    family: &'static str,
    options: &'static str,
    amax: Amax,
    scale: ScaleFormat,
    source: Source,
) -> Recipe {
    Recipe {
        family,
        options,
        element: DType::Uint4,
        block: BlockShape::Row(32),
        scale,
        amax,
        scale_rule: ggml_divide(-8.0),
        global: GlobalRule::None,
        step: ElementStep::Reciprocal,
        round: ElementRound::IntegerOffsetTruncate { fused: false },
        dequantize: Dequantize::OffsetNibble,
        short_block: ShortBlock::Refuse("ggml's quantize_row_q4_0_ref asserts the row is a multiple of 32"),
        layout: Layout::GgmlQ4_0,
        inputs: &[],
        profile: Profile::Spec,
        nan: AS_WRITTEN,
        source,
    }
}

/// A ggml MXFP4 row (C and the port differ in the block maximum only).
const fn ggml_mxfp4(family: &'static str, options: &'static str, amax: Amax, source: Source) -> Recipe {
    Recipe {
        family,
        options,
        element: DType::Float4E2M1,
        block: BlockShape::Row(32),
        scale: ScaleFormat::E8M0,
        amax,
        scale_rule: ScaleRule::GgmlLog2Floor,
        global: GlobalRule::None,
        step: ElementStep::Reciprocal,
        round: ElementRound::NearestIndexFirstTie { fused: false },
        dequantize: Dequantize::GgmlHalfScale,
        short_block: ShortBlock::Refuse("ggml's quantize_row_mxfp4_ref asserts the row is a multiple of 32"),
        layout: Layout::GgmlMxfp4,
        inputs: &[],
        profile: Profile::Spec,
        nan: AS_WRITTEN,
        source,
    }
}
