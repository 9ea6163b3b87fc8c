//! Compiles tests/c/test_lowbit.c with the system C compiler (`cc`, or `$CC`) against
//! include/lowbit.h and runs it, linked once with the static library and once with the shared one.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The folder holding the libraries cargo built for this test (target/<profile>/ or its deps/).
fn library_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test knows its path");
    let deps = exe.parent().expect("the test binary sits in target/<profile>/deps");
    let found = [deps, deps.parent().unwrap_or(deps)]
        .into_iter()
        .find(|dir| dir.join("liblowbit_capi.a").exists() && dir.join("liblowbit_capi.so").exists())
        .unwrap_or_else(|| panic!("liblowbit_capi.a and .so not found next to {}", deps.display()))
        .to_path_buf();
    found
}

fn compile(out: &Path, link: &[&str]) {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let compiler = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let status = Command::new(&compiler)
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-O1"])
        .arg("-I")
        .arg(manifest.join("../include"))
        .arg(manifest.join("tests/c/test_lowbit.c"))
        .args(link)
        .arg("-o")
        .arg(out)
        .status()
        .unwrap_or_else(|e| panic!("{compiler} did not start: {e}"));
    assert!(status.success(), "{compiler} failed to build test_lowbit.c");
}

fn run(program: &Path, library_path: Option<&Path>) {
    let mut command = Command::new(program);
    if let Some(dir) = library_path {
        command.env("LD_LIBRARY_PATH", dir);
    }
    let output = command.output().expect("test_lowbit runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    eprint!("{}", String::from_utf8_lossy(&output.stderr));
    eprint!("{stdout}");
    assert!(output.status.success(), "test_lowbit failed");
    assert!(stdout.contains(" checks, 0 failures"), "unexpected output: {stdout}");
}

#[test]
fn c_program_passes_against_static_and_shared_library() {
    let libs = library_dir();
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let archive = libs.join("liblowbit_capi.a");
    // The system libraries a Rust static library needs on Linux (`--print native-static-libs`).
    let static_program = out.join("test_lowbit_static");
    compile(&static_program, &[archive.to_str().expect("UTF-8 path"), "-lpthread", "-ldl", "-lm", "-lgcc_s", "-lc"]);
    run(&static_program, None);
    let shared_program = out.join("test_lowbit_shared");
    let search = format!("-L{}", libs.display());
    compile(&shared_program, &[&search, "-llowbit_capi", "-lpthread"]);
    run(&shared_program, Some(&libs));
}

/// The guide's C example (the first C block of docs/guide/testbenches.md's "C" section) builds
/// and prints what its comment says.
#[test]
fn guide_example_builds_and_prints_its_comment() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let guide = std::fs::read_to_string(manifest.join("../docs/guide/testbenches.md")).expect("testbenches.md");
    let section = &guide[guide.find("## C (and anything").expect("the section")..];
    let start = section.find("```c\n").expect("a C block") + 5;
    let code = &section[start..start + section[start..].find("```").expect("its end")];
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let source = out.join("guide_tb.c");
    std::fs::write(&source, code).expect("a writable target folder");
    let program = out.join("guide_tb");
    let compiler = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let archive = library_dir().join("liblowbit_capi.a");
    let status = Command::new(&compiler)
        .args(["-std=c11", "-Wall", "-Werror", "-I"])
        .arg(manifest.join("../include"))
        .arg(&source)
        .arg(&archive)
        .args(["-lpthread", "-ldl", "-lm"])
        .arg("-o")
        .arg(&program)
        .status()
        .expect("cc starts");
    assert!(status.success(), "the guide's example does not build");
    let output = Command::new(&program).output().expect("it runs");
    assert!(output.status.success());
    // 300 rounded toward zero overflows e4m3,special=ieee to its MAX 0x77 with OVERFLOW|INEXACT.
    assert_eq!(String::from_utf8_lossy(&output.stdout), "77 flags 05\n");
    assert!(code.contains("/* 77 flags 05"), "the example's comment says what it prints");
}
