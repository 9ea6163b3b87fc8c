//! x86-64: the plan's engines compiled with AVX2, FMA, F16C and BMI2.

#![allow(unsafe_code)]

use super::super::{Engine, Plan, Scratch};

/// Whether this CPU has every feature [`run_lanes_avx2`] is compiled with.
pub(crate) fn avx2_detected() -> bool {
    std::arch::is_x86_feature_detected!("avx2")
        && std::arch::is_x86_feature_detected!("fma")
        && std::arch::is_x86_feature_detected!("f16c")
        && std::arch::is_x86_feature_detected!("bmi2")
}

/// [`Plan::run_engine_inline`] compiled with AVX2, FMA, F16C and BMI2 (the kernels are inlined
/// into it).
///
/// # Safety
/// The CPU must have AVX2, FMA, F16C and BMI2 ([`avx2_detected`]).
#[target_feature(enable = "avx2,fma,f16c,bmi2")]
unsafe fn run_engine_avx2(
    plan: &Plan,
    engine: &Engine,
    src: &[u8],
    dst: &mut [u8],
    n: usize,
    scratch: &mut Option<Box<Scratch>>,
) {
    plan.run_engine_inline(engine, src, dst, n, scratch);
}

/// Runs an engine with AVX2 where [`super::isa`] found it, else the portable copy.
pub(crate) fn run_engine(
    plan: &Plan,
    engine: &Engine,
    src: &[u8],
    dst: &mut [u8],
    n: usize,
    scratch: &mut Option<Box<Scratch>>,
) {
    if super::isa() == super::Isa::Avx2 {
        // SAFETY: `isa()` is `Avx2` only after `avx2_detected()` saw every feature the function is
        // compiled with on this CPU.
        unsafe { run_engine_avx2(plan, engine, src, dst, n, scratch) }
    } else {
        plan.run_engine_inline(engine, src, dst, n, scratch);
    }
}
