//! The memory-limiting allocator behind each plugin's runtime.

use rquickjs::allocator::{Allocator, RustAllocator};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// An allocator that counts what the runtime holds and refuses to go over
/// the limit, recording that it did: an out-of-memory failure is known by
/// this flag, not by the engine's message.
pub(super) struct Limited {
    pub(super) used: usize,
    pub(super) limit: usize,
    pub(super) refused: Arc<AtomicBool>,
}

impl Limited {
    fn admit(&mut self, more: usize) -> bool {
        let fits = self.used.saturating_add(more) <= self.limit;
        if !fits {
            self.refused.store(true, Ordering::Relaxed);
        }
        fits
    }
}

// SAFETY: every block comes from `RustAllocator`, which upholds the
// contract; this only counts sizes and refuses requests over the limit.
unsafe impl Allocator for Limited {
    fn alloc(&mut self, size: usize) -> *mut u8 {
        if !self.admit(size) {
            return std::ptr::null_mut();
        }
        let ptr = RustAllocator.alloc(size);
        if !ptr.is_null() {
            // SAFETY: `ptr` was just allocated by `RustAllocator`.
            self.used += unsafe { RustAllocator::usable_size(ptr) };
        }
        ptr
    }

    fn calloc(&mut self, count: usize, size: usize) -> *mut u8 {
        let Some(total) = count.checked_mul(size) else {
            return std::ptr::null_mut();
        };
        if !self.admit(total) {
            return std::ptr::null_mut();
        }
        let ptr = RustAllocator.calloc(count, size);
        if !ptr.is_null() {
            // SAFETY: as in `alloc`.
            self.used += unsafe { RustAllocator::usable_size(ptr) };
        }
        ptr
    }

    unsafe fn dealloc(&mut self, ptr: *mut u8) {
        if ptr.is_null() {
            return;
        }
        self.used = self.used.saturating_sub(RustAllocator::usable_size(ptr));
        RustAllocator.dealloc(ptr);
    }

    unsafe fn realloc(&mut self, ptr: *mut u8, new_size: usize) -> *mut u8 {
        if ptr.is_null() {
            return self.alloc(new_size);
        }
        let old = RustAllocator::usable_size(ptr);
        if new_size > old && !self.admit(new_size - old) {
            return std::ptr::null_mut();
        }
        let new = RustAllocator.realloc(ptr, new_size);
        if !new.is_null() {
            self.used = self.used.saturating_sub(old) + RustAllocator::usable_size(new);
        }
        new
    }

    unsafe fn usable_size(ptr: *mut u8) -> usize {
        RustAllocator::usable_size(ptr)
    }
}
