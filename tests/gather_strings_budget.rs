//! Gather over STRING data is charged the whole output's text before anything is allocated: a
//! 10 GB output under a 2 GiB memory budget is refused at once, with the process's heap never
//! growing past a few MiB (it used to copy string runs until the budget ran out, 2 GiB). Its own
//! test binary: the counting allocator below measures this one test alone.

#[path = "support/models.rs"]
mod models;

use lowbit::onnx::limits::Limits;
use lowbit::onnx::runner::Model;
use lowbit::{BudgetKind, Error, Profile, Tensor};
use models::*;
use prost::Message;
use std::alloc::{GlobalAlloc, Layout, System};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The system allocator, counting the bytes live and the most ever live at once.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is passed to the system allocator unchanged; only counters are added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for `alloc` is passed on.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let live = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(live, Ordering::Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract for `dealloc` is passed on.
        unsafe { System.dealloc(p, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, p: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract for `realloc` is passed on.
        let q = unsafe { System.realloc(p, layout, new_size) };
        if !q.is_null() {
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
            let live = LIVE.fetch_add(new_size, Ordering::Relaxed) + new_size;
            PEAK.fetch_max(live, Ordering::Relaxed);
        }
        q
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

const MIB: usize = 1 << 20;

#[test]
fn a_ten_gigabyte_string_gather_is_refused_before_anything_is_allocated() {
    // One string of 100,000 bytes gathered 100,000 times: 10^10 bytes of text.
    let data = Tensor::from_strings(vec![1], vec!["x".repeat(100_000)]).unwrap();
    let indices = int64s(vec![100_000], &vec![0; 100_000]);
    let g = graph(vec![node("Gather", "repeat", &["data", "indices"], &["y"])], &["data", "indices"], &["y"]);
    let model = Model::from_bytes(&model(g, 13).encode_to_vec()).unwrap();
    let inputs: HashMap<String, Tensor> = [("data".to_string(), data), ("indices".to_string(), indices)].into();
    let limits = Limits { max_memory: 2 << 30, max_work: u64::MAX, max_input_bytes: 1 << 30 };

    let before = LIVE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let err = model.run_measured(&inputs, Profile::Spec, &limits).expect_err("10 GB is over a 2 GiB budget");
    let grew = PEAK.load(Ordering::Relaxed) - before;

    match &err {
        // The text is asked for whole: 10^10 bytes (the 100,000 end offsets were charged first).
        Error::OverBudget { budget: BudgetKind::Memory, node, needed, .. } => {
            assert!(node.contains("Gather node \"repeat\""), "{err}");
            assert_eq!(*needed, 10_000_000_000, "{err}");
        }
        other => panic!("expected the memory budget's error, got {other}"),
    }
    // The indices read (100,000 x 24 bytes) and the model are all that was allocated.
    assert!(grew < 16 * MIB, "the refused Gather allocated {grew} bytes");
}
