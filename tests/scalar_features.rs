//! The scalar types' optional features (`num-traits`, `serde`, `bytemuck`) and `Bits`. `cargo test`
//! builds lowbit with all three (Cargo.toml's dev-dependency on itself). Expected values are
//! hand-computed (arithmetic in the comments) or come from the independent oracle in
//! tests/support/oracle.rs.

#[path = "support/oracle.rs"]
mod oracle;

use lowbit::{Bits, Scalar};
// Some are used only by the feature blocks below.
#[allow(unused_imports)]
use lowbit::{F4E2M1, F6E2M3, F6E3M2, F8E4M3FN, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ, F8E8M0, I2, I4, U2, U4};
use oracle::{OFormat, OMode, OValue};

/// Calls `$check::<T>()` for every narrow float type.
#[allow(unused_macros)] // Used only by some of the features' blocks.
macro_rules! every_float_type {
    ($check:ident) => {
        every_float_type_but_e8m0!($check);
        $check::<F8E8M0>();
    };
}

/// Calls `$check::<T>()` for every narrow float type but the unsigned power-of-two E8M0.
#[allow(unused_macros)]
macro_rules! every_float_type_but_e8m0 {
    ($check:ident) => {
        $check::<F8E4M3FN>();
        $check::<F8E4M3FNUZ>();
        $check::<F8E5M2>();
        $check::<F8E5M2FNUZ>();
        $check::<F6E2M3>();
        $check::<F6E3M2>();
        $check::<F4E2M1>();
    };
}

/// The oracle's format and `from_f32` rounding direction of each float type.
#[allow(dead_code)]
trait Oracle: Scalar {
    const OFORMAT: OFormat;
    const MODE: OMode = OMode::NearestEven;
}

macro_rules! oracle_format {
    ($($name:ident = $format:ident),*) => {$(
        impl Oracle for $name {
            const OFORMAT: OFormat = OFormat::$format;
        }
    )*};
}

oracle_format!(
    F8E4M3FN = E4M3FN,
    F8E4M3FNUZ = E4M3FNUZ,
    F8E5M2 = E5M2,
    F8E5M2FNUZ = E5M2FNUZ,
    F6E2M3 = E2M3,
    F6E3M2 = E3M2,
    F4E2M1 = E2M1
);

impl Oracle for F8E8M0 {
    const OFORMAT: OFormat = OFormat::E8M0;
    // ONNX's default round_mode for E8M0 is "up".
    const MODE: OMode = OMode::Up;
}

/// The oracle's code for `x` rounded once with `saturate=1`.
#[allow(dead_code)]
fn oracle_f32<T: Oracle>(x: f32) -> u8 {
    oracle::encode(T::OFORMAT, &oracle::value_from_f32_bits(x.to_bits()), true, T::MODE) as u8
}

#[allow(dead_code)]
fn oracle_f64<T: Oracle>(x: f64) -> u8 {
    oracle::encode(T::OFORMAT, &oracle::value_from_f64_bits(x.to_bits()), true, T::MODE) as u8
}

#[allow(dead_code)]
fn oracle_int<T: Oracle>(n: i128) -> u8 {
    oracle::encode(T::OFORMAT, &OValue::from_i128(n), true, T::MODE) as u8
}

/// The codes of a type (2^width of them).
#[allow(dead_code)]
fn codes<T: Scalar>() -> impl Iterator<Item = T> {
    let width = T::FORMAT.map_or(8, |f| f.width());
    (0..1u16 << width).map(|c| T::from_bits(c as u8))
}

#[test]
fn special_constants_are_the_codes_from_f32_gives() {
    // E4M3FN: NaN 0_1111_111 = 0x7F, -0 = 0x80. E5M2: +Inf 0_11111_00 = 0x7C, -Inf 0xFC, the
    // quiet NaN 0_11111_10 = 0x7E. FNUZ: the one NaN 0x80. E8M0: NaN 0xFF. float6 -0 = 0b10_0000
    // = 0x20, float4 -0 = 0b1000.
    let cases: [(u8, u8, u8); 12] = [
        (F8E4M3FN::NAN.to_bits(), F8E4M3FN::from_f32(f32::NAN).to_bits(), 0x7F),
        (F8E4M3FN::NEG_ZERO.to_bits(), F8E4M3FN::from_f32(-0.0).to_bits(), 0x80),
        (F8E5M2::NAN.to_bits(), F8E5M2::from_f32(f32::NAN).to_bits(), 0x7E),
        (F8E5M2::INFINITY.to_bits(), F8E5M2::from_f32_nonsaturating(f32::INFINITY).to_bits(), 0x7C),
        (F8E5M2::NEG_INFINITY.to_bits(), F8E5M2::from_f32_nonsaturating(f32::NEG_INFINITY).to_bits(), 0xFC),
        (F8E4M3FNUZ::NAN.to_bits(), F8E4M3FNUZ::from_f32(f32::NAN).to_bits(), 0x80),
        (F8E5M2FNUZ::NAN.to_bits(), F8E5M2FNUZ::from_f32(f32::NAN).to_bits(), 0x80),
        (F8E8M0::NAN.to_bits(), F8E8M0::from_f32(f32::NAN).to_bits(), 0xFF),
        (F8E5M2FNUZ::ZERO.to_bits(), F8E5M2FNUZ::from_f32(-0.0).to_bits(), 0x00),
        (F6E2M3::NEG_ZERO.to_bits(), F6E2M3::from_f32(-0.0).to_bits(), 0x20),
        (F6E3M2::NEG_ZERO.to_bits(), F6E3M2::from_f32(-0.0).to_bits(), 0x20),
        (F4E2M1::NEG_ZERO.to_bits(), F4E2M1::from_f32(-0.0).to_bits(), 0x8),
    ];
    for (constant, converted, hand) in cases {
        assert_eq!((constant, converted), (hand, hand));
    }
}

mod bits_wrapper {
    use super::*;
    use std::collections::{BTreeSet, HashSet};

    #[test]
    fn bits_compares_codes_not_values() {
        // IEEE: NaN != NaN and -0 == +0; by code: the same NaN code is equal, -0 is not +0.
        assert_ne!(F8E5M2::NAN, F8E5M2::NAN);
        assert_eq!(Bits(F8E5M2::NAN), Bits(F8E5M2::NAN));
        assert_eq!(F8E5M2::ZERO, F8E5M2::NEG_ZERO);
        assert_ne!(Bits(F8E5M2::ZERO), Bits(F8E5M2::NEG_ZERO));
        // E5M2 NaNs: 0x7D, 0x7E, 0x7F and 0xFD, 0xFE, 0xFF are six distinct keys.
        let nans: HashSet<Bits<F8E5M2>> = codes::<F8E5M2>().filter(|x| x.is_nan()).map(Bits).collect();
        assert_eq!(nans.len(), 6);
        // Every code of every type is its own key.
        assert_eq!(codes::<F8E4M3FN>().map(Bits).collect::<HashSet<_>>().len(), 256);
        assert_eq!(codes::<F4E2M1>().map(Bits::from).collect::<HashSet<_>>().len(), 16);
        assert_eq!(codes::<I4>().map(Bits).collect::<HashSet<_>>().len(), 16);
    }

    #[test]
    fn bits_orders_by_code() {
        // The order of the u8 codes: 0x00 (+0) < 0x38 (1.0) < 0x7F (NaN) < 0x80 (-0) < 0xB8 (-1).
        let set: BTreeSet<Bits<F8E4M3FN>> =
            [0xB8, 0x80, 0x7F, 0x38, 0x00].into_iter().map(|c| Bits(F8E4M3FN::from_bits(c))).collect();
        let order: Vec<u8> = set.into_iter().map(|b| b.0.to_bits()).collect();
        assert_eq!(order, [0x00, 0x38, 0x7F, 0x80, 0xB8]);
        // I4 codes: -1 is 0xF, above 7 = 0x7.
        assert!(Bits(I4::from_bits(0xF)) > Bits(I4::from_bits(0x7)));
    }
}

#[cfg(feature = "num-traits")]
mod num_traits_feature {
    use super::*;
    use num_traits::float::{FloatCore, TotalOrder};
    use num_traits::{Bounded, Float, FromPrimitive, Num, NumCast, One, Signed, ToPrimitive, Zero};

    #[test]
    fn zero_and_one_codes() {
        assert_eq!(<F8E4M3FN as Zero>::zero().to_bits(), 0x00);
        assert!(<F8E4M3FN as Zero>::is_zero(&F8E4M3FN::NEG_ZERO));
        // 1.0 = 2^0: E4M3 bias 7 -> 0_0111_000 = 0x38; E4M3FNUZ bias 8 -> 0_1000_000 = 0x40;
        // E5M2 bias 15 -> 0_01111_00 = 0x3C; E2M3 bias 1 -> 0_01_000 = 0x08; E2M1 bias 1 ->
        // 0_01_0 = 0x2; E3M2 bias 3 -> 0_011_00 = 0x0C.
        assert_eq!(<F8E4M3FN as One>::one().to_bits(), 0x38);
        assert_eq!(<F8E4M3FNUZ as One>::one().to_bits(), 0x40);
        assert_eq!(<F8E5M2 as One>::one().to_bits(), 0x3C);
        assert_eq!(<F6E2M3 as One>::one().to_bits(), 0x08);
        assert_eq!(<F6E3M2 as One>::one().to_bits(), 0x0C);
        assert_eq!(<F4E2M1 as One>::one().to_bits(), 0x2);
        assert_eq!(<I4 as Zero>::zero().to_i8(), 0);
        assert_eq!(<U2 as One>::one().to_i8(), 1);
    }

    #[test]
    fn specials_follow_from_f32() {
        // No infinity: infinity() saturates to MAX. E4M3FN 448 = 0_1111_110 = 0x7E; E4M3FNUZ
        // 240 = 0_1111_111 = 0x7F; E2M1 6 = 0_11_1 = 0x7.
        assert_eq!(<F8E4M3FN as Float>::infinity().to_bits(), 0x7E);
        assert_eq!(<F8E4M3FN as Float>::neg_infinity().to_bits(), 0xFE);
        assert_eq!(<F8E4M3FNUZ as Float>::infinity().to_bits(), 0x7F);
        assert_eq!(<F4E2M1 as FloatCore>::infinity().to_bits(), 0x7);
        assert!(!<F8E4M3FN as Float>::is_infinite(<F8E4M3FN as Float>::infinity()));
        // E5M2 has them: +Inf 0_11111_00 = 0x7C, -Inf 0xFC, NaN 0x7E.
        assert_eq!(<F8E5M2 as Float>::infinity().to_bits(), 0x7C);
        assert_eq!(<F8E5M2 as Float>::neg_infinity().to_bits(), 0xFC);
        assert_eq!(<F8E5M2 as Float>::nan().to_bits(), 0x7E);
        // FNUZ: the one NaN is 0x80; there is no -0, so neg_zero() is +0.
        assert_eq!(<F8E5M2FNUZ as Float>::nan().to_bits(), 0x80);
        assert_eq!(<F8E5M2FNUZ as Float>::neg_zero().to_bits(), 0x00);
        assert_eq!(<F8E4M3FN as Float>::neg_zero().to_bits(), 0x80);
        // No NaN: float4's NaN converts to +6 (0x7), float6's +NaN to -0 (0x20), as from_f32.
        assert_eq!(<F4E2M1 as Float>::nan().to_bits(), 0x7);
        assert_eq!(<F6E2M3 as Float>::nan().to_bits(), 0x20);
        assert_eq!(<F6E3M2 as Float>::nan().to_bits(), 0x20);
        assert!(!<F4E2M1 as Float>::is_nan(<F4E2M1 as Float>::nan()));
        // The same codes as from_f32 for every type with Float.
        fn same<T: Float + Scalar>() {
            if T::FORMAT.unwrap().infinity_code(false).is_none() {
                assert_eq!(T::infinity().to_bits(), T::from_f32(f32::INFINITY).to_bits());
                assert_eq!(T::neg_infinity().to_bits(), T::from_f32(f32::NEG_INFINITY).to_bits());
            }
            assert_eq!(T::nan().to_bits(), T::from_f32(f32::NAN).to_bits());
            assert_eq!(T::neg_zero().to_bits(), T::from_f32(-0.0).to_bits());
        }
        every_float_type_but_e8m0!(same);
        // Extremes: E4M3FN max 448, lowest -448, min positive normal 2^-6, epsilon 2^-3.
        assert_eq!(<F8E4M3FN as Float>::max_value().to_f32(), 448.0);
        assert_eq!(<F8E4M3FN as Float>::min_value().to_f32(), -448.0);
        assert_eq!(<F8E4M3FN as Float>::min_positive_value().to_f32(), 0.015625);
        assert_eq!(<F8E4M3FN as Float>::epsilon().to_f32(), 0.125);
        assert_eq!(<F8E8M0 as Bounded>::min_value().to_f64(), 2f64.powi(-127));
        assert_eq!(<F8E8M0 as Bounded>::max_value().to_f64(), 2f64.powi(127));
        assert_eq!((<I4 as Bounded>::min_value().to_i8(), <I4 as Bounded>::max_value().to_i8()), (-8, 7));
        assert_eq!((<U2 as Bounded>::min_value().to_i8(), <U2 as Bounded>::max_value().to_i8()), (0, 3));
    }

    #[test]
    fn from_str_radix() {
        assert_eq!(F8E4M3FN::from_str_radix("1.5", 10).unwrap().to_f32(), 1.5);
        let err = F8E4M3FN::from_str_radix("11", 2).unwrap_err().to_string();
        assert!(err.contains("radix 2") && err.contains("FLOAT8E4M3FN"), "{err}");
        assert_eq!(I4::from_str_radix("-8", 10).unwrap().to_i8(), -8);
        assert_eq!(I4::from_str_radix("111", 2).unwrap().to_i8(), 7);
        // 0b1000 = 8 > 7.
        let err = I4::from_str_radix("1000", 2).unwrap_err().to_string();
        assert!(err.contains("INT4") && err.contains("-8..=7"), "{err}");
        assert_eq!(U4::from_str_radix("f", 16).unwrap().to_i8(), 15);
        assert!(U4::from_str_radix("1", 40).unwrap_err().to_string().contains("radix 40"));
    }

    #[test]
    fn from_primitive_rounds_integers_exactly() {
        // 2^60 + 1 rounded up (E8M0's default) is 2^61, code 61 + 127 = 188; through f32 it
        // would be 2^60 first and stay 2^60 (187).
        assert_eq!(F8E8M0::from_u64((1 << 60) + 1).unwrap().to_bits(), 188);
        assert_eq!(oracle_int::<F8E8M0>((1 << 60) + 1), 188);
        // Saturation: E5M2 MAX 57344 = 0_11110_11 = 0x7B; E4M3FN -448 = 0xFE.
        assert_eq!(F8E5M2::from_u64(u64::MAX).unwrap().to_bits(), 0x7B);
        assert_eq!(F8E4M3FN::from_i64(-1000).unwrap().to_bits(), 0xFE);
        assert_eq!(F8E8M0::from_u128(u128::MAX).unwrap().to_bits(), 0xFE);
        // 2.5 lies halfway between E2M1's 2 (0_10_0 = 0x4) and 3 (0x5): ties to even, 2.
        assert_eq!(<F4E2M1 as NumCast>::from(2.5f64).unwrap().to_bits(), 0x4);
        // E2M1's 6 into E4M3: 6 = 1.5 * 2^2 -> 0_1001_100 = 0x4C.
        assert_eq!(<F8E4M3FN as NumCast>::from(F4E2M1::MAX).unwrap().to_bits(), 0x4C);
        // Against the oracle, over integers around the points where an f64 or f32 would round.
        fn check<T: Oracle + FromPrimitive + NumCast>() {
            let mut samples: Vec<i128> = (-300..=300).collect();
            for k in [24, 25, 53, 54, 60, 63] {
                for d in [-3i128, -1, 0, 1, 3] {
                    samples.push((1i128 << k) + d);
                    samples.push(-(1i128 << k) - d);
                }
            }
            for n in samples {
                let want = oracle_int::<T>(n);
                assert_eq!(T::from_i128(n).unwrap().to_bits(), want, "{n}");
                if let Ok(small) = i64::try_from(n) {
                    assert_eq!(T::from_i64(small).unwrap().to_bits(), want, "{n}");
                    assert_eq!(<T as NumCast>::from(small).unwrap().to_bits(), want, "{n}");
                }
                if let Ok(unsigned) = u64::try_from(n) {
                    assert_eq!(<T as NumCast>::from(unsigned).unwrap().to_bits(), want, "{n}");
                }
            }
            // Floats: once from the f64, as the oracle rounds it.
            for x in [0.1f64, -0.3, 2.5, 1e-3, 1e300, -1e-300, 3.0e4, 7.25] {
                assert_eq!(T::from_f64(x).unwrap().to_bits(), oracle_f64::<T>(x), "{x}");
                assert_eq!(<T as NumCast>::from(x).unwrap().to_bits(), oracle_f64::<T>(x), "{x}");
            }
        }
        every_float_type!(check);
    }

    #[test]
    fn to_primitive_truncates_like_f32() {
        let x = F8E4M3FN::MAX; // 448
        assert_eq!(x.to_u8(), None);
        assert_eq!(x.to_i16(), Some(448));
        assert_eq!(F8E4M3FN::from_f32(-2.5).to_i32(), Some(-2));
        assert_eq!(F8E4M3FN::NAN.to_i32(), None);
        assert_eq!(F8E5M2::INFINITY.to_u64(), None);
        assert_eq!(ToPrimitive::to_f64(&F8E8M0::MIN), Some(2f64.powi(-127)));
        assert_eq!(I4::MIN.to_i64(), Some(-8));
        assert_eq!(I4::MIN.to_u8(), None);
        assert_eq!(U4::MAX.to_u8(), Some(15));
    }

    #[test]
    fn small_integers_from_primitive() {
        // In range: the value; out of range: None (not wrapped).
        assert_eq!(I4::from_i64(-8).unwrap().to_i8(), -8);
        assert_eq!(I4::from_i64(8), None);
        assert_eq!(U4::from_i64(-1), None);
        assert_eq!(U2::from_u64(3).unwrap().to_i8(), 3);
        assert_eq!(U2::from_u64(u64::MAX), None);
        // Floats round to nearest, ties to even: 6.5 -> 6, 7.5 -> 8 (out of range), -8.5 -> -8.
        assert_eq!(<I4 as FromPrimitive>::from_f64(6.5).unwrap().to_i8(), 6);
        assert_eq!(<I4 as FromPrimitive>::from_f64(7.5), None);
        assert_eq!(<I4 as FromPrimitive>::from_f64(-8.5).unwrap().to_i8(), -8);
        assert_eq!(<I4 as FromPrimitive>::from_f32(f32::NAN), None);
        assert_eq!(<I4 as FromPrimitive>::from_f32(f32::INFINITY), None);
        assert_eq!(<U4 as FromPrimitive>::from_f64(-0.4).unwrap().to_i8(), 0);
        assert_eq!(<U4 as NumCast>::from(200u8), None);
        assert_eq!(<I2 as NumCast>::from(-2i64).unwrap().to_i8(), -2);
        assert_eq!(<I2 as NumCast>::from(1.5f32), None); // 1.5 -> 2 (even), above 1
        assert_eq!(<I2 as NumCast>::from(0.5f32).unwrap().to_i8(), 0); // 0.5 -> 0 (even)
    }

    #[test]
    fn small_integer_arithmetic_wraps_and_signed() {
        let i4 = |n: i64| I4::wrapping_from_i64(n);
        assert_eq!((i4(7) + i4(1)).to_i8(), -8); // 8 - 16
        assert_eq!((i4(-8) - i4(1)).to_i8(), 7); // -9 + 16
        assert_eq!((i4(-8) / i4(-1)).to_i8(), -8); // 8 - 16
        assert_eq!((i4(5) * i4(3)).to_i8(), -1); // 15 - 16
        assert_eq!((i4(-7) % i4(3)).to_i8(), -1);
        assert_eq!((-i4(-8)).to_i8(), -8);
        assert_eq!((U4::MAX + U4::ONE).to_i8(), 0); // 16 - 16
        assert_eq!((U2::ZERO - U2::ONE).to_i8(), 3); // -1 + 4
        let mut x = U4::from_bits(9);
        x *= U4::from_bits(2); // 18 - 16
        assert_eq!(x.to_i8(), 2);
        // Signed: abs wraps at MIN, as i8::wrapping_abs.
        assert_eq!(Signed::abs(&i4(-3)).to_i8(), 3);
        assert_eq!(Signed::abs(&i4(-8)).to_i8(), -8);
        assert_eq!(Signed::signum(&i4(-5)).to_i8(), -1);
        assert_eq!(Signed::abs_sub(&i4(2), &i4(5)).to_i8(), 0);
        assert_eq!(Signed::abs_sub(&i4(5), &i4(2)).to_i8(), 3);
        assert!(Signed::is_negative(&I2::MIN) && Signed::is_positive(&I2::MAX));
    }

    #[test]
    fn float_math_rounds_the_f32_result_once() {
        // Every code, every one-argument function: the code the oracle gives for the f32 result.
        fn check<T: Oracle + Float>() {
            // The bool: the function returns a non-finite input's own code (no saturation).
            type Case<T> = (&'static str, fn(T) -> T, fn(f32) -> f32, bool);
            let functions: [Case<T>; 12] = [
                ("sqrt", T::sqrt, f32::sqrt, false),
                ("floor", T::floor, f32::floor, true),
                ("ceil", T::ceil, f32::ceil, true),
                ("round", T::round, f32::round, true),
                ("trunc", T::trunc, f32::trunc, true),
                ("fract", T::fract, f32::fract, false),
                ("exp", T::exp, f32::exp, false),
                ("ln", T::ln, f32::ln, false),
                ("sin", T::sin, f32::sin, false),
                ("recip", T::recip, f32::recip, false),
                ("signum", <T as Float>::signum, f32::signum, false),
                ("abs", <T as Float>::abs, f32::abs, true),
            ];
            for x in codes::<T>() {
                for (name, ours, reference, keeps_non_finite) in functions {
                    let mut want = oracle_f32::<T>(reference(x.to_f32()));
                    if keeps_non_finite && x.to_f32().is_infinite() {
                        // abs(-Inf) = +Inf: E5M2 0xFC -> 0x7C; the others keep the code.
                        want = if name == "abs" { x.to_bits() & 0x7F } else { x.to_bits() };
                    }
                    let got = ours(x).to_bits();
                    // A NaN result is a NaN of the type, whichever code.
                    let nan_result = reference(x.to_f32()).is_nan() && T::from_bits(got).to_f32().is_nan();
                    assert!(got == want || nan_result, "{name}({:#x}) = {got:#x}, want {want:#x}", x.to_bits());
                }
            }
        }
        every_float_type_but_e8m0!(check);
    }

    #[test]
    fn float_math_hand_cases() {
        let e4m3 = F8E4M3FN::from_f32;
        // sqrt(2) = 1.4142: E4M3 neighbours 1.375 (1.011b) and 1.5, midpoint 1.4375 -> 1.375.
        assert_eq!(Float::sqrt(e4m3(2.0)).to_f32(), 1.375);
        // hypot-by-hand: 3*3 = 9 (1.001b * 2^3) and 4*4 = 16 are values; 9 + 16 = 25 = 1.1001b *
        // 2^4 is halfway between 24 (1.100b) and 26 (1.101b): even -> 24; sqrt(24) = 4.899,
        // between 4.5 and 5 with midpoint 4.75 -> 5.
        fn norm<T: Float>(a: T, b: T) -> T {
            (a * a + b * b).sqrt()
        }
        assert_eq!(norm(e4m3(3.0), e4m3(4.0)).to_f32(), 5.0);
        // mul_add(1.5, 1.5, 0.0625) = 2.3125: neighbours 2.25 and 2.5 (step 0.25) -> 2.25.
        assert_eq!(e4m3(1.5).mul_add(e4m3(1.5), e4m3(0.0625)).to_f32(), 2.25);
        // powi(3, 4) = 81 = 1.0100001b * 2^6: neighbours 80 and 88 -> 80.
        assert_eq!(Float::powi(e4m3(3.0), 4).to_f32(), 80.0);
        // 1000 saturates: powf(10, 3) -> 448.
        assert_eq!(e4m3(10.0).powf(e4m3(3.0)).to_f32(), 448.0);
        // max/min ignore NaN, as f32's.
        assert_eq!(Float::max(F8E4M3FN::NAN, e4m3(1.0)).to_f32(), 1.0);
        assert_eq!(Float::min(e4m3(-2.0), e4m3(1.0)).to_f32(), -2.0);
        // abs keeps an FNUZ NaN a NaN (clearing 0x80's sign bit would make 0), and clears
        // E4M3FN's -NaN 0xFF to 0x7F.
        assert!(Float::abs(F8E4M3FNUZ::NAN).is_nan());
        assert_eq!(Float::abs(F8E4M3FN::from_bits(0xFF)).to_bits(), 0x7F);
        assert_eq!(Float::abs_sub(e4m3(1.0), e4m3(3.0)).to_f32(), 0.0);
        assert_eq!(Float::abs_sub(e4m3(3.0), e4m3(1.0)).to_f32(), 2.0);
        assert!(Float::abs_sub(F8E4M3FN::NAN, e4m3(1.0)).is_nan());
        // copysign and min/max move or pick codes: E5M2's infinities stay infinite.
        assert_eq!(F4E2M1::from_f32(3.0).copysign(F4E2M1::NEG_ZERO).to_f32(), -3.0);
        assert_eq!(F8E5M2::INFINITY.copysign(F8E5M2::NEG_ZERO).to_bits(), 0xFC);
        assert_eq!(Float::max(F8E5M2::INFINITY, F8E5M2::ONE).to_bits(), 0x7C);
        assert_eq!(Float::min(F8E5M2::NEG_INFINITY, F8E5M2::ONE).to_bits(), 0xFC);
        assert_eq!(Float::floor(F8E5M2::INFINITY).to_bits(), 0x7C);
        // But an infinite f32 result saturates (ONNX saturate=1): recip(+0) = +Inf -> MAX
        // 57344 = 0_11110_11 = 0x7B; exp(+Inf) likewise.
        assert_eq!(Float::recip(F8E5M2::ZERO).to_bits(), 0x7B);
        assert_eq!(Float::exp(F8E5M2::INFINITY).to_bits(), 0x7B);
        // Signed as f32's: signum(-0) = -1; FNUZ NaN counts as negative.
        assert_eq!(Signed::signum(&F8E4M3FN::NEG_ZERO).to_f32(), -1.0);
        assert!(Signed::is_negative(&F8E5M2FNUZ::NAN));
        assert!(Signed::is_positive(&F8E5M2::ZERO));
    }

    #[test]
    fn integer_decode_describes_the_format() {
        // 1.5 = 1.100b: mantissa 1100b = 12 (3 mantissa bits + 1), exponent 0 - 3.
        assert_eq!(Float::integer_decode(F8E4M3FN::from_f32(1.5)), (12, -3, 1));
        // The smallest subnormal 2^-9 = 1 * 2^(-6 - 3).
        assert_eq!(Float::integer_decode(F8E4M3FN::MIN_POSITIVE_SUBNORMAL), (1, -9, 1));
        // -6 in E2M1 = -1.1b * 2^2 = -3 * 2^1.
        assert_eq!(FloatCore::integer_decode(F4E2M1::MIN), (3, 1, -1));
        assert_eq!(Float::integer_decode(F8E5M2::NEG_ZERO), (0, 0, -1));
        // Every finite code of every type: mantissa * 2^exponent * sign is the value.
        fn check<T: Float + Scalar>() {
            for x in codes::<T>().filter(|&x| Scalar::to_f32(x).is_finite()) {
                let (m, e, s) = x.integer_decode();
                let value = s as f64 * m as f64 * 2f64.powi(e as i32);
                assert_eq!(value, Scalar::to_f32(x) as f64, "{:#x}", x.to_bits());
            }
        }
        every_float_type_but_e8m0!(check);
    }

    #[test]
    fn float_core_classification_and_total_order() {
        assert!(FloatCore::is_nan(F8E4M3FN::NAN));
        assert!(!FloatCore::is_infinite(<F8E4M3FN as FloatCore>::infinity()));
        assert!(FloatCore::is_infinite(F8E5M2::NEG_INFINITY));
        assert!(FloatCore::is_subnormal(F8E4M3FN::MIN_POSITIVE_SUBNORMAL));
        assert!(FloatCore::is_sign_negative(F8E4M3FN::NEG_ZERO));
        // E8M0: 2^(code - 127) rises with the code, its NaN 0xFF last.
        let mut all: Vec<F8E8M0> = codes::<F8E8M0>().collect();
        all.reverse();
        all.sort_by(TotalOrder::total_cmp);
        assert!(all.iter().map(|x| x.to_bits()).eq(0..=255));
    }
}

#[cfg(feature = "serde")]
mod serde_feature {
    use super::*;
    use serde::de::IntoDeserializer;
    use serde::{Deserialize, Serialize};

    #[test]
    fn values_serialize_as_numbers() {
        assert_eq!(serde_json::to_string(&F8E4M3FN::MAX).unwrap(), "448.0");
        assert_eq!(serde_json::to_string(&F4E2M1::MIN).unwrap(), "-6.0");
        assert_eq!(serde_json::to_string(&F8E8M0::from_bits(127)).unwrap(), "1.0");
        // E8M0 as f64: 2^-127 = 5.877471754111438e-39, which reads back exactly.
        assert_eq!(serde_json::to_string(&F8E8M0::MIN).unwrap(), "5.877471754111438e-39");
        assert_eq!(serde_json::to_string(&I4::MIN).unwrap(), "-8");
        assert_eq!(serde_json::to_string(&U4::MAX).unwrap(), "15");
        // serde_json writes non-finite floats as null.
        assert_eq!(serde_json::to_string(&F8E5M2::INFINITY).unwrap(), "null");
    }

    /// Every code of `T` through serde_json's text: a finite value reads back as the same code
    /// (-0 included); NaN and the infinities are written as `null`, which does not read back
    /// (`serde_bits` keeps those).
    fn every_code_through_json<T: Scalar + Serialize + for<'de> Deserialize<'de>>() -> usize {
        let (mut finite, mut changed) = (0, Vec::new());
        let width = T::DTYPE.bits().unwrap();
        for x in (0..1u16 << width).map(|c| T::from_bits(c as u8)) {
            let text = serde_json::to_string(&x).unwrap();
            if x.to_f32().is_finite() {
                let back: T = serde_json::from_str(&text).unwrap();
                if back.to_bits() != x.to_bits() {
                    changed.push(format!("{:#04x} -> {text} -> {:#04x}", x.to_bits(), back.to_bits()));
                }
                finite += 1;
            } else {
                assert_eq!(text, "null", "{} code {:#04x}", T::DTYPE.onnx_name(), x.to_bits());
                assert!(serde_json::from_str::<T>(&text).is_err());
            }
        }
        assert!(changed.is_empty(), "{}: {} codes changed: {changed:?}", T::DTYPE.onnx_name(), changed.len());
        finite
    }

    #[test]
    fn every_code_of_every_type_round_trips_through_json_text() {
        // The finite codes of each type, counted by hand: E4M3FN 256 - 2 NaNs; FNUZ 256 - the
        // one NaN; E5M2 256 - 2 infinities - 6 NaNs; E5M2FNUZ 255; E8M0 255 (2^-127 ..= 2^127,
        // all but the NaN 0xFF); float6/float4 every code; the integers every code.
        assert_eq!(every_code_through_json::<F8E4M3FN>(), 254);
        assert_eq!(every_code_through_json::<F8E4M3FNUZ>(), 255);
        assert_eq!(every_code_through_json::<F8E5M2>(), 248);
        assert_eq!(every_code_through_json::<F8E5M2FNUZ>(), 255);
        assert_eq!(every_code_through_json::<F8E8M0>(), 255);
        assert_eq!(every_code_through_json::<F6E2M3>(), 64);
        assert_eq!(every_code_through_json::<F6E3M2>(), 64);
        assert_eq!(every_code_through_json::<F4E2M1>(), 16);
        assert_eq!(every_code_through_json::<I4>(), 16);
        assert_eq!(every_code_through_json::<U4>(), 16);
        assert_eq!(every_code_through_json::<I2>(), 4);
        assert_eq!(every_code_through_json::<U2>(), 4);
    }

    #[test]
    fn every_e8m0_code_round_trips_through_an_exact_reader() {
        // serde_json's Value holds the f64 exactly, without a decimal text in between.
        for x in codes::<F8E8M0>().filter(|x| !x.is_nan()) {
            let value = serde_json::to_value(x).unwrap();
            let back: F8E8M0 = serde_json::from_value(value.clone()).unwrap();
            assert_eq!(back.to_bits(), x.to_bits(), "{value}");
        }
    }

    #[test]
    fn deserialization_rounds_once() {
        // 0.3: E4M3 neighbours 0.28125 (9 * 2^-5) and 0.3125, nearer 0.3125 (0x2A: 0_0101_010).
        assert_eq!(serde_json::from_str::<F8E4M3FN>("0.3").unwrap().to_bits(), 0x2A);
        // Integers saturate: 1000 -> 448 (0x7E), -1e9 -> -448 (0xFE).
        assert_eq!(serde_json::from_str::<F8E4M3FN>("1000").unwrap().to_bits(), 0x7E);
        assert_eq!(serde_json::from_str::<F8E4M3FN>("-1e9").unwrap().to_bits(), 0xFE);
        // E8M0 rounds 3 up to 4 = 2^2, code 129.
        assert_eq!(serde_json::from_str::<F8E8M0>("3").unwrap().to_bits(), 129);
        // E8M0 takes a float number within half an f32 ulp (2^-24 relative) of a power of two as
        // that power: 1 + 2^-25 = 1.0000000298023224 -> 1 (127); the f32 text of 2^-127,
        // 5.877472e-39, is 2^-25 relative above it -> 2^-127 (0). Further above rounds up:
        // 1.0000002 (above 1 + 2^-23 = 1.00000011920929) -> 2 (128).
        assert_eq!(serde_json::from_str::<F8E8M0>("1.0000000298023224").unwrap().to_bits(), 127);
        assert_eq!(serde_json::from_str::<F8E8M0>("5.877472e-39").unwrap().to_bits(), 0);
        assert_eq!(serde_json::from_str::<F8E8M0>("1.0000002").unwrap().to_bits(), 128);
        // A u64 beyond 2^53 is rounded from its exact value: 2^60 + 1 -> 2^61 (188) for E8M0.
        assert_eq!(serde_json::from_str::<F8E8M0>("1152921504606846977").unwrap().to_bits(), 188);
        // The oracle agrees on a spread of f64 inputs.
        fn check<T: Oracle + for<'de> Deserialize<'de>>() {
            for x in [0.1f64, -0.3, 2.5, 1e-3, 1e300, -1e-300, 3.0e4, 7.25, 5e-324, -0.0] {
                let text = serde_json::to_string(&x).unwrap();
                assert_eq!(serde_json::from_str::<T>(&text).unwrap().to_bits(), oracle_f64::<T>(x), "{text}");
            }
        }
        every_float_type!(check);
    }

    #[test]
    fn nan_into_a_type_without_nan_is_an_error() {
        type E = serde::de::value::Error;
        let nan = || f64::NAN.into_deserializer();
        let err = F4E2M1::deserialize::<serde::de::value::F64Deserializer<E>>(nan()).unwrap_err();
        assert!(err.to_string().contains("FLOAT4E2M1 has no NaN"), "{err}");
        let err = F6E3M2::deserialize::<serde::de::value::F64Deserializer<E>>(nan()).unwrap_err();
        assert!(err.to_string().contains("FLOAT6E3M2"), "{err}");
        assert!(F8E4M3FN::deserialize::<serde::de::value::F64Deserializer<E>>(nan()).unwrap().is_nan());
        assert!(F8E8M0::deserialize::<serde::de::value::F64Deserializer<E>>(nan()).unwrap().is_nan());
        // JSON null (what NaN was written as) does not read back.
        assert!(serde_json::from_str::<F8E4M3FN>("null").is_err());
    }

    #[test]
    fn small_integers_out_of_range_are_errors() {
        assert_eq!(serde_json::from_str::<I4>("-8").unwrap().to_i8(), -8);
        let err = serde_json::from_str::<I4>("8").unwrap_err().to_string();
        assert!(err.contains("INT4") && err.contains("-8..=7"), "{err}");
        assert!(serde_json::from_str::<U2>("4").unwrap_err().to_string().contains("UINT2"));
        assert!(serde_json::from_str::<U4>("-1").is_err());
        assert!(serde_json::from_str::<I2>("1.5").is_err());
        assert!(serde_json::from_str::<U4>("18446744073709551615").is_err());
    }

    #[derive(Serialize, Deserialize, Debug)]
    struct Codes {
        #[serde(with = "lowbit::serde_bits")]
        e5m2: F8E5M2,
        #[serde(with = "lowbit::serde_bits")]
        fnuz: F8E4M3FNUZ,
        #[serde(with = "lowbit::serde_bits")]
        e2m1: F4E2M1,
        #[serde(with = "lowbit::serde_bits")]
        i4: I4,
    }

    #[test]
    fn serde_bits_keeps_every_code() {
        for c in 0..=255u8 {
            let codes = Codes {
                e5m2: F8E5M2::from_bits(c),
                fnuz: F8E4M3FNUZ::from_bits(c),
                e2m1: F4E2M1::from_bits(c),
                i4: I4::from_bits(c),
            };
            let text = serde_json::to_string(&codes).unwrap();
            // The codes as written: the low 4 bits for E2M1 and INT4.
            let low = c & 0xF;
            assert_eq!(text, format!(r#"{{"e5m2":{c},"fnuz":{c},"e2m1":{low},"i4":{low}}}"#));
            let back: Codes = serde_json::from_str(&text).unwrap();
            assert_eq!(
                (back.e5m2.to_bits(), back.fnuz.to_bits(), back.e2m1.to_bits(), back.i4.to_bits()),
                (c, c, low, low)
            );
        }
        // A bit above E2M1's four (16 = 0b1_0000) is an error naming the type and width.
        let err = serde_json::from_str::<Codes>(r#"{"e5m2":0,"fnuz":0,"e2m1":16,"i4":0}"#).unwrap_err().to_string();
        assert!(err.contains("FLOAT4E2M1") && err.contains("4 bits"), "{err}");
        let err = serde_json::from_str::<Codes>(r#"{"e5m2":0,"fnuz":0,"e2m1":0,"i4":248}"#).unwrap_err().to_string();
        assert!(err.contains("INT4"), "{err}");
        assert!(serde_json::from_str::<Codes>(r#"{"e5m2":256,"fnuz":0,"e2m1":0,"i4":0}"#).is_err());
    }
}

#[cfg(feature = "bytemuck")]
mod bytemuck_feature {
    use super::*;
    use lowbit::Error;

    #[test]
    fn pod_types_view_every_byte() {
        let all: Vec<u8> = (0..=255).collect();
        let values = F8E5M2::slice_from_bytes(&all);
        assert!(values.iter().map(|x| x.to_bits()).eq(0..=255));
        assert_eq!(F8E5M2::slice_as_bytes(values), &all[..]);
        assert_eq!(F8E8M0::try_slice_from_bytes(&all).unwrap().len(), 256);
        // Through the trait too.
        let via_trait: &[F8E4M3FNUZ] = bytemuck::cast_slice(&all);
        assert!(via_trait[0x80].is_nan());
        // Writes through either view show in the other. 1.0 in E4M3 is 0x38.
        let mut bytes = [0u8; 3];
        F8E4M3FN::slice_from_bytes_mut(&mut bytes)[1] = F8E4M3FN::from_f32(1.0);
        assert_eq!(bytes, [0, 0x38, 0]);
        let mut values = [F8E4M3FN::ZERO; 2];
        F8E4M3FN::slice_as_bytes_mut(&mut values)[0] = 0xC0; // -2 = 1_1000_000
        assert_eq!(values[0].to_f32(), -2.0);
        // Zeroed: code 0, which for E8M0 is 2^-127.
        assert_eq!(<F8E8M0 as bytemuck::Zeroable>::zeroed().to_f64(), 2f64.powi(-127));
    }

    #[test]
    fn checked_types_accept_exactly_their_bytes() {
        /// The bytes a type's `try_slice_from_bytes` must accept, written out per type.
        fn accepted(check: impl Fn(&[u8]) -> bool) -> Vec<u8> {
            (0..=255u8).filter(|&b| check(&[b])).collect()
        }
        // float6: the 6-bit codes 0x00..=0x3F; float4: 0x0..=0xF.
        assert_eq!(accepted(|b| F6E2M3::try_slice_from_bytes(b).is_ok()), (0..=0x3F).collect::<Vec<u8>>());
        assert_eq!(accepted(|b| F6E3M2::try_slice_from_bytes(b).is_ok()), (0..=0x3F).collect::<Vec<u8>>());
        assert_eq!(accepted(|b| F4E2M1::try_slice_from_bytes(b).is_ok()), (0..=0xF).collect::<Vec<u8>>());
        // INT4 as i8: 0..=7 and -8..=-1 = 0xF8..=0xFF; INT2: 0, 1 and -2, -1 = 0xFE, 0xFF.
        let int4: Vec<u8> = (0..=7).chain(0xF8..=0xFF).collect();
        assert_eq!(accepted(|b| I4::try_slice_from_bytes(b).is_ok()), int4);
        assert_eq!(accepted(|b| I2::try_slice_from_bytes(b).is_ok()), [0, 1, 0xFE, 0xFF]);
        assert_eq!(accepted(|b| U4::try_slice_from_bytes(b).is_ok()), (0..=15).collect::<Vec<u8>>());
        assert_eq!(accepted(|b| U2::try_slice_from_bytes(b).is_ok()), [0, 1, 2, 3]);
        // bytemuck's own checked cast agrees.
        assert!(bytemuck::checked::try_cast_slice::<u8, F6E2M3>(&[0x40]).is_err());
        assert!(bytemuck::checked::try_cast_slice::<u8, I4>(&[0xF8]).is_ok());
    }

    #[test]
    fn checked_views_name_the_first_bad_offset() {
        let bytes = [0x1, 0x7, 0xF, 0x3, 0x10, 0x20];
        assert_eq!(
            F4E2M1::try_slice_from_bytes(&bytes).unwrap_err(),
            Error::InvalidElementByte {
                dtype: "FLOAT4E2M1",
                offset: 4,
                byte: 0x10,
                why: "a bit above the 4-bit code is set"
            }
        );
        let msg = I4::try_slice_from_bytes(&[0xF8, 0x08]).unwrap_err().to_string();
        assert!(msg.contains("INT4") && msg.contains("0x08") && msg.contains("offset 1"), "{msg}");
        // Valid bytes view as values; values view back as the same bytes. E2M1 0x3 = 0_01_1 = 1.5.
        let good = [0x3, 0xB, 0x7];
        let values = F4E2M1::try_slice_from_bytes(&good).unwrap();
        assert_eq!(values.iter().map(|x| x.to_f32()).collect::<Vec<_>>(), [1.5, -1.5, 6.0]);
        assert_eq!(F4E2M1::slice_as_bytes(values), &good);
        // The mutable view writes values only.
        let mut buffer = [0xF8u8, 0x07];
        let ints = I4::try_slice_from_bytes_mut(&mut buffer).unwrap();
        ints[0] += ints[1]; // -8 + 7 = -1
        assert_eq!(buffer, [0xFF, 0x07]);
        assert!(U2::try_slice_from_bytes_mut(&mut [0, 4]).is_err());
        // Trait bounds: the checked types are NoUninit (bytes out) but not Pod.
        fn no_uninit<T: bytemuck::NoUninit + bytemuck::Zeroable>() {}
        no_uninit::<F6E2M3>();
        no_uninit::<I4>();
    }
}
