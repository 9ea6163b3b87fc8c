//! The exhaustive tables in `tables/`: every code of every format of 8 bits or fewer, every cast
//! between them, and SHA-256 digests of every 16-bit-source cast. `lowbit tables --out DIR`
//! writes them; `lowbit tables --check DIR` and the test suite regenerate them and compare bytes.
//!
//! Everything here is computed by the element-level `Cast` ([`crate::convert`]) under the `spec`
//! profile; the tests check that path against the independent oracle.

use crate::convert::{convert_code, CastOptions, RoundMode};
use crate::dtype::{DType, Kind};
use crate::error::{quoted, Error, Result};
use crate::onnx::files::{open_regular, read_bounded};
use crate::staging::Staging;
use crate::value::Value;
use core::fmt::Write as _;
use core::num::FpCategory;
use num_bigint::BigUint;
use rayon::prelude::*;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// Relative path -> file contents, for every file `tables/` holds.
pub type TableSet = BTreeMap<PathBuf, Vec<u8>>;

const README: &str = include_str!("tables_readme.md");

/// Every code of a dtype of 8 bits or fewer, in increasing order.
fn codes(dtype: DType) -> impl Iterator<Item = u64> {
    0..=dtype.code_mask()
}

fn hex(code: u64, dtype_bits: u32) -> String {
    format!("0x{:0width$x}", code, width = dtype_bits.div_ceil(4) as usize)
}

/// The exact decimal expansion of a dyadic value: `sig * 2^exp`, signed.
#[must_use]
pub fn exact_decimal(negative: bool, significand: u64, exponent: i32) -> String {
    let sign = if negative { "-" } else { "" };
    if significand == 0 {
        return format!("{sign}0");
    }
    if exponent >= 0 {
        return format!("{sign}{}", BigUint::from(significand) << exponent.unsigned_abs());
    }
    // sig * 2^-k = sig * 5^k / 10^k: the digits of sig * 5^k with the point k places from the right.
    let k = exponent.unsigned_abs() as usize;
    let digits = (BigUint::from(significand) * BigUint::from(5u32).pow(k as u32)).to_string();
    let padded = if digits.len() <= k { format!("{}{digits}", "0".repeat(k + 1 - digits.len())) } else { digits };
    let (int_part, frac_part) = padded.split_at(padded.len() - k);
    let frac_part = frac_part.trim_end_matches('0');
    if frac_part.is_empty() {
        format!("{sign}{int_part}")
    } else {
        format!("{sign}{int_part}.{frac_part}")
    }
}

/// The exact decimal of a decoded value: `nan`, `-nan`, `inf`, `-inf`, `-0`, `0.001953125`.
#[must_use]
pub fn value_to_exact_decimal(value: &Value) -> String {
    match *value {
        Value::Nan { negative, .. } => if negative { "-nan" } else { "nan" }.to_string(),
        Value::Infinite { negative } => if negative { "-inf" } else { "inf" }.to_string(),
        Value::Finite(e) => {
            debug_assert!(!e.sticky);
            exact_decimal(e.negative, e.significand, e.exponent)
        }
    }
}

fn class_name(dtype: DType, code: u64) -> &'static str {
    match dtype.kind() {
        Kind::Float(f) => match f.classify(code) {
            FpCategory::Nan => "nan",
            FpCategory::Infinite => "infinite",
            FpCategory::Zero => "zero",
            FpCategory::Subnormal => "subnormal",
            FpCategory::Normal => "normal",
        },
        _ => "integer",
    }
}

fn value_column(dtype: DType, code: u64) -> String {
    match dtype.kind() {
        Kind::Float(f) => value_to_exact_decimal(&f.decode(code)),
        Kind::Integer { bits, signed } => {
            let v = if signed && code >> (bits - 1) & 1 == 1 { code as i64 - (1i64 << bits) } else { code as i64 };
            v.to_string()
        }
        _ => unreachable!("tables cover numeric formats only"),
    }
}

fn cast(from: DType, to: DType, code: u64, opts: &CastOptions) -> u64 {
    convert_code(from, to, code, opts).expect("every narrow numeric dtype converts to every other")
}

/// `tables/<dtype>.csv`: one row per code.
fn code_table(dtype: DType) -> String {
    let bits = dtype.bits().expect("narrow dtypes have a width");
    let spec = CastOptions::default();
    let mut out = String::from("code,class,value,float32,float16,bfloat16\n");
    for code in codes(dtype) {
        let _ = writeln!(
            out,
            "{},{},{},{},{},{}",
            hex(code, bits),
            class_name(dtype, code),
            value_column(dtype, code),
            hex(cast(dtype, DType::Float, code, &spec), 32),
            hex(cast(dtype, DType::Float16, code, &spec), 16),
            hex(cast(dtype, DType::Bfloat16, code, &spec), 16),
        );
    }
    out
}

/// The option sets a cast table or digest covers for a target: saturate 1 and 0, and for E8M0
/// each `round_mode` as well.
fn option_sets(to: DType) -> Vec<(String, CastOptions)> {
    let modes: &[RoundMode] =
        if to == DType::Float8E8M0 { &[RoundMode::Up, RoundMode::Down, RoundMode::Nearest] } else { &[RoundMode::Up] };
    let mut sets = Vec::new();
    for &mode in modes {
        for saturate in [true, false] {
            let name = match (to == DType::Float8E8M0, mode) {
                (false, _) => format!("sat{}", u8::from(saturate)),
                (true, RoundMode::Up) => format!("up_sat{}", u8::from(saturate)),
                (true, RoundMode::Down) => format!("down_sat{}", u8::from(saturate)),
                (true, RoundMode::Nearest) => format!("nearest_sat{}", u8::from(saturate)),
            };
            sets.push((name, CastOptions { saturate, round_mode: mode, ..CastOptions::default() }));
        }
    }
    sets
}

/// `tables/cast/<from>-<to>.csv`: every code of `from` and what it casts to.
fn cast_table(from: DType, to: DType) -> String {
    let sets = option_sets(to);
    let to_bits = to.bits().expect("narrow dtypes have a width");
    let mut out = String::from("in");
    for (name, _) in &sets {
        out.push(',');
        out.push_str(name);
    }
    out.push('\n');
    for code in codes(from) {
        out.push_str(&hex(code, from.bits().unwrap_or(8)));
        for (_, opts) in &sets {
            out.push(',');
            out.push_str(&hex(cast(from, to, code, opts), to_bits));
        }
        out.push('\n');
    }
    out
}

/// The SHA-256 of the bytes produced by casting every bit pattern of a 16-bit source, in order,
/// one output code per byte.
fn digest_row(from: DType, to: DType, opts: &CastOptions) -> String {
    let bytes: Vec<u8> = (0..=u16::MAX).map(|bits| cast(from, to, u64::from(bits), opts) as u8).collect();
    let digest = Sha256::digest(&bytes);
    digest.iter().fold(String::with_capacity(64), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

fn digests() -> String {
    let mut jobs = Vec::new();
    for from in [DType::Float16, DType::Bfloat16] {
        for to in DType::NARROW {
            for (name, opts) in option_sets(to) {
                jobs.push((from, to, name, opts));
            }
        }
    }
    let rows: Vec<String> = jobs
        .par_iter()
        .map(|(from, to, name, opts)| {
            format!("{},{},{},{}\n", from.file_name(), to.file_name(), name, digest_row(*from, *to, opts))
        })
        .collect();
    let mut out = String::from("from,to,options,sha256\n");
    rows.iter().for_each(|r| out.push_str(r));
    out
}

/// Every file of `tables/`, in memory.
#[must_use]
pub fn render() -> TableSet {
    let mut set = TableSet::new();
    set.insert(PathBuf::from("README.md"), README.as_bytes().to_vec());
    for dtype in DType::NARROW {
        set.insert(PathBuf::from(format!("{}.csv", dtype.file_name())), code_table(dtype).into_bytes());
    }
    let pairs: Vec<(DType, DType)> =
        DType::NARROW.iter().flat_map(|&from| DType::NARROW.iter().map(move |&to| (from, to))).collect();
    let casts: Vec<(PathBuf, Vec<u8>)> = pairs
        .par_iter()
        .map(|&(from, to)| {
            let path = Path::new("cast").join(format!("{}-{}.csv", from.file_name(), to.file_name()));
            (path, cast_table(from, to).into_bytes())
        })
        .collect();
    set.extend(casts);
    set.insert(PathBuf::from("digests.csv"), digests().into_bytes());
    set
}

/// Writes every table under `dir` (creating it), returning the number of files written. All or
/// nothing: every file is first written to a temporary file in its folder and only when all are
/// written are they renamed into place; on an error (a file where a folder must go, a folder where
/// a file must go, an unwritable folder, a full disk) the temporary files and the folders this call
/// created are removed and the existing files are untouched.
pub fn write(dir: &Path) -> Result<usize> {
    let set = render();
    let mut staging = Staging::new();
    for (rel, bytes) in &set {
        let path = dir.join(rel);
        if let Some(parent) = path.parent() {
            staging.create_folders(parent)?;
        }
        staging.stage(&path, |out| out.write_all(bytes))?;
    }
    staging.commit()?;
    Ok(set.len())
}

/// Regenerates the tables and compares them with the files under `dir`. Every file lowbit
/// generates must exist with identical bytes; a stray `.csv` lowbit does not generate is also a
/// mismatch. Returns the number of files checked.
pub fn check(dir: &Path) -> Result<usize> {
    let set = render();
    for (rel, want) in &set {
        let path = dir.join(rel);
        let have = read_table(&path, want.len())?;
        if have != *want {
            return Err(Error::TableMismatch {
                path: path.display().to_string(),
                detail: first_difference(&have, want),
            });
        }
    }
    for sub in [PathBuf::new(), PathBuf::from("cast")] {
        let folder = dir.join(&sub);
        let entries = std::fs::read_dir(&folder).map_err(|e| Error::io(&folder, e))?;
        for entry in entries {
            let entry = entry.map_err(|e| Error::io(&folder, e))?;
            let rel = sub.join(entry.file_name());
            if rel.extension().is_some_and(|e| e == "csv") && !set.contains_key(&rel) {
                return Err(Error::TableMismatch {
                    path: entry.path().display().to_string(),
                    detail: "lowbit does not generate this file".into(),
                });
            }
        }
    }
    Ok(set.len())
}

/// Reads a committed table: a regular file only (a FIFO or a device is refused by its type, never
/// opened and read), and no more than the generated table's size plus one byte, so that a huge file
/// is a mismatch found without reading it whole.
fn read_table(path: &Path, generated: usize) -> Result<Vec<u8>> {
    let (file, metadata) = open_regular(path)?;
    let generated = generated as u64;
    if metadata.len() > generated {
        return Err(Error::TableMismatch {
            path: path.display().to_string(),
            detail: format!("file has {} bytes, lowbit generates {generated}", metadata.len()),
        });
    }
    read_bounded(file, metadata.len(), generated, path).map_err(|e| match e {
        Error::InputTooLarge { .. } => Error::TableMismatch {
            path: path.display().to_string(),
            detail: format!("file has more than {generated} bytes, lowbit generates {generated}"),
        },
        other => other,
    })
}

fn first_difference(have: &[u8], want: &[u8]) -> String {
    let have_text = String::from_utf8_lossy(have);
    let want_text = String::from_utf8_lossy(want);
    for (i, (h, w)) in have_text.lines().zip(want_text.lines()).enumerate() {
        if h != w {
            return format!("line {}: file has {}, lowbit generates {}", i + 1, quoted(h), quoted(w));
        }
    }
    format!("file has {} lines, lowbit generates {}", have_text.lines().count(), want_text.lines().count())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_decimals() {
        assert_eq!(exact_decimal(false, 1, -9), "0.001953125");
        assert_eq!(exact_decimal(true, 7, 6), "-448");
        assert_eq!(exact_decimal(true, 0, 3), "-0");
        assert_eq!(exact_decimal(false, 3, -1), "1.5");
        assert_eq!(exact_decimal(false, 1, -127).len(), "0.".len() + 127);
    }
}
