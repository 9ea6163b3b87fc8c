//! The inner loop of linear quantization into an integer target: `saturate(round(x / scale) +
//! zero_point)` on float32 lanes, with the division in float32 (IEEE, correctly rounded), the
//! rounding to nearest with ties to even, and the bounds of the target. `crate::quant` does the
//! ONNX semantics (versions, attributes, shapes, which scale each element takes, the profiles'
//! rules) and hands this loop runs of elements that share a scale and a zero point.

use super::simd;

/// One run's constants: the divisor and the zero point, and the target's bounds and code mask.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct IntegerQuantizer {
    divisor: f32,
    /// The bounds of the quotient before rounding: `qmin - zero_point` and `qmax - zero_point`.
    low: f32,
    high: f32,
    zero_point: i32,
    mask: u16,
}

impl IntegerQuantizer {
    /// `saturate(round(x / divisor) + zero_point)` into `[qmin, qmax]`, codes masked to `mask`
    /// (the target's width: 0xFF for int8, 0xF for int4). A NaN quotient gives `qmin`.
    ///
    /// Because the bounds are integers, clamping the quotient to `[qmin - zero_point, qmax -
    /// zero_point]` before rounding gives the same result as saturating after it, and keeps every
    /// lane within the range where the rounding instruction is exact. `None` unless the bounds and
    /// the zero point are exact in float32 (|values| below 2^24), as every ONNX integer target's are.
    #[must_use]
    pub fn new(divisor: f32, zero_point: i32, qmin: i32, qmax: i32, mask: u16) -> Option<IntegerQuantizer> {
        let exact = |v: i64| v.unsigned_abs() < 1 << 24;
        let (low, high) = (i64::from(qmin) - i64::from(zero_point), i64::from(qmax) - i64::from(zero_point));
        if !(exact(low) && exact(high) && exact(zero_point.into()) && qmin <= qmax) {
            return None;
        }
        Some(IntegerQuantizer { divisor, low: low as f32, high: high as f32, zero_point, mask })
    }

    /// The code of one float32 value.
    #[must_use]
    #[inline]
    pub fn code(&self, x: f32) -> u16 {
        let q = x / self.divisor;
        // `>=` is false for NaN, which then takes the low bound.
        let q = if q >= self.low { q } else { self.low }.min(self.high);
        // |q| < 2^24 here, so the conversion after rounding is exact.
        let rounded = crate::fmath::round_ties_even(q) as i32;
        (rounded + self.zero_point) as u16 & self.mask
    }

    /// Quantizes the float32 lanes of `src` (little-endian bytes) into `codes`.
    /// [`IntegerQuantizer::run`] over runs of 32 elements, each with its own divisor (this
    /// quantizer's own divisor is not used): `src` holds `32 * divisors.len()` float32s and `codes`
    /// receives as many codes. Blocked quantization (ONNX `block_size` 32, MX) in one pass.
    pub fn run_blocks_of_32(&self, src: &[u8], divisors: &[f32], codes: &mut [u16]) {
        assert!(src.len() == 128 * divisors.len() && codes.len() == 32 * divisors.len(), "whole runs of 32");
        #[cfg(target_arch = "x86_64")]
        if simd::isa().has_avx2() {
            let bounds = (self.low, self.high);
            simd::x86::quantize_f32_runs32(src, codes, divisors, bounds, self.zero_point, self.mask);
            return;
        }
        for ((s, c), &divisor) in src.chunks_exact(128).zip(codes.chunks_exact_mut(32)).zip(divisors) {
            let run = IntegerQuantizer { divisor, ..*self };
            for (c, b) in c.iter_mut().zip(s.chunks_exact(4)) {
                *c = run.code(f32::from_le_bytes(b.try_into().expect("4 bytes")));
            }
        }
    }

    /// Quantizes the float32 lanes of `src` (little-endian bytes, `4 * codes.len()` of them) into
    /// `codes` with this quantizer's divisor ([`IntegerQuantizer::code`] each).
    pub fn run(&self, src: &[u8], codes: &mut [u16]) {
        let mut done = 0;
        #[cfg(target_arch = "x86_64")]
        if simd::isa().has_avx2() {
            done = simd::x86::quantize_f32(src, codes, self.divisor, self.low, self.high, self.zero_point, self.mask);
        }
        for (c, b) in codes[done..].iter_mut().zip(src[4 * done..].chunks_exact(4)) {
            *c = self.code(f32::from_le_bytes(b.try_into().expect("4 bytes")));
        }
    }
}
