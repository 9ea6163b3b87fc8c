//! The scalar fast path: float32 into a float format of 8 bits or fewer (a deterministic mode)
//! reads `lowbit::verify::sweep::FlagSplitTable`, the library's exact table of the core's answers
//! and flags (what `lowbit sweep` runs; compared with the core in the library's tests and, through
//! this crate, in tests/fast_path.rs). Tables are built on first use (about 2^17 core conversions)
//! and shared by every thread for the life of the process.

use lowbit::verify::sweep::FlagSplitTable;
use lowbit::verify::{Format, VerifyOptions};
use std::sync::Mutex;

/// Tables kept at the most (256 KiB each); past that, conversions run the converter.
const MOST_TABLES: usize = 64;

type Shared = Vec<(lowbit::verify::Format, VerifyOptions, &'static FlagSplitTable)>;

static TABLES: Mutex<Shared> = Mutex::new(Vec::new());

/// The table of float32 -> `to` under `options`, if one applies.
pub(crate) fn float32_table(to: &Format, options: &VerifyOptions) -> Option<&'static FlagSplitTable> {
    if to.width() > 8 {
        return None;
    }
    // A poisoned lock only means another thread panicked while holding it; the list is intact.
    let mut tables = TABLES.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some((_, _, table)) = tables.iter().find(|(f, o, _)| f == to && o == options) {
        return Some(table);
    }
    if tables.len() >= MOST_TABLES {
        return None;
    }
    // Leaked on purpose: a table lives as long as the handles, for the life of the process.
    let table: &'static FlagSplitTable = Box::leak(Box::new(FlagSplitTable::new(to, options)?));
    tables.push((*to, *options, table));
    Some(table)
}
