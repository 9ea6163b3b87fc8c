//! Every command of the README's and the guide's `sh` blocks runs as written: each line (joined
//! with its `\` continuations) runs in `bash` in a fresh folder that holds `examples/` and `tests/`
//! of this checkout, with `lowbit` on PATH as the binary this build made, and must exit 0 (or 1
//! where its comment says `(exit status 1)`). The lines of one file run in order in one folder,
//! so a later line reads what an earlier one wrote; a shell variable set on a line of its own
//! (`f=...`) is kept for the lines after it in the same block.
//!
//! Lines that need what a test cannot have are skipped by the rules in `SKIPPED`, each with its
//! reason, and counted; each file must run at least one command.
#![cfg(unix)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// The files whose `sh` blocks are run.
const FILES: &[&str] = &[
    "README.md",
    "docs/guide/casts.md",
    "docs/guide/recipes.md",
    "docs/guide/testbenches.md",
    "docs/guide/checkpoints.md",
];

/// Lines starting with these are not run, for the reason given.
const SKIPPED: &[(&str, &str)] = &[
    ("cargo install", "installs into ~/.cargo/bin"),
    ("cargo run --release -- tables --check", "a release build; tests/tables.rs checks tables/ the same way"),
    ("cargo test", "the test suite itself"),
    ("cargo build", "a release build (CI's job)"),
    ("make -C capi install", "a release build installed under a prefix (CI's C library step runs it)"),
    ("cargo bench", "a benchmark"),
    ("lowbit tables", "every table with the 2^32-input sweep digests: tests/tables.rs covers it"),
    (
        "lowbit sweep --from f32",
        "all 2^32 float32 inputs: minutes in a test build (tests/cli_trust.rs sweeps narrower sources)",
    ),
    ("lowbit bench", "a benchmark"),
    ("PY=$(bash scripts/", "a Python venv with peers from the package registry"),
    ("python3 -m venv", "a Python venv from the package registry"),
    (".venv/", "the Python venv above"),
    ("target/", "a Python venv from the package registry"),
    ("PATH=", "installs the Python package into a venv"),
    ("sudo ", "installs system packages"),
    ("bash hdl/", "needs Verilator (CI's testbench step runs it)"),
    ("cc ", "needs the release C library (capi's own tests build and run a C program)"),
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The command lines of `text`'s `sh` blocks, each with the shell variables set before it in its
/// block (as `NAME=value` lines to run first) and its line number.
fn commands(text: &str) -> Vec<(usize, Vec<String>, String)> {
    let mut found = Vec::new();
    let mut in_sh = false;
    let mut variables: Vec<String> = Vec::new();
    let mut pending: Option<(usize, String)> = None;
    for (index, line) in text.lines().enumerate() {
        let trimmed = line.trim();
        if trimmed.starts_with("```") {
            in_sh = !in_sh && trimmed == "```sh";
            variables.clear();
            continue;
        }
        if !in_sh {
            continue;
        }
        let (number, joined) = match pending.take() {
            Some((number, head)) => (number, format!("{head} {trimmed}")),
            None => (index + 1, trimmed.to_string()),
        };
        if let Some(head) = joined.strip_suffix('\\') {
            pending = Some((number, head.trim_end().to_string()));
            continue;
        }
        if joined.is_empty() || joined.starts_with('#') {
            continue;
        }
        let is_assignment = joined.split_once('=').is_some_and(|(name, value)| {
            !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !value.contains(' ')
                && !value.starts_with("$(")
        });
        if is_assignment {
            variables.push(joined);
            continue;
        }
        found.push((number, variables.clone(), joined));
    }
    found
}

fn skip_reason(line: &str) -> Option<&'static str> {
    SKIPPED.iter().find(|(prefix, _)| line.starts_with(prefix)).map(|&(_, reason)| reason)
}

/// A fresh folder holding links to `examples/` and `tests/`, and a `bin/` with `lowbit`.
fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for name in ["examples", "tests"] {
        std::os::unix::fs::symlink(root().join(name), dir.path().join(name)).unwrap();
    }
    std::fs::create_dir(dir.path().join(".bin")).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_lowbit"), dir.path().join(".bin/lowbit")).unwrap();
    dir
}

fn run(dir: &Path, variables: &[String], line: &str) -> (i32, String) {
    let script = format!("set -o pipefail\n{}\n{line}\n", variables.join("\n"));
    let path = format!("{}:{}", dir.join(".bin").display(), std::env::var("PATH").unwrap_or_default());
    let out = Command::new("bash").arg("-c").arg(&script).current_dir(dir).env("PATH", path).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    (out.status.code().unwrap_or(-1), stderr.chars().take(2000).collect())
}

#[test]
fn every_command_of_the_readme_and_the_guide_runs() {
    let mut failures = Vec::new();
    let (mut ran_total, mut skipped_total) = (0, 0);
    for file in FILES {
        let text = std::fs::read_to_string(root().join(file)).unwrap();
        let dir = workspace();
        let (mut ran, mut skipped) = (0, 0);
        for (number, variables, line) in commands(&text) {
            if let Some(reason) = skip_reason(&line) {
                println!("{file}:{number}: skipped ({reason}): {line}");
                skipped += 1;
                continue;
            }
            let expected = if line.contains("(exit status 1)") { 1 } else { 0 };
            let (status, stderr) = run(dir.path(), &variables, &line);
            println!("{file}:{number}: exit {status}: {line}");
            if status != expected {
                failures.push(format!("{file}:{number}: exit {status}, expected {expected}: {line}\n{stderr}"));
            }
            ran += 1;
        }
        println!("{file}: {ran} commands run, {skipped} skipped");
        assert!(ran > 0, "{file}: no command was run (no `sh` block, or every line skipped)");
        ran_total += ran;
        skipped_total += skipped;
    }
    println!("in all: {ran_total} commands run, {skipped_total} skipped");
    assert!(failures.is_empty(), "{} commands failed:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn the_extraction_joins_continuations_keeps_variables_and_ignores_other_blocks() {
    let text = "```sh\nf=a/b\nlowbit x $f \\\n  --y\n# a comment\n```\n```python\nlowbit z\n```\n";
    let found = commands(text);
    assert_eq!(found, vec![(3, vec!["f=a/b".to_string()], "lowbit x $f --y".to_string())]);
    assert_eq!(skip_reason("cargo install --path ."), Some("installs into ~/.cargo/bin"));
    assert_eq!(skip_reason("lowbit cast --to f16 1"), None);
}
