//! ONNX files: the protobuf messages ([`proto`]), `TensorProto` <-> [`crate::tensor::Tensor`]
//! ([`tensor_proto`]), tensors stored outside the model ([`external`]), a small graph runner
//! ([`runner`]) under [`limits`], bounded file reading ([`crate::files`]), all-or-nothing output writing
//! ([`outputs`]), and the backend node-test runner ([`conformance`]).

mod budget;
pub mod conformance;
pub mod external;
pub mod limits;
pub mod outputs;
pub mod proto;
pub mod runner;
pub mod tensor_proto;

// Names and values from files are quoted in errors by the crate-wide helper.
pub(crate) use crate::error::quoted;
