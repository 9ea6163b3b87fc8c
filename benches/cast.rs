//! float32 -> E4M3FN and back: lowbit against the `float8` crate (the peer baseline of
//! research/perf_baselines.md) and a plain copy, all in this process. Criterion measures each; the
//! table printed at the end gives the ratios (`cargo bench --bench cast`).

use criterion::{criterion_group, Criterion, Throughput};
use lowbit::NarrowFloatSliceExt;
use lowbit::F8E4M3FN;
use std::hint::black_box;
use std::time::Instant;

const N: usize = 1 << 22;

fn inputs() -> Vec<f32> {
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    (0..N)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            ((state >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 2f32.powi((state % 24) as i32 - 12)
        })
        .collect()
}

fn encode(c: &mut Criterion) {
    let src = inputs();
    let mut group = c.benchmark_group("f32 -> e4m3fn");
    group.throughput(Throughput::Elements(N as u64));
    group.bench_function("copy (baseline)", |b| {
        let mut dst = vec![0f32; N];
        b.iter(|| dst.copy_from_slice(black_box(&src)))
    });
    group.bench_function("float8 crate (peer baseline)", |b| {
        let mut dst = vec![float8::F8E4M3::ZERO; N];
        b.iter(|| {
            for (d, &s) in dst.iter_mut().zip(black_box(&src)) {
                *d = float8::F8E4M3::from_f32(s);
            }
        })
    });
    group.bench_function("lowbit slice", |b| {
        let mut dst = vec![F8E4M3FN::ZERO; N];
        b.iter(|| dst.convert_from_f32_slice(black_box(&src)).unwrap())
    });
    group.finish();
}

fn decode(c: &mut Criterion) {
    let mut codes = vec![F8E4M3FN::ZERO; N];
    codes.convert_from_f32_slice(&inputs()).unwrap();
    let mut group = c.benchmark_group("e4m3fn -> f32");
    group.throughput(Throughput::Elements(N as u64));
    group.bench_function("float8 crate (peer baseline)", |b| {
        let peer: Vec<float8::F8E4M3> = codes.iter().map(|c| float8::F8E4M3::from_bits(c.to_bits())).collect();
        let mut dst = vec![0f32; N];
        b.iter(|| {
            for (d, s) in dst.iter_mut().zip(black_box(&peer)) {
                *d = s.to_f32();
            }
        })
    });
    group.bench_function("lowbit slice", |b| {
        let mut dst = vec![0f32; N];
        b.iter(|| black_box(&codes).convert_to_f32_slice(&mut dst).unwrap())
    });
    group.finish();
}

criterion_group!(benches, encode, decode);

fn best_of<F: FnMut()>(mut f: F) -> f64 {
    (0..7)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

/// Ratios in one process: lowbit against the peer and against a copy of the same data.
fn ratios() {
    let src = inputs();
    let mut copy = vec![0f32; N];
    let mut peer = vec![float8::F8E4M3::ZERO; N];
    let mut ours = vec![F8E4M3FN::ZERO; N];
    let t_copy = best_of(|| {
        copy.copy_from_slice(black_box(&src));
        black_box(&mut copy);
    });
    let t_peer = best_of(|| {
        for (d, &s) in peer.iter_mut().zip(black_box(&src)) {
            *d = float8::F8E4M3::from_f32(s);
        }
        black_box(&mut peer);
    });
    let t_ours = best_of(|| {
        ours.convert_from_f32_slice(black_box(&src)).unwrap();
        black_box(&mut ours);
    });
    let t_scalar = best_of(|| {
        for (d, &s) in ours.iter_mut().zip(black_box(&src)) {
            *d = F8E4M3FN::from_f32(s);
        }
        black_box(&mut ours);
    });
    let mut back = vec![0f32; N];
    let t_peer_back = best_of(|| {
        for (d, s) in back.iter_mut().zip(black_box(&peer)) {
            *d = s.to_f32();
        }
        black_box(&mut back);
    });
    let t_scalar_back = best_of(|| {
        for (d, s) in back.iter_mut().zip(black_box(&ours)) {
            *d = s.to_f32();
        }
        black_box(&mut back);
    });
    let rate = |t: f64| N as f64 / t / 1e6;
    println!("\nf32 -> e4m3fn, {N} elements, best of 7, this process:");
    println!("  copy          {:>8.1} M elements/s", rate(t_copy));
    println!("  float8 crate  {:>8.1} M elements/s", rate(t_peer));
    println!(
        "  lowbit        {:>8.1} M elements/s  = {:.1} x the float8 crate, {:.2} x copy",
        rate(t_ours),
        t_peer / t_ours,
        t_copy / t_ours
    );
    println!(
        "  scalar from_f32: lowbit {:>8.1}, float8 crate {:>8.1} M elements/s = {:.1} x",
        rate(t_scalar),
        rate(t_peer),
        t_peer / t_scalar
    );
    println!(
        "  scalar to_f32:   lowbit {:>8.1}, float8 crate {:>8.1} M elements/s = {:.1} x",
        rate(t_scalar_back),
        rate(t_peer_back),
        t_peer_back / t_scalar_back
    );
}

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    ratios();
}
