//! The GPU cache machine of seed 001 §5 (`rsp-cache`): per device an L2
//! cache with a lock file, per work-group an L1 cache and an RMW lock, a
//! synchronisation fifo in every cache, global memory, and per thread its
//! registers and program counter (Fig. 3a). Instructions follow Table 1,
//! environment transitions Table 2; the assembly is read by the front end
//! `litmus::rsp` and decoded from IR tags by [`isa`]. docs/rsp-cache.md has the rules, the reductions
//! and the arguments for them.
//!
//! A state is *complete* when every thread has run its last instruction and
//! no cache entry is dirty (all values flushed down to global memory): that
//! is when an outcome counts (seed 001 §6.1, "assembly executions"), and
//! the machine stops there: no transition is enabled from a complete state.

mod encode;
mod isa;
pub mod judge;
mod machine;
mod render;
#[cfg(test)]
mod tests;

pub use isa::{Level, Op, Scope, decode};

use super::machine::{Machine, MachineError};
use crate::diag::Diagnostic;
use crate::ir::outcome::observed_terms;
use crate::ir::{BinOp, Operand, Pos, Reg, Term, Test, Value};
use crate::verdict::{ItemView, StateView, ThreadView};
use std::collections::{HashMap, VecDeque};
use std::fmt::Write as _;

/// Knobs of the machine.
#[derive(Clone, Debug)]
pub struct RspOptions {
    /// Cacheline locking (`LK_L2`/`UL_L2`, and the lock-file checks of the
    /// environment) is implemented. Off (`rsp-cache-nolock`): `LK_L2` and
    /// `UL_L2` do nothing, i.e. hardware without cacheline stalls.
    pub l2_locking: bool,
    /// Use the reductions of docs/rsp-cache.md (eager local steps and fifo
    /// dequeues, no evictions, only flushes once every thread is done,
    /// no fetches of dead locations, dead clean entries merged).
    pub reduce: bool,
    /// How many times one thread may take a backward jump; a thread that
    /// would take one more is cut (the state counts as stuck).
    pub unroll: u32,
}

impl Default for RspOptions {
    fn default() -> Self {
        RspOptions {
            l2_locking: true,
            reduce: true,
            unroll: 2,
        }
    }
}

/// Most locations a test may use (live sets are 64-bit masks).
pub const MAX_LOCATIONS: usize = 64;
/// Most threads a test may have.
pub const MAX_THREADS: usize = 64;

/// A cache entry: value, hygiene (`dirty`), freshness (`valid`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Entry {
    pub val: Value,
    pub dirty: bool,
    pub valid: bool,
}

/// An element of a synchronisation fifo.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FifoEl {
    /// A location that may need flushing.
    Loc(u16),
    /// `FLUSH_t`: the flush marker of thread `t` (machine thread index).
    Flush(u16),
}

/// A cache: one entry per location (or none) and its fifo (front = tail in
/// the seed's words: the next element to leave).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Cache {
    pub entries: Vec<Option<Entry>>,
    pub fifo: VecDeque<FifoEl>,
}

impl Cache {
    fn new(n: usize) -> Self {
        Cache {
            entries: vec![None; n],
            fifo: VecDeque::new(),
        }
    }

    /// `store(C, x, v)`.
    fn store(&mut self, x: usize, v: Value) {
        self.entries[x] = Some(Entry {
            val: v,
            dirty: true,
            valid: true,
        });
        self.fifo.push_back(FifoEl::Loc(x as u16));
    }

    /// `invalidate(C, x)`.
    fn invalidate(&mut self, x: usize) {
        if let Some(e) = &mut self.entries[x] {
            e.valid = false;
        }
    }

    fn not_dirty(&self, x: usize) -> bool {
        self.entries[x].is_none_or(|e| !e.dirty)
    }

    fn valid_val(&self, x: usize) -> Option<Value> {
        self.entries[x].filter(|e| e.valid).map(|e| e.val)
    }

    fn has_marker(&self, t: u16) -> bool {
        self.fifo.contains(&FifoEl::Flush(t))
    }
}

/// A machine state (Fig. 3a); locks hold machine thread indices.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct State {
    /// Global memory.
    pub gl: Vec<Value>,
    /// L2 cache per device.
    pub l2: Vec<Cache>,
    /// Lock file per device: `lockfile[d * locations + x]`.
    pub lockfile: Vec<Option<u8>>,
    /// L1 cache per work-group (work-groups numbered across devices).
    pub l1: Vec<Cache>,
    /// RMW lock per work-group.
    pub rmw: Vec<Option<u8>>,
    /// Program counter per thread (index into its code).
    pub pc: Vec<u16>,
    /// Backward jumps taken per thread.
    pub jumps: Vec<u16>,
    /// Registers per thread, indexed as [`ThreadInfo::regs`].
    pub regs: Vec<Vec<Value>>,
    /// A thread was cut by the unroll bound: nothing can complete.
    pub cut: bool,
}

/// Environment transitions (Table 2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Env {
    EvictL1,
    EvictL2,
    FlushL1,
    FlushL2,
    FetchL1,
    FetchL2,
    DeqLocL1,
    DeqLocL2,
    DeqMarkerL1,
    DeqMarkerL2,
}

impl Env {
    fn name(self) -> &'static str {
        match self {
            Env::EvictL1 => "EVICT_L1",
            Env::EvictL2 => "EVICT_L2",
            Env::FlushL1 => "FLUSH_L1",
            Env::FlushL2 => "FLUSH_L2",
            Env::FetchL1 => "FETCH_L1",
            Env::FetchL2 => "FETCH_L2",
            Env::DeqLocL1 => "DEQLOC_L1",
            Env::DeqLocL2 => "DEQLOC_L2",
            Env::DeqMarkerL1 => "DEQMARKER_L1",
            Env::DeqMarkerL2 => "DEQMARKER_L2",
        }
    }

    fn is_l1(self) -> bool {
        matches!(
            self,
            Env::EvictL1 | Env::FlushL1 | Env::FetchL1 | Env::DeqLocL1 | Env::DeqMarkerL1
        )
    }
}

/// One transition: a thread's next instruction, or an environment
/// transition on a cache (`cache` is a work-group for L1 ones, a device for
/// L2 ones) triggered by thread `by` (whose locks count as ready).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Step {
    Exec(usize),
    Env {
        env: Env,
        cache: usize,
        loc: usize,
        by: usize,
    },
}

/// What the machine knows about one thread.
#[derive(Clone, Debug)]
pub struct ThreadInfo {
    /// Thread number of the test (`N` of `PN`).
    pub id: usize,
    pub dev: usize,
    /// Work-group index (across devices).
    pub wg: usize,
    pub code: Vec<Op>,
    /// The instructions as written.
    pub text: Vec<String>,
    /// Register names; a state's `regs[t][i]` holds `regs[i]`.
    pub regs: Vec<Reg>,
    /// Locations the code may still access from each pc (bit mask), one
    /// more entry for the end.
    live: Vec<u64>,
    /// Locations the code may still read from its L1 (`LD`, `INC_L1`)
    /// before its next `INV_L1` (every scope covers its own work-group),
    /// from each pc: a clean L1 entry of any other location is never read
    /// by this thread (docs/rsp-cache.md, R5).
    live_l1: Vec<u64>,
}

/// The machine for one RSP assembly test.
pub struct RspCache {
    name: String,
    opts: RspOptions,
    locs: Vec<String>,
    init: Vec<Value>,
    threads: Vec<ThreadInfo>,
    /// Device of each work-group.
    wg_dev: Vec<usize>,
    devices: usize,
    /// Register initial values per thread.
    reg_init: Vec<Vec<Value>>,
    /// Observed terms as (thread index, register index) or a location.
    observed: Vec<Observed>,
    has_flu_l1: bool,
    has_flu_l2: bool,
}

#[derive(Clone, Debug)]
enum Observed {
    Reg(usize, usize),
    Loc(usize),
    Const(Value),
}
