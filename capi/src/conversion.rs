//! Options read from C and resolved, with the two formats, into one conversion: the IEEE
//! semantics of `lowbit::verify` (its `Converter`: every rounding mode, tininess rule, saturation
//! and TestFloat's flags) or ONNX `Cast` under a profile (`lowbit::convert_code`). Nothing here
//! rounds: it only picks what the library runs.

use crate::boundary::{Failure, Outcome, LOWBIT_ERR_BITS, LOWBIT_ERR_OPTIONS, LOWBIT_ERR_UNSUPPORTED};
use crate::handles;
use crate::tables;
use lowbit::round::{RoundingMode, Status, Tininess};
use lowbit::verify::sweep::FlagSplitTable;
use lowbit::verify::{Converter, Format, VerifyOptions};
use lowbit::{CastOptions, DType, Profile, RoundMode};

/// Round to nearest, ties to even (RISC-V `frm` 0, SoftFloat `softfloat_round_near_even`).
pub const LOWBIT_RNE: i32 = 0;
/// Round toward zero (`frm` 1, `softfloat_round_minMag`).
pub const LOWBIT_RTZ: i32 = 1;
/// Round toward negative infinity (`frm` 2, `softfloat_round_min`).
pub const LOWBIT_RDN: i32 = 2;
/// Round toward positive infinity (`frm` 3, `softfloat_round_max`).
pub const LOWBIT_RUP: i32 = 3;
/// Round to nearest, ties away from zero (`frm` 4, `softfloat_round_near_maxMag`).
pub const LOWBIT_RMM: i32 = 4;
/// Round to odd (`softfloat_round_odd`, 6); 5 and 7 (RISC-V's reserved and dynamic) are refused.
pub const LOWBIT_ROD: i32 = 6;
/// Stochastic rounding: the low `random_width` bits of `random_bits` are added to as many
/// discarded bits below the last kept one, and the sum truncated.
pub const LOWBIT_STOCHASTIC: i32 = 8;
/// Round away from zero.
pub const LOWBIT_RAZ: i32 = 9;

/// Tiny when the exact value is below the smallest normal (`softfloat_tininess_beforeRounding`).
pub const LOWBIT_TININESS_BEFORE: i32 = 0;
/// Tiny when the value rounded with unbounded exponent is below the smallest normal (IEEE's other
/// option, SoftFloat's and TestFloat's default: `softfloat_tininess_afterRounding`).
pub const LOWBIT_TININESS_AFTER: i32 = 1;
/// Tiny when the delivered result is subnormal or zero, as some units judge it.
pub const LOWBIT_TININESS_DELIVERED: i32 = 2;

/// `flush` bit: subnormal results become zero of the same sign, with UNDERFLOW|INEXACT (FTZ).
pub const LOWBIT_FLUSH_RESULTS: u8 = 1;
/// `flush` bit: subnormal float operands read as zero of their sign (DAZ).
pub const LOWBIT_FLUSH_OPERANDS: u8 = 2;

/// Profile `spec`: the ONNX operator text (the default).
pub const LOWBIT_PROFILE_SPEC: i32 = 0;
/// Profile `onnx-reference`: onnx's ReferenceEvaluator.
pub const LOWBIT_PROFILE_ONNX_REFERENCE: i32 = 1;
/// Profile `onnxruntime`: onnxruntime's CPU provider.
pub const LOWBIT_PROFILE_ONNXRUNTIME: i32 = 2;
/// Profile `openvino`.
pub const LOWBIT_PROFILE_OPENVINO: i32 = 3;
/// Profile `ml-dtypes`: ml_dtypes' `astype`.
pub const LOWBIT_PROFILE_ML_DTYPES: i32 = 4;
/// Profile `xla`: XLA on CPU.
pub const LOWBIT_PROFILE_XLA: i32 = 5;
/// Profile `torch`: PyTorch's `Tensor.to` on the CPU.
pub const LOWBIT_PROFILE_TORCH: i32 = 6;
/// Profile `torch-default`: PyTorch under `ATEN_CPU_CAPABILITY=default`.
pub const LOWBIT_PROFILE_TORCH_DEFAULT: i32 = 7;

/// Invalid operation: a signalling NaN operand, a value the target cannot hold, an integer result
/// out of range (TestFloat's bit layout, as SoftFloat's `softfloat_flag_invalid`).
pub const LOWBIT_FLAG_INVALID: u8 = 16;
/// Division by zero (never raised by a conversion; here for the layout).
pub const LOWBIT_FLAG_INFINITE: u8 = 8;
/// The rounded value exceeded the largest finite one (always with INEXACT).
pub const LOWBIT_FLAG_OVERFLOW: u8 = 4;
/// The result was tiny (see `tininess`) and inexact.
pub const LOWBIT_FLAG_UNDERFLOW: u8 = 2;
/// The result differs from the exact value.
pub const LOWBIT_FLAG_INEXACT: u8 = 1;
/// Not an IEEE flag: `lowbit_convert` failed (its result is then 0); the reason is in
/// `lowbit_last_error_message`.
pub const LOWBIT_FLAG_ERROR: u8 = 128;

/// How a conversion rounds and what it reports. Start from `lowbit_options_default()` and set the
/// fields that differ.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct lowbit_options {
    /// `LOWBIT_RNE`, `LOWBIT_RTZ`, `LOWBIT_RDN`, `LOWBIT_RUP`, `LOWBIT_RMM`, `LOWBIT_ROD`,
    /// `LOWBIT_STOCHASTIC` or `LOWBIT_RAZ`.
    pub round: i32,
    /// `LOWBIT_TININESS_BEFORE`, `LOWBIT_TININESS_AFTER` or `LOWBIT_TININESS_DELIVERED`.
    pub tininess: i32,
    /// 1: overflow and infinities give ±MAX (INVALID for an infinity), out-of-range integer
    /// results the nearest bound; 0: they give infinity (or NaN, or MAX where the format has
    /// neither) and, for integers, x86's "integer indefinite" (INVALID).
    pub saturate: u8,
    /// `LOWBIT_FLUSH_RESULTS` and/or `LOWBIT_FLUSH_OPERANDS` (no effect on integer formats).
    pub flush: u8,
    /// 0: the IEEE semantics above, with flags. 1: ONNX `Cast` under `profile` (both formats ONNX
    /// dtypes; values only, flags always 0; `saturate` is Cast's attribute; `round` is FLOAT8E8M0's
    /// `round_mode`: `LOWBIT_RNE` for Cast's default `up`, or `LOWBIT_RAZ` up, `LOWBIT_RTZ` down,
    /// `LOWBIT_RMM` nearest).
    pub onnx_cast: u8,
    /// The profile of `onnx_cast`: `LOWBIT_PROFILE_SPEC` (the default), ...
    pub profile: i32,
    /// With `LOWBIT_STOCHASTIC`: how many random bits take part, 1 to 63.
    pub random_width: u32,
    /// With `LOWBIT_STOCHASTIC`: the random word (its low `random_width` bits are used).
    pub random_bits: u64,
}

/// Nearest even, tininess after rounding, no saturation, no flush, IEEE semantics, profile spec.
pub(crate) const DEFAULT_OPTIONS: lowbit_options = lowbit_options {
    round: LOWBIT_RNE,
    tininess: LOWBIT_TININESS_AFTER,
    saturate: 0,
    flush: 0,
    onnx_cast: 0,
    profile: LOWBIT_PROFILE_SPEC,
    random_width: 0,
    random_bits: 0,
};

fn bad_option(message: String) -> Failure {
    Failure::new(LOWBIT_ERR_OPTIONS, message)
}

/// The rounding modes without random bits, by their `LOWBIT_*` number.
pub(crate) fn deterministic_mode(round: i32) -> Option<RoundingMode> {
    Some(match round {
        LOWBIT_RNE => RoundingMode::NearestEven,
        LOWBIT_RTZ => RoundingMode::TowardZero,
        LOWBIT_RDN => RoundingMode::TowardNegative,
        LOWBIT_RUP => RoundingMode::TowardPositive,
        LOWBIT_RMM => RoundingMode::NearestTiesAway,
        LOWBIT_ROD => RoundingMode::ToOdd,
        LOWBIT_RAZ => RoundingMode::AwayFromZero,
        _ => return None,
    })
}

fn rounding_mode(options: &lowbit_options) -> Outcome<RoundingMode> {
    if let Some(mode) = deterministic_mode(options.round) {
        return Ok(mode);
    }
    Ok(match options.round {
        LOWBIT_STOCHASTIC if (1..=63).contains(&options.random_width) => {
            RoundingMode::Stochastic { bits: options.random_width }
        }
        LOWBIT_STOCHASTIC => {
            return Err(bad_option(format!(
                "random_width {} with LOWBIT_STOCHASTIC; use 1 to 63",
                options.random_width
            )))
        }
        other => {
            return Err(bad_option(format!(
                "round {other} is no mode; use LOWBIT_RNE (0), RTZ (1), RDN (2), RUP (3), RMM (4), ROD (6), \
                 STOCHASTIC (8) or RAZ (9)"
            )))
        }
    })
}

fn flag(value: u8, name: &str) -> Outcome<bool> {
    match value {
        0 => Ok(false),
        1 => Ok(true),
        other => Err(bad_option(format!("{name} {other}; use 0 or 1"))),
    }
}

/// The profile of a `LOWBIT_PROFILE_*` value (its position in `Profile::ALL`).
pub(crate) fn profile(value: i32) -> Outcome<Profile> {
    usize::try_from(value)
        .ok()
        .and_then(|i| Profile::ALL.get(i))
        .copied()
        .ok_or_else(|| bad_option(format!("profile {value}; use 0 to {} (LOWBIT_PROFILE_*)", Profile::ALL.len() - 1)))
}

/// A conversion resolved once from two handles and the options.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Conversion {
    /// The formats as read and written (flushed ones with `flush`).
    pub(crate) from: &'static Format,
    pub(crate) to: &'static Format,
    /// The bits an operand may have (`from`'s width), found once.
    operand_mask: u64,
    pub(crate) how: How,
}

#[derive(Clone, Copy, Debug)]
pub(crate) enum How {
    /// The IEEE semantics: the library's converter, or its exact table where one applies.
    Ieee {
        converter: Converter,
        table: Option<&'static FlagSplitTable>,
        stochastic: bool,
        options: VerifyOptions,
    },
    Onnx {
        from: DType,
        to: DType,
        options: CastOptions,
    },
}

impl Conversion {
    #[inline]
    pub(crate) fn resolve(from: u32, to: u32, options: &lowbit_options) -> Outcome<Conversion> {
        let (from, to) = (handles::resolve(from, "source")?, handles::resolve(to, "target")?);
        let mode = rounding_mode(options)?;
        let saturate = flag(options.saturate, "saturate")?;
        let tininess = match options.tininess {
            LOWBIT_TININESS_BEFORE => Tininess::BeforeRounding,
            LOWBIT_TININESS_AFTER => Tininess::AfterRounding,
            LOWBIT_TININESS_DELIVERED => Tininess::Delivered,
            other => {
                return Err(bad_option(format!(
                    "tininess {other}; use LOWBIT_TININESS_BEFORE (0), AFTER (1) or DELIVERED (2)"
                )))
            }
        };
        if options.flush & !(LOWBIT_FLUSH_RESULTS | LOWBIT_FLUSH_OPERANDS) != 0 {
            return Err(bad_option(format!(
                "flush {}; use LOWBIT_FLUSH_RESULTS (1) | LOWBIT_FLUSH_OPERANDS (2)",
                options.flush
            )));
        }
        let profile = profile(options.profile)?;
        if flag(options.onnx_cast, "onnx_cast")? {
            let (Format::Onnx(f), Format::Onnx(t)) = (from.format, to.format) else {
                return Err(Failure::new(
                    LOWBIT_ERR_UNSUPPORTED,
                    format!("onnx_cast converts ONNX dtypes; {} -> {} is not a pair of them", from.format, to.format),
                ));
            };
            if options.flush != 0 {
                return Err(Failure::new(LOWBIT_ERR_UNSUPPORTED, "onnx_cast: ONNX Cast has no flush"));
            }
            let round_mode = match options.round {
                LOWBIT_RNE | LOWBIT_RAZ => RoundMode::Up,
                LOWBIT_RTZ => RoundMode::Down,
                LOWBIT_RMM => RoundMode::Nearest,
                other => {
                    return Err(bad_option(format!(
                        "round {other} with onnx_cast: Cast's round_mode is LOWBIT_RAZ (up, also LOWBIT_RNE), \
                         LOWBIT_RTZ (down) or LOWBIT_RMM (nearest)"
                    )))
                }
            };
            let options = CastOptions { saturate, round_mode, profile };
            let how = How::Onnx { from: f, to: t, options };
            return Ok(Conversion { from: &from.format, to: &to.format, operand_mask: from.format.code_mask(), how });
        }
        let from = if options.flush & LOWBIT_FLUSH_OPERANDS != 0 { &from.flushed } else { &from.format };
        let to = if options.flush & LOWBIT_FLUSH_RESULTS != 0 { &to.flushed } else { &to.format };
        let verify = VerifyOptions { mode, tininess, saturate };
        let stochastic = matches!(mode, RoundingMode::Stochastic { .. });
        let converter = Converter::new(from, to, &verify);
        let table = if *from == Format::Onnx(DType::Float) { tables::float32_table(to, &verify) } else { None };
        let how = How::Ieee { converter, table, stochastic, options: verify };
        Ok(Conversion { from, to, operand_mask: from.code_mask(), how })
    }

    /// The same conversion with another rounding mode (a dump line's mode word).
    pub(crate) fn with_mode(&self, mode: RoundingMode) -> Conversion {
        match self.how {
            How::Ieee { options, .. } => {
                let options = VerifyOptions { mode, ..options };
                let converter = Converter::new(self.from, self.to, &options);
                let stochastic = matches!(mode, RoundingMode::Stochastic { .. });
                Conversion { how: How::Ieee { converter, table: None, stochastic, options }, ..*self }
            }
            How::Onnx { .. } => *self,
        }
    }

    /// Whether results carry flags (the IEEE semantics).
    pub(crate) fn has_flags(&self) -> bool {
        matches!(self.how, How::Ieee { .. })
    }

    /// Converts one operand: the result code and the flags (empty under ONNX Cast).
    /// `random_bits` is stochastic rounding's word (ignored by the other modes).
    #[inline]
    pub(crate) fn convert(&self, bits: u64, random_bits: u64) -> Outcome<(u64, Status)> {
        if bits & !self.operand_mask != 0 {
            return Err(Failure::new(
                LOWBIT_ERR_BITS,
                format!("operand {bits:#x} has bits above the {} bits of {}", self.from.width(), self.from),
            ));
        }
        match self.how {
            How::Ieee { table: Some(table), .. } => Ok(table.lookup(bits as u32)),
            How::Ieee { converter, stochastic, .. } => {
                Ok(converter.convert(bits, if stochastic { random_bits } else { 0 }))
            }
            How::Onnx { from, to, options } => lowbit::convert_code(from, to, bits, &options)
                .map(|code| (code, Status::empty()))
                .map_err(|e| Failure::new(LOWBIT_ERR_UNSUPPORTED, e.to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profile_values_name_the_library_profiles() {
        let named = [
            (LOWBIT_PROFILE_SPEC, "spec"),
            (LOWBIT_PROFILE_ONNX_REFERENCE, "onnx-reference"),
            (LOWBIT_PROFILE_ONNXRUNTIME, "onnxruntime"),
            (LOWBIT_PROFILE_OPENVINO, "openvino"),
            (LOWBIT_PROFILE_ML_DTYPES, "ml-dtypes"),
            (LOWBIT_PROFILE_XLA, "xla"),
            (LOWBIT_PROFILE_TORCH, "torch"),
            (LOWBIT_PROFILE_TORCH_DEFAULT, "torch-default"),
        ];
        assert_eq!(named.len(), Profile::ALL.len());
        for (value, name) in named {
            assert_eq!(profile(value).unwrap(), Profile::parse(name).unwrap());
        }
        assert_eq!(profile(8).unwrap_err().code, LOWBIT_ERR_OPTIONS);
        assert_eq!(profile(-1).unwrap_err().code, LOWBIT_ERR_OPTIONS);
    }

    #[test]
    fn flags_are_the_library_status_bits() {
        assert_eq!(Status::INVALID.bits(), LOWBIT_FLAG_INVALID);
        assert_eq!(Status::INFINITE.bits(), LOWBIT_FLAG_INFINITE);
        assert_eq!(Status::OVERFLOW.bits(), LOWBIT_FLAG_OVERFLOW);
        assert_eq!(Status::UNDERFLOW.bits(), LOWBIT_FLAG_UNDERFLOW);
        assert_eq!(Status::INEXACT.bits(), LOWBIT_FLAG_INEXACT);
        assert_eq!(Status::all().bits() & LOWBIT_FLAG_ERROR, 0);
    }
}
