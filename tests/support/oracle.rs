//! Independent oracle for the `spec` profile of ONNX low-precision casts.
//!
//! Written only from the ONNX text, the `spec` rules of tables/profiles.md and the peers'
//! documented behaviour; it shares no code with the crate.
//! Every finite value is an exact dyadic rational `(-1)^negative * mant * 2^exp` with a
//! `BigUint` mantissa. No floating-point arithmetic takes part in any decision: floats are
//! only read through their bit patterns.
//!
//! Rounding into the small formats (float8, float6, float4, E8M0) is done against a
//! precomputed, sorted table of the representable magnitudes (plus the first grid point above
//! MAX, so that overflow is judged after rounding) with exact comparisons. Rounding into
//! binary16/bfloat16/binary32/binary64 is done by exact big-integer shifting. A second,
//! table-free rounding path for the small formats (`encode_generic`) exists only so that the
//! self-test can check the two against each other.

#![allow(dead_code)]

use num_bigint::BigUint;
use num_traits::{One, ToPrimitive, Zero};
use std::cmp::Ordering;
use std::fmt;
use std::sync::OnceLock;

/// Target / source formats known to the oracle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OFormat {
    E4M3FN,
    E4M3FNUZ,
    E5M2,
    E5M2FNUZ,
    E8M0,
    E2M3,
    E3M2,
    E2M1,
    F16,
    BF16,
    F32,
    F64,
    /// Two's complement (signed) or plain binary (unsigned) integer of `bits` bits.
    Int {
        bits: u32,
        signed: bool,
    },
}

/// Rounding direction applied to the magnitude.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OMode {
    /// Nearest, ties to the neighbour whose last mantissa bit (E8M0: code) is even.
    NearestEven,
    /// Toward zero (magnitude down).
    TowardZero,
    /// Away from zero (magnitude up).
    Up,
    /// Nearest, ties away from zero.
    NearestTiesUp,
}

/// An exact value: NaN and Inf carry a sign; a finite value is
/// `(-1)^negative * mant * 2^exp` (not necessarily normalised; use [`OValue::finite`] to get
/// the canonical form with an odd mantissa, or mantissa 0 with exponent 0).
#[derive(Clone, Debug)]
pub enum OValue {
    NaN { negative: bool },
    Inf { negative: bool },
    Finite { negative: bool, mant: BigUint, exp: i64 },
}

impl OValue {
    /// Canonical finite value `(-1)^negative * mant * 2^exp`.
    pub fn finite(negative: bool, mant: BigUint, exp: i64) -> OValue {
        if mant.is_zero() {
            return OValue::Finite { negative, mant, exp: 0 };
        }
        let tz = mant.trailing_zeros().unwrap_or(0);
        OValue::Finite { negative, mant: mant >> tz, exp: exp + tz as i64 }
    }

    pub fn zero(negative: bool) -> OValue {
        OValue::finite(negative, BigUint::zero(), 0)
    }

    /// The exact integer `n`.
    pub fn from_i128(n: i128) -> OValue {
        OValue::finite(n < 0, BigUint::from(n.unsigned_abs()), 0)
    }

    pub fn from_u64(n: u64) -> OValue {
        OValue::finite(false, BigUint::from(n), 0)
    }

    /// `(-1)^negative * num * 2^exp`.
    pub fn dyadic(negative: bool, num: u64, exp: i64) -> OValue {
        OValue::finite(negative, BigUint::from(num), exp)
    }

    pub fn is_nan(&self) -> bool {
        matches!(self, OValue::NaN { .. })
    }

    pub fn is_zero(&self) -> bool {
        matches!(self, OValue::Finite { mant, .. } if mant.is_zero())
    }

    pub fn is_negative(&self) -> bool {
        match self {
            OValue::NaN { negative } | OValue::Inf { negative } => *negative,
            OValue::Finite { negative, .. } => *negative,
        }
    }

    /// The same value with the sign flipped.
    pub fn neg(&self) -> OValue {
        match self {
            OValue::NaN { negative } => OValue::NaN { negative: !negative },
            OValue::Inf { negative } => OValue::Inf { negative: !negative },
            OValue::Finite { negative, mant, exp } => OValue::finite(!negative, mant.clone(), *exp),
        }
    }

    /// A rough f64 for display only (never used in decisions).
    pub fn approx_f64(&self) -> f64 {
        match self {
            OValue::NaN { negative } => {
                if *negative {
                    -f64::NAN
                } else {
                    f64::NAN
                }
            }
            OValue::Inf { negative } => {
                if *negative {
                    f64::NEG_INFINITY
                } else {
                    f64::INFINITY
                }
            }
            OValue::Finite { negative, mant, exp } => {
                let m = mant.to_f64().unwrap_or(f64::INFINITY);
                let e = (*exp).clamp(-2000, 2000) as i32;
                let v = m * 2f64.powi(e / 2) * 2f64.powi(e - e / 2);
                if *negative {
                    -v
                } else {
                    v
                }
            }
        }
    }
}

impl PartialEq for OValue {
    fn eq(&self, other: &OValue) -> bool {
        match (self, other) {
            (OValue::NaN { negative: a }, OValue::NaN { negative: b }) => a == b,
            (OValue::Inf { negative: a }, OValue::Inf { negative: b }) => a == b,
            (OValue::Finite { negative: a, mant: m1, exp: e1 }, OValue::Finite { negative: b, mant: m2, exp: e2 }) => {
                a == b && cmp_dyadic(m1, *e1, m2, *e2) == Ordering::Equal
            }
            _ => false,
        }
    }
}

impl Eq for OValue {}

impl fmt::Display for OValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&exact_decimal(self))
    }
}

// ---------------------------------------------------------------------------------------------
// Exact comparisons

/// Number of significant bits of `m` (0 for zero).
fn nbits(m: &BigUint) -> i64 {
    m.bits() as i64
}

fn nbits64(s: u64) -> i64 {
    64 - s.leading_zeros() as i64
}

/// Compare `m1 * 2^e1` with `m2 * 2^e2` (both non-negative).
fn cmp_dyadic(m1: &BigUint, e1: i64, m2: &BigUint, e2: i64) -> Ordering {
    match (m1.is_zero(), m2.is_zero()) {
        (true, true) => return Ordering::Equal,
        (true, false) => return Ordering::Less,
        (false, true) => return Ordering::Greater,
        _ => {}
    }
    // Position just above the leading one bit decides unless equal.
    let t1 = e1 + nbits(m1);
    let t2 = e2 + nbits(m2);
    if t1 != t2 {
        return t1.cmp(&t2);
    }
    // Same leading position: the exponent difference is bounded by the bit-length difference.
    if e1 >= e2 {
        let shifted = m1 << ((e1 - e2) as usize);
        shifted.cmp(m2)
    } else {
        let shifted = m2 << ((e2 - e1) as usize);
        m1.cmp(&shifted)
    }
}

/// Compare `m * 2^e` with `s * 2^se` where `s` is a machine word. No allocation when `m` fits
/// in 64 bits.
fn cmp_small(m: &BigUint, e: i64, s: u64, se: i64) -> Ordering {
    if m.is_zero() {
        return if s == 0 { Ordering::Equal } else { Ordering::Less };
    }
    if s == 0 {
        return Ordering::Greater;
    }
    let t1 = e + nbits(m);
    let t2 = se + nbits64(s);
    if t1 != t2 {
        return t1.cmp(&t2);
    }
    match m.to_u64() {
        Some(mu) => {
            // Both have their leading bit at the same position, so aligning them needs a
            // shift below 64 and the result fits in 128 bits.
            if e >= se {
                ((mu as u128) << ((e - se) as u32)).cmp(&(s as u128))
            } else {
                (mu as u128).cmp(&((s as u128) << ((se - e) as u32)))
            }
        }
        None => cmp_dyadic(m, e, &BigUint::from(s), se),
    }
}

// ---------------------------------------------------------------------------------------------
// Format descriptions

/// Small float formats: (mantissa bits, bias, largest finite magnitude code, sign bit).
fn small_params(f: OFormat) -> Option<(u32, i64, u64, u64)> {
    match f {
        OFormat::E4M3FN => Some((3, 7, 0x7E, 0x80)),
        OFormat::E4M3FNUZ => Some((3, 8, 0x7F, 0x80)),
        OFormat::E5M2 => Some((2, 15, 0x7B, 0x80)),
        OFormat::E5M2FNUZ => Some((2, 16, 0x7F, 0x80)),
        OFormat::E2M3 => Some((3, 1, 0x1F, 0x20)),
        OFormat::E3M2 => Some((2, 3, 0x1F, 0x20)),
        OFormat::E2M1 => Some((1, 1, 0x7, 0x8)),
        _ => None,
    }
}

/// IEEE-style formats with Inf and NaN: (exponent bits, mantissa bits, bias).
fn ieee_params(f: OFormat) -> Option<(u32, u32, i64)> {
    match f {
        OFormat::F16 => Some((5, 10, 15)),
        OFormat::BF16 => Some((8, 7, 127)),
        OFormat::F32 => Some((8, 23, 127)),
        OFormat::F64 => Some((11, 52, 1023)),
        _ => None,
    }
}

fn is_fnuz(f: OFormat) -> bool {
    matches!(f, OFormat::E4M3FNUZ | OFormat::E5M2FNUZ)
}

/// Bits per code.
pub fn width(f: OFormat) -> u32 {
    match f {
        OFormat::E4M3FN | OFormat::E4M3FNUZ | OFormat::E5M2 | OFormat::E5M2FNUZ | OFormat::E8M0 => 8,
        OFormat::E2M3 | OFormat::E3M2 => 6,
        OFormat::E2M1 => 4,
        OFormat::F16 | OFormat::BF16 => 16,
        OFormat::F32 => 32,
        OFormat::F64 => 64,
        OFormat::Int { bits, .. } => bits,
    }
}

fn low_mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// The exact magnitude of a small-format magnitude code, as (integer significand, exponent).
fn small_mag(mbits: u32, bias: i64, mag_code: u64) -> (u64, i64) {
    let e_field = (mag_code >> mbits) as i64;
    let frac = mag_code & ((1u64 << mbits) - 1);
    if e_field == 0 {
        (frac, 1 - bias - mbits as i64)
    } else {
        (frac | (1u64 << mbits), e_field - bias - mbits as i64)
    }
}

// ---------------------------------------------------------------------------------------------
// Decoding

fn decode_ieee_fields(ebits: u32, mbits: u32, bias: i64, code: u64) -> OValue {
    let negative = (code >> (ebits + mbits)) & 1 == 1;
    let e_field = (code >> mbits) & ((1u64 << ebits) - 1);
    let frac = code & ((1u64 << mbits) - 1);
    if e_field == (1u64 << ebits) - 1 {
        return if frac == 0 { OValue::Inf { negative } } else { OValue::NaN { negative } };
    }
    if e_field == 0 {
        OValue::finite(negative, BigUint::from(frac), 1 - bias - mbits as i64)
    } else {
        OValue::finite(negative, BigUint::from(frac | (1u64 << mbits)), e_field as i64 - bias - mbits as i64)
    }
}

pub fn value_from_f32_bits(b: u32) -> OValue {
    decode_ieee_fields(8, 23, 127, b as u64)
}

pub fn value_from_f64_bits(b: u64) -> OValue {
    decode_ieee_fields(11, 52, 1023, b)
}

pub fn value_from_f16_bits(b: u16) -> OValue {
    decode_ieee_fields(5, 10, 15, b as u64)
}

pub fn value_from_bf16_bits(b: u16) -> OValue {
    decode_ieee_fields(8, 7, 127, b as u64)
}

/// Exact value of a code (high bits above `width(f)` are ignored).
pub fn decode(f: OFormat, code: u64) -> OValue {
    let code = code & low_mask(width(f));
    if let Some((ebits, mbits, bias)) = ieee_params(f) {
        return decode_ieee_fields(ebits, mbits, bias, code);
    }
    match f {
        OFormat::E8M0 => {
            if code == 0xFF {
                OValue::NaN { negative: false }
            } else {
                OValue::dyadic(false, 1, code as i64 - 127)
            }
        }
        OFormat::Int { bits, signed } => {
            if signed && bits > 0 && (code >> (bits - 1)) & 1 == 1 {
                // Negative: value = code - 2^bits.
                let two_pow = BigUint::one() << (bits as usize);
                OValue::finite(true, two_pow - BigUint::from(code), 0)
            } else {
                OValue::finite(false, BigUint::from(code), 0)
            }
        }
        _ => {
            let (mbits, bias, _maxc, sign_bit) = small_params(f).expect("small format");
            let negative = code & sign_bit != 0;
            let mag = code & (sign_bit - 1);
            match f {
                OFormat::E4M3FN if mag == 0x7F => return OValue::NaN { negative },
                OFormat::E5M2 if mag == 0x7C => return OValue::Inf { negative },
                OFormat::E5M2 if mag > 0x7C => return OValue::NaN { negative },
                OFormat::E4M3FNUZ | OFormat::E5M2FNUZ if code == 0x80 => return OValue::NaN { negative: true },
                _ => {}
            }
            let (sig, e) = small_mag(mbits, bias, mag);
            OValue::dyadic(negative, sig, e)
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Tables of representable magnitudes

#[derive(Debug)]
struct Entry {
    sig: u64,
    exp: i64,
    /// Magnitude code; `None` for the first grid point above MAX (rounding there = overflow).
    code: Option<u64>,
    /// Last mantissa bit (E8M0: last code bit) is 1.
    odd: bool,
}

#[derive(Debug)]
struct Table {
    entries: Vec<Entry>,
    /// `mids[i]` = exact midpoint of `entries[i]` and `entries[i + 1]`.
    mids: Vec<(u64, i64)>,
}

fn midpoint(a: &Entry, b: &Entry) -> (u64, i64) {
    let emin = if a.sig == 0 { b.exp } else { a.exp.min(b.exp) };
    let ax = if a.sig == 0 { 0u128 } else { (a.sig as u128) << ((a.exp - emin) as u32) };
    let bx = (b.sig as u128) << ((b.exp - emin) as u32);
    let mut sum = ax + bx;
    let mut e = emin - 1;
    while sum != 0 && sum & 1 == 0 {
        sum >>= 1;
        e += 1;
    }
    (u64::try_from(sum).expect("midpoint fits a word"), e)
}

fn finish_table(entries: Vec<Entry>) -> Table {
    for w in entries.windows(2) {
        assert_eq!(
            cmp_small(&BigUint::from(w[0].sig), w[0].exp, w[1].sig, w[1].exp),
            Ordering::Less,
            "table not strictly increasing"
        );
    }
    let mids = entries.windows(2).map(|w| midpoint(&w[0], &w[1])).collect();
    Table { entries, mids }
}

fn build_small_table(f: OFormat) -> Table {
    let (mbits, bias, maxc, _) = small_params(f).expect("small format");
    let mut entries = Vec::new();
    for c in 0..=maxc {
        let (sig, exp) = small_mag(mbits, bias, c);
        entries.push(Entry { sig, exp, code: Some(c), odd: sig & 1 == 1 });
    }
    // The next point of the same-precision grid above MAX.
    let (msig, mexp) = small_mag(mbits, bias, maxc);
    let (mut bsig, mut bexp) = (msig + 1, mexp);
    if bsig == 1u64 << (mbits + 1) {
        bsig >>= 1;
        bexp += 1;
    }
    entries.push(Entry { sig: bsig, exp: bexp, code: None, odd: bsig & 1 == 1 });
    finish_table(entries)
}

fn build_e8m0_table() -> Table {
    let mut entries = Vec::new();
    for c in 0u64..=254 {
        entries.push(Entry { sig: 1, exp: c as i64 - 127, code: Some(c), odd: c & 1 == 1 });
    }
    // 2^128 would be code 255 (odd).
    entries.push(Entry { sig: 1, exp: 128, code: None, odd: true });
    finish_table(entries)
}

fn table(f: OFormat) -> &'static Table {
    static T_E4M3FN: OnceLock<Table> = OnceLock::new();
    static T_E4M3FNUZ: OnceLock<Table> = OnceLock::new();
    static T_E5M2: OnceLock<Table> = OnceLock::new();
    static T_E5M2FNUZ: OnceLock<Table> = OnceLock::new();
    static T_E2M3: OnceLock<Table> = OnceLock::new();
    static T_E3M2: OnceLock<Table> = OnceLock::new();
    static T_E2M1: OnceLock<Table> = OnceLock::new();
    static T_E8M0: OnceLock<Table> = OnceLock::new();
    let cell = match f {
        OFormat::E4M3FN => &T_E4M3FN,
        OFormat::E4M3FNUZ => &T_E4M3FNUZ,
        OFormat::E5M2 => &T_E5M2,
        OFormat::E5M2FNUZ => &T_E5M2FNUZ,
        OFormat::E2M3 => &T_E2M3,
        OFormat::E3M2 => &T_E3M2,
        OFormat::E2M1 => &T_E2M1,
        OFormat::E8M0 => &T_E8M0,
        _ => panic!("no table for {f:?}"),
    };
    cell.get_or_init(|| if f == OFormat::E8M0 { build_e8m0_table() } else { build_small_table(f) })
}

/// Index of the table entry `m * 2^e` rounds to. Precondition: `m * 2^e >= entries[0]`.
fn table_round(t: &Table, m: &BigUint, e: i64, mode: OMode) -> usize {
    let n = t.entries.len();
    // Number of entries <= x (at least 1 by the precondition).
    let le = t.entries.partition_point(|en| cmp_small(m, e, en.sig, en.exp) != Ordering::Less);
    assert!(le >= 1, "value below the first table entry");
    let lo = le - 1;
    let en = &t.entries[lo];
    if cmp_small(m, e, en.sig, en.exp) == Ordering::Equal || lo == n - 1 {
        // Exact, or beyond the first grid point above MAX (any rounding lands at or above it).
        return lo;
    }
    let hi = lo + 1;
    match mode {
        OMode::TowardZero => lo,
        OMode::Up => hi,
        OMode::NearestEven | OMode::NearestTiesUp => {
            let (ms, me) = t.mids[lo];
            match cmp_small(m, e, ms, me) {
                Ordering::Less => lo,
                Ordering::Greater => hi,
                Ordering::Equal => {
                    if mode == OMode::NearestTiesUp || t.entries[lo].odd {
                        hi
                    } else {
                        lo
                    }
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Encoding

fn small_nan_code(f: OFormat, negative: bool) -> u64 {
    let s = if negative { 0x80 } else { 0 };
    match f {
        OFormat::E4M3FN => 0x7F | s,
        OFormat::E5M2 => 0x7E | s,
        OFormat::E4M3FNUZ | OFormat::E5M2FNUZ => 0x80,
        // float4 technical note: NaN -> +6 whatever its sign.
        OFormat::E2M1 => 0x7,
        // float6: the -0 code with its sign bit flipped by the NaN's sign (onnx reference).
        OFormat::E2M3 | OFormat::E3M2 => {
            if negative {
                0x00
            } else {
                0x20
            }
        }
        _ => unreachable!(),
    }
}

fn small_zero_code(f: OFormat, negative: bool) -> u64 {
    let (_, _, _, sign_bit) = small_params(f).unwrap();
    if is_fnuz(f) || !negative {
        0
    } else {
        sign_bit
    }
}

fn small_overflow_code(f: OFormat, negative: bool, saturate: bool) -> u64 {
    let (_, _, maxc, sign_bit) = small_params(f).unwrap();
    let s = if negative { sign_bit } else { 0 };
    let no_special = matches!(f, OFormat::E2M1 | OFormat::E2M3 | OFormat::E3M2);
    if saturate || no_special {
        return maxc | s;
    }
    match f {
        OFormat::E4M3FN => 0x7F | s,
        OFormat::E5M2 => 0x7C | s,
        OFormat::E4M3FNUZ | OFormat::E5M2FNUZ => 0x80,
        _ => unreachable!(),
    }
}

fn encode_small(f: OFormat, v: &OValue, saturate: bool, mode: OMode) -> u64 {
    let (_, _, _, sign_bit) = small_params(f).unwrap();
    match v {
        OValue::NaN { negative } => small_nan_code(f, *negative),
        OValue::Inf { negative } => small_overflow_code(f, *negative, saturate),
        OValue::Finite { negative, mant, exp } => {
            if mant.is_zero() {
                return small_zero_code(f, *negative);
            }
            let t = table(f);
            let idx = table_round(t, mant, *exp, mode);
            match t.entries[idx].code {
                None => small_overflow_code(f, *negative, saturate),
                Some(0) => small_zero_code(f, *negative),
                Some(c) => c | if *negative { sign_bit } else { 0 },
            }
        }
    }
}

fn e8m0_below_min(m: &BigUint, e: i64) -> bool {
    cmp_small(m, e, 1, -127) == Ordering::Less
}

fn encode_e8m0(v: &OValue, saturate: bool, mode: OMode) -> u64 {
    match v {
        OValue::NaN { .. } => 0xFF,
        OValue::Inf { .. } => {
            if saturate {
                0xFE
            } else {
                0xFF
            }
        }
        // The sign is ignored: |x| is what gets encoded.
        OValue::Finite { mant, exp, .. } => {
            if e8m0_below_min(mant, *exp) {
                return if saturate { 0x00 } else { 0xFF };
            }
            let t = table(OFormat::E8M0);
            match t.entries[table_round(t, mant, *exp, mode)].code {
                Some(c) => c,
                None => {
                    if saturate {
                        0xFE
                    } else {
                        0xFF
                    }
                }
            }
        }
    }
}

/// Round `m * 2^e` (m > 0) to the grid of a binary format with `mbits` fraction bits and
/// minimum normal exponent `emin`, unbounded above. Returns `(sig, q)` with the rounded value
/// `sig * 2^q`; `sig < 2^(mbits+1)`, and `sig >= 2^mbits` unless the result is subnormal/zero.
fn round_grid(m: &BigUint, e: i64, mbits: u32, emin: i64, mode: OMode) -> (BigUint, i64) {
    let top = e + nbits(m) - 1; // floor(log2(x))
    let mut q = top.max(emin) - mbits as i64; // exponent of one unit in the last place
    if e >= q {
        return (m << ((e - q) as usize), q);
    }
    let k = (q - e) as u64; // bits to drop, >= 1
    let (mut sig, rem_vs_half, rem_nonzero) = if k > m.bits() {
        // Everything is dropped; 0 < x < 2^(k-1) * 2^e = half an ulp.
        (BigUint::zero(), Ordering::Less, true)
    } else {
        let sig = m >> k;
        let rem = m - (&sig << (k as usize));
        let half = BigUint::one() << ((k - 1) as usize);
        let c = rem.cmp(&half);
        let nz = !rem.is_zero();
        (sig, c, nz)
    };
    let bump = match mode {
        OMode::TowardZero => false,
        OMode::Up => rem_nonzero,
        OMode::NearestTiesUp => rem_vs_half != Ordering::Less,
        OMode::NearestEven => match rem_vs_half {
            Ordering::Greater => true,
            Ordering::Less => false,
            Ordering::Equal => sig.bit(0),
        },
    };
    if bump {
        sig += 1u32;
    }
    if sig.bits() > (mbits + 1) as u64 {
        sig >>= 1;
        q += 1;
    }
    (sig, q)
}

fn encode_ieee(f: OFormat, v: &OValue, saturate: bool, mode: OMode) -> u64 {
    let (ebits, mbits, bias) = ieee_params(f).unwrap();
    let sign_bit = 1u64 << (ebits + mbits);
    let inf = ((1u64 << ebits) - 1) << mbits;
    let max_code = inf - 1;
    let s = |neg: bool| if neg { sign_bit } else { 0 };
    match v {
        OValue::NaN { negative } => s(*negative) | inf | (1u64 << (mbits - 1)),
        OValue::Inf { negative } => s(*negative) | if saturate { max_code } else { inf },
        OValue::Finite { negative, mant, exp } => {
            if mant.is_zero() {
                return s(*negative);
            }
            let (sig, q) = round_grid(mant, *exp, mbits, 1 - bias, mode);
            if sig.is_zero() {
                return s(*negative);
            }
            let sig = sig.to_u64().unwrap();
            if sig >> mbits == 0 {
                // Subnormal: q is the subnormal quantum.
                return s(*negative) | sig;
            }
            let e_field = q + mbits as i64 + bias;
            if e_field >= (1i64 << ebits) - 1 {
                return s(*negative) | if saturate { max_code } else { inf };
            }
            s(*negative) | ((e_field as u64) << mbits) | (sig & ((1u64 << mbits) - 1))
        }
    }
}

/// Integer part (toward zero) of `m * 2^e`, if below 2^64.
fn trunc_u64(m: &BigUint, e: i64) -> Option<u64> {
    if m.is_zero() {
        return Some(0);
    }
    if e >= 0 {
        if e + nbits(m) > 64 {
            return None;
        }
        (m << (e as usize)).to_u64()
    } else {
        let k = (-e) as u64;
        if k >= m.bits() {
            Some(0)
        } else {
            (m >> k).to_u64()
        }
    }
}

/// `m * 2^e` rounded to the nearest integer, ties to even (caller guarantees it is < 2^63).
fn round_half_even_u64(m: &BigUint, e: i64) -> u64 {
    let t = trunc_u64(m, e).expect("small");
    if e >= 0 {
        return t;
    }
    // Compare the fraction with 1/2: 2 * x - 2 * t vs 1, i.e. x vs t + 1/2.
    let half_point = 2 * t + 1; // (t + 1/2) = half_point * 2^-1
    match cmp_small(m, e, half_point, -1) {
        Ordering::Less => t,
        Ordering::Greater => t + 1,
        Ordering::Equal => {
            if t & 1 == 0 {
                t
            } else {
                t + 1
            }
        }
    }
}

fn encode_int(bits: u32, v: &OValue) -> u64 {
    let mask = low_mask(bits);
    // Range of the intermediate conversion: int32 for targets up to 32 bits, int64 beyond.
    let lim_exp: i64 = if bits <= 32 { 31 } else { 63 };
    let sentinel = (1u64 << lim_exp) & mask;
    match v {
        OValue::NaN { .. } | OValue::Inf { .. } => {
            if bits < 8 {
                0
            } else {
                sentinel
            }
        }
        OValue::Finite { negative, mant, exp } => {
            if bits < 8 {
                // Round to nearest, ties to even; |x| >= 2^31 -> 0.
                if cmp_small(mant, *exp, 1, 31) != Ordering::Less {
                    return 0;
                }
                let n = round_half_even_u64(mant, *exp);
                let signed = if *negative { n.wrapping_neg() } else { n };
                signed & mask
            } else {
                // Truncate toward zero; the result must lie in [-2^L, 2^L).
                let in_range = if *negative {
                    // trunc(|x|) <= 2^L  <=>  |x| < 2^L + 1
                    let bound = BigUint::from(1u32) + (BigUint::one() << (lim_exp as usize));
                    cmp_dyadic(mant, *exp, &bound, 0) == Ordering::Less
                } else {
                    cmp_small(mant, *exp, 1, lim_exp) == Ordering::Less
                };
                if !in_range {
                    return sentinel;
                }
                let t = trunc_u64(mant, *exp).expect("in range");
                let signed = if *negative { t.wrapping_neg() } else { t };
                signed & mask
            }
        }
    }
}

/// The `spec`-profile code of `v` in format `f`.
pub fn encode(f: OFormat, v: &OValue, saturate: bool, mode: OMode) -> u64 {
    match f {
        OFormat::Int { bits, .. } => encode_int(bits, v),
        OFormat::E8M0 => encode_e8m0(v, saturate, mode),
        OFormat::F16 | OFormat::BF16 | OFormat::F32 | OFormat::F64 => encode_ieee(f, v, saturate, mode),
        _ => encode_small(f, v, saturate, mode),
    }
}

/// Like [`encode`], but for a value that came from an integer source type: an integer target
/// keeps the low `bits` bits of the exact integer (two's complement wrap, no int32 sentinel and
/// no 2^31 cut-off: the ONNX text's "keep the low bits"). Other targets are the same as [`encode`].
pub fn encode_from_int_source(f: OFormat, v: &OValue, saturate: bool, mode: OMode) -> u64 {
    if let (OFormat::Int { bits, .. }, OValue::Finite { negative, mant, exp }) = (f, v) {
        if *exp >= 0 {
            let mask = low_mask(bits);
            let n = mant << (*exp as usize);
            let low = (n & BigUint::from(mask)).to_u64().unwrap();
            return if *negative { low.wrapping_neg() & mask } else { low };
        }
    }
    encode(f, v, saturate, mode)
}

// ---------------------------------------------------------------------------------------------
// A second, table-free rounding path for the small formats (self-check only)

/// Same contract as [`encode`] for the small float formats and E8M0, computed without the
/// magnitude tables (exact shifting for float formats, floor(log2) for E8M0).
pub fn encode_generic(f: OFormat, v: &OValue, saturate: bool, mode: OMode) -> u64 {
    if f == OFormat::E8M0 {
        return encode_e8m0_generic(v, saturate, mode);
    }
    let (mbits, bias, maxc, sign_bit) = match small_params(f) {
        Some(p) => p,
        None => return encode(f, v, saturate, mode),
    };
    let (negative, mant, exp) = match v {
        OValue::NaN { negative } => return small_nan_code(f, *negative),
        OValue::Inf { negative } => return small_overflow_code(f, *negative, saturate),
        OValue::Finite { negative, mant, exp } => (*negative, mant, *exp),
    };
    if mant.is_zero() {
        return small_zero_code(f, negative);
    }
    let (sig, q) = round_grid(mant, exp, mbits, 1 - bias, mode);
    if sig.is_zero() {
        return small_zero_code(f, negative);
    }
    let (maxs, maxe) = small_mag(mbits, bias, maxc);
    if cmp_small(&sig, q, maxs, maxe) == Ordering::Greater {
        return small_overflow_code(f, negative, saturate);
    }
    let sig = sig.to_u64().unwrap();
    let mag = if sig >> mbits == 0 {
        sig
    } else {
        let e_field = (q + mbits as i64 + bias) as u64;
        (e_field << mbits) | (sig & ((1u64 << mbits) - 1))
    };
    mag | if negative { sign_bit } else { 0 }
}

fn encode_e8m0_generic(v: &OValue, saturate: bool, mode: OMode) -> u64 {
    let (mant, exp) = match v {
        OValue::NaN { .. } => return 0xFF,
        OValue::Inf { .. } => return if saturate { 0xFE } else { 0xFF },
        OValue::Finite { mant, exp, .. } => (mant, *exp),
    };
    if e8m0_below_min(mant, exp) {
        return if saturate { 0x00 } else { 0xFF };
    }
    let t = exp + nbits(mant) - 1; // 2^t <= |x| < 2^(t+1)
    let exact = mant.count_ones() == 1;
    let k = if exact {
        t
    } else {
        // Tie point between 2^t and 2^(t+1) is 3 * 2^(t-1).
        let vs_tie = cmp_small(mant, exp, 3, t - 1);
        let up = match mode {
            OMode::TowardZero => false,
            OMode::Up => true,
            OMode::NearestTiesUp => vs_tie != Ordering::Less,
            OMode::NearestEven => match vs_tie {
                Ordering::Less => false,
                Ordering::Greater => true,
                // Choose the even code: code(2^t) = t + 127.
                Ordering::Equal => (t + 127) & 1 == 1,
            },
        };
        if up {
            t + 1
        } else {
            t
        }
    };
    if k > 127 {
        return if saturate { 0xFE } else { 0xFF };
    }
    (k + 127) as u64
}

// ---------------------------------------------------------------------------------------------
// Decimal rendering

/// Exact decimal expansion: "0.001953125", "-448", "0", "-0"; "nan", "-nan", "inf", "-inf".
pub fn exact_decimal(v: &OValue) -> String {
    match v {
        OValue::NaN { negative } => (if *negative { "-nan" } else { "nan" }).to_string(),
        OValue::Inf { negative } => (if *negative { "-inf" } else { "inf" }).to_string(),
        OValue::Finite { negative, mant, exp } => {
            let sign = if *negative { "-" } else { "" };
            if mant.is_zero() {
                return format!("{sign}0");
            }
            if *exp >= 0 {
                return format!("{sign}{}", mant << (*exp as usize));
            }
            // m / 2^k = m * 5^k / 10^k
            let k = (-*exp) as usize;
            let scaled = mant * num_traits::pow(BigUint::from(5u32), k);
            let mut digits = scaled.to_string();
            if digits.len() <= k {
                digits = "0".repeat(k + 1 - digits.len()) + &digits;
            }
            let (int_part, frac_part) = digits.split_at(digits.len() - k);
            let frac_part = frac_part.trim_end_matches('0');
            if frac_part.is_empty() {
                format!("{sign}{int_part}")
            } else {
                format!("{sign}{int_part}.{frac_part}")
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Partition of the positive finite float32 patterns

/// A key that is monotone (non-decreasing) in the value over positive finite inputs and such
/// that equal keys imply equal codes.
fn monotone_key(f: OFormat, b: u32, saturate: bool, mode: OMode) -> i64 {
    let v = value_from_f32_bits(b);
    let (mant, exp) = match &v {
        OValue::Finite { mant, exp, .. } => (mant, *exp),
        _ => unreachable!("finite input"),
    };
    match f {
        OFormat::E8M0 => {
            if e8m0_below_min(mant, exp) {
                -1
            } else {
                table_round(table(f), mant, exp, mode) as i64
            }
        }
        OFormat::F16 | OFormat::BF16 => encode_ieee(f, &v, saturate, mode) as i64,
        _ => {
            if mant.is_zero() {
                0
            } else {
                table_round(table(f), mant, exp, mode) as i64
            }
        }
    }
}

/// For the positive finite float32 patterns `0x00000000..=0x7F7FFFFF`: the sorted list of
/// (first pattern of a maximal run, code every pattern of that run encodes to). Consecutive
/// entries have different codes. Supported for the float8/float6/float4 formats, E8M0, F16 and
/// BF16 (F32/F64 would have ~2^31 runs, integer targets ~2^25: not supported).
///
/// The runs are found by galloping + bisection on a key that is monotone in the magnitude (the
/// index of the rounded table entry; for F16/BF16 the positive code itself), not on the code:
/// some codes have non-contiguous preimages (E8M0 0xFF without saturation covers both the
/// values below 2^-127 and the overflow).
pub fn f32_partition(f: OFormat, saturate: bool, mode: OMode) -> Vec<(u32, u64)> {
    partition_half(f, false, saturate, mode)
}

/// The same for the negative finite float32 patterns `0x80000000..=0xFF7FFFFF` (first patterns
/// include the sign bit). Use this rather than mirroring the positive partition: the negative
/// codes are not always `positive | sign` (FNUZ zero stays 0x00, E8M0 ignores the sign).
pub fn f32_partition_negative(f: OFormat, saturate: bool, mode: OMode) -> Vec<(u32, u64)> {
    partition_half(f, true, saturate, mode)
}

fn partition_half(f: OFormat, negative: bool, saturate: bool, mode: OMode) -> Vec<(u32, u64)> {
    assert!(!matches!(f, OFormat::F32 | OFormat::F64 | OFormat::Int { .. }), "f32_partition does not support {f:?}");
    const END: u64 = 0x7F7F_FFFF;
    let sign: u32 = if negative { 0x8000_0000 } else { 0 };
    // The key only depends on the magnitude bits.
    let key = |b: u64| monotone_key(f, b as u32, saturate, mode);
    let mut out: Vec<(u32, u64)> = Vec::new();
    let mut a: u64 = 0;
    loop {
        let k = key(a);
        // Gallop to bracket the end of the run of key k, then bisect.
        let mut lo = a; // key(lo) == k
        let mut hi; // END + 1 or key(hi) != k
        let mut step = 1u64;
        loop {
            let p = lo + step;
            if p > END {
                hi = END + 1;
                break;
            }
            if key(p) == k {
                lo = p;
                step *= 2;
            } else {
                hi = p;
                break;
            }
        }
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if key(mid) == k {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        let first = a as u32 | sign;
        let code = encode(f, &value_from_f32_bits(first), saturate, mode);
        if out.last().map(|&(_, c)| c) != Some(code) {
            out.push((first, code));
        }
        if lo == END {
            break;
        }
        a = lo + 1;
    }
    out
}

/// Profile field `float8_specials_to_integer` for the float8 formats' special values, as the project decided from the
/// observed onnx reference (the ONNX text leaves them undefined): NaN gives 0; +Inf / -Inf give
/// the integer target's largest / smallest value, except that a target narrower than 8 bits gets
/// the low bits of int32's largest / smallest value. `None` for finite values.
pub fn encode_int_from_float8_special(v: &OValue, bits: u32, signed: bool) -> Option<u64> {
    let negative = match v {
        OValue::NaN { .. } => return Some(0),
        OValue::Inf { negative } => *negative,
        OValue::Finite { .. } => return None,
    };
    let (range_bits, range_signed) = if bits < 8 { (32u32, true) } else { (bits, signed) };
    let extreme: i128 = match (negative, range_signed) {
        (false, true) => (1i128 << (range_bits - 1)) - 1,
        (false, false) => (1i128 << range_bits) - 1,
        (true, true) => -(1i128 << (range_bits - 1)),
        (true, false) => 0,
    };
    let mask: u128 = if bits >= 128 { u128::MAX } else { (1u128 << bits) - 1 };
    Some(((extreme as u128) & mask) as u64)
}

// ---------------------------------------------------------------------------------------------
// IEEE-style conversions with every rounding mode and the exception flags (hardware
// verification). Written from IEEE 754 and SoftFloat's
// documented conventions (TestFloat flag layout; underflow only when tiny and inexact; x86
// "integer indefinite" for invalid integer results), with exact big-integer arithmetic.

pub const FLAG_INVALID: u8 = 0x10;
pub const FLAG_OVERFLOW: u8 = 0x04;
pub const FLAG_UNDERFLOW: u8 = 0x02;
pub const FLAG_INEXACT: u8 = 0x01;

/// What the top codes of a float format mean.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OSpecial {
    /// Exponent all ones: infinity (fraction 0) or NaN (quiet bit = top fraction bit).
    Ieee,
    /// No infinity; the all-ones magnitude is NaN.
    Fn,
    /// No infinity, no -0; the code of -0 is the NaN.
    Fnuz,
    /// Every code is finite.
    None,
}

/// A float format with subnormals (so with zero).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OFloat {
    pub ebits: u32,
    pub mbits: u32,
    pub bias: i64,
    pub special: OSpecial,
    pub flush: bool,
    pub signed: bool,
    /// NaN payloads travel (top fraction bits, quieted) into and out of this format.
    pub payload: bool,
}

impl OFloat {
    pub const fn ieee(ebits: u32, mbits: u32) -> OFloat {
        OFloat {
            ebits,
            mbits,
            bias: (1 << (ebits - 1)) - 1,
            special: OSpecial::Ieee,
            flush: false,
            signed: true,
            payload: true,
        }
    }
    pub fn width(&self) -> u32 {
        self.ebits + self.mbits + u32::from(self.signed)
    }
    fn sign_bit(&self) -> u64 {
        if self.signed {
            1 << (self.ebits + self.mbits)
        } else {
            0
        }
    }
    fn all_ones_magnitude(&self) -> u64 {
        (1u64 << (self.ebits + self.mbits)) - 1
    }
    fn max_magnitude_code(&self) -> u64 {
        match self.special {
            OSpecial::Ieee => self.all_ones_magnitude() - (1u64 << self.mbits),
            OSpecial::Fn => self.all_ones_magnitude() - 1,
            OSpecial::Fnuz | OSpecial::None => self.all_ones_magnitude(),
        }
    }
    /// Exponent of the smallest normal binade.
    fn emin(&self) -> i64 {
        1 - self.bias
    }
}

/// The ONNX float formats in this model (E8M0, which has no zero, is outside it). Payloads:
/// only the wide IEEE formats carry them; ONNX float8 E5M2 reads every NaN as plain NaN.
pub fn ofloat_of(f: OFormat) -> Option<OFloat> {
    let small = |ebits, mbits, bias, special| OFloat {
        ebits,
        mbits,
        bias,
        special,
        flush: false,
        signed: true,
        payload: false,
    };
    Some(match f {
        OFormat::F16 => OFloat::ieee(5, 10),
        OFormat::BF16 => OFloat { bias: 127, ..OFloat::ieee(8, 7) },
        OFormat::F32 => OFloat::ieee(8, 23),
        OFormat::F64 => OFloat::ieee(11, 52),
        OFormat::E4M3FN => small(4, 3, 7, OSpecial::Fn),
        OFormat::E4M3FNUZ => small(4, 3, 8, OSpecial::Fnuz),
        OFormat::E5M2 => small(5, 2, 15, OSpecial::Ieee),
        OFormat::E5M2FNUZ => small(5, 2, 16, OSpecial::Fnuz),
        OFormat::E2M3 => small(2, 3, 1, OSpecial::None),
        OFormat::E3M2 => small(3, 2, 3, OSpecial::None),
        OFormat::E2M1 => small(2, 1, 1, OSpecial::None),
        _ => return None,
    })
}

/// A verification target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OTarget {
    Float(OFloat),
    Int { bits: u32, signed: bool },
}

/// Rounding of the magnitude-and-sign value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ORound {
    NearestEven,
    TowardZero,
    AwayFromZero,
    NearestTiesAway,
    /// Toward negative infinity.
    Floor,
    /// Toward positive infinity.
    Ceiling,
    /// Truncate; set the last bit when anything was dropped.
    Odd,
    /// Add `random` (already reduced to `bits` bits) to the first `bits` dropped bits; carry up.
    Stochastic {
        bits: u32,
        random: u64,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OTiny {
    Before,
    After,
    Delivered,
}

/// A decoded source: the exact value, and for NaNs whether it signals and its fraction bits
/// (left-aligned in a `u128`, for payload transfer).
pub struct OSource {
    pub value: OValue,
    pub signalling: bool,
    pub nan_fraction: Option<u128>,
}

pub fn odecode_float(f: &OFloat, code: u64) -> OSource {
    let code = code & low_mask(f.width());
    let negative = code & f.sign_bit() != 0;
    let magnitude = code & f.all_ones_magnitude();
    let e_field = magnitude >> f.mbits;
    let fraction = magnitude & ((1u64 << f.mbits) - 1);
    let plain = |value| OSource { value, signalling: false, nan_fraction: None };
    let e_max = (1u64 << f.ebits) - 1;
    match f.special {
        OSpecial::Ieee if e_field == e_max && fraction == 0 => return plain(OValue::Inf { negative }),
        OSpecial::Ieee if e_field == e_max => {
            let quiet = fraction >> (f.mbits - 1) & 1 == 1;
            return OSource {
                value: OValue::NaN { negative },
                signalling: !quiet,
                nan_fraction: f.payload.then(|| u128::from(fraction) << (128 - f.mbits)),
            };
        }
        OSpecial::Fn if magnitude == f.all_ones_magnitude() => return plain(OValue::NaN { negative }),
        OSpecial::Fnuz if code == f.sign_bit() => return plain(OValue::NaN { negative: true }),
        _ => {}
    }
    if e_field == 0 {
        if f.flush {
            return plain(OValue::zero(negative));
        }
        return plain(OValue::finite(negative, BigUint::from(fraction), f.emin() - f.mbits as i64));
    }
    let significand = fraction | (1u64 << f.mbits);
    plain(OValue::finite(negative, BigUint::from(significand), e_field as i64 - f.bias - f.mbits as i64))
}

pub fn odecode_int(bits: u32, signed: bool, code: u64) -> OSource {
    OSource { value: decode(OFormat::Int { bits, signed }, code), signalling: false, nan_fraction: None }
}

/// `mant * 2^exp` divided by `2^q`: the truncated quotient and what the dropped part holds.
struct Cut {
    quotient: BigUint,
    /// Dropped part versus half a unit.
    vs_half: Ordering,
    inexact: bool,
    /// The first `bits` dropped bits (stochastic rounding).
    first_dropped: u64,
}

fn cut(mant: &BigUint, exp: i64, q: i64, sr_bits: u32) -> Cut {
    if exp >= q {
        return Cut {
            quotient: mant << ((exp - q) as usize),
            vs_half: Ordering::Less,
            inexact: false,
            first_dropped: 0,
        };
    }
    let s = (q - exp) as usize;
    let quotient = mant >> s;
    let dropped = mant - (&quotient << s);
    let half = BigUint::one() << (s - 1);
    let first = ((&dropped << sr_bits as usize) >> s).to_u64().expect("fewer than 64 bits");
    Cut { quotient, vs_half: dropped.cmp(&half), inexact: !dropped.is_zero(), first_dropped: first }
}

fn goes_up(mode: ORound, c: &Cut, negative: bool) -> bool {
    let odd = c.quotient.bit(0);
    match mode {
        ORound::NearestEven => c.vs_half == Ordering::Greater || (c.vs_half == Ordering::Equal && odd),
        ORound::NearestTiesAway => c.vs_half != Ordering::Less,
        ORound::TowardZero => false,
        ORound::AwayFromZero => c.inexact,
        ORound::Floor => negative && c.inexact,
        ORound::Ceiling => !negative && c.inexact,
        ORound::Odd => c.inexact && !odd,
        ORound::Stochastic { bits, random } => c.first_dropped + random >= 1u64 << bits,
    }
}

fn sr_bits(mode: ORound) -> u32 {
    match mode {
        ORound::Stochastic { bits, .. } => bits,
        _ => 0,
    }
}

/// `floor(log2(mant * 2^exp))` for a nonzero value.
fn binade(mant: &BigUint, exp: i64) -> i64 {
    exp + mant.bits() as i64 - 1
}

/// Rounds a positive `mant * 2^exp` with `mbits` fraction bits at its own binade, clamped below
/// at `floor_binade` (subnormal grid); returns `n * 2^q` as (n, q) with `n < 2^(mbits+1)` and the
/// cut's inexactness.
fn round_on_grid(
    mant: &BigUint,
    exp: i64,
    mbits: u32,
    floor_binade: Option<i64>,
    mode: ORound,
    negative: bool,
) -> (BigUint, i64, bool) {
    let mut k = binade(mant, exp);
    if let Some(f) = floor_binade {
        k = k.max(f);
    }
    let mut q = k - mbits as i64;
    let c = cut(mant, exp, q, sr_bits(mode));
    let mut n = c.quotient.clone() + u32::from(goes_up(mode, &c, negative));
    if n.bits() > u64::from(mbits) + 1 {
        n >>= 1usize;
        q += 1;
    }
    (n, q, c.inexact)
}

fn zero_code(f: &OFloat, negative: bool) -> u64 {
    if negative && f.signed && f.special != OSpecial::Fnuz {
        f.sign_bit()
    } else {
        0
    }
}

fn nan_code(f: &OFloat, negative: bool, fraction: Option<u128>) -> Option<u64> {
    let sign = if negative { f.sign_bit() } else { 0 };
    match f.special {
        OSpecial::Ieee => {
            let quiet = 1u64 << (f.mbits - 1);
            let kept = match fraction {
                Some(fr) if f.payload => (fr >> (128 - f.mbits)) as u64,
                _ => 0,
            };
            Some(sign | (((1u64 << f.ebits) - 1) << f.mbits) | quiet | kept)
        }
        OSpecial::Fn => Some(sign | f.all_ones_magnitude()),
        OSpecial::Fnuz => Some(f.sign_bit()),
        OSpecial::None => None,
    }
}

/// The value a non-saturating overflow (or a NaN/infinity that must become something) takes.
fn too_big_code(f: &OFloat, negative: bool) -> u64 {
    let sign = if negative { f.sign_bit() } else { 0 };
    match f.special {
        OSpecial::Ieee => sign | (((1u64 << f.ebits) - 1) << f.mbits),
        OSpecial::Fn | OSpecial::Fnuz => nan_code(f, negative, None).expect("has NaN"),
        OSpecial::None => sign | f.max_magnitude_code(),
    }
}

/// Negative value (nonzero once rounded) into an unsigned format.
fn negative_unsigned_code(f: &OFloat, saturate: bool) -> u64 {
    if saturate {
        0
    } else {
        nan_code(f, false, None).unwrap_or(0)
    }
}

/// The code of a positive magnitude `n * 2^q` already on the format's grid and not above MAX.
fn grid_code(f: &OFloat, n: &BigUint, q: i64) -> u64 {
    let k = binade(n, q);
    if k < f.emin() {
        // Subnormal: units of 2^(emin - mbits).
        let units = n << ((q - (f.emin() - f.mbits as i64)) as usize);
        return units.to_u64().expect("subnormal fits");
    }
    let e_field = (k + f.bias) as u64;
    let significand = (n << 64usize) >> ((k - q + 64 - f.mbits as i64) as usize);
    let fraction = significand.to_u64().expect("fits") & ((1u64 << f.mbits) - 1);
    (e_field << f.mbits) | fraction
}

fn max_value(f: &OFloat) -> (BigUint, i64) {
    let c = f.max_magnitude_code();
    let e_field = (c >> f.mbits) as i64;
    let fraction = c & ((1u64 << f.mbits) - 1);
    if e_field == 0 {
        (BigUint::from(fraction), f.emin() - f.mbits as i64)
    } else {
        (BigUint::from(fraction | (1u64 << f.mbits)), e_field - f.bias - f.mbits as i64)
    }
}

/// One conversion: the code and the flags (TestFloat's layout).
pub fn oconvert(src: &OSource, to: &OTarget, mode: ORound, tiny_rule: OTiny, saturate: bool) -> (u64, u8) {
    let signalling = if src.signalling { FLAG_INVALID } else { 0 };
    let (code, flags) = match to {
        OTarget::Float(f) => oconvert_float(src, f, mode, tiny_rule, saturate),
        OTarget::Int { bits, signed } => oconvert_int(&src.value, *bits, *signed, mode, saturate),
    };
    (code, flags | signalling)
}

fn oconvert_float(src: &OSource, f: &OFloat, mode: ORound, tiny_rule: OTiny, saturate: bool) -> (u64, u8) {
    let max_code = f.max_magnitude_code();
    match &src.value {
        OValue::NaN { negative } => match nan_code(f, *negative && f.signed, src.nan_fraction) {
            Some(c) => (c, 0),
            None => (max_code, FLAG_INVALID),
        },
        OValue::Inf { negative } => {
            if *negative && !f.signed {
                return (negative_unsigned_code(f, saturate), FLAG_INVALID);
            }
            let sign = if *negative { f.sign_bit() } else { 0 };
            if saturate {
                (sign | max_code, FLAG_INVALID)
            } else if f.special == OSpecial::Ieee {
                (too_big_code(f, *negative), 0)
            } else {
                (too_big_code(f, *negative), FLAG_INVALID)
            }
        }
        OValue::Finite { negative, mant, exp } => {
            let negative = *negative;
            let signed_negative = negative && f.signed;
            let sign = if signed_negative { f.sign_bit() } else { 0 };
            if mant.is_zero() {
                return (zero_code(f, signed_negative), 0);
            }
            let (n, q, inexact) = round_on_grid(mant, *exp, f.mbits, Some(f.emin()), mode, negative);
            let nx = if inexact { FLAG_INEXACT } else { 0 };
            let min_normal_binade = f.emin();
            let tiny = match tiny_rule {
                OTiny::Before => binade(mant, *exp) < min_normal_binade,
                OTiny::After => {
                    let (nu, qu, _) = round_on_grid(mant, *exp, f.mbits, None, mode, negative);
                    binade(&nu, qu) < min_normal_binade
                }
                OTiny::Delivered => n.is_zero() || binade(&n, q) < min_normal_binade,
            };
            let uf = if tiny && inexact { FLAG_UNDERFLOW } else { 0 };
            if n.is_zero() {
                return (zero_code(f, signed_negative), nx | uf);
            }
            if negative && !f.signed {
                return (negative_unsigned_code(f, saturate), FLAG_INVALID);
            }
            let (max_n, max_q) = max_value(f);
            if cmp_dyadic(&n, q, &max_n, max_q) == Ordering::Greater {
                let keeps_max = match mode {
                    ORound::TowardZero | ORound::Odd => true,
                    ORound::Floor => !negative,
                    ORound::Ceiling => negative,
                    _ => false,
                };
                let code = if saturate || keeps_max { sign | max_code } else { too_big_code(f, signed_negative) };
                return (code, FLAG_OVERFLOW | FLAG_INEXACT);
            }
            if binade(&n, q) < min_normal_binade && f.flush {
                return (zero_code(f, signed_negative), FLAG_UNDERFLOW | FLAG_INEXACT);
            }
            (sign | grid_code(f, &n, q), nx | uf)
        }
    }
}

fn oconvert_int(v: &OValue, bits: u32, signed: bool, mode: ORound, saturate: bool) -> (u64, u8) {
    let mask = low_mask(bits);
    let (low, high): (i128, i128) =
        if signed { (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1) } else { (0, (1i128 << bits) - 1) };
    let indefinite = if signed { 1u64 << (bits - 1) } else { mask };
    let invalid = |bound: i128| ((if saturate { bound as u64 & mask } else { indefinite }), FLAG_INVALID);
    match v {
        OValue::NaN { .. } => invalid(0),
        OValue::Inf { negative } => invalid(if *negative { low } else { high }),
        OValue::Finite { negative, mant, exp } => {
            if mant.is_zero() {
                return (0, 0);
            }
            let c = cut(mant, *exp, 0, sr_bits(mode));
            let n = c.quotient.clone() + u32::from(goes_up(mode, &c, *negative));
            let magnitude = match n.to_u128() {
                Some(m) if m <= 1u128 << 100 => m as i128,
                _ => 1i128 << 100,
            };
            let i = if *negative { -magnitude } else { magnitude };
            if i < low {
                invalid(low)
            } else if i > high {
                invalid(high)
            } else {
                (i as u64 & mask, if c.inexact { FLAG_INEXACT } else { 0 })
            }
        }
    }
}
