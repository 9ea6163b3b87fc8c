//! [`Texts`]: the elements of a STRING tensor in one UTF-8 buffer with the end offset of each,
//! so a tensor of a million short strings is two allocations instead of a million.
//!
//! Offsets are `usize`: a tensor may hold more than 4 GiB of text on a 64-bit machine, and 8 bytes
//! per element is a third of what a `String` header took.

use crate::alloc_prelude::*;
use core::fmt;
use core::ops::Index;

/// The elements of a STRING tensor: element `i` is `text[ends[i - 1]..ends[i]]` (from 0 for the
/// first).
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct Texts {
    text: String,
    ends: Vec<usize>,
}

/// Appends the bytes of one element straight into a [`Texts`] buffer (see [`Texts::push_with`]).
pub struct TextSink<'a> {
    text: &'a mut String,
    start: usize,
}

impl TextSink<'_> {
    /// Appends `s` to the element being written.
    #[inline]
    pub fn push_str(&mut self, s: &str) {
        self.text.push_str(s);
    }

    /// Appends one character.
    #[inline]
    pub fn push(&mut self, c: char) {
        self.text.push(c);
    }

    /// Appends one ASCII byte (a byte of 0x80 or more is taken as the character U+0080..U+00FF,
    /// so the buffer stays UTF-8 whatever the caller passes).
    #[inline]
    pub fn push_ascii(&mut self, b: u8) {
        self.text.push(char::from(b));
    }

    /// Appends ASCII bytes (see [`TextSink::push_ascii`]).
    #[inline]
    pub fn extend_ascii(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.push_ascii(b);
        }
    }

    /// Appends `n` copies of the ASCII byte `b`.
    #[inline]
    pub fn repeat_ascii(&mut self, b: u8, n: usize) {
        for _ in 0..n {
            self.push_ascii(b);
        }
    }

    /// Forgets what was written to this element so far.
    #[inline]
    pub fn clear(&mut self) {
        self.text.truncate(self.start);
    }

    /// The element written so far.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.text[self.start..]
    }
}

impl fmt::Write for TextSink<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.push_str(s);
        Ok(())
    }
}

impl Texts {
    /// No elements.
    #[must_use]
    pub fn new() -> Texts {
        Texts::default()
    }

    /// No elements, with room for `elements` elements of `bytes` bytes of text in all.
    #[must_use]
    pub fn with_capacity(elements: usize, bytes: usize) -> Texts {
        Texts { text: String::with_capacity(bytes), ends: Vec::with_capacity(elements) }
    }

    /// Makes room for `elements` more elements and `bytes` more bytes of text, or says it cannot
    /// (nothing is reserved then).
    pub fn try_reserve(&mut self, elements: usize, bytes: usize) -> Result<(), alloc::collections::TryReserveError> {
        self.ends.try_reserve(elements)?;
        self.text.try_reserve(bytes)
    }

    /// The number of elements.
    #[must_use]
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether there is no element.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The bytes of text of all elements together.
    #[must_use]
    pub fn text_len(&self) -> usize {
        self.text.len()
    }

    /// Every element's text one after another (no separators).
    #[must_use]
    pub fn joined(&self) -> &str {
        &self.text
    }

    fn start(&self, i: usize) -> usize {
        if i == 0 {
            0
        } else {
            self.ends[i - 1]
        }
    }

    /// Element `i`, or `None` past the end.
    #[must_use]
    pub fn get(&self, i: usize) -> Option<&str> {
        let end = *self.ends.get(i)?;
        Some(&self.text[self.start(i)..end])
    }

    /// The elements in order.
    pub fn iter(&self) -> Iter<'_> {
        Iter { texts: self, front: 0, back: self.len(), front_start: 0 }
    }

    /// Appends one element.
    pub fn push(&mut self, s: &str) {
        self.text.push_str(s);
        self.ends.push(self.text.len());
    }

    /// Appends one element written by `write` straight into the buffer. If `write` fails, what it
    /// wrote is taken back and no element is added.
    #[inline]
    pub fn push_with<E>(&mut self, write: impl FnOnce(&mut TextSink<'_>) -> Result<(), E>) -> Result<(), E> {
        let start = self.text.len();
        let mut sink = TextSink { text: &mut self.text, start };
        match write(&mut sink) {
            Ok(()) => {
                self.ends.push(self.text.len());
                Ok(())
            }
            Err(e) => {
                self.text.truncate(start);
                Err(e)
            }
        }
    }

    /// The bytes of text of elements `range` together.
    #[cfg(feature = "ops")]
    pub(crate) fn range_text_len(&self, range: core::ops::Range<usize>) -> usize {
        if range.is_empty() {
            0
        } else {
            self.ends[range.end - 1] - self.start(range.start)
        }
    }

    /// Appends elements `range` of `other`.
    pub fn extend_from_range(&mut self, other: &Texts, range: core::ops::Range<usize>) {
        if range.is_empty() {
            return;
        }
        let (from, to) = (other.start(range.start), other.ends[range.end - 1]);
        let shift = self.text.len();
        self.text.push_str(&other.text[from..to]);
        self.ends.extend(other.ends[range].iter().map(|&end| end - from + shift));
    }

    /// The elements as owned strings.
    #[must_use]
    pub fn to_vec(&self) -> Vec<String> {
        self.iter().map(str::to_owned).collect()
    }

    /// Bytes of text plus end offsets: what the elements hold in memory.
    #[must_use]
    pub fn heap_bytes(&self) -> u64 {
        self.text.len() as u64 + Texts::index_bytes(self.len())
    }

    /// The bytes of the end offsets of `elements` elements.
    #[must_use]
    pub fn index_bytes(elements: usize) -> u64 {
        (elements as u64).saturating_mul(core::mem::size_of::<usize>() as u64)
    }
}

impl fmt::Debug for Texts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl Index<usize> for Texts {
    type Output = str;

    /// Element `i`; panics past the end, as a slice does.
    fn index(&self, i: usize) -> &str {
        match self.get(i) {
            Some(s) => s,
            None => panic!("element {i} of {} strings", self.len()),
        }
    }
}

/// The elements of a [`Texts`] in order.
#[derive(Clone)]
pub struct Iter<'a> {
    texts: &'a Texts,
    front: usize,
    back: usize,
    /// Where element `front` starts.
    front_start: usize,
}

impl<'a> Iterator for Iter<'a> {
    type Item = &'a str;

    #[inline]
    fn next(&mut self) -> Option<&'a str> {
        if self.front == self.back {
            return None;
        }
        let end = self.texts.ends[self.front];
        let s = &self.texts.text[self.front_start..end];
        self.front += 1;
        self.front_start = end;
        Some(s)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.back - self.front, Some(self.back - self.front))
    }
}

impl DoubleEndedIterator for Iter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        if self.front == self.back {
            return None;
        }
        self.back -= 1;
        self.texts.get(self.back)
    }
}

impl ExactSizeIterator for Iter<'_> {}

impl<'a> IntoIterator for &'a Texts {
    type Item = &'a str;
    type IntoIter = Iter<'a>;

    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

impl<S: AsRef<str>> Extend<S> for Texts {
    fn extend<I: IntoIterator<Item = S>>(&mut self, iter: I) {
        for s in iter {
            self.push(s.as_ref());
        }
    }
}

impl<S: AsRef<str>> FromIterator<S> for Texts {
    fn from_iter<I: IntoIterator<Item = S>>(iter: I) -> Texts {
        let mut texts = Texts::new();
        texts.extend(iter);
        texts
    }
}

impl From<Vec<String>> for Texts {
    fn from(strings: Vec<String>) -> Texts {
        Texts::from(strings.as_slice())
    }
}

impl From<&[String]> for Texts {
    fn from(strings: &[String]) -> Texts {
        let mut texts = Texts::with_capacity(strings.len(), strings.iter().map(String::len).sum());
        texts.extend(strings);
        texts
    }
}

impl From<&[&str]> for Texts {
    fn from(strings: &[&str]) -> Texts {
        let mut texts = Texts::with_capacity(strings.len(), strings.iter().map(|s| s.len()).sum());
        texts.extend(strings);
        texts
    }
}

impl<S: AsRef<str>> PartialEq<[S]> for Texts {
    fn eq(&self, other: &[S]) -> bool {
        self.len() == other.len() && self.iter().zip(other).all(|(a, b)| a == b.as_ref())
    }
}

impl<S: AsRef<str>, const N: usize> PartialEq<[S; N]> for Texts {
    fn eq(&self, other: &[S; N]) -> bool {
        *self == other[..]
    }
}

impl<S: AsRef<str>> PartialEq<Vec<S>> for Texts {
    fn eq(&self, other: &Vec<S>) -> bool {
        *self == other[..]
    }
}

impl<S: AsRef<str>, const N: usize> PartialEq<[S; N]> for &Texts {
    fn eq(&self, other: &[S; N]) -> bool {
        **self == other[..]
    }
}

impl<S: AsRef<str>> PartialEq<Vec<S>> for &Texts {
    fn eq(&self, other: &Vec<S>) -> bool {
        **self == other[..]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elements_come_back_as_pushed() {
        let mut t = Texts::new();
        t.push("a");
        t.push("");
        t.push("é€");
        assert_eq!(t.len(), 3);
        assert_eq!(t.text_len(), 1 + 2 + 3); // "é" is 2 bytes, "€" 3
        assert_eq!(t.get(2), Some("é€"));
        assert_eq!(t.get(3), None);
        assert_eq!(&t[1], "");
        assert_eq!(t.iter().rev().collect::<Vec<_>>(), ["é€", "", "a"]);
        assert_eq!(t, ["a", "", "é€"]);
        assert_eq!(t.to_vec(), vec!["a".to_string(), String::new(), "é€".to_string()]);
        assert_eq!(Texts::from(t.to_vec()), t);
        assert_eq!(format!("{t:?}"), r#"["a", "", "é€"]"#);
    }

    #[test]
    fn a_failed_write_leaves_nothing() {
        let mut t = Texts::new();
        t.push_with(|s| {
            s.push_str("12");
            s.push_ascii(b'3');
            Ok::<(), ()>(())
        })
        .unwrap();
        assert!(t
            .push_with(|s| {
                s.push_str("half written");
                Err(())
            })
            .is_err());
        t.push_with(|s| {
            s.push_str("x");
            s.clear();
            s.push_str("y");
            assert_eq!(s.as_str(), "y");
            Ok::<(), ()>(())
        })
        .unwrap();
        assert_eq!(t, ["123", "y"]);
        assert_eq!(t.joined(), "123y");
    }

    #[test]
    fn ranges_are_copied_with_their_offsets_moved() {
        let source: Texts = ["a", "bb", "", "dddd", "e"].into_iter().collect();
        let mut out: Texts = ["zz"].into_iter().collect();
        out.extend_from_range(&source, 1..4);
        out.extend_from_range(&source, 0..0);
        out.extend_from_range(&source, 4..5);
        assert_eq!(out, ["zz", "bb", "", "dddd", "e"]);
        assert_eq!(out.iter().collect::<Vec<_>>(), ["zz", "bb", "", "dddd", "e"]);
    }
}
