//! The `lowbit` command line tool.

use clap::{Parser, Subcommand};
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "lowbit", version, about = "Bit-exact reference for low-precision numerics (ONNX Cast and friends)")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Write the exhaustive tables (every code of every format of 8 bits or fewer, every cast between
    /// them, digests of every 16-bit cast), or check a folder of them byte for byte.
    Tables {
        /// Write the tables into this folder.
        #[arg(long, conflicts_with = "check", required_unless_present = "check")]
        out: Option<PathBuf>,
        /// Regenerate the tables in memory and compare them with this folder.
        #[arg(long)]
        check: Option<PathBuf>,
    },
    /// ONNX Cast. Without VALUES: raw little-endian elements on standard input (packed types as ONNX
    /// raw_data; STRING as a JSON array of strings) to the raw result on standard output. With
    /// VALUES: a table of each value, its output code in hex and binary, its value and class.
    Cast {
        /// Source dtype (ONNX name or alias).
        #[arg(long)]
        from: String,
        /// Target dtype.
        #[arg(long)]
        to: String,
        /// ONNX saturate attribute (float8 targets only).
        #[arg(long, default_value = "1", value_parser = ["0", "1"])]
        saturate: String,
        /// ONNX round_mode attribute (float8e8m0 targets only).
        #[arg(long, default_value = "up", value_parser = ["up", "down", "nearest"])]
        round_mode: String,
        /// Which implementation to be bit-exact with.
        #[arg(long, default_value = "spec", value_parser = ["spec", "onnx-reference", "onnxruntime", "openvino"])]
        profile: String,
        /// Element count, for packed input whose byte count leaves it ambiguous (e.g. an odd int4 count).
        #[arg(long)]
        count: Option<usize>,
        /// Values to cast, read as the source type (exact decimal, rounded once).
        #[arg(allow_hyphen_values = true)]
        values: Vec<String>,
    },
    /// Describe a dtype: ONNX number, width, packing and, for floating formats, the descriptor and
    /// its extreme values.
    Info {
        /// An ONNX name or alias (e.g. FLOAT8E4M3FN, e4m3fn, float8_e4m3fn, bf16).
        dtype: String,
    },
}

fn run(cli: Cli) -> lowbit::Result<String> {
    match cli.command {
        Command::Tables { out: Some(dir), .. } => {
            let n = lowbit::tables::write(&dir)?;
            Ok(format!("wrote {n} files to {}", dir.display()))
        }
        Command::Tables { check: Some(dir), .. } => {
            let n = lowbit::tables::check(&dir)?;
            Ok(format!("{n} files in {} match what lowbit generates", dir.display()))
        }
        Command::Tables { .. } => unreachable!("clap requires --out or --check"),
        Command::Info { dtype } => Ok(info(lowbit::DType::parse(&dtype)?)),
        Command::Cast { from, to, saturate, round_mode, profile, count, values } => {
            let (from, to) = (lowbit::DType::parse(&from)?, lowbit::DType::parse(&to)?);
            let opts = lowbit::CastOptions {
                saturate: saturate == "1",
                round_mode: lowbit::RoundMode::parse(&round_mode)?,
                profile: lowbit::profile::Profile::parse(&profile)?,
            };
            if values.is_empty() {
                let mut input = Vec::new();
                std::io::stdin()
                    .read_to_end(&mut input)
                    .map_err(|e| lowbit::Error::Io { path: "standard input".into(), message: e.to_string() })?;
                let out = lowbit::cli_cast::cast_stream(&input, from, to, count, &opts)?;
                std::io::stdout()
                    .write_all(&out)
                    .map_err(|e| lowbit::Error::Io { path: "standard output".into(), message: e.to_string() })?;
                Ok(String::new())
            } else {
                lowbit::cli_cast::cast_values_table(&values, from, to, &opts)
            }
        }
    }
}

fn info(dtype: lowbit::DType) -> String {
    let mut lines = vec![
        format!("{} (ONNX {})", dtype.onnx_name(), dtype.onnx_number()),
        format!("bits: {}", dtype.bits().map_or("variable".to_string(), |b| b.to_string())),
        format!("packing: {:?}", dtype.packing()),
    ];
    if let Some(f) = dtype.float_format() {
        let value = |code: u64| lowbit::tables::value_to_exact_decimal(&f.decode(code));
        lines.push(format!(
            "exponent bits: {}, mantissa bits: {}, bias: {}, signed: {}, subnormals: {}",
            f.exponent_bits, f.mantissa_bits, f.bias, f.signed, f.subnormals
        ));
        lines.push(format!("non-finite: {:?}, zero: {:?}", f.non_finite, f.zero()));
        lines.push(format!("max: {} (code {:#x})", value(f.max_code()), f.max_code()));
        lines.push(format!("lowest: {} (code {:#x})", value(f.lowest_code()), f.lowest_code()));
        lines.push(format!(
            "min positive normal: {} (code {:#x})",
            value(f.min_positive_normal_code()),
            f.min_positive_normal_code()
        ));
        lines.push(format!("min positive: {} (code {:#x})", value(f.min_positive_code()), f.min_positive_code()));
        if let Some(c) = f.infinity_code(false) {
            lines.push(format!("infinity: code {c:#x}"));
        }
        if let Some(c) = f.nan_code(false) {
            lines.push(format!("NaN: code {c:#x}"));
        }
    }
    lines.join("\n")
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(msg) => {
            if !msg.is_empty() {
                println!("{msg}");
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("lowbit: {e}");
            ExitCode::FAILURE
        }
    }
}
