//! Each checkpoint convention on a hand-built file with hand-computed values: recognised from
//! its names, dtypes and config, grouped into one logical weight, and dequantized to the values
//! its producer means. Also `lowbit checkpoint` on them and on the producers' fixtures.

#![cfg(feature = "checkpoint")]

use lowbit::checkpoint::{dequantize_f32, recognise, scale_problems, write_safetensors, Checkpoint, SafetensorsTensor};
use lowbit::DType;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Writes `model.safetensors` (and `config.json` / `hf_quant_config.json` when given) in a new
/// folder; each tensor is (name, dtype, shape, bytes).
fn folder(
    tensors: &[(&str, DType, &[usize], Vec<u8>)],
    config: Option<&str>,
    hf_quant: Option<&str>,
) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let specs: Vec<SafetensorsTensor> = tensors
        .iter()
        .map(|(name, dtype, shape, _)| SafetensorsTensor {
            name: name.to_string(),
            dtype: *dtype,
            shape: shape.to_vec(),
        })
        .collect();
    write_safetensors(&dir.path().join("model.safetensors"), &specs, &[], |k, out| {
        out.write_all(&tensors[k].3).map_err(|e| lowbit::Error::io(Path::new("w"), e))
    })
    .unwrap();
    if let Some(text) = config {
        std::fs::write(dir.path().join("config.json"), text).unwrap();
    }
    if let Some(text) = hf_quant {
        std::fs::write(dir.path().join("hf_quant_config.json"), text).unwrap();
    }
    dir
}

fn f32s(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// A weight's name, convention, scheme, shape, decoded values and scale problems.
type Decoded = (String, &'static str, Option<String>, Vec<usize>, Vec<f32>, Vec<String>);

/// The single quantized weight of the checkpoint in `dir`.
fn decoded(dir: &Path) -> Decoded {
    let ckpt = Checkpoint::open(dir).unwrap();
    let weights = recognise(&ckpt);
    let w = weights.iter().find(|w| w.convention != "plain").expect("a quantized weight");
    let values = dequantize_f32(&ckpt, w).unwrap();
    let problems = scale_problems(&ckpt, w).unwrap();
    (w.name.clone(), w.convention, w.scheme.clone(), w.shape.clone(), values, problems)
}

#[test]
fn gpt_oss_mxfp4() {
    // Row 0: bytes 0x21 (E2M1 codes 1 = 0.5 low, 2 = 1.0 high), E8M0 scale 128 (x2): 1, 2, 1, 2...
    // Row 1: bytes 0xF9 (9 = -0.5, 15 = -6), scale 125 (x1/4): -0.125, -1.5, ...
    let mut blocks = vec![0x21u8; 16];
    blocks.extend([0xF9u8; 16]);
    let dir = folder(
        &[
            ("model.layers.0.mlp.experts.gate_up_proj_blocks", DType::Uint8, &[2, 1, 16], blocks),
            ("model.layers.0.mlp.experts.gate_up_proj_scales", DType::Uint8, &[2, 1], vec![128, 125]),
        ],
        Some(r#"{"quantization_config": {"quant_method": "mxfp4"}}"#),
        None,
    );
    let (name, convention, scheme, shape, values, problems) = decoded(dir.path());
    assert_eq!(
        (name.as_str(), convention, scheme.as_deref()),
        ("model.layers.0.mlp.experts.gate_up_proj", "gpt-oss mxfp4", Some("ocp:mxfp4"))
    );
    assert_eq!(shape, [2, 32]);
    let want: Vec<f32> = (0..64)
        .map(|i| match (i / 32, i % 2) {
            (0, 0) => 1.0,
            (0, _) => 2.0,
            (_, 0) => -0.125,
            _ => -1.5,
        })
        .collect();
    assert_eq!(values, want);
    assert!(problems.is_empty());
}

#[test]
fn gpt_oss_nan_scale_and_bad_shape_are_problems() {
    let dir = folder(
        &[("w_blocks", DType::Uint8, &[1, 1, 16], vec![0; 16]), ("w_scales", DType::Uint8, &[1, 1], vec![0xFF])],
        None,
        None,
    );
    let (_, _, _, _, _, problems) = decoded(dir.path());
    assert_eq!(problems, ["block scales \"w_scales\": 1 NaN codes"]);
    let dir = folder(
        &[("w_blocks", DType::Uint8, &[1, 1, 8], vec![0; 8]), ("w_scales", DType::Uint8, &[1, 1], vec![127])],
        None,
        None,
    );
    let ckpt = Checkpoint::open(dir.path()).unwrap();
    let w = &recognise(&ckpt)[0];
    assert!(w.problems[0].contains("is not [..., G, 16]"), "{:?}", w.problems);
    assert!(w.why.contains("no quantization config (recognised from names and dtypes alone)"), "{}", w.why);
    assert!(dequantize_f32(&ckpt, w).unwrap_err().to_string().contains("cannot be decoded"));
}

#[test]
fn deepseek_fp8() {
    // [2, 130] FLOAT8E4M3FN codes 0x38 (1.0); scales [1, 2]: 128-column tiles, the second short.
    let dir = folder(
        &[
            ("l.weight", DType::Float8E4M3FN, &[2, 130], vec![0x38; 260]),
            ("l.weight_scale_inv", DType::Float, &[1, 2], f32s(&[2.0, 0.5])),
        ],
        Some(r#"{"quantization_config": {"quant_method": "fp8", "weight_block_size": [128, 128]}}"#),
        None,
    );
    let (name, convention, scheme, shape, values, _) = decoded(dir.path());
    assert_eq!((name.as_str(), convention, scheme.as_deref()), ("l.weight", "deepseek fp8", Some("deepseek:fp8")));
    assert_eq!(shape, [2, 130]);
    let want: Vec<f32> = (0..260).map(|i| if i % 130 < 128 { 2.0 } else { 0.5 }).collect();
    assert_eq!(values, want);
}

#[test]
fn modelopt_nvfp4() {
    // 16 elements: bytes 0x21 (0.5, 1.0), block scale E4M3 0x40 = 2.0, weight_scale_2 = 0.5:
    // 0.5 * 2 * 0.5 = 0.5 and 1.0 * 2 * 0.5 = 1.0. input_scale stays a tensor of its own.
    let dir = folder(
        &[
            ("l.weight", DType::Uint8, &[1, 8], vec![0x21; 8]),
            ("l.weight_scale", DType::Float8E4M3FN, &[1, 1], vec![0x40]),
            ("l.weight_scale_2", DType::Float, &[], f32s(&[0.5])),
            ("l.input_scale", DType::Float, &[], f32s(&[1.0])),
        ],
        None,
        Some(r#"{"quantization": {"quant_algo": "NVFP4", "group_size": 16}}"#),
    );
    let (name, convention, scheme, shape, values, _) = decoded(dir.path());
    assert_eq!((name.as_str(), convention, scheme.as_deref()), ("l.weight", "modelopt nvfp4", Some("modelopt:nvfp4")));
    assert_eq!(shape, [1, 16]);
    assert_eq!(values, [0.5, 1.0].repeat(8));
    let ckpt = Checkpoint::open(dir.path()).unwrap();
    let names: Vec<String> = recognise(&ckpt).iter().map(|w| w.name.clone()).collect();
    assert!(names.contains(&"l.input_scale".to_string()) && names.len() == 2, "{names:?}");
}

#[test]
fn compressed_tensors_nvfp4_and_mxfp4() {
    // NVFP4: the global scale is an encode scale (448 * 6 / amax): values e * s / g:
    // 0.5 * 2 / 4 = 0.25, 1.0 * 2 / 4 = 0.5.
    let dir = folder(
        &[
            ("l.weight_packed", DType::Uint8, &[1, 8], vec![0x21; 8]),
            ("l.weight_scale", DType::Float8E4M3FN, &[1, 1], vec![0x40]),
            ("l.weight_global_scale", DType::Float, &[1], f32s(&[4.0])),
        ],
        Some(r#"{"quantization_config": {"quant_method": "compressed-tensors", "format": "nvfp4-pack-quantized"}}"#),
        None,
    );
    let (name, convention, scheme, shape, values, _) = decoded(dir.path());
    assert_eq!(
        (name.as_str(), convention, scheme.as_deref()),
        ("l.weight", "compressed-tensors nvfp4-pack-quantized", Some("compressed-tensors:nvfp4"))
    );
    assert_eq!(shape, [1, 16]);
    assert_eq!(values, [0.25, 0.5].repeat(8));
    // MXFP4: E8M0 scales per 32; 126 = x1/2.
    let dir = folder(
        &[
            ("l.weight_packed", DType::Uint8, &[1, 16], vec![0x21; 16]),
            ("l.weight_scale", DType::Uint8, &[1, 1], vec![126]),
        ],
        Some(r#"{"quantization_config": {"quant_method": "compressed-tensors", "format": "mxfp4-pack-quantized"}}"#),
        None,
    );
    let (_, convention, scheme, shape, values, _) = decoded(dir.path());
    assert_eq!(
        (convention, scheme.as_deref(), &shape[..]),
        ("compressed-tensors mxfp4-pack-quantized", Some("compressed-tensors:mxfp4"), &[1, 32][..])
    );
    assert_eq!(values, [0.25, 0.5].repeat(16));
}

#[test]
fn fp8_with_float32_scales_and_int4_refused() {
    // Per-row scales [2, 1] = 2, 0.5; codes 0x38 = 1.0 and 0xB8 = -1.0.
    let dir = folder(
        &[
            ("l.weight", DType::Float8E4M3FN, &[2, 2], vec![0x38, 0xB8, 0x38, 0xB8]),
            ("l.weight_scale", DType::Float, &[2, 1], f32s(&[2.0, 0.5])),
        ],
        Some(r#"{"quantization_config": {"quant_method": "compressed-tensors", "format": "float-quantized"}}"#),
        None,
    );
    let (_, convention, scheme, _, values, _) = decoded(dir.path());
    assert_eq!((convention, scheme.as_deref()), ("compressed-tensors float-quantized", Some("fp8:channel")));
    assert_eq!(values, [2.0, -2.0, 0.5, -0.5]);
    // int4 pack-quantized with no weights arguments in the config: compressed-tensors' defaults
    // (symmetric; one group per row where no group_size is given), its three tensors.
    let dir = folder(
        &[
            ("l.weight_packed", DType::Int32, &[1, 1], vec![0; 4]),
            ("l.weight_scale", DType::Float16, &[1, 1], vec![0, 0x3C]),
            ("l.weight_zero_point", DType::Int32, &[1, 1], vec![0; 4]),
        ],
        Some(r#"{"quantization_config": {"quant_method": "compressed-tensors", "format": "pack-quantized"}}"#),
        None,
    );
    let ckpt = Checkpoint::open(dir.path()).unwrap();
    let weights = recognise(&ckpt);
    assert_eq!(weights.len(), 1);
    assert_eq!(weights[0].tensors().len(), 3);
    assert_eq!(weights[0].convention, "compressed-tensors pack-quantized");
    assert_eq!(weights[0].scheme.as_deref(), Some("compressed-tensors:int4,channel"));
    assert_eq!(weights[0].shape, [1, 8]);
}

fn lowbit() -> Command {
    Command::new(env!("CARGO_BIN_EXE_lowbit"))
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/checkpoints").join(name)
}

#[test]
fn cli_dequantizes_gguf_as_gguf_py_does_and_compare_reports() {
    // ggml.gguf (written by gguf-py) decodes to what gguf-py's own dequantize gave.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.safetensors");
    for threads in ["1", "2"] {
        let status = lowbit()
            .args(["checkpoint", "dequantize"])
            .arg(fixture("ggml.gguf"))
            .arg("--out")
            .arg(&out)
            .args(["--threads", threads])
            .status()
            .unwrap();
        assert!(status.success());
        let compared = lowbit()
            .args(["checkpoint", "compare"])
            .arg(&out)
            .arg(fixture("ggml.expected.safetensors"))
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&compared.stdout);
        assert!(compared.status.success(), "{text}");
        assert_eq!(text.matches("identical bits").count(), 7, "{text}");
    }
    // bf16 output: a different file; compare says how many elements differ and exits 1.
    let bf16 = dir.path().join("bf16.safetensors");
    assert!(lowbit()
        .args(["checkpoint", "dequantize"])
        .arg(fixture("ggml.gguf"))
        .arg("--out")
        .arg(&bf16)
        .args(["--dtype", "bf16"])
        .status()
        .unwrap()
        .success());
    let compared = lowbit().args(["checkpoint", "compare", "--json"]).arg(&bf16).arg(&out).output().unwrap();
    assert_eq!(compared.status.code(), Some(1));
    let report: serde_json::Value = serde_json::from_slice(&compared.stdout).unwrap();
    assert_eq!(report["identical"], false);
    // bfloat16 of a float16 tensor loses bits: some f16 elements differ (f16 has 3 more bits).
    let f16 = report["weights"].as_array().unwrap().iter().find(|w| w["name"] == "f16").unwrap();
    assert!(f16["differing"].as_u64().unwrap() > 0, "{f16}");
    // --shard: two halves hold every weight once.
    let mut names = Vec::new();
    for k in ["1/2", "2/2"] {
        let part = dir.path().join(format!("part{}.safetensors", &k[..1]));
        assert!(lowbit()
            .args(["checkpoint", "dequantize"])
            .arg(fixture("ggml.gguf"))
            .arg("--out")
            .arg(&part)
            .args(["--shard", k])
            .status()
            .unwrap()
            .success());
        names.extend(Checkpoint::open(&part).unwrap().tensors().iter().map(|t| t.name.clone()));
    }
    names.sort();
    assert_eq!(names, ["bf16", "f16", "f32", "mxfp4", "nvfp4", "q4_0", "q8_0"]);
}

#[test]
fn cli_inspect_and_refusals() {
    let shown = lowbit().args(["checkpoint", "inspect", "--json"]).arg(fixture("sharded")).output().unwrap();
    assert!(shown.status.success());
    let report: serde_json::Value = serde_json::from_slice(&shown.stdout).unwrap();
    assert_eq!(report["container"], "safetensors");
    assert_eq!(report["files"].as_array().unwrap().len(), 2);
    assert_eq!(report["weights"].as_array().unwrap().len(), 3);
    // A damaged file: one line naming file, tensor and byte (8 + the 54-byte header); nothing
    // written.
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.safetensors");
    let header = br#"{"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}"#;
    let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(header);
    bytes.extend_from_slice(&[0; 8]);
    std::fs::write(&bad, bytes).unwrap();
    let out = dir.path().join("out.safetensors");
    let failed = lowbit().args(["checkpoint", "dequantize"]).arg(&bad).arg("--out").arg(&out).output().unwrap();
    assert_eq!(failed.status.code(), Some(1));
    let message = String::from_utf8_lossy(&failed.stderr);
    assert!(
        message.contains("bad.safetensors: tensor \"a\": at byte 62: dtype F32 and shape [3] need 12 bytes"),
        "{message}"
    );
    assert!(!out.exists());
}

/// `compare --json` of two checkpoints in folders `a` and `b`: the report of weight `name`.
fn compared(a: &Path, b: &Path, name: &str) -> serde_json::Value {
    let out = lowbit().args(["checkpoint", "compare", "--json"]).arg(a).arg(b).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    report["weights"].as_array().unwrap().iter().find(|w| w["name"] == name).unwrap().clone()
}

#[test]
fn compare_reports_ulps_of_the_element_format() {
    // gpt-oss MXFP4, two rows of one block. Row 0, same scale 127 in both: A's bytes 0x21 hold
    // E2M1 codes 1 (0.5) and 2 (1.0); B's 0x91 hold 1 (0.5) and 9 (-0.5). 1.0 -> -0.5 passes
    // 0.5 and 0 (+0 and -0 one value): 3 steps. Row 1: scales 127 and 128 differ, so its 32
    // elements are on different grids and not counted.
    let gpt_oss = |row0: u8, scale1: u8| {
        let mut blocks = vec![0x21u8; 16];
        blocks[5] = row0;
        blocks.extend([0x22u8; 16]);
        folder(
            &[("w_blocks", DType::Uint8, &[2, 1, 16], blocks), ("w_scales", DType::Uint8, &[2, 1], vec![127, scale1])],
            Some(r#"{"quantization_config": {"quant_method": "mxfp4"}}"#),
            None,
        )
    };
    let (a, b) = (gpt_oss(0x21, 127), gpt_oss(0x91, 128));
    let w = compared(a.path(), b.path(), "w");
    assert_eq!(w["element_format"], "FLOAT4E2M1", "{w}");
    assert_eq!(w["largest_element_ulps"], 3, "{w}");
    assert_eq!(w["elements_under_different_scales"], 32, "{w}");
    // 33 differ: element 11 of row 0 (1.0 vs -0.5), and all 32 of row 1 (bytes 0x22: code 2,
    // 1.0 under x1 and 2.0 under x2).
    assert_eq!(w["differing"], 33, "{w}");
    // DeepSeek FP8: same scale tile; E4M3 0x38 (1.0) vs 0x3B (1.375): 3 steps of 0.125.
    let deepseek = |code: u8| {
        let mut codes = vec![0x38u8; 4];
        codes[2] = code;
        folder(
            &[
                ("l.weight", DType::Float8E4M3FN, &[2, 2], codes),
                ("l.weight_scale_inv", DType::Float, &[1, 1], f32s(&[0.5])),
            ],
            Some(r#"{"quantization_config": {"quant_method": "fp8", "weight_block_size": [128, 128]}}"#),
            None,
        )
    };
    let (a, b) = (deepseek(0x38), deepseek(0x3B));
    let w = compared(a.path(), b.path(), "l.weight");
    assert_eq!(
        (&w["element_format"], &w["largest_element_ulps"], &w["elements_under_different_scales"], &w["differing"]),
        (&serde_json::json!("FLOAT8E4M3FN"), &serde_json::json!(3), &serde_json::json!(0), &serde_json::json!(1)),
        "{w}"
    );
    // A plain bfloat16 tensor: 0x3F80 (1.0) vs 0x3F85 (1.0390625) is 5 ulps; 0x0001 (the
    // smallest subnormal) vs 0x8002 (minus twice it) is 3; a NaN pair is not counted.
    let plain = |codes: [u16; 3]| {
        folder(&[("t", DType::Bfloat16, &[3], codes.iter().flat_map(|c| c.to_le_bytes()).collect())], None, None)
    };
    let (a, b) = (plain([0x3F80, 0x0001, 0x7FC0]), plain([0x3F85, 0x8002, 0x7FC1]));
    let w = compared(a.path(), b.path(), "t");
    assert_eq!(
        (&w["element_format"], &w["largest_element_ulps"]),
        (&serde_json::json!("BFLOAT16"), &serde_json::json!(5)),
        "{w}"
    );
    let (a, b) = (plain([0x3F80, 0x0001, 0x7FC0]), plain([0x3F80, 0x8002, 0x7FC1]));
    assert_eq!(compared(a.path(), b.path(), "t")["largest_element_ulps"], 3);
    // Stored differently (MXFP4 against its float32 decoding): no element ulps.
    let (a, b) = (gpt_oss(0x21, 127), folder(&[("w", DType::Float, &[2, 32], vec![0; 256])], None, None));
    assert_eq!(compared(a.path(), b.path(), "w")["largest_element_ulps"], serde_json::Value::Null);
}

#[test]
fn checkpoints_saved_by_their_producers_decode_as_the_producers_do() {
    // tests/fixtures/checkpoints/producers (scripts/gen_checkpoint_producer_fixtures.py): saved by
    // compressed-tensors' ModelCompressor and ModelOpt's export_hf_checkpoint; NAME.expected
    // holds each quantized weight as the producer's own dequantizer gives it.
    for (name, convention, scheme, weights) in [
        ("compressed-tensors-nvfp4", "compressed-tensors nvfp4-pack-quantized", "compressed-tensors:nvfp4", 1),
        ("compressed-tensors-fp8", "compressed-tensors float-quantized", "fp8:tensor", 1),
        ("compressed-tensors-fp8-block", "compressed-tensors float-quantized", "fp8:block=128x128", 1),
        ("modelopt-nvfp4", "modelopt nvfp4", "modelopt:nvfp4", 7),
    ] {
        let ckpt = Checkpoint::open(fixture(&format!("producers/{name}"))).unwrap();
        let expected = Checkpoint::open(fixture(&format!("producers/{name}.expected.safetensors"))).unwrap();
        let quantized: Vec<_> = recognise(&ckpt).into_iter().filter(|w| w.scheme.is_some()).collect();
        assert_eq!(quantized.len(), weights, "{name}");
        assert_eq!(expected.tensors().len(), weights, "{name}");
        for w in &quantized {
            assert_eq!((w.convention, w.scheme.as_deref()), (convention, Some(scheme)), "{name}: {}", w.why);
            let want = expected.tensor(&w.name).unwrap_or_else(|| panic!("{name}: {} expected", w.name));
            assert_eq!(w.shape, want.shape, "{name}: {}", w.name);
            let want: Vec<u32> =
                expected.bytes(want).chunks_exact(4).map(|b| u32::from_le_bytes(b.try_into().unwrap())).collect();
            let got: Vec<u32> = dequantize_f32(&ckpt, w).unwrap().iter().map(|v| v.to_bits()).collect();
            assert_eq!(got, want, "{name}: {}", w.name);
            assert!(want.iter().any(|&b| b & 0x7FFF_FFFF != 0), "{name}: {} is not all zeros", w.name);
        }
        // inspect names the convention.
        let shown =
            lowbit().args(["checkpoint", "inspect"]).arg(fixture(&format!("producers/{name}"))).output().unwrap();
        assert!(String::from_utf8_lossy(&shown.stdout).contains(&format!("{convention}  scheme {scheme}")), "{name}");
    }
    // ggml.gguf: gguf-py's GGUFWriter with its Q8_0, Q4_0 and MXFP4 quantizers (decoded as gguf-py
    // does in cli_dequantizes_gguf_as_gguf_py_does_and_compare_reports).
    let shown = lowbit().args(["checkpoint", "inspect"]).arg(fixture("ggml.gguf")).output().unwrap();
    let text = String::from_utf8_lossy(&shown.stdout);
    for (name, shape) in [("q8_0", "[2, 64]"), ("q4_0", "[2, 64]"), ("mxfp4", "[2, 64]"), ("nvfp4", "[2, 128]")] {
        assert!(text.contains(&format!("{name}  {shape}  gguf  scheme ggml:{name}")), "{text}");
    }
}

fn f32_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

#[test]
fn compare_gives_rmse_sqnr_cosine_and_the_largest_difference() {
    // A = w [1, 2, 3, 4], v [2, -2]; B = w [1, 2, 3, 5], v the same. By hand: w's error sum 1 over
    // 4 elements (RMSE 0.5), sum(a^2) 30 (SQNR 10 log10 30), sum(ab) 34, sum(b^2) 39; overall
    // adds v's 8 to every sum of squares and products, over 6 elements.
    let weights = |w: [f32; 4]| {
        folder(
            &[("w", DType::Float, &[2, 2], f32_bytes(&w)), ("v", DType::Float, &[2], f32_bytes(&[2.0, -2.0]))],
            None,
            None,
        )
    };
    let (a, b) = (weights([1.0, 2.0, 3.0, 4.0]), weights([1.0, 2.0, 3.0, 5.0]));
    let out = lowbit().args(["checkpoint", "compare", "--json"]).arg(a.path()).arg(b.path()).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let w = report["weights"].as_array().unwrap().iter().find(|w| w["name"] == "w").unwrap();
    let e = &w["error"];
    assert_eq!(e["max_abs_diff"], 1.0, "{e}");
    assert_eq!(e["rmse"], 0.5, "{e}");
    // The SQNRs are 10 log10(30) and 10 log10(38) rounded to float64 (by hand, to 40 digits),
    // within the platform log10's error (not correctly rounded: one ulp here).
    let near = |v: &serde_json::Value, want: f64| (v.as_f64().unwrap() - want).abs() <= 2.0 * f64::EPSILON * want;
    assert!(near(&e["sqnr_db"], 14.771212547196624), "{e}");
    assert_eq!(e["cosine_similarity"], 0.9939990885479664, "{e}");
    assert_eq!(e["finite_elements"], 4, "{e}");
    let v = report["weights"].as_array().unwrap().iter().find(|w| w["name"] == "v").unwrap();
    assert_eq!(v["identical_bits"], true);
    assert_eq!(v["error"]["sqnr_db"], serde_json::Value::Null, "{v}");
    assert_eq!(v["error"]["cosine_similarity"], 1.0, "{v}");
    let all = &report["overall"];
    assert_eq!(all["rmse"], 0.408248290463863, "{all}");
    assert!(near(&all["sqnr_db"], 15.797835966168101), "{all}");
    assert_eq!(all["cosine_similarity"], 0.9938219009886322, "{all}");
    assert_eq!(all["max_abs_diff"], 1.0, "{all}");
    // The text names the same measures.
    let out = lowbit().args(["checkpoint", "compare"]).arg(a.path()).arg(b.path()).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("RMSE 5.000000e-1, SQNR 14.771 dB, cosine 0.993999089"), "{text}");
    assert!(text.contains("overall: max |diff| 1e0, RMSE 4.082483e-1, SQNR 15.798 dB"), "{text}");
    // --only / --skip pick the weights on every command.
    let out = lowbit().args(["checkpoint", "compare", "--skip", "^w$"]).arg(a.path()).arg(b.path()).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stdout));
    let out = lowbit().args(["checkpoint", "inspect", "--json", "--only", "^v$"]).arg(a.path()).output().unwrap();
    let listed: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> = listed["weights"].as_array().unwrap().iter().map(|w| w["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["v"]);
    let dequantized = a.path().join("only-w.safetensors");
    let out = lowbit()
        .args(["checkpoint", "dequantize", "--only", "^w$", "--out"])
        .arg(&dequantized)
        .arg(a.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let names: Vec<String> = Checkpoint::open(&dequantized).unwrap().tensors().iter().map(|t| t.name.clone()).collect();
    assert_eq!(names, ["w"]);
    for command in ["inspect", "dequantize", "compare", "quantize", "which", "convert"] {
        let help = lowbit().args(["checkpoint", command, "--help"]).output().unwrap();
        let help = String::from_utf8_lossy(&help.stdout);
        assert!(help.contains("--only <REGEX>") && help.contains("--skip <REGEX>"), "{command}: {help}");
    }
    let help = lowbit().args(["checkpoint", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(help.contains("inspect, dequantize, compare, quantize, which, convert"), "{help}");
}

#[test]
fn quantize_stops_at_an_unsupported_weight_unless_told_to_keep_it() {
    // A float16 weight under torchao (which refuses float16), and one of 48 columns (not whole
    // blocks of 32) beside a float32 weight it takes.
    let a = folder(
        &[
            ("half.weight", DType::Float16, &[2, 32], vec![0; 128]),
            ("ok.weight", DType::Float, &[2, 32], f32_bytes(&[0.5; 64])),
        ],
        None,
        None,
    );
    let out = a.path().join("q");
    let failed = lowbit()
        .args(["checkpoint", "quantize", "--scheme", "torchao:mxfp4,scale=rceil", "--out"])
        .arg(&out)
        .arg(a.path())
        .output()
        .unwrap();
    assert_eq!(failed.status.code(), Some(1));
    let message = String::from_utf8_lossy(&failed.stderr);
    assert!(message.contains("\"half.weight\"") && message.contains("refuses FLOAT16 input"), "{message}");
    assert!(message.contains("--skip REGEX") && message.contains("--keep-unsupported"), "{message}");
    assert!(!out.exists());
    let kept = lowbit()
        .args(["checkpoint", "quantize", "--scheme", "torchao:mxfp4,scale=rceil", "--keep-unsupported", "--out"])
        .arg(&out)
        .arg(a.path())
        .output()
        .unwrap();
    assert!(kept.status.success(), "{}", String::from_utf8_lossy(&kept.stderr));
    let warning = String::from_utf8_lossy(&kept.stderr);
    assert!(warning.contains("warning: half.weight: torchao:mxfp4,scale=rceil refuses FLOAT16 input"), "{warning}");
    let q = Checkpoint::open(&out).unwrap();
    let half = q.tensor("half.weight").unwrap();
    assert_eq!((half.stored.to_string().as_str(), q.bytes(half)), ("FLOAT16", &[0u8; 128][..]));
    assert!(q.tensor("ok.weight_blocks").is_some());
}

#[test]
fn inspect_takes_the_fp8_layout_from_the_config_where_one_scale_fits_several() {
    // Weights smaller than one 128 x 128 tile have one scale, as a per-tensor scale would: the
    // file's config (strategy block, block_structure [128, 128]) says which.
    let a = folder(&[("small.weight", DType::Float, &[4, 64], f32_bytes(&[0.25; 256]))], None, None);
    for scheme in ["fp8:block=128x128", "fp8:block=128x64", "fp8:tensor", "fp8:channel"] {
        let out = a.path().join(scheme.replace([':', '='], "_"));
        let done = lowbit()
            .args(["checkpoint", "quantize", "--scheme", scheme, "--out"])
            .arg(&out)
            .arg(a.path())
            .output()
            .unwrap();
        assert!(done.status.success(), "{scheme}: {}", String::from_utf8_lossy(&done.stderr));
        let listed = lowbit().args(["checkpoint", "inspect", "--json"]).arg(&out).output().unwrap();
        let v: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
        let w = v["weights"].as_array().unwrap().iter().find(|w| w["name"] == "small.weight").unwrap();
        assert_eq!(w["scheme"], scheme, "{w}");
        assert_eq!(w["problems"].as_array().unwrap().len(), 0, "{w}");
    }
}

#[test]
fn dequantize_stops_at_a_weight_it_cannot_decode_unless_told_to_keep_it() {
    // A GPTQ-named weight with no qzeros (a problem: not decodable) beside a float16 tensor.
    let qweight: Vec<u8> = (0u8..32).collect();
    let scales = vec![0x00, 0x3C, 0x00, 0x40];
    let a = folder(
        &[
            ("l.qweight", DType::Int32, &[1, 2], qweight[..8].to_vec()),
            ("l.scales", DType::Float16, &[1, 2], scales.clone()),
            ("norm.weight", DType::Float16, &[2], vec![0x00, 0x3C, 0x00, 0xC0]),
        ],
        Some(r#"{"quantization_config": {"quant_method": "gptq", "bits": 4, "group_size": 8}}"#),
        None,
    );
    let out = a.path().join("d.safetensors");
    let failed = lowbit().args(["checkpoint", "dequantize", "--out"]).arg(&out).arg(a.path()).output().unwrap();
    assert_eq!(failed.status.code(), Some(1));
    let message = String::from_utf8_lossy(&failed.stderr);
    assert!(message.contains("\"l.weight\"") && message.contains("no qzeros beside qweight"), "{message}");
    assert!(message.contains("--skip REGEX") && message.contains("--keep-unsupported"), "{message}");
    assert!(!out.exists());
    let kept = lowbit()
        .args(["checkpoint", "dequantize", "--keep-unsupported", "--out"])
        .arg(&out)
        .arg(a.path())
        .output()
        .unwrap();
    assert!(kept.status.success(), "{}", String::from_utf8_lossy(&kept.stderr));
    let warning = String::from_utf8_lossy(&kept.stderr);
    assert!(warning.contains("warning: l.weight: copied as stored (no qzeros beside qweight)"), "{warning}");
    let d = Checkpoint::open(&out).unwrap();
    let names: Vec<&str> = d.tensors().iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["l.qweight", "l.scales", "norm.weight"]);
    let q = d.tensor("l.qweight").unwrap();
    assert_eq!((q.stored.to_string().as_str(), d.bytes(q)), ("INT32", &qweight[..8]));
    let s = d.tensor("l.scales").unwrap();
    assert_eq!((s.stored.to_string().as_str(), d.bytes(s)), ("FLOAT16", &scales[..]));
    // The float16 tensor beside them is converted to float32 as ever: 1.0, -2.0.
    assert_eq!(d.bytes(d.tensor("norm.weight").unwrap()), f32s(&[1.0, -2.0]));
}

#[test]
fn nan_bits_that_depend_on_the_place_in_the_whole_tensor_survive_banded_decoding() {
    use lowbit::quant::blocks::{self, Scales, Scheme};
    // compressed-tensors FP8 per-tensor of a bfloat16 model, every value NaN: torch's bfloat16
    // multiply writes 0xFFFF in its vector loop and 0x7FC0 in the tail of the whole tensor. The
    // checkpoint decoder reads more than one band of rows here (5 x 1,048,583 elements); its
    // result equals the whole tensor's dequantize, which tests/blocks_fixtures.rs checks against
    // compressed-tensors.
    let (rows, cols) = (5usize, 1_048_583usize);
    let x = vec![half::bf16::from_bits(0x7FC0); rows * cols];
    let scheme = Scheme::parse("fp8:tensor").unwrap();
    let q = blocks::quantize(&x, &[rows, cols], &scheme, -1, None).unwrap();
    let Scales::Bfloat16(scale) = &q.scales else { panic!("bfloat16 scale") };
    let dir = folder(
        &[
            ("l.weight", DType::Float8E4M3FN, &[rows, cols], q.elements.clone()),
            ("l.weight_scale", DType::Bfloat16, &[1], scale[0].to_le_bytes().to_vec()),
        ],
        Some(r#"{"quantization_config": {"quant_method": "compressed-tensors", "format": "float-quantized"}}"#),
        None,
    );
    let (_, _, scheme_name, _, values, _) = decoded(dir.path());
    assert_eq!(scheme_name.as_deref(), Some("fp8:tensor"));
    let whole = q.dequantize().unwrap();
    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<u32>>();
    let (got, want) = (bits(&values), bits(&whole));
    assert!(want.contains(&0xFFFF_0000) && want.contains(&0x7FC0_0000), "both kinds of NaN");
    let first = got.iter().zip(&want).position(|(a, b)| a != b);
    assert_eq!(first, None, "first difference at {first:?}");
}

/// The float32 bits of an integer scheme's dequantize (checked against its producer elsewhere).
fn dequantized_bits(q: &lowbit::quant::blocks::Quantized) -> Vec<u32> {
    let bytes = lowbit::quant::blocks::dequantize_as(q, DType::Float).unwrap();
    bytes.chunks_exact(4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect()
}

/// Writes the tensors a producer saves (`blocks::storage`) under `prefix` with `config`.
fn producer_folder(prefix: &str, tensors: &[lowbit::quant::blocks::StoredTensor], config: &str) -> tempfile::TempDir {
    let named: Vec<(String, DType, Vec<usize>, Vec<u8>)> =
        tensors.iter().map(|t| (format!("{prefix}{}", t.name), t.dtype, t.shape.clone(), t.data.clone())).collect();
    let refs: Vec<(&str, DType, &[usize], Vec<u8>)> =
        named.iter().map(|(n, d, s, b)| (n.as_str(), *d, s.as_slice(), b.clone())).collect();
    folder(&refs, Some(config), None)
}

#[test]
fn compressed_tensors_integer_weights_decode_as_their_scheme_dequantizes() {
    use lowbit::quant::blocks::{self, Scheme};
    let (rows, cols) = (4usize, 64usize);
    let x: Vec<f32> = (0..rows * cols).map(|i| ((i * 37 % 101) as f32 - 50.0) / 16.0).collect();
    let raw: Vec<u8> = x.iter().flat_map(|v| v.to_le_bytes()).collect();
    for (scheme, weights, format, convention) in [
        (
            "compressed-tensors:int4,group=32",
            r#"{"num_bits": 4, "strategy": "group", "group_size": 32, "symmetric": true}"#,
            "pack-quantized",
            "compressed-tensors pack-quantized",
        ),
        (
            "compressed-tensors:int4,group=32,asym",
            r#"{"num_bits": 4, "strategy": "group", "group_size": 32, "symmetric": false}"#,
            "pack-quantized",
            "compressed-tensors pack-quantized",
        ),
        (
            "compressed-tensors:int8,channel,format=int-quantized",
            r#"{"num_bits": 8, "strategy": "channel", "symmetric": true}"#,
            "int-quantized",
            "compressed-tensors int-quantized",
        ),
    ] {
        let s = Scheme::parse(scheme).unwrap();
        let q = blocks::quantize_weight(DType::Float, &raw, &[rows, cols], &s, None).unwrap();
        let config = format!(
            r#"{{"quantization_config": {{"quant_method": "compressed-tensors", "format": "{format}",
                "config_groups": {{"group_0": {{"weights": {weights}, "targets": ["Linear"]}}}}}}}}"#
        );
        let dir = producer_folder("model.layers.0.mlp.up_proj.", &blocks::storage(&q).unwrap(), &config);
        let (name, got_convention, got_scheme, shape, values, _) = decoded(dir.path());
        assert_eq!(name, "model.layers.0.mlp.up_proj.weight");
        assert_eq!(
            (got_convention, got_scheme.as_deref(), shape.as_slice()),
            (convention, Some(scheme), &[rows, cols][..])
        );
        let want: Vec<u32> = dequantized_bits(&q);
        assert_eq!(values.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), want, "{scheme}");
    }
}

#[test]
fn mlx_affine_weights_decode_as_their_scheme_dequantizes() {
    use lowbit::quant::blocks::{self, Scheme};
    let (rows, cols) = (3usize, 128usize);
    let x: Vec<half::f16> =
        (0..rows * cols).map(|i| half::f16::from_f32(((i * 53 % 97) as f32 - 48.0) / 8.0)).collect();
    let raw: Vec<u8> = x.iter().flat_map(|v| v.to_bits().to_le_bytes()).collect();
    let scheme = "mlx:affine,bits=4,group=64";
    let q =
        blocks::quantize_weight(DType::Float16, &raw, &[rows, cols], &Scheme::parse(scheme).unwrap(), None).unwrap();
    let config = r#"{"quantization": {"group_size": 64, "bits": 4}}"#;
    let dir = producer_folder("model.layers.0.self_attn.q_proj.", &blocks::storage(&q).unwrap(), config);
    let (name, convention, got_scheme, shape, values, _) = decoded(dir.path());
    assert_eq!(name, "model.layers.0.self_attn.q_proj.weight");
    assert_eq!((convention, got_scheme.as_deref(), shape.as_slice()), ("mlx affine", Some(scheme), &[rows, cols][..]));
    let want: Vec<u32> = dequantized_bits(&q);
    assert_eq!(values.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), want);
}

#[test]
fn gptq_awq_and_bitsandbytes_weights_decode_as_their_scheme_dequantizes() {
    use lowbit::quant::blocks::{self, Scheme};
    let (rows, cols) = (64usize, 128usize);
    let x: Vec<half::f16> =
        (0..rows * cols).map(|i| half::f16::from_f32(((i * 29 % 89) as f32 - 44.0) / 32.0)).collect();
    let raw: Vec<u8> = x.iter().flat_map(|v| v.to_bits().to_le_bytes()).collect();
    for (scheme, config, prefix, convention) in [
        (
            "gptq:int4,group=32",
            r#"{"quantization_config": {"quant_method": "gptq", "bits": 4, "group_size": 32, "desc_act": false, "sym": true}}"#,
            "model.layers.0.mlp.down_proj.",
            "gptq",
        ),
        (
            "awq:int4,group=64",
            r#"{"quantization_config": {"quant_method": "awq", "bits": 4, "group_size": 64, "zero_point": true, "version": "gemm"}}"#,
            "model.layers.0.mlp.gate_proj.",
            "awq gemm",
        ),
        (
            "bnb:nf4,nested",
            r#"{"quantization_config": {"quant_method": "bitsandbytes", "load_in_4bit": true, "bnb_4bit_quant_type": "nf4", "bnb_4bit_use_double_quant": true}}"#,
            "model.layers.0.self_attn.v_proj.",
            "bitsandbytes 4-bit",
        ),
    ] {
        let s = Scheme::parse(scheme).unwrap();
        let q = blocks::quantize_weight(DType::Float16, &raw, &[rows, cols], &s, None).unwrap();
        // bitsandbytes names its tensors after the weight (`P.weight.absmax`), the others after
        // the layer (`P.qweight`).
        let stored: Vec<lowbit::quant::blocks::StoredTensor> = blocks::storage(&q)
            .unwrap()
            .into_iter()
            .map(|mut t| {
                if scheme.starts_with("bnb") && t.name != "weight" {
                    t.name = format!("weight.{}", t.name);
                }
                t
            })
            .collect();
        let dir = producer_folder(prefix, &stored, config);
        let (name, got_convention, got_scheme, shape, values, _) = decoded(dir.path());
        assert_eq!(name, format!("{prefix}weight"));
        assert_eq!(
            (got_convention, got_scheme.as_deref(), shape.as_slice()),
            (convention, Some(scheme), &[rows, cols][..])
        );
        let want: Vec<u32> = dequantized_bits(&q);
        assert_eq!(values.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), want, "{scheme}");
    }
}
