//! **Configurations**: what a verification command compares. A configuration is the IEEE
//! semantics of this module (a rounding mode, a tininess rule, saturation, with flags) or ONNX
//! `Cast` under a profile (values only: a Cast raises no flags), optionally with its own target
//! format. `lowbit diff A B` and `lowbit check --which` name configurations with one small
//! grammar, comma-separated words:
//!
//! | word | meaning |
//! |---|---|
//! | `rne` `rtz` `rdn` `rup` `rmm` `raz` `rod` `sr:R` | rounding: nearest-even, toward zero, toward -inf, toward +inf, nearest ties away, away from zero, to odd, stochastic with R random bits |
//! | `tininess=before\|after\|delivered` | when a result is tiny (for UNDERFLOW) |
//! | `saturate=0\|1` | overflow and infinities to ±MAX |
//! | `profile=spec\|onnx-reference\|onnxruntime\|openvino` | ONNX Cast under that profile (values only) |
//! | `format=DESCRIPTION` | the target format; the words after it that are format options (`bias=`, `special=`, `subnormal=`, `unsigned`) belong to it |
//!
//! Words not given keep the command's defaults (`--round`, `--tininess`, `--saturate`, `--to`).

use super::{Converter, Format, RoundingMode, Status, Tininess, VerifyOptions};
use crate::convert::{CastOptions, RoundMode};
use crate::dtype::DType;
use crate::error::{quoted, Error, Result};
use crate::profile::Profile;
use core::fmt;

/// How a configuration converts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Semantics {
    /// The IEEE semantics of [`crate::verify`], with flags.
    Ieee(VerifyOptions),
    /// ONNX `Cast` under a profile: values only.
    Onnx(CastOptions),
}

/// A named configuration: semantics and, optionally, a target format of its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    /// How it converts.
    pub semantics: Semantics,
    /// The target format when the configuration names one (`format=...`).
    pub format: Option<Format>,
}

fn config_error(text: &str, word: &str, why: &str) -> Error {
    Error::InvalidOp { op: format!("configuration {}", quoted(text)), message: format!("word {}: {why}", quoted(word)) }
}

/// Parses a rounding-mode word ([`RoundingMode::from_word`]: `rne`, `rtz`, `rdn`, `rup`, `rmm`,
/// `raz`, `rod`, `sr:R`, or TestFloat's names).
#[must_use]
pub fn parse_mode(word: &str) -> Option<RoundingMode> {
    RoundingMode::from_word(word)
}

/// The short word of a mode (`rne`, ..., `sr:R`).
#[must_use]
pub fn mode_word(mode: RoundingMode) -> String {
    match mode {
        RoundingMode::NearestEven => "rne".into(),
        RoundingMode::TowardZero => "rtz".into(),
        RoundingMode::TowardNegative => "rdn".into(),
        RoundingMode::TowardPositive => "rup".into(),
        RoundingMode::NearestTiesAway => "rmm".into(),
        RoundingMode::AwayFromZero => "raz".into(),
        RoundingMode::ToOdd => "rod".into(),
        RoundingMode::Stochastic { bits } => format!("sr:{bits}"),
    }
}

/// A mode in words ("round toward zero").
#[must_use]
pub fn mode_words(mode: RoundingMode) -> String {
    match mode {
        RoundingMode::NearestEven => "round to nearest even".into(),
        RoundingMode::TowardZero => "round toward zero".into(),
        RoundingMode::TowardNegative => "round toward -infinity".into(),
        RoundingMode::TowardPositive => "round toward +infinity".into(),
        RoundingMode::NearestTiesAway => "round to nearest, ties away".into(),
        RoundingMode::AwayFromZero => "round away from zero".into(),
        RoundingMode::ToOdd => "round to odd".into(),
        RoundingMode::Stochastic { bits } => format!("stochastic rounding with {bits} random bits"),
    }
}

/// Parses a tininess word: `before`, `after` or `delivered`.
#[must_use]
pub fn parse_tininess(word: &str) -> Option<Tininess> {
    match word {
        "before" => Some(Tininess::BeforeRounding),
        "after" => Some(Tininess::AfterRounding),
        "delivered" => Some(Tininess::Delivered),
        _ => None,
    }
}

fn tininess_word(t: Tininess) -> &'static str {
    match t {
        Tininess::BeforeRounding => "before",
        Tininess::AfterRounding => "after",
        Tininess::Delivered => "delivered",
    }
}

fn tininess_words(t: Tininess) -> &'static str {
    match t {
        Tininess::BeforeRounding => "tininess before rounding",
        Tininess::AfterRounding => "tininess after rounding",
        Tininess::Delivered => "tininess on the delivered result",
    }
}

/// The ONNX `round_mode` an E8M0 target uses for a mode word (the rest keep the default `up`).
fn onnx_round_mode(mode: RoundingMode) -> RoundMode {
    match mode {
        RoundingMode::TowardZero => RoundMode::Down,
        RoundingMode::NearestTiesAway => RoundMode::Nearest,
        _ => RoundMode::Up,
    }
}

const FORMAT_OPTION_KEYS: [&str; 4] = ["bias", "special", "subnormal", "unsigned"];

impl Config {
    /// The IEEE configuration of the given options, with no format of its own.
    #[must_use]
    pub const fn ieee(options: VerifyOptions) -> Config {
        Config { semantics: Semantics::Ieee(options), format: None }
    }

    /// Parses a configuration (see the module docs); words not given keep `defaults`.
    pub fn parse(text: &str, defaults: VerifyOptions) -> Result<Config> {
        let mut options = defaults;
        let mut profile = None;
        let mut format = None;
        let mut mode_given = false;
        let words: Vec<&str> = text.split(',').map(str::trim).collect();
        let mut i = 0;
        while i < words.len() {
            let word = words[i];
            i += 1;
            if word.is_empty() {
                return Err(config_error(text, word, "an empty word (two commas, or a trailing comma)"));
            }
            let (key, value) = match word.split_once('=') {
                Some((k, v)) => (k, Some(v)),
                None => (word, None),
            };
            match (key, value) {
                ("tininess", Some(v)) => {
                    options.tininess = parse_tininess(v)
                        .ok_or_else(|| config_error(text, word, "tininess is before, after or delivered"))?;
                }
                ("saturate", Some(v)) => {
                    options.saturate = match v {
                        "0" => false,
                        "1" => true,
                        _ => return Err(config_error(text, word, "saturate is 0 or 1")),
                    };
                }
                ("profile", Some(v)) => {
                    profile = Some(Profile::parse(v).map_err(|_| {
                        config_error(text, word, &format!("the profiles are {}", Profile::NAMES.join(", ")))
                    })?);
                }
                ("round", Some(v)) => {
                    options.mode = parse_mode(v).ok_or_else(|| config_error(text, word, "not a rounding mode"))?;
                    mode_given = true;
                }
                ("format", Some(v)) => {
                    let mut description = v.to_string();
                    while i < words.len() {
                        let next_key = words[i].split_once('=').map_or(words[i], |(k, _)| k);
                        if !FORMAT_OPTION_KEYS.contains(&next_key) {
                            break;
                        }
                        description.push(',');
                        description.push_str(words[i]);
                        i += 1;
                    }
                    format = Some(
                        Format::parse(&description)
                            .map_err(|e| config_error(text, word, &format!("not a format: {e}")))?,
                    );
                }
                (_, None) => {
                    options.mode = parse_mode(word).ok_or_else(|| {
                        config_error(
                            text,
                            word,
                            "not a configuration word; use a mode (rne, rtz, rdn, rup, rmm, raz, rod, sr:R), \
                             tininess=, saturate=, profile= or format=",
                        )
                    })?;
                    mode_given = true;
                }
                _ => {
                    return Err(config_error(
                        text,
                        word,
                        "unknown key; the keys are round=, tininess=, saturate=, profile= and format=",
                    ))
                }
            }
        }
        options.validate()?;
        let semantics = match profile {
            Some(profile) => Semantics::Onnx(CastOptions {
                saturate: options.saturate,
                round_mode: if mode_given { onnx_round_mode(options.mode) } else { RoundMode::Up },
                profile,
            }),
            None => Semantics::Ieee(options),
        };
        Ok(Config { semantics, format })
    }

    /// The target of this configuration given the command's `--to`.
    #[must_use]
    pub fn target(&self, default: &Format) -> Format {
        self.format.unwrap_or(*default)
    }

    /// Whether results carry flags (IEEE semantics).
    #[must_use]
    pub const fn has_flags(&self) -> bool {
        matches!(self.semantics, Semantics::Ieee(_))
    }
}

impl fmt::Display for Config {
    /// In words: "e4m3,special=ieee, round toward zero, tininess after rounding, saturating".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        if let Some(format) = self.format {
            parts.push(format.to_string());
        }
        match self.semantics {
            Semantics::Ieee(o) => {
                parts.push(mode_words(o.mode));
                parts.push(tininess_words(o.tininess).to_string());
                // Said either way: the default that applied is seen.
                parts.push(if o.saturate { "saturating" } else { "not saturating" }.into());
            }
            Semantics::Onnx(o) => {
                parts.push(format!("ONNX Cast, profile {}", o.profile.name()));
                parts.push(format!("saturate={}", u8::from(o.saturate)));
                if o.round_mode != RoundMode::Up {
                    parts.push(format!("round_mode={:?}", o.round_mode).to_lowercase());
                }
                parts.push("values only".into());
            }
        }
        f.write_str(&parts.join(", "))
    }
}

/// The rounding, tininess and saturation a configuration uses, in the command line's words:
/// what `check`, `sweep` and `diff` print in their header and JSON, so the default that
/// applied is seen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    /// `--round`'s word: rne, rtz, ..., sr:R; under ONNX Cast its round_mode (up, down, nearest;
    /// it applies to FLOAT8E8M0 targets, the other float targets round to nearest even).
    pub round: String,
    /// `--tininess`'s word; `None` under ONNX Cast (it raises no flags).
    pub tininess: Option<&'static str>,
    /// Whether overflow saturates.
    pub saturate: bool,
}

impl fmt::Display for Settings {
    /// `round=rne tininess=after saturate=0`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "round={} tininess={} saturate={}",
            self.round,
            self.tininess.unwrap_or("none"),
            u8::from(self.saturate)
        )
    }
}

impl Config {
    /// The rounding, tininess and saturation this configuration uses.
    #[must_use]
    pub fn settings(&self) -> Settings {
        match self.semantics {
            Semantics::Ieee(o) => {
                Settings { round: mode_word(o.mode), tininess: Some(tininess_word(o.tininess)), saturate: o.saturate }
            }
            Semantics::Onnx(o) => {
                Settings { round: format!("{:?}", o.round_mode).to_lowercase(), tininess: None, saturate: o.saturate }
            }
        }
    }

    /// The configuration in the grammar of the module docs (parses back to itself).
    #[must_use]
    pub fn spelling(&self) -> String {
        let mut words = Vec::new();
        match self.semantics {
            Semantics::Ieee(o) => {
                words.push(mode_word(o.mode));
                words.push(format!("tininess={}", tininess_word(o.tininess)));
                words.push(format!("saturate={}", u8::from(o.saturate)));
            }
            Semantics::Onnx(o) => {
                words.push(format!("profile={}", o.profile.name()));
                words.push(format!("saturate={}", u8::from(o.saturate)));
                match o.round_mode {
                    RoundMode::Up => {}
                    RoundMode::Down => words.push("rtz".into()),
                    RoundMode::Nearest => words.push("rmm".into()),
                }
            }
        }
        if let Some(format) = self.format {
            words.push(format!("format={format}"));
        }
        words.join(",")
    }
}

/// A configuration resolved for one source and target: converts codes.
#[derive(Clone, Copy, Debug)]
pub struct Evaluator {
    kind: EvaluatorKind,
    to_mask: u64,
}

#[derive(Clone, Copy, Debug)]
enum EvaluatorKind {
    Ieee(Converter),
    Onnx { from: DType, to: DType, options: CastOptions },
}

impl Evaluator {
    /// Resolves `config` from `from` into its target (`config.format`, else `to`). ONNX
    /// configurations need ONNX dtypes on both sides.
    pub fn new(from: &Format, to: &Format, config: &Config) -> Result<Evaluator> {
        let to = config.target(to);
        let kind = match config.semantics {
            Semantics::Ieee(options) => {
                options.validate()?;
                EvaluatorKind::Ieee(Converter::new(from, &to, &options))
            }
            Semantics::Onnx(options) => {
                let (Format::Onnx(f), Format::Onnx(t)) = (*from, to) else {
                    return Err(Error::InvalidOp {
                        op: format!("configuration {}", config.spelling()),
                        message: format!("ONNX profiles convert ONNX types; {from} -> {to} is not a pair of them"),
                    });
                };
                // Any refusal (an unsupported pair) shows on the first code.
                crate::convert::convert_code(f, t, 0, &options)?;
                EvaluatorKind::Onnx { from: f, to: t, options }
            }
        };
        Ok(Evaluator { kind, to_mask: to.code_mask() })
    }

    /// Whether [`Evaluator::convert`] gives flags.
    #[must_use]
    pub const fn has_flags(&self) -> bool {
        matches!(self.kind, EvaluatorKind::Ieee(_))
    }

    /// The result code and, for IEEE semantics, the flags.
    #[must_use]
    #[inline]
    pub fn convert(&self, code: u64, random: u64) -> (u64, Option<Status>) {
        match &self.kind {
            EvaluatorKind::Ieee(c) => {
                let (code, status) = c.convert(code, random);
                (code, Some(status))
            }
            // `new` converted a code of this pair, so the pair is supported: codes convert.
            EvaluatorKind::Onnx { from, to, options } => (
                crate::convert::convert_code(*from, *to, code, options).map_or(self.to_mask, |c| c & self.to_mask),
                None,
            ),
        }
    }
}
impl VerifyOptions {
    /// The options from their words, as the command line's `--round`, `--tininess` and
    /// `--saturate` spell them: a mode (`rne`, `rtz`, `rdn`, `rup`, `rmm`, `raz`, `rod`, `sr:R`),
    /// `before`/`after`/`delivered`, and `0`/`1`. A word outside these is an error naming the flag.
    pub fn from_words(round: &str, tininess: &str, saturate: &str) -> Result<VerifyOptions> {
        let bad = |flag: &str, text: &str, want: &str| Error::InvalidOp {
            op: format!("--{flag}"),
            message: format!("{text:?} is not valid; use {want}"),
        };
        let options = VerifyOptions {
            mode: parse_mode(round)
                .ok_or_else(|| bad("round", round, "rne, rtz, rdn, rup, rmm, raz, rod or sr:R (R 1 to 63)"))?,
            tininess: parse_tininess(tininess)
                .ok_or_else(|| bad("tininess", tininess, "before, after or delivered"))?,
            saturate: match saturate {
                "0" => false,
                "1" => true,
                _ => return Err(bad("saturate", saturate, "0 or 1")),
            },
        };
        options.validate()?;
        Ok(options)
    }
}
