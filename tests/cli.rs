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
    assert!(out.contains("216 files"), "{out}");
    let (ok, _, err) = lowbit(&["tables", "--check", "/nonexistent/lowbit-tables"]);
    assert!(!ok);
    assert!(err.contains("/nonexistent/lowbit-tables"), "{err}");
}

fn lowbit_stdin(args: &[&str], input: &[u8]) -> (bool, Vec<u8>, String) {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_lowbit"))
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // lowbit may refuse its arguments before reading any input: then the pipe is closed.
    if let Err(e) = child.stdin.take().unwrap().write_all(input) {
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "{e}");
    }
    let out = child.wait_with_output().unwrap();
    (out.status.success(), out.stdout, String::from_utf8(out.stderr).unwrap())
}

fn one_line_error(ok: bool, err: &str, needles: &[&str]) {
    assert!(!ok, "expected a failure");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    for n in needles {
        assert!(err.contains(n), "{err:?} lacks {n:?}");
    }
}

#[test]
fn cast_raw_stdin_to_stdout() {
    let input: Vec<u8> = [448.0f32, 480.0, -1e-9, f32::NAN].iter().flat_map(|x| x.to_le_bytes()).collect();
    let (ok, out, err) = lowbit_stdin(&["cast", "--from", "f32", "--to", "e4m3fn", "--saturate", "0"], &input);
    assert!(ok, "{err}");
    assert_eq!(out, [0x7E, 0x7F, 0x80, 0x7F]);
    // An odd int4 count needs --count; the output is packed with a zero high nibble.
    let (ok, out, err) = lowbit_stdin(&["cast", "--from", "f32", "--to", "int4"], &input[..12]);
    assert!(ok, "{err}");
    assert_eq!(out, [0x00, 0x00]);
    let (ok, out, _) = lowbit_stdin(&["cast", "--from", "int4", "--to", "int8", "--count", "3"], &[0xE1, 0x03]);
    assert!(ok);
    assert_eq!(out, [0x01, 0xFE, 0x03]);
}

#[test]
fn cast_strings_as_json() {
    let (ok, out, err) = lowbit_stdin(&["cast", "--from", "string", "--to", "f16"], br#"["3.5", " 1e-5 ", "inf"]"#);
    assert!(ok, "{err}");
    assert_eq!(out, [0x00, 0x43, 0xA8, 0x00, 0x00, 0x7C]);
    let (ok, out, _) =
        lowbit_stdin(&["cast", "--from", "f32", "--to", "string"], &[0, 0, 0xC0, 0x7F, 0, 0, 0x80, 0x3F]);
    assert!(ok);
    assert_eq!(String::from_utf8(out).unwrap().trim(), r#"["NaN","1.0"]"#);
    let (ok, out, _) =
        lowbit_stdin(&["cast", "--from", "f32", "--to", "string", "--profile", "onnxruntime"], &[0, 0, 0x80, 0x3F]);
    assert!(ok);
    assert_eq!(String::from_utf8(out).unwrap().trim(), r#"["1"]"#);
}

#[test]
fn cast_values_table() {
    let (ok, out, err) =
        lowbit(&["cast", "--from", "f32", "--to", "e4m3fn", "--", "448", "464", "480", "nan", "-1e-9"]);
    assert!(ok, "{err}");
    let rows: Vec<&str> = out.lines().collect();
    // The settings line, the column header, a row per value.
    assert_eq!(rows.len(), 7, "{out}");
    assert!(rows[4].contains("0x7e") && rows[4].contains("01111110") && rows[4].contains("448"), "{out}");
    assert!(rows[5].contains("0x7f") && rows[5].contains("nan"), "{out}");
    assert!(rows[6].contains("0x80") && rows[6].contains("zero"), "{out}");
}

#[test]
fn cast_bad_input_is_one_line_and_nonzero() {
    let (ok, _, err) = lowbit_stdin(&["cast", "--from", "f32", "--to", "e4m3fn"], &[0; 7]);
    one_line_error(ok, &err, &["7 bytes", "32-bit"]);
    let (ok, _, err) = lowbit_stdin(&["cast", "--from", "float7", "--to", "e4m3fn"], &[]);
    one_line_error(ok, &err, &["float7", "FLOAT8E4M3FN"]);
    let (ok, _, err) = lowbit_stdin(&["cast", "--from", "string", "--to", "f32"], b"[\"1\", \"\xFF\"]");
    one_line_error(ok, &err, &["UTF-8", "position 7"]);
    let (ok, _, err) = lowbit_stdin(&["cast", "--from", "string", "--to", "f32"], b"[\"1\",\n 2]");
    one_line_error(ok, &err, &["JSON", "line 2"]);
    let (ok, _, err) = lowbit_stdin(&["cast", "--from", "string", "--to", "f32"], br#"["1.5", "abc"]"#);
    one_line_error(ok, &err, &["element 1", "\"abc\""]);
    let (ok, _, err) = lowbit_stdin(&["cast", "--from", "c64", "--to", "f32"], &[0; 8]);
    one_line_error(ok, &err, &["COMPLEX64"]);
    let (ok, _, err) = lowbit_stdin(&["cast", "--from", "int4", "--to", "int8", "--count", "5"], &[0xE1, 0x03]);
    one_line_error(ok, &err, &["5 elements", "3 bytes", "2 bytes"]);
}

/// `lowbit cast` with a described format on a side: IEEE rounding through the core, flags in the
/// table, raw codes one byte per code for a format of 8 bits or fewer. Expected codes by hand for
/// `e4m3,special=ieee` (bias 7, infinity 0x78, largest finite 0x77 = 1.875 * 2^7 = 240, smallest
/// subnormal 0x01 = 2^-9).
#[test]
fn cast_takes_described_formats() {
    // 1.5 = 1.1b * 2^0: exponent field 7, fraction 100b: 0x3C. 300 overflows: IEEE (the
    // default for a described format) gives infinity 0x78 with overflow|inexact (05),
    // --saturate 1 the largest finite 0x77 with 05. 0.001 / 2^-9 = 0.512 rounds to one
    // subnormal unit: 0x01 with underflow|inexact (03).
    let (ok, out, err) = lowbit(&["cast", "--from", "f32", "--to", "e4m3,special=ieee", "1.5", "300", "0.001"]);
    assert!(ok, "{err}");
    let rows: Vec<Vec<&str>> = out.lines().skip(2).map(|l| l.split_whitespace().collect()).collect();
    assert_eq!(rows[0][..4], ["1.5", "0x3fc00000", "0x3c", "00"]);
    assert_eq!(rows[1][..4], ["300", "0x43960000", "0x78", "05"]);
    assert_eq!(rows[2][..4], ["0.001", "0x3a83126f", "0x1", "03"]);
    let (ok, out, err) = lowbit(&["cast", "--from", "f32", "--to", "e4m3,special=ieee", "--saturate", "1", "300"]);
    assert!(ok, "{err}");
    assert_eq!(
        out.lines().nth(2).unwrap().split_whitespace().collect::<Vec<_>>()[..4],
        ["300", "0x43960000", "0x77", "05"]
    );
    // Raw both ways: float32 240 and 1.5 -> 0x77 0x3C; back, 0x77 -> 240 (0x43700000) and the
    // infinity 0x78 -> float32 +Inf (saturation is for targets of 8 bits or fewer, as ONNX's).
    let input: Vec<u8> = [240f32, 1.5].iter().flat_map(|x| x.to_le_bytes()).collect();
    let (ok, out, err) = lowbit_stdin(&["cast", "--from", "f32", "--to", "e4m3,special=ieee"], &input);
    assert!(ok, "{err}");
    assert_eq!(out, [0x77, 0x3C]);
    let (ok, out, err) = lowbit_stdin(&["cast", "--from", "e4m3,special=ieee", "--to", "f32"], &[0x77, 0x78]);
    assert!(ok, "{err}");
    assert_eq!(out, [240f32, f32::INFINITY].iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>());
    // A 16-bit described format (e5m10 is float16's layout) writes two bytes per code: 240 is
    // 0x5B80 in float16.
    let (ok, out, err) = lowbit_stdin(&["cast", "--from", "e4m3,special=ieee", "--to", "e5m10,special=ieee"], &[0x77]);
    assert!(ok, "{err}");
    assert_eq!(out, [0x80, 0x5B]);
    // A trailing partial element is one line naming where the input ends.
    let (ok, _, err) = lowbit_stdin(&["cast", "--from", "f32", "--to", "e4m3,special=ieee"], &[0, 0, 0x70]);
    one_line_error(ok, &err, &["ends inside an element", "byte 3"]);
    let (ok, _, err) = lowbit(&["cast", "--from", "f32", "--to", "e4m3,bias=x", "1"]);
    one_line_error(ok, &err, &["bias"]);
}

// ml_dtypes' int1 (tests/named_integers.rs has the library's side): eight codes per byte.
#[test]
fn named_integers_int1_and_uint1_on_the_command_line() {
    let (ok, info, _) = lowbit_stdin(&["info", "int1"], &[]);
    let info = String::from_utf8(info).unwrap();
    assert!(ok && info.contains("bits: 1") && info.contains("range: -1 .. 0"), "{info}");
    let floats: Vec<u8> = [1.0f32, 2.0, -1.0].iter().flat_map(|v| v.to_le_bytes()).collect();
    let (ok, out, err) = lowbit_stdin(&["cast", "--from", "FLOAT", "--to", "int1", "--profile", "ml-dtypes"], &floats);
    assert!(ok, "{err}");
    assert_eq!(out, [0b101]);
    // The one byte 0b10 is eight int1 codes: 0, -1, then six zeros.
    let (ok, out, err) = lowbit_stdin(&["cast", "--from", "int1", "--to", "INT8", "--profile", "ml-dtypes"], &[0b10]);
    assert!(ok, "{err}");
    assert_eq!(out, [0, 0xFF, 0, 0, 0, 0, 0, 0]);
}

#[test]
fn a_checkpoint_given_where_a_tensor_file_goes_points_to_the_checkpoint_commands() {
    let dir = tempfile::tempdir().unwrap();
    // A safetensors file: header length, the JSON header, the data.
    let header = br#"{"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}"#;
    let mut safetensors = (header.len() as u64).to_le_bytes().to_vec();
    safetensors.extend_from_slice(header);
    safetensors.extend_from_slice(&1.0f32.to_le_bytes());
    // A GGUF file's first bytes: the magic, version 3, no tensors, no metadata.
    let mut gguf = b"GGUF".to_vec();
    gguf.extend_from_slice(&3u32.to_le_bytes());
    gguf.extend_from_slice(&[0; 16]);
    for (name, bytes, kind) in [("model.safetensors", safetensors, "safetensors"), ("model.gguf", gguf, "GGUF")] {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        let out = dir.path().join("out.pb");
        let scales = dir.path().join("scales.pb");
        let (p, o, sc) = (path.to_str().unwrap(), out.to_str().unwrap(), scales.to_str().unwrap());
        for args in [
            vec!["quantize", "--scheme", "ggml:q8_0", p, "--out", o, "--scales", sc],
            vec!["cast", "--to", "float16", p, o],
            vec!["dequantize", p, "--scale", "0.5", "--out", o],
        ] {
            let (ok, _, err) = lowbit(&args);
            assert!(!ok, "{args:?}");
            assert!(err.contains(&format!("this is a {kind} checkpoint, not an ONNX TensorProto")), "{args:?}: {err}");
            assert!(err.contains("lowbit checkpoint inspect|quantize|dequantize"), "{err}");
            assert!(!out.exists());
        }
    }
}

#[test]
fn a_hex_literal_is_the_source_bit_pattern() {
    // 0x7E is FLOAT8E4M3FN's largest value, 448 (OCP table); 0x7F800001 a float32 signalling NaN;
    // 0xFF the INT8 -1.
    for (args, code) in [
        (["cast", "--from", "e4m3fn", "--to", "f32", "0x7e", "--json"], "0x43e00000"),
        (["cast", "--from", "f32", "--to", "f64", "0x7f800001", "--json"], "0x7ff8000020000000"),
        (["cast", "--from", "int8", "--to", "f32", "0xFF", "--json"], "0xbf800000"),
    ] {
        let (ok, out, err) = lowbit(&args);
        assert!(ok, "{args:?}: {err}");
        assert!(out.contains(&format!("\"code\":\"{code}\"")), "{args:?}: {out}");
    }
    let (ok, out, err) = lowbit(&["cast", "--from", "e4m3,bias=7", "--to", "e5m2", "0x3c"]);
    assert!(ok, "{err}");
    assert!(out.lines().last().unwrap().starts_with("0x3c                 0x3c       0x3e"), "{out}");
    let (ok, _, err) = lowbit(&["cast", "--from", "e4m3fn", "--to", "f32", "0x17e"]);
    assert!(!ok && err.contains("\"0x17e\" has more bits than the type's 8"), "{err}");
    let (_, help, _) = lowbit(&["cast", "--help"]);
    assert!(help.contains("a 0x literal is the source's bit pattern"), "{help}");
}

#[test]
fn dash_is_standard_output_and_binary_output_never_goes_to_a_terminal_without_raw() {
    let x = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/data/x.pb");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("y.pb");
    let (ok, _, err) = lowbit(&["cast", "--to", "f16", x, file.to_str().unwrap()]);
    assert!(ok, "{err}");
    // `-`: the same TensorProto bytes on standard output, and no "wrote" line among them.
    let out = Command::new(env!("CARGO_BIN_EXE_lowbit")).args(["cast", "--to", "f16", x, "-"]).output().unwrap();
    assert!(out.status.success());
    assert_eq!(out.stdout, std::fs::read(&file).unwrap());
    let q = dir.path().join("q.pb");
    let (ok, _, err) = lowbit(&["quantize", x, "--scale", "0.5", "--out", q.to_str().unwrap()]);
    assert!(ok, "{err}");
    let out = Command::new(env!("CARGO_BIN_EXE_lowbit"))
        .args(["quantize", x, "--scale", "0.5", "--out", "-"])
        .output()
        .unwrap();
    assert_eq!(out.stdout, std::fs::read(&q).unwrap());
    // dequantize and ggml's block types alike; a scheme writing two files refuses `-`.
    let d = dir.path().join("d.pb");
    let (ok, _, err) = lowbit(&["dequantize", q.to_str().unwrap(), "--scale", "0.5", "--out", d.to_str().unwrap()]);
    assert!(ok, "{err}");
    let out = Command::new(env!("CARGO_BIN_EXE_lowbit"))
        .args(["dequantize", q.to_str().unwrap(), "--scale", "0.5", "--out", "-"])
        .output()
        .unwrap();
    assert_eq!(out.stdout, std::fs::read(&d).unwrap());
    let w = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/data/w.pb");
    let b = dir.path().join("b.pb");
    let (ok, _, err) = lowbit(&["quantize", "--scheme", "ggml:q4_1", w, "--out", b.to_str().unwrap()]);
    assert!(ok, "{err}");
    let out = Command::new(env!("CARGO_BIN_EXE_lowbit"))
        .args(["quantize", "--scheme", "ggml:q4_1", w, "--out", "-"])
        .output()
        .unwrap();
    assert_eq!(out.stdout, std::fs::read(&b).unwrap());
    let s = dir.path().join("s.pb");
    let (ok, _, err) = lowbit(&["quantize", "--scheme", "ocp:mxfp4", w, "--out", "-", "--scales", s.to_str().unwrap()]);
    assert!(!ok && err.contains("- is for a single output"), "{err}");
    assert!(!s.exists());
    // A terminal on standard output (through script(1)): refused, naming --raw; --raw writes.
    if !std::path::Path::new("/usr/bin/script").exists() {
        eprintln!("no /usr/bin/script: the terminal half is not run");
        return;
    }
    let bin = env!("CARGO_BIN_EXE_lowbit");
    for (command, refused) in [
        (format!("{bin} cast --from f32 --to f16 < {x}"), true),
        (format!("echo '[\"3.5\"]' | {bin} cast --from string --to f16"), true),
        (format!("{bin} cast --to f16 {x} -"), true),
        (format!("echo '[\"3.5\"]' | {bin} cast --from string --to f16 --raw"), false),
        (format!("echo '[\"3.5\"]' | {bin} cast --from f16 --to string"), false),
        (format!("{bin} quantize {x} --scale 0.5 --out -"), true),
        (format!("{bin} quantize {x} --scale 0.5 --out - --raw"), false),
    ] {
        let out = Command::new("/usr/bin/script").args(["-qec", &command, "/dev/null"]).output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(!out.status.success(), refused, "{command}: {text}");
        if refused {
            assert!(text.contains("standard output is a terminal") && text.contains("--raw"), "{command}: {text}");
        }
    }
}

#[test]
fn a_misspelt_scheme_gets_the_nearest_ones() {
    let dir = tempfile::tempdir().unwrap();
    let (e, s) = (dir.path().join("e.pb"), dir.path().join("s.pb"));
    let w = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/data/w.pb");
    for (scheme, near) in [
        ("torchao:mxfp9", "did you mean torchao:mxfp4?"),
        ("ggml:q4k", "did you mean ggml:q4_0?"),
        ("fp8:tensr", "did you mean fp8:tensor?"),
        ("modelopt:nvfp5", "did you mean modelopt:nvfp4?"),
    ] {
        let (ok, _, err) =
            lowbit(&["quantize", "--scheme", scheme, w, "--out", e.to_str().unwrap(), "--scales", s.to_str().unwrap()]);
        assert!(!ok && err.contains(near), "{scheme}: {err}");
    }
    // A known head with a bad option is not "corrected".
    let (ok, _, err) = lowbit(&["quantize", "--scheme", "ggml:q4_0,contract=no", w, "--out", "x.pb"]);
    assert!(!ok && !err.contains("did you mean"), "{err}");
}

#[test]
fn one_round_grammar_on_every_command_that_rounds() {
    // 1.99 into e4m3 with infinities (1.875 and 2 the neighbours): toward zero 0x3F, nearest 0x40.
    let (ok, out, err) = lowbit(&["cast", "--from", "f32", "--to", "e4m3,special=ieee", "--round", "rtz", "1.99"]);
    assert!(ok, "{err}");
    assert!(out.contains("round=rtz") && out.lines().last().unwrap().contains(" 0x3f "), "{out}");
    let (ok, out, _) = lowbit(&["cast", "--from", "f32", "--to", "e4m3,special=ieee", "1.99"]);
    assert!(ok && out.lines().last().unwrap().contains(" 0x40 "), "{out}");
    // ONNX's round_mode words stay E8M0's: 3 -> 2 (0x80) down.
    let (ok, out, _) = lowbit(&["cast", "--from", "f32", "--to", "e8m0", "--round", "down", "3"]);
    assert!(ok && out.lines().last().unwrap().contains("0x80"), "{out}");
    // A word that does not apply says which do; a word of neither grammar is the same error on
    // every command.
    let (ok, _, err) = lowbit(&["cast", "--from", "f32", "--to", "e8m0", "--round", "rtz", "3"]);
    assert!(!ok && err.contains("takes its round_mode up, down or nearest"), "{err}");
    let (ok, _, err) = lowbit(&["cast", "--from", "f32", "--to", "e4m3,special=ieee", "--round", "up", "1"]);
    assert!(!ok && err.contains("rounds by rne, rtz"), "{err}");
    let bogus: Vec<String> = [
        vec!["cast", "--from", "f32", "--to", "e4m3,special=ieee", "--round", "bogus", "1"],
        vec!["vectors", "--from", "f32", "--to", "e4m3fn", "--round", "bogus"],
        vec!["diff", "--from", "f32", "--to", "e4m3fn", "rne", "rtz", "--round", "bogus"],
    ]
    .iter()
    .map(|args| lowbit(args).2)
    .collect();
    for err in &bogus {
        assert!(err.contains("\"bogus\" is not a rounding mode; use rne, rtz"), "{err}");
    }
}

#[test]
fn man_writes_a_page_per_command_from_the_flags() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("man");
    let (ok, text, err) = lowbit(&["man", "--out", out.to_str().unwrap()]);
    assert!(ok, "{err}");
    let mut names: Vec<String> =
        std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    assert!(text.contains(&format!("wrote {} manual pages", names.len())), "{text}");
    for page in ["lowbit.1", "lowbit-cast.1", "lowbit-checkpoint.1", "lowbit-checkpoint-quantize.1", "lowbit-man.1"] {
        assert!(names.iter().any(|n| n == page), "{page} missing from {names:?}");
    }
    // Each page is its command's flags: quantize's holds --keep-unsupported, cast's --raw.
    let quantize = std::fs::read_to_string(out.join("lowbit-checkpoint-quantize.1")).unwrap();
    assert!(quantize.contains(r"\-\-keep\-unsupported") && quantize.starts_with(".ie"), "{quantize}");
    let cast = std::fs::read_to_string(out.join("lowbit-cast.1")).unwrap();
    assert!(cast.contains(r"\-\-raw") && !cast.contains(r"\-\-keep\-unsupported"));
    // Without --out: the top page on standard output.
    let (ok, page, _) = lowbit(&["man"]);
    assert!(ok && page.contains(".TH lowbit 1"), "{page}");
}
