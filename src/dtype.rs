//! `DType`: every ONNX `TensorProto.DataType` (0 to 28), with its ONNX number and name, the
//! aliases people actually type, its width and how ONNX packs it in `raw_data`.

use crate::alloc_prelude::*;
use crate::error::{Error, Result};
use crate::format::{self, FloatFormat};
use core::fmt;
use core::str::FromStr;

/// An ONNX tensor element type. The discriminant is the `TensorProto.DataType` number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum DType {
    /// `UNDEFINED` (0): no element type.
    Undefined = 0,
    /// `FLOAT` (1): IEEE binary32.
    Float = 1,
    /// `UINT8` (2).
    Uint8 = 2,
    /// `INT8` (3).
    Int8 = 3,
    /// `UINT16` (4).
    Uint16 = 4,
    /// `INT16` (5).
    Int16 = 5,
    /// `INT32` (6).
    Int32 = 6,
    /// `INT64` (7).
    Int64 = 7,
    /// `STRING` (8): UTF-8 byte strings.
    String = 8,
    /// `BOOL` (9).
    Bool = 9,
    /// `FLOAT16` (10): IEEE binary16.
    Float16 = 10,
    /// `DOUBLE` (11): IEEE binary64.
    Double = 11,
    /// `UINT32` (12).
    Uint32 = 12,
    /// `UINT64` (13).
    Uint64 = 13,
    /// `COMPLEX64` (14): two float32 (no Cast).
    Complex64 = 14,
    /// `COMPLEX128` (15): two float64 (no Cast).
    Complex128 = 15,
    /// `BFLOAT16` (16): float32's top 16 bits.
    Bfloat16 = 16,
    /// `FLOAT8E4M3FN` (17): 1-4-3, bias 7, no infinities, NaN at S.1111.111.
    Float8E4M3FN = 17,
    /// `FLOAT8E4M3FNUZ` (18): 1-4-3, bias 8, no infinities, no negative zero, NaN at 0x80.
    Float8E4M3FNUZ = 18,
    /// `FLOAT8E5M2` (19): 1-5-2, bias 15, IEEE infinities and NaNs.
    Float8E5M2 = 19,
    /// `FLOAT8E5M2FNUZ` (20): 1-5-2, bias 16, no infinities, no negative zero, NaN at 0x80.
    Float8E5M2FNUZ = 20,
    /// `UINT4` (21): packed two per byte.
    Uint4 = 21,
    /// `INT4` (22): packed two per byte.
    Int4 = 22,
    /// `FLOAT4E2M1` (23): 1-2-1, bias 1, finite only; packed two per byte.
    Float4E2M1 = 23,
    /// `FLOAT8E8M0` (24): an unsigned power of two 2^(code - 127), NaN at 0xFF (the MX scale).
    Float8E8M0 = 24,
    /// `UINT2` (25): packed four per byte.
    Uint2 = 25,
    /// `INT2` (26): packed four per byte.
    Int2 = 26,
    /// `FLOAT6E2M3` (27): 1-2-3, bias 1, finite only; packed four per three bytes.
    Float6E2M3 = 27,
    /// `FLOAT6E3M2` (28): 1-3-2, bias 3, finite only; packed four per three bytes.
    Float6E3M2 = 28,
}

/// How ONNX lays elements of a dtype out in `raw_data` (onnx.proto; little-endian throughout).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Packing {
    /// Each element takes this many whole bytes, little-endian.
    Bytes(u32),
    /// 4-bit elements, two per byte: element 2k in the low nibble, an odd count padded with 0.
    Nibbles,
    /// 2-bit elements, four per byte: element k in bits 2k..2k+1 of its byte.
    Crumbs,
    /// 6-bit elements, four per three bytes, as an LSB-first bit stream.
    Sextets,
    /// Strings are not stored in `raw_data` (they live in `string_data`).
    Strings,
    /// UNDEFINED has no storage.
    None,
}

/// What kind of number an element is; decides which conversion rules apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A binary floating-point format described by a [`FloatFormat`].
    Float(&'static FloatFormat),
    /// A two's complement (signed) or plain binary (unsigned) integer of `bits` bits.
    Integer {
        /// The width: 2, 4, 8, 16, 32 or 64.
        bits: u32,
        /// Two's complement (true) or unsigned.
        signed: bool,
    },
    /// BOOL: false or true.
    Bool,
    /// STRING: UTF-8 text.
    String,
    /// COMPLEX64 and COMPLEX128 (no Cast to or from them).
    Complex,
    /// UNDEFINED.
    Undefined,
}

impl DType {
    /// The smallest and largest value of an integer dtype (INT4: -8 and 7; UINT64: 0 and
    /// 2^64 - 1); `None` for the others.
    #[must_use]
    pub const fn integer_range(self) -> Option<(i128, i128)> {
        match self.kind() {
            Kind::Integer { bits, signed } => Some(integer_bounds(bits, signed)),
            _ => None,
        }
    }

    /// All 29 dtypes in ONNX number order.
    pub const ALL: [DType; 29] = [
        DType::Undefined,
        DType::Float,
        DType::Uint8,
        DType::Int8,
        DType::Uint16,
        DType::Int16,
        DType::Int32,
        DType::Int64,
        DType::String,
        DType::Bool,
        DType::Float16,
        DType::Double,
        DType::Uint32,
        DType::Uint64,
        DType::Complex64,
        DType::Complex128,
        DType::Bfloat16,
        DType::Float8E4M3FN,
        DType::Float8E4M3FNUZ,
        DType::Float8E5M2,
        DType::Float8E5M2FNUZ,
        DType::Uint4,
        DType::Int4,
        DType::Float4E2M1,
        DType::Float8E8M0,
        DType::Uint2,
        DType::Int2,
        DType::Float6E2M3,
        DType::Float6E3M2,
    ];

    /// Every numeric format of 8 bits or fewer: the formats whose every code `tables/` lists.
    pub const NARROW: [DType; 14] = [
        DType::Float8E4M3FN,
        DType::Float8E4M3FNUZ,
        DType::Float8E5M2,
        DType::Float8E5M2FNUZ,
        DType::Float8E8M0,
        DType::Float6E2M3,
        DType::Float6E3M2,
        DType::Float4E2M1,
        DType::Int4,
        DType::Uint4,
        DType::Int2,
        DType::Uint2,
        DType::Int8,
        DType::Uint8,
    ];

    /// The ONNX `TensorProto.DataType` number.
    #[must_use]
    pub const fn onnx_number(self) -> i32 {
        self as i32
    }

    /// The dtype with this ONNX number.
    pub fn from_onnx_number(n: i64) -> Result<DType> {
        usize::try_from(n).ok().and_then(|i| DType::ALL.get(i).copied()).ok_or(Error::UnknownDTypeNumber(n))
    }

    /// The ONNX enum name, e.g. `FLOAT8E4M3FN`.
    #[must_use]
    pub const fn onnx_name(self) -> &'static str {
        match self {
            DType::Undefined => "UNDEFINED",
            DType::Float => "FLOAT",
            DType::Uint8 => "UINT8",
            DType::Int8 => "INT8",
            DType::Uint16 => "UINT16",
            DType::Int16 => "INT16",
            DType::Int32 => "INT32",
            DType::Int64 => "INT64",
            DType::String => "STRING",
            DType::Bool => "BOOL",
            DType::Float16 => "FLOAT16",
            DType::Double => "DOUBLE",
            DType::Uint32 => "UINT32",
            DType::Uint64 => "UINT64",
            DType::Complex64 => "COMPLEX64",
            DType::Complex128 => "COMPLEX128",
            DType::Bfloat16 => "BFLOAT16",
            DType::Float8E4M3FN => "FLOAT8E4M3FN",
            DType::Float8E4M3FNUZ => "FLOAT8E4M3FNUZ",
            DType::Float8E5M2 => "FLOAT8E5M2",
            DType::Float8E5M2FNUZ => "FLOAT8E5M2FNUZ",
            DType::Uint4 => "UINT4",
            DType::Int4 => "INT4",
            DType::Float4E2M1 => "FLOAT4E2M1",
            DType::Float8E8M0 => "FLOAT8E8M0",
            DType::Uint2 => "UINT2",
            DType::Int2 => "INT2",
            DType::Float6E2M3 => "FLOAT6E2M3",
            DType::Float6E3M2 => "FLOAT6E3M2",
        }
    }

    /// The lowercase ONNX name, used for file names in `tables/` (e.g. `float8e4m3fn`).
    #[must_use]
    pub fn file_name(self) -> String {
        self.onnx_name().to_ascii_lowercase()
    }

    /// Short aliases accepted by [`DType::parse`], besides the ONNX name. Matching ignores case,
    /// `_` and `-`, so ml_dtypes' `float8_e4m3fn` is the ONNX name and needs no entry here.
    const fn aliases(self) -> &'static [&'static str] {
        match self {
            DType::Undefined => &[],
            DType::Float => &["f32", "float32", "fp32"],
            DType::Uint8 => &["u8"],
            DType::Int8 => &["i8"],
            DType::Uint16 => &["u16"],
            DType::Int16 => &["i16"],
            DType::Int32 => &["i32"],
            DType::Int64 => &["i64"],
            DType::String => &["str"],
            DType::Bool => &["boolean"],
            DType::Float16 => &["f16", "half", "fp16"],
            DType::Double => &["f64", "float64", "fp64"],
            DType::Uint32 => &["u32"],
            DType::Uint64 => &["u64"],
            DType::Complex64 => &["c64"],
            DType::Complex128 => &["c128"],
            DType::Bfloat16 => &["bf16"],
            DType::Float8E4M3FN => &["e4m3fn", "f8e4m3fn", "e4m3"],
            DType::Float8E4M3FNUZ => &["e4m3fnuz", "f8e4m3fnuz"],
            DType::Float8E5M2 => &["e5m2", "f8e5m2"],
            DType::Float8E5M2FNUZ => &["e5m2fnuz", "f8e5m2fnuz"],
            DType::Uint4 => &["u4"],
            DType::Int4 => &["i4"],
            DType::Float4E2M1 => &["e2m1", "f4e2m1", "fp4", "float4e2m1fn"],
            DType::Float8E8M0 => &["e8m0", "f8e8m0", "float8e8m0fnu", "e8m0fnu"],
            DType::Uint2 => &["u2"],
            DType::Int2 => &["i2"],
            DType::Float6E2M3 => &["e2m3", "f6e2m3", "float6e2m3fn"],
            DType::Float6E3M2 => &["e3m2", "f6e3m2", "float6e3m2fn"],
        }
    }

    /// Parses an ONNX name or alias, ignoring case, `_` and `-`. Also accepts the ONNX number.
    ///
    /// An unknown name is an `Err` whose message lists every valid name.
    ///
    /// ```
    /// use lowbit::DType;
    ///
    /// assert_eq!(DType::parse("FLOAT8E4M3FN")?, DType::Float8E4M3FN); // the ONNX name
    /// assert_eq!(DType::parse("e4m3fn")?, DType::Float8E4M3FN); // an alias
    /// assert_eq!(DType::parse("float8_e4m3fn")?, DType::Float8E4M3FN); // ml_dtypes' name
    /// assert_eq!(DType::parse("17")?, DType::Float8E4M3FN); // the TensorProto number
    /// assert_eq!(DType::parse("bf16")?, DType::Bfloat16);
    /// assert!(DType::parse("f33").unwrap_err().to_string().contains("FLOAT8E4M3FN"));
    /// # Ok::<(), lowbit::Error>(())
    /// ```
    pub fn parse(name: &str) -> Result<DType> {
        let key: String =
            name.trim().chars().filter(|c| *c != '_' && *c != '-').map(|c| c.to_ascii_lowercase()).collect();
        if let Ok(n) = key.parse::<i64>() {
            return DType::from_onnx_number(n);
        }
        DType::ALL
            .into_iter()
            .find(|d| d.onnx_name().eq_ignore_ascii_case(&key) || d.aliases().contains(&key.as_str()))
            .ok_or_else(|| {
                match crate::format::FloatFormat::named(name)
                    .and_then(|f| f.name_of_named())
                    .or(crate::format::IntegerFormat::named(name).map(|i| i.name))
                {
                    // ml_dtypes' float8_e3m4, int1 and the like: refused by name wherever ONNX is involved.
                    Some(named) => Error::UnsupportedDType {
                        op: "ONNX",
                        dtype: named,
                        why: "it is an ml_dtypes type, not an ONNX one; `lowbit cast`, `info`, `vectors`, `check`, \
                          `sweep` and the Python package's cast take it",
                    },
                    None => Error::UnknownDType { name: name.to_string(), valid: DType::valid_names() },
                }
            })
    }

    /// Every accepted spelling, for error messages and `--help`.
    #[must_use]
    pub fn valid_names() -> String {
        DType::ALL
            .iter()
            .map(|d| {
                let mut s = d.onnx_name().to_string();
                if !d.aliases().is_empty() {
                    s.push_str(" (");
                    s.push_str(&d.aliases().join(", "));
                    s.push(')');
                }
                s
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Bits per element; `None` for STRING and UNDEFINED.
    #[must_use]
    pub const fn bits(self) -> Option<u32> {
        Some(match self {
            DType::Undefined | DType::String => return None,
            DType::Uint2 | DType::Int2 => 2,
            DType::Uint4 | DType::Int4 | DType::Float4E2M1 => 4,
            DType::Float6E2M3 | DType::Float6E3M2 => 6,
            DType::Uint8
            | DType::Int8
            | DType::Bool
            | DType::Float8E4M3FN
            | DType::Float8E4M3FNUZ
            | DType::Float8E5M2
            | DType::Float8E5M2FNUZ
            | DType::Float8E8M0 => 8,
            DType::Uint16 | DType::Int16 | DType::Float16 | DType::Bfloat16 => 16,
            DType::Float | DType::Int32 | DType::Uint32 => 32,
            DType::Double | DType::Int64 | DType::Uint64 | DType::Complex64 => 64,
            DType::Complex128 => 128,
        })
    }

    /// How the dtype is packed in ONNX `raw_data`.
    #[must_use]
    pub const fn packing(self) -> Packing {
        match self {
            DType::Undefined => Packing::None,
            DType::String => Packing::Strings,
            DType::Uint4 | DType::Int4 | DType::Float4E2M1 => Packing::Nibbles,
            DType::Uint2 | DType::Int2 => Packing::Crumbs,
            DType::Float6E2M3 | DType::Float6E3M2 => Packing::Sextets,
            // Every other dtype is a whole number of bytes wide.
            other => match other.bits() {
                Some(b) => Packing::Bytes(b / 8),
                None => Packing::None,
            },
        }
    }

    /// What kind of number the dtype holds.
    #[must_use]
    pub const fn kind(self) -> Kind {
        match self {
            DType::Undefined => Kind::Undefined,
            DType::String => Kind::String,
            DType::Bool => Kind::Bool,
            DType::Complex64 | DType::Complex128 => Kind::Complex,
            DType::Float => Kind::Float(&format::F32),
            DType::Double => Kind::Float(&format::F64),
            DType::Float16 => Kind::Float(&format::F16),
            DType::Bfloat16 => Kind::Float(&format::BF16),
            DType::Float8E4M3FN => Kind::Float(&format::E4M3FN),
            DType::Float8E4M3FNUZ => Kind::Float(&format::E4M3FNUZ),
            DType::Float8E5M2 => Kind::Float(&format::E5M2),
            DType::Float8E5M2FNUZ => Kind::Float(&format::E5M2FNUZ),
            DType::Float8E8M0 => Kind::Float(&format::E8M0),
            DType::Float6E2M3 => Kind::Float(&format::E2M3),
            DType::Float6E3M2 => Kind::Float(&format::E3M2),
            DType::Float4E2M1 => Kind::Float(&format::E2M1),
            DType::Uint2 => Kind::Integer { bits: 2, signed: false },
            DType::Int2 => Kind::Integer { bits: 2, signed: true },
            DType::Uint4 => Kind::Integer { bits: 4, signed: false },
            DType::Int4 => Kind::Integer { bits: 4, signed: true },
            DType::Uint8 => Kind::Integer { bits: 8, signed: false },
            DType::Int8 => Kind::Integer { bits: 8, signed: true },
            DType::Uint16 => Kind::Integer { bits: 16, signed: false },
            DType::Int16 => Kind::Integer { bits: 16, signed: true },
            DType::Uint32 => Kind::Integer { bits: 32, signed: false },
            DType::Int32 => Kind::Integer { bits: 32, signed: true },
            DType::Uint64 => Kind::Integer { bits: 64, signed: false },
            DType::Int64 => Kind::Integer { bits: 64, signed: true },
        }
    }

    /// The floating format descriptor, for floating dtypes.
    #[must_use]
    pub const fn float_format(self) -> Option<&'static FloatFormat> {
        match self.kind() {
            Kind::Float(f) => Some(f),
            _ => None,
        }
    }

    /// One of the four float8 types (E4M3FN, E4M3FNUZ, E5M2, E5M2FNUZ); not the scale type E8M0.
    #[must_use]
    pub const fn is_float8(self) -> bool {
        matches!(self, DType::Float8E4M3FN | DType::Float8E4M3FNUZ | DType::Float8E5M2 | DType::Float8E5M2FNUZ)
    }

    /// Mask of the bits a single element's code occupies (e.g. 0x3F for float6).
    #[must_use]
    pub const fn code_mask(self) -> u64 {
        match self.bits() {
            Some(b) if b < 64 => (1u64 << b) - 1,
            _ => u64::MAX,
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.onnx_name())
    }
}

impl FromStr for DType {
    type Err = Error;
    fn from_str(s: &str) -> Result<DType> {
        DType::parse(s)
    }
}

/// The smallest and the largest value of a `bits`-bit two's complement (`signed`) or unsigned
/// integer (1 to 64 bits).
#[must_use]
pub(crate) const fn integer_bounds(bits: u32, signed: bool) -> (i128, i128) {
    if signed {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_round_trip() {
        for (i, d) in DType::ALL.iter().enumerate() {
            assert_eq!(d.onnx_number() as usize, i);
            assert_eq!(DType::from_onnx_number(i as i64).unwrap(), *d);
            assert_eq!(DType::parse(d.onnx_name()).unwrap(), *d);
            for a in d.aliases() {
                assert_eq!(DType::parse(a).unwrap(), *d, "alias {a}");
            }
        }
        assert!(DType::from_onnx_number(29).is_err());
        assert!(DType::from_onnx_number(-1).is_err());
    }

    #[test]
    fn ml_dtypes_names_and_case() {
        assert_eq!(DType::parse("float8_e4m3fn").unwrap(), DType::Float8E4M3FN);
        assert_eq!(DType::parse("Float8_E5M2FNUZ").unwrap(), DType::Float8E5M2FNUZ);
        assert_eq!(DType::parse("float4_e2m1fn").unwrap(), DType::Float4E2M1);
        assert_eq!(DType::parse("float8_e8m0fnu").unwrap(), DType::Float8E8M0);
        assert_eq!(DType::parse("float6_e3m2fn").unwrap(), DType::Float6E3M2);
        assert_eq!(DType::parse("BF16").unwrap(), DType::Bfloat16);
        assert_eq!(DType::parse("17").unwrap(), DType::Float8E4M3FN);
    }

    #[test]
    fn unknown_name_lists_valid_names() {
        let err = DType::parse("float7").unwrap_err().to_string();
        assert!(err.contains("\"float7\""), "{err}");
        for d in DType::ALL {
            assert!(err.contains(d.onnx_name()), "{err} lacks {d}");
        }
        assert!(err.contains("e4m3fn") && err.contains("bf16"));
    }

    #[test]
    fn packing_matches_onnx_proto() {
        assert_eq!(DType::Int4.packing(), Packing::Nibbles);
        assert_eq!(DType::Float4E2M1.packing(), Packing::Nibbles);
        assert_eq!(DType::Uint2.packing(), Packing::Crumbs);
        assert_eq!(DType::Float6E3M2.packing(), Packing::Sextets);
        assert_eq!(DType::Bool.packing(), Packing::Bytes(1));
        assert_eq!(DType::Complex128.packing(), Packing::Bytes(16));
        assert_eq!(DType::String.packing(), Packing::Strings);
        assert_eq!(DType::Float6E2M3.code_mask(), 0x3F);
    }
}
