//! ONNX `Cast` and `CastLike` on tensors: [`cast`] and [`cast_like`] take the attributes as
//! [`CastOptions`]; [`cast_op`] and [`cast_like_op`] take them as an ONNX node does (with the
//! opset version, which decides the allowed types and attributes).

use crate::alloc_prelude::*;
use crate::convert::{CastOptions, RoundMode};
use crate::dtype::{DType, Kind};
use crate::error::{Error, Result};
use crate::opset::schema_version;
use crate::packing;
use crate::plan::Plan;
use crate::profile::Profile;
#[cfg(feature = "strings")]
use crate::strings;
use crate::tensor::{Data, Tensor};

fn castable(op: &'static str, dtype: DType) -> Result<()> {
    match dtype.kind() {
        Kind::Complex => {
            Err(Error::UnsupportedDType { op, dtype: dtype.onnx_name(), why: "Cast does not take complex types" })
        }
        Kind::Undefined => Err(Error::UnsupportedDType { op, dtype: "UNDEFINED", why: "it is not a data type" }),
        #[cfg(not(feature = "strings"))]
        Kind::String => Err(without_strings(op)),
        _ => Ok(()),
    }
}

/// Cast to or from STRING in a build without the `strings` feature.
#[cfg(not(feature = "strings"))]
fn without_strings(op: &'static str) -> Error {
    Error::UnsupportedDType { op, dtype: "STRING", why: "lowbit was built without its `strings` feature" }
}

/// ONNX `Cast(to)` with the given attributes and profile.
pub fn cast(input: &Tensor, to: DType, opts: &CastOptions) -> Result<Tensor> {
    let from = input.dtype();
    castable("Cast", from)?;
    castable("Cast", to)?;
    let policy = opts.profile.policy().for_cast(from, to);
    if from == to && !policy.identity_converts(from, opts.saturate) {
        return Ok(input.clone());
    }
    let shape = input.shape().to_vec();
    // Where the profile hands the pair to `spec`, every attribute-dependent rule is spec's too.
    let spec_opts = CastOptions { profile: Profile::Spec, ..*opts };
    let opts = if opts.profile.policy().falls_back(from, to) { &spec_opts } else { opts };
    match input.data() {
        #[cfg(not(feature = "strings"))]
        Data::Strings(_) => Err(without_strings("Cast")),
        #[cfg(feature = "strings")]
        Data::Strings(texts) => {
            let reader = strings::TextReader::new(to, policy.strings.grammar, opts);
            let mut out = vec![0u8; packing::raw_len(to, texts.len())?];
            reader
                .read_into(texts, &mut out)
                .map_err(|(i, e)| Error::InvalidOp { op: "Cast".into(), message: format!("element {i}: {e}") })?;
            Tensor::from_raw(to, shape, out)
        }
        #[cfg(feature = "strings")]
        Data::Raw(raw) if to == DType::String => {
            let writer = strings::TextWriter::new(from, policy.strings.number_style, input.len())?;
            let texts = writer.texts(raw, input.len())?;
            Tensor::from_strings(shape, texts)
        }
        Data::Raw(raw) => {
            let n = input.len();
            let mut out = vec![0u8; packing::raw_len(to, n)?];
            Plan::new(from, to, opts)?.run(raw, &mut out, n)?;
            Tensor::from_raw(to, shape, out)
        }
    }
}

/// ONNX `CastLike`: `Cast` to the element type of `like`.
pub fn cast_like(input: &Tensor, like: &Tensor, opts: &CastOptions) -> Result<Tensor> {
    cast(input, like.dtype(), opts)
}

/// The `to` attribute: a type name in Cast-1, an ONNX type number from Cast-6 on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CastTo {
    /// Cast-1's type name (`"FLOAT16"`, ...).
    Name(String),
    /// An ONNX `TensorProto.DataType` number (Cast-6 and later).
    Number(i64),
}

/// The attributes of a `Cast` node as they appear in a model.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct CastAttributes {
    /// `to`: the target type (required).
    pub to: Option<CastTo>,
    /// `saturate` (Cast-19 and later; float8 targets): 1 (default) or 0.
    pub saturate: Option<i64>,
    /// `round_mode` (Cast-24 and later; FLOAT8E8M0 targets): `up` (default), `down` or `nearest`.
    pub round_mode: Option<String>,
}

/// Versions of `Cast` (the schema in force at opset N is the newest one <= N).
pub const CAST_VERSIONS: [i64; 10] = [1, 6, 9, 13, 19, 21, 23, 24, 25, 28];
/// Versions of `CastLike`.
pub const CAST_LIKE_VERSIONS: [i64; 6] = [15, 19, 21, 23, 24, 25];

/// The version of `Cast` that introduced `dtype` as an input or output type.
#[must_use]
pub fn first_cast_version(dtype: DType) -> Option<i64> {
    Some(match dtype {
        DType::Float16
        | DType::Float
        | DType::Double
        | DType::Int8
        | DType::Int16
        | DType::Int32
        | DType::Int64
        | DType::Uint8
        | DType::Uint16
        | DType::Uint32
        | DType::Uint64
        | DType::Bool => 1,
        DType::String => 9,
        DType::Bfloat16 => 13,
        DType::Float8E4M3FN | DType::Float8E4M3FNUZ | DType::Float8E5M2 | DType::Float8E5M2FNUZ => 19,
        DType::Int4 | DType::Uint4 => 21,
        DType::Float4E2M1 => 23,
        DType::Float8E8M0 => 24,
        DType::Int2 | DType::Uint2 => 25,
        DType::Float6E2M3 | DType::Float6E3M2 => 28,
        DType::Undefined | DType::Complex64 | DType::Complex128 => return None,
    })
}

fn check_type_at(op: &str, version: i64, dtype: DType, role: &str) -> Result<()> {
    match first_cast_version(dtype) {
        Some(first) if first <= version => Ok(()),
        Some(first) => Err(Error::InvalidOp {
            op: format!("{op}-{version}"),
            message: format!("{role} type {dtype} is not allowed before {op}-{first}"),
        }),
        None => Err(Error::InvalidOp {
            op: format!("{op}-{version}"),
            message: format!("{role} type {dtype} is not allowed"),
        }),
    }
}

fn options_from(
    op: &str,
    version: i64,
    to: DType,
    saturate: Option<i64>,
    round_mode: Option<&str>,
    profile: Profile,
) -> Result<CastOptions> {
    let name = format!("{op}-{version}");
    let bad = |message: String| Error::InvalidOp { op: name.clone(), message };
    if saturate.is_some() && version < 19 {
        return Err(bad("the saturate attribute exists from version 19".into()));
    }
    if round_mode.is_some() && version < 24 {
        return Err(bad("the round_mode attribute exists from version 24".into()));
    }
    let saturate = match saturate {
        None | Some(1) => true,
        Some(0) => false,
        Some(other) => return Err(bad(format!("saturate must be 0 or 1, not {other}"))),
    };
    let float8_target = to.is_float8() || to == DType::Float8E8M0;
    if !saturate && !float8_target && profile.policy().saturate_zero_needs_float8 {
        return Err(bad(format!("saturate=0 is only used for casts to float8 types, not {to} (onnxruntime)")));
    }
    let round_mode = match round_mode {
        None => RoundMode::Up,
        Some(text) => RoundMode::parse(text)
            .map_err(|_| bad(format!("round_mode must be up, down or nearest, not {}", crate::error::quoted(text))))?,
    };
    Ok(CastOptions { saturate, round_mode, profile })
}

/// An ONNX `Cast` node at opset `opset`: validates the attributes and the types the version allows,
/// then casts.
pub fn cast_op(input: &Tensor, attrs: &CastAttributes, opset: i64, profile: Profile) -> Result<Tensor> {
    let version = schema_version("Cast", &CAST_VERSIONS, opset)?;
    let name = format!("Cast-{version}");
    let to = match (&attrs.to, version) {
        (None, _) => return Err(Error::InvalidOp { op: name, message: "the to attribute is required".into() }),
        (Some(CastTo::Name(type_name)), 1) => DType::parse(type_name)?,
        (Some(CastTo::Name(_)), _) => {
            return Err(Error::InvalidOp { op: name, message: "to is an integer type number from version 6".into() })
        }
        (Some(CastTo::Number(n)), v) if v >= 6 => DType::from_onnx_number(*n)?,
        (Some(CastTo::Number(_)), _) => {
            return Err(Error::InvalidOp { op: name, message: "Cast-1 takes to as a type name string".into() })
        }
    };
    check_type_at("Cast", version, input.dtype(), "input")?;
    check_type_at("Cast", version, to, "output")?;
    let opts = options_from("Cast", version, to, attrs.saturate, attrs.round_mode.as_deref(), profile)?;
    cast(input, to, &opts)
}

/// An ONNX `CastLike` node at opset `opset`.
pub fn cast_like_op(
    input: &Tensor,
    target_type: &Tensor,
    saturate: Option<i64>,
    round_mode: Option<&str>,
    opset: i64,
    profile: Profile,
) -> Result<Tensor> {
    let version = schema_version("CastLike", &CAST_LIKE_VERSIONS, opset)?;
    // CastLike-15 allows what Cast-13 allows; later versions track Cast's additions.
    let type_version = if version == 15 { 13 } else { version };
    check_type_at("CastLike", type_version, input.dtype(), "input")?;
    check_type_at("CastLike", type_version, target_type.dtype(), "target")?;
    let opts = options_from("CastLike", version, target_type.dtype(), saturate, round_mode, profile)?;
    cast_like(input, target_type, &opts)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f32s(v: &[f32]) -> Tensor {
        Tensor::from_f32(v)
    }

    #[test]
    fn castlike_vector_of_research_12() {
        // float32 [1000, inf, -inf, nan, 3] like E4M3FN -> 7E 7E FE 7F 44; saturate=0 -> 7F 7F FF 7F 44.
        let x = f32s(&[1000.0, f32::INFINITY, f32::NEG_INFINITY, f32::NAN, 3.0]);
        let like = Tensor::from_codes(DType::Float8E4M3FN, vec![0], &[]).unwrap();
        for opset in [19, 21, 25] {
            let y = cast_like_op(&x, &like, None, None, opset, Profile::Spec).unwrap();
            assert_eq!(y.raw().unwrap(), [0x7E, 0x7E, 0xFE, 0x7F, 0x44]);
            let y = cast_like_op(&x, &like, Some(0), None, opset, Profile::OnnxRuntime).unwrap();
            assert_eq!(y.raw().unwrap(), [0x7F, 0x7F, 0xFF, 0x7F, 0x44]);
        }
        assert!(cast_like_op(&x, &like, None, None, 14, Profile::Spec).is_err());
    }

    #[test]
    fn versions_gate_types_and_attributes() {
        let x = f32s(&[1.0]);
        let to =
            |n: DType| CastAttributes { to: Some(CastTo::Number(i64::from(n.onnx_number()))), ..Default::default() };
        assert!(cast_op(&x, &to(DType::Float8E4M3FN), 18, Profile::Spec).unwrap_err().to_string().contains("Cast-19"));
        assert!(cast_op(&x, &to(DType::Float8E4M3FN), 19, Profile::Spec).is_ok());
        assert!(cast_op(&x, &to(DType::Int4), 20, Profile::Spec).is_err());
        assert!(cast_op(&x, &to(DType::Float4E2M1), 22, Profile::Spec).is_err());
        assert!(cast_op(&x, &to(DType::Float8E8M0), 23, Profile::Spec).is_err());
        assert!(cast_op(&x, &to(DType::Int2), 24, Profile::Spec).is_err());
        assert!(cast_op(&x, &to(DType::Float6E2M3), 27, Profile::Spec).is_err());
        assert!(cast_op(&x, &to(DType::Float6E2M3), 28, Profile::Spec).is_ok());
        assert!(cast_op(&x, &to(DType::String), 8, Profile::Spec).is_err());
        assert!(cast_op(&x, &to(DType::Bfloat16), 12, Profile::Spec).is_err());
        assert!(cast_op(&x, &to(DType::Complex64), 25, Profile::Spec).is_err());
        let with_round = CastAttributes { round_mode: Some("down".into()), ..to(DType::Float8E8M0) };
        assert!(cast_op(&x, &with_round, 24, Profile::Spec).is_ok());
        let early_round = CastAttributes { round_mode: Some("down".into()), ..to(DType::Float) };
        assert!(cast_op(&x, &early_round, 23, Profile::Spec).unwrap_err().to_string().contains("round_mode"));
        let bad_round = CastAttributes { round_mode: Some("sideways".into()), ..to(DType::Float8E8M0) };
        assert!(cast_op(&x, &bad_round, 24, Profile::Spec).unwrap_err().to_string().contains("sideways"));
        let early_sat = CastAttributes { saturate: Some(0), ..to(DType::Float16) };
        assert!(cast_op(&x, &early_sat, 13, Profile::Spec).is_err());
        // Cast-1 takes a type name.
        let v1 = CastAttributes { to: Some(CastTo::Name("FLOAT16".into())), ..Default::default() };
        assert_eq!(cast_op(&x, &v1, 1, Profile::Spec).unwrap().dtype(), DType::Float16);
        assert!(cast_op(&x, &v1, 6, Profile::Spec).is_err());
        assert!(cast_op(&x, &to(DType::Float16), 5, Profile::Spec).is_err());
        assert!(cast_op(&x, &to(DType::Float16), 0, Profile::Spec).is_err());
    }

    #[test]
    fn row_23_saturate_on_non_float8_targets() {
        let x = f32s(&[1.0]);
        let attrs = CastAttributes { to: Some(CastTo::Number(10)), saturate: Some(0), round_mode: None };
        assert!(cast_op(&x, &attrs, 21, Profile::Spec).is_ok());
        assert!(cast_op(&x, &attrs, 21, Profile::OnnxReference).is_ok());
        let err = cast_op(&x, &attrs, 21, Profile::OnnxRuntime).unwrap_err().to_string();
        assert!(err.contains("saturate=0"), "{err}");
        let e8m0 = CastAttributes { to: Some(CastTo::Number(24)), saturate: Some(0), round_mode: None };
        assert!(cast_op(&x, &e8m0, 24, Profile::OnnxRuntime).is_ok());
    }

    #[test]
    fn packed_outputs() {
        // research §3: float32 [1,-2,3] -> INT4 raw e1 03; float4 [0.5, 1.0, -6.0] -> 21 0f.
        let y = cast(&f32s(&[1.0, -2.0, 3.0]), DType::Int4, &CastOptions::default()).unwrap();
        assert_eq!(y.raw().unwrap(), [0xE1, 0x03]);
        let y = cast(&f32s(&[0.5, 1.0, -6.0]), DType::Float4E2M1, &CastOptions::default()).unwrap();
        assert_eq!(y.raw().unwrap(), [0x21, 0x0F]);
        let y = cast(&f32s(&[1.0, 2.0, 3.0, -1.0, 0.5]), DType::Float6E2M3, &CastOptions::default()).unwrap();
        assert_eq!(y.raw().unwrap(), [0x08, 0x44, 0xA1, 0x04]);
        let back = cast(&y, DType::Float, &CastOptions::default()).unwrap();
        assert_eq!(back.to_f32_vec().unwrap(), [1.0, 2.0, 3.0, -1.0, 0.5]);
    }

    #[test]
    fn complex_is_rejected() {
        let c = Tensor::from_raw(DType::Complex64, vec![1], vec![0; 8]).unwrap();
        assert!(cast(&c, DType::Float, &CastOptions::default()).unwrap_err().to_string().contains("complex"));
        assert!(cast(&f32s(&[1.0]), DType::Complex128, &CastOptions::default()).is_err());
    }
}
