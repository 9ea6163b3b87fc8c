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

/// float32 source bytes to float16 bytes, eight lanes at a time with F16C.
pub(crate) fn f32_to_f16(src: &[u8], out: &mut [u8]) {
    assert!(super::isa() == super::Isa::Avx2, "F16C was detected");
    // SAFETY: the assertion above: `isa()` is `Avx2` only after `avx2_detected()` saw F16C and AVX2.
    unsafe { f32_to_f16_f16c(src, out) }
}

/// # Safety
/// The CPU must have F16C and AVX.
#[target_feature(enable = "avx2,f16c")]
unsafe fn f32_to_f16_f16c(src: &[u8], out: &mut [u8]) {
    use std::arch::x86_64::{__m128i, _mm256_cvtps_ph, _mm256_loadu_ps, _mm_storeu_si128, _MM_FROUND_TO_NEAREST_INT};
    let lanes = (out.len() / 2).min(src.len() / 4);
    let whole = lanes / 8 * 8;
    for (s, o) in src[..whole * 4].chunks_exact(32).zip(out[..whole * 2].chunks_exact_mut(16)) {
        // SAFETY: `s` is 32 bytes (8 float32s) and `o` 16 bytes (8 float16s); both unaligned
        // accesses are what loadu/storeu allow.
        unsafe {
            let x = _mm256_loadu_ps(s.as_ptr().cast::<f32>());
            let h = _mm256_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(x);
            _mm_storeu_si128(o.as_mut_ptr().cast::<__m128i>(), h);
        }
    }
    for (s, o) in src[whole * 4..lanes * 4].chunks_exact(4).zip(out[whole * 2..lanes * 2].chunks_exact_mut(2)) {
        let x = f32::from_le_bytes([s[0], s[1], s[2], s[3]]);
        o.copy_from_slice(&half::f16::from_f32(x).to_le_bytes());
    }
}
