//! lowbit's `ggml:<FTYPE>` mixtures against what llama.cpp's `llama_model_quantize` wrote for
//! the same input, recorded by `scripts/gen_llama_mixture_fixtures.py` in
//! `tests/fixtures/ggml_mixtures/llama_mixtures.json`: per ftype (with and without an importance
//! matrix) the tensor types and order, the metadata, each tensor's sha256, and the whole file.
#![cfg(feature = "checkpoint")]

use lowbit::checkpoint::{Checkpoint, GgmlMixture, GgufValue, Imatrix};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::path::PathBuf;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ggml_mixtures")
}

fn record() -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir().join("llama_mixtures.json")).unwrap()).unwrap()
}

fn sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

struct Inputs {
    ckpt: Checkpoint,
    imatrix: Imatrix,
}

fn inputs() -> Inputs {
    Inputs {
        ckpt: Checkpoint::open(dir().join("llama-f16.gguf")).unwrap(),
        imatrix: Imatrix::open(&dir().join("imatrix.gguf")).unwrap(),
    }
}

/// The runs lowbit has an ftype for (the record has a few more: NVFP4 and Q2_0).
fn runs(record: &Value) -> Vec<&Value> {
    record["runs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| lowbit::checkpoint::GGML_FTYPES.iter().any(|f| f.name == r["ftype"].as_str().unwrap()))
        .collect()
}

fn plan<'a>(inp: &'a Inputs, run: &Value) -> lowbit::Result<GgmlMixture<'a>> {
    let imatrix = run["imatrix"].as_bool().unwrap().then_some(&inp.imatrix);
    GgmlMixture::new(&inp.ckpt, run["ftype"].as_str().unwrap(), imatrix)
}

fn label(run: &Value) -> String {
    format!("{}{}", run["ftype"].as_str().unwrap(), if run["imatrix"].as_bool().unwrap() { " + imatrix" } else { "" })
}

#[test]
fn types_and_order_equal_llama_cpp_for_every_ftype() {
    let record = record();
    let inp = inputs();
    let (mut quantized, mut refused, mut tensors) = (0, 0, 0);
    for run in runs(&record) {
        let planned = plan(&inp, run);
        if run["status"] == "refused" {
            assert!(planned.is_err(), "{}: llama.cpp refused ({}), lowbit planned it", label(run), run["messages"]);
            refused += 1;
            continue;
        }
        let planned = planned.unwrap_or_else(|e| panic!("{}: {e}", label(run)));
        let expected: Vec<(&str, &str)> = run["tensors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| (t[0].as_str().unwrap(), t[1].as_str().unwrap()))
            .collect();
        let got: Vec<(&str, &str)> = planned.tensors().iter().map(|t| (t.name.as_str(), t.ggml.name())).collect();
        assert_eq!(got, expected, "{}", label(run));
        quantized += 1;
        tensors += got.len();
    }
    // Every ftype lowbit has, with and without an importance matrix.
    assert_eq!(quantized + refused, 2 * lowbit::checkpoint::GGML_FTYPES.len());
    assert!(quantized > 40 && tensors > 5000, "{quantized} runs, {tensors} tensors compared");
}

fn metadata_json(metadata: &[(String, GgufValue)]) -> Vec<Value> {
    fn scalar(v: &GgufValue) -> (&'static str, Value) {
        match v {
            GgufValue::U8(x) => ("UINT8", (*x).into()),
            GgufValue::I8(x) => ("INT8", (*x).into()),
            GgufValue::U16(x) => ("UINT16", (*x).into()),
            GgufValue::I16(x) => ("INT16", (*x).into()),
            GgufValue::U32(x) => ("UINT32", (*x).into()),
            GgufValue::I32(x) => ("INT32", (*x).into()),
            GgufValue::F32(x) => ("FLOAT32", x.to_bits().into()),
            GgufValue::Bool(x) => ("BOOL", (*x).into()),
            GgufValue::String(s) => ("STRING", String::from_utf8_lossy(s).into_owned().into()),
            GgufValue::U64(x) => ("UINT64", (*x).into()),
            GgufValue::I64(x) => ("INT64", (*x).into()),
            GgufValue::F64(x) => ("FLOAT64", x.to_bits().into()),
            GgufValue::Array(_) => unreachable!("no nested arrays"),
        }
    }
    metadata
        .iter()
        .map(|(k, v)| match v {
            GgufValue::Array(items) => {
                let item = items.first().map_or("UINT8", |i| scalar(i).0);
                Value::from(vec![
                    Value::from(k.as_str()),
                    "ARRAY".into(),
                    item.into(),
                    items.iter().map(|i| scalar(i).1).collect::<Vec<_>>().into(),
                ])
            }
            other => {
                let (t, value) = scalar(other);
                Value::from(vec![Value::from(k.as_str()), t.into(), value])
            }
        })
        .collect()
}

#[test]
fn metadata_equals_llama_cpp_for_every_ftype() {
    let record = record();
    let inp = inputs();
    let mut compared = 0;
    for run in runs(&record).into_iter().filter(|r| r["status"] == "quantized") {
        let planned = plan(&inp, run).unwrap();
        assert_eq!(metadata_json(&planned.metadata()), *run["metadata"].as_array().unwrap(), "{}", label(run));
        compared += 1;
    }
    assert!(compared > 40, "{compared}");
}

/// Every tensor lowbit can make today, for every ftype: its bytes equal llama.cpp's; the
/// tensors it cannot make yet (types without a codec) are listed per ftype.
#[test]
fn tensor_bytes_equal_llama_cpp_where_lowbit_quantizes() {
    let record = record();
    let inp = inputs();
    let (mut compared, mut quantized_compared) = (0usize, 0usize);
    let mut missing = Vec::new();
    for run in runs(&record).into_iter().filter(|r| r["status"] == "quantized") {
        let planned = plan(&inp, run).unwrap();
        let mut not_yet: Vec<String> = Vec::new();
        for (k, t) in run["tensors"].as_array().unwrap().iter().enumerate() {
            let name = t[0].as_str().unwrap();
            assert_eq!(planned.tensors()[k].name, name);
            if !planned.can_make(k) {
                not_yet.push(format!("{name} ({})", t[1].as_str().unwrap()));
                continue;
            }
            let bytes = planned.tensor_bytes(k).unwrap_or_else(|e| panic!("{}: {e}", label(run)));
            assert_eq!(sha256(&bytes), t[4].as_str().unwrap(), "{}: {name} ({})", label(run), t[1]);
            compared += 1;
            if planned.tensors()[k].converted {
                quantized_compared += 1;
            }
        }
        if !not_yet.is_empty() {
            missing.push(format!("{}: {} tensors without a codec yet, e.g. {}", label(run), not_yet.len(), not_yet[0]));
        }
    }
    eprintln!(
        "{compared} tensors compared ({quantized_compared} converted by lowbit); not yet:\n{}",
        missing.join("\n")
    );
    assert!(compared > 0 && quantized_compared > 0, "nothing compared");
}

/// The whole file, byte for byte, for every ftype llama.cpp wrote, with and without an importance
/// matrix.
#[test]
fn whole_files_equal_llama_cpp_where_every_tensor_is_made() {
    let record = record();
    let inp = inputs();
    let tmp = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    let quantized_runs = runs(&record).into_iter().filter(|r| r["status"] == "quantized").count();
    for run in runs(&record).into_iter().filter(|r| r["status"] == "quantized") {
        let planned = plan(&inp, run).unwrap();
        assert!(
            (0..planned.tensors().len()).all(|k| planned.can_make(k)),
            "{}: a tensor lowbit cannot make",
            label(run)
        );
        let out = tmp.path().join("out.gguf");
        planned.write(&out).unwrap();
        let bytes = std::fs::read(&out).unwrap();
        assert_eq!(bytes.len() as u64, run["file_size"].as_u64().unwrap(), "{}", label(run));
        assert_eq!(sha256(&bytes), run["file_sha256"].as_str().unwrap(), "{}", label(run));
        files.push(label(run));
    }
    eprintln!("whole files equal: {}", files.join(", "));
    assert_eq!(files.len(), quantized_runs, "{files:?}");
}

#[test]
fn a_missing_importance_matrix_is_refused_naming_the_tensor() {
    let inp = inputs();
    let e = GgmlMixture::new(&inp.ckpt, "IQ2_XXS", None).err().expect("refused").to_string();
    assert!(e.contains("blk.0.") && e.contains("importance matrix"), "{e}");
}

#[test]
fn a_type_without_codec_is_a_typed_error_and_leaves_no_file() {
    let inp = inputs();
    let planned = GgmlMixture::new(&inp.ckpt, "Q4_K_M", None).unwrap();
    let Some(k) = (0..planned.tensors().len()).find(|&k| !planned.can_make(k)) else {
        return; // every codec exists: nothing to refuse
    };
    let e = planned.tensor_bytes(k).unwrap_err().to_string();
    assert!(e.contains(&planned.tensors()[k].name) && e.contains(planned.tensors()[k].ggml.name()), "{e}");
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out.gguf");
    assert!(planned.write(&out).is_err());
    assert!(!out.exists());
}

/// The command: `checkpoint quantize --scheme ggml:Q8_0` writes llama.cpp's file, `inspect`
/// names its mixture, and a mixture lowbit cannot finish leaves no file.
#[cfg(feature = "cli")]
#[test]
fn the_command_writes_the_q8_0_mixture_and_inspect_names_it() {
    let record = record();
    let expected = runs(&record).into_iter().find(|r| r["ftype"] == "Q8_0" && r["imatrix"] == false).unwrap()
        ["file_sha256"]
        .as_str()
        .unwrap()
        .to_string();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("q8.gguf");
    let lowbit = env!("CARGO_BIN_EXE_lowbit");
    let input = dir().join("llama-f16.gguf");
    let run = |args: &[&std::ffi::OsStr]| std::process::Command::new(lowbit).args(args).output().unwrap();
    let done = run(&[
        "checkpoint".as_ref(),
        "quantize".as_ref(),
        input.as_os_str(),
        "--scheme".as_ref(),
        "ggml:Q8_0".as_ref(),
        "--out".as_ref(),
        out.as_os_str(),
    ]);
    assert!(done.status.success(), "{}", String::from_utf8_lossy(&done.stderr));
    assert_eq!(sha256(&std::fs::read(&out).unwrap()), expected);
    let shown = run(&["checkpoint".as_ref(), "inspect".as_ref(), out.as_os_str()]);
    let text = String::from_utf8_lossy(&shown.stdout);
    assert!(text.contains("llama.cpp mixture: general.file_type Q8_0; tensor types match Q8_0"), "{text}");
    let refused = tmp.path().join("iq2.gguf");
    let failed = run(&[
        "checkpoint".as_ref(),
        "quantize".as_ref(),
        input.as_os_str(),
        "--scheme".as_ref(),
        "ggml:IQ2_XS".as_ref(),
        "--out".as_ref(),
        refused.as_os_str(),
    ]);
    assert!(!failed.status.success());
    assert!(String::from_utf8_lossy(&failed.stderr).contains("importance matrix"));
    assert!(!refused.exists());
}
