//! Moved to [`crate::plan::encode`]; this path stays for one release.

#[deprecated(note = "use lowbit::plan::encode::DecodeTable")]
pub use crate::plan::encode::DecodeTable;
