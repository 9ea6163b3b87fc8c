//! `lowbit._native`: the Rust side of the Python package. Every function here takes numpy arrays
//! as flat `uint8` buffers (the Python side, `lowbit/__init__.py`, makes the views, resolves dtype
//! objects and shapes, and allocates the outputs) and calls the crate: [`lowbit::Plan`] for
//! casts between fixed-width dtypes, [`lowbit::cast()`] for STRING, [`lowbit::packing`] for the
//! one-code-per-byte layout of ml_dtypes' sub-byte types, [`lowbit::quant`] and
//! [`lowbit::verify`]. Nothing here converts, rounds or packs by itself.
//!
//! Errors: every `lowbit::Error` becomes an exception of `lowbit._errors` chosen by its kind, with
//! lowbit's message; a panic (a bug) is caught at the boundary and becomes
//! `lowbit.InternalError`, never an abort or a `PanicException`.

use lowbit::format::{FloatFormat, NonFinite, Zero};
use lowbit::packing;
use lowbit::quant::mx::{self, MxFormat, MxOptions, ScaleRound};
use lowbit::quant::{DequantizeAttributes, QuantizeAttributes};
use lowbit::verify::check::{CheckOptions, Class, FLAG_NAMES};
use lowbit::verify::config::Config;
use lowbit::verify::vectors::{Level, Vectors};
use lowbit::verify::{sweep, Format};
use lowbit::Error;
use lowbit::Plan;
use lowbit::Profile;
use lowbit::Tensor;
use lowbit::{CastOptions, RoundMode};
use lowbit::{DType, Kind, Packing};
use numpy::{PyArray1, PyReadonlyArray1, PyReadwriteArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex, PoisonError};

mod block_vectors;
mod blocks;
mod checkpoint;
mod checkpoint_tools;
mod dot;
mod scalar;

// ------------------------------------------------------------------------------------------------
// Errors and the panic guard
// ------------------------------------------------------------------------------------------------

/// The class of `lowbit._errors` that an error of this kind raises.
fn error_class(e: &Error) -> &'static str {
    match e {
        Error::UnknownDType { .. }
        | Error::UnknownDTypeNumber(_)
        | Error::UnsupportedDType { .. }
        | Error::FormatDescription { .. }
        | Error::BitsOutOfRange { .. } => "DTypeError",
        Error::ParseString { .. } | Error::DumpLine { .. } => "ParseError",
        Error::ShapeMismatch { .. } | Error::RawLength { .. } | Error::RawNotWhole { .. } => "ShapeError",
        Error::InvalidOp { op, .. } if op == "shape" => "ShapeError",
        Error::Io { .. } | Error::NotARegularFile { .. } | Error::InputTooLarge { .. } | Error::Checkpoint { .. } => {
            "FileError"
        }
        _ => "Error",
    }
}

/// An exception of the class `name` of `lowbit._errors` with `message`; a `ValueError` if that
/// module cannot be imported (it always can in an installed package).
fn exception(py: Python<'_>, name: &str, message: String) -> PyErr {
    let class = py
        .import("lowbit._errors")
        .and_then(|m| m.getattr(name))
        .and_then(|c| c.cast_into::<pyo3::types::PyType>().map_err(PyErr::from));
    match class {
        Ok(class) => PyErr::from_type(class, message),
        Err(_) => PyValueError::new_err(message),
    }
}

fn lowbit_err(py: Python<'_>, e: Error) -> PyErr {
    exception(py, error_class(&e), e.to_string())
}

/// A usage error found here (not by the crate): `lowbit.Error` (a `ValueError`).
fn usage(py: Python<'_>, message: impl Into<String>) -> PyErr {
    exception(py, "Error", message.into())
}

/// Runs `body`, turning a panic into `lowbit.InternalError`: a last guard, so that no panic
/// crosses into Python whatever the crate does.
fn guarded<T>(py: Python<'_>, body: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(result) => result,
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic without a message".into());
            Err(exception(py, "InternalError", format!("lowbit internal error (a bug, please report it): {what}")))
        }
    }
}

/// `Result<T, lowbit::Error>` into `PyResult<T>`.
trait OrRaise<T> {
    fn or_raise(self, py: Python<'_>) -> PyResult<T>;
}

impl<T> OrRaise<T> for lowbit::Result<T> {
    fn or_raise(self, py: Python<'_>) -> PyResult<T> {
        self.map_err(|e| lowbit_err(py, e))
    }
}

// ------------------------------------------------------------------------------------------------
// Names and options
// ------------------------------------------------------------------------------------------------

fn dtype(py: Python<'_>, name: &str) -> PyResult<DType> {
    DType::parse(name).or_raise(py)
}

fn cast_options(py: Python<'_>, saturate: bool, round_mode: &str, profile: &str) -> PyResult<CastOptions> {
    let round_mode = RoundMode::parse(round_mode)
        .map_err(|_| usage(py, format!("round_mode must be \"up\", \"down\" or \"nearest\", not {round_mode:?}")))?;
    Ok(CastOptions { saturate, round_mode, profile: Profile::parse(profile).or_raise(py)? })
}

/// A Python integer argument as i64: anything else (a float, a huge int) is `lowbit.Error`
/// naming it, never a TypeError or OverflowError from the conversion.
fn int_arg(py: Python<'_>, value: Option<&Bound<'_, PyAny>>, what: &str) -> PyResult<Option<i64>> {
    let Some(value) = value.filter(|v| !v.is_none()) else { return Ok(None) };
    if value.is_instance_of::<pyo3::types::PyBool>() {
        return Err(usage(py, format!("{what} is an integer, not a bool")));
    }
    value.extract::<i64>().map(Some).map_err(|_| {
        let shown = value.repr().map_or_else(|_| "?".to_string(), |r| r.to_string());
        usage(py, format!("{what} {shown} is not an integer of at most 64 bits"))
    })
}

/// Threads as the command line reads `--threads`: [`lowbit::arguments::threads`].
fn threads(py: Python<'_>, threads: Option<&Bound<'_, PyAny>>) -> PyResult<usize> {
    lowbit::arguments::threads(int_arg(py, threads, "threads")?).or_raise(py)
}

/// A block size as the command line reads `--block-size`: [`lowbit::arguments::block_size`].
fn block_size(py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<usize> {
    let n = int_arg(py, Some(value), "block_size")?.unwrap_or_default();
    lowbit::arguments::block_size(n).or_raise(py)
}

/// Dimensions checked by [`lowbit::arguments::shape`] (a negative one is an error naming it).
#[pyfunction]
fn check_shape(py: Python<'_>, dims: Vec<i64>) -> PyResult<Vec<usize>> {
    lowbit::arguments::shape(&dims).or_raise(py)
}

fn slice<'a>(py: Python<'_>, a: &'a PyReadonlyArray1<'_, u8>, what: &str) -> PyResult<&'a [u8]> {
    a.as_slice().map_err(|_| usage(py, format!("{what}: the buffer is not contiguous")))
}

fn slice_mut<'a>(py: Python<'_>, a: &'a mut PyReadwriteArray1<'_, u8>, what: &str) -> PyResult<&'a mut [u8]> {
    a.as_slice_mut().map_err(|_| usage(py, format!("{what}: the buffer is not contiguous")))
}

/// Whether a dtype is held one code per byte in numpy when unpacked (the sub-byte types).
fn sub_byte(dtype: DType) -> bool {
    matches!(dtype.packing(), Packing::Nibbles | Packing::Crumbs | Packing::Sextets)
}

/// The bytes `n` elements of `dtype` take: the ONNX layout, or one byte per element (`codes`).
fn buffer_len(dtype: DType, n: usize, codes: bool) -> lowbit::Result<usize> {
    if codes && sub_byte(dtype) {
        Ok(n)
    } else {
        packing::raw_len(dtype, n)
    }
}

fn check_len(dtype: DType, n: usize, codes: bool, actual: usize) -> lowbit::Result<()> {
    let expected = buffer_len(dtype, n, codes)?;
    if expected != actual {
        return Err(Error::RawLength { dtype: dtype.onnx_name(), elements: n, expected, actual });
    }
    Ok(())
}

/// `buf` in the ONNX layout: itself, or packed from one code per byte into a new buffer.
fn to_raw(dtype: DType, buf: &[u8], codes: bool) -> lowbit::Result<std::borrow::Cow<'_, [u8]>> {
    if codes && sub_byte(dtype) {
        let mut raw = vec![0u8; packing::raw_len(dtype, buf.len())?];
        packing::pack_byte_codes(dtype, buf, &mut raw)?;
        Ok(std::borrow::Cow::Owned(raw))
    } else {
        Ok(std::borrow::Cow::Borrowed(buf))
    }
}

/// Raw ONNX data of `n` elements into `dst`: a copy, or one code per byte.
fn from_raw(dtype: DType, raw: &[u8], n: usize, dst: &mut [u8], codes: bool) -> lowbit::Result<()> {
    if codes && sub_byte(dtype) {
        check_len(dtype, n, true, dst.len())?;
        packing::unpack_byte_codes(dtype, raw, dst)
    } else {
        check_len(dtype, n, false, dst.len())?;
        dst.copy_from_slice(raw);
        Ok(())
    }
}

// ------------------------------------------------------------------------------------------------
// dtypes, profiles
// ------------------------------------------------------------------------------------------------

/// The ONNX name of a lowbit name or alias (`e4m3fn`, `float8_e4m3fn`, `FLOAT8E4M3FN`, `17`).
#[pyfunction]
fn resolve_dtype(py: Python<'_>, name: &str) -> PyResult<&'static str> {
    guarded(py, || Ok(dtype(py, name)?.onnx_name()))
}

/// Bytes of `n` elements of `dtype` in a buffer: the ONNX layout, or one byte per element of a
/// sub-byte type when `codes`.
#[pyfunction]
fn buffer_size(py: Python<'_>, name: &str, n: usize, codes: bool) -> PyResult<usize> {
    guarded(py, || buffer_len(dtype(py, name)?, n, codes).or_raise(py))
}

/// Every profile name, in the crate's order.
#[pyfunction]
fn profiles() -> Vec<&'static str> {
    Profile::ALL.iter().map(|p| p.name()).collect()
}

/// Every ONNX dtype name, in ONNX number order.
#[pyfunction]
fn dtype_names() -> Vec<&'static str> {
    DType::ALL.iter().map(|d| d.onnx_name()).collect()
}

// ------------------------------------------------------------------------------------------------
// Cast
// ------------------------------------------------------------------------------------------------

/// The plans of the last conversions asked for, newest last. The crate keeps a plan's tables, but
/// resolving a plan again costs about 2 us per call, as long as converting 8,000 elements.
static PLANS: Mutex<Vec<KeptPlan>> = Mutex::new(Vec::new());

/// A resolved plan with the source, target and options it was resolved for.
type KeptPlan = (DType, DType, CastOptions, Arc<Plan>);

/// How many plans [`PLANS`] keeps (a program casts between a handful of pairs).
const KEPT_PLANS: usize = 16;

/// The plan from `from` to `to` under `opts`, resolved once per pair and options.
fn plan(from: DType, to: DType, opts: &CastOptions) -> lowbit::Result<Arc<Plan>> {
    let mut plans = PLANS.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(k) = plans.iter().position(|(f, t, o, _)| (*f, *t, o) == (from, to, opts)) {
        let entry = plans.remove(k);
        let plan = Arc::clone(&entry.3);
        plans.push(entry);
        return Ok(plan);
    }
    let plan = Arc::new(Plan::new(from, to, opts)?);
    if plans.len() == KEPT_PLANS {
        plans.remove(0);
    }
    plans.push((from, to, *opts, Arc::clone(&plan)));
    Ok(plan)
}

/// Below this many elements a cast keeps the GIL: releasing and taking it back costs more than
/// the conversion, and another Python thread could not do much in the time.
const KEEP_GIL_BELOW: usize = 1 << 14;

/// ONNX Cast of `n` elements from `src` into `dst` (allocated by the caller), between fixed-width
/// dtypes, through one plan on `threads` threads with the GIL released (above
/// [`KEEP_GIL_BELOW`] elements). `src_codes` / `dst_codes`:
/// that side of a sub-byte type holds one code per byte (ml_dtypes' layout) instead of the ONNX
/// packing; that side is then packed or unpacked by the crate's packing functions around the plan.
#[pyfunction]
#[pyo3(signature = (src, dst, from_, to, n, saturate, round_mode, profile, threads_, src_codes, dst_codes))]
#[allow(clippy::too_many_arguments)]
fn cast_into(
    py: Python<'_>,
    src: PyReadonlyArray1<'_, u8>,
    mut dst: PyReadwriteArray1<'_, u8>,
    from_: &str,
    to: &str,
    n: usize,
    saturate: bool,
    round_mode: &str,
    profile: &str,
    threads_: Option<Bound<'_, PyAny>>,
    src_codes: bool,
    dst_codes: bool,
) -> PyResult<()> {
    guarded(py, || {
        let (from, to) = (dtype(py, from_)?, dtype(py, to)?);
        let opts = cast_options(py, saturate, round_mode, profile)?;
        let threads = threads(py, threads_.as_ref())?;
        let plan = plan(from, to, &opts).or_raise(py)?;
        let src = slice(py, &src, "source")?;
        let dst = slice_mut(py, &mut dst, "destination")?;
        check_len(from, n, src_codes, src.len()).or_raise(py)?;
        check_len(to, n, dst_codes, dst.len()).or_raise(py)?;
        let mut run = || -> lowbit::Result<()> {
            let raw = to_raw(from, src, src_codes)?;
            if dst_codes && sub_byte(to) {
                let mut packed = vec![0u8; packing::raw_len(to, n)?];
                plan.run_parallel(&raw, &mut packed, n, threads)?;
                packing::unpack_byte_codes(to, &packed, dst)
            } else {
                plan.run_parallel(&raw, dst, n, threads)
            }
        };
        if n < KEEP_GIL_BELOW { run() } else { py.detach(run) }.or_raise(py)
    })
}

/// A conversion where a side is a described format (`e4m3,special=ieee`; ml_dtypes' float8_e4m3,
/// float8_e3m4, float8_e4m3b11fnuz): the IEEE conversion of `lowbit cast` ([`DescribedCast`]),
/// rounded once to nearest even, saturating as asked (float targets of 8 bits or fewer); a named
/// format under a profile that has it (`ml-dtypes`, `xla`) follows the profile's rows. A
/// described side holds one little-endian code of 1, 2 or 4 bytes per element. Returns the
/// result's bytes (an ONNX sub-byte target one code per byte when `dst_codes`).
///
/// [`DescribedCast`]: lowbit::verify::DescribedCast
#[pyfunction]
#[pyo3(signature = (src, from_, to, n, saturate, round_mode, profile, src_codes, dst_codes))]
#[allow(clippy::too_many_arguments)]
fn cast_described<'py>(
    py: Python<'py>,
    src: PyReadonlyArray1<'_, u8>,
    from_: &str,
    to: &str,
    n: usize,
    saturate: bool,
    round_mode: &str,
    profile: &str,
    src_codes: bool,
    dst_codes: bool,
) -> PyResult<Bound<'py, PyArray1<u8>>> {
    guarded(py, || {
        let src = slice(py, &src, "source")?;
        let (from_format, to_format) = (described_side(py, from_)?, described_side(py, to)?);
        let opts = cast_options(py, saturate, round_mode, profile)?;
        let out = py
            .detach(|| -> lowbit::Result<Vec<u8>> {
                // A packed ONNX source would be read to its last whole byte (padding elements
                // included): widen it to FLOAT first, which holds every such value exactly.
                let (from, widened) = match from_format {
                    // Into int1/uint1 the source's own rows decide (ml_dtypes has no INT4 -> int1
                    // cast, unlike FLOAT -> int1): packed as ONNX packs it, the padding elements'
                    // results cut below.
                    Format::Onnx(d) if sub_byte(d) && matches!(to_format, Format::NamedInteger(_)) => {
                        check_len(d, n, src_codes, src.len())?;
                        (from_.to_string(), Some(to_raw(d, src, src_codes)?.into_owned()))
                    }
                    Format::Onnx(d) if sub_byte(d) => {
                        check_len(d, n, src_codes, src.len())?;
                        let raw = to_raw(d, src, src_codes)?;
                        let mut wide = vec![0u8; packing::raw_len(DType::Float, n)?];
                        Plan::new(d, DType::Float, &CastOptions::default())?.run(&raw, &mut wide, n)?;
                        (DType::Float.onnx_name().to_string(), Some(wide))
                    }
                    // ml_dtypes holds int1/uint1 one code per byte: packed for the cast, eight per
                    // byte (the padding elements' results are cut below).
                    Format::NamedInteger(i) => {
                        if src.len() != n {
                            return Err(Error::RawLength {
                                dtype: i.name,
                                elements: n,
                                expected: n,
                                actual: src.len(),
                            });
                        }
                        let codes: Vec<u64> = src.iter().map(|&b| u64::from(b)).collect();
                        (from_.to_string(), Some(packing::pack_bits(i.bits, &codes)?))
                    }
                    _ => (from_.to_string(), None),
                };
                let cast = lowbit::verify::DescribedCast::under_profile(&from, to, &opts)?.ok_or(Error::InvalidOp {
                    op: "cast".into(),
                    message: "neither side is a described format".into(),
                })?;
                let mut input: &[u8] = widened.as_deref().unwrap_or(src);
                let mut out = Vec::new();
                cast.stream(&mut input, &mut out).map_err(|e| match e {
                    lowbit::StreamError::Data(e) => e,
                    // Reading a slice and writing a Vec do not fail; kept for completeness.
                    lowbit::StreamError::Input(e) | lowbit::StreamError::Output(e) => {
                        Error::InvalidOp { op: "cast".into(), message: e.to_string() }
                    }
                })?;
                match to_format {
                    Format::Onnx(d) if dst_codes && sub_byte(d) => {
                        let mut codes = vec![0u8; n];
                        packing::unpack_byte_codes(d, &out[..packing::raw_len(d, n)?.min(out.len())], &mut codes)?;
                        Ok(codes)
                    }
                    Format::NamedInteger(i) if dst_codes => {
                        let raw = &out[..packing::raw_len_bits(i.bits, n)?.min(out.len())];
                        Ok(packing::unpack_bits(i.name, i.bits, raw, n)?.into_iter().map(|c| c as u8).collect())
                    }
                    _ => {
                        let mut out = out;
                        out.truncate(lowbit::verify::DescribedCast::raw_len(&to_format, n)?);
                        Ok(out)
                    }
                }
            })
            .or_raise(py)?;
        Ok(PyArray1::from_vec(py, out))
    })
}

/// A side of `cast_described`: a format, or BOOL (which a profile's rows convert).
fn described_side(py: Python<'_>, text: &str) -> PyResult<Format> {
    match DType::parse(text) {
        Ok(DType::Bool) => Ok(Format::Onnx(DType::Bool)),
        _ => format(py, text),
    }
}

/// The description of a format (`e4m3,special=ieee`), or the ONNX name of a dtype.
#[pyfunction]
fn format_name(py: Python<'_>, text: &str) -> PyResult<String> {
    guarded(py, || Ok(format(py, text)?.to_string()))
}

/// ONNX Cast from STRING: `texts` read under the profile's grammar into `dst`.
#[pyfunction]
#[pyo3(signature = (texts, dst, to, saturate, round_mode, profile, dst_codes))]
#[allow(clippy::too_many_arguments)]
fn cast_from_strings(
    py: Python<'_>,
    texts: Vec<String>,
    mut dst: PyReadwriteArray1<'_, u8>,
    to: &str,
    saturate: bool,
    round_mode: &str,
    profile: &str,
    dst_codes: bool,
) -> PyResult<()> {
    guarded(py, || {
        let to = dtype(py, to)?;
        let opts = cast_options(py, saturate, round_mode, profile)?;
        let dst = slice_mut(py, &mut dst, "destination")?;
        let n = texts.len();
        let parsed = py.detach(|| -> lowbit::Result<()> {
            let out = lowbit::cast(&Tensor::from_strings(vec![n], texts)?, to, &opts)?;
            let raw = out.raw().ok_or(Error::UnsupportedDType {
                op: "Cast",
                dtype: "STRING",
                why: "cast from STRING to STRING is the identity; lowbit.cast returns the input",
            })?;
            from_raw(to, raw, n, dst, dst_codes)
        });
        match parsed {
            // The crate names the element that does not read ("element 3: cannot parse ...");
            // from a STRING source that is the only operation error Cast has.
            Err(e @ Error::InvalidOp { .. }) => Err(exception(py, "ParseError", e.to_string())),
            other => other.or_raise(py),
        }
    })
}

/// ONNX Cast to STRING: the texts of `n` elements of `from_` under the profile's number style.
#[pyfunction]
#[pyo3(signature = (src, from_, n, saturate, round_mode, profile, src_codes))]
#[allow(clippy::too_many_arguments)]
fn cast_to_strings<'py>(
    py: Python<'py>,
    src: PyReadonlyArray1<'_, u8>,
    from_: &str,
    n: usize,
    saturate: bool,
    round_mode: &str,
    profile: &str,
    src_codes: bool,
) -> PyResult<Bound<'py, PyList>> {
    guarded(py, || {
        let from = dtype(py, from_)?;
        let opts = cast_options(py, saturate, round_mode, profile)?;
        let src = slice(py, &src, "source")?;
        check_len(from, n, src_codes, src.len()).or_raise(py)?;
        let out = py
            .detach(|| -> lowbit::Result<Tensor> {
                let raw = to_raw(from, src, src_codes)?.into_owned();
                lowbit::cast(&Tensor::from_raw(from, vec![n], raw)?, DType::String, &opts)
            })
            .or_raise(py)?;
        let texts = out.strings().ok_or_else(|| usage(py, "the cast to STRING gave no strings"))?;
        PyList::new(py, texts.iter().map(|t| PyString::new(py, t)))
    })
}

/// Packs one code per byte (`src`, `n` elements) into the ONNX layout (`dst`).
#[pyfunction]
fn pack_codes(
    py: Python<'_>,
    src: PyReadonlyArray1<'_, u8>,
    mut dst: PyReadwriteArray1<'_, u8>,
    name: &str,
) -> PyResult<()> {
    guarded(py, || {
        let d = dtype(py, name)?;
        let (src, dst) = (slice(py, &src, "source")?, slice_mut(py, &mut dst, "destination")?);
        packing::pack_byte_codes(d, src, dst).or_raise(py)
    })
}

/// Unpacks the ONNX layout (`src`) into one code per byte (`dst`, one byte per element).
#[pyfunction]
fn unpack_codes(
    py: Python<'_>,
    src: PyReadonlyArray1<'_, u8>,
    mut dst: PyReadwriteArray1<'_, u8>,
    name: &str,
) -> PyResult<()> {
    guarded(py, || {
        let d = dtype(py, name)?;
        let (src, dst) = (slice(py, &src, "source")?, slice_mut(py, &mut dst, "destination")?);
        packing::unpack_byte_codes(d, src, dst).or_raise(py)
    })
}

// ------------------------------------------------------------------------------------------------
// Quantization
// ------------------------------------------------------------------------------------------------

/// A tensor handed over from Python: its bytes (ONNX layout or one code per byte), dtype name,
/// shape and layout.
type TensorArg<'py> = (PyReadonlyArray1<'py, u8>, String, Vec<usize>, bool);

fn tensor(py: Python<'_>, arg: &TensorArg<'_>, what: &str) -> PyResult<Tensor> {
    let (buf, name, shape, codes) = arg;
    let d = dtype(py, name)?;
    let buf = slice(py, buf, what)?;
    let n = Tensor::element_count(shape).or_raise(py)?;
    check_len(d, n, *codes, buf.len())
        .map_err(|e| Error::InvalidOp { op: what.to_string(), message: e.to_string() })
        .or_raise(py)?;
    let raw = to_raw(d, buf, *codes).or_raise(py)?.into_owned();
    Tensor::from_raw(d, shape.clone(), raw).or_raise(py)
}

/// A result tensor as Python gets it: ONNX name, shape, bytes.
type TensorOut<'py> = (&'static str, Vec<usize>, Bound<'py, PyArray1<u8>>);

/// A result tensor for Python: (ONNX name, shape, bytes), sub-byte types one code per byte
/// unless `packed`.
fn tensor_out<'py>(py: Python<'py>, t: &Tensor, packed: bool) -> PyResult<TensorOut<'py>> {
    let raw = t.raw().ok_or_else(|| usage(py, "a result without raw data"))?;
    let d = t.dtype();
    let bytes = if !packed && sub_byte(d) {
        let mut codes = vec![0u8; t.len()];
        packing::unpack_byte_codes(d, raw, &mut codes).or_raise(py)?;
        codes
    } else {
        raw.to_vec()
    };
    Ok((d.onnx_name(), t.shape().to_vec(), PyArray1::from_vec(py, bytes)))
}

/// The opsets used when none is given: the newest versions lowbit knows.
const NEWEST_QUANTIZE: i64 = lowbit::quant::QUANTIZE_LINEAR_VERSIONS[lowbit::quant::QUANTIZE_LINEAR_VERSIONS.len() - 1];
const NEWEST_DEQUANTIZE: i64 =
    lowbit::quant::DEQUANTIZE_LINEAR_VERSIONS[lowbit::quant::DEQUANTIZE_LINEAR_VERSIONS.len() - 1];

fn opt_dtype_number(py: Python<'_>, name: Option<&str>) -> PyResult<Option<i64>> {
    name.map(|n| dtype(py, n).map(|d| i64::from(d.onnx_number()))).transpose()
}

/// ONNX QuantizeLinear at `opset` under `profile`.
#[pyfunction]
#[pyo3(signature = (x, scale, zero_point, axis, saturate, block_size, output_dtype, precision, opset, profile, packed, zero_point_text=None))]
#[allow(clippy::too_many_arguments)]
fn quantize_linear<'py>(
    py: Python<'py>,
    x: TensorArg<'_>,
    scale: TensorArg<'_>,
    zero_point: Option<TensorArg<'_>>,
    axis: Option<i64>,
    saturate: Option<bool>,
    block_size: Option<Bound<'_, PyAny>>,
    output_dtype: Option<&str>,
    precision: Option<&str>,
    opset: Option<i64>,
    profile: &str,
    packed: bool,
    zero_point_text: Option<&str>,
) -> PyResult<TensorOut<'py>> {
    guarded(py, || {
        let opset = opset.unwrap_or(NEWEST_QUANTIZE);
        let op = format!("QuantizeLinear-{opset}");
        let (x, scale) = (tensor(py, &x, "x")?, tensor(py, &scale, "y_scale")?);
        // The checks of `lowbit quantize --scale --zero-point`, with the same messages.
        lowbit::arguments::check_scales(&scale, "y_scale", &op).or_raise(py)?;
        let zero_point = match zero_point_text {
            Some(text) => {
                let number_type = match output_dtype {
                    Some(name) => dtype(py, name)?,
                    None => DType::Uint8,
                };
                let z = lowbit::arguments::zero_point_from_text(text, number_type, scale.shape(), "y_zero_point", &op);
                Some(z.or_raise(py)?)
            }
            None => zero_point.as_ref().map(|z| tensor(py, z, "y_zero_point")).transpose()?,
        };
        let attrs = QuantizeAttributes {
            axis,
            saturate: saturate.map(i64::from),
            block_size: int_arg(py, block_size.as_ref(), "block_size")?,
            output_dtype: opt_dtype_number(py, output_dtype)?,
            precision: opt_dtype_number(py, precision)?,
        };
        let profile = Profile::parse(profile).or_raise(py)?;
        let out = py
            .detach(|| lowbit::quant::quantize_linear(&x, &scale, zero_point.as_ref(), &attrs, opset, profile))
            .or_raise(py)?;
        tensor_out(py, &out, packed)
    })
}

/// ONNX DequantizeLinear at `opset` under `profile`.
#[pyfunction]
#[pyo3(signature = (x, scale, zero_point, axis, block_size, output_dtype, opset, profile, zero_point_text=None))]
#[allow(clippy::too_many_arguments)]
fn dequantize_linear<'py>(
    py: Python<'py>,
    x: TensorArg<'_>,
    scale: TensorArg<'_>,
    zero_point: Option<TensorArg<'_>>,
    axis: Option<i64>,
    block_size: Option<Bound<'_, PyAny>>,
    output_dtype: Option<&str>,
    opset: Option<i64>,
    profile: &str,
    zero_point_text: Option<&str>,
) -> PyResult<TensorOut<'py>> {
    guarded(py, || {
        let opset = opset.unwrap_or(NEWEST_DEQUANTIZE);
        let op = format!("DequantizeLinear-{opset}");
        let (x, scale) = (tensor(py, &x, "x")?, tensor(py, &scale, "x_scale")?);
        lowbit::arguments::check_scales(&scale, "x_scale", &op).or_raise(py)?;
        let zero_point = match zero_point_text {
            Some(text) => Some(
                lowbit::arguments::zero_point_from_text(text, x.dtype(), scale.shape(), "x_zero_point", &op)
                    .or_raise(py)?,
            ),
            None => zero_point.as_ref().map(|z| tensor(py, z, "x_zero_point")).transpose()?,
        };
        let block_size = int_arg(py, block_size.as_ref(), "block_size")?;
        let attrs = DequantizeAttributes { axis, block_size, output_dtype: opt_dtype_number(py, output_dtype)? };
        let profile = Profile::parse(profile).or_raise(py)?;
        let out = py
            .detach(|| lowbit::quant::dequantize_linear(&x, &scale, zero_point.as_ref(), &attrs, opset, profile))
            .or_raise(py)?;
        tensor_out(py, &out, false)
    })
}

fn mx_options(
    py: Python<'_>,
    format: &str,
    block_size_: &Bound<'_, PyAny>,
    axis: i64,
    scale_round: &str,
) -> PyResult<MxOptions> {
    Ok(MxOptions {
        format: MxFormat::parse(format).or_raise(py)?,
        block_size: block_size(py, block_size_)?,
        axis,
        scale_round: ScaleRound::parse(scale_round).or_raise(py)?,
    })
}

/// The MX formats' names.
#[pyfunction]
fn mx_formats() -> Vec<&'static str> {
    MxFormat::ALL.iter().map(|f| f.name()).collect()
}

/// The element dtype (ONNX name) of an MX format.
#[pyfunction]
fn mx_element_dtype(py: Python<'_>, format: &str) -> PyResult<&'static str> {
    guarded(py, || Ok(MxFormat::parse(format).or_raise(py)?.element_dtype().onnx_name()))
}

/// The shape of the scales of a tensor of `shape` in blocks of `block_size` along `axis`.
#[pyfunction]
fn mx_scales_shape(
    py: Python<'_>,
    shape: Vec<usize>,
    axis: i64,
    block_size_: Bound<'_, PyAny>,
) -> PyResult<Vec<usize>> {
    guarded(py, || mx::scales_shape(&shape, axis, block_size(py, &block_size_)?).or_raise(py))
}

/// MX quantization of `x` (FLOAT, FLOAT16 or BFLOAT16 of `shape`) into `scales` (one E8M0 code per
/// block) and `elements` (ONNX layout, or one code per byte with `elements_codes`).
#[pyfunction]
#[pyo3(signature = (x, dtype_, shape, format, block_size, axis, scale_round, scales, elements, elements_codes))]
#[allow(clippy::too_many_arguments)]
fn mx_quantize_into(
    py: Python<'_>,
    x: PyReadonlyArray1<'_, u8>,
    dtype_: &str,
    shape: Vec<usize>,
    format: &str,
    block_size: Bound<'_, PyAny>,
    axis: i64,
    scale_round: &str,
    mut scales: PyReadwriteArray1<'_, u8>,
    mut elements: PyReadwriteArray1<'_, u8>,
    elements_codes: bool,
) -> PyResult<()> {
    guarded(py, || {
        let d = dtype(py, dtype_)?;
        let opts = mx_options(py, format, &block_size, axis, scale_round)?;
        let element_dtype = opts.format.element_dtype();
        let (x, scales, elements) =
            (slice(py, &x, "x")?, slice_mut(py, &mut scales, "scales")?, slice_mut(py, &mut elements, "elements")?);
        py.detach(|| -> lowbit::Result<()> {
            let n = Tensor::element_count(&shape)?;
            if elements_codes && sub_byte(element_dtype) {
                check_len(element_dtype, n, true, elements.len())?;
                let mut packed = vec![0u8; packing::raw_len(element_dtype, n)?];
                mx::quantize_into(d, &shape, x, &opts, scales, &mut packed)?;
                packing::unpack_byte_codes(element_dtype, &packed, elements)
            } else {
                mx::quantize_into(d, &shape, x, &opts, scales, elements)
            }
        })
        .or_raise(py)
    })
}

/// MX dequantization of `elements` (of `shape`) with `scales` into float32 `out`.
#[pyfunction]
#[pyo3(signature = (elements, shape, scales, format, block_size, axis, out, elements_codes))]
#[allow(clippy::too_many_arguments)]
fn mx_dequantize_into(
    py: Python<'_>,
    elements: PyReadonlyArray1<'_, u8>,
    shape: Vec<usize>,
    scales: PyReadonlyArray1<'_, u8>,
    format: &str,
    block_size: Bound<'_, PyAny>,
    axis: i64,
    mut out: PyReadwriteArray1<'_, u8>,
    elements_codes: bool,
) -> PyResult<()> {
    guarded(py, || {
        let opts = mx_options(py, format, &block_size, axis, "floor")?;
        let element_dtype = opts.format.element_dtype();
        let (elements, scales, out) =
            (slice(py, &elements, "elements")?, slice(py, &scales, "scales")?, slice_mut(py, &mut out, "out")?);
        py.detach(|| -> lowbit::Result<()> {
            let n = Tensor::element_count(&shape)?;
            check_len(element_dtype, n, elements_codes, elements.len())?;
            let raw = to_raw(element_dtype, elements, elements_codes)?;
            mx::dequantize_into(&shape, &raw, scales, &opts, out)
        })
        .or_raise(py)
    })
}

// ------------------------------------------------------------------------------------------------
// Verification
// ------------------------------------------------------------------------------------------------

/// The options of a verification call; `saturate` None takes the default `lowbit vectors`,
/// `check`, `sweep` and `diff` take ([`lowbit::arguments::default_saturate`]; a `to` that is a
/// width, `check`'s `which`, takes IEEE's 0).
fn verify_options(
    py: Python<'_>,
    round: &str,
    tininess: &str,
    saturate: Option<bool>,
    from: &str,
    to: &str,
) -> PyResult<lowbit::verify::VerifyOptions> {
    let saturate = saturate.unwrap_or_else(|| match (Format::parse(from), Format::parse(to)) {
        (Ok(from), Ok(to)) => lowbit::arguments::default_saturate(&from, &to),
        _ => false,
    });
    lowbit::verify::VerifyOptions::from_words(round, tininess, if saturate { "1" } else { "0" }).or_raise(py)
}

fn format(py: Python<'_>, text: &str) -> PyResult<Format> {
    Format::parse(text).or_raise(py)
}

/// Test vectors: a dict of arrays (`layout` None) or the text of a layout (`testfloat`, `csv`).
#[pyfunction]
#[pyo3(signature = (from_, to, round, tininess, saturate, level, count, seed, layout))]
#[allow(clippy::too_many_arguments)]
fn vectors<'py>(
    py: Python<'py>,
    from_: &str,
    to: &str,
    round: &str,
    tininess: &str,
    saturate: Option<bool>,
    level: &str,
    count: Option<u64>,
    seed: u64,
    layout: Option<&str>,
) -> PyResult<Bound<'py, PyAny>> {
    guarded(py, || {
        let options = verify_options(py, round, tininess, saturate, from_, to)?;
        let (from, to) = (format(py, from_)?, format(py, to)?);
        let level = Level::parse(level).or_raise(py)?;
        let v = Vectors::new(&from, &to, &options, level, count, seed).or_raise(py)?;
        if let Some(layout) = layout {
            let mut text = Vec::new();
            let written = py.detach(|| match layout {
                "testfloat" => Some(v.write_testfloat(&mut text)),
                "csv" => Some(v.write_csv(&mut text)),
                _ => None,
            });
            return match written {
                Some(Ok(())) => Ok(PyString::new(py, &String::from_utf8_lossy(&text)).into_any()),
                Some(Err(e)) => Err(usage(py, format!("writing the vectors: {e}"))),
                None => Err(usage(py, format!("layout must be None, \"testfloat\" or \"csv\", not {layout:?}"))),
            };
        }
        let len = usize::try_from(v.len()).map_err(|_| usage(py, "too many vectors for this machine"))?;
        let mut columns: [Vec<u64>; 3] = Default::default();
        let mut flags = Vec::new();
        for c in columns.iter_mut() {
            c.try_reserve_exact(len).map_err(|_| usage(py, format!("{len} vectors do not fit in memory")))?;
        }
        flags.try_reserve_exact(len).map_err(|_| usage(py, format!("{len} vectors do not fit in memory")))?;
        py.detach(|| {
            let converter = v.converter();
            for i in 0..v.len() {
                let case = v.case(&converter, i);
                columns[0].push(case.operand);
                columns[1].push(case.result);
                columns[2].push(case.random);
                flags.push(case.flags.bits());
            }
        });
        let dict = PyDict::new(py);
        let [operand, result, random] = columns;
        dict.set_item("operand", PyArray1::from_vec(py, operand))?;
        dict.set_item("result", PyArray1::from_vec(py, result))?;
        dict.set_item("flags", PyArray1::from_vec(py, flags))?;
        if v.has_random() {
            dict.set_item("random", PyArray1::from_vec(py, random))?;
        }
        dict.set_item("specials", v.specials().len())?;
        Ok(dict.into_any())
    })
}

/// Checks a dump (text, or the file at `path`) against the IEEE semantics, or ranks every
/// configuration of the results' width (`which`).
#[pyfunction]
#[pyo3(signature = (from_, to, text, path, arrays, round, tininess, saturate, check_nans, check_invalid_integers, no_flags, seed, which, allow_empty))]
#[allow(clippy::too_many_arguments)]
fn check<'py>(
    py: Python<'py>,
    from_: &str,
    to: &str,
    text: Option<&[u8]>,
    path: Option<std::path::PathBuf>,
    arrays: Option<DumpArrays<'_>>,
    round: &str,
    tininess: &str,
    saturate: Option<bool>,
    check_nans: bool,
    check_invalid_integers: bool,
    no_flags: bool,
    seed: u64,
    which: bool,
    allow_empty: bool,
) -> PyResult<Bound<'py, PyDict>> {
    guarded(py, || {
        let from = format(py, from_)?;
        let options = verify_options(py, round, tininess, saturate, from_, to)?;
        let check = CheckOptions { check_nans, check_invalid_integers, no_flags, seed };
        let text = match arrays {
            Some(arrays) if text.is_none() => Some(std::borrow::Cow::Owned(dump_text(py, &from, to, which, &arrays)?)),
            Some(_) => return Err(usage(py, "give the dump as text, as a path or as arrays, not several")),
            None => text.map(std::borrow::Cow::Borrowed),
        };
        let (input, name): (Box<dyn std::io::Read + Send + '_>, String) = match (text, path) {
            (Some(t), None) => (Box::new(std::io::Cursor::new(t)), "the dump".into()),
            (None, Some(p)) => {
                let file = std::fs::File::open(&p)
                    .map_err(|e| Error::Io { path: p.display().to_string(), message: e.to_string() })
                    .or_raise(py)?;
                (Box::new(std::io::BufReader::new(file)), p.display().to_string())
            }
            _ => return Err(usage(py, "give the dump as text, as a path or as arrays, not several")),
        };
        let dict = PyDict::new(py);
        if which {
            let width = match to.parse::<u32>() {
                Ok(bits) if (1..=64).contains(&bits) => bits,
                _ => format(py, to)?.width(),
            };
            let w = py.detach(|| lowbit::verify::check::which(input, &name, &from, width, &check)).or_raise(py)?;
            lowbit::arguments::nonempty_dump(&name, w.checked, w.skipped, allow_empty).or_raise(py)?;
            let ranking = PyList::empty(py);
            for r in &w.ranking {
                ranking.append((r.config.spelling(), r.config.to_string(), r.agree))?;
            }
            dict.set_item("checked", w.checked)?;
            dict.set_item("ranking", ranking)?;
            dict.set_item("report", w.report(10))?;
            return Ok(dict);
        }
        let to = format(py, to)?;
        let s = py
            .detach(|| lowbit::verify::check::check_stream(input, &name, &from, &to, &options, &check))
            .or_raise(py)?;
        lowbit::arguments::nonempty_dump(&name, s.checked, s.skipped, allow_empty).or_raise(py)?;
        let classes = PyDict::new(py);
        for (k, c) in Class::ALL.iter().enumerate() {
            if s.classes[k] > 0 {
                classes.set_item(c.describe(), s.classes[k])?;
            }
        }
        let (missing, extra) = (PyDict::new(py), PyDict::new(py));
        for (k, (_, flag)) in FLAG_NAMES.iter().enumerate() {
            missing.set_item(*flag, s.flags_missing[k])?;
            extra.set_item(*flag, s.flags_extra[k])?;
        }
        dict.set_item("checked", s.checked)?;
        dict.set_item("mismatches", s.mismatches)?;
        dict.set_item("classes", classes)?;
        dict.set_item("flags_missing", missing)?;
        dict.set_item("flags_extra", extra)?;
        dict.set_item("flags_compared", s.flags_compared)?;
        dict.set_item("shown", s.shown.clone())?;
        dict.set_item("operation", s.operation.clone())?;
        dict.set_item("report", s.report())?;
        Ok(dict)
    })
}

/// A dump as arrays: operands, results and (optionally) flags, one element per line.
type DumpArrays<'py> = (PyReadonlyArray1<'py, u64>, PyReadonlyArray1<'py, u64>, Option<PyReadonlyArray1<'py, u8>>);

/// The text of a dump given as arrays, in TestFloat's line layout (the crate's `push_line`).
fn dump_text(py: Python<'_>, from: &Format, to: &str, which: bool, arrays: &DumpArrays<'_>) -> PyResult<Vec<u8>> {
    use lowbit::verify::testfloat::{hex_digits, push_line};
    let (operands, results, flags) = arrays;
    let operands = operands.as_slice().map_err(|_| usage(py, "operands: not contiguous"))?;
    let results = results.as_slice().map_err(|_| usage(py, "results: not contiguous"))?;
    let flags = flags.as_ref().map(|f| f.as_slice().map_err(|_| usage(py, "flags: not contiguous"))).transpose()?;
    if results.len() != operands.len() || flags.is_some_and(|f| f.len() != operands.len()) {
        return Err(usage(
            py,
            format!(
                "the dump's arrays differ in length: {} operands, {} results{}",
                operands.len(),
                results.len(),
                flags.map_or(String::new(), |f| format!(", {} flags", f.len()))
            ),
        ));
    }
    let result_bits = match to.parse::<u32>() {
        Ok(bits) if which && (1..=64).contains(&bits) => bits,
        _ => format(py, to)?.width(),
    };
    let (a, b) = (hex_digits(from.width()), hex_digits(result_bits));
    let mut text = Vec::new();
    text.try_reserve(operands.len().saturating_mul(a + b + 5))
        .map_err(|_| usage(py, format!("{} lines do not fit in memory", operands.len())))?;
    for (i, (&operand, &result)) in operands.iter().zip(results).enumerate() {
        push_line(&mut text, operand, a, result, b, flags.map(|f| f[i]));
    }
    Ok(text)
}

/// Every pattern of a source of at most 32 bits through a configuration: digest and counts.
#[pyfunction]
#[pyo3(signature = (from_, to, round, tininess, saturate, config, threads_))]
#[allow(clippy::too_many_arguments)]
fn sweep_patterns<'py>(
    py: Python<'py>,
    from_: &str,
    to: &str,
    round: &str,
    tininess: &str,
    saturate: Option<bool>,
    config: Option<&str>,
    threads_: Option<Bound<'_, PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    guarded(py, || {
        let defaults = verify_options(py, round, tininess, saturate, from_, to)?;
        let (from, to) = (format(py, from_)?, format(py, to)?);
        let config = match config {
            Some(text) => Config::parse(text, defaults).or_raise(py)?,
            None => Config::ieee(defaults),
        };
        let threads = threads(py, threads_.as_ref())?;
        let r = py.detach(|| sweep::sweep(&from, &to, &config, threads, &|_| {})).or_raise(py)?;
        let dict = PyDict::new(py);
        dict.set_item("sha256", r.sha256_hex())?;
        dict.set_item("patterns", r.patterns)?;
        dict.set_item("config", r.config.spelling())?;
        let classes = PyDict::new(py);
        for (name, n) in &r.classes {
            classes.set_item(*name, *n)?;
        }
        dict.set_item("classes", classes)?;
        match &r.flags {
            Some((flags, exact)) => {
                let d = PyDict::new(py);
                for (name, n) in flags {
                    d.set_item(*name, *n)?;
                }
                dict.set_item("flags", d)?;
                dict.set_item("no_flag", *exact)?;
            }
            None => {
                dict.set_item("flags", py.None())?;
                dict.set_item("no_flag", py.None())?;
            }
        }
        dict.set_item("seconds", r.seconds)?;
        dict.set_item("report", r.report())?;
        Ok(dict)
    })
}

// ------------------------------------------------------------------------------------------------
// info
// ------------------------------------------------------------------------------------------------

fn set_code(dict: &Bound<'_, PyDict>, key: &str, code: Option<u64>) -> PyResult<()> {
    dict.set_item(key, code)
}

/// A float format's descriptor, extreme values and special codes into `dict`.
fn float_info(f: &FloatFormat, dict: &Bound<'_, PyDict>) -> PyResult<()> {
    // Formats without zero (E8M0) have no description.
    dict.set_item("description", f.subnormals.then(|| f.description()))?;
    dict.set_item("exponent_bits", f.exponent_bits)?;
    dict.set_item("mantissa_bits", f.mantissa_bits)?;
    dict.set_item("bias", f.bias)?;
    dict.set_item("signed", f.signed)?;
    dict.set_item("subnormals", f.subnormals && !f.flush_subnormals)?;
    dict.set_item("flush_subnormals", f.flush_subnormals)?;
    dict.set_item(
        "special",
        match f.non_finite {
            NonFinite::Ieee => "ieee",
            NonFinite::NanAtAllOnes => "fn",
            NonFinite::NanAtNegativeZero => "fnuz",
            NonFinite::None => "none",
        },
    )?;
    dict.set_item(
        "zero",
        match f.zero() {
            Zero::Signed => "signed",
            Zero::Unsigned => "unsigned",
            Zero::None => "none",
        },
    )?;
    dict.set_item("has_inf", f.infinity_code(false).is_some())?;
    dict.set_item("has_nan", f.nan_code(false).is_some())?;
    dict.set_item("nan_payload", f.nan_payload)?;
    dict.set_item("max", f.to_f64(f.max_code()))?;
    dict.set_item("lowest", f.to_f64(f.lowest_code()))?;
    dict.set_item("min_normal", f.to_f64(f.min_positive_normal_code()))?;
    let subnormal = f.subnormals && !f.flush_subnormals;
    dict.set_item("min_subnormal", subnormal.then(|| f.to_f64(f.min_positive_code())))?;
    let codes = PyDict::new(dict.py());
    set_code(&codes, "max", Some(f.max_code()))?;
    set_code(&codes, "lowest", Some(f.lowest_code()))?;
    set_code(&codes, "min_normal", Some(f.min_positive_normal_code()))?;
    set_code(&codes, "min_subnormal", subnormal.then(|| f.min_positive_code()))?;
    set_code(&codes, "zero", f.zero_code(false))?;
    set_code(&codes, "negative_zero", f.zero_code(true).filter(|&n| Some(n) != f.zero_code(false)))?;
    set_code(&codes, "inf", f.infinity_code(false))?;
    set_code(&codes, "negative_inf", f.infinity_code(true).filter(|_| f.signed))?;
    set_code(&codes, "nan", f.nan_code(false))?;
    set_code(&codes, "negative_nan", f.nan_code(true).filter(|&n| Some(n) != f.nan_code(false)))?;
    dict.set_item("codes", codes)
}

/// The descriptor of a dtype or a described format, as a dict.
#[pyfunction]
fn info<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyDict>> {
    guarded(py, || {
        let dict = PyDict::new(py);
        // An ONNX dtype of any kind by its name; else a format description.
        let parsed = if name.contains(',') { None } else { DType::parse(name).ok() };
        let float = match parsed {
            Some(d) => {
                dict.set_item("name", d.onnx_name())?;
                dict.set_item("onnx_number", d.onnx_number())?;
                dict.set_item("bits", d.bits())?;
                dict.set_item(
                    "packing",
                    match d.packing() {
                        Packing::Bytes(1) => "1 byte".into(),
                        Packing::Bytes(k) => format!("{k} bytes"),
                        Packing::Nibbles => "nibbles (2 per byte)".into(),
                        Packing::Crumbs => "crumbs (4 per byte)".into(),
                        Packing::Sextets => "sextets (4 per 3 bytes)".into(),
                        Packing::Strings => "strings".into(),
                        Packing::None => "none".into(),
                    },
                )?;
                let kind = match d.kind() {
                    Kind::Float(_) => "float",
                    Kind::Integer { .. } => "integer",
                    Kind::Bool => "bool",
                    Kind::String => "string",
                    Kind::Complex => "complex",
                    Kind::Undefined => "undefined",
                };
                dict.set_item("kind", kind)?;
                if let (Kind::Integer { signed, .. }, Some((low, high))) = (d.kind(), d.integer_range()) {
                    dict.set_item("signed", signed)?;
                    dict.set_item("min", low)?;
                    dict.set_item("max", high)?;
                }
                d.float_format().copied()
            }
            None => match format(py, name)? {
                Format::Described(f) => {
                    // A named format (float8_e3m4) by its name, any other by its description.
                    dict.set_item("name", f.to_string())?;
                    dict.set_item("onnx_number", py.None())?;
                    dict.set_item("bits", f.width())?;
                    dict.set_item("packing", py.None())?;
                    dict.set_item("kind", "described float")?;
                    Some(f)
                }
                Format::NamedInteger(i) => {
                    let (low, high) = i.range();
                    dict.set_item("name", i.name)?;
                    dict.set_item("onnx_number", py.None())?;
                    dict.set_item("bits", i.bits)?;
                    dict.set_item("packing", py.None())?;
                    dict.set_item("kind", "named integer")?;
                    dict.set_item("signed", i.signed)?;
                    dict.set_item("min", low)?;
                    dict.set_item("max", high)?;
                    None
                }
                Format::Onnx(d) => return Err(usage(py, format!("{d} is an ONNX dtype, not a description"))),
            },
        };
        if let Some(f) = float {
            float_info(&f, &dict)?;
        }
        Ok(dict)
    })
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(resolve_dtype, m)?)?;
    m.add_function(wrap_pyfunction!(buffer_size, m)?)?;
    m.add_function(wrap_pyfunction!(profiles, m)?)?;
    m.add_function(wrap_pyfunction!(dtype_names, m)?)?;
    m.add_function(wrap_pyfunction!(cast_into, m)?)?;
    m.add_function(wrap_pyfunction!(cast_described, m)?)?;
    m.add_function(wrap_pyfunction!(format_name, m)?)?;
    m.add_function(wrap_pyfunction!(cast_from_strings, m)?)?;
    m.add_function(wrap_pyfunction!(cast_to_strings, m)?)?;
    m.add_function(wrap_pyfunction!(pack_codes, m)?)?;
    m.add_function(wrap_pyfunction!(unpack_codes, m)?)?;
    m.add_function(wrap_pyfunction!(quantize_linear, m)?)?;
    m.add_function(wrap_pyfunction!(dequantize_linear, m)?)?;
    m.add_function(wrap_pyfunction!(mx_formats, m)?)?;
    m.add_function(wrap_pyfunction!(mx_element_dtype, m)?)?;
    m.add_function(wrap_pyfunction!(mx_scales_shape, m)?)?;
    m.add_function(wrap_pyfunction!(check_shape, m)?)?;
    m.add_function(wrap_pyfunction!(mx_quantize_into, m)?)?;
    m.add_function(wrap_pyfunction!(mx_dequantize_into, m)?)?;
    blocks::register(m)?;
    block_vectors::register(m)?;
    m.add_function(wrap_pyfunction!(vectors, m)?)?;
    m.add_function(wrap_pyfunction!(check, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_patterns, m)?)?;
    m.add_function(wrap_pyfunction!(info, m)?)?;
    m.add_function(wrap_pyfunction!(scalar::convert_scalar, m)?)?;
    checkpoint::register(m)?;
    checkpoint_tools::register(m)?;
    dot::register(m)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
