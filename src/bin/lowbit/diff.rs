//! `lowbit diff`: where two configurations disagree.

use crate::verify as glue;
use crate::{exit, print_text, Outcome, Rounding, VerifyFormats};

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    formats: VerifyFormats,
    #[command(flatten)]
    rounding: Rounding,
    /// Threads (default: every core; at least 1).
    #[arg(long, value_parser = crate::threads)]
    threads: Option<usize>,
    /// One JSON object instead of the report: {"a", "b" (in words), "a_settings",
    /// "b_settings" ({"round": WORD, "tininess": WORD or null (ONNX Cast), "saturate": bool}),
    /// "patterns", "values", "flags_only", "agree"}. The report's lines A = and B = name the
    /// rounding, tininess and saturation of each.
    #[arg(long)]
    json: bool,
    /// The first configuration.
    a: String,
    /// The second configuration.
    b: String,
}

pub fn run(args: Args) -> Outcome {
    let threads = crate::threads_or_all(args.threads);
    let request = glue::DiffRequest {
        from: &args.formats.from,
        to: &args.formats.to,
        a: &args.a,
        b: &args.b,
        defaults: args.rounding.options(&args.formats.from, &args.formats.to)?,
        threads,
        json: args.json,
    };
    let (report, agree) = glue::run_diff(&request)?;
    print_text(&report)?;
    Ok(exit(agree))
}
