//! `lowbit quantize/dequantize --scheme` beyond OCP MX (tests/cli_quantize.rs has those), `lowbit
//! schemes`, and ModelOpt's exported ONNX form of NVFP4: `lowbit run` on the graph as ModelOpt
//! 0.47's exporter writes it, and `lowbit quantize --scheme modelopt:nvfp4 --onnx`. Every expected
//! value is computed by hand in the comments.

use lowbit::onnx::proto::{
    AttributeProto, Dimension, GraphProto, ModelProto, NodeProto, OperatorSetIdProto, TensorShapeProto, TypeProto,
    TypeProtoTensor, ValueInfoProto,
};
use lowbit::onnx::runner::Model;
use lowbit::onnx::tensor_proto::{read_tensor_file, tensor_from_proto, tensor_to_proto, write_tensor_file};
use lowbit::{DType, Tensor};
use prost::Message;
use std::path::Path;
use std::process::Command;

fn lowbit(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_lowbit")).args(args).output().unwrap();
    (out.status.success(), String::from_utf8(out.stdout).unwrap(), String::from_utf8(out.stderr).unwrap())
}

fn p(dir: &Path, name: &str) -> String {
    dir.join(name).display().to_string()
}

fn bits(t: &Tensor) -> Vec<u32> {
    t.to_f32_vec().unwrap().iter().map(|v| v.to_bits()).collect()
}

fn f32_bits(values: &[f32]) -> Vec<u32> {
    values.iter().map(|v| v.to_bits()).collect()
}

/// FLOAT4E2M1 values by code (OCP MX v1.0, table of E2M1): 0 0.5 1 1.5 2 3 4 6 and negatives.
const E2M1: [f32; 16] = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0];

fn value_info(name: &str, dtype: DType, shape: &[i64]) -> ValueInfoProto {
    let dim = shape.iter().map(|&d| Dimension { dim_value: Some(d), dim_param: None, denotation: None }).collect();
    ValueInfoProto {
        name: Some(name.into()),
        r#type: Some(TypeProto {
            tensor_type: Some(TypeProtoTensor {
                elem_type: Some(dtype.onnx_number()),
                shape: Some(TensorShapeProto { dim }),
            }),
            denotation: None,
        }),
        doc_string: None,
    }
}

fn node(inputs: [&str; 2], output: &str, attributes: &[(&str, i64)]) -> NodeProto {
    NodeProto {
        input: inputs.iter().map(|s| s.to_string()).collect(),
        output: vec![output.into()],
        op_type: Some("DequantizeLinear".into()),
        attribute: attributes
            .iter()
            .map(|(name, i)| AttributeProto {
                name: Some(name.to_string()),
                i: Some(*i),
                r#type: Some(2),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

/// The graph ModelOpt 0.47's `NVFP4QuantExporter` writes for a weight `w` (read in
/// `modelopt/onnx/export/nvfp4_exporter.py`, `_replace_fp4qdq_with_2dq`): the three initializers
/// also listed as graph inputs, the per-tensor scale of shape [1], `DequantizeLinear(w_f8_scale,
/// w_f8_scale_f32_scale)` with no attribute (so axis 1 with a one-element scale), then
/// `DequantizeLinear(w_f4, w_f32_scale, axis=-1, block_size=16)`, opset 23.
fn modelopt_graph(elements: &Tensor, scales: &Tensor, global: f32) -> ModelProto {
    let global = Tensor::from_f32(&[global]);
    let inits = [("w_f4", elements), ("w_f8_scale_f32_scale", &global), ("w_f8_scale", scales)];
    let dims = |t: &Tensor| t.shape().iter().map(|&d| d as i64).collect::<Vec<_>>();
    let graph = GraphProto {
        node: vec![
            node(["w_f8_scale", "w_f8_scale_f32_scale"], "w_f32_scale", &[]),
            node(["w_f4", "w_f32_scale"], "w", &[("axis", -1), ("block_size", 16)]),
        ],
        name: Some("g".into()),
        initializer: inits.iter().map(|(name, t)| tensor_to_proto(t, Some(name))).collect(),
        input: inits.iter().map(|(name, t)| value_info(name, t.dtype(), &dims(t))).collect(),
        output: vec![value_info("w", DType::Float, &dims(elements))],
        value_info: vec![value_info("w_f32_scale", DType::Float, &dims(scales))],
        doc_string: None,
    };
    ModelProto {
        ir_version: Some(11),
        graph: Some(graph),
        opset_import: vec![OperatorSetIdProto { domain: Some(String::new()), version: Some(23) }],
        ..Default::default()
    }
}

#[test]
fn lowbit_run_runs_modelopts_exported_nvfp4_graph() {
    let dir = tempfile::tempdir().unwrap();
    // Weight [2, 32]: two blocks of 16 per row. Block scales (E4M3) 0x38 = 1, 0x40 = 2, 0x30 =
    // 0.5, 0x7E = 448; per-tensor scale 0.25: the first node gives 0.25, 0.5, 0.125, 112. Block k
    // holds codes (j + k) mod 16, so every code meets every scale; element = E2M1 value * that
    // (exact in float32), code 8 (-0) giving -0.0 as DequantizeLinear multiplies it.
    let scale_codes = [0x38u64, 0x40, 0x30, 0x7E];
    let block_scales = [0.25f32, 0.5, 0.125, 112.0];
    let codes: Vec<u64> = (0..64).map(|i| ((i % 16 + i / 16) % 16) as u64).collect();
    let elements = Tensor::from_codes(DType::Float4E2M1, vec![2, 32], &codes).unwrap();
    let scales = Tensor::from_codes(DType::Float8E4M3FN, vec![2, 2], &scale_codes).unwrap();
    let model = modelopt_graph(&elements, &scales, 0.25);
    std::fs::write(dir.path().join("m.onnx"), model.encode_to_vec()).unwrap();
    let (ok, out, err) = lowbit(&["run", &p(dir.path(), "m.onnx"), "--output-dir", &p(dir.path(), "out")]);
    assert!(ok, "{err}");
    assert!(out.contains("w.pb FLOAT [2, 32]"), "{out}");
    let y = read_tensor_file(&dir.path().join("out/w.pb")).unwrap();
    let want: Vec<f32> = codes.iter().enumerate().map(|(i, &c)| E2M1[c as usize] * block_scales[i / 16]).collect();
    assert_eq!(bits(&y), f32_bits(&want));
    assert_eq!(want[8].to_bits(), (-0.0f32).to_bits());
}

/// Weight [1, 32], per-tensor amax 2688 so that ModelOpt's G = 2688 / 2688 = 1 exactly.
/// Block 0: amax 2688, scale 2688 / (6 * 1) = 448 (0x7E); 2688 / 448 = 6 (code 7), 448 -> 1
/// (2), -1344 -> -3 (0xD), 224 -> 0.5 (1). Block 1: amax 6, scale 1 (0x38); 6 -> 7, 1.5 -> 3,
/// -0.25 is the tie of 0 and 0.5, to even 0, sign from x < 0: code 8; 0.75 ties 0.5 and 1, to
/// even 1 (2). Zeros -> 0.
fn nvfp4_weight() -> (Tensor, Vec<u64>) {
    let mut x = vec![0.0f32; 32];
    x[..4].copy_from_slice(&[2688.0, 448.0, -1344.0, 224.0]);
    x[16..20].copy_from_slice(&[6.0, 1.5, -0.25, 0.75]);
    let mut codes = vec![0u64; 32];
    codes[..4].copy_from_slice(&[7, 2, 0xD, 1]);
    codes[16..20].copy_from_slice(&[7, 3, 8, 2]);
    (Tensor::from_f32(&x).reshape(vec![1, 32]).unwrap(), codes)
}

#[test]
fn modelopt_nvfp4_files_and_its_onnx_graph() {
    let dir = tempfile::tempdir().unwrap();
    let (x, codes) = nvfp4_weight();
    write_tensor_file(&dir.path().join("x.pb"), &x, None).unwrap();
    let (ok, out, err) = lowbit(&[
        "quantize",
        "--scheme",
        "modelopt:nvfp4",
        &p(dir.path(), "x.pb"),
        "--scales",
        &p(dir.path(), "s.pb"),
        "--global-scale",
        &p(dir.path(), "g.pb"),
        "--out",
        &p(dir.path(), "e.pb"),
        "--onnx",
        &p(dir.path(), "m.onnx"),
    ]);
    assert!(ok, "{err}");
    assert!(out.contains("FLOAT8E4M3FN [1, 2]") && out.contains("FLOAT4E2M1 [1, 32]"), "{out}");
    let e = read_tensor_file(&dir.path().join("e.pb")).unwrap();
    let s = read_tensor_file(&dir.path().join("s.pb")).unwrap();
    let g = read_tensor_file(&dir.path().join("g.pb")).unwrap();
    assert_eq!((e.dtype(), e.codes().unwrap()), (DType::Float4E2M1, codes.clone()));
    assert_eq!((s.dtype(), s.shape(), s.codes().unwrap()), (DType::Float8E4M3FN, &[1usize, 2][..], vec![0x7E, 0x38]));
    assert_eq!(bits(&g), [1.0f32.to_bits()]);

    // The graph: ModelOpt's names, initializers (also graph inputs), nodes and opset.
    let model = Model::load(&dir.path().join("m.onnx")).unwrap();
    assert_eq!(model.opset, 23);
    let graph = &model.graph;
    let init = |name: &str| {
        tensor_from_proto(graph.initializer.iter().find(|t| t.name.as_deref() == Some(name)).unwrap()).unwrap()
    };
    assert_eq!(init("w_f4").codes().unwrap(), codes);
    assert_eq!(init("w_f8_scale").codes().unwrap(), [0x7E, 0x38]);
    let global = init("w_f8_scale_f32_scale");
    assert_eq!((global.shape(), bits(&global)), (&[1usize][..], vec![1.0f32.to_bits()]));
    let inputs: Vec<&str> = graph.input.iter().filter_map(|i| i.name.as_deref()).collect();
    assert_eq!(inputs, ["w_f4", "w_f8_scale_f32_scale", "w_f8_scale"]);
    // Each node: op type, inputs, output, integer attributes.
    let ops: Vec<String> = graph
        .node
        .iter()
        .map(|n| {
            let attributes: Vec<String> =
                n.attribute.iter().map(|a| format!("{}={}", a.name.clone().unwrap(), a.i.unwrap())).collect();
            format!("{} {:?} -> {:?} {:?}", n.op_type.clone().unwrap(), n.input, n.output, attributes)
        })
        .collect();
    assert_eq!(
        ops,
        [
            r#"DequantizeLinear ["w_f8_scale", "w_f8_scale_f32_scale"] -> ["w_f32_scale"] []"#,
            r#"DequantizeLinear ["w_f4", "w_f32_scale"] -> ["w"] ["axis=-1", "block_size=16"]"#,
        ]
    );

    // Run: E2M1 value * (scale * G): 6 * 448, 1 * 448, -3 * 448, 0.5 * 448; 6, 1.5, -0 (code 8:
    // DequantizeLinear's -0 * 1), 1; zeros.
    let (ok, _, err) = lowbit(&["run", &p(dir.path(), "m.onnx"), "--output-dir", &p(dir.path(), "out")]);
    assert!(ok, "{err}");
    let run = read_tensor_file(&dir.path().join("out/w.pb")).unwrap();
    let mut want = vec![0.0f32; 32];
    want[..4].copy_from_slice(&[2688.0, 448.0, -1344.0, 224.0]);
    want[16..20].copy_from_slice(&[6.0, 1.5, -0.0, 1.0]);
    assert_eq!(bits(&run), f32_bits(&want));

    // `lowbit dequantize` of the files equals the run bit for bit, except the sign of code 8's
    // zero: ModelOpt's own dequantize looks code 8 up as +0 (`e2m1_values` in nvfp4_tensor.py),
    // where DequantizeLinear multiplies -0.
    let (ok, _, err) = lowbit(&[
        "dequantize",
        "--scheme",
        "modelopt:nvfp4",
        &p(dir.path(), "e.pb"),
        "--scales",
        &p(dir.path(), "s.pb"),
        "--global-scale",
        &p(dir.path(), "g.pb"),
        "--out",
        &p(dir.path(), "y.pb"),
    ]);
    assert!(ok, "{err}");
    let y = read_tensor_file(&dir.path().join("y.pb")).unwrap().to_f32_vec().unwrap();
    for (i, (&a, &b)) in y.iter().zip(&want).enumerate() {
        if codes[i] == 8 {
            assert!(a == 0.0, "element {i}: {a}");
        } else {
            assert_eq!(a.to_bits(), b.to_bits(), "element {i}");
        }
    }
}

#[test]
fn the_onnx_graph_takes_modelopts_exporter_rules_for_the_per_tensor_scale() {
    let dir = tempfile::tempdir().unwrap();
    // An all-zero weight: amax / 2688 = 0, which the exporter replaces by 1.0; block amax 0 gives
    // scale 0, replaced by 1.0 (0x38); elements 0. The graph decodes to zeros.
    write_tensor_file(&dir.path().join("z.pb"), &Tensor::from_f32(&[0.0; 16]).reshape(vec![1, 16]).unwrap(), None)
        .unwrap();
    let (ok, _, err) =
        lowbit(&["quantize", "--scheme", "modelopt:nvfp4", &p(dir.path(), "z.pb"), "--onnx", &p(dir.path(), "z.onnx")]);
    assert!(ok, "{err}");
    let model = Model::load(&dir.path().join("z.onnx")).unwrap();
    let init = |name: &str| {
        tensor_from_proto(model.graph.initializer.iter().find(|t| t.name.as_deref() == Some(name)).unwrap()).unwrap()
    };
    assert_eq!(bits(&init("w_f8_scale_f32_scale")), [1.0f32.to_bits()]);
    assert_eq!(init("w_f8_scale").codes().unwrap(), [0x38]);
    assert_eq!(init("w_f4").codes().unwrap(), [0; 16]);
    let (ok, _, err) = lowbit(&["run", &p(dir.path(), "z.onnx"), "--output-dir", &p(dir.path(), "out")]);
    assert!(ok, "{err}");
    assert_eq!(bits(&read_tensor_file(&dir.path().join("out/w.pb")).unwrap()), [0; 16]);
    // A NaN in the weight makes amax / 2688 NaN: the exporter refuses it, and so does lowbit,
    // writing nothing.
    let mut x = [1.0f32; 16];
    x[3] = f32::NAN;
    write_tensor_file(&dir.path().join("n.pb"), &Tensor::from_f32(&x).reshape(vec![1, 16]).unwrap(), None).unwrap();
    let (ok, _, err) =
        lowbit(&["quantize", "--scheme", "modelopt:nvfp4", &p(dir.path(), "n.pb"), "--onnx", &p(dir.path(), "n.onnx")]);
    assert!(!ok && err.contains("per-tensor scales must be finite") && err.trim_end().lines().count() == 1, "{err}");
    assert!(!dir.path().join("n.onnx").exists());
}

#[test]
fn a_given_per_tensor_scale() {
    let dir = tempfile::tempdir().unwrap();
    // modelopt:nvfp4 with G = 2: amax 12, scale 12 / (6 * 2) = 1 (0x38); x / (1 * 2): 12 -> 6
    // (7), 3 -> 1.5 (3), -6 -> -3 (0xD). Dequantized: E2M1 value * (1 * 2).
    let mut x = [0.0f32; 16];
    x[..3].copy_from_slice(&[12.0, 3.0, -6.0]);
    write_tensor_file(&dir.path().join("x.pb"), &Tensor::from_f32(&x), None).unwrap();
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_lowbit")).args(args).current_dir(dir.path()).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    };
    let files = ["--scales", "s.pb", "--global-scale", "g.pb"];
    let mut quantize = vec!["quantize", "--scheme", "modelopt:nvfp4", "x.pb", "--global-scale-value", "2"];
    quantize.extend(files.iter().chain(&["--out", "e.pb"]));
    run(&quantize);
    let e = read_tensor_file(&dir.path().join("e.pb")).unwrap();
    assert_eq!(e.codes().unwrap()[..4], [7, 3, 0xD, 0]);
    assert_eq!(read_tensor_file(&dir.path().join("s.pb")).unwrap().codes().unwrap(), [0x38]);
    assert_eq!(bits(&read_tensor_file(&dir.path().join("g.pb")).unwrap()), [2.0f32.to_bits()]);
    let mut dequantize = vec!["dequantize", "--scheme", "modelopt:nvfp4", "e.pb"];
    dequantize.extend(files.iter().chain(&["--out", "y.pb"]));
    run(&dequantize);
    let y = read_tensor_file(&dir.path().join("y.pb")).unwrap().to_f32_vec().unwrap();
    assert_eq!(f32_bits(&y[..4]), f32_bits(&[12.0, 3.0, -6.0, 0.0]));
}

#[test]
fn ggml_blocks_through_the_files() {
    let dir = tempfile::tempdir().unwrap();
    // Q8_0: amax 127, d = 127 / 127 = 1 (float16 0x3C00), elements roundf(x * 1), ties away from
    // zero: 127, 0.5 -> 1, -0.5 -> -1 (0xFF), 2.5 -> 3, -126.5 -> -127 (0x81). INT8 elements.
    let mut x = [0.0f32; 32];
    x[..5].copy_from_slice(&[127.0, 0.5, -0.5, 2.5, -126.5]);
    write_tensor_file(&dir.path().join("x.pb"), &Tensor::from_f32(&x).reshape(vec![1, 32]).unwrap(), None).unwrap();
    let q = |scheme: &str| {
        let (ok, _, err) = lowbit(&[
            "quantize",
            "--scheme",
            scheme,
            &p(dir.path(), "x.pb"),
            "--scales",
            &p(dir.path(), "s.pb"),
            "--out",
            &p(dir.path(), "e.pb"),
        ]);
        assert!(ok, "{scheme}: {err}");
        let (ok, _, err) = lowbit(&[
            "dequantize",
            "--scheme",
            scheme,
            &p(dir.path(), "e.pb"),
            "--scales",
            &p(dir.path(), "s.pb"),
            "--out",
            &p(dir.path(), "y.pb"),
        ]);
        assert!(ok, "{scheme}: {err}");
        let read = |name: &str| read_tensor_file(&dir.path().join(name)).unwrap();
        (read("e.pb"), read("s.pb"), read("y.pb").to_f32_vec().unwrap())
    };
    let (e, s, y) = q("ggml:q8_0");
    assert_eq!((e.dtype(), &e.codes().unwrap()[..6]), (DType::Int8, &[127, 1, 0xFF, 3, 0x81, 0][..]));
    assert_eq!((s.dtype(), s.shape(), s.codes().unwrap()), (DType::Float16, &[1usize, 1][..], vec![0x3C00]));
    assert_eq!(f32_bits(&y[..6]), f32_bits(&[127.0, 1.0, -1.0, 3.0, -127.0, 0.0]));
    // Q4_0: the signed value of largest magnitude is -8, d = -8 / -8 = 1 (0x3C00); code =
    // trunc(x * 1 + 8.5), at most 15 (ties up): -8 -> 0, 0.5 -> 9, -0.5 -> 8, 1.5 -> 10, -1.5 -> 7,
    // 7.5 -> 15 (16 clamped), 0 -> 8. Value (code - 8) * d.
    x[..6].copy_from_slice(&[-8.0, 0.5, -0.5, 1.5, -1.5, 7.5]);
    write_tensor_file(&dir.path().join("x.pb"), &Tensor::from_f32(&x).reshape(vec![1, 32]).unwrap(), None).unwrap();
    let (e, s, y) = q("ggml:q4_0");
    assert_eq!((e.dtype(), &e.codes().unwrap()[..7]), (DType::Uint4, &[0, 9, 8, 10, 7, 15, 8][..]));
    assert_eq!(s.codes().unwrap(), [0x3C00]);
    assert_eq!(f32_bits(&y[..7]), f32_bits(&[-8.0, 1.0, 0.0, 2.0, -1.0, 7.0, 0.0]));
}

#[test]
fn torchao_nvfp4_has_a_per_tensor_scale_only_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    // One level: s = amax / 6 = 1 (0x38), elements x * (1 / s): 6 -> 7, 3 -> 5, -1.5 -> 0xB, 0.25
    // is the tie of 0 and 0.5, to even 0. Dequantized: E2M1 value * 1.
    let mut x = [0.0f32; 16];
    x[..4].copy_from_slice(&[6.0, 3.0, -1.5, 0.25]);
    write_tensor_file(&dir.path().join("x.pb"), &Tensor::from_f32(&x), None).unwrap();
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_lowbit")).args(args).current_dir(dir.path()).output().unwrap();
        (out.status.success(), String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let files = ["--scales", "s.pb", "--out", "e.pb"];
    let mut one_level = vec!["quantize", "--scheme", "torchao:nvfp4", "x.pb"];
    one_level.extend(files);
    let (ok, err) = run(&one_level);
    assert!(ok, "{err}");
    assert_eq!(read_tensor_file(&dir.path().join("e.pb")).unwrap().codes().unwrap()[..4], [7, 5, 0xB, 0]);
    assert_eq!(read_tensor_file(&dir.path().join("s.pb")).unwrap().codes().unwrap(), [0x38]);
    let (ok, err) = run(&["dequantize", "--scheme", "torchao:nvfp4", "e.pb", "--scales", "s.pb", "--out", "y.pb"]);
    assert!(ok, "{err}");
    let y = read_tensor_file(&dir.path().join("y.pb")).unwrap().to_f32_vec().unwrap();
    assert_eq!(f32_bits(&y[..4]), f32_bits(&[6.0, 3.0, -1.5, 0.0]));
    // No per-tensor scale to write; with global=amax there is one, and it must have a file.
    one_level.extend(["--global-scale", "g.pb"]);
    let (ok, err) = run(&one_level);
    assert!(!ok && err.contains("torchao:nvfp4 gives no per-tensor scale here"), "{err}");
    let mut two_level = vec!["quantize", "--scheme", "torchao:nvfp4,global=amax", "x.pb"];
    two_level.extend(files);
    let (ok, err) = run(&two_level);
    assert!(!ok && err.contains("has a per-tensor scale: give --global-scale G.pb"), "{err}");
    assert!(!dir.path().join("g.pb").exists());
}

#[test]
fn schemes_lists_every_family_with_its_source() {
    let (ok, out, err) = lowbit(&["schemes", "--json"]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let entries = v["schemes"].as_array().unwrap();
    let names: Vec<&str> = entries.iter().map(|e| e["name"].as_str().unwrap()).collect();
    for family in [
        "ocp:",
        "torchao:mx",
        "torchao:nvfp4",
        "modelopt:nvfp4",
        "compressed-tensors:nvfp4",
        "compressed-tensors:mxfp4",
        "ggml:q8_0",
        "deepseek:fp8",
        "fp8:tensor",
    ] {
        assert!(names.iter().any(|n| n.contains(family)), "{family}: {names:?}");
    }
    for (family, source) in [("modelopt:nvfp4", "nvidia-modelopt 0.47.0"), ("torchao:nvfp4", "torchao 0.18.0")] {
        let e = entries.iter().find(|e| e["name"].as_str().unwrap().starts_with(family)).unwrap();
        assert!(e["source"].as_str().unwrap().contains(source), "{e}");
    }
    let layouts: Vec<&str> =
        v["scale_layouts"].as_array().unwrap().iter().map(|e| e["name"].as_str().unwrap()).collect();
    assert_eq!(layouts, ["linear", "cublas128x4"]);
    let (ok, text, _) = lowbit(&["schemes"]);
    assert!(ok && names.iter().chain(&layouts).all(|n| text.contains(n)), "{text}");
}

#[test]
fn bad_scheme_input_is_one_line_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_tensor_file(&d.join("x.pb"), &Tensor::from_f32(&[1.0; 40]).reshape(vec![2, 20]).unwrap(), None).unwrap();
    write_tensor_file(&d.join("x32.pb"), &Tensor::from_f32(&[1.0; 32]).reshape(vec![1, 32]).unwrap(), None).unwrap();
    let cases: &[(&[&str], &[&str])] = &[
        (&["quantize", "--scheme", "ocp:mxfp3", "x.pb", "--scales", "s.pb", "--out", "e.pb"], &["mxfp3", "ocp:"]),
        (&["quantize", "--scheme", "nosuch:nvfp4", "x.pb", "--scales", "s.pb", "--out", "e.pb"], &["unknown scheme"]),
        (
            &["quantize", "--scheme", "ggml:q8_0", "x32.pb", "--onnx", "m.onnx"],
            &["--onnx writes ModelOpt's exported NVFP4 graph: it needs --scheme modelopt:nvfp4"],
        ),
        (
            &["quantize", "--scheme", "modelopt:nvfp4", "x32.pb", "--scales", "s.pb", "--out", "e.pb"],
            &["modelopt:nvfp4 has a per-tensor scale: give --global-scale G.pb"],
        ),
        (
            &[
                "quantize",
                "--scheme",
                "ggml:q8_0",
                "x32.pb",
                "--scales",
                "s.pb",
                "--out",
                "e.pb",
                "--global-scale",
                "g",
            ],
            &["ggml:q8_0 has no per-tensor scale"],
        ),
        (
            &[
                "quantize",
                "--scheme",
                "modelopt:nvfp4",
                "x32.pb",
                "--scales",
                "s.pb",
                "--global-scale",
                "s.pb",
                "--out",
                "e",
            ],
            &["s.pb is named for two outputs"],
        ),
        // A short last block: ModelOpt pads it and then cannot dequantize; lowbit refuses.
        (
            &[
                "quantize",
                "--scheme",
                "modelopt:nvfp4",
                "x.pb",
                "--scales",
                "s.pb",
                "--global-scale",
                "g",
                "--out",
                "e",
            ],
            &["ModelOpt pads a short last block"],
        ),
        (
            &["quantize", "--scheme", "modelopt:nvfp4", "x32.pb", "--onnx", "m.onnx", "--global-scale-value", "2"],
            &["--onnx computes the per-tensor scale as ModelOpt's exporter does"],
        ),
        (&["dequantize", "--scheme", "ggml:q8_0", "x32.pb", "--out", "y.pb"], &["--scheme needs --scales S.pb"]),
        (
            &["dequantize", "--scheme", "ggml:q8_0", "x32.pb", "--scales", "x32.pb", "--out", "y.pb"],
            &["x32.pb holds FLOAT; ggml:q8_0's elements are INT8"],
        ),
    ];
    let listing = |d: &Path| {
        let mut names: Vec<String> =
            std::fs::read_dir(d).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
        names.sort();
        names
    };
    let before = listing(d);
    for (args, wants) in cases {
        let out = Command::new(env!("CARGO_BIN_EXE_lowbit")).args(*args).current_dir(d).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} succeeded");
        for want in *wants {
            assert!(err.contains(want), "{args:?}: {err}");
        }
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert_eq!(listing(d), before, "{args:?} left a file behind");
    }
}

#[test]
fn an_empty_tensor_per_tensor_is_refused_per_row_is_empty() {
    // compressed-tensors' per-tensor FP8 scale is max(|x|) by torch.aminmax, which raises on an
    // empty tensor: lowbit refuses it naming that. One scale per row: no rows, no scales, no
    // elements (compressed-tensors' per-channel qparams give the same empty arrays).
    let dir = tempfile::tempdir().unwrap();
    let x = Tensor::from_f32(&[]).reshape(vec![0, 4]).unwrap();
    write_tensor_file(&dir.path().join("x.pb"), &x, None).unwrap();
    let quantize = |scheme: &str| {
        let files = ["--scales", &p(dir.path(), "s.pb"), "--out", &p(dir.path(), "e.pb")].map(str::to_string);
        let mut args = vec!["quantize", "--scheme", scheme];
        let x = p(dir.path(), "x.pb");
        args.push(&x);
        args.extend(files.iter().map(String::as_str));
        lowbit(&args)
    };
    let (ok, _, err) = quantize("fp8:tensor");
    assert!(!ok);
    assert_eq!(
        err.trim(),
        "lowbit: fp8:tensor quantize: the tensor (shape [0, 4]) has no elements, so no max(|x|) for its one scale \
         (compressed-tensors' torch.aminmax raises on an empty tensor)"
    );
    assert!(!dir.path().join("e.pb").exists() && !dir.path().join("s.pb").exists());
    let (ok, _, err) = quantize("fp8:channel");
    assert!(ok, "{err}");
    let e = read_tensor_file(&dir.path().join("e.pb")).unwrap();
    let s = read_tensor_file(&dir.path().join("s.pb")).unwrap();
    assert_eq!(
        (e.dtype(), e.shape(), s.dtype(), s.shape()),
        (DType::Float8E4M3FN, &[0, 4][..], DType::Float, &[0, 1][..])
    );
}
