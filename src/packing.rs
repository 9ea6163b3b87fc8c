//! ONNX `raw_data` layout: the one place that knows how elements sit in bytes (onnx.proto:
//! little-endian; 4-bit types two per byte with element 2k in the low nibble; 2-bit types four per
//! byte with element k in bits 2k..2k+1; float6 four elements in three bytes as an LSB-first bit
//! stream; odd tails padded with zero bits).

use crate::alloc_prelude::*;
use crate::dtype::{DType, Packing};
use crate::error::{Error, Result};

/// Bytes that `n` elements of `dtype` take in `raw_data`, or an error if the count overflows or
/// the dtype has no raw layout (STRING, UNDEFINED).
pub fn raw_len(dtype: DType, n: usize) -> Result<usize> {
    let overflow = || Error::TooLarge { what: format!("{n} elements of {dtype}") };
    match dtype.packing() {
        Packing::Bytes(k) => n.checked_mul(k as usize).ok_or_else(overflow),
        Packing::Nibbles => Ok(n.div_ceil(2)),
        Packing::Crumbs => Ok(n.div_ceil(4)),
        // ceil(6n / 8) without overflowing 6n.
        Packing::Sextets => Ok(n / 4 * 3 + (n % 4 * 6).div_ceil(8)),
        Packing::Strings | Packing::None => {
            Err(Error::UnsupportedDType { op: "raw_data", dtype: dtype.onnx_name(), why: "it has no raw byte layout" })
        }
    }
}

/// The code of element `i` (the low `bits` bits of the result). `raw` must hold at least
/// `raw_len(dtype, i + 1)` bytes and the dtype must be at most 8 bytes wide; callers check both.
#[must_use]
pub fn get(dtype: DType, raw: &[u8], i: usize) -> u64 {
    match dtype.packing() {
        Packing::Bytes(k) => {
            let k = k as usize;
            let mut buf = [0u8; 8];
            buf[..k].copy_from_slice(&raw[i * k..i * k + k]);
            u64::from_le_bytes(buf)
        }
        Packing::Nibbles => field(raw, i, 4),
        Packing::Crumbs => field(raw, i, 2),
        Packing::Sextets => {
            let bit = i * 6;
            let lo = u16::from(raw[bit / 8]);
            let hi = raw.get(bit / 8 + 1).map_or(0, |&b| u16::from(b));
            u64::from(((hi << 8 | lo) >> (bit % 8)) & 0x3F)
        }
        Packing::Strings | Packing::None => unreachable!("no raw layout for {dtype}"),
    }
}

/// Stores `code` (masked to the element width) as element `i`, leaving the other bits alone.
pub fn set(dtype: DType, raw: &mut [u8], i: usize, code: u64) {
    match dtype.packing() {
        Packing::Bytes(k) => {
            let k = k as usize;
            raw[i * k..i * k + k].copy_from_slice(&code.to_le_bytes()[..k]);
        }
        Packing::Nibbles => set_field(raw, i, 4, code),
        Packing::Crumbs => set_field(raw, i, 2, code),
        Packing::Sextets => {
            let bit = i * 6;
            let shift = bit % 8;
            let field = (code as u16 & 0x3F) << shift;
            let mask = 0x3Fu16 << shift;
            raw[bit / 8] = raw[bit / 8] & !(mask as u8) | field as u8;
            if mask >> 8 != 0 {
                raw[bit / 8 + 1] = raw[bit / 8 + 1] & !((mask >> 8) as u8) | (field >> 8) as u8;
            }
        }
        Packing::Strings | Packing::None => unreachable!("no raw layout for {dtype}"),
    }
}

/// Field `i` of `width` bits (1, 2 or 4) in bytes that hold `8 / width` fields each, field k of a
/// byte in bits `k * width ..`: the layout of INT4/UINT4 (nibbles), INT2/UINT2 (crumbs) and the
/// one-bit named integers alike.
fn field(raw: &[u8], i: usize, width: u32) -> u64 {
    let per_byte = (8 / width) as usize;
    let mask = (1u8 << width) - 1;
    u64::from(raw[i / per_byte] >> (width as usize * (i % per_byte)) & mask)
}

/// Stores the low `width` bits of `code` as field `i` (see [`field`]), leaving the others alone.
fn set_field(raw: &mut [u8], i: usize, width: u32, code: u64) {
    let per_byte = (8 / width) as usize;
    let mask = (1u8 << width) - 1;
    let shift = width as usize * (i % per_byte);
    raw[i / per_byte] = raw[i / per_byte] & !(mask << shift) | (code as u8 & mask) << shift;
}

/// Bytes that `n` codes of `width` bits take packed as [`pack_bits`] packs them.
pub fn raw_len_bits(width: u32, n: usize) -> Result<usize> {
    sub_byte_width(width)?;
    Ok(n.div_ceil((8 / width) as usize))
}

fn sub_byte_width(width: u32) -> Result<()> {
    if matches!(width, 1 | 2 | 4) {
        Ok(())
    } else {
        Err(Error::OutOfRange {
            op: "pack_bits".into(),
            what: "the field width in bits (1, 2 or 4)".into(),
            value: i128::from(width),
            low: 1,
            high: 4,
        })
    }
}

/// Packs codes of `width` bits (1, 2 or 4), `8 / width` per byte with the first in the low bits
/// and a final partial byte padded with zero bits: ONNX's layout of its 4- and 2-bit types, at
/// any of those widths (ml_dtypes' `int1`/`uint1`: 8 per byte).
///
/// ```
/// use lowbit::packing::{pack_bits, unpack_bits};
///
/// // Codes 1, 0, 1, 1, 0, 0, 0, 1, 1: bits 0..7 of the first byte, then the ninth alone.
/// let raw = pack_bits(1, &[1, 0, 1, 1, 0, 0, 0, 1, 1])?;
/// assert_eq!(raw, [0b1000_1101, 0b0000_0001]);
/// assert_eq!(unpack_bits("int1", 1, &raw, 9)?, [1, 0, 1, 1, 0, 0, 0, 1, 1]);
/// # Ok::<(), lowbit::Error>(())
/// ```
pub fn pack_bits(width: u32, codes: &[u64]) -> Result<Vec<u8>> {
    let mut raw = vec![0u8; raw_len_bits(width, codes.len())?];
    for (i, &code) in codes.iter().enumerate() {
        set_field(&mut raw, i, width, code);
    }
    Ok(raw)
}

/// The `n` codes of `width` bits that [`pack_bits`] packed into `raw`, which must be exactly
/// `raw_len_bits(width, n)` bytes (`what` names the data in the error).
pub fn unpack_bits(what: &'static str, width: u32, raw: &[u8], n: usize) -> Result<Vec<u64>> {
    let need = raw_len_bits(width, n)?;
    if raw.len() != need {
        return Err(Error::RawLength { dtype: what, elements: n, expected: need, actual: raw.len() });
    }
    Ok((0..n).map(|i| field(raw, i, width)).collect())
}

/// Packs element codes into fresh `raw_data`.
///
/// ```
/// use lowbit::packing::{pack, unpack};
/// use lowbit::DType;
///
/// // INT4 1, -2 (0xE in two's complement), 3: two per byte, the first in the low nibble, the
/// // odd one out padded with 0.
/// let raw = pack(DType::Int4, &[0x1, 0xE, 0x3])?;
/// assert_eq!(raw, [0xE1, 0x03]);
/// assert_eq!(unpack(DType::Int4, &raw, 3)?, [0x1, 0xE, 0x3]);
/// // INT2: four per byte, low bits first: 1, 2, 3, 0 -> 0b00_11_10_01 = 0x39.
/// assert_eq!(pack(DType::Int2, &[1, 2, 3, 0])?, [0x39]);
/// # Ok::<(), lowbit::Error>(())
/// ```
pub fn pack(dtype: DType, codes: &[u64]) -> Result<Vec<u8>> {
    let mut raw = vec![0u8; raw_len(dtype, codes.len())?];
    for (i, &code) in codes.iter().enumerate() {
        set(dtype, &mut raw, i, code);
    }
    Ok(raw)
}

/// Every element code of `n` elements stored in `raw` (which must be `raw_len(dtype, n)` bytes).
///
/// ```
/// use lowbit::packing::unpack;
/// use lowbit::DType;
///
/// // UINT4 0xE1, 0x03: low nibble first -> 1, 14, 3, 0.
/// assert_eq!(unpack(DType::Uint4, &[0xE1, 0x03], 4)?, [1, 14, 3, 0]);
/// // Three elements need two bytes, not one.
/// assert!(unpack(DType::Uint4, &[0xE1], 3).is_err());
/// # Ok::<(), lowbit::Error>(())
/// ```
pub fn unpack(dtype: DType, raw: &[u8], n: usize) -> Result<Vec<u64>> {
    let need = raw_len(dtype, n)?;
    if raw.len() != need {
        return Err(Error::RawLength { dtype: dtype.onnx_name(), elements: n, expected: need, actual: raw.len() });
    }
    if dtype.bits().is_some_and(|b| b > 64) {
        return Err(Error::UnsupportedDType {
            op: "unpack",
            dtype: dtype.onnx_name(),
            why: "an element is wider than 64 bits",
        });
    }
    Ok((0..n).map(|i| get(dtype, raw, i)).collect())
}

/// How many elements `bytes` bytes of raw `dtype` data hold when they hold whole elements and no
/// spare byte (for packed dtypes: the elements of every byte, padding included); `None` otherwise,
/// or for dtypes without a raw layout.
#[must_use]
pub fn whole_elements(dtype: DType, bytes: usize) -> Option<usize> {
    let bits = dtype.bits()? as usize;
    let n = bytes.checked_mul(8)? / bits;
    (raw_len(dtype, n).ok()? == bytes).then_some(n)
}

/// Elements per packing group: the fewest elements that fill whole bytes (1 for byte-wide dtypes, 2
/// for nibbles, 4 for crumbs and sextets). A run of elements that starts at a multiple of this
/// starts on a byte boundary, so bulk code can split work there.
#[must_use]
pub const fn group(dtype: DType) -> usize {
    match dtype.packing() {
        Packing::Nibbles => 2,
        Packing::Crumbs | Packing::Sextets => 4,
        _ => 1,
    }
}

/// Reads the codes of `out.len()` consecutive elements from `raw`, which starts at a group
/// boundary and holds at least `raw_len(dtype, out.len())` bytes. Whole bytes at a time: the bulk
/// counterpart of [`get`] for dtypes of 16 bits or fewer.
pub fn unpack_u16(dtype: DType, raw: &[u8], out: &mut [u16]) {
    match dtype.packing() {
        Packing::Bytes(1) => {
            for (o, &b) in out.iter_mut().zip(raw) {
                *o = u16::from(b);
            }
        }
        Packing::Bytes(2) => {
            for (o, b) in out.iter_mut().zip(raw.chunks_exact(2)) {
                *o = u16::from_le_bytes([b[0], b[1]]);
            }
        }
        Packing::Nibbles => {
            let (pairs, tail) = out.split_at_mut(out.len() / 2 * 2);
            for (o, &b) in pairs.chunks_exact_mut(2).zip(raw) {
                o[0] = u16::from(b & 0xF);
                o[1] = u16::from(b >> 4);
            }
            if let Some(last) = tail.first_mut() {
                *last = u16::from(raw[pairs.len() / 2] & 0xF);
            }
        }
        Packing::Crumbs => {
            // Whole bytes in a loop of fixed shape (it vectorises), then the final partial byte.
            let whole = out.len() / 4;
            for (o, &b) in out.chunks_exact_mut(4).zip(raw) {
                for (j, o) in o.iter_mut().enumerate() {
                    *o = u16::from(b >> (2 * j) & 0x3);
                }
            }
            for (j, o) in out[whole * 4..].iter_mut().enumerate() {
                *o = u16::from(raw[whole] >> (2 * j) & 0x3);
            }
        }
        Packing::Sextets => unpack_sextets(raw, out, |field| field as u16),
        Packing::Bytes(_) | Packing::Strings | Packing::None => {
            unreachable!("{dtype} is not a dtype of 16 bits or fewer")
        }
    }
}

/// Reads `out.len()` 6-bit fields (four in three bytes, LSB first) from `raw`, which starts at a
/// group boundary, each stored by `store`: whole groups in a loop of fixed shape (it vectorises),
/// then a final partial group (up to three fields in up to three bytes; missing bytes read as
/// zeros).
#[inline(always)]
pub(crate) fn unpack_sextets<T>(raw: &[u8], out: &mut [T], store: impl Fn(u32) -> T) {
    let whole = (out.len() / 4).min(raw.len() / 3);
    for (o, b) in out.chunks_exact_mut(4).zip(raw.chunks_exact(3)) {
        let word = u32::from(b[0]) | u32::from(b[1]) << 8 | u32::from(b[2]) << 16;
        for (j, o) in o.iter_mut().enumerate() {
            *o = store(word >> (6 * j) & 0x3F);
        }
    }
    let tail = &raw[(whole * 3).min(raw.len())..];
    let word = tail.iter().take(3).enumerate().fold(0u32, |w, (k, &x)| w | u32::from(x) << (8 * k));
    for (j, o) in out[whole * 4..].iter_mut().enumerate() {
        *o = store(word >> (6 * j) & 0x3F);
    }
}

/// Writes `codes` (already masked to the element width) as consecutive elements of `dtype`, a dtype
/// of 16 bits or fewer, into `raw`, which starts at a group boundary and is exactly `raw_len(dtype,
/// codes.len())` bytes long; the padding bits of a final partial group are zero. Whole bytes at a
/// time: the bulk counterpart of [`set`].
// Always inlined, so that the plans' SIMD copy compiles it with its instruction set.
#[inline(always)]
pub fn pack_u16(dtype: DType, codes: &[u16], raw: &mut [u8]) {
    match dtype.packing() {
        Packing::Bytes(1) => {
            for (r, &c) in raw.iter_mut().zip(codes) {
                *r = c as u8;
            }
        }
        Packing::Bytes(2) => {
            for (r, &c) in raw.chunks_exact_mut(2).zip(codes) {
                r.copy_from_slice(&c.to_le_bytes());
            }
        }
        Packing::Nibbles => {
            // Whole pairs in a loop of fixed shape (it vectorises), then a final lone element.
            let pairs = codes.chunks_exact(2);
            if let [last] = pairs.remainder() {
                raw[codes.len() / 2] = *last as u8;
            }
            for (r, c) in raw.iter_mut().zip(pairs) {
                *r = (c[0] | c[1] << 4) as u8;
            }
        }
        Packing::Crumbs => {
            let quads = codes.chunks_exact(4);
            let tail = quads.remainder();
            if !tail.is_empty() {
                raw[codes.len() / 4] = tail.iter().enumerate().fold(0, |acc, (j, &x)| acc | x << (2 * j)) as u8;
            }
            for (r, c) in raw.iter_mut().zip(quads) {
                // The four codes as one 64-bit word (16 bits each), folded onto its low byte: one
                // load and three shifts instead of four loads.
                let word = u64::from(c[0]) | u64::from(c[1]) << 16 | u64::from(c[2]) << 32 | u64::from(c[3]) << 48;
                *r = (word | word >> 14 | word >> 28 | word >> 42) as u8;
            }
        }
        Packing::Sextets => {
            // Whole groups of four codes into three bytes in a loop of fixed shape, then a final
            // partial group into the bytes left.
            let whole = (codes.len() / 4).min(raw.len() / 3);
            for (r, c) in raw.chunks_exact_mut(3).zip(codes.chunks_exact(4)) {
                let word = u32::from(c[0]) | u32::from(c[1]) << 6 | u32::from(c[2]) << 12 | u32::from(c[3]) << 18;
                r.copy_from_slice(&word.to_le_bytes()[..3]);
            }
            let tail = &codes[whole * 4..];
            if !tail.is_empty() {
                let word = tail.iter().enumerate().fold(0u32, |acc, (j, &x)| acc | u32::from(x) << (6 * j));
                let r = &mut raw[whole * 3..];
                let len = r.len().min(3);
                r[..len].copy_from_slice(&word.to_le_bytes()[..len]);
            }
        }
        Packing::Bytes(_) | Packing::Strings | Packing::None => {
            unreachable!("{dtype} is not a dtype of 16 bits or fewer")
        }
    }
}

/// Codes converted per step by [`pack_byte_codes`] and [`unpack_byte_codes`]: a multiple of 4 (a
/// group boundary for every packing), small enough to stay in L1.
const BYTE_CODES_STEP: usize = 1024;

/// A dtype of 8 bits or fewer, or an error naming `op`.
fn byte_code_dtype(op: &'static str, dtype: DType) -> Result<()> {
    match dtype.bits() {
        Some(bits) if bits <= 8 => Ok(()),
        _ => Err(Error::UnsupportedDType {
            op,
            dtype: dtype.onnx_name(),
            why: "one code per byte needs 8 bits or fewer",
        }),
    }
}

fn check_raw_len(dtype: DType, n: usize, actual: usize) -> Result<()> {
    let expected = raw_len(dtype, n)?;
    if actual != expected {
        return Err(Error::RawLength { dtype: dtype.onnx_name(), elements: n, expected, actual });
    }
    Ok(())
}

/// Packs elements held one code per byte (the code in the low bits; the higher bits are ignored),
/// which is how ml_dtypes and other one-element-per-byte arrays hold int4, float4, int2 and float6,
/// into `raw` in the ONNX layout. `dtype` has 8 bits or fewer; `raw` must be exactly
/// `raw_len(dtype, codes.len())` bytes.
pub fn pack_byte_codes(dtype: DType, codes: &[u8], raw: &mut [u8]) -> Result<()> {
    byte_code_dtype("pack_byte_codes", dtype)?;
    check_raw_len(dtype, codes.len(), raw.len())?;
    let mask = dtype.code_mask() as u16;
    let mut step = [0u16; BYTE_CODES_STEP];
    for (k, part) in codes.chunks(BYTE_CODES_STEP).enumerate() {
        let start = k * BYTE_CODES_STEP;
        for (s, &c) in step.iter_mut().zip(part) {
            *s = u16::from(c) & mask;
        }
        let (from, to) = (raw_len(dtype, start)?, raw_len(dtype, start + part.len())?);
        pack_u16(dtype, &step[..part.len()], &mut raw[from..to]);
    }
    Ok(())
}

/// The reverse of [`pack_byte_codes`]: every element of `raw` (ONNX layout, exactly
/// `raw_len(dtype, codes.len())` bytes) as one code per byte, higher bits zero.
pub fn unpack_byte_codes(dtype: DType, raw: &[u8], codes: &mut [u8]) -> Result<()> {
    byte_code_dtype("unpack_byte_codes", dtype)?;
    check_raw_len(dtype, codes.len(), raw.len())?;
    let mut step = [0u16; BYTE_CODES_STEP];
    for (k, part) in codes.chunks_mut(BYTE_CODES_STEP).enumerate() {
        let start = k * BYTE_CODES_STEP;
        let (from, to) = (raw_len(dtype, start)?, raw_len(dtype, start + part.len())?);
        unpack_u16(dtype, &raw[from..to], &mut step[..part.len()]);
        for (c, &s) in part.iter_mut().zip(&step) {
            // Codes of 8 bits or fewer.
            *c = s as u8;
        }
    }
    Ok(())
}

/// Writes `codes` as consecutive elements of a byte-wide `dtype` (1, 2, 4 or 8 bytes each) into `raw`
/// (exactly `raw_len(dtype, codes.len())` bytes).
pub fn pack_u64(dtype: DType, codes: &[u64], raw: &mut [u8]) {
    match dtype.packing() {
        // One loop per width, each store an array assignment of a fixed size: a `copy_from_slice`
        // here stayed a memcpy call per element inside the AVX2 kernels.
        Packing::Bytes(1) => raw.iter_mut().zip(codes).for_each(|(r, &c)| *r = c as u8),
        Packing::Bytes(2) => store_each::<2>(raw, codes, |c| (c as u16).to_le_bytes()),
        Packing::Bytes(4) => store_each::<4>(raw, codes, |c| (c as u32).to_le_bytes()),
        Packing::Bytes(8) => store_each::<8>(raw, codes, u64::to_le_bytes),
        _ => unreachable!("{dtype} is not 1, 2, 4 or 8 bytes wide"),
    }
}

/// Writes `bytes(code)` into each `N`-byte element of `raw`.
#[inline(always)]
fn store_each<const N: usize>(raw: &mut [u8], codes: &[u64], bytes: impl Fn(u64) -> [u8; N]) {
    for (r, &c) in raw.chunks_exact_mut(N).zip(codes) {
        if let Ok(element) = <&mut [u8; N]>::try_from(r) {
            *element = bytes(c);
        }
    }
}

/// Packs byte codes of `width` bits (1 to 8) as one LSB-first bit stream: code `i` in bits
/// `width * i ..` of the stream, byte `k` holding stream bits `8k .. 8k + 7`, a final partial
/// byte padded with zero bits. At widths 1, 2 and 4 this is [`pack_bits`]'s layout; at 3, 5 and
/// 6 it is MLX's (eight 3- or 5-bit codes in 3 or 5 bytes, four 6-bit codes in 3 bytes). Bits of
/// a code above `width` are dropped.
///
/// ```
/// use lowbit::packing::{pack_bit_stream, unpack_bit_stream};
///
/// // 3-bit codes 1..8 (8 wraps to 0): 0b000_111_110_101_100_011_010_001 in three bytes.
/// let raw = pack_bit_stream(3, &[1, 2, 3, 4, 5, 6, 7, 8])?;
/// assert_eq!(raw, [0xD1, 0x58, 0x1F]);
/// let mut codes = [0u8; 8];
/// unpack_bit_stream(3, &raw, &mut codes)?;
/// assert_eq!(codes, [1, 2, 3, 4, 5, 6, 7, 0]);
/// # Ok::<(), lowbit::Error>(())
/// ```
pub fn pack_bit_stream(width: u32, codes: &[u8]) -> Result<Vec<u8>> {
    let len = bit_stream_len(width, codes.len())?;
    let mut raw = vec![0u8; len];
    let mask = (1u32 << width) - 1;
    let mut bit = 0usize;
    for &code in codes {
        let v = (u32::from(code) & mask) << (bit % 8);
        let at = bit / 8;
        raw[at] |= v as u8;
        if v >> 8 != 0 {
            raw[at + 1] |= (v >> 8) as u8;
        }
        bit += width as usize;
    }
    Ok(raw)
}

/// Bytes that `n` codes of `width` bits (1 to 8) take as [`pack_bit_stream`] packs them.
pub fn bit_stream_len(width: u32, n: usize) -> Result<usize> {
    if !(1..=8).contains(&width) {
        return Err(Error::OutOfRange {
            op: "pack_bit_stream".into(),
            what: "the code width in bits".into(),
            value: i128::from(width),
            low: 1,
            high: 8,
        });
    }
    n.checked_mul(width as usize)
        .map(|bits| bits.div_ceil(8))
        .ok_or_else(|| Error::TooLarge { what: format!("{n} codes of {width} bits") })
}

/// The codes [`pack_bit_stream`] packed into `raw`, one per element of `codes`; `raw` must be
/// exactly `bit_stream_len(width, codes.len())` bytes.
pub fn unpack_bit_stream(width: u32, raw: &[u8], codes: &mut [u8]) -> Result<()> {
    let need = bit_stream_len(width, codes.len())?;
    if raw.len() != need {
        return Err(Error::RawLength { dtype: "bit stream", elements: codes.len(), expected: need, actual: raw.len() });
    }
    let mask = (1u64 << width) - 1;
    let w = width as usize;
    // Whole 8-byte words hold 64 / width codes when width divides 64, else lcm-sized runs:
    // read each code from the little-endian 64-bit window starting at its byte.
    let full = raw.len().saturating_sub(7);
    for (i, c) in codes.iter_mut().enumerate() {
        let bit = i * w;
        let at = bit / 8;
        let window = if at < full {
            u64::from_le_bytes(raw[at..at + 8].try_into().expect("eight bytes"))
        } else {
            let mut b = [0u8; 8];
            let tail = &raw[at..];
            b[..tail.len()].copy_from_slice(tail);
            u64::from_le_bytes(b)
        };
        *c = ((window >> (bit % 8)) & mask) as u8;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn onnx_examples() {
        // docs/research/onnx_cast.md §3: int4 [1,-2,3] -> e1 03; float6e2m3 codes [08,10,14,28,04] -> 08 44 a1 04.
        assert_eq!(pack(DType::Int4, &[1, 0xE, 3]).unwrap(), [0xE1, 0x03]);
        assert_eq!(pack(DType::Float4E2M1, &[0x1, 0x2, 0xF]).unwrap(), [0x21, 0x0F]);
        assert_eq!(pack(DType::Float6E2M3, &[0x08, 0x10, 0x14, 0x28, 0x04]).unwrap(), [0x08, 0x44, 0xA1, 0x04]);
        assert_eq!(pack(DType::Int2, &[1, 2, 3, 0, 1, 2, 3]).unwrap(), [0x39, 0x39]);
        assert_eq!(unpack(DType::Float6E2M3, &[0x08, 0x44, 0xA1, 0x04], 5).unwrap(), [0x08, 0x10, 0x14, 0x28, 0x04]);
    }

    #[test]
    fn lengths() {
        for (n, want) in [(0, 0), (1, 1), (2, 2), (3, 3), (4, 3), (5, 4), (8, 6)] {
            assert_eq!(raw_len(DType::Float6E3M2, n).unwrap(), want, "{n}");
        }
        assert_eq!(raw_len(DType::Uint2, 5).unwrap(), 2);
        assert!(raw_len(DType::Double, usize::MAX / 2).is_err());
        assert!(raw_len(DType::String, 1).is_err());
        assert!(unpack(DType::Int4, &[0; 3], 7).unwrap_err().to_string().contains("3 bytes"));
        // 3 bytes of float6 are 4 elements; 4 bytes hold 5 (30 bits) and 2 bits of padding.
        assert_eq!(whole_elements(DType::Float6E3M2, 3), Some(4));
        assert_eq!(whole_elements(DType::Float6E3M2, 4), Some(5));
        assert_eq!(whole_elements(DType::Int4, 3), Some(6));
        assert_eq!(whole_elements(DType::Float, 6), None);
        assert_eq!(whole_elements(DType::String, 8), None);
    }

    #[test]
    fn set_leaves_neighbours_alone() {
        for dtype in [DType::Int4, DType::Uint2, DType::Float6E3M2, DType::Int16] {
            let n = 9;
            let mask = dtype.code_mask();
            let codes: Vec<u64> = (0..n as u64).map(|i| (i * 0x2B + 5) & mask).collect();
            let mut raw = pack(dtype, &codes).unwrap();
            set(dtype, &mut raw, 4, !codes[4] & mask);
            for (i, &c) in codes.iter().enumerate() {
                let want = if i == 4 { !c & mask } else { c };
                assert_eq!(get(dtype, &raw, i), want, "{dtype} element {i}");
            }
        }
    }

    #[test]
    fn byte_codes() {
        // The examples of `onnx_examples`, one code per byte: int4 [1, -2, 3] is 01 0E 03 (high
        // bits set are ignored on the way in: F1 and FE read as 1 and 0xE), packed e1 03.
        let mut raw = [0u8; 2];
        pack_byte_codes(DType::Int4, &[0xF1, 0xFE, 0x03], &mut raw).unwrap();
        assert_eq!(raw, [0xE1, 0x03]);
        let mut codes = [0xAAu8; 3];
        unpack_byte_codes(DType::Int4, &raw, &mut codes).unwrap();
        assert_eq!(codes, [0x01, 0x0E, 0x03]);
        // float6e2m3 codes [08, 10, 14, 28, 04] -> 08 44 a1 04.
        let mut raw = [0u8; 4];
        pack_byte_codes(DType::Float6E2M3, &[0x08, 0x10, 0x14, 0x28, 0x04], &mut raw).unwrap();
        assert_eq!(raw, [0x08, 0x44, 0xA1, 0x04]);
        // int2 [1, 2, 3, 0, 1, 2, 3] -> 39 39.
        let mut codes = [0u8; 7];
        unpack_byte_codes(DType::Int2, &[0x39, 0x39], &mut codes).unwrap();
        assert_eq!(codes, [1, 2, 3, 0, 1, 2, 3]);
        // Byte-wide dtypes are copies.
        let mut raw = [0u8; 2];
        pack_byte_codes(DType::Float8E4M3FN, &[0x7E, 0xFF], &mut raw).unwrap();
        assert_eq!(raw, [0x7E, 0xFF]);
        // Lengths and widths are checked.
        let err = pack_byte_codes(DType::Int4, &[0; 5], &mut [0u8; 2]).unwrap_err().to_string();
        assert!(err.contains("3 bytes") && err.contains("2 bytes"), "{err}");
        assert!(unpack_byte_codes(DType::Uint2, &[0u8; 2], &mut [0u8; 9]).is_err());
        assert!(pack_byte_codes(DType::Float16, &[0; 2], &mut [0u8; 4]).is_err());
        assert!(unpack_byte_codes(DType::String, &[], &mut []).is_err());
    }

    #[test]
    fn byte_codes_agree_with_get_and_set_across_steps() {
        // Lengths around the step of 1024 codes, every packed layout, against the element functions.
        for dtype in [DType::Int4, DType::Uint2, DType::Float6E3M2, DType::Float4E2M1] {
            for n in [0, 1, 1023, 1024, 1025, 2051] {
                let mask = dtype.code_mask();
                let codes: Vec<u64> = (0..n as u64).map(|i| (i * 0x9E37 + 0x1D) & mask).collect();
                let raw = pack(dtype, &codes).unwrap();
                let bytes: Vec<u8> = codes.iter().map(|&c| c as u8 | 0xC0).collect();
                let mut packed = vec![0x55u8; raw.len()];
                pack_byte_codes(dtype, &bytes, &mut packed).unwrap();
                assert_eq!(packed, raw, "{dtype} n={n}");
                let mut back = vec![0xFFu8; n];
                unpack_byte_codes(dtype, &raw, &mut back).unwrap();
                assert_eq!(back.iter().map(|&c| u64::from(c)).collect::<Vec<_>>(), codes, "{dtype} n={n}");
            }
        }
    }

    #[test]
    fn bulk_agrees_with_get_and_set() {
        // Every packed layout and every length up to three groups, against the element functions.
        for dtype in [DType::Int4, DType::Uint2, DType::Float6E3M2, DType::Float4E2M1, DType::Uint8, DType::Float16] {
            for n in 0..13 {
                let mask = dtype.code_mask();
                let codes: Vec<u64> = (0..n as u64).map(|i| (i * 0x9E37 + 0x1D) & mask).collect();
                let raw = pack(dtype, &codes).unwrap();
                let mut read = vec![0u16; n];
                unpack_u16(dtype, &raw, &mut read);
                assert_eq!(read.iter().map(|&c| u64::from(c)).collect::<Vec<_>>(), codes, "{dtype} n={n}");
                let mut packed = vec![0xAAu8; raw.len()];
                pack_u16(dtype, &read, &mut packed);
                assert_eq!(packed, raw, "{dtype} n={n}");
            }
        }
    }
}
