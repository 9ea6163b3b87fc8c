//! The rounding core (`convert_code` under `spec`) against the independent big-integer oracle of
//! tests/support/oracle.rs, through the same harness the test suite uses (tests/support/harness.rs).
//!
//! Input (structured): a source dtype (every numeric dtype of 16 bits or fewer, BOOL, FLOAT and
//! DOUBLE), a code, a target dtype of 8 bits or fewer (BOOL included), saturate and round_mode.
//! A float source's code can be "snapped": its low fraction bits replaced by a midpoint pattern
//! (`0..0`, `10..0`, `01..1`, `10..01`) above a chosen number of kept bits, which puts the inputs
//! where rounding decisions are made (random bit patterns almost never land on a tie).
//!
//! Asserts: wherever the oracle has a say, `convert_code` returns `Ok` and the oracle's code; an
//! identity cast returns the code unchanged.

#![no_main]

#[path = "../../tests/support/oracle.rs"]
mod oracle;

#[path = "../../tests/support/harness.rs"]
mod harness;

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use lowbit::DType;
use lowbit::Kind;
use lowbit::Profile;
use lowbit::{convert_code, CastOptions, RoundMode};

/// Every numeric dtype (bool included) of 16 bits or fewer, plus float32 and float64: the sources
/// the oracle decodes. Derived, so a new dtype joins by itself.
fn sources() -> Vec<DType> {
    DType::ALL
        .into_iter()
        .filter(|d| matches!(d.kind(), Kind::Float(_) | Kind::Integer { .. } | Kind::Bool))
        .filter(|d| d.bits().is_some_and(|b| b <= 16) || matches!(d, DType::Float | DType::Double))
        .collect()
}

#[derive(Arbitrary, Debug)]
struct Input {
    from: u8,
    to: u8,
    code: u64,
    /// `Some((keep, pattern))`: keep the top `keep` fraction bits and fill the rest with pattern.
    snap: Option<(u8, u8)>,
    saturate: bool,
    round_mode: u8,
}

/// The fraction width of a float source wider than 8 bits (the narrow ones are covered whole by
/// the code alone).
fn fraction_bits(d: DType) -> Option<u32> {
    match d {
        DType::Float16 => Some(10),
        DType::Bfloat16 => Some(7),
        DType::Float => Some(23),
        DType::Double => Some(52),
        _ => None,
    }
}

fn snapped(code: u64, fraction: u32, keep: u8, pattern: u8) -> u64 {
    let low = fraction - u32::from(keep) % (fraction + 1);
    if low == 0 {
        return code;
    }
    let field = (1u64 << low) - 1;
    let top = 1u64 << (low - 1);
    let fill = match pattern % 4 {
        0 => 0,
        1 => top,
        2 => top - 1,
        _ => top | 1,
    };
    code & !field | fill
}

fuzz_target!(|input: Input| {
    let sources = sources();
    let from = sources[usize::from(input.from) % sources.len()];
    let targets: Vec<DType> = DType::NARROW.iter().copied().chain([DType::Bool]).collect();
    let to = targets[usize::from(input.to) % targets.len()];
    let mut code = input.code & from.code_mask();
    if from == DType::Bool {
        code &= 1;
    }
    if let (Some(fraction), Some((keep, pattern))) = (fraction_bits(from), input.snap) {
        code = snapped(code, fraction, keep, pattern);
    }
    let round_mode = [RoundMode::Up, RoundMode::Down, RoundMode::Nearest][usize::from(input.round_mode) % 3];
    let opts = CastOptions { saturate: input.saturate, round_mode, profile: Profile::Spec };
    // The oracle's rounding for this round_mode (targets other than E8M0 ignore round_mode and
    // have one entry per saturate value).
    let sets = harness::option_sets(to);
    let omode = sets
        .iter()
        .find(|(o, _)| o.round_mode == round_mode && o.saturate == input.saturate)
        .or_else(|| sets.iter().find(|(o, _)| o.saturate == input.saturate))
        .map(|(_, m)| *m)
        .expect("option_sets covers both saturate values");
    // An identity Cast is a copy (as tests/oracle_agreement.rs has it): -Inf stays -Inf even with
    // saturate, which the oracle, a rounding function, would clamp.
    let want = if from == to { Some(code) } else { harness::oracle_cast(from, to, code, &opts, omode) };
    let Some(want) = want else { return };
    let got = convert_code(from, to, code, &opts)
        .unwrap_or_else(|e| panic!("{from} {code:#x} -> {to} {opts:?}: core error {e}, oracle {want:#x}"));
    assert_eq!(got, want, "{from} {code:#x} -> {to} {opts:?}: core {got:#x}, oracle {want:#x}");
});
