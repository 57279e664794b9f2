//! Execution: from a program to judged candidate executions.
//!
//! [`thread`] runs each thread symbolically into paths of events;
//! [`candidate`] combines paths, chooses `rf` and `co`; [`env`] presents a
//! candidate to the cat interpreter; [`check`] drives it all and collects
//! the final states the model allows.

pub mod candidate;
pub mod env;
pub mod thread;

use crate::cat::{Failure, Model};
use crate::diag::Diagnostic;
use crate::ir::{Prop, Quantifier, Term, Test, Value};
use candidate::{Eval, Skeleton, Values, coherence, permutations};
use env::CandidateEnv;
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};
use thread::{EventKind, PathLimits, ThreadPaths};

/// Knobs and limits for checking one test.
#[derive(Clone, Debug)]
pub struct CheckOptions {
    /// Times a backward jump may be taken on one path (`--unroll`).
    pub unroll: usize,
    /// Maximum candidate executions judged before giving up.
    pub max_candidates: u64,
    /// Maximum events on one thread path.
    pub max_events: usize,
    /// Maximum paths per thread.
    pub max_paths: usize,
    /// Collect an explanation for each forbidden outcome the condition asks about.
    pub why: bool,
    /// How many allowed executions to keep for DOT output.
    pub keep_witnesses: usize,
}

impl Default for CheckOptions {
    fn default() -> Self {
        CheckOptions {
            unroll: 2,
            max_candidates: 2_000_000,
            max_events: 256,
            max_paths: 100_000,
            why: false,
            keep_witnesses: 0,
        }
    }
}

/// Why a check could not produce a verdict.
#[derive(Debug)]
pub enum CheckError {
    /// The input or the model is wrong (points at a source position).
    Diagnostic(Diagnostic),
    /// A size limit was hit; the message names it and how to raise it.
    Limit(String),
}

impl std::fmt::Display for CheckError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CheckError::Diagnostic(d) => write!(f, "{}", d.render()),
            CheckError::Limit(m) => write!(f, "limit exceeded: {m}"),
        }
    }
}

impl From<Diagnostic> for CheckError {
    fn from(d: Diagnostic) -> Self {
        CheckError::Diagnostic(d)
    }
}

/// One event of a reported execution, self-contained for reporters.
#[derive(Clone, Debug)]
pub struct EventView {
    /// Thread number, `None` for init writes.
    pub thread: Option<usize>,
    /// `R`, `W`, `F` or `B`.
    pub kind: char,
    pub loc: Option<String>,
    pub value: Option<Value>,
    /// The instruction text (`ld.acquire.gpu r1, y`), empty for init.
    pub instr: String,
}

/// A candidate execution in reportable form.
#[derive(Clone, Debug)]
pub struct ExecutionView {
    pub events: Vec<EventView>,
    /// Base relations as edge lists: po (immediate), rf, co (immediate), fr, rmw.
    pub relations: Vec<(String, Vec<(usize, usize)>)>,
    /// The final state, same order as [`CheckResult::observed`].
    pub state: Vec<Value>,
}

/// A final state the condition asks about that the model forbids, with the
/// reason for one candidate producing it.
#[derive(Clone, Debug)]
pub struct Forbidden {
    pub state: Vec<Value>,
    pub failure: Failure,
    pub execution: ExecutionView,
}

/// Prefix of the `let` names a model binds to explain allowed outcomes
/// (docs/cat-language.md, "Explanation bindings").
pub const WHY_PREFIX: &str = "why_";

/// The `let` name of the step relation used to show paths for `why_` edges.
pub const WHY_PATH: &str = "why_path";

/// One reason a model gives for an allowed outcome: a non-empty `why_`
/// relation, its edges, and for each edge a path in `why_path` (events from
/// the edge's source to its target) when the model defines one.
#[derive(Clone, Debug)]
pub struct WhyReason {
    /// The binding's name without the `why_` prefix (`no_alias_fence`).
    pub name: String,
    pub edges: Vec<(usize, usize, Vec<usize>)>,
}

/// An allowed final state the condition asks about, explained by the
/// model's `why_` bindings on one execution reaching it.
#[derive(Clone, Debug)]
pub struct AllowedWhy {
    pub state: Vec<Value>,
    pub reasons: Vec<WhyReason>,
    pub execution: ExecutionView,
}

/// The judged outcome of one test under one model.
#[derive(Clone, Debug)]
pub struct CheckResult {
    pub test: String,
    pub model: String,
    pub quantifier: Quantifier,
    /// Printable names of the observed terms (`1:r0`, `x`).
    pub observed: Vec<String>,
    /// Allowed final states with the number of candidates reaching each.
    pub states: BTreeMap<Vec<Value>, u64>,
    /// Allowed candidates satisfying / not satisfying the proposition.
    pub positive: u64,
    pub negative: u64,
    /// Whether the condition is validated (herd's `Ok`).
    pub validated: bool,
    /// Flags raised by some allowed candidate.
    pub flags: BTreeSet<String>,
    /// Candidate executions judged.
    pub candidates: u64,
    /// Partial reads-from choices visited by the search (cost measure).
    pub rf_nodes: u64,
    /// Thread paths cut by the unroll bound (not explored further).
    pub cut_paths: usize,
    /// `rf` choices discarded because a value depended on itself.
    pub cyclic: u64,
    pub forbidden: Vec<Forbidden>,
    /// With [`CheckOptions::why`]: allowed states the condition asks about
    /// that the model's `why_` bindings explain (e.g. a missing proxy fence).
    pub allowed_why: Vec<AllowedWhy>,
    pub witnesses: Vec<ExecutionView>,
    pub elapsed: Duration,
}

/// Checks `test` against `model`.
pub fn check(test: &Test, model: &Model, opts: &CheckOptions) -> Result<CheckResult, CheckError> {
    let start = Instant::now();
    let file = test
        .file
        .as_ref()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| test.name.clone());
    let limits = PathLimits {
        unroll: opts.unroll,
        max_paths: opts.max_paths,
        max_events: opts.max_events,
    };
    let mut thread_paths: Vec<ThreadPaths> = Vec::new();
    for t in &test.threads {
        thread_paths.push(thread::explore(&file, t, test.locations.len(), limits)?);
    }
    let observed_terms = observed_terms(test);
    let mut res = CheckResult {
        test: test.name.clone(),
        model: model.name().to_string(),
        quantifier: test.condition.quantifier,
        observed: observed_terms.iter().map(|t| term_name(test, t)).collect(),
        states: BTreeMap::new(),
        positive: 0,
        negative: 0,
        validated: false,
        flags: BTreeSet::new(),
        candidates: 0,
        rf_nodes: 0,
        cut_paths: thread_paths.iter().map(|t| t.cut).sum(),
        cyclic: 0,
        forbidden: Vec::new(),
        allowed_why: Vec::new(),
        witnesses: Vec::new(),
        elapsed: Duration::ZERO,
    };
    let mut forbidden: BTreeMap<Vec<Value>, Forbidden> = BTreeMap::new();
    let mut env_checked = false;

    // Cartesian product of thread paths.
    let counts: Vec<usize> = thread_paths.iter().map(|t| t.paths.len()).collect();
    if counts.contains(&0) {
        res.elapsed = start.elapsed();
        return Ok(finish(test, res, forbidden));
    }
    let mut choice = vec![0usize; counts.len()];
    loop {
        let paths = choice
            .iter()
            .enumerate()
            .map(|(t, &i)| &thread_paths[t].paths[i])
            .collect();
        let skel = Skeleton::new(test, paths);
        let mut search = RfSearch {
            skel: &skel,
            model,
            opts,
            observed: &observed_terms,
            res: &mut res,
            forbidden: &mut forbidden,
            values: Values::new(&skel),
            env_checked: &mut env_checked,
            cache: model.new_cache(),
        };
        search.run(0)?;
        // Next combination.
        let mut k = 0;
        loop {
            if k == counts.len() {
                res.elapsed = start.elapsed();
                return Ok(finish(test, res, forbidden));
            }
            choice[k] += 1;
            if choice[k] < counts[k] {
                break;
            }
            choice[k] = 0;
            k += 1;
        }
    }
}

fn finish(
    test: &Test,
    mut res: CheckResult,
    forbidden: BTreeMap<Vec<Value>, Forbidden>,
) -> CheckResult {
    res.validated = match test.condition.quantifier {
        Quantifier::Exists => res.positive > 0,
        Quantifier::NotExists => res.positive == 0,
        Quantifier::Forall => res.negative == 0,
    };
    res.forbidden = forbidden
        .into_iter()
        .filter(|(s, _)| !res.states.contains_key(s))
        .map(|(_, f)| f)
        .collect();
    res
}

/// The reads-from search may visit this many partial choices per allowed
/// candidate before it counts as runaway.
const RF_NODES_PER_CANDIDATE: u64 = 10;

struct RfSearch<'s, 'a> {
    skel: &'s Skeleton<'a>,
    model: &'s Model,
    opts: &'s CheckOptions,
    observed: &'s [Term],
    res: &'s mut CheckResult,
    forbidden: &'s mut BTreeMap<Vec<Value>, Forbidden>,
    values: Values<'s, 'a>,
    /// Set once the model's names were checked against the environment.
    env_checked: &'s mut bool,
    /// Model definitions that depend only on this skeleton.
    cache: crate::cat::StaticCache,
}

impl RfSearch<'_, '_> {
    /// Assigns an rf source to read number `k` (of `skel.reads`) and recurses.
    fn run(&mut self, k: usize) -> Result<(), CheckError> {
        self.res.rf_nodes += 1;
        if self.res.rf_nodes
            > self
                .opts
                .max_candidates
                .saturating_mul(RF_NODES_PER_CANDIDATE)
        {
            return Err(CheckError::Limit(format!(
                "the reads-from search visited more than {} choices (raise --max-candidates)",
                self.opts
                    .max_candidates
                    .saturating_mul(RF_NODES_PER_CANDIDATE)
            )));
        }
        if !self.constraints_possible() {
            return Ok(());
        }
        if k == self.skel.reads.len() {
            return self.judge_rf();
        }
        let r = self.skel.reads[k];
        let loc = self.skel.events[r].loc.unwrap_or(0);
        let mut sources = vec![self.skel.init[loc]];
        sources.extend(self.skel.writes_by_loc[loc].iter().copied());
        for w in sources {
            self.values.set_rf(r, w);
            if self.values.value(r) == Eval::Cyclic {
                // The value would depend on itself whatever the other reads
                // choose: the whole subtree is out of thin air.
                self.res.cyclic += 1;
                continue;
            }
            self.run(k + 1)?;
        }
        self.values.set_rf(r, usize::MAX);
        Ok(())
    }

    /// False when some path constraint is already known to fail.
    fn constraints_possible(&self) -> bool {
        for (t, p) in self.skel.paths.iter().enumerate() {
            for c in &p.constraints {
                match self.values.constraint(t, c) {
                    Eval::Known(Value::Int(0)) | Eval::Error(_) => return false,
                    Eval::Cyclic => return false,
                    _ => {}
                }
            }
        }
        true
    }

    /// All reads have a source: check constraints fully, then try every coherence order.
    fn judge_rf(&mut self) -> Result<(), CheckError> {
        let skel = self.skel;
        for (t, p) in skel.paths.iter().enumerate() {
            for c in &p.constraints {
                match self.values.constraint(t, c) {
                    Eval::Known(v) if v != Value::Int(0) => {}
                    Eval::Cyclic | Eval::Unknown => {
                        self.res.cyclic += 1;
                        return Ok(());
                    }
                    _ => return Ok(()),
                }
            }
        }
        let n = skel.len();
        let mut vals = Vec::with_capacity(n);
        for e in 0..n {
            match self.values.value(e) {
                Eval::Known(v) => vals.push(Some(v)),
                Eval::Cyclic | Eval::Unknown => {
                    if skel.events[e].kind == EventKind::Read
                        || skel.events[e].kind == EventKind::Write
                    {
                        self.res.cyclic += 1;
                        return Ok(());
                    }
                    vals.push(None);
                }
                Eval::Error(_) => return Ok(()),
            }
        }
        // Non-memory events carry no value.
        for (e, v) in vals.iter_mut().enumerate() {
            if !matches!(skel.events[e].kind, EventKind::Read | EventKind::Write) {
                *v = None;
            }
        }
        let mut rf = crate::rel::Relation::new(n);
        for &r in &skel.reads {
            rf.add(self.values.rf_source(r).unwrap_or(r), r);
        }
        let bar = env::barrier_relation(skel, &self.values)?;
        let regs = self.final_registers();

        // Coherence orders multiply: refuse before materialising them when
        // they alone would exceed the candidate budget.
        let budget = self.opts.max_candidates.saturating_sub(self.res.candidates);
        let mut co_choices: u64 = 1;
        for w in &skel.writes_by_loc {
            for k in 2..=w.len() as u64 {
                co_choices = co_choices.saturating_mul(k);
            }
        }
        if co_choices > self.opts.max_candidates {
            return Err(CheckError::Limit(format!(
                "{co_choices} coherence orders for one choice of reads-from exceed the budget \
                 of {} candidate executions (raise --max-candidates)",
                self.opts.max_candidates
            )));
        }
        if co_choices > budget {
            return Err(CheckError::Limit(format!(
                "more than {} candidate executions (raise --max-candidates)",
                self.opts.max_candidates
            )));
        }
        let orders: Vec<Vec<Vec<usize>>> =
            skel.writes_by_loc.iter().map(|w| permutations(w)).collect();
        let mut idx = vec![0usize; orders.len()];
        loop {
            self.res.candidates += 1;
            if self.res.candidates > self.opts.max_candidates {
                return Err(CheckError::Limit(format!(
                    "more than {} candidate executions (raise --max-candidates)",
                    self.opts.max_candidates
                )));
            }
            let chosen: Vec<&Vec<usize>> = orders.iter().zip(&idx).map(|(o, &i)| &o[i]).collect();
            let co = coherence(skel, &chosen);
            let env = CandidateEnv::new(skel, &rf, &co, &bar);
            if !*self.env_checked {
                self.model.check_environment(&env)?;
                *self.env_checked = true;
            }
            let state = self.final_state(&regs, &chosen, &vals);
            let sat = eval_prop(
                &self.skel.test.condition.prop,
                &state_lookup(self.observed, &state),
            );
            let interesting = match self.skel.test.condition.quantifier {
                Quantifier::Forall => !sat,
                _ => sat,
            };
            let explain_allowed = self.opts.why
                && interesting
                && !self.res.allowed_why.iter().any(|a| a.state == state);
            let outcome = if explain_allowed {
                let (outcome, named) = self
                    .model
                    .evaluate_named(&env, &|n| n.starts_with(WHY_PREFIX))?;
                if outcome.allowed
                    && let Some(reasons) = why_reasons(&named)
                {
                    self.res.allowed_why.push(AllowedWhy {
                        state: state.clone(),
                        reasons,
                        execution: view(skel, &rf, &co, &vals, state.clone()),
                    });
                }
                outcome
            } else {
                self.model.evaluate_cached(&env, &mut self.cache)?
            };
            if outcome.allowed {
                *self.res.states.entry(state.clone()).or_insert(0) += 1;
                if sat {
                    self.res.positive += 1;
                } else {
                    self.res.negative += 1;
                }
                self.res.flags.extend(outcome.flags.iter().cloned());
                let interesting = match self.skel.test.condition.quantifier {
                    Quantifier::Forall => !sat,
                    _ => sat,
                };
                if self.res.witnesses.len() < self.opts.keep_witnesses && interesting {
                    self.res.witnesses.push(view(skel, &rf, &co, &vals, state));
                }
            } else if self.opts.why {
                let interesting = match self.skel.test.condition.quantifier {
                    Quantifier::Forall => !sat,
                    _ => sat,
                };
                if interesting
                    && !self.res.states.contains_key(&state)
                    && !self.forbidden.contains_key(&state)
                    && let Some(failure) = self.model.evaluate_explain(&env)?.failure
                {
                    let execution = view(skel, &rf, &co, &vals, state.clone());
                    self.forbidden.insert(
                        state.clone(),
                        Forbidden {
                            state,
                            failure,
                            execution,
                        },
                    );
                }
            }
            // Next coherence choice.
            let mut k = 0;
            loop {
                if k == idx.len() {
                    return Ok(());
                }
                idx[k] += 1;
                if idx[k] < orders[k].len() {
                    break;
                }
                idx[k] = 0;
                k += 1;
            }
        }
    }

    /// Final register values per thread (only the observed ones).
    fn final_registers(&self) -> BTreeMap<(usize, String), Value> {
        let mut out = BTreeMap::new();
        for term in self.observed {
            if let Term::Reg { thread, reg } = term {
                let v =
                    match self.skel.paths.get(*thread).and_then(|p| p.regs.get(reg)) {
                        None => self.skel.test.threads.get(*thread).and_then(|t| {
                            t.reg_init.iter().find(|(r, _)| r == reg).map(|(_, v)| *v)
                        }),
                        Some(sym) => match self.values.sym(*thread, sym, &mut Vec::new()) {
                            Eval::Known(v) => Some(v),
                            _ => None,
                        },
                    };
                out.insert((*thread, reg.clone()), v.unwrap_or(Value::Int(0)));
            }
        }
        out
    }

    fn final_state(
        &self,
        regs: &BTreeMap<(usize, String), Value>,
        orders: &[&Vec<usize>],
        vals: &[Option<Value>],
    ) -> Vec<Value> {
        self.observed
            .iter()
            .map(|t| match t {
                Term::Reg { thread, reg } => regs
                    .get(&(*thread, reg.clone()))
                    .copied()
                    .unwrap_or(Value::Int(0)),
                Term::Loc(l) => {
                    let p = self.skel.test.physical(*l);
                    match orders[p].last() {
                        Some(&w) => vals[w].unwrap_or(Value::Int(0)),
                        None => self.skel.test.locations[p].init,
                    }
                }
                Term::Const(v) => *v,
            })
            .collect()
    }
}

fn view(
    skel: &Skeleton,
    rf: &crate::rel::Relation,
    co: &crate::rel::Relation,
    vals: &[Option<Value>],
    state: Vec<Value>,
) -> ExecutionView {
    let test = skel.test;
    let events = skel
        .events
        .iter()
        .enumerate()
        .map(|(i, e)| EventView {
            thread: e.thread,
            kind: match e.kind {
                EventKind::Read => 'R',
                EventKind::Write => 'W',
                EventKind::Fence => 'F',
                EventKind::Barrier(_) => 'B',
            },
            loc: e.addr.map(|l| test.locations[l].name.clone()),
            value: vals[i],
            instr: match (e.thread, e.instr) {
                (Some(t), Some(k)) => test.threads[t].code[k].text.clone(),
                _ => String::new(),
            },
        })
        .collect();
    let n = skel.len();
    let mut po = Vec::new();
    let mut rmw = Vec::new();
    for (t, p) in skel.paths.iter().enumerate() {
        for i in 1..p.events.len() {
            po.push((skel.global(t, i - 1), skel.global(t, i)));
        }
        for (i, e) in p.events.iter().enumerate() {
            if let Some(r) = e.rmw_read {
                rmw.push((skel.global(t, r), skel.global(t, i)));
            }
        }
    }
    let rf_pairs: Vec<(usize, usize)> = rf.pairs().collect();
    // Immediate coherence edges only, for readable graphs.
    let co_pairs: Vec<(usize, usize)> = co
        .pairs()
        .filter(|&(a, b)| !(0..n).any(|c| co.contains(a, c) && co.contains(c, b)))
        .collect();
    let mut fr = Vec::new();
    for &(w, r) in &rf_pairs {
        for &(a, b) in &co_pairs {
            if a == w {
                fr.push((r, b));
            }
        }
    }
    ExecutionView {
        events,
        relations: vec![
            ("po".into(), po),
            ("rf".into(), rf_pairs),
            ("co".into(), co_pairs),
            ("fr".into(), fr),
            ("rmw".into(), rmw),
        ],
        state,
    }
}

/// The non-empty `why_` relations (but `why_path`) as reasons, each edge
/// with a shortest `why_path` path; `None` when there is none.
fn why_reasons(named: &[(String, crate::rel::Relation)]) -> Option<Vec<WhyReason>> {
    let path_rel = named.iter().find(|(n, _)| n == WHY_PATH).map(|(_, r)| r);
    let reasons: Vec<WhyReason> = named
        .iter()
        .filter(|(n, r)| n != WHY_PATH && !r.is_empty())
        .map(|(n, r)| WhyReason {
            name: n.strip_prefix(WHY_PREFIX).unwrap_or(n).to_string(),
            edges: r
                .pairs()
                .map(|(a, b)| {
                    let path = path_rel.map(|p| shortest_path(p, a, b)).unwrap_or_default();
                    (a, b, path)
                })
                .collect(),
        })
        .collect();
    (!reasons.is_empty()).then_some(reasons)
}

/// A shortest path `a = e0 -> e1 -> ... -> b` in `r` (empty if none).
fn shortest_path(r: &crate::rel::Relation, a: usize, b: usize) -> Vec<usize> {
    let n = r.universe();
    let mut prev = vec![usize::MAX; n];
    let mut queue = std::collections::VecDeque::from([a]);
    let mut seen = vec![false; n];
    seen[a] = true;
    while let Some(x) = queue.pop_front() {
        for y in 0..n {
            if !r.contains(x, y) || (seen[y] && y != b) {
                continue;
            }
            if y == b {
                let mut path = vec![b];
                let mut cur = x;
                while cur != a {
                    path.push(cur);
                    cur = prev[cur];
                }
                path.push(a);
                path.reverse();
                return path;
            }
            seen[y] = true;
            prev[y] = x;
            queue.push_back(y);
        }
    }
    Vec::new()
}

/// The terms a result reports: those of the condition, then `locations`.
pub fn observed_terms(test: &Test) -> Vec<Term> {
    let mut out: Vec<Term> = Vec::new();
    fn walk(p: &Prop, out: &mut Vec<Term>) {
        match p {
            Prop::True | Prop::False => {}
            Prop::Cmp(_, a, b) => {
                for t in [a, b] {
                    if !matches!(t, Term::Const(_)) && !out.contains(t) {
                        out.push(t.clone());
                    }
                }
            }
            Prop::Not(a) => walk(a, out),
            Prop::And(a, b) | Prop::Or(a, b) => {
                walk(a, out);
                walk(b, out);
            }
        }
    }
    walk(&test.condition.prop, &mut out);
    for t in &test.observed {
        if !out.contains(t) {
            out.push(t.clone());
        }
    }
    // herd prints registers (by thread) before memory locations.
    out.sort_by_key(|t| match t {
        Term::Reg { thread, reg } => (0, *thread, reg.clone()),
        Term::Loc(l) => (1, 0, test.locations[*l].name.clone()),
        Term::Const(_) => (2, 0, String::new()),
    });
    out
}

/// `1:r0` for registers, the location name for memory.
pub fn term_name(test: &Test, t: &Term) -> String {
    match t {
        Term::Reg { thread, reg } => format!("{thread}:{reg}"),
        Term::Loc(l) => test.locations[*l].name.clone(),
        Term::Const(v) => value_text(test, *v),
    }
}

/// Prints a value (`&x` style for addresses).
pub fn value_text(test: &Test, v: Value) -> String {
    match v {
        Value::Int(i) => i.to_string(),
        Value::Addr(l) => format!(
            "&{}",
            test.locations
                .get(l)
                .map(|l| l.name.as_str())
                .unwrap_or("?")
        ),
    }
}

fn state_lookup<'t>(observed: &'t [Term], state: &[Value]) -> Vec<(&'t Term, Value)> {
    observed.iter().zip(state.iter().copied()).collect()
}

fn eval_prop(p: &Prop, st: &[(&Term, Value)]) -> bool {
    let term = |t: &Term| -> Value {
        match t {
            Term::Const(v) => *v,
            _ => st
                .iter()
                .find(|(o, _)| *o == t)
                .map(|(_, v)| *v)
                .unwrap_or(Value::Int(0)),
        }
    };
    match p {
        Prop::True => true,
        Prop::False => false,
        Prop::Cmp(c, a, b) => c.eval(term(a), term(b)),
        Prop::Not(a) => !eval_prop(a, st),
        Prop::And(a, b) => eval_prop(a, st) && eval_prop(b, st),
        Prop::Or(a, b) => eval_prop(a, st) || eval_prop(b, st),
    }
}
