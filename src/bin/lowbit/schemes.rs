//! `lowbit schemes`: the block-scaled recipes `--scheme` takes, with their sources, and the
//! layouts of one-byte block scales.

use crate::{printed, Outcome};
use lowbit::quant::blocks::{schemes, SCALE_LAYOUTS};

#[derive(clap::Args)]
pub struct Args {
    /// One JSON object: {"schemes": [{"name", "source"}], "scale_layouts": [{"name", "source"}]},
    /// `name` the scheme with its options (`a|b` one of, `[...]` optional).
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Outcome {
    if args.json {
        let entries: Vec<serde_json::Value> =
            schemes().iter().map(|(name, source)| serde_json::json!({ "name": name, "source": source })).collect();
        let layouts: Vec<serde_json::Value> =
            SCALE_LAYOUTS.iter().map(|l| serde_json::json!({ "name": l.name, "source": l.source })).collect();
        return printed(&serde_json::json!({ "schemes": entries, "scale_layouts": layouts }).to_string());
    }
    let mut lines: Vec<String> = schemes().iter().map(|(name, source)| format!("{name}\n    {source}")).collect();
    lines.push("\nScale layouts (one-byte block scales as kernels read them; Python `to_bytes(layout=)`):".into());
    lines.extend(SCALE_LAYOUTS.iter().map(|l| format!("{}\n    {}", l.name, l.source)));
    printed(&lines.join("\n"))
}
