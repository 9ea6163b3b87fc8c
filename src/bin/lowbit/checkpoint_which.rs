//! `lowbit checkpoint which`: which recipe made a quantized checkpoint, from its original.

use crate::Outcome;
use lowbit::checkpoint::{overall, summary, which, Checkpoint};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct WhichArgs {
    /// The quantized checkpoint (a file, a shard index or a folder).
    quantized: PathBuf,
    /// The unquantized checkpoint it was made from.
    #[arg(long = "from")]
    original: PathBuf,
    /// One JSON object instead of text.
    #[arg(long)]
    json: bool,
    /// Weights examined at once.
    #[arg(long, value_parser = crate::threads)]
    threads: Option<usize>,
    /// Do the K-th of N equal slices of the weights (K from 1), e.g. 2/4.
    #[arg(long, value_parser = crate::shard)]
    shard: Option<(usize, usize)>,
    #[command(flatten)]
    pick: crate::checkpoint::Pick,
}

/// Exit status 0 when one recipe reproduces every element and scale.
pub fn run(args: WhichArgs) -> Outcome {
    let (quantized, original) = (Checkpoint::open(&args.quantized)?, Checkpoint::open(&args.original)?);
    let bar = crate::progress::Progress::new("weights");
    let selection = args.pick.selection()?;
    let threads = crate::threads_or_all(args.threads);
    let origins = which(&quantized, &original, &selection, threads, args.shard, &mut |k, n| bar.show(k, n))?;
    drop(bar);
    let totals = overall(&origins);
    let exact = totals.first().is_some_and(|r| r.elements_matched == r.elements && r.scales_matched == r.scales);
    let text = if args.json {
        let weights: Vec<serde_json::Value> = origins
            .iter()
            .map(|o| {
                serde_json::json!({
                    "name": o.name,
                    "stored_scheme": o.stored_scheme,
                    "ranking": o.ranking.iter().map(serde_json::Value::from).collect::<Vec<_>>(),
                })
            })
            .collect();
        serde_json::json!({
            "summary": summary(&totals),
            "exact": exact,
            "overall": totals.iter().map(serde_json::Value::from).collect::<Vec<_>>(),
            "weights": weights,
        })
        .to_string()
    } else {
        let mut lines = Vec::new();
        for o in &origins {
            lines.push(format!("{} (stored as {}):", o.name, o.stored_scheme));
            for r in &o.ranking {
                lines.push(format!(
                    "    {:>8.3} %  {}  ({}/{} elements, {}/{} scales){}",
                    100.0 * r.share(),
                    r.scheme,
                    r.elements_matched,
                    r.elements,
                    r.scales_matched,
                    r.scales,
                    r.error.as_ref().map_or(String::new(), |e| format!(": {e}"))
                ));
            }
        }
        lines.push(summary(&totals));
        lines.join("\n")
    };
    crate::print_text(&text)?;
    Ok(crate::exit(exact))
}
