//! `lowbit quantize` and `lowbit dequantize`: TensorProto files in, TensorProto files out, in one
//! of two modes.
//!
//! **OCP Microscaling** (`--mx FORMAT`, [`lowbit::quant::mx`]):
//!
//! * `lowbit quantize --mx FMT [--block-size 32] [--axis -1] [--scale-round floor|ceil] IN.pb
//!   --scales S.pb --out E.pb`: IN is FLOAT, FLOAT16 or BFLOAT16; S receives the FLOAT8E8M0 scales
//!   (IN's shape with the blocked axis `ceil(len / block size)` long), E the elements in the
//!   element's ONNX type, packed as ONNX packs it (MXINT8: INT8, with the implicit 2^-6).
//! * `lowbit dequantize --mx FMT [--block-size 32] [--axis -1] E.pb --scales S.pb --out OUT.pb`:
//!   float32 out.
//!
//! **ONNX linear quantization** (`--scale S`): exactly what a `QuantizeLinear` or
//! `DequantizeLinear` node of opset [`LINEAR_OPSET`] (the newest version lowbit has) computes
//! with the same inputs and attributes, through [`quantize_linear`] and [`dequantize_linear`]
//! and so through their per-version checks:
//!
//! * `lowbit quantize IN.pb --scale S [--zero-point Z] [--to DTYPE] [--axis A] [--block-size B]
//!   [--saturate 0|1] [--profile P] --out Y.pb`: `--to` is the output type (`output_dtype`;
//!   default: the zero point file's type, else UINT8 as in ONNX).
//! * `lowbit dequantize X.pb --scale S [--zero-point Z] [--to float|float16|bfloat16] [--axis A]
//!   [--block-size B] [--profile P] --out Y.pb`: `--to` is the output type (default FLOAT).
//!
//! S and Z are each a number or a TensorProto file: a text that reads as a number (`0.05`,
//! `-3`, `1e-3`, `nan`, `inf`) is a number (write `./1e-3` for a file of that name). A number
//! scale is one FLOAT scale for the whole tensor (rounded once to float32; `--block-size` needs a
//! file); a number zero point takes the quantized type (quantize: `--to`; dequantize: X's type)
//! and the scale's shape, and must be exactly a value of that type. A file gives a per-axis scale
//! (1-D, `--axis`, default 1 as in ONNX) or a blocked one (the rank of the input, with
//! `--block-size`; a short last block is allowed, as every version's `ceil(D / B)` says). Scales
//! must be positive and finite, numbers and file elements alike.
//!
//! Outputs are written all or nothing (temporary files renamed into place when complete; both
//! files of an MX quantize or neither); inputs are read with the size limit of
//! `--max-input-bytes`.

use lowbit::format;
use lowbit::onnx::limits::Limits;
use lowbit::onnx::tensor_proto::{read_tensor_file_with, write_tensor_file, write_tensor_proto};
use lowbit::profile::NumberStyle;
use lowbit::profile::StringGrammar;
use lowbit::quant::mx::{self, MxFormat, MxOptions, ScaleRound};
use lowbit::quant::{
    dequantize_linear, quantize_linear, DequantizeAttributes, QuantizeAttributes, DEQUANTIZE_LINEAR_VERSIONS,
    DEQUANTIZE_SCHEMAS, QUANTIZE_LINEAR_VERSIONS, QUANTIZE_SCHEMAS,
};
use lowbit::round::{self, EncodeOptions, RoundingMode, RoundingOptions, Status};
use lowbit::staging::Staging;
use lowbit::strings::{self};
use lowbit::Profile;
use lowbit::Tensor;
use lowbit::Value;
use lowbit::{convert_code, decode_element, CastOptions, Element};
use lowbit::{DType, Kind};
use lowbit::{Error, Result};
use std::path::{Path, PathBuf};

/// The ONNX op version linear mode computes: the newest `QuantizeLinear` and `DequantizeLinear`
/// lowbit implements.
pub const LINEAR_OPSET: i64 = QUANTIZE_LINEAR_VERSIONS[QUANTIZE_LINEAR_VERSIONS.len() - 1];

const _: () = assert!(LINEAR_OPSET == DEQUANTIZE_LINEAR_VERSIONS[DEQUANTIZE_LINEAR_VERSIONS.len() - 1]);

/// Which of the two commands: the messages and the defaults differ.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    Quantize,
    Dequantize,
}

impl Direction {
    fn command(self) -> &'static str {
        match self {
            Direction::Quantize => "quantize",
            Direction::Dequantize => "dequantize",
        }
    }

    fn op(self) -> String {
        match self {
            Direction::Quantize => format!("QuantizeLinear-{LINEAR_OPSET}"),
            Direction::Dequantize => format!("DequantizeLinear-{LINEAR_OPSET}"),
        }
    }

    /// The ONNX names of the scale and zero point inputs.
    fn roles(self) -> (&'static str, &'static str) {
        match self {
            Direction::Quantize => ("y_scale", "y_zero_point"),
            Direction::Dequantize => ("x_scale", "x_zero_point"),
        }
    }
}

/// A scale or a zero point as given on the command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Operand {
    /// A decimal number (or `inf`, `nan`): one value.
    Number(String),
    /// A TensorProto file.
    File(PathBuf),
}

impl Operand {
    /// A text that reads as a number in lowbit's decimal grammar is a number; anything else names
    /// a file.
    #[must_use]
    pub fn parse(text: &str) -> Operand {
        if strings::parse_exact_value(text).is_ok() {
            Operand::Number(text.to_string())
        } else {
            Operand::File(PathBuf::from(text))
        }
    }
}

/// OCP Microscaling: power-of-two E8M0 scales per block, in their own file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mx {
    pub format: MxFormat,
    /// Where `quantize` writes the scales and `dequantize` reads them.
    pub scales: PathBuf,
    /// How `quantize` chooses the shared scale.
    pub scale_round: ScaleRound,
}

/// ONNX linear quantization at [`LINEAR_OPSET`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Linear {
    pub scale: Operand,
    pub zero_point: Option<Operand>,
    /// quantize: the output type (`output_dtype`); dequantize: the output float type.
    pub to: Option<DType>,
    /// quantize only: the `saturate` attribute (float8 outputs).
    pub saturate: Option<bool>,
    pub profile: Profile,
}

/// How values become codes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mode {
    Mx(Mx),
    Linear(Linear),
}

/// The mode flags as given on the command line (`None`: absent), before they are checked
/// against each other by [`ModeFlags::mode`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ModeFlags {
    pub mx: Option<String>,
    pub scales: Option<PathBuf>,
    pub scale_round: Option<String>,
    pub scale: Option<String>,
    pub zero_point: Option<String>,
    pub to: Option<String>,
    pub saturate: Option<String>,
    pub profile: Option<String>,
}

fn usage(direction: Direction, message: impl Into<String>) -> Error {
    Error::InvalidOp { op: direction.command().into(), message: message.into() }
}

impl ModeFlags {
    /// The mode these flags ask for. Flags of the other mode are an error saying which mode
    /// takes them; so is a missing `--mx`/`--scale`, or `--mx` without `--scales`.
    pub fn mode(self, direction: Direction) -> Result<Mode> {
        let linear_flags: Vec<&str> = [
            (self.zero_point.is_some(), "--zero-point"),
            (self.to.is_some(), "--to"),
            (self.saturate.is_some(), "--saturate"),
            (self.profile.is_some(), "--profile"),
        ]
        .iter()
        .filter(|(given, _)| *given)
        .map(|&(_, flag)| flag)
        .collect();
        let scales_role = match direction {
            Direction::Quantize => "where --mx writes its E8M0 scales",
            Direction::Dequantize => "where --mx reads its E8M0 scales",
        };
        match (self.mx, self.scale) {
            (Some(_), Some(_)) => Err(usage(
                direction,
                format!(
                    "--mx and --scale are two modes; give one. --mx FORMAT is OCP Microscaling (--scales S.pb is \
                     {scales_role}); --scale S is ONNX linear quantization (S one number or a TensorProto file)"
                ),
            )),
            (Some(format), None) => {
                if !linear_flags.is_empty() {
                    return Err(usage(
                        direction,
                        format!(
                            "{} {} for ONNX linear quantization (--scale), not --mx: with --mx the format decides \
                             the element type and the scales",
                            linear_flags.join(", "),
                            if linear_flags.len() == 1 { "is" } else { "are" }
                        ),
                    ));
                }
                let format = MxFormat::parse(&format)?;
                let scales = self.scales.ok_or_else(|| {
                    usage(direction, format!("--mx needs --scales S.pb ({scales_role}; the elements go in --out)"))
                })?;
                let scale_round = ScaleRound::parse(self.scale_round.as_deref().unwrap_or("floor"))?;
                Ok(Mode::Mx(Mx { format, scales, scale_round }))
            }
            (None, Some(scale)) => {
                if self.scales.is_some() {
                    return Err(usage(
                        direction,
                        format!(
                            "--scales is the E8M0 scales file of --mx (OCP Microscaling); ONNX linear quantization \
                             takes its scale from --scale (one number or a TensorProto file) and {}",
                            match direction {
                                Direction::Quantize => "writes only --out",
                                Direction::Dequantize => "reads no --scales",
                            }
                        ),
                    ));
                }
                if self.scale_round.is_some() {
                    return Err(usage(
                        direction,
                        "--scale-round is for --mx (how the power-of-two scale is chosen); --scale gives the scale",
                    ));
                }
                let to = self.to.as_deref().map(DType::parse).transpose()?;
                let saturate = match self.saturate.as_deref() {
                    None => None,
                    Some("1") => Some(true),
                    Some("0") => Some(false),
                    Some(other) => {
                        return Err(usage(direction, format!("--saturate is 0 or 1, not {}", Error::quote(other))))
                    }
                };
                let profile = Profile::parse(self.profile.as_deref().unwrap_or("spec"))?;
                Ok(Mode::Linear(Linear {
                    scale: Operand::parse(&scale),
                    zero_point: self.zero_point.as_deref().map(Operand::parse),
                    to,
                    saturate,
                    profile,
                }))
            }
            (None, None) => Err(usage(
                direction,
                if self.scales.is_some() {
                    "--scales goes with --mx FORMAT (OCP Microscaling); for ONNX linear quantization give --scale S \
                     (one number or a TensorProto file)"
                        .to_string()
                } else {
                    format!(
                        "give --mx FORMAT (OCP Microscaling, scales in --scales S.pb) or --scale S (ONNX linear \
                         quantization as {}: one number or a TensorProto file)",
                        direction.op()
                    )
                },
            )),
        }
    }
}

/// The blocking shared by the modes: which axis (`None`: the mode's default, -1 for MX, 1 for
/// linear as in ONNX), and how many elements per scale (`None`: MX's 32; linear: not blocked).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Blocking {
    pub axis: Option<i64>,
    pub block_size: Option<usize>,
}

/// `lowbit quantize`.
#[derive(Clone, Debug)]
pub struct QuantizeArgs {
    pub mode: Mode,
    pub blocking: Blocking,
    pub input: PathBuf,
    pub out: PathBuf,
    pub limits: Limits,
}

/// `lowbit dequantize`.
#[derive(Clone, Debug)]
pub struct DequantizeArgs {
    pub mode: Mode,
    pub blocking: Blocking,
    pub input: PathBuf,
    pub out: PathBuf,
    pub limits: Limits,
}

fn mx_options(format: MxFormat, blocking: Blocking, scale_round: ScaleRound) -> MxOptions {
    MxOptions {
        format,
        block_size: blocking.block_size.unwrap_or(mx::DEFAULT_BLOCK_SIZE),
        axis: blocking.axis.unwrap_or(-1),
        scale_round,
    }
}

fn describe(t: &Tensor, path: &Path) -> String {
    format!("{} {:?} to {}", t.dtype(), t.shape(), path.display())
}

/// Reads IN, quantizes it and writes the result (MX: the scales and the elements, both or
/// neither); returns the line that says what was written.
pub fn quantize(args: &QuantizeArgs) -> Result<String> {
    let mx = match &args.mode {
        Mode::Mx(mx) => mx,
        Mode::Linear(linear) => return quantize_linear_files(linear, args),
    };
    if mx.scales == args.out {
        return Err(usage(
            Direction::Quantize,
            format!("--scales and --out are the same file ({})", args.out.display()),
        ));
    }
    let input = read_tensor_file_with(&args.input, &args.limits)?;
    let q = mx::quantize(&input, &mx_options(mx.format, args.blocking, mx.scale_round))?;
    drop(input);
    let mut staging = Staging::new();
    staging.stage(&mx.scales, |w| write_tensor_proto(w, &q.scales, None))?;
    staging.stage(&args.out, |w| write_tensor_proto(w, &q.elements, None))?;
    staging.commit()?;
    Ok(format!("wrote {} and {}", describe(&q.scales, &mx.scales), describe(&q.elements, &args.out)))
}

/// Reads the elements and the scales, dequantizes them and writes the result (MX: float32).
pub fn dequantize(args: &DequantizeArgs) -> Result<String> {
    let mx = match &args.mode {
        Mode::Mx(mx) => mx,
        Mode::Linear(linear) => return dequantize_linear_files(linear, args),
    };
    let elements = read_tensor_file_with(&args.input, &args.limits)?;
    let scales = read_tensor_file_with(&mx.scales, &args.limits)?;
    let out = mx::dequantize(&elements, &scales, &mx_options(mx.format, args.blocking, ScaleRound::Floor))?;
    drop((elements, scales));
    write_tensor_file(&args.out, &out, None)?;
    Ok(format!("wrote {}", describe(&out, &args.out)))
}

/// `--block-size` for linear mode: at least 1 (ONNX's 0 means "not blocked", which is what
/// leaving the flag out says), and only with a scale file.
fn linear_block_size(direction: Direction, linear: &Linear, blocking: Blocking) -> Result<Option<i64>> {
    match blocking.block_size {
        None => Ok(None),
        Some(0) => Err(usage(direction, "--block-size must be at least 1 (leave it out for per-tensor or per-axis)")),
        Some(_) if matches!(linear.scale, Operand::Number(_)) => Err(usage(
            direction,
            "--block-size needs a scale file (one scale per block); a number --scale is one scale for the whole \
             tensor",
        )),
        Some(b) => Ok(Some(i64::try_from(b).unwrap_or(i64::MAX))),
    }
}

/// The scale: a number as a FLOAT scalar, or the file's tensor; every element positive and finite.
fn linear_scale(direction: Direction, linear: &Linear, limits: &Limits) -> Result<Tensor> {
    let (role, _) = direction.roles();
    let op = direction.op();
    match &linear.scale {
        Operand::Number(text) => {
            let value = strings::parse_exact_value(text)?;
            if !matches!(value, Value::Finite(e) if !e.negative && !e.is_zero()) {
                return Err(usage(
                    direction,
                    format!("--scale {}: a scale must be positive and finite ({role} of {op})", Error::quote(text)),
                ));
            }
            // One rounding to float32, the type a number scale has.
            let code = round::encode(&format::F32, value, RoundingOptions::IEEE);
            let rounded = f32::from_bits(code as u32);
            if rounded == 0.0 || rounded.is_infinite() {
                return Err(usage(
                    direction,
                    format!(
                        "--scale {} is {rounded} in float32 (a number scale is FLOAT); a scale must be positive and \
                         finite",
                        Error::quote(text)
                    ),
                ));
            }
            Tensor::from_codes(DType::Float, vec![], &[code])
        }
        Operand::File(path) => {
            let scale = read_tensor_file_with(path, limits)?;
            check_scale_values(direction, &scale, path)?;
            Ok(scale)
        }
    }
}

/// Refuses a scale element that is zero, negative, infinite or NaN. Scales of a type the version
/// does not take are left to its type check.
fn check_scale_values(direction: Direction, scale: &Tensor, path: &Path) -> Result<()> {
    let schemas = match direction {
        Direction::Quantize => &QUANTIZE_SCHEMAS,
        Direction::Dequantize => &DEQUANTIZE_SCHEMAS,
    };
    let dtype = scale.dtype();
    if !schemas[schemas.len() - 1].scales.contains(&dtype) {
        return Ok(());
    }
    let (role, _) = direction.roles();
    for i in 0..scale.len() {
        let code = scale.code(i).expect("scale types are fixed-width codes");
        let positive = match decode_element(dtype, code)? {
            Element::Float(Value::Finite(e)) => !e.negative && !e.is_zero(),
            Element::Int(v) => v > 0,
            _ => false,
        };
        if !positive {
            let text = exact_text(dtype, code)?;
            return Err(usage(
                direction,
                format!(
                    "--scale {}: element {i} is {text}; every scale must be positive and finite ({role} of {})",
                    path.display(),
                    direction.op()
                ),
            ));
        }
    }
    Ok(())
}

/// An element's value in decimal: its float64 value's shortest digits (every element of these
/// types is a float64 value), so that 0.3125 in E4M3FN reads 0.3125 and not its own shortest 0.3.
fn exact_text(dtype: DType, code: u64) -> Result<String> {
    let wide = convert_code(dtype, DType::Double, code, &CastOptions::default())?;
    strings::format_code(DType::Double, wide, NumberStyle::Spec)
}

/// A number zero point as a tensor of `dtype` shaped like the scale: the number must be exactly
/// a value of `dtype` (an integer within its range for integer types).
fn zero_point_number(direction: Direction, text: &str, dtype: DType, shape: &[usize]) -> Result<Tensor> {
    let (_, role) = direction.roles();
    let fail = |why: String| {
        usage(direction, format!("--zero-point {}: {why} ({role} of {})", Error::quote(text), direction.op()))
    };
    let value = strings::parse_exact_value(text)?;
    let code = match dtype.kind() {
        Kind::Integer { .. } => {
            let (low, high) = dtype.integer_range().expect("an integer dtype");
            let Value::Finite(exact) = value else {
                return Err(fail(format!("a {dtype} zero point is an integer in [{low}, {high}]")));
            };
            match round::round_to_integer_exactly(exact, RoundingMode::NearestEven, 0) {
                Some((_, _, true)) => return Err(fail(format!("not an integer; a {dtype} zero point is one"))),
                Some((negative, magnitude, false)) => {
                    let v = if negative { -i128::from(magnitude) } else { i128::from(magnitude) };
                    if v < low || v > high {
                        return Err(fail(format!("out of the range of {dtype}, [{low}, {high}]")));
                    }
                }
                None => return Err(fail(format!("out of the range of {dtype}, [{low}, {high}]"))),
            }
            // An integer within range: the exact parse gives its code.
            strings::parse_to_code(text, dtype, StringGrammar::Spec, &CastOptions::default())?
        }
        Kind::Float(f) => {
            let (code, status) = round::encode_with_status(f, value, &EncodeOptions::onnx(RoundingOptions::IEEE));
            if !matches!(value, Value::Finite(_)) || status.intersects(Status::INEXACT | Status::INVALID) {
                let nearest = exact_text(dtype, code)?;
                return Err(fail(format!("not exactly a {dtype} value (nearest: {nearest})")));
            }
            code
        }
        _ => return Err(fail(format!("{dtype} is not a quantized type"))),
    };
    let n = shape.iter().product();
    Tensor::from_codes(dtype, shape.to_vec(), &vec![code; n])
}

/// The zero point: a number (of `number_type`, shaped like the scale) or the file's tensor.
fn linear_zero_point(
    direction: Direction,
    linear: &Linear,
    number_type: DType,
    scale: &Tensor,
    limits: &Limits,
) -> Result<Option<Tensor>> {
    match &linear.zero_point {
        None => Ok(None),
        Some(Operand::Number(text)) => zero_point_number(direction, text, number_type, scale.shape()).map(Some),
        Some(Operand::File(path)) => read_tensor_file_with(path, limits).map(Some),
    }
}

/// Refuses a `--to` the version's table does not list (before any file is read).
fn check_to(direction: Direction, to: DType) -> Result<()> {
    let last = match direction {
        Direction::Quantize => &QUANTIZE_SCHEMAS[QUANTIZE_SCHEMAS.len() - 1],
        Direction::Dequantize => &DEQUANTIZE_SCHEMAS[DEQUANTIZE_SCHEMAS.len() - 1],
    };
    let allowed = match direction {
        Direction::Quantize => last.quantized,
        Direction::Dequantize => last.outputs,
    };
    if allowed.contains(&to) {
        return Ok(());
    }
    let listed: Vec<&str> = allowed.iter().map(|d| d.onnx_name()).collect();
    Err(usage(
        direction,
        format!("--to {to} is not an output type of {} (allowed: {})", direction.op(), listed.join(", ")),
    ))
}

fn quantize_linear_files(linear: &Linear, args: &QuantizeArgs) -> Result<String> {
    let direction = Direction::Quantize;
    if let Some(to) = linear.to {
        check_to(direction, to)?;
    }
    let block_size = linear_block_size(direction, linear, args.blocking)?;
    // The number operands are checked before any file is read.
    if let Operand::Number(_) = linear.scale {
        linear_scale(direction, linear, &args.limits)?;
    }
    let number_type = linear.to.unwrap_or(DType::Uint8);
    if let Some(Operand::Number(text)) = &linear.zero_point {
        zero_point_number(direction, text, number_type, &[])?;
    }
    let x = read_tensor_file_with(&args.input, &args.limits)?;
    let scale = linear_scale(direction, linear, &args.limits)?;
    let zero_point = linear_zero_point(direction, linear, number_type, &scale, &args.limits)?;
    if let (Some(z), Some(to)) = (&zero_point, linear.to) {
        if z.dtype() != to {
            return Err(usage(
                direction,
                format!("--to {to} differs from the type of the --zero-point file ({}); they must match", z.dtype()),
            ));
        }
    }
    let attrs = QuantizeAttributes {
        axis: args.blocking.axis,
        saturate: linear.saturate.map(i64::from),
        block_size,
        output_dtype: linear.to.map(|d| i64::from(d.onnx_number())),
        precision: None,
    };
    let y = quantize_linear(&x, &scale, zero_point.as_ref(), &attrs, LINEAR_OPSET, linear.profile)?;
    drop((x, scale, zero_point));
    write_tensor_file(&args.out, &y, None)?;
    Ok(format!("wrote {}", describe(&y, &args.out)))
}

fn dequantize_linear_files(linear: &Linear, args: &DequantizeArgs) -> Result<String> {
    let direction = Direction::Dequantize;
    let to = linear.to.unwrap_or(DType::Float);
    check_to(direction, to)?;
    if linear.saturate.is_some() {
        return Err(usage(direction, "--saturate is for quantize (float8 outputs)"));
    }
    let block_size = linear_block_size(direction, linear, args.blocking)?;
    if let Operand::Number(_) = linear.scale {
        linear_scale(direction, linear, &args.limits)?;
    }
    let x = read_tensor_file_with(&args.input, &args.limits)?;
    let scale = linear_scale(direction, linear, &args.limits)?;
    let zero_point = linear_zero_point(direction, linear, x.dtype(), &scale, &args.limits)?;
    let attrs =
        DequantizeAttributes { axis: args.blocking.axis, block_size, output_dtype: Some(i64::from(to.onnx_number())) };
    let y = dequantize_linear(&x, &scale, zero_point.as_ref(), &attrs, LINEAR_OPSET, linear.profile)?;
    drop((x, scale, zero_point));
    write_tensor_file(&args.out, &y, None)?;
    Ok(format!("wrote {}", describe(&y, &args.out)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_files_are_told_apart() {
        for number in ["0.05", "-3", "1e-3", "nan", "INF", " 7 "] {
            assert_eq!(Operand::parse(number), Operand::Number(number.into()), "{number}");
        }
        for file in ["s.pb", "./1e-3", "", "1e5x"] {
            assert_eq!(Operand::parse(file), Operand::File(file.into()), "{file}");
        }
    }

    #[test]
    fn number_zero_points_are_exact_values_of_the_type() {
        // -128 is INT8's lowest code 0x80; 1.5 is E4M3FN 0 0111 100 = 0x3C.
        let t = zero_point_number(Direction::Quantize, "-128", DType::Int8, &[2]).unwrap();
        assert_eq!((t.shape(), t.codes().unwrap()), (&[2usize][..], vec![0x80, 0x80]));
        let t = zero_point_number(Direction::Quantize, "1.5", DType::Float8E4M3FN, &[]).unwrap();
        assert_eq!(t.codes().unwrap(), [0x3C]);
        for (text, dtype, want) in [
            ("128", DType::Int8, "out of the range of INT8, [-128, 127]"),
            ("-1", DType::Uint4, "out of the range of UINT4, [0, 15]"),
            ("2.5", DType::Int8, "not an integer"),
            ("nan", DType::Int8, "is an integer in [-128, 127]"),
            // E4M3FN values near 0.3: 0.28125 and 0.3125.
            ("0.3", DType::Float8E4M3FN, "not exactly a FLOAT8E4M3FN value (nearest: 0.3125)"),
        ] {
            let e = zero_point_number(Direction::Quantize, text, dtype, &[]).unwrap_err().to_string();
            assert!(e.contains(want) && e.contains("y_zero_point of QuantizeLinear-28"), "{text}: {e}");
        }
    }
}
