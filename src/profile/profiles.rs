//! Each profile's answers: one [`Policy`] value per implementation, with the observations behind
//! its rows in `rows.rs` (and `tables/profiles.md`).

use super::*;
use crate::dtype::DType;
use crate::round::{NanFallback, RoundingMode};

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
    saturate_by_target: &[],
    nan_by_pair: &[],
    nan_to_integer_zero: &[DType::Float8E8M0],
    float_to_uint8_through_int64: false,
    flush_subnormals: &[],
    saturate_zero_needs_float8: false,
    cast_falls_back: &[],
    sources_fall_back: &[],
    pairs_fall_back: &[],
    // ONNX has none of them.
    named_formats: &[],
    named_integers: &[],
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
        special_paths: &[],
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
    saturate_by_target: &[],
    nan_by_pair: &[],
    nan_to_integer_zero: &[DType::Float8E8M0],
    float_to_uint8_through_int64: false,
    flush_subnormals: &[],
    saturate_zero_needs_float8: false,
    cast_falls_back: &[],
    sources_fall_back: &[],
    pairs_fall_back: REFERENCE_MISSING_CASTS,
    // ONNX models hold no named formats.
    named_formats: &[],
    named_integers: &[],
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
        special_paths: &[],
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
    saturate_by_target: &[],
    nan_by_pair: &[],
    nan_to_integer_zero: &[DType::Float8E8M0],
    float_to_uint8_through_int64: false,
    flush_subnormals: &[],
    saturate_zero_needs_float8: true,
    // No CPU kernel for float4 (Cast 23-25 NOT_IMPLEMENTED); opset 28 (float6) does not load.
    cast_falls_back: &[DType::Float4E2M1, DType::Float6E2M3, DType::Float6E3M2],
    sources_fall_back: &[],
    pairs_fall_back: &[],
    // ONNX models hold no named formats.
    named_formats: &[],
    named_integers: &[],
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
        special_paths: ONNXRUNTIME_SPECIAL_PATHS,
        float8_adds_zero_point: false,
        dequantize_arithmetic: DequantizeArithmetic::Float32,
        // No float4 DequantizeLinear kernel: `spec`'s rule.
        dequantize_float4_ignores_zero_point: false,
        dynamic_nan: DynamicNan::Skipped,
        dynamic_flat_scale: DynamicFlatScale::One,
    },
};

/// Where onnxruntime 1.31.1's QuantizeLinear takes a float -> int32 step before clamping (the x86
/// integer indefinite for NaN, ±Inf and quotients beyond int32, then the zero point added with
/// wraparound) instead of saturating: observed with `scripts/crosscheck_quant.py --specials-paths`
/// (every integer output x float32 and float16 input x per-tensor, per-axis and blocked layouts);
/// `docs/research/quantize_specials.md` has the table.
const ONNXRUNTIME_SPECIAL_PATHS: &[SpecialsPath] = &[
    SpecialsPath {
        inputs: &[DType::Float16],
        outputs: &[],
        layout: SpecialsLayout::Any,
        specials: QuantizeSpecials::Int32Wraparound,
        observed: "INT8, zero point -5: [Inf, -Inf, NaN] -> 127",
    },
    SpecialsPath {
        inputs: &[DType::Float],
        outputs: &[DType::Int2, DType::Uint2],
        layout: SpecialsLayout::Any,
        specials: QuantizeSpecials::Int32Wraparound,
        observed: "INT2 per tensor: +Inf -> -2",
    },
    SpecialsPath {
        inputs: &[DType::Float],
        outputs: &[DType::Int8, DType::Uint8, DType::Int16, DType::Uint16],
        layout: SpecialsLayout::BlockedBeforeInner,
        specials: QuantizeSpecials::Int32Wraparound,
        observed: "INT8 blocked along axis 0 of [2, 2]: +Inf -> -128",
    },
    SpecialsPath {
        inputs: &[DType::Float],
        outputs: &[DType::Int4, DType::Uint4],
        layout: SpecialsLayout::SplitByte,
        specials: QuantizeSpecials::Int32Wraparound,
        observed: "INT4 per tensor, [Inf, Inf, Inf] -> [7, 7, -8]",
    },
];

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
    e8m0: E8M0Rule::NearestPowerOfTwo { tiny: 0x00, of_magnitude: false },
    fixed_saturate: Some(false),
    pairs_fall_back: ML_DTYPES_MISSING_CASTS,
    named_formats: ML_DTYPES_NAMED,
    named_integers: ML_DTYPES_NAMED_INTEGERS,
    strings: StringPolicy {
        grammar: StringGrammar::Python,
        number_style: NumberStyle::Numpy,
        fall_back: StringFallbacks::both(ML_DTYPES_ONLY),
    },
    ..SPEC
};

/// ml_dtypes' float8 types that ONNX does not have: one template converts every float8 type, so
/// the IEEE-like ones follow FLOAT8E5M2's rows and the FNUZ one FLOAT8E4M3FNUZ's (observed with
/// scripts/crosscheck_ml_dtypes.py and scripts/crosscheck_xla.py: float8_e3m4 0.53 -> INT8 0 as
/// E5M2 truncates, NaN -> FLOAT4E2M1 0x8, float64 reaching it through float32; identity a copy).
/// ml_dtypes' `int1` and `uint1`: its sub-byte integer types share one template, so they cast
/// as INT4 and UINT4 do at one bit (float -> int1 keeps the low bit of the integer part: 2.0 -> 0,
/// 1.5 and -1.0 -> code 1; NaN and infinities -> 0). Observed with ml_dtypes 0.6.0 by
/// scripts/crosscheck_ml_dtypes.py, as are the pairs `astype` refuses (TypeError). XLA (jax 0.12.0.1) has no cast for them: into int1 it
/// lowers to a bool test (2.0 -> 1) whose array it cannot read back as int1, and it refuses uint1.
const ML_DTYPES_NAMED_INTEGERS: &[NamedIntegerRows] = &[
    NamedIntegerRows {
        format: &crate::format::INT1,
        rows_of: DType::Int4,
        no_cast_from: &["INT4", "UINT4", "INT2", "UINT2", "FLOAT8E8M0", "STRING", "uint1"],
        no_cast_to: &["UINT4", "UINT2", "FLOAT8E8M0", "STRING", "uint1"],
    },
    NamedIntegerRows {
        format: &crate::format::UINT1,
        rows_of: DType::Uint4,
        no_cast_from: &["INT4", "UINT4", "INT2", "UINT2", "FLOAT8E8M0", "STRING", "int1"],
        no_cast_to: &["INT4", "INT2", "FLOAT8E8M0", "STRING", "int1"],
    },
];

const ML_DTYPES_NAMED: &[NamedFormatRows] = &[
    NamedFormatRows { format: &crate::format::FLOAT8_E3M4, rows_of: DType::Float8E5M2 },
    NamedFormatRows { format: &crate::format::FLOAT8_E4M3, rows_of: DType::Float8E5M2 },
    NamedFormatRows { format: &crate::format::FLOAT8_E4M3B11FNUZ, rows_of: DType::Float8E4M3FNUZ },
];

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
        // E5M2 -> E5M2 is a copy; this is for the named formats that follow E5M2's rows
        // (observed: float8_e3m4 0x71 -> 0x7F, float8_e4m3 0x79 -> 0x7F).
        (DType::Float8E5M2, XLA_E5M2_NAN),
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
    e8m0: E8M0Rule::NearestPowerOfTwo { tiny: 0x00, of_magnitude: false },
    e8m0_by_source: &[(DType::Double, E8M0Rule::NearestPowerOfTwo { tiny: 0xFF, of_magnitude: false })],
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
    named_formats: ML_DTYPES_NAMED,
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

/// PyTorch 2.15.0 `Tensor.to(dtype)` on the CPU, x86-64, as its AVX2 and AVX-512 kernels convert
/// (ATEN_CPU_CAPABILITY=avx2 and avx512 give the same codes; `default` differs on NaN codes in
/// eight pairs, docs/research/torch_casts.md). Observed with scripts/crosscheck_torch.py. torch has
/// no saturate or round_mode attribute, no strings, no float4/float6 casts and no int4/int2;
/// Range, Slice and QuantizeLinear are not torch's, so those rows are `spec`'s.
pub const TORCH: Policy = Policy { vector_blocks: TORCH_BLOCKS, ..TORCH_ROWS };

const TORCH_ROWS: Policy = Policy {
    name: "torch",
    peer: "PyTorch 2.15.0 Tensor.to on the CPU, x86-64 (AVX2 and AVX-512 kernels)",
    // c10's Half, BFloat16 and float8 types are built from a float: every narrowing from double or
    // a 32/64-bit integer rounds to float32 first (float64 1 + 2^-11 + 2^-30 -> FLOAT16 0x3C00).
    via_float32: ViaFloat32 { float16: true, bfloat16: true, float8: true, float6: true, float4: true },
    // float32 NaN -> E5M2 0x7F, -NaN -> 0xFF.
    e5m2_nan: 0x7F,
    // FNUZ 0x80 -> float32 0x7F800001 (positive): -> E4M3FN 0x7F.
    fnuz_nan_is_negative: false,
    nan_payloads: NanPayloads {
        // The scalar loop (the tail after the blocks of 8): every NaN -> 0x7FFFFFFF.
        float16_to_float32: NanPayload::Fixed(0x7FFF_FFFF),
        float16_to_float64: NanPayload::QuietTopBits,
        bfloat16_to_float32: NanPayload::Exact,
        bfloat16_to_float64: NanPayload::QuietTopBits,
        to_float16: NanPayload::QuietTopBits,
        float64_to_float16: NanPayload::QuietTopBits,
        // bfloat16 0x7F81 -> float16 0x7E08.
        bfloat16_to_float16: NanPayload::QuietTopBits,
        // float16 and float64 (outside its blocks) -> 0x7FC0 whatever the sign.
        to_bfloat16: NanPayload::Fixed(0x7FC0),
    },
    nan_by_pair: TORCH_NAN,
    // The scalar loop: float32 -2147483904 -> 0x7FFFFF00, NaN -> 0.
    float_to_uint32: Uint32Conversion::LowBitsOfInt64,
    // E5M2 +Inf -> INT32 0x80000000, E4M3FN NaN -> INT64 0x8000000000000000.
    float8_specials_to_integer: Float8SpecialsToInteger::LikeFloat32,
    // FNUZ 0x80 -> INT32 0, UINT64 0.
    nan_to_integer_zero: &[DType::Float8E8M0, DType::Float8E4M3FNUZ, DType::Float8E5M2FNUZ],
    // float64 4294967295 -> UINT8 0xFF.
    float_to_uint8_through_int64: true,
    // float32 -4 -> 0x81, 0 -> 0x00, 0x7F7FFFFF -> 0xFF, +Inf -> 0xFF.
    e8m0: E8M0Rule::NearestPowerOfTwo { tiny: 0x00, of_magnitude: true },
    // E4M3FN saturates (float32 1e10 and +Inf -> 0x7E); E5M2 and the FNUZ types do not (1e10 ->
    // E5M2 0x7C, E4M3FNUZ 0x80).
    fixed_saturate: Some(false),
    saturate_by_target: &[(DType::Float8E4M3FN, true)],
    cast_falls_back: &[
        DType::Float4E2M1,
        DType::Float6E2M3,
        DType::Float6E3M2,
        DType::Int4,
        DType::Uint4,
        DType::Int2,
        DType::Uint2,
        DType::String,
    ],
    ..SPEC
};

/// torch's NaN codes by pair (row `nan_by_pair`).
const TORCH_NAN: &[(DType, DType, NanPayload); 21] = &[
    // float32 -> bfloat16 at every position: 0xFFFF.
    (DType::Float, DType::Bfloat16, NanPayload::Fixed(0xFFFF)),
    // E4M3FN and E5M2 widen their fraction bits, quiet (E4M3FN 0xFF -> float32 0xFFF00000,
    // E5M2 0x7D -> 0x7FE00000); into bfloat16 0x7FC0.
    (DType::Float8E4M3FN, DType::Float, NanPayload::QuietTopBits),
    (DType::Float8E4M3FN, DType::Double, NanPayload::QuietTopBits),
    (DType::Float8E4M3FN, DType::Float16, NanPayload::QuietTopBits),
    (DType::Float8E4M3FN, DType::Bfloat16, NanPayload::Fixed(0x7FC0)),
    (DType::Float8E5M2, DType::Float, NanPayload::QuietTopBits),
    (DType::Float8E5M2, DType::Double, NanPayload::QuietTopBits),
    (DType::Float8E5M2, DType::Float16, NanPayload::QuietTopBits),
    (DType::Float8E5M2, DType::Bfloat16, NanPayload::Fixed(0x7FC0)),
    // The FNUZ NaN and E8M0's become the float32 signalling NaN 0x7F800001 (c10's
    // fp8_fnuz_to_fp32_value and Float8_e8m0fnu's operator float), quieted into float64.
    (DType::Float8E4M3FNUZ, DType::Float, NanPayload::Fixed(0x7F80_0001)),
    (DType::Float8E4M3FNUZ, DType::Double, NanPayload::Fixed(0x7FF8_0000_2000_0000)),
    (DType::Float8E4M3FNUZ, DType::Float16, NanPayload::Fixed(0x7E00)),
    (DType::Float8E4M3FNUZ, DType::Bfloat16, NanPayload::Fixed(0x7FC0)),
    (DType::Float8E5M2FNUZ, DType::Float, NanPayload::Fixed(0x7F80_0001)),
    (DType::Float8E5M2FNUZ, DType::Double, NanPayload::Fixed(0x7FF8_0000_2000_0000)),
    (DType::Float8E5M2FNUZ, DType::Float16, NanPayload::Fixed(0x7E00)),
    (DType::Float8E5M2FNUZ, DType::Bfloat16, NanPayload::Fixed(0x7FC0)),
    (DType::Float8E8M0, DType::Float, NanPayload::Fixed(0x7F80_0001)),
    (DType::Float8E8M0, DType::Double, NanPayload::Fixed(0x7FF8_0000_2000_0000)),
    (DType::Float8E8M0, DType::Float16, NanPayload::Fixed(0x7E00)),
    (DType::Float8E8M0, DType::Bfloat16, NanPayload::Fixed(0x7FC0)),
];

/// torch's vectorised loops: float32 and float64 -> uint32 in blocks of 4, bfloat16 -> uint32,
/// float16 -> float32 in blocks of 8, float64 -> bfloat16 in blocks of 16.
const TORCH_BLOCKS: &[VectorBlock] = &[
    VectorBlock {
        sources: &[DType::Float, DType::Double],
        targets: &[DType::Uint32],
        length: 4,
        policy: &TORCH_VECTOR,
    },
    VectorBlock { sources: &[DType::Bfloat16], targets: &[DType::Uint32], length: 8, policy: &TORCH_VECTOR },
    VectorBlock { sources: &[DType::Float16], targets: &[DType::Float], length: 8, policy: &TORCH_VECTOR },
    VectorBlock { sources: &[DType::Double], targets: &[DType::Bfloat16], length: 16, policy: &TORCH_VECTOR },
];

/// torch inside its vector blocks: NaN -> uint32 0x80000000, float16 NaN -> float32 with its top
/// payload bits, quiet; float64 NaN -> bfloat16 0xFFFF.
const TORCH_VECTOR: Policy = Policy {
    name: "torch (vector blocks)",
    nan_payloads: NanPayloads { float16_to_float32: NanPayload::QuietTopBits, ..TORCH_ROWS.nan_payloads },
    nan_by_pair: &[(DType::Double, DType::Bfloat16, NanPayload::Fixed(0xFFFF))],
    float_to_uint32: Uint32Conversion::Vector,
    ..TORCH_ROWS
};

/// PyTorch 2.15.0 under `ATEN_CPU_CAPABILITY=default` (its kernels compiled without AVX2): the
/// `torch` rows but for NaN codes in eight pairs (docs/research/torch_casts.md §2).
pub const TORCH_DEFAULT: Policy = Policy {
    name: "torch-default",
    peer: "PyTorch 2.15.0 Tensor.to on the CPU, x86-64, ATEN_CPU_CAPABILITY=default",
    nan_payloads: NanPayloads {
        // float64 0x7FFFFFFFFFFFFFFF -> FLOAT16 0x7E00; bfloat16 0x7F81 -> 0x7E00.
        float64_to_float16: NanPayload::Canonical,
        bfloat16_to_float16: NanPayload::Canonical,
        ..TORCH_ROWS.nan_payloads
    },
    nan_by_pair: TORCH_DEFAULT_NAN,
    vector_blocks: TORCH_DEFAULT_BLOCKS,
    ..TORCH_ROWS
};

/// [`TORCH_ROWS`]' `nan_by_pair` with float32 -> bfloat16 0x7FC0 and float8 -> float16 canonical.
const TORCH_DEFAULT_NAN: &[(DType, DType, NanPayload)] = &{
    let mut rows = *TORCH_NAN;
    let mut i = 0;
    while i < rows.len() {
        rows[i].2 = match (rows[i].0, rows[i].1) {
            (DType::Float, DType::Bfloat16) => NanPayload::Fixed(0x7FC0),
            (DType::Float8E4M3FN | DType::Float8E5M2, DType::Float16) => NanPayload::Canonical,
            _ => rows[i].2,
        };
        i += 1;
    }
    rows
};

/// torch-default's vectorised loops: float32 and float64 -> uint32 in blocks of 4, bfloat16 and
/// float16 -> uint32 and float16 -> float32 in blocks of 8, E5M2 -> uint32 in blocks of 16; no
/// float64 -> bfloat16 blocks.
const TORCH_DEFAULT_BLOCKS: &[VectorBlock] = &[
    TORCH_BLOCKS[0],
    VectorBlock {
        sources: &[DType::Bfloat16, DType::Float16],
        targets: &[DType::Uint32],
        length: 8,
        policy: &TORCH_VECTOR,
    },
    TORCH_BLOCKS[2],
    VectorBlock { sources: &[DType::Float8E5M2], targets: &[DType::Uint32], length: 16, policy: &TORCH_VECTOR },
];
