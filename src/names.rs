//! Names and literals typed by people: "did you mean" for a mistyped name, `0x` bit patterns.
//! Used by every feature that parses what a user typed (schemes, formats, the command line), so
//! it builds with none; the public path is [`crate::arguments`].

use crate::alloc_prelude::*;
use crate::error::{quoted, Error, Result};

/// Levenshtein distance between two names (characters inserted, deleted or replaced), for
/// "did you mean".
#[must_use]
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut previous = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let next = (row[j + 1] + 1).min(row[j] + 1).min(previous + usize::from(ca != cb));
            previous = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

/// The candidates nearest to a mistyped name: those at the smallest edit distance, if it is at
/// most one edit for a name shorter than 6 characters and two for a longer one (case ignored).
#[must_use]
pub fn nearest_names<'a>(text: &str, candidates: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    let key = text.to_ascii_lowercase();
    let limit = if key.chars().count() < 6 { 1 } else { 2 };
    let scored: Vec<(usize, &str)> =
        candidates.into_iter().map(|c| (edit_distance(&key, &c.to_ascii_lowercase()), c)).collect();
    let best = scored.iter().map(|(d, _)| *d).min().unwrap_or(usize::MAX);
    let mut out: Vec<&str> = scored.into_iter().filter(|(d, _)| *d == best && best <= limit).map(|(_, c)| c).collect();
    out.dedup();
    out
}

/// A `0x` literal (`0x7e`, `0X7F800001`) read as a bit pattern of a `bits`-wide type: its code,
/// or an error where it has more significant bits than the type; None for any other text (a
/// value to be read as a number).
pub fn code_from_hex(text: &str, bits: u32) -> Option<Result<u64>> {
    let digits = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X"))?;
    let code = u64::from_str_radix(digits, 16).ok().filter(|_| !digits.is_empty() && !digits.starts_with('+'));
    let mask = if bits >= 64 { u64::MAX } else { (1u64 << bits) - 1 };
    Some(match code {
        Some(c) if c & !mask == 0 => Ok(c),
        Some(_) => Err(Error::InvalidOp {
            op: "value".into(),
            message: format!("{} has more bits than the type's {bits}", quoted(text)),
        }),
        None => Err(Error::InvalidOp {
            op: "value".into(),
            message: format!("{} is not a hexadecimal bit pattern", quoted(text)),
        }),
    })
}
