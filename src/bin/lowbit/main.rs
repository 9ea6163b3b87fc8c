//! The `lowbit` command line tool.

mod bench;
mod cast;
mod quantize;
mod range4;
mod verify;

use clap::{Parser, Subcommand};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "lowbit", version, about = "Bit-exact reference for low-precision numerics (ONNX Cast and friends)")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// The attributes of a Cast and the profile, shared by every command that converts.
#[derive(clap::Args)]
struct Attributes {
    /// ONNX saturate attribute (float8 targets only).
    #[arg(long, default_value = "1", value_parser = ["0", "1"])]
    saturate: String,
    /// ONNX round_mode attribute (float8e8m0 targets only).
    #[arg(long, default_value = "up", value_parser = ["up", "down", "nearest"])]
    round_mode: String,
    /// Which implementation to be bit-exact with.
    #[arg(long, default_value = "spec", value_parser = lowbit::Profile::NAMES)]
    profile: String,
}

impl Attributes {
    fn options(&self) -> lowbit::Result<lowbit::CastOptions> {
        Ok(lowbit::CastOptions {
            saturate: self.saturate == "1",
            round_mode: lowbit::RoundMode::parse(&self.round_mode)?,
            profile: lowbit::Profile::parse(&self.profile)?,
        })
    }
}

/// The mode flags shared by `lowbit quantize` and `lowbit dequantize`: `--mx` (OCP
/// Microscaling) or `--scale` (ONNX linear quantization), checked against each other by
/// `crate::quantize::ModeFlags::mode`.
#[derive(clap::Args)]
struct QuantMode {
    /// OCP Microscaling format: mxfp8e4m3, mxfp8e5m2, mxfp6e2m3, mxfp6e3m2, mxfp4 (E2M1) or
    /// mxint8 (INT8 elements with an implicit 2^-6). Its scales go in --scales.
    #[arg(long, value_parser = lowbit::quant::mx::MxFormat::NAMES)]
    mx: Option<String>,
    /// MX only: the FLOAT8E8M0 scales file.
    #[arg(long, value_name = "S.pb")]
    scales: Option<PathBuf>,
    /// Linear only: the scale, a number (one FLOAT scale for the whole tensor, rounded once to
    /// float32) or a TensorProto file (1-D: per axis; the input's rank with --block-size:
    /// blocked). Must be positive and finite. A text that reads as a number is a number (write
    /// ./0.5 for a file of that name).
    #[arg(long, value_name = "NUMBER|S.pb", allow_hyphen_values = true)]
    scale: Option<String>,
    /// Linear only: the zero point, a number (exactly a value of the quantized type, repeated
    /// over the scale's shape) or a TensorProto file of the scale's shape. Default: none (0).
    #[arg(long, value_name = "NUMBER|Z.pb", allow_hyphen_values = true)]
    zero_point: Option<String>,
    /// Linear only: which implementation to be bit-exact with where they differ.
    #[arg(long, value_parser = lowbit::Profile::NAMES)]
    profile: Option<String>,
}

impl QuantMode {
    fn flags(self, to: Option<String>) -> crate::quantize::ModeFlags {
        crate::quantize::ModeFlags {
            mx: self.mx,
            scales: self.scales,
            scale: self.scale,
            zero_point: self.zero_point,
            profile: self.profile,
            to,
            ..Default::default()
        }
    }
}

/// The blocked axis and the block size.
#[derive(clap::Args)]
struct QuantBlocking {
    /// Elements per block along --axis (at least 1). MX: default 32. Linear: blocked
    /// quantization, with a scale file of the input's rank whose --axis is ceil(len / B) long (a
    /// short last block is allowed).
    #[arg(long)]
    block_size: Option<usize>,
    /// The per-axis or blocked axis; negative counts from the last. Default: -1 for MX, 1 for
    /// linear (the ONNX attribute's default; ignored for a per-tensor scale).
    #[arg(long, allow_hyphen_values = true)]
    axis: Option<i64>,
}

impl QuantBlocking {
    fn blocking(&self) -> crate::quantize::Blocking {
        crate::quantize::Blocking { axis: self.axis, block_size: self.block_size }
    }
}

/// Source and target of a verification command.
#[derive(clap::Args)]
struct VerifyFormats {
    /// Source: an ONNX dtype name or alias, or a format description
    /// eEmM[,bias=B][,special=ieee|fn|fnuz|none][,subnormal=keep|flush][,unsigned]
    /// (a bare eEmM that names an ONNX type, such as e4m3, is that type).
    #[arg(long)]
    from: String,
    /// Target, spelled as --from.
    #[arg(long)]
    to: String,
}

/// The IEEE options of a verification command. These follow IEEE 754 and TestFloat: saturation
/// is off unless asked for (unlike ONNX Cast's saturate=1 default).
#[derive(clap::Args)]
struct Rounding {
    /// rne (nearest even), rtz (toward zero), rdn (toward -inf), rup (toward +inf), rmm (nearest,
    /// ties away), raz (away from zero), rod (to odd), sr:R (stochastic, R random bits).
    #[arg(long, default_value = "rne")]
    round: String,
    /// When a result is tiny for the underflow flag: before or after rounding (TestFloat's
    /// default), or delivered (the result is subnormal or zero).
    #[arg(long, default_value = "after")]
    tininess: String,
    /// 1: overflow and infinities give the largest finite value. Default 0 (IEEE semantics).
    #[arg(long, default_value = "0")]
    saturate: String,
}

impl Rounding {
    fn options(&self) -> lowbit::Result<lowbit::verify::VerifyOptions> {
        lowbit::verify::VerifyOptions::from_words(&self.round, &self.tininess, &self.saturate)
    }
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
    /// ONNX Cast. With --from and no VALUES: raw little-endian elements on standard input (packed
    /// types as ONNX raw_data; STRING as a JSON array of strings) to the raw result on standard
    /// output. With --from and VALUES: a table of each value, its output code in hex and binary, its
    /// value and class. Without --from: `lowbit cast --to DTYPE IN.pb OUT.pb` casts a TensorProto file.
    Cast {
        /// Source dtype (ONNX name or alias), or a format description
        /// eEmM[,bias=B][,special=ieee|fn|fnuz|none][,subnormal=keep|flush][,unsigned]; omit it to
        /// cast a TensorProto file. With a described format on either side the conversion is
        /// IEEE's through the core (nearest even, --saturate for targets of 8 bits or fewer, the
        /// flags in the table), and a raw code of a described format takes 1, 2 or 4 bytes.
        #[arg(long)]
        from: Option<String>,
        /// Target dtype, or a format description as for --from.
        #[arg(long)]
        to: String,
        #[command(flatten)]
        attributes: Attributes,
        /// Element count, for packed input whose byte count leaves it ambiguous (e.g. an odd int4 count).
        #[arg(long)]
        count: Option<usize>,
        /// Threads for raw standard input (default: every core). The input is streamed in pieces
        /// of 2^20 elements, so memory stays flat whatever its size.
        #[arg(long)]
        threads: Option<usize>,
        /// Largest standard input read whole (STRING on either side: K, M, G, T suffixes are
        /// powers of 1024; `unlimited`), or largest IN.pb. Default: 1G for standard input, 4G
        /// for IN.pb. Raw input between fixed-width dtypes is streamed and has no limit.
        #[arg(long, value_name = "BYTES")]
        max_input_bytes: Option<String>,
        /// Values to cast, read as the source type (exact decimal, rounded once); or IN.pb OUT.pb.
        #[arg(allow_hyphen_values = true)]
        values: Vec<String>,
    },
    /// Run an ONNX model made of Cast, CastLike, Range, Slice, Gather, Constant, Identity (and what
    /// Range's function body uses) and write each graph output to DIR/<output name>.pb, all or
    /// nothing. Output names that are not plain file names (a path separator, `..`, a leading dot,
    /// empty) are an error.
    Run {
        /// The model file (external data is read from its directory, never outside it).
        model: PathBuf,
        /// An input as NAME=FILE.pb (a serialized TensorProto); repeat for each input.
        #[arg(long = "input", value_name = "NAME=FILE.pb")]
        inputs: Vec<String>,
        /// Where the outputs go.
        #[arg(long)]
        output_dir: PathBuf,
        #[arg(long, default_value = "spec", value_parser = lowbit::Profile::NAMES)]
        profile: String,
        /// Bytes the run may hold at once (K, M, G, T suffixes are powers of 1024; `unlimited`).
        /// Default: half of this machine's memory (physical, cgroup and address-space limits), or
        /// 4G when it cannot be read.
        #[arg(long, value_name = "BYTES")]
        max_memory: Option<String>,
        /// Elements the run may process over all nodes and Loop iterations (suffixes as above).
        /// Default: 4G (2^32); arithmetic, Range and text casts count several per element.
        #[arg(long, value_name = "ELEMENTS")]
        max_work: Option<String>,
        /// Largest model or TensorProto file read (suffixes as above). Default: 4G.
        #[arg(long, value_name = "BYTES")]
        max_input_bytes: Option<String>,
    },
    /// Run ONNX backend node-test folders (model.onnx, test_data_set_N/input_K.pb, output_K.pb):
    /// one line per test, then `N passed, M failed`; exit code 0 only when all pass.
    Conformance {
        /// Test folders, or folders of test folders.
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        #[arg(long, default_value = "spec", value_parser = lowbit::Profile::NAMES)]
        profile: String,
        /// exact: bits (NaN payloads included); onnx: the ONNX backend runner's rtol 1e-3, atol 1e-7.
        #[arg(long, default_value = "exact", value_parser = ["exact", "onnx"])]
        tolerance: String,
    },
    /// OpenVINO Range-4 (not an ONNX op): START, STOP and STEP as VALUE:DTYPE (e.g. 2.5:f32, -1:i64),
    /// each of its own type. Prints each element's value and code, or with --raw writes the raw
    /// little-endian output (packed types as ONNX raw_data) to standard output.
    Range4 {
        #[arg(allow_hyphen_values = true)]
        start: String,
        #[arg(allow_hyphen_values = true)]
        stop: String,
        #[arg(allow_hyphen_values = true)]
        step: String,
        /// Any numeric dtype, float8, float6, float4 and int4 included.
        #[arg(long)]
        output_type: String,
        /// spec (and every profile but openvino): the Range-4 text, exact and rounded once;
        /// openvino: OpenVINO's core reference.
        #[arg(long, default_value = "spec", value_parser = lowbit::Profile::NAMES)]
        profile: String,
        #[arg(long)]
        raw: bool,
        /// Bytes the output may take (K, M, G, T suffixes are powers of 1024; `unlimited`).
        /// Default: half of this machine's memory, as for `lowbit run`.
        #[arg(long, value_name = "BYTES")]
        max_memory: Option<String>,
        /// Elements of work (16 per output element, as Range counts in `lowbit run`).
        /// Default: 4G (2^32), so at most 2^28 elements: a few seconds.
        #[arg(long, value_name = "ELEMENTS")]
        max_work: Option<String>,
    },
    /// Throughput of FLOAT -> DTYPE against a plain copy and the reference path, in one process.
    Bench {
        /// Source dtype (ONNX name or alias; STRING allowed).
        #[arg(long, default_value = "float")]
        from: String,
        /// Target dtype.
        #[arg(long, default_value = "float8e4m3fn")]
        to: String,
        /// Elements per run (1 to 2^28).
        #[arg(long, default_value_t = 1 << 24)]
        elements: usize,
        /// Threads for lowbit's run (the baselines run on one).
        #[arg(long, default_value_t = 1)]
        threads: usize,
        /// Timed runs per path (the best is kept).
        #[arg(long, default_value_t = 5)]
        reps: usize,
        #[command(flatten)]
        attributes: Attributes,
        /// Print one JSON object instead of the table.
        #[arg(long)]
        json: bool,
        /// Also write the measured input here (ONNX raw data; a JSON array of strings for STRING),
        /// so other implementations can be timed on the same bytes.
        #[arg(long, value_name = "PATH")]
        write_input: Option<PathBuf>,
        /// Instead: time all 2^32 float32 bit patterns into --to on --threads threads (--from must
        /// be FLOAT), with a checksum of the outputs.
        #[arg(long, conflicts_with_all = ["elements", "reps", "write_input"])]
        sweep: bool,
        /// Instead of a Cast: ONNX QuantizeLinear-28 from FLOAT into --to (no zero point; one
        /// thread), on the input shaped [elements / 1024, 1024]: one scale, or with --block-size a
        /// scale per block along the last axis. The scales are 400 / (--to's largest value) in
        /// float32, times 1, 1.25, 1.5, 1.75 for blocks 0, 1, 2, 3 (mod 4), so peers can rebuild
        /// them.
        #[arg(long, conflicts_with_all = ["sweep", "mx", "threads"])]
        quantize: bool,
        /// Instead of a Cast: MX quantize and dequantize of FLOAT in this format (one thread), on
        /// the input shaped [elements / 1024, 1024], blocks along the last axis.
        #[arg(long, conflicts_with_all = ["sweep", "threads"], value_parser = lowbit::quant::mx::MxFormat::NAMES)]
        mx: Option<String>,
        /// With --quantize or --mx: elements per block along the last axis (--mx: default 32).
        #[arg(long)]
        block_size: Option<usize>,
    },
    /// Quantize a TensorProto file, in one of two modes.
    ///
    /// --mx FORMAT: OCP Microscaling (MX v1.0). IN (FLOAT, FLOAT16 or BFLOAT16) is cut into blocks
    /// of --block-size along --axis (a short last block is a block of its own); each block gets a
    /// power-of-two scale X = 2^(floor(log2(amax)) - emax), and its elements are value / X rounded
    /// to nearest even and clamped. --scales S.pb receives the scales (FLOAT8E8M0, IN's shape with
    /// the blocked axis ceil(len / block size) long), --out the elements (the element's ONNX type,
    /// packed as ONNX packs it): the x_scale and x of an ONNX DequantizeLinear with block_size.
    /// Both files are written, or neither.
    ///
    /// --scale S: ONNX linear quantization, exactly ONNX QuantizeLinear-28 (the newest version
    /// lowbit has; its type and attribute checks apply) with IN as x, S as y_scale, --zero-point as
    /// y_zero_point, --to as output_dtype, and --axis, --block-size, --saturate as the attributes:
    /// y = saturate(round_half_even(x / y_scale) + y_zero_point), packed as ONNX packs it.
    ///
    /// Examples: `lowbit quantize w.pb --mx mxfp4 --scales s.pb --out e.pb`;
    /// `lowbit quantize x.pb --scale 0.05 --zero-point 3 --to int8 --out q.pb`;
    /// `lowbit quantize w.pb --scale s.pb --block-size 32 --axis -1 --to int4 --out q.pb`.
    Quantize {
        #[command(flatten)]
        mode: QuantMode,
        #[command(flatten)]
        blocking: QuantBlocking,
        /// Linear only: the output type (int8, uint8, int16, uint16, int4, uint4, int2, uint2, the
        /// four float8, float4e2m1, float6e2m3, float6e3m2). Default: the --zero-point file's
        /// type, else uint8 (as ONNX).
        #[arg(long, value_name = "DTYPE")]
        to: Option<String>,
        /// Linear only: ONNX saturate for float8 outputs (1: out-of-range values and infinities
        /// become the largest finite value; 0: infinity or NaN). Default 1.
        #[arg(long, value_parser = ["0", "1"])]
        saturate: Option<String>,
        /// MX only: floor is the spec's scale (the largest elements may clamp); ceil takes the
        /// smallest power of two that needs no clamping. Default floor.
        #[arg(long, value_parser = ["floor", "ceil"])]
        scale_round: Option<String>,
        /// The input TensorProto.
        input: PathBuf,
        /// Where the output goes (MX: the elements).
        #[arg(long, value_name = "OUT.pb")]
        out: PathBuf,
        /// Largest input file read (K, M, G, T suffixes are powers of 1024; `unlimited`). Default: 4G.
        #[arg(long, value_name = "BYTES")]
        max_input_bytes: Option<String>,
    },
    /// Dequantize a TensorProto file, in one of two modes.
    ///
    /// --mx FORMAT: the elements with their --scales (from `lowbit quantize --mx` or any producer
    /// of the same layout) to FLOAT: element times its block's scale, rounded once. A NaN scale
    /// (0xFF) gives NaN for its whole block.
    ///
    /// --scale S: exactly ONNX DequantizeLinear-28 with IN as x, S as x_scale, --zero-point as
    /// x_zero_point (a number takes x's type), --to as output_dtype, --axis and --block-size as
    /// the attributes: y = (x - x_zero_point) * x_scale.
    ///
    /// Example: `lowbit dequantize q.pb --scale 0.05 --zero-point 3 --out x2.pb`.
    Dequantize {
        #[command(flatten)]
        mode: QuantMode,
        #[command(flatten)]
        blocking: QuantBlocking,
        /// Linear only: the output type, float, float16 or bfloat16. Default float.
        #[arg(long, value_name = "DTYPE")]
        to: Option<String>,
        /// The input TensorProto (MX: the elements).
        input: PathBuf,
        /// Where the result goes.
        #[arg(long, value_name = "OUT.pb")]
        out: PathBuf,
        /// Largest input file read (suffixes as above). Default: 4G.
        #[arg(long, value_name = "BYTES")]
        max_input_bytes: Option<String>,
    },
    /// Test vectors for hardware verification: operands of --from with the results and IEEE flags of
    /// converting them to --to, in TestFloat's layout (`operand result flags`, upper-case hex: 2
    /// digits for 8 bits or fewer, 4 for 16, 8 for 32, 16 for 64), as $readmemh columns or as CSV.
    /// Level 1 mixes special operands with random ones (one in three), level 2 one in two; -n
    /// raises the count (never below what holds every special operand, as testfloat_gen).
    Vectors {
        #[command(flatten)]
        formats: VerifyFormats,
        #[command(flatten)]
        rounding: Rounding,
        /// 1 or 2 (TestFloat's levels), or all: every source pattern (sources up to 16 bits).
        #[arg(long, default_value = "1")]
        level: String,
        /// Number of test cases (levels 1 and 2).
        #[arg(short = 'n')]
        count: Option<u64>,
        /// Seed of the random operands and of stochastic rounding's random words
        /// (seeded_random(seed, i) for case i, SplitMix64).
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// testfloat, readmemh (DIR/in.hex, out.hex, flags.hex; needs --out) or csv (with a header).
        #[arg(long, default_value = "testfloat")]
        format: String,
        /// Write into this folder (all files or none) instead of standard output.
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Check a dump of `operand result [flags]` lines (testfloat_ver's layout; an operation word
    /// and a rounding-mode word may come first, the mode then applies to that line) against the
    /// IEEE semantics. Streams any size; prints the first 20 mismatches, a summary by class and
    /// `N checked, M mismatches`; exit code 0 only without mismatches. NaN encodings and the
    /// value of invalid float-to-integer results are ignored unless asked for, as testfloat_ver.
    Check {
        #[command(flatten)]
        formats: VerifyFormats,
        #[command(flatten)]
        rounding: Rounding,
        /// Count a NaN of another encoding or sign as a mismatch.
        #[arg(long)]
        check_nans: bool,
        /// Count another value of an invalid float-to-integer result as a mismatch.
        #[arg(long)]
        check_inv_ints: bool,
        /// Ignore the flags.
        #[arg(long)]
        no_flags: bool,
        /// Find the configuration the dump follows: --to is only the width of its results (a
        /// format or a number of bits); every rounding mode but stochastic, every tininess rule,
        /// saturation on and off, every format of that width (8 bits or fewer: every e/m split
        /// with each special= and subnormal= rule) and ONNX Cast under each profile (values only)
        /// are ranked by agreement.
        #[arg(long)]
        which: bool,
        /// Seed of stochastic rounding's random words, as given to `lowbit vectors`.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// The dump (default or `-`: standard input).
        file: Option<PathBuf>,
    },
    /// Every pattern of a source of up to 32 bits, in ascending order: first `sha256 <hex>` of the
    /// concatenated output codes (each in its little-endian width, packed formats one code per
    /// byte), then the count per class and per flag. A progress bar shows on a terminal.
    Sweep {
        #[command(flatten)]
        formats: VerifyFormats,
        #[command(flatten)]
        rounding: Rounding,
        /// A configuration instead of the flags above (see `lowbit diff --help`), for example
        /// profile=onnxruntime,saturate=1 for ONNX Cast (values only).
        #[arg(long)]
        config: Option<String>,
        /// Threads (default: every core).
        #[arg(long)]
        threads: Option<usize>,
    },
    /// Where two configurations disagree over every pattern of a source of up to 32 bits: counts
    /// by input class and the first 20 examples; exit code 0 only when they agree everywhere.
    /// A configuration is comma-separated words: a mode (rne, rtz, rdn, rup, rmm, raz, rod, sr:R),
    /// tininess=before|after|delivered, saturate=0|1, profile=NAME (a profile, as `lowbit profiles` lists them)
    /// (ONNX Cast, values only), format=DESCRIPTION (the target; the format's own options
    /// bias=, special=, subnormal=, unsigned follow it). Words not given keep --round, --tininess,
    /// --saturate and --to. Example: lowbit diff --from f16 --to e4m3 rne rtz,tininess=before
    Diff {
        #[command(flatten)]
        formats: VerifyFormats,
        #[command(flatten)]
        rounding: Rounding,
        /// Threads (default: every core).
        #[arg(long)]
        threads: Option<usize>,
        /// The first configuration.
        a: String,
        /// The second configuration.
        b: String,
    },
    /// The profiles: each one's name and what it is bit-exact with; with --json also the dtype
    /// pairs where its implementation has no cast (the profile gives spec's answer there).
    Profiles {
        /// Machine-readable output (used by the cross-check scripts).
        #[arg(long, conflicts_with = "markdown")]
        json: bool,
        /// The whole decision table, as tables/profiles.md holds it: every row of every profile
        /// with its observation, and where every two profiles differ (takes a few seconds).
        #[arg(long)]
        markdown: bool,
    },
    /// Describe a dtype or a described format: ONNX number, width, packing and, for floating
    /// formats, the whole descriptor, its extreme values and the codes of its specials.
    Info {
        /// An ONNX name or alias (e.g. FLOAT8E4M3FN, e4m3fn, float8_e4m3fn, bf16), or a format
        /// description eEmM[,bias=B][,special=ieee|fn|fnuz|none][,subnormal=keep|flush][,unsigned]
        /// (a bare eEmM that names an ONNX type, such as e4m3 or e5m2, is that type).
        dtype: String,
    },
}

/// Why a command did not succeed.
enum Failure {
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

/// The outcome of a raw stream from standard input to standard output.
fn streamed<T>(result: Result<T, lowbit::StreamError>) -> Result<String, Failure> {
    match result {
        Ok(_) => Ok(String::new()),
        Err(lowbit::StreamError::Output(e)) => Err(output_failure(e)),
        Err(lowbit::StreamError::Input(e)) => {
            Err(lowbit::Error::Io { path: "standard input".into(), message: e.to_string() }.into())
        }
        Err(lowbit::StreamError::Data(e)) => Err(e.into()),
    }
}

fn output_failure(e: std::io::Error) -> Failure {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        Failure::ClosedPipe
    } else {
        Failure::Output(e)
    }
}

/// Writes `bytes` to standard output and flushes it, every error reported (never `println!`,
/// which panics when the write fails).
fn write_stdout(bytes: &[u8]) -> Result<(), Failure> {
    let mut out = std::io::stdout().lock();
    out.write_all(bytes).and_then(|()| out.flush()).map_err(output_failure)
}

/// Writes a command's text result (if any) as one line.
fn print_text(text: &str) -> Result<(), Failure> {
    if text.is_empty() {
        return Ok(());
    }
    write_stdout(format!("{text}\n").as_bytes())
}

/// `lowbit profiles`.
fn profiles(json: bool) -> String {
    use lowbit::Profile;
    if !json {
        return Profile::ALL.iter().map(|p| format!("{:<15} {}", p.name(), p.peer())).collect::<Vec<_>>().join("\n");
    }
    let entries: Vec<serde_json::Value> = Profile::ALL
        .iter()
        .map(|p| {
            let pairs: Vec<[&str; 2]> =
                p.fallback_pairs().iter().map(|(from, to)| [from.onnx_name(), to.onnx_name()]).collect();
            serde_json::json!({ "name": p.name(), "peer": p.peer(), "falls_back": pairs })
        })
        .collect();
    serde_json::json!({ "profiles": entries }).to_string()
}

fn run(cli: Cli) -> Result<String, Failure> {
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
        Command::Info { dtype } => Ok(info(&lowbit::verify::Format::parse(&dtype)?)),
        Command::Profiles { markdown: true, .. } => Ok(lowbit::tables::profiles_markdown().trim_end().to_string()),
        Command::Profiles { json, .. } => Ok(profiles(json)),
        Command::Bench { from, to, threads, attributes, json, sweep: true, .. } => {
            if lowbit::DType::parse(&from)? != lowbit::DType::Float {
                return Err(lowbit::Error::InvalidOp {
                    op: "bench --sweep".into(),
                    message: format!("the sweep is of float32 inputs; --from is {from}"),
                }
                .into());
            }
            let sweep = crate::bench::sweep(lowbit::DType::parse(&to)?, &attributes.options()?, threads)?;
            Ok(if json { sweep.json() } else { sweep.table() })
        }
        Command::Bench { from, to, elements, reps, json, write_input, quantize, mx, block_size, .. }
            if quantize || mx.is_some() =>
        {
            if lowbit::DType::parse(&from)? != lowbit::DType::Float {
                return Err(lowbit::Error::InvalidOp {
                    op: "bench --quantize/--mx".into(),
                    message: format!("the quantization benchmarks take float32 input; --from is {from}"),
                }
                .into());
            }
            let op = match mx {
                Some(format) => crate::bench::QuantizeOp::Mx {
                    format: lowbit::quant::mx::MxFormat::parse(&format)?,
                    block_size: block_size.unwrap_or(lowbit::quant::mx::DEFAULT_BLOCK_SIZE),
                },
                None => crate::bench::QuantizeOp::Linear { to: lowbit::DType::parse(&to)?, block_size },
            };
            let config = crate::bench::QuantizeConfig { op, elements, reps: reps.max(1) };
            let (report, input) = crate::bench::run_quantize(&config)?;
            if let Some(path) = write_input {
                crate::bench::write_input(&path, &input)?;
            }
            Ok(if json { report.json() } else { report.table() })
        }
        Command::Bench { block_size: Some(_), .. } => Err(lowbit::Error::InvalidOp {
            op: "bench".into(),
            message: "--block-size goes with --quantize or --mx".into(),
        }
        .into()),
        Command::Bench { from, to, elements, threads, reps, attributes, json, write_input, .. } => {
            let config = crate::bench::Config {
                from: lowbit::DType::parse(&from)?,
                to: lowbit::DType::parse(&to)?,
                elements,
                threads: threads.max(1),
                reps: reps.max(1),
                opts: attributes.options()?,
            };
            let (report, input) = crate::bench::run(&config)?;
            if let Some(path) = write_input {
                crate::bench::write_input(&path, &input)?;
            }
            Ok(if json { report.json() } else { report.table() })
        }
        Command::Range4 { start, stop, step, output_type, profile, raw, max_memory, max_work } => {
            let mut limits = lowbit::onnx::limits::Limits::default();
            set_limit(&mut limits.max_memory, max_memory.as_deref())?;
            set_limit(&mut limits.max_work, max_work.as_deref())?;
            let out = crate::range4::run_with(&start, &stop, &step, &output_type, &profile, &limits)?;
            if raw {
                write_stdout(out.raw().unwrap_or_default())?;
                return Ok(String::new());
            }
            // Line by line: the text of a long output is several times its size.
            let mut stdout = std::io::BufWriter::new(std::io::stdout().lock());
            for line in crate::range4::describe_lines(&out) {
                writeln!(stdout, "{}", line?).map_err(output_failure)?;
            }
            stdout.flush().map_err(output_failure)?;
            Ok(String::new())
        }
        Command::Run { model, inputs, output_dir, profile, max_memory, max_work, max_input_bytes } => {
            use lowbit::files;
            use lowbit::onnx::{limits, outputs, runner::Model, tensor_proto};
            let mut limits = limits::Limits::default();
            for (flag, slot) in [
                (max_memory, &mut limits.max_memory),
                (max_work, &mut limits.max_work),
                (max_input_bytes, &mut limits.max_input_bytes),
            ] {
                if let Some(text) = flag {
                    *slot = limits::parse_count(&text)?;
                }
            }
            let profile = lowbit::Profile::parse(&profile)?;
            let model = Model::load_with(&model, &limits)?;
            // Refuse unusable output names before spending any time on the run.
            for name in model.output_names() {
                files::check_output_name(&name)?;
            }
            let mut named = std::collections::HashMap::new();
            for spec in inputs {
                let (name, file) = spec.split_once('=').ok_or_else(|| lowbit::Error::InvalidOp {
                    op: "run".into(),
                    message: format!("--input {} is not NAME=FILE.pb", lowbit::Error::quote(&spec)),
                })?;
                named.insert(name.to_string(), tensor_proto::read_tensor_file_with(file.as_ref(), &limits)?);
            }
            let outputs = model.run_with(&named, profile, &limits)?;
            let paths = outputs::write_outputs(&output_dir, &outputs)?;
            let lines: Vec<String> = paths
                .iter()
                .zip(&outputs)
                .map(|(path, (_, tensor))| format!("{} {} {:?}", path.display(), tensor.dtype(), tensor.shape()))
                .collect();
            Ok(lines.join("\n"))
        }
        Command::Conformance { .. }
        | Command::Vectors { .. }
        | Command::Check { .. }
        | Command::Sweep { .. }
        | Command::Diff { .. } => unreachable!("handled in main"),
        Command::Quantize { mode, blocking, to, saturate, scale_round, input, out, max_input_bytes } => {
            let mut limits = lowbit::onnx::limits::Limits::default();
            set_limit(&mut limits.max_input_bytes, max_input_bytes.as_deref())?;
            let flags = crate::quantize::ModeFlags { saturate, scale_round, ..mode.flags(to) };
            let args = crate::quantize::QuantizeArgs {
                mode: flags.mode(crate::quantize::Direction::Quantize)?,
                blocking: blocking.blocking(),
                input,
                out,
                limits,
            };
            Ok(crate::quantize::quantize(&args)?)
        }
        Command::Dequantize { mode, blocking, to, input, out, max_input_bytes } => {
            let mut limits = lowbit::onnx::limits::Limits::default();
            set_limit(&mut limits.max_input_bytes, max_input_bytes.as_deref())?;
            let args = crate::quantize::DequantizeArgs {
                mode: mode.flags(to).mode(crate::quantize::Direction::Dequantize)?,
                blocking: blocking.blocking(),
                input,
                out,
                limits,
            };
            Ok(crate::quantize::dequantize(&args)?)
        }
        Command::Cast { from, to, attributes, count, threads, max_input_bytes, values } => {
            // A described format on a side: the IEEE conversion through the core.
            let described = match &from {
                Some(from) => lowbit::verify::DescribedCast::new(from, &to, attributes.saturate == "1")?,
                None => None,
            };
            if let Some(described) = described {
                if !values.is_empty() {
                    return Ok(described.table(&values)?);
                }
                if count.is_some() {
                    return Err(lowbit::Error::InvalidOp {
                        op: "cast".into(),
                        message: "--count is for ONNX dtypes on both sides; a described format's raw codes are \
                                  whole bytes each"
                            .into(),
                    }
                    .into());
                }
                let (mut input, mut output) = (std::io::stdin().lock(), std::io::stdout().lock());
                return streamed(described.stream(&mut input, &mut output));
            }
            let to = lowbit::DType::parse(&to)?;
            let opts = attributes.options()?;
            let Some(from) = from else {
                let [input, output] = values.as_slice() else {
                    return Err(lowbit::Error::InvalidOp {
                        op: "cast".into(),
                        message: "without --from, give exactly IN.pb OUT.pb".into(),
                    }
                    .into());
                };
                let mut limits = lowbit::onnx::limits::Limits::default();
                set_limit(&mut limits.max_input_bytes, max_input_bytes.as_deref())?;
                let tensor = lowbit::onnx::tensor_proto::read_tensor_file_with(input.as_ref(), &limits)?;
                let out = lowbit::cast(&tensor, to, &opts)?;
                lowbit::onnx::tensor_proto::write_tensor_file(output.as_ref(), &out, None)?;
                return Ok(format!("wrote {} {:?} to {output}", out.dtype(), out.shape()));
            };
            let from = lowbit::DType::parse(&from)?;
            if values.is_empty() && from != lowbit::DType::String && to != lowbit::DType::String {
                let plan = lowbit::Plan::new(from, to, &opts)?;
                let threads = threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from));
                let (mut input, mut output) = (std::io::stdin().lock(), std::io::stdout().lock());
                return streamed(plan.run_stream(&mut input, &mut output, count, threads.max(1)));
            }
            if values.is_empty() {
                // STRING on a side: JSON text, read whole (its elements have no fixed size), within
                // --max-input-bytes.
                let mut limit = crate::cast::DEFAULT_MAX_TEXT_INPUT_BYTES;
                set_limit(&mut limit, max_input_bytes.as_deref())?;
                let input = crate::cast::read_input(std::io::stdin().lock(), limit)?;
                let out = crate::cast::cast_stream(&input, from, to, count, &opts)?;
                write_stdout(&out)?;
                Ok(String::new())
            } else {
                Ok(crate::cast::cast_values_table(&values, from, to, &opts)?)
            }
        }
    }
}

/// Sets a limit from its flag's text, if the flag was given.
fn set_limit(slot: &mut u64, flag: Option<&str>) -> lowbit::Result<()> {
    if let Some(text) = flag {
        *slot = lowbit::onnx::limits::parse_count(text)?;
    }
    Ok(())
}

fn info(format: &lowbit::verify::Format) -> String {
    use lowbit::verify::Format;
    let mut lines = match *format {
        Format::Onnx(dtype) => vec![
            format!("{} (ONNX {})", dtype.onnx_name(), dtype.onnx_number()),
            "kind: ONNX type".to_string(),
            format!("bits: {}", dtype.bits().map_or("variable".to_string(), |b| b.to_string())),
            format!("packing: {:?}", dtype.packing()),
        ],
        Format::Described(f) => vec![
            f.description(),
            "kind: described format (not an ONNX type)".to_string(),
            format!("bits: {}", f.width()),
        ],
    };
    if let Some(f) = format.float_format() {
        float_info(&f, &mut lines);
    }
    lines.join("\n")
}

/// The descriptor of a float format, its extreme values and the codes of its specials.
fn float_info(f: &lowbit::format::FloatFormat, lines: &mut Vec<String>) {
    use lowbit::format::NonFinite;
    // Exact decimals are short for every format up to float64's exponent range; beyond it a
    // value prints as significand * 2^exponent.
    let value = |code: u64| match f.decode(code) {
        lowbit::Value::Finite(e) if f.exponent_bits > 11 => {
            format!("{}{} * 2^{}", if e.negative { "-" } else { "" }, e.significand, e.exponent)
        }
        v => lowbit::strings::value_to_exact_decimal(&v),
    };
    if f.subnormals {
        lines.push(format!("description: {}", f.description()));
    } else {
        lines.push("description: none (a format without zero is not describable)".to_string());
    }
    lines.push(format!(
        "exponent bits: {}, mantissa bits: {}, bias: {}, signed: {}, subnormals: {}",
        f.exponent_bits,
        f.mantissa_bits,
        f.bias,
        f.signed,
        if !f.subnormals {
            "none (exponent field 0 is normal)"
        } else if f.flush_subnormals {
            "flushed to zero"
        } else {
            "kept"
        }
    ));
    let special = match f.non_finite {
        NonFinite::Ieee => "ieee (infinity and NaN at the all-ones exponent)",
        NonFinite::NanAtAllOnes => "fn (no infinity, NaN at the all-ones magnitude)",
        NonFinite::NanAtNegativeZero => "fnuz (no infinity, NaN at the code of -0)",
        NonFinite::None => "none (every code is finite)",
    };
    lines.push(format!("non-finite: {:?}, special: {special}, zero: {:?}", f.non_finite, f.zero()));
    lines.push(format!("NaN payloads kept: {}", f.nan_payload));
    lines.push(format!("max: {} (code {:#x})", value(f.max_code()), f.max_code()));
    lines.push(format!("lowest: {} (code {:#x})", value(f.lowest_code()), f.lowest_code()));
    lines.push(format!(
        "min positive normal: {} (code {:#x})",
        value(f.min_positive_normal_code()),
        f.min_positive_normal_code()
    ));
    if f.flush_subnormals {
        lines.push("min positive: subnormals flush to zero (subnormal codes read as 0)".to_string());
    } else {
        lines.push(format!("min positive: {} (code {:#x})", value(f.min_positive_code()), f.min_positive_code()));
    }
    match (f.zero_code(false), f.zero_code(true)) {
        (Some(p), Some(n)) if p != n => lines.push(format!("+0: code {p:#x}, -0: code {n:#x}")),
        (Some(p), _) => lines.push(format!("zero: code {p:#x} (no -0)")),
        (None, _) => lines.push("zero: none".to_string()),
    }
    match (f.infinity_code(false), f.infinity_code(true)) {
        (Some(p), Some(n)) if f.signed => lines.push(format!("infinity: code {p:#x}, -infinity: code {n:#x}")),
        (Some(p), _) => lines.push(format!("infinity: code {p:#x}")),
        (None, _) => lines.push("infinity: none".to_string()),
    }
    match f.non_finite {
        NonFinite::Ieee if f.mantissa_bits >= 2 => {
            let quiet = f.nan_code(false).unwrap_or_default();
            let first = f.infinity_code(false).unwrap_or_default() + 1;
            lines.push(format!(
                "NaN: quiet {quiet:#x} (canonical; codes {quiet:#x}..={:#x} and their negatives are quiet), \
                 signalling {first:#x}..={:#x}",
                quiet | f.fraction_field_mask(),
                quiet - 1
            ));
        }
        _ => match (f.nan_code(false), f.nan_code(true)) {
            (Some(p), Some(n)) if p != n => lines.push(format!("NaN: codes {p:#x} and {n:#x}")),
            (Some(p), _) => lines.push(format!("NaN: code {p:#x}")),
            (None, _) => lines.push("NaN: none".to_string()),
        },
    }
}

fn conformance(dirs: &[PathBuf], profile: &str, tolerance: &str) -> Result<ExitCode, Failure> {
    use lowbit::onnx::conformance;
    let profile = lowbit::Profile::parse(profile)?;
    let tolerance = conformance::Tolerance::parse(tolerance)?;
    let outcomes: Vec<_> =
        conformance::test_dirs(dirs)?.iter().map(|d| conformance::run_test(d, profile, tolerance)).collect();
    print_text(&conformance::report(&outcomes))?;
    Ok(if outcomes.iter().all(|o| o.failure.is_none()) { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

/// The verification commands, which choose their exit code.
fn verify(command: Command) -> Result<ExitCode, Failure> {
    use crate::verify as cli_verify;
    let threads = |t: Option<usize>| t.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from));
    let exit = |ok: bool| if ok { ExitCode::SUCCESS } else { ExitCode::FAILURE };
    match command {
        Command::Vectors { formats, rounding, level, count, seed, format, out } => {
            let layout = cli_verify::VectorLayout::parse(&format)?;
            let request = cli_verify::VectorsRequest {
                from: &formats.from,
                to: &formats.to,
                options: rounding.options()?,
                level: &level,
                count,
                seed,
            };
            let vectors = cli_verify::vectors(&request)?;
            match out {
                Some(dir) => {
                    let written = cli_verify::write_vectors_to(&dir, &vectors, layout)?;
                    let names: Vec<String> = written.iter().map(|p| p.display().to_string()).collect();
                    print_text(&format!("wrote {} cases to {}", vectors.len(), names.join(", ")))?;
                }
                None if layout == cli_verify::VectorLayout::Readmemh => {
                    return Err(lowbit::Error::InvalidOp {
                        op: "vectors".into(),
                        message: "--format readmemh writes one file per column: give --out DIR".into(),
                    }
                    .into());
                }
                None => {
                    let mut stdout = std::io::BufWriter::new(std::io::stdout().lock());
                    cli_verify::write_vectors(&mut stdout, &vectors, layout).map_err(output_failure)?;
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Check { formats, rounding, check_nans, check_inv_ints, no_flags, which, seed, file } => {
            let request = cli_verify::CheckRequest {
                from: &formats.from,
                to: &formats.to,
                options: rounding.options()?,
                check: lowbit::verify::check::CheckOptions {
                    check_nans,
                    check_invalid_integers: check_inv_ints,
                    no_flags,
                    seed,
                },
                which,
                file: file.as_deref(),
            };
            let (report, clean) = cli_verify::run_check(&request)?;
            print_text(&report)?;
            Ok(exit(clean))
        }
        Command::Sweep { formats, rounding, config, threads: t } => {
            let defaults = rounding.options()?;
            let config = match config {
                Some(text) => lowbit::verify::config::Config::parse(&text, defaults)?,
                None => lowbit::verify::config::Config::ieee(defaults),
            };
            let (report, seconds) = cli_verify::run_sweep(&formats.from, &formats.to, &config, threads(t))?;
            print_text(&report)?;
            // The time is not part of the result: standard error.
            let _ = writeln!(std::io::stderr(), "swept in {seconds:.2} s");
            Ok(ExitCode::SUCCESS)
        }
        Command::Diff { formats, rounding, threads: t, a, b } => {
            let (report, agree) =
                cli_verify::run_diff(&formats.from, &formats.to, &a, &b, rounding.options()?, threads(t))?;
            print_text(&report)?;
            Ok(exit(agree))
        }
        _ => unreachable!("only verification commands come here"),
    }
}

/// Exit status after a closed pipe: 128 + SIGPIPE, what a shell reports for a tool the signal
/// stopped (lowbit ignores the signal and stops by itself, with no message).
const CLOSED_PIPE_STATUS: u8 = 141;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let outcome = if let Command::Conformance { dirs, profile, tolerance } = &cli.command {
        conformance(dirs, profile, tolerance)
    } else if matches!(
        cli.command,
        Command::Vectors { .. } | Command::Check { .. } | Command::Sweep { .. } | Command::Diff { .. }
    ) {
        verify(cli.command)
    } else {
        run(cli).and_then(|text| print_text(&text)).map(|()| ExitCode::SUCCESS)
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
