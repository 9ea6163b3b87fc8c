//! What a `#![no_std]` user of lowbit writes: scalar types, slices and a plan, with `alloc`.
#![no_std]

extern crate alloc;

use alloc::vec::Vec;
use lowbit::{CastOptions, DType, NarrowFloatSliceExt, Plan, F8E4M3FN};

/// float32 values to float8e4m3fn codes three ways: the scalar type, the slice API and a plan.
pub fn encode(values: &[f32]) -> Result<(Vec<u8>, Vec<u8>, Vec<u8>), lowbit::Error> {
    let scalar = values.iter().map(|&x| F8E4M3FN::from_f32(x).to_bits()).collect();
    let mut typed = alloc::vec![F8E4M3FN::ZERO; values.len()];
    typed.convert_from_f32_slice(values)?;
    let slice = typed.iter().map(|x| x.to_bits()).collect();
    let plan = Plan::new(DType::Float, DType::Float8E4M3FN, &CastOptions::default())?;
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    let mut planned = alloc::vec![0u8; values.len()];
    plan.run(&bytes, &mut planned, values.len())?;
    Ok((scalar, slice, planned))
}

/// A second panic handler if `std` is linked: the build of this crate fails then.
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    loop {}
}
