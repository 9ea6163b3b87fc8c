//! The checks of the `checkpoint` fuzz target, shared with `tests/fuzz_seeds.rs` (which replays
//! the committed seeds on a stable toolchain).
//!
//! Hostile bytes into the checkpoint readers: `lowbit::checkpoint::parse_bytes` reads them as a
//! GGUF file (when they start with `GGUF`) or a safetensors file.
//!
//! Asserts:
//! * neither reader panics nor aborts on an allocation (counts, string lengths and header lengths
//!   larger than the input are typed `Err`s; run with `-rss_limit_mb`/`-malloc_limit_mb`);
//! * every tensor of a file that reads lies inside the input, tensors do not overlap, and each
//!   takes exactly the bytes its type and shape need (plain dtypes: ONNX's raw length; ggml
//!   blocks: elements / block elements * block bytes).

use lowbit::checkpoint::{parse_bytes, StoredType};

/// One fuzz input: any bytes.
pub fn run(data: &[u8]) {
    let Ok((_, tensors)) = parse_bytes(data) else { return };
    let mut spans: Vec<(u64, u64)> = Vec::with_capacity(tensors.len());
    for t in &tensors {
        let end = t.offset.checked_add(t.len).expect("offset + len fits");
        assert!(end <= data.len() as u64, "{} ends at {end}, past the input ({})", t.name, data.len());
        // A zero dimension makes an empty tensor whatever the others are (in any order).
        let elements = if t.shape.contains(&0) {
            0
        } else {
            t.shape.iter().try_fold(1usize, |n, &d| n.checked_mul(d)).expect("the element count fits")
        };
        let want = match t.stored {
            StoredType::Plain(dtype) => lowbit::packing::raw_len(dtype, elements).expect("a raw layout") as u64,
            StoredType::Ggml(ggml) => {
                let (per_block, bytes) = ggml.block();
                assert_eq!(elements % per_block, 0, "{}", t.name);
                (elements / per_block * bytes) as u64
            }
        };
        assert_eq!(t.len, want, "{}: {} {:?}", t.name, t.stored, t.shape);
        if t.len > 0 {
            spans.push((t.offset, end));
        }
    }
    spans.sort_unstable();
    for pair in spans.windows(2) {
        assert!(pair[0].1 <= pair[1].0, "tensors overlap: {pair:?}");
    }
}
