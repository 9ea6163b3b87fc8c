//! Bulk conversions on slices, in the style of `half`'s `HalfFloatSliceExt`: a sealed extension
//! trait on `[F8E4M3FN]`, `[F8E5M2]`, ... and packing helpers for the sub-byte types. Unlike `half`,
//! a length mismatch is an `Err`, not a panic.
//!
//! Every conversion runs the same [`Plan`] as [`crate::cast::cast`], so the results are `Cast`'s.

use crate::convert::CastOptions;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::packing;
use crate::plan::encode::DecodeTable;
use crate::plan::Plan;
use crate::scalar::{F4E2M1, F6E2M3, F6E3M2, F8E4M3FN, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ, F8E8M0};

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

        impl NarrowFloatSliceExt for [$t] {
            fn convert_from_f32_slice(&mut self, src: &[f32]) -> Result<()> {
                self.convert_from_f32_slice_with(src, &CastOptions::default())
            }

            fn convert_from_f32_slice_with(&mut self, src: &[f32], opts: &CastOptions) -> Result<()> {
                same_length("convert_from_f32_slice", self.len(), src.len())?;
                // The plan's vectorised kernels, a chunk at a time.
                let plan = Plan::new(DType::Float, <$t>::DTYPE, opts)?;
                convert_typed(&plan, src, self, |x, b| b.copy_from_slice(&x.to_le_bytes()))
            }

            fn convert_from_f16_slice(&mut self, src: &[half::f16], opts: &CastOptions) -> Result<()> {
                same_length("convert_from_f16_slice", self.len(), src.len())?;
                // Through the FLOAT16 plan, so that the profile's rules for that source apply.
                let plan = Plan::new(DType::Float16, <$t>::DTYPE, opts)?;
                convert_typed(&plan, src, self, |x, b| b.copy_from_slice(&x.to_bits().to_le_bytes()))
            }

            fn convert_from_f64_slice(&mut self, src: &[f64], opts: &CastOptions) -> Result<()> {
                same_length("convert_from_f64_slice", self.len(), src.len())?;
                let plan = Plan::new(DType::Double, <$t>::DTYPE, opts)?;
                convert_typed(&plan, src, self, |x, b| b.copy_from_slice(&x.to_le_bytes()))
            }

            fn convert_to_f32_slice(&self, dst: &mut [f32]) -> Result<()> {
                same_length("convert_to_f32_slice", dst.len(), self.len())?;
                let table = DecodeTable::of(<$t>::FORMAT).expect("narrow formats have a decode table");
                for (d, s) in dst.iter_mut().zip(self) {
                    *d = table.decode(s.to_bits());
                }
                Ok(())
            }

            fn to_f32_vec(&self) -> Vec<f32> {
                let table = DecodeTable::of(<$t>::FORMAT).expect("narrow formats have a decode table");
                self.iter().map(|x| table.decode(x.to_bits())).collect()
            }
        }

        impl CodeSlot for $t {
            const DTYPE: DType = <$t>::DTYPE;
            fn set_code(&mut self, code: u64) {
                *self = <$t>::from_bits(code as u8);
            }
        }
    )*};
}

/// A scalar that can be written from a code of its dtype.
trait CodeSlot {
    const DTYPE: DType;
    fn set_code(&mut self, code: u64);
}

/// Runs `plan` from a typed source slice (each element written as its raw bytes by `put`) into a
/// typed destination slice of the plan's target (unpacked: one code per element), piece by piece.
fn convert_typed<S: Copy, T: CodeSlot>(
    plan: &Plan,
    src: &[S],
    dst: &mut [T],
    put: impl Fn(S, &mut [u8]),
) -> Result<()> {
    let width = plan.from().bits().expect("typed sources have a width") as usize / 8;
    let mut codes = vec![0u16; crate::plan::CHUNK];
    plan.run_pieces(
        src.len(),
        |start, len, bytes| {
            for (b, &x) in bytes.chunks_exact_mut(width).zip(&src[start..start + len]) {
                put(x, b);
            }
            Ok(())
        },
        |start, len, bytes| {
            packing::unpack_u16(T::DTYPE, bytes, &mut codes[..len]);
            for (d, &c) in dst[start..start + len].iter_mut().zip(&codes[..len]) {
                d.set_code(c.into());
            }
            Ok(())
        },
    )
}

narrow_slice!(F8E4M3FN, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ, F8E8M0, F6E2M3, F6E3M2, F4E2M1);

fn packed_target(dtype: DType) -> Result<()> {
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

/// Casts `src` to a packed sub-byte type (int4, uint4, float4e2m1, int2, uint2, float6) and writes
/// the ONNX `raw_data` bytes into `dst`, which must be exactly `ceil(len * bits / 8)` bytes.
pub fn pack_f32_into(dtype: DType, src: &[f32], dst: &mut [u8], opts: &CastOptions) -> Result<()> {
    packed_target(dtype)?;
    let need = packing::raw_len(dtype, src.len())?;
    if dst.len() != need {
        return Err(Error::RawLength {
            dtype: dtype.onnx_name(),
            elements: src.len(),
            expected: need,
            actual: dst.len(),
        });
    }
    let plan = Plan::new(DType::Float, dtype, opts)?;
    plan.run_pieces(
        src.len(),
        |start, len, bytes| {
            for (b, x) in bytes.chunks_exact_mut(4).zip(&src[start..start + len]) {
                b.copy_from_slice(&x.to_le_bytes());
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

/// Unpacks `dst.len()` elements of a packed sub-byte type from `src` (ONNX `raw_data`, exactly
/// `ceil(len * bits / 8)` bytes) into their exact `f32` values.
pub fn unpack_to_f32(dtype: DType, src: &[u8], dst: &mut [f32]) -> Result<()> {
    packed_target(dtype)?;
    let need = packing::raw_len(dtype, dst.len())?;
    if src.len() != need {
        return Err(Error::RawLength {
            dtype: dtype.onnx_name(),
            elements: dst.len(),
            expected: need,
            actual: src.len(),
        });
    }
    let plan = Plan::new(dtype, DType::Float, &CastOptions::default())?;
    plan.run_pieces(
        dst.len(),
        |start, _, bytes| {
            let at = packing::raw_len(dtype, start)?;
            bytes.copy_from_slice(&src[at..at + bytes.len()]);
            Ok(())
        },
        |start, len, bytes| {
            for (d, b) in dst[start..start + len].iter_mut().zip(bytes.chunks_exact(4)) {
                *d = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            }
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
        // Found by fuzz/float8_kernel: the float16 path rounded with the core alone, so the
        // profile's rules were lost. onnxruntime: a negative value into E8M0 is 0x00 when
        // saturating (SEMANTICS.md row 22), and 480 into E4M3FN without saturation is 0x7E (row 3).
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
    fn packed_slices() {
        let mut raw = [0u8; 2];
        pack_f32_into(DType::Int4, &[1.0, -2.0, 3.0], &mut raw, &CastOptions::default()).unwrap();
        assert_eq!(raw, [0xE1, 0x03]);
        let mut out = [0f32; 3];
        unpack_to_f32(DType::Int4, &raw, &mut out).unwrap();
        assert_eq!(out, [1.0, -2.0, 3.0]);
        let mut raw = [0u8; 4];
        pack_f32_into(DType::Float6E2M3, &[1.0, 2.0, 3.0, -1.0, 0.5], &mut raw, &CastOptions::default()).unwrap();
        assert_eq!(raw, [0x08, 0x44, 0xA1, 0x04]);
        assert!(pack_f32_into(DType::Int4, &[1.0; 3], &mut [0u8; 3], &CastOptions::default()).is_err());
        assert!(pack_f32_into(DType::Int8, &[1.0], &mut [0u8; 1], &CastOptions::default()).is_err());
    }
}
