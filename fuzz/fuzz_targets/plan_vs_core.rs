//! Plans (the fast paths) against the rounding core.
//!
//! Input: any bytes. Every 4 bytes are one float32 bit pattern and every 8 one float64 pattern
//! (little-endian); every byte is also a code for the decode tables.
//!
//! Asserts, under every profile and attribute set:
//! * `Plan` from FLOAT and from DOUBLE into every fixed-width dtype gives `convert_code` for every
//!   element (`convert_code_in_block` inside a profile's vector blocks), and `run_parallel` the same
//!   bytes as `run`;
//! * the slice API (`convert_from_f32_slice_with`, `convert_from_f16_slice`,
//!   `convert_from_f64_slice`) gives `convert_code` from FLOAT, FLOAT16 and DOUBLE;
//! * `DecodeTable` (and the slice API's `to_f32_vec`) gives `convert_code(format, FLOAT)` for every
//!   narrow float format: the same bits under `spec`, and under every profile the same value (a
//!   profile may read a NaN code as another NaN: `xla` reads FNUZ's 0x80 as +NaN).

#![no_main]

use libfuzzer_sys::fuzz_target;
use lowbit::__private::convert_code_in_block;
use lowbit::__private::DecodeTable;
use lowbit::packing;
use lowbit::Kind;
use lowbit::NarrowFloatSliceExt;
use lowbit::Plan;
use lowbit::Profile;
use lowbit::{convert_code, CastOptions, RoundMode};
use lowbit::{DType, F4E2M1, F6E2M3, F6E3M2, F8E4M3FN, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ, F8E8M0};

const ROUND_MODES: [RoundMode; 3] = [RoundMode::Up, RoundMode::Down, RoundMode::Nearest];

fn core(from: DType, to: DType, code: u64, opts: &CastOptions) -> u64 {
    convert_code(from, to, code, opts).unwrap_or_else(|e| panic!("{from} {code:#x} -> {to} {opts:?}: {e}"))
}

fn check_plans(from: DType, codes: &[u64]) {
    let n = codes.len();
    let raw = packing::pack(from, codes).expect("codes fit");
    for to in DType::ALL.into_iter().filter(|d| matches!(d.kind(), Kind::Float(_) | Kind::Integer { .. } | Kind::Bool))
    {
        for profile in Profile::ALL {
            for saturate in [true, false] {
                for round_mode in ROUND_MODES {
                    if to != DType::Float8E8M0 && round_mode != RoundMode::Up {
                        continue;
                    }
                    let opts = CastOptions { saturate, round_mode, profile };
                    let plan = Plan::new(from, to, &opts).expect("fixed-width dtypes");
                    let mut out = vec![0u8; packing::raw_len(to, n).expect("small")];
                    plan.run(&raw, &mut out, n).expect("lengths match");
                    let mut parallel = vec![0u8; out.len()];
                    plan.run_parallel(&raw, &mut parallel, n, 3).expect("lengths match");
                    assert_eq!(parallel, out, "{from} -> {to} {opts:?}: run_parallel differs from run");
                    let policy = profile.policy().for_cast(from, to);
                    let blocked = policy.vector_block(from, to).map_or(0, |b| n - n % b.length);
                    for (i, &code) in codes.iter().enumerate() {
                        let got = packing::get(to, &out, i);
                        let want = if i < blocked {
                            convert_code_in_block(from, to, code, &opts).expect("fixed-width dtypes")
                        } else {
                            core(from, to, code, &opts)
                        };
                        assert_eq!(
                            got, want,
                            "plan {from} {code:#x} -> {to} {opts:?} (element {i}): {got:#x}, core {want:#x}"
                        );
                    }
                }
            }
        }
    }
}

fn check_decode_tables(codes: &[u8]) {
    for d in DType::NARROW {
        let Some(format) = d.float_format() else { continue };
        let table = DecodeTable::of(format).expect("every narrow float format has a table");
        let fresh = DecodeTable::new(format).expect("every narrow float format has a table");
        for &byte in codes {
            let code = byte & d.code_mask() as u8;
            let got = table.decode(code).to_bits();
            assert_eq!(got, fresh.decode(code).to_bits(), "cached and fresh tables differ at {d} {code:#x}");
            for profile in Profile::ALL {
                let want = core(d, DType::Float, u64::from(code), &CastOptions::with_profile(profile));
                let nan = |bits: u64| f32::from_bits(bits as u32).is_nan();
                let same = u64::from(got) == want || (profile != Profile::Spec && nan(got.into()) && nan(want));
                assert!(same, "table {d} {code:#x} under {profile:?}: {got:08x}, core {want:08x}");
            }
        }
    }
}

/// The slice API of one narrow float scalar type against `convert_code`.
macro_rules! check_slice_api {
    ($t:ty, $f32s:expr, $f16s:expr, $f64s:expr, $codes:expr) => {{
        let dtype = <$t>::DTYPE;
        let (f32s, f16s, f64s): (&[f32], &[half::f16], &[f64]) = ($f32s, $f16s, $f64s);
        for profile in Profile::ALL {
            for saturate in [true, false] {
                for round_mode in ROUND_MODES {
                    // round_mode only matters for E8M0.
                    if dtype != DType::Float8E8M0 && round_mode != RoundMode::Up {
                        continue;
                    }
                    let opts = CastOptions { saturate, round_mode, profile };
                    let mut dst = vec![<$t>::from_bits(0); f32s.len()];
                    dst.convert_from_f32_slice_with(f32s, &opts).expect("lengths match");
                    for (x, y) in f32s.iter().zip(&dst) {
                        let want = core(DType::Float, dtype, u64::from(x.to_bits()), &opts);
                        assert_eq!(
                            u64::from(y.to_bits()),
                            want,
                            "convert_from_f32_slice_with {:08x} -> {dtype} {opts:?}",
                            x.to_bits()
                        );
                    }
                    let mut dst = vec![<$t>::from_bits(0); f16s.len()];
                    dst.convert_from_f16_slice(f16s, &opts).expect("lengths match");
                    for (x, y) in f16s.iter().zip(&dst) {
                        let want = core(DType::Float16, dtype, u64::from(x.to_bits()), &opts);
                        assert_eq!(
                            u64::from(y.to_bits()),
                            want,
                            "convert_from_f16_slice {:04x} -> {dtype} {opts:?}",
                            x.to_bits()
                        );
                    }
                    let mut dst = vec![<$t>::from_bits(0); f64s.len()];
                    dst.convert_from_f64_slice(f64s, &opts).expect("lengths match");
                    for (x, y) in f64s.iter().zip(&dst) {
                        let want = core(DType::Double, dtype, x.to_bits(), &opts);
                        assert_eq!(
                            u64::from(y.to_bits()),
                            want,
                            "convert_from_f64_slice {:016x} -> {dtype} {opts:?}",
                            x.to_bits()
                        );
                    }
                }
            }
        }
        // A length mismatch is an Err, never a panic.
        if !f32s.is_empty() {
            let mut short = vec![<$t>::from_bits(0); f32s.len() - 1];
            assert!(short.convert_from_f32_slice(f32s).is_err());
        }
        let codes: Vec<$t> = $codes.iter().map(|&b| <$t>::from_bits(b)).collect();
        let values = codes.to_f32_vec();
        let mut into = vec![0f32; codes.len()];
        codes.convert_to_f32_slice(&mut into).expect("lengths match");
        for ((c, v), w) in codes.iter().zip(&values).zip(&into) {
            let want = core(dtype, DType::Float, u64::from(c.to_bits()), &CastOptions::default());
            assert_eq!(u64::from(v.to_bits()), want, "to_f32_vec {dtype} {:#x}", c.to_bits());
            assert_eq!(v.to_bits(), w.to_bits(), "convert_to_f32_slice {dtype} {:#x}", c.to_bits());
        }
    }};
}

fuzz_target!(|data: &[u8]| {
    let words: Vec<u32> = data.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
    let f32s: Vec<f32> = words.iter().map(|&w| f32::from_bits(w)).collect();
    check_plans(DType::Float, &words.iter().map(|&w| u64::from(w)).collect::<Vec<_>>());
    let doubles: Vec<u64> = data.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().unwrap())).collect();
    check_plans(DType::Double, &doubles);
    check_decode_tables(data);
    // The slice API is slower (every profile, several paths): a few elements are enough.
    let few = &words[..words.len().min(8)];
    let f32s = &f32s[..few.len()];
    let f16s: Vec<half::f16> = few.iter().map(|&w| half::f16::from_bits(w as u16)).collect();
    let f64s: Vec<f64> = few.chunks_exact(2).map(|p| f64::from_bits(u64::from(p[1]) << 32 | u64::from(p[0]))).collect();
    let codes = &data[..data.len().min(16)];
    check_slice_api!(F8E4M3FN, f32s, &f16s, &f64s, codes);
    check_slice_api!(F8E4M3FNUZ, f32s, &f16s, &f64s, codes);
    check_slice_api!(F8E5M2, f32s, &f16s, &f64s, codes);
    check_slice_api!(F8E5M2FNUZ, f32s, &f16s, &f64s, codes);
    check_slice_api!(F8E8M0, f32s, &f16s, &f64s, codes);
    check_slice_api!(F6E2M3, f32s, &f16s, &f64s, codes);
    check_slice_api!(F6E3M2, f32s, &f16s, &f64s, codes);
    check_slice_api!(F4E2M1, f32s, &f16s, &f64s, codes);
});
