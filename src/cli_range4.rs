//! `lowbit range4 START STOP STEP --output-type DTYPE`: OpenVINO's Range-4, which is not an ONNX op,
//! from the command line. Each of START, STOP and STEP is `VALUE:DTYPE` (`2.5:f32`, `-1:i64`): the
//! value is read as that dtype (its exact decimal rounded once, as `lowbit cast` reads values).

use crate::convert::{decode_element, CastOptions, Element};
use crate::dtype::DType;
use crate::error::{quoted, Error, Result};
use crate::ops::range::{range4, RangeOptions};
use crate::profile::Profile;
use crate::strings::{self, StringGrammar};
use crate::tables::value_to_exact_decimal;
use crate::tensor::Tensor;

/// A scalar tensor from `VALUE:DTYPE`.
pub fn parse_scalar(role: &str, arg: &str) -> Result<Tensor> {
    let bad = |why: String| Error::InvalidOp { op: "range4".into(), message: format!("{role} {}: {why}", quoted(arg)) };
    // The dtype follows the last colon, so a value never has to avoid one.
    let (value, dtype) = arg.rsplit_once(':').ok_or_else(|| bad("expected VALUE:DTYPE, e.g. 2.5:f32".into()))?;
    let dtype = DType::parse(dtype).map_err(|e| bad(e.to_string()))?;
    let code = strings::parse_to_code(value, dtype, StringGrammar::Spec, &CastOptions::default())
        .map_err(|e| bad(e.to_string()))?;
    Tensor::from_codes(dtype, vec![], &[code])
}

/// Runs Range-4 on three `VALUE:DTYPE` arguments.
pub fn run(start: &str, stop: &str, step: &str, output_type: &str, profile: &str) -> Result<Tensor> {
    let output_type = DType::parse(output_type)?;
    let opts = RangeOptions::with_profile(Profile::parse(profile)?);
    range4(
        &parse_scalar("START", start)?,
        &parse_scalar("STOP", stop)?,
        &parse_scalar("STEP", step)?,
        output_type,
        &opts,
    )
}

/// One line per element: its index, its value (exact decimal) and its code in hex.
pub fn describe(out: &Tensor) -> Result<String> {
    let dtype = out.dtype();
    let digits = dtype.bits().unwrap_or(8).div_ceil(4) as usize;
    let mut lines = vec![format!("{} elements of {dtype}", out.len())];
    for i in 0..out.len() {
        let code = out.code(i).ok_or_else(|| Error::InvalidOp {
            op: "range4".into(),
            message: format!("element {i} of {dtype} has no code"),
        })?;
        let value = match decode_element(dtype, code)? {
            Element::Float(v) => value_to_exact_decimal(&v),
            Element::Int(v) => v.to_string(),
            Element::Bool(b) => b.to_string(),
        };
        lines.push(format!("{i:>6}  {value:<24} 0x{code:0digits$x}"));
    }
    Ok(lines.join("\n"))
}

/// The output's raw little-endian bytes (ONNX `raw_data`, sub-byte types packed).
#[must_use]
pub fn raw(out: &Tensor) -> Vec<u8> {
    out.raw().map(<[u8]>::to_vec).unwrap_or_default()
}
