//! Hostile input and failing outputs around the commands other than `lowbit run` (which
//! tests/run_files.rs covers): `tables --check` and `--out`, `cast IN.pb OUT.pb`, STRING standard
//! input, `range4`'s budgets, and error messages that quote at most ~100 characters of the input.

#[path = "support/models.rs"]
mod models;

#[path = "support/files.rs"]
mod files;
use files::tree;
use lowbit::onnx::proto::TensorProto;
use lowbit::{DType, Tensor};
use models::*;
use prost::Message;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

struct Outcome {
    ok: bool,
    stdout: Vec<u8>,
    stderr: String,
    took: Duration,
}

/// Runs `command` with `stdin` (bytes, or a file to read from), killing it if it has not
/// finished in 60 s (a FIFO that blocks, say).
fn run_with(command: &mut Command, stdin: Stdin) -> Outcome {
    let start = Instant::now();
    let stdin_mode = match &stdin {
        Stdin::Null => Stdio::null(),
        Stdin::Bytes(_) => Stdio::piped(),
        Stdin::File(path) => Stdio::from(std::fs::File::open(path).unwrap()),
    };
    let mut child = command.stdin(stdin_mode).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    if let Stdin::Bytes(bytes) = stdin {
        let mut pipe = child.stdin.take().unwrap();
        // lowbit may stop reading early (that is the point of a limit): a closed pipe is fine.
        std::thread::spawn(move || {
            let _ = pipe.write_all(&bytes);
        });
    }
    let (tx, rx) = std::sync::mpsc::channel();
    let id = child.id();
    std::thread::spawn(move || tx.send(child.wait_with_output()));
    let out = match rx.recv_timeout(Duration::from_secs(60)) {
        Ok(out) => out.unwrap(),
        Err(_) => {
            let _ = Command::new("kill").arg("-9").arg(id.to_string()).status();
            panic!("lowbit {command:?} did not finish in 60 s");
        }
    };
    Outcome {
        ok: out.status.success(),
        stdout: out.stdout,
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        took: start.elapsed(),
    }
}

enum Stdin {
    Null,
    Bytes(Vec<u8>),
    File(PathBuf),
}

fn lowbit(args: &[&str]) -> Outcome {
    run_with(Command::new(env!("CARGO_BIN_EXE_lowbit")).args(args), Stdin::Null)
}

fn lowbit_stdin(args: &[&str], stdin: Stdin) -> Outcome {
    run_with(Command::new(env!("CARGO_BIN_EXE_lowbit")).args(args), stdin)
}

fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

fn mkfifo(path: &Path) -> bool {
    let made = Command::new("mkfifo").arg(path).status().is_ok_and(|s| s.success());
    if !made {
        eprintln!("note: mkfifo is not available; the FIFO case is skipped");
    }
    made
}

/// True when the tests run with the power to write anywhere (root), where a read-only folder
/// does not stop a write.
fn writes_ignore_permissions(dir: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let probe = dir.join("probe");
    std::fs::create_dir(&probe).unwrap();
    std::fs::set_permissions(&probe, std::fs::Permissions::from_mode(0o555)).unwrap();
    let writable = std::fs::write(probe.join("x"), b"x").is_ok();
    let _ = std::fs::remove_file(probe.join("x"));
    std::fs::set_permissions(&probe, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::remove_dir(&probe).unwrap();
    writable
}

// ---------------------------------------------------------------------------------------------
// 1. lowbit tables

#[test]
fn tables_check_refuses_fifos_devices_and_oversized_files_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let tables = dir.path().join("tables");
    // The committed tables (tests/tables.rs checks that they are what lowbit writes): copied, as
    // writing them sweeps 2^32 patterns twelve times.
    files::copy_tree(Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tables")), &tables);
    let victim = tables.join("cast").join("int4-int4.csv");
    let expect_error = |what: &str| {
        let out = lowbit(&["tables", "--check", s(&tables)]);
        assert!(!out.ok);
        assert!(out.stderr.contains("int4-int4.csv") && out.stderr.contains(what), "{}", out.stderr);
        assert!(out.took < Duration::from_secs(30), "took {:?}", out.took);
    };

    // A FIFO nobody writes to: opening it would wait forever, so it is refused by its type.
    std::fs::remove_file(&victim).unwrap();
    if mkfifo(&victim) {
        expect_error("is a FIFO (named pipe), not a regular file");
        std::fs::remove_file(&victim).unwrap();
    }
    // A device that never ends, behind a symbolic link.
    if Path::new("/dev/zero").exists() {
        std::os::unix::fs::symlink("/dev/zero", &victim).unwrap();
        expect_error("is a character device, not a regular file");
        std::fs::remove_file(&victim).unwrap();
    }
    // 64 GiB (sparse): larger than any table, found from the length without reading it.
    let file = std::fs::File::create(&victim).unwrap();
    file.set_len(64 << 30).unwrap();
    expect_error("file has 68719476736 bytes, lowbit generates");
}

#[test]
fn tables_out_into_a_conflicting_tree_leaves_nothing_new() {
    let dir = tempfile::tempdir().unwrap();

    // A file where the `cast` folder must go; an existing README is left as it was.
    let a = dir.path().join("a");
    std::fs::create_dir(&a).unwrap();
    std::fs::write(a.join("cast"), b"not a folder").unwrap();
    std::fs::write(a.join("README.md"), b"old").unwrap();
    let out = lowbit(&["tables", "--out", s(&a)]);
    assert!(!out.ok);
    assert!(out.stderr.contains("cast: exists and is not a folder"), "{}", out.stderr);
    assert_eq!(tree(&a), ["README.md", "cast"]);
    assert_eq!(std::fs::read(a.join("README.md")).unwrap(), b"old");

    // A folder where a table file must go.
    let b = dir.path().join("b");
    std::fs::create_dir_all(b.join("cast").join("int4-int4.csv")).unwrap();
    let out = lowbit(&["tables", "--out", s(&b)]);
    assert!(!out.ok);
    assert!(out.stderr.contains("int4-int4.csv: exists and is not a regular file"), "{}", out.stderr);
    assert_eq!(tree(&b), ["cast", "cast/int4-int4.csv"]);

    // Into folders that do not exist yet, under a conflict: the folders made are removed too.
    let c = dir.path().join("c");
    std::fs::create_dir(&c).unwrap();
    let deep = c.join("new").join("tables");
    std::fs::create_dir_all(deep.join("digests.csv")).unwrap();
    std::fs::remove_dir(deep.join("digests.csv")).unwrap();
    std::fs::remove_dir(&deep).unwrap();
    std::fs::remove_dir(c.join("new")).unwrap();
    std::fs::write(c.join("new"), b"a file where a folder must go").unwrap();
    let out = lowbit(&["tables", "--out", s(&deep)]);
    assert!(!out.ok);
    assert_eq!(tree(&c), ["new"]);

    // A read-only `cast` folder: nothing new anywhere. Root's writes ignore permissions, so as
    // root this case cannot fail the write; it says so, and the next case (a write refused
    // part-way through the tables by the operating system, whoever runs it) stands in for it.
    let d = dir.path().join("d");
    std::fs::create_dir_all(d.join("cast")).unwrap();
    if writes_ignore_permissions(dir.path()) {
        eprintln!(
            "note: running as root, whose writes ignore a read-only folder: the read-only case cannot \
             fail, the file-size-limit case below covers a write refused part-way"
        );
    } else {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(d.join("cast"), std::fs::Permissions::from_mode(0o555)).unwrap();
        let out = lowbit(&["tables", "--out", s(&d)]);
        std::fs::set_permissions(d.join("cast"), std::fs::Permissions::from_mode(0o755)).unwrap();
        assert!(!out.ok);
        assert!(out.stderr.contains("Permission denied"), "{}", out.stderr);
        assert_eq!(tree(&d), ["cast"]);
    }

    // A file size limit of 10 blocks (5 KiB in dash, 10 KiB in bash): README.md (under 4 KiB) is
    // staged, a larger table is refused with EFBIG (SIGXFSZ ignored), and the staged files go.
    let f = dir.path().join("f");
    std::fs::create_dir_all(f.join("cast")).unwrap();
    let script =
        format!("trap '' XFSZ; ulimit -f 10 && exec '{}' tables --out '{}'", env!("CARGO_BIN_EXE_lowbit"), f.display());
    let out = run_with(Command::new("sh").arg("-c").arg(&script), Stdin::Null);
    assert!(!out.ok);
    assert!(out.stderr.contains("too large"), "{}", out.stderr);
    assert_eq!(tree(&f), ["cast"]);

    // And a clean run still writes every table, each equal to the committed one. It sweeps 2^32
    // patterns twelve times for verify/ (a quarter of a minute on two idle cores), so it runs
    // without the 60 s guard against blocking that `lowbit()` has: nothing here can block.
    let e = dir.path().join("e");
    let out = Command::new(env!("CARGO_BIN_EXE_lowbit")).args(["tables", "--out", s(&e)]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let committed = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tables"));
    let files: Vec<String> = tree(&e).into_iter().filter(|name| e.join(name).is_file()).collect();
    assert!(!files.iter().any(|name| name.contains(".lowbit-")), "temporary files left: {files:?}");
    assert_eq!(files.len(), lowbit::tables::render().len() + 2);
    for name in &files {
        assert!(std::fs::read(e.join(name)).unwrap() == std::fs::read(committed.join(name)).unwrap(), "{name}");
    }
}

// ---------------------------------------------------------------------------------------------
// 2. lowbit cast IN.pb OUT.pb

fn input_tensor(dir: &Path, elements: usize) -> PathBuf {
    let path = dir.join("in.pb");
    write_tensor(&path, &floats(elements));
    path
}

#[test]
fn cast_to_a_file_writes_it_whole() {
    let dir = tempfile::tempdir().unwrap();
    let input = input_tensor(dir.path(), 1000);
    let output = dir.path().join("out.pb");
    std::fs::write(&output, b"old").unwrap();
    let out = lowbit(&["cast", "--to", "float16", s(&input), s(&output)]);
    assert!(out.ok, "{}", out.stderr);
    let back = lowbit::onnx::tensor_proto::read_tensor_file(&output).unwrap();
    assert_eq!((back.dtype(), back.shape()), (DType::Float16, &[1000][..]));
    assert_eq!(tree(dir.path()), ["in.pb", "out.pb"]);
}

#[test]
fn cast_to_a_file_that_cannot_be_written_leaves_nothing_new() {
    let dir = tempfile::tempdir().unwrap();
    let input = input_tensor(dir.path(), 1000);

    // OUT is a folder.
    let folder = dir.path().join("out.pb");
    std::fs::create_dir(&folder).unwrap();
    let out = lowbit(&["cast", "--to", "float16", s(&input), s(&folder)]);
    assert!(!out.ok);
    assert!(out.stderr.contains("out.pb: exists and is not a regular file"), "{}", out.stderr);
    assert_eq!(tree(dir.path()), ["in.pb", "out.pb"]);

    // OUT's folder is missing: an error, and no folder is made.
    let missing = dir.path().join("missing").join("out.pb");
    let out = lowbit(&["cast", "--to", "float16", s(&input), s(&missing)]);
    assert!(!out.ok);
    assert!(out.stderr.contains("missing/out.pb") && out.stderr.contains("No such file"), "{}", out.stderr);
    assert_eq!(tree(dir.path()), ["in.pb", "out.pb"]);
}

#[test]
fn cast_to_a_file_under_a_file_size_limit_leaves_the_old_file() {
    let dir = tempfile::tempdir().unwrap();
    // 100,000 floats (400 KB) cast to DOUBLE: 800 KB, over a 64 KiB file size limit.
    let input = input_tensor(dir.path(), 100_000);
    let output = dir.path().join("out.pb");
    std::fs::write(&output, b"old").unwrap();
    // SIGXFSZ is ignored so that the write fails with an error instead of killing the process.
    let script = format!(
        "trap '' XFSZ; ulimit -f 128 && exec '{}' cast --to double '{}' '{}'",
        env!("CARGO_BIN_EXE_lowbit"),
        input.display(),
        output.display()
    );
    if Command::new("sh").arg("-c").arg("true").status().is_err() {
        eprintln!("note: no sh; the file-size-limit case is skipped");
        return;
    }
    let out = run_with(Command::new("sh").arg("-c").arg(&script), Stdin::Null);
    assert!(!out.ok);
    assert!(out.stderr.contains("out.pb") && out.stderr.contains("too large"), "{}", out.stderr);
    assert_eq!(tree(dir.path()), ["in.pb", "out.pb"]);
    assert_eq!(std::fs::read(&output).unwrap(), b"old");
}

// ---------------------------------------------------------------------------------------------
// 3. STRING standard input

#[test]
fn string_standard_input_is_read_within_max_input_bytes() {
    let json = serde_json::to_vec(&vec!["1.5"; 1000]).unwrap();
    assert_eq!(json.len(), 6001);
    let args = ["cast", "--from", "string", "--to", "float16"];
    let within = lowbit_stdin(&[&args[..], &["--max-input-bytes", "6001"]].concat(), Stdin::Bytes(json.clone()));
    assert!(within.ok, "{}", within.stderr);
    assert_eq!(within.stdout, [0x00, 0x3E].repeat(1000));

    let over = lowbit_stdin(&[&args[..], &["--max-input-bytes", "6000"]].concat(), Stdin::Bytes(json));
    assert!(!over.ok);
    assert!(
        over.stderr.contains("standard input: larger than the input limit of 6000 bytes (--max-input-bytes)"),
        "{}",
        over.stderr
    );
    let bad = lowbit_stdin(&[&args[..], &["--max-input-bytes", "lots"]].concat(), Stdin::Bytes(b"[]".to_vec()));
    assert!(!bad.ok && bad.stderr.contains("\"lots\" is not a count"), "{}", bad.stderr);

    // Input that never ends (a device): the read stops at the limit instead of filling memory.
    if Path::new("/dev/zero").exists() {
        for to_string in [false, true] {
            let (from, to) = if to_string { ("float", "string") } else { ("string", "float") };
            let out = lowbit_stdin(
                &["cast", "--from", from, "--to", to, "--max-input-bytes", "16M"],
                Stdin::File("/dev/zero".into()),
            );
            assert!(!out.ok);
            assert!(out.stderr.contains("larger than the input limit of 16777216 bytes"), "{}", out.stderr);
        }
    }
    // The default limit is documented as 1G (2^30 bytes) for standard input.
    let help = lowbit_stdin(&["cast", "--help"], Stdin::Null);
    let help_text = String::from_utf8_lossy(&help.stdout);
    assert!(help.ok && help_text.contains("Default: 1G for standard input"), "{help_text}");
}

// ---------------------------------------------------------------------------------------------
// 4. range4's budgets

#[test]
fn range4_refuses_outputs_over_its_budgets_at_once() {
    // Its old cap, 2^31 elements, took minutes; the default work budget refuses it at once.
    let out = lowbit(&["range4", "0:i64", "2147483648:i64", "1:i64", "--output-type", "int32", "--raw"]);
    assert!(!out.ok);
    assert!(out.stderr.contains("2147483648 elements, more than the limit of 268435456"), "{}", out.stderr);
    assert!(out.stderr.contains("--max-work") && out.stderr.contains("--max-memory"), "{}", out.stderr);
    assert!(out.took < Duration::from_secs(10), "took {:?}", out.took);
    assert!(out.stdout.is_empty());

    // The memory budget, in bytes of the output type: 1 KiB holds 256 int32 elements.
    let range = |n: &str, extra: &[&str]| {
        let stop = format!("{n}:i64");
        lowbit(&[&["range4", "0:i64", stop.as_str(), "1:i64", "--output-type", "int32", "--raw"][..], extra].concat())
    };
    assert_eq!(range("256", &["--max-memory", "1K"]).stdout.len(), 1024);
    let over = range("257", &["--max-memory", "1K"]);
    assert!(!over.ok && over.stderr.contains("257 elements, more than the limit of 256"), "{}", over.stderr);
    // The work budget: 16 per element.
    assert!(range("10", &["--max-work", "160"]).ok);
    let over = range("11", &["--max-work", "160"]);
    assert!(!over.ok && over.stderr.contains("more than the limit of 10"), "{}", over.stderr);
    // Packed outputs: 1 KiB holds 2048 int4 elements.
    let int4 = lowbit(&["range4", "0:i64", "2049:i64", "1:i64", "--output-type", "int4", "--max-memory", "1K"]);
    assert!(!int4.ok && int4.stderr.contains("limit of 2048"), "{}", int4.stderr);

    // The text is written line by line, header first.
    let text = lowbit(&["range4", "0:i64", "5:i64", "1:i64", "--output-type", "int8"]);
    assert!(text.ok);
    assert_eq!(String::from_utf8(text.stdout).unwrap().lines().count(), 6);
}

// ---------------------------------------------------------------------------------------------
// 5. Bounded error messages

/// The longest error a 100,000-character argument may produce.
const MAX_STDERR: usize = 1024;

#[test]
fn long_arguments_are_cut_in_error_messages() {
    let long = "9".repeat(100_000);
    let dir = tempfile::tempdir().unwrap();
    let model_path = dir.path().join("model.onnx");
    write_model(&model_path, &model(graph(vec![node("Identity", "copy", &["x"], &["y"])], &["x"], &["y"]), 21));
    let model_path = s(&model_path);
    let colon = format!("1:{long}");
    let suffixed = format!("{long}x:f32");
    let bad_number = format!("1.{long}x");
    let cases: Vec<Vec<&str>> = vec![
        vec!["info", &long],
        vec!["cast", "--from", "float", "--to", &long, "1"],
        vec!["cast", "--from", &long, "--to", "float16", "1"],
        vec!["cast", "--from", "float", "--to", "float16", &bad_number],
        vec!["cast", "--from", "string", "--to", "float16", "--max-input-bytes", &long],
        vec!["range4", &suffixed, "1:f32", "1:f32", "--output-type", "f32"],
        vec!["range4", &colon, "1:f32", "1:f32", "--output-type", "f32"],
        vec!["range4", "1:f32", "2:f32", "1:f32", "--output-type", &long],
        vec!["range4", "1:f32", "2:f32", "1:f32", "--output-type", "f32", "--max-work", &long],
        vec!["run", model_path, "--output-dir", "/nonexistent", "--input", &long],
        vec!["run", model_path, "--output-dir", "/nonexistent", "--max-memory", &long],
    ];
    for args in cases {
        let out = lowbit(&args);
        // The arguments are too long to repeat in a failure: the command and the flags name it.
        let named: Vec<&str> = args.iter().map(|a| if a.len() > 100 { "LONG" } else { a }).collect();
        assert!(!out.ok, "{named:?}");
        let shown = &out.stderr[..out.stderr.len().min(2000)];
        assert!(out.stderr.len() < MAX_STDERR, "{} bytes for {named:?}: {shown}", out.stderr.len());
        assert!(out.stderr.contains("more characters)"), "{named:?}: {shown}");
    }

    // A 100,000-dimension shape in a TensorProto.
    let proto = TensorProto { dims: vec![2; 100_000], data_type: Some(1), ..TensorProto::default() };
    let input = dir.path().join("many_dims.pb");
    std::fs::write(&input, proto.encode_to_vec()).unwrap();
    let out = lowbit(&["cast", "--to", "float16", s(&input), s(&dir.path().join("out.pb"))]);
    assert!(!out.ok);
    assert!(out.stderr.len() < MAX_STDERR && out.stderr.contains("more dimensions)"), "{}", out.stderr);
    assert!(!dir.path().join("out.pb").exists());

    // And through the library: a shape mismatch of 100,000 dimensions.
    let err = Tensor::from_codes(DType::Int8, vec![1; 100_000], &[1, 2]).unwrap_err().to_string();
    assert!(err.len() < 200 && err.contains("(and 99984 more dimensions)"), "{err}");
}
