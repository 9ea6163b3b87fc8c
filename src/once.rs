//! Values built on first use and kept for the process, with or without `std`.
//!
//! Tables derived from the rounding core (a scalar type's split table, a plan's lookup table) cost
//! milliseconds to build and are the same every time, so they are built once. A [`Once`] holds one
//! value in a `static` and works without `std` (two threads that race to build it both build a
//! correct value; one is kept). A [`Memo`] holds one value per key (a plan's tables for each
//! (source, target, attributes, profile)); it needs a lock, so without `std` it keeps nothing and
//! each [`crate::Plan`] builds its own tables: build a plan once and run it many times.

use crate::alloc_prelude::*;

/// One value built on first use.
pub(crate) struct Once<T>(once_cell::race::OnceBox<T>);

impl<T> Once<T> {
    pub(crate) const fn new() -> Self {
        Once(once_cell::race::OnceBox::new())
    }

    /// The value, built by `build` if this is the first call.
    pub(crate) fn get_or_init(&self, build: impl FnOnce() -> T) -> &T {
        self.0.get_or_init(|| Box::new(build()))
    }

    /// The value if it is built.
    #[cfg_attr(not(feature = "strings"), allow(dead_code))] // the `strings` feature's text tables
    pub(crate) fn get(&self) -> Option<&T> {
        self.0.get()
    }

    /// The value, built by `build` if this is the first call; `build`'s error is returned and
    /// nothing is kept.
    #[cfg_attr(not(feature = "strings"), allow(dead_code))] // the `strings` feature's text tables
    pub(crate) fn get_or_try_init<E>(&self, build: impl FnOnce() -> Result<T, E>) -> Result<&T, E> {
        self.0.get_or_try_init(|| build().map(Box::new))
    }
}

/// One value per key, built on first use of the key (without `std`: built on every use).
pub(crate) struct Memo<K, V> {
    #[cfg(feature = "std")]
    map: std::sync::OnceLock<std::sync::Mutex<std::collections::HashMap<K, V>>>,
    #[cfg(not(feature = "std"))]
    map: core::marker::PhantomData<fn(K) -> V>,
}

impl<K: Eq + core::hash::Hash, V: Clone> Memo<K, V> {
    pub(crate) const fn new() -> Self {
        #[cfg(feature = "std")]
        return Memo { map: std::sync::OnceLock::new() };
        #[cfg(not(feature = "std"))]
        return Memo { map: core::marker::PhantomData };
    }

    /// The value of `key`, built by `build` if it is not kept yet. `build` runs outside the lock:
    /// two threads may both build the value of a key, and both get a correct one.
    pub(crate) fn get_or_try_build<E>(&self, key: K, build: impl FnOnce() -> Result<V, E>) -> Result<V, E> {
        #[cfg(feature = "std")]
        {
            use std::sync::PoisonError;
            let map = self.map.get_or_init(Default::default);
            if let Some(value) = map.lock().unwrap_or_else(PoisonError::into_inner).get(&key) {
                return Ok(value.clone());
            }
            let value = build()?;
            map.lock().unwrap_or_else(PoisonError::into_inner).insert(key, value.clone());
            Ok(value)
        }
        #[cfg(not(feature = "std"))]
        {
            let _ = key;
            build()
        }
    }
}
