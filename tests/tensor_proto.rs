//! TensorProto files made by onnx 1.23.2 (scripts/gen-tensor-fixtures.py): every dtype reads back
//! to the same values through `raw_data` and through the typed fields, and lowbit writes the same
//! bytes that onnx was shown to read back correctly. Plus bad files.

use lowbit::onnx::proto::{GraphProto, ModelProto, OperatorSetIdProto, TensorProto, ValueInfoProto};
use lowbit::onnx::runner::Model;
use lowbit::onnx::tensor_proto::{read_tensor_file, tensor_from_proto, tensor_to_proto};
use lowbit::Profile;
use lowbit::{DType, Tensor};
use prost::Message;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tensor_proto")
}

fn expected_codes(dtype: DType, tensor: &Tensor) -> Vec<String> {
    match dtype {
        DType::String => tensor.strings().unwrap().to_vec(),
        DType::Complex64 | DType::Complex128 => {
            vec![tensor.raw().unwrap().iter().map(|b| format!("{b:02x}")).collect()]
        }
        _ => tensor.codes().unwrap().iter().map(|c| format!("{c:x}")).collect(),
    }
}

#[test]
fn every_dtype_reads_back_from_onnx_files() {
    let mut checked = 0;
    for dtype in DType::ALL.into_iter().filter(|d| *d != DType::Undefined) {
        let name = dtype.file_name();
        for kind in ["raw", "typed"] {
            let want: Vec<String> = std::fs::read_to_string(fixtures().join(format!("{name}.{kind}.codes")))
                .unwrap_or_else(|e| panic!("{name}.{kind}.codes: {e}"))
                .lines()
                // Strings are JSON (Python escapes non-ASCII); everything else is hex.
                .map(
                    |l| if dtype == DType::String { serde_json::from_str::<String>(l).unwrap() } else { l.to_string() },
                )
                .collect();
            let t = read_tensor_file(&fixtures().join(format!("{name}.{kind}.pb"))).unwrap();
            assert_eq!(t.dtype(), dtype, "{name}.{kind}");
            assert_eq!(expected_codes(dtype, &t), want, "{name}.{kind}.pb");
            checked += 1;
        }
    }
    assert_eq!(checked, 56);
}

#[test]
fn lowbit_writes_what_onnx_reads_back() {
    for dtype in
        DType::ALL.into_iter().filter(|d| !matches!(d, DType::Undefined | DType::Complex64 | DType::Complex128))
    {
        let name = dtype.file_name();
        let t = read_tensor_file(&fixtures().join(format!("{name}.raw.pb"))).unwrap();
        let written = tensor_to_proto(&t, None).encode_to_vec();
        let verified = std::fs::read(fixtures().join(format!("{name}.lowbit.pb"))).unwrap();
        assert_eq!(written, verified, "{name}: lowbit no longer writes the bytes onnx was checked against");
    }
}

#[test]
fn bad_files_are_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let good = std::fs::read(fixtures().join("float.raw.pb")).unwrap();
    // Truncated in the middle of raw_data, and plain garbage.
    let truncated = tmp.path().join("truncated.pb");
    std::fs::write(&truncated, &good[..good.len() - 5]).unwrap();
    let err = read_tensor_file(&truncated).unwrap_err().to_string();
    assert!(err.contains("truncated.pb") && err.contains("TensorProto"), "{err}");
    let garbage = tmp.path().join("garbage.pb");
    std::fs::write(&garbage, [0xFF; 16]).unwrap();
    assert!(read_tensor_file(&garbage).is_err());
    // A packed field and raw_data that claim 2^60 and 2^40 bytes: rejected before allocating.
    for (tag, claimed) in [(4u8, 1u64 << 60), (9, 1 << 40)] {
        let mut bytes = vec![0x08, 0x02, 0x10, 0x01, (tag << 3) | 2];
        let mut n = claimed;
        loop {
            let b = (n & 0x7F) as u8;
            n >>= 7;
            bytes.push(b | if n > 0 { 0x80 } else { 0 });
            if n == 0 {
                break;
            }
        }
        bytes.extend([0; 8]);
        let path = tmp.path().join(format!("claims-{tag}.pb"));
        std::fs::write(&path, bytes).unwrap();
        assert!(read_tensor_file(&path).unwrap_err().to_string().contains("underflow"));
    }
    // Dims whose product overflows, with almost no data: no allocation, an error.
    let huge = TensorProto {
        dims: vec![1 << 40, 1 << 40],
        data_type: Some(1),
        raw_data: Some(vec![0; 4]),
        ..TensorProto::default()
    };
    assert!(tensor_from_proto(&huge).unwrap_err().to_string().contains("too large"));
    let big_but_short =
        TensorProto { dims: vec![1 << 30], data_type: Some(1), raw_data: Some(vec![0; 4]), ..TensorProto::default() };
    assert!(tensor_from_proto(&big_but_short).unwrap_err().to_string().contains("4 bytes"));
    let negative = TensorProto { dims: vec![-3], data_type: Some(1), ..TensorProto::default() };
    assert!(tensor_from_proto(&negative).unwrap_err().to_string().contains("negative"));
}

fn identity_model() -> ModelProto {
    let value = |n: &str| ValueInfoProto { name: Some(n.into()), ..ValueInfoProto::default() };
    let node = lowbit::onnx::proto::NodeProto {
        input: vec!["x".into()],
        output: vec!["y".into()],
        op_type: Some("Identity".into()),
        ..Default::default()
    };
    ModelProto {
        ir_version: Some(10),
        opset_import: vec![OperatorSetIdProto { domain: Some(String::new()), version: Some(21) }],
        graph: Some(GraphProto {
            node: vec![node],
            input: vec![value("x")],
            output: vec![value("y")],
            ..GraphProto::default()
        }),
        ..ModelProto::default()
    }
}

#[test]
fn model_errors() {
    let no_graph = ModelProto { graph: None, ..identity_model() };
    assert!(Model::from_bytes(&no_graph.encode_to_vec()).unwrap_err().to_string().contains("no graph"));
    assert!(Model::from_bytes(&[0x0A, 0xFF, 0x01]).is_err());
    let model = Model::from_bytes(&identity_model().encode_to_vec()).unwrap();
    let x = Tensor::from_f32(&[1.0]);
    let err = model.run(&HashMap::from([("z".to_string(), x.clone())]), Profile::Spec).unwrap_err().to_string();
    assert!(err.contains("no input named \"z\""), "{err}");
    let err = model.run(&HashMap::new(), Profile::Spec).unwrap_err().to_string();
    assert!(err.contains("missing input \"x\""), "{err}");
    let out = model.run(&HashMap::from([("x".to_string(), x.clone())]), Profile::Spec).unwrap();
    assert_eq!(out, vec![("y".to_string(), x)]);
    let mut unsupported = identity_model();
    unsupported.graph.as_mut().unwrap().node[0].op_type = Some("Softmax".into());
    let model = Model::from_bytes(&unsupported.encode_to_vec()).unwrap();
    let err = model.run(&HashMap::from([("x".to_string(), Tensor::from_f32(&[1.0]))]), Profile::Spec).unwrap_err();
    assert!(err.to_string().contains("Softmax"), "{err}");
}
