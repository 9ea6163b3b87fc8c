//! bitsandbytes 0.50's 4-bit weights (`quantize_4bit` / `dequantize_4bit`, its CPU backend):
//! NF4 or FP4 codes of the flattened weight in blocks of `blocksize` elements, each block scaled
//! by its absolute maximum; optionally ("nested", `compress_statistics=True`) those maxima less
//! their mean quantized again, 256 per block, by the 8-bit dynamic map.
//!
//! The quantizer is bitsandbytes' default (torch) kernel, the one its CPU backend runs:
//! `x * (1 / max(absmax, 1e-38))` clamped to [-1, 1] (a final short block divides by its
//! maximum instead, and stores the clamped maximum), then `torch.bucketize` against the midpoints
//! of the sorted code table (a value on a midpoint takes the lower code; NaN the last), mapped
//! back through the table's `argsort`. Two codes per byte, the first in the high nibble. The
//! nested level is its C kernel `quantize_cpu` (a 65536-entry table built from the map's
//! midpoints, indexed by `(v + 1) * 0.5` times 65535 plus 0.5 in one fused multiply-add,
//! truncated) after torch's float32 `mean` (a cascade sum of 8-lane vectors, then a division).
//!
//! Dequantize follows the kernel the CPU backend picks on an x86-64 machine with AVX-512
//! ([`DequantPath`]).

use super::{take, Extras, Family, Nested, Options, Params, StoredTensor, Weight};
use crate::alloc_prelude::*;
use crate::convert::CastOptions;
use crate::dtype::DType;
use crate::error::{quoted, Error, Result};
use crate::plan::Plan;
use crate::quant::blocks::{Quantized, Scales, Scheme};
use crate::Profile;

/// The row.
pub(super) const ROW: Family = Family {
    name: "bnb",
    grammar: "bnb:nf4|fp4[,blocksize=N][,nested]",
    source: "bitsandbytes 0.50.2 functional.quantize_4bit / dequantize_4bit (CPU backend: \
             backends/default/ops.py quantize_4bit, csrc/cpu_ops.cpp dequantizeBlockwise4bitCpu and \
             quantize_cpu for the nested absmax), QuantState.as_dict(packed=True); checked by \
             scripts/gen_integer_bnb_fixtures.py and scripts/crosscheck_bnb.py",
    parse,
    quantize,
    dequantize,
    storage,
    from_storage,
};

/// The block sizes `quantize_4bit` and `dequantize_4bit` accept.
const BLOCK_SIZES: [usize; 8] = [32, 64, 128, 256, 512, 1024, 2048, 4096];
/// First-level maxima per second-level block (`quantize_blockwise(..., blocksize=256)`).
const NESTED_BLOCK: usize = 256;

/// A 4-bit code table as bitsandbytes holds it.
struct CodeTable {
    /// `quant_type`.
    name: &'static str,
    /// `get_4bit_type(name)` (float32 bits): the table the quantizer sorts and checkpoints store
    /// as `quant_map`, and the torch dequantize kernel indexes.
    values: [u32; 16],
    /// `torch.argsort(values)` as the quantizer takes it: the code of each sorted position
    /// (FP4's +0 twice, code 0 first).
    order: [u8; 16],
    /// The C scalar kernel's `fp4_lut`/`nf4_lut` (FP4 code 8 is -0.0 there).
    scalar_values: [u32; 16],
}

const NF4_VALUES: [u32; 16] = [
    0xBF80_0000,
    0xBF32_39B1,
    0xBF06_6B30,
    0xBECA_32A0,
    0xBE91_A24D,
    0xBE3D_353F,
    0xBDBA_7871,
    0x0000_0000,
    0x3DA2_FAFF,
    0x3E24_CAE3,
    0x3E7C_04DD,
    0x3EAD_033A,
    0x3EE1_A4B8,
    0x3F10_07AB,
    0x3F39_13B3,
    0x3F80_0000,
];
const FP4_VALUES: [u32; 16] = [
    0x0000_0000,
    0x3BAA_AAAB,
    0x3F2A_AAAB,
    0x3F80_0000,
    0x3EAA_AAAB,
    0x3F00_0000,
    0x3E2A_AAAB,
    0x3E80_0000,
    0x0000_0000,
    0xBBAA_AAAB,
    0xBF2A_AAAB,
    0xBF80_0000,
    0xBEAA_AAAB,
    0xBF00_0000,
    0xBE2A_AAAB,
    0xBE80_0000,
];
const FP4_SCALAR_VALUES: [u32; 16] = [
    0x0000_0000,
    0x3BAA_AAAB,
    0x3F2A_AAAB,
    0x3F80_0000,
    0x3EAA_AAAB,
    0x3F00_0000,
    0x3E2A_AAAB,
    0x3E80_0000,
    0x8000_0000,
    0xBBAA_AAAB,
    0xBF2A_AAAB,
    0xBF80_0000,
    0xBEAA_AAAB,
    0xBF00_0000,
    0xBE2A_AAAB,
    0xBE80_0000,
];

/// bitsandbytes' two 4-bit types (functional.get_4bit_type; cpu_ops.cpp's tables).
const TABLES: [CodeTable; 2] = [
    CodeTable {
        name: "nf4",
        values: NF4_VALUES,
        order: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
        scalar_values: NF4_VALUES,
    },
    CodeTable {
        name: "fp4",
        values: FP4_VALUES,
        order: [11, 10, 13, 12, 15, 14, 9, 0, 8, 1, 6, 7, 4, 5, 2, 3],
        scalar_values: FP4_SCALAR_VALUES,
    },
];

/// `create_dynamic_map()` (signed, 7 exponent bits, 8 bits; float32 bits, sorted): the nested
/// level's code table, stored as `nested_quant_map`.
const DYNAMIC_MAP: [u32; 256] = [
    0xBF7E3333, 0xBF7A999A, 0xBF770000, 0xBF736666, 0xBF6FCCCD, 0xBF6C3333, 0xBF68999A, 0xBF650000, 0xBF616666,
    0xBF5DCCCD, 0xBF5A3333, 0xBF56999A, 0xBF530000, 0xBF4F6666, 0xBF4BCCCD, 0xBF483333, 0xBF44999A, 0xBF410000,
    0xBF3D6666, 0xBF39CCCD, 0xBF363334, 0xBF32999A, 0xBF2F0000, 0xBF2B6666, 0xBF27CCCD, 0xBF243334, 0xBF20999A,
    0xBF1D0000, 0xBF196666, 0xBF15CCCD, 0xBF123334, 0xBF0E999A, 0xBF0B0000, 0xBF076666, 0xBF03CCCC, 0xBF003333,
    0xBEF93332, 0xBEF20000, 0xBEEACCCC, 0xBEE3999A, 0xBEDC6666, 0xBED53333, 0xBECE0000, 0xBEC6CCCC, 0xBEBF999A,
    0xBEB86666, 0xBEB13333, 0xBEAA0000, 0xBEA2CCCC, 0xBE9B999A, 0xBE946666, 0xBE8D3334, 0xBE860000, 0xBE7D9999,
    0xBE6F3333, 0xBE60CCCD, 0xBE526666, 0xBE440000, 0xBE35999A, 0xBE273333, 0xBE18CCCD, 0xBE0A6666, 0xBDF80000,
    0xBDDB3334, 0xBDC9EB85, 0xBDC428F7, 0xBDBE6667, 0xBDB8A3D7, 0xBDB2E148, 0xBDAD1EB8, 0xBDA75C2A, 0xBDA1999A,
    0xBD9BD70A, 0xBD96147B, 0xBD9051EB, 0xBD8A8F5D, 0xBD84CCCD, 0xBD7E147B, 0xBD728F5D, 0xBD670A3D, 0xBD5B851F,
    0xBD500000, 0xBD447AE1, 0xBD38F5C3, 0xBD2D70A3, 0xBD21EB85, 0xBD166667, 0xBD0AE148, 0xBCFEB852, 0xBCE7AE15,
    0xBCD0A3D7, 0xBCB9999A, 0xBCA28F5D, 0xBC8B851F, 0xBC68F5C3, 0xBC3AE148, 0xBC1F3B64, 0xBC160418, 0xBC0CCCCD,
    0xBC039581, 0xBBF4BC6A, 0xBBE24DD3, 0xBBCFDF3B, 0xBBBD70A4, 0xBBAB020D, 0xBB989374, 0xBB8624DD, 0xBB676C8A,
    0xBB428F5C, 0xBB1DB22D, 0xBAF1A9FC, 0xBAA7EF9D, 0xBA7765FF, 0xBA59E83E, 0xBA3C6A80, 0xBA1EECC1, 0xBA016F01,
    0xB9C7E283, 0xB98CE705, 0xB923D70B, 0xB8BA1F4B, 0xB88AEFB3, 0xB8378034, 0xB7B24206, 0xB70205FF, 0xB65A1A94,
    0xB513A3B7, 0x00000000, 0x3513A3B7, 0x365A1A94, 0x370205FF, 0x37B24206, 0x38378034, 0x388AEFB3, 0x38BA1F4B,
    0x3923D70B, 0x398CE705, 0x39C7E283, 0x3A016F01, 0x3A1EECC1, 0x3A3C6A80, 0x3A59E83E, 0x3A7765FF, 0x3AA7EF9D,
    0x3AF1A9FC, 0x3B1DB22D, 0x3B428F5C, 0x3B676C8A, 0x3B8624DD, 0x3B989374, 0x3BAB020D, 0x3BBD70A4, 0x3BCFDF3B,
    0x3BE24DD3, 0x3BF4BC6A, 0x3C039581, 0x3C0CCCCD, 0x3C160418, 0x3C1F3B64, 0x3C3AE148, 0x3C68F5C3, 0x3C8B851F,
    0x3CA28F5D, 0x3CB9999A, 0x3CD0A3D7, 0x3CE7AE15, 0x3CFEB852, 0x3D0AE148, 0x3D166667, 0x3D21EB85, 0x3D2D70A3,
    0x3D38F5C3, 0x3D447AE1, 0x3D500000, 0x3D5B851F, 0x3D670A3D, 0x3D728F5D, 0x3D7E147B, 0x3D84CCCD, 0x3D8A8F5D,
    0x3D9051EB, 0x3D96147B, 0x3D9BD70A, 0x3DA1999A, 0x3DA75C2A, 0x3DAD1EB8, 0x3DB2E148, 0x3DB8A3D7, 0x3DBE6667,
    0x3DC428F7, 0x3DC9EB85, 0x3DDB3334, 0x3DF80000, 0x3E0A6666, 0x3E18CCCD, 0x3E273333, 0x3E35999A, 0x3E440000,
    0x3E526666, 0x3E60CCCD, 0x3E6F3333, 0x3E7D9999, 0x3E860000, 0x3E8D3334, 0x3E946666, 0x3E9B999A, 0x3EA2CCCC,
    0x3EAA0000, 0x3EB13333, 0x3EB86666, 0x3EBF999A, 0x3EC6CCCC, 0x3ECE0000, 0x3ED53333, 0x3EDC6666, 0x3EE3999A,
    0x3EEACCCC, 0x3EF20000, 0x3EF93332, 0x3F003333, 0x3F03CCCC, 0x3F076666, 0x3F0B0000, 0x3F0E999A, 0x3F123334,
    0x3F15CCCD, 0x3F196666, 0x3F1D0000, 0x3F20999A, 0x3F243334, 0x3F27CCCD, 0x3F2B6666, 0x3F2F0000, 0x3F32999A,
    0x3F363334, 0x3F39CCCD, 0x3F3D6666, 0x3F410000, 0x3F44999A, 0x3F483333, 0x3F4BCCCD, 0x3F4F6666, 0x3F530000,
    0x3F56999A, 0x3F5A3333, 0x3F5DCCCD, 0x3F616666, 0x3F650000, 0x3F68999A, 0x3F6C3333, 0x3F6FCCCD, 0x3F736666,
    0x3F770000, 0x3F7A999A, 0x3F7E3333, 0x3F800000,
];

/// Which of the CPU backend's dequantize kernels a weight of `cols` input features takes on an
/// x86-64 machine with AVX-512 (backends/cpu/ops.py, cpu_ops.cpp), and how each computes:
/// the product `code * absmax` in float32 throughout, then the cast to the output dtype.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum DequantPath {
    /// An odd last dimension, or a block of 2048 or more on AVX-512: the torch fallback
    /// (`_dequantize_4bit_compute`, under `torch.compile`): blocks of the flattened weight,
    /// `get_4bit_type`'s table, `Tensor.to` for the cast, but every NaN as bfloat16 0x7FC0.
    Torch,
    /// A last dimension that is a multiple of 16: the AVX-512 kernel. It indexes the maxima as
    /// `row * (cols / blocksize) + col / blocksize`, which is the flattened block only where
    /// `cols` is a multiple of `blocksize`; `vcvtps2ph` for float16, `vcvtneps2bf16` for bfloat16
    /// (subnormal inputs flushed to a zero of their sign, a NaN's top bits kept and quieted).
    Avx512,
    /// Any other even last dimension: the scalar loop, blocks of the flattened weight, its own
    /// table (FP4 code 8 is -0.0), F16C for float16 and `(bits + 0x7FFF + lsb) >> 16` for
    /// bfloat16 with no NaN case.
    Scalar,
}

impl DequantPath {
    fn of(cols: usize, blocksize: usize) -> DequantPath {
        if cols % 2 == 1 || blocksize >= 2048 {
            DequantPath::Torch
        } else if cols % 16 == 0 {
            DequantPath::Avx512
        } else {
            DequantPath::Scalar
        }
    }
}

fn table(format: &str) -> Option<&'static CodeTable> {
    TABLES.iter().find(|t| t.name == format)
}

fn parse(format: &str, options: &mut Options<'_>) -> Result<Params> {
    let bad = |message: String| Error::InvalidOp { op: format!("scheme bnb:{format}"), message };
    let t = table(format).ok_or_else(|| bad("bitsandbytes' 4-bit types are nf4 and fp4".into()))?;
    let blocksize = match take(options, "blocksize") {
        None => 64,
        Some(v) => v.parse::<usize>().ok().filter(|b| BLOCK_SIZES.contains(b)).ok_or_else(|| {
            bad(format!("blocksize={v}: quantize_4bit takes 32, 64, 128, 256, 512, 1024, 2048, 4096"))
        })?,
    };
    let mut choices = vec![("format", t.name)];
    match take(options, "nested") {
        None => {}
        Some("") => choices.push(("nested", "true")),
        Some(v) => return Err(bad(format!("nested={v}: nested is a flag, without a value"))),
    }
    Ok(Params { family: "bnb", bits: 4, group: Some(blocksize), symmetric: true, act_order: false, choices })
}

/// The table, block size and nesting of parsed options.
fn options(params: &Params) -> (&'static CodeTable, usize, bool) {
    let t = table(params.choice("format").unwrap_or_default()).expect("parsed by the row");
    (t, params.group.expect("parsed by the row"), params.choice("nested").is_some())
}

fn invalid(what: &str, message: String) -> Error {
    Error::InvalidOp { op: format!("bnb {what}"), message }
}

/// The weight widened to float32 (exact: `A.float()`).
fn widen(w: &Weight<'_>) -> Result<Vec<f32>> {
    if w.dtype == DType::Float {
        return Ok(w.raw.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect());
    }
    let n = w.raw.len() / 2;
    let mut wide = vec![0u8; 4 * n];
    Plan::new(w.dtype, DType::Float, &CastOptions::with_profile(Profile::Torch))?.run(w.raw, &mut wide, n)?;
    Ok(wide.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect())
}

/// torch's `abs().max(dim=-1)` of a whole block: a NaN wins, the first one's magnitude bits as
/// they are (a signalling NaN stays one).
fn block_absmax(xs: &[f32]) -> f32 {
    // Magnitudes order as their bits do (a loop that vectorises); a NaN's bits are above Inf's.
    let m = xs.iter().fold(0u32, |m, x| m.max(x.to_bits() & 0x7FFF_FFFF));
    if m > 0x7F80_0000 {
        let first = xs.iter().find(|x| x.is_nan()).expect("a NaN's bits");
        return f32::from_bits(first.to_bits() & 0x7FFF_FFFF);
    }
    f32::from_bits(m)
}

/// torch's `abs().max()` of the short last block (a full reduction): any NaN gives the NaN of all
/// ones bits, 0xFFFFFFFF, whatever NaN it met.
fn tail_absmax(xs: &[f32]) -> f32 {
    let m = block_absmax(xs);
    if m.is_nan() {
        f32::from_bits(u32::MAX)
    } else {
        m
    }
}

/// `a + b` as x86's `addss a, b` gives it, whichever operand order the compiler picks: a NaN
/// operand comes through quieted, `a`'s first (which operand a compiled loop puts first was
/// measured: see [`torch_sum`]).
#[inline(always)]
fn plus(a: f32, b: f32) -> f32 {
    if a.is_nan() {
        f32::from_bits(a.to_bits() | 0x0040_0000)
    } else if b.is_nan() {
        f32::from_bits(b.to_bits() | 0x0040_0000)
    } else {
        a + b
    }
}

/// `torch.clamp(v, -1, 1)`: NaN passes.
#[inline(always)]
fn clamp_unit(v: f32) -> f32 {
    v.clamp(-1.0, 1.0)
}

/// `torch.bucketize(v, bounds)` (right=False): the first bound not below `v` (its binary search
/// tests `!(bound >= v)`, so a NaN passes every bound and takes the last bucket).
#[inline(always)]
fn bucket(bounds: &[f32; 15], v: f32) -> usize {
    bounds.iter().map(|&b| usize::from(b < v || v.is_nan())).sum()
}

/// The midpoints of the sorted table, as `(code[order[:-1]] + code[order[1:]]) / 2` in float32.
fn bounds(t: &CodeTable) -> [f32; 15] {
    let sorted: Vec<f32> = t.order.iter().map(|&i| f32::from_bits(t.values[usize::from(i)])).collect();
    core::array::from_fn(|i| (sorted[i] + sorted[i + 1]) / 2.0)
}

/// bitsandbytes' `quantize_4bit` on the flattened values: the code of each element and the
/// maximum of each block.
fn quantize_values(t: &CodeTable, blocksize: usize, x: &[f32]) -> (Vec<u8>, Vec<f32>) {
    let b = bounds(t);
    // The code of each bucket: `order[bucketize(...)]`.
    let code_of = |v: f32| t.order[bucket(&b, v)];
    let n = x.len();
    let full = n - n % blocksize;
    let mut codes = vec![0u8; n];
    let mut absmax = Vec::with_capacity(n.div_ceil(blocksize));
    for (xs, cs) in x[..full].chunks_exact(blocksize).zip(codes[..full].chunks_exact_mut(blocksize)) {
        let m = block_absmax(xs);
        absmax.push(m);
        // 1.0 / absmax.clamp(min=1e-38): torch's clamp passes a NaN.
        let factor = 1.0 / if m < 1e-38 { 1e-38 } else { m };
        for (c, &v) in cs.iter_mut().zip(xs) {
            *c = code_of(clamp_unit(v * factor));
        }
    }
    if full < n {
        let m = tail_absmax(&x[full..]);
        // The short block's maximum is stored clamped, and its elements divided by it.
        let m = if m < 1e-38 { 1e-38 } else { m };
        absmax.push(m);
        for (c, &v) in codes[full..].iter_mut().zip(&x[full..]) {
            *c = code_of(clamp_unit(v / m));
        }
    }
    (codes, absmax)
}

/// The code an odd element count is padded with: the code of 0.0 (`F.pad` of the scaled values).
fn padding_code(t: &CodeTable) -> u8 {
    t.order[bucket(&bounds(t), 0.0)]
}

/// torch's float32 `sum` of a contiguous vector on one thread (SumKernel.cpp's `cascade_sum`):
/// 8-lane vectors summed four at a time into cascading accumulators, the scalar tail, then the
/// lanes in order. Eight lanes on x86-64 (torch 2.15's AVX2 and AVX-512 machines alike, as
/// measured); with two threads torch sums long vectors in per-thread chunks (300000 maxima gave
/// another sum, 70000 the same).
fn torch_sum(xs: &[f32]) -> f32 {
    const LANES: usize = 8;
    if xs.len() < LANES {
        return plus(0.0, row_sum::<1>(xs.len(), |i| [xs[i]])[0]);
    }
    let vectors = xs.len() / LANES;
    let lanes = row_sum::<LANES>(vectors, |i| core::array::from_fn(|l| xs[i * LANES + l]));
    // torch's compiled loop adds these the other way round: a NaN added wins over the total's.
    let mut total = 0.0f32;
    for &x in &xs[vectors * LANES..] {
        total = plus(x, total);
    }
    for l in lanes {
        total = plus(l, total);
    }
    // The output starts at 0 and the sum is added to it.
    plus(0.0, total)
}

/// SumKernel.cpp's `row_sum` of `size` items of `W` lanes: four interleaved `multi_row_sum`
/// accumulators, the leftover items into the first, then the four added.
fn row_sum<const W: usize>(size: usize, item: impl Fn(usize) -> [f32; W]) -> [f32; W] {
    const ILP: usize = 4;
    let rows = size / ILP;
    let mut partial = multi_row_sum::<W, ILP>(rows, |i, k| item(i * ILP + k));
    for i in rows * ILP..size {
        add(&mut partial[0], &item(i));
    }
    let [mut first, rest @ ..] = partial;
    for r in rest {
        add(&mut first, &r);
    }
    first
}

fn add<const W: usize>(acc: &mut [f32; W], x: &[f32; W]) {
    acc.iter_mut().zip(x).for_each(|(a, b)| *a = plus(*a, *b));
}

/// SumKernel.cpp's `multi_row_sum`: `nrows` running sums over `size` steps, cascaded through four
/// levels every `2^level_power` steps.
fn multi_row_sum<const W: usize, const R: usize>(
    size: usize,
    item: impl Fn(usize, usize) -> [f32; W],
) -> [[f32; W]; R] {
    const LEVELS: usize = 4;
    let ceil_log2 = if size <= 2 { 1 } else { usize::BITS - (size - 1).leading_zeros() } as usize;
    let level_power = (ceil_log2 / LEVELS).max(4);
    let level_step = 1usize << level_power;
    let level_mask = level_step - 1;
    let mut acc = [[[0.0f32; W]; R]; LEVELS];
    let mut i = 0;
    while i + level_step <= size {
        for _ in 0..level_step {
            for (k, a) in acc[0].iter_mut().enumerate() {
                add(a, &item(i, k));
            }
            i += 1;
        }
        for j in 1..LEVELS {
            let (low, high) = acc.split_at_mut(j);
            for (upper, lower) in high[0].iter_mut().zip(low[j - 1].iter_mut()) {
                add(upper, lower);
                *lower = [0.0; W];
            }
            if i & (level_mask << (j * level_power)) != 0 {
                break;
            }
        }
    }
    while i < size {
        for (k, a) in acc[0].iter_mut().enumerate() {
            add(a, &item(i, k));
        }
        i += 1;
    }
    let (first, rest) = acc.split_at_mut(1);
    for level in rest.iter() {
        for (a, upper) in first[0].iter_mut().zip(level) {
            add(a, upper);
        }
    }
    acc[0]
}

/// cpu_ops.cpp's `build_quantize_lut`: the code of each of 65536 points of [-1, 1].
fn dynamic_lut() -> Vec<u8> {
    let map: Vec<f32> = DYNAMIC_MAP.iter().map(|&b| f32::from_bits(b)).collect();
    let mid: Vec<f32> = map.windows(2).map(|w| 0.5 * (w[0] + w[1])).collect();
    let mut lut = vec![0u8; 65536];
    let mut code = 0usize;
    for (i, slot) in lut.iter_mut().enumerate() {
        let v = -1.0f32 + (2.0f32 * i as f32) / 65535.0;
        while code < 255 && mid[code] < v {
            code += 1;
        }
        *slot = code as u8;
    }
    lut
}

/// cpu_ops.cpp's `quantize_cpu` (float32, blocks of 256): each block's maximum (NaN skipped, at
/// least 0), then each value's table point, `(int)fma((clamp(v / max) + 1) * 0.5, 65535, 0.5)`
/// (a NaN converts to 0x80000000, point 0).
fn quantize_nested(values: &[f32]) -> (Vec<u8>, Vec<f32>) {
    let lut = dynamic_lut();
    let mut codes = vec![0u8; values.len()];
    let mut scales = Vec::with_capacity(values.len().div_ceil(NESTED_BLOCK));
    for (xs, cs) in values.chunks(NESTED_BLOCK).zip(codes.chunks_mut(NESTED_BLOCK)) {
        let m = xs.iter().fold(0.0f32, |m, &x| if m < x.abs() { x.abs() } else { m });
        scales.push(m);
        if m == 0.0 {
            continue;
        }
        let inv = 1.0 / m;
        for (c, &x) in cs.iter_mut().zip(xs) {
            let v = clamp_unit(x * inv);
            let t = (v + 1.0) * 0.5;
            let point = t.mul_add(65535.0, 0.5);
            let index = if point.is_nan() { 0 } else { point as i32 as u16 };
            *c = lut[usize::from(index)];
        }
    }
    (codes, scales)
}

/// The first-level maxima from the nested codes: `dequantize_blockwise` (C, float32:
/// `map[code] * scale`) then `+ offset` in float32.
fn nested_absmax(codes: &[u8], nested: &Nested) -> Vec<f32> {
    codes
        .iter()
        .enumerate()
        .map(|(i, &c)| {
            let scale = nested.scales[i / NESTED_BLOCK];
            plus(times(f32::from_bits(DYNAMIC_MAP[usize::from(c)]), scale), nested.offset)
        })
        .collect()
}

fn quantize(scheme: &Scheme, params: &Params, w: &Weight<'_>) -> Result<Quantized> {
    let (t, blocksize, nested) = options(params);
    let x = widen(w)?;
    let (codes, absmax) = quantize_values(t, blocksize, &x);
    let (scales, nested) = if nested {
        // An empty weight's mean is 0 / 0: x86's default NaN.
        let offset =
            if absmax.is_empty() { f32::from_bits(0xFFC0_0000) } else { torch_sum(&absmax) / absmax.len() as f32 };
        let centered: Vec<f32> = absmax.iter().map(|a| a - offset).collect();
        let (codes, scales) = quantize_nested(&centered);
        (Scales::Codes(codes), Some(Nested { scales, offset, block: NESTED_BLOCK }))
    } else {
        (Scales::Float32(absmax), None)
    };
    Ok(Quantized {
        scheme: scheme.clone(),
        shape: vec![w.rows, w.cols],
        axis: -1,
        elements: codes,
        scales,
        global_scale: None,
        extras: Some(Box::new(Extras { nested, source_dtype: Some(w.dtype), ..Extras::default() })),
    })
}

/// The maxima of `q`, every length checked against its shape.
fn checked_absmax(params: &Params, q: &Quantized) -> Result<Vec<f32>> {
    let (_, blocksize, nested) = options(params);
    let [rows, cols] = match q.shape[..] {
        [r, c] => [r, c],
        _ => return Err(invalid("dequantize", format!("shape {:?} is not (out_features, in_features)", q.shape))),
    };
    let n = rows.checked_mul(cols).ok_or_else(|| Error::TooLarge { what: format!("a {rows}x{cols} weight") })?;
    if q.elements.len() != n {
        return Err(Error::ShapeMismatch { shape: q.shape.clone(), elements: n, actual: q.elements.len() });
    }
    if let Some(at) = q.elements.iter().position(|&c| c > 15) {
        return Err(invalid("dequantize", format!("element {at} holds code {}, above 15", q.elements[at])));
    }
    let blocks = n.div_ceil(blocksize);
    let stored = q.extras.as_ref().and_then(|e| e.nested.as_ref());
    let absmax = match (&q.scales, stored, nested) {
        (Scales::Float32(a), None, false) => a.clone(),
        (Scales::Codes(c), Some(s), true) => {
            if c.len() != blocks || s.scales.len() != blocks.div_ceil(NESTED_BLOCK) || s.block != NESTED_BLOCK {
                return Err(invalid(
                    "dequantize",
                    format!(
                        "nested: {} codes and {} scales of block {} given, the shape needs {blocks} and {} of 256",
                        c.len(),
                        s.scales.len(),
                        s.block,
                        blocks.div_ceil(NESTED_BLOCK)
                    ),
                ));
            }
            nested_absmax(c, s)
        }
        _ => {
            return Err(invalid(
                "dequantize",
                "the scales are float32 maxima, or byte codes with the nested scales under `nested`".into(),
            ))
        }
    };
    if absmax.len() != blocks {
        return Err(invalid("dequantize", format!("{} maxima given, the shape needs {blocks}", absmax.len())));
    }
    Ok(absmax)
}

fn dequantize(params: &Params, q: &Quantized, dtype: DType) -> Result<Vec<u8>> {
    let (t, blocksize, _) = options(params);
    if !matches!(dtype, DType::Float | DType::Float16 | DType::Bfloat16) {
        return Err(Error::UnsupportedDType {
            op: "bnb dequantize",
            dtype: dtype.onnx_name(),
            why: "dequantize_4bit returns float32, float16 or bfloat16",
        });
    }
    let absmax = checked_absmax(params, q)?;
    let cols = q.shape[1];
    let path = DequantPath::of(cols, blocksize);
    let values: Vec<f32> = match path {
        DequantPath::Scalar => table_values(&t.scalar_values),
        DequantPath::Torch | DequantPath::Avx512 => table_values(&t.values),
    };
    let per_row = cols / blocksize;
    // The run of elements from `i` that share a maximum, and its index.
    let segment = |i: usize| match path {
        DequantPath::Avx512 => {
            let (row, col) = (i / cols, i % cols);
            (row * per_row + col / blocksize, (blocksize - col % blocksize).min(cols - col))
        }
        _ => (i / blocksize, blocksize - i % blocksize),
    };
    let n = q.elements.len();
    let width = if dtype == DType::Float { 4 } else { 2 };
    let plan = match dtype {
        DType::Float => None,
        _ => Some(Plan::new(DType::Float, dtype, &CastOptions::with_profile(Profile::Torch))?),
    };
    // The runs of elements sharing a maximum, the sixteen values a code takes in each (in
    // float32, then all cast at once), then every element from its run's table.
    let mut runs = Vec::with_capacity(n.div_ceil(blocksize.min(cols.max(1))) + 1);
    let mut i = 0;
    while i < n {
        let (block, run) = segment(i);
        runs.push((i, run.min(n - i), block));
        i += run.min(n - i);
    }
    let mut wide = vec![0u8; runs.len() * 64];
    for (w, &(_, _, block)) in wide.chunks_exact_mut(64).zip(&runs) {
        for (o, v) in w.chunks_exact_mut(4).zip(&values) {
            o.copy_from_slice(&times(*v, absmax[block]).to_le_bytes());
        }
    }
    let mut narrow = vec![0u8; runs.len() * 16 * width];
    cast(path, dtype, plan.as_ref(), &mut wide, &mut narrow)?;
    let mut out = vec![0u8; n * width];
    for (encoded, &(i, run, _)) in narrow.chunks_exact(16 * width).zip(&runs) {
        let (dst, codes) = (&mut out[i * width..(i + run) * width], &q.elements[i..i + run]);
        // Fixed-width stores (the codes are below 16: checked).
        if width == 4 {
            let table: [[u8; 4]; 16] = core::array::from_fn(|k| encoded[4 * k..4 * k + 4].try_into().expect("4 bytes"));
            for (o, &c) in dst.chunks_exact_mut(4).zip(codes) {
                o.copy_from_slice(&table[usize::from(c & 15)]);
            }
        } else {
            let table: [[u8; 2]; 16] = core::array::from_fn(|k| encoded[2 * k..2 * k + 2].try_into().expect("2 bytes"));
            for (o, &c) in dst.chunks_exact_mut(2).zip(codes) {
                o.copy_from_slice(&table[usize::from(c & 15)]);
            }
        }
    }
    Ok(out)
}

/// `code * scale` as x86 computes it: a NaN scale comes through quieted, 0 * Inf is the
/// default NaN (0xFFC00000).
#[inline(always)]
fn times(code: f32, scale: f32) -> f32 {
    if scale.is_nan() {
        return f32::from_bits(scale.to_bits() | 0x0040_0000);
    }
    let r = code * scale;
    if r.is_nan() {
        f32::from_bits(0xFFC0_0000)
    } else {
        r
    }
}

fn table_values(bits: &[u32; 16]) -> Vec<f32> {
    bits.iter().map(|&b| f32::from_bits(b)).collect()
}

/// float32 products to the output dtype as the path's kernel casts them.
fn cast(path: DequantPath, dtype: DType, plan: Option<&Plan>, wide: &mut [u8], dst: &mut [u8]) -> Result<()> {
    let n = wide.len() / 4;
    if dtype == DType::Float {
        dst.copy_from_slice(wide);
        return Ok(());
    }
    let lane = |b: &[u8]| u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    if (dtype, path) == (DType::Bfloat16, DequantPath::Avx512) {
        // vcvtneps2bf16 treats a subnormal input as a zero of its sign.
        for b in wide.chunks_exact_mut(4) {
            let bits = lane(b);
            if bits & 0x7F80_0000 == 0 {
                b.copy_from_slice(&(bits & 0x8000_0000).to_le_bytes());
            }
        }
    }
    plan.expect("a plan for a narrower dtype").run(wide, dst, n)?;
    if dtype == DType::Bfloat16 {
        for (b, o) in wide.chunks_exact(4).zip(dst.chunks_exact_mut(2)) {
            let bits = lane(b);
            if f32::from_bits(bits).is_nan() {
                let h = match path {
                    // The compiled torch fallback writes one NaN for every NaN.
                    DequantPath::Torch => 0x7FC0,
                    // The instruction keeps a NaN's top bits and quiets it.
                    DequantPath::Avx512 => (bits >> 16) as u16 | 0x0040,
                    // The scalar rounding applied to a NaN's bits as to any other.
                    _ => (bits.wrapping_add(0x7FFF + ((bits >> 16) & 1)) >> 16) as u16,
                };
                o.copy_from_slice(&h.to_le_bytes());
            }
        }
    }
    Ok(())
}

/// torch's name of a weight dtype as `QuantState.as_dict` writes it (`str(dtype).strip("torch.")`).
const DTYPE_NAMES: [(DType, &str); 3] =
    [(DType::Float, "float32"), (DType::Float16, "float16"), (DType::Bfloat16, "bfloat16")];

fn f32_tensor(name: &str, values: &[f32]) -> StoredTensor {
    StoredTensor {
        name: name.into(),
        dtype: DType::Float,
        shape: vec![values.len()],
        data: values.iter().flat_map(|v| v.to_le_bytes()).collect(),
    }
}

fn table_tensor(name: &str, bits: &[u32]) -> StoredTensor {
    StoredTensor {
        name: name.into(),
        dtype: DType::Float,
        shape: vec![bits.len()],
        data: bits.iter().flat_map(|v| v.to_le_bytes()).collect(),
    }
}

/// Python's `repr` of a float (as `json.dumps` writes it): the shortest digits that read back,
/// positional for 1e-4 <= |x| < 1e16, else `d.ddde±XX`; NaN and infinities as `json.dumps`
/// spells them.
fn python_float(x: f64) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    if x == 0.0 {
        return if x.is_sign_negative() { "-0.0" } else { "0.0" }.into();
    }
    // Rust's `{:e}` gives how many digits the shortest round trip needs; Python writes the
    // value's exact expansion rounded to that many, a tie to the even digit (`{:e}` may round a
    // tie up).
    let shortest = format!("{:e}", x.abs());
    let wanted =
        shortest.split_once('e').expect("`{:e}` writes an exponent").0.chars().filter(char::is_ascii_digit).count();
    let exact = format!("{:.1100e}", x.abs());
    let (mantissa, exponent) = exact.split_once('e').expect("`{:e}` writes an exponent");
    let mut exponent: i32 = exponent.parse().expect("an integer exponent");
    let all: Vec<u8> = mantissa.bytes().filter(u8::is_ascii_digit).map(|d| d - b'0').collect();
    let (kept, rest) = all.split_at(wanted);
    let mut kept = kept.to_vec();
    let half = rest.first().map_or(core::cmp::Ordering::Less, |&d| {
        d.cmp(&5).then_with(|| {
            if rest[1..].iter().any(|&d| d != 0) {
                core::cmp::Ordering::Greater
            } else {
                core::cmp::Ordering::Equal
            }
        })
    });
    let up = match half {
        core::cmp::Ordering::Greater => true,
        core::cmp::Ordering::Equal => kept.last().is_some_and(|d| d % 2 == 1),
        core::cmp::Ordering::Less => false,
    };
    if up {
        let mut i = kept.len();
        loop {
            if i == 0 {
                kept.insert(0, 1);
                kept.pop();
                exponent += 1;
                break;
            }
            i -= 1;
            if kept[i] == 9 {
                kept[i] = 0;
            } else {
                kept[i] += 1;
                break;
            }
        }
    }
    while kept.len() > 1 && kept.last() == Some(&0) {
        kept.pop();
    }
    let digits: String = kept.iter().map(|d| char::from(b'0' + d)).collect();
    let sign = if x < 0.0 { "-" } else { "" };
    if (-4..16).contains(&exponent) {
        let point = exponent + 1;
        let text = if point <= 0 {
            format!("0.{}{digits}", "0".repeat((-point) as usize))
        } else if point as usize >= digits.len() {
            format!("{digits}{}.0", "0".repeat(point as usize - digits.len()))
        } else {
            format!("{}.{}", &digits[..point as usize], &digits[point as usize..])
        };
        format!("{sign}{text}")
    } else {
        let (first, rest) = digits.split_at(1);
        let fraction = if rest.is_empty() { String::new() } else { format!(".{rest}") };
        let esign = if exponent < 0 { '-' } else { '+' };
        format!("{sign}{first}{fraction}e{esign}{:02}", exponent.abs())
    }
}

/// `QuantState.as_dict(packed=True)`'s `quant_state.bitsandbytes__<type>`: `json.dumps` of the
/// non-tensor items, in their order.
fn quant_state_json(
    t: &CodeTable,
    blocksize: usize,
    dtype: &str,
    shape: [usize; 2],
    nested: Option<&Nested>,
) -> String {
    let mut s = format!(
        "{{\"quant_type\": \"{}\", \"blocksize\": {blocksize}, \"dtype\": \"{dtype}\", \"shape\": [{}, {}]",
        t.name, shape[0], shape[1]
    );
    if let Some(n) = nested {
        s += &format!(
            ", \"nested_blocksize\": {}, \"nested_dtype\": \"float32\", \"nested_offset\": {}",
            n.block,
            python_float(f64::from(n.offset))
        );
    }
    s + "}"
}

fn storage(params: &Params, q: &Quantized) -> Result<Vec<StoredTensor>> {
    let (t, blocksize, _) = options(params);
    checked_absmax(params, q)?;
    let extras = q.extras.as_deref();
    let dtype = extras.and_then(|e| e.source_dtype).unwrap_or(DType::Float);
    let dtype_name = DTYPE_NAMES.iter().find(|(d, _)| *d == dtype).map(|(_, n)| *n).ok_or_else(|| {
        invalid("storage", format!("the weight's dtype {} is not float32, float16 or bfloat16", dtype.onnx_name()))
    })?;
    // Two codes a byte, the first high; an odd count padded with the code of 0.0.
    let pad = padding_code(t);
    let packed: Vec<u8> =
        q.elements.chunks(2).map(|pair| (pair[0] << 4) | pair.get(1).copied().unwrap_or(pad)).collect();
    let mut out =
        vec![StoredTensor { name: "weight".into(), dtype: DType::Uint8, shape: vec![packed.len(), 1], data: packed }];
    let nested = extras.and_then(|e| e.nested.as_ref());
    match (&q.scales, nested) {
        (Scales::Codes(c), Some(n)) => {
            out.push(StoredTensor {
                name: "absmax".into(),
                dtype: DType::Uint8,
                shape: vec![c.len()],
                data: c.clone(),
            });
            out.push(table_tensor("quant_map", &t.values));
            out.push(f32_tensor("nested_absmax", &n.scales));
            out.push(table_tensor("nested_quant_map", &DYNAMIC_MAP));
        }
        (Scales::Float32(a), _) => {
            out.push(f32_tensor("absmax", a));
            out.push(table_tensor("quant_map", &t.values));
        }
        _ => unreachable!("checked above"),
    }
    let json = quant_state_json(t, blocksize, dtype_name, [q.shape[0], q.shape[1]], nested);
    out.push(StoredTensor {
        name: format!("quant_state.bitsandbytes__{}", t.name),
        dtype: DType::Uint8,
        shape: vec![json.len()],
        data: json.into_bytes(),
    });
    Ok(out)
}

/// A value of the flat JSON object `quant_state` holds.
#[derive(Debug, PartialEq)]
enum JsonValue {
    Text(String),
    Number(String),
    List(Vec<String>),
}

/// Reads the flat object `json.dumps` wrote for a `QuantState`: string, number and list-of-number
/// values only (anything else is an error naming the byte offset).
fn read_quant_state(text: &str) -> Result<Vec<(String, JsonValue)>> {
    let bad = |at: usize, what: &str| {
        invalid("from_storage", format!("tensor \"quant_state\": {what} at byte {at} of its JSON"))
    };
    let b = text.as_bytes();
    let mut i = 0;
    let skip = |i: &mut usize| {
        while *i < b.len() && b[*i].is_ascii_whitespace() {
            *i += 1;
        }
    };
    let string = |i: &mut usize| -> Result<String> {
        if b.get(*i) != Some(&b'"') {
            return Err(bad(*i, "a string expected"));
        }
        let start = *i + 1;
        let end = b[start..].iter().position(|&c| c == b'"' || c == b'\\').map(|p| start + p);
        match end {
            Some(e) if b[e] == b'"' => {
                *i = e + 1;
                Ok(text[start..e].to_string())
            }
            _ => Err(bad(start, "an unterminated string or an escape")),
        }
    };
    let number = |i: &mut usize| -> Result<String> {
        let start = *i;
        while *i < b.len() && (b[*i].is_ascii_alphanumeric() || matches!(b[*i], b'-' | b'+' | b'.')) {
            *i += 1;
        }
        if *i == start {
            return Err(bad(start, "a value expected"));
        }
        Ok(text[start..*i].to_string())
    };
    let mut items = Vec::new();
    skip(&mut i);
    if b.get(i) != Some(&b'{') {
        return Err(bad(i, "an object expected"));
    }
    i += 1;
    loop {
        skip(&mut i);
        if b.get(i) == Some(&b'}') && items.is_empty() {
            i += 1;
            break;
        }
        let key = string(&mut i)?;
        skip(&mut i);
        if b.get(i) != Some(&b':') {
            return Err(bad(i, "':' expected"));
        }
        i += 1;
        skip(&mut i);
        let value = match b.get(i) {
            Some(b'"') => JsonValue::Text(string(&mut i)?),
            Some(b'[') => {
                i += 1;
                let mut list = Vec::new();
                loop {
                    skip(&mut i);
                    if b.get(i) == Some(&b']') && list.is_empty() {
                        i += 1;
                        break;
                    }
                    list.push(number(&mut i)?);
                    skip(&mut i);
                    match b.get(i) {
                        Some(b',') => i += 1,
                        Some(b']') => {
                            i += 1;
                            break;
                        }
                        _ => return Err(bad(i, "',' or ']' expected")),
                    }
                }
                JsonValue::List(list)
            }
            _ => JsonValue::Number(number(&mut i)?),
        };
        items.push((key, value));
        skip(&mut i);
        match b.get(i) {
            Some(b',') => i += 1,
            Some(b'}') => {
                i += 1;
                break;
            }
            _ => return Err(bad(i, "',' or '}' expected")),
        }
    }
    skip(&mut i);
    if i != b.len() {
        return Err(bad(i, "text after the object"));
    }
    Ok(items)
}

/// The tensor `name` of `tensors`, of `dtype` and `len` elements in one dimension or as
/// `(len, 1)` where `column` (the packed weight).
fn tensor<'a>(
    tensors: &'a [StoredTensor],
    name: &str,
    dtype: DType,
    len: usize,
    column: bool,
) -> Result<&'a StoredTensor> {
    let t = tensors
        .iter()
        .find(|t| t.name == name)
        .ok_or_else(|| invalid("from_storage", format!("no tensor {}", quoted(name))))?;
    let want_shape = if column { vec![len, 1] } else { vec![len] };
    let width = if dtype == DType::Float { 4 } else { 1 };
    if t.dtype != dtype || t.shape != want_shape || t.data.len() != len.saturating_mul(width) {
        return Err(invalid(
            "from_storage",
            format!(
                "tensor {}: {} of shape {:?} ({} bytes) given, {} of shape {want_shape:?} expected",
                quoted(name),
                t.dtype.onnx_name(),
                t.shape,
                t.data.len(),
                dtype.onnx_name()
            ),
        ));
    }
    Ok(t)
}

fn floats(t: &StoredTensor) -> Vec<f32> {
    t.data.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect()
}

fn from_storage(scheme: &Scheme, params: &Params, tensors: &[StoredTensor], shape: [usize; 2]) -> Result<Quantized> {
    let (t, blocksize, nested) = options(params);
    let [rows, cols] = shape;
    let n = rows.checked_mul(cols).ok_or_else(|| Error::TooLarge { what: format!("a {rows}x{cols} weight") })?;
    let blocks = n.div_ceil(blocksize);
    // Every tensor is checked against the shape before anything sized by it is allocated.
    let weight = tensor(tensors, "weight", DType::Uint8, n.div_ceil(2), true)?;
    let state_name = format!("quant_state.bitsandbytes__{}", t.name);
    let state = tensors
        .iter()
        .find(|s| s.name == state_name)
        .ok_or_else(|| invalid("from_storage", format!("no tensor {}", quoted(&state_name))))?;
    if state.dtype != DType::Uint8 || state.shape != [state.data.len()] {
        return Err(invalid(
            "from_storage",
            format!("tensor {}: one dimension of UINT8 expected", quoted(&state_name)),
        ));
    }
    let text = core::str::from_utf8(&state.data).map_err(|e| {
        invalid("from_storage", format!("tensor {}: not UTF-8 at byte {}", quoted(&state_name), e.valid_up_to()))
    })?;
    let items = read_quant_state(text)?;
    let item = |key: &str| items.iter().find(|(k, _)| k == key).map(|(_, v)| v);
    let mismatch = |key: &str, want: String| {
        invalid("from_storage", format!("tensor {}: {key} is {:?}, {want} expected", quoted(&state_name), item(key)))
    };
    if item("quant_type") != Some(&JsonValue::Text(t.name.into())) {
        return Err(mismatch("quant_type", t.name.into()));
    }
    if item("blocksize") != Some(&JsonValue::Number(blocksize.to_string())) {
        return Err(mismatch("blocksize", blocksize.to_string()));
    }
    if item("shape") != Some(&JsonValue::List(vec![rows.to_string(), cols.to_string()])) {
        return Err(mismatch("shape", format!("[{rows}, {cols}]")));
    }
    let source_dtype = match item("dtype") {
        Some(JsonValue::Text(name)) => DTYPE_NAMES.iter().find(|(_, n)| n == name).map(|(d, _)| *d),
        _ => None,
    }
    .ok_or_else(|| mismatch("dtype", "float32, float16 or bfloat16".into()))?;
    if item("nested_offset").is_some() != nested {
        return Err(invalid(
            "from_storage",
            format!(
                "tensor {}: nested items {} the scheme {}",
                quoted(&state_name),
                if nested { "missing for" } else { "present, not in" },
                scheme.name()
            ),
        ));
    }
    let quant_map = tensor(tensors, "quant_map", DType::Float, 16, false)?;
    if quant_map.data != table_tensor("", &t.values).data {
        return Err(invalid("from_storage", format!("tensor \"quant_map\" is not bitsandbytes' {} table", t.name)));
    }
    let mut elements = vec![0u8; n];
    for (pair, &byte) in elements.chunks_mut(2).zip(&weight.data) {
        pair[0] = byte >> 4;
        if let Some(second) = pair.get_mut(1) {
            *second = byte & 0x0F;
        }
    }
    let (scales, nested) = if nested {
        if item("nested_blocksize") != Some(&JsonValue::Number(NESTED_BLOCK.to_string())) {
            return Err(mismatch("nested_blocksize", NESTED_BLOCK.to_string()));
        }
        if item("nested_dtype") != Some(&JsonValue::Text("float32".into())) {
            return Err(mismatch("nested_dtype", "float32".into()));
        }
        let offset = match item("nested_offset") {
            Some(JsonValue::Number(v)) => match v.as_str() {
                "NaN" => Some(f32::NAN),
                "Infinity" => Some(f32::INFINITY),
                "-Infinity" => Some(f32::NEG_INFINITY),
                v => v.parse::<f64>().ok().map(|x| x as f32),
            },
            _ => None,
        }
        .ok_or_else(|| mismatch("nested_offset", "a number".into()))?;
        let codes = tensor(tensors, "absmax", DType::Uint8, blocks, false)?;
        let second = tensor(tensors, "nested_absmax", DType::Float, blocks.div_ceil(NESTED_BLOCK), false)?;
        let map = tensor(tensors, "nested_quant_map", DType::Float, 256, false)?;
        if map.data != table_tensor("", &DYNAMIC_MAP).data {
            return Err(invalid("from_storage", "tensor \"nested_quant_map\" is not bitsandbytes' dynamic map".into()));
        }
        (Scales::Codes(codes.data.clone()), Some(Nested { scales: floats(second), offset, block: NESTED_BLOCK }))
    } else {
        (Scales::Float32(floats(tensor(tensors, "absmax", DType::Float, blocks, false)?)), None)
    };
    Ok(Quantized {
        scheme: scheme.clone(),
        shape: vec![rows, cols],
        axis: -1,
        elements,
        scales,
        global_scale: None,
        extras: Some(Box::new(Extras { nested, source_dtype: Some(source_dtype), ..Extras::default() })),
    })
}

#[cfg(test)]
mod tests {
    use super::python_float;

    #[test]
    fn floats_are_written_as_python_repr_writes_them() {
        // repr(float(numpy.float32 of these bits)) under CPython 3.11.
        let cases = [
            (0x446E_D09D, "955.2595825195312"),
            (0x3727_C5AC, "9.999999747378752e-06"),
            (0x5A0E_1BCA, "1.0000000272564224e+16"),
            (0x38D1_B717, "9.999999747378752e-05"),
            (0x42F6_0000, "123.0"),
            (0x0000_0001, "1.401298464324817e-45"),
            (0x7F7F_FFFF, "3.4028234663852886e+38"),
            (0x3DCC_CCCD, "0.10000000149011612"),
            (0xC2F6_0000, "-123.0"),
        ];
        for (bits, text) in cases {
            assert_eq!(python_float(f64::from(f32::from_bits(bits))), text, "{bits:#x}");
        }
    }
}
