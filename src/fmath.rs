//! The float operations `core` lacks on our minimum Rust version (`trunc`, `floor`, `ceil`,
//! `round`, `round_ties_even`, `fract`) and exact powers of two.
//!
//! With `std` the rounding functions are `std`'s (they compile to the CPU's rounding instructions
//! where it has them, which the kernels rely on for speed); without it they are the exact bit
//! manipulations of [`portable`], which the tests compare with `std`'s on every float32 whose low
//! 16 bits take one of several patterns and on every edge case of both widths.

/// Rounding to an integral value, for `f32` and `f64`.
pub(crate) trait Integral: Copy {
    /// Toward zero.
    fn trunc_(self) -> Self;
    /// Toward -infinity.
    fn floor_(self) -> Self;
    /// Toward +infinity.
    fn ceil_(self) -> Self;
    /// To nearest, ties away from zero.
    fn round_(self) -> Self;
    /// To nearest, ties to even.
    fn round_ties_even_(self) -> Self;
}

/// `x` rounded toward zero (NaN, infinities and -0 kept).
#[inline(always)]
pub(crate) fn trunc<F: Integral>(x: F) -> F {
    x.trunc_()
}

/// `x` rounded toward -infinity.
#[inline(always)]
pub(crate) fn floor<F: Integral>(x: F) -> F {
    x.floor_()
}

/// `x` rounded toward +infinity.
#[inline(always)]
pub(crate) fn ceil<F: Integral>(x: F) -> F {
    x.ceil_()
}

/// `x` rounded to nearest, ties away from zero.
#[inline(always)]
pub(crate) fn round<F: Integral>(x: F) -> F {
    x.round_()
}

/// `x` rounded to nearest, ties to even.
#[inline(always)]
pub(crate) fn round_ties_even<F: Integral>(x: F) -> F {
    x.round_ties_even_()
}

/// The exact power of two `2^e` (0 below the subnormals, infinity above the largest exponent).
#[must_use]
pub(crate) const fn pow2_f64(e: i32) -> f64 {
    if e > 1023 {
        f64::INFINITY
    } else if e >= -1022 {
        f64::from_bits(((e + 1023) as u64) << 52)
    } else if e >= -1074 {
        f64::from_bits(1u64 << (e + 1074))
    } else {
        0.0
    }
}

/// The exact power of two `2^e` in float32 (0 below the subnormals, infinity above).
#[must_use]
pub(crate) const fn pow2_f32(e: i32) -> f32 {
    if e > 127 {
        f32::INFINITY
    } else if e >= -126 {
        f32::from_bits(((e + 127) as u32) << 23)
    } else if e >= -149 {
        f32::from_bits(1u32 << (e + 149))
    } else {
        0.0
    }
}

/// `floor(log2(x))` of a positive finite `x`, exactly (from the bits, subnormals included).
#[must_use]
pub(crate) const fn floor_log2_f64(x: f64) -> i32 {
    let bits = x.to_bits() & !(1u64 << 63);
    let biased = (bits >> 52) as i32;
    if biased == 0 {
        // Subnormal: the leading one of the 52-bit field sets the exponent.
        -1074 + 63 - bits.leading_zeros() as i32
    } else {
        biased - 1023
    }
}

/// Exact bit-level rounding, used without `std` (and compared with `std` by the tests).
#[cfg_attr(feature = "std", allow(dead_code))]
pub(crate) mod portable {
    macro_rules! rounding {
        ($float:ty, $bits:ty, $mantissa:expr, $trunc:ident, $floor:ident, $ceil:ident, $round:ident, $even:ident) => {
            /// Toward zero: clears the fraction bits below the binary point.
            #[inline]
            pub(crate) fn $trunc(x: $float) -> $float {
                const EXPONENT_MASK: $bits = (1 << (<$bits>::BITS - 1 - $mantissa)) - 1;
                const BIAS: i32 = (EXPONENT_MASK >> 1) as i32;
                let bits = x.to_bits();
                let exponent = ((bits >> $mantissa) & EXPONENT_MASK) as i32 - BIAS;
                if exponent >= $mantissa {
                    // Integral already (or infinite, or NaN).
                    x
                } else if exponent < 0 {
                    // |x| < 1: a zero of x's sign.
                    <$float>::from_bits(bits & (1 << (<$bits>::BITS - 1)))
                } else {
                    let fraction: $bits = (((1 as $bits) << $mantissa) - 1) >> exponent;
                    <$float>::from_bits(bits & !fraction)
                }
            }

            /// Toward -infinity.
            #[inline]
            pub(crate) fn $floor(x: $float) -> $float {
                let t = $trunc(x);
                // A negative non-integer truncated upward; |t| < 2^mantissa so t - 1 is exact.
                if t > x {
                    t - 1.0
                } else {
                    t
                }
            }

            /// Toward +infinity.
            #[inline]
            pub(crate) fn $ceil(x: $float) -> $float {
                let t = $trunc(x);
                if t < x {
                    t + 1.0
                } else {
                    t
                }
            }

            /// To nearest, ties away from zero.
            #[inline]
            pub(crate) fn $round(x: $float) -> $float {
                let t = $trunc(x);
                // Below 2^mantissa the fraction x - t is exact.
                if (x - t).abs() >= 0.5 {
                    t + (1.0 as $float).copysign(x)
                } else {
                    t
                }
            }

            /// To nearest, ties to even.
            #[inline]
            pub(crate) fn $even(x: $float) -> $float {
                let t = $trunc(x);
                let fraction = (x - t).abs();
                // |t| < 2^mantissa when there is a fraction, so halving t shows its parity exactly.
                let odd = $trunc(t * 0.5) != t * 0.5;
                if fraction > 0.5 || (fraction == 0.5 && odd) {
                    t + (1.0 as $float).copysign(x)
                } else {
                    t
                }
            }
        };
    }

    rounding!(f32, u32, 23, trunc_f32, floor_f32, ceil_f32, round_f32, round_ties_even_f32);
    rounding!(f64, u64, 52, trunc_f64, floor_f64, ceil_f64, round_f64, round_ties_even_f64);
}

macro_rules! integral {
    ($float:ty, $trunc:ident, $floor:ident, $ceil:ident, $round:ident, $even:ident) => {
        #[cfg(feature = "std")]
        impl Integral for $float {
            #[inline(always)]
            fn trunc_(self) -> Self {
                self.trunc()
            }
            #[inline(always)]
            fn floor_(self) -> Self {
                self.floor()
            }
            #[inline(always)]
            fn ceil_(self) -> Self {
                self.ceil()
            }
            #[inline(always)]
            fn round_(self) -> Self {
                self.round()
            }
            #[inline(always)]
            fn round_ties_even_(self) -> Self {
                self.round_ties_even()
            }
        }

        #[cfg(not(feature = "std"))]
        impl Integral for $float {
            #[inline(always)]
            fn trunc_(self) -> Self {
                portable::$trunc(self)
            }
            #[inline(always)]
            fn floor_(self) -> Self {
                portable::$floor(self)
            }
            #[inline(always)]
            fn ceil_(self) -> Self {
                portable::$ceil(self)
            }
            #[inline(always)]
            fn round_(self) -> Self {
                portable::$round(self)
            }
            #[inline(always)]
            fn round_ties_even_(self) -> Self {
                portable::$even(self)
            }
        }
    };
}

integral!(f32, trunc_f32, floor_f32, ceil_f32, round_f32, round_ties_even_f32);
integral!(f64, trunc_f64, floor_f64, ceil_f64, round_f64, round_ties_even_f64);

#[cfg(all(test, feature = "std"))]
mod tests {
    use super::portable::*;
    use super::*;

    /// Same value and same sign of zero (NaN equals NaN).
    fn same32(a: f32, b: f32) -> bool {
        a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
    }

    fn same64(a: f64, b: f64) -> bool {
        a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
    }

    #[test]
    fn portable_f32_rounding_equals_std_on_every_top_half_and_several_low_halves() {
        for high in 0..=u32::from(u16::MAX) {
            for low in [0u32, 1, 0x7FFF, 0x8000, 0x8001, 0xFFFF, 0x4000, 0xC000] {
                let x = f32::from_bits(high << 16 | low);
                let cases: [(f32, f32, &str); 5] = [
                    (trunc_f32(x), x.trunc(), "trunc"),
                    (floor_f32(x), x.floor(), "floor"),
                    (ceil_f32(x), x.ceil(), "ceil"),
                    (round_f32(x), x.round(), "round"),
                    (round_ties_even_f32(x), x.round_ties_even(), "round_ties_even"),
                ];
                for (got, want, op) in cases {
                    assert!(same32(got, want), "{op}({x:e}) bits {:#x}: {got:e} vs {want:e}", x.to_bits());
                }
            }
        }
    }

    #[test]
    fn portable_f64_rounding_equals_std_on_edges_and_a_sweep() {
        let mut xs = vec![
            0.0,
            -0.0,
            0.5,
            -0.5,
            1.5,
            -1.5,
            2.5,
            -2.5,
            0.49999999999999994,
            -0.49999999999999994,
            4503599627370495.5,
            -4503599627370495.5,
            4503599627370496.0,
            9007199254740993.0,
            f64::MAX,
            f64::MIN_POSITIVE,
            5e-324,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
        ];
        // Every exponent, with fractions at and around one half.
        for e in -1074..=1023 {
            let p = pow2_f64(e);
            xs.extend([p, -p, p * 1.5, -p * 1.5, p * 1.25, p * 1.75, p + 0.5, p - 0.5, -(p + 0.5)]);
        }
        for x in xs {
            let cases: [(f64, f64, &str); 5] = [
                (trunc_f64(x), x.trunc(), "trunc"),
                (floor_f64(x), x.floor(), "floor"),
                (ceil_f64(x), x.ceil(), "ceil"),
                (round_f64(x), x.round(), "round"),
                (round_ties_even_f64(x), x.round_ties_even(), "round_ties_even"),
            ];
            for (got, want, op) in cases {
                assert!(same64(got, want), "{op}({x:e}): {got:e} vs {want:e}");
            }
        }
    }

    #[test]
    fn powers_of_two_are_exact_from_the_subnormals_to_the_largest() {
        // Hand values: 2^-1074 is the smallest float64 subnormal (bits 1), 2^-1022 the smallest
        // normal (exponent field 1), 2^1023 the largest power (field 2046).
        assert_eq!(pow2_f64(-1074).to_bits(), 1);
        assert_eq!(pow2_f64(-1075), 0.0);
        assert_eq!(pow2_f64(-1022).to_bits(), 1 << 52);
        assert_eq!(pow2_f64(1023).to_bits(), 2046 << 52);
        assert_eq!(pow2_f64(1024), f64::INFINITY);
        assert_eq!(pow2_f32(-149).to_bits(), 1);
        assert_eq!(pow2_f32(-126).to_bits(), 1 << 23);
        assert_eq!(pow2_f32(127).to_bits(), 254 << 23);
        assert_eq!(pow2_f32(128), f32::INFINITY);
        for e in -1074..=1023 {
            // Halving walks down the same ladder exactly (every step is a power of two).
            if e > -1074 {
                assert_eq!(pow2_f64(e) / 2.0, pow2_f64(e - 1));
            }
            assert_eq!(floor_log2_f64(pow2_f64(e)), e);
            if e > -1073 {
                // Just below a power of two the floor is one less.
                let below = f64::from_bits(pow2_f64(e).to_bits() - 1);
                assert_eq!(floor_log2_f64(below), e - 1, "2^{e}");
            }
        }
        for e in -149..=127 {
            assert_eq!(f64::from(pow2_f32(e)), pow2_f64(e));
        }
    }
}
