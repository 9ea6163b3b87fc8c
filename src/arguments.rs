//! **The arguments a person types**, checked once for every front end: the `lowbit` command line
//! and the Python package call these, so the same bad argument gives the same message in both
//! (thread counts, block sizes, shapes, quantization scales and number zero points, integers
//! read from text).
//!
//! ```
//! use lowbit::{arguments, DType};
//! assert_eq!(arguments::threads(Some(4)).unwrap(), 4);
//! assert!(arguments::threads(Some(0)).unwrap_err().to_string().contains("at least 1"));
//! let z = arguments::zero_point_from_text("-3", DType::Int8, &[2], "y_zero_point", "QuantizeLinear-28").unwrap();
//! assert_eq!(z.codes().unwrap(), [0xFD, 0xFD]);
//! assert!(arguments::integer_from_text("1.5", DType::Int8).is_err());
//! ```

use crate::alloc_prelude::*;
use crate::dtype::{integer_bounds, DType, Kind};
use crate::error::{quoted, shown_shape, Error, Result};
use crate::profile::NumberStyle;
use crate::round::{self, EncodeOptions, RoundingMode, RoundingOptions, Status};
use crate::strings;
use crate::tensor::Tensor;
use crate::value::Value;

pub use crate::names::{code_from_hex, edit_distance, nearest_names};

fn invalid(what: &str, message: String) -> Error {
    Error::InvalidOp { op: what.into(), message }
}

/// The default of `saturate` for a conversion from `from` into `to`, one rule for `lowbit cast`,
/// `vectors`, `check`, `sweep` and `diff` and their Python twins: ONNX's saturate=1 when both
/// sides are ONNX types and the target is a float8 type (the types ONNX's attribute is for);
/// otherwise IEEE's behaviour, no saturation (a described format on either side, other targets).
#[cfg(feature = "verify")]
#[must_use]
pub fn default_saturate(from: &crate::verify::Format, to: &crate::verify::Format) -> bool {
    use crate::verify::Format;
    matches!((from, to), (Format::Onnx(_), Format::Onnx(d))
        if matches!(d, DType::Float8E4M3FN | DType::Float8E4M3FNUZ | DType::Float8E5M2 | DType::Float8E5M2FNUZ))
}

/// A dump checked against the semantics must hold a case: a simulator that wrote nothing does
/// not pass (`lowbit check` and `lowbit.check` alike) unless the caller accepts it on purpose.
/// `name` names the dump, `skipped` counts its comment, blank and header lines.
pub fn nonempty_dump(name: &str, checked: u64, skipped: u64, allow_empty: bool) -> Result<()> {
    if checked > 0 || allow_empty {
        return Ok(());
    }
    Err(invalid(
        "check",
        format!(
            "{name} holds no case to check ({skipped} comment, blank or header lines skipped); an empty dump is \
             not a pass (--allow-empty, allow_empty=True in Python, accepts it)"
        ),
    ))
}

/// A thread count: `None` is every core; `Some(n)` must be at least 1.
pub fn threads(requested: Option<i64>) -> Result<usize> {
    match requested {
        None => {
            // Asked once: the standard library reads the cgroup files each time (tens of
            // microseconds, more than a small cast from Python takes).
            static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
            Ok(*CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, usize::from)))
        }
        Some(n) if n >= 1 => Ok(usize::try_from(n).unwrap_or(usize::MAX)),
        Some(n) => Err(invalid(
            "threads",
            format!("{n} is not a thread count; give at least 1 (or leave it out for every core)"),
        )),
    }
}

/// A block size (elements per block along the blocked axis): at least 1.
pub fn block_size(requested: i64) -> Result<usize> {
    if requested < 1 {
        return Err(invalid(
            "block_size",
            format!("{requested} is not a block size; a block holds at least 1 element"),
        ));
    }
    Ok(usize::try_from(requested).unwrap_or(usize::MAX))
}

/// A shape given as signed integers: every dimension 0 or more.
pub fn shape(dims: &[i64]) -> Result<Vec<usize>> {
    dims.iter()
        .enumerate()
        .map(|(axis, &d)| {
            usize::try_from(d).map_err(|_| {
                invalid(
                    "shape",
                    format!(
                        "shape {}: dimension {axis} is negative ({d}); a dimension is 0 or more",
                        shown_shape(dims)
                    ),
                )
            })
        })
        .collect()
}

/// An element's value in decimal: its float64 value's shortest digits (every element of a scale
/// or zero point type is a float64 value), so 0.3125 in E4M3FN reads 0.3125, not its own 0.3.
fn exact_text(dtype: DType, code: u64) -> Result<String> {
    let wide = crate::convert::convert_code(dtype, DType::Double, code, &crate::CastOptions::default())?;
    strings::format_code(DType::Double, wide, NumberStyle::Spec)
}

/// Refuses a scale with an element that is zero, negative, infinite or NaN. `role` names the
/// input (`y_scale`), `op` the operation (`QuantizeLinear-28`). Types that hold no numbers are
/// left to the operation's type check.
pub fn check_scales(scale: &Tensor, role: &str, op: &str) -> Result<()> {
    let dtype = scale.dtype();
    if !matches!(dtype.kind(), Kind::Float(_) | Kind::Integer { .. }) {
        return Ok(());
    }
    for i in 0..scale.len() {
        let Some(code) = scale.code(i) else { continue };
        let positive = match crate::convert::decode_element(dtype, code)? {
            crate::Element::Float(Value::Finite(e)) => !e.negative && !e.is_zero(),
            crate::Element::Int(v) => v > 0,
            _ => false,
        };
        if !positive {
            let text = exact_text(dtype, code)?;
            let which = if scale.shape().is_empty() { String::new() } else { format!(" element {i}") };
            return Err(invalid(op, format!("{role}{which} is {text}: a scale must be positive and finite")));
        }
    }
    Ok(())
}

/// The integer a text holds exactly (`None`: beyond 64 bits), or an error naming the text: `1.5`
/// or `nan` into an integer type is refused, never truncated.
fn exact_integer(text: &str, dtype: DType) -> Result<Option<(bool, u64)>> {
    let not_integer = || invalid("value", format!("{} is not an integer; {dtype} holds integers only", quoted(text)));
    let Value::Finite(exact) = strings::parse_exact_value(text)? else { return Err(not_integer()) };
    match round::round_to_integer_exactly(exact, RoundingMode::NearestEven, 0) {
        Some((_, _, true)) => Err(not_integer()),
        Some((negative, magnitude, false)) => Ok(Some((negative, magnitude))),
        None => Ok(None),
    }
}

/// The code of an integer `dtype` that a text holds: the text must be an integer within the
/// type's range (`1.5`, `nan` and `300` into INT8 are errors naming the text).
pub fn integer_from_text(text: &str, dtype: DType) -> Result<u64> {
    let Kind::Integer { bits, signed } = dtype.kind() else {
        return Err(invalid("value", format!("{dtype} is not an integer type")));
    };
    let (low, high) = integer_bounds(bits, signed);
    let out_of_range = || invalid("value", format!("{} is out of the range of {dtype}, [{low}, {high}]", quoted(text)));
    let Some((negative, magnitude)) = exact_integer(text, dtype)? else { return Err(out_of_range()) };
    let v = if negative { -i128::from(magnitude) } else { i128::from(magnitude) };
    if v < low || v > high {
        return Err(out_of_range());
    }
    // Two's complement in the type's width.
    let mask = if bits >= 64 { u64::MAX } else { (1u64 << bits) - 1 };
    Ok((v as u64) & mask)
}

/// A number zero point as a tensor of `dtype` shaped `shape` (the scale's): the number must be
/// exactly a value of `dtype` (an integer within its range for integer types). `role` names the
/// input (`y_zero_point`), `op` the operation.
pub fn zero_point_from_text(text: &str, dtype: DType, shape: &[usize], role: &str, op: &str) -> Result<Tensor> {
    let fail = |why: String| invalid(op, format!("{role} {}: {why}", quoted(text)));
    let code = match dtype.kind() {
        Kind::Integer { bits, signed } => {
            let (low, high) = integer_bounds(bits, signed);
            if let Err(e) = exact_integer(text, dtype) {
                return Err(match e {
                    Error::InvalidOp { .. } => {
                        fail(format!("not an integer; a {dtype} zero point is an integer in [{low}, {high}]"))
                    }
                    other => other,
                });
            }
            integer_from_text(text, dtype).map_err(|_| fail(format!("out of the range of {dtype}, [{low}, {high}]")))?
        }
        Kind::Float(f) => {
            let value = strings::parse_exact_value(text)?;
            let (code, status) = round::encode_with_status(f, value, &EncodeOptions::onnx(RoundingOptions::IEEE));
            if !matches!(value, Value::Finite(_)) || status.intersects(Status::INEXACT | Status::INVALID) {
                let nearest = exact_text(dtype, code)?;
                return Err(fail(format!("not exactly a {dtype} value (nearest: {nearest})")));
            }
            code
        }
        _ => return Err(fail(format!("{dtype} is not a quantized type"))),
    };
    let n = crate::tensor::element_count(shape)?;
    Tensor::from_codes(dtype, shape.to_vec(), &vec![code; n])
}
