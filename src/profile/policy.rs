//! The row types: one field of [`Policy`] per disputed question, each a small enum or struct of
//! data that the conversion code reads.

use super::op_rules::{NumberStyle, OpenVinoRange, RangeCount, RangeValues, RepeatedAxes, StringGrammar};
use super::profiles::SPEC;
use crate::dtype::DType;
use crate::format::{FloatFormat, IntegerFormat};
use crate::round::{NanFallback, RoundingMode};

/// Which targets a source wider than float32 (float64, int32, int64, uint32, uint64) reaches by
/// rounding to float32 first: a double rounding (row `via_float32`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ViaFloat32 {
    /// FLOAT16.
    pub float16: bool,
    /// BFLOAT16.
    pub bfloat16: bool,
    /// The four float8 variants and E8M0.
    pub float8: bool,
    /// Both float6 variants.
    pub float6: bool,
    /// FLOAT4E2M1.
    pub float4: bool,
}

impl ViaFloat32 {
    pub(super) const NEVER: ViaFloat32 =
        ViaFloat32 { float16: false, bfloat16: false, float8: false, float6: false, float4: false };

    /// Whether a wide source goes through float32 on its way to `to`.
    #[must_use]
    pub fn applies_to(&self, to: DType) -> bool {
        match to {
            DType::Float16 => self.float16,
            DType::Bfloat16 => self.bfloat16,
            DType::Float8E4M3FN
            | DType::Float8E4M3FNUZ
            | DType::Float8E5M2
            | DType::Float8E5M2FNUZ
            | DType::Float8E8M0 => self.float8,
            DType::Float6E2M3 | DType::Float6E3M2 => self.float6,
            DType::Float4E2M1 => self.float4,
            _ => false,
        }
    }
}

/// What happens to a NaN's payload between the IEEE formats (row `nan_payloads`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NanPayload {
    /// Keep the top payload bits and set the quiet bit: what x86 does between f32 and f64.
    QuietTopBits,
    /// Keep the top payload bits without quieting; if none survive, set the lowest fraction bit
    /// so the result stays a NaN (numpy's float -> half).
    TopBitsNonzero,
    /// Keep the payload bits exactly (a widening that does not quiet: numpy's half -> float).
    Exact,
    /// The canonical quiet NaN with the input's sign.
    Canonical,
    /// This code whatever the NaN's sign and payload (PyTorch's AVX2 float32 -> bfloat16 writes
    /// 0xFFFF; its scalar float16 -> float32 writes 0x7FFFFFFF).
    Fixed(u64),
}

/// NaN payloads per direction. f32 <-> f64 is always [`NanPayload::QuietTopBits`] (hardware).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NanPayloads {
    /// From float16 into float32.
    pub float16_to_float32: NanPayload,
    /// From float16 into float64.
    pub float16_to_float64: NanPayload,
    /// From bfloat16 into float32.
    pub bfloat16_to_float32: NanPayload,
    /// From bfloat16 into float64.
    pub bfloat16_to_float64: NanPayload,
    /// Into float16 from float32.
    pub to_float16: NanPayload,
    /// Into float16 from float64.
    pub float64_to_float16: NanPayload,
    /// From bfloat16 into float16.
    pub bfloat16_to_float16: NanPayload,
    /// Into bfloat16 from float32, float64 or float16.
    pub to_bfloat16: NanPayload,
}

/// How the special values of the four float8 formats become integers (the ONNX text leaves
/// them undefined; these are what the implementations return, observed with
/// scripts/crosscheck_cast.py).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Float8SpecialsToInteger {
    /// NaN -> 0; ±Inf -> the target's MAX/MIN (int4 and narrower: the low bits of int32's): what
    /// ml_dtypes' float8 -> integer casts do.
    ZeroAndSaturate,
    /// Through float32 and x86's `cvtt`, like any float (onnxruntime).
    LikeFloat32,
}

/// A positional rule: the implementation converts these pairs in a vectorised loop over whole
/// blocks of `length` elements from the tensor's first element, and the elements after the last
/// whole block one at a time, and the two loops give different answers for some inputs. Inside the
/// blocks the rows of `policy` apply; in the tail the profile's own rows. (Observed by converting
/// tensors of every length from 1 to 35 filled with one special value, and by the cross-check
/// scripts, whose tensors end in a tail of 7 specials.)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VectorBlock {
    /// The sources the rule applies to.
    pub sources: &'static [DType],
    /// The targets it applies to, from any of `sources`.
    pub targets: &'static [DType],
    /// Elements per block.
    pub length: usize,
    /// The rows inside the blocks.
    pub policy: &'static Policy,
}

/// A named format ([`crate::format::NAMED_FORMATS`]) that an implementation has, and the ONNX dtype
/// whose rows its casts follow: ml_dtypes (and XLA) convert all their float8 types with one
/// template, so `float8_e3m4` behaves as FLOAT8E5M2 does in every disputed case (NaN into float4,
/// float8 -> integer, double rounding from float64, ...), with its own format (row `named_formats`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NamedFormatRows {
    /// The named format.
    pub format: &'static FloatFormat,
    /// The ONNX dtype whose rows apply to its casts.
    pub rows_of: DType,
}

/// A named integer type ([`crate::format::NAMED_INTEGERS`]) that an implementation has, and the
/// ONNX integer dtype whose rows its casts follow (ml_dtypes converts `int1` with the template of
/// its `int2`/`int4`, so INT4's rows at one bit; row `named_integers`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NamedIntegerRows {
    /// The named integer type.
    pub format: &'static IntegerFormat,
    /// The ONNX dtype whose rows apply to its casts.
    pub rows_of: DType,
    /// The types (ONNX names or named types' names) the implementation has no cast from into this
    /// one; such casts use `spec`.
    pub no_cast_from: &'static [&'static str],
    /// The types it has no cast to from this one; such casts use `spec`.
    pub no_cast_to: &'static [&'static str],
}

/// How a float becomes a UINT32 where the ONNX text leaves it undefined (NaN, ±Inf, values
/// outside uint32's range); in range every rule truncates toward zero, and values in (-2^31, 0)
/// wrap (-1.0 -> 0xFFFFFFFF).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Uint32Conversion {
    /// `spec`'s answer: NaN and x <= -2^31 give 0x80000000, ±Inf and x >= 2^32 give 0.
    Spec,
    /// A scalar C conversion on x86-64: truncate to int64 (`cvttss2si`/`cvttsd2si` with a 64-bit
    /// destination) and keep the low 32 bits, so x in [-2^63, 2^63) gives its low 32 bits
    /// (-2147483904.0 -> 0x7FFFFF00, 5e9 -> 0x2A05F200) and NaN, ±Inf and |x| >= 2^63 give 0.
    LowBitsOfInt64,
    /// The vectorised sequence (AVX2 has no float -> uint32 instruction): x < 2^31 converts as int32
    /// (`cvttps2dq`), larger x as x - 2^31 with the top bit flipped back, so NaN and x <= -2^31
    /// (-Inf included) give 0x80000000 and x >= 2^32 (+Inf included) gives 0.
    Vector,
}

/// Identity casts (`to` equal to the input's type) that an implementation computes as a
/// conversion (decode, then encode with the Cast's attributes) instead of a copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IdentityConversion {
    /// The dtype cast to itself.
    pub dtype: DType,
    /// Only with `saturate=1` (without it the implementation copies).
    pub only_saturating: bool,
}

/// Dtypes an implementation cannot cast from or to STRING; such casts use `spec`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StringFallbacks {
    /// STRING -> these.
    pub reading: &'static [DType],
    /// These -> STRING.
    pub writing: &'static [DType],
}

impl StringFallbacks {
    pub(super) const NONE: StringFallbacks = StringFallbacks { reading: &[], writing: &[] };

    /// The same dtypes in both directions.
    pub(super) const fn both(dtypes: &'static [DType]) -> StringFallbacks {
        StringFallbacks { reading: dtypes, writing: dtypes }
    }
}

/// How a float becomes an integer where it is out of the target's range (rows 10, 13 and 14).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FloatToInteger {
    /// What the machine's conversions give: x86's `cvtt` results for the wide types (the observed values in
    /// the `float_to_integer` row; [`Policy::float_to_uint32`] for UINT32), the low bits of the rounded value for
    /// int4/uint4/int2/uint2 (0 when |x| >= 2^31 or not finite).
    Machine,
    /// Truncate toward zero and saturate, every width: NaN -> 0, ±Inf and values beyond the range
    /// -> MAX or MIN (0 for negatives into unsigned types). The bounds are compared in the source
    /// type, converted there by the profile's own conversion (so a float4 source, whose largest
    /// value 6 is what 7, 15, 127 and every larger bound become, saturates at 6: 6.0 -> int4 7).
    /// XLA's lowering of float -> int.
    SaturateInSourceType,
}

/// The NaN a source's NaN becomes in FLOAT8E5M2.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NanCode {
    /// The code without the sign bit.
    pub code: u64,
    /// Whether the NaN's sign is kept.
    pub keep_sign: bool,
}

/// How float8 codes become bool (row `float8_to_bool`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Float8ToBool {
    /// `x != 0` on the value: -0 is false, E8M0's 2^-127 is true.
    ByValue,
    /// `bits != 0`: E4M3FN/E5M2 -0 (0x80) is true, E8M0 0x00 is false (onnxruntime).
    ByBits,
}

/// How values become FLOAT8E8M0 (row `e8m0`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum E8M0Rule {
    /// The Cast-24 table: round once with `round_mode`, overflow judged after rounding; |x| below
    /// 2^-127 (zero included) gives 2^-127 when saturating, NaN otherwise; the sign is ignored.
    Spec,
    /// onnx's `to_float8e8m0`: on the float32 bit pattern, sign ignored, Inf -> NaN
    /// (docs/research/onnx_cast.md §10).
    Reference,
    /// onnxruntime's observed kernel: `Spec`, except that negative inputs give 0x00 (saturate) or
    /// NaN, and anything above 2^127 is judged before rounding.
    OnnxRuntime,
    /// ml_dtypes' `float8_e8m0fnu` (no attributes): NaN, ±Inf, ±0 and negatives give 0xFF; x below
    /// 2^-127 gives `tiny`, 2^-127 itself 0x00, (2^-127, 2^-126) 0x01; from 2^-126 on the nearest
    /// power of two with ties (1.5 * 2^k) away from zero, and a result above 2^127 is 0xFF
    /// (1.4 * 2^127 -> 0xFE, 1.5 * 2^127 -> 0xFF).
    NearestPowerOfTwo {
        /// The code of a value below 2^-127.
        tiny: u64,
        /// The rule is applied to |x|: the sign is ignored and ±0 counts as below 2^-127 (PyTorch's
        /// `fp8e8m0fnu_from_fp32_value`, which reads only the float32's exponent and fraction).
        of_magnitude: bool,
    },
}

/// The precision of `x / y_scale` in QuantizeLinear.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QuantizeDivision {
    /// The text of QuantizeLinear-23 and later: "the type of `y_scale` determines the precision of
    /// the division", unless `precision` names another; both operands are rounded to it and the
    /// quotient is rounded once in it. (An int32 or float8e8m0 scale names no float precision:
    /// there the division is in numpy's result type, as [`QuantizeDivision::NumpyPromotion`].)
    ScaleType,
    /// The onnx reference: `x / y_scale` in numpy's result type (float16 / float16 in float16,
    /// bfloat16 / bfloat16 in bfloat16, any int32 operand in float64, every other mixture in
    /// float32), or both cast to `precision` first when it is given.
    NumpyPromotion,
    /// onnxruntime: both operands widened to float32 and divided there whatever their types;
    /// `precision` is ignored (observed: float16 / float16 quotients that round differently in
    /// float16 and float32 quantize as the float32 quotient does).
    Float32,
}

/// What QuantizeLinear to an integer type gives where `x / y_scale` is NaN, infinite, or beyond
/// int32 (a zero scale, Inf inputs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QuantizeSpecials {
    /// Saturate by sign (+Inf and huge values to the type's maximum, -Inf to its minimum); NaN
    /// to the minimum. onnxruntime (observed: int8 [Inf, -Inf, NaN, 3e9] -> [127, -128, -128, 127]
    /// whatever the zero point).
    SaturateNanToMin,
    /// numpy on x86: `rint(x / y_scale).astype(int32)` gives INT32_MIN for NaN, ±Inf and anything
    /// beyond int32, the zero point is then added with int32 wraparound and the sum clipped. So
    /// those elements give the type's minimum, except that a negative zero point wraps
    /// INT32_MIN + zp round to the maximum (observed: int8 zero point -5 gives 127 for NaN and
    /// -Inf alike).
    Int32Wraparound,
}

/// Which QuantizeLinear calls a [`SpecialsPath`] row covers: the input's dtype, the output's, and
/// the layout of the scales around each element.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SpecialsPath {
    /// The input types it covers (empty: every type).
    pub inputs: &'static [DType],
    /// The output types it covers (empty: every integer type).
    pub outputs: &'static [DType],
    /// The layouts it covers.
    pub layout: SpecialsLayout,
    /// The rule on this path.
    pub specials: QuantizeSpecials,
    /// What was observed, and how (shown in `tables/profiles.md`).
    pub observed: &'static str,
}

/// The layouts a [`SpecialsPath`] row covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpecialsLayout {
    /// Every layout.
    Any,
    /// Blocked (`block_size`) along an axis with more elements after it (onnxruntime's
    /// "not last axis" loop; a blocked axis followed only by dimensions of size 1 is not one).
    BlockedBeforeInner,
    /// Packed 4-bit outputs, per element: an element whose output byte it does not share with an
    /// element of the same scale (its partner in the byte has another scale, or it is the tensor's
    /// last element, alone in its byte).
    SplitByte,
}

/// How DequantizeLinear computes `(x - x_zero_point) * x_scale`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DequantizeArithmetic {
    /// The text: the exact value, rounded once to the output type ("the output type determines the
    /// precision of the multiplication").
    Exact,
    /// The onnx reference: `x.astype(float32)` (int32 rounds), minus the zero point in numpy's
    /// result type (float64 for an int32 zero point, else float32), times the scale in numpy's
    /// result type (float64 if the difference is, else float32), then cast to the output type.
    Numpy,
    /// onnxruntime: `x - x_zero_point` in int32 (wrapping), converted to float32, times the scale
    /// in float32, then converted to the output type.
    Float32,
}

/// How DynamicQuantizeLinear treats a NaN in its input when it takes the minimum and maximum.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DynamicNan {
    /// `max(x)` and `min(x)` are NaN, so the scale is NaN and the zero point 255 (Python's
    /// `max(qmin, min(qmax, nan))`); every element quantizes to 0. The onnx reference (numpy).
    Propagates,
    /// NaN elements are skipped by the minimum and maximum (the scale comes from the others) and
    /// quantize to 0. onnxruntime (observed: [1, NaN, 3, -2] -> [153, 0, 255, 0], scale 5/255).
    Skipped,
}

/// DynamicQuantizeLinear's scale for a flat input (every element 0, or none), where the text's
/// formula gives 0 / 255 and then divides by it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DynamicFlatScale {
    /// `1 / 255` in float32 (the onnx reference: `np.float32(1.0 if maxx == minx else ...) / 255`).
    OneOver255,
    /// 1.0 (onnxruntime, observed on [0, 0]).
    One,
}

/// One profile's answers to the disputed questions. Each field is one row of the decision table (`tables/profiles.md`), named as the field is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Policy {
    /// The profile's name as the command line spells it.
    pub name: &'static str,
    /// The implementation the profile is bit-exact with (name, version, platform).
    pub peer: &'static str,
    /// Which targets a float64 (or wide integer) source reaches through float32.
    pub via_float32: ViaFloat32,
    /// onnxruntime's non-saturating overflow quirks (E4M3FN 480 <= |x| < 496 -> 0x7E|s,
    /// E5M2 61440 <= |x| < 65536 -> 0x7F|s).
    pub float8_overflow_quirks: bool,
    /// The E5M2 code for NaN, before the sign bit.
    pub e5m2_nan: u64,
    /// `e5m2_nan` for particular sources (instead of `e5m2_nan` and the NaN's sign).
    pub e5m2_nan_by_source: &'static [(DType, NanCode)],
    /// The FNUZ formats' NaN (0x80) reads as -NaN (its sign bit is set); false: as +NaN.
    pub fnuz_nan_is_negative: bool,
    /// NaN into float4e2m1.
    pub nan_to_float4: NanFallback,
    /// NaN into float6 (research §11). The Cast-28 text is silent, so `spec` does what the onnx
    /// reference does.
    pub nan_to_float6: NanFallback,
    /// Overflow and ±Inf into float6 give ±0 instead of ±MAX.
    pub float6_overflow_to_zero: bool,
    /// How a float is rounded to an integer before its low bits go into int4/uint4/int2/
    /// uint2 (ONNX's int4 technical page: "nearest-integer with ties to even", quoted in
    /// docs/research/onnx_cast.md §7).
    pub float_to_subbyte_int: RoundingMode,
    /// Out-of-range floats into integers.
    pub float_to_integer: FloatToInteger,
    /// How float8 codes become bool.
    pub float8_to_bool: Float8ToBool,
    /// What happens to NaN payloads between the IEEE formats.
    pub nan_payloads: NanPayloads,
    /// `nan_payloads` for particular pairs (from, to), the first match winning; also the NaN a
    /// float8 source (its fraction bits as the payload) writes into FLOAT, DOUBLE, FLOAT16 and
    /// BFLOAT16, which is otherwise the canonical quiet NaN with its sign.
    pub nan_by_pair: &'static [(DType, DType, NanPayload)],
    /// Positional rules: pairs the implementation converts in whole vector blocks and a scalar
    /// tail, with the rows that apply inside the blocks (`nan_payloads`, `float_to_uint32`).
    pub vector_blocks: &'static [VectorBlock],
    /// `float_to_integer` for UINT32 targets from float sources (outside the vector blocks).
    pub float_to_uint32: Uint32Conversion,
    /// Identity casts computed as conversions.
    pub identity_converts: &'static [IdentityConversion],
    /// `float_to_integer` for float8 NaN and ±Inf sources (E8M0's NaN gives 0 in every implementation).
    pub float8_specials_to_integer: Float8SpecialsToInteger,
    /// Sources whose NaN becomes integer 0 whatever `float8_specials_to_integer` says (E8M0 in
    /// every profile).
    pub nan_to_integer_zero: &'static [DType],
    /// A float becomes UINT8 through int64 (truncate to int64 as x86's 64-bit `cvtt` does, keep the
    /// low 8 bits) instead of through int32: c10's `static_cast_with_inter_type<uint8_t, ...>`.
    pub float_to_uint8_through_int64: bool,
    /// onnxruntime: a bfloat16 NaN cast to float8 with `saturate=0` loses its sign (observed:
    /// 0xFF81 -> E4M3FN 0x7F, E5M2 0x7F).
    pub bfloat16_nan_unsigned_without_saturate: bool,
    /// How values become FLOAT8E8M0.
    pub e8m0: E8M0Rule,
    /// `e8m0` for particular sources (the first match wins over `e8m0`).
    pub e8m0_by_source: &'static [(DType, E8M0Rule)],
    /// The implementation has no `saturate` attribute: float8 targets always convert as this says.
    pub fixed_saturate: Option<bool>,
    /// `fixed_saturate` for particular targets (the first match wins over `fixed_saturate`).
    pub saturate_by_target: &'static [(DType, bool)],
    /// Pairs (from, to) converted with subnormal inputs read as zero and subnormal results written
    /// as zero (the sign kept; a float32 step on the way (`via_float32`) is flushed too): x86's DAZ and FTZ
    /// modes, which XLA's CPU code runs in.
    pub flush_subnormals: &'static [(DType, DType)],
    /// `saturate=0` on a target other than float8 (E8M0 excepted) is an error.
    pub saturate_zero_needs_float8: bool,
    /// Dtypes the implementation has no Cast for, in either direction; such casts use `spec`.
    pub cast_falls_back: &'static [DType],
    /// Dtypes the implementation has no Cast from; such casts use `spec`.
    pub sources_fall_back: &'static [DType],
    /// Pairs (from, to) the implementation has no Cast for; such casts use `spec`.
    pub pairs_fall_back: &'static [(DType, DType)],
    /// The named formats the implementation has (none: the profile refuses them), each cast
    /// with the rows of an ONNX dtype.
    pub named_formats: &'static [NamedFormatRows],
    /// The named integer types the implementation has (none: their casts are `spec`'s), each cast
    /// with the rows of an ONNX integer dtype at its own width.
    pub named_integers: &'static [NamedIntegerRows],
    /// Cast to and from STRING.
    pub strings: StringPolicy,
    /// ONNX Range (and OpenVINO's).
    pub range: RangePolicy,
    /// ONNX Slice.
    pub slice: SlicePolicy,
    /// QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear.
    pub quantize: QuantizePolicy,
}

/// How a profile reads and writes strings (ONNX `Cast` to and from STRING).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StringPolicy {
    /// How strings are read (row `strings.grammar`).
    pub grammar: StringGrammar,
    /// How numbers are written (row `strings.number_style`).
    pub number_style: NumberStyle,
    /// Dtypes the implementation cannot convert to or from STRING; such casts use `spec`.
    pub fall_back: StringFallbacks,
}

/// How a profile runs ONNX Range and OpenVINO's Range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RangePolicy {
    /// "ONNX Range count".
    pub count: RangeCount,
    /// "ONNX Range values".
    pub values: RangeValues,
    /// The newest ONNX Range version the implementation runs; a newer one is `spec`'s.
    pub newest_version: i64,
    /// "OpenVINO Range-4" (and Range-1).
    pub openvino: OpenVinoRange,
}

/// How a profile runs ONNX Slice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlicePolicy {
    /// "Slice clamping": with a negative step, a start below `-dim` clamps to -1 (Python's
    /// `slice.indices`), so the axis is empty, instead of to 0.
    pub start_below_lowest_reverses_nothing: bool,
    /// "Slice clamping": with a negative step, an end of INT32_MAX or INT64_MAX reverses the whole
    /// axis instead of clamping to `dim - 1`.
    pub max_end_reverses_whole_axis: bool,
    /// "Slice repeated axes".
    pub repeated_axes: RepeatedAxes,
    /// Rank-0 data is an error even with no starts ("Cannot slice scalars"); otherwise such a
    /// Slice returns the data.
    pub scalar_without_starts_is_error: bool,
    /// Starts, ends, axes and steps must share one integer dtype (Slice's `Tind` constraint).
    pub index_types_must_match: bool,
}

/// How a profile runs QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QuantizePolicy {
    /// QuantizeLinear: the precision of `x / y_scale`.
    pub division: QuantizeDivision,
    /// QuantizeLinear to an integer type: NaN, ±Inf and values beyond int32, on every path that
    /// no row of `special_paths` covers.
    pub specials: QuantizeSpecials,
    /// Paths (input type, output type, layout) with another rule than `specials`; the first row
    /// that covers a path decides it.
    pub special_paths: &'static [SpecialsPath],
    /// QuantizeLinear to a float8 type adds `y_zero_point` (the formula `x / y_scale +
    /// y_zero_point` of the text); the onnx reference and onnxruntime ignore it (observed: a
    /// zero point of 2.0 changes nothing). float4 and float6 outputs add it in every profile.
    pub float8_adds_zero_point: bool,
    /// DequantizeLinear: the arithmetic of `(x - x_zero_point) * x_scale`.
    pub dequantize_arithmetic: DequantizeArithmetic,
    /// DequantizeLinear of float4e2m1 ignores `x_zero_point` (the onnx reference subtracts it for
    /// every type but float8 and float4e2m1); the text subtracts it.
    pub dequantize_float4_ignores_zero_point: bool,
    /// DynamicQuantizeLinear: NaN in the input.
    pub dynamic_nan: DynamicNan,
    /// DynamicQuantizeLinear when `max(0, max(x)) == min(0, min(x))` (all zeros, or empty).
    pub dynamic_flat_scale: DynamicFlatScale,
}

impl QuantizePolicy {
    /// The rules QuantizeLinear from `input` to the integer type `output` follows for NaN, ±Inf
    /// and quotients beyond int32: `(rule, split_byte_rule)`, the second for the elements of a
    /// packed 4-bit output that share their byte with no element of their scale.
    /// `blocked_before_inner`: the call is blocked along an axis with more elements after it.
    pub fn specials_on(
        &self,
        input: DType,
        output: DType,
        blocked_before_inner: bool,
    ) -> (QuantizeSpecials, QuantizeSpecials) {
        let rule = |split_byte: bool| {
            self.special_paths
                .iter()
                .find(|row| {
                    (row.inputs.is_empty() || row.inputs.contains(&input))
                        && (row.outputs.is_empty() || row.outputs.contains(&output))
                        && match row.layout {
                            SpecialsLayout::Any => true,
                            SpecialsLayout::BlockedBeforeInner => blocked_before_inner,
                            SpecialsLayout::SplitByte => split_byte,
                        }
                })
                .map_or(self.specials, |row| row.specials)
        };
        (rule(false), rule(true))
    }
}

impl Policy {
    /// The policy that actually decides a cast from `from` to `to`: this one, or `spec` where the
    /// implementation has no behaviour for the pair.
    #[must_use]
    pub fn for_cast(&'static self, from: DType, to: DType) -> &'static Policy {
        if self.falls_back(from, to) {
            &SPEC
        } else {
            self
        }
    }

    /// Whether the implementation has no cast from `from` to `to` (it raises, or has no kernel), so
    /// that the profile gives `spec`'s answer.
    #[must_use]
    pub fn falls_back(&self, from: DType, to: DType) -> bool {
        let lacks = |d: DType| self.cast_falls_back.contains(&d);
        self.sources_fall_back.contains(&from)
            || lacks(from)
            || lacks(to)
            || self.pairs_fall_back.contains(&(from, to))
            || (to == DType::String && self.strings.fall_back.writing.contains(&from))
            || (from == DType::String && self.strings.fall_back.reading.contains(&to))
    }

    /// The `saturate` a float8 target converts with whatever the attribute says
    /// (`saturate_by_target`, then `fixed_saturate`); `None` where the attribute applies.
    #[must_use]
    pub fn fixed_saturate_for(&self, to: DType) -> Option<bool> {
        self.saturate_by_target.iter().find(|(d, _)| *d == to).map(|&(_, s)| s).or(self.fixed_saturate)
    }

    /// The ONNX dtype whose rows a named format's casts follow; `None` where the implementation
    /// does not have the format.
    #[must_use]
    pub fn named_rows(&self, format: &FloatFormat) -> Option<DType> {
        self.named_formats.iter().find(|n| n.format == format).map(|n| n.rows_of)
    }

    /// The ONNX dtype whose rows a named integer type's casts follow; `None` where the
    /// implementation does not have the type.
    #[must_use]
    pub fn named_integer_rows(&self, format: &IntegerFormat) -> Option<DType> {
        self.named_integers.iter().find(|n| n.format == format).map(|n| n.rows_of)
    }

    /// Whether the implementation has no cast from `from` to `to` (ONNX names or named types'
    /// names) where a side is a named integer type, so that `spec` converts.
    #[must_use]
    pub fn named_integer_falls_back(&self, from: &str, to: &str) -> bool {
        self.named_integers.iter().any(|n| {
            (n.format.name == to && n.no_cast_from.contains(&from))
                || (n.format.name == from && n.no_cast_to.contains(&to))
        })
    }

    /// The positional rule of the pair, if the implementation converts it in vector blocks.
    #[must_use]
    pub fn vector_block(&self, from: DType, to: DType) -> Option<&'static VectorBlock> {
        self.vector_blocks.iter().find(|b| b.sources.contains(&from) && b.targets.contains(&to))
    }

    /// Whether an identity cast of `dtype` is a conversion rather than a copy.
    #[must_use]
    pub fn identity_converts(&self, dtype: DType, saturate: bool) -> bool {
        self.identity_converts.iter().any(|c| c.dtype == dtype && (saturate || !c.only_saturating))
    }
}
