//! ONNX `Cast` to and from STRING, one element at a time (profile rows `strings.grammar` and
//! `strings.number_style`).
//!
//! Text is read with one of three grammars ([`StringGrammar`]) and numbers are written in one of
//! three styles ([`NumberStyle`](crate::profile::NumberStyle)): the `spec` profile's, the onnx reference's (Python and numpy)
//! and onnxruntime's (`strtod`/`stoll`/`stoull` and `%.8g`). Which one applies to which dtype is the
//! caller's decision (the profile table); every grammar and style works for every numeric dtype.
//!
//! Everything here is exact: a decimal string becomes an [`Exact`] through big-integer arithmetic
//! and meets the rounding core once, and every digit string written is derived from the exact
//! binary value of the code. Nothing goes through the host's float parsing or printing except
//! one speed-up: Rust's shortest `{:e}` output for float32 and float64 tells how many digits to
//! try first (the digits themselves are recomputed exactly from the code's value).

#[cfg(feature = "strings")]
use crate::convert::Element;
use crate::convert::{self, CastOptions};
use crate::dtype::{DType, Kind};
use crate::error::{Error, Result};
use crate::format::F64;
#[cfg(feature = "strings")]
use crate::format::{FloatFormat, NonFinite, F32};
use crate::profile::StringGrammar;
use crate::round::{self, RoundingOptions};
use crate::value::{Exact, Value, QUIET_NAN_PAYLOAD};
use core::cmp::Ordering;
mod bignum;

pub(crate) use bignum::BigUint;

mod exact;
#[cfg(feature = "strings")]
mod fast_format;
#[cfg(feature = "strings")]
mod fast_parse;
mod read;
mod scan;
#[cfg(feature = "strings")]
mod write;

pub(crate) use exact::binary_to_exact;
use exact::*;
#[cfg(feature = "strings")]
use read::*;
pub use read::{parse_exact_value, parse_to_code};
use scan::*;
#[cfg(feature = "strings")]
pub use write::{exact_decimal, format_code, value_to_exact_decimal};

#[cfg(feature = "strings")]
pub use fast_format::TextWriter;
#[cfg(feature = "strings")]
pub use fast_parse::TextReader;

#[cfg(test)]
mod tests {
    use super::write::printf_g;
    use super::*;

    fn spec_f32(text: &str) -> u64 {
        parse_to_code(text, DType::Float, StringGrammar::Spec, &CastOptions::default()).unwrap()
    }

    #[test]
    fn long_decimals_round_once() {
        // 1 + 3*2^-24 - 2^-60: just below a float32 midpoint.
        assert_eq!(spec_f32("1.00000017881393432530451326201159645279"), 0x3F80_0001);
        // The midpoint itself ties to even; one more digit far down breaks the tie upward.
        assert_eq!(spec_f32("1.000000178813934326171875"), 0x3F80_0002);
        let mut above = "1.000000059604644775390625".to_string();
        assert_eq!(spec_f32(&above), 0x3F80_0000);
        above.push_str(&"0".repeat(1000));
        above.push('1');
        assert_eq!(spec_f32(&above), 0x3F80_0001);
    }

    #[test]
    fn exponent_clamps() {
        assert_eq!(spec_f32("1e999999999999999999999"), 0x7F80_0000);
        assert_eq!(spec_f32("-1e-999999999999999999999"), 0x8000_0000);
        assert_eq!(spec_f32("0e999999999999"), 0);
        assert_eq!(spec_f32(&format!("0.{}1e1000", "0".repeat(999))), 0x3F80_0000);
    }

    #[test]
    fn printf_g_edges() {
        let g = |x: f64| match Value::from_f64(x) {
            Value::Finite(e) => printf_g(&e, 8),
            _ => unreachable!(),
        };
        assert_eq!(g(99999999.5), "1e+08");
        assert_eq!(g(0.0001), "0.0001");
        assert_eq!(g(0.00001), "1e-05");
        assert_eq!(g(2097152.25), "2097152.2");
        assert_eq!(g(1.5), "1.5");
        assert_eq!(g(12345678.0), "12345678");
    }

    #[test]
    fn unicode_digit_table() {
        assert_eq!(unicode_digit('\u{663}'), Some(3));
        assert_eq!(unicode_digit('\u{FF19}'), Some(9));
        assert_eq!(unicode_digit('\u{1D7FF}'), Some(9));
        assert_eq!(unicode_digit('\u{66A}'), None);
        assert!(UNICODE_DIGIT_ZEROS.windows(2).all(|w| w[0] + 10 <= w[1]));
    }
}
