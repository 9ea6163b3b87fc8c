//! What the oracle tests share: the mapping from lowbit's dtypes to the oracle's formats, the
//! attribute sets each target is tested with, and the `spec` answer for one element, assembled
//! from the oracle's exact functions and the `spec` rules of tables/profiles.md (never from lowbit's code).
//! Test files include it next to the oracle:
//! `#[path = "support/oracle.rs"] mod oracle;` and `#[path = "support/harness.rs"] mod harness;`.

#![allow(dead_code)]

use crate::oracle::{self, OFormat, OMode, OValue};
use lowbit::{CastOptions, RoundMode};
use lowbit::{DType, Kind};

/// The oracle's name for a numeric dtype (`None` for BOOL, STRING and the rest).
pub fn oformat(d: DType) -> Option<OFormat> {
    Some(match d {
        DType::Float8E4M3FN => OFormat::E4M3FN,
        DType::Float8E4M3FNUZ => OFormat::E4M3FNUZ,
        DType::Float8E5M2 => OFormat::E5M2,
        DType::Float8E5M2FNUZ => OFormat::E5M2FNUZ,
        DType::Float8E8M0 => OFormat::E8M0,
        DType::Float6E2M3 => OFormat::E2M3,
        DType::Float6E3M2 => OFormat::E3M2,
        DType::Float4E2M1 => OFormat::E2M1,
        DType::Float16 => OFormat::F16,
        DType::Bfloat16 => OFormat::BF16,
        DType::Float => OFormat::F32,
        DType::Double => OFormat::F64,
        other => match other.kind() {
            Kind::Integer { bits, signed } => OFormat::Int { bits, signed },
            _ => return None,
        },
    })
}

/// Every attribute set a target is tested with: saturate 1 and 0, and for E8M0 each round_mode.
pub fn option_sets(to: DType) -> Vec<(CastOptions, OMode)> {
    let modes: Vec<(RoundMode, OMode)> = if to == DType::Float8E8M0 {
        vec![
            (RoundMode::Up, OMode::Up),
            (RoundMode::Down, OMode::TowardZero),
            (RoundMode::Nearest, OMode::NearestTiesUp),
        ]
    } else {
        vec![(RoundMode::Up, OMode::NearestEven)]
    };
    modes
        .into_iter()
        .flat_map(|(round_mode, omode)| {
            [true, false].map(|saturate| (CastOptions { saturate, round_mode, ..CastOptions::default() }, omode))
        })
        .collect()
}

/// Every code of a dtype (BOOL's are 0 and 1; its other byte values are not codes).
pub fn all_codes(d: DType) -> std::ops::RangeInclusive<u64> {
    if d == DType::Bool {
        0..=1
    } else {
        0..=d.code_mask()
    }
}

/// The `spec` result of casting one code, or `None` where the oracle has no say (NaN payloads
/// between IEEE formats, profile field `nan_payloads`, which tests/profiles.rs checks).
pub fn oracle_cast(from: DType, to: DType, code: u64, opts: &CastOptions, mode: OMode) -> Option<u64> {
    let integer_source = matches!(from.kind(), Kind::Integer { .. } | Kind::Bool);
    let value = match oformat(from) {
        Some(f) => oracle::decode(f, code),
        None => OValue::from_i128(i128::from(code)), // bool: 0 or 1
    };
    if to == DType::Bool {
        // Profile field `float8_to_bool` (`spec`): x != 0; NaN is true.
        return Some(u64::from(value.is_nan() || !value.is_zero()));
    }
    let target = oformat(to)?;
    if let (Some(8), OFormat::Int { bits, signed }) = (from.float_format().map(|f| f.width()), target) {
        if let Some(code) = oracle::encode_int_from_float8_special(&value, bits, signed) {
            return Some(code);
        }
    }
    // `saturate` is only for float8 targets (profile field `fixed_saturate`).
    let saturate = opts.saturate && to.bits() == Some(8) && matches!(to.kind(), Kind::Float(_));
    let ieee = matches!(target, OFormat::F16 | OFormat::BF16 | OFormat::F32 | OFormat::F64);
    if value.is_nan() && ieee && matches!(from, DType::Float16 | DType::Bfloat16 | DType::Float | DType::Double) {
        return None;
    }
    Some(if integer_source {
        oracle::encode_from_int_source(target, &value, saturate, mode)
    } else {
        oracle::encode(target, &value, saturate, mode)
    })
}
