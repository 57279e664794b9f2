//! The global allocator: a per-thread cache of freed small blocks in front
//! of the system allocator.
//!
//! The checker allocates and frees many small blocks (tokens, names,
//! instructions, sets, result maps), often more of one size at a time than
//! the C library's own per-thread cache keeps, so most frees went to its
//! slower shared bins. Here each thread keeps up to [`KEEP`] freed blocks
//! per size class (16, 32, ..., 512 bytes, alignment at most 16) and hands
//! them out again; everything else goes to [`Backend`] unchanged. A block of
//! a class is always obtained from and returned to [`Backend`] with that
//! class's layout, so a block freed by another thread, or after this
//! thread's cache is gone, is handled the same way. Nothing reads the
//! addresses or the former contents of blocks, so no value computed
//! depends on this. Behind the cache, [`Backend`] is the C library's
//! malloc, or mimalloc once [`prefer_mimalloc`] is called (synthesis and
//! comparison), each block going back to the allocator it came from.

use std::alloc::{GlobalAlloc, Layout};
use std::cell::{Cell, UnsafeCell};
use std::ptr;
use std::sync::atomic::{AtomicBool, Ordering};

/// Whether new blocks come from mimalloc ([`prefer_mimalloc`]).
static MIMALLOC: AtomicBool = AtomicBool::new(false);

/// From now on, blocks this allocator does not cache come from mimalloc
/// instead of the C library's malloc (for commands that run and end:
/// searches that allocate and free millions of blocks run 5–10 % faster;
/// the server keeps glibc's malloc, whose freed memory `malloc_trim`
/// hands back). Blocks obtained before are still freed by the C library:
/// [`Backend`] asks mimalloc whether a block is its own.
pub fn prefer_mimalloc() {
    MIMALLOC.store(true, Ordering::Relaxed);
}

/// The allocator behind the cache: the C library's malloc, or mimalloc
/// after [`prefer_mimalloc`]. Each block goes back to the allocator it
/// came from.
struct Backend;

impl Backend {
    /// Whether block `p` is mimalloc's.
    #[inline]
    fn is_mimallocs(p: *mut u8) -> bool {
        // SAFETY: mimalloc looks the address up in its own segment and
        // arena maps; it reads nothing at `p`.
        MIMALLOC.load(Ordering::Relaxed)
            && unsafe { libmimalloc_sys::mi_is_in_heap_region(p.cast()) }
    }

    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if MIMALLOC.load(Ordering::Relaxed) {
            // SAFETY: a non-zero size and a power-of-two alignment.
            unsafe { libmimalloc_sys::mi_malloc_aligned(layout.size(), layout.align()).cast() }
        } else {
            // SAFETY: forwarded as is.
            unsafe { std::alloc::System.alloc(layout) }
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if MIMALLOC.load(Ordering::Relaxed) {
            // SAFETY: as for `alloc`.
            unsafe { libmimalloc_sys::mi_zalloc_aligned(layout.size(), layout.align()).cast() }
        } else {
            // SAFETY: forwarded as is.
            unsafe { std::alloc::System.alloc_zeroed(layout) }
        }
    }

    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        if Self::is_mimallocs(p) {
            // SAFETY: a live block of mimalloc's.
            unsafe { libmimalloc_sys::mi_free(p.cast()) }
        } else {
            // SAFETY: a live block of the C library's, with its layout.
            unsafe { std::alloc::System.dealloc(p, layout) }
        }
    }

    unsafe fn realloc(&self, p: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if Self::is_mimallocs(p) {
            // SAFETY: a live block of mimalloc's; a valid new size.
            return unsafe {
                libmimalloc_sys::mi_realloc_aligned(p.cast(), new_size, layout.align()).cast()
            };
        }
        if !MIMALLOC.load(Ordering::Relaxed) {
            // SAFETY: forwarded as is.
            return unsafe { std::alloc::System.realloc(p, layout, new_size) };
        }
        // A block of the C library's, moved to mimalloc.
        // SAFETY: the caller guarantees the new layout is valid.
        let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        // SAFETY: `p` holds `layout.size()` bytes, the new block `new_size`.
        unsafe {
            let q = self.alloc(new_layout);
            if !q.is_null() {
                ptr::copy_nonoverlapping(p, q, layout.size().min(new_size));
                std::alloc::System.dealloc(p, layout);
            }
            q
        }
    }
}

/// Size classes are multiples of this many bytes.
const GRAIN: usize = 16;
/// Classes of 16 to 512 bytes.
const CLASSES: usize = 32;
/// Freed blocks kept per class and thread.
const KEEP: u32 = 256;
/// The alignment of every cached block (the system allocator's minimum).
const ALIGN: usize = 16;

/// The allocator (see the module documentation).
pub struct SmallAlloc;

/// One thread's free lists: per class, a chain of free blocks linked
/// through their first word, and its length. No `Drop` of its own, so the
/// thread-local holding it is a plain thread-local word with no
/// registration check on each access; [`Flush`] frees the blocks at
/// thread exit.
struct Bins {
    head: [*mut u8; CLASSES],
    len: [u32; CLASSES],
}

/// This thread's lists cannot be used yet: the first use registers [`Flush`].
const UNINIT: u8 = 0;
/// [`Flush`] is being registered (which may allocate): use the system allocator.
const BUSY: u8 = 1;
/// The lists are in use.
const READY: u8 = 2;
/// The thread is exiting and its lists were freed: use the system allocator.
const DEAD: u8 = 3;

thread_local! {
    /// The state of this thread's `BINS` (one of the constants above).
    static STATE: Cell<u8> = const { Cell::new(UNINIT) };
    static BINS: UnsafeCell<Bins> = const {
        UnsafeCell::new(Bins {
            head: [ptr::null_mut(); CLASSES],
            len: [0; CLASSES],
        })
    };
    /// Registered on a thread's first use of its lists; its destructor
    /// hands the kept blocks back to the system allocator.
    static FLUSH: Flush = const { Flush };
}

/// Frees this thread's kept blocks when the thread exits (see [`FLUSH`]).
struct Flush;

impl Drop for Flush {
    fn drop(&mut self) {
        // Later allocations of this thread (other destructors) go to the
        // system allocator.
        let _ = STATE.try_with(|s| s.set(DEAD));
        let _ = BINS.try_with(|b| {
            // SAFETY: the lists are no longer used (state DEAD).
            let b = unsafe { &mut *b.get() };
            for c in 0..CLASSES {
                let mut p = std::mem::replace(&mut b.head[c], ptr::null_mut());
                b.len[c] = 0;
                while !p.is_null() {
                    // SAFETY: `p` is a free block of class `c` obtained from
                    // `Backend` with `class_layout(c)`; its first word links
                    // the next one.
                    unsafe {
                        let next = p.cast::<*mut u8>().read();
                        Backend.dealloc(p, class_layout(c));
                        p = next;
                    }
                }
            }
        });
    }
}

/// The class of `layout`, when its blocks are cached.
#[inline]
fn class(layout: Layout) -> Option<usize> {
    let size = layout.size();
    if layout.align() <= ALIGN && size > 0 && size <= GRAIN * CLASSES {
        Some((size - 1) / GRAIN)
    } else {
        None
    }
}

/// The layout every block of class `c` has with the system allocator.
#[inline]
fn class_layout(c: usize) -> Layout {
    // SAFETY: a non-zero multiple of 16 with alignment 16.
    unsafe { Layout::from_size_align_unchecked((c + 1) * GRAIN, ALIGN) }
}

/// Runs `f` on this thread's free lists, or gives `None` when they cannot
/// be used (being set up, or already freed at thread exit). `f` must not
/// allocate.
#[inline]
fn with_bins<R>(f: impl FnOnce(&mut Bins) -> R) -> Option<R> {
    // SAFETY (the `&mut`): the only references to this thread's `Bins` are
    // made here and in `Flush::drop` (state DEAD, so not here), one at a
    // time: `f` does not allocate, so does not re-enter.
    match STATE.with(Cell::get) {
        READY => Some(BINS.with(|b| f(unsafe { &mut *b.get() }))),
        UNINIT => {
            STATE.with(|s| s.set(BUSY));
            // Registers `Flush`'s destructor; what that allocates goes to
            // the system allocator (state BUSY).
            if FLUSH.try_with(|_| ()).is_err() {
                // Too late in the thread's exit to register it.
                STATE.with(|s| s.set(DEAD));
                return None;
            }
            STATE.with(|s| s.set(READY));
            Some(BINS.with(|b| f(unsafe { &mut *b.get() })))
        }
        _ => None,
    }
}

/// The first kept block of class `c` in `b`, taken off its list; null
/// when the list is empty.
#[inline(always)]
fn pop(b: &mut Bins, c: usize) -> *mut u8 {
    let p = b.head[c];
    if !p.is_null() {
        // SAFETY: a free block of class `c`, linking the next.
        b.head[c] = unsafe { p.cast::<*mut u8>().read() };
        b.len[c] -= 1;
    }
    p
}

/// Keeps block `p` of class `c` in `b` unless its list is full; whether
/// it did.
#[inline(always)]
fn push(b: &mut Bins, p: *mut u8, c: usize) -> bool {
    if b.len[c] >= KEEP {
        return false;
    }
    // SAFETY: `p` is a block of at least 16 bytes, aligned to 16, no
    // longer in use: its first word links the chain.
    unsafe { p.cast::<*mut u8>().write(b.head[c]) };
    b.head[c] = p;
    b.len[c] += 1;
    true
}

/// Runs `f` on this thread's lists when they are in use (state `READY`),
/// with no other check: the fast paths of [`SmallAlloc`]'s `alloc` and
/// `dealloc`, which call nothing and so save no registers.
#[inline(always)]
fn with_ready_bins<R>(f: impl FnOnce(&mut Bins) -> R) -> Option<R> {
    if STATE.with(Cell::get) != READY {
        return None;
    }
    // SAFETY: see `with_bins`; `f` does not allocate.
    Some(BINS.with(|b| f(unsafe { &mut *b.get() })))
}

/// `alloc` when the fast path has no block: the lists set up on first use,
/// or the system allocator.
#[cold]
#[inline(never)]
unsafe fn alloc_slow(layout: Layout) -> *mut u8 {
    let Some(c) = class(layout) else {
        // SAFETY: forwarded as is.
        return unsafe { Backend.alloc(layout) };
    };
    match with_bins(|b| pop(b, c)) {
        Some(p) if !p.is_null() => p,
        // SAFETY: a valid non-zero layout.
        _ => unsafe { Backend.alloc(class_layout(c)) },
    }
}

/// `dealloc` when the fast path did not keep the block.
#[cold]
#[inline(never)]
unsafe fn dealloc_slow(p: *mut u8, layout: Layout) {
    let Some(c) = class(layout) else {
        // SAFETY: `p` came from `Backend` with `layout`.
        return unsafe { Backend.dealloc(p, layout) };
    };
    if with_bins(|b| push(b, p, c)) != Some(true) {
        // SAFETY: blocks of class `c` come from `Backend` with this layout.
        unsafe { Backend.dealloc(p, class_layout(c)) }
    }
}

unsafe impl GlobalAlloc for SmallAlloc {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if let Some(c) = class(layout)
            && let Some(p) = with_ready_bins(|b| pop(b, c))
            && !p.is_null()
        {
            return p;
        }
        // SAFETY: the caller's layout, forwarded.
        unsafe { alloc_slow(layout) }
    }

    #[inline]
    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        if let Some(c) = class(layout)
            && with_ready_bins(|b| push(b, p, c)) == Some(true)
        {
            return;
        }
        // SAFETY: the caller's block and layout, forwarded.
        unsafe { dealloc_slow(p, layout) }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if class(layout).is_none() {
            // SAFETY: forwarded as is.
            return unsafe { Backend.alloc_zeroed(layout) };
        }
        // SAFETY: a valid layout; the block has at least `layout.size()` bytes.
        unsafe {
            let p = self.alloc(layout);
            if !p.is_null() {
                ptr::write_bytes(p, 0, layout.size());
            }
            p
        }
    }

    #[inline]
    unsafe fn realloc(&self, p: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller guarantees `new_size`, rounded up to the
        // alignment, does not overflow.
        let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        match (class(layout), class(new_layout)) {
            // SAFETY: forwarded as is.
            (None, None) => unsafe { Backend.realloc(p, layout, new_size) },
            // The block already has room for the new size.
            (Some(a), Some(b)) if a == b => p,
            _ => {
                // SAFETY: `p` holds `layout.size()` bytes; the new block
                // at least `new_size`.
                unsafe {
                    let q = self.alloc(new_layout);
                    if !q.is_null() {
                        ptr::copy_nonoverlapping(p, q, layout.size().min(new_size));
                        self.dealloc(p, layout);
                    }
                    q
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Blocks taken before the switch to mimalloc go back to the C
    /// library, whether freed or grown; blocks taken after are mimalloc's
    /// and go back to it. (The tests' own global allocator is the
    /// standard one, so switching here touches only this module.)
    #[test]
    fn each_block_goes_back_to_its_own_allocator() {
        let b = Backend;
        let small = Layout::from_size_align(24, 8).unwrap();
        let big = Layout::from_size_align(1 << 20, 64).unwrap();
        // SAFETY: valid layouts; each block is written within its size and
        // freed once, with the layout it was taken with.
        unsafe {
            let before: Vec<*mut u8> = [small, big].iter().map(|&l| b.alloc(l)).collect();
            for (&p, l) in before.iter().zip([small, big]) {
                assert!(!p.is_null());
                ptr::write_bytes(p, 7, l.size());
            }
            prefer_mimalloc();
            assert!(before.iter().all(|&p| !Backend::is_mimallocs(p)));
            // Grown after the switch: moved into mimalloc, contents kept.
            let grown = b.realloc(before[0], small, 4096);
            assert!(Backend::is_mimallocs(grown));
            assert!((0..24).all(|i| *grown.add(i) == 7));
            b.dealloc(before[1], big);
            let after = b.alloc(big);
            assert!(Backend::is_mimallocs(after) && (after as usize).is_multiple_of(64));
            let zeroed = b.alloc_zeroed(small);
            assert!(Backend::is_mimallocs(zeroed) && (0..24).all(|i| *zeroed.add(i) == 0));
            b.dealloc(grown, Layout::from_size_align(4096, 8).unwrap());
            b.dealloc(after, big);
            b.dealloc(zeroed, small);
        }
    }

    #[test]
    fn blocks_come_back_and_keep_their_contents() {
        let a = SmallAlloc;
        for size in [1usize, 8, 15, 16, 17, 100, 256, 257, 512, 513, 4000] {
            let layout = Layout::from_size_align(size, 8).unwrap();
            unsafe {
                let ps: Vec<*mut u8> = (0..100).map(|_| a.alloc(layout)).collect();
                for (i, &p) in ps.iter().enumerate() {
                    assert!(!p.is_null());
                    ptr::write_bytes(p, i as u8, size);
                }
                for (i, &p) in ps.iter().enumerate() {
                    assert!((0..size).all(|k| *p.add(k) == i as u8));
                }
                let z = a.alloc_zeroed(layout);
                assert!((0..size).all(|k| *z.add(k) == 0));
                let r = a.realloc(z, layout, size * 3);
                assert!((0..size).all(|k| *r.add(k) == 0));
                a.dealloc(r, Layout::from_size_align(size * 3, 8).unwrap());
                for p in ps {
                    a.dealloc(p, layout);
                }
            }
        }
    }

    #[test]
    fn other_threads_free_what_one_allocated() {
        let v: Vec<Vec<u32>> = (0..1000).map(|i| vec![i; i as usize % 70]).collect();
        let total: u64 = std::thread::spawn(move || v.iter().flatten().map(|&x| x as u64).sum())
            .join()
            .unwrap();
        let want: u64 = (0..1000u64).map(|i| i * (i % 70)).sum();
        assert_eq!(total, want);
    }
}
