//! float32 <-> float16 and bfloat16: lowbit's plans against the `half` crate's slice conversions
//! (its F16C path where the CPU has one) and a copy of the same bytes, all in this process
//! (`cargo bench --bench half_pairs`). The table printed at the end gives the ratios.

use criterion::{criterion_group, Criterion, Throughput};
use half::slice::HalfFloatSliceExt;
use half::{bf16, f16};
use lowbit::CastOptions;
use lowbit::DType;
use lowbit::Plan;
use std::hint::black_box;
use std::time::Instant;

const N: usize = 1 << 22;

/// Normal-ish values times 100, the distribution `lowbit bench` uses.
fn inputs() -> Vec<f32> {
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    (0..N)
        .map(|_| {
            let mut sum = 0.0;
            for _ in 0..4 {
                state ^= state >> 12;
                state ^= state << 25;
                state ^= state >> 27;
                sum += (state.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64;
            }
            ((sum - 2.0) * 173.2) as f32
        })
        .collect()
}

fn bytes_of(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// One pair's contenders: (name, run once).
type Contender<'a> = (&'static str, Box<dyn FnMut() + 'a>);

fn contenders<'a>(pair: &'static str, src: &'a [f32], raw32: &'a [u8]) -> Vec<Contender<'a>> {
    let plan = |from, to| Plan::new(from, to, &CastOptions::default()).unwrap();
    let mut copy = vec![0f32; N];
    let copy: Contender = ("copy of the float32 bytes", Box::new(move || copy.copy_from_slice(black_box(src))));
    match pair {
        "f32 -> f16" => {
            let (mut peer, mut ours, p) = (vec![f16::ZERO; N], vec![0u8; 2 * N], plan(DType::Float, DType::Float16));
            vec![
                copy,
                ("half (peer)", Box::new(move || peer.convert_from_f32_slice(black_box(src)))),
                ("lowbit plan", Box::new(move || p.run(black_box(raw32), &mut ours, N).unwrap())),
            ]
        }
        "f32 -> bf16" => {
            let (mut peer, mut ours, p) = (vec![bf16::ZERO; N], vec![0u8; 2 * N], plan(DType::Float, DType::Bfloat16));
            vec![
                copy,
                ("half (peer)", Box::new(move || peer.convert_from_f32_slice(black_box(src)))),
                ("lowbit plan", Box::new(move || p.run(black_box(raw32), &mut ours, N).unwrap())),
            ]
        }
        "f16 -> f32" => {
            let halves: Vec<f16> = src.iter().map(|&x| f16::from_f32(x)).collect();
            let raw16: Vec<u8> = halves.iter().flat_map(|h| h.to_le_bytes()).collect();
            let (mut peer, mut ours, p) = (vec![0f32; N], vec![0u8; 4 * N], plan(DType::Float16, DType::Float));
            vec![
                copy,
                ("half (peer)", Box::new(move || halves.convert_to_f32_slice(black_box(&mut peer)))),
                ("lowbit plan", Box::new(move || p.run(black_box(&raw16), &mut ours, N).unwrap())),
            ]
        }
        "bf16 -> f32" => {
            let halves: Vec<bf16> = src.iter().map(|&x| bf16::from_f32(x)).collect();
            let raw16: Vec<u8> = halves.iter().flat_map(|h| h.to_le_bytes()).collect();
            let (mut peer, mut ours, p) = (vec![0f32; N], vec![0u8; 4 * N], plan(DType::Bfloat16, DType::Float));
            vec![
                copy,
                ("half (peer)", Box::new(move || halves.convert_to_f32_slice(black_box(&mut peer)))),
                ("lowbit plan", Box::new(move || p.run(black_box(&raw16), &mut ours, N).unwrap())),
            ]
        }
        _ => unreachable!("a pair of PAIRS"),
    }
}

const PAIRS: [&str; 4] = ["f32 -> f16", "f32 -> bf16", "f16 -> f32", "bf16 -> f32"];

fn all(c: &mut Criterion) {
    let src = inputs();
    let raw32 = bytes_of(&src);
    for pair in PAIRS {
        let mut group = c.benchmark_group(pair);
        group.throughput(Throughput::Elements(N as u64));
        for (name, mut run) in contenders(pair, &src, &raw32) {
            group.bench_function(name, |b| b.iter(&mut run));
        }
        group.finish();
    }
}

criterion_group!(benches, all);

/// Ratios in one process: each contender's best of 7, rounds interleaved.
fn ratios() {
    let src = inputs();
    let raw32 = bytes_of(&src);
    println!("\n{N} elements, best of 7 interleaved rounds, this process (M elements/s):");
    for pair in PAIRS {
        let mut runs = contenders(pair, &src, &raw32);
        let mut best = vec![f64::INFINITY; runs.len()];
        for _ in 0..7 {
            for (b, (_, run)) in best.iter_mut().zip(runs.iter_mut()) {
                let t = Instant::now();
                run();
                *b = b.min(t.elapsed().as_secs_f64());
            }
        }
        let rate = |t: f64| N as f64 / t / 1e6;
        let ours = best[runs.len() - 1];
        println!(
            "  {pair:<12} copy {:>7.0}   half {:>7.0}   lowbit {:>7.0}   lowbit/half {:.2}x   lowbit/copy {:.2}x",
            rate(best[0]),
            rate(best[1]),
            rate(ours),
            best[1] / ours,
            best[0] / ours
        );
    }
}

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    ratios();
}
