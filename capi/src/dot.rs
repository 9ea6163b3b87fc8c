//! Dot products and GEMMs under an accumulation model (`lowbit::dot`): `a @ b^T` of codes, or of
//! two block-scaled matrices in their schemes' storage layouts (the bytes
//! `lowbit_blocks_quantize` writes). The arithmetic is `lowbit::dot`'s; this file checks the
//! arguments and copies.

use crate::boundary::{status, text_argument, Failure, Outcome, LOWBIT_ERR_DATA, LOWBIT_ERR_FORMAT, LOWBIT_ERR_NULL};
use crate::conversion::{LOWBIT_RAZ, LOWBIT_RDN, LOWBIT_RMM, LOWBIT_RNE, LOWBIT_ROD, LOWBIT_RTZ, LOWBIT_RUP};
use crate::{handles, lowbit_format};
use lowbit::dot::{matmul_operands, Accumulation, Operand};
use lowbit::format::{FloatFormat, FormatName};
use lowbit::quant::blocks::{self, Scheme};
use lowbit::round::RoundingMode;
use lowbit::verify::Format;
use lowbit::{DType, Kind};
use std::ffi::c_char;

/// Every sum exact, one rounding at the end.
pub const LOWBIT_DOT_EXACT: i32 = 0;
/// Each product and partial sum rounded to `format` (nearest-even), in index order; block-scaled
/// operands per block, then times the two scales.
pub const LOWBIT_DOT_SEQUENTIAL: i32 = 1;
/// `acc = round(acc + a * b)` in `format` with `round`, in index order.
pub const LOWBIT_DOT_FMA: i32 = 2;

/// An accumulation model: `kind` (`LOWBIT_DOT_EXACT`, `_SEQUENTIAL` or `_FMA`), the accumulator's
/// float `format` (a handle of `lowbit_format_parse`; not read for exact) and the fma chain's
/// `round` (`LOWBIT_RNE` ... `LOWBIT_RAZ`, not stochastic; not read otherwise).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
#[allow(non_camel_case_types)]
pub struct lowbit_accumulation {
    /// `LOWBIT_DOT_EXACT`, `LOWBIT_DOT_SEQUENTIAL` or `LOWBIT_DOT_FMA`.
    pub kind: i32,
    /// The accumulator's float format.
    pub format: lowbit_format,
    /// The fma chain's rounding mode.
    pub round: i32,
}

fn bad(message: String) -> Failure {
    Failure::new(LOWBIT_ERR_FORMAT, message)
}

/// The float format a handle names, for the life of the process (handles are never freed).
fn float_of(handle: lowbit_format, which: &str) -> Outcome<&'static FloatFormat> {
    let entry = handles::resolve(handle, which)?;
    match &entry.format {
        Format::Described(f) => Ok(f),
        Format::Onnx(d) => match d.kind() {
            Kind::Float(f) => Ok(f),
            _ => Err(bad(format!("{which}: {} is not a float format", d.onnx_name()))),
        },
        _ => Err(bad(format!("{which}: not a float format"))),
    }
}

fn dtype_of(handle: lowbit_format, which: &str) -> Outcome<DType> {
    match handles::resolve(handle, which)?.format {
        Format::Onnx(d) => Ok(d),
        _ => Err(bad(format!("{which}: an ONNX dtype is needed (not a described format)"))),
    }
}

fn model_of(model: &lowbit_accumulation) -> Outcome<Accumulation> {
    Ok(match model.kind {
        LOWBIT_DOT_EXACT => Accumulation::Exact,
        LOWBIT_DOT_SEQUENTIAL => Accumulation::Sequential { format: float_of(model.format, "model.format")? },
        LOWBIT_DOT_FMA => {
            let mode = crate::conversion::deterministic_mode(model.round)
                .ok_or_else(|| bad(format!("model.round {}: a rounding mode without random bits", model.round)))?;
            Accumulation::Fma { format: float_of(model.format, "model.format")?, mode }
        }
        other => return Err(bad(format!("model.kind {other}: LOWBIT_DOT_EXACT (0), SEQUENTIAL (1) or FMA (2)"))),
    })
}

/// The model `text` names (`"exact"`, `"sequential-fp32"`, `"sequential,format=F"`,
/// `"fma,format=F[,round=R]"`) into `*out`. Returns `LOWBIT_OK`, or `LOWBIT_ERR_NULL`,
/// `LOWBIT_ERR_FORMAT` (`*out` left as it was) or `LOWBIT_ERR_TOO_MANY_FORMATS`.
///
/// # Safety
/// `text` is NULL or NUL-terminated; `out` is NULL or points to a writable `lowbit_accumulation`.
#[no_mangle]
pub unsafe extern "C" fn lowbit_accumulation_parse(text: *const c_char, out: *mut lowbit_accumulation) -> i32 {
    status(|| {
        // SAFETY: the caller's pointer, NULL or NUL-terminated.
        let text = unsafe { text_argument(text, "text") }?;
        if out.is_null() {
            return Err(Failure::new(LOWBIT_ERR_NULL, "out is NULL"));
        }
        let model = Accumulation::parse(text).map_err(|e| bad(e.to_string()))?;
        let (kind, format, round) = match model {
            Accumulation::Exact => (LOWBIT_DOT_EXACT, None, LOWBIT_RNE),
            Accumulation::Sequential { format } => (LOWBIT_DOT_SEQUENTIAL, Some(format), LOWBIT_RNE),
            Accumulation::Fma { format, mode } => {
                let round = match mode {
                    RoundingMode::TowardZero => LOWBIT_RTZ,
                    RoundingMode::TowardNegative => LOWBIT_RDN,
                    RoundingMode::TowardPositive => LOWBIT_RUP,
                    RoundingMode::NearestTiesAway => LOWBIT_RMM,
                    RoundingMode::ToOdd => LOWBIT_ROD,
                    RoundingMode::AwayFromZero => LOWBIT_RAZ,
                    _ => LOWBIT_RNE,
                };
                (LOWBIT_DOT_FMA, Some(format), round)
            }
        };
        let format = match format {
            Some(f) => handles::parse(&match f.name {
                FormatName::Onnx(name) | FormatName::Named(name) => name.to_string(),
                FormatName::Described => f.description(),
            })?,
            None => 0,
        };
        // SAFETY: not NULL (checked above); the caller passes a writable struct.
        unsafe { out.write(lowbit_accumulation { kind, format, round }) };
        Ok(())
    })
}

/// Writes the `m` x `n` codes of `result`, `out` format, row-major.
fn write_result(result: *mut u64, codes: &[u64]) -> Outcome<()> {
    if !codes.is_empty() {
        if result.is_null() {
            return Err(Failure::new(LOWBIT_ERR_NULL, "result is NULL"));
        }
        // SAFETY: not NULL (checked above); the caller passes m x n writable codes.
        unsafe { std::ptr::copy_nonoverlapping(codes.as_ptr(), result, codes.len()) };
    }
    Ok(())
}

fn codes_argument<'a>(codes: *const u64, count: usize, what: &str) -> Outcome<&'a [u64]> {
    if count == 0 {
        return Ok(&[]);
    }
    if codes.is_null() {
        return Err(Failure::new(LOWBIT_ERR_NULL, format!("{what} is NULL")));
    }
    // SAFETY: not NULL (checked above); the caller passes `count` readable codes.
    Ok(unsafe { std::slice::from_raw_parts(codes, count) })
}

/// `a @ b^T` of `a` (`m` x `k` codes of the ONNX dtype `dtype`, row-major, one code per element
/// in the low bits) and `b` (`n` x `k`), under `model`, as `m` x `n` codes of the float dtype
/// `out` in `result` (the final rounding nearest-even). Returns `LOWBIT_OK`, or
/// `LOWBIT_ERR_NULL`, `LOWBIT_ERR_HANDLE`, `LOWBIT_ERR_FORMAT` (a model or format it cannot
/// take) or `LOWBIT_ERR_DATA` (a size that overflows, a code wider than its dtype); `result`
/// is written only on success.
///
/// # Safety
/// `a` points to `m * k` codes and `b` to `n * k` (either may be NULL when that is 0);
/// `result` to `m * n` writable codes.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn lowbit_matmul_t(
    dtype: lowbit_format,
    a: *const u64,
    b: *const u64,
    m: usize,
    n: usize,
    k: usize,
    model: lowbit_accumulation,
    out: lowbit_format,
    result: *mut u64,
) -> i32 {
    status(|| {
        let dtype = dtype_of(dtype, "dtype")?;
        let out = dtype_of(out, "out")?;
        let model = model_of(&model)?;
        let size = |rows: usize| {
            rows.checked_mul(k).ok_or_else(|| Failure::new(LOWBIT_ERR_DATA, format!("{rows} x {k} overflows")))
        };
        let a = codes_argument(a, size(m)?, "a")?;
        let b = codes_argument(b, size(n)?, "b")?;
        let data = |e: lowbit::Error| Failure::new(LOWBIT_ERR_DATA, e.to_string());
        let (a, b) =
            (Operand::from_codes(a, dtype, m, k).map_err(data)?, Operand::from_codes(b, dtype, n, k).map_err(data)?);
        write_result(result, &matmul_operands(&a, &b, &model, out).map_err(data)?)
    })
}

fn blocks_operand(
    scheme: *const c_char,
    data: *const u8,
    len: usize,
    rows: usize,
    k: usize,
    what: &str,
) -> Outcome<Operand> {
    // SAFETY: the caller's pointer, NULL or NUL-terminated.
    let name = unsafe { text_argument(scheme, what) }?;
    let scheme = Scheme::parse(name).map_err(|e| bad(e.to_string()))?;
    let bytes: &[u8] = if len == 0 {
        &[]
    } else if data.is_null() {
        return Err(Failure::new(LOWBIT_ERR_NULL, format!("{what}'s data is NULL")));
    } else {
        // SAFETY: not NULL (checked above); the caller passes `len` readable bytes.
        unsafe { std::slice::from_raw_parts(data, len) }
    };
    let data_error = |e: lowbit::Error| Failure::new(LOWBIT_ERR_DATA, format!("{what}: {e}"));
    let q = blocks::from_bytes(bytes, &scheme, &[rows, k], -1).map_err(data_error)?;
    Operand::from_blocks(&q).map_err(data_error)
}

/// `a @ b^T` of two block-scaled matrices (`m` x `k` under `a_scheme` and `n` x `k` under
/// `b_scheme`, blocked along K, each in its scheme's storage layout of `a_len` / `b_len` bytes as
/// `lowbit_blocks_quantize` writes it), under `model`, as `m` x `n` codes of the float dtype `out`
/// in `result`. Returns as `lowbit_matmul_t`; `LOWBIT_ERR_DATA` also for a length that is not the
/// layout's or a scheme a dot product cannot take apart into one scale per block.
///
/// # Safety
/// The schemes are NULL or NUL-terminated; `a` points to `a_len` readable bytes, `b` to `b_len`;
/// `result` to `m * n` writable codes.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn lowbit_matmul_t_blocks(
    a_scheme: *const c_char,
    a: *const u8,
    a_len: usize,
    b_scheme: *const c_char,
    b: *const u8,
    b_len: usize,
    m: usize,
    n: usize,
    k: usize,
    model: lowbit_accumulation,
    out: lowbit_format,
    result: *mut u64,
) -> i32 {
    status(|| {
        let out = dtype_of(out, "out")?;
        let model = model_of(&model)?;
        let a = blocks_operand(a_scheme, a, a_len, m, k, "a")?;
        let b = blocks_operand(b_scheme, b, b_len, n, k, "b")?;
        let data = |e: lowbit::Error| Failure::new(LOWBIT_ERR_DATA, e.to_string());
        write_result(result, &matmul_operands(&a, &b, &model, out).map_err(data)?)
    })
}
