//! Hardware verification of a float16 -> float8 E5M2 cast unit: golden vectors for every float16
//! pattern (TestFloat's line layout, `OPERAND RESULT FLAGS` in hex, flags in TestFloat's bit
//! order), a simulator dump made from them with two wrong results injected, and the checker's
//! classification of every mismatch. This is what `lowbit vectors` and `lowbit check` do, through
//! the library.
//!
//! ```sh
//! cargo run --example verify_dump            # dump written to a temp dir
//! cargo run --example verify_dump -- dump.txt  # keep the fake dump there
//! ```

use lowbit::verify::check::{check_stream, CheckOptions, Class, Summary};
use lowbit::verify::vectors::{Level, Vectors};
use lowbit::verify::{Format, VerifyOptions};
use std::path::{Path, PathBuf};

/// The two injected faults: `(operand, what the "simulator" gives instead)`, both as lines of the
/// dump. Hand-computed expectations (float16 -> E5M2 keeps float16's top byte, then rounds on the
/// low byte to nearest even; flags: 0x01 inexact, 0x02 underflow):
///
/// * `3C01` is 1 + 2^-10; the low byte 0x01 is below half (0x80), so the result is `3C` (1.0),
///   inexact: `3C01 3C 01`. The fake unit rounds up: `3C01 3D 01` (1.25, one ulp away from zero).
/// * `0100` is 256 * 2^-24 = 2^-16, E5M2's smallest subnormal, exact: `0100 01 00`. The fake
///   unit flushes it: `0100 00 00`.
const FAULTS: [(&str, &str, &str); 2] = [("3C01", "3C01 3C 01", "3C01 3D 01"), ("0100", "0100 01 00", "0100 00 00")];

/// Every float16 pattern with its E5M2 result and flags, round to nearest even, not saturating
/// (an IEEE-style unit: overflow gives infinity), tininess after rounding (TestFloat's default).
fn golden_vectors() -> lowbit::Result<String> {
    let (from, to) = (Format::parse("f16")?, Format::parse("e5m2")?);
    let vectors = Vectors::new(&from, &to, &VerifyOptions::default(), Level::All, None, 0)?;
    let mut text = Vec::new();
    vectors.write_testfloat(&mut text).expect("writing to a Vec cannot fail");
    Ok(String::from_utf8(text).expect("the lines are hex digits"))
}

/// The golden vectors with [`FAULTS`] injected, written to `path`.
fn write_fake_dump(golden: &str, path: &Path) -> Result<(), Box<dyn std::error::Error>> {
    let mut dump = String::with_capacity(golden.len());
    for line in golden.lines() {
        match FAULTS.iter().find(|(operand, _, _)| line.starts_with(operand) && line.as_bytes()[4] == b' ') {
            Some((_, expected, faulty)) => {
                // The golden line is the hand-computed one; else the injection means nothing.
                if line != *expected {
                    return Err(format!("golden line {line:?}, expected {expected:?}").into());
                }
                dump.push_str(faulty);
            }
            None => dump.push_str(line),
        }
        dump.push('\n');
    }
    std::fs::write(path, dump)?;
    Ok(())
}

/// Checks the dump at `path` as float16 -> E5M2 with the options the vectors were made with.
fn check_dump(path: &Path) -> lowbit::Result<Summary> {
    let (from, to) = (Format::parse("f16")?, Format::parse("e5m2")?);
    let file = std::fs::File::open(path).map_err(|e| lowbit::Error::io(path, e))?;
    check_stream(file, &path.display().to_string(), &from, &to, &VerifyOptions::default(), &CheckOptions::default())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let temp = tempfile::tempdir()?;
    let path = std::env::args().nth(1).map_or_else(|| temp.path().join("dump.txt"), PathBuf::from);
    let golden = golden_vectors()?;
    println!("{} golden vectors for float16 -> E5M2 (every float16 pattern)", golden.lines().count());
    write_fake_dump(&golden, &path)?;
    println!("fake dump with {} injected faults: {}", FAULTS.len(), path.display());
    let summary = check_dump(&path)?;
    println!("{}", summary.report());
    for (k, class) in Class::ALL.iter().enumerate() {
        if summary.classes[k] > 0 {
            println!("class {class:?}: {}", summary.classes[k]);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_two_faults_and_names_them() {
        let golden = golden_vectors().unwrap();
        assert_eq!(golden.lines().count(), 65_536); // 2^16 float16 patterns
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("dump.txt");
        write_fake_dump(&golden, &path).unwrap();
        let summary = check_dump(&path).unwrap();
        assert_eq!((summary.checked, summary.mismatches), (65_536, 2));
        let count = |class: Class| summary.classes[Class::ALL.iter().position(|&c| c == class).unwrap()];
        assert_eq!(count(Class::OneUlpAwayFromZero), 1);
        assert_eq!(count(Class::FlushedToZero), 1);
        assert_eq!(summary.classes.iter().sum::<u64>(), 2);
        // The flags were left right: none missing, none extra.
        assert_eq!(summary.flags_missing.iter().chain(&summary.flags_extra).sum::<u64>(), 0);
        // The shown lines name the line numbers: operand 0x0100 is line 257, 0x3C01 line 15362.
        assert!(summary.shown[0].starts_with("line 257: 0100"), "{}", summary.shown[0]);
        assert!(summary.shown[1].starts_with("line 15362: 3C01"), "{}", summary.shown[1]);
    }

    #[test]
    fn the_golden_vectors_check_clean() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("golden.txt");
        std::fs::write(&path, golden_vectors().unwrap()).unwrap();
        let summary = check_dump(&path).unwrap();
        assert_eq!((summary.checked, summary.mismatches), (65_536, 0));
    }
}
