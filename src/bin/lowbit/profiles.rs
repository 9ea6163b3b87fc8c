//! `lowbit profiles`.

use crate::{printed, Outcome};
use lowbit::Profile;

#[derive(clap::Args)]
pub struct Args {
    /// One JSON object: {"profiles": [{"name", "peer", "falls_back": [[FROM, TO], ...],
    /// "named_formats": {NAME: ONNX dtype whose rows apply}}]} (used by the cross-check scripts).
    #[arg(long, conflicts_with = "markdown")]
    json: bool,
    /// The whole decision table, as tables/profiles.md holds it: every row of every profile
    /// with its observation, and where every two profiles differ (takes a few seconds).
    #[arg(long)]
    markdown: bool,
}

pub fn run(args: Args) -> Outcome {
    if args.markdown {
        return printed(lowbit::tables::profiles_markdown().trim_end());
    }
    if !args.json {
        let lines: Vec<String> = Profile::ALL.iter().map(|p| format!("{:<15} {}", p.name(), p.peer())).collect();
        return printed(&lines.join("\n"));
    }
    let entries: Vec<serde_json::Value> = Profile::ALL
        .iter()
        .map(|p| {
            let mut pairs: Vec<[&str; 2]> =
                p.fallback_pairs().iter().map(|(from, to)| [from.onnx_name(), to.onnx_name()]).collect();
            // The pairs with a named integer type (int1, uint1) the implementation has no cast for.
            for n in p.policy().named_integers {
                pairs.extend(n.no_cast_from.iter().map(|&from| [from, n.format.name]));
                pairs.extend(n.no_cast_to.iter().map(|&to| [n.format.name, to]));
            }
            // Each named format the profile has, with the ONNX dtype whose rows its casts follow.
            let named: serde_json::Map<String, serde_json::Value> =
                p.policy().named_formats.iter().map(|n| (n.format.to_string(), n.rows_of.onnx_name().into())).collect();
            serde_json::json!({ "name": p.name(), "peer": p.peer(), "falls_back": pairs, "named_formats": named })
        })
        .collect();
    printed(&serde_json::json!({ "profiles": entries }).to_string())
}
