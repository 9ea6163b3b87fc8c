//! Slice copies contiguous inner runs whole; this compares it, in one process, with a naive copy
//! of the same slice one element at a time (index arithmetic per element, as a reference
//! implementation would write it). `cargo bench --bench slice`; the ratio of the two times per
//! group is the speed-up.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use lowbit::ops::slice_lists;
use lowbit::packing;
use lowbit::DType;
use lowbit::Profile;
use lowbit::Tensor;
use std::hint::black_box;

const SHAPE: [usize; 3] = [64, 64, 256];
/// Per axis: start, end (step 1). The last axis keeps 224 of 256 elements: runs of 224.
const BOUNDS: [(usize, usize); 3] = [(8, 56), (0, 64), (16, 240)];

/// The same slice, element by element: every output position's input index is computed from its
/// multi-index, and each element moved on its own.
fn per_element(dtype: DType, src: &[u8]) -> Vec<u8> {
    let counts: Vec<usize> = BOUNDS.iter().map(|(s, e)| e - s).collect();
    let n: usize = counts.iter().product();
    let mut out = vec![0u8; packing::raw_len(dtype, n).unwrap()];
    let width = (dtype.bits().unwrap() / 8) as usize;
    for j in 0..n {
        let (mut rest, mut i) = (j, 0);
        let mut stride = 1;
        for a in (0..3).rev() {
            i += (BOUNDS[a].0 + rest % counts[a]) * stride;
            rest /= counts[a];
            stride *= SHAPE[a];
        }
        if width == 0 {
            packing::set(dtype, &mut out, j, packing::get(dtype, src, i));
        } else {
            out[j * width..(j + 1) * width].copy_from_slice(&src[i * width..(i + 1) * width]);
        }
    }
    out
}

fn bench(c: &mut Criterion) {
    let n: usize = SHAPE.iter().product();
    let starts: Vec<i64> = BOUNDS.iter().map(|b| b.0 as i64).collect();
    let ends: Vec<i64> = BOUNDS.iter().map(|b| b.1 as i64).collect();
    let mut group = c.benchmark_group("slice_64x64x256_to_48x64x224");
    for dtype in [DType::Float, DType::Int4] {
        let codes: Vec<u64> = (0..n as u64).map(|i| (i * 2_654_435_761) & dtype.code_mask()).collect();
        let data = Tensor::from_codes(dtype, SHAPE.to_vec(), &codes).unwrap();
        let raw = data.raw().unwrap();
        let fast = slice_lists(&data, &starts, &ends, None, None, Profile::Spec).unwrap();
        assert_eq!(fast.raw().unwrap(), per_element(dtype, raw).as_slice(), "the two copies agree");
        group.bench_function(BenchmarkId::new("runs", dtype), |b| {
            b.iter(|| slice_lists(black_box(&data), &starts, &ends, None, None, Profile::Spec).unwrap())
        });
        group.bench_function(BenchmarkId::new("per_element", dtype), |b| b.iter(|| per_element(dtype, black_box(raw))));
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
