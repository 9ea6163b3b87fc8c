//! Converting MXFP4 and NVFP4 weights between the conventions that store them, without a float
//! round trip: element codes and scale codes are re-encoded, and the result is kept only when
//! it dequantizes to the same bits as the source, element for element; otherwise the
//! conversion is refused naming the first tensor and element (or block scale) the target cannot
//! hold.
//!
//! | `--to` | MXFP4 weights become | NVFP4 weights become |
//! |---|---|---|
//! | `gpt-oss` | `NAME_blocks` / `NAME_scales` (`ocp:mxfp4`) | refused |
//! | `modelopt` | refused | `NAME`, `NAME_scale`, `NAME_scale_2` (`modelopt:nvfp4`) |
//! | `compressed-tensors` | `P.weight_packed`, `P.weight_scale` (`compressed-tensors:mxfp4`) | `P.weight_packed`, `P.weight_scale`, `P.weight_global_scale` (`compressed-tensors:nvfp4`) |
//! | `ggml` | GGUF MXFP4 blocks (`ggml:mxfp4`) | GGUF NVFP4 blocks (`ggml:nvfp4`, no per-tensor scale) |
//!
//! A block scale code is mapped to the target code whose scale, with the target's per-tensor
//! scale, decodes to the same value (so ggml's E8M0 0xFF, 2^127 to ggml, becomes OCP's 0xFE, and
//! an OCP NaN scale has no ggml code, and compressed-tensors' 0xFF, 2^128 = infinity in its
//! bfloat16 decode, has none in OCP or ggml); ModelOpt's decode scale G and compressed-tensors' encode
//! scale are each other's reciprocals, carried over only when 1/G is exact. Zeros keep their
//! sign where the target has a code for it (ggml's E2M1 code 8 decodes as +0).

use super::conventions::recognise;
use super::quantize::{kept_modules_of, part_bytes, parts, write_items, Convention, Item, Selection};
use super::weight::LogicalWeight;
use super::which::stored;
use super::{checkpoint_error, Checkpoint, StoredTensor, StoredType};
use crate::quant::blocks::{self, GlobalRule, Quantized, ScaleFormat, Scales, Scheme};
use crate::{DType, Error, Result};
use std::path::{Path, PathBuf};

/// `--to` and weight family -> target scheme.
const TARGETS: &[(&str, Family, &str)] = &[
    ("gpt-oss", Family::Mxfp4, "ocp:mxfp4"),
    ("ggml", Family::Mxfp4, "ggml:mxfp4"),
    ("compressed-tensors", Family::Mxfp4, "compressed-tensors:mxfp4"),
    ("modelopt", Family::Nvfp4, "modelopt:nvfp4"),
    ("compressed-tensors", Family::Nvfp4, "compressed-tensors:nvfp4"),
    ("ggml", Family::Nvfp4, "ggml:nvfp4"),
];

/// The conventions `convert` writes (`--to`).
pub const CONVERT_TARGETS: &[&str] = &["gpt-oss", "modelopt", "compressed-tensors", "ggml"];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Family {
    Mxfp4,
    Nvfp4,
}

fn family(scheme: &Scheme) -> Option<Family> {
    let r = scheme.recipe();
    match (r.element, r.scale) {
        (DType::Float4E2M1, ScaleFormat::E8M0) => Some(Family::Mxfp4),
        (DType::Float4E2M1, ScaleFormat::E4M3 | ScaleFormat::GgmlUe4m3) => Some(Family::Nvfp4),
        _ => None,
    }
}

/// The value of an element 1.0 (E2M1 code 2) in a one-row tensor of `len` elements whose
/// scales are all `code`, under `scheme` with per-tensor scale `global`.
fn unit_value(scheme: &Scheme, len: usize, code: u8, global: Option<f32>) -> Result<f32> {
    let count: usize = blocks::scales_shape(&[len], scheme, -1)?.iter().product();
    let q = blocks::from_arrays(vec![2; len], &[len], Scales::Codes(vec![code; count]), scheme, -1, global)?;
    Ok(blocks::dequantize(&q)?[0])
}

/// The per-tensor scale of `dst` that carries `src`'s: the same decode scale, the reciprocal of
/// an encode scale when it is exact, 1 when the source has none; `Err` naming why not.
fn carried_global(src: &Scheme, dst: &Scheme, global: Option<f32>) -> std::result::Result<Option<f32>, String> {
    let decode = match (src.recipe().global, global) {
        (GlobalRule::None, _) | (_, None) => 1.0f64,
        (GlobalRule::CompressedTensorsEncode, Some(g)) => 1.0 / f64::from(g),
        (_, Some(g)) => f64::from(g),
    };
    let exact = |v: f64| {
        let f = v as f32;
        (f64::from(f) == v && f.is_finite() && f != 0.0).then_some(f)
    };
    match dst.recipe().global {
        GlobalRule::None if decode == 1.0 => Ok(None),
        GlobalRule::None => Err(format!("the per-tensor scale {decode:e} has no place in {} (none there)", dst.name())),
        GlobalRule::CompressedTensorsEncode => exact(1.0 / decode)
            .map(Some)
            .ok_or_else(|| format!("the decode scale {decode:e} has no exact reciprocal for the encode scale")),
        _ => exact(decode).map(Some).ok_or_else(|| format!("the scale {decode:e} is not a float32")),
    }
}

/// `w` (stored under `src`) re-encoded under `dst`, proven by dequantizing both.
fn convert_weight(ckpt: &Checkpoint, w: &LogicalWeight, src: &Scheme, dst: &Scheme) -> Result<Quantized> {
    let elements = ckpt.tensor(&w.elements).expect("recognised");
    let refuse =
        |message: String| checkpoint_error(ckpt.files()[elements.file], Some(&w.name), Some(elements.offset), message);
    let q = stored(ckpt, w, src)?;
    let source = blocks::dequantize(&q)?;
    let global = carried_global(src, dst, q.global_scale).map_err(refuse)?;
    // One row long enough for a block of each (ggml NVFP4: 64).
    let len = 64;
    let Scales::Codes(codes) = &q.scales else { return Err(refuse("the scales are not codes".into())) };
    let mut src_table = [None::<u32>; 256];
    let mut dst_table = Vec::with_capacity(256);
    for b in 0..=255u8 {
        dst_table.push(unit_value(dst, len, b, global)?.to_bits());
    }
    let mut mapped = Vec::with_capacity(codes.len());
    for (k, &b) in codes.iter().enumerate() {
        let want = match src_table[b as usize] {
            Some(v) => v,
            None => {
                let v = unit_value(src, len, b, q.global_scale)?.to_bits();
                src_table[b as usize] = Some(v);
                v
            }
        };
        // The same code when it means the same there, else the first code that does.
        let found = if dst_table[b as usize] == want {
            Some(b)
        } else {
            dst_table.iter().position(|&v| v == want).map(|c| c as u8)
        };
        match found {
            Some(c) => mapped.push(c),
            None => {
                return Err(refuse(format!(
                    "block scale {k} (code 0x{b:02X}, a scale of {:e}) has no code in {}",
                    f32::from_bits(want),
                    dst.name()
                )))
            }
        }
    }
    // Element codes carry over; a zero takes the code of its sign (ggml decodes code 8 as +0).
    let element_codes: Vec<u8> = q
        .elements
        .iter()
        .zip(&source)
        .map(|(&c, v)| match v.to_bits() {
            0 => 0,
            0x8000_0000 => 8,
            _ => c,
        })
        .collect();
    let out = blocks::from_arrays(element_codes, &w.shape, Scales::Codes(mapped), dst, -1, global)
        .map_err(|e| refuse(e.to_string()))?;
    let converted = blocks::dequantize(&out)?;
    if let Some(i) = source.iter().zip(&converted).position(|(a, b)| a.to_bits() != b.to_bits()) {
        return Err(refuse(format!(
            "element {i}: {:e} (bits 0x{:08X}) would become {:e} (0x{:08X}) in {}",
            source[i],
            source[i].to_bits(),
            converted[i],
            converted[i].to_bits(),
            dst.name()
        )));
    }
    Ok(out)
}

/// Converts every MXFP4 / NVFP4 weight of `ckpt` that `selection` selects (the others copied as
/// they are; of slice `shard` = (K, N) when given: the
/// K-th of N equal runs of its logical weights) to the convention `to` ([`CONVERT_TARGETS`]),
/// other tensors copied, into `out` (a folder; a GGUF file for `ggml`), all or nothing, `threads`
/// weights at once; a weight the target cannot hold exactly is an error naming it and the first
/// element or scale. `progress(done, total)` is called as each output tensor starts.
pub fn convert_checkpoint(
    ckpt: &Checkpoint,
    to: &str,
    out: &Path,
    selection: &Selection,
    threads: usize,
    shard: Option<(usize, usize)>,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Vec<PathBuf>> {
    if !CONVERT_TARGETS.contains(&to) {
        return Err(Error::InvalidOp {
            op: format!("checkpoint convert --to {}", Error::quote(to)),
            message: format!("the targets are {}", CONVERT_TARGETS.join(", ")),
        });
    }
    let mut weights = recognise(ckpt);
    if let Some((k, n)) = shard {
        let len = weights.len();
        weights = weights.drain(len * (k - 1) / n..len * k / n).collect();
    }
    let mut items = Vec::new();
    let mut jobs: Vec<Option<(usize, Scheme, Scheme)>> = Vec::new();
    let mut target: Option<Scheme> = None;
    for (k, w) in weights.iter().enumerate() {
        let refuse = |message: String| checkpoint_error(ckpt.files()[0], Some(&w.name), None, message);
        if let Some(p) = w.problems.first() {
            return Err(refuse(format!("cannot be read: {p}")));
        }
        let Some(name) = w.scheme.as_ref().filter(|_| selection.selects(w)) else {
            for part in w.tensors() {
                items.push(Item::Copy(ckpt.tensors().iter().position(|t| t.name == part).expect("recognised")));
                jobs.push(None);
            }
            continue;
        };
        let src = Scheme::parse(name)?;
        let fam =
            family(&src).ok_or_else(|| refuse(format!("{name} is neither MXFP4 nor NVFP4: convert leaves it")))?;
        let dst = TARGETS
            .iter()
            .find(|(t, f, _)| *t == to && *f == fam)
            .map(|(_, _, s)| Scheme::parse(s))
            .transpose()?
            .ok_or_else(|| refuse(format!("{to} has no convention for {fam:?} weights")))?;
        if target.as_ref().is_some_and(|t| Convention::of_scheme(t).ok() != Convention::of_scheme(&dst).ok()) {
            return Err(refuse("the weights would need two conventions in one file".into()));
        }
        let like = StoredTensor {
            name: w.name.clone(),
            stored: StoredType::Plain(DType::Float),
            shape: w.shape.clone(),
            file: 0,
            offset: 0,
            len: 0,
        };
        items.push(Item::Weight(like));
        jobs.push(Some((k, src, dst.clone())));
        target.get_or_insert(dst);
    }
    let scheme = match (target, shard) {
        (Some(t), _) => t,
        // A slice with no quantized weight copies its tensors, in the target's container.
        (None, Some(_)) => Scheme::parse(TARGETS.iter().find(|(t, ..)| *t == to).expect("a listed target").2)?,
        (None, None) => {
            return Err(checkpoint_error(
                ckpt.files()[0],
                None,
                None,
                "holds no MXFP4 or NVFP4 weight to convert".into(),
            ))
        }
    };
    let convention = Convention::of_scheme(&scheme)?;
    let kept = kept_modules_of(
        ckpt,
        weights.iter().filter(|w| w.scheme.is_none() || !selection.selects(w)).map(|w| w.name.as_str()),
    );
    let produce = |i: usize| {
        let (k, src, dst) = jobs[i].as_ref().expect("a weight");
        let q = convert_weight(ckpt, &weights[*k], src, dst)?;
        let Item::Weight(like) = &items[i] else { unreachable!("jobs are weights") };
        part_bytes(convention, &q, &parts(convention, dst, like)?)
    };
    write_items(ckpt, &scheme, convention, &items, &kept, out, threads, &produce, progress)
}
