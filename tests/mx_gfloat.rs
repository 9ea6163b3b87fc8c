//! `quant::mx` against gfloat 0.5.2 (Graphcore's reference implementation of the OCP MX formats),
//! from the fixtures in tests/data/mx/ that scripts/crosscheck_mx.py writes. Every block of finite
//! values must match gfloat's scale code, element codes and dequantized float32 bit for bit. Blocks
//! holding an infinity or a NaN are the known deviations (the script's docstring): gfloat clips an
//! infinite amax's scale to 2^127 (0xFE) and saturates, and writes NaN elements under a NaN scale,
//! where the MX rule gives the NaN scale (0xFF) and lowbit writes +0 elements. The `float32_log2`
//! case shows the deviation gfloat has on float32 data (its log2 in float32 doubles the scale for an
//! amax just below 2^20); the fixtures hand gfloat float64 data, with which it agrees. Dequantizing
//! gfloat's codes must also give gfloat's values and, for the float formats, what onnx's reference
//! `DequantizeLinear` (float8e8m0 scale, `block_size`) gives on the same codes.

use lowbit::quant::mx::{self, MxFormat, MxOptions};
use lowbit::Tensor;
use serde_json::Value;

fn numbers(v: &Value) -> Vec<u64> {
    v.as_array().expect("an array").iter().map(|x| x.as_u64().expect("a number")).collect()
}

#[test]
fn gfloat_fixtures() {
    let mut checked_blocks = 0;
    for format in MxFormat::ALL {
        let path = format!("{}/tests/data/mx/gfloat_{}.json", env!("CARGO_MANIFEST_DIR"), format.name());
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(doc["format"], format.name());
        for case in doc["cases"].as_array().unwrap() {
            let name = case["name"].as_str().unwrap();
            let block_size = case["block_size"].as_u64().unwrap() as usize;
            let input: Vec<f32> = numbers(&case["input_f32_bits"]).iter().map(|&b| f32::from_bits(b as u32)).collect();
            let (want_scales, want_elements, want_back) =
                (numbers(&case["scales"]), numbers(&case["elements"]), numbers(&case["dequantized_f32_bits"]));
            let opts = MxOptions { block_size, ..MxOptions::new(format) };
            let q = mx::quantize(&Tensor::from_f32(&input), &opts).unwrap();
            let (scales, elements) = (q.scales.codes().unwrap(), q.elements.codes().unwrap());
            let back = mx::dequantize(&q.elements, &q.scales, &opts).unwrap().to_f32_vec().unwrap();
            assert_eq!(scales.len(), want_scales.len(), "{format} {name}");
            for (b, block) in input.chunks(block_size).enumerate() {
                let at = b * block_size;
                let here = format!("{format} {name} block {b}: {block:?}");
                if block.iter().all(|v| v.is_finite()) {
                    assert_eq!(scales[b], want_scales[b], "{here}");
                    assert_eq!(&elements[at..at + block.len()], &want_elements[at..at + block.len()], "{here}");
                    for (j, x) in back[at..at + block.len()].iter().enumerate() {
                        assert_eq!(u64::from(x.to_bits()), want_back[at + j], "{here} element {j}");
                    }
                    checked_blocks += 1;
                    continue;
                }
                // The deviations: lowbit follows the MX rule...
                assert_eq!(scales[b], 0xFF, "{here}");
                assert!(elements[at..at + block.len()].iter().all(|&c| c == 0), "{here}");
                // +0 elements times the NaN scale: the scale's NaN (E8M0 0xFF is 0x7FC00000).
                assert!(back[at..at + block.len()].iter().all(|x| x.to_bits() == 0x7FC0_0000), "{here}");
                // ...and gfloat does what the fixture's note says.
                let gfloat_scale = if block.iter().any(|v| v.is_nan()) { 0xFF } else { 0xFE };
                assert_eq!(want_scales[b], gfloat_scale, "{here}");
                assert!(case["deviation"].is_string(), "{here}");
            }
            // Dequantizing gfloat's own codes and scales: gfloat's decode_block, and where recorded
            // onnx's reference DequantizeLinear on the same codes (the layout claim), bit for bit.
            // Their NaNs differ: onnx keeps the sign of the NaN code (0xFF -> 0xFFC00000), which
            // lowbit's spec decoding does too, while gfloat writes numpy's 0x7FC00000 for every NaN.
            let theirs = mx::dequantize(
                &Tensor::from_codes(format.element_dtype(), vec![input.len()], &want_elements).unwrap(),
                &Tensor::from_codes(lowbit::DType::Float8E8M0, vec![want_scales.len()], &want_scales).unwrap(),
                &opts,
            )
            .unwrap()
            .to_f32_vec()
            .unwrap();
            let onnx = case.get("onnx_dequantized_f32_bits").map(numbers);
            assert_eq!(onnx.is_some(), format != MxFormat::Int8, "{format} {name}");
            for (i, x) in theirs.iter().enumerate() {
                if let Some(onnx) = &onnx {
                    assert_eq!(u64::from(x.to_bits()), onnx[i], "{format} {name} element {i} against onnx");
                }
                let gfloat = want_back[i] as u32;
                if f32::from_bits(gfloat).is_nan() {
                    // gfloat's NaN, pinned; lowbit's is onnx's, compared above.
                    assert_eq!(gfloat, 0x7FC0_0000, "{format} {name} element {i}: gfloat's NaN");
                    assert!(onnx.is_some() || x.to_bits() == gfloat, "{format} {name} element {i}");
                } else {
                    assert_eq!(x.to_bits(), gfloat, "{format} {name} element {i} against gfloat");
                }
            }
            if name == "float32_log2" {
                // 2^20 * (1 - 2^-24): floor(log2) = 19, so s = 19 - emax; gfloat on float32 says 20.
                let s = 19 - format.emax().unwrap() + 127;
                assert_eq!(scales, [s as u64], "{format}");
                assert_eq!(numbers(&case["gfloat_float32_scales"]), [s as u64 + 1], "{format}");
            }
        }
    }
    // 54 to 55 blocks per format's random case alone: the comparison is not vacuous.
    assert!(checked_blocks > 6 * 60, "{checked_blocks}");
}
