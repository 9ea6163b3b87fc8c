//! The conventions of integer and codebook weights in safetensors checkpoints, recognised from
//! tensor names, dtypes, shapes and the config; each names the scheme of `quant::integer` that
//! reads it and the producer's name of each of its tensors.
//!
//! | convention | tensors (`P.` the layer) | scheme |
//! |---|---|---|
//! | GPTQ (`quant_method` gptq; GPTQModel, AutoGPTQ) | `P.qweight` (I32 `[in*b/32, out]`), `P.qzeros` (I32 `[groups, out*b/32]`), `P.scales` (F16 `[groups, out]`), `P.g_idx` (I32 `[in]`) | `gptq:intB,group=N` (`,actorder` where `desc_act`, `,asym` where not `sym`, `,zeros=v2` where `checkpoint_format` is `gptq_v2`) |
//! | AWQ GEMM (`quant_method` awq) | `P.qweight` (I32 `[in, out*b/32]`), `P.qzeros` (I32 `[groups, out*b/32]`), `P.scales` (F16 `[groups, out]`) | `awq:int4,group=N` |
//! | compressed-tensors `pack-quantized` | `P.weight_packed` (I32 `[out, in*b/32]`), `P.weight_scale`, `P.weight_zero_point`, `P.weight_shape` | `compressed-tensors:intB,group=N` or `,channel` (`,asym` where not symmetric) |
//! | compressed-tensors `int-quantized` | `P.weight` (I8 `[out, in]`), `P.weight_scale`, `P.weight_zero_point` | `compressed-tensors:int8,...,format=int-quantized` |
//! | bitsandbytes 4-bit | `P.weight` (U8), `P.weight.absmax`, `P.weight.quant_map`, `P.weight.nested_absmax`, `P.weight.nested_quant_map`, `P.weight.quant_state.bitsandbytes__nf4` (or `__fp4`) | `bnb:nf4` / `bnb:fp4` (`,blocksize=N`, `,nested`) |
//! | MLX affine (`quantization` in config.json) | `P.weight` (U32 `[out, in*b/32]`), `P.scales`, `P.biases` | `mlx:affine,bits=B,group=N` |
//!
//! GPTQ and AWQ store the same names; the config tells them apart, and without one the shapes
//! do: GPTQ packs `qweight` along the input dimension (its second axis is `out`, as the
//! scales'), AWQ along the output dimension.

use super::weight::{ElementStorage, LogicalWeight};
use super::{checkpoint_error, Checkpoint, StoredTensor, StoredType};
use crate::dtype::DType;
use crate::error::{quoted, Error, Result};
use crate::quant::blocks::{self, Scheme};

/// What the config says of integer weights.
struct IntegerConfig<'a> {
    /// `quantization_config` of config.json.
    hf: Option<&'a serde_json::Value>,
    /// MLX's top-level `quantization` of config.json.
    mlx: Option<&'a serde_json::Value>,
}

impl IntegerConfig<'_> {
    fn text(&self, key: &str) -> Option<&str> {
        self.hf.and_then(|q| q.get(key)).and_then(serde_json::Value::as_str)
    }

    fn number(&self, key: &str) -> Option<i64> {
        self.hf.and_then(|q| q.get(key)).and_then(serde_json::Value::as_i64)
    }

    fn flag(&self, key: &str) -> Option<bool> {
        self.hf.and_then(|q| q.get(key)).and_then(serde_json::Value::as_bool)
    }

    fn method(&self) -> Option<&str> {
        self.text("quant_method")
    }

    /// compressed-tensors' weights arguments of its first config group.
    fn ct_weights(&self) -> Option<&serde_json::Value> {
        self.hf
            .and_then(|q| q.get("config_groups"))
            .and_then(|g| g.as_object())
            .and_then(|g| g.values().find_map(|group| group.get("weights")))
    }
}

fn is(t: Option<&StoredTensor>, dtype: DType) -> bool {
    t.is_some_and(|t| t.stored == StoredType::Plain(dtype))
}

fn said(config: &IntegerConfig<'_>, what: &str) -> String {
    match config.method() {
        Some(m) => format!("{what}; config: quant_method {}", quoted(m)),
        None if config.mlx.is_some() => format!("{what}; config: MLX quantization"),
        None => format!("{what}; no quantization config (recognised from names, dtypes and shapes alone)"),
    }
}

/// The integer weight `t` leads, if it leads one: `P.qweight`, `P.weight_packed` (I32),
/// bitsandbytes' `P.weight` with `P.weight.absmax`, MLX's `P.weight` (U32) with `P.biases`.
pub(super) fn recognise(ckpt: &Checkpoint, t: &StoredTensor) -> Option<LogicalWeight> {
    let config = IntegerConfig {
        hf: ckpt.config().and_then(|c| c.get("quantization_config")),
        mlx: ckpt.config().and_then(|c| c.get("quantization")).filter(|q| q.get("group_size").is_some()),
    };
    if let Some(prefix) = t.name.strip_suffix("qweight") {
        return is(Some(t), DType::Int32).then(|| gptq_or_awq(ckpt, t, prefix, &config));
    }
    if let Some(prefix) = t.name.strip_suffix("weight_packed") {
        return is(Some(t), DType::Int32).then(|| compressed_tensors_int(ckpt, t, prefix, &config));
    }
    if let Some(prefix) = t.name.strip_suffix("weight") {
        if is(Some(t), DType::Int8) && ckpt.tensor(&format!("{prefix}weight_scale")).is_some() {
            return Some(compressed_tensors_int(ckpt, t, prefix, &config));
        }
        if is(Some(t), DType::Uint8) && ckpt.tensor(&format!("{}.absmax", t.name)).is_some() {
            return Some(bitsandbytes(ckpt, t, prefix, &config));
        }
        if is(Some(t), DType::Uint32) && ckpt.tensor(&format!("{prefix}biases")).is_some() {
            return Some(mlx(ckpt, t, prefix, &config));
        }
    }
    None
}

/// A weight read through its producer's storage: `parts` pairs each producer name with the
/// checkpoint's tensor.
fn producer_weight(
    name: String,
    convention: &'static str,
    scheme: Option<String>,
    why: String,
    shape: Vec<usize>,
    parts: Vec<(String, String)>,
) -> LogicalWeight {
    let elements = parts.first().map(|(_, t)| t.clone()).unwrap_or_default();
    LogicalWeight {
        name,
        convention,
        scheme,
        why,
        shape,
        storage: ElementStorage::Producer,
        elements,
        scales: None,
        global_scale: None,
        others: parts.iter().skip(1).map(|(_, t)| t.clone()).collect(),
        parts,
        problems: Vec::new(),
    }
}

/// The parts of `names` present in the checkpoint as `prefix + name`.
fn present(ckpt: &Checkpoint, prefix: &str, names: &[&str]) -> Vec<(String, String)> {
    names
        .iter()
        .filter_map(|n| ckpt.tensor(&format!("{prefix}{n}")).map(|t| ((*n).to_string(), t.name.clone())))
        .collect()
}

fn gptq_or_awq(ckpt: &Checkpoint, qweight: &StoredTensor, prefix: &str, config: &IntegerConfig<'_>) -> LogicalWeight {
    let scales = ckpt.tensor(&format!("{prefix}scales"));
    let qzeros = ckpt.tensor(&format!("{prefix}qzeros"));
    let g_idx = ckpt.tensor(&format!("{prefix}g_idx"));
    let parts = present(ckpt, prefix, &["qweight", "qzeros", "scales", "g_idx"]);
    let name = format!("{prefix}weight");
    let (qw, sc) = match (&qweight.shape[..], scales.map(|s| &s.shape[..])) {
        (&[a, b], Some(&[g, o])) => ((a, b), (g, o)),
        _ => {
            let mut w = producer_weight(name, "gptq/awq", None, said(config, "I32 qweight"), Vec::new(), parts);
            w.problems.push(format!(
                "qweight {:?} and scales {:?} are not two matrices",
                qweight.shape,
                scales.map(|s| s.shape.clone())
            ));
            return w;
        }
    };
    // By the config, else by the shapes (module docs).
    let awq = match config.method() {
        Some("awq") => true,
        Some("gptq") => false,
        _ => qw.1 != sc.1,
    };
    let bits = config.number("bits").or_else(|| config.number("w_bit")).unwrap_or(4);
    let pack = if (1..=32).contains(&bits) && 32 % bits == 0 { (32 / bits) as usize } else { 0 };
    let (rows, cols) = if awq { (qw.1 * pack, qw.0) } else { (sc.1, qw.0 * pack) };
    let group = config.number("group_size").or_else(|| config.number("q_group_size"));
    let group_text = match group {
        Some(g) if g > 0 => format!("group={g}"),
        Some(_) => "group=-1".to_string(),
        None if sc.0 > 0 && cols % sc.0 == 0 => format!("group={}", cols / sc.0),
        None => "group=?".to_string(),
    };
    let mut problems = Vec::new();
    let scheme = if awq {
        if config.text("version").is_some_and(|v| !v.eq_ignore_ascii_case("gemm")) {
            problems.push(format!(
                "AWQ version {}: lowbit reads the GEMM layout",
                quoted(config.text("version").unwrap_or(""))
            ));
        }
        format!("awq:int{bits},{group_text}")
    } else {
        let mut s = format!("gptq:int{bits},{group_text}");
        if config.flag("desc_act") == Some(true) {
            s.push_str(",actorder");
        }
        if config.flag("sym") == Some(false) {
            s.push_str(",asym");
        }
        if config.text("checkpoint_format").is_some_and(|f| f.eq_ignore_ascii_case("gptq_v2")) {
            s.push_str(",zeros=v2");
        }
        s
    };
    let convention = if awq { "awq gemm" } else { "gptq" };
    let why = said(
        config,
        &format!(
            "I32 {} {:?} with {} {:?}{}",
            quoted(&qweight.name),
            qweight.shape,
            quoted(&format!("{prefix}scales")),
            sc,
            if config.method().is_none() {
                if awq {
                    ": packed along the output dimension (AWQ)"
                } else {
                    ": packed along the input dimension (GPTQ)"
                }
            } else {
                ""
            }
        ),
    );
    let mut w = producer_weight(name, convention, Some(scheme), why, vec![rows, cols], parts);
    w.problems = problems;
    if pack == 0 {
        w.problems.push(format!("{bits} bits do not pack into int32"));
    }
    if qzeros.is_none() {
        w.problems.push("no qzeros beside qweight".into());
    }
    if g_idx.is_some_and(|g| g.shape != [cols]) {
        w.problems.push(format!("g_idx {:?} is not one group per input column ({cols})", g_idx.map(|g| &g.shape)));
    }
    w
}

fn compressed_tensors_int(
    ckpt: &Checkpoint,
    packed: &StoredTensor,
    prefix: &str,
    config: &IntegerConfig<'_>,
) -> LogicalWeight {
    let args = config.ct_weights();
    let arg = |k: &str| args.and_then(|a| a.get(k));
    let bits = arg("num_bits").and_then(serde_json::Value::as_u64).unwrap_or(4);
    let symmetric = arg("symmetric").and_then(serde_json::Value::as_bool).unwrap_or(true);
    let strategy = arg("strategy").and_then(serde_json::Value::as_str).unwrap_or("group");
    let group = arg("group_size").and_then(serde_json::Value::as_u64);
    // `pack-quantized`: int32 words along the rows; `int-quantized`: one int8 code each.
    let int8 = is(Some(packed), DType::Int8);
    let bits = if int8 { 8 } else { bits };
    let pack = if int8 {
        1
    } else if (1..=32).contains(&bits) && 32 % bits == 0 {
        (32 / bits) as usize
    } else {
        0
    };
    let shape = match packed.shape[..] {
        [rows, words] => vec![rows, words * pack],
        _ => packed.shape.clone(),
    };
    let mut scheme = match (strategy, group) {
        ("channel", _) => format!("compressed-tensors:int{bits},channel"),
        (_, Some(g)) => format!("compressed-tensors:int{bits},group={g}"),
        _ => format!("compressed-tensors:int{bits},channel"),
    };
    if !symmetric {
        scheme.push_str(",asym");
    }
    let (convention, parts) = if int8 {
        scheme.push_str(",format=int-quantized");
        ("compressed-tensors int-quantized", present(ckpt, prefix, &["weight", "weight_scale", "weight_zero_point"]))
    } else {
        let names = ["weight_packed", "weight_scale", "weight_zero_point", "weight_shape"];
        ("compressed-tensors pack-quantized", present(ckpt, prefix, &names))
    };
    let why = said(
        config,
        &format!(
            "{} {} {:?}; format {}",
            packed.stored,
            quoted(&packed.name),
            packed.shape,
            quoted(config.text("format").unwrap_or("?"))
        ),
    );
    let mut w = producer_weight(format!("{prefix}weight"), convention, Some(scheme), why, shape, parts);
    if pack == 0 {
        w.problems.push(format!("{bits} bits do not pack into int32"));
    }
    if packed.shape.len() != 2 {
        w.problems.push(format!("weight_packed {:?} is not a matrix", packed.shape));
    }
    w
}

fn bitsandbytes(ckpt: &Checkpoint, weight: &StoredTensor, prefix: &str, config: &IntegerConfig<'_>) -> LogicalWeight {
    let base = &weight.name;
    let state = ["nf4", "fp4"]
        .iter()
        .find_map(|q| ckpt.tensor(&format!("{base}.quant_state.bitsandbytes__{q}")).map(|t| (*q, t)));
    let mut parts = vec![("weight".to_string(), base.clone())];
    parts.extend(
        ["absmax", "quant_map", "nested_absmax", "nested_quant_map"]
            .iter()
            .filter_map(|n| ckpt.tensor(&format!("{base}.{n}")).map(|t| ((*n).to_string(), t.name.clone()))),
    );
    if let Some((q, t)) = state {
        parts.push((format!("quant_state.bitsandbytes__{q}"), t.name.clone()));
    }
    let quant_type = state.map(|(q, _)| q).or_else(|| config.text("bnb_4bit_quant_type")).unwrap_or("nf4");
    let nested = ckpt.tensor(&format!("{base}.nested_absmax")).is_some()
        || config.flag("bnb_4bit_use_double_quant") == Some(true);
    // The blocksize and the weight's shape are in the quant_state JSON (read with the tensors).
    let (shape, blocksize) = state.and_then(|(_, t)| quant_state(ckpt, t)).unwrap_or((Vec::new(), None));
    let mut scheme = format!("bnb:{quant_type}");
    if let Some(b) = blocksize.filter(|b| *b != 64) {
        scheme.push_str(&format!(",blocksize={b}"));
    }
    if nested {
        scheme.push_str(",nested");
    }
    let why = said(config, &format!("U8 {} with {}", quoted(base), quoted(&format!("{base}.absmax"))));
    let mut w = producer_weight(format!("{prefix}weight"), "bitsandbytes 4-bit", Some(scheme), why, shape, parts);
    if state.is_none() {
        w.problems.push(format!("no {base}.quant_state.bitsandbytes__nf4 (or __fp4) giving the weight's shape"));
    }
    w
}

/// The weight's shape and blocksize from a bitsandbytes quant_state tensor (JSON as bytes).
fn quant_state(ckpt: &Checkpoint, t: &StoredTensor) -> Option<(Vec<usize>, Option<usize>)> {
    if t.len > 1 << 16 {
        return None;
    }
    let mut buf = vec![0u8; t.len as usize];
    ckpt.read_at(t, 0, &mut buf).ok()?;
    let v: serde_json::Value = serde_json::from_slice(&buf).ok()?;
    let shape =
        v.get("shape")?.as_array()?.iter().map(|d| d.as_u64().map(|d| d as usize)).collect::<Option<Vec<_>>>()?;
    let blocksize = v.get("blocksize").and_then(serde_json::Value::as_u64).map(|b| b as usize);
    Some((shape, blocksize))
}

fn mlx(ckpt: &Checkpoint, weight: &StoredTensor, prefix: &str, config: &IntegerConfig<'_>) -> LogicalWeight {
    let number = |k: &str| config.mlx.and_then(|q| q.get(k)).and_then(serde_json::Value::as_u64);
    let bits = number("bits").unwrap_or(4);
    let group = number("group_size").unwrap_or(64);
    let shape = match weight.shape[..] {
        [rows, words] if bits > 0 => vec![rows, words * 32 / bits as usize],
        _ => weight.shape.clone(),
    };
    let parts = present(ckpt, prefix, &["weight", "scales", "biases"]);
    let why = said(config, &format!("U32 {} with {}", quoted(&weight.name), quoted(&format!("{prefix}biases"))));
    let mut w = producer_weight(
        weight.name.clone(),
        "mlx affine",
        Some(format!("mlx:affine,bits={bits},group={group}")),
        why,
        shape,
        parts,
    );
    if config.mlx.is_none() {
        w.problems.push("no `quantization` in config.json: bits and group_size assumed 4 and 64".into());
    }
    w
}

/// The producer's tensors of `w` ([`ElementStorage::Producer`]), read whole with positioned
/// reads, each a plain tensor, named as the producer names them.
pub(super) fn read_parts(ckpt: &Checkpoint, w: &LogicalWeight, scheme: &Scheme) -> Result<Vec<blocks::StoredTensor>> {
    let mut tensors = Vec::with_capacity(w.parts.len());
    for (producer_name, tensor_name) in &w.parts {
        let t = ckpt.tensor(tensor_name).ok_or_else(|| {
            checkpoint_error(
                ckpt.files()[0],
                Some(tensor_name),
                None,
                format!("weight {}: tensor missing", quoted(&w.name)),
            )
        })?;
        let refuse = |message: String| checkpoint_error(ckpt.files()[t.file], Some(&t.name), Some(t.offset), message);
        let StoredType::Plain(dtype) = t.stored else {
            return Err(refuse(format!(
                "weight {}: a {} tensor is no part of {}",
                quoted(&w.name),
                t.stored,
                scheme.name()
            )));
        };
        let len =
            usize::try_from(t.len).map_err(|_| Error::TooLarge { what: format!("{} bytes of {}", t.len, t.name) })?;
        let mut data = Vec::new();
        data.try_reserve_exact(len)
            .map_err(|_| Error::TooLarge { what: format!("{len} bytes of {}", quoted(&t.name)) })?;
        data.resize(len, 0);
        ckpt.read_at(t, 0, &mut data)?;
        tensors.push(blocks::StoredTensor { name: producer_name.clone(), dtype, shape: t.shape.clone(), data });
    }
    Ok(tensors)
}
