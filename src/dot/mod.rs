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
//! | [`Accumulation::Sequential`] | `sequential-fp32` (`sequential,format=F`) | each product to F, then each partial sum to F, in index order (the common emulation); with block-scaled operands per block: the block's element products summed so, times the two scales' product (rounded to F), rounded, added to the accumulator, rounded; the per-tensor scales' product last |
//! | [`Accumulation::Fma`] | `fma,format=F,round=R` | a chain of fused multiply-adds: `acc = round_F(acc + a*b)`, in index order |
//!
//! The operands ([`Operand`]) are codes of any float (or integer) dtype, decoded exactly, or
//! block-scaled matrices of `quant::blocks` blocked along K (MX, NVFP4 with its per-tensor scale,
//! FP8 with float scales, ggml's Q8_0 and Q4_0, ...): each element's value times its block's
//! scale and the per-tensor scale is the operand's value, as its recipe decodes them. A NaN among the
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
use crate::value::{Exact, Value, QUIET_NAN_PAYLOAD as QUIET_NAN};

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

/// One operand of a GEMM: `rows` x `k` element values, one scale per block of `block` elements
/// along `k` (per row), and a per-tensor factor: element x scale x factor is the operand's value.
/// Plain codes are one block of `k` under a scale of 1.
#[derive(Clone, Debug, PartialEq)]
pub struct Operand {
    rows: usize,
    k: usize,
    values: Vec<Value>,
    block: usize,
    scales: Vec<Value>,
    factor: Option<Value>,
}

const ONE: Value = Value::Finite(Exact { negative: false, significand: 1, exponent: 0, sticky: false });

impl Operand {
    /// `rows` x `k` codes of `dtype` (row-major, one code per element in the low bits), decoded
    /// exactly.
    pub fn from_codes(codes: &[u64], dtype: DType, rows: usize, k: usize) -> Result<Operand> {
        let want = rows.checked_mul(k).ok_or_else(|| Error::TooLarge { what: format!("{rows} x {k} operand") })?;
        if codes.len() != want {
            return Err(Error::InvalidOp {
                op: "matmul".into(),
                message: format!("an operand holds {} codes; {rows} x {k} takes {want}", codes.len()),
            });
        }
        let values = codes.iter().map(|&c| value_of(dtype, c)).collect::<Result<Vec<_>>>()?;
        // No scales: every block's is 1 (nothing sized by `rows` before the codes are checked).
        Ok(Operand { rows, k, values, block: k.max(1), scales: Vec::new(), factor: None })
    }

    /// A block-scaled matrix (rows x K, blocked along K) of `quant::blocks`: its element codes'
    /// values, block scales and per-tensor scale as its recipe decodes them.
    #[cfg(all(feature = "quant", feature = "std"))]
    pub fn from_blocks(q: &crate::quant::blocks::Quantized) -> Result<Operand> {
        let parts = crate::quant::blocks::block_operand(q)?;
        let float = |x: f32| {
            decode_element(DType::Float, u64::from(x.to_bits())).map(|e| match e {
                Element::Float(v) => v,
                _ => unreachable!("a float"),
            })
        };
        let (rows, k) = (q.shape[0], q.shape[1]);
        Ok(Operand {
            rows,
            k,
            values: parts.values.into_iter().map(float).collect::<Result<_>>()?,
            block: parts.block,
            scales: parts.scales.into_iter().map(float).collect::<Result<_>>()?,
            factor: parts.factor.map(float).transpose()?,
        })
    }

    /// Rows.
    #[must_use]
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Elements per row (K).
    #[must_use]
    pub fn k(&self) -> usize {
        self.k
    }

    /// The scale of the block holding element `col` of `row` (1 without scales).
    fn scale(&self, row: usize, col: usize) -> Value {
        let per_row = self.k.div_ceil(self.block).max(1);
        self.scales.get(row * per_row + col / self.block).copied().unwrap_or(ONE)
    }

    /// Every element's value times its scale and the factor, exactly.
    fn scaled(&self) -> Result<Vec<Value>> {
        let mut out = Vec::with_capacity(self.values.len());
        for (i, v) in self.values.iter().enumerate() {
            let (row, col) = (i / self.k.max(1), i % self.k.max(1));
            let mut x = exact_product(v, &self.scale(row, col))?;
            if let Some(f) = &self.factor {
                x = exact_product(&x, f)?;
            }
            out.push(x);
        }
        Ok(out)
    }
}

/// `a * b` exactly (NaN for a NaN operand or Inf x 0); an error where the significand would
/// need more than 64 bits (no operand of a block recipe gets there: an element of at most 24
/// bits times scales of at most 24).
fn exact_product(a: &Value, b: &Value) -> Result<Value> {
    let negative = a.is_negative() != b.is_negative();
    Ok(match (a, b) {
        (Value::Nan { .. }, _) | (_, Value::Nan { .. }) => Value::Nan { negative: false, payload: QUIET_NAN },
        (Value::Infinite { .. }, Value::Finite(x)) | (Value::Finite(x), Value::Infinite { .. }) if x.is_zero() => {
            Value::Nan { negative: false, payload: QUIET_NAN }
        }
        (Value::Infinite { .. }, _) | (_, Value::Infinite { .. }) => Value::Infinite { negative },
        (Value::Finite(x), Value::Finite(y)) => {
            let mut m = u128::from(x.significand) * u128::from(y.significand);
            let mut exponent = x.exponent + y.exponent;
            if m != 0 {
                let shift = m.trailing_zeros().min(127);
                m >>= shift;
                exponent += shift as i32;
            }
            let significand = u64::try_from(m).map_err(|_| Error::InvalidOp {
                op: "matmul".into(),
                message: "an element times its scales needs more than 64 significant bits".into(),
            })?;
            Value::Finite(Exact { negative, significand, exponent: if m == 0 { 0 } else { exponent }, sticky: false })
        }
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
    let operand = |codes: &[u64], rows: usize, name: &str| {
        Operand::from_codes(codes, dtype, rows, k).map_err(|e| match e {
            Error::InvalidOp { op, message } => Error::InvalidOp { op, message: format!("operand {name}: {message}") },
            e => e,
        })
    };
    matmul_operands(&operand(a, m, "a")?, &operand(b, n, "b")?, model, out)
}

/// `a @ b^T` of two operands (block-scaled or plain) with the same K, under `model`, as codes of
/// `out` (a float dtype), `a.rows()` x `b.rows()` row-major. Where both are block-scaled, blocks
/// are compared at the finer of the two block lengths, which must divide the other.
pub fn matmul_operands(a: &Operand, b: &Operand, model: &Accumulation, out: DType) -> Result<Vec<u64>> {
    let Kind::Float(out_format) = out.kind() else {
        return Err(Error::UnsupportedDType {
            op: "matmul",
            dtype: out.onnx_name(),
            why: "the result is a float type",
        });
    };
    if a.k != b.k {
        return Err(Error::InvalidOp {
            op: "matmul".into(),
            message: format!("a has {} columns, b {}: a @ b^T takes the same K", a.k, b.k),
        });
    }
    let (m, n, k) = (a.rows, b.rows, a.k);
    let block = a.block.min(b.block).max(1);
    if a.block.max(b.block) % block != 0 && a.block.max(b.block) < k {
        return Err(Error::InvalidOp {
            op: "matmul".into(),
            message: format!("blocks of {} and {} elements along K: one must divide the other", a.block, b.block),
        });
    }
    let cells = m.checked_mul(n).ok_or_else(|| Error::TooLarge { what: format!("{m} x {n} result") })?;
    // With K = 0 the operands are empty whatever M and N are: the result's size is checked here,
    // an error rather than an aborted allocation.
    let mut result = Vec::new();
    result.try_reserve_exact(cells).map_err(|_| Error::TooLarge { what: format!("{m} x {n} result") })?;
    let scaled = match model {
        Accumulation::Sequential { .. } => None,
        _ => Some((a.scaled()?, b.scaled()?)),
    };
    let mut sum = ExactSum::new();
    for i in 0..m {
        for j in 0..n {
            let value = match (&scaled, *model) {
                (Some((sa, sb)), _) => dot(&sa[i * k..i * k + k], &sb[j * k..j * k + k], model, &mut sum),
                (None, Accumulation::Sequential { format }) => sequential_blocks(a, i, b, j, block, format, &mut sum)?,
                (None, _) => unreachable!("scaled for every other model"),
            };
            result.push(encode(out_format, value, RoundingOptions::IEEE));
        }
    }
    Ok(result)
}

/// The sequential model over blocks: per block, each product of elements rounded to `format` and
/// added in index order to a block sum rounded to `format`; the two scales' product rounded to
/// `format`; the block sum times it, rounded, added to the accumulator, rounded; at the end the
/// accumulator times the product of the per-tensor factors (rounded), rounded. Plain operands
/// (one block, scale 1) reduce to the products summed in order.
fn sequential_blocks(
    a: &Operand,
    i: usize,
    b: &Operand,
    j: usize,
    block: usize,
    format: &'static FloatFormat,
    sum: &mut ExactSum,
) -> Result<Value> {
    let rne = RoundingMode::NearestEven;
    let k = a.k;
    let add = |x: &Value, y: &Value, sum: &mut ExactSum| {
        sum.clear();
        sum.add(x);
        sum.add(y);
        round_to(format, sum.value(rne), rne)
    };
    let mul = |x: &Value, y: &Value| exact_product(x, y).map(|p| round_to(format, p, rne));
    let mut acc = Value::Finite(Exact::zero(false));
    let mut start = 0;
    while start < k {
        let end = (start + block).min(k);
        let mut block_sum = Value::Finite(Exact::zero(false));
        for t in start..end {
            let p = mul(&a.values[i * k + t], &b.values[j * k + t])?;
            block_sum = add(&block_sum, &p, sum);
        }
        let s = mul(&a.scale(i, start), &b.scale(j, start))?;
        let term = mul(&block_sum, &s)?;
        acc = add(&acc, &term, sum);
        start = end;
    }
    match (&a.factor, &b.factor) {
        (None, None) => Ok(acc),
        (fa, fb) => {
            let f = mul(fa.as_ref().unwrap_or(&ONE), fb.as_ref().unwrap_or(&ONE))?;
            mul(&acc, &f)
        }
    }
}

/// One dot product of scaled values under `model` (exact or an fma chain), as an exact value
/// (rounded already where the model rounds).
fn dot(a: &[Value], b: &[Value], model: &Accumulation, sum: &mut ExactSum) -> Value {
    match *model {
        Accumulation::Exact => {
            sum.clear();
            a.iter().zip(b).for_each(|(x, y)| sum.add_product(x, y));
            sum.value(RoundingMode::NearestEven)
        }
        Accumulation::Sequential { .. } => unreachable!("summed block by block: sequential_blocks"),
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
