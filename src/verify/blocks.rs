//! **Block-unit vectors and dump checks** (`lowbit vectors --scheme`, `lowbit check --scheme`):
//! test vectors for a hardware unit that quantizes one block (or dequantizes one), with the
//! expected answers of [`crate::quant::blocks`] (the definition: nothing here rounds a value), and
//! the check of such a unit's dump, every mismatch classified.
//!
//! One vector is one block of the scheme (`n` elements, one scale), on one line of upper-case hex
//! words separated by spaces (or commas, the CSV):
//!
//! * `quantize`: `X0 .. Xn-1 [G] S E0 .. En-1` — the inputs as bit patterns of the input dtype
//!   (8 digits for float32, 4 for bfloat16 and float16), the per-tensor scale `G` as float32 bits
//!   where the scheme has one (an input of the unit: it is computed over the whole tensor), then
//!   the unit's outputs: the scale `S` as stored (2 digits for E8M0/E4M3/UE4M3 codes, 4 for
//!   float16/bfloat16, 8 for float32) and the element codes (2 digits each, the code in the low
//!   bits as `lowbit.blocks.quantize` gives it).
//! * `dequantize`: `[G] S E0 .. En-1 Y0 .. Yn-1` — the unit's inputs, then its outputs as float32
//!   bits.
//!
//! The blocks are the edge classes of the recipes (all zero, negative zeros, NaN, ±Inf,
//! subnormal inputs, the input type's largest values, amax exactly a power of two and just below
//! one, ties of the element format, ties of an E4M3/UE4M3 scale), then random blocks from the
//! seed ([`super::seeded_random`]).

use super::check::{checked_line, classify, thousands, Class, SHOWN_MISMATCHES};
use super::testfloat::{is_skipped, push_hex, LineReader};
use super::{seeded_random, Format};
use crate::quant::blocks::{self, BlockShape, GlobalRule, Quantized, ScaleFormat, Scales, Scheme};
use crate::{CastOptions, DType, Error, Result};
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::io::{Read, Write};

/// What the unit under test does with a block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockDirection {
    /// Inputs in, scale and element codes out.
    Quantize,
    /// Scale and element codes in, float32 values out.
    Dequantize,
}

impl BlockDirection {
    /// `quantize` or `dequantize`.
    pub fn parse(text: &str) -> Result<BlockDirection> {
        match text {
            "quantize" => Ok(BlockDirection::Quantize),
            "dequantize" => Ok(BlockDirection::Dequantize),
            _ => Err(Error::InvalidOp {
                op: "block vectors".into(),
                message: format!("direction {text:?}: use quantize or dequantize"),
            }),
        }
    }
}

/// How a block's scale is stored (its hex width).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ScaleKind {
    Code,
    Float16,
    Bfloat16,
    Float32,
}

impl ScaleKind {
    fn of(scales: &Scales) -> ScaleKind {
        match scales {
            Scales::Codes(_) => ScaleKind::Code,
            Scales::Float16(_) => ScaleKind::Float16,
            Scales::Bfloat16(_) => ScaleKind::Bfloat16,
            Scales::Float32(_) => ScaleKind::Float32,
        }
    }

    const fn bits(self) -> u32 {
        match self {
            ScaleKind::Code => 8,
            ScaleKind::Float16 | ScaleKind::Bfloat16 => 16,
            ScaleKind::Float32 => 32,
        }
    }

    /// The scales `bits` (one per block) in this representation.
    fn scales(self, bits: &[u32]) -> Scales {
        match self {
            ScaleKind::Code => Scales::Codes(bits.iter().map(|&b| b as u8).collect()),
            ScaleKind::Float16 => Scales::Float16(bits.iter().map(|&b| b as u16).collect()),
            ScaleKind::Bfloat16 => Scales::Bfloat16(bits.iter().map(|&b| b as u16).collect()),
            ScaleKind::Float32 => Scales::Float32(bits.iter().map(|&b| f32::from_bits(b)).collect()),
        }
    }
}

/// Block `b`'s scale as its stored bits.
fn scale_bits(scales: &Scales, b: usize) -> u32 {
    match scales {
        Scales::Codes(v) => u32::from(v[b]),
        Scales::Float16(v) | Scales::Bfloat16(v) => u32::from(v[b]),
        Scales::Float32(v) => v[b].to_bits(),
    }
}

/// Hex digits of a word of `bits` bits.
const fn digits(bits: u32) -> usize {
    bits.div_ceil(4) as usize
}

/// One block vector.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockVector {
    /// Why the block is there (`all zero`, `random`, ...).
    pub case: &'static str,
    /// The inputs as bit patterns of the input dtype.
    pub inputs: Vec<u32>,
    /// The per-tensor scale (float32 bits), where the scheme has one.
    pub global: Option<u32>,
    /// The scale as stored (a code, or float bits).
    pub scale: u32,
    /// The element codes.
    pub elements: Vec<u8>,
    /// The dequantized values (float32 bits).
    pub values: Vec<u32>,
}

/// A block unit: a scheme with its input dtype and direction, resolved once.
#[derive(Clone, Debug)]
pub struct BlockUnit {
    scheme: Scheme,
    input: DType,
    direction: BlockDirection,
    block: usize,
    element_bits: u32,
    scale: ScaleKind,
    global: bool,
    /// The other recipe rows that take the same block and store the same kinds of codes:
    /// the rules a wrong answer is compared with.
    siblings: Vec<Scheme>,
}

/// The most elements a block unit's vector holds (a line stays under the line reader's bound).
pub const MAX_BLOCK: usize = 64;

impl BlockUnit {
    /// The unit of `scheme` taking `input` (FLOAT, BFLOAT16 or FLOAT16, as the scheme takes it).
    pub fn new(scheme: &str, input: DType, direction: BlockDirection) -> Result<BlockUnit> {
        let scheme = Scheme::parse(scheme)?;
        let (block, element_bits, scale, global) = probe(&scheme, input)?;
        let mut unit = BlockUnit { scheme, input, direction, block, element_bits, scale, global, siblings: Vec::new() };
        unit.siblings = blocks::concrete_schemes(block)
            .into_iter()
            .filter_map(|name| Scheme::parse(&name).ok())
            .filter(|s| (s.recipe(), s.mx()) != (unit.scheme.recipe(), unit.scheme.mx()))
            .filter(|s| {
                s.element_dtype() == unit.scheme.element_dtype()
                    && probe(s, input).is_ok_and(|p| p == (block, element_bits, scale, global))
            })
            .collect();
        Ok(unit)
    }

    /// The scheme.
    #[must_use]
    pub fn scheme(&self) -> &Scheme {
        &self.scheme
    }

    /// Elements per block.
    #[must_use]
    pub const fn block(&self) -> usize {
        self.block
    }

    /// Whether a vector holds a per-tensor scale.
    #[must_use]
    pub const fn has_global(&self) -> bool {
        self.global
    }

    /// The other recipe rows a wrong block is compared with.
    #[must_use]
    pub fn siblings(&self) -> Vec<&str> {
        self.siblings.iter().map(Scheme::name).collect()
    }

    fn input_bits(&self) -> u32 {
        if self.input == DType::Float {
            32
        } else {
            16
        }
    }

    /// Quantizes `k` blocks (`inputs` holds `k * block` patterns) with one per-tensor scale.
    fn quantize(&self, inputs: &[u32], global: Option<u32>) -> Result<Quantized> {
        let shape = [inputs.len() / self.block, self.block];
        let g = global.map(f32::from_bits);
        match self.input {
            DType::Float => {
                let x: Vec<f32> = inputs.iter().map(|&b| f32::from_bits(b)).collect();
                blocks::quantize(&x, &shape, &self.scheme, -1, g)
            }
            DType::Bfloat16 => {
                let x: Vec<half::bf16> = inputs.iter().map(|&b| half::bf16::from_bits(b as u16)).collect();
                blocks::quantize(&x, &shape, &self.scheme, -1, g)
            }
            _ => {
                let x: Vec<half::f16> = inputs.iter().map(|&b| half::f16::from_bits(b as u16)).collect();
                blocks::quantize(&x, &shape, &self.scheme, -1, g)
            }
        }
    }

    /// Dequantizes `k` blocks (`scales` one per block, `elements` `k * block` codes).
    fn dequantize(&self, scales: &[u32], elements: &[u8], global: Option<u32>) -> Result<Vec<u32>> {
        dequantize_with(&self.scheme, self.scale, self.block, scales, elements, global)
    }

    /// `count` vectors (never fewer than the edge blocks: they come first), random blocks from
    /// `seed` after them.
    pub fn vectors(&self, count: Option<u64>, seed: u64) -> Result<Vec<BlockVector>> {
        let edges = self.edge_blocks()?;
        let count = count.unwrap_or(DEFAULT_RANDOM_BLOCKS + edges.len() as u64).max(edges.len() as u64);
        let total = usize::try_from(count).ok().filter(|&c| c <= MAX_VECTORS).ok_or_else(|| Error::InvalidOp {
            op: "block vectors".into(),
            message: format!("{count} vectors; at most {MAX_VECTORS} are written at once (use --seed for more)"),
        })?;
        let mut cases: Vec<Block> = edges;
        for i in 0..(total - cases.len()) as u64 {
            cases.push(("random", self.random_block(seed, i), None));
        }
        cases
            .into_par_iter()
            .enumerate()
            .map(|(i, (case, inputs, global))| self.vector(case, inputs, global, seed, i as u64))
            .collect()
    }

    fn vector(
        &self,
        case: &'static str,
        inputs: Vec<u32>,
        global: Option<u32>,
        seed: u64,
        i: u64,
    ) -> Result<BlockVector> {
        let mut global = if self.global { global } else { None };
        if self.global && global.is_none() {
            // The recipe's own per-tensor scale of the block alone; every second random block
            // moves it by a power of two, as a larger tensor's would be.
            let own = self.quantize(&inputs, None)?.global_scale.unwrap_or(1.0);
            let shift = (seeded_random(seed ^ GLOBAL_STREAM, i) % 5) as i32 - 2;
            let moved = own * 2f32.powi(if i % 2 == 0 { 0 } else { shift });
            global = Some(if moved.is_finite() && moved != 0.0 { moved } else { own }.to_bits());
        }
        let q = self.quantize(&inputs, global)?;
        let mut elements = q.elements.clone();
        let scale = scale_bits(&q.scales, 0);
        if self.direction == BlockDirection::Dequantize && case == "random" && i % 2 == 1 {
            // Every element code occurs: random codes with the block's scale.
            let mask = (1u64 << self.element_bits) - 1;
            for (j, e) in elements.iter_mut().enumerate() {
                *e = (seeded_random(seed ^ CODE_STREAM, i * MAX_BLOCK as u64 + j as u64) & mask) as u8;
            }
        }
        let values = self.dequantize(&[scale], &elements, global)?;
        Ok(BlockVector { case, inputs, global, scale, elements, values })
    }

    /// The edge blocks of the recipes (all zero, negative zeros, NaN, infinities, subnormals, the
    /// largest finite inputs, powers of two, ties), each `block` patterns of the input dtype.
    fn edge_blocks(&self) -> Result<Vec<Block>> {
        let n = self.block;
        let enc = |x: f32| -> u32 {
            match self.input {
                DType::Float => x.to_bits(),
                DType::Bfloat16 => u32::from(half::bf16::from_f32(x).to_bits()),
                _ => u32::from(half::f16::from_f32(x).to_bits()),
            }
        };
        let sign = if self.input == DType::Float { 1u32 << 31 } else { 1 << 15 };
        let (mantissa, max) = match self.input {
            DType::Float => (0x007F_FFFF, f32::MAX.to_bits()),
            DType::Bfloat16 => (0x7F, 0x7F7F),
            _ => (0x3FF, 0x7BFF),
        };
        // Values of both signs between 1/8 and 1 of `top`, exact in every input dtype.
        let ramp = |top: f32| -> Vec<u32> {
            (0..n).map(|i| enc(if i % 2 == 0 { 1.0 } else { -1.0 } * top * ((i % 8) + 1) as f32 / 8.0)).collect()
        };
        let with = |mut v: Vec<u32>, at: usize, bits: u32| {
            v[at % n] = bits;
            v
        };
        let one = self.global.then_some(1f32.to_bits());
        let mut out: Vec<Block> = vec![
            ("all zero", vec![0; n], one),
            ("negative zeros", vec![sign; n], one),
            (
                "zeros of both signs and one value",
                with((0..n).map(|i| if i % 2 == 0 { 0 } else { sign }).collect(), n - 1, enc(1.5)),
                one,
            ),
            ("a NaN", with(ramp(2.0), 3, enc(f32::NAN)), one),
            ("+Inf", with(ramp(2.0), 5, enc(f32::INFINITY)), one),
            ("-Inf", with(ramp(2.0), 7, enc(f32::NEG_INFINITY)), one),
            (
                "subnormal inputs",
                (0..n).map(|i| ((i as u32 * 37 + 1) & mantissa) | if i % 2 == 1 { sign } else { 0 }).collect(),
                one,
            ),
            ("largest finite inputs", with(with(ramp(1.0), 0, max), 1, max | sign), one),
            ("amax a power of two", ramp(4.0), one),
            (
                "amax just below a power of two",
                ramp(4.0).into_iter().map(|b| if b & !sign == enc(4.0) { b - 1 } else { b }).collect(),
                one,
            ),
            ("small amax", ramp(2f32.powi(-120)), one),
        ];
        // Ties of the element format at scale 1: amax the largest element value, the others the
        // midpoints of neighbouring element values, both signs.
        let lattice = element_lattice(self.scheme.element_dtype())?;
        if let Some(&top) = lattice.last() {
            let midpoints: Vec<f32> = lattice.windows(2).map(|w| (w[0] + w[1]) / 2.0).collect();
            let ties: Vec<u32> = (0..n)
                .map(|i| match i {
                    0 => enc(top),
                    _ => enc(if i % 2 == 0 { -1.0 } else { 1.0 } * midpoints[(i - 1) % midpoints.len().max(1)]),
                })
                .collect();
            out.push(("element ties", ties, one));
        }
        if matches!(self.scheme.recipe().scale, ScaleFormat::E4M3 | ScaleFormat::GgmlUe4m3) {
            // Block scale amax / 6 on a tie of E4M3: 1.0625 between 1 and 1.125 (to even, 1),
            // 1.1875 between 1.125 and 1.25 (to even, 1.25).
            for (case, amax) in [("E4M3 scale tie to even below", 6.375f32), ("E4M3 scale tie to even above", 7.125)] {
                out.push((case, with(ramp(1.0), 0, enc(amax)), one));
            }
        }
        Ok(out)
    }

    /// Random block `i`: magnitudes across 2^-6 of a random power of two up to it, random
    /// signs, every eighth block mostly zeros.
    fn random_block(&self, seed: u64, i: u64) -> Vec<u32> {
        let stream = seed.wrapping_add(BLOCK_STREAM);
        let r = seeded_random(stream, i * (MAX_BLOCK as u64 + 1));
        let top = (r % 41) as i32 - 20;
        let sparse = (r >> 8) % 8 == 0;
        (0..self.block)
            .map(|j| {
                let w = seeded_random(stream, i * (MAX_BLOCK as u64 + 1) + 1 + j as u64);
                if sparse && w % 4 != 0 {
                    return 0;
                }
                let exponent = (127 + top - ((w >> 32) % 7) as i32) as u32;
                let bits = ((w >> 63) as u32) << 31 | (exponent << 23) | (w as u32 & 0x007F_FFFF);
                match self.input {
                    DType::Float => bits,
                    DType::Bfloat16 => bits >> 16,
                    _ => u32::from(half::f16::from_f32(f32::from_bits(bits)).to_bits()),
                }
            })
            .collect()
    }

    /// The words of a line, in order, with their hex widths.
    fn columns(&self) -> Vec<(String, usize)> {
        let n = self.block;
        let mut out = Vec::new();
        if self.direction == BlockDirection::Quantize {
            out.extend((0..n).map(|i| (format!("x{i}"), digits(self.input_bits()))));
        }
        if self.global {
            out.push(("global".into(), 8));
        }
        out.push(("scale".into(), digits(self.scale.bits())));
        out.extend((0..n).map(|i| (format!("e{i}"), 2)));
        if self.direction == BlockDirection::Dequantize {
            out.extend((0..n).map(|i| (format!("y{i}"), 8)));
        }
        out
    }

    /// The header of the CSV (and the layout comment of the lines).
    #[must_use]
    pub fn header(&self) -> String {
        self.columns().into_iter().map(|(name, _)| name).collect::<Vec<_>>().join(",")
    }

    fn words(&self, v: &BlockVector) -> Vec<u64> {
        let mut out = Vec::new();
        if self.direction == BlockDirection::Quantize {
            out.extend(v.inputs.iter().map(|&b| u64::from(b)));
        }
        out.extend(v.global.map(u64::from));
        out.push(u64::from(v.scale));
        out.extend(v.elements.iter().map(|&e| u64::from(e)));
        if self.direction == BlockDirection::Dequantize {
            out.extend(v.values.iter().map(|&y| u64::from(y)));
        }
        out
    }

    /// Writes the vectors one a line (`csv`: commas and a header; else spaces after a `#`
    /// comment naming the scheme and the columns).
    pub fn write_lines(&self, out: &mut impl Write, vectors: &[BlockVector], csv: bool) -> std::io::Result<()> {
        if csv {
            writeln!(out, "{}", self.header())?;
        } else {
            writeln!(out, "# lowbit block vectors: {}; {}", self.describe(), self.header().replace(',', " "))?;
        }
        let columns = self.columns();
        write_each(out, vectors, |buf, v| {
            for (k, (word, (_, width))) in self.words(v).into_iter().zip(&columns).enumerate() {
                if k > 0 {
                    buf.push(if csv { b',' } else { b' ' });
                }
                push_hex(buf, word, *width);
            }
        })
    }

    /// The `$readmemh` columns: file name, the width of its words in bits, and how a vector
    /// fills it. Element `i` of a block sits in bits `[w*i +: w]` (element 0 lowest).
    #[must_use]
    pub fn readmemh_files(&self) -> Vec<(&'static str, u32)> {
        let n = self.block as u32;
        let mut files = Vec::new();
        if self.direction == BlockDirection::Quantize {
            files.push(("in.hex", n * self.input_bits()));
        }
        if self.global {
            files.push(("global.hex", 32));
        }
        files.push(("scale.hex", self.scale.bits()));
        files.push(("elements.hex", n * self.element_bits));
        if self.direction == BlockDirection::Dequantize {
            files.push(("out.hex", n * 32));
        }
        files
    }

    /// Writes the `$readmemh` file `name` (one of [`BlockUnit::readmemh_files`]) with a header
    /// comment saying its layout.
    pub fn write_readmemh(&self, out: &mut impl Write, vectors: &[BlockVector], name: &str) -> std::io::Result<()> {
        let word_bits = match name {
            "in.hex" => self.input_bits(),
            "scale.hex" => self.scale.bits(),
            "elements.hex" => self.element_bits,
            _ => 32,
        };
        let lanes = |v: &BlockVector| -> Vec<u32> {
            match name {
                "in.hex" => v.inputs.clone(),
                "global.hex" => v.global.into_iter().collect(),
                "scale.hex" => vec![v.scale],
                "elements.hex" => v.elements.iter().map(|&e| u32::from(e)).collect(),
                _ => v.values.clone(),
            }
        };
        let lanes_per_line = if matches!(name, "global.hex" | "scale.hex") { 1 } else { self.block as u32 };
        writeln!(
            out,
            "// lowbit vectors --scheme {}: {}; {} vectors, one a line; {} lane(s) of {} bits a line, lane i in bits \
             [{}*i +: {}] (lane 0 lowest)",
            self.scheme.name(),
            self.describe(),
            vectors.len(),
            lanes_per_line,
            word_bits,
            word_bits,
            word_bits
        )?;
        let total_bits = lanes_per_line * word_bits;
        write_each(out, vectors, |buf, v| {
            // Lanes from the highest down, each as `word_bits` bits, into hex digits.
            let mut bits: Vec<bool> = Vec::with_capacity(total_bits as usize);
            for lane in lanes(v).iter().rev() {
                bits.extend((0..word_bits).rev().map(|k| lane >> k & 1 == 1));
            }
            let pad = (4 - bits.len() % 4) % 4;
            let padded: Vec<bool> = core::iter::repeat_n(false, pad).chain(bits).collect();
            for nibble in padded.chunks(4) {
                push_hex(buf, nibble.iter().fold(0u64, |acc, &b| acc << 1 | u64::from(b)), 1);
            }
        })
    }

    /// `quantize of 32 FLOAT inputs, scale FLOAT8E8M0, elements FLOAT4E2M1` and the like.
    #[must_use]
    pub fn describe(&self) -> String {
        let scale = match self.scale {
            ScaleKind::Code => match self.scheme.recipe().scale {
                ScaleFormat::E8M0 => "FLOAT8E8M0 code",
                ScaleFormat::E4M3 => "FLOAT8E4M3FN code",
                _ => "ggml UE4M3 byte",
            },
            ScaleKind::Float16 => "FLOAT16 bits",
            ScaleKind::Bfloat16 => "BFLOAT16 bits",
            ScaleKind::Float32 => "FLOAT bits",
        };
        let global = if self.global { ", per-tensor scale FLOAT bits" } else { "" };
        let direction = match self.direction {
            BlockDirection::Quantize => "quantize",
            BlockDirection::Dequantize => "dequantize to FLOAT",
        };
        format!(
            "{direction}, blocks of {} {} inputs{global}, scale {scale}, elements {} codes",
            self.block,
            self.input.onnx_name(),
            self.scheme.element_dtype().onnx_name()
        )
    }
}

/// Writes one line per vector (`line` fills it, the line end is added), in pieces.
fn write_each(
    out: &mut impl Write,
    vectors: &[BlockVector],
    mut line: impl FnMut(&mut Vec<u8>, &BlockVector),
) -> std::io::Result<()> {
    let mut buf = Vec::with_capacity(1 << 16);
    for v in vectors {
        line(&mut buf, v);
        buf.push(b'\n');
        if buf.len() > 1 << 15 {
            out.write_all(&buf)?;
            buf.clear();
        }
    }
    out.write_all(&buf)?;
    out.flush()
}

/// A block before its answers: why it is there, its inputs, its per-tensor scale (float32 bits;
/// None: the recipe's own for a random block).
type Block = (&'static str, Vec<u32>, Option<u32>);

const DEFAULT_RANDOM_BLOCKS: u64 = 256;
const MAX_VECTORS: usize = 1 << 24;
const BLOCK_STREAM: u64 = 0x5A5A_5A5A_5A5A_5A5A;
const GLOBAL_STREAM: u64 = 0x0F0F_0F0F_0F0F_0F0F;
const CODE_STREAM: u64 = 0x3C3C_3C3C_3C3C_3C3C;

/// Block size, element width, scale kind and whether a per-tensor scale is an input, found by
/// quantizing one zero block as the definition does (or why the scheme has no block unit).
fn probe(scheme: &Scheme, input: DType) -> Result<(usize, u32, ScaleKind, bool)> {
    let refuse = |why: String| Error::InvalidOp { op: format!("block vectors of {}", scheme.name()), message: why };
    let block = match scheme.recipe().block {
        BlockShape::Row(n) if n <= MAX_BLOCK => n,
        BlockShape::Row(n) => {
            return Err(refuse(format!("blocks of {n} elements; a block unit here takes at most {MAX_BLOCK}")))
        }
        other => return Err(refuse(format!("{other:?} blocks: a block unit takes one row block (Row(n))"))),
    };
    if !matches!(input, DType::Float | DType::Bfloat16 | DType::Float16) {
        return Err(refuse(format!("input {}: use FLOAT, BFLOAT16 or FLOAT16", input.onnx_name())));
    }
    let recipe = scheme.recipe();
    let global = match recipe.global {
        GlobalRule::None => false,
        GlobalRule::TorchaoDecode => scheme.global_from_amax(),
        _ => true,
    };
    let zeros = vec![0u32; block];
    let unit = BlockUnit {
        scheme: scheme.clone(),
        input,
        direction: BlockDirection::Quantize,
        block,
        element_bits: 8,
        scale: ScaleKind::Code,
        global,
        siblings: Vec::new(),
    };
    let q = unit.quantize(&zeros, global.then_some(1f32.to_bits()))?;
    let element_bits = scheme.element_dtype().bits().unwrap_or(8).min(8);
    Ok((block, element_bits, ScaleKind::of(&q.scales), global))
}

fn dequantize_with(
    scheme: &Scheme,
    scale: ScaleKind,
    block: usize,
    scales: &[u32],
    elements: &[u8],
    global: Option<u32>,
) -> Result<Vec<u32>> {
    let q = Quantized {
        scheme: scheme.clone(),
        shape: vec![elements.len() / block, block],
        axis: -1,
        elements: elements.to_vec(),
        scales: scale.scales(scales),
        global_scale: global.map(f32::from_bits),
        extras: None,
    };
    Ok(blocks::dequantize(&q)?.into_iter().map(f32::to_bits).collect())
}

/// The values of the element type's codes, positive and finite, ascending, without repeats.
fn element_lattice(element: DType) -> Result<Vec<f32>> {
    let bits = element.bits().unwrap_or(8).min(8);
    let mut values: Vec<f32> = Vec::new();
    for code in 0..1u64 << bits {
        let v = f32::from_bits(crate::convert_code(element, DType::Float, code, &CastOptions::default())? as u32);
        if v.is_finite() && v >= 0.0 {
            values.push(v);
        }
    }
    values.sort_by(f32::total_cmp);
    values.dedup();
    Ok(values)
}

// ------------------------------------------------------------------------------------------------
// Checking a dump
// ------------------------------------------------------------------------------------------------

/// What is wrong with an element (quantize: its code; dequantize: its value).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ElementClass {
    /// The block's scale is wrong: its elements are not compared one by one (a unit that
    /// computed another scale divides by it).
    WrongScaleBlock,
    /// The block is all zeros: the zero-block answer differs.
    ZeroBlock,
    /// The block holds a NaN or an infinity: the NaN/Inf-block answer differs.
    NanOrInfBlock,
    /// The input lies exactly between the expected and the given element: the tie went the
    /// other way.
    Tie,
    /// One step further from zero than expected, not on a tie.
    OneStepAwayFromZero,
    /// One step nearer to zero than expected, not on a tie.
    OneStepTowardZero,
    /// A zero of the other sign.
    ZeroSign,
    /// The largest finite value against infinity or NaN (saturation on or off).
    Saturation,
    /// A NaN against a number.
    Nan,
    /// Any other code or value.
    Other,
}

impl ElementClass {
    /// Every class, in the order of the summary.
    pub const ALL: [ElementClass; 10] = [
        ElementClass::WrongScaleBlock,
        ElementClass::ZeroBlock,
        ElementClass::NanOrInfBlock,
        ElementClass::Tie,
        ElementClass::OneStepAwayFromZero,
        ElementClass::OneStepTowardZero,
        ElementClass::ZeroSign,
        ElementClass::Saturation,
        ElementClass::Nan,
        ElementClass::Other,
    ];

    /// The class in words.
    #[must_use]
    pub const fn describe(self) -> &'static str {
        match self {
            ElementClass::WrongScaleBlock => "in a block with a wrong scale",
            ElementClass::ZeroBlock => "zero-block answer (the block is all zeros)",
            ElementClass::NanOrInfBlock => "NaN/Inf-block answer (the block holds a NaN or an infinity)",
            ElementClass::Tie => "tie broken the other way (the input is the midpoint of both answers)",
            ElementClass::OneStepAwayFromZero => "one step too far from zero (not a tie)",
            ElementClass::OneStepTowardZero => "one step too near zero (not a tie)",
            ElementClass::ZeroSign => "zero of the wrong sign",
            ElementClass::Saturation => "largest finite against infinity or NaN (saturation)",
            ElementClass::Nan => "NaN against a number",
            ElementClass::Other => "other wrong element",
        }
    }

    /// The key in machine-readable output.
    #[must_use]
    pub const fn key(self) -> &'static str {
        match self {
            ElementClass::WrongScaleBlock => "wrong_scale_block",
            ElementClass::ZeroBlock => "zero_block",
            ElementClass::NanOrInfBlock => "nan_inf_block",
            ElementClass::Tie => "tie",
            ElementClass::OneStepAwayFromZero => "one_step_away_from_zero",
            ElementClass::OneStepTowardZero => "one_step_toward_zero",
            ElementClass::ZeroSign => "zero_sign",
            ElementClass::Saturation => "saturation",
            ElementClass::Nan => "nan",
            ElementClass::Other => "other",
        }
    }
}

/// The verdict on one block.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BlockVerdict {
    /// The whole block (scale and elements) as these other recipe rows compute it.
    pub other_rule: Vec<String>,
    /// The scale is wrong: `(expected, got, why)` (`why` names the recipe rows that give this
    /// scale, or the step).
    pub scale: Option<(u32, u32, String)>,
    /// The wrong elements: `(index, expected, got, class)`.
    pub elements: Vec<(usize, u32, u32, ElementClass)>,
}

impl BlockVerdict {
    /// Whether the block is a mismatch.
    #[must_use]
    pub fn is_mismatch(&self) -> bool {
        self.scale.is_some() || !self.elements.is_empty()
    }
}

/// The counts of a block check.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BlockSummary {
    /// Blocks (lines) checked.
    pub checked: u64,
    /// Blank lines, `#` comments and CSV headers.
    pub skipped: u64,
    /// Blocks with any mismatch.
    pub mismatches: u64,
    /// Blocks whose whole answer is another recipe row's, by row.
    pub other_rule: BTreeMap<String, u64>,
    /// Blocks with a wrong scale, by what gives that scale.
    pub scale: BTreeMap<String, u64>,
    /// Wrong elements by class.
    pub elements: BTreeMap<ElementClass, u64>,
    /// Wrong elements by index in the block.
    pub element_index: Vec<u64>,
    /// The first [`SHOWN_MISMATCHES`] mismatching blocks, one line each.
    pub shown: Vec<String>,
}

impl BlockSummary {
    /// Wrong scales in all.
    #[must_use]
    pub fn scale_mismatches(&self) -> u64 {
        self.scale.values().sum()
    }

    /// Wrong elements in all.
    #[must_use]
    pub fn element_mismatches(&self) -> u64 {
        self.elements.values().sum()
    }

    /// The mismatches shown, the counts by class, then `N checked, M mismatches`.
    #[must_use]
    pub fn report(&self) -> String {
        let mut lines = self.shown.clone();
        if self.mismatches > self.shown.len() as u64 {
            lines.push(format!("... {} more mismatching blocks not shown", self.mismatches - self.shown.len() as u64));
        }
        for (rule, n) in &self.other_rule {
            lines.push(format!("{:>12}  blocks as {rule} computes them", thousands(*n)));
        }
        for (why, n) in &self.scale {
            lines.push(format!("{:>12}  wrong scale: {why}", thousands(*n)));
        }
        for (class, n) in &self.elements {
            lines.push(format!("{:>12}  wrong element: {}", thousands(*n), class.describe()));
        }
        let indices: Vec<String> = self
            .element_index
            .iter()
            .enumerate()
            .filter(|(_, &n)| n > 0)
            .map(|(i, n)| format!("{i}: {}", thousands(*n)))
            .collect();
        if !indices.is_empty() {
            lines.push(format!("wrong elements by index: {}", indices.join(", ")));
        }
        lines.push(checked_line(self.checked, self.mismatches, self.skipped));
        lines.join("\n")
    }

    fn add(&mut self, line: u64, verdict: &BlockVerdict, unit: &BlockUnit) {
        if !verdict.is_mismatch() {
            return;
        }
        self.mismatches += 1;
        for rule in &verdict.other_rule {
            *self.other_rule.entry(rule.clone()).or_default() += 1;
        }
        if let Some((_, _, why)) = &verdict.scale {
            *self.scale.entry(why.clone()).or_default() += 1;
        }
        for &(i, _, _, class) in &verdict.elements {
            *self.elements.entry(class).or_default() += 1;
            self.element_index[i] += 1;
        }
        if self.shown.len() < SHOWN_MISMATCHES {
            self.shown.push(format!("line {line}: {}", unit.explain(verdict)));
        }
    }
}

/// One parsed line.
struct Row {
    line: u64,
    inputs: Vec<u32>,
    global: Option<u32>,
    scale: u32,
    elements: Vec<u8>,
    values: Vec<u32>,
}

/// Lines read before a batch is checked (on every core).
const CHECK_BATCH: usize = 1 << 14;

impl BlockUnit {
    /// Reads one line (`None`: blank, comment or header). Errors name the line and the column
    /// (the 1-based character position of the word).
    fn parse(&self, columns: &[(String, usize)], text: &[u8], input: &str, line: u64) -> Result<Option<Row>> {
        let trimmed = text.trim_ascii_start();
        if is_skipped(text)
            || trimmed.starts_with(b"x0,")
            || trimmed.starts_with(b"global,")
            || trimmed.starts_with(b"scale,")
        {
            return Ok(None);
        }
        let error = |column: usize, why: String| Error::DumpLine {
            input: input.to_string(),
            line,
            why: format!("column {column}: {why}"),
        };
        let mut words = Vec::with_capacity(columns.len());
        let mut k = 0;
        while k < text.len() {
            if text[k].is_ascii_whitespace() || text[k] == b',' {
                k += 1;
                continue;
            }
            let start = k;
            while k < text.len() && !(text[k].is_ascii_whitespace() || text[k] == b',') {
                k += 1;
            }
            let word = &text[start..k];
            let column = start + 1;
            let Some((name, width)) = columns.get(words.len()) else {
                return Err(error(
                    column,
                    format!("{:?} after the {} words of a block line ({})", shown(word), columns.len(), self.header()),
                ));
            };
            if word.len() != *width || !word.iter().all(u8::is_ascii_hexdigit) {
                return Err(error(column, format!("{name} {:?} is not {width} hex digits", shown(word))));
            }
            let value = word.iter().fold(0u64, |v, &b| v << 4 | u64::from((b as char).to_digit(16).unwrap_or(0)));
            if name.starts_with('e') && name != "e" && value >> self.element_bits != 0 {
                return Err(error(column, format!("{name} {value:#04x} does not fit {} bits", self.element_bits)));
            }
            words.push(value as u32);
        }
        if words.len() < columns.len() {
            return Err(error(
                text.len() + 1,
                format!(
                    "{} words; a block line has {} ({})",
                    words.len(),
                    columns.len(),
                    self.header().replace(',', " ")
                ),
            ));
        }
        let n = self.block;
        let mut it = words.into_iter();
        let inputs =
            if self.direction == BlockDirection::Quantize { it.by_ref().take(n).collect() } else { Vec::new() };
        let global = if self.global { it.next() } else { None };
        let scale = it.next().unwrap_or(0);
        let elements = it.by_ref().take(n).map(|e| e as u8).collect();
        let values = it.collect();
        Ok(Some(Row { line, inputs, global, scale, elements, values }))
    }

    /// Checks a dump of block lines (module docs), in batches on every core.
    pub fn check(&self, input: impl Read, name: &str) -> Result<BlockSummary> {
        let mut reader = LineReader::new(input, name);
        let mut summary = BlockSummary { element_index: vec![0; self.block], ..BlockSummary::default() };
        // Lines are copied into one buffer and parsed on every core with the batch.
        let mut text: Vec<u8> = Vec::with_capacity(CHECK_BATCH * 512);
        let mut lines: Vec<(u64, usize, usize)> = Vec::with_capacity(CHECK_BATCH);
        while let Some((line, bytes)) = reader.next_line()? {
            lines.push((line, text.len(), text.len() + bytes.len()));
            text.extend_from_slice(bytes);
            if lines.len() == CHECK_BATCH {
                self.check_batch(&text, &lines, name, &mut summary)?;
                text.clear();
                lines.clear();
            }
        }
        self.check_batch(&text, &lines, name, &mut summary)?;
        Ok(summary)
    }

    fn check_batch(
        &self,
        text: &[u8],
        lines: &[(u64, usize, usize)],
        name: &str,
        summary: &mut BlockSummary,
    ) -> Result<()> {
        let columns = self.columns();
        let parsed: Vec<Option<Row>> = lines
            .par_iter()
            .map(|&(line, a, b)| self.parse(&columns, &text[a..b], name, line))
            .collect::<Result<_>>()?;
        let batch: Vec<Row> = parsed.into_iter().flatten().collect();
        summary.skipped += (lines.len() - batch.len()) as u64;
        // Runs of one per-tensor scale are one call of the definition each.
        let mut runs: Vec<&[Row]> = Vec::new();
        let mut rest: &[Row] = &batch;
        while !rest.is_empty() {
            let k = rest.iter().take(1024).take_while(|r| r.global == rest[0].global).count();
            runs.push(&rest[..k]);
            rest = &rest[k..];
        }
        let verdicts: Vec<Vec<(u64, BlockVerdict)>> =
            runs.par_iter().map(|run| self.check_run(run, name)).collect::<Result<_>>()?;
        for (line, verdict) in verdicts.iter().flatten() {
            summary.add(*line, verdict, self);
        }
        summary.checked += batch.len() as u64;
        Ok(())
    }

    /// Rows sharing one per-tensor scale: the mismatching ones with their verdicts.
    fn check_run(&self, run: &[Row], name: &str) -> Result<Vec<(u64, BlockVerdict)>> {
        let global = run[0].global;
        let n = self.block;
        let line_error =
            |r: &Row, e: Error| Error::DumpLine { input: name.to_string(), line: r.line, why: e.to_string() };
        let mut out = Vec::new();
        match self.direction {
            // Each vector is a block quantized as a tensor of its own. Rows whose NaN block maximum
            // depends on the block's place in the tensor (`nan.lanes`) are checked one block at a
            // time, as they were made; the others in one batch, which gives the same codes.
            BlockDirection::Quantize if !self.scheme.recipe().nan.lanes.is_empty() => {
                for r in run {
                    let q = self.quantize(&r.inputs, global).map_err(|e| line_error(r, e))?;
                    let scale = scale_bits(&q.scales, 0);
                    if scale != r.scale || q.elements != r.elements {
                        out.push((r.line, self.quantize_verdict(r, scale, &q.elements)?));
                    }
                }
            }
            BlockDirection::Quantize => {
                let inputs: Vec<u32> = run.iter().flat_map(|r| r.inputs.iter().copied()).collect();
                let q = self.quantize(&inputs, global).map_err(|e| line_error(&run[0], e))?;
                for (b, r) in run.iter().enumerate() {
                    let scale = scale_bits(&q.scales, b);
                    let elements = &q.elements[b * n..(b + 1) * n];
                    if scale != r.scale || elements != &r.elements[..] {
                        out.push((r.line, self.quantize_verdict(r, scale, elements)?));
                    }
                }
            }
            BlockDirection::Dequantize => {
                let scales: Vec<u32> = run.iter().map(|r| r.scale).collect();
                let elements: Vec<u8> = run.iter().flat_map(|r| r.elements.iter().copied()).collect();
                let values = self.dequantize(&scales, &elements, global).map_err(|e| line_error(&run[0], e))?;
                for (b, r) in run.iter().enumerate() {
                    let expected = &values[b * n..(b + 1) * n];
                    if expected != &r.values[..] {
                        out.push((r.line, self.dequantize_verdict(r, expected)));
                    }
                }
            }
        }
        Ok(out)
    }

    fn quantize_verdict(&self, r: &Row, scale: u32, elements: &[u8]) -> Result<BlockVerdict> {
        let mut verdict = BlockVerdict::default();
        // The rows that give this block exactly, or only its scale.
        let mut scale_rules = Vec::new();
        for s in &self.siblings {
            let other = BlockUnit {
                scheme: s.clone(),
                input: self.input,
                direction: self.direction,
                block: self.block,
                element_bits: self.element_bits,
                scale: self.scale,
                global: self.global,
                siblings: Vec::new(),
            };
            let Ok(q) = other.quantize(&r.inputs, r.global) else { continue };
            if scale_bits(&q.scales, 0) == r.scale {
                if q.elements == r.elements {
                    verdict.other_rule.push(s.name().to_string());
                }
                scale_rules.push(s.name().to_string());
            }
        }
        if scale != r.scale {
            let why = if !scale_rules.is_empty() {
                format!("as {} computes it", scale_rules.join(" or "))
            } else if r.scale == scale + 1 {
                "one step larger".to_string()
            } else if r.scale + 1 == scale {
                "one step smaller".to_string()
            } else {
                "another value".to_string()
            };
            verdict.scale = Some((scale, r.scale, why));
        }
        let element_format = Format::onnx(self.scheme.element_dtype())?;
        let block_class =
            if verdict.scale.is_some() { Some(ElementClass::WrongScaleBlock) } else { self.block_class(&r.inputs) };
        // Values of both answers under the expected scale: is the input their midpoint?
        let expected_values = self.dequantize(&[scale], elements, r.global)?;
        let got_values = self.dequantize(&[scale], &r.elements, r.global)?;
        for (i, (&e, &g)) in elements.iter().zip(&r.elements).enumerate() {
            if e == g {
                continue;
            }
            let class = block_class.unwrap_or_else(|| {
                let x = self.input_value(r.inputs[i]);
                let (ve, vg) = (f32::from_bits(expected_values[i]), f32::from_bits(got_values[i]));
                element_class(&element_format, u64::from(e), u64::from(g), x, ve, vg)
            });
            verdict.elements.push((i, u32::from(e), u32::from(g), class));
        }
        Ok(verdict)
    }

    fn dequantize_verdict(&self, r: &Row, expected: &[u32]) -> BlockVerdict {
        let mut verdict = BlockVerdict::default();
        for s in &self.siblings {
            if let Ok(values) = dequantize_with(s, self.scale, self.block, &[r.scale], &r.elements, r.global) {
                if values == r.values {
                    verdict.other_rule.push(s.name().to_string());
                }
            }
        }
        let float = Format::Onnx(DType::Float);
        for (i, (&e, &g)) in expected.iter().zip(&r.values).enumerate() {
            if e == g {
                continue;
            }
            let class = match classify(&float, u64::from(e), u64::from(g), None) {
                Some(Class::OneUlpAwayFromZero) => ElementClass::OneStepAwayFromZero,
                Some(Class::OneUlpTowardZero) => ElementClass::OneStepTowardZero,
                Some(Class::ZeroSign) => ElementClass::ZeroSign,
                Some(Class::NanForNumber | Class::NumberForNan) => ElementClass::Nan,
                // Two NaNs of other encodings are the same answer.
                Some(Class::NanEncoding) => continue,
                Some(Class::InfinityForMax | Class::MaxForInfinity) => ElementClass::Saturation,
                _ => ElementClass::Other,
            };
            verdict.elements.push((i, e, g, class));
        }
        verdict
    }

    /// The zero-block or NaN/Inf-block class of a block's inputs, if it is one.
    fn block_class(&self, inputs: &[u32]) -> Option<ElementClass> {
        let values: Vec<f32> = inputs.iter().map(|&b| self.input_value(b)).collect();
        if values.iter().all(|v| *v == 0.0) {
            Some(ElementClass::ZeroBlock)
        } else if values.iter().any(|v| !v.is_finite()) {
            Some(ElementClass::NanOrInfBlock)
        } else {
            None
        }
    }

    fn input_value(&self, bits: u32) -> f32 {
        match self.input {
            DType::Float => f32::from_bits(bits),
            DType::Bfloat16 => f32::from_bits(bits << 16),
            _ => half::f16::from_bits(bits as u16).to_f32(),
        }
    }

    /// One mismatching block in words.
    fn explain(&self, v: &BlockVerdict) -> String {
        let mut parts = Vec::new();
        if !v.other_rule.is_empty() {
            parts.push(format!("the block as {} computes it", v.other_rule.join(" or ")));
        }
        let sw = digits(self.scale.bits());
        if let Some((e, g, why)) = &v.scale {
            parts.push(format!("scale expected {e:0sw$X}, got {g:0sw$X} ({why})"));
        }
        let ew = if self.direction == BlockDirection::Quantize { 2 } else { 8 };
        let what = if self.direction == BlockDirection::Quantize { "element" } else { "value" };
        for (i, e, g, class) in v.elements.iter().take(4) {
            parts.push(format!("{what} {i} expected {e:0ew$X}, got {g:0ew$X} ({})", class.describe()));
        }
        if v.elements.len() > 4 {
            parts.push(format!("{} more wrong {what}s", v.elements.len() - 4));
        }
        parts.join("; ")
    }
}

/// How element code `got` differs from `expected` (of `format`), for the input `x` whose
/// answers are worth `ve` and `vg`.
fn element_class(format: &Format, expected: u64, got: u64, x: f32, ve: f32, vg: f32) -> ElementClass {
    // A tie: the input is the midpoint of both answers (up to the rounding of a scale that is
    // no power of two, 1/1024 of their distance).
    let (x, e, g) = (f64::from(x), f64::from(ve), f64::from(vg));
    if e.is_finite() && g.is_finite() && e != g && (x - (e + g) / 2.0).abs() <= (e - g).abs() / 1024.0 {
        return ElementClass::Tie;
    }
    match classify(format, expected, got, None) {
        Some(Class::OneUlpAwayFromZero) => ElementClass::OneStepAwayFromZero,
        Some(Class::OneUlpTowardZero) => ElementClass::OneStepTowardZero,
        Some(Class::ZeroSign) => ElementClass::ZeroSign,
        Some(Class::InfinityForMax | Class::MaxForInfinity) => ElementClass::Saturation,
        Some(Class::NanForNumber | Class::NumberForNan | Class::NanEncoding) => ElementClass::Nan,
        _ => ElementClass::Other,
    }
}

fn shown(word: &[u8]) -> String {
    String::from_utf8_lossy(&word[..word.len().min(40)]).into_owned()
}
