//! Pomsets with predicate transformers (seed 003, "A Unified Memory Model
//! for Heterogenous Systems") as a denotational judge: `--model pwt`.
//!
//! A test's meaning is the set of complete pomsets of its program. The judge
//! decides it exhaustively (docs/pomsets.md): per thread, every control path
//! with a value per read and, per write and fence, every ⊆-minimal set of
//! reads its precondition needs ([`thread`]); then, per combination, every
//! reads-from choice and the least dependency, synchronisation and
//! per-location orders the rules force, branching only where the seed
//! offers a choice (c7b, c8b; [`search`], [`orders`]). It starts from the IR,
//! accepts the PTX fragment of the seed ([`program`]) and knows no output
//! format: it fills an [`CheckResult`] like every other judge.

pub mod orders;
pub mod program;
pub mod search;
pub mod thread;

use crate::ir::outcome as exec;
use crate::ir::{Term, Test, Value};
use crate::verdict::{CheckError, CheckOptions, CheckResult, EventView, ExecutionView, Forbidden};
use orders::{Actions, GEv, Order, Reading};
use program::{Mode, Scope};
use search::{Combo, Violation};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;
use thread::{Bounds, Kind, Path};

/// The models this judge offers, with a description.
pub const MODELS: &[(&str, &str)] = &[(
    "pwt",
    "pomsets with predicate transformers (seed 003), PTX fragment, decided exhaustively (docs/pomsets.md)",
)];

/// The `--variant` names the judge reads, with what each changes.
pub const VARIANTS: &[(&str, &str)] = &[
    (
        "ptx-acq-delay",
        "L.185 footnote: (Rx, R^acq x) is a sync-delay (PTX's acquire pattern)",
    ),
    (
        "literal-c8a",
        "A4 as printed: c8a puts every rf pair in the per-location order",
    ),
    (
        "literal-c7a",
        "A3 as printed: c7a also through rf pairs that do not strongly overlap",
    ),
    (
        "literal-fences",
        "A2 as printed: a fence strongly-matches only another sc fence",
    ),
    (
        "c7a-any-successor",
        "c7a' with e' anywhere after e in the sync order, not only in e's thread",
    ),
    (
        "rmw-release-sequence",
        "Anton's C7a''' (L.906-910): c7a also through rf; (rmw; rf)* chains",
    ),
    (
        "co-rr",
        "(Rx, Rx) is a co-delay: program-ordered reads of one location ordered in the per-location order (CoRR)",
    ),
];

/// Whether `name` is a model of this judge.
pub fn is_model(name: &str) -> bool {
    MODELS.iter().any(|(n, _)| *n == name)
}

/// Largest number of events (initial writes included) of one pomset.
const MAX_EVENTS: usize = 64;
/// Largest number of values per location.
const MAX_VALUES: usize = 32;

/// Checks `test` under pwt with the `--variant`s `variants` (names it does
/// not know are ignored: they belong to other models).
pub fn check(
    test: &Test,
    variants: &[String],
    opts: &CheckOptions,
) -> Result<CheckResult, CheckError> {
    let start = Instant::now();
    let deadline = opts.timeout.map(|t| start + t);
    let has = |v: &str| variants.iter().any(|x| x == v);
    let reading = Reading {
        ptx_acq_delay: has("ptx-acq-delay"),
        literal_c8a: has("literal-c8a"),
        literal_c7a: has("literal-c7a"),
        literal_fences: has("literal-fences"),
        co_rr: has("co-rr"),
        c7a_any_successor: has("c7a-any-successor"),
        rmw_chains: has("rmw-release-sequence"),
    };
    let prog = program::build(test)?;
    let bounds = Bounds {
        unroll: opts.unroll,
        max_events: opts.max_events.min(MAX_EVENTS),
        max_paths: opts.max_paths,
    };
    // A9: the values a location can hold: the writes the threads make from
    // values already known, iterated. A value of a complete pomset is
    // derived through a chain of distinct write events (each step an rf
    // source of a read the write depends on, or an earlier write of the
    // same thread), each step needing at most one more round; a pomset has
    // at most the writes of one path per thread (docs/pomsets.md, "What is
    // enumerated").
    // A value that went through k atomic adds of one location needs k
    // distinct add events there (each add's write depends on its read), so
    // values with more adds than a pomset can hold on it are dropped.
    let mut domains: Vec<Vec<i64>> = prog.init.iter().map(|&v| vec![v]).collect();
    let mut depths: Vec<Vec<u32>> = prog.init.iter().map(|_| vec![0]).collect();
    let mut round = 0;
    loop {
        round += 1;
        let mut found: Vec<(usize, i64, u32)> = Vec::new();
        let mut chain = 0;
        let mut adds_per_loc = vec![0u32; prog.init.len()];
        for t in &prog.threads {
            let (paths, _) =
                thread::paths(t, &domains, &depths, bounds).map_err(CheckError::Limit)?;
            let mut most = 0;
            let mut most_adds = vec![0u32; prog.init.len()];
            for p in &paths {
                let w = p.events.iter().filter(|e| e.kind == Kind::W);
                most = most.max(w.clone().count());
                let mut adds = vec![0u32; prog.init.len()];
                for e in w {
                    let l = e.loc.unwrap_or(0);
                    if e.adds > 0 {
                        adds[l] += 1;
                    }
                    found.push((l, e.val, e.adds));
                }
                for (m, a) in most_adds.iter_mut().zip(adds) {
                    *m = (*m).max(a);
                }
            }
            chain += most;
            for (s, m) in adds_per_loc.iter_mut().zip(most_adds) {
                *s += m;
            }
        }
        let mut grown = false;
        for (l, v, d) in found {
            if d > adds_per_loc[l] {
                continue;
            }
            match domains[l].iter().position(|&x| x == v) {
                Some(i) if depths[l][i] > d => {
                    depths[l][i] = d;
                    grown = true;
                }
                Some(_) => {}
                None => {
                    domains[l].push(v);
                    depths[l].push(d);
                    grown = true;
                }
            }
        }
        if domains.iter().any(|d| d.len() > MAX_VALUES) {
            return Err(CheckError::Limit(format!(
                "a location may hold more than {MAX_VALUES} values (pwt enumerates read values)"
            )));
        }
        if !grown || round > 2 * chain + 1 {
            break;
        }
    }
    let mut vdom: Vec<i64> = domains.iter().flatten().copied().collect();
    vdom.sort_unstable();
    vdom.dedup();
    let mut res = CheckResult::new(test, "pwt");
    // Per thread: its paths, each with its dependency sets.
    let mut threads: Vec<Vec<(Path, Vec<usize>)>> = Vec::new();
    for t in &prog.threads {
        let (paths, cut) =
            thread::paths(t, &domains, &depths, bounds).map_err(CheckError::Limit)?;
        res.cut_paths += cut;
        let mut choices = Vec::new();
        for mut p in paths {
            thread::fill_deps(t, &prog.init, &vdom, &mut p, opts.unroll)
                .map_err(CheckError::Limit)?;
            // One choice of a minimal set per event (odometer over them).
            let mut pick = vec![0usize; p.events.len()];
            loop {
                choices.push((p.clone(), pick.clone()));
                if !advance(&mut pick, |i| p.deps[i].len()) {
                    break;
                }
            }
            if choices.len() > opts.max_paths {
                return Err(CheckError::Limit(format!(
                    "a thread has more than {} pomsets (raise --max-paths)",
                    opts.max_paths
                )));
            }
        }
        threads.push(choices);
    }
    let observed = exec::observed_terms(test);
    let place: Vec<(u32, u32)> = prog.threads.iter().map(|t| (t.gpu, t.cta)).collect();
    let mut judge = Judge {
        test,
        opts,
        observed: &observed,
        allowed: BTreeSet::new(),
        failures: BTreeMap::new(),
        candidates: 0,
        start,
        deadline,
    };
    let mut pick = vec![0usize; threads.len()];
    let accesses = |p: &Path, k: Kind| -> Vec<(usize, i64)> {
        p.events
            .iter()
            .filter(|e| e.kind == k)
            .map(|e| (e.loc.unwrap_or(0), e.val))
            .collect()
    };
    // Per thread choice: its reads and writes as (location, value), so a
    // combination where some read has no write of its value is skipped
    // before it is assembled (c2a, c2b).
    let reads: Vec<Vec<Vec<(usize, i64)>>> = threads
        .iter()
        .map(|c| c.iter().map(|(p, _)| accesses(p, Kind::R)).collect())
        .collect();
    let writes: Vec<Vec<Vec<(usize, i64)>>> = threads
        .iter()
        .map(|c| c.iter().map(|(p, _)| accesses(p, Kind::W)).collect())
        .collect();
    // What the threads from `t` on can write, for cutting combinations
    // whose pending reads no remaining thread can match.
    let mut suffix: Vec<BTreeSet<(usize, i64)>> = vec![BTreeSet::new(); threads.len() + 1];
    for t in (0..threads.len()).rev() {
        let mut s = suffix[t + 1].clone();
        s.extend(writes[t].iter().flatten().copied());
        suffix[t] = s;
    }
    let space = Space {
        threads: &threads,
        reads: &reads,
        writes: &writes,
        suffix: &suffix,
        prog: &prog,
        place: &place,
        reading,
    };
    if threads.iter().all(|c| !c.is_empty()) {
        space.dfs(&mut judge, &mut pick, 0)?;
    }
    for state in &judge.allowed {
        res.count_allowed(exec::satisfies(test, state), 1);
        res.states.insert(state.clone(), 1);
    }
    if opts.why {
        for (state, (v, view)) in &judge.failures {
            if judge.allowed.contains(state) || !exec::satisfies(test, state) {
                continue;
            }
            res.forbidden.push(Forbidden {
                state: state.clone(),
                failure: crate::cat::Failure {
                    check: v.check.clone(),
                    kind: crate::cat::CheckKind::Acyclic,
                    witness: Vec::new(),
                    relations: Vec::new(),
                    path: v.path.clone(),
                },
                execution: view.clone(),
            });
        }
    }
    res.candidates = judge.candidates;
    res.settle();
    res.elapsed = start.elapsed();
    Ok(res)
}

/// The combinations of thread pomsets, searched thread by thread.
struct Space<'a> {
    threads: &'a [Vec<(Path, Vec<usize>)>],
    reads: &'a [Vec<Vec<(usize, i64)>>],
    writes: &'a [Vec<Vec<(usize, i64)>>],
    suffix: &'a [BTreeSet<(usize, i64)>],
    prog: &'a program::Program,
    place: &'a [(u32, u32)],
    reading: Reading,
}

impl Space<'_> {
    /// Chooses a pomset for thread `t` and the following ones; a read whose
    /// value neither the initial state, a chosen thread nor a later one can
    /// write ends the branch (c2a, c2b).
    fn dfs(&self, judge: &mut Judge<'_>, pick: &mut [usize], t: usize) -> Result<(), CheckError> {
        if judge.deadline.is_some_and(|d| Instant::now() > d) {
            return Err(CheckError::Timeout {
                after: judge.start.elapsed(),
                candidates: judge.candidates,
                pruned: 0,
                states: None,
            });
        }
        let n = self.threads.len();
        if t == n {
            let chosen: Vec<&(Path, Vec<usize>)> = pick
                .iter()
                .enumerate()
                .map(|(u, &i)| &self.threads[u][i])
                .collect();
            return judge.combination(self.prog, &chosen, self.place, self.reading);
        }
        for i in 0..self.threads[t].len() {
            pick[t] = i;
            let p: &[usize] = pick;
            let written = |l: usize, v: i64| {
                self.prog.init[l] == v
                    || (0..=t).any(|u| self.writes[u][p[u]].contains(&(l, v)))
                    || self.suffix[t + 1].contains(&(l, v))
            };
            let ok = (0..=t).all(|u| self.reads[u][p[u]].iter().all(|&(l, v)| written(l, v)));
            if ok {
                self.dfs(judge, pick, t + 1)?;
            }
        }
        Ok(())
    }
}

/// Steps an odometer whose digit `i` runs below `len(i)`; false after the
/// last combination.
fn advance(pick: &mut [usize], len: impl Fn(usize) -> usize) -> bool {
    for (i, p) in pick.iter_mut().enumerate() {
        if *p + 1 < len(i) {
            *p += 1;
            return true;
        }
        *p = 0;
    }
    false
}

/// The search's running state: allowed final states and, for `--why`, the
/// first violation met per state.
struct Judge<'a> {
    test: &'a Test,
    opts: &'a CheckOptions,
    observed: &'a [Term],
    allowed: BTreeSet<Vec<Value>>,
    failures: BTreeMap<Vec<Value>, (Violation, ExecutionView)>,
    candidates: u64,
    start: Instant,
    deadline: Option<Instant>,
}

impl Judge<'_> {
    /// Every reads-from choice of one combination of thread pomsets.
    fn combination(
        &mut self,
        prog: &program::Program,
        chosen: &[&(Path, Vec<usize>)],
        place: &[(u32, u32)],
        reading: Reading,
    ) -> Result<(), CheckError> {
        let nloc = prog.init.len();
        let mut evs: Vec<GEv> = (0..nloc)
            .map(|l| GEv {
                thread: None,
                kind: Kind::W,
                loc: Some(l),
                val: prog.init[l],
                mode: Mode::Rlx,
                scope: Scope::Sys,
                instr: String::new(),
            })
            .collect();
        let mut offset = Vec::new();
        for (t, (p, _)) in chosen.iter().enumerate() {
            offset.push(evs.len());
            for e in &p.events {
                evs.push(GEv {
                    thread: Some(t),
                    kind: e.kind,
                    loc: e.loc,
                    val: e.val,
                    mode: e.mode,
                    scope: e.scope,
                    instr: prog.threads[t].text[e.instr].clone(),
                });
            }
        }
        let n = evs.len();
        if n > MAX_EVENTS {
            return Err(CheckError::Limit(format!(
                "a pomset of this test has {n} events; pwt handles at most {MAX_EVENTS}"
            )));
        }
        let act = Actions {
            evs: &evs,
            place,
            reading,
        };
        let mut dep = Order::new(n);
        let mut sync = Order::new(n);
        let mut loc = Order::new(n);
        let mut rmw = Vec::new();
        for (t, (p, pick)) in chosen.iter().enumerate() {
            let o = offset[t];
            for (i, e) in p.events.iter().enumerate() {
                for &d in &p.deps[i][pick[i]] {
                    dep.add(o + d, o + i, "dep");
                }
                if let Some(r) = e.rmw_read {
                    rmw.push((o + r, o + i));
                    sync.add(o + r, o + i, "rmw");
                    loc.add(o + r, o + i, "rmw");
                }
                // Earlier events: the thread's and the initial writes.
                for a in (0..nloc).chain(o..o + i) {
                    if act.sync_delays(a, o + i) {
                        sync.add(a, o + i, "s7a");
                    }
                    if act.co_delays(a, o + i) {
                        loc.add(a, o + i, "s8a");
                    }
                }
            }
        }
        let combo = Combo {
            act,
            dep,
            sync,
            loc,
            rmw,
        };
        // Registers of the final state; locations come from the final writes.
        let mut base_state = Vec::new();
        let mut loc_terms = Vec::new();
        for (k, term) in self.observed.iter().enumerate() {
            base_state.push(match term {
                Term::Reg { thread, reg } => Value::Int(
                    prog.threads
                        .get(*thread)
                        .and_then(|t| t.reg(reg))
                        .map_or(0, |r| chosen[*thread].0.regs[r]),
                ),
                Term::Const(v) => *v,
                Term::Loc(l) => {
                    loc_terms.push((k, *l));
                    Value::Int(prog.init[*l])
                }
            });
        }
        let writes_to = |l: usize| -> Vec<usize> {
            (0..n)
                .filter(|&i| evs[i].kind == Kind::W && evs[i].loc == Some(l))
                .collect()
        };
        let final_opts: Vec<Vec<usize>> = loc_terms.iter().map(|&(_, l)| writes_to(l)).collect();
        let reads: Vec<usize> = (0..n).filter(|&i| evs[i].kind == Kind::R).collect();
        let sources: Vec<Vec<usize>> = reads
            .iter()
            .map(|&r| {
                (0..n)
                    .filter(|&w| {
                        evs[w].kind == Kind::W
                            && evs[w].loc == evs[r].loc
                            && evs[w].val == evs[r].val
                    })
                    .collect()
            })
            .collect();
        if sources.iter().any(|s| s.is_empty()) {
            return Ok(());
        }
        let mut rf_pick = vec![0usize; reads.len()];
        loop {
            self.candidates += 1;
            if self.candidates > self.opts.max_candidates {
                return Err(CheckError::Limit(format!(
                    "more than {} reads-from candidates (raise --max-candidates)",
                    self.opts.max_candidates
                )));
            }
            if self.deadline.is_some_and(|d| Instant::now() > d) {
                return Err(CheckError::Timeout {
                    after: self.start.elapsed(),
                    candidates: self.candidates,
                    pruned: 0,
                    states: None,
                });
            }
            let rf: Vec<(usize, usize)> = reads
                .iter()
                .enumerate()
                .map(|(k, &r)| (sources[k][rf_pick[k]], r))
                .collect();
            self.judge_rf(&combo, &rf, &base_state, &loc_terms, &final_opts);
            if !advance(&mut rf_pick, |k| sources[k].len()) {
                break;
            }
        }
        Ok(())
    }

    /// One reads-from choice: every final-value choice whose state is not
    /// yet known to be allowed.
    fn judge_rf(
        &mut self,
        combo: &Combo<'_>,
        rf: &[(usize, usize)],
        base_state: &[Value],
        loc_terms: &[(usize, usize)],
        final_opts: &[Vec<usize>],
    ) {
        let mut finals = Vec::new();
        let mut pick = vec![0usize; final_opts.len()];
        loop {
            let mut state = base_state.to_vec();
            let mut edges = Vec::new();
            for (k, &(pos, _)) in loc_terms.iter().enumerate() {
                let f = final_opts[k][pick[k]];
                state[pos] = Value::Int(combo.act.evs[f].val);
                edges.extend(final_opts[k].iter().filter(|&&c| c != f).map(|&c| (c, f)));
            }
            if !self.allowed.contains(&state) {
                finals.push((state, edges));
            }
            if !advance(&mut pick, |k| final_opts[k].len()) {
                break;
            }
        }
        if finals.is_empty() {
            return;
        }
        let syncs = match combo.check_dep(rf).and_then(|()| combo.syncs(rf)) {
            Ok(s) => s,
            Err(v) => {
                for (state, _) in &finals {
                    self.fail(state, &v, combo, rf, None);
                }
                return;
            }
        };
        for (state, edges) in &finals {
            for sync in &syncs {
                match combo.check_loc(rf, sync, edges) {
                    Ok(()) => {
                        self.allowed.insert(state.clone());
                        break;
                    }
                    Err(v) => self.fail(state, &v, combo, rf, Some(sync)),
                }
            }
        }
    }

    /// Records the first violation met for `state` (with `--why`).
    fn fail(
        &mut self,
        state: &[Value],
        v: &Violation,
        combo: &Combo<'_>,
        rf: &[(usize, usize)],
        sync: Option<&Order>,
    ) {
        if !self.opts.why || self.failures.contains_key(state) || !exec::satisfies(self.test, state)
        {
            return;
        }
        let evs = combo.act.evs;
        let events = evs
            .iter()
            .map(|e| EventView {
                thread: e.thread,
                kind: match e.kind {
                    Kind::R => 'R',
                    Kind::W => 'W',
                    Kind::F => 'F',
                },
                loc: e.loc.map(|l| self.test.locations[l].name.clone()),
                value: (e.kind != Kind::F).then_some(Value::Int(e.val)),
                instr: e.instr.clone(),
            })
            .collect();
        let mut po = Vec::new();
        for a in 0..evs.len() {
            if let Some(b) = (a + 1..evs.len()).find(|&b| evs[b].thread == evs[a].thread)
                && evs[a].thread.is_some()
            {
                po.push((a, b));
            }
        }
        let edges = |o: &Order| o.edges.iter().map(|&(a, b, _)| (a, b)).collect::<Vec<_>>();
        let mut relations = vec![
            ("po".to_string(), po),
            ("rf".to_string(), rf.to_vec()),
            ("dep".to_string(), edges(&combo.dep)),
            ("rmw".to_string(), combo.rmw.clone()),
        ];
        relations.push(("sync".to_string(), edges(sync.unwrap_or(&combo.sync))));
        self.failures.insert(
            state.to_vec(),
            (
                v.clone(),
                ExecutionView {
                    events,
                    relations,
                    state: state.to_vec(),
                },
            ),
        );
    }
}
