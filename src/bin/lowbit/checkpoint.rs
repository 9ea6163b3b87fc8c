//! `lowbit checkpoint inspect|dequantize|compare` (quantize, which and convert in files of their own): safetensors and GGUF checkpoints, read
//! memory-mapped and streamed a piece of a tensor at a time.

use crate::{printed, Outcome};
use lowbit::checkpoint::{
    dequantize_pieces, element_steps, recognise, shard_of, write_dequantized, Checkpoint, ElementSteps, LogicalWeight,
    Selection,
};
use lowbit::{DType, Error};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Sub,
}

/// `--only` / `--skip`, the same on every checkpoint command.
#[derive(clap::Args, Clone, Default)]
pub struct Pick {
    /// Only the weights whose name (or one of whose tensors' names) matches this regular
    /// expression.
    #[arg(long, value_name = "REGEX")]
    pub only: Option<String>,
    /// Leave out the weights whose name (or one of whose tensors' names) matches this regular
    /// expression.
    #[arg(long, value_name = "REGEX")]
    pub skip: Option<String>,
}

impl Pick {
    pub fn selection(&self) -> lowbit::Result<Selection> {
        Selection::new(self.only.as_deref(), self.skip.as_deref())
    }
}

/// The logical weights of `ckpt` that `pick` selects.
fn picked(ckpt: &Checkpoint, pick: &Pick) -> lowbit::Result<Vec<LogicalWeight>> {
    let selection = pick.selection()?;
    Ok(recognise(ckpt).into_iter().filter(|w| selection.selects(w)).collect())
}

#[derive(clap::Subcommand)]
enum Sub {
    /// Every tensor (name, dtype, shape, bytes) grouped into logical weights with their
    /// convention, scheme and the evidence for it, and the problems found (bad scale codes,
    /// shapes that do not fit the convention).
    Inspect {
        /// A .safetensors file, a shard index (.json), a GGUF file, or a folder holding one.
        path: PathBuf,
        /// One JSON object instead of text.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        pick: Pick,
    },
    /// Every quantized weight decoded as its convention says, other float tensors converted to
    /// --dtype, the rest copied, into one safetensors file (written all or nothing).
    Dequantize {
        path: PathBuf,
        /// The output .safetensors file.
        #[arg(long)]
        out: PathBuf,
        /// The float type of the output.
        #[arg(long, default_value = "f32", value_parser = float_dtype)]
        dtype: DType,
        /// Weights decoded at once (each whole in memory when more than 1; one piece at a time
        /// with 1).
        #[arg(long, value_parser = crate::threads)]
        threads: Option<usize>,
        /// Do the K-th of N equal slices of the weights (K from 1), e.g. 2/4.
        #[arg(long, value_parser = crate::shard)]
        shard: Option<(usize, usize)>,
        #[command(flatten)]
        pick: Pick,
        /// Copy the tensors of a weight lowbit cannot decode as they are stored, with a warning
        /// on stderr, instead of stopping with an error naming it.
        #[arg(long)]
        keep_unsupported: bool,
    },
    /// Per logical weight and overall: identical bits, or how many decoded elements differ, the
    /// largest difference (in float32 ulps, and in ulps of the element format when both store the
    /// weight alike), the first differences, and the error measures below. Exit status 0 only
    /// when all are identical.
    ///
    /// The measures take both files' weights decoded to float32 (a = the first file's, the
    /// reference; b = the second's) over the n elements where both values are finite (the others
    /// are counted as `non_finite`), every sum accumulated in float64, overall over the pooled
    /// sums of every weight compared: max |diff| = max |a - b|; RMSE = sqrt(sum((a - b)^2) / n);
    /// SQNR = 10 log10(sum(a^2) / sum((a - b)^2)) dB (infinite, JSON null, where the sum of
    /// squared errors is 0); cosine similarity = sum(a b) / sqrt(sum(a^2) sum(b^2)) (JSON null
    /// where either sum of squares is 0).
    Compare {
        a: PathBuf,
        b: PathBuf,
        #[arg(long)]
        json: bool,
        /// Do the K-th of N equal slices of the weights (K from 1).
        #[arg(long, value_parser = crate::shard)]
        shard: Option<(usize, usize)>,
        #[command(flatten)]
        pick: Pick,
    },
    /// Quantizes the weights under a block-scaled scheme and writes them in the convention of
    /// the producer it reproduces (names, dtypes, config), or GGUF for ggml:* schemes.
    Quantize(crate::checkpoint_quantize::QuantizeArgs),
    /// Which recipe made a quantized checkpoint: its weights' originals quantized again under
    /// every recipe of the same family, ranked by the elements and scales reproduced.
    Which(crate::checkpoint_which::WhichArgs),
    /// MXFP4 / NVFP4 weights re-encoded in another convention (gpt-oss, modelopt,
    /// compressed-tensors, ggml) when it holds the same values bit for bit, else refused naming
    /// the first tensor and element it cannot hold.
    Convert(crate::checkpoint_convert::ConvertArgs),
}

fn float_dtype(text: &str) -> Result<DType, String> {
    match text {
        "f32" | "float32" => Ok(DType::Float),
        "bf16" | "bfloat16" => Ok(DType::Bfloat16),
        "f16" | "float16" => Ok(DType::Float16),
        _ => Err(format!("{} is not f32, bf16 or f16", Error::quote(text))),
    }
}

pub fn run(args: Args) -> Outcome {
    match args.command {
        Sub::Inspect { path, json, pick } => inspect(&path, json, &pick),
        Sub::Dequantize { path, out, dtype, threads, shard, pick, keep_unsupported } => {
            dequantize(&path, &out, dtype, threads, shard, &pick, keep_unsupported)
        }
        Sub::Compare { a, b, json, shard, pick } => compare(&a, &b, json, shard, &pick),
        Sub::Quantize(args) => crate::checkpoint_quantize::run(args),
        Sub::Which(args) => crate::checkpoint_which::run(args),
        Sub::Convert(args) => crate::checkpoint_convert::run(args),
    }
}

fn stored_json(ckpt: &Checkpoint, name: &str) -> serde_json::Value {
    match ckpt.tensor(name) {
        Some(t) => serde_json::json!({
            "name": t.name,
            "dtype": t.stored.to_string(),
            "shape": t.shape,
            "bytes": t.len,
            "file": ckpt.files()[t.file].display().to_string(),
            "offset": t.offset,
        }),
        None => serde_json::Value::Null,
    }
}

fn inspect(path: &std::path::Path, json: bool, pick: &Pick) -> Outcome {
    let ckpt = Checkpoint::open(path)?;
    let mut weights = picked(&ckpt, pick)?;
    for w in &mut weights {
        let found = lowbit::checkpoint::scale_problems(&ckpt, w)?;
        w.problems.extend(found);
    }
    if json {
        let list: Vec<serde_json::Value> = weights
            .iter()
            .map(|w| {
                serde_json::json!({
                    "name": w.name,
                    "convention": w.convention,
                    "scheme": w.scheme,
                    "why": w.why,
                    "shape": w.shape,
                    "tensors": w.tensors().iter().map(|n| stored_json(&ckpt, n)).collect::<Vec<_>>(),
                    "problems": w.problems,
                })
            })
            .collect();
        let files: Vec<String> = ckpt.files().iter().map(|f| f.display().to_string()).collect();
        let container = format!("{:?}", ckpt.container()).to_lowercase();
        return printed(&serde_json::json!({ "container": container, "files": files, "weights": list }).to_string());
    }
    let mut lines = vec![format!(
        "{} ({:?}, {} files, {} tensors, {} logical weights)",
        path.display(),
        ckpt.container(),
        ckpt.files().len(),
        ckpt.tensors().len(),
        weights.len()
    )];
    if ckpt.container() == lowbit::checkpoint::Container::Gguf {
        // Which llama.cpp mixture (llama_ftype) made it: general.file_type and the rules.
        if let Ok((declared, matching)) = lowbit::checkpoint::which_ggml_mixture(&ckpt) {
            lines.push(format!(
                "llama.cpp mixture: general.file_type {}; tensor types match {}",
                declared.unwrap_or("-"),
                if matching.is_empty() { "no ftype's rules".to_string() } else { matching.join(", ") }
            ));
        }
    }
    for w in &weights {
        let scheme = w.scheme.as_deref().unwrap_or("-");
        lines.push(format!("{}  {:?}  {}  scheme {scheme}", w.name, w.shape, w.convention));
        if w.convention != "plain" {
            lines.push(format!("    why: {}", w.why));
        }
        for name in w.tensors() {
            if let Some(t) = ckpt.tensor(name) {
                lines.push(format!("    {}  {}  {:?}  {} bytes", t.name, t.stored, t.shape, t.len));
            }
        }
        for p in &w.problems {
            lines.push(format!("    problem: {p}"));
        }
    }
    printed(&lines.join("\n"))
}

fn dequantize(
    path: &std::path::Path,
    out: &std::path::Path,
    float: DType,
    threads: Option<usize>,
    shard: Option<(usize, usize)>,
    pick: &Pick,
    keep_unsupported: bool,
) -> Outcome {
    let ckpt = Checkpoint::open(path)?;
    let weights = shard_of(picked(&ckpt, pick)?, shard)?;
    let threads = crate::threads_or_all(threads).max(1);
    let bar = crate::progress::Progress::new("tensors");
    let total: usize = weights.iter().map(|w| if w.problems.is_empty() { 1 } else { w.tensors().len() }).sum();
    let kept = write_dequantized(&ckpt, &weights, out, float, threads, keep_unsupported, &mut |k| bar.show(k, total))?;
    for note in kept {
        eprintln!("warning: {note}");
    }
    Ok(ExitCode::SUCCESS)
}

/// One weight's comparison.
struct Difference {
    name: String,
    identical_bits: bool,
    elements: u64,
    differing: u64,
    largest_abs: f64,
    largest_ulps: u64,
    /// In the element format, when both store the weight alike.
    element_steps: Option<ElementSteps>,
    first: Vec<(u64, f32, f32)>,
    note: Option<String>,
    error: ErrorSums,
}

/// The float64 sums the error measures come from (the `compare` help defines them).
#[derive(Clone, Copy, Default)]
struct ErrorSums {
    finite: u64,
    non_finite: u64,
    reference_squares: f64,
    other_squares: f64,
    products: f64,
    error_squares: f64,
    largest: f64,
}

impl ErrorSums {
    fn add(&mut self, a: f32, b: f32) {
        if !(a.is_finite() && b.is_finite()) {
            self.non_finite += 1;
            return;
        }
        let (a, b) = (f64::from(a), f64::from(b));
        let d = a - b;
        self.finite += 1;
        self.reference_squares += a * a;
        self.other_squares += b * b;
        self.products += a * b;
        self.error_squares += d * d;
        self.largest = self.largest.max(d.abs());
    }

    fn pool(&mut self, o: &ErrorSums) {
        self.finite += o.finite;
        self.non_finite += o.non_finite;
        self.reference_squares += o.reference_squares;
        self.other_squares += o.other_squares;
        self.products += o.products;
        self.error_squares += o.error_squares;
        self.largest = self.largest.max(o.largest);
    }

    fn rmse(&self) -> Option<f64> {
        (self.finite > 0).then(|| (self.error_squares / self.finite as f64).sqrt())
    }

    /// None where the error is zero (infinite SQNR) or there is nothing to measure.
    fn sqnr_db(&self) -> Option<f64> {
        (self.error_squares > 0.0).then(|| 10.0 * (self.reference_squares / self.error_squares).log10())
    }

    fn cosine(&self) -> Option<f64> {
        let norms = self.reference_squares * self.other_squares;
        (norms > 0.0).then(|| self.products / norms.sqrt())
    }

    fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "max_abs_diff": self.largest,
            "rmse": self.rmse(),
            "sqnr_db": self.sqnr_db(),
            "cosine_similarity": self.cosine(),
            "finite_elements": self.finite,
            "non_finite": self.non_finite,
        })
    }

    fn text(&self) -> String {
        let shown = |v: Option<f64>, none: &str| v.map_or(none.to_string(), |v| format!("{v:.6e}"));
        format!(
            "max |diff| {:e}, RMSE {}, SQNR {} dB, cosine {}{}",
            self.largest,
            shown(self.rmse(), "-"),
            self.sqnr_db().map_or("inf".to_string(), |v| format!("{v:.3}")),
            self.cosine().map_or("-".to_string(), |v| format!("{v:.9}")),
            if self.non_finite > 0 { format!(", {} non-finite pairs", self.non_finite) } else { String::new() }
        )
    }
}

/// Distance in float32 steps (ordinal distance of the bit patterns).
fn f32_ulps(a: f32, b: f32) -> u64 {
    let key = |x: f32| {
        let bits = x.to_bits() as i64;
        if bits & 0x8000_0000 != 0 {
            0x8000_0000 - bits
        } else {
            bits
        }
    };
    key(a).abs_diff(key(b))
}

fn same_bytes(a: &Checkpoint, b: &Checkpoint, wa: &LogicalWeight, wb: &LogicalWeight) -> lowbit::Result<bool> {
    let (pa, pb) = (wa.tensors(), wb.tensors());
    if pa.len() != pb.len() || wa.scheme != wb.scheme {
        return Ok(false);
    }
    for (na, nb) in pa.iter().zip(&pb) {
        let (ta, tb) = (a.tensor(na).expect("listed"), b.tensor(nb).expect("listed"));
        if ta.stored != tb.stored || ta.shape != tb.shape {
            return Ok(false);
        }
        let mut start = 0u64;
        let (mut ba, mut bb) = (vec![0u8; 1 << 20], vec![0u8; 1 << 20]);
        while start < ta.len {
            let n = (ta.len - start).min(1 << 20) as usize;
            a.read_at(ta, start, &mut ba[..n])?;
            b.read_at(tb, start, &mut bb[..n])?;
            if ba[..n] != bb[..n] {
                return Ok(false);
            }
            start += n as u64;
        }
    }
    Ok(true)
}

fn compare_weight(
    a: &Checkpoint,
    b: &Checkpoint,
    wa: &LogicalWeight,
    wb: &LogicalWeight,
) -> lowbit::Result<Difference> {
    let mut d = Difference {
        name: wa.name.clone(),
        identical_bits: false,
        elements: wa.shape.iter().product::<usize>() as u64,
        differing: 0,
        largest_abs: 0.0,
        largest_ulps: 0,
        element_steps: None,
        first: Vec::new(),
        note: None,
        error: ErrorSums::default(),
    };
    if same_bytes(a, b, wa, wb)? {
        d.identical_bits = true;
        // The reference's sums still count (overall SQNR and cosine pool them).
        dequantize_pieces(a, wa, DType::Float, &mut |bytes| {
            for x in bytes.chunks_exact(4) {
                let x = f32::from_le_bytes(x.try_into().expect("4"));
                d.error.add(x, x);
            }
            Ok(())
        })?;
        return Ok(d);
    }
    if wa.shape != wb.shape {
        d.note = Some(format!("shapes differ: {:?} and {:?}", wa.shape, wb.shape));
        d.differing = d.elements;
        return Ok(d);
    }
    d.element_steps = element_steps(a, wa, b, wb)?;
    // B's values come from a second thread through a small queue: two pieces in flight at most.
    let (send, receive) = std::sync::mpsc::sync_channel::<lowbit::Result<Vec<u8>>>(2);
    std::thread::scope(|scope| {
        scope.spawn(move || {
            let sent = dequantize_pieces(b, wb, DType::Float, &mut |bytes| {
                send.send(Ok(bytes.to_vec())).map_err(|_| Error::TooLarge { what: "stopped".into() })
            });
            if let Err(e) = sent {
                let _ = send.send(Err(e));
            }
        });
        let mut pending: Vec<u8> = Vec::new();
        let mut index = 0u64;
        let result = dequantize_pieces(a, wa, DType::Float, &mut |bytes| {
            let mut offset = 0;
            while offset < bytes.len() {
                if pending.is_empty() {
                    pending = match receive.recv() {
                        Ok(piece) => piece?,
                        Err(_) => return Err(Error::TooLarge { what: format!("{}: B ended early", wa.name) }),
                    };
                }
                let n = pending.len().min(bytes.len() - offset);
                for (x, y) in bytes[offset..offset + n].chunks_exact(4).zip(pending[..n].chunks_exact(4)) {
                    let (x, y) =
                        (f32::from_le_bytes(x.try_into().expect("4")), f32::from_le_bytes(y.try_into().expect("4")));
                    d.error.add(x, y);
                    if x.to_bits() != y.to_bits() {
                        d.differing += 1;
                        d.largest_abs = d.largest_abs.max((f64::from(x) - f64::from(y)).abs());
                        d.largest_ulps = d.largest_ulps.max(f32_ulps(x, y));
                        if d.first.len() < 5 {
                            d.first.push((index, x, y));
                        }
                    }
                    index += 1;
                }
                pending.drain(..n);
                offset += n;
            }
            Ok(())
        });
        drop(receive);
        result
    })?;
    Ok(d)
}

fn compare(
    pa: &std::path::Path,
    pb: &std::path::Path,
    json: bool,
    shard: Option<(usize, usize)>,
    pick: &Pick,
) -> Outcome {
    let (a, b) = (Checkpoint::open(pa)?, Checkpoint::open(pb)?);
    let wa = shard_of(picked(&a, pick)?, shard)?;
    let wb = picked(&b, pick)?;
    let mut results = Vec::new();
    let mut only_a = Vec::new();
    let bar = crate::progress::Progress::new("weights");
    for (k, w) in wa.iter().enumerate() {
        bar.show(k, wa.len());
        match wb.iter().find(|x| x.name == w.name) {
            Some(other) => results.push(compare_weight(&a, &b, w, other)?),
            None => only_a.push(w.name.clone()),
        }
    }
    drop(bar);
    let only_b: Vec<String> = if shard.is_none() {
        wb.iter().filter(|w| !wa.iter().any(|x| x.name == w.name)).map(|w| w.name.clone()).collect()
    } else {
        Vec::new()
    };
    let identical =
        only_a.is_empty() && only_b.is_empty() && results.iter().all(|d| d.identical_bits || d.differing == 0);
    let mut pooled = ErrorSums::default();
    results.iter().for_each(|d| pooled.pool(&d.error));
    let text = if json {
        let list: Vec<serde_json::Value> = results
            .iter()
            .map(|d| {
                serde_json::json!({
                    "name": d.name,
                    "identical_bits": d.identical_bits,
                    "elements": d.elements,
                    "differing": d.differing,
                    "largest_abs_difference": d.largest_abs,
                    "largest_float32_ulps": d.largest_ulps,
                    "element_format": d.element_steps.map(|s| s.format.onnx_name()),
                    "largest_element_ulps": d.element_steps.map(|s| s.largest),
                    "elements_under_different_scales": d.element_steps.map(|s| s.under_different_scales),
                    "first": d.first.iter().map(|(i, x, y)| serde_json::json!([i, x, y])).collect::<Vec<_>>(),
                    "note": d.note,
                    "error": d.error.json(),
                })
            })
            .collect();
        serde_json::json!({
            "identical": identical,
            "overall": pooled.json(),
            "weights": list,
            "only_in_a": only_a,
            "only_in_b": only_b,
        })
        .to_string()
    } else {
        let mut lines = Vec::new();
        for d in &results {
            lines.push(if d.identical_bits {
                format!("{}: identical bits", d.name)
            } else if d.differing == 0 {
                format!("{}: stored differently, same {} decoded values", d.name, d.elements)
            } else {
                let first: Vec<String> = d.first.iter().map(|(i, x, y)| format!("[{i}] {x:e} vs {y:e}")).collect();
                let steps = d.element_steps.map_or(String::new(), |s| {
                    let under = if s.under_different_scales > 0 {
                        format!(", {} elements under different scales", s.under_different_scales)
                    } else {
                        String::new()
                    };
                    format!(", {} {} ulps{under}", s.largest, s.format.onnx_name())
                });
                format!(
                    "{}: {} of {} elements differ, largest difference {:e} ({} float32 ulps{steps}){}; {}; first: {}",
                    d.name,
                    d.differing,
                    d.elements,
                    d.largest_abs,
                    d.largest_ulps,
                    d.note.as_ref().map_or(String::new(), |n| format!(" ({n})")),
                    d.error.text(),
                    first.join(", ")
                )
            });
        }
        lines.extend(only_a.iter().map(|n| format!("{n}: only in {}", pa.display())));
        lines.extend(only_b.iter().map(|n| format!("{n}: only in {}", pb.display())));
        lines.push(format!("overall: {}", pooled.text()));
        lines.push(if identical { "identical".into() } else { "different".into() });
        lines.join("\n")
    };
    crate::print_text(&text)?;
    Ok(crate::exit(identical))
}
