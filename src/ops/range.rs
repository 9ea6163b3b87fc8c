//! ONNX `Range` (versions 11 and 27) and OpenVINO `Range` (versions 1 and 4).
//!
//! Range is a count and a formula for each element, computed in the accumulate type the profile
//! names (profile rows `range.count` and `range.values`, tables/profiles.md), then
//! converted **once** into the output type through the Cast core
//! ([`crate::convert::encode_element`]). "Exact" means an exact binary rational: every finite
//! element value is one, and so is `start + i * delta`, so `spec` rounds exactly once.
//!
//! ## ONNX Range
//!
//! | | `spec` | `onnx-reference` | `onnxruntime` |
//! |---|---|---|---|
//! | count | `max(ceil((limit - start) / delta), 0)`, exact | numpy's `arange` length (below) | `ceil((f64(limit) - f64(start)) / f64(delta))` |
//! | value `i` | `start + i*delta` exact, rounded once | numpy's fill (below), then rounded to T | repeated addition in T |
//!
//! * numpy, for Range-11 (`np.arange(start.item(), limit.item(), delta.item()).astype(T)`): the
//!   difference is exact for integers and a float64 subtraction for floats; the quotient is a
//!   correctly rounded float64 division; a quotient that underflows to +0 while the difference is
//!   not 0 gives **one** element. Values are `start`, `start + delta`, then
//!   `start + i * delta'` with `delta' = (start + delta) - start`, all in float64.
//! * numpy, for Range-27 with float16/bfloat16 (`np.arange(start.astype(stash), float(limit),
//!   float(delta), dtype=stash)`): the same steps in the stash type, float32 by default. Under
//!   numpy 2's promotion rules a Python float meeting a float32 array is a float32, so the
//!   difference, the quotient and the fill are all float32 operations.
//! * Integer outputs: every profile's values are the low bits of the exact `start + i*delta`
//!   (repeated wrapping addition and numpy's int64 fill give the same bits); only counts differ.
//! * Errors in every profile: `delta == 0`, a count that is not finite (NaN, or an infinite
//!   start or limit), a count above [`RangeOptions::max_elements`] (checked before allocating).
//! * `spec` with `delta = ±inf` and finite ends: the formula gives `ceil(±0) = 0` elements.
//! * `spec` ignores `stash_type`: an exact value rounded once needs no intermediate type.
//! * onnxruntime 1.31.1 loads opsets up to 26, so Range-27 under `onnxruntime` is `spec`
//!   ([`RangePolicy::newest_version`](crate::profile::RangePolicy::newest_version)).
//! * `start`, `limit` and `delta` may have shape `[]` or `[1]`: both implementations accept `[1]`
//!   (only ONNX shape inference rejects it).
//!
//! ## OpenVINO Range
//!
//! `spec` (and the two ONNX profiles, for which Range-4 is not an op) follows the Range-4 text: an
//! integral `output_type` truncates start, stop and step toward zero first; the count is
//! `ceil((f64(stop) - f64(start)) / f64(step))` in float64 (each operand rounded once to float64);
//! value `i` is `start + i*step` exact, rounded once into `output_type`. A step that truncates to
//! 0 is an error ("behavior is undefined"); non-finite start or stop and a NaN step are errors; an
//! infinite step gives no elements.
//!
//! `openvino` follows OpenVINO 2026.4's core reference (research §2.2, verified there on 400 cases):
//! every input read as float64; finite start and stop and a finite nonzero step, else an error;
//! truncation for integral outputs; the count `ceil(|span| / |step|)` converted to uint32 as
//! x86-64 does (`cvttsd2si` then the low 32 bits: a step truncated to 0 gives 0 elements);
//! float32 and float64 outputs compute `start + T(i) * step` in T; integral outputs add
//! repeatedly in T, wrapping; float16 computes in float32 and rounds to nearest even; bfloat16
//! computes in float32 and rounds with OpenVINO's own rule ([`openvino_bfloat16`]). Range-1 keeps
//! the typed start and step (no float64 round trip) and counts the same way.
//!
//! Extrapolations (OpenVINO has no kernel for them; documented, not verified): the other float
//! outputs (float8, float6, float4, E8M0) compute in float32 like float16 and convert through the
//! Cast core; int4, uint4, int2 and uint2 outputs wrap like the other integers.

use crate::convert::{decode_element, encode_element, CastOptions, Element, RoundMode};
use crate::dtype::{DType, Kind};
use crate::error::{Error, Result};
use crate::format;
use crate::ops::{schema_version, zeroed, AllocationGuard, Unbudgeted};
use crate::packing;
pub use crate::profile::{OpenVinoRange, RangeCount, RangeValues};
use crate::profile::{Policy, Profile, SPEC};
use crate::round::{self, NanFallback, RoundingMode, RoundingOptions};
use crate::tensor::Tensor;
use crate::value::{Exact, Value};
use core::ops::{Add, Div, Mul, Sub};
use num_bigint::{BigInt, BigUint, Sign};

/// The versions of ONNX `Range`.
pub const RANGE_VERSIONS: [i64; 2] = [11, 27];

/// 2^63, where int64 stops.
const TWO_63: f64 = (1u64 << 63) as f64;

/// The default cap on a Range output, in elements.
pub const DEFAULT_MAX_ELEMENTS: usize = 1 << 31;

/// Options of a Range call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RangeOptions {
    /// The profile whose accumulate type and conversion rules apply.
    pub profile: Profile,
    /// Range-27's `stash_type` attribute as an ONNX type number: 1 (FLOAT, the default) or 11
    /// (DOUBLE). Only float16 and bfloat16 outputs use it, and only under `onnx-reference`.
    pub stash_type: Option<i64>,
    /// The largest output accepted, in elements; a larger count is an `Err` before any allocation.
    pub max_elements: usize,
}

impl Default for RangeOptions {
    fn default() -> Self {
        RangeOptions { profile: Profile::Spec, stash_type: None, max_elements: DEFAULT_MAX_ELEMENTS }
    }
}

impl RangeOptions {
    /// The defaults under a profile.
    #[must_use]
    pub fn with_profile(profile: Profile) -> Self {
        RangeOptions { profile, ..RangeOptions::default() }
    }
}

/// ONNX `Range(start, limit, delta)` at opset `opset` under `profile`, with the default options.
///
/// ```
/// use lowbit::ops::range;
/// use lowbit::{Profile, Tensor};
///
/// let scalar = |v: f32| Tensor::from_f32(&[v]).reshape(vec![]);
/// let r = range(&scalar(1.0)?, &scalar(2.0)?, &scalar(0.25)?, 11, Profile::Spec)?;
/// // ceil((2 - 1) / 0.25) = 4 elements: start + i * delta.
/// assert_eq!(r.to_f32_vec()?, [1.0, 1.25, 1.5, 1.75]);
/// // delta 0 is an error (the count would be infinite).
/// assert!(range(&scalar(1.0)?, &scalar(2.0)?, &scalar(0.0)?, 11, Profile::Spec).is_err());
/// # Ok::<(), lowbit::Error>(())
/// ```
pub fn range(start: &Tensor, limit: &Tensor, delta: &Tensor, opset: i64, profile: Profile) -> Result<Tensor> {
    range_with(start, limit, delta, opset, &RangeOptions::with_profile(profile))
}

/// ONNX `Range` with every option.
pub fn range_with(start: &Tensor, limit: &Tensor, delta: &Tensor, opset: i64, opts: &RangeOptions) -> Result<Tensor> {
    range_guarded(start, limit, delta, opset, opts, &mut Unbudgeted)
}

/// [`range_with`], telling `guard` about the output before allocating it.
pub(crate) fn range_guarded(
    start: &Tensor,
    limit: &Tensor,
    delta: &Tensor,
    opset: i64,
    opts: &RangeOptions,
    guard: &mut dyn AllocationGuard,
) -> Result<Tensor> {
    let version = schema_version("Range", &RANGE_VERSIONS, opset)?;
    let op = format!("Range-{version}");
    let bad = |message: String| Error::InvalidOp { op: op.clone(), message };
    let t = start.dtype();
    for (name, x) in [("limit", limit), ("delta", delta)] {
        if x.dtype() != t {
            return Err(bad(format!("all inputs have one type, but start is {t} and {name} is {}", x.dtype())));
        }
    }
    let allowed: &[DType] = match version {
        11 => &[DType::Float, DType::Double, DType::Int16, DType::Int32, DType::Int64],
        _ => &[DType::Float, DType::Double, DType::Int16, DType::Int32, DType::Int64, DType::Float16, DType::Bfloat16],
    };
    if !allowed.contains(&t) {
        let names: Vec<&str> = allowed.iter().map(|d| d.onnx_name()).collect();
        return Err(bad(format!("type {t} is not allowed; T is one of {}", names.join(", "))));
    }
    let stash = match (opts.stash_type, version) {
        (None, _) => DType::Float,
        (Some(_), 11) => return Err(bad("the stash_type attribute exists from version 27".into())),
        (Some(1), _) => DType::Float,
        (Some(11), _) => DType::Double,
        (Some(n), _) => return Err(bad(format!("stash_type must be 1 (FLOAT) or 11 (DOUBLE), not {n}"))),
    };
    let s = scalar(&op, "start", start, true)?;
    let l = scalar(&op, "limit", limit, true)?;
    let d = scalar(&op, "delta", delta, true)?;
    let own = opts.profile.policy();
    // A version the implementation cannot run has no behaviour to match: `spec` decides.
    let policy: &Policy = if version > own.range.newest_version { &SPEC } else { own };
    if is_zero(d) {
        return Err(bad("delta is 0".into()));
    }
    let shown = || format!("start={}, limit={}, delta={}", show(s), show(l), show(d));
    let non_finite = || bad(format!("the number of elements is not a finite value ({})", shown()));
    let integer = matches!(t.kind(), Kind::Integer { .. });
    // Range-27's reference goes through the stash type for float16 and bfloat16 only.
    let stash_f32 = matches!(t, DType::Float16 | DType::Bfloat16) && stash == DType::Float;
    let count: u128 = match policy.range.count {
        RangeCount::Exact => exact_count(number(s), number(l), number(d)).ok_or_else(non_finite)?,
        RangeCount::Numpy if integer => {
            let (s, l, d) = (int(s), int(l), int(d));
            let q = f64_of(Element::Float(ratio(l - s, d)))?;
            numpy_length(q, l != s).ok_or_else(non_finite)?
        }
        RangeCount::Numpy if stash_f32 => numpy_count::<f32>(s, l, d)?.ok_or_else(non_finite)?,
        RangeCount::Numpy => numpy_count::<f64>(s, l, d)?.ok_or_else(non_finite)?,
        RangeCount::DoubleOperands => {
            let c = ((f64_of(l)? - f64_of(s)?) / f64_of(d)?).ceil();
            if !c.is_finite() {
                return Err(non_finite());
            }
            if c >= TWO_63 {
                return Err(bad(format!("the number of elements {c} exceeds the supported range ({})", shown())));
            }
            if c > 0.0 {
                c as u128
            } else {
                0
            }
        }
    };
    let n = capped(&op, count, opts.max_elements)?;
    guard.before_allocating(n, packing::raw_len(t, n)?)?;
    let mut out = Codes::new(&op, t, n)?;
    let cast = CastOptions::with_profile(opts.profile);
    if integer {
        let (s, d) = (int(s), int(d));
        for i in 0..n {
            // Wrapping keeps the low 64 bits, and only those reach an integer of at most 64 bits.
            let v = s.wrapping_add((i as i128).wrapping_mul(d));
            out.set(i, encode_element(t, Element::Int(v), &cast)?);
        }
        return out.finish();
    }
    match policy.range.values {
        RangeValues::Exact => exact_values(&mut out, s, d, &cast)?,
        RangeValues::Numpy if stash_f32 => numpy_values::<f32>(&mut out, s, d, &cast)?,
        RangeValues::Numpy => numpy_values::<f64>(&mut out, s, d, &cast)?,
        RangeValues::RepeatedAddition => repeated_addition(&mut out, s, d, &cast)?,
    }
    out.finish()
}

/// OpenVINO `Range` by version: 1 (one type for everything, no `output_type`) or 4.
pub fn openvino_range(
    version: i64,
    start: &Tensor,
    stop: &Tensor,
    step: &Tensor,
    output_type: Option<DType>,
    opts: &RangeOptions,
) -> Result<Tensor> {
    match (version, output_type) {
        (1, None) => range1(start, stop, step, opts),
        (4, Some(t)) => range4(start, stop, step, t, opts),
        (1, Some(_)) => Err(Error::InvalidOp {
            op: "OpenVINO Range-1".into(),
            message: "Range-1 has no output_type: the output has the inputs' type".into(),
        }),
        (4, None) => Err(Error::InvalidOp { op: "OpenVINO Range-4".into(), message: "output_type is required".into() }),
        (v, _) => Err(Error::InvalidOp {
            op: "OpenVINO Range".into(),
            message: format!("OpenVINO Range has versions 1 and 4, not {v}"),
        }),
    }
}

/// OpenVINO `Range-4`: scalars of independent numeric types, any numeric `output_type` (float8,
/// float6, float4, int4, uint4, int2 and uint2 included).
pub fn range4(start: &Tensor, stop: &Tensor, step: &Tensor, output_type: DType, opts: &RangeOptions) -> Result<Tensor> {
    let op = "OpenVINO Range-4";
    numeric(op, "output_type", output_type)?;
    let s = ov_scalar(op, "start", start)?;
    let e = ov_scalar(op, "stop", stop)?;
    let d = ov_scalar(op, "step", step)?;
    ov_range(op, [s, e, d], output_type, true, opts)
}

/// OpenVINO `Range-1`: start, stop and step of one numeric type T, which is the output's.
pub fn range1(start: &Tensor, stop: &Tensor, step: &Tensor, opts: &RangeOptions) -> Result<Tensor> {
    let op = "OpenVINO Range-1";
    let t = start.dtype();
    for (name, x) in [("stop", stop), ("step", step)] {
        if x.dtype() != t {
            return Err(Error::InvalidOp {
                op: op.into(),
                message: format!(
                    "element types for start, stop and step do not match: start is {t}, {name} is {}",
                    x.dtype()
                ),
            });
        }
    }
    numeric(op, "T", t)?;
    if matches!(t.kind(), Kind::Integer { bits, .. } if bits < 8) {
        return Err(Error::UnsupportedDType {
            op,
            dtype: t.onnx_name(),
            why: "Range-1 does not take sub-byte integers",
        });
    }
    let s = ov_scalar(op, "start", start)?;
    let e = ov_scalar(op, "stop", stop)?;
    let d = ov_scalar(op, "step", step)?;
    ov_range(op, [s, e, d], t, false, opts)
}

fn ov_range(op: &str, inputs: [Element; 3], out: DType, v4: bool, opts: &RangeOptions) -> Result<Tensor> {
    match opts.profile.policy().range.openvino {
        OpenVinoRange::Text => ov_text(op, inputs, out, v4, opts),
        OpenVinoRange::CoreReference => ov_core(op, inputs, out, v4, opts),
    }
}

/// The Range-4 (and Range-1) text, exact and rounded once.
fn ov_text(op: &str, [s_el, e_el, d_el]: [Element; 3], out: DType, v4: bool, opts: &RangeOptions) -> Result<Tensor> {
    let bad = |message: String| Error::InvalidOp { op: op.into(), message };
    let finite = |name: &str, el: Element| match number(el) {
        Num::Finite(x) => Ok(x),
        _ => Err(bad(format!("'{name}' cannot be nan or infinite (it is {})", show(el)))),
    };
    let (s, e) = (finite("start", s_el)?, finite("stop", e_el)?);
    let d = match number(d_el) {
        Num::Finite(x) => x,
        // ceil(finite / ±inf) = 0: no elements.
        Num::Infinite => return Codes::new(op, out, 0)?.finish(),
        Num::Nan => return Err(bad("'step' cannot be nan".into())),
    };
    if d.is_zero() {
        return Err(bad("'step' is 0".into()));
    }
    let truncate = v4 && matches!(out.kind(), Kind::Integer { .. });
    let (s, e, d) = if truncate { (s.trunc(), e.trunc(), d.trunc()) } else { (s, e, d) };
    if d.is_zero() {
        return Err(bad(format!(
            "'step' {} truncates to 0 for the integral output_type {out}; the Range-4 text leaves this undefined",
            show(d_el)
        )));
    }
    let c = ((f64_of_value(e.value())? - f64_of_value(s.value())?) / f64_of_value(d.value())?).ceil();
    if !c.is_finite() {
        return Err(bad(format!("the number of elements is not finite (start={}, stop={})", show(s_el), show(e_el))));
    }
    let n = capped(op, if c > 0.0 { c as u128 } else { 0 }, opts.max_elements)?;
    let mut codes = Codes::new(op, out, n)?;
    let cast = CastOptions::with_profile(opts.profile);
    let terms = Progression::new(&s, &d);
    for i in 0..n {
        let term = terms.term(i as u64);
        let el = match (i, out.kind()) {
            // The first element is start itself, so a -0 start stays -0 in a float output.
            (0, Kind::Float(_)) => s_el,
            (_, Kind::Integer { .. }) => match term.to_i128() {
                Some(v) => Element::Int(v),
                None => Element::Float(term.value()),
            },
            _ => Element::Float(term.value()),
        };
        codes.set(i, encode_element(out, el, &cast)?);
    }
    codes.finish()
}

/// OpenVINO 2026.4's core reference (research §2.2).
fn ov_core(op: &str, [s_el, e_el, d_el]: [Element; 3], out: DType, v4: bool, opts: &RangeOptions) -> Result<Tensor> {
    let bad = |message: &str| Error::InvalidOp { op: op.into(), message: message.into() };
    let (s, e, d) = (f64_of(s_el)?, f64_of(e_el)?, f64_of(d_el)?);
    if !s.is_finite() {
        return Err(bad("'start' cannot be nan or infinite."));
    }
    if !e.is_finite() {
        return Err(bad("'stop' cannot be nan or infinite."));
    }
    if !d.is_finite() || d == 0.0 {
        return Err(bad("'step' cannot be zero, nan, or infinite."));
    }
    let integral = matches!(out.kind(), Kind::Integer { .. });
    let (s, e, d) = if v4 && integral { (s.trunc(), e.trunc(), d.trunc()) } else { (s, e, d) };
    let span = if (d > 0.0 && s >= e) || (d < 0.0 && s <= e) { 0.0 } else { e - s };
    let n = capped(op, u128::from(x86_u32((span.abs() / d.abs()).ceil())), opts.max_elements)?;
    let mut codes = Codes::new(op, out, n)?;
    let cast = CastOptions::with_profile(opts.profile);
    match out {
        _ if integral => {
            // static_cast<T>(double) is the Cast core's x86 model (profile field `float_to_integer`); Range-1
            // reads the typed values themselves.
            let into = |x: f64, typed: Element| {
                encode_element(out, if v4 { Element::Float(Value::from_f64(x)) } else { typed }, &cast)
            };
            let (mut v, step) = (into(s, s_el)?, into(d, d_el)?);
            for i in 0..n {
                codes.set(i, v);
                v = v.wrapping_add(step) & out.code_mask();
            }
        }
        DType::Double => {
            for i in 0..n {
                let x = s + accum::<f64>(Element::Int(i as i128))? * d;
                codes.set(i, x.to_bits());
            }
        }
        _ => {
            // Range-4 casts the float64 start and step to float32; Range-1 (constant-folded for
            // types other than float32 and float64) widens the typed values to float32.
            let (st, sp) = if v4 {
                (accum::<f32>(Element::Float(Value::from_f64(s)))?, accum::<f32>(Element::Float(Value::from_f64(d)))?)
            } else {
                (accum::<f32>(s_el)?, accum::<f32>(d_el)?)
            };
            for i in 0..n {
                let x = st + accum::<f32>(Element::Int(i as i128))? * sp;
                let code = match out {
                    DType::Float => u64::from(x.to_bits()),
                    DType::Bfloat16 => openvino_bfloat16(x),
                    _ => encode_element(out, Element::Float(Value::from_f32(x)), &cast)?,
                };
                codes.set(i, code);
            }
        }
    }
    codes.finish()
}

/// OpenVINO's float32 -> bfloat16 (`ov::bfloat16::round_to_nearest_even`, which is not IEEE's):
/// on the bit pattern, `(bits + ((bits & 0x10000) >> 1)) >> 16`. When the kept last bit is 0 it
/// truncates; when it is 1 it rounds half up. Both are modes of the rounding core, so the rule is
/// expressed through it rather than re-implemented on bits.
#[must_use]
pub fn openvino_bfloat16(x: f32) -> u64 {
    let v = Value::from_f32(x);
    let with = |mode| {
        round::encode(
            &format::BF16,
            v,
            RoundingOptions { mode, saturate: false, nan_fallback: NanFallback::PositiveMax },
        )
    };
    let truncated = with(RoundingMode::TowardZero);
    if truncated & 1 == 0 {
        truncated
    } else {
        with(RoundingMode::NearestTiesAway)
    }
}

/// `static_cast<uint32_t>(double)` as x86-64 compilers emit it: a 64-bit truncating conversion
/// (`cvttsd2si`, whose "integer indefinite" 2^63 stands for NaN, infinities and out-of-range
/// values), then the low 32 bits. A step truncated to 0 makes the quotient infinite: 0 elements.
fn x86_u32(q: f64) -> u32 {
    if q.is_finite() && q.abs() < TWO_63 {
        q as i64 as u32
    } else {
        0
    }
}

// ---------------------------------------------------------------------------------------------
// Inputs

fn scalar(op: &str, name: &str, t: &Tensor, allow_one: bool) -> Result<Element> {
    let ok = t.shape().is_empty() || (allow_one && t.shape() == [1]);
    if !ok {
        let accepted = if allow_one { "shape [] or [1]" } else { "shape []" };
        return Err(Error::InvalidOp {
            op: op.into(),
            message: format!(
                "{name} must be a scalar ({accepted}), but has shape {}",
                crate::error::shown_shape(t.shape())
            ),
        });
    }
    let code = t.code(0).ok_or_else(|| Error::InvalidOp {
        op: op.into(),
        message: format!("{name} of type {} is not a number", t.dtype()),
    })?;
    decode_element(t.dtype(), code)
}

fn numeric(op: &'static str, role: &str, dtype: DType) -> Result<()> {
    match dtype.kind() {
        Kind::Float(_) | Kind::Integer { .. } => Ok(()),
        _ => Err(Error::InvalidOp { op: op.into(), message: format!("{role} must be a numeric type, not {dtype}") }),
    }
}

fn ov_scalar(op: &'static str, name: &str, t: &Tensor) -> Result<Element> {
    numeric(op, name, t.dtype())?;
    scalar(op, name, t, false)
}

fn is_zero(el: Element) -> bool {
    match el {
        Element::Int(i) => i == 0,
        Element::Bool(b) => !b,
        Element::Float(Value::Finite(x)) => x.is_zero(),
        Element::Float(_) => false,
    }
}

fn int(el: Element) -> i128 {
    match el {
        Element::Int(i) => i,
        Element::Bool(b) => i128::from(b),
        // Callers pass integer elements only.
        Element::Float(_) => 0,
    }
}

/// An element for messages.
fn show(el: Element) -> String {
    match el {
        Element::Int(i) => i.to_string(),
        Element::Bool(b) => b.to_string(),
        Element::Float(v) => f64_of_value(v).map_or_else(|_| format!("{v:?}"), |x| x.to_string()),
    }
}

/// Internal conversions into float32 and float64, which no profile rule touches.
const IEEE: CastOptions = CastOptions { saturate: true, round_mode: RoundMode::Up, profile: Profile::Spec };

fn f64_of(el: Element) -> Result<f64> {
    Ok(f64::from_bits(encode_element(DType::Double, el, &IEEE)?))
}

fn f64_of_value(v: Value) -> Result<f64> {
    f64_of(Element::Float(v))
}

// ---------------------------------------------------------------------------------------------
// Counts

fn capped(op: &str, count: u128, max: usize) -> Result<usize> {
    if count > max as u128 {
        return Err(Error::TooLarge {
            what: format!("{op} would produce {count} elements, more than the limit of {max}"),
        });
    }
    Ok(count as usize)
}

/// `max(ceil((limit - start) / delta), 0)` exactly; `None` when it is not finite.
fn exact_count(s: Num, l: Num, d: Num) -> Option<u128> {
    let (s, l) = match (s, l) {
        (Num::Finite(s), Num::Finite(l)) => (s, l),
        _ => return None,
    };
    let d = match d {
        Num::Finite(d) => d,
        Num::Infinite => return Some(0),
        Num::Nan => return None,
    };
    let diff = l.sub(&s);
    if diff.is_zero() || diff.mantissa.sign() != d.mantissa.sign() {
        return Some(0);
    }
    let (a, b) = aligned_magnitudes(&diff, &d);
    let q = &a / &b;
    let q = if &a % &b == BigUint::ZERO { q } else { q + 1u32 };
    Some(u128::try_from(&q).unwrap_or(u128::MAX))
}

/// numpy's `_calc_length` once the quotient `q` is known: an underflowed quotient with a nonzero
/// difference gives one element (+0) or none (-0); otherwise `max(ceil(q), 0)`. `None` when the
/// length is not finite.
fn numpy_length(q: f64, diff_nonzero: bool) -> Option<u128> {
    if q == 0.0 && diff_nonzero {
        return Some(u128::from(!q.is_sign_negative()));
    }
    let c = q.ceil();
    if !c.is_finite() {
        return None;
    }
    Some(if c > 0.0 { c as u128 } else { 0 })
}

fn numpy_count<A: Accum>(s: Element, l: Element, d: Element) -> Result<Option<u128>> {
    let (s, l, d) = (accum::<A>(s)?, accum::<A>(l)?, accum::<A>(d)?);
    let diff = l - s;
    Ok(numpy_length((diff / d).to_f64(), !diff.is_zero()))
}

// ---------------------------------------------------------------------------------------------
// Values

fn exact_values(out: &mut Codes, s: Element, d: Element, cast: &CastOptions) -> Result<()> {
    let (Num::Finite(start), Num::Finite(delta)) = (number(s), number(d)) else {
        // Only an infinite delta gets past the count with non-finite inputs, and it gives no
        // elements.
        return Ok(());
    };
    let terms = Progression::new(&start, &delta);
    for i in 0..out.len {
        // Element 0 is start itself, so a -0 start stays -0.
        let el = if i == 0 { s } else { Element::Float(terms.term(i as u64).value()) };
        out.set(i, encode_element(out.dtype, el, cast)?);
    }
    Ok(())
}

fn numpy_values<A: Accum>(out: &mut Codes, s: Element, d: Element, cast: &CastOptions) -> Result<()> {
    let (start, delta) = (accum::<A>(s)?, accum::<A>(d)?);
    let next = start + delta;
    let fill_delta = next - start;
    for i in 0..out.len {
        let x = match i {
            0 => start,
            1 => next,
            _ => start + accum::<A>(Element::Int(i as i128))? * fill_delta,
        };
        out.set(i, encode_element(out.dtype, Element::Float(x.value()), cast)?);
    }
    Ok(())
}

fn repeated_addition(out: &mut Codes, s: Element, d: Element, cast: &CastOptions) -> Result<()> {
    match out.dtype {
        DType::Float => add_natively::<f32>(out, s, d),
        DType::Double => add_natively::<f64>(out, s, d),
        t => {
            // No native arithmetic in T: each sum is exact, then rounded once into T.
            let delta = match number(d) {
                Num::Finite(x) => x,
                _ => return Ok(()),
            };
            let mut code = encode_element(t, s, cast)?;
            for i in 0..out.len {
                out.set(i, code);
                let current = decode_element(t, code)?;
                if let Num::Finite(x) = number(current) {
                    code = encode_element(t, Element::Float(x.add(&delta).value()), cast)?;
                }
            }
            Ok(())
        }
    }
}

fn add_natively<A: Accum>(out: &mut Codes, s: Element, d: Element) -> Result<()> {
    let (mut y, delta) = (accum::<A>(s)?, accum::<A>(d)?);
    for i in 0..out.len {
        out.set(i, y.code());
        y = y + delta;
    }
    Ok(())
}

/// The output under construction: codes written into a zeroed `raw_data`.
struct Codes {
    dtype: DType,
    len: usize,
    raw: Vec<u8>,
}

impl Codes {
    fn new(op: &str, dtype: DType, len: usize) -> Result<Codes> {
        Ok(Codes { dtype, len, raw: zeroed(op, packing::raw_len(dtype, len)?)? })
    }

    fn set(&mut self, i: usize, code: u64) {
        packing::set(self.dtype, &mut self.raw, i, code);
    }

    fn finish(self) -> Result<Tensor> {
        Tensor::from_raw(self.dtype, vec![self.len], self.raw)
    }
}

// ---------------------------------------------------------------------------------------------
// Accumulate types with native arithmetic (IEEE float32 and float64: each operation is one
// correctly rounded step, which is what the emulated implementations do).

trait Accum: Copy + PartialEq + Add<Output = Self> + Sub<Output = Self> + Mul<Output = Self> + Div<Output = Self> {
    const DTYPE: DType;
    fn from_code(code: u64) -> Self;
    fn code(self) -> u64;
    fn is_zero(self) -> bool;
    fn to_f64(self) -> f64;

    fn value(self) -> Value {
        match Self::DTYPE.float_format() {
            Some(f) => f.decode(self.code()),
            None => unreachable!("accumulate types are floats"),
        }
    }
}

impl Accum for f32 {
    const DTYPE: DType = DType::Float;
    fn from_code(code: u64) -> Self {
        f32::from_bits(code as u32)
    }
    fn code(self) -> u64 {
        u64::from(self.to_bits())
    }
    fn is_zero(self) -> bool {
        self == 0.0
    }
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
}

impl Accum for f64 {
    const DTYPE: DType = DType::Double;
    fn from_code(code: u64) -> Self {
        f64::from_bits(code)
    }
    fn code(self) -> u64 {
        self.to_bits()
    }
    fn is_zero(self) -> bool {
        self == 0.0
    }
    fn to_f64(self) -> f64 {
        self
    }
}

/// An element in accumulate type A, rounded once by the Cast core.
fn accum<A: Accum>(el: Element) -> Result<A> {
    Ok(A::from_code(encode_element(A::DTYPE, el, &IEEE)?))
}

// ---------------------------------------------------------------------------------------------
// Exact arithmetic

enum Num {
    Finite(Dyadic),
    Infinite,
    Nan,
}

fn number(el: Element) -> Num {
    match el {
        Element::Int(i) => Num::Finite(Dyadic::int(i)),
        Element::Bool(b) => Num::Finite(Dyadic::int(i128::from(b))),
        // Decoded codes are exact: their `sticky` is always false.
        Element::Float(Value::Finite(x)) => Num::Finite(Dyadic::from_exact(&x)),
        Element::Float(Value::Infinite { .. }) => Num::Infinite,
        Element::Float(Value::Nan { .. }) => Num::Nan,
    }
}

/// An exact binary rational `mantissa * 2^exponent`.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Dyadic {
    mantissa: BigInt,
    exponent: i64,
}

impl Dyadic {
    fn int(i: i128) -> Dyadic {
        Dyadic { mantissa: BigInt::from(i), exponent: 0 }
    }

    fn from_exact(x: &Exact) -> Dyadic {
        let m = BigInt::from(x.significand);
        Dyadic { mantissa: if x.negative { -m } else { m }, exponent: i64::from(x.exponent) }
    }

    fn is_zero(&self) -> bool {
        self.mantissa == BigInt::ZERO
    }

    /// Both mantissas over the smaller exponent.
    fn aligned(&self, other: &Dyadic) -> (BigInt, BigInt, i64) {
        let e = self.exponent.min(other.exponent);
        let widen = |x: &Dyadic| &x.mantissa << (x.exponent - e) as usize;
        (widen(self), widen(other), e)
    }

    fn add(&self, other: &Dyadic) -> Dyadic {
        let (a, b, exponent) = self.aligned(other);
        Dyadic { mantissa: a + b, exponent }
    }

    fn sub(&self, other: &Dyadic) -> Dyadic {
        let (a, b, exponent) = self.aligned(other);
        Dyadic { mantissa: a - b, exponent }
    }

    /// Toward zero, exactly.
    fn trunc(&self) -> Dyadic {
        if self.exponent >= 0 {
            return self.clone();
        }
        let magnitude = self.mantissa.magnitude() >> (-self.exponent) as usize;
        Dyadic { mantissa: BigInt::from_biguint(self.mantissa.sign(), magnitude), exponent: 0 }
    }

    /// The value if it is an integer that fits `i128`.
    fn to_i128(&self) -> Option<i128> {
        if self.exponent < 0 {
            let tz = self.mantissa.trailing_zeros().unwrap_or(u64::MAX);
            if self.is_zero() {
                return Some(0);
            }
            if tz < (-self.exponent) as u64 {
                return None;
            }
            return i128::try_from(&self.mantissa >> (-self.exponent) as usize).ok();
        }
        if self.exponent > 127 && !self.is_zero() {
            return None;
        }
        i128::try_from(&self.mantissa << self.exponent as usize).ok()
    }

    /// The exact value, as the Cast core takes it: a 64-bit significand and a sticky bit for
    /// anything below it.
    fn value(&self) -> Value {
        big_value(&self.mantissa, self.exponent)
    }
}

/// `|a|` and `|b|` scaled to one exponent, as integers.
fn aligned_magnitudes(a: &Dyadic, b: &Dyadic) -> (BigUint, BigUint) {
    let (x, y, _) = a.aligned(b);
    (x.into_parts().1, y.into_parts().1)
}

fn exponent32(e: i64) -> i32 {
    // Exponents come from decoded dtypes (at most a few thousand in magnitude) plus a shift of
    // at most the bits of a product: far inside i32.
    e.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32
}

fn small_value(negative: bool, magnitude: u128, exponent: i64) -> Value {
    if magnitude == 0 {
        return Value::Finite(Exact::zero(false));
    }
    let bits = 128 - magnitude.leading_zeros();
    let shift = bits.saturating_sub(64);
    let sticky = shift > 0 && magnitude & ((1u128 << shift) - 1) != 0;
    Value::Finite(Exact {
        negative,
        significand: (magnitude >> shift) as u64,
        exponent: exponent32(exponent + i64::from(shift)),
        sticky,
    })
}

fn big_value(mantissa: &BigInt, exponent: i64) -> Value {
    if let Ok(m) = i128::try_from(mantissa) {
        return small_value(m < 0, m.unsigned_abs(), exponent);
    }
    let negative = mantissa.sign() == Sign::Minus;
    Value::Finite(crate::strings::binary_to_exact(negative, mantissa.magnitude().clone(), exponent, false))
}

/// The exact quotient `num / den` (`den != 0`) as a value the Cast core rounds once.
fn ratio(num: i128, den: i128) -> Value {
    if num == 0 {
        return Value::Finite(Exact::zero((den < 0) != (num < 0)));
    }
    let (n, d) = (BigUint::from(num.unsigned_abs()), BigUint::from(den.unsigned_abs()));
    // Enough quotient bits that the significand is full and the rest is only a sticky bit.
    let shift = (66 + d.bits()).saturating_sub(n.bits());
    let scaled = n << shift as usize;
    let q = &scaled / &d;
    let remainder = &scaled % &d != BigUint::ZERO;
    match big_value(&BigInt::from(q), -(shift as i64)) {
        Value::Finite(x) => {
            Value::Finite(Exact { negative: (num < 0) != (den < 0), sticky: x.sticky || remainder, ..x })
        }
        other => other,
    }
}

/// `start + i * delta` for i = 0, 1, ..., exactly: both over one exponent, so that each term is
/// an integer times `2^exponent`; in i128 while that fits.
struct Progression {
    start: BigInt,
    delta: BigInt,
    small: Option<(i128, i128)>,
    exponent: i64,
}

impl Progression {
    fn new(start: &Dyadic, delta: &Dyadic) -> Progression {
        let (a, b, exponent) = start.aligned(delta);
        let small = i128::try_from(&a).ok().zip(i128::try_from(&b).ok());
        Progression { start: a, delta: b, small, exponent }
    }

    fn term(&self, i: u64) -> Dyadic {
        let small = self.small.and_then(|(a, b)| b.checked_mul(i128::from(i)).and_then(|p| a.checked_add(p)));
        let mantissa = match small {
            Some(m) => BigInt::from(m),
            None => &self.start + &self.delta * i,
        };
        Dyadic { mantissa, exponent: self.exponent }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f64_exact(x: f64) -> Dyadic {
        match number(Element::Float(Value::from_f64(x))) {
            Num::Finite(d) => d,
            _ => unreachable!(),
        }
    }

    #[test]
    fn ratio_is_correctly_rounded() {
        for (n, d) in [(1i128, 3i128), (-7, 2), (1 << 60 | 1, 1 << 60), (-1, -3995954281778806), (10, 5)] {
            let got = f64_of_value(ratio(n, d)).unwrap();
            // Exact in f64 for these operands only when the quotient is; compare with the
            // correctly rounded f64 division of exact f64 operands where both are exact.
            if n.unsigned_abs() < 1 << 53 && d.unsigned_abs() < 1 << 53 {
                assert_eq!(got, n as f64 / d as f64, "{n}/{d}");
            }
        }
        assert_eq!(f64_of_value(ratio((1 << 60) + 1, 1 << 60)).unwrap(), 1.0);
        assert!(f64_of_value(ratio(-1, -3995954281778806)).unwrap() > 0.0);
    }

    #[test]
    fn dyadic_trunc_and_integers() {
        assert_eq!(f64_exact(-2.7).trunc().to_i128(), Some(-2));
        assert_eq!(f64_exact(2.5).trunc().to_i128(), Some(2));
        assert_eq!(f64_exact(0.5).to_i128(), None);
        assert_eq!(f64_exact(1e30).to_i128(), Some(1_000_000_000_000_000_019_884_624_838_656));
        assert_eq!(f64_exact(1e300).to_i128(), None);
    }

    #[test]
    fn bfloat16_rule_matches_its_bit_formula() {
        for bits in [0x3dcccccd_u32, 0x3f4ccccd, 0x3f800000, 0x3f808000, 0x3f818000, 0x7f7fffff, 0xbe4ccccd, 0x00018000]
        {
            let want = (bits.wrapping_add((bits & 0x10000) >> 1) >> 16) as u64;
            assert_eq!(openvino_bfloat16(f32::from_bits(bits)), want, "{bits:#x}");
        }
    }

    #[test]
    fn x86_count_conversion() {
        assert_eq!(x86_u32(f64::INFINITY), 0);
        assert_eq!(x86_u32(3.0), 3);
        assert_eq!(x86_u32(4294967296.0 + 5.0), 5);
    }
}
