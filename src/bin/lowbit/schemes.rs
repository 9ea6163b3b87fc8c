//! `lowbit schemes`: the block-scaled recipes `--scheme` takes, with their sources.

use crate::{printed, Outcome};
use lowbit::quant::blocks::schemes;

#[derive(clap::Args)]
pub struct Args {
    /// One JSON object: {"schemes": [{"name", "source"}]}, `name` the scheme with its options
    /// (`a|b` one of, `[...]` optional).
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Outcome {
    if args.json {
        let entries: Vec<serde_json::Value> =
            schemes().iter().map(|(name, source)| serde_json::json!({ "name": name, "source": source })).collect();
        return printed(&serde_json::json!({ "schemes": entries }).to_string());
    }
    let lines: Vec<String> = schemes().iter().map(|(name, source)| format!("{name}\n    {source}")).collect();
    printed(&lines.join("\n"))
}
