//! **lowbit's C ABI** (header `include/lowbit.h`, generated from this crate by cbindgen): what a
//! testbench calls, one transaction at a time or on arrays.
//!
//! * Stateless and reentrant: no global rounding mode or flag word; every call takes its options
//!   and returns its flags. Format handles name immutable entries of a table shared by all
//!   threads (`lowbit_format_parse` gives the same handle for the same format).
//! * Every entry point catches panics; failures are status codes (`LOWBIT_OK` = 0, the
//!   `LOWBIT_ERR_*` values are negative) with a message per thread (`lowbit_last_error_message`).
//! * Conversions are `lowbit::verify`'s (every rounding mode, tininess rule, saturation, TestFloat's
//!   flags) or, with `onnx_cast`, ONNX `Cast` under a profile; this crate only resolves handles
//!   and options and checks the arguments.

#![warn(missing_docs)]

mod blocks;
mod boundary;
mod bulk;
mod check;
mod conversion;
mod dot;
mod handles;
mod tables;

pub use blocks::{lowbit_blocks_dequantize, lowbit_blocks_quantize};
pub use boundary::{
    LOWBIT_ERR_BITS, LOWBIT_ERR_DATA, LOWBIT_ERR_FORMAT, LOWBIT_ERR_HANDLE, LOWBIT_ERR_INTERNAL, LOWBIT_ERR_LINE,
    LOWBIT_ERR_NULL, LOWBIT_ERR_OPTIONS, LOWBIT_ERR_SIZE, LOWBIT_ERR_TOO_MANY_FORMATS, LOWBIT_ERR_UNSUPPORTED,
    LOWBIT_OK,
};
pub use bulk::lowbit_convert_n;
pub use check::{
    lowbit_check_line, lowbit_class_name, lowbit_verdict, LOWBIT_CHECK_INVALID_INTEGERS, LOWBIT_CHECK_NANS,
    LOWBIT_CHECK_NO_FLAGS, LOWBIT_CLASS_FLUSHED_TO_ZERO, LOWBIT_CLASS_INFINITY_FOR_MAX,
    LOWBIT_CLASS_INVALID_INTEGER_VALUE, LOWBIT_CLASS_MAX_FOR_INFINITY, LOWBIT_CLASS_NAN_ENCODING,
    LOWBIT_CLASS_NAN_FOR_NUMBER, LOWBIT_CLASS_NONE, LOWBIT_CLASS_NUMBER_FOR_NAN, LOWBIT_CLASS_ONE_ULP_AWAY_FROM_ZERO,
    LOWBIT_CLASS_ONE_ULP_TOWARD_ZERO, LOWBIT_CLASS_OTHER_VALUE, LOWBIT_CLASS_ZERO_SIGN,
};
pub use conversion::{
    lowbit_options, LOWBIT_FLAG_ERROR, LOWBIT_FLAG_INEXACT, LOWBIT_FLAG_INFINITE, LOWBIT_FLAG_INVALID,
    LOWBIT_FLAG_OVERFLOW, LOWBIT_FLAG_UNDERFLOW, LOWBIT_FLUSH_OPERANDS, LOWBIT_FLUSH_RESULTS, LOWBIT_PROFILE_ML_DTYPES,
    LOWBIT_PROFILE_ONNXRUNTIME, LOWBIT_PROFILE_ONNX_REFERENCE, LOWBIT_PROFILE_OPENVINO, LOWBIT_PROFILE_SPEC,
    LOWBIT_PROFILE_TORCH, LOWBIT_PROFILE_TORCH_DEFAULT, LOWBIT_PROFILE_XLA, LOWBIT_RAZ, LOWBIT_RDN, LOWBIT_RMM,
    LOWBIT_RNE, LOWBIT_ROD, LOWBIT_RTZ, LOWBIT_RUP, LOWBIT_STOCHASTIC, LOWBIT_TININESS_AFTER, LOWBIT_TININESS_BEFORE,
    LOWBIT_TININESS_DELIVERED,
};
pub use dot::{
    lowbit_accumulation, lowbit_accumulation_parse, lowbit_matmul_t, lowbit_matmul_t_blocks, LOWBIT_DOT_EXACT,
    LOWBIT_DOT_FMA, LOWBIT_DOT_SEQUENTIAL,
};
pub use handles::LOWBIT_MAX_FORMATS;

use boundary::{guard, not_null, status, text_argument, Failure, Outcome};
use conversion::Conversion;
use std::cell::RefCell;
use std::ffi::c_char;

/// A format: an ONNX dtype (`"float32"`, `"e4m3"` = FLOAT8E4M3FN, `"int8"`, `"uint4"`, ...) or a
/// described float format (`"e4m3,special=ieee"`, `"e5m2,bias=16,subnormal=flush"`), as
/// `lowbit_format_parse` returns it. Handles stay valid for the life of the process.
#[allow(non_camel_case_types)]
pub type lowbit_format = u32;

/// Writes the handle of the format `text` names into `*out`. Returns `LOWBIT_OK`, or
/// `LOWBIT_ERR_NULL`, `LOWBIT_ERR_FORMAT` (unknown name, bad description, not UTF-8; `*out` is
/// left as it was) or `LOWBIT_ERR_TOO_MANY_FORMATS`.
///
/// # Safety
/// `text` is NULL or a NUL-terminated string; `out` is NULL or points to a writable handle.
#[no_mangle]
pub unsafe extern "C" fn lowbit_format_parse(text: *const c_char, out: *mut lowbit_format) -> i32 {
    status(|| {
        not_null(out, "out")?;
        // SAFETY: the caller passes NULL (refused inside) or a NUL-terminated string.
        let text = unsafe { text_argument(text, "text") }?;
        let handle = handles::parse(text)?;
        // SAFETY: `out` is not NULL (checked above) and the caller passes a writable handle.
        unsafe { out.write(handle) };
        Ok(())
    })
}

/// Writes the width in bits of a format's codes into `*bits` (8 for E4M3, 4 for INT4, 32 for
/// float32). Returns `LOWBIT_OK`, `LOWBIT_ERR_NULL` or `LOWBIT_ERR_HANDLE`.
///
/// # Safety
/// `bits` is NULL or points to a writable `uint32_t`.
#[no_mangle]
pub unsafe extern "C" fn lowbit_format_width(format: lowbit_format, bits: *mut u32) -> i32 {
    status(|| {
        not_null(bits, "bits")?;
        let width = handles::resolve(format, "the")?.format.width();
        // SAFETY: `bits` is not NULL (checked above) and points to a writable `uint32_t`.
        unsafe { bits.write(width) };
        Ok(())
    })
}

/// Writes into `*bytes` how many bytes `n` codes of `format` take in the arrays of
/// `lowbit_convert_n`: ONNX's raw layout for a dtype (little-endian; INT4/UINT4/FLOAT4E2M1 two per
/// byte, 2-bit types four per byte, float6 four in three bytes), else one little-endian code of 1,
/// 2, 4 or 8 bytes. Returns `LOWBIT_OK`, `LOWBIT_ERR_NULL`, `LOWBIT_ERR_HANDLE` or `LOWBIT_ERR_SIZE`.
///
/// # Safety
/// `bytes` is NULL or points to a writable `size_t`.
#[no_mangle]
pub unsafe extern "C" fn lowbit_format_bytes(format: lowbit_format, n: usize, bytes: *mut usize) -> i32 {
    status(|| {
        not_null(bytes, "bytes")?;
        let size = bulk::byte_len(&handles::resolve(format, "the")?.format, n)?;
        // SAFETY: `bytes` is not NULL (checked above) and points to a writable `size_t`.
        unsafe { bytes.write(size) };
        Ok(())
    })
}

/// The default options: nearest even, tininess after rounding, no saturation, no flush, the IEEE
/// semantics with flags (profile `spec` for `onnx_cast`).
#[no_mangle]
pub extern "C" fn lowbit_options_default() -> lowbit_options {
    conversion::DEFAULT_OPTIONS
}

/// Writes the `LOWBIT_PROFILE_*` value of a profile name (`"spec"`, `"onnx-reference"`,
/// `"onnxruntime"`, `"openvino"`, `"ml-dtypes"`, `"xla"`, `"torch"`, `"torch-default"`) into `*out`.
/// Returns `LOWBIT_OK`, `LOWBIT_ERR_NULL` or `LOWBIT_ERR_OPTIONS`.
///
/// # Safety
/// `text` is NULL or a NUL-terminated string; `out` is NULL or points to a writable `int32_t`.
#[no_mangle]
pub unsafe extern "C" fn lowbit_profile_parse(text: *const c_char, out: *mut i32) -> i32 {
    status(|| {
        not_null(out, "out")?;
        // SAFETY: the caller passes NULL (refused inside) or a NUL-terminated string.
        let text = unsafe { text_argument(text, "text") }?;
        let profile = lowbit::Profile::parse(text).map_err(|e| Failure::new(LOWBIT_ERR_OPTIONS, e.to_string()))?;
        let index = lowbit::Profile::ALL.iter().position(|p| *p == profile).unwrap_or(0);
        // SAFETY: `out` is not NULL (checked above) and points to a writable `int32_t`.
        unsafe { out.write(index as i32) };
        Ok(())
    })
}

/// What a conversion is resolved from: the handles and every option but the random word.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Key {
    from: lowbit_format,
    to: lowbit_format,
    round: i32,
    tininess: i32,
    saturate: u8,
    flush: u8,
    onnx_cast: u8,
    profile: i32,
    random_width: u32,
}

impl Key {
    #[inline]
    fn new(from: lowbit_format, to: lowbit_format, o: &lowbit_options) -> Key {
        Key {
            from,
            to,
            round: o.round,
            tininess: o.tininess,
            saturate: o.saturate,
            flush: o.flush,
            onnx_cast: o.onnx_cast,
            profile: o.profile,
            random_width: o.random_width,
        }
    }
}

thread_local! {
    /// The last conversion this thread resolved. A testbench converts many operands with one
    /// setting, and resolving handles and options into a converter costs more than converting
    /// (measured: about 120 ns per call without this, 40 ns with it). It memoises a pure
    /// function: no result depends on it.
    static LAST_RESOLVED: RefCell<Option<(Key, Conversion)>> = const { RefCell::new(None) };
}

/// # Safety
/// `options` is NULL or points to a readable `lowbit_options`.
#[inline]
unsafe fn convert_one(
    from: lowbit_format,
    to: lowbit_format,
    bits: u64,
    options: *const lowbit_options,
) -> Outcome<[u64; 2]> {
    not_null(options, "options")?;
    // SAFETY: not NULL (checked above); the caller passes a readable `lowbit_options`.
    let options = unsafe { &*options };
    let key = Key::new(from, to, options);
    // Code and flags travel as whole words: a flag byte stored and read back as part of a wider
    // load stalls store forwarding at every layer (measured: most of the call's time).
    let words = |(code, flags): (u64, lowbit::round::Status)| [code, u64::from(flags.bits())];
    let cached = LAST_RESOLVED.with_borrow(|last| match last {
        Some((k, conversion)) if *k == key => Some(conversion.convert(bits, options.random_bits).map(words)),
        _ => None,
    });
    match cached {
        Some(result) => result,
        None => {
            let conversion = Conversion::resolve(from, to, options)?;
            LAST_RESOLVED.set(Some((key, conversion)));
            conversion.convert(bits, options.random_bits).map(words)
        }
    }
}

/// Converts one code `bits` of `from` into `to` with `*opts`; returns the result code and writes
/// the flags (`LOWBIT_FLAG_*`, TestFloat's layout) into `*flags` unless `flags` is NULL.
///
/// On failure (a bad handle, `bits` wider than `from`, bad options, NULL `opts`) it returns 0 and
/// writes `LOWBIT_FLAG_ERROR` into `*flags`; `lowbit_last_error_message` says why
/// (`lowbit_convert_checked` returns the status instead).
///
/// # Safety
/// `opts` is NULL or points to a readable `lowbit_options`; `flags` is NULL or points to a
/// writable byte.
#[no_mangle]
pub unsafe extern "C" fn lowbit_convert(
    from: lowbit_format,
    to: lowbit_format,
    bits: u64,
    opts: *const lowbit_options,
    flags: *mut u8,
) -> u64 {
    // SAFETY: the pointers are passed on as the caller gave them (see this function's contract).
    let ([code, raised], _) = guard([0, u64::from(LOWBIT_FLAG_ERROR)], || unsafe { convert_one(from, to, bits, opts) });
    if !flags.is_null() {
        // SAFETY: not NULL; the caller passes a writable byte.
        unsafe { flags.write(raised as u8) };
    }
    code
}

/// `lowbit_convert` with a status: writes the result into `*result` and the flags into `*flags`
/// (unless `flags` is NULL). Returns `LOWBIT_OK` or a `LOWBIT_ERR_*` code (then nothing is written).
///
/// # Safety
/// `opts` is NULL or points to a readable `lowbit_options`; `result` is NULL or points to a
/// writable `uint64_t`; `flags` is NULL or points to a writable byte.
#[no_mangle]
pub unsafe extern "C" fn lowbit_convert_checked(
    from: lowbit_format,
    to: lowbit_format,
    bits: u64,
    opts: *const lowbit_options,
    result: *mut u64,
    flags: *mut u8,
) -> i32 {
    status(|| {
        not_null(result, "result")?;
        // SAFETY: `opts` is passed on as the caller gave it (NULL is refused inside).
        let [code, raised] = unsafe { convert_one(from, to, bits, opts) }?;
        // SAFETY: `result` is not NULL (checked above); the caller passes a writable `uint64_t`.
        unsafe { result.write(code) };
        if !flags.is_null() {
            // SAFETY: not NULL; the caller passes a writable byte.
            unsafe { flags.write(raised as u8) };
        }
        Ok(())
    })
}

/// The message of the last failing call on the calling thread ("" if none has failed), valid
/// until the next failing call on this thread. Successful calls leave it as it was.
#[no_mangle]
pub extern "C" fn lowbit_last_error_message() -> *const c_char {
    boundary::last_message()
}

/// The status code of the last failing call on the calling thread (`LOWBIT_OK` if none has failed).
#[no_mangle]
pub extern "C" fn lowbit_last_error_code() -> i32 {
    boundary::last_code()
}
