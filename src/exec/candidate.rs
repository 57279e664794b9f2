//! Candidate executions: one path per thread, a value-consistent `rf`, and a
//! coherence order per location.
//!
//! Cost grows as (paths per thread)^threads × (rf choices) × Π(writes per
//! location)!. The `rf` search is a backtracking search that checks each path
//! constraint (branch outcomes, CAS success/failure, computed addresses) as
//! soon as the reads it mentions have a source, so most inconsistent `rf`
//! choices are cut before they are completed.

use super::thread::{EventKind, Path, PathEvent, Sym};
use crate::fast_hash::FastHash;
use crate::ir::{LocId, Proxy, ScopeLevel, Test, Value};
use crate::rel::{BitSet, Relation};
use std::collections::HashMap;

/// Where an event comes from.
#[derive(Clone, Debug)]
pub struct Event {
    /// Thread index, or `None` for an init write.
    pub thread: Option<usize>,
    pub kind: EventKind,
    /// Physical location accessed (memory events): aliases are resolved.
    pub loc: Option<LocId>,
    /// Location as named by the access (an alias stays itself); init writes
    /// name their physical location.
    pub addr: Option<LocId>,
    /// Index of the instruction in its thread's code (None for init).
    pub instr: Option<usize>,
    /// Index of the event inside its thread path.
    pub local: usize,
}

/// The part of a candidate fixed by the choice of one path per thread:
/// events, program order, dependencies, tags and scopes.
pub struct Skeleton<'a> {
    pub test: &'a Test,
    pub paths: Vec<&'a Path>,
    pub events: Vec<Event>,
    /// Global id of the first event of each thread.
    pub base: Vec<usize>,
    /// Init write of each location.
    pub init: Vec<usize>,
    /// Global ids of reads, in thread/program order.
    pub reads: Vec<usize>,
    /// Writes per location (init excluded), in event order.
    pub writes_by_loc: Vec<Vec<usize>>,
    /// Keyed by names borrowed from the test or static (no allocation per
    /// skeleton); FxHash, as nothing depends on their iteration order.
    pub sets: HashMap<&'a str, BitSet, FastHash>,
    pub rels: HashMap<&'a str, Relation, FastHash>,
}

/// The sets every skeleton has, whatever its events: the slots of
/// [`Skeleton::new`]'s fixed sets.
const FIXED: [&str; 9] = ["_", "R", "W", "M", "F", "BAR", "IW", "RMW", "GENERIC"];

/// Indices into [`FIXED`].
mod slot {
    pub const ALL: usize = 0;
    pub const R: usize = 1;
    pub const W: usize = 2;
    pub const M: usize = 3;
    pub const F: usize = 4;
    pub const BAR: usize = 5;
    pub const IW: usize = 6;
    pub const RMW: usize = 7;
    pub const GENERIC: usize = 8;
}

impl<'a> Skeleton<'a> {
    /// Number of events.
    pub fn len(&self) -> usize {
        self.events.len()
    }

    /// True when there are no events (never: init writes always exist).
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// Builds the skeleton for one combination of thread paths.
    pub fn new(test: &'a Test, paths: Vec<&'a Path>) -> Self {
        let nloc = test.locations.len();
        let phys: Vec<LocId> = (0..nloc).map(|l| test.physical(l)).collect();
        let mut events =
            Vec::with_capacity(nloc + paths.iter().map(|p| p.events.len()).sum::<usize>());
        // One init write per physical location; `init[l]` is the one of
        // `l`'s physical location.
        let mut init = vec![usize::MAX; nloc];
        for l in 0..nloc {
            if phys[l] == l {
                init[l] = events.len();
                events.push(Event {
                    thread: None,
                    kind: EventKind::Write,
                    loc: Some(l),
                    addr: Some(l),
                    instr: None,
                    local: 0,
                });
            }
        }
        for l in 0..nloc {
            init[l] = init[phys[l]];
        }
        let mut base = Vec::new();
        for (t, p) in paths.iter().enumerate() {
            base.push(events.len());
            for (i, e) in p.events.iter().enumerate() {
                events.push(Event {
                    thread: Some(t),
                    kind: e.kind,
                    loc: e.loc.map(|l| phys[l]),
                    addr: e.loc,
                    instr: Some(e.instr),
                    local: i,
                });
            }
        }
        let n = events.len();
        // Reads whose value flows into a written value come first: once their
        // sources are fixed, the values other reads see through them are
        // known, so branch and CAS constraints are decided early in the rf
        // search (any order is sound; this one prunes sooner).
        let mut feeds_write = vec![false; n];
        for (t, p) in paths.iter().enumerate() {
            for e in &p.events {
                for &d in &e.data_deps {
                    feeds_write[base[t] + d] = true;
                }
            }
        }
        let mut reads: Vec<usize> = (0..n)
            .filter(|&e| events[e].kind == EventKind::Read)
            .collect();
        reads.sort_by_key(|&e| (!feeds_write[e], e));
        let mut writes_by_loc = vec![Vec::new(); nloc];
        for (i, e) in events.iter().enumerate() {
            if e.kind == EventKind::Write && e.thread.is_some() {
                writes_by_loc[e.loc.unwrap_or(0)].push(i);
            }
        }

        // Sets. The names every skeleton has get fixed slots; the tags of
        // instructions are gathered in a short list (a few per test),
        // looked up by pointer first (an instruction's tags are one
        // allocation, shared by all its events), then hashed once.
        use slot::*;
        debug_assert_eq!(FIXED[GENERIC], Proxy::Generic.tag());
        let mut fixed: [BitSet; 9] = std::array::from_fn(|_| BitSet::new(n));
        let mut found: Vec<(&str, BitSet)> = Vec::with_capacity(8);
        /// Adds event `e` to the set `name`.
        fn add_tag<'t>(
            fixed: &mut [BitSet; 9],
            found: &mut Vec<(&'t str, BitSet)>,
            name: &'t str,
            e: usize,
        ) {
            if let Some(k) = FIXED.iter().position(|f| *f == name) {
                fixed[k].insert(e);
                return;
            }
            let hit = found
                .iter()
                .position(|(k, _)| std::ptr::eq(*k, name))
                .or_else(|| found.iter().position(|(k, _)| *k == name));
            match hit {
                Some(i) => {
                    found[i].1.insert(e);
                }
                None => {
                    let mut s = BitSet::new(fixed[0].universe());
                    s.insert(e);
                    found.push((name, s));
                }
            }
        }
        // Whether an instruction names a proxy.
        let names_proxy =
            |tags: &[String]| tags.iter().any(|t| Proxy::ALL.iter().any(|p| p.tag() == t));
        for (i, e) in events.iter().enumerate() {
            fixed[ALL].insert(i);
            match e.kind {
                EventKind::Read => {
                    fixed[R].insert(i);
                    fixed[M].insert(i);
                }
                EventKind::Write => {
                    fixed[W].insert(i);
                    fixed[M].insert(i);
                }
                EventKind::Fence => {
                    fixed[F].insert(i);
                }
                EventKind::Barrier(_) => {
                    fixed[BAR].insert(i);
                }
            }
            match e.thread {
                None => {
                    fixed[IW].insert(i);
                }
                Some(t) => {
                    let ins = &test.threads[t].code[e.instr.unwrap_or(0)];
                    for tag in &ins.tags {
                        add_tag(&mut fixed, &mut found, tag, i);
                    }
                    // Every memory access goes through some proxy: generic
                    // unless its instruction names another one.
                    if matches!(e.kind, EventKind::Read | EventKind::Write)
                        && !names_proxy(&ins.tags)
                    {
                        fixed[GENERIC].insert(i);
                    }
                    if let Some(r) = paths[t].events[e.local].rmw_read {
                        fixed[RMW].insert(i);
                        fixed[RMW].insert(base[t] + r);
                    }
                }
            }
        }
        let mut sets: HashMap<&'a str, BitSet, FastHash> =
            HashMap::with_capacity_and_hasher(FIXED.len() + found.len(), FastHash::default());
        for (k, v) in FIXED.into_iter().zip(fixed) {
            sets.insert(k, v);
        }
        for (k, v) in found {
            sets.insert(k, v);
        }

        // Static relations.
        let mut rels: HashMap<&'a str, Relation, FastHash> =
            HashMap::with_capacity_and_hasher(32, FastHash::default());
        let mut po = Relation::new(n);
        let mut int = Relation::new(n);
        let mut loc = Relation::new(n);
        let mut vloc = Relation::new(n);
        let vaddr: Vec<Option<LocId>> = events
            .iter()
            .map(|e| e.addr.map(|a| test.virtual_address(a)))
            .collect();
        let mut rmw = Relation::new(n);
        let mut addr = Relation::new(n);
        let mut data = Relation::new(n);
        let mut ctrl = Relation::new(n);
        // Pairs of events of one thread, then pairs of events of one
        // location (the only pairs these relations can hold).
        for (t, p) in paths.iter().enumerate() {
            let range = base[t]..base[t] + p.events.len();
            for a in range.clone() {
                for b in range.clone() {
                    int.add(a, b);
                    if events[a].local < events[b].local {
                        po.add(a, b);
                    }
                }
            }
        }
        let mut by_loc: Vec<Vec<usize>> = vec![Vec::new(); nloc];
        for (i, e) in events.iter().enumerate() {
            if let Some(l) = e.loc {
                by_loc[l].push(i);
            }
        }
        for group in &by_loc {
            for &a in group {
                for &b in group {
                    loc.add(a, b);
                    // Same virtual address; an init write stands for every
                    // address of its physical location.
                    let (ea, eb) = (&events[a], &events[b]);
                    if vaddr[a] == vaddr[b] || ea.thread.is_none() || eb.thread.is_none() {
                        vloc.add(a, b);
                    }
                }
            }
        }
        for (t, p) in paths.iter().enumerate() {
            let g = |i: usize| base[t] + i;
            for (i, e) in p.events.iter().enumerate() {
                if let Some(r) = e.rmw_read {
                    rmw.add(g(r), g(i));
                }
                for &d in &e.addr_deps {
                    addr.add(g(d), g(i));
                }
                for &d in &e.data_deps {
                    data.add(g(d), g(i));
                }
                for &d in e.ctrl_deps.iter() {
                    ctrl.add(g(d), g(i));
                }
            }
        }
        let mut ext = int.complement();
        let idr = Relation::identity(n);
        ext = ext.difference(&idr);
        rels.insert("po-loc", po.intersection(&loc));
        rels.insert("po", po);
        rels.insert("int", int);
        rels.insert("ext", ext);
        rels.insert("loc", loc);
        rels.insert("vloc", vloc);
        rels.insert("rmw", rmw);
        rels.insert("addr", addr);
        rels.insert("data", data);
        rels.insert("ctrl", ctrl);
        rels.insert("id", idr);
        // The test's levels, then the always-present ones.
        let mut levels = scope_levels(test);
        for &l in ALWAYS_LEVELS {
            if !levels.contains(&l) {
                levels.push(l);
            }
        }
        // Per level, which threads share an instance (decided once per pair
        // of threads, not per pair of events); init writes are in every one.
        // Levels that group the threads alike (every level no thread is
        // placed in) share one relation.
        let nthreads = paths.len();
        let all = BitSet::full(n);
        // Init writes (the set `IW` built above) are in every instance of
        // every level.
        let iw = &sets["IW"];
        let mut with_inits = Relation::cartesian(iw, &all);
        with_inits.union_with(&Relation::cartesian(&all, iw));
        let mut built: Vec<(Vec<bool>, &'a str)> = Vec::new();
        for level in levels {
            // A level no thread is placed in groups each thread alone.
            let placed = level == "sys"
                || test
                    .threads
                    .iter()
                    .any(|t| t.placement.iter().any(|s| s.level == level));
            let shared: Vec<bool> = (0..nthreads * nthreads)
                .map(|k| {
                    let (ta, tb) = (k / nthreads, k % nthreads);
                    if placed {
                        same_thread_instance(test, ta, tb, level)
                    } else {
                        ta == tb
                    }
                })
                .collect();
            if let Some((_, like)) = built.iter().find(|(s, _)| *s == shared)
                && let Some(r) = rels.get(like).cloned()
            {
                rels.insert(level, r);
                continue;
            }
            let alone = shared
                .iter()
                .enumerate()
                .all(|(k, &s)| s == (k / nthreads == k % nthreads));
            let r = if shared.iter().all(|&s| s) {
                Relation::full(n)
            } else if alone && let Some(int) = rels.get("int") {
                // Each thread in an instance of its own.
                int.union(&with_inits)
            } else {
                let mut r = with_inits.clone();
                for ta in 0..nthreads {
                    let a_events = base[ta]..base[ta] + paths[ta].events.len();
                    for tb in 0..nthreads {
                        if !shared[ta * nthreads + tb] {
                            continue;
                        }
                        for a in a_events.clone() {
                            for b in base[tb]..base[tb] + paths[tb].events.len() {
                                r.add(a, b);
                            }
                        }
                    }
                }
                r
            };
            rels.insert(level, r);
            built.push((shared, level));
        }
        Skeleton {
            test,
            paths,
            events,
            base,
            init,
            reads,
            writes_by_loc,
            sets,
            rels,
        }
    }

    /// The path event behind global event `e` (None for init writes).
    pub fn path_event(&self, e: usize) -> Option<&PathEvent> {
        let ev = &self.events[e];
        ev.thread.map(|t| &*self.paths[t].events[ev.local])
    }

    /// Global id of path event `i` of thread `t`.
    pub fn global(&self, t: usize, i: usize) -> usize {
        self.base[t] + i
    }
}

/// Scope levels whose relation every candidate provides, even when no
/// thread is placed in one (the levels of the PTX and X86+PTX scope trees),
/// so that a model naming `cta` or `gpu` also runs on an x86 test, and the
/// language levels `wg`, `dev` so that scoped C/C++ runs on a program whose
/// threads are all on CPUs (`P0@cpu`). Such a level relates events of the
/// same thread (and init writes) only.
pub const ALWAYS_LEVELS: &[&str] = &["cta", "gpu", "cpu", "wg", "dev"];

/// Scope level names used by the test, plus `sys` (the root).
pub fn scope_levels(test: &Test) -> Vec<&str> {
    let mut out = vec!["sys"];
    for t in &test.threads {
        for ScopeLevel { level, .. } in &t.placement {
            if !out.contains(&level.as_str()) {
                out.push(level);
            }
        }
    }
    out
}

/// Whether threads `ta` and `tb` are in the same instance of `level`.
pub(crate) fn same_thread_instance(test: &Test, ta: usize, tb: usize, level: &str) -> bool {
    if ta == tb || level == "sys" {
        return true;
    }
    let (pa, pb) = (&test.threads[ta].placement, &test.threads[tb].placement);
    let (Some(ia), Some(ib)) = (
        pa.iter().position(|s| s.level == level),
        pb.iter().position(|s| s.level == level),
    ) else {
        return false;
    };
    pa[..=ia] == pb[..=ib]
}

/// Value-solving state during the `rf` search.
pub struct Values<'s, 'a> {
    skel: &'s Skeleton<'a>,
    /// rf source of each event (reads only), `usize::MAX` when unassigned.
    rf: Vec<usize>,
    /// Values already computed under the current `rf` (cleared when it changes).
    memo: std::cell::RefCell<Vec<Option<Value>>>,
}

/// Outcome of evaluating something under a partial `rf`.
#[derive(Debug, PartialEq)]
pub enum Eval {
    Known(Value),
    /// Depends on a read without an rf source yet.
    Unknown,
    /// Circular: the value depends on itself through `rf` and data flow.
    Cyclic,
    /// Ill-typed (arithmetic on an address).
    Error(String),
}

impl<'s, 'a> Values<'s, 'a> {
    pub fn new(skel: &'s Skeleton<'a>) -> Self {
        Values {
            skel,
            rf: vec![usize::MAX; skel.len()],
            memo: std::cell::RefCell::new(vec![None; skel.len()]),
        }
    }

    /// Sets (or, with `usize::MAX`, clears) the rf source of read `r`.
    pub fn set_rf(&mut self, r: usize, w: usize) {
        self.rf[r] = w;
        self.memo.get_mut().iter_mut().for_each(|m| *m = None);
    }

    /// The rf source of read `r`, if assigned.
    pub fn rf_source(&self, r: usize) -> Option<usize> {
        (self.rf[r] != usize::MAX).then_some(self.rf[r])
    }

    /// Value of event `e` (a read: its source's; a write: its expression).
    pub fn value(&self, e: usize) -> Eval {
        let mut visiting = Vec::new();
        self.value_rec(e, &mut visiting)
    }

    fn value_rec(&self, e: usize, visiting: &mut Vec<usize>) -> Eval {
        if let Some(v) = self.memo.borrow()[e] {
            return Eval::Known(v);
        }
        if visiting.contains(&e) {
            return Eval::Cyclic;
        }
        let v = self.compute(e, visiting);
        if let Eval::Known(v) = v {
            self.memo.borrow_mut()[e] = Some(v);
        }
        v
    }

    fn compute(&self, e: usize, visiting: &mut Vec<usize>) -> Eval {
        let ev = &self.skel.events[e];
        match ev.thread {
            None => Eval::Known(self.skel.test.locations[ev.loc.unwrap_or(0)].init),
            Some(t) => match ev.kind {
                EventKind::Read => {
                    let src = self.rf[e];
                    if src == usize::MAX {
                        return Eval::Unknown;
                    }
                    visiting.push(e);
                    let v = self.value_rec(src, visiting);
                    visiting.pop();
                    v
                }
                _ => {
                    let pe = &self.skel.paths[t].events[ev.local];
                    match &pe.value {
                        None => Eval::Known(Value::Int(0)),
                        Some(sym) => {
                            visiting.push(e);
                            let v = self.sym(t, sym, visiting);
                            visiting.pop();
                            v
                        }
                    }
                }
            },
        }
    }

    /// Evaluates a thread-local symbolic value.
    pub fn sym(&self, t: usize, sym: &Sym, visiting: &mut Vec<usize>) -> Eval {
        // Why a read had no value: the first reason, but Cyclic wins.
        let mut missing: Option<Eval> = None;
        let cell = std::cell::RefCell::new((&mut missing, visiting));
        let res = sym.eval(&|i| {
            let mut c = cell.borrow_mut();
            let g = self.skel.global(t, i);
            match self.value_rec(g, c.1) {
                Eval::Known(v) => Some(v),
                other => {
                    if c.0.is_none() || other == Eval::Cyclic {
                        *c.0 = Some(other);
                    }
                    None
                }
            }
        });
        match res {
            Some(Ok(v)) => Eval::Known(v),
            Some(Err(e)) => Eval::Error(e),
            None => missing.unwrap_or(Eval::Unknown),
        }
    }

    /// Checks a path constraint: `Known(Int(1))` if it holds, `Known(Int(0))`
    /// if it fails, otherwise why it cannot be decided yet.
    pub fn constraint(&self, t: usize, c: &super::thread::Constraint) -> Eval {
        if c.reads
            .iter()
            .any(|&i| self.rf[self.skel.global(t, i)] == usize::MAX)
        {
            return Eval::Unknown;
        }
        let mut vis = Vec::new();
        let a = self.sym(t, &c.a, &mut vis);
        let b = self.sym(t, &c.b, &mut vis);
        match (a, b) {
            (Eval::Known(x), Eval::Known(y)) => Eval::Known(Value::Int(c.cmp.eval(x, y) as i64)),
            (Eval::Error(e), _) | (_, Eval::Error(e)) => Eval::Error(e),
            (Eval::Cyclic, _) | (_, Eval::Cyclic) => Eval::Cyclic,
            _ => Eval::Unknown,
        }
    }
}

/// Enumerates the strict total orders (as sequences) of `items`.
pub fn permutations(items: &[usize]) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    let mut cur = items.to_vec();
    permute(&mut cur, 0, &mut out);
    out
}

fn permute(v: &mut Vec<usize>, k: usize, out: &mut Vec<Vec<usize>>) {
    if k + 1 >= v.len() {
        out.push(v.clone());
        return;
    }
    for i in k..v.len() {
        v.swap(k, i);
        permute(v, k + 1, out);
        v.swap(k, i);
    }
}

/// Builds the coherence relation from one order per location (init first).
pub fn coherence(skel: &Skeleton, orders: &[&Vec<usize>]) -> Relation {
    let n = skel.len();
    let mut co = Relation::new(n);
    for (l, order) in orders.iter().enumerate() {
        let iw = skel.init[l];
        for (i, &a) in order.iter().enumerate() {
            co.add(iw, a);
            for &b in &order[i + 1..] {
                co.add(a, b);
            }
        }
    }
    co
}
