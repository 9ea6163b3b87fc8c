//! `lowbit conformance`: ONNX backend node-test folders.

use crate::{exit, print_text, Outcome};
use lowbit::onnx::conformance;
use std::path::PathBuf;

/// How outputs are compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Tolerance {
    /// Bits (NaN payloads included).
    Exact,
    /// The ONNX backend runner's rtol 1e-3, atol 1e-7.
    Onnx,
}

#[derive(clap::Args)]
pub struct Args {
    /// Test folders, or folders of test folders (a folder with none is an error).
    #[arg(required = true)]
    dirs: Vec<PathBuf>,
    #[arg(long, default_value = "spec", value_parser = crate::profile_parser())]
    profile: lowbit::Profile,
    /// exact: bits (NaN payloads included); onnx: the ONNX backend runner's rtol 1e-3, atol 1e-7.
    #[arg(long, value_enum, default_value = "exact")]
    tolerance: Tolerance,
    /// One JSON object instead of the lines: {"tests": [{"name", "passed", "failure"}], "passed",
    /// "failed"}.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Outcome {
    let tolerance = match args.tolerance {
        Tolerance::Exact => conformance::Tolerance::parse("exact")?,
        Tolerance::Onnx => conformance::Tolerance::parse("onnx")?,
    };
    let outcomes: Vec<_> =
        conformance::test_dirs(&args.dirs)?.iter().map(|d| conformance::run_test(d, args.profile, tolerance)).collect();
    let failed = outcomes.iter().filter(|o| o.failure.is_some()).count();
    if args.json {
        let tests: Vec<serde_json::Value> = outcomes
            .iter()
            .map(|o| serde_json::json!({ "name": o.name, "passed": o.failure.is_none(), "failure": o.failure }))
            .collect();
        let report = serde_json::json!({ "tests": tests, "passed": outcomes.len() - failed, "failed": failed });
        print_text(&report.to_string())?;
    } else {
        print_text(&conformance::report(&outcomes))?;
    }
    Ok(exit(failed == 0 && !outcomes.is_empty()))
}
