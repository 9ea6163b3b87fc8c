//! ONNX opsets: the newest one lowbit knows, and which version of an op's schema is in force at
//! an opset. Every op (Cast, Range, Slice, Gather, the quantization ops) asks here.

use crate::alloc_prelude::*;
use crate::error::{Error, Result};

/// The newest opset lowbit knows.
pub const NEWEST_OPSET: i64 = 28;

/// The schema of `op` in force at `opset`: the newest version not above it.
pub(crate) fn schema_version(op: &str, versions: &[i64], opset: i64) -> Result<i64> {
    if opset > NEWEST_OPSET {
        return Err(Error::InvalidOp {
            op: op.into(),
            message: format!("opset {opset} is newer than lowbit knows ({NEWEST_OPSET})"),
        });
    }
    versions.iter().rev().copied().find(|&v| v <= opset).ok_or_else(|| Error::InvalidOp {
        op: op.into(),
        message: format!("{op} does not exist at opset {opset} (its first version is {})", versions[0]),
    })
}
