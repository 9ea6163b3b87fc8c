//! Block-scaled schemes over a scheme name (`"ocp:mxfp4"`, `"modelopt:nvfp4"`, `"ggml:q4_0"`,
//! ...; `lowbit schemes` lists them): float32 in, the scheme's storage layout out (the bytes
//! `lowbit.blocks.Quantized.to_bytes()` gives), and back. The arithmetic is
//! `lowbit::quant::blocks`'; this file only checks the arguments and copies.

use crate::boundary::{
    status, text_argument, Failure, Outcome, LOWBIT_ERR_DATA, LOWBIT_ERR_FORMAT, LOWBIT_ERR_NULL, LOWBIT_ERR_SIZE,
};
use lowbit::quant::blocks::{self, Scheme};
use std::ffi::c_char;

fn scheme_argument(scheme: *const c_char) -> Outcome<Scheme> {
    // SAFETY: the entry points pass the caller's pointer, NULL or a NUL-terminated string.
    let name = unsafe { text_argument(scheme, "scheme") }?;
    Scheme::parse(name).map_err(|e| Failure::new(LOWBIT_ERR_FORMAT, e.to_string()))
}

/// The shape as a vector and its element count, refused when the count overflows.
fn shape_argument(shape: *const usize, ndim: usize) -> Outcome<(Vec<usize>, usize)> {
    if ndim == 0 {
        return Err(Failure::new(LOWBIT_ERR_DATA, "a block-scaled tensor has at least one axis (ndim is 0)"));
    }
    if shape.is_null() {
        return Err(Failure::new(LOWBIT_ERR_NULL, "shape is NULL"));
    }
    if ndim > 64 {
        return Err(Failure::new(LOWBIT_ERR_DATA, format!("ndim is {ndim}; at most 64 axes are taken")));
    }
    // SAFETY: not NULL (checked above); the caller passes `ndim` readable sizes (at most 64).
    let dims = unsafe { std::slice::from_raw_parts(shape, ndim) }.to_vec();
    let count = dims
        .iter()
        .try_fold(1usize, |n, &d| n.checked_mul(d))
        .filter(|n| n.checked_mul(4).is_some())
        .ok_or_else(|| Failure::new(LOWBIT_ERR_SIZE, format!("shape {dims:?}: the element count overflows")))?;
    Ok((dims, count))
}

fn data_error(e: lowbit::Error) -> Failure {
    Failure::new(LOWBIT_ERR_DATA, e.to_string())
}

/// Quantizes the float32 tensor `x` of `shape` (`ndim` sizes, row-major) under `scheme`, in blocks
/// along `axis` (negative counts from the end; tiles: the last two axes), and writes its storage
/// layout into `out`. `global_scale`, unless NULL, is the per-tensor scale of the two-level
/// recipes that take one from the caller (as `lowbit.blocks.quantize(..., global_scale=)`).
///
/// `*written` receives the layout's byte count. When `capacity` is smaller (call with
/// `out` NULL and `capacity` 0 to learn it), nothing is written to `out` and the status is
/// `LOWBIT_ERR_SIZE`. Returns `LOWBIT_OK`, or `LOWBIT_ERR_NULL`, `LOWBIT_ERR_FORMAT` (an unknown
/// scheme or option, not UTF-8), `LOWBIT_ERR_SIZE` or `LOWBIT_ERR_DATA` (a shape the scheme
/// cannot block, an input its implementation refuses); `out` is written only on success.
///
/// # Safety
/// `scheme` is NULL or NUL-terminated; `shape` points to `ndim` sizes; `x` to the product of
/// them in float32; `global_scale` is NULL or readable; `out` is NULL or points to `capacity`
/// writable bytes not overlapping `x`; `written` points to a writable `size_t`.
#[no_mangle]
pub unsafe extern "C" fn lowbit_blocks_quantize(
    scheme: *const c_char,
    x: *const f32,
    shape: *const usize,
    ndim: usize,
    axis: i64,
    global_scale: *const f32,
    out: *mut u8,
    capacity: usize,
    written: *mut usize,
) -> i32 {
    status(|| {
        if written.is_null() {
            return Err(Failure::new(LOWBIT_ERR_NULL, "written is NULL"));
        }
        let scheme = scheme_argument(scheme)?;
        let (dims, count) = shape_argument(shape, ndim)?;
        if x.is_null() && count > 0 {
            return Err(Failure::new(LOWBIT_ERR_NULL, "x is NULL"));
        }
        let values: &[f32] = if count == 0 {
            &[]
        } else {
            // SAFETY: not NULL (checked above); the caller passes `count` readable float32 values
            // (count * 4 does not overflow: checked by `shape_argument`).
            unsafe { std::slice::from_raw_parts(x, count) }
        };
        // SAFETY: NULL or readable, as the caller promises.
        let global = (!global_scale.is_null()).then(|| unsafe { global_scale.read() });
        lowbit::quant::check_blocks_input(&dims, &scheme).map_err(data_error)?;
        let q = blocks::quantize(values, &dims, &scheme, axis, global).map_err(data_error)?;
        let bytes = q.to_bytes().map_err(data_error)?;
        // SAFETY: not NULL (checked above); the caller passes a writable `size_t`.
        unsafe { written.write(bytes.len()) };
        if capacity < bytes.len() {
            return Err(Failure::new(
                LOWBIT_ERR_SIZE,
                format!("the layout takes {} bytes; capacity is {capacity}", bytes.len()),
            ));
        }
        if out.is_null() {
            return Err(Failure::new(LOWBIT_ERR_NULL, "out is NULL"));
        }
        // SAFETY: not NULL (checked above); the caller passes `capacity` >= len writable bytes
        // apart from `x`.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), out, bytes.len()) };
        Ok(())
    })
}

/// Dequantizes `len` bytes of `scheme`'s storage layout holding a tensor of `shape` (blocked along
/// `axis`) into `out`, float32 as the scheme's implementation dequantizes them. Returns
/// `LOWBIT_OK`, or `LOWBIT_ERR_NULL`, `LOWBIT_ERR_FORMAT`, `LOWBIT_ERR_SIZE` or `LOWBIT_ERR_DATA`
/// (`len` is not the layout's size for that shape, a byte no element of the format);
/// `out` is written only on success.
///
/// # Safety
/// `scheme` is NULL or NUL-terminated; `shape` points to `ndim` sizes; `data` to `len` readable
/// bytes; `out` to the product of the sizes in writable float32 values, apart from `data`.
#[no_mangle]
pub unsafe extern "C" fn lowbit_blocks_dequantize(
    scheme: *const c_char,
    data: *const u8,
    len: usize,
    shape: *const usize,
    ndim: usize,
    axis: i64,
    out: *mut f32,
) -> i32 {
    status(|| {
        let scheme = scheme_argument(scheme)?;
        let (dims, count) = shape_argument(shape, ndim)?;
        if data.is_null() && len > 0 {
            return Err(Failure::new(LOWBIT_ERR_NULL, "data is NULL"));
        }
        if out.is_null() && count > 0 {
            return Err(Failure::new(LOWBIT_ERR_NULL, "out is NULL"));
        }
        let bytes: &[u8] = if len == 0 {
            &[]
        } else {
            // SAFETY: not NULL (checked above); the caller passes `len` readable bytes.
            unsafe { std::slice::from_raw_parts(data, len) }
        };
        let q = blocks::from_bytes(bytes, &scheme, &dims, axis).map_err(data_error)?;
        let values = q.dequantize().map_err(data_error)?;
        if values.len() != count {
            return Err(Failure::new(LOWBIT_ERR_DATA, format!("{} values decoded for {count} elements", values.len())));
        }
        if count > 0 {
            // SAFETY: not NULL (checked above); the caller passes `count` writable float32
            // values apart from `data`.
            unsafe { std::ptr::copy_nonoverlapping(values.as_ptr(), out, count) };
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::boundary::{LOWBIT_ERR_SIZE, LOWBIT_OK};

    fn name(text: &str) -> std::ffi::CString {
        std::ffi::CString::new(text).unwrap()
    }

    #[test]
    fn bad_arguments_are_refused_before_anything_is_read() {
        let scheme = name("ggml:q8_0");
        let x = [0.0f32; 32];
        let mut out = [0u8; 40];
        let mut written = 7usize;
        // SAFETY (all calls): the pointers are NULL or point to the arrays above, with the sizes passed.
        let call = |shape: &[usize], ndim: usize, written: *mut usize, out: *mut u8| unsafe {
            lowbit_blocks_quantize(
                scheme.as_ptr(),
                x.as_ptr(),
                shape.as_ptr(),
                ndim,
                -1,
                std::ptr::null(),
                out,
                40,
                written,
            )
        };
        assert_eq!(call(&[32], 1, std::ptr::null_mut(), out.as_mut_ptr()), LOWBIT_ERR_NULL);
        assert_eq!(call(&[32], 0, &mut written, out.as_mut_ptr()), LOWBIT_ERR_DATA);
        // An element count that overflows is refused before `x` is read.
        assert_eq!(call(&[usize::MAX / 2, 4], 2, &mut written, out.as_mut_ptr()), LOWBIT_ERR_SIZE);
        // A shape that is not whole blocks of Q8_0's 32 (ggml's rows are whole blocks).
        assert_eq!(call(&[31], 1, &mut written, out.as_mut_ptr()), LOWBIT_ERR_DATA);
        assert_eq!(call(&[32], 1, &mut written, std::ptr::null_mut()), LOWBIT_ERR_NULL);
        assert_eq!(call(&[32], 1, &mut written, out.as_mut_ptr()), LOWBIT_OK);
        assert_eq!(written, 34);
    }

    #[test]
    fn a_failed_dequantize_leaves_the_output_untouched() {
        let scheme = name("ocp:mxfp4");
        let data = [0x07u8; 16];
        let mut out = [1.5f32; 32];
        // SAFETY: `data` holds 16 bytes, `out` 32 float32 values.
        let code = unsafe {
            lowbit_blocks_dequantize(scheme.as_ptr(), data.as_ptr(), 16, [32usize].as_ptr(), 1, -1, out.as_mut_ptr())
        };
        assert_eq!(code, LOWBIT_ERR_DATA, "16 bytes is not MXFP4's 17 for 32 elements");
        assert!(out.iter().all(|&v| v == 1.5));
    }
}
