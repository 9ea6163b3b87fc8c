//! `lowbit_check_line`: one line of a unit's dump (`operand result [flags]`, TestFloat's layout,
//! as `lowbit check` reads it) compared with lowbit, the mismatch classified by
//! `lowbit::verify::check`.

use crate::boundary::{not_null, status, text_argument, Failure, LOWBIT_ERR_LINE, LOWBIT_ERR_OPTIONS};
use crate::conversion::{lowbit_options, Conversion};
use crate::lowbit_format;
use lowbit::verify::check::{compare, CheckOptions, Class};
use lowbit::verify::testfloat::Layout;
use std::ffi::c_char;

/// `check` bit: a NaN result must have the expected encoding and sign.
pub const LOWBIT_CHECK_NANS: u32 = 1;
/// `check` bit: an invalid float-to-integer result must have the expected value.
pub const LOWBIT_CHECK_INVALID_INTEGERS: u32 = 2;
/// `check` bit: ignore the flags.
pub const LOWBIT_CHECK_NO_FLAGS: u32 = 4;

/// The value is right (or the line was skipped).
pub const LOWBIT_CLASS_NONE: i32 = 0;
/// One ulp (one integer step) further from zero than expected.
pub const LOWBIT_CLASS_ONE_ULP_AWAY_FROM_ZERO: i32 = 1;
/// One ulp (one integer step) nearer to zero than expected.
pub const LOWBIT_CLASS_ONE_ULP_TOWARD_ZERO: i32 = 2;
/// A zero of the wrong sign.
pub const LOWBIT_CLASS_ZERO_SIGN: i32 = 3;
/// A NaN where a number was due.
pub const LOWBIT_CLASS_NAN_FOR_NUMBER: i32 = 4;
/// A number where a NaN was due.
pub const LOWBIT_CLASS_NUMBER_FOR_NAN: i32 = 5;
/// Another NaN encoding or sign (a mismatch only with `LOWBIT_CHECK_NANS`).
pub const LOWBIT_CLASS_NAN_ENCODING: i32 = 6;
/// Infinity where the largest finite value was due.
pub const LOWBIT_CLASS_INFINITY_FOR_MAX: i32 = 7;
/// The largest finite value where infinity was due.
pub const LOWBIT_CLASS_MAX_FOR_INFINITY: i32 = 8;
/// Zero where a subnormal was due.
pub const LOWBIT_CLASS_FLUSHED_TO_ZERO: i32 = 9;
/// Another value for an invalid float-to-integer result (a mismatch only with
/// `LOWBIT_CHECK_INVALID_INTEGERS`).
pub const LOWBIT_CLASS_INVALID_INTEGER_VALUE: i32 = 10;
/// Any other wrong value.
pub const LOWBIT_CLASS_OTHER_VALUE: i32 = 11;

/// The names of the classes, indexed by `LOWBIT_CLASS_*` (`lowbit check --json`'s keys; the
/// classes after NONE in the order of `Class::ALL`, which a test checks).
const CLASS_NAMES: [&std::ffi::CStr; 12] = [
    c"none",
    c"one_ulp_away_from_zero",
    c"one_ulp_toward_zero",
    c"zero_sign",
    c"nan_for_number",
    c"number_for_nan",
    c"nan_encoding",
    c"infinity_for_max",
    c"max_for_infinity",
    c"flushed_to_zero",
    c"invalid_integer_value",
    c"other_value",
];

/// The `LOWBIT_CLASS_*` value of a class: 1 + its position in `Class::ALL`.
fn class_code(class: Option<Class>) -> i32 {
    class.and_then(|c| Class::ALL.iter().position(|&k| k == c)).map_or(LOWBIT_CLASS_NONE, |i| i as i32 + 1)
}

/// The verdict on one dump line.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct lowbit_verdict {
    /// The line's operand code.
    pub operand: u64,
    /// The line's result code.
    pub result: u64,
    /// lowbit's result code.
    pub expected: u64,
    /// The line's flags (when `has_flags`).
    pub flags: u8,
    /// lowbit's flags (0 under `onnx_cast`).
    pub expected_flags: u8,
    /// 1 if the line carries flags.
    pub has_flags: u8,
    /// 1 for a line without a case (blank, `#` comment, CSV header): nothing else is set.
    pub skipped: u8,
    /// 1 if the line is a mismatch (a counted value difference or a flag difference).
    pub mismatch: u8,
    /// Flags expected and not raised.
    pub missing_flags: u8,
    /// Flags raised and not expected.
    pub extra_flags: u8,
    /// How the value differs: `LOWBIT_CLASS_*` (`LOWBIT_CLASS_NONE` if it does not).
    pub value_class: i32,
}

/// Checks one dump line `operand result [flags]` (hex words; optionally a leading rounding-mode
/// word such as `rtz` or TestFloat's `-rminMag`, which replaces `opts->round` for the line) against
/// the conversion `from` -> `to` with `*opts`, writing the verdict into `*out`. `check` holds
/// `LOWBIT_CHECK_*` bits. Returns `LOWBIT_OK` (the line matched or not: see `out->mismatch`), or
/// `LOWBIT_ERR_NULL`, `LOWBIT_ERR_HANDLE`, `LOWBIT_ERR_OPTIONS`, `LOWBIT_ERR_FORMAT` (not UTF-8),
/// `LOWBIT_ERR_LINE` (the line is not in the formats' widths) or `LOWBIT_ERR_UNSUPPORTED`.
///
/// # Safety
/// Each pointer is NULL or valid: `line` a NUL-terminated string, `opts` a readable
/// `lowbit_options`, `out` a writable `lowbit_verdict`.
#[no_mangle]
pub unsafe extern "C" fn lowbit_check_line(
    from: lowbit_format,
    to: lowbit_format,
    line: *const c_char,
    opts: *const lowbit_options,
    check: u32,
    out: *mut lowbit_verdict,
) -> i32 {
    status(|| {
        not_null(opts, "opts")?;
        not_null(out, "out")?;
        // SAFETY: the caller passes NULL (refused inside) or a NUL-terminated string.
        let text = unsafe { text_argument(line, "line") }?;
        // SAFETY: not NULL (checked above); the caller passes a readable `lowbit_options`.
        let options = unsafe { opts.read() };
        if check & !(LOWBIT_CHECK_NANS | LOWBIT_CHECK_INVALID_INTEGERS | LOWBIT_CHECK_NO_FLAGS) != 0 {
            return Err(Failure::new(LOWBIT_ERR_OPTIONS, format!("check {check:#x}: use LOWBIT_CHECK_* bits")));
        }
        let conversion = Conversion::resolve(from, to, &options)?;
        let layout = Layout { operand_bits: conversion.from.width(), result_bits: conversion.to.width() };
        let case =
            layout.parse(text.as_bytes(), "the line", 1).map_err(|e| Failure::new(LOWBIT_ERR_LINE, e.to_string()))?;
        let verdict = match case {
            None => lowbit_verdict { skipped: 1, ..lowbit_verdict::default() },
            Some(case) => {
                let conversion = match case.mode {
                    Some(mode) => conversion.with_mode(mode),
                    None => conversion,
                };
                let (expected, expected_flags) = conversion.convert(case.operand, options.random_bits)?;
                let check_options = CheckOptions {
                    check_nans: check & LOWBIT_CHECK_NANS != 0,
                    check_invalid_integers: check & LOWBIT_CHECK_INVALID_INTEGERS != 0,
                    no_flags: check & LOWBIT_CHECK_NO_FLAGS != 0,
                    seed: 0,
                };
                let expected_status = conversion.has_flags().then_some(expected_flags);
                let verdict =
                    compare(conversion.to, (expected, expected_status), (case.result, case.flags), &check_options);
                lowbit_verdict {
                    operand: case.operand,
                    result: case.result,
                    expected,
                    flags: case.flags.unwrap_or(0),
                    expected_flags: expected_flags.bits(),
                    has_flags: u8::from(case.flags.is_some()),
                    skipped: 0,
                    mismatch: u8::from(verdict.is_mismatch()),
                    missing_flags: verdict.missing.bits(),
                    extra_flags: verdict.extra.bits(),
                    value_class: class_code(verdict.value),
                }
            }
        };
        // SAFETY: `out` is not NULL (checked above); the caller passes a writable verdict.
        unsafe { out.write(verdict) };
        Ok(())
    })
}

/// The name of a `LOWBIT_CLASS_*` value (`"one_ulp_toward_zero"`, ...; `lowbit check --json`'s
/// keys), a static string; NULL for a value that is no class.
#[no_mangle]
pub extern "C" fn lowbit_class_name(class: i32) -> *const c_char {
    usize::try_from(class).ok().and_then(|i| CLASS_NAMES.get(i)).map_or(std::ptr::null(), |name| name.as_ptr())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn class_codes_follow_the_library_order() {
        for (i, class) in Class::ALL.into_iter().enumerate() {
            assert_eq!(class_code(Some(class)), i as i32 + 1);
            assert_eq!(CLASS_NAMES[i + 1].to_str().unwrap(), class.key());
        }
        assert_eq!(CLASS_NAMES.len(), Class::ALL.len() + 1);
        let named = [
            LOWBIT_CLASS_ONE_ULP_AWAY_FROM_ZERO,
            LOWBIT_CLASS_ONE_ULP_TOWARD_ZERO,
            LOWBIT_CLASS_ZERO_SIGN,
            LOWBIT_CLASS_NAN_FOR_NUMBER,
            LOWBIT_CLASS_NUMBER_FOR_NAN,
            LOWBIT_CLASS_NAN_ENCODING,
            LOWBIT_CLASS_INFINITY_FOR_MAX,
            LOWBIT_CLASS_MAX_FOR_INFINITY,
            LOWBIT_CLASS_FLUSHED_TO_ZERO,
            LOWBIT_CLASS_INVALID_INTEGER_VALUE,
            LOWBIT_CLASS_OTHER_VALUE,
        ];
        assert_eq!(named, core::array::from_fn(|i| i as i32 + 1));
    }
}
