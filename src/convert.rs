//! Element-level ONNX `Cast` between fixed-width numeric dtypes (floats, integers, bool), one code
//! at a time, under a [`Policy`]. This is the reference path: each element is decoded exactly
//! into an [`Element`] and encoded once through [`crate::round`]. Bulk kernels are checked
//! against it.

use crate::dtype::{DType, Kind};
use crate::error::{Error, Result};
use crate::format::{self, FloatFormat, IntegerFormat};
use crate::profile::{
    E8M0Rule, Float8SpecialsToInteger, Float8ToBool, FloatToInteger, NanPayload, Policy, Profile, Uint32Conversion,
};
use crate::round::{self, RoundingMode, RoundingOptions};
use crate::value::{Exact, Value};
use core::num::FpCategory;

/// ONNX `round_mode` (Cast-24+), which only affects float8e8m0 targets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum RoundMode {
    /// "round to nearest value away from zero" (the default).
    #[default]
    Up,
    /// "round to nearest value towards zero".
    Down,
    /// "round to nearest value and ties round up".
    Nearest,
}

impl RoundMode {
    /// The rounding of the core that implements this ONNX mode.
    #[must_use]
    pub const fn rounding(self) -> RoundingMode {
        match self {
            RoundMode::Up => RoundingMode::AwayFromZero,
            RoundMode::Down => RoundingMode::TowardZero,
            RoundMode::Nearest => RoundingMode::NearestTiesAway,
        }
    }

    /// Parses the ONNX attribute value (`up`, `down`, `nearest`).
    pub fn parse(s: &str) -> Result<RoundMode> {
        match s {
            "up" => Ok(RoundMode::Up),
            "down" => Ok(RoundMode::Down),
            "nearest" => Ok(RoundMode::Nearest),
            other => Err(Error::UnsupportedDType {
                op: "Cast round_mode",
                dtype: "FLOAT8E8M0",
                why: if other.is_empty() { "empty round_mode" } else { "round_mode must be up, down or nearest" },
            }),
        }
    }
}

/// The attributes of one ONNX `Cast` and the profile that decides the disputed cases.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CastOptions {
    /// ONNX `saturate` (default 1). Only float8 targets (the four variants and E8M0) look at it.
    pub saturate: bool,
    /// ONNX `round_mode` (default `up`). Only float8e8m0 targets look at it.
    pub round_mode: RoundMode,
    /// Whose answer the disputed cases get (default `spec`).
    pub profile: Profile,
}

impl Default for CastOptions {
    fn default() -> Self {
        CastOptions { saturate: true, round_mode: RoundMode::Up, profile: Profile::Spec }
    }
}

impl CastOptions {
    /// The ONNX defaults with the given `saturate`, under `spec`.
    #[must_use]
    pub fn saturating(saturate: bool) -> Self {
        CastOptions { saturate, ..CastOptions::default() }
    }

    /// The ONNX defaults under a profile.
    #[must_use]
    pub fn with_profile(profile: Profile) -> Self {
        CastOptions { profile, ..CastOptions::default() }
    }

    /// The core's options for a float target under this profile's policy.
    #[must_use]
    pub fn rounding_for(&self, target: &FloatFormat) -> RoundingOptions {
        self.rounding_under(self.profile.policy(), target)
    }

    fn rounding_under(&self, policy: &Policy, target: &FloatFormat) -> RoundingOptions {
        let is_e8m0 = *target == format::E8M0;
        // Profile field `fixed_saturate`: saturate only applies to float8 targets; float4 and float6 clamp
        // whatever it says, and the wider IEEE formats overflow to infinity.
        let saturate_applies = target.width() == 8;
        RoundingOptions {
            mode: if is_e8m0 { self.round_mode.rounding() } else { RoundingMode::NearestEven },
            saturate: self.saturate && saturate_applies,
            nan_fallback: if target.width() == 4 { policy.nan_to_float4 } else { policy.nan_to_float6 },
        }
    }
}
/// One element, decoded exactly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Element {
    /// A float dtype's element: its exact value (NaN and infinities included).
    Float(Value),
    /// Every integer dtype fits an `i128` (uint64 included).
    Int(i128),
    /// A BOOL element.
    Bool(bool),
}

fn fixed_width(op: &'static str, dtype: DType) -> Result<Kind> {
    match dtype.kind() {
        k @ (Kind::Float(_) | Kind::Integer { .. } | Kind::Bool) => Ok(k),
        _ => Err(Error::UnsupportedDType { op, dtype: dtype.onnx_name(), why: "not a fixed-width numeric type" }),
    }
}

/// Decodes one element's code (the low bits of `code`; higher bits are ignored).
pub fn decode_element(dtype: DType, code: u64) -> Result<Element> {
    let code = code & dtype.code_mask();
    Ok(match fixed_width("decode", dtype)? {
        Kind::Float(f) => Element::Float(f.decode(code)),
        Kind::Integer { bits, signed } => Element::Int(sign_extend(code, bits, signed)),
        _ => Element::Bool(code != 0),
    })
}

/// One side of a cast: an ONNX dtype, or a named format or integer type
/// ([`crate::format::NAMED_FORMATS`], [`crate::format::NAMED_INTEGERS`]) that a profile converts
/// with the rows of an ONNX dtype ([`Policy::named_formats`], [`Policy::named_integers`]): `rows` is
/// the dtype whose rows apply, `named` the format that is decoded and encoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Side {
    pub(crate) rows: DType,
    pub(crate) named: Option<Named>,
}

/// A named side's own format (only `verify` names sides; without it every side is ONNX).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(not(feature = "verify"), allow(dead_code))]
pub(crate) enum Named {
    Float(&'static FloatFormat),
    Integer(&'static IntegerFormat),
}

impl Side {
    pub(crate) const fn onnx(dtype: DType) -> Side {
        Side { rows: dtype, named: None }
    }

    fn kind(self, op: &'static str) -> Result<Kind> {
        match self.named {
            Some(Named::Float(f)) => Ok(Kind::Float(f)),
            Some(Named::Integer(i)) => Ok(Kind::Integer { bits: i.bits, signed: i.signed }),
            None => fixed_width(op, self.rows),
        }
    }

    fn float_format(self) -> Option<&'static FloatFormat> {
        match self.named {
            Some(Named::Float(f)) => Some(f),
            Some(Named::Integer(_)) => None,
            None => self.rows.float_format(),
        }
    }

    fn code_mask(self) -> u64 {
        match self.named {
            Some(Named::Float(f)) => f.code_mask(),
            Some(Named::Integer(i)) => (1u64 << i.bits) - 1,
            None => self.rows.code_mask(),
        }
    }

    fn decode(self, code: u64) -> Result<Element> {
        match self.named {
            Some(Named::Float(f)) => Ok(Element::Float(f.decode(code & f.code_mask()))),
            Some(Named::Integer(i)) => Ok(Element::Int(sign_extend(code & self.code_mask(), i.bits, i.signed))),
            None => decode_element(self.rows, code),
        }
    }
}

pub(crate) fn sign_extend(code: u64, bits: u32, signed: bool) -> i128 {
    if signed && bits < 128 && code >> (bits - 1) & 1 == 1 {
        i128::from(code) - (1i128 << bits)
    } else {
        i128::from(code)
    }
}

/// Encodes an element into `dtype` under the options' profile (no source-dependent rules: see
/// [`convert_code`] for those).
pub fn encode_element(dtype: DType, element: Element, opts: &CastOptions) -> Result<u64> {
    encode_under(opts.profile.policy(), dtype, element, opts)
}

fn as_value(element: Element) -> Value {
    match element {
        Element::Float(v) => v,
        Element::Int(i) => Value::Finite(Exact::from_i128(i)),
        Element::Bool(b) => Value::Finite(Exact::from_i128(i128::from(b))),
    }
}

fn encode_under(policy: &Policy, dtype: DType, element: Element, opts: &CastOptions) -> Result<u64> {
    encode_side(policy, Side::onnx(dtype), element, opts)
}

fn encode_side(policy: &Policy, to: Side, element: Element, opts: &CastOptions) -> Result<u64> {
    Ok(match to.kind("encode")? {
        Kind::Float(f) => encode_float(policy, f, as_value(element), opts),
        Kind::Integer { bits, signed } => match element {
            Element::Float(v) => float_to_integer(v, bits, signed, policy),
            Element::Int(i) => low_bits(i, bits),
            Element::Bool(b) => u64::from(b),
        },
        _ => u64::from(match element {
            // Profile field `float8_to_bool`: x != 0, so NaN -> true and both zeros -> false.
            Element::Float(Value::Finite(e)) => !e.is_zero(),
            Element::Float(_) => true,
            Element::Int(i) => i != 0,
            Element::Bool(b) => b,
        }),
    })
}

fn encode_float(policy: &Policy, f: &'static FloatFormat, value: Value, opts: &CastOptions) -> u64 {
    if *f == format::E8M0 {
        return encode_e8m0(policy, policy.e8m0, value, opts);
    }
    if policy.float6_overflow_to_zero && f.width() == 6 {
        let encoded = round::encode_with_status(f, value, &round::EncodeOptions::onnx(opts.rounding_under(policy, f)));
        let overflow = matches!(value, Value::Infinite { .. })
            || (matches!(value, Value::Finite(_)) && encoded.1.contains(round::Status::OVERFLOW));
        return if overflow { f.sign_mask() * u64::from(value.is_negative()) } else { encoded.0 };
    }
    let code = round::encode(f, value, opts.rounding_under(policy, f));
    match value {
        Value::Nan { .. } if *f == format::E5M2 => policy.e5m2_nan | (code & f.sign_mask()),
        Value::Finite(_) if policy.float8_overflow_quirks && !opts.saturate => {
            onnxruntime_overflow_quirk(f, value, code)
        }
        _ => code,
    }
}

fn encode_e8m0(policy: &Policy, rule: E8M0Rule, value: Value, opts: &CastOptions) -> u64 {
    match rule {
        E8M0Rule::Spec => round::encode(&format::E8M0, value, opts.rounding_under(policy, &format::E8M0)),
        E8M0Rule::Reference => e8m0_reference(value, opts.saturate, opts.round_mode),
        E8M0Rule::OnnxRuntime => e8m0_onnxruntime(value, opts, policy),
        E8M0Rule::NearestPowerOfTwo { tiny, of_magnitude } => e8m0_nearest_power_of_two(value, tiny, of_magnitude),
    }
}

/// ml_dtypes' float8_e8m0fnu (see [`E8M0Rule::NearestPowerOfTwo`]); its sources are float32 or
/// float64 values, or integers (whose magnitudes are 1 or more), so the comparisons near 2^-127
/// are exact in `f64`.
fn e8m0_nearest_power_of_two(value: Value, tiny: u64, of_magnitude: bool) -> u64 {
    const NAN: u64 = 0xFF;
    let Value::Finite(x) = value else { return NAN };
    if of_magnitude && x.is_zero() {
        return tiny;
    }
    if !of_magnitude && (x.negative || x.is_zero()) {
        return NAN;
    }
    let value = if of_magnitude { Value::Finite(Exact { negative: false, ..x }) } else { value };
    let magnitude = to_f64(value);
    let min = crate::fmath::pow2_f64(-127);
    if magnitude < min {
        tiny
    } else if magnitude == min {
        0x00
    } else if magnitude < 2.0 * min {
        0x01
    } else {
        // Nearest with ties away from zero, on a format without fraction bits: the midpoint
        // between 2^k and 2^(k+1) is 1.5 * 2^k. Beyond 2^127 it overflows to NaN.
        let nearest = RoundingOptions { mode: RoundingMode::NearestTiesAway, ..RoundingOptions::IEEE };
        round::encode(&format::E8M0, value, nearest)
    }
}

/// The exact value as an `f64` (used where the value is known to be a float32).
fn to_f64(value: Value) -> f64 {
    f64::from_bits(round::encode(&format::F64, value, RoundingOptions::IEEE))
}

/// Profile field `float8_overflow_quirks`: onnxruntime's float8 constructors, given a float32, turn a non-saturating
/// overflow in these two windows into the wrong code (docs/research/onnx_cast.md §4.4).
fn onnxruntime_overflow_quirk(f: &FloatFormat, value: Value, code: u64) -> u64 {
    // onnxruntime reaches float8 through float32, so the value is a float32: exact in f64.
    let magnitude = to_f64(value).abs();
    let sign = code & f.sign_mask();
    if *f == format::E4M3FN && (480.0..496.0).contains(&magnitude) {
        0x7E | sign
    } else if *f == format::E5M2 && (61440.0..65536.0).contains(&magnitude) {
        0x7F | sign
    } else {
        code
    }
}

/// onnx's `to_float8e8m0` (docs/research/onnx_cast.md §10): works on the float32 bit pattern, ignores
/// the sign, turns Inf into NaN whatever `saturate` says.
fn e8m0_reference(value: Value, saturate: bool, mode: RoundMode) -> u64 {
    let bits = round::encode(&format::F32, value, RoundingOptions::IEEE) as u32;
    let mut e = (bits >> 23) & 0xFF;
    if e == 0xFF {
        return 0xFF;
    }
    let fraction = bits & 0x7F_FFFF;
    let round_up = match mode {
        RoundMode::Up => fraction != 0,
        RoundMode::Down => false,
        RoundMode::Nearest => {
            let guard = bits >> 22 & 1 == 1;
            let round = bits >> 21 & 1 == 1;
            let sticky = bits & 0x1F_FFFF != 0;
            guard && (round || sticky || e > 0)
        }
    };
    if round_up && !(saturate && e == 0xFE) {
        e += 1;
    }
    u64::from(e)
}

/// onnxruntime's E8M0 kernel as observed (docs/research/onnx_cast.md §10): negative inputs (and -Inf)
/// give 0x00 when saturating and NaN otherwise; anything above 2^127 is MAX or NaN before
/// rounding; the rest is the `spec` rule. Its input is always a float32 (via_float32).
fn e8m0_onnxruntime(value: Value, opts: &CastOptions, policy: &Policy) -> u64 {
    let saturated_or_nan = |code| if opts.saturate { code } else { 0xFF };
    match value {
        Value::Nan { .. } => 0xFF,
        Value::Infinite { negative: true } => saturated_or_nan(0x00),
        Value::Infinite { negative: false } => saturated_or_nan(0xFE),
        Value::Finite(x) if x.negative && !x.is_zero() => saturated_or_nan(0x00),
        Value::Finite(_) if to_f64(value) > crate::fmath::pow2_f64(127) => saturated_or_nan(0xFE),
        Value::Finite(_) => round::encode(&format::E8M0, value, opts.rounding_under(policy, &format::E8M0)),
    }
}

/// Converts one code from one numeric dtype to another: ONNX `Cast` on a single element, under
/// the options' profile. (Where a profile's result depends on the element's position in a tensor,
/// this is the result outside its vector blocks; [`crate::cast::cast`] handles positions.)
pub fn convert_code(from: DType, to: DType, code: u64, opts: &CastOptions) -> Result<u64> {
    Conversion::new(from, to, opts).code(code)
}

/// Like [`convert_code`] for an element inside one of the profile's vector blocks
/// ([`crate::profile::VectorBlock`]): the block's rows apply. For a pair without vector blocks,
/// the same as [`convert_code`].
pub fn convert_code_in_block(from: DType, to: DType, code: u64, opts: &CastOptions) -> Result<u64> {
    Conversion::new(from, to, opts).in_block().code(code)
}

/// One `Cast` resolved once: the dtypes, the attributes and the rows that decide it (the
/// profile's policy for this pair, `spec`'s where the profile has no such cast, a vector block's
/// inside one). A plan makes it when it is built and hands it to its engines, table builders and
/// the core's fallback lanes, so nothing below looks the profile up again.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Conversion {
    pub(crate) from: DType,
    pub(crate) to: DType,
    pub(crate) opts: CastOptions,
    pub(crate) policy: &'static Policy,
    /// Inside one of the profile's vector blocks (`policy` is then the block's).
    pub(crate) in_block: bool,
    /// An identity cast that the profile computes as a conversion rather than a copy.
    pub(crate) identity_converts: bool,
}

impl Conversion {
    pub(crate) fn new(from: DType, to: DType, opts: &CastOptions) -> Conversion {
        let own = opts.profile.policy();
        Conversion {
            from,
            to,
            opts: *opts,
            policy: own.for_cast(from, to),
            in_block: false,
            identity_converts: from == to && own.identity_converts(from, opts.saturate),
        }
    }

    /// The same cast for an element inside one of the profile's vector blocks (itself where the
    /// pair has none).
    #[must_use]
    pub(crate) fn in_block(self) -> Conversion {
        let policy = self.policy.vector_block(self.from, self.to).map_or(self.policy, |block| block.policy);
        Conversion { policy, in_block: true, ..self }
    }

    /// The same attributes and profile for another pair of dtypes.
    #[must_use]
    pub(crate) fn with_dtypes(self, from: DType, to: DType) -> Conversion {
        let c = Conversion::new(from, to, &self.opts);
        if self.in_block {
            c.in_block()
        } else {
            c
        }
    }

    /// The core's answer for one source code.
    pub(crate) fn code(&self, code: u64) -> Result<u64> {
        convert_code_in(self.policy, self.from, self.to, code, &self.opts)
    }
}

fn convert_code_in(policy: &Policy, from: DType, to: DType, code: u64, opts: &CastOptions) -> Result<u64> {
    convert_sides(policy, Side::onnx(from), Side::onnx(to), code, opts)
}

/// One code from `from` to `to` under `policy`, where a side may be a named format; the policy's
/// rows are looked up by each side's `rows` dtype.
pub(crate) fn convert_sides(
    policy: &Policy,
    from_side: Side,
    to_side: Side,
    code: u64,
    opts: &CastOptions,
) -> Result<u64> {
    let (from, to) = (from_side.rows, to_side.rows);
    // An implementation without the attribute converts float8 one way whatever it says.
    let fixed = policy.fixed_saturate_for(to).map(|saturate| CastOptions { saturate, ..*opts });
    let opts = fixed.as_ref().unwrap_or(opts);
    if from_side == to_side && !policy.identity_converts(from, opts.saturate) {
        // An identity Cast is a copy: NaN payloads and all bits survive.
        from_side.kind("Cast")?;
        return Ok(code & from_side.code_mask());
    }
    let mut element = from_side.decode(code)?;
    let narrow_source = from_side.float_format().filter(|f| f.width() <= 8);
    if let Element::Float(Value::Nan { negative: true, payload }) = element {
        if matches!(from, DType::Float8E4M3FNUZ | DType::Float8E5M2FNUZ) && !policy.fnuz_nan_is_negative {
            element = Element::Float(Value::Nan { negative: false, payload });
        }
    }
    let flush = policy.flush_subnormals.contains(&(from, to));
    if flush && from_side.float_format().is_some_and(|f| f.classify(code & f.code_mask()) == FpCategory::Subnormal) {
        // DAZ: a subnormal input reads as zero with its sign.
        let negative = matches!(element, Element::Float(v) if v.is_negative());
        element = Element::Float(Value::Finite(Exact::zero(negative)));
    }
    match (element, to_side.kind("Cast")?) {
        (Element::Float(Value::Nan { .. }), Kind::Integer { .. }) if policy.nan_to_integer_zero.contains(&from) => {
            // Profile field `nan_to_integer_zero` (E8M0 in every implementation,
            // docs/research/onnx_cast.md §10).
            return Ok(0);
        }
        (Element::Float(special @ (Value::Nan { .. } | Value::Infinite { .. })), Kind::Integer { bits, signed })
            if narrow_source.is_some()
                && policy.float8_specials_to_integer == Float8SpecialsToInteger::ZeroAndSaturate =>
        {
            return Ok(float8_special_to_integer(special, bits, signed));
        }
        (_, Kind::Bool)
            if narrow_source.is_some_and(|f| f.width() == 8) && policy.float8_to_bool == Float8ToBool::ByBits =>
        {
            return Ok(u64::from(code & from_side.code_mask() != 0));
        }
        (Element::Float(Value::Nan { negative, .. }), _)
            if to_side == Side::onnx(DType::Float8E5M2)
                && policy.e5m2_nan_by_source.iter().any(|(s, _)| *s == from) =>
        {
            let (_, nan) = policy.e5m2_nan_by_source.iter().find(|(s, _)| *s == from).expect("just found");
            return Ok(nan.code | if nan.keep_sign && negative { 0x80 } else { 0 });
        }
        (Element::Float(Value::Nan { negative, payload }), Kind::Float(target)) if target.nan_payload => {
            // Profile field `nan_by_pair`; the payload is the fraction field, left-aligned as the
            // IEEE formats' decode aligns it, for any source format.
            if let Some(&(_, _, rule)) = policy.nan_by_pair.iter().find(|(f, t, _)| (*f, *t) == (from, to)) {
                let source = from_side.float_format().expect("a NaN comes from a float format");
                let fraction = code & source.fraction_field_mask();
                let fraction_payload =
                    if source.mantissa_bits == 0 { 0 } else { fraction << (64 - source.mantissa_bits) };
                return Ok(nan_code(rule, target, negative, fraction_payload));
            }
            if let Some(source) = from_side.float_format().filter(|f| f.nan_payload) {
                return Ok(nan_between_ieee(policy, source, target, negative, payload));
            }
        }
        (Element::Float(Value::Nan { payload, .. }), Kind::Float(target))
            if from_side == Side::onnx(DType::Bfloat16)
                && target.width() == 8
                && !opts.saturate
                && policy.bfloat16_nan_unsigned_without_saturate =>
        {
            element = Element::Float(Value::Nan { negative: false, payload });
        }
        _ => {}
    }
    // Profile field `via_float32`: the profile may round a wide source to float32 first.
    let wide_source = from_side.named.is_none()
        && matches!(from, DType::Double | DType::Int32 | DType::Int64 | DType::Uint32 | DType::Uint64);
    let element = if wide_source && policy.via_float32.applies_to(to) {
        let value = as_value(element);
        if flush && tiny(&format::F32, value) {
            Element::Float(Value::Finite(Exact::zero(value.is_negative())))
        } else {
            Element::Float(format::F32.decode(round::encode(&format::F32, value, RoundingOptions::IEEE)))
        }
    } else {
        element
    };
    if to_side == Side::onnx(DType::Float8E8M0) {
        if let Some(&(_, rule)) = policy.e8m0_by_source.iter().find(|(source, _)| *source == from) {
            return Ok(encode_e8m0(policy, rule, as_value(element), opts));
        }
    }
    if let (Element::Float(v), Kind::Integer { bits, signed }) = (element, to_side.kind("Cast")?) {
        if policy.float_to_integer == FloatToInteger::SaturateInSourceType {
            return saturate_in_source_type(policy, from_side, v, bits, signed);
        }
    }
    match (to_side.float_format(), element) {
        // FTZ: a result that is tiny is written as zero with its sign.
        (Some(f), Element::Float(value)) if flush && tiny(f, value) => {
            Ok(f.sign_mask() * u64::from(value.is_negative()))
        }
        _ => encode_side(policy, to_side, element, opts),
    }
}

/// Whether a nonzero finite value is tiny in `format` as x86 judges it for FTZ: after rounding to
/// nearest-even with an unbounded exponent range. So |x| below m * (1 - 2^-(p+1)), with m the
/// smallest normal and p the precision (the midpoint between m and the largest p-bit value below
/// it rounds up to m, to even). Observed in XLA: float64 2^-126 - 2^-150 -> float32 0, and
/// 2^-126 - 2^-151 -> 2^-126. Every value handed here is exact in `f64`.
fn tiny(format: &FloatFormat, value: Value) -> bool {
    let smallest_normal = to_f64(format.decode(1 << format.mantissa_bits));
    let threshold = smallest_normal * (1.0 - crate::fmath::pow2_f64(-(format.mantissa_bits as i32 + 2)));
    let magnitude = match value {
        Value::Finite(_) => to_f64(value).abs(),
        _ => return false,
    };
    magnitude != 0.0 && magnitude < threshold
}

/// [`FloatToInteger::SaturateInSourceType`]: truncate toward zero, saturate at the target's bounds
/// as the source type holds them (each bound converted into the source by the profile's own Cast),
/// NaN -> 0. Every float value of every format fits an `f64` exactly, so the comparisons are exact.
fn saturate_in_source_type(policy: &Policy, from: Side, v: Value, bits: u32, signed: bool) -> Result<u64> {
    let (min, max): (i128, i128) =
        if signed { (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1) } else { (0, (1i128 << bits) - 1) };
    let x = match v {
        Value::Nan { .. } => return Ok(0),
        Value::Infinite { negative } => return Ok(low_bits(if negative { min } else { max }, bits)),
        Value::Finite(_) => to_f64(v),
    };
    // The bound as the source type holds it; None where it does not convert to a finite value.
    let in_source = |bound: i128| -> Result<Option<f64>> {
        if from.float_format().is_none_or(|f| f.width() >= 64) {
            // float64 (and integer sources): the bound rounded to float64, as a comparison does.
            return Ok(Some(bound as f64));
        }
        let (wide, code) = if bound < 0 { (DType::Int64, bound as i64 as u64) } else { (DType::Uint64, bound as u64) };
        // Without saturation: a bound beyond the source's range is no value of it (NaN or
        // infinity where the format has them, its largest value where it has neither).
        let unsaturated = CastOptions { saturate: false, ..CastOptions::default() };
        let source_code = convert_sides(policy, Side::onnx(wide), from, code, &unsaturated)?;
        Ok(match from.decode(source_code)? {
            Element::Float(value @ Value::Finite(_)) => Some(to_f64(value)),
            _ => None,
        })
    };
    if in_source(max)?.is_some_and(|b| x >= b) {
        return Ok(low_bits(max, bits));
    }
    if in_source(min)?.is_some_and(|b| x <= b) {
        return Ok(low_bits(min, bits));
    }
    let truncated = crate::fmath::trunc(x);
    // Inside (min_source, max_source) the truncated value can still be outside the range where a
    // bound converted to a larger value; it saturates there too.
    let i = if truncated >= max as f64 {
        max
    } else if truncated <= min as f64 {
        min
    } else {
        truncated as i128
    };
    Ok(low_bits(i, bits))
}

/// Profile field `nan_payloads`: a NaN from one IEEE format into another, payload per the policy.
fn nan_between_ieee(policy: &Policy, from: &FloatFormat, to: &FloatFormat, negative: bool, payload: u64) -> u64 {
    let rules = &policy.nan_payloads;
    let (f16, bf16, f32, f64) = (&format::F16, &format::BF16, &format::F32, &format::F64);
    let rule = if from == f16 && to == f32 {
        rules.float16_to_float32
    } else if from == f16 && to == f64 {
        rules.float16_to_float64
    } else if from == bf16 && to == f32 {
        rules.bfloat16_to_float32
    } else if from == bf16 && to == f64 {
        rules.bfloat16_to_float64
    } else if from == bf16 && to == f16 {
        rules.bfloat16_to_float16
    } else if from == f64 && to == f16 {
        rules.float64_to_float16
    } else if to == f16 {
        rules.to_float16
    } else if to == bf16 {
        rules.to_bfloat16
    } else {
        // float <-> double: hardware conversion in every implementation.
        NanPayload::QuietTopBits
    };
    nan_code(rule, to, negative, payload)
}

/// The code a NaN (sign, left-aligned payload) gets in the IEEE format `to` under `rule`.
fn nan_code(rule: NanPayload, to: &FloatFormat, negative: bool, payload: u64) -> u64 {
    let canonical = to.nan_code(negative).expect("IEEE formats have NaN");
    let exponent_and_sign = canonical & !to.fraction_field_mask();
    let top_bits = payload >> (64 - to.mantissa_bits);
    match rule {
        NanPayload::QuietTopBits => round::encode(to, Value::Nan { negative, payload }, RoundingOptions::IEEE),
        NanPayload::TopBitsNonzero => exponent_and_sign | top_bits.max(1),
        NanPayload::Exact => exponent_and_sign | top_bits,
        NanPayload::Canonical => canonical,
        NanPayload::Fixed(code) => code,
    }
}

/// Two's complement truncation to `bits` bits (the ONNX text: "keep the low bits"; every profile).
fn low_bits(i: i128, bits: u32) -> u64 {
    let mask = if bits >= 64 { u64::MAX } else { (1u64 << bits) - 1 };
    (i as u64) & mask
}

/// Float to integer: profile fields `float_to_subbyte_int`, `float_to_integer` and
/// `float8_specials_to_integer`.
///
/// * int4/uint4/int2/uint2: round to an integer with the policy's mode and keep the low bits;
///   NaN, ±Inf and |x| >= 2^31 give 0.
/// * wider integers: truncate toward zero; NaN and out-of-range values give what x86's `cvtt`
///   instructions give, because that is what both the onnx reference and onnxruntime return
///   (docs/research/onnx_cast.md §9). The bounds are exclusive windows of exact integers, checked on
///   the truncated value, which is exact (no float comparison can misjudge them).
fn float_to_integer(v: Value, bits: u32, signed: bool, policy: &Policy) -> u64 {
    const TWO_31: i128 = 1 << 31;
    const TWO_63: i128 = 1 << 63;
    let x = match v {
        Value::Finite(x) => x,
        // NaN and ±Inf: cvtt's "integer indefinite" for the wide types, 0 for the packed ones.
        Value::Nan { .. } => return nan_or_inf_to_integer(bits, signed, None, policy.float_to_uint32),
        Value::Infinite { negative } => {
            return nan_or_inf_to_integer(bits, signed, Some(negative), policy.float_to_uint32)
        }
    };
    // A magnitude of 2^64 or more stands in as ±2^100: outside every window below, same sign.
    let signed_value = |mode| match round::round_to_integer(x, mode) {
        Some((neg, mag)) if neg => -i128::from(mag),
        Some((_, mag)) => i128::from(mag),
        None if x.negative => -(1 << 100),
        None => 1 << 100,
    };
    if bits <= 4 {
        // |x| >= 2^31 -> 0 is judged on x itself; rounding cannot cross 2^31 without landing on
        // it, and 2^31's low bits are 0, so judging after rounding gives the same codes.
        let i = signed_value(integer_rounding(policy, bits));
        return if i.abs() < TWO_31 { low_bits(i, bits) } else { 0 };
    }
    let truncated = signed_value(integer_rounding(policy, bits));
    match (bits, signed) {
        (64, true) => match truncated {
            i if (-TWO_63..TWO_63).contains(&i) => low_bits(i, 64),
            _ => 1 << 63,
        },
        (64, false) => match truncated {
            // cvttsd2si on x < 2^63, reinterpreted; 2^63 <= x < 2^64 is subtracted first and
            // converts exactly; the rest wraps to 0.
            i if (-TWO_63..TWO_63).contains(&i) => low_bits(i, 64),
            i if (TWO_63..(1 << 64)).contains(&i) => i as u64,
            i if i < 0 => 1 << 63,
            _ => 0,
        },
        (32, false) => match (policy.float_to_uint32, truncated) {
            (_, i) if (-TWO_31 + 1..(1 << 32)).contains(&i) => low_bits(i, 32),
            (Uint32Conversion::LowBitsOfInt64, i) if (-TWO_63..TWO_63).contains(&i) => low_bits(i, 32),
            (Uint32Conversion::LowBitsOfInt64, _) => 0,
            (Uint32Conversion::Spec | Uint32Conversion::Vector, i) if i < 0 => 1 << 31,
            (Uint32Conversion::Spec | Uint32Conversion::Vector, _) => 0,
        },
        // Profile field `float_to_uint8_through_int64`: the int64 result, then its low bits.
        (8, false) if policy.float_to_uint8_through_int64 => match truncated {
            i if (-TWO_63..TWO_63).contains(&i) => low_bits(i, 8),
            _ => 0,
        },
        // int8, int16, uint8, uint16 and int32: the int32 result, then its low bits.
        _ => match truncated {
            i if (-TWO_31..TWO_31).contains(&i) => low_bits(i, bits),
            _ => low_bits(-TWO_31, bits),
        },
    }
}

/// How a float is rounded to an integer of `bits` bits before the low bits are kept (rows 10 and
/// 13): the profile's rounding for the packed types, truncation (C's cast) for the others.
#[must_use]
pub(crate) fn integer_rounding(policy: &Policy, bits: u32) -> RoundingMode {
    if bits <= 4 {
        policy.float_to_subbyte_int
    } else {
        RoundingMode::TowardZero
    }
}

/// ml_dtypes' float8 -> integer for NaN and ±Inf: NaN is 0, infinities saturate to the target's
/// range; int4 and narrower receive the low bits of the saturated int32.
fn float8_special_to_integer(special: Value, bits: u32, signed: bool) -> u64 {
    let negative = match special {
        Value::Infinite { negative } => negative,
        _ => return 0,
    };
    let (range_bits, range_signed) = if bits < 8 { (32, true) } else { (bits, signed) };
    let limit: i128 = match (negative, range_signed) {
        (false, true) => (1i128 << (range_bits - 1)) - 1,
        (false, false) => (1i128 << range_bits) - 1,
        (true, true) => -(1i128 << (range_bits - 1)),
        (true, false) => 0,
    };
    low_bits(limit, bits)
}

fn nan_or_inf_to_integer(bits: u32, signed: bool, infinity_negative: Option<bool>, uint32: Uint32Conversion) -> u64 {
    match (bits, signed, infinity_negative) {
        (b, _, _) if b <= 4 => 0,
        (64, _, None) | (64, true, _) | (64, false, Some(true)) => 1 << 63,
        (64, false, Some(false)) => 0,
        (32, false, infinity_negative) => match (uint32, infinity_negative) {
            (Uint32Conversion::LowBitsOfInt64, _) | (_, Some(false)) | (Uint32Conversion::Spec, Some(true)) => 0,
            (Uint32Conversion::Spec | Uint32Conversion::Vector, None) | (Uint32Conversion::Vector, Some(true)) => {
                1 << 31
            }
        },
        (b, _, _) => low_bits(-(1i128 << 31), b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f32_to(to: DType, x: f32) -> u64 {
        convert_code(DType::Float, to, u64::from(x.to_bits()), &CastOptions::default()).unwrap()
    }

    #[test]
    fn float_to_wide_integers_follow_cvtt() {
        // docs/research/onnx_cast.md §9.
        assert_eq!(f32_to(DType::Int8, 200.0), 0xC8);
        assert_eq!(f32_to(DType::Int8, 128.0), 0x80);
        assert_eq!(f32_to(DType::Uint8, 256.0), 0);
        assert_eq!(f32_to(DType::Uint8, -1.0), 0xFF);
        assert_eq!(f32_to(DType::Int16, 32768.0), 0x8000);
        assert_eq!(f32_to(DType::Int16, 65536.0), 0);
        assert_eq!(f32_to(DType::Int8, -129.0), 127);
        assert_eq!(f32_to(DType::Int8, f32::NAN), 0);
        assert_eq!(f32_to(DType::Int32, 2147483648.0), 0x8000_0000);
        assert_eq!(f32_to(DType::Int32, -2.9), (-2i32) as u32 as u64);
        assert_eq!(f32_to(DType::Int64, f32::INFINITY), 1 << 63);
        assert_eq!(f32_to(DType::Uint32, -1.0), 4294967295);
        assert_eq!(f32_to(DType::Uint32, -129.0), 4294967167);
        assert_eq!(f32_to(DType::Uint32, 4294967296.0), 0);
        assert_eq!(f32_to(DType::Uint32, -2147483904.0), 2147483648);
        assert_eq!(f32_to(DType::Uint32, f32::NAN), 2147483648);
        assert_eq!(f32_to(DType::Uint32, f32::NEG_INFINITY), 0);
        assert_eq!(f32_to(DType::Uint64, -2.9), u64::MAX - 1);
        assert_eq!(f32_to(DType::Uint64, 9.3e18), 9300000300729368576);
        assert_eq!(f32_to(DType::Uint64, 1e20), 0);
        assert_eq!(f32_to(DType::Uint64, f32::NAN), 1 << 63);
        let f64_to_i8 = convert_code(DType::Double, DType::Int8, 2147483647f64.to_bits(), &CastOptions::default());
        assert_eq!(f64_to_i8.unwrap(), 0xFF);
    }

    #[test]
    fn float_to_int4_rounds_half_even_and_wraps() {
        // Profile field `float_to_subbyte_int` (`spec`): nearest, ties to even, keep the low bits.
        for (x, want) in [(2.5f32, 2i8), (3.5, 4), (-2.5, -2), (7.5, -8), (8.0, -8), (-9.0, 7), (100.0, 4)] {
            assert_eq!(f32_to(DType::Int4, x), (want as u8 & 0xF) as u64, "{x}");
        }
        assert_eq!(f32_to(DType::Int4, f32::NAN), 0);
        assert_eq!(f32_to(DType::Uint4, f32::INFINITY), 0);
        assert_eq!(f32_to(DType::Uint4, 1e10), 0);
        assert_eq!(f32_to(DType::Uint4, -1.0), 15);
    }

    #[test]
    fn bool_rules() {
        assert_eq!(f32_to(DType::Bool, f32::NAN), 1);
        assert_eq!(f32_to(DType::Bool, -0.0), 0);
        let e4m3_neg_zero = convert_code(DType::Float8E4M3FN, DType::Bool, 0x80, &CastOptions::default());
        assert_eq!(e4m3_neg_zero.unwrap(), 0);
        let e8m0_min = convert_code(DType::Float8E8M0, DType::Bool, 0x00, &CastOptions::default());
        assert_eq!(e8m0_min.unwrap(), 1);
        assert_eq!(convert_code(DType::Bool, DType::Float8E4M3FN, 1, &CastOptions::default()).unwrap(), 0x38);
    }

    #[test]
    fn strings_and_complex_are_rejected() {
        assert!(convert_code(DType::String, DType::Float, 0, &CastOptions::default()).is_err());
        assert!(convert_code(DType::Float, DType::Complex64, 0, &CastOptions::default()).is_err());
    }
}
