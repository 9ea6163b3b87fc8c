//! **The profile table.** A profile is a set of policy choices, one per row of the decision table (`tables/profiles.md`, generated from [`ROWS`]) where
//! the ONNX text, the onnx reference and onnxruntime disagree. Conversion code reads these fields;
//! it never asks which profile it is running. [`ROWS`] says each row in words with the
//! observations behind the values; `tables/profiles.md` (generated from it, `lowbit profiles
//! --markdown`) is the whole decision table.
//!
//! | profile | bit-exact with |
//! |---|---|
//! | `spec` (default) | the ONNX operator text of the newest version and the technical notes, computed exactly and rounded once |
//! | `onnx-reference` | onnx 1.23.2 `ReferenceEvaluator` (numpy 2.4.6, ml_dtypes 0.6.0) |
//! | `onnxruntime` | onnxruntime 1.31.1, CPU execution provider |
//! | `openvino` | OpenVINO 2026.4 (its Cast is `spec`; only Range differs) |
//! | `ml-dtypes` | ml_dtypes 0.6.0 `astype` (numpy 2.4.6) |
//! | `xla` | jax/jaxlib 0.12.0.1, XLA on CPU under `jax.jit` |
//!
//! Where an implementation has no behaviour (it raises, or has no kernel), its profile does what
//! `spec` does: [`Policy::falls_back`] says where ([`Policy::cast_falls_back`],
//! [`Policy::sources_fall_back`], [`Policy::pairs_fall_back`], [`StringPolicy::fall_back`]).
//!
//! Where an implementation's answer depends on the element's position in the tensor (a vectorised
//! loop over whole blocks, then a scalar tail), the rule is data too: [`VectorBlock`] names the
//! pairs, the block length and the rows inside the blocks; plans run the blocks' prefix with its
//! own engine.

pub(crate) mod name;
mod op_rules;
mod policy;
mod profiles;
mod rows;

pub use op_rules::{NumberStyle, OpenVinoRange, RangeCount, RangeValues, RepeatedAxes, StringGrammar};
pub use policy::*;
pub use profiles::{ML_DTYPES, ONNXRUNTIME, ONNX_REFERENCE, OPENVINO, SPEC, XLA};
pub use rows::{OnnxText, Row, ROWS};
// The profile type's one public path is the crate root (`lowbit::Profile`).
pub(crate) use name::Profile;
