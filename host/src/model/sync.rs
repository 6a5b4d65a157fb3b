//! The one poisoning policy of the host's locks.
//!
//! A lock is poisoned when a thread panicked while it held it. Every lock in
//! the host guards state that each holder leaves whole between statements
//! (a counter, a queue, a map of slots), and a plugin's panic is caught at
//! the engine's boundary, far from any of them. So a poisoned lock's value
//! is used as it is: the host keeps serving the other plugins and runs, and
//! never panics a second time because one thread panicked once. Every lock
//! is taken through these helpers.

use std::sync::{Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// Lock `m`, taking its value even if a panic poisoned it.
pub(crate) fn lock<T: ?Sized>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Read `l`, taking its value even if a panic poisoned it.
pub(crate) fn read<T: ?Sized>(l: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    l.read().unwrap_or_else(|e| e.into_inner())
}

/// Write `l`, taking its value even if a panic poisoned it.
pub(crate) fn write<T: ?Sized>(l: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    l.write().unwrap_or_else(|e| e.into_inner())
}
