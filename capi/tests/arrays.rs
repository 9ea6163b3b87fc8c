//! `lowbit_convert_n` against the scalar entry points: every element of an array, in the packed
//! and byte-wide layouts, gives the code and flags `lowbit_convert` gives for it (IEEE semantics),
//! or `lowbit::convert_code` (ONNX Cast through the plans); stochastic rounding uses element i's
//! seeded word.

use lowbit::verify::seeded_random;
use lowbit::{convert_code, CastOptions, DType, Profile};
use lowbit_capi::*;

mod support;
use support::format;

fn bytes(format: lowbit_format, n: usize) -> usize {
    let mut size = 0;
    // SAFETY: a writable size.
    assert_eq!(unsafe { lowbit_format_bytes(format, n, &mut size) }, LOWBIT_OK);
    size
}

fn scalar(from: lowbit_format, to: lowbit_format, bits: u64, options: &lowbit_options) -> (u64, u8) {
    let mut flags = 0;
    // SAFETY: readable options and a writable flag byte.
    let code = unsafe { lowbit_convert(from, to, bits, options, &mut flags) };
    assert_eq!(flags & LOWBIT_FLAG_ERROR, 0);
    (code, flags)
}

fn array(from: lowbit_format, to: lowbit_format, src: &[u8], n: usize, options: &lowbit_options) -> (Vec<u8>, Vec<u8>) {
    let mut dst = vec![0xA5; bytes(to, n)];
    let mut flags = vec![0xEE; n];
    assert_eq!(src.len(), bytes(from, n));
    // SAFETY: the buffers have the lengths lowbit_format_bytes gives, and do not overlap.
    let status = unsafe {
        lowbit_convert_n(from, to, src.as_ptr().cast(), dst.as_mut_ptr().cast(), n, options, flags.as_mut_ptr())
    };
    assert_eq!(status, LOWBIT_OK);
    (dst, flags)
}

#[test]
fn every_float16_code_into_packed_int4_matches_the_scalar_call() {
    let (f16, int4) = (format("float16"), format("int4"));
    let n = 1 << 16;
    let src: Vec<u8> = (0..n as u32).flat_map(|c| (c as u16).to_le_bytes()).collect();
    for round in [LOWBIT_RNE, LOWBIT_RTZ, LOWBIT_RDN] {
        for saturate in [0, 1] {
            let options = lowbit_options { round, saturate, ..lowbit_options_default() };
            let (dst, flags) = array(f16, int4, &src, n, &options);
            for code in 0..n {
                let got = u64::from(dst[code / 2] >> (4 * (code % 2)) & 0xF);
                assert_eq!((got, flags[code]), scalar(f16, int4, code as u64, &options), "code {code:#06x}");
            }
        }
    }
}

#[test]
fn described_codes_and_stochastic_words_by_index() {
    // e2m3 described: 6 bits in a byte each; float32 sources with 4 random bits per element.
    let (f32_, e2m3) = (format("float32"), format("e2m3,special=ieee"));
    let values: Vec<f32> = (0..5000).map(|i| (i as f32 - 2500.0) * 0.00317).collect();
    let src: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    let seed = 0x1234_5678_9ABC_DEF0;
    let options =
        lowbit_options { round: LOWBIT_STOCHASTIC, random_width: 4, random_bits: seed, ..lowbit_options_default() };
    let (dst, flags) = array(f32_, e2m3, &src, values.len(), &options);
    for (i, v) in values.iter().enumerate() {
        let one = lowbit_options { random_bits: seeded_random(seed, i as u64), ..options };
        assert_eq!((u64::from(dst[i]), flags[i]), scalar(f32_, e2m3, u64::from(v.to_bits()), &one), "element {i}");
    }
    // A code with a bit above the format's 6 is refused, and nothing is written.
    let mut back = vec![0u8; 4 * values.len()];
    let mut codes = dst.clone();
    codes[17] = 0x40;
    // SAFETY: lengths from lowbit_format_bytes, no overlap.
    let status = unsafe {
        lowbit_convert_n(
            e2m3,
            f32_,
            codes.as_ptr().cast(),
            back.as_mut_ptr().cast(),
            values.len(),
            &options,
            std::ptr::null_mut(),
        )
    };
    assert_eq!((status, lowbit_last_error_code()), (LOWBIT_ERR_BITS, LOWBIT_ERR_BITS));
    assert!(back.iter().all(|&b| b == 0));
}

#[test]
fn onnx_cast_runs_the_plans_with_the_library_answers() {
    let (f32_, e4m3, e8m0) = (format("float32"), format("float8e4m3fn"), format("float8e8m0"));
    // Every top-16-bit pattern of float32 with a low half that makes ties and near-ties.
    let codes: Vec<u32> = (0..1u32 << 16).map(|top| top << 16 | (top.wrapping_mul(0x9E37) & 0xFFFF)).collect();
    let src: Vec<u8> = codes.iter().flat_map(|c| c.to_le_bytes()).collect();
    for (to, dtype) in [(e4m3, DType::Float8E4M3FN), (e8m0, DType::Float8E8M0)] {
        for (profile, saturate) in [(LOWBIT_PROFILE_SPEC, 1), (LOWBIT_PROFILE_ONNXRUNTIME, 0)] {
            let options = lowbit_options { onnx_cast: 1, profile, saturate, ..lowbit_options_default() };
            let (dst, flags) = array(f32_, to, &src, codes.len(), &options);
            let cast = CastOptions {
                saturate: saturate == 1,
                profile: Profile::ALL[profile as usize],
                ..CastOptions::default()
            };
            for (i, &c) in codes.iter().enumerate() {
                let want = convert_code(DType::Float, dtype, u64::from(c), &cast).unwrap();
                assert_eq!((u64::from(dst[i]), flags[i]), (want, 0), "{c:#010x} -> {dtype}");
            }
        }
    }
}

#[test]
fn named_integers_take_one_byte_per_code() {
    // ml_dtypes' int1 (-1..0, code 1 is -1) and uint1 (0..1): one code per byte in the arrays,
    // as described formats are, each the code the scalar call gives and never wider than a bit.
    let (f32_, int1, uint1) = (format("float32"), format("int1"), format("uint1"));
    assert_eq!(bytes(int1, 10), 10);
    let values = [1.0f32, 2.0, -1.0, 0.0, 1.5];
    let src: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    let options = lowbit_options_default();
    for to in [int1, uint1] {
        let (dst, _) = array(f32_, to, &src, values.len(), &options);
        for (k, v) in values.iter().enumerate() {
            assert_eq!(u64::from(dst[k]), scalar(f32_, to, u64::from(v.to_bits()), &options).0, "{v}");
            assert!(dst[k] <= 1, "{v}: code {:#x} wider than one bit", dst[k]);
        }
    }
    // A source code wider than one bit is refused.
    let wide = [2u8];
    let mut out = [0u8; 4];
    // SAFETY: one source byte, four writable bytes, no flags.
    let status = unsafe {
        lowbit_convert_n(int1, f32_, wide.as_ptr().cast(), out.as_mut_ptr().cast(), 1, &options, std::ptr::null_mut())
    };
    assert_eq!(status, LOWBIT_ERR_BITS);
}
