//! The output buffers of the tensor ops (`ops`, `quant`): an allocation that fails with an `Err`
//! instead of aborting, and the guard a caller with a budget (the graph runner) is told before it.

use crate::alloc_prelude::*;
use crate::error::{Error, Result};

/// A zeroed buffer of `len` bytes, or an `Err` instead of an abort when the allocator refuses.
pub(crate) fn zeroed(op: &str, len: usize) -> Result<Vec<u8>> {
    let mut v = Vec::new();
    v.try_reserve_exact(len)
        .map_err(|_| Error::TooLarge { what: format!("{op}: cannot allocate {len} bytes for the output") })?;
    v.resize(len, 0);
    Ok(v)
}

/// Told about each allocation an op is about to make for its output, before it makes it, so that a
/// caller with a budget (the graph runner) can refuse it; [`Unbudgeted`] accepts everything.
pub(crate) trait AllocationGuard {
    /// `elements` output elements about to be written into `bytes` newly allocated bytes; an `Err`
    /// stops the op before the allocation.
    fn before_allocating(&mut self, elements: usize, bytes: usize) -> Result<()>;
}

/// The guard of the public op functions: no budget.
pub(crate) struct Unbudgeted;

impl AllocationGuard for Unbudgeted {
    fn before_allocating(&mut self, _elements: usize, _bytes: usize) -> Result<()> {
        Ok(())
    }
}
