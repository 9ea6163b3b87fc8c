//! Format handles: a parsed format is kept once, in a fixed table of immutable entries, and named
//! by a 32-bit handle (an `int` on a DPI-C boundary). The table holds no conversion state: the
//! same text always gives the same handle, and reading an entry is one atomic load, so threads
//! share handles without locking.

use crate::boundary::{Failure, Outcome, LOWBIT_ERR_FORMAT, LOWBIT_ERR_HANDLE, LOWBIT_ERR_TOO_MANY_FORMATS};
use lowbit::verify::Format;
use std::sync::{Mutex, OnceLock};

/// How many distinct formats a process can parse (every ONNX format and hundreds of
/// described ones; a handle is never freed, so a testbench parses its formats once).
pub const LOWBIT_MAX_FORMATS: u32 = 4096;

/// The top 16 bits of every handle ("LB"): 0 and small integers are never handles, so an
/// uninitialised or mixed-up argument is refused rather than read as some other format.
const TAG: u32 = 0x4C42_0000;

/// A parsed format, and the same format with its subnormals flushed (what `flush` reads or writes),
/// both made once so a conversion only borrows them.
#[derive(Debug)]
pub(crate) struct Entry {
    pub(crate) format: Format,
    pub(crate) flushed: Format,
}

static TABLE: [OnceLock<Entry>; LOWBIT_MAX_FORMATS as usize] = [const { OnceLock::new() }; LOWBIT_MAX_FORMATS as usize];
/// Entries filled so far; held while one is added, so two threads adding one text agree on it.
static FILLED: Mutex<usize> = Mutex::new(0);

/// The handle of `text`'s format, adding it on first sight.
pub(crate) fn parse(text: &str) -> Outcome<u32> {
    let format = Format::parse(text).map_err(|e| Failure::new(LOWBIT_ERR_FORMAT, e.to_string()))?;
    // A poisoned lock only means another thread panicked while holding it; the count is intact.
    let mut filled = FILLED.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let known = TABLE[..*filled].iter().position(|slot| slot.get().is_some_and(|entry| entry.format == format));
    let index = match known {
        Some(index) => index,
        None if *filled < TABLE.len() => {
            // Under the lock nobody else fills this slot, so `set` succeeds.
            let _ = TABLE[*filled].set(Entry { format, flushed: flushed(format) });
            *filled += 1;
            *filled - 1
        }
        None => {
            return Err(Failure::new(
                LOWBIT_ERR_TOO_MANY_FORMATS,
                format!("{text:?}: the process already holds {LOWBIT_MAX_FORMATS} formats"),
            ))
        }
    };
    // The table has 4096 entries: the index fits the handle's low 16 bits.
    Ok(TAG | index as u32)
}

/// A format with its subnormals flushed (its descriptor's own rule; integers unchanged).
fn flushed(format: Format) -> Format {
    match format.float_format() {
        Some(mut float) => {
            float.flush_subnormals = true;
            Format::Described(float)
        }
        None => format,
    }
}

/// The entry a handle names.
#[inline]
pub(crate) fn resolve(handle: u32, which: &str) -> Outcome<&'static Entry> {
    let slot = if handle & 0xFFFF_0000 == TAG { TABLE.get((handle & 0xFFFF) as usize) } else { None };
    match slot.and_then(OnceLock::get) {
        Some(entry) => Ok(entry),
        None => Err(Failure::new(
            LOWBIT_ERR_HANDLE,
            format!("{which} format handle {handle:#010x} is not one lowbit_format_parse returned"),
        )),
    }
}
