//! `tables/` is exactly what the generator writes today.
//!
//! Writing the tables sweeps 2^32 patterns twelve times for `verify/`, so the tests write them
//! once ([`generated`]) and each test that changes a file works on its own copy.

#[path = "support/files.rs"]
mod files;

use std::path::Path;
use std::sync::OnceLock;

fn committed() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tables"))
}

/// The tables as `lowbit::tables::write` writes them, written once for every test of this file,
/// with the number of files it reported.
fn generated() -> &'static (tempfile::TempDir, usize) {
    static GENERATED: OnceLock<(tempfile::TempDir, usize)> = OnceLock::new();
    GENERATED.get_or_init(|| {
        let tmp = tempfile::tempdir().unwrap();
        let written = lowbit::tables::write(tmp.path()).unwrap();
        (tmp, written)
    })
}

/// A copy of the generated tables that a test may change.
fn fresh_copy() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    files::copy_tree(generated().0.path(), tmp.path());
    tmp
}

#[test]
fn regenerated_tables_equal_the_committed_files() {
    let (tmp, written) = generated();
    let mut compared = 0;
    let sweeps = [Path::new("verify/README.md").to_owned(), Path::new("verify/sweep-digests.csv").to_owned()];
    for rel in lowbit::tables::render().keys().chain(&sweeps) {
        let fresh = std::fs::read(tmp.path().join(rel)).unwrap();
        let have = std::fs::read(committed().join(rel))
            .unwrap_or_else(|e| panic!("{} is missing from tables/: {e}", rel.display()));
        assert!(
            fresh == have,
            "tables/{} differs from what lowbit generates; run `lowbit tables --out tables`",
            rel.display()
        );
        compared += 1;
    }
    assert_eq!(*written, compared);
    // 14 code tables, 14 x 14 cast tables, digests.csv, profiles.md, recipes.md and README.md;
    // verify/'s sweep digests and README.
    assert_eq!(compared, 14 + 196 + 4 + 2);
    assert_eq!(lowbit::tables::check(committed()).unwrap(), compared);
}

#[test]
fn check_reports_a_changed_byte_and_a_stray_file() {
    let tmp = fresh_copy();
    let victim = tmp.path().join("cast").join("float8e4m3fn-float4e2m1.csv");
    let text = std::fs::read_to_string(&victim).unwrap().replacen("0x7", "0x6", 1);
    std::fs::write(&victim, text).unwrap();
    let err = lowbit::tables::check(tmp.path()).unwrap_err().to_string();
    assert!(err.contains("float8e4m3fn-float4e2m1.csv") && err.contains("line"), "{err}");

    let tmp = fresh_copy();
    std::fs::write(tmp.path().join("cast").join("float7-int3.csv"), "in\n").unwrap();
    let err = lowbit::tables::check(tmp.path()).unwrap_err().to_string();
    assert!(err.contains("float7-int3.csv"), "{err}");

    // A changed sweep digest, and a stray file among them.
    let tmp = fresh_copy();
    let digests = tmp.path().join("verify").join("sweep-digests.csv");
    let text = std::fs::read_to_string(&digests).unwrap();
    let last = text.trim_end().rsplit(',').next().unwrap().to_owned();
    let flipped = format!("{}{}", if last.starts_with('0') { '1' } else { '0' }, &last[1..]);
    std::fs::write(&digests, text.replace(&last, &flipped)).unwrap();
    let err = lowbit::tables::check(tmp.path()).unwrap_err().to_string();
    assert!(err.contains("sweep-digests.csv") && err.contains("line 13"), "{err}");
    std::fs::write(&digests, text).unwrap();
    std::fs::write(tmp.path().join("verify").join("float-int3.csv"), "in\n").unwrap();
    let err = lowbit::tables::check(tmp.path()).unwrap_err().to_string();
    assert!(err.contains("float-int3.csv"), "{err}");
}

#[test]
fn check_reports_every_difference_and_a_missing_folder() {
    let tmp = fresh_copy();
    let first = tmp.path().join("cast").join("float8e4m3fn-float4e2m1.csv");
    std::fs::write(&first, std::fs::read_to_string(&first).unwrap().replacen("0x7", "0x6", 1)).unwrap();
    std::fs::remove_file(tmp.path().join("cast").join("int4-uint4.csv")).unwrap();
    std::fs::write(tmp.path().join("cast").join("float7-int3.csv"), "in\n").unwrap();
    let err = lowbit::tables::check(tmp.path()).unwrap_err().to_string();
    assert!(err.contains("3 of 214 files differ"), "{err}");
    for name in ["float8e4m3fn-float4e2m1.csv: line", "int4-uint4.csv", "float7-int3.csv: lowbit does not generate"] {
        assert!(err.contains(name), "{name}\n{err}");
    }
    // An empty folder and a missing one are said as such, not as 214 missing files; a folder
    // that holds something else still lists every file.
    let empty = tempfile::tempdir().unwrap();
    let err = lowbit::tables::check(empty.path()).unwrap_err().to_string();
    assert!(err.contains("the folder is empty") && err.len() < 300, "{err}");
    let err = lowbit::tables::check(&empty.path().join("nope")).unwrap_err().to_string();
    assert!(err.contains("no such folder") && err.len() < 300, "{err}");
    std::fs::write(empty.path().join("notes.txt"), "x").unwrap();
    let err = lowbit::tables::check(empty.path()).unwrap_err().to_string();
    assert!(err.contains("214 of 214 files differ"), "{err}");
}
