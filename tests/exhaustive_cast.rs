//! Every bit pattern of every numeric dtype of 16 bits or fewer, cast into every numeric dtype of
//! 16 bits or fewer, saturate on and off (and every E8M0 round_mode), against the independent
//! oracle under `spec`.

#[path = "support/harness.rs"]
mod harness;
#[path = "support/oracle.rs"]
mod oracle;

use harness::{all_codes, option_sets, oracle_cast};
use lowbit::convert::{convert_code, CastOptions};
use lowbit::dtype::DType;
use oracle::OMode;
use rayon::prelude::*;

const SMALL: [DType; 21] = [
    DType::Float16,
    DType::Bfloat16,
    DType::Int16,
    DType::Uint16,
    DType::Float8E4M3FN,
    DType::Float8E4M3FNUZ,
    DType::Float8E5M2,
    DType::Float8E5M2FNUZ,
    DType::Float8E8M0,
    DType::Int8,
    DType::Uint8,
    DType::Bool,
    DType::Float6E2M3,
    DType::Float6E3M2,
    DType::Float4E2M1,
    DType::Int4,
    DType::Uint4,
    DType::Int2,
    DType::Uint2,
    DType::Float,
    DType::Double,
];

#[test]
fn every_small_source_into_every_small_target() {
    let sources: Vec<DType> = SMALL.iter().copied().filter(|d| d.bits().is_some_and(|b| b <= 16)).collect();
    let targets: Vec<DType> = SMALL.iter().copied().filter(|d| d.bits().is_some_and(|b| b <= 16)).collect();
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
    for from in SMALL.iter().copied().filter(|d| d.bits().is_some_and(|b| b <= 16)) {
        for to in [DType::Float, DType::Double] {
            for code in all_codes(from) {
                let opts = CastOptions::default();
                let Some(want) = oracle_cast(from, to, code, &opts, OMode::NearestEven) else { continue };
                assert_eq!(convert_code(from, to, code, &opts).unwrap(), want, "{from} {code:#x} -> {to}");
            }
        }
    }
}
