//! The edge between C and Rust: status codes, the per-thread last error, and the guard every
//! entry point runs its body in (a panic becomes `LOWBIT_ERR_INTERNAL`, never an unwind into C).

use std::cell::RefCell;
use std::ffi::{c_char, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Success.
pub const LOWBIT_OK: i32 = 0;
/// A required pointer argument was NULL.
pub const LOWBIT_ERR_NULL: i32 = -1;
/// A format text names no dtype and is no valid description (or is not UTF-8).
pub const LOWBIT_ERR_FORMAT: i32 = -2;
/// A format handle that `lowbit_format_parse` did not return.
pub const LOWBIT_ERR_HANDLE: i32 = -3;
/// An operand has bits set above its format's width.
pub const LOWBIT_ERR_BITS: i32 = -4;
/// An option out of its range (rounding mode, tininess, saturate, flush, profile, random width).
pub const LOWBIT_ERR_OPTIONS: i32 = -5;
/// The conversion is not supported (ONNX Cast between a pair it does not define, flush on an
/// integer, a profile with a described format).
pub const LOWBIT_ERR_UNSUPPORTED: i32 = -6;
/// A dump line that is not `operand result [flags]` in the formats' widths.
pub const LOWBIT_ERR_LINE: i32 = -7;
/// More distinct formats than the handle table holds (`LOWBIT_MAX_FORMATS`).
pub const LOWBIT_ERR_TOO_MANY_FORMATS: i32 = -8;
/// An array size whose byte count overflows.
pub const LOWBIT_ERR_SIZE: i32 = -9;
/// A bug in lowbit (a panic caught at the boundary); the message says where.
pub const LOWBIT_ERR_INTERNAL: i32 = -10;
/// Data that does not fit a block scheme: a byte count or shape its layout cannot hold, or an
/// input the implementation the scheme reproduces refuses (the message says which).
pub const LOWBIT_ERR_DATA: i32 = -11;

/// A failure: its status code and its message.
#[derive(Debug)]
pub(crate) struct Failure {
    pub(crate) code: i32,
    pub(crate) message: String,
}

impl Failure {
    pub(crate) fn new(code: i32, message: impl Into<String>) -> Failure {
        Failure { code, message: message.into() }
    }
}

pub(crate) type Outcome<T> = Result<T, Failure>;

thread_local! {
    /// The last failure on this thread: its code and its message (NUL-terminated for C).
    static LAST_ERROR: RefCell<(i32, CString)> = RefCell::new((LOWBIT_OK, CString::default()));
}

fn record(failure: Failure) -> i32 {
    // A message holding NUL (from a C string it quotes) is cut there rather than lost.
    let text = failure.message.split('\0').next().unwrap_or_default().to_owned();
    let message = CString::new(text).unwrap_or_default();
    LAST_ERROR.with(|last| *last.borrow_mut() = (failure.code, message));
    failure.code
}

/// Runs `body` at the boundary: its value, or `on_error` with the failure recorded for
/// `lowbit_last_error_message` (a panic included).
pub(crate) fn guard<T>(on_error: T, body: impl FnOnce() -> Outcome<T>) -> (T, i32) {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(value)) => (value, LOWBIT_OK),
        Ok(Err(failure)) => (on_error, record(failure)),
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic without a message".to_owned());
            (on_error, record(Failure::new(LOWBIT_ERR_INTERNAL, format!("internal error (a bug in lowbit): {what}"))))
        }
    }
}

/// [`guard`] for entry points that return only a status.
pub(crate) fn status(body: impl FnOnce() -> Outcome<()>) -> i32 {
    guard((), body).1
}

/// The message of the last failing call on the calling thread ("" if none failed yet), valid until
/// the next failing call on this thread. Successful calls leave it as it was.
pub(crate) fn last_message() -> *const c_char {
    // The CString lives in the thread-local until the next failure replaces it.
    LAST_ERROR.with(|last| last.borrow().1.as_ptr())
}

/// The status code of the last failing call on the calling thread (`LOWBIT_OK` if none failed).
pub(crate) fn last_code() -> i32 {
    LAST_ERROR.with(|last| last.borrow().0)
}

/// A NUL-terminated C string argument as UTF-8.
///
/// # Safety
/// `text` is NULL or points to a NUL-terminated string that stays valid for `'a`.
pub(crate) unsafe fn text_argument<'a>(text: *const c_char, what: &str) -> Outcome<&'a str> {
    if text.is_null() {
        return Err(Failure::new(LOWBIT_ERR_NULL, format!("{what} is NULL")));
    }
    // SAFETY: not NULL (checked above); the caller promises a NUL-terminated string.
    let bytes = unsafe { CStr::from_ptr(text) };
    bytes.to_str().map_err(|e| Failure::new(LOWBIT_ERR_FORMAT, format!("{what} is not UTF-8 ({e})")))
}

/// A NULL check for a pointer argument.
pub(crate) fn not_null<T>(pointer: *const T, what: &str) -> Outcome<()> {
    if pointer.is_null() {
        Err(Failure::new(LOWBIT_ERR_NULL, format!("{what} is NULL")))
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_an_internal_error_with_its_message() {
        let (value, code) = guard(7u64, || -> Outcome<u64> { panic!("deliberately, in a test") });
        assert_eq!((value, code), (7, LOWBIT_ERR_INTERNAL));
        assert_eq!(last_code(), LOWBIT_ERR_INTERNAL);
        // SAFETY: `last_message` points to this thread's NUL-terminated message.
        let message = unsafe { CStr::from_ptr(last_message()) }.to_str().unwrap();
        assert!(message.contains("deliberately, in a test"), "{message}");
    }

    #[test]
    fn a_failure_is_recorded_per_thread() {
        assert_eq!(status(|| Err(Failure::new(LOWBIT_ERR_LINE, "on this thread"))), LOWBIT_ERR_LINE);
        let other = std::thread::spawn(last_code).join().unwrap();
        assert_eq!((last_code(), other), (LOWBIT_ERR_LINE, LOWBIT_OK));
        // A message with a NUL keeps what comes before it.
        status(|| Err(Failure::new(LOWBIT_ERR_FORMAT, "before\0after")));
        // SAFETY: as above.
        assert_eq!(unsafe { CStr::from_ptr(last_message()) }.to_str().unwrap(), "before");
    }
}
