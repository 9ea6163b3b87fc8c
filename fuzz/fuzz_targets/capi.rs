//! Hostile arguments into the C ABI's entry points (the input layout and the assertions are in
//! `fuzz/checks/capi.rs`).

#![no_main]

#[path = "../checks/capi.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::run(data));
