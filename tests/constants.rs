//! Every scalar type's constants, checked against the oracle's exact values, and against the
//! `float8` crate, whose constants are wrong (docs/research/anchors.md §2.2, its issue #8).

#[path = "support/oracle.rs"]
mod oracle;

use core::num::FpCategory;
use lowbit::*;
use oracle::OFormat;

fn value(f: OFormat, code: u8) -> String {
    oracle::exact_decimal(&oracle::decode(f, code.into()))
}

macro_rules! check_constants {
    ($t:ty, $f:expr, max = $max:expr, lowest = $lowest:expr, min_normal = $mn:expr, min_sub = $ms:expr, eps = $eps:expr) => {{
        assert_eq!(value($f, <$t>::MAX.to_bits()), $max, "{} MAX", stringify!($t));
        assert_eq!(value($f, <$t>::MIN.to_bits()), $lowest, "{} MIN", stringify!($t));
        assert_eq!(value($f, <$t>::MIN_POSITIVE.to_bits()), $mn, "{} MIN_POSITIVE", stringify!($t));
        assert_eq!(value($f, <$t>::MIN_POSITIVE_SUBNORMAL.to_bits()), $ms, "{} MIN_POSITIVE_SUBNORMAL", stringify!($t));
        assert_eq!(value($f, <$t>::EPSILON.to_bits()), $eps, "{} EPSILON", stringify!($t));
        assert_eq!(value($f, <$t>::ONE.to_bits()), "1", "{} ONE", stringify!($t));
        // MAX is the largest finite code: the next code up (same sign) is not finite or wraps.
        assert!(<$t>::MAX.is_finite());
        assert_eq!(<$t>::MAX.to_f64(), <$t>::MAX.to_f64().abs());
    }};
}

#[test]
fn constants_are_exact() {
    check_constants!(
        F8E4M3FN,
        OFormat::E4M3FN,
        max = "448",
        lowest = "-448",
        min_normal = "0.015625",
        min_sub = "0.001953125",
        eps = "0.125"
    );
    check_constants!(
        F8E4M3FNUZ,
        OFormat::E4M3FNUZ,
        max = "240",
        lowest = "-240",
        min_normal = "0.0078125",
        min_sub = "0.0009765625",
        eps = "0.125"
    );
    check_constants!(
        F8E5M2,
        OFormat::E5M2,
        max = "57344",
        lowest = "-57344",
        min_normal = "0.00006103515625",
        min_sub = "0.0000152587890625",
        eps = "0.25"
    );
    check_constants!(
        F8E5M2FNUZ,
        OFormat::E5M2FNUZ,
        max = "57344",
        lowest = "-57344",
        min_normal = "0.000030517578125",
        min_sub = "0.00000762939453125",
        eps = "0.25"
    );
    check_constants!(
        F6E2M3,
        OFormat::E2M3,
        max = "7.5",
        lowest = "-7.5",
        min_normal = "1",
        min_sub = "0.125",
        eps = "0.125"
    );
    check_constants!(
        F6E3M2,
        OFormat::E3M2,
        max = "28",
        lowest = "-28",
        min_normal = "0.25",
        min_sub = "0.0625",
        eps = "0.25"
    );
    check_constants!(F4E2M1, OFormat::E2M1, max = "6", lowest = "-6", min_normal = "1", min_sub = "0.5", eps = "0.5");
    // E8M0 is unsigned with no zero and no subnormals: MIN is its smallest value, 2^-127.
    assert_eq!(F8E8M0::MAX.to_f64(), 2f64.powi(127));
    assert_eq!(F8E8M0::MIN.to_f64(), 2f64.powi(-127));
    assert_eq!(F8E8M0::MIN_POSITIVE, F8E8M0::MIN);
    assert_eq!(F8E8M0::MIN_POSITIVE_SUBNORMAL, F8E8M0::MIN);
    assert!(!F8E8M0::MIN.is_subnormal());
    assert_eq!(F8E8M0::EPSILON.to_f64(), 1.0);
    assert!(F8E8M0::NAN.is_nan());
}

#[test]
fn special_values() {
    assert!(F8E5M2::INFINITY.is_infinite() && F8E5M2::INFINITY.to_f32() == f32::INFINITY);
    assert_eq!(F8E5M2::NEG_INFINITY.to_bits(), 0xFC);
    for nan in [F8E5M2::from_bits(0x7D), F8E5M2::from_bits(0x7E), F8E5M2::from_bits(0x7F), F8E5M2::from_bits(0xFD)] {
        assert!(nan.is_nan() && !nan.is_infinite(), "{nan:x}");
    }
    assert!(F8E4M3FN::NAN.is_nan() && F8E4M3FN::from_bits(0xFF).is_nan());
    assert!(!F8E4M3FN::from_bits(0x7E).is_nan() && !F8E4M3FN::from_bits(0x7E).is_infinite());
    assert!(F8E4M3FNUZ::from_bits(0x80).is_nan() && F8E4M3FNUZ::from_bits(0x80).is_sign_negative());
    assert_eq!(F8E4M3FN::ZERO.classify(), FpCategory::Zero);
    assert_eq!(F8E4M3FN::NEG_ZERO.classify(), FpCategory::Zero);
    assert_eq!(F8E4M3FN::MIN_POSITIVE_SUBNORMAL.classify(), FpCategory::Subnormal);
    assert_eq!(F4E2M1::from_bits(0x9).classify(), FpCategory::Subnormal);
    // IEEE comparison.
    assert_ne!(F8E4M3FN::NAN, F8E4M3FN::NAN);
    assert_eq!(F8E4M3FN::ZERO, F8E4M3FN::NEG_ZERO);
    assert!(F8E4M3FN::MAX > F8E4M3FN::ONE && F8E4M3FN::MIN < F8E4M3FN::NEG_ZERO);
    assert_eq!(F8E4M3FN::NAN.partial_cmp(&F8E4M3FN::ONE), None);
    // Display shows the value, LowerHex the bits.
    assert_eq!(format!("{}", F8E4M3FN::MAX), "448");
    assert_eq!(format!("{:?}", F8E4M3FN::MIN_POSITIVE_SUBNORMAL), "0.001953125");
    assert_eq!(format!("{:x}", F8E4M3FN::MAX), "7e");
    assert_eq!(format!("{:#04x}", F8E5M2::INFINITY), "0x7c");
    assert_eq!(format!("{}", F8E5M2::NEG_INFINITY), "-inf");
    assert_eq!(format!("{}", I4::MIN), "-8");
    assert_eq!(format!("{:x}", I4::MIN), "8");
}

/// The `float8` crate (0.7) gets the constants of both its formats wrong; lowbit's are right.
#[test]
fn float8_crate_constants_are_wrong_and_ours_are_right() {
    // E4M3 (it is E4M3FN): the crate's MAX is 0x7D = 416, the true max is 448 = 0x7E.
    assert_eq!(float8::F8E4M3::MAX.to_f32(), 416.0);
    assert_eq!(F8E4M3FN::MAX.to_f32(), 448.0);
    // The crate's INFINITY is 0x7E, a finite 448; E4M3FN has no infinity.
    assert_eq!(float8::F8E4M3::INFINITY.to_bits(), 0x7E);
    assert!(float8::F8E4M3::INFINITY.is_infinite());
    assert!(F8E4M3FN::from_bits(0x7E).is_finite());
    // E5M2: the crate's MAX is 0x7A = 49152 (true: 57344) and its INFINITY 0x7B is finite.
    assert_eq!(float8::F8E5M2::MAX.to_f32(), 49152.0);
    assert_eq!(F8E5M2::MAX.to_f32(), 57344.0);
    assert_eq!(float8::F8E5M2::INFINITY.to_bits(), 0x7B);
    assert_eq!(F8E5M2::INFINITY.to_bits(), 0x7C);
    // The crate's real +inf, 0x7C, is not infinite to it; it is to us.
    assert!(!float8::F8E5M2::from_bits(0x7C).is_infinite());
    assert!(F8E5M2::from_bits(0x7C).is_infinite());
    // The crate misses NaN codes 0x7D and 0x7F.
    assert!(!float8::F8E5M2::from_bits(0x7D).is_nan());
    assert!(F8E5M2::from_bits(0x7D).is_nan());
    // Zero classifies as subnormal in the crate.
    assert_eq!(float8::F8E4M3::ZERO.classify(), FpCategory::Subnormal);
    assert_eq!(F8E4M3FN::ZERO.classify(), FpCategory::Zero);
}

/// Where the `float8` crate's encoder is right (saturating E4M3FN; research §2.2), it agrees with
/// lowbit on every float16 value: a cross-check with an implementation that shares nothing.
#[test]
fn float8_crate_encoder_agrees_where_it_is_right() {
    for bits in 0..=u16::MAX {
        let x = half::f16::from_bits(bits).to_f32();
        assert_eq!(float8::F8E4M3::from_f32(x).to_bits(), F8E4M3FN::from_f32(x).to_bits(), "f16 {bits:04x}");
        if !x.is_nan() {
            assert_eq!(float8::F8E5M2::from_f32(x).to_bits(), F8E5M2::from_f32(x).to_bits(), "f16 {bits:04x}");
        }
    }
}
