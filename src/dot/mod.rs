//! **After the cast: dot products and GEMMs** of low-precision operands under an accumulation
//! model that is data ([`Accumulation`]): how the products are summed and where rounding happens.
//!
//! Every sum is formed exactly (a fixed-point accumulator wide enough for any sum of products of
//! float64 values, [`ExactSum`]) and rounded by the rounding core ([`crate::round`]); the models
//! differ only in *when* they round:
//!
//! | model | name | rounding |
//! |---|---|---|
//! | [`Accumulation::Exact`] | `exact` | once, at the end |
//! | [`Accumulation::Sequential`] | `sequential-fp32` (`sequential,format=F`) | each product to F, then each partial sum to F, in index order (the common emulation) |
//! | [`Accumulation::Fma`] | `fma,format=F,round=R` | a chain of fused multiply-adds: `acc = round_F(acc + a*b)`, in index order |
//!
//! The operands are codes of any float (or integer) dtype, decoded exactly. A NaN among the
//! products, Inf x 0 or Inf - Inf gives the result format's default NaN (a model's choice: what
//! hardware writes there varies); otherwise an infinite product gives that infinity. A zero sum
//! has IEEE 754's sign: summed exactly, -0 only when every product is -0 (or, rounding toward
//! negative, when terms cancel or any zero is -0); the sequential and fma chains start from +0 (as
//! `float acc = 0` does), so their zero is +0 unless they round toward negative.
//!
//! ```
//! use lowbit::dot::{matmul_t, Accumulation};
//! use lowbit::DType;
//!
//! // 2^24 + 1 + 1 (- 2^24): float32 loses both ones when it sums in order; the exact sum keeps them.
//! let a = [16777216.0f32, 1.0, 1.0, -16777216.0].map(f32::to_bits).map(u64::from);
//! let b = [1.0f32; 4].map(f32::to_bits).map(u64::from);
//! let exact = matmul_t(&a, &b, 1, 1, 4, DType::Float, &Accumulation::parse("exact")?, DType::Float)?;
//! let sequential = matmul_t(&a, &b, 1, 1, 4, DType::Float, &Accumulation::parse("sequential-fp32")?, DType::Float)?;
//! assert_eq!((f32::from_bits(exact[0] as u32), f32::from_bits(sequential[0] as u32)), (2.0, 0.0));
//! # Ok::<(), lowbit::Error>(())
//! ```

mod exact_sum;

pub use exact_sum::ExactSum;

use crate::alloc_prelude::*;
use crate::convert::{decode_element, Element};
use crate::dtype::{DType, Kind};
use crate::error::{quoted, Error, Result};
use crate::format::FloatFormat;
use crate::round::{encode, RoundingMode, RoundingOptions};
use crate::value::{Exact, Value};

/// How a dot product accumulates (module docs).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Accumulation {
    /// Every product and sum exact; one rounding into the result type.
    Exact,
    /// Each product rounded to `format`, then added to a `format` accumulator (rounded after
    /// every addition), in index order, nearest-even.
    Sequential {
        /// The accumulator's format.
        format: &'static FloatFormat,
    },
    /// `acc = round(acc + a * b)` in `format` with `mode`, in index order (one rounding per
    /// element: a fused multiply-add chain).
    Fma {
        /// The accumulator's format.
        format: &'static FloatFormat,
        /// The rounding of each step.
        mode: RoundingMode,
    },
}

fn bad(text: &str, why: &str) -> Error {
    Error::InvalidOp { op: "accumulation model".into(), message: format!("{}: {why}", quoted(text)) }
}

fn float_format(text: &str, name: &str) -> Result<&'static FloatFormat> {
    match DType::parse(name)?.kind() {
        Kind::Float(f) => Ok(f),
        _ => Err(bad(text, &format!("{name} is not a float type"))),
    }
}

impl Accumulation {
    /// Parses `exact`, `sequential-fp32`, `sequential,format=F` or `fma,format=F[,round=R]` (F a
    /// float dtype name, R `rne`, `rtz`, `rdn`, `rup`, `rmm`, `raz` or `rod`; default `rne`).
    pub fn parse(text: &str) -> Result<Accumulation> {
        let mut parts = text.split(',');
        let head = parts.next().unwrap_or_default();
        let mut format = None;
        let mut mode = None;
        for part in parts {
            match part.split_once('=') {
                Some(("format", f)) => format = Some(float_format(text, f)?),
                Some(("round", r)) => {
                    mode = Some(
                        RoundingMode::from_word(r)
                            .filter(|m| !matches!(m, RoundingMode::Stochastic { .. }))
                            .ok_or_else(|| {
                                bad(text, &format!("round={r} is not a rounding mode without random bits"))
                            })?,
                    );
                }
                _ => return Err(bad(text, &format!("unknown option {}", quoted(part)))),
            }
        }
        let model = match head {
            "exact" if format.is_none() && mode.is_none() => Accumulation::Exact,
            "sequential-fp32" if format.is_none() && mode.is_none() => {
                Accumulation::Sequential { format: &crate::format::F32 }
            }
            "sequential" if mode.is_none() => {
                Accumulation::Sequential { format: format.ok_or_else(|| bad(text, "format=F is needed"))? }
            }
            "fma" => Accumulation::Fma {
                format: format.ok_or_else(|| bad(text, "format=F is needed"))?,
                mode: mode.unwrap_or(RoundingMode::NearestEven),
            },
            _ => {
                return Err(bad(
                    text,
                    "models: exact, sequential-fp32, sequential,format=F, fma,format=F[,round=R] \
                     (exact takes no option)",
                ))
            }
        };
        Ok(model)
    }
}

/// The exact value of a code of `dtype` (integers exactly too).
fn value_of(dtype: DType, code: u64) -> Result<Value> {
    Ok(match decode_element(dtype, code)? {
        Element::Float(v) => v,
        Element::Int(i) => Value::Finite(Exact::from_i128(i)),
        Element::Bool(b) => Value::Finite(Exact::from_i128(i128::from(b))),
    })
}

/// `a @ b^T` for `a` of `m` x `k` and `b` of `n` x `k` codes of `dtype` (row-major, one code per
/// element, in the low bits), accumulated under `model` and written as codes of `out` (a float
/// dtype), `m` x `n` row-major; the final rounding is nearest-even, overflow to infinity.
#[allow(clippy::too_many_arguments)]
pub fn matmul_t(
    a: &[u64],
    b: &[u64],
    m: usize,
    n: usize,
    k: usize,
    dtype: DType,
    model: &Accumulation,
    out: DType,
) -> Result<Vec<u64>> {
    let Kind::Float(out_format) = out.kind() else {
        return Err(Error::UnsupportedDType {
            op: "matmul",
            dtype: out.onnx_name(),
            why: "the result is a float type",
        });
    };
    let len =
        |rows: usize| rows.checked_mul(k).ok_or_else(|| Error::TooLarge { what: format!("{rows} x {k} operand") });
    for (name, have, rows) in [("a", a.len(), m), ("b", b.len(), n)] {
        let want = len(rows)?;
        if have != want {
            return Err(Error::InvalidOp {
                op: "matmul".into(),
                message: format!("operand {name} holds {have} codes; {rows} x {k} takes {want}"),
            });
        }
    }
    let cells = m.checked_mul(n).ok_or_else(|| Error::TooLarge { what: format!("{m} x {n} result") })?;
    let decode = |codes: &[u64]| codes.iter().map(|&c| value_of(dtype, c)).collect::<Result<Vec<_>>>();
    let (a, b) = (decode(a)?, decode(b)?);
    // With K = 0 the operands are empty whatever M and N are: the result's size is checked here,
    // an error rather than an aborted allocation.
    let mut result = Vec::new();
    result.try_reserve_exact(cells).map_err(|_| Error::TooLarge { what: format!("{m} x {n} result") })?;
    let mut sum = ExactSum::new();
    for i in 0..m {
        let row = &a[i * k..i * k + k];
        for j in 0..n {
            let col = &b[j * k..j * k + k];
            let value = dot(row, col, model, &mut sum);
            result.push(encode(out_format, value, RoundingOptions::IEEE));
        }
    }
    Ok(result)
}

/// One dot product under `model`, as an exact value (rounded already where the model rounds).
fn dot(a: &[Value], b: &[Value], model: &Accumulation, sum: &mut ExactSum) -> Value {
    match *model {
        Accumulation::Exact => {
            sum.clear();
            a.iter().zip(b).for_each(|(x, y)| sum.add_product(x, y));
            sum.value(RoundingMode::NearestEven)
        }
        Accumulation::Sequential { format } => {
            let mut acc = Value::Finite(Exact::zero(false));
            for (x, y) in a.iter().zip(b) {
                sum.clear();
                sum.add_product(x, y);
                let product = round_to(format, sum.value(RoundingMode::NearestEven), RoundingMode::NearestEven);
                sum.clear();
                sum.add(&acc);
                sum.add(&product);
                acc = round_to(format, sum.value(RoundingMode::NearestEven), RoundingMode::NearestEven);
            }
            acc
        }
        Accumulation::Fma { format, mode } => {
            let mut acc = Value::Finite(Exact::zero(false));
            for (x, y) in a.iter().zip(b) {
                sum.clear();
                sum.add(&acc);
                sum.add_product(x, y);
                acc = round_to(format, sum.value(mode), mode);
            }
            acc
        }
    }
}

/// `value` rounded into `format` once with `mode`, as an exact value again.
fn round_to(format: &FloatFormat, value: Value, mode: RoundingMode) -> Value {
    let code = encode(format, value, RoundingOptions { mode, ..RoundingOptions::IEEE });
    format.decode(code)
}
