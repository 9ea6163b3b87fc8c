//! The accounting behind [`Limits`] during one graph run: memory is reserved before each
//! allocation and handed back when the [`Reservation`] is dropped (with the tensor it pays for),
//! work only adds up.

use super::limits::Limits;
use crate::error::{BudgetKind, Error, Result};
use crate::tensor::{Data, Tensor};
use std::cell::Cell;
use std::fmt::Display;
use std::rc::Rc;

struct Counters {
    max_memory: u64,
    max_work: u64,
    memory_in_use: Cell<u64>,
    peak_memory: Cell<u64>,
    work_done: Cell<u64>,
}

/// The budgets of one run. Cloning shares the counters.
#[derive(Clone)]
pub(crate) struct Budget {
    counters: Rc<Counters>,
}

impl Budget {
    pub(crate) fn new(limits: &Limits) -> Budget {
        Budget {
            counters: Rc::new(Counters {
                max_memory: limits.max_memory,
                max_work: limits.max_work,
                memory_in_use: Cell::new(0),
                peak_memory: Cell::new(0),
                work_done: Cell::new(0),
            }),
        }
    }

    /// Adds `elements` to the work done, or fails naming `site` if that goes over the budget.
    pub(crate) fn charge_work(&self, elements: u64, site: &dyn Display) -> Result<()> {
        let c = &self.counters;
        let done = c.work_done.get();
        match done.checked_add(elements) {
            Some(total) if total <= c.max_work => {
                c.work_done.set(total);
                Ok(())
            }
            _ => Err(Error::OverBudget {
                budget: BudgetKind::Work,
                node: site.to_string(),
                needed: elements,
                used: done,
                limit: c.max_work,
            }),
        }
    }

    /// An empty reservation, to grow before each allocation.
    pub(crate) fn empty_reservation(&self) -> Reservation {
        Reservation { counters: Rc::clone(&self.counters), bytes: 0 }
    }

    /// Reserves `bytes`, or fails naming `site`.
    pub(crate) fn reserve(&self, bytes: u64, site: &dyn Display) -> Result<Reservation> {
        let mut reservation = self.empty_reservation();
        reservation.grow(bytes, site)?;
        Ok(reservation)
    }

    /// The most bytes held at once so far.
    pub(crate) fn peak_memory(&self) -> u64 {
        self.counters.peak_memory.get()
    }

    /// The elements processed so far.
    pub(crate) fn work_done(&self) -> u64 {
        self.counters.work_done.get()
    }
}

/// Bytes held against the memory budget until this is dropped.
pub(crate) struct Reservation {
    counters: Rc<Counters>,
    bytes: u64,
}

impl Reservation {
    /// Holds `bytes` more, or fails naming `site` (and holds nothing more).
    pub(crate) fn grow(&mut self, bytes: u64, site: &dyn Display) -> Result<()> {
        let c = &self.counters;
        let in_use = c.memory_in_use.get();
        match in_use.checked_add(bytes) {
            Some(total) if total <= c.max_memory => {
                c.memory_in_use.set(total);
                c.peak_memory.set(c.peak_memory.get().max(total));
                self.bytes += bytes;
                Ok(())
            }
            _ => Err(Error::OverBudget {
                budget: BudgetKind::Memory,
                node: site.to_string(),
                needed: bytes,
                used: in_use,
                limit: c.max_memory,
            }),
        }
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        let in_use = &self.counters.memory_in_use;
        in_use.set(in_use.get() - self.bytes);
    }
}

/// The bytes a tensor holds: its elements (the strings' text and their end offsets), its shape and
/// the tensor itself.
pub(crate) fn tensor_bytes(t: &Tensor) -> u64 {
    let elements = match t.data() {
        Data::Raw(raw) => raw.len() as u64,
        Data::Strings(strings) => strings.heap_bytes(),
    };
    elements + TENSOR_OVERHEAD + 8 * t.shape().len() as u64
}

/// What a `Tensor` takes besides its elements and its shape.
pub(crate) const TENSOR_OVERHEAD: u64 = core::mem::size_of::<Tensor>() as u64;

/// What `count` strings take besides their text (their end offsets in a [`crate::texts::Texts`]).
pub(crate) fn string_headers(count: usize) -> u64 {
    crate::texts::Texts::index_bytes(count)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reservations_are_released_when_dropped() {
        let budget = Budget::new(&Limits { max_memory: 100, max_work: 10, max_input_bytes: 0 });
        let a = budget.reserve(60, &"a").unwrap();
        let err = budget.reserve(50, &"node b").err().unwrap();
        assert!(matches!(err, Error::OverBudget { budget: BudgetKind::Memory, needed: 50, used: 60, limit: 100, .. }));
        assert!(err.to_string().starts_with("node b: over the memory budget of 100 bytes (--max-memory)"), "{err}");
        drop(a);
        let mut b = budget.reserve(50, &"b").unwrap();
        b.grow(50, &"b").unwrap();
        assert!(b.grow(1, &"b").is_err());
        drop(b);
        assert_eq!(budget.peak_memory(), 100);
        budget.charge_work(10, &"w").unwrap();
        let err = budget.charge_work(1, &"w").unwrap_err();
        assert!(matches!(err, Error::OverBudget { budget: BudgetKind::Work, .. }), "{err}");
        assert!(budget.charge_work(u64::MAX, &"w").is_err());
        assert_eq!(budget.work_done(), 10);
    }
}
