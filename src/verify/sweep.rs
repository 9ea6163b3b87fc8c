//! **Sweeps** (`lowbit sweep`, `lowbit diff`): every pattern of a source of at most 32 bits,
//! in ascending order, through a configuration, on every core.
//!
//! `sweep` reports the SHA-256 of the concatenated output codes (each code in its little-endian
//! width: 1, 2, 4 or 8 bytes; packed formats one code per byte), the count of results per class
//! and per flag. `diff` runs two configurations over the same patterns and reports where they
//! disagree.
//!
//! float32 sources into float targets of 8 bits or fewer go through a [`FlagSplitTable`] (the
//! core's answers for every top-16-bit pattern), so a piece of 2^16 consecutive patterns, which
//! shares its top 16 bits, has two answers: one for the pattern whose low half is zero and one for
//! the other 65,535. ONNX Cast configurations of float32 sources run through [`crate::plan::Plan`];
//! everything else through the core, element by element.

use super::config::{Config, Evaluator, Semantics};
use super::{Format, RoundingMode, Shape, Status, VerifyOptions};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::plan::Plan;
use core::num::FpCategory;
use rayon::prelude::*;
use sha2::{Digest, Sha256};

/// float32 -> a float target of at most 8 bits, under the IEEE semantics with a deterministic
/// mode: the core's (code, flags) for the two representatives of every top-16-bit pattern (low
/// half zero, and low half 0x8000 standing for every nonzero low half).
///
/// Exact because such a target has at most 6 stored fraction bits and a subnormal step no finer
/// than 2^-133, so every decision point of the core (its values, the midpoints between them, the
/// overflow threshold, the smallest normal that tininess compares with, before or after rounding)
/// is a float32 whose low 16 bits are zero: the float32 values strictly between two such patterns
/// get one answer, flags included, and the low half only matters as sticky. `tests/verify_cli.rs`
/// compares the table with the core on every top-16-bit pattern with several low halves.
#[derive(Clone, Debug)]
pub struct FlagSplitTable {
    /// Entry `2 * (bits >> 16) + (low 16 bits != 0)`: the code, and the flags shifted left 8.
    entries: Box<[u16]>,
}

impl FlagSplitTable {
    /// The table for `to` under `options`, built from the core; `None` where it would not be
    /// exact (targets wider than 8 bits or with more than 6 fraction bits, integer targets,
    /// stochastic rounding).
    #[must_use]
    pub fn new(to: &Format, options: &VerifyOptions) -> Option<FlagSplitTable> {
        let Shape::Float(f) = to.shape() else { return None };
        if f.width() > 8
            || f.mantissa_bits > 6
            || f.bias + f.mantissa_bits as i32 > 133
            || matches!(options.mode, RoundingMode::Stochastic { .. })
        {
            return None;
        }
        let converter = super::Converter::new(&Format::Onnx(DType::Float), to, options);
        let entries = (0..1u64 << 17)
            .map(|i| {
                let (code, status) = converter.convert((i >> 1) << 16 | (i & 1) << 15, 0);
                code as u16 | u16::from(status.bits()) << 8
            })
            .collect();
        Some(FlagSplitTable { entries })
    }

    /// The code and flags of one float32.
    #[inline]
    #[must_use]
    pub fn lookup(&self, bits: u32) -> (u64, Status) {
        Self::unpack(self.entries[(bits >> 16 << 1 | u32::from(bits & 0xFFFF != 0)) as usize])
    }

    #[inline]
    fn unpack(entry: u16) -> (u64, Status) {
        (u64::from(entry & 0xFF), Status::from_bits_truncate((entry >> 8) as u8))
    }

    /// The answers of a piece of 2^16 patterns sharing their top half: for the first pattern and
    /// for the other 65,535.
    #[inline]
    fn piece(&self, top: u32) -> [(u64, Status); 2] {
        let i = (top as usize) << 1;
        [Self::unpack(self.entries[i]), Self::unpack(self.entries[i + 1])]
    }
}

/// How a configuration is run over pieces of patterns.
enum Kernel {
    Table(FlagSplitTable),
    /// ONNX Cast of float32 through a plan (values only).
    Plan {
        plan: Plan,
        to: DType,
    },
    Each(Evaluator),
}

/// Patterns per piece: 2^16, so a float32 piece shares its top half.
const PIECE: u64 = 1 << 16;

/// Per-thread space for a piece.
struct Scratch {
    codes: Vec<u64>,
    flags: Vec<u8>,
    source: Vec<u8>,
    raw: Vec<u8>,
    narrow: Vec<u16>,
}

impl Scratch {
    fn new() -> Scratch {
        Scratch {
            codes: vec![0; PIECE as usize],
            flags: vec![0; PIECE as usize],
            source: Vec::new(),
            raw: Vec::new(),
            narrow: Vec::new(),
        }
    }
}

/// Flags byte meaning "not known" (ONNX configurations).
const NO_FLAGS: u8 = 0xFF;

impl Kernel {
    fn new(from: &Format, to: &Format, config: &Config) -> Result<Kernel> {
        let target = config.target(to);
        let float32 = *from == Format::Onnx(DType::Float);
        match config.semantics {
            Semantics::Ieee(options) if float32 => {
                if let Some(table) = FlagSplitTable::new(&target, &options) {
                    return Ok(Kernel::Table(table));
                }
            }
            Semantics::Onnx(options) if float32 => {
                if let Format::Onnx(t) = target {
                    return Ok(Kernel::Plan { plan: Plan::new(DType::Float, t, &options)?, to: t });
                }
            }
            _ => {}
        }
        Ok(Kernel::Each(Evaluator::new(from, to, config)?))
    }

    const fn has_flags(&self) -> bool {
        match self {
            Kernel::Table(_) => true,
            Kernel::Plan { .. } => false,
            Kernel::Each(e) => e.has_flags(),
        }
    }

    /// Results of the `n` patterns from `start` into `scratch.codes` and `scratch.flags`.
    fn run(&self, start: u64, n: usize, scratch: &mut Scratch) -> Result<()> {
        let Scratch { codes, flags, source, raw, narrow } = scratch;
        match self {
            Kernel::Table(table) => {
                for (k, (c, f)) in codes[..n].iter_mut().zip(&mut flags[..n]).enumerate() {
                    let (code, status) = table.lookup((start + k as u64) as u32);
                    *c = code;
                    *f = status.bits();
                }
            }
            Kernel::Each(e) => {
                for (k, (c, f)) in codes[..n].iter_mut().zip(&mut flags[..n]).enumerate() {
                    let (code, status) = e.convert(start + k as u64, 0);
                    *c = code;
                    *f = status.map_or(NO_FLAGS, |s| s.bits());
                }
            }
            Kernel::Plan { plan, to } => {
                source.resize(4 * n, 0);
                for (k, b) in source.chunks_exact_mut(4).enumerate() {
                    b.copy_from_slice(&((start + k as u64) as u32).to_le_bytes());
                }
                raw.resize(crate::packing::raw_len(*to, n)?, 0);
                plan.run(source, raw, n)?;
                match to.bits() {
                    Some(bits) if bits < 8 => {
                        narrow.resize(n, 0);
                        crate::packing::unpack_u16(*to, raw, narrow);
                        for (c, &v) in codes.iter_mut().zip(narrow.iter()) {
                            *c = u64::from(v);
                        }
                    }
                    _ => {
                        let width = raw.len() / n.max(1);
                        for (c, bytes) in codes.iter_mut().zip(raw.chunks_exact(width)) {
                            let mut word = [0u8; 8];
                            word[..width].copy_from_slice(bytes);
                            *c = u64::from_le_bytes(word);
                        }
                    }
                }
                flags[..n].fill(NO_FLAGS);
            }
        }
        Ok(())
    }
}

/// Bytes per output code in the digest: 1, 2, 4 or 8.
#[must_use]
pub const fn code_bytes(width: u32) -> usize {
    match width {
        0..=8 => 1,
        9..=16 => 2,
        17..=32 => 4,
        _ => 8,
    }
}

/// Largest source a sweep or diff runs over.
pub const MAX_SWEEP_BITS: u32 = 32;

fn check_source(op: &str, from: &Format) -> Result<u64> {
    if from.width() > MAX_SWEEP_BITS {
        return Err(Error::InvalidOp {
            op: op.into(),
            message: format!(
                "sweeps every pattern of sources up to {MAX_SWEEP_BITS} bits; {from} has {}",
                from.width()
            ),
        });
    }
    Ok(1u64 << from.width())
}

/// The classes results are counted in.
fn class_names(to: &Format) -> &'static [&'static str] {
    match to.shape() {
        Shape::Float(_) => &["zero", "subnormal", "normal", "infinity", "NaN"],
        Shape::Integer { .. } => &["zero", "positive", "negative"],
    }
}

fn class_of(to: &Format, code: u64) -> usize {
    match to.shape() {
        Shape::Float(f) => match f.classify(code) {
            FpCategory::Zero => 0,
            FpCategory::Subnormal => 1,
            FpCategory::Normal => 2,
            FpCategory::Infinite => 3,
            FpCategory::Nan => 4,
        },
        Shape::Integer { bits, signed } => {
            if code == 0 {
                0
            } else if signed && (code >> (bits - 1)) & 1 == 1 {
                2
            } else {
                1
            }
        }
    }
}

/// Counts of a sweep's results.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Counts {
    classes: [u64; 5],
    /// Per flag bit (bit 0 = inexact, ..., bit 4 = invalid).
    flags: [u64; 5],
    /// Results with no flag.
    exact: u64,
}

/// Counts one piece's results cheaply: classes through a table of every code (targets of 16 bits
/// or fewer) and flags as a histogram of flag bytes, folded into [`Counts`] at the end.
struct Tally<'a> {
    classes: [u64; 5],
    /// By flag byte (0..=0x1F), and index 32 for "no flags known".
    flag_bytes: [u64; 33],
    class_table: Option<&'a [u8]>,
    to: &'a Format,
}

impl<'a> Tally<'a> {
    fn new(to: &'a Format, class_table: Option<&'a [u8]>) -> Tally<'a> {
        Tally { classes: [0; 5], flag_bytes: [0; 33], class_table, to }
    }

    #[inline]
    fn count(&mut self, code: u64, flags: u8) {
        let class = match self.class_table {
            Some(t) => usize::from(t[code as usize]),
            None => class_of(self.to, code),
        };
        self.classes[class] += 1;
        self.flag_bytes[usize::from(flags).min(32)] += 1;
    }

    fn finish(&self) -> Counts {
        let mut c = Counts { classes: self.classes, ..Counts::default() };
        for (byte, &n) in self.flag_bytes[..32].iter().enumerate() {
            for k in 0..5 {
                c.flags[k] += n * ((byte as u64 >> k) & 1);
            }
        }
        c.exact = self.flag_bytes[0];
        c
    }
}

/// The class of every code of a target of at most 16 bits.
fn class_table(to: &Format) -> Option<Vec<u8>> {
    (to.width() <= 16).then(|| (0..1u64 << to.width()).map(|c| class_of(to, c) as u8).collect())
}

impl Counts {
    fn add(&mut self, other: &Counts) {
        for k in 0..5 {
            self.classes[k] += other.classes[k];
            self.flags[k] += other.flags[k];
        }
        self.exact += other.exact;
    }

    fn count(&mut self, to: &Format, code: u64, flags: u8, times: u64) {
        self.classes[class_of(to, code)] += times;
        if flags != NO_FLAGS {
            for k in 0..5 {
                self.flags[k] += times * u64::from((flags >> k) & 1);
            }
            self.exact += times * u64::from(flags == 0);
        }
    }
}

/// What [`sweep`] reports.
#[derive(Clone, Debug)]
pub struct SweepReport {
    /// The source format.
    pub from: Format,
    /// The target format (the configuration's own, if it names one).
    pub to: Format,
    /// The configuration swept.
    pub config: Config,
    /// Source patterns converted (2^width, at most 2^32).
    pub patterns: u64,
    /// SHA-256 of every result in pattern order (the digests of `tables/verify/`).
    pub sha256: [u8; 32],
    /// (class name, count), in a fixed order.
    pub classes: Vec<(&'static str, u64)>,
    /// (flag name, count) in TestFloat's order, and the count without any flag; `None` for ONNX
    /// configurations.
    pub flags: Option<(Vec<(&'static str, u64)>, u64)>,
    /// Whether the fast table ran.
    pub table: bool,
    /// Wall-clock time of the sweep.
    pub seconds: f64,
}

impl SweepReport {
    /// The digest in lower-case hex.
    #[must_use]
    pub fn sha256_hex(&self) -> String {
        self.sha256.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// `sha256 <hex>` first, then the counts (the time is not part of it).
    #[must_use]
    pub fn report(&self) -> String {
        use super::check::thousands;
        let mut lines = vec![
            format!("sha256 {}", self.sha256_hex()),
            format!(
                "{} patterns {} -> {}, {}",
                thousands(self.patterns),
                self.from,
                self.config.target(&self.to),
                self.config
            ),
        ];
        for (name, n) in &self.classes {
            lines.push(format!("{:>15}  {name}", thousands(*n)));
        }
        match &self.flags {
            Some((flags, exact)) => {
                for (name, n) in flags {
                    lines.push(format!("{:>15}  flag {name}", thousands(*n)));
                }
                lines.push(format!("{:>15}  no flag", thousands(*exact)));
            }
            None => lines.push("(ONNX Cast raises no flags: values only)".into()),
        }
        lines.join("\n")
    }
}

/// Patterns per block: the unit of hashing and of progress.
const BLOCK: u64 = 1 << 24;

fn pool(threads: usize) -> Result<rayon::ThreadPool> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads.max(1))
        .build()
        .map_err(|e| Error::InvalidOp { op: "threads".into(), message: e.to_string() })
}

/// Every pattern of `from` (at most 32 bits) through `config` into `to`, on `threads` threads;
/// `progress` is told the patterns done after each block.
pub fn sweep(
    from: &Format,
    to: &Format,
    config: &Config,
    threads: usize,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<SweepReport> {
    let total = check_source("sweep", from)?;
    let target = config.target(to);
    let start_time = std::time::Instant::now();
    let kernel = Kernel::new(from, to, config)?;
    let bytes = code_bytes(target.width());
    let pool = pool(threads)?;
    let float32_pieces = *from == Format::Onnx(DType::Float);
    let classes = class_table(&target);
    let mut counts = Counts::default();
    let (to_hasher, hasher_inbox) = std::sync::mpsc::sync_channel::<Vec<u8>>(1);
    let (to_producer, returned) = std::sync::mpsc::channel::<Vec<u8>>();
    let sha256: [u8; 32] = std::thread::scope(|scope| -> Result<[u8; 32]> {
        let hashing = scope.spawn(move || {
            let mut hasher = Sha256::new();
            for block in hasher_inbox {
                hasher.update(&block);
                // The producer may have stopped on an error; a lost buffer does not matter.
                let _ = to_producer.send(block);
            }
            hasher
        });
        let mut produce = || -> Result<()> {
            let mut spare: Vec<Vec<u8>> = Vec::new();
            let mut done = 0u64;
            while done < total {
                let n = BLOCK.min(total - done);
                let mut out = spare.pop().or_else(|| returned.try_recv().ok()).unwrap_or_default();
                out.resize(n as usize * bytes, 0);
                let block_counts = pool.install(|| {
                    out.par_chunks_mut(PIECE as usize * bytes)
                        .enumerate()
                        .map_init(Scratch::new, |scratch, (k, chunk)| -> Result<Counts> {
                            let start = done + k as u64 * PIECE;
                            let len = chunk.len() / bytes;
                            let mut c = Counts::default();
                            if let (Kernel::Table(table), true, true) = (&kernel, float32_pieces, len as u64 == PIECE) {
                                let [(first, f0), (rest, f1)] = table.piece((start >> 16) as u32);
                                chunk[0] = first as u8;
                                chunk[1..].fill(rest as u8);
                                c.count(&target, first, f0.bits(), 1);
                                c.count(&target, rest, f1.bits(), PIECE - 1);
                                return Ok(c);
                            }
                            kernel.run(start, len, scratch)?;
                            let mut tally = Tally::new(&target, classes.as_deref());
                            let results = scratch.codes[..len].iter().zip(&scratch.flags[..len]);
                            if bytes == 1 {
                                for ((&code, &flags), out) in results.zip(chunk.iter_mut()) {
                                    *out = code as u8;
                                    tally.count(code, flags);
                                }
                            } else {
                                for ((&code, &flags), out) in results.zip(chunk.chunks_exact_mut(bytes)) {
                                    out.copy_from_slice(&code.to_le_bytes()[..bytes]);
                                    tally.count(code, flags);
                                }
                            }
                            Ok(tally.finish())
                        })
                        .try_reduce(Counts::default, |mut a, b| {
                            a.add(&b);
                            Ok(a)
                        })
                })?;
                counts.add(&block_counts);
                if to_hasher.send(out).is_err() {
                    break;
                }
                if let Ok(b) = returned.try_recv() {
                    spare.push(b);
                }
                done += n;
                progress(done);
            }
            Ok(())
        };
        let outcome = produce();
        drop(to_hasher);
        let finished = hashing
            .join()
            .map_err(|_| Error::InvalidOp { op: "sweep".into(), message: "the hashing thread stopped".into() })?;
        outcome.map(|()| finished.finalize().into())
    })?;
    let names = class_names(&target);
    let flags = kernel.has_flags().then(|| {
        let named = super::check::FLAG_NAMES
            .iter()
            .map(|(flag, name)| (*name, counts.flags[flag.bits().trailing_zeros() as usize]))
            .collect();
        (named, counts.exact)
    });
    Ok(SweepReport {
        from: *from,
        to: *to,
        config: *config,
        patterns: total,
        sha256,
        classes: names.iter().enumerate().map(|(k, n)| (*n, counts.classes[k])).collect(),
        flags,
        table: matches!(kernel, Kernel::Table(_)),
        seconds: start_time.elapsed().as_secs_f64(),
    })
}

/// Examples of disagreement `diff` keeps.
pub const DIFF_EXAMPLES: usize = 20;

/// What [`diff`] reports.
#[derive(Clone, Debug)]
pub struct DiffReport {
    /// The source format.
    pub from: Format,
    /// Source patterns compared.
    pub patterns: u64,
    /// Patterns whose results differ in value.
    pub values: u64,
    /// Patterns whose values agree and flags differ (both configurations with flags).
    pub flags_only: u64,
    /// Disagreements by the input's class: (class name, count).
    pub by_class: Vec<(&'static str, u64)>,
    /// The first disagreements, ascending.
    pub examples: Vec<String>,
    /// Whether flags were compared (both configurations have IEEE semantics).
    pub compared_flags: bool,
}

impl DiffReport {
    /// The report: the two configurations, the first disagreements, the counts by class and the
    /// totals.
    #[must_use]
    pub fn report(&self, a: &str, b: &str) -> String {
        use super::check::thousands;
        let mut lines = vec![format!("A = {a}"), format!("B = {b}")];
        lines.extend(self.examples.iter().cloned());
        for (name, n) in &self.by_class {
            if *n > 0 {
                lines.push(format!("{:>15}  {name} inputs disagree", thousands(*n)));
            }
        }
        if !self.compared_flags {
            lines.push("(flags not compared: a configuration is ONNX Cast, values only)".into());
        }
        lines.push(format!(
            "{} patterns, {} disagree ({} in value, {} in flags only)",
            thousands(self.patterns),
            thousands(self.values + self.flags_only),
            thousands(self.values),
            thousands(self.flags_only)
        ));
        lines.join("\n")
    }
}

/// Where `a` and `b` disagree over every pattern of `from` (at most 32 bits).
pub fn diff(
    from: &Format,
    to: &Format,
    a: &Config,
    b: &Config,
    threads: usize,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<DiffReport> {
    let total = check_source("diff", from)?;
    let (ka, kb) = (Kernel::new(from, to, a)?, Kernel::new(from, to, b)?);
    let (ta, tb) = (a.target(to), b.target(to));
    let compared_flags = ka.has_flags() && kb.has_flags();
    let pool = pool(threads)?;
    let source_names = class_names(from);
    let (ha, hb) = (super::testfloat::hex_digits(ta.width()), super::testfloat::hex_digits(tb.width()));
    let hs = super::testfloat::hex_digits(from.width());
    let describe = |code: u64, result_a: (u64, u8), result_b: (u64, u8)| {
        let flags = |f: u8| if f == NO_FLAGS { String::new() } else { format!(" {f:02X}") };
        format!(
            "{code:0hs$X}: A {:0ha$X}{}, B {:0hb$X}{}",
            result_a.0,
            flags(result_a.1),
            result_b.0,
            flags(result_b.1)
        )
    };
    #[derive(Default)]
    struct Part {
        values: u64,
        flags_only: u64,
        by_class: [u64; 5],
        examples: Vec<String>,
    }
    let mut total_part = Part::default();
    let mut done = 0u64;
    while done < total {
        let n = BLOCK.min(total - done);
        let parts: Vec<Part> = pool.install(|| {
            (0..n.div_ceil(PIECE))
                .into_par_iter()
                .map_init(
                    || (Scratch::new(), Scratch::new()),
                    |(sa, sb), k| -> Result<Part> {
                        let start = done + k * PIECE;
                        let len = PIECE.min(done + n - start) as usize;
                        ka.run(start, len, sa)?;
                        kb.run(start, len, sb)?;
                        let mut part = Part::default();
                        for i in 0..len {
                            let (ca, fa, cb, fb) = (sa.codes[i], sa.flags[i], sb.codes[i], sb.flags[i]);
                            let value = ca != cb;
                            let flags = compared_flags && fa != fb;
                            if !(value || flags) {
                                continue;
                            }
                            if value {
                                part.values += 1;
                            } else {
                                part.flags_only += 1;
                            }
                            let code = start + i as u64;
                            part.by_class[class_of(from, code)] += 1;
                            if part.examples.len() < DIFF_EXAMPLES {
                                part.examples.push(describe(code, (ca, fa), (cb, fb)));
                            }
                        }
                        Ok(part)
                    },
                )
                .collect::<Result<Vec<Part>>>()
        })?;
        for p in parts {
            total_part.values += p.values;
            total_part.flags_only += p.flags_only;
            for k in 0..5 {
                total_part.by_class[k] += p.by_class[k];
            }
            let room = DIFF_EXAMPLES - total_part.examples.len();
            total_part.examples.extend(p.examples.into_iter().take(room));
        }
        done += n;
        progress(done);
    }
    Ok(DiffReport {
        from: *from,
        patterns: total,
        values: total_part.values,
        flags_only: total_part.flags_only,
        by_class: source_names.iter().enumerate().map(|(k, name)| (*name, total_part.by_class[k])).collect(),
        examples: total_part.examples,
        compared_flags,
    })
}
