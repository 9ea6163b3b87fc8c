//! **Plans: resolve a conversion once, then run it.** A [`Plan`] fixes, for one (source dtype,
//! target dtype, attributes, profile), how elements are read, converted and written, so running it
//! over a buffer does no per-element dispatch on dtypes, profiles or packing.
//!
//! The rounding core ([`crate::round`], reached through [`crate::convert::convert_code`]) stays the
//! definition; a plan is made of kernels derived from it:
//!
//! * sources of 16 bits or fewer: a table of the core's answer for every source code ([`lut`]);
//! * float32, float64 and 32/64-bit integer sources: branch-free kernels on lanes of float32 or
//!   float64 values ([`encode`]), each naming the lanes it does not handle (NaN where a payload
//!   rule applies, integers beyond 2^31, values outside float32's range on the round-to-odd route);
//!   the plan hands those lanes, which are rare in real data, to the core;
//! * positional rules (onnxruntime's vector blocks, where NaN payloads depend on an element's
//!   position) are a second engine for the leading whole blocks, not a branch per element.
//!
//! Plans are cached: building one costs at most a few milliseconds (a 65,536-entry table from the
//! core), once per process. `tests/plan.rs` compares every plan with the core on every source
//! pattern of 16 bits or fewer, and the float32/float64 kernels on every top-16-bit pattern.

#[cfg(feature = "std")]
mod stream;

#[cfg(feature = "std")]
pub use stream::{StreamError, STREAM_PIECE};

use crate::alloc_prelude::*;
use crate::convert::{self, CastOptions, Conversion};
use crate::dtype::{DType, Kind};
use crate::error::{Error, Result};
use crate::kernels::encode::{
    self, ExponentKernel, FloatLane, IntegerKernel, MinifloatEncoder, SplitTable, TruncatedEncoder,
};
#[cfg(feature = "quant")]
use crate::kernels::WithLaneEncoder;
use crate::kernels::{decode, lut, simd, split_table, truncate, LANE_CHUNK};
use crate::once::Memo;
use crate::packing;
use alloc::sync::Arc;

/// A resolved conversion between two fixed-width numeric dtypes (ONNX `Cast` on raw data).
#[derive(Clone, Debug)]
pub struct Plan {
    from: DType,
    to: DType,
    /// The cast resolved once (outside vector blocks); the engines hold their own copies.
    conversion: Conversion,
    engine: Engine,
    /// The engine for the elements a profile's implementation converts in whole vector blocks,
    /// with the block length: it applies to the longest prefix made of whole blocks.
    blocks: Option<(usize, Engine)>,
}

#[derive(Clone, Debug)]
pub(crate) enum Engine {
    /// The identity: the bytes are copied.
    Copy,
    Table(Arc<lut::Table>),
    /// A source of 16 bits or fewer into FLOAT/DOUBLE by arithmetic, exceptions from the table.
    Widen(decode::Widen),
    /// A 16-bit float into INT64/UINT64 by arithmetic, the out-of-range answers by code range.
    Truncate(truncate::Truncate),
    /// A packed 2- or 4-bit source into a byte-wide target, a whole source byte at a time.
    Bytes(Arc<lut::ByteTable>),
    /// A packed source into a packed target, four elements (whole bytes on both sides) at a time.
    Groups(Arc<lut::GroupTable>, Arc<lut::Table>),
    /// An 8- or 16-bit integer into a wider integer by sign or zero extension.
    IntegerWiden(Arc<lut::IntegerWiden>),
    Lanes(Lanes),
}

/// A wide source (32 or 64 bits) read as lanes of float or integer values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Wide {
    F32,
    F64,
    I32,
    U32,
    I64,
    U64,
}

#[derive(Clone, Debug)]
pub(crate) struct Lanes {
    source: Wide,
    route: Route,
    /// The cast the lanes handed to the core take (inside a vector block, the block's rows).
    core: Conversion,
    /// The profile flushes subnormals in this pair ([`crate::profile::Policy::flush_subnormals`]):
    /// lanes with 0 < |x| < 2^-126 are converted again by the core after the kernel.
    flush: bool,
}

#[derive(Clone, Debug)]
enum Route {
    /// To float32 lanes, then a kernel to a target of 16 bits or fewer.
    Narrow { to_f32: ToF32, kernel: NarrowKernel, nan_to_core: bool },
    /// Rounded to an integer, low bits kept (float lanes with |x| < 2^31; the rest to the core).
    /// With `within`, only lanes in that closed range (the target's, for a profile whose floats
    /// saturate into integers) are the kernel's; the rest go to the core.
    Integer { kernel: IntegerKernel, within: Option<(f64, f64)> },
    /// x != 0 (NaN is true).
    Bool,
    /// float64 lanes rounded to float32 by the hardware (nearest-even); NaN to the core.
    ToF32,
    /// Exact widening to float64 lanes (from float32 or a 32-bit integer) or the nearest float64
    /// (64-bit integers); NaN to the core.
    ToF64,
    /// Integer to integer: the low bits (two's complement), or `!= 0` for bool.
    IntToInt { mask: u64, to_bool: bool },
}

/// How the lanes of a source become float32 lanes for a narrow kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ToF32 {
    /// The source is float32.
    Exact,
    /// Nearest-even, as the profile's implementation does (profile field `via_float32`).
    Nearest,
    /// Round to odd, so the narrow kernel's rounding is the rounding of the exact value.
    Odd,
}

#[derive(Clone, Debug)]
enum NarrowKernel {
    Minifloat(MinifloatEncoder),
    Truncated(TruncatedEncoder),
    Exponent(Arc<ExponentKernel>),
    Split(Arc<SplitTable>),
    /// float32 -> float16 with the CPU's conversion instruction (F16C) on float32 sources, and the
    /// encoder on lanes rounded from a wider source (two roundings would not be one).
    HardwareF16(MinifloatEncoder),
}

impl NarrowKernel {
    /// The code this kernel gives a float32 NaN with these bits (on float32 source lanes).
    fn nan_code(&self, bits: u32) -> u16 {
        let x = f32::from_bits(bits);
        match self {
            NarrowKernel::Minifloat(e) => e.encode(x),
            NarrowKernel::Truncated(e) => e.encode(x),
            NarrowKernel::Exponent(k) => u16::from(k.encode(x)),
            NarrowKernel::Split(t) => u16::from(t.encode(x)),
            // F16C (the instruction): the sign and the top 10 payload bits, quiet bit set.
            NarrowKernel::HardwareF16(_) => (bits >> 16 & 0x8000) as u16 | 0x7E00 | (bits >> 13 & 0x3FF) as u16,
        }
    }
}

#[cfg(feature = "rayon")]
/// A pool of `threads` threads, built on first use and kept for the process: a stream runs the
/// plan on every piece of its input, and starting threads for each piece would cost more than
/// converting it.
fn thread_pool(threads: usize) -> Result<Arc<rayon::ThreadPool>> {
    static POOLS: Memo<usize, Arc<rayon::ThreadPool>> = Memo::new();
    POOLS.get_or_try_build(threads, || {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .map_err(|e| Error::InvalidOp { op: "threads".into(), message: e.to_string() })?;
        Ok(Arc::new(pool))
    })
}

fn fixed_width(dtype: DType) -> Result<()> {
    match dtype.kind() {
        Kind::Float(_) | Kind::Integer { .. } | Kind::Bool => Ok(()),
        _ => Err(Error::UnsupportedDType {
            op: "Cast plan",
            dtype: dtype.onnx_name(),
            why: "not a fixed-width numeric type",
        }),
    }
}

fn hardware_f16() -> bool {
    simd::isa().has_avx2()
}

type SmallKey = (DType, DType, bool, convert::RoundMode, crate::profile::Profile, bool);

/// The engine of a source of 16 bits or fewer, built once per process: its table, and the faster
/// engine derived from the table where there is one.
fn cached_small(key: SmallKey, build: impl FnOnce() -> Result<lut::Table>) -> Result<Engine> {
    static ENGINES: Memo<SmallKey, Engine> = Memo::new();
    ENGINES.get_or_try_build(key, || {
        let (from, to) = (key.0, key.1);
        let table = Arc::new(build()?);
        Ok(if let Some(widen) = decode::Widen::new(from, to, &table) {
            Engine::Widen(widen)
        } else if let Some(truncate) = truncate::Truncate::new(from, to, &table) {
            Engine::Truncate(truncate)
        } else if let Some(bytes) = lut::ByteTable::new(from, to, &table) {
            Engine::Bytes(Arc::new(bytes))
        } else if let Some(widen) = lut::IntegerWiden::new(from, to, &table) {
            Engine::IntegerWiden(Arc::new(widen))
        } else if let Some(groups) = lut::GroupTable::new(from, to, &table) {
            Engine::Groups(Arc::new(groups), table)
        } else {
            Engine::Table(table)
        })
    })
}

/// The narrow kernel of float32 -> `to`, and whether float32 NaN lanes must go to the core (the
/// kernel's NaN codes differ from the core's on some NaN; `in_block` selects the core's rule inside
/// a vector block), built once per process.
fn cached_narrow(c: &Conversion) -> Result<(NarrowKernel, bool)> {
    type Key = (DType, bool, convert::RoundMode, crate::profile::Profile, bool);
    static KERNELS: Memo<Key, (NarrowKernel, bool)> = Memo::new();
    let key = (c.to, c.opts.saturate, c.opts.round_mode, c.opts.profile, c.in_block);
    KERNELS.get_or_try_build(key, || {
        // The kernel converts float32 lanes: the float32 cast's rows decide its codes.
        let lanes = c.with_dtypes(DType::Float, c.to);
        let kernel = narrow_kernel(&lanes)?;
        let mut nan_to_core = false;
        for bits in nan_probes() {
            nan_to_core |= u64::from(kernel.nan_code(bits)) != lanes.code(u64::from(bits))?;
        }
        Ok((kernel, nan_to_core))
    })
}

/// float32 NaNs that tell the NaN rules of the profiles apart: both signs, quiet and signalling,
/// every payload bit alone, all ones, and payloads whose only set bits fall below the top 10 or 7
/// (lost by truncation to float16 or bfloat16). A kernel whose NaN codes equal the core's on all of
/// them keeps its own; tests/plan.rs compares every kernel with the core on every NaN whose payload
/// decides a 16-bit target's code, under every profile.
fn nan_probes() -> impl Iterator<Item = u32> {
    let payloads = (0..23)
        .map(|b| 1u32 << b)
        .chain((0..22).map(|b| 0x40_0000 | 1 << b))
        .chain([0x7F_FFFF, 0x3F_FFFF, 0x1FFF, 0xFFFF, 0x40_1FFF, 0x2A_AAAA, 0x55_5555, 0x12_3457]);
    payloads.flat_map(|p| [0x7F80_0000 | p, 0xFF80_0000 | p])
}

/// The kernel from float32 lanes to a float target of 16 bits or fewer. Its special codes (±Inf and
/// overflow, ±NaN, -0) are the core's; for targets of 8 bits or fewer the split table holds every
/// answer of the core, and the branch-free encoder replaces it only where it agrees with every entry.
fn narrow_kernel(lanes: &Conversion) -> Result<NarrowKernel> {
    let to = lanes.to;
    let core = |x: f32| lanes.code(u64::from(x.to_bits()));
    let f = to.float_format().expect("narrow kernels are for float targets");
    let (overflow, nan) = (
        [core(f32::INFINITY)? as u16, core(f32::NEG_INFINITY)? as u16],
        [core(f32::NAN)? as u16, core(-f32::NAN)? as u16],
    );
    let negative_zero = core(-0.0)? as u16;
    let encoder = MinifloatEncoder::new(f, overflow, nan, negative_zero);
    if let Some(truncated) = TruncatedEncoder::new(f, overflow, nan, negative_zero) {
        // NaN codes from the NaN's own bits where the core keeps them on every probe (no NaN lane
        // then goes to the core).
        let own = truncated.with_nan_from_bits();
        let keeps_bits = nan_probes()
            .all(|bits| core(f32::from_bits(bits)).is_ok_and(|c| c == u64::from(own.encode(f32::from_bits(bits)))));
        return Ok(NarrowKernel::Truncated(if keeps_bits { own } else { truncated }));
    }
    if f.width() > 8 {
        if to == DType::Float16 && hardware_f16() {
            return Ok(NarrowKernel::HardwareF16(encoder.expect("float16 has an encoder")));
        }
        return Ok(NarrowKernel::Minifloat(encoder.expect("float16 and bfloat16 have an encoder")));
    }
    let table = split_table(&lanes.opts, to)?;
    if let Some(encoder) = encoder.filter(|e| table.agrees_with(e)) {
        return Ok(NarrowKernel::Minifloat(encoder));
    }
    Ok(match ExponentKernel::new(f, SplitTable::clone(&table)) {
        Some(kernel) => NarrowKernel::Exponent(Arc::new(kernel)),
        None => NarrowKernel::Split(table),
    })
}

impl simd::SpanKernel for Plan {
    type Part = Engine;
    type Scratch = Option<Box<Scratch>>;
    #[inline(always)]
    fn run(&self, engine: &Engine, src: &[u8], dst: &mut [u8], n: usize, scratch: &mut Option<Box<Scratch>>) {
        self.run_engine_inline(engine, src, dst, n, scratch);
    }
}

impl Plan {
    /// Resolves ONNX `Cast` from `from` to `to` with these attributes and profile. Errors for dtypes
    /// without a fixed width (STRING, complex, UNDEFINED).
    ///
    /// ```
    /// use lowbit::{CastOptions, DType, Plan};
    ///
    /// let plan = Plan::new(DType::Float, DType::Float4E2M1, &CastOptions::default())?;
    /// let src: Vec<u8> = [1.0f32, -3.0, 5.0].iter().flat_map(|v| v.to_le_bytes()).collect();
    /// // Three FLOAT4E2M1 elements take two bytes, the first element in the low nibble.
    /// let mut dst = [0u8; 2];
    /// plan.run(&src, &mut dst, 3)?;
    /// // E2M1 (bias 1): 1.0 = 0 01 0 = 0x2; -3.0 = 1.5 * 2^1 = 1 10 1 = 0xD; 5.0 lies halfway
    /// // between 4 = 0 11 0 (even) and 6 = 0 11 1: ties to even, 0x6.
    /// assert_eq!(dst, [0xD2, 0x06]);
    /// assert!(Plan::new(DType::String, DType::Float, &CastOptions::default()).is_err());
    /// # Ok::<(), lowbit::Error>(())
    /// ```
    pub fn new(from: DType, to: DType, opts: &CastOptions) -> Result<Plan> {
        fixed_width(from)?;
        fixed_width(to)?;
        let conversion = Conversion::new(from, to, opts);
        let block = conversion.policy.vector_block(from, to).map(|b| b.length);
        let engine = Self::engine(&conversion)?;
        let blocks = match block {
            Some(b) => Some((b, Self::engine(&conversion.in_block())?)),
            None => None,
        };
        Ok(Plan { from, to, conversion, engine, blocks })
    }

    fn engine(c: &Conversion) -> Result<Engine> {
        let (from, to) = (c.from, c.to);
        if from == to && !c.identity_converts {
            return Ok(Engine::Copy);
        }
        let bits = from.bits().expect("fixed width");
        if bits <= 16 {
            let key = (from, to, c.opts.saturate, c.opts.round_mode, c.opts.profile, c.in_block);
            return cached_small(key, || lut::Table::build(from, to, |code| c.code(code)));
        }
        let source = match from {
            DType::Float => Wide::F32,
            DType::Double => Wide::F64,
            DType::Int32 => Wide::I32,
            DType::Uint32 => Wide::U32,
            DType::Int64 => Wide::I64,
            DType::Uint64 => Wide::U64,
            other => unreachable!("{other} is a fixed-width dtype wider than 16 bits"),
        };
        let float_source = matches!(source, Wide::F32 | Wide::F64);
        let policy = c.policy;
        let route = match to.kind() {
            Kind::Bool if float_source => Route::Bool,
            Kind::Bool => Route::IntToInt { mask: 1, to_bool: true },
            Kind::Integer { bits, signed } if float_source => {
                let within =
                    (policy.float_to_integer == crate::profile::FloatToInteger::SaturateInSourceType).then(|| {
                        if signed {
                            (-crate::fmath::pow2_f64(bits as i32 - 1), crate::fmath::pow2_f64(bits as i32 - 1) - 1.0)
                        } else {
                            (0.0, crate::fmath::pow2_f64(bits as i32) - 1.0)
                        }
                    });
                let kernel = IntegerKernel { mode: convert::integer_rounding(policy, bits), mask: to.code_mask() };
                Route::Integer { kernel, within }
            }
            Kind::Integer { .. } => Route::IntToInt { mask: to.code_mask(), to_bool: false },
            Kind::Float(f) if f.width() == 32 => Route::ToF32,
            Kind::Float(f) if f.width() == 64 => Route::ToF64,
            Kind::Float(_) => {
                let to_f32 = if source == Wide::F32 {
                    ToF32::Exact
                } else if policy.via_float32.applies_to(to) {
                    ToF32::Nearest
                } else {
                    ToF32::Odd
                };
                let (kernel, nan_to_core) = cached_narrow(c)?;
                Route::Narrow { to_f32, kernel, nan_to_core }
            }
            _ => unreachable!("fixed_width checked the target"),
        };
        let flush = policy.flush_subnormals.contains(&(from, to));
        Ok(Engine::Lanes(Lanes { source, route, core: *c, flush }))
    }

    /// For a float32 -> float (16 bits or fewer) plan: runs `user` with the plan's lane kernel (or
    /// its finite-lane form, [`encode::FiniteEncoder`], where it has one), which gives the plan's code for
    /// every finite lane (a plan may hand NaN lanes to the core, which
    /// the kernel does not). `None` for any other plan, and for plans whose lanes follow a
    /// profile's vector-block rule (the code then depends on the lane's position).
    #[inline(always)]
    #[cfg(feature = "quant")]
    pub(crate) fn with_finite_lane_encoder<U: WithLaneEncoder>(&self, user: U) -> Option<U::Output> {
        if self.blocks.is_some() {
            return None;
        }
        let Engine::Lanes(Lanes { route: Route::Narrow { to_f32: ToF32::Exact, kernel, .. }, .. }) = &self.engine
        else {
            return None;
        };
        Some(match kernel {
            NarrowKernel::Minifloat(e) | NarrowKernel::HardwareF16(e) => match e.finite() {
                Some(finite) => user.run(&finite),
                None => user.run(e),
            },
            NarrowKernel::Truncated(e) => user.run(e),
            NarrowKernel::Exponent(k) => user.run(k.as_ref()),
            NarrowKernel::Split(t) => user.run(t.as_ref()),
        })
    }

    /// For a plan from a float of 8 bits or fewer (one byte per code) to FLOAT that decodes by
    /// arithmetic: the value of a code, exactly as the plan gives it, as a function to call in the
    /// caller's own loop (MX dequantizing multiplies each value by its block's scale).
    #[cfg(feature = "quant")]
    pub(crate) fn byte_code_value(&self) -> Option<decode::FloatCodeValue> {
        match &self.engine {
            Engine::Widen(widen) if self.from.packing() == crate::dtype::Packing::Bytes(1) && self.blocks.is_none() => {
                widen.float_code_value()
            }
            _ => None,
        }
    }

    /// The source dtype.
    #[must_use]
    pub fn from(&self) -> DType {
        self.from
    }

    /// The target dtype.
    #[must_use]
    pub fn to(&self) -> DType {
        self.to
    }

    /// Converts `n` elements from `src` (ONNX `raw_data` of the source dtype) into `dst` (the
    /// target's `raw_data`). Both lengths must be exactly what `n` elements take.
    ///
    /// ```
    /// use lowbit::{CastOptions, DType, Plan};
    ///
    /// // saturate=0: float32 1e6 overflows E4M3FN, whose only special code is NaN 0x7F.
    /// let opts = CastOptions { saturate: false, ..CastOptions::default() };
    /// let plan = Plan::new(DType::Float, DType::Float8E4M3FN, &opts)?;
    /// let src: Vec<u8> = [0.5f32, 1e6].iter().flat_map(|v| v.to_le_bytes()).collect();
    /// let mut dst = [0u8; 2];
    /// plan.run(&src, &mut dst, 2)?;
    /// // 0.5 = 2^-1: exponent -1 + 7 = 0110, mantissa 000 -> 0x30.
    /// assert_eq!(dst, [0x30, 0x7F]);
    /// // A buffer of the wrong length is an error, not a panic.
    /// assert!(plan.run(&src, &mut dst[..1], 2).is_err());
    /// # Ok::<(), lowbit::Error>(())
    /// ```
    pub fn run(&self, src: &[u8], dst: &mut [u8], n: usize) -> Result<()> {
        self.check_lengths(src, dst, n)?;
        for (start, end, engine) in self.segments(n) {
            self.run_span(engine, start, end, src, dst);
        }
        Ok(())
    }

    /// [`Plan::run`] on up to `threads` threads (rayon), each on a contiguous part of the
    /// elements. The result is the same bytes as [`Plan::run`] gives. Without the `rayon` feature
    /// this is [`Plan::run`] on the calling thread.
    #[cfg(not(feature = "rayon"))]
    pub fn run_parallel(&self, src: &[u8], dst: &mut [u8], n: usize, threads: usize) -> Result<()> {
        let _ = threads;
        self.run(src, dst, n)
    }

    /// [`Plan::run`] on up to `threads` threads (rayon), each on a contiguous part of the
    /// elements. The result is the same bytes as [`Plan::run`] gives.
    #[cfg(feature = "rayon")]
    pub fn run_parallel(&self, src: &[u8], dst: &mut [u8], n: usize, threads: usize) -> Result<()> {
        self.check_lengths(src, dst, n)?;
        // No more threads than pieces of 4 chunks: a thread count from the command line cannot
        // make the pool larger than the work.
        let threads = threads.clamp(1, n.div_ceil(4 * LANE_CHUNK).max(1));
        if threads == 1 || n < 4 * LANE_CHUNK {
            return self.run(src, dst, n);
        }
        // Pieces start on a multiple of 4 elements, a byte boundary for every packing.
        let piece = n.div_ceil(threads).next_multiple_of(4 * LANE_CHUNK);
        let mut spans = Vec::new();
        for (start, end, engine) in self.segments(n) {
            let mut s = start;
            while s < end {
                let e = end.min(s + piece - s % piece).min(end);
                spans.push((s, e, engine));
                s = e;
            }
        }
        // Split the destination into the spans' disjoint byte ranges.
        let mut parts = Vec::with_capacity(spans.len());
        let mut rest = dst;
        let mut offset = 0;
        for &(s, e, engine) in &spans {
            let (b0, b1) = (raw_len(self.to, s), raw_len(self.to, e));
            let (_, tail) = rest.split_at_mut(b0 - offset);
            let (part, tail) = tail.split_at_mut(b1 - b0);
            parts.push((s, e, engine, part));
            rest = tail;
            offset = b1;
        }
        thread_pool(threads)?.install(|| {
            use rayon::prelude::*;
            parts.into_par_iter().for_each(|(s, e, engine, part)| {
                let src_part = &src[raw_len(self.from, s)..raw_len(self.from, e)];
                self.run_engine(engine, src_part, part, e - s, &mut None);
            });
        });
        Ok(())
    }

    fn check_lengths(&self, src: &[u8], dst: &[u8], n: usize) -> Result<()> {
        for (dtype, bytes) in [(self.from, src.len()), (self.to, dst.len())] {
            let expected = packing::raw_len(dtype, n)?;
            if bytes != expected {
                return Err(Error::RawLength { dtype: dtype.onnx_name(), elements: n, expected, actual: bytes });
            }
        }
        Ok(())
    }

    /// The element ranges and the engine for each: the vector-block prefix, then the rest.
    fn segments(&self, n: usize) -> impl Iterator<Item = (usize, usize, &Engine)> {
        let prefix = self.blocks.as_ref().map_or(0, |(b, _)| n - n % b);
        let block = self.blocks.as_ref().map(|(_, engine)| (0, prefix, engine));
        block.into_iter().chain([(prefix, n, &self.engine)]).filter(|&(s, e, _)| s < e)
    }

    /// Runs the plan over `n` elements that the caller hands over piece by piece: `read(start,
    /// len, bytes)` fills `bytes` with the source's raw data of elements `start..start + len`, and
    /// `write(start, len, bytes)` takes the target's raw data of the same elements. Pieces start on
    /// a multiple of 4 elements (a byte boundary for every packing), so typed slices and streams
    /// convert without holding the whole input; positional rules still see global positions.
    // Always inlined, so that callers running under `simd::widest` compile their `read` and `write`
    // with its instruction set.
    #[inline(always)]
    pub fn run_pieces(
        &self,
        n: usize,
        mut read: impl FnMut(usize, usize, &mut [u8]) -> Result<()>,
        mut write: impl FnMut(usize, usize, &[u8]) -> Result<()>,
    ) -> Result<()> {
        let mut src = vec![0u8; raw_len(self.from, LANE_CHUNK)];
        let mut dst = vec![0u8; raw_len(self.to, LANE_CHUNK)];
        let mut scratch = None;
        for (s, e, engine) in self.pieces(n) {
            let (src_len, dst_len) =
                (raw_len(self.from, e) - raw_len(self.from, s), raw_len(self.to, e) - raw_len(self.to, s));
            read(s, e - s, &mut src[..src_len])?;
            self.run_engine(engine, &src[..src_len], &mut dst[..dst_len], e - s, &mut scratch);
            write(s, e - s, &dst[..dst_len])?;
        }
        Ok(())
    }

    /// [`Plan::run_pieces`] with the whole source in memory as raw bytes (`src` holds `n`
    /// elements): each piece is converted straight from it, with no copy into a piece buffer.
    #[inline(always)]
    pub(crate) fn run_pieces_from(
        &self,
        src: &[u8],
        n: usize,
        mut write: impl FnMut(usize, usize, &[u8]) -> Result<()>,
    ) -> Result<()> {
        let expected = raw_len(self.from, n);
        if src.len() != expected {
            return Err(Error::RawLength { dtype: self.from.onnx_name(), elements: n, expected, actual: src.len() });
        }
        let mut dst = vec![0u8; raw_len(self.to, LANE_CHUNK)];
        let mut scratch = None;
        for (s, e, engine) in self.pieces(n) {
            let source = &src[raw_len(self.from, s)..raw_len(self.from, e)];
            let dst_len = raw_len(self.to, e) - raw_len(self.to, s);
            self.run_engine(engine, source, &mut dst[..dst_len], e - s, &mut scratch);
            write(s, e - s, &dst[..dst_len])?;
        }
        Ok(())
    }

    /// The pieces of `n` elements: whole chunks from a multiple of [`LANE_CHUNK`] (so each starts on a
    /// group boundary) within each segment, with the segment's engine.
    fn pieces(&self, n: usize) -> impl Iterator<Item = (usize, usize, &Engine)> {
        self.segments(n).flat_map(|(start, end, engine)| {
            let piece_end = move |s: usize| end.min(s - s % LANE_CHUNK + LANE_CHUNK);
            core::iter::successors(Some(start), move |&s| Some(piece_end(s)).filter(|&e| e < end))
                .map(move |s| (s, piece_end(s), engine))
        })
    }

    fn run_span(&self, engine: &Engine, start: usize, end: usize, src: &[u8], dst: &mut [u8]) {
        let src_part = &src[raw_len(self.from, start)..raw_len(self.from, end)];
        let dst_part = &mut dst[raw_len(self.to, start)..raw_len(self.to, end)];
        self.run_engine(engine, src_part, dst_part, end - start, &mut None);
    }

    /// Runs one engine compiled for the widest instruction set the CPU has.
    fn run_engine(&self, engine: &Engine, src: &[u8], dst: &mut [u8], n: usize, scratch: &mut Option<Box<Scratch>>) {
        simd::widest_span(self, engine, src, dst, n, scratch);
    }

    /// Runs one engine. Always inlined, so the SIMD module's copies compile it (and the kernels it
    /// inlines) with their instruction sets.
    #[inline(always)]
    fn run_engine_inline(
        &self,
        engine: &Engine,
        src: &[u8],
        dst: &mut [u8],
        n: usize,
        scratch: &mut Option<Box<Scratch>>,
    ) {
        match engine {
            Engine::Copy => dst.copy_from_slice(src),
            Engine::Table(table) => table.run(self.from, self.to, src, dst, n),
            Engine::Widen(widen) => widen.run(src, dst, n),
            Engine::Truncate(truncate) => truncate.run(src, dst, n),
            Engine::Bytes(bytes) => bytes.run(src, dst, n),
            Engine::Groups(groups, table) => groups.run(table, self.from, self.to, src, dst, n),
            Engine::IntegerWiden(widen) => widen.run(src, dst),
            Engine::Lanes(lanes) => self.run_lanes(lanes, src, dst, n, scratch.get_or_insert_with(Scratch::new)),
        }
    }

    /// The lane engine over `n` elements, chunk by chunk.
    #[inline(always)]
    fn run_lanes(&self, lanes: &Lanes, src: &[u8], dst: &mut [u8], n: usize, scratch: &mut Scratch) {
        // float32 -> float16 with F16C where no NaN lane goes to the core: the instruction over the
        // whole span, with nothing to hand over and so no chunks. (The kernel is chosen only where
        // the CPU has F16C.)
        #[cfg(target_arch = "x86_64")]
        if let (
            Route::Narrow { to_f32: ToF32::Exact, kernel: NarrowKernel::HardwareF16(_), nan_to_core: false },
            false,
        ) = (&lanes.route, lanes.flush)
        {
            simd::x86::f32_to_f16_unmarked(src, dst);
            return;
        }
        let width = self.from.bits().expect("fixed width") as usize / 8;
        let mut start = 0;
        while start < n {
            let len = LANE_CHUNK.min(n - start);
            let s = &src[start * width..(start + len) * width];
            let d = &mut dst[raw_len(self.to, start)..raw_len(self.to, start + len)];
            self.run_chunk(lanes, s, d, len, scratch);
            if lanes.flush {
                self.flush_tiny_lanes(lanes, s, d);
            }
            start += len;
        }
    }

    /// Converts the lanes of a chunk whose |x| is below float32's smallest normal (zero aside)
    /// again with the core, for a profile that flushes subnormals in this pair (only XLA's). Such
    /// lanes are rare: each group of 64 lanes is tested as a whole first.
    #[inline(always)]
    fn flush_tiny_lanes(&self, lanes: &Lanes, src: &[u8], dst: &mut [u8]) {
        let width = self.from.bits().expect("fixed width") as usize / 8;
        let value = |b: &[u8]| match lanes.source {
            Wide::F32 => f64::from(f32::from_le_bytes(b.try_into().expect("4 bytes"))),
            _ => f64::from_le_bytes(b.try_into().expect("8 bytes")),
        };
        let tiny = |x: f64| x != 0.0 && x.abs() < f64::from(f32::MIN_POSITIVE);
        if !matches!(lanes.source, Wide::F32 | Wide::F64) {
            return;
        }
        for (g, group) in src.chunks(64 * width).enumerate() {
            if !group.chunks_exact(width).fold(false, |any, b| any | tiny(value(b))) {
                continue;
            }
            for (j, b) in group.chunks_exact(width).enumerate().filter(|&(_, b)| tiny(value(b))) {
                let mut buf = [0u8; 8];
                buf[..width].copy_from_slice(b);
                let code = self.conversion.code(u64::from_le_bytes(buf)).expect("the plan checked both dtypes");
                packing::set(self.to, dst, g * 64 + j, code);
            }
        }
    }

    /// One chunk of a lane engine: read lanes, run the kernel, hand the lanes it declines to the
    /// core, write the codes.
    #[inline(always)]
    fn run_chunk(&self, lanes: &Lanes, src: &[u8], dst: &mut [u8], len: usize, scratch: &mut Scratch) {
        let Scratch { f32s, f64s, ints, codes16, codes64, declined, flags } = scratch;
        let (f32s, f64s, ints) = (&mut f32s[..len], &mut f64s[..len], &mut ints[..len]);
        let (codes16, codes64) = (&mut codes16[..len], &mut codes64[..len]);
        declined.fill(0);
        let narrow_target = self.to.bits().is_some_and(|b| b <= 16);
        match &lanes.route {
            Route::Narrow { to_f32, kernel, nan_to_core } => {
                if *to_f32 == ToF32::Exact {
                    // Straight from the source bytes: no staging copy.
                    let value = |b: &[u8]| f32::from_le_bytes(b.try_into().expect("4 bytes"));
                    // The F16C kernel marks NaN lanes in its own pass over the source.
                    let hardware = matches!(kernel, NarrowKernel::HardwareF16(_));
                    if *nan_to_core && !hardware {
                        mark_f32(declined, src, f32::is_nan);
                    }
                    // 16-bit targets are written straight into the destination too.
                    if self.to.packing() == crate::dtype::Packing::Bytes(2) {
                        // Plain `for` loops: they inline into the SIMD copy, where an iterator's
                        // `for_each` (a `fold` of its own) may stay a call compiled without it.
                        match kernel {
                            NarrowKernel::HardwareF16(e) => {
                                let mut nan_lanes = [0u64; LANE_CHUNK / 64];
                                simd::f32_to_f16(src, dst, e, &mut nan_lanes);
                                if *nan_to_core {
                                    *declined = nan_lanes;
                                }
                            }
                            NarrowKernel::Minifloat(e) => {
                                for (d, b) in dst.chunks_exact_mut(2).zip(src.chunks_exact(4)) {
                                    d.copy_from_slice(&e.encode(value(b)).to_le_bytes());
                                }
                            }
                            NarrowKernel::Truncated(e) => {
                                for (d, b) in dst.chunks_exact_mut(2).zip(src.chunks_exact(4)) {
                                    d.copy_from_slice(&e.encode(value(b)).to_le_bytes());
                                }
                            }
                            NarrowKernel::Split(_) | NarrowKernel::Exponent(_) => {
                                unreachable!("split tables are for targets of 8 bits or fewer")
                            }
                        }
                        self.decline(lanes, src, declined, |i, code| {
                            dst[2 * i..2 * i + 2].copy_from_slice(&(code as u16).to_le_bytes());
                        });
                        return;
                    }
                    // Byte targets from the encoder: the codes straight into the destination (no
                    // 16-bit staging and no packing pass).
                    if let (NarrowKernel::Minifloat(e), crate::dtype::Packing::Bytes(1)) = (kernel, self.to.packing()) {
                        match e.lean() {
                            Some(e) if e.zero_keeps_sign() => {
                                let done = simd::lean_encode_bytes(&e, src, dst);
                                for (d, b) in dst[done..].iter_mut().zip(src[4 * done..].chunks_exact(4)) {
                                    *d = e.encode::<true>(value(b)) as u8;
                                }
                            }
                            Some(e) => {
                                let done = simd::lean_encode_bytes(&e, src, dst);
                                for (d, b) in dst[done..].iter_mut().zip(src[4 * done..].chunks_exact(4)) {
                                    *d = e.encode::<false>(value(b)) as u8;
                                }
                            }
                            None => {
                                for (d, b) in dst.iter_mut().zip(src.chunks_exact(4)) {
                                    *d = e.encode(value(b)) as u8;
                                }
                            }
                        }
                        self.decline(lanes, src, declined, |i, code| dst[i] = code as u8);
                        return;
                    }
                    match kernel {
                        NarrowKernel::Minifloat(e) => {
                            for (c, b) in codes16.iter_mut().zip(src.chunks_exact(4)) {
                                *c = e.encode(value(b));
                            }
                        }
                        NarrowKernel::Truncated(e) => {
                            for (c, b) in codes16.iter_mut().zip(src.chunks_exact(4)) {
                                *c = e.encode(value(b));
                            }
                        }
                        NarrowKernel::Split(t) => {
                            for (c, b) in codes16.iter_mut().zip(src.chunks_exact(4)) {
                                *c = u16::from(t.encode(value(b)));
                            }
                        }
                        NarrowKernel::Exponent(k) => {
                            // Arithmetic on every lane, then the table on the special ones.
                            for ((c, f), b) in codes16.iter_mut().zip(flags.iter_mut()).zip(src.chunks_exact(4)) {
                                let x = value(b);
                                *c = u16::from(k.arithmetic(x));
                                *f = u8::from(k.is_special(x));
                            }
                            decode::for_each_flagged(&flags[..codes16.len()], |i| {
                                codes16[i] = u16::from(k.table().encode(value(&src[4 * i..4 * i + 4])));
                            });
                        }
                        NarrowKernel::HardwareF16(_) => unreachable!("float16 is a 16-bit target"),
                    }
                    self.decline(lanes, src, declined, |i, code| codes16[i] = code as u16);
                    packing::pack_u16(self.to, codes16, dst);
                    return;
                }
                match to_f32 {
                    ToF32::Exact => unreachable!("handled above"),
                    ToF32::Nearest => {
                        read_f64(lanes.source, src, f64s, false);
                        for (o, &x) in f32s.iter_mut().zip(f64s.iter()) {
                            *o = x as f32;
                        }
                        mark(declined, f64s, |x| x.is_nan());
                    }
                    ToF32::Odd => {
                        read_f64(lanes.source, src, f64s, false);
                        for (o, &x) in f32s.iter_mut().zip(f64s.iter()) {
                            *o = encode::f64_to_f32_odd(x);
                        }
                        mark(declined, f64s, |x| !encode::f32_odd_accepts(x));
                    }
                }
                match kernel {
                    NarrowKernel::Minifloat(e) => {
                        for (c, &x) in codes16.iter_mut().zip(f32s.iter()) {
                            *c = e.encode(x);
                        }
                    }
                    NarrowKernel::Truncated(e) => {
                        for (c, &x) in codes16.iter_mut().zip(f32s.iter()) {
                            *c = e.encode(x);
                        }
                    }
                    NarrowKernel::Split(t) => {
                        for (c, &x) in codes16.iter_mut().zip(f32s.iter()) {
                            *c = u16::from(t.encode(x));
                        }
                    }
                    NarrowKernel::Exponent(k) => {
                        for (c, &x) in codes16.iter_mut().zip(f32s.iter()) {
                            *c = u16::from(k.encode(x));
                        }
                    }
                    NarrowKernel::HardwareF16(e) => {
                        for (c, &x) in codes16.iter_mut().zip(f32s.iter()) {
                            *c = e.encode(x);
                        }
                    }
                }
                if *nan_to_core {
                    mark(declined, f32s, |x| x.is_nan());
                }
                self.decline(lanes, src, declined, |i, code| codes16[i] = code as u16);
                packing::pack_u16(self.to, codes16, dst);
                return;
            }
            Route::Integer { kernel, within } => {
                // Targets of 16 bits or fewer from float32, nearest-even: one pass of the CPU's
                // rounding conversion writes the codes and marks the lanes for the core.
                #[cfg(target_arch = "x86_64")]
                if lanes.source == Wide::F32
                    && narrow_target
                    && within.is_none()
                    && kernel.mode == crate::round::RoundingMode::NearestEven
                    && simd::isa().has_avx2()
                {
                    let done = simd::x86::f32_round_even_low_bits(src, kernel.mask as u16, codes16, declined);
                    let rest = &src[4 * done..];
                    kernel.round_f32(rest, &mut ints[done..]);
                    for (c, &i) in codes16[done..].iter_mut().zip(&ints[done..]) {
                        *c = i as u16 & kernel.mask as u16;
                    }
                    for (i, b) in rest.chunks_exact(4).enumerate() {
                        let lane = done + i;
                        let fits = f32::from_le_bytes(b.try_into().expect("4 bytes")).fits_i32();
                        declined[lane / 64] |= u64::from(!fits) << (lane % 64);
                    }
                    self.decline(lanes, src, declined, |i, code| codes16[i] = code as u16);
                    packing::pack_u16(self.to, codes16, dst);
                    return;
                }
                match (lanes.source, *within) {
                    (Wide::F32, None) => {
                        kernel.round_f32(src, ints);
                        mark_f32(declined, src, |x| !x.fits_i32());
                    }
                    (Wide::F32, Some((lo, hi))) => {
                        kernel.round_f32(src, ints);
                        mark_f32(declined, src, |x| !(x.fits_i32() && lo <= f64::from(x) && f64::from(x) <= hi));
                    }
                    (_, None) => {
                        read_f64(lanes.source, src, f64s, false);
                        kernel.round(f64s, ints);
                        mark(declined, f64s, |x| !x.fits_i32());
                    }
                    (_, Some((lo, hi))) => {
                        read_f64(lanes.source, src, f64s, false);
                        kernel.round(f64s, ints);
                        mark(declined, f64s, |x| !(x.fits_i32() && lo <= x && x <= hi));
                    }
                }
                if narrow_target {
                    for (c, &i) in codes16.iter_mut().zip(ints.iter()) {
                        *c = i as u16 & kernel.mask as u16;
                    }
                    self.decline(lanes, src, declined, |i, code| codes16[i] = code as u16);
                } else {
                    for (c, &i) in codes64.iter_mut().zip(ints.iter()) {
                        *c = i64::from(i) as u64 & kernel.mask;
                    }
                    self.decline(lanes, src, declined, |i, code| codes64[i] = code);
                }
            }
            Route::Bool => {
                read_f64(lanes.source, src, f64s, false);
                for (c, &x) in codes16.iter_mut().zip(f64s.iter()) {
                    *c = u16::from(x != 0.0);
                }
            }
            Route::ToF32 => {
                read_f64(lanes.source, src, f64s, false);
                for (c, &x) in codes64.iter_mut().zip(f64s.iter()) {
                    *c = u64::from((x as f32).to_bits());
                }
                mark(declined, f64s, |x| x.is_nan());
                self.decline(lanes, src, declined, |i, code| codes64[i] = code);
            }
            Route::ToF64 => {
                read_f64(lanes.source, src, f64s, true);
                for (c, &x) in codes64.iter_mut().zip(f64s.iter()) {
                    *c = x.to_bits();
                }
                mark(declined, f64s, |x| x.is_nan());
                self.decline(lanes, src, declined, |i, code| codes64[i] = code);
            }
            Route::IntToInt { mask, to_bool } => {
                let width = src.len() / len;
                for (c, b) in codes64.iter_mut().zip(src.chunks_exact(width)) {
                    let value = read_int(lanes.source, b);
                    *c = if *to_bool { u64::from(value != 0) } else { value as u64 & mask };
                }
                if narrow_target {
                    for (c16, &c) in codes16.iter_mut().zip(codes64.iter()) {
                        *c16 = c as u16;
                    }
                }
            }
        }
        if narrow_target {
            packing::pack_u16(self.to, codes16, dst);
        } else {
            packing::pack_u64(self.to, codes64, dst);
        }
    }

    /// Hands the lanes marked in `declined` to the core (with the source element's own code, so
    /// every rule of the profile applies) and stores the core's codes with `store`.
    fn decline(&self, lanes: &Lanes, src: &[u8], declined: &[u64; LANE_CHUNK / 64], mut store: impl FnMut(usize, u64)) {
        let width = self.from.bits().expect("fixed width") as usize / 8;
        for (w, &word) in declined.iter().enumerate() {
            let mut word = word;
            while word != 0 {
                let i = w * 64 + word.trailing_zeros() as usize;
                word &= word - 1;
                let mut buf = [0u8; 8];
                buf[..width].copy_from_slice(&src[i * width..(i + 1) * width]);
                let code = u64::from_le_bytes(buf);
                store(i, lanes.core.code(code).expect("the plan checked both dtypes"));
            }
        }
    }
}

/// Marks the lanes where `pred` holds in the bitset, 64 lanes a word. Lanes to mark are rare, so
/// each group of 64 is first tested as a whole (a vectorised fold) and only a group with a marked
/// lane is visited lane by lane.
#[inline(always)]
fn mark<T: Copy>(declined: &mut [u64; LANE_CHUNK / 64], lanes: &[T], pred: impl Fn(T) -> bool + Copy) {
    for (word, group) in declined.iter_mut().zip(lanes.chunks(64)) {
        if group.iter().fold(false, |any, &x| any | pred(x)) {
            *word |= group.iter().enumerate().fold(0u64, |m, (j, &x)| m | u64::from(pred(x)) << j);
        }
    }
}

/// [`mark`] on float32 lanes read straight from little-endian source bytes.
#[inline(always)]
fn mark_f32(declined: &mut [u64; LANE_CHUNK / 64], src: &[u8], pred: impl Fn(f32) -> bool + Copy) {
    let lane = |b: &[u8]| f32::from_le_bytes(b.try_into().expect("4 bytes"));
    for (word, group) in declined.iter_mut().zip(src.chunks(64 * 4)) {
        if group.chunks_exact(4).fold(false, |any, b| any | pred(lane(b))) {
            *word |= group.chunks_exact(4).enumerate().fold(0u64, |m, (j, b)| m | u64::from(pred(lane(b))) << j);
        }
    }
}

/// The lane engines' buffers for one chunk, allocated once per run (not per chunk).
pub(crate) struct Scratch {
    f32s: [f32; LANE_CHUNK],
    f64s: [f64; LANE_CHUNK],
    ints: [i32; LANE_CHUNK],
    codes16: [u16; LANE_CHUNK],
    codes64: [u64; LANE_CHUNK],
    /// One bit per lane: handed to the core.
    declined: [u64; LANE_CHUNK / 64],
    /// One byte per lane: answered by a table (exponent kernels' special lanes).
    flags: [u8; LANE_CHUNK],
}

impl Scratch {
    fn new() -> Box<Scratch> {
        Box::new(Scratch {
            f32s: [0.0; LANE_CHUNK],
            f64s: [0.0; LANE_CHUNK],
            ints: [0; LANE_CHUNK],
            codes16: [0; LANE_CHUNK],
            codes64: [0; LANE_CHUNK],
            declined: [0; LANE_CHUNK / 64],
            flags: [0; LANE_CHUNK],
        })
    }
}

fn raw_len(dtype: DType, n: usize) -> usize {
    packing::raw_len(dtype, n).expect("the plan checked the lengths")
}

/// Reads float lanes as float64: float32 and 32-bit integers exactly; 64-bit integers rounded to
/// nearest (`nearest`, for a float64 target) or to odd (for a narrower target, which rounds again).
fn read_f64(source: Wide, src: &[u8], out: &mut [f64], nearest: bool) {
    match source {
        Wide::F32 => {
            for (o, b) in out.iter_mut().zip(src.chunks_exact(4)) {
                *o = f64::from(f32::from_le_bytes(b.try_into().expect("4 bytes")));
            }
        }
        Wide::F64 => {
            for (o, b) in out.iter_mut().zip(src.chunks_exact(8)) {
                *o = f64::from_le_bytes(b.try_into().expect("8 bytes"));
            }
        }
        Wide::I32 | Wide::U32 => {
            for (o, b) in out.iter_mut().zip(src.chunks_exact(4)) {
                *o = read_int(source, b) as f64;
            }
        }
        Wide::I64 | Wide::U64 => {
            for (o, b) in out.iter_mut().zip(src.chunks_exact(8)) {
                let v = read_int(source, b);
                let magnitude = v.unsigned_abs() as u64;
                let rounded = if nearest { magnitude as f64 } else { encode::u64_to_f64_odd(magnitude) };
                *o = if v < 0 { -rounded } else { rounded };
            }
        }
    }
}

/// One integer element (sign- or zero-extended).
#[inline]
fn read_int(source: Wide, b: &[u8]) -> i128 {
    match source {
        Wide::I32 => i128::from(i32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        Wide::U32 => i128::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        Wide::I64 => i128::from(i64::from_le_bytes(b.try_into().expect("8 bytes"))),
        Wide::U64 => i128::from(u64::from_le_bytes(b.try_into().expect("8 bytes"))),
        Wide::F32 | Wide::F64 => unreachable!("not an integer source"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::Profile;

    /// float32 values with every kind of lane: normals, subnormals, overflow, infinities, NaN.
    fn source(n: usize) -> Vec<u8> {
        let special = [1.0e-40f32, -7.0e-39, 1.0e30, -1.0e30, f32::INFINITY, f32::NEG_INFINITY, f32::NAN, -0.0];
        (0..n)
            .map(|i| if i % 97 == 3 { special[i / 97 % special.len()] } else { (i as f32 * 0.37).sin() * 500.0 })
            .flat_map(f32::to_le_bytes)
            .collect()
    }

    #[test]
    fn pieces_cover_every_element_once_on_group_boundaries() {
        // Every profile (onnxruntime's vector blocks of float32 -> float16 give two segments) and
        // lengths around the chunk and block sizes: contiguous pieces from 0 to n, none longer
        // than a chunk, each starting on a segment start or a multiple of the chunk.
        let mut two_segments = false;
        for profile in Profile::ALL {
            let plan = Plan::new(DType::Float, DType::Float16, &CastOptions::with_profile(profile)).unwrap();
            two_segments |= plan.segments(3 * LANE_CHUNK + 7).count() == 2;
            for n in [0, 1, 5, 31, 32, 33, LANE_CHUNK - 1, LANE_CHUNK, LANE_CHUNK + 1, 3 * LANE_CHUNK + 7] {
                let starts: Vec<usize> = plan.segments(n).map(|(s, _, _)| s).collect();
                let mut next = 0;
                for (s, e, _) in plan.pieces(n) {
                    assert_eq!(s, next, "{profile:?} n={n}");
                    assert!(
                        s < e && e - s <= LANE_CHUNK && (s % LANE_CHUNK == 0 || starts.contains(&s)),
                        "{profile:?} {s}..{e}"
                    );
                    next = e;
                }
                assert_eq!(next, n, "{profile:?} n={n}");
            }
        }
        assert!(two_segments, "a profile with vector blocks");
    }

    #[test]
    fn pieces_from_memory_equal_the_whole_run() {
        for profile in Profile::ALL {
            for to in [DType::Float8E4M3FN, DType::Float8E5M2FNUZ, DType::Int4, DType::Float16, DType::Uint32] {
                let plan = Plan::new(DType::Float, to, &CastOptions::with_profile(profile)).unwrap();
                for n in [0, 3, 33, LANE_CHUNK + 5, 2 * LANE_CHUNK + 64] {
                    let src = source(n);
                    let mut whole = vec![0u8; raw_len(to, n)];
                    plan.run(&src, &mut whole, n).unwrap();
                    let mut pieces = vec![0u8; whole.len()];
                    plan.run_pieces_from(&src, n, |s, _, bytes| {
                        let at = raw_len(to, s);
                        pieces[at..at + bytes.len()].copy_from_slice(bytes);
                        Ok(())
                    })
                    .unwrap();
                    assert_eq!(pieces, whole, "{profile:?} -> {to:?}, n={n}");
                }
            }
        }
        // A source of the wrong length is an error naming the dtype.
        let plan = Plan::new(DType::Float, DType::Float8E4M3FN, &CastOptions::default()).unwrap();
        let err = plan.run_pieces_from(&[0u8; 7], 2, |_, _, _| Ok(())).unwrap_err();
        assert!(err.to_string().contains("FLOAT"), "{err}");
    }
}
