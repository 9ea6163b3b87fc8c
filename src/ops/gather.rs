//! ONNX `Gather` (versions 1, 11 and 13), over every dtype.
//!
//! `out[i_outer, j, i_inner] = data[i_outer, indices[j], i_inner]`, with the output shape
//! `shape[..axis] ++ indices.shape ++ shape[axis+1..]` (a scalar index removes the axis). Every
//! profile agrees here (the profile table has no Gather field): data of rank 0, an axis
//! outside `[-r, r-1]` and any index outside `[-s, s-1]` are errors, and every index is checked
//! before anything is copied, even when the output is empty (onnxruntime does the same; the
//! reference would return an empty output for an index it never reads, and `spec` takes
//! onnxruntime's stricter reading of Gather-11's "it is an error if any of the index values are
//! out of bounds").
//!
//! Negative index values count from the back in every version: Gather-1's text does not mention
//! them, and both onnxruntime and the reference accept them at opset 1.
//!
//! Extensions (documented, the same in every profile): every dtype (see [`crate::ops`]), and
//! indices of any integer dtype (ONNX allows int32 and int64).

use crate::alloc_prelude::*;
use crate::error::{Error, Result};
use crate::ops::{integer_values, schema_version, AllocationGuard, Runs, Unbudgeted};
use crate::profile::Profile;
use crate::tensor::{element_count, Tensor};

/// The versions of ONNX `Gather` (none after 13 up to opset 28).
pub const GATHER_VERSIONS: [i64; 3] = [1, 11, 13];

/// An ONNX `Gather` node at opset `opset` with attribute `axis` (ONNX's default is 0).
///
/// `profile` is taken for symmetry with the other ops; the profile table (tables/profiles.md) has
/// no Gather field: the profiles do not differ here.
pub fn gather(data: &Tensor, indices: &Tensor, axis: i64, opset: i64, profile: Profile) -> Result<Tensor> {
    let _ = profile;
    gather_guarded(data, indices, axis, opset, &mut Unbudgeted)
}

/// [`gather`], telling `guard` about the output before allocating it.
pub(crate) fn gather_guarded(
    data: &Tensor,
    indices: &Tensor,
    axis: i64,
    opset: i64,
    guard: &mut dyn AllocationGuard,
) -> Result<Tensor> {
    let version = schema_version("Gather", &GATHER_VERSIONS, opset)?;
    let op = format!("Gather-{version}");
    let shape = data.shape();
    let rank = shape.len();
    if rank == 0 {
        return Err(Error::InvalidOp { op, message: "data must have rank >= 1, but it is a scalar".into() });
    }
    let r = rank as i128;
    let given = i128::from(axis);
    let axis = if given < 0 { given + r } else { given };
    if !(0..r).contains(&axis) {
        return Err(Error::OutOfRange { op, what: "axis".into(), value: given, low: -r, high: r - 1 });
    }
    let axis = axis as usize;
    let values = integer_values(&op, "indices", indices)?;
    let s = shape[axis] as i128;
    let mut rows = Vec::with_capacity(values.len());
    for (flat, &v) in values.iter().enumerate() {
        if v < -s || v > s - 1 {
            let what = format!(
                "indices element {flat} (at {})",
                crate::error::shown_shape(&multi_index(flat, indices.shape()))
            );
            return Err(Error::OutOfRange { op, what, value: v, low: -s, high: s - 1 });
        }
        let row = if v < 0 { v + s } else { v };
        rows.push(row as usize);
    }
    let out_shape: Vec<usize> =
        shape[..axis].iter().chain(indices.shape()).chain(&shape[axis + 1..]).copied().collect();
    let out_len = element_count(&out_shape)?;
    let mut runs = Runs::new(&op, data, out_len, guard)?;
    if out_len > 0 {
        let inner: usize = shape[axis + 1..].iter().product();
        let outer: usize = shape[..axis].iter().product();
        let block = shape[axis] * inner;
        let starts = || (0..outer).flat_map(|o| rows.iter().map(move |&row| o * block + row * inner));
        // Gather repeats rows, so its text can be far larger than the input's: the total is
        // summed (one step per run, counted as output elements already) and told at once.
        if data.strings().is_some() {
            let mut text = 0usize;
            for start in starts() {
                text = text.checked_add(runs.text_len(start, inner)).ok_or_else(|| Error::TooLarge {
                    what: format!("{op}: the output's text is more than {} bytes", usize::MAX),
                })?;
            }
            runs.charge_text(text)?;
        }
        for start in starts() {
            runs.copy(start, inner)?;
        }
    }
    runs.finish(out_shape)
}

/// The row-major multi-index of element `flat` of a tensor of `shape`.
fn multi_index(flat: usize, shape: &[usize]) -> Vec<usize> {
    let mut rest = flat;
    let mut index = vec![0; shape.len()];
    for (slot, &d) in index.iter_mut().zip(shape).rev() {
        // A dimension of 0 holds no element, so `flat` never reaches here through one.
        *slot = rest % d.max(1);
        rest /= d.max(1);
    }
    index
}
