//! Hostile bytes into the checkpoint readers (safetensors and GGUF; the assertions are in
//! `fuzz/checks/checkpoint.rs`).

#![no_main]

#[path = "../checks/checkpoint.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::run(data));
