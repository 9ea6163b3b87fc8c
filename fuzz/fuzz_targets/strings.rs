//! Hostile text into `strings::parse_to_code`, and the `spec` round trip through `format_code`
//! (the input layout and the assertions are in `fuzz/checks/strings.rs`).

#![no_main]

#[path = "../checks/strings.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::run(data));
