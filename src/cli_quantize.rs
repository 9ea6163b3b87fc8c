//! `lowbit quantize` and `lowbit dequantize`: TensorProto files in, TensorProto files out.
//!
//! The one mode so far is OCP Microscaling (`--mx FORMAT`, [`crate::quant::mx`]):
//!
//! * `lowbit quantize --mx FMT [--block-size 32] [--axis -1] [--scale-round floor|ceil] IN.pb
//!   --scales S.pb --out E.pb`: IN is FLOAT, FLOAT16 or BFLOAT16; S receives the FLOAT8E8M0 scales
//!   (IN's shape with the blocked axis `ceil(len / block size)` long), E the elements in the
//!   element's ONNX type, packed as ONNX packs it (MXINT8: INT8, with the implicit 2^-6).
//! * `lowbit dequantize --mx FMT [--block-size 32] [--axis -1] E.pb --scales S.pb --out OUT.pb`:
//!   float32 out.
//!
//! Both outputs of `quantize` are written all or nothing (temporary files renamed into place when
//! both are complete); inputs are read with the size limit of `--max-input-bytes`.

use crate::error::{Error, Result};
use crate::onnx::limits::Limits;
use crate::onnx::tensor_proto::{read_tensor_file_with, write_tensor_file, write_tensor_proto};
use crate::quant::mx::{self, MxFormat, MxOptions, ScaleRound};
use crate::staging::Staging;
use crate::tensor::Tensor;
use std::path::{Path, PathBuf};

/// How values become codes: a mode of the command. Microscaling is the one mode so far; others
/// (ONNX linear quantization with scale and zero-point files) take their place beside it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// OCP Microscaling: power-of-two E8M0 scales per block.
    Mx(MxFormat),
}

/// The blocking shared by the modes: which axis, and how many elements per scale (`None`: the
/// mode's default, 32 for MX).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Blocking {
    pub axis: i64,
    pub block_size: Option<usize>,
}

/// `lowbit quantize`.
#[derive(Clone, Debug)]
pub struct QuantizeArgs {
    pub mode: Mode,
    pub blocking: Blocking,
    /// MX only: how the shared scale is chosen.
    pub scale_round: ScaleRound,
    pub input: PathBuf,
    pub scales: PathBuf,
    pub out: PathBuf,
    pub limits: Limits,
}

/// `lowbit dequantize`.
#[derive(Clone, Debug)]
pub struct DequantizeArgs {
    pub mode: Mode,
    pub blocking: Blocking,
    pub input: PathBuf,
    pub scales: PathBuf,
    pub out: PathBuf,
    pub limits: Limits,
}

fn mx_options(format: MxFormat, blocking: Blocking, scale_round: ScaleRound) -> MxOptions {
    MxOptions {
        format,
        block_size: blocking.block_size.unwrap_or(mx::DEFAULT_BLOCK_SIZE),
        axis: blocking.axis,
        scale_round,
    }
}

fn describe(t: &Tensor, path: &Path) -> String {
    format!("{} {:?} to {}", t.dtype(), t.shape(), path.display())
}

/// Reads IN, quantizes it and writes the scales and the elements (both or neither); returns the
/// line that says what was written.
pub fn quantize(args: &QuantizeArgs) -> Result<String> {
    if args.scales == args.out {
        return Err(Error::InvalidOp {
            op: "quantize".into(),
            message: format!("--scales and --out are the same file ({})", args.out.display()),
        });
    }
    let input = read_tensor_file_with(&args.input, &args.limits)?;
    let Mode::Mx(format) = args.mode;
    let q = mx::quantize(&input, &mx_options(format, args.blocking, args.scale_round))?;
    drop(input);
    let mut staging = Staging::new();
    staging.stage(&args.scales, |w| write_tensor_proto(w, &q.scales, None))?;
    staging.stage(&args.out, |w| write_tensor_proto(w, &q.elements, None))?;
    staging.commit()?;
    Ok(format!("wrote {} and {}", describe(&q.scales, &args.scales), describe(&q.elements, &args.out)))
}

/// Reads the elements and the scales, dequantizes them and writes the float32 result.
pub fn dequantize(args: &DequantizeArgs) -> Result<String> {
    let elements = read_tensor_file_with(&args.input, &args.limits)?;
    let scales = read_tensor_file_with(&args.scales, &args.limits)?;
    let Mode::Mx(format) = args.mode;
    let out = mx::dequantize(&elements, &scales, &mx_options(format, args.blocking, ScaleRound::Floor))?;
    drop((elements, scales));
    write_tensor_file(&args.out, &out, None)?;
    Ok(format!("wrote {}", describe(&out, &args.out)))
}
