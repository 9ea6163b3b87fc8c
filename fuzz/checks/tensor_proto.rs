//! The checks of the `tensor_proto` fuzz target, shared with `tests/fuzz_seeds.rs` (which
//! replays the committed seeds on a stable toolchain).
//!
//! Hostile bytes into the ONNX readers: `TensorProto::decode` + `tensor_from_proto`, and
//! `Model::from_bytes`.
//!
//! Asserts:
//! * neither panics nor aborts on an allocation (claimed dims of 2^40 elements, length prefixes
//!   past the end: typed `Err`s; run with `-rss_limit_mb`/`-malloc_limit_mb` to catch the
//!   allocations);
//! * a tensor that decodes has as many elements as its shape says, and
//!   `tensor_to_proto` -> encode -> decode -> `tensor_from_proto` gives the same tensor back;
//! * a model that loads reports its inputs and outputs without panicking; one without graph inputs
//!   runs under every profile without panicking (`Ok` or `Err`), within small budgets (64 MiB,
//!   2^24 elements of work) so that models asking for huge outputs or endless Loops end at once.

use lowbit::onnx::limits::Limits;
use lowbit::onnx::proto::TensorProto;
use lowbit::onnx::runner::Model;
use lowbit::onnx::tensor_proto::{tensor_from_proto, tensor_to_proto};
use lowbit::Data;
use lowbit::Profile;
use prost::Message;
use std::collections::HashMap;

/// One fuzz input: any bytes, read as a TensorProto and as a model.
pub fn run(data: &[u8]) {
    if let Ok(proto) = TensorProto::decode(data) {
        if let Ok(tensor) = tensor_from_proto(&proto) {
            let n = tensor.len();
            match tensor.data() {
                Data::Strings(s) => assert_eq!(s.len(), n),
                Data::Raw(raw) => {
                    let want = lowbit::packing::raw_len(tensor.dtype(), n).expect("a raw tensor has a layout");
                    assert_eq!(raw.len(), want, "{} {:?}", tensor.dtype(), tensor.shape());
                }
            }
            let bytes = tensor_to_proto(&tensor, proto.name.as_deref()).encode_to_vec();
            let again = TensorProto::decode(bytes.as_slice()).expect("lowbit's own encoding decodes");
            let back = tensor_from_proto(&again).expect("lowbit's own encoding reads back");
            assert_eq!(back, tensor);
        }
    }
    if let Ok(model) = Model::from_bytes(data) {
        let _ = model.output_names();
        if model.input_names().is_empty() {
            for profile in Profile::ALL {
                let _ = model.run_with(&HashMap::new(), profile, &LIMITS);
            }
        }
    }
}

const LIMITS: Limits = Limits { max_memory: 64 << 20, max_work: 1 << 24, max_input_bytes: 0 };
