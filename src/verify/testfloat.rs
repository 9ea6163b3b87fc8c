//! **TestFloat's line format**: `operand result flags`, each a raw upper-case hexadecimal number
//! of a fixed width (2 digits for formats of 8 bits or fewer, 4 for 16, 8 for 32, 16 for 64; the
//! flags 2 digits: invalid 0x10, infinite 0x08, overflow 0x04, underflow 0x02, inexact 0x01), as
//! `testfloat_gen <function>` writes and `testfloat_ver` reads. Reading also takes an operation
//! word and a rounding-mode word before the numbers (some harnesses write them), and bounds
//! every line ([`MAX_LINE_BYTES`]) so a dump of any size streams in constant memory.

use super::config::parse_mode;
use super::RoundingMode;
use crate::error::{Error, Result};
use std::io::Read;

/// The longest line read; a longer one is an error naming its line number.
pub const MAX_LINE_BYTES: usize = 1024;

/// Hex digits of a code of `width` bits: TestFloat's widths (2, 4, 8 or 16 digits).
#[must_use]
pub const fn hex_digits(width: u32) -> usize {
    match width {
        0..=8 => 2,
        9..=16 => 4,
        17..=32 => 8,
        _ => 16,
    }
}

const HEX: &[u8; 16] = b"0123456789ABCDEF";

/// Appends `value` as `digits` upper-case hex digits.
pub fn push_hex(out: &mut Vec<u8>, value: u64, digits: usize) {
    for k in (0..digits).rev() {
        out.push(HEX[((value >> (4 * k)) & 0xF) as usize]);
    }
}

/// Appends one line `OPERAND RESULT[ FLAGS]\n`.
pub fn push_line(
    out: &mut Vec<u8>,
    operand: u64,
    operand_digits: usize,
    result: u64,
    result_digits: usize,
    flags: Option<u8>,
) {
    push_hex(out, operand, operand_digits);
    out.push(b' ');
    push_hex(out, result, result_digits);
    if let Some(flags) = flags {
        out.push(b' ');
        push_hex(out, u64::from(flags), 2);
    }
    out.push(b'\n');
}

/// One test case read from a line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Case {
    /// The operand code.
    pub operand: u64,
    /// The result code.
    pub result: u64,
    /// The flags, when the line has them.
    pub flags: Option<u8>,
    /// The line's rounding-mode word, when it has one.
    pub mode: Option<RoundingMode>,
}

/// What a line must hold: the widths of the operand and of the result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// The operand's width (its hex digits: `ceil(bits / 4)`).
    pub operand_bits: u32,
    /// The result's width.
    pub result_bits: u32,
}

fn line_error(input: &str, line: u64, why: String) -> Error {
    Error::DumpLine { input: input.to_string(), line, why }
}

fn parse_hex(word: &[u8]) -> Option<u64> {
    if word.is_empty() || word.len() > 16 {
        return None;
    }
    let mut v = 0u64;
    for &b in word {
        v = v << 4 | u64::from((b as char).to_digit(16)?);
    }
    Some(v)
}

fn shown(word: &[u8]) -> String {
    let text = String::from_utf8_lossy(&word[..word.len().min(40)]).into_owned();
    format!("{text:?}")
}

impl Layout {
    /// Reads one line (without its line end). `Ok(None)` for a line that holds no case: a blank
    /// line, a `#` comment, or the header of the CSV `lowbit vectors --format csv` writes (its
    /// words are separated by commas, which are read as spaces; its `random` column, the word
    /// `seeded_random(seed, i)` gives again, is skipped). Errors name `input` and the line number.
    pub fn parse(&self, text: &[u8], input: &str, line: u64) -> Result<Option<Case>> {
        if is_skipped(text) {
            return Ok(None);
        }
        let csv = text.contains(&b',');
        let mut words = text.split(|&b| b.is_ascii_whitespace() || b == b',').filter(|w| !w.is_empty()).peekable();
        let Some(first) = words.peek().copied() else { return Ok(None) };
        let operand_digits = hex_digits(self.operand_bits);
        let mut mode = None;
        // An operation word (`f32_to_f16`, anything that is not an operand) and a rounding-mode
        // word may come first.
        // A word is a number when it is all hex digits (a wrong width is then reported as such).
        let is_number = |w: &[u8]| w.iter().all(u8::is_ascii_hexdigit);
        if !is_number(first) {
            words.next();
            let word = String::from_utf8_lossy(first);
            if let Some(m) = parse_mode(&word) {
                mode = Some(m);
            } else if let Some(second) = words.peek().copied() {
                if !is_number(second) {
                    mode = parse_mode(&String::from_utf8_lossy(second));
                    if mode.is_none() {
                        return Err(line_error(
                            input,
                            line,
                            format!(
                                "{} is neither an operand of {operand_digits} hex digits nor a rounding mode",
                                shown(second)
                            ),
                        ));
                    }
                    words.next();
                }
            }
        }
        let mut number = |what: &str, bits: u32, digits: usize| -> Result<u64> {
            let word = words.next().ok_or_else(|| line_error(input, line, format!("no {what}")))?;
            if word.len() != digits {
                return Err(line_error(
                    input,
                    line,
                    format!(
                        "{what} {} has {} characters; a {bits}-bit {what} has {digits} hex digits",
                        shown(word),
                        word.len()
                    ),
                ));
            }
            let value = parse_hex(word)
                .ok_or_else(|| line_error(input, line, format!("{what} {} is not hexadecimal", shown(word))))?;
            if bits < 64 && value >> bits != 0 {
                return Err(line_error(input, line, format!("{what} {value:#x} does not fit {bits} bits")));
            }
            Ok(value)
        };
        let operand = number("operand", self.operand_bits, operand_digits)?;
        let result = number("result", self.result_bits, hex_digits(self.result_bits))?;
        let flags = match words.next() {
            None => None,
            Some(word) => {
                let value = (word.len() == 2)
                    .then(|| parse_hex(word))
                    .flatten()
                    .ok_or_else(|| line_error(input, line, format!("flags {} are not 2 hex digits", shown(word))))?;
                if value > 0x1F {
                    return Err(line_error(input, line, format!("flags {value:#04x} are over 0x1F")));
                }
                Some(value as u8)
            }
        };
        if csv && flags.is_some() {
            // The random word of stochastic rounding's CSV column: 16 hex digits.
            words.next_if(|w| w.len() == 16 && w.iter().all(u8::is_ascii_hexdigit));
        }
        if let Some(extra) = words.next() {
            return Err(line_error(input, line, format!("unexpected {} after the flags", shown(extra))));
        }
        Ok(Some(Case { operand, result, flags, mode }))
    }
}

/// Whether a line holds no case: blank, a `#` comment, or a CSV header (`operand,result,...`).
#[must_use]
pub fn is_skipped(text: &[u8]) -> bool {
    let trimmed = text.trim_ascii_start();
    trimmed.is_empty() || trimmed.starts_with(b"#") || trimmed.starts_with(b"operand,result")
}

/// Reads lines of at most [`MAX_LINE_BYTES`] from a byte stream into one reused buffer.
pub struct LineReader<R> {
    input: R,
    buffer: Vec<u8>,
    /// Bytes of `buffer` read and not yet handed out: `start..end`.
    start: usize,
    end: usize,
    eof: bool,
    /// Lines handed out so far (the current line's 1-based number).
    pub line: u64,
    name: String,
}

impl<R: Read> LineReader<R> {
    /// A reader of `input`, called `name` in errors.
    pub fn new(input: R, name: &str) -> LineReader<R> {
        LineReader { input, buffer: vec![0; 1 << 16], start: 0, end: 0, eof: false, line: 0, name: name.to_string() }
    }

    /// The next line's number (from 1) and text without its line end (`\n` or `\r\n`), or
    /// `None` at the end.
    pub fn next_line(&mut self) -> Result<Option<(u64, &[u8])>> {
        loop {
            if let Some(k) = self.buffer[self.start..self.end].iter().position(|&b| b == b'\n') {
                let (s, e) = (self.start, self.start + k);
                self.start = e + 1;
                return self.hand_out(s, e).map(Some);
            }
            if self.end - self.start > MAX_LINE_BYTES {
                self.line += 1;
                return Err(line_error(&self.name, self.line, format!("longer than {MAX_LINE_BYTES} bytes")));
            }
            if self.eof {
                if self.start == self.end {
                    return Ok(None);
                }
                let (s, e) = (self.start, self.end);
                self.start = self.end;
                return self.hand_out(s, e).map(Some);
            }
            // Move the partial line to the front and read more after it.
            self.buffer.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
            let n = loop {
                match self.input.read(&mut self.buffer[self.end..]) {
                    Ok(n) => break n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(Error::Io { path: self.name.clone(), message: e.to_string() }),
                }
            };
            if n == 0 {
                self.eof = true;
            }
            self.end += n;
        }
    }

    fn hand_out(&mut self, s: usize, mut e: usize) -> Result<(u64, &[u8])> {
        self.line += 1;
        if e - s > MAX_LINE_BYTES {
            return Err(line_error(&self.name, self.line, format!("longer than {MAX_LINE_BYTES} bytes")));
        }
        if e > s && self.buffer[e - 1] == b'\r' {
            e -= 1;
        }
        Ok((self.line, &self.buffer[s..e]))
    }

    /// The input's name, for messages.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_follow_testfloat() {
        assert_eq!([hex_digits(4), hex_digits(8), hex_digits(16), hex_digits(32), hex_digits(64)], [2, 2, 4, 8, 16]);
        let mut out = Vec::new();
        push_line(&mut out, 0x3C00, 4, 0x38, 2, Some(0x03));
        assert_eq!(out, b"3C00 38 03\n");
    }

    #[test]
    fn lines_parse_with_words_and_fail_with_numbers() {
        let layout = Layout { operand_bits: 16, result_bits: 8 };
        let case = layout.parse(b"f16_to_e4m3 rtz 3C00 38 03", "t", 1).unwrap().unwrap();
        assert_eq!(
            (case.operand, case.result, case.flags, case.mode),
            (0x3C00, 0x38, Some(3), Some(RoundingMode::TowardZero))
        );
        assert_eq!(layout.parse(b"  ", "t", 2).unwrap(), None);
        assert_eq!(layout.parse(b"3c00 38", "t", 3).unwrap().unwrap().flags, None);
        for (bad, what) in [
            (&b"3C0 38 00"[..], "3 characters"),
            (b"3C00 3G 00", "not hexadecimal"),
            (b"3C00 38 20", "over 0x1F"),
            (b"3C00 38 00 00", "unexpected"),
        ] {
            let e = layout.parse(bad, "dump", 7).unwrap_err().to_string();
            assert!(e.contains("line 7") && e.contains(what), "{e}");
        }
    }

    #[test]
    fn the_reader_bounds_lines() {
        let mut text = b"a\r\nb\n".to_vec();
        text.extend(vec![b'x'; 2000]);
        let mut r = LineReader::new(&text[..], "in");
        assert_eq!(r.next_line().unwrap(), Some((1, &b"a"[..])));
        assert_eq!(r.next_line().unwrap(), Some((2, &b"b"[..])));
        assert!(r.next_line().unwrap_err().to_string().contains("line 3"));
    }
}
