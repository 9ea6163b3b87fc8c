//! AWQ weights as AutoAWQ writes them: its round-to-nearest quantizer with a zero point
//! (`AwqQuantizer.pseudo_quantize_tensor` on the float16 weight; the activation-aware scale
//! search before it is not part of the row) and its GEMM layout: `qweight` (int32 words of 8 codes
//! along the output dimension, interleaved), `qzeros` (the zero points packed the same way) and
//! `scales` (float16), each input row a row of words.

use super::affine::{self, Narrow};
use super::{take, Extras, Family, Options, Params, StoredTensor, Weight};
use crate::alloc_prelude::*;
use crate::dtype::DType;
use crate::error::{quoted, Error, Result};
use crate::packing;
use crate::quant::blocks::{Quantized, Scales, Scheme};

/// The row of `awq:...`.
pub(super) const AWQ: Family = Family {
    name: "awq",
    grammar: "awq:int4[,group=N]",
    source: "AutoAWQ 0.2.9 (casper-hansen): awq/quantize/quantizer.py AwqQuantizer._apply_quant \
             (the weight as float16) and pseudo_quantize_tensor (zero_point=True, float16 arithmetic), \
             awq/modules/linear/gemm.py WQLinear_GEMM.from_linear (codes round((w + z*s) / s) in float16, \
             order_map [0, 2, 4, 6, 1, 3, 5, 7]), awq/utils/packing_utils.py dequantize_gemm (float16); \
             default group=128; checked by scripts/crosscheck_awq.py and tests/integer_awq.rs",
    parse,
    quantize,
    dequantize,
    storage,
    from_storage,
};

/// AutoAWQ's default `q_group_size`.
const DEFAULT_GROUP: usize = 128;

/// Output columns per 32-bit word.
const PER_WORD: usize = 8;

/// from_linear packs `out_features // 32 * 4` words per input row: whole blocks of 32 rows.
const ROW_MULTIPLE: usize = 32;

/// WQLinear_GEMM's `order_map`: field `k` of a word holds output column `8 * word + ORDER[k]`.
const ORDER: [usize; PER_WORD] = [0, 2, 4, 6, 1, 3, 5, 7];

/// The largest code (4 bits, zero point on).
const MAX_CODE: f32 = 15.0;

/// pseudo_quantize_tensor's floor of a group's range, `clamp(min=1e-5)`.
const MIN_RANGE: f32 = 1e-5;

fn parse(format: &str, options: &mut Options<'_>) -> Result<Params> {
    let bad = |message: String| Error::InvalidOp { op: format!("scheme awq:{format}"), message };
    if format != "int4" {
        return Err(bad(format!("{} is not an AutoAWQ GEMM format (int4)", quoted(format))));
    }
    let group = match take(options, "group") {
        None => DEFAULT_GROUP,
        Some(v) => match v.parse::<usize>() {
            Ok(n) if n > 0 => n,
            _ => return Err(bad(format!("group={v}: a positive number of input columns"))),
        },
    };
    Ok(Params { family: "awq", bits: 4, group: Some(group), symmetric: false, act_order: false, choices: Vec::new() })
}

/// The weight's shape checked against the layout: (rows, cols, groups).
fn geometry(op: &str, p: &Params, rows: usize, cols: usize) -> Result<usize> {
    let bad = |message: String| Error::InvalidOp { op: op.to_string(), message };
    let group = p.group.unwrap_or(DEFAULT_GROUP);
    if rows == 0 || cols == 0 {
        return Err(bad(format!("a {rows}x{cols} weight has no groups to quantize")));
    }
    if cols % group != 0 {
        return Err(bad(format!("{cols} input columns are not a whole number of groups of {group}")));
    }
    if rows % ROW_MULTIPLE != 0 {
        return Err(bad(format!(
            "{rows} output rows are not a multiple of {ROW_MULTIPLE} (AutoAWQ's from_linear packs whole \
             blocks of 32 and drops the rest)"
        )));
    }
    Ok(cols / group)
}

/// Quantizes as AutoAWQ: the weight as float16, each group's scale `clamp(max - min, 1e-5) / 15`
/// and zero `clamp(-round(min / s), 0, 15)`, the dequantized weight
/// `(clamp(round(w / s) + z, 0, 15) - z) * s`, and WQLinear_GEMM's codes `round((w + z * s) / s)`
/// from it, every operation in float16.
fn quantize(scheme: &Scheme, p: &Params, w: &Weight<'_>) -> Result<Quantized> {
    let op = format!("{} quantize", scheme.name());
    let (rows, cols) = (w.rows, w.cols);
    if w.group_index.is_some() {
        return Err(Error::InvalidOp { op, message: "AWQ has no g_idx".into() });
    }
    let groups = geometry(&op, p, rows, cols)?;
    let group = cols / groups;
    let mut half = Narrow::new(DType::Float16)?.expect("float16 is narrow");
    // `linear_layer.half()`.
    let mut values = affine::widen(w)?;
    half.round(&mut values)?;
    if let Some((r, c)) = affine::first_non_finite(&values, cols) {
        return Err(Error::InvalidOp {
            op,
            message: format!(
                "weight[{r}, {c}] is {} in float16 (refused: AutoAWQ asserts the weight has no NaN)",
                values[r * cols + c]
            ),
        });
    }
    // The groups' ranges, scales and zero points, each step rounded to float16.
    let (mut lo, mut hi) = (Vec::with_capacity(rows * groups), Vec::with_capacity(rows * groups));
    for g in values.chunks_exact(group) {
        lo.push(g.iter().copied().fold(f32::INFINITY, f32::min));
        hi.push(g.iter().copied().fold(f32::NEG_INFINITY, f32::max));
    }
    let mut range: Vec<f32> = hi.iter().zip(&lo).map(|(h, l)| h - l).collect();
    half.round(&mut range)?;
    if let Some(at) = range.iter().position(|r| r.is_infinite()) {
        return Err(Error::InvalidOp {
            op,
            message: format!(
                "row {} group {}: max - min overflows float16 (refused: AutoAWQ's weight turns NaN and it asserts)",
                at / groups,
                at % groups
            ),
        });
    }
    let mut floor = [MIN_RANGE];
    half.round(&mut floor)?;
    let mut scales: Vec<f32> = range.iter().map(|&r| if r < MIN_RANGE { floor[0] } else { r } / MAX_CODE).collect();
    half.round(&mut scales)?;
    let mut zeros: Vec<f32> = lo.iter().zip(&scales).map(|(l, s)| l / s).collect();
    half.round(&mut zeros)?;
    zeros.iter_mut().for_each(|z| *z = (-affine::round_half_even(*z)).clamp(0.0, MAX_CODE));
    let mut scale_zeros: Vec<f32> = zeros.iter().zip(&scales).map(|(z, s)| z * s).collect();
    half.round(&mut scale_zeros)?;

    let mut codes = vec![0u8; rows * cols];
    let mut step = vec![0f32; cols];
    for (row, (xs, codes)) in values.chunks_exact(cols).zip(codes.chunks_exact_mut(cols)).enumerate() {
        let at = row * groups;
        let (scales, zeros, scale_zeros) =
            (&scales[at..at + groups], &zeros[at..at + groups], &scale_zeros[at..at + groups]);
        // Each step over the row by groups, then rounded to float16.
        by_group(&mut step, group, |t, g, j| *t = xs[j] / scales[g]);
        half.round(&mut step)?;
        // The sum is exact in float16 wherever the clamp does not decide.
        by_group(&mut step, group, |t, g, _| {
            let q = (affine::round_half_even(*t) + zeros[g]).clamp(0.0, MAX_CODE);
            *t = (q - zeros[g]) * scales[g];
        });
        half.round(&mut step)?;
        by_group(&mut step, group, |t, g, _| *t += scale_zeros[g]);
        half.round(&mut step)?;
        by_group(&mut step, group, |t, g, _| *t /= scales[g]);
        half.round(&mut step)?;
        for (j, (c, t)) in codes.iter_mut().zip(&step).enumerate() {
            let code = affine::round_half_even(*t);
            if !(0.0..=MAX_CODE).contains(&code) {
                return Err(Error::InvalidOp {
                    op,
                    message: format!(
                        "weight[{row}, {j}]: the packer's code is {code}, outside 0..=15 (AutoAWQ would \
                         spill it into the neighbouring fields)"
                    ),
                });
            }
            *c = code as u8;
        }
    }
    Ok(Quantized {
        scheme: scheme.clone(),
        shape: vec![rows, cols],
        axis: -1,
        elements: codes,
        scales: Scales::Float16(half.codes(&scales)?),
        global_scale: None,
        extras: Some(Box::new(Extras {
            zero_points: Some(zeros.iter().map(|&z| z as i32).collect()),
            ..Extras::default()
        })),
    })
}

/// `f(value, group, column)` on every value of a row of groups of `group`.
#[inline(always)]
fn by_group(step: &mut [f32], group: usize, f: impl Fn(&mut f32, usize, usize)) {
    for (g, ts) in step.chunks_exact_mut(group).enumerate() {
        ts.iter_mut().enumerate().for_each(|(i, t)| f(t, g, g * group + i));
    }
}

/// `q`'s shape, groups, float16 scales and zero points (rows x groups), checked.
struct Parts<'a> {
    rows: usize,
    cols: usize,
    groups: usize,
    scales: &'a [u16],
    zeros: &'a [i32],
}

fn parts<'a>(op: &str, p: &Params, q: &'a Quantized) -> Result<Parts<'a>> {
    let bad = |message: String| Error::InvalidOp { op: op.to_string(), message };
    let [rows, cols] = q.shape[..] else {
        return Err(bad(format!("a weight of shape {} is not a matrix", crate::error::shown_shape(&q.shape))));
    };
    let groups = geometry(op, p, rows, cols)?;
    let n = rows.checked_mul(cols).ok_or_else(|| Error::TooLarge { what: format!("a {rows}x{cols} weight") })?;
    if q.elements.len() != n {
        return Err(Error::ShapeMismatch { shape: q.shape.clone(), elements: n, actual: q.elements.len() });
    }
    if let Some(at) = q.elements.iter().position(|&c| f32::from(c) > MAX_CODE) {
        return Err(bad(format!("element {at} holds code {}, above 15", q.elements[at])));
    }
    let Scales::Float16(scales) = &q.scales else {
        return Err(bad("AWQ's scales are float16".into()));
    };
    let zeros =
        q.extras.as_deref().and_then(|e| e.zero_points.as_deref()).ok_or_else(|| bad("no zero points".into()))?;
    if scales.len() != rows * groups || zeros.len() != rows * groups {
        return Err(bad(format!(
            "{} scales and {} zero points for {rows} rows of {groups} groups",
            scales.len(),
            zeros.len()
        )));
    }
    if let Some(at) = zeros.iter().position(|&z| !(0..=15).contains(&z)) {
        return Err(bad(format!("zero point {at} is {}, outside 0..=15", zeros[at])));
    }
    Ok(Parts { rows, cols, groups, scales, zeros })
}

/// dequantize_gemm: `(q - z) * scales` with float16 scales, as `dtype`.
fn dequantize(p: &Params, q: &Quantized, dtype: DType) -> Result<Vec<u8>> {
    let Parts { cols, groups, scales, zeros, .. } = parts(&format!("{} dequantize", q.scheme.name()), p, q)?;
    let tables = affine::level_tables(scales, zeros, 16, dtype)?;
    let width = if dtype == DType::Float { 4 } else { 2 };
    Ok(affine::apply_tables(&tables, 16, width, &q.elements, cols, groups, &affine::Columns::Runs(cols / groups)))
}

/// One row of words: `fields(out)` of every output column, in ORDER within each word.
fn packed_row(rows: usize, field: impl Fn(usize) -> u8) -> Result<Vec<u8>> {
    let sequence: Vec<u64> = (0..rows / PER_WORD)
        .flat_map(|w| ORDER.iter().map(move |&k| w * PER_WORD + k))
        .map(|o| u64::from(field(o)))
        .collect();
    packing::pack_bits(4, &sequence)
}

/// The output column of each field of a row of words (the reverse of [`packed_row`]).
fn row_fields(rows: usize) -> impl Iterator<Item = usize> {
    (0..rows / PER_WORD).flat_map(|w| ORDER.iter().map(move |&k| w * PER_WORD + k))
}

/// `qweight` (cols x rows / 8), `qzeros` (groups x rows / 8) and `scales` (groups x rows,
/// float16), as WQLinear_GEMM holds them.
fn storage(p: &Params, q: &Quantized) -> Result<Vec<StoredTensor>> {
    let op = format!("{} storage", q.scheme.name());
    let Parts { rows, cols, groups, scales, zeros } = parts(&op, p, q)?;
    let mut qweight = Vec::with_capacity(cols * rows / 2);
    for i in 0..cols {
        qweight.extend(packed_row(rows, |o| q.elements[o * cols + i])?);
    }
    let mut qzeros = Vec::with_capacity(groups * rows / 2);
    let mut stored_scales = Vec::with_capacity(groups * rows * 2);
    for g in 0..groups {
        qzeros.extend(packed_row(rows, |o| zeros[o * groups + g] as u8)?);
        (0..rows).for_each(|o| stored_scales.extend_from_slice(&scales[o * groups + g].to_le_bytes()));
    }
    let words = rows / PER_WORD;
    Ok(vec![
        StoredTensor { name: "qweight".into(), dtype: DType::Int32, shape: vec![cols, words], data: qweight },
        StoredTensor { name: "qzeros".into(), dtype: DType::Int32, shape: vec![groups, words], data: qzeros },
        StoredTensor { name: "scales".into(), dtype: DType::Float16, shape: vec![groups, rows], data: stored_scales },
    ])
}

/// The reverse of [`storage`].
fn from_storage(scheme: &Scheme, p: &Params, tensors: &[StoredTensor], shape: [usize; 2]) -> Result<Quantized> {
    let op = format!("{} from_storage", scheme.name());
    let [rows, cols] = shape;
    affine::only(&op, tensors, &["qweight", "qzeros", "scales"])?;
    let groups = geometry(&op, p, rows, cols)?;
    let words = rows / PER_WORD;
    let qweight = affine::stored(&op, tensors, "qweight", DType::Int32, &[cols, words])?;
    let qzeros = affine::stored(&op, tensors, "qzeros", DType::Int32, &[groups, words])?;
    let stored_scales = affine::stored(&op, tensors, "scales", DType::Float16, &[groups, rows])?;
    let mut elements = vec![0u8; rows * cols];
    for (i, raw) in qweight.data.chunks_exact(words * 4).enumerate() {
        let fields = packing::unpack_bits("qweight", 4, raw, rows)?;
        for (o, c) in row_fields(rows).zip(fields) {
            elements[o * cols + i] = c as u8;
        }
    }
    let mut zeros = vec![0i32; rows * groups];
    for (g, raw) in qzeros.data.chunks_exact(words * 4).enumerate() {
        let fields = packing::unpack_bits("qzeros", 4, raw, rows)?;
        for (o, z) in row_fields(rows).zip(fields) {
            zeros[o * groups + g] = z as i32;
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
        extras: Some(Box::new(Extras { zero_points: Some(zeros), ..Extras::default() })),
    })
}
