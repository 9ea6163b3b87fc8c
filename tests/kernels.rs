//! The scalar kernels and decode tables against the rounding core (and so, through tests/oracle_agreement.rs, against
//! the oracle). The full 2^32 sweep of the kernel against the oracle is in tests/exhaustive.rs.

use lowbit::__private::DecodeTable;
use lowbit::__private::F32Kernel;
use lowbit::DType;
use lowbit::Profile;
use lowbit::{convert_code, CastOptions};
use rayon::prelude::*;

const FLOAT8: [DType; 4] = [DType::Float8E4M3FN, DType::Float8E4M3FNUZ, DType::Float8E5M2, DType::Float8E5M2FNUZ];

/// The scalar kernel (the slice API's and the scalar types' float32 path) against the core, for
/// every float target of 8 bits or fewer, both saturations, every E8M0 round_mode and profile.
fn check(patterns: &[u32]) -> usize {
    let targets: Vec<DType> = DType::NARROW.into_iter().filter(|d| d.float_format().is_some()).collect();
    let jobs: Vec<(DType, CastOptions)> = targets
        .iter()
        .flat_map(|&to| {
            let modes = if to == DType::Float8E8M0 {
                vec![lowbit::RoundMode::Up, lowbit::RoundMode::Down, lowbit::RoundMode::Nearest]
            } else {
                vec![lowbit::RoundMode::Up]
            };
            modes.into_iter().flat_map(move |round_mode| {
                Profile::ALL.into_iter().flat_map(move |profile| {
                    [true, false].map(|saturate| (to, CastOptions { saturate, round_mode, profile }))
                })
            })
        })
        .collect();
    jobs.par_iter()
        .map(|&(to, opts)| {
            let kernel = F32Kernel::new(to, &opts).unwrap();
            for &bits in patterns {
                let core = convert_code(DType::Float, to, u64::from(bits), &opts).unwrap();
                assert_eq!(u64::from(kernel.encode(f32::from_bits(bits))), core, "{bits:08x} -> {to} {opts:?}");
            }
            patterns.len()
        })
        .sum()
}

#[test]
fn scalar_kernels_agree_with_the_core_on_every_float16_and_every_midpoint() {
    let f16: Vec<u32> = (0..=u16::MAX).map(|h| half::f16::from_bits(h).to_f32().to_bits()).collect();
    // 10 (target, round_mode) jobs, both saturations, every profile.
    let jobs = 20 * Profile::ALL.len();
    assert_eq!(check(&f16), 65536 * jobs);
    let midpoints: Vec<u32> =
        (0..=0xFFFFu32).flat_map(|high| [0x0000, 0x7FFF, 0x8000, 0x8001].map(|low| high << 16 | low)).collect();
    assert_eq!(check(&midpoints), 4 * 65536 * jobs);
}

#[test]
fn scalar_kernels_agree_with_the_core_on_random_patterns() {
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let random: Vec<u32> = (0..200_000)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 32) as u32
        })
        .collect();
    assert_eq!(check(&random), 200_000 * 20 * Profile::ALL.len());
}

#[test]
fn decode_tables_agree_with_the_core() {
    for d in DType::NARROW.into_iter().filter(|d| d.float_format().is_some()) {
        let table = DecodeTable::of(d.float_format().unwrap()).unwrap();
        for code in 0..=d.code_mask() {
            let core = convert_code(d, DType::Float, code, &CastOptions::default()).unwrap();
            assert_eq!(u64::from(table.decode(code as u8).to_bits()), core, "{d} {code:#x}");
        }
    }
}

/// `cast` takes the kernels for float32, float16 and bfloat16 sources where the profile allows;
/// for every pattern of the 16-bit sources, every float8 target, both saturations and every
/// profile, the tensor result equals the element-by-element path.
#[test]
fn tensor_fast_paths_equal_the_element_path_under_every_profile() {
    use lowbit::cast;
    use lowbit::Profile;
    use lowbit::Tensor;
    let all: Vec<u64> = (0..=u64::from(u16::MAX)).collect();
    for from in [DType::Float16, DType::Bfloat16] {
        let x = Tensor::from_codes(from, vec![all.len()], &all).unwrap();
        for to in FLOAT8 {
            for profile in Profile::ALL {
                for saturate in [true, false] {
                    let opts = CastOptions { saturate, profile, ..CastOptions::default() };
                    let y = cast(&x, to, &opts).unwrap();
                    for (i, &code) in all.iter().enumerate() {
                        let want = convert_code(from, to, code, &opts).unwrap();
                        assert_eq!(y.code(i), Some(want), "{from} {code:#06x} -> {to} {profile:?} saturate={saturate}");
                    }
                }
            }
        }
    }
    // float32 sources: a spread of patterns through the tensor path under every profile.
    let f32s: Vec<u64> = (0..1u64 << 16).map(|i| (i * 65_537 + 12_345) & 0xFFFF_FFFF).collect();
    let x = Tensor::from_codes(DType::Float, vec![f32s.len()], &f32s).unwrap();
    for to in FLOAT8 {
        for profile in Profile::ALL {
            for saturate in [true, false] {
                let opts = CastOptions { saturate, profile, ..CastOptions::default() };
                let y = cast(&x, to, &opts).unwrap();
                for (i, &code) in f32s.iter().enumerate() {
                    assert_eq!(
                        y.code(i),
                        Some(convert_code(DType::Float, to, code, &opts).unwrap()),
                        "{code:#x} {to} {profile:?}"
                    );
                }
            }
        }
    }
}

/// The scalar types' `from_f32`, `from_f32_nonsaturating` and `to_f32` (the plan's kernels and
/// decode tables, built once per type) against the core: every top-16-bit float32 pattern with the
/// deciding low halves, and every code.
#[test]
fn scalar_types_agree_with_the_core() {
    use lowbit::{F4E2M1, F6E2M3, F6E3M2, F8E4M3FN, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ, F8E8M0};
    let patterns: Vec<u32> =
        (0..=0xFFFFu32).flat_map(|high| [0x0000, 0x0001, 0x7FFF, 0x8000, 0x8001].map(|low| high << 16 | low)).collect();
    macro_rules! check_type {
        ($($t:ty),*) => {$(
            let to = <$t>::DTYPE;
            for &bits in &patterns {
                let x = f32::from_bits(bits);
                for (saturate, got) in [(true, <$t>::from_f32(x)), (false, <$t>::from_f32_nonsaturating(x))] {
                    let want = convert_code(DType::Float, to, u64::from(bits), &CastOptions::saturating(saturate)).unwrap();
                    assert_eq!(u64::from(got.to_bits()), want, "{bits:08x} -> {to} saturate={saturate}");
                }
            }
            for code in 0..=to.code_mask() {
                let want = convert_code(to, DType::Float, code, &CastOptions::default()).unwrap();
                assert_eq!(u64::from(<$t>::from_bits(code as u8).to_f32().to_bits()), want, "{to} {code:#x}");
            }
        )*};
    }
    check_type!(F8E4M3FN, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ, F8E8M0, F6E2M3, F6E3M2, F4E2M1);
}

/// The quantizing loop (`saturate(round(x / scale) + zero_point)` into an integer target) against
/// the core's rounding of each float32 quotient: every top-16-bit float32 pattern with low halves
/// that decide ties (zero, one, half, all ones), scales that make exact ties, huge and tiny
/// quotients, zero, negative and non-finite scales, and zero points at and inside the bounds.
#[test]
fn quantizing_loop_agrees_with_the_core() {
    use lowbit::__private::IntegerQuantizer;
    use lowbit::round::{round_to_integer, RoundingMode};
    use lowbit::Value;
    let xs: Vec<f32> = (0..=0xFFFFu32)
        .flat_map(|high| [0u32, 1, 0x8000, 0xFFFF].map(|low| f32::from_bits(high << 16 | low)))
        .collect();
    let bytes: Vec<u8> = xs.iter().flat_map(|x| x.to_le_bytes()).collect();
    let targets = [(-128, 127, 0xFF), (0, 255, 0xFF), (-8, 7, 0xF), (0, 15, 0xF), (-2, 1, 0x3), (0, 3, 0x3)]
        .into_iter()
        .chain([(-32768, 32767, 0xFFFF), (0, 65535, 0xFFFF)]);
    let scales = [1.0f32, 0.5, 2.0, 3.0, 0.1, 1e-3, -2.0, 1e30, 1e-30, 0.0, -0.0, f32::INFINITY, f32::NAN];
    for (qmin, qmax, mask) in targets {
        for zero in [0, qmin, qmax, (qmin + qmax) / 2 + 1] {
            for scale in scales {
                let q = IntegerQuantizer::new(scale, zero, qmin, qmax, mask).unwrap();
                let mut codes = vec![0u16; xs.len()];
                q.run(&bytes, &mut codes);
                for (&x, &code) in xs.iter().zip(&codes) {
                    let quotient = x / scale;
                    let value = match Value::from_f64(f64::from(quotient)) {
                        Value::Finite(e) => match round_to_integer(e, RoundingMode::NearestEven) {
                            Some((negative, magnitude)) => {
                                let m = i64::try_from(magnitude).unwrap_or(i64::MAX);
                                (if negative { -m } else { m }).saturating_add(i64::from(zero))
                            }
                            None if e.negative => i64::MIN,
                            None => i64::MAX,
                        },
                        Value::Infinite { negative: true } => i64::MIN,
                        Value::Infinite { negative: false } => i64::MAX,
                        Value::Nan { .. } => i64::MIN,
                    };
                    let want = (value.clamp(i64::from(qmin), i64::from(qmax)) & i64::from(mask)) as u16;
                    assert_eq!(code, want, "{x:e} / {scale:e} + {zero} into [{qmin}, {qmax}]");
                }
            }
        }
    }
}
