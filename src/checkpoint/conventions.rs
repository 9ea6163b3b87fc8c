//! The conventions real checkpoints store low-bit weights in, recognised from tensor names,
//! dtypes, shapes and `config.json` / `hf_quant_config.json`. Each tensor belongs to exactly one
//! [`LogicalWeight`]: a quantized weight groups its elements, block scales and per-tensor scale
//! under the weight's name; every other tensor stands alone. The evidence (names, dtypes, the
//! config's `quant_method` / `format`) is written in [`LogicalWeight::why`], and a shape or dtype
//! that does not fit the convention is a problem listed with the weight, never a silent guess.
//!
//! | convention | tensors | scheme |
//! |---|---|---|
//! | gpt-oss MXFP4 | `NAME_blocks` (U8 `[..., G, 16]`, two E2M1 codes a byte, low nibble first), `NAME_scales` (U8 `[..., G]`, E8M0) | `ocp:mxfp4` |
//! | DeepSeek-V3 FP8 | `NAME` (F8_E4M3 `[M, N]`), `NAME_scale_inv` (F32 `[ceil(M/128), ceil(N/128)]`) | `deepseek:fp8` (`,scale_fmt=ue8m0` when the config says so) |
//! | ModelOpt NVFP4 | `NAME` (U8 `[M, N/2]`), `NAME_scale` (F8_E4M3 `[M, N/16]`), `NAME_scale_2` (F32 scalar) | `modelopt:nvfp4` |
//! | compressed-tensors `nvfp4-pack-quantized` | `P.weight_packed` (U8 `[M, N/2]`), `P.weight_scale` (F8_E4M3 `[M, N/16]`), `P.weight_global_scale` (F32) | `compressed-tensors:nvfp4` |
//! | compressed-tensors `mxfp4-pack-quantized` | `P.weight_packed` (U8 `[M, N/2]`), `P.weight_scale` (U8 E8M0 `[M, N/32]`) | `compressed-tensors:mxfp4` |
//! | FP8 with a float scale (compressed-tensors `float-quantized`, ModelOpt FP8) | `NAME` (F8_E4M3), `NAME_scale` (F32, or BF16 as compressed-tensors stores a bfloat16 model's: one value, one per row, or one per block) | `fp8:tensor`, `fp8:channel`, `fp8:block=RxC` |
//! | integer and codebook weights: GPTQ, AWQ, compressed-tensors `pack-quantized`, bitsandbytes 4-bit, MLX affine | their producers' tensors (`integer_conventions`) | `gptq:...`, `awq:...`, `compressed-tensors:int4,...`, `bnb:nf4,...`, `mlx:affine,...` |
//! | GGUF | one tensor of a ggml type | `ggml:q8_0`, `ggml:q4_0`, `ggml:mxfp4`, `ggml:nvfp4`; other types listed, refused |

use super::weight::{ElementStorage, LogicalWeight};
use super::{Checkpoint, Container, StoredTensor, StoredType};
use crate::dtype::DType;
use crate::error::quoted;
use std::collections::HashSet;

/// What the checkpoint's configs say about quantization.
struct QuantConfig {
    /// `quantization_config.quant_method` of config.json, or `modelopt` for hf_quant_config.json.
    method: Option<String>,
    /// compressed-tensors' `format`.
    format: Option<String>,
    /// DeepSeek's `weight_block_size`.
    block: Option<(usize, usize)>,
    /// DeepSeek's `scale_fmt`.
    scale_fmt: Option<String>,
    /// ModelOpt's `quant_algo`.
    algo: Option<String>,
    /// compressed-tensors' weights arguments (of its first config group): `strategy`,
    /// `group_size`, `block_structure`.
    strategy: Option<String>,
    group_size: Option<usize>,
    block_structure: Option<(usize, usize)>,
}

fn quant_config(ckpt: &Checkpoint) -> QuantConfig {
    let q = ckpt.config().and_then(|c| c.get("quantization_config"));
    let text = |v: Option<&serde_json::Value>, key: &str| {
        v.and_then(|v| v.get(key)).and_then(|s| s.as_str()).map(str::to_string)
    };
    let modelopt = ckpt.quant_config().and_then(|c| c.get("quantization"));
    let block =
        q.and_then(|q| q.get("weight_block_size")).and_then(|b| b.as_array()).and_then(|b| match b.as_slice() {
            [r, c] => Some((r.as_u64()? as usize, c.as_u64()? as usize)),
            _ => None,
        });
    let weights = q
        .and_then(|q| q.get("config_groups"))
        .and_then(|g| g.as_object())
        .and_then(|g| g.values().find_map(|group| group.get("weights")));
    let pair = |v: Option<&serde_json::Value>| {
        v.and_then(|b| b.as_array()).and_then(|b| match b.as_slice() {
            [r, c] => Some((r.as_u64()? as usize, c.as_u64()? as usize)),
            _ => None,
        })
    };
    QuantConfig {
        strategy: text(weights, "strategy"),
        group_size: weights.and_then(|w| w.get("group_size")).and_then(serde_json::Value::as_u64).map(|n| n as usize),
        block_structure: pair(weights.and_then(|w| w.get("block_structure"))),
        method: text(q, "quant_method").or_else(|| modelopt.map(|_| "modelopt".to_string())),
        format: text(q, "format"),
        block,
        scale_fmt: text(q, "scale_fmt"),
        algo: text(modelopt, "quant_algo").or_else(|| text(q, "quant_algo")),
    }
}

fn is(t: Option<&StoredTensor>, dtype: DType) -> bool {
    t.is_some_and(|t| t.stored == StoredType::Plain(dtype))
}

/// Every logical weight of `ckpt`, in the order of their first tensor.
#[must_use]
pub fn recognise(ckpt: &Checkpoint) -> Vec<LogicalWeight> {
    let config = quant_config(ckpt);
    let said = |what: &str| match &config.method {
        Some(m) => format!("{what}; config: quant_method {}", quoted(m)),
        None => format!("{what}; no quantization config (recognised from names and dtypes alone)"),
    };
    // Quantized weights first (a scale tensor may come before its weight in the file), then every
    // tensor no weight claimed, each alone; listed in the order of their first tensor.
    let mut claimed: HashSet<&str> = HashSet::new();
    let mut found: Vec<(usize, LogicalWeight)> = Vec::new();
    for (k, t) in ckpt.tensors().iter().enumerate() {
        let sibling = |suffix: &str| ckpt.tensor(&format!("{}{suffix}", t.name));
        let w = if ckpt.container() == Container::Gguf {
            Some(ggml_weight(t))
        } else if let Some(w) = super::integer_conventions::recognise(ckpt, t) {
            Some(w)
        } else if let (Some(base), true) = (t.name.strip_suffix("_blocks"), is(Some(t), DType::Uint8)) {
            ckpt.tensor(&format!("{base}_scales"))
                .filter(|s| is(Some(s), DType::Uint8))
                .map(|s| gpt_oss(t, s, base, &said))
        } else if is(Some(t), DType::Float8E4M3FN) && is(sibling("_scale_inv"), DType::Float) {
            Some(deepseek(t, sibling("_scale_inv").expect("checked"), &config, &said))
        } else if is(Some(t), DType::Uint8)
            && is(sibling("_scale"), DType::Float8E4M3FN)
            && is(sibling("_scale_2"), DType::Float)
        {
            Some(modelopt(
                t,
                sibling("_scale").expect("checked"),
                sibling("_scale_2").expect("checked"),
                &config,
                &said,
            ))
        } else if let Some(prefix) = t.name.strip_suffix("weight_packed") {
            Some(compressed_tensors(ckpt, t, prefix, &config, &said))
        } else if is(Some(t), DType::Float8E4M3FN)
            // compressed-tensors keeps the scale in the model's dtype: BF16 for a bfloat16 model.
            && (is(sibling("_scale"), DType::Float) || is(sibling("_scale"), DType::Bfloat16))
        {
            Some(fp8_scaled(t, sibling("_scale").expect("checked"), &config, &said))
        } else {
            None
        };
        let Some(w) = w else { continue };
        let parts: Vec<&str> = w.tensors().iter().map(|n| ckpt.tensor(n).map_or("", |t| t.name.as_str())).collect();
        if parts.iter().any(|p| claimed.contains(p)) {
            continue;
        }
        claimed.extend(parts);
        found.push((k, w));
    }
    for (k, t) in ckpt.tensors().iter().enumerate() {
        if !claimed.contains(t.name.as_str()) {
            found.push((k, LogicalWeight::plain(t)));
        }
    }
    found.sort_by_key(|(k, _)| *k);
    found.into_iter().map(|(_, w)| w).collect()
}

fn ggml_weight(t: &StoredTensor) -> LogicalWeight {
    let mut w = LogicalWeight::plain(t);
    if let StoredType::Ggml(g) = t.stored {
        w.convention = "gguf";
        w.storage = ElementStorage::GgmlBlocks;
        w.why = format!("a GGUF tensor of ggml type {}", g.name());
        if g.is_decoded() {
            w.scheme = Some(format!("ggml:{}", g.name().to_ascii_lowercase()));
        } else {
            w.problems.push(format!("ggml type {}: lowbit has no recipe for it (refused for conversion)", g.name()));
        }
    }
    w
}

fn quantized(
    name: &str,
    convention: &'static str,
    scheme: &str,
    why: String,
    shape: Vec<usize>,
    storage: ElementStorage,
    elements: &StoredTensor,
) -> LogicalWeight {
    LogicalWeight {
        name: name.to_string(),
        convention,
        scheme: Some(scheme.to_string()),
        why,
        shape,
        storage,
        elements: elements.name.clone(),
        scales: None,
        global_scale: None,
        others: Vec::new(),
        parts: Vec::new(),
        problems: Vec::new(),
    }
}

fn gpt_oss(blocks: &StoredTensor, scales: &StoredTensor, base: &str, said: &dyn Fn(&str) -> String) -> LogicalWeight {
    let mut shape = blocks.shape.clone();
    let bytes = shape.pop().unwrap_or(0);
    if let Some(g) = shape.last_mut() {
        *g *= 32;
    }
    let mut w = quantized(
        base,
        "gpt-oss mxfp4",
        "ocp:mxfp4",
        said(&format!("{} and {} (U8)", quoted(&blocks.name), quoted(&scales.name))),
        shape,
        ElementStorage::PackedE2M1,
        blocks,
    );
    w.scales = Some(scales.name.clone());
    if bytes != 16 || blocks.shape.len() < 2 || scales.shape[..] != blocks.shape[..blocks.shape.len() - 1] {
        w.problems.push(format!(
            "the blocks' shape {:?} is not [..., G, 16] with the scales' shape {:?} = [..., G]",
            blocks.shape, scales.shape
        ));
    }
    w
}

fn deepseek(
    weight: &StoredTensor,
    scale: &StoredTensor,
    config: &QuantConfig,
    said: &dyn Fn(&str) -> String,
) -> LogicalWeight {
    let (tr, tc) = config.block.unwrap_or((128, 128));
    let mut scheme =
        if (tr, tc) == (128, 128) { "deepseek:fp8".to_string() } else { format!("deepseek:fp8,tile={tr}x{tc}") };
    if config.scale_fmt.as_deref() == Some("ue8m0") {
        scheme.push_str(",scale_fmt=ue8m0");
    }
    let mut w = quantized(
        &weight.name,
        "deepseek fp8",
        &scheme,
        said(&format!("F8_E4M3 {} with F32 {}", quoted(&weight.name), quoted(&scale.name))),
        weight.shape.clone(),
        ElementStorage::Codes,
        weight,
    );
    w.scales = Some(scale.name.clone());
    let want = match weight.shape[..] {
        [m, n] => Some(vec![m.div_ceil(tr), n.div_ceil(tc)]),
        _ => None,
    };
    if want.as_ref() != Some(&scale.shape) {
        w.problems.push(format!(
            "the weight's shape {:?} and the scales' {:?} are not [M, N] and [ceil(M/{tr}), ceil(N/{tc})]",
            weight.shape, scale.shape
        ));
    }
    if config.method.as_deref().is_some_and(|m| m != "fp8") {
        w.problems
            .push(format!("the config's quant_method is {}, not fp8", quoted(config.method.as_deref().unwrap_or(""))));
    }
    w
}

/// `[M, N/2]` packed E2M1 with `[M, N/block]` scales: the logical shape, or a problem.
fn packed_shape(packed: &StoredTensor, scale: &StoredTensor, block: usize) -> (Vec<usize>, Option<String>) {
    let mut shape = packed.shape.clone();
    if let Some(last) = shape.last_mut() {
        *last *= 2;
    }
    let mut want = shape.clone();
    if let Some(last) = want.last_mut() {
        *last = last.div_ceil(block);
    }
    let problem = (shape.is_empty() || want != scale.shape).then(|| {
        format!(
            "the packed shape {:?} and the scales' {:?} are not [..., N/2] and [..., N/{block}]",
            packed.shape, scale.shape
        )
    });
    (shape, problem)
}

fn modelopt(
    weight: &StoredTensor,
    scale: &StoredTensor,
    scale_2: &StoredTensor,
    config: &QuantConfig,
    said: &dyn Fn(&str) -> String,
) -> LogicalWeight {
    let (shape, problem) = packed_shape(weight, scale, 16);
    let mut why = said(&format!(
        "U8 {} with F8_E4M3 {} and F32 {}",
        quoted(&weight.name),
        quoted(&scale.name),
        quoted(&scale_2.name)
    ));
    if let Some(algo) = &config.algo {
        why.push_str(&format!("; quant_algo {}", quoted(algo)));
    }
    let mut w =
        quantized(&weight.name, "modelopt nvfp4", "modelopt:nvfp4", why, shape, ElementStorage::PackedE2M1, weight);
    w.scales = Some(scale.name.clone());
    w.global_scale = Some(scale_2.name.clone());
    w.problems.extend(problem);
    if scale_2.elements() != 1 {
        w.problems.push(format!("weight_scale_2 has {} elements, not one", scale_2.elements()));
    }
    // W4A16_NVFP4: ModelOpt's weight-only NVFP4 export, the same weight tensors.
    if config
        .algo
        .as_deref()
        .is_some_and(|a| !a.eq_ignore_ascii_case("nvfp4") && !a.eq_ignore_ascii_case("w4a16_nvfp4"))
    {
        w.problems
            .push(format!("the config's quant_algo is {}, not NVFP4", quoted(config.algo.as_deref().unwrap_or(""))));
    }
    w
}

fn compressed_tensors(
    ckpt: &Checkpoint,
    packed: &StoredTensor,
    prefix: &str,
    config: &QuantConfig,
    said: &dyn Fn(&str) -> String,
) -> LogicalWeight {
    let name = format!("{prefix}weight");
    let scale = ckpt.tensor(&format!("{prefix}weight_scale"));
    let global = ckpt.tensor(&format!("{prefix}weight_global_scale"));
    let zero_point = ckpt.tensor(&format!("{prefix}weight_zero_point"));
    let format = config.format.as_deref();
    let inferred = match (format, packed.stored, scale.map(|s| s.stored)) {
        (Some("nvfp4-pack-quantized"), ..) => "nvfp4",
        (Some("mxfp4-pack-quantized"), ..) => "mxfp4",
        (Some("pack-quantized"), ..) => "int",
        (_, StoredType::Plain(DType::Int32), _) => "int",
        (_, StoredType::Plain(DType::Uint8), Some(StoredType::Plain(DType::Float8E4M3FN))) if global.is_some() => {
            "nvfp4"
        }
        (_, StoredType::Plain(DType::Uint8), Some(StoredType::Plain(DType::Uint8))) => "mxfp4",
        _ => "unknown",
    };
    let mut why = said(&format!("{} ({})", quoted(&packed.name), packed.stored));
    match format {
        Some(f) => why.push_str(&format!("; format {}", quoted(f))),
        None => why.push_str(&format!("; no format in the config: {inferred} from the scale tensors' dtypes")),
    }
    let (convention, scheme, block) = match inferred {
        "nvfp4" => ("compressed-tensors nvfp4-pack-quantized", Some("compressed-tensors:nvfp4"), 16),
        "mxfp4" => ("compressed-tensors mxfp4-pack-quantized", Some("compressed-tensors:mxfp4"), 32),
        "int" => ("compressed-tensors pack-quantized", None, 1),
        _ => ("compressed-tensors", None, 1),
    };
    let mut w = LogicalWeight {
        name,
        convention,
        scheme: scheme.map(str::to_string),
        why,
        shape: packed.shape.clone(),
        storage: if scheme.is_some() { ElementStorage::PackedE2M1 } else { ElementStorage::Plain },
        elements: packed.name.clone(),
        scales: scale.map(|s| s.name.clone()),
        global_scale: global.filter(|_| inferred == "nvfp4").map(|g| g.name.clone()),
        others: zero_point.map(|z| z.name.clone()).into_iter().collect(),
        parts: Vec::new(),
        problems: Vec::new(),
    };
    if inferred == "mxfp4" {
        w.others.extend(global.map(|g| g.name.clone()));
    }
    match (scheme, scale) {
        (Some(_), Some(scale)) => {
            let (shape, problem) = packed_shape(packed, scale, block);
            w.shape = shape;
            w.problems.extend(problem);
            if inferred == "nvfp4" && global.is_none() {
                w.problems.push("no weight_global_scale beside the packed weight".into());
            }
        }
        (Some(_), None) => w.problems.push("no weight_scale beside the packed weight".into()),
        (None, _) => {
            w.problems.push(format!("{convention}: lowbit has no recipe for it (listed, refused for conversion)"))
        }
    }
    w
}

fn fp8_scaled(
    weight: &StoredTensor,
    scale: &StoredTensor,
    config: &QuantConfig,
    said: &dyn Fn(&str) -> String,
) -> LogicalWeight {
    let convention = match config.method.as_deref() {
        Some("compressed-tensors") => "compressed-tensors float-quantized",
        Some("modelopt") => "modelopt fp8",
        _ => "fp8 with a float32 scale",
    };
    let n = scale.elements();
    let rows: usize = weight.shape[..weight.shape.len().saturating_sub(1)].iter().product();
    let cols = weight.shape.last().copied().unwrap_or(1);
    // The layout the config says, where the scales' shape is that layout's: a weight smaller than
    // one tile or group has one scale, as a per-tensor one would.
    let said_by_config = match (config.strategy.as_deref(), &scale.shape[..], &weight.shape[..]) {
        (Some("tensor"), _, _) if n == 1 => Some("fp8:tensor".to_string()),
        (Some("channel"), [sr, 1], [_, _]) if *sr == rows => Some("fp8:channel".to_string()),
        (Some("group"), [sr, sc], [_, _]) => config
            .group_size
            .filter(|g| *g > 0 && *sr == rows && cols.div_ceil(*g) == *sc)
            .map(|g| format!("fp8:group={g}")),
        (Some("block"), [sr, sc], [m, _]) => config
            .block_structure
            .filter(|(r, c)| *r > 0 && *c > 0 && m.div_ceil(*r) == *sr && cols.div_ceil(*c) == *sc)
            .map(|(r, c)| format!("fp8:block={r}x{c}")),
        _ => None,
    };
    let scheme = if said_by_config.is_some() {
        said_by_config
    } else if n == 1 {
        Some("fp8:tensor".to_string())
    } else if scale.shape.len() == 2 && weight.shape.len() == 2 && scale.shape[1] == 1 && scale.shape[0] == rows {
        Some("fp8:channel".to_string())
    } else if let ([sr, sc], [m, _]) = (&scale.shape[..], &weight.shape[..]) {
        // Blocks: the tile that gives this many scales (compressed-tensors' block_structure).
        let tile = |count: usize, len: usize| (1..=len).find(|&t| len.div_ceil(t) == count && t.is_power_of_two());
        match (tile(*sr, *m), tile(*sc, cols)) {
            (Some(r), Some(c)) => Some(format!("fp8:block={r}x{c}")),
            _ => None,
        }
    } else {
        None
    };
    let mut w = LogicalWeight {
        name: weight.name.clone(),
        convention,
        scheme: scheme.clone(),
        why: said(&format!(
            "F8_E4M3 {} with {} {} of shape {:?}",
            quoted(&weight.name),
            scale.stored,
            quoted(&scale.name),
            scale.shape
        )),
        shape: weight.shape.clone(),
        storage: ElementStorage::Codes,
        elements: weight.name.clone(),
        scales: Some(scale.name.clone()),
        global_scale: None,
        others: Vec::new(),
        parts: Vec::new(),
        problems: Vec::new(),
    };
    if scheme.is_none() {
        w.problems.push(format!(
            "the scales' shape {:?} is no per-tensor, per-row or block layout of {:?}",
            scale.shape, weight.shape
        ));
    }
    w
}
