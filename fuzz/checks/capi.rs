//! The checks of the `capi` fuzz target, shared with `capi/tests/fuzz_seeds.rs` (which replays the
//! committed seeds on a stable toolchain): hostile arguments into the C entry points.
//!
//! Input: 16 control bytes, the operand (8 bytes, little-endian), the random word (8 bytes), then
//! text: the source format, the target format and a dump line, separated by `\n`; the bytes after
//! a third `\n` are an array for `lowbit_convert_n`. Control bytes, each read as a raw value so
//! that invalid ones come too: 0 round, 1 tininess, 2 saturate, 3 flush, 4 onnx_cast, 5 profile,
//! 6 random_width, 7 the `check` bits, 8-11 a handle to use when a format text does not parse.
//!
//! Asserts: no entry point panics (a panic would be `LOWBIT_ERR_INTERNAL`) or answers outside its
//! documented codes; `lowbit_convert` and `lowbit_convert_checked` agree (value and flags, or 0 and
//! `LOWBIT_FLAG_ERROR` with the same status recorded); a result fits its format and its flags are
//! TestFloat's five bits (none under `onnx_cast`); an operand wider than its format is
//! `LOWBIT_ERR_BITS`; a format text parses to the same handle twice; and the dump line made of
//! the operand, the result and the flags checks as a match under the same options. The target
//! format's text is also tried as a block scheme name over the array (as float32 values to
//! quantize, and as a layout to dequantize, of a shape from control bytes 12-13): documented
//! codes only, and a layout that quantize wrote dequantizes.

use lowbit::verify::testfloat::hex_digits;
use lowbit_capi::*;
use std::ffi::{CStr, CString};

const STATUSES: [i32; 12] = [
    LOWBIT_OK,
    LOWBIT_ERR_NULL,
    LOWBIT_ERR_FORMAT,
    LOWBIT_ERR_HANDLE,
    LOWBIT_ERR_BITS,
    LOWBIT_ERR_OPTIONS,
    LOWBIT_ERR_UNSUPPORTED,
    LOWBIT_ERR_LINE,
    LOWBIT_ERR_TOO_MANY_FORMATS,
    LOWBIT_ERR_SIZE,
    LOWBIT_ERR_INTERNAL,
    LOWBIT_ERR_DATA,
];

fn documented(status: i32) {
    assert!(STATUSES.contains(&status), "undocumented status {status}");
    assert_ne!(status, LOWBIT_ERR_INTERNAL, "a panic inside lowbit: {}", last_message());
}

fn last_message() -> String {
    // SAFETY: lowbit_last_error_message returns this thread's NUL-terminated message.
    unsafe { CStr::from_ptr(lowbit_last_error_message()) }.to_string_lossy().into_owned()
}

/// The handle of `text`, or `fallback` when it does not parse.
fn handle(text: &[u8], fallback: u32) -> (u32, bool) {
    let Ok(c_text) = CString::new(text) else { return (fallback, false) };
    let mut out = fallback;
    // SAFETY: a NUL-terminated string and a writable handle.
    let status = unsafe { lowbit_format_parse(c_text.as_ptr(), &mut out) };
    documented(status);
    if status != LOWBIT_OK {
        assert_eq!(out, fallback, "a failed parse wrote its output");
        assert!(!last_message().is_empty());
        return (fallback, false);
    }
    let mut again = 0;
    // SAFETY: as above.
    assert_eq!(unsafe { lowbit_format_parse(c_text.as_ptr(), &mut again) }, LOWBIT_OK);
    assert_eq!(again, out, "one text, two handles");
    (out, true)
}

fn width(format: u32) -> Option<u32> {
    let mut bits = 0;
    // SAFETY: a writable uint32_t.
    let status = unsafe { lowbit_format_width(format, &mut bits) };
    documented(status);
    (status == LOWBIT_OK).then(|| {
        assert!((1..=64).contains(&bits), "width {bits}");
        bits
    })
}

fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1 << bits) - 1
    }
}

pub fn run(data: &[u8]) {
    if data.len() < 32 {
        return;
    }
    let (control, rest) = data.split_at(16);
    let operand = u64::from_le_bytes(rest[..8].try_into().unwrap());
    let random_bits = u64::from_le_bytes(rest[8..16].try_into().unwrap());
    let mut parts = rest[16..].splitn(4, |&b| b == b'\n');
    let (from_text, to_text, line) =
        (parts.next().unwrap_or(b""), parts.next().unwrap_or(b""), parts.next().unwrap_or(b""));
    let array = parts.next().unwrap_or(b"");
    let fallback = u32::from_le_bytes(control[8..12].try_into().unwrap());
    let options = lowbit_options {
        round: i32::from(control[0]) - 2,
        tininess: i32::from(control[1]) - 1,
        saturate: control[2] % 4,
        flush: control[3] % 8,
        onnx_cast: control[4] % 3,
        profile: i32::from(control[5]) - 1,
        random_width: u32::from(control[6]),
        random_bits,
    };
    let check = u32::from(control[7] % 16);
    let (from, from_parsed) = handle(from_text, fallback);
    let (to, to_parsed) = handle(to_text, fallback.rotate_left(7));
    let (from_width, to_width) = (width(from), width(to));
    // A parsed format is a valid handle.
    assert!((!from_parsed || from_width.is_some()) && (!to_parsed || to_width.is_some()));

    // The scalar calls agree with each other.
    let (mut result, mut flags) = (0u64, 0u8);
    // SAFETY: readable options, a writable result and flag byte.
    let status = unsafe { lowbit_convert_checked(from, to, operand, &options, &mut result, &mut flags) };
    documented(status);
    let mut plain_flags = 0u8;
    // SAFETY: readable options and a writable flag byte.
    let plain = unsafe { lowbit_convert(from, to, operand, &options, &mut plain_flags) };
    if status == LOWBIT_OK {
        assert_eq!((plain, plain_flags), (result, flags));
        assert_eq!(flags & !0x1F, 0, "flags {flags:#x}");
        let to_bits = to_width.expect("a conversion succeeded into a format with a width");
        assert_eq!(result & !mask(to_bits), 0, "result {result:#x} wider than {to_bits} bits");
        if options.onnx_cast == 1 {
            assert_eq!(flags, 0);
        }
        let from_bits = from_width.expect("a conversion succeeded from a format with a width");
        assert_eq!(operand & !mask(from_bits), 0, "an operand wider than its format was accepted");
        // The line of this conversion checks as a match.
        let (a, b) = (hex_digits(from_bits), hex_digits(to_bits));
        let own = if options.onnx_cast == 0 {
            format!("{operand:0a$X} {result:0b$X} {flags:02X}")
        } else {
            format!("{operand:0a$X} {result:0b$X}")
        };
        let own = CString::new(own).unwrap();
        let mut verdict = lowbit_verdict::default();
        // SAFETY: a NUL-terminated line, readable options, a writable verdict.
        let checked = unsafe { lowbit_check_line(from, to, own.as_ptr(), &options, check % 8, &mut verdict) };
        assert_eq!(checked, LOWBIT_OK, "{own:?}: {}", last_message());
        assert_eq!((verdict.mismatch, verdict.expected, verdict.skipped), (0, result, 0), "{own:?}");
    } else {
        assert_eq!((plain, plain_flags), (0, LOWBIT_FLAG_ERROR));
        assert_eq!(lowbit_last_error_code(), status);
        assert!(!last_message().is_empty());
        if status == LOWBIT_ERR_BITS {
            assert!(from_width.is_some_and(|w| operand & !mask(w) != 0));
        }
    }

    // Any line.
    if let Ok(line) = CString::new(line) {
        let mut verdict = lowbit_verdict::default();
        // SAFETY: as above.
        let checked = unsafe { lowbit_check_line(from, to, line.as_ptr(), &options, check, &mut verdict) };
        documented(checked);
        if checked == LOWBIT_OK {
            assert!(!lowbit_class_name(verdict.value_class).is_null());
            assert_eq!(verdict.missing_flags & verdict.extra_flags, 0);
        }
    }

    // An array of whatever elements the bytes hold (at most 64).
    let bytes = |format: u32, n: usize| {
        let mut size = 0usize;
        // SAFETY: a writable size_t.
        (unsafe { lowbit_format_bytes(format, n, &mut size) } == LOWBIT_OK).then_some(size)
    };
    if let (Some(_), Some(_)) = (from_width, to_width) {
        let n = (0..=64usize).rev().find(|&n| bytes(from, n).is_some_and(|b| b <= array.len())).unwrap_or(0);
        let src = &array[..bytes(from, n).unwrap_or(0)];
        let mut dst = vec![0u8; bytes(to, n).unwrap_or(0)];
        let mut array_flags = vec![0u8; n];
        // SAFETY: buffers of the lengths lowbit_format_bytes gives, not overlapping.
        let status = unsafe {
            lowbit_convert_n(
                from,
                to,
                src.as_ptr().cast(),
                dst.as_mut_ptr().cast(),
                n,
                &options,
                array_flags.as_mut_ptr(),
            )
        };
        documented(status);
        if status == LOWBIT_OK {
            assert!(array_flags.iter().all(|&f| f & !0x1F == 0));
        }
    }

    if let Ok(scheme) = CString::new(to_text) {
        blocks(&scheme, control, array);
    }
}

/// The block-scheme entry points on hostile names, shapes and bytes.
fn blocks(scheme: &CStr, control: &[u8], array: &[u8]) {
    let x: Vec<f32> = array.chunks_exact(4).map(|b| f32::from_le_bytes(b.try_into().unwrap())).collect();
    // A shape of one or two axes whose product is at most the values there are (or zero).
    let cols = usize::from(control[12]) + 1;
    let rows = usize::from(control[13] % 4);
    let shape = if rows == 0 { vec![cols] } else { vec![rows, cols] };
    let count: usize = shape.iter().product();
    if count > x.len() {
        return;
    }
    let (mut out, mut written) = (vec![0u8; 4 * count + 64], 0usize);
    // SAFETY: a NUL-terminated name, `count` readable float32 values, `shape.len()` sizes, an
    // output of `out.len()` bytes, a writable size_t.
    let status = unsafe {
        lowbit_blocks_quantize(
            scheme.as_ptr(),
            x.as_ptr(),
            shape.as_ptr(),
            shape.len(),
            -1,
            std::ptr::null(),
            out.as_mut_ptr(),
            out.len(),
            &mut written,
        )
    };
    documented(status);
    let mut values = vec![0f32; count];
    if status == LOWBIT_OK {
        assert!(written <= out.len());
        // SAFETY: `written` readable bytes, `count` writable float32 values.
        let back = unsafe {
            lowbit_blocks_dequantize(
                scheme.as_ptr(),
                out.as_ptr(),
                written,
                shape.as_ptr(),
                shape.len(),
                -1,
                values.as_mut_ptr(),
            )
        };
        assert_eq!(back, LOWBIT_OK, "a layout quantize wrote does not dequantize: {}", last_message());
    }
    // The raw bytes as a layout.
    // SAFETY: `array.len()` readable bytes, `count` writable float32 values.
    let status = unsafe {
        lowbit_blocks_dequantize(
            scheme.as_ptr(),
            array.as_ptr(),
            array.len(),
            shape.as_ptr(),
            shape.len(),
            -1,
            values.as_mut_ptr(),
        )
    };
    documented(status);
}
