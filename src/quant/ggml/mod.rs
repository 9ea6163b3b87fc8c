//! **ggml's block types** (GGUF tensor types): the legacy blocks, the K-quants, the I-quants and
//! the ternary types, each read and written exactly as ggml's C (`ggml-quants.c`) does on x86-64.
//!
//! A type is a [`Codec`] row: its ggml name and id, its block (elements and bytes), the function
//! that decodes one block and the function that quantizes one row (with an importance matrix
//! where the type takes one), and the ggml version and script that check it. Every float16 of a
//! block (`d`, `dmin`) is converted by the rounding core; nibbles and bit fields are laid out as
//! ggml's structs lay them out.

// The table is filled type by type; until every row is used outside this module, parts stand unused.
#![allow(dead_code)]

mod iq_grids;
mod iq_search;
mod iquants;
mod kquants;
mod legacy;

use crate::error::Result;

/// Decodes one block (`block_bytes` bytes) into `block_elements` float32 values.
pub(crate) type DecodeBlock = fn(block: &[u8], out: &mut [f32]);

/// Quantizes one row (a whole number of blocks) into its blocks; `imatrix` is the row's
/// per-column importance (length = row length) or `None`. `row_index` names the row in errors.
pub(crate) type QuantizeRow = fn(row: &[f32], imatrix: Option<&[f32]>, out: &mut [u8], row_index: usize) -> Result<()>;

/// One ggml block type.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Codec {
    /// ggml's name in lower case (`q4_k`, `iq4_xs`): the scheme is `ggml:` and this.
    pub name: &'static str,
    /// The `ggml_type` number GGUF stores.
    pub ggml_type: u32,
    /// Elements per block.
    pub block_elements: usize,
    /// Bytes per block.
    pub block_bytes: usize,
    /// ggml's `dequantize_row_*`, one block.
    pub decode: DecodeBlock,
    /// ggml's quantizer (`quantize_row_*_ref`, or `quantize_*` with an importance matrix), when
    /// lowbit has it.
    pub quantize: Option<QuantizeRow>,
    /// Whether ggml's quantizer requires an importance matrix (the smallest I-quants).
    pub needs_imatrix: bool,
    /// The implementation, version and function reproduced, and the script that checks it.
    pub source: &'static str,
}

/// Every ggml block type lowbit reads.
pub(crate) fn codecs() -> impl Iterator<Item = &'static Codec> {
    legacy::CODECS.iter().chain(kquants::CODECS).chain(iquants::CODECS)
}

/// The codec named `name` (lower case, without `ggml:`).
pub(crate) fn codec(name: &str) -> Option<&'static Codec> {
    codecs().find(|c| c.name == name)
}
