//! The `strings`, `tensor_proto` and `checkpoint` fuzz targets' checks (fuzz/checks/) on their committed seeds
//! and on the real models and tensors the tensor_proto fuzzer starts from, on the stable
//! toolchain, in `cargo test`. A seed that once found a bug stays a test. The other targets'
//! seeds are replayed by the fuzzers themselves, which CI runs for 20 s each from fuzz/seeds
//! (.ci/run, fuzz/README.md).

#![allow(dead_code)]

#[cfg(feature = "checkpoint")]
#[path = "../fuzz/checks/checkpoint.rs"]
mod checkpoint_check;
#[path = "../fuzz/checks/strings.rs"]
mod strings_check;
#[path = "../fuzz/checks/tensor_proto.rs"]
mod tensor_proto_check;

use std::path::{Path, PathBuf};

/// Every file under `dir`, sorted, so that a failure names the same seed every time.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

fn replay(dirs: &[&str], check: fn(&[u8])) -> usize {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut count = 0;
    for dir in dirs {
        for path in files_under(&root.join(dir)) {
            let data = std::fs::read(&path).unwrap();
            // A panic names the seed before the test fails.
            if std::panic::catch_unwind(|| check(&data)).is_err() {
                panic!("fuzz check failed on the seed {}", path.display());
            }
            count += 1;
        }
    }
    count
}

#[test]
fn strings_seeds() {
    assert!(replay(&["fuzz/seeds/strings"], strings_check::run) >= 50);
}

#[test]
fn tensor_proto_seeds() {
    // The committed hostile seeds, and the real models and tensors the fuzzer starts from.
    let n = replay(&["fuzz/seeds/tensor_proto", "tests/onnx-node", "tests/fixtures"], tensor_proto_check::run);
    assert!(n > 800, "{n} seeds");
}

#[cfg(feature = "checkpoint")]
#[test]
fn checkpoint_seeds() {
    // The committed hostile seeds (hand-built safetensors and GGUF files, tests/checkpoint_files.rs
    // builds the same kinds) and the fixtures of real checkpoints.
    let n = replay(&["fuzz/seeds/checkpoint", "tests/fixtures/checkpoints"], checkpoint_check::run);
    assert!(n >= 20, "{n} seeds");
}
