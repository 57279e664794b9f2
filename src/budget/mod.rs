//! Limits that hold whatever the input: the stack a worker thread gets, a
//! deadline that long loops look at cheaply, and the process's memory
//! budget.
//!
//! - Stacks: the parsers bound nesting ([`crate::cat::parser::MAX_NESTING`],
//!   the litmus parsers' own limit) and the cat evaluator bounds calls
//!   ([`MAX_CALL_DEPTH`]); every thread that parses or evaluates (the
//!   command line's main work, the rayon pool, the server's workers) gets
//!   [`STACK_BYTES`], which holds the deepest walk those limits allow with
//!   room to spare.
//! - Time: [`Deadline`] is an optional instant with a cheap
//!   [`Deadline::passed_every`] for hot loops.
//! - Memory: a process-wide resident-memory budget ([`set_memory_limit`]),
//!   read from `/proc/self/status` by [`memory_exceeded`] every few
//!   thousand states or evaluations; the explorer and the cat evaluator stop
//!   with a limit message past it. It is per process, not per check: in the
//!   playground a check may be stopped because others hold memory, which is
//!   the point (the server stays up).
//!
//! [`projection`]: the one rule for giving up a search under a timeout
//! (thread paths, barrier orders, reads-from and coherence, `with` orders).

mod projection;
pub use projection::{PROJECT_AFTER, TimeBudget, margin};

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// Stack of every thread that parses or evaluates user input (64 MiB of
/// address space; only the pages a deep input touches are used).
pub const STACK_BYTES: usize = 64 << 20;

/// Deepest chain of cat function calls (recursive functions included) one
/// evaluation may make; a deeper one stops with a located error.
pub const MAX_CALL_DEPTH: u32 = 2_000;

/// Runs `f` on a thread with a [`STACK_BYTES`] stack and returns its result
/// (the command line's main work runs there: the main thread's stack is the
/// system's, often 8 MiB).
pub fn with_big_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    match std::thread::Builder::new()
        .name("litmix-main".into())
        .stack_size(STACK_BYTES)
        .spawn(f)
    {
        Ok(h) => match h.join() {
            Ok(v) => v,
            Err(p) => std::panic::resume_unwind(p),
        },
        Err(e) => panic!("cannot start the main worker thread: {e}"),
    }
}

/// Runs `f` on a worker of rayon's global pool (whose threads have
/// [`STACK_BYTES`] stacks, see [`init_thread_pool`]) and returns its result,
/// a panic included. Against [`with_big_stack`] this spares a thread's
/// start: the worker also takes part in `f`'s own parallel work, so no
/// core idles. Only for work that ends: while `f` runs, the pool has one
/// worker less for anything else (a server keeps its own thread).
pub fn on_pool<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    rayon::spawn(move || {
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
        let _ = tx.send(r);
    });
    match rx.recv() {
        Ok(Ok(v)) => v,
        Ok(Err(p)) => std::panic::resume_unwind(p),
        // The job was dropped unrun: only if the pool could not start.
        Err(_) => pool_dropped_the_job(),
    }
}

#[cold]
fn pool_dropped_the_job<T>() -> T {
    panic!("rayon's pool dropped the main work without running it")
}

/// Gives rayon's global pool [`STACK_BYTES`] stacks (once; later calls and
/// a pool already built are left as they are).
pub fn init_thread_pool() {
    let _ = rayon::ThreadPoolBuilder::new()
        .stack_size(STACK_BYTES)
        .build_global();
}

/// Makes glibc's heaps grow in steps of [`HEAP_STEP`] bytes at least, for
/// commands that run and end (not the server, whose freed memory must go
/// back). By default the heap of each worker thread grows a page or so at
/// a time, with one `mprotect` call each: about 220 calls for the 88 C
/// tests of herd's suite, some 5 % of that run's time. The pages are only
/// made accessible; none is touched before it is used. No value computed
/// depends on this.
pub fn grow_heap_in_big_steps() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        /// glibc's `M_TOP_PAD` parameter of `mallopt`.
        const M_TOP_PAD: i32 = -2;
        unsafe extern "C" {
            fn mallopt(param: i32, value: i32) -> i32;
        }
        // SAFETY: mallopt sets a tuning parameter of glibc's allocator; it
        // takes no pointer and is thread-safe.
        unsafe {
            mallopt(M_TOP_PAD, HEAP_STEP as i32);
        }
    }
}

/// The smallest growth of a glibc heap ([`grow_heap_in_big_steps`]).
pub const HEAP_STEP: usize = 4 << 20;

/// An optional deadline, looked at cheaply in hot loops.
#[derive(Clone, Debug, Default)]
pub struct Deadline {
    at: Option<Instant>,
    ticks: Cell<u32>,
}

impl Deadline {
    /// A deadline at `at` (none: never passes).
    pub fn new(at: Option<Instant>) -> Self {
        Deadline {
            at,
            ticks: Cell::new(0),
        }
    }

    /// The instant, if any.
    pub fn at(&self) -> Option<Instant> {
        self.at
    }

    /// Whether the deadline has passed (reads the clock).
    pub fn passed(&self) -> bool {
        self.at.is_some_and(|d| Instant::now() > d)
    }

    /// Whether the deadline has passed, reading the clock once every
    /// `every` calls (a power of two).
    pub fn passed_every(&self, every: u32) -> bool {
        if self.at.is_none() {
            return false;
        }
        let t = self.ticks.get().wrapping_add(1);
        self.ticks.set(t);
        t & (every - 1) == 0 && self.passed()
    }
}

/// Resident memory, in bytes, past which long searches stop (0: none).
static MEMORY_LIMIT: AtomicU64 = AtomicU64::new(0);

/// Sets the process's resident-memory budget (`None`: no budget).
pub fn set_memory_limit(bytes: Option<u64>) {
    MEMORY_LIMIT.store(bytes.unwrap_or(0), Ordering::Relaxed);
}

/// The process's resident-memory budget, if one is set.
pub fn memory_limit() -> Option<u64> {
    match MEMORY_LIMIT.load(Ordering::Relaxed) {
        0 => None,
        b => Some(b),
    }
}

/// The process's resident memory in bytes (`VmRSS` of `/proc/self/status`;
/// `None` where that file does not exist).
pub fn resident_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    vm_rss(&status)
}

/// `VmRSS` of a `/proc/PID/status` text, in bytes.
pub fn vm_rss(status: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kb: u64 = line
        .trim_start_matches("VmRSS:")
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kb * 1024)
}

/// With a memory budget set and resident memory over it: the limit
/// message (naming the figures and the option that raises it).
pub fn memory_exceeded() -> Option<String> {
    let limit = memory_limit()?;
    let rss = resident_bytes()?;
    (rss > limit).then(|| {
        format!(
            "the process holds {} MiB, over its memory budget of {} MiB (--max-memory)",
            rss >> 20,
            limit >> 20
        )
    })
}

/// Hands freed heap memory back to the system (after a large check in a
/// long-running server; glibc keeps freed pages otherwise).
pub fn release_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        unsafe extern "C" {
            fn malloc_trim(pad: usize) -> i32;
        }
        // SAFETY: malloc_trim only returns free memory of glibc's heap to
        // the system; it takes no pointer and is thread-safe.
        unsafe {
            malloc_trim(0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vm_rss_reads_kilobytes() {
        let status = "Name:\tlitmix\nVmPeak:\t  100 kB\nVmRSS:\t    2048 kB\nThreads:\t3\n";
        assert_eq!(vm_rss(status), Some(2048 * 1024));
        assert_eq!(vm_rss("Name: x\n"), None);
    }

    #[test]
    fn deadline_in_the_past_passes_on_the_sampled_call() {
        let d = Deadline::new(Some(Instant::now() - std::time::Duration::from_millis(1)));
        assert!(d.passed());
        let hits = (0..16).filter(|_| d.passed_every(8)).count();
        assert_eq!(hits, 2);
        assert!(!Deadline::new(None).passed_every(1));
    }

    #[test]
    fn big_stack_holds_deep_recursion() {
        fn depth(n: u32) -> u32 {
            let pad = [n as u8; 512];
            if n == 0 {
                return 0;
            }
            let below = depth(n - 1);
            // The frame stays live across the call.
            std::hint::black_box(&pad);
            1 + below
        }
        // 50,000 frames of over 512 bytes: far over a default 2 MiB stack.
        assert_eq!(with_big_stack(|| depth(50_000)), 50_000);
    }
}
