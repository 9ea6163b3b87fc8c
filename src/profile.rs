//! **The profile table.** A profile is a set of policy choices, one per row of the decision table (`tables/profiles.md`, generated from [`ROWS`]) where
//! the ONNX text, the onnx reference and onnxruntime disagree. Conversion code reads these fields;
//! it never asks which profile it is running. [`ROWS`] says each row in words with the
//! observations behind the values; `tables/profiles.md` (generated from it, `lowbit profiles
//! --markdown`) is the whole decision table.
//!
//! | profile | bit-exact with |
//! |---|---|
//! | `spec` (default) | the ONNX operator text of the newest version and the technical notes, computed exactly and rounded once |
//! | `onnx-reference` | onnx 1.23.2 `ReferenceEvaluator` (numpy 2.4.6, ml_dtypes 0.6.0) |
//! | `onnxruntime` | onnxruntime 1.31.1, CPU execution provider |
//! | `openvino` | OpenVINO 2026.4 (its Cast is `spec`; only Range differs) |
//! | `ml-dtypes` | ml_dtypes 0.6.0 `astype` (numpy 2.4.6) |
//! | `xla` | jax/jaxlib 0.12.0.1, XLA on CPU under `jax.jit` |
//!
//! Where an implementation has no behaviour (it raises, or has no kernel), its profile does what
//! `spec` does: [`Policy::falls_back`] says where ([`Policy::cast_falls_back`],
//! [`Policy::sources_fall_back`], [`Policy::pairs_fall_back`], [`StringPolicy::fall_back`]).
//!
//! Where an implementation's answer depends on the element's position in the tensor (a vectorised
//! loop over whole blocks, then a scalar tail), the rule is data too: [`VectorBlock`] names the
//! pairs, the block length and the rows inside the blocks; plans run the blocks' prefix with its
//! own engine.

mod op_rules;
pub use op_rules::{NumberStyle, OpenVinoRange, RangeCount, RangeValues, RepeatedAxes, StringGrammar};

use crate::alloc_prelude::*;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::round::{NanFallback, RoundingMode};

/// A named profile.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Profile {
    /// `spec` (the default): the ONNX operator text of the newest version, computed exactly and
    /// rounded once; where the text is silent, the onnx reference's answer.
    #[default]
    Spec,
    /// `onnx-reference`: bit-exact with onnx's ReferenceEvaluator (numpy and ml_dtypes).
    OnnxReference,
    /// `onnxruntime`: bit-exact with onnxruntime's CPU execution provider.
    OnnxRuntime,
    /// `openvino`: `spec`'s Cast, OpenVINO's core reference for Range-1 and Range-4.
    OpenVino,
    /// `ml-dtypes`: bit-exact with ml_dtypes' `astype`.
    MlDtypes,
    /// `xla`: bit-exact with XLA on CPU (as jax runs it).
    Xla,
}

impl Profile {
    /// Every profile, in the order of the decision table.
    pub const ALL: [Profile; 6] = [
        Profile::Spec,
        Profile::OnnxReference,
        Profile::OnnxRuntime,
        Profile::OpenVino,
        Profile::MlDtypes,
        Profile::Xla,
    ];

    /// The profile's policy table.
    #[must_use]
    pub const fn policy(self) -> &'static Policy {
        match self {
            Profile::Spec => &SPEC,
            Profile::OnnxReference => &ONNX_REFERENCE,
            Profile::OnnxRuntime => &ONNXRUNTIME,
            Profile::OpenVino => &OPENVINO,
            Profile::MlDtypes => &ML_DTYPES,
            Profile::Xla => &XLA,
        }
    }

    /// The name on the command line (`spec`, `onnx-reference`, `onnxruntime`, `openvino`).
    #[must_use]
    pub const fn name(self) -> &'static str {
        self.policy().name
    }

    /// Every profile's name, in the order of [`Profile::ALL`]: the values `--profile` takes.
    pub const NAMES: [&'static str; Profile::ALL.len()] = {
        let mut names = [""; Profile::ALL.len()];
        let mut i = 0;
        while i < names.len() {
            names[i] = Profile::ALL[i].name();
            i += 1;
        }
        names
    };

    /// Parses a profile name.
    pub fn parse(name: &str) -> Result<Profile> {
        Profile::ALL.into_iter().find(|p| p.name() == name).ok_or_else(|| Error::InvalidOp {
            op: "profile".into(),
            message: format!(
                "unknown profile {}; valid profiles: {}",
                crate::error::quoted(name),
                Profile::NAMES.join(", ")
            ),
        })
    }

    /// What the profile is bit-exact with.
    #[must_use]
    pub const fn peer(self) -> &'static str {
        self.policy().peer
    }

    /// Every pair of castable dtypes (STRING included) the profile hands to `spec` because its
    /// implementation has no cast there.
    #[must_use]
    pub fn fallback_pairs(self) -> Vec<(DType, DType)> {
        let castable: Vec<DType> = DType::ALL
            .into_iter()
            .filter(|d| !matches!(d, DType::Undefined | DType::Complex64 | DType::Complex128))
            .collect();
        let policy = self.policy();
        castable
            .iter()
            .flat_map(|&from| castable.iter().map(move |&to| (from, to)))
            .filter(|&(from, to)| policy.falls_back(from, to))
            .collect()
    }
}

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
    const NEVER: ViaFloat32 =
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
    const NONE: StringFallbacks = StringFallbacks { reading: &[], writing: &[] };

    /// The same dtypes in both directions.
    const fn both(dtypes: &'static [DType]) -> StringFallbacks {
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
    /// Positional rules: pairs the implementation converts in whole vector blocks and a scalar
    /// tail, with the rows that apply inside the blocks (`nan_payloads`, `float_to_uint32`).
    pub vector_blocks: &'static [VectorBlock],
    /// `float_to_integer` for UINT32 targets from float sources (outside the vector blocks).
    pub float_to_uint32: Uint32Conversion,
    /// Identity casts computed as conversions.
    pub identity_converts: &'static [IdentityConversion],
    /// `float_to_integer` for float8 NaN and ±Inf sources (E8M0's NaN gives 0 in every implementation).
    pub float8_specials_to_integer: Float8SpecialsToInteger,
    /// onnxruntime: a bfloat16 NaN cast to float8 with `saturate=0` loses its sign (observed:
    /// 0xFF81 -> E4M3FN 0x7F, E5M2 0x7F).
    pub bfloat16_nan_unsigned_without_saturate: bool,
    /// How values become FLOAT8E8M0.
    pub e8m0: E8M0Rule,
    /// `e8m0` for particular sources (the first match wins over `e8m0`).
    pub e8m0_by_source: &'static [(DType, E8M0Rule)],
    /// The implementation has no `saturate` attribute: float8 targets always convert as this says.
    pub fixed_saturate: Option<bool>,
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
    /// QuantizeLinear to an integer type: NaN, ±Inf and values beyond int32.
    pub specials: QuantizeSpecials,
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

const ALL_QUIET: NanPayloads = NanPayloads {
    float16_to_float32: NanPayload::QuietTopBits,
    float16_to_float64: NanPayload::QuietTopBits,
    bfloat16_to_float32: NanPayload::QuietTopBits,
    bfloat16_to_float64: NanPayload::QuietTopBits,
    to_float16: NanPayload::QuietTopBits,
    float64_to_float16: NanPayload::QuietTopBits,
    bfloat16_to_float16: NanPayload::QuietTopBits,
    to_bfloat16: NanPayload::QuietTopBits,
};

/// The default profile.
pub const SPEC: Policy = Policy {
    name: "spec",
    peer: "the ONNX operator text of the newest version and the technical notes, computed exactly and rounded once",
    via_float32: ViaFloat32::NEVER,
    float8_overflow_quirks: false,
    e5m2_nan: 0x7E,
    e5m2_nan_by_source: &[],
    fnuz_nan_is_negative: true,
    nan_to_float4: NanFallback::PositiveMax,
    nan_to_float6: NanFallback::SignFlippedNegativeZero,
    float6_overflow_to_zero: false,
    float_to_subbyte_int: RoundingMode::NearestEven,
    float_to_integer: FloatToInteger::Machine,
    float8_to_bool: Float8ToBool::ByValue,
    nan_payloads: ALL_QUIET,
    vector_blocks: &[],
    // Undefined in the text; the answers lowbit has always given (the vector loops' answers of
    // the implementations, except ±Inf -> 0).
    float_to_uint32: Uint32Conversion::Spec,
    identity_converts: &[],
    // The ONNX text leaves these undefined, so `spec` follows the reference.
    float8_specials_to_integer: Float8SpecialsToInteger::ZeroAndSaturate,
    bfloat16_nan_unsigned_without_saturate: false,
    e8m0: E8M0Rule::Spec,
    e8m0_by_source: &[],
    fixed_saturate: None,
    flush_subnormals: &[],
    saturate_zero_needs_float8: false,
    cast_falls_back: &[],
    sources_fall_back: &[],
    pairs_fall_back: &[],
    strings: StringPolicy {
        grammar: StringGrammar::Spec,
        number_style: NumberStyle::Spec,
        fall_back: StringFallbacks::NONE,
    },
    range: RangePolicy {
        count: RangeCount::Exact,
        values: RangeValues::Exact,
        newest_version: 27,
        openvino: OpenVinoRange::Text,
    },
    slice: SlicePolicy {
        start_below_lowest_reverses_nothing: false,
        max_end_reverses_whole_axis: false,
        repeated_axes: RepeatedAxes::Error,
        // The Slice-13 text is silent on rank-0 data; the reference returns it unchanged.
        scalar_without_starts_is_error: false,
        index_types_must_match: true,
    },
    quantize: QuantizePolicy {
        division: QuantizeDivision::ScaleType,
        // The text says "saturate"; it is silent on NaN, where both implementations give the minimum
        // (the onnx reference whenever the zero point is not negative).
        specials: QuantizeSpecials::SaturateNanToMin,
        float8_adds_zero_point: true,
        dequantize_arithmetic: DequantizeArithmetic::Exact,
        dequantize_float4_ignores_zero_point: false,
        // ONNX Max and ReduceMax propagate NaN, as the text's max(x) does.
        dynamic_nan: DynamicNan::Propagates,
        // The text divides 0 by 0 for a flat input; `spec` follows the onnx reference there.
        dynamic_flat_scale: DynamicFlatScale::OneOver255,
    },
};

/// The types the onnx reference (ml_dtypes) cannot cast to or from strings (TypeError, research
/// §8). (It cannot cast int4 <-> uint4 at all either, §7, but every profile reinterprets the
/// nibble there, so that pair needs no fallback.)
const ML_DTYPES_ONLY: &[DType] = &[
    DType::Bfloat16,
    DType::Float8E4M3FN,
    DType::Float8E4M3FNUZ,
    DType::Float8E5M2,
    DType::Float8E5M2FNUZ,
    DType::Float8E8M0,
    DType::Float6E2M3,
    DType::Float6E3M2,
    DType::Float4E2M1,
    DType::Int4,
    DType::Uint4,
    DType::Int2,
    DType::Uint2,
];

/// The 36 pairs ml_dtypes 0.6.0 registers no cast for (`astype` raises TypeError). The first 25
/// raise in the onnx reference too, which calls astype ([`REFERENCE_MISSING_CASTS`]); the last 11,
/// into FLOAT8E8M0, do not, because the reference reaches E8M0 through float32. FLOAT8E8M0 ->
/// float8 raises in the reference only with saturate=0 (with saturate=1 `np.clip` hands astype a
/// float32 array), where the reference's rows give `spec`'s answers anyway.
const ML_DTYPES_MISSING_CASTS: &[(DType, DType)] = &[
    (DType::Uint4, DType::Int4),
    (DType::Uint4, DType::Uint2),
    (DType::Uint4, DType::Int2),
    (DType::Uint4, DType::Float6E2M3),
    (DType::Int4, DType::Uint4),
    (DType::Int4, DType::Uint2),
    (DType::Int4, DType::Int2),
    (DType::Int4, DType::Float6E2M3),
    (DType::Float8E8M0, DType::Float8E4M3FN),
    (DType::Float8E8M0, DType::Float8E4M3FNUZ),
    (DType::Float8E8M0, DType::Float8E5M2),
    (DType::Float8E8M0, DType::Float8E5M2FNUZ),
    (DType::Float8E8M0, DType::Uint4),
    (DType::Float8E8M0, DType::Int4),
    (DType::Float8E8M0, DType::Float4E2M1),
    (DType::Float8E8M0, DType::Uint2),
    (DType::Float8E8M0, DType::Int2),
    (DType::Float8E8M0, DType::Float6E2M3),
    (DType::Float8E8M0, DType::Float6E3M2),
    (DType::Uint2, DType::Int4),
    (DType::Uint2, DType::Int2),
    (DType::Int2, DType::Uint4),
    (DType::Int2, DType::Uint2),
    (DType::Float6E2M3, DType::Uint4),
    (DType::Float6E2M3, DType::Int4),
    (DType::Float8E4M3FN, DType::Float8E8M0),
    (DType::Float8E4M3FNUZ, DType::Float8E8M0),
    (DType::Float8E5M2, DType::Float8E8M0),
    (DType::Float8E5M2FNUZ, DType::Float8E8M0),
    (DType::Uint4, DType::Float8E8M0),
    (DType::Int4, DType::Float8E8M0),
    (DType::Float4E2M1, DType::Float8E8M0),
    (DType::Uint2, DType::Float8E8M0),
    (DType::Int2, DType::Float8E8M0),
    (DType::Float6E2M3, DType::Float8E8M0),
    (DType::Float6E3M2, DType::Float8E8M0),
];

/// The pairs the onnx reference raises TypeError on: [`ML_DTYPES_MISSING_CASTS`] but those into
/// FLOAT8E8M0.
const REFERENCE_MISSING_CASTS: &[(DType, DType)] = ML_DTYPES_MISSING_CASTS.split_at(25).0;

/// [`ML_DTYPES_ONLY`] but FLOAT8E8M0.
const ML_DTYPES_EXCEPT_E8M0: &[DType] = &[
    DType::Bfloat16,
    DType::Float8E4M3FN,
    DType::Float8E4M3FNUZ,
    DType::Float8E5M2,
    DType::Float8E5M2FNUZ,
    DType::Float6E2M3,
    DType::Float6E3M2,
    DType::Float4E2M1,
    DType::Int4,
    DType::Uint4,
    DType::Int2,
    DType::Uint2,
];

/// onnx 1.23.2's reference evaluator.
pub const ONNX_REFERENCE: Policy = Policy { vector_blocks: NUMPY_BLOCKS, ..ONNX_REFERENCE_ROWS };

/// The reference's rows but its positional ones.
const ONNX_REFERENCE_ROWS: Policy = Policy {
    name: "onnx-reference",
    peer: "onnx 1.23.2 ReferenceEvaluator (numpy 2.4.6, ml_dtypes 0.6.0), x86-64",
    // ml_dtypes casts double to its own types through float; numpy rounds double -> half directly.
    via_float32: ViaFloat32 { float16: false, bfloat16: true, float8: true, float6: true, float4: true },
    float8_overflow_quirks: false,
    e5m2_nan: 0x7E,
    e5m2_nan_by_source: &[],
    fnuz_nan_is_negative: true,
    nan_to_float4: NanFallback::SignFlippedNegativeZero,
    nan_to_float6: NanFallback::SignFlippedNegativeZero,
    float6_overflow_to_zero: false,
    float_to_subbyte_int: RoundingMode::TowardZero,
    float_to_integer: FloatToInteger::Machine,
    float8_to_bool: Float8ToBool::ByValue,
    nan_payloads: NanPayloads {
        float16_to_float32: NanPayload::Exact,
        float16_to_float64: NanPayload::Exact,
        bfloat16_to_float32: NanPayload::Exact,
        // ml_dtypes widens bfloat16 through float, and float -> double quiets.
        bfloat16_to_float64: NanPayload::QuietTopBits,
        to_float16: NanPayload::TopBitsNonzero,
        float64_to_float16: NanPayload::TopBitsNonzero,
        // ml_dtypes goes through float and Eigen's half, which canonicalises (observed: 7F81 -> 7E00).
        bfloat16_to_float16: NanPayload::Canonical,
        to_bfloat16: NanPayload::Canonical,
    },
    vector_blocks: &[],
    // numpy's scalar loop (the tail of a float32/float64 tensor, every float16 element).
    float_to_uint32: Uint32Conversion::LowBitsOfInt64,
    // `saturate_cast` (np.clip, then astype) for float8 with saturate=1: E5M2 0x7C -> 0x7B, NaN
    // 0x7D -> 0x7E; `to_float8e8m0` for E8M0 whatever the attributes: 0x00 (2^-127, a float32
    // subnormal with a fraction) -> 0x01 with round_mode="up".
    identity_converts: &[
        IdentityConversion { dtype: DType::Float8E4M3FN, only_saturating: true },
        IdentityConversion { dtype: DType::Float8E4M3FNUZ, only_saturating: true },
        IdentityConversion { dtype: DType::Float8E5M2, only_saturating: true },
        IdentityConversion { dtype: DType::Float8E5M2FNUZ, only_saturating: true },
        IdentityConversion { dtype: DType::Float8E8M0, only_saturating: false },
    ],
    float8_specials_to_integer: Float8SpecialsToInteger::ZeroAndSaturate,
    bfloat16_nan_unsigned_without_saturate: false,
    e8m0: E8M0Rule::Reference,
    e8m0_by_source: &[],
    fixed_saturate: None,
    flush_subnormals: &[],
    saturate_zero_needs_float8: false,
    cast_falls_back: &[],
    sources_fall_back: &[],
    pairs_fall_back: REFERENCE_MISSING_CASTS,
    strings: StringPolicy {
        grammar: StringGrammar::Python,
        number_style: NumberStyle::Numpy,
        // STRING -> FLOAT8E8M0 is `to_float8e8m0(np.asarray(x, dtype=float32))`: numpy reads the
        // texts ("inf" -> 0xFF with saturate=1, "0" -> 0x00 with saturate=0).
        fall_back: StringFallbacks { reading: ML_DTYPES_EXCEPT_E8M0, writing: ML_DTYPES_ONLY },
    },
    range: RangePolicy {
        count: RangeCount::Numpy,
        values: RangeValues::Numpy,
        newest_version: 27,
        openvino: OpenVinoRange::Text,
    },
    slice: SlicePolicy {
        start_below_lowest_reverses_nothing: true,
        max_end_reverses_whole_axis: false,
        repeated_axes: RepeatedAxes::LastWins,
        scalar_without_starts_is_error: false,
        // numpy indexes with whatever integers it is given.
        index_types_must_match: false,
    },
    quantize: QuantizePolicy {
        division: QuantizeDivision::NumpyPromotion,
        specials: QuantizeSpecials::Int32Wraparound,
        float8_adds_zero_point: false,
        dequantize_arithmetic: DequantizeArithmetic::Numpy,
        dequantize_float4_ignores_zero_point: true,
        dynamic_nan: DynamicNan::Propagates,
        dynamic_flat_scale: DynamicFlatScale::OneOver255,
    },
};

/// onnxruntime 1.31.1 on CPU.
pub const ONNXRUNTIME: Policy = Policy {
    vector_blocks: &[
        // F16C's vcvtps2ph / vcvtph2ps: blocks keep the top payload bits and set the quiet bit.
        VectorBlock { sources: &[DType::Float], targets: &[DType::Float16], length: 8, policy: &ONNXRUNTIME_BLOCKS },
        VectorBlock { sources: &[DType::Float16], targets: &[DType::Float], length: 16, policy: &ONNXRUNTIME_BLOCKS },
        // Eigen's vectorised casts: float32 and float64 in blocks of 4, bfloat16 of 8.
        VectorBlock {
            sources: &[DType::Float, DType::Double],
            targets: &[DType::Uint32],
            length: 4,
            policy: &ONNXRUNTIME_BLOCKS,
        },
        VectorBlock { sources: &[DType::Bfloat16], targets: &[DType::Uint32], length: 8, policy: &ONNXRUNTIME_BLOCKS },
    ],
    ..ONNXRUNTIME_ROWS
};

/// onnxruntime's rows but its positional ones.
const ONNXRUNTIME_ROWS: Policy = Policy {
    name: "onnxruntime",
    peer: "onnxruntime 1.31.1, CPU execution provider, x86-64 (AVX2, F16C)",
    // Every narrowing from double goes through float (Eigen/MLAS and the float8 constructors).
    via_float32: ViaFloat32 { float16: true, bfloat16: true, float8: true, float6: true, float4: true },
    float8_overflow_quirks: true,
    e5m2_nan: 0x7F,
    e5m2_nan_by_source: &[],
    fnuz_nan_is_negative: true,
    nan_to_float4: NanFallback::PositiveMax,
    nan_to_float6: NanFallback::SignFlippedNegativeZero,
    float6_overflow_to_zero: false,
    float_to_subbyte_int: RoundingMode::NearestTiesAway,
    float_to_integer: FloatToInteger::Machine,
    float8_to_bool: Float8ToBool::ByBits,
    nan_payloads: NanPayloads {
        float16_to_float32: NanPayload::Exact,
        // half -> float keeps the bits, float -> double quiets.
        float16_to_float64: NanPayload::QuietTopBits,
        bfloat16_to_float32: NanPayload::Exact,
        bfloat16_to_float64: NanPayload::QuietTopBits,
        to_float16: NanPayload::Canonical,
        float64_to_float16: NanPayload::Canonical,
        bfloat16_to_float16: NanPayload::Canonical,
        to_bfloat16: NanPayload::Canonical,
    },
    vector_blocks: &[],
    // The scalar loops: the tail of a float32/float64/bfloat16 tensor, every float16 element, and
    // float8 sources through float32 (observed: float16 and float8 NaN -> 0).
    float_to_uint32: Uint32Conversion::LowBitsOfInt64,
    identity_converts: &[],
    float8_specials_to_integer: Float8SpecialsToInteger::LikeFloat32,
    bfloat16_nan_unsigned_without_saturate: true,
    e8m0: E8M0Rule::OnnxRuntime,
    e8m0_by_source: &[],
    fixed_saturate: None,
    flush_subnormals: &[],
    saturate_zero_needs_float8: true,
    // No CPU kernel for float4 (Cast 23-25 NOT_IMPLEMENTED); opset 28 (float6) does not load.
    cast_falls_back: &[DType::Float4E2M1, DType::Float6E2M3, DType::Float6E3M2],
    sources_fall_back: &[],
    pairs_fall_back: &[],
    strings: StringPolicy {
        grammar: StringGrammar::Strtod,
        number_style: NumberStyle::PrintfG8,
        fall_back: StringFallbacks::both(&[DType::Float4E2M1, DType::Float6E2M3, DType::Float6E3M2]),
    },
    range: RangePolicy {
        count: RangeCount::DoubleOperands,
        values: RangeValues::RepeatedAddition,
        // 1.31.1 loads opsets up to 26 and refuses Range-27's opset.
        newest_version: 11,
        openvino: OpenVinoRange::Text,
    },
    slice: SlicePolicy {
        start_below_lowest_reverses_nothing: false,
        max_end_reverses_whole_axis: true,
        repeated_axes: RepeatedAxes::Error,
        scalar_without_starts_is_error: true,
        index_types_must_match: true,
    },
    quantize: QuantizePolicy {
        division: QuantizeDivision::Float32,
        specials: QuantizeSpecials::SaturateNanToMin,
        float8_adds_zero_point: false,
        dequantize_arithmetic: DequantizeArithmetic::Float32,
        // No float4 DequantizeLinear kernel: `spec`'s rule.
        dequantize_float4_ignores_zero_point: false,
        dynamic_nan: DynamicNan::Skipped,
        dynamic_flat_scale: DynamicFlatScale::One,
    },
};

/// onnxruntime inside its vector blocks.
const ONNXRUNTIME_BLOCKS: Policy = Policy {
    name: "onnxruntime (vector blocks)",
    nan_payloads: ALL_QUIET,
    float_to_uint32: Uint32Conversion::Vector,
    ..ONNXRUNTIME_ROWS
};

/// numpy's float32/float64 -> uint32 loop runs 4 elements a step, ml_dtypes' bfloat16 -> uint32 8
/// (observed with numpy 2.4.6 and ml_dtypes 0.6.0 on x86-64, AVX2): NaN and -Inf give 0x80000000
/// in the blocks, 0 in the tail.
const NUMPY_BLOCKS: &[VectorBlock] = &[
    VectorBlock {
        sources: &[DType::Float, DType::Double],
        targets: &[DType::Uint32],
        length: 4,
        policy: &NUMPY_VECTOR,
    },
    VectorBlock { sources: &[DType::Bfloat16], targets: &[DType::Uint32], length: 8, policy: &NUMPY_VECTOR },
];

/// The onnx reference inside numpy's vector blocks.
const NUMPY_VECTOR: Policy =
    Policy { name: "onnx-reference (vector blocks)", float_to_uint32: Uint32Conversion::Vector, ..ONNX_REFERENCE_ROWS };

/// ml_dtypes 0.6.0 `astype` (numpy 2.4.6), x86-64: the onnx reference's Cast rows with saturate=0
/// (the reference calls the same casts), except that E8M0 is ml_dtypes' own conversion, no
/// attribute applies, identity casts are copies, and the pairs ml_dtypes has no cast for (and
/// every ml_dtypes type to or from STRING) are `spec`'s. Range, Slice and QuantizeLinear are not
/// ml_dtypes', so those rows are `spec`'s.
pub const ML_DTYPES: Policy = Policy { vector_blocks: ML_DTYPES_BLOCKS, ..ML_DTYPES_ROWS };

const ML_DTYPES_ROWS: Policy = Policy {
    name: "ml-dtypes",
    peer: "ml_dtypes 0.6.0 astype (numpy 2.4.6), x86-64 (AVX2)",
    via_float32: ONNX_REFERENCE_ROWS.via_float32,
    nan_to_float4: ONNX_REFERENCE_ROWS.nan_to_float4,
    nan_to_float6: ONNX_REFERENCE_ROWS.nan_to_float6,
    float_to_subbyte_int: ONNX_REFERENCE_ROWS.float_to_subbyte_int,
    nan_payloads: ONNX_REFERENCE_ROWS.nan_payloads,
    vector_blocks: &[],
    float_to_uint32: Uint32Conversion::LowBitsOfInt64,
    float8_specials_to_integer: Float8SpecialsToInteger::ZeroAndSaturate,
    e8m0: E8M0Rule::NearestPowerOfTwo { tiny: 0x00 },
    fixed_saturate: Some(false),
    pairs_fall_back: ML_DTYPES_MISSING_CASTS,
    strings: StringPolicy {
        grammar: StringGrammar::Python,
        number_style: NumberStyle::Numpy,
        fall_back: StringFallbacks::both(ML_DTYPES_ONLY),
    },
    ..SPEC
};

/// ml_dtypes inside numpy's vector blocks (see [`NUMPY_BLOCKS`]).
const ML_DTYPES_BLOCKS: &[VectorBlock] = &[
    VectorBlock {
        sources: &[DType::Float, DType::Double],
        targets: &[DType::Uint32],
        length: 4,
        policy: &ML_DTYPES_VECTOR,
    },
    VectorBlock { sources: &[DType::Bfloat16], targets: &[DType::Uint32], length: 8, policy: &ML_DTYPES_VECTOR },
];

const ML_DTYPES_VECTOR: Policy =
    Policy { name: "ml-dtypes (vector blocks)", float_to_uint32: Uint32Conversion::Vector, ..ML_DTYPES_ROWS };

/// JAX/XLA on CPU (`jax.jit` of `astype`, jax and jaxlib 0.12.0.1, x86-64): XLA's convert. It has
/// no saturate or round_mode attribute, no strings, and does not compile conversions from float6.
/// Range, Slice and QuantizeLinear are not XLA's, so those rows are `spec`'s.
pub const XLA: Policy = Policy {
    name: "xla",
    peer: "jax and jaxlib 0.12.0.1, XLA on CPU under jax.jit, x86-64 (AVX2)",
    // float64 and 32/64-bit integers reach float16 and bfloat16 through float32 (observed: int64
    // 16842753 -> bfloat16 0x4B80); float64 -> float8/float6/float4/E8M0 is rounded once
    // (464.00000001 -> E4M3FN 0x7F, NaN).
    via_float32: ViaFloat32 { float16: true, bfloat16: true, float8: false, float6: false, float4: false },
    // NaN into E5M2: 0x7E with the sign from float32/float64, 0x7F without it from the 16-bit and
    // 8-bit formats (observed: float16 0xFC01 -> 0x7F).
    e5m2_nan_by_source: &[
        (DType::Float16, XLA_E5M2_NAN),
        (DType::Bfloat16, XLA_E5M2_NAN),
        (DType::Float8E4M3FN, XLA_E5M2_NAN),
        (DType::Float8E4M3FNUZ, XLA_E5M2_NAN),
        (DType::Float8E5M2FNUZ, XLA_E5M2_NAN),
        (DType::Float8E8M0, XLA_E5M2_NAN),
    ],
    // FNUZ 0x80 -> float32 0x7FC00000 (observed).
    fnuz_nan_is_negative: false,
    // NaN -> float4 0x8 whatever its sign; -> float6 +NaN 0x00, -NaN 0x20 (observed).
    nan_to_float4: NanFallback::NegativeZero,
    nan_to_float6: NanFallback::SignedZero,
    // float32 100.0, +Inf -> E2M3 0x00; -100.0 -> 0x20; 7.75 (rounds to 8) -> 0x00 (observed).
    float6_overflow_to_zero: true,
    float_to_subbyte_int: RoundingMode::TowardZero,
    float_to_integer: FloatToInteger::SaturateInSourceType,
    nan_payloads: NanPayloads {
        // float16 -> float32/float64 quiets (0x7C01 -> 0x7FC02000).
        float16_to_float32: NanPayload::QuietTopBits,
        float16_to_float64: NanPayload::QuietTopBits,
        bfloat16_to_float32: NanPayload::Exact,
        bfloat16_to_float64: NanPayload::QuietTopBits,
        // float32 -> float16 keeps the top payload bits, quiet; float64 -> float16 gives the
        // canonical NaN (0x7FFFFFFFFFFFFFFF -> 0x7E00).
        to_float16: NanPayload::QuietTopBits,
        float64_to_float16: NanPayload::Canonical,
        // bfloat16 0x7F81 -> float16 0x7E08.
        bfloat16_to_float16: NanPayload::QuietTopBits,
        to_bfloat16: NanPayload::Canonical,
    },
    float8_specials_to_integer: Float8SpecialsToInteger::LikeFloat32,
    // ml_dtypes' rule from float32 (1e-39 -> 0x00); from float64 rounded once, and below 2^-127
    // NaN (1.5 - 2^-30 -> 0x7F, 1e-39 -> 0xFF).
    e8m0: E8M0Rule::NearestPowerOfTwo { tiny: 0x00 },
    e8m0_by_source: &[(DType::Double, E8M0Rule::NearestPowerOfTwo { tiny: 0xFF })],
    fixed_saturate: Some(false),
    // Subnormals read and written as zero (observed: float32 0x00000001 -> bool false and -> float64
    // 0; float64 2^-127 -> float32 0 and -> bfloat16 0; bfloat16 0x0001 -> float64 0 and -> bool
    // false); float16, and float32 -> float16/bfloat16, keep them.
    flush_subnormals: &[
        (DType::Float, DType::Double),
        (DType::Double, DType::Float),
        (DType::Double, DType::Bfloat16),
        (DType::Bfloat16, DType::Double),
        (DType::Float, DType::Bool),
        (DType::Bfloat16, DType::Bool),
        (DType::Double, DType::Bool),
    ],
    cast_falls_back: &[DType::String],
    sources_fall_back: &[DType::Float6E2M3, DType::Float6E3M2],
    ..SPEC
};

/// XLA's NaN into E5M2 from formats narrower than float32.
const XLA_E5M2_NAN: NanCode = NanCode { code: 0x7F, keep_sign: false };

/// OpenVINO: its Cast (Convert) is not among the ops this profile covers; Cast is `spec`. Only
/// Range-1 and Range-4 differ from `spec` (its core reference, docs/research/range_slice_gather.md §2.2).
pub const OPENVINO: Policy = Policy {
    name: "openvino",
    peer: "OpenVINO 2026.4 core reference (its Cast is spec's; Range-1 and Range-4 differ)",
    range: RangePolicy { openvino: OpenVinoRange::CoreReference, ..SPEC.range },
    ..SPEC
};

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

// ------------------------------------------------------------------------------------------------
// The decision table in words (tables/profiles.md is generated from it)

/// What the ONNX text says about a row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnnxText {
    /// The text decides it: `spec` is the text, other values are the implementations' deviations.
    Decides,
    /// The text leaves it undefined or says nothing: every value, `spec`'s included, is what an
    /// implementation returns (`spec` follows the onnx reference unless the row says otherwise).
    Undefined,
    /// Not a question of the text: which conversions an implementation has at all.
    Coverage,
}

/// One row of the decision table: a field of [`Policy`], its question, how the ONNX text answers
/// it, each profile's value in words, and the observations behind the values.
#[derive(Clone, Copy)]
pub struct Row {
    /// The field of [`Policy`].
    pub field: &'static str,
    /// The question the row answers.
    pub case: &'static str,
    /// What the ONNX text says on the question.
    pub onnx_text: OnnxText,
    /// The row's value under a policy, in words.
    pub value: fn(&Policy) -> String,
    /// What was observed, per profile (peer, version, platform are the profile's [`Policy::peer`];
    /// the cross-check scripts compare every row of their profile).
    pub observations: &'static [(Profile, &'static str)],
}

fn yes_no(b: bool, yes: &str, no: &str) -> String {
    if b { yes } else { no }.to_string()
}

fn dtype_list(dtypes: &[DType]) -> String {
    if dtypes.is_empty() {
        return "none".into();
    }
    dtypes.iter().map(|d| d.onnx_name()).collect::<Vec<_>>().join(", ")
}

fn pair_list(pairs: &[(DType, DType)]) -> String {
    if pairs.is_empty() {
        return "none".into();
    }
    pairs.iter().map(|(f, t)| format!("{} -> {}", f.onnx_name(), t.onnx_name())).collect::<Vec<_>>().join(", ")
}

fn nan_fallback(fallback: NanFallback, negative_zero: u64) -> String {
    match fallback {
        NanFallback::PositiveMax => "+MAX whatever the sign".into(),
        NanFallback::SignFlippedNegativeZero => format!("+NaN -> 0x{negative_zero:X} (-0), -NaN -> 0x0 (+0)"),
        NanFallback::NegativeZero => format!("0x{negative_zero:X} (-0) whatever the sign"),
        NanFallback::SignedZero => format!("+NaN -> 0x0 (+0), -NaN -> 0x{negative_zero:X} (-0)"),
    }
}

fn payload(rule: NanPayload) -> &'static str {
    match rule {
        NanPayload::QuietTopBits => "top bits, quiet",
        NanPayload::TopBitsNonzero => "top bits as they are (nonzero)",
        NanPayload::Exact => "bits as they are",
        NanPayload::Canonical => "canonical",
    }
}

fn e8m0_rule(rule: E8M0Rule) -> String {
    match rule {
        E8M0Rule::Spec => "the Cast-24 table, round_mode as worded".into(),
        E8M0Rule::Reference => "onnx's to_float8e8m0 on the float32 bits (sign ignored, Inf -> NaN)".into(),
        E8M0Rule::OnnxRuntime => "Cast-24 but negatives -> 0x00 or NaN, above 2^127 judged before rounding".into(),
        E8M0Rule::NearestPowerOfTwo { tiny } => format!(
            "nearest power of two, 1.5 * 2^k up, no attributes; <= 0 and NaN -> 0xFF, below 2^-127 -> 0x{tiny:02X}"
        ),
    }
}

fn uint32_rule(rule: Uint32Conversion) -> &'static str {
    match rule {
        Uint32Conversion::Spec => "NaN, x <= -2^31 -> 0x80000000; ±Inf, x >= 2^32 -> 0",
        Uint32Conversion::LowBitsOfInt64 => "low 32 bits of the int64 conversion (NaN, ±Inf, |x| >= 2^63 -> 0)",
        Uint32Conversion::Vector => "vector sequence (NaN, x <= -2^31 -> 0x80000000; x >= 2^32 -> 0)",
    }
}

/// The rows whose values differ between `inside` and `outside` (for vector blocks).
fn differing_rows(inside: &Policy, outside: &Policy) -> String {
    ROWS.iter()
        .filter(|r| r.field != "vector_blocks" && (r.value)(inside) != (r.value)(outside))
        .map(|r| format!("{} = {}", r.field, (r.value)(inside)))
        .collect::<Vec<_>>()
        .join("; ")
}

/// Every row of the decision table, in the order of [`Policy`]'s fields.
pub const ROWS: &[Row] = &[
    Row {
        field: "via_float32",
        case: "Which targets a float64 or 32/64-bit integer source reaches by rounding to float32 first (double rounding)",
        onnx_text: OnnxText::Decides,
        value: |p| {
            let v = p.via_float32;
            let on: Vec<&str> = [
                (v.float16, "FLOAT16"),
                (v.bfloat16, "BFLOAT16"),
                (v.float8, "float8 and E8M0"),
                (v.float6, "float6"),
                (v.float4, "FLOAT4E2M1"),
            ]
            .iter()
            .filter(|(b, _)| *b)
            .map(|(_, n)| *n)
            .collect();
            if on.is_empty() { "none: rounded once".into() } else { on.join(", ") }
        },
        observations: &[
            (Profile::Spec, "the text's exact value rounded once"),
            (Profile::OnnxReference, "ml_dtypes casts double to its own types through float; numpy rounds double -> half once"),
            (Profile::OnnxRuntime, "every narrowing from double goes through float"),
            (Profile::MlDtypes, "as the reference (the same casts)"),
            (Profile::Xla, "int64 16842753 -> BFLOAT16 0x4B80; float64 464.00000001 -> E4M3FN 0x7F (once)"),
        ],
    },
    Row {
        field: "float8_overflow_quirks",
        case: "Non-saturating float8 overflow just past MAX",
        onnx_text: OnnxText::Decides,
        value: |p| {
            yes_no(p.float8_overflow_quirks, "E4M3FN 480 <= |x| < 496 -> 0x7E|s, E5M2 61440 <= |x| < 65536 -> 0x7F|s", "NaN or Inf as the text says")
        },
        observations: &[(Profile::OnnxRuntime, "float32 480 -> E4M3FN 0x7E and 61440 -> E5M2 0x7F with saturate=0")],
    },
    Row {
        field: "e5m2_nan",
        case: "The NaN written into FLOAT8E5M2 (before the sign)",
        onnx_text: OnnxText::Decides,
        value: |p| format!("0x{:02X}|s", p.e5m2_nan),
        observations: &[(Profile::OnnxRuntime, "float32 NaN -> 0x7F, -NaN -> 0xFF")],
    },
    Row {
        field: "e5m2_nan_by_source",
        case: "The NaN written into FLOAT8E5M2 from particular sources",
        onnx_text: OnnxText::Undefined,
        value: |p| {
            if p.e5m2_nan_by_source.is_empty() {
                return "none".into();
            }
            let sources: Vec<DType> = p.e5m2_nan_by_source.iter().map(|(d, _)| *d).collect();
            let c = p.e5m2_nan_by_source[0].1;
            format!("{}: 0x{:02X}{}", dtype_list(&sources), c.code, if c.keep_sign { "|s" } else { ", sign dropped" })
        },
        observations: &[(Profile::Xla, "float16 0xFC01, E8M0 0xFF, E4M3FNUZ 0x80 -> 0x7F; float32 -NaN -> 0xFE")],
    },
    Row {
        field: "fnuz_nan_is_negative",
        case: "The sign of the FNUZ NaN (0x80) when it leaves its format",
        onnx_text: OnnxText::Undefined,
        value: |p| yes_no(p.fnuz_nan_is_negative, "-NaN (its sign bit)", "+NaN"),
        observations: &[
            (Profile::OnnxReference, "E4M3FNUZ 0x80 -> FLOAT 0xFFC00000"),
            (Profile::Xla, "E4M3FNUZ 0x80 -> FLOAT 0x7FC00000, -> E4M3FN 0x7F"),
        ],
    },
    Row {
        field: "nan_to_float4",
        case: "NaN into FLOAT4E2M1 (no NaN there)",
        onnx_text: OnnxText::Decides,
        value: |p| nan_fallback(p.nan_to_float4, 0x8),
        observations: &[
            (Profile::Spec, "the float4 technical note: NaN -> 6"),
            (Profile::OnnxReference, "ml_dtypes: +NaN -> 0x8, -NaN -> 0x0"),
            (Profile::Xla, "float32 NaN and -NaN -> 0x8"),
        ],
    },
    Row {
        field: "nan_to_float6",
        case: "NaN into FLOAT6E2M3/FLOAT6E3M2 (no NaN there)",
        onnx_text: OnnxText::Undefined,
        value: |p| nan_fallback(p.nan_to_float6, 0x20),
        observations: &[
            (Profile::OnnxReference, "ml_dtypes: +NaN -> 0x20, -NaN -> 0x00"),
            (Profile::Xla, "float32 NaN -> 0x00, -NaN -> 0x20"),
        ],
    },
    Row {
        field: "float6_overflow_to_zero",
        case: "Overflow and ±Inf into float6",
        onnx_text: OnnxText::Undefined,
        value: |p| yes_no(p.float6_overflow_to_zero, "±0", "±MAX (clamped, as float4)"),
        observations: &[
            (Profile::OnnxReference, "ml_dtypes: +Inf -> 0x1F, 8.0 -> E2M3 0x1F"),
            (Profile::Xla, "float32 100, +Inf, 7.75 (rounds to 8) -> E2M3 0x00; -100 -> 0x20"),
        ],
    },
    Row {
        field: "float_to_subbyte_int",
        case: "How a float is rounded before its low bits go into INT4/UINT4/INT2/UINT2",
        onnx_text: OnnxText::Decides,
        value: |p| format!("{:?}", p.float_to_subbyte_int),
        observations: &[
            (Profile::Spec, "the int4 technical note: nearest, ties to even"),
            (Profile::OnnxReference, "astype truncates: 2.9 -> 2"),
            (Profile::OnnxRuntime, "std::round: 2.5 -> 3"),
            (Profile::Xla, "truncates: 7.9 -> INT4 7"),
        ],
    },
    Row {
        field: "float_to_integer",
        case: "Out-of-range floats (NaN, ±Inf, beyond the type) into integers",
        onnx_text: OnnxText::Undefined,
        value: |p| match p.float_to_integer {
            FloatToInteger::Machine => "x86 conversions (cvtt); 4- and 2-bit types: low bits, 0 beyond 2^31".into(),
            FloatToInteger::SaturateInSourceType => "truncate and saturate at the bounds held in the source type; NaN -> 0".into(),
        },
        observations: &[
            (Profile::OnnxReference, "numpy astype on x86-64: float32 NaN -> INT32 0x80000000, 200 -> INT8 0xC8"),
            (Profile::OnnxRuntime, "static_cast on x86-64: as the reference"),
            (Profile::Xla, "float32 [300, NaN, +Inf, -Inf] -> INT8 [0x7F, 0, 0x7F, 0x80]; FLOAT4E2M1 6 -> INT4 7, UINT8 255"),
        ],
    },
    Row {
        field: "float8_to_bool",
        case: "float8 codes into BOOL",
        onnx_text: OnnxText::Decides,
        value: |p| match p.float8_to_bool {
            Float8ToBool::ByValue => "x != 0 on the value".into(),
            Float8ToBool::ByBits => "bits != 0 (E4M3FN/E5M2 -0 true, E8M0 0x00 false)".into(),
        },
        observations: &[(Profile::OnnxRuntime, "E4M3FN 0x80 -> true, E8M0 0x00 -> false")],
    },
    Row {
        field: "nan_payloads",
        case: "NaN payloads between FLOAT16, BFLOAT16, FLOAT and DOUBLE",
        onnx_text: OnnxText::Undefined,
        value: |p| {
            let n = p.nan_payloads;
            format!(
                "f16->f32 {}; f16->f64 {}; bf16->f32 {}; bf16->f64 {}; f32->f16 {}; f64->f16 {}; bf16->f16 {}; ->bf16 {}",
                payload(n.float16_to_float32),
                payload(n.float16_to_float64),
                payload(n.bfloat16_to_float32),
                payload(n.bfloat16_to_float64),
                payload(n.to_float16),
                payload(n.float64_to_float16),
                payload(n.bfloat16_to_float16),
                payload(n.to_bfloat16)
            )
        },
        observations: &[
            (Profile::Spec, "x86's rule between float32 and float64, everywhere"),
            (Profile::OnnxReference, "FLOAT 0x7F800001 -> FLOAT16 0x7C01; FLOAT16 0x7C01 -> DOUBLE 0x7FF0040000000000"),
            (Profile::OnnxRuntime, "narrowing gives 0x7E00|s / 0x7FC0|s; FLOAT16 -> DOUBLE quiets"),
            (Profile::Xla, "FLOAT16 0x7C01 -> FLOAT 0x7FC02000; BFLOAT16 0x7F81 -> FLOAT16 0x7E08; DOUBLE NaN -> FLOAT16 0x7E00"),
        ],
    },
    Row {
        field: "vector_blocks",
        case: "Pairs converted in whole vector blocks from the first element, then a scalar tail, with different answers",
        onnx_text: OnnxText::Undefined,
        value: |p| {
            if p.vector_blocks.is_empty() {
                return "none".into();
            }
            p.vector_blocks
                .iter()
                .map(|b| {
                    let rule = differing_rows(b.policy, p);
                    format!("{} -> {} in blocks of {} ({rule})", dtype_list(b.sources), dtype_list(b.targets), b.length)
                })
                .collect::<Vec<_>>()
                .join("<br>")
        },
        observations: &[
            (Profile::OnnxReference, "numpy 2.4.6: tensors of 1 to 35 NaN -> UINT32 give 0x80000000 in whole blocks of 4 (BFLOAT16: 8), 0 after them"),
            (Profile::OnnxRuntime, "F16C blocks keep NaN payload bits; UINT32 as the reference"),
            (Profile::MlDtypes, "as the reference"),
        ],
    },
    Row {
        field: "float_to_uint32",
        case: "Out-of-range floats into UINT32 (outside vector blocks)",
        onnx_text: OnnxText::Undefined,
        value: |p| uint32_rule(p.float_to_uint32).to_string(),
        observations: &[
            (Profile::Spec, "lowbit's answer before the positional rule was found (the vector answers but ±Inf -> 0)"),
            (Profile::OnnxReference, "every FLOAT16 NaN -> 0; float32 -2147483904 -> 0x7FFFFF00 in the tail"),
            (Profile::OnnxRuntime, "FLOAT16 and float8 NaN -> 0"),
        ],
    },
    Row {
        field: "identity_converts",
        case: "Identity casts computed as a conversion rather than a copy",
        onnx_text: OnnxText::Decides,
        value: |p| {
            if p.identity_converts.is_empty() {
                return "none: a copy".into();
            }
            p.identity_converts
                .iter()
                .map(|c| format!("{}{}", c.dtype.onnx_name(), if c.only_saturating { " (saturate=1)" } else { "" }))
                .collect::<Vec<_>>()
                .join(", ")
        },
        observations: &[(
            Profile::OnnxReference,
            "FLOAT8E5M2 0x7C -> 0x7B and 0x7D -> 0x7E with saturate=1; FLOAT8E8M0 0x00 -> 0x01 with round_mode=up",
        )],
    },
    Row {
        field: "float8_specials_to_integer",
        case: "float8 NaN and ±Inf into integers",
        onnx_text: OnnxText::Undefined,
        value: |p| match p.float8_specials_to_integer {
            Float8SpecialsToInteger::ZeroAndSaturate => "NaN -> 0, ±Inf -> MAX/MIN".into(),
            Float8SpecialsToInteger::LikeFloat32 => "as float32 (float_to_integer)".into(),
        },
        observations: &[
            (Profile::OnnxReference, "ml_dtypes: E5M2 0x7C -> INT8 0x7F, NaN -> 0"),
            (Profile::OnnxRuntime, "through float32: E5M2 0x7C -> INT32 0x80000000"),
        ],
    },
    Row {
        field: "bfloat16_nan_unsigned_without_saturate",
        case: "The sign of a BFLOAT16 NaN cast to float8 with saturate=0",
        onnx_text: OnnxText::Undefined,
        value: |p| yes_no(p.bfloat16_nan_unsigned_without_saturate, "dropped", "kept"),
        observations: &[(Profile::OnnxRuntime, "BFLOAT16 0xFF81 -> E4M3FN 0x7F with saturate=0")],
    },
    Row {
        field: "e8m0",
        case: "Values into FLOAT8E8M0",
        onnx_text: OnnxText::Decides,
        value: |p| e8m0_rule(p.e8m0),
        observations: &[
            (Profile::OnnxReference, "float32 +Inf -> 0xFF with saturate=1; 2^-127 -> 0x01 (up)"),
            (Profile::OnnxRuntime, "-1.0 -> 0x00 (saturate=1), 0xFF (saturate=0)"),
            (Profile::MlDtypes, "1.5 -> 0x80, 1.4999999 -> 0x7F, 1e-45 -> 0x00, 1.5 * 2^-127 -> 0x01, 1.5 * 2^127 -> 0xFF"),
            (Profile::Xla, "float32 as ml_dtypes (1e-39 -> 0x00)"),
        ],
    },
    Row {
        field: "e8m0_by_source",
        case: "Values into FLOAT8E8M0 from particular sources",
        onnx_text: OnnxText::Decides,
        value: |p| {
            if p.e8m0_by_source.is_empty() {
                return "none".into();
            }
            p.e8m0_by_source.iter().map(|(d, r)| format!("{}: {}", d.onnx_name(), e8m0_rule(*r))).collect::<Vec<_>>().join("; ")
        },
        observations: &[(Profile::Xla, "DOUBLE 1.5 - 2^-30 -> 0x7F (rounded once), 1e-39 -> 0xFF, 2^-127 -> 0x00")],
    },
    Row {
        field: "fixed_saturate",
        case: "Whether the saturate attribute applies",
        onnx_text: OnnxText::Decides,
        value: |p| match p.fixed_saturate {
            None => "as given".into(),
            Some(s) => format!("no such attribute: always saturate={}", u8::from(s)),
        },
        observations: &[
            (Profile::MlDtypes, "float32 1000 -> E4M3FN 0x7F (astype has no attribute)"),
            (Profile::Xla, "float32 1000 -> E4M3FN 0x7F"),
        ],
    },
    Row {
        field: "flush_subnormals",
        case: "Pairs converted with subnormal inputs and (tiny after rounding) results as zero",
        onnx_text: OnnxText::Decides,
        value: |p| pair_list(p.flush_subnormals),
        observations: &[(
            Profile::Xla,
            "FLOAT 1e-45 -> BOOL false, -> DOUBLE 0; DOUBLE 2^-126 - 2^-150 -> FLOAT 0, 2^-126 - 2^-151 -> 2^-126; FLOAT16 0x0001 -> BOOL true",
        )],
    },
    Row {
        field: "saturate_zero_needs_float8",
        case: "saturate=0 given for a target other than float8",
        onnx_text: OnnxText::Decides,
        value: |p| yes_no(p.saturate_zero_needs_float8, "an error (E8M0 excepted)", "ignored"),
        observations: &[(Profile::OnnxRuntime, "the model does not load")],
    },
    Row {
        field: "cast_falls_back",
        case: "Dtypes the implementation has no cast for (spec's answer there)",
        onnx_text: OnnxText::Coverage,
        value: |p| dtype_list(p.cast_falls_back),
        observations: &[
            (Profile::OnnxRuntime, "no CPU kernel for FLOAT4E2M1; opset 28 (float6) does not load"),
            (Profile::Xla, "no string type"),
        ],
    },
    Row {
        field: "sources_fall_back",
        case: "Dtypes the implementation has no cast from",
        onnx_text: OnnxText::Coverage,
        value: |p| dtype_list(p.sources_fall_back),
        observations: &[(Profile::Xla, "FLOAT6E2M3 -> FLOAT: JaxRuntimeError (no LLVM IR); some targets abort the process")],
    },
    Row {
        field: "pairs_fall_back",
        case: "Pairs the implementation has no cast for",
        onnx_text: OnnxText::Coverage,
        value: |p| pair_list(p.pairs_fall_back),
        observations: &[
            (Profile::OnnxReference, "ml_dtypes astype raises TypeError (E8M0 -> float8 only with saturate=0)"),
            (Profile::MlDtypes, "astype raises TypeError: 36 pairs"),
        ],
    },
    Row {
        field: "strings.grammar",
        case: "How texts are read",
        onnx_text: OnnxText::Decides,
        value: |p| format!("{:?}", p.strings.grammar),
        observations: &[
            (Profile::OnnxReference, "Python float()/int(): \"1_000\" -> 1000, \"1.5\" -> INT8 an error"),
            (Profile::OnnxRuntime, "strtod/stoll prefixes: \"3.5abc\" -> 3.5, \"300\" -> INT8 44"),
        ],
    },
    Row {
        field: "strings.number_style",
        case: "How numbers are written",
        onnx_text: OnnxText::Decides,
        value: |p| format!("{:?}", p.strings.number_style),
        observations: &[
            (Profile::OnnxReference, "numpy repr: nan, -inf, 1e-04"),
            (Profile::OnnxRuntime, "%.8g: 0.30000001, NaN, -INF"),
        ],
    },
    Row {
        field: "strings.fall_back",
        case: "Dtypes the implementation cannot read from or write to STRING",
        onnx_text: OnnxText::Coverage,
        value: |p| {
            let s = p.strings.fall_back;
            if s.reading == s.writing {
                dtype_list(s.reading)
            } else {
                format!("reading: {}; writing: {}", dtype_list(s.reading), dtype_list(s.writing))
            }
        },
        observations: &[
            (Profile::OnnxReference, "ml_dtypes types raise TypeError; STRING -> FLOAT8E8M0 goes through float32"),
            (Profile::MlDtypes, "ml_dtypes types raise TypeError"),
        ],
    },
    Row {
        field: "range.count",
        case: "ONNX Range: the element count",
        onnx_text: OnnxText::Decides,
        value: |p| format!("{:?}", p.range.count),
        observations: &[],
    },
    Row {
        field: "range.values",
        case: "ONNX Range: the values",
        onnx_text: OnnxText::Decides,
        value: |p| format!("{:?}", p.range.values),
        observations: &[],
    },
    Row {
        field: "range.newest_version",
        case: "ONNX Range: the newest version the implementation runs",
        onnx_text: OnnxText::Coverage,
        value: |p| p.range.newest_version.to_string(),
        observations: &[(Profile::OnnxRuntime, "1.31.1 refuses Range-27's opset")],
    },
    Row {
        field: "range.openvino",
        case: "OpenVINO Range-4 and Range-1",
        onnx_text: OnnxText::Decides,
        value: |p| format!("{:?}", p.range.openvino),
        observations: &[(Profile::OpenVino, "the core reference: float32 for float16/bfloat16, uint32 count")],
    },
    Row {
        field: "slice.start_below_lowest_reverses_nothing",
        case: "Slice with a negative step and a start below -dim",
        onnx_text: OnnxText::Decides,
        value: |p| yes_no(p.slice.start_below_lowest_reverses_nothing, "an empty axis", "clamped to 0"),
        observations: &[(Profile::OnnxReference, "Python's slice.indices")],
    },
    Row {
        field: "slice.max_end_reverses_whole_axis",
        case: "Slice with a negative step and an end of INT32_MAX or INT64_MAX",
        onnx_text: OnnxText::Decides,
        value: |p| yes_no(p.slice.max_end_reverses_whole_axis, "the whole axis reversed", "clamped to dim - 1"),
        observations: &[],
    },
    Row {
        field: "slice.repeated_axes",
        case: "Slice with an axis given twice",
        onnx_text: OnnxText::Decides,
        value: |p| format!("{:?}", p.slice.repeated_axes),
        observations: &[],
    },
    Row {
        field: "slice.scalar_without_starts_is_error",
        case: "Slice of rank-0 data with no starts",
        onnx_text: OnnxText::Undefined,
        value: |p| yes_no(p.slice.scalar_without_starts_is_error, "an error", "the data"),
        observations: &[(Profile::OnnxRuntime, "\"Cannot slice scalars\"")],
    },
    Row {
        field: "slice.index_types_must_match",
        case: "Slice starts, ends, axes and steps of different integer types",
        onnx_text: OnnxText::Decides,
        value: |p| yes_no(p.slice.index_types_must_match, "an error", "accepted"),
        observations: &[],
    },
    Row {
        field: "quantize.division",
        case: "QuantizeLinear: the precision of x / y_scale",
        onnx_text: OnnxText::Decides,
        value: |p| format!("{:?}", p.quantize.division),
        observations: &[],
    },
    Row {
        field: "quantize.specials",
        case: "QuantizeLinear to an integer: NaN, ±Inf, beyond int32",
        onnx_text: OnnxText::Undefined,
        value: |p| format!("{:?}", p.quantize.specials),
        observations: &[(Profile::OnnxRuntime, "INT8 [Inf, -Inf, NaN, 3e9] -> [127, -128, -128, 127]")],
    },
    Row {
        field: "quantize.float8_adds_zero_point",
        case: "QuantizeLinear to float8 adds y_zero_point",
        onnx_text: OnnxText::Decides,
        value: |p| yes_no(p.quantize.float8_adds_zero_point, "yes", "no"),
        observations: &[],
    },
    Row {
        field: "quantize.dequantize_arithmetic",
        case: "DequantizeLinear: the arithmetic of (x - zero point) * scale",
        onnx_text: OnnxText::Decides,
        value: |p| format!("{:?}", p.quantize.dequantize_arithmetic),
        observations: &[],
    },
    Row {
        field: "quantize.dequantize_float4_ignores_zero_point",
        case: "DequantizeLinear of FLOAT4E2M1 ignores x_zero_point",
        onnx_text: OnnxText::Decides,
        value: |p| yes_no(p.quantize.dequantize_float4_ignores_zero_point, "yes", "no"),
        observations: &[],
    },
    Row {
        field: "quantize.dynamic_nan",
        case: "DynamicQuantizeLinear: NaN in the input",
        onnx_text: OnnxText::Undefined,
        value: |p| format!("{:?}", p.quantize.dynamic_nan),
        observations: &[(Profile::OnnxRuntime, "[1, NaN, 3, -2] -> [153, 0, 255, 0], scale 5/255")],
    },
    Row {
        field: "quantize.dynamic_flat_scale",
        case: "DynamicQuantizeLinear: the scale of an all-zero input",
        onnx_text: OnnxText::Undefined,
        value: |p| format!("{:?}", p.quantize.dynamic_flat_scale),
        observations: &[(Profile::OnnxRuntime, "[0, 0] -> scale 1.0")],
    },
];
