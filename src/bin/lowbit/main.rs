//! The `lowbit` command line tool: the argument types shared by several commands, and the
//! dispatch. Each command's flags and work are in a file of its own (`cast.rs`, `run.rs`, ...;
//! `quantize.rs` holds both `quantize` and `dequantize`, `blocks.rs` their `--scheme` mode,
//! `verify.rs` what the verification commands share).
//!
//! One grammar for every command: flags may come anywhere among the values (a value that starts
//! with `-` other than a negative number goes after `--`); a count is `-n/--count` and takes K, M,
//! G suffixes; a word with a fixed set of values lists them when it is wrong; a dtype or profile
//! name that is nearly right says which one was meant.

mod bench;
mod block_units;
mod blocks;
mod cast;
mod check;
mod checkpoint;
mod checkpoint_convert;
mod checkpoint_quantize;
mod checkpoint_which;
mod completions;
mod conformance;
mod diff;
mod info;
mod matmul;
mod profiles;
mod progress;
mod quantize;
mod range4;
mod readmemh;
mod run;
mod schemes;
mod sweep;
mod tables;
mod vectors;
mod verify;

use clap::{Parser, Subcommand, ValueEnum};
use std::io::Write;
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "lowbit", version, about = "Bit-exact reference for low-precision numerics (ONNX Cast and friends)")]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Write the exhaustive tables (every code of every format of 8 bits or fewer, every cast between
    /// them, digests of every 16-bit cast), or check a folder of them byte for byte (every
    /// difference reported).
    Tables(tables::Args),
    /// ONNX Cast. With --from and no VALUES: raw little-endian elements on standard input (packed
    /// types as ONNX raw_data; STRING as a JSON array of strings) to the raw result on standard
    /// output. With --from and VALUES: a table of each value, its output code in hex and binary, its
    /// value and class. Without --from: `lowbit cast --to DTYPE IN.pb OUT.pb` casts a TensorProto file.
    ///
    /// Defaults: ONNX types on both sides follow ONNX Cast (saturate=1 for float8 targets,
    /// --round up for FLOAT8E8M0); a described format on either side follows IEEE 754
    /// (nearest even, no saturation) unless --saturate 1.
    Cast(cast::Args),
    /// Run an ONNX model and write each graph output to DIR/<output name>.pb, all or nothing.
    ///
    /// The ops it runs (default domain): Cast, CastLike, Constant, Identity, Range, Slice, Gather,
    /// QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, and what the function bodies of
    /// Range and DynamicQuantizeLinear use: Add, Sub, Div, Max, Min, Clip, Round, Ceil, Relu,
    /// ReduceMax, ReduceMin, Loop. Also onnxruntime's com.microsoft MatMulNBits (its weight
    /// dequantized as onnxruntime does, each output summed exactly and rounded once). Every input is checked against the graph before the run:
    /// unknown, repeated or missing names, element type, rank, fixed dimensions, and symbolic
    /// dimensions bound to one length across the inputs. Output names that are not plain file
    /// names (a path separator, `..`, a leading dot, empty) are an error.
    Run(run::Args),
    /// Run ONNX backend node-test folders (model.onnx, test_data_set_N/input_K.pb, output_K.pb):
    /// one line per test, then `N passed, M failed`; exit code 0 only when all pass, and never
    /// when no test was found.
    Conformance(conformance::Args),
    /// OpenVINO Range-4 (not an ONNX op): START, STOP and STEP as VALUE:DTYPE (e.g. 2.5:f32, -1:i64),
    /// each of its own type, into --to. Prints each element's value and code, or with --raw writes
    /// the raw little-endian output (packed types as ONNX raw_data) to standard output.
    Range4(range4::Args),
    /// Throughput of --from -> --to (default FLOAT -> FLOAT8E4M3FN) against a plain copy and the
    /// reference path, in one process.
    Bench(bench::Args),
    /// Quantize a TensorProto file, in one of two modes.
    ///
    /// --scheme SCHEME: a block-scaled recipe, exactly as the implementation it names computes it
    /// (OCP MX as ocp:mxfp4[,block=N][,scale=ceil]; torchao, ModelOpt and compressed-tensors
    /// MX/NVFP4, ggml blocks, DeepSeek and compressed-tensors FP8; `lowbit schemes` lists them).
    /// IN (FLOAT, FLOAT16 or BFLOAT16) is cut into the scheme's blocks along --axis (default -1).
    /// --out E.pb receives the elements (the element's ONNX type, packed as ONNX packs it),
    /// --scales S.pb the scales in their stored type and shape (the blocked axis divided by the
    /// block, rounded up), --global-scale G.pb the per-tensor scale of a two-level recipe; all are
    /// written, or none. With modelopt:nvfp4, --onnx OUT.onnx writes ModelOpt's exported graph.
    ///
    /// --scale S: ONNX linear quantization, exactly ONNX QuantizeLinear-28 (the newest version
    /// lowbit has; its type and attribute checks apply) with IN as x, S as y_scale, --zero-point as
    /// y_zero_point, --to as output_dtype, and --axis, --block-size, --saturate as the attributes:
    /// y = saturate(round_half_even(x / y_scale) + y_zero_point), packed as ONNX packs it.
    ///
    /// Examples: `lowbit quantize w.pb --scheme ocp:mxfp4 --scales s.pb --out e.pb`;
    /// `lowbit quantize w.pb --scheme modelopt:nvfp4 --scales s.pb --global-scale g.pb --out e.pb`;
    /// `lowbit quantize x.pb --scale 0.05 --zero-point 3 --to int8 --out q.pb`;
    /// `lowbit quantize w.pb --scale s.pb --block-size 32 --axis -1 --to int4 --out q.pb`.
    Quantize(quantize::QuantizeFlags),
    /// Dequantize a TensorProto file, in one of two modes.
    ///
    /// --scheme SCHEME: the elements with their --scales (and --global-scale) from `lowbit
    /// quantize --scheme` or any producer of the same layout, to FLOAT, as the implementation the
    /// scheme names dequantizes them.
    ///
    /// --scale S: exactly ONNX DequantizeLinear-28 with IN as x, S as x_scale, --zero-point as
    /// x_zero_point (a number takes x's type), --to as output_dtype, --axis and --block-size as
    /// the attributes: y = (x - x_zero_point) * x_scale.
    ///
    /// Example: `lowbit dequantize q.pb --scale 0.05 --zero-point 3 --out x2.pb`.
    Dequantize(quantize::DequantizeFlags),
    /// Test vectors for hardware verification: operands of --from with the results and IEEE flags of
    /// converting them to --to, in TestFloat's layout (`operand result flags`, upper-case hex: 2
    /// digits for 8 bits or fewer, 4 for 16, 8 for 32, 16 for 64), as $readmemh columns or as CSV.
    /// Level 1 mixes special operands with random ones (one in three), level 2 one in two; -n
    /// raises the count (never below what holds every special operand, as testfloat_gen).
    Vectors(vectors::Args),
    /// A @ B^T of two TensorProto files (M x K and N x K) under an accumulation model
    /// (`lowbit::dot`): exact (one rounding at the end), sequential-fp32 (each product and
    /// partial sum rounded to float32; block-scaled operands: per block, then times the two
    /// scales), sequential,format=F, or fma,format=F[,round=R]. An operand is plain codes of any
    /// numeric type, or with --a-scheme/--b-scheme the element codes of a block scheme with its
    /// --a-scales/--b-scales (and per-tensor scale), as `lowbit quantize --scheme` writes them.
    ///
    /// Example: `lowbit matmul e.pb x.pb --a-scheme ocp:mxfp4 --a-scales s.pb --model sequential-fp32 --out y.pb`.
    Matmul(matmul::Args),
    /// Check a dump of `operand result [flags]` lines (testfloat_ver's layout; an operation word
    /// and a rounding-mode word may come first, the mode then applies to that line), or the CSV or
    /// $readmemh folder `lowbit vectors` writes, against the IEEE semantics. Streams any size;
    /// prints the first 20 mismatches, a summary by class and `N checked, M mismatches`; exit code
    /// 0 only without mismatches and with at least one case. NaN encodings and the value of
    /// invalid float-to-integer results are ignored unless asked for, as testfloat_ver.
    Check(check::Args),
    /// Every pattern of a source of up to 32 bits, in ascending order: first `sha256 <hex>` of the
    /// concatenated output codes (each in its little-endian width, packed formats one code per
    /// byte), then the count per class and per flag. A progress bar shows on a terminal.
    Sweep(sweep::Args),
    /// Where two configurations disagree over every pattern of a source of up to 32 bits: counts
    /// by input class and the first 20 examples; exit code 0 only when they agree everywhere.
    /// A configuration is comma-separated words: a mode (rne, rtz, rdn, rup, rmm, raz, rod, sr:R),
    /// tininess=before|after|delivered, saturate=0|1, profile=NAME (a profile, as `lowbit profiles` lists them)
    /// (ONNX Cast, values only), format=DESCRIPTION (the target; the format's own options
    /// bias=, special=, subnormal=, unsigned follow it). Words not given keep --round, --tininess,
    /// --saturate and --to. Example: lowbit diff --from f16 --to e4m3 rne rtz,tininess=before
    Diff(diff::Args),
    /// The profiles: each one's name and what it is bit-exact with; with --json also the dtype
    /// pairs where its implementation has no cast (the profile gives spec's answer there).
    Profiles(profiles::Args),
    /// The block-scaled recipes `--scheme` takes: each with its options and the implementation,
    /// version and functions it reproduces.
    Schemes(schemes::Args),
    /// Describe a dtype or a described format: ONNX number, width, packing and, for floating
    /// formats, the whole descriptor, its extreme values and the codes of its specials.
    Info(info::Args),
    /// Checkpoints (safetensors, GGUF): inspect, dequantize, compare, quantize, which, convert.
    Checkpoint(checkpoint::Args),
    /// Shell completions for bash, zsh or fish, generated from these definitions, on standard
    /// output (e.g. `lowbit completions bash > /etc/bash_completion.d/lowbit`).
    Completions(completions::CompletionsArgs),
    /// The manual pages (roff), generated from these definitions: the top page on standard
    /// output (`lowbit man > lowbit.1`), or with --out DIR one page per command
    /// (`lowbit-cast.1`, `lowbit-checkpoint-quantize.1`, ...).
    Man(completions::ManArgs),
}

// ------------------------------------------------------------------------------------------------
// Argument types shared by several commands
// ------------------------------------------------------------------------------------------------

/// ONNX's saturate attribute: 1 (out-of-range values and infinities become the largest finite
/// value) or 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Saturate {
    #[value(name = "1")]
    On,
    #[value(name = "0")]
    Off,
}

impl Saturate {
    pub fn on(self) -> bool {
        self == Saturate::On
    }
}

/// ONNX's round_mode attribute (FLOAT8E8M0 targets).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum RoundModeArg {
    Up,
    Down,
    Nearest,
}

impl From<RoundModeArg> for lowbit::RoundMode {
    fn from(mode: RoundModeArg) -> lowbit::RoundMode {
        match mode {
            RoundModeArg::Up => lowbit::RoundMode::Up,
            RoundModeArg::Down => lowbit::RoundMode::Down,
            RoundModeArg::Nearest => lowbit::RoundMode::Nearest,
        }
    }
}

/// A profile name: clap lists the valid ones and suggests the nearest.
pub fn profile_parser() -> impl clap::builder::TypedValueParser<Value = lowbit::Profile> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(lowbit::Profile::NAMES).try_map(|name| lowbit::Profile::parse(&name))
}

use lowbit::arguments::edit_distance as distance;

/// The dtype names nearest to a mistyped one: within two edits of a name or an alias, or every
/// name the text is an abbreviation of (`fp8` -> the float8 types).
pub fn dtype_suggestions(text: &str) -> Vec<&'static str> {
    let key: String = text.chars().filter(|c| *c != '_' && *c != '-').map(|c| c.to_ascii_lowercase()).collect();
    let expanded = key.strip_prefix("fp").map_or_else(|| key.clone(), |rest| format!("float{rest}"));
    // Every accepted spelling (names and aliases), each with the dtype it names.
    let names = lowbit::DType::valid_names();
    let spellings: Vec<(String, lowbit::DType)> = names
        .split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
        .filter_map(|word| {
            let d = lowbit::DType::parse(word).ok().filter(|d| *d != lowbit::DType::Undefined)?;
            Some((word.chars().filter(|c| *c != '_').map(|c| c.to_ascii_lowercase()).collect(), d))
        })
        .collect();
    // An abbreviation first (`fp8`: every float8), else the names within a typo or two.
    let edits = if key.len() < 6 { 1 } else { 2 };
    let mut out: Vec<&'static str> = Vec::new();
    for pass in [true, false] {
        for (spelled, d) in &spellings {
            let near = if pass {
                expanded.len() >= 4 && expanded != key && spelled.starts_with(&expanded)
            } else {
                distance(&key, spelled) <= edits
            };
            if near && !out.contains(&d.onnx_name()) {
                out.push(d.onnx_name());
            }
        }
        if !out.is_empty() {
            break;
        }
    }
    out
}

/// A dtype name or format description, checked when the flags are read so that a mistyped name
/// is reported with the nearest valid ones.
pub fn format_name(text: &str) -> Result<String, String> {
    if lowbit::DType::parse(text).is_ok() {
        return Ok(text.to_string());
    }
    lowbit::verify::Format::parse(text).map(|_| text.to_string()).map_err(|e| with_suggestions(text, &e))
}

/// An ONNX dtype name (no format description), checked as [`format_name`].
pub fn dtype_name(text: &str) -> Result<lowbit::DType, String> {
    lowbit::DType::parse(text).map_err(|e| with_suggestions(text, &e))
}

/// The library's message (it lists the valid names), led by the nearest names if any.
fn with_suggestions(text: &str, e: &lowbit::Error) -> String {
    let near = dtype_suggestions(text);
    if near.is_empty() {
        e.to_string()
    } else {
        format!("did you mean {}? {e}", near.join(" or "))
    }
}

/// A count or a size: a whole number with an optional K, M, G or T suffix (powers of 1024).
pub fn count(text: &str) -> Result<u64, String> {
    lowbit::onnx::limits::parse_count(text).map_err(|e| e.to_string())
}

/// A count as `usize`.
pub fn count_usize(text: &str) -> Result<usize, String> {
    count(text).and_then(|n| usize::try_from(n).map_err(|_| format!("{n} is too large for this machine")))
}

/// A thread count: at least 1 ([`lowbit::arguments::threads`], as the Python package).
pub fn threads(text: &str) -> Result<usize, String> {
    let n: i64 = text.parse().map_err(|_| format!("{} is not a whole number", lowbit::Error::quote(text)))?;
    lowbit::arguments::threads(Some(n)).map_err(|e| e.to_string())
}

/// `--shard K/N`: the K-th of N slices of a checkpoint's work (1 <= K <= N).
pub fn shard(text: &str) -> Result<(usize, usize), String> {
    let parsed = text.split_once('/').and_then(|(k, n)| Some((k.parse::<usize>().ok()?, n.parse::<usize>().ok()?)));
    match parsed {
        Some((k, n)) if k >= 1 && k <= n => Ok((k, n)),
        _ => Err(format!("{} is not K/N with 1 <= K <= N", lowbit::Error::quote(text))),
    }
}

/// Threads given or every core.
pub fn threads_or_all(threads: Option<usize>) -> usize {
    threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from))
}

/// The attributes of a Cast and the profile, shared by every command that converts.
#[derive(clap::Args)]
pub struct Attributes {
    /// ONNX saturate attribute (float8 targets only; an error for other targets). Default: 1
    /// between ONNX types (as ONNX Cast), 0 with a described format (IEEE).
    #[arg(long, value_enum)]
    pub saturate: Option<Saturate>,
    /// Rounding, the words every command that rounds takes: rne, rtz, rdn, rup, rmm, raz, rod,
    /// sr:R where a described format is on a side (IEEE's conversion; default rne), and ONNX's
    /// round_mode up, down, nearest for FLOAT8E8M0 targets between ONNX types (default up, as
    /// ONNX Cast). ONNX Cast has no other rounding choice: a word that does not apply is an error.
    #[arg(long, value_parser = round_word)]
    pub round: Option<String>,
    /// Which implementation to be bit-exact with.
    #[arg(long, default_value = "spec", value_parser = profile_parser())]
    pub profile: lowbit::Profile,
}

impl Attributes {
    /// The options for a cast into `to`, refusing a flag that does not apply to it.
    pub fn options(&self, to: lowbit::DType) -> lowbit::Result<lowbit::CastOptions> {
        let float8 = matches!(to.kind(), lowbit::Kind::Float(_)) && to.bits().is_some_and(|b| b <= 8);
        if self.saturate.is_some() && !float8 {
            return Err(usage(
                "cast",
                format!("--saturate applies to float8 (E8M0 included), float6 and float4 targets, not {to}"),
            ));
        }
        if self.round.is_some() && to != lowbit::DType::Float8E8M0 {
            return Err(usage(
                "cast",
                format!(
                    "--round applies to FLOAT8E8M0 targets between ONNX types (up, down, nearest: ONNX's round_mode) \
                     and to casts with a described format (rne, rtz, ...), not to {to}"
                ),
            ));
        }
        Ok(lowbit::CastOptions {
            saturate: self.saturate.is_none_or(Saturate::on),
            round_mode: self.onnx_round_mode()?,
            profile: self.profile,
        })
    }

    /// ONNX's round_mode from --round (default up).
    pub fn onnx_round_mode(&self) -> lowbit::Result<lowbit::RoundMode> {
        match self.round.as_deref() {
            None | Some("up") => Ok(lowbit::RoundMode::Up),
            Some("down") => Ok(lowbit::RoundMode::Down),
            Some("nearest") => Ok(lowbit::RoundMode::Nearest),
            Some(word) => Err(usage(
                "cast",
                format!(
                    "--round {word} is IEEE rounding, for casts with a described format; ONNX Cast into FLOAT8E8M0 \
                     takes its round_mode up, down or nearest"
                ),
            )),
        }
    }

    /// The IEEE rounding of a cast with a described format from --round (default rne).
    pub fn ieee_rounding(&self) -> lowbit::Result<lowbit::round::RoundingMode> {
        let word = self.round.as_deref().unwrap_or("rne");
        lowbit::verify::config::parse_mode(word).ok_or_else(|| {
            usage(
                "cast",
                format!(
                    "--round {word} is ONNX's round_mode for FLOAT8E8M0; a cast with a described format rounds by \
                     rne, rtz, rdn, rup, rmm, raz, rod or sr:R"
                ),
            )
        })
    }
}

/// Source and target of a verification command.
#[derive(clap::Args)]
pub struct VerifyFormats {
    /// Source: an ONNX dtype name or alias, or a format description
    /// eEmM[,bias=B][,special=ieee|fn|fnuz|none][,subnormal=keep|flush][,unsigned]
    /// (a bare eEmM that names an ONNX type, such as e4m3, is that type), or ml_dtypes'
    /// float8_e3m4, float8_e4m3, float8_e4m3b11fnuz, int1, uint1.
    #[arg(long, value_parser = format_name)]
    pub from: String,
    /// Target, spelled as --from.
    #[arg(long, value_parser = format_name)]
    pub to: String,
}

/// When a result is tiny for the underflow flag.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum TininessArg {
    /// Before rounding.
    Before,
    /// After rounding (TestFloat's default).
    After,
    /// Delivered: the result is subnormal or zero.
    Delivered,
}

/// The one --round grammar of every command that rounds: IEEE's words (rne, rtz, rdn, rup, rmm,
/// raz, rod, sr:R) and ONNX's round_mode words (up, down, nearest: FLOAT8E8M0 targets of ONNX
/// Cast); each command then says which apply to what it converts.
pub fn round_word(text: &str) -> Result<String, String> {
    match lowbit::verify::config::parse_mode(text) {
        Some(_) => Ok(text.to_string()),
        None if ["up", "down", "nearest"].contains(&text) => Ok(text.to_string()),
        None => Err(format!(
            "{} is not a rounding mode; use rne, rtz, rdn, rup, rmm, raz, rod or sr:R (R 1 to 63), or ONNX's \
             round_mode up, down, nearest (FLOAT8E8M0 targets of cast)",
            lowbit::Error::quote(text)
        )),
    }
}

/// The IEEE options of a verification command, the same defaults in vectors, check, sweep and
/// diff (and `lowbit cast`): nearest even, tininess after rounding (TestFloat's), and saturation
/// as [`lowbit::arguments::default_saturate`] decides (ONNX's 1 between ONNX types into float8,
/// else 0).
#[derive(clap::Args)]
pub struct Rounding {
    /// rne (nearest even), rtz (toward zero), rdn (toward -inf), rup (toward +inf), rmm (nearest,
    /// ties away), raz (away from zero), rod (to odd), sr:R (stochastic, R random bits).
    #[arg(long, default_value = "rne", value_parser = round_word)]
    pub round: String,
    /// When a result is tiny for the underflow flag.
    #[arg(long, value_enum, default_value = "after")]
    pub tininess: TininessArg,
    /// 1: overflow and infinities give the largest finite value; 0: they give infinity (or
    /// NaN). Default: 1 from an ONNX type into an ONNX float8 type (ONNX Cast's saturate=1), 0
    /// otherwise (IEEE), as in `lowbit cast`.
    #[arg(long, value_enum)]
    pub saturate: Option<Saturate>,
}

impl Rounding {
    /// The options for `from` -> `to` (a `to` that is no format, `check --which`'s width, takes
    /// IEEE's default).
    pub fn options(&self, from: &str, to: &str) -> lowbit::Result<lowbit::verify::VerifyOptions> {
        use lowbit::verify::Format;
        let saturate = match self.saturate {
            Some(s) => s.on(),
            None => match (Format::parse(from), Format::parse(to)) {
                (Ok(from), Ok(to)) => lowbit::arguments::default_saturate(&from, &to),
                _ => false,
            },
        };
        let tininess = match self.tininess {
            TininessArg::Before => "before",
            TininessArg::After => "after",
            TininessArg::Delivered => "delivered",
        };
        if lowbit::verify::config::parse_mode(&self.round).is_none() {
            return Err(usage(
                "--round",
                format!(
                    "{} is ONNX Cast's round_mode (lowbit cast, FLOAT8E8M0 targets); IEEE rounding here is rne, rtz, \
                     rdn, rup, rmm, raz, rod or sr:R",
                    self.round
                ),
            ));
        }
        lowbit::verify::VerifyOptions::from_words(&self.round, tininess, if saturate { "1" } else { "0" })
    }
}

/// A usage error of a command.
pub fn usage(command: &str, message: impl Into<String>) -> lowbit::Error {
    lowbit::Error::InvalidOp { op: command.into(), message: message.into() }
}

// ------------------------------------------------------------------------------------------------
// Outcomes and output
// ------------------------------------------------------------------------------------------------

/// Why a command did not succeed.
pub enum Failure {
    Lowbit(lowbit::Error),
    /// Standard output is a pipe whose reader has gone: stop quietly, as Unix tools do.
    ClosedPipe,
    /// Writing standard output failed otherwise (a full disk, a device error).
    Output(std::io::Error),
}

impl From<lowbit::Error> for Failure {
    fn from(e: lowbit::Error) -> Failure {
        Failure::Lowbit(e)
    }
}

/// What a command returns: its exit code, or why it failed.
pub type Outcome = Result<ExitCode, Failure>;

/// The outcome of a raw stream from standard input to standard output.
pub fn streamed<T>(result: Result<T, lowbit::StreamError>) -> Outcome {
    match result {
        Ok(_) => Ok(ExitCode::SUCCESS),
        Err(lowbit::StreamError::Output(e)) => Err(output_failure(e)),
        Err(lowbit::StreamError::Input(e)) => {
            Err(lowbit::Error::Io { path: "standard input".into(), message: e.to_string() }.into())
        }
        Err(lowbit::StreamError::Data(e)) => Err(e.into()),
    }
}

pub fn output_failure(e: std::io::Error) -> Failure {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        Failure::ClosedPipe
    } else {
        Failure::Output(e)
    }
}

/// Writes `bytes` to standard output and flushes it, every error reported (never `println!`,
/// which panics when the write fails).
pub fn write_stdout(bytes: &[u8]) -> Result<(), Failure> {
    let mut out = std::io::stdout().lock();
    out.write_all(bytes).and_then(|()| out.flush()).map_err(output_failure)
}

/// Whether an output path is `-`: standard output.
pub fn is_stdout(path: &std::path::Path) -> bool {
    path == std::path::Path::new("-")
}

/// Binary output to standard output: refused where standard output is a terminal, unless `raw`
/// (the bytes would garble the terminal and are lost anyway).
pub fn binary_to_stdout(command: &str, raw: bool, alternative: &str) -> lowbit::Result<()> {
    use std::io::IsTerminal;
    if raw || !std::io::stdout().is_terminal() {
        return Ok(());
    }
    Err(usage(
        command,
        format!(
            "the output is binary and standard output is a terminal: redirect it (> FILE, | od -An -tx1), \
             {alternative}, or pass --raw to write it anyway"
        ),
    ))
}

/// Writes a tensor as a TensorProto to `path`, or to standard output for `-` (refused to a
/// terminal unless `raw`); returns the line to print: what was written where, or nothing when
/// the tensor itself went to standard output.
pub fn write_tensor_out(
    command: &str,
    path: &std::path::Path,
    t: &lowbit::Tensor,
    name: Option<&str>,
    raw: bool,
    described: String,
) -> lowbit::Result<String> {
    if is_stdout(path) {
        binary_to_stdout(command, raw, "give a file path instead of -")?;
        let mut out = std::io::stdout().lock();
        out.write_all(&t.to_tensor_proto_bytes(name))
            .and_then(|()| out.flush())
            .map_err(|e| lowbit::Error::Io { path: "standard output".into(), message: e.to_string() })?;
        return Ok(String::new());
    }
    lowbit::onnx::tensor_proto::write_tensor_file(path, t, name)?;
    Ok(described)
}

/// Writes a command's text result (if any) as one line.
pub fn print_text(text: &str) -> Result<(), Failure> {
    if text.is_empty() {
        return Ok(());
    }
    write_stdout(format!("{text}\n").as_bytes())
}

/// Prints `text` and succeeds.
pub fn printed(text: &str) -> Outcome {
    print_text(text).map(|()| ExitCode::SUCCESS)
}

/// Exit status of a check: 0 when it passed.
pub fn exit(passed: bool) -> ExitCode {
    if passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// Sets a limit from its flag's text, if the flag was given.
pub fn set_limit(slot: &mut u64, flag: Option<&str>) -> lowbit::Result<()> {
    if let Some(text) = flag {
        *slot = lowbit::onnx::limits::parse_count(text)?;
    }
    Ok(())
}

/// Exit status after a closed pipe: 128 + SIGPIPE, what a shell reports for a tool the signal
/// stopped (lowbit ignores the signal and stops by itself, with no message).
const CLOSED_PIPE_STATUS: u8 = 141;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        // A value our own parser refused: one line, as every other error of lowbit.
        // Our parsers' messages quote the value cut to a readable length.
        Err(e) if e.kind() == clap::error::ErrorKind::ValueValidation => {
            let flag = match e.get(clap::error::ContextKind::InvalidArg) {
                Some(clap::error::ContextValue::String(flag)) => flag.clone(),
                _ => "an argument".into(),
            };
            let why = std::error::Error::source(&e).map_or_else(|| "invalid value".to_string(), ToString::to_string);
            let _ = writeln!(std::io::stderr(), "lowbit: {flag}: {why}");
            return ExitCode::from(2);
        }
        Err(e) => e.exit(),
    };
    let outcome = match cli.command {
        Command::Tables(args) => tables::run(args),
        Command::Cast(args) => cast::run(args),
        Command::Run(args) => run::run(args),
        Command::Conformance(args) => conformance::run(args),
        Command::Range4(args) => range4::run(args),
        Command::Bench(args) => bench::run_command(args),
        Command::Quantize(args) => quantize::run_quantize(args),
        Command::Matmul(args) => matmul::run(args),
        Command::Dequantize(args) => quantize::run_dequantize(args),
        Command::Vectors(args) => vectors::run(args),
        Command::Check(args) => check::run(args),
        Command::Sweep(args) => sweep::run(args),
        Command::Diff(args) => diff::run(args),
        Command::Profiles(args) => profiles::run(args),
        Command::Schemes(args) => schemes::run(args),
        Command::Info(args) => info::run(args),
        Command::Checkpoint(args) => checkpoint::run(args),
        Command::Completions(args) => completions::completions(args),
        Command::Man(args) => completions::man(args),
    };
    let message = match outcome {
        Ok(code) => return code,
        Err(Failure::ClosedPipe) => return ExitCode::from(CLOSED_PIPE_STATUS),
        Err(Failure::Output(e)) => format!("lowbit: standard output: {e}"),
        Err(Failure::Lowbit(e)) => format!("lowbit: {e}"),
    };
    // Standard error may be gone too; there is nowhere left to report that.
    let _ = writeln!(std::io::stderr(), "{message}");
    ExitCode::FAILURE
}
