//! QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear against outputs of the live peers:
//! tests/data/quant/<profile>/<case>/ holds random models (and the cases behind each profile row,
//! named `row_*`) with the output the onnx reference (`onnx-reference/`) or onnxruntime 1.31.1
//! (`onnxruntime/`) produced, written by `scripts/crosscheck_quant.py --write-fixtures`. Each must
//! come out of lowbit bit for bit under the profile named after its peer.

use lowbit::onnx::conformance::{run_test, test_dirs, Tolerance};
use lowbit::Profile;
use std::path::PathBuf;

fn check(profile: Profile) -> usize {
    let root = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/quant")).join(profile.name());
    let dirs = test_dirs(&[root]).unwrap();
    let failed: Vec<(String, String)> = dirs
        .iter()
        .map(|d| run_test(d, profile, Tolerance::Exact))
        .filter_map(|o| o.failure.map(|f| (o.name, f)))
        .collect();
    assert_eq!(failed, Vec::<(String, String)>::new());
    dirs.len()
}

#[test]
fn onnx_reference_outputs_are_reproduced() {
    assert!(check(Profile::OnnxReference) >= 40);
}

#[test]
fn onnxruntime_outputs_are_reproduced() {
    assert!(check(Profile::OnnxRuntime) >= 40);
}

/// The rows differ where the peers do: the other peer's profile fails on at least one row case of
/// each, so the fixtures pin the rows and not just the common ground.
#[test]
fn the_row_cases_separate_the_profiles() {
    for (fixtures, other) in
        [(Profile::OnnxReference, Profile::OnnxRuntime), (Profile::OnnxRuntime, Profile::OnnxReference)]
    {
        let root = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/quant")).join(fixtures.name());
        let rows: Vec<PathBuf> = test_dirs(&[root])
            .unwrap()
            .into_iter()
            .filter(|d| d.file_name().unwrap().to_string_lossy().starts_with("row_"))
            .collect();
        assert!(rows.len() >= 10, "{}", rows.len());
        let differing = rows.iter().filter(|d| run_test(d, other, Tolerance::Exact).failure.is_some()).count();
        assert!(differing >= 4, "{fixtures:?} rows that {other:?} gets wrong: {differing}");
    }
}
