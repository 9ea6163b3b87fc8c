//! GPTQ weights as GPTQModel writes them: its round-to-nearest quantizer (the scale and zero
//! point of each group from the group's range, `Quantizer.find_params`; the codes recomputed by
//! its packer from the dequantized weight) and its checkpoint tensors: `qweight` (int32 words of
//! codes along the input dimension), `qzeros` (int32 words of zero points along the output
//! dimension, v1 or v2), `scales` (float16) and `g_idx` (the group of each input column).

use super::affine::{self, Columns, Narrow};
use super::{take, Extras, Family, Options, Params, StoredTensor, Weight};
use crate::alloc_prelude::*;
use crate::dtype::DType;
use crate::error::{quoted, Error, Result};
use crate::packing;
use crate::quant::blocks::{Quantized, Scales, Scheme};

/// The row of `gptq:...`.
pub(super) const GPTQ: Family = Family {
    name: "gptq",
    grammar: "gptq:int4|int8[,group=N|-1][,sym|asym][,actorder][,zeros=v1|v2]",
    source: "GPTQModel 7.7.0 (ModelCloud) round-to-nearest: quantization/quantizer.py Quantizer.find_params \
             and quantization/rtn.py RTN.quantize, nn_modules/qlinear PackableQuantLinear.pack_block (codes \
             round((w + z*s) / s) in float32 from the dequantized weight), utils/model.py \
             convert_gptq_v2_to_v1_format_module (zeros=v1, the default), TorchLinear.dequantize_weight \
             (float16); actorder: find_params over each g_idx group; defaults group=128, sym, zeros=v1; \
             checked by scripts/crosscheck_gptq.py and tests/integer_gptq.rs",
    parse,
    quantize,
    dequantize,
    storage,
    from_storage,
};

/// GPTQModel's default group size.
const DEFAULT_GROUP: usize = 128;

/// The group sizes GPTQModel's TorchLinear takes (`SUPPORTS_GROUP_SIZE`, with -1).
const GROUPS: [usize; 7] = [16, 32, 64, 128, 256, 512, 1024];

/// The codes of one 32-bit word (`qweight` and `qzeros` alike).
const WORD_BITS: usize = 32;

fn parse(format: &str, options: &mut Options<'_>) -> Result<Params> {
    let op = format!("scheme gptq:{format}");
    let bad = |message: String| Error::InvalidOp { op: op.clone(), message };
    let bits = match format {
        "int4" => 4,
        "int8" => 8,
        _ => return Err(bad(format!("{} is not a GPTQ format (int4, int8)", quoted(format)))),
    };
    let group = match take(options, "group") {
        None => Some(DEFAULT_GROUP),
        Some("-1") => None,
        Some(v) => match v.parse::<usize>() {
            Ok(n) if GROUPS.contains(&n) => Some(n),
            _ => {
                return Err(bad(format!(
                    "group={v}: TorchLinear takes 16, 32, 64, 128, 256, 512 or 1024 input columns, or -1 \
                     (one group per row)"
                )))
            }
        },
    };
    let sym = flag(&op, options, "sym")?;
    let asym = flag(&op, options, "asym")?;
    if sym && asym {
        return Err(bad("sym and asym exclude each other".into()));
    }
    let act_order = flag(&op, options, "actorder")?;
    let zeros = match take(options, "zeros") {
        None | Some("v1") => "v1",
        Some("v2") => "v2",
        Some(v) => return Err(bad(format!("zeros={v}: v1 (GPTQ checkpoints) or v2 (GPTQModel's own)"))),
    };
    Ok(Params { family: "gptq", bits, group, symmetric: !asym, act_order, choices: vec![("zeros", zeros)] })
}

/// Takes the flag `key` (`sym`, not `sym=...`).
fn flag(op: &str, options: &mut Options<'_>, key: &str) -> Result<bool> {
    match take(options, key) {
        None => Ok(false),
        Some("") => Ok(true),
        Some(v) => Err(Error::InvalidOp { op: op.to_string(), message: format!("{key} is a flag, not {key}={v}") }),
    }
}

/// The largest code.
fn max_code(p: &Params) -> u32 {
    (1 << p.bits) - 1
}

/// Groups per row and the group size; under actorder the group of each input column (`g_idx`
/// given, or GPTQModel's default `i // group`, kept as given), else `None`: runs of `i // group`.
fn grouping(
    op: &str,
    p: &Params,
    [rows, cols]: [usize; 2],
    given: Option<&[i32]>,
) -> Result<(usize, usize, Option<Vec<u32>>)> {
    let bad = |message: String| Error::InvalidOp { op: op.to_string(), message };
    if rows == 0 || cols == 0 {
        return Err(bad(format!("a {rows}x{cols} weight has no groups to quantize")));
    }
    let group = p.group.unwrap_or(cols);
    if cols % group != 0 {
        return Err(bad(format!("{cols} input columns are not a whole number of groups of {group}")));
    }
    let groups = cols / group;
    let Some(given) = given else {
        return Ok((groups, group, None));
    };
    if !p.act_order {
        return Err(bad("g_idx orders the groups under actorder: add ,actorder to the scheme".into()));
    }
    given
        .iter()
        .enumerate()
        .map(|(j, &g)| match usize::try_from(g) {
            Ok(g) if g < groups => Ok(g as u32),
            _ => Err(bad(format!("g_idx[{j}] = {g} is not a group of 0..{groups}"))),
        })
        .collect::<Result<Vec<u32>>>()
        .map(|of| (groups, group, Some(of)))
}

/// The columns' groups: `index`, else runs of `group`.
fn columns(group: usize, index: Option<&[u32]>) -> Columns<'_> {
    index.map_or(Columns::Runs(group), Columns::Index)
}

/// Quantizes as GPTQModel's RTN path: `find_params` per group in float32, the dequantized weight
/// `s * (clamp(round(x / s) + z, 0, maxq) - z)` cast to the input dtype, and the packer's codes
/// `clamp(round((w + z * s) / s), 0, maxq)` from it.
fn quantize(scheme: &Scheme, p: &Params, w: &Weight<'_>) -> Result<Quantized> {
    let op = format!("{} quantize", scheme.name());
    let (rows, cols) = (w.rows, w.cols);
    let (groups, group, index) = grouping(&op, p, [rows, cols], w.group_index)?;
    // actorder without a g_idx: GPTQModel's default, i // group, kept in the result.
    let index = if p.act_order { Some(index.unwrap_or_else(|| Columns::Runs(group).of(cols))) } else { index };
    let cols_of = columns(group, index.as_deref());
    let values = affine::widen(w)?;
    if let Some((r, c)) = affine::first_non_finite(&values, cols) {
        return Err(Error::InvalidOp {
            op,
            message: format!(
                "weight[{r}, {c}] is {}: GPTQModel's range gives a NaN scale (refused)",
                values[r * cols + c]
            ),
        });
    }
    let maxq = max_code(p) as f32;
    let mut narrow = Narrow::new(w.dtype)?;
    let mut codes = vec![0u8; rows * cols];
    let mut scales = Vec::with_capacity(rows * groups);
    let mut zeros = Vec::with_capacity(rows * groups);
    let (mut lo, mut hi) = (vec![0f32; groups], vec![0f32; groups]);
    let mut dequantized = vec![0f32; cols];
    for (row, (xs, codes)) in values.chunks_exact(cols).zip(codes.chunks_exact_mut(cols)).enumerate() {
        // torch.aminmax, then the minimum with 0 and the maximum with 0 (the values are finite).
        lo.iter_mut().for_each(|v| *v = 0.0);
        hi.iter_mut().for_each(|v| *v = 0.0);
        match &cols_of {
            Columns::Runs(group) => {
                for ((xs, lo), hi) in xs.chunks_exact(*group).zip(&mut lo).zip(&mut hi) {
                    *lo = xs.iter().fold(0f32, |m, &x| if x < m { x } else { m });
                    *hi = xs.iter().fold(0f32, |m, &x| if x > m { x } else { m });
                }
            }
            Columns::Index(index) => {
                for (&x, &g) in xs.iter().zip(index.iter()) {
                    let g = g as usize;
                    lo[g] = if x < lo[g] { x } else { lo[g] };
                    hi[g] = if x > hi[g] { x } else { hi[g] };
                }
            }
        }
        let first = scales.len();
        for g in 0..groups {
            let (s, z) = find_params(p, lo[g], hi[g], maxq);
            if s == 0.0 || !s.is_finite() {
                return Err(Error::InvalidOp {
                    op,
                    message: format!(
                        "row {row} group {g}: the scale (max - min) / {maxq} is {s} in float32 (refused: \
                         GPTQModel's two packers differ there, and an infinite scale makes NaN codes)"
                    ),
                });
            }
            scales.push(s);
            zeros.push(z);
        }
        let (row_scales, row_zeros) = (&scales[first..], &zeros[first..]);
        // Quantizer.quantize: s * (clamp(round(x / s) + z, 0, maxq) - z).
        let dequantize = |d: &mut f32, x: f32, s: f32, z: f32| {
            let q = (affine::round_half_even(x / s) + z).clamp(0.0, maxq);
            *d = s * (q - z);
        };
        // The packer: clamp(round((w + z * s) / s), 0, maxq), `z * s` in float32.
        let code = |c: &mut u8, d: f32, s: f32, zs: f32| {
            *c = affine::round_half_even((d + zs) / s).clamp(0.0, maxq) as u8;
        };
        match &cols_of {
            Columns::Runs(group) => {
                for (g, (ds, xs)) in dequantized.chunks_exact_mut(*group).zip(xs.chunks_exact(*group)).enumerate() {
                    let (s, z) = (row_scales[g], row_zeros[g]);
                    ds.iter_mut().zip(xs).for_each(|(d, &x)| dequantize(d, x, s, z));
                }
            }
            Columns::Index(index) => {
                for ((d, &x), &g) in dequantized.iter_mut().zip(xs).zip(index.iter()) {
                    dequantize(d, x, row_scales[g as usize], row_zeros[g as usize]);
                }
            }
        }
        // RTN hands the packer its result in the weight's dtype.
        if let Some(n) = narrow.as_mut() {
            n.round(&mut dequantized)?;
        }
        match &cols_of {
            Columns::Runs(group) => {
                for (g, (cs, ds)) in codes.chunks_exact_mut(*group).zip(dequantized.chunks_exact(*group)).enumerate() {
                    let (s, z) = (row_scales[g], row_zeros[g]);
                    let zs = z * s;
                    cs.iter_mut().zip(ds).for_each(|(c, &d)| code(c, d, s, zs));
                }
            }
            Columns::Index(index) => {
                for ((c, &d), &g) in codes.iter_mut().zip(&dequantized).zip(index.iter()) {
                    let (s, z) = (row_scales[g as usize], row_zeros[g as usize]);
                    code(c, d, s, z * s);
                }
            }
        }
    }
    let half_scales = Narrow::new(DType::Float16)?.expect("float16 is narrow").codes(&scales)?;
    Ok(Quantized {
        scheme: scheme.clone(),
        shape: vec![rows, cols],
        axis: -1,
        elements: codes,
        scales: Scales::Float16(half_scales),
        global_scale: None,
        extras: Some(Box::new(Extras {
            zero_points: Some(zeros.iter().map(|&z| z as i32).collect()),
            group_index: index.map(|of| of.iter().map(|&g| g as i32).collect()),
            ..Extras::default()
        })),
    })
}

/// `Quantizer.find_params` of one group's range `lo..hi` (the minimum with 0 and the maximum
/// with 0): the float32 scale and the zero point.
fn find_params(p: &Params, mut lo: f32, mut hi: f32, maxq: f32) -> (f32, f32) {
    if p.symmetric {
        hi = hi.max(lo.abs());
        if lo < 0.0 {
            lo = -hi;
        }
    }
    // An empty range takes -1..1.
    let empty = if p.symmetric { hi == 0.0 } else { lo == 0.0 && hi == 0.0 };
    if empty {
        lo -= 1.0;
        hi += 1.0;
    }
    let s = (hi - lo) / maxq;
    let z = if p.symmetric { (maxq + 1.0) / 2.0 } else { affine::round_half_even(-lo / s) };
    (s, z)
}

/// The parts of `q` this row reads, checked: (rows, cols), groups, the group of each column, the
/// float16 scales and zero points (rows x groups).
struct Parts<'a> {
    rows: usize,
    cols: usize,
    groups: usize,
    group: usize,
    index: Option<Vec<u32>>,
    scales: &'a [u16],
    zeros: &'a [i32],
}

fn parts<'a>(op: &str, p: &Params, q: &'a Quantized) -> Result<Parts<'a>> {
    let bad = |message: String| Error::InvalidOp { op: op.to_string(), message };
    let [rows, cols] = q.shape[..] else {
        return Err(bad(format!("a weight of shape {} is not a matrix", crate::error::shown_shape(&q.shape))));
    };
    let extras = q.extras.as_deref();
    let (groups, group, index) = grouping(op, p, [rows, cols], extras.and_then(|e| e.group_index.as_deref()))?;
    let n = rows.checked_mul(cols).ok_or_else(|| Error::TooLarge { what: format!("a {rows}x{cols} weight") })?;
    if q.elements.len() != n {
        return Err(Error::ShapeMismatch { shape: q.shape.clone(), elements: n, actual: q.elements.len() });
    }
    let maxq = max_code(p);
    if let Some(at) = q.elements.iter().position(|&c| u32::from(c) > maxq) {
        return Err(bad(format!("element {at} holds code {}, above {maxq}", q.elements[at])));
    }
    let Scales::Float16(scales) = &q.scales else {
        return Err(bad("GPTQ's scales are float16".into()));
    };
    let zeros = extras.and_then(|e| e.zero_points.as_deref()).ok_or_else(|| bad("no zero points".into()))?;
    if scales.len() != rows * groups || zeros.len() != rows * groups {
        return Err(bad(format!(
            "{} scales and {} zero points for {rows} rows of {groups} groups",
            scales.len(),
            zeros.len()
        )));
    }
    if let Some(at) = zeros.iter().position(|&z| !(0..=maxq as i32).contains(&z)) {
        return Err(bad(format!("zero point {at} is {}, outside 0..={maxq}", zeros[at])));
    }
    Ok(Parts { rows, cols, groups, group, index, scales, zeros })
}

/// TorchLinear.dequantize_weight: `scales[g_idx] * (q - zeros[g_idx])` in float16, as `dtype`.
fn dequantize(p: &Params, q: &Quantized, dtype: DType) -> Result<Vec<u8>> {
    let parts = parts(&format!("{} dequantize", q.scheme.name()), p, q)?;
    let levels = 1usize << p.bits;
    let tables = affine::level_tables(parts.scales, parts.zeros, levels, dtype)?;
    let width = if dtype == DType::Float { 4 } else { 2 };
    let cols_of = columns(parts.group, parts.index.as_deref());
    Ok(affine::apply_tables(&tables, levels, width, &q.elements, parts.cols, parts.groups, &cols_of))
}

/// zeros=v1 stores every field less one: GPTQModel subtracts a one in each field from the
/// whole word, so a zero point of 0 borrows from the next field (and loading adds it back).
fn v1_offset(bits: u32) -> u32 {
    (0..WORD_BITS as u32 / bits).map(|j| 1u32 << (bits * j)).sum()
}

/// Codes of `bits` packed in 32-bit words, the first in the low bits: 4-bit codes as the crate
/// packs nibbles (low nibble first, little-endian words hold them in that order), 8-bit codes as
/// bytes.
fn pack_words(bits: u32, codes: &[u8]) -> Result<Vec<u8>> {
    if bits == 8 {
        return Ok(codes.to_vec());
    }
    packing::pack_bits(bits, &codes.iter().map(|&c| u64::from(c)).collect::<Vec<_>>())
}

/// The reverse of [`pack_words`]: `n` codes.
fn unpack_words(what: &'static str, bits: u32, raw: &[u8], n: usize) -> Result<Vec<u8>> {
    if bits == 8 {
        return Ok(raw.to_vec());
    }
    Ok(packing::unpack_bits(what, bits, raw, n)?.into_iter().map(|c| c as u8).collect())
}

fn i32_tensor(name: &str, shape: Vec<usize>, data: Vec<u8>) -> StoredTensor {
    StoredTensor { name: name.to_string(), dtype: DType::Int32, shape, data }
}

/// `qweight` (cols / per word x rows), `qzeros` (groups x rows / per word), `scales` (groups x
/// rows, float16) and `g_idx` (cols), as GPTQModel's TorchLinear holds them.
fn storage(p: &Params, q: &Quantized) -> Result<Vec<StoredTensor>> {
    let op = format!("{} storage", q.scheme.name());
    let Parts { rows, cols, groups, group, index, scales, zeros } = parts(&op, p, q)?;
    let group_of = columns(group, index.as_deref()).of(cols);
    let per_word = WORD_BITS / p.bits as usize;
    let word_rows = cols.div_ceil(per_word);
    // A word row holds `per_word` input columns of every output row; a partial last word is
    // filled with zero codes.
    let mut qweight = Vec::with_capacity(word_rows * rows * 4);
    let mut sequence = vec![0u8; rows * per_word];
    for r in 0..word_rows {
        for (o, fields) in sequence.chunks_exact_mut(per_word).enumerate() {
            for (j, f) in fields.iter_mut().enumerate() {
                let col = r * per_word + j;
                *f = if col < cols { q.elements[o * cols + col] } else { 0 };
            }
        }
        qweight.extend(pack_words(p.bits, &sequence)?);
    }
    let zero_words = rows.div_ceil(per_word);
    let offset = if p.choice("zeros") == Some("v2") { 0 } else { v1_offset(p.bits) };
    let mut qzeros = Vec::with_capacity(groups * zero_words * 4);
    let mut zero_row = vec![0u8; zero_words * per_word];
    for g in 0..groups {
        for (o, z) in zero_row.iter_mut().take(rows).enumerate() {
            *z = zeros[o * groups + g] as u8;
        }
        let packed = pack_words(p.bits, &zero_row)?;
        qzeros.extend(affine::word_bytes(affine::words(&packed).map(|w| w.wrapping_sub(offset))));
    }
    let mut stored_scales = Vec::with_capacity(groups * rows * 2);
    for g in 0..groups {
        (0..rows).for_each(|o| stored_scales.extend_from_slice(&scales[o * groups + g].to_le_bytes()));
    }
    let g_idx = group_of.iter().flat_map(|&g| (g as i32).to_le_bytes()).collect();
    Ok(vec![
        i32_tensor("qweight", vec![word_rows, rows], qweight),
        i32_tensor("qzeros", vec![groups, zero_words], qzeros),
        StoredTensor { name: "scales".into(), dtype: DType::Float16, shape: vec![groups, rows], data: stored_scales },
        i32_tensor("g_idx", vec![cols], g_idx),
    ])
}

/// The reverse of [`storage`] (zeros=v1: every word plus a one in each field, as GPTQModel
/// loads v1 checkpoints).
fn from_storage(scheme: &Scheme, p: &Params, tensors: &[StoredTensor], shape: [usize; 2]) -> Result<Quantized> {
    let op = format!("{} from_storage", scheme.name());
    let [rows, cols] = shape;
    affine::only(&op, tensors, &["qweight", "qzeros", "scales", "g_idx"])?;
    let g_idx_tensor = affine::stored(&op, tensors, "g_idx", DType::Int32, &[cols])?;
    let g_idx: Vec<i32> = affine::words(&g_idx_tensor.data).map(|w| w as i32).collect();
    let group = p.group.unwrap_or(cols);
    let default = cols > 0 && group <= cols && g_idx.iter().enumerate().all(|(j, &g)| g as i64 == (j / group) as i64);
    let given = (p.act_order || !default).then_some(&g_idx[..]);
    let (groups, _, _) = grouping(&op, p, [rows, cols], given)?;
    let per_word = WORD_BITS / p.bits as usize;
    let (word_rows, zero_words) = (cols.div_ceil(per_word), rows.div_ceil(per_word));
    let qweight = affine::stored(&op, tensors, "qweight", DType::Int32, &[word_rows, rows])?;
    let qzeros = affine::stored(&op, tensors, "qzeros", DType::Int32, &[groups, zero_words])?;
    let stored_scales = affine::stored(&op, tensors, "scales", DType::Float16, &[groups, rows])?;

    let mut elements = vec![0u8; rows * cols];
    for (r, raw) in qweight.data.chunks_exact(rows * 4).enumerate() {
        let fields = unpack_words("qweight", p.bits, raw, rows * per_word)?;
        for (o, word) in fields.chunks_exact(per_word).enumerate() {
            for (j, &c) in word.iter().enumerate() {
                let col = r * per_word + j;
                if col < cols {
                    elements[o * cols + col] = c;
                }
            }
        }
    }
    let offset = if p.choice("zeros") == Some("v2") { 0 } else { v1_offset(p.bits) };
    let mut zeros = vec![0i32; rows * groups];
    for (g, raw) in qzeros.data.chunks_exact(zero_words * 4).enumerate() {
        let words = affine::word_bytes(affine::words(raw).map(|w| w.wrapping_add(offset)));
        let fields = unpack_words("qzeros", p.bits, &words, zero_words * per_word)?;
        for (o, &z) in fields.iter().take(rows).enumerate() {
            zeros[o * groups + g] = i32::from(z);
        }
    }
    let scales = affine::scales_by_row(stored_scales, rows, groups);
    Ok(Quantized {
        scheme: scheme.clone(),
        shape: vec![rows, cols],
        axis: -1,
        elements,
        scales: Scales::Float16(scales),
        global_scale: None,
        extras: Some(Box::new(Extras {
            zero_points: Some(zeros),
            group_index: p.act_order.then_some(g_idx),
            ..Extras::default()
        })),
    })
}
