//! **ggml's block types** (GGUF tensor types): the legacy blocks, the K-quants, the I-quants and
//! the ternary types, each read and written exactly as ggml's C (`ggml-quants.c`) does on x86-64.
//!
//! A type is a [`Codec`] row: its ggml name and id, its block (elements and bytes), the function
//! that decodes one block and the function that quantizes one row (with an importance matrix
//! where the type takes one), and the ggml version and script that check it. Every float16 of a
//! block (`d`, `dmin`) is converted by the rounding core; nibbles and bit fields are laid out as
//! ggml's structs lay them out.
//!
//! The arithmetic is ggml's float32 arithmetic in its order of operations (no fused
//! multiply-add: the x86-64 release build of ggml-base has none), with the NaN an x86-64 SSE
//! instruction writes ([`arith`]): a NaN operand's bits quieted (the first operand's when both
//! are NaN), the default NaN `0xFFC00000` for an invalid operation on numbers.

mod iq_grids;
mod iq_search;
mod iquants;
mod kquants;
mod legacy;
mod ternary;

use crate::error::{Error, Result};

/// Decodes one block (`block_bytes` bytes) into `block_elements` float32 values.
pub(crate) type DecodeBlock = fn(block: &[u8], out: &mut [f32]);

/// Quantizes one row (a whole number of blocks) into its blocks; `imatrix` is the row's
/// per-column importance (length = row length) or `None`. `row_index` names the row in errors.
pub(crate) type QuantizeRow = fn(row: &[f32], imatrix: Option<&[f32]>, out: &mut [u8], row_index: usize) -> Result<()>;

/// One ggml block type.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Codec {
    /// ggml's name in lower case (`q4_k`, `iq4_xs`): the scheme is `ggml:` and this.
    pub name: &'static str,
    /// The `ggml_type` number GGUF stores.
    pub ggml_type: u32,
    /// Elements per block.
    pub block_elements: usize,
    /// Bytes per block.
    pub block_bytes: usize,
    /// ggml's `dequantize_row_*`, one block.
    pub decode: DecodeBlock,
    /// ggml's quantizer (`quantize_row_*_ref`, or `quantize_*` with an importance matrix), when
    /// lowbit has it.
    pub quantize: Option<QuantizeRow>,
    /// Whether ggml's quantizer requires an importance matrix (the smallest I-quants).
    pub needs_imatrix: bool,
    /// The implementation, version and function reproduced, and the script that checks it.
    pub source: &'static str,
}

/// ggml's quantizers given an importance matrix for block types whose quantizer without one is
/// a block recipe of `quant::blocks` (scheme name, elements and bytes per block, the quantizer):
/// ggml's `quantize_q4_0` runs another search when it has weights. (Q8_0 and MXFP4 ignore them.)
pub(crate) const IMPORTANCE_QUANTIZERS: &[(&str, usize, usize, QuantizeRow)] =
    &[("ggml:q4_0", 32, 18, legacy::quantize_q4_0_with_importance)];

/// The importance quantizer of the recipe scheme named `scheme`, if ggml has one.
pub(crate) fn importance_quantizer(scheme: &str) -> Option<(usize, usize, QuantizeRow)> {
    IMPORTANCE_QUANTIZERS.iter().find(|(name, ..)| *name == scheme).map(|&(_, e, b, q)| (e, b, q))
}

/// Every ggml block type lowbit reads.
pub(crate) fn codecs() -> impl Iterator<Item = &'static Codec> {
    legacy::CODECS.iter().chain(kquants::CODECS).chain(ternary::CODECS).chain(iquants::CODECS)
}

/// The codec named `name` (lower case, without `ggml:`).
pub(crate) fn codec(name: &str) -> Option<&'static Codec> {
    codecs().find(|c| c.name == name)
}

/// The codec of GGUF type id `ggml_type`.
pub(crate) fn codec_of_type(ggml_type: u32) -> Option<&'static Codec> {
    codecs().find(|c| c.ggml_type == ggml_type)
}

impl Codec {
    /// Bytes of a row of `cols` elements; an error unless `cols` is a whole number of blocks
    /// (ggml's `ggml_row_size` asserts it and aborts).
    pub(crate) fn row_bytes(&self, cols: usize, what: &str) -> Result<usize> {
        if cols % self.block_elements != 0 {
            return Err(self.refuse(
                what,
                format!(
                    "a row of {cols} elements is not a whole number of blocks of {} (ggml asserts it and aborts)",
                    self.block_elements
                ),
            ));
        }
        Ok(cols / self.block_elements * self.block_bytes)
    }

    /// Decodes whole blocks: `data` holds `out.len() / block_elements` blocks.
    pub(crate) fn decode_blocks(&self, data: &[u8], out: &mut [f32]) -> Result<()> {
        let blocks = out.len() / self.block_elements;
        if out.len() % self.block_elements != 0 || data.len() != blocks * self.block_bytes {
            return Err(self.refuse(
                "dequantize",
                format!("{} bytes are not {} elements in blocks of {}", data.len(), out.len(), self.block_elements),
            ));
        }
        for (block, values) in data.chunks_exact(self.block_bytes).zip(out.chunks_exact_mut(self.block_elements)) {
            (self.decode)(block, values);
        }
        Ok(())
    }

    /// Quantizes `rows` rows of `cols` elements (`x` row-major) into the bytes a GGUF holds, row
    /// after row; `imatrix` has one weight per column. Nothing is returned on error.
    pub(crate) fn quantize_rows(&self, x: &[f32], cols: usize, imatrix: Option<&[f32]>) -> Result<Vec<u8>> {
        let quantize =
            self.quantize.ok_or_else(|| self.refuse("quantize", "lowbit does not quantize this type".into()))?;
        let row_bytes = self.row_bytes(cols, "quantize")?;
        if let Some(w) = imatrix {
            if w.len() != cols {
                return Err(self.refuse(
                    "quantize",
                    format!("the importance matrix has {} weights for rows of {cols} elements", w.len()),
                ));
            }
        } else if self.needs_imatrix {
            return Err(self.refuse("quantize", "ggml requires an importance matrix for this type".into()));
        }
        let rows = x.len().checked_div(cols).unwrap_or(0);
        if rows * cols != x.len() {
            return Err(self.refuse("quantize", format!("{} values are not rows of {cols}", x.len())));
        }
        let mut out = vec![0u8; rows * row_bytes];
        for (r, (row, dst)) in x.chunks_exact(cols.max(1)).zip(out.chunks_exact_mut(row_bytes.max(1))).enumerate() {
            quantize(row, imatrix, dst, r)?;
        }
        Ok(out)
    }

    fn refuse(&self, what: &str, message: String) -> Error {
        Error::InvalidOp { op: format!("ggml:{} {what}", self.name), message }
    }
}

/// float32 arithmetic as x86-64's SSE instructions do it, NaN bits included.
pub(crate) mod arith {
    /// x86-64's default NaN (an invalid operation on numbers).
    const DEFAULT_NAN: u32 = 0xFFC0_0000;

    #[inline(always)]
    fn nan_of(a: f32, b: f32) -> f32 {
        if a.is_nan() {
            f32::from_bits(a.to_bits() | 0x0040_0000)
        } else if b.is_nan() {
            f32::from_bits(b.to_bits() | 0x0040_0000)
        } else {
            f32::from_bits(DEFAULT_NAN)
        }
    }

    /// `a * b`.
    #[inline(always)]
    pub(crate) fn mul(a: f32, b: f32) -> f32 {
        let r = a * b;
        if r.is_nan() {
            nan_of(a, b)
        } else {
            r
        }
    }

    /// `a + b`.
    #[inline(always)]
    pub(crate) fn add(a: f32, b: f32) -> f32 {
        let r = a + b;
        if r.is_nan() {
            nan_of(a, b)
        } else {
            r
        }
    }

    /// `a - b`.
    #[inline(always)]
    pub(crate) fn sub(a: f32, b: f32) -> f32 {
        let r = a - b;
        if r.is_nan() {
            nan_of(a, b)
        } else {
            r
        }
    }

    /// `a / b`.
    #[inline(always)]
    pub(crate) fn div(a: f32, b: f32) -> f32 {
        let r = a / b;
        if r.is_nan() {
            nan_of(a, b)
        } else {
            r
        }
    }

    /// `sqrtf(a)` (`sqrtss`).
    #[inline(always)]
    pub(crate) fn sqrt(a: f32) -> f32 {
        if a.is_nan() {
            f32::from_bits(a.to_bits() | 0x0040_0000)
        } else if a < 0.0 {
            f32::from_bits(DEFAULT_NAN)
        } else {
            a.sqrt()
        }
    }

    /// `-a` (a sign flip: a NaN keeps its payload, not quieted).
    #[inline(always)]
    pub(crate) fn neg(a: f32) -> f32 {
        f32::from_bits(a.to_bits() ^ 0x8000_0000)
    }

    /// `fabsf(a)` (the sign cleared, a NaN's payload kept).
    #[inline(always)]
    pub(crate) fn abs(a: f32) -> f32 {
        f32::from_bits(a.to_bits() & 0x7FFF_FFFF)
    }

    /// ggml's `nearest_int`: `fval + 12582912.f` read as an integer, its low 23 bits less 2^22
    /// (round to nearest even for |fval| <= 2^22; beyond that, and for Inf and NaN, what the bit
    /// trick gives: its `assert` is compiled out of the release build).
    #[inline(always)]
    pub(crate) fn nearest_int(fval: f32) -> i32 {
        let val = add(fval, 12_582_912.0);
        (val.to_bits() & 0x007F_FFFF) as i32 - 0x0040_0000
    }

    /// C's `(int)x` on x86-64 (`cvttss2si`): truncation, `INT_MIN` for NaN and out of range.
    #[inline(always)]
    pub(crate) fn to_int(x: f32) -> i32 {
        if !(-2_147_483_648.0..2_147_483_648.0).contains(&x) {
            i32::MIN
        } else {
            x as i32
        }
    }

    /// glibc's `lroundf` on x86-64: half away from zero; `LONG_MIN` for NaN and beyond `long`
    /// (glibc returns `(long) x`, `cvttss2si`).
    #[inline(always)]
    pub(crate) fn lround(x: f32) -> i64 {
        if !(-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&x) {
            i64::MIN
        } else {
            x.round() as i64
        }
    }

    /// C's `MAX(a, b)` macro: `a > b ? a : b`.
    #[inline(always)]
    pub(crate) fn max(a: f32, b: f32) -> f32 {
        if a > b {
            a
        } else {
            b
        }
    }
}

/// `sum(x * x)` as gcc compiles ggml's `sum_x2 += x[j]*x[j]` loops for x86-64 (seen in
/// libggml-base's `quantize_q4_1`, `quantize_q5_0`, `quantize_q5_1`): the squares four at a time,
/// added in order with the operands of the second and third addition swapped, which decides
/// which of two NaNs the sum keeps. `x.len()` is a multiple of 4 (whole blocks).
pub(crate) fn sum_of_squares(x: &[f32]) -> f32 {
    let mut s = 0.0f32;
    for q in x.chunks_exact(4) {
        s = arith::add(s, arith::mul(q[0], q[0]));
        s = arith::add(arith::mul(q[1], q[1]), s);
        s = arith::add(arith::mul(q[2], q[2]), s);
        s = arith::add(s, arith::mul(q[3], q[3]));
    }
    s
}

/// ggml's importance weight `qw * sqrtf(sigma2 + x*x)`, with the operands as gcc orders them
/// (`x*x + sigma2`, then `sqrt * qw`: which NaN the weight keeps).
#[inline(always)]
pub(crate) fn importance_weight(qw: f32, sigma2: f32, x: f32) -> f32 {
    arith::mul(arith::sqrt(arith::add(arith::mul(x, x), sigma2)), qw)
}

/// The float32 operations of a decoder.
pub(crate) trait Ops {
    fn mul(a: f32, b: f32) -> f32;
    fn add(a: f32, b: f32) -> f32;
    fn sub(a: f32, b: f32) -> f32;
}

/// x86-64's operations, NaN bits included ([`arith`]).
pub(crate) struct Exact;

/// The plain operations: the same bits as [`Exact`] wherever no operand is NaN and no operation
/// is invalid (0 * Inf, Inf - Inf), which holds in a block whose scales (`d`, `dmin`) are
/// finite; the compiler vectorises them.
pub(crate) struct Finite;

impl Ops for Exact {
    #[inline(always)]
    fn mul(a: f32, b: f32) -> f32 {
        arith::mul(a, b)
    }
    #[inline(always)]
    fn add(a: f32, b: f32) -> f32 {
        arith::add(a, b)
    }
    #[inline(always)]
    fn sub(a: f32, b: f32) -> f32 {
        arith::sub(a, b)
    }
}

impl Ops for Finite {
    #[inline(always)]
    fn mul(a: f32, b: f32) -> f32 {
        a * b
    }
    #[inline(always)]
    fn add(a: f32, b: f32) -> f32 {
        a + b
    }
    #[inline(always)]
    fn sub(a: f32, b: f32) -> f32 {
        a - b
    }
}

/// Whether the float16 fields at `at` are all finite (neither Inf nor NaN).
#[inline(always)]
pub(crate) fn finite(block: &[u8], at: &[usize]) -> bool {
    at.iter().all(|&i| u16::from_le_bytes([block[i], block[i + 1]]) & 0x7C00 != 0x7C00)
}

/// ggml's `GGML_FP16_TO_FP32` (exact; a NaN quieted, its payload's top bits kept), by the
/// rounding core, in a table of the 65536 codes.
#[inline(always)]
pub(crate) fn half_to_f32(bits: u16) -> f32 {
    static TABLE: std::sync::OnceLock<Vec<f32>> = std::sync::OnceLock::new();
    let table = TABLE.get_or_init(|| {
        let opts = crate::CastOptions::default();
        (0..=u16::MAX)
            .map(|h| {
                let code = crate::convert_code(crate::DType::Float16, crate::DType::Float, u64::from(h), &opts)
                    .expect("float16 widens to float32");
                f32::from_bits(code as u32)
            })
            .collect()
    });
    table[usize::from(bits)]
}

/// ggml's `GGML_FP32_TO_FP16`: nearest even by the rounding core, overflow to Inf, a NaN stored
/// `0x7E00` with its sign.
pub(crate) fn f32_to_half(x: f32) -> u16 {
    if x.is_nan() {
        return ((x.to_bits() >> 16) as u16 & 0x8000) | 0x7E00;
    }
    let code = crate::convert_code(
        crate::DType::Float,
        crate::DType::Float16,
        u64::from(x.to_bits()),
        &crate::CastOptions::default(),
    )
    .expect("float32 narrows to float16");
    code as u16
}

/// The little-endian float16 at `block[at..at + 2]`, as float32.
#[inline(always)]
pub(crate) fn half_at(block: &[u8], at: usize) -> f32 {
    half_to_f32(u16::from_le_bytes([block[at], block[at + 1]]))
}

/// Stores `x` as ggml's float16 at `out[at..at + 2]`.
#[inline(always)]
pub(crate) fn put_half(out: &mut [u8], at: usize, x: f32) {
    out[at..at + 2].copy_from_slice(&f32_to_half(x).to_le_bytes());
}

#[cfg(test)]
mod tests;
