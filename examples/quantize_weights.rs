//! Quantize a float32 weight tensor to float8e4m3fn with one per-tensor scale, the way an FP8
//! inference recipe does: `scale = amax / 448` (448 is E4M3FN's largest value), ONNX
//! `QuantizeLinear`, the result written as an ONNX `TensorProto` file; then `DequantizeLinear`
//! back and the largest absolute error.
//!
//! ```sh
//! cargo run --example quantize_weights                    # makes a weight tensor in a temp dir
//! cargo run --example quantize_weights -- w.pb w_e4m3.pb  # a FLOAT TensorProto of yours
//! ```

use lowbit::onnx::tensor_proto::{read_tensor_file, write_tensor_file};
use lowbit::quant::{dequantize_linear, quantize_linear, DequantizeAttributes, QuantizeAttributes};
use lowbit::{DType, Profile, Tensor};
use std::path::{Path, PathBuf};

/// E4M3FN's largest finite value: 1.75 * 2^8.
const E4M3FN_MAX: f32 = 448.0;
/// `QuantizeLinear-21` is the first version with the `output_dtype` attribute (float8 outputs
/// exist since 19, but there only through a float8 zero point).
const OPSET: i64 = 21;

/// What [`quantize_file`] did.
#[derive(Debug)]
struct Report {
    scale: f32,
    /// The float8e4m3fn codes, row-major.
    codes: Vec<u64>,
    /// The dequantized weights.
    dequantized: Vec<f32>,
    max_abs_error: f32,
}

/// Reads the FLOAT tensor at `input`, quantizes it to float8e4m3fn with `amax / 448` and writes
/// the codes as a TensorProto named `name` to `output`.
fn quantize_file(input: &Path, output: &Path, name: &str) -> lowbit::Result<Report> {
    let weights = read_tensor_file(input)?;
    let values = weights.to_f32_vec()?; // an Err naming the dtype if the file is not FLOAT
    let amax = values.iter().fold(0.0f32, |m, v| m.max(v.abs()));
    // An all-zero tensor still needs a positive scale: any one gives zero codes.
    let scale = if amax > 0.0 && amax.is_finite() { amax / E4M3FN_MAX } else { 1.0 };
    // A per-tensor scale is a scalar (shape []).
    let scale_tensor = Tensor::from_f32(&[scale]).reshape(vec![])?;

    let attrs = QuantizeAttributes {
        output_dtype: Some(i64::from(DType::Float8E4M3FN.onnx_number())),
        ..QuantizeAttributes::default()
    };
    // saturate defaults to 1: a value past 448 * scale (none here, by construction) gives 448.
    let quantized = quantize_linear(&weights, &scale_tensor, None, &attrs, OPSET, Profile::Spec)?;
    write_tensor_file(output, &quantized, Some(name))?;

    let back =
        dequantize_linear(&quantized, &scale_tensor, None, &DequantizeAttributes::default(), OPSET, Profile::Spec)?;
    let dequantized = back.to_f32_vec()?;
    let max_abs_error = values.iter().zip(&dequantized).fold(0.0f32, |m, (a, b)| m.max((a - b).abs()));
    Ok(Report { scale, codes: quantized.codes()?, dequantized, max_abs_error })
}

/// 256 weights shaped [16, 16], roughly normal with standard deviation 0.05 (a sum of four
/// uniform draws of a small linear congruential generator), so the example needs no input.
fn sample_weights() -> lowbit::Result<Tensor> {
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let mut uniform = || {
        state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        (state >> 40) as f32 / (1u64 << 24) as f32 - 0.5
    };
    let values: Vec<f32> = (0..256).map(|_| (uniform() + uniform() + uniform() + uniform()) * 0.17).collect();
    Tensor::from_f32(&values).reshape(vec![16, 16])
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let temp = tempfile::tempdir()?;
    let input = match args.first() {
        Some(path) => PathBuf::from(path),
        None => {
            let path = temp.path().join("weights.pb");
            write_tensor_file(&path, &sample_weights()?, Some("weights"))?;
            println!("no input given: wrote 256 sample weights to {}", path.display());
            path
        }
    };
    let output = args.get(1).map_or_else(|| temp.path().join("weights_e4m3fn.pb"), PathBuf::from);
    let report = quantize_file(&input, &output, "weights_e4m3fn")?;
    println!("scale (amax / 448): {:e}", report.scale);
    println!("wrote {} float8e4m3fn codes to {}", report.codes.len(), output.display());
    let shown: Vec<String> = report.codes.iter().take(8).map(|c| format!("{c:02X}")).collect();
    println!("first codes: {}", shown.join(" "));
    let back: Vec<String> = report.dequantized.iter().take(4).map(|v| format!("{v:e}")).collect();
    println!("first dequantized weights: {}", back.join(" "));
    println!("max abs error after DequantizeLinear: {:e}", report.max_abs_error);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn six_weights_by_hand() {
        let dir = tempfile::tempdir().unwrap();
        let (input, output) = (dir.path().join("w.pb"), dir.path().join("q.pb"));
        let weights = Tensor::from_f32(&[0.5, -1.75, 3.5, 0.01, -0.3, 1.0]).reshape(vec![2, 3]).unwrap();
        write_tensor_file(&input, &weights, Some("w")).unwrap();
        let report = quantize_file(&input, &output, "q").unwrap();

        // amax = 3.5, scale = 3.5 / 448 = 2^-7 exactly, so x / scale = x * 128:
        //   0.5   ->   64 = 1.0  * 2^6: exponent 6+7 = 1101, mantissa 000  -> 0 1101 000 = 0x68
        //  -1.75  -> -224 = 1.75 * 2^7: exponent 1110, mantissa 110        -> 1 1110 110 = 0xF6
        //   3.5   ->  448 = 1.75 * 2^8: exponent 1111, mantissa 110        -> 0 1111 110 = 0x7E
        //   0.01  -> 1.28: between 1.25 (0 0111 010) and 1.375, nearer 1.25 -> 0x3A
        //  -0.3   -> -38.4: between 36 and 40 (step 4 in [32, 64)), nearer 40 = 1.25 * 2^5
        //            -> 1 1100 010 = 0xE2
        //   1.0   ->  128 = 2^7: exponent 1110, mantissa 000               -> 0 1110 000 = 0x70
        assert_eq!(report.scale, 0.0078125);
        assert_eq!(report.codes, [0x68, 0xF6, 0x7E, 0x3A, 0xE2, 0x70]);
        // Back: 1.25 / 128 = 0.009765625 and -40 / 128 = -0.3125; the others are exact.
        assert_eq!(report.dequantized, [0.5, -1.75, 3.5, 0.009765625, -0.3125, 1.0]);
        // The largest error is -0.3's: |-0.3125 - (-0.3)| = 0.0125 (0.3 is not a float32, so
        // within an ulp of 0.3's float32 value, 3e-8).
        assert!((report.max_abs_error - 0.0125).abs() < 1e-7, "{}", report.max_abs_error);

        // The file holds what was returned.
        let written = read_tensor_file(&output).unwrap();
        assert_eq!((written.dtype(), written.shape()), (DType::Float8E4M3FN, &[2usize, 3][..]));
        assert_eq!(written.codes().unwrap(), report.codes);
    }

    #[test]
    fn a_non_float_input_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("i.pb");
        write_tensor_file(&input, &Tensor::from_f64(&[1.0]), None).unwrap();
        let err = quantize_file(&input, &dir.path().join("q.pb"), "q").unwrap_err();
        assert!(err.to_string().contains("DOUBLE"), "{err}");
    }

    #[test]
    fn the_sample_stays_within_half_a_step() {
        // E4M3's relative step is 2^-3 in every binade, so the error of each weight is at most
        // half a step of its binade: |w| * 2^-4 (normal range; the subnormal step is 2^-9 * scale).
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("w.pb");
        let weights = sample_weights().unwrap();
        write_tensor_file(&input, &weights, None).unwrap();
        let report = quantize_file(&input, &dir.path().join("q.pb"), "q").unwrap();
        for (w, d) in weights.to_f32_vec().unwrap().iter().zip(&report.dequantized) {
            let bound = (w.abs() / 16.0).max(report.scale * 2f32.powi(-10));
            assert!((w - d).abs() <= bound * 1.000_001, "{w} -> {d}");
        }
    }
}
