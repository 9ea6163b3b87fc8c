//! Number -> text at speed, with [`format_code`] as the definition.
//!
//! A [`TextWriter`] is resolved once per cast (source dtype and style) and then writes every
//! element with no per-element decision beyond the value itself:
//!
//! - **Sources of 16 bits or fewer** (every float of 16 bits or fewer, int/uint of 2 to 16 bits,
//!   bool): the text of every code, made once per process by [`format_code`] itself and kept as one
//!   byte buffer with offsets. Exact by construction. A 65,536-entry table costs a few hundred
//!   milliseconds of the exact code, so small casts that find no table yet run the exact code per
//!   element instead of building one.
//! - **int32, int64, uint32, uint64**: the decimal digits of the integer (the definition is the
//!   integer's decimal, which is unique).
//! - **float32 and float64, `spec` and numpy styles**: the shortest round-trip digits, the closest
//!   to the value among the shortest, an exact tie to the even digit, are what the `zmij` crate
//!   computes (Schubfach class: "the shortest correctly rounded decimal"); its text is only
//!   re-read for the digits and the decimal exponent, and laid out here as the style wants.
//! - **float32, `%.8g`**: eight significant digits of `m * 2^e` rounded to nearest-even with
//!   exact integer arithmetic (at most 256 bits: `m < 2^24`, `5^p < 2^128`).
//! - **float64, `%.8g`**: from the shortest digits D of a normal x (n digits). If n <= 8, D is
//!   the eight-digit rounding of x: x lies within 2^-53 * x of D, far inside half a unit of the
//!   eighth digit (a subnormal has no such relative precision: the exact code writes those). If
//!   n >= 9, rounding D to eight digits equals rounding x unless the eight-digit midpoint M lies
//!   between x and D (or on D): M would then be inside the rounding interval of x, so M (9 digits)
//!   would be a shorter or an equally short but closer candidate than D, which the
//!   shortest-closest D excludes. The one case left, n = 9 with D = M (last digit 5), goes to the
//!   exact code.
//!
//! The `spec`/numpy layout of a value in the positional range is taken from zmij's text as it is
//! when that text is already in the canonical positional form, since two canonical layouts of the
//! same digits are the same text. For float64 each text is checked. For float32 the check was run
//! once over every positional value (all 2^31 patterns of each sign filtered to
//! `1e-4 <= |x| < 1e6`: zmij 1.0.23 writes every one canonically; `cargo test --release --lib --
//! --ignored zmij_float32` repeats it in about a minute), so it is not paid per element: the
//! version is pinned in Cargo.toml, and `zmij_float32_positional_texts_are_canonical_sampled`
//! checks a spread of values of both signs on every test run.
//!
//! Whatever the fast code cannot decide it hands to [`format_code`].

use super::format_code;
use crate::alloc_prelude::*;
use crate::dtype::{DType, Kind};
use crate::error::{Error, Result};
use crate::once::Once;
use crate::profile::NumberStyle;
use crate::texts::{TextSink, Texts};

/// Writes elements of one dtype in one style.
pub struct TextWriter {
    dtype: DType,
    style: NumberStyle,
    how: How,
}

enum How {
    Table(&'static CodeTable),
    Float32,
    Float64,
    Signed32,
    Signed64,
    Unsigned,
    /// The exact code per element (no table yet for a small cast).
    Exact,
    /// A dtype that has no text (complex, STRING, UNDEFINED): the exact code's error.
    NoText,
}

/// Below this many elements a 16-bit source that has no table yet is written by the exact code
/// (65,536 exact strings cost far more than a few thousand).
const TABLE_BUILD_MIN_ELEMENTS: usize = 4096;

impl TextWriter {
    /// A writer for `elements` elements of `dtype` in `style`. May build (once per process) the
    /// table of a source of 16 bits or fewer.
    pub fn new(dtype: DType, style: NumberStyle, elements: usize) -> Result<TextWriter> {
        let how = match dtype {
            DType::Float => How::Float32,
            DType::Double => How::Float64,
            DType::Int32 => How::Signed32,
            DType::Int64 => How::Signed64,
            DType::Uint32 | DType::Uint64 => How::Unsigned,
            _ => match (dtype.kind(), dtype.bits()) {
                (Kind::Float(_) | Kind::Integer { .. } | Kind::Bool, Some(bits)) if bits <= 16 => {
                    let slot = &TABLES[dtype as usize][style_index(style)];
                    match slot.get() {
                        Some(table) => How::Table(table),
                        None if bits <= 8 || elements >= TABLE_BUILD_MIN_ELEMENTS => {
                            How::Table(slot.get_or_try_init(|| CodeTable::build(dtype, style))?)
                        }
                        None => How::Exact,
                    }
                }
                (Kind::Float(_) | Kind::Integer { .. } | Kind::Bool, _) => How::Exact,
                _ => How::NoText,
            },
        };
        Ok(TextWriter { dtype, style, how })
    }

    /// The texts of the first `n` elements of `raw` (ONNX raw data of the writer's dtype), written
    /// straight into one [`Texts`] buffer.
    pub fn texts(&self, raw: &[u8], n: usize) -> Result<Texts> {
        if let How::NoText = self.how {
            // Whatever the count, the dtype has no text: the exact code says why.
            return format_code(self.dtype, 0, self.style).map(|_| Texts::new());
        }
        let need = crate::packing::raw_len(self.dtype, n)?;
        if raw.len() < need {
            return Err(Error::RawLength {
                dtype: self.dtype.onnx_name(),
                elements: n,
                expected: need,
                actual: raw.len(),
            });
        }
        let mut out = Texts::new();
        // Room for the longest text of every element at once (pages that are never written are
        // never touched); a text the guess misses only makes the buffer grow.
        out.try_reserve(n, n.saturating_mul(self.longest_text())).map_err(|_| Error::TooLarge {
            what: format!("Cast to STRING: cannot allocate the text of {n} elements"),
        })?;
        let (dtype, style) = (self.dtype, self.style);
        // The common widths read their elements straight from the bytes; the loop per case keeps
        // the per-element work to the value itself.
        match self.how {
            How::Float32 => {
                for chunk in raw.chunks_exact(4).take(n) {
                    let bits = u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
                    out.push_with(|sink| {
                        if !float32_into(sink, bits, style) {
                            exact_into(sink, dtype, u64::from(bits), style)?;
                        }
                        Ok::<(), Error>(())
                    })?;
                }
            }
            How::Float64 => {
                for chunk in raw.chunks_exact(8).take(n) {
                    let mut bytes = [0u8; 8];
                    bytes.copy_from_slice(chunk);
                    let bits = u64::from_le_bytes(bytes);
                    out.push_with(|sink| {
                        if !float64_into(sink, bits, style) {
                            exact_into(sink, dtype, bits, style)?;
                        }
                        Ok::<(), Error>(())
                    })?;
                }
            }
            How::Table(table) => {
                let mask = dtype.code_mask();
                for i in 0..n {
                    let code = crate::packing::get(dtype, raw, i) & mask;
                    match table.get(code) {
                        Some(text) => out.push(text),
                        None => out.push(&format_code(dtype, code, style)?),
                    }
                }
            }
            _ => {
                for i in 0..n {
                    let code = crate::packing::get(dtype, raw, i);
                    out.push_with(|sink| self.write(sink, code))?;
                }
            }
        }
        Ok(out)
    }

    /// An upper bound of the bytes of one element's text (a guess for the exact code's dtypes).
    fn longest_text(&self) -> usize {
        match self.how {
            How::Table(table) => table.longest,
            // A sign, 9 digits, a point and `e-45`.
            How::Float32 => 16,
            How::Float64 => TEXT_CAPACITY,
            // `-2147483648`
            How::Signed32 => 11,
            // `-9223372036854775808`, `18446744073709551615`
            How::Signed64 | How::Unsigned => 20,
            How::Exact => 8,
            How::NoText => 0,
        }
    }

    /// Writes the text of one element; `code` is the element's bits as [`format_code`] takes them.
    fn write(&self, sink: &mut TextSink<'_>, code: u64) -> Result<()> {
        let written = match self.how {
            How::Table(table) => match table.get(code & self.dtype.code_mask()) {
                Some(text) => {
                    sink.push_str(text);
                    true
                }
                None => false,
            },
            How::Float32 => float32_into(sink, code as u32, self.style),
            How::Float64 => float64_into(sink, code, self.style),
            How::Signed32 => {
                let value = code as u32 as i32;
                sink.push_str(integer_text(value < 0, u64::from(value.unsigned_abs()), &mut [0; 21]));
                true
            }
            How::Signed64 => {
                let value = code as i64;
                sink.push_str(integer_text(value < 0, value.unsigned_abs(), &mut [0; 21]));
                true
            }
            How::Unsigned => {
                sink.push_str(integer_text(false, code & self.dtype.code_mask(), &mut [0; 21]));
                true
            }
            How::Exact | How::NoText => false,
        };
        if written {
            Ok(())
        } else {
            exact_into(sink, self.dtype, code, self.style)
        }
    }

    /// The text of one element; `code` is the element's bits as [`format_code`] takes them.
    pub fn text(&self, code: u64) -> Result<String> {
        let mut one = Texts::new();
        one.push_with(|sink| self.write(sink, code))?;
        Ok(one.joined().to_owned())
    }
}

/// Replaces whatever a fast path wrote of this element by the exact code's text.
#[cold]
fn exact_into(sink: &mut TextSink<'_>, dtype: DType, code: u64, style: NumberStyle) -> Result<()> {
    sink.clear();
    sink.push_str(&format_code(dtype, code, style)?);
    Ok(())
}

const fn style_index(style: NumberStyle) -> usize {
    match style {
        NumberStyle::Spec => 0,
        NumberStyle::Numpy => 1,
        NumberStyle::PrintfG8 => 2,
    }
}

/// One table per (dtype, style), indexed by the ONNX dtype number; built on first use.
static TABLES: [[Once<CodeTable>; 3]; 29] = [const { [const { Once::new() }; 3] }; 29];

/// The text of every code of a dtype: one buffer, and where each code's text ends in it.
struct CodeTable {
    text: String,
    ends: Vec<u32>,
    /// The bytes of the longest text.
    longest: usize,
}

impl CodeTable {
    fn build(dtype: DType, style: NumberStyle) -> Result<CodeTable> {
        let count = dtype.code_mask() + 1;
        let text_of = |code| format_code(dtype, code, style);
        #[cfg(feature = "rayon")]
        let texts: Result<Vec<String>> = {
            use rayon::prelude::*;
            (0..count).into_par_iter().map(text_of).collect()
        };
        #[cfg(not(feature = "rayon"))]
        let texts: Result<Vec<String>> = (0..count).map(text_of).collect();
        let texts = texts?;
        let mut text = String::with_capacity(texts.iter().map(String::len).sum());
        let mut ends = Vec::with_capacity(texts.len());
        for t in &texts {
            text.push_str(t);
            // At most 65,536 strings of a few dozen bytes: far below u32::MAX.
            ends.push(text.len() as u32);
        }
        let longest = texts.iter().map(String::len).max().unwrap_or(0);
        Ok(CodeTable { text, ends, longest })
    }

    fn get(&self, code: u64) -> Option<&str> {
        let i = usize::try_from(code).ok()?;
        let end = *self.ends.get(i)? as usize;
        let start = if i == 0 { 0 } else { *self.ends.get(i - 1)? as usize };
        self.text.get(start..end)
    }
}

// ------------------------------------------------------------------------------------------------
// Text being written
// ------------------------------------------------------------------------------------------------

/// The longest text written here: a sign, 17 digits, a point and `e-324` (24 bytes); a positional
/// float64 below 1e16 with its `.0`, or `0.000` and 17 digits, is shorter.
const TEXT_CAPACITY: usize = 24;

/// `e`, the exponent's sign and at least two digits (C and numpy).
fn write_exponent(out: &mut TextSink<'_>, exp10: i32) {
    out.push_ascii(b'e');
    out.push_ascii(if exp10 < 0 { b'-' } else { b'+' });
    let e = exp10.unsigned_abs();
    if e >= 100 {
        out.push_ascii(b'0' + (e / 100) as u8);
    }
    out.push_ascii(b'0' + (e / 10 % 10) as u8);
    out.push_ascii(b'0' + (e % 10) as u8);
}

/// The decimal digits of `value` (exactly `len` of them, leading zeros if `value` is shorter).
fn digit_bytes(mut value: u64, len: usize) -> ([u8; 20], usize) {
    let mut digits = [b'0'; 20];
    let len = len.min(20);
    for slot in digits[..len].iter_mut().rev() {
        *slot = b'0' + (value % 10) as u8;
        value /= 10;
    }
    (digits, len)
}

/// Number of decimal digits of a nonzero `value`.
fn decimal_len(value: u64) -> usize {
    value.checked_ilog10().map_or(1, |l| l as usize + 1)
}

// ------------------------------------------------------------------------------------------------
// Specials shared by both float widths
// ------------------------------------------------------------------------------------------------

/// NaN, ±Inf and ±0 exactly as [`format_code`] spells them.
fn special_text(negative: bool, is_nan: bool, is_infinite: bool, style: NumberStyle) -> &'static str {
    let numpy = style == NumberStyle::Numpy;
    if is_nan {
        if numpy {
            "nan"
        } else {
            "NaN"
        }
    } else if is_infinite {
        match (numpy, negative) {
            (true, false) => "inf",
            (true, true) => "-inf",
            (false, false) => "INF",
            (false, true) => "-INF",
        }
    } else {
        match (style, negative) {
            (NumberStyle::PrintfG8, false) => "0",
            (NumberStyle::PrintfG8, true) => "-0",
            (_, false) => "0.0",
            (_, true) => "-0.0",
        }
    }
}

// ------------------------------------------------------------------------------------------------
// Shortest digits (spec and numpy styles)
// ------------------------------------------------------------------------------------------------

/// A positive decimal `digits * 10^(exp10 - len + 1)`: `len` significant digits without trailing
/// zeros, the first of weight `10^exp10`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Digits {
    digits: u64,
    len: usize,
    exp10: i32,
}

/// Reads the digits and exponent back from a plain decimal text (`123.45`, `1e-7`, `4.5e+16`,
/// `100.0`): whatever layout the formatter chose, the number is the same.
fn digits_of_text(text: &str) -> Option<Digits> {
    let s = text.as_bytes();
    let mut digits: u64 = 0;
    let mut significant = 0usize;
    let mut scale: i32 = 0;
    let mut after_point = false;
    let mut i = usize::from(s.first() == Some(&b'-'));
    while let Some(&b) = s.get(i) {
        match b {
            b'0'..=b'9' => {
                if digits != 0 || b != b'0' {
                    significant += 1;
                    if significant > 19 {
                        return None;
                    }
                    digits = digits * 10 + u64::from(b - b'0');
                }
                if after_point {
                    scale -= 1;
                }
            }
            b'.' => after_point = true,
            b'e' | b'E' => break,
            _ => return None,
        }
        i += 1;
    }
    if s.get(i).is_some_and(|b| b.eq_ignore_ascii_case(&b'e')) {
        let exponent: i32 = text.get(i + 1..)?.trim_start_matches('+').parse().ok()?;
        scale += exponent;
    }
    if digits == 0 {
        return None;
    }
    while digits % 10 == 0 {
        digits /= 10;
        scale += 1;
    }
    let len = decimal_len(digits);
    Some(Digits { digits, len, exp10: scale + len as i32 - 1 })
}

/// Whether a text is already a number in the `spec`/numpy positional layout: an optional `-`,
/// an integer part without leading zeros (or `0`), a point, and a fraction without trailing
/// zeros (or `0`). Two such texts of the same digits and value are the same text, so a formatter's
/// output that passes this check can be taken as it is.
fn is_canonical_positional(text: &str) -> bool {
    let s = text.as_bytes();
    let s = s.strip_prefix(b"-").unwrap_or(s);
    let n = s.len();
    if !(8..=32).contains(&n) {
        return n >= 3 && is_canonical_positional_bytewise(s);
    }
    // Whole words, with no branch per byte (the bytes are data: a branch on each mispredicts):
    // words at 0, 8, ... and a last one ending at the end of the text, its bytes already seen
    // masked off.
    let word_at = |at: usize| {
        let mut bytes = [0u8; 8];
        bytes.copy_from_slice(&s[at..at + 8]);
        u64::from_le_bytes(bytes)
    };
    let (mut points, mut others, mut point) = (0u32, 0u64, 0usize);
    let mut at = 0;
    while at + 8 < n {
        let (p, o) = byte_classes(word_at(at), u64::MAX);
        // Words with a point, and words with two (no popcount instruction on baseline x86-64).
        points += u32::from(p != 0) + u32::from(p & p.wrapping_sub(1) != 0);
        others |= o;
        point = if p != 0 { at + p.trailing_zeros() as usize / 8 } else { point };
        at += 8;
    }
    let last = n - 8;
    let (p, o) = byte_classes(word_at(last), u64::MAX << (8 * (at - last)));
    points += u32::from(p != 0) + u32::from(p & p.wrapping_sub(1) != 0);
    others |= o;
    point = if p != 0 { last + p.trailing_zeros() as usize / 8 } else { point };
    points == 1 && others == 0 && canonical_parts(s, point)
}

/// Whether the digits around the one point at `point` of the digits-and-point text `s` have the
/// canonical form: at least one digit on each side, no leading zero before it (but `0.`), no
/// trailing zero after it (but `.0`), and not `0.0`.
fn canonical_parts(s: &[u8], point: usize) -> bool {
    let n = s.len();
    // The first and the last byte are digits (a point there would leave an empty part).
    let (int_len, fraction_len) = (point, n - point - 1);
    int_len >= 1
        && fraction_len >= 1
        && (s[0] != b'0' || int_len == 1)
        && (s[n - 1] != b'0' || fraction_len == 1)
        // "0.0" is zero, which never gets here.
        && !(int_len == 1 && fraction_len == 1 && s[0] == b'0' && s[2] == b'0')
}

/// [`is_canonical_positional`] of a short or long text (after the sign), a byte at a time.
fn is_canonical_positional_bytewise(s: &[u8]) -> bool {
    let mut point = None;
    for (i, &b) in s.iter().enumerate() {
        if b == b'.' {
            if point.is_some() {
                return false;
            }
            point = Some(i);
        } else if !b.is_ascii_digit() {
            return false;
        }
    }
    point.is_some_and(|point| canonical_parts(s, point))
}

/// Of the bytes of a little-endian word whose top bits are in `keep`: those that are `.` and
/// those that are neither `.` nor an ASCII digit, each as the top bit of its byte.
fn byte_classes(v: u64, keep: u64) -> (u64, u64) {
    const ONES: u64 = u64::MAX / 255;
    const TOPS: u64 = ONES * 0x80;
    let keep = keep & TOPS;
    // The top bit of each byte of `y` that is zero: (y & 0x7F) + 0x7F reaches the top bit iff the
    // low seven bits are not all zero, and never carries into the next byte.
    let zero_bytes = |y: u64| !(((y & !TOPS) + !TOPS) | y) & TOPS;
    let points = zero_bytes(v ^ (ONES * u64::from(b'.'))) & keep;
    // A digit is 0x30 + d with d < 10: after xor 0x30, a high nibble of zero and a low nibble
    // that, plus 6, stays below 0x10 (at most 0x15: no carry).
    let d = v ^ (ONES * 0x30);
    let not_digit = (d & (ONES * 0xF0)) | (((d & (ONES * 0x0F)) + ONES * 0x06) & (ONES * 0x10));
    let digits = zero_bytes(not_digit);
    (points, keep & !digits & !points)
}

/// The `spec`/numpy layout (see [`NumberStyle::Spec`]) of a positive number.
fn write_shortest(out: &mut TextSink<'_>, d: Digits, positional: bool) {
    let (digits, len) = digit_bytes(d.digits, d.len);
    let digits = &digits[..len];
    if positional {
        if d.exp10 >= 0 {
            let int_len = d.exp10 as usize + 1;
            if len > int_len {
                out.extend_ascii(&digits[..int_len]);
                out.push_ascii(b'.');
                out.extend_ascii(&digits[int_len..]);
            } else {
                out.extend_ascii(digits);
                out.repeat_ascii(b'0', int_len - len);
                out.extend_ascii(b".0");
            }
        } else {
            out.extend_ascii(b"0.");
            out.repeat_ascii(b'0', (-d.exp10 - 1) as usize);
            out.extend_ascii(digits);
        }
    } else {
        out.push_ascii(digits[0]);
        if len > 1 {
            out.push_ascii(b'.');
            out.extend_ascii(&digits[1..]);
        }
        write_exponent(out, d.exp10);
    }
}

// ------------------------------------------------------------------------------------------------
// %.8g
// ------------------------------------------------------------------------------------------------

/// Eight significant digits `10^7 <= q < 10^8` and the decimal exponent of the first one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct EightDigits {
    q: u32,
    exp10: i32,
}

const TEN_TO_7: u64 = 10_000_000;
const TEN_TO_8: u64 = 100_000_000;

/// C's `%.8g` layout of a positive number (trailing zeros removed; scientific iff the exponent
/// is below -4 or at least 8).
fn write_printf_g8(out: &mut TextSink<'_>, e: EightDigits) {
    let mut q = u64::from(e.q);
    let mut kept = 8;
    while kept > 1 && q % 10 == 0 {
        q /= 10;
        kept -= 1;
    }
    let (digits, _) = digit_bytes(q, kept);
    let digits = &digits[..kept];
    if e.exp10 < -4 || e.exp10 >= 8 {
        out.push_ascii(digits[0]);
        if kept > 1 {
            out.push_ascii(b'.');
            out.extend_ascii(&digits[1..]);
        }
        write_exponent(out, e.exp10);
    } else if e.exp10 >= 0 {
        let int_len = e.exp10 as usize + 1;
        if kept > int_len {
            out.extend_ascii(&digits[..int_len]);
            out.push_ascii(b'.');
            out.extend_ascii(&digits[int_len..]);
        } else {
            out.extend_ascii(digits);
            out.repeat_ascii(b'0', int_len - kept);
        }
    } else {
        out.extend_ascii(b"0.");
        out.repeat_ascii(b'0', (-e.exp10 - 1) as usize);
        out.extend_ascii(digits);
    }
}

/// `m * a` as 256 bits (high, low).
fn widening_mul(m: u64, a: u128) -> (u128, u128) {
    let low_part = u128::from(m) * (a & u128::from(u64::MAX));
    let high_part = u128::from(m) * (a >> 64);
    let (low, carry) = low_part.overflowing_add(high_part << 64);
    ((high_part >> 64) + u128::from(carry), low)
}

/// `floor(v / 2^s)` of the 256-bit `v = (high, low)`, for `1 <= s <= 255`, if it fits 64 bits,
/// and where the remainder lies against `2^(s-1)`.
fn shift_right_rounding(high: u128, low: u128, s: u32) -> Option<(u64, core::cmp::Ordering)> {
    let (quotient, vs_half) = match s {
        1..=127 => {
            if high >> s != 0 {
                return None;
            }
            let q = (low >> s) | (high << (128 - s));
            (q, (low & ((1u128 << s) - 1)).cmp(&(1u128 << (s - 1))))
        }
        128 => (high, low.cmp(&(1u128 << 127))),
        129..=255 => {
            let t = s - 128;
            let rest_high = high & ((1u128 << t) - 1);
            (high >> t, (rest_high, low).cmp(&(1u128 << (t - 1), 0)))
        }
        _ => return None,
    };
    Some((u64::try_from(quotient).ok()?, vs_half))
}

/// `5^p` for `0 <= p <= 55` (5^55 < 2^128).
const POW5: [u128; 56] = {
    let mut table = [1u128; 56];
    let mut i = 1;
    while i < 56 {
        table[i] = table[i - 1] * 5;
        i += 1;
    }
    table
};

fn pow5(p: u32) -> Option<u128> {
    POW5.get(p as usize).copied()
}

/// `floor(m * 2^e * 10^p)` and where the rest lies against one half (Less also when it is zero),
/// for `m < 2^24`, `e` and `p` those of a float32 and its eight-digit scale. `None` where the
/// quotient would not fit 64 bits (a wrong exponent estimate far off; never for a float32).
fn scale_by_pow10(m: u64, e: i32, p: i32) -> Option<(u64, core::cmp::Ordering)> {
    use core::cmp::Ordering;
    if (0..=17).contains(&p) && m < 1 << 24 {
        // The everyday case in 64 bits: m * 5^p < 2^24 * 2^40.
        let v = m * pow5(p as u32)? as u64;
        let shift = e + p;
        if (-63..0).contains(&shift) {
            let s = shift.unsigned_abs();
            return Some((v >> s, (v & ((1 << s) - 1)).cmp(&(1 << (s - 1)))));
        }
    }
    if p >= 0 {
        // m * 5^p * 2^(e + p)
        let (high, low) = widening_mul(m, pow5(p as u32)?);
        let shift = e + p;
        if shift >= 0 {
            if high != 0 || shift >= 64 {
                return None;
            }
            let q = u64::try_from(low).ok()?.checked_shl(shift as u32)?;
            // A left shift that lost bits would show as a smaller value.
            (q >> shift == low as u64).then_some((q, Ordering::Less))
        } else {
            shift_right_rounding(high, low, shift.unsigned_abs())
        }
    } else {
        // m * 2^e / 10^-p with 0 <= e <= 104: a float32 of at least 10^8 has e > 0, and
        // m * 2^104 < 2^128.
        if !(0..=104).contains(&e) {
            return None;
        }
        let numerator = u128::from(m) << e;
        let divisor = 10u128.checked_pow(p.unsigned_abs())?;
        let (q, r) = (numerator / divisor, numerator % divisor);
        Some((u64::try_from(q).ok()?, (r << 1).cmp(&divisor)))
    }
}

/// `%.8g` digits of the positive float32 `m * 2^e` (m < 2^24), rounded to nearest-even exactly.
fn printf_g8_digits_f32(m: u32, e: i32) -> Option<EightDigits> {
    use core::cmp::Ordering;
    if m == 0 {
        return None;
    }
    // floor(log2 x) * log10(2), as 78913 / 2^18; off by at most one, settled below.
    let log2 = 31 - m.leading_zeros() as i32 + e;
    let mut exp10 = (log2 * 78913) >> 18;
    for _ in 0..3 {
        let (floor, vs_half) = scale_by_pow10(u64::from(m), e, 7 - exp10)?;
        if floor >= TEN_TO_8 {
            exp10 += 1;
            continue;
        }
        if floor < TEN_TO_7 {
            exp10 -= 1;
            continue;
        }
        let up = match vs_half {
            Ordering::Greater => true,
            Ordering::Equal => floor & 1 == 1,
            Ordering::Less => false,
        };
        let q = floor + u64::from(up);
        return Some(if q == TEN_TO_8 {
            EightDigits { q: TEN_TO_7 as u32, exp10: exp10 + 1 }
        } else {
            EightDigits { q: q as u32, exp10 }
        });
    }
    None
}

/// `%.8g` digits from the shortest round-trip digits of a float64 (see the module docs for why
/// this equals rounding the exact value); `None` for the one undecidable case.
fn printf_g8_digits_from_shortest(d: Digits) -> Option<EightDigits> {
    if d.len <= 8 {
        let q = d.digits * 10u64.pow((8 - d.len) as u32);
        return Some(EightDigits { q: u32::try_from(q).ok()?, exp10: d.exp10 });
    }
    let unit = 10u64.checked_pow((d.len - 8) as u32)?;
    let (floor, rest) = (d.digits / unit, d.digits % unit);
    let half = unit / 2;
    let up = match rest.cmp(&half) {
        core::cmp::Ordering::Greater => true,
        core::cmp::Ordering::Less => false,
        // D is the eight-digit midpoint itself: x may lie on either side of it.
        core::cmp::Ordering::Equal => return None,
    };
    let q = floor + u64::from(up);
    Some(if q == TEN_TO_8 {
        EightDigits { q: TEN_TO_7 as u32, exp10: d.exp10 + 1 }
    } else {
        EightDigits { q: u32::try_from(q).ok()?, exp10: d.exp10 }
    })
}

// ------------------------------------------------------------------------------------------------
// float32 and float64
// ------------------------------------------------------------------------------------------------

/// Where numpy's layout is positional: `1e-4 <= |x| < 10^P` (compared exactly in float64, as
/// [`format_code`] does).
fn positional(magnitude: f64, upper: f64) -> bool {
    (1e-4..upper).contains(&magnitude)
}

/// Writes the text of a float32; false (with whatever was written) where the exact code decides.
#[inline]
fn float32_into(out: &mut TextSink<'_>, bits: u32, style: NumberStyle) -> bool {
    let x = f32::from_bits(bits);
    let negative = bits >> 31 == 1;
    if !x.is_finite() || x == 0.0 {
        out.push_str(special_text(negative, x.is_nan(), x.is_infinite(), style));
        return true;
    }
    match style {
        NumberStyle::Spec | NumberStyle::Numpy => {
            let mut buffer = zmij::Buffer::new();
            let shortest = buffer.format_finite(x);
            let positional = positional(f64::from(x.abs()), 1e6);
            // Canonical for every positional float32 (the module docs).
            if positional {
                debug_assert!(is_canonical_positional(shortest), "{shortest}");
                out.push_str(shortest);
                return true;
            }
            let Some(d) = digits_of_text(shortest) else { return false };
            if negative {
                out.push_ascii(b'-');
            }
            write_shortest(out, d, positional);
        }
        NumberStyle::PrintfG8 => {
            let field = (bits >> 23) & 0xFF;
            let fraction = bits & 0x7F_FFFF;
            let (m, e) = if field == 0 { (fraction, -149) } else { (fraction | 0x80_0000, field as i32 - 150) };
            let Some(digits) = printf_g8_digits_f32(m, e) else { return false };
            if negative {
                out.push_ascii(b'-');
            }
            write_printf_g8(out, digits);
        }
    }
    true
}

/// Writes the text of a float64; false (with whatever was written) where the exact code decides.
#[inline]
fn float64_into(out: &mut TextSink<'_>, bits: u64, style: NumberStyle) -> bool {
    let x = f64::from_bits(bits);
    let negative = bits >> 63 == 1;
    if !x.is_finite() || x == 0.0 {
        out.push_str(special_text(negative, x.is_nan(), x.is_infinite(), style));
        return true;
    }
    let mut buffer = zmij::Buffer::new();
    let shortest = buffer.format_finite(x);
    let positional = positional(x.abs(), 1e16);
    if positional && style != NumberStyle::PrintfG8 && is_canonical_positional(shortest) {
        out.push_str(shortest);
        return true;
    }
    // The module docs' argument for n <= 8 needs a relative precision of 2^-53, which
    // subnormals do not have: the exact code writes those.
    if style == NumberStyle::PrintfG8 && !x.is_normal() {
        return false;
    }
    let Some(d) = digits_of_text(shortest) else { return false };
    let eight = match style {
        NumberStyle::Spec | NumberStyle::Numpy => None,
        NumberStyle::PrintfG8 => match printf_g8_digits_from_shortest(d) {
            Some(eight) => Some(eight),
            None => return false,
        },
    };
    if negative {
        out.push_ascii(b'-');
    }
    match eight {
        None => write_shortest(out, d, positional),
        Some(eight) => write_printf_g8(out, eight),
    }
    true
}

/// The decimal text of an integer (`negative` gives a leading `-`): digits from the right into a
/// stack buffer (21 bytes hold `-` and the 20 digits of `u64::MAX`), so a large column of
/// integers allocates nothing per element.
fn integer_text(negative: bool, mut magnitude: u64, buf: &mut [u8; 21]) -> &str {
    let mut start = buf.len();
    loop {
        start -= 1;
        buf[start] = b'0' + (magnitude % 10) as u8;
        magnitude /= 10;
        if magnitude == 0 {
            break;
        }
    }
    if negative {
        start -= 1;
        buf[start] = b'-';
    }
    // Only ASCII was written.
    core::str::from_utf8(&buf[start..]).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::integer_text;

    #[test]
    fn integers_in_decimal() {
        let cases = [
            (false, 0, "0"),
            (false, 7, "7"),
            (true, 7, "-7"),
            (false, 1_000_000, "1000000"),
            (true, 1 << 63, "-9223372036854775808"),
            (false, u64::MAX, "18446744073709551615"),
        ];
        for (negative, magnitude, written) in cases {
            assert_eq!(integer_text(negative, magnitude, &mut [0; 21]), written);
        }
    }

    use super::*;

    #[test]
    fn digits_are_read_back_from_any_layout() {
        let d = |t| digits_of_text(t).unwrap();
        assert_eq!(d("123.45"), Digits { digits: 12345, len: 5, exp10: 2 });
        assert_eq!(d("100.0"), Digits { digits: 1, len: 1, exp10: 2 });
        assert_eq!(d("0.00012"), Digits { digits: 12, len: 2, exp10: -4 });
        assert_eq!(d("1e-7"), Digits { digits: 1, len: 1, exp10: -7 });
        assert_eq!(d("4.5e+16"), Digits { digits: 45, len: 2, exp10: 16 });
        assert_eq!(d("134217800.0"), Digits { digits: 1342178, len: 7, exp10: 8 });
        assert_eq!(digits_of_text("0.0"), None);
        assert_eq!(digits_of_text("1x"), None);
    }

    #[test]
    fn canonical_positional_texts() {
        for yes in ["1.5", "-1.5", "0.001", "100.0", "0.5", "123456.75"] {
            assert!(is_canonical_positional(yes), "{yes}");
        }
        for no in ["1", "1.", ".5", "01.5", "1.50", "0.0", "1e5", "1.5e+05", "1..5", "-", "", "1.5x", "+1.5"] {
            assert!(!is_canonical_positional(no), "{no}");
        }
        // Every text of up to 5 bytes over a small alphabet, and longer ones across the 8-byte
        // word boundaries, against the rule spelled out part by part.
        let by_rule = |t: &str| {
            let s = t.strip_prefix('-').unwrap_or(t);
            let Some((int, fraction)) = s.split_once('.') else { return false };
            let digits = |p: &str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit());
            digits(int)
                && digits(fraction)
                && (int == "0" || !int.starts_with('0'))
                && (fraction == "0" || !fraction.ends_with('0'))
                && s != "0.0"
        };
        let alphabet = ["0", "1", "9", ".", "e", "-", "/", ":", "é"];
        let mut texts = vec![String::new()];
        for _ in 0..5 {
            let longer: Vec<String> =
                texts.iter().flat_map(|t| alphabet.iter().map(move |c| format!("{t}{c}"))).collect();
            texts.extend(longer);
            texts.dedup();
        }
        for prefix in ["", "-"] {
            for int_len in 1..25 {
                for fraction in ["0", "5", "50", "05", "1234567890123", "x", "", "1.2", "12345.0", "1234567e"] {
                    texts.push(format!("{prefix}{}.{fraction}", "7".repeat(int_len)));
                    texts.push(format!("{prefix}{}{}.{fraction}", "0", "7".repeat(int_len)));
                }
            }
        }
        for t in &texts {
            assert_eq!(is_canonical_positional(t), by_rule(t), "{t:?}");
        }
    }

    /// zmij's text of every float32 from `first` on, stepping by `step` patterns, within the
    /// positional range; the patterns whose text is not canonical.
    fn zmij_float32_not_canonical(first: u32, step: usize) -> Vec<u32> {
        (first..=u32::MAX)
            .step_by(step)
            .filter(|&bits| {
                let x = f32::from_bits(bits);
                x.is_finite() && positional(f64::from(x.abs()), 1e6) && {
                    let mut buffer = zmij::Buffer::new();
                    !is_canonical_positional(buffer.format_finite(x))
                }
            })
            .collect()
    }

    #[test]
    fn zmij_float32_positional_texts_are_canonical_sampled() {
        // A prime step, so the sample crosses every exponent and fraction pattern class.
        assert_eq!(zmij_float32_not_canonical(0, 4099), Vec::<u32>::new());
        // The ends of the range and the integers where the fraction is `.0`.
        for x in [1e-4f32, -1e-4, 999_999.94, -999_999.94, 1.0, 100.0, 65504.0, 0.1, 0.3, 123_456.79] {
            let mut buffer = zmij::Buffer::new();
            assert!(is_canonical_positional(buffer.format_finite(x)), "{x}");
        }
    }

    #[test]
    #[ignore = "every float32 pattern: about a minute in release (cargo test --release --lib -- --ignored zmij_float32)"]
    fn zmij_float32_positional_texts_are_canonical_exhaustive() {
        assert_eq!(zmij_float32_not_canonical(0, 1), Vec::<u32>::new());
    }

    #[test]
    fn wide_products_shift_exactly() {
        // 2^200 + 3 * 2^99 shifted by 100: 2^100 + 1, remainder 2^99 = exactly half.
        let high = 1u128 << 72;
        let low = 3u128 << 99;
        assert_eq!(shift_right_rounding(high, low, 100), None); // 2^100 + 1 does not fit 64 bits
        assert_eq!(shift_right_rounding(0, (1 << 70) | (1 << 9), 10), Some((1 << 60, core::cmp::Ordering::Equal)));
        assert_eq!(shift_right_rounding(1, 1, 129), Some((0, core::cmp::Ordering::Greater)));
        assert_eq!(shift_right_rounding(1 << 10, 0, 130), Some((1 << 8, core::cmp::Ordering::Less)));
        assert_eq!(widening_mul(u64::MAX, u128::MAX), (u128::from(u64::MAX) - 1, u128::MAX - u128::from(u64::MAX) + 1));
    }

    #[test]
    fn printf_g8_of_float32_examples() {
        let g = |x: f32| {
            let mut one = Texts::new();
            one.push_with(|sink| if float32_into(sink, x.to_bits(), NumberStyle::PrintfG8) { Ok(()) } else { Err(()) })
                .unwrap();
            one.joined().to_owned()
        };
        // Exact ties go to the even digit: 1234567.25 and 1234567.75.
        assert_eq!(g(4_938_269.0 / 4.0), "1234567.2");
        assert_eq!(g(4_938_271.0 / 4.0), "1234567.8");
        assert_eq!(g(99999999.0), "1e+08");
        assert_eq!(g(f32::from_bits(1)), "1.4012985e-45");
        assert_eq!(g(f32::MAX), "3.4028235e+38");
        assert_eq!(g(0.3), "0.30000001");
        assert_eq!(g(100.0), "100");
    }
}
