//! What the zero-point schemes of GPTQ and AWQ share: torch's float arithmetic in a narrow dtype
//! (each operation's float32 result rounded to the dtype, as torch's CPU kernels compute float16
//! and bfloat16), their dequantize `scales * (q - zeros)` in float16, and 32-bit words of codes.

use super::{StoredTensor, Weight};
use crate::alloc_prelude::*;
use crate::convert::CastOptions;
use crate::dtype::DType;
use crate::error::{quoted, Error, Result};
use crate::plan::Plan;
use crate::quant::blocks::ProductNan;
use crate::Profile;

/// torch's `Tensor.to` on the CPU: the casts the producers' tensors go through.
fn torch_casts() -> CastOptions {
    CastOptions::with_profile(Profile::Torch)
}

/// float32 values as little-endian bytes.
fn f32_bytes(values: &[f32]) -> Vec<u8> {
    let mut out = Vec::with_capacity(4 * values.len());
    values.iter().for_each(|v| out.extend_from_slice(&v.to_le_bytes()));
    out
}

/// The weight's values as float32 (float16 and bfloat16 widen exactly).
pub(super) fn widen(w: &Weight<'_>) -> Result<Vec<f32>> {
    let n = w.rows * w.cols;
    if w.dtype == DType::Float {
        return Ok(w.raw.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect());
    }
    let mut wide = vec![0f32; n];
    Plan::new(w.dtype, DType::Float, &CastOptions::default())?.run(
        w.raw,
        zerocopy::IntoBytes::as_mut_bytes(&mut wide[..]),
        n,
    )?;
    from_le(&mut wide);
    Ok(wide)
}

/// Values whose bytes were written little-endian, as numbers (nothing to do on little-endian
/// machines); the same swap turns numbers into little-endian bytes.
fn from_le(values: &mut [f32]) {
    if cfg!(target_endian = "big") {
        values.iter_mut().for_each(|v| *v = f32::from_bits(u32::from_le(v.to_bits())));
    }
}

/// The first value that is NaN or infinite, as (row, column) of a `cols`-wide matrix.
pub(super) fn first_non_finite(values: &[f32], cols: usize) -> Option<(usize, usize)> {
    let at = values.iter().position(|v| !v.is_finite())?;
    Some((at / cols, at % cols))
}

/// Rounds float32 values to a narrow float dtype and back: torch's arithmetic in that dtype,
/// one operation at a time (the exact float32 result of one operation on values of the dtype,
/// rounded once; float32 holds every product, sum and quotient of two float16 or bfloat16 values
/// closely enough that rounding it again is rounding the exact value). The quantizers refuse NaN
/// weights and make none, so the casts are the rounding core's defaults (nearest even, overflow
/// to infinity), which torch's are for numbers.
pub(super) struct Narrow {
    to: Plan,
    back: Plan,
    narrow: Vec<u8>,
}

impl Narrow {
    /// `None` for float32 (nothing to round).
    pub(super) fn new(dtype: DType) -> Result<Option<Narrow>> {
        if dtype == DType::Float {
            return Ok(None);
        }
        let casts = CastOptions::default();
        Ok(Some(Narrow {
            to: Plan::new(DType::Float, dtype, &casts)?,
            back: Plan::new(dtype, DType::Float, &casts)?,
            narrow: Vec::new(),
        }))
    }

    /// Every value rounded to the dtype (in place).
    pub(super) fn round(&mut self, values: &mut [f32]) -> Result<()> {
        let n = values.len();
        self.narrow.resize(2 * n, 0);
        from_le(values);
        self.to.run(zerocopy::IntoBytes::as_bytes(&values[..]), &mut self.narrow, n)?;
        self.back.run(&self.narrow, zerocopy::IntoBytes::as_mut_bytes(&mut values[..]), n)?;
        from_le(values);
        Ok(())
    }

    /// The values' codes in the dtype.
    pub(super) fn codes(&mut self, values: &[f32]) -> Result<Vec<u16>> {
        let n = values.len();
        let wide = f32_bytes(values);
        self.narrow.resize(2 * n, 0);
        self.to.run(&wide, &mut self.narrow, n)?;
        Ok(self.narrow.chunks_exact(2).map(|b| u16::from_le_bytes([b[0], b[1]])).collect())
    }
}

/// `x` rounded to an integer, ties to even (torch.round), for the codes: the float32 sum with
/// 1.5 * 2^23 drops the fraction under the default rounding (the x86-64 baseline has no rounding
/// instruction, and `round_ties_even`'s library call costs more than the rest of a code). Beyond
/// 2^22 every float32 is whole already. A zero comes out +0 where torch keeps -0: the codes and
/// zero points are integers, so the sign never reaches them.
#[inline(always)]
pub(super) fn round_half_even(x: f32) -> f32 {
    const SHIFT: f32 = 12_582_912.0; // 1.5 * 2^23
    if x.abs() < 4_194_304.0 {
        (x + SHIFT) - SHIFT
    } else {
        x
    }
}

/// A stored float16 `scales` tensor `[groups, rows]` (GPTQ's and AWQ's) as one row
/// of groups per output feature, `[rows, groups]`.
pub(super) fn scales_by_row(stored: &StoredTensor, rows: usize, groups: usize) -> Vec<u16> {
    let halves = halves(stored);
    let mut scales = vec![0u16; rows * groups];
    for (g, row) in halves.chunks_exact(rows.max(1)).enumerate().take(groups) {
        for (o, &s) in row.iter().enumerate() {
            scales[o * groups + g] = s;
        }
    }
    scales
}

/// float16 codes as float32 (exact).
pub(super) fn half_values(codes: &[u16]) -> Result<Vec<f32>> {
    let n = codes.len();
    let mut raw = Vec::with_capacity(2 * n);
    codes.iter().for_each(|c| raw.extend_from_slice(&c.to_le_bytes()));
    let mut wide = vec![0u8; 4 * n];
    Plan::new(DType::Float16, DType::Float, &torch_casts())?.run(&raw, &mut wide, n)?;
    Ok(wide.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect())
}

/// The producers' dequantize of each group: `scale * (q - zero)` for every code `q` below
/// `levels`, with integer codes and a float16 scale (torch: the product exact in float32,
/// rounded once to float16), then as `dtype` (FLOAT16 itself; FLOAT and BFLOAT16 by torch's
/// `.to`). One table of `levels` values per group, in the groups' order, little-endian.
pub(super) fn level_tables(scales: &[u16], zeros: &[i32], levels: usize, dtype: DType) -> Result<Vec<u8>> {
    let width = crate::quant::blocks::float_width(dtype, "integer dequantize")?;
    let scale_values = half_values(scales)?;
    let mut products = Vec::with_capacity(scales.len() * levels);
    for (&s, &z) in scale_values.iter().zip(zeros) {
        // Codes and zero points are at most 8 bits: the difference is exact in float32.
        products
            .extend((0..levels).map(|q| crate::quant::blocks::product(ProductNan::Element, s, (q as i32 - z) as f32)));
    }
    let n = products.len();
    // A NaN product (a NaN or infinite stored scale) is written as torch writes it.
    let casts = if products.iter().any(|p| p.is_nan()) { torch_casts() } else { CastOptions::default() };
    let mut half = vec![0u8; 2 * n];
    Plan::new(DType::Float, DType::Float16, &casts)?.run(&f32_bytes(&products), &mut half, n)?;
    if dtype == DType::Float16 {
        return Ok(half);
    }
    let mut out = vec![0u8; width * n];
    Plan::new(DType::Float16, dtype, &casts)?.run(&half, &mut out, n)?;
    Ok(out)
}

/// Which group each input column belongs to: runs of `group` columns, or a group index per
/// column (GPTQ's act-order `g_idx`).
pub(super) enum Columns<'a> {
    /// Column `j` is in group `j / group`.
    Runs(usize),
    /// Column `j` is in group `index[j]`.
    Index(&'a [u32]),
}

impl Columns<'_> {
    /// The group of each column of a `cols`-wide row.
    pub(super) fn of(&self, cols: usize) -> Vec<u32> {
        match self {
            Columns::Runs(group) => (0..cols).map(|j| (j / group) as u32).collect(),
            Columns::Index(index) => index.to_vec(),
        }
    }
}

/// The dequantized matrix: element (row, col) is entry `codes[row * cols + col]` of table
/// `row * groups + group(col)`, each table `levels` values of `width` bytes.
pub(super) fn apply_tables(
    tables: &[u8],
    levels: usize,
    width: usize,
    codes: &[u8],
    cols: usize,
    groups: usize,
    columns: &Columns<'_>,
) -> Vec<u8> {
    fn apply<const N: usize>(
        tables: &[u8],
        levels: usize,
        codes: &[u8],
        cols: usize,
        groups: usize,
        columns: &Columns<'_>,
    ) -> Vec<u8> {
        let tables: Vec<[u8; N]> = tables.chunks_exact(N).map(|b| b.try_into().expect("N bytes")).collect();
        let mut out = vec![0u8; codes.len() * N];
        let per_row = groups * levels;
        for (row, (codes, out)) in codes.chunks_exact(cols).zip(out.chunks_exact_mut(cols * N)).enumerate() {
            let row_tables = &tables[row * per_row..(row + 1) * per_row];
            match columns {
                Columns::Runs(group) => {
                    for (g, (codes, out)) in codes.chunks_exact(*group).zip(out.chunks_exact_mut(group * N)).enumerate()
                    {
                        let table = &row_tables[g * levels..(g + 1) * levels];
                        for (o, &c) in out.chunks_exact_mut(N).zip(codes) {
                            o.copy_from_slice(&table[usize::from(c)]);
                        }
                    }
                }
                Columns::Index(index) => {
                    for ((o, &c), &g) in out.chunks_exact_mut(N).zip(codes).zip(index.iter()) {
                        o.copy_from_slice(&row_tables[g as usize * levels + usize::from(c)]);
                    }
                }
            }
        }
        out
    }
    if width == 2 {
        apply::<2>(tables, levels, codes, cols, groups, columns)
    } else {
        apply::<4>(tables, levels, codes, cols, groups, columns)
    }
}

/// 32-bit words of little-endian bytes.
pub(super) fn words(bytes: &[u8]) -> impl Iterator<Item = u32> + '_ {
    bytes.chunks_exact(4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

/// Bytes of 32-bit words.
pub(super) fn word_bytes(words: impl Iterator<Item = u32>) -> Vec<u8> {
    words.flat_map(u32::to_le_bytes).collect()
}

/// The tensor `name` among `tensors`, checked to be `dtype` of `shape` with its bytes.
pub(super) fn stored<'a>(
    op: &str,
    tensors: &'a [StoredTensor],
    name: &str,
    dtype: DType,
    shape: &[usize],
) -> Result<&'a StoredTensor> {
    let bad = |message: String| Error::InvalidOp { op: op.to_string(), message };
    let t = tensors.iter().find(|t| t.name == name).ok_or_else(|| bad(format!("no tensor {}", quoted(name))))?;
    if t.dtype != dtype || t.shape != shape {
        return Err(bad(format!(
            "{} is {} of shape {}, the weight needs {} of shape {}",
            quoted(name),
            t.dtype.onnx_name(),
            crate::error::shown_shape(&t.shape),
            dtype.onnx_name(),
            crate::error::shown_shape(shape)
        )));
    }
    let width: usize = if dtype == DType::Float16 { 2 } else { 4 };
    let need = shape.iter().try_fold(width, |a, &d| a.checked_mul(d));
    if need != Some(t.data.len()) {
        return Err(bad(format!("{} holds {} bytes, its shape needs {need:?}", quoted(name), t.data.len())));
    }
    Ok(t)
}

/// Refuses tensors other than `names`.
pub(super) fn only(op: &str, tensors: &[StoredTensor], names: &[&str]) -> Result<()> {
    match tensors.iter().find(|t| !names.contains(&t.name.as_str())) {
        None => Ok(()),
        Some(t) => Err(Error::InvalidOp {
            op: op.to_string(),
            message: format!("{} is not one of the tensors {}", quoted(&t.name), names.join(", ")),
        }),
    }
}

/// The float16 codes of a stored tensor.
pub(super) fn halves(t: &StoredTensor) -> Vec<u16> {
    t.data.chunks_exact(2).map(|b| u16::from_le_bytes([b[0], b[1]])).collect()
}
