//! The published byte vectors of docs/research/onnx_cast.md (§4.3, §5, §6, §7, §10, §11), in the `spec`
//! column. Where `spec` differs from what the onnx reference returns, the comment says so and why.

use lowbit::*;
use lowbit::{convert_code, CastOptions, RoundMode};

#[path = "data/f32_to_f8_vectors.rs"]
mod f32_to_f8_vectors;

const F8: [DType; 4] = [DType::Float8E4M3FN, DType::Float8E4M3FNUZ, DType::Float8E5M2, DType::Float8E5M2FNUZ];

fn cast(from: DType, to: DType, code: u64, saturate: bool) -> u64 {
    convert_code(from, to, code, &CastOptions::saturating(saturate)).unwrap()
}

#[test]
fn float32_to_float8_edge_cases() {
    let mut checked = 0;
    for &(bits, saturate, want) in f32_to_f8_vectors::F32_TO_F8 {
        for (target, want) in F8.iter().zip(want) {
            let got = cast(DType::Float, *target, bits.into(), saturate);
            assert_eq!(got, u64::from(want), "f32 {bits:08X} -> {target} saturate={saturate}");
            checked += 1;
        }
    }
    assert_eq!(checked, 488);
}

#[test]
fn scalar_types_agree_with_the_vectors() {
    for &(bits, saturate, want) in f32_to_f8_vectors::F32_TO_F8 {
        let x = f32::from_bits(bits);
        let got = if saturate {
            [
                F8E4M3FN::from_f32(x).to_bits(),
                F8E4M3FNUZ::from_f32(x).to_bits(),
                F8E5M2::from_f32(x).to_bits(),
                F8E5M2FNUZ::from_f32(x).to_bits(),
            ]
        } else {
            [
                F8E4M3FN::from_f32_nonsaturating(x).to_bits(),
                F8E4M3FNUZ::from_f32_nonsaturating(x).to_bits(),
                F8E5M2::from_f32_nonsaturating(x).to_bits(),
                F8E5M2FNUZ::from_f32_nonsaturating(x).to_bits(),
            ]
        };
        assert_eq!(got, want, "f32 {bits:08X} saturate={saturate}");
    }
}

/// §5: float64 inputs that double rounding through float32 gets wrong. `spec` rounds once: the
/// "correct (direct RNE)" column. The onnx reference and onnxruntime give the other code.
#[test]
fn float64_double_rounding_witnesses() {
    let f64_bits = |x: f64| x.to_bits();
    let cases: [(f64, DType, bool, u64); 5] = [
        (1.0625 + 2f64.powi(-30), DType::Float8E4M3FN, true, 0x39), // ref/ORT 0x38
        (1.0 + 2f64.powi(-11) + 2f64.powi(-30), DType::Float16, true, 0x3C01), // ORT 0x3C00
        (1.0 + 2f64.powi(-8) + 2f64.powi(-30), DType::Bfloat16, true, 0x3F81), // ref/ORT 0x3F80
        (464.00000001, DType::Float8E4M3FN, false, 0x7F),           // ref/ORT 0x7E
        (0.25 + 2f64.powi(-40), DType::Float4E2M1, true, 0x1),      // ref 0x0
    ];
    for (x, to, saturate, want) in cases {
        assert_eq!(cast(DType::Double, to, f64_bits(x), saturate), want, "f64 {x:e} -> {to}");
    }
    // int32 16842753 = 2^24 + 2^16 + 1 -> bfloat16: one rounding gives 0x4B81 (ref/ORT 0x4B80).
    assert_eq!(cast(DType::Int32, DType::Bfloat16, 16842753, true), 0x4B81);
    assert_eq!(F8E4M3FN::from_f64(1.0625 + 2f64.powi(-30)).to_bits(), 0x39);
    assert_eq!(F8E4M3FN::from_f64_nonsaturating(464.00000001).to_bits(), 0x7F);
}

/// §5: float64 -> float32/float16/bfloat16 overflow and underflow rows (these agree in every profile).
#[test]
fn float64_to_ieee_rows() {
    let rows: [(f64, u64, u64, u64); 9] = [
        (3.4028235677973366e38, 0x7F80_0000, 0x7C00, 0x7F80),
        (3.4028235677973362e38, 0x7F7F_FFFF, 0x7C00, 0x7F80),
        (65504.0, 0x477F_E000, 0x7BFF, 0x4780),
        (65519.99, 0x477F_EFFD, 0x7BFF, 0x4780),
        (65520.0, 0x477F_F000, 0x7C00, 0x4780),
        (3.3895313892515355e38, 0x7F7F_0000, 0x7C00, 0x7F7F),
        // This double lies 6.0e24 below the bf16 tie 0x7F7F8000 (checked with exact rationals):
        // rounded once it is bf16 MAX 0x7F7F. The reference and onnxruntime round it to float32
        // first, land on the tie and give infinity 0x7F80 (a double-rounding witness).
        (3.3961775292304e38, 0x7F7F_8000, 0x7C00, 0x7F7F),
        (-1e-50, 0x8000_0000, 0x8000, 0x8000),
        (5e-324, 0, 0, 0),
    ];
    for (x, f32_bits, f16_bits, bf16_bits) in rows {
        assert_eq!(cast(DType::Double, DType::Float, x.to_bits(), true), f32_bits, "{x:e} -> FLOAT");
        assert_eq!(cast(DType::Double, DType::Float16, x.to_bits(), true), f16_bits, "{x:e} -> FLOAT16");
        assert_eq!(cast(DType::Double, DType::Bfloat16, x.to_bits(), true), bf16_bits, "{x:e} -> BFLOAT16");
    }
}

/// §5: float16, bfloat16 and float8 sources into float8 (single rounding everywhere; `spec` equals
/// the reference column).
#[test]
fn narrow_sources_into_float8() {
    let f16: Vec<u64> =
        [f32::INFINITY, f32::NEG_INFINITY, f32::NAN, 65504.0, 464.0, 480.0, 61440.0, -0.0, 1.0625, 6e-8]
            .iter()
            .map(|&x| u64::from(half::f16::from_f32(x).to_bits()))
            .collect();
    let want_f16: [(DType, bool, [u64; 10]); 8] = [
        (DType::Float8E4M3FN, true, [0x7E, 0xFE, 0x7F, 0x7E, 0x7E, 0x7E, 0x7E, 0x80, 0x38, 0x00]),
        (DType::Float8E4M3FN, false, [0x7F, 0xFF, 0x7F, 0x7F, 0x7E, 0x7F, 0x7F, 0x80, 0x38, 0x00]),
        (DType::Float8E4M3FNUZ, true, [0x7F, 0xFF, 0x80, 0x7F, 0x7F, 0x7F, 0x7F, 0x00, 0x40, 0x00]),
        (DType::Float8E4M3FNUZ, false, [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00, 0x40, 0x00]),
        (DType::Float8E5M2, true, [0x7B, 0xFB, 0x7E, 0x7B, 0x5F, 0x60, 0x7B, 0x80, 0x3C, 0x00]),
        (DType::Float8E5M2, false, [0x7C, 0xFC, 0x7E, 0x7C, 0x5F, 0x60, 0x7C, 0x80, 0x3C, 0x00]),
        (DType::Float8E5M2FNUZ, true, [0x7F, 0xFF, 0x80, 0x7F, 0x63, 0x64, 0x7F, 0x00, 0x40, 0x00]),
        (DType::Float8E5M2FNUZ, false, [0x80, 0x80, 0x80, 0x80, 0x63, 0x64, 0x80, 0x00, 0x40, 0x00]),
    ];
    for (to, saturate, want) in want_f16 {
        let got: Vec<u64> = f16.iter().map(|&c| cast(DType::Float16, to, c, saturate)).collect();
        assert_eq!(got, want, "float16 -> {to} saturate={saturate}");
    }

    let e5m2 = [0x7B, 0xFB, 0x7C, 0xFC, 0x7E, 0x80, 0x5F, 0x60, 0x01, 0x3D];
    let want_e5m2: [(DType, bool, [u64; 10]); 6] = [
        (DType::Float8E4M3FN, true, [0x7E, 0xFE, 0x7E, 0xFE, 0x7F, 0x80, 0x7E, 0x7E, 0x00, 0x3A]),
        (DType::Float8E4M3FN, false, [0x7F, 0xFF, 0x7F, 0xFF, 0x7F, 0x80, 0x7E, 0x7F, 0x00, 0x3A]),
        (DType::Float8E4M3FNUZ, true, [0x7F, 0xFF, 0x7F, 0xFF, 0x80, 0x00, 0x7F, 0x7F, 0x00, 0x42]),
        (DType::Float8E4M3FNUZ, false, [0x80, 0x80, 0x80, 0x80, 0x80, 0x00, 0x80, 0x80, 0x00, 0x42]),
        (DType::Float8E5M2FNUZ, true, [0x7F, 0xFF, 0x7F, 0xFF, 0x80, 0x00, 0x63, 0x64, 0x02, 0x41]),
        (DType::Float8E5M2FNUZ, false, [0x7F, 0xFF, 0x80, 0x80, 0x80, 0x00, 0x63, 0x64, 0x02, 0x41]),
    ];
    for (to, saturate, want) in want_e5m2 {
        let got: Vec<u64> = e5m2.iter().map(|&c| cast(DType::Float8E5M2, to, c, saturate)).collect();
        assert_eq!(got, want, "e5m2 -> {to} saturate={saturate}");
    }

    let e4m3fn = [0x7E, 0xFE, 0x7F, 0xFF, 0x80, 0x01, 0x39, 0x3B, 0x77, 0x78];
    let want_e4m3fn: [(DType, bool, [u64; 10]); 4] = [
        (DType::Float8E5M2, true, [0x5F, 0xDF, 0x7E, 0xFE, 0x80, 0x18, 0x3C, 0x3E, 0x5C, 0x5C]),
        (DType::Float8E4M3FNUZ, false, [0x80, 0x80, 0x80, 0x80, 0x00, 0x02, 0x41, 0x43, 0x7F, 0x80]),
        (DType::Float16, true, [0x5F00, 0xDF00, 0x7E00, 0xFE00, 0x8000, 0x1800, 0x3C80, 0x3D80, 0x5B80, 0x5C00]),
        (DType::Bfloat16, true, [0x43E0, 0xC3E0, 0x7FC0, 0xFFC0, 0x8000, 0x3B00, 0x3F90, 0x3FB0, 0x4370, 0x4380]),
    ];
    for (to, saturate, want) in want_e4m3fn {
        let got: Vec<u64> = e4m3fn.iter().map(|&c| cast(DType::Float8E4M3FN, to, c, saturate)).collect();
        assert_eq!(got, want, "e4m3fn -> {to} saturate={saturate}");
    }

    // FNUZ NaN decodes to -NaN (§4.1), so it lands on the negative NaN of a signed target.
    assert_eq!(cast(DType::Float8E4M3FNUZ, DType::Float, 0x80, true), 0xFFC0_0000);
    assert_eq!(cast(DType::Float8E4M3FNUZ, DType::Float8E4M3FN, 0x80, true), 0xFF);
    assert_eq!(cast(DType::Float8E5M2FNUZ, DType::Float8E5M2, 0x80, true), 0xFE);
    assert_eq!(cast(DType::Float8E5M2FNUZ, DType::Float, 0x01, true), 0x3700_0000);
    // E5M2's NaN codes all decode to the quiet NaN with their sign.
    for (code, want) in [(0x7D, 0x7FC0_0000), (0x7E, 0x7FC0_0000), (0x7F, 0x7FC0_0000), (0xFD, 0xFFC0_0000)] {
        assert_eq!(cast(DType::Float8E5M2, DType::Float, code, true), want);
    }
}

/// §6 with the `spec` NaN rule (ONNX's float4 page, quoted in docs/research/onnx_cast.md §6:
/// NaN -> 6, so 0x7 for either sign; the onnx reference gives 0x8 for +NaN and 0x0 for -NaN).
#[test]
fn float4() {
    let cases: [(f32, u64); 29] = [
        (0.0, 0x0),
        (-0.0, 0x8),
        (f32::NAN, 0x7),
        (-f32::NAN, 0x7),
        (f32::INFINITY, 0x7),
        (f32::NEG_INFINITY, 0xF),
        (0.25, 0x0),
        (f32::from_bits(0x3E80_0001), 0x1),
        (0.75, 0x2),
        (1.25, 0x2),
        (1.75, 0x4),
        (2.5, 0x4),
        (3.5, 0x6),
        (5.0, 0x6),
        (f32::from_bits(0x40A0_0001), 0x7),
        (6.0, 0x7),
        (7.0, 0x7),
        (100.0, 0x7),
        (1e30, 0x7),
        (-100.0, 0xF),
        (-0.25, 0x8),
        (-0.1, 0x8),
        (1e-7, 0x0),
        (-2.5, 0xC),
        (-5.0, 0xE),
        (0.5, 0x1),
        (3.0, 0x5),
        (4.0, 0x6),
        (-6.0, 0xF),
    ];
    for (x, want) in cases {
        for saturate in [true, false] {
            assert_eq!(cast(DType::Float, DType::Float4E2M1, x.to_bits().into(), saturate), want, "{x}");
        }
        assert_eq!(u64::from(F4E2M1::from_f32(x).to_bits()), want, "{x}");
    }
    // Integer sources (§6): int32 [0,1,3,5,7,-7,100] -> 0 2 5 6 7 F 7; uint8 255 -> 7; bool -> 2.
    for (i, want) in [(0i32, 0x0), (1, 0x2), (3, 0x5), (5, 0x6), (7, 0x7), (-7, 0xF), (100, 0x7)] {
        assert_eq!(cast(DType::Int32, DType::Float4E2M1, i as u32 as u64, true), want);
    }
    assert_eq!(cast(DType::Uint8, DType::Float4E2M1, 255, true), 0x7);
    assert_eq!(cast(DType::Bool, DType::Float4E2M1, 1, true), 0x2);
    // float4 -> others (§6): exact; to integers by truncation; -0 -> false.
    assert_eq!(cast(DType::Float4E2M1, DType::Float, 0x1, true), 0x3F00_0000);
    assert_eq!(cast(DType::Float4E2M1, DType::Float8E4M3FN, 0x1, true), 0x30);
    assert_eq!(cast(DType::Float4E2M1, DType::Int32, 0x3, true), 1);
    assert_eq!(cast(DType::Float4E2M1, DType::Int32, 0xB, true), (-1i32) as u32 as u64);
    assert_eq!(cast(DType::Float4E2M1, DType::Bool, 0x8, true), 0);
    // float4 -> E8M0 (`up`, sign ignored): 0 -> 00, 0.5 -> 7E, 1.5 -> 80, 6 -> 82.
    for (code, want) in [(0x0, 0x00), (0x1, 0x7E), (0x3, 0x80), (0x7, 0x82), (0xF, 0x82)] {
        assert_eq!(cast(DType::Float4E2M1, DType::Float8E8M0, code, true), want);
    }
}

/// §7 under `spec` (ONNX's int4 technical page, quoted in docs/research/onnx_cast.md §7: nearest integer, ties to even, then keep the low bits).
/// The reference truncates and onnxruntime rounds half away from zero, so their columns differ
/// exactly at the halves.
#[test]
fn int4_and_int2() {
    let xs = [
        -9.0f32,
        -8.5,
        -8.0,
        -7.5,
        -2.5,
        -1.5,
        -0.5,
        -0.4,
        0.4,
        0.5,
        1.5,
        2.5,
        6.5,
        7.0,
        7.4,
        7.5,
        8.0,
        8.5,
        14.5,
        15.0,
        15.5,
        16.0,
        17.0,
        100.0,
        -100.0,
        1e10,
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
    ];
    // Round half to even, then wrap modulo 16 (int4 shown sign-extended).
    let int4: [i8; 29] =
        [7, -8, -8, -8, -2, -2, 0, 0, 0, 0, 2, 2, 6, 7, 7, -8, -8, -8, -2, -1, 0, 0, 1, 4, -4, 0, 0, 0, 0];
    let uint4: [u8; 29] = [7, 8, 8, 8, 14, 14, 0, 0, 0, 0, 2, 2, 6, 7, 7, 8, 8, 8, 14, 15, 0, 0, 1, 4, 12, 0, 0, 0, 0];
    for ((x, i), u) in xs.iter().zip(int4).zip(uint4) {
        assert_eq!(cast(DType::Float, DType::Int4, x.to_bits().into(), true), u64::from(i as u8 & 0xF), "int4 {x}");
        assert_eq!(cast(DType::Float, DType::Uint4, x.to_bits().into(), true), u64::from(u), "uint4 {x}");
        assert_eq!(I4::from_f32(*x).to_i8(), i, "I4 {x}");
        assert_eq!(U4::from_f32(*x).to_bits(), u, "U4 {x}");
    }
    // Integer sources wrap (all profiles agree).
    let ints = [-9i32, -8, -1, 0, 7, 8, 15, 16, 17, 200, -200, i32::MAX, i32::MIN];
    let int4_wrap: [i8; 13] = [7, -8, -1, 0, 7, -8, -1, 0, 1, -8, -8, -1, 0];
    let uint4_wrap: [u8; 13] = [7, 8, 15, 0, 7, 8, 15, 0, 1, 8, 8, 15, 0];
    for ((i, s), u) in ints.iter().zip(int4_wrap).zip(uint4_wrap) {
        assert_eq!(cast(DType::Int32, DType::Int4, *i as u32 as u64, true), u64::from(s as u8 & 0xF));
        assert_eq!(cast(DType::Int32, DType::Uint4, *i as u32 as u64, true), u64::from(u));
    }
    // INT2 from floats [-2.5,-1.5,1.5,2.5,3.5,1.9,-2,4,nan]: half-even then wrap modulo 4.
    let xs2 = [-2.5f32, -1.5, 1.5, 2.5, 3.5, 1.9, -2.0, 4.0, f32::NAN];
    let int2: [i8; 9] = [-2, -2, -2, -2, 0, -2, -2, 0, 0];
    for (x, want) in xs2.iter().zip(int2) {
        assert_eq!(cast(DType::Float, DType::Int2, x.to_bits().into(), true), u64::from(want as u8 & 0x3), "{x}");
        assert_eq!(I2::from_f32(*x).to_i8(), want);
    }
    // int32 [5,-3,2,3,-2] -> INT2 [1,1,-2,-1,-2], UINT2 [1,1,2,3,2].
    for (i, s, u) in [(5i32, 1i8, 1u8), (-3, 1, 1), (2, -2, 2), (3, -1, 3), (-2, -2, 2)] {
        assert_eq!(cast(DType::Int32, DType::Int2, i as u32 as u64, true), u64::from(s as u8 & 0x3));
        assert_eq!(cast(DType::Int32, DType::Uint2, i as u32 as u64, true), u64::from(u));
    }
    // int4 -> int8 sign-extends; uint4 -> E4M3FN is exact.
    assert_eq!(cast(DType::Int4, DType::Int8, 0x8, true), 0xF8);
    assert_eq!(cast(DType::Int4, DType::Float8E4M3FN, 0x8, true), 0xD0);
    assert_eq!(cast(DType::Uint4, DType::Float8E4M3FN, 15, true), 0x57);
    // int4 <-> uint4 reinterprets the nibble (the ONNX text's fixed -> fixed rule; every profile).
    assert_eq!(cast(DType::Int4, DType::Uint4, 0xF, true), 0xF);
}

fn e8m0(x: f32, saturate: bool, mode: RoundMode) -> u8 {
    F8E8M0::from_f32_rounded(x, saturate, mode).to_bits()
}

/// §10 under `spec`: the Cast-24 table with overflow judged after rounding, |x| < 2^-127 -> MIN
/// (saturate) or NaN, sign ignored as the reference does. Rows marked "ref" differ from the onnx
/// reference (profile rows `nan_payloads` and `strings.grammar`).
#[test]
fn e8m0_table() {
    use RoundMode::{Down, Nearest, Up};
    let table: [(u32, [u8; 6]); 17] = [
        // input bits: [sat1 up, sat1 down, sat1 nearest, sat0 up, sat0 down, sat0 nearest]
        (0x0000_0000, [0x00, 0x00, 0x00, 0xFF, 0xFF, 0xFF]), // ref: 00 for sat0 (spec: "0 -> NaN")
        (0x8000_0000, [0x00, 0x00, 0x00, 0xFF, 0xFF, 0xFF]), // ref: 00 for sat0
        (0x7FC0_0000, [0xFF; 6]),
        (0xFFC0_0000, [0xFF; 6]),
        (0x7F80_0000, [0xFE, 0xFE, 0xFE, 0xFF, 0xFF, 0xFF]), // ref: FF for sat1 (spec: Inf -> MAX)
        (0xFF80_0000, [0xFE, 0xFE, 0xFE, 0xFF, 0xFF, 0xFF]), // ref: FF for sat1
        (0x3F80_0000, [0x7F; 6]),
        (0x3FC0_0000, [0x80, 0x7F, 0x80, 0x80, 0x7F, 0x80]),
        (0x3FBF_FFFF, [0x80, 0x7F, 0x7F, 0x80, 0x7F, 0x7F]),
        (0x3F80_0001, [0x80, 0x7F, 0x7F, 0x80, 0x7F, 0x7F]),
        (0x4040_0000, [0x81, 0x80, 0x81, 0x81, 0x80, 0x81]),
        (0xBFC0_0000, [0x80, 0x7F, 0x80, 0x80, 0x7F, 0x80]),
        (0x7F40_0000, [0xFE, 0xFE, 0xFE, 0xFF, 0xFE, 0xFF]), // 1.5 * 2^127
        (0x7F7F_FFFF, [0xFE, 0xFE, 0xFE, 0xFF, 0xFE, 0xFF]),
        (0x0040_0000, [0x00, 0x00, 0x00, 0x00, 0x00, 0x00]), // 2^-127 exactly; ref: 01 for `up`
        (0x0060_0000, [0x01, 0x00, 0x01, 0x01, 0x00, 0x01]),
        (0x0000_0001, [0x00, 0x00, 0x00, 0xFF, 0xFF, 0xFF]), // below MIN; ref: 01 00 00 / 01 00 00
    ];
    for (bits, want) in table {
        let x = f32::from_bits(bits);
        let got = [
            e8m0(x, true, Up),
            e8m0(x, true, Down),
            e8m0(x, true, Nearest),
            e8m0(x, false, Up),
            e8m0(x, false, Down),
            e8m0(x, false, Nearest),
        ];
        assert_eq!(got, want, "f32 {bits:08X}");
    }
    // The backend test's input with saturate=1, up.
    let xs = [0.0f32, 0.124, 0.25, 0.5, 1.1, 2.0, 4.0, 8.0];
    let got: Vec<u8> = xs.iter().map(|&x| F8E8M0::from_f32(x).to_bits()).collect();
    assert_eq!(got, [0x00, 0x7C, 0x7D, 0x7E, 0x80, 0x80, 0x81, 0x82]);
    // Other sources: int32 [3, 0, 255] -> 81 00 87; decoding.
    for (i, want) in [(3u64, 0x81), (0, 0x00), (255, 0x87)] {
        assert_eq!(cast(DType::Int32, DType::Float8E8M0, i, true), want);
    }
    for (code, want) in [(0x00, 0x0040_0000u64), (0x01, 0x0080_0000), (0x7F, 0x3F80_0000), (0xFE, 0x7F00_0000)] {
        assert_eq!(cast(DType::Float8E8M0, DType::Float, code, true), want);
    }
    assert_eq!(cast(DType::Float8E8M0, DType::Float, 0xFF, true), 0x7FC0_0000);
    // 2^127 is out of int32's range (cvtt's 0x80000000); the NaN code gives 0, as in the reference.
    for (code, want) in [(0x7F, 1u64), (0x80, 2), (0x8E, 32768), (0xFE, 0x8000_0000), (0xFF, 0)] {
        assert_eq!(cast(DType::Float8E8M0, DType::Int32, code, true), want, "{code:#x}");
    }
}

/// §11: float6, `saturate` ignored; NaN follows the reference (the Cast-28 text is silent).
#[test]
fn float6() {
    let e2m3 = |x: f32| F6E2M3::from_f32_nonsaturating(x).to_bits();
    let e3m2 = |x: f32| F6E3M2::from_f32_nonsaturating(x).to_bits();
    assert_eq!(e2m3(f32::NAN), 0x20);
    assert_eq!(e2m3(-f32::NAN), 0x00);
    assert_eq!(e2m3(f32::INFINITY), 0x1F);
    assert_eq!(e2m3(f32::NEG_INFINITY), 0x3F);
    assert_eq!(e2m3(8.0), 0x1F);
    assert_eq!(F6E2M3::MAX.to_f32(), 7.5);
    assert_eq!(e3m2(30.0), 0x1F);
    assert_eq!(e3m2(0.0625), 0x01);
    assert_eq!(e3m2(0.03125), 0x00);
    assert_eq!(F6E3M2::MAX.to_f32(), 28.0);
    assert_eq!(F6E3M2::from_f32(f32::NAN).to_bits(), 0x20);
    // Packing example of §3: float6e2m3 [1, 2, 3, -1, 0.5] are codes 08 10 14 28 04.
    let codes: Vec<u8> = [1.0f32, 2.0, 3.0, -1.0, 0.5].iter().map(|&x| F6E2M3::from_f32(x).to_bits()).collect();
    assert_eq!(codes, [0x08, 0x10, 0x14, 0x28, 0x04]);
}
