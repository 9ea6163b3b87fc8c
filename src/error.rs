//! The crate's one error type. Every message names the problem (the dtype, the value, the
//! position) so that a command-line user can act on one line.

use crate::alloc_prelude::*;

/// Everything that can go wrong in lowbit. Bad input is always an `Err`, never a panic.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// A data-type name that is neither an ONNX name nor a known alias.
    UnknownDType {
        /// The name as given.
        name: String,
        /// Every accepted name, for the message.
        valid: String,
    },

    /// An ONNX `TensorProto.DataType` number outside 0..=28.
    UnknownDTypeNumber(
        /// The number given.
        i64,
    ),

    /// Bits that do not fit the format's width (for example 0x40 for a 6-bit float).
    BitsOutOfRange {
        /// The dtype's ONNX name.
        dtype: &'static str,
        /// The bits given.
        bits: u64,
        /// The dtype's width in bits.
        width: u32,
    },

    /// A dtype that the requested operation does not handle.
    UnsupportedDType {
        /// The operation.
        op: &'static str,
        /// The dtype's ONNX name.
        dtype: &'static str,
        /// Why the operation does not take it.
        why: &'static str,
    },

    /// A string that does not read as a number of the target dtype (ONNX `Cast` from STRING).
    ParseString {
        /// The text (shortened if long).
        text: String,
        /// The target dtype's ONNX name.
        dtype: &'static str,
        /// What is wrong with the text.
        why: String,
    },

    /// A size that overflows or exceeds a limit, detected before allocating.
    TooLarge {
        /// What is too large, with the figures.
        what: String,
    },

    /// Raw bytes that are not a whole number of elements of the dtype.
    RawLength {
        /// The dtype's ONNX name.
        dtype: &'static str,
        /// The element count.
        elements: usize,
        /// The bytes `elements` take.
        expected: usize,
        /// The bytes given.
        actual: usize,
    },

    /// A raw byte count that is not a whole number of elements (when the count is not given).
    RawNotWhole {
        /// The dtype's ONNX name.
        dtype: &'static str,
        /// The bytes given.
        bytes: usize,
        /// The bits one element takes.
        bits: u32,
    },

    /// A format description (`e4m3,special=ieee`) that does not parse or describes no usable
    /// format; `why` names the bad part.
    FormatDescription {
        /// The description as given.
        text: String,
        /// The bad part, and why.
        why: String,
    },

    /// A shape or element count that does not fit the data.
    ShapeMismatch {
        /// The shape.
        shape: Vec<usize>,
        /// The element count of the shape.
        elements: usize,
        /// The element count of the data.
        actual: usize,
    },

    /// An ONNX attribute or op version problem.
    InvalidOp {
        /// The op with its version (`QuantizeLinear-21`), or the option.
        op: String,
        /// What is wrong.
        message: String,
    },

    /// An index, an axis or a similar integer outside the range an op accepts (the message names
    /// the input and the position).
    OutOfRange {
        /// The op.
        op: String,
        /// The input and the position.
        what: String,
        /// The value given.
        value: i128,
        /// The lowest value accepted.
        low: i128,
        /// The highest value accepted.
        high: i128,
    },

    /// A file could not be read or written.
    Io {
        /// The file.
        path: String,
        /// The operating system's or the decoder's message.
        message: String,
    },

    /// A generated table differs from the committed one.
    TableMismatch {
        /// The committed table.
        path: String,
        /// Where it differs.
        detail: String,
    },

    /// A graph run (or a model load) would go over one of its budgets
    /// ([`crate::onnx::limits::Limits`]); `node` names the node (op type and name) or the tensor.
    OverBudget {
        /// Which budget.
        budget: BudgetKind,
        /// The node (op type and name) or the tensor.
        node: String,
        /// What the step needs.
        needed: u64,
        /// What is already used.
        used: u64,
        /// The budget.
        limit: u64,
    },

    /// A file larger than the input limit, found from its length before reading or while reading
    /// (a file that grows).
    InputTooLarge {
        /// The file.
        path: String,
        /// Its length, when known.
        size: Option<u64>,
        /// The input limit in bytes.
        limit: u64,
    },

    /// A device, FIFO, directory or socket where lowbit expects a regular file.
    NotARegularFile {
        /// The path.
        path: String,
        /// What it is instead (`a directory`, ...).
        kind: &'static str,
    },

    /// A graph output whose name cannot be used as a file name inside the output directory.
    UnsafeOutputName {
        /// The output's name.
        name: String,
        /// Why it cannot be a file name.
        why: &'static str,
    },

    /// A line of a test-vector dump (`lowbit check`) that does not read: wrong width, not
    /// hexadecimal, flags over 0x1F, too long.
    DumpLine {
        /// The dump's name (a path or `standard input`).
        input: String,
        /// The line number, from 1.
        line: u64,
        /// What is wrong with the line.
        why: String,
    },

    /// A tensor whose `external_data` cannot be read (bad keys, a location outside the model's
    /// directory, a range outside the file).
    ExternalData {
        /// The tensor's name.
        tensor: String,
        /// What cannot be read, and why.
        message: String,
    },

    /// A checkpoint file (safetensors, GGUF, a shard index) that cannot be read as it is, or a
    /// tensor of one that cannot be converted; names the file, the tensor and the byte offset
    /// where they are known (boxed strings keep `Error` small).
    Checkpoint {
        /// The file.
        file: Box<str>,
        /// The tensor's name (quoted), when the problem belongs to one.
        tensor: Option<Box<str>>,
        /// The byte offset in the file where the problem is, when known.
        offset: Option<u64>,
        /// What is wrong.
        message: Box<str>,
    },

    /// A byte of a buffer viewed as scalar elements that is no element of the type (a bit above
    /// the code's width, or a small integer outside its range).
    InvalidElementByte {
        /// The element type.
        dtype: &'static str,
        /// The byte's offset in the buffer.
        offset: usize,
        /// The byte.
        byte: u8,
        /// Why it is no element.
        why: &'static str,
    },
}

impl core::fmt::Display for Error {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Error::UnknownDType { name, valid } => write!(f, "unknown dtype {}; valid names: {valid}", quoted(name)),
            Error::UnknownDTypeNumber(n) => write!(f, "unknown ONNX data type number {n}; valid numbers are 0 to 28"),
            Error::BitsOutOfRange { dtype, bits, width } => write!(f, "bits {bits:#x} do not fit {dtype}, which is {width} bits wide"),
            Error::UnsupportedDType { op, dtype, why } => write!(f, "{op} does not support dtype {dtype}: {why}"),
            Error::ParseString { text, dtype, why } => write!(f, "cannot parse {} as {dtype}: {why}", quoted(text)),
            Error::TooLarge { what } => write!(f, "too large: {what}"),
            Error::RawLength { dtype, elements, expected, actual } => write!(f, "{dtype}: {elements} elements take {expected} bytes, but the raw data has {actual} bytes"),
            Error::RawNotWhole { dtype, bytes, bits } => write!(f, "{dtype}: {bytes} bytes is not a whole number of {bits}-bit elements; give the element count"),
            Error::FormatDescription { text, why } => write!(f, "bad format description {}: {why}", quoted(text)),
            Error::ShapeMismatch { shape, elements, actual } => write!(f, "shape {} has {elements} elements, but {actual} were given", shown_shape(shape)),
            Error::InvalidOp { op, message } => write!(f, "{op}: {message}"),
            Error::OutOfRange { op, what, value, low, high } => write!(f, "{op}: {what} is {value}, outside the accepted range [{low}, {high}]"),
            Error::Io { path, message } => write!(f, "{path}: {message}"),
            Error::TableMismatch { path, detail } => write!(f, "table {path} differs from what lowbit generates: {detail}"),
            Error::OverBudget { budget, node, needed, used, limit } => write!(f, "{node}: over the {budget} budget of {limit} {unit} ({flag}): it needs {needed} more with {used} {spent}", unit = budget.unit(), flag = budget.flag(), spent = budget.spent()),
            Error::InputTooLarge { path, size, limit } => write!(f, "{path}: larger than the input limit of {limit} bytes (--max-input-bytes){}", size.map_or_else(String::new, |s| format!("; it has {s} bytes"))),
            Error::NotARegularFile { path, kind } => write!(f, "{path}: is {kind}, not a regular file"),
            Error::UnsafeOutputName { name, why } => write!(f, "graph output {name}: {why}; output names become file names inside the output directory"),
            Error::DumpLine { input, line, why } => write!(f, "{input}: line {line}: {why}"),
            Error::ExternalData { tensor, message } => write!(f, "tensor {tensor}: external data: {message}"),
            Error::Checkpoint { file, tensor, offset, message } => {
                write!(f, "{file}: ")?;
                if let Some(tensor) = tensor {
                    write!(f, "tensor {tensor}: ")?;
                }
                if let Some(offset) = offset {
                    write!(f, "at byte {offset}: ")?;
                }
                f.write_str(message)
            }
            Error::InvalidElementByte { dtype, offset, byte, why } => {
                write!(f, "{dtype}: byte {byte:#04x} at offset {offset} is not an element: {why}")
            }
        }
    }
}

impl core::error::Error for Error {}

/// The two budgets of a graph run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BudgetKind {
    /// Bytes held at once.
    Memory,
    /// Elements processed over the whole run.
    Work,
}

impl BudgetKind {
    fn unit(self) -> &'static str {
        match self {
            BudgetKind::Memory => "bytes",
            BudgetKind::Work => "elements",
        }
    }

    fn flag(self) -> &'static str {
        match self {
            BudgetKind::Memory => "--max-memory",
            BudgetKind::Work => "--max-work",
        }
    }

    fn spent(self) -> &'static str {
        match self {
            BudgetKind::Memory => "already in use",
            BudgetKind::Work => "already done",
        }
    }
}

impl core::fmt::Display for BudgetKind {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            BudgetKind::Memory => "memory",
            BudgetKind::Work => "work",
        })
    }
}

#[cfg(feature = "std")]
impl Error {
    /// An I/O failure on `path`, with the system's message.
    #[must_use]
    pub fn io(path: &std::path::Path, err: std::io::Error) -> Self {
        Error::Io { path: path.display().to_string(), message: err.to_string() }
    }
}

impl Error {
    /// `text` quoted as lowbit's messages quote a name or value from the command line or a file:
    /// at most 100 characters, then how many more there were, so that a hostile 100,000-character
    /// argument does not flood the terminal.
    #[must_use]
    pub fn quote(text: &str) -> String {
        quoted(text)
    }
}

/// The most characters of a name or value from the command line or a file that an error message
/// repeats.
pub(crate) const QUOTED_CHARS: usize = 100;

/// `text` quoted for an error message: at most [`QUOTED_CHARS`] characters, then how many more
/// there were, so that a hostile 100,000-character argument or name does not flood the terminal.
pub(crate) fn quoted(text: &str) -> String {
    match text.char_indices().nth(QUOTED_CHARS) {
        None => format!("{text:?}"),
        Some((cut, _)) => {
            let more = text[cut..].chars().count();
            format!("{:?} (and {more} more characters)", &text[..cut])
        }
    }
}

/// The most dimensions of a shape that an error message lists.
const SHOWN_DIMS: usize = 16;

/// A shape (or any list of integers) for an error message: at most 16 (`SHOWN_DIMS`) entries, then
/// how many more there were, so that a 100,000-dimension shape stays one short line.
pub fn shown_shape<T: core::fmt::Debug>(dims: &[T]) -> String {
    if dims.len() <= SHOWN_DIMS {
        return format!("{dims:?}");
    }
    let head = format!("{:?}", &dims[..SHOWN_DIMS]);
    format!("{}, ...] (and {} more dimensions)", &head[..head.len() - 1], dims.len() - SHOWN_DIMS)
}

/// `Result` with lowbit's [`Error`].
pub type Result<T, E = Error> = core::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_is_bounded() {
        assert_eq!(quoted("x/y"), "\"x/y\"");
        let long = "a".repeat(100_000);
        let q = quoted(&long);
        assert!(q.len() < 150 && q.ends_with("(and 99900 more characters)"), "{q}");
        // A cut never splits a character.
        assert!(quoted(&"é".repeat(200)).ends_with("(and 100 more characters)"));
    }

    #[test]
    fn shapes_are_bounded() {
        assert_eq!(shown_shape(&[2usize, 3]), "[2, 3]");
        let long = vec![1usize; 100_000];
        let s = shown_shape(&long);
        assert!(s.len() < 100 && s.ends_with("1, ...] (and 99984 more dimensions)"), "{s}");
    }
}
