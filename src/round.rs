//! **The rounding rule.** This is the one place where lowbit rounds: every float-to-float
//! conversion, every integer-to-float conversion and every float-to-integer rounding goes through
//! [`round_right_shift`], and every float result is assembled by [`encode`] from a
//! [`FloatFormat`] descriptor. There are no per-format copies of this logic; fast kernels live
//! elsewhere and are tested against this module and against the independent oracle in
//! `tests/support/oracle.rs`.
//!
//! The rule (the `spec` profile, tables/profiles.md): take the exact value, round it **once** to the target's
//! precision with the exponent range unbounded above (subnormals kept below), then judge
//! overflow on the rounded value. ±Inf and overflow become ±MAX when saturating, otherwise
//! infinity, NaN or ±MAX as the format allows.

use crate::format::{FloatFormat, NonFinite, F32, F64};
use crate::value::{Exact, Value, QUIET_NAN_PAYLOAD};
use core::cmp::Ordering;

/// How to round a value that falls between two representable ones.
///
/// The first four are the ONNX modes; the others serve hardware verification ([`crate::verify`])
/// and the library. The directed modes look at the value's sign; [`RoundingMode::Stochastic`]
/// also takes random bits ([`EncodeOptions::random`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum RoundingMode {
    /// To nearest, ties to the even neighbour (IEEE 754 default; every ONNX cast but E8M0's).
    #[default]
    NearestEven,
    /// Toward zero (truncation). E8M0 `round_mode="down"`.
    TowardZero,
    /// Away from zero. E8M0 `round_mode="up"` (the Cast-24 default).
    AwayFromZero,
    /// To nearest, ties away from zero. E8M0 `round_mode="nearest"` ("ties round up").
    NearestTiesAway,
    /// Toward negative infinity (IEEE roundTowardNegative, floor).
    TowardNegative,
    /// Toward positive infinity (IEEE roundTowardPositive, ceiling).
    TowardPositive,
    /// Round to odd (von Neumann rounding, SoftFloat's `round_odd`): truncate, then set the last
    /// kept bit if anything was dropped. Rounding to odd with two or more extra bits and then to
    /// nearest is the same as rounding to nearest once.
    ToOdd,
    /// Stochastic rounding as SR hardware does it: the `bits` (1 to 63) random bits
    /// ([`EncodeOptions::random`], low bits used) are added to the `bits` discarded bits just
    /// below the last kept bit, and the sum is truncated. So the value rounds away from zero iff
    /// `top_bits(discarded) + random >= 2^bits`; discarded bits further down are ignored, and
    /// random bits all zero truncate.
    Stochastic {
        /// How many random bits (and discarded bits) take part, 1 to 63.
        bits: u32,
    },
}

impl RoundingMode {
    /// The modes without parameters, then stochastic rounding with `stochastic_bits` bits.
    #[must_use]
    pub const fn all(stochastic_bits: u32) -> [RoundingMode; 8] {
        [
            RoundingMode::NearestEven,
            RoundingMode::TowardZero,
            RoundingMode::AwayFromZero,
            RoundingMode::NearestTiesAway,
            RoundingMode::TowardNegative,
            RoundingMode::TowardPositive,
            RoundingMode::ToOdd,
            RoundingMode::Stochastic { bits: stochastic_bits },
        ]
    }

    /// The mode a word names: `rne`, `rtz`, `rdn`, `rup`, `rmm`, `raz`, `rod`, `sr:R` (R from 1
    /// to 63), or TestFloat's names (`near_even`, `minMag`, `min`, `max`, `near_maxMag`, `odd`,
    /// with or without testfloat_ver's `-r` prefix).
    #[must_use]
    pub fn from_word(word: &str) -> Option<RoundingMode> {
        let word = word.strip_prefix("-r").unwrap_or(word);
        Some(match word {
            "rne" | "near_even" => RoundingMode::NearestEven,
            "rtz" | "minMag" | "minmag" => RoundingMode::TowardZero,
            "rdn" | "min" => RoundingMode::TowardNegative,
            "rup" | "max" => RoundingMode::TowardPositive,
            "rmm" | "near_maxMag" | "near_maxmag" => RoundingMode::NearestTiesAway,
            "raz" => RoundingMode::AwayFromZero,
            "rod" | "odd" => RoundingMode::ToOdd,
            _ => {
                let bits = word.strip_prefix("sr:")?;
                if bits.is_empty() || bits.len() > 2 || !bits.bytes().all(|b| b.is_ascii_digit()) {
                    return None;
                }
                let bits: u32 = bits.parse().ok()?;
                if !(1..=63).contains(&bits) {
                    return None;
                }
                RoundingMode::Stochastic { bits }
            }
        })
    }

    /// IEEE 754 overflow for this mode: whether a finite value too large for the target becomes
    /// the largest finite value (rather than infinity) when rounding a value of this sign.
    /// Toward zero, round to odd and the direction toward the other sign's infinity keep MAX.
    #[must_use]
    pub const fn overflows_to_max(self, negative: bool) -> bool {
        match self {
            RoundingMode::TowardZero | RoundingMode::ToOdd => true,
            RoundingMode::TowardNegative => !negative,
            RoundingMode::TowardPositive => negative,
            _ => false,
        }
    }
}

/// IEEE 754 exception flags a conversion raises, with TestFloat's bit layout (so a flag byte
/// prints as TestFloat prints it). A set of flags: combine with `|`, test with
/// [`Status::contains`].
///
/// ```
/// use lowbit::round::Status;
/// let s = Status::OVERFLOW | Status::INEXACT;
/// assert_eq!(s.bits(), 0x05);
/// assert!(s.contains(Status::INEXACT) && !s.contains(Status::INVALID));
/// assert_eq!(format!("{s:?}"), "Status(OVERFLOW | INEXACT)");
/// assert_eq!(format!("{:?}", Status::empty()), "Status(0x0)");
/// assert_eq!(Status::from_bits_truncate(0xFF), Status::all());
/// assert_eq!(Status::all() - Status::INEXACT, Status::from_bits_truncate(0x1E));
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Status(u8);

impl Status {
    /// A signalling NaN input; a NaN, infinity, zero or negative value the target cannot
    /// represent; a float-to-integer result out of range.
    pub const INVALID: Status = Status(0x10);
    /// Division by zero: never raised by a conversion, here for the layout.
    pub const INFINITE: Status = Status(0x08);
    /// The rounded value exceeded the largest finite value (always with INEXACT).
    pub const OVERFLOW: Status = Status(0x04);
    /// The result was tiny (see [`Tininess`]) and inexact.
    pub const UNDERFLOW: Status = Status(0x02);
    /// The result differs from the exact value.
    pub const INEXACT: Status = Status(0x01);
    /// Every flag with its name, highest bit first.
    const NAMED: [(Status, &'static str); 5] = [
        (Status::INVALID, "INVALID"),
        (Status::INFINITE, "INFINITE"),
        (Status::OVERFLOW, "OVERFLOW"),
        (Status::UNDERFLOW, "UNDERFLOW"),
        (Status::INEXACT, "INEXACT"),
    ];

    /// No flag.
    #[must_use]
    pub const fn empty() -> Status {
        Status(0)
    }

    /// Every flag.
    #[must_use]
    pub const fn all() -> Status {
        Status(0x1F)
    }

    /// The flag byte (TestFloat's layout).
    #[must_use]
    pub const fn bits(self) -> u8 {
        self.0
    }

    /// The flags of a byte; bits that are no flag are dropped.
    #[must_use]
    pub const fn from_bits_truncate(bits: u8) -> Status {
        Status(bits & Status::all().0)
    }

    /// Whether every flag of `other` is set here.
    #[must_use]
    pub const fn contains(self, other: Status) -> bool {
        self.0 & other.0 == other.0
    }

    /// Whether any flag of `other` is set here.
    #[must_use]
    pub const fn intersects(self, other: Status) -> bool {
        self.0 & other.0 != 0
    }

    /// Whether no flag is set.
    #[must_use]
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Sets the flags of `other`.
    pub fn insert(&mut self, other: Status) {
        self.0 |= other.0;
    }
}

impl core::ops::BitOr for Status {
    type Output = Status;
    fn bitor(self, other: Status) -> Status {
        Status(self.0 | other.0)
    }
}

impl core::ops::BitOrAssign for Status {
    fn bitor_assign(&mut self, other: Status) {
        self.0 |= other.0;
    }
}

impl core::ops::Sub for Status {
    type Output = Status;
    /// The flags of `self` that `other` does not have.
    fn sub(self, other: Status) -> Status {
        Status(self.0 & !other.0)
    }
}

impl core::fmt::Debug for Status {
    /// `Status(OVERFLOW | INEXACT)`; `Status(0x0)` when empty.
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("Status(")?;
        if self.is_empty() {
            f.write_str("0x0")?;
        }
        let mut first = true;
        for (flag, name) in Status::NAMED {
            if self.contains(flag) {
                if !first {
                    f.write_str(" | ")?;
                }
                f.write_str(name)?;
                first = false;
            }
        }
        f.write_str(")")
    }
}

/// When a nonzero result counts as tiny, for the underflow flag. Underflow is raised only for a
/// tiny result that is also inexact (IEEE 754 default exception handling, as SoftFloat and
/// TestFloat do).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Tininess {
    /// The exact value lies strictly between ±(smallest normal).
    BeforeRounding,
    /// The value rounded to the target's precision with an unbounded exponent range lies strictly
    /// between ±(smallest normal). IEEE's other option, and SoftFloat's and TestFloat's default.
    #[default]
    AfterRounding,
    /// The delivered result is subnormal or zero, as some units judge it.
    Delivered,
}

/// What to produce for a NaN input when the target format has no NaN (float4, float6).
/// Which one applies is a profile decision (profile fields `nan_to_float4` and `nan_to_float6`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NanFallback {
    /// +MAX whatever the sign: the ONNX float4 technical note ("NaN -> 6").
    PositiveMax,
    /// The code of -0 with its sign bit flipped by the NaN's sign (+NaN -> -0, -NaN -> +0): what
    /// ml_dtypes, and so the onnx reference, produce.
    SignFlippedNegativeZero,
    /// The code of -0 whatever the sign (XLA into float4).
    NegativeZero,
    /// The zero with the NaN's sign (XLA into float6).
    SignedZero,
}

/// Options of one rounding. `saturate` is honoured for every target: callers that implement
/// ONNX `Cast` pass `true` only where the attribute applies (float8 and E8M0 targets).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RoundingOptions {
    /// How a value between two codes is rounded.
    pub mode: RoundingMode,
    /// Overflow and ±Inf become ±MAX instead of infinity or NaN.
    pub saturate: bool,
    /// What a NaN becomes in a format without NaN (float4, float6).
    pub nan_fallback: NanFallback,
}

impl RoundingOptions {
    /// IEEE 754 default: nearest-even, overflow to infinity.
    pub const IEEE: RoundingOptions =
        RoundingOptions { mode: RoundingMode::NearestEven, saturate: false, nan_fallback: NanFallback::PositiveMax };
}

/// Everything [`encode_with_status`] needs beyond the value: the rounding, and the choices that
/// only matter to IEEE-style conversions (hardware verification). [`encode`] uses
/// [`EncodeOptions::onnx`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct EncodeOptions {
    /// The rounding proper: mode, saturation, NaN fallback.
    pub rounding: RoundingOptions,
    /// When a result counts as tiny for the underflow flag.
    pub tininess: Tininess,
    /// The random bits of [`RoundingMode::Stochastic`] (its low `bits` bits); ignored otherwise.
    pub random: u64,
    /// IEEE 754 overflow: a finite overflow follows the rounding direction
    /// ([`RoundingMode::overflows_to_max`]). Off for ONNX, whose overflow rule ignores the mode
    /// (E8M0 `round_mode="down"` without saturation overflows to NaN).
    pub directed_overflow: bool,
    /// A negative value whose rounded magnitude is not zero is invalid in an unsigned format
    /// (NaN, or without NaN or when saturating its zero or smallest value). Off for ONNX, whose
    /// E8M0 rule takes the magnitude.
    pub unsigned_rejects_negative: bool,
}

impl EncodeOptions {
    /// The ONNX `Cast` rules of [`encode`], with the given rounding.
    #[must_use]
    pub const fn onnx(rounding: RoundingOptions) -> EncodeOptions {
        EncodeOptions {
            rounding,
            tininess: Tininess::AfterRounding,
            random: 0,
            directed_overflow: false,
            unsigned_rejects_negative: false,
        }
    }

    /// IEEE 754 rules (directed overflow, negative values invalid in unsigned formats) with the
    /// given mode, saturation, tininess rule and random bits.
    #[must_use]
    pub const fn ieee(mode: RoundingMode, saturate: bool, tininess: Tininess, random: u64) -> EncodeOptions {
        EncodeOptions {
            rounding: RoundingOptions { mode, saturate, nan_fallback: NanFallback::PositiveMax },
            tininess,
            random,
            directed_overflow: true,
            unsigned_rejects_negative: true,
        }
    }
}

/// Where the discarded part of a shifted significand lies relative to half an ulp.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Remainder {
    vs_half: Ordering,
    inexact: bool,
    /// The discarded bits left-aligned to bit 63 (their leading 64 bits), for stochastic
    /// rounding. A sticky tail below them is not represented.
    leading: u64,
}

/// Shifts `significand` (with the `sticky` fraction below it) right by `shift >= 1` bits and
/// rounds the result according to `mode`, for a nonnegative value with no random bits. Returns
/// the rounded quotient and whether it is inexact.
#[must_use]
pub fn round_right_shift(significand: u64, shift: u32, sticky: bool, mode: RoundingMode) -> (u64, bool) {
    let (quotient, rem) = split(significand, shift, sticky);
    (quotient + u64::from(rounds_up(mode, rem, quotient & 1 == 1, false, 0)), rem.inexact)
}

/// Splits `significand` (with the `sticky` fraction below it) at bit `shift >= 1`: the truncated
/// quotient and where the dropped part lies. The quotient is below 2^63, so adding 1 cannot wrap.
///
/// With `sticky`, the dropped part is `rem + t` for some `0 < t < 1`: it equals half only if `rem`
/// does and `t` were 0, so a sticky bit turns an exact tie into "above half" and leaves "below
/// half" below half (`rem < half` means `rem + 1 <= half`).
fn split(significand: u64, shift: u32, sticky: bool) -> (u64, Remainder) {
    debug_assert!(shift >= 1);
    if shift >= 65 {
        // The whole significand (< 2^64 <= 2^(shift-1)) lies below half of the rounding unit.
        let leading = if shift >= 128 { 0 } else { significand >> (shift - 64) };
        return (0, Remainder { vs_half: Ordering::Less, inexact: significand != 0 || sticky, leading });
    }
    // Shifts of 64 split off the whole significand; below, everything stays in one word.
    let (quotient, dropped) =
        if shift == 64 { (0, significand) } else { (significand >> shift, significand & ((1 << shift) - 1)) };
    let half = 1u64 << (shift - 1);
    let vs_half = match (dropped.cmp(&half), sticky) {
        (Ordering::Equal, true) => Ordering::Greater,
        (ord, _) => ord,
    };
    let leading = dropped << (64 - shift);
    (quotient, Remainder { vs_half, inexact: dropped != 0 || sticky, leading })
}

/// **The rounding decision** of the crate: whether the truncated magnitude moves one unit away
/// from zero. `truncated_is_odd` is the parity of the truncated result's last digit (for a format
/// without fraction bits, such as E8M0, that digit is the exponent's last bit); `negative` is the
/// value's sign (for the directed modes); `random` the stochastic bits.
#[inline]
fn rounds_up(mode: RoundingMode, rem: Remainder, truncated_is_odd: bool, negative: bool, random: u64) -> bool {
    match mode {
        RoundingMode::NearestEven => {
            rem.vs_half == Ordering::Greater || (rem.vs_half == Ordering::Equal && truncated_is_odd)
        }
        RoundingMode::NearestTiesAway => rem.vs_half != Ordering::Less,
        RoundingMode::TowardZero => false,
        RoundingMode::AwayFromZero => rem.inexact,
        RoundingMode::TowardNegative => rem.inexact && negative,
        RoundingMode::TowardPositive => rem.inexact && !negative,
        RoundingMode::ToOdd => rem.inexact && !truncated_is_odd,
        RoundingMode::Stochastic { bits } => {
            let bits = bits.clamp(1, 63);
            let mask = (1u64 << bits) - 1;
            (rem.leading >> (64 - bits)) + (random & mask) > mask
        }
    }
}

/// Rounds an exact value to an integer with `mode`. Returns the sign and the magnitude, or `None`
/// when the magnitude does not fit in 64 bits.
#[must_use]
pub fn round_to_integer(x: Exact, mode: RoundingMode) -> Option<(bool, u64)> {
    round_to_integer_exactly(x, mode, 0).map(|(negative, magnitude, _)| (negative, magnitude))
}

/// [`round_to_integer`] with the stochastic bits, also telling whether the value was not an
/// integer (the inexact flag). Directed modes follow the value's sign.
#[must_use]
pub fn round_to_integer_exactly(x: Exact, mode: RoundingMode, random: u64) -> Option<(bool, u64, bool)> {
    if x.is_zero() {
        return Some((x.negative, 0, false));
    }
    if x.exponent >= 0 {
        let shift = x.exponent as u32;
        // Too large for 64 bits, whatever bits a sticky flag stands for (an exact integer wider
        // than 64 bits, such as a Range term beyond i128, arrives with one).
        if shift >= 64 || x.significand.leading_zeros() < shift {
            return None;
        }
        // An integer that fits; a sticky fraction here would need more than 64 significant bits,
        // which no producer in the crate hands over (see `Exact`).
        debug_assert!(!x.sticky);
        return Some((x.negative, x.significand << shift, false));
    }
    let shift = x.exponent.unsigned_abs();
    let (q, rem) = split(x.significand, shift, x.sticky);
    Some((x.negative, q + u64::from(rounds_up(mode, rem, q & 1 == 1, x.negative, random)), rem.inexact))
}

/// Encodes a value into a code of `format`, rounding once, under ONNX's rules. See the module
/// docs for the rule; [`encode_with_status`] with [`EncodeOptions::onnx`].
///
/// ```
/// use lowbit::format::E5M2;
/// use lowbit::round::{encode, RoundingOptions};
/// use lowbit::Value;
///
/// // 0.3 = 1.2 * 2^-2: exponent -2 + 15 = 01101; fraction 0.2 * 4 = 0.8 -> 1 (nearest) -> 01:
/// // 0 01101 01 = 0x35, the value 1.25 * 2^-2 = 0.3125.
/// assert_eq!(encode(&E5M2, Value::from_f64(0.3), RoundingOptions::IEEE), 0x35);
/// // 62000 lies past 57344 + half its step of 8192: infinity 0 11111 00 without saturation,
/// // the largest finite 0 11110 11 with it.
/// assert_eq!(encode(&E5M2, Value::from_f64(62000.0), RoundingOptions::IEEE), 0x7C);
/// let saturate = RoundingOptions { saturate: true, ..RoundingOptions::IEEE };
/// assert_eq!(encode(&E5M2, Value::from_f64(62000.0), saturate), 0x7B);
/// ```
#[must_use]
pub fn encode(format: &FloatFormat, value: Value, opts: RoundingOptions) -> u64 {
    encode_with_status(format, value, &EncodeOptions::onnx(opts)).0
}

/// Encodes a value into a code of `format`, rounding once, and reports the IEEE flags raised.
///
/// * NaN: the target's NaN (quiet, top payload bits kept where both sides carry payloads), or
///   where it has none the `nan_fallback` with INVALID; a signalling NaN (payload quiet bit
///   clear) raises INVALID.
/// * ±Inf: infinity where the target has one; otherwise MAX (saturating or a finite-only
///   format) or NaN, with INVALID.
/// * finite: INEXACT when rounding changed the value; OVERFLOW|INEXACT when the rounded value
///   exceeds MAX (result: MAX when saturating or, with `directed_overflow`, when the mode keeps
///   it; else infinity, NaN or MAX as the format allows); UNDERFLOW when the result is tiny per
///   `tininess` and inexact. A format that flushes subnormals turns a nonzero subnormal result
///   into zero of the same sign with UNDERFLOW|INEXACT. Below the smallest value of a format
///   without zero (E8M0) the result is that value when saturating, else NaN, with
///   UNDERFLOW|INEXACT; zero itself into such a format is INVALID.
#[must_use]
#[inline]
pub fn encode_with_status(format: &FloatFormat, value: Value, opts: &EncodeOptions) -> (u64, Status) {
    match value {
        Value::Nan { negative, payload } => {
            let signalling = if payload & QUIET_NAN_PAYLOAD == 0 { Status::INVALID } else { Status::empty() };
            let (code, status) = encode_nan(format, negative, payload, &opts.rounding);
            (code, status | signalling)
        }
        Value::Infinite { negative } => {
            if opts.unsigned_rejects_negative && negative && !format.signed {
                return (negative_into_unsigned(format, opts.rounding.saturate), Status::INVALID);
            }
            let code = overflow(format, negative, opts.rounding.saturate);
            let status = if format.infinity_code(negative).is_some() && !opts.rounding.saturate {
                Status::empty()
            } else {
                Status::INVALID
            };
            (code, status)
        }
        Value::Finite(x) => encode_finite(format, x, opts),
    }
}

fn sign_of(format: &FloatFormat, negative: bool) -> u64 {
    if negative {
        format.sign_mask()
    } else {
        0
    }
}

fn encode_nan(format: &FloatFormat, negative: bool, payload: u64, opts: &RoundingOptions) -> (u64, Status) {
    let code = match format.nan_code(negative) {
        None => {
            let fallback = match opts.nan_fallback {
                NanFallback::PositiveMax => format.max_code(),
                NanFallback::SignFlippedNegativeZero => sign_of(format, !negative),
                NanFallback::NegativeZero => sign_of(format, true),
                NanFallback::SignedZero => sign_of(format, negative),
            };
            return (fallback, Status::INVALID);
        }
        Some(canonical) if format.nan_payload && format.mantissa_bits > 0 => {
            // Keep the top payload bits and set the quiet bit, as x86 hardware does between f32
            // and f64 (profile field `nan_payloads`). A source without payload hands over just the quiet
            // bit, which yields `canonical`.
            let quiet = 1u64 << (format.mantissa_bits - 1);
            let kept = payload >> (64 - format.mantissa_bits);
            (canonical & !(format.fraction_field_mask())) | kept | quiet
        }
        Some(canonical) => canonical,
    };
    (code, Status::empty())
}

/// The result for ±Inf and for a finite value whose rounded magnitude exceeds MAX.
fn overflow(format: &FloatFormat, negative: bool, saturate: bool) -> u64 {
    let sign = sign_of(format, negative);
    if saturate {
        return format.max_code() | sign;
    }
    match format.non_finite {
        NonFinite::Ieee => format.infinity_code(negative).unwrap_or(format.max_code() | sign),
        NonFinite::NanAtAllOnes | NonFinite::NanAtNegativeZero => {
            format.nan_code(negative).unwrap_or(format.max_code() | sign)
        }
        // No infinity and no NaN to overflow into: the value clamps (float4, float6).
        NonFinite::None => format.max_code() | sign,
    }
}

/// The result for a nonzero value below the smallest positive magnitude of a format without zero
/// (E8M0). The Cast-24 table: "x < MIN -> MIN" when saturating, NaN otherwise.
fn underflow(format: &FloatFormat, negative: bool, saturate: bool) -> u64 {
    let sign = sign_of(format, negative);
    let smallest = format.min_positive_code() | sign;
    if saturate {
        smallest
    } else {
        format.nan_code(negative).unwrap_or(smallest)
    }
}

/// The result for a negative value (with a nonzero rounded magnitude) into an unsigned format
/// under IEEE rules: NaN where the format has one and the conversion does not saturate, else the
/// value nearest to it (zero, or the smallest value of a format without zero).
fn negative_into_unsigned(format: &FloatFormat, saturate: bool) -> u64 {
    let nearest = format.zero_code(false).unwrap_or(format.min_positive_code());
    if saturate {
        nearest
    } else {
        format.nan_code(false).unwrap_or(nearest)
    }
}

#[inline]
fn encode_finite(format: &FloatFormat, x: Exact, opts: &EncodeOptions) -> (u64, Status) {
    let rounding = &opts.rounding;
    let negative = x.negative && format.signed;
    if x.is_zero() {
        return match format.zero_code(negative) {
            Some(code) => (code, Status::empty()),
            None => (underflow(format, negative, rounding.saturate), Status::INVALID),
        };
    }
    debug_assert!(x.significand != 0, "a sticky fraction needs a nonzero significand");
    // A negative value into an unsigned format keeps its sign for the rounding direction.
    let rejected_negative = opts.unsigned_rejects_negative && x.negative && !format.signed;
    // Normalise to a 64-bit significand so that the rounding position is always inside it
    // (every format has at most 53 significant bits) and a sticky tail stays below it.
    let lz = x.significand.leading_zeros();
    let significand = x.significand << lz;
    let exponent = i64::from(x.exponent) - i64::from(lz);
    // The value lies in [2^top, 2^(top+1)).
    let top = exponent + 63;
    let mantissa_bits = i64::from(format.mantissa_bits);
    // Exponent of the smallest normal binade; below it the quantum stops shrinking (subnormals).
    let min_normal_exp = i64::from(if format.subnormals { 1 - format.bias } else { -format.bias });
    if !format.subnormals && top < min_normal_exp {
        if rejected_negative {
            return (negative_into_unsigned(format, rounding.saturate), Status::INVALID);
        }
        return (underflow(format, negative, rounding.saturate), Status::UNDERFLOW | Status::INEXACT);
    }
    // Exponent of one unit in the last place at the value's binade.
    let quantum = top.max(min_normal_exp) - mantissa_bits;
    // quantum - exponent >= 63 - mantissa_bits >= 10, and it fits u32 for any i32 exponent.
    let shift = (quantum - exponent) as u32;
    let (truncated, rem) = split(significand, shift, x.sticky);
    // The last digit of the truncated code: the fraction's last bit, or with no fraction bits
    // (E8M0, always normal here) the biased exponent's.
    let truncated_is_odd =
        if format.mantissa_bits == 0 { (quantum + i64::from(format.bias)) & 1 == 1 } else { truncated & 1 == 1 };
    let mut m = truncated + u64::from(rounds_up(rounding.mode, rem, truncated_is_odd, x.negative, opts.random));
    let inexact = if rem.inexact { Status::INEXACT } else { Status::empty() };
    let tiny_before = top < min_normal_exp;
    let tiny = match opts.tininess {
        Tininess::BeforeRounding => tiny_before,
        Tininess::AfterRounding => {
            // Only the binade just below the smallest normal can round up to it.
            tiny_before
                && !(format.subnormals
                    && top == min_normal_exp - 1
                    && rounds_to_min_normal_unbounded(significand, shift, x, format, opts))
        }
        // Judged below on the delivered magnitude.
        Tininess::Delivered => false,
    };
    let underflowed = |delivered_tiny: bool| {
        let tiny = if opts.tininess == Tininess::Delivered { delivered_tiny } else { tiny };
        if tiny && rem.inexact {
            Status::UNDERFLOW
        } else {
            Status::empty()
        }
    };
    let mut quantum = quantum;
    if m == 0 {
        let status = inexact | underflowed(true);
        return match format.zero_code(negative) {
            Some(code) => (code, status),
            None => (underflow(format, negative, rounding.saturate), status),
        };
    }
    if rejected_negative {
        return (negative_into_unsigned(format, rounding.saturate), Status::INVALID);
    }
    if m >> (mantissa_bits + 1) != 0 {
        // Rounding carried into the next binade: m was 2^(p) - 1 and became 2^p.
        m >>= 1;
        quantum += 1;
    }
    let sign = sign_of(format, negative);
    if m < 1 << mantissa_bits {
        // Subnormal: exponent field 0 (only reachable at the bottom binade).
        if format.flush_subnormals {
            let zero = format.zero_code(negative).unwrap_or(sign);
            return (zero, Status::UNDERFLOW | Status::INEXACT);
        }
        return (m | sign, inexact | underflowed(true));
    }
    let biased = quantum + mantissa_bits + i64::from(format.bias);
    let overflowed = biased >= 1 << format.exponent_bits
        || (((biased as u64) << format.mantissa_bits) | (m & ((1 << format.mantissa_bits) - 1)))
            > format.max_finite_magnitude();
    if overflowed {
        let code = if opts.directed_overflow && rounding.mode.overflows_to_max(x.negative) {
            format.max_code() | sign
        } else {
            overflow(format, negative, rounding.saturate)
        };
        return (code, Status::OVERFLOW | Status::INEXACT);
    }
    let magnitude = ((biased as u64) << format.mantissa_bits) | (m & ((1 << format.mantissa_bits) - 1));
    (magnitude | sign, inexact | underflowed(false))
}

/// IEEE "tininess after rounding" for a value in the binade just below the smallest normal (the
/// only one that can round up to it): whether rounding it to the target's precision with an
/// unbounded exponent range (one bit finer than the subnormal quantum, at which the value was
/// split with `shift`) reaches the smallest normal.
fn rounds_to_min_normal_unbounded(
    significand: u64,
    shift: u32,
    x: Exact,
    format: &FloatFormat,
    opts: &EncodeOptions,
) -> bool {
    // At the value's own binade the quantum is one bit finer than the subnormal one.
    let (truncated, rem) = split(significand, shift - 1, x.sticky);
    let rounded =
        truncated + u64::from(rounds_up(opts.rounding.mode, rem, truncated & 1 == 1, x.negative, opts.random));
    rounded >> (format.mantissa_bits + 1) != 0
}

/// A code's value as a native float: decoding is the format's, the rounding to the native type is
/// the core's (so these live with the core, and the format data never calls it).
impl FloatFormat {
    /// The value of a code as `f64`; exact for every format here except f64's own NaN payloads,
    /// which it also keeps.
    #[must_use]
    pub fn to_f64(&self, code: u64) -> f64 {
        f64::from_bits(encode(&F64, self.decode(code), RoundingOptions::IEEE))
    }

    /// The value of a code as `f32` (exact for every format of 16 bits or fewer).
    #[must_use]
    pub fn to_f32(&self, code: u64) -> f32 {
        f32::from_bits(encode(&F32, self.decode(code), RoundingOptions::IEEE) as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::*;

    const SAT: RoundingOptions = RoundingOptions { saturate: true, ..RoundingOptions::IEEE };

    fn f32_to(format: &FloatFormat, x: f32, opts: RoundingOptions) -> u64 {
        encode(format, Value::from_f32(x), opts)
    }

    #[test]
    fn e4m3fn_boundaries() {
        assert_eq!(f32_to(&E4M3FN, 464.0, RoundingOptions::IEEE), 0x7E);
        assert_eq!(f32_to(&E4M3FN, f32::from_bits(0x43E8_0001), RoundingOptions::IEEE), 0x7F);
        assert_eq!(f32_to(&E4M3FN, 480.0, SAT), 0x7E);
        assert_eq!(f32_to(&E4M3FN, -480.0, RoundingOptions::IEEE), 0xFF);
        assert_eq!(f32_to(&E4M3FN, 2f32.powi(-10), RoundingOptions::IEEE), 0x00);
        assert_eq!(f32_to(&E4M3FN, 3.0 * 2f32.powi(-10), RoundingOptions::IEEE), 0x02);
        assert_eq!(f32_to(&E4M3FN, -1e-10, RoundingOptions::IEEE), 0x80);
        assert_eq!(f32_to(&E4M3FNUZ, -1e-10, RoundingOptions::IEEE), 0x00);
    }

    #[test]
    fn carries_and_ties() {
        // 15.5 ulps at the top of a binade carries into the next exponent.
        assert_eq!(f32_to(&E4M3FN, 1.9375, RoundingOptions::IEEE), 0x40);
        assert_eq!(f32_to(&E5M2, 1.125, RoundingOptions::IEEE), 0x3C);
        assert_eq!(f32_to(&E5M2, 1.375, RoundingOptions::IEEE), 0x3E);
        assert_eq!(f32_to(&F16, 65520.0, RoundingOptions::IEEE), 0x7C00);
        assert_eq!(f32_to(&F16, 65519.996, RoundingOptions::IEEE), 0x7BFF);
    }

    #[test]
    fn integer_rounding() {
        let r = |x: f64, m| {
            round_to_integer(
                match Value::from_f64(x) {
                    Value::Finite(e) => e,
                    _ => unreachable!(),
                },
                m,
            )
        };
        assert_eq!(r(2.5, RoundingMode::NearestEven), Some((false, 2)));
        assert_eq!(r(3.5, RoundingMode::NearestEven), Some((false, 4)));
        assert_eq!(r(-2.5, RoundingMode::NearestTiesAway), Some((true, 3)));
        assert_eq!(r(-2.9, RoundingMode::TowardZero), Some((true, 2)));
        assert_eq!(r(0.1, RoundingMode::AwayFromZero), Some((false, 1)));
        assert_eq!(r(1e30, RoundingMode::TowardZero), None);
        assert_eq!(r(18446744073709549568.0, RoundingMode::TowardZero), Some((false, 18446744073709549568)));
    }

    #[test]
    fn e8m0_nearest_even_uses_the_code_parity() {
        let ne = RoundingOptions { mode: RoundingMode::NearestEven, saturate: true, ..RoundingOptions::IEEE };
        // 1.5 lies between 0x7F (1) and 0x80 (2); 3 between 0x80 (2) and 0x81 (4): both go to 0x80.
        assert_eq!(f32_to(&E8M0, 1.5, ne), 0x80);
        assert_eq!(f32_to(&E8M0, 3.0, ne), 0x80);
        assert_eq!(f32_to(&E8M0, 6.0, ne), 0x82);
    }

    #[test]
    fn sticky_breaks_ties() {
        // 1 + 2^-4 is a tie for E4M3 (3 fraction bits); a sticky tail pushes it up.
        let tie = Exact { negative: false, significand: 0b10001, exponent: -4, sticky: false };
        assert_eq!(encode(&E4M3FN, Value::Finite(tie), RoundingOptions::IEEE), 0x38);
        let above = Exact { sticky: true, ..tie };
        assert_eq!(encode(&E4M3FN, Value::Finite(above), RoundingOptions::IEEE), 0x39);
    }
}
