//! Kernels on lanes of float32 or float64 values. None of them is the definition of anything: each
//! is derived from a [`FloatFormat`] descriptor (or from the core, for tables), handles the common
//! lanes branch-free, and names the lanes it does not handle (`accepts`) so the plan hands those to
//! the rounding core. `tests/plan.rs` compares every kernel with the core.
//!
//! * [`MinifloatEncoder`]: float32 -> any signed format of at most 16 bits with subnormals (the
//!   four float8, float6, float4, float16, bfloat16), nearest-even, saturating or not. Normal
//!   results round with integer arithmetic on the float32 bits (the carry runs into the exponent);
//!   subnormal results round with one float32 addition of a power of two whose ulp equals the
//!   target's subnormal step, which the hardware rounds to nearest-even.
//! * [`SplitTable`]: float32 -> any target of 8 bits or fewer under any rule, through a table of
//!   the core's answers indexed by the top 16 bits of the float32 and whether the low 16 are zero.
//! * [`IntegerKernel`]: float -> integer (every width, every rounding a profile uses) for |x| < 2^31.
//! * round-to-odd narrowings (float64 -> float32, 64-bit integers -> float64), which let a kernel
//!   of the narrower format round a wider source once: rounding to odd with at least two extra bits
//!   and then to the target gives the target's rounding of the exact value, in every mode.

use crate::alloc_prelude::*;
use crate::fmath;
use crate::format::FloatFormat;
use crate::round::RoundingMode;

/// float32 -> a signed binary format of at most 16 bits with subnormals, nearest-even.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MinifloatEncoder {
    /// float32 bits of the smallest normal target value (2^(1-bias)).
    min_normal_bits: u32,
    /// Below `min_normal_bits`, |x| + `subnormal_magic` rounds |x| to the subnormal step.
    subnormal_magic: f32,
    /// From this float32 magnitude (bits) on, the result overflows.
    overflow_threshold: u32,
    /// Right shift from a float32 fraction to the target's.
    shift: u32,
    /// Subtracted from the shifted bits to move float32's exponent bias to the target's.
    rebias: u32,
    /// The target's sign bit.
    sign_bit: u32,
    /// Codes for +overflow (and +Inf), -overflow, +NaN, -NaN and -0.
    overflow_positive: u32,
    overflow_negative: u32,
    nan_positive: u32,
    nan_negative: u32,
    negative_zero: u32,
    /// The magnitude code of the largest finite value.
    max_magnitude: u32,
}

impl MinifloatEncoder {
    /// The encoder for `f`, given the codes the plan wants for ±overflow (±Inf included), ±NaN and
    /// -0 (the plan takes them from the core, so profile rules on those codes cost nothing here).
    /// `None` for a format it cannot encode: unsigned, without subnormals, wider than 16 bits, or
    /// with a range beyond float32's normal range.
    #[must_use]
    pub fn new(f: &FloatFormat, overflow: [u16; 2], nan: [u16; 2], negative_zero: u16) -> Option<MinifloatEncoder> {
        let m = f.mantissa_bits;
        if f.width() > 16 || !f.signed || !f.subnormals || m == 0 || m > 22 || f.bias > 127 {
            return None;
        }
        // The largest finite value and its successor in an unbounded exponent range; the midpoint
        // of the two has at most m + 2 significant bits, so it is exact in float32.
        let max = f.to_f64(f.max_code());
        let ulp_at_max = fmath::pow2_f64(fmath::floor_log2_f64(max) - m as i32);
        let midpoint = max + ulp_at_max / 2.0;
        if midpoint >= f64::from(f32::MAX) || 1 - f.bias < -126 {
            return None;
        }
        // A tie at the midpoint goes to the even neighbour: above MAX when MAX's last bit is 1.
        let midpoint_overflows = f.max_code() & 1 == 1;
        let overflow_threshold = (midpoint as f32).to_bits() + u32::from(!midpoint_overflows);
        Some(MinifloatEncoder {
            min_normal_bits: fmath::pow2_f32(1 - f.bias).to_bits(),
            subnormal_magic: fmath::pow2_f32(1 - f.bias - m as i32 + 23),
            overflow_threshold,
            shift: 23 - m,
            rebias: ((127 - f.bias) as u32) << m,
            sign_bit: f.sign_mask() as u32,
            overflow_positive: u32::from(overflow[0]),
            overflow_negative: u32::from(overflow[1]),
            nan_positive: u32::from(nan[0]),
            nan_negative: u32::from(nan[1]),
            negative_zero: u32::from(negative_zero),
            max_magnitude: (f.max_code() & !f.sign_mask()) as u32,
        })
    }

    /// The same encoder for finite lanes only, where it can be one: when the overflow codes are
    /// the largest finite value or the code above it (a saturating target, or Inf/NaN coded just
    /// above MAX), of either sign, and -0 is the sign bit alone.
    #[must_use]
    #[cfg(feature = "quant")]
    pub fn finite(&self) -> Option<FiniteEncoder> {
        let overflow = self.overflow_positive;
        let fits = self.overflow_is_a_cap() && self.negative_zero == self.sign_bit;
        fits.then_some(FiniteEncoder {
            min_normal_bits: self.min_normal_bits,
            subnormal_magic: self.subnormal_magic,
            shift: self.shift,
            rebias: self.rebias,
            sign_shift: 31 - self.sign_bit.trailing_zeros(),
            overflow,
        })
    }

    /// Whether the overflow codes are the largest finite magnitude or the code above it, with the
    /// value's sign: then the rounded magnitude (which grows with |x| and passes the largest
    /// finite one from the overflow threshold on) capped at that code is the overflow rule.
    fn overflow_is_a_cap(&self) -> bool {
        let overflow = self.overflow_positive;
        (overflow == self.max_magnitude || overflow == self.max_magnitude + 1)
            && overflow & self.sign_bit == 0
            && self.overflow_negative == overflow | self.sign_bit
    }

    /// The same encoder with its rules on signs, zero, overflow and NaN reduced to masks, where
    /// the codes allow it ([`LeanEncoder`]): every float8 format, saturating or not, float6 and
    /// float4 under the rounding core's codes.
    #[must_use]
    pub fn lean(&self) -> Option<LeanEncoder> {
        let sign_bit = self.sign_bit;
        let zero_sign = match self.negative_zero {
            z if z == sign_bit => sign_bit,
            0 => 0,
            _ => return None,
        };
        let (special_base, special_sign) = match (self.nan_positive, self.nan_negative) {
            (p, n) if p & sign_bit == 0 && n == p | sign_bit => (p, sign_bit),
            (p, n) if p == n => (p, 0),
            _ => return None,
        };
        let overflow = self.overflow_positive;
        // Overflow is the rounded magnitude's cap, with the value's sign, or, where it is coded
        // as NaN, the start of the special lanes.
        let as_nan = overflow == self.nan_positive && self.overflow_negative == self.nan_negative;
        let (cap, special_from) = if self.overflow_is_a_cap() {
            (overflow, 0x7F80_0001)
        } else if as_nan {
            (self.max_magnitude, self.overflow_threshold)
        } else {
            return None;
        };
        Some(LeanEncoder {
            min_normal_bits: self.min_normal_bits,
            subnormal_magic: self.subnormal_magic,
            shift: self.shift,
            rebias: self.rebias,
            sign_shift: 31 - sign_bit.trailing_zeros(),
            cap,
            zero_sign,
            special_from,
            special_base,
            special_sign,
        })
    }

    /// Encodes one value. Written without branches (every candidate is computed, then selected)
    /// so that loops over slices vectorise.
    #[inline]
    #[must_use]
    pub fn encode(&self, x: f32) -> u16 {
        let bits = x.to_bits();
        let negative = bits >> 31 == 1;
        let abs = bits & 0x7FFF_FFFF;
        let magnitude = rounded_magnitude(abs, self.shift, self.rebias, self.subnormal_magic, self.min_normal_bits);
        let (sign, overflow, nan) = if negative {
            (self.sign_bit, self.overflow_negative, self.nan_negative)
        } else {
            (0, self.overflow_positive, self.nan_positive)
        };
        let finite = if magnitude == 0 && negative { self.negative_zero } else { magnitude | sign };
        let code = if abs >= self.overflow_threshold { overflow } else { finite };
        (if abs > 0x7F80_0000 { nan } else { code }) as u16
    }
}

/// The magnitude code of |x| (float32 bits `abs`, below the overflow threshold) rounded to nearest
/// even, for a format whose fraction is `23 - shift` bits: both candidates, then one select.
#[inline(always)]
fn rounded_magnitude(abs: u32, shift: u32, rebias: u32, subnormal_magic: f32, min_normal_bits: u32) -> u32 {
    // Normal results: round the fraction to nearest-even in the integer domain; the carry runs
    // into the exponent. Wrapping: below the normal range this candidate is discarded.
    let half_minus_one = (1u32 << (shift - 1)) - 1;
    let odd = (abs >> shift) & 1;
    let normal = ((abs + half_minus_one + odd) >> shift).wrapping_sub(rebias);
    // Subnormal results: one float32 addition rounds to the target's subnormal step.
    let subnormal = (f32::from_bits(abs) + subnormal_magic).to_bits().wrapping_sub(subnormal_magic.to_bits());
    // As i32 (both are below 2^31): one signed compare, where an unsigned one is two on AVX2.
    if (abs as i32) < min_normal_bits as i32 {
        subnormal
    } else {
        normal
    }
}

/// [`MinifloatEncoder`] on finite lanes, with less to select. The rounded magnitude code grows
/// with |x| and is above the largest finite value's from the overflow threshold on, so overflow
/// is its minimum with the overflow code; the sign is then one bit; and a zero magnitude with the
/// sign is -0. For loops that know their lanes are finite (MX scales them into the element's
/// range; a NaN or an infinity never reaches it).
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg(feature = "quant")]
pub struct FiniteEncoder {
    min_normal_bits: u32,
    subnormal_magic: f32,
    shift: u32,
    rebias: u32,
    /// Right shift from float32's sign bit to the target's.
    sign_shift: u32,
    /// The magnitude code of overflowing values (never below the largest finite value's).
    overflow: u32,
}

#[cfg(feature = "quant")]
impl FiniteEncoder {
    /// Encodes one finite value (meaningless for NaN and the infinities).
    #[inline]
    #[must_use]
    pub fn encode(&self, x: f32) -> u16 {
        let bits = x.to_bits();
        let abs = bits & 0x7FFF_FFFF;
        let magnitude = rounded_magnitude(abs, self.shift, self.rebias, self.subnormal_magic, self.min_normal_bits);
        (magnitude.min(self.overflow) | (bits & 0x8000_0000) >> self.sign_shift) as u16
    }
}

/// [`MinifloatEncoder`] with its rules as masks ([`MinifloatEncoder::lean`]): the rounded
/// magnitude capped at the overflow code, the sign bit or'ed in (dropped from a zero magnitude
/// where -0 is coded as +0), and the lanes from `special_from` on (NaN, and overflow where it is
/// coded as NaN) given the NaN code. About two thirds of [`MinifloatEncoder::encode`]'s
/// instructions per lane. (The fields are read by the AVX2 copy of [`Self::encode`] in
/// `simd::x86`.)
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LeanEncoder {
    pub(crate) min_normal_bits: u32,
    pub(crate) subnormal_magic: f32,
    pub(crate) shift: u32,
    pub(crate) rebias: u32,
    /// Right shift from float32's sign bit to the target's.
    pub(crate) sign_shift: u32,
    /// The magnitude code of overflowing values and infinities.
    pub(crate) cap: u32,
    /// The sign bit a zero magnitude keeps: the target's sign bit, or 0 where -0 is +0's code.
    pub(crate) zero_sign: u32,
    /// From this float32 magnitude (bits) on, the lane's code is the NaN code.
    pub(crate) special_from: u32,
    /// The NaN code of a positive NaN, and the sign bit a negative one adds (or 0).
    pub(crate) special_base: u32,
    pub(crate) special_sign: u32,
}

impl LeanEncoder {
    /// Whether a zero magnitude keeps its sign (a format with -0). Callers pass it to
    /// [`Self::encode`] as a constant, which leaves the zero test out where it is true.
    #[must_use]
    pub fn zero_keeps_sign(&self) -> bool {
        self.zero_sign != 0
    }

    /// Encodes one value. `ZERO_KEEPS_SIGN` must be [`Self::zero_keeps_sign`].
    #[inline]
    #[must_use]
    pub fn encode<const ZERO_KEEPS_SIGN: bool>(&self, x: f32) -> u16 {
        let bits = x.to_bits();
        let abs = bits & 0x7FFF_FFFF;
        let sign = (bits & 0x8000_0000) >> self.sign_shift;
        // An infinity's rounded magnitude is above every finite one's: the cap.
        let magnitude =
            rounded_magnitude(abs, self.shift, self.rebias, self.subnormal_magic, self.min_normal_bits).min(self.cap);
        let sign_kept = if ZERO_KEEPS_SIGN || magnitude != 0 { sign } else { sign & self.zero_sign };
        let special = self.special_base | sign & self.special_sign;
        // As i32, one signed compare (both are below 2^31).
        (if abs as i32 >= self.special_from as i32 { special } else { magnitude | sign_kept }) as u16
    }
}

/// float32 -> a format with float32's exponent field (bfloat16): nearest-even is one integer
/// rounding of the bits, subnormals and overflow to infinity included, so the encoder is a third
/// of [`MinifloatEncoder`]'s work.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TruncatedEncoder {
    /// Right shift from float32's bits to the target's.
    shift: u32,
    nan_positive: u16,
    nan_negative: u16,
    /// All ones when a NaN's code is its own top bits with the quiet bit set (its sign and the top
    /// of its payload kept, as hardware conversions do), zero when it is `nan_positive` or
    /// `nan_negative` by sign.
    nan_from_bits: u16,
    /// The target's quiet bit (the top fraction bit).
    quiet: u16,
}

impl TruncatedEncoder {
    /// The encoder for `f` given the codes the plan wants for ±overflow, ±NaN and -0 (from the
    /// core); `None` unless `f` has float32's exponent field and those codes are the ones the
    /// integer rounding gives (infinity on overflow, the sign bit alone for -0).
    #[must_use]
    pub fn new(f: &FloatFormat, overflow: [u16; 2], nan: [u16; 2], negative_zero: u16) -> Option<TruncatedEncoder> {
        if f.exponent_bits != 8 || f.bias != 127 || !f.signed || !f.subnormals || f.width() > 16 {
            return None;
        }
        let shift = 23 - f.mantissa_bits;
        let sign = f.sign_mask() as u16;
        let infinity = (0x7F80_0000u32 >> shift) as u16;
        if overflow != [infinity, infinity | sign] || negative_zero != sign {
            return None;
        }
        let quiet = 1u16 << (f.mantissa_bits - 1);
        Some(TruncatedEncoder { shift, nan_positive: nan[0], nan_negative: nan[1], nan_from_bits: 0, quiet })
    }

    /// The same encoder with NaN codes made from each NaN's own bits (sign and top of the payload
    /// kept, quiet bit set) instead of one code per sign.
    #[must_use]
    pub fn with_nan_from_bits(self) -> TruncatedEncoder {
        TruncatedEncoder { nan_from_bits: u16::MAX, ..self }
    }

    /// The code of `x`, computed branch-free from its float32 bits.
    #[inline]
    #[must_use]
    pub fn encode(&self, x: f32) -> u16 {
        let bits = x.to_bits();
        let abs = bits & 0x7FFF_FFFF;
        let half_minus_one = (1u32 << (self.shift - 1)) - 1;
        let rounded = (abs + half_minus_one + ((abs >> self.shift) & 1)) >> self.shift;
        let negative = bits >> 31 == 1;
        let code = rounded | u32::from(negative) << (31 - self.shift);
        // Selected with a mask: a plain `if` on the sign became a lookup in the struct's fields.
        let sign_mask = 0u16.wrapping_sub(u16::from(negative));
        let constant_nan = self.nan_positive ^ ((self.nan_positive ^ self.nan_negative) & sign_mask);
        let own_nan = (bits >> self.shift) as u16 | self.quiet;
        let nan = (own_nan & self.nan_from_bits) | (constant_nan & !self.nan_from_bits);
        let nan_mask = 0u16.wrapping_sub(u16::from(abs > 0x7F80_0000));
        (code as u16 & !nan_mask) | (nan & nan_mask)
    }
}

/// float32 -> an unsigned exponent-only format with float32's bias (E8M0): a normal float32's
/// code is its exponent field, plus one where its fraction reaches the round-up threshold of the
/// mode. Every other lane (zero, subnormals, infinities, NaN, and negative values unless the table
/// answers them by their magnitude or with one code) is a *special* lane that the plan answers from
/// the split table. Built only from a split table it agrees with on every representative, so its
/// answers are the core's for every float32 (the same argument as the split table's).
#[derive(Clone, Debug)]
pub struct ExponentKernel {
    /// The fraction from which the code rounds up (2^23: never).
    round_up_from: u32,
    /// The code of an exponent field that rounds past the largest code.
    overflow: u8,
    negative: NegativeRule,
    table: SplitTable,
}

/// What the table does with negative normal values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum NegativeRule {
    /// The code of the magnitude (E8M0 under the spec: the sign is dropped).
    Magnitude,
    /// One code for all of them.
    Constant(u8),
    /// Anything else: the table answers each.
    Special,
}

impl ExponentKernel {
    /// `None` unless `f` is unsigned, exponent-only with float32's exponent field, and some
    /// threshold makes the arithmetic agree with `table` on every non-special representative.
    #[must_use]
    pub fn new(f: &FloatFormat, table: SplitTable) -> Option<ExponentKernel> {
        if f.signed || f.mantissa_bits != 0 || f.exponent_bits != 8 || f.bias != 127 {
            return None;
        }
        let overflow = table.encode(f32::MAX);
        let representatives = (0..1u32 << 17).map(|i| f32::from_bits((i >> 1) << 16 | (i & 1) << 15));
        let negatives = representatives.clone().filter(|x| x.is_sign_negative() && x.is_normal());
        let negative = if negatives.clone().all(|x| table.encode(x) == table.encode(-x)) {
            NegativeRule::Magnitude
        } else {
            let first = table.encode(-1.0);
            if negatives.clone().all(|x| table.encode(x) == first) {
                NegativeRule::Constant(first)
            } else {
                NegativeRule::Special
            }
        };
        [1u32, 0x40_0000, 0x40_0001, 0x80_0000].into_iter().find_map(|round_up_from| {
            let kernel = ExponentKernel { round_up_from, overflow, negative, table: table.clone() };
            representatives
                .clone()
                .all(|x| kernel.is_special(x) || kernel.arithmetic(x) == table.encode(x))
                .then_some(kernel)
        })
    }

    /// Whether the split table answers this lane.
    #[inline(always)]
    #[must_use]
    pub fn is_special(&self, x: f32) -> bool {
        let bits = x.to_bits();
        let exponent = bits >> 23 & 0xFF;
        // Bitwise, not short-circuit, so that loops over lanes stay branch-free.
        let sign_special = self.negative == NegativeRule::Special;
        (exponent == 0) | (exponent == 0xFF) | ((bits >> 31 == 1) & sign_special)
    }

    /// The code of a lane that is not special (branch-free; meaningless on special lanes).
    #[inline(always)]
    #[must_use]
    pub fn arithmetic(&self, x: f32) -> u8 {
        let bits = x.to_bits();
        let exponent = bits >> 23 & 0xFF;
        let code = exponent + u32::from(bits & 0x7F_FFFF >= self.round_up_from);
        let code = if code >= 0xFF { u32::from(self.overflow) } else { code };
        let constant = match self.negative {
            NegativeRule::Constant(c) => u32::from(c),
            _ => code,
        };
        (if bits >> 31 == 1 { constant } else { code }) as u8
    }

    /// The code of one lane.
    #[inline]
    #[must_use]
    pub fn encode(&self, x: f32) -> u8 {
        if self.is_special(x) {
            self.table.encode(x)
        } else {
            self.arithmetic(x)
        }
    }

    /// The split table behind the special lanes.
    #[must_use]
    pub fn table(&self) -> &SplitTable {
        &self.table
    }
}

/// float32 -> a target of 8 bits or fewer, as a table of the core's answers. Exact because every
/// decision point of such a target (its values, the midpoints between them, its overflow and
/// underflow thresholds, a profile's windows) has at most 8 significant bits, so it is a float32
/// whose low 16 bits are zero: all float32 values strictly between two such patterns get one
/// answer, the one for any of them. `tests/plan.rs` checks this against the core.
#[derive(Clone, Debug)]
pub struct SplitTable {
    /// Entry `2 * (bits >> 16) + (low 16 bits != 0)`.
    codes: Box<[u8]>,
}

impl SplitTable {
    /// Builds the table by asking `core` for the two representatives of every top-16-bit pattern.
    pub fn build(mut core: impl FnMut(u32) -> u8) -> SplitTable {
        let codes = (0..1u32 << 17).map(|i| core((i >> 1) << 16 | (i & 1) << 15)).collect();
        SplitTable { codes }
    }

    /// The code for one float32.
    #[inline]
    #[must_use]
    pub fn encode(&self, x: f32) -> u8 {
        let bits = x.to_bits();
        self.codes[(bits >> 16 << 1 | u32::from(bits & 0xFFFF != 0)) as usize]
    }

    /// Whether `encoder` gives this table's answer for every representative (then it gives the
    /// core's answer for every float32 the table covers, and is the faster of the two).
    #[must_use]
    pub fn agrees_with(&self, encoder: &MinifloatEncoder) -> bool {
        self.codes.iter().enumerate().all(|(i, &code)| {
            let i = i as u32;
            encoder.encode(f32::from_bits((i >> 1) << 16 | (i & 1) << 15)) == u16::from(code)
        })
    }
}

/// How a float becomes an integer code on the lanes a plan gives it: `|x| < 2^31` (the other
/// lanes go to the core).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IntegerKernel {
    /// The rounding applied before the low bits are kept.
    pub mode: RoundingMode,
    /// Mask of the target's bits.
    pub mask: u64,
}

/// The float lane types the integer kernel runs on.
pub trait FloatLane: Copy {
    /// |x| < 2^31 (false for NaN).
    fn fits_i32(self) -> bool;
    /// |x| (0 for lanes that do not fit) split into its integer part and the fraction left over,
    /// both exact.
    fn split(self) -> (i32, Self);
    /// Whether the sign bit is set (NaN included).
    fn is_negative(self) -> bool;
    /// The fraction part of [`FloatLane::split`] is above 1/2.
    fn above_half(self) -> bool;
    /// The fraction part is exactly 1/2 (a tie).
    fn is_half(self) -> bool;
    /// The fraction part is not zero (the conversion is inexact).
    fn is_nonzero(self) -> bool;
}

macro_rules! float_lane {
    ($t:ty) => {
        impl FloatLane for $t {
            #[inline]
            fn fits_i32(self) -> bool {
                self.abs() < 2147483648.0
            }
            #[inline]
            fn split(self) -> (i32, Self) {
                let magnitude = if self.fits_i32() { self.abs() } else { 0.0 };
                let whole = magnitude as i32;
                (whole, magnitude - whole as $t)
            }
            #[inline]
            fn is_negative(self) -> bool {
                self.is_sign_negative()
            }
            #[inline]
            fn above_half(self) -> bool {
                self > 0.5
            }
            #[inline]
            fn is_half(self) -> bool {
                self == 0.5
            }
            #[inline]
            fn is_nonzero(self) -> bool {
                self != 0.0
            }
        }
    };
}
float_lane!(f32);
float_lane!(f64);

impl IntegerKernel {
    /// Rounds every lane that fits (`FloatLane::fits_i32`) to an integer with the kernel's mode;
    /// lanes that do not fit give 0 and go to the core. The results wrap at 2^32, which keeps the
    /// low bits every target needs (only the packed targets round, and they keep 4 bits or fewer).
    pub fn round<L: FloatLane>(&self, lanes: &[L], out: &mut [i32]) {
        // One loop per mode, so each loop is branch-free and vectorises.
        fn each<L: FloatLane>(lanes: &[L], out: &mut [i32], up: impl Fn(i32, L, bool) -> bool) {
            for (o, &x) in out.iter_mut().zip(lanes) {
                let (whole, fraction) = x.split();
                let rounded = whole.wrapping_add(i32::from(up(whole, fraction, x.is_negative())));
                *o = if x.is_negative() { rounded.wrapping_neg() } else { rounded };
            }
        }
        match self.mode {
            RoundingMode::NearestEven => {
                each(lanes, out, |w, f, _| f.above_half() || (f.is_half() && w & 1 == 1));
            }
            RoundingMode::NearestTiesAway => each(lanes, out, |_, f, _| f.above_half() || f.is_half()),
            // With no random bits (a plan has none), stochastic rounding adds zero: truncation.
            RoundingMode::TowardZero | RoundingMode::Stochastic { .. } => each(lanes, out, |_, _, _| false),
            RoundingMode::AwayFromZero => each(lanes, out, |_, f, _| f.is_nonzero()),
            RoundingMode::TowardNegative => each(lanes, out, |_, f, negative| negative && f.is_nonzero()),
            RoundingMode::TowardPositive => each(lanes, out, |_, f, negative| !negative && f.is_nonzero()),
            RoundingMode::ToOdd => each(lanes, out, |w, f, _| f.is_nonzero() && w & 1 == 0),
        }
    }

    /// [`IntegerKernel::round`] for float32 lanes read straight from little-endian source bytes,
    /// with the CPU's rounding instructions: below 2^31 a float32 rounds to an integer that
    /// still fits an i32 (float32s from 2^23 up are integers already).
    #[inline(always)]
    pub fn round_f32(&self, src: &[u8], out: &mut [i32]) {
        #[inline(always)]
        fn each(src: &[u8], out: &mut [i32], rounded: impl Fn(f32) -> f32) {
            for (o, b) in out.iter_mut().zip(src.chunks_exact(4)) {
                let x = f32::from_le_bytes(b.try_into().expect("4 bytes"));
                *o = if x.fits_i32() { integral_f32_to_i32(rounded(x)) } else { 0 };
            }
        }
        match self.mode {
            RoundingMode::NearestEven => each(src, out, fmath::round_ties_even),
            RoundingMode::NearestTiesAway => each(src, out, fmath::round),
            RoundingMode::TowardZero | RoundingMode::Stochastic { .. } => each(src, out, fmath::trunc),
            RoundingMode::AwayFromZero => each(src, out, |x| {
                let t = fmath::trunc(x);
                if t == x {
                    t
                } else {
                    t + 1f32.copysign(x)
                }
            }),
            RoundingMode::TowardNegative => each(src, out, fmath::floor),
            RoundingMode::TowardPositive => each(src, out, fmath::ceil),
            RoundingMode::ToOdd => each(src, out, |x| {
                let t = fmath::trunc(x);
                // |t| < 2^31 here, so halving it shows its parity exactly.
                if t == x || fmath::trunc(t * 0.5) != t * 0.5 {
                    t
                } else {
                    t + 1f32.copysign(x)
                }
            }),
        }
    }

    /// The code of one lane (the slow way round, for tests and single values).
    #[must_use]
    pub fn encode<L: FloatLane>(&self, x: L) -> u64 {
        let mut out = [0i32];
        self.round(&[x], &mut out);
        (i64::from(out[0]) as u64) & self.mask
    }
}

/// An integer-valued float32 below 2^31 in magnitude as an i32, by shifting its significand:
/// unlike `as i32`, which must saturate and so stays scalar, this vectorises.
#[inline(always)]
fn integral_f32_to_i32(x: f32) -> i32 {
    let bits = x.to_bits();
    let exponent = (bits >> 23 & 0xFF) as i32;
    let significand = (bits & 0x007F_FFFF) | 0x0080_0000;
    // Nonzero integers below 2^31 have exponents 127..=157, so both shifts stay below 32.
    let right = (150 - exponent).clamp(0, 31) as u32;
    let left = (exponent - 150).clamp(0, 31) as u32;
    let magnitude = if exponent < 127 { 0 } else { (significand >> right) << left };
    (if bits >> 31 == 1 { magnitude.wrapping_neg() } else { magnitude }) as i32
}

/// `x` rounded to float32 by rounding to odd: the float32 toward zero, its last bit set when the
/// conversion was inexact. Valid for |x| in float32's normal range (or zero); the plan sends every
/// other lane to the core.
#[inline]
#[must_use]
pub fn f64_to_f32_odd(x: f64) -> f32 {
    let nearest = x as f32;
    let back = f64::from(nearest);
    let inexact = back != x;
    // Sign-magnitude bits: one less is one step toward zero.
    let toward_zero = nearest.to_bits() - u32::from(inexact && back.abs() > x.abs());
    f32::from_bits(toward_zero | u32::from(inexact))
}

/// The lanes on which [`f64_to_f32_odd`] is valid: zero and float32's normal range.
#[inline]
#[must_use]
pub fn f32_odd_accepts(x: f64) -> bool {
    let a = x.abs();
    a == 0.0 || (a >= f64::from(f32::MIN_POSITIVE) && a < fmath::pow2_f64(128))
}

/// A 64-bit magnitude rounded to float64 by rounding to odd (exact below 2^53).
#[inline]
#[must_use]
pub fn u64_to_f64_odd(m: u64) -> f64 {
    // Bits below the 53 the float64 keeps, folded into its last bit.
    let shift = 11u32.saturating_sub(m.leading_zeros());
    let kept = m >> shift;
    let sticky = u64::from(m & ((1u64 << shift) - 1) != 0);
    (kept | sticky) as f64 * f64::from_bits(u64::from(1023 + shift) << 52)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format;
    use crate::round::{self, RoundingOptions};
    use crate::value::Value;

    fn core_encoder(f: &FloatFormat, saturate: bool) -> MinifloatEncoder {
        let opts = RoundingOptions { saturate, ..RoundingOptions::IEEE };
        let at = |v: Value| round::encode(f, v, opts) as u16;
        let overflow = [at(Value::Infinite { negative: false }), at(Value::Infinite { negative: true })];
        let nan = [at(Value::from_f32(f32::NAN)), at(Value::from_f32(-f32::NAN))];
        MinifloatEncoder::new(f, overflow, nan, at(Value::from_f32(-0.0))).unwrap()
    }

    #[test]
    fn derived_thresholds() {
        // 464 is a tie that goes down to MAX (448, even); anything above overflows.
        assert_eq!(core_encoder(&format::E4M3FN, false).overflow_threshold, 464f32.to_bits() + 1);
        assert_eq!(f32::from_bits(core_encoder(&format::E5M2, false).overflow_threshold), 61440.0);
        assert_eq!(f32::from_bits(core_encoder(&format::F16, false).overflow_threshold), 65520.0);
        assert!(MinifloatEncoder::new(&format::E8M0, [0; 2], [0; 2], 0).is_none());
        assert!(MinifloatEncoder::new(&format::F32, [0; 2], [0; 2], 0).is_none());
    }

    #[test]
    fn finite_encoder_agrees_on_finite_lanes() {
        // Every finite representative of the split tables (the top 16 bits of a float32, low bits
        // zero or not), for the formats with -0 as the sign bit alone, saturating or not.
        // Compared with the rounding core itself, not with the full encoder it is derived from.
        for f in [format::E4M3FN, format::E5M2, format::E2M3, format::E3M2, format::E2M1, format::F16, format::BF16] {
            for saturate in [true, false] {
                let opts = RoundingOptions { saturate, ..RoundingOptions::IEEE };
                let finite = core_encoder(&f, saturate).finite().unwrap_or_else(|| panic!("{f:?} saturate={saturate}"));
                for i in 0..1u32 << 17 {
                    let x = f32::from_bits((i >> 1) << 16 | (i & 1) << 15);
                    if x.is_finite() {
                        let want = round::encode(&f, Value::from_f32(x), opts) as u16;
                        assert_eq!(finite.encode(x), want, "{x:e} {f:?} saturate={saturate}");
                    }
                }
            }
        }
        // FNUZ formats code -0 as +0 and overflow as NaN 0x80: no finite encoder.
        assert!(core_encoder(&format::E4M3FNUZ, true).finite().is_none());
    }

    #[test]
    fn lean_encoder_agrees_with_the_core_on_every_lane() {
        // Every representative of the split tables (the top 16 bits of a float32, low bits zero
        // or not), infinities and NaNs included, for every byte-wide target, saturating or not:
        // the lean encoder exists for each (the FNUZ formats' -0 as +0 and overflow as NaN
        // included) and gives the rounding core's code. (float16 keeps NaN payloads, which no
        // encoder here does: its plans hand NaN lanes to the core.)
        let formats = [
            format::E4M3FN,
            format::E4M3FNUZ,
            format::E5M2,
            format::E5M2FNUZ,
            format::E2M3,
            format::E3M2,
            format::E2M1,
        ];
        for f in formats {
            for saturate in [true, false] {
                let opts = RoundingOptions { saturate, ..RoundingOptions::IEEE };
                let lean = core_encoder(&f, saturate).lean().unwrap_or_else(|| panic!("{f:?} saturate={saturate}"));
                for i in 0..1u32 << 17 {
                    let x = f32::from_bits((i >> 1) << 16 | (i & 1) << 15);
                    let want = round::encode(&f, Value::from_f32(x), opts) as u16;
                    let got = if lean.zero_keeps_sign() { lean.encode::<true>(x) } else { lean.encode::<false>(x) };
                    assert_eq!(got, want, "{x:e} ({:#x}) {f:?} saturate={saturate}", x.to_bits());
                }
            }
        }
    }

    #[test]
    fn a_few_codes() {
        let e4 = core_encoder(&format::E4M3FN, false);
        for (x, want) in [(464.0f32, 0x7E), (480.0, 0x7F), (-480.0, 0xFF), (3.0 * 2f32.powi(-10), 0x02), (-1e-10, 0x80)]
        {
            assert_eq!(e4.encode(x), want, "{x}");
        }
        let fnuz = core_encoder(&format::E4M3FNUZ, false);
        assert_eq!(fnuz.encode(-1e-10), 0x00);
        assert_eq!(fnuz.encode(f32::NEG_INFINITY), 0x80);
        let f16 = core_encoder(&format::F16, false);
        assert_eq!(f16.encode(65519.996), 0x7BFF);
        assert_eq!(f16.encode(2f32.powi(-25)), 0x0000);
        assert_eq!(f16.encode(3.0 * 2f32.powi(-25)), 0x0002);
        assert_eq!(super::super::decode::DecodeTable::of(&format::E8M0).unwrap().decode(0x00), 2f32.powi(-127));
    }

    #[test]
    fn e8m0_takes_the_exponent_kernel_in_every_mode() {
        use crate::convert::{convert_code, CastOptions, RoundMode};
        use crate::dtype::DType;
        for round_mode in [RoundMode::Up, RoundMode::Down, RoundMode::Nearest] {
            for saturate in [true, false] {
                let opts = CastOptions { saturate, round_mode, ..CastOptions::default() };
                let table = SplitTable::build(|bits| {
                    convert_code(DType::Float, DType::Float8E8M0, u64::from(bits), &opts).unwrap() as u8
                });
                let kernel = ExponentKernel::new(&format::E8M0, table);
                assert!(kernel.is_some(), "{round_mode:?} saturate={saturate}");
                // 3 = 1.5 * 2^1: up and nearest (ties up) give 2^2, down gives 2^1.
                let want = if round_mode == RoundMode::Down { 128 } else { 129 };
                assert_eq!(kernel.unwrap().encode(3.0), want, "{round_mode:?}");
            }
        }
    }

    #[test]
    fn round_to_odd() {
        // 1 + 2^-30 is between two float32s: toward zero is 1, odd makes it 1 + 2^-23.
        assert_eq!(f64_to_f32_odd(1.0 + 2f64.powi(-30)), 1.0 + 2f32.powi(-23));
        assert_eq!(f64_to_f32_odd(-(1.0 + 2f64.powi(-30))), -(1.0 + 2f32.powi(-23)));
        // Just below 2: nearest would be 2, odd is the float32 below 2 (already odd).
        assert_eq!(f64_to_f32_odd(2.0 - 2f64.powi(-40)), f32::from_bits(2f32.to_bits() - 1));
        assert_eq!(f64_to_f32_odd(1.5), 1.5);
        assert_eq!(u64_to_f64_odd(u64::MAX), 2f64.powi(64) - 2f64.powi(11));
        assert_eq!(u64_to_f64_odd((1 << 53) + 2), ((1u64 << 53) + 2) as f64);
        assert_eq!(u64_to_f64_odd((1 << 54) + 2), ((1u64 << 54) + 4) as f64);
        assert_eq!(u64_to_f64_odd(12345), 12345.0);
    }

    #[test]
    fn integer_rounding_of_lanes() {
        let k = |mode| IntegerKernel { mode, mask: 0xF };
        assert_eq!(k(RoundingMode::NearestEven).encode(2.5f32), 2);
        assert_eq!(k(RoundingMode::NearestEven).encode(-2.5f32), 0xE);
        assert_eq!(k(RoundingMode::NearestTiesAway).encode(2.5f64), 3);
        assert_eq!(k(RoundingMode::TowardZero).encode(-7.9f32), 9);
        assert_eq!(k(RoundingMode::AwayFromZero).encode(0.1f64), 1);
        assert!(!f32::NAN.fits_i32());
        for x in [0.0f32, -0.0, 1.0, -1.0, 7.0, -8.0, 8388607.0, 8388608.0, -16777216.0, 2147483520.0, -2147483520.0] {
            assert_eq!(integral_f32_to_i32(x), x as i32, "{x}");
        }
        assert!(!2147483648f32.fits_i32());
    }
}
