//! llama.cpp's quantization mixtures (`llama_ftype`: `Q4_K_M`, `IQ2_XS`, ...) as data: which ggml
//! type `llama_model_quantize` gives each tensor of a GGUF file.
//!
//! Source: llama.cpp commit 0c1e57098bba43ac29e6e3b677cdceebdd22334f (as vendored by
//! llama-cpp-python 0.3.36), llama.cpp's `llama-quant.cpp`: `llama_ftype_get_default_type` ([`FTYPES`]),
//! `tensor_get_category` ([`ROLES`]), `tensor_allows_quantization` ([`KEPT`]),
//! `llama_tensor_get_type_impl` ([`RULES`], [`ADJUSTMENTS`]), `tensor_type_fallback`
//! ([`FALLBACKS`]), `tensor_requires_imatrix` ([`NEEDS_IMATRIX`]) and the tensor order of
//! `llama_model_loader::weights_map` (layer, then name). Checked against what that llama.cpp
//! wrote for every ftype, with and without an importance matrix, by
//! `scripts/gen_llama_mixture_fixtures.py` (`tests/ggml_mixtures.rs`).
//!
//! The rules run over the tensors in llama.cpp's order, because some count: `attn_v` (with
//! `attn_qkv` and `attn_kv_b`) by how many came before, `ffn_down`/`ffn_gate`/`ffn_up` by their
//! layer (the count before them in a dense model, the `blk.N.` of the name in a mixture of
//! experts). What the rules do not cover, as in llama.cpp: the `--tensor-type`,
//! `--output-tensor-type`, `--token-embedding-type`, `--pure` and `--leave-output-tensor`
//! options (lowbit writes the defaults), and the GLM5-next and BailingMoE3 exceptions.
//! In that source the `attn_qkv` branch of `llama_tensor_get_type_impl` is never reached
//! (`attn_qkv` is counted as `attn_v` first), so no row repeats it.

use super::{checkpoint_error, GgmlType};
use crate::error::{Error, Result};
use std::path::Path;

/// One `llama_ftype`: llama-quantize's name, the number `general.file_type` stores, and the
/// ggml type its tensors get unless a rule says otherwise.
#[derive(Clone, Copy, Debug)]
pub struct Ftype {
    /// llama-quantize's name (`Q4_K_M`).
    pub name: &'static str,
    /// The `llama_ftype` value.
    pub id: u32,
    /// `llama_ftype_get_default_type`.
    pub default: &'static str,
}

const fn ft(name: &'static str, id: u32, default: &'static str) -> Ftype {
    Ftype { name, id, default }
}

/// Every `llama_ftype` lowbit writes (llama.h; `Q2_0`'s ggml type is not in gguf-py 0.19.0 and
/// `NVFP4` has no default type in `llama_ftype_get_default_type`, so llama.cpp refuses it).
pub const FTYPES: &[Ftype] = &[
    ft("F32", 0, "F32"),
    ft("F16", 1, "F16"),
    ft("Q4_0", 2, "Q4_0"),
    ft("Q4_1", 3, "Q4_1"),
    ft("Q8_0", 7, "Q8_0"),
    ft("Q5_0", 8, "Q5_0"),
    ft("Q5_1", 9, "Q5_1"),
    ft("Q2_K", 10, "Q2_K"),
    ft("Q3_K_S", 11, "Q3_K"),
    ft("Q3_K_M", 12, "Q3_K"),
    ft("Q3_K_L", 13, "Q3_K"),
    ft("Q4_K_S", 14, "Q4_K"),
    ft("Q4_K_M", 15, "Q4_K"),
    ft("Q5_K_S", 16, "Q5_K"),
    ft("Q5_K_M", 17, "Q5_K"),
    ft("Q6_K", 18, "Q6_K"),
    ft("IQ2_XXS", 19, "IQ2_XXS"),
    ft("IQ2_XS", 20, "IQ2_XS"),
    ft("Q2_K_S", 21, "Q2_K"),
    ft("IQ3_XS", 22, "IQ3_S"),
    ft("IQ3_XXS", 23, "IQ3_XXS"),
    ft("IQ1_S", 24, "IQ1_S"),
    ft("IQ4_NL", 25, "IQ4_NL"),
    ft("IQ3_S", 26, "IQ3_S"),
    ft("IQ3_M", 27, "IQ3_S"),
    ft("IQ2_S", 28, "IQ2_XS"),
    ft("IQ2_M", 29, "IQ2_S"),
    ft("IQ4_XS", 30, "IQ4_XS"),
    ft("IQ1_M", 31, "IQ1_M"),
    ft("BF16", 32, "BF16"),
    ft("TQ1_0", 36, "TQ1_0"),
    ft("TQ2_0", 37, "TQ2_0"),
    ft("MXFP4_MOE", 38, "MXFP4"),
    ft("Q1_0", 40, "Q1_0"),
];

/// The ftype named `name` (llama-quantize's spelling, upper case).
#[must_use]
pub fn ftype(name: &str) -> Option<&'static Ftype> {
    FTYPES.iter().find(|f| f.name == name)
}

/// What a tensor is to the rules (`tensor_category`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// `output.weight`, and `token_embd.weight` when the model has no `output.weight` (tied).
    Output,
    /// `token_embd.weight`, `per_layer_token_embd.weight`.
    TokenEmbd,
    /// `attn_q.weight`
    AttnQ,
    /// `attn_k.weight`
    AttnK,
    /// `attn_v.weight`, `attn_qkv.weight`, `attn_kv_b.weight`: one counter, one set of rules.
    AttnV,
    /// `attn_output.weight`
    AttnOutput,
    /// `ffn_up*`
    FfnUp,
    /// `ffn_gate*`
    FfnGate,
    /// `ffn_down*`
    FfnDown,
    /// Anything else.
    Other,
}

/// How a name is matched.
#[derive(Clone, Copy, Debug)]
enum Match {
    Exact(&'static str),
    Contains(&'static str),
}

impl Match {
    fn matches(self, name: &str) -> bool {
        match self {
            Match::Exact(s) => name == s,
            Match::Contains(s) => name.contains(s),
        }
    }
}

/// `tensor_get_category`, first match wins.
const ROLES: &[(Match, Role)] = &[
    (Match::Exact("output.weight"), Role::Output),
    (Match::Exact("token_embd.weight"), Role::TokenEmbd),
    (Match::Exact("per_layer_token_embd.weight"), Role::TokenEmbd),
    (Match::Contains("attn_qkv.weight"), Role::AttnV),
    (Match::Contains("attn_kv_b.weight"), Role::AttnV),
    (Match::Contains("attn_v.weight"), Role::AttnV),
    (Match::Contains("attn_k.weight"), Role::AttnK),
    (Match::Contains("attn_q.weight"), Role::AttnQ),
    (Match::Contains("attn_output.weight"), Role::AttnOutput),
    (Match::Contains("ffn_up"), Role::FfnUp),
    (Match::Contains("ffn_gate"), Role::FfnGate),
    (Match::Contains("ffn_down"), Role::FfnDown),
];

pub(crate) fn role_of(name: &str) -> Role {
    ROLES.iter().find(|(m, _)| m.matches(name)).map_or(Role::Other, |&(_, r)| r)
}

/// `tensor_allows_quantization`: a tensor of two or more dimensions whose name ends in `weight`
/// is quantized unless its name matches one of these (the architecture-independent ones, and
/// the names llama.cpp's `LLM_TN` gives the positional and token-type embeddings).
const KEPT: &[Match] = &[
    Match::Contains("_norm.weight"),
    Match::Contains("ffn_gate_inp.weight"),
    Match::Contains("ffn_gate_tid2eid.weight"),
    Match::Contains("altup"),
    Match::Contains("laurel"),
    Match::Contains("per_layer_model_proj"),
    Match::Exact("position_embd.weight"),
    Match::Exact("token_types.weight"),
    Match::Contains("ssm_conv1d"),
    Match::Contains("shortconv.conv.weight"),
    Match::Contains("indexer.k_proj.weight"),
    Match::Contains("indexer.q_proj.weight"),
    Match::Contains("time_mix_first.weight"),
    Match::Contains("time_mix_w0.weight"),
    Match::Contains("time_mix_w1.weight"),
    Match::Contains("time_mix_w2.weight"),
    Match::Contains("time_mix_v0.weight"),
    Match::Contains("time_mix_v1.weight"),
    Match::Contains("time_mix_v2.weight"),
    Match::Contains("time_mix_a0.weight"),
    Match::Contains("time_mix_a1.weight"),
    Match::Contains("time_mix_a2.weight"),
    Match::Contains("time_mix_g1.weight"),
    Match::Contains("time_mix_g2.weight"),
    Match::Contains("time_mix_decay_w1.weight"),
    Match::Contains("time_mix_decay_w2.weight"),
    Match::Contains("time_mix_lerp_fused.weight"),
    Match::Contains("attn_rel_b.weight"),
    Match::Contains(".position_embd"),
    Match::Contains("sam.pos_embd"),
    Match::Contains("sam.neck."),
    Match::Contains("sam.net_"),
    Match::Contains(".rel_pos"),
    Match::Contains(".patch_embd"),
    Match::Contains(".patch_merger"),
    Match::Contains("a.rvq.codebook"),
    Match::Contains("mm.a.code_embd"),
];

/// Which position a layer rule reads.
#[derive(Clone, Copy, Debug)]
enum Pos {
    /// The tensor's layer (`layer_info`): the count of its role before it, or with experts the
    /// `blk.N.` of its name; out of `block_count`.
    Layer,
    /// The count of its role before it, out of `block_count` (the I-quants' `ffn_down` rule).
    Count,
    /// The count of `attn_v`-like tensors before it, out of how many the model has.
    AttnV,
}

/// A condition of a rule (all of a rule's must hold).
#[derive(Clone, Copy, Debug)]
enum Cond {
    /// `use_more_bits(i, n)`: `i < n/8 || i >= 7n/8 || (i - n/8) % 3 == 2`.
    UseMoreBits(Pos),
    /// `i < n/d`.
    Below(Pos, usize),
    /// `n/8 <= i < 7n/8`.
    Middle(Pos),
    /// `i_attention_wv < k`.
    AttnVBefore(usize),
    /// `n_head / n_head_kv >= 4`.
    GqaAtLeast4,
    /// `n_expert >= 4`.
    ExpertsAtLeast4,
    /// `n_expert == 8`.
    Experts8,
    /// Not `n_expert == 8`.
    NotExperts8,
    /// An importance matrix is given.
    Imatrix,
    /// No importance matrix is given.
    NoImatrix,
    /// The architecture (`general.architecture`) is this one.
    Arch(&'static str),
    /// The architecture is not this one.
    NotArch(&'static str),
    /// The row (innermost dimension) is not a multiple of the ftype default type's block.
    RowNotDefaultBlocks,
    /// The ftype's default type is not this one.
    DefaultIsNot(&'static str),
    /// A third dimension above 1 (stacked experts).
    Stacked,
    /// llama.cpp calls the model 70B ([`ModelFacts::is_70b`]).
    Model70B,
}

/// What a rule gives.
#[derive(Clone, Copy, Debug)]
enum Pick {
    /// This ggml type.
    Type(&'static str),
    /// The ftype's default type (the rule only stops the search).
    Default,
}

/// One row of `llama_tensor_get_type_impl`: for these roles and ftypes (empty: any), when every
/// condition holds, this type. The first row that matches decides.
#[derive(Clone, Copy, Debug)]
struct Rule {
    roles: &'static [Role],
    ftypes: &'static [&'static str],
    when: &'static [Cond],
    pick: Pick,
}

const fn rule(roles: &'static [Role], ftypes: &'static [&'static str], when: &'static [Cond], pick: Pick) -> Rule {
    Rule { roles, ftypes, when, pick }
}

const fn to(t: &'static str) -> Pick {
    Pick::Type(t)
}

use Cond::{
    Arch, AttnVBefore, Below, DefaultIsNot, Experts8, ExpertsAtLeast4, GqaAtLeast4, Imatrix, Middle, NoImatrix,
    NotArch, NotExperts8, RowNotDefaultBlocks, Stacked, UseMoreBits,
};
use Pick::Default as Keep;
use Role::{AttnK, AttnOutput, AttnQ, AttnV, FfnDown, FfnGate, FfnUp, Output, TokenEmbd};

const ANY: &[&str] = &[];
const EVERY_ROLE: &[Role] = &[Output, TokenEmbd, AttnQ, AttnK, AttnV, AttnOutput, FfnUp, FfnGate, FfnDown, Role::Other];
/// The ftypes of the I-quant branch (`IQ2_XXS ... IQ1_M`).
const IQ2_GROUP: &[&str] = &["IQ2_XXS", "IQ2_XS", "IQ1_S", "IQ2_S", "IQ2_M", "IQ1_M"];
const IQ2_S_M: &[&str] = &["IQ2_S", "IQ2_M"];

/// `llama_tensor_get_type_impl`'s branches in its order, as rows.
const RULES: &[Rule] = &[
    // The output head (and tied token embeddings).
    rule(&[Output], &["MXFP4_MOE"], &[], to("Q8_0")),
    rule(&[Output], ANY, &[Arch("falcon")], to("Q8_0")),
    rule(&[Output], ANY, &[RowNotDefaultBlocks], to("Q8_0")),
    rule(&[Output], &["IQ2_XXS", "IQ2_XS", "IQ3_XXS", "IQ1_S", "IQ2_S", "IQ2_M", "IQ1_M"], &[], to("Q5_K")),
    rule(&[Output], ANY, &[DefaultIsNot("Q8_0")], to("Q6_K")),
    rule(&[Output], ANY, &[], Keep),
    // MXFP4_MOE: stacked experts MXFP4, the rest Q8_0.
    rule(EVERY_ROLE, &["MXFP4_MOE"], &[Stacked], to("MXFP4")),
    rule(EVERY_ROLE, &["MXFP4_MOE"], &[], to("Q8_0")),
    // Token embeddings.
    rule(&[TokenEmbd], &["IQ2_XXS", "IQ2_XS", "IQ1_S", "IQ1_M"], &[], to("Q2_K")),
    rule(&[TokenEmbd], &["IQ2_S", "IQ2_M", "IQ3_XXS"], &[], to("IQ3_S")),
    rule(&[TokenEmbd], &["TQ1_0", "TQ2_0", "Q2_0"], &[], to("Q4_K")),
    rule(&[TokenEmbd], ANY, &[], Keep),
    // The 1- and 2-bit I-quants.
    rule(&[AttnV], IQ2_GROUP, &[GqaAtLeast4], to("Q4_K")),
    rule(&[AttnV], IQ2_GROUP, &[ExpertsAtLeast4], to("Q4_K")),
    rule(&[AttnV], IQ2_S_M, &[], to("IQ3_S")),
    rule(&[AttnV], IQ2_GROUP, &[], to("Q2_K")),
    rule(&[AttnK], IQ2_GROUP, &[Experts8], to("Q4_K")),
    rule(&[FfnDown], IQ2_S_M, &[Below(Pos::Count, 8)], to("IQ3_S")),
    rule(&[FfnDown], IQ2_GROUP, &[Below(Pos::Count, 8)], to("Q2_K")),
    rule(&[AttnOutput], IQ2_GROUP, &[Experts8], to("Q5_K")),
    rule(&[AttnOutput], &["IQ1_S", "IQ1_M"], &[], to("IQ2_XXS")),
    rule(&[AttnOutput], IQ2_S_M, &[], to("IQ3_S")),
    rule(EVERY_ROLE, IQ2_GROUP, &[], Keep),
    // attn_v (then ADJUSTMENTS).
    rule(&[AttnV], &["Q2_K"], &[GqaAtLeast4], to("Q4_K")),
    rule(&[AttnV], &["Q2_K"], &[], to("Q3_K")),
    rule(&[AttnV], &["Q2_K_S"], &[GqaAtLeast4], to("Q4_K")),
    rule(&[AttnV], &["IQ3_XXS"], &[GqaAtLeast4], to("Q4_K")),
    rule(&[AttnV], &["IQ3_XXS"], &[NoImatrix], to("IQ3_S")),
    rule(&[AttnV], &["IQ3_XXS"], &[], to("IQ3_XXS")),
    rule(&[AttnV], &["IQ3_XS", "IQ3_S"], &[GqaAtLeast4], to("Q4_K")),
    rule(&[AttnV], &["IQ3_M"], &[], to("Q4_K")),
    rule(&[AttnV], &["Q3_K_M"], &[AttnVBefore(2)], to("Q5_K")),
    rule(&[AttnV], &["Q3_K_M"], &[], to("Q4_K")),
    rule(&[AttnV], &["Q3_K_L"], &[], to("Q5_K")),
    rule(&[AttnV], &["IQ4_NL", "IQ4_XS"], &[GqaAtLeast4], to("Q5_K")),
    rule(&[AttnV], &["Q4_K_M", "Q5_K_M"], &[UseMoreBits(Pos::AttnV)], to("Q6_K")),
    rule(&[AttnV], &["Q4_K_S"], &[AttnVBefore(4)], to("Q5_K")),
    rule(&[AttnV], ANY, &[], Keep),
    // attn_k, attn_q.
    rule(&[AttnK], ANY, &[Experts8], to("Q8_0")),
    rule(&[AttnK, AttnQ], &["IQ3_XS"], &[], to("IQ3_XXS")),
    rule(&[AttnK, AttnQ], &["IQ3_XXS"], &[], to("IQ2_S")),
    // ffn_down.
    rule(&[FfnDown], &["Q2_K"], &[], to("Q3_K")),
    rule(&[FfnDown], &["Q2_K_S"], &[Below(Pos::Layer, 8)], to("Q4_K")),
    rule(&[FfnDown], &["Q2_K_S"], &[], Keep),
    rule(&[FfnDown], &["IQ3_XXS"], &[NoImatrix, Below(Pos::Layer, 8)], to("Q4_K")),
    rule(&[FfnDown], &["IQ3_XXS"], &[NoImatrix], to("Q3_K")),
    rule(&[FfnDown], &["Q3_K_M"], &[Below(Pos::Layer, 16)], to("Q5_K")),
    rule(&[FfnDown], &["Q3_K_M"], &[NotArch("falcon")], to("Q4_K")),
    rule(&[FfnDown], &["Q3_K_M"], &[UseMoreBits(Pos::Layer)], to("Q4_K")),
    rule(&[FfnDown], &["Q3_K_M"], &[], to("Q3_K")),
    rule(&[FfnDown], &["IQ3_M"], &[Below(Pos::Layer, 8)], to("Q4_K")),
    rule(&[FfnDown], &["IQ3_M"], &[Experts8, UseMoreBits(Pos::Layer)], to("Q4_K")),
    rule(&[FfnDown], &["Q3_K_L"], &[Arch("falcon")], to("Q4_K")),
    rule(&[FfnDown], &["Q3_K_L"], &[], to("Q5_K")),
    rule(&[FfnDown], &["Q4_K_M"], &[Arch("falcon"), Below(Pos::Layer, 16)], to("Q6_K")),
    rule(&[FfnDown], &["Q4_K_M"], &[Arch("falcon"), UseMoreBits(Pos::Layer)], to("Q5_K")),
    rule(&[FfnDown], &["Q4_K_M"], &[Arch("falcon")], to("Q4_K")),
    rule(&[FfnDown], &["Q4_K_M"], &[UseMoreBits(Pos::Layer)], to("Q6_K")),
    rule(&[FfnDown], &["Q4_K_M"], &[], Keep),
    rule(&[FfnDown], &["IQ4_NL", "IQ4_XS"], &[Below(Pos::Layer, 8), NoImatrix], to("Q5_K")),
    rule(&[FfnDown], &["Q5_K_M"], &[UseMoreBits(Pos::Layer)], to("Q6_K")),
    rule(&[FfnDown], &["Q4_K_S"], &[NotArch("falcon"), Below(Pos::Layer, 8)], to("Q5_K")),
    rule(&[FfnDown], &["Q4_0"], &[Imatrix, Below(Pos::Layer, 8)], to("Q4_1")),
    rule(&[FfnDown], &["Q5_0"], &[Imatrix, Below(Pos::Layer, 8)], to("Q5_1")),
    rule(&[FfnDown], ANY, &[], Keep),
    // attn_output.
    rule(
        &[AttnOutput],
        &["Q2_K", "IQ3_XS", "IQ3_XXS", "Q3_K_S", "Q3_K_M", "IQ4_NL", "Q4_K_S", "Q4_K_M", "IQ3_S", "IQ3_M", "IQ4_XS"],
        &[NotArch("falcon"), Experts8],
        to("Q5_K"),
    ),
    rule(&[AttnOutput], &["Q2_K"], &[NotArch("falcon"), NotExperts8], to("Q3_K")),
    rule(&[AttnOutput], &["IQ3_XXS"], &[NotArch("falcon"), NotExperts8], to("IQ3_S")),
    rule(&[AttnOutput], &["Q3_K_M"], &[NotArch("falcon"), NotExperts8], to("Q4_K")),
    rule(&[AttnOutput], &["Q3_K_L"], &[NotArch("falcon"), NotExperts8], to("Q5_K")),
    rule(&[AttnOutput], &["IQ3_M"], &[NotArch("falcon"), NotExperts8], to("Q4_K")),
    rule(&[AttnOutput], &["Q3_K_L"], &[Arch("falcon")], to("Q4_K")),
    // ffn_gate, ffn_up.
    rule(&[FfnGate, FfnUp], &["IQ3_XS"], &[Middle(Pos::Layer)], to("IQ3_XXS")),
];

/// After the `attn_v` rows (llama.cpp's 70B and 8-expert exceptions): for `attn_v`-like
/// tensors outside the I-quant and MXFP4_MOE branches, (condition, from types (empty: any), to).
const ADJUSTMENTS: &[(Cond, &[&str], &str)] =
    &[(Cond::Model70B, &["Q3_K", "Q4_K"], "Q5_K"), (Cond::Experts8, &[], "Q8_0")];

/// The ftypes whose `attn_v` tensors are decided by another branch (the I-quants', MXFP4_MOE's),
/// so that ADJUSTMENTS do not follow.
const OTHER_ATTN_V_BRANCH: &[&str] = &["IQ2_XXS", "IQ2_XS", "IQ1_S", "IQ2_S", "IQ2_M", "IQ1_M", "MXFP4_MOE"];

/// The ftypes whose branch counts no tensor (MXFP4_MOE's does not advance llama.cpp's
/// `i_attention_wv`, `i_ffn_*` counters).
const UNCOUNTED: &[&str] = &["MXFP4_MOE"];

/// `tensor_type_fallback`: a type whose block does not divide the row becomes this one; if
/// that one's block does not either (or the type has no row here and blocks of 32 or fewer), F16.
const FALLBACKS: &[(&str, &str)] = &[
    ("IQ1_S", "IQ4_NL"),
    ("IQ1_M", "IQ4_NL"),
    ("IQ2_XXS", "IQ4_NL"),
    ("IQ2_XS", "IQ4_NL"),
    ("IQ2_S", "IQ4_NL"),
    ("IQ3_XXS", "IQ4_NL"),
    ("IQ3_S", "IQ4_NL"),
    ("IQ4_XS", "IQ4_NL"),
    ("Q2_0", "Q4_0"),
    ("Q2_K", "Q4_0"),
    ("Q3_K", "Q4_0"),
    ("TQ1_0", "Q4_0"),
    ("TQ2_0", "Q4_0"),
    ("Q4_K", "Q5_0"),
    ("Q5_K", "Q5_1"),
    ("Q6_K", "Q8_0"),
];

/// `tensor_requires_imatrix`: these target types need an importance matrix (except for the
/// token embeddings and the output head); Q2_K only in a Q2_K_S file.
const NEEDS_IMATRIX: &[(&str, &[&str])] = &[
    ("IQ3_XXS", ANY),
    ("IQ2_XXS", ANY),
    ("IQ2_XS", ANY),
    ("IQ2_S", ANY),
    ("IQ1_M", ANY),
    ("IQ1_S", ANY),
    ("Q2_K", &["Q2_K_S"]),
];

/// The model's hyper-parameters the rules read (from the GGUF metadata).
#[derive(Clone, Debug, Default)]
pub struct ModelFacts {
    /// `general.architecture`.
    pub arch: String,
    /// Whether llama.cpp's `load_hparams` calls the model `LLM_TYPE_70B` (for llama: 80 layers
    /// and fewer KV heads than heads).
    pub is_70b: bool,
    /// `ARCH.block_count`.
    pub n_layer: usize,
    /// `ARCH.attention.head_count`.
    pub n_head: usize,
    /// `ARCH.attention.head_count_kv` (default: `n_head`).
    pub n_head_kv: usize,
    /// `ARCH.expert_count` (default 0).
    pub n_expert: usize,
}

/// One tensor as the rules see it.
#[derive(Clone, Debug)]
pub struct MixtureInput<'a> {
    /// Its name.
    pub name: &'a str,
    /// Its dimensions, innermost first (ggml's `ne`).
    pub ne: Vec<usize>,
    /// Its type in the input file.
    pub ggml: GgmlType,
}

/// What llama.cpp does with one tensor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MixtureChoice {
    /// Its index in the input list.
    pub input: usize,
    /// The type written.
    pub ggml: GgmlType,
    /// Whether llama.cpp quantizes it (a 2-D+ weight it allows) rather than copying it.
    pub quantized: bool,
    /// Whether its target type needs an importance matrix.
    pub needs_imatrix: bool,
}

/// llama.cpp's order of a GGUF's tensors (`weights_map`: by the `N` of `blk.N.`, names without
/// one first, then by name).
#[must_use]
pub fn llama_order(names: &[&str]) -> Vec<usize> {
    fn layer(name: &str) -> i64 {
        // sscanf("blk.%d.") semantics: the digits after "blk." (sign allowed), else -1.
        let Some(rest) = name.strip_prefix("blk.") else { return -1 };
        let digits: String = rest.chars().take_while(|c| c.is_ascii_digit() || *c == '-' || *c == '+').collect();
        digits.parse().unwrap_or(-1)
    }
    let mut order: Vec<usize> = (0..names.len()).collect();
    order.sort_by(|&a, &b| {
        layer(names[a]).cmp(&layer(names[b])).then_with(|| names[a].as_bytes().cmp(names[b].as_bytes()))
    });
    order
}

fn ggml(name: &str) -> GgmlType {
    GgmlType::from_name(name).unwrap_or_else(|| unreachable!("every type the rules name is a ggml type: {name}"))
}

fn is_quantized(t: GgmlType) -> bool {
    t.plain().is_none()
}

/// Where the counters stand for one tensor.
struct Position {
    count: usize,
    layer: usize,
    attn_v: usize,
    n_attn_v: usize,
    n_layer: usize,
}

fn use_more_bits(i: usize, n: usize) -> bool {
    let (i, n) = (i as i64, n as i64);
    i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2
}

fn holds(c: Cond, ftype: &Ftype, facts: &ModelFacts, imatrix: bool, t: &MixtureInput, at: &Position) -> bool {
    let pos = |p: Pos| match p {
        Pos::Layer => (at.layer, at.n_layer),
        Pos::Count => (at.count, at.n_layer),
        Pos::AttnV => (at.attn_v, at.n_attn_v),
    };
    match c {
        Cond::UseMoreBits(p) => {
            let (i, n) = pos(p);
            use_more_bits(i, n)
        }
        Cond::Below(p, d) => {
            let (i, n) = pos(p);
            i < n / d
        }
        Cond::Middle(p) => {
            let (i, n) = pos(p);
            i >= n / 8 && i < 7 * n / 8
        }
        Cond::AttnVBefore(k) => at.attn_v < k,
        // n_gqa() is n_head / n_head_kv (0 without KV heads).
        Cond::GqaAtLeast4 => facts.n_head_kv > 0 && facts.n_head / facts.n_head_kv >= 4,
        Cond::ExpertsAtLeast4 => facts.n_expert >= 4,
        Cond::Experts8 => facts.n_expert == 8,
        Cond::NotExperts8 => facts.n_expert != 8,
        Cond::Imatrix => imatrix,
        Cond::NoImatrix => !imatrix,
        Cond::Arch(a) => facts.arch == a,
        Cond::NotArch(a) => facts.arch != a,
        Cond::RowNotDefaultBlocks => t.ne.first().copied().unwrap_or(1) % ggml(ftype.default).block().0 != 0,
        Cond::DefaultIsNot(d) => ftype.default != d,
        Cond::Stacked => t.ne.get(2).copied().unwrap_or(1) > 1,
        Cond::Model70B => facts.is_70b,
    }
}

fn allows_quantization(t: &MixtureInput) -> bool {
    let dims = t.ne.iter().rposition(|&d| d != 1).map_or(1, |k| k + 1);
    dims >= 2 && t.name.ends_with("weight") && !KEPT.iter().any(|m| m.matches(t.name))
}

/// The type each tensor of a GGUF gets under `ftype` (with or without an importance matrix),
/// in llama.cpp's order of the tensors; an error names the tensor where llama.cpp refuses (no
/// fallback for its shape, a stacked tensor without `blk.N.` in its name).
pub fn mixture(
    ftype: &Ftype,
    facts: &ModelFacts,
    tensors: &[MixtureInput],
    imatrix: bool,
    path: &Path,
) -> Result<Vec<MixtureChoice>> {
    let names: Vec<&str> = tensors.iter().map(|t| t.name).collect();
    let order = llama_order(&names);
    let tied = !names.iter().any(|n| role_of(n) == Role::Output);
    let n_attn_v = names.iter().filter(|n| role_of(n) == Role::AttnV).count();
    let default = ggml(ftype.default);
    let (mut attn_v, mut ffn_down, mut ffn_gate, mut ffn_up) = (0usize, 0usize, 0usize, 0usize);
    let mut out = Vec::with_capacity(tensors.len());
    for k in order {
        let t = &tensors[k];
        let fail = |message: String| checkpoint_error(path, Some(t.name), None, message);
        if !allows_quantization(t) {
            out.push(MixtureChoice { input: k, ggml: t.ggml, quantized: false, needs_imatrix: false });
            continue;
        }
        let mut target = default;
        if is_quantized(default) {
            let mut role = role_of(t.name);
            if role == Role::TokenEmbd && tied {
                role = Role::Output;
            }
            let count = match role {
                Role::AttnV => attn_v,
                Role::FfnDown => ffn_down,
                Role::FfnGate => ffn_gate,
                Role::FfnUp => ffn_up,
                _ => 0,
            };
            let layer = if facts.n_expert > 1 && matches!(role, Role::FfnDown | Role::FfnGate | Role::FfnUp) {
                let parsed =
                    t.name.strip_prefix("blk.").and_then(|r| r.split('.').next()).and_then(|d| d.parse::<i64>().ok());
                match parsed {
                    Some(l) if l >= 0 && (l as usize) < facts.n_layer => l as usize,
                    Some(l) => return Err(fail(format!("layer {l} is not below block_count {}", facts.n_layer))),
                    None => return Err(fail("llama.cpp cannot tell this expert tensor's layer from its name".into())),
                }
            } else {
                count
            };
            let at = Position { count, layer, attn_v, n_attn_v, n_layer: facts.n_layer };
            let found = RULES.iter().find(|r| {
                r.roles.contains(&role)
                    && (r.ftypes.is_empty() || r.ftypes.contains(&ftype.name))
                    && r.when.iter().all(|&c| holds(c, ftype, facts, imatrix, t, &at))
            });
            if let Some(Rule { pick: Pick::Type(name), .. }) = found {
                target = ggml(name);
            }
            // The 70B / 8-expert exceptions follow the attn_v branch only.
            let attn_v_branch = role == Role::AttnV && !OTHER_ATTN_V_BRANCH.contains(&ftype.name);
            if attn_v_branch {
                for &(c, from, to) in ADJUSTMENTS {
                    if holds(c, ftype, facts, imatrix, t, &at) && (from.is_empty() || from.contains(&target.name())) {
                        target = ggml(to);
                    }
                }
            }
            // llama.cpp counts the tensors its branches saw (MXFP4_MOE's branch counts none).
            if !UNCOUNTED.contains(&ftype.name) {
                match role {
                    Role::AttnV => attn_v += 1,
                    Role::FfnDown => ffn_down += 1,
                    Role::FfnGate => ffn_gate += 1,
                    Role::FfnUp => ffn_up += 1,
                    _ => {}
                }
            }
            target = fallback(target, t, &fail)?;
        }
        let needs_imatrix = !matches!(role_of(t.name), Role::Output | Role::TokenEmbd)
            && NEEDS_IMATRIX
                .iter()
                .any(|&(ty, only)| ty == target.name() && (only.is_empty() || only.contains(&ftype.name)));
        out.push(MixtureChoice { input: k, ggml: target, quantized: true, needs_imatrix });
    }
    Ok(out)
}

fn fallback(target: GgmlType, t: &MixtureInput, fail: &dyn Fn(String) -> Error) -> Result<GgmlType> {
    let cols = t.ne.first().copied().unwrap_or(1);
    let block = target.block().0;
    if cols % block == 0 {
        return Ok(target);
    }
    let next = match FALLBACKS.iter().find(|(from, _)| *from == target.name()) {
        Some(&(_, to)) => ggml(to),
        None if block <= 32 => target,
        None => {
            return Err(fail(format!(
                "its rows of {cols} are not whole {} blocks and llama.cpp has no fallback for {}",
                target.name(),
                target.name()
            )))
        }
    };
    Ok(if cols % next.block().0 == 0 { next } else { ggml("F16") })
}

/// The hyper-parameters the rules read, from GGUF metadata.
pub fn model_facts(metadata: &[(String, super::GgufValue)]) -> ModelFacts {
    use super::GgufValue as V;
    let get = |key: &str| metadata.iter().find(|(k, _)| k == key).map(|(_, v)| v);
    let int = |key: &str| match get(key) {
        Some(V::U32(v)) => Some(*v as usize),
        Some(V::I32(v)) => usize::try_from(*v).ok(),
        Some(V::U64(v)) => usize::try_from(*v).ok(),
        Some(V::U16(v)) => Some(*v as usize),
        Some(V::U8(v)) => Some(*v as usize),
        _ => None,
    };
    let arch = match get("general.architecture") {
        Some(V::String(s)) => String::from_utf8_lossy(s).into_owned(),
        _ => String::new(),
    };
    let n_layer = int(&format!("{arch}.block_count")).unwrap_or(0);
    let n_head = int(&format!("{arch}.attention.head_count")).unwrap_or(0);
    let n_head_kv = int(&format!("{arch}.attention.head_count_kv")).unwrap_or(n_head);
    let n_expert = int(&format!("{arch}.expert_count")).unwrap_or(0);
    let is_70b = arch == "llama" && n_layer == 80 && n_head != n_head_kv;
    ModelFacts { arch, is_70b, n_layer, n_head, n_head_kv, n_expert }
}

/// One tensor of a mixture, in the order llama.cpp writes them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GgmlMixtureTensor {
    /// Its name.
    pub name: String,
    /// The type llama.cpp writes it in.
    pub ggml: GgmlType,
    /// Whether llama.cpp converts it (a weight it quantizes, or F16/F32 to another type) rather
    /// than copying its bytes.
    pub converted: bool,
    /// Whether its target type needs an importance matrix.
    pub needs_imatrix: bool,
}

/// The ftype named `name`, or an error listing them.
pub fn ftype_named(name: &str) -> Result<&'static Ftype> {
    ftype(name).ok_or_else(|| Error::InvalidOp {
        op: format!("ggml mixture {}", Error::quote(name)),
        message: format!(
            "not a llama.cpp ftype lowbit writes ({})",
            FTYPES.iter().map(|f| f.name).collect::<Vec<_>>().join(", ")
        ),
    })
}

/// The tensors of GGUF inputs as the rules see them (ggml type, `ne`).
pub(crate) fn inputs(ckpt: &super::Checkpoint) -> Result<Vec<MixtureInput<'_>>> {
    let path = ckpt.files().first().map_or_else(|| Path::new("input").to_path_buf(), |p| p.to_path_buf());
    if ckpt.container() != super::Container::Gguf {
        return Err(checkpoint_error(&path, None, None, "a ggml mixture is made from a GGUF file".into()));
    }
    ckpt.tensors()
        .iter()
        .map(|t| {
            let ggml = match t.stored {
                super::StoredType::Ggml(g) => g,
                super::StoredType::Plain(d) => GgmlType::of_plain(d)
                    .ok_or_else(|| checkpoint_error(&path, Some(&t.name), None, format!("{d} is not a ggml type")))?,
            };
            Ok(MixtureInput { name: &t.name, ne: t.shape.iter().rev().copied().collect(), ggml })
        })
        .collect()
}

/// Which type `llama_model_quantize` gives each tensor of the GGUF checkpoint `ckpt` under the
/// ftype `ftype_name` (`Q4_K_M`), with or without an importance matrix; in llama.cpp's order.
pub fn ggml_mixture(ckpt: &super::Checkpoint, ftype_name: &str, imatrix: bool) -> Result<Vec<GgmlMixtureTensor>> {
    let f = ftype_named(ftype_name)?;
    let path = ckpt.files().first().map_or_else(|| Path::new("input").to_path_buf(), |p| p.to_path_buf());
    let list = inputs(ckpt)?;
    let facts = model_facts(ckpt.gguf_metadata());
    let choices = mixture(f, &facts, &list, imatrix, &path)?;
    Ok(choices
        .into_iter()
        .map(|c| GgmlMixtureTensor {
            name: list[c.input].name.to_string(),
            ggml: c.ggml,
            converted: c.quantized && c.ggml != list[c.input].ggml,
            needs_imatrix: c.needs_imatrix,
        })
        .collect())
}

/// The ftypes (with `+ imatrix` where the rules need the matrix to give these types) whose
/// rules give every tensor of `tensors` the type it has: which llama.cpp mixture made a file.
fn matching(facts: &ModelFacts, tensors: &[MixtureInput]) -> Vec<String> {
    let mut out = Vec::new();
    for f in FTYPES {
        let mut fits = [false; 2];
        for (k, imatrix) in [false, true].into_iter().enumerate() {
            if let Ok(choices) = mixture(f, facts, tensors, imatrix, Path::new("input")) {
                // A tensor llama.cpp keeps (not quantized) keeps whatever type it has.
                fits[k] = choices.iter().all(|c| !c.quantized || c.ggml == tensors[c.input].ggml)
                    && choices.iter().any(|c| c.quantized);
            }
        }
        match fits {
            [true, _] => out.push(f.name.to_string()),
            [false, true] => out.push(format!("{} + imatrix", f.name)),
            _ => {}
        }
    }
    out
}

/// Which llama.cpp mixture a GGUF file is: its `general.file_type` (the ftype's name, if
/// lowbit has it), and the ftypes whose rules give every tensor the type it has.
pub fn which_ggml_mixture(ckpt: &super::Checkpoint) -> Result<(Option<&'static str>, Vec<String>)> {
    let declared = ckpt.gguf_metadata().iter().find(|(k, _)| k == "general.file_type").and_then(|(_, v)| match v {
        super::GgufValue::U32(id) => FTYPES.iter().find(|f| f.id == *id).map(|f| f.name),
        _ => None,
    });
    let list = inputs(ckpt)?;
    Ok((declared, matching(&model_facts(ckpt.gguf_metadata()), &list)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_type_the_rules_name_is_a_ggml_type_lowbit_knows() {
        let mut names: Vec<&str> = FTYPES.iter().map(|f| f.default).collect();
        for r in RULES {
            if let Pick::Type(t) = r.pick {
                names.push(t);
            }
        }
        names.extend(ADJUSTMENTS.iter().map(|a| a.2));
        names.extend(FALLBACKS.iter().filter(|f| f.0 != "Q2_0").flat_map(|f| [f.0, f.1]));
        names.extend(NEEDS_IMATRIX.iter().map(|n| n.0));
        for n in names {
            assert!(GgmlType::from_name(n).is_some(), "{n}");
        }
    }

    #[test]
    fn every_ftype_a_rule_names_is_in_the_table_or_is_q2_0() {
        for r in RULES {
            for f in r.ftypes {
                assert!(ftype(f).is_some() || *f == "Q2_0", "{f}");
            }
        }
    }

    #[test]
    fn llama_order_puts_unnumbered_names_first_then_layers_numerically() {
        let names = ["blk.10.a", "output.weight", "blk.2.b", "blk.2.a", "token_embd.weight"];
        let order: Vec<&str> = llama_order(&names).into_iter().map(|k| names[k]).collect();
        assert_eq!(order, ["output.weight", "token_embd.weight", "blk.2.a", "blk.2.b", "blk.10.a"]);
    }

    /// Every output llama.cpp wrote (the recorded types) is recognised as its ftype.
    #[test]
    fn recorded_outputs_are_recognised_as_their_ftype() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ggml_mixtures");
        let record: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("llama_mixtures.json")).unwrap()).unwrap();
        let mut recognised = 0;
        for run in record["runs"].as_array().unwrap() {
            let name = run["ftype"].as_str().unwrap();
            if run["status"] != "quantized" || ftype(name).is_none() {
                continue;
            }
            let rows = run["tensors"].as_array().unwrap();
            let tensors: Vec<MixtureInput> = rows
                .iter()
                .map(|t| MixtureInput {
                    name: t[0].as_str().unwrap(),
                    ne: t[2].as_array().unwrap().iter().map(|d| d.as_u64().unwrap() as usize).collect(),
                    ggml: GgmlType::from_name(t[1].as_str().unwrap()).unwrap(),
                })
                .collect();
            let facts =
                ModelFacts { arch: "llama".into(), is_70b: false, n_layer: 16, n_head: 4, n_head_kv: 2, n_expert: 0 };
            let found = matching(&facts, &tensors);
            let imatrix = run["imatrix"].as_bool().unwrap();
            let expected = [name.to_string(), format!("{name} + imatrix")];
            assert!(
                found.iter().any(|f| *f == expected[0] || (imatrix && *f == expected[1])),
                "{name} (imatrix {imatrix}): recognised as {found:?}"
            );
            recognised += 1;
        }
        assert!(recognised > 40, "{recognised}");
    }
}
