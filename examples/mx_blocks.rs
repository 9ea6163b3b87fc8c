//! OCP Microscaling (MX v1.0): a vector quantized to MXFP8 (E4M3 elements) and MXFP4 (E2M1
//! elements) in blocks sharing one power-of-two scale stored as E8M0, dequantized back, with each
//! block's scale and largest error printed.
//!
//! ```sh
//! cargo run --example mx_blocks                # 64 sample values, blocks of 32
//! cargo run --example mx_blocks -- 16          # blocks of 16
//! ```

use lowbit::quant::mx::{self, MxFormat, MxOptions};
use lowbit::Tensor;

/// One block's outcome.
#[derive(Debug, PartialEq)]
struct Block {
    /// The E8M0 code of the scale: the scale is 2^(code - 127).
    scale_code: u64,
    /// The element codes.
    codes: Vec<u64>,
    dequantized: Vec<f32>,
    max_abs_error: f32,
}

/// Quantizes `values` to `format` in blocks of `block_size` (the last one may be shorter) and back.
fn quantize_blocks(values: &[f32], format: MxFormat, block_size: usize) -> lowbit::Result<Vec<Block>> {
    let opts = MxOptions { block_size, ..MxOptions::new(format) };
    let quantized = mx::quantize(&Tensor::from_f32(values), &opts)?;
    let back = mx::dequantize(&quantized.elements, &quantized.scales, &opts)?.to_f32_vec()?;
    let (scales, codes) = (quantized.scales.codes()?, quantized.elements.codes()?);
    Ok(scales
        .iter()
        .enumerate()
        .map(|(b, &scale_code)| {
            let range = b * block_size..((b + 1) * block_size).min(values.len());
            let max_abs_error =
                values[range.clone()].iter().zip(&back[range.clone()]).fold(0.0f32, |m, (v, d)| m.max((v - d).abs()));
            Block { scale_code, codes: codes[range.clone()].to_vec(), dequantized: back[range].to_vec(), max_abs_error }
        })
        .collect())
}

/// 64 sample values: a sine wave whose amplitude grows by 4x every 16 values, so blocks of
/// different sizes get different scales.
fn sample_values() -> Vec<f32> {
    (0..64).map(|i| (i as f32 * 0.7).sin() * 4f32.powi(i / 16) * 0.3).collect()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let block_size = match std::env::args().nth(1) {
        Some(text) => text.parse().map_err(|e| format!("block size {text:?}: {e}"))?,
        None => 32,
    };
    let values = sample_values();
    for format in [MxFormat::Fp8E4M3, MxFormat::Fp4E2M1] {
        println!("{format} (emax {}), {} values in blocks of {block_size}:", format.emax()?, values.len());
        for (b, block) in quantize_blocks(&values, format, block_size)?.iter().enumerate() {
            let exponent = block.scale_code as i32 - 127;
            println!(
                "  block {b}: scale code 0x{:02X} = 2^{exponent}, max abs error {:e}",
                block.scale_code, block.max_abs_error
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    // Two blocks of 4. Block A's amax is 3.0, floor(log2 3) = 1; block B's is 100, floor(log2 100)
    // = 6. The scale is X = 2^(floor(log2 amax) - emax), emax = 8 for E4M3 (448 = 1.75 * 2^8) and
    // 2 for E2M1 (6 = 1.5 * 2^2); its E8M0 code is the exponent + 127.
    const VALUES: [f32; 8] = [1.0, -0.5, 3.0, 0.1, 100.0, -7.0, 0.0, 0.01];

    #[test]
    fn mxfp8_by_hand() {
        let blocks = quantize_blocks(&VALUES, MxFormat::Fp8E4M3, 4).unwrap();
        // A: X = 2^(1-8) = 2^-7, code 120 = 0x78; V / X = V * 128 = 128, -64, 384, 12.8.
        //    12.8 lies in [8, 16), step 1: rounds to 13 -> 13/128 = 0.1015625.
        //    codes: 128 = 2^7 -> 0 1110 000 = 0x70; -64 = -2^6 -> 1 1101 000 = 0xE8;
        //    384 = 1.5 * 2^8 -> 0 1111 100 = 0x7C; 13 = 1.625 * 2^3 -> 0 1010 101 = 0x55.
        assert_eq!(blocks[0].scale_code, 0x78);
        assert_eq!(blocks[0].codes, [0x70, 0xE8, 0x7C, 0x55]);
        assert_eq!(blocks[0].dequantized, [1.0, -0.5, 3.0, 0.1015625]);
        // |0.1015625 - 0.1| = 0.0015625 (0.1 as float32 is 0.100000001490116...).
        assert!((blocks[0].max_abs_error - 0.0015625).abs() < 1e-8);
        // B: X = 2^(6-8) = 1/4, code 125 = 0x7D; V / X = 400, -28, 0, 0.04.
        //    400 lies halfway between 384 (mantissa 100) and 416 (101): ties to even -> 384 -> 96.
        //    -28 = -1.75 * 2^4 is exact: 1 1011 110 = 0xDE. 0 -> 0x00.
        //    0.04 lies in [2^-5, 2^-4), step 2^-8: 0.04 * 256 = 10.24 -> 10/256 = 0.0390625
        //    = 1.25 * 2^-5 -> 0 0010 010 = 0x12; back 0.0390625 / 4 = 0.009765625.
        assert_eq!(blocks[1].scale_code, 0x7D);
        assert_eq!(blocks[1].codes, [0x7C, 0xDE, 0x00, 0x12]);
        assert_eq!(blocks[1].dequantized, [96.0, -7.0, 0.0, 0.009765625]);
        assert_eq!(blocks[1].max_abs_error, 4.0); // 100 - 96
    }

    #[test]
    fn mxfp4_by_hand() {
        // E2M1's values: 0, 0.5, 1, 1.5, 2, 3, 4, 6 (codes 0 to 7; sign bit 0x8).
        let blocks = quantize_blocks(&VALUES, MxFormat::Fp4E2M1, 4).unwrap();
        // A: X = 2^(1-2) = 1/2, code 126 = 0x7E; V / X = 2, -1, 6, 0.2; 0.2 < 0.25 -> 0.
        assert_eq!(blocks[0].scale_code, 0x7E);
        assert_eq!(blocks[0].codes, [0x4, 0xA, 0x7, 0x0]);
        assert_eq!(blocks[0].dequantized, [1.0, -0.5, 3.0, 0.0]);
        assert_eq!(blocks[0].max_abs_error, 0.1);
        // B: X = 2^(6-2) = 16, code 131 = 0x83; V / X = 6.25, -0.4375, 0, 0.000625.
        //    6.25 is past 6, E2M1's largest: clamps to 6 -> 96. -0.4375 is nearer -0.5 than
        //    0 -> code 0x9 -> -8. 0.000625 -> 0.
        assert_eq!(blocks[1].scale_code, 0x83);
        assert_eq!(blocks[1].codes, [0x7, 0x9, 0x0, 0x0]);
        assert_eq!(blocks[1].dequantized, [96.0, -8.0, 0.0, 0.0]);
        assert_eq!(blocks[1].max_abs_error, 4.0);
    }

    #[test]
    fn a_short_last_block_and_the_sample() {
        // 64 values in blocks of 24: 24 + 24 + 16.
        let blocks = quantize_blocks(&sample_values(), MxFormat::Fp8E4M3, 24).unwrap();
        assert_eq!(blocks.iter().map(|b| b.codes.len()).collect::<Vec<_>>(), [24, 24, 16]);
        // Within a block, E4M3's error is at most half a step of the value's binade, 2^-4 of
        // its magnitude, or half the subnormal step 2^-10 * X.
        let values = sample_values();
        for (b, block) in blocks.iter().enumerate() {
            let x = 2f32.powi(block.scale_code as i32 - 127);
            for (v, d) in values[b * 24..].iter().zip(&block.dequantized) {
                assert!((v - d).abs() <= (v.abs() / 16.0).max(x / 1024.0) * 1.000_001, "{v} -> {d}");
            }
        }
    }
}
