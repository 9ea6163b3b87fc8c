//! # lowbit
//!
//! The bit-exact reference for low-precision numerics: ONNX `Cast` between every pair of data
//! types, with float8 (four variants, saturating or not), float6, float4, E8M0, bfloat16,
//! float16, packed int4/uint4/int2/uint2, bool and strings.
//!
//! Where to look:
//!
//! | what | where |
//! |---|---|
//! | the rounding rule (the one core every conversion goes through) | [`round`] |
//! | formats as data (field widths, bias, NaN/Inf encoding, zero) | [`format`] |
//! | the profile table (policy choices where ONNX implementations disagree) | [`profile`] |
//! | ONNX dtypes: numbers, names, aliases, packing | [`dtype`] |
//! | element-level `Cast` between numeric dtypes | [`convert`] |
//! | `Cast` / `CastLike` on tensors, op versions and attributes | [`cast`] |
//! | tensors and the ONNX byte layout (4-bit, 2-bit, float6 packing) | [`tensor`], [`packing`] |
//! | STRING elements in one buffer | [`texts`] |
//! | strings <-> numbers under each profile | [`strings`] |
//! | scalar types (`F8E4M3FN`, ..., `I4`, `U2`) | [`scalar`] |
//! | slice conversions in `half`'s style | [`slice`] |
//! | the bulk API: slices of every scalar type, saturating packing, fused quantize/dequantize, TensorProto bytes | [`bulk`] |
//! | plans: a conversion resolved once, then run over buffers with no per-element dispatch | [`plan`] |
//! | `lowbit bench` | [`bench`] |
//! | Range, Slice, Gather | [`ops`] |
//! | QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear; OCP Microscaling (MX) blocks with E8M0 scales | [`quant`] |
//! | ONNX files, the graph runner, the node-test runner | [`onnx`] |
//! | the exhaustive tables in `tables/` | [`tables`] |
//! | hardware verification: every rounding mode, IEEE flags, described formats (`e4m3,special=ieee`) | [`verify`] |
//!
//! ## Features
//!
//! | feature | what it gives |
//! |---|---|
//! | (default) | everything above, and the `lowbit` command line tool |
//!
//! ## The rule
//!
//! Every conversion decodes its input exactly ([`value::Value`]) and rounds **once** to the
//! target ([`round::encode`]). A float64 source is never rounded through float32.

#![deny(unsafe_code)]

pub mod bench;
pub mod bulk;
pub mod cast;
pub mod cli_cast;
pub mod cli_quantize;
pub mod cli_range4;
pub mod cli_verify;
pub mod convert;
pub mod dtype;
pub mod error;
pub mod format;
pub mod kernels;
pub mod onnx;
pub mod ops;
pub mod packing;
pub mod plan;
pub mod profile;
pub mod quant;
pub mod round;
pub mod scalar;
pub mod slice;
mod staging;
pub mod strings;
pub mod tables;
pub mod tensor;
pub mod texts;
pub mod value;
pub mod verify;

pub use bulk::{
    dequantize, dequantize_packed, pack_f32_saturating_into, pack_f32_wrapping_into, pack_saturating_into,
    pack_wrapping_into, quantize, quantize_packed, unpack_into, PackedQuantized, Quantized,
};
pub use convert::{CastOptions, RoundMode};
pub use dtype::DType;
pub use error::{Error, Result};
pub use format::FloatFormat;
pub use scalar::{F4E2M1, F6E2M3, F6E3M2, F8E4M3FN, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ, F8E8M0, I2, I4, U2, U4};
pub use slice::{NarrowFloatSliceExt, ScalarSliceExt, WideFloat};
pub use tensor::Tensor;
