//! OCP Microscaling (`lowbit::quant::mx`): blocks computed by hand, the scale rule against the
//! rounding core's E8M0 cast, random tensors against a reference built on the independent oracle
//! (tests/support/oracle.rs), and bad input. The peer cross-check (gfloat) is tests/mx_gfloat.rs.

#[path = "support/oracle.rs"]
mod oracle;

use lowbit::quant::mx::{self, MxFormat, MxOptions, ScaleRound};
use lowbit::DType;
use lowbit::Error;
use lowbit::Profile;
use lowbit::Tensor;
use lowbit::{convert_code, CastOptions, RoundMode};
use oracle::{OFormat, OMode, OValue};

fn f32_tensor(shape: &[usize], values: &[f32]) -> Tensor {
    Tensor::from_f32(values).reshape(shape.to_vec()).unwrap()
}

fn opts(format: MxFormat, block_size: usize) -> MxOptions {
    MxOptions { block_size, ..MxOptions::new(format) }
}

/// Quantizes a 1-D block and returns (scale codes, element codes, dequantized values).
fn run(format: MxFormat, block_size: usize, values: &[f32]) -> (Vec<u64>, Vec<u64>, Vec<f32>) {
    let o = opts(format, block_size);
    let q = mx::quantize(&Tensor::from_f32(values), &o).unwrap();
    let back = mx::dequantize(&q.elements, &q.scales, &o).unwrap();
    (q.scales.codes().unwrap(), q.elements.codes().unwrap(), back.to_f32_vec().unwrap())
}

#[test]
fn mxfp8_e4m3_block_by_hand() {
    // amax = 100, 64 <= 100 < 128: floor(log2 100) = 6; E4M3's largest value 448 = 1.75 * 2^8, emax 8;
    // s = 6 - 8 = -2, X = 0.25, E8M0 code -2 + 127 = 125 = 0x7D. V / X = V * 4:
    //   1.0 -> 4.0 = 2^2: exponent field 2 + 7 = 9, fraction 0 -> 0 1001 000 = 0x48
    //   0.3 -> 1.2 (1.20000005): fraction 0.2 * 8 = 1.6 -> 2, 1.25 -> 0 0111 010 = 0x3A
    //   -2.5 -> -10 = -1.25 * 2^3: field 10, fraction 2 -> 1 1010 010 = 0xD2
    //   100 -> 400 = 1.5625 * 2^8: fraction 4.5, a tie -> 4 (even): 1.5 * 256 = 384 -> 0 1111 100 = 0x7C
    // Back: 4 * 0.25 = 1, 1.25 * 0.25 = 0.3125, -10 * 0.25 = -2.5, 384 * 0.25 = 96.
    let (scales, elements, back) = run(MxFormat::Fp8E4M3, 32, &[1.0, 0.3, -2.5, 100.0]);
    assert_eq!(scales, [0x7D]);
    assert_eq!(elements, [0x48, 0x3A, 0xD2, 0x7C]);
    assert_eq!(back, [1.0, 0.3125, -2.5, 96.0]);
}

#[test]
fn floor_clamps_and_ceil_does_not() {
    // amax 500: floor(log2 500) = 8, s = 8 - 8 = 0, X = 1 (0x7F); 500 > 448 saturates to 448 (0x7E).
    let (scales, elements, back) = run(MxFormat::Fp8E4M3, 32, &[500.0, -1.0]);
    assert_eq!((scales, elements, back), (vec![0x7F], vec![0x7E, 0xB8], vec![448.0, -1.0]));
    // ceil: 500 / 2^8 = 1.953 > 1.75 (448's significand), so s = 1, X = 2 (0x80); 500 / 2 = 250 =
    // 1.953 * 2^7: fraction 0.953 * 8 = 7.63 -> 8, a carry: 256 = 2^8 -> 0 1111 000 = 0x78;
    // -1 / 2 = -0.5 = 2^-1 -> 1 0110 000 = 0xB0. Back: 512, -1.
    let o = MxOptions { scale_round: ScaleRound::Ceil, ..MxOptions::new(MxFormat::Fp8E4M3) };
    let q = mx::quantize(&Tensor::from_f32(&[500.0, -1.0]), &o).unwrap();
    assert_eq!(q.scales.codes().unwrap(), [0x80]);
    assert_eq!(q.elements.codes().unwrap(), [0x78, 0xB0]);
    // amax 448 exactly: 1.75 is not above 1.75, so ceil keeps s = 0 (0x7F), like floor.
    assert_eq!(mx::block_scale_code(448.0, MxFormat::Fp8E4M3, ScaleRound::Ceil).unwrap(), 0x7F);
    assert_eq!(mx::block_scale_code(448.0, MxFormat::Fp8E4M3, ScaleRound::Floor).unwrap(), 0x7F);
}

#[test]
fn mxfp4_block_by_hand_and_packing() {
    // amax 6 = 1.5 * 2^2, emax 2 (E2M1's 6 = 1.5 * 2^2): s = 0, X = 1 (0x7F). E2M1 values 0, 0.5, 1,
    // 1.5, 2, 3, 4, 6:
    //   6 -> 0 11 1 = 0x7;  -0.25: halfway 0 and 0.5, ties to even (0) -> -0 = 0x8;
    //   1.75: halfway 1.5 (0 01 1, odd) and 2 (0 10 0, even) -> 2 = 0x4;  0 -> 0x0.
    // ONNX packs element 2k into the low nibble: bytes 0x87, 0x04.
    let (scales, elements, back) = run(MxFormat::Fp4E2M1, 32, &[6.0, -0.25, 1.75, 0.0]);
    assert_eq!((scales, elements.clone()), (vec![0x7F], vec![0x7, 0x8, 0x4, 0x0]));
    let q = mx::quantize(&Tensor::from_f32(&[6.0, -0.25, 1.75, 0.0]), &MxOptions::new(MxFormat::Fp4E2M1)).unwrap();
    assert_eq!(q.elements.raw().unwrap(), [0x87, 0x04]);
    assert_eq!(back.iter().map(|x| x.to_bits()).collect::<Vec<_>>(), [6f32, -0.0, 2.0, 0.0].map(f32::to_bits));
}

#[test]
fn mxfp6_e2m3_block_by_hand_and_packing() {
    // amax 7.5 = 1.875 * 2^2, E2M3's emax is 2 (7.5): s = 0, X = 1. E2M3: bias 1, 3 fraction bits,
    // subnormal step 2^(1-1-3) = 0.125:
    //   7.5 = 1.875 * 2^2 -> field 3, fraction 7 -> 0 11 111 = 0x1F;  0.125 -> subnormal 1 = 0x01;
    //   -1 -> 1 01 000 = 0x28;  3.25 = 1.625 * 2 -> field 2, fraction 5 -> 0 10 101 = 0x15;
    //   0.1 (0.100000001) / 0.125 = 0.8 -> 1 = 0x01.
    // Sextets LSB first: 0x1F | 0x01 << 6 | 0x28 << 12 | 0x15 << 18 = 0x56805F -> 5F 80 56, then 01.
    let q =
        mx::quantize(&Tensor::from_f32(&[7.5, 0.125, -1.0, 3.25, 0.1]), &MxOptions::new(MxFormat::Fp6E2M3)).unwrap();
    assert_eq!(q.scales.codes().unwrap(), [0x7F]);
    assert_eq!(q.elements.codes().unwrap(), [0x1F, 0x01, 0x28, 0x15, 0x01]);
    assert_eq!(q.elements.raw().unwrap(), [0x5F, 0x80, 0x56, 0x01]);
}

#[test]
fn mxint8_by_hand() {
    // amax 1: floor(log2 1) = 0, MXINT8's emax 0 (127/64 < 2): s = 0, X = 1. Integers V * 64:
    //   1.0 -> 64 = 0x40;  -0.7 (-0.699999988) -> -44.8 -> -45 = 0xD3;  0.01 -> 0.64 -> 1 = 0x01.
    // Back: 64/64 = 1, -45/64 = -0.703125, 1/64 = 0.015625.
    let (scales, elements, back) = run(MxFormat::Int8, 32, &[1.0, -0.7, 0.01]);
    assert_eq!((scales, elements, back), (vec![0x7F], vec![0x40, 0xD3, 0x01], vec![1.0, -0.703125, 0.015625]));
    // 1.99999 and -1.99999: floor(log2) 0, X = 1; * 64 = +-127.99936: +128 clamps to 127 (0x7F),
    // -128 is in range (0x80). A tie: 0.5 / 64 * 64 = 0.5 -> 0 (even); 1.5 / 64 -> 1.5 -> 2.
    let (scales, elements, back) = run(MxFormat::Int8, 32, &[1.99999, -1.99999, 0.5 / 64.0, 1.5 / 64.0]);
    assert_eq!((scales, elements), (vec![0x7F], vec![0x7F, 0x80, 0x00, 0x02]));
    assert_eq!(back, [127.0 / 64.0, -2.0, 0.0, 2.0 / 64.0]);
    // ceil with float32's largest value 1.99999988 * 2^127: floor gives s = 127; 1.99999988 > 127/64
    // asks for s = 128, which E8M0 lacks: clamped to 127 (0xFE), and the element clamps to 127.
    let o = MxOptions { scale_round: ScaleRound::Ceil, ..MxOptions::new(MxFormat::Int8) };
    let q = mx::quantize(&Tensor::from_f32(&[f32::MAX]), &o).unwrap();
    assert_eq!((q.scales.codes().unwrap(), q.elements.codes().unwrap()), (vec![0xFE], vec![0x7F]));
}

#[test]
fn zero_nan_infinity_and_extreme_blocks() {
    // Zeros: scale 2^-127 (0x00); -0 stays -0 (E4M3 0x80).
    let (scales, elements, back) = run(MxFormat::Fp8E4M3, 2, &[0.0, -0.0, 1.0, f32::NAN, f32::INFINITY, 2.0]);
    assert_eq!(scales, [0x00, 0xFF, 0xFF]);
    // A NaN or infinite block: scale NaN (0xFF), elements +0, dequantized NaN.
    assert_eq!(elements, [0x00, 0x80, 0, 0, 0, 0]);
    assert_eq!(back[..2].iter().map(|x| x.to_bits()).collect::<Vec<_>>(), [0, 0x8000_0000]);
    assert!(back[2..].iter().all(|x| x.is_nan()));
    // 2^-149 (float32's smallest): floor(log2) = -149, s = -157, clamped to -127 (0x00); V / X =
    // 2^-22, far below E4M3's smallest 2^-9: 0.
    let (scales, elements, _) = run(MxFormat::Fp8E4M3, 32, &[f32::from_bits(1), -f32::from_bits(1)]);
    assert_eq!((scales, elements), (vec![0x00], vec![0x00, 0x80]));
    // float32's largest 1.99999988 * 2^127: s = 127 - 8 = 119 (0xF6); V / X = 511.99997 -> 448.
    let (scales, elements, back) = run(MxFormat::Fp8E4M3, 32, &[f32::MAX]);
    assert_eq!((scales, elements, back), (vec![0xF6], vec![0x7E], vec![448.0 * 2f32.powi(119)]));
    // E5M2's 57344 * 2^(127 - 15): the scale code 0xEF (112 + 127), 0x7B; fine in float32.
    let (scales, elements, _) = run(MxFormat::Fp8E5M2, 32, &[57344.0 * 2f32.powi(112)]);
    assert_eq!((scales, elements), (vec![0xEF], vec![0x7B]));
    // Just below a power of two: 0.99999994 = (1 - 2^-24): floor(log2) = -1, s = -9 (0x76);
    // V / X = 511.99997 saturates to 448 (a float log2 in float32 would say 0 and give 256).
    let (scales, elements, _) = run(MxFormat::Fp8E4M3, 32, &[0.99999994]);
    assert_eq!((scales, elements), (vec![0x76], vec![0x7E]));
}

#[test]
fn dequantize_decodes_every_scale_and_overflows_to_infinity() {
    // E4M3 element 1.0 (0x38) times every scale 2^(c - 127); 0xFF is NaN.
    let elements = Tensor::from_codes(DType::Float8E4M3FN, vec![255], &[0x38; 255]).unwrap();
    let codes: Vec<u64> = (0..255).collect();
    let scales = Tensor::from_codes(DType::Float8E8M0, vec![255], &codes).unwrap();
    let back = mx::dequantize(&elements, &scales, &opts(MxFormat::Fp8E4M3, 1)).unwrap().to_f32_vec().unwrap();
    for (c, x) in back.iter().enumerate() {
        assert_eq!(f64::from(*x), 2f64.powi(c as i32 - 127), "code {c}");
    }
    // E5M2's largest 57344 = 1.75 * 2^15 times 2^127 = 1.75 * 2^142: infinity in float32. Its
    // smallest 2^-16 times 2^-127 = 2^-143, a float32 subnormal; E5M2 NaN 0x7F stays NaN.
    let elements = Tensor::from_codes(DType::Float8E5M2, vec![3], &[0x7B, 0x01, 0x7F]).unwrap();
    let scales = Tensor::from_codes(DType::Float8E8M0, vec![3], &[0xFE, 0x00, 0x7F]).unwrap();
    let back = mx::dequantize(&elements, &scales, &opts(MxFormat::Fp8E5M2, 1)).unwrap().to_f32_vec().unwrap();
    assert_eq!(back[0], f32::INFINITY);
    assert_eq!(f64::from(back[1]), 2f64.powi(-143));
    assert!(back[2].is_nan());
    // MXINT8: -128 * 2^-6 * 2^-127 = -2^-126; 1 * 2^-6 * 2^-127 = 2^-133 (subnormal, exact).
    let elements = Tensor::from_codes(DType::Int8, vec![2], &[0x80, 0x01]).unwrap();
    let scales = Tensor::from_codes(DType::Float8E8M0, vec![1], &[0x00]).unwrap();
    let back = mx::dequantize(&elements, &scales, &opts(MxFormat::Int8, 2)).unwrap().to_f32_vec().unwrap();
    assert_eq!(back.iter().map(|&x| f64::from(x)).collect::<Vec<_>>(), [-(2f64.powi(-126)), 2f64.powi(-133)]);
}

#[test]
fn short_last_block_and_other_axes() {
    // Shape [5], blocks of 4: [1, 2, 3, 4] and [100]. Block 0: amax 4, floor(log2) 2, s = 2 - 8 =
    // -6 (0x79), elements V * 64 = 64 = 2^6 (field 13: 0 1101 000 = 0x68), 128 (0x70), 192 = 1.5 *
    // 2^7 (0x74), 256 (0x78). Block 1: amax 100, s = -2 (0x7D), 400 -> 384 (0x7C, as by hand above).
    let (scales, elements, _) = run(MxFormat::Fp8E4M3, 4, &[1.0, 2.0, 3.0, 4.0, 100.0]);
    assert_eq!((scales, elements), (vec![0x79, 0x7D], vec![0x68, 0x70, 0x74, 0x78, 0x7C]));
    // Shape [3, 2] blocked along axis 0 in blocks of 2: column 0 = [1, 3 | 100], column 1 =
    // [-8, 0.5 | 0]. Scales shape [2, 2]: [[s(3), s(8)], [s(100), zero]] = 3: floor 1, s -7
    // (0x78); 8: floor 3, s -5 (0x7A); 100: 0x7D; zeros: 0x00.
    let o = MxOptions { block_size: 2, axis: 0, ..MxOptions::new(MxFormat::Fp8E4M3) };
    let q = mx::quantize(&f32_tensor(&[3, 2], &[1.0, -8.0, 3.0, 0.5, 100.0, 0.0]), &o).unwrap();
    assert_eq!(q.scales.shape(), [2, 2]);
    assert_eq!(q.scales.codes().unwrap(), [0x78, 0x7A, 0x7D, 0x00]);
    // 1 * 2^7 = 128 (field 14: 0x70); -8 * 2^5 = -256 (field 15, negative: 0xF8); 3 * 2^7 = 384
    // (0x7C); 0.5 * 2^5 = 16 = 2^4 (field 11: 0 1011 000 = 0x58); 100 * 4 = 400 -> 384 (0x7C); 0.
    assert_eq!(q.elements.codes().unwrap(), [0x70, 0xF8, 0x7C, 0x58, 0x7C, 0x00]);
    let back = mx::dequantize(&q.elements, &q.scales, &o).unwrap();
    assert_eq!(back.to_f32_vec().unwrap(), [1.0, -8.0, 3.0, 0.5, 96.0, 0.0]);
}

/// The scale exponent from the bits equals the rounding core's E8M0 cast of amax with
/// round_mode=down (floor(log2)) minus emax, clamped at E8M0's smallest code, on every top-16-bit
/// float32 pattern with several low halves and every subnormal's leading bit.
#[test]
fn floor_scale_agrees_with_core_e8m0_round_down() {
    let down = CastOptions { saturate: true, round_mode: RoundMode::Down, profile: Profile::Spec };
    let mut patterns: Vec<u32> = (0..0x7F80u32).flat_map(|hi| [0, 1, 0x8000, 0xFFFF].map(|lo| hi << 16 | lo)).collect();
    patterns.extend((0..23).flat_map(|p| [1u32 << p, (1u32 << p) | ((1 << p) - 1)]));
    for format in MxFormat::ALL {
        let emax = format.emax().unwrap();
        for &bits in &patterns {
            let amax = f32::from_bits(bits);
            let got = mx::block_scale_code(amax, format, ScaleRound::Floor).unwrap();
            let want = if bits == 0 {
                0
            } else {
                let floor = convert_code(DType::Float, DType::Float8E8M0, u64::from(bits), &down).unwrap() as i64;
                (floor - i64::from(emax)).max(0)
            };
            assert_eq!(i64::from(got), want, "{format} amax bits {bits:#010x}");
            // The sign is ignored.
            assert_eq!(mx::block_scale_code(-amax, format, ScaleRound::Floor).unwrap(), got);
        }
    }
}

#[test]
fn element_limits_are_the_specs() {
    // MX v1.0 tables: largest normal 448 (E4M3), 57344 (E5M2), 7.5 (E2M3), 28 (E3M2), 6 (E2M1),
    // MXINT8 1 63/64; emax 8, 15, 2, 4, 2, 0.
    let want = [(448.0, 8), (57344.0, 15), (7.5, 2), (28.0, 4), (6.0, 2), (1.984375, 0)];
    for (format, (max, emax)) in MxFormat::ALL.into_iter().zip(want) {
        assert_eq!((format.element_max().unwrap(), format.emax().unwrap()), (max, emax), "{format}");
        assert_eq!(MxFormat::parse(format.name()).unwrap(), format);
    }
}

// ---------------------------------------------------------------------------------------------
// Random tensors against a reference on the independent oracle

fn oformat(format: MxFormat) -> OFormat {
    match format {
        MxFormat::Fp8E4M3 => OFormat::E4M3FN,
        MxFormat::Fp8E5M2 => OFormat::E5M2,
        MxFormat::Fp6E2M3 => OFormat::E2M3,
        MxFormat::Fp6E3M2 => OFormat::E3M2,
        MxFormat::Fp4E2M1 => OFormat::E2M1,
        MxFormat::Int8 => OFormat::Int { bits: 8, signed: true },
    }
}

/// The spec's (emax, largest element) per format, typed from the MX v1.0 tables.
fn spec_limits(format: MxFormat) -> (i32, f64) {
    match format {
        MxFormat::Fp8E4M3 => (8, 448.0),
        MxFormat::Fp8E5M2 => (15, 57344.0),
        MxFormat::Fp6E2M3 => (2, 7.5),
        MxFormat::Fp6E3M2 => (4, 28.0),
        MxFormat::Fp4E2M1 => (2, 6.0),
        MxFormat::Int8 => (0, 127.0 / 64.0),
    }
}

/// One block by the rules, in float64 (exact here: float32 values scaled by powers of two stay
/// inside float64's range) and the oracle's rounding: (scale code, element codes).
fn reference_block(values: &[f32], format: MxFormat, round: ScaleRound) -> (u8, Vec<u64>) {
    if values.iter().any(|v| !v.is_finite()) {
        return (0xFF, vec![0; values.len()]);
    }
    let amax = values.iter().map(|v| f64::from(v.abs())).fold(0.0, f64::max);
    let (emax, max) = spec_limits(format);
    let s = if amax == 0.0 {
        -127
    } else {
        // A float32 is a normal float64: floor(log2) is its exponent field minus the bias.
        let floor = ((amax.to_bits() >> 52) as i32) - 1023;
        let mut s = floor - emax;
        if round == ScaleRound::Ceil && amax / 2f64.powi(s) > max {
            s += 1;
        }
        s.clamp(-127, 127)
    };
    let elements = values
        .iter()
        .map(|&v| {
            let q = f64::from(v) / 2f64.powi(s);
            match format {
                MxFormat::Int8 => ((q * 64.0).clamp(-128.0, 127.0).round_ties_even() as i64 as u64) & 0xFF,
                _ => {
                    oracle::encode(oformat(format), &oracle::value_from_f64_bits(q.to_bits()), true, OMode::NearestEven)
                }
            }
        })
        .collect();
    ((s + 127) as u8, elements)
}

/// The float32 bits of `code * scale` by the oracle (NaN as a flag).
fn reference_value(format: MxFormat, code: u64, scale: u8) -> Option<u32> {
    let element = oracle::decode(oformat(format), code);
    let shift = i64::from(scale) - 127 + if format == MxFormat::Int8 { -6 } else { 0 };
    let value = match element {
        _ if scale == 0xFF => return None,
        OValue::Finite { negative, mant, exp } => OValue::finite(negative, mant, exp + shift),
        OValue::NaN { .. } => return None,
        inf => inf,
    };
    Some(oracle::encode(OFormat::F32, &value, false, OMode::NearestEven) as u32)
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// Values a block may hold: wide and narrow exponent spreads, ties of the element grids,
    /// zeros of both signs, subnormals, powers of two and their neighbours, NaN and infinities.
    fn value(&mut self, block_exponent: i32) -> f32 {
        let r = self.next();
        let sign = if r & 1 == 1 { -1.0f32 } else { 1.0 };
        match (r >> 1) % 16 {
            0 => 0.0 * sign,
            1 => f32::from_bits((r >> 8) as u32 & 0x007F_FFFF) * sign,
            2 if r >> 60 == 0 => f32::NAN,
            3 if r >> 60 == 0 => f32::INFINITY * sign,
            4 => f32::from_bits(((block_exponent.max(-126) + 127) as u32) << 23) * sign,
            5 => f32::from_bits((((block_exponent.max(-126) + 127) as u32) << 23) - 1) * sign,
            6 => {
                // A multiple of 2^(e - 5): ties for the narrow grids.
                let k = (r >> 20) % 64;
                k as f32 * 2f32.powi(block_exponent - 5) * sign
            }
            _ => {
                let e = block_exponent - ((r >> 20) % 12) as i32;
                let m = 1.0 + ((r >> 32) as u32 & 0x7F_FFFF) as f32 / 8_388_608.0;
                m * 2f32.powi(e.clamp(-126, 127)) * sign
            }
        }
    }
}

#[test]
fn random_tensors_against_the_oracle() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let layouts: [(&[usize], i64, usize); 8] = [
        (&[4, 96], -1, 32),
        // Whole blocks of the spec's size over several of the quantizer's pieces (2048 elements).
        (&[3, 4096], -1, 32),
        (&[3, 37], 1, 32),
        (&[2, 7, 3], -1, 3),
        (&[9, 5], 0, 4),
        (&[2, 7, 3], 1, 2),
        (&[130], 0, 1),
        (&[5, 2, 66], -1, 33),
    ];
    for format in MxFormat::ALL {
        for round in [ScaleRound::Floor, ScaleRound::Ceil] {
            for &(shape, axis, block_size) in &layouts {
                let n: usize = shape.iter().product();
                let rank = shape.len() as i64;
                let a = if axis < 0 { axis + rank } else { axis } as usize;
                let (outer, len) = (shape[..a].iter().product::<usize>(), shape[a]);
                let inner: usize = shape[a + 1..].iter().product();
                let blocks = len.div_ceil(block_size);
                // Each block's values share an exponent from float32's whole range, so both E8M0
                // clamps are reached.
                let block_exponents: Vec<i32> =
                    (0..outer * blocks * inner).map(|_| (rng.next() % 280) as i32 - 150).collect();
                let block_of = |i: usize| {
                    let (o, rest) = (i / (len * inner), i % (len * inner));
                    let (l, k) = (rest / inner, rest % inner);
                    (o * blocks + l / block_size) * inner + k
                };
                let mut values: Vec<f32> =
                    (0..n).map(|i| rng.value(block_exponents[block_of(i)].clamp(-149, 127))).collect();
                // About one block in 16 gets a NaN or an infinity, and one in 16 only zeros.
                let specials = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 0.0, -0.0];
                for block in 0..block_exponents.len() {
                    match rng.next() % 16 {
                        0 => {
                            let members: Vec<usize> = (0..n).filter(|&i| block_of(i) == block).collect();
                            let at = members[rng.next() as usize % members.len()];
                            values[at] = specials[rng.next() as usize % 3];
                        }
                        1 => {
                            for i in (0..n).filter(|&i| block_of(i) == block) {
                                values[i] = specials[3 + rng.next() as usize % 2];
                            }
                        }
                        _ => {}
                    }
                }
                let o = MxOptions { format, block_size, axis, scale_round: round };
                let q = mx::quantize(&f32_tensor(shape, &values), &o).unwrap();
                let (scales, elements) = (q.scales.codes().unwrap(), q.elements.codes().unwrap());
                let mut want_elements = vec![0u64; n];
                assert_eq!(scales.len(), outer * blocks * inner);
                for (block, &scale) in scales.iter().enumerate() {
                    let members: Vec<usize> = (0..n).filter(|&i| block_of(i) == block).collect();
                    let block_values: Vec<f32> = members.iter().map(|&i| values[i]).collect();
                    let (code, codes) = reference_block(&block_values, format, round);
                    assert_eq!(scale, u64::from(code), "{format} {round:?} {shape:?} block {block}: {block_values:?}");
                    for (&i, c) in members.iter().zip(codes) {
                        want_elements[i] = c;
                    }
                }
                for i in 0..n {
                    assert_eq!(
                        elements[i], want_elements[i],
                        "{format} {round:?} {shape:?} element {i}: {}",
                        values[i]
                    );
                }
                let back = mx::dequantize(&q.elements, &q.scales, &o).unwrap().to_f32_vec().unwrap();
                for i in 0..n {
                    let want = reference_value(format, elements[i], scales[block_of(i)] as u8);
                    match want {
                        Some(bits) => assert_eq!(back[i].to_bits(), bits, "{format} {shape:?} element {i}"),
                        None => assert!(back[i].is_nan(), "{format} {shape:?} element {i}"),
                    }
                }
            }
        }
    }
}

#[test]
fn float16_and_bfloat16_inputs_widen_exactly() {
    // 1.5, -0.75 and 100 are exact in both: the same codes as from float32.
    let want = mx::quantize(&Tensor::from_f32(&[1.5, -0.75, 100.0]), &MxOptions::new(MxFormat::Fp8E4M3)).unwrap();
    let f16 = Tensor::from_codes(DType::Float16, vec![3], &[0x3E00, 0xBA00, 0x5640]).unwrap();
    let bf16 = Tensor::from_codes(DType::Bfloat16, vec![3], &[0x3FC0, 0xBF40, 0x42C8]).unwrap();
    for t in [f16, bf16] {
        assert_eq!(mx::quantize(&t, &MxOptions::new(MxFormat::Fp8E4M3)).unwrap(), want, "{}", t.dtype());
    }
}

// ---------------------------------------------------------------------------------------------
// Bad input

fn message(e: Error) -> String {
    e.to_string()
}

#[test]
fn bad_input_is_a_typed_error() {
    let x = f32_tensor(&[2, 4], &[1.0; 8]);
    let q = |t: &Tensor, o: MxOptions| mx::quantize(t, &o).map(|_| ()).map_err(message);
    let base = MxOptions::new(MxFormat::Fp4E2M1);
    let e = q(&x, MxOptions { block_size: 0, ..base }).unwrap_err();
    assert!(e.contains("block_size") && e.contains("0"), "{e}");
    let e = q(&x, MxOptions { axis: 2, ..base }).unwrap_err();
    assert!(e.contains("axis") && e.contains("[-2, 1]"), "{e}");
    assert!(q(&x, MxOptions { axis: -3, ..base }).is_err());
    assert!(q(&x, MxOptions { axis: i64::MIN, ..base }).is_err());
    let e = q(&f32_tensor(&[0, 4], &[]), base).unwrap_err();
    assert!(e.contains("input has no elements"), "{e}");
    let e = q(&Tensor::from_codes(DType::Float, vec![], &[0]).unwrap(), base).unwrap_err();
    assert!(e.contains("scalar"), "{e}");
    let e = q(&Tensor::from_f64(&[1.0]), base).unwrap_err();
    assert!(e.contains("DOUBLE") && e.contains("input"), "{e}");
    // A huge block size is one block.
    assert!(q(&x, MxOptions { block_size: usize::MAX, ..base }).is_ok());

    let good = mx::quantize(&x, &base).unwrap();
    let d = |e: &Tensor, s: &Tensor, o: MxOptions| mx::dequantize(e, s, &o).map(|_| ()).map_err(message);
    assert!(d(&good.elements, &good.scales, base).is_ok());
    let e = d(&good.elements, &good.scales, MxOptions { block_size: 2, ..base }).unwrap_err();
    assert!(e.contains("scales have shape [2, 1]") && e.contains("[2, 2]"), "{e}");
    let e = d(&good.elements, &good.scales, MxOptions { axis: 0, ..base }).unwrap_err();
    assert!(e.contains("scales have shape"), "{e}");
    let e = d(&good.elements, &good.scales, MxOptions::new(MxFormat::Fp8E4M3)).unwrap_err();
    assert!(e.contains("FLOAT4E2M1") && e.contains("FLOAT8E4M3FN"), "{e}");
    let e = d(&good.elements, &good.elements, base).unwrap_err();
    assert!(e.contains("scales are FLOAT4E2M1"), "{e}");
    let e = d(&good.elements, &good.scales, MxOptions { axis: 5, ..base }).unwrap_err();
    assert!(e.contains("axis for elements"), "{e}");
    let empty = Tensor::from_codes(DType::Float4E2M1, vec![0], &[]).unwrap();
    let e = d(&empty, &good.scales, base).unwrap_err();
    assert!(e.contains("elements has no elements"), "{e}");
    assert!(MxFormat::parse("mxfp5").unwrap_err().to_string().contains("mxfp8e4m3"));
    assert!(ScaleRound::parse("round").is_err());
}

#[test]
fn raw_buffers_are_checked() {
    let raw: Vec<u8> = [1.0f32; 6].iter().flat_map(|v| v.to_le_bytes()).collect();
    let o = opts(MxFormat::Fp4E2M1, 4);
    // Shape [6] in blocks of 4: 2 scales, 3 bytes of float4.
    let (mut scales, mut elements) = (vec![0u8; 2], vec![0u8; 3]);
    mx::quantize_into(DType::Float, &[6], &raw, &o, &mut scales, &mut elements).unwrap();
    // amax 1, s = 0 - 2 = -2 (0x7D); 1 / 0.25 = 4 (0x6); the short block too. Nibbles: 0x66 0x66 0x66.
    assert_eq!((scales.as_slice(), elements.as_slice()), (&[0x7D, 0x7D][..], &[0x66, 0x66, 0x66][..]));
    let err = mx::quantize_into(DType::Float, &[6], &raw, &o, &mut [0u8; 3], &mut elements).unwrap_err();
    assert!(err.to_string().contains("FLOAT8E8M0") && err.to_string().contains("3 bytes"), "{err}");
    let err = mx::quantize_into(DType::Float, &[6], &raw[..20], &o, &mut scales, &mut elements).unwrap_err();
    assert!(err.to_string().contains("FLOAT:") && err.to_string().contains("20 bytes"), "{err}");
    let mut out = vec![0u8; 24];
    mx::dequantize_into(&[6], &elements, &scales, &o, &mut out).unwrap();
    assert_eq!(out, raw);
    let err = mx::dequantize_into(&[6], &elements, &scales, &o, &mut out[..20]).unwrap_err();
    assert!(err.to_string().contains("20 bytes"), "{err}");
    let err = mx::dequantize_into(&[6], &elements[..2], &scales, &o, &mut out).unwrap_err();
    assert!(err.to_string().contains("FLOAT4E2M1"), "{err}");
}
