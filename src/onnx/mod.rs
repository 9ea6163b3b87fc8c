//! ONNX files: the protobuf messages ([`proto`]), `TensorProto` <-> [`crate::tensor::Tensor`]
//! ([`tensor_proto`]), tensors stored outside the model ([`external`]), a small graph runner
//! ([`runner`]) under [`limits`], bounded file reading ([`files`]), all-or-nothing output writing
//! ([`outputs`]), and the backend node-test runner ([`conformance`]).

mod budget;
pub mod conformance;
pub mod external;
pub mod files;
pub mod limits;
pub mod outputs;
pub mod proto;
pub mod runner;
pub mod tensor_proto;

/// The most characters of a name or value from a file that an error message repeats.
const QUOTED_CHARS: usize = 100;

/// `text` quoted for an error message: at most [`QUOTED_CHARS`] characters, then how many more
/// there were, so that a hostile 100,000-character name does not flood the terminal.
pub(crate) fn quoted(text: &str) -> String {
    match text.char_indices().nth(QUOTED_CHARS) {
        None => format!("{text:?}"),
        Some((cut, _)) => {
            let more = text[cut..].chars().count();
            format!("{:?} (and {more} more characters)", &text[..cut])
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn quoting_is_bounded() {
        assert_eq!(super::quoted("x/y"), "\"x/y\"");
        let long = "a".repeat(100_000);
        let q = super::quoted(&long);
        assert!(q.len() < 150 && q.ends_with("(and 99900 more characters)"), "{q}");
    }
}
