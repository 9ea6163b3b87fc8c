//! The decision table in words: [`ROWS`], from which `tables/profiles.md` is generated.

use super::*;
use crate::alloc_prelude::*;
use crate::dtype::DType;
use crate::round::NanFallback;

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

fn payload(rule: NanPayload) -> String {
    match rule {
        NanPayload::QuietTopBits => "top bits, quiet".into(),
        NanPayload::TopBitsNonzero => "top bits as they are (nonzero)".into(),
        NanPayload::Exact => "bits as they are".into(),
        NanPayload::Canonical => "canonical".into(),
        NanPayload::Fixed(code) => format!("0x{code:X}"),
    }
}

fn e8m0_rule(rule: E8M0Rule) -> String {
    match rule {
        E8M0Rule::Spec => "the Cast-24 table, round_mode as worded".into(),
        E8M0Rule::Reference => "onnx's to_float8e8m0 on the float32 bits (sign ignored, Inf -> NaN)".into(),
        E8M0Rule::OnnxRuntime => "Cast-24 but negatives -> 0x00 or NaN, above 2^127 judged before rounding".into(),
        E8M0Rule::NearestPowerOfTwo { tiny, of_magnitude: false } => format!(
            "nearest power of two, 1.5 * 2^k up, no attributes; <= 0 and NaN -> 0xFF, below 2^-127 -> 0x{tiny:02X}"
        ),
        E8M0Rule::NearestPowerOfTwo { tiny, of_magnitude: true } => format!(
            "nearest power of two of |x|, 1.5 * 2^k up, no attributes; NaN and ±Inf -> 0xFF, ±0 and below 2^-127 -> 0x{tiny:02X}"
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
            (Profile::Torch, "float64 1 + 2^-11 + 2^-30 -> FLOAT16 0x3C00; int64 16842753 -> BFLOAT16 0x4B80"),
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
        observations: &[
            (Profile::OnnxRuntime, "float32 NaN -> 0x7F, -NaN -> 0xFF"),
            (Profile::Torch, "float32 NaN -> 0x7F, -NaN -> 0xFF; E4M3FNUZ 0x80 -> 0x7F"),
        ],
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
            (Profile::Torch, "E4M3FNUZ 0x80 -> FLOAT 0x7F800001, -> E4M3FN 0x7F"),
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
            (Profile::Torch, "FLOAT16 0x7E00 -> FLOAT 0x7FFFFFFF (alone); FLOAT16 0xFE00 -> BFLOAT16 0x7FC0; BFLOAT16 0x7F81 -> FLOAT16 0x7E08"),
            (Profile::TorchDefault, "BFLOAT16 0x7F81 -> FLOAT16 0x7E00; DOUBLE 0xFFFFFFFFFFFFFFFF -> FLOAT16 0xFE00"),
        ],
    },
    Row {
        field: "nan_by_pair",
        case: "NaN codes for particular pairs, float8 sources into FLOAT, DOUBLE, FLOAT16 and BFLOAT16 included",
        onnx_text: OnnxText::Undefined,
        value: |p| {
            if p.nan_by_pair.is_empty() {
                return "none (float8 NaN -> the canonical NaN with its sign)".into();
            }
            p.nan_by_pair
                .iter()
                .map(|(f, t, rule)| format!("{} -> {}: {}", f.onnx_name(), t.onnx_name(), payload(*rule)))
                .collect::<Vec<_>>()
                .join("; ")
        },
        observations: &[
            (
                Profile::Torch,
                "FLOAT 0x7FC00000 -> BFLOAT16 0xFFFF; E4M3FN 0xFF -> FLOAT 0xFFF00000; E5M2 0x7D -> FLOAT 0x7FE00000; \
                 E4M3FNUZ 0x80 and E8M0 0xFF -> FLOAT 0x7F800001, DOUBLE 0x7FF8000020000000",
            ),
            (Profile::TorchDefault, "FLOAT 0xFFC00000 -> BFLOAT16 0x7FC0; E4M3FN 0xFF -> FLOAT16 0xFE00"),
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
            (Profile::Torch, "tensors of 1 to 69 NaN: FLOAT -> UINT32 0x80000000 in blocks of 4; FLOAT16 -> FLOAT 0x7FC00000 in blocks of 8, 0x7FFFFFFF after; DOUBLE -> BFLOAT16 0xFFFF in blocks of 16"),
            (Profile::TorchDefault, "FLOAT16 NaN -> UINT32 0x80000000 in blocks of 8, E5M2 NaN in blocks of 16"),
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
            (Profile::Torch, "one float32 -2147483904 -> 0x7FFFFF00, NaN -> 0; every FLOAT16 NaN -> 0"),
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
            (Profile::Torch, "through float32: E5M2 0x7C -> INT32 0x80000000, -> INT8 0"),
        ],
    },
    Row {
        field: "nan_to_integer_zero",
        case: "Sources whose NaN becomes integer 0",
        onnx_text: OnnxText::Undefined,
        value: |p| dtype_list(p.nan_to_integer_zero),
        observations: &[
            (Profile::OnnxReference, "E8M0 0xFF -> INT32 0"),
            (Profile::OnnxRuntime, "E8M0 0xFF -> INT32 0"),
            (Profile::Torch, "E4M3FNUZ 0x80 -> INT32 0, INT64 0, UINT64 0"),
        ],
    },
    Row {
        field: "float_to_uint8_through_int64",
        case: "How a float out of int32's range becomes UINT8",
        onnx_text: OnnxText::Undefined,
        value: |p| {
            yes_no(p.float_to_uint8_through_int64, "low 8 bits of the int64 conversion", "low 8 bits of the int32 conversion")
        },
        observations: &[
            (Profile::OnnxReference, "DOUBLE 4294967295 -> UINT8 0x00"),
            (Profile::Torch, "DOUBLE 4294967295 -> UINT8 0xFF, 2^40 + 7 -> 0x07"),
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
            (Profile::Torch, "float32 -4 -> 0x81, 0 -> 0x00, 0x7F7FFFFF -> 0xFF, +Inf -> 0xFF; int32 -1 -> 0x7F"),
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
            (Profile::Torch, "float32 1e10 -> E5M2 0x7C, E4M3FNUZ 0x80"),
        ],
    },
    Row {
        field: "saturate_by_target",
        case: "Targets that convert with a saturate of their own (no attribute)",
        onnx_text: OnnxText::Decides,
        value: |p| {
            if p.saturate_by_target.is_empty() {
                return "none".into();
            }
            p.saturate_by_target
                .iter()
                .map(|(d, sat)| format!("{}: saturate={}", d.onnx_name(), u8::from(*sat)))
                .collect::<Vec<_>>()
                .join("; ")
        },
        observations: &[(Profile::Torch, "float32 1e10 and +Inf -> E4M3FN 0x7E, -Inf -> 0xFE")],
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
            (Profile::Torch, "no string, float4 (but packed x2), float6, int4 or int2 dtype with casts"),
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
        field: "named_formats",
        case: "The named formats (ml_dtypes' float8_e3m4, float8_e4m3, float8_e4m3b11fnuz) and the ONNX dtype whose rows their casts follow",
        onnx_text: OnnxText::Coverage,
        value: |p| {
            if p.named_formats.is_empty() {
                return "none: named formats convert IEEE-style, as under `spec` (not ONNX types)".into();
            }
            p.named_formats.iter().map(|n| format!("{} as {}", n.format, n.rows_of.onnx_name())).collect::<Vec<_>>().join(", ")
        },
        observations: &[
            (Profile::MlDtypes, "float8_e3m4 0x21 (0.53) -> INT8 0 (truncated), float8_e4m3 240 -> INT8 -16, NaN 0x71 -> FLOAT4E2M1 0x8, 0xF1 -> FLOAT 0xFFC00000, float64 0x3FF1000000400000 -> float8_e4m3 0x38 (through float32)"),
            (Profile::Xla, "float8_e4m3 240 -> INT8 127 (saturating), float8_e3m4 NaN 0x71 and 0xF1 -> FLOAT4E2M1 0x8 and -> FLOAT8E5M2 0x7F, float64 0x3FF1000000400000 -> float8_e4m3 0x39 (rounded once)"),
        ],
    },
    Row {
        field: "named_integers",
        case: "The named integer types (ml_dtypes' int1, uint1) and the ONNX dtype whose rows their casts follow at their own width",
        onnx_text: OnnxText::Coverage,
        value: |p| {
            if p.named_integers.is_empty() {
                return "none: int1 and uint1 convert IEEE-style, as under `spec` (not ONNX types)".into();
            }
            p.named_integers.iter().map(|n| format!("{} as {}", n.format, n.rows_of.onnx_name())).collect::<Vec<_>>().join(", ")
        },
        observations: &[
            (Profile::MlDtypes, "FLOAT 2.0 -> int1 0, 1.5 and -1.0 -> int1 1 (-1), NaN and inf -> 0; INT8 3 -> uint1 1; int1 1 -> INT4 0xF (-1); FLOAT6E2M3 0.625 -> int1 0 (no FLOAT6E2M3 -> INT4 cast, yet this one)"),
            (Profile::Xla, "jax 0.12.0.1: FLOAT 2.0 -> int1 lowers to x != 0 and reads back as bool True; int1 -> anything fails at run time (buffer size mismatch); uint1 does not lower"),
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
        field: "quantize.special_paths",
        case: "QuantizeLinear to an integer: NaN, ±Inf, beyond int32, on the paths (input, output, layout) with another rule",
        onnx_text: OnnxText::Undefined,
        value: |p| {
            let mut text = Vec::new();
            for path in p.quantize.special_paths {
                let inputs = if path.inputs.is_empty() { "any".into() } else { dtype_list(path.inputs) };
                let outputs = if path.outputs.is_empty() { "any integer".into() } else { dtype_list(path.outputs) };
                let layout = match path.layout {
                    SpecialsLayout::Any => "",
                    SpecialsLayout::BlockedBeforeInner => ", blocked along an axis with elements after it",
                    SpecialsLayout::SplitByte => ", an element sharing its byte with no element of its scale",
                };
                text.push(format!("{:?} from {inputs} into {outputs}{layout} (observed: {})", path.specials, path.observed));
            }
            if text.is_empty() {
                "none".into()
            } else {
                text.join("; ")
            }
        },
        observations: &[],
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
