//! `lowbit range4 START STOP STEP --to DTYPE`: OpenVINO's Range-4, which is not an ONNX op,
//! from the command line. Each of START, STOP and STEP is `VALUE:DTYPE` (`2.5:f32`, `-1:i64`): the
//! value is read as that dtype (its exact decimal rounded once, as `lowbit cast` reads values).

use lowbit::onnx::limits::{work_per_element, Limits};
use lowbit::ops::range::{range4, RangeOptions, DEFAULT_MAX_ELEMENTS};
use lowbit::profile::StringGrammar;
use lowbit::strings::value_to_exact_decimal;
use lowbit::strings::{self};
use lowbit::DType;
use lowbit::Profile;
use lowbit::Tensor;
use lowbit::{decode_element, CastOptions, Element};
use lowbit::{Error, Result};

/// A scalar tensor from `VALUE:DTYPE`.
pub fn parse_scalar(role: &str, arg: &str) -> Result<Tensor> {
    let bad =
        |why: String| Error::InvalidOp { op: "range4".into(), message: format!("{role} {}: {why}", Error::quote(arg)) };
    // The dtype follows the last colon, so a value never has to avoid one.
    let (value, dtype) = arg.rsplit_once(':').ok_or_else(|| bad("expected VALUE:DTYPE, e.g. 2.5:f32".into()))?;
    let dtype = DType::parse(dtype).map_err(|e| bad(e.to_string()))?;
    let code = strings::parse_to_code(value, dtype, StringGrammar::Spec, &CastOptions::default())
        .map_err(|e| bad(e.to_string()))?;
    Tensor::from_codes(dtype, vec![], &[code])
}

/// The most elements a Range-4 output may have under `limits`: as many as the work budget pays
/// for (each element of Range counts [`work_per_element`] elements of work, as in a graph run) and
/// as the memory budget holds in `output_type`, and never more than [`DEFAULT_MAX_ELEMENTS`].
#[must_use]
pub fn max_elements(output_type: DType, limits: &Limits) -> usize {
    let by_work = limits.max_work / work_per_element("Range", false);
    let bits = u128::from(output_type.bits().unwrap_or(8).max(1));
    let by_memory = u128::from(limits.max_memory) * 8 / bits;
    let cap = u128::from(by_work).min(by_memory).min(DEFAULT_MAX_ELEMENTS as u128);
    usize::try_from(cap).unwrap_or(usize::MAX)
}

/// Runs Range-4 on three `VALUE:DTYPE` arguments, refusing (before allocating) an output larger
/// than [`max_elements`] allows.
pub fn run_with(
    start: &str,
    stop: &str,
    step: &str,
    output_type: DType,
    profile: Profile,
    limits: &Limits,
) -> Result<Tensor> {
    let cap = max_elements(output_type, limits);
    let opts = RangeOptions { max_elements: cap, ..RangeOptions::with_profile(profile) };
    range4(
        &parse_scalar("START", start)?,
        &parse_scalar("STOP", stop)?,
        &parse_scalar("STEP", step)?,
        output_type,
        &opts,
    )
    .map_err(|e| match e {
        Error::TooLarge { what } => Error::TooLarge {
            what: format!(
                "{what} (the smaller of --max-work {} / {} per element and --max-memory {} bytes in {output_type}, \
                     at most 2^31)",
                limits.max_work,
                work_per_element("Range", false),
                limits.max_memory
            ),
        },
        other => other,
    })
}

/// One line per element (its index, its value as an exact decimal and its code in hex) after a
/// header, one at a time, so that a long output is written as it is made instead of held whole.
pub fn describe_lines(out: &Tensor) -> impl Iterator<Item = Result<String>> + '_ {
    let dtype = out.dtype();
    let digits = dtype.bits().unwrap_or(8).div_ceil(4) as usize;
    let header = std::iter::once(Ok(format!("{} elements of {dtype}", out.len())));
    header.chain((0..out.len()).map(move |i| {
        let code = out.code(i).ok_or_else(|| Error::InvalidOp {
            op: "range4".into(),
            message: format!("element {i} of {dtype} has no code"),
        })?;
        let value = match decode_element(dtype, code)? {
            Element::Float(v) => value_to_exact_decimal(&v),
            Element::Int(v) => v.to_string(),
            Element::Bool(b) => b.to_string(),
        };
        Ok(format!("{i:>6}  {value:<24} 0x{code:0digits$x}"))
    }))
}

/// `lowbit range4`'s flags.
#[derive(clap::Args)]
pub struct Args {
    /// START as VALUE:DTYPE.
    #[arg(allow_hyphen_values = true)]
    start: String,
    /// STOP as VALUE:DTYPE.
    #[arg(allow_hyphen_values = true)]
    stop: String,
    /// STEP as VALUE:DTYPE.
    #[arg(allow_hyphen_values = true)]
    step: String,
    /// The output type: any numeric dtype, float8, float6, float4 and int4 included.
    #[arg(long, visible_alias = "output-type", value_name = "DTYPE", value_parser = crate::dtype_name)]
    to: DType,
    /// spec (and every profile but openvino): the Range-4 text, exact and rounded once;
    /// openvino: OpenVINO's core reference.
    #[arg(long, default_value = "spec", value_parser = crate::profile_parser())]
    profile: Profile,
    /// Write the raw little-endian output (packed types as ONNX raw_data) instead of the table.
    #[arg(long)]
    raw: bool,
    /// Bytes the output may take (K, M, G, T suffixes are powers of 1024; `unlimited`).
    /// Default: half of this machine's memory, as for `lowbit run`.
    #[arg(long, value_name = "BYTES")]
    max_memory: Option<String>,
    /// Elements of work (16 per output element, as Range counts in `lowbit run`).
    /// Default: 4G (2^32), so at most 2^28 elements (2^26 float32 elements took about 10 s
    /// with --raw on a busy 2-core machine).
    #[arg(long, value_name = "ELEMENTS")]
    max_work: Option<String>,
}

/// `lowbit range4`.
pub fn run(args: Args) -> crate::Outcome {
    use std::io::Write;
    let mut limits = Limits::default();
    crate::set_limit(&mut limits.max_memory, args.max_memory.as_deref())?;
    crate::set_limit(&mut limits.max_work, args.max_work.as_deref())?;
    let out = run_with(&args.start, &args.stop, &args.step, args.to, args.profile, &limits)?;
    if args.raw {
        crate::write_stdout(out.raw().unwrap_or_default())?;
        return Ok(std::process::ExitCode::SUCCESS);
    }
    // Line by line: the text of a long output is several times its size.
    let mut stdout = std::io::BufWriter::new(std::io::stdout().lock());
    for line in describe_lines(&out) {
        writeln!(stdout, "{}", line?).map_err(crate::output_failure)?;
    }
    stdout.flush().map_err(crate::output_failure)?;
    Ok(std::process::ExitCode::SUCCESS)
}
