//! The fast path of a checkpoint weight's dequantize: tiles of the weight decoded straight into
//! one output buffer reused for the whole weight, by table lookups, with no per-piece arrays of
//! codes, scales and values and no second pass to convert.
//!
//! The tables are not a second definition of any decoding: they are computed once per weight by
//! the general path (`quant::blocks` dequantize) on probe tensors holding every code.
//! - One-byte block scales (E8M0, E4M3) with E2M1 or 8-bit elements: the value of every (scale
//!   code, element code) pair, per-tensor scale included, converted to the output dtype by a cast
//!   plan. A weight is then pure lookups.
//! - float32 scales on 8-bit elements (DeepSeek FP8, FP8 per tensor, channel or block), for
//!   recipes whose dequantize is the float32 product `element * scale`: the 256 element values
//!   (a probe with unit scales), one multiply per element, then the tile converted to the output
//!   dtype by a cast plan; where a scale covers many elements (DeepSeek's 128 x 128 tiles, one
//!   scale per tensor or per long row), a table of every code's output per scale (`products`).
//!
//! GGUF's block types have a decoder of their own (`ggml_tiles`), its tables made the same way.
//! Anything else (scales of other types, recipes that round the product, shapes
//! that leave a short block) takes the general path. `tests/checkpoint_conventions.rs` compares the
//! two on every convention.

use super::products::{look_up, ScaledTables, ELEMENTS_PER_SCALE_FOR_TABLES};
use super::tile_parts::{code_table, fill, pair_table};
use super::weight::{ElementStorage, LogicalWeight};
use super::{Checkpoint, StoredTensor, StoredType};
use crate::quant::blocks::{self, product, BlockShape, Dequantize, GlobalRule, ProductNan, Scales, Scheme};
use crate::{CastOptions, DType, Plan, Result};
use zerocopy::IntoBytes;

/// Elements decoded per tile: 64 Ki (256 KiB of float32, which stays in the core's L2 cache).
const TILE_ELEMENTS: usize = 1 << 16;

/// How a tile's values are found.
enum Values {
    /// Table lookups with 4-byte outputs (float32).
    Wide(Lookup<u32>),
    /// Table lookups with 2-byte outputs (bfloat16, float16).
    Narrow(Lookup<u16>),
    /// The float32 value of every element code, multiplied by the block's float32 scale; then
    /// converted by `plan` when the output is not float32. With `tables` (scales that cover many
    /// elements), by a table of every code's output per scale (`products`).
    Products { elements: Box<[f32; 256]>, nan: ProductNan, plan: Option<Box<Plan>>, tables: bool },
}

/// The output bits of every (scale code `s`, element byte `b`), at `s * 256 + b`.
enum Lookup<T> {
    /// A byte of two E2M1 codes: its two values, low nibble first.
    Pairs(Vec<[T; 2]>),
    /// A byte of one 8-bit code.
    Singles(Vec<T>),
}

impl<T: Copy> Lookup<T> {
    /// From the value of every (scale code, element code) in a table of `codes` per scale.
    fn new(values: &[T], codes: usize) -> Lookup<T> {
        if codes == 16 {
            Lookup::Pairs(pair_table(values))
        } else {
            Lookup::Singles(values.to_vec())
        }
    }

    /// Decodes blocks of `block` elements, block `k` scaled by code `scales[k]`.
    fn run(&self, elements: &[u8], scales: &[u8], block: usize, dst: &mut [T]) {
        match self {
            Lookup::Pairs(table) => {
                let rows = elements.chunks_exact(block / 2).zip(scales).zip(dst.chunks_exact_mut(block));
                for ((bytes, &s), outs) in rows {
                    let values: &[[T; 2]; 256] = table[usize::from(s) * 256..][..256].try_into().expect("256 pairs");
                    for (pair, &b) in outs.chunks_exact_mut(2).zip(bytes) {
                        pair.copy_from_slice(&values[usize::from(b)]);
                    }
                }
            }
            Lookup::Singles(table) => {
                let rows = elements.chunks_exact(block).zip(scales).zip(dst.chunks_exact_mut(block));
                for ((bytes, &s), outs) in rows {
                    let values: &[T; 256] = table[usize::from(s) * 256..][..256].try_into().expect("256 values");
                    for (o, &b) in outs.iter_mut().zip(bytes) {
                        *o = values[usize::from(b)];
                    }
                }
            }
        }
    }
}

/// Which rows and columns share a scale, for the tile loops.
#[derive(Clone, Copy)]
struct Grid {
    rows: usize,
    cols: usize,
    /// Columns of one row that share a scale (the last run of a row may be shorter).
    segment: usize,
    /// Rows that share a row of scales (1 for row blocks; 0: one row of scales for all).
    rows_per_scale_row: usize,
    /// Scales per row of scales.
    scale_cols: usize,
    /// Bytes of one scale.
    scale_width: usize,
    /// Two element codes a byte (else one).
    packed: bool,
}

impl Grid {
    fn scale_row(&self, row: usize) -> usize {
        row.checked_div(self.rows_per_scale_row).unwrap_or(0)
    }

    fn scale_rows(&self) -> usize {
        if self.rows_per_scale_row == 0 {
            1
        } else {
            self.rows.div_ceil(self.rows_per_scale_row)
        }
    }

    fn element_bytes(&self, elements: usize) -> usize {
        if self.packed {
            elements / 2
        } else {
            elements
        }
    }
}

/// A weight the fast path decodes.
pub(super) enum FastWeight<'a> {
    /// Elements and scales in tensors of their own.
    Tiles(TiledWeight<'a>),
    /// GGUF blocks (`ggml_tiles`).
    Ggml(Box<super::ggml_tiles::GgmlWeight<'a>>),
}

impl FastWeight<'_> {
    /// Calls `out` with the weight's values in the output dtype, a tile at a time in order.
    pub(super) fn run(&self, ckpt: &Checkpoint, out: &mut dyn FnMut(&[u8]) -> Result<()>) -> Result<()> {
        match self {
            FastWeight::Tiles(w) => w.run(ckpt, out),
            FastWeight::Ggml(w) => w.run(ckpt, out),
        }
    }
}

/// A weight of element and scale tensors the fast path decodes.
pub(super) struct TiledWeight<'a> {
    elements: &'a StoredTensor,
    scales: &'a StoredTensor,
    grid: Grid,
    values: Values,
}

/// The fast path for `w` decoded to `target`, or `None` when the weight takes the general path.
pub(super) fn fast_weight<'a>(
    ckpt: &'a Checkpoint,
    w: &LogicalWeight,
    scheme: &Scheme,
    global: Option<f32>,
    target: DType,
) -> Result<Option<FastWeight<'a>>> {
    if w.storage == ElementStorage::GgmlBlocks {
        let Some(t) = ckpt.tensor(&w.elements) else { return Ok(None) };
        return Ok(super::ggml_tiles::fast_ggml(t, scheme, target)?.map(|g| FastWeight::Ggml(Box::new(g))));
    }
    let (Some(elements), Some(scales)) = (ckpt.tensor(&w.elements), w.scales.as_deref().and_then(|n| ckpt.tensor(n)))
    else {
        return Ok(None);
    };
    if w.shape.is_empty() || !matches!(target, DType::Float | DType::Bfloat16 | DType::Float16) {
        return Ok(None);
    }
    let Some(grid) = grid_of(w, scheme, elements, scales) else { return Ok(None) };
    let recipe = scheme.recipe();
    let bits = recipe.element.bits().unwrap_or(0);
    let (segment, cols) = (grid.segment, grid.cols);
    let (scale_code, scale_float) = (grid.scale_width == 1, grid.scale_width == 4);
    let values = if scale_code
        && matches!(recipe.block, BlockShape::Row(_))
        && cols % segment == 0
        && segment <= TILE_ELEMENTS
    {
        let codes = 1usize << bits;
        let table = code_table(scheme, segment, codes, global)?;
        let plan = Plan::new(DType::Float, target, &CastOptions::default())?;
        if target == DType::Float {
            Values::Wide(Lookup::new(&table.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), codes))
        } else {
            let mut narrow = vec![0u16; table.len()];
            plan.run(table.as_bytes(), narrow.as_mut_bytes(), table.len())?;
            Values::Narrow(Lookup::new(&narrow, codes))
        }
    } else if scale_float && bits == 8 && products_are_plain(scheme) && global.is_none() {
        let elements = unit_scale_values(scheme, &recipe.block)?;
        let plan = (target != DType::Float)
            .then(|| Plan::new(DType::Float, target, &CastOptions::default()).map(Box::new))
            .transpose()?;
        let scale_count = grid.scale_rows() * grid.scale_cols;
        let tables = grid.rows * grid.cols / scale_count.max(1) >= ELEMENTS_PER_SCALE_FOR_TABLES;
        Values::Products { elements, nan: recipe.nan.product, plan, tables }
    } else {
        return Ok(None);
    };
    Ok(Some(FastWeight::Tiles(TiledWeight { elements, scales, grid, values })))
}

/// The rows and columns of `w`'s scales, when its elements and scales are laid out as the tiles
/// expect: E2M1 codes two a byte or 8-bit codes one a byte, one-byte or float32 scales, the byte
/// counts matching the shape.
fn grid_of(w: &LogicalWeight, scheme: &Scheme, elements: &StoredTensor, scales: &StoredTensor) -> Option<Grid> {
    let recipe = scheme.recipe();
    let bits = recipe.element.bits().unwrap_or(0);
    let packed = match (w.storage, bits) {
        (ElementStorage::PackedE2M1, 4) => true,
        (ElementStorage::Codes, 8) => false,
        _ => return None,
    };
    let cols = *w.shape.last()?;
    let rows: usize = w.shape[..w.shape.len() - 1].iter().product();
    let (segment, rows_per_scale_row, scale_cols) = match recipe.block {
        BlockShape::Row(n) => (n, 1, cols.div_ceil(n)),
        BlockShape::Tile(r, c) => (c, r, cols.div_ceil(c)),
        BlockShape::Channel => (cols, 1, 1),
        BlockShape::Tensor => (cols, 0, 1),
    };
    let scale_width = match scales.stored {
        StoredType::Plain(DType::Uint8 | DType::Float8E4M3FN | DType::Float8E8M0) => 1,
        StoredType::Plain(DType::Float) => 4,
        _ => return None,
    };
    let grid = Grid { rows, cols, segment, rows_per_scale_row, scale_cols, scale_width, packed };
    let fits = cols > 0
        && segment > 0
        && (!packed || (cols % 2 == 0 && segment % 2 == 0))
        && grid.element_bytes(cols) as u64 * rows as u64 == elements.len
        && (grid.scale_rows() * scale_cols * scale_width) as u64 == scales.len;
    fits.then_some(grid)
}

/// The recipe's dequantize is the float32 product of element and scale, nothing rounded after.
fn products_are_plain(scheme: &Scheme) -> bool {
    let recipe = scheme.recipe();
    recipe.global == GlobalRule::None
        && scheme.mx().is_none()
        && matches!(recipe.dequantize, Dequantize::Multiply | Dequantize::MultiplyInComputeDtype)
}

/// The value of every 8-bit element code under a scale of 1.0, by the general path.
fn unit_scale_values(scheme: &Scheme, block: &BlockShape) -> Result<Box<[f32; 256]>> {
    let (shape, scale_count) = match *block {
        BlockShape::Row(n) => (vec![256usize.div_ceil(n) * n], 256usize.div_ceil(n)),
        BlockShape::Tile(r, c) => (vec![r, 256usize.div_ceil(c) * c], 256usize.div_ceil(c)),
        BlockShape::Channel => (vec![1, 256], 1),
        BlockShape::Tensor => (vec![256], 1),
    };
    let count: usize = shape.iter().product();
    let row = *shape.last().expect("not empty");
    let codes: Vec<u8> = (0..count).map(|i| (i % row % 256) as u8).collect();
    let values =
        blocks::from_arrays(codes, &shape, Scales::Float32(vec![1.0; scale_count]), scheme, -1, None)?.dequantize()?;
    let mut table = Box::new([0f32; 256]);
    table.copy_from_slice(&values[..256]);
    Ok(table)
}

/// The buffers one weight's tiles reuse.
#[derive(Default)]
struct Buffers {
    elements: Vec<u8>,
    scales: Vec<u8>,
    wide: Vec<u32>,
    narrow: Vec<u16>,
}

impl Grid {
    /// Calls `f` with each tile in order: bands of whole rows, or runs of one row longer than a
    /// tile (whole segments, or a tile's worth when a segment is longer; always an even count).
    fn each_tile(&self, mut f: impl FnMut(Runs) -> Result<()>) -> Result<()> {
        let runs = |r0, r1, c0, c1| Runs { g: *self, r0, r1, c0, c1, s0: self.scale_row(r0), q0: c0 / self.segment };
        if self.cols <= TILE_ELEMENTS {
            let band = (TILE_ELEMENTS / self.cols).max(1);
            let mut r0 = 0;
            while r0 < self.rows {
                let r1 = (r0 + band).min(self.rows);
                f(runs(r0, r1, 0, self.cols))?;
                r0 = r1;
            }
        } else {
            let step =
                if self.segment <= TILE_ELEMENTS { TILE_ELEMENTS / self.segment * self.segment } else { TILE_ELEMENTS };
            for r in 0..self.rows {
                let mut c0 = 0;
                while c0 < self.cols {
                    let c1 = (c0 + step).min(self.cols);
                    f(runs(r, r + 1, c0, c1))?;
                    c0 = c1;
                }
            }
        }
        Ok(())
    }
}

impl Runs {
    /// Reads the tile's element bytes and its scales (one contiguous run: whole rows of
    /// scales, or part of one row) into the buffers; returns their lengths.
    fn read(
        &self,
        ckpt: &Checkpoint,
        elements: &StoredTensor,
        scales: &StoredTensor,
        buffers: &mut Buffers,
    ) -> Result<(usize, usize)> {
        let g = self.g;
        let row_bytes = g.element_bytes(g.cols);
        let element_start = self.r0 * row_bytes + g.element_bytes(self.c0);
        let element_len = (self.r1 - self.r0 - 1) * row_bytes + g.element_bytes(self.c1 - self.c0);
        ckpt.read_at(elements, element_start as u64, fill(&mut buffers.elements, element_len)?)?;
        let s1 = g.scale_row(self.r1 - 1) + 1;
        let q1 = self.c1.div_ceil(g.segment);
        let scale_start = (self.s0 * g.scale_cols + self.q0) * g.scale_width;
        let scale_len = ((s1 - self.s0 - 1) * g.scale_cols + (q1 - self.q0)) * g.scale_width;
        ckpt.read_at(scales, scale_start as u64, fill(&mut buffers.scales, scale_len)?)?;
        Ok((element_len, scale_len))
    }

    fn count(&self) -> usize {
        (self.r1 - self.r0) * (self.c1 - self.c0)
    }
}

impl TiledWeight<'_> {
    /// Calls `out` with the weight's values in the output dtype, tile by tile in order.
    fn run(&self, ckpt: &Checkpoint, out: &mut dyn FnMut(&[u8]) -> Result<()>) -> Result<()> {
        let g = self.grid;
        let mut buffers = Buffers::default();
        let (mut wide_tables, mut narrow_tables) = match &self.values {
            Values::Products { elements, nan, plan: None, tables: true } => {
                (ScaledTables::new(elements, *nan, None), ScaledTables::empty())
            }
            Values::Products { elements, nan, plan: Some(plan), tables: true } => {
                (ScaledTables::empty(), ScaledTables::new(elements, *nan, Some(plan)))
            }
            _ => (ScaledTables::empty(), ScaledTables::empty()),
        };
        g.each_tile(|runs| {
            let (element_len, scale_len) = runs.read(ckpt, self.elements, self.scales, &mut buffers)?;
            let count = runs.count();
            let (elements, scales) = (&buffers.elements[..element_len], &buffers.scales[..scale_len]);
            match &self.values {
                // Lookups are on row blocks that divide the rows: the tile's blocks and scales
                // are in step.
                Values::Wide(lookup) => {
                    let dst = fill(&mut buffers.wide, count)?;
                    lookup.run(elements, scales, g.segment, dst);
                    out(dst.as_bytes())
                }
                Values::Narrow(lookup) => {
                    let dst = fill(&mut buffers.narrow, count)?;
                    lookup.run(elements, scales, g.segment, dst);
                    out(dst.as_bytes())
                }
                Values::Products { tables: true, plan, .. } => {
                    // Scale number of the tile's first scale: the runs count from it.
                    let first = runs.s0 * g.scale_cols + runs.q0;
                    let mut failed = None;
                    let scale = |q: usize| f32::from_le_bytes(scales[4 * q..4 * q + 4].try_into().expect("4 bytes"));
                    let bytes = if plan.is_some() {
                        let dst = fill(&mut buffers.narrow, count)?;
                        runs.each(|q, codes, outs| match narrow_tables.table(first + q, scale(q)) {
                            Ok(table) => look_up(table, &elements[codes], &mut dst[outs]),
                            Err(e) => failed = Some(e),
                        });
                        dst.as_bytes()
                    } else {
                        let dst = fill(&mut buffers.wide, count)?;
                        runs.each(|q, codes, outs| match wide_tables.table(first + q, scale(q)) {
                            Ok(table) => look_up(table, &elements[codes], &mut dst[outs]),
                            Err(e) => failed = Some(e),
                        });
                        dst.as_bytes()
                    };
                    match failed {
                        Some(e) => Err(e),
                        None => out(bytes),
                    }
                }
                Values::Products { elements: values, nan, plan, tables: false } => {
                    let dst = fill(&mut buffers.wide, count)?;
                    runs.products(elements, scales, values, *nan, dst);
                    match plan {
                        None => out(dst.as_bytes()),
                        Some(plan) => {
                            let converted = fill(&mut buffers.narrow, count)?;
                            plan.run(dst.as_bytes(), converted.as_mut_bytes(), count)?;
                            out(converted.as_bytes())
                        }
                    }
                }
            }
        })
    }
}

/// One tile (rows `r0..r1`, columns `c0..c1`: all columns when more than one row) and its runs
/// of columns that share a scale.
#[derive(Clone, Copy)]
struct Runs {
    g: Grid,
    r0: usize,
    r1: usize,
    c0: usize,
    c1: usize,
    s0: usize,
    q0: usize,
}

impl Runs {
    /// Calls `f(scale index in the tile's scales, element byte range, output range)` per run.
    fn each(&self, mut f: impl FnMut(usize, core::ops::Range<usize>, core::ops::Range<usize>)) {
        let g = self.g;
        let width = self.c1 - self.c0;
        let row_bytes = g.element_bytes(g.cols);
        for r in self.r0..self.r1 {
            let scale_row = (g.scale_row(r) - self.s0) * g.scale_cols;
            let byte_row = (r - self.r0) * row_bytes;
            let out_row = (r - self.r0) * width;
            let mut c = self.c0;
            while c < self.c1 {
                let q = c / g.segment;
                let end = ((q + 1) * g.segment).min(self.c1);
                let (b0, b1) = (g.element_bytes(c - self.c0), g.element_bytes(end - self.c0));
                f(
                    scale_row + q - self.q0,
                    byte_row + b0..byte_row + b1,
                    out_row + c - self.c0..out_row + end - self.c0,
                );
                c = end;
            }
        }
    }

    fn products(&self, elements: &[u8], scales: &[u8], values: &[f32; 256], nan: ProductNan, dst: &mut [u32]) {
        self.each(|q, bytes, outs| {
            let s = f32::from_le_bytes(scales[4 * q..4 * q + 4].try_into().expect("4 bytes"));
            for (o, &b) in dst[outs].iter_mut().zip(&elements[bytes]) {
                *o = product(nan, values[usize::from(b)], s).to_bits();
            }
        });
    }
}

/// How far apart two versions of a weight are in its element format (`compare`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ElementSteps {
    /// The element format the steps are counted in: the scheme's element type for a quantized
    /// weight (FLOAT4E2M1, FLOAT8E4M3FN, ...), the dtype of a plain float tensor.
    pub format: DType,
    /// The largest distance between the two element codes of an element, in steps of the format
    /// (consecutive values one step apart, +0 and -0 the same value), over the elements whose
    /// block scale and per-tensor scale are bit for bit the same in both (so both codes are on
    /// the same grid of values); NaN codes are not counted.
    pub largest: u64,
    /// Elements whose block scale or per-tensor scale differs: their codes are on different
    /// grids and are not counted in `largest`.
    pub under_different_scales: u64,
}

/// The order of a float format's codes: sign and magnitude (an unsigned format: the code).
struct CodeOrder {
    dtype: DType,
    width: u32,
    signed: bool,
    /// NaN codes, for formats of 16 bits or fewer.
    nan: Vec<bool>,
}

impl CodeOrder {
    fn new(dtype: DType) -> Option<CodeOrder> {
        let crate::Kind::Float(format) = dtype.kind() else { return None };
        let width = format.width();
        let nan = if width <= 16 {
            (0..1u64 << width)
                .map(|c| {
                    let bits = crate::convert_code(dtype, DType::Float, c, &CastOptions::default()).unwrap_or(0);
                    f32::from_bits(bits as u32).is_nan()
                })
                .collect()
        } else {
            Vec::new()
        };
        Some(CodeOrder { dtype, width, signed: format.signed, nan })
    }

    fn is_nan(&self, code: u64) -> bool {
        match self.width {
            0..=16 => self.nan[code as usize],
            32 if self.dtype == DType::Float => f32::from_bits(code as u32).is_nan(),
            64 if self.dtype == DType::Double => f64::from_bits(code).is_nan(),
            _ => crate::convert_code(self.dtype, DType::Double, code, &CastOptions::default())
                .map_or(true, |b| f64::from_bits(b).is_nan()),
        }
    }

    fn ordinal(&self, code: u64) -> i128 {
        let sign = 1u64 << (self.width - 1);
        if self.signed && code & sign != 0 {
            -i128::from(code & (sign - 1))
        } else {
            i128::from(code)
        }
    }

    /// The distance of two codes in steps, `None` when either is NaN.
    fn distance(&self, a: u64, b: u64) -> Option<u64> {
        (!self.is_nan(a) && !self.is_nan(b)).then(|| self.ordinal(a).abs_diff(self.ordinal(b)) as u64)
    }
}

/// The element codes of two versions of a weight stored alike (the same scheme, storage, dtypes
/// and shapes) compared in steps of the element format; `None` when they are stored differently
/// or the format is not a float format of whole bytes or packed E2M1.
pub fn element_steps(
    a: &Checkpoint,
    wa: &LogicalWeight,
    b: &Checkpoint,
    wb: &LogicalWeight,
) -> Result<Option<ElementSteps>> {
    if wa.shape != wb.shape || wa.storage != wb.storage || wa.scheme != wb.scheme {
        return Ok(None);
    }
    let (Some(ea), Some(eb)) = (a.tensor(&wa.elements), b.tensor(&wb.elements)) else { return Ok(None) };
    if ea.stored != eb.stored || ea.len != eb.len {
        return Ok(None);
    }
    let Some(scheme_name) = &wa.scheme else { return plain_steps(a, ea, b, eb) };
    let scheme = Scheme::parse(scheme_name)?;
    let scales = |ckpt: &'_ Checkpoint, w: &LogicalWeight| w.scales.as_deref().and_then(|n| ckpt.tensor(n)).cloned();
    let (Some(sa), Some(sb)) = (scales(a, wa), scales(b, wb)) else { return Ok(None) };
    if sa.stored != sb.stored || sa.len != sb.len {
        return Ok(None);
    }
    let Some(grid) = grid_of(wa, &scheme, ea, &sa) else { return Ok(None) };
    let Some(order) = CodeOrder::new(scheme.recipe().element) else { return Ok(None) };
    let global = |ckpt: &Checkpoint, w: &LogicalWeight| -> Result<Option<Vec<u8>>> {
        let Some(t) = w.global_scale.as_deref().and_then(|n| ckpt.tensor(n)) else { return Ok(None) };
        let mut bytes = vec![0u8; (t.len as usize).min(16)];
        ckpt.read_at(t, 0, &mut bytes)?;
        Ok(Some(bytes))
    };
    let same_global = global(a, wa)? == global(b, wb)?;
    let mut steps = ElementSteps { format: order.dtype, largest: 0, under_different_scales: 0 };
    let (mut ba, mut bb) = (Buffers::default(), Buffers::default());
    let width = grid.scale_width;
    grid.each_tile(|runs| {
        let (element_len, scale_len) = runs.read(a, ea, &sa, &mut ba)?;
        runs.read(b, eb, &sb, &mut bb)?;
        let (xa, xb) = (&ba.elements[..element_len], &bb.elements[..element_len]);
        let (qa, qb) = (&ba.scales[..scale_len], &bb.scales[..scale_len]);
        runs.each(|q, bytes, outs| {
            if !same_global || qa[q * width..(q + 1) * width] != qb[q * width..(q + 1) * width] {
                steps.under_different_scales += outs.len() as u64;
                return;
            }
            for (&x, &y) in xa[bytes.clone()].iter().zip(&xb[bytes]) {
                let pairs: &[(u8, u8)] = if grid.packed { &[(x & 15, y & 15), (x >> 4, y >> 4)] } else { &[(x, y)] };
                for &(cx, cy) in pairs {
                    if let Some(d) = order.distance(u64::from(cx), u64::from(cy)) {
                        steps.largest = steps.largest.max(d);
                    }
                }
            }
        });
        Ok(())
    })?;
    Ok(Some(steps))
}

/// Two plain float tensors of the same dtype and size, code by code.
fn plain_steps(a: &Checkpoint, ta: &StoredTensor, b: &Checkpoint, tb: &StoredTensor) -> Result<Option<ElementSteps>> {
    let StoredType::Plain(dtype) = ta.stored else { return Ok(None) };
    let Some(order) = CodeOrder::new(dtype) else { return Ok(None) };
    let bytes = match order.width {
        8 | 16 | 32 | 64 => order.width as usize / 8,
        _ => return Ok(None),
    };
    let mut steps = ElementSteps { format: dtype, largest: 0, under_different_scales: 0 };
    let piece = (1usize << 20) / bytes * bytes;
    let (mut xa, mut xb) = (vec![0u8; piece], vec![0u8; piece]);
    let mut start = 0u64;
    while start < ta.len {
        let n = (ta.len - start).min(piece as u64) as usize;
        a.read_at(ta, start, &mut xa[..n])?;
        b.read_at(tb, start, &mut xb[..n])?;
        for (x, y) in xa[..n].chunks_exact(bytes).zip(xb[..n].chunks_exact(bytes)) {
            let code = |c: &[u8]| c.iter().rev().fold(0u64, |v, &byte| v << 8 | u64::from(byte));
            if let Some(d) = order.distance(code(x), code(y)) {
                steps.largest = steps.largest.max(d);
            }
        }
        start += n as u64;
    }
    Ok(Some(steps))
}

#[cfg(test)]
pub(super) mod tests {
    //! The tile decoder against the general path (`quant::blocks` dequantize, a band at a time),
    //! bit for bit, on every convention it takes, to every output dtype: every element code
    //! under every scale code, float32 scales of every kind (NaN, infinities, zero, subnormal,
    //! negative), short tiles, and rows longer than a tile.

    use super::super::decode::{pieces, Path};
    use super::super::{recognise, write_safetensors, Checkpoint, SafetensorsTensor};
    use super::*;

    /// A deterministic byte stream (xorshift) so every code turns up in every position class.
    pub(in super::super) fn bytes(seed: u64, n: usize) -> Vec<u8> {
        let mut x = seed | 1;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 24) as u8
            })
            .collect()
    }

    /// float32 scales: specials first, then values of every exponent and both signs.
    fn float_scales(n: usize) -> Vec<u8> {
        let special = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 0.0, -0.0, 1e-40, 448.0, -3.5, f32::MAX];
        let raw = bytes(99, 4 * n);
        (0..n)
            .flat_map(|k| {
                let v = special.get(k).copied().unwrap_or_else(|| {
                    let b = u32::from_le_bytes(raw[4 * k..4 * k + 4].try_into().unwrap());
                    // Exponents from 2^-40 to 2^40, both signs.
                    f32::from_bits((b & 0x807F_FFFF) | ((87 + (b >> 8) % 80) << 23))
                });
                v.to_le_bytes()
            })
            .collect()
    }

    type Tensor<'a> = (&'a str, DType, Vec<usize>, Vec<u8>);

    fn checkpoint(tensors: &[Tensor<'_>], config: Option<&str>, hf_quant: Option<&str>) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let specs: Vec<SafetensorsTensor> = tensors
            .iter()
            .map(|(name, dtype, shape, _)| SafetensorsTensor {
                name: name.to_string(),
                dtype: *dtype,
                shape: shape.clone(),
            })
            .collect();
        write_safetensors(&dir.path().join("model.safetensors"), &specs, &[], |k, out| {
            out.write_all(&tensors[k].3).map_err(|e| crate::Error::io(std::path::Path::new("test"), e))
        })
        .unwrap();
        if let Some(text) = config {
            std::fs::write(dir.path().join("config.json"), text).unwrap();
        }
        if let Some(text) = hf_quant {
            std::fs::write(dir.path().join("hf_quant_config.json"), text).unwrap();
        }
        dir
    }

    /// The weight decoded by `path`, all of it.
    pub(in super::super) fn decoded(ckpt: &Checkpoint, w: &LogicalWeight, float: DType, path: Path) -> Vec<u8> {
        let mut all = Vec::new();
        pieces(ckpt, w, float, path, &mut |b| {
            all.extend_from_slice(b);
            Ok(())
        })
        .unwrap();
        all
    }

    /// The checkpoint's one quantized weight is `scheme`, goes through the tiles, and decodes
    /// to the general path's bits in every output dtype.
    fn same_as_general(dir: &tempfile::TempDir, scheme: &str) {
        let ckpt = Checkpoint::open(dir.path()).unwrap();
        let weights = recognise(&ckpt);
        let w = weights.iter().find(|w| w.scheme.is_some()).expect("a quantized weight");
        assert_eq!(w.scheme.as_deref(), Some(scheme), "{}", w.why);
        assert!(w.problems.is_empty(), "{:?}", w.problems);
        let global = w.global_scale.as_deref().map(|n| {
            let mut b = [0u8; 4];
            ckpt.read_at(ckpt.tensor(n).unwrap(), 0, &mut b).unwrap();
            f32::from_le_bytes(b)
        });
        let parsed = Scheme::parse(scheme).unwrap();
        for float in [DType::Float, DType::Bfloat16, DType::Float16] {
            assert!(fast_weight(&ckpt, w, &parsed, global, float).unwrap().is_some(), "{scheme} takes the tiles");
            let (fast, general) = (decoded(&ckpt, w, float, Path::Tiles), decoded(&ckpt, w, float, Path::General));
            assert_eq!(fast.len(), w.shape.iter().product::<usize>() * float.bits().unwrap() as usize / 8);
            if let Some(k) = (0..fast.len()).find(|&k| fast[k] != general[k]) {
                panic!("{scheme} to {float}: byte {k} differs ({} vs {})", fast[k], general[k]);
            }
        }
    }

    /// Every scale code 0..=255 in order, repeated to `n`.
    fn every_code(n: usize) -> Vec<u8> {
        (0..n).map(|k| k as u8).collect()
    }

    #[test]
    fn gpt_oss_mxfp4_and_compressed_tensors_mxfp4() {
        // 3 x 4 x 96 = 1152 blocks of 32: every scale code with several element bytes each.
        let blocks = bytes(1, 3 * 4 * 96 * 16);
        let dir = checkpoint(
            &[
                ("m.experts.down_blocks", DType::Uint8, vec![3, 4, 96, 16], blocks),
                ("m.experts.down_scales", DType::Uint8, vec![3, 4, 96], every_code(3 * 4 * 96)),
            ],
            Some(r#"{"quantization_config": {"quant_method": "mxfp4"}}"#),
            None,
        );
        same_as_general(&dir, "ocp:mxfp4");
        // A row longer than a tile: 2 rows of 2^16 + 64 elements.
        let cols = (1 << 16) + 64;
        let dir = checkpoint(
            &[
                ("l.weight_packed", DType::Uint8, vec![2, cols / 2], bytes(2, cols)),
                ("l.weight_scale", DType::Uint8, vec![2, cols / 32], every_code(cols / 16)),
            ],
            Some(
                r#"{"quantization_config": {"quant_method": "compressed-tensors", "format": "mxfp4-pack-quantized"}}"#,
            ),
            None,
        );
        same_as_general(&dir, "compressed-tensors:mxfp4");
    }

    #[test]
    fn nvfp4_of_modelopt_and_compressed_tensors() {
        let (rows, cols) = (40, 128);
        let scales = every_code(rows * cols / 16);
        let dir = checkpoint(
            &[
                ("l.weight", DType::Uint8, vec![rows, cols / 2], bytes(3, rows * cols / 2)),
                ("l.weight_scale", DType::Float8E4M3FN, vec![rows, cols / 16], scales.clone()),
                ("l.weight_scale_2", DType::Float, vec![], 0.013_f32.to_le_bytes().to_vec()),
            ],
            None,
            Some(r#"{"quantization": {"quant_algo": "NVFP4", "group_size": 16}}"#),
        );
        same_as_general(&dir, "modelopt:nvfp4");
        let dir = checkpoint(
            &[
                ("l.weight_packed", DType::Uint8, vec![rows, cols / 2], bytes(4, rows * cols / 2)),
                ("l.weight_scale", DType::Float8E4M3FN, vec![rows, cols / 16], scales),
                ("l.weight_global_scale", DType::Float, vec![1], 1234.5_f32.to_le_bytes().to_vec()),
            ],
            Some(
                r#"{"quantization_config": {"quant_method": "compressed-tensors", "format": "nvfp4-pack-quantized"}}"#,
            ),
            None,
        );
        same_as_general(&dir, "compressed-tensors:nvfp4");
    }

    #[test]
    fn fp8_with_float32_scales() {
        // DeepSeek: 300 x 260, tiles of 128 x 128 with short ones at both edges.
        for (config, scheme) in [
            (r#"{"quantization_config": {"quant_method": "fp8", "weight_block_size": [128, 128]}}"#, "deepseek:fp8"),
            (
                r#"{"quantization_config": {"quant_method": "fp8", "weight_block_size": [128, 128], "scale_fmt": "ue8m0"}}"#,
                "deepseek:fp8,scale_fmt=ue8m0",
            ),
        ] {
            let dir = checkpoint(
                &[
                    ("l.weight", DType::Float8E4M3FN, vec![300, 260], bytes(5, 300 * 260)),
                    ("l.weight_scale_inv", DType::Float, vec![3, 3], float_scales(9)),
                ],
                Some(config),
                None,
            );
            same_as_general(&dir, scheme);
        }
        let float_quantized =
            r#"{"quantization_config": {"quant_method": "compressed-tensors", "format": "float-quantized"}}"#;
        for (scale_shape, scheme) in
            [(vec![], "fp8:tensor"), (vec![70, 1], "fp8:channel"), (vec![3, 5], "fp8:block=32x64")]
        {
            let count = scale_shape.iter().product::<usize>();
            let dir = checkpoint(
                &[
                    ("l.weight", DType::Float8E4M3FN, vec![70, 300], bytes(6, 70 * 300)),
                    ("l.weight_scale", DType::Float, scale_shape, float_scales(count)),
                ],
                Some(float_quantized),
                None,
            );
            same_as_general(&dir, scheme);
        }
    }
}
