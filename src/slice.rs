//! Bulk conversions on slices, in the style of `half`'s `HalfFloatSliceExt`: sealed extension
//! traits on `[F8E4M3FN]`, `[F8E5M2]`, ..., `[I4]`, `[U2]` ([`ScalarSliceExt`]: to and from
//! `f32`, `f64`, `f16` and `bf16` slices; [`NarrowFloatSliceExt`]: the narrow float types and
//! `f32`) and packing helpers for the sub-byte types (more in [`crate::bulk`]). Unlike `half`, a
//! length mismatch is an `Err`, not a panic.
//!
//! Every conversion runs the same [`Plan`] as [`crate::cast::cast`], so the results are `Cast`'s.

use crate::alloc_prelude::*;
use crate::convert::CastOptions;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::kernels::decode::DecodeTable;
use crate::packing;
use crate::plan::Plan;
use crate::scalar::{F4E2M1, F6E2M3, F6E3M2, F8E4M3FN, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ, F8E8M0, I2, I4, U2, U4};

mod private {
    pub trait Sealed {}
}

fn same_length(what: &str, dst: usize, src: usize) -> Result<()> {
    if dst == src {
        Ok(())
    } else {
        Err(Error::InvalidOp { op: what.into(), message: format!("destination has {dst} elements, source {src}") })
    }
}

/// Conversions between slices of a narrow float type and `f32`/`f16`/`f64` slices.
pub trait NarrowFloatSliceExt: private::Sealed {
    /// Fills `self` from `src` with ONNX `Cast` defaults (saturate=1, `round_mode` up, `spec`).
    fn convert_from_f32_slice(&mut self, src: &[f32]) -> Result<()>;
    /// Fills `self` from `src` with the given attributes and profile.
    fn convert_from_f32_slice_with(&mut self, src: &[f32], opts: &CastOptions) -> Result<()>;
    /// Fills `self` from float16 values (exact in float32, so rounded once).
    fn convert_from_f16_slice(&mut self, src: &[half::f16], opts: &CastOptions) -> Result<()>;
    /// Fills `self` from `f64` values, rounded once under `spec` (the profile decides otherwise).
    fn convert_from_f64_slice(&mut self, src: &[f64], opts: &CastOptions) -> Result<()>;
    /// Writes every element's exact value into `dst`.
    fn convert_to_f32_slice(&self, dst: &mut [f32]) -> Result<()>;
    /// Every element's exact value.
    #[must_use]
    fn to_f32_vec(&self) -> Vec<f32>;
}

macro_rules! narrow_slice {
    ($($t:ty),*) => {$(
        impl private::Sealed for [$t] {}

        // `#[inline]`: codegen happens in the crate that calls a method, so a user of the scalar
        // types alone does not compile the 24 slice paths.
        impl NarrowFloatSliceExt for [$t] {
            #[inline]
            fn convert_from_f32_slice(&mut self, src: &[f32]) -> Result<()> {
                self.convert_from_f32_slice_with(src, &CastOptions::default())
            }

            #[inline]
            fn convert_from_f32_slice_with(&mut self, src: &[f32], opts: &CastOptions) -> Result<()> {
                same_length("convert_from_f32_slice", self.len(), src.len())?;
                // The plan's vectorised kernels, a chunk at a time.
                let plan = Plan::new(DType::Float, <$t>::DTYPE, opts)?;
                convert_typed(&plan, src, self)
            }

            #[inline]
            fn convert_from_f16_slice(&mut self, src: &[half::f16], opts: &CastOptions) -> Result<()> {
                same_length("convert_from_f16_slice", self.len(), src.len())?;
                // Through the FLOAT16 plan, so that the profile's rules for that source apply.
                let plan = Plan::new(DType::Float16, <$t>::DTYPE, opts)?;
                convert_typed(&plan, src, self)
            }

            #[inline]
            fn convert_from_f64_slice(&mut self, src: &[f64], opts: &CastOptions) -> Result<()> {
                same_length("convert_from_f64_slice", self.len(), src.len())?;
                let plan = Plan::new(DType::Double, <$t>::DTYPE, opts)?;
                convert_typed(&plan, src, self)
            }

            #[inline]
            fn convert_to_f32_slice(&self, dst: &mut [f32]) -> Result<()> {
                same_length("convert_to_f32_slice", dst.len(), self.len())?;
                let table = DecodeTable::of(<$t>::FORMAT).expect("narrow formats have a decode table");
                for (d, s) in dst.iter_mut().zip(self) {
                    *d = table.decode(s.to_bits());
                }
                Ok(())
            }

            #[inline]
            fn to_f32_vec(&self) -> Vec<f32> {
                let table = DecodeTable::of(<$t>::FORMAT).expect("narrow formats have a decode table");
                self.iter().map(|x| table.decode(x.to_bits())).collect()
            }
        }

    )*};
}

mod code_slot {
    use crate::dtype::DType;

    /// A scalar stored one per element whose code is its dtype's code (the narrow float types,
    /// the small integers, `i8` and `u8`). Public in a private module, so that sealed public traits
    /// can build on it without naming it to users.
    pub trait CodeSlot: Copy {
        const DTYPE: DType;
        fn set_code(&mut self, code: u64);
        fn code(self) -> u16;
    }
}

pub(crate) use code_slot::CodeSlot;

/// Runs `plan` from a typed source slice of wide floats into a typed destination slice of the
/// plan's target (unpacked: one code per element), piece by piece: straight from the source's
/// memory where that is its little-endian bytes, else through their bytes written a piece at a
/// time.
fn convert_typed<S: wide_sealed::Sealed, T: CodeSlot>(plan: &Plan, src: &[S], dst: &mut [T]) -> Result<()> {
    convert_typed_from(plan, src, S::as_le_bytes(src), dst)
}

/// [`convert_typed`] with the source's little-endian bytes given (`None` on a big-endian target:
/// the copy branch, which the tests also force on little-endian machines).
fn convert_typed_from<S: wide_sealed::Sealed, T: CodeSlot>(
    plan: &Plan,
    src: &[S],
    le_bytes: Option<&[u8]>,
    dst: &mut [T],
) -> Result<()> {
    let mut codes = CodeStage::new(T::DTYPE);
    let write = |start: usize, len: usize, bytes: &[u8]| {
        codes.unpack(bytes, &mut dst[start..start + len]);
        Ok(())
    };
    match le_bytes {
        Some(bytes) => plan.run_pieces_from(bytes, src.len(), write),
        None => plan.run_pieces(
            src.len(),
            |start, len, bytes| {
                S::write_all_le(&src[start..start + len], bytes);
                Ok(())
            },
            write,
        ),
    }
}

/// Runs `plan` from a typed slice of the plan's source (one code per element) into a typed
/// destination slice (each element read from its raw bytes by `get`), piece by piece.
fn convert_codes_out<T: CodeSlot, D>(
    plan: &Plan,
    src: &[T],
    dst: &mut [D],
    get: impl Fn(&[u8], &mut [D]),
) -> Result<()> {
    let mut codes = CodeStage::new(T::DTYPE);
    plan.run_pieces(
        src.len(),
        |start, len, bytes| {
            codes.pack(&src[start..start + len], bytes);
            Ok(())
        },
        |start, len, bytes| {
            get(bytes, &mut dst[start..start + len]);
            Ok(())
        },
    )
}

/// Moves codes between one-per-element slices and a dtype's raw bytes, a piece (at most
/// [`crate::kernels::LANE_CHUNK`] elements) at a time: byte-wide dtypes directly, packed ones through a
/// staging buffer of one piece's codes.
pub(crate) struct CodeStage {
    dtype: DType,
    codes: Vec<u16>,
}

impl CodeStage {
    pub(crate) fn new(dtype: DType) -> CodeStage {
        let byte_wide = dtype.packing() == crate::dtype::Packing::Bytes(1);
        CodeStage { dtype, codes: if byte_wide { Vec::new() } else { vec![0; crate::kernels::LANE_CHUNK] } }
    }

    /// `raw` (the raw data of `out.len()` elements, from a group boundary) into `out`.
    pub(crate) fn unpack<T: CodeSlot>(&mut self, raw: &[u8], out: &mut [T]) {
        if self.codes.is_empty() {
            for (d, &b) in out.iter_mut().zip(raw) {
                d.set_code(b.into());
            }
            return;
        }
        for (out, raw) in out
            .chunks_mut(self.codes.len())
            .zip(raw.chunks(packing::raw_len(self.dtype, self.codes.len()).expect("a piece fits")))
        {
            let codes = &mut self.codes[..out.len()];
            packing::unpack_u16(self.dtype, raw, codes);
            for (d, &c) in out.iter_mut().zip(codes.iter()) {
                d.set_code(c.into());
            }
        }
    }

    /// `src`'s codes into `raw` (exactly the raw data of `src.len()` elements).
    pub(crate) fn pack<T: CodeSlot>(&mut self, src: &[T], raw: &mut [u8]) {
        if self.codes.is_empty() {
            for (b, &x) in raw.iter_mut().zip(src) {
                *b = x.code() as u8;
            }
            return;
        }
        let piece_bytes = packing::raw_len(self.dtype, self.codes.len()).expect("a piece fits");
        for (src, raw) in src.chunks(self.codes.len()).zip(raw.chunks_mut(piece_bytes)) {
            let codes = &mut self.codes[..src.len()];
            for (c, &x) in codes.iter_mut().zip(src) {
                *c = x.code();
            }
            packing::pack_u16(self.dtype, codes, raw);
        }
    }
}

narrow_slice!(F8E4M3FN, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ, F8E8M0, F6E2M3, F6E3M2, F4E2M1);

macro_rules! code_slot {
    ($($t:ty),*) => {$(
        impl CodeSlot for $t {
            const DTYPE: DType = <$t>::DTYPE;
            #[inline(always)]
            fn set_code(&mut self, code: u64) {
                *self = <$t>::from_bits(code as u8);
            }
            #[inline(always)]
            fn code(self) -> u16 {
                self.to_bits().into()
            }
        }
    )*};
}

code_slot!(F8E4M3FN, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ, F8E8M0, F6E2M3, F6E3M2, F4E2M1, I4, U4, I2, U2);

impl CodeSlot for i8 {
    const DTYPE: DType = DType::Int8;
    #[inline(always)]
    fn set_code(&mut self, code: u64) {
        *self = code as u8 as i8;
    }
    #[inline(always)]
    fn code(self) -> u16 {
        u16::from(self as u8)
    }
}

impl CodeSlot for u8 {
    const DTYPE: DType = DType::Uint8;
    #[inline(always)]
    fn set_code(&mut self, code: u64) {
        *self = code as u8;
    }
    #[inline(always)]
    fn code(self) -> u16 {
        u16::from(self)
    }
}

pub(crate) mod wide_sealed {
    /// What the bulk conversions need of a wide float element: its raw bytes, and the exact
    /// comparisons of saturating packing. Private, so [`super::WideFloat`] is sealed.
    pub trait Sealed: Copy {
        /// Bytes per element.
        const BYTES: usize;
        /// Writes the elements' little-endian bytes (`out` has [`Self::BYTES`] per element).
        fn write_all_le(src: &[Self], out: &mut [u8]);
        /// Reads elements from their little-endian bytes (`bytes` has [`Self::BYTES`] per element).
        fn read_all_le(bytes: &[u8], out: &mut [Self]);
        /// The elements' memory as their little-endian bytes, where it is (little-endian targets).
        fn as_le_bytes(src: &[Self]) -> Option<&[u8]>;
        /// Zero.
        fn zero() -> Self;
        /// The element clamped to the integers `low..=high` (exact in every wide type), NaN to
        /// zero; values in range are returned as they are (rounding is the plan's).
        fn clamp_to_integers(self, low: i8, high: i8) -> Self;
    }
}

/// A wide float element type the bulk conversions read and write: `f32`, `f64`, [`half::f16`] and
/// [`half::bf16`] (sealed). Conversions from them run a plan from their ONNX dtype, so each value is
/// rounded once to the target.
///
/// ```
/// use lowbit::WideFloat;
/// assert_eq!(<half::bf16 as WideFloat>::DTYPE, lowbit::DType::Bfloat16);
/// ```
pub trait WideFloat: wide_sealed::Sealed {
    /// The element's ONNX dtype: FLOAT, DOUBLE, FLOAT16 or BFLOAT16.
    const DTYPE: DType;
}

macro_rules! wide_float {
    ($t:ty, $dtype:expr, $bytes:expr, $to_f64:expr, $from_i8:expr, $to_le:expr, $from_le:expr) => {
        impl wide_sealed::Sealed for $t {
            const BYTES: usize = $bytes;
            // Loops on the literal width, so that each element is one store or load.
            #[inline(always)]
            fn write_all_le(src: &[Self], out: &mut [u8]) {
                for (b, &x) in out.chunks_exact_mut($bytes).zip(src) {
                    let b: &mut [u8; $bytes] = b.try_into().expect("chunks of the width");
                    *b = $to_le(x);
                }
            }
            #[inline(always)]
            fn read_all_le(bytes: &[u8], out: &mut [Self]) {
                for (x, b) in out.iter_mut().zip(bytes.chunks_exact($bytes)) {
                    *x = $from_le(b.try_into().expect("chunks of the width"));
                }
            }
            #[inline(always)]
            fn as_le_bytes(src: &[Self]) -> Option<&[u8]> {
                cfg!(target_endian = "little").then(|| zerocopy::IntoBytes::as_bytes(src))
            }
            fn zero() -> Self {
                $from_i8(0i8)
            }
            #[inline(always)]
            fn clamp_to_integers(self, low: i8, high: i8) -> Self {
                let x: f64 = $to_f64(self);
                if x.is_nan() {
                    $from_i8(0i8)
                } else if x < f64::from(low) {
                    $from_i8(low)
                } else if x > f64::from(high) {
                    $from_i8(high)
                } else {
                    self
                }
            }
        }

        impl WideFloat for $t {
            const DTYPE: DType = $dtype;
        }
    };
}

wide_float!(f32, DType::Float, 4, f64::from, f32::from, f32::to_le_bytes, f32::from_le_bytes);
wide_float!(f64, DType::Double, 8, |x| x, f64::from, f64::to_le_bytes, f64::from_le_bytes);
wide_float!(
    half::f16,
    DType::Float16,
    2,
    half::f16::to_f64,
    |i: i8| half::f16::from_f32(f32::from(i)),
    |x: half::f16| x.to_bits().to_le_bytes(),
    |b: [u8; 2]| half::f16::from_bits(u16::from_le_bytes(b))
);
wide_float!(
    half::bf16,
    DType::Bfloat16,
    2,
    half::bf16::to_f64,
    |i: i8| half::bf16::from_f32(f32::from(i)),
    |x: half::bf16| x.to_bits().to_le_bytes(),
    |b: [u8; 2]| half::bf16::from_bits(u16::from_le_bytes(b))
);

mod scalar_sealed {
    pub trait Sealed {}
}

/// Conversions between slices of any scalar type (the eight narrow float types, and `I4`, `U4`,
/// `I2`, `U2` one per element) and slices of `f32`, `f64`, [`half::f16`] or [`half::bf16`], in
/// both directions, with ONNX `Cast`'s results: each call runs one [`Plan`] between the wide
/// type's dtype (FLOAT, DOUBLE, FLOAT16, BFLOAT16) and the scalar's, over the whole slice, a
/// chunk at a time (no per-element dispatch). A length mismatch is an `Err`.
///
/// ```
/// use half::{bf16, f16};
/// use lowbit::ScalarSliceExt;
/// use lowbit::{F8E4M3FN, I4};
///
/// // float16 -> E4M3FN: 480 saturates to 448 (0x7E) under Cast's default saturate=1.
/// let src = [f16::from_f32(1.0), f16::from_f32(480.0), f16::from_f32(-0.3)];
/// let mut f8 = [F8E4M3FN::ZERO; 3];
/// f8.convert_from_slice(&src).unwrap();
/// assert_eq!(f8.map(F8E4M3FN::to_bits), [0x38, 0x7E, 0xAA]);
///
/// // E4M3FN -> bfloat16 is exact.
/// let mut wide = [bf16::ZERO; 3];
/// f8.convert_to_slice(&mut wide).unwrap();
/// assert_eq!(wide.map(bf16::to_f32), [1.0, 448.0, -0.3125]);
///
/// // f64 -> INT4 is Cast: nearest-even, then the low 4 bits (9 wraps to -7).
/// let mut ints = [I4::ZERO; 3];
/// ints.convert_from_slice(&[2.5f64, -3.5, 9.0]).unwrap();
/// assert_eq!(ints.map(I4::to_i8), [2, -4, -7]);
/// ```
pub trait ScalarSliceExt: scalar_sealed::Sealed {
    /// Fills `self` from `src` with ONNX `Cast` defaults (saturate=1, `round_mode` up, `spec`).
    ///
    /// ```
    /// use lowbit::{ScalarSliceExt, U4};
    /// let mut u4 = [U4::ZERO; 2];
    /// u4.convert_from_slice(&[half::bf16::from_f32(15.0), half::bf16::from_f32(16.0)]).unwrap();
    /// assert_eq!(u4.map(U4::to_bits), [15, 0]); // Cast keeps the low 4 bits of 16
    /// assert!(u4.convert_from_slice(&[1.0f32]).is_err()); // lengths differ
    /// ```
    fn convert_from_slice<S: WideFloat>(&mut self, src: &[S]) -> Result<()>;
    /// Fills `self` from `src` with the given attributes and profile.
    ///
    /// ```
    /// use lowbit::{CastOptions, ScalarSliceExt, F8E5M2};
    /// let mut f8 = [F8E5M2::ZERO; 1];
    /// // 65536 is beyond E5M2's largest finite value (57344): saturate=0 gives +Inf (0x7C).
    /// f8.convert_from_slice_with(&[65536.0f64], &CastOptions::saturating(false)).unwrap();
    /// assert_eq!(f8[0].to_bits(), 0x7C);
    /// ```
    fn convert_from_slice_with<S: WideFloat>(&mut self, src: &[S], opts: &CastOptions) -> Result<()>;
    /// Writes every element into `dst` with ONNX `Cast` defaults (exact, except where the wide
    /// type cannot hold the value: E8M0's largest powers of two overflow float16 and bfloat16).
    ///
    /// ```
    /// use lowbit::{ScalarSliceExt, F6E3M2};
    /// let mut out = [half::f16::ZERO; 2];
    /// [F6E3M2::from_bits(0x1F), F6E3M2::from_bits(0x21)].convert_to_slice(&mut out).unwrap();
    /// // 0 111 11 = 2^4 * 1.75 = 28 (the largest); 1 000 01 = -(0.25 * 2^-2) = -0.0625 (subnormal).
    /// assert_eq!(out.map(half::f16::to_f32), [28.0, -0.0625]);
    /// ```
    fn convert_to_slice<D: WideFloat>(&self, dst: &mut [D]) -> Result<()>;
    /// Writes every element into `dst` with the given attributes and profile.
    ///
    /// ```
    /// use lowbit::{CastOptions, ScalarSliceExt, F8E8M0};
    /// let mut out = [half::f16::ZERO; 1];
    /// // E8M0 0xFE is 2^127, beyond float16: +Inf (0x7C00) whatever `saturate` says.
    /// [F8E8M0::from_bits(0xFE)].convert_to_slice_with(&mut out, &CastOptions::saturating(false)).unwrap();
    /// assert_eq!(out[0].to_bits(), 0x7C00);
    /// ```
    fn convert_to_slice_with<D: WideFloat>(&self, dst: &mut [D], opts: &CastOptions) -> Result<()>;
}

macro_rules! scalar_slice {
    ($($t:ty),*) => {$(
        impl scalar_sealed::Sealed for [$t] {}

        impl ScalarSliceExt for [$t] {
            fn convert_from_slice<S: WideFloat>(&mut self, src: &[S]) -> Result<()> {
                self.convert_from_slice_with(src, &CastOptions::default())
            }

            fn convert_from_slice_with<S: WideFloat>(&mut self, src: &[S], opts: &CastOptions) -> Result<()> {
                same_length("convert_from_slice", self.len(), src.len())?;
                let plan = Plan::new(S::DTYPE, <$t>::DTYPE, opts)?;
                convert_typed(&plan, src, self)
            }

            fn convert_to_slice<D: WideFloat>(&self, dst: &mut [D]) -> Result<()> {
                self.convert_to_slice_with(dst, &CastOptions::default())
            }

            fn convert_to_slice_with<D: WideFloat>(&self, dst: &mut [D], opts: &CastOptions) -> Result<()> {
                same_length("convert_to_slice", dst.len(), self.len())?;
                let plan = Plan::new(<$t>::DTYPE, D::DTYPE, opts)?;
                convert_codes_out(&plan, self, dst, D::read_all_le)
            }
        }
    )*};
}

scalar_slice!(F8E4M3FN, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ, F8E8M0, F6E2M3, F6E3M2, F4E2M1, I4, U4, I2, U2);

pub(crate) fn packed_target(dtype: DType) -> Result<()> {
    match dtype {
        DType::Int4
        | DType::Uint4
        | DType::Float4E2M1
        | DType::Int2
        | DType::Uint2
        | DType::Float6E2M3
        | DType::Float6E3M2 => Ok(()),
        other => {
            Err(Error::UnsupportedDType { op: "pack", dtype: other.onnx_name(), why: "not a packed sub-byte type" })
        }
    }
}

/// `dst` must be exactly the raw data of `elements` elements of `dtype`.
pub(crate) fn raw_length_is(dtype: DType, elements: usize, actual: usize) -> Result<()> {
    let expected = packing::raw_len(dtype, elements)?;
    if actual == expected {
        Ok(())
    } else {
        Err(Error::RawLength { dtype: dtype.onnx_name(), elements, expected, actual })
    }
}

/// Casts `src` (each element first passed through `adjust`) to a packed sub-byte `dtype` with
/// `opts`, writing the ONNX `raw_data` bytes into `dst`, a piece at a time through one plan.
pub(crate) fn pack_staged<S: WideFloat>(
    dtype: DType,
    src: &[S],
    dst: &mut [u8],
    opts: &CastOptions,
    adjust: impl Fn(S) -> S,
) -> Result<()> {
    packed_target(dtype)?;
    raw_length_is(dtype, src.len(), dst.len())?;
    let plan = Plan::new(S::DTYPE, dtype, opts)?;
    plan.run_pieces(
        src.len(),
        |start, len, bytes| {
            // Through a small buffer, so that the bytes are written by the width's own loop.
            let mut adjusted = [S::zero(); 64];
            for (piece, out) in src[start..start + len].chunks(64).zip(bytes.chunks_mut(64 * S::BYTES)) {
                for (a, &x) in adjusted.iter_mut().zip(piece) {
                    *a = adjust(x);
                }
                S::write_all_le(&adjusted[..piece.len()], out);
            }
            Ok(())
        },
        |start, _, bytes| {
            let at = packing::raw_len(dtype, start)?;
            dst[at..at + bytes.len()].copy_from_slice(bytes);
            Ok(())
        },
    )
}

/// Unpacks `dst.len()` elements of a packed sub-byte `dtype` from `src` (exactly their raw data)
/// into `dst` through one plan.
pub(crate) fn unpack_staged<D: WideFloat>(dtype: DType, src: &[u8], dst: &mut [D], opts: &CastOptions) -> Result<()> {
    packed_target(dtype)?;
    raw_length_is(dtype, dst.len(), src.len())?;
    let plan = Plan::new(dtype, D::DTYPE, opts)?;
    plan.run_pieces(
        dst.len(),
        |start, _, bytes| {
            let at = packing::raw_len(dtype, start)?;
            bytes.copy_from_slice(&src[at..at + bytes.len()]);
            Ok(())
        },
        |start, len, bytes| {
            D::read_all_le(bytes, &mut dst[start..start + len]);
            Ok(())
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::Profile;

    #[test]
    fn float8_slices() {
        let src = [448.0f32, 464.0, 480.0, f32::NAN, -1e-10, 1.0625];
        let mut dst = [F8E4M3FN::ZERO; 6];
        dst.convert_from_f32_slice(&src).unwrap();
        assert_eq!(dst.map(F8E4M3FN::to_bits), [0x7E, 0x7E, 0x7E, 0x7F, 0x80, 0x38]);
        dst.convert_from_f32_slice_with(&src, &CastOptions::saturating(false)).unwrap();
        assert_eq!(dst.map(F8E4M3FN::to_bits), [0x7E, 0x7E, 0x7F, 0x7F, 0x80, 0x38]);
        assert!(dst.convert_from_f32_slice(&src[..5]).unwrap_err().to_string().contains("5"));
        let mut back = [0f32; 6];
        dst.convert_to_f32_slice(&mut back).unwrap();
        assert_eq!(back[..2], [448.0, 448.0]);
        assert!(back[2].is_nan() && back[3].is_nan());
        assert_eq!(back[4].to_bits(), (-0.0f32).to_bits());
        let mut from_f64 = [F8E4M3FN::ZERO; 1];
        from_f64.convert_from_f64_slice(&[1.0625 + 2f64.powi(-30)], &CastOptions::default()).unwrap();
        assert_eq!(from_f64[0].to_bits(), 0x39);
    }

    #[test]
    fn f16_slices_follow_the_profile() {
        // Found by the fuzz target float8_kernel (now fuzz/fuzz_targets/plan_vs_core.rs): the float16 path rounded with the core alone, so the
        // profile's rules were lost. onnxruntime: a negative value into E8M0 is 0x00 when
        // saturating (profile row `e8m0`), and 480 into E4M3FN without saturation is 0x7E (row `float8_overflow_quirks`).
        let ort = CastOptions::with_profile(Profile::OnnxRuntime);
        let mut e8m0 = [F8E8M0::from_bits(0x7F)];
        e8m0.convert_from_f16_slice(&[half::f16::from_bits(0xAC49)], &ort).unwrap();
        assert_eq!(e8m0[0].to_bits(), 0x00);
        e8m0.convert_from_f16_slice(&[half::f16::from_bits(0xAC49)], &CastOptions::default()).unwrap();
        assert_eq!(e8m0[0].to_bits(), 0x7C);
        let mut e4m3 = [F8E4M3FN::ZERO];
        e4m3.convert_from_f16_slice(&[half::f16::from_f32(480.0)], &CastOptions { saturate: false, ..ort }).unwrap();
        assert_eq!(e4m3[0].to_bits(), 0x7E);
        e4m3.convert_from_f16_slice(&[half::f16::from_f32(480.0)], &CastOptions::saturating(false)).unwrap();
        assert_eq!(e4m3[0].to_bits(), 0x7F);
        assert!(e4m3.convert_from_f16_slice(&[], &ort).is_err());
    }

    #[test]
    fn the_big_endian_copy_branch_gives_the_core_s_codes() {
        // The branch a big-endian target takes (each piece's bytes written from the values),
        // forced here: every float16 pattern and float32/float64/bfloat16 values over several
        // pieces, against the element-level core (`convert_code`), plus hand-checked codes.
        fn copied<S: WideFloat, T: CodeSlot + Copy>(plan: &Plan, values: &[S], zero: T) -> Vec<u64> {
            let mut dst = vec![zero; values.len()];
            convert_typed_from(plan, values, None, &mut dst).unwrap();
            dst.iter().map(|&c| u64::from(c.code())).collect()
        }
        fn check<S: WideFloat + Copy>(values: &[S], bits: impl Fn(S) -> u64, opts: &CastOptions) {
            for to in [DType::Float8E4M3FN, DType::Float8E5M2, DType::Float4E2M1, DType::Int4] {
                let plan = Plan::new(S::DTYPE, to, opts).unwrap();
                let codes = match to {
                    DType::Float8E4M3FN => copied(&plan, values, F8E4M3FN::ZERO),
                    DType::Float8E5M2 => copied(&plan, values, F8E5M2::ZERO),
                    DType::Float4E2M1 => copied(&plan, values, F4E2M1::ZERO),
                    _ => copied(&plan, values, I4::ZERO),
                };
                for (i, (&x, &code)) in values.iter().zip(&codes).enumerate() {
                    let want = crate::convert::convert_code(S::DTYPE, to, bits(x), opts).unwrap();
                    assert_eq!(code, want, "{:?} -> {to:?}, element {i}", S::DTYPE);
                }
            }
        }
        let opts = CastOptions::default();
        let f16: Vec<half::f16> = (0..=u16::MAX).map(half::f16::from_bits).collect();
        check(&f16, |x| u64::from(x.to_bits()), &opts);
        let bf16: Vec<half::bf16> = (0..=u16::MAX).map(half::bf16::from_bits).collect();
        check(&bf16, |x| u64::from(x.to_bits()), &opts);
        let f32s: Vec<f32> = (0..200_003u32).map(|k| f32::from_bits(k.wrapping_mul(21_473))).collect();
        check(&f32s, |x| u64::from(x.to_bits()), &CastOptions::saturating(false));
        let f64s: Vec<f64> = f32s.iter().map(|&x| f64::from(x) * 1.000_000_1).collect();
        check(&f64s, f64::to_bits, &opts);
        // By hand: 448, 464 (the tie above 448 saturates), -1e-10 (to -0), 1.0625 (0x38).
        let plan = Plan::new(DType::Float, DType::Float8E4M3FN, &opts).unwrap();
        let mut dst = [F8E4M3FN::ZERO; 4];
        convert_typed_from(&plan, &[448.0f32, 464.0, -1e-10, 1.0625], None, &mut dst).unwrap();
        assert_eq!(dst.map(F8E4M3FN::to_bits), [0x7E, 0x7E, 0x80, 0x38]);
    }

    #[test]
    fn packed_slices() {
        let mut raw = [0u8; 2];
        crate::bulk::pack_wrapping_into(DType::Int4, &[1.0, -2.0, 3.0], &mut raw, &CastOptions::default()).unwrap();
        assert_eq!(raw, [0xE1, 0x03]);
        let mut out = [0f32; 3];
        crate::bulk::unpack_into(DType::Int4, &raw, &mut out).unwrap();
        assert_eq!(out, [1.0, -2.0, 3.0]);
        let mut raw = [0u8; 4];
        crate::bulk::pack_wrapping_into(
            DType::Float6E2M3,
            &[1.0, 2.0, 3.0, -1.0, 0.5],
            &mut raw,
            &CastOptions::default(),
        )
        .unwrap();
        assert_eq!(raw, [0x08, 0x44, 0xA1, 0x04]);
        assert!(
            crate::bulk::pack_wrapping_into(DType::Int4, &[1.0; 3], &mut [0u8; 3], &CastOptions::default()).is_err()
        );
        assert!(crate::bulk::pack_wrapping_into(DType::Int8, &[1.0], &mut [0u8; 1], &CastOptions::default()).is_err());
    }
}
