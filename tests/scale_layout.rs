//! The cuBLAS block-scale layout against torchao's `to_blocked` (recorded by
//! scripts/gen_scale_layout_fixtures.py), every byte of the padded output, and the layout options
//! of `to_bytes_in` / `from_bytes_in` on real recipes.

use lowbit::quant::blocks::{
    from_bytes_in, quantize, swizzle_scales, to_bytes_in, unswizzle_scales, ScaleLayout, Scheme,
};

#[test]
fn cublas_layout_equals_torchaos_to_blocked() {
    let text = include_str!("data/scale_layout/cublas128x4.json");
    let record: serde_json::Value = serde_json::from_str(text).expect("the fixture is JSON");
    let layout = ScaleLayout::parse("cublas128x4").unwrap();
    let mut compared = 0;
    for case in record["cases"].as_array().expect("cases") {
        let (rows, cols) = (case["rows"].as_u64().unwrap() as usize, case["cols"].as_u64().unwrap() as usize);
        let scales: Vec<u8> = (0..rows * cols).map(|i| ((7 * i + 3) % 256) as u8).collect();
        let hex = case["swizzled"].as_str().unwrap();
        let want: Vec<u8> =
            (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap()).collect();
        let got = swizzle_scales(&scales, rows, cols, layout).unwrap();
        assert_eq!(got, want, "{rows} x {cols}");
        assert_eq!(unswizzle_scales(&want, rows, cols, layout).unwrap(), scales, "{rows} x {cols}");
        compared += want.len();
    }
    assert!(compared > 10_000, "{compared} bytes compared");
}

#[test]
fn a_layout_option_moves_only_the_scales() {
    let layout = ScaleLayout::parse("cublas128x4").unwrap();
    for name in ["modelopt:nvfp4", "ocp:mxfp8e4m3", "torchao:mxfp4,scale=rceil"] {
        let scheme = Scheme::parse(name).unwrap();
        let (rows, cols) = (130, 96);
        let x: Vec<f32> = (0..rows * cols).map(|i| ((i * 37 % 101) as f32 - 50.0) * 0.37).collect();
        let q = quantize(&x, &[rows, cols], &scheme, -1, None).unwrap();
        let linear = q.to_bytes().unwrap();
        let swizzled = to_bytes_in(&q, layout).unwrap();
        let scale_shape = q.scales_shape().unwrap();
        let (srows, scols) = (scale_shape[0], scale_shape[1]);
        let start = linear.len() - srows * scols - if q.global_scale.is_some() { 4 } else { 0 };
        // The elements (and a per-tensor scale) are as in the linear form; the scales swizzled.
        assert_eq!(swizzled[..start], linear[..start], "{name}");
        let stored = layout.stored_len(srows, scols).unwrap();
        assert_eq!(
            swizzled[start..start + stored],
            swizzle_scales(&linear[start..start + srows * scols], srows, scols, layout).unwrap()[..],
            "{name}"
        );
        assert_eq!(swizzled[start + stored..], linear[start + srows * scols..], "{name}");
        let back = from_bytes_in(&swizzled, &scheme, &[rows, cols], -1, layout).unwrap();
        assert_eq!(back, q, "{name}");
        assert!(from_bytes_in(&swizzled[1..], &scheme, &[rows, cols], -1, layout).is_err());
    }
    // Two-byte scales take no scale layout.
    let q8 = quantize(&[1.0f32; 32], &[32], &Scheme::parse("ggml:q8_0").unwrap(), -1, None).unwrap();
    assert!(to_bytes_in(&q8, layout).is_err());
}
