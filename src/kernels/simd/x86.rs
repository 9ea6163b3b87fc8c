//! x86-64: kernels compiled with AVX2, FMA, F16C and BMI2 (and AVX-512), and the hand-written
//! AVX2 kernels.

#![allow(unsafe_code)]

use super::super::encode::LeanEncoder;

/// Whether this CPU has every feature [`run_span_avx2`] is compiled with.
#[cfg(feature = "std")]
pub(crate) fn avx2_detected() -> bool {
    std::arch::is_x86_feature_detected!("avx2")
        && std::arch::is_x86_feature_detected!("fma")
        && std::arch::is_x86_feature_detected!("f16c")
        && std::arch::is_x86_feature_detected!("bmi2")
}

/// Without `std` there is no run-time detection: the AVX2 copies run only where the build's
/// baseline already has these features (`-C target-feature` or `-C target-cpu`).
#[cfg(not(feature = "std"))]
pub(crate) fn avx2_detected() -> bool {
    cfg!(all(target_feature = "avx2", target_feature = "fma", target_feature = "f16c", target_feature = "bmi2"))
}

/// Whether this CPU has AVX-512 F, BW, VL and DQ besides AVX2's features.
#[cfg(all(feature = "avx512", feature = "std"))]
pub(crate) fn avx512_detected() -> bool {
    avx2_detected()
        && std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512bw")
        && std::arch::is_x86_feature_detected!("avx512vl")
        && std::arch::is_x86_feature_detected!("avx512dq")
}

/// Without `std`: where the build's baseline has them.
#[cfg(all(feature = "avx512", not(feature = "std")))]
pub(crate) fn avx512_detected() -> bool {
    avx2_detected()
        && cfg!(all(
            target_feature = "avx512f",
            target_feature = "avx512bw",
            target_feature = "avx512vl",
            target_feature = "avx512dq"
        ))
}

/// [`super::SpanKernel::run`] compiled with AVX2, FMA, F16C and BMI2 (the kernel inlined into it).
/// Every reference is this function's own argument, so the compiler knows what aliases nothing
/// (references read from a struct lost that: float32 -> E8M0 ran 5x slower).
///
/// # Safety
/// The CPU must have AVX2, FMA, F16C and BMI2 ([`avx2_detected`]).
#[target_feature(enable = "avx2,fma,f16c,bmi2")]
unsafe fn run_span_avx2<K: super::SpanKernel>(
    kernel: &K,
    part: &K::Part,
    src: &[u8],
    dst: &mut [u8],
    n: usize,
    scratch: &mut K::Scratch,
) {
    kernel.run(part, src, dst, n, scratch);
}

/// [`run_span_avx2`] with AVX-512 besides.
///
/// # Safety
/// The CPU must have them all ([`avx512_detected`]).
#[cfg(feature = "avx512")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c,bmi2")]
unsafe fn run_span_avx512<K: super::SpanKernel>(
    kernel: &K,
    part: &K::Part,
    src: &[u8],
    dst: &mut [u8],
    n: usize,
    scratch: &mut K::Scratch,
) {
    kernel.run(part, src, dst, n, scratch);
}

/// Runs `kernel` with the widest instruction set [`super::isa`] found, else the portable copy.
pub(crate) fn run_span<K: super::SpanKernel>(
    kernel: &K,
    part: &K::Part,
    src: &[u8],
    dst: &mut [u8],
    n: usize,
    scratch: &mut K::Scratch,
) {
    #[cfg(feature = "avx512")]
    if K::AVX512 && super::isa() == super::Isa::Avx512 {
        // SAFETY: `isa()` is `Avx512` only after `avx512_detected()` saw every feature the
        // function is compiled with on this CPU.
        unsafe { run_span_avx512(kernel, part, src, dst, n, scratch) }
        return;
    }
    if super::isa().has_avx2() {
        // SAFETY: `isa()` has AVX2 only after `avx2_detected()` saw every feature the function is
        // compiled with on this CPU.
        unsafe { run_span_avx2(kernel, part, src, dst, n, scratch) }
    } else {
        kernel.run(part, src, dst, n, scratch);
    }
}

/// float32 source bytes to one-byte codes by [`LeanEncoder::encode`]'s arithmetic, 32 lanes at a
/// time: four vectors of eight computed as that function does, then narrowed to bytes together (two
/// packs and a permute, where the compiler's copy narrows each vector on its own). For the two
/// usual sign rules only, each with its own copy: -0 and NaN codes carry the sign bit (float8
/// formats with -0), or neither does (FNUZ). Returns how many lanes were converted (whole blocks
/// of 32; none under another rule); the rest are the caller's.
pub(crate) fn lean_encode_bytes(encoder: &LeanEncoder, src: &[u8], dst: &mut [u8]) -> usize {
    assert!(super::isa().has_avx2(), "AVX2 was detected");
    // SAFETY: the assertion above: `isa()` has AVX2 only after `avx2_detected()` saw AVX2.
    unsafe {
        match (encoder.zero_sign != 0, encoder.special_sign != 0) {
            (true, true) => lean_encode_bytes_avx2::<true>(encoder, src, dst),
            (false, false) => lean_encode_bytes_avx2::<false>(encoder, src, dst),
            _ => 0,
        }
    }
}

/// # Safety
/// The CPU must have AVX2. `SIGNED`: whether -0 and NaN codes carry the sign bit (else neither).
#[target_feature(enable = "avx2")]
unsafe fn lean_encode_bytes_avx2<const SIGNED: bool>(e: &LeanEncoder, src: &[u8], dst: &mut [u8]) -> usize {
    use core::arch::x86_64::{
        __m256i, _mm256_add_epi32, _mm256_add_ps, _mm256_and_si256, _mm256_andnot_si256, _mm256_blendv_epi8,
        _mm256_castps_si256, _mm256_castsi256_ps, _mm256_cmpeq_epi32, _mm256_cmpgt_epi32, _mm256_loadu_si256,
        _mm256_min_epu32, _mm256_or_si256, _mm256_packus_epi16, _mm256_packus_epi32, _mm256_permutevar8x32_epi32,
        _mm256_set1_epi32, _mm256_set1_ps, _mm256_setr_epi32, _mm256_setzero_si256, _mm256_srl_epi32,
        _mm256_storeu_si256, _mm256_sub_epi32, _mm256_xor_si256, _mm_cvtsi32_si128,
    };
    let blocks = (src.len() / 4).min(dst.len()) / 32;
    // Every constant once, as `LeanEncoder::encode` uses it (i32 casts are bit casts), and as few
    // as possible: with more than the sixteen registers hold, the loop reloads them.
    let abs_mask = _mm256_set1_epi32(0x7FFF_FFFF);
    let one = _mm256_set1_epi32(1);
    let shift = _mm_cvtsi32_si128(e.shift as i32);
    let sign_shift = _mm_cvtsi32_si128(e.sign_shift as i32);
    // The rounding addend with the exponent rebias folded in: on normal lanes (the only ones
    // that keep this candidate) the sum stays above `rebias << shift`, so subtracting it before
    // the shift is subtracting `rebias` after.
    let half_minus_one = (1u32 << (e.shift - 1)) - 1;
    let addend = _mm256_set1_epi32(half_minus_one.wrapping_sub(e.rebias << e.shift) as i32);
    let magic = _mm256_set1_ps(e.subnormal_magic);
    let min_normal = _mm256_set1_epi32(e.min_normal_bits as i32);
    let cap = _mm256_set1_epi32(e.cap as i32);
    // `abs >= special_from` as `abs > special_from - 1` (special_from is at least 1).
    let special_above = _mm256_set1_epi32(e.special_from as i32 - 1);
    let special_base = _mm256_set1_epi32(e.special_base as i32);
    // After the packs each 128-bit half holds four lanes of each vector in turn; this puts the
    // four-byte groups back in lane order.
    let order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    // Eight lanes' codes (in 32-bit lanes), step by step as `LeanEncoder::encode`.
    let codes = |x: __m256i| -> __m256i {
        let abs = _mm256_and_si256(x, abs_mask);
        let sign = _mm256_srl_epi32(_mm256_xor_si256(x, abs), sign_shift);
        let odd = _mm256_and_si256(_mm256_srl_epi32(abs, shift), one);
        let normal = _mm256_srl_epi32(_mm256_add_epi32(_mm256_add_epi32(abs, addend), odd), shift);
        let sum = _mm256_add_ps(_mm256_castsi256_ps(abs), magic);
        let subnormal = _mm256_sub_epi32(_mm256_castps_si256(sum), _mm256_castps_si256(magic));
        let is_subnormal = _mm256_cmpgt_epi32(min_normal, abs);
        let magnitude = _mm256_min_epu32(_mm256_blendv_epi8(normal, subnormal, is_subnormal), cap);
        let (finite, special) = if SIGNED {
            (_mm256_or_si256(magnitude, sign), _mm256_or_si256(special_base, sign))
        } else {
            // A zero magnitude drops the sign (-0 is +0's code); NaN has one code.
            let is_zero = _mm256_cmpeq_epi32(magnitude, _mm256_setzero_si256());
            (_mm256_or_si256(magnitude, _mm256_andnot_si256(is_zero, sign)), special_base)
        };
        let is_special = _mm256_cmpgt_epi32(abs, special_above);
        _mm256_blendv_epi8(finite, special, is_special)
    };
    let sources = src[..blocks * 128].chunks_exact(128);
    for (s, d) in sources.zip(dst[..blocks * 32].chunks_exact_mut(32)) {
        // SAFETY: `s` is 128 bytes (32 float32s) and `d` 32 bytes; the unaligned loads and store
        // are what loadu/storeu allow.
        unsafe {
            let load = |k: usize| _mm256_loadu_si256(s.as_ptr().add(32 * k).cast::<__m256i>());
            let (a, b, c, f) = (codes(load(0)), codes(load(1)), codes(load(2)), codes(load(3)));
            // Codes are below 256: the unsigned saturating packs keep them.
            let bytes = _mm256_packus_epi16(_mm256_packus_epi32(a, b), _mm256_packus_epi32(c, f));
            _mm256_storeu_si256(d.as_mut_ptr().cast::<__m256i>(), _mm256_permutevar8x32_epi32(bytes, order));
        }
    }
    blocks * 32
}

/// float6 elements (four 6-bit fields in three bytes, LSB first) to one `u32` code each, eight at a
/// time: the two groups' bytes placed in each lane by one shuffle, then a shift per lane and a
/// mask. Returns how many codes it wrote (a multiple of eight, leaving at least the last group
/// to the caller: each step reads eight bytes where its two groups hold six).
pub(crate) fn sextets_to_codes(src: &[u8], codes: &mut [u32]) -> usize {
    assert!(super::isa().has_avx2(), "AVX2 was detected");
    // SAFETY: the assertion above: `isa()` has AVX2 only after `avx2_detected()` saw AVX2.
    unsafe { sextets_to_codes_avx2(src, codes) }
}

/// # Safety
/// The CPU must have AVX2.
#[target_feature(enable = "avx2")]
unsafe fn sextets_to_codes_avx2(src: &[u8], codes: &mut [u32]) -> usize {
    use core::arch::x86_64::{
        __m128i, __m256i, _mm256_and_si256, _mm256_broadcastsi128_si256, _mm256_set1_epi32, _mm256_setr_epi32,
        _mm256_setr_epi8, _mm256_shuffle_epi8, _mm256_srlv_epi32, _mm256_storeu_si256, _mm_loadl_epi64,
    };
    // Steps of eight codes (six bytes) whose eight-byte load stays inside `src`.
    let steps = (codes.len() / 8).min(src.len().saturating_sub(2) / 6);
    // Lanes 0-3 take bytes 0-2 (the first group), lanes 4-7 bytes 3-5; -1 writes a zero byte.
    let spread = _mm256_setr_epi8(
        0, 1, 2, -1, 0, 1, 2, -1, 0, 1, 2, -1, 0, 1, 2, -1, 3, 4, 5, -1, 3, 4, 5, -1, 3, 4, 5, -1, 3, 4, 5, -1,
    );
    let shifts = _mm256_setr_epi32(0, 6, 12, 18, 0, 6, 12, 18);
    let field = _mm256_set1_epi32(0x3F);
    for (k, c) in codes[..steps * 8].chunks_exact_mut(8).enumerate() {
        // SAFETY: `steps` keeps the eight bytes from `6 * k` inside `src` (6 * steps + 2 <= its
        // length), read through a pointer to the whole of `src`; `c` is 32 bytes (8 u32s);
        // unaligned accesses are what loadl/storeu allow.
        unsafe {
            let at = src.as_ptr().add(6 * k);
            let bytes = _mm256_broadcastsi128_si256(_mm_loadl_epi64(at.cast::<__m128i>()));
            let fields = _mm256_srlv_epi32(_mm256_shuffle_epi8(bytes, spread), shifts);
            _mm256_storeu_si256(c.as_mut_ptr().cast::<__m256i>(), _mm256_and_si256(fields, field));
        }
    }
    steps * 8
}

/// float16 codes to float32 bytes (little-endian) with F16C, eight lanes at a time: exact for
/// every number; a NaN keeps its sign and payload with the quiet bit set. The codes are the
/// source's: `source_bytes` 2 (float16 itself, `shift` 0) or 1 (a byte that is the top of a
/// float16 code once shifted left by `shift`, as E5M2's is with 8).
pub(crate) fn half_to_f32(src: &[u8], source_bytes: usize, shift: u32, out: &mut [u8]) {
    assert!(super::isa().has_avx2(), "F16C was detected");
    assert!(matches!((source_bytes, shift), (2, 0) | (1, 0..=8)), "a float16 code per lane");
    // SAFETY: the assertion above: `isa()` has AVX2 only after `avx2_detected()` saw F16C and AVX2.
    unsafe { half_to_f32_f16c(src, source_bytes, shift, out) }
}

/// One float16 code to float32 by the same instruction as [`half_to_f32`] (for comparing it with
/// the core's answers when a plan is built).
pub(crate) fn half_to_f32_one(code: u16) -> f32 {
    let mut out = [0u8; 4];
    half_to_f32(&code.to_le_bytes(), 2, 0, &mut out);
    f32::from_le_bytes(out)
}

/// # Safety
/// The CPU must have F16C and AVX2.
#[target_feature(enable = "avx2,f16c")]
unsafe fn half_to_f32_f16c(src: &[u8], source_bytes: usize, shift: u32, out: &mut [u8]) {
    use core::arch::x86_64::{
        __m128i, _mm256_cvtph_ps, _mm256_storeu_ps, _mm_cvtepu8_epi16, _mm_cvtsi32_si128, _mm_loadl_epi64,
        _mm_loadu_si128, _mm_sll_epi16,
    };
    let lanes = (out.len() / 4).min(src.len() / source_bytes);
    let whole = lanes / 8 * 8;
    let count = _mm_cvtsi32_si128(shift as i32);
    let source = src[..whole * source_bytes].chunks_exact(8 * source_bytes);
    for (s, o) in source.zip(out[..whole * 4].chunks_exact_mut(32)) {
        // SAFETY: `s` holds 8 codes (16 or 8 bytes) and `o` 32 bytes (8 float32s); the unaligned
        // loads and store are what loadu/loadl/storeu allow.
        unsafe {
            let halves = if source_bytes == 2 {
                _mm_loadu_si128(s.as_ptr().cast::<__m128i>())
            } else {
                _mm_sll_epi16(_mm_cvtepu8_epi16(_mm_loadl_epi64(s.as_ptr().cast::<__m128i>())), count)
            };
            _mm256_storeu_ps(o.as_mut_ptr().cast::<f32>(), _mm256_cvtph_ps(halves));
        }
    }
    // The last lanes through a vector of eight holding them (the rest zero): the same instruction.
    if whole < lanes {
        let mut codes = [0u16; 8];
        for (i, c) in codes.iter_mut().enumerate().take(lanes - whole) {
            let at = (whole + i) * source_bytes;
            *c = if source_bytes == 2 {
                u16::from_le_bytes([src[at], src[at + 1]])
            } else {
                u16::from(src[at]) << shift
            };
        }
        let mut values = [0f32; 8];
        // SAFETY: `codes` is 16 bytes and `values` 32; unaligned accesses are what loadu/storeu allow.
        unsafe {
            let halves = _mm_loadu_si128(codes.as_ptr().cast::<__m128i>());
            _mm256_storeu_ps(values.as_mut_ptr(), _mm256_cvtph_ps(halves));
        }
        for (o, v) in out[whole * 4..lanes * 4].chunks_exact_mut(4).zip(values) {
            o.copy_from_slice(&v.to_le_bytes());
        }
    }
}

/// float32 source bytes to float16 bytes, eight lanes at a time with F16C, setting bit `i % 64` of
/// `nan_lanes[i / 64]` for every NaN lane `i` in the same pass (one read of the source).
pub(crate) fn f32_to_f16(src: &[u8], out: &mut [u8], nan_lanes: &mut [u64]) {
    assert!(super::isa().has_avx2(), "F16C was detected");
    // SAFETY: the assertion above: `isa()` has AVX2 only after `avx2_detected()` saw F16C and AVX2.
    unsafe { f32_to_f16_f16c(src, out, nan_lanes) }
}

/// float32 source bytes to float16 bytes with F16C, NaN lanes converted by the instruction too
/// (sign and top payload bits kept, quiet bit set): for plans whose core gives those codes.
pub(crate) fn f32_to_f16_unmarked(src: &[u8], out: &mut [u8]) {
    assert!(super::isa().has_avx2(), "F16C was detected");
    // SAFETY: the assertion above: `isa()` has AVX2 only after `avx2_detected()` saw F16C and AVX2.
    unsafe { f32_to_f16_whole(src, out) }
}

/// # Safety
/// The CPU must have F16C and AVX2.
#[target_feature(enable = "avx2,f16c")]
unsafe fn f32_to_f16_whole(src: &[u8], out: &mut [u8]) {
    use core::arch::x86_64::{__m128i, _mm256_cvtps_ph, _mm256_loadu_ps, _mm_storeu_si128, _MM_FROUND_TO_NEAREST_INT};
    let lanes = (out.len() / 2).min(src.len() / 4);
    let whole = lanes / 16 * 16;
    for (s, o) in src[..whole * 4].chunks_exact(64).zip(out[..whole * 2].chunks_exact_mut(32)) {
        // SAFETY: `s` is 64 bytes (16 float32s) and `o` 32 bytes (16 float16s); the unaligned
        // accesses are what loadu/storeu allow.
        unsafe {
            let a = _mm256_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(_mm256_loadu_ps(s.as_ptr().cast::<f32>()));
            let b = _mm256_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(_mm256_loadu_ps(s.as_ptr().add(32).cast::<f32>()));
            _mm_storeu_si128(o.as_mut_ptr().cast::<__m128i>(), a);
            _mm_storeu_si128(o.as_mut_ptr().add(16).cast::<__m128i>(), b);
        }
    }
    let mut ignored = [0u64; 1];
    for i in whole..lanes {
        // SAFETY: this function's own contract (F16C and AVX2), which `f32_to_f16_f16c` shares.
        unsafe { f32_to_f16_f16c(&src[4 * i..4 * i + 4], &mut out[2 * i..2 * i + 2], &mut ignored) };
    }
}

/// # Safety
/// The CPU must have F16C and AVX2.
#[target_feature(enable = "avx2,f16c")]
unsafe fn f32_to_f16_f16c(src: &[u8], out: &mut [u8], nan_lanes: &mut [u64]) {
    use core::arch::x86_64::{
        __m128i, _mm256_cmp_ps, _mm256_cvtps_ph, _mm256_loadu_ps, _mm256_movemask_ps, _mm_storeu_si128, _CMP_UNORD_Q,
        _MM_FROUND_TO_NEAREST_INT,
    };
    let lanes = (out.len() / 2).min(src.len() / 4).min(nan_lanes.len() * 64);
    // Groups of 64 lanes (one mask word each), eight vectors of eight lanes per group.
    let groups = lanes / 64;
    let group_src = src[..groups * 256].chunks_exact(256);
    let group_out = out[..groups * 128].chunks_exact_mut(128);
    for ((s, o), word) in group_src.zip(group_out).zip(nan_lanes.iter_mut()) {
        let mut nans = 0u64;
        for (k, (s, o)) in s.chunks_exact(32).zip(o.chunks_exact_mut(16)).enumerate() {
            // SAFETY: `s` is 32 bytes (8 float32s) and `o` 16 bytes (8 float16s); both unaligned
            // accesses are what loadu/storeu allow.
            let nan_bits = unsafe {
                let x = _mm256_loadu_ps(s.as_ptr().cast::<f32>());
                let h = _mm256_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(x);
                _mm_storeu_si128(o.as_mut_ptr().cast::<__m128i>(), h);
                _mm256_movemask_ps(_mm256_cmp_ps::<_CMP_UNORD_Q>(x, x))
            };
            nans |= u64::from(nan_bits as u8) << (8 * k);
        }
        *word |= nans;
    }
    // The lanes after the last whole group, one at a time.
    for i in groups * 64..lanes {
        let x = f32::from_le_bytes(src[4 * i..4 * i + 4].try_into().expect("4 bytes"));
        // One lane widened into a vector of eight (the others zero): the same instruction as the
        // whole groups, so every lane is rounded alike.
        let v = core::arch::x86_64::_mm256_setr_ps(x, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
        let h = core::arch::x86_64::_mm_extract_epi16::<0>(_mm256_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(v)) as u16;
        out[2 * i..2 * i + 2].copy_from_slice(&h.to_le_bytes());
        nan_lanes[i / 64] |= u64::from(x.is_nan()) << (i % 64);
    }
}

/// float32 source bytes rounded to the nearest integer, ties to even (`vcvtps2dq` under the
/// default rounding mode, which Rust code never changes), with the low bits `mask` keeps written
/// as 16-bit codes. Lanes with |x| >= 2^31 or NaN (the instruction's "integer indefinite") get
/// their bit set in `declined` (bit `i % 64` of word `i / 64`): their codes are the caller's.
/// Only whole groups of 64 lanes are converted; returns how many lanes were.
pub(crate) fn f32_round_even_low_bits(src: &[u8], mask: u16, codes: &mut [u16], declined: &mut [u64]) -> usize {
    assert!(super::isa().has_avx2(), "AVX2 was detected");
    // SAFETY: the assertion above: `isa()` has AVX2 only after `avx2_detected()` saw AVX2.
    unsafe { f32_round_even_low_bits_avx2(src, mask, codes, declined) }
}

/// # Safety
/// The CPU must have AVX2.
#[target_feature(enable = "avx2")]
unsafe fn f32_round_even_low_bits_avx2(src: &[u8], mask: u16, codes: &mut [u16], declined: &mut [u64]) -> usize {
    use core::arch::x86_64::{
        __m256i, _mm256_and_ps, _mm256_and_si256, _mm256_castsi256_ps, _mm256_cmp_ps, _mm256_cvtps_epi32,
        _mm256_loadu_ps, _mm256_movemask_ps, _mm256_packus_epi32, _mm256_permute4x64_epi64, _mm256_set1_epi32,
        _mm256_set1_ps, _mm256_storeu_si256, _CMP_NLT_UQ,
    };
    let groups = (src.len() / 256).min(codes.len() / 64).min(declined.len());
    let keep = _mm256_set1_epi32(i32::from(mask));
    let magnitude = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFF_FFFF));
    let limit = _mm256_set1_ps(2_147_483_648.0);
    for ((s, c), word) in src.chunks_exact(256).zip(codes.chunks_exact_mut(64)).zip(declined.iter_mut()).take(groups) {
        let mut outside = 0u64;
        // Sixteen lanes at a time: two vectors of eight i32s packed into one of sixteen u16s.
        for (k, (s, c)) in s.chunks_exact(64).zip(c.chunks_exact_mut(16)).enumerate() {
            // SAFETY: `s` is 64 bytes (16 float32s) and `c` 16 u16s (32 bytes); the unaligned
            // accesses are what loadu/storeu allow.
            let bits = unsafe {
                let x0 = _mm256_loadu_ps(s.as_ptr().cast::<f32>());
                let x1 = _mm256_loadu_ps(s.as_ptr().add(32).cast::<f32>());
                let low0 = _mm256_and_si256(_mm256_cvtps_epi32(x0), keep);
                let low1 = _mm256_and_si256(_mm256_cvtps_epi32(x1), keep);
                // packus works within 128-bit halves: lanes 0-3, 8-11, 4-7, 12-15; the permute
                // puts the quarters back in order.
                let packed = _mm256_permute4x64_epi64::<0b11_01_10_00>(_mm256_packus_epi32(low0, low1));
                _mm256_storeu_si256(c.as_mut_ptr().cast::<__m256i>(), packed);
                // |x| >= 2^31 or unordered (NaN).
                let out0 = _mm256_movemask_ps(_mm256_cmp_ps::<_CMP_NLT_UQ>(_mm256_and_ps(x0, magnitude), limit));
                let out1 = _mm256_movemask_ps(_mm256_cmp_ps::<_CMP_NLT_UQ>(_mm256_and_ps(x1, magnitude), limit));
                (out0 as u32 & 0xFF) | (out1 as u32 & 0xFF) << 8
            };
            outside |= u64::from(bits) << (16 * k);
        }
        *word |= outside;
    }
    groups * 64
}

/// [`crate::kernels::quantize::IntegerQuantizer::run`] eight lanes at a time: divide, clamp (NaN to
/// `low`), round to nearest even (`vcvtps2dq` under the default rounding mode), add the zero
/// point, mask. Converts whole groups of 16 lanes; returns how many lanes it converted.
#[cfg(feature = "quant")]
pub(crate) fn quantize_f32(
    src: &[u8],
    codes: &mut [u16],
    divisor: f32,
    low: f32,
    high: f32,
    zero: i32,
    mask: u16,
) -> usize {
    assert!(super::isa().has_avx2(), "AVX2 was detected");
    // SAFETY: the assertion above: `isa()` has AVX2 only after `avx2_detected()` saw AVX2.
    unsafe { quantize_f32_avx2(src, codes, divisor, low, high, zero, mask) }
}

/// # Safety
/// The CPU must have AVX2.
#[target_feature(enable = "avx2")]
#[cfg(feature = "quant")]
unsafe fn quantize_f32_avx2(
    src: &[u8],
    codes: &mut [u16],
    divisor: f32,
    low: f32,
    high: f32,
    zero: i32,
    mask: u16,
) -> usize {
    use core::arch::x86_64::{
        __m256, __m256i, _mm256_add_epi32, _mm256_and_si256, _mm256_cvtps_epi32, _mm256_div_ps, _mm256_loadu_ps,
        _mm256_max_ps, _mm256_min_ps, _mm256_packus_epi32, _mm256_permute4x64_epi64, _mm256_set1_epi32, _mm256_set1_ps,
        _mm256_storeu_si256,
    };
    let lanes = (src.len() / 4).min(codes.len()) / 16 * 16;
    let (d, lo, hi) = (_mm256_set1_ps(divisor), _mm256_set1_ps(low), _mm256_set1_ps(high));
    let (z, keep) = (_mm256_set1_epi32(zero), _mm256_set1_epi32(i32::from(mask)));
    let one = |x: __m256| -> __m256i {
        // maxps returns its second operand when either is NaN: a NaN quotient becomes `low`.
        let q = _mm256_min_ps(_mm256_max_ps(_mm256_div_ps(x, d), lo), hi);
        _mm256_and_si256(_mm256_add_epi32(_mm256_cvtps_epi32(q), z), keep)
    };
    for (s, c) in src[..lanes * 4].chunks_exact(64).zip(codes[..lanes].chunks_exact_mut(16)) {
        // SAFETY: `s` is 64 bytes (16 float32s) and `c` 16 u16s (32 bytes); the unaligned
        // accesses are what loadu/storeu allow.
        unsafe {
            let a = one(_mm256_loadu_ps(s.as_ptr().cast::<f32>()));
            let b = one(_mm256_loadu_ps(s.as_ptr().add(32).cast::<f32>()));
            // Masked codes fit 16 bits unsigned, so the saturating pack keeps them; the permute
            // undoes packus' per-half interleaving.
            let packed = _mm256_permute4x64_epi64::<0b11_01_10_00>(_mm256_packus_epi32(a, b));
            _mm256_storeu_si256(c.as_mut_ptr().cast::<__m256i>(), packed);
        }
    }
    lanes
}

/// [`super::nibble_blocks_to_f32`] with AVX2.
#[cfg(feature = "quant")]
pub(crate) fn nibble_blocks_to_f32(values: &[f32; 16], packed: &[u8], factors: &[f32], out: &mut [u8]) {
    assert!(super::isa().has_avx2(), "AVX2 was detected");
    assert!(packed.len() == 16 * factors.len() && out.len() == 128 * factors.len(), "whole blocks of 32");
    // SAFETY: the assertion above: `isa()` has AVX2 only after `avx2_detected()` saw AVX2.
    unsafe { nibble_blocks_to_f32_avx2(values, packed, factors, out) }
}

/// # Safety
/// The CPU must have AVX2.
#[target_feature(enable = "avx2")]
#[cfg(feature = "quant")]
unsafe fn nibble_blocks_to_f32_avx2(values: &[f32; 16], packed: &[u8], factors: &[f32], out: &mut [u8]) {
    use core::arch::x86_64::{
        _mm256_and_si256, _mm256_blendv_ps, _mm256_castsi256_ps, _mm256_cmp_ps, _mm256_loadu_ps, _mm256_mul_ps,
        _mm256_permutevar8x32_ps, _mm256_set1_epi32, _mm256_set1_ps, _mm256_setr_epi32, _mm256_slli_epi32,
        _mm256_srlv_epi32, _mm256_storeu_ps, _CMP_UNORD_Q,
    };
    // SAFETY: `values` is 16 float32s: two loads of 8.
    let (low_half, high_half) = unsafe { (_mm256_loadu_ps(values.as_ptr()), _mm256_loadu_ps(values.as_ptr().add(8))) };
    // Lane j of a group of 8 codes (4 bytes read as one little-endian word) is bits 4j..4j+4.
    let shifts = _mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28);
    let nibble = _mm256_set1_epi32(0xF);
    for ((bytes, block_out), &factor) in packed.chunks_exact(16).zip(out.chunks_exact_mut(128)).zip(factors) {
        let f = _mm256_set1_ps(factor);
        for (word, lanes_out) in bytes.chunks_exact(4).zip(block_out.chunks_exact_mut(32)) {
            let word = u32::from_le_bytes(word.try_into().expect("4 bytes"));
            let codes = _mm256_and_si256(_mm256_srlv_epi32(_mm256_set1_epi32(word as i32), shifts), nibble);
            // The permutes use the low 3 bits of each code; bit 3 (moved to the sign bit) picks the half.
            let x = _mm256_blendv_ps(
                _mm256_permutevar8x32_ps(low_half, codes),
                _mm256_permutevar8x32_ps(high_half, codes),
                _mm256_castsi256_ps(_mm256_slli_epi32::<28>(codes)),
            );
            let p = _mm256_mul_ps(x, f);
            let nan = _mm256_blendv_ps(f, x, _mm256_cmp_ps::<_CMP_UNORD_Q>(x, x));
            let result = _mm256_blendv_ps(p, nan, _mm256_cmp_ps::<_CMP_UNORD_Q>(p, p));
            // SAFETY: `lanes_out` is 32 bytes (8 float32s); storeu allows any alignment.
            unsafe { _mm256_storeu_ps(lanes_out.as_mut_ptr().cast::<f32>(), result) };
        }
    }
}

/// [`quantize_f32`] over runs of 32 lanes, run `r` divided by `divisors[r]`: `src` holds
/// `32 * divisors.len()` float32s and `codes` as many codes.
#[cfg(feature = "quant")]
pub(crate) fn quantize_f32_runs32(
    src: &[u8],
    codes: &mut [u16],
    divisors: &[f32],
    bounds: (f32, f32),
    zero: i32,
    mask: u16,
) {
    assert!(super::isa().has_avx2(), "AVX2 was detected");
    assert!(src.len() == 128 * divisors.len() && codes.len() == 32 * divisors.len(), "whole runs of 32");
    // SAFETY: the assertion above: `isa()` has AVX2 only after `avx2_detected()` saw AVX2.
    unsafe { quantize_f32_runs32_avx2(src, codes, divisors, bounds, zero, mask) }
}

/// # Safety
/// The CPU must have AVX2.
#[target_feature(enable = "avx2")]
#[cfg(feature = "quant")]
unsafe fn quantize_f32_runs32_avx2(
    src: &[u8],
    codes: &mut [u16],
    divisors: &[f32],
    (low, high): (f32, f32),
    zero: i32,
    mask: u16,
) {
    use core::arch::x86_64::{
        __m256, __m256i, _mm256_add_epi32, _mm256_and_si256, _mm256_cvtps_epi32, _mm256_div_ps, _mm256_loadu_ps,
        _mm256_max_ps, _mm256_min_ps, _mm256_packus_epi32, _mm256_permute4x64_epi64, _mm256_set1_epi32, _mm256_set1_ps,
        _mm256_storeu_si256,
    };
    let (lo, hi) = (_mm256_set1_ps(low), _mm256_set1_ps(high));
    let (z, keep) = (_mm256_set1_epi32(zero), _mm256_set1_epi32(i32::from(mask)));
    let one = |x: __m256, d: __m256| -> __m256i {
        // As quantize_f32: maxps gives its second operand (`low`) for a NaN quotient.
        let q = _mm256_min_ps(_mm256_max_ps(_mm256_div_ps(x, d), lo), hi);
        _mm256_and_si256(_mm256_add_epi32(_mm256_cvtps_epi32(q), z), keep)
    };
    for ((s, c), &divisor) in src.chunks_exact(128).zip(codes.chunks_exact_mut(32)).zip(divisors) {
        let d = _mm256_set1_ps(divisor);
        for (s, c) in s.chunks_exact(64).zip(c.chunks_exact_mut(16)) {
            // SAFETY: `s` is 64 bytes (16 float32s) and `c` 16 u16s (32 bytes); the unaligned
            // accesses are what loadu/storeu allow.
            unsafe {
                let a = one(_mm256_loadu_ps(s.as_ptr().cast::<f32>()), d);
                let b = one(_mm256_loadu_ps(s.as_ptr().add(32).cast::<f32>()), d);
                let packed = _mm256_permute4x64_epi64::<0b11_01_10_00>(_mm256_packus_epi32(a, b));
                _mm256_storeu_si256(c.as_mut_ptr().cast::<__m256i>(), packed);
            }
        }
    }
}

/// [`quantize_f32`] into one byte per code (the low 8 bits of the code; `mask` at most 0xFF), in
/// groups of 32 lanes, group `g` divided by `divisor_of(g)`: whole groups only; returns how many
/// lanes it converted. AVX-512 where [`super::isa`] found it, else AVX2.
#[cfg(feature = "quant")]
pub(crate) fn quantize_f32_bytes(
    src: &[u8],
    out: &mut [u8],
    divisor_of: impl Fn(usize) -> f32,
    (low, high): (f32, f32),
    zero: i32,
    mask: u16,
) -> usize {
    assert!(super::isa().has_avx2(), "AVX2 was detected");
    assert!(mask <= 0xFF, "one byte per code");
    #[cfg(feature = "avx512")]
    if super::isa() == super::Isa::Avx512 {
        // SAFETY: `isa()` is `Avx512` only after `avx512_detected()` saw AVX-512 F, BW, VL, DQ.
        return unsafe { quantize_f32_bytes_avx512(src, out, divisor_of, (low, high), zero, mask) };
    }
    // SAFETY: the assertion above: `isa()` has AVX2 only after `avx2_detected()` saw AVX2.
    unsafe { quantize_f32_bytes_avx2(src, out, divisor_of, (low, high), zero, mask) }
}

/// # Safety
/// The CPU must have AVX2.
#[target_feature(enable = "avx2")]
#[cfg(feature = "quant")]
unsafe fn quantize_f32_bytes_avx2(
    src: &[u8],
    out: &mut [u8],
    divisor_of: impl Fn(usize) -> f32,
    (low, high): (f32, f32),
    zero: i32,
    mask: u16,
) -> usize {
    use core::arch::x86_64::{
        __m256, __m256i, _mm256_add_epi32, _mm256_and_si256, _mm256_cvtps_epi32, _mm256_div_ps, _mm256_loadu_ps,
        _mm256_max_ps, _mm256_min_ps, _mm256_packus_epi16, _mm256_packus_epi32, _mm256_permutevar8x32_epi32,
        _mm256_set1_epi32, _mm256_set1_ps, _mm256_setr_epi32, _mm256_storeu_si256,
    };
    let groups = (src.len() / 128).min(out.len() / 32);
    let (lo, hi) = (_mm256_set1_ps(low), _mm256_set1_ps(high));
    let (z, keep) = (_mm256_set1_epi32(zero), _mm256_set1_epi32(i32::from(mask)));
    // The two packs leave the four-lane pieces of vectors a, b, c, d in the order a0 b0 c0 d0 a1
    // b1 c1 d1 (one 128-bit half each); this puts them back in order.
    let order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    let one = |x: __m256, d: __m256| -> __m256i {
        // As quantize_f32: maxps gives its second operand (`low`) for a NaN quotient.
        let q = _mm256_min_ps(_mm256_max_ps(_mm256_div_ps(x, d), lo), hi);
        _mm256_and_si256(_mm256_add_epi32(_mm256_cvtps_epi32(q), z), keep)
    };
    for (g, (s, o)) in src.chunks_exact(128).zip(out.chunks_exact_mut(32)).take(groups).enumerate() {
        let d = _mm256_set1_ps(divisor_of(g));
        // SAFETY: `s` is 128 bytes (32 float32s) and `o` 32 bytes; the unaligned accesses are
        // what loadu/storeu allow.
        unsafe {
            let p = s.as_ptr().cast::<f32>();
            let (a, b) = (one(_mm256_loadu_ps(p), d), one(_mm256_loadu_ps(p.add(8)), d));
            let (c, e) = (one(_mm256_loadu_ps(p.add(16)), d), one(_mm256_loadu_ps(p.add(24)), d));
            // Masked codes fit 8 bits unsigned, so both saturating packs keep them.
            let bytes = _mm256_packus_epi16(_mm256_packus_epi32(a, b), _mm256_packus_epi32(c, e));
            _mm256_storeu_si256(o.as_mut_ptr().cast::<__m256i>(), _mm256_permutevar8x32_epi32(bytes, order));
        }
    }
    groups * 32
}

/// # Safety
/// The CPU must have AVX-512 F, BW, VL and DQ.
#[cfg(all(feature = "quant", feature = "avx512"))]
// The AVX-512 intrinsics are stable from Rust 1.89, which the `avx512` feature requires.
#[allow(clippy::incompatible_msrv)]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2")]
unsafe fn quantize_f32_bytes_avx512(
    src: &[u8],
    out: &mut [u8],
    divisor_of: impl Fn(usize) -> f32,
    (low, high): (f32, f32),
    zero: i32,
    mask: u16,
) -> usize {
    use core::arch::x86_64::{
        __m128i, __m512, _mm512_add_epi32, _mm512_and_si512, _mm512_cvtepi32_epi8, _mm512_cvtps_epi32, _mm512_div_ps,
        _mm512_loadu_ps, _mm512_max_ps, _mm512_min_ps, _mm512_set1_epi32, _mm512_set1_ps, _mm_storeu_si128,
    };
    let groups = (src.len() / 128).min(out.len() / 32);
    let (lo, hi) = (_mm512_set1_ps(low), _mm512_set1_ps(high));
    let (z, keep) = (_mm512_set1_epi32(zero), _mm512_set1_epi32(i32::from(mask)));
    let one = |x: __m512, d: __m512| -> __m128i {
        // vmaxps gives its second operand (`low`) for a NaN quotient, as in quantize_f32; the
        // masked code's low byte is the code (vpmovdb keeps the low 8 bits of each lane).
        let q = _mm512_min_ps(_mm512_max_ps(_mm512_div_ps(x, d), lo), hi);
        _mm512_cvtepi32_epi8(_mm512_and_si512(_mm512_add_epi32(_mm512_cvtps_epi32(q), z), keep))
    };
    for (g, (s, o)) in src.chunks_exact(128).zip(out.chunks_exact_mut(32)).take(groups).enumerate() {
        let d = _mm512_set1_ps(divisor_of(g));
        // SAFETY: `s` is 128 bytes (32 float32s) and `o` 32 bytes; the unaligned accesses are
        // what loadu/storeu allow.
        unsafe {
            let p = s.as_ptr().cast::<f32>();
            let q = o.as_mut_ptr().cast::<__m128i>();
            _mm_storeu_si128(q, one(_mm512_loadu_ps(p), d));
            _mm_storeu_si128(q.add(1), one(_mm512_loadu_ps(p.add(16)), d));
        }
    }
    groups * 32
}

/// Runs `kernel` in a function compiled with AVX2, FMA, F16C and BMI2; its `run`, always inlined,
/// is compiled with them too.
#[cfg(feature = "quant")]
pub(crate) fn with_avx2<K: super::Kernel>(kernel: K) -> K::Output {
    assert!(super::isa().has_avx2(), "AVX2 was detected");
    // SAFETY: the assertion above: `isa()` has AVX2 only after `avx2_detected()` saw every
    // feature the function is compiled with.
    unsafe { run_with_avx2(kernel) }
}

/// # Safety
/// The CPU must have AVX2, FMA, F16C and BMI2.
#[target_feature(enable = "avx2,fma,f16c,bmi2")]
#[cfg(feature = "quant")]
unsafe fn run_with_avx2<K: super::Kernel>(kernel: K) -> K::Output {
    kernel.run()
}

/// [`with_avx2`] with AVX-512 besides.
#[cfg(all(feature = "quant", feature = "avx512"))]
pub(crate) fn with_avx512<K: super::Kernel>(kernel: K) -> K::Output {
    assert!(super::isa() == super::Isa::Avx512, "AVX-512 was detected");
    // SAFETY: the assertion above: `isa()` is `Avx512` only after `avx512_detected()` saw every
    // feature the function is compiled with.
    unsafe { run_with_avx512(kernel) }
}

/// # Safety
/// The CPU must have AVX-512 F, BW, VL, DQ, AVX2, FMA, F16C and BMI2.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c,bmi2")]
#[cfg(all(feature = "quant", feature = "avx512"))]
unsafe fn run_with_avx512<K: super::Kernel>(kernel: K) -> K::Output {
    kernel.run()
}

/// [`super::block_magnitudes`] with AVX2 (`block` a multiple of 8).
#[cfg(feature = "quant")]
pub(crate) fn block_magnitudes(
    values: &[f32],
    block: usize,
    skip_nan: bool,
    magnitudes: &mut [u32],
    first: &mut [u32],
) {
    assert!(super::isa().has_avx2(), "AVX2 was detected");
    assert!(block % 8 == 0 && block > 0 && values.len() / block <= magnitudes.len(), "whole blocks of eights");
    assert!(first.is_empty() || first.len() >= magnitudes.len(), "a first lane for every block");
    // SAFETY: the assertions above: `isa()` has AVX2 only after `avx2_detected()` saw AVX2.
    unsafe {
        if skip_nan {
            block_magnitudes_avx2::<true>(values, block, magnitudes, first);
        } else {
            block_magnitudes_avx2::<false>(values, block, magnitudes, first);
        }
    }
}

/// # Safety
/// The CPU must have AVX2; `block` is a multiple of 8.
#[target_feature(enable = "avx2")]
#[cfg(feature = "quant")]
unsafe fn block_magnitudes_avx2<const SKIP_NAN: bool>(
    values: &[f32],
    block: usize,
    magnitudes: &mut [u32],
    first: &mut [u32],
) {
    use core::arch::x86_64::{
        __m256i, _mm256_add_epi32, _mm256_and_si256, _mm256_andnot_si256, _mm256_blendv_epi8, _mm256_castps_si256,
        _mm256_castsi256_si128, _mm256_cmpeq_epi32, _mm256_cmpgt_epi32, _mm256_extracti128_si256, _mm256_loadu_ps,
        _mm256_max_epi32, _mm256_min_epi32, _mm256_set1_epi32, _mm256_setr_epi32, _mm256_setzero_si256,
        _mm_cvtsi128_si32, _mm_max_epi32, _mm_min_epi32, _mm_shuffle_epi32,
    };
    let abs_mask = _mm256_set1_epi32(0x7FFF_FFFF);
    let inf = _mm256_set1_epi32(0x7F80_0000);
    // The magnitudes of eight lanes (as i32: every magnitude fits, and AVX2 compares signed).
    let eight_magnitudes = |eight: &[f32]| -> __m256i {
        // SAFETY: `eight` is 8 float32s (chunks_exact); loadu allows any alignment.
        _mm256_and_si256(_mm256_castps_si256(unsafe { _mm256_loadu_ps(eight.as_ptr()) }), abs_mask)
    };
    for (b, xs) in values.chunks_exact(block).enumerate() {
        let mut m = _mm256_setzero_si256();
        for eight in xs.chunks_exact(8) {
            let v = eight_magnitudes(eight);
            let v = if SKIP_NAN { _mm256_andnot_si256(_mm256_cmpgt_epi32(v, inf), v) } else { v };
            m = _mm256_max_epi32(m, v);
        }
        let m = _mm_max_epi32(_mm256_castsi256_si128(m), _mm256_extracti128_si256::<1>(m));
        let m = _mm_max_epi32(m, _mm_shuffle_epi32::<0b01_00_11_10>(m));
        let m = _mm_max_epi32(m, _mm_shuffle_epi32::<0b10_11_00_01>(m));
        let largest = _mm_cvtsi128_si32(m);
        magnitudes[b] = largest as u32;
        if let Some(first) = first.get_mut(b) {
            // The least lane index whose magnitude matches, as vector minima of the indices (no
            // branch and no chain through scalar registers: where the lane falls is random); a
            // lane past the block where none matches.
            let target = _mm256_set1_epi32(largest);
            let none = _mm256_set1_epi32(block as i32);
            let eight_lanes = _mm256_set1_epi32(8);
            let mut index = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
            let mut least = none;
            for eight in xs.chunks_exact(8) {
                let equal = _mm256_cmpeq_epi32(eight_magnitudes(eight), target);
                least = _mm256_min_epi32(least, _mm256_blendv_epi8(none, index, equal));
                index = _mm256_add_epi32(index, eight_lanes);
            }
            let least = _mm_min_epi32(_mm256_castsi256_si128(least), _mm256_extracti128_si256::<1>(least));
            let least = _mm_min_epi32(least, _mm_shuffle_epi32::<0b01_00_11_10>(least));
            let least = _mm_min_epi32(least, _mm_shuffle_epi32::<0b10_11_00_01>(least));
            *first = _mm_cvtsi128_si32(least) as u32;
        }
    }
}
