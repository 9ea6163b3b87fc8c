//! The command line: exit codes and one readable line on bad input.

use std::process::Command;

fn lowbit(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_lowbit")).args(args).output().unwrap();
    (out.status.success(), String::from_utf8(out.stdout).unwrap(), String::from_utf8(out.stderr).unwrap())
}

#[test]
fn unknown_dtype_is_one_line_listing_the_valid_names() {
    let (ok, _, err) = lowbit(&["info", "float7"]);
    assert!(!ok);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("unknown dtype \"float7\"") && err.contains("FLOAT8E4M3FN") && err.contains("bf16"), "{err}");
}

#[test]
fn info_describes_a_format() {
    let (ok, out, _) = lowbit(&["info", "float8_e4m3fn"]);
    assert!(ok);
    assert!(out.contains("FLOAT8E4M3FN (ONNX 17)") && out.contains("max: 448 (code 0x7e)"), "{out}");
}

#[test]
fn tables_check_passes_on_the_committed_tables_and_fails_on_a_missing_folder() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tables");
    let (ok, out, err) = lowbit(&["tables", "--check", dir]);
    assert!(ok, "{err}");
    assert!(out.contains("212 files"), "{out}");
    let (ok, _, err) = lowbit(&["tables", "--check", "/nonexistent/lowbit-tables"]);
    assert!(!ok);
    assert!(err.contains("/nonexistent/lowbit-tables"), "{err}");
}
