//! The checks of the `strings` fuzz target, shared with `tests/fuzz_seeds.rs` (which replays the
//! committed seeds on a stable toolchain).
//!
//! Hostile text into `strings::parse_to_code`, and the `spec` round trip through `format_code`.
//!
//! Input: one control byte, then the text's bytes. Control bits: 0 = lossy UTF-8 (else only valid
//! UTF-8 is used; invalid input is skipped), 1 = saturate, 2-3 = round_mode, 4-5 = profile.
//!
//! Asserts, for every numeric dtype, BOOL, and every `StringGrammar`:
//! * `parse_to_code` returns `Ok` or `Err`, never panics, and an `Ok` code fits the dtype;
//! * every `NumberStyle` formats that code without error;
//! * under `StringGrammar::Spec`, formatting the code with `NumberStyle::Spec` and parsing the text
//!   back gives the same code (any NaN for a NaN). The read-back uses the original `saturate`; for
//!   FLOAT8E8M0 it uses `round_mode` nearest, because `NumberStyle::Spec` writes the shortest digits
//!   that read back to nearest, not up or down (2^-127 is written `6e-39`, which is above it, so
//!   round_mode up reads it back as 2^-126).
//! * the other dtypes (STRING, complex, UNDEFINED) are an `Err`;
//! * the fast paths agree with the exact code: `TextReader::code` gives what `parse_to_code` gives
//!   (value or error), and `TextWriter` writes the parsed code as `format_code` does.

use lowbit::profile::NumberStyle;
use lowbit::profile::StringGrammar;
use lowbit::strings::{format_code, parse_to_code, TextReader, TextWriter};
use lowbit::DType;
use lowbit::Kind;
use lowbit::Profile;
use lowbit::Value;
use lowbit::{decode_element, CastOptions, Element, RoundMode};

const GRAMMARS: [StringGrammar; 3] = [StringGrammar::Spec, StringGrammar::Python, StringGrammar::Strtod];
const STYLES: [NumberStyle; 3] = [NumberStyle::Spec, NumberStyle::Numpy, NumberStyle::PrintfG8];

fn is_nan(dtype: DType, code: u64) -> bool {
    matches!(decode_element(dtype, code), Ok(Element::Float(Value::Nan { .. })))
}

fn check(text: &str, opts: &CastOptions) {
    for dtype in DType::ALL {
        let numeric = matches!(dtype.kind(), Kind::Float(_) | Kind::Integer { .. } | Kind::Bool);
        for grammar in GRAMMARS {
            let parsed = parse_to_code(text, dtype, grammar, opts);
            let fast = TextReader::new(dtype, grammar, opts).code(text);
            assert_eq!(fast, parsed, "{text:?} -> {dtype} under {grammar:?} ({opts:?}): fast reader differs");
            let code = match parsed {
                Ok(code) => code,
                Err(_) => continue,
            };
            assert!(numeric, "{dtype} parsed {text:?} under {grammar:?} as {code:#x}");
            let limit = if dtype == DType::Bool { 1 } else { dtype.code_mask() };
            assert!(code <= limit, "{text:?} -> {dtype} under {grammar:?}: code {code:#x} does not fit");
            for style in STYLES {
                let exact = format_code(dtype, code, style)
                    .unwrap_or_else(|e| panic!("format_code({dtype}, {code:#x}, {style:?}) failed: {e}"));
                let tensor = lowbit::Tensor::from_codes(dtype, vec![1], &[code]).expect("a numeric dtype");
                let raw = tensor.raw().expect("raw data");
                let fast = TextWriter::new(dtype, style, 1).and_then(|w| w.texts(raw, 1)).map(|texts| texts.to_vec());
                assert_eq!(fast, Ok(vec![exact]), "{dtype} {code:#x} in {style:?}: fast writer differs");
            }
            if grammar != StringGrammar::Spec {
                continue;
            }
            let written = format_code(dtype, code, NumberStyle::Spec).expect("checked above");
            let back_opts = if dtype == DType::Float8E8M0 {
                CastOptions { round_mode: RoundMode::Nearest, ..*opts }
            } else {
                *opts
            };
            let back = parse_to_code(&written, dtype, StringGrammar::Spec, &back_opts).unwrap_or_else(|e| {
                panic!("{text:?} -> {dtype} {code:#x} -> {written:?} does not parse back under spec: {e}")
            });
            let same = back == code || (is_nan(dtype, code) && is_nan(dtype, back));
            assert!(same, "{text:?} -> {dtype} {code:#x} -> {written:?} -> {back:#x} ({opts:?})");
        }
    }
}

/// One fuzz input: a control byte, then the text.
pub fn run(data: &[u8]) {
    let Some((&control, bytes)) = data.split_first() else { return };
    let text = if control & 1 == 1 {
        String::from_utf8_lossy(bytes).into_owned()
    } else {
        match std::str::from_utf8(bytes) {
            Ok(s) => s.to_owned(),
            Err(_) => return,
        }
    };
    let round_mode = [RoundMode::Up, RoundMode::Down, RoundMode::Nearest, RoundMode::Up][usize::from(control >> 2 & 3)];
    let opts =
        CastOptions { saturate: control & 2 != 0, round_mode, profile: Profile::ALL[usize::from(control >> 4 & 3)] };
    check(&text, &opts);
}
