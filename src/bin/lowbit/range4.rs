//! `lowbit range4 START STOP STEP --output-type DTYPE`: OpenVINO's Range-4, which is not an ONNX op,
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
    output_type: &str,
    profile: &str,
    limits: &Limits,
) -> Result<Tensor> {
    let output_type = DType::parse(output_type)?;
    let cap = max_elements(output_type, limits);
    let opts = RangeOptions { max_elements: cap, ..RangeOptions::with_profile(Profile::parse(profile)?) };
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
