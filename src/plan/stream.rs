//! Running a plan over a byte stream (standard input to standard output, a file to a file) in
//! pieces of a fixed size, so memory stays flat however long the stream is.

use super::Plan;
use crate::error::Error;
use crate::packing;
use std::io::{ErrorKind, Read, Write};

/// Elements per piece: 2^20 (4 MiB of float32), a multiple of every packing group and of every
/// profile's vector block, so pieces line up with the positions the whole stream would have.
pub const STREAM_PIECE: usize = 1 << 20;

/// Why a stream stopped.
#[derive(Debug)]
pub enum StreamError {
    /// Reading the input failed.
    Input(std::io::Error),
    /// Writing the output failed (a closed pipe is `ErrorKind::BrokenPipe`).
    Output(std::io::Error),
    /// The input is not what the source dtype and count say.
    Data(Error),
}

impl From<Error> for StreamError {
    fn from(e: Error) -> StreamError {
        StreamError::Data(e)
    }
}

/// Reads until `buf` is full or the input ends; returns the bytes read.
fn fill(input: &mut impl Read, buf: &mut [u8]) -> std::result::Result<usize, std::io::Error> {
    let mut filled = 0;
    while filled < buf.len() {
        match input.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(k) => filled += k,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

impl Plan {
    /// Converts the raw data read from `input` (ONNX `raw_data` of the source dtype) and writes the
    /// target's raw data to `output`, a piece of [`STREAM_PIECE`] elements at a time, each on up
    /// to `threads` threads. With `count`, the input must hold exactly that many elements; without
    /// it, the input must end on a whole element (for packed dtypes: the elements its bytes hold,
    /// as [`crate::packing::raw_len`] counts them). Returns the number of elements converted.
    ///
    /// Output already written stays written when a later piece fails (a stream cannot take it
    /// back); the error says what was wrong.
    pub fn run_stream(
        &self,
        input: &mut impl Read,
        output: &mut impl Write,
        count: Option<usize>,
        threads: usize,
    ) -> std::result::Result<usize, StreamError> {
        let (from, to) = (self.from, self.to);
        // Every block length a profile uses divides the piece (they are powers of two up to 64).
        debug_assert!(self.blocks.as_ref().is_none_or(|(b, _)| STREAM_PIECE % b == 0));
        let piece_bytes = packing::raw_len(from, STREAM_PIECE)?;
        if let Some(n) = count {
            packing::raw_len(from, n)?;
        }
        let mut src = vec![0u8; piece_bytes];
        let mut dst = vec![0u8; packing::raw_len(to, STREAM_PIECE)?];
        let mut done = 0usize;
        loop {
            let want = match count {
                Some(n) => packing::raw_len(from, (n - done).min(STREAM_PIECE))?,
                None => piece_bytes,
            };
            let got = fill(input, &mut src[..want]).map_err(StreamError::Input)?;
            let elements = match count {
                Some(n) if got == want => (n - done).min(STREAM_PIECE),
                Some(n) => {
                    let (expected, actual) = (packing::raw_len(from, n)?, packing::raw_len(from, done)? + got);
                    return Err(Error::RawLength { dtype: from.onnx_name(), elements: n, expected, actual }.into());
                }
                None if got == piece_bytes => STREAM_PIECE,
                // The last piece: the whole elements its bytes hold, and no more bytes than that.
                None => match packing::whole_elements(from, got) {
                    Some(n) => n,
                    None => {
                        let bits = from.bits().expect("a plan's dtypes have a width");
                        let bytes = packing::raw_len(from, done)? + got;
                        return Err(Error::RawNotWhole { dtype: from.onnx_name(), bytes, bits }.into());
                    }
                },
            };
            if elements > 0 {
                let out_len = packing::raw_len(to, elements)?;
                self.run_parallel(&src[..got], &mut dst[..out_len], elements, threads)?;
                output.write_all(&dst[..out_len]).map_err(StreamError::Output)?;
            }
            done += elements;
            let finished = match count {
                Some(n) => done == n,
                None => got < piece_bytes,
            };
            if finished {
                break;
            }
        }
        if let Some(n) = count {
            // More input than `count` elements is an error too, as it is for whole buffers.
            let mut extra = [0u8; 1];
            if fill(input, &mut extra).map_err(StreamError::Input)? > 0 {
                return Err(Error::InvalidOp {
                    op: "cast".into(),
                    message: format!(
                        "the input holds more than the {n} {} elements of the count ({} bytes)",
                        from.onnx_name(),
                        packing::raw_len(from, n)?
                    ),
                }
                .into());
            }
        }
        output.flush().map_err(StreamError::Output)?;
        Ok(done)
    }
}
