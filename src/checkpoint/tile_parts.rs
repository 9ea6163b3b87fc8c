//! What the two tile decoders (`tiles` for the safetensors conventions, `ggml_tiles` for GGUF's
//! blocks) share: value tables probed from `quant::blocks`' general path, the two-values-a-byte
//! table of 4-bit codes, and grow-only buffers.

use crate::quant::blocks::{self, Scales, Scheme};
use crate::{Error, Result};

/// Every (scale code, element code) value, by the general path: a 1-D probe of 256 groups of
/// blocks, group `s` scaled by code `s` and holding the element codes `0..codes` in order.
pub(super) fn code_table(scheme: &Scheme, block: usize, codes: usize, global: Option<f32>) -> Result<Vec<f32>> {
    let blocks_per_scale = codes.div_ceil(block);
    let group = blocks_per_scale * block;
    let mut elements = vec![0u8; 256 * group];
    let mut scales = vec![0u8; 256 * blocks_per_scale];
    for s in 0..256 {
        scales[s * blocks_per_scale..(s + 1) * blocks_per_scale].fill(s as u8);
        for c in 0..codes {
            elements[s * group + c] = c as u8;
        }
    }
    let values =
        blocks::from_arrays(elements, &[256 * group], Scales::Codes(scales), scheme, -1, global)?.dequantize()?;
    Ok((0..256).flat_map(|s| values[s * group..s * group + codes].iter().copied()).collect())
}

/// The first `len` elements of `buffer`, grown (never shrunk) to hold them.
pub(super) fn fill<T: Default + Clone>(buffer: &mut Vec<T>, len: usize) -> Result<&mut [T]> {
    if buffer.len() < len {
        buffer
            .try_reserve_exact(len - buffer.len())
            .map_err(|_| Error::TooLarge { what: format!("a tile of {len} elements") })?;
        buffer.resize(len, T::default());
    }
    Ok(&mut buffer[..len])
}

/// From the value of every (scale code, 4-bit element code) (16 per scale code), the values of
/// every (scale code, code byte): its two elements, low nibble first.
pub(super) fn pair_table<T: Copy>(values: &[T]) -> Vec<[T; 2]> {
    (0..256 * 256)
        .map(|k| {
            let (s, b) = (k / 256 * 16, k % 256);
            [values[s + (b & 15)], values[s + (b >> 4)]]
        })
        .collect()
}
