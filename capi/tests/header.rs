//! The committed header is the one cbindgen generates from the sources (build.rs writes it into
//! OUT_DIR). After changing the C ABI: `LOWBIT_BLESS=1 cargo test -p lowbit-capi --test header`.

#[test]
fn committed_header_is_generated_one() {
    let generated = include_str!(concat!(env!("OUT_DIR"), "/lowbit.h"));
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../include/lowbit.h");
    if std::env::var_os("LOWBIT_BLESS").is_some() {
        std::fs::write(path, generated).expect("include/lowbit.h is writable");
    }
    let committed = std::fs::read_to_string(path).expect("include/lowbit.h exists");
    assert!(
        committed == generated,
        "include/lowbit.h differs from what cbindgen generates from capi/src; \
         run LOWBIT_BLESS=1 cargo test -p lowbit-capi --test header and commit it"
    );
}
