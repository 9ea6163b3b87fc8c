//! Single-thread quantization throughput (a measurement, not a check of correctness: the tests
//! check the results): `cargo bench --bench quant`. MX quantize/dequantize of 16,777,216 float32 elements,
//! best of 5 (each the average of repeated calls over at least 0.2 s), against a plain copy of the float32 input measured in the same run. Times are this
//! thread's time on a CPU (`/proc/thread-self/schedstat`, in nanoseconds) where Linux gives it,
//! so that other processes on a shared machine do not count; wall-clock time elsewhere.

use lowbit::packing;
use lowbit::quant::linear::quantize_linear;
use lowbit::quant::mx::{self, MxFormat, MxOptions};
use lowbit::CastOptions;
use lowbit::DType;
use lowbit::Plan;
use lowbit::Profile;
use lowbit::Tensor;
use std::hint::black_box;
use std::time::Instant;

const N: usize = 1 << 24;
const REPS: usize = 5;

/// Seconds this thread has spent on a CPU, if Linux says.
fn on_cpu() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    Some(text.split_whitespace().next()?.parse::<u64>().ok()? as f64 * 1e-9)
}

/// The best of 5 timings of one call to `f`. The kernel's CPU-time figures may move in steps of a
/// scheduler tick (4 ms here), so each timing repeats `f` for at least 0.2 s and divides.
fn best(mut f: impl FnMut()) -> f64 {
    f();
    (0..REPS)
        .map(|_| {
            let (t, cpu) = (Instant::now(), on_cpu());
            let mut calls = 0;
            loop {
                f();
                calls += 1;
                let spent = match (cpu, on_cpu()) {
                    (Some(a), Some(b)) => b - a,
                    _ => t.elapsed().as_secs_f64(),
                };
                if spent >= 0.2 {
                    return spent / f64::from(calls);
                }
            }
        })
        .fold(f64::INFINITY, f64::min)
}

fn main() {
    mx_throughput();
    quantize_linear_throughput();
    bulk_throughput();
}

/// The fused per-tensor slice calls (`lowbit::bulk`), against a copy of the float32 side.
fn bulk_throughput() {
    use lowbit::bulk::{dequantize, dequantize_packed, quantize};
    let values: Vec<f32> = (0..N).map(|i| ((i as f32) * 0.618).sin() * 300.0).collect();
    let mut copy = vec![0f32; N];
    let copy_s = best(|| {
        copy.copy_from_slice(black_box(&values));
        black_box(&mut copy);
    });
    let rate = |s: f64| format!("{:.0} M elements/s ({:.2}x the copy)", N as f64 / s / 1e6, copy_s / s);
    let mut q = vec![0i8; N];
    println!("bulk quantize f32 -> int8: {}", rate(best(|| quantize(black_box(&values), 2.5, 3i8, &mut q).unwrap())));
    let mut y = vec![0f32; N];
    println!("bulk dequantize int8 -> f32: {}", rate(best(|| dequantize(black_box(&q), 2.5, 3i8, &mut y).unwrap())));
    let e4m3: Vec<lowbit::F8E4M3FN> = q.iter().map(|&c| lowbit::F8E4M3FN::from_bits(c as u8)).collect();
    let zero = lowbit::F8E4M3FN::ZERO;
    println!(
        "bulk dequantize float8e4m3fn -> f32: {}",
        rate(best(|| dequantize(black_box(&e4m3), 2.5, zero, &mut y).unwrap()))
    );
    let packed: Vec<u8> = q[..N / 2].iter().map(|&c| c as u8).collect();
    let u4 = lowbit::U4::from_bits(8);
    println!(
        "bulk dequantize_packed uint4 -> f32: {}",
        rate(best(|| dequantize_packed(black_box(&packed), 0.5, u4, &mut y).unwrap()))
    );
}

fn mx_throughput() {
    // Values over a spread of magnitudes, a new block exponent every few blocks.
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let values: Vec<f32> = (0..N)
        .map(|i| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            ((state >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 2f32.powi((i / 96 % 24) as i32 - 12)
        })
        .collect();
    let raw: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    let mut copy = vec![0f32; N];
    let copy_s = best(|| {
        copy.copy_from_slice(black_box(&values));
        black_box(&mut copy);
    });
    let rate = |s: f64| N as f64 / s / 1e6;
    println!("copy of the float32 input: {:.0} M elements/s", rate(copy_s));
    println!(
        "{:<10} {:>10} {:>8} {:>10} {:>8} {:>12} {:>12}",
        "format", "quantize", "/copy", "dequantize", "/copy", "cast to elem", "cast from"
    );
    let shape = [N / 4096, 4096];
    // MX_FORMATS=mxfp8e4m3,mxfp4 limits the run (for a profiler).
    let only = std::env::var("MX_FORMATS").ok();
    for format in MxFormat::ALL {
        if only.as_deref().is_some_and(|o| !o.split(',').any(|f| f == format.name())) {
            continue;
        }
        // MX_BLOCK=N times another block size (to see the per-block cost).
        let block_size = std::env::var("MX_BLOCK").ok().and_then(|b| b.parse().ok()).unwrap_or(32);
        let opts = MxOptions { block_size, ..MxOptions::new(format) };
        let dtype = format.element_dtype();
        let mut scales = vec![0u8; N.div_ceil(block_size)];
        let mut elements = vec![0u8; packing::raw_len(dtype, N).unwrap()];
        let q = best(|| {
            mx::quantize_into(DType::Float, &shape, black_box(&raw), &opts, &mut scales, &mut elements).unwrap()
        });
        let mut out = vec![0u8; N * 4];
        let d = best(|| mx::dequantize_into(&shape, black_box(&elements), &scales, &opts, &mut out).unwrap());
        // The plain casts of the same sizes, for scale: FLOAT -> element and element -> FLOAT.
        let to = Plan::new(DType::Float, dtype, &CastOptions::default()).unwrap();
        let cast_to = best(|| to.run(black_box(&raw), &mut elements, N).unwrap());
        let from = Plan::new(dtype, DType::Float, &CastOptions::default()).unwrap();
        let cast_from = best(|| from.run(black_box(&elements), &mut out, N).unwrap());
        println!(
            "{:<10} {:>10.0} {:>7.2}x {:>10.0} {:>7.2}x {:>12.0} {:>12.0}",
            format.name(),
            rate(q),
            copy_s / q,
            rate(d),
            copy_s / d,
            rate(cast_to),
            rate(cast_from)
        );
    }
}

/// QuantizeLinear-21 per tensor (scale 0.37) into int8 (zero point 3) and float8e4m3fn, against
/// the same copy of the input.
fn quantize_linear_throughput() {
    let values: Vec<f32> = (0..N).map(|i| ((i as f32) * 0.618).sin() * 300.0).collect();
    let x = Tensor::from_f32(&values);
    let scale = Tensor::from_f32(&[0.37]).reshape(vec![]).unwrap();
    let mut copy = vec![0f32; N];
    let copy_s = best(|| {
        copy.copy_from_slice(black_box(&values));
        black_box(&mut copy);
    });
    for (dtype, zero) in [(DType::Int8, 3), (DType::Float8E4M3FN, 0)] {
        let zero = Tensor::from_codes(dtype, vec![], &[zero]).unwrap();
        let s = best(|| {
            black_box(
                quantize_linear(black_box(&x), &scale, Some(&zero), &Default::default(), 21, Profile::Spec).unwrap(),
            );
        });
        println!("QuantizeLinear f32 -> {dtype}: {:.0} M elements/s ({:.2}x the copy)", N as f64 / s / 1e6, copy_s / s);
    }
}
