//! `lowbit bench`: throughput of one conversion, against baselines run in the same process (a copy
//! of the same bytes, and the element-by-element reference path through the rounding core),
//! reported as elements per second and as ratios, never as absolute times alone.

use lowbit::cast;
use lowbit::packing;
use lowbit::profile::NumberStyle;
use lowbit::strings::{self};
use lowbit::Plan;
use lowbit::{convert_code, CastOptions};
use lowbit::{DType, Kind};
use lowbit::{Data, Tensor};
use lowbit::{Error, Result};
use std::time::Instant;

/// The largest element count `lowbit bench` accepts (2^28: 2 GiB of float64 input and as much
/// output, within the memory of a small machine).
pub const MAX_ELEMENTS: usize = 1 << 28;

/// What to measure.
#[derive(Clone, Copy, Debug)]
pub struct Config {
    pub from: DType,
    pub to: DType,
    pub elements: usize,
    /// Threads for lowbit's run (the baselines are single-threaded).
    pub threads: usize,
    /// Timed runs per path; the best is kept.
    pub reps: usize,
    pub opts: CastOptions,
}

/// Throughputs in million elements per second.
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    pub config_from: DType,
    pub config_to: DType,
    pub elements: usize,
    pub threads: usize,
    /// lowbit's plan (or, with a STRING side, `cast`) into a buffer allocated once.
    pub lowbit: f64,
    /// A copy of the numeric side's bytes (the source of an encode, the output of a decode).
    pub copy: f64,
    /// The element-by-element reference path (the rounding core, or the exact string code),
    /// measured on up to 2^20 elements (2^16 with a STRING side).
    pub reference: f64,
}

fn best_of<F: FnMut() -> Result<()>>(reps: usize, mut f: F) -> Result<f64> {
    f()?;
    let mut best = f64::INFINITY;
    for _ in 0..reps {
        let t = Instant::now();
        f()?;
        best = best.min(t.elapsed().as_secs_f64());
    }
    Ok(best)
}

/// A reproducible generator (xorshift64*), so every run and every peer script sees the same data.
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Approximately normal (a sum of four uniforms), scaled by 100 as in docs/research/perf_baselines.md.
    fn normal_times_100(&mut self) -> f64 {
        let sum: f64 = (0..4).map(|_| (self.next() >> 11) as f64 / (1u64 << 53) as f64).sum();
        (sum - 2.0) * 173.2
    }
}

/// The benchmark's input for a source dtype: float32 and float64 are normal-ish values times 100
/// with +Inf, -Inf and NaN at every 997th element; every other numeric dtype takes uniformly random
/// codes (every pattern equally likely); STRING takes the shortest round-trip text of float32 values.
pub fn input(from: DType, n: usize) -> Result<Tensor> {
    let mut rng = Random(0x9E37_79B9_7F4A_7C15);
    let special = |i: usize| match i % 997 {
        0 => Some(f64::NAN),
        1 => Some(f64::INFINITY),
        2 => Some(f64::NEG_INFINITY),
        _ => None,
    };
    match from {
        DType::Float | DType::Double | DType::String => {
            let values = (0..n).map(|i| special(i).unwrap_or_else(|| rng.normal_times_100()));
            Ok(match from {
                DType::Double => Tensor::from_f64(&values.collect::<Vec<_>>()),
                DType::Float => Tensor::from_f32(&values.map(|v| v as f32).collect::<Vec<_>>()),
                _ => {
                    let texts = values
                        .map(|v| strings::format_code(DType::Float, u64::from((v as f32).to_bits()), NumberStyle::Spec))
                        .collect::<Result<Vec<_>>>()?;
                    Tensor::from_strings(vec![n], texts)?
                }
            })
        }
        _ => {
            let mask = from.code_mask();
            let codes: Vec<u64> = (0..n).map(|_| rng.next() & mask).collect();
            Tensor::from_codes(from, vec![n], &codes)
        }
    }
}

fn numeric_bytes(dtype: DType, n: usize) -> Result<usize> {
    match dtype.kind() {
        Kind::String => Ok(4 * n),
        _ => packing::raw_len(dtype, n),
    }
}

/// Refuses a run that would not fit: at its peak a run holds the generated values (8 bytes each;
/// about 48 for a text), the raw input, the copy baseline's two buffers and the output. Checked
/// against half the memory this process can use before anything is allocated, so a small machine
/// gets an error instead of an abort.
fn check_memory(from: DType, to: DType, n: usize, copy_bytes: usize) -> Result<()> {
    let per_text = |d: DType| if d == DType::String { 48 * n as u64 } else { 0 };
    let peak = 8 * n as u64
        + numeric_bytes(from, n)? as u64
        + 2 * copy_bytes as u64
        + numeric_bytes(to, n)? as u64
        + per_text(from)
        + per_text(to);
    let limit = lowbit::onnx::limits::Limits::for_this_machine().max_memory;
    if peak > limit {
        return Err(Error::TooLarge {
            what: format!(
                "--elements {n}: a {from} -> {to} benchmark holds about {peak} bytes, more than the {limit} bytes \
                 (half of the memory this process can use) it may take"
            ),
        });
    }
    Ok(())
}

/// Runs the measurement; returns the report and the input it used.
pub fn run(config: &Config) -> Result<(Report, Tensor)> {
    let Config { from, to, elements: n, threads, reps, opts } = *config;
    if n == 0 || n > MAX_ELEMENTS {
        return Err(Error::TooLarge {
            what: format!("--elements {n}: lowbit bench takes 1 to {MAX_ELEMENTS} elements"),
        });
    }
    let copy_bytes = numeric_bytes(from, n)?.max(numeric_bytes(to, n)?);
    check_memory(from, to, n, copy_bytes)?;
    let data = input(from, n)?;
    let copy_src = vec![0x5Au8; copy_bytes];
    let mut copy_dst = vec![0u8; copy_bytes];
    let copy = best_of(reps, || {
        copy_dst.copy_from_slice(std::hint::black_box(&copy_src));
        std::hint::black_box(&copy_dst);
        Ok(())
    })?;
    // A sample for the reference path, which runs at tens of millions of elements per second.
    let sample = n.min(1 << 20);
    let (lowbit, reference) = match data.data() {
        Data::Raw(raw) if to != DType::String => {
            let plan = Plan::new(from, to, &opts)?;
            let mut out = vec![0u8; packing::raw_len(to, n)?];
            let lowbit = best_of(reps, || plan.run_parallel(raw, &mut out, n, threads))?;
            let codes: Vec<u64> = (0..sample).map(|i| packing::get(from, raw, i)).collect();
            let reference = best_of(reps.min(3), || {
                for &c in &codes {
                    std::hint::black_box(convert_code(from, to, c, &opts)?);
                }
                Ok(())
            })?;
            (lowbit, reference * n as f64 / sample as f64)
        }
        _ => {
            // STRING on either side: the tensor Cast, against the exact string code element by
            // element on a smaller sample (it runs at about a million elements per second).
            let lowbit = best_of(reps, || cast(&data, to, &opts).map(drop))?;
            let policy = opts.profile.policy().for_cast(from, to);
            let sample = n.min(1 << 16);
            let reference = match data.data() {
                Data::Strings(texts) => best_of(reps.min(3), || {
                    for text in texts.iter().take(sample) {
                        std::hint::black_box(strings::parse_to_code(text, to, policy.strings.grammar, &opts)?);
                    }
                    Ok(())
                })?,
                Data::Raw(raw) => best_of(reps.min(3), || {
                    // Kept, as a cast keeps them: freeing each text at once would let the
                    // allocator hand the same block back every time.
                    let texts = (0..sample)
                        .map(|i| strings::format_code(from, packing::get(from, raw, i), policy.strings.number_style))
                        .collect::<Result<Vec<_>>>()?;
                    std::hint::black_box(texts);
                    Ok(())
                })?,
            };
            (lowbit, reference * n as f64 / sample as f64)
        }
    };
    let per_s = |t: f64| n as f64 / t / 1e6;
    let report = Report {
        config_from: from,
        config_to: to,
        elements: n,
        threads,
        lowbit: per_s(lowbit),
        copy: per_s(copy),
        reference: per_s(reference),
    };
    Ok((report, data))
}

impl Report {
    /// The JSON object of `lowbit bench --json`.
    #[must_use]
    pub fn json(&self) -> String {
        serde_json::json!({
            "from": self.config_from.onnx_name(),
            "to": self.config_to.onnx_name(),
            "elements": self.elements,
            "threads": self.threads,
            "m_elements_per_s": { "lowbit": round1(self.lowbit), "copy": round1(self.copy), "reference": round1(self.reference) },
        })
        .to_string()
    }

    /// The human-readable report: elements/s and ratios to the copy and the reference path.
    #[must_use]
    pub fn table(&self) -> String {
        let rows = [
            (format!("lowbit {} -> {} ({} thread(s))", self.config_from, self.config_to, self.threads), self.lowbit),
            ("copy of the same bytes (baseline)".to_string(), self.copy),
            ("reference path (exact code per element)".to_string(), self.reference),
        ];
        rows.iter()
            .map(|(name, v)| {
                format!(
                    "{name:<52} {v:>9.1} M elements/s  {:>7.3} x copy  {:>8.1} x reference",
                    v / self.copy,
                    v / self.reference
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

// ------------------------------------------------------------------------------------------------
// Quantization: `lowbit bench --quantize` and `lowbit bench --mx`
// ------------------------------------------------------------------------------------------------

/// The length of the last axis of the quantization benchmarks' input `[elements / 1024, 1024]`:
/// blocks run along it.
pub const QUANTIZE_ROW: usize = 1024;

/// What a quantization benchmark times, on float32 input of shape `[elements / 1024, 1024]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QuantizeOp {
    /// ONNX QuantizeLinear at [`crate::quantize::LINEAR_OPSET`] into `to` (no zero point;
    /// `output_dtype`): one scale ([`linear_scales`]) for the tensor, or one per block of
    /// `block_size` along the last axis.
    Linear { to: DType, block_size: Option<usize> },
    /// MX quantize (scales and elements) and dequantize (to float32), blocks of `block_size`
    /// along the last axis.
    Mx { format: lowbit::quant::mx::MxFormat, block_size: usize },
}

/// A quantization benchmark.
#[derive(Clone, Copy, Debug)]
pub struct QuantizeConfig {
    pub op: QuantizeOp,
    pub elements: usize,
    /// Timed runs; the best is kept.
    pub reps: usize,
}

/// Throughputs of a quantization benchmark in million elements per second.
#[derive(Clone, Debug, PartialEq)]
pub struct QuantizeReport {
    pub op: QuantizeOp,
    pub elements: usize,
    /// QuantizeLinear, or MX quantize, into buffers allocated once.
    pub quantize: f64,
    /// MX dequantize into a float32 buffer allocated once.
    pub dequantize: Option<f64>,
    /// A copy of the float32 input's bytes.
    pub copy: f64,
}

/// The scales of the QuantizeLinear benchmark, reproducible by the peer scripts: `s0 = 400 / M`
/// rounded to float32, where M is the largest finite value of `to` (the input's finite values lie
/// within ±347), and for block `b` (row-major over the scales) `s0 * (1 + (b % 4) / 4)` in float32.
pub fn linear_scales(to: DType, count: usize) -> Result<Vec<f32>> {
    let largest = match to.kind() {
        Kind::Integer { .. } => to.integer_range().expect("an integer dtype").1 as f64,
        Kind::Float(f) => f.to_f64(f.max_code()),
        _ => {
            return Err(Error::InvalidOp {
                op: "bench --quantize".into(),
                message: format!("{to} is not a quantized type"),
            })
        }
    };
    let s0 = (400.0 / largest) as f32;
    Ok((0..count).map(|b| s0 * (1.0 + (b % 4) as f32 / 4.0)).collect())
}

/// A quantization benchmark's element count: a multiple of the row, within the limit, and room for
/// the input, its copy's two buffers, a float32 output (dequantize) and smaller outputs.
fn check_quantize_count(n: usize) -> Result<()> {
    if n == 0 || n > MAX_ELEMENTS || n % QUANTIZE_ROW != 0 {
        return Err(Error::TooLarge {
            what: format!(
                "--elements {n}: a quantization benchmark takes a multiple of {QUANTIZE_ROW} elements, up to \
                 {MAX_ELEMENTS}"
            ),
        });
    }
    check_memory(DType::Float, DType::Float, n, 4 * n)
}

/// The best time of copying `raw` (the baseline the quantization figures are read against).
fn copy_time(raw: &[u8], reps: usize) -> Result<f64> {
    let mut copy_dst = vec![0u8; raw.len()];
    best_of(reps, || {
        copy_dst.copy_from_slice(std::hint::black_box(raw));
        std::hint::black_box(&copy_dst);
        Ok(())
    })
}

/// Runs a quantization benchmark; returns the report and the input it used.
pub fn run_quantize(config: &QuantizeConfig) -> Result<(QuantizeReport, Tensor)> {
    use lowbit::quant::mx::{self, MxOptions};
    use lowbit::quant::QuantizeAttributes;
    let QuantizeConfig { op, elements: n, reps } = *config;
    check_quantize_count(n)?;
    let shape = vec![n / QUANTIZE_ROW, QUANTIZE_ROW];
    let data = input(DType::Float, n)?.reshape(shape.clone())?;
    let raw = data.raw().expect("float32 input is raw");
    let copy = copy_time(raw, reps)?;
    let (quantize, dequantize) = match op {
        QuantizeOp::Linear { to, block_size } => {
            let (scale, axis) = match block_size {
                None => (Tensor::from_f32(&linear_scales(to, 1)?).reshape(vec![])?, None),
                Some(b) => {
                    let blocks = QUANTIZE_ROW.div_ceil(b.max(1));
                    let scales = linear_scales(to, shape[0] * blocks)?;
                    (Tensor::from_f32(&scales).reshape(vec![shape[0], blocks])?, Some(1))
                }
            };
            let attrs = QuantizeAttributes {
                axis,
                block_size: block_size.map(|b| i64::try_from(b).unwrap_or(i64::MAX)),
                output_dtype: Some(i64::from(to.onnx_number())),
                ..QuantizeAttributes::default()
            };
            let mut out = vec![0u8; packing::raw_len(to, n)?];
            let opset = crate::quantize::LINEAR_OPSET;
            let profile = lowbit::Profile::Spec;
            let q = best_of(reps, || {
                lowbit::quant::linear::quantize_linear_into(&data, &scale, None, &attrs, opset, profile, &mut out)
                    .map(drop)
            })?;
            (q, None)
        }
        QuantizeOp::Mx { format, block_size } => {
            let opts = MxOptions { block_size, ..MxOptions::new(format) };
            let mut scales = vec![0u8; mx::scales_shape(&shape, -1, block_size)?.iter().product()];
            let mut elements = vec![0u8; packing::raw_len(format.element_dtype(), n)?];
            let q = best_of(reps, || mx::quantize_into(DType::Float, &shape, raw, &opts, &mut scales, &mut elements))?;
            let mut out = vec![0u8; 4 * n];
            let d = best_of(reps, || mx::dequantize_into(&shape, &elements, &scales, &opts, &mut out))?;
            (q, Some(d))
        }
    };
    let per_s = |t: f64| n as f64 / t / 1e6;
    let report = QuantizeReport {
        op,
        elements: n,
        quantize: per_s(quantize),
        dequantize: dequantize.map(per_s),
        copy: per_s(copy),
    };
    Ok((report, data))
}

impl QuantizeReport {
    fn describe(&self) -> String {
        match self.op {
            QuantizeOp::Linear { to, block_size: None } => format!("QuantizeLinear FLOAT -> {to}, one scale"),
            QuantizeOp::Linear { to, block_size: Some(b) } => {
                format!("QuantizeLinear FLOAT -> {to}, blocks of {b} along the last axis")
            }
            QuantizeOp::Mx { format, block_size } => format!("MX {} quantize, blocks of {block_size}", format.name()),
        }
    }

    /// The JSON object of `lowbit bench --quantize/--mx --json`.
    #[must_use]
    pub fn json(&self) -> String {
        let mut figures = serde_json::json!({ "lowbit": round1(self.quantize), "copy": round1(self.copy) });
        if let Some(d) = self.dequantize {
            figures["dequantize"] = serde_json::json!(round1(d));
        }
        let (op, to, block_size) = match self.op {
            QuantizeOp::Linear { to, block_size } => ("QuantizeLinear", to.onnx_name().to_string(), block_size),
            QuantizeOp::Mx { format, block_size } => ("MX", format.name().to_string(), Some(block_size)),
        };
        serde_json::json!({
            "op": op,
            "from": "FLOAT",
            "to": to,
            "block_size": block_size,
            "elements": self.elements,
            "shape": [self.elements / QUANTIZE_ROW, QUANTIZE_ROW],
            "threads": 1,
            "m_elements_per_s": figures,
        })
        .to_string()
    }

    /// The human-readable report.
    #[must_use]
    pub fn table(&self) -> String {
        let mut rows = vec![(self.describe(), self.quantize)];
        if let (QuantizeOp::Mx { format, .. }, Some(d)) = (self.op, self.dequantize) {
            rows.push((format!("MX {} dequantize to FLOAT", format.name()), d));
        }
        rows.push(("copy of the float32 input (baseline)".to_string(), self.copy));
        rows.iter()
            .map(|(name, v)| format!("{name:<60} {v:>9.1} M elements/s  {:>7.3} x copy", v / self.copy))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// What `lowbit bench --scheme` measured: a block-scaled recipe's quantize and dequantize
/// ([`lowbit::quant::blocks`], outputs allocated by each call as the API returns them, as the
/// peers allocate theirs), and dequantize into a buffer the caller reuses (`dequantize_into`: no
/// fresh pages to fault in), on float32 `[elements / 1024, 1024]`, blocks along the last axis
/// (tiles: both).
#[derive(Clone, Debug, PartialEq)]
pub struct SchemeReport {
    pub scheme: String,
    pub elements: usize,
    pub quantize: f64,
    pub dequantize: f64,
    pub dequantize_into: f64,
    pub copy: f64,
    /// Writing float32 values (a constant) into a reused buffer, and into a new one: what one core
    /// writes, the bound of dequantize into a buffer and of dequantize allocating its output.
    pub fill: f64,
    pub fill_fresh: f64,
}

/// The input of `lowbit bench --scheme`: the Cast benchmark's normal-ish values times 100, all
/// finite (a NaN or infinity would make a two-level recipe's per-tensor scale NaN).
fn finite_input(n: usize) -> Result<Tensor> {
    let mut rng = Random(0x9E37_79B9_7F4A_7C15);
    let values: Vec<f32> = (0..n).map(|_| rng.normal_times_100() as f32).collect();
    Tensor::from_f32(&values).reshape(vec![n / QUANTIZE_ROW, QUANTIZE_ROW])
}

/// Runs `lowbit bench --scheme`; returns the report and the input it used.
pub fn run_scheme(scheme: &str, elements: usize, reps: usize) -> Result<(SchemeReport, Tensor)> {
    use lowbit::quant::blocks::{self, Scheme};
    let n = elements;
    check_quantize_count(n)?;
    let parsed = Scheme::parse(scheme)?;
    let data = finite_input(n)?;
    let values = data.to_f32_vec()?;
    let shape = data.shape().to_vec();
    let copy = copy_time(data.raw().expect("float32 input is raw"), reps)?;
    let mut q = blocks::quantize(&values, &shape, &parsed, -1, None)?;
    let quantize = best_of(reps, || {
        q = blocks::quantize(std::hint::black_box(&values), &shape, &parsed, -1, None)?;
        Ok(())
    })?;
    let dequantize = best_of(reps, || blocks::dequantize(std::hint::black_box(&q)).map(drop))?;
    let mut reused = vec![0.0f32; n];
    let dequantize_into = best_of(reps, || blocks::dequantize_into(std::hint::black_box(&q), &mut reused))?;
    let fill = best_of(reps, || {
        reused.fill(std::hint::black_box(1.5));
        std::hint::black_box(&reused);
        Ok(())
    })?;
    let fill_fresh = best_of(reps, || {
        let mut fresh = vec![0.0f32; n];
        fresh.fill(std::hint::black_box(1.5));
        std::hint::black_box(&fresh);
        Ok(())
    })?;
    let per_s = |t: f64| n as f64 / t / 1e6;
    let report = SchemeReport {
        scheme: scheme.to_string(),
        elements: n,
        quantize: per_s(quantize),
        dequantize: per_s(dequantize),
        dequantize_into: per_s(dequantize_into),
        copy: per_s(copy),
        fill: per_s(fill),
        fill_fresh: per_s(fill_fresh),
    };
    Ok((report, data))
}

impl SchemeReport {
    /// The JSON object of `lowbit bench --scheme --json`.
    #[must_use]
    pub fn json(&self) -> String {
        serde_json::json!({
            "op": "blocks",
            "scheme": self.scheme,
            "from": "FLOAT",
            "elements": self.elements,
            "shape": [self.elements / QUANTIZE_ROW, QUANTIZE_ROW],
            "threads": 1,
            "m_elements_per_s": {
                "quantize": round1(self.quantize),
                "dequantize": round1(self.dequantize),
                "dequantize_into": round1(self.dequantize_into),
                "copy": round1(self.copy),
                "fill": round1(self.fill),
                "fill_fresh": round1(self.fill_fresh),
            },
        })
        .to_string()
    }

    /// The human-readable report.
    #[must_use]
    pub fn table(&self) -> String {
        [
            (format!("{} quantize", self.scheme), self.quantize),
            (format!("{} dequantize to FLOAT", self.scheme), self.dequantize),
            (format!("{} dequantize into a reused buffer", self.scheme), self.dequantize_into),
            ("copy of the float32 input (baseline)".to_string(), self.copy),
            ("fill of a reused float32 buffer (baseline)".to_string(), self.fill),
            ("fill of a new float32 buffer (baseline)".to_string(), self.fill_fresh),
        ]
        .iter()
        .map(|(name, v)| format!("{name:<60} {v:>9.1} M elements/s  {:>7.3} x copy", v / self.copy))
        .collect::<Vec<_>>()
        .join("\n")
    }
}

/// What `lowbit bench --sweep` measured: every float32 bit pattern through one plan.
#[derive(Clone, Debug, PartialEq)]
pub struct Sweep {
    pub to: DType,
    pub threads: usize,
    pub seconds: f64,
    /// A checksum of the 2^32 outputs (order-independent mix of 64-bit words with their offsets),
    /// to tell two runs, builds or machines apart; not a cryptographic digest.
    pub checksum: u64,
}

/// Inputs per piece of the sweep: 2^16 float32s (256 KiB, in the core's L2 cache).
const SWEEP_PIECE: u64 = 1 << 16;

/// Converts all 2^32 float32 bit patterns to `to` with the plan, on up to `threads` threads, and
/// times it (the inputs are generated piece by piece on the thread that converts them).
pub fn sweep(to: DType, opts: &CastOptions, threads: usize) -> Result<Sweep> {
    use rayon::prelude::*;
    let plan = Plan::new(DType::Float, to, opts)?;
    let threads = threads.max(1);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| Error::InvalidOp { op: "threads".into(), message: e.to_string() })?;
    let piece = SWEEP_PIECE as usize;
    let out_len = packing::raw_len(to, piece)?;
    let start = Instant::now();
    let checksum = pool.install(|| {
        (0..(1u64 << 32) / SWEEP_PIECE)
            .into_par_iter()
            .map_init(
                || (vec![0u8; 4 * piece], vec![0u8; out_len]),
                |(src, dst), p| -> Result<u64> {
                    for (k, b) in src.chunks_exact_mut(4).enumerate() {
                        b.copy_from_slice(&((p * SWEEP_PIECE) as u32 + k as u32).to_le_bytes());
                    }
                    plan.run(src, dst, piece)?;
                    Ok(mix_words(p, dst))
                },
            )
            .try_reduce(|| 0, |a, b| Ok(a ^ b))
    })?;
    Ok(Sweep { to, threads, seconds: start.elapsed().as_secs_f64(), checksum })
}

/// Mixes the 64-bit words of a piece's output with the piece's index (a multiply-xorshift per
/// word, summed): cheap next to the conversion, and sensitive to any changed byte.
fn mix_words(piece: u64, bytes: &[u8]) -> u64 {
    let words = bytes.chunks_exact(8);
    let tail = words.remainder();
    let mut sum = piece.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    for (i, w) in words.enumerate() {
        let x = u64::from_le_bytes(w.try_into().expect("8 bytes")) ^ (i as u64).wrapping_mul(0xD6E8_FEB8_6659_FD93);
        let x = (x ^ (x >> 32)).wrapping_mul(0xD6E8_FEB8_6659_FD93);
        sum = sum.wrapping_add(x ^ (x >> 29));
    }
    let mut last = [0u8; 8];
    last[..tail.len()].copy_from_slice(tail);
    sum.wrapping_add(u64::from_le_bytes(last).wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

impl Sweep {
    #[must_use]
    pub fn json(&self) -> String {
        serde_json::json!({
            "from": "FLOAT",
            "to": self.to.onnx_name(),
            "elements": 1u64 << 32,
            "threads": self.threads,
            "seconds": (self.seconds * 1000.0).round() / 1000.0,
            "m_elements_per_s": round1((1u64 << 32) as f64 / self.seconds / 1e6),
            "checksum": format!("{:016x}", self.checksum),
        })
        .to_string()
    }

    #[must_use]
    pub fn table(&self) -> String {
        format!(
            "all 2^32 FLOAT -> {} on {} thread(s): {:.3} s ({:.1} M elements/s), checksum {:016x}",
            self.to,
            self.threads,
            self.seconds,
            (1u64 << 32) as f64 / self.seconds / 1e6,
            self.checksum
        )
    }
}

/// Writes the input to `path` as [`input_bytes`] gives it, all or nothing (a temporary file in
/// the same folder, renamed when complete).
pub fn write_input(path: &std::path::Path, input: &Tensor) -> Result<()> {
    let bytes = input_bytes(input);
    lowbit::staging::write_file_atomically(path, |w| std::io::Write::write_all(w, &bytes))
}

/// The input as `--write-input` writes it: ONNX raw data, or a JSON array for STRING.
pub fn input_bytes(input: &Tensor) -> Vec<u8> {
    match input.data() {
        Data::Raw(raw) => raw.clone(),
        Data::Strings(texts) => {
            let mut json = Vec::new();
            crate::cast::write_json(&mut json, texts);
            json
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_checksum_sees_every_byte_and_the_piece() {
        let bytes: Vec<u8> = (0..77u8).collect();
        let base = mix_words(3, &bytes);
        assert_ne!(base, mix_words(4, &bytes));
        for i in 0..bytes.len() {
            let mut changed = bytes.clone();
            changed[i] ^= 1;
            assert_ne!(mix_words(3, &changed), base, "byte {i}");
        }
    }

    #[test]
    fn inputs_are_reproducible_and_shaped() {
        let a = input(DType::Float, 2000).unwrap();
        assert_eq!(a, input(DType::Float, 2000).unwrap());
        let values = a.to_f32_vec().unwrap();
        assert!(values[0].is_nan() && values[1] == f32::INFINITY && values[2] == f32::NEG_INFINITY);
        assert!(values[3..997].iter().all(|v| v.is_finite()));
        assert_eq!(input(DType::Int4, 5).unwrap().raw().unwrap().len(), 3);
        assert_eq!(input(DType::String, 4).unwrap().len(), 4);
    }

    #[test]
    fn quantize_scales_follow_the_documented_rule() {
        // INT8: 400 / 127 = 3.1496..., then times 1, 1.25, 1.5, 1.75, 1.
        let s = linear_scales(DType::Int8, 5).unwrap();
        let s0 = (400.0f64 / 127.0) as f32;
        assert_eq!(s, [s0, s0 * 1.25, s0 * 1.5, s0 * 1.75, s0]);
        // E4M3FN's largest value is 448; INT4's 7.
        assert_eq!(linear_scales(DType::Float8E4M3FN, 1).unwrap(), [(400.0f64 / 448.0) as f32]);
        assert_eq!(linear_scales(DType::Int4, 1).unwrap(), [(400.0f64 / 7.0) as f32]);
        assert!(linear_scales(DType::String, 1).is_err());
    }

    #[test]
    fn quantize_benchmarks_run_and_check_their_counts() {
        let config = QuantizeConfig {
            op: QuantizeOp::Linear { to: DType::Int4, block_size: Some(32) },
            elements: 4096,
            reps: 1,
        };
        let (report, data) = run_quantize(&config).unwrap();
        assert_eq!(data.shape(), [4, 1024]);
        assert!(report.quantize > 0.0 && report.dequantize.is_none());
        assert!(report.json().contains("\"block_size\":32"), "{}", report.json());
        let mx = QuantizeOp::Mx { format: lowbit::quant::mx::MxFormat::Fp4E2M1, block_size: 32 };
        let (report, _) = run_quantize(&QuantizeConfig { op: mx, ..config }).unwrap();
        assert!(report.dequantize.is_some_and(|d| d > 0.0) && report.json().contains("\"dequantize\""));
        let err = run_quantize(&QuantizeConfig { elements: 1000, ..config }).unwrap_err().to_string();
        assert!(err.contains("multiple of 1024"), "{err}");
    }

    #[test]
    fn bad_counts_are_errors() {
        let config = Config {
            from: DType::Float,
            to: DType::Float16,
            elements: usize::MAX,
            threads: 1,
            reps: 1,
            opts: CastOptions::default(),
        };
        assert!(run(&config).unwrap_err().to_string().contains("--elements"));
        assert!(run(&Config { elements: 0, ..config }).is_err());
        let ok = run(&Config { elements: 5000, ..config }).unwrap().0;
        assert!(ok.lowbit > 0.0 && ok.json().contains("\"m_elements_per_s\""));
    }
}

/// `lowbit bench`'s flags.
#[derive(clap::Args)]
pub struct Args {
    /// Source dtype (ONNX name or alias; STRING allowed).
    #[arg(long, default_value = "float", value_parser = crate::dtype_name)]
    from: DType,
    /// Target dtype.
    #[arg(long, default_value = "float8e4m3fn", value_parser = crate::dtype_name)]
    to: DType,
    /// Elements per run (1 to 2^28; K, M suffixes).
    #[arg(short = 'n', long = "count", visible_alias = "elements", default_value = "16M", value_parser = crate::count_usize)]
    elements: usize,
    /// Threads for lowbit's run (the baselines run on one; at least 1).
    #[arg(long, default_value = "1", value_parser = crate::threads)]
    threads: usize,
    /// Timed runs per path (the best is kept).
    #[arg(long, default_value_t = 5)]
    reps: usize,
    #[command(flatten)]
    attributes: crate::Attributes,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    json: bool,
    /// Also write the measured input here (ONNX raw data; a JSON array of strings for STRING),
    /// so other implementations can be timed on the same bytes.
    #[arg(long, value_name = "PATH")]
    write_input: Option<std::path::PathBuf>,
    /// Instead: time all 2^32 float32 bit patterns into --to on --threads threads (--from must
    /// be FLOAT), with a checksum of the outputs.
    #[arg(long, conflicts_with_all = ["elements", "reps", "write_input"])]
    sweep: bool,
    /// Instead of a Cast: ONNX QuantizeLinear-28 from FLOAT into --to (no zero point; one
    /// thread), on the input shaped [elements / 1024, 1024]: one scale, or with --block-size a
    /// scale per block along the last axis. The scales are 400 / (--to's largest value) in
    /// float32, times 1, 1.25, 1.5, 1.75 for blocks 0, 1, 2, 3 (mod 4), so peers can rebuild
    /// them.
    #[arg(long, conflicts_with_all = ["sweep", "mx", "scheme", "threads"])]
    quantize: bool,
    /// Instead of a Cast: MX quantize and dequantize of FLOAT in this format (one thread), on
    /// the input shaped [elements / 1024, 1024], blocks along the last axis.
    #[arg(long, conflicts_with_all = ["sweep", "scheme", "threads"], value_parser = lowbit::quant::mx::MxFormat::NAMES)]
    mx: Option<String>,
    /// Instead of a Cast: a block-scaled recipe's quantize and dequantize (`lowbit::quant::blocks`,
    /// one thread) of finite float32 values shaped [elements / 1024, 1024], blocks along the last
    /// axis (e.g. torchao:mxfp8e4m3,scale=rceil, modelopt:nvfp4, ggml:q8_0).
    #[arg(long, value_name = "SCHEME", conflicts_with_all = ["sweep", "threads", "block_size"], value_parser = crate::blocks::scheme_name)]
    scheme: Option<String>,
    /// With --quantize or --mx: elements per block along the last axis (--mx: default 32).
    #[arg(long)]
    block_size: Option<usize>,
}

/// `lowbit bench`.
pub fn run_command(args: Args) -> crate::Outcome {
    let text = if args.sweep {
        if args.from != DType::Float {
            return Err(crate::usage(
                "bench --sweep",
                format!("the sweep is of float32 inputs; --from is {}", args.from),
            )
            .into());
        }
        let sweep = sweep(args.to, &args.attributes.options(args.to)?, args.threads)?;
        if args.json {
            sweep.json()
        } else {
            sweep.table()
        }
    } else if let Some(scheme) = &args.scheme {
        let (report, input) = run_scheme(scheme, args.elements, args.reps.max(1))?;
        written(args.write_input.as_deref(), &input)?;
        if args.json {
            report.json()
        } else {
            report.table()
        }
    } else if args.quantize || args.mx.is_some() {
        if args.from != DType::Float {
            return Err(crate::usage(
                "bench --quantize/--mx",
                format!("the quantization benchmarks take float32 input; --from is {}", args.from),
            )
            .into());
        }
        let op = match &args.mx {
            Some(format) => QuantizeOp::Mx {
                format: lowbit::quant::mx::MxFormat::parse(format)?,
                block_size: args.block_size.unwrap_or(lowbit::quant::mx::DEFAULT_BLOCK_SIZE),
            },
            None => QuantizeOp::Linear { to: args.to, block_size: args.block_size },
        };
        let config = QuantizeConfig { op, elements: args.elements, reps: args.reps.max(1) };
        let (report, input) = run_quantize(&config)?;
        written(args.write_input.as_deref(), &input)?;
        if args.json {
            report.json()
        } else {
            report.table()
        }
    } else if args.block_size.is_some() {
        return Err(crate::usage("bench", "--block-size goes with --quantize or --mx").into());
    } else {
        let config = Config {
            from: args.from,
            to: args.to,
            elements: args.elements,
            threads: args.threads,
            reps: args.reps.max(1),
            opts: args.attributes.options(args.to)?,
        };
        let (report, input) = run(&config)?;
        written(args.write_input.as_deref(), &input)?;
        if args.json {
            report.json()
        } else {
            report.table()
        }
    };
    crate::printed(&text)
}

/// Writes the measured input where --write-input asks, if it does.
fn written(path: Option<&std::path::Path>, input: &Tensor) -> Result<()> {
    path.map_or(Ok(()), |p| write_input(p, input))
}
