//! ONNX files: the protobuf messages ([`proto`]), `TensorProto` <-> [`crate::tensor::Tensor`]
//! ([`tensor_proto`]), a small graph runner ([`runner`]) and the backend node-test runner
//! ([`conformance`]).

pub mod conformance;
pub mod proto;
pub mod runner;
pub mod tensor_proto;
