//! The limits of a model load and a graph run: how many bytes a run may hold at once, how many
//! elements it may process, and how large a file lowbit reads. A model can ask for unbounded memory
//! (a broadcast of [65536, 1] and [1, 32768]) or unbounded work (nested Loops with huge trip
//! counts); these budgets turn both into an error naming the node instead of an abort or a hang.

use crate::error::{Error, Result};

/// What a model load and a graph run may use. [`Limits::default`] is [`Limits::for_this_machine`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The most bytes a run may hold at once in the tensors it makes: initializers and constants
    /// as decoded, every intermediate and output, scan outputs as they accumulate and the scratch
    /// space an op needs. Each allocation is charged before it is made and released when the
    /// tensor is freed (after its last consumer). The caller's input tensors are not counted. At
    /// load time, the external data read for a model is counted against it too.
    pub max_memory: u64,
    /// The most elements a run may process, summed over every node run (Loop bodies and nested
    /// Loops included): each node run counts the elements it writes (times [`work_per_element`],
    /// which weighs the slower ops), the index elements it reads (Gather) and [`NODE_RUN_WORK`] for
    /// itself; each Loop iteration counts [`NODE_RUN_WORK`] more.
    pub max_work: u64,
    /// The largest model or TensorProto file read, in bytes, checked from the file's length before
    /// reading and enforced while reading (a file that grows still stops here).
    pub max_input_bytes: u64,
}

/// What one node run (or one Loop iteration) counts against [`Limits::max_work`] besides the
/// elements it writes: about what a node's fixed cost (scheduling, lookups, small allocations)
/// takes in elements of a copy, so that a Loop of tiny nodes is bounded in time too.
pub const NODE_RUN_WORK: u64 = 64;

/// How many elements of work each element an op writes counts for: 1 for ops that copy or cast
/// between numeric types, more for those that take longer per element, so that the work budget
/// bounds time whatever the ops (measured: 3 to 15 ns per unit of work on one core):
///
/// | op | work per element |
/// |---|---|
/// | Identity, Constant, Slice, Gather, Cast and CastLike between numeric types, Loop scan outputs | 1 |
/// | Range, Add, Sub, Div, Ceil, Relu (each element is computed exactly and rounded once) | 16 |
/// | Cast and CastLike to or from STRING | 128 |
#[must_use]
pub fn work_per_element(op: &str, text: bool) -> u64 {
    match op {
        "Cast" | "CastLike" if text => 128,
        "Add" | "Sub" | "Div" | "Ceil" | "Relu" | "Range" | "Max" | "Min" | "Clip" | "Round" | "ReduceMax"
        | "ReduceMin" => 16,
        _ => 1,
    }
}

/// The memory budget when the machine's memory cannot be read: 4 GiB.
pub const FALLBACK_MAX_MEMORY: u64 = 4 << 30;

/// The default work budget: 2^32 elements of work (about 4.3 billion: a minute of running at
/// most, and room for a Cast of 2^32 elements, arithmetic on 2^28, or 2^24 iterations of a Loop
/// whose body has a few nodes).
pub const DEFAULT_MAX_WORK: u64 = 1 << 32;

/// The default largest input file: 4 GiB (a protobuf message cannot exceed 2 GiB).
pub const DEFAULT_MAX_INPUT_BYTES: u64 = 4 << 30;

impl Default for Limits {
    fn default() -> Self {
        Limits::for_this_machine()
    }
}

impl Limits {
    /// No limit at all (for trusted models only).
    pub const UNLIMITED: Limits = Limits { max_memory: u64::MAX, max_work: u64::MAX, max_input_bytes: u64::MAX };

    /// The defaults: half of the memory this process can use ([`usable_memory`]; 4 GiB when it
    /// cannot be read), [`DEFAULT_MAX_WORK`] and [`DEFAULT_MAX_INPUT_BYTES`].
    #[must_use]
    pub fn for_this_machine() -> Limits {
        Limits {
            max_memory: usable_memory().map_or(FALLBACK_MAX_MEMORY, |bytes| bytes / 2),
            max_work: DEFAULT_MAX_WORK,
            max_input_bytes: DEFAULT_MAX_INPUT_BYTES,
        }
    }
}

/// The memory this process can use, in bytes: the smallest of physical memory (`MemTotal` in
/// `/proc/meminfo`), the cgroup's limit (`/sys/fs/cgroup/memory.max`) and the address-space limit
/// (`Max address space` in `/proc/self/limits`), among those that can be read and are set. `None`
/// where none can be read (not Linux).
#[must_use]
pub fn usable_memory() -> Option<u64> {
    let read = |path: &str| std::fs::read_to_string(path).ok();
    let physical = read("/proc/meminfo").and_then(|text| meminfo_total(&text));
    let cgroup = read("/sys/fs/cgroup/memory.max").and_then(|text| text.trim().parse::<u64>().ok());
    let address_space = read("/proc/self/limits").and_then(|text| address_space_limit(&text));
    [physical, cgroup, address_space].into_iter().flatten().min()
}

/// `MemTotal:  16318412 kB` -> bytes.
fn meminfo_total(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let mut words = line.split_whitespace().skip(1);
    let kib: u64 = words.next()?.parse().ok()?;
    kib.checked_mul(1024)
}

/// The soft limit of `Max address space  4294967296  unlimited  bytes`, unless unlimited.
fn address_space_limit(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("Max address space"))?;
    line["Max address space".len()..].split_whitespace().next()?.parse().ok()
}

/// Reads a byte or element count for `--max-memory`, `--max-work` and `--max-input-bytes`: digits,
/// optionally followed by `K`, `M`, `G` or `T` (powers of 1024, either case, an optional `B` or
/// `iB` after them), or `unlimited`.
pub fn parse_count(text: &str) -> Result<u64> {
    let bad = |why: &str| Error::InvalidOp {
        op: "limits".into(),
        message: format!("{} is not a count ({why}); write digits with an optional K, M, G or T", super::quoted(text)),
    };
    if text.eq_ignore_ascii_case("unlimited") {
        return Ok(u64::MAX);
    }
    let digits_end = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let (digits, suffix) = text.split_at(digits_end);
    if digits.is_empty() {
        return Err(bad("it does not start with a digit"));
    }
    let shift = match suffix.to_ascii_uppercase().as_str() {
        "" | "B" => 0,
        "K" | "KB" | "KIB" => 10,
        "M" | "MB" | "MIB" => 20,
        "G" | "GB" | "GIB" => 30,
        "T" | "TB" | "TIB" => 40,
        _ => return Err(bad("unknown suffix")),
    };
    let value: u64 = digits.parse().map_err(|_| bad("too large"))?;
    value.checked_mul(1 << shift).ok_or_else(|| bad("too large"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts() {
        assert_eq!(parse_count("0").unwrap(), 0);
        assert_eq!(parse_count("123").unwrap(), 123);
        assert_eq!(parse_count("512M").unwrap(), 512 << 20);
        assert_eq!(parse_count("4g").unwrap(), 4 << 30);
        assert_eq!(parse_count("2GiB").unwrap(), 2 << 30);
        assert_eq!(parse_count("1T").unwrap(), 1 << 40);
        assert_eq!(parse_count("unlimited").unwrap(), u64::MAX);
        for bad in ["", "M", "-1", "1.5G", "12Q", "99999999999999999999", "16777216T", " 1"] {
            assert!(parse_count(bad).is_err(), "{bad:?}");
        }
        let long = "9".repeat(1000) + "X";
        let message = parse_count(&long).unwrap_err().to_string();
        assert!(message.len() < 300 && message.contains("901 more"), "{message}");
    }

    #[test]
    fn machine_memory() {
        assert_eq!(meminfo_total("MemTotal:       16318412 kB\nMemFree: 1 kB\n"), Some(16_710_053_888));
        let limits = "Limit                     Soft Limit           Hard Limit           Units\n\
                      Max address space         4294967296           unlimited            bytes\n";
        assert_eq!(address_space_limit(limits), Some(4_294_967_296));
        assert_eq!(
            address_space_limit("Max address space         unlimited            unlimited            bytes"),
            None
        );
        let defaults = Limits::for_this_machine();
        assert!(defaults.max_memory > 0);
        assert_eq!(defaults.max_work, DEFAULT_MAX_WORK);
    }
}
