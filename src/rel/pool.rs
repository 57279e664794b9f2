//! A per-thread free list of the word buffers of dropped relations.
//!
//! The cat evaluator builds and drops many short-lived relations of the
//! same size (one per operator, per candidate). Taking their buffers from
//! this list instead of the allocator saves a `calloc`/`free` pair each;
//! the contents are always re-initialised, so values never depend on it.

use std::cell::RefCell;

/// Buffers kept per thread, at most.
const KEEP: usize = 64;
/// Buffers larger than this many words go back to the allocator.
const MAX_WORDS: usize = 4096;

thread_local! {
    static FREE: RefCell<Vec<Vec<u64>>> = const { RefCell::new(Vec::new()) };
}

/// An empty buffer (length 0) from the free list, or a new one.
#[inline]
pub(crate) fn take() -> Vec<u64> {
    FREE.try_with(|f| f.try_borrow_mut().ok().and_then(|mut f| f.pop()))
        .ok()
        .flatten()
        .map(|mut v| {
            v.clear();
            v
        })
        .unwrap_or_default()
}

/// A buffer of `len` words, all zero.
#[inline]
pub(crate) fn zeroed(len: usize) -> Vec<u64> {
    let mut v = take();
    v.resize(len, 0);
    v
}

/// A copy of `words`.
#[inline]
pub(crate) fn copy_of(words: &[u64]) -> Vec<u64> {
    let mut v = take();
    v.extend_from_slice(words);
    v
}

/// Gives a buffer back.
#[inline]
pub(crate) fn recycle(v: Vec<u64>) {
    if v.capacity() == 0 || v.capacity() > MAX_WORDS {
        return;
    }
    let _ = FREE.try_with(|f| {
        if let Ok(mut f) = f.try_borrow_mut()
            && f.len() < KEEP
        {
            f.push(v);
        }
    });
}
