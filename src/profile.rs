//! **The profile table.** A profile is a set of policy choices, one per row of SEMANTICS.md where
//! the ONNX text, the onnx reference and onnxruntime disagree. Conversion code reads these fields;
//! it never asks which profile it is running.
//!
//! This release implements the `spec` profile (the ONNX operator text plus the technical notes);
//! the other profiles of SEMANTICS.md are added as further rows of this table.

use crate::round::{NanFallback, RoundingMode};

/// One profile's answers to the disputed questions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Policy {
    /// The profile's name as the command line spells it.
    pub name: &'static str,
    /// Row 8: NaN into float4e2m1.
    pub nan_to_float4: NanFallback,
    /// NaN into float6 (research §11). The Cast-28 text is silent, so `spec` does what the onnx
    /// reference does.
    pub nan_to_float6: NanFallback,
    /// Row 10: how a float is rounded to an integer before its low bits go into int4/uint4/int2/
    /// uint2 (technical/int4.md: "nearest-integer with ties to even").
    pub float_to_subbyte_int: RoundingMode,
}

/// The default profile: the ONNX operator text of the newest version and the technical notes,
/// computed exactly and rounded once.
pub const SPEC: Policy = Policy {
    name: "spec",
    nan_to_float4: NanFallback::PositiveMax,
    nan_to_float6: NanFallback::SignFlippedNegativeZero,
    float_to_subbyte_int: RoundingMode::NearestEven,
};
