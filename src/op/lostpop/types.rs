//! LOST-POP state: requests, order constraints, per-thread control state.

use crate::ir::{BinOp, Value};

/// A request id: `(thread << 16) | seq`, with `seq` counting the requests
/// a thread has accepted. Ids do not depend on the interleaving, so a state
/// is its own canonical form. Initial writes use thread [`INIT_THREAD`] and
/// the location as `seq`.
pub type Rid = u32;

/// The pseudo-thread of the initial writes.
pub const INIT_THREAD: u32 = 0xFFFF;

/// The id of request `seq` of `thread`.
pub fn rid(thread: u32, seq: u32) -> Rid {
    (thread << 16) | seq
}

/// The thread of a request id.
pub fn rid_thread(r: Rid) -> u32 {
    r >> 16
}

/// PTX memory semantics, ordered `Weak < Relaxed < {Acquire, Release} <
/// AcqRel < Sc` (x86 requests are `Relaxed` for the meet).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Sem {
    Weak,
    Relaxed,
    Acquire,
    Release,
    AcqRel,
    Sc,
}

impl Sem {
    /// `sem >= acquire`.
    pub fn acq(self) -> bool {
        matches!(self, Sem::Acquire | Sem::AcqRel | Sem::Sc)
    }
    /// `sem >= release`.
    pub fn rel(self) -> bool {
        matches!(self, Sem::Release | Sem::AcqRel | Sem::Sc)
    }
    /// Short name for labels.
    pub fn name(self) -> &'static str {
        match self {
            Sem::Weak => "weak",
            Sem::Relaxed => "rlx",
            Sem::Acquire => "acq",
            Sem::Release => "rel",
            Sem::AcqRel => "acq_rel",
            Sem::Sc => "sc",
        }
    }
}

/// What a request is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    Read,
    Write,
    /// A read-modify-write: a read until satisfied, a write throughout.
    Rmw,
    Fence,
}

/// The architecture of a thread (and of its requests).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LpArch {
    X86,
    Ptx,
}

/// An RMW's operation with its operands resolved at accept time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ROp {
    Bin(BinOp, Value),
    Exch(Value),
    Cas(Value, Value),
    Inc(Value),
    Dec(Value),
}

impl ROp {
    /// The value written after reading `old`; `None` for a failing CAS.
    pub fn apply(self, old: Value) -> Result<Option<Value>, String> {
        Ok(Some(match self {
            ROp::Bin(op, v) => op.apply(old, v)?,
            ROp::Exch(v) => v,
            ROp::Cas(exp, new) => {
                if old != exp {
                    return Ok(None);
                }
                new
            }
            ROp::Inc(b) => match (old, b) {
                (Value::Int(o), Value::Int(b)) => Value::Int(if o >= b { 0 } else { o + 1 }),
                _ => return Err("inc on an address".into()),
            },
            ROp::Dec(b) => match (old, b) {
                (Value::Int(o), Value::Int(b)) => {
                    Value::Int(if o == 0 || o > b { b } else { o - 1 })
                }
                _ => return Err("dec on an address".into()),
            },
        }))
    }
}

/// One active request.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Req {
    pub id: Rid,
    pub kind: Kind,
    pub arch: LpArch,
    /// Index of the instruction in its thread's code (0 for initial writes).
    pub instr: u16,
    /// Location (memory requests).
    pub loc: u32,
    pub sem: Sem,
    /// The request's scope as a set of threads.
    pub scope: u64,
    /// Value written (writes; RMWs once satisfied).
    pub value: Option<Value>,
    /// RMW operation.
    pub op: Option<ROp>,
    /// Destination register index (reads, RMWs).
    pub dst: Option<u16>,
    /// Threads it has propagated to.
    pub prop: u64,
    /// Threads it is a predecessor at.
    pub pred: u64,
    /// RMW: satisfied (now a plain write).
    pub done: bool,
}

impl Req {
    /// Reads or writes memory.
    pub fn is_mem(&self) -> bool {
        self.kind != Kind::Fence
    }
    /// Writes memory (RMWs included).
    pub fn writes(&self) -> bool {
        matches!(self.kind, Kind::Write | Kind::Rmw)
    }
    /// Still waiting to read (reads, unsatisfied RMWs).
    pub fn reads(&self) -> bool {
        self.kind == Kind::Read || (self.kind == Kind::Rmw && !self.done)
    }
    /// Reads memory at all (for order rules).
    pub fn read_like(&self) -> bool {
        matches!(self.kind, Kind::Read | Kind::Rmw)
    }
    /// Originating thread.
    pub fn thread(&self) -> u32 {
        rid_thread(self.id)
    }
}

/// A thread's control state.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TState {
    /// Next instruction.
    pub pc: u16,
    /// Register values; `None` while the read giving it is unsatisfied.
    pub regs: Vec<Option<Value>>,
    /// Per register: the request (`seq`) whose value it awaits, if any; a
    /// read satisfied after a later write to its register leaves it alone.
    pub owner: Vec<Option<u16>>,
    /// Backward jumps taken (bounded by the unroll limit).
    pub jumps: u16,
    /// Requests accepted so far (the next request's `seq`).
    pub seq: u16,
    /// The unroll bound cut this thread.
    pub cut: bool,
    /// A branch passed on a guess, its operands not known yet
    /// (`speculate.rs`).
    pub guess: Option<Guess>,
}

/// A PTX branch passed before its operands were known: which instruction
/// and which way. The reads that give the operands may then only read
/// values that send the branch the guessed way.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Guess {
    /// Index of the branch in the thread's code.
    pub branch: u16,
    /// The branch is taken (jumps to its target).
    pub taken: bool,
}

/// A LOST-POP state. It is its own canonical form: request ids are
/// per-thread counters, requests are sorted by id, edges are sorted, and
/// satisfied reads are gone (their values live in registers).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LpState {
    pub threads: Vec<TState>,
    /// Active requests, sorted by id.
    pub reqs: Vec<Req>,
    /// Order constraints `(from, to, scope)`, sorted, one per pair.
    pub edges: Vec<(Rid, Rid, u64)>,
}

impl LpState {
    /// Index of request `id` in `reqs`.
    pub fn idx(&self, id: Rid) -> Option<usize> {
        self.reqs.binary_search_by_key(&id, |r| r.id).ok()
    }
    /// The request `id`.
    pub fn req(&self, id: Rid) -> Option<&Req> {
        self.idx(id).map(|i| &self.reqs[i])
    }
    /// Whether `a -> b` is an order constraint.
    pub fn ordered(&self, a: Rid, b: Rid) -> bool {
        self.edge_scope(a, b).is_some()
    }
    /// The scope of `a -> b`, if present.
    pub fn edge_scope(&self, a: Rid, b: Rid) -> Option<u64> {
        self.edges
            .binary_search_by_key(&(a, b), |e| (e.0, e.1))
            .ok()
            .map(|i| self.edges[i].2)
    }
    /// Adds `a -> b` at scope `s` (joined with an existing edge's scope).
    pub fn add_edge(&mut self, a: Rid, b: Rid, s: u64) {
        match self.edges.binary_search_by_key(&(a, b), |e| (e.0, e.1)) {
            Ok(i) => self.edges[i].2 |= s,
            Err(i) => self.edges.insert(i, (a, b, s)),
        }
    }
    /// Removes request `id` and its edges.
    pub fn remove(&mut self, id: Rid) {
        if let Some(i) = self.idx(id) {
            self.reqs.remove(i);
        }
        self.edges.retain(|e| e.0 != id && e.1 != id);
    }
}

/// A LOST-POP transition.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LpTransition {
    /// Thread accepts its next request.
    Accept { thread: u32 },
    /// Request propagates to a thread.
    Propagate { req: Rid, to: u32 },
    /// Read (or RMW) `read` is satisfied by write `write`.
    Satisfy { read: Rid, write: Rid },
    /// Every active request on location `loc` propagates to thread `to`,
    /// which never accesses `loc` (a macro of `Propagate` steps; the
    /// catch-up reduction, docs/operational.md).
    CatchUp { loc: u32, to: u32 },
    /// A PTX thread at a branch whose operands are not known yet passes it
    /// the way `taken` says (speculation, `speculate.rs`).
    Guess { thread: u32, taken: bool },
}
