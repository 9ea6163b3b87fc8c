//! Hostile bytes into the ONNX readers: `TensorProto::decode` + `tensor_from_proto`, and
//! `Model::from_bytes` (the assertions are in `fuzz/checks/tensor_proto.rs`).

#![no_main]

#[path = "../checks/tensor_proto.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::run(data));
