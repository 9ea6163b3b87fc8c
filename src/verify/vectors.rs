//! **Test vectors** (`lowbit vectors`): operands of a source format with the results and flags
//! of the IEEE semantics, in TestFloat's line format, as columns for Verilog's `$readmemh`, or as
//! CSV.
//!
//! The operands follow TestFloat's levels (testfloat_gen, "genCases"): at level 1 every third
//! operand is a special one and the others are random; at level 2 every second. Like
//! testfloat_gen, the default count is the smallest that holds every special operand (3 times
//! their number at level 1, twice at level 2) and `-n` can raise it, not lower it. Level `all` is
//! every source pattern in ascending order (sources of at most 16 bits).
//!
//! The special operands come from the descriptors of both formats, the target's thresholds first:
//! for each interesting target value (smallest subnormal, largest subnormal, smallest normal,
//! every exponent's first and last significand, the largest finite) the source codes nearest to
//! it and to the midpoints with its neighbours, each with the source codes one ulp either side,
//! and the overflow threshold (largest finite plus half an ulp) likewise; for integer targets 0,
//! 1, 2, the bounds and their neighbours, and the halves between them. Then the source's own:
//! zeros, infinities, quiet and signalling NaNs, its largest finite, smallest subnormal and
//! normal. Both signs throughout. Level 2 adds, for every source exponent in the target's range,
//! TestFloat's level-2 significand patterns (each single bit set, each single bit clear, none,
//! all).
//!
//! Random operands are `seeded_random(seed + 0xA5A5_A5A5_A5A5_A5A5, i)` mixed as follows: a
//! quarter are uniform source patterns, the rest have a source exponent drawn from the target's
//! range and random significand bits. Stochastic rounding uses `seeded_random(seed, i)` for
//! case `i` (0-based), as [`super::RandomBits::Seeded`] does, so `lowbit check --seed` recomputes
//! the same results.

use super::{low_mask, seeded_random, Converter, Format, RoundingMode, Shape, Status, Tininess, VerifyOptions};
use crate::error::{Error, Result};
use crate::format::FloatFormat;
use crate::round::{self, EncodeOptions};
use crate::value::{Exact, Value};
use std::collections::HashSet;
use std::io::Write;

/// TestFloat's testing levels, and every pattern.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    /// TestFloat's level 1: every third case is a special operand (target thresholds, the
    /// source's specials), the others random.
    One,
    /// TestFloat's level 2: more special operands (also fractions with one bit set or one bit
    /// clear at each exponent in range), every second case one of them.
    Two,
    /// Every pattern of the source (sources up to [`ALL_LEVEL_MAX_BITS`] bits).
    All,
}

impl Level {
    /// `1`, `2` or `all`.
    pub fn parse(text: &str) -> Result<Level> {
        match text {
            "1" => Ok(Level::One),
            "2" => Ok(Level::Two),
            "all" => Ok(Level::All),
            _ => Err(Error::InvalidOp { op: "vectors".into(), message: format!("--level {text:?}: use 1, 2 or all") }),
        }
    }
}

/// Offset of the operand stream's seed from the stochastic-rounding stream's.
const OPERAND_STREAM: u64 = 0xA5A5_A5A5_A5A5_A5A5;

/// Largest source for `--level all`.
pub const ALL_LEVEL_MAX_BITS: u32 = 16;

/// A set of test cases: operands (special and random) and how to compute their results.
#[derive(Clone, Debug)]
pub struct Vectors {
    from: Format,
    to: Format,
    options: VerifyOptions,
    level: Level,
    seed: u64,
    specials: Vec<u64>,
    count: u64,
    /// Source exponent fields drawn for random operands (inclusive); `None` for integer sources.
    window: Option<(u64, u64)>,
}

/// One test case.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Vector {
    /// The source code.
    pub operand: u64,
    /// The expected result code.
    pub result: u64,
    /// The IEEE flags the conversion raises.
    pub flags: Status,
    /// The random word used (stochastic rounding), else 0.
    pub random: u64,
}

impl Vectors {
    /// The cases for `from -> to` at `level`; `count` raises the number of cases (levels 1 and 2).
    pub fn new(
        from: &Format,
        to: &Format,
        options: &VerifyOptions,
        level: Level,
        count: Option<u64>,
        seed: u64,
    ) -> Result<Vectors> {
        options.validate()?;
        let (specials, count) = match level {
            Level::All => {
                if from.width() > ALL_LEVEL_MAX_BITS {
                    return Err(Error::InvalidOp {
                        op: "vectors".into(),
                        message: format!(
                            "--level all lists every pattern of sources up to {ALL_LEVEL_MAX_BITS} bits; {from} has {}",
                            from.width()
                        ),
                    });
                }
                (Vec::new(), 1u64 << from.width())
            }
            Level::One | Level::Two => {
                let specials = special_operands(from, to, level);
                let per = if level == Level::One { 3 } else { 2 };
                let minimum = per * specials.len() as u64;
                (specials, count.unwrap_or(0).max(minimum))
            }
        };
        Ok(Vectors { from: *from, to: *to, options: *options, level, seed, specials, count, window: window(from, to) })
    }

    /// How many cases.
    #[must_use]
    pub const fn len(&self) -> u64 {
        self.count
    }

    /// Whether there are no cases.
    #[must_use]
    pub const fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The special operands, in order.
    #[must_use]
    pub fn specials(&self) -> &[u64] {
        &self.specials
    }

    /// The operand of case `i`.
    #[must_use]
    pub fn operand(&self, i: u64) -> u64 {
        let special = match self.level {
            Level::All => return i,
            Level::One => (i % 3 == 2).then_some(i / 3),
            Level::Two => (i % 2 == 1).then_some(i / 2),
        };
        match special.and_then(|k| self.specials.get(k as usize)) {
            Some(&code) => code,
            None => self.random_operand(i),
        }
    }

    fn random_operand(&self, i: u64) -> u64 {
        let r = seeded_random(self.seed.wrapping_add(OPERAND_STREAM), i);
        let mask = self.from.code_mask();
        let bits = seeded_random(self.seed.wrapping_add(OPERAND_STREAM).rotate_left(17), i);
        match (self.from.shape(), self.window) {
            (Shape::Float(f), Some((lo, hi))) if r & 3 != 0 => {
                let field = lo + (r >> 2) % (hi - lo + 1);
                let sign = if f.signed && (r >> 40) & 1 == 1 { f.sign_mask() } else { 0 };
                sign | field << f.mantissa_bits | (bits & f.fraction_field_mask())
            }
            (Shape::Integer { bits: width, signed }, _) if r & 3 != 0 => {
                // A random bit length, so small magnitudes are as common as large ones.
                let length = (r >> 2) % u64::from(width + 1);
                let magnitude = bits & low_mask(length as u32);
                if signed && (r >> 40) & 1 == 1 {
                    magnitude.wrapping_neg() & mask
                } else {
                    magnitude & mask
                }
            }
            _ => bits & mask,
        }
    }

    /// The random word of case `i` (stochastic rounding), else 0.
    #[must_use]
    pub fn random(&self, i: u64) -> u64 {
        match self.options.mode {
            RoundingMode::Stochastic { .. } => seeded_random(self.seed, i),
            _ => 0,
        }
    }

    /// Case `i` with its result.
    #[must_use]
    pub fn case(&self, converter: &Converter, i: u64) -> Vector {
        let operand = self.operand(i);
        let random = self.random(i);
        let (result, flags) = converter.convert(operand, random);
        Vector { operand, result, flags, random }
    }

    /// The converter of these cases.
    #[must_use]
    pub fn converter(&self) -> Converter {
        Converter::new(&self.from, &self.to, &self.options)
    }

    /// Whether the cases have a random column (stochastic rounding).
    #[must_use]
    pub const fn has_random(&self) -> bool {
        matches!(self.options.mode, RoundingMode::Stochastic { .. })
    }

    /// Writes every case in TestFloat's layout.
    pub fn write_testfloat(&self, out: &mut impl Write) -> std::io::Result<()> {
        let (a, b) = (super::testfloat::hex_digits(self.from.width()), super::testfloat::hex_digits(self.to.width()));
        self.write_lines(out, |buf, v| {
            super::testfloat::push_line(buf, v.operand, a, v.result, b, Some(v.flags.bits()))
        })
    }

    /// Writes every case as CSV with a header (`operand,result,flags[,random]`, hex as in
    /// TestFloat's layout).
    pub fn write_csv(&self, out: &mut impl Write) -> std::io::Result<()> {
        let (a, b) = (super::testfloat::hex_digits(self.from.width()), super::testfloat::hex_digits(self.to.width()));
        let random = self.has_random();
        out.write_all(if random { b"operand,result,flags,random\n" } else { b"operand,result,flags\n" })?;
        self.write_lines(out, |buf, v| {
            use super::testfloat::push_hex;
            push_hex(buf, v.operand, a);
            buf.push(b',');
            push_hex(buf, v.result, b);
            buf.push(b',');
            push_hex(buf, u64::from(v.flags.bits()), 2);
            if random {
                buf.push(b',');
                push_hex(buf, v.random, 16);
            }
            buf.push(b'\n');
        })
    }

    /// Writes one column for `$readmemh`: one hex number a line.
    pub fn write_column(&self, out: &mut impl Write, column: Column) -> std::io::Result<()> {
        let digits = match column {
            Column::Operand => super::testfloat::hex_digits(self.from.width()),
            Column::Result => super::testfloat::hex_digits(self.to.width()),
            Column::Flags => 2,
            Column::Random => 16,
        };
        self.write_lines(out, |buf, v| {
            let value = match column {
                Column::Operand => v.operand,
                Column::Result => v.result,
                Column::Flags => u64::from(v.flags.bits()),
                Column::Random => v.random,
            };
            super::testfloat::push_hex(buf, value, digits);
            buf.push(b'\n');
        })
    }

    fn write_lines(&self, out: &mut impl Write, mut line: impl FnMut(&mut Vec<u8>, &Vector)) -> std::io::Result<()> {
        let converter = self.converter();
        let mut buf = Vec::with_capacity(1 << 16);
        for i in 0..self.count {
            line(&mut buf, &self.case(&converter, i));
            if buf.len() >= (1 << 16) - 64 {
                out.write_all(&buf)?;
                buf.clear();
            }
        }
        out.write_all(&buf)?;
        out.flush()
    }
}

/// A column of the `readmemh` output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Column {
    /// The operand codes (`in.hex`).
    Operand,
    /// The result codes (`out.hex`).
    Result,
    /// The flags (`flags.hex`).
    Flags,
    /// The random words of stochastic rounding (`random.hex`).
    Random,
}

/// The source code nearest to `x` (nearest-even, saturating to the source's range).
fn source_code_of(from: &Format, x: Exact) -> u64 {
    match from.shape() {
        Shape::Float(f) => {
            let options = EncodeOptions::ieee(RoundingMode::NearestEven, true, Tininess::AfterRounding, 0);
            round::encode_with_status(&f, Value::Finite(x), &options).0
        }
        Shape::Integer { bits, signed } => {
            let (low, high) = crate::dtype::integer_bounds(bits, signed);
            let i = match round::round_to_integer(x, RoundingMode::NearestEven) {
                Some((negative, magnitude)) => {
                    let m = i128::from(magnitude);
                    if negative {
                        -m
                    } else {
                        m
                    }
                }
                None if x.negative => low,
                None => high,
            };
            (i.clamp(low, high) as u64) & low_mask(bits)
        }
    }
}

/// The codes one step either side of `code` (by magnitude for floats, by value for integers).
fn neighbours(from: &Format, code: u64) -> [Option<u64>; 2] {
    match from.shape() {
        Shape::Float(f) => {
            let magnitude = code & f.magnitude_mask();
            let sign = code & f.sign_mask();
            [
                magnitude.checked_sub(1).map(|m| sign | m),
                (magnitude < f.magnitude_mask()).then(|| sign | (magnitude + 1)),
            ]
        }
        Shape::Integer { bits, .. } => {
            let mask = low_mask(bits);
            [Some(code.wrapping_sub(1) & mask), Some(code.wrapping_add(1) & mask)]
        }
    }
}

fn finite(f: &FloatFormat, code: u64) -> Option<Exact> {
    match f.decode(code) {
        Value::Finite(e) => Some(e),
        _ => None,
    }
}

/// `(a + b) / 2` for two non-negative values, when its significand fits 64 bits.
fn midpoint(a: Exact, b: Exact) -> Option<Exact> {
    let (a, b) = if a.significand == 0 { (b, a) } else { (a, b) };
    if b.significand == 0 {
        return Some(Exact { negative: false, significand: a.significand, exponent: a.exponent - 1, sticky: false });
    }
    let e = a.exponent.min(b.exponent);
    let shift =
        |x: Exact| u32::try_from(x.exponent - e).ok().filter(|&s| s < 64).map(|s| u128::from(x.significand) << s);
    let sum = shift(a)? + shift(b)?;
    let significand = u64::try_from(sum).ok()?;
    Some(Exact { negative: false, significand, exponent: e - 1, sticky: false })
}

/// The exponent fields of `f` whose first and last significands are listed: all of them for
/// formats with at most 64, else the 8 lowest, the 8 highest and the 17 around 1.0.
fn exponent_fields(f: &FloatFormat) -> Vec<u64> {
    let top = f.max_finite_magnitude() >> f.mantissa_bits;
    let first = u64::from(f.subnormals);
    if top < 64 {
        return (first..=top).collect();
    }
    let one = u64::try_from(f.bias).unwrap_or(0);
    let mut fields: Vec<u64> = (first..first + 8).chain(top - 7..=top).chain(one.saturating_sub(8)..=one + 8).collect();
    fields.retain(|&e| e <= top);
    fields
}

/// The positive values around which the target's results change: see the module docs.
fn target_thresholds(to: &Format) -> Vec<Exact> {
    let mut values = Vec::new();
    match to.shape() {
        Shape::Float(f) => {
            let m = f.mantissa_bits;
            let max = f.max_finite_magnitude();
            let mut codes = Vec::new();
            if f.subnormals && m >= 1 {
                codes.extend([1, f.fraction_field_mask()]);
            }
            for e in exponent_fields(&f) {
                codes.extend([e << m, (e << m | f.fraction_field_mask()).min(max)]);
            }
            codes.push(max);
            for c in codes {
                let Some(v) = finite(&f, c) else { continue };
                values.push(v);
                for n in [c.checked_sub(1), (c < max).then_some(c + 1)].into_iter().flatten() {
                    if let Some(mid) = finite(&f, n).and_then(|w| midpoint(v, w)) {
                        values.push(mid);
                    }
                }
            }
            // The overflow threshold: MAX plus half its ulp.
            if let Some(v) = finite(&f, max) {
                values.push(Exact { significand: 2 * v.significand + 1, exponent: v.exponent - 1, ..v });
            }
        }
        Shape::Integer { bits, signed } => {
            let (low, high) = crate::dtype::integer_bounds(bits, signed);
            for k in [0, 1, 2, high - 1, high, high + 1, low - 1, low, low + 1] {
                for twice in [2 * k - 1, 2 * k, 2 * k + 1] {
                    if let Ok(magnitude) = u64::try_from(twice.unsigned_abs()) {
                        values.push(Exact { negative: twice < 0, significand: magnitude, exponent: -1, sticky: false });
                    }
                }
            }
        }
    }
    values
}

/// The source's own special codes.
fn source_specials(from: &Format) -> Vec<u64> {
    match from.shape() {
        Shape::Float(f) => {
            let mut codes = Vec::new();
            let mut both = |c: Option<u64>| {
                if let Some(c) = c {
                    codes.push(c);
                    if f.signed {
                        codes.push(c | f.sign_mask());
                    }
                }
            };
            both(f.zero_code(false));
            both(f.infinity_code(false));
            both(f.nan_code(false));
            if f.non_finite == crate::format::NonFinite::Ieee {
                // A signalling NaN (quiet bit clear, lowest payload) and the NaN with every bit set.
                both(f.infinity_code(false).map(|c| c + 1));
                both(f.infinity_code(false).map(|c| c | f.fraction_field_mask()));
            }
            both(Some(f.max_code()));
            both(Some(f.min_positive_code()));
            both(Some(f.min_positive_normal_code()));
            codes
        }
        Shape::Integer { bits, signed } => {
            let mask = low_mask(bits);
            let mut codes = vec![0, 1, mask];
            if signed {
                let min = 1u64 << (bits - 1);
                codes.extend([min, min - 1, min + 1]);
            } else {
                codes.push(mask - 1);
            }
            codes
        }
    }
}

/// The source exponent fields random operands draw from: those of the target's range, one more
/// either side (so infinities and NaNs appear when the range reaches the top).
fn window(from: &Format, to: &Format) -> Option<(u64, u64)> {
    let Shape::Float(f) = from.shape() else { return None };
    let thresholds = target_thresholds(to);
    let top = f.magnitude_mask() >> f.mantissa_bits;
    let field =
        |x: &Exact| (source_code_of(from, Exact { negative: false, ..*x }) & f.magnitude_mask()) >> f.mantissa_bits;
    let nonzero = thresholds.iter().filter(|x| x.significand != 0);
    let lo = nonzero.clone().map(field).min().unwrap_or(0);
    let hi = nonzero.map(field).max().unwrap_or(top);
    Some((lo.saturating_sub(1), (hi + 1).min(top)))
}

/// The special operands of `from -> to` at `level` (1 or 2), without repeats, target thresholds
/// first.
#[must_use]
pub fn special_operands(from: &Format, to: &Format, level: Level) -> Vec<u64> {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    let mut add = |c: u64| {
        if seen.insert(c) {
            out.push(c);
        }
    };
    let signed_source = match from.shape() {
        Shape::Float(f) => f.signed,
        Shape::Integer { signed, .. } => signed,
    };
    for x in target_thresholds(to) {
        let signs: &[bool] = if signed_source && !x.negative { &[false, true] } else { &[x.negative] };
        for &negative in signs {
            let code = source_code_of(from, Exact { negative, ..x });
            add(code);
            for n in neighbours(from, code).into_iter().flatten() {
                add(n);
            }
        }
    }
    for c in source_specials(from) {
        add(c);
    }
    if level == Level::Two {
        match (from.shape(), window(from, to)) {
            (Shape::Float(f), Some((lo, hi))) => {
                let m = f.mantissa_bits;
                let fraction = f.fraction_field_mask();
                let mut patterns = vec![0, fraction];
                for k in 0..m {
                    patterns.extend([1u64 << k, fraction & !(1u64 << k)]);
                }
                for e in lo..=hi.min(lo + 63) {
                    for &p in &patterns {
                        add(e << m | p);
                        if f.signed {
                            add(f.sign_mask() | e << m | p);
                        }
                    }
                }
            }
            (Shape::Integer { bits, signed }, _) => {
                let mask = low_mask(bits);
                for k in 0..bits {
                    for v in [1u64 << k, (1u64 << k) - 1, (1u64 << k) + 1] {
                        add(v & mask);
                        if signed {
                            add(v.wrapping_neg() & mask);
                        }
                    }
                }
            }
            _ => {}
        }
    }
    out
}
