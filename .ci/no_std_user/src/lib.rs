//! What a `#![no_std]` user of lowbit writes: scalar types, slices, text parsing and plans, with
//! `alloc`. CI builds it (a second `#[panic_handler]` would clash if anything linked `std`) and
//! runs its tests, which exercise lowbit's code paths without `std`: plans without the
//! per-process caches, the exact bit-level rounding functions, no run-time CPU detection.
#![no_std]

extern crate alloc;
#[cfg(test)]
extern crate std;

use alloc::vec::Vec;
use lowbit::{CastOptions, DType, NarrowFloatSliceExt, Plan, F8E4M3FN};

/// float32 values to float8e4m3fn codes three ways: the scalar type, the slice API and a plan.
pub fn encode(values: &[f32]) -> Result<(Vec<u8>, Vec<u8>, Vec<u8>), lowbit::Error> {
    let scalar = values.iter().map(|&x| F8E4M3FN::from_f32(x).to_bits()).collect();
    let mut typed = alloc::vec![F8E4M3FN::ZERO; values.len()];
    typed.convert_from_f32_slice(values)?;
    let slice = typed.iter().map(|x| x.to_bits()).collect();
    let planned = run(DType::Float, DType::Float8E4M3FN, &f32_bytes(values), values.len())?;
    Ok((scalar, slice, planned))
}

/// The little-endian bytes of float32 values.
pub fn f32_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// A plan from `from` to `to` run over `n` elements of `src`.
pub fn run(from: DType, to: DType, src: &[u8], n: usize) -> Result<Vec<u8>, lowbit::Error> {
    let plan = Plan::new(from, to, &CastOptions::default())?;
    let mut dst = alloc::vec![0u8; lowbit::packing::raw_len(to, n)?];
    plan.run(src, &mut dst, n)?;
    Ok(dst)
}

/// A second panic handler if `std` is linked: the build of this crate fails then. (Tests link
/// `std` through the test harness, which brings its own.)
#[cfg(not(test))]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    loop {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;
    use lowbit::{F4E2M1, I4};

    #[test]
    fn float8_by_hand() {
        // E4M3FN (bias 7): 1.0 = 0 0111 000 = 0x38; 300 lies between 288 = 1.125 * 2^8
        // (0 1111 001 = 0x79) and 320, nearer 288; 464 is the midpoint of 448 (0x7E) and 480
        // (0x7F would be NaN): saturate=1 keeps 448; NaN is 0x7F; -0.0 is 0x80.
        let values = [1.0f32, 300.0, 464.0, f32::NAN, -0.0];
        let want = [0x38u8, 0x79, 0x7E, 0x7F, 0x80];
        let (scalar, slice, planned) = encode(&values).unwrap();
        assert_eq!(scalar, want);
        assert_eq!(slice, want);
        assert_eq!(planned, want);
        // Past the size where plans switch from one element at a time to their chunked kernels.
        let many: Vec<f32> = (0..5000).map(|i| values[i % 5]).collect();
        let (scalar, slice, planned) = encode(&many).unwrap();
        let want_many: Vec<u8> = (0..5000).map(|i| want[i % 5]).collect();
        assert_eq!((scalar, slice), (want_many.clone(), want_many.clone()));
        assert_eq!(planned, want_many);
    }

    #[test]
    fn rounding_to_integers_without_std() {
        // float32 -> int4, nearest even (the exact bit-level round_ties_even without std):
        // 2.5 -> 2, -7.6 -> -8 (0x8), 3.5 -> 4, -0.5 -> 0; packed low nibble first.
        let src = f32_bytes(&[2.5, -7.6, 3.5, -0.5]);
        assert_eq!(run(DType::Float, DType::Int4, &src, 4).unwrap(), [0x82, 0x04]);
        // float32 -> int8 under `spec` is x86's truncating conversion, then the low 8 bits:
        // 200.7 -> 200 = 0xC8, -129.9 -> -129 = 0x...7F, 126.5 -> 126, -1.5 -> -1 = 0xFF.
        let src = f32_bytes(&[200.7, -129.9, 126.5, -1.5]);
        assert_eq!(run(DType::Float, DType::Int8, &src, 4).unwrap(), [0xC8, 0x7F, 0x7E, 0xFF]);
        // Cast keeps the low 4 bits of -9 (0b0111 = 7); the saturating constructor clamps to -8.
        assert_eq!((I4::from_f32(-9.0).to_f32(), I4::saturating_from_f32(-9.0)), (7.0, I4::MIN));
    }

    #[test]
    fn strings_and_wider_types_without_std() {
        // "0.3" rounds once to E4M3FN: 0.3 = 1.2 * 2^-2, between 1.125 * 2^-2 (0 0101 001) and
        // 1.25 * 2^-2 (0 0101 010), nearer 1.25: code 0x2A, value 0.3125.
        let x: F8E4M3FN = "0.3".parse().unwrap();
        assert_eq!(x.to_bits(), 0x2A);
        assert_eq!(x.to_string(), "0.3125");
        assert!("nan".parse::<F4E2M1>().is_err());
        // float16 -> float32 through a plan: 0x3C00 = 1.0, 0xC000 = -2.0, 0x0001 = 2^-24.
        let src = [0x00, 0x3C, 0x00, 0xC0, 0x01, 0x00];
        let out = run(DType::Float16, DType::Float, &src, 3).unwrap();
        assert_eq!(out, f32_bytes(&[1.0, -2.0, 5.960_464_5e-8]));
    }

    #[test]
    fn cast_with_strings_needs_the_strings_feature() {
        // Built without `strings`: a Cast to or from STRING is an error that names the feature
        // (text still parses into the scalar types, as above).
        let numbers = lowbit::Tensor::from_f32(&[1.5, -2.0]);
        let texts = lowbit::Tensor::from_strings(alloc::vec![1], &["1.5"][..]).unwrap();
        let to_text = lowbit::cast(&numbers, DType::String, &CastOptions::default()).unwrap_err();
        let from_text = lowbit::cast(&texts, DType::Float, &CastOptions::default()).unwrap_err();
        for error in [to_text, from_text] {
            let message = error.to_string();
            assert!(message.contains("STRING") && message.contains("`strings` feature"), "{message}");
        }
    }
}
