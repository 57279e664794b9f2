//! Execution: from a program to judged candidate executions.
//!
//! [`thread`] runs each thread symbolically into paths of events;
//! [`candidate`] combines paths, chooses `rf` and `co`; [`env`] presents a
//! candidate to the cat interpreter; [`check`] drives it all and collects
//! the final states the model allows.

pub mod barrier;
pub mod candidate;
pub mod env;
pub mod outcome;
pub mod thread;
pub mod view;

pub use outcome::{observed_terms, satisfies, term_name, value_text};
pub use view::{AllowedWhy, EventView, ExecutionView, Forbidden, WHY_PATH, WHY_PREFIX, WhyReason};

use crate::cat::Model;
use crate::diag::Diagnostic;
use crate::ir::{Quantifier, Term, Test, Value};
use candidate::{Eval, Skeleton, Values, coherence, permutations};
use env::CandidateEnv;
use outcome::{eval_prop, state_lookup};
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};
use thread::{EventKind, PathLimits, ThreadPaths};
use view::why_reasons;

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
    /// Operational models: give up after this many distinct machine states.
    pub max_states: usize,
    /// Operational models: keep a witness trace per outcome (`--trace`).
    pub trace: bool,
    /// `--lenient`: upper-case names no front end defines are empty sets.
    pub lenient: bool,
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
            max_states: 2_000_000,
            trace: false,
            lenient: false,
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
    /// `rf` choices with an order of barrier arrivals that leaves a thread
    /// waiting forever (that execution yields no final state).
    pub barrier_deadlocks: u64,
    pub forbidden: Vec<Forbidden>,
    /// With [`CheckOptions::why`]: allowed states the condition asks about
    /// that the model's `why_` bindings explain (e.g. a missing proxy fence).
    pub allowed_why: Vec<AllowedWhy>,
    pub witnesses: Vec<ExecutionView>,
    pub elapsed: Duration,
    /// Set when an operational machine (not a cat model) judged the test:
    /// exploration figures and witness traces (see [`crate::op`]).
    pub operational: Option<Box<crate::op::OpReport>>,
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
        barrier_deadlocks: 0,
        forbidden: Vec::new(),
        allowed_why: Vec::new(),
        witnesses: Vec::new(),
        elapsed: Duration::ZERO,
        operational: None,
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
        if !next_choice(&mut choice, |k| counts[k]) {
            res.elapsed = start.elapsed();
            return Ok(finish(test, res, forbidden));
        }
    }
}

/// Advances `idx` to the next element of the product of `0..len(k)` for
/// each position `k` (first position fastest); false after the last one.
fn next_choice(idx: &mut [usize], len: impl Fn(usize) -> usize) -> bool {
    for (k, i) in idx.iter_mut().enumerate() {
        *i += 1;
        if *i < len(k) {
            return true;
        }
        *i = 0;
    }
    false
}

fn over_budget(max: u64) -> CheckError {
    CheckError::Limit(format!(
        "more than {max} candidate executions (raise --max-candidates)"
    ))
}

fn finish(
    test: &Test,
    mut res: CheckResult,
    forbidden: BTreeMap<Vec<Value>, Forbidden>,
) -> CheckResult {
    res.validated = match test.condition.quantifier {
        Quantifier::Exists => res.positive > 0,
        Quantifier::NotExists => res.negative == 0,
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
        let bars = barrier::instances(skel, &self.values)?;
        if bars.deadlock {
            self.res.barrier_deadlocks += 1;
        }
        let regs = self.final_registers();
        for bar in &bars.matchings {
            self.judge_co(&rf, bar, &vals, &regs)?;
        }
        Ok(())
    }

    /// Judges every coherence order of one `rf` choice and barrier matching.
    fn judge_co(
        &mut self,
        rf: &crate::rel::Relation,
        bar: &crate::rel::Relation,
        vals: &[Option<Value>],
        regs: &BTreeMap<(usize, String), Value>,
    ) -> Result<(), CheckError> {
        let skel = self.skel;

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
            return Err(over_budget(self.opts.max_candidates));
        }
        if self.model.binds_co() {
            return self.judge_model_co(rf, bar, regs, vals);
        }
        let orders: Vec<Vec<Vec<usize>>> =
            skel.writes_by_loc.iter().map(|w| permutations(w)).collect();
        let mut idx = vec![0usize; orders.len()];
        loop {
            self.res.candidates += 1;
            if self.res.candidates > self.opts.max_candidates {
                return Err(over_budget(self.opts.max_candidates));
            }
            let chosen: Vec<&Vec<usize>> = orders.iter().zip(&idx).map(|(o, &i)| &o[i]).collect();
            let co = coherence(skel, &chosen);
            let env = CandidateEnv::new(skel, rf, &co, bar).lenient(self.opts.lenient);
            if !*self.env_checked {
                self.model.check_environment(&env)?;
                *self.env_checked = true;
            }
            let state = self.final_state(regs, &chosen, vals);
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
                        execution: view::view(skel, rf, &co, vals, state.clone()),
                    });
                }
                outcome
            } else {
                self.model.evaluate_cached(&env, &mut self.cache)?
            };
            if outcome.allowed {
                *self.res.states.entry(state.clone()).or_insert(0) += 1;
                self.count(sat);
                self.res.flags.extend(outcome.flags.iter().cloned());
                if self.res.witnesses.len() < self.opts.keep_witnesses && interesting {
                    self.res
                        .witnesses
                        .push(view::view(skel, rf, &co, vals, state));
                }
            } else if self.opts.why
                && interesting
                && !self.res.states.contains_key(&state)
                && !self.forbidden.contains_key(&state)
                && let Some(failure) = self.model.evaluate_explain(&env)?.failure
            {
                let execution = view::view(skel, rf, &co, vals, state.clone());
                self.forbidden.insert(
                    state.clone(),
                    Forbidden {
                        state,
                        failure,
                        execution,
                    },
                );
            }
            if !next_choice(&mut idx, |k| orders[k].len()) {
                return Ok(());
            }
        }
    }

    /// The model builds `co` itself (`with co from ...`): the engine hands
    /// it an empty `co` and counts each accepted choice as one execution,
    /// its final memory values taken from the `co` the model chose.
    fn judge_model_co(
        &mut self,
        rf: &crate::rel::Relation,
        bar: &crate::rel::Relation,
        regs: &BTreeMap<(usize, String), Value>,
        vals: &[Option<Value>],
    ) -> Result<(), CheckError> {
        let skel = self.skel;
        let empty = crate::rel::Relation::new(skel.len());
        let env = CandidateEnv::new(skel, rf, &empty, bar).lenient(self.opts.lenient);
        if !*self.env_checked {
            self.model.check_environment(&env)?;
            *self.env_checked = true;
        }
        let accepted = self.model.evaluate_all(&env, &mut self.cache)?;
        self.res.candidates += accepted.len().max(1) as u64;
        if self.res.candidates > self.opts.max_candidates {
            return Err(over_budget(self.opts.max_candidates));
        }
        for a in accepted {
            let co = a.co.unwrap_or_else(|| empty.clone());
            // Per location, its writes in the order `co` gives them.
            let orders: Vec<Vec<usize>> = skel
                .writes_by_loc
                .iter()
                .map(|ws| {
                    let mut o = ws.clone();
                    o.sort_by_key(|&w| ws.iter().filter(|&&v| co.contains(v, w)).count());
                    o
                })
                .collect();
            let chosen: Vec<&Vec<usize>> = orders.iter().collect();
            let state = self.final_state(regs, &chosen, vals);
            let sat = eval_prop(
                &self.skel.test.condition.prop,
                &state_lookup(self.observed, &state),
            );
            let interesting = match self.skel.test.condition.quantifier {
                Quantifier::Forall => !sat,
                _ => sat,
            };
            *self.res.states.entry(state.clone()).or_insert(0) += 1;
            self.count(sat);
            self.res.flags.extend(a.flags.iter().cloned());
            if self.res.witnesses.len() < self.opts.keep_witnesses && interesting {
                self.res
                    .witnesses
                    .push(view::view(skel, rf, &co, vals, state));
            }
        }
        Ok(())
    }

    /// Counts one allowed execution: herd's Positive counts those
    /// satisfying the condition's proposition, negated for `~exists`.
    fn count(&mut self, sat: bool) {
        let positive = match self.skel.test.condition.quantifier {
            Quantifier::NotExists => !sat,
            _ => sat,
        };
        if positive {
            self.res.positive += 1;
        } else {
            self.res.negative += 1;
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
