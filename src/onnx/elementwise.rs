//! The elementwise arithmetic the expanded function bodies of Range and DynamicQuantizeLinear
//! need (Add, Sub, Div, Ceil, Relu, Max, Min, Clip, Round, ReduceMax, ReduceMin), with numpy
//! broadcasting. Each result is computed exactly in `f64` or `i128` and rounded once into the
//! operand type, which for float32 and narrower operands is the IEEE operation in that type.

use super::budget::tensor_bytes;
use super::runner::err;
use crate::alloc_prelude::*;
use crate::dtype::{DType, Kind};
use crate::error::{shown_shape, Result};
use crate::format;
use crate::ops::{self, AllocationGuard};
use crate::packing;
use crate::round::{self, RoundingMode, RoundingOptions};
use crate::tensor::{element_count, Number, Tensor};
use crate::value::Value;

/// numpy broadcasting of two shapes.
fn broadcast_shape(op: &str, a: &[usize], b: &[usize]) -> Result<Vec<usize>> {
    let rank = a.len().max(b.len());
    let dim = |s: &[usize], i: usize| if i + s.len() >= rank { s[i + s.len() - rank] } else { 1 };
    (0..rank)
        .map(|i| match (dim(a, i), dim(b, i)) {
            (x, y) if x == y => Ok(x),
            (1, y) => Ok(y),
            (x, 1) => Ok(x),
            (x, y) => Err(err(
                op,
                format!("shapes {} and {} do not broadcast (axis {i}: {x} vs {y})", shown_shape(a), shown_shape(b)),
            )),
        })
        .collect()
}

/// The flat index into `shape` (right-aligned, size-1 axes repeated) of output index `flat` of `out`.
fn source_index(flat: usize, out: &[usize], shape: &[usize]) -> usize {
    let mut rest = flat;
    let mut index = 0;
    let mut stride = 1;
    for (axis, &d) in out.iter().enumerate().rev() {
        let coordinate = rest % d;
        rest /= d;
        let offset = axis + shape.len();
        if offset >= out.len() {
            let s = shape[offset - out.len()];
            if s != 1 {
                index += coordinate * stride;
            }
            stride *= s;
        }
    }
    index
}

/// Rounds a result once into the dtype. Arithmetic on float32 and narrower operands computed in
/// f64 and then rounded is correctly rounded (f64 carries more than twice their precision plus
/// two bits), so this equals the IEEE operation in the operand type.
fn encode_number(dtype: DType, n: Number) -> u64 {
    match (dtype.kind(), n) {
        (Kind::Float(f), Number::Float(x)) => round::encode(f, Value::from_f64(x), RoundingOptions::IEEE),
        (Kind::Integer { bits, .. }, Number::Int(i)) => {
            (i as u64) & if bits >= 64 { u64::MAX } else { (1 << bits) - 1 }
        }
        (Kind::Bool, Number::Int(i)) => u64::from(i != 0),
        _ => unreachable!("numbers match their dtype"),
    }
}

pub(super) fn numeric(op: &str, dtype: DType) -> Result<()> {
    match dtype.kind() {
        Kind::Float(_) | Kind::Integer { .. } => Ok(()),
        _ => Err(err(op, format!("does not take {dtype}"))),
    }
}

/// The raw bytes of a numeric tensor.
fn raw_of<'t>(op: &str, t: &'t Tensor) -> Result<&'t [u8]> {
    t.raw().ok_or_else(|| err(op, format!("does not take {}", t.dtype())))
}

/// Add, Sub or Div with numpy broadcasting; the output is charged to `guard` before it is
/// allocated, and written in place.
pub(super) fn binary(op: &str, a: &Tensor, b: &Tensor, guard: &mut dyn AllocationGuard) -> Result<Tensor> {
    if a.dtype() != b.dtype() {
        return Err(err(op, format!("operands have different types {} and {}", a.dtype(), b.dtype())));
    }
    let dtype = a.dtype();
    numeric(op, dtype)?;
    let shape = broadcast_shape(op, a.shape(), b.shape())?;
    let n = element_count(&shape)?;
    let bytes = packing::raw_len(dtype, n)?;
    guard.before_allocating(n, bytes)?;
    let mut out = ops::zeroed(op, bytes)?;
    let (ra, rb) = (raw_of(op, a)?, raw_of(op, b)?);
    for i in 0..n {
        let x = Number::of(dtype, packing::get(dtype, ra, source_index(i, &shape, a.shape())))?;
        let y = Number::of(dtype, packing::get(dtype, rb, source_index(i, &shape, b.shape())))?;
        let r = match (x, y) {
            (Number::Float(x), Number::Float(y)) => Number::Float(match op {
                "Add" => x + y,
                "Sub" => x - y,
                "Max" => numpy_maximum(x, y),
                "Min" => numpy_minimum(x, y),
                _ => x / y,
            }),
            (Number::Int(x), Number::Int(y)) => Number::Int(match op {
                "Add" => x + y,
                "Sub" => x - y,
                "Max" => x.max(y),
                "Min" => x.min(y),
                _ if y == 0 => return Err(err(op, format!("integer division by zero at element {i}"))),
                // Integer Div truncates toward zero (C semantics, as onnxruntime and the reference).
                _ => x / y,
            }),
            _ => unreachable!("same dtype"),
        };
        packing::set(dtype, &mut out, i, encode_number(dtype, r));
    }
    Tensor::from_raw(dtype, shape, out)
}

/// Ceil, Relu or Round, charged to `guard` before the output is allocated.
pub(super) fn unary(op: &str, a: &Tensor, guard: &mut dyn AllocationGuard) -> Result<Tensor> {
    let dtype = a.dtype();
    unary_with(op, a, guard, |v| {
        Ok(match (op, v) {
            ("Ceil", Number::Float(x)) => Number::Float(x.ceil()),
            ("Round", Number::Float(x)) => Number::Float(round_half_even(x)),
            ("Ceil" | "Round", Number::Int(_)) => return Err(err(op, format!("does not take {dtype}"))),
            (_, Number::Float(x)) => Number::Float(if x < 0.0 { 0.0 } else { x }),
            (_, Number::Int(i)) => Number::Int(i.max(0)),
        })
    })
}

/// An element-wise op given as a function of one number, charged to `guard` before the output is
/// allocated.
pub(super) fn unary_with(
    op: &str,
    a: &Tensor,
    guard: &mut dyn AllocationGuard,
    f: impl Fn(Number) -> Result<Number>,
) -> Result<Tensor> {
    let dtype = a.dtype();
    numeric(op, dtype)?;
    let n = a.len();
    let bytes = packing::raw_len(dtype, n)?;
    guard.before_allocating(n, bytes)?;
    let mut out = ops::zeroed(op, bytes)?;
    let src = raw_of(op, a)?;
    for i in 0..n {
        let r = f(Number::of(dtype, packing::get(dtype, src, i))?)?;
        packing::set(dtype, &mut out, i, encode_number(dtype, r));
    }
    Tensor::from_raw(dtype, a.shape().to_vec(), out)
}

/// ONNX Round: to the nearest integer, ties to even, by the rounding core (NaN, infinities and
/// values from 2^64 up, all integers or not numbers, stay as they are).
pub(super) fn round_half_even(x: f64) -> f64 {
    match Value::from_f64(x) {
        Value::Finite(exact) => match round::round_to_integer(exact, RoundingMode::NearestEven) {
            Some((negative, magnitude)) => {
                let m = magnitude as f64;
                if negative {
                    -m
                } else {
                    m
                }
            }
            None => x,
        },
        _ => x,
    }
}

/// numpy's `maximum` (ONNX Max, ReduceMax): a NaN operand propagates (the first, if both are);
/// of two equal operands (+0 and -0) the second, as numpy gives them.
pub(super) fn numpy_maximum(x: f64, y: f64) -> f64 {
    if x.is_nan() || (!y.is_nan() && x > y) {
        x
    } else {
        y
    }
}

/// numpy's `minimum`, as [`numpy_maximum`].
pub(super) fn numpy_minimum(x: f64, y: f64) -> f64 {
    if x.is_nan() || (!y.is_nan() && x < y) {
        x
    } else {
        y
    }
}

/// numpy's `clip(x, low, high)` (the onnx reference's Clip): the low bound, then the high one; a
/// NaN value or bound propagates; a value equal to a bound stays itself (so -0 clipped below at
/// +0 stays -0, as numpy gives it).
pub(super) fn clip(v: Number, low: Option<Number>, high: Option<Number>) -> Result<Number> {
    let bounded = |v: Number, b: Option<Number>, keep_larger: bool| match (v, b) {
        (v, None) => v,
        (Number::Float(x), Some(Number::Float(b))) => Number::Float(if x.is_nan() {
            x
        } else if b.is_nan() || (keep_larger && x < b) || (!keep_larger && x > b) {
            b
        } else {
            x
        }),
        (Number::Int(x), Some(Number::Int(b))) => Number::Int(if keep_larger { x.max(b) } else { x.min(b) }),
        // Clip-6 bounds are float attributes on any input type: compared as floats.
        (Number::Int(x), Some(Number::Float(b))) => {
            let b = if keep_larger { b.ceil() } else { b.floor() };
            let x = x as f64;
            Number::Int((if keep_larger { x.max(b) } else { x.min(b) }) as i128)
        }
        (Number::Float(x), Some(Number::Int(b))) => {
            Number::Float(if keep_larger { x.max(b as f64) } else { x.min(b as f64) })
        }
    };
    Ok(bounded(bounded(v, low, true), high, false))
}

/// What ReduceMax (`largest` false) or ReduceMin of no elements gives: "minus infinity (if
/// supported by the datatype) or the minimum value of the data type otherwise" (ReduceMax's
/// text; plus infinity or the maximum for ReduceMin), as the onnx reference gives it.
fn empty_reduction(dtype: DType, largest: bool) -> Number {
    match dtype.kind() {
        Kind::Float(f) => {
            // Formats without infinities take their largest magnitude: saturation gives it.
            let saturate = f.infinity_code(false).is_none();
            let code = round::encode(
                f,
                Value::Infinite { negative: !largest },
                RoundingOptions { saturate, ..RoundingOptions::IEEE },
            );
            Number::Float(f64::from_bits(round::encode(&format::F64, f.decode(code), RoundingOptions::IEEE)))
        }
        Kind::Integer { bits, signed } => {
            let (low, high) = crate::dtype::integer_bounds(bits, signed);
            Number::Int(if largest { high } else { low })
        }
        _ => Number::Int(i128::from(largest)),
    }
}

/// ReduceMax or ReduceMin over `axes` (all when absent or empty, unless `noop`), NaN propagating;
/// the output is charged to `guard` before it is allocated.
pub(super) fn reduce(
    op: &str,
    a: &Tensor,
    axes: Option<&[i64]>,
    keepdims: bool,
    noop: bool,
    guard: &mut dyn AllocationGuard,
) -> Result<Tensor> {
    let dtype = a.dtype();
    numeric(op, dtype)?;
    let rank = a.shape().len();
    let mut reduced = vec![false; rank];
    match axes {
        Some(list) if !list.is_empty() => {
            for &axis in list {
                let r = rank as i64;
                if axis < -r || axis >= r {
                    return Err(err(op, format!("axis {axis} is out of range for rank {rank}")));
                }
                reduced[if axis < 0 { axis + r } else { axis } as usize] = true;
            }
        }
        _ if noop => {
            guard.before_allocating(a.len(), usize::try_from(tensor_bytes(a)).unwrap_or(usize::MAX))?;
            return Ok(a.clone());
        }
        _ => reduced.fill(true),
    }
    let out_shape: Vec<usize> = a.shape().iter().zip(&reduced).filter(|(_, &r)| !r).map(|(&d, _)| d).collect();
    let kept_shape: Vec<usize> = a.shape().iter().zip(&reduced).map(|(&d, &r)| if r { 1 } else { d }).collect();
    let m = element_count(&out_shape)?;
    let bytes = packing::raw_len(dtype, m)?;
    guard.before_allocating(a.len(), bytes.saturating_add(m.saturating_mul(core::mem::size_of::<Option<Number>>())))?;
    let mut acc: Vec<Option<Number>> = vec![None; m];
    let src = raw_of(op, a)?;
    for i in 0..a.len() {
        let k = source_index_into(i, a.shape(), &kept_shape);
        let v = Number::of(dtype, packing::get(dtype, src, i))?;
        acc[k] = Some(match (acc[k], v) {
            (None, v) => v,
            (Some(Number::Float(x)), Number::Float(y)) => {
                Number::Float(if op == "ReduceMax" { numpy_maximum(x, y) } else { numpy_minimum(x, y) })
            }
            (Some(Number::Int(x)), Number::Int(y)) => Number::Int(if op == "ReduceMax" { x.max(y) } else { x.min(y) }),
            _ => unreachable!("one dtype"),
        });
    }
    let mut out = ops::zeroed(op, bytes)?;
    // Only an empty input leaves an output element without a value.
    let identity = empty_reduction(dtype, op == "ReduceMin");
    for (k, v) in acc.into_iter().enumerate() {
        packing::set(dtype, &mut out, k, encode_number(dtype, v.unwrap_or(identity)));
    }
    let shape = if keepdims { kept_shape } else { out_shape };
    Tensor::from_raw(dtype, shape, out)
}

/// The flat index in `kept` (the input's shape with reduced axes set to 1) of input element `flat`.
fn source_index_into(flat: usize, shape: &[usize], kept: &[usize]) -> usize {
    let mut rest = flat;
    let mut index = 0;
    let mut stride = 1;
    for (&d, &k) in shape.iter().zip(kept).rev() {
        let coordinate = rest % d;
        rest /= d;
        if k != 1 {
            index += coordinate * stride;
        }
        stride *= k;
    }
    index
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::Unbudgeted;

    #[test]
    fn broadcasting() {
        assert_eq!(broadcast_shape("Add", &[2, 3], &[3]).unwrap(), [2, 3]);
        assert_eq!(broadcast_shape("Add", &[], &[4]).unwrap(), [4]);
        assert!(broadcast_shape("Add", &[2, 3], &[2]).is_err());
        let a = Tensor::from_f32(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]).reshape(vec![2, 3]).unwrap();
        let b = Tensor::from_f32(&[10.0, 20.0, 30.0]);
        let add = binary("Add", &a, &b, &mut Unbudgeted).unwrap();
        assert_eq!(add.to_f32_vec().unwrap(), [11.0, 22.0, 33.0, 14.0, 25.0, 36.0]);
        let c = Tensor::from_f32(&[2.0, 4.0]).reshape(vec![2, 1]).unwrap();
        let div = binary("Div", &a, &c, &mut Unbudgeted).unwrap();
        assert_eq!(div.to_f32_vec().unwrap(), [0.5, 1.0, 1.5, 1.0, 1.25, 1.5]);
        let i4 = Tensor::from_codes(DType::Int4, vec![3], &[1, 0xF, 7]).unwrap();
        let sum = binary("Add", &i4, &Tensor::from_codes(DType::Int4, vec![1], &[1]).unwrap(), &mut Unbudgeted);
        assert_eq!(sum.unwrap().codes().unwrap(), [2, 0, 8]);
    }

    #[test]
    fn float32_arithmetic_is_ieee() {
        let a = Tensor::from_f32(&[0.1, 3e38, 1.0]);
        let b = Tensor::from_f32(&[0.2, 3e38, 3.0]);
        let sum = binary("Add", &a, &b, &mut Unbudgeted).unwrap().to_f32_vec().unwrap();
        assert_eq!(sum[0], 0.1f32 + 0.2f32);
        assert_eq!(sum[1], f32::INFINITY);
        assert_eq!(binary("Div", &a, &b, &mut Unbudgeted).unwrap().to_f32_vec().unwrap()[2], 1.0f32 / 3.0);
        let ceil = unary("Ceil", &Tensor::from_f32(&[-0.5, 2.1]), &mut Unbudgeted).unwrap();
        assert_eq!(ceil.to_f32_vec().unwrap(), [-0.0, 3.0]);
        let relu = unary("Relu", &Tensor::from_f32(&[-3.0, 2.0]), &mut Unbudgeted).unwrap();
        assert_eq!(relu.to_f32_vec().unwrap(), [0.0, 2.0]);
    }
}
