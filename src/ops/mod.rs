//! ONNX `Range`, `Slice` and `Gather`, and OpenVINO's `Range` (versions 1 and 4), over every dtype
//! and under every profile (the `range.*` and `slice.*` rows of the profile
//! table, tables/profiles.md).
//!
//! These ops are shape logic over the element store of [`Tensor`]: none of them rounds or packs
//! anything itself. Range computes its values in the accumulate type the profile names and hands
//! each one to the Cast core ([`crate::convert::encode_element`]) exactly once; Slice and Gather
//! move elements as they are stored.
//!
//! | what | where |
//! |---|---|
//! | ONNX Range-11 and Range-27 (`stash_type`) | [`range::range`], [`range::range_with`] |
//! | OpenVINO Range-1 and Range-4 | [`range::range1`], [`range::range4`], [`range::openvino_range`] |
//! | ONNX Slice-1 (attributes), Slice-10/11/13 (inputs) | [`slice::slice`], [`slice::slice_lists`] |
//! | ONNX Gather-1/11/13 | [`gather::gather`] |
//!
//! ## Element types
//!
//! Slice and Gather take every dtype lowbit knows: the numeric types, bool, strings, complex64 and
//! complex128 (moved as raw bytes), the float8 family, and the packed sub-byte types int4, uint4,
//! float4e2m1, int2, uint2 and float6. **The sub-byte types (and float8) are an extension**: no
//! version of ONNX Slice or Gather lists them, and onnxruntime refuses such models at load; lowbit
//! moves their logical elements and repacks the output in the ONNX layout (element 2k in the low
//! nibble, zero padding), which is what the onnx reference evaluator does element by element.
//!
//! ## Copying
//!
//! A Slice or Gather output is a sequence of contiguous runs of the input. For byte-aligned dtypes
//! each run is one `copy_from_slice`. For the packed dtypes a run whose source and destination bit
//! offsets can reach a byte boundary together is copied as whole bytes in its middle and element by
//! element (through [`crate::packing`]) at its ends; a run whose offsets never line up (an odd
//! nibble into an even one) goes element by element, since every byte would need shifting anyway.

pub mod gather;
pub mod range;
pub mod slice;

pub use gather::{gather, GATHER_VERSIONS};
pub use range::{
    openvino_range, range, range1, range4, range_with, RangeOptions, DEFAULT_MAX_ELEMENTS, RANGE_VERSIONS,
};
pub use slice::{slice, slice_lists, SliceArgs, SLICE_VERSIONS};

use crate::alloc_prelude::*;
use crate::dtype::{DType, Kind, Packing};
use crate::error::{Error, Result};
use crate::packing;
use crate::tensor::{Data, Number, Tensor};
use crate::texts::Texts;

pub(crate) use crate::op_output::{zeroed, AllocationGuard, Unbudgeted};
pub(crate) use crate::opset::schema_version;

/// The values of an integer tensor (indices, starts, ends, axes, steps), widened to `i128` so that
/// uint64 and the index arithmetic after it cannot overflow.
pub(crate) fn integer_values(op: &str, what: &str, t: &Tensor) -> Result<Vec<i128>> {
    if !matches!(t.dtype().kind(), Kind::Integer { .. }) {
        return Err(Error::InvalidOp {
            op: op.into(),
            message: format!("{what} must be an integer tensor (int32 or int64), not {}", t.dtype()),
        });
    }
    let numbers = t.numbers().expect("integer tensors hold raw data");
    numbers
        .map(|n| match n? {
            Number::Int(v) => Ok(v),
            // An integer dtype decodes to integers; anything else is a bug upstream, reported
            // rather than trusted.
            other => Err(Error::InvalidOp { op: op.into(), message: format!("{what}: {other:?} is not an integer") }),
        })
        .collect()
}

/// Builds an output tensor from runs of an input's elements, in output order.
pub(crate) struct Runs<'a, 'g> {
    op: &'a str,
    dtype: DType,
    src: &'a Data,
    out: Data,
    written: usize,
    guard: &'g mut dyn AllocationGuard,
    /// Whether the guard was told the whole output's text at once ([`Runs::charge_text`]), so
    /// the runs are not told again.
    text_charged: bool,
}

impl<'a, 'g> Runs<'a, 'g> {
    /// An empty output for `len` elements of `src`'s dtype; the size was checked by the caller,
    /// the guard is told and the allocation is checked here. String contents are told to the
    /// guard run by run, before each is copied, unless [`Runs::charge_text`] told it the total.
    pub(crate) fn new(
        op: &'a str,
        src: &'a Tensor,
        len: usize,
        guard: &'g mut dyn AllocationGuard,
    ) -> Result<Runs<'a, 'g>> {
        let out = match src.data() {
            Data::Raw(_) => {
                let bytes = packing::raw_len(src.dtype(), len)?;
                guard.before_allocating(len, bytes)?;
                Data::Raw(zeroed(op, bytes)?)
            }
            Data::Strings(_) => {
                let index = usize::try_from(Texts::index_bytes(len)).unwrap_or(usize::MAX);
                guard.before_allocating(len, index)?;
                let mut texts = Texts::new();
                texts.try_reserve(len, 0).map_err(|_| Error::TooLarge {
                    what: format!("{op}: cannot allocate {len} strings for the output"),
                })?;
                Data::Strings(texts)
            }
        };
        Ok(Runs { op, dtype: src.dtype(), src: src.data(), out, written: 0, guard, text_charged: false })
    }

    /// Tells the guard the whole output's text, `bytes`, and reserves it, before any run is
    /// copied (an op that can repeat its input's strings, so that an output far over the budget
    /// is refused before anything is allocated). Nothing to do for numeric data.
    pub(crate) fn charge_text(&mut self, bytes: usize) -> Result<()> {
        let Data::Strings(out) = &mut self.out else { return Ok(()) };
        self.guard.before_allocating(0, bytes)?;
        out.try_reserve(0, bytes).map_err(|_| Error::TooLarge {
            what: format!("{}: cannot allocate {bytes} bytes of text for the output", self.op),
        })?;
        self.text_charged = true;
        Ok(())
    }

    /// The bytes of text of input elements `from..from + len` (0 for numeric data).
    pub(crate) fn text_len(&self, from: usize, len: usize) -> usize {
        match self.src {
            Data::Strings(src) => src.range_text_len(from..from + len),
            Data::Raw(_) => 0,
        }
    }

    /// Appends input elements `from..from + len`.
    pub(crate) fn copy(&mut self, from: usize, len: usize) -> Result<()> {
        match (self.src, &mut self.out) {
            (Data::Raw(src), Data::Raw(out)) => copy_raw(self.dtype, src, from, out, self.written, len),
            (Data::Strings(src), Data::Strings(out)) => {
                let run = from..from + len;
                if !self.text_charged {
                    self.guard.before_allocating(0, src.range_text_len(run.clone()))?;
                }
                out.extend_from_range(src, run);
            }
            // `new` made the output the same kind as the input.
            _ => unreachable!("output store matches the input store"),
        }
        self.written += len;
        Ok(())
    }

    pub(crate) fn finish(self, shape: Vec<usize>) -> Result<Tensor> {
        let op = self.op;
        let result = match self.out {
            Data::Raw(raw) => Tensor::from_raw(self.dtype, shape, raw),
            Data::Strings(s) => Tensor::from_strings(shape, s),
        };
        result.map_err(|e| Error::InvalidOp { op: op.into(), message: format!("output does not fit its shape: {e}") })
    }
}

/// Copies `len` elements from element `from` of `src` to element `to` of `out`.
fn copy_raw(dtype: DType, src: &[u8], from: usize, out: &mut [u8], to: usize, len: usize) {
    if let Packing::Bytes(k) = dtype.packing() {
        let k = k as usize;
        out[to * k..(to + len) * k].copy_from_slice(&src[from * k..(from + len) * k]);
        return;
    }
    // Packed dtypes: the bit offsets of source and destination move in step, so they reach a byte
    // boundary together exactly when they differ by whole bytes.
    let bits = dtype.bits().unwrap_or(8) as usize;
    let mut i = 0;
    if from.abs_diff(to) * bits % 8 == 0 {
        while i < len && (from + i) * bits % 8 != 0 {
            packing::set(dtype, out, to + i, packing::get(dtype, src, from + i));
            i += 1;
        }
        let bytes = (len - i) * bits / 8;
        let (s, d) = ((from + i) * bits / 8, (to + i) * bits / 8);
        out[d..d + bytes].copy_from_slice(&src[s..s + bytes]);
        // The last byte may hold only part of an element: that element is written whole below.
        i += bytes * 8 / bits;
    }
    for j in i..len {
        packing::set(dtype, out, to + j, packing::get(dtype, src, from + j));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packed_runs_match_element_copies() {
        for dtype in [DType::Int4, DType::Uint2, DType::Float6E3M2, DType::Int16] {
            let n = 37;
            let codes: Vec<u64> = (0..n as u64).map(|i| (i * 0x9E37 + 3) & dtype.code_mask()).collect();
            let src = packing::pack(dtype, &codes).unwrap();
            for from in 0..9 {
                for to in 0..9 {
                    for len in [0, 1, 2, 5, 13, 20] {
                        let mut out = packing::pack(dtype, &vec![0; to + len]).unwrap();
                        copy_raw(dtype, &src, from, &mut out, to, len);
                        let got = packing::unpack(dtype, &out, to + len).unwrap();
                        assert_eq!(&got[to..], &codes[from..from + len], "{dtype} {from}->{to} x{len}");
                        assert!(got[..to].iter().all(|&c| c == 0));
                    }
                }
            }
        }
    }

    #[test]
    fn versions_resolve() {
        assert_eq!(schema_version("Slice", &[1, 10, 11, 13], 12).unwrap(), 11);
        assert_eq!(schema_version("Slice", &[1, 10, 11, 13], 28).unwrap(), 13);
        assert!(schema_version("Range", &[11, 27], 10).is_err());
        assert!(schema_version("Range", &[11, 27], 29).is_err());
    }
}
