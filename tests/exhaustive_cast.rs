//! Every bit pattern of every numeric dtype of 16 bits or fewer, cast into every numeric dtype of
//! 16 bits or fewer, saturate on and off (and every E8M0 round_mode), against the independent
//! oracle under `spec`.

#[path = "support/harness.rs"]
mod harness;
#[path = "support/oracle.rs"]
mod oracle;

use harness::{all_codes, option_sets, oracle_cast};
use lowbit::{convert_code, CastOptions};
use lowbit::{DType, Kind};
use oracle::OMode;
use rayon::prelude::*;

/// Every numeric dtype (bool included) of 16 bits or fewer, derived so a new dtype joins by itself.
fn small() -> Vec<DType> {
    DType::ALL
        .into_iter()
        .filter(|d| matches!(d.kind(), Kind::Float(_) | Kind::Integer { .. } | Kind::Bool))
        .filter(|d| d.bits().is_some_and(|b| b <= 16))
        .collect()
}

#[test]
fn every_small_source_into_every_small_target() {
    let (sources, targets) = (small(), small());
    assert_eq!(
        sources.len(),
        19,
        "float16, bfloat16, int16, uint16, 5 float8, int8, uint8, bool, 2 float6, float4, 4 packed ints"
    );
    let pairs: Vec<(DType, DType)> =
        sources.iter().flat_map(|&f| targets.iter().filter(move |&&t| t != f).map(move |&t| (f, t))).collect();
    let checked: u64 = pairs
        .par_iter()
        .map(|&(from, to)| {
            let mut n = 0u64;
            for (opts, mode) in option_sets(to) {
                for code in all_codes(from) {
                    let Some(want) = oracle_cast(from, to, code, &opts, mode) else { continue };
                    let got = convert_code(from, to, code, &opts).unwrap();
                    assert_eq!(
                        got, want,
                        "{from} {code:#x} -> {to} saturate={} round_mode={:?}: lowbit {got:#x}, oracle {want:#x}",
                        opts.saturate, opts.round_mode
                    );
                    n += 1;
                }
            }
            n
        })
        .sum();
    assert!(checked > 10_000_000, "{checked}");
}

/// The same sources into float32 and float64: exact widenings (NaN payloads aside).
#[test]
fn every_small_source_widens_exactly() {
    for from in small() {
        for to in [DType::Float, DType::Double] {
            for code in all_codes(from) {
                let opts = CastOptions::default();
                let Some(want) = oracle_cast(from, to, code, &opts, OMode::NearestEven) else { continue };
                assert_eq!(convert_code(from, to, code, &opts).unwrap(), want, "{from} {code:#x} -> {to}");
            }
        }
    }
}
