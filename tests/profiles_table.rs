//! The decision table (tables/profiles.md): a row for every field of the policy table, and the
//! counts of where two profiles differ agree with what `lowbit diff` reports.

use lowbit::profile::{OnnxText, ROWS, SPEC};
use lowbit::tables::{profile_difference, INPUT_CLASSES};
use lowbit::verify::config::Config;
use lowbit::verify::sweep::diff;
use lowbit::verify::{Format, VerifyOptions};
use lowbit::DType;
use lowbit::Profile;
use lowbit::{CastOptions, RoundMode};

/// The fields of `Policy`, from its derived `Debug`: the top-level `name: value` lines, and for
/// the per-op parts (`strings`, `range`, `slice`, `quantize`) their fields as `part.field`.
fn policy_fields() -> Vec<String> {
    let mut fields = Vec::new();
    let mut part: Option<String> = None;
    for line in format!("{SPEC:#?}").lines() {
        if let Some(top) = line.strip_prefix("    ").filter(|l| !l.starts_with(' ')) {
            let Some((field, value)) = top.split_once(':') else { continue };
            part = None;
            if value.trim().ends_with("Policy {") {
                part = Some(field.to_string());
            } else {
                fields.push(field.to_string());
            }
        } else if let (Some(inner), Some(p)) = (line.strip_prefix("        ").filter(|l| !l.starts_with(' ')), &part) {
            if let Some((field, _)) = inner.split_once(':') {
                fields.push(format!("{p}.{field}"));
            }
        }
    }
    fields
}

#[test]
fn every_policy_field_is_a_row_in_order() {
    let fields: Vec<String> = policy_fields().into_iter().filter(|f| f != "name" && f != "peer").collect();
    let rows: Vec<&str> = ROWS.iter().map(|r| r.field).collect();
    assert_eq!(rows, fields);
}

#[test]
fn rows_name_their_profiles_once_and_undefined_rows_exist() {
    for row in ROWS {
        for (i, (p, note)) in row.observations.iter().enumerate() {
            assert!(!note.is_empty(), "{}: empty observation", row.field);
            assert!(row.observations[..i].iter().all(|(q, _)| q != p), "{}: {p:?} twice", row.field);
        }
    }
    // The residue rows this table exists for are marked undefined.
    for field in ["float_to_uint32", "vector_blocks", "nan_payloads", "float_to_integer"] {
        let row = ROWS.iter().find(|r| r.field == field).unwrap();
        assert_eq!(row.onnx_text, OnnxText::Undefined, "{field}");
    }
}

/// The value columns of the table for a few rows, written out by hand from the policy table.
#[test]
fn row_values_in_words() {
    let value = |field: &str, p: Profile| (ROWS.iter().find(|r| r.field == field).unwrap().value)(p.policy());
    assert_eq!(value("e5m2_nan", Profile::OnnxRuntime), "0x7F|s");
    assert_eq!(value("via_float32", Profile::Spec), "none: rounded once");
    assert_eq!(value("via_float32", Profile::Xla), "FLOAT16, BFLOAT16");
    assert_eq!(value("fixed_saturate", Profile::MlDtypes), "no such attribute: always saturate=0");
    assert_eq!(value("nan_to_float4", Profile::Xla), "0x8 (-0) whatever the sign");
    assert_eq!(value("sources_fall_back", Profile::Xla), "FLOAT6E2M3, FLOAT6E3M2");
    let blocks = value("vector_blocks", Profile::OnnxReference);
    assert!(blocks.starts_with("FLOAT, DOUBLE -> UINT32 in blocks of 4 (float_to_uint32 = vector"), "{blocks}");
}

/// The table's counts are `lowbit diff`'s: the same combination through both.
#[test]
fn differences_equal_lowbit_diff() {
    let combinations = [
        (DType::Float16, DType::Float8E4M3FN, Profile::Spec, Profile::OnnxRuntime, false, RoundMode::Up),
        (DType::Bfloat16, DType::Uint32, Profile::OnnxReference, Profile::Xla, true, RoundMode::Up),
        (DType::Int16, DType::Float8E8M0, Profile::MlDtypes, Profile::OnnxReference, true, RoundMode::Down),
        (DType::Float8E5M2FNUZ, DType::Float, Profile::Spec, Profile::Xla, true, RoundMode::Up),
        (DType::Float16, DType::Float16, Profile::Spec, Profile::Xla, true, RoundMode::Up),
    ];
    for (from, to, a, b, saturate, round_mode) in combinations {
        let opts = CastOptions { saturate, round_mode, profile: Profile::Spec };
        let table = profile_difference(from, to, &opts, a, b);
        let word = |p: Profile| {
            let mode = match round_mode {
                RoundMode::Up => "",
                RoundMode::Down => ",rtz",
                RoundMode::Nearest => ",rmm",
            };
            format!("profile={},saturate={}{mode}", p.name(), u8::from(saturate))
        };
        let defaults = VerifyOptions::default();
        let (ca, cb) = (Config::parse(&word(a), defaults).unwrap(), Config::parse(&word(b), defaults).unwrap());
        let (f, t) = (Format::Onnx(from), Format::Onnx(to));
        let report = diff(&f, &t, &ca, &cb, 1, &|_| {}).unwrap();
        let mut expected = [0u64; 7];
        for (name, count) in report.by_class {
            let k = INPUT_CLASSES.iter().position(|c| *c == name).unwrap_or_else(|| panic!("class {name}"));
            expected[k] += count;
        }
        assert_eq!(table, expected, "{from} -> {to} {a:?} vs {b:?}");
        assert_eq!(table.iter().sum::<u64>(), report.values, "{from} -> {to}");
    }
}
