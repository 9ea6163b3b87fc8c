//! # lowbit
//!
//! The bit-exact reference for low-precision numerics: ONNX `Cast` between every pair of data
//! types, with float8 (four variants, saturating or not), float6, float4, E8M0, bfloat16,
//! float16, packed int4/uint4/int2/uint2, bool and strings.
//!
//! Start here:
//!
//! ```
//! use lowbit::prelude::*;
//!
//! // A scalar: ONNX Cast's default rounding (nearest even, saturate=1): 300 lies between
//! // 288 = 1.125 * 2^8 (code 0 1111 001) and 320 = 1.25 * 2^8, nearer 288.
//! let x = F8E4M3FN::from_f32(300.0);
//! assert_eq!((x.to_bits(), x.to_f32()), (0x79, 288.0));
//!
//! // A tensor: Cast under a profile (here the `spec` default), any pair of ONNX dtypes.
//! let t = Tensor::from_f32(&[1.0, 464.0, f32::NAN]);
//! let y = lowbit::cast(&t, DType::Float8E4M3FN, &CastOptions::default())?;
//! assert_eq!(y.codes()?, [0x38, 0x7E, 0x7F]);
//!
//! // A plan: the conversion resolved once, then run over raw buffers with no per-element dispatch.
//! let plan = Plan::new(DType::Float, DType::Float8E5M2, &CastOptions::default())?;
//! let src: Vec<u8> = [1.5f32, -0.25].iter().flat_map(|v| v.to_le_bytes()).collect();
//! let mut dst = [0u8; 2];
//! plan.run(&src, &mut dst, 2)?;
//! assert_eq!(dst, [0x3E, 0xB4]);
//! # Ok::<(), lowbit::Error>(())
//! ```
//!
//! Where to look:
//!
//! | what | where |
//! |---|---|
//! | scalar types (`F8E4M3FN`, ..., `I4`, `U2`) and the trait they share | [`F8E4M3FN`], [`Scalar`] |
//! | slice conversions in `half`'s style | [`NarrowFloatSliceExt`], [`ScalarSliceExt`] |
//! | `Cast` / `CastLike` on tensors; attributes and op versions | [`cast()`], [`CastOptions`], [`CastAttributes`] |
//! | ONNX dtypes: numbers, names, aliases, packing | [`DType`] |
//! | tensors and STRING elements | [`Tensor`], [`Texts`] |
//! | plans: a conversion resolved once, then run over buffers | [`Plan`] |
//! | the profile table (where ONNX implementations disagree) | [`profile`] |
//! | the rounding core every conversion goes through | [`round`] |
//! | formats as data (field widths, bias, NaN/Inf encoding, zero) | [`format`](mod@format) |
//! | exact values of codes | [`Value`], [`Exact`] |
//! | the ONNX byte layout of 4-bit, 2-bit and float6 elements | [`packing`] |
//! | strings <-> numbers under each profile (Cast of STRING tensors: feature `strings`) | [`strings`] |
//! | the bulk API: slices of every scalar type, saturating packing, fused quantize/dequantize, TensorProto bytes | [`bulk`] |
//! | Range, Slice, Gather (feature `ops`) | [`ops`] |
//! | QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear; OCP Microscaling (MX) (feature `quant`) | [`quant`] |
//! | ONNX files, the graph runner, the node-test runner (feature `onnx`) | `onnx` |
//! | hardware verification: rounding modes, IEEE flags, described formats (feature `verify`) | `verify` |
//! | the exhaustive tables in `tables/` (feature `tables`) | `tables` |
//! | reading files within a limit; writing files all or nothing | [`files`], [`staging`] |
//! | safetensors and GGUF checkpoints: read memory-mapped, checked, written all or nothing (feature `checkpoint`) | `checkpoint` |
//!
//! Each item has one public path: the root for the items most programs use (their modules are
//! private), or the namespace above where the items belong together. The kernels behind plans are
//! not public.
//!
//! ## Features
//!
//! The core (dtypes, formats, values, the rounding core, profiles, plans and their kernels, the
//! scalar types, slices, text parsing, tensors and `Cast` between numeric types) is always built,
//! needs no optional dependency and, without the `std` feature, builds `#![no_std]` with `alloc`.
//! With `default-features = false` it pulls in `half` and `once_cell` (and what they use): a
//! crate that only wants the scalar types compiles 10 crates, lowbit included.
//!
//! | feature | default | what it gives |
//! |---|---|---|
//! | `std` | yes | [`files`], [`staging`], [`plan::Plan::run_stream`] and the plans' per-process caches, run-time CPU detection (without it: the build's target features), `LOWBIT_PORTABLE` |
//! | `strings` | yes | Cast to and from STRING ([`strings::TextWriter`], [`strings::TextReader`], [`strings::format_code`], exact decimals; `zmij`); without it such a Cast is an error naming the feature, and the scalar types' `FromStr` still parses exactly |
//! | `ops` | yes | [`ops`]: Range, Slice, Gather on tensors |
//! | `quant` | yes | [`quant`]: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, OCP MX; the fused [`bulk::quantize`] and [`bulk::dequantize`] |
//! | `onnx` | yes | [`onnx`]: TensorProto/ModelProto files (prost), the graph runner, the node-test runner (needs `std`, `strings`, `ops`, `quant`) |
//! | `verify` | yes | [`verify`]: described formats, every rounding mode, IEEE flags, vectors, check, sweep, diff (needs `std`, `strings`, `rayon`) |
//! | `tables` | yes | [`tables`]: generation and check of `tables/`, its `verify/` sweep digests included (needs `std`, `strings`, `rayon`, `verify`; sha2) |
//! | `checkpoint` | yes | `checkpoint`: safetensors (the `safetensors` crate) and GGUF v3 files, memory-mapped (`memmap2`), shards through their index (needs `std`, `quant`) |
//! | `rayon` | yes | [`plan::Plan::run_parallel`] on several threads (on the calling thread without it; needs `std`) |
//! | `cli` | yes | the `lowbit` command line tool (`src/bin/lowbit/`, one file per command: argument parsing and printing over this library; clap, serde_json, indicatif) |
//! | `avx512` | no | the plans' engines compiled a third time with AVX-512 (F, BW, VL, DQ), run where the CPU has it (`LOWBIT_NO_AVX512=1` keeps AVX2); needs Rust 1.89, above the crate's MSRV |
//! | `serde` | no | `Serialize`/`Deserialize` of the scalar types (as values; as codes with `serde_bits`) |
//! | `num-traits` | no | `Zero`, `One`, `Num`, `NumCast`, `FloatCore`, `Float`, `Bounded`, `Signed`, ... on the scalar types |
//! | `bytemuck` | no | `Pod`/`NoUninit`/`CheckedBitPattern` and zero-copy byte views of the scalar types |
//!
//! ## The rule
//!
//! Every conversion decodes its input exactly ([`value::Value`]) and rounds **once** to the
//! target ([`round::encode`]). A float64 source is never rounded through float32.

#![cfg_attr(not(feature = "std"), no_std)]
#![deny(unsafe_code)]
#![warn(missing_docs)]

// The core allocates through `alloc` only, so that it can build without `std`.
extern crate alloc;

/// What `std`'s prelude gives and code that also builds `no_std` imports from `alloc`.
mod alloc_prelude {
    pub(crate) use alloc::borrow::ToOwned;
    pub(crate) use alloc::boxed::Box;
    pub(crate) use alloc::string::{String, ToString};
    pub(crate) use alloc::vec::Vec;
    pub(crate) use alloc::{format, vec};
}
mod fmath;
mod kernels;
// Without `arguments` (its public path) some feature sets use only part of it.
#[cfg(any(all(feature = "quant", feature = "std"), feature = "verify"))]
#[cfg_attr(not(all(feature = "std", feature = "quant", feature = "strings")), allow(dead_code))]
mod names;
mod once;

// Public namespaces.
#[cfg(all(feature = "std", feature = "quant", feature = "strings"))]
pub mod arguments;
pub mod bulk;
#[cfg(feature = "checkpoint")]
pub mod checkpoint;
#[cfg(feature = "dot")]
pub mod dot;
#[cfg(feature = "std")]
pub mod files;
pub mod format;
#[cfg(feature = "onnx")]
pub mod onnx;
#[cfg(any(feature = "ops", feature = "quant"))]
mod op_output;
#[cfg(feature = "ops")]
pub mod ops;
mod opset;
pub mod packing;
mod plan;
pub mod profile;
#[cfg(feature = "quant")]
pub mod quant;
pub mod round;
#[cfg(feature = "std")]
pub mod staging;
pub mod strings;
#[cfg(feature = "tables")]
pub mod tables;
mod value;
#[cfg(feature = "verify")]
pub mod verify;

// Homes of the items re-exported at the root (one public path each).
mod cast;
mod convert;
mod dtype;
mod error;
mod scalar;
mod slice;
mod tensor;
mod texts;

pub use cast::{cast, cast_like, cast_like_op, cast_op, CastAttributes, CastTo, CAST_LIKE_VERSIONS, CAST_VERSIONS};
pub use convert::{convert_code, decode_element, encode_element, CastOptions, Element, RoundMode};
pub use dtype::{DType, Kind, Packing};
pub use error::{BudgetKind, Error, Result};
pub use opset::NEWEST_OPSET;
pub use plan::Plan;
#[cfg(feature = "std")]
pub use plan::{StreamError, STREAM_PIECE};
pub use profile::name::Profile;
#[cfg(feature = "serde")]
pub use scalar::serde_bits;
pub use scalar::{
    Bits, Scalar, F4E2M1, F6E2M3, F6E3M2, F8E4M3FN, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ, F8E8M0, I2, I4, U2, U4,
};
pub use slice::{NarrowFloatSliceExt, ScalarSliceExt, WideFloat};
pub use tensor::{Data, Tensor};
pub use texts::Texts;
pub use value::{Exact, Value};

/// Not public API. The integration tests, the fuzz targets and the benches compare the kernels
/// with the rounding core, and live outside the crate, so these need a path; nothing here is
/// documented or stable, and users reach the kernels through plans, slices and the scalar types.
#[doc(hidden)]
pub mod __private {
    pub use crate::convert::convert_code_in_block;
    #[cfg(feature = "quant")]
    pub use crate::kernels::quantize::IntegerQuantizer;
    pub use crate::kernels::{decode::DecodeTable, encode::IntegerKernel, F32Kernel};
}

/// The names most programs use: `use lowbit::prelude::*;`.
pub mod prelude {
    pub use crate::{
        cast, CastOptions, DType, Error, NarrowFloatSliceExt, Plan, Profile, RoundMode, Scalar, ScalarSliceExt, Tensor,
        F4E2M1, F6E2M3, F6E3M2, F8E4M3FN, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ, F8E8M0, I2, I4, U2, U4,
    };
}

/// The README, whose Rust example `cargo test` compiles and runs as a doctest so that it cannot
/// drift from the API.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

/// The guide's library chapter, whose Rust example is a doctest too.
#[cfg(doctest)]
#[doc = include_str!("../docs/guide/library.md")]
pub struct GuideLibraryDoctests;
