//! The crate's one error type. Every message names the problem (the dtype, the value, the
//! position) so that a command-line user can act on one line.

use thiserror::Error;

/// Everything that can go wrong in lowbit. Bad input is always an `Err`, never a panic.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// A data-type name that is neither an ONNX name nor a known alias.
    #[error("unknown dtype {name:?}; valid names: {valid}")]
    UnknownDType { name: String, valid: String },

    /// An ONNX `TensorProto.DataType` number outside 0..=28.
    #[error("unknown ONNX data type number {0}; valid numbers are 0 to 28")]
    UnknownDTypeNumber(i64),

    /// Bits that do not fit the format's width (for example 0x40 for a 6-bit float).
    #[error("bits {bits:#x} do not fit {dtype}, which is {width} bits wide")]
    BitsOutOfRange { dtype: &'static str, bits: u64, width: u32 },

    /// A dtype that the requested operation does not handle.
    #[error("{op} does not support dtype {dtype}: {why}")]
    UnsupportedDType { op: &'static str, dtype: &'static str, why: &'static str },

    /// A file could not be read or written.
    #[error("{path}: {message}")]
    Io { path: String, message: String },

    /// A generated table differs from the committed one.
    #[error("table {path} differs from what lowbit generates: {detail}")]
    TableMismatch { path: String, detail: String },
}

impl Error {
    pub(crate) fn io(path: &std::path::Path, err: std::io::Error) -> Self {
        Error::Io { path: path.display().to_string(), message: err.to_string() }
    }
}

/// `Result` with lowbit's [`Error`].
pub type Result<T, E = Error> = core::result::Result<T, E>;
