//! `lowbit vectors --scheme` and `lowbit check --scheme`: block-unit vectors and dump checks.
//! The work is in [`lowbit::verify::BlockUnit`]; this reads the flags and opens the files.

use crate::readmemh::{Columns, Word};
use crate::verify::VectorLayout;
use crate::{exit, output_failure, print_text, Outcome};
use lowbit::verify::{BlockDirection, BlockSummary, BlockUnit};
use lowbit::{Error, Result};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Source and target of a scalar conversion, or the scheme of a block unit.
#[derive(clap::Args)]
pub struct FormatsOrScheme {
    /// Source: an ONNX dtype name or alias, or a format description
    /// eEmM[,bias=B][,special=ieee|fn|fnuz|none][,subnormal=keep|flush][,unsigned]
    /// (a bare eEmM that names an ONNX type, such as e4m3, is that type), or ml_dtypes'
    /// float8_e3m4, float8_e4m3, float8_e4m3b11fnuz, int1, uint1.
    #[arg(long, value_parser = crate::format_name, required_unless_present = "scheme")]
    pub from: Option<String>,
    /// Target, spelled as --from.
    #[arg(long, value_parser = crate::format_name, required_unless_present = "scheme")]
    pub to: Option<String>,
    #[command(flatten)]
    pub block: BlockArgs,
}

impl FormatsOrScheme {
    /// `--from` and `--to` (clap requires both without --scheme).
    pub fn formats(&self) -> (&str, &str) {
        (self.from.as_deref().unwrap_or_default(), self.to.as_deref().unwrap_or_default())
    }
}

/// The block unit of `--scheme`.
#[derive(clap::Args)]
pub struct BlockArgs {
    /// Vectors (or a check) for a unit that quantizes one block of a block-scaled scheme (as
    /// `lowbit schemes` lists them): one line a block, `X0 .. Xn-1 [G] S E0 .. En-1` in hex (the
    /// inputs as bit patterns of --input, the per-tensor scale as float32 bits where the scheme
    /// has one, the scale as stored, the element codes). Not with --from, --to or the rounding
    /// options: the scheme decides.
    #[arg(long, conflicts_with_all = ["from", "to", "round", "tininess", "saturate"])]
    pub scheme: Option<String>,
    /// quantize (inputs in, scale and element codes out) or dequantize (`[G] S E0 .. En-1 Y0 ..
    /// Yn-1`: scale and codes in, float32 values out).
    #[arg(long, default_value = "quantize", value_parser = ["quantize", "dequantize"], requires = "scheme")]
    pub direction: String,
    /// The input dtype of the block: FLOAT, BFLOAT16 or FLOAT16, as the scheme takes it.
    #[arg(long, default_value = "FLOAT", value_parser = crate::dtype_name, requires = "scheme")]
    pub input: lowbit::DType,
}

impl BlockArgs {
    fn unit(&self, scheme: &str) -> Result<BlockUnit> {
        BlockUnit::new(scheme, self.input, BlockDirection::parse(&self.direction)?)
    }
}

/// `lowbit vectors --scheme`.
pub fn vectors(
    args: &BlockArgs,
    scheme: &str,
    count: Option<u64>,
    seed: u64,
    layout: VectorLayout,
    out: Option<&Path>,
) -> Outcome {
    let unit = args.unit(scheme)?;
    let vectors = unit.vectors(count, seed)?;
    match out {
        Some(dir) => {
            let mut staging = lowbit::staging::Staging::new();
            staging.create_folders(dir)?;
            let mut written: Vec<PathBuf> = Vec::new();
            match layout {
                VectorLayout::Readmemh => {
                    for (name, _) in unit.readmemh_files() {
                        let path = dir.join(name);
                        staging.stage(&path, |w| unit.write_readmemh(w, &vectors, name))?;
                        written.push(path);
                    }
                }
                VectorLayout::TestFloat | VectorLayout::Csv => {
                    let csv = layout == VectorLayout::Csv;
                    let path = dir.join(if csv { "vectors.csv" } else { "vectors.txt" });
                    staging.stage(&path, |w| unit.write_lines(w, &vectors, csv))?;
                    written.push(path);
                }
            }
            staging.commit()?;
            let names: Vec<String> = written.iter().map(|p| p.display().to_string()).collect();
            print_text(&format!(
                "{}: {}\nwrote {} blocks to {}",
                unit.scheme(),
                unit.describe(),
                vectors.len(),
                names.join(", ")
            ))?;
        }
        None if layout == VectorLayout::Readmemh => {
            return Err(crate::usage("vectors", "--format readmemh writes one file per column: give --out DIR").into());
        }
        None => {
            eprintln!("{}: {}", unit.scheme(), unit.describe());
            let mut stdout = std::io::BufWriter::new(std::io::stdout().lock());
            unit.write_lines(&mut stdout, &vectors, layout == VectorLayout::Csv).map_err(output_failure)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `lowbit check --scheme`.
pub fn check(args: &BlockArgs, scheme: &str, file: Option<&Path>, allow_empty: bool, json: bool) -> Outcome {
    let unit = args.unit(scheme)?;
    let path = file.unwrap_or(Path::new("-"));
    let (summary, name) = if path == Path::new("-") {
        (unit.check(std::io::stdin().lock(), "standard input")?, "standard input".to_string())
    } else if path.is_dir() {
        let files: Vec<&str> = unit.readmemh_files().iter().map(|(f, _)| *f).collect();
        let name = format!("{} ({})", path.display(), files.join(", "));
        (unit.check(readmemh_columns(path, &unit)?, &name)?, name)
    } else {
        let f = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
        (unit.check(f, &path.display().to_string())?, path.display().to_string())
    };
    lowbit::arguments::nonempty_dump(&name, summary.checked, summary.skipped, allow_empty)?;
    let report = if json {
        summary_json(&unit, &summary)
    } else {
        format!("{}: {}\n{}", unit.scheme(), unit.describe(), summary.report())
    };
    print_text(&report)?;
    Ok(exit(summary.mismatches == 0))
}

/// The `$readmemh` files of a block unit's folder (as `lowbit vectors --scheme --format readmemh`
/// writes them): every packed word unpacked into its lanes.
fn readmemh_columns(dir: &Path, unit: &BlockUnit) -> Result<Columns> {
    let names: Vec<(&str, Word)> = unit
        .readmemh_files()
        .into_iter()
        .map(|(name, bits)| {
            let lanes = if matches!(name, "global.hex" | "scale.hex") { 1 } else { unit.block() };
            (name, Word::Lanes { lanes, width: bits / lanes as u32 })
        })
        .collect();
    Columns::open(dir, &names)
}

/// `lowbit check --scheme --json`.
fn summary_json(unit: &BlockUnit, summary: &BlockSummary) -> String {
    let counts = |pairs: Vec<(String, u64)>| -> serde_json::Map<String, serde_json::Value> {
        pairs.into_iter().map(|(k, n)| (k, n.into())).collect()
    };
    serde_json::json!({
        "scheme": unit.scheme().name(),
        "checked": summary.checked,
        "mismatches": summary.mismatches,
        "skipped": summary.skipped,
        "other_rule": counts(summary.other_rule.iter().map(|(k, n)| (k.clone(), *n)).collect()),
        "scale": counts(summary.scale.iter().map(|(k, n)| (k.clone(), *n)).collect()),
        "elements": counts(summary.elements.iter().map(|(k, n)| (k.key().to_string(), *n)).collect()),
        "element_index": summary.element_index,
        "shown": summary.shown,
    })
    .to_string()
}
