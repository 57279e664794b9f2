//! Per-thread execution: runs one thread's code symbolically and yields every
//! control-flow path as a list of events whose values are expressions over
//! the values the path's reads return.
//!
//! Read values are unknown until reads-from is chosen, so a branch whose
//! outcome depends on a read splits the path in two, each side recording the
//! constraint it assumed. Candidate enumeration later picks `rf`, computes
//! the values and drops paths whose constraints fail. Backward jumps are
//! taken at most `unroll` times per path; a path that needs more is *cut*
//! and counted, never silently dropped.

use super::sizing::{PROBE_SURE_MARGIN, PROBES, next_random};
use crate::diag::Diagnostic;
use crate::fast_hash::FastHash;
use crate::ir::{
    Address, BarrierKind, BinOp, CmpOp, Instr, InstrKind, LocId, Operand, Pos, RmwOp, Thread, Value,
};
use std::collections::{BTreeSet, HashMap};
use std::rc::Rc;

/// A symbolic value: a constant, the value returned by read number `i` of
/// the path, or an operation over such values.
#[derive(Clone, Debug, PartialEq)]
pub enum Sym {
    Const(Value),
    /// Value returned by the path's `i`-th event (which is a read).
    Read(usize),
    Bin(BinOp, Rc<Sym>, Rc<Sym>),
    /// `if a cmp b then t else e`.
    Ite(CmpOp, Rc<Sym>, Rc<Sym>, Rc<Sym>, Rc<Sym>),
}

impl Sym {
    fn constant(&self) -> Option<Value> {
        match self {
            Sym::Const(v) => Some(*v),
            _ => None,
        }
    }

    /// The path events (reads) this value depends on.
    pub fn reads(&self, out: &mut BTreeSet<usize>) {
        match self {
            Sym::Const(_) => {}
            Sym::Read(i) => {
                out.insert(*i);
            }
            Sym::Bin(_, a, b) => {
                a.reads(out);
                b.reads(out);
            }
            Sym::Ite(_, a, b, t, e) => {
                a.reads(out);
                b.reads(out);
                t.reads(out);
                e.reads(out);
            }
        }
    }

    /// Evaluates with `read(i)` giving the value of read `i`; `None` when a
    /// needed read is unknown, `Err` on an ill-typed operation.
    pub fn eval(&self, read: &dyn Fn(usize) -> Option<Value>) -> Option<Result<Value, String>> {
        Some(match self {
            Sym::Const(v) => Ok(*v),
            Sym::Read(i) => Ok(read(*i)?),
            Sym::Bin(op, a, b) => {
                let a = a.eval(read)?;
                let b = b.eval(read)?;
                match (a, b) {
                    (Ok(a), Ok(b)) => op.apply(a, b),
                    (Err(e), _) | (_, Err(e)) => Err(e),
                }
            }
            Sym::Ite(c, a, b, t, e) => {
                let a = a.eval(read)?;
                let b = b.eval(read)?;
                match (a, b) {
                    (Ok(a), Ok(b)) => {
                        if c.eval(a, b) {
                            t.eval(read)?
                        } else {
                            e.eval(read)?
                        }
                    }
                    (Err(e), _) | (_, Err(e)) => Err(e),
                }
            }
        })
    }
}

/// The kind of a path event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventKind {
    Read,
    Write,
    Fence,
    Barrier(BarrierKind),
}

/// One event of a thread path.
#[derive(Clone, Debug)]
pub struct PathEvent {
    pub kind: EventKind,
    /// Location accessed (memory events).
    pub loc: Option<LocId>,
    /// Value written (writes); reads get theirs from `rf`.
    pub value: Option<Rc<Sym>>,
    /// Index of the instruction in the thread's code.
    pub instr: usize,
    /// Index of the path event that is the read part of this RMW's write.
    pub rmw_read: Option<usize>,
    /// Reads the address depends on.
    pub addr_deps: BTreeSet<usize>,
    /// Reads the written value depends on.
    pub data_deps: BTreeSet<usize>,
    /// Reads that earlier branches depended on (shared by the events
    /// between two branches, and by the paths that split there).
    pub ctrl_deps: Rc<BTreeSet<usize>>,
    /// Barrier id and thread count (barriers).
    pub barrier: Option<(Rc<Sym>, Option<Rc<Sym>>)>,
}

/// A constraint a path assumed: `a cmp b` must hold.
#[derive(Clone, Debug)]
pub struct Constraint {
    pub cmp: CmpOp,
    pub a: Rc<Sym>,
    pub b: Rc<Sym>,
    /// Reads it depends on (so it can be checked as soon as they are known).
    pub reads: Rc<BTreeSet<usize>>,
}

/// One complete control-flow path of a thread.
///
/// Paths that split from one another share their common events and
/// constraints (`Rc`): a split copies pointers, not dependency sets, so a
/// thread with many paths is cheap to build and to free (issue 14: a
/// hundred thousand paths of sixty events each).
#[derive(Clone, Debug)]
pub struct Path {
    pub events: Vec<Rc<PathEvent>>,
    pub constraints: Vec<Rc<Constraint>>,
    /// Final register values.
    pub regs: Regs,
}

/// Register values of a path, keyed by names shared by every path of the
/// thread.
pub type Regs = HashMap<Rc<str>, Rc<Sym>, FastHash>;

/// A list that grows at its end and is shared, up to their split point,
/// by the states that split from one another: a split copies one pointer.
/// Its items come out in order, in one vector, when a path is complete.
struct Chain<T> {
    last: Option<Rc<Link<T>>>,
    len: usize,
}

struct Link<T> {
    item: Rc<T>,
    before: Option<Rc<Link<T>>>,
}

impl<T> Default for Chain<T> {
    fn default() -> Self {
        Chain { last: None, len: 0 }
    }
}

impl<T> Clone for Chain<T> {
    fn clone(&self) -> Self {
        Chain {
            last: self.last.clone(),
            len: self.len,
        }
    }
}

impl<T> Chain<T> {
    fn push(&mut self, item: T) {
        let before = self.last.take();
        self.last = Some(Rc::new(Link {
            item: Rc::new(item),
            before,
        }));
        self.len += 1;
    }

    fn len(&self) -> usize {
        self.len
    }

    /// The items, newest first.
    fn iter_back(&self) -> impl Iterator<Item = &T> {
        let mut at = self.last.as_deref();
        std::iter::from_fn(move || {
            let link = at?;
            at = link.before.as_deref();
            Some(&*link.item)
        })
    }

    /// The items, oldest first.
    fn to_vec(&self) -> Vec<Rc<T>> {
        let mut out = Vec::with_capacity(self.len);
        let mut at = self.last.as_deref();
        while let Some(link) = at {
            out.push(link.item.clone());
            at = link.before.as_deref();
        }
        out.reverse();
        out
    }
}

impl<T> Drop for Chain<T> {
    /// Frees the links no other chain shares one by one, without the
    /// recursion a long list would otherwise need.
    fn drop(&mut self) {
        let mut at = self.last.take();
        while let Some(link) = at {
            match Rc::try_unwrap(link) {
                Ok(mut link) => at = link.before.take(),
                Err(_) => break,
            }
        }
    }
}

/// All paths of one thread, plus how many were cut by the unroll bound.
#[derive(Clone, Debug, Default)]
pub struct ThreadPaths {
    pub paths: Vec<Path>,
    pub cut: usize,
}

/// Limits for path exploration.
#[derive(Clone, Copy, Debug)]
pub struct PathLimits {
    /// Times a backward jump may be taken on one path.
    pub unroll: usize,
    /// Maximum number of paths per thread before giving up.
    pub max_paths: usize,
    /// Maximum events per path.
    pub max_events: usize,
    /// Give up (an error; the caller reports the timeout) after this.
    pub deadline: Option<std::time::Instant>,
    /// With `--timeout`: when the test started and its timeout. The
    /// enumeration then projects its time from the share of the path tree
    /// covered (each branch taken to be the same size) and gives up with a
    /// limit message when the projection is well over the timeout.
    pub project: Option<(std::time::Instant, std::time::Duration)>,
}

/// Path-tree nodes between two time projections (`crate::budget`).
const PROJECT_EVERY: u64 = 256;

struct State {
    pc: usize,
    regs: Regs,
    events: Chain<PathEvent>,
    constraints: Chain<Constraint>,
    ctrl: Rc<BTreeSet<usize>>,
    back_jumps: HashMap<usize, usize, FastHash>,
    /// The share of the whole path tree below this state.
    share: f64,
}

/// Enumerates the paths of `thread`. `num_locs` bounds the locations a
/// register address may point to. A thread whose path tree is clearly
/// over the path limit is refused at once: each of [`PROBES`] random walks
/// from the root gives an unbiased estimate of the number of paths (the
/// product of the branching on its way, Knuth's estimator), and when every
/// one is over [`PROBE_SURE_MARGIN`] times the limit (the reads-from search's
/// rule: a tree within the limit does that with probability at most
/// 4^-8) the limit message
/// comes before any path is built.
pub fn explore(
    file: &str,
    thread: &Thread,
    num_locs: usize,
    limits: PathLimits,
) -> Result<ThreadPaths, Diagnostic> {
    // The walks refuse only trees over the path limit; a thread without
    // backward jumps holds at most the product of its instructions'
    // branchings (each runs at most once on a path), so one whose product
    // is within the limit is enumerated at once, as the walks would let it.
    if paths_bound(thread, num_locs) <= limits.max_paths as f64 {
        return enumerate(file, thread, num_locs, limits, None).map(|(paths, _)| paths);
    }
    let walk_limits = PathLimits {
        deadline: None,
        project: None,
        ..limits
    };
    let mut rng: u64 = 0x2545_F491_4F6C_DD1D;
    let mut least = f64::INFINITY;
    let mut total = 0.0;
    for _ in 0..PROBES {
        let (_, walk) = enumerate(file, thread, num_locs, walk_limits, Some(&mut rng))?;
        least = least.min(walk);
        total += walk;
    }
    if least > limits.max_paths as f64 * PROBE_SURE_MARGIN {
        return Err(Diagnostic::new(
            file,
            Pos::default(),
            format!(
                "thread P{} has more than {} control-flow paths (limit): about {:.1e} \
                 (estimated from {PROBES} random walks of its path tree, the smallest {least:.1e})",
                thread.id,
                limits.max_paths,
                total / PROBES as f64
            ),
        ));
    }
    enumerate(file, thread, num_locs, limits, None).map(|(paths, _)| paths)
}

/// An upper bound on the number of paths of `thread`, or infinity when it
/// jumps backwards (a loop's paths depend on the unroll bound): the product
/// of the most successors each instruction can have: 2 for a conditional
/// branch, the number of locations for an access (its address may be a
/// register), twice that for a read-modify-write (it may fail).
fn paths_bound(thread: &Thread, num_locs: usize) -> f64 {
    let label_at = |target: &str| {
        thread
            .code
            .iter()
            .rposition(|i| matches!(&i.kind, InstrKind::Label(l) if l == target))
    };
    let locs = num_locs.max(1) as f64;
    let mut bound = 1f64;
    for (pc, ins) in thread.code.iter().enumerate() {
        match &ins.kind {
            InstrKind::Goto { target } | InstrKind::Branch { target, .. } => {
                if label_at(target).is_none_or(|to| to <= pc) {
                    return f64::INFINITY;
                }
                if matches!(ins.kind, InstrKind::Branch { .. }) {
                    bound *= 2.0;
                }
            }
            InstrKind::Load { .. } | InstrKind::Store { .. } => bound *= locs,
            InstrKind::Rmw { .. } => bound *= 2.0 * locs,
            _ => {}
        }
    }
    bound
}

/// Enumerates the paths of `thread` depth-first; with `walk`, follows one
/// random root-to-leaf walk instead and returns its estimate of the number
/// of paths (0 for a walk cut by the unroll bound).
fn enumerate(
    file: &str,
    thread: &Thread,
    num_locs: usize,
    limits: PathLimits,
    mut walk: Option<&mut u64>,
) -> Result<(ThreadPaths, f64), Diagnostic> {
    let labels: HashMap<&str, usize> = thread
        .code
        .iter()
        .enumerate()
        .filter_map(|(i, ins)| match &ins.kind {
            InstrKind::Label(l) => Some((l.as_str(), i)),
            _ => None,
        })
        .collect();
    // Register names, allocated once and shared by every path's map.
    let mut names: HashMap<String, Rc<str>, FastHash> = HashMap::default();
    let mut name = |r: &str| -> Rc<str> {
        if let Some(n) = names.get(r) {
            return n.clone();
        }
        let n: Rc<str> = Rc::from(r);
        names.insert(r.to_string(), n.clone());
        n
    };
    let mut regs = Regs::default();
    for (r, v) in &thread.reg_init {
        regs.insert(name(r), Rc::new(Sym::Const(*v)));
    }
    let mut out = ThreadPaths::default();
    let mut stack = vec![State {
        pc: 0,
        regs,
        events: Chain::default(),
        constraints: Chain::default(),
        ctrl: Rc::default(),
        back_jumps: HashMap::default(),
        share: 1.0,
    }];
    let err = |ins: &Instr, msg: String| Diagnostic::new(file, ins.pos, msg);
    // The share of the path tree whose paths are enumerated (or cut).
    let (mut done, mut nodes) = (0f64, 0u64);
    while let Some(mut st) = match walk.as_deref_mut() {
        // A walk goes on with one of the successors just pushed, at random.
        Some(rng) if !stack.is_empty() => {
            let k = (next_random(rng) % stack.len() as u64) as usize;
            let st = stack.swap_remove(k);
            stack.clear();
            Some(st)
        }
        _ => stack.pop(),
    } {
        nodes += 1;
        if nodes.is_multiple_of(PROJECT_EVERY)
            && let Some((start, timeout)) = limits.project
        {
            let budget = crate::budget::TimeBudget { start, timeout };
            let (elapsed, limit) = budget.elapsed_limit();
            // The enumeration ends at its last path or at the path limit,
            // whichever comes first.
            let found = out.paths.len().max(1) as f64;
            let to_limit = (limits.max_paths as f64 + 1.0) / found;
            if let Some(projected) = budget.over(start, done, to_limit) {
                return Err(Diagnostic::new(
                    file,
                    Pos::default(),
                    format!(
                        "thread P{}: enumerating its control-flow paths would take about {:.0} s \
                         ({} paths after {elapsed:.1} s, {:.2}% of its path tree; projected from \
                         the share covered and the path limit), over --timeout {limit} s (limit)",
                        thread.id,
                        projected,
                        out.paths.len(),
                        done * 100.0
                    ),
                ));
            }
        }
        if let Some(d) = limits.deadline
            && std::time::Instant::now() > d
        {
            return Err(Diagnostic::new(
                file,
                Pos::default(),
                format!(
                    "thread P{}: its paths were still being enumerated at the deadline \
                     ({} so far)",
                    thread.id,
                    out.paths.len()
                ),
            ));
        }
        loop {
            if st.events.len() > limits.max_events {
                return Err(Diagnostic::new(
                    file,
                    thread.code.first().map(|i| i.pos).unwrap_or_default(),
                    format!(
                        "thread P{} has a path with more than {} events (limit; raise --max-events)",
                        thread.id, limits.max_events
                    ),
                ));
            }
            let Some(ins) = thread.code.get(st.pc) else {
                if walk.is_some() {
                    return Ok((out, 1.0 / st.share));
                }
                done += st.share;
                out.paths.push(Path {
                    events: st.events.to_vec(),
                    constraints: st.constraints.to_vec(),
                    regs: st.regs,
                });
                if out.paths.len() > limits.max_paths {
                    return Err(Diagnostic::new(
                        file,
                        Pos::default(),
                        format!(
                            "thread P{} has more than {} control-flow paths (limit)",
                            thread.id, limits.max_paths
                        ),
                    ));
                }
                break;
            };
            let pc = st.pc;
            st.pc += 1;
            match &ins.kind {
                InstrKind::Label(_) => {}
                InstrKind::Mov { dst, src } => {
                    let v = operand(&st.regs, src);
                    st.regs.insert(name(dst), v);
                }
                InstrKind::Op { dst, op, a, b } => {
                    let (a, b) = (operand(&st.regs, a), operand(&st.regs, b));
                    let v = match (a.constant(), b.constant()) {
                        (Some(x), Some(y)) => {
                            Rc::new(Sym::Const(op.apply(x, y).map_err(|e| err(ins, e))?))
                        }
                        _ => Rc::new(Sym::Bin(*op, a, b)),
                    };
                    st.regs.insert(name(dst), v);
                }
                InstrKind::Goto { target } | InstrKind::Branch { target, .. } => {
                    let Some(&to) = labels.get(target.as_str()) else {
                        return Err(err(ins, format!("jump to undefined label '{target}'")));
                    };
                    let taken: Option<bool> = match &ins.kind {
                        InstrKind::Branch { cmp, a, b, .. } => {
                            let (a, b) = (operand(&st.regs, a), operand(&st.regs, b));
                            match (a.constant(), b.constant()) {
                                (Some(x), Some(y)) => Some(cmp.eval(x, y)),
                                _ => {
                                    let mut reads = BTreeSet::new();
                                    a.reads(&mut reads);
                                    b.reads(&mut reads);
                                    let reads = Rc::new(reads);
                                    // Everything after depends on the
                                    // branch's reads, however it goes.
                                    if !reads.is_subset(&st.ctrl) {
                                        let mut ctrl = (*st.ctrl).clone();
                                        ctrl.extend(reads.iter().copied());
                                        st.ctrl = Rc::new(ctrl);
                                    }
                                    // A condition the path already assumed
                                    // on the same values, or its negation,
                                    // decides the branch: the other side
                                    // could never be satisfied.
                                    let assumed = st.constraints.iter_back().find_map(|c| {
                                        (*c.a == *a && *c.b == *b)
                                            .then(|| {
                                                if c.cmp == *cmp {
                                                    Some(true)
                                                } else if c.cmp == cmp.negate() {
                                                    Some(false)
                                                } else {
                                                    None
                                                }
                                            })
                                            .flatten()
                                    });
                                    if assumed.is_some() {
                                        assumed
                                    } else {
                                        // Split: explore "not taken" later, "taken" now.
                                        st.share /= 2.0;
                                        // A walk takes one side at random.
                                        let side = walk
                                            .as_deref_mut()
                                            .map(|r| next_random(r).is_multiple_of(2));
                                        if side != Some(true) {
                                            let mut other = clone_state(&st);
                                            other.constraints.push(Constraint {
                                                cmp: cmp.negate(),
                                                a: a.clone(),
                                                b: b.clone(),
                                                reads: reads.clone(),
                                            });
                                            if side.is_none() {
                                                stack.push(other);
                                            } else {
                                                st = other;
                                                continue;
                                            }
                                        }
                                        st.constraints.push(Constraint {
                                            cmp: *cmp,
                                            a,
                                            b,
                                            reads,
                                        });
                                        Some(true)
                                    }
                                }
                            }
                        }
                        _ => Some(true),
                    };
                    if taken == Some(true) {
                        if to <= pc {
                            let n = st.back_jumps.entry(pc).or_insert(0);
                            *n += 1;
                            if *n > limits.unroll {
                                if walk.is_some() {
                                    return Ok((out, 0.0));
                                }
                                done += st.share;
                                out.cut += 1;
                                break;
                            }
                        }
                        st.pc = to;
                    }
                }
                InstrKind::Fence => st.events.push(plain_event(EventKind::Fence, pc, &st.ctrl)),
                InstrKind::Barrier {
                    kind, id, count, ..
                } => {
                    let mut ev = plain_event(EventKind::Barrier(*kind), pc, &st.ctrl);
                    ev.barrier = Some((
                        operand(&st.regs, id),
                        count.as_ref().map(|c| operand(&st.regs, c)),
                    ));
                    st.events.push(ev);
                }
                InstrKind::Load { dst, addr } => {
                    let next = split(resolve_addr(st, addr, num_locs, ins, file)?);
                    for (mut st, loc, adeps) in next {
                        let idx = st.events.len();
                        let mut ev = plain_event(EventKind::Read, pc, &st.ctrl);
                        ev.loc = Some(loc);
                        ev.addr_deps = adeps;
                        st.events.push(ev);
                        st.regs.insert(name(dst), Rc::new(Sym::Read(idx)));
                        stack.push(st);
                    }
                    break;
                }
                InstrKind::Store { addr, src } => {
                    let v = operand(&st.regs, src);
                    let next = split(resolve_addr(st, addr, num_locs, ins, file)?);
                    for (mut st, loc, adeps) in next {
                        let mut ev = plain_event(EventKind::Write, pc, &st.ctrl);
                        ev.loc = Some(loc);
                        ev.addr_deps = adeps;
                        v.reads(&mut ev.data_deps);
                        ev.value = Some(v.clone());
                        st.events.push(ev);
                        stack.push(st);
                    }
                    break;
                }
                InstrKind::Rmw { dst, addr, op } => {
                    for (st, loc, adeps) in split(resolve_addr(st, addr, num_locs, ins, file)?) {
                        let mut next =
                            rmw_step(st, pc, loc, adeps, dst.as_deref().map(&mut name), op);
                        let k = next.len().max(1) as f64;
                        for st in &mut next {
                            st.share /= k;
                        }
                        stack.extend(next);
                    }
                    break;
                }
            }
        }
    }
    // Paths were discovered depth-first from a stack; restore source order
    // for stable output.
    out.paths.reverse();
    Ok((out, 0.0))
}

/// Divides the share of a state split over its possible addresses.
fn split(mut next: Vec<(State, LocId, BTreeSet<usize>)>) -> Vec<(State, LocId, BTreeSet<usize>)> {
    let k = next.len().max(1) as f64;
    for (st, _, _) in &mut next {
        st.share /= k;
    }
    next
}

fn clone_state(st: &State) -> State {
    State {
        share: st.share,
        pc: st.pc,
        regs: st.regs.clone(),
        events: st.events.clone(),
        constraints: st.constraints.clone(),
        ctrl: st.ctrl.clone(),
        back_jumps: st.back_jumps.clone(),
    }
}

fn plain_event(kind: EventKind, instr: usize, ctrl: &Rc<BTreeSet<usize>>) -> PathEvent {
    PathEvent {
        kind,
        loc: None,
        value: None,
        instr,
        rmw_read: None,
        addr_deps: BTreeSet::new(),
        data_deps: BTreeSet::new(),
        ctrl_deps: ctrl.clone(),
        barrier: None,
    }
}

fn operand(regs: &Regs, op: &Operand) -> Rc<Sym> {
    match op {
        Operand::Imm(v) => Rc::new(Sym::Const(*v)),
        Operand::Reg(r) => regs
            .get(r.as_str())
            .cloned()
            .unwrap_or_else(|| Rc::new(Sym::Const(Value::Int(0)))),
    }
}

/// Resolves an address; a register holding a read-dependent value splits
/// the path over every location, recording the assumption.
fn resolve_addr(
    st: State,
    addr: &Address,
    num_locs: usize,
    ins: &Instr,
    file: &str,
) -> Result<Vec<(State, LocId, BTreeSet<usize>)>, Diagnostic> {
    match addr {
        Address::Loc(l) => Ok(vec![(st, *l, BTreeSet::new())]),
        Address::Reg(r) => {
            let v = operand(&st.regs, &Operand::Reg(r.clone()));
            match v.constant() {
                Some(Value::Addr(l)) => Ok(vec![(st, l, BTreeSet::new())]),
                Some(Value::Int(i)) => Err(Diagnostic::new(
                    file,
                    ins.pos,
                    format!("register '{r}' used as an address holds the integer {i}"),
                )
                .expected("a register initialised with a location address like &x")),
                None => {
                    let mut reads = BTreeSet::new();
                    v.reads(&mut reads);
                    let shared = Rc::new(reads.clone());
                    let mut out = Vec::with_capacity(num_locs);
                    for l in 0..num_locs {
                        let mut s = clone_state(&st);
                        s.constraints.push(Constraint {
                            cmp: CmpOp::Eq,
                            a: v.clone(),
                            b: Rc::new(Sym::Const(Value::Addr(l))),
                            reads: shared.clone(),
                        });
                        out.push((s, l, reads.clone()));
                    }
                    Ok(out)
                }
            }
        }
    }
}

/// Emits the read (and, unless a CAS fails, the write) of an RMW.
fn rmw_step(
    mut st: State,
    pc: usize,
    loc: LocId,
    adeps: BTreeSet<usize>,
    dst: Option<Rc<str>>,
    op: &RmwOp,
) -> Vec<State> {
    let ridx = st.events.len();
    let mut rev = plain_event(EventKind::Read, pc, &st.ctrl);
    rev.loc = Some(loc);
    rev.addr_deps = adeps.clone();
    st.events.push(rev);
    let old = Rc::new(Sym::Read(ridx));
    let write = |mut st: State, value: Rc<Sym>| -> State {
        let mut ev = plain_event(EventKind::Write, pc, &st.ctrl);
        ev.loc = Some(loc);
        ev.addr_deps = adeps.clone();
        value.reads(&mut ev.data_deps);
        ev.value = Some(value);
        ev.rmw_read = Some(ridx);
        st.events.push(ev);
        st
    };
    let set_dst = |st: &mut State| {
        if let Some(d) = &dst {
            st.regs.insert(d.clone(), old.clone());
        }
    };
    match op {
        RmwOp::Cas { expected, new } => {
            let exp = operand(&st.regs, expected);
            let new = operand(&st.regs, new);
            let mut reads = BTreeSet::new();
            exp.reads(&mut reads);
            reads.insert(ridx);
            let reads = Rc::new(reads);
            let mut fail = clone_state(&st);
            fail.constraints.push(Constraint {
                cmp: CmpOp::Ne,
                a: old.clone(),
                b: exp.clone(),
                reads: reads.clone(),
            });
            set_dst(&mut fail);
            st.constraints.push(Constraint {
                cmp: CmpOp::Eq,
                a: old.clone(),
                b: exp,
                reads,
            });
            let mut ok = write(st, new);
            set_dst(&mut ok);
            vec![fail, ok]
        }
        _ => {
            let value = match op {
                RmwOp::Bin(b, x) => Rc::new(Sym::Bin(*b, old.clone(), operand(&st.regs, x))),
                RmwOp::Exch(x) => operand(&st.regs, x),
                RmwOp::Inc(bound) => Rc::new(Sym::Ite(
                    CmpOp::Ge,
                    old.clone(),
                    operand(&st.regs, bound),
                    Rc::new(Sym::Const(Value::Int(0))),
                    Rc::new(Sym::Bin(
                        BinOp::Add,
                        old.clone(),
                        Rc::new(Sym::Const(Value::Int(1))),
                    )),
                )),
                RmwOp::Dec(bound) => {
                    let b = operand(&st.regs, bound);
                    // (old == 0 || old > bound) ? bound : old - 1
                    let dec = Rc::new(Sym::Bin(
                        BinOp::Sub,
                        old.clone(),
                        Rc::new(Sym::Const(Value::Int(1))),
                    ));
                    let inner =
                        Rc::new(Sym::Ite(CmpOp::Gt, old.clone(), b.clone(), b.clone(), dec));
                    Rc::new(Sym::Ite(
                        CmpOp::Eq,
                        old.clone(),
                        Rc::new(Sym::Const(Value::Int(0))),
                        b,
                        inner,
                    ))
                }
                RmwOp::Cas { .. } => unreachable!("handled above"),
            };
            let mut st = write(st, value);
            set_dst(&mut st);
            vec![st]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::litmus::parse_str;

    fn paths_of(src: &str, thread: usize, unroll: usize) -> ThreadPaths {
        let t = parse_str("t.litmus", src).expect("parses");
        let limits = PathLimits {
            unroll,
            max_paths: 1000,
            project: None,
            max_events: 100,
            deadline: None,
        };
        explore("t.litmus", &t.threads[thread], t.locations.len(), limits).expect("explores")
    }

    #[test]
    fn straight_line_code_has_one_path_with_data_dependency() {
        let p = paths_of(
            "PTX t\n{ x=0; y=0; }\n P0@cta 0,gpu 0 ;\n ld.weak r0, x ;\n add r1, r0, 1 ;\n st.weak y, r1 ;\nexists (y=1)\n",
            0,
            2,
        );
        assert_eq!(p.paths.len(), 1);
        assert_eq!(p.cut, 0);
        let ev = &p.paths[0].events;
        assert_eq!(ev.len(), 2);
        assert_eq!(ev[0].kind, EventKind::Read);
        assert_eq!(ev[1].kind, EventKind::Write);
        assert!(
            ev[1].data_deps.contains(&0),
            "the store's value depends on the load"
        );
        assert!(ev[1].ctrl_deps.is_empty());
    }

    #[test]
    fn branch_on_a_read_splits_and_adds_control_dependencies() {
        let p = paths_of(
            "PTX t\n{ x=0; y=0; }\n P0@cta 0,gpu 0 ;\n ld.weak r0, x ;\n beq r0, 0, L ;\n st.weak y, 1 ;\n L: ;\nexists (y=1)\n",
            0,
            2,
        );
        assert_eq!(p.paths.len(), 2);
        let lens: Vec<usize> = p.paths.iter().map(|p| p.events.len()).collect();
        assert!(lens.contains(&1) && lens.contains(&2), "{lens:?}");
        let long = p.paths.iter().find(|p| p.events.len() == 2).unwrap();
        assert!(long.events[1].ctrl_deps.contains(&0));
        assert_eq!(long.constraints.len(), 1);
        assert_eq!(long.constraints[0].cmp, CmpOp::Ne);
    }

    #[test]
    fn cas_has_a_success_path_with_a_write_and_a_failure_path_without() {
        let p = paths_of(
            "PTX t\n{ m=0; }\n P0@cta 0,gpu 0 ;\n atom.relaxed.gpu.cas r1, m, 0, 1 ;\nexists (m=1)\n",
            0,
            2,
        );
        assert_eq!(p.paths.len(), 2);
        let success = p
            .paths
            .iter()
            .find(|p| p.events.len() == 2)
            .expect("success path");
        assert_eq!(success.events[1].rmw_read, Some(0));
        assert!(
            p.paths.iter().any(|p| p.events.len() == 1),
            "failure path is a lone read"
        );
    }

    #[test]
    fn backward_jumps_are_bounded_and_cut_paths_counted() {
        let src = "PTX t\n{ f=0; }\n P0@cta 0,gpu 0 ;\n L: ;\n ld.weak r0, f ;\n beq r0, 0, L ;\nexists (P0:r0=1)\n";
        for unroll in 0..4 {
            let p = paths_of(src, 0, unroll);
            // One exit path per number of iterations, one cut path.
            assert_eq!(p.paths.len(), unroll + 1, "unroll {unroll}");
            assert_eq!(p.cut, 1, "unroll {unroll}");
        }
    }

    #[test]
    fn loop_free_threads_are_bounded_by_their_branchings() {
        let t = parse_str(
            "t.litmus",
            "PTX t\n{ x=0; y=0; }\n P0@cta 0,gpu 0 ;\n ld.weak r0, x ;\n beq r0, 0, L ;\n st.weak y, 1 ;\n L: ;\n beq r0, 1, M ;\n st.weak y, 2 ;\n M: ;\nexists (y=1)\n",
        )
        .expect("parses");
        // Two branches and three accesses over two locations.
        assert_eq!(paths_bound(&t.threads[0], t.locations.len()), 4.0 * 8.0);
        let looped = parse_str(
            "t.litmus",
            "PTX t\n{ x=0; }\n P0@cta 0,gpu 0 ;\n L: ;\n ld.weak r0, x ;\n beq r0, 0, L ;\nexists (x=0)\n",
        )
        .expect("parses");
        assert_eq!(
            paths_bound(&looped.threads[0], looped.locations.len()),
            f64::INFINITY
        );
        // The bound skips the walks, not the limit: a loop-free thread over
        // the limit is still refused by its enumeration.
        let limits = PathLimits {
            unroll: 2,
            max_paths: 1,
            project: None,
            max_events: 100,
            deadline: None,
        };
        let e = explore("t.litmus", &t.threads[0], t.locations.len(), limits).unwrap_err();
        assert!(e.message.contains("control-flow paths"), "{}", e.message);
    }
}
