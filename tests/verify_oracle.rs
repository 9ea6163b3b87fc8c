//! The verification conversions (`lowbit::verify`: every rounding mode, tininess rule and
//! saturation, with IEEE flags) against the independent model in `tests/support/oracle.rs`
//! (exact big-integer arithmetic, sharing no code with `src/`), over every source pattern of 16
//! bits or fewer and random float32/float64 samples.

#[path = "support/oracle.rs"]
mod oracle;

use lowbit::round::RoundingMode;
use lowbit::round::Tininess;
use lowbit::verify::{convert_with_random, seeded_random, Format, VerifyOptions};
use oracle::{OFloat, OFormat, ORound, OSpecial, OTarget, OTiny};
use rayon::prelude::*;

const STOCHASTIC_BITS: u32 = 5;

/// Formats by their lowbit spelling and the oracle's description of them, written by hand from
/// the description grammar (defaults: bias 2^(E-1)-1, IEEE specials with payloads, subnormals
/// kept, signed).
fn formats() -> Vec<(&'static str, OTarget)> {
    let onnx = |f: OFormat| OTarget::Float(oracle::ofloat_of(f).expect("in the model"));
    let described = |ebits, mbits| OFloat::ieee(ebits, mbits);
    vec![
        ("e4m3", onnx(OFormat::E4M3FN)),
        ("e4m3fnuz", onnx(OFormat::E4M3FNUZ)),
        ("e5m2", onnx(OFormat::E5M2)),
        ("e5m2fnuz", onnx(OFormat::E5M2FNUZ)),
        ("e2m3", onnx(OFormat::E2M3)),
        ("e3m2", onnx(OFormat::E3M2)),
        ("e2m1", onnx(OFormat::E2M1)),
        ("f16", onnx(OFormat::F16)),
        ("bf16", onnx(OFormat::BF16)),
        ("e4m3,special=ieee", OTarget::Float(described(4, 3))),
        ("e3m4", OTarget::Float(described(3, 4))),
        ("e5m2,subnormal=flush", OTarget::Float(OFloat { flush: true, ..described(5, 2) })),
        ("e4m3,unsigned", OTarget::Float(OFloat { signed: false, ..described(4, 3) })),
        (
            "e3m3,special=fn,bias=2",
            OTarget::Float(OFloat { special: OSpecial::Fn, bias: 2, payload: false, ..described(3, 3) }),
        ),
        (
            "e2m2,special=none,unsigned",
            OTarget::Float(OFloat { special: OSpecial::None, signed: false, payload: false, ..described(2, 2) }),
        ),
        (
            "e4m2,special=fnuz,subnormal=flush",
            OTarget::Float(OFloat { special: OSpecial::Fnuz, flush: true, payload: false, ..described(4, 2) }),
        ),
        ("int8", OTarget::Int { bits: 8, signed: true }),
        ("uint8", OTarget::Int { bits: 8, signed: false }),
        ("int4", OTarget::Int { bits: 4, signed: true }),
        ("uint2", OTarget::Int { bits: 2, signed: false }),
        ("int32", OTarget::Int { bits: 32, signed: true }),
        ("uint64", OTarget::Int { bits: 64, signed: false }),
    ]
}

fn modes(random: u64) -> Vec<(RoundingMode, ORound)> {
    let r = random & ((1 << STOCHASTIC_BITS) - 1);
    vec![
        (RoundingMode::NearestEven, ORound::NearestEven),
        (RoundingMode::TowardZero, ORound::TowardZero),
        (RoundingMode::AwayFromZero, ORound::AwayFromZero),
        (RoundingMode::NearestTiesAway, ORound::NearestTiesAway),
        (RoundingMode::TowardNegative, ORound::Floor),
        (RoundingMode::TowardPositive, ORound::Ceiling),
        (RoundingMode::ToOdd, ORound::Odd),
        (RoundingMode::Stochastic { bits: STOCHASTIC_BITS }, ORound::Stochastic { bits: STOCHASTIC_BITS, random: r }),
    ]
}

const TININESS: [(Tininess, OTiny); 3] = [
    (Tininess::BeforeRounding, OTiny::Before),
    (Tininess::AfterRounding, OTiny::After),
    (Tininess::Delivered, OTiny::Delivered),
];

fn source(target: &OTarget, code: u64) -> oracle::OSource {
    match target {
        OTarget::Float(f) => oracle::odecode_float(f, code),
        OTarget::Int { bits, signed } => oracle::odecode_int(*bits, *signed, code),
    }
}

fn width(target: &OTarget) -> u32 {
    match target {
        OTarget::Float(f) => f.width(),
        OTarget::Int { bits, .. } => *bits,
    }
}

/// Compares one source code into one target under every mode, tininess rule (float targets) and
/// saturation; returns the number of comparisons.
fn compare(from: (&str, &OTarget), to: (&str, &OTarget), code: u64, every_tininess: bool) -> usize {
    let (from_format, to_format) = (Format::parse(from.0).unwrap(), Format::parse(to.0).unwrap());
    let random = seeded_random(7, code);
    let src = source(from.1, code);
    let rules: &[(Tininess, OTiny)] = if every_tininess && matches!(to.1, OTarget::Float(_)) {
        &TININESS
    } else {
        &TININESS[code as usize % 3..code as usize % 3 + 1]
    };
    let mut n = 0;
    for (mode, omode) in modes(random) {
        for &(tininess, otiny) in rules {
            for saturate in [false, true] {
                let opts = VerifyOptions { mode, tininess, saturate };
                let (got, status) = convert_with_random(code, &from_format, &to_format, &opts, random);
                let (want, want_flags) = oracle::oconvert(&src, to.1, omode, otiny, saturate);
                assert_eq!(
                    (got, status.bits()),
                    (want, want_flags),
                    "{} {code:#x} -> {} {mode:?} {tininess:?} saturate={saturate} random={random:#x}: lowbit (code, flags), oracle",
                    from.0,
                    to.0
                );
                n += 1;
            }
        }
    }
    n
}

#[test]
fn every_narrow_pattern_into_every_format() {
    let all = formats();
    let narrow: Vec<_> = all.iter().filter(|(_, t)| width(t) <= 8).collect();
    let checked: usize = narrow
        .par_iter()
        .map(|(from_name, from)| {
            let mut n = 0;
            for code in 0..1u64 << width(from) {
                for (to_name, to) in &all {
                    n += compare((from_name, from), (to_name, to), code, true);
                }
            }
            n
        })
        .sum();
    assert!(checked > 1_000_000, "{checked}");
}

#[test]
fn every_16_bit_pattern_into_narrow_formats() {
    let all = formats();
    let pick = |name: &str| *all.iter().find(|(n, _)| *n == name).expect("listed");
    let pairs = [
        (pick("f16"), pick("e4m3,special=ieee")),
        (pick("f16"), pick("e5m2,subnormal=flush")),
        (pick("f16"), pick("int8")),
        (pick("bf16"), pick("e4m3")),
        (pick("bf16"), pick("e3m4")),
        (pick("bf16"), pick("f16")),
        (pick("f16"), pick("bf16")),
        (pick("bf16"), pick("e2m2,special=none,unsigned")),
    ];
    let checked: usize = (0..1u64 << 16)
        .into_par_iter()
        .map(|code| {
            pairs.iter().map(|(from, to)| compare((from.0, &from.1), (to.0, &to.1), code, false)).sum::<usize>()
        })
        .sum();
    assert_eq!(checked, (1 << 16) * pairs.len() * 8 * 2);
}

#[test]
fn random_float32_and_float64_samples() {
    let all = formats();
    let wide = [("f32", OTarget::Float(OFloat::ieee(8, 23))), ("f64", OTarget::Float(OFloat::ieee(11, 52)))];
    let mut targets: Vec<_> = all.iter().map(|(n, t)| (*n, *t)).collect();
    targets.push(wide[0]);
    let checked: usize = (0..20_000u64)
        .into_par_iter()
        .map(|i| {
            let mut n = 0;
            for (k, (from_name, from)) in wide.iter().enumerate() {
                let raw = seeded_random(1000 + k as u64, i);
                // Half the samples near the narrow formats' range, so rounding decisions happen.
                let code = match (k, i % 2) {
                    (0, 0) => (raw & 0x807F_FFFF) | ((0x70 + (raw >> 40) % 0x20) << 23),
                    (0, _) => raw & 0xFFFF_FFFF,
                    (_, 0) => (raw & 0x800F_FFFF_FFFF_FFFF) | ((0x3F0 + (raw >> 20) % 0x20) << 52),
                    _ => raw,
                };
                for (to_name, to) in &targets {
                    if *to_name != *from_name {
                        n += compare((from_name, from), (to_name, to), code, i % 7 == 0);
                    }
                }
            }
            n
        })
        .sum();
    assert!(checked > 100_000, "{checked}");
}
