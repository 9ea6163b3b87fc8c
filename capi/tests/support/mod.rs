//! Helpers of the Rust tests and the bench (included with `mod support;` or `#[path]`).

use lowbit_capi::{lowbit_format, lowbit_format_parse, LOWBIT_OK};
use std::ffi::CString;

/// The handle of a format text that must parse.
pub fn format(text: &str) -> lowbit_format {
    let text = CString::new(text).expect("no NUL in a format text");
    let mut handle = 0;
    // SAFETY: a NUL-terminated string and a writable handle.
    assert_eq!(unsafe { lowbit_format_parse(text.as_ptr(), &mut handle) }, LOWBIT_OK, "{text:?}");
    handle
}
