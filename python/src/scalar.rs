//! `lowbit.convert`: one code converted under the IEEE semantics of [`lowbit::verify`], with its
//! exception flags, as a testbench's scoreboard asks for one transaction at a time. The
//! conversion is [`lowbit::verify::Converter`]'s; nothing here rounds.

use crate::{exception, format, guarded, usage, verify_options};
use lowbit::round::RoundingMode;
use lowbit::verify::Converter;
use pyo3::prelude::*;

/// Converts the code `bits` of `from_` into `to`; returns the result's code and its flags in
/// TestFloat's bits (1 inexact, 2 underflow, 4 overflow, 8 infinite, 16 invalid). `random` is
/// the random word of stochastic rounding (its low R bits for `sr:R`); other modes take none.
#[pyfunction]
#[pyo3(signature = (bits, from_, to, round, tininess, saturate, random))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn convert_scalar(
    py: Python<'_>,
    bits: u64,
    from_: &str,
    to: &str,
    round: &str,
    tininess: &str,
    saturate: Option<bool>,
    random: u64,
) -> PyResult<(u64, u8)> {
    guarded(py, || {
        let options = verify_options(py, round, tininess, saturate, from_, to)?;
        let (from, to) = (format(py, from_)?, format(py, to)?);
        // A code wider than its format is a caller's mistake (a float32 passed as float16, a
        // sign-extended negative integer): refused, never silently masked.
        if bits & !from.code_mask() != 0 {
            let message = format!("bits {bits:#x} do not fit {from}, which is {} bits wide", from.width());
            return Err(exception(py, "DTypeError", message));
        }
        if random != 0 && !matches!(options.mode, RoundingMode::Stochastic { .. }) {
            return Err(usage(
                py,
                format!("random={random:#x}: only stochastic rounding (round=\"sr:R\") takes random bits"),
            ));
        }
        let (code, status) = Converter::new(&from, &to, &options).convert(bits, random);
        Ok((code, status.bits()))
    })
}
