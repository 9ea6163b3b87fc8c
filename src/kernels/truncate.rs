//! 16-bit float sources (float16, bfloat16) into INT64 and UINT64 without a lookup per element.
//! Their table holds 65,536 eight-byte answers (512 KiB), which a lookup per element reads from
//! the L2 cache on mixed data: the pair ran at 0.9 G elements/s, under the speed of its own
//! output's stores. Here the value is truncated by arithmetic on the code's fields instead:
//!
//! * the significand (with its implicit bit) is put at the top of a 64-bit word and shifted right
//!   by what the exponent leaves: the value truncated toward zero, exact below 2^64 in magnitude;
//! * the sign is applied in two's complement (UINT64's negative values wrap, as the x86
//!   conversions leave them);
//! * out of range, infinities and NaN: the profiles that follow the x86 conversions answer with
//!   one of two words whatever the value, the "integer indefinite" 2^63 or 0. [`Truncate::new`]
//!   compares the arithmetic with the core's table on every code and finds, for each sign, the
//!   magnitudes from which 0 is the answer and those from which 2^63 is; the loop compares a
//!   lane's magnitude with its sign's two thresholds and gives it 0 or 2^63 by setting the
//!   significand and the shift, on 32-bit lanes.
//!
//! Where the table has any other answer (XLA saturates to the integer's bounds), there is no
//! kernel and the plan keeps the table.

use super::lut::Table;
use super::LANE_CHUNK;
use crate::dtype::{DType, Kind, Packing};

/// A magnitude past every one (codes have 16 bits).
const NEVER: i32 = 1 << 16;

/// What a run of codes gets: the truncation, 0, or 2^63.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Answer {
    Truncation,
    Zero,
    Top,
}

/// A 16-bit float source into INT64 or UINT64 (see the module's documentation).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Truncate {
    magnitude_mask: u32,
    sign_bit: u32,
    mantissa_bits: u32,
    bias: u32,
    /// Per sign (positive, negative): magnitudes from this one up are answered 0 ([`NEVER`]:
    /// none)...
    zero_from: [i32; 2],
    /// ...and from this one up 2^63 (the bands are in this order wherever a profile has both).
    top_from: [i32; 2],
}

impl Truncate {
    /// The kernel for `from -> to`, or `None`: not a two-byte float source into a 64-bit integer,
    /// or the table answers some code with something the kernel cannot give.
    pub(crate) fn new(from: DType, to: DType, table: &Table) -> Option<Truncate> {
        if !matches!(to, DType::Int64 | DType::Uint64) || from.packing() != Packing::Bytes(2) {
            return None;
        }
        let Kind::Float(f) = from.kind() else { return None };
        if f.width() != 16 || f.bias < 0 || f.mantissa_bits > 23 {
            return None;
        }
        let sign_bit = if f.signed { f.sign_mask() as u32 } else { 0 };
        let magnitude_mask = if f.signed { 0x7FFF } else { 0xFFFF };
        let mut kernel = Truncate {
            magnitude_mask,
            sign_bit,
            mantissa_bits: f.mantissa_bits,
            bias: f.bias as u32,
            zero_from: [NEVER; 2],
            top_from: [NEVER; 2],
        };
        // Whether `answer` is the table's for a code.
        let probe = kernel;
        let right = |code: u32, answer: Answer| probe.lane(code, answer) == table.code(code as usize);
        let signs: &[u32] = if sign_bit == 0 { &[0] } else { &[0, sign_bit] };
        for (slot, &sign) in signs.iter().enumerate() {
            // From the largest magnitude down: as many as 2^63 is right for, then as many as 0 is
            // right for; the truncation must be right for every magnitude below. (Taking each band
            // as far down as it goes leaves the least for the bands below it.)
            let mut magnitude = magnitude_mask as i32;
            while magnitude >= 0 && right(sign | magnitude as u32, Answer::Top) {
                magnitude -= 1;
            }
            let top_from = magnitude + 1;
            while magnitude >= 0 && right(sign | magnitude as u32, Answer::Zero) {
                magnitude -= 1;
            }
            let zero_from = magnitude + 1;
            if !(0..=magnitude).all(|m| right(sign | m as u32, Answer::Truncation)) {
                return None;
            }
            let never_if_empty = |from: i32, to: i32| if from >= to { NEVER } else { from };
            kernel.top_from[slot] = never_if_empty(top_from, magnitude_mask as i32 + 1);
            kernel.zero_from[slot] = never_if_empty(zero_from, top_from);
        }
        Some(kernel)
    }

    /// One code's answer (what [`Truncate::run`] computes; for [`Truncate::new`]).
    fn lane(self, code: u32, answer: Answer) -> u64 {
        let (significand, right) = self.fields(code, answer == Answer::Zero, answer == Answer::Top);
        self.word(significand, right)
    }

    /// The 32-bit half of the work: a code's significand (with the sign in bit 31) and how far
    /// right to shift it once it is at the top of a 64-bit word. Or 0 (`zero`), or 2^63 (`top`).
    #[inline(always)]
    fn fields(self, code: u32, zero: bool, top: bool) -> (u32, u32) {
        let Truncate { magnitude_mask, sign_bit, mantissa_bits, bias, .. } = self;
        let magnitude = code & magnitude_mask;
        let exponent = magnitude >> mantissa_bits;
        let implicit = 1 << mantissa_bits;
        // Below 1 (subnormals included) the value truncates to 0.
        let significand = if exponent < bias || zero { 0 } else { magnitude & (implicit - 1) | implicit };
        let significand = if top { implicit } else { significand };
        // Exponent field `bias` is 1: the significand's top bit shifts down to bit 0; `bias + 63`
        // is 2^63: no shift. Fields from `bias + 64` up wrap around to a wrong shift, which the
        // ranges answer (or there is no kernel).
        let right = if top { 0 } else { (63 + bias).wrapping_sub(exponent) & 63 };
        let negative = u32::from(code & sign_bit != 0) << 31;
        (significand | negative, right)
    }

    /// The 64-bit half: the value truncated toward zero in two's complement (negative values
    /// wrap, as `as i64 as u64` would).
    #[inline(always)]
    fn word(self, signed_significand: u32, right: u32) -> u64 {
        let magnitude = u64::from(signed_significand & 0x7FFF_FFFF) << (63 - self.mantissa_bits) >> right;
        let sign = (signed_significand as i32 >> 31) as i64 as u64;
        (magnitude ^ sign).wrapping_sub(sign)
    }

    /// Converts `n` elements (`src` and `dst` hold exactly their bytes). Two passes over each
    /// chunk: the 32-bit fields, then the 64-bit words. In one loop the compiler ran the 32-bit
    /// half four lanes at a time, at the width of the 64-bit half (1.3 against 1.6 G elements/s
    /// here, on data in the cache).
    #[inline(always)]
    pub(crate) fn run(&self, src: &[u8], dst: &mut [u8], n: usize) {
        // Plain locals, not fields read in the loop: the loop then blends values in registers.
        let kernel = *self;
        let Truncate {
            magnitude_mask,
            sign_bit,
            zero_from: [zero_positive, zero_negative],
            top_from: [top_positive, top_negative],
            ..
        } = kernel;
        let mut codes = [0u32; LANE_CHUNK];
        let mut significands = [0u32; LANE_CHUNK];
        let mut shifts = [0u32; LANE_CHUNK];
        let mut start = 0;
        while start < n {
            let len = LANE_CHUNK.min(n - start);
            let s = &src[start * 2..(start + len) * 2];
            let d = &mut dst[start * 8..(start + len) * 8];
            let codes = &mut codes[..len];
            codes
                .iter_mut()
                .zip(s.chunks_exact(2))
                .for_each(|(c, b)| *c = u32::from(u16::from_le_bytes(b.try_into().expect("2 bytes"))));
            let (significands, shifts) = (&mut significands[..len], &mut shifts[..len]);
            for ((&c, significand), right) in codes.iter().zip(significands.iter_mut()).zip(shifts.iter_mut()) {
                // Compared as i32: one instruction, where an unsigned comparison takes two.
                let magnitude = (c & magnitude_mask) as i32;
                let negative = c & sign_bit != 0;
                let zero = magnitude >= if negative { zero_negative } else { zero_positive };
                let top = magnitude >= if negative { top_negative } else { top_positive };
                (*significand, *right) = kernel.fields(c, zero, top);
            }
            for ((o, &significand), &right) in d.chunks_exact_mut(8).zip(significands.iter()).zip(shifts.iter()) {
                o.copy_from_slice(&kernel.word(significand, right).to_le_bytes());
            }
            start += len;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convert::{self, CastOptions};
    use crate::profile::Profile;

    const INDEFINITE: u64 = 1 << 63;

    /// The core's table of `from -> to` (inside a vector block or not).
    fn table(from: DType, to: DType, profile: Profile, in_block: bool) -> Table {
        let opts = CastOptions::with_profile(profile);
        Table::build(from, to, |code| {
            if in_block {
                convert::convert_code_in_block(from, to, code, &opts)
            } else {
                convert::convert_code(from, to, code, &opts)
            }
        })
        .expect("a table")
    }

    fn run(from: DType, to: DType, profile: Profile, codes: &[u16]) -> Vec<u64> {
        let kernel = Truncate::new(from, to, &table(from, to, profile, false)).expect("a kernel for this pair");
        let src: Vec<u8> = codes.iter().flat_map(|c| c.to_le_bytes()).collect();
        let mut dst = vec![0u8; codes.len() * 8];
        kernel.run(&src, &mut dst, codes.len());
        dst.chunks_exact(8).map(|b| u64::from_le_bytes(b.try_into().unwrap())).collect()
    }

    #[test]
    fn the_profiles_that_answer_like_x86_get_a_kernel_and_xla_keeps_its_table() {
        // Every profile but XLA converts out-of-range values and NaN into 64-bit integers as the
        // x86 instructions do (2^63, or 0 for UINT64 above 2^64); XLA saturates (i64::MAX,
        // u64::MAX) and maps NaN to 0, answers this kernel does not give.
        for profile in Profile::ALL {
            for from in [DType::Float16, DType::Bfloat16] {
                for to in [DType::Int64, DType::Uint64] {
                    for in_block in [false, true] {
                        let kernel = Truncate::new(from, to, &table(from, to, profile, in_block));
                        assert_eq!(kernel.is_some(), profile != Profile::Xla, "{from:?} -> {to:?} under {profile:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn hand_checked_float16_values() {
        // 1.5 = 0x3E00, -3.5 = 0xC300, 65504 = 0x7BFF, 0.75 = 0x3A00, the smallest subnormal 0x0001,
        // -0 = 0x8000, +inf = 0x7C00, -inf = 0xFC00, NaN = 0x7E00, -NaN = 0xFE00.
        let codes = [0x3E00, 0xC300, 0x7BFF, 0x3A00, 0x0001, 0x8000, 0x7C00, 0xFC00, 0x7E00, 0xFE00];
        let int64 = run(DType::Float16, DType::Int64, Profile::Spec, &codes);
        assert_eq!(int64, [1, (-3i64) as u64, 65504, 0, 0, 0, INDEFINITE, INDEFINITE, INDEFINITE, INDEFINITE]);
        // UINT64 as x86 converts: -3 wraps, +inf is 0 (2^63 subtracted, then indefinite xor 2^63).
        let uint64 = run(DType::Float16, DType::Uint64, Profile::Spec, &codes);
        assert_eq!(uint64, [1, (-3i64) as u64, 65504, 0, 0, 0, 0, INDEFINITE, INDEFINITE, INDEFINITE]);
    }

    #[test]
    fn hand_checked_bfloat16_values_at_the_ends_of_the_range() {
        // 2^63 = 0x5F00, 2^63 + 2^56 = 0x5F01, 2^64 = 0x5F80, -2^63 = 0xDF00, -(2^63 + 2^56) =
        // 0xDF01, 1.9921875 * 2^62 = 0x5EFF, 2^-126 = 0x0080, -1 = 0xBF80.
        let codes = [0x5F00, 0x5F01, 0x5F80, 0xDF00, 0xDF01, 0x5EFF, 0x0080, 0xBF80];
        let int64 = run(DType::Bfloat16, DType::Int64, Profile::Spec, &codes);
        assert_eq!(
            int64,
            [INDEFINITE, INDEFINITE, INDEFINITE, INDEFINITE, INDEFINITE, 0x7F80_0000_0000_0000, 0, u64::MAX]
        );
        let uint64 = run(DType::Bfloat16, DType::Uint64, Profile::Spec, &codes);
        assert_eq!(
            uint64,
            [INDEFINITE, 0x8100_0000_0000_0000, 0, INDEFINITE, INDEFINITE, 0x7F80_0000_0000_0000, 0, u64::MAX]
        );
    }
}
