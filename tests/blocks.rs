//! `quant::blocks`: each recipe's distinguishing rule on a few blocks computed by hand (the
//! derivation in the comments), the ggml C rules (checked against ggml's C run live) and where
//! gguf's port (the `gguf-py:*` rows, the fixtures) departs from them, refusals, the storage
//! layouts and the blocked axis. tests/blocks_fixtures.rs compares with the implementations' own
//! outputs.

use lowbit::quant::blocks::{self, Quantized, Scales, Scheme};

fn q(scheme: &str, x: &[f32], global: Option<f32>) -> Quantized {
    blocks::quantize(x, &[x.len()], &Scheme::parse(scheme).unwrap(), -1, global).unwrap()
}

/// A block of `n` zeros with `head` at the front.
fn block(n: usize, head: &[f32]) -> Vec<f32> {
    let mut v = vec![0.0; n];
    v[..head.len()].copy_from_slice(head);
    v
}

fn codes(s: &Scales) -> Vec<u8> {
    match s {
        Scales::Codes(c) => c.clone(),
        other => panic!("byte codes expected, got {other:?}"),
    }
}

#[test]
fn torchao_scale_modes_on_amax_7() {
    // amax 7 = 1.75 * 2^2 (float32 bits 0x40E00000), MXFP4 (emax 2, 1 mantissa bit).
    // floor: exponent 2 - 2 = 0 -> 0x7F, 7 / 1 saturates to 6 (code 7).
    // ceil: mantissa not zero -> 3 - 2 = 1 -> 0x80, 7 / 2 = 3.5, a tie of 3 and 4 -> even: 4 (code 6).
    // even: 0x40E00000 + (1 << 21) = 0x41000000 = 8 -> exponent 3 -> 0x80, code 6 as ceil.
    // rceil: ceil(log2(7 / 6)) = ceil(0.22) = 1 -> 0x80; 7 * 2^-1 = 3.5 -> 4 (code 6).
    for (mode, scale, code) in [("floor", 0x7F, 7), ("ceil", 0x80, 6), ("even", 0x80, 6), ("rceil", 0x80, 6)] {
        let r = q(&format!("torchao:mxfp4,scale={mode}"), &block(32, &[7.0]), None);
        assert_eq!(codes(&r.scales), [scale], "{mode}");
        assert_eq!(r.elements[0], code, "{mode}");
    }
    // amax 5.5 = 1.375 * 2^2: even rounds at 1 mantissa bit: 0x40B00000 + 0x200000 = 0x40D00000,
    // masked to 4 -> 0x7F (where ceil gives 0x80).
    assert_eq!(codes(&q("torchao:mxfp4,scale=even", &block(32, &[5.5]), None).scales), [0x7F]);
    assert_eq!(codes(&q("torchao:mxfp4,scale=ceil", &block(32, &[5.5]), None).scales), [0x80]);
}

#[test]
fn torchao_subnormal_block_divides_by_the_smallest_normal() {
    // 2^-127 (a float32 subnormal): exponent field 0 -> -127 - 2 clamped to -127 -> code 0x00,
    // but the divisor is clamped to 2^-126: 2^-127 / 2^-126 = 0.5 (E2M1 code 1), which decodes
    // as 0.5 * 2^-127 = 2^-128: the factor of two torchao loses.
    let tiny = f32::from_bits(1 << 22);
    let r = q("torchao:mxfp4,scale=floor", &block(32, &[tiny]), None);
    assert_eq!((codes(&r.scales)[0], r.elements[0]), (0x00, 1));
    assert_eq!(r.dequantize().unwrap()[0], f32::from_bits(1 << 21));
    // rceil multiplies a code-0 block by 1.0: 2^-127 * 1 rounds to E2M1 zero.
    let r = q("torchao:mxfp4,scale=rceil", &block(32, &[tiny]), None);
    assert_eq!((codes(&r.scales)[0], r.elements[0]), (0x00, 0));
}

#[test]
fn torchao_inf_blocks() {
    // floor: Inf's exponent field 255 -> 128 - 2 = 126 -> 0xFD, Inf / 2^126 saturates to 6.
    let r = q("torchao:mxfp4,scale=floor", &block(32, &[f32::INFINITY]), None);
    assert_eq!((codes(&r.scales)[0], r.elements[0]), (0xFD, 7));
    // rceil: an infinite amax / 6 -> 0xFE.
    assert_eq!(codes(&q("torchao:mxfp4,scale=rceil", &block(32, &[f32::INFINITY]), None).scales), [0xFE]);
    // A NaN anywhere: 0xFF, every value NaN on the way back.
    let r = q("torchao:mxfp4,scale=floor", &block(32, &[1.0, f32::NAN]), None);
    assert_eq!(codes(&r.scales), [0xFF]);
    assert!(r.dequantize().unwrap().iter().all(|v| v.is_nan()));
}

#[test]
fn nvfp4_zero_blocks_and_scale_ties() {
    // torchao, one level: a zero block's scale is clamped to E4M3's smallest normal 2^-6 (0x08).
    assert_eq!(codes(&q("torchao:nvfp4", &block(16, &[]), None).scales), [0x08]);
    // amax 6.375: 6.375 / 6 = 1.0625, halfway between 1.0 (0x38) and 1.125 (0x39): even -> 0x38.
    assert_eq!(codes(&q("torchao:nvfp4", &block(16, &[6.375]), None).scales), [0x38]);
    // ModelOpt (G = 1 given): a zero block's scale 0 -> 1.0 (0x38). Block 2: amax 6, s = 6 / (6 * 1)
    // = 1.0 (0x38); -0.0 takes its sign from x < 0: code 0; -1e-30 / 1 rounds to zero with the
    // sign: code 8.
    let mut x = block(32, &[]);
    x[16..19].copy_from_slice(&[6.0, -0.0, -1e-30]);
    let r = q("modelopt:nvfp4", &x, Some(1.0));
    assert_eq!((codes(&r.scales), r.elements[16], r.elements[17], r.elements[18]), (vec![0x38, 0x38], 7, 0, 8));
    // compressed-tensors (G = 1): a zero scale becomes 0.125 (0x20).
    let r = q("compressed-tensors:nvfp4", &block(16, &[]), Some(1.0));
    assert_eq!(codes(&r.scales), [0x20]);
    // ModelOpt's global is a decode scale amax / 2688, compressed-tensors' an encode scale 2688 /
    // amax: amax 2688 gives 1.0 for both; amax 5376 gives 2.0 and 0.5.
    let x = block(16, &[5376.0]);
    assert_eq!(q("modelopt:nvfp4", &x, None).global_scale, Some(2.0));
    assert_eq!(q("compressed-tensors:nvfp4", &x, None).global_scale, Some(0.5));
    assert_eq!(q("torchao:nvfp4,global=amax", &x, None).global_scale, Some(2.0));
    assert_eq!(q("torchao:nvfp4", &x, None).global_scale, None);
}

#[test]
fn compressed_tensors_nan_elements_take_the_sign_of_the_input_dtype_store() {
    // A block holding NaN: amax NaN, G = 1 (NaN -> 1), the scale NaN, so every x / s is NaN. The
    // thresholds leave a NaN at magnitude 0, positive; stored back in float32 it stays positive
    // (code 0), stored in bfloat16 by torch's vectorized cast it is 0xFFFF: code 8 (sign bit).
    let mut x = block(16, &[f32::NAN]);
    x[1] = 1.0;
    let scheme = Scheme::parse("compressed-tensors:nvfp4").unwrap();
    let f32_codes = blocks::quantize(&x, &[16], &scheme, -1, None).unwrap().elements;
    assert_eq!(f32_codes, [0u8; 16]);
    let bf: Vec<half::bf16> = x.iter().map(|&v| half::bf16::from_f32(v)).collect();
    let bf_codes = blocks::quantize(&bf, &[16], &scheme, -1, None).unwrap().elements;
    assert_eq!(bf_codes, [8u8; 16]);
}

#[test]
fn compressed_tensors_mxfp4_scale_rule() {
    let mx = "compressed-tensors:mxfp4";
    // amax 7 (0x40E00000) + 1 << 21 = 0x41000000 = 8: 127 + 3 - 2 = 128 (2^1); 7 / 2 = 3.5, a tie
    // of 3 and 4: even, 4 (code 6).
    let r = q(mx, &block(32, &[7.0]), None);
    assert_eq!((codes(&r.scales), r.elements[0]), (vec![128], 6));
    // 2^-127 (a float32 subnormal): the bits round to 0, log2 -> -Inf, code 0 = 2^-127, and no
    // smallest divisor: 2^-127 / 2^-127 = 1.0 (code 2); -0.0 becomes +0 (code 0).
    let r = q(mx, &block(32, &[f32::from_bits(0x0040_0000), -0.0]), None);
    assert_eq!((codes(&r.scales), r.elements[0], r.elements[1]), (vec![0], 2, 0));
    // float32's largest value carries into Inf: code 255 = divisor Inf, stored as 127 +
    // (int32)Inf = 0x7F; 1.0 / Inf = 0, Inf / Inf = NaN (positive: code 0); decodes to zeros.
    let r = q(mx, &block(32, &[f32::MAX, 1.0, f32::INFINITY]), None);
    assert_eq!((codes(&r.scales), &r.elements[..3]), (vec![0x7F], &[0u8, 0, 0][..]));
    assert!(r.dequantize().unwrap().iter().all(|v| v.to_bits() == 0));
    // A NaN block alone is in torch's scalar tail: its NaN maximum is positive, rounds to Inf:
    // as above. Sixteen blocks fill a vector: every bit set, rounds to 0: code 0 (2^-127), and
    // 1.0 / 2^-127 saturates to 6 (code 7).
    let one = q(mx, &block(32, &[f32::NAN, 1.0]), None);
    assert_eq!((codes(&one.scales), one.elements[1]), (vec![0x7F], 0));
    let x: Vec<f32> = (0..16).flat_map(|_| block(32, &[f32::NAN, 1.0])).collect();
    let sixteen = blocks::quantize(&x, &[16, 32], &Scheme::parse(mx).unwrap(), -1, None).unwrap();
    assert_eq!((codes(&sixteen.scales), sixteen.elements[1]), (vec![0; 16], 7));
    // Decoding, a stored 0xFF is 2.0 ** 128 in bfloat16 (decompress_mx_scale), +Inf, not E8M0's
    // NaN: 1.0 -> +Inf, -0.5 -> -Inf, 0 -> 0 * Inf = NaN (compressed-tensors 0.20.0 gives the same).
    let mut codes_in = vec![0u8; 32];
    codes_in[..3].copy_from_slice(&[2, 9, 0]);
    let scheme = Scheme::parse(mx).unwrap();
    let d = blocks::from_arrays(codes_in, &[32], Scales::Codes(vec![0xFF]), &scheme, -1, None)
        .unwrap()
        .dequantize()
        .unwrap();
    assert_eq!((d[0], d[1]), (f32::INFINITY, f32::NEG_INFINITY));
    assert!(d[2].is_nan());
}

#[test]
fn ggml_q8_0_ties_away_and_nan_rule() {
    // amax 127 -> d = 1 (float16 0x3C00), 1/d = 1: roundf ties away: 1.5 -> 2, 0.5 -> 1,
    // -0.5 -> -1 (0xFF), 2.5 -> 3. The NaN at index 1: ggml's MAX(m, |x|) takes the NaN and the
    // next element replaces it, so amax is still 127; the NaN's own code is 0 here.
    let r = q("ggml:q8_0", &block(32, &[1.5, f32::NAN, 127.0, 0.5, -0.5, 2.5]), None);
    assert_eq!(r.scales, Scales::Float16(vec![0x3C00]));
    assert_eq!(&r.elements[..6], &[2, 0, 127, 1, 0xFF, 3]);
    // A NaN in last place makes amax NaN: d = NaN (float16 0x7E00), every element 0.
    let mut x = block(32, &[1.0]);
    x[31] = f32::NAN;
    let r = q("ggml:q8_0", &x, None);
    assert_eq!(r.scales, Scales::Float16(vec![0x7E00]));
    assert!(r.elements.iter().all(|&c| c == 0));
}

#[test]
fn ggml_q8_0_wraps_where_a_nan_hid_the_maximum() {
    // [200, NaN, 100, 0, ...]: ggml's MAX(m, |x|) takes 200, then the NaN, then 100 replaces the
    // NaN: amax = 100, d = 100 / 127 (float16 0x3A4D), 1/d = 1.27; 200 * 1.27 = 254 (roundf), and
    // (int8_t)254 on x86-64 (cvttss2si, the low byte) is -2 (0xFE); the NaN's conversion is the
    // integer indefinite 0x80000000, low byte 0. Observed from ggml 0.10.1's C (ggml-py): bytes
    // 4d 3a fe 00 7f.
    let r = q("ggml:q8_0", &block(32, &[200.0, f32::NAN, 100.0]), None);
    assert_eq!(r.scales, Scales::Float16(vec![0x3A4D]));
    assert_eq!(&r.elements[..3], &[0xFE, 0x00, 0x7F]);
    // gguf-py's port: numpy's max is NaN, d = NaN (0x7E00), 1/d NaN, every element 0.
    let r = q("gguf-py:q8_0", &block(32, &[200.0, f32::NAN, 100.0]), None);
    assert_eq!(r.scales, Scales::Float16(vec![0x7E00]));
    assert!(r.elements.iter().all(|&c| c == 0));
}

#[test]
fn ggml_float16_nan_drops_its_payload() {
    // A NaN last in a Q8_0 block makes amax |NaN| (fabsf keeps the payload: 0x7FA5A5A5) and
    // d = NaN / 127 (quieted: 0x7FE5A5A5). ggml's ggml_compute_fp32_to_fp16 writes every NaN as
    // 0x7E00 with its sign (observed live: 00 7e); numpy's astype(float16), gguf-py's, keeps the
    // top payload bits: 0x7C00 | 0x3E5A5A5 >> 13 = 0x7F2D.
    let mut x = block(32, &[1.0]);
    x[31] = f32::from_bits(0xFFA5_A5A5);
    assert_eq!(q("ggml:q8_0", &x, None).scales, Scales::Float16(vec![0x7E00]));
    assert_eq!(q("gguf-py:q8_0", &x, None).scales, Scales::Float16(vec![0x7F2D]));
}

#[test]
fn ggml_q4_0_signed_max_and_negative_zero() {
    // The signed max 8.0 -> d = 8 / -8 = -1 (float16 0xBC00), 1/d = -1; code = trunc(x * -1 + 8.5):
    // 8 -> 0.5 -> 0; 0.5 -> 8; -0.5 -> 9; -1.5 -> 10; 6.5 -> 2; 7.5 -> 1.
    let r = q("ggml:q4_0", &block(32, &[8.0, 0.5, -0.5, -1.5, 6.5, 7.5]), None);
    assert_eq!(r.scales, Scales::Float16(vec![0xBC00]));
    assert_eq!(&r.elements[..6], &[0, 8, 9, 10, 2, 1]);
    // All -0.0 (ggml's C rule; gguf's port stores +0): no -0.0 beats the +0 start, so d = +0 / -8
    // = -0.0 (0x8000), 1/d is taken as 0, codes trunc(8.5) = 8, decoding to 8 - 8 = 0 times -0.
    let r = q("ggml:q4_0", &[-0.0; 32], None);
    assert_eq!(r.scales, Scales::Float16(vec![0x8000]));
    assert!(r.elements.iter().all(|&c| c == 8));
    assert!(r.dequantize().unwrap().iter().all(|v| v.to_bits() == 0x8000_0000));
    // gguf-py's port: argmax(|x|) of all zeros is index 0, max = -0.0, d = -0.0 / -8 = +0 (0x0000),
    // codes 8, decoding to +0.
    let r = q("gguf-py:q4_0", &[-0.0; 32], None);
    assert_eq!(r.scales, Scales::Float16(vec![0x0000]));
    assert!(r.elements.iter().all(|&c| c == 8));
    assert!(r.dequantize().unwrap().iter().all(|v| v.to_bits() == 0));
    // A NaN: C skips it for the maximum (d from 2.0: 2 / -8 = -0.25, 0xB400) and its code is
    // (int8_t)NaN = 0 (the indefinite's low byte); numpy's argmax returns the NaN: d = NaN / -8 =
    // NaN (0x7E00), every code 0.
    let x = block(32, &[2.0, f32::NAN]);
    let r = q("ggml:q4_0", &x, None);
    assert_eq!(r.scales, Scales::Float16(vec![0xB400]));
    assert_eq!(&r.elements[..3], &[0, 0, 8]);
    let r = q("gguf-py:q4_0", &x, None);
    assert_eq!(r.scales, Scales::Float16(vec![0x7E00]));
    assert!(r.elements.iter().all(|&c| c == 0));
}

#[test]
fn ggml_contract_fma_is_a_build_that_fuses() {
    // Q4_0 [7, 3.9375, 0 ...]: d = 7 / -8 = -0.875 (float16 0xBB00), id = 1 / d = -1.14285719
    // (float32 0xBF924925, above 8/7 in magnitude). 3.9375 * id = -4.50000018 exactly: rounded
    // first it is -4.5, + 8.5 = 4 (code 4); fused, -4.50000018 + 8.5 = 3.99999982 rounds to
    // 3.99999976 and truncates to 3. Observed from ggml-quants.c compiled by gcc 12.2: -O2 gives
    // bytes 00 bb 80 84, -O3 -march=native 00 bb 80 83.
    let x = block(32, &[7.0, 3.9375]);
    assert_eq!(q("ggml:q4_0", &x, None).elements[..2], [0, 4]);
    let fused = q("ggml:q4_0,contract=fma", &x, None);
    assert_eq!(fused.scales, Scales::Float16(vec![0xBB00]));
    assert_eq!(fused.elements[..2], [0, 3]);
    // MXFP4 [f32::MAX, -f32::MAX, 0 ...]: e = 0xFD (log2f rounds up to 128), d = 2^125; 8 * d =
    // 2^128 overflows: unfused its error is infinite and 6 (index 5, -6: 13) wins; fused, 8 * d - x
    // is exact and small, so index 6 (-8: 14). Observed: -O2 fd 05 0d, -O2 -march=native fd 06 0e.
    let x = block(32, &[f32::MAX, -f32::MAX]);
    assert_eq!(q("ggml:mxfp4", &x, None).elements[..2], [5, 13]);
    let fused = q("ggml:mxfp4,contract=fma", &x, None);
    assert_eq!(codes(&fused.scales), [0xFD]);
    assert_eq!(fused.elements[..2], [6, 14]);
    // Q8_0 and NVFP4 have no fused step; the port has no build option.
    for name in
        ["ggml:q8_0,contract=fma", "ggml:nvfp4,contract=fma", "gguf-py:q4_0,contract=fma", "ggml:q4_0,contract=on"]
    {
        assert!(Scheme::parse(name).is_err(), "{name}");
    }
}

#[test]
fn ggml_mxfp4_first_index_on_ties() {
    // amax 6: e = floor(log2 6) - 2 + 127 = 127, d = 2^(127 - 128) = 0.5; the values are kvalues
    // (0, 1, 2, 3, 4, 6, 8, 12) * 0.5. Ties go to the first index: 0.75 -> 0.5 (1), 2.5 -> 2 (4),
    // 5 -> 4 (6), -0.25 -> +0 (index 0 before -0.5's 9), -0.0 -> 0; a NaN is skipped for amax and
    // gets index 0 (no error is below the first).
    let r = q("ggml:mxfp4", &block(32, &[6.0, 0.75, 2.5, 5.0, -0.25, -0.0, f32::NAN]), None);
    assert_eq!(codes(&r.scales), [127]);
    assert_eq!(&r.elements[..7], &[7, 1, 4, 6, 0, 0, 0]);
    // The bytes: e, then byte j = element j | element j + 16 << 4.
    let bytes = r.to_bytes().unwrap();
    assert_eq!(bytes.len(), 17);
    assert_eq!(&bytes[..5], &[127, 0x07, 0x01, 0x04, 0x06]);
}

#[test]
fn ggml_nvfp4_own_ue4m3() {
    // amax / 6 = 1.0625, halfway between 1.0 and 1.125: ggml rounds ties away -> 0x39 (RNE would
    // give 0x38). amax / 6 = 300: ggml gives 448 (0x7E) to every value from 256 up (a cast: 0x79).
    let mut x = vec![0.0f32; 64];
    x[0] = 6.375;
    x[16] = 1800.0;
    let r = q("ggml:nvfp4", &x, None);
    assert_eq!(codes(&r.scales), [0x39, 0x7E, 0x00, 0x00]);
    // d = 1.125 / 2 = 0.5625; 6.375 lies between 8 * d = 4.5 and 12 * d = 6.75: nearer 6.75 (7).
    // 1800 under d = 224: 8 * 224 = 1792 (6).
    assert_eq!((r.elements[0], r.elements[16]), (7, 6));
    let bytes = r.to_bytes().unwrap();
    assert_eq!(bytes.len(), 36);
    // 4 scale bytes, then sub-block 0 in bytes 4..12 (element 0 low nibble), sub-block 1 in 12..20.
    assert_eq!((bytes[..4].to_vec(), bytes[4], bytes[12]), (vec![0x39, 0x7E, 0, 0], 0x07, 0x06));
    assert_eq!(blocks::from_bytes(&bytes, &r.scheme, &[64], -1).unwrap(), r);
}

#[test]
fn deepseek_zero_tile_and_ue8m0() {
    // amax = max(0, 1e-4) = 1e-4, s = 1e-4 / 448 in float32; ue8m0: 2^ceil(log2(2.23e-7)) = 2^-22.
    let r = q("deepseek:fp8,tile=1x128", &block(128, &[]), None);
    assert_eq!(r.scales, Scales::Float32(vec![1e-4f32 / 448.0]));
    let r = q("deepseek:fp8,tile=1x128,scale_fmt=ue8m0", &block(128, &[]), None);
    assert_eq!(r.scales, Scales::Float32(vec![2f32.powi(-22)]));
    // 896 in a tile: s = 2, 896 / 2 = 448 (0x7E), -1 / 2 = -0.5 (0xB0).
    let r = q("deepseek:fp8,tile=1x128", &block(128, &[896.0, -1.0]), None);
    assert_eq!((r.elements[0], r.elements[1]), (0x7E, 0xB0));
}

#[test]
fn fp8_negative_zero_and_zero_scale() {
    // compressed-tensors adds its zero point: -0.0 / s + 0 = +0 (0x00); an all-zero tensor's scale
    // 0 / 448 = 0 becomes float32's eps 2^-23.
    let r = q("fp8:tensor", &[-0.0, 0.0], None);
    assert_eq!(r.scales, Scales::Float32(vec![f32::EPSILON]));
    assert_eq!(r.elements, [0, 0]);
    // 448 * 3: s = 3, 1.5 / 3 = 0.5 (0x30).
    let r = q("fp8:channel", &[1344.0, 1.5], None);
    assert_eq!((r.scales.clone(), r.elements.clone()), (Scales::Float32(vec![3.0]), vec![0x7E, 0x30]));
}

#[test]
fn ocp_is_quant_mx() {
    // quant::mx's doc example: amax 3 -> X = 2^(1 - 2) = 1/2 (0x7E); 2, -1, 6, 0.2 -> 0x4, 0xA,
    // 0x7, 0x0.
    let r = q("ocp:mxfp4,block=4", &[1.0, -0.5, 3.0, 0.1], None);
    assert_eq!((codes(&r.scales), r.elements.clone()), (vec![0x7E], vec![0x4, 0xA, 0x7, 0x0]));
    assert_eq!(r.dequantize().unwrap(), [1.0, -0.5, 3.0, 0.0]);
    // Elements packed as ONNX packs float4, then the scale.
    assert_eq!(r.to_bytes().unwrap(), [0xA4, 0x07, 0x7E]);
}

#[test]
fn refusals_name_the_rule() {
    let err = blocks::quantize(&[1.0f32; 80], &[80], &Scheme::parse("torchao:mxfp4,scale=floor").unwrap(), -1, None)
        .unwrap_err()
        .to_string();
    assert!(err.contains("divisible by block_size 32"), "{err}");
    let err = blocks::quantize(&[1.0f32; 40], &[40], &Scheme::parse("ggml:q8_0").unwrap(), -1, None).unwrap_err();
    assert!(err.to_string().contains("multiple of 32"), "{err}");
    let bf = [half::bf16::ONE; 32];
    assert!(blocks::quantize(&bf, &[32], &Scheme::parse("ggml:q8_0").unwrap(), -1, None).is_err());
    assert!(blocks::quantize(&[1.0f32; 32], &[32], &Scheme::parse("ggml:q8_0").unwrap(), -1, Some(1.0)).is_err());
    for bad in
        ["torchao:mxfp4,scale=up", "ggml:q9_9", "nope", "fp8:group=0", "ocp:mxfp4,tile=2", "deepseek:fp8,tile=2x2"]
    {
        assert!(Scheme::parse(bad).is_err(), "{bad}");
    }
    // A short last block of its own where the implementation allows one (OCP, DeepSeek's tiles).
    assert!(blocks::quantize(&[1.0f32; 40], &[40], &Scheme::parse("ocp:mxfp4").unwrap(), -1, None).is_ok());
}

#[test]
fn bytes_round_trip_every_scheme() {
    let x: Vec<f32> = (0..128 * 256).map(|i| ((i * 7919 % 1000) as f32 - 500.0) * 0.37).collect();
    let mut compared = 0;
    for scheme in [
        "ocp:mxfp8e4m3",
        "ocp:mxint8",
        "torchao:mxfp6e3m2,scale=rceil",
        "torchao:mxfp4,scale=even",
        "torchao:nvfp4,global=amax",
        "modelopt:nvfp4",
        "compressed-tensors:nvfp4",
        "ggml:q8_0",
        "ggml:q4_0",
        "ggml:mxfp4",
        "ggml:nvfp4",
        "deepseek:fp8",
        "fp8:tensor",
        "fp8:channel",
        "fp8:group=128",
        "fp8:block=128x128",
    ] {
        let s = Scheme::parse(scheme).unwrap();
        let r = blocks::quantize(&x, &[128, 256], &s, -1, None).unwrap();
        let bytes = r.to_bytes().unwrap();
        let back = blocks::from_bytes(&bytes, &s, &[128, 256], -1).unwrap();
        assert_eq!(back, r, "{scheme}");
        let again =
            blocks::from_arrays(r.elements.clone(), &[128, 256], r.scales.clone(), &s, -1, r.global_scale).unwrap();
        assert_eq!(again.dequantize().unwrap().len(), x.len());
        assert!(blocks::from_bytes(&bytes[1..], &s, &[128, 256], -1).is_err(), "{scheme}: a short buffer");
        compared += 1;
    }
    assert_eq!(compared, 16);
}

#[test]
fn blocked_axis_other_than_last() {
    // A [32, 2] tensor blocked along axis 0 is its transpose blocked along the last axis.
    let x: Vec<f32> = (0..64).map(|i| (i as f32 - 20.0) * 0.3).collect();
    let t: Vec<f32> = (0..64).map(|i| x[(i % 32) * 2 + i / 32]).collect();
    let s = Scheme::parse("torchao:mxfp4,scale=floor").unwrap();
    let along0 = blocks::quantize(&x, &[32, 2], &s, 0, None).unwrap();
    let last = blocks::quantize(&t, &[2, 32], &s, -1, None).unwrap();
    assert_eq!(along0.scales, last.scales);
    assert_eq!(along0.scales_shape().unwrap(), [1, 2]);
    let moved: Vec<u8> = (0..64).map(|i| last.elements[(i % 2) * 32 + i / 2]).collect();
    assert_eq!(along0.elements, moved);
    let back = along0.dequantize().unwrap();
    let back_last = last.dequantize().unwrap();
    assert!((0..64).all(|i| back[i].to_bits() == back_last[(i % 2) * 32 + i / 2].to_bits()));
}

#[test]
fn blocked_axis_other_than_last_with_several_blocks_along_it() {
    // A [64, 3] tensor blocked along axis 0 (two or four blocks per column, each column's
    // values of another magnitude, and each half's) is its [3, 64] transpose blocked along the
    // last axis, its scales the transpose of the other's: the dequantize moves each block's
    // factor to the blocked-axis-last order and back.
    let (rows, cols) = (64, 3);
    let value = |r: usize, c: usize| ((r * cols + c) as f32 - 90.0) * 0.37 * (1 << (2 * c + r / 32)) as f32;
    let x: Vec<f32> = (0..rows * cols).map(|i| value(i / cols, i % cols)).collect();
    let t: Vec<f32> = (0..rows * cols).map(|i| value(i % rows, i / rows)).collect();
    for name in ["torchao:mxfp8e4m3,scale=floor", "torchao:nvfp4", "fp8:group=32"] {
        let s = Scheme::parse(name).unwrap();
        let along0 = blocks::quantize(&x, &[rows, cols], &s, 0, None).unwrap();
        let last = blocks::quantize(&t, &[cols, rows], &s, -1, None).unwrap();
        let (shape0, shape_last) = (along0.scales_shape().unwrap(), last.scales_shape().unwrap());
        assert_eq!(shape0, [shape_last[1], shape_last[0]], "{name}");
        assert!(shape0[0] >= 2, "{name}: several blocks along the axis");
        let moved: Vec<u8> = (0..rows * cols).map(|i| last.elements[(i % cols) * rows + i / cols]).collect();
        assert_eq!(along0.elements, moved, "{name}");
        let back = along0.dequantize().unwrap();
        let back_last = last.dequantize().unwrap();
        for (i, v) in back.iter().enumerate() {
            let j = (i % cols) * rows + i / cols;
            assert_eq!(v.to_bits(), back_last[j].to_bits(), "{name}: element {i}");
        }
        // Many distinct values: a reorder of the factors would change them.
        let mut distinct: Vec<u32> =
            back.iter().zip(&along0.elements).filter(|(_, &c)| c != 0).map(|(v, _)| v.to_bits()).collect();
        distinct.sort_unstable();
        distinct.dedup();
        assert!(distinct.len() > 6, "{name}");
    }
}

#[test]
fn recipe_table_is_current() {
    // tables/recipes.md is generated from the rows (`lowbit tables --out tables`, or this test with
    // BLOCKS_WRITE_TABLE=1); tests/tables.rs checks the whole folder the same way.
    let path = format!("{}/tables/recipes.md", env!("CARGO_MANIFEST_DIR"));
    let want = blocks::recipes_markdown();
    if std::env::var_os("BLOCKS_WRITE_TABLE").is_some() {
        std::fs::write(&path, &want).unwrap();
    }
    assert_eq!(std::fs::read_to_string(&path).unwrap(), want);
    // One row per recipe: OCP, 20 torchao MX, 3 NVFP4, compressed-tensors MXFP4, 4 ggml (q4_0 and
    // mxfp4 with their contract option), DeepSeek, FP8, 3 gguf-py.
    assert_eq!(blocks::recipes().len(), 34);
}

#[test]
fn raw_float32_is_read_in_place_or_copied_alike() {
    // ggml Q8_0 of one block holding -15..=15 and 127: d = 127 / 127 = 1 (float16 0x3C00), each
    // element its own code. The raw bytes once where a float32 starts (a float32 vector's own
    // storage: read in place on a little-endian machine) and once one byte on (copied).
    let x: Vec<f32> = (-15..=15).map(|i| i as f32).chain([127.0]).collect();
    let scheme = Scheme::parse("ggml:q8_0").unwrap();
    let aligned = zerocopy::IntoBytes::as_bytes(x.as_slice());
    let mut shifted = vec![0u8; aligned.len() + 1];
    shifted[1..].copy_from_slice(aligned);
    let want: Vec<u8> = x.iter().map(|&v| v as i8 as u8).collect();
    for raw in [aligned, &shifted[1..]] {
        let r = blocks::quantize_raw(lowbit::DType::Float, raw, &[32], &scheme, -1, None).unwrap();
        assert_eq!(r.scales, Scales::Float16(vec![0x3C00]));
        assert_eq!(r.elements, want);
    }
}

/// torchao's E5M2 elements go through torch's cast: a NaN is 0x7F with its sign (the spec cast
/// writes 0x7E), and torch decodes it to float32 0x7FE00000 (its fraction bits widened, quiet).
#[test]
fn torchao_e5m2_nan_is_torchs_code() {
    let mut x = block(32, &[1.0, f32::NAN, -f32::NAN]);
    x[3] = 2.0;
    let got = q("torchao:mxfp8e5m2,scale=floor", &x, None);
    assert_eq!(&got.elements[1..3], &[0x7F, 0xFF]);
    // The block's maximum is NaN, so is its scale (E8M0 0xFF); under a scale of 1 (code 127)
    // the codes decode to torch's 0x7FE00000 with their sign.
    let scheme = Scheme::parse("torchao:mxfp8e5m2,scale=floor").unwrap();
    let mut codes = vec![0x3Cu8; 32];
    codes[1] = 0x7F;
    codes[2] = 0xFF;
    let back =
        blocks::from_arrays(codes, &[32], Scales::Codes(vec![127]), &scheme, -1, None).unwrap().dequantize().unwrap();
    assert_eq!((back[0], back[1].to_bits(), back[2].to_bits()), (1.0, 0x7FE0_0000, 0xFFE0_0000));
}

/// A NaN element times a NaN scale keeps the scale's NaN (torch's float32 mul keeps its second
/// operand's NaN): torchao MX decodes E8M0 0xFF as float('nan'), 0x7FC00000.
#[test]
fn nan_element_times_nan_scale_keeps_the_scales_nan() {
    let scheme = Scheme::parse("torchao:mxfp8e4m3,scale=floor").unwrap();
    let d = blocks::from_arrays(vec![0xFF; 32], &[32], Scales::Codes(vec![0xFF]), &scheme, -1, None).unwrap();
    let back = d.dequantize().unwrap();
    // The element alone would be torch's 0xFFF00000; the scale's NaN wins.
    assert!(back.iter().all(|v| v.to_bits() == 0x7FC0_0000), "{:#x}", back[0].to_bits());
}

/// NVFP4 with a NaN per-tensor scale and NaN block scales (E4M3 0x7F, torch's 0x7FF00000): the
/// factor is the per-tensor scale's NaN but for the last (r - 1) % 4 of N blocks, r = N % 16,
/// which keep the block scale's (torch's vector-times-0-dim multiply, observed).
#[test]
fn nvfp4_nan_global_times_nan_scale_by_place() {
    let global = f32::from_bits(0x7FC0_0123);
    for (scheme, blocks_n, tail) in [("torchao:nvfp4", 8, 3), ("modelopt:nvfp4", 16, 0), ("torchao:nvfp4", 7, 2)] {
        let s = Scheme::parse(scheme).unwrap();
        // Element code 2 is 1.0.
        let d = blocks::from_arrays(
            vec![2; 16 * blocks_n],
            &[16 * blocks_n],
            Scales::Codes(vec![0x7F; blocks_n]),
            &s,
            -1,
            Some(global),
        )
        .unwrap();
        let back = d.dequantize().unwrap();
        for (b, chunk) in back.chunks(16).enumerate() {
            let want = if b >= blocks_n - tail { 0x7FF0_0000 } else { 0x7FC0_0123 };
            assert!(
                chunk.iter().all(|v| v.to_bits() == want),
                "{scheme} N={blocks_n} block {b}: {:#x}",
                chunk[0].to_bits()
            );
        }
    }
}

/// compressed-tensors FP8 with bfloat16 scales dequantizes in bfloat16: torch writes a NaN
/// product as 0xFFFF in its vectorized loop (32 values a step) and 0x7FC0 in the scalar tail of
/// each row's loop; with NaN codes it casts the code through bfloat16 first (0x7FC0: positive).
#[test]
fn fp8_bfloat16_nan_products_by_place_in_torchs_loop() {
    let s = Scheme::parse("fp8:channel").unwrap();
    // Two rows of 40 NaN codes (negative and positive), one bfloat16 scale of 1.0 each.
    let codes: Vec<u8> = (0..80).map(|i| if i % 2 == 0 { 0xFF } else { 0x7F }).collect();
    let d = blocks::from_arrays(codes, &[2, 40], Scales::Bfloat16(vec![0x3F80, 0x3F80]), &s, -1, None).unwrap();
    let back = d.dequantize().unwrap();
    for (i, v) in back.iter().enumerate() {
        let want = if i % 40 < 32 { 0xFFFF_0000 } else { 0x7FC0_0000 };
        assert_eq!(v.to_bits(), want, "element {i}");
    }
}

/// compressed-tensors' FP8 quantize of bfloat16 input casts each code to bfloat16 and back: a
/// NaN element is 0x7F whatever its sign (torch's float8 -> bfloat16 NaN is 0x7FC0).
#[test]
fn fp8_bfloat16_input_nan_codes_are_positive() {
    let s = Scheme::parse("fp8:channel").unwrap();
    let mut x: Vec<half::bf16> = (0..16).map(|i| half::bf16::from_f32(i as f32 - 8.0)).collect();
    x[3] = half::bf16::from_bits(0xFFC1);
    x[4] = half::bf16::from_bits(0x7FC1);
    let got = blocks::quantize(&x, &[1, 16], &s, -1, None).unwrap();
    assert!(got.elements.iter().all(|&c| c == 0x7F), "{:x?}", got.elements);
}

/// `fp8:tensor` of an empty tensor has no maximum for its one scale: refused by the library call
/// itself (compressed-tensors' torch.aminmax raises too); per-channel scales of no rows are empty.
#[test]
fn empty_tensor_under_one_scale_is_refused() {
    let tensor = Scheme::parse("fp8:tensor").unwrap();
    let e = blocks::quantize::<f32>(&[], &[0, 4], &tensor, -1, None).unwrap_err().to_string();
    assert!(e.contains("has no elements"), "{e}");
    let channel = Scheme::parse("fp8:channel").unwrap();
    let q = blocks::quantize::<f32>(&[], &[0, 4], &channel, -1, None).unwrap();
    assert!(q.elements.is_empty());
}

#[test]
fn fp8_bytes_read_with_the_scale_dtype_said() {
    // fp8:channel of a float16 row [1.0, -2.0]: scale 2/448 in float16; the bytes hold two
    // E4M3 codes and one two-byte scale, which read as float16 when said.
    let x = [half::f16::from_f32(1.0), half::f16::from_f32(-2.0)];
    let scheme = Scheme::parse("fp8:channel").unwrap();
    let q = blocks::quantize(&x, &[1, 2], &scheme, -1, None).unwrap();
    let Scales::Float16(halves) = &q.scales else { panic!("float16 scales: {:?}", q.scales) };
    let bytes = q.to_bytes().unwrap();
    assert_eq!(bytes.len(), 4);
    let guessed = blocks::from_bytes(&bytes, &scheme, &[1, 2], -1).unwrap();
    assert_eq!(guessed.scales, Scales::Bfloat16(halves.clone()));
    let said = blocks::from_bytes_with_scale_dtype(&bytes, &scheme, &[1, 2], -1, lowbit::DType::Float16).unwrap();
    assert_eq!(said, q);
    // Four-byte scales are float32 only; a scheme with its own scale format takes no dtype.
    let err = blocks::from_bytes_with_scale_dtype(&bytes, &scheme, &[1, 2], -1, lowbit::DType::Float).unwrap_err();
    assert!(err.to_string().contains("1 scales of 2 bytes each, not FLOAT"), "{err}");
    let mx = Scheme::parse("ocp:mxfp8e4m3").unwrap();
    let q = blocks::quantize(&[1.0f32; 32], &[32], &mx, -1, None).unwrap();
    let err = blocks::from_bytes_with_scale_dtype(&q.to_bytes().unwrap(), &mx, &[32], -1, lowbit::DType::Float16)
        .unwrap_err();
    assert!(err.to_string().contains("not stored in the input's dtype"), "{err}");
}
