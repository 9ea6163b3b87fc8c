//! `lowbit_convert` allocates nothing on its path (a counting global allocator around many calls
//! of every kind: floats, integers, each mode, flush, ONNX Cast).

use lowbit_capi::*;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

mod support;
use support::format;

struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded to the system allocator unchanged; only a counter is added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller's contract is GlobalAlloc::alloc's, passed on.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `alloc` above, that is from `System`.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn scalar_conversions_allocate_nothing() {
    let names = [
        "float32",
        "float16",
        "e4m3",
        "e5m2",
        "e4m3,special=ieee,subnormal=flush",
        "float4e2m1",
        "float8e8m0",
        "int8",
        "uint4",
        "int32",
    ];
    let formats: Vec<lowbit_format> = names.iter().map(|n| format(n)).collect();
    let defaults = lowbit_options_default();
    let mut options = vec![defaults];
    for round in [LOWBIT_RTZ, LOWBIT_RDN, LOWBIT_RUP, LOWBIT_RMM, LOWBIT_ROD, LOWBIT_RAZ] {
        options.push(lowbit_options { round, ..defaults });
    }
    options.push(lowbit_options { round: LOWBIT_STOCHASTIC, random_width: 7, random_bits: 0x55, ..defaults });
    options.push(lowbit_options {
        saturate: 1,
        tininess: LOWBIT_TININESS_BEFORE,
        flush: LOWBIT_FLUSH_RESULTS | LOWBIT_FLUSH_OPERANDS,
        ..defaults
    });
    options.push(lowbit_options { onnx_cast: 1, saturate: 1, profile: LOWBIT_PROFILE_ONNXRUNTIME, ..defaults });
    // Warm up: a table built lazily on first use would count once, not per call.
    let mut sink = 0u64;
    let operands = [0u64, 1, 0x3F98_0000, 0x7FA0_0000, 0xFF80_0000, 0x4F80_0000, 0x3C, 0xFD];
    for &from in &formats {
        for &to in &formats {
            for o in &options {
                for &bits in &operands {
                    let mut flags = 0;
                    // SAFETY: readable options and a writable flag byte.
                    sink ^= unsafe { lowbit_convert(from, to, bits, o, &mut flags) };
                }
            }
        }
    }
    let (f32_, e4m3, int8) = (formats[0], formats[2], formats[7]);
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    for o in &options {
        for bits in [0u64, 0x3F98_0000, 0x7FA0_0000, 0xFF80_0000, 0x4F80_0000, 0x0000_0001] {
            let mut flags = 0;
            // SAFETY: as above.
            sink ^= unsafe { lowbit_convert(f32_, e4m3, bits, o, &mut flags) };
            assert_eq!(flags & LOWBIT_FLAG_ERROR, 0);
            // SAFETY: as above.
            sink ^= unsafe { lowbit_convert(f32_, int8, bits, o, &mut flags) };
            assert_eq!(flags & LOWBIT_FLAG_ERROR, 0);
            // SAFETY: as above.
            sink ^= unsafe { lowbit_convert(int8, e4m3, bits & 0xFF, o, &mut flags) };
            assert_eq!(flags & LOWBIT_FLAG_ERROR, 0);
        }
    }
    std::hint::black_box(sink);
    assert_eq!(ALLOCATIONS.load(Ordering::Relaxed) - before, 0, "lowbit_convert allocated");
}
