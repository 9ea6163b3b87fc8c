//! `lowbit run` and the files around it: output names confined to --output-dir, outputs written all
//! or nothing, inputs read only from regular files and within --max-input-bytes, and the budgets on
//! the command line.

#[path = "support/models.rs"]
mod models;

#[path = "support/files.rs"]
mod files;
use files::tree;
use lowbit::files::read_file_limited;
use lowbit::onnx::outputs::write_outputs;
use lowbit::onnx::proto::ModelProto;
use lowbit::{Error, Tensor};
use models::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Runs lowbit, killing it if it has not finished in 30 s (a FIFO that blocks, say).
fn lowbit(args: &[&str]) -> (bool, String, String) {
    lowbit_via(Command::new(env!("CARGO_BIN_EXE_lowbit")).args(args))
}

fn lowbit_via(command: &mut Command) -> (bool, String, String) {
    let mut child = command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(30) {
            child.kill().unwrap();
            panic!("lowbit {command:?} did not finish in 30 s");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let out = child.wait_with_output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A model copying `x` to each output name.
fn copies(outputs: &[&str]) -> ModelProto {
    let nodes = outputs.iter().enumerate().map(|(k, o)| node("Identity", &format!("copy{k}"), &["x"], &[o])).collect();
    model(graph(nodes, &["x"], outputs), 21)
}

/// dir/model.onnx (from `m`) and dir/x.pb (four floats); returns their paths as strings.
fn setup(dir: &Path, m: &ModelProto) -> (String, String) {
    let model_path = dir.join("model.onnx");
    write_model(&model_path, m);
    let x_path = dir.join("x.pb");
    write_tensor(&x_path, &Tensor::from_f32(&[1.0, 2.0, 3.0, 4.0]));
    (model_path.display().to_string(), format!("x={}", x_path.display()))
}

#[test]
fn outputs_are_written_and_listed() {
    let dir = tempfile::tempdir().unwrap();
    let (m, x) = setup(dir.path(), &copies(&["a", "b.c"]));
    let out = dir.path().join("deep/out");
    let (ok, stdout, err) = lowbit(&["run", &m, "--input", &x, "--output-dir", out.to_str().unwrap()]);
    assert!(ok, "{err}");
    assert!(stdout.contains("a.pb FLOAT [4]") && stdout.contains("b.c.pb FLOAT [4]"), "{stdout}");
    assert_eq!(tree(&out), ["a.pb", "b.c.pb"]);
    let back = lowbit::onnx::tensor_proto::read_tensor_file(&out.join("a.pb")).unwrap();
    assert_eq!(back.to_f32_vec().unwrap(), [1.0, 2.0, 3.0, 4.0]);
}

#[test]
fn output_names_that_leave_the_output_directory_are_refused_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let absolute = std::env::temp_dir().join(format!("lowbit-escape-{}", std::process::id()));
    let absolute = absolute.to_str().unwrap().to_string();
    for bad in ["../escaped", absolute.as_str(), "", "..", ".", "a/b", ".hidden", "a\\b", "tab\there"] {
        let work = dir.path().join("work");
        std::fs::create_dir_all(&work).unwrap();
        // The good output comes first: it must not be written either.
        let (m, x) = setup(&work, &copies(&["fine", bad]));
        let before = tree(dir.path());
        let out = work.join("out");
        let (ok, _, err) = lowbit(&["run", &m, "--input", &x, "--output-dir", out.to_str().unwrap()]);
        assert!(!ok, "{bad:?} was accepted");
        assert!(err.contains("graph output") && err.contains("inside the output directory"), "{bad:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert_eq!(tree(dir.path()), before, "{bad:?} left files behind");
        assert!(!Path::new(&format!("{absolute}.pb")).exists());
        std::fs::remove_dir_all(&work).unwrap();
    }
}

#[test]
fn a_failure_while_writing_leaves_nothing_new() {
    let dir = tempfile::tempdir().unwrap();
    let (m, x) = setup(dir.path(), &copies(&["a", "b", "c"]));
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("a.pb"), b"old").unwrap();
    // An output path that is a folder: found before anything is renamed into place.
    std::fs::create_dir(out.join("b.pb")).unwrap();
    let (ok, _, err) = lowbit(&["run", &m, "--input", &x, "--output-dir", out.to_str().unwrap()]);
    assert!(!ok);
    assert!(err.contains("b.pb") && err.contains("not a regular file"), "{err}");
    assert_eq!(tree(&out), ["a.pb", "b.pb"]);
    assert_eq!(std::fs::read(out.join("a.pb")).unwrap(), b"old");

    // The same through the library, into a folder it has to create: the folder goes too.
    let fresh = dir.path().join("new/deeper");
    std::fs::create_dir_all(dir.path().join("blocker")).unwrap();
    let x = Tensor::from_f32(&[1.0]);
    let outputs = vec![("ok".to_string(), x.clone()), ("bad/name".to_string(), x.clone())];
    assert!(matches!(write_outputs(&fresh, &outputs), Err(Error::UnsafeOutputName { .. })));
    assert!(!dir.path().join("new").exists());
    let written = write_outputs(&fresh, &outputs[..1]).unwrap();
    assert_eq!(written, [fresh.join("ok.pb")]);
}

#[test]
fn a_file_size_limit_leaves_nothing_new() {
    let dir = tempfile::tempdir().unwrap();
    let nodes =
        vec![node("Identity", "small", &["x"], &["small"]), node("Range", "big", &["zero", "n", "one"], &["big"])];
    let mut g = graph(nodes, &["x"], &["small", "big"]);
    g.initializer =
        vec![named(&int64_scalar(0), "zero"), named(&int64_scalar(100_000), "n"), named(&int64_scalar(1), "one")];
    let (m, x) = setup(dir.path(), &model(g, 11));
    let out = dir.path().join("out");
    // 64 KiB per file; the 800 KB output cannot be written. SIGXFSZ is ignored so that the write
    // fails with an error instead of killing the process.
    let script = format!(
        "trap '' XFSZ; ulimit -f 128 && exec '{}' run '{m}' --input '{x}' --output-dir '{}'",
        env!("CARGO_BIN_EXE_lowbit"),
        out.display()
    );
    let Ok(_) = Command::new("sh").arg("-c").arg("true").status() else {
        eprintln!("note: no sh; the file-size-limit case is skipped");
        return;
    };
    let (ok, _, err) = lowbit_via(Command::new("sh").arg("-c").arg(&script));
    assert!(!ok, "{err}");
    assert!(err.contains("big.pb") && err.contains("too large"), "{err}");
    assert!(!out.exists(), "left {:?}", tree(&out));
}

#[test]
fn devices_fifos_and_folders_are_refused_where_a_file_is_expected() {
    let dir = tempfile::tempdir().unwrap();
    let (m, x) = setup(dir.path(), &copies(&["y"]));
    let out = dir.path().join("out");
    let out = out.to_str().unwrap();
    let folder = dir.path().to_str().unwrap();
    for (model, input, what) in [
        ("/dev/zero", x.as_str(), "is a character device"),
        (m.as_str(), "x=/dev/zero", "is a character device"),
        (folder, x.as_str(), "is a directory"),
        (m.as_str(), &format!("x={folder}"), "is a directory"),
    ] {
        let (ok, _, err) = lowbit(&["run", model, "--input", input, "--output-dir", out]);
        assert!(!ok);
        assert!(err.contains(what) && err.contains("not a regular file"), "{err}");
    }
    let fifo = dir.path().join("fifo");
    match Command::new("mkfifo").arg(&fifo).status() {
        Ok(s) if s.success() => {
            let fifo = fifo.to_str().unwrap();
            // Nobody writes to the FIFO: opening it would block, so it must be refused unopened.
            for (model, input) in [(fifo, x.clone()), (m.as_str(), format!("x={fifo}"))] {
                let (ok, _, err) = lowbit(&["run", model, "--input", &input, "--output-dir", out]);
                assert!(!ok);
                assert!(err.contains("FIFO"), "{err}");
            }
        }
        _ => eprintln!("note: mkfifo is not available; the FIFO case is skipped"),
    }
    assert!(!Path::new(out).exists());
}

#[test]
fn files_over_the_input_limit_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (m, x) = setup(dir.path(), &copies(&["y"]));
    let out = dir.path().join("out");
    let (ok, _, err) =
        lowbit(&["run", &m, "--input", &x, "--output-dir", out.to_str().unwrap(), "--max-input-bytes", "10"]);
    assert!(!ok);
    assert!(err.contains("larger than the input limit of 10 bytes (--max-input-bytes)"), "{err}");
    // A file whose length says 0 but which has more: /proc files do that. The read stops at the limit.
    let maps = PathBuf::from("/proc/self/maps");
    if maps.exists() {
        assert_eq!(std::fs::metadata(&maps).unwrap().len(), 0);
        match read_file_limited(&maps, 16) {
            Err(Error::InputTooLarge { size: None, limit: 16, .. }) => {}
            other => panic!("{other:?}"),
        }
    } else {
        eprintln!("note: no /proc/self/maps; the lying-length case is skipped");
    }
}

#[test]
fn the_budgets_on_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let g = graph(vec![node("Add", "big_add", &["a", "b"], &["y"])], &["a", "b"], &["y"]);
    write_model(&dir.path().join("add.onnx"), &model(g, 14));
    write_tensor(&dir.path().join("a.pb"), &Tensor::from_f32(&vec![1.0; 65536]).reshape(vec![65536, 1]).unwrap());
    write_tensor(&dir.path().join("b.pb"), &Tensor::from_f32(&vec![1.0; 32768]).reshape(vec![1, 32768]).unwrap());
    let path = |name: &str| dir.path().join(name).display().to_string();
    let (a, b, out) = (format!("a={}", path("a.pb")), format!("b={}", path("b.pb")), path("out"));
    let base = ["run", &path("add.onnx"), "--input", &a, "--input", &b, "--output-dir", &out];
    let (ok, _, err) = lowbit(&[&base[..], &["--max-memory", "64M"]].concat());
    assert!(!ok);
    assert!(err.contains("Add node \"big_add\": over the memory budget of 67108864 bytes (--max-memory)"), "{err}");
    let (ok, _, err) = lowbit(&[&base[..], &["--max-work", "1000"]].concat());
    assert!(!ok);
    assert!(err.contains("Add node \"big_add\": over the work budget of 1000 elements (--max-work)"), "{err}");
    let (ok, _, err) = lowbit(&[&base[..], &["--max-memory", "12Q"]].concat());
    assert!(!ok);
    assert!(err.contains("\"12Q\" is not a count"), "{err}");
    assert!(!Path::new(&out).exists());

    // Within the budgets, the same flags let a run through.
    let (m, x) = setup(dir.path(), &copies(&["y"]));
    let (ok, _, err) =
        lowbit(&["run", &m, "--input", &x, "--output-dir", &out, "--max-memory", "1M", "--max-work", "1K"]);
    assert!(ok, "{err}");
}
