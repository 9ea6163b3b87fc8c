//! `lowbit cast IN.pb OUT.pb` where OUT is a symbolic link: the cast writes through the link, as
//! `sort -o` does, all or nothing (the file at the end of the links is replaced whole, the link
//! stays a link). A link to nothing, a chain ending at nothing, a link to a folder and a loop are
//! errors naming where the chain ends, with nothing written; a cast that fails while writing
//! leaves the linked file as it was. Unix only (symbolic links).
#![cfg(unix)]

#[path = "support/models.rs"]
mod models;

#[path = "support/files.rs"]
mod files;

use files::tree;
use lowbit::DType;
use models::*;
use std::os::unix::fs::symlink;
use std::path::Path;
use std::process::Command;

struct Outcome {
    ok: bool,
    stderr: String,
}

fn lowbit_cast(to: &str, input: &Path, output: &Path) -> Outcome {
    let out =
        Command::new(env!("CARGO_BIN_EXE_lowbit")).args(["cast", "--to", to]).arg(input).arg(output).output().unwrap();
    Outcome { ok: out.status.success(), stderr: String::from_utf8_lossy(&out.stderr).into_owned() }
}

/// `in.pb` in `dir`: 1000 float32 values (0, 1, 2, ...).
fn input(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("in.pb");
    write_tensor(&path, &floats(1000));
    path
}

fn read(path: &Path) -> lowbit::Tensor {
    lowbit::onnx::tensor_proto::read_tensor_file(path).unwrap()
}

#[test]
fn an_in_place_cast_through_a_link_replaces_the_linked_file() {
    let dir = tempfile::tempdir().unwrap();
    let input = input(dir.path());
    let link = dir.path().join("out.pb");
    symlink("in.pb", &link).unwrap();
    let out = lowbit_cast("float16", &input, &link);
    assert!(out.ok, "{}", out.stderr);
    // The link is still a link to in.pb, which now holds the float16 values.
    assert_eq!(std::fs::read_link(&link).unwrap(), Path::new("in.pb"));
    let back = read(&input);
    assert_eq!((back.dtype(), back.shape()), (DType::Float16, &[1000][..]));
    // float16 codes: 1 = 0x3C00, 2 = 0x4000; 999 = 1.951171875 * 2^9: exponent 9 + 15 = 24
    // (0x6000), fraction 0.951171875 * 1024 = 974 = 0x3CE.
    let codes = back.codes().unwrap();
    assert_eq!([codes[0], codes[1], codes[2], codes[999]], [0, 0x3C00, 0x4000, 0x63CE]);
    assert_eq!(tree(dir.path()), ["in.pb", "out.pb"]);
}

#[test]
fn a_relative_chain_of_links_is_followed_from_each_link_s_folder() {
    let dir = tempfile::tempdir().unwrap();
    let input = input(dir.path());
    std::fs::create_dir(dir.path().join("a")).unwrap();
    std::fs::create_dir(dir.path().join("b")).unwrap();
    std::fs::copy(&input, dir.path().join("b").join("real.pb")).unwrap();
    // a/out.pb -> ../b/mid.pb -> real.pb (relative to b/).
    symlink("real.pb", dir.path().join("b").join("mid.pb")).unwrap();
    symlink("../b/mid.pb", dir.path().join("a").join("out.pb")).unwrap();
    let out = lowbit_cast("double", &input, &dir.path().join("a").join("out.pb"));
    assert!(out.ok, "{}", out.stderr);
    assert_eq!(read(&dir.path().join("b").join("real.pb")).dtype(), DType::Double);
    assert_eq!(read(&input).dtype(), DType::Float);
    // No temporary left in either folder; both links still links.
    assert_eq!(tree(dir.path()), ["a", "a/out.pb", "b", "b/mid.pb", "b/real.pb", "in.pb"]);
    assert!(dir.path().join("a").join("out.pb").is_symlink() && dir.path().join("b").join("mid.pb").is_symlink());
}

#[test]
fn links_to_nothing_or_a_folder_are_errors_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let input = input(dir.path());
    let before = std::fs::read(&input).unwrap();
    std::fs::create_dir(dir.path().join("folder")).unwrap();
    symlink("missing.pb", dir.path().join("to_missing.pb")).unwrap();
    symlink("gone.pb", dir.path().join("mid.pb")).unwrap();
    symlink("mid.pb", dir.path().join("chain.pb")).unwrap();
    symlink("folder", dir.path().join("to_folder.pb")).unwrap();
    symlink("loop.pb", dir.path().join("loop.pb")).unwrap();
    let listing = tree(dir.path());

    let cases = [
        ("to_missing.pb", "is a symbolic link to", "missing.pb, which does not exist"),
        ("chain.pb", "is a symbolic link to", "gone.pb, which does not exist"),
        ("to_folder.pb", "is a symbolic link to", "folder, which is not a regular file"),
        ("loop.pb", "is a chain of more than 40 symbolic links", ""),
    ];
    for (name, what, end) in cases {
        let out = lowbit_cast("float16", &input, &dir.path().join(name));
        assert!(!out.ok, "{name}");
        assert!(out.stderr.contains(&format!("{name}: {what}")) && out.stderr.contains(end), "{name}: {}", out.stderr);
        assert_eq!(tree(dir.path()), listing, "{name}");
        assert_eq!(std::fs::read(&input).unwrap(), before, "{name}");
    }
}

#[test]
fn a_cast_that_fails_while_writing_through_a_link_leaves_the_file_as_it_was() {
    if Command::new("sh").arg("-c").arg("true").status().is_err() {
        eprintln!("note: no sh to set a file size limit; this case cannot run here");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // 100,000 floats (400 KB) cast in place to DOUBLE: 800 KB, over a 64 KiB file size limit.
    let input = dir.path().join("in.pb");
    write_tensor(&input, &floats(100_000));
    let before = std::fs::read(&input).unwrap();
    let link = dir.path().join("out.pb");
    symlink("in.pb", &link).unwrap();
    // SIGXFSZ is ignored so that the write fails with an error instead of killing the process.
    let script = format!(
        "trap '' XFSZ; ulimit -f 128 && exec '{}' cast --to double '{}' '{}'",
        env!("CARGO_BIN_EXE_lowbit"),
        input.display(),
        link.display()
    );
    let out = Command::new("sh").arg("-c").arg(&script).output().unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("too large"), "{stderr}");
    assert_eq!(tree(dir.path()), ["in.pb", "out.pb"]);
    assert_eq!(std::fs::read(&input).unwrap(), before);
    assert!(link.is_symlink());
}
