//! Fast kernels, separate from the rounding core in [`crate::round`] and checked against it (and
//! against the independent oracle) over every float32 input: `tests/kernels.rs` samples them in
//! `cargo test`, `tests/exhaustive.rs` sweeps all 2^32 inputs (`--ignored`).
//!
//! * [`Float8Encoder`]: float32 -> one of the four float8 formats, nearest-even, saturating or not.
//!   Its constants are derived from the [`FloatFormat`] descriptor, so there is one kernel for all
//!   four formats. Normal results round with integer arithmetic on the float32 bits (the carry
//!   runs into the exponent); subnormal results round with one float32 addition of a power of two
//!   whose ulp equals the target's subnormal step, which the hardware rounds to nearest-even.
//! * [`DecodeTable`]: any format of 8 bits or fewer -> float32 through a 256-entry table built from
//!   the core (every such value is a float32).

use crate::format::{self, FloatFormat, NonFinite};
use crate::round::{self, RoundingOptions};
use crate::value::Value;
use std::sync::OnceLock;

/// float32 -> float8 (E4M3FN, E4M3FNUZ, E5M2, E5M2FNUZ) with nearest-even rounding.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Float8Encoder {
    /// float32 bits of the smallest normal target value (2^(1-bias)).
    min_normal_bits: u32,
    /// Below `min_normal_bits`, |x| + `subnormal_magic` rounds |x| to the subnormal step.
    subnormal_magic: f32,
    /// float32 bits of the midpoint between MAX and the next value the exponent range would allow.
    overflow_midpoint_bits: u32,
    /// Whether that midpoint itself overflows (ties go to the even neighbour, which is above MAX
    /// when MAX's last fraction bit is 1).
    midpoint_overflows: bool,
    /// Right shift from a float32 fraction to the target's.
    shift: u32,
    /// Subtracted from the shifted bits to move float32's exponent bias to the target's.
    rebias: u32,
    overflow_code: u8,
    overflow_signed: bool,
    nan_code: u8,
    nan_signed: bool,
    signed_zero: bool,
}

impl Float8Encoder {
    /// The encoder for an 8-bit format with subnormals (the four float8 variants), with the given
    /// `saturate` and the code of +NaN (`nan_positive`, the sign bit is added for the formats whose
    /// NaN has a sign). `None` for any other format.
    #[must_use]
    pub fn new(f: &FloatFormat, saturate: bool, nan_positive: u8) -> Option<Float8Encoder> {
        if f.width() != 8 || !f.signed || !f.subnormals {
            return None;
        }
        let m = f.mantissa_bits;
        let bias = f.bias;
        // The largest finite value and its successor in an unbounded exponent range; the midpoint
        // of the two is exactly representable in float32 (at most m + 2 significant bits).
        let max = f.to_f64(f.max_code());
        let max_fraction_odd = f.max_code() & 1 == 1;
        let ulp_at_max = 2f64.powi(max.log2().floor() as i32 - m as i32);
        let midpoint = (max + ulp_at_max / 2.0) as f32;
        let min_normal = 2f32.powi(1 - bias);
        let (overflow_code, overflow_signed) = if saturate {
            (f.max_code() as u8, true)
        } else {
            match f.non_finite {
                NonFinite::Ieee => (f.infinity_code(false)? as u8, true),
                NonFinite::NanAtAllOnes => (f.nan_code(false)? as u8, true),
                NonFinite::NanAtNegativeZero => (f.nan_code(false)? as u8, false),
                NonFinite::None => (f.max_code() as u8, true),
            }
        };
        Some(Float8Encoder {
            min_normal_bits: min_normal.to_bits(),
            subnormal_magic: 2f32.powi(1 - bias - m as i32 + 23),
            overflow_midpoint_bits: midpoint.to_bits(),
            midpoint_overflows: max_fraction_odd,
            shift: 23 - m,
            rebias: ((127 - bias) as u32) << m,
            overflow_code,
            overflow_signed,
            nan_code: nan_positive,
            nan_signed: f.non_finite != NonFinite::NanAtNegativeZero,
            signed_zero: f.non_finite != NonFinite::NanAtNegativeZero,
        })
    }

    /// Encodes one value. Written without branches (every candidate is computed, then selected)
    /// so that loops over slices vectorise.
    #[inline]
    #[must_use]
    pub fn encode(&self, x: f32) -> u8 {
        let bits = x.to_bits();
        let sign = (bits >> 24) & 0x80;
        let abs = bits & 0x7FFF_FFFF;
        // Normal results: round the fraction to nearest-even in the integer domain; the carry
        // runs into the exponent. Wrapping: below the normal range this candidate is discarded.
        let half_minus_one = (1u32 << (self.shift - 1)) - 1;
        let odd = (abs >> self.shift) & 1;
        let normal = ((abs + half_minus_one + odd) >> self.shift).wrapping_sub(self.rebias);
        // Subnormal results: one float32 addition rounds to the target's subnormal step.
        let subnormal =
            (f32::from_bits(abs) + self.subnormal_magic).to_bits().wrapping_sub(self.subnormal_magic.to_bits());
        let magnitude = if abs < self.min_normal_bits { subnormal } else { normal };
        let sign_if = |signed: bool| if signed { sign } else { 0 };
        let finite = magnitude | if magnitude == 0 { sign_if(self.signed_zero) } else { sign };
        let overflow_threshold = self.overflow_midpoint_bits + u32::from(!self.midpoint_overflows);
        let overflow = u32::from(self.overflow_code) | sign_if(self.overflow_signed);
        let nan = u32::from(self.nan_code) | sign_if(self.nan_signed);
        // Infinity is above every threshold, so it takes the overflow result (MAX when saturating).
        let code = if abs >= overflow_threshold { overflow } else { finite };
        (if abs > 0x7F80_0000 { nan } else { code }) as u8
    }

    /// Encodes a slice. `dst` and `src` must have the same length (checked by the callers).
    pub fn encode_slice(&self, src: &[f32], dst: &mut [u8]) {
        for (d, &s) in dst.iter_mut().zip(src) {
            *d = self.encode(s);
        }
    }
}

/// Exact float32 values of every code of a format of 8 bits or fewer.
#[derive(Clone, Debug)]
pub struct DecodeTable {
    values: Box<[f32; 256]>,
}

impl DecodeTable {
    /// Builds the table from the core (NaN codes give the quiet NaN with the code's sign).
    #[must_use]
    pub fn new(f: &FloatFormat) -> Option<DecodeTable> {
        if f.width() > 8 {
            return None;
        }
        let mut values = Box::new([0f32; 256]);
        for (code, v) in values.iter_mut().enumerate().take(1 << f.width()) {
            let decoded: Value = f.decode(code as u64);
            *v = f32::from_bits(round::encode(&format::F32, decoded, RoundingOptions::IEEE) as u32);
        }
        Some(DecodeTable { values })
    }

    /// The table of one of lowbit's narrow formats, built once.
    #[must_use]
    pub fn of(f: &FloatFormat) -> Option<&'static DecodeTable> {
        static TABLES: [OnceLock<Option<DecodeTable>>; 12] = [const { OnceLock::new() }; 12];
        let index = format::ALL_FORMATS.iter().position(|g| *g == f)?;
        TABLES[index].get_or_init(|| DecodeTable::new(f)).as_ref()
    }

    /// The value of one code (bits above the format's width select table entries the format does
    /// not use; callers mask codes first).
    #[inline]
    #[must_use]
    pub fn decode(&self, code: u8) -> f32 {
        self.values[usize::from(code)]
    }

    /// Decodes a slice of codes.
    pub fn decode_slice(&self, src: &[u8], dst: &mut [f32]) {
        for (d, &s) in dst.iter_mut().zip(src) {
            *d = self.values[usize::from(s)];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derived_constants() {
        let e4 = Float8Encoder::new(&format::E4M3FN, false, 0x7F).unwrap();
        assert_eq!(f32::from_bits(e4.overflow_midpoint_bits), 464.0);
        assert!(!e4.midpoint_overflows);
        let e5 = Float8Encoder::new(&format::E5M2, false, 0x7E).unwrap();
        assert_eq!(f32::from_bits(e5.overflow_midpoint_bits), 61440.0);
        assert!(e5.midpoint_overflows);
        let fnuz = Float8Encoder::new(&format::E4M3FNUZ, true, 0x80).unwrap();
        assert_eq!(f32::from_bits(fnuz.overflow_midpoint_bits), 248.0);
        assert!(Float8Encoder::new(&format::E8M0, true, 0xFF).is_none());
        assert!(Float8Encoder::new(&format::E2M1, true, 0x7).is_none());
    }

    #[test]
    fn a_few_codes() {
        let e4 = Float8Encoder::new(&format::E4M3FN, false, 0x7F).unwrap();
        for (x, want) in [(464.0f32, 0x7E), (480.0, 0x7F), (-480.0, 0xFF), (3.0 * 2f32.powi(-10), 0x02), (-1e-10, 0x80)]
        {
            assert_eq!(e4.encode(x), want, "{x}");
        }
        let fnuz = Float8Encoder::new(&format::E4M3FNUZ, false, 0x80).unwrap();
        assert_eq!(fnuz.encode(-1e-10), 0x00);
        assert_eq!(fnuz.encode(f32::NEG_INFINITY), 0x80);
        assert_eq!(DecodeTable::of(&format::E8M0).unwrap().decode(0x00), 2f32.powi(-127));
    }
}
