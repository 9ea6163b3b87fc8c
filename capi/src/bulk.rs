//! `lowbit_convert_n`: arrays. ONNX `Cast` (`onnx_cast`) runs the library's plans on the raw
//! bytes; the IEEE semantics (with flags) run `lowbit::verify`'s converter on every core, in
//! pieces, reading and writing codes through `lowbit::packing` for ONNX dtypes.

use crate::boundary::{not_null, status, Failure, Outcome, LOWBIT_ERR_BITS, LOWBIT_ERR_SIZE, LOWBIT_ERR_UNSUPPORTED};
use crate::conversion::{lowbit_options, Conversion, How};
use crate::handles;
use crate::lowbit_format;
use lowbit::verify::{seeded_random, Format};
use lowbit::{packing, CastOptions, Packing, Plan};
use rayon::prelude::*;
use std::ffi::c_void;

/// Elements per piece of a parallel run: a multiple of 4, so every piece starts on a whole byte
/// of every packed layout.
const PIECE: usize = 1 << 14;

/// Bytes per code of a described format: the smallest of 1, 2, 4, 8 that holds it.
fn code_bytes(width: u32) -> usize {
    match width {
        0..=8 => 1,
        9..=16 => 2,
        17..=32 => 4,
        _ => 8,
    }
}

/// Bytes of `n` codes of `format` in an array (see `lowbit_format_bytes`): ONNX types packed as
/// ONNX packs them, described formats and other libraries' named types (`int1`) one code per
/// `code_bytes` bytes.
pub(crate) fn byte_len(format: &Format, n: usize) -> Outcome<usize> {
    let too_large = || Failure::new(LOWBIT_ERR_SIZE, format!("{n} elements of {format} overflow a size_t"));
    match format {
        Format::Onnx(dtype) => packing::raw_len(*dtype, n).map_err(|_| too_large()),
        _ => n.checked_mul(code_bytes(format.width())).ok_or_else(too_large),
    }
}

/// Code `i` of an array.
#[inline]
fn get(format: &Format, raw: &[u8], i: usize) -> u64 {
    match format {
        Format::Onnx(dtype) => packing::get(*dtype, raw, i),
        _ => {
            let k = code_bytes(format.width());
            let mut bytes = [0u8; 8];
            bytes[..k].copy_from_slice(&raw[i * k..i * k + k]);
            u64::from_le_bytes(bytes)
        }
    }
}

/// Stores code `i` of an array.
#[inline]
fn set(format: &Format, raw: &mut [u8], i: usize, code: u64) {
    match format {
        Format::Onnx(dtype) => packing::set(*dtype, raw, i, code),
        _ => {
            let k = code_bytes(format.width());
            raw[i * k..i * k + k].copy_from_slice(&code.to_le_bytes()[..k]);
        }
    }
}

/// Converts `n` codes of `from` in `src` into `to` in `dst` (each in the layout of
/// `lowbit_format_bytes`), with `*opts`, on every core. `flags`, unless NULL, receives one flag
/// byte per element (all 0 under `onnx_cast`). With `LOWBIT_STOCHASTIC`, element `i` uses the
/// random word SplitMix64 gives for seed `random_bits` and index `i` (as `lowbit vectors --seed`).
///
/// `onnx_cast` runs lowbit's plans (tables and SIMD kernels derived from the rounding core); the
/// IEEE semantics run the core on each element. Returns `LOWBIT_OK`, or `LOWBIT_ERR_NULL`,
/// `LOWBIT_ERR_HANDLE`, `LOWBIT_ERR_OPTIONS`, `LOWBIT_ERR_SIZE`, `LOWBIT_ERR_UNSUPPORTED` (also:
/// `src` and `dst` overlap) or `LOWBIT_ERR_BITS` (a described code wider than its format); on
/// failure `dst` and `flags` are not written.
///
/// # Safety
/// Unless NULL: `src` points to `lowbit_format_bytes(from, n)` readable bytes, `dst` to
/// `lowbit_format_bytes(to, n)` writable bytes, `flags` to `n` writable bytes, `opts` to a readable
/// `lowbit_options`; none of the written ranges overlaps another range.
#[no_mangle]
pub unsafe extern "C" fn lowbit_convert_n(
    from: lowbit_format,
    to: lowbit_format,
    src: *const c_void,
    dst: *mut c_void,
    n: usize,
    opts: *const lowbit_options,
    flags: *mut u8,
) -> i32 {
    status(|| {
        not_null(opts, "opts")?;
        // SAFETY: not NULL (checked above); the caller passes a readable `lowbit_options`.
        let options = unsafe { opts.read() };
        let conversion = Conversion::resolve(from, to, &options)?;
        // The arrays' layouts are the handles' formats (flush only changes how codes are read).
        let (from_layout, to_layout) =
            (handles::resolve(from, "source")?.format, handles::resolve(to, "target")?.format);
        let (src_len, dst_len) = (byte_len(&from_layout, n)?, byte_len(&to_layout, n)?);
        if n == 0 {
            return Ok(());
        }
        not_null(src, "src")?;
        not_null(dst, "dst")?;
        let overlap =
            |a: usize, a_len: usize, b: usize, b_len: usize| a < b.saturating_add(b_len) && b < a.saturating_add(a_len);
        let (s, d, f) = (src as usize, dst as usize, flags as usize);
        if overlap(s, src_len, d, dst_len)
            || (!flags.is_null() && (overlap(f, n, d, dst_len) || overlap(f, n, s, src_len)))
        {
            return Err(Failure::new(LOWBIT_ERR_UNSUPPORTED, "src, dst and flags must not overlap"));
        }
        // SAFETY: not NULL (checked above); the caller passes `src_len` readable bytes, and no
        // written range overlaps them (checked above).
        let src = unsafe { std::slice::from_raw_parts(src.cast::<u8>(), src_len) };
        // SAFETY: not NULL; the caller passes `dst_len` writable bytes, apart from the others.
        let dst = unsafe { std::slice::from_raw_parts_mut(dst.cast::<u8>(), dst_len) };
        // SAFETY: not NULL when used; the caller passes `n` writable bytes, apart from the others.
        let flags = (!flags.is_null()).then(|| unsafe { std::slice::from_raw_parts_mut(flags, n) });
        match conversion.how {
            How::Onnx { from, to, options } => run_plan(from, to, &options, src, dst, n, flags),
            How::Ieee { converter, table, .. } => {
                check_codes(&from_layout, src, n)?;
                let random = options.random_bits;
                let stochastic = options.round == crate::LOWBIT_STOCHASTIC;
                let convert = |index: usize, code: u64| match table {
                    // float32 into 8 bits or fewer: the library's exact table.
                    Some(table) => table.lookup(code as u32),
                    None => converter.convert(code, if stochastic { seeded_random(random, index as u64) } else { 0 }),
                };
                run_pieces(&from_layout, &to_layout, src, dst, n, flags, convert)
            }
        }
    })
}

fn run_plan(
    from: lowbit::DType,
    to: lowbit::DType,
    options: &CastOptions,
    src: &[u8],
    dst: &mut [u8],
    n: usize,
    flags: Option<&mut [u8]>,
) -> Outcome<()> {
    let unsupported = |e: lowbit::Error| Failure::new(LOWBIT_ERR_UNSUPPORTED, e.to_string());
    let plan = Plan::new(from, to, options).map_err(unsupported)?;
    plan.run_parallel(src, dst, n, rayon::current_num_threads()).map_err(unsupported)?;
    if let Some(flags) = flags {
        flags.fill(0);
    }
    Ok(())
}

/// Refuses a described (or named) source array holding a code wider than its format.
fn check_codes(format: &Format, src: &[u8], n: usize) -> Outcome<()> {
    if matches!(format, Format::Onnx(_)) {
        return Ok(());
    }
    let mask = format.code_mask();
    if code_bytes(format.width()) * 8 == format.width() as usize {
        return Ok(());
    }
    match (0..n).find(|&i| get(format, src, i) & !mask != 0) {
        Some(i) => Err(Failure::new(
            LOWBIT_ERR_BITS,
            format!(
                "element {i}: code {:#x} has bits above the {} bits of {format}",
                get(format, src, i),
                format.width()
            ),
        )),
        None => Ok(()),
    }
}

fn run_pieces(
    from: &Format,
    to: &Format,
    src: &[u8],
    dst: &mut [u8],
    n: usize,
    flags: Option<&mut [u8]>,
    convert: impl Fn(usize, u64) -> (u64, lowbit::round::Status) + Sync,
) -> Outcome<()> {
    // Packed targets: `set` keeps the bits around an element, so the padding starts at zero.
    if matches!(to, Format::Onnx(d) if !matches!(d.packing(), Packing::Bytes(_))) {
        dst.fill(0);
    }
    let (src_piece, dst_piece) = (byte_len(from, PIECE)?, byte_len(to, PIECE)?);
    let run = |k: usize, dst: &mut [u8], mut flags: Option<&mut [u8]>| {
        let start = k * PIECE;
        let src = &src[k * src_piece..];
        for i in 0..PIECE.min(n - start) {
            let (code, status) = convert(start + i, get(from, src, i));
            set(to, dst, i, code);
            if let Some(f) = flags.as_deref_mut() {
                f[i] = status.bits();
            }
        }
    };
    match flags {
        Some(flags) => dst
            .par_chunks_mut(dst_piece)
            .zip(flags.par_chunks_mut(PIECE))
            .enumerate()
            .for_each(|(k, (d, f))| run(k, d, Some(f))),
        None => dst.par_chunks_mut(dst_piece).enumerate().for_each(|(k, d)| run(k, d, None)),
    }
    Ok(())
}
