//! `Tensor`: a dtype, a shape and the elements in ONNX layout (little-endian `raw_data` bytes,
//! sub-byte types packed; strings as [`Texts`], one buffer for all elements). Ops and casts work on this element store; the
//! byte layout itself lives in [`crate::packing`].

use crate::alloc_prelude::*;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::packing;
use crate::texts::Texts;

/// One fixed-width element as a number for the ops' own arithmetic: a float exactly as `f64`
/// (every float dtype fits), an integer as `i128` (uint64 included), BOOL as 0 or 1.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg(feature = "ops")]
pub(crate) enum Number {
    Float(f64),
    Int(i128),
}

#[cfg(feature = "ops")]
impl Number {
    /// The element `code` of `dtype`, decoded exactly by the core.
    pub(crate) fn of(dtype: DType, code: u64) -> Result<Number> {
        Ok(match crate::convert::decode_element(dtype, code)? {
            crate::convert::Element::Float(v) => Number::Float(f64::from_bits(crate::round::encode(
                &crate::format::F64,
                v,
                crate::round::RoundingOptions::IEEE,
            ))),
            crate::convert::Element::Int(i) => Number::Int(i),
            crate::convert::Element::Bool(b) => Number::Int(i128::from(b)),
        })
    }
}

/// Elements of a tensor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Data {
    /// ONNX `raw_data`: every dtype but STRING (complex values too, as their raw bytes).
    Raw(Vec<u8>),
    /// STRING elements.
    Strings(Texts),
}

/// A dtype, a shape and its elements.
///
/// ```
/// use lowbit::{cast, CastOptions, DType, Tensor};
///
/// // E5M2 0x3C = 0 01111 00 = 2^(15 - 15) = 1.0; 0xC0 = 1 10000 00 = -2^1 = -2.0.
/// let t = Tensor::from_codes(DType::Float8E5M2, vec![2, 1], &[0x3C, 0xC0])?;
/// assert_eq!((t.dtype(), t.shape(), t.len()), (DType::Float8E5M2, &[2usize, 1][..], 2));
/// let f = cast(&t, DType::Float, &CastOptions::default())?;
/// assert_eq!(f.to_f32_vec()?, [1.0, -2.0]);
/// // The raw bytes must be exactly what the shape needs: 3 INT4 elements take 2 bytes.
/// assert!(Tensor::from_raw(DType::Int4, vec![3], vec![0x21]).is_err());
/// # Ok::<(), lowbit::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tensor {
    dtype: DType,
    shape: Vec<usize>,
    data: Data,
}

/// The number of elements of a shape, or an error if the product overflows `usize`.
pub(crate) fn element_count(shape: &[usize]) -> Result<usize> {
    shape.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d)).ok_or_else(|| Error::TooLarge {
        what: format!("shape {} has more elements than fit in memory", crate::error::shown_shape(shape)),
    })
}

impl Tensor {
    /// The number of elements of a shape, or an error if the product overflows `usize`.
    pub fn element_count(shape: &[usize]) -> Result<usize> {
        element_count(shape)
    }

    /// Every element as a number ([`Number::of`] for each); `None` for STRING tensors.
    #[cfg(feature = "ops")]
    pub(crate) fn numbers(&self) -> Option<impl Iterator<Item = Result<Number>> + '_> {
        let raw = self.raw()?;
        Some((0..self.len()).map(move |i| Number::of(self.dtype, packing::get(self.dtype, raw, i))))
    }

    /// Every element of a numeric tensor as `f64`, through a Cast plan to DOUBLE (the fast path
    /// for many elements; exact for every float dtype and every integer of at most 53 bits).
    #[cfg(feature = "quant")]
    pub(crate) fn f64_values(&self) -> Result<Vec<f64>> {
        let raw = self.raw().ok_or(Error::UnsupportedDType {
            op: "numbers",
            dtype: self.dtype.onnx_name(),
            why: "not a number",
        })?;
        let n = self.len();
        let too_large = || Error::TooLarge { what: format!("{n} float64 values") };
        let len = n.checked_mul(8).ok_or_else(too_large)?;
        // The caller's tensor exists, so `n` is not untrusted; its eightfold may still not fit.
        let mut wide = Vec::new();
        wide.try_reserve_exact(len).map_err(|_| too_large())?;
        wide.resize(len, 0);
        crate::plan::Plan::new(self.dtype, DType::Double, &crate::convert::CastOptions::default())?
            .run(raw, &mut wide, n)?;
        Ok(wide.chunks_exact(8).map(|b| f64::from_le_bytes(b.try_into().expect("8 bytes"))).collect())
    }

    /// A tensor from ONNX `raw_data`. The byte count must be exactly what the shape needs.
    pub fn from_raw(dtype: DType, shape: Vec<usize>, raw: Vec<u8>) -> Result<Tensor> {
        if dtype == DType::Undefined {
            return Err(Error::UnsupportedDType { op: "Tensor", dtype: "UNDEFINED", why: "it has no elements" });
        }
        let n = element_count(&shape)?;
        let expected = packing::raw_len(dtype, n)?;
        if raw.len() != expected {
            return Err(Error::RawLength { dtype: dtype.onnx_name(), elements: n, expected, actual: raw.len() });
        }
        Ok(Tensor { dtype, shape, data: Data::Raw(raw) })
    }

    /// A STRING tensor: `strings` is a [`Texts`] or anything that becomes one (a `Vec<String>`,
    /// a `&[&str]`, ...; an iterator of `&str` can be collected into a [`Texts`]).
    pub fn from_strings(shape: Vec<usize>, strings: impl Into<Texts>) -> Result<Tensor> {
        let strings = strings.into();
        let n = element_count(&shape)?;
        if strings.len() != n {
            return Err(Error::ShapeMismatch { shape, elements: n, actual: strings.len() });
        }
        Ok(Tensor { dtype: DType::String, shape, data: Data::Strings(strings) })
    }

    /// A tensor from element codes (each code's low bits are the element; see [`packing`]).
    pub fn from_codes(dtype: DType, shape: Vec<usize>, codes: &[u64]) -> Result<Tensor> {
        let n = element_count(&shape)?;
        if codes.len() != n {
            return Err(Error::ShapeMismatch { shape, elements: n, actual: codes.len() });
        }
        if dtype.bits().is_none_or(|b| b > 64) {
            return Err(Error::UnsupportedDType {
                op: "Tensor::from_codes",
                dtype: dtype.onnx_name(),
                why: "elements are not codes of at most 64 bits",
            });
        }
        Ok(Tensor { dtype, shape, data: Data::Raw(packing::pack(dtype, codes)?) })
    }

    /// A 1-D FLOAT tensor.
    #[must_use]
    pub fn from_f32(values: &[f32]) -> Tensor {
        let raw = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        Tensor { dtype: DType::Float, shape: vec![values.len()], data: Data::Raw(raw) }
    }

    /// A 1-D DOUBLE tensor.
    #[must_use]
    pub fn from_f64(values: &[f64]) -> Tensor {
        let raw = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        Tensor { dtype: DType::Double, shape: vec![values.len()], data: Data::Raw(raw) }
    }

    /// The same elements with another shape of the same element count.
    pub fn reshape(self, shape: Vec<usize>) -> Result<Tensor> {
        let n = element_count(&shape)?;
        if n != self.len() {
            return Err(Error::ShapeMismatch { shape, elements: n, actual: self.len() });
        }
        Ok(Tensor { shape, ..self })
    }

    /// The element type.
    #[must_use]
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// The dimensions, row-major (empty for a scalar).
    #[must_use]
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The number of elements.
    #[must_use]
    pub fn len(&self) -> usize {
        // The constructors checked that the product fits.
        self.shape.iter().product()
    }

    /// Whether the tensor has no element (a dimension is 0).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The elements: raw bytes or strings.
    #[must_use]
    pub fn data(&self) -> &Data {
        &self.data
    }

    /// The raw bytes, for every dtype but STRING.
    #[must_use]
    pub fn raw(&self) -> Option<&[u8]> {
        match &self.data {
            Data::Raw(r) => Some(r),
            Data::Strings(_) => None,
        }
    }

    /// The strings of a STRING tensor.
    #[must_use]
    pub fn strings(&self) -> Option<&Texts> {
        match &self.data {
            Data::Strings(s) => Some(s),
            Data::Raw(_) => None,
        }
    }

    /// The code of element `i` (row-major), for dtypes of at most 64 bits.
    #[must_use]
    pub fn code(&self, i: usize) -> Option<u64> {
        match &self.data {
            Data::Raw(raw) if i < self.len() && self.dtype.bits().is_some_and(|b| b <= 64) => {
                Some(packing::get(self.dtype, raw, i))
            }
            _ => None,
        }
    }

    /// Every element code (row-major), for dtypes of at most 64 bits.
    pub fn codes(&self) -> Result<Vec<u64>> {
        match &self.data {
            Data::Raw(raw) => packing::unpack(self.dtype, raw, self.len()),
            Data::Strings(_) => {
                Err(Error::UnsupportedDType { op: "codes", dtype: "STRING", why: "strings are not codes" })
            }
        }
    }

    /// The elements of a FLOAT tensor.
    pub fn to_f32_vec(&self) -> Result<Vec<f32>> {
        match (&self.data, self.dtype) {
            (Data::Raw(raw), DType::Float) => {
                Ok(raw.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect())
            }
            _ => Err(Error::UnsupportedDType { op: "to_f32_vec", dtype: self.dtype.onnx_name(), why: "not FLOAT" }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_length_is_checked() {
        let err = Tensor::from_raw(DType::Float, vec![2, 3], vec![0; 23]).unwrap_err().to_string();
        assert!(err.contains("24 bytes") && err.contains("23 bytes"), "{err}");
        assert!(Tensor::from_raw(DType::Int4, vec![3], vec![0; 2]).is_ok());
        assert!(Tensor::from_raw(DType::Int4, vec![3], vec![0; 3]).is_err());
        assert!(Tensor::from_raw(DType::Float, vec![usize::MAX, 2], vec![]).is_err());
        assert!(Tensor::from_raw(DType::Complex128, vec![1], vec![0; 16]).is_ok());
    }

    #[test]
    fn codes_round_trip() {
        let t = Tensor::from_codes(DType::Float6E3M2, vec![5], &[1, 2, 3, 0x3F, 0x20]).unwrap();
        assert_eq!(t.raw().unwrap().len(), 4);
        assert_eq!(t.codes().unwrap(), [1, 2, 3, 0x3F, 0x20]);
        assert_eq!(t.code(3), Some(0x3F));
        assert_eq!(t.code(5), None);
        assert!(Tensor::from_strings(vec![2], vec!["a".to_string()]).is_err());
    }
}
