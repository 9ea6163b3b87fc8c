//! `lowbit quantize --mx` and `lowbit dequantize --mx`: TensorProto files both ways, outputs all or
//! nothing, one readable line on bad input.

use lowbit::onnx::tensor_proto::{read_tensor_file, write_tensor_file};
use lowbit::tensor::Tensor;
use lowbit::DType;
use std::path::Path;
use std::process::Command;

fn lowbit(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_lowbit")).args(args).output().unwrap();
    (out.status.success(), String::from_utf8(out.stdout).unwrap(), String::from_utf8(out.stderr).unwrap())
}

fn p(dir: &Path, name: &str) -> String {
    dir.join(name).display().to_string()
}

#[test]
fn quantize_and_dequantize_files() {
    let dir = tempfile::tempdir().unwrap();
    // Two rows of 4 blocked along the last axis in blocks of 4. Row 0 is the block of tests/mx.rs:
    // amax 100, X = 2^(6 - 8) (0x7D); 1, 0.3, -2.5, 100 -> 0x48, 0x3A, 0xD2, 0x7C (400 -> 384).
    // Row 1: amax 8 = 2^3, s = 3 - 8 = -5 (0x7A); V * 32: 0 -> 0x00, -0 -> 0x80, 8 * 32 = 256 = 2^8
    // (0x78), 0.25 * 32 = 8 = 2^3 (field 10: 0x50).
    let x = Tensor::from_f32(&[1.0, 0.3, -2.5, 100.0, 0.0, -0.0, 8.0, 0.25]).reshape(vec![2, 4]).unwrap();
    write_tensor_file(&dir.path().join("x.pb"), &x, None).unwrap();
    let (ok, out, err) = lowbit(&[
        "quantize",
        "--mx",
        "mxfp8e4m3",
        "--block-size",
        "4",
        &p(dir.path(), "x.pb"),
        "--scales",
        &p(dir.path(), "s.pb"),
        "--out",
        &p(dir.path(), "e.pb"),
    ]);
    assert!(ok, "{err}");
    assert!(out.contains("FLOAT8E8M0 [2, 1]") && out.contains("FLOAT8E4M3FN [2, 4]"), "{out}");
    let scales = read_tensor_file(&dir.path().join("s.pb")).unwrap();
    let elements = read_tensor_file(&dir.path().join("e.pb")).unwrap();
    assert_eq!((scales.dtype(), scales.shape()), (DType::Float8E8M0, &[2usize, 1][..]));
    assert_eq!(scales.codes().unwrap(), [0x7D, 0x7A]);
    assert_eq!(elements.codes().unwrap(), [0x48, 0x3A, 0xD2, 0x7C, 0x00, 0x80, 0x78, 0x50]);
    let (ok, _, err) = lowbit(&[
        "dequantize",
        "--mx",
        "mxfp8e4m3",
        "--block-size",
        "4",
        &p(dir.path(), "e.pb"),
        "--scales",
        &p(dir.path(), "s.pb"),
        "--out",
        &p(dir.path(), "y.pb"),
    ]);
    assert!(ok, "{err}");
    let y = read_tensor_file(&dir.path().join("y.pb")).unwrap();
    // 4 * 0.25, 1.25 * 0.25, -10 * 0.25, 384 * 0.25; 0, -0, 256 / 32, 8 / 32.
    assert_eq!(y.shape(), [2, 4]);
    let bits: Vec<u32> = y.to_f32_vec().unwrap().iter().map(|v| v.to_bits()).collect();
    assert_eq!(bits, [1.0f32, 0.3125, -2.5, 96.0, 0.0, -0.0, 8.0, 0.25].map(f32::to_bits));
}

#[test]
fn mxfp4_along_axis_zero_with_ceil() {
    let dir = tempfile::tempdir().unwrap();
    // Shape [3, 1] along axis 0 in blocks of 2: [7, 1] and [-0.5]. ceil: 7 = 1.75 * 2^2 is above
    // E2M1's 6 = 1.5 * 2^2, so s = 2 - 2 + 1 = 1 (0x80): 3.5 -> 4 (tie of 3 and 4, even: 0x6), 0.5
    // (0x1). [-0.5]: floor(log2) -1, s = -3 (0x7C), 1.0 is not above 1.5: -0.5 * 8 = -4 (0xE).
    // Packed low nibble first: 0x16, 0x0E.
    let x = Tensor::from_f32(&[7.0, 1.0, -0.5]).reshape(vec![3, 1]).unwrap();
    write_tensor_file(&dir.path().join("x.pb"), &x, None).unwrap();
    let (ok, _, err) = lowbit(&[
        "quantize",
        "--mx",
        "mxfp4",
        "--axis",
        "0",
        "--block-size",
        "2",
        "--scale-round",
        "ceil",
        &p(dir.path(), "x.pb"),
        "--scales",
        &p(dir.path(), "s.pb"),
        "--out",
        &p(dir.path(), "e.pb"),
    ]);
    assert!(ok, "{err}");
    let scales = read_tensor_file(&dir.path().join("s.pb")).unwrap();
    let elements = read_tensor_file(&dir.path().join("e.pb")).unwrap();
    assert_eq!((scales.shape(), scales.codes().unwrap()), (&[2usize, 1][..], vec![0x80, 0x7C]));
    assert_eq!((elements.dtype(), elements.raw().unwrap()), (DType::Float4E2M1, &[0x16, 0x0E][..]));
}

#[test]
fn bad_input_is_one_line_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let x = Tensor::from_f32(&[1.0; 8]).reshape(vec![2, 4]).unwrap();
    write_tensor_file(&dir.path().join("x.pb"), &x, None).unwrap();
    let run = |extra: &[&str], out_dir: &str| {
        let mut args = vec![
            "quantize".to_string(),
            p(dir.path(), "x.pb"),
            "--scales".into(),
            p(dir.path(), "s.pb"),
            "--out".into(),
            format!("{out_dir}/e.pb"),
        ];
        args.extend(extra.iter().map(|s| s.to_string()));
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        lowbit(&refs)
    };
    let here = dir.path().display().to_string();
    // The elements' folder is missing: the scales, staged first, must not remain either.
    let (ok, _, err) = run(&["--mx", "mxfp4"], "/nonexistent/lowbit-quantize");
    assert!(!ok && err.contains("/nonexistent/lowbit-quantize"), "{err}");
    assert!(!dir.path().join("s.pb").exists());
    for (extra, want) in [
        (&["--mx", "mxfp4", "--block-size", "0"][..], "block_size must be at least 1"),
        (&["--mx", "mxfp4", "--axis", "2"][..], "axis for input of rank 2 is 2"),
        (&["--mx", "mxfp4", "--axis", "-3"][..], "[-2, 1]"),
        (&["--mx", "mxfp5"][..], "invalid value 'mxfp5'"),
    ] {
        let (ok, _, err) = run(extra, &here);
        assert!(!ok, "{extra:?}");
        assert!(err.contains(want), "{extra:?}: {err}");
        assert!(!dir.path().join("s.pb").exists() && !dir.path().join("e.pb").exists(), "{extra:?}");
    }
    let (ok, _, err) =
        lowbit(&["quantize", "--mx", "mxfp4", &p(dir.path(), "x.pb"), "--scales", "a.pb", "--out", "a.pb"]);
    assert!(!ok && err.contains("same file"), "{err}");
    // A DOUBLE input, and a missing input file.
    write_tensor_file(&dir.path().join("d.pb"), &Tensor::from_f64(&[1.0]), None).unwrap();
    let (ok, _, err) = lowbit(&["quantize", "--mx", "mxint8", &p(dir.path(), "d.pb"), "--scales", "s", "--out", "e"]);
    assert!(!ok && err.contains("DOUBLE") && err.trim_end().lines().count() == 1, "{err}");
    let (ok, _, err) =
        lowbit(&["quantize", "--mx", "mxint8", &p(dir.path(), "none.pb"), "--scales", "s", "--out", "e"]);
    assert!(!ok && err.contains("none.pb"), "{err}");
    // Dequantize: scales of the wrong shape, and elements of the wrong type.
    let (ok, _, err) = run(&["--mx", "mxfp4", "--block-size", "2"], &here);
    assert!(ok, "{err}");
    let dq = |extra: &[&str]| {
        let mut args = vec!["dequantize", "--out"];
        let out = p(dir.path(), "y.pb");
        let (e, s) = (p(dir.path(), "e.pb"), p(dir.path(), "s.pb"));
        args.extend([out.as_str(), "--scales", s.as_str(), e.as_str()]);
        args.extend(extra);
        let (ok, _, err) = lowbit(&args);
        (ok, err)
    };
    let (ok, err) = dq(&["--mx", "mxfp4", "--block-size", "4"]);
    assert!(!ok && err.contains("scales have shape [2, 2]") && err.contains("[2, 1]"), "{err}");
    let (ok, err) = dq(&["--mx", "mxfp8e4m3", "--block-size", "2"]);
    assert!(!ok && err.contains("FLOAT4E2M1"), "{err}");
    assert!(!dir.path().join("y.pb").exists());
    let (ok, err) = dq(&["--mx", "mxfp4", "--block-size", "2"]);
    assert!(ok, "{err}");
    let y = read_tensor_file(&dir.path().join("y.pb")).unwrap();
    assert_eq!(y.to_f32_vec().unwrap(), [1.0; 8]);
}
