//! `lowbit checkpoint convert`: MXFP4 / NVFP4 weights moved between the conventions that store
//! them, losslessly or not at all.

use crate::{printed, Outcome};
use lowbit::checkpoint::{convert_checkpoint, Checkpoint};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct ConvertArgs {
    /// A .safetensors file, a shard index (.json), a GGUF file, or a folder holding one.
    path: PathBuf,
    /// The target convention: gpt-oss (MXFP4), modelopt (NVFP4), compressed-tensors or ggml
    /// (GGUF) (both).
    #[arg(long, value_parser = clap::builder::PossibleValuesParser::new(lowbit::checkpoint::CONVERT_TARGETS))]
    to: String,
    /// The output: a folder (model.safetensors and the convention's config files), or a .gguf
    /// file for ggml. Written all or nothing.
    #[arg(long)]
    out: PathBuf,
    /// Weights converted at once.
    #[arg(long, value_parser = crate::threads)]
    threads: Option<usize>,
    /// Do the K-th of N equal slices of the weights (K from 1), e.g. 2/4.
    #[arg(long, value_parser = crate::shard)]
    shard: Option<(usize, usize)>,
    /// `--only` / `--skip`: the quantized weights to convert (the others are copied as they are).
    #[command(flatten)]
    pick: crate::checkpoint::Pick,
}

pub fn run(args: ConvertArgs) -> Outcome {
    let ckpt = Checkpoint::open(&args.path)?;
    let selection = args.pick.selection()?;
    let bar = crate::progress::Progress::new("tensors");
    let written = convert_checkpoint(
        &ckpt,
        &args.to,
        &args.out,
        &selection,
        crate::threads_or_all(args.threads),
        args.shard,
        &mut |k, n| {
            bar.show(k, n);
        },
    )?;
    drop(bar);
    let files: Vec<String> = written.iter().map(|p| p.display().to_string()).collect();
    printed(&format!("converted to {}: every weight dequantizes to the same bits; wrote {}", args.to, files.join(", ")))
}
