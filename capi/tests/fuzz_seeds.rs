//! The `capi` fuzz target's checks (fuzz/checks/capi.rs) on its committed seeds (fuzz/seeds/capi),
//! on a stable toolchain without cargo-fuzz.

#[path = "../../fuzz/checks/capi.rs"]
mod check;

#[test]
fn committed_seeds_pass_the_fuzz_checks() {
    let folder = concat!(env!("CARGO_MANIFEST_DIR"), "/../fuzz/seeds/capi");
    let mut count = 0;
    for entry in std::fs::read_dir(folder).expect("fuzz/seeds/capi exists") {
        let path = entry.expect("a readable folder").path();
        check::run(&std::fs::read(&path).expect("a readable seed"));
        count += 1;
    }
    assert!(count >= 6, "only {count} seeds");
}
