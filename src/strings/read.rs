//! Text -> number under each profile's grammar (spec, Python, strtod).

use super::*;
use crate::alloc_prelude::*;

/// The exact value of a decimal text in the `spec` grammar (the same numbers, NaN and infinity
/// spellings [`parse_to_code`] reads): for rounding it into a format that is not an ONNX dtype.
pub fn parse_exact_value(text: &str) -> Result<Value> {
    parse_spec_number(text).map(|n| n.value()).map_err(|why| Error::ParseString {
        text: shorten(text),
        dtype: "a described format",
        why,
    })
}

/// One string to an element code of `dtype` (numeric dtypes and BOOL). `opts` gives saturate
/// and round_mode for float8 and E8M0 targets, and the policy that narrows the float64 (Python)
/// or float32 (strtod) reading to the target. Errors name the problem and quote the text.
///
/// ```
/// use lowbit::profile::StringGrammar;
/// use lowbit::strings::parse_to_code;
/// use lowbit::{CastOptions, DType};
///
/// let opts = CastOptions::default();
/// // 3.14 = 1.57 * 2^1: exponent 1 + 15 = 16 -> 0x4000; fraction 0.57 * 1024 = 583.68 -> 584
/// // = 0x248.
/// assert_eq!(parse_to_code("3.14", DType::Float16, StringGrammar::Spec, &opts)?, 0x4248);
/// // Integers: truncated toward zero, as the Cast text says ("100.5" -> 100).
/// assert_eq!(parse_to_code(" -100.5 ", DType::Int8, StringGrammar::Spec, &opts)?, 0x9C); // -100
/// assert!(parse_to_code("1e3", DType::Int8, StringGrammar::Spec, &opts).is_err()); // past 127
/// assert!(parse_to_code("three", DType::Float, StringGrammar::Spec, &opts).is_err());
/// # Ok::<(), lowbit::Error>(())
/// ```
pub fn parse_to_code(text: &str, dtype: DType, grammar: StringGrammar, opts: &CastOptions) -> Result<u64> {
    let fail = |why: String| Error::ParseString { text: shorten(text), dtype: dtype.onnx_name(), why };
    match dtype.kind() {
        Kind::Float(format) => match grammar {
            StringGrammar::Spec => {
                let n = parse_spec_number(text).map_err(fail)?;
                Ok(round::encode(format, n.value(), opts.rounding_for(format)))
            }
            StringGrammar::Python => {
                let bits = python_float(text).map_err(fail)?;
                convert::convert_code(DType::Double, dtype, bits, opts)
            }
            StringGrammar::Strtod => {
                let bits = strtod(text).map_err(fail)?;
                strtod_to_float(bits, dtype, opts)
            }
        },
        Kind::Integer { bits, signed } => match grammar {
            StringGrammar::Spec => spec_integer(text, bits, signed).map_err(fail),
            StringGrammar::Python => python_integer(text, bits, signed).map_err(fail),
            StringGrammar::Strtod if bits <= 4 => {
                let bits64 = strtod(text).map_err(fail)?;
                strtod_bits_to_small_integer(bits64, dtype, opts)
            }
            StringGrammar::Strtod => {
                // std::stoll for signed targets, std::stoull for unsigned ones, then
                // gsl::narrow_cast (the low bits).
                let v = c_strtoint(text, !signed).map_err(fail)?;
                Ok(v & dtype.code_mask())
            }
        },
        Kind::Bool => match grammar {
            StringGrammar::Spec => spec_bool(text).map(u64::from).map_err(fail),
            // numpy: a non-empty string is true. numpy's fixed-width strings cannot end in NUL
            // characters (they are padding), so trailing NULs do not count.
            StringGrammar::Python => Ok(u64::from(!text.trim_end_matches('\0').is_empty())),
            StringGrammar::Strtod => c_strtoint(text, true).map(|v| u64::from(v != 0)).map_err(fail),
        },
        _ => Err(Error::UnsupportedDType {
            op: "Cast from STRING",
            dtype: dtype.onnx_name(),
            why: "only numeric types and BOOL are read from text",
        }),
    }
}

/// onnxruntime's int4/uint4/int2/uint2 from the `std::stod` result `bits64`: narrowed to float,
/// `std::roundf` (half away from zero), `static_cast<int>` (NaN, Inf and |x| >= 2^31 give INT_MIN,
/// whose low bits are 0), then the low bits.
pub(super) fn strtod_bits_to_small_integer(bits64: u64, dtype: DType, opts: &CastOptions) -> Result<u64> {
    let f32_bits = convert::convert_code(DType::Double, DType::Float, bits64, opts)?;
    let x = crate::fmath::round(f32::from_bits(f32_bits as u32));
    let i = if x.is_finite() && x.abs() < 2_147_483_648.0 { x as i64 } else { 0 };
    Ok((i as u64) & dtype.code_mask())
}

/// The text for an error message: long texts are cut.
pub(super) fn shorten(text: &str) -> String {
    pub(super) const KEEP: usize = 64;
    if text.chars().count() <= KEEP {
        text.to_string()
    } else {
        let mut s: String = text.chars().take(KEEP - 4).collect();
        s.push_str("...");
        s
    }
}

pub(super) fn integer_code(i: i128, bits: u32) -> u64 {
    let mask = if bits >= 64 { u64::MAX } else { (1u64 << bits) - 1 };
    (i as u64) & mask
}

/// Profile row `strings.grammar`, `spec`, into integers: a decimal (fraction and exponent
/// allowed) truncated toward zero.
pub(super) fn spec_integer(text: &str, bits: u32, signed: bool) -> core::result::Result<u64, String> {
    let (lo, hi) = crate::dtype::integer_bounds(bits, signed);
    let out_of_range = || format!("out of the range {lo} to {hi}");
    match parse_spec_number(text)? {
        Number::Nan { .. } => Err("NaN is not an integer".to_string()),
        Number::Infinite { .. } => Err(out_of_range()),
        Number::Decimal(d) => match d.truncated() {
            Some(i) if (lo..=hi).contains(&i) => Ok(integer_code(i, bits)),
            _ => Err(out_of_range()),
        },
    }
}

/// Profile row `strings.grammar`, `spec`, into BOOL: `true`/`false` in any case, or a number
/// (nonzero is true; NaN is true, as `x != 0` of profile field `float8_to_bool`).
pub(super) fn spec_bool(text: &str) -> core::result::Result<bool, String> {
    let word = text.trim_matches(|c: char| c.is_ascii() && is_c_space(c as u8));
    if word.eq_ignore_ascii_case("true") {
        return Ok(true);
    }
    if word.eq_ignore_ascii_case("false") {
        return Ok(false);
    }
    match parse_spec_number(text) {
        Ok(Number::Decimal(d)) => Ok(!d.exact().is_zero()),
        Ok(_) => Ok(true),
        Err(why) => Err(format!("neither true, false nor a number ({why})")),
    }
}

// ---- Python --------------------------------------------------------------------------------------

/// The first code point of each run of ten Unicode decimal digits (general category Nd), digit 0
/// first. Derived from the Unicode Character Database 15.0 (the Python 3.12 and 3.13 versions):
/// Python's `float()` and `int()` read every one of these as its digit.
pub(super) const UNICODE_DIGIT_ZEROS: [u32; 68] = [
    0x30, 0x660, 0x6F0, 0x7C0, 0x966, 0x9E6, 0xA66, 0xAE6, 0xB66, 0xBE6, 0xC66, 0xCE6, 0xD66, 0xDE6, 0xE50, 0xED0,
    0xF20, 0x1040, 0x1090, 0x17E0, 0x1810, 0x1946, 0x19D0, 0x1A80, 0x1A90, 0x1B50, 0x1BB0, 0x1C40, 0x1C50, 0xA620,
    0xA8D0, 0xA900, 0xA9D0, 0xA9F0, 0xAA50, 0xABF0, 0xFF10, 0x104A0, 0x10D30, 0x11066, 0x110F0, 0x11136, 0x111D0,
    0x112F0, 0x11450, 0x114D0, 0x11650, 0x116C0, 0x11730, 0x118E0, 0x11950, 0x11C50, 0x11D50, 0x11DA0, 0x11F50,
    0x16A60, 0x16AC0, 0x16B50, 0x1D7CE, 0x1D7D8, 0x1D7E2, 0x1D7EC, 0x1D7F6, 0x1E140, 0x1E2F0, 0x1E4F0, 0x1E950,
    0x1FBF0,
];

/// The value of a Unicode decimal digit.
pub(super) fn unicode_digit(c: char) -> Option<u8> {
    let c = u32::from(c);
    let run = UNICODE_DIGIT_ZEROS.partition_point(|&zero| zero <= c).checked_sub(1)?;
    let d = c - UNICODE_DIGIT_ZEROS[run];
    (d < 10).then_some(d as u8)
}

/// Text as Python's `float()` and `int()` see it: trailing NULs dropped (numpy storage), every
/// non-ASCII whitespace character a space and every Unicode decimal digit its ASCII digit
/// (CPython's `_PyUnicode_TransformDecimalAndSpaceToASCII`), underscores checked (each one
/// between two digits) and removed, surrounding whitespace stripped. Returns the ASCII text and,
/// for each of its bytes, the byte of `text` it came from (for error positions).
pub(super) fn python_normalize(text: &str) -> core::result::Result<(Vec<u8>, Vec<usize>), String> {
    let text = text.trim_end_matches('\0');
    let mut mapped: Vec<(u8, usize)> = Vec::with_capacity(text.len());
    for (i, c) in text.char_indices() {
        let b = if c.is_ascii() {
            c as u8
        } else if c.is_whitespace() {
            b' '
        } else if let Some(d) = unicode_digit(c) {
            b'0' + d
        } else {
            return Err(unexpected(text, i));
        };
        mapped.push((b, i));
    }
    let mut out: Vec<(u8, usize)> = Vec::with_capacity(mapped.len());
    for (k, &(b, i)) in mapped.iter().enumerate() {
        if b == b'_' {
            let before = k > 0 && mapped[k - 1].0.is_ascii_digit();
            let after = mapped.get(k + 1).is_some_and(|(n, _)| n.is_ascii_digit());
            if !(before && after) {
                return Err(format!("misplaced underscore at byte {i}"));
            }
        } else {
            out.push((b, i));
        }
    }
    let first = out.iter().position(|(b, _)| !is_c_space(*b)).unwrap_or(out.len());
    let last = out.iter().rposition(|(b, _)| !is_c_space(*b)).map_or(first, |p| p + 1);
    let kept = &out[first..last];
    if kept.is_empty() {
        return Err(if text.is_empty() { "empty string" } else { "only whitespace" }.to_string());
    }
    Ok((kept.iter().map(|(b, _)| *b).collect(), kept.iter().map(|(_, i)| *i).collect()))
}

/// Python's `float(text)` as float64 bits (correctly rounded; `1e400` is inf, `1e-400` is 0).
pub(super) fn python_float(text: &str) -> core::result::Result<u64, String> {
    let (s, origin) = python_normalize(text)?;
    let at = |i: usize| origin.get(i).copied().unwrap_or(text.len());
    match scan_number(&s, 0) {
        Some((n, end)) if end == s.len() => Ok(round::encode(&F64, n.value(), RoundingOptions::IEEE)),
        Some((_, end)) => Err(format!("Python float() rejects it: {}", unexpected(text, at(end)))),
        None => Err(format!("Python float() rejects it: {}", unexpected(text, at(0)))),
    }
}

/// CPython's limit on the digits of a decimal integer string (`sys.int_info.default_max_str_digits`).
pub(super) const PYTHON_MAX_STR_DIGITS: usize = 4300;

/// Python's `int(text)` (base 10), then numpy's range check for the target.
pub(super) fn python_integer(text: &str, bits: u32, signed: bool) -> core::result::Result<u64, String> {
    let (s, origin) = python_normalize(text)?;
    let (negative, start) = scan_sign(&s, 0);
    let digits = &s[start..];
    if let Some(bad) = digits.iter().position(|b| !b.is_ascii_digit()) {
        let i = origin.get(start + bad).copied().unwrap_or(text.len());
        return Err(format!("Python int() rejects it: {}", unexpected(text, i)));
    }
    if digits.is_empty() {
        return Err("Python int() rejects it: no digits".to_string());
    }
    if digits.len() > PYTHON_MAX_STR_DIGITS {
        return Err(format!("Python int() rejects more than {PYTHON_MAX_STR_DIGITS} digits"));
    }
    let (lo, hi) = crate::dtype::integer_bounds(bits, signed);
    let significant = digits.iter().position(|&b| b != b'0').map_or(&digits[digits.len()..], |p| &digits[p..]);
    let value = if significant.len() > 30 {
        None
    } else {
        // At most 30 ASCII digits: fits i128.
        let m = significant.iter().fold(0i128, |acc, &b| acc * 10 + i128::from(b - b'0'));
        Some(if negative { -m } else { m })
    };
    match value {
        Some(i) if (lo..=hi).contains(&i) => Ok(integer_code(i, bits)),
        _ => Err(numpy_overflow(value, bits, signed)),
    }
}

/// What numpy raises when it stores the Python integer `value` (`None`: beyond 30 digits) into an
/// integer array of `bits` and `signed` it cannot hold (`astype` of an object array of texts,
/// which the onnx reference's Cast runs). numpy first reads the integer as a C `long` (int64),
/// or for uint32 and uint64 as a `long` or an `unsigned long long`, so [-2^63, 2^64); outside
/// that: `OverflowError: Python int too large to convert to C long`. Inside it, but outside the
/// target's range: `OverflowError: Python integer V out of bounds for DTYPE`. (Observed with
/// numpy 2.4.6: "9223372036854775808" -> uint32 is out of bounds, -> uint16 too large for a C
/// long.)
pub(super) fn numpy_overflow(value: Option<i128>, bits: u32, signed: bool) -> String {
    let c_high = if !signed && bits >= 32 { 1i128 << 64 } else { 1i128 << 63 };
    let name = format!("{}int{bits}", if signed { "" } else { "u" });
    let raised = match value {
        Some(v) if (-(1i128 << 63)..c_high).contains(&v) => format!("Python integer {v} out of bounds for {name}"),
        _ => "Python int too large to convert to C long".to_string(),
    };
    format!("numpy raises OverflowError: {raised}")
}

// ---- strtod / stoll / stoull -------------------------------------------------------------------

/// `std::stod(text)` (glibc `strtod` in the C locale) as float64 bits. Leading whitespace is
/// skipped and the longest valid prefix read; what follows is ignored. Errors: no number at the
/// start (`std::invalid_argument`) and `ERANGE` (`std::out_of_range`).
///
/// `ERANGE` is glibc's rule: a finite input whose rounded result is infinite, or a nonzero input
/// that is tiny and inexact. glibc judges tininess after rounding to 53 bits with an unbounded
/// exponent (x86): tiny means below DBL_MIN - 2^-1076, the midpoint between DBL_MIN and the
/// next smaller 53-bit number. So `1e400`, `-1e400`, `1e-400` are errors, so is every decimal
/// that lands among the subnormals (or zero), except the rare one that equals a subnormal exactly
/// (`0x1p-1074`, or the 751-digit decimal of 2^-1074), and so is `2.2250738585072012e-308`,
/// which rounds to DBL_MIN itself.
pub(super) fn strtod(text: &str) -> core::result::Result<u64, String> {
    pub(super) const NO_NUMBER: &str = "no number at the start (std::stod throws std::invalid_argument)";
    let s = text.as_bytes();
    let start = s.iter().position(|b| !is_c_space(*b)).unwrap_or(s.len());
    let (negative, i) = scan_sign(s, start);
    let sign_bit = if negative { 1u64 << 63 } else { 0 };
    if starts_with_ignore_case(s, i, "inf") {
        return Ok(sign_bit | 0x7FF0_0000_0000_0000);
    }
    if starts_with_ignore_case(s, i, "nan") {
        let payload = strtod_nan_payload(s, i + 3)?;
        return Ok(sign_bit | 0x7FF8_0000_0000_0000 | payload);
    }
    let hex = s.get(i) == Some(&b'0')
        && matches!(s.get(i + 1), Some(b'x' | b'X'))
        && (s.get(i + 2).is_some_and(u8::is_ascii_hexdigit)
            || (s.get(i + 2) == Some(&b'.') && s.get(i + 3).is_some_and(u8::is_ascii_hexdigit)));
    let exact = if hex {
        let m = scan_mantissa(s, i + 2, true).ok_or_else(|| NO_NUMBER.to_string())?;
        let (exponent, _) = scan_exponent(s, m.end, b'p').unwrap_or((0, m.end));
        binary_to_exact(negative, m.number(16), exponent.saturating_add(4 * m.scale), m.tail)
    } else {
        let m = scan_mantissa(s, i, false).ok_or_else(|| NO_NUMBER.to_string())?;
        let (exponent, _) = scan_exponent(s, m.end, b'e').unwrap_or((0, m.end));
        decimal_to_exact(negative, &m.number(10), m.digits.len() as i64, m.scale + exponent, m.tail)
    };
    let bits = round::encode(&F64, Value::Finite(exact), RoundingOptions::IEEE);
    let magnitude = bits & !(1 << 63);
    if magnitude == 0x7FF0_0000_0000_0000 {
        return Err("out of the range of double (strtod sets ERANGE; std::stod throws std::out_of_range)".into());
    }
    if !exact.is_zero() && below_glibc_tininess(&exact) && !same_value(&exact, &F64.decode(bits)) {
        return Err("too small for a normal double (strtod sets ERANGE; std::stod throws std::out_of_range)".into());
    }
    Ok(bits)
}

/// Whether |x| < DBL_MIN - 2^-1076 = (2^54 - 1) * 2^-1076. A sticky `x` has a 64-bit
/// significand, so its sticky part cannot cross that 54-bit boundary.
pub(super) fn below_glibc_tininess(x: &Exact) -> bool {
    let bound = BigUint::from((1u64 << 54) - 1);
    cmp_binary(x.significand, x.exponent, &bound, -1076) == Ordering::Less
}

/// Compares `a * 2^ea` with `b * 2^eb` exactly.
pub(super) fn cmp_binary(a: u64, ea: i32, b: &BigUint, eb: i32) -> Ordering {
    let low = ea.min(eb);
    let lhs = BigUint::from(a).shl((ea - low) as u64);
    let rhs = b.shl((eb - low) as u64);
    lhs.cmp(&rhs)
}

/// Whether an `Exact` (possibly sticky) equals a decoded finite value.
pub(super) fn same_value(x: &Exact, v: &Value) -> bool {
    let Value::Finite(y) = v else { return false };
    if x.sticky {
        return false;
    }
    let norm = |e: &Exact| {
        if e.significand == 0 {
            (0, 0)
        } else {
            let tz = e.significand.trailing_zeros();
            (e.significand >> tz, i64::from(e.exponent) + i64::from(tz))
        }
    };
    norm(x) == norm(y)
}

/// glibc's `nan(n-char-sequence)`: the sequence `[0-9A-Za-z_]*` in parentheses, read by
/// `strtoull(seq, &end, 0)`; if that reads all of it, its low 51 bits are the payload under the
/// quiet bit. Without the closing parenthesis only `nan` is read (and the rest ignored). An
/// overflowing number sets `ERANGE`, which `std::stod` reports.
pub(super) fn strtod_nan_payload(s: &[u8], i: usize) -> core::result::Result<u64, String> {
    if s.get(i) != Some(&b'(') {
        return Ok(0);
    }
    let seq_start = i + 1;
    let seq_len = s[seq_start..].iter().take_while(|b| b.is_ascii_alphanumeric() || **b == b'_').count();
    if s.get(seq_start + seq_len) != Some(&b')') {
        return Ok(0);
    }
    let seq = &s[seq_start..seq_start + seq_len];
    let (radix, digits) = if seq.len() > 2 && seq[0] == b'0' && (seq[1] | 0x20) == b'x' {
        (16, &seq[2..])
    } else if seq.len() > 1 && seq[0] == b'0' {
        (8, &seq[1..])
    } else {
        (10, seq)
    };
    let mut value: u128 = 0;
    for &b in digits {
        let Some(d) = (b as char).to_digit(radix) else { return Ok(0) };
        value = (value * u128::from(radix) + u128::from(d)).min(1 << 70);
    }
    if value > u128::from(u64::MAX) {
        return Err("NaN payload overflows (strtoull sets ERANGE; std::stod throws std::out_of_range)".into());
    }
    Ok((value as u64) & ((1 << 51) - 1))
}

/// `std::stoll` (signed) or `std::stoull` (unsigned) in base 10, as 64 bits: leading whitespace,
/// an optional sign, digits up to the first non-digit. `stoull` negates a `-` number modulo 2^64.
pub(super) fn c_strtoint(text: &str, unsigned: bool) -> core::result::Result<u64, String> {
    let name = if unsigned { "std::stoull" } else { "std::stoll" };
    let s = text.as_bytes();
    let start = s.iter().position(|b| !is_c_space(*b)).unwrap_or(s.len());
    let (negative, i) = scan_sign(s, start);
    let digits = s[i..].iter().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 {
        return Err(format!("no digits at the start ({name} throws std::invalid_argument)"));
    }
    let magnitude = s[i..i + digits].iter().fold(0u128, |acc, &b| (acc * 10 + u128::from(b - b'0')).min(1 << 70));
    let erange = || {
        format!(
            "out of the range of {} ({name} throws std::out_of_range)",
            if unsigned { "unsigned long long" } else { "long long" }
        )
    };
    if unsigned {
        let m = u64::try_from(magnitude).map_err(|_| erange())?;
        Ok(if negative { m.wrapping_neg() } else { m })
    } else if negative {
        if magnitude > 1 << 63 {
            return Err(erange());
        }
        Ok((magnitude as u64).wrapping_neg())
    } else {
        if magnitude >= 1 << 63 {
            return Err(erange());
        }
        Ok(magnitude as u64)
    }
}

/// onnxruntime's float targets from a `std::stod` result: DOUBLE keeps it; everything else is
/// `static_cast<float>` first, then the float32 -> target conversion of `opts`' policy (float8
/// honours saturate there). bfloat16's `BFloat16(float)` constructor, which the string path uses,
/// writes every NaN as 0x7FC1, sign dropped (docs/research/onnx_cast.md §5; observed with
/// scripts/crosscheck_cast.py: "-nan" -> 0x7FC1).
pub(super) fn strtod_to_float(bits: u64, dtype: DType, opts: &CastOptions) -> Result<u64> {
    if dtype == DType::Double {
        return Ok(bits);
    }
    let f32_bits = convert::convert_code(DType::Double, DType::Float, bits, opts)?;
    if dtype == DType::Float {
        return Ok(f32_bits);
    }
    if dtype == DType::Bfloat16 && f32::from_bits(f32_bits as u32).is_nan() {
        return Ok(0x7FC1);
    }
    convert::convert_code(DType::Float, dtype, f32_bits, opts)
}
