//! `lowbit_convert` on one value (float32 -> FLOAT8E4M3FN, nearest even, flags) against a
//! SoftFloat-style scalar conversion written here for the comparison (round-and-pack on integer
//! significands with a sticky bit, as SoftFloat's `roundPackTo*` does, specialised to this one
//! pair and mode). Before timing, the reference is checked against lowbit on every top-16-bit
//! pattern of float32 with several low halves, so both compute the same thing.
//!
//! `cargo bench -p lowbit-capi --bench convert`

use criterion::{criterion_group, criterion_main, Criterion};
use lowbit::verify::{Converter, Format, VerifyOptions};
use lowbit::{CastOptions, DType, Plan};
use lowbit_capi::*;
use std::hint::black_box;

#[path = "../tests/support/mod.rs"]
mod support;
use support::format;

const INEXACT: u8 = LOWBIT_FLAG_INEXACT;
const UNDERFLOW: u8 = LOWBIT_FLAG_UNDERFLOW;
const OVERFLOW: u8 = LOWBIT_FLAG_OVERFLOW;
const INVALID: u8 = LOWBIT_FLAG_INVALID;

/// Rounds `sig` right by `shift` bits to nearest even: the kept bits and whether any dropped
/// bit was set. `shift` is 1 to 26 and `sig` below 2^24, so nothing overflows.
#[inline(always)]
fn round_right_even(sig: u32, shift: u32) -> (u32, bool) {
    let kept = sig >> shift;
    let dropped = sig & ((1 << shift) - 1);
    let half = 1 << (shift - 1);
    let up = dropped > half || (dropped == half && kept & 1 == 1);
    (kept + u32::from(up), dropped != 0)
}

/// float32 -> E4M3FN (bias 7, no infinity, NaN S.1111.111, max 448) rounding to nearest even,
/// not saturating (overflow gives NaN with OVERFLOW|INEXACT), tininess after rounding, flags in
/// TestFloat's layout.
#[inline(never)]
fn softfloat_style_f32_to_e4m3fn(a: u32) -> (u8, u8) {
    let sign = ((a >> 24) & 0x80) as u8;
    let exp = ((a >> 23) & 0xFF) as i32;
    let frac = a & 0x7F_FFFF;
    if exp == 0xFF {
        // NaN: quiet, sign kept (a signalling one, quiet bit clear, raises INVALID); infinity:
        // the format has none, so NaN and INVALID.
        let signalling = frac != 0 && frac & 0x40_0000 == 0;
        return (sign | 0x7F, if frac == 0 || signalling { INVALID } else { 0 });
    }
    if exp == 0 && frac == 0 {
        return (sign, 0);
    }
    // Normalise to a 24-bit significand with its leading 1 at bit 23: value = sig * 2^(e - 23).
    let (mut sig, mut e) = if exp == 0 { (frac, -126) } else { (frac | 0x80_0000, exp - 127) };
    while sig & 0x80_0000 == 0 {
        sig <<= 1;
        e -= 1;
    }
    let biased = e + 7;
    // Normal results keep 4 significant bits (drop 20); subnormal ones fewer, on the 2^-9 grid.
    let shift = (20 + (1 - biased).max(0)).min(26) as u32;
    let (kept, inexact) = round_right_even(sig, shift);
    // `kept` carries its leading bit at bit 3 for normals: adding it to (biased - 1) << 3 also
    // carries a rounding overflow into the exponent; subnormals (and their carry into the
    // smallest normal) are `kept` itself.
    let code = if biased >= 1 { (((biased - 1) as u32) << 3) + kept } else { kept };
    if code > 0x7E {
        return (sign | 0x7F, OVERFLOW | INEXACT);
    }
    // Tiny after rounding: below 2^-7, or in [2^-7, 2^-6) without rounding up to 2^-6 at normal
    // precision.
    let tiny = biased < 0 || (biased == 0 && round_right_even(sig, 20).0 < 16);
    let flags = match (inexact, tiny) {
        (false, _) => 0,
        (true, false) => INEXACT,
        (true, true) => INEXACT | UNDERFLOW,
    };
    (sign | code as u8, flags)
}

#[inline(always)]
fn lowbit(from: lowbit_format, to: lowbit_format, bits: u32, options: &lowbit_options) -> (u8, u8) {
    let mut flags = 0;
    // SAFETY: readable options and a writable flag byte.
    let code = unsafe { lowbit_convert(from, to, u64::from(bits), options, &mut flags) };
    (code as u8, flags)
}

fn bench(c: &mut Criterion) {
    let (f32_, e4m3) = (format("float32"), format("float8e4m3fn"));
    let options = lowbit_options_default();
    let mut compared = 0u64;
    for top in 0..1u32 << 16 {
        for low in [0u32, 1, 0x7FFF, 0x8000, 0x8001, 0xFFFF, top.wrapping_mul(0x9E37) & 0xFFFF] {
            let a = top << 16 | low;
            let (want, got) = (lowbit(f32_, e4m3, a, &options), softfloat_style_f32_to_e4m3fn(a));
            assert_eq!(got, want, "the bench's reference disagrees with lowbit on {a:#010x}");
            compared += 1;
        }
    }
    assert!(compared > 0);
    let mut group = c.benchmark_group("f32_to_e4m3fn_rne_one_value");
    // 1.1875: a tie, rounded and flagged INEXACT.
    let value = 0x3F98_0000u32;
    group.bench_function("lowbit_convert", |b| b.iter(|| lowbit(f32_, e4m3, black_box(value), &options)));
    group.bench_function("softfloat_style_reference", |b| b.iter(|| softfloat_style_f32_to_e4m3fn(black_box(value))));
    // The library's converter without the C boundary (handles, options, checks).
    let converter = Converter::new(
        &Format::parse("float32").expect("a dtype"),
        &Format::parse("float8e4m3fn").expect("a dtype"),
        &VerifyOptions::default(),
    );
    group.bench_function("verify_converter_direct", |b| b.iter(|| converter.convert(u64::from(black_box(value)), 0)));
    group.finish();
    // A spread of operands (normal, subnormal, overflow, NaN) one call each.
    let operands: Vec<u32> = (0..256u32).map(|i| i.wrapping_mul(0x0101_7F3B) ^ 0x3C00_0000).collect();
    let mut group = c.benchmark_group("f32_to_e4m3fn_rne_256_values");
    group.bench_function("lowbit_convert", |b| {
        b.iter(|| operands.iter().fold(0u8, |acc, &a| acc ^ lowbit(f32_, e4m3, black_box(a), &options).0))
    });
    group.bench_function("softfloat_style_reference", |b| {
        b.iter(|| operands.iter().fold(0u8, |acc, &a| acc ^ softfloat_style_f32_to_e4m3fn(black_box(a)).0))
    });
    group.finish();
}

/// `lowbit_convert_n` under `onnx_cast` against the plan it runs, called directly: the C boundary
/// should cost nothing measurable on an array.
fn bench_arrays(c: &mut Criterion) {
    let (f32_, e4m3) = (format("float32"), format("float8e4m3fn"));
    let n = 1 << 20;
    let src: Vec<u8> =
        (0..n as u32).flat_map(|i| f32::from_bits(i.wrapping_mul(0x9E37_79B9) & 0x47FF_FFFF).to_le_bytes()).collect();
    let mut dst = vec![0u8; n];
    let options = lowbit_options { onnx_cast: 1, saturate: 1, ..lowbit_options_default() };
    let plan = Plan::new(DType::Float, DType::Float8E4M3FN, &CastOptions::default()).expect("a plan");
    let threads = rayon::current_num_threads();
    let mut group = c.benchmark_group("f32_to_e4m3fn_onnx_cast_2^20_elements");
    group.throughput(criterion::Throughput::Elements(n as u64));
    group.bench_function("lowbit_convert_n", |b| {
        b.iter(|| {
            // SAFETY: buffers of lowbit_format_bytes' lengths (4n and n bytes), not overlapping.
            let status = unsafe {
                lowbit_convert_n(
                    f32_,
                    e4m3,
                    src.as_ptr().cast(),
                    dst.as_mut_ptr().cast(),
                    n,
                    &options,
                    std::ptr::null_mut(),
                )
            };
            assert_eq!(status, LOWBIT_OK);
        })
    });
    group.bench_function("plan_run_parallel_direct", |b| {
        b.iter(|| plan.run_parallel(&src, &mut dst, n, threads).expect("runs"))
    });
    group.finish();
}

criterion_group!(benches, bench, bench_arrays);
criterion_main!(benches);
