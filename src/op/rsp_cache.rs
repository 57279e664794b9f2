//! The GPU cache machine of seed 001 §5 (`rsp-cache`): per device an L2
//! cache with a lock file, per work-group an L1 cache and an RMW lock, a
//! synchronisation fifo in every cache, global memory, and per thread its
//! registers and program counter (Fig. 3a). Instructions follow Table 1,
//! environment transitions Table 2; the assembly is read by
//! [`crate::litmus::rsp`]. docs/rsp-cache.md has the rules, the reductions
//! and the arguments for them.
//!
//! A state is *complete* when every thread has run its last instruction and
//! no cache entry is dirty (all values flushed down to global memory): that
//! is when an outcome counts (seed 001 §6.1, "assembly executions"), and
//! the machine stops there: no transition is enabled from a complete state.

use super::machine::{Machine, MachineError};
use super::view::{ItemView, StateView, ThreadView};
use crate::diag::Diagnostic;
use crate::exec::observed_terms;
use crate::ir::{BinOp, Operand, Pos, Reg, Term, Test, Value};
use crate::litmus::rsp::{self, Level, Op, Scope};
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

impl RspCache {
    /// Builds the machine for `test` (an `RSP` assembly test). Errors name
    /// what the machine cannot run and, for an instruction, where it is.
    pub fn new(test: &Test, opts: RspOptions) -> Result<Self, Diagnostic> {
        let file = test
            .file
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| test.name.clone());
        let at = |pos: Pos, m: String| Diagnostic::new(&file, pos, m);
        let err = |m: String| at(Pos::default(), m);
        if test.has_aliases() {
            return Err(err("rsp-cache: location aliases are not supported".into()));
        }
        if test.locations.len() > MAX_LOCATIONS {
            return Err(err(format!(
                "rsp-cache: the test has {} locations, at most {MAX_LOCATIONS} are supported",
                test.locations.len()
            )));
        }
        if test.threads.len() > MAX_THREADS {
            return Err(err(format!(
                "rsp-cache: the test has {} threads, at most {MAX_THREADS} are supported",
                test.threads.len()
            )));
        }
        // Devices and work-groups, numbered densely in order of appearance.
        let mut devs: Vec<u32> = Vec::new();
        let mut wgs: Vec<(usize, Option<u32>, usize)> = Vec::new(); // (dev, wg id, thread if unplaced)
        let mut threads = Vec::new();
        let mut reg_init = Vec::new();
        for (ti, th) in test.threads.iter().enumerate() {
            let level = |l: &str| th.placement.iter().find(|s| s.level == l).map(|s| s.id);
            let dv = level("dev").unwrap_or(0);
            let d = match devs.iter().position(|&x| x == dv) {
                Some(d) => d,
                None => {
                    devs.push(dv);
                    devs.len() - 1
                }
            };
            let wid = level("wg");
            let key = (d, wid, if wid.is_none() { ti } else { usize::MAX });
            let w = match wgs.iter().position(|k| *k == key) {
                Some(w) => w,
                None => {
                    wgs.push(key);
                    wgs.len() - 1
                }
            };
            let mut labels = HashMap::new();
            for (i, ins) in th.code.iter().enumerate() {
                if let crate::ir::InstrKind::Label(l) = &ins.kind {
                    labels.insert(l.clone(), i);
                }
            }
            let mut code = Vec::new();
            let mut text = Vec::new();
            for ins in &th.code {
                let op = rsp::decode(ins, test, &|l| labels.get(l).copied())
                    .map_err(|m| at(ins.pos, format!("P{}: {m}", th.id)))?;
                code.push(op);
                text.push(ins.text.clone());
            }
            if code.len() >= u16::MAX as usize {
                return Err(err(format!("rsp-cache: thread P{} is too long", th.id)));
            }
            let mut regs: Vec<Reg> = Vec::new();
            let mut add = |r: &Reg| {
                if !regs.contains(r) {
                    regs.push(r.clone());
                }
            };
            for (r, _) in &th.reg_init {
                add(r);
            }
            for op in &code {
                for r in op_regs(op) {
                    add(r);
                }
            }
            for t in observed_terms(test) {
                if let Term::Reg { thread, reg } = &t
                    && *thread == th.id
                {
                    add(reg);
                }
            }
            let init: Vec<Value> = regs
                .iter()
                .map(|r| {
                    th.reg_init
                        .iter()
                        .find(|(n, _)| n == r)
                        .map(|(_, v)| *v)
                        .unwrap_or(Value::Int(0))
                })
                .collect();
            reg_init.push(init);
            let live = live_sets(&code, false);
            let live_l1 = live_sets(&code, true);
            threads.push(ThreadInfo {
                id: th.id,
                dev: d,
                wg: w,
                code,
                text,
                regs,
                live,
                live_l1,
            });
        }
        let wg_dev = wgs.iter().map(|k| k.0).collect();
        let observed = observed_terms(test)
            .into_iter()
            .map(|t| match t {
                Term::Reg { thread, reg } => {
                    let ti = threads.iter().position(|x| x.id == thread).ok_or_else(|| {
                        err(format!(
                            "the condition names thread {thread}, which does not exist"
                        ))
                    })?;
                    let ri = threads[ti].regs.iter().position(|r| *r == reg).unwrap_or(0);
                    Ok(Observed::Reg(ti, ri))
                }
                Term::Loc(l) => Ok(Observed::Loc(test.physical(l))),
                Term::Const(v) => Ok(Observed::Const(v)),
            })
            .collect::<Result<Vec<_>, Diagnostic>>()?;
        let has = |f: &dyn Fn(&Op) -> bool| threads.iter().any(|t| t.code.iter().any(f));
        let has_flu_l1 = has(&|o| matches!(o, Op::FluL1(_)));
        let has_flu_l2 = has(&|o| matches!(o, Op::FluL2(_)));
        let name = match (opts.l2_locking, opts.reduce) {
            (true, true) => "rsp-cache",
            (false, true) => "rsp-cache-nolock",
            (true, false) => "rsp-cache-unreduced",
            (false, false) => "rsp-cache-nolock-unreduced",
        };
        Ok(RspCache {
            name: name.to_string(),
            opts,
            locs: test.locations.iter().map(|l| l.name.clone()).collect(),
            init: test.locations.iter().map(|l| l.init).collect(),
            threads,
            wg_dev,
            devices: devs.len().max(1),
            reg_init,
            observed,
            has_flu_l1,
            has_flu_l2,
        })
    }

    /// The threads as the machine sees them.
    pub fn threads(&self) -> &[ThreadInfo] {
        &self.threads
    }

    /// The options the machine runs with.
    pub fn options(&self) -> &RspOptions {
        &self.opts
    }

    fn n(&self) -> usize {
        self.locs.len()
    }

    fn wgs(&self) -> usize {
        self.wg_dev.len()
    }

    fn done(&self, s: &State, t: usize) -> bool {
        s.pc[t] as usize >= self.threads[t].code.len()
    }

    fn all_done(&self, s: &State) -> bool {
        (0..self.threads.len()).all(|t| self.done(s, t))
    }

    fn complete(&self, s: &State) -> bool {
        !s.cut
            && self.all_done(s)
            && s.l1
                .iter()
                .chain(&s.l2)
                .all(|c| c.entries.iter().all(|e| e.is_none_or(|e| !e.dirty)))
    }

    /// `ready_t(l)`.
    fn ready(l: Option<u8>, t: usize) -> bool {
        l.is_none_or(|h| h as usize == t)
    }

    fn lock(&self, s: &State, d: usize, x: usize) -> Option<u8> {
        if self.opts.l2_locking {
            s.lockfile[d * self.n() + x]
        } else {
            None
        }
    }

    /// `unflushed_t(Σ)`: a flush marker of `t` is still in some fifo.
    fn unflushed(&self, s: &State, t: usize) -> bool {
        let t = t as u16;
        s.l1.iter().chain(&s.l2).any(|c| c.has_marker(t))
    }

    /// Locations some thread of work-group `w` (`Some`) or device `d` may
    /// still access.
    fn live_in(&self, s: &State, pick: impl Fn(&ThreadInfo) -> bool) -> u64 {
        let mut m = 0;
        for (t, th) in self.threads.iter().enumerate() {
            if pick(th) {
                m |= th.live[(s.pc[t] as usize).min(th.code.len())];
            }
        }
        m
    }

    /// Locations some thread of work-group `w` may still read from its L1
    /// before invalidating it (`live_l1`).
    fn live_l1(&self, s: &State, w: usize) -> u64 {
        let mut m = 0;
        for (t, th) in self.threads.iter().enumerate() {
            if th.wg == w {
                m |= th.live_l1[(s.pc[t] as usize).min(th.code.len())];
            }
        }
        m
    }

    fn val(&self, s: &State, t: usize, o: &Operand) -> Value {
        match o {
            Operand::Imm(v) => *v,
            Operand::Reg(r) => self.threads[t]
                .regs
                .iter()
                .position(|x| x == r)
                .map(|i| s.regs[t][i])
                .unwrap_or(Value::Int(0)),
        }
    }

    fn set_reg(&self, s: &mut State, t: usize, r: &Reg, v: Value) {
        if let Some(i) = self.threads[t].regs.iter().position(|x| x == r) {
            s.regs[t][i] = v;
        }
    }

    /// Whether thread `t`'s next instruction blocks (or the thread is
    /// done): exactly the conditions under which [`Self::exec`] returns
    /// `Ok(None)`, decided without building the successor.
    fn exec_blocked(&self, s: &State, t: usize) -> bool {
        let th = &self.threads[t];
        let Some(op) = th.code.get(s.pc[t] as usize) else {
            return true;
        };
        if !op.is_local() && self.unflushed(s, t) {
            return true;
        }
        let (d, w) = (th.dev, th.wg);
        match op {
            Op::Ld { loc, .. } => s.l1[w].valid_val(*loc).is_none(),
            Op::Inc { level, loc, .. } => {
                !Self::ready(s.rmw[w], t)
                    || match level {
                        Level::L1 => s.l1[w].valid_val(*loc).is_none(),
                        Level::L2 => {
                            !s.l1[w].not_dirty(*loc)
                                || !Self::ready(self.lock(s, d, *loc), t)
                                || s.l2[d].valid_val(*loc).is_none()
                        }
                    }
            }
            Op::LkL2(x) => self.opts.l2_locking && !Self::ready(s.lockfile[d * self.n() + x], t),
            Op::LkRmw(sc) => {
                (0..self.wgs()).any(|w2| self.in_scope(*sc, d, w, w2) && !Self::ready(s.rmw[w2], t))
            }
            _ => false,
        }
    }

    /// Runs thread `t`'s next instruction; `Ok(None)` when it blocks.
    fn exec(&self, s: &State, t: usize) -> Result<Option<State>, MachineError> {
        if self.exec_blocked(s, t) {
            return Ok(None);
        }
        let th = &self.threads[t];
        let pc = s.pc[t] as usize;
        let Some(op) = th.code.get(pc) else {
            return Ok(None);
        };
        let (d, w) = (th.dev, th.wg);
        let n = self.n();
        let mut ns = s.clone();
        let mut next = pc + 1;
        let me = t as u8;
        match op {
            Op::Ld { reg, loc } => {
                let Some(v) = s.l1[w].valid_val(*loc) else {
                    return Ok(None);
                };
                self.set_reg(&mut ns, t, reg, v);
            }
            Op::St { val, loc } => {
                let v = self.val(s, t, val);
                ns.l1[w].store(*loc, v);
            }
            Op::Inc {
                level,
                reg,
                loc,
                by,
            } => {
                if !Self::ready(s.rmw[w], t) {
                    return Ok(None);
                }
                let x = *loc;
                let by = self.val(s, t, by);
                match level {
                    Level::L1 => {
                        let Some(v) = s.l1[w].valid_val(x) else {
                            return Ok(None);
                        };
                        self.set_reg(&mut ns, t, reg, v);
                        let nv = BinOp::Add.apply(v, by).map_err(MachineError)?;
                        ns.l1[w].store(x, nv);
                    }
                    Level::L2 => {
                        if !s.l1[w].not_dirty(x) || !Self::ready(self.lock(s, d, x), t) {
                            return Ok(None);
                        }
                        let Some(v) = s.l2[d].valid_val(x) else {
                            return Ok(None);
                        };
                        ns.l1[w].invalidate(x);
                        for c in &mut ns.l2 {
                            c.invalidate(x);
                        }
                        self.set_reg(&mut ns, t, reg, v);
                        let nv = BinOp::Add.apply(v, by).map_err(MachineError)?;
                        ns.l2[d].store(x, nv);
                    }
                }
            }
            Op::FluL1(sc) => {
                for w2 in 0..self.wgs() {
                    if self.in_scope(*sc, d, w, w2) {
                        ns.l1[w2].fifo.push_back(FifoEl::Flush(t as u16));
                    }
                }
            }
            Op::FluL2(sc) => {
                for d2 in 0..self.devices {
                    if *sc == Scope::Sy || d2 == d {
                        ns.l2[d2].fifo.push_back(FifoEl::Flush(t as u16));
                    }
                }
            }
            Op::InvL1(sc) => {
                for w2 in 0..self.wgs() {
                    if self.in_scope(*sc, d, w, w2) {
                        for x in 0..n {
                            ns.l1[w2].invalidate(x);
                        }
                    }
                }
            }
            Op::LkL2(x) => {
                if self.opts.l2_locking {
                    if !Self::ready(s.lockfile[d * n + x], t) {
                        return Ok(None);
                    }
                    ns.lockfile[d * n + x] = Some(me);
                }
            }
            Op::UlL2(x) => {
                if self.opts.l2_locking {
                    ns.lockfile[d * n + x] = None;
                }
            }
            Op::LkRmw(sc) => {
                let ws: Vec<usize> = (0..self.wgs())
                    .filter(|&w2| self.in_scope(*sc, d, w, w2))
                    .collect();
                if ws.iter().any(|&w2| !Self::ready(s.rmw[w2], t)) {
                    return Ok(None);
                }
                for w2 in ws {
                    ns.rmw[w2] = Some(me);
                }
            }
            Op::UlRmw(sc) => {
                for w2 in 0..self.wgs() {
                    if self.in_scope(*sc, d, w, w2) {
                        ns.rmw[w2] = None;
                    }
                }
            }
            Op::Mov { reg, val } => {
                let v = self.val(s, t, val);
                self.set_reg(&mut ns, t, reg, v);
            }
            Op::Arith { reg, op, a, b } => {
                let v = op
                    .apply(self.val(s, t, a), self.val(s, t, b))
                    .map_err(|m| MachineError(format!("P{}: {m}", th.id)))?;
                self.set_reg(&mut ns, t, reg, v);
            }
            Op::Branch { cmp, a, b, target } => {
                if cmp.eval(self.val(s, t, a), self.val(s, t, b)) {
                    next = *target;
                }
            }
            Op::Goto(target) => next = *target,
            Op::Nop => {}
        }
        if next <= pc {
            ns.jumps[t] += 1;
            if ns.jumps[t] as u32 > self.opts.unroll {
                ns.cut = true;
            }
        }
        ns.pc[t] = next as u16;
        Ok(Some(ns))
    }

    /// Some thread waits for a lock held by a finished thread that no
    /// running thread can release any more: it never completes, so the
    /// state is dead (the explorer counts it as stuck).
    fn deadlocked(&self, s: &State) -> bool {
        let finished = |h: Option<u8>| h.is_some_and(|h| self.done(s, h as usize));
        let may_unlock = |f: &dyn Fn(&Op, usize) -> bool| {
            self.threads
                .iter()
                .enumerate()
                .any(|(t, th)| th.code.iter().skip(s.pc[t] as usize).any(|op| f(op, t)))
        };
        self.threads.iter().enumerate().any(|(t, th)| {
            let Some(op) = th.code.get(s.pc[t] as usize) else {
                return false;
            };
            let (d, w) = (th.dev, th.wg);
            match op {
                Op::Inc { level, loc, .. } => {
                    let rmw_dead =
                        finished(s.rmw[w]) && !may_unlock(&|o, _| matches!(o, Op::UlRmw(_)));
                    let l2_dead = *level == Level::L2
                        && finished(self.lock(s, d, *loc))
                        && !may_unlock(&|o, u| {
                            matches!(o, Op::UlL2(y) if y == loc) && self.threads[u].dev == d
                        });
                    rmw_dead || l2_dead
                }
                Op::LkRmw(sc) => {
                    (0..self.wgs()).any(|w2| self.in_scope(*sc, d, w, w2) && finished(s.rmw[w2]))
                        && !may_unlock(&|o, _| matches!(o, Op::UlRmw(_)))
                }
                Op::LkL2(x) => {
                    finished(self.lock(s, d, *x))
                        && !may_unlock(&|o, u| {
                            matches!(o, Op::UlL2(y) if y == x) && self.threads[u].dev == d
                        })
                }
                _ => false,
            }
        })
    }

    /// Work-group `w2` is within scope `sc` of a thread in work-group `w`
    /// of device `d`.
    fn in_scope(&self, sc: Scope, d: usize, w: usize, w2: usize) -> bool {
        match sc {
            Scope::Wg => w2 == w,
            Scope::Dv => self.wg_dev[w2] == d,
            Scope::Sy => true,
        }
    }

    /// The first thread that can trigger an environment transition on a
    /// cache of work-group `w` (L1) or device `d` (L2) touching location
    /// `x` under the lock file (`None` when every such thread is locked
    /// out). Without `x` the lock file does not matter.
    fn trigger(&self, s: &State, l1: bool, cache: usize, x: Option<usize>) -> Option<usize> {
        self.threads.iter().enumerate().find_map(|(t, th)| {
            let mine = if l1 { th.wg == cache } else { th.dev == cache };
            let ok = match x {
                Some(x) => Self::ready(self.lock(s, th.dev, x), t),
                None => true,
            };
            (mine && ok).then_some(t)
        })
    }

    /// Whether an environment transition's precondition holds and it
    /// changes the state: exactly when [`Self::env`] returns `Some`,
    /// decided without building the successor.
    fn env_enabled(&self, s: &State, env: Env, cache: usize, x: usize, by: usize) -> bool {
        let ready = |d: usize| Self::ready(self.lock(s, d, x), by);
        let clean_fetch = |v: Value| {
            Some(Entry {
                val: v,
                dirty: false,
                valid: true,
            })
        };
        match env {
            Env::EvictL1 => s.l1[cache].entries[x].is_some_and(|e| !e.dirty),
            Env::EvictL2 => s.l2[cache].entries[x].is_some_and(|e| !e.dirty) && ready(cache),
            Env::FlushL1 => {
                s.l1[cache].entries[x].is_some_and(|e| e.dirty) && ready(self.wg_dev[cache])
            }
            Env::FlushL2 => s.l2[cache].entries[x].is_some_and(|e| e.dirty) && ready(cache),
            Env::FetchL1 => {
                let d = self.wg_dev[cache];
                s.l2[d].valid_val(x).is_some_and(|v| {
                    s.l1[cache].not_dirty(x) && ready(d) && s.l1[cache].entries[x] != clean_fetch(v)
                })
            }
            Env::FetchL2 => {
                s.l2[cache].not_dirty(x)
                    && ready(cache)
                    && s.l2[cache].entries[x] != clean_fetch(s.gl[x])
            }
            Env::DeqLocL1 | Env::DeqLocL2 => {
                let c = if env.is_l1() {
                    &s.l1[cache]
                } else {
                    &s.l2[cache]
                };
                matches!(c.fifo.front(), Some(FifoEl::Loc(y)) if c.not_dirty(*y as usize))
            }
            Env::DeqMarkerL1 | Env::DeqMarkerL2 => {
                let c = if env.is_l1() {
                    &s.l1[cache]
                } else {
                    &s.l2[cache]
                };
                matches!(c.fifo.front(), Some(FifoEl::Flush(_)))
            }
        }
    }

    /// Applies an environment transition; `None` when its precondition
    /// does not hold (or it would not change the state).
    fn env(&self, s: &State, env: Env, cache: usize, x: usize, by: usize) -> Option<State> {
        if !self.env_enabled(s, env, cache, x, by) {
            return None;
        }
        let n = self.n();
        let mut ns = s.clone();
        let ready = |d: usize| Self::ready(self.lock(s, d, x), by);
        match env {
            Env::EvictL1 => {
                let e = s.l1[cache].entries[x]?;
                if e.dirty {
                    return None;
                }
                ns.l1[cache].entries[x] = None;
            }
            Env::EvictL2 => {
                let e = s.l2[cache].entries[x]?;
                if e.dirty || !ready(cache) {
                    return None;
                }
                ns.l2[cache].entries[x] = None;
            }
            Env::FlushL1 => {
                let d = self.wg_dev[cache];
                let e = s.l1[cache].entries[x]?;
                if !e.dirty || !ready(d) {
                    return None;
                }
                for c in &mut ns.l2 {
                    c.invalidate(x);
                }
                ns.l2[d].store(x, e.val);
                if let Some(e) = &mut ns.l1[cache].entries[x] {
                    e.dirty = false;
                }
            }
            Env::FlushL2 => {
                let e = s.l2[cache].entries[x]?;
                if !e.dirty || !ready(cache) {
                    return None;
                }
                ns.gl[x] = e.val;
                if let Some(e) = &mut ns.l2[cache].entries[x] {
                    e.dirty = false;
                }
            }
            Env::FetchL1 => {
                let d = self.wg_dev[cache];
                let v = s.l2[d].valid_val(x)?;
                if !s.l1[cache].not_dirty(x) || !ready(d) {
                    return None;
                }
                ns.l1[cache].entries[x] = Some(Entry {
                    val: v,
                    dirty: false,
                    valid: true,
                });
            }
            Env::FetchL2 => {
                if !s.l2[cache].not_dirty(x) || !ready(cache) {
                    return None;
                }
                ns.l2[cache].entries[x] = Some(Entry {
                    val: s.gl[x],
                    dirty: false,
                    valid: true,
                });
            }
            Env::DeqLocL1 | Env::DeqLocL2 => {
                let c = if env.is_l1() {
                    &mut ns.l1[cache]
                } else {
                    &mut ns.l2[cache]
                };
                match c.fifo.front() {
                    Some(FifoEl::Loc(y)) if c.not_dirty(*y as usize) => {
                        c.fifo.pop_front();
                    }
                    _ => return None,
                }
            }
            Env::DeqMarkerL1 | Env::DeqMarkerL2 => {
                let c = if env.is_l1() {
                    &mut ns.l1[cache]
                } else {
                    &mut ns.l2[cache]
                };
                match c.fifo.front() {
                    Some(FifoEl::Flush(_)) => {
                        c.fifo.pop_front();
                    }
                    _ => return None,
                }
            }
        }
        let _ = n;
        (ns != *s).then_some(ns)
    }

    /// Every environment transition enabled in `s` (each with one trigger).
    fn env_steps(&self, s: &State, out: &mut Vec<Step>) {
        let n = self.n();
        let push = |env: Env, cache: usize, x: usize, out: &mut Vec<Step>| {
            let locked = !matches!(
                env,
                Env::EvictL1 | Env::DeqLocL1 | Env::DeqLocL2 | Env::DeqMarkerL1 | Env::DeqMarkerL2
            );
            let Some(by) = self.trigger(s, env.is_l1(), cache, locked.then_some(x)) else {
                return;
            };
            if self.env_enabled(s, env, cache, x, by) {
                debug_assert!(self.env(s, env, cache, x, by).is_some());
                out.push(Step::Env {
                    env,
                    cache,
                    loc: x,
                    by,
                });
            }
        };
        for w in 0..self.wgs() {
            push(Env::DeqLocL1, w, 0, out);
            push(Env::DeqMarkerL1, w, 0, out);
            for x in 0..n {
                for env in [Env::FlushL1, Env::FetchL1, Env::EvictL1] {
                    push(env, w, x, out);
                }
            }
        }
        for d in 0..self.devices {
            push(Env::DeqLocL2, d, 0, out);
            push(Env::DeqMarkerL2, d, 0, out);
            for x in 0..n {
                for env in [Env::FlushL2, Env::FetchL2, Env::EvictL2] {
                    push(env, d, x, out);
                }
            }
        }
    }

    /// One line per cache with entries or a fifo, in the notation of
    /// Figs. 4 and 5: `{x ↦C,V 42} [FLUSH x]` (fifo newest first).
    pub fn snapshot(&self, s: &State) -> Vec<String> {
        let cache = |c: &Cache| {
            let mut out = String::from("{");
            let mut first = true;
            for (x, e) in c.entries.iter().enumerate() {
                if let Some(e) = e {
                    if !first {
                        out.push_str(", ");
                    }
                    first = false;
                    let _ = write!(
                        out,
                        "{}↦{},{} {}",
                        self.locs[x],
                        if e.dirty { 'D' } else { 'C' },
                        if e.valid { 'V' } else { 'I' },
                        value_text(e.val, &self.locs)
                    );
                }
            }
            out.push('}');
            if !c.fifo.is_empty() {
                let els: Vec<String> = c
                    .fifo
                    .iter()
                    .rev()
                    .map(|el| match el {
                        FifoEl::Loc(x) => self.locs[*x as usize].clone(),
                        FifoEl::Flush(t) => format!("FLUSH(P{})", self.threads[*t as usize].id),
                    })
                    .collect();
                let _ = write!(out, " [{}]", els.join(" "));
            }
            out
        };
        let mut lines = Vec::new();
        for (w, c) in s.l1.iter().enumerate() {
            let ts: Vec<String> = self
                .threads
                .iter()
                .filter(|t| t.wg == w)
                .map(|t| format!("P{}", t.id))
                .collect();
            let lock = s.rmw[w]
                .map(|t| format!(" rmw-lock P{}", self.threads[t as usize].id))
                .unwrap_or_default();
            lines.push(format!("L1 wg{w} ({}): {}{lock}", ts.join(","), cache(c)));
        }
        for (d, c) in s.l2.iter().enumerate() {
            let mut locks = String::new();
            for x in 0..self.n() {
                if let Some(t) = s.lockfile[d * self.n() + x] {
                    let _ = write!(
                        locks,
                        " lock {}:P{}",
                        self.locs[x], self.threads[t as usize].id
                    );
                }
            }
            lines.push(format!("L2 dev{d}: {}{locks}", cache(c)));
        }
        let gl: Vec<String> = (0..self.n())
            .map(|x| format!("{}={}", self.locs[x], value_text(s.gl[x], &self.locs)))
            .collect();
        lines.push(format!("memory: {}", gl.join(" ")));
        lines
    }

    /// A trace in the style of Figs. 4 and 5: the caches at the start, one
    /// line per step (thread, instruction or environment transition with
    /// its cache), followed by the caches the step changed, and the whole
    /// machine again at the end.
    pub fn render_trace(&self, trace: &[Step]) -> Result<String, MachineError> {
        let mut out = String::new();
        let mut s = self.initial();
        let mut before = self.snapshot(&s);
        out.push_str("     initially:\n");
        for line in &before {
            let _ = writeln!(out, "       {line}");
        }
        for (i, step) in trace.iter().enumerate() {
            let label = self.label(&s, step);
            s = self.apply(&s, step)?;
            let after = self.snapshot(&s);
            let _ = writeln!(out, "{:>3}. {label}", i + 1);
            for (a, b) in after.iter().zip(&before) {
                if a != b {
                    let _ = writeln!(out, "       {a}");
                }
            }
            before = after;
        }
        out.push_str("     finally:\n");
        for line in &before {
            let _ = writeln!(out, "       {line}");
        }
        Ok(out)
    }
}

fn value_text(v: Value, locs: &[String]) -> String {
    match v {
        Value::Int(i) => i.to_string(),
        Value::Addr(l) => format!("&{}", locs.get(l).map(String::as_str).unwrap_or("?")),
    }
}

/// What of a state its key keeps: per L1 (L2) cache the locations whose
/// clean entries count (the others are keyed as absent), and whether the
/// fifos count.
struct Keep {
    l1_live: Vec<u64>,
    l2_live: Vec<u64>,
    l1_fifo: bool,
    l2_fifo: bool,
}

impl Keep {
    /// Everything counts (no reduction).
    fn all(s: &State) -> Keep {
        Keep {
            l1_live: vec![u64::MAX; s.l1.len()],
            l2_live: vec![u64::MAX; s.l2.len()],
            l1_fifo: true,
            l2_fifo: true,
        }
    }
}

/// A state as bytes, for the visited set: one allocation and one hash
/// per state instead of one per component. Injective (every component is
/// written with its length or at a fixed width), so equal keys mean equal
/// states.
fn encode(s: &State, keep: &Keep) -> Vec<u8> {
    fn val(out: &mut Vec<u8>, v: Value) {
        match v {
            Value::Int(i) => {
                out.push(0);
                out.extend_from_slice(&i.to_le_bytes());
            }
            Value::Addr(a) => {
                out.push(1);
                out.extend_from_slice(&(a as u64).to_le_bytes());
            }
        }
    }
    fn cache(out: &mut Vec<u8>, c: &Cache, live: u64, fifo: bool) {
        for (x, e) in c.entries.iter().enumerate() {
            match e {
                None => out.push(0),
                Some(e) if !e.dirty && live & (1 << x) == 0 => out.push(0),
                Some(e) => {
                    out.push(1 | (e.dirty as u8) << 1 | (e.valid as u8) << 2);
                    val(out, e.val);
                }
            }
        }
        if !fifo {
            return;
        }
        out.extend_from_slice(&(c.fifo.len() as u32).to_le_bytes());
        for el in &c.fifo {
            let (tag, i) = match el {
                FifoEl::Loc(x) => (0u8, *x),
                FifoEl::Flush(t) => (1u8, *t),
            };
            out.push(tag);
            out.extend_from_slice(&i.to_le_bytes());
        }
    }
    let lock = |l: &Option<u8>| l.map_or(u8::MAX, |t| t);
    let mut out = Vec::with_capacity(64);
    for v in &s.gl {
        val(&mut out, *v);
    }
    for (d, c) in s.l2.iter().enumerate() {
        cache(&mut out, c, keep.l2_live[d], keep.l2_fifo);
    }
    for (w, c) in s.l1.iter().enumerate() {
        cache(&mut out, c, keep.l1_live[w], keep.l1_fifo);
    }
    out.extend(s.lockfile.iter().map(lock));
    out.extend(s.rmw.iter().map(lock));
    for (t, pc) in s.pc.iter().enumerate() {
        out.extend_from_slice(&pc.to_le_bytes());
        out.extend_from_slice(&s.jumps[t].to_le_bytes());
        for v in &s.regs[t] {
            val(&mut out, *v);
        }
    }
    out.push(s.cut as u8);
    out
}

/// Registers an instruction names.
fn op_regs(op: &Op) -> Vec<&Reg> {
    fn opnd(o: &Operand) -> Option<&Reg> {
        match o {
            Operand::Reg(r) => Some(r),
            Operand::Imm(_) => None,
        }
    }
    match op {
        Op::Ld { reg, .. } => vec![reg],
        Op::St { val, .. } => opnd(val).into_iter().collect(),
        Op::Inc { reg, by, .. } => std::iter::once(reg).chain(opnd(by)).collect(),
        Op::Mov { reg, val } => std::iter::once(reg).chain(opnd(val)).collect(),
        Op::Arith { reg, a, b, .. } => std::iter::once(reg).chain(opnd(a)).chain(opnd(b)).collect(),
        Op::Branch { a, b, .. } => opnd(a).into_iter().chain(opnd(b)).collect(),
        _ => vec![],
    }
}

/// For each pc (and the end), the locations the code may access (load,
/// store, increment) from there on: a backward fixpoint over the control
/// flow graph.
///
/// With `l1`, only reads of the L1 (`LD`, `INC_L1`) count, and an
/// `INV_L1` (which invalidates the thread's own L1 at every scope) kills
/// everything after it.
fn live_sets(code: &[Op], l1: bool) -> Vec<u64> {
    let mut live = vec![0u64; code.len() + 1];
    let own = |op: &Op| -> u64 {
        match op {
            Op::Ld { loc, .. }
            | Op::Inc {
                level: Level::L1,
                loc,
                ..
            } => 1u64 << loc,
            Op::St { loc, .. } | Op::Inc { loc, .. } if !l1 => 1u64 << loc,
            _ => 0,
        }
    };
    loop {
        let mut changed = false;
        for pc in (0..code.len()).rev() {
            let succ = match &code[pc] {
                Op::InvL1(_) if l1 => 0,
                Op::Goto(t) => live[*t],
                Op::Branch { target, .. } => live[pc + 1] | live[*target],
                _ => live[pc + 1],
            };
            let v = own(&code[pc]) | succ;
            if v != live[pc] {
                live[pc] = v;
                changed = true;
            }
        }
        if !changed {
            return live;
        }
    }
}

impl Machine for RspCache {
    type State = State;
    type Key = Vec<u8>;
    type Transition = Step;

    fn name(&self) -> &str {
        &self.name
    }

    fn initial(&self) -> State {
        let n = self.n();
        let t = self.threads.len();
        State {
            gl: self.init.clone(),
            l2: vec![Cache::new(n); self.devices],
            lockfile: vec![None; self.devices * n],
            l1: vec![Cache::new(n); self.wgs()],
            rmw: vec![None; self.wgs()],
            pc: vec![0; t],
            jumps: vec![0; t],
            regs: self.reg_init.clone(),
            cut: false,
        }
    }

    fn enabled(&self, s: &State) -> Vec<Step> {
        if s.cut || self.complete(s) || self.deadlocked(s) {
            return Vec::new();
        }
        let mut out = Vec::new();
        for t in 0..self.threads.len() {
            if !self.exec_blocked(s, t) {
                out.push(Step::Exec(t));
            }
        }
        self.env_steps(s, &mut out);
        out
    }

    fn apply(&self, s: &State, step: &Step) -> Result<State, MachineError> {
        match *step {
            Step::Exec(t) => self
                .exec(s, t)?
                .ok_or_else(|| MachineError(format!("P{} is blocked", self.threads[t].id))),
            Step::Env {
                env,
                cache,
                loc,
                by,
            } => self
                .env(s, env, cache, loc, by)
                .ok_or_else(|| MachineError(format!("{} is not enabled", env.name()))),
        }
    }

    fn outcome(&self, s: &State) -> Option<Vec<Value>> {
        if !self.complete(s) {
            return None;
        }
        Some(
            self.observed
                .iter()
                .map(|o| match o {
                    Observed::Reg(t, r) => s.regs[*t].get(*r).copied().unwrap_or(Value::Int(0)),
                    Observed::Loc(x) => s.gl[*x],
                    Observed::Const(v) => *v,
                })
                .collect(),
        )
    }

    fn canonical(&self, s: &State) -> Vec<u8> {
        if !self.opts.reduce {
            return encode(s, &Keep::all(s));
        }
        // Clean entries of locations no thread of the cache will access
        // again are irrelevant (docs/rsp-cache.md, "dead entries"); fifos
        // matter only with flush markers in the program.
        let keep = Keep {
            l1_live: (0..self.wgs()).map(|w| self.live_l1(s, w)).collect(),
            l2_live: (0..self.devices)
                .map(|d| self.live_in(s, |th| th.dev == d))
                .collect(),
            l1_fifo: self.has_flu_l1,
            l2_fifo: self.has_flu_l2,
        };
        encode(s, &keep)
    }

    fn label(&self, s: &State, step: &Step) -> String {
        match *step {
            Step::Exec(t) => {
                let th = &self.threads[t];
                let text = th
                    .text
                    .get(s.pc[t] as usize)
                    .map(String::as_str)
                    .unwrap_or("(done)");
                format!("P{}: {text}", th.id)
            }
            Step::Env {
                env,
                cache,
                loc,
                by,
            } => {
                let who = format!("P{}", self.threads[by].id);
                let x = &self.locs[loc];
                let place = if env.is_l1() {
                    format!("wg{cache}")
                } else {
                    format!("dev{cache}")
                };
                match env {
                    Env::FlushL1 => {
                        let v = s.l1[cache].entries[loc].map(|e| e.val);
                        format!(
                            "{who}: {}({x}, {}) [{place}]",
                            env.name(),
                            v.map(|v| value_text(v, &self.locs)).unwrap_or_default()
                        )
                    }
                    Env::FlushL2 => {
                        let v = s.l2[cache].entries[loc].map(|e| e.val);
                        format!(
                            "{who}: {}({x}, {}) [{place}]",
                            env.name(),
                            v.map(|v| value_text(v, &self.locs)).unwrap_or_default()
                        )
                    }
                    Env::FetchL1 => {
                        let v = s.l2[self.wg_dev[cache]].entries[loc].map(|e| e.val);
                        format!(
                            "{who}: {}({x}, {}) [{place}]",
                            env.name(),
                            v.map(|v| value_text(v, &self.locs)).unwrap_or_default()
                        )
                    }
                    Env::FetchL2 => format!(
                        "{who}: {}({x}, {}) [{place}]",
                        env.name(),
                        value_text(s.gl[loc], &self.locs)
                    ),
                    Env::EvictL1 | Env::EvictL2 => format!("{who}: {}({x}) [{place}]", env.name()),
                    Env::DeqLocL1 | Env::DeqLocL2 => {
                        let c = if env.is_l1() {
                            &s.l1[cache]
                        } else {
                            &s.l2[cache]
                        };
                        let y = match c.fifo.front() {
                            Some(FifoEl::Loc(y)) => self.locs[*y as usize].clone(),
                            _ => String::new(),
                        };
                        format!("{who}: {}({y}) [{place}]", env.name())
                    }
                    Env::DeqMarkerL1 | Env::DeqMarkerL2 => {
                        format!("{who}: {} [{place}]", env.name())
                    }
                }
            }
        }
    }

    fn reduce(&self, s: &State, enabled: &[Step]) -> Option<Vec<usize>> {
        if !self.opts.reduce {
            return None;
        }
        // R1: a register-only instruction commutes with everything.
        if let Some(i) = enabled.iter().position(|st| {
            matches!(st, Step::Exec(t) if self.threads[*t].code.get(s.pc[*t] as usize).is_some_and(Op::is_local))
        }) {
            return Some(vec![i]);
        }
        // Fifos matter only to flush markers: without FLU_L1 (FLU_L2) in
        // the program the L1 (L2) fifos are left out of the key and their
        // dequeues out of the exploration.
        let relevant_deq = |st: &Step| match st {
            Step::Env {
                env: Env::DeqLocL1 | Env::DeqMarkerL1,
                ..
            } => Some(self.has_flu_l1),
            Step::Env {
                env: Env::DeqLocL2 | Env::DeqMarkerL2,
                ..
            } => Some(self.has_flu_l2),
            _ => None,
        };
        // R2: draining a fifo early never loses an outcome.
        if let Some(i) = enabled.iter().position(|st| relevant_deq(st) == Some(true)) {
            return Some(vec![i]);
        }
        // R6: with one device, writing a dirty L2 entry back to memory
        // early never loses an outcome (memory under a dirty L2 entry is
        // read by nothing).
        if self.devices == 1
            && let Some(i) = enabled.iter().position(|st| {
                matches!(
                    st,
                    Step::Env {
                        env: Env::FlushL2,
                        ..
                    }
                )
            })
        {
            return Some(vec![i]);
        }
        let all_done = self.all_done(s);
        let keep: Vec<usize> = enabled
            .iter()
            .enumerate()
            .filter(|(_, st)| match st {
                Step::Exec(_) => true,
                _ if relevant_deq(st) == Some(false) => false,
                Step::Env {
                    env, cache, loc, ..
                } => match env {
                    // R3: evictions only disable loads.
                    Env::EvictL1 | Env::EvictL2 => false,
                    // R4: once every thread is done only flushes matter.
                    Env::FlushL1 | Env::FlushL2 => true,
                    _ if all_done => false,
                    // R5: fetching a location no thread of the cache will
                    // access again is useless.
                    Env::FetchL1 => self.live_l1(s, *cache) & (1 << loc) != 0,
                    Env::FetchL2 => self.live_in(s, |th| th.dev == *cache) & (1 << loc) != 0,
                    _ => true,
                },
            })
            .map(|(i, _)| i)
            .collect();
        (!keep.is_empty() && keep.len() < enabled.len()).then_some(keep)
    }

    fn view(&self, s: &State) -> StateView {
        let mut v = StateView {
            summary: self.snapshot(s),
            ..Default::default()
        };
        for (t, th) in self.threads.iter().enumerate() {
            let next = th
                .text
                .get(s.pc[t] as usize)
                .cloned()
                .unwrap_or_else(|| "(done)".into());
            let regs: Vec<String> = th
                .regs
                .iter()
                .zip(&s.regs[t])
                .map(|(r, v)| format!("{r}={}", value_text(*v, &self.locs)))
                .collect();
            v.threads.push(ThreadView {
                name: format!("P{}", th.id),
                arch: "RSP".into(),
                info: vec![
                    format!("dev {} wg {}", th.dev, th.wg),
                    format!("next: {next}"),
                    format!("registers: {}", regs.join(" ")),
                ],
                items: th
                    .text
                    .iter()
                    .enumerate()
                    .map(|(i, text)| ItemView {
                        id: format!("{i}"),
                        text: text.clone(),
                        detail: if i < s.pc[t] as usize {
                            "done".into()
                        } else {
                            String::new()
                        },
                    })
                    .collect(),
            });
        }
        if let Some(o) = self.outcome(s) {
            v.outcome = Some(o.iter().map(|x| value_text(*x, &self.locs)).collect());
        }
        v
    }
}

#[cfg(test)]
#[path = "rsp_cache_tests.rs"]
mod tests;
