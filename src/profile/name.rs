//! The named profiles: their names on the command line and the policy each stands for.

use super::{Policy, ML_DTYPES, ONNXRUNTIME, ONNX_REFERENCE, OPENVINO, SPEC, XLA};
use crate::alloc_prelude::*;
use crate::dtype::DType;
use crate::error::{Error, Result};

/// A named profile.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Profile {
    /// `spec` (the default): the ONNX operator text of the newest version, computed exactly and
    /// rounded once; where the text is silent, the onnx reference's answer.
    #[default]
    Spec,
    /// `onnx-reference`: bit-exact with onnx's ReferenceEvaluator (numpy and ml_dtypes).
    OnnxReference,
    /// `onnxruntime`: bit-exact with onnxruntime's CPU execution provider.
    OnnxRuntime,
    /// `openvino`: `spec`'s Cast, OpenVINO's core reference for Range-1 and Range-4.
    OpenVino,
    /// `ml-dtypes`: bit-exact with ml_dtypes' `astype`.
    MlDtypes,
    /// `xla`: bit-exact with XLA on CPU (as jax runs it).
    Xla,
}

impl Profile {
    /// Every profile, in the order of the decision table.
    pub const ALL: [Profile; 6] = [
        Profile::Spec,
        Profile::OnnxReference,
        Profile::OnnxRuntime,
        Profile::OpenVino,
        Profile::MlDtypes,
        Profile::Xla,
    ];

    /// The profile's policy table.
    #[must_use]
    pub const fn policy(self) -> &'static Policy {
        match self {
            Profile::Spec => &SPEC,
            Profile::OnnxReference => &ONNX_REFERENCE,
            Profile::OnnxRuntime => &ONNXRUNTIME,
            Profile::OpenVino => &OPENVINO,
            Profile::MlDtypes => &ML_DTYPES,
            Profile::Xla => &XLA,
        }
    }

    /// The name on the command line (`spec`, `onnx-reference`, `onnxruntime`, `openvino`).
    #[must_use]
    pub const fn name(self) -> &'static str {
        self.policy().name
    }

    /// Every profile's name, in the order of [`Profile::ALL`]: the values `--profile` takes.
    pub const NAMES: [&'static str; Profile::ALL.len()] = {
        let mut names = [""; Profile::ALL.len()];
        let mut i = 0;
        while i < names.len() {
            names[i] = Profile::ALL[i].name();
            i += 1;
        }
        names
    };

    /// Parses a profile name.
    pub fn parse(name: &str) -> Result<Profile> {
        Profile::ALL.into_iter().find(|p| p.name() == name).ok_or_else(|| Error::InvalidOp {
            op: "profile".into(),
            message: format!(
                "unknown profile {}; valid profiles: {}",
                crate::error::quoted(name),
                Profile::NAMES.join(", ")
            ),
        })
    }

    /// What the profile is bit-exact with.
    #[must_use]
    pub const fn peer(self) -> &'static str {
        self.policy().peer
    }

    /// Every pair of castable dtypes (STRING included) the profile hands to `spec` because its
    /// implementation has no cast there.
    #[must_use]
    pub fn fallback_pairs(self) -> Vec<(DType, DType)> {
        let castable: Vec<DType> = DType::ALL
            .into_iter()
            .filter(|d| !matches!(d, DType::Undefined | DType::Complex64 | DType::Complex128))
            .collect();
        let policy = self.policy();
        castable
            .iter()
            .flat_map(|&from| castable.iter().map(move |&to| (from, to)))
            .filter(|&(from, to)| policy.falls_back(from, to))
            .collect()
    }
}
