//! Generates the C header from this crate's `extern "C"` items into OUT_DIR; `tests/header.rs`
//! compares it with the committed `include/lowbit.h` (and rewrites that with LOWBIT_BLESS=1).

fn main() {
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=cbindgen.toml");
    let crate_dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let out_dir = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    let config = cbindgen::Config::from_file(format!("{crate_dir}/cbindgen.toml")).expect("capi/cbindgen.toml reads");
    cbindgen::Builder::new()
        .with_crate(&crate_dir)
        .with_config(config)
        .generate()
        .expect("cbindgen generates the header")
        .write_to_file(format!("{out_dir}/lowbit.h"));
}
