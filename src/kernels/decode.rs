//! Sources of 16 bits or fewer into float32 and float64 without a lookup per element: the exact
//! value of a code by arithmetic derived from the format descriptor, with the few codes where the
//! core answers something else (infinities, NaN under a profile's payload rule, E8M0's 2^-127)
//! taken from the plan's table. Decoding is where a table is slowest relative to the work (one
//! load from a 256 KiB table per element against a shift and a multiply), and where the output is
//! four or eight times the input, so it runs at the speed of the stores.
//!
//! * Float sources: a normal code's exponent and fraction fields shifted into float32's, and the
//!   exponent rebiased by an integer addition; a subnormal code's fraction converted and
//!   multiplied by the format's subnormal step (both normal float32s, the product exact). IEEE
//!   formats' infinities and NaNs go to float32's exponent all ones with their fraction.
//! * Integer sources: sign- or zero-extended, converted (exact: at most 16 bits).
//!
//! Neither formula is trusted: [`Widen::new`] compares it with the core's table on every source
//! code and builds a cheap test for the codes where they differ (those at or above a magnitude,
//! and up to two single codes); lanes that pass it take the table's answer. Whatever the profile,
//! the result is the table's.
//!
//! [`DecodeTable`] is the scalar path: any format of 8 bits or fewer -> float32 through 256
//! entries from the core.

use super::lut::Table;
use super::LANE_CHUNK;
use crate::alloc_prelude::*;
use crate::dtype::{DType, Kind, Packing};
use crate::format::{self, FloatFormat, NonFinite};
use crate::once::Once;
use crate::round::{self, RoundingOptions};
use crate::value::Value;
use alloc::sync::Arc;

/// The exact value of a source code, as float32 bits.
#[derive(Clone, Copy, Debug)]
enum Formula {
    Float {
        /// From the code's magnitude to float32's field positions.
        shift: u32,
        magnitude_mask: u32,
        sign_bit: u32,
        /// Left shift from the code's sign bit to float32's (bit 31).
        sign_shift: u32,
        /// Added to a normal code's fields: float32's bias minus the format's, in the exponent field.
        rebias: u32,
        /// Magnitudes below this (exponent field 0) are subnormal: fraction times `subnormal_step`.
        min_normal: u32,
        /// The format's subnormal step, 2^(1 - bias - mantissa bits).
        subnormal_step: f32,
        /// The magnitude from which an IEEE format's codes are infinities and NaNs (exponent field
        /// all ones), whose fields go to float32's exponent all ones; [`NO_SPECIALS`] for other formats.
        special_from: u32,
        /// Set in a NaN's float32 fraction (the quiet bit where the table quiets NaNs, else 0).
        nan_quiet: u32,
    },
    /// A float16 code (the source code shifted left by `shift`: a format that is float16 with
    /// fewer fraction bits, as E5M2 is, has its codes at the top of float16's) converted by the
    /// CPU's F16C instruction. Offered only where the CPU has it, and for FLOAT targets.
    Half { shift: u32, magnitude_mask: u32 },
    Integer {
        /// Left shift that puts the code's top bit at bit 31, so an arithmetic right shift by the
        /// same amount sign-extends (0 for the 32-bit shifts of unsigned codes).
        sign_shift: u32,
        signed: bool,
    },
}

impl Formula {
    /// The formulas for a dtype: for float formats, one that keeps NaN payloads as they are and
    /// one that also sets the quiet bit (which one a profile's table matches is for the table to
    /// say).
    fn candidates(dtype: DType, double: bool) -> Vec<Formula> {
        match dtype.kind() {
            Kind::Float(f) if f.width() <= 16 && f.mantissa_bits <= 23 => {
                // float16's fields (or its top ones: float16's descriptor with fewer fraction
                // bits): the hardware conversion first, so that it wins ties.
                let h = &crate::format::F16;
                let half = f.exponent_bits == h.exponent_bits
                    && f.bias == h.bias
                    && f.signed == h.signed
                    && f.subnormals == h.subnormals
                    && f.non_finite == h.non_finite
                    && f.mantissa_bits <= h.mantissa_bits;
                let hardware = (half && !double && super::simd::has_f16c()).then(|| Formula::Half {
                    shift: h.mantissa_bits - f.mantissa_bits,
                    magnitude_mask: f.sign_mask() as u32 - 1,
                });
                let sign_bit = if f.signed { f.sign_mask() as u32 } else { 0 };
                let special_from = match f.non_finite {
                    NonFinite::Ieee => ((1u32 << f.exponent_bits) - 1) << f.mantissa_bits,
                    _ => NO_SPECIALS,
                };
                // First (so that it wins ties) the formula that leaves an IEEE format's infinities
                // and NaNs to the integer arithmetic: right wherever the format's exponent field
                // is float32's (bfloat16), and cheaper.
                let no_specials = (special_from != NO_SPECIALS).then_some((NO_SPECIALS, 0));
                let arithmetic = no_specials.into_iter().chain([(special_from, 0), (special_from, 1 << 22)]).map(
                    |(special_from, nan_quiet)| Formula::Float {
                        shift: 23 - f.mantissa_bits,
                        magnitude_mask: (1u32 << (f.width() - u32::from(f.signed))) - 1,
                        sign_bit,
                        sign_shift: 32 - f.width(),
                        rebias: ((127 - f.bias) as u32) << 23,
                        // With float32's bias, the fields already are float32's bits, subnormals
                        // included (and the subnormal step would itself be subnormal).
                        min_normal: if f.bias == 127 { 0 } else { 1 << f.mantissa_bits },
                        // Unused with float32's bias; 0 there rather than a subnormal step, which
                        // as an operand of the (discarded) product would take the slow path.
                        subnormal_step: if f.bias == 127 {
                            0.0
                        } else {
                            crate::fmath::pow2_f32(1 - f.bias - f.mantissa_bits as i32)
                        },
                        special_from,
                        nan_quiet,
                    },
                );
                hardware.into_iter().chain(arithmetic).collect()
            }
            Kind::Integer { bits, signed } if bits <= 16 => vec![Formula::Integer { sign_shift: 32 - bits, signed }],
            Kind::Bool => vec![Formula::Integer { sign_shift: 31, signed: false }],
            _ => Vec::new(),
        }
    }

    /// The value of a code (what the loops of [`Widen::run`] compute, one formula per loop).
    #[inline(always)]
    fn value(self, code: u32) -> f32 {
        match self {
            Formula::Float { .. } => float_value::<true, true>(self, code),
            Formula::Half { shift, .. } => super::simd::half_to_f32_one((code << shift) as u16),
            Formula::Integer { sign_shift, signed: true } => signed_value(sign_shift, code),
            Formula::Integer { signed: false, .. } => unsigned_value(code),
        }
    }
}

/// The value of a code of a float source. `SUBNORMALS`: the format has codes below its smallest
/// normal (false only where the formula needs no subnormal product: float32's bias); `SPECIALS`:
/// the format has IEEE infinities and NaNs. With both true it is right for every format; each
/// false leaves out work the loop would otherwise do on every lane.
#[inline(always)]
fn float_value<const SUBNORMALS: bool, const SPECIALS: bool>(formula: Formula, code: u32) -> f32 {
    let Formula::Float {
        shift,
        magnitude_mask,
        sign_bit,
        sign_shift,
        rebias,
        min_normal,
        subnormal_step,
        special_from,
        nan_quiet,
    } = formula
    else {
        unreachable!("a float formula")
    };
    let magnitude = code & magnitude_mask;
    let fields = magnitude << shift;
    // Integer arithmetic for normals, an exact product of normal float32s for subnormals: no
    // float32 subnormal is ever an operand (they take a slow path on many CPUs).
    let mut bits = fields.wrapping_add(rebias);
    // Compares as i32 (every operand is at most 2^16): one instruction each, where unsigned
    // compares are two on AVX2.
    let magnitude_i32 = magnitude as i32;
    if SUBNORMALS {
        let subnormal = ((magnitude as i32 as f32) * subnormal_step).to_bits();
        bits = if magnitude_i32 < min_normal as i32 { subnormal } else { bits };
    }
    if SPECIALS {
        // From the infinity's magnitude on, float32's exponent field all ones; above it (NaN,
        // a nonzero fraction) the quiet bit where the formula sets it.
        bits = if magnitude_i32 >= special_from as i32 { fields | 0x7F80_0000 } else { bits };
        bits |= if magnitude_i32 > special_from as i32 { nan_quiet } else { 0 };
    }
    // The sign bit moved to bit 31 (unsigned formats: `sign_bit` is 0).
    f32::from_bits(bits | (code & sign_bit) << sign_shift)
}

#[inline(always)]
fn signed_value(sign_shift: u32, code: u32) -> f32 {
    ((code << sign_shift) as i32 >> sign_shift) as f32
}

/// Codes of at most 16 bits: as i32 they are exact, and i32 converts in one instruction.
#[inline(always)]
fn unsigned_value(code: u32) -> f32 {
    code as i32 as f32
}

/// No source code (sources have at most 16 bits).
const NO_CODE: u32 = u32::MAX;

/// `special_from` of a format without infinities and NaN: above every magnitude of 16 bits.
const NO_SPECIALS: u32 = 1 << 16;

/// The codes a [`Widen`] hands to the table: magnitude at or above `from_magnitude`, or one of
/// `codes`.
#[derive(Clone, Copy, Debug)]
struct Exceptions {
    magnitude_mask: u32,
    from_magnitude: u32,
    codes: [u32; 2],
}

impl Exceptions {
    /// The cheapest exceptions that cover every code where `formula` differs from `table`, and how
    /// many codes they send to the table.
    fn covering(formula: Formula, width: u32, double: bool, table: &Table) -> (Exceptions, usize) {
        let magnitude_mask = match formula {
            Formula::Float { magnitude_mask, .. } | Formula::Half { magnitude_mask, .. } => magnitude_mask,
            Formula::Integer { .. } => (1u32 << width) - 1,
        };
        let target_code = |value: f32| if double { f64::from(value).to_bits() } else { u64::from(value.to_bits()) };
        // Every code where the formula is not the core's answer, smallest magnitude first.
        let mut differ: Vec<u32> =
            (0..1u32 << width).filter(|&c| target_code(formula.value(c)) != table.code(c as usize)).collect();
        differ.sort_by_key(|&c| (c & magnitude_mask, c));
        // Up to two of the smallest become single codes; every magnitude from the next one up goes
        // to the table. Keep the split that sends the fewest codes to the table.
        (0..=differ.len().min(2))
            .map(|singles| {
                let from_magnitude = differ.get(singles).map_or(u32::MAX, |&c| c & magnitude_mask);
                let mut codes = [NO_CODE; 2];
                codes[..singles].copy_from_slice(&differ[..singles]);
                let e = Exceptions { magnitude_mask, from_magnitude, codes };
                let cost = (0..1u32 << width).filter(|&c| e.contains(c)).count();
                (e, cost)
            })
            .min_by_key(|&(_, cost)| cost)
            .expect("at least the split with no single codes")
    }

    /// Whether no code is an exception.
    fn is_empty(self) -> bool {
        self.from_magnitude == u32::MAX && self.codes == [NO_CODE; 2]
    }

    #[inline(always)]
    fn contains(self, code: u32) -> bool {
        code & self.magnitude_mask >= self.from_magnitude || code == self.codes[0] || code == self.codes[1]
    }
}

/// The table's answers for a set of [`Exceptions`], selected lane by lane.
#[derive(Clone, Copy, Debug)]
struct Select {
    exceptions: Exceptions,
    sign_bit: u32,
    /// For magnitudes from `exceptions.from_magnitude` on: positive, negative.
    range: [u32; 2],
    /// For `exceptions.codes`.
    codes: [u32; 2],
}

impl Select {
    fn new(exceptions: Exceptions, from: DType, table: &Table) -> Option<Select> {
        let width = from.bits()?;
        let sign_bit = match from.kind() {
            Kind::Float(f) if f.signed => f.sign_mask() as u32,
            _ => 0,
        };
        let answer = |code: u32| table.code(code as usize) as u32;
        let mut range = [None::<u32>; 2];
        for code in 0..1u32 << width {
            if code & exceptions.magnitude_mask >= exceptions.from_magnitude {
                let slot = &mut range[usize::from(code & sign_bit != 0)];
                match *slot {
                    None => *slot = Some(answer(code)),
                    Some(a) if a != answer(code) => return None,
                    Some(_) => {}
                }
            }
        }
        let codes = exceptions.codes.map(|c| if c == NO_CODE { 0 } else { answer(c) });
        Some(Select { exceptions, sign_bit, range: range.map(|a| a.unwrap_or(0)), codes })
    }

    /// Which of [`Self::apply`]'s tests a select needs: [`RANGE_ONLY`] (no single code, as for
    /// float8's NaN codes at the top), [`ONE_CODE_ONLY`] (FNUZ's 0x80) or [`EVERY_TEST`].
    fn tests(&self) -> u8 {
        match (self.exceptions.from_magnitude != u32::MAX, self.exceptions.codes) {
            (_, [NO_CODE, NO_CODE]) => RANGE_ONLY,
            (false, [_, NO_CODE]) => ONE_CODE_ONLY,
            _ => EVERY_TEST,
        }
    }

    /// `bits` (the formula's value), or the table's answer where `code` is an exception. `TESTS`
    /// leaves out the tests this select does not need ([`Self::tests`]; [`EVERY_TEST`] is right
    /// for every select).
    #[inline(always)]
    fn apply<const TESTS: u8>(self, code: u32, bits: u32) -> u32 {
        let e = self.exceptions;
        if TESTS == ONE_CODE_ONLY {
            return if code == e.codes[0] { self.codes[0] } else { bits };
        }
        let range = if code & self.sign_bit != 0 { self.range[1] } else { self.range[0] };
        let bits = if code & e.magnitude_mask >= e.from_magnitude { range } else { bits };
        if TESTS == RANGE_ONLY {
            return bits;
        }
        let bits = if code == e.codes[0] { self.codes[0] } else { bits };
        if code == e.codes[1] {
            self.codes[1]
        } else {
            bits
        }
    }
}

/// [`Select::apply`]'s test sets.
const RANGE_ONLY: u8 = 0;
const ONE_CODE_ONLY: u8 = 1;
const EVERY_TEST: u8 = 2;

/// A source of 16 bits or fewer (one or two bytes per element) into FLOAT or DOUBLE.
#[derive(Clone, Debug)]
pub(crate) struct Widen {
    formula: Formula,
    exceptions: Exceptions,
    /// The exceptions' answers selected in the loop itself, where each has one answer per sign
    /// (float8's NaN codes, FNUZ's 0x80, an IEEE format's NaNs under a quieting rule): then no
    /// lane is revisited. FLOAT targets only.
    select: Option<Select>,
    /// The core's answers, for the exceptions.
    table: Arc<Table>,
    /// Bytes per source element: 1 or 2, or 0 for float6's four elements in three bytes.
    source_bytes: usize,
    /// Whether the target is DOUBLE (the float32 value widened, exactly).
    double: bool,
}

impl Widen {
    /// The kernel for `from -> to`, or `None` where the table is the better engine: the source is
    /// packed into nibbles or crumbs (a table of whole bytes is faster), the target is not
    /// FLOAT/DOUBLE, or the formula differs from the table on too many codes to be worth it.
    pub(crate) fn new(from: DType, to: DType, table: &Arc<Table>) -> Option<Widen> {
        let source_bytes = match (from.packing(), to) {
            (Packing::Bytes(b @ (1 | 2)), _) => b as usize,
            // float6 into FLOAT: its groups of three bytes unpacked, then the formula (against 3.6
            // G elements/s for the table of code pairs here).
            (Packing::Sextets, DType::Float) => 0,
            _ => return None,
        };
        let double = match to {
            DType::Float => false,
            DType::Double => true,
            _ => return None,
        };
        // A byte-wide float source into DOUBLE: the table (256 float64s, 2 KiB, in L1) is one load
        // per element and beats the float formula plus its widening (1.4 against 0.9 G elements/s
        // here); the integer formulas stay faster than the table.
        if double && source_bytes == 1 && matches!(from.kind(), crate::dtype::Kind::Float(_)) {
            return None;
        }
        let width = from.bits()?;
        let (formula, exceptions, cost) = Formula::candidates(from, double)
            .into_iter()
            .map(|formula| {
                let (exceptions, cost) = Exceptions::covering(formula, width, double, table);
                (formula, exceptions, cost)
            })
            .min_by_key(|&(_, _, cost)| cost)?;
        // A formula wrong on more than 1/16 of the codes is a table with extra steps.
        if cost > (1usize << width) / 16 {
            return None;
        }
        // Without exceptions there is nothing to select.
        let select = if double || exceptions.is_empty() { None } else { Select::new(exceptions, from, table) };
        Some(Widen { formula, exceptions, select, table: Arc::clone(table), source_bytes, double })
    }

    /// Converts `n` elements (`src` and `dst` hold exactly their bytes).
    #[inline(always)]
    pub(crate) fn run(&self, src: &[u8], dst: &mut [u8], n: usize) {
        // One loop per formula, so each is branch-free.
        match self.formula {
            formula @ Formula::Float { min_normal, special_from, .. } => {
                match (min_normal != 0, special_from != NO_SPECIALS) {
                    (true, true) => self.run_with(src, dst, n, move |c| float_value::<true, true>(formula, c)),
                    (true, false) => self.run_with(src, dst, n, move |c| float_value::<true, false>(formula, c)),
                    (false, true) => self.run_with(src, dst, n, move |c| float_value::<false, true>(formula, c)),
                    (false, false) => self.run_with(src, dst, n, move |c| float_value::<false, false>(formula, c)),
                }
            }
            Formula::Integer { sign_shift, signed: true } => {
                self.run_with(src, dst, n, move |c| signed_value(sign_shift, c))
            }
            Formula::Integer { signed: false, .. } => self.run_with(src, dst, n, unsigned_value),
            Formula::Half { shift, .. } => self.run_half(src, dst, n, shift),
        }
    }

    /// [`Formula::Half`]: the CPU converts each chunk, then the exceptions (if any) get the
    /// table's answers.
    #[inline(always)]
    fn run_half(&self, src: &[u8], dst: &mut [u8], n: usize, shift: u32) {
        let mut codes = [0u32; LANE_CHUNK];
        let mut flags = [0u8; LANE_CHUNK];
        for (start, len) in chunks(n) {
            let s = &src[self.source_span(start, len)];
            let d = &mut dst[start * 4..(start + len) * 4];
            super::simd::half_to_f32(s, self.source_bytes, shift, d);
            if self.exceptions.is_empty() {
                continue;
            }
            let codes = &mut codes[..len];
            self.load_codes(s, codes);
            match self.select {
                // A second pass over the chunk, still in the L1 cache, lane by lane.
                Some(select) => {
                    for (o, &c) in d.chunks_exact_mut(4).zip(codes.iter()) {
                        let bits = u32::from_le_bytes(o.try_into().expect("4 bytes"));
                        o.copy_from_slice(&select.apply::<EVERY_TEST>(c, bits).to_le_bytes());
                    }
                }
                None => self.patch_exceptions(codes, &mut flags[..len], d),
            }
        }
    }

    /// The bytes of `len` source elements from element `start` (a multiple of four).
    #[inline(always)]
    fn source_span(&self, start: usize, len: usize) -> core::ops::Range<usize> {
        match self.source_bytes {
            0 => start / 4 * 3..((start + len) * 6).div_ceil(8),
            b => start * b..(start + len) * b,
        }
    }

    /// The codes of `src` (one or two bytes each, or float6's groups) as `u32`s.
    #[inline(always)]
    fn load_codes(&self, src: &[u8], codes: &mut [u32]) {
        if self.source_bytes == 0 {
            // Four 6-bit fields in three bytes, LSB first (eight codes at a time with AVX2, from
            // a group boundary); a final partial group's missing bytes read as zeros.
            let done = super::simd::sextets_to_codes(src, codes);
            crate::packing::unpack_sextets(&src[done / 4 * 3..], &mut codes[done..], |field| field);
        } else if self.source_bytes == 1 {
            codes.iter_mut().zip(src).for_each(|(c, &b)| *c = u32::from(b));
        } else {
            codes
                .iter_mut()
                .zip(src.chunks_exact(2))
                .for_each(|(c, b)| *c = u32::from(u16::from_le_bytes(b.try_into().expect("2 bytes"))));
        }
    }

    /// Overwrites the outputs of the exception codes among `codes` with the table's answers.
    #[inline(always)]
    fn patch_exceptions(&self, codes: &[u32], flags: &mut [u8], dst: &mut [u8]) {
        let exceptions = self.exceptions;
        // Most chunks of real data have no exception: one vectorised test of the whole chunk.
        if !codes.iter().fold(false, |any, &c| any | exceptions.contains(c)) {
            return;
        }
        for (f, &c) in flags.iter_mut().zip(codes) {
            *f = u8::from(exceptions.contains(c));
        }
        for_each_flagged(flags, |i| {
            let code = self.table.code(codes[i] as usize);
            if self.double {
                dst[i * 8..(i + 1) * 8].copy_from_slice(&code.to_le_bytes());
            } else {
                dst[i * 4..(i + 1) * 4].copy_from_slice(&(code as u32).to_le_bytes());
            }
        });
    }

    #[inline(always)]
    fn run_with(&self, src: &[u8], dst: &mut [u8], n: usize, value: impl Fn(u32) -> f32 + Copy) {
        let target_bytes = if self.double { 8 } else { 4 };
        let mut codes = [0u32; LANE_CHUNK];
        let mut flags = [0u8; LANE_CHUNK];
        for (start, len) in chunks(n) {
            let s = &src[self.source_span(start, len)];
            let d = &mut dst[start * target_bytes..(start + len) * target_bytes];
            let codes = &mut codes[..len];
            self.load_codes(s, codes);
            if let Some(select) = self.select {
                match select.tests() {
                    RANGE_ONLY => {
                        for (o, &c) in d.chunks_exact_mut(4).zip(codes.iter()) {
                            o.copy_from_slice(&select.apply::<RANGE_ONLY>(c, value(c).to_bits()).to_le_bytes());
                        }
                    }
                    ONE_CODE_ONLY => {
                        for (o, &c) in d.chunks_exact_mut(4).zip(codes.iter()) {
                            o.copy_from_slice(&select.apply::<ONE_CODE_ONLY>(c, value(c).to_bits()).to_le_bytes());
                        }
                    }
                    _ => {
                        for (o, &c) in d.chunks_exact_mut(4).zip(codes.iter()) {
                            o.copy_from_slice(&select.apply::<EVERY_TEST>(c, value(c).to_bits()).to_le_bytes());
                        }
                    }
                }
                continue;
            }
            if self.double {
                for (o, &c) in d.chunks_exact_mut(8).zip(codes.iter()) {
                    o.copy_from_slice(&f64::from(value(c)).to_le_bytes());
                }
            } else {
                for (o, &c) in d.chunks_exact_mut(4).zip(codes.iter()) {
                    o.copy_from_slice(&value(c).to_le_bytes());
                }
            }
            if !self.exceptions.is_empty() {
                self.patch_exceptions(codes, &mut flags[..len], d);
            }
        }
    }
}

/// The chunks of `n` elements: (first element, length), [`LANE_CHUNK`] elements but the last.
fn chunks(n: usize) -> impl Iterator<Item = (usize, usize)> {
    (0..n).step_by(LANE_CHUNK).map(move |start| (start, LANE_CHUNK.min(n - start)))
}

/// A float source's exact value of every code as one branch-free function of the code: the formula,
/// with the exceptions' answers selected (the body of [`Widen::run`]'s loop for FLOAT targets).
#[derive(Clone, Copy, Debug)]
#[cfg(feature = "quant")]
pub(crate) struct FloatCodeValue {
    formula: Formula,
    select: Select,
}

#[cfg(feature = "quant")]
impl FloatCodeValue {
    /// The float32 value of `code` (a code of the source's width).
    #[inline(always)]
    pub(crate) fn value(self, code: u32) -> f32 {
        f32::from_bits(self.select.apply::<EVERY_TEST>(code, float_value::<true, true>(self.formula, code).to_bits()))
    }
}

impl Widen {
    /// The whole decoding as one function of the code, where it is one: a float source into
    /// FLOAT whose exceptions are selected lane by lane.
    #[cfg(feature = "quant")]
    pub(crate) fn float_code_value(&self) -> Option<FloatCodeValue> {
        match (self.formula, self.select) {
            (formula @ Formula::Float { .. }, Some(select)) if !self.double => Some(FloatCodeValue { formula, select }),
            _ => None,
        }
    }
}

/// Calls `visit` with the index of every nonzero byte of `flags`, eight bytes at a time (the
/// flags are rare, so most words are zero).
#[inline(always)]
pub(crate) fn for_each_flagged(flags: &[u8], mut visit: impl FnMut(usize)) {
    let words = flags.chunks_exact(8);
    let tail = words.remainder();
    for (w, word) in words.enumerate() {
        let mut bits = u64::from_le_bytes(word.try_into().expect("8 bytes"));
        while bits != 0 {
            let byte = bits.trailing_zeros() as usize / 8;
            visit(w * 8 + byte);
            bits &= !(0xFFu64 << (8 * byte));
        }
    }
    let base = flags.len() - tail.len();
    for (j, &f) in tail.iter().enumerate() {
        if f != 0 {
            visit(base + j);
        }
    }
}

/// Exact float32 values of every code of a format of 8 bits or fewer.
#[derive(Clone, Debug)]
pub struct DecodeTable {
    values: Box<[f32; 256]>,
}

impl DecodeTable {
    /// Builds the table from the core (NaN codes give the quiet NaN with the code's sign).
    #[must_use]
    pub fn new(f: &FloatFormat) -> Option<DecodeTable> {
        if f.width() > 8 {
            return None;
        }
        let mut values = Box::new([0f32; 256]);
        for (code, v) in values.iter_mut().enumerate().take(1 << f.width()) {
            let decoded: Value = f.decode(code as u64);
            *v = f32::from_bits(round::encode(&format::F32, decoded, RoundingOptions::IEEE) as u32);
        }
        Some(DecodeTable { values })
    }

    /// The table of one of lowbit's narrow formats, built once.
    #[must_use]
    pub fn of(f: &FloatFormat) -> Option<&'static DecodeTable> {
        static TABLES: [Once<Option<DecodeTable>>; 12] = [const { Once::new() }; 12];
        let index = format::ALL_FORMATS.iter().position(|g| *g == f)?;
        TABLES[index].get_or_init(|| DecodeTable::new(f)).as_ref()
    }

    /// The value of one code (bits above the format's width select table entries the format does
    /// not use; callers mask codes first).
    #[inline]
    #[must_use]
    pub fn decode(&self, code: u8) -> f32 {
        self.values[usize::from(code)]
    }

    /// Decodes a slice of codes.
    pub fn decode_slice(&self, src: &[u8], dst: &mut [f32]) {
        for (d, &s) in dst.iter_mut().zip(src) {
            *d = self.values[usize::from(s)];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convert::{self, CastOptions};
    use crate::profile::Profile;

    fn widen(from: DType, profile: Profile) -> Widen {
        let opts = CastOptions::with_profile(profile);
        let table = Table::build(from, DType::Float, |code| convert::convert_code(from, DType::Float, code, &opts))
            .expect("a table");
        Widen::new(from, DType::Float, &Arc::new(table)).expect("a kernel for this pair")
    }

    fn run(kernel: &Widen, source_bytes: usize, codes: &[u16]) -> Vec<u32> {
        let src: Vec<u8> = codes.iter().flat_map(|c| c.to_le_bytes()[..source_bytes].to_vec()).collect();
        let mut dst = vec![0u8; codes.len() * 4];
        kernel.run(&src, &mut dst, codes.len());
        dst.chunks_exact(4).map(|b| u32::from_le_bytes(b.try_into().unwrap())).collect()
    }

    #[test]
    fn float6_runs_of_every_length_and_start() {
        // Every float6 code, packed four to three bytes, decoded from every group-aligned start
        // in runs of 1 to 70 elements (the eight-at-a-time unpacking and its tail), against the
        // core's answers one code at a time.
        for from in [DType::Float6E2M3, DType::Float6E3M2] {
            let opts = CastOptions::default();
            let codes: Vec<u64> = (0..64).chain(0..64).chain(0..64).collect();
            let packed = crate::packing::pack(from, &codes).unwrap();
            let kernel = widen(from, Profile::Spec);
            for start in (0..64).step_by(4) {
                for len in 1..=70 {
                    let src = &packed[start / 4 * 3..(crate::packing::raw_len(from, start + len).unwrap())];
                    let mut dst = vec![0u8; len * 4];
                    kernel.run(src, &mut dst, len);
                    for (i, out) in dst.chunks_exact(4).enumerate() {
                        let want = convert::convert_code(from, DType::Float, codes[start + i], &opts).unwrap();
                        assert_eq!(
                            u64::from(u32::from_le_bytes(out.try_into().unwrap())),
                            want,
                            "{from:?} {start} {len}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn float16_and_e5m2_run_on_the_cpu_conversion_where_it_has_one() {
        // 1.0 (0x3C00), the smallest subnormal 2^-24 (0x0001), -65504 (0xFBFF), +inf (0x7C00),
        // -0 (0x8000), then the same values' E5M2 codes (float16's top byte: 0x3C, 2^-16 = 0x01,
        // -57344 = 0xFB, 0x7C, 0x80); eleven lanes, so the last three go through the tail.
        let halves = [0x3C00, 0x0001, 0xFBFF, 0x7C00, 0x8000, 0x3C00, 0x0001, 0xFBFF, 0x7C00, 0x8000, 0x3C00];
        let want16 = [
            0x3F80_0000,
            0x3380_0000,
            0xC77F_E000,
            0x7F80_0000,
            0x8000_0000,
            0x3F80_0000,
            0x3380_0000,
            0xC77F_E000,
            0x7F80_0000,
            0x8000_0000,
            0x3F80_0000,
        ];
        let bytes: Vec<u16> = [0x3C, 0x01, 0xFB, 0x7C, 0x80, 0x3C, 0x01, 0xFB, 0x7C, 0x80, 0x3C].to_vec();
        let want8 = [
            0x3F80_0000,
            0x3780_0000,
            0xC760_0000,
            0x7F80_0000,
            0x8000_0000,
            0x3F80_0000,
            0x3780_0000,
            0xC760_0000,
            0x7F80_0000,
            0x8000_0000,
            0x3F80_0000,
        ];
        for profile in Profile::ALL {
            let f16 = widen(DType::Float16, profile);
            let e5m2 = widen(DType::Float8E5M2, profile);
            assert_eq!(run(&f16, 2, &halves), want16, "{profile:?}");
            assert_eq!(run(&e5m2, 1, &bytes), want8, "{profile:?}");
            // Under `spec` the CPU's NaNs (quiet, payload kept) are the core's: the instruction
            // runs wherever the CPU has it, and the arithmetic formula elsewhere.
            if profile == Profile::Spec {
                let hardware = |w: &Widen| matches!(w.formula, Formula::Half { .. });
                assert_eq!(hardware(&f16), super::super::simd::has_f16c());
                assert_eq!(hardware(&e5m2), super::super::simd::has_f16c());
            }
        }
    }
}
