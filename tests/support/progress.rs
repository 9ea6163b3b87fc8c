//! Progress of a long (ignored) test on standard error, every 1/16 of the work, so a person
//! running `cargo test --release -- --ignored --nocapture` sees it moving.

// Each test crate uses a part of it.
#![allow(dead_code)]

use std::sync::atomic::{AtomicU64, Ordering};

pub struct Progress {
    label: String,
    total: u64,
    done: AtomicU64,
    started: std::time::Instant,
}

impl Progress {
    pub fn new(label: impl Into<String>, total: u64) -> Progress {
        Progress { label: label.into(), total, done: AtomicU64::new(0), started: std::time::Instant::now() }
    }

    /// Counts `n` more units done (from any thread); prints when a sixteenth boundary is crossed.
    pub fn add(&self, n: u64) {
        let before = self.done.fetch_add(n, Ordering::Relaxed);
        self.report(before, before + n);
    }

    /// Sets the units done to `done` (a callback that reports totals, such as `sweep`'s).
    pub fn set(&self, done: u64) {
        let before = self.done.swap(done, Ordering::Relaxed);
        self.report(before, done);
    }

    fn report(&self, before: u64, after: u64) {
        if let Some(line) = self.line(before, after) {
            eprintln!("{line}");
        }
    }

    /// The line to print when the count goes from `before` to `after`: one per sixteenth crossed.
    pub fn line(&self, before: u64, after: u64) -> Option<String> {
        let step = (self.total / 16).max(1);
        (after / step > before / step).then(|| {
            format!(
                "{}: {}/16 done ({:.0} s)",
                self.label,
                (after * 16 / self.total.max(1)).min(16),
                self.started.elapsed().as_secs_f64()
            )
        })
    }
}
