//! LOST-POP's persistent singletons that look at the future of the code:
//! *catch-up propagations* (docs/operational.md, "Reduction", rule 5) and
//! *sole-writer satisfies* (rule 6, [`Future::sole_writer`]).
//!
//! A propagation `q -> t` of a request on location `L` is explored alone
//! when the bit it sets can only matter to the satisfy rule's "same
//! propagation sets" condition, and every partner `q` could be satisfied
//! with (or by) is already at `t`:
//!
//! - (U1) `t` has no active request on `L` that the propagation would add
//!   an observation edge to, and never will: for a read `q`, no write to
//!   `L` at `t` now or in `t`'s remaining code; for a write `q`, no access
//!   to `L` at all. So the propagation adds no edge and no predecessor,
//!   and no later transition's effect depends on the bit (observation
//!   edges need a same-address request *of `t`* with one of the two a
//!   write).
//! - (U2) every partner of `q` still live is at `t`: for a read, every
//!   write on `L` it is not already ordered before; for a write, every
//!   unsatisfied read on `L` not already ordered before it. No thread may
//!   create a new partner (no future access to `L` that could be one).
//!   So the bit can never disable a satisfy that some run needs.
//! - (U3) nothing can add an edge into `q` that blocks `q -> t`: every
//!   other-thread request on `L` that could still propagate to `q`'s
//!   thread and so get an observation edge into `q` is already at `t`
//!   (rule A.2.2 (2b) is then met), and `q`'s thread has no unsatisfied
//!   read older than `q` (so no write can become a predecessor there and
//!   be ordered before `q`, or before a fence that blocks `q`). A PTX
//!   release is never taken this way: A.5.2 blocking rule 5 makes it wait
//!   for everything before its blockers, which new observation edges into
//!   older requests of its thread can extend. Blocking conditions are
//!   otherwise monotone: propagation bits only grow and satisfied reads
//!   only remove edges.
//!
//! Then `q -> t` is enabled in every state reachable without it, commutes
//! with every transition (its only effect, the bit, is read by no effect
//! and by no enabling condition except monotonically), and every run that
//! satisfies `q` (or lets `q` satisfy a read) has it: the explorer may take
//! it alone, as it takes accepts alone.

use super::types::{Kind, LpArch, LpState, Req, rid_thread};
use crate::ir::{Address, InstrKind, Test};

/// Which locations each thread may still access, per program counter.
pub struct Future {
    /// `by_pc[t][pc]`: accesses of instructions `pc..` of thread `t` (all
    /// of its code when it jumps backwards).
    by_pc: Vec<Vec<Access>>,
}

/// Locations a piece of code may read and write.
#[derive(Clone, Default)]
struct Access {
    reads: Vec<u32>,
    writes: Vec<u32>,
    /// An access through a register: any location.
    any_read: bool,
    any_write: bool,
}

impl Access {
    fn add(&mut self, addr: &Address, read: bool, write: bool) {
        match addr {
            Address::Loc(l) => {
                let l = *l as u32;
                if read && !self.reads.contains(&l) {
                    self.reads.push(l);
                }
                if write && !self.writes.contains(&l) {
                    self.writes.push(l);
                }
            }
            Address::Reg(_) => {
                self.any_read |= read;
                self.any_write |= write;
            }
        }
    }
    fn merge(&mut self, o: &Access) {
        for &l in &o.reads {
            if !self.reads.contains(&l) {
                self.reads.push(l);
            }
        }
        for &l in &o.writes {
            if !self.writes.contains(&l) {
                self.writes.push(l);
            }
        }
        self.any_read |= o.any_read;
        self.any_write |= o.any_write;
    }
    fn reads(&self, l: u32) -> bool {
        self.any_read || self.reads.contains(&l)
    }
    fn writes(&self, l: u32) -> bool {
        self.any_write || self.writes.contains(&l)
    }
}

impl Future {
    /// The accesses of every suffix of every thread of `test`.
    pub fn new(test: &Test) -> Self {
        let by_pc = test
            .threads
            .iter()
            .map(|th| {
                let labels: Vec<(usize, &str)> = th
                    .code
                    .iter()
                    .enumerate()
                    .filter_map(|(k, i)| match &i.kind {
                        InstrKind::Label(l) => Some((k, l.as_str())),
                        _ => None,
                    })
                    .collect();
                let backward = th.code.iter().enumerate().any(|(k, i)| match &i.kind {
                    InstrKind::Branch { target, .. } | InstrKind::Goto { target } => labels
                        .iter()
                        .any(|(at, l)| *l == target.as_str() && *at <= k),
                    _ => false,
                });
                let own: Vec<Access> = th
                    .code
                    .iter()
                    .map(|i| {
                        let mut a = Access::default();
                        match &i.kind {
                            InstrKind::Load { addr, .. } => a.add(addr, true, false),
                            InstrKind::Store { addr, .. } => a.add(addr, false, true),
                            InstrKind::Rmw { addr, .. } => a.add(addr, true, true),
                            _ => {}
                        }
                        a
                    })
                    .collect();
                let mut suffix = vec![Access::default(); own.len() + 1];
                for k in (0..own.len()).rev() {
                    let mut a = suffix[k + 1].clone();
                    a.merge(&own[k]);
                    suffix[k] = a;
                }
                if backward {
                    let whole = suffix[0].clone();
                    for a in suffix.iter_mut().take(own.len()) {
                        *a = whole.clone();
                    }
                }
                suffix
            })
            .collect();
        Future { by_pc }
    }

    fn at(&self, s: &LpState, t: usize) -> Option<&Access> {
        let th = &s.threads[t];
        if th.cut {
            return None;
        }
        self.by_pc[t].get(th.pc as usize)
    }

    /// Whether thread `t` may still accept a read of `l`.
    fn may_read(&self, s: &LpState, t: usize, l: u32) -> bool {
        self.at(s, t).is_some_and(|a| a.reads(l))
    }

    /// Whether thread `t` may still accept a write of `l`.
    fn may_write(&self, s: &LpState, t: usize, l: u32) -> bool {
        self.at(s, t).is_some_and(|a| a.writes(l))
    }

    /// Whether thread `t`'s code accesses `l` anywhere (an access through
    /// a register may reach every location), whatever its program counter.
    pub fn ever_accesses(&self, t: usize, l: u32) -> bool {
        self.by_pc[t]
            .first()
            .is_some_and(|a| a.reads(l) || a.writes(l))
    }

    /// Whether thread `t` may still accept an access to `l`.
    pub fn may_access(&self, s: &LpState, t: usize, l: u32) -> bool {
        self.at(s, t).is_some_and(|a| a.reads(l) || a.writes(l))
    }

    /// Whether propagating `q` to thread `t` is a catch-up propagation
    /// (U1–U3 of the module doc), to be explored alone. The caller
    /// guarantees that the propagation is enabled.
    pub fn catch_up(&self, s: &LpState, q: &Req, t: u32) -> bool {
        // Not for a PTX release: it waits for everything before its
        // blockers (A.5.2 blocking rule 5), and a new observation edge into
        // any older request of its thread could block it again.
        if q.kind == Kind::Rmw || q.kind == Kind::Fence || (q.arch == LpArch::Ptx && q.sem.rel()) {
            return false;
        }
        let is_read = q.kind == Kind::Read;
        let l = q.loc;
        let u = q.thread();
        let tb = 1u64 << t;
        // U1 and the "no new partner" half of U2: future accesses.
        for v in 0..s.threads.len() {
            let w = self.may_write(s, v, l);
            let r = self.may_read(s, v, l);
            if w || (!is_read && r) {
                return false;
            }
        }
        for o in &s.reqs {
            if o.id == q.id || !o.is_mem() {
                continue;
            }
            let ot = o.thread();
            // U3: an older unsatisfied read of q's thread could make a
            // write a predecessor ordered before q.
            if ot == u && o.reads() && o.id < q.id {
                return false;
            }
            if o.loc != l {
                continue;
            }
            // U1: no observation edge from q at t.
            if ot == t && (o.writes() || !is_read) {
                return false;
            }
            if o.prop & tb != 0 {
                continue;
            }
            // o is not at t: it must be neither a live partner of q (U2)
            // nor able to get an edge into q later (U3).
            let partner = if is_read {
                o.writes() && live(s, o, q)
            } else {
                o.reads() && !s.ordered(o.id, q.id)
            };
            let edge_in = ot != u
                && (o.writes() || !is_read)
                && q.prop & (1u64 << rid_thread(o.id).min(63)) == 0;
            if partner || edge_in {
                return false;
            }
        }
        true
    }
    /// Whether satisfying read `r` from write `w` is a *sole-writer
    /// satisfy* (docs/operational.md, "Reduction", rule 6), to be explored
    /// alone: `r` is a plain read, no thread may still accept a write to
    /// its location, and every other write on it is dead for `r` (ordered
    /// after `r`, or behind a write that stays between them). Then every
    /// run reaching a final state satisfies `r` from `w`, and doing it now
    /// only removes `r` (and the edges into and out of it) earlier, which
    /// disables nothing and changes no other effect. The caller guarantees
    /// that the satisfy is enabled.
    pub fn sole_writer(&self, s: &LpState, r: &Req, w: &Req) -> bool {
        if r.kind != Kind::Read {
            return false;
        }
        let l = r.loc;
        if (0..s.threads.len()).any(|v| self.may_write(s, v, l)) {
            return false;
        }
        !s.reqs
            .iter()
            .any(|o| o.id != w.id && o.id != r.id && o.loc == l && o.writes() && live(s, o, r))
    }
}

/// Whether one of `a`, `b` may still satisfy the other.
pub fn live_pair(s: &LpState, a: &Req, b: &Req) -> bool {
    (a.reads() && b.writes() && live(s, b, a)) || (b.reads() && a.writes() && live(s, a, b))
}

/// Whether write `w` may still satisfy read `r`: `r` is not ordered
/// before `w` (then no edge `w -> r` is ever added: `r` has reached `w`'s
/// thread) and no write that stays active sits between them.
fn live(s: &LpState, w: &Req, r: &Req) -> bool {
    if s.ordered(r.id, w.id) {
        return false;
    }
    !s.reqs.iter().any(|x| {
        x.id != w.id
            && x.id != r.id
            && x.is_mem()
            && x.loc == r.loc
            && (x.kind == Kind::Write || (x.kind == Kind::Rmw && x.done))
            && s.ordered(w.id, x.id)
            && s.ordered(x.id, r.id)
    })
}
