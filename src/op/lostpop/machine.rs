//! The LOST-POP machine behind the [`Machine`] trait.

use super::order::{Meet, makes_pred, order};
use super::reduce::Future;
use super::speculate::Plan;
use super::types::*;
use crate::ir::{Address, InstrKind, Operand, Reg, RmwOp, Term, Test, Value};
use crate::op::machine::{Machine, MachineError};
use crate::verdict::StateView;
use std::collections::HashMap;

/// Static facts about one thread.
pub(super) struct TInfo {
    pub(super) arch: LpArch,
    pub(super) regs: Vec<Reg>,
    pub(super) labels: HashMap<String, usize>,
    /// Scope masks: the thread alone, its cta, its gpu.
    pub(super) me: u64,
    pub(super) cta: u64,
    pub(super) gpu: u64,
}

/// LOST-POP for one test.
pub struct LostPop<'t> {
    pub(super) test: &'t Test,
    pub(super) threads: Vec<TInfo>,
    pub(super) observed: Vec<Term>,
    pub(super) all: u64,
    pub(super) unroll: u16,
    /// What each thread may still access (for the catch-up reduction).
    pub(super) future: Future,
    /// Use the catch-up reduction (on by default; off for checking it).
    pub(super) catch_up: bool,
    /// Per location: the threads whose code never accesses it (no direct
    /// access, no access through a register address). With the reductions
    /// on, a propagation to one of them is a propagation to all of them
    /// (rule 7, docs/operational.md); a mask with fewer than two threads
    /// is left empty.
    pub(super) silent: Vec<u64>,
    /// Every thread is x86 (rule 8 is argued for x86 only).
    pub(super) all_x86: bool,
    /// Per thread: which branches are worth a guess, and the registers
    /// those a thread may still reach read (`speculate.rs`).
    pub(super) plans: Vec<Plan>,
    /// The reading of A.5.2's scope meet (`--variant acquire-meet`).
    pub(super) meet: Meet,
}

/// Whether the constraint `a -> r` is one of the order constraints of
/// `r`'s thread `t` (A.2.2 (2a): it must reach every thread of the edge's
/// scope) rather than an observation from another thread (A.2.2 (2b): it
/// must reach the target first). `a` of `t` itself: always. A predecessor
/// at `t`: only when `t`'s order condition orders it before `r` (A.2.1 (2);
/// x86 `R + pred -> R/W`, PTX rule 5 into a release); the observation edge
/// that made it a predecessor, or one into a later plain PTX access, is
/// another thread's constraint like any other. Treating every predecessor
/// edge as an own-thread one made PTX reads ordered by an acquire, a fence
/// or a dependency multi-copy-atomic (issue 27, docs/operational.md).
/// An RMW predecessor keeps every edge an own-thread one: it propagates
/// before it is satisfied, before its place in the coherence order is
/// known, and a read ordered after it must not overtake the write it will
/// read (`MP+rel+rmw+acq`).
pub(super) fn enforced_at(a: &Req, r: &Req, all: u64, how: Meet) -> bool {
    let t = r.thread();
    if a.thread() == t {
        return true;
    }
    a.pred & bit(t) != 0
        && (a.kind == Kind::Rmw || order(r.arch, a, r, t, true, all, how).is_some())
}

/// Whether plain read `r` may read its own thread's earlier write `a` to
/// the same address while `a` is still only at their thread (store
/// forwarding): the one constraint into a read that its satisfaction does
/// not wait for ([`LostPop::read_performable`]).
pub(super) fn forwards(a: &Req, r: &Req) -> bool {
    a.thread() == r.thread() && r.kind == Kind::Read && a.kind == Kind::Write && a.loc == r.loc
}

pub(super) fn bit(t: u32) -> u64 {
    1u64 << t
}

impl<'t> LostPop<'t> {
    /// The test this machine runs.
    pub fn test(&self) -> &Test {
        self.test
    }

    pub(super) fn reg_index(&self, t: usize, r: &Reg) -> usize {
        self.threads[t]
            .regs
            .iter()
            .position(|x| x == r)
            .unwrap_or(0)
    }

    pub(super) fn operand(&self, s: &LpState, t: usize, o: &Operand) -> Option<Value> {
        match o {
            Operand::Imm(v) => Some(*v),
            Operand::Reg(r) => s.threads[t].regs[self.reg_index(t, r)],
        }
    }

    fn address(&self, s: &LpState, t: usize, a: &Address) -> Result<Option<u32>, MachineError> {
        match a {
            Address::Loc(l) => Ok(Some(*l as u32)),
            Address::Reg(r) => match s.threads[t].regs[self.reg_index(t, r)] {
                None => Ok(None),
                Some(Value::Addr(l)) => Ok(Some(l as u32)),
                Some(Value::Int(v)) => Err(MachineError(format!(
                    "P{t}: register {r} holds {v}, not an address"
                ))),
            },
        }
    }

    /// Thread `t` jumps from its branch or goto to label `target`; a
    /// backward jump past the unroll bound cuts the thread.
    pub(super) fn jump(&self, s: &mut LpState, t: usize, target: &str) -> Result<(), MachineError> {
        let to = *self.threads[t]
            .labels
            .get(target)
            .ok_or_else(|| MachineError(format!("P{t}: unknown label {target}")))?;
        let th = &mut s.threads[t];
        if to <= th.pc as usize {
            th.jumps += 1;
            if th.jumps > self.unroll {
                th.cut = true;
                return Ok(());
            }
        }
        th.pc = to as u16;
        Ok(())
    }

    /// Runs local instructions of thread `t` while their inputs are known
    /// (and, past a guessed branch, while they leave its operands alone).
    pub(super) fn settle(&self, s: &mut LpState, t: usize) -> Result<(), MachineError> {
        let code = &self.test.threads[t].code;
        loop {
            let pc = s.threads[t].pc as usize;
            if s.threads[t].cut || pc >= code.len() {
                return Ok(());
            }
            let jump = |s: &mut LpState, target: &str| self.jump(s, t, target);
            match &code[pc].kind {
                InstrKind::Label(_) => s.threads[t].pc += 1,
                InstrKind::Mov { dst, src } => {
                    let Some(v) = self.operand(s, t, src) else {
                        return Ok(());
                    };
                    if self.guess_reads(s, t, dst) {
                        return Ok(());
                    }
                    let d = self.reg_index(t, dst);
                    s.threads[t].regs[d] = Some(v);
                    s.threads[t].owner[d] = None;
                    s.threads[t].pc += 1;
                }
                InstrKind::Op { dst, op, a, b } => {
                    let (Some(x), Some(y)) = (self.operand(s, t, a), self.operand(s, t, b)) else {
                        return Ok(());
                    };
                    if self.guess_reads(s, t, dst) {
                        return Ok(());
                    }
                    let v = op
                        .apply(x, y)
                        .map_err(|e| MachineError(format!("P{t}: {e}")))?;
                    let d = self.reg_index(t, dst);
                    s.threads[t].regs[d] = Some(v);
                    s.threads[t].owner[d] = None;
                    s.threads[t].pc += 1;
                }
                InstrKind::Branch { cmp, a, b, target } => {
                    let (Some(x), Some(y)) = (self.operand(s, t, a), self.operand(s, t, b)) else {
                        return Ok(());
                    };
                    if cmp.eval(x, y) {
                        jump(s, target)?;
                    } else {
                        s.threads[t].pc += 1;
                    }
                }
                InstrKind::Goto { target } => jump(s, target)?,
                _ => return Ok(()),
            }
        }
    }

    /// Whether thread `t` can accept its next instruction now.
    pub(super) fn can_accept(&self, s: &LpState, t: usize) -> bool {
        let th = &s.threads[t];
        let code = &self.test.threads[t].code;
        let pc = th.pc as usize;
        if th.cut || pc >= code.len() {
            return false;
        }
        let known_addr = |a: &Address| match a {
            Address::Loc(_) => true,
            Address::Reg(r) => th.regs[self.reg_index(t, r)].is_some(),
        };
        let known = |o: &Operand| self.operand(s, t, o).is_some();
        if !self.guess_allows(s, t, &code[pc].kind) {
            return false;
        }
        match &code[pc].kind {
            InstrKind::Load { addr, .. } => known_addr(addr),
            InstrKind::Store { addr, src } => known_addr(addr) && known(src),
            InstrKind::Rmw { addr, op, .. } => {
                known_addr(addr)
                    && match op {
                        RmwOp::Bin(_, o) | RmwOp::Exch(o) | RmwOp::Inc(o) | RmwOp::Dec(o) => {
                            known(o)
                        }
                        RmwOp::Cas { expected, new } => known(expected) && known(new),
                    }
            }
            InstrKind::Fence => true,
            _ => false,
        }
    }

    /// The semantics and scope of instruction `k` of thread `t`.
    fn sem_scope(&self, t: usize, k: usize) -> (Sem, u64) {
        let info = &self.threads[t];
        if info.arch == LpArch::X86 {
            return (Sem::Relaxed, self.all);
        }
        let ins = &self.test.threads[t].code[k];
        let has = |x: &str| ins.tags.iter().any(|g| g == x);
        let sem = if has("SC") {
            Sem::Sc
        } else if has("ACQ_REL") {
            Sem::AcqRel
        } else if has("ACQ") {
            Sem::Acquire
        } else if has("REL") {
            Sem::Release
        } else if has("RLX") || matches!(ins.kind, InstrKind::Rmw { .. }) {
            Sem::Relaxed
        } else {
            Sem::Weak
        };
        let scope = if sem == Sem::Weak {
            info.me
        } else if has("CTA") {
            info.cta
        } else if has("SYS") {
            self.all
        } else {
            info.gpu
        };
        (sem, scope)
    }

    fn accept(&self, s: &mut LpState, t: usize) -> Result<(), MachineError> {
        let k = s.threads[t].pc as usize;
        let ins = &self.test.threads[t].code[k];
        let arch = self.threads[t].arch;
        let (sem, scope) = self.sem_scope(t, k);
        let base = |kind: Kind, sem: Sem, seq: u16| Req {
            id: rid(t as u32, seq as u32),
            kind,
            arch,
            instr: k as u16,
            loc: 0,
            sem,
            scope,
            value: None,
            op: None,
            dst: None,
            prop: bit(t as u32),
            pred: 0,
            done: false,
        };
        let seq = s.threads[t].seq;
        let mut new: Vec<Req> = Vec::new();
        let unknown = || MachineError(format!("P{t}: '{}' accepted with unknown inputs", ins.text));
        match &ins.kind {
            InstrKind::Load { dst, addr } => {
                let mut r = base(Kind::Read, sem, seq);
                r.loc = self.address(s, t, addr)?.ok_or_else(unknown)?;
                let d = self.reg_index(t, dst);
                r.dst = Some(d as u16);
                s.threads[t].regs[d] = None;
                s.threads[t].owner[d] = Some(seq);
                new.push(r);
            }
            InstrKind::Store { addr, src } => {
                let mut r = base(Kind::Write, sem, seq);
                r.loc = self.address(s, t, addr)?.ok_or_else(unknown)?;
                r.value = Some(self.operand(s, t, src).ok_or_else(unknown)?);
                new.push(r);
            }
            InstrKind::Rmw { dst, addr, op } => {
                let mut r = base(Kind::Rmw, sem, seq);
                r.loc = self.address(s, t, addr)?.ok_or_else(unknown)?;
                let v = |o: &Operand| self.operand(s, t, o).ok_or_else(unknown);
                r.op = Some(match op {
                    RmwOp::Bin(b, o) => ROp::Bin(*b, v(o)?),
                    RmwOp::Exch(o) => ROp::Exch(v(o)?),
                    RmwOp::Cas { expected, new } => ROp::Cas(v(expected)?, v(new)?),
                    RmwOp::Inc(o) => ROp::Inc(v(o)?),
                    RmwOp::Dec(o) => ROp::Dec(v(o)?),
                });
                if let Some(dst) = dst {
                    let d = self.reg_index(t, dst);
                    r.dst = Some(d as u16);
                    s.threads[t].regs[d] = None;
                    s.threads[t].owner[d] = Some(seq);
                }
                new.push(r);
            }
            InstrKind::Fence => {
                if arch == LpArch::X86 {
                    new.push(base(Kind::Fence, Sem::Sc, seq));
                } else if sem == Sem::AcqRel {
                    new.push(base(Kind::Fence, Sem::Acquire, seq));
                    new.push(base(Kind::Fence, Sem::Release, seq + 1));
                } else {
                    new.push(base(Kind::Fence, sem, seq));
                }
            }
            _ => return Err(unknown()),
        }
        s.threads[t].seq += new.len() as u16;
        s.threads[t].pc += 1;
        for r in new {
            self.add_accepted(s, t, r);
        }
        self.settle(s, t)
    }

    /// Inserts accepted request `r` of thread `t` with its edges.
    fn add_accepted(&self, s: &mut LpState, t: usize, r: Req) {
        let tb = bit(t as u32);
        let arch = self.threads[t].arch;
        let mut edges = Vec::new();
        let mut preds = Vec::new();
        for o in &s.reqs {
            let mut scope = 0u64;
            // (1) observation: same address, one a write, already at `t`.
            if o.is_mem()
                && r.is_mem()
                && o.loc == r.loc
                && (o.writes() || r.writes())
                && o.prop & tb != 0
            {
                scope |= self.all;
                if o.writes() && r.reads() && o.thread() != t as u32 && o.thread() != INIT_THREAD {
                    preds.push(o.id);
                }
            }
            // (2) the order condition, for requests of `t` and predecessors.
            let own = o.thread() == t as u32;
            let pred = !own && o.pred & tb != 0;
            if (own || pred)
                && let Some(sc) = order(arch, o, &r, t as u32, pred, self.all, self.meet)
            {
                scope |= sc;
            }
            if scope != 0 {
                edges.push((o.id, scope));
            }
        }
        let id = r.id;
        let pos = s.reqs.partition_point(|x| x.id < id);
        s.reqs.insert(pos, r);
        for (from, sc) in edges {
            s.add_edge(from, id, sc);
        }
        for w in preds {
            self.mark_pred(s, w, id, t);
        }
    }

    /// Write `w` was ordered before read `r` of thread `t`: make it a
    /// predecessor at `t` if `t`'s architecture says so, and order it
    /// before `t`'s requests after `r`.
    fn mark_pred(&self, s: &mut LpState, w: Rid, r: Rid, t: usize) {
        let arch = self.threads[t].arch;
        let (Some(wq), Some(rq)) = (s.req(w), s.req(r)) else {
            return;
        };
        if !makes_pred(arch, wq, rq, t as u32, self.meet) {
            return;
        }
        let wq = wq.clone();
        if let Some(i) = s.idx(w) {
            s.reqs[i].pred |= bit(t as u32);
        }
        let later: Vec<(Rid, u64)> = s
            .reqs
            .iter()
            .filter(|x| x.thread() == t as u32 && x.id > r)
            .filter_map(|x| {
                order(arch, &wq, x, t as u32, true, self.all, self.meet).map(|sc| (x.id, sc))
            })
            .collect();
        for (x, sc) in later {
            s.add_edge(w, x, sc);
        }
    }

    /// Whether `a` has reached every thread of `scope` (a fence: whether
    /// everything ordered before it has reached its edge's scope).
    fn reached(&self, s: &LpState, a: Rid, scope: u64, depth: u32) -> bool {
        let Some(q) = s.req(a) else {
            return true;
        };
        if q.kind != Kind::Fence {
            return q.prop & scope == scope;
        }
        if depth > 64 {
            return false;
        }
        s.edges
            .iter()
            .filter(|e| e.1 == a)
            .all(|e| self.reached(s, e.0, e.2, depth + 1))
    }

    /// Whether `a` and every request before it in the order constraints
    /// (transitively) have reached every thread of `scope`.
    fn reached_all_before(&self, s: &LpState, a: Rid, scope: u64) -> bool {
        let mut seen = vec![a];
        let mut todo = vec![a];
        while let Some(x) = todo.pop() {
            if let Some(q) = s.req(x)
                && q.kind != Kind::Fence
                && q.prop & scope != scope
            {
                return false;
            }
            for e in s.edges.iter().filter(|e| e.1 == x) {
                if !seen.contains(&e.0) {
                    seen.push(e.0);
                    todo.push(e.0);
                }
            }
        }
        true
    }

    /// Whether request `r` may propagate to thread `to` (A.2.2 (2)).
    pub(super) fn can_propagate(&self, s: &LpState, r: &Req, to: u32) -> bool {
        self.propagation_targets(s, r) & bit(to) != 0
    }

    /// The threads request `r` may propagate to now (A.2.2 (2)), as a
    /// mask: empty when a blocker of its own thread (or a predecessor) has
    /// not reached its edge's scope, else the threads every other-thread
    /// blocker has reached. One pass over the edges into `r`.
    pub(super) fn propagation_targets(&self, s: &LpState, r: &Req) -> u64 {
        let mut mask = self.all;
        for &(a, _, sc) in s.edges.iter().filter(|e| e.1 == r.id) {
            let Some(aq) = s.req(a) else {
                continue;
            };
            if enforced_at(aq, r, self.all, self.meet) {
                let ok = if r.arch == LpArch::Ptx && r.sem.rel() {
                    // A.5.2, blocking rule (5): a release waits until every
                    // request order-constraints-preceding its blocker has
                    // reached the scope too (cumulativity through chains).
                    self.reached_all_before(s, a, sc)
                } else {
                    self.reached(s, a, sc, 0)
                };
                if !ok {
                    return 0;
                }
            } else {
                mask &= aq.prop;
            }
        }
        mask
    }

    /// The threads a propagation of request `q` to `to` reaches: `to`, and
    /// with the reductions on every other thread that never accesses `q`'s
    /// location when `to` is one (rule 7, the silent group).
    pub(super) fn group_of(&self, q: &Req, to: u32) -> u64 {
        let g = self.silent_of(q);
        if g & bit(to) != 0 { g } else { bit(to) }
    }

    /// The silent group of `q`'s location (rule 7), empty with the
    /// reductions off.
    fn silent_of(&self, q: &Req) -> u64 {
        if self.catch_up && q.is_mem() {
            self.silent.get(q.loc as usize).copied().unwrap_or(0)
        } else {
            0
        }
    }

    pub(super) fn propagate(&self, s: &mut LpState, r: Rid, to: u32) {
        let Some(i) = s.idx(r) else {
            return;
        };
        // Rule 7: the other members of a silent group have no request on
        // the location, so the loop below adds nothing for them.
        let g = self.group_of(&s.reqs[i], to);
        s.reqs[i].prop |= g;
        let rq = s.reqs[i].clone();
        let rt = rq.thread();
        let mut edges = Vec::new();
        let mut preds = Vec::new();
        for o in &s.reqs {
            if o.thread() == to
                && o.id != r
                && o.is_mem()
                && o.loc == rq.loc
                && (o.writes() || rq.writes())
                && o.prop & bit(rt) == 0
            {
                edges.push(o.id);
                if rq.writes() && o.reads() {
                    preds.push(o.id);
                }
            }
        }
        for o in edges {
            s.add_edge(r, o, self.all);
        }
        for o in preds {
            self.mark_pred(s, r, o, to as usize);
        }
    }

    /// Whether read (or RMW) `r` may take its value from write `w` now (given
    /// [`Self::read_performable`], which does not depend on `w`): the
    /// same propagation sets, `w` ordered before `r`, no same-location
    /// request between them. An x86 locked RMW reads only a write that has
    /// reached every thread (the store buffers are drained): it is then
    /// everywhere itself, so no write can later be ordered between `w` and
    /// it (a write reaching a thread that holds it is ordered after it),
    /// which is its atomicity. A PTX RMW likewise reads only a write that
    /// has reached every thread of its scope, which holds every RMW it is
    /// morally strong with. Without this, two RMWs could read the same write
    /// (docs/operational.md, "Reads in program order, RMWs").
    fn can_satisfy(&self, s: &LpState, r: &Req, w: &Req) -> bool {
        w.writes()
            && w.id != r.id
            && w.loc == r.loc
            && w.value.is_some_and(|v| self.guess_admits(s, r, v))
            && w.prop == r.prop
            && (r.kind != Kind::Rmw || {
                let scope = self.rmw_scope(r);
                w.prop & scope == scope
            })
            && s.ordered(w.id, r.id)
            && !s.reqs.iter().any(|x| {
                x.id != w.id
                    && x.id != r.id
                    && x.is_mem()
                    && x.loc == r.loc
                    && s.ordered(w.id, x.id)
                    && s.ordered(x.id, r.id)
            })
    }

    /// The threads a write must have reached before RMW `r` may read it:
    /// every thread for an x86 locked RMW, the RMW's scope for PTX.
    fn rmw_scope(&self, r: &Req) -> u64 {
        match r.arch {
            LpArch::X86 => self.all,
            LpArch::Ptx => r.scope & self.all,
        }
    }

    /// Whether read (or RMW) `r` may take a value now, in program
    /// order: every request its own thread orders before it (and every
    /// predecessor write at its thread) has reached its edge's scope, or is
    /// gone. The one exception is store forwarding: a plain read may read
    /// its own thread's earlier same-address write before that write has
    /// left the thread. Without this, a read satisfied early from its own
    /// thread's buffered write escapes the `R -> R` order of an earlier
    /// read and the coherence order is then decided against it
    /// (`W z=1; W x=1 | W z=2; R x=1; R z=2` with final `z=1`, forbidden by
    /// x86-TSO; PTX's acquire orders likewise). Only constraints the
    /// architecture's order condition made are waited for, so PTX reads
    /// with no incoming order stay free (docs/operational.md, "Reads in
    /// program order, RMWs").
    pub(super) fn read_performable(&self, s: &LpState, r: &Req) -> bool {
        s.edges.iter().filter(|e| e.1 == r.id).all(|&(a, _, sc)| {
            let Some(aq) = s.req(a) else {
                return true;
            };
            !enforced_at(aq, r, self.all, self.meet) || forwards(aq, r) || self.reached(s, a, sc, 0)
        })
    }

    fn satisfy(&self, s: &mut LpState, r: Rid, w: Rid) -> Result<(), MachineError> {
        let (Some(rq), Some(wq)) = (s.req(r).cloned(), s.req(w)) else {
            return Err(MachineError("satisfy: request gone".into()));
        };
        let v = wq
            .value
            .ok_or_else(|| MachineError("satisfy: write without value".into()))?;
        let t = rq.thread() as usize;
        if let Some(d) = rq.dst {
            let th = &mut s.threads[t];
            if th.owner[d as usize] == Some((r & 0xFFFF) as u16) {
                th.regs[d as usize] = Some(v);
                th.owner[d as usize] = None;
            }
            self.confirm_guess(s, t);
        }
        match rq.op {
            None => s.remove(r),
            Some(op) => match op
                .apply(v)
                .map_err(|e| MachineError(format!("P{t}: {e}")))?
            {
                None => s.remove(r),
                Some(n) => {
                    if let Some(i) = s.idx(r) {
                        s.reqs[i].value = Some(n);
                        s.reqs[i].done = true;
                    }
                }
            },
        }
        self.settle(s, t)
    }

    /// The final memory value of location `l` (the last write).
    fn final_value(&self, s: &LpState, l: u32) -> Option<Value> {
        let ws: Vec<&Req> = s.reqs.iter().filter(|q| q.writes() && q.loc == l).collect();
        let last: Vec<&&Req> = ws
            .iter()
            .filter(|w| !ws.iter().any(|x| x.id != w.id && s.ordered(w.id, x.id)))
            .collect();
        match last.as_slice() {
            [w] => w.value,
            _ => None,
        }
    }
}

impl Machine for LostPop<'_> {
    type State = LpState;
    type Key = u128;
    type Transition = LpTransition;

    fn name(&self) -> &str {
        if self.catch_up {
            "lostpop"
        } else {
            "lostpop-unreduced"
        }
    }

    fn initial(&self) -> LpState {
        let mut reqs = Vec::new();
        for (l, loc) in self.test.locations.iter().enumerate() {
            reqs.push(Req {
                id: rid(INIT_THREAD, l as u32),
                kind: Kind::Write,
                arch: LpArch::X86,
                instr: 0,
                loc: l as u32,
                sem: Sem::Relaxed,
                scope: self.all,
                value: Some(loc.init),
                op: None,
                dst: None,
                prop: self.all,
                pred: 0,
                done: true,
            });
        }
        let threads = self
            .test
            .threads
            .iter()
            .enumerate()
            .map(|(t, th)| {
                let info = &self.threads[t];
                let regs = info
                    .regs
                    .iter()
                    .map(|r| {
                        Some(
                            th.reg_init
                                .iter()
                                .find(|(n, _)| n == r)
                                .map(|(_, v)| *v)
                                .unwrap_or(Value::Int(0)),
                        )
                    })
                    .collect();
                TState {
                    pc: 0,
                    regs,
                    owner: vec![None; info.regs.len()],
                    jumps: 0,
                    seq: 0,
                    cut: false,
                    guess: None,
                }
            })
            .collect();
        let mut s = LpState {
            threads,
            reqs,
            edges: Vec::new(),
        };
        for t in 0..self.threads.len() {
            // Local instructions at the start cannot fail on known inputs
            // except for arithmetic on addresses, which `apply` reports on
            // the first step; keep the initial state as far as it got.
            let _ = self.settle(&mut s, t);
        }
        s
    }

    fn enabled(&self, s: &LpState) -> Vec<LpTransition> {
        let mut out = Vec::new();
        if self.outcome(s).is_some() {
            // Final: nothing left can change a register or an observed
            // location's last write (see `outcome`).
            return out;
        }
        for t in 0..self.threads.len() {
            if self.can_accept(s, t) {
                out.push(LpTransition::Accept { thread: t as u32 });
            }
        }
        self.guesses(s, &mut out);
        for r in &s.reqs {
            if !r.is_mem() || r.thread() == INIT_THREAD || r.prop == self.all {
                continue;
            }
            let mut targets = self.propagation_targets(s, r) & !r.prop;
            if targets == 0 {
                continue;
            }
            // Rule 7: one propagation per silent group (its lowest thread
            // stands for all of them).
            let g = self.silent_of(r);
            if targets & g != 0 {
                targets &= !g;
                targets |= g & g.wrapping_neg();
            }
            for to in 0..self.threads.len() as u32 {
                if targets & bit(to) != 0 {
                    out.push(LpTransition::Propagate { req: r.id, to });
                }
            }
        }
        if self.catch_up {
            self.catch_ups(s, &mut out);
        }
        let ready = |r: &&Req| r.reads() && self.read_performable(s, r);
        for r in s.reqs.iter().filter(ready) {
            for w in &s.reqs {
                if self.can_satisfy(s, r, w) {
                    out.push(LpTransition::Satisfy {
                        read: r.id,
                        write: w.id,
                    });
                }
            }
        }
        out
    }

    fn apply(&self, s: &LpState, tr: &LpTransition) -> Result<LpState, MachineError> {
        let mut n = s.clone();
        match *tr {
            LpTransition::Accept { thread } => self.accept(&mut n, thread as usize)?,
            LpTransition::Propagate { req, to } => self.propagate(&mut n, req, to),
            LpTransition::Satisfy { read, write } => self.satisfy(&mut n, read, write)?,
            LpTransition::Guess { thread, taken } => self.guess(&mut n, thread as usize, taken)?,
            LpTransition::CatchUp { loc, to } => {
                if self.catch_up_run(&mut n, loc, to).is_none() {
                    return Err(MachineError(format!(
                        "catch-up of {} to P{to} is not possible here",
                        self.test.locations[loc as usize].name
                    )));
                }
            }
        }
        Ok(n)
    }

    fn outcome(&self, s: &LpState) -> Option<Vec<Value>> {
        let code_done = s
            .threads
            .iter()
            .enumerate()
            .all(|(t, th)| !th.cut && th.pc as usize >= self.test.threads[t].code.len());
        // Final once every instruction is accepted and every read
        // satisfied: registers cannot change any more, and an observed
        // location's last write is fixed once it is the unique write with
        // no order constraint to another write of it (edges between writes
        // are never removed, and no edge is ever added out of a write that
        // already has one into it from each of the others; see
        // docs/operational.md). Remaining propagations are not explored.
        if !code_done || s.reqs.iter().any(|r| r.reads()) {
            return None;
        }
        self.observed
            .iter()
            .map(|term| match term {
                Term::Reg { thread, reg } => {
                    let th = s.threads.get(*thread)?;
                    let i = self.threads[*thread].regs.iter().position(|r| r == reg)?;
                    th.regs[i]
                }
                Term::Loc(l) => self.final_value(s, *l as u32),
                Term::Const(v) => Some(*v),
            })
            .collect()
    }

    /// Persistent singletons (docs/operational.md, "Reduction"):
    /// accepting a request (it commutes with every other transition, it
    /// adds edges into the new request only, nothing disables it and it
    /// disables nothing), a catch-up macro, a *sole-writer satisfy*
    /// (`reduce.rs`: the read can only ever read that write, and reading
    /// it now only drops constraints earlier) and a *catch-up propagation*
    /// (`reduce.rs`: a propagation whose bit only the satisfy rule reads,
    /// every partner being already there). The state graph is acyclic (every transition
    /// grows accepted requests, propagation bits or satisfied reads), so no
    /// cycle proviso is needed. So when one exists, only the first such
    /// transition is explored. Failing those, in an x86 test, the enabled
    /// transitions of one location when they form a stubborn set (rule 8,
    /// [`LostPop::one_location`]).
    fn reduce(&self, s: &LpState, enabled: &[LpTransition]) -> Option<Vec<usize>> {
        if let Some(i) = enabled
            .iter()
            .position(|t| matches!(t, LpTransition::Accept { .. }))
        {
            return Some(vec![i]);
        }
        if !self.catch_up {
            return None;
        }
        if let Some(guesses) = self.guess_choice(enabled) {
            return Some(guesses);
        }
        if let Some(i) = enabled
            .iter()
            .position(|t| matches!(t, LpTransition::CatchUp { .. }))
        {
            return Some(vec![i]);
        }
        if let Some(i) = enabled.iter().position(|t| match *t {
            LpTransition::Satisfy { read, write } => match (s.req(read), s.req(write)) {
                (Some(r), Some(w)) => {
                    self.future.sole_writer(s, r, w)
                        && !r
                            .dst
                            .is_some_and(|d| self.branch_ahead(s, r.thread() as usize, d))
                }
                _ => false,
            },
            _ => false,
        }) {
            return Some(vec![i]);
        }
        if let Some(i) = enabled.iter().position(|t| match *t {
            LpTransition::Propagate { req, to } => {
                s.req(req).is_some_and(|q| self.future.catch_up(s, q, to))
            }
            _ => false,
        }) {
            return Some(vec![i]);
        }
        self.one_location(s, enabled)
    }

    /// The state is its own canonical form (ids are per-thread counters,
    /// requests and edges sorted, satisfied reads gone); the key is a
    /// 128-bit fingerprint of it (hash compaction: two independent 64-bit
    /// SipHashes), which keeps the visited set at 16 bytes a state. Two
    /// distinct states collide with probability about n²/2¹²⁹ for n
    /// states, below 10⁻²⁴ at ten million states. The state's `Hash`
    /// stream is first written into one buffer (its many small writes are
    /// then byte copies), and each SipHash runs once over the buffer.
    fn canonical(&self, s: &LpState) -> u128 {
        use std::hash::{Hash, Hasher};
        /// Collects the bytes a `Hash` implementation feeds a hasher.
        struct Bytes<'b>(&'b mut Vec<u8>);
        impl Hasher for Bytes<'_> {
            fn write(&mut self, bytes: &[u8]) {
                self.0.extend_from_slice(bytes);
            }
            fn finish(&self) -> u64 {
                0
            }
        }
        thread_local! {
            static BUF: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
        }
        BUF.with(|buf| {
            let mut buf = buf.borrow_mut();
            buf.clear();
            s.hash(&mut Bytes(&mut buf));
            let mut a = std::collections::hash_map::DefaultHasher::new();
            let mut b = std::collections::hash_map::DefaultHasher::new();
            b.write_u64(0x9e37_79b9_7f4a_7c15);
            a.write(&buf);
            b.write(&buf);
            ((a.finish() as u128) << 64) | b.finish() as u128
        })
    }

    fn label(&self, s: &LpState, tr: &LpTransition) -> String {
        self.label_text(s, tr)
    }

    fn view(&self, s: &LpState) -> StateView {
        self.state_view(s)
    }
}
