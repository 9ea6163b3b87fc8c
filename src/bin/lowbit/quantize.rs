//! `lowbit quantize` and `lowbit dequantize`: TensorProto files in, TensorProto files out, in one
//! of two modes.
//!
//! **Block-scaled recipes** (`--scheme SCHEME`, [`lowbit::quant::blocks`]: OCP MX as
//! `ocp:mxfp4[,block=N][,scale=ceil]`, torchao, ModelOpt, compressed-tensors, ggml, DeepSeek, FP8):
//! `blocks.rs`.
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

use crate::blocks::{self, BlockMode};
use lowbit::format;
use lowbit::onnx::limits::Limits;
use lowbit::onnx::tensor_proto::read_tensor_file_with;
use lowbit::quant::blocks::Scheme;
use lowbit::quant::{
    dequantize_linear, quantize_linear, DequantizeAttributes, QuantizeAttributes, DEQUANTIZE_LINEAR_VERSIONS,
    DEQUANTIZE_SCHEMAS, QUANTIZE_LINEAR_VERSIONS, QUANTIZE_SCHEMAS,
};
use lowbit::round::{self, RoundingOptions};
use lowbit::strings::{self};
use lowbit::DType;
use lowbit::Profile;
use lowbit::Tensor;
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
#[derive(Clone, Debug, PartialEq)]
pub enum Mode {
    /// Boxed: a scheme carries its whole recipe row.
    Blocks(Box<BlockMode>),
    Linear(Linear),
}

/// The mode flags as given on the command line (`None`: absent), before they are checked
/// against each other by [`ModeFlags::mode`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ModeFlags {
    pub scheme: Option<String>,
    pub scales: Option<PathBuf>,
    pub global_scale: Option<PathBuf>,
    pub global_scale_value: Option<f32>,
    pub onnx: Option<PathBuf>,
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
    /// takes them; so is a missing `--scheme`/`--scale`.
    pub fn mode(self, direction: Direction) -> Result<Mode> {
        // The flags of each mode that were given.
        let given = |flags: &[(bool, &'static str)]| -> Vec<&'static str> {
            flags.iter().filter(|(is_given, _)| *is_given).map(|&(_, flag)| flag).collect()
        };
        let linear_flags = given(&[
            (self.zero_point.is_some(), "--zero-point"),
            (self.to.is_some(), "--to"),
            (self.saturate.is_some(), "--saturate"),
            (self.profile.is_some(), "--profile"),
        ]);
        let block_flags = given(&[
            (self.scales.is_some(), "--scales"),
            (self.global_scale.is_some(), "--global-scale"),
            (self.global_scale_value.is_some(), "--global-scale-value"),
            (self.onnx.is_some(), "--onnx"),
        ]);
        let are = |flags: &[&str]| if flags.len() == 1 { "is" } else { "are" };
        match (self.scheme, self.scale) {
            (Some(_), Some(_)) => Err(usage(
                direction,
                "--scheme and --scale are two modes; give one. --scheme SCHEME is a block-scaled recipe (its scales \
                 in --scales S.pb); --scale S is ONNX linear quantization (S one number or a TensorProto file)",
            )),
            (Some(name), None) => {
                if !linear_flags.is_empty() {
                    return Err(usage(
                        direction,
                        format!(
                            "{} {} for ONNX linear quantization (--scale), not --scheme: the scheme decides the \
                             element type and the scales",
                            linear_flags.join(", "),
                            are(&linear_flags)
                        ),
                    ));
                }
                Ok(Mode::Blocks(Box::new(BlockMode {
                    scheme: Scheme::parse(&name)?,
                    scales: self.scales,
                    global_scale: self.global_scale,
                    global_scale_value: self.global_scale_value,
                    onnx: self.onnx,
                })))
            }
            (None, Some(scale)) => {
                if !block_flags.is_empty() {
                    return Err(usage(
                        direction,
                        format!(
                            "{} {} for the block-scaled recipes (--scheme); ONNX linear quantization takes its \
                             scale from --scale (one number or a TensorProto file) and {}",
                            block_flags.join(", "),
                            are(&block_flags),
                            match direction {
                                Direction::Quantize => "writes only --out",
                                Direction::Dequantize => "reads no --scales",
                            }
                        ),
                    ));
                }
                let to = self.to.as_deref().map(DType::parse).transpose()?;
                let saturate = match self.saturate.as_deref() {
                    None => None,
                    Some("1") => Some(true),
                    Some("0") => Some(false),
                    Some(other) => {
                        return Err(usage(
                            direction,
                            format!("--saturate is 0 or 1, not {}", lowbit::Error::quote(other)),
                        ))
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
                if block_flags.is_empty() {
                    format!(
                        "give --scheme SCHEME (a block-scaled recipe, `lowbit schemes` lists them; scales in \
                         --scales S.pb) or --scale S (ONNX linear quantization as {}: one number or a TensorProto \
                         file)",
                        direction.op()
                    )
                } else {
                    format!(
                        "{} {} for --scheme SCHEME (a block-scaled recipe, `lowbit schemes` lists them); for ONNX \
                         linear quantization give --scale S (one number or a TensorProto file)",
                        block_flags.join(", "),
                        are(&block_flags)
                    )
                },
            )),
        }
    }
}

/// The blocking shared by the modes: which axis (`None`: the mode's default, -1 for a scheme, 1
/// for linear as in ONNX), and how many elements per scale (linear only; `None`: not blocked).
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
    /// Linear: the output; block-scaled: the elements (optional with `--onnx`).
    pub out: Option<PathBuf>,
    pub limits: Limits,
    /// Binary output to a terminal (`--out -`) allowed.
    pub raw: bool,
}

/// `lowbit dequantize`.
#[derive(Clone, Debug)]
pub struct DequantizeArgs {
    pub mode: Mode,
    pub blocking: Blocking,
    pub input: PathBuf,
    pub out: PathBuf,
    pub limits: Limits,
    /// Binary output to a terminal (`--out -`) allowed.
    pub raw: bool,
}

/// The block size as [`lowbit::arguments::block_size`] checks it (as the Python package).
fn checked_block_size(direction: Direction, block_size: usize) -> Result<usize> {
    lowbit::arguments::block_size(i64::try_from(block_size).unwrap_or(i64::MAX))
        .map_err(|e| usage(direction, format!("--block-size: {}", bare(&e))))
}

fn describe(t: &Tensor, path: &Path) -> String {
    format!("{} {:?} to {}", t.dtype(), t.shape(), path.display())
}

/// The block is part of a scheme's name (`ocp:mxfp4,block=16`, `fp8:group=128`).
fn no_block_size(direction: Direction, blocking: Blocking) -> Result<()> {
    if blocking.block_size.is_some() {
        return Err(usage(
            direction,
            "--block-size is for ONNX linear quantization (--scale); a scheme names its block (ocp:mxfp4,block=16, \
             fp8:group=128)",
        ));
    }
    Ok(())
}

/// Reads IN, quantizes it and writes the result (block-scaled: every output file, or none);
/// returns the line that says what was written.
pub fn quantize(args: &QuantizeArgs) -> Result<String> {
    match &args.mode {
        Mode::Blocks(mode) => {
            no_block_size(Direction::Quantize, args.blocking)?;
            blocks::quantize_files(mode, args.blocking.axis, &args.input, args.out.as_deref(), &args.limits, args.raw)
        }
        Mode::Linear(linear) => quantize_linear_files(linear, args),
    }
}

/// Reads the elements and the scales, dequantizes them and writes the result.
pub fn dequantize(args: &DequantizeArgs) -> Result<String> {
    match &args.mode {
        Mode::Blocks(mode) => {
            no_block_size(Direction::Dequantize, args.blocking)?;
            blocks::dequantize_files(mode, args.blocking.axis, &args.input, &args.out, &args.limits, args.raw)
        }
        Mode::Linear(linear) => dequantize_linear_files(linear, args),
    }
}

/// `--block-size` for linear mode: at least 1 (ONNX's 0 means "not blocked", which is what
/// leaving the flag out says), and only with a scale file.
fn linear_block_size(direction: Direction, linear: &Linear, blocking: Blocking) -> Result<Option<i64>> {
    match blocking.block_size {
        None => Ok(None),
        Some(0) => checked_block_size(direction, 0).map(|_| None),
        Some(_) if matches!(linear.scale, Operand::Number(_)) => Err(usage(
            direction,
            "--block-size needs a scale file (one scale per block); a number --scale is one scale for the whole \
             tensor",
        )),
        Some(b) => Ok(Some(i64::try_from(b).unwrap_or(i64::MAX))),
    }
}

/// The scale: a number as a FLOAT scalar (rounded once to float32), or the file's tensor; every
/// element positive and finite ([`lowbit::arguments::check_scales`], as the Python package).
fn linear_scale(direction: Direction, linear: &Linear, limits: &Limits) -> Result<Tensor> {
    let (role, _) = direction.roles();
    let (scale, flag, note) = match &linear.scale {
        Operand::Number(text) => {
            let value = strings::parse_exact_value(text)?;
            let code = round::encode(&format::F32, value, RoundingOptions::IEEE);
            let rounded = f32::from_bits(code as u32);
            // A positive number that float32 holds as 0 or infinity: say why it is refused.
            let note = match value {
                lowbit::Value::Finite(e) if !e.negative && !e.is_zero() => {
                    format!(" ({text} is {rounded} in float32; a number scale is FLOAT)")
                }
                _ => String::new(),
            };
            (Tensor::from_codes(DType::Float, vec![], &[code])?, lowbit::Error::quote(text), note)
        }
        Operand::File(path) => (read_tensor_file_with(path, limits)?, path.display().to_string(), String::new()),
    };
    lowbit::arguments::check_scales(&scale, role, &direction.op())
        .map_err(|e| usage(direction, format!("--scale {flag}: {}{note}", bare(&e))))?;
    Ok(scale)
}

/// A library error's message without its `op: ` prefix, for a message that names the flag.
fn bare(e: &Error) -> String {
    match e {
        Error::InvalidOp { op, message } => format!("{message} ({op})"),
        other => other.to_string(),
    }
}

/// A number zero point as a tensor of `dtype` shaped like the scale
/// ([`lowbit::arguments::zero_point_from_text`], as the Python package).
fn zero_point_number(direction: Direction, text: &str, dtype: DType, shape: &[usize]) -> Result<Tensor> {
    let (_, role) = direction.roles();
    lowbit::arguments::zero_point_from_text(text, dtype, shape, role, &direction.op())
        .map_err(|e| usage(direction, format!("--zero-point {}: {}", lowbit::Error::quote(text), bare(&e))))
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
    let out = args.out.as_deref().ok_or_else(|| usage(direction, "--out Y.pb is needed (where the result goes)"))?;
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
    crate::write_tensor_out("quantize", out, &y, None, args.raw, format!("wrote {}", describe(&y, out)))
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
    crate::write_tensor_out("dequantize", &args.out, &y, None, args.raw, format!("wrote {}", describe(&y, &args.out)))
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
            assert!(e.contains(want) && e.contains("y_zero_point") && e.contains("(QuantizeLinear-28)"), "{text}: {e}");
        }
    }
}

// ------------------------------------------------------------------------------------------------
// The flags of `lowbit quantize` and `lowbit dequantize`
// ------------------------------------------------------------------------------------------------

/// The mode flags shared by `lowbit quantize` and `lowbit dequantize`: `--scheme` (a
/// block-scaled recipe) or `--scale` (ONNX linear quantization), checked against each other by
/// [`ModeFlags::mode`].
#[derive(clap::Args)]
pub struct QuantMode {
    /// A block-scaled recipe, exactly as the implementation it names computes it:
    /// ocp:mxfp4[,block=N][,scale=floor|ceil] (OCP MX; also mxfp8e4m3, mxfp8e5m2, mxfp6e2m3,
    /// mxfp6e3m2, mxint8), torchao:mxfp4,scale=rceil, torchao:nvfp4[,global=amax],
    /// modelopt:nvfp4, compressed-tensors:nvfp4|mxfp4, ggml:q8_0|q4_0|mxfp4|nvfp4,
    /// deepseek:fp8[,tile=1x128][,scale_fmt=ue8m0], fp8:tensor|channel|group=N|block=MxN.
    /// `lowbit schemes` lists them with their sources. Its scales go in --scales.
    #[arg(long, value_name = "SCHEME", value_parser = blocks::scheme_name)]
    scheme: Option<String>,
    /// Scheme only: the scales file (written by quantize, read by dequantize), in the scheme's
    /// stored scale type (FLOAT8E8M0, FLOAT8E4M3FN, UINT8 for ggml's UE4M3 bytes, FLOAT16,
    /// BFLOAT16 or FLOAT).
    #[arg(long, value_name = "S.pb")]
    scales: Option<PathBuf>,
    /// Scheme only: the per-tensor scale of a two-level recipe (torchao:nvfp4,global=amax,
    /// modelopt:nvfp4, compressed-tensors:nvfp4), one FLOAT value in the recipe's own convention
    /// (written by quantize, read by dequantize).
    #[arg(long, value_name = "G.pb")]
    global_scale: Option<PathBuf>,
    /// Linear only: the scale, a number (one FLOAT scale for the whole tensor, rounded once to
    /// float32) or a TensorProto file (1-D: per axis; the input's rank with --block-size:
    /// blocked). Must be positive and finite. A text that reads as a number is a number (write
    /// ./0.5 for a file of that name).
    #[arg(long, value_name = "NUMBER|S.pb", allow_negative_numbers = true)]
    scale: Option<String>,
    /// Linear only: the zero point, a number (exactly a value of the quantized type, repeated
    /// over the scale's shape) or a TensorProto file of the scale's shape. Default: none (0).
    #[arg(long, value_name = "NUMBER|Z.pb", allow_negative_numbers = true)]
    zero_point: Option<String>,
    /// Linear only: which implementation to be bit-exact with where they differ.
    #[arg(long, value_parser = Profile::NAMES)]
    profile: Option<String>,
}

impl QuantMode {
    fn flags(self, to: Option<String>) -> ModeFlags {
        ModeFlags {
            scheme: self.scheme,
            scales: self.scales,
            global_scale: self.global_scale,
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
pub struct QuantBlocking {
    /// Linear only: elements per block along --axis (at least 1): blocked quantization, with a
    /// scale file of the input's rank whose --axis is ceil(len / B) long (a short last block is
    /// allowed). A scheme names its own block (ocp:mxfp4,block=16).
    #[arg(long, value_parser = crate::count_usize)]
    block_size: Option<usize>,
    /// The per-axis or blocked axis; negative counts from the last. Default: -1 for a scheme, 1
    /// for linear (the ONNX attribute's default; ignored for a per-tensor scale).
    #[arg(long, allow_negative_numbers = true)]
    axis: Option<i64>,
}

impl QuantBlocking {
    fn blocking(&self) -> Blocking {
        Blocking { axis: self.axis, block_size: self.block_size }
    }
}

#[derive(clap::Args)]
pub struct QuantizeFlags {
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
    #[arg(long, value_enum)]
    saturate: Option<crate::Saturate>,
    /// Scheme only: the per-tensor scale to quantize with instead of the one the recipe computes
    /// (a number, rounded once to float32; in the recipe's own convention).
    #[arg(long, value_name = "NUMBER", allow_negative_numbers = true, value_parser = blocks::global_scale_value)]
    global_scale_value: Option<f32>,
    /// Scheme modelopt:nvfp4 only: also write the graph ModelOpt's ONNX exporter writes for this
    /// weight (initializers, DequantizeLinear of the FLOAT8E4M3FN block scales by the per-tensor
    /// scale, then of the FLOAT4E2M1 elements, axis -1, block_size 16); `lowbit run` runs it.
    #[arg(long, value_name = "OUT.onnx")]
    onnx: Option<PathBuf>,
    /// The input TensorProto.
    input: PathBuf,
    /// Where the output goes (scheme: the elements; optional with --onnx); `-`: standard output
    /// (a single output only).
    #[arg(long, value_name = "OUT.pb")]
    out: Option<PathBuf>,
    /// With `--out -`: write the binary TensorProto even when standard output is a terminal.
    #[arg(long)]
    raw: bool,
    /// Largest input file read (K, M, G, T suffixes are powers of 1024; `unlimited`). Default: 4G.
    #[arg(long, value_name = "BYTES")]
    max_input_bytes: Option<String>,
}

#[derive(clap::Args)]
pub struct DequantizeFlags {
    #[command(flatten)]
    mode: QuantMode,
    #[command(flatten)]
    blocking: QuantBlocking,
    /// Linear only: the output type, float, float16 or bfloat16. Default float.
    #[arg(long, value_name = "DTYPE")]
    to: Option<String>,
    /// The input TensorProto (scheme: the elements).
    input: PathBuf,
    /// Where the result goes; `-`: standard output.
    #[arg(long, value_name = "OUT.pb")]
    out: PathBuf,
    /// With `--out -`: write the binary TensorProto even when standard output is a terminal.
    #[arg(long)]
    raw: bool,
    /// Largest input file read (suffixes as above). Default: 4G.
    #[arg(long, value_name = "BYTES")]
    max_input_bytes: Option<String>,
}

/// `lowbit quantize`.
pub fn run_quantize(flags: QuantizeFlags) -> crate::Outcome {
    let mut limits = Limits::default();
    crate::set_limit(&mut limits.max_input_bytes, flags.max_input_bytes.as_deref())?;
    let saturate = flags.saturate.map(|s| if s.on() { "1".to_string() } else { "0".to_string() });
    let mode_flags = ModeFlags {
        saturate,
        global_scale_value: flags.global_scale_value,
        onnx: flags.onnx,
        ..flags.mode.flags(flags.to)
    };
    let args = QuantizeArgs {
        mode: mode_flags.mode(Direction::Quantize)?,
        blocking: flags.blocking.blocking(),
        input: flags.input,
        out: flags.out,
        limits,
        raw: flags.raw,
    };
    crate::printed(&quantize(&args)?)
}

/// `lowbit dequantize`.
pub fn run_dequantize(flags: DequantizeFlags) -> crate::Outcome {
    let mut limits = Limits::default();
    crate::set_limit(&mut limits.max_input_bytes, flags.max_input_bytes.as_deref())?;
    let args = DequantizeArgs {
        mode: flags.mode.flags(flags.to).mode(Direction::Dequantize)?,
        blocking: flags.blocking.blocking(),
        input: flags.input,
        out: flags.out,
        limits,
        raw: flags.raw,
    };
    crate::printed(&dequantize(&args)?)
}
