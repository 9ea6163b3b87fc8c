//! A checkpoint's weights as a user thinks of them ([`LogicalWeight`]): what `conventions` and
//! `integer_conventions` recognise and the decoders, writers and `which` read.

use super::StoredTensor;

/// How a quantized weight's element codes are stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ElementStorage {
    /// Two E2M1 codes a byte (U8), element 2k in the low nibble.
    PackedE2M1,
    /// One code a byte: the element type's ONNX code (FLOAT8E4M3FN).
    Codes,
    /// ggml blocks (scales inside).
    GgmlBlocks,
    /// Plain elements: not quantized.
    Plain,
    /// An integer or codebook weight: its producer's tensors ([`LogicalWeight::parts`]), read
    /// by the scheme's `from_storage`.
    Producer,
}

/// One weight as a user thinks of it: its name, its convention and scheme, and the tensors
/// that hold it.
#[derive(Clone, Debug, PartialEq)]
pub struct LogicalWeight {
    /// The name it takes when dequantized (the weight's, without `_blocks` / `_packed`).
    pub name: String,
    /// The convention (`plain`, `gpt-oss mxfp4`, `deepseek fp8`, ...).
    pub convention: &'static str,
    /// The lowbit scheme that decodes it (`None`: not quantized, or no recipe).
    pub scheme: Option<String>,
    /// Why this convention: the names, dtypes and config entries that say so.
    pub why: String,
    /// The logical shape (elements, not bytes).
    pub shape: Vec<usize>,
    /// How the element codes are stored.
    pub storage: ElementStorage,
    /// The tensor of element codes (or the plain tensor).
    pub elements: String,
    /// The tensor of block scales.
    pub scales: Option<String>,
    /// The tensor of the per-tensor scale.
    pub global_scale: Option<String>,
    /// Other tensors of the weight (zero points), listed and kept.
    pub others: Vec<String>,
    /// [`ElementStorage::Producer`]: each producer name (`qweight`, `scales`, ...) with the
    /// checkpoint's tensor.
    pub parts: Vec<(String, String)>,
    /// What does not fit the convention (shapes, dtypes), or why it cannot be decoded.
    pub problems: Vec<String>,
}

impl LogicalWeight {
    pub(super) fn plain(t: &StoredTensor) -> LogicalWeight {
        LogicalWeight {
            name: t.name.clone(),
            convention: "plain",
            scheme: None,
            why: format!("a {} tensor with no scale tensor beside it", t.stored),
            shape: t.shape.clone(),
            storage: ElementStorage::Plain,
            elements: t.name.clone(),
            scales: None,
            global_scale: None,
            others: Vec::new(),
            parts: Vec::new(),
            problems: Vec::new(),
        }
    }

    /// Every tensor of the weight.
    #[must_use]
    pub fn tensors(&self) -> Vec<&str> {
        let mut all = vec![self.elements.as_str()];
        all.extend(self.scales.as_deref());
        all.extend(self.global_scale.as_deref());
        all.extend(self.others.iter().map(String::as_str));
        all
    }
}
