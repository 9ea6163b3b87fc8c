//! Plans against the rounding core (`convert_code`, which tests/exhaustive_cast.rs and
//! tests/oracle_agreement.rs hold against the independent oracle): every source pattern of 16 bits
//! or fewer into every fixed-width target, and the float32/float64/integer kernels on every
//! top-16-bit pattern with the low bits that matter, under every profile and attribute set. The
//! 2^32 sweep of the float32 plans against the oracle is in tests/exhaustive.rs (`--ignored`).

#[path = "support/harness.rs"]
mod harness;
#[path = "support/oracle.rs"]
mod oracle;

use harness::{all_codes, option_sets};
use lowbit::__private::convert_code_in_block;
use lowbit::packing;
use lowbit::Plan;
use lowbit::Profile;
use lowbit::{convert_code, CastOptions};
use lowbit::{DType, Kind};
use rayon::prelude::*;

/// Every dtype a plan converts (all but STRING, the complex types and UNDEFINED).
fn fixed_width() -> Vec<DType> {
    DType::ALL.into_iter().filter(|d| matches!(d.kind(), Kind::Float(_) | Kind::Integer { .. } | Kind::Bool)).collect()
}

/// Every attribute set worth distinguishing for `to`, under every profile.
fn all_options(to: DType) -> Vec<CastOptions> {
    option_sets(to)
        .into_iter()
        .flat_map(|(opts, _)| Profile::ALL.map(|profile| CastOptions { profile, ..opts }))
        .collect()
}

/// How many leading elements of `n` a profile's implementation converts in whole vector blocks.
fn blocked(from: DType, to: DType, opts: &CastOptions, n: usize) -> usize {
    let policy = opts.profile.policy().for_cast(from, to);
    policy.vector_block(from, to).map_or(0, |b| n - n % b.length)
}

/// Runs the plan over `codes` as one tensor and compares each element with the core. Returns the
/// number of elements compared.
fn check(from: DType, to: DType, opts: &CastOptions, codes: &[u64]) -> usize {
    let n = codes.len();
    let raw = packing::pack(from, codes).unwrap();
    let mut out = vec![0u8; packing::raw_len(to, n).unwrap()];
    Plan::new(from, to, opts).unwrap().run(&raw, &mut out, n).unwrap();
    let got = packing::unpack(to, &out, n).unwrap();
    let blocked = blocked(from, to, opts, n);
    for (i, (&code, &got)) in codes.iter().zip(&got).enumerate() {
        let want =
            if i < blocked { convert_code_in_block(from, to, code, opts) } else { convert_code(from, to, code, opts) }
                .unwrap();
        assert_eq!(
            got, want,
            "{from} {code:#x} -> {to} (element {i} of {n}) saturate={} round_mode={:?} {:?}: plan {got:#x}, core {want:#x}",
            opts.saturate, opts.round_mode, opts.profile
        );
    }
    n
}

#[test]
fn every_small_source_pattern_into_every_target_under_every_profile() {
    let small: Vec<DType> = fixed_width().into_iter().filter(|d| d.bits().unwrap() <= 16).collect();
    let jobs: Vec<(DType, DType, CastOptions)> = small
        .iter()
        .flat_map(|&from| {
            fixed_width().into_iter().flat_map(move |to| all_options(to).into_iter().map(move |o| (from, to, o)))
        })
        .collect();
    let checked: usize = jobs
        .par_iter()
        .map(|&(from, to, opts)| {
            let codes: Vec<u64> = all_codes(from).collect();
            check(from, to, &opts, &codes)
        })
        .sum();
    assert!(checked > 50_000_000, "{checked}");
}

/// float32 patterns: every top-16-bit pattern with the low halves that decide every rounding of a
/// target of 16 bits or fewer (zero, one, just below and above the midpoint, all ones).
fn f32_patterns() -> Vec<u64> {
    (0..=0xFFFFu64)
        .flat_map(|high| [0x0000, 0x0001, 0x7FFF, 0x8000, 0x8001, 0xFFFF].map(|low| high << 16 | low))
        .collect()
}

/// float64 patterns: every float32 pattern above widened, with one float64 ulp either side and the
/// float32 midpoints (2^28 float64 ulps up) with one ulp either side; every top-16-bit float64
/// pattern with zero and all-ones low bits (the range outside float32's).
fn f64_patterns() -> Vec<u64> {
    let mut out = Vec::new();
    for bits in f32_patterns().into_iter().step_by(3) {
        let x = f64::from(f32::from_bits(bits as u32)).to_bits();
        for delta in [0i64, 1, -1, 1 << 28, (1 << 28) + 1, (1 << 28) - 1] {
            out.push(x.wrapping_add_signed(delta));
        }
    }
    out.extend((0..=0xFFFFu64).flat_map(|high| [0, (1 << 48) - 1].map(|low| high << 48 | low)));
    out
}

/// Integer patterns: the boundaries of every float's rounding (powers of two and their
/// neighbours, float32's and float64's precision edges), and random values.
fn int_patterns(bits: u32) -> Vec<u64> {
    let mask = if bits == 64 { u64::MAX } else { (1 << bits) - 1 };
    let mut out = Vec::new();
    for k in 0..bits {
        for delta in [-3i64, -2, -1, 0, 1, 2, 3] {
            let p = (1u64 << k).wrapping_add_signed(delta);
            out.extend([p & mask, p.wrapping_neg() & mask]);
            // Midpoints of float32 (24 bits) and float64 (53 bits) above 2^k.
            for precision in [11, 24, 53] {
                if k > precision {
                    let mid = (1u64 << k) + (1u64 << (k - precision - 1));
                    out.push(mid.wrapping_add_signed(delta) & mask);
                }
            }
        }
    }
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    out.extend((0..20_000).map(|_| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state >> (64 - bits.min(64)) & mask
    }));
    out
}

#[test]
fn float32_kernels_under_every_profile() {
    let patterns = f32_patterns();
    let jobs: Vec<(DType, CastOptions)> =
        fixed_width().into_iter().flat_map(|to| all_options(to).into_iter().map(move |o| (to, o))).collect();
    let checked: usize = jobs.par_iter().map(|&(to, opts)| check(DType::Float, to, &opts, &patterns)).sum();
    assert!(checked > 80_000_000, "{checked}");
}

#[test]
fn float64_kernels_under_every_profile() {
    let patterns = f64_patterns();
    let jobs: Vec<(DType, CastOptions)> =
        fixed_width().into_iter().flat_map(|to| all_options(to).into_iter().map(move |o| (to, o))).collect();
    let checked: usize = jobs.par_iter().map(|&(to, opts)| check(DType::Double, to, &opts, &patterns)).sum();
    assert!(checked > 50_000_000, "{checked}");
}

#[test]
fn integer_sources_under_every_profile() {
    let jobs: Vec<(DType, DType, CastOptions)> = [DType::Int32, DType::Uint32, DType::Int64, DType::Uint64]
        .into_iter()
        .flat_map(|from| {
            fixed_width().into_iter().flat_map(move |to| all_options(to).into_iter().map(move |o| (from, to, o)))
        })
        .collect();
    jobs.par_iter().for_each(|&(from, to, opts)| {
        check(from, to, &opts, &int_patterns(from.bits().unwrap()));
    });
}

/// onnxruntime converts float32 <-> float16 in vector blocks whose NaN payloads differ from its
/// scalar tail: every length around the block size, a NaN at every position.
#[test]
fn positional_rules_follow_the_element_position() {
    let opts = CastOptions::with_profile(Profile::OnnxRuntime);
    for (from, to, nan) in [(DType::Float, DType::Float16, 0x7F80_0001u64), (DType::Float16, DType::Float, 0x7C01)] {
        for n in 0..40 {
            for at in 0..n {
                let codes: Vec<u64> = (0..n).map(|i| if i == at { nan } else { 0x3C00 + i as u64 }).collect();
                check(from, to, &opts, &codes);
            }
        }
    }
}

/// `run_parallel` and `run_pieces` give exactly the bytes `run` gives, odd lengths and packed
/// types included.
/// The engines of small sources (arithmetic widening with its exceptions, whole-byte tables, the
/// sextet loop) on runs of every length up to 9 and on every code in a scrambled order, so each
/// exception and each partial group appears at every position.
#[test]
fn small_sources_in_short_and_scrambled_runs() {
    let small: Vec<DType> = fixed_width().into_iter().filter(|d| d.bits().unwrap() <= 16).collect();
    let targets = [
        DType::Float,
        DType::Double,
        DType::Int8,
        DType::Int64,
        DType::Uint64,
        DType::Float16,
        DType::Bool,
        DType::Int4,
        DType::Uint2,
    ];
    for &from in &small {
        let mut codes: Vec<u64> = all_codes(from).collect();
        // A fixed permutation: multiply the index by an odd constant modulo the (power of two) count.
        let count = codes.len() as u64;
        codes = (0..count).map(|i| codes[(i.wrapping_mul(0x9E37_79B1) % count) as usize]).collect();
        for to in targets {
            for profile in Profile::ALL {
                let opts = CastOptions::with_profile(profile);
                check(from, to, &opts, &codes);
                for len in 0..=9 {
                    for offset in [0, 1, 3] {
                        let start = (offset * 37) % codes.len().max(1);
                        let run: Vec<u64> = codes.iter().cycle().skip(start).take(len).copied().collect();
                        check(from, to, &opts, &run);
                    }
                }
            }
        }
    }
}

/// float32 NaNs into every 16-bit-or-narrower float target under every profile: both signs,
/// every combination of the payload's top ten bits (all that a float16 code keeps, bfloat16's
/// seven among them) with low bits that are zero, one, the quiet bit's neighbour or all ones.
/// Kernels keep their own NaN codes only where the plan's probes found them equal to the core's;
/// this is the check that the probes were enough.
#[test]
fn float32_nans_into_narrow_floats_under_every_profile() {
    let codes: Vec<u64> = (0..1u64 << 10)
        .flat_map(|top| [0u64, 1, 0x1000, 0x1FFF].map(move |low| top << 13 | low))
        .filter(|&payload| payload != 0)
        .flat_map(|payload| [0x7F80_0000 | payload, 0xFF80_0000 | payload])
        .collect();
    for to in fixed_width().into_iter().filter(|d| d.float_format().is_some_and(|f| f.width() <= 16)) {
        for opts in all_options(to) {
            check(DType::Float, to, &opts, &codes);
        }
    }
}

/// The float32 kernels on runs shorter than a vector and with lanes left over (the F16C loop's
/// lanes after its last group of 64, lone nibbles and crumbs), NaN and out-of-range lanes at every
/// position.
#[test]
fn float32_kernels_on_short_runs() {
    let values = [1.5f32, f32::NAN, -2.5, 65520.0, -0.0, 1e-8, 3e9, f32::INFINITY, -7.25, 0.1, -f32::NAN, 448.0];
    let codes: Vec<u64> = values.iter().map(|v| u64::from(v.to_bits())).collect();
    for to in [DType::Float16, DType::Bfloat16, DType::Int4, DType::Uint2, DType::Float8E4M3FN, DType::Int32] {
        for profile in Profile::ALL {
            let opts = CastOptions::with_profile(profile);
            for len in (0..=17).chain([63, 64, 65, 71, 127, 129]) {
                for start in 0..codes.len() {
                    let run: Vec<u64> = codes.iter().cycle().skip(start).take(len).copied().collect();
                    check(DType::Float, to, &opts, &run);
                }
            }
        }
    }
}

#[test]
fn threads_and_pieces_change_nothing() {
    let n = 3 * 4096 + 5;
    let pairs = [
        (DType::Float, DType::Int4),
        (DType::Float, DType::Float6E3M2),
        (DType::Float, DType::Float16),
        (DType::Int2, DType::Float),
        (DType::Float6E2M3, DType::Uint2),
        (DType::Double, DType::Float8E5M2),
    ];
    for (from, to) in pairs {
        let mut state = 12345u64;
        let codes: Vec<u64> = (0..n)
            .map(|_| {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                (state >> 11) & from.code_mask()
            })
            .collect();
        let raw = packing::pack(from, &codes).unwrap();
        let opts = CastOptions::with_profile(Profile::OnnxRuntime);
        let plan = Plan::new(from, to, &opts).unwrap();
        let len = packing::raw_len(to, n).unwrap();
        let mut one = vec![0u8; len];
        plan.run(&raw, &mut one, n).unwrap();
        for threads in [2, 3, 7] {
            let mut many = vec![0xA5u8; len];
            plan.run_parallel(&raw, &mut many, n, threads).unwrap();
            assert_eq!(many, one, "{from} -> {to} on {threads} threads");
        }
        let mut pieces = vec![0xA5u8; len];
        plan.run_pieces(
            n,
            |start, _, bytes| {
                let at = packing::raw_len(from, start)?;
                bytes.copy_from_slice(&raw[at..at + bytes.len()]);
                Ok(())
            },
            |start, _, bytes| {
                let at = packing::raw_len(to, start)?;
                pieces[at..at + bytes.len()].copy_from_slice(bytes);
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(pieces, one, "{from} -> {to} in pieces");
    }
}

#[test]
fn bad_lengths_and_dtypes_are_errors() {
    let plan = Plan::new(DType::Float, DType::Int4, &CastOptions::default()).unwrap();
    assert!(plan.run(&[0; 8], &mut [0; 1], 2).is_ok());
    assert!(plan.run(&[0; 7], &mut [0; 1], 2).unwrap_err().to_string().contains("FLOAT"));
    assert!(plan.run(&[0; 8], &mut [0; 2], 2).unwrap_err().to_string().contains("INT4"));
    assert!(Plan::new(DType::String, DType::Float, &CastOptions::default()).is_err());
    assert!(Plan::new(DType::Float, DType::Complex64, &CastOptions::default()).is_err());
}
