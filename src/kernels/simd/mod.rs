//! **The only `unsafe` code in lowbit**: running the kernels compiled for wider vector
//! instructions than the build's baseline, chosen at run time.
//!
//! The kernels themselves are the portable ones in [`super::encode`] and [`super::lut`], written
//! branch-free so the compiler vectorises them; this module compiles the same code a second time
//! with AVX2 (and FMA, F16C, BMI2) enabled and calls that copy only after the CPU has been seen to
//! have those features. The portable copy is always built and tested: `LOWBIT_PORTABLE=1` forces it
//! (CI runs the test suite once that way).
//!
//! With the `avx512` feature (Rust 1.89 or newer: AVX-512 target features are stable from it),
//! the engines are compiled a third time with AVX-512 F, BW, VL and DQ and run where the CPU has
//! them (`LOWBIT_NO_AVX512=1` keeps the AVX2 copy, for tests); the hand-written kernels here stay
//! AVX2 (an AVX-512 CPU runs them too).
//!
//! aarch64: NEON is part of the baseline there, so the portable copy is already vectorised with it
//! and there is nothing to select at run time.

#[cfg(target_arch = "x86_64")]
pub(crate) mod x86;

use crate::once::Once;

/// The instruction sets a plan can run its kernels with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Isa {
    /// The build's baseline (SSE2 on x86-64).
    Portable,
    /// x86-64 with AVX2, FMA, F16C and BMI2.
    Avx2,
    /// x86-64 with AVX-512 (F, BW, VL, DQ) besides [`Isa::Avx2`]'s features: the engines
    /// compiled once more with them. Only with the `avx512` feature (which needs Rust 1.89).
    #[cfg_attr(not(feature = "avx512"), allow(dead_code))]
    Avx512,
}

impl Isa {
    /// Whether the AVX2 kernels may run (AVX-512 machines have AVX2 too).
    #[must_use]
    pub(crate) fn has_avx2(self) -> bool {
        matches!(self, Isa::Avx2 | Isa::Avx512)
    }
}

/// Whether AVX-512 is declined (`LOWBIT_NO_AVX512` set to anything but `0` or empty), so tests on
/// an AVX-512 machine cover the AVX2 path too.
#[cfg(all(feature = "avx512", target_arch = "x86_64"))]
fn avx512_declined() -> bool {
    #[cfg(feature = "std")]
    {
        std::env::var_os("LOWBIT_NO_AVX512").is_some_and(|v| !v.is_empty() && v != "0")
    }
    #[cfg(not(feature = "std"))]
    false
}

/// Whether the portable kernels are forced (`LOWBIT_PORTABLE` set to anything but `0` or empty),
/// so tests cover the path a CPU without AVX2 or F16C takes. Without `std` there is no
/// environment: never.
#[must_use]
pub(crate) fn portable_forced() -> bool {
    #[cfg(feature = "std")]
    {
        static FORCED: Once<bool> = Once::new();
        *FORCED.get_or_init(|| std::env::var_os("LOWBIT_PORTABLE").is_some_and(|v| !v.is_empty() && v != "0"))
    }
    #[cfg(not(feature = "std"))]
    false
}

/// The instruction set this process runs its kernels with (detected once).
#[must_use]
pub(crate) fn isa() -> Isa {
    static ISA: Once<Isa> = Once::new();
    *ISA.get_or_init(|| {
        if portable_forced() {
            return Isa::Portable;
        }
        #[cfg(all(feature = "avx512", target_arch = "x86_64"))]
        if !avx512_declined() && x86::avx512_detected() {
            return Isa::Avx512;
        }
        #[cfg(target_arch = "x86_64")]
        if x86::avx2_detected() {
            return Isa::Avx2;
        }
        Isa::Portable
    })
}

/// float32 source bytes to float16 bytes (both little-endian) with the CPU's conversion
/// instruction (nearest-even, as the core rounds), or with `encoder` where the CPU has no F16C.
/// Sets bit `i % 64` of `nan_lanes[i / 64]` for every NaN lane `i`: NaN codes are the caller's.
#[inline]
pub(crate) fn f32_to_f16(src: &[u8], out: &mut [u8], encoder: &super::encode::MinifloatEncoder, nan_lanes: &mut [u64]) {
    #[cfg(target_arch = "x86_64")]
    if isa().has_avx2() {
        x86::f32_to_f16(src, out, nan_lanes);
        return;
    }
    for (i, (d, b)) in out.chunks_exact_mut(2).zip(src.chunks_exact(4)).enumerate() {
        let x = f32::from_le_bytes(b.try_into().expect("4 bytes"));
        d.copy_from_slice(&encoder.encode(x).to_le_bytes());
        nan_lanes[i / 64] |= u64::from(x.is_nan()) << (i % 64);
    }
}

/// float32 source bytes to one-byte codes with `encoder`, in whole blocks of 32 lanes with AVX2
/// where the CPU has it; returns how many lanes it converted (0 without AVX2): the rest are the
/// caller's, with [`LeanEncoder::encode`].
#[inline]
pub(crate) fn lean_encode_bytes(encoder: &super::encode::LeanEncoder, src: &[u8], dst: &mut [u8]) -> usize {
    #[cfg(target_arch = "x86_64")]
    if isa().has_avx2() {
        return x86::lean_encode_bytes(encoder, src, dst);
    }
    let _ = (encoder, src, dst);
    0
}

/// float6 elements to one `u32` code each with AVX2 where the CPU has it; returns how many codes
/// it wrote (0 without AVX2): the rest are the caller's.
#[inline]
pub(crate) fn sextets_to_codes(src: &[u8], codes: &mut [u32]) -> usize {
    #[cfg(target_arch = "x86_64")]
    if isa().has_avx2() {
        return x86::sextets_to_codes(src, codes);
    }
    let _ = (src, codes);
    0
}

/// Whether this process converts float16 to float32 with the CPU's F16C instruction
/// ([`half_to_f32`] may be called).
#[inline]
pub(crate) fn has_f16c() -> bool {
    cfg!(target_arch = "x86_64") && isa().has_avx2()
}

/// float16 codes (see [`x86::half_to_f32`]) to float32 bytes with F16C. Only where
/// [`has_f16c`]; portable code has its own formula.
#[inline]
pub(crate) fn half_to_f32(src: &[u8], source_bytes: usize, shift: u32, out: &mut [u8]) {
    #[cfg(target_arch = "x86_64")]
    x86::half_to_f32(src, source_bytes, shift, out);
    #[cfg(not(target_arch = "x86_64"))]
    unreachable!("has_f16c() is false off x86-64: {:?}", (src.len(), source_bytes, shift, out.len()));
}

/// One float16 code to float32 with F16C (only where [`has_f16c`]).
pub(crate) fn half_to_f32_one(code: u16) -> f32 {
    #[cfg(target_arch = "x86_64")]
    return x86::half_to_f32_one(code);
    #[cfg(not(target_arch = "x86_64"))]
    unreachable!("has_f16c() is false off x86-64: {code}");
}

/// Blocks of 32 nibble-packed codes (16 bytes each, the low nibble first) to float32: code `c`'s
/// value is `values[c]`, multiplied by its block's factor (a NaN product is the value if that is
/// NaN, else the factor). Returns `false`, having written nothing, where the CPU has no AVX2 (the
/// caller then runs its portable loops); the 16 values sit in two registers and each lane picks
/// its own with a permute, where a portable loop loads from memory per element.
#[inline]
#[cfg(feature = "quant")]
pub(crate) fn nibble_blocks_to_f32(values: &[f32; 16], packed: &[u8], factors: &[f32], out: &mut [u8]) -> bool {
    #[cfg(target_arch = "x86_64")]
    if isa().has_avx2() {
        x86::nibble_blocks_to_f32(values, packed, factors, out);
        return true;
    }
    let _ = (values, packed, factors, out);
    false
}

/// Every block's largest magnitude (its float32 bits without the sign; NaN lanes counted as 0
/// where `skip_nan`) into `magnitudes`, and, where `first` is not empty, the first lane of each
/// block holding that magnitude (`block` where none does), for blocks of `block` lanes, a
/// multiple of 8, with AVX2 where the CPU has it. Returns `false`, having written nothing,
/// without AVX2 (the caller then runs its portable loops).
#[inline]
#[cfg(feature = "quant")]
pub(crate) fn block_magnitudes(
    values: &[f32],
    block: usize,
    skip_nan: bool,
    magnitudes: &mut [u32],
    first: &mut [u32],
) -> bool {
    #[cfg(target_arch = "x86_64")]
    if isa().has_avx2() && block % 8 == 0 && block > 0 {
        x86::block_magnitudes(values, block, skip_nan, magnitudes, first);
        return true;
    }
    let _ = (values, block, skip_nan, magnitudes, first);
    false
}

/// Work over a span of `n` elements, `src` into `dst`, that runs through [`widest_span`]: the
/// plan (the kernel) runs one of its parts (an engine) with its scratch. Its `run` must be
/// `#[inline(always)]`, so that it is compiled into each of the copies.
pub(crate) trait SpanKernel {
    type Part;
    type Scratch;
    /// Whether the AVX-512 copy may run: a kernel whose AVX-512 copy measured slower than its
    /// AVX2 one says no, and AVX-512 CPUs run its AVX2 copy.
    #[cfg_attr(not(feature = "avx512"), allow(dead_code))]
    const AVX512: bool = true;
    fn run(&self, part: &Self::Part, src: &[u8], dst: &mut [u8], n: usize, scratch: &mut Self::Scratch);
}

/// Runs `kernel` compiled for the widest instruction set this CPU has: the plan's engines run
/// through this. Every reference travels as an argument of the copies, never inside a struct, so
/// that each copy knows what aliases nothing.
#[cfg(target_arch = "x86_64")]
pub(crate) use x86::run_span as widest_span;

/// Elsewhere, the portable copy.
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
pub(crate) fn widest_span<K: SpanKernel>(
    kernel: &K,
    part: &K::Part,
    src: &[u8],
    dst: &mut [u8],
    n: usize,
    scratch: &mut K::Scratch,
) {
    kernel.run(part, src, dst, n, scratch);
}

/// Work that runs through [`widest`]. Its `run` must be `#[inline(always)]`: it is then compiled
/// into each of `widest`'s copies (a closure would not be: the compiler keeps a large closure body
/// as a function of its own, compiled for the baseline).
#[cfg(feature = "quant")]
pub(crate) trait Kernel {
    type Output;
    fn run(self) -> Self::Output;
}

/// Runs `kernel` compiled for the widest instruction set this CPU has (see [`isa`]): the kernels
/// of other modules (quantization, MX blocks) are portable Rust, and running them through this
/// compiles them again with AVX2 (and AVX-512) on x86-64, as the plan's own engines are, without
/// any `unsafe` outside this module.
#[inline(always)]
#[cfg(feature = "quant")]
pub(crate) fn widest<K: Kernel>(kernel: K) -> K::Output {
    #[cfg(all(feature = "avx512", target_arch = "x86_64"))]
    if isa() == Isa::Avx512 {
        return x86::with_avx512(kernel);
    }
    #[cfg(target_arch = "x86_64")]
    if isa().has_avx2() {
        return x86::with_avx2(kernel);
    }
    kernel.run()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_widest_instruction_set_the_cpu_has_is_chosen() {
        let want = if portable_forced() {
            Isa::Portable
        } else {
            #[cfg(all(feature = "avx512", target_arch = "x86_64"))]
            if !avx512_declined() && x86::avx512_detected() {
                assert_eq!(isa(), Isa::Avx512);
                return;
            }
            #[cfg(target_arch = "x86_64")]
            if x86::avx2_detected() {
                assert_eq!(isa(), Isa::Avx2);
                return;
            }
            Isa::Portable
        };
        assert_eq!(isa(), want);
        assert_eq!(isa().has_avx2(), isa() != Isa::Portable);
    }
}
