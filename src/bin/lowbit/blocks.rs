//! The block-scaled mode of `lowbit quantize` and `lowbit dequantize` (`--scheme`,
//! [`lowbit::quant::blocks`]): TensorProto files both ways, and ModelOpt's exported ONNX form of
//! NVFP4 (`--onnx`).
//!
//! * `lowbit quantize --scheme SCHEME IN.pb --scales S.pb --out E.pb [--global-scale G.pb]
//!   [--global-scale-value V] [--axis A] [--onnx OUT.onnx]`: IN is FLOAT, FLOAT16 or BFLOAT16; E
//!   receives the element codes in the element's ONNX type (packed as ONNX packs it; ggml Q8_0 and
//!   MXINT8: INT8, ggml Q4_0: the stored nibble as UINT4), S the scales in their stored type
//!   (FLOAT8E8M0, FLOAT8E4M3FN, UINT8 for ggml's UE4M3 bytes, FLOAT16, BFLOAT16, FLOAT) and shape,
//!   G the per-tensor scale of a two-level recipe (a FLOAT scalar, in the recipe's own convention).
//!   All files are written, or none.
//! * `lowbit dequantize --scheme SCHEME E.pb --scales S.pb [--global-scale G.pb] --out OUT.pb`:
//!   float32 out, as the implementation dequantizes.
//!
//! `--onnx OUT.onnx` (`modelopt:nvfp4` only) writes the graph ModelOpt 0.47's ONNX exporter
//! (`modelopt/onnx/export/nvfp4_exporter.py`) writes for a weight: the FLOAT4E2M1 elements, the
//! FLOAT8E4M3FN block scales and the float32 per-tensor scale (shape `[1]`) as initializers, also
//! listed as graph inputs as ModelOpt lists them; `DequantizeLinear(scales, global)` then
//! `DequantizeLinear(elements, that, axis=-1, block_size=16)`, opset 23. The exporter's own rules
//! for the per-tensor scale apply (`quant_utils.get_weights_scaling_factor_2`): amax / 2688, 1.0
//! when that is 0 (an all-zero weight), an error when it is not finite.

use lowbit::onnx::limits::Limits;
use lowbit::onnx::proto::{
    AttributeProto, Dimension, GraphProto, ModelProto, NodeProto, OperatorSetIdProto, TensorShapeProto, TypeProto,
    TypeProtoTensor, ValueInfoProto,
};
use lowbit::onnx::tensor_proto::{read_tensor_file_with, tensor_to_proto, write_tensor_proto};
use lowbit::quant::blocks::{self, Quantized, Scales, Scheme};
use lowbit::staging::Staging;
use lowbit::{DType, Error, Result, Tensor};
use std::path::{Path, PathBuf};

/// A scheme name, checked when the flags are read (the message lists the families).
pub fn scheme_name(text: &str) -> std::result::Result<String, String> {
    Scheme::parse(text).map(|_| text.to_string()).map_err(|e| {
        let families: Vec<String> = blocks::schemes().into_iter().map(|(name, _)| name).collect();
        format!("{e}; the schemes (`lowbit schemes` lists their sources): {}", families.join("; "))
    })
}

/// The block-scaled mode's files and options.
#[derive(Clone, Debug, PartialEq)]
pub struct BlockMode {
    pub scheme: Scheme,
    /// Where `quantize` writes the scales and `dequantize` reads them.
    pub scales: Option<PathBuf>,
    /// Where `quantize` writes the per-tensor scale and `dequantize` reads it.
    pub global_scale: Option<PathBuf>,
    /// quantize: the per-tensor scale to use instead of the one the recipe computes.
    pub global_scale_value: Option<f32>,
    /// quantize: ModelOpt's exported ONNX graph of the result.
    pub onnx: Option<PathBuf>,
}

fn usage(command: &str, message: impl Into<String>) -> Error {
    crate::usage(command, message)
}

/// The per-tensor scale given on the command line, rounded once to float32.
pub fn global_scale_value(text: &str) -> std::result::Result<f32, String> {
    let value = lowbit::strings::parse_exact_value(text).map_err(|e| e.to_string())?;
    let code = lowbit::round::encode(&lowbit::format::F32, value, lowbit::round::RoundingOptions::IEEE);
    Ok(f32::from_bits(code as u32))
}

/// Quantizes a FLOAT, FLOAT16 or BFLOAT16 tensor.
fn quantize_tensor(x: &Tensor, scheme: &Scheme, axis: i64, global: Option<f32>) -> Result<Quantized> {
    let raw = x.raw().ok_or_else(|| usage("quantize", format!("--scheme quantizes numbers, not {}", x.dtype())))?;
    lowbit::quant::check_blocks_input(x.shape(), scheme)?;
    let words = |raw: &[u8]| -> Vec<u16> { raw.chunks_exact(2).map(|b| u16::from_le_bytes([b[0], b[1]])).collect() };
    match x.dtype() {
        DType::Float => blocks::quantize(&x.to_f32_vec()?, x.shape(), scheme, axis, global),
        DType::Float16 => {
            let v: Vec<half::f16> = words(raw).into_iter().map(half::f16::from_bits).collect();
            blocks::quantize(&v, x.shape(), scheme, axis, global)
        }
        DType::Bfloat16 => {
            let v: Vec<half::bf16> = words(raw).into_iter().map(half::bf16::from_bits).collect();
            blocks::quantize(&v, x.shape(), scheme, axis, global)
        }
        other => Err(usage("quantize", format!("--scheme quantizes FLOAT, FLOAT16 or BFLOAT16 input, not {other}"))),
    }
}

/// The elements as a tensor of the scheme's element type.
fn elements_tensor(q: &Quantized) -> Result<Tensor> {
    let codes: Vec<u64> = q.elements.iter().map(|&c| u64::from(c)).collect();
    Tensor::from_codes(q.scheme.element_dtype(), q.shape.clone(), &codes)
}

/// The scales as a tensor of their stored type and shape.
fn scales_tensor(q: &Quantized) -> Result<Tensor> {
    let shape = q.scales_shape()?;
    let codes: Vec<u64> = match &q.scales {
        Scales::Codes(c) => c.iter().map(|&c| u64::from(c)).collect(),
        Scales::Float16(b) | Scales::Bfloat16(b) => b.iter().map(|&b| u64::from(b)).collect(),
        Scales::Float32(v) => v.iter().map(|v| u64::from(v.to_bits())).collect(),
    };
    Tensor::from_codes(q.scales.dtype(&q.scheme), shape, &codes)
}

/// Scales read from a file, checked against the scheme's stored type and the shape it needs.
fn scales_from_tensor(t: &Tensor, scheme: &Scheme, want_shape: &[usize], path: &Path) -> Result<Scales> {
    let codes = t.codes()?;
    let scales = match t.dtype() {
        DType::Float8E8M0 | DType::Float8E4M3FN | DType::Uint8 => {
            Scales::Codes(codes.iter().map(|&c| c as u8).collect())
        }
        DType::Float16 => Scales::Float16(codes.iter().map(|&c| c as u16).collect()),
        DType::Bfloat16 => Scales::Bfloat16(codes.iter().map(|&c| c as u16).collect()),
        DType::Float => Scales::Float32(codes.iter().map(|&c| f32::from_bits(c as u32)).collect()),
        other => return Err(usage("dequantize", format!("--scales {}: {other} is no scale type", path.display()))),
    };
    let stored = scales.dtype(scheme);
    if stored != t.dtype() || t.shape() != want_shape {
        return Err(usage(
            "dequantize",
            format!(
                "--scales {} holds {} {:?}; {scheme} stores its scales as {stored} {want_shape:?}",
                path.display(),
                t.dtype(),
                t.shape()
            ),
        ));
    }
    Ok(scales)
}

fn describe(t: &Tensor, path: &Path) -> String {
    format!("{} {:?} to {}", t.dtype(), t.shape(), path.display())
}

/// `lowbit quantize --scheme`: reads IN, writes the elements, the scales, the per-tensor scale and
/// the ONNX graph asked for, all or none.
pub fn quantize_files(
    mode: &BlockMode,
    axis: Option<i64>,
    input: &Path,
    out: Option<&Path>,
    limits: &Limits,
    raw: bool,
) -> Result<String> {
    let scheme = &mode.scheme;
    if scheme.is_ggml_blocks() {
        return ggml_blocks_quantize(mode, axis, input, out, limits, raw);
    }
    let several = [mode.scales.as_deref(), mode.global_scale.as_deref(), mode.onnx.as_deref()];
    if out.into_iter().chain(several.into_iter().flatten()).any(crate::is_stdout) {
        return Err(usage(
            "quantize",
            format!("{scheme} writes several files (elements, scales): give each a path; - is for a single output"),
        ));
    }
    if mode.onnx.is_none() && (out.is_none() || mode.scales.is_none()) {
        return Err(usage("quantize", "--scheme needs --out E.pb (the elements) and --scales S.pb (the scales)"));
    }
    if out.is_some() != mode.scales.is_some() {
        return Err(usage("quantize", "--out E.pb and --scales S.pb go together (elements and scales)"));
    }
    if scheme.recipe().global == blocks::GlobalRule::None
        && (mode.global_scale.is_some() || mode.global_scale_value.is_some())
    {
        return Err(usage("quantize", format!("{scheme} has no per-tensor scale (--global-scale)")));
    }
    if mode.onnx.is_some() && mode.global_scale_value.is_some() {
        return Err(usage(
            "quantize",
            "--onnx computes the per-tensor scale as ModelOpt's exporter does; drop --global-scale-value",
        ));
    }
    if mode.onnx.is_some() && scheme.recipe().family != "modelopt:nvfp4" {
        return Err(usage(
            "quantize",
            format!("--onnx writes ModelOpt's exported NVFP4 graph: it needs --scheme modelopt:nvfp4, not {scheme}"),
        ));
    }
    let paths: Vec<&Path> = [out, mode.scales.as_deref(), mode.global_scale.as_deref(), mode.onnx.as_deref()]
        .into_iter()
        .flatten()
        .collect();
    for (i, a) in paths.iter().enumerate() {
        if paths[..i].contains(a) {
            return Err(usage("quantize", format!("{} is named for two outputs", a.display())));
        }
    }
    let x = read_tensor_file_with(input, limits)?;
    let axis = axis.unwrap_or(-1);
    let q = quantize_tensor(&x, scheme, axis, mode.global_scale_value)?;
    // Whether there is a per-tensor scale can depend on the call (torchao:nvfp4 has one only
    // when given or computed): checked on the result, before anything is written.
    if out.is_some() && q.global_scale.is_some() && mode.global_scale.is_none() {
        return Err(usage(
            "quantize",
            format!("{scheme} has a per-tensor scale: give --global-scale G.pb to receive it with the scales"),
        ));
    }
    if q.global_scale.is_none() && mode.global_scale.is_some() {
        return Err(usage(
            "quantize",
            format!(
                "{scheme} gives no per-tensor scale here (torchao:nvfp4 has one with ,global=amax or \
                 --global-scale-value)"
            ),
        ));
    }
    let mut staging = Staging::new();
    let mut wrote = Vec::new();
    if let (Some(out), Some(scales_path)) = (out, mode.scales.as_deref()) {
        let elements = elements_tensor(&q)?;
        let scales = scales_tensor(&q)?;
        staging.stage(scales_path, |w| write_tensor_proto(w, &scales, None))?;
        staging.stage(out, |w| write_tensor_proto(w, &elements, None))?;
        wrote.push(describe(&scales, scales_path));
        wrote.push(describe(&elements, out));
        if let (Some(path), Some(g)) = (mode.global_scale.as_deref(), q.global_scale) {
            let t = Tensor::from_f32(&[g]).reshape(vec![])?;
            staging.stage(path, |w| write_tensor_proto(w, &t, None))?;
            wrote.push(describe(&t, path));
        }
    }
    if let Some(path) = mode.onnx.as_deref() {
        let model = modelopt_onnx(&x, scheme, axis, &q)?;
        let bytes = prost::Message::encode_to_vec(&model);
        staging.stage(path, |w| std::io::Write::write_all(w, &bytes))?;
        wrote.push(format!("ModelOpt's NVFP4 graph to {}", path.display()));
    }
    staging.commit()?;
    Ok(format!("wrote {}", wrote.join(", ")))
}

/// `lowbit dequantize --scheme`: elements, scales (and the per-tensor scale) to float32.
pub fn dequantize_files(
    mode: &BlockMode,
    axis: Option<i64>,
    input: &Path,
    out: &Path,
    limits: &Limits,
    raw: bool,
) -> Result<String> {
    let scheme = &mode.scheme;
    if mode.onnx.is_some() || mode.global_scale_value.is_some() {
        return Err(usage("dequantize", "--onnx and --global-scale-value are for quantize"));
    }
    if scheme.is_ggml_blocks() {
        return ggml_blocks_dequantize(mode, axis, input, out, limits, raw);
    }
    let scales_path = mode
        .scales
        .as_deref()
        .ok_or_else(|| usage("dequantize", "--scheme needs --scales S.pb (the scales that go with the elements)"))?;
    // torchao:nvfp4 decodes with or without one; the other two-level recipes need it.
    let rule = scheme.recipe().global;
    if rule == blocks::GlobalRule::None && mode.global_scale.is_some() {
        return Err(usage("dequantize", format!("{scheme} has no per-tensor scale (--global-scale)")));
    }
    if matches!(rule, blocks::GlobalRule::ModeloptDecode | blocks::GlobalRule::CompressedTensorsEncode)
        && mode.global_scale.is_none()
    {
        return Err(usage("dequantize", format!("{scheme} has a per-tensor scale: give --global-scale G.pb")));
    }
    let e = read_tensor_file_with(input, limits)?;
    if e.dtype() != scheme.element_dtype() {
        return Err(usage(
            "dequantize",
            format!("{} holds {}; {scheme}'s elements are {}", input.display(), e.dtype(), scheme.element_dtype()),
        ));
    }
    let axis = axis.unwrap_or(-1);
    let elements: Vec<u8> = e.codes()?.iter().map(|&c| c as u8).collect();
    let shape = e.shape().to_vec();
    drop(e);
    // The scales' shape the elements need (checked against the file below).
    let probe = Quantized {
        scheme: scheme.clone(),
        shape: shape.clone(),
        axis,
        elements: Vec::new(),
        scales: Scales::Codes(Vec::new()),
        global_scale: None,
        extras: None,
    };
    let want = probe.scales_shape()?;
    let s = read_tensor_file_with(scales_path, limits)?;
    let scales = scales_from_tensor(&s, scheme, &want, scales_path)?;
    let global = match mode.global_scale.as_deref() {
        None => None,
        Some(path) => {
            let g = read_tensor_file_with(path, limits)?;
            if g.dtype() != DType::Float || g.len() != 1 {
                return Err(usage(
                    "dequantize",
                    format!(
                        "--global-scale {} holds {} {:?}; it is one FLOAT value",
                        path.display(),
                        g.dtype(),
                        g.shape()
                    ),
                ));
            }
            g.to_f32_vec()?.first().copied()
        }
    };
    let q = blocks::from_arrays(elements, &shape, scales, scheme, axis, global)?;
    let y = Tensor::from_f32(&blocks::dequantize(&q)?).reshape(shape)?;
    crate::write_tensor_out("dequantize", out, &y, None, raw, format!("wrote {}", describe(&y, out)))
}

// ------------------------------------------------------------------------------------------------
// ggml's block types of its table (ggml:q4_k, ...): the GGUF bytes as one UINT8 tensor
// ------------------------------------------------------------------------------------------------

/// The options ggml's block types take: `--out` only (the scales are inside the blocks), the
/// last axis.
fn ggml_blocks_options(command: &str, mode: &BlockMode, axis: Option<i64>) -> Result<()> {
    let scheme = &mode.scheme;
    if mode.scales.is_some() || mode.global_scale.is_some() || mode.global_scale_value.is_some() || mode.onnx.is_some()
    {
        return Err(usage(
            command,
            format!(
                "{scheme} keeps its scales inside its blocks: give --out only (no --scales, --global-scale, --onnx)"
            ),
        ));
    }
    if axis.is_some_and(|a| a != -1) {
        return Err(usage(command, format!("{scheme} blocks the last axis (--axis -1)")));
    }
    Ok(())
}

/// `lowbit quantize --scheme ggml:q4_k IN.pb --out E.pb`: E is UINT8 of IN's shape with the
/// last axis replaced by the bytes of a row, holding the rows' blocks as a GGUF holds them.
fn ggml_blocks_quantize(
    mode: &BlockMode,
    axis: Option<i64>,
    input: &Path,
    out: Option<&Path>,
    limits: &Limits,
    raw: bool,
) -> Result<String> {
    ggml_blocks_options("quantize", mode, axis)?;
    let out = out.ok_or_else(|| usage("quantize", "--scheme needs --out E.pb (the blocks)"))?;
    let x = read_tensor_file_with(input, limits)?;
    let q = quantize_tensor(&x, &mode.scheme, -1, None)?;
    let mut shape = q.shape.clone();
    let rows: usize = shape[..shape.len() - 1].iter().product();
    *shape.last_mut().expect("a shape with an axis") = q.elements.len().checked_div(rows).unwrap_or(0);
    let codes: Vec<u64> = q.elements.iter().map(|&b| u64::from(b)).collect();
    let t = Tensor::from_codes(DType::Uint8, shape, &codes)?;
    crate::write_tensor_out("quantize", out, &t, None, raw, format!("wrote {}", describe(&t, out)))
}

/// `lowbit dequantize --scheme ggml:q4_k E.pb --out OUT.pb`: the reverse (the last axis of E is
/// a row's bytes, a whole number of blocks).
fn ggml_blocks_dequantize(
    mode: &BlockMode,
    axis: Option<i64>,
    input: &Path,
    out: &Path,
    limits: &Limits,
    raw: bool,
) -> Result<String> {
    ggml_blocks_options("dequantize", mode, axis)?;
    let scheme = &mode.scheme;
    let (per_block, block_bytes) = scheme.ggml_block().expect("one of ggml's block types");
    let e = read_tensor_file_with(input, limits)?;
    let row_bytes = e.shape().last().copied().unwrap_or(0);
    if e.dtype() != DType::Uint8 || e.shape().is_empty() || row_bytes % block_bytes != 0 {
        return Err(usage(
            "dequantize",
            format!(
                "{} holds {} {:?}; {scheme} reads UINT8 rows of whole {block_bytes}-byte blocks",
                input.display(),
                e.dtype(),
                e.shape()
            ),
        ));
    }
    let mut shape = e.shape().to_vec();
    *shape.last_mut().expect("not empty") = row_bytes / block_bytes * per_block;
    let bytes: Vec<u8> = e.codes()?.iter().map(|&c| c as u8).collect();
    drop(e);
    let q = blocks::from_bytes(&bytes, scheme, &shape, -1)?;
    let y = Tensor::from_f32(&blocks::dequantize(&q)?).reshape(shape)?;
    crate::write_tensor_out("dequantize", out, &y, None, raw, format!("wrote {}", describe(&y, out)))
}

// ------------------------------------------------------------------------------------------------
// ModelOpt's exported ONNX form of NVFP4
// ------------------------------------------------------------------------------------------------

/// The opset ModelOpt's exporter raises the model to (`max(version, 23)`): FLOAT4E2M1 and
/// blocked DequantizeLinear.
const MODELOPT_OPSET: i64 = 23;
/// The IR version of opset 23 (onnx 1.18), the first with FLOAT4E2M1.
const MODELOPT_IR_VERSION: i64 = 11;
/// The name the graph gives the weight; ModelOpt derives every other name from it.
const WEIGHT: &str = "w";

fn tensor_type(dtype: DType, shape: &[usize]) -> TypeProto {
    TypeProto {
        tensor_type: Some(TypeProtoTensor {
            elem_type: Some(dtype.onnx_number()),
            shape: Some(TensorShapeProto {
                dim: shape
                    .iter()
                    .map(|&d| Dimension { dim_value: Some(d as i64), dim_param: None, denotation: None })
                    .collect(),
            }),
        }),
        denotation: None,
    }
}

fn value_info(name: &str, dtype: DType, shape: &[usize]) -> ValueInfoProto {
    ValueInfoProto { name: Some(name.into()), r#type: Some(tensor_type(dtype, shape)), doc_string: None }
}

fn int_attribute(name: &str, value: i64) -> AttributeProto {
    AttributeProto { name: Some(name.into()), i: Some(value), r#type: Some(2), ..Default::default() }
}

fn dequantize_node(name: &str, inputs: [&str; 2], output: &str, attributes: Vec<AttributeProto>) -> NodeProto {
    NodeProto {
        input: inputs.iter().map(|s| s.to_string()).collect(),
        output: vec![output.into()],
        name: Some(name.into()),
        op_type: Some("DequantizeLinear".into()),
        attribute: attributes,
        ..Default::default()
    }
}

/// ModelOpt's exported graph of `q` (module docs). `x` is the weight, for the exporter's rule on
/// the per-tensor scale.
fn modelopt_onnx(x: &Tensor, scheme: &Scheme, axis: i64, q: &Quantized) -> Result<ModelProto> {
    let rank = x.shape().len() as i64;
    if rank == 0 || (axis != -1 && axis != rank - 1) {
        return Err(usage("quantize", "--onnx: ModelOpt's graph blocks the last axis (DequantizeLinear axis=-1)"));
    }
    let global = q.global_scale.unwrap_or(f32::NAN);
    if !global.is_finite() {
        return Err(usage(
            "quantize",
            format!(
                "--onnx: the per-tensor scale amax / 2688 is {global}; ModelOpt's exporter refuses it (\"NVFP4 \
                 per-tensor scales must be finite\"): the weight holds NaN or infinity"
            ),
        ));
    }
    // ModelOpt's exporter takes 1.0 where amax / 2688 is 0 (an all-zero weight), where its torch
    // path keeps 0: quantize again with that scale.
    let exported;
    let q = if global == 0.0 {
        exported = quantize_tensor(x, scheme, axis, Some(1.0))?;
        &exported
    } else {
        q
    };
    let elements = elements_tensor(q)?;
    let scales = scales_tensor(q)?;
    let global = Tensor::from_f32(&[q.global_scale.unwrap_or(1.0)]);
    let names = (
        format!("{WEIGHT}_f4"),
        format!("{WEIGHT}_f8_scale"),
        format!("{WEIGHT}_f8_scale_f32_scale"),
        format!("{WEIGHT}_f32_scale"),
    );
    let (f4, f8, f32_global, f32_scale) = (&names.0, &names.1, &names.2, &names.3);
    let initializers = [(f4, &elements), (f32_global, &global), (f8, &scales)];
    let graph = GraphProto {
        node: vec![
            dequantize_node(&format!("{WEIGHT}_DequantizeLinear"), [f8, f32_global], f32_scale, vec![]),
            dequantize_node(
                &format!("{WEIGHT}_DequantizeLinear_1"),
                [f4, f32_scale],
                WEIGHT,
                vec![int_attribute("axis", -1), int_attribute("block_size", 16)],
            ),
        ],
        name: Some("modelopt_nvfp4".into()),
        initializer: initializers.iter().map(|(name, t)| tensor_to_proto(t, Some(name))).collect(),
        input: initializers.iter().map(|(name, t)| value_info(name, t.dtype(), t.shape())).collect(),
        output: vec![value_info(WEIGHT, DType::Float, x.shape())],
        value_info: vec![value_info(f32_scale, DType::Float, scales.shape())],
        doc_string: Some(format!(
            "{scheme}: ModelOpt 0.47's exported NVFP4 form (DequantizeLinear of the FLOAT8E4M3FN block scales by \
             the float32 per-tensor scale, then of the FLOAT4E2M1 elements, axis -1, block_size 16), written by \
             lowbit"
        )),
    };
    Ok(ModelProto {
        ir_version: Some(MODELOPT_IR_VERSION),
        producer_name: Some("lowbit".into()),
        producer_version: Some(env!("CARGO_PKG_VERSION").into()),
        graph: Some(graph),
        opset_import: vec![OperatorSetIdProto { domain: Some(String::new()), version: Some(MODELOPT_OPSET) }],
        ..Default::default()
    })
}
