//! `lowbit checkpoint quantize`: a checkpoint's weights quantized under a block-scaled scheme
//! and written in the convention of the producer the scheme reproduces.

use crate::{printed, Outcome};
use lowbit::checkpoint::{ggml_mixture_of_scheme, quantize_checkpoint, quantize_ggml_mixture, Checkpoint, Selection};
use lowbit::quant::blocks::Scheme;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct QuantizeArgs {
    /// A .safetensors file, a shard index (.json), a GGUF file, or a folder holding one.
    path: PathBuf,
    /// The scheme (`lowbit schemes`): ocp:mxfp4 / torchao:mxfp4,scale=... (gpt-oss layout),
    /// modelopt:nvfp4, compressed-tensors:nvfp4|mxfp4, fp8:..., deepseek:fp8, ggml:... (GGUF);
    /// ggml:FTYPE in upper case (ggml:Q4_K_M) for llama.cpp's mixture of that ftype.
    #[arg(long)]
    scheme: String,
    /// With a ggml:FTYPE mixture: llama-imatrix's importance matrix (its GGUF form).
    #[arg(long)]
    imatrix: Option<PathBuf>,
    /// Quantize only the tensors whose name matches this regular expression (instead of the
    /// default: 2-D+ float `*weight` tensors except embeddings, norms, heads and routers).
    #[arg(long, value_name = "REGEX")]
    only: Option<String>,
    /// Never quantize the tensors whose name matches this regular expression.
    #[arg(long, value_name = "REGEX")]
    skip: Option<String>,
    /// Copy a selected weight the scheme cannot take (its dtype, or a last dimension that is not a
    /// whole number of blocks) as it is, with a warning on stderr, instead of stopping with an
    /// error naming it.
    #[arg(long)]
    keep_unsupported: bool,
    /// The output: a folder (model.safetensors and the convention's config files), or a .gguf
    /// file for the ggml:* schemes. Written all or nothing.
    #[arg(long)]
    out: PathBuf,
    /// Tensors quantized at once.
    #[arg(long, value_parser = crate::threads)]
    threads: Option<usize>,
    /// Do the K-th of N equal slices of the tensors (K from 1), e.g. 2/4.
    #[arg(long, value_parser = crate::shard)]
    shard: Option<(usize, usize)>,
    /// Print every tensor's fate (quantized or kept, and why).
    #[arg(long)]
    verbose: bool,
}

pub fn run(args: QuantizeArgs) -> Outcome {
    if let Some(ftype) = ggml_mixture_of_scheme(&args.scheme) {
        let written = quantize_ggml_mixture(&args.path, ftype, args.imatrix.as_deref(), &args.out)?;
        let mut lines = Vec::new();
        if args.verbose {
            for t in &written {
                lines.push(format!("{}: {}{}", t.name, t.ggml.name(), if t.converted { "" } else { " (copied)" }));
            }
        }
        let converted = written.iter().filter(|t| t.converted).count();
        lines.push(format!(
            "{converted} of {} tensors converted under llama.cpp's {ftype} mixture; wrote {}",
            written.len(),
            args.out.display()
        ));
        return printed(&lines.join("\n"));
    }
    let scheme = Scheme::parse(&args.scheme)?;
    let selection = Selection {
        keep_unsupported: args.keep_unsupported,
        ..Selection::new(args.only.as_deref(), args.skip.as_deref())?
    };
    let ckpt = Checkpoint::open(&args.path)?;
    let threads = crate::threads_or_all(args.threads);
    let bar = crate::progress::Progress::new("tensors");
    let report = quantize_checkpoint(&ckpt, &scheme, &selection, &args.out, threads, args.shard, &mut |k, n| {
        bar.show(k, n);
    })?;
    drop(bar);
    for c in report.choices.iter().filter(|c| c.unsupported) {
        eprintln!("warning: {}: {}", c.name, c.why);
    }
    let quantized = report.choices.iter().filter(|c| c.quantized).count();
    let mut lines = Vec::new();
    if args.verbose {
        for c in &report.choices {
            lines.push(format!("{}: {} ({})", c.name, if c.quantized { "quantized" } else { "kept" }, c.why));
        }
    }
    let files: Vec<String> = report.written.iter().map(|p| p.display().to_string()).collect();
    lines.push(format!(
        "{quantized} of {} tensors quantized under {}; wrote {}",
        report.choices.len(),
        scheme.name(),
        files.join(", ")
    ));
    printed(&lines.join("\n"))
}
