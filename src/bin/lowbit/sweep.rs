//! `lowbit sweep`: every pattern of a source through one configuration.

use crate::verify as glue;
use crate::{print_text, Outcome, Rounding, VerifyFormats};
use std::io::Write;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    formats: VerifyFormats,
    #[command(flatten)]
    rounding: Rounding,
    /// A configuration instead of the flags above (see `lowbit diff --help`), for example
    /// profile=onnxruntime,saturate=1 for ONNX Cast (values only).
    #[arg(long)]
    config: Option<String>,
    /// Threads (default: every core; at least 1).
    #[arg(long, value_parser = crate::threads)]
    threads: Option<usize>,
    /// One JSON object instead of the report: {"settings": {"round": WORD, "tininess": WORD or
    /// null (ONNX Cast), "saturate": bool}, "sha256", "patterns", "classes": {CLASS: N},
    /// "flags": {FLAG: N}}. The report's second line names the settings that applied.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Outcome {
    let defaults = args.rounding.options(&args.formats.from, &args.formats.to)?;
    let config = match args.config {
        Some(text) => lowbit::verify::config::Config::parse(&text, defaults)?,
        None => lowbit::verify::config::Config::ieee(defaults),
    };
    let threads = crate::threads_or_all(args.threads);
    let (report, seconds) = glue::run_sweep(&args.formats.from, &args.formats.to, &config, threads, args.json)?;
    print_text(&report)?;
    // The time is not part of the result: standard error.
    let _ = writeln!(std::io::stderr(), "swept in {seconds:.2} s");
    Ok(ExitCode::SUCCESS)
}
