//! Single-thread throughput of the block-scaled recipes (`quant::blocks`; a measurement, not a
//! check: tests/blocks*.rs check the results): `cargo bench --bench blocks`. Quantize and
//! dequantize of 16,777,216 float32 elements (a [4096, 4096] tensor) per scheme, best of 3, with a
//! plain copy of the input measured in the same run for scale. Wall-clock time; the machine is
//! shared, so compare figures of one run only.

use lowbit::quant::blocks::{self, Scheme};
use std::hint::black_box;
use std::time::Instant;

const ROWS: usize = 4096;
const COLS: usize = 4096;

fn best(mut f: impl FnMut()) -> f64 {
    (0..3)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

fn main() {
    let n = ROWS * COLS;
    let values: Vec<f32> = (0..n).map(|i| ((i as f32) * 0.618).sin() * 300.0).collect();
    let mut copy = vec![0f32; n];
    let copy_s = best(|| {
        copy.copy_from_slice(black_box(&values));
        black_box(&mut copy);
    });
    println!("copy of the float32 input: {:.0} M elements/s", n as f64 / copy_s / 1e6);
    let only: Option<String> = std::env::args().nth(1).filter(|a| !a.starts_with('-'));
    for name in [
        "ocp:mxfp4",
        "ocp:mxfp8e4m3",
        "torchao:mxfp4,scale=floor",
        "torchao:mxfp8e4m3,scale=rceil",
        "torchao:nvfp4",
        "modelopt:nvfp4",
        "compressed-tensors:nvfp4",
        "ggml:q8_0",
        "ggml:q4_0",
        "ggml:mxfp4",
        "ggml:nvfp4",
        "deepseek:fp8",
        "fp8:channel",
    ] {
        if only.as_deref().is_some_and(|o| !name.contains(o)) {
            continue;
        }
        let scheme = Scheme::parse(name).expect("a scheme");
        let mut q = None;
        let qs = best(|| q = Some(blocks::quantize(black_box(&values), &[ROWS, COLS], &scheme, -1, None).unwrap()));
        let q = q.expect("quantized");
        let ds = best(|| {
            black_box(q.dequantize().unwrap());
        });
        println!(
            "{name:32} quantize {:7.0} M elements/s, dequantize {:7.0} M elements/s",
            n as f64 / qs / 1e6,
            n as f64 / ds / 1e6
        );
    }
}
