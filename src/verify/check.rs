//! **Checking a dump** (`lowbit check`): lines `operand result [flags]` in TestFloat's layout
//! ([`super::testfloat`]), each compared with the IEEE semantics, streamed in constant memory,
//! every mismatch classified; and `--which`, which runs a dump against every configuration of
//! the dump's result width and ranks them by agreement.
//!
//! As testfloat_ver does, two differences are not mismatches unless asked for: a NaN result with
//! another NaN encoding or sign (`check_nans`), and the value of an invalid float-to-integer
//! result (`check_invalid_integers`; its flags are always checked).

use super::config::{Config, Evaluator, Semantics};
use super::testfloat::{hex_digits, Case, Layout, LineReader};
use super::{seeded_random, Format, RoundingMode, Shape, Status, Tininess, VerifyOptions};
use crate::dtype::{DType, Kind};
use crate::error::{Error, Result};
use crate::profile::Profile;
use core::num::FpCategory;
use rayon::prelude::*;
use std::io::Read;

/// What counts as a mismatch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CheckOptions {
    /// NaN results must have the expected encoding and sign.
    pub check_nans: bool,
    /// Invalid float-to-integer results must have the expected value.
    pub check_invalid_integers: bool,
    /// Ignore the flags.
    pub no_flags: bool,
    /// The seed of stochastic rounding's random words (`seeded_random(seed, i)` for case `i`).
    pub seed: u64,
}

/// How a result value differs from the expected one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Class {
    /// One ulp (one integer step) further from zero than expected.
    OneUlpAwayFromZero,
    /// One ulp (one integer step) nearer to zero than expected.
    OneUlpTowardZero,
    /// A zero of the wrong sign.
    ZeroSign,
    /// A NaN where a number was due.
    NanForNumber,
    /// A number where a NaN was due.
    NumberForNan,
    /// Another NaN encoding or sign (a mismatch only with `check_nans`).
    NanEncoding,
    /// Infinity where the largest finite value was due.
    InfinityForMax,
    /// The largest finite value where infinity was due (saturation).
    MaxForInfinity,
    /// Zero where a subnormal was due.
    FlushedToZero,
    /// Another value for an invalid float-to-integer result (a mismatch only with
    /// `check_invalid_integers`).
    InvalidIntegerValue,
    /// Any other value.
    OtherValue,
}

impl Class {
    /// Every class, in the order of the summary.
    pub const ALL: [Class; 11] = [
        Class::OneUlpAwayFromZero,
        Class::OneUlpTowardZero,
        Class::ZeroSign,
        Class::NanForNumber,
        Class::NumberForNan,
        Class::NanEncoding,
        Class::InfinityForMax,
        Class::MaxForInfinity,
        Class::FlushedToZero,
        Class::InvalidIntegerValue,
        Class::OtherValue,
    ];

    /// The class in words, as the summary prints it.
    #[must_use]
    pub const fn describe(self) -> &'static str {
        match self {
            Class::OneUlpAwayFromZero => "value one ulp too far from zero (rounded up in magnitude)",
            Class::OneUlpTowardZero => "value one ulp too near zero (rounded down in magnitude)",
            Class::ZeroSign => "zero of the wrong sign",
            Class::NanForNumber => "NaN where a number was due",
            Class::NumberForNan => "number where NaN was due",
            Class::NanEncoding => "NaN encoding or sign",
            Class::InfinityForMax => "infinity where the largest finite was due (overflow not saturated)",
            Class::MaxForInfinity => "largest finite where infinity was due (saturation)",
            Class::FlushedToZero => "subnormal flushed to zero",
            Class::InvalidIntegerValue => "value of an invalid integer result",
            Class::OtherValue => "other wrong value",
        }
    }

    /// The class's key in machine-readable output (`lowbit check --json`): snake_case, stable.
    #[must_use]
    pub const fn key(self) -> &'static str {
        match self {
            Class::OneUlpAwayFromZero => "one_ulp_away_from_zero",
            Class::OneUlpTowardZero => "one_ulp_toward_zero",
            Class::ZeroSign => "zero_sign",
            Class::NanForNumber => "nan_for_number",
            Class::NumberForNan => "number_for_nan",
            Class::NanEncoding => "nan_encoding",
            Class::InfinityForMax => "infinity_for_max",
            Class::MaxForInfinity => "max_for_infinity",
            Class::FlushedToZero => "flushed_to_zero",
            Class::InvalidIntegerValue => "invalid_integer_value",
            Class::OtherValue => "other_value",
        }
    }

    fn index(self) -> usize {
        Class::ALL.iter().position(|&c| c == self).unwrap_or(0)
    }
}

/// The flags in TestFloat's order of bits, with names.
pub const FLAG_NAMES: [(Status, &str); 5] = [
    (Status::INVALID, "invalid"),
    (Status::INFINITE, "infinite"),
    (Status::OVERFLOW, "overflow"),
    (Status::UNDERFLOW, "underflow"),
    (Status::INEXACT, "inexact"),
];

/// The comparison of one result with the expected one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Verdict {
    /// How the value differs, if it does.
    pub value: Option<Class>,
    /// Whether that difference counts (see [`CheckOptions`]).
    pub value_counts: bool,
    /// Flags expected and not raised.
    pub missing: Status,
    /// Flags raised and not expected.
    pub extra: Status,
}

impl Verdict {
    /// Whether the line is a mismatch.
    #[must_use]
    pub fn is_mismatch(&self) -> bool {
        (self.value.is_some() && self.value_counts) || !self.missing.is_empty() || !self.extra.is_empty()
    }

    fn explain(&self) -> String {
        let mut parts = Vec::new();
        if let Some(c) = self.value {
            parts.push(if self.value_counts {
                c.describe().to_string()
            } else {
                format!("{} (ignored)", c.describe())
            });
        }
        for (flag, name) in FLAG_NAMES {
            if self.missing.contains(flag) {
                parts.push(format!("{name} missing"));
            }
            if self.extra.contains(flag) {
                parts.push(format!("{name} set"));
            }
        }
        parts.join("; ")
    }
}

/// How `got` differs from `expected` as codes of `to`.
#[must_use]
pub fn classify(to: &Format, expected: u64, got: u64, expected_flags: Option<Status>) -> Option<Class> {
    if expected == got {
        return None;
    }
    match to.shape() {
        Shape::Float(f) => {
            let (ce, cg) = (f.classify(expected), f.classify(got));
            let magnitude = |c: u64| c & f.magnitude_mask();
            let same_sign = f.is_sign_negative(expected) == f.is_sign_negative(got);
            Some(match (ce, cg) {
                (FpCategory::Nan, FpCategory::Nan) => Class::NanEncoding,
                (FpCategory::Nan, _) => Class::NumberForNan,
                (_, FpCategory::Nan) => Class::NanForNumber,
                (FpCategory::Zero, FpCategory::Zero) => Class::ZeroSign,
                (FpCategory::Subnormal, FpCategory::Zero) => Class::FlushedToZero,
                (FpCategory::Infinite, _) if same_sign && magnitude(got) == f.max_finite_magnitude() => {
                    Class::MaxForInfinity
                }
                (_, FpCategory::Infinite) if same_sign && magnitude(expected) == f.max_finite_magnitude() => {
                    Class::InfinityForMax
                }
                (FpCategory::Infinite, _) | (_, FpCategory::Infinite) => Class::OtherValue,
                _ if same_sign && magnitude(got) == magnitude(expected) + 1 => Class::OneUlpAwayFromZero,
                _ if same_sign && magnitude(got) + 1 == magnitude(expected) => Class::OneUlpTowardZero,
                _ => Class::OtherValue,
            })
        }
        Shape::Integer { bits, signed } => {
            if expected_flags.is_some_and(|s| s.contains(Status::INVALID)) {
                return Some(Class::InvalidIntegerValue);
            }
            let value = |c: u64| {
                if signed && bits >= 1 && (c >> (bits - 1)) & 1 == 1 {
                    i128::from(c) - (1i128 << bits)
                } else {
                    i128::from(c)
                }
            };
            let (e, g) = (value(expected), value(got));
            Some(if (g - e).abs() == 1 && (e >= 0) == (g >= 0) {
                if g.abs() > e.abs() {
                    Class::OneUlpAwayFromZero
                } else {
                    Class::OneUlpTowardZero
                }
            } else {
                Class::OtherValue
            })
        }
    }
}

/// Compares a result (code and flags, if given) with the expected one.
#[must_use]
pub fn compare(
    to: &Format,
    expected: (u64, Option<Status>),
    got: (u64, Option<u8>),
    options: &CheckOptions,
) -> Verdict {
    let value = classify(to, expected.0, got.0, expected.1);
    let value_counts = match value {
        Some(Class::NanEncoding) => options.check_nans,
        Some(Class::InvalidIntegerValue) => options.check_invalid_integers,
        _ => true,
    };
    let (missing, extra) = match (expected.1, got.1) {
        (Some(e), Some(g)) if !options.no_flags => {
            let g = Status::from_bits_truncate(g);
            (e - g, g - e)
        }
        _ => (Status::empty(), Status::empty()),
    };
    Verdict { value, value_counts, missing, extra }
}

/// The counts of a check.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Lines checked.
    pub checked: u64,
    /// Lines that hold no case: blank lines, `#` comments and a CSV header.
    pub skipped: u64,
    /// Lines counted as mismatches (see [`CheckOptions`]).
    pub mismatches: u64,
    /// Lines with each [`Class`] (in [`Class::ALL`]'s order), counted or not.
    pub classes: [u64; 11],
    /// Per flag of [`FLAG_NAMES`]: lines where it was missing, and where it was set wrongly.
    pub flags_missing: [u64; 5],
    /// Per flag of [`FLAG_NAMES`]: lines where it was set but not expected.
    pub flags_extra: [u64; 5],
    /// The first [`SHOWN_MISMATCHES`] mismatches, one line each.
    pub shown: Vec<String>,
    /// Whether flags were compared on any line.
    pub flags_compared: bool,
    /// The operation word of the first line that had one.
    pub operation: Option<String>,
    /// The options the lines were checked with.
    pub options: CheckOptions,
}

/// Mismatches printed in full (testfloat_ver's `-errors` default).
pub const SHOWN_MISMATCHES: usize = 20;

impl Summary {
    fn add(&mut self, verdict: &Verdict) {
        if let Some(c) = verdict.value {
            self.classes[c.index()] += 1;
        }
        for (k, (flag, _)) in FLAG_NAMES.iter().enumerate() {
            self.flags_missing[k] += u64::from(verdict.missing.contains(*flag));
            self.flags_extra[k] += u64::from(verdict.extra.contains(*flag));
        }
        self.mismatches += u64::from(verdict.is_mismatch());
    }

    /// The summary by class, then the last line `N checked, M mismatches`.
    #[must_use]
    pub fn report(&self) -> String {
        let mut lines = self.shown.clone();
        if self.mismatches > self.shown.len() as u64 {
            lines.push(format!("... {} more mismatches not shown", self.mismatches - self.shown.len() as u64));
        }
        for (k, c) in Class::ALL.iter().enumerate() {
            if self.classes[k] > 0 {
                let ignored = match c {
                    Class::NanEncoding if !self.options.check_nans => " (not counted without --check-nans)",
                    Class::InvalidIntegerValue if !self.options.check_invalid_integers => {
                        " (not counted without --check-inv-ints)"
                    }
                    _ => "",
                };
                lines.push(format!("{:>12}  {}{ignored}", thousands(self.classes[k]), c.describe()));
            }
        }
        for (k, (_, name)) in FLAG_NAMES.iter().enumerate() {
            if self.flags_missing[k] > 0 {
                lines.push(format!("{:>12}  flag {name} missing", thousands(self.flags_missing[k])));
            }
            if self.flags_extra[k] > 0 {
                lines.push(format!("{:>12}  flag {name} set but not due", thousands(self.flags_extra[k])));
            }
        }
        if !self.flags_compared && self.checked > 0 {
            lines.push("flags not compared (none in the dump, or --no-flags)".into());
        }
        lines.push(checked_line(self.checked, self.mismatches, self.skipped));
        lines.join("\n")
    }
}

/// `N checked, M mismatches` (`1 mismatch`), with the count of skipped lines when there were any.
#[must_use]
pub fn checked_line(checked: u64, mismatches: u64, skipped: u64) -> String {
    let plural = if mismatches == 1 { "mismatch" } else { "mismatches" };
    let mut line = format!("{checked} checked, {mismatches} {plural}");
    if skipped > 0 {
        let what = if skipped == 1 { "line" } else { "lines" };
        line.push_str(&format!(" ({skipped} comment, blank or header {what} skipped)"));
    }
    line
}

/// `1234567` as `1,234,567`.
#[must_use]
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (k, ch) in digits.chars().enumerate() {
        if k > 0 && (digits.len() - k) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

fn operation_word(text: &[u8]) -> Option<String> {
    let first = text.split(|b| b.is_ascii_whitespace()).find(|w| !w.is_empty())?;
    (!first.iter().all(u8::is_ascii_hexdigit) && super::config::parse_mode(&String::from_utf8_lossy(first)).is_none())
        .then(|| String::from_utf8_lossy(first).into_owned())
}

/// Checks a dump against the IEEE semantics with `options` (a line's rounding-mode word
/// overrides `options.mode` for that line).
pub fn check_stream(
    input: impl Read,
    name: &str,
    from: &Format,
    to: &Format,
    options: &VerifyOptions,
    check: &CheckOptions,
) -> Result<Summary> {
    options.validate()?;
    let layout = Layout { operand_bits: from.width(), result_bits: to.width() };
    let mut reader = LineReader::new(input, name);
    let mut summary = Summary { options: *check, ..Summary::default() };
    // One converter per mode a line may name, made when first needed.
    let mut converters: Vec<(RoundingMode, super::Converter)> =
        vec![(options.mode, super::Converter::new(from, to, options))];
    let (a, b) = (hex_digits(from.width()), hex_digits(to.width()));
    let mut index = 0u64;
    while let Some((line, text)) = reader.next_line()? {
        if summary.operation.is_none() {
            summary.operation = operation_word(text);
        }
        let Some(case) = layout.parse(text, name, line)? else {
            summary.skipped += 1;
            continue;
        };
        let mode = case.mode.unwrap_or(options.mode);
        let converter = match converters.iter().find(|(m, _)| *m == mode) {
            Some((_, c)) => *c,
            None => {
                let c = super::Converter::new(from, to, &VerifyOptions { mode, ..*options });
                converters.push((mode, c));
                c
            }
        };
        let random = if matches!(mode, RoundingMode::Stochastic { .. }) { seeded_random(check.seed, index) } else { 0 };
        index += 1;
        let (code, status) = converter.convert(case.operand, random);
        let verdict = compare(to, (code, Some(status)), (case.result, case.flags), check);
        summary.checked += 1;
        summary.flags_compared |= case.flags.is_some() && !check.no_flags;
        summary.add(&verdict);
        if verdict.is_mismatch() && summary.shown.len() < SHOWN_MISMATCHES {
            let mut expected = Vec::new();
            super::testfloat::push_line(&mut expected, case.operand, a, code, b, Some(status.bits()));
            let got = match case.flags {
                Some(f) => format!("{:0b$X} {f:02X}", case.result),
                None => format!("{:0b$X}", case.result),
            };
            summary.shown.push(format!(
                "line {line}: {:0a$X}: expected {}, got {got}: {}",
                case.operand,
                String::from_utf8_lossy(&expected[a + 1..expected.len() - 1]),
                verdict.explain()
            ));
        }
    }
    Ok(summary)
}

/// One ranked hypothesis of `--which`.
#[derive(Clone, Debug)]
pub struct Ranked {
    /// The hypothesis: a format, a rounding mode, a tininess rule, saturation or a profile.
    pub config: Config,
    /// Lines it agrees with.
    pub agree: u64,
}

/// The outcome of `--which`.
#[derive(Clone, Debug)]
pub struct Which {
    /// Lines checked.
    pub checked: u64,
    /// Lines that hold no case (blank, `#` comments, a CSV header).
    pub skipped: u64,
    /// Best first.
    pub ranking: Vec<Ranked>,
}

impl Which {
    /// The best `shown` hypotheses, one line each, then `N checked, M mismatches` for the best.
    #[must_use]
    pub fn report(&self, shown: usize) -> String {
        let mut lines = Vec::new();
        for r in self.ranking.iter().take(shown) {
            lines.push(format!("matches {}: {}/{}", r.config, thousands(r.agree), thousands(self.checked)));
        }
        if self.ranking.iter().take(shown).any(|r| !r.config.has_flags()) {
            lines.push("(ONNX Cast configurations raise no flags: their lines are compared by value only)".into());
        }
        let best = self.ranking.first().map_or(0, |r| r.agree);
        lines.push(checked_line(self.checked, self.checked - best, self.skipped));
        lines.join("\n")
    }
}

/// Every configuration `--which` tries for results of `width` bits from `from`: every rounding
/// mode but stochastic, every tininess rule, saturation on and off, on every ONNX format of that
/// width and the described formats (for widths of 8 bits or fewer every signed e/m split with
/// each `special` and subnormal rule; above that the IEEE layouts e5m10, e8m7, e8m23, e11m52 kept
/// and flushed); and, for ONNX sources, ONNX Cast under each profile, saturating or not.
pub fn hypotheses(from: &Format, width: u32) -> Vec<Config> {
    let mut formats: Vec<Format> = Vec::new();
    let onnx_targets: Vec<DType> = DType::ALL
        .into_iter()
        .filter(|d| matches!(d.kind(), Kind::Float(_) | Kind::Integer { .. }) && d.bits() == Some(width))
        .collect();
    formats.extend(onnx_targets.iter().map(|&d| Format::Onnx(d)));
    let mut descriptions = Vec::new();
    if width <= 8 {
        for e in 1..width.saturating_sub(1) {
            let m = width - 1 - e;
            for special in ["ieee", "fn", "fnuz", "none"] {
                for subnormal in ["keep", "flush"] {
                    descriptions.push(format!("e{e}m{m},special={special},subnormal={subnormal}"));
                }
            }
        }
    } else {
        for (e, m) in [(5, 10), (8, 7), (8, 23), (11, 52)] {
            if e + m + 1 == width {
                for subnormal in ["keep", "flush"] {
                    descriptions.push(format!("e{e}m{m},special=ieee,subnormal={subnormal}"));
                }
            }
        }
    }
    formats.extend(
        descriptions.iter().filter_map(|d| crate::format::FloatFormat::describe(d).ok()).map(Format::Described),
    );
    let mut configs = Vec::new();
    for format in formats {
        let tininess_rules: &[Tininess] = match format.shape() {
            Shape::Float(_) => &[Tininess::AfterRounding, Tininess::BeforeRounding, Tininess::Delivered],
            Shape::Integer { .. } => &[Tininess::AfterRounding],
        };
        for mode in RoundingMode::all(1).into_iter().filter(|m| !matches!(m, RoundingMode::Stochastic { .. })) {
            for &tininess in tininess_rules {
                for saturate in [false, true] {
                    configs.push(Config {
                        semantics: Semantics::Ieee(VerifyOptions { mode, tininess, saturate }),
                        format: Some(format),
                    });
                }
            }
        }
    }
    if let Format::Onnx(source) = from {
        for &to in &onnx_targets {
            if crate::convert::convert_code(*source, to, 0, &crate::CastOptions::default()).is_err() {
                continue;
            }
            let round_modes: &[crate::RoundMode] = if to == DType::Float8E8M0 {
                &[crate::RoundMode::Up, crate::RoundMode::Down, crate::RoundMode::Nearest]
            } else {
                &[crate::RoundMode::Up]
            };
            for profile in Profile::ALL {
                for saturate in [true, false] {
                    for &round_mode in round_modes {
                        configs.push(Config {
                            semantics: Semantics::Onnx(crate::CastOptions { saturate, round_mode, profile }),
                            format: Some(Format::Onnx(to)),
                        });
                    }
                }
            }
        }
    }
    configs
}

/// Lines `--which` reads before running them against every hypothesis.
const WHICH_BATCH: usize = 1 << 15;

/// Runs a dump against every configuration of [`hypotheses`] and ranks them by agreement (a line
/// agrees when [`compare`] finds no mismatch; configurations without flags compare values only).
pub fn which(input: impl Read, name: &str, from: &Format, width: u32, check: &CheckOptions) -> Result<Which> {
    let configs = hypotheses(from, width);
    if configs.is_empty() {
        return Err(Error::InvalidOp {
            op: "check --which".into(),
            message: format!("no format of {width} bits to try"),
        });
    }
    let to_placeholder = configs[0].target(&Format::Onnx(DType::Uint8));
    let evaluators: Vec<(Evaluator, Format)> = configs
        .iter()
        .map(|c| {
            let to = c.target(&to_placeholder);
            Evaluator::new(from, &to, c).map(|e| (e, to))
        })
        .collect::<Result<_>>()?;
    let layout = Layout { operand_bits: from.width(), result_bits: width };
    let mut reader = LineReader::new(input, name);
    let mut agree = vec![0u64; configs.len()];
    let mut batch: Vec<(Case, u64)> = Vec::with_capacity(WHICH_BATCH);
    let mut checked = 0u64;
    let run_batch = |batch: &mut Vec<(Case, u64)>, agree: &mut Vec<u64>| {
        let counts: Vec<u64> = evaluators
            .par_iter()
            .map(|(evaluator, to)| {
                batch
                    .iter()
                    .filter(|(case, index)| {
                        let random = seeded_random(check.seed, *index);
                        let expected = evaluator.convert(case.operand, random);
                        !compare(to, expected, (case.result, case.flags), check).is_mismatch()
                    })
                    .count() as u64
            })
            .collect();
        for (a, c) in agree.iter_mut().zip(counts) {
            *a += c;
        }
        batch.clear();
    };
    let mut skipped = 0u64;
    while let Some((line, text)) = reader.next_line()? {
        let Some(case) = layout.parse(text, name, line)? else {
            skipped += 1;
            continue;
        };
        batch.push((case, checked));
        checked += 1;
        if batch.len() == WHICH_BATCH {
            run_batch(&mut batch, &mut agree);
        }
    }
    run_batch(&mut batch, &mut agree);
    let mut ranking: Vec<Ranked> =
        configs.into_iter().zip(agree).map(|(config, agree)| Ranked { config, agree }).collect();
    // Stable: ties keep the order of `hypotheses` (formats, then modes), flagged ones first.
    ranking.sort_by_key(|r| (core::cmp::Reverse(r.agree), !r.config.has_flags()));
    Ok(Which { checked, skipped, ranking })
}
