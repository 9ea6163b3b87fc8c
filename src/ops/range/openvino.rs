//! OpenVINO `Range`, versions 1 and 4: the Range-4 text (every profile but `openvino`) and
//! OpenVINO 2026.4's core reference (`openvino`), as the parent module's docs describe.

use super::*;
use crate::fmath;

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

pub(super) fn ov_range(op: &str, inputs: [Element; 3], out: DType, v4: bool, opts: &RangeOptions) -> Result<Tensor> {
    match opts.profile.policy().range.openvino {
        OpenVinoRange::Text => ov_text(op, inputs, out, v4, opts),
        OpenVinoRange::CoreReference => ov_core(op, inputs, out, v4, opts),
    }
}

/// The Range-4 (and Range-1) text, exact and rounded once.
pub(super) fn ov_text(
    op: &str,
    [s_el, e_el, d_el]: [Element; 3],
    out: DType,
    v4: bool,
    opts: &RangeOptions,
) -> Result<Tensor> {
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
    let c = fmath::ceil((f64_of_value(e.value())? - f64_of_value(s.value())?) / f64_of_value(d.value())?);
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
pub(super) fn ov_core(
    op: &str,
    [s_el, e_el, d_el]: [Element; 3],
    out: DType,
    v4: bool,
    opts: &RangeOptions,
) -> Result<Tensor> {
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
    let (s, e, d) = if v4 && integral { (fmath::trunc(s), fmath::trunc(e), fmath::trunc(d)) } else { (s, e, d) };
    let span = if (d > 0.0 && s >= e) || (d < 0.0 && s <= e) { 0.0 } else { e - s };
    let n = capped(op, u128::from(x86_u32(fmath::ceil(span.abs() / d.abs()))), opts.max_elements)?;
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
pub(super) fn x86_u32(q: f64) -> u32 {
    if q.is_finite() && q.abs() < TWO_63 {
        q as i64 as u32
    } else {
        0
    }
}
