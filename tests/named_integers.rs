//! ml_dtypes' `int1` and `uint1`: named integer types, converted by the core's integer rules at
//! one bit and packed eight per byte. Every expected value below was observed with ml_dtypes
//! 0.6.0 (numpy `astype`) or is hand-computed from the two's-complement definition;
//! scripts/crosscheck_ml_dtypes.py compares every pair.

use lowbit::format::{IntegerFormat, INT1, NAMED_INTEGERS, UINT1};
use lowbit::packing::{pack_bits, unpack_bits};
use lowbit::verify::{DescribedCast, Format, Shape};
use lowbit::{CastOptions, DType, Profile};

#[test]
fn the_named_integers_hold_their_ranges() {
    // One two's-complement bit: code 1 is -1. Unsigned: 0 and 1.
    assert_eq!((INT1.bits, INT1.signed, INT1.range()), (1, true, (-1, 0)));
    assert_eq!((UINT1.bits, UINT1.signed, UINT1.range()), (1, false, (0, 1)));
    assert_eq!(NAMED_INTEGERS, [&INT1, &UINT1]);
    assert_eq!(IntegerFormat::named("INT1"), Some(&INT1));
    assert_eq!(IntegerFormat::named("u-int1"), Some(&UINT1));
    assert_eq!(Format::parse("uint1").unwrap().shape(), Shape::Integer { bits: 1, signed: false });
    assert_eq!(Format::parse("int1").unwrap().to_string(), "int1");
}

#[test]
fn onnx_refuses_them_by_name() {
    for name in ["int1", "uint1"] {
        let message = DType::parse(name).unwrap_err().to_string();
        assert!(message.contains(&format!("ONNX does not support dtype {name}")), "{message}");
        assert!(message.contains("not an ONNX one"), "{message}");
    }
}

#[test]
fn eight_codes_pack_into_a_byte_low_bit_first() {
    assert_eq!(pack_bits(1, &[1, 1, 0, 0, 0, 0, 0, 1, 0, 1]).unwrap(), [0b1000_0011, 0b0000_0010]);
    assert_eq!(unpack_bits("int1", 1, &[0b1000_0011, 0b10], 10).unwrap(), [1, 1, 0, 0, 0, 0, 0, 1, 0, 1]);
    // Ten codes take two bytes, not one; a width that does not divide a byte is refused.
    assert!(unpack_bits("int1", 1, &[0], 10).is_err());
    assert!(pack_bits(3, &[1]).is_err());
}

fn ml_dtypes(from: &str, to: &str, input: &[u8]) -> Vec<u8> {
    let opts = CastOptions { saturate: false, profile: Profile::MlDtypes, ..CastOptions::default() };
    let cast = DescribedCast::under_profile(from, to, &opts).unwrap().unwrap();
    assert!(cast.follows_profile(), "{from} -> {to}");
    let mut out = Vec::new();
    cast.stream(&mut &input[..], &mut out).unwrap();
    out
}

fn f32_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

#[test]
fn float_into_int1_keeps_the_low_bit_of_the_integer_part() {
    // ml_dtypes 0.6.0: 1.0, 2.0, -1.0, 1.5, NaN, -0.5, 0.5, 3.0 -> 1 0 1 1 0 0 0 1 (the codes,
    // code 1 being -1 in int1); -2.0, inf, -inf, 1e10, 2.5, -1.5 -> 0 0 0 0 0 1.
    let input = f32_bytes(&[
        1.0,
        2.0,
        -1.0,
        1.5,
        f32::NAN,
        -0.5,
        0.5,
        3.0,
        -2.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        1e10,
        2.5,
        -1.5,
    ]);
    assert_eq!(ml_dtypes("FLOAT", "int1", &input), [0b1000_1101, 0b0010_0000]);
    assert_eq!(ml_dtypes("FLOAT", "uint1", &input), [0b1000_1101, 0b0010_0000]);
    // float64 2.5, 3.5, -3.5, 2^32 + 1, 1e300 -> 0 1 1 0 0.
    let doubles: Vec<u8> = [2.5f64, 3.5, -3.5, 4_294_967_297.0, 1e300].iter().flat_map(|v| v.to_le_bytes()).collect();
    assert_eq!(ml_dtypes("DOUBLE", "int1", &doubles), [0b0000_0110]);
    // FLOAT8E5M2 inf, -inf, NaN, 2, 4, -4, 1, -1 -> 1 0 0 0 0 0 1 1 (as INT4's -1, 0, 0, ...).
    assert_eq!(ml_dtypes("FLOAT8E5M2", "int1", &[0x7C, 0xFC, 0x7F, 0x40, 0x44, 0xC4, 0x3C, 0xBC]), [0b1100_0001]);
    // FLOAT6E2M3 0.625, 1.0, 2.0, 3.0 (packed four in three bytes) -> 0 1 0 1: truncated, although
    // ml_dtypes has no float6 -> int4 cast at all (the pair's INT4 rows do not decide int1's).
    assert_eq!(ml_dtypes("FLOAT6E2M3", "int1", &[0x05, 0x02, 0x51]), [0b1010]);
    // INT8 -128, -1, 0, 1, 2, 3, 127 -> the low bit: 0 1 0 1 0 1 1.
    assert_eq!(ml_dtypes("INT8", "uint1", &[0x80, 0xFF, 0, 1, 2, 3, 127]), [0b0110_1010]);
}

#[test]
fn int1_reads_as_minus_one_and_uint1_as_one() {
    // One byte holds eight codes: 0, 1, then six padding zeros.
    let out = ml_dtypes("int1", "FLOAT", &[0b10]);
    assert_eq!(out.len(), 8 * 4);
    assert_eq!(out[..8], [f32_bytes(&[0.0]), f32_bytes(&[-1.0])].concat());
    assert_eq!(ml_dtypes("uint1", "FLOAT", &[0b10])[..8], [f32_bytes(&[0.0]), f32_bytes(&[1.0])].concat());
    // -1 into INT4 (0xF, packed low nibble first), into UINT8 (0xFF, wrapped), into float8_e3m4
    // (0xB0) and BOOL (1); uint1's 1 into FLOAT8E4M3FN is 0x38.
    assert_eq!(ml_dtypes("int1", "INT4", &[0b10]), [0xF0, 0, 0, 0]);
    assert_eq!(ml_dtypes("int1", "UINT8", &[0b10])[..2], [0, 0xFF]);
    assert_eq!(ml_dtypes("int1", "float8_e3m4", &[0b10])[..2], [0, 0xB0]);
    assert_eq!(ml_dtypes("int1", "BOOL", &[0b10])[..2], [0, 1]);
    assert_eq!(ml_dtypes("uint1", "FLOAT8E4M3FN", &[0b10])[..2], [0, 0x38]);
}

#[test]
fn pairs_ml_dtypes_cannot_cast_are_spec_s() {
    // astype raises TypeError for int1 <-> uint1, INT4 -> int1, int1 -> UINT4, uint1 -> INT4.
    let opts = CastOptions::with_profile(Profile::MlDtypes);
    for (from, to) in [("int1", "uint1"), ("uint1", "int1"), ("INT4", "int1"), ("int1", "UINT4"), ("uint1", "INT4")] {
        let cast = DescribedCast::under_profile(from, to, &opts).unwrap().unwrap();
        assert!(!cast.follows_profile(), "{from} -> {to}");
    }
    // XLA's int1 is not a profile row (jax 0.12.0.1 cannot read it back): spec's conversion.
    let xla = CastOptions::with_profile(Profile::Xla);
    assert!(!DescribedCast::under_profile("FLOAT", "int1", &xla).unwrap().unwrap().follows_profile());
}

#[test]
fn spec_converts_them_as_ieee_integers() {
    // Round to nearest even, out of range is INVALID with x86's indefinite: 2.0 -> int1 gives
    // code 1 (the most negative value), -1.0 -> uint1 gives 1 (all ones), 0.5 -> 0, -0.7 -> -1.
    let cast = DescribedCast::new("FLOAT", "int1", false).unwrap().unwrap();
    let mut out = Vec::new();
    cast.stream(&mut &f32_bytes(&[2.0, 0.5, -0.7, 0.0])[..], &mut out).unwrap();
    assert_eq!(out, [0b0000_0101]);
    let cast = DescribedCast::new("FLOAT", "uint1", false).unwrap().unwrap();
    let mut out = Vec::new();
    cast.stream(&mut &f32_bytes(&[-1.0, 1.0, 1.5, 0.4])[..], &mut out).unwrap();
    assert_eq!(out, [0b0000_0111]);
}
