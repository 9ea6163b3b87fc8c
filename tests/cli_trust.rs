//! The command line a CI can trust: an empty input is never a pass, `run` checks its
//! inputs against the graph, integers from text are integers, `check` reads what `vectors`
//! writes. Every case runs the built binary.

#[path = "support/models.rs"]
mod models;

use lowbit::onnx::proto::{Dimension, TensorShapeProto, TypeProto, TypeProtoTensor, ValueInfoProto};
use lowbit::{DType, Tensor};
use models::*;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

/// Runs lowbit with `stdin`; (exit success, stdout, stderr).
fn lowbit(args: &[&str], stdin: &[u8]) -> (bool, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_lowbit"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn an_empty_dump_is_not_a_pass() {
    for input in ["", "\n\n", "# the simulator wrote nothing\n\n"] {
        let (ok, _, err) = lowbit(&["check", "--from", "f16", "--to", "e5m2"], input.as_bytes());
        assert!(!ok, "{input:?}");
        assert!(err.contains("holds no case to check") && err.contains("--allow-empty"), "{err}");
    }
    let (ok, out, _) = lowbit(&["check", "--from", "f16", "--to", "e5m2", "--allow-empty"], b"# c\n\n");
    assert!(ok);
    assert_eq!(
        out,
        "FLOAT16 -> FLOAT8E5M2, round=rne tininess=after saturate=1\n\
         0 checked, 0 mismatches (2 comment, blank or header lines skipped)\n"
    );
    let (ok, _, err) = lowbit(&["check", "--which", "--from", "f16", "--to", "8"], b"");
    assert!(!ok && err.contains("holds no case"), "{err}");
}

#[test]
fn comments_and_blank_lines_are_skipped_and_counted() {
    // f16 1.0 (0x3C00) -> E5M2 1.0 (0x3C), exact; 0x3C01 (1 + 2^-10) -> 0x3C, inexact (0x01).
    let dump = "# header written by the bench\n3C00 3C 00\n\n  # indented comment\n3C01 3C 01\n";
    let (ok, out, err) = lowbit(&["check", "--from", "f16", "--to", "e5m2"], dump.as_bytes());
    assert!(ok, "{err}");
    assert!(out.ends_with("\n2 checked, 0 mismatches (3 comment, blank or header lines skipped)\n"), "{out}");
    // One wrong line: `1 mismatch`, singular.
    let (ok, out, _) = lowbit(&["check", "--from", "f16", "--to", "e5m2"], b"3C00 3D 00\n");
    assert!(!ok);
    assert!(out.ends_with("1 checked, 1 mismatch\n"), "{out}");
}

#[test]
fn check_reads_every_layout_vectors_writes() {
    let dir = tempfile::tempdir().unwrap();
    let base = ["--from", "f16", "--to", "e4m3", "--round", "rtz"];
    // Stochastic rounding's CSV has a fourth column, the random word.
    let stochastic = ["--from", "f16", "--to", "e4m3", "--round", "sr:3"];
    for (layout, formats) in [("testfloat", &base), ("csv", &base), ("csv", &stochastic)] {
        let args = [&["vectors", "--format", layout][..], formats].concat();
        let (ok, vectors, err) = lowbit(&args, b"");
        assert!(ok, "{err}");
        let args = [&["check"][..], formats].concat();
        let (ok, out, err) = lowbit(&args, vectors.as_bytes());
        let cases = vectors.lines().count() - usize::from(layout == "csv");
        assert!(ok, "{layout} {formats:?}: {err}{out}");
        assert!(out.contains(&format!("\n{cases} checked, 0 mismatches")), "{layout}: {out}");
    }
    let folder = dir.path().join("mem");
    let args = [&["vectors", "--format", "readmemh", "--out", folder.to_str().unwrap()][..], &base].concat();
    assert!(lowbit(&args, b"").0);
    let cases = std::fs::read_to_string(folder.join("in.hex")).unwrap().lines().count();
    let (ok, out, err) = lowbit(&[&["check"][..], &base, &[folder.to_str().unwrap()]].concat(), b"");
    assert!(ok, "{err}");
    assert!(out.ends_with(&format!("\n{cases} checked, 0 mismatches\n")), "{out}");
    // A planted error in out.hex is found at its line.
    let out_hex = std::fs::read_to_string(folder.join("out.hex")).unwrap();
    let mut lines: Vec<String> = out_hex.lines().map(String::from).collect();
    lines[4] = if lines[4] == "00" { "01".into() } else { "00".into() };
    std::fs::write(folder.join("out.hex"), lines.join("\n") + "\n").unwrap();
    let (ok, out, _) = lowbit(&[&["check"][..], &base, &[folder.to_str().unwrap()]].concat(), b"");
    assert!(!ok && out.lines().nth(1).is_some_and(|l| l.starts_with("line 5: ")), "{out}");
    // Columns of different lengths are an error, not a shorter check.
    std::fs::write(folder.join("out.hex"), lines[..3].join("\n") + "\n").unwrap();
    let (ok, _, err) = lowbit(&[&["check"][..], &base, &[folder.to_str().unwrap()]].concat(), b"");
    assert!(!ok && err.contains("different lengths"), "{err}");
}

#[test]
fn conformance_without_tests_fails() {
    let dir = tempfile::tempdir().unwrap();
    let (ok, _, err) = lowbit(&["conformance", dir.path().to_str().unwrap()], b"");
    assert!(!ok && err.contains("no model.onnx"), "{err}");
    // A test folder without data sets is a failure, not a pass.
    write_model(&dir.path().join("model.onnx"), &model(graph(vec![], &["x"], &["x"]), 21));
    let (ok, out, _) = lowbit(&["conformance", dir.path().to_str().unwrap()], b"");
    assert!(!ok && out.contains("no test_data_set_N folder") && out.ends_with("0 passed, 1 failed\n"), "{out}");
}

#[test]
fn integer_sources_from_text_are_integers() {
    for (value, why) in [
        ("1.5", "\"1.5\" is not an integer; INT8 holds integers only"),
        ("2.7", "not an integer"),
        ("nan", "not an integer"),
        ("300", "\"300\" is out of the range of INT8, [-128, 127]"),
    ] {
        let (ok, _, err) = lowbit(&["cast", "--from", "i8", "--to", "f32", "--", value], b"");
        assert!(!ok && err.contains(why), "{value}: {err}");
    }
    // Exact integers in any spelling are fine: -3, 1e2 (100), 7.0.
    let (ok, out, err) = lowbit(&["cast", "--from", "i8", "--to", "f32", "--", "-3", "1e2", "7.0"], b"");
    assert!(ok, "{err}");
    for code in ["0xc0400000", "0x42c80000", "0x40e00000"] {
        assert!(out.contains(code), "{code}\n{out}");
    }
}

/// An input declared as `dtype` with dims (a number, or a symbolic name).
fn declared(name: &str, dtype: DType, dims: &[&str]) -> ValueInfoProto {
    let dim = dims
        .iter()
        .map(|d| match d.parse::<i64>() {
            Ok(v) => Dimension { dim_value: Some(v), ..Dimension::default() },
            Err(_) => Dimension { dim_param: Some((*d).into()), ..Dimension::default() },
        })
        .collect();
    let tensor_type = TypeProtoTensor { elem_type: Some(dtype.onnx_number()), shape: Some(TensorShapeProto { dim }) };
    ValueInfoProto {
        name: Some(name.into()),
        r#type: Some(TypeProto { tensor_type: Some(tensor_type), denotation: None }),
        ..ValueInfoProto::default()
    }
}

/// dir/model.onnx: `y = x`, `z = w` with x FLOAT [N, 4] and w FLOAT [N] declared.
fn two_input_model(dir: &Path) -> String {
    let mut g = graph(
        vec![node("Identity", "a", &["x"], &["y"]), node("Identity", "b", &["w"], &["z"])],
        &["x", "w"],
        &["y", "z"],
    );
    g.input = vec![declared("x", DType::Float, &["N", "4"]), declared("w", DType::Float, &["N"])];
    let path = dir.join("model.onnx");
    write_model(&path, &model(g, 21));
    path.display().to_string()
}

#[test]
fn run_checks_its_inputs_against_the_graph() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let m = two_input_model(d);
    let write = |name: &str, t: &Tensor| {
        let path = d.join(name);
        write_tensor(&path, t);
        path.display().to_string()
    };
    let x = write("x.pb", &Tensor::from_raw(DType::Float, vec![3, 4], vec![0; 48]).unwrap());
    let w3 = write("w3.pb", &Tensor::from_f32(&[1.0, 2.0, 3.0]));
    let w2 = write("w2.pb", &Tensor::from_f32(&[1.0, 2.0]));
    let q = write("q.pb", &Tensor::from_codes(DType::Int8, vec![3, 4], &[0; 12]).unwrap());
    let x34 = write("x34.pb", &Tensor::from_raw(DType::Float, vec![3, 5], vec![0; 60]).unwrap());
    let xrank = write("xr.pb", &Tensor::from_raw(DType::Float, vec![12], vec![0; 48]).unwrap());
    let out = d.join("out").display().to_string();
    let run = |inputs: &[String]| {
        let mut args = vec!["run".to_string(), m.clone(), "--output-dir".into(), out.clone()];
        for i in inputs {
            args.extend(["--input".to_string(), i.clone()]);
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        lowbit(&args, b"")
    };
    let (ok, _, err) = run(&[format!("x={x}"), format!("w={w3}")]);
    assert!(ok, "{err}");
    for (inputs, why) in [
        (
            vec![format!("x={q}"), format!("w={w3}")],
            "input \"x\": the model declares FLOAT [N, 4], the file holds INT8 [3, 4]: another element type",
        ),
        (
            vec![format!("x={x34}"), format!("w={w3}")],
            "input \"x\": the model declares FLOAT [N, 4], the file holds FLOAT [3, 5]: dimension 1 is 5, not 4",
        ),
        (vec![format!("x={xrank}"), format!("w={w3}")], "rank 1, not 2"),
        (vec![format!("x={x}"), format!("w={w2}")], "dimension 0 (N) is 2, but input \"x\" gave N = 3"),
        (
            vec![format!("x={x}"), format!("w={w3}"), format!("v={w3}")],
            "input \"v\" is not an input of the model (the model's inputs: x, w)",
        ),
        (vec![format!("x={x}"), format!("x={x}"), format!("w={w3}")], "input \"x\" is given more than once"),
        (vec![format!("x={x}")], "the model's input \"w\" is not given"),
    ] {
        let (ok, _, err) = run(&inputs);
        assert!(!ok && err.contains(why), "{why}\n{err}");
    }
}

#[test]
fn run_help_lists_every_op_it_runs() {
    let (ok, help, _) = lowbit(&["run", "--help"], b"");
    assert!(ok);
    for op in [
        "Cast",
        "CastLike",
        "Constant",
        "Identity",
        "Range",
        "Slice",
        "Gather",
        "QuantizeLinear",
        "DequantizeLinear",
        "DynamicQuantizeLinear",
        "Add",
        "Sub",
        "Div",
        "Max",
        "Min",
        "Clip",
        "Round",
        "Ceil",
        "Relu",
        "ReduceMax",
        "ReduceMin",
        "Loop",
    ] {
        assert!(
            help.contains(&format!("{op},")) || help.contains(&format!("{op}:")) || help.contains(&format!("{op}.")),
            "{op}\n{help}"
        );
    }
}

#[test]
fn quantize_scales_and_zero_points_share_the_library_messages() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_tensor(&d.join("x.pb"), &Tensor::from_f32(&[1.0, 2.0]));
    let x = d.join("x.pb").display().to_string();
    let q = d.join("q.pb").display().to_string();
    for (flags, library) in [
        (
            &["--scale", "0", "--to", "int8"][..],
            "y_scale is 0.0: a scale must be positive and finite (QuantizeLinear-28)",
        ),
        (
            &["--scale", "1", "--zero-point", "300", "--to", "int8"][..],
            "y_zero_point \"300\": out of the range of INT8, [-128, 127] (QuantizeLinear-28)",
        ),
    ] {
        let args = [&["quantize", x.as_str()][..], flags, &["--out", q.as_str()]].concat();
        let (ok, _, err) = lowbit(&args, b"");
        assert!(!ok && err.contains(library), "{library}\n{err}");
    }
}

#[test]
fn one_grammar_flags_among_values_and_named_mistakes() {
    // Flags after values, and --saturate read as a flag, not a value: 500 saturates to 448
    // (0x7e) with saturate=1 and becomes NaN (0x7f) with 0.
    let (ok, out, err) = lowbit(&["cast", "--from", "f32", "500", "--to", "e4m3fn", "--saturate", "0"], b"");
    assert!(ok, "{err}");
    assert!(out.lines().nth(2).unwrap().contains("0x7f"), "{out}");
    let (ok, out, _) = lowbit(&["cast", "--from", "f32", "500", "--to", "e4m3fn"], b"");
    assert!(ok && out.lines().nth(2).unwrap().contains("0x7e"), "{out}");
    // A negative number needs no `--`.
    let (ok, out, err) = lowbit(&["cast", "--from", "f32", "--to", "e4m3fn", "-2", "--saturate", "1"], b"");
    assert!(ok && out.contains("0xc0"), "{err}{out}");
    // A mistyped flag is named as such.
    let (ok, _, err) = lowbit(&["cast", "--form", "f32", "--to", "e4m3fn", "1"], b"");
    assert!(!ok && err.contains("unexpected argument '--form'") && err.contains("'--from'"), "{err}");
    // --round lists its words (the one grammar of every command that rounds).
    let (ok, _, err) = lowbit(&["cast", "--from", "f32", "--to", "e8m0", "--round", "upward", "1"], b"");
    assert!(!ok && err.contains("use rne, rtz") && err.contains("up, down, nearest"), "{err}");
    let (ok, _, err) = lowbit(&["run", "m.onnx", "--output-dir", "o", "--profile", "onnxruntim"], b"");
    assert!(!ok && err.contains("onnxruntime"), "{err}");
    // "Did you mean" for dtype names, on one line.
    let (ok, _, err) = lowbit(&["cast", "--from", "f32", "--to", "e4m3fnn", "1"], b"");
    assert!(!ok && err.contains("did you mean FLOAT8E4M3FN"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    let (_, _, err) = lowbit(&["info", "fp8"], b"");
    for name in ["FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ", "FLOAT8E8M0"] {
        assert!(err.contains(name), "{name}: {err}");
    }
    assert!(!err.contains("did you mean INT8"), "{err}");
    // A flag that does not apply to the types is an error.
    for (args, why) in [
        (&["cast", "--from", "f32", "--to", "int8", "--saturate", "1", "3"][..], "--saturate applies to float8"),
        (
            &["cast", "--from", "f32", "--to", "e4m3fn", "--round", "up", "3"][..],
            "--round applies to FLOAT8E8M0 targets between ONNX types",
        ),
        (&["cast", "--from", "f32", "--to", "e4m3fn", "--threads", "0"][..], "0 is not a thread count"),
    ] {
        let (ok, _, err) = lowbit(args, b"");
        assert!(!ok && err.contains(why), "{why}: {err}");
    }
    // ONNX Cast's saturate applies to FLOAT8E8M0 too: 2.55e38 (1.5 * 2^127) rounds up past
    // E8M0's largest value 2^127 (code 0xFE): saturate=1 keeps 0xFE, saturate=0 gives NaN (0xFF).
    for (saturate, want) in [("1", " 0xfe "), ("0", " 0xff ")] {
        let (ok, out, err) = lowbit(&["cast", "--from", "f32", "--to", "e8m0", "--saturate", saturate, "2.55e38"], b"");
        assert!(ok, "{err}");
        let row = out.lines().find(|l| l.starts_with("2.55e38")).unwrap_or_default();
        assert!(row.contains(want), "saturate={saturate}: {out}");
    }
    // -n/--count with a K suffix: 2K vectors.
    let (ok, out, err) = lowbit(&["vectors", "--from", "f32", "--to", "e4m3fn", "--count", "2K"], b"");
    assert!(ok, "{err}");
    assert_eq!(out.lines().count(), 2048);
    // --to in range4 (the old --output-type still works): 0, 1, 2 in int8.
    let (ok, out, err) = lowbit(&["range4", "0:i8", "3:i8", "1:i8", "--to", "int8", "--raw"], b"");
    assert!(ok && out.as_bytes() == [0, 1, 2], "{err}");
}

#[test]
fn json_outputs_follow_their_schemas() {
    let field = |text: &str| -> serde_json::Value { serde_json::from_str(text).unwrap() };
    // check: 0x3C01 into E5M2 is 0x3C, inexact; "3D" is one ulp too far from zero.
    let (ok, out, _) = lowbit(&["check", "--from", "f16", "--to", "e5m2", "--json"], b"3C01 3C 01\n3C00 3D 00\n# c\n");
    let v = field(&out);
    assert!(!ok);
    assert_eq!((v["checked"].as_u64(), v["mismatches"].as_u64(), v["skipped"].as_u64()), (Some(2), Some(1), Some(1)));
    assert_eq!(v["classes"], serde_json::json!({ "one_ulp_away_from_zero": 1 }));
    // Class keys are snake_case: f16 -0 given as +0 (zero_sign), 1.0 given as E5M2's NaN 0x7F
    // (nan_for_number), 1.0 given as 0x3B (one_ulp_toward_zero).
    let (ok, out, _) = lowbit(
        &["check", "--from", "f16", "--to", "e5m2", "--json", "--no-flags"],
        b"8000 00 00\n3C00 7F 00\n3C00 3B 00\n",
    );
    assert!(!ok);
    let expected = serde_json::json!({ "zero_sign": 1, "nan_for_number": 1, "one_ulp_toward_zero": 1 });
    assert_eq!(field(&out)["classes"], expected, "{out}");
    // The schema is in the help, with every class key.
    let (_, help, _) = lowbit(&["check", "--help"], b"");
    for key in ["one_ulp_away_from_zero", "max_for_infinity", "other_value", "flags_compared", "skipped"] {
        assert!(help.contains(key), "{key}: {help}");
    }
    assert_eq!(v["flags_missing"]["inexact"], 0);
    assert_eq!(v["shown"].as_array().unwrap().len(), 1);
    // sweep of the 256 E4M3FN codes into float16 (exact): 256 patterns, no inexact flag.
    let (ok, out, err) = lowbit(&["sweep", "--from", "e4m3fn", "--to", "f16", "--json"], b"");
    assert!(ok, "{err}");
    let v = field(&out);
    assert_eq!(v["patterns"], 256);
    assert_eq!(v["sha256"].as_str().unwrap().len(), 64);
    assert_eq!(v["flags"]["inexact"], 0);
    // diff: nearest-even and toward-zero differ on float16 -> E4M3FN.
    let (ok, out, _) = lowbit(&["diff", "--from", "f16", "--to", "e4m3fn", "--json", "rne", "rtz"], b"");
    let v = field(&out);
    assert!(!ok && v["agree"] == false && v["values"].as_u64().unwrap() > 0 && v["patterns"] == 65536, "{v}");
    let (ok, out, _) = lowbit(&["diff", "--from", "f16", "--to", "e4m3fn", "--json", "rne", "rne"], b"");
    assert!(ok && field(&out)["agree"] == true);
    // info, profiles, conformance, cast.
    let (ok, out, _) = lowbit(&["info", "e4m3fn", "--json"], b"");
    let v = field(&out);
    // Fields, with the keys of Python's lowbit.info (OCP FP8: max 448 at 0x7E, min normal 2^-6,
    // min subnormal 2^-9, NaN 0x7F, no infinity).
    assert!(ok && v["name"] == "FLOAT8E4M3FN" && v["onnx_number"] == 17 && v["kind"] == "float", "{v}");
    assert_eq!((v["max"].as_f64(), v["codes"]["max"].as_u64()), (Some(448.0), Some(0x7E)), "{v}");
    assert_eq!((v["min_normal"].as_f64(), v["min_subnormal"].as_f64()), (Some(0.015625), Some(0.001953125)));
    assert_eq!(
        (v["special"].as_str(), v["has_inf"].as_bool(), v["codes"]["nan"].as_u64()),
        (Some("fn"), Some(false), Some(0x7F))
    );
    assert_eq!(
        (v["exponent_bits"].as_u64(), v["mantissa_bits"].as_u64(), v["bias"].as_i64()),
        (Some(4), Some(3), Some(7))
    );
    let (ok, out, _) = lowbit(&["info", "uint64", "--json"], b"");
    let v = field(&out);
    assert!(ok && v["kind"] == "integer" && v["min"] == 0 && v["max"] == u64::MAX && v["signed"] == false, "{v}");
    let (ok, out, _) = lowbit(&["profiles", "--json"], b"");
    assert!(ok && field(&out)["profiles"][0]["name"] == "spec");
    let (ok, out, _) = lowbit(&["cast", "--from", "f32", "--to", "e4m3fn", "--json", "448", "500"], b"");
    let v = field(&out);
    assert!(ok && v["to"] == "FLOAT8E4M3FN");
    assert_eq!((v["rows"][0]["code"].as_str(), v["rows"][1]["value"].as_str()), (Some("0x7e"), Some("448")));
    let dir = tempfile::tempdir().unwrap();
    write_model(&dir.path().join("model.onnx"), &model(graph(vec![], &["x"], &["x"]), 21));
    let (ok, out, _) = lowbit(&["conformance", "--json", dir.path().to_str().unwrap()], b"");
    let v = field(&out);
    assert!(!ok && v["failed"] == 1 && v["passed"] == 0 && v["tests"][0]["passed"] == false, "{v}");
}

#[test]
fn completions_and_man_page_come_from_the_flags() {
    for (shell, marker) in [("bash", "_lowbit()"), ("zsh", "#compdef lowbit"), ("fish", "complete -c lowbit")] {
        let (ok, out, err) = lowbit(&["completions", shell], b"");
        assert!(ok && out.contains(marker), "{shell}: {err}");
        assert!(out.contains("allow-empty") && out.contains("output-dir"), "{shell}");
    }
    let (ok, out, _) = lowbit(&["man"], b"");
    assert!(ok && out.starts_with(".ie") && out.contains(".TH lowbit") && out.contains("conformance"), "{out}");
}

#[test]
fn small_ones() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // The output TensorProto keeps the input tensor's name.
    let named_input = lowbit::onnx::tensor_proto::tensor_to_proto(&Tensor::from_f32(&[1.5]), Some("weights"));
    std::fs::write(d.join("w.pb"), prost::Message::encode_to_vec(&named_input)).unwrap();
    let (w, w8) = (d.join("w.pb").display().to_string(), d.join("w8.pb").display().to_string());
    let (ok, _, err) = lowbit(&["cast", "--to", "e4m3fn", &w, &w8], b"");
    assert!(ok, "{err}");
    let written = std::fs::read(d.join("w8.pb")).unwrap();
    let proto: lowbit::onnx::proto::TensorProto = prost::Message::decode(written.as_slice()).unwrap();
    assert_eq!(proto.name.as_deref(), Some("weights"));
    // A model given to cast says it is a model.
    let (ok, _, err) = lowbit(&["cast", "--to", "e4m3fn", "model.onnx", "out.pb"], b"");
    assert!(!ok && err.contains("is an ONNX model") && err.contains("lowbit run"), "{err}");
    // --output-dir that is a file says so.
    let m = two_input_model(d);
    let x = d.join("x.pb");
    write_tensor(&x, &Tensor::from_raw(DType::Float, vec![1, 4], vec![0; 16]).unwrap());
    write_tensor(&d.join("w.pb"), &Tensor::from_f32(&[1.0]));
    let args = ["run", &m, "--input", &format!("x={}", x.display()), "--input", &format!("w={w}"), "--output-dir", &m];
    let (ok, _, err) = lowbit(&args, b"");
    assert!(!ok && err.contains("--output-dir is a file"), "{err}");
}

#[test]
fn one_saturation_default_for_cast_and_the_verification_commands() {
    // float16 60000 (0x7B53) into E4M3FN: beyond 448. Between ONNX types the default is ONNX's
    // saturate=1: 448 (0x7E) from cast, and 0x7E in vectors, check, sweep; with --saturate 0 NaN
    // (0x7F). Into a described format (e4m3,special=ieee) the default is IEEE's: infinity 0x78.
    let (ok, out, _) = lowbit(&["cast", "--from", "f16", "--to", "e4m3fn", "60000"], b"");
    assert!(ok && out.lines().nth(2).unwrap().contains("0x7e"), "{out}");
    let (ok, out, _) = lowbit(&["check", "--from", "f16", "--to", "e4m3fn", "--no-flags"], b"7B53 7E\n");
    assert!(ok, "{out}");
    let (ok, out, _) =
        lowbit(&["check", "--from", "f16", "--to", "e4m3fn", "--no-flags", "--saturate", "0"], b"7B53 7F\n");
    assert!(ok, "{out}");
    let (ok, out, _) = lowbit(&["check", "--from", "f16", "--to", "e4m3,special=ieee", "--no-flags"], b"7B53 78\n");
    assert!(ok, "{out}");
    let (ok, out, _) = lowbit(&["cast", "--from", "f16", "--to", "e4m3,special=ieee", "60000"], b"");
    assert!(ok && out.lines().nth(2).unwrap().contains("0x78"), "{out}");
    // diff's configurations keep the same default: rne against rne,saturate=1 agree into e4m3fn.
    let (ok, out, _) = lowbit(&["diff", "--from", "f16", "--to", "e4m3fn", "--json", "rne", "rne,saturate=1"], b"");
    assert!(ok, "{out}");
    // The help says so.
    let (_, help, _) = lowbit(&["check", "--help"], b"");
    assert!(help.contains("ONNX Cast's saturate=1"), "{help}");
}

/// One flag name for the rounding idea: `--round` in every command that rounds (ONNX's
/// up|down|nearest for an E8M0 target of `cast` and `bench`, IEEE's modes in the verification
/// commands); `--round-mode` is gone everywhere.
#[test]
fn round_is_the_one_rounding_flag() {
    for command in ["cast", "bench", "vectors", "check", "sweep", "diff", "quantize", "range4", "run"] {
        let (_, out, err) = lowbit(&[command, "--help"], b"");
        assert!(
            !out.contains("--round-mode") && !out.contains("round_mode attribute (FLOAT8"),
            "{command}: {out}{err}"
        );
        if ["cast", "bench", "vectors", "check", "sweep"].contains(&command) {
            assert!(out.contains("--round <"), "{command}: {out}");
        }
    }
    // 3.0 into E8M0 by hand: up gives 2^2 (code 127 + 2 = 0x81), down gives 2^1 (0x80).
    let (ok, out, err) = lowbit(&["cast", "--from", "f32", "--to", "e8m0", "3", "--round", "down"], b"");
    assert!(ok && out.lines().nth(2).unwrap().contains("0x80"), "{err}{out}");
    let (ok, out, err) = lowbit(&["cast", "--from", "f32", "--to", "e8m0", "--round", "up", "3"], b"");
    assert!(ok && out.lines().nth(2).unwrap().contains("0x81"), "{err}{out}");
    let (ok, _, err) = lowbit(&["cast", "--from", "f32", "--to", "e8m0", "--round-mode", "up", "3"], b"");
    assert!(!ok && err.contains("unexpected argument '--round-mode'"), "{err}");
    // A described format rounds by IEEE's words (rne, rtz, ...): ONNX's `down` there is an error,
    // not ignored.
    let (ok, _, err) = lowbit(&["cast", "--from", "f32", "--to", "e4m3,special=ieee", "--round", "down", "3"], b"");
    assert!(!ok && err.contains("a cast with a described format rounds by rne, rtz"), "{err}");
}

/// One default per idea, printed: `cast`, `vectors`, `check`, `sweep` and `diff` name the
/// saturation, rounding and tininess they used in their header (and JSON), defaults included.
#[test]
fn every_command_prints_the_settings_it_used() {
    let json = |text: &str| -> serde_json::Value { serde_json::from_str(text).unwrap() };
    let first = |out: &str| out.lines().next().unwrap_or_default().to_string();
    // cast between ONNX types: ONNX Cast's saturate=1 and nearest even unless told; E8M0's
    // round_mode up unless --round.
    let (_, out, _) = lowbit(&["cast", "--from", "f32", "--to", "e4m3fn", "1.5"], b"");
    assert_eq!(first(&out), "FLOAT -> FLOAT8E4M3FN, ONNX Cast, profile spec: round=rne tininess=none saturate=1");
    let (_, out, _) = lowbit(&["cast", "--from", "f32", "--to", "e4m3fn", "--saturate", "0", "1.5"], b"");
    assert!(first(&out).ends_with("round=rne tininess=none saturate=0"), "{out}");
    let (_, out, _) = lowbit(&["cast", "--from", "f32", "--to", "e8m0", "3"], b"");
    assert!(first(&out).contains("round=up "), "{out}");
    let (_, out, _) = lowbit(&["cast", "--from", "f32", "--to", "e8m0", "--round", "nearest", "3"], b"");
    assert!(first(&out).contains("round=nearest "), "{out}");
    let (_, out, _) = lowbit(&["cast", "--from", "f32", "--to", "int8", "3"], b"");
    assert!(first(&out).ends_with("saturate=n/a"), "{out}");
    let (_, out, _) = lowbit(&["cast", "--from", "f32", "--to", "e4m3fn", "--json", "1.5"], b"");
    let expected = serde_json::json!({ "profile": "spec", "round": "rne", "tininess": null, "saturate": true });
    assert_eq!(json(&out)["settings"], expected);
    let (_, out, _) = lowbit(&["cast", "--from", "f32", "--to", "e8m0", "--json", "--round", "down", "3"], b"");
    assert_eq!(json(&out)["settings"]["round"], "down");
    // cast into a described format: IEEE's defaults, no saturation unless --saturate 1.
    let (_, out, _) = lowbit(&["cast", "--from", "f32", "--to", "e4m3,special=ieee", "300"], b"");
    assert_eq!(first(&out), "FLOAT -> e4m3,special=ieee, IEEE 754: round=rne tininess=after saturate=0");
    let (_, out, _) = lowbit(&["cast", "--from", "f32", "--to", "e4m3,special=ieee", "--saturate", "1", "300"], b"");
    assert!(first(&out).ends_with("saturate=1"), "{out}");
    // vectors: on standard error (standard output holds only cases), or heading --out's report.
    let (_, _, err) = lowbit(&["vectors", "--from", "f16", "--to", "e4m3fn", "-n", "1"], b"");
    assert_eq!(first(&err), "FLOAT16 -> FLOAT8E4M3FN, round=rne tininess=after saturate=1");
    let flags = ["--round", "rtz", "--tininess", "before", "--saturate", "0"];
    let (_, _, err) = lowbit(&[&["vectors", "--from", "f16", "--to", "e4m3fn", "-n", "1"][..], &flags].concat(), b"");
    assert_eq!(first(&err), "FLOAT16 -> FLOAT8E4M3FN, round=rtz tininess=before saturate=0");
    let dir = std::env::temp_dir().join(format!("lowbit-settings-{}", std::process::id()));
    let dir_text = dir.display().to_string();
    let (ok, out, err) = lowbit(&["vectors", "--from", "f16", "--to", "e5m2", "--out", &dir_text], b"");
    assert!(ok && first(&out) == "FLOAT16 -> FLOAT8E5M2, round=rne tininess=after saturate=1", "{err}{out}");
    let _ = std::fs::remove_dir_all(&dir);
    // check: the first line, and "settings" in JSON. 1.0 is exact under any setting.
    let (ok, out, _) = lowbit(&["check", "--from", "f16", "--to", "e5m2"], b"3C00 3C 00\n");
    assert!(ok && first(&out) == "FLOAT16 -> FLOAT8E5M2, round=rne tininess=after saturate=1", "{out}");
    let (ok, out, _) = lowbit(&[&["check", "--from", "f16", "--to", "e5m2"][..], &flags].concat(), b"3C00 3C 00\n");
    assert!(ok && first(&out) == "FLOAT16 -> FLOAT8E5M2, round=rtz tininess=before saturate=0", "{out}");
    let (_, out, _) = lowbit(&["check", "--from", "f16", "--to", "e5m2", "--json"], b"3C00 3C 00\n");
    assert_eq!(json(&out)["settings"], serde_json::json!({ "round": "rne", "tininess": "after", "saturate": true }));
    // sweep: the line under the digest; E4M3FN into float16 is no float8 target: no saturation.
    let (_, out, _) = lowbit(&["sweep", "--from", "e4m3fn", "--to", "f16"], b"");
    let line = out.lines().nth(1).unwrap();
    assert!(line.ends_with("round to nearest even, tininess after rounding, not saturating"), "{out}");
    let (_, out, _) =
        lowbit(&[&["sweep", "--from", "e4m3fn", "--to", "f16"][..], &flags[..4], &["--saturate", "1"]].concat(), b"");
    let line = out.lines().nth(1).unwrap();
    assert!(line.ends_with("round toward zero, tininess before rounding, saturating"), "{out}");
    let (_, out, _) = lowbit(&["sweep", "--from", "e4m3fn", "--to", "f16", "--json"], b"");
    assert_eq!(json(&out)["settings"], serde_json::json!({ "round": "rne", "tininess": "after", "saturate": false }));
    // diff: A = and B = name each side's settings, the flags' defaults filling what a
    // configuration leaves out.
    let (_, out, _) = lowbit(&["diff", "--from", "e4m3fn", "--to", "e5m2", "rne", "rtz,saturate=0"], b"");
    assert!(out.contains("A = round to nearest even, tininess after rounding, saturating\n"), "{out}");
    assert!(out.contains("B = round toward zero, tininess after rounding, not saturating\n"), "{out}");
    let (_, out, _) = lowbit(
        &["diff", "--from", "e4m3fn", "--to", "e5m2", "--json", "--tininess", "before", "rne", "profile=spec"],
        b"",
    );
    let v = json(&out);
    assert_eq!(v["a_settings"], serde_json::json!({ "round": "rne", "tininess": "before", "saturate": true }));
    assert_eq!(v["b_settings"], serde_json::json!({ "round": "up", "tininess": null, "saturate": true }));
}
