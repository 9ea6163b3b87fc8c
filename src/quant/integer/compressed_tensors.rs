//! compressed-tensors' integer weights (0.20.0): `calculate_qparams` on the memoryless min/max of
//! each group, `quantize` and `dequantize` of `quantization/lifecycle/forward.py` in the weight's
//! dtype, and the tensors its `pack-quantized` and `int-quantized` compressors save.
//!
//! The arithmetic is torch's on x86-64, one tensor operation after another, each rounded to the
//! weight's dtype (float16 and bfloat16: computed in float32, then rounded). Where a NaN's bits
//! depend on torch's vector loops, the rule is named below; they are those of a single-threaded
//! run (`torch.set_num_threads(1)`: several threads split the loops elsewhere).

use super::{take, Extras, Family, Options, Params, StoredTensor, Weight};
use crate::alloc_prelude::*;
use crate::convert::CastOptions;
use crate::dtype::DType;
use crate::error::{quoted, Error, Result};
use crate::packing;
use crate::plan::Plan;
use crate::quant::blocks::{
    c_int8_x86, code_held_in, nan_amax_bits, product, ProductNan, Quantized, Scales, Scheme, TORCH_BFLOAT16_NAN,
    TORCH_LANES,
};
use crate::round::RoundingMode;
use crate::Profile;

/// The family's row.
pub(super) const FAMILY: Family = Family {
    name: "compressed-tensors",
    grammar: "compressed-tensors:int4|int8[,group=N|channel][,sym|asym][,format=pack-quantized|int-quantized]",
    source: "compressed-tensors 0.20.0: calculate_qparams of the per-group min/max, quantize and dequantize \
             (lifecycle/forward.py), PackedQuantizationCompressor (pack_to_int32) and IntQuantizationCompressor; \
             defaults of PRESET_SCHEMES W4A16 and W8A16 (group 128, symmetric, pack-quantized); \
             scripts/gen_integer_compressed_tensors_fixtures.py, scripts/crosscheck_compressed_tensors.py",
    parse,
    quantize,
    dequantize,
    storage,
    from_storage,
};

/// The element formats: bits, and the preset whose weights they default to.
const FORMATS: &[(&str, u32, &str)] = &[("int4", 4, "W4A16"), ("int8", 8, "W8A16")];

/// The presets' group size (`_int_wnam`: `group_size=128`, symmetric).
const PRESET_GROUP: usize = 128;

/// How a compressor saves the codes.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Codes {
    /// `weight_packed`: int32 words along the input dimension, `32 / bits` codes each, the code
    /// plus `2^(bits-1)` from the low bits up (`pack_to_int32`); asymmetric zero points packed
    /// the same way along the output dimension.
    PackedInt32,
    /// `weight`: one int8 per code; zero points as int8.
    Int8,
}

/// The compressors (`format=` in the scheme name, the config's `format`), the first the default.
const COMPRESSORS: &[(&str, Codes)] = &[("pack-quantized", Codes::PackedInt32), ("int-quantized", Codes::Int8)];

/// The quantized range of `bits` (`_calculate_range`: `-2^(b-1) .. 2^(b-1) - 1`).
fn range(bits: u32) -> (f32, f32) {
    let half = (1u32 << (bits - 1)) as f32;
    (-half, half - 1.0)
}

fn codes_of(params: &Params) -> Codes {
    let name = params.choice("format").unwrap_or(COMPRESSORS[0].0);
    COMPRESSORS.iter().find(|(n, _)| *n == name).map_or(Codes::PackedInt32, |(_, c)| *c)
}

fn parse(format: &str, options: &mut Options<'_>) -> Result<Params> {
    let bad = |message: String| Error::InvalidOp { op: format!("scheme compressed-tensors:{format}"), message };
    let &(_, bits, _) =
        FORMATS.iter().find(|(f, _, _)| *f == format).ok_or_else(|| bad(format!("no format {}", quoted(format))))?;
    let channel = take(options, "channel");
    let group = match (take(options, "group"), channel) {
        (Some(_), Some(_)) => return Err(bad("group=N and channel exclude each other".into())),
        (None, Some("")) => None,
        (None, Some(v)) => return Err(bad(format!("channel takes no value (channel={v})"))),
        (None, None) => Some(PRESET_GROUP),
        (Some(v), None) => match v.parse::<usize>() {
            Ok(n) if n > 0 => Some(n),
            _ => return Err(bad(format!("group={v}: a positive integer is needed"))),
        },
    };
    let symmetric = match (take(options, "sym"), take(options, "asym")) {
        (Some(_), Some(_)) => return Err(bad("sym and asym exclude each other".into())),
        (Some(v), _) | (_, Some(v)) if !v.is_empty() => return Err(bad("sym and asym are flags".into())),
        (_, Some(_)) => false,
        _ => true,
    };
    let mut choices = Vec::new();
    if let Some(v) = take(options, "format") {
        let (name, _) = COMPRESSORS.iter().find(|(n, _)| *n == v).ok_or_else(|| {
            bad(format!("format={v}: one of {}", COMPRESSORS.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")))
        })?;
        choices.push(("format", *name));
    }
    Ok(Params { family: FAMILY.name, bits, group, symmetric, act_order: false, choices })
}

/// Rows, columns, group length and groups per row of a weight, the group checked.
struct Shape {
    rows: usize,
    cols: usize,
    group: usize,
    groups: usize,
}

impl Shape {
    fn new(scheme_name: &str, what: &str, params: &Params, rows: usize, cols: usize) -> Result<Shape> {
        let bad = |message: String| Error::InvalidOp { op: format!("{scheme_name} {what}"), message };
        if rows == 0 || cols == 0 {
            // torch.amin over an empty group raises.
            return Err(bad(format!("a {rows}x{cols} weight is empty")));
        }
        // Elements, and bits of a packed row or column, in range.
        rows.checked_mul(cols)
            .and(rows.checked_mul(32))
            .and(cols.checked_mul(32))
            .ok_or_else(|| Error::TooLarge { what: format!("a {rows}x{cols} weight") })?;
        let group = params.group.unwrap_or(cols);
        if cols % group != 0 {
            // _process_group's own check.
            return Err(bad(format!(
                "tensor column shape must be divisble by the given group_size {group} but got {cols}"
            )));
        }
        Ok(Shape { rows, cols, group, groups: cols / group })
    }

    fn scales(&self) -> usize {
        self.rows * self.groups
    }
}

/// Row `r` of the weight as float32 values (exact) into `out`: read a row at a time, so that
/// no copy of the whole weight is made.
fn widen_row(w: &Weight<'_>, r: usize, out: &mut [f32]) {
    if w.dtype == DType::Float {
        let raw = &w.raw[4 * r * w.cols..4 * (r + 1) * w.cols];
        for (o, b) in out.iter_mut().zip(raw.chunks_exact(4)) {
            *o = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        }
    } else {
        let raw = &w.raw[2 * r * w.cols..2 * (r + 1) * w.cols];
        for (o, b) in out.iter_mut().zip(raw.chunks_exact(2)) {
            *o = value_of(w.dtype, u32::from(u16::from_le_bytes([b[0], b[1]])));
        }
    }
}

fn casts() -> CastOptions {
    CastOptions::with_profile(Profile::Torch)
}

/// float32 values rounded to `dtype` and back, as torch stores a float16 or bfloat16 result
/// (float32: unchanged), through the rounding core's plan. NaNs come out as some NaN; callers
/// that store one set its bits.
struct Rounder {
    dtype: DType,
    narrow: Option<Plan>,
    src: Vec<u8>,
    codes: Vec<u8>,
}

impl Rounder {
    fn new(dtype: DType) -> Result<Rounder> {
        let narrow = if dtype == DType::Float { None } else { Some(Plan::new(DType::Float, dtype, &casts())?) };
        Ok(Rounder { dtype, narrow, src: Vec::new(), codes: Vec::new() })
    }

    fn round(&mut self, values: &mut [f32]) -> Result<()> {
        let Some(down) = &self.narrow else { return Ok(()) };
        let n = values.len();
        self.src.resize(4 * n, 0);
        for (b, v) in self.src.chunks_exact_mut(4).zip(values.iter()) {
            b.copy_from_slice(&v.to_le_bytes());
        }
        self.codes.resize(2 * n, 0);
        down.run(&self.src, &mut self.codes, n)?;
        for (v, b) in values.iter_mut().zip(self.codes.chunks_exact(2)) {
            *v = value_of(self.dtype, u32::from(u16::from_le_bytes([b[0], b[1]])));
        }
        Ok(())
    }
}

/// torch's vector width for `dtype` (`TORCH_LANES`).
fn lanes(dtype: DType) -> usize {
    TORCH_LANES.iter().find(|(d, _)| *d == dtype).map_or(1, |l| l.1)
}

/// `calculate_qparams` of every group's (min, max) (float32 values of the weight's dtype):
/// the scales' codes in the weight's dtype and the zero points (int8 values).
fn qparams(dtype: DType, bits: u32, symmetric: bool, lo: &[f32], hi: &[f32]) -> Result<(Vec<u32>, Vec<i32>)> {
    let (qmin, qmax) = range(bits);
    let n = lo.len();
    let mut rounder = Rounder::new(dtype)?;
    // torch.min(min_vals, 0) and torch.max(max_vals, 0): exact; the NaN of a group's min/max is
    // rewritten by the elementwise min/max's vector loop (all bits set) or its scalar tail
    // (torch's reductions' positive NaN), which every later step keeps.
    let lo: Vec<f32> = lo.iter().map(|&v| if v.is_nan() { v } else { v.min(0.0) }).collect();
    let hi: Vec<f32> = hi.iter().map(|&v| if v.is_nan() { v } else { v.max(0.0) }).collect();
    let mut scales: Vec<f32>;
    let mut zero_points: Vec<f32>;
    if symmetric {
        // max(|min|, |max|) / (bit_range / 2), the divisor exact in every dtype.
        let half_range = (qmax - qmin) / 2.0;
        scales = lo.iter().zip(&hi).map(|(l, h)| l.abs().max(h.abs()) / half_range).collect();
        rounder.round(&mut scales)?;
        zero_points = vec![0.0; n];
    } else {
        let bit_range = qmax - qmin;
        scales = hi.iter().zip(&lo).map(|(h, l)| h - l).collect();
        rounder.round(&mut scales)?;
        scales.iter_mut().for_each(|s| *s /= bit_range);
        rounder.round(&mut scales)?;
        // bit_min - min / scale (before the zero-scale fix: 0 / 0 is NaN), then clamped.
        zero_points = lo.iter().zip(&scales).map(|(l, s)| l / s).collect();
        rounder.round(&mut zero_points)?;
        zero_points.iter_mut().for_each(|z| *z = qmin - *z);
        rounder.round(&mut zero_points)?;
    }
    let eps = match dtype {
        DType::Float16 => f32::from_bits(0x3A80_0000), // torch.finfo(float16).eps, 2^-10
        DType::Bfloat16 => f32::from_bits(0x3C00_0000), // 2^-7
        _ => f32::EPSILON,
    };
    let nan_code = i32::from(c_int8_x86(f32::NAN, RoundingMode::NearestEven));
    let lanes = lanes(dtype);
    let codes = scales
        .iter()
        .enumerate()
        .map(|(i, &s)| {
            let s = if lo[i].is_nan() {
                f32::from_bits(nan_amax_bits(i, n, lanes))
            } else if s == 0.0 {
                eps
            } else {
                s
            };
            code_held_in(Profile::Torch, dtype, s)
        })
        .collect();
    // round_to_quantized_type_dtype: clamp, torch.round (half to even), to int8 (x86: a NaN
    // gives the integer indefinite's low byte).
    let zero_points = zero_points
        .iter()
        .map(|&z| {
            let z = z.clamp(qmin, qmax);
            if z.is_nan() {
                nan_code
            } else {
                z.round_ties_even() as i32
            }
        })
        .collect();
    Ok((codes, zero_points))
}

/// A code of `dtype` (float32, float16, bfloat16) as float32 (exact).
fn value_of(dtype: DType, code: u32) -> f32 {
    match dtype {
        DType::Float16 => crate::quant::ggml::half_to_f32(code as u16),
        DType::Bfloat16 => f32::from_bits(code << 16),
        _ => f32::from_bits(code),
    }
}

fn quantize(scheme: &Scheme, params: &Params, w: &Weight<'_>) -> Result<Quantized> {
    let shape = Shape::new(scheme.name(), "quantize", params, w.rows, w.cols)?;
    if w.group_index.is_some() {
        return Err(Error::InvalidOp {
            op: format!("{} quantize", scheme.name()),
            message: "compressed-tensors 0.20 stores no g_idx (its group act-order was removed)".into(),
        });
    }
    // The memoryless min/max observer: torch.amin/amax per group in the weight's dtype (a NaN
    // wins; its bits are rewritten below).
    let (mut lo, mut hi) = (Vec::with_capacity(shape.scales()), Vec::with_capacity(shape.scales()));
    let mut row = vec![0f32; shape.cols];
    for r in 0..shape.rows {
        widen_row(w, r, &mut row);
        for g in row.chunks_exact(shape.group) {
            let (l, h) = min_max(g);
            lo.push(l);
            hi.push(h);
        }
    }
    let (scale_codes, zero_points) = qparams(w.dtype, params.bits, params.symmetric, &lo, &hi)?;
    let elements = quantize_elements(w, params, &shape, &scale_codes, &zero_points)?;
    let scales = match w.dtype {
        DType::Float16 => Scales::Float16(scale_codes.iter().map(|&c| c as u16).collect()),
        DType::Bfloat16 => Scales::Bfloat16(scale_codes.iter().map(|&c| c as u16).collect()),
        _ => Scales::Float32(scale_codes.iter().map(|&c| f32::from_bits(c)).collect()),
    };
    Ok(Quantized {
        scheme: scheme.clone(),
        shape: vec![shape.rows, shape.cols],
        axis: -1,
        elements,
        scales,
        global_scale: None,
        extras: Some(Box::new(Extras { zero_points: (!params.symmetric).then_some(zero_points), ..Extras::default() })),
    })
}

/// The minimum and maximum of `g`, both NaN if it holds one (torch.amin/amax); in lanes of 8
/// that the compiler turns into vector instructions. Which zero a signed-zero tie gives does not
/// matter: the qparams take magnitudes or differences of both.
fn min_max(g: &[f32]) -> (f32, f32) {
    const LANES: usize = 8;
    let (mut l, mut h, mut nan) = ([f32::INFINITY; LANES], [f32::NEG_INFINITY; LANES], [false; LANES]);
    let mut chunks = g.chunks_exact(LANES);
    for c in &mut chunks {
        for k in 0..LANES {
            l[k] = if c[k] < l[k] { c[k] } else { l[k] };
            h[k] = if c[k] > h[k] { c[k] } else { h[k] };
            nan[k] |= c[k].is_nan();
        }
    }
    let rest = chunks.remainder();
    let lo = rest.iter().chain(&l).fold(f32::INFINITY, |m, &v| if v < m { v } else { m });
    let hi = rest.iter().chain(&h).fold(f32::NEG_INFINITY, |m, &v| if v > m { v } else { m });
    if rest.iter().any(|v| v.is_nan()) || nan.iter().any(|&b| b) {
        return (f32::NAN, f32::NAN);
    }
    (lo, hi)
}

/// `_quantize`: x / scale and + zero_point, each rounded to the weight's dtype, clamped,
/// rounded half to even, to int8; the code's low `bits` bits.
fn quantize_elements(
    w: &Weight<'_>,
    params: &Params,
    shape: &Shape,
    scale_codes: &[u32],
    zero_points: &[i32],
) -> Result<Vec<u8>> {
    let dtype = w.dtype;
    let (qmin, qmax) = range(params.bits);
    let mask = ((1u32 << params.bits) - 1) as u8;
    let nan_code = c_int8_x86(f32::NAN, RoundingMode::NearestEven) as u8 & mask;
    let scales: Vec<f32> = scale_codes.iter().map(|&c| value_of(dtype, c)).collect();
    let mut rounder = Rounder::new(dtype)?;
    let mut elements = vec![0u8; shape.rows * shape.cols];
    let mut y = vec![0f32; shape.cols];
    let mut row = vec![0f32; shape.cols];
    for (r, out) in elements.chunks_exact_mut(shape.cols).enumerate() {
        widen_row(w, r, &mut row);
        let groups = r * shape.groups..(r + 1) * shape.groups;
        for ((yg, xg), &s) in
            y.chunks_exact_mut(shape.group).zip(row.chunks_exact(shape.group)).zip(&scales[groups.clone()])
        {
            yg.iter_mut().zip(xg).for_each(|(y, &x)| *y = x / s);
        }
        rounder.round(&mut y)?;
        if !params.symmetric {
            // `scaled += zero_point.to(x.dtype)` (symmetric: + 0, which no integer rounding sees).
            for (yg, &z) in y.chunks_exact_mut(shape.group).zip(&zero_points[groups]) {
                let z = z as f32;
                yg.iter_mut().for_each(|y| *y += z);
            }
            rounder.round(&mut y)?;
        }
        for (o, &v) in out.iter_mut().zip(&y) {
            *o = if v.is_nan() { nan_code } else { integer_code(v.clamp(qmin, qmax)) & mask };
        }
    }
    Ok(elements)
}

/// 1.5 * 2^23: adding it to a float32 in [-2^22, 2^22] leaves the value rounded to an integer,
/// ties to even (the unit in the last place there is 1), in the low bits of the sum's code.
const ROUNDING_BIAS: f32 = 12_582_912.0;

/// torch.round (half to even) of `v` in [-128, 127] and its int8 conversion, as the low byte of
/// the biased sum (two's complement: the bias' code has zero low bits).
#[inline(always)]
fn integer_code(v: f32) -> u8 {
    (v + ROUNDING_BIAS).to_bits() as u8
}

/// What dequantize and storage read of a `Quantized`, every length and code checked.
struct Parts<'a> {
    shape: Shape,
    dtype: DType,
    scale_codes: Vec<u32>,
    zero_points: Option<&'a [i32]>,
}

fn parts<'a>(params: &Params, q: &'a Quantized, what: &str) -> Result<Parts<'a>> {
    let name = q.scheme.name();
    let bad = |message: String| Error::InvalidOp { op: format!("{name} {what}"), message };
    let [rows, cols] = super::matrix(&q.scheme, &q.shape)?;
    let shape = Shape::new(name, what, params, rows, cols)?;
    if q.elements.len() != rows * cols {
        return Err(Error::ShapeMismatch { shape: q.shape.clone(), elements: rows * cols, actual: q.elements.len() });
    }
    let mask = ((1u32 << params.bits) - 1) as u8;
    if let Some(at) = q.elements.iter().position(|&e| e & !mask != 0) {
        return Err(bad(format!("element {at} holds {:#04x}, not a {}-bit code", q.elements[at], params.bits)));
    }
    let (dtype, scale_codes): (DType, Vec<u32>) = match &q.scales {
        Scales::Float32(v) => (DType::Float, v.iter().map(|s| s.to_bits()).collect()),
        Scales::Float16(v) => (DType::Float16, v.iter().map(|&s| u32::from(s)).collect()),
        Scales::Bfloat16(v) => (DType::Bfloat16, v.iter().map(|&s| u32::from(s)).collect()),
        Scales::Codes(_) => return Err(bad("the scales are float32, float16 or bfloat16 values".into())),
    };
    if scale_codes.len() != shape.scales() {
        return Err(bad(format!("{} scales given, the shape needs {}", scale_codes.len(), shape.scales())));
    }
    let zero_points = q.extras.as_ref().and_then(|e| e.zero_points.as_deref());
    let (qmin, qmax) = range(params.bits);
    match (params.symmetric, zero_points) {
        (true, Some(_)) => return Err(bad("a symmetric scheme has no zero points".into())),
        (false, None) => return Err(bad("an asymmetric scheme needs its zero points".into())),
        (false, Some(z)) if z.len() != shape.scales() => {
            return Err(bad(format!("{} zero points given, the shape needs {}", z.len(), shape.scales())))
        }
        (false, Some(z)) => {
            if let Some(at) = z.iter().position(|&v| (v as f32) < qmin || (v as f32) > qmax) {
                return Err(bad(format!("zero point {at} is {}, outside {qmin}..={qmax}", z[at])));
            }
        }
        (true, None) => {}
    }
    Ok(Parts { shape, dtype, scale_codes, zero_points })
}

/// The signed value of a `bits`-bit two's complement code.
fn signed(code: u8, bits: u32) -> i32 {
    let shift = 32 - bits;
    (i32::from(code) << shift) >> shift
}

/// `_dequantize`: `(x_q - zero_point) * scale` in the scale's dtype (the difference exact), then
/// cast to `dtype` as torch's `.to(dtype)`.
fn dequantize(params: &Params, q: &Quantized, dtype: DType) -> Result<Vec<u8>> {
    let p = parts(params, q, "dequantize")?;
    let width = crate::quant::blocks::float_width(dtype, "compressed-tensors dequantize")?;
    let own = dequantize_in_scale_dtype(params, q, &p)?;
    if dtype == p.dtype {
        return Ok(own);
    }
    let n = p.shape.rows * p.shape.cols;
    let mut out = vec![0u8; width * n];
    Plan::new(p.dtype, dtype, &casts())?.run(&own, &mut out, n)?;
    Ok(out)
}

fn dequantize_in_scale_dtype(params: &Params, q: &Quantized, p: &Parts<'_>) -> Result<Vec<u8>> {
    let Shape { rows, cols, group, .. } = p.shape;
    let bits = params.bits;
    let width = if p.dtype == DType::Float { 4 } else { 2 };
    let n = rows * cols;
    // The products (code - zero point) * scale, exact in float32 for the narrow dtypes (an 8-bit
    // difference times an 11-bit significand), then rounded once: as a table per group (by code)
    // where the group is longer than the table, else one per element.
    let levels = 1usize << bits;
    let direct = levels > group;
    let count = if direct { n } else { p.scale_codes.len() * levels };
    let mut products = vec![0u8; 4 * count];
    let mut special_groups = Vec::new();
    let entries = if direct { group } else { levels };
    for (i, out) in products.chunks_exact_mut(4 * entries).enumerate() {
        let s = value_of(p.dtype, p.scale_codes[i]);
        let z = p.zero_points.map_or(0, |z| z[i]);
        if !s.is_finite() {
            special_groups.push(i);
        }
        let product = |c: u8| product(ProductNan::Factor, (signed(c, bits) - z) as f32, s).to_le_bytes();
        if direct {
            for (o, &c) in out.chunks_exact_mut(4).zip(&q.elements[i * group..(i + 1) * group]) {
                o.copy_from_slice(&product(c));
            }
        } else {
            for (c, o) in out.chunks_exact_mut(4).enumerate() {
                o.copy_from_slice(&product(c as u8));
            }
        }
    }
    let rounded = match p.dtype {
        DType::Float => products,
        dtype => {
            let mut codes = vec![0u8; 2 * count];
            Plan::new(DType::Float, dtype, &casts())?.run(&products, &mut codes, count)?;
            // float16 keeps a NaN's top payload bits (F16C's conversion, which torch's uses).
            for &i in &special_groups {
                let at = i * entries;
                for (o, b) in
                    codes[2 * at..2 * (at + entries)].chunks_exact_mut(2).zip(products[4 * at..].chunks_exact(4))
                {
                    let v = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                    if v.is_nan() {
                        o.copy_from_slice(&(code_held_in(Profile::Torch, dtype, v) as u16).to_le_bytes());
                    }
                }
            }
            codes
        }
    };
    let mut out = if direct {
        rounded
    } else {
        let mut out = vec![0u8; width * n];
        let step = width * levels;
        // A table of 256 entries indexed by a byte needs no bounds check per element.
        let (mut narrow, mut wide) = ([[0u8; 2]; 256], [[0u8; 4]; 256]);
        for ((dst, codes), table) in
            out.chunks_exact_mut(width * group).zip(q.elements.chunks_exact(group)).zip(rounded.chunks_exact(step))
        {
            if width == 2 {
                narrow.iter_mut().zip(table.chunks_exact(2)).for_each(|(t, b)| *t = [b[0], b[1]]);
                for (o, &c) in dst.chunks_exact_mut(2).zip(codes) {
                    o.copy_from_slice(&narrow[usize::from(c)]);
                }
            } else {
                wide.iter_mut().zip(table.chunks_exact(4)).for_each(|(t, b)| *t = [b[0], b[1], b[2], b[3]]);
                for (o, &c) in dst.chunks_exact_mut(4).zip(codes) {
                    o.copy_from_slice(&wide[usize::from(c)]);
                }
            }
        }
        out
    };
    if p.dtype == DType::Bfloat16 {
        // torch's loop runs along a group (or a row); groups of one element leave nothing to
        // broadcast, and one loop runs over the whole weight.
        let run = if group == 1 { n } else { group };
        for &i in &special_groups {
            let s = value_of(p.dtype, p.scale_codes[i]);
            let z = p.zero_points.map_or(0, |z| z[i]);
            let first = i * group;
            let values: Vec<f32> = q.elements[first..first + group]
                .iter()
                .map(|&c| product(ProductNan::Factor, (signed(c, bits) - z) as f32, s))
                .collect();
            fix_nans(p.dtype, first, run, &values, &mut out[2 * first..2 * (first + group)]);
        }
    }
    Ok(out)
}

/// The NaN bits torch writes for the float16 and bfloat16 products of `values` (elements
/// `first..` of the weight): float16 keeps the top payload bits (F16C's conversion); bfloat16's
/// multiply writes all bits set in its vector loop (32 at a time along each `run` of elements:
/// `TORCH_BFLOAT16_NAN`) and 0x7FC0 in the loop's scalar tail (c10's `round_to_nearest_even`).
fn fix_nans(dtype: DType, first: usize, run: usize, values: &[f32], dst: &mut [u8]) {
    let vector_part = run / lanes(dtype) * lanes(dtype);
    for (i, v) in values.iter().enumerate().filter(|(_, v)| v.is_nan()) {
        let bits = match dtype {
            DType::Bfloat16 if (first + i) % run < vector_part => TORCH_BFLOAT16_NAN,
            DType::Bfloat16 => 0x7FC0,
            _ => code_held_in(Profile::Torch, dtype, *v) as u16,
        };
        dst[2 * i..2 * i + 2].copy_from_slice(&bits.to_le_bytes());
    }
}

/// Bytes of one row of `n` codes packed by `pack_to_int32`: whole int32 words.
fn packed_row_bytes(bits: u32, n: usize) -> usize {
    (n * bits as usize).div_ceil(32) * 4
}

/// `pack_to_int32` of one row of codes: each code plus `2^(bits-1)` (unsigned), `32 / bits` to an
/// int32 from the low bits, little-endian; the last word padded with zero bits.
fn pack_row(bits: u32, codes: &[u8], out: &mut [u8]) -> Result<()> {
    let offset = 1u8 << (bits - 1);
    let unsigned: Vec<u8> = codes.iter().map(|&c| c ^ offset).collect();
    match bits {
        4 => packing::pack_byte_codes(DType::Uint4, &unsigned, &mut out[..codes.len().div_ceil(2)]),
        _ => {
            out[..codes.len()].copy_from_slice(&unsigned);
            Ok(())
        }
    }
}

/// The reverse of [`pack_row`] (padding bits ignored, as `unpack_from_int32` ignores them).
fn unpack_row(bits: u32, raw: &[u8], codes: &mut [u8]) -> Result<()> {
    let offset = 1u8 << (bits - 1);
    match bits {
        4 => packing::unpack_byte_codes(DType::Uint4, &raw[..codes.len().div_ceil(2)], codes)?,
        _ => codes.copy_from_slice(&raw[..codes.len()]),
    }
    codes.iter_mut().for_each(|c| *c ^= offset);
    Ok(())
}

fn scale_tensor(p: &Parts<'_>) -> StoredTensor {
    let mut data = Vec::with_capacity(4 * p.scale_codes.len());
    for &c in &p.scale_codes {
        match p.dtype {
            DType::Float => data.extend_from_slice(&c.to_le_bytes()),
            _ => data.extend_from_slice(&(c as u16).to_le_bytes()),
        }
    }
    StoredTensor { name: "weight_scale".into(), dtype: p.dtype, shape: vec![p.shape.rows, p.shape.groups], data }
}

/// The tensors `compress` leaves in the layer's state dict, in its order (the state dict of
/// `weight`, `weight_scale`, `weight_zero_point`: `weight` taken out, the codes added after).
fn storage(params: &Params, q: &Quantized) -> Result<Vec<StoredTensor>> {
    let p = parts(params, q, "storage")?;
    let Shape { rows, cols, groups, .. } = p.shape;
    let bits = params.bits;
    let mask = ((1u32 << bits) - 1) as u8;
    let mut out = vec![scale_tensor(&p)];
    let codes = codes_of(params);
    if let Some(z) = p.zero_points {
        let z_codes: Vec<u8> = z.iter().map(|&v| v as u8 & mask).collect();
        out.push(match codes {
            Codes::Int8 => StoredTensor {
                name: "weight_zero_point".into(),
                dtype: DType::Int8,
                shape: vec![rows, groups],
                data: z.iter().map(|&v| v as i8 as u8).collect(),
            },
            Codes::PackedInt32 => {
                // Packed along the output dimension: column g of the (rows, groups) zero points
                // packed as a row, its words stored down column g.
                let words = packed_row_bytes(bits, rows) / 4;
                let mut data = vec![0u8; 4 * words * groups];
                let mut column = vec![0u8; rows];
                let mut packed = vec![0u8; 4 * words];
                for g in 0..groups {
                    column.iter_mut().enumerate().for_each(|(r, c)| *c = z_codes[r * groups + g]);
                    packed.fill(0);
                    pack_row(bits, &column, &mut packed)?;
                    for (w, word) in packed.chunks_exact(4).enumerate() {
                        data[4 * (w * groups + g)..4 * (w * groups + g) + 4].copy_from_slice(word);
                    }
                }
                StoredTensor { name: "weight_zero_point".into(), dtype: DType::Int32, shape: vec![words, groups], data }
            }
        });
    }
    match codes {
        Codes::Int8 => {
            let data = q.elements.iter().map(|&c| signed(c, bits) as i8 as u8).collect();
            out.push(StoredTensor { name: "weight".into(), dtype: DType::Int8, shape: vec![rows, cols], data });
        }
        Codes::PackedInt32 => {
            let row_bytes = packed_row_bytes(bits, cols);
            let mut data = vec![0u8; row_bytes * rows];
            for (codes, dst) in q.elements.chunks_exact(cols).zip(data.chunks_exact_mut(row_bytes)) {
                pack_row(bits, codes, dst)?;
            }
            out.push(StoredTensor {
                name: "weight_packed".into(),
                dtype: DType::Int32,
                shape: vec![rows, row_bytes / 4],
                data,
            });
            let mut data = Vec::with_capacity(16);
            data.extend_from_slice(&(rows as i64).to_le_bytes());
            data.extend_from_slice(&(cols as i64).to_le_bytes());
            out.push(StoredTensor { name: "weight_shape".into(), dtype: DType::Int64, shape: vec![2], data });
        }
    }
    Ok(out)
}

fn from_storage(scheme: &Scheme, params: &Params, tensors: &[StoredTensor], shape: [usize; 2]) -> Result<Quantized> {
    let name = scheme.name();
    let bad = |message: String| Error::InvalidOp { op: format!("{name} from_storage"), message };
    let [rows, cols] = shape;
    let s = Shape::new(name, "from_storage", params, rows, cols)?;
    let bits = params.bits;
    let codes = codes_of(params);
    let mut wanted: Vec<&str> = vec!["weight_scale"];
    if !params.symmetric {
        wanted.push("weight_zero_point");
    }
    match codes {
        Codes::Int8 => wanted.push("weight"),
        Codes::PackedInt32 => wanted.extend(["weight_packed", "weight_shape"]),
    }
    if let Some(t) = tensors.iter().find(|t| !wanted.contains(&t.name.as_str())) {
        return Err(bad(format!("{} is no tensor of this scheme (it takes {})", quoted(&t.name), wanted.join(", "))));
    }
    let get = |key: &str, dtypes: &[DType], dims: &[usize]| -> Result<&StoredTensor> {
        let t =
            tensors.iter().find(|t| t.name == key).ok_or_else(|| bad(format!("tensor {} is missing", quoted(key))))?;
        if !dtypes.contains(&t.dtype) {
            return Err(bad(format!(
                "tensor {} is {}, not {}",
                quoted(key),
                t.dtype.onnx_name(),
                dtypes[0].onnx_name()
            )));
        }
        if t.shape != dims {
            return Err(bad(format!(
                "tensor {} has shape {}, the weight needs {}",
                quoted(key),
                crate::error::shown_shape(&t.shape),
                crate::error::shown_shape(dims)
            )));
        }
        let bytes = packing::raw_len(t.dtype, dims.iter().product())?;
        if t.data.len() != bytes {
            return Err(bad(format!("tensor {} holds {} bytes, its shape needs {bytes}", quoted(key), t.data.len())));
        }
        Ok(t)
    };
    let scale = get("weight_scale", &[DType::Float, DType::Float16, DType::Bfloat16], &[rows, s.groups])?;
    let scales = match scale.dtype {
        DType::Float => {
            Scales::Float32(scale.data.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect())
        }
        DType::Float16 => {
            Scales::Float16(scale.data.chunks_exact(2).map(|b| u16::from_le_bytes([b[0], b[1]])).collect())
        }
        _ => Scales::Bfloat16(scale.data.chunks_exact(2).map(|b| u16::from_le_bytes([b[0], b[1]])).collect()),
    };
    let (qmin, qmax) = range(bits);
    let in_range = |key: &str, at: usize, v: i32| -> Result<i32> {
        if (v as f32) < qmin || (v as f32) > qmax {
            return Err(bad(format!("tensor {} holds {v} at byte {at}, outside {qmin}..={qmax}", quoted(key))));
        }
        Ok(v)
    };
    let mask = ((1u32 << bits) - 1) as u8;
    // The codes are allocated once their tensor's length is checked (the shape is the caller's).
    let (elements, zero_points) = match codes {
        Codes::Int8 => {
            let w = get("weight", &[DType::Int8], &[rows, cols])?;
            let elements = w
                .data
                .iter()
                .enumerate()
                .map(|(at, &b)| Ok(in_range("weight", at, i32::from(b as i8))? as u8 & mask))
                .collect::<Result<Vec<u8>>>()?;
            let zero_points = if params.symmetric {
                None
            } else {
                let z = get("weight_zero_point", &[DType::Int8], &[rows, s.groups])?;
                Some(
                    z.data
                        .iter()
                        .enumerate()
                        .map(|(at, &b)| in_range("weight_zero_point", at, i32::from(b as i8)))
                        .collect::<Result<Vec<_>>>()?,
                )
            };
            (elements, zero_points)
        }
        Codes::PackedInt32 => {
            let shape_tensor = get("weight_shape", &[DType::Int64, DType::Int32], &[2])?;
            let dims: Vec<i64> = match shape_tensor.dtype {
                DType::Int64 => shape_tensor
                    .data
                    .chunks_exact(8)
                    .map(|b| i64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]))
                    .collect(),
                _ => shape_tensor
                    .data
                    .chunks_exact(4)
                    .map(|b| i64::from(i32::from_le_bytes([b[0], b[1], b[2], b[3]])))
                    .collect(),
            };
            if dims != [rows as i64, cols as i64] {
                return Err(bad(format!("tensor \"weight_shape\" says {dims:?}, the weight is [{rows}, {cols}]")));
            }
            let row_bytes = packed_row_bytes(bits, cols);
            let packed = get("weight_packed", &[DType::Int32], &[rows, row_bytes / 4])?;
            let mut elements = vec![0u8; rows * cols];
            for (codes, raw) in elements.chunks_exact_mut(cols).zip(packed.data.chunks_exact(row_bytes)) {
                unpack_row(bits, raw, codes)?;
                codes.iter_mut().for_each(|c| *c &= mask);
            }
            let zero_points = if params.symmetric {
                None
            } else {
                let words = packed_row_bytes(bits, rows) / 4;
                let z = get("weight_zero_point", &[DType::Int32], &[words, s.groups])?;
                let mut zero_points = vec![0i32; rows * s.groups];
                let mut packed = vec![0u8; 4 * words];
                let mut column = vec![0u8; rows];
                for g in 0..s.groups {
                    for w in 0..words {
                        packed[4 * w..4 * w + 4]
                            .copy_from_slice(&z.data[4 * (w * s.groups + g)..4 * (w * s.groups + g) + 4]);
                    }
                    unpack_row(bits, &packed, &mut column)?;
                    for (r, &c) in column.iter().enumerate() {
                        zero_points[r * s.groups + g] = signed(c & mask, bits);
                    }
                }
                Some(zero_points)
            };
            (elements, zero_points)
        }
    };
    Ok(Quantized {
        scheme: scheme.clone(),
        shape: vec![rows, cols],
        axis: -1,
        elements,
        scales,
        global_scale: None,
        extras: Some(Box::new(Extras { zero_points, ..Extras::default() })),
    })
}
