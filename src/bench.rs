//! `lowbit bench`: throughput of the conversion paths, each against baselines run in the same
//! process (a plain copy of the same bytes, and the element-by-element reference path), reported
//! as elements per second and as ratios, never as absolute times alone.

use crate::cast::cast;
use crate::convert::CastOptions;
use crate::dtype::DType;
use crate::error::Result;
use crate::tensor::Tensor;
use std::time::Instant;

/// One measured path.
#[derive(Clone, Debug)]
pub struct Measurement {
    pub name: String,
    pub elements_per_second: f64,
}

fn best_of<F: FnMut()>(reps: usize, mut f: F) -> f64 {
    (0..reps)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

/// Deterministic float32 inputs: a spread of magnitudes around the float8 ranges, some specials.
fn inputs(n: usize) -> Vec<f32> {
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    (0..n)
        .map(|i| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            match i % 97 {
                0 => f32::NAN,
                1 => f32::INFINITY,
                _ => {
                    let unit = (state >> 40) as f32 / (1u64 << 24) as f32 - 0.5;
                    unit * 2f32.powi((state % 40) as i32 - 20)
                }
            }
        })
        .collect()
}

/// Measures float32 -> `to` for `n` elements: a copy of the input bytes, the fast path of
/// [`cast`] and the reference element-by-element path (measured on a tenth of the elements).
pub fn run(to: DType, n: usize, reps: usize) -> Result<Vec<Measurement>> {
    let data = inputs(n);
    let tensor = Tensor::from_f32(&data);
    let bytes = tensor.raw().expect("float tensors are raw").to_vec();
    let mut copy = vec![0u8; bytes.len()];
    let copy_time = best_of(reps, || copy.copy_from_slice(&bytes));
    let opts = CastOptions::default();
    let mut fast = None;
    let fast_time = best_of(reps, || fast = Some(cast(&tensor, to, &opts)));
    fast.expect("ran at least once")?;
    // The kernel alone on slices (what the slice API runs), where the target has one.
    let kernel = crate::cast::float8_encoder(to, &opts).map(|encoder| {
        let mut out = vec![0u8; n];
        let t = best_of(reps, || encoder.encode_slice(&data, &mut out));
        std::hint::black_box(&out);
        t
    });
    // The reference path: the same conversion, one element at a time through the rounding core.
    let small: Vec<u64> = data[..n / 10].iter().map(|x| u64::from(x.to_bits())).collect();
    let reference_time = best_of(reps, || {
        for &c in &small {
            std::hint::black_box(crate::convert::convert_code(DType::Float, to, c, &opts).ok());
        }
    }) * 10.0;
    let mut all = vec![
        Measurement { name: "copy (baseline)".into(), elements_per_second: n as f64 / copy_time },
        Measurement { name: format!("lowbit cast FLOAT -> {to} (tensor)"), elements_per_second: n as f64 / fast_time },
    ];
    if let Some(t) = kernel {
        all.push(Measurement { name: "float8 kernel on slices".into(), elements_per_second: n as f64 / t });
    }
    all.push(Measurement {
        name: "reference path (rounding core per element)".into(),
        elements_per_second: n as f64 / reference_time,
    });
    Ok(all)
}

/// The report `lowbit bench` prints: elements/s and the ratio to the copy baseline.
#[must_use]
pub fn report(measurements: &[Measurement]) -> String {
    let base = measurements.first().map_or(1.0, |m| m.elements_per_second);
    measurements
        .iter()
        .map(|m| {
            format!(
                "{:<44} {:>8.1} M elements/s  {:>6.3} x copy",
                m.name,
                m.elements_per_second / 1e6,
                m.elements_per_second / base
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}
