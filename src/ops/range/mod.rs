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

use crate::alloc_prelude::*;
use crate::convert::{decode_element, encode_element, CastOptions, Element, RoundMode};
use crate::dtype::{DType, Kind};
use crate::error::{Error, Result};
use crate::fmath;
use crate::format;
use crate::ops::{schema_version, zeroed, AllocationGuard, Unbudgeted};
use crate::packing;
use crate::profile::{OpenVinoRange, RangeCount, RangeValues};
use crate::profile::{Policy, Profile, SPEC};
use crate::round::{self, NanFallback, RoundingMode, RoundingOptions};
use crate::strings::BigUint;
use crate::tensor::Tensor;
use crate::value::{Exact, Value};
use core::ops::{Add, Div, Mul, Sub};

mod exact;
mod native;
mod openvino;

use exact::*;
use native::*;
pub use openvino::{openvino_bfloat16, openvino_range, range1, range4};

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
            let c = fmath::ceil((f64_of(l)? - f64_of(s)?) / f64_of(d)?);
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
    if diff.is_zero() || diff.mantissa.signum() != d.mantissa.signum() {
        return Some(0);
    }
    let (a, b) = aligned_magnitudes(&diff, &d);
    let (q, r) = a.div_rem(&b);
    let q = if r.is_zero() { q } else { q.add_small(1) };
    Some(q.to_u128().unwrap_or(u128::MAX))
}

/// numpy's `_calc_length` once the quotient `q` is known: an underflowed quotient with a nonzero
/// difference gives one element (+0) or none (-0); otherwise `max(ceil(q), 0)`. `None` when the
/// length is not finite.
fn numpy_length(q: f64, diff_nonzero: bool) -> Option<u128> {
    if q == 0.0 && diff_nonzero {
        return Some(u128::from(!q.is_sign_negative()));
    }
    let c = fmath::ceil(q);
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

#[cfg(test)]
mod tests {
    use super::openvino::x86_u32;
    use super::*;

    fn f64_exact(x: f64) -> Dyadic {
        match number(Element::Float(Value::from_f64(x))) {
            Num::Finite(d) => d,
            _ => unreachable!(),
        }
    }

    #[test]
    fn big_exact_arithmetic_by_hand() {
        // 2^130 + k * (-2^129 - 0.5): the terms leave i128 and carry a fraction (exponent -1).
        let start = f64_exact(2f64.powi(130));
        let delta = f64_exact(-(2f64.powi(129))).sub(&f64_exact(0.5));
        let terms = Progression::new(&start, &delta);
        let value = |i| f64_of_value(terms.term(i).value()).unwrap();
        // 2^130 - 2^129 - 0.5 rounds to 2^129 in float64 (the half is far below its ulp).
        assert_eq!([value(0), value(1), value(2)], [2f64.powi(130), 2f64.powi(129), -1.0]);
        assert_eq!(value(4), -(2f64.powi(130)) - 2.0);
        assert_eq!(terms.term(2).to_i128(), Some(-1));
        assert_eq!(terms.term(1).to_i128(), None);
        // Toward zero: -2.5 -> -2, 2^130 + 0.5 -> 2^130; an integer beyond i128 is not one.
        assert_eq!(f64_exact(-2.5).trunc().to_i128(), Some(-2));
        assert!(start.add(&f64_exact(0.5)).trunc().sub(&start).is_zero());
        assert_eq!(start.sub(&f64_exact(0.5)).trunc().sub(&start).to_i128(), Some(-1));
        assert_eq!(start.to_i128(), None);
        assert_eq!(f64_exact(2f64.powi(126)).to_i128(), Some(1 << 126));
        assert_eq!(f64_exact(-(2f64.powi(127))).to_i128(), Some(i128::MIN));
        // Counts: ceil((2^130 - 0) / 2^129) = 2; ceil(10 / 3) = 4; a step against the span: 0.
        let count = |s: f64, l: f64, d: f64| {
            exact_count(Num::Finite(f64_exact(s)), Num::Finite(f64_exact(l)), Num::Finite(f64_exact(d)))
        };
        assert_eq!(count(0.0, 2f64.powi(130), 2f64.powi(129)), Some(2));
        assert_eq!(count(0.0, 10.0, 3.0), Some(4));
        assert_eq!(count(0.0, 10.0, -3.0), Some(0));
        assert_eq!(count(0.0, 1e300, 1e-300), Some(u128::MAX));
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
