//! The fast path for GGUF's block types (Q8_0, Q4_0, MXFP4, NVFP4): runs of whole blocks decoded
//! by table lookups into one output buffer reused for the whole tensor.
//!
//! Nothing about a block is typed here. Where each element's code and each scale's bits sit in
//! a block is found by probing `quant::blocks`' own `from_bytes` with one bit set at a time; the
//! values come from its dequantize on probes of every code:
//! - one-byte scales (MXFP4's E8M0, NVFP4's UE4M3): the value of every (scale code, element
//!   code) pair, converted to the output dtype by a cast plan;
//! - float16 scales (Q8_0, Q4_0), whose recipes dequantize to the float32 product of element and
//!   scale: every element code under a unit scale, and every scale code under an element of
//!   value 1, multiplied in float32, then converted by a cast plan.
//!
//! A type whose probes do not show this shape takes the general path. The tests compare the two
//! bit for bit on every code and random scales.

use super::tile_parts::{code_table, fill, pair_table};
use super::{Checkpoint, StoredTensor, StoredType};
use crate::quant::blocks::{self, BlockShape, Dequantize, GlobalRule, ScaleFormat, Scales, Scheme};
use crate::{CastOptions, DType, Error, Plan, Result};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use zerocopy::IntoBytes;

/// Elements decoded per run of blocks (256 KiB of float32, in the core's L2 cache).
const RUN_ELEMENTS: usize = 1 << 16;

/// Where a block keeps its codes and scales, as `from_bytes` reads it.
struct BlockLayout {
    per_block: usize,
    block_bytes: usize,
    /// Per element of a block: the byte holding its code, the shift to the code's low bit, and
    /// the index of its scale in the block.
    codes: Vec<(usize, u32, usize)>,
    /// The element code's bits.
    mask: u8,
    /// Per scale of a block: its code's bytes, each with the shift of its low bit in the code.
    scales: Vec<Vec<(usize, u32)>>,
    /// Consecutive elements sharing a scale.
    per_scale: usize,
    /// For 4-bit codes whose bytes each hold two elements under one scale: per such byte, the
    /// byte, the elements of its low and high nibble, and their scale's index.
    byte_pairs: Option<Vec<(usize, usize, usize, usize)>>,
}

impl BlockLayout {
    fn scale_code(&self, block: &[u8], k: usize) -> usize {
        self.scales[k].iter().fold(0, |code, &(p, shift)| code | usize::from(block[p]) << shift)
    }
}

/// The element codes and scale codes `from_bytes` reads from one block.
fn read_block(scheme: &Scheme, per_block: usize, block: &[u8]) -> Result<Option<(Vec<u8>, Vec<u32>)>> {
    let q = blocks::from_bytes(block, scheme, &[per_block], -1)?;
    let scales = match q.scales {
        Scales::Codes(c) => c.into_iter().map(u32::from).collect(),
        Scales::Float16(h) => h.into_iter().map(u32::from).collect(),
        _ => return Ok(None),
    };
    Ok(Some((q.elements, scales)))
}

/// Probes one bit of the block at a time: each must land in exactly one bit of one element
/// code or one scale code, each code's bits must come from one byte (an element) or whole bytes
/// (a scale), and every code bit must be reached. `None` when the block is not of that shape.
fn probe_layout(scheme: &Scheme, per_block: usize, block_bytes: usize) -> Result<Option<BlockLayout>> {
    let bits = match scheme.recipe().element.bits() {
        Some(b @ (4 | 8)) => b,
        _ => return Ok(None),
    };
    let per_scale = match scheme.recipe().block {
        BlockShape::Row(n) if n > 0 && per_block % n == 0 => n,
        _ => return Ok(None),
    };
    let zero = vec![0u8; block_bytes];
    let Some((e0, s0)) = read_block(scheme, per_block, &zero)? else { return Ok(None) };
    if e0.iter().any(|&c| c != 0) || s0.iter().any(|&c| c != 0) || s0.len() * per_scale != per_block {
        return Ok(None);
    }
    let scale_bits = match scheme.recipe().scale {
        ScaleFormat::Float16 | ScaleFormat::GgmlFloat16 => 16,
        ScaleFormat::E8M0 | ScaleFormat::E4M3 | ScaleFormat::GgmlUe4m3 => 8,
        _ => return Ok(None),
    };
    // (byte, bit) of every code bit found, per element and per scale.
    let mut element_bits: Vec<Vec<(usize, u32, u32)>> = vec![Vec::new(); per_block];
    let mut scale_pieces: Vec<Vec<(usize, u32, u32)>> = vec![Vec::new(); s0.len()];
    for p in 0..block_bytes {
        for bit in 0..8u32 {
            let mut block = zero.clone();
            block[p] = 1 << bit;
            let Some((e, s)) = read_block(scheme, per_block, &block)? else { return Ok(None) };
            let changed_elements: Vec<usize> = (0..per_block).filter(|&j| e[j] != 0).collect();
            let changed_scales: Vec<usize> = (0..s.len()).filter(|&k| s[k] != 0).collect();
            match (changed_elements.as_slice(), changed_scales.as_slice()) {
                (&[j], []) if e[j].is_power_of_two() => element_bits[j].push((p, bit, e[j].trailing_zeros())),
                ([], &[k]) if s[k].is_power_of_two() => scale_pieces[k].push((p, bit, s[k].trailing_zeros())),
                _ => return Ok(None),
            }
        }
    }
    // An element: `bits` bits of one byte, in order.
    let mut codes = Vec::with_capacity(per_block);
    for found in &element_bits {
        let Some(&(p, bit, to)) = found.first() else { return Ok(None) };
        let shift = bit - to;
        let in_order = found.len() == bits as usize
            && found.iter().all(|&(q, b, t)| q == p && b >= t && b - t == shift)
            && (0..bits).all(|t| found.iter().any(|&(_, _, x)| x == t));
        if !in_order || bit < to {
            return Ok(None);
        }
        codes.push((p, shift, codes.len() / per_scale));
    }
    // A scale: whole bytes, each at a byte boundary of the code.
    let mut scales = Vec::with_capacity(s0.len());
    for found in &scale_pieces {
        let mut bytes: Vec<(usize, u32)> = Vec::new();
        for &(p, bit, to) in found {
            if to < bit || (to - bit) % 8 != 0 {
                return Ok(None);
            }
            if !bytes.contains(&(p, to - bit)) {
                bytes.push((p, to - bit));
            }
        }
        let whole = found.len() == scale_bits as usize
            && bytes.len() * 8 == scale_bits as usize
            && bytes.iter().all(|&(p, shift)| found.iter().filter(|&&(q, b, t)| q == p && t - b == shift).count() == 8);
        if !whole {
            return Ok(None);
        }
        scales.push(bytes);
    }
    let mask = ((1u16 << bits) - 1) as u8;
    let byte_pairs = (bits == 4).then(|| byte_pairs(&codes, block_bytes)).flatten();
    Ok(Some(BlockLayout { per_block, block_bytes, codes, mask, scales, per_scale, byte_pairs }))
}

/// The code bytes of a block of 4-bit codes as (byte, low element, high element, scale), when
/// every byte holding codes holds two, of elements under the same scale.
fn byte_pairs(codes: &[(usize, u32, usize)], block_bytes: usize) -> Option<Vec<(usize, usize, usize, usize)>> {
    let mut halves: Vec<[Option<(usize, usize)>; 2]> = vec![[None, None]; block_bytes];
    for (j, &(p, shift, k)) in codes.iter().enumerate() {
        let half = match shift {
            0 => 0,
            4 => 1,
            _ => return None,
        };
        halves[p][half] = Some((j, k));
    }
    let mut pairs = Vec::new();
    for (p, h) in halves.iter().enumerate() {
        match *h {
            [Some((lo, k)), Some((hi, k2))] if k == k2 => pairs.push((p, lo, hi, k)),
            [None, None] => {}
            _ => return None,
        }
    }
    Some(pairs)
}

/// How a run's values are found.
enum Values {
    /// The output bits of the two elements of code byte `b` under scale code `s`, low nibble
    /// first, at `s * 256 + b`: 4-byte outputs.
    Wide(Vec<[u32; 2]>),
    /// As `Wide`, 2-byte outputs (bfloat16, float16).
    Narrow(Vec<[u16; 2]>),
    /// Element values under a unit scale times scale values under a unit element, in float32,
    /// converted by `plan` when the output is not float32.
    Products { elements: Vec<f32>, scales: Arc<Vec<f32>>, plan: Option<Box<Plan>> },
}

/// A GGUF tensor the fast path decodes.
pub(super) struct GgmlWeight<'a> {
    tensor: &'a StoredTensor,
    layout: BlockLayout,
    values: Values,
}

/// Every scale code's value under an element of value 1, per scheme (65536 float16 codes take a
/// probe of 2 Mi elements: made once per process).
fn unit_element_scales(scheme: &Scheme, per_scale: usize, unit: u8) -> Result<Arc<Vec<f32>>> {
    /// Per scheme name, its table.
    type Made = Vec<(String, Arc<Vec<f32>>)>;
    static MADE: OnceLock<Mutex<Made>> = OnceLock::new();
    let made = MADE.get_or_init(|| Mutex::new(Vec::new()));
    // Entries are pushed whole, after their table is made: a panic elsewhere while the lock was
    // held leaves the cache as valid as before, so a poisoned lock is used as it is.
    let cache = || made.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((_, v)) = cache().iter().find(|(n, _)| n == scheme.name()) {
        return Ok(Arc::clone(v));
    }
    let count = 1usize << 16;
    let mut elements = vec![0u8; count * per_scale];
    for k in 0..count {
        elements[k * per_scale] = unit;
    }
    let scales = Scales::Float16((0..count).map(|s| s as u16).collect());
    let values = blocks::from_arrays(elements, &[count * per_scale], scales, scheme, -1, None)?.dequantize()?;
    let table = Arc::new((0..count).map(|k| values[k * per_scale]).collect::<Vec<f32>>());
    cache().push((scheme.name().to_string(), Arc::clone(&table)));
    Ok(table)
}

/// The fast path for a GGUF tensor of `scheme` decoded to `target`, or `None`.
pub(super) fn fast_ggml<'a>(
    tensor: &'a StoredTensor,
    scheme: &Scheme,
    target: DType,
) -> Result<Option<GgmlWeight<'a>>> {
    let StoredType::Ggml(ggml) = tensor.stored else { return Ok(None) };
    let recipe = scheme.recipe();
    if recipe.global != GlobalRule::None || !matches!(target, DType::Float | DType::Bfloat16 | DType::Float16) {
        return Ok(None);
    }
    let (per_block, block_bytes) = ggml.block();
    if per_block == 0 || tensor.len % block_bytes as u64 != 0 {
        return Ok(None);
    }
    let Some(layout) = probe_layout(scheme, per_block, block_bytes)? else { return Ok(None) };
    let codes = usize::from(layout.mask) + 1;
    let plan = Plan::new(DType::Float, target, &CastOptions::default())?;
    let values = match recipe.scale {
        ScaleFormat::Float16 | ScaleFormat::GgmlFloat16 => {
            if !matches!(recipe.dequantize, Dequantize::Multiply | Dequantize::OffsetNibble) {
                return Ok(None);
            }
            let group = codes.div_ceil(layout.per_scale) * layout.per_scale;
            let all: Vec<u8> = (0..group).map(|c| (c % codes) as u8).collect();
            let one = half::f16::ONE.to_bits();
            let unit = Scales::Float16(vec![one; group / layout.per_scale]);
            let elements = blocks::from_arrays(all, &[group], unit, scheme, -1, None)?.dequantize()?[..codes].to_vec();
            let Some(unit_code) = elements.iter().position(|&v| v == 1.0) else { return Ok(None) };
            let scales = unit_element_scales(scheme, layout.per_scale, unit_code as u8)?;
            Values::Products { elements, scales, plan: (target != DType::Float).then(|| Box::new(plan)) }
        }
        _ => {
            if layout.byte_pairs.is_none() || codes != 16 {
                return Ok(None);
            }
            let table = code_table(scheme, layout.per_scale, codes, None)?;
            if target == DType::Float {
                Values::Wide(pair_table(&table.iter().map(|v| v.to_bits()).collect::<Vec<_>>()))
            } else {
                let mut narrow = vec![0u16; table.len()];
                plan.run(table.as_bytes(), narrow.as_mut_bytes(), table.len())?;
                Values::Narrow(pair_table(&narrow))
            }
        }
    };
    Ok(Some(GgmlWeight { tensor, layout, values }))
}

/// Decodes whole blocks of 4-bit codes with a table of the two values of every (scale code,
/// code byte).
fn lookups<T: Copy>(
    layout: &BlockLayout,
    pairs: &[(usize, usize, usize, usize)],
    table: &[[T; 2]],
    bytes: &[u8],
    dst: &mut [T],
) {
    let mut scale = [0usize; 16];
    for (block, outs) in bytes.chunks_exact(layout.block_bytes).zip(dst.chunks_exact_mut(layout.per_block)) {
        for (k, s) in scale.iter_mut().enumerate().take(layout.scales.len()) {
            *s = layout.scale_code(block, k) * 256;
        }
        for &(p, lo, hi, k) in pairs {
            let [a, b] = table[scale[k] + usize::from(block[p])];
            outs[lo] = a;
            outs[hi] = b;
        }
    }
}

fn products(layout: &BlockLayout, elements: &[f32], scales: &[f32], bytes: &[u8], dst: &mut [u32]) {
    let mut scale = [0f32; 16];
    for (block, outs) in bytes.chunks_exact(layout.block_bytes).zip(dst.chunks_exact_mut(layout.per_block)) {
        for (k, s) in scale.iter_mut().enumerate().take(layout.scales.len()) {
            *s = scales[layout.scale_code(block, k)];
        }
        if let Some(pairs) = &layout.byte_pairs {
            for &(p, lo, hi, k) in pairs {
                let b = block[p];
                outs[lo] = (elements[usize::from(b & 15)] * scale[k]).to_bits();
                outs[hi] = (elements[usize::from(b >> 4)] * scale[k]).to_bits();
            }
        } else {
            for (o, &(p, shift, k)) in outs.iter_mut().zip(&layout.codes) {
                let c = usize::from((block[p] >> shift) & layout.mask);
                *o = (elements[c] * scale[k]).to_bits();
            }
        }
    }
}

impl GgmlWeight<'_> {
    /// Calls `out` with the tensor's values in the output dtype, a run of blocks at a time.
    pub(super) fn run(&self, ckpt: &Checkpoint, out: &mut dyn FnMut(&[u8]) -> Result<()>) -> Result<()> {
        let layout = &self.layout;
        let pairs = layout.byte_pairs.as_deref().unwrap_or_default();
        if layout.scales.len() > 16 {
            return Err(Error::TooLarge { what: format!("{} scales in a ggml block", layout.scales.len()) });
        }
        let run_blocks = (RUN_ELEMENTS / layout.per_block).max(1);
        let total_blocks = (self.tensor.len / layout.block_bytes as u64) as usize;
        let (mut bytes, mut wide, mut narrow) = (Vec::<u8>::new(), Vec::<u32>::new(), Vec::<u16>::new());
        let mut b0 = 0;
        while b0 < total_blocks {
            let b1 = (b0 + run_blocks).min(total_blocks);
            let raw = fill(&mut bytes, (b1 - b0) * layout.block_bytes)?;
            ckpt.read_at(self.tensor, (b0 * layout.block_bytes) as u64, raw)?;
            let count = (b1 - b0) * layout.per_block;
            match &self.values {
                Values::Wide(table) => {
                    let dst = fill(&mut wide, count)?;
                    lookups(layout, pairs, table, raw, dst);
                    out(dst.as_bytes())?;
                }
                Values::Narrow(table) => {
                    let dst = fill(&mut narrow, count)?;
                    lookups(layout, pairs, table, raw, dst);
                    out(dst.as_bytes())?;
                }
                Values::Products { elements, scales, plan } => {
                    let dst = fill(&mut wide, count)?;
                    products(layout, elements, scales, raw, dst);
                    match plan {
                        None => out(dst.as_bytes())?,
                        Some(plan) => {
                            let converted = fill(&mut narrow, count)?;
                            plan.run(dst.as_bytes(), converted.as_mut_bytes(), count)?;
                            out(converted.as_bytes())?;
                        }
                    }
                }
            }
            b0 = b1;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    //! The ggml fast path against the general path (`quant::blocks` dequantize), bit for bit,
    //! to every output dtype: every element code, every scale code (all 256 one-byte codes; all
    //! 65536 float16 codes, NaN, infinities and subnormals among them), in files whose bytes
    //! `quant::blocks::to_bytes` lays out.

    use super::super::decode::Path;
    use super::super::tiles::tests::{bytes, decoded};
    use super::super::{recognise, write_gguf, GgmlType, GgufTensor};
    use super::*;

    #[test]
    fn every_ggml_block_type_decodes_as_the_general_path() {
        for (name, scale_codes) in [("Q8_0", 1usize << 16), ("Q4_0", 1 << 16), ("MXFP4", 256), ("NVFP4", 256)] {
            let ggml = GgmlType::from_name(name).unwrap();
            let scheme = Scheme::parse(&format!("ggml:{}", name.to_ascii_lowercase())).unwrap();
            let BlockShape::Row(per_scale) = scheme.recipe().block else { panic!("{name}: row blocks") };
            let (per_block, _) = ggml.block();
            // Every scale code once at least, in blocks of rows of 4 ggml blocks.
            let cols = 4 * per_block;
            let rows = (scale_codes * per_scale).div_ceil(cols);
            let n = rows * cols;
            let bits = scheme.recipe().element.bits().unwrap();
            let codes: Vec<u8> = bytes(7, n).into_iter().map(|b| b >> (8 - bits)).collect();
            let count = n / per_scale;
            let scales = if scale_codes == 256 {
                Scales::Codes((0..count).map(|k| k as u8).collect())
            } else {
                Scales::Float16((0..count).map(|k| (k * 40503) as u16).collect())
            };
            let q = blocks::from_arrays(codes, &[rows, cols], scales, &scheme, -1, None).unwrap();
            let raw = q.to_bytes().unwrap();
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("t.gguf");
            let tensor = GgufTensor { name: "blk.0.w.weight".into(), ggml, shape: vec![rows, cols] };
            write_gguf(&path, &[tensor], &[], 32, |_, out| {
                out.write_all(&raw).map_err(|e| Error::io(std::path::Path::new("test"), e))
            })
            .unwrap();
            let ckpt = Checkpoint::open(&path).unwrap();
            let weights = recognise(&ckpt);
            let w = &weights[0];
            let t = ckpt.tensor(&w.elements).unwrap();
            for float in [DType::Float, DType::Bfloat16, DType::Float16] {
                assert!(fast_ggml(t, &scheme, float).unwrap().is_some(), "{name} takes the fast path");
                let (fast, general) = (decoded(&ckpt, w, float, Path::Tiles), decoded(&ckpt, w, float, Path::General));
                assert_eq!(fast.len(), n * float.bits().unwrap() as usize / 8, "{name}");
                if let Some(k) = (0..fast.len()).find(|&k| fast[k] != general[k]) {
                    panic!("{name} to {float}: byte {k} differs ({} vs {})", fast[k], general[k]);
                }
            }
        }
    }
}
