//! ONNX files: the protobuf messages ([`proto`]), `TensorProto` <-> [`crate::tensor::Tensor`]
//! ([`tensor_proto`]), tensors stored outside the model ([`external`]), a small graph runner
//! ([`runner`]) under [`limits`], bounded file reading ([`crate::files`]), all-or-nothing output writing
//! ([`outputs`]), and the backend node-test runner ([`conformance`]).

mod budget;
pub mod conformance;
mod elementwise;
pub mod external;
pub mod inputs;
pub mod limits;
mod matmul_nbits;
pub mod outputs;
pub mod proto;
pub mod runner;
pub mod tensor_proto;

// Names and values from files are quoted in errors by the crate-wide helper.
pub(crate) use crate::error::quoted;
use crate::error::Error;

/// An op's error, naming the op as [`shown_op`] does.
pub(crate) fn err(op: &str, message: impl Into<String>) -> Error {
    Error::InvalidOp { op: shown_op(op), message: message.into() }
}

/// An op type as error messages show it: a hostile 100,000-character op type is cut short.
pub(crate) fn shown_op(op: &str) -> String {
    if op.chars().nth(100).is_none() {
        op.into()
    } else {
        quoted(op)
    }
}
