//! `lowbit matmul`: `A @ B^T` of two TensorProto files under an accumulation model
//! (`lowbit::dot`), each operand plain codes or block-scaled elements with their scales.

use crate::Outcome;
use lowbit::dot::{matmul_operands, Accumulation, Operand};
use lowbit::onnx::limits::Limits;
use lowbit::onnx::tensor_proto::read_tensor_file_with;
use lowbit::quant::blocks::{self, Scales, Scheme};
use lowbit::{DType, Error, Result, Tensor};
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct Args {
    /// A: M x K (a TensorProto: codes of any numeric type; with --a-scheme the element codes).
    a: PathBuf,
    /// B: N x K, as A.
    b: PathBuf,
    /// The accumulation model: exact, sequential-fp32, sequential,format=F, fma,format=F[,round=R].
    #[arg(long, default_value = "exact")]
    model: String,
    /// The result's float type.
    #[arg(long, default_value = "float")]
    to: String,
    /// A's block scheme (`lowbit schemes`: ocp:mxfp4, modelopt:nvfp4, ...), its elements in A.
    #[arg(long, value_name = "SCHEME", requires = "a_scales")]
    a_scheme: Option<String>,
    /// A's block scales (the stored type and shape `lowbit quantize --scheme` writes).
    #[arg(long, value_name = "S.pb")]
    a_scales: Option<PathBuf>,
    /// A's per-tensor scale (one FLOAT), for schemes with one.
    #[arg(long, value_name = "G.pb")]
    a_global_scale: Option<PathBuf>,
    /// B's block scheme.
    #[arg(long, value_name = "SCHEME", requires = "b_scales")]
    b_scheme: Option<String>,
    /// B's block scales.
    #[arg(long, value_name = "S.pb")]
    b_scales: Option<PathBuf>,
    /// B's per-tensor scale.
    #[arg(long, value_name = "G.pb")]
    b_global_scale: Option<PathBuf>,
    /// The M x N result (`-`: standard output).
    #[arg(long, value_name = "OUT.pb")]
    out: PathBuf,
    /// With `--out -`: write the binary TensorProto even when standard output is a terminal.
    #[arg(long)]
    raw: bool,
}

fn usage(message: String) -> Error {
    Error::InvalidOp { op: "matmul".into(), message }
}

/// One operand from its files.
fn operand(
    path: &Path,
    scheme: Option<&str>,
    scales: Option<&Path>,
    global: Option<&Path>,
    limits: &Limits,
) -> Result<Operand> {
    let t = read_tensor_file_with(path, limits)?;
    let [rows, k] = t.shape()[..] else {
        return Err(usage(format!(
            "{} is of shape {:?}: an operand is a matrix (rows x K)",
            path.display(),
            t.shape()
        )));
    };
    let Some(scheme) = scheme else {
        if scales.is_some() || global.is_some() {
            return Err(usage(format!(
                "{}: scales are for a block-scaled operand (--a-scheme / --b-scheme)",
                path.display()
            )));
        }
        return Operand::from_codes(&t.codes()?, t.dtype(), rows, k);
    };
    let scheme = Scheme::parse(scheme)?;
    let elements: Vec<u8> = t.codes()?.iter().map(|&c| c as u8).collect();
    let s = read_tensor_file_with(scales.expect("clap requires the scales"), limits)?;
    let scales = match s.dtype() {
        DType::Float => Scales::Float32(s.to_f32_vec()?),
        DType::Float16 => Scales::Float16(s.codes()?.iter().map(|&c| c as u16).collect()),
        DType::Bfloat16 => Scales::Bfloat16(s.codes()?.iter().map(|&c| c as u16).collect()),
        _ => Scales::Codes(s.codes()?.iter().map(|&c| c as u8).collect()),
    };
    let global = match global {
        None => None,
        Some(p) => {
            let g = read_tensor_file_with(p, limits)?;
            if g.dtype() != DType::Float || g.len() != 1 {
                return Err(usage(format!(
                    "{} holds {} {:?}; a per-tensor scale is one FLOAT",
                    p.display(),
                    g.dtype(),
                    g.shape()
                )));
            }
            g.to_f32_vec()?.first().copied()
        }
    };
    let q = blocks::from_arrays(elements, &[rows, k], scales, &scheme, -1, global)?;
    Operand::from_blocks(&q)
}

pub fn run(args: Args) -> Outcome {
    let limits = Limits::default();
    let model = Accumulation::parse(&args.model)?;
    let to = DType::parse(&args.to)?;
    let a =
        operand(&args.a, args.a_scheme.as_deref(), args.a_scales.as_deref(), args.a_global_scale.as_deref(), &limits)?;
    let b =
        operand(&args.b, args.b_scheme.as_deref(), args.b_scales.as_deref(), args.b_global_scale.as_deref(), &limits)?;
    let (m, n) = (a.rows(), b.rows());
    let codes = matmul_operands(&a, &b, &model, to)?;
    let y = Tensor::from_codes(to, vec![m, n], &codes)?;
    let described = format!("wrote {} {m} x {n} ({}) to {}", to.onnx_name(), args.model, args.out.display());
    crate::printed(&crate::write_tensor_out("matmul", &args.out, &y, None, args.raw, described)?)
}
