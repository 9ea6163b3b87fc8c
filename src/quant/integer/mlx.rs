//! MLX's affine quantization (`mlx.core.quantize` / `dequantize`, mode "affine", as its CPU
//! backend computes them): per group of `group` input features a float `scale` and `bias` in the
//! weight's own dtype, `w ~ scale * q + bias` with unsigned codes `q` of `bits` bits packed into
//! uint32 words as one LSB-first bit stream.
//!
//! The quantizer (mlx `backend/cpu/quantized.cpp`, `quantize<T, U>`) works in float32: the group's
//! maximum and minimum with NaN skipped (`std::max`/`std::min` keep the running value when
//! compared with a NaN), `scale = max((max - min) / (2^bits - 1), 1e-7)` signed so that the edge
//! of larger magnitude maps to a code, `q0 = rint(edge / scale)`, and where `q0 != 0`,
//! `scale = edge / q0` and `bias = edge` (else bias 0); codes `rint((w - bias) / scale)` clamped
//! to `[0, 2^bits - 1]` with the float32 scale (not the stored one); a NaN code is 0 (the clamp
//! passes the NaN on and the conversion of x86-64's release build gives 0). Scale and bias are
//! 1-bit codes take the group's minimum as bias and `max - min` (at least 1e-7) as scale (mlx
//! 0.32.4's 1-bit path, recorded from the live peer). Scale and bias are
//! then rounded to the weight's dtype by MLX's own conversions (`_MLX_Float16`: a NaN is
//! sign | 0x7D00; `_MLX_BFloat16`: a NaN is 0x7FC0).
//!
//! `mlx.core.dequantize` on the CPU is composed of ops (`ops.cpp` `affine_dequantize`'s
//! fallback): the code cast to the scales' dtype, `multiply` by the scale and `add` of the bias,
//! each an op of its own in that dtype (float16 and bfloat16: the float32 result rounded each
//! time, two roundings; float32: no fused multiply-add).

use super::{Extras, Family, NanBits, Narrowing, Options, Params, StoredTensor, Weight};
use crate::alloc_prelude::*;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::quant::blocks::{Quantized, Scales, Scheme};

/// How a group's scale and bias are chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ScaleRule {
    /// The edge of larger magnitude snapped to a code (`scale = edge / q0`, `bias = edge`).
    EdgeSnapped,
    /// `scale = max(max - min, 1e-7)`, `bias = min` (mlx 0.32.4's 1-bit codes, recorded from
    /// the live peer: its 1-bit path is not the multi-bit one).
    MinMax,
}

/// The bit widths `mx.quantize` accepts in mode "affine" (mlx 0.32.4; 7 refused), each with its
/// scale rule.
const BITS: &[(u32, ScaleRule)] = &[
    (1, ScaleRule::MinMax),
    (2, ScaleRule::EdgeSnapped),
    (3, ScaleRule::EdgeSnapped),
    (4, ScaleRule::EdgeSnapped),
    (5, ScaleRule::EdgeSnapped),
    (6, ScaleRule::EdgeSnapped),
    (8, ScaleRule::EdgeSnapped),
];
/// The group sizes it accepts.
const GROUPS: &[usize] = &[32, 64, 128];
/// `mx.quantize`'s defaults: `bits=4`, `group_size=64`.
const DEFAULT_BITS: u32 = 4;
const DEFAULT_GROUP: usize = 64;
/// The smallest scale magnitude (`eps` in `quantize<T, U>`).
const EPS: f32 = 1e-7;
/// MLX's NaN codes when it narrows float32: `__MLX_HALF_NAN__` with the sign, `__MLX_BFLOAT_NAN__`.
const FLOAT16_NAN: NanBits = NanBits::Fixed(0x7D00, 0xFD00);
const BFLOAT16_NAN: NanBits = NanBits::Fixed(0x7FC0, 0x7FC0);

/// The row.
pub(crate) const ROW: Family = Family {
    name: "mlx",
    grammar: "mlx:affine,bits=1|2|3|4|5|6|8,group=32|64|128",
    source: "mlx 0.32.4 mlx.core.quantize / dequantize mode=\"affine\" on the CPU (backend/cpu/quantized.cpp \
             quantize<T, U>; ops.cpp affine_dequantize); checked by tests/integer_mlx.rs on \
             scripts/gen_integer_mlx_fixtures.py, live by scripts/crosscheck_mlx.py",
    parse,
    quantize,
    dequantize,
    storage,
    from_storage,
};

fn parse(format: &str, options: &mut Options<'_>) -> Result<Params> {
    let bad = |message: String| Error::InvalidOp { op: format!("scheme mlx:{format}"), message };
    if format != "affine" {
        return Err(bad("MLX's integer mode is affine (mlx:affine,bits=N,group=N); its MX modes are block \
                        recipes of their own"
            .into()));
    }
    let bits = match super::take(options, "bits") {
        None => DEFAULT_BITS,
        Some(v) => v
            .parse()
            .ok()
            .filter(|b| BITS.iter().any(|(n, _)| n == b))
            .ok_or_else(|| bad(format!("bits={v}: MLX's affine mode takes bits 1, 2, 3, 4, 5, 6 or 8")))?,
    };
    let group = match super::take(options, "group") {
        None => DEFAULT_GROUP,
        Some(v) => v
            .parse()
            .ok()
            .filter(|g| GROUPS.contains(g))
            .ok_or_else(|| bad(format!("group={v}: MLX's group sizes are 32, 64 and 128")))?,
    };
    Ok(Params { family: "mlx", bits, group: Some(group), symmetric: false, act_order: false, choices: Vec::new() })
}

fn group_of(params: &Params) -> usize {
    params.group.unwrap_or(DEFAULT_GROUP)
}

fn check_shape(scheme: &str, group: usize, cols: usize) -> Result<()> {
    if cols % group != 0 {
        return Err(Error::InvalidOp {
            op: format!("{scheme} quantize"),
            message: format!(
                "a weight of {cols} input features is not a whole number of groups of {group} (MLX refuses it)"
            ),
        });
    }
    Ok(())
}

/// `std::max` and `std::min` of C++: the first argument unless the comparison says otherwise.
fn cxx_max(a: f32, b: f32) -> f32 {
    if a < b {
        b
    } else {
        a
    }
}

fn cxx_min(a: f32, b: f32) -> f32 {
    if b < a {
        b
    } else {
        a
    }
}

/// One group's float32 scale and bias (before rounding to the weight's dtype).
fn group_scale(values: &[f32], n_bins: f32, rule: ScaleRule) -> (f32, f32) {
    let mut w_max = f32::NEG_INFINITY;
    let mut w_min = f32::INFINITY;
    for &v in values {
        w_max = cxx_max(w_max, v);
        w_min = cxx_min(w_min, v);
    }
    if rule == ScaleRule::MinMax {
        return (cxx_max((w_max - w_min) / n_bins, EPS), w_min);
    }
    let mask = w_min.abs() > w_max.abs();
    let mut scale = cxx_max((w_max - w_min) / n_bins, EPS);
    if !mask {
        scale = -scale;
    }
    let edge = if mask { w_min } else { w_max };
    let q0 = crate::fmath::round_ties_even(edge / scale);
    let mut bias = 0.0;
    if q0 != 0.0 {
        scale = edge / q0;
        bias = edge;
    }
    (scale, bias)
}

/// 1.5 * 2^23: adding and subtracting it rounds a float32 of magnitude below 2^22 to an
/// integer, ties to even, in the CPU's own addition (ggml's `nearest_int` trick).
const ROUNDER: f32 = 12_582_912.0;

/// `rint(x)` clamped to `[0, max]` and converted, as `quantize<T, U>` does: exact for |x| < 2^22
/// and, beyond, on the same side of the clamp (max is at most 255); NaN passes the clamp and
/// converts to 0, as the peer's x86-64 build does.
#[inline(always)]
fn code(x: f32, max: f32) -> u8 {
    let q = if x.abs() < 4_194_304.0 { (x + ROUNDER) - ROUNDER } else { x };
    cxx_min(cxx_max(q, 0.0), max) as u8
}

fn quantize(scheme: &Scheme, params: &Params, weight: &Weight<'_>) -> Result<Quantized> {
    let group = group_of(params);
    check_shape(scheme.name(), group, weight.cols)?;
    let values = super::widened(weight)?;
    let n_bins = ((1u32 << params.bits) - 1) as f32;
    let groups = values.len() / group;
    let rule = BITS.iter().find(|(b, _)| *b == params.bits).map_or(ScaleRule::EdgeSnapped, |(_, r)| *r);
    let mut scales = vec![0f32; groups];
    let mut biases = vec![0f32; groups];
    let mut elements = vec![0u8; values.len()];
    for (((xs, codes), s), b) in
        values.chunks_exact(group).zip(elements.chunks_exact_mut(group)).zip(&mut scales).zip(&mut biases)
    {
        let (scale, bias) = group_scale(xs, n_bins, rule);
        for (c, &v) in codes.iter_mut().zip(xs) {
            *c = code((v - bias) / scale, n_bins);
        }
        *s = scale;
        *b = bias;
    }
    let (scales, biases) = match weight.dtype {
        DType::Float => (Scales::Float32(scales), Scales::Float32(biases)),
        dtype => {
            let narrowing = Narrowing::new(dtype, nan_bits(dtype))?;
            let mut s = vec![0u16; groups];
            let mut b = vec![0u16; groups];
            narrowing.codes(&scales, &mut s)?;
            narrowing.codes(&biases, &mut b)?;
            if dtype == DType::Float16 {
                (Scales::Float16(s), Scales::Float16(b))
            } else {
                (Scales::Bfloat16(s), Scales::Bfloat16(b))
            }
        }
    };
    Ok(Quantized {
        scheme: scheme.clone(),
        shape: vec![weight.rows, weight.cols],
        axis: -1,
        elements,
        scales,
        global_scale: None,
        extras: Some(Box::new(Extras { biases: Some(biases), ..Extras::default() })),
    })
}

fn nan_bits(dtype: DType) -> NanBits {
    if dtype == DType::Float16 {
        FLOAT16_NAN
    } else {
        BFLOAT16_NAN
    }
}

fn biases_of(q: &Quantized) -> Result<&Scales> {
    q.extras.as_ref().and_then(|e| e.biases.as_ref()).ok_or_else(|| Error::InvalidOp {
        op: format!("{} dequantize", q.scheme.name()),
        message: "the quantized weight carries no biases".into(),
    })
}

/// Checks what a dequantize or storage reads: elements, scales and biases of one dtype, lengths.
fn parts<'a>(params: &Params, q: &'a Quantized) -> Result<(usize, DType, &'a Scales)> {
    let group = group_of(params);
    let biases = biases_of(q)?;
    let op = || format!("{} dequantize", q.scheme.name());
    let [rows, cols] = super::matrix(&q.scheme, &q.shape)?;
    check_shape(q.scheme.name(), group, cols)?;
    let n = rows * cols;
    let dtype = super::scales_bits(&q.scales).map(|(d, _)| d);
    let bias_dtype = super::scales_bits(biases).map(|(d, _)| d);
    let Some(dtype) = dtype.filter(|d| Some(*d) == bias_dtype) else {
        return Err(Error::InvalidOp { op: op(), message: "scales and biases must be floats of one dtype".into() });
    };
    if q.elements.len() != n || q.scales.len() != n / group || biases.len() != n / group {
        return Err(Error::InvalidOp {
            op: op(),
            message: format!(
                "{} codes, {} scales and {} biases for a {rows}x{cols} weight in groups of {group}",
                q.elements.len(),
                q.scales.len(),
                biases.len()
            ),
        });
    }
    if let Some(at) = q.elements.iter().position(|&c| u32::from(c) >> params.bits != 0) {
        return Err(Error::InvalidOp {
            op: op(),
            message: format!("element {at} holds code {} (more than {} bits)", q.elements[at], params.bits),
        });
    }
    Ok((group, dtype, biases))
}

/// Elements dequantized per pass through the rounding plans (a multiple of every group size).
const CHUNK: usize = 4096;

fn dequantize(params: &Params, q: &Quantized, dtype: DType) -> Result<Vec<u8>> {
    use zerocopy::IntoBytes;
    let (group, own, biases) = parts(params, q)?;
    let scales = super::scales_widened(&q.scales)?;
    let biases = super::scales_widened(biases)?;
    let n = q.elements.len();
    // In the scales' dtype: float32 multiply then add; 16-bit types round after each.
    let narrowing = if own == DType::Float { None } else { Some(Narrowing::new(own, nan_bits(own))?) };
    let width = if own == DType::Float { 4 } else { 2 };
    let mut out = Vec::with_capacity(n * width);
    let mut values = [0f32; CHUNK];
    let mut codes = [0u16; CHUNK];
    // Whole groups per chunk (CHUNK is a multiple of every group size): no division per element.
    for (start, elements) in (0..n).step_by(CHUNK).zip(q.elements.chunks(CHUNK)) {
        let first = start / group;
        let (chunk, codes) = (&mut values[..elements.len()], &mut codes[..elements.len()]);
        for ((vs, cs), &s) in chunk.chunks_mut(group).zip(elements.chunks(group)).zip(&scales[first..]) {
            for (v, &c) in vs.iter_mut().zip(cs) {
                *v = f32::from(c) * s;
            }
        }
        if let Some(narrowing) = &narrowing {
            narrowing.round(chunk, codes)?;
        }
        for (vs, &b) in chunk.chunks_mut(group).zip(&biases[first..]) {
            for v in vs.iter_mut() {
                // A NaN product keeps its own bits (x86-64 returns the first NaN operand).
                if !v.is_nan() {
                    *v += b;
                }
            }
        }
        match &narrowing {
            Some(narrowing) => {
                narrowing.codes(chunk, codes)?;
                out.extend_from_slice(codes.as_bytes());
            }
            None => out.extend_from_slice(chunk.as_bytes()),
        }
    }
    super::convert_output(own, out, dtype)
}

fn storage(params: &Params, q: &Quantized) -> Result<Vec<StoredTensor>> {
    let (group, dtype, biases) = parts(params, q)?;
    let [rows, cols] = [q.shape[0], q.shape[1]];
    let weight = crate::packing::pack_bit_stream(params.bits, &q.elements)?;
    let scale_bits = super::scales_bits(&q.scales).expect("float scales checked").1;
    let bias_bits = super::scales_bits(biases).expect("float biases checked").1;
    Ok(vec![
        StoredTensor {
            name: "weight".into(),
            dtype: DType::Uint32,
            shape: vec![rows, cols * params.bits as usize / 32],
            data: weight,
        },
        StoredTensor { name: "scales".into(), dtype, shape: vec![rows, cols / group], data: scale_bits },
        StoredTensor { name: "biases".into(), dtype, shape: vec![rows, cols / group], data: bias_bits },
    ])
}

fn from_storage(scheme: &Scheme, params: &Params, tensors: &[StoredTensor], shape: [usize; 2]) -> Result<Quantized> {
    let group = group_of(params);
    let [rows, cols] = shape;
    super::checked_size(scheme, rows, cols)?;
    check_shape(scheme.name(), group, cols)?;
    let words = cols * params.bits as usize / 32;
    let floats = [DType::Float, DType::Float16, DType::Bfloat16];
    let weight = super::stored(scheme.name(), tensors, "weight", &[DType::Uint32], &[rows, words])?;
    let scales = super::stored(scheme.name(), tensors, "scales", &floats, &[rows, cols / group])?;
    let biases = super::stored(scheme.name(), tensors, "biases", &[scales.dtype], &[rows, cols / group]).map_err(
        |e| match e {
            Error::InvalidOp { op, message } => {
                Error::InvalidOp { op, message: format!("{message} (biases are of the scales' dtype)") }
            }
            e => e,
        },
    )?;
    let mut elements = vec![0u8; rows * cols];
    crate::packing::unpack_bit_stream(params.bits, &weight.data, &mut elements)?;
    let scales_of = |t: &StoredTensor| super::scales_from_bits(t.dtype, &t.data);
    Ok(Quantized {
        scheme: scheme.clone(),
        shape: vec![rows, cols],
        axis: -1,
        elements,
        scales: scales_of(scales)?,
        global_scale: None,
        extras: Some(Box::new(Extras { biases: Some(scales_of(biases)?), ..Extras::default() })),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_with_mlx_defaults() {
        let s = Scheme::parse("mlx:affine").unwrap();
        let p = s.integer().unwrap();
        assert_eq!((p.bits, p.group), (4, Some(64)));
        let p = Scheme::parse("mlx:affine,bits=3,group=128").unwrap().integer().unwrap().clone();
        assert_eq!((p.bits, p.group), (3, Some(128)));
        for bad in ["mlx:affine,bits=7", "mlx:affine,group=16", "mlx:mxfp4", "mlx:affine,sym"] {
            assert!(Scheme::parse(bad).is_err(), "{bad}");
        }
    }
}
