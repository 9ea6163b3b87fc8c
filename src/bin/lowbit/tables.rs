//! `lowbit tables`: write the exhaustive tables, or check a folder of them.

use crate::{printed, Outcome};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// Write the tables into this folder.
    #[arg(long, conflicts_with = "check", required_unless_present = "check")]
    out: Option<PathBuf>,
    /// Regenerate the tables in memory and compare them with this folder: every missing,
    /// different or stray file is reported (an empty folder is every file missing, not a pass).
    #[arg(long)]
    check: Option<PathBuf>,
}

pub fn run(args: Args) -> Outcome {
    match (args.out, args.check) {
        (Some(dir), _) => {
            let n = lowbit::tables::write(&dir)?;
            printed(&format!("wrote {n} files to {}", dir.display()))
        }
        (None, Some(dir)) => {
            let n = lowbit::tables::check(&dir)?;
            printed(&format!("{n} files in {} match what lowbit generates", dir.display()))
        }
        // clap requires one of them.
        (None, None) => Err(crate::usage("tables", "give --out DIR or --check DIR").into()),
    }
}
