//! `lowbit vectors`: test vectors for hardware verification.

use crate::block_units::FormatsOrScheme;
use crate::verify::{self as glue, VectorLayout};
use crate::{output_failure, print_text, Outcome, Rounding};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    formats: FormatsOrScheme,
    #[command(flatten)]
    rounding: Rounding,
    /// 1 or 2 (TestFloat's levels), or all: every source pattern (sources up to 16 bits).
    #[arg(long, default_value = "1", value_parser = ["1", "2", "all"], conflicts_with = "scheme")]
    level: String,
    /// Number of test cases (levels 1 and 2; K, M, G suffixes). With --scheme: blocks (never
    /// fewer than the edge blocks, which come first; default those and 256 random ones).
    #[arg(short = 'n', long, value_parser = crate::count)]
    count: Option<u64>,
    /// Seed of the random operands and of stochastic rounding's random words
    /// (seeded_random(seed, i) for case i, SplitMix64).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// testfloat, readmemh (DIR/in.hex, out.hex, flags.hex; needs --out) or csv (with a header).
    #[arg(long, value_enum, default_value = "testfloat")]
    format: VectorLayout,
    /// Write into this folder (all files or none) instead of standard output. The settings that
    /// applied (`FROM -> TO, round=rne tininess=after saturate=0`, defaults included) head the
    /// report of --out, or go to standard error when the cases go to standard output.
    #[arg(long)]
    out: Option<PathBuf>,
}

pub fn run(args: Args) -> Outcome {
    if let Some(scheme) = &args.formats.block.scheme {
        return crate::block_units::vectors(
            &args.formats.block,
            scheme,
            args.count,
            args.seed,
            args.format,
            args.out.as_deref(),
        );
    }
    let (from, to) = args.formats.formats();
    let options = args.rounding.options(from, to)?;
    // The settings that applied, defaults included: in the report of --out, on standard error
    // when the cases go to standard output (a testfloat or CSV reader sees only cases).
    let settings = format!(
        "{} -> {}, {}",
        lowbit::verify::Format::parse(from)?,
        lowbit::verify::Format::parse(to)?,
        lowbit::verify::config::Config::ieee(options).settings()
    );
    let request = glue::VectorsRequest { from, to, options, level: &args.level, count: args.count, seed: args.seed };
    let vectors = glue::vectors(&request)?;
    match args.out {
        Some(dir) => {
            let written = glue::write_vectors_to(&dir, &vectors, args.format)?;
            let names: Vec<String> = written.iter().map(|p| p.display().to_string()).collect();
            print_text(&format!("{settings}\nwrote {} cases to {}", vectors.len(), names.join(", ")))?;
        }
        None if args.format == VectorLayout::Readmemh => {
            return Err(crate::usage("vectors", "--format readmemh writes one file per column: give --out DIR").into());
        }
        None => {
            eprintln!("{settings}");
            let mut stdout = std::io::BufWriter::new(std::io::stdout().lock());
            glue::write_vectors(&mut stdout, &vectors, args.format).map_err(output_failure)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
