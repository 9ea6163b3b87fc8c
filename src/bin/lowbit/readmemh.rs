//! A folder of `$readmemh` column files read as one dump: line `k` of the dump joins word `k` of
//! every file. `lowbit vectors --format readmemh` writes such folders and `lowbit check` reads a
//! unit's (its outputs in place of the expected ones). A simulator's `$writememh` adds `//`
//! comments and `_` separators; both are skipped.

use lowbit::{Error, Result};
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

/// How a column's words become words of the dump line.
#[derive(Clone, Copy)]
pub enum Word {
    /// Handed on as written (a scalar operand, result or flag word).
    AsWritten,
    /// Packed lanes of `width` bits each, lane 0 in the lowest bits: unpacked into `lanes` words.
    Lanes { lanes: usize, width: u32 },
}

struct Column {
    path: PathBuf,
    reader: BufReader<File>,
    line: u64,
    word: Word,
}

/// The columns of a folder, read line by line as one dump.
pub struct Columns {
    columns: Vec<Column>,
    /// The joined line being handed out, and how much of it is gone.
    pending: Vec<u8>,
    at: usize,
}

impl Columns {
    /// The files `names` of `dir`, in that order, each with how its words are read.
    pub fn open(dir: &Path, names: &[(&str, Word)]) -> Result<Columns> {
        let mut columns = Vec::new();
        for (name, word) in names {
            let path = dir.join(name);
            let file = File::open(&path).map_err(|e| Error::io(&path, e))?;
            columns.push(Column { path, reader: BufReader::new(file), line: 0, word: *word });
        }
        Ok(Columns { columns, pending: Vec::new(), at: 0 })
    }

    /// Joins the next word of every column into one line; `false` at the end of all of them.
    fn next_line(&mut self) -> std::io::Result<bool> {
        self.pending.clear();
        self.at = 0;
        let mut ended = Vec::new();
        for column in &mut self.columns {
            let Some(word) = next_word(column)? else {
                ended.push(column.path.display().to_string());
                continue;
            };
            match column.word {
                Word::AsWritten => {
                    if !self.pending.is_empty() {
                        self.pending.push(b' ');
                    }
                    self.pending.extend_from_slice(word.as_bytes());
                }
                Word::Lanes { lanes, width } => push_lanes(&mut self.pending, column, &word, lanes, width)?,
            }
        }
        match ended.len() {
            0 => {
                self.pending.push(b'\n');
                Ok(true)
            }
            n if n == self.columns.len() => Ok(false),
            _ => Err(std::io::Error::other(format!(
                "the columns have different lengths: {} ended first",
                ended.join(", ")
            ))),
        }
    }
}

/// The next word of a column: `//` comments, blank lines and `_` separators skipped.
fn next_word(column: &mut Column) -> std::io::Result<Option<String>> {
    let mut text = String::new();
    loop {
        text.clear();
        if column.reader.read_line(&mut text)? == 0 {
            return Ok(None);
        }
        column.line += 1;
        let word: String =
            text.split("//").next().unwrap_or("").chars().filter(|c| !c.is_whitespace() && *c != '_').collect();
        if !word.is_empty() {
            return Ok(Some(word));
        }
    }
}

/// The lanes of a packed word, each as its own hex word.
fn push_lanes(out: &mut Vec<u8>, column: &Column, word: &str, lanes: usize, width: u32) -> std::io::Result<()> {
    let width = width as usize;
    let digits = (lanes * width).div_ceil(4);
    let nibbles: Option<Vec<u8>> = word.chars().map(|c| c.to_digit(16).map(|d| d as u8)).collect();
    let Some(nibbles) = nibbles.filter(|n| n.len() == digits) else {
        return Err(std::io::Error::other(format!(
            "{}: line {}: {word:.40} is not a word of {digits} hex digits",
            column.path.display(),
            column.line
        )));
    };
    // Bit `b` of the word (0 lowest) is bit `b % 4` of the nibble `b / 4` from the end.
    let bit = |b: usize| u64::from(nibbles[digits - 1 - b / 4] >> (b % 4) & 1);
    for lane in 0..lanes {
        let value = (0..width).fold(0u64, |v, k| v | bit(lane * width + k) << k);
        if !out.is_empty() {
            out.push(b' ');
        }
        lowbit::verify::testfloat::push_hex(out, value, width.div_ceil(4).max(2));
    }
    Ok(())
}

impl Read for Columns {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.at == self.pending.len() && !self.next_line()? {
            return Ok(0);
        }
        let n = buf.len().min(self.pending.len() - self.at);
        buf[..n].copy_from_slice(&self.pending[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}
