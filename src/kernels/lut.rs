//! Tables for sources of 16 bits or fewer: the core's answer for every source code (256 or 65,536
//! entries), so such a plan is exact by construction whatever the target and the profile, and runs
//! as one lookup per element.

use super::LANE_CHUNK;
use crate::alloc_prelude::*;
use crate::dtype::{DType, Packing};
use crate::error::Result;
use crate::packing;

/// Target codes stored in the target's own width (a 65,536-entry float16 -> float32 table is
/// 256 KiB, not 512).
#[derive(Debug)]
enum Codes {
    U8(Box<[u8]>),
    U16(Box<[u16]>),
    U32(Box<[u32]>),
    U64(Box<[u64]>),
}

/// The core's answer for every code of a source dtype of 16 bits or fewer.
#[derive(Debug)]
pub struct Table {
    codes: Codes,
}

/// A code type that a table stores and writes little-endian.
trait Code: Copy {
    const BYTES: usize;
    fn from_u64(code: u64) -> Self;
    fn write_le(self, out: &mut [u8]);
    fn widen(self) -> u16;
}

macro_rules! code {
    ($t:ty) => {
        impl Code for $t {
            const BYTES: usize = core::mem::size_of::<$t>();
            #[inline]
            fn from_u64(code: u64) -> Self {
                code as $t
            }
            #[inline]
            fn write_le(self, out: &mut [u8]) {
                out.copy_from_slice(&self.to_le_bytes());
            }
            #[inline]
            fn widen(self) -> u16 {
                self as u16
            }
        }
    };
}
code!(u8);
code!(u16);
code!(u32);
code!(u64);

fn collect<T: Code>(entries: usize, core: &mut impl FnMut(u64) -> Result<u64>) -> Result<Box<[T]>> {
    (0..entries as u64).map(|code| core(code).map(T::from_u64)).collect()
}

impl Table {
    /// Asks `core` for the target code of every source code of `from` (whose width is at most 16
    /// bits), storing them in the width of `to`.
    pub fn build(from: DType, to: DType, mut core: impl FnMut(u64) -> Result<u64>) -> Result<Table> {
        let entries = 1usize << from.bits().expect("a table source has a width");
        let codes = match to.bits().expect("a table target has a width") {
            0..=8 => Codes::U8(collect(entries, &mut core)?),
            9..=16 => Codes::U16(collect(entries, &mut core)?),
            17..=32 => Codes::U32(collect(entries, &mut core)?),
            _ => Codes::U64(collect(entries, &mut core)?),
        };
        Ok(Table { codes })
    }

    /// The target code for one source code.
    #[must_use]
    pub fn code(&self, source: usize) -> u64 {
        match &self.codes {
            Codes::U8(t) => u64::from(t[source]),
            Codes::U16(t) => u64::from(t[source]),
            Codes::U32(t) => u64::from(t[source]),
            Codes::U64(t) => t[source],
        }
    }

    /// Converts `n` elements: `src` and `dst` start at a group boundary and hold exactly the bytes
    /// of those elements.
    pub fn run(&self, from: DType, to: DType, src: &[u8], dst: &mut [u8], n: usize) {
        match &self.codes {
            Codes::U8(t) => run_typed(t, from, to, src, dst, n),
            Codes::U16(t) => run_typed(t, from, to, src, dst, n),
            Codes::U32(t) => run_typed(t, from, to, src, dst, n),
            Codes::U64(t) => run_typed(t, from, to, src, dst, n),
        }
    }
}

fn run_typed<T: Code>(table: &[T], from: DType, to: DType, src: &[u8], dst: &mut [u8], n: usize) {
    let whole_target = to.packing() == Packing::Bytes(T::BYTES as u32);
    match from.packing() {
        // The hot shapes as single loops: one load, one lookup, one store per element.
        Packing::Bytes(1) if whole_target => {
            for (d, &s) in dst.chunks_exact_mut(T::BYTES).zip(src) {
                table[usize::from(s)].write_le(d);
            }
        }
        Packing::Bytes(2) if whole_target => {
            for (d, s) in dst.chunks_exact_mut(T::BYTES).zip(src.chunks_exact(2)) {
                table[usize::from(u16::from_le_bytes([s[0], s[1]]))].write_le(d);
            }
        }
        Packing::Nibbles if whole_target => {
            for (d, &s) in dst.chunks_mut(2 * T::BYTES).zip(src) {
                table[usize::from(s & 0xF)].write_le(&mut d[..T::BYTES]);
                if d.len() > T::BYTES {
                    table[usize::from(s >> 4)].write_le(&mut d[T::BYTES..]);
                }
            }
        }
        // Four 6-bit codes in three bytes (LSB first); a final partial group in the chunked loop.
        Packing::Sextets if whole_target && n >= 4 => {
            let whole = n / 4;
            for (d, s) in dst.chunks_exact_mut(4 * T::BYTES).zip(src.chunks_exact(3)).take(whole) {
                let word = u32::from(s[0]) | u32::from(s[1]) << 8 | u32::from(s[2]) << 16;
                for (j, d) in d.chunks_exact_mut(T::BYTES).enumerate() {
                    table[(word >> (6 * j) & 0x3F) as usize].write_le(d);
                }
            }
            if n > whole * 4 {
                let (s, d) = (&src[3 * whole..], &mut dst[4 * whole * T::BYTES..]);
                run_typed(table, from, to, s, d, n - whole * 4);
            }
        }
        // Byte-wide sources into packed targets: four lookups per group of four elements (a whole
        // number of target bytes), packed as they are looked up; the last partial group below.
        Packing::Bytes(w @ (1 | 2)) if packed_bits(to).is_some() && n >= 4 => {
            let target_bits = packed_bits(to).expect("checked");
            let groups = n / 4;
            let (source_bytes, target_bytes) = (w as usize, target_bits as usize / 2);
            match (source_bytes, target_bytes) {
                (1, 1) => pack_groups::<T, 1, 1>(table, src, dst, groups, target_bits),
                (1, 2) => pack_groups::<T, 1, 2>(table, src, dst, groups, target_bits),
                (1, 3) => pack_groups::<T, 1, 3>(table, src, dst, groups, target_bits),
                (2, 1) => pack_groups::<T, 2, 1>(table, src, dst, groups, target_bits),
                (2, 2) => pack_groups::<T, 2, 2>(table, src, dst, groups, target_bits),
                (2, 3) => pack_groups::<T, 2, 3>(table, src, dst, groups, target_bits),
                _ => unreachable!("1- or 2-byte sources, 2-, 4- or 6-bit targets"),
            }
            if n > groups * 4 {
                let (s, d) = (&src[4 * groups * source_bytes..], &mut dst[groups * target_bytes..]);
                run_typed(table, from, to, s, d, n - groups * 4);
            }
        }
        // Everything else in chunks: unpack the indices, look up, pack the codes.
        _ => {
            let mut indices = [0u16; LANE_CHUNK];
            let mut codes = [0u16; LANE_CHUNK];
            let mut start = 0;
            while start < n {
                let len = LANE_CHUNK.min(n - start);
                let src_bytes = &src[raw_len(from, start)..raw_len(from, start + len)];
                packing::unpack_u16(from, src_bytes, &mut indices[..len]);
                let dst_bytes = &mut dst[raw_len(to, start)..raw_len(to, start + len)];
                if whole_target {
                    for (d, &i) in dst_bytes.chunks_exact_mut(T::BYTES).zip(&indices[..len]) {
                        table[usize::from(i)].write_le(d);
                    }
                } else {
                    for (c, &i) in codes.iter_mut().zip(&indices[..len]) {
                        *c = table[usize::from(i)].widen();
                    }
                    packing::pack_u16(to, &codes[..len], dst_bytes);
                }
                start += len;
            }
        }
    }
}

/// The width of a packed dtype's codes (2, 4 or 6 bits), or `None` for byte-wide ones.
fn packed_bits(dtype: DType) -> Option<u32> {
    match dtype.packing() {
        Packing::Crumbs => Some(2),
        Packing::Nibbles => Some(4),
        Packing::Sextets => Some(6),
        _ => None,
    }
}

/// Groups of four `S`-byte source codes looked up and packed into `T` bytes of `bits`-bit codes.
#[inline(always)]
fn pack_groups<C: Code, const S: usize, const T: usize>(
    table: &[C],
    src: &[u8],
    dst: &mut [u8],
    groups: usize,
    bits: u32,
) {
    let index = |b: &[u8]| if S == 1 { usize::from(b[0]) } else { usize::from(u16::from_le_bytes([b[0], b[1]])) };
    for (s, d) in src.chunks_exact(4 * S).zip(dst.chunks_exact_mut(T)).take(groups) {
        let mut word = 0u32;
        for (j, b) in s.chunks_exact(S).enumerate() {
            word |= u32::from(table[index(b)].widen()) << (bits * j as u32);
        }
        d.copy_from_slice(&word.to_le_bytes()[..T]);
    }
}

/// Byte offset of element `i` (a group boundary, or the end).
fn raw_len(dtype: DType, i: usize) -> usize {
    packing::raw_len(dtype, i).expect("the plan checked the lengths")
}

/// A packed source of 2 or 4 bits into a byte-wide target: for each of the 256 source bytes, the
/// target bytes of the elements it holds (2 or 4 of them), so a whole source byte converts with one
/// load and one fixed-size store. Built from the element table, so it is exact by construction.
#[derive(Debug)]
pub struct ByteTable {
    /// 256 entries of `entry_bytes` each.
    bytes: Box<[u8]>,
    entry_bytes: usize,
    per_byte: usize,
    target_bytes: usize,
}

impl ByteTable {
    /// `None` unless `from` is packed in nibbles or crumbs and `to` is byte-wide.
    #[must_use]
    pub fn new(from: DType, to: DType, table: &Table) -> Option<ByteTable> {
        let (per_byte, bits) = match from.packing() {
            Packing::Nibbles => (2, 4),
            Packing::Crumbs => (4, 2),
            _ => return None,
        };
        let target_bytes = match to.packing() {
            Packing::Bytes(b) => b as usize,
            _ => return None,
        };
        let entry_bytes = per_byte * target_bytes;
        let mut bytes = vec![0u8; 256 * entry_bytes].into_boxed_slice();
        for (byte, entry) in bytes.chunks_exact_mut(entry_bytes).enumerate() {
            for (j, out) in entry.chunks_exact_mut(target_bytes).enumerate() {
                let code = byte >> (bits * j) & ((1 << bits) - 1);
                out.copy_from_slice(&table.code(code).to_le_bytes()[..target_bytes]);
            }
        }
        Some(ByteTable { bytes, entry_bytes, per_byte, target_bytes })
    }

    /// Converts `n` elements (`src` and `dst` hold exactly their bytes; a final partial source byte
    /// converts only its elements).
    pub fn run(&self, src: &[u8], dst: &mut [u8], n: usize) {
        let whole = n / self.per_byte;
        let (head, tail) = dst.split_at_mut(whole * self.entry_bytes);
        // One loop per entry size, so each store has a fixed size.
        match self.entry_bytes {
            2 => self.run_whole::<2>(&src[..whole], head),
            4 => self.run_whole::<4>(&src[..whole], head),
            8 => self.run_whole::<8>(&src[..whole], head),
            16 => self.run_whole::<16>(&src[..whole], head),
            32 => self.run_whole::<32>(&src[..whole], head),
            _ => unreachable!("2 or 4 elements of 1, 2, 4 or 8 bytes"),
        }
        if let Some(&last) = src.get(whole) {
            let entry = &self.bytes[usize::from(last) * self.entry_bytes..];
            tail.copy_from_slice(&entry[..(n - whole * self.per_byte) * self.target_bytes]);
        }
    }

    #[inline(always)]
    fn run_whole<const N: usize>(&self, src: &[u8], dst: &mut [u8]) {
        for (d, &s) in dst.chunks_exact_mut(N).zip(src) {
            let at = usize::from(s) * N;
            d.copy_from_slice(&self.bytes[at..at + N]);
        }
    }
}

/// A packed source (2, 4 or 6 bits) into a packed target (2, 4 or 6 bits), four elements at a
/// time: four elements start and end on a byte boundary in every packing (one byte of 2-bit
/// codes, two of 4-bit, three of 6-bit). Each group is two lookups, one per pair of source codes
/// (at most 12 bits, so at most 4,096 entries), giving the pair's two target codes already side by
/// side. Built from the element table, so it is exact by construction.
#[derive(Debug)]
pub struct GroupTable {
    /// For each pair of source codes (the first in the low bits), the pair of target codes.
    pairs: Box<[u16]>,
    source_bits: u32,
    target_bits: u32,
}

impl GroupTable {
    /// `None` unless both dtypes are packed in crumbs, nibbles or sextets.
    #[must_use]
    pub fn new(from: DType, to: DType, table: &Table) -> Option<GroupTable> {
        let (source_bits, target_bits) = (packed_bits(from)?, packed_bits(to)?);
        let source_mask = (1usize << source_bits) - 1;
        let pairs = (0..1usize << (2 * source_bits))
            .map(|pair| {
                let (first, second) = (table.code(pair & source_mask), table.code(pair >> source_bits));
                (first | second << target_bits) as u16
            })
            .collect();
        Some(GroupTable { pairs, source_bits, target_bits })
    }

    /// Converts `n` elements (`src` and `dst` hold exactly their bytes); the elements after the
    /// last whole group of four go through `table`.
    pub fn run(&self, table: &Table, from: DType, to: DType, src: &[u8], dst: &mut [u8], n: usize) {
        let groups = n / 4;
        let (source_bytes, target_bytes) = (self.source_bits as usize / 2, self.target_bits as usize / 2);
        // One loop per shape, so each group reads and writes a fixed number of bytes.
        match (source_bytes, target_bytes) {
            (1, 1) => self.run_groups::<1, 1>(src, dst, groups),
            (1, 2) => self.run_groups::<1, 2>(src, dst, groups),
            (1, 3) => self.run_groups::<1, 3>(src, dst, groups),
            (2, 1) => self.run_groups::<2, 1>(src, dst, groups),
            (2, 2) => self.run_groups::<2, 2>(src, dst, groups),
            (2, 3) => self.run_groups::<2, 3>(src, dst, groups),
            (3, 1) => self.run_groups::<3, 1>(src, dst, groups),
            (3, 2) => self.run_groups::<3, 2>(src, dst, groups),
            (3, 3) => self.run_groups::<3, 3>(src, dst, groups),
            _ => unreachable!("groups of 2-, 4- and 6-bit codes take 1, 2 or 3 bytes"),
        }
        if n > groups * 4 {
            let (s, d) = (&src[groups * source_bytes..], &mut dst[groups * target_bytes..]);
            table.run(from, to, s, d, n - groups * 4);
        }
    }

    #[inline(always)]
    fn run_groups<const S: usize, const T: usize>(&self, src: &[u8], dst: &mut [u8], groups: usize) {
        let half = 2 * self.source_bits;
        let (pair_mask, shift) = ((1u32 << half) - 1, 2 * self.target_bits);
        for (s, d) in src.chunks_exact(S).zip(dst.chunks_exact_mut(T)).take(groups) {
            let mut word = [0u8; 4];
            word[..S].copy_from_slice(s);
            let word = u32::from_le_bytes(word);
            let low = u32::from(self.pairs[(word & pair_mask) as usize]);
            let high = u32::from(self.pairs[(word >> half & pair_mask) as usize]);
            d.copy_from_slice(&(low | high << shift).to_le_bytes()[..T]);
        }
    }
}

/// An 8- or 16-bit integer source into a wider byte-wide integer target by sign or zero
/// extension (the core's answer for every integer-to-integer cast is the low bits of the two's
/// complement value). Accepted only where that arithmetic equals the element table on every source
/// code, so it is exact by construction; it replaces lookups in a table of up to 512 KiB.
#[derive(Debug)]
pub struct IntegerWiden {
    source_bytes: usize,
    target_bytes: usize,
    signed: bool,
}

impl IntegerWiden {
    /// `None` unless both dtypes are byte-wide integers, the target wider, and the arithmetic
    /// agrees with `table` on every source code.
    #[must_use]
    pub fn new(from: DType, to: DType, table: &Table) -> Option<IntegerWiden> {
        use crate::dtype::Kind;
        let (Kind::Integer { bits, signed }, Kind::Integer { .. }) = (from.kind(), to.kind()) else { return None };
        let (Packing::Bytes(s), Packing::Bytes(t)) = (from.packing(), to.packing()) else { return None };
        if t <= s || s > 2 {
            return None;
        }
        let widen = IntegerWiden { source_bytes: s as usize, target_bytes: t as usize, signed };
        let mask = to.code_mask();
        (0..1u64 << bits).all(|code| widen.extend(code) & mask == table.code(code as usize)).then_some(widen)
    }

    /// The source code sign- or zero-extended to 64 bits.
    fn extend(&self, code: u64) -> u64 {
        let unused = 64 - 8 * self.source_bytes as u32;
        if self.signed {
            ((code << unused) as i64 >> unused) as u64
        } else {
            code
        }
    }

    /// Converts the elements `src` holds into `dst` (exactly their bytes).
    pub fn run(&self, src: &[u8], dst: &mut [u8]) {
        // One loop per shape and signedness, so each is branch-free and vectorises.
        match (self.source_bytes, self.target_bytes, self.signed) {
            (1, 2, true) => widen::<1, 2, true>(src, dst),
            (1, 4, true) => widen::<1, 4, true>(src, dst),
            (1, 8, true) => widen::<1, 8, true>(src, dst),
            (2, 4, true) => widen::<2, 4, true>(src, dst),
            (2, 8, true) => widen::<2, 8, true>(src, dst),
            (1, 2, false) => widen::<1, 2, false>(src, dst),
            (1, 4, false) => widen::<1, 4, false>(src, dst),
            (1, 8, false) => widen::<1, 8, false>(src, dst),
            (2, 4, false) => widen::<2, 4, false>(src, dst),
            (2, 8, false) => widen::<2, 8, false>(src, dst),
            _ => unreachable!("1- or 2-byte sources into wider targets"),
        }
    }
}

#[inline(always)]
fn widen<const S: usize, const T: usize, const SIGNED: bool>(src: &[u8], dst: &mut [u8]) {
    let unused = 64 - 8 * S as u32;
    for (d, s) in dst.chunks_exact_mut(T).zip(src.chunks_exact(S)) {
        let mut bytes = [0u8; 8];
        bytes[..S].copy_from_slice(s);
        let code = u64::from_le_bytes(bytes);
        let value = if SIGNED { ((code << unused) as i64 >> unused) as u64 } else { code };
        d.copy_from_slice(&value.to_le_bytes()[..T]);
    }
}
