//! `lowbit quantize` and `lowbit dequantize`, both modes (`--scheme`: block-scaled recipes, OCP
//! Microscaling here (tests/cli_blocks.rs has the other recipes); `--scale`:
//! ONNX linear quantization): TensorProto files both ways, outputs all or nothing, one readable
//! line on bad input.

use lowbit::onnx::runner::Model;
use lowbit::onnx::tensor_proto::{read_tensor_file, tensor_from_proto, write_tensor_file};
use lowbit::DType;
use lowbit::Tensor;
use std::path::{Path, PathBuf};
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
        "--scheme",
        "ocp:mxfp8e4m3,block=4",
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
        "--scheme",
        "ocp:mxfp8e4m3,block=4",
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
        "--scheme",
        "ocp:mxfp4,block=2,scale=ceil",
        "--axis",
        "0",
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
    let (ok, _, err) = run(&["--scheme", "ocp:mxfp4"], "/nonexistent/lowbit-quantize");
    assert!(!ok && err.contains("/nonexistent/lowbit-quantize"), "{err}");
    assert!(!dir.path().join("s.pb").exists());
    for (extra, want) in [
        (&["--scheme", "ocp:mxfp4,block=0"][..], "block=0: a positive integer is needed"),
        (&["--scheme", "ocp:mxfp4", "--block-size", "16"][..], "a scheme names its block (ocp:mxfp4,block=16"),
        (&["--scheme", "ocp:mxfp4", "--axis", "2"][..], "axis of a tensor of shape [2, 4] is 2"),
        (&["--scheme", "ocp:mxfp4", "--axis", "-3"][..], "[-2, 1]"),
        (&["--scheme", "ocp:mxfp5"][..], "mxfp5"),
    ] {
        let (ok, _, err) = run(extra, &here);
        assert!(!ok, "{extra:?}");
        assert!(err.contains(want), "{extra:?}: {err}");
        assert!(!dir.path().join("s.pb").exists() && !dir.path().join("e.pb").exists(), "{extra:?}");
    }
    let (ok, _, err) =
        lowbit(&["quantize", "--scheme", "ocp:mxfp4", &p(dir.path(), "x.pb"), "--scales", "a.pb", "--out", "a.pb"]);
    assert!(!ok && err.contains("a.pb is named for two outputs"), "{err}");
    // A DOUBLE input, and a missing input file.
    write_tensor_file(&dir.path().join("d.pb"), &Tensor::from_f64(&[1.0]), None).unwrap();
    let (ok, _, err) =
        lowbit(&["quantize", "--scheme", "ocp:mxint8", &p(dir.path(), "d.pb"), "--scales", "s", "--out", "e"]);
    assert!(!ok && err.contains("DOUBLE") && err.trim_end().lines().count() == 1, "{err}");
    let (ok, _, err) =
        lowbit(&["quantize", "--scheme", "ocp:mxint8", &p(dir.path(), "none.pb"), "--scales", "s", "--out", "e"]);
    assert!(!ok && err.contains("none.pb"), "{err}");
    // Dequantize: scales of the wrong shape, and elements of the wrong type.
    let (ok, _, err) = run(&["--scheme", "ocp:mxfp4,block=2"], &here);
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
    let (ok, err) = dq(&["--scheme", "ocp:mxfp4,block=4"]);
    assert!(!ok && err.contains("holds FLOAT8E8M0 [2, 2]") && err.contains("FLOAT8E8M0 [2, 1]"), "{err}");
    let (ok, err) = dq(&["--scheme", "ocp:mxfp8e4m3,block=2"]);
    assert!(!ok && err.contains("FLOAT4E2M1"), "{err}");
    assert!(!dir.path().join("y.pb").exists());
    let (ok, err) = dq(&["--scheme", "ocp:mxfp4,block=2"]);
    assert!(ok, "{err}");
    let y = read_tensor_file(&dir.path().join("y.pb")).unwrap();
    assert_eq!(y.to_f32_vec().unwrap(), [1.0; 8]);
}

// ------------------------------------------------------------------------------------------------
// Linear mode (--scale): ONNX QuantizeLinear-28 / DequantizeLinear-28
// ------------------------------------------------------------------------------------------------

/// Runs `lowbit ARGS` in `dir` (relative paths are inside it).
fn lowbit_in(dir: &Path, args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_lowbit")).current_dir(dir).args(args).output().unwrap();
    (out.status.success(), String::from_utf8(out.stdout).unwrap(), String::from_utf8(out.stderr).unwrap())
}

fn read(dir: &Path, name: &str) -> Tensor {
    read_tensor_file(&dir.join(name)).unwrap()
}

fn f32_bits(t: &Tensor) -> Vec<u32> {
    t.to_f32_vec().unwrap().iter().map(|v| v.to_bits()).collect()
}

/// The files in `dir` (to show that a failed command left nothing behind).
fn files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    names
}

#[test]
fn per_tensor_int8_with_number_scale_and_zero_point() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Every x / 2.5 below is exact in float32 except 1 / 2.5 = 0.4 (rounded, far from a tie).
    //   x       x / 2.5   round-half-even   + 3   int8 saturate   code
    //   0        0          0                3      3              0x03
    //   3.75     1.5        2                5      5              0x05
    //   6.25     2.5        2                5      5              0x05
    //  -3.75    -1.5       -2                1      1              0x01
    //  -1.25    -0.5       -0                3      3              0x03
    //   300      120        120              123    123            0x7B
    //   320      128        128              131    127            0x7F
    //  -400     -160       -160             -157   -128            0x80
    //   1        0.4        0                3      3              0x03
    let x = Tensor::from_f32(&[0.0, 3.75, 6.25, -3.75, -1.25, 300.0, 320.0, -400.0, 1.0]).reshape(vec![3, 3]).unwrap();
    write_tensor_file(&d.join("x.pb"), &x, None).unwrap();
    let (ok, out, err) =
        lowbit_in(d, &["quantize", "x.pb", "--scale", "2.5", "--zero-point", "3", "--to", "int8", "--out", "q.pb"]);
    assert!(ok, "{err}");
    assert!(out.contains("INT8 [3, 3]"), "{out}");
    let q = read(d, "q.pb");
    assert_eq!((q.dtype(), q.shape()), (DType::Int8, &[3usize, 3][..]));
    assert_eq!(q.raw().unwrap(), [0x03, 0x05, 0x05, 0x01, 0x03, 0x7B, 0x7F, 0x80, 0x03]);

    // Back: (q - 3) * 2.5: 0, 5, 5, -5, 0, 300, 124 * 2.5 = 310, -131 * 2.5 = -327.5, 0, all exact
    // in float32 (the default output) and in float16 (655 / 2 needs 10 significant bits).
    let (ok, _, err) = lowbit_in(d, &["dequantize", "q.pb", "--scale", "2.5", "--zero-point", "3", "--out", "y.pb"]);
    assert!(ok, "{err}");
    let back = [0.0f32, 5.0, 5.0, -5.0, 0.0, 300.0, 310.0, -327.5, 0.0];
    let y = read(d, "y.pb");
    assert_eq!((y.dtype(), y.shape()), (DType::Float, &[3usize, 3][..]));
    assert_eq!(f32_bits(&y), back.map(f32::to_bits));
    let (ok, _, err) = lowbit_in(
        d,
        &["dequantize", "q.pb", "--scale", "2.5", "--zero-point", "3", "--to", "float16", "--out", "h.pb"],
    );
    assert!(ok, "{err}");
    let h = read(d, "h.pb");
    let want: Vec<u64> = back.iter().map(|&v| u64::from(half::f16::from_f32(v).to_bits())).collect();
    assert_eq!((h.dtype(), h.codes().unwrap()), (DType::Float16, want));
}

#[test]
fn per_axis_with_scale_and_zero_point_files() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // x [2, 3]; axis 1 (ONNX's default): column j uses scale[j], zero[j]; the output type is the
    // zero point file's (UINT8, range [0, 255]).
    //   column 0, scale 0.5, zero 0:    1 / 0.5 = 2 -> 2;      -1 / 0.5 = -2 -> 0 (clamped)
    //   column 1, scale 2, zero 10:     2 / 2 = 1 -> 11;        7 / 2 = 3.5 -> 4 (even) -> 14
    //   column 2, scale 4, zero 128:    3 / 4 = 0.75 -> 1 -> 129;  1000 / 4 = 250 -> 378 -> 255
    let x = Tensor::from_f32(&[1.0, 2.0, 3.0, -1.0, 7.0, 1000.0]).reshape(vec![2, 3]).unwrap();
    write_tensor_file(&d.join("x.pb"), &x, None).unwrap();
    write_tensor_file(&d.join("s.pb"), &Tensor::from_f32(&[0.5, 2.0, 4.0]), None).unwrap();
    write_tensor_file(&d.join("z.pb"), &Tensor::from_codes(DType::Uint8, vec![3], &[0, 10, 128]).unwrap(), None)
        .unwrap();
    let (ok, _, err) = lowbit_in(d, &["quantize", "x.pb", "--scale", "s.pb", "--zero-point", "z.pb", "--out", "q.pb"]);
    assert!(ok, "{err}");
    let q = read(d, "q.pb");
    assert_eq!((q.dtype(), q.raw().unwrap()), (DType::Uint8, &[2, 11, 129, 0, 14, 255][..]));
    // A number zero point is repeated over the scale's shape: 7 everywhere, --to uint8.
    //   column 0: 2 + 7 = 9, -2 + 7 = 5; column 1: 1 + 7 = 8, 4 + 7 = 11; column 2: 8, 257 -> 255.
    let (ok, _, err) =
        lowbit_in(d, &["quantize", "x.pb", "--scale", "s.pb", "--zero-point", "7", "--to", "uint8", "--out", "n.pb"]);
    assert!(ok, "{err}");
    assert_eq!(read(d, "n.pb").raw().unwrap(), [9, 8, 8, 5, 11, 255]);
    // Dequantize with the same files: (q - z) * s = [1, 2, 4], [-0, 8, 508]: 0 - 0 = +0, times 0.5.
    let (ok, _, err) =
        lowbit_in(d, &["dequantize", "q.pb", "--scale", "s.pb", "--zero-point", "z.pb", "--out", "y.pb"]);
    assert!(ok, "{err}");
    assert_eq!(f32_bits(&read(d, "y.pb")), [1.0f32, 2.0, 4.0, 0.0, 8.0, 508.0].map(f32::to_bits));
    // Along axis 0 the 3 scales do not match x's 2 rows.
    let (ok, _, err) =
        lowbit_in(d, &["quantize", "x.pb", "--scale", "s.pb", "--axis", "0", "--to", "int8", "--out", "bad.pb"]);
    assert!(!ok && err.contains("y_scale has 3 elements but axis 0 of x has 2"), "{err}");
    assert!(err.contains("QuantizeLinear-28"), "{err}");
    assert!(!d.join("bad.pb").exists());
}

#[test]
fn blocked_int4_packs_low_nibble_first() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // x [2, 5] in blocks of 2 along the last axis: 5 = 2 + 2 + 1, so the scales are [2, 3] (every
    // version: ceil(5 / 2) = 3; the last block is short). INT4 range [-8, 7].
    //   row 0, scales [1, 0.5, 4]: 3 / 1 = 3; -2.5 / 1 = -2.5 -> -2 (even); 1.25 / 0.5 = 2.5 -> 2;
    //          -3 / 0.5 = -6; 20 / 4 = 5
    //   row 1, scales [2, 0.25, 1]: -20 / 2 = -10 -> -8; 0.5 / 2 = 0.25 -> 0; 1 / 0.25 = 4;
    //          -0.375 / 0.25 = -1.5 -> -2 (even); 7.5 / 1 = 7.5 -> 8 (even) -> 7
    // Nibbles (two's complement): 3 E 2 A 5 | 8 0 4 E 7; element 2k in the low nibble of byte k:
    //   0xE3, 0xA2, 0x85, 0x40, 0x7E.
    let x = Tensor::from_f32(&[3.0, -2.5, 1.25, -3.0, 20.0, -20.0, 0.5, 1.0, -0.375, 7.5]).reshape(vec![2, 5]).unwrap();
    let s = Tensor::from_f32(&[1.0, 0.5, 4.0, 2.0, 0.25, 1.0]).reshape(vec![2, 3]).unwrap();
    write_tensor_file(&d.join("x.pb"), &x, None).unwrap();
    write_tensor_file(&d.join("s.pb"), &s, None).unwrap();
    let args =
        ["quantize", "x.pb", "--scale", "s.pb", "--block-size", "2", "--axis", "-1", "--to", "int4", "--out", "q.pb"];
    let (ok, out, err) = lowbit_in(d, &args);
    assert!(ok, "{err}");
    assert!(out.contains("INT4 [2, 5]"), "{out}");
    let q = read(d, "q.pb");
    assert_eq!((q.dtype(), q.shape()), (DType::Int4, &[2usize, 5][..]));
    assert_eq!(q.raw().unwrap(), [0xE3, 0xA2, 0x85, 0x40, 0x7E]);
    // Back: code * scale: 3, -2, 1, -3, 20 | -16, 0, 1, -0.5, 7.
    let (ok, _, err) =
        lowbit_in(d, &["dequantize", "q.pb", "--scale", "s.pb", "--block-size", "2", "--axis", "-1", "--out", "y.pb"]);
    assert!(ok, "{err}");
    assert_eq!(
        f32_bits(&read(d, "y.pb")),
        [3.0f32, -2.0, 1.0, -3.0, 20.0, -16.0, 0.0, 1.0, -0.5, 7.0].map(f32::to_bits)
    );
    // UINT4 through a number zero point of 8 (range [0, 15]): row 0 codes + 8 = 11 6 10 2 13,
    // row 1: 8 - 10 = -2 -> 0, 8, 12, 6, 8 + 8 = 16 -> 15. Bytes 0x6B, 0x2A, 0x0D, 0xC8, 0xF6.
    let (ok, _, err) = lowbit_in(
        d,
        &[
            "quantize",
            "x.pb",
            "--scale",
            "s.pb",
            "--block-size",
            "2",
            "--zero-point",
            "8",
            "--to",
            "uint4",
            "--out",
            "u.pb",
        ],
    );
    assert!(ok, "{err}");
    assert_eq!(read(d, "u.pb").raw().unwrap(), [0x6B, 0x2A, 0x0D, 0xC8, 0xF6]);
    // Scales for blocks of 3 would be [2, 2]: with [2, 3] the version's shape rule refuses it.
    let (ok, _, err) =
        lowbit_in(d, &["quantize", "x.pb", "--scale", "s.pb", "--block-size", "3", "--to", "int4", "--out", "bad.pb"]);
    assert!(!ok, "{err}");
    assert!(
        err.contains("QuantizeLinear-28") && err.contains("block_size 3") && err.contains("needs 2 at axis 1"),
        "{err}"
    );
    assert!(!d.join("bad.pb").exists());
}

#[test]
fn float8_saturate_on_and_off() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Scale 2: quotients 500, -1000, 1, +Inf, 464, 470. E4M3FN's largest finite value is 448
    // (0x7E, 1.75 * 2^8); the next step would be 480, so 464 is the tie, which goes to 448 (even
    // significand 110). With saturate 1 everything beyond goes to +-448 (0x7E / 0xFE); with 0 to
    // NaN (0x7F / 0xFF): E4M3FN has no infinity. 1 = 0x38.
    let x = Tensor::from_f32(&[1000.0, -2000.0, 2.0, f32::INFINITY, 928.0, 940.0]);
    write_tensor_file(&d.join("x.pb"), &x, None).unwrap();
    let run = |saturate: Option<&str>, out: &str| {
        let mut args = vec!["quantize", "x.pb", "--scale", "2", "--to", "float8e4m3fn", "--out", out];
        if let Some(s) = saturate {
            args.extend(["--saturate", s]);
        }
        let (ok, _, err) = lowbit_in(d, &args);
        assert!(ok, "{err}");
        read(d, out)
    };
    let saturated = [0x7E, 0xFE, 0x38, 0x7E, 0x7E, 0x7E];
    assert_eq!(run(Some("1"), "s1.pb").raw().unwrap(), saturated);
    assert_eq!(run(None, "default.pb").raw().unwrap(), saturated);
    let q = run(Some("0"), "s0.pb");
    assert_eq!((q.dtype(), q.raw().unwrap()), (DType::Float8E4M3FN, &[0x7F, 0xFF, 0x38, 0x7F, 0x7E, 0x7F][..]));
    // E5M2 keeps infinities without saturation: +Inf -> 0x7C; 500 -> 512 (0x60, E5M2 values near
    // 500 are 448 and 512, 500 is nearer 512).
    let (ok, _, err) =
        lowbit_in(d, &["quantize", "x.pb", "--scale", "2", "--to", "float8e5m2", "--saturate", "0", "--out", "e.pb"]);
    assert!(ok, "{err}");
    assert_eq!(read(d, "e.pb").raw().unwrap()[..4], [0x60, 0xE4, 0x3C, 0x7C]);
}

#[test]
fn bad_linear_input_is_one_line_naming_the_problem_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let x = Tensor::from_f32(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]).reshape(vec![2, 3]).unwrap();
    write_tensor_file(&d.join("x.pb"), &x, None).unwrap();
    write_tensor_file(&d.join("s3.pb"), &Tensor::from_f32(&[0.5, 1.0, 2.0]), None).unwrap();
    write_tensor_file(&d.join("neg.pb"), &Tensor::from_f32(&[0.5, -1.0, 2.0]), None).unwrap();
    write_tensor_file(&d.join("q.pb"), &Tensor::from_codes(DType::Int8, vec![2], &[1, 2]).unwrap(), None).unwrap();
    write_tensor_file(&d.join("z16.pb"), &Tensor::from_codes(DType::Int16, vec![3], &[0, 0, 0]).unwrap(), None)
        .unwrap();
    let before = files(d);
    let cases: &[(&[&str], &[&str])] = &[
        (&["quantize", "x.pb", "--scale", "0", "--to", "int8"], &["--scale \"0\"", "positive and finite", "y_scale"]),
        (&["quantize", "x.pb", "--scale", "-0.5", "--to", "int8"], &["--scale \"-0.5\"", "positive and finite"]),
        (&["quantize", "x.pb", "--scale", "NaN", "--to", "int8"], &["--scale \"NaN\"", "positive and finite"]),
        (&["quantize", "x.pb", "--scale", "inf", "--to", "int8"], &["--scale \"inf\"", "positive and finite"]),
        // 1e-50 and 1e39 are positive numbers that float32 holds as 0 and infinity.
        (&["quantize", "x.pb", "--scale", "1e-50", "--to", "int8"], &["1e-50 is 0 in float32"]),
        (&["quantize", "x.pb", "--scale", "1e39", "--to", "int8"], &["1e39 is inf in float32"]),
        (
            &["dequantize", "q.pb", "--scale", "0"],
            &["--scale \"0\"", "x_scale is 0.0: a scale must be positive and finite (DequantizeLinear-28)"],
        ),
        (&["quantize", "x.pb", "--scale", "neg.pb", "--to", "int8"], &["neg.pb", "element 1 is -1.0", "positive"]),
        (
            &["quantize", "x.pb", "--scale", "1", "--zero-point", "128", "--to", "int8"],
            &["--zero-point \"128\"", "out of the range of INT8, [-128, 127]"],
        ),
        (&["quantize", "x.pb", "--scale", "1", "--zero-point", "-1"], &["out of the range of UINT8, [0, 255]"]),
        (&["quantize", "x.pb", "--scale", "1", "--zero-point", "16", "--to", "uint4"], &["UINT4, [0, 15]"]),
        (&["quantize", "x.pb", "--scale", "1", "--zero-point", "1.5", "--to", "int8"], &["not an integer"]),
        (&["dequantize", "q.pb", "--scale", "1", "--zero-point", "200"], &["out of the range of INT8"]),
        (
            &["quantize", "x.pb", "--scale", "s3.pb", "--axis", "2", "--to", "int8"],
            &["axis 2 is out of range for input x of rank 2", "[-2, 1]", "QuantizeLinear-28"],
        ),
        (&["quantize", "x.pb", "--scale", "s3.pb", "--axis", "-3", "--to", "int8"], &["axis -3 is out of range"]),
        (&["quantize", "x.pb", "--scale", "missing.pb", "--to", "int8"], &["missing.pb", "No such file"]),
        (&["quantize", "missing.pb", "--scale", "1", "--to", "int8"], &["missing.pb"]),
        (
            &["quantize", "x.pb", "--scale", "1", "--block-size", "2", "--to", "int8"],
            &["--block-size needs a scale file"],
        ),
        (
            &["quantize", "x.pb", "--scale", "s3.pb", "--block-size", "0"],
            &["--block-size: 0 is not a block size; a block holds at least 1 element (block_size)"],
        ),
        (
            &["quantize", "x.pb", "--scale", "1", "--to", "float"],
            &["--to FLOAT is not an output type of QuantizeLinear-28"],
        ),
        (
            &["dequantize", "q.pb", "--scale", "1", "--to", "int8"],
            &["--to INT8 is not an output type of DequantizeLinear-28"],
        ),
        (
            &["quantize", "x.pb", "--scale", "s3.pb", "--zero-point", "z16.pb", "--to", "int8"],
            &["--to INT8 differs from the type of the --zero-point file (INT16)"],
        ),
        // The two modes' flags: which mode wants which.
        (
            &["quantize", "x.pb", "--scheme", "ocp:mxfp4", "--scale", "0.5"],
            &["--scheme and --scale are two modes", "--scales S.pb"],
        ),
        (
            &["quantize", "x.pb", "--scale", "0.5", "--scales", "s.pb"],
            &["--scales is for the block-scaled recipes (--scheme)", "--scale (one number or a TensorProto file)"],
        ),
        (
            &["dequantize", "q.pb", "--scale", "0.5", "--scales", "s.pb", "--global-scale", "g.pb"],
            &["--scales, --global-scale are for the block-scaled recipes (--scheme)", "reads no --scales"],
        ),
        (
            &["quantize", "x.pb", "--scheme", "ocp:mxfp4", "--scales", "s.pb", "--to", "int8"],
            &["--to is for ONNX linear quantization (--scale), not --scheme"],
        ),
        (
            &[
                "quantize",
                "x.pb",
                "--scheme",
                "ocp:mxfp4",
                "--scales",
                "s.pb",
                "--zero-point",
                "1",
                "--profile",
                "spec",
            ],
            &["--zero-point, --profile are for ONNX linear quantization"],
        ),
        (&["quantize", "x.pb", "--scale", "0.5", "--onnx", "m.onnx"], &["--onnx is for the block-scaled recipes"]),
        (
            &["quantize", "x.pb", "--scheme", "ocp:mxfp4"],
            &["--scheme needs --out E.pb (the elements) and --scales S.pb"],
        ),
        (&["quantize", "x.pb", "--scales", "s.pb"], &["--scales is for --scheme SCHEME", "--scale S"]),
        (&["quantize", "x.pb"], &["give --scheme SCHEME", "or --scale S", "QuantizeLinear-28"]),
    ];
    for (args, wants) in cases {
        let mut all: Vec<&str> = args.to_vec();
        all.extend(["--out", "out.pb"]);
        let (ok, _, err) = lowbit_in(d, &all);
        assert!(!ok, "{args:?} succeeded");
        for want in *wants {
            assert!(err.contains(want), "{args:?}: {err}");
        }
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert_eq!(files(d), before, "{args:?} left a file behind");
    }
}

/// The `QuantizeLinear` and `DequantizeLinear` cases of tests/data/quant (random models whose
/// inputs are Constant nodes, with the onnx reference's or onnxruntime's output): the same
/// constants and attributes through the command line, under the profile named after the peer,
/// give the same tensor bit for bit. The CLI computes version 28; these models are of versions 10
/// to 28, and the same call gives the same result in every version that accepts it. Cases with a
/// scale that is not positive and finite are refused by the CLI, with a message saying so.
#[test]
fn the_cli_reproduces_the_peer_fixtures() {
    let root = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/quant"));
    let work = tempfile::tempdir().unwrap();
    let (mut compared, mut refused) = (0, 0);
    for profile in ["onnx-reference", "onnxruntime"] {
        let mut cases: Vec<PathBuf> =
            std::fs::read_dir(root.join(profile)).unwrap().map(|e| e.unwrap().path()).collect();
        cases.sort();
        for case in cases {
            let model = Model::load(&case.join("model.onnx")).unwrap();
            let node = model.graph.node.last().unwrap();
            let op = node.op_type.as_deref().unwrap();
            let command = match op {
                "QuantizeLinear" => "quantize",
                "DequantizeLinear" => "dequantize",
                _ => continue,
            };
            let attribute =
                |name: &str| node.attribute.iter().find(|a| a.name.as_deref() == Some(name)).and_then(|a| a.i);
            if attribute("precision").is_some() {
                continue; // not a flag of the CLI
            }
            let d = work.path().join(format!("{profile}-{}", case.file_name().unwrap().to_string_lossy()));
            std::fs::create_dir(&d).unwrap();
            for constant in &model.graph.node[..model.graph.node.len() - 1] {
                let t = tensor_from_proto(constant.attribute[0].t.as_ref().unwrap()).unwrap();
                write_tensor_file(&d.join(format!("{}.pb", constant.output[0])), &t, None).unwrap();
            }
            let expected = read_tensor_file(&case.join("test_data_set_0/output_0.pb")).unwrap();
            let mut args: Vec<String> = vec![command.into(), format!("{}.pb", node.input[0])];
            args.extend(["--scale".into(), format!("{}.pb", node.input[1])]);
            if let Some(z) = node.input.get(2).filter(|z| !z.is_empty()) {
                args.extend(["--zero-point".into(), format!("{z}.pb")]);
            }
            for (name, flag) in [("axis", "--axis"), ("block_size", "--block-size"), ("saturate", "--saturate")] {
                if let Some(v) = attribute(name) {
                    args.extend([flag.into(), v.to_string()]);
                }
            }
            if command == "dequantize" || attribute("output_dtype").is_some() {
                args.extend(["--to".into(), expected.dtype().onnx_name().into()]);
            }
            args.extend(["--profile".into(), profile.into(), "--out".into(), "y.pb".into()]);
            let refs: Vec<&str> = args.iter().map(String::as_str).collect();
            let (ok, _, err) = lowbit_in(&d, &refs);
            let scale = read_tensor_file(&d.join(format!("{}.pb", node.input[1]))).unwrap();
            let positive = scale.codes().unwrap().iter().all(|&c| {
                let v = lowbit::convert_code(scale.dtype(), DType::Double, c, &Default::default()).unwrap();
                f64::from_bits(v) > 0.0 && f64::from_bits(v).is_finite()
            });
            if !positive {
                assert!(!ok && err.contains("positive and finite"), "{}: {err}", case.display());
                refused += 1;
                continue;
            }
            assert!(ok, "{}: {args:?}: {err}", case.display());
            assert_eq!(read_tensor_file(&d.join("y.pb")).unwrap(), expected, "{}: {args:?}", case.display());
            compared += 1;
        }
    }
    // 70 such cases without `precision`: 65 compared, 5 with a zero or NaN scale.
    assert!(compared >= 65 && refused >= 5, "{compared} compared, {refused} refused");
}

/// Blocked and per-axis QuantizeLinear into integers over runs of one scale long enough for the
/// fast loops (blocks of 32 and 300 along the last axis, per axis over rows of 96; one zero point
/// and one per block), element by element against the operator's formula written out here with
/// Rust's float32 division and `round_ties_even` (spec profile: NaN to the type's minimum,
/// infinities and huge quotients saturate by sign).
#[test]
fn long_runs_of_one_scale_follow_the_formula() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let value = |i: usize| -> f32 {
        match i % 101 {
            0 => f32::NAN,
            1 => f32::INFINITY,
            2 => f32::NEG_INFINITY,
            3 => 3e38,
            4 => -0.0,
            // Ties of the quotient: k + 0.5 times the scale 0.5 or 2 (exact) land on halves.
            5 => (i % 7) as f32 + 0.5,
            _ => ((i * 7919 % 2003) as f32 - 1001.0) * 0.173,
        }
    };
    // (x shape, scale shape, --block-size, --axis, zero point shape or none, dtype)
    type Case = (&'static [usize], &'static [usize], Option<usize>, i64, Option<&'static [usize]>, DType);
    let cases: [Case; 6] = [
        (&[8, 96], &[8, 3], Some(32), -1, None, DType::Int8),
        (&[8, 96], &[8, 3], Some(32), -1, Some(&[8, 3]), DType::Int8),
        (&[8, 96], &[8, 3], Some(32), -1, None, DType::Uint4),
        (&[8, 96], &[8, 3], Some(32), -1, Some(&[8, 3]), DType::Int4),
        (&[2, 600], &[2, 2], Some(300), 1, None, DType::Uint8),
        (&[8, 96], &[8], None, 0, Some(&[8]), DType::Int16),
    ];
    for (case, &(shape, scale_shape, block, axis, zero_shape, dtype)) in cases.iter().enumerate() {
        let n: usize = shape.iter().product();
        let xs: Vec<f32> = (0..n).map(value).collect();
        let scale_count: usize = scale_shape.iter().product();
        let scales: Vec<f32> = (0..scale_count).map(|k| [0.5, 2.0, 0.37, 11.0][k % 4]).collect();
        let (qmin, qmax) = match dtype {
            DType::Int8 => (-128i64, 127i64),
            DType::Uint8 => (0, 255),
            DType::Int4 => (-8, 7),
            DType::Uint4 => (0, 15),
            _ => (-32768, 32767),
        };
        let zeros: Vec<i64> = (0..scale_count)
            .map(|k| if zero_shape.is_some() { [0, 3, -2, 1][k % 4].clamp(qmin, qmax) } else { 0 })
            .collect();
        write_tensor_file(&d.join("x.pb"), &Tensor::from_f32(&xs).reshape(shape.to_vec()).unwrap(), None).unwrap();
        write_tensor_file(&d.join("s.pb"), &Tensor::from_f32(&scales).reshape(scale_shape.to_vec()).unwrap(), None)
            .unwrap();
        let mut args: Vec<String> = ["quantize", "x.pb", "--scale", "s.pb", "--to", dtype.onnx_name(), "--out", "q.pb"]
            .map(String::from)
            .to_vec();
        args.extend(["--axis".into(), axis.to_string()]);
        if let Some(b) = block {
            args.extend(["--block-size".into(), b.to_string()]);
        }
        if let Some(z) = zero_shape {
            let codes: Vec<u64> = zeros.iter().map(|&v| (v as u64) & dtype.code_mask()).collect();
            write_tensor_file(&d.join("z.pb"), &Tensor::from_codes(dtype, z.to_vec(), &codes).unwrap(), None).unwrap();
            args.extend(["--zero-point".into(), "z.pb".into()]);
        }
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let (ok, _, err) = lowbit_in(d, &refs);
        assert!(ok, "case {case}: {err}");
        let got = read(d, "q.pb").codes().unwrap();
        let row = shape[1];
        for (i, &x) in xs.iter().enumerate() {
            let (r, c) = (i / row, i % row);
            let k = match block {
                Some(b) => r * scale_shape[1] + c / b,
                None => r, // per axis 0
            };
            let q = x / scales[k];
            let z = zeros[k];
            let v = if q.is_nan() {
                qmin
            } else {
                // Saturate before converting (quotients reach 1e39 and infinity).
                (f64::from(q.round_ties_even()) + z as f64).clamp(qmin as f64, qmax as f64) as i64
            };
            assert_eq!(got[i], (v as u64) & dtype.code_mask(), "case {case}, element {i}: {x} / {} + {z}", scales[k]);
        }
    }
}
