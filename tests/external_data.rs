//! external_data (onnx.proto `data_location = EXTERNAL`): a tensor's bytes read from a file next to
//! the model, with `location`, `offset` and `length`; and every way of pointing outside the model's
//! directory or outside the file refused with an error naming the tensor.

#[path = "support/models.rs"]
mod models;

use lowbit::onnx::limits::Limits;
use lowbit::onnx::proto::{ModelProto, TensorProto};
use lowbit::onnx::runner::Model;
use lowbit::onnx::tensor_proto::read_tensor_file_with;
use lowbit::BudgetKind;
use lowbit::Profile;
use lowbit::{DType, Error, Tensor};
use models::*;
use prost::Message;
use std::collections::HashMap;
use std::path::Path;

/// The four float32 weights stored in the tests' files.
const WEIGHTS: [f32; 4] = [1.5, -2.0, 0.25, 1e30];

fn weight_bytes() -> Vec<u8> {
    WEIGHTS.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// A model `y = x + w` whose initializer `w` is `w_proto`.
fn add_model(w_proto: TensorProto) -> ModelProto {
    let mut g = graph(vec![node("Add", "add", &["x", "w"], &["y"])], &["x"], &["y"]);
    g.initializer.push(w_proto);
    model(g, 14)
}

fn run(model_path: &Path, limits: &Limits) -> lowbit::Result<Vec<f32>> {
    let model = Model::load_with(model_path, limits)?;
    let inputs = HashMap::from([("x".to_string(), Tensor::from_f32(&[0.0; 4]))]);
    let out = model.run_with(&inputs, Profile::Spec, limits)?;
    Ok(out[0].1.to_f32_vec().unwrap())
}

/// Writes `add_model(w_proto)` as dir/model.onnx and runs it.
fn run_with_weights(dir: &Path, w_proto: TensorProto) -> lowbit::Result<Vec<f32>> {
    let path = dir.join("model.onnx");
    write_model(&path, &add_model(w_proto));
    run(&path, &Limits::default())
}

fn w(entries: &[(&str, &str)]) -> TensorProto {
    external(DType::Float, &[4], "w", entries)
}

/// Asserts an ExternalData error naming tensor "w" whose message contains `why`.
fn assert_refused(result: lowbit::Result<Vec<f32>>, why: &str) {
    match result {
        Err(Error::ExternalData { tensor, message }) => {
            assert_eq!(tensor, "\"w\"");
            assert!(message.contains(why), "{message}");
        }
        other => panic!("expected an external-data error about {why:?}, got {other:?}"),
    }
}

#[test]
fn weights_read_from_a_file_next_to_the_model() {
    let dir = tempfile::tempdir().unwrap();
    // At offset 4096 (the page alignment the ONNX text recommends), with trailing bytes after.
    let mut file = vec![0xAA; 4096];
    file.extend(weight_bytes());
    file.extend([0xBB; 100]);
    std::fs::write(dir.path().join("weights.bin"), &file).unwrap();
    let entries = [("location", "weights.bin"), ("offset", "4096"), ("length", "16"), ("checksum", "ignored")];
    assert_eq!(run_with_weights(dir.path(), w(&entries)).unwrap(), WEIGHTS);
    // Without offset and length: the whole file, in a subfolder, through "./".
    std::fs::create_dir(dir.path().join("data")).unwrap();
    std::fs::write(dir.path().join("data/w.bin"), weight_bytes()).unwrap();
    assert_eq!(run_with_weights(dir.path(), w(&[("location", "./data/w.bin")])).unwrap(), WEIGHTS);
    // Without length: from the offset to the end of the file.
    std::fs::write(dir.path().join("tail.bin"), [&[0u8; 8][..], &weight_bytes()].concat()).unwrap();
    assert_eq!(run_with_weights(dir.path(), w(&[("location", "tail.bin"), ("offset", "8")])).unwrap(), WEIGHTS);
}

#[test]
fn a_symlink_that_stays_inside_the_model_directory_is_followed() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("store")).unwrap();
    std::fs::write(dir.path().join("store/real.bin"), weight_bytes()).unwrap();
    std::os::unix::fs::symlink("store/real.bin", dir.path().join("link.bin")).unwrap();
    assert_eq!(run_with_weights(dir.path(), w(&[("location", "link.bin")])).unwrap(), WEIGHTS);
}

#[test]
fn locations_outside_the_model_directory_are_refused() {
    let outer = tempfile::tempdir().unwrap();
    let dir = outer.path().join("model");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(outer.path().join("secret.bin"), weight_bytes()).unwrap();
    let secret = outer.path().join("secret.bin");
    let cases = [
        (secret.to_str().unwrap(), "must be a relative path"),
        ("../secret.bin", "must be a relative path"),
        ("sub/../../secret.bin", "must be a relative path"),
        ("", "must be a relative path"),
    ];
    for (location, why) in cases {
        assert_refused(run_with_weights(&dir, w(&[("location", location)])), why);
    }
    // A symbolic link inside the directory that leads out of it.
    std::os::unix::fs::symlink(&secret, dir.join("escape.bin")).unwrap();
    assert_refused(run_with_weights(&dir, w(&[("location", "escape.bin")])), "leads outside the model's directory");
    std::os::unix::fs::symlink("..", dir.join("up")).unwrap();
    assert_refused(run_with_weights(&dir, w(&[("location", "up/secret.bin")])), "leads outside the model's directory");
    std::os::unix::fs::symlink("/dev/zero", dir.join("zero.bin")).unwrap();
    assert_refused(run_with_weights(&dir, w(&[("location", "zero.bin")])), "leads outside the model's directory");
}

#[test]
fn only_regular_files_are_read() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("folder")).unwrap();
    assert_refused(run_with_weights(dir.path(), w(&[("location", "folder")])), "is a directory");
    let fifo = dir.path().join("pipe.bin");
    match std::process::Command::new("mkfifo").arg(&fifo).status() {
        // Refused from its type, without opening it (which would wait for a writer).
        Ok(s) if s.success() => {
            assert_refused(run_with_weights(dir.path(), w(&[("location", "pipe.bin")])), "FIFO");
        }
        _ => eprintln!("note: mkfifo is not available; the FIFO case is skipped"),
    }
    assert_refused(run_with_weights(dir.path(), w(&[("location", "missing.bin")])), "missing.bin");
}

#[test]
fn offsets_and_lengths_are_checked_against_the_file_and_the_tensor() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("w.bin"), weight_bytes()).unwrap();
    let cases: [(&[(&str, &str)], &str); 9] = [
        (&[("location", "w.bin"), ("offset", "1"), ("length", "16")], "past the end"),
        (&[("location", "w.bin"), ("offset", "17")], "past the end"),
        (&[("location", "w.bin"), ("offset", "18446744073709551615"), ("length", "16")], "past the end"),
        (&[("location", "w.bin"), ("length", "12")], "need 16 bytes"),
        (&[("location", "w.bin"), ("offset", "4")], "need 16 bytes"),
        (&[("location", "w.bin"), ("offset", "-4")], "not a decimal byte count"),
        (&[("location", "w.bin"), ("length", "16 ")], "not a decimal byte count"),
        (&[("location", "w.bin"), ("length", "99999999999999999999999")], "too large"),
        (&[("location", "w.bin"), ("location", "w.bin")], "given twice"),
    ];
    for (entries, why) in cases {
        assert_refused(run_with_weights(dir.path(), w(entries)), why);
    }
    assert_refused(run_with_weights(dir.path(), w(&[("offset", "0")])), "location key is missing");
}

#[test]
fn malformed_external_tensors_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("w.bin"), weight_bytes()).unwrap();
    let both = TensorProto { raw_data: Some(weight_bytes()), ..w(&[("location", "w.bin")]) };
    assert_refused(run_with_weights(dir.path(), both), "both raw_data and external data");
    let not_external = TensorProto { data_location: None, ..w(&[("location", "w.bin")]) };
    assert_refused(run_with_weights(dir.path(), not_external), "data_location is not EXTERNAL");
    let strings = TensorProto { data_type: Some(DType::String.onnx_number()), ..w(&[("location", "w.bin")]) };
    assert_refused(run_with_weights(dir.path(), strings), "no raw layout");
    // An error quotes at most 100 characters of a hostile location.
    let long = "x/".repeat(50_000);
    match run_with_weights(dir.path(), w(&[("location", &long), ("offset", "0")])) {
        Err(e @ Error::ExternalData { .. }) => assert!(e.to_string().len() < 400, "{}", e.to_string().len()),
        other => panic!("{other:?}"),
    }
}

#[test]
fn external_data_counts_against_the_memory_budget_before_it_is_read() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("w.bin"), weight_bytes()).unwrap();
    let path = dir.path().join("model.onnx");
    write_model(&path, &add_model(w(&[("location", "w.bin")])));
    let tight = Limits { max_memory: 15, ..Limits::default() };
    match Model::load_with(&path, &tight) {
        Err(Error::OverBudget { budget: BudgetKind::Memory, node, needed: 16, .. }) => {
            assert!(node.contains("tensor \"w\""), "{node}")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_model_read_from_bytes_alone_reports_its_external_tensors() {
    let bytes = add_model(w(&[("location", "w.bin")])).encode_to_vec();
    let model = Model::from_bytes(&bytes).unwrap();
    let inputs = HashMap::from([("x".to_string(), Tensor::from_f32(&[0.0; 4]))]);
    let err = model.run(&inputs, Profile::Spec).unwrap_err().to_string();
    assert!(err.contains("\"w\"") && err.contains("external data"), "{err}");
}

#[test]
fn constants_and_loop_bodies_read_external_data_too() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("w.bin"), weight_bytes()).unwrap();
    let value = w(&[("location", "w.bin")]);
    let constant_node = with_attributes(node("Constant", "c", &[], &["w"]), vec![tensor_attribute("value", value)]);
    let body =
        graph(vec![node("Add", "inner", &["v_in", "w"], &["v_out"])], &["i", "c_in", "v_in"], &["c_in", "v_out"]);
    let g = graph(vec![constant_node, loop_node("l", "m", "", &["x"], &["y"], body)], &["x", "m"], &["y"]);
    let path = dir.path().join("model.onnx");
    write_model(&path, &model(g, 16));
    let model = Model::load_with(&path, &Limits::default()).unwrap();
    let inputs = HashMap::from([("x".to_string(), Tensor::from_f32(&[0.0; 4])), ("m".to_string(), int64_scalar(2))]);
    let out = model.run(&inputs, Profile::Spec).unwrap();
    let doubled: Vec<f32> = WEIGHTS.iter().map(|w| w + w).collect();
    assert_eq!(out[0].1.to_f32_vec().unwrap(), doubled);
}

#[test]
fn a_tensor_file_with_external_data_reads_from_its_own_directory() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("w.bin"), weight_bytes()).unwrap();
    let path = dir.path().join("w.pb");
    std::fs::write(&path, w(&[("location", "w.bin")]).encode_to_vec()).unwrap();
    let t = read_tensor_file_with(&path, &Limits::default()).unwrap();
    assert_eq!(t.to_f32_vec().unwrap(), WEIGHTS);
    std::fs::write(&path, w(&[("location", "../w.bin")]).encode_to_vec()).unwrap();
    assert!(matches!(read_tensor_file_with(&path, &Limits::default()), Err(Error::ExternalData { .. })));
}
