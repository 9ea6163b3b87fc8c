//! The scalar types' total order, f16/bf16 conversions, arithmetic and parsing. Expected values are
//! hand-computed (arithmetic in the comments) or come from `half` as a peer.

use half::{bf16, f16};
use lowbit::{Scalar, F4E2M1, F6E2M3, F8E4M3FN, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ, F8E8M0, I4};
use std::cmp::Ordering;

/// Codes sorted by `total_cmp`.
fn sorted_codes<T: Scalar>(codes: impl Iterator<Item = u8>, cmp: impl Fn(&T, &T) -> Ordering) -> Vec<u8> {
    let mut values: Vec<T> = codes.map(T::from_bits).collect();
    values.sort_by(cmp);
    values.into_iter().map(T::to_bits).collect()
}

/// Sign-magnitude order written out: negative codes from the largest magnitude (the -NaNs, then
/// -Inf or -MAX) down to -0, then positive codes from +0 up to the +NaNs.
fn sign_magnitude_order(sign: u8) -> Vec<u8> {
    let mut order: Vec<u8> = (sign..=sign.wrapping_mul(2).wrapping_sub(1)).rev().collect();
    order.extend(0..sign);
    order
}

#[test]
fn total_cmp_orders_every_code_as_written_out() {
    // E4M3FN: 0xFF (-NaN) < 0xFE (-448) < ... < 0x80 (-0) < 0x00 < ... < 0x7E (448) < 0x7F (NaN).
    assert_eq!(sorted_codes::<F8E4M3FN>(0..=255, F8E4M3FN::total_cmp), sign_magnitude_order(0x80));
    // E5M2: 0xFF, 0xFE, 0xFD (-NaNs) < 0xFC (-Inf) < ... < 0x7C (+Inf) < 0x7D, 0x7E, 0x7F.
    assert_eq!(sorted_codes::<F8E5M2>(0..=255, F8E5M2::total_cmp), sign_magnitude_order(0x80));
    // FNUZ: 0xFF (-240) < ... < 0x81 < 0x00 < ... < 0x7F (240) < 0x80, the one NaN, last.
    let mut fnuz: Vec<u8> = (0x81..=0xFF).rev().collect();
    fnuz.extend(0x00..=0x7F);
    fnuz.push(0x80);
    assert_eq!(sorted_codes::<F8E4M3FNUZ>(0..=255, F8E4M3FNUZ::total_cmp), fnuz);
    assert_eq!(sorted_codes::<F8E5M2FNUZ>(0..=255, F8E5M2FNUZ::total_cmp), fnuz);
    // E8M0: 2^(code-127) rises with the code, and 0xFF is the NaN.
    assert_eq!(sorted_codes::<F8E8M0>(0..=255, F8E8M0::total_cmp), (0..=255).collect::<Vec<u8>>());
    // E2M1: 0xF (-6) < ... < 0x8 (-0) < 0x0 < ... < 0x7 (6).
    assert_eq!(sorted_codes::<F4E2M1>(0..16, F4E2M1::total_cmp), sign_magnitude_order(0x8));
    assert_eq!(sorted_codes::<F6E2M3>(0..64, F6E2M3::total_cmp), sign_magnitude_order(0x20));
}

#[test]
fn to_f16_and_to_bf16_are_exact_where_the_value_fits() {
    // half is the peer: every E4M3FN/E5M2/E2M3 value is an f16 and a bf16, and half's from_f32 of
    // an exactly representable f32 is exact.
    for code in 0..=255u8 {
        let x = F8E4M3FN::from_bits(code);
        if x.is_nan() {
            assert!(x.to_f16().is_nan() && x.to_bf16().is_nan());
            continue;
        }
        assert_eq!(x.to_f16().to_bits(), f16::from_f32(x.to_f32()).to_bits(), "code {code:#x}");
        assert_eq!(x.to_bf16().to_bits(), bf16::from_f32(x.to_f32()).to_bits(), "code {code:#x}");
        let y = F8E5M2::from_bits(code);
        // E5M2 is the top byte of an f16.
        if !y.is_nan() {
            assert_eq!(y.to_f16().to_bits(), u16::from(code) << 8, "code {code:#x}");
        }
    }
}

#[test]
fn e8m0_to_f16_rounds_once() {
    // 2^16 = 65536 is beyond f16's rounding boundary 65520: +Inf (0x7C00).
    assert_eq!(F8E8M0::from_bits(127 + 16).to_f16().to_bits(), 0x7C00);
    // 2^15 = 0x7800.
    assert_eq!(F8E8M0::from_bits(127 + 15).to_f16().to_bits(), 0x7800);
    // 2^-24 is f16's smallest subnormal, 0x0001; 2^-25 is the tie with 0 and goes to even 0.
    assert_eq!(F8E8M0::from_bits(127 - 24).to_f16().to_bits(), 0x0001);
    assert_eq!(F8E8M0::from_bits(127 - 25).to_f16().to_bits(), 0x0000);
    // 2^-127 = 2^6 * 2^-133 (bf16's smallest subnormal): bits 0x0040.
    assert_eq!(F8E8M0::from_bits(0).to_bf16().to_bits(), 0x0040);
    // 2^127: exponent field 254 -> 0x7F00.
    assert_eq!(F8E8M0::from_bits(254).to_bf16().to_bits(), 0x7F00);
}

#[test]
fn from_f16_and_from_bf16_round_once_nearest_even() {
    // 1.0625 = 1 + 1/16 is halfway between E4M3FN's 1.0 (0x38) and 1.125 (0x39): even, 0x38.
    assert_eq!(F8E4M3FN::from_f16(f16::from_f32(1.0625)).to_bits(), 0x38);
    // 1.09375 = 1 + 3/32 is nearer 1.125.
    assert_eq!(F8E4M3FN::from_f16(f16::from_f32(1.09375)).to_bits(), 0x39);
    // 65504 (f16 MAX) saturates to E4M3FN's 448 (0x7E).
    assert_eq!(F8E4M3FN::from_f16(f16::MAX).to_bits(), 0x7E);
    // bf16 3.0 -> E2M1 3.0: exponent 1 (field 2), mantissa 1 -> 0b0101.
    assert_eq!(F4E2M1::from_bf16(bf16::from_f32(3.0)).to_bits(), 0x5);
    // 5.0 is halfway between E2M1's 4 (0b0110) and 6 (0b0111): even, 4.
    assert_eq!(F4E2M1::from_bf16(bf16::from_f32(5.0)).to_bits(), 0x6);
    // Every f16 goes the way its f32 value does (the same rounding, f16 -> f32 is exact).
    for bits in 0..=u16::MAX {
        let h = f16::from_bits(bits);
        let (a, b) = (F8E5M2::from_f16(h), F8E5M2::from_f32(h.to_f32()));
        assert_eq!(a.to_bits(), b.to_bits(), "f16 {bits:#x}");
    }
}

#[test]
fn arithmetic_rounds_once_and_saturates() {
    let e = F8E4M3FN::from_f32;
    // 1 + 0.0625 = 1.0625, the tie between 1.0 and 1.125: even, 1.0.
    assert_eq!((e(1.0) + e(0.0625)).to_bits(), 0x38);
    // 1 + 0.125 = 1.125 exactly (0x39).
    assert_eq!((e(1.0) + e(0.125)).to_bits(), 0x39);
    // 448 + 448 = 896 clamps to 448 (0x7E), saturate=1.
    assert_eq!((e(448.0) + e(448.0)).to_bits(), 0x7E);
    // 3 * 5 = 15 exactly: 1.875 * 2^3, mantissa 7/8 -> exponent field 10, 0x57.
    assert_eq!((e(3.0) * e(5.0)).to_bits(), 0x57);
    // 1 / 3 = 0.333..: E4M3FN neighbours 0.3125 (1.25 * 2^-2) and 0.34375 (1.375 * 2^-2); nearer
    // 0.34375 (0.0104 vs 0.0208 away): exponent field 5, mantissa 3 -> 0x2B.
    assert_eq!((e(1.0) / e(3.0)).to_bits(), 0x2B);
    // 2 - 3 = -1: 0xB8.
    assert_eq!((e(2.0) - e(3.0)).to_bits(), 0xB8);
    // 7.5 % 2 = 1.5 in E2M3: exponent field 1, mantissa 4 -> 0b001100.
    assert_eq!((F6E2M3::from_f32(7.5) % F6E2M3::from_f32(2.0)).to_bits(), 0b001100);
    let mut x = e(2.0);
    x *= e(3.0);
    x -= &e(1.0);
    // 2 * 3 - 1 = 5: 1.25 * 2^2, exponent field 9, mantissa 2 -> 0x4A.
    assert_eq!(x.to_bits(), 0x4A);
}

#[test]
fn neg_flips_the_sign_except_fnuz_zero_and_nan() {
    assert_eq!((-F8E4M3FN::ONE).to_bits(), 0xB8);
    assert_eq!((-F8E4M3FN::ZERO).to_bits(), 0x80);
    assert_eq!((-F8E5M2::INFINITY).to_bits(), 0xFC);
    assert_eq!((-F4E2M1::MAX).to_bits(), 0xF);
    assert_eq!((-F8E4M3FNUZ::ZERO).to_bits(), 0x00);
    assert_eq!((-F8E4M3FNUZ::NAN).to_bits(), 0x80);
    assert_eq!((-F8E5M2FNUZ::ONE).to_bits(), 0x80 | F8E5M2FNUZ::ONE.to_bits());
}

#[test]
fn sum_and_product_round_once_at_the_end() {
    let half_value = F4E2M1::from_f32(0.5);
    // 10 * 0.5 = 5, the tie between 4 (0x6) and 6 (0x7): even, 4.
    assert_eq!(std::iter::repeat_n(half_value, 10).sum::<F4E2M1>().to_bits(), 0x6);
    let values = [F8E4M3FN::from_f32(2.0), F8E4M3FN::from_f32(3.0), F8E4M3FN::from_f32(0.5)];
    // 2 + 3 + 0.5 = 5.5: 1.375 * 2^2, exponent field 9, mantissa 3 -> 0x4B.
    assert_eq!(values.iter().sum::<F8E4M3FN>().to_bits(), 0x4B);
    // 2 * 3 * 0.5 = 3: 1.5 * 2^1, exponent field 8, mantissa 4 -> 0x44.
    assert_eq!(values.iter().product::<F8E4M3FN>().to_bits(), 0x44);
    assert_eq!(std::iter::empty::<F8E4M3FN>().product::<F8E4M3FN>().to_bits(), 0x38);
}

#[test]
fn from_str_round_trips_every_code_text() {
    fn check<T: Scalar + std::str::FromStr + PartialEq>(codes: std::ops::RangeInclusive<u8>, is_nan: fn(T) -> bool) {
        for code in codes {
            let x = T::from_bits(code);
            // The infinities' text `inf` saturates to MAX (as from_f32 does), checked below.
            if is_nan(x) || x.to_f32().is_infinite() {
                continue;
            }
            let text = x.to_string();
            let back = text.parse::<T>().unwrap_or_else(|_| panic!("{text} parses"));
            assert_eq!(back.to_bits(), code, "{text}");
        }
    }
    check::<F8E4M3FN>(0..=255, F8E4M3FN::is_nan);
    check::<F8E4M3FNUZ>(0..=255, F8E4M3FNUZ::is_nan);
    check::<F8E5M2>(0..=255, F8E5M2::is_nan);
    check::<F8E5M2FNUZ>(0..=255, F8E5M2FNUZ::is_nan);
    // E8M0 rounds up, so a shortest text just above 2^-127 (5.877472e-39) goes to 2^-126: its
    // check uses each value's exact decimal (2^-127 = 5^127 / 10^127 has 89 significant digits).
    for code in 0..=254u8 {
        let text = format!("{:.100e}", F8E8M0::from_bits(code).to_f64());
        assert_eq!(text.parse::<F8E8M0>().unwrap().to_bits(), code, "{text}");
    }
    check::<F6E2M3>(0..=63, F6E2M3::is_nan);
    check::<F4E2M1>(0..=15, F4E2M1::is_nan);
}

#[test]
fn from_str_special_spellings_and_errors() {
    assert!("NaN".parse::<F8E4M3FN>().unwrap().is_nan());
    // saturate=1 (from_f32's rule): -Inf becomes -MAX, 0xFB, even in E5M2.
    assert_eq!("-inf".parse::<F8E5M2>().unwrap().to_bits(), 0xFB);
    // No infinity in E4M3FN: saturates to 448 as from_f32 does.
    assert_eq!("Infinity".parse::<F8E4M3FN>().unwrap().to_bits(), 0x7E);
    // 0.0625 = 2^-4 is exact in E4M3FN: exponent field 3 -> 0x18.
    assert_eq!("0.0625".parse::<F8E4M3FN>().unwrap().to_bits(), 0x18);
    // 1.0625 is the tie (even, 0x38); 1.0625000000000000000001 is above it: 0x39. f32 cannot
    // see the difference, so this checks the parse is exact.
    assert_eq!("1.0625".parse::<F8E4M3FN>().unwrap().to_bits(), 0x38);
    assert_eq!("1.0625000000000000000001".parse::<F8E4M3FN>().unwrap().to_bits(), 0x39);
    let err = "nan".parse::<F4E2M1>().unwrap_err().to_string();
    assert!(err.contains("FLOAT4E2M1") && err.contains("nan"), "{err}");
    let err = "1.5x".parse::<F8E4M3FN>().unwrap_err().to_string();
    assert!(err.contains("1.5x") && err.contains("FLOAT8E4M3FN"), "{err}");
}

#[test]
fn scalar_trait_names_every_type() {
    fn round_trip<T: Scalar>(bits: u8) -> u8 {
        T::from_bits(bits).to_bits()
    }
    assert_eq!(round_trip::<I4>(0x8), 0x8);
    assert_eq!(I4::from_bits(0x8).to_f32(), -8.0);
    assert_eq!(<F8E4M3FN as Scalar>::DTYPE.onnx_name(), "FLOAT8E4M3FN");
    assert!(<I4 as Scalar>::FORMAT.is_none());
    assert_eq!(<F4E2M1 as Scalar>::from_f32(6.5).to_bits(), 0x7);
}
