//! All 2^32 float32 inputs into each float8 format, saturate on and off, against the oracle.
//! Run with `cargo test --release -- --ignored` (uses every core).
//!
//! The oracle's exact `encode` is too slow to call 34 billion times, so it is used to bisect the
//! positive and negative float32 bit patterns into runs that map to one code each (exact, because
//! rounding is monotonic); the sweep then compares lowbit with the run each input falls into.

#[path = "support/oracle.rs"]
mod oracle;
#[path = "support/progress.rs"]
mod progress;

use lowbit::DType;
use lowbit::{convert_code, CastOptions};
use oracle::{OFormat, OMode};
use rayon::prelude::*;

/// Code of the run containing `bits`, for a sorted run list starting at its first pattern.
fn lookup(runs: &[(u32, u64)], bits: u32) -> u64 {
    let i = runs.partition_point(|&(start, _)| start <= bits);
    runs[i - 1].1
}

/// The four float8 formats, as lowbit and the oracle name them.
const FLOAT8: [(DType, OFormat); 4] = [
    (DType::Float8E4M3FN, OFormat::E4M3FN),
    (DType::Float8E4M3FNUZ, OFormat::E4M3FNUZ),
    (DType::Float8E5M2, OFormat::E5M2),
    (DType::Float8E5M2FNUZ, OFormat::E5M2FNUZ),
];

/// Compares `ours` with the oracle on all 2^32 float32 bit patterns and returns the mismatches.
fn sweep(label: &str, f: OFormat, saturate: bool, ours: impl Fn(u32) -> u64 + Sync) -> u64 {
    let positive = oracle::f32_partition(f, saturate, OMode::NearestEven);
    let negative = oracle::f32_partition_negative(f, saturate, OMode::NearestEven);
    let special = |bits: u32| oracle::encode(f, &oracle::value_from_f32_bits(bits), saturate, OMode::NearestEven);
    let progress = progress::Progress::new(format!("{label} saturate={saturate}"), 1 << 12);
    (0..1u64 << 12)
        .into_par_iter()
        .map(|chunk| {
            // A chunk done, whatever returns below.
            struct Done<'a>(&'a progress::Progress);
            impl Drop for Done<'_> {
                fn drop(&mut self) {
                    self.0.add(1);
                }
            }
            let _done = Done(&progress);
            let mut bad = 0u64;
            // Runs are looked up once per change; consecutive patterns share a run almost always.
            let mut cached: Option<(u32, u32, u64)> = None;
            for bits in (chunk << 20)..((chunk + 1) << 20) {
                let bits = bits as u32;
                let want = if bits & 0x7FFF_FFFF > 0x7F7F_FFFF {
                    special(bits) // Inf and NaN
                } else {
                    match cached {
                        Some((lo, hi, code)) if (lo..hi).contains(&bits) => code,
                        _ => {
                            let (runs, end) =
                                if bits >> 31 == 0 { (&positive, 0x7F80_0000) } else { (&negative, 0xFF80_0000) };
                            let i = runs.partition_point(|&(s, _)| s <= bits);
                            let hi = runs.get(i).map_or(end, |r| r.0);
                            cached = Some((runs[i - 1].0, hi, runs[i - 1].1));
                            runs[i - 1].1
                        }
                    }
                };
                let got = ours(bits);
                if got != want {
                    if bad < 5 {
                        eprintln!("f32 {bits:08x} {label} saturate={saturate}: lowbit {got:#x}, oracle {want:#x}");
                    }
                    bad += 1;
                }
            }
            bad
        })
        .sum()
}

#[test]
#[ignore = "2^32 inputs x 4 formats x 2 saturation modes; run with --release -- --ignored"]
fn all_float32_inputs_into_every_float8() {
    let started = std::time::Instant::now();
    for (to, f) in FLOAT8 {
        for saturate in [true, false] {
            let t = std::time::Instant::now();
            let opts = CastOptions::saturating(saturate);
            let core = |bits: u32| convert_code(DType::Float, to, u64::from(bits), &opts).unwrap();
            assert_eq!(sweep(&format!("core -> {to}"), f, saturate, core), 0, "{to} saturate={saturate}");
            eprintln!("core {to} saturate={saturate}: 2^32 inputs agree ({:.1} s)", t.elapsed().as_secs_f64());
        }
    }
    eprintln!("total {:.1} s", started.elapsed().as_secs_f64());
}

/// The fast float8 kernel on all 2^32 float32 inputs, against the same oracle partitions.
#[test]
#[ignore = "2^32 inputs x 4 formats x 2 saturation modes; run with --release -- --ignored"]
fn fast_kernel_on_all_float32_inputs() {
    for (to, f) in FLOAT8 {
        for saturate in [true, false] {
            let t = std::time::Instant::now();
            let kernel = lowbit::__private::F32Kernel::new(to, &CastOptions::saturating(saturate)).unwrap();
            let fast = |bits: u32| u64::from(kernel.encode(f32::from_bits(bits)));
            assert_eq!(sweep(&format!("kernel -> {to}"), f, saturate, fast), 0, "{to} saturate={saturate}");
            eprintln!("kernel {to} saturate={saturate}: 2^32 inputs agree ({:.1} s)", t.elapsed().as_secs_f64());
        }
    }
}

/// The same harness on 65,536 spread inputs, so `cargo test` exercises it without --ignored.
#[test]
fn sampled_float32_inputs_into_e4m3fn() {
    let positive = oracle::f32_partition(OFormat::E4M3FN, false, OMode::NearestEven);
    let negative = oracle::f32_partition_negative(OFormat::E4M3FN, false, OMode::NearestEven);
    for i in 0..(1u32 << 16) {
        let bits = i.wrapping_mul(65537).wrapping_add(12345);
        let got =
            convert_code(DType::Float, DType::Float8E4M3FN, u64::from(bits), &CastOptions::saturating(false)).unwrap();
        let want = if bits & 0x7FFF_FFFF > 0x7F7F_FFFF {
            oracle::encode(OFormat::E4M3FN, &oracle::value_from_f32_bits(bits), false, OMode::NearestEven)
        } else if bits >> 31 == 0 {
            lookup(&positive, bits)
        } else {
            lookup(&negative, bits)
        };
        assert_eq!(got, want, "f32 {bits:08x}");
    }
}
