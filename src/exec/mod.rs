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
pub mod project;
pub mod prune;
pub mod thread;
pub mod view;

pub use outcome::{observed_terms, satisfies, term_name, value_text};
pub use view::{AllowedWhy, EventView, ExecutionView, Forbidden, WHY_PATH, WHY_PREFIX, WhyReason};

use crate::cat::Model;
use crate::diag::Diagnostic;
use crate::ir::{Quantifier, Term, Test, Value};
use crate::rel::Relation;
use candidate::{Eval, Skeleton, Values};
use env::CandidateEnv;
use outcome::{eval_prop, state_lookup};
use prune::{Pruner, base_coherence};
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
    /// Cut partial candidates that a monotone check of the model already
    /// rejects (`--no-prune` turns it off). Never changes the result; it is
    /// off anyway under [`CheckOptions::why`], whose explanations come from
    /// the first rejected candidate of each state in enumeration order.
    pub prune: bool,
    /// Run a model that builds `co` from exactly the orders the engine
    /// enumerates (herd's `cos.cat`) over the engine's `co` instead, with
    /// pruning (`Model::co_native`). Never changes the result; `--no-prune`
    /// turns it off too.
    pub co_native: bool,
    /// Give the test a `timeout` result after this long (`--timeout`).
    pub timeout: Option<Duration>,
    /// Live counters a caller may watch while the test runs (the CLI's
    /// progress line for long tests). One per test.
    pub progress: Option<std::sync::Arc<Progress>>,
    /// Final states the caller does not need: a complete candidate reaching
    /// one is counted but not judged, a reads-from choice whose every
    /// coherence order reaches one is not searched further, and those
    /// states are left out of the result (whether the model allows them is
    /// not decided). `verify-mapping` skips the source's SC states in the
    /// target run and all but the target's other states in the source run
    /// (docs/mappings.md, "Checking a program in a campaign"). `None`
    /// judges every candidate.
    pub skip: Option<std::sync::Arc<StateFilter>>,
}

/// The final states [`CheckOptions::skip`] leaves unjudged.
#[derive(Debug, Default)]
pub struct StateFilter {
    /// For each component of a listed state, the index of its term among
    /// the test's observed terms ([`observed_terms`]).
    pub positions: Vec<usize>,
    /// The listed states, each giving the values at `positions`.
    pub states: std::collections::HashSet<Vec<Value>>,
    /// `false`: the listed states are skipped; `true`: every other state is.
    pub only: bool,
}

impl StateFilter {
    /// Whether the full observed state `state` is skipped.
    pub fn skips(&self, state: &[Value]) -> bool {
        let key: Vec<Value> = self.positions.iter().map(|&p| state[p]).collect();
        self.states.contains(&key) != self.only
    }
}

/// Counters the search updates as it goes (relaxed atomics).
#[derive(Debug, Default)]
pub struct Progress {
    pub candidates: std::sync::atomic::AtomicU64,
    pub partial: std::sync::atomic::AtomicU64,
    pub pruned: std::sync::atomic::AtomicU64,
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
            prune: true,
            co_native: true,
            timeout: None,
            progress: None,
            skip: None,
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
    /// The test ran past its `--timeout`; the figures reached so far.
    Timeout {
        after: Duration,
        candidates: u64,
        pruned: u64,
        /// Set by operational models: the machine states explored (the
        /// candidate counts are then zero).
        states: Option<u64>,
    },
}

impl std::fmt::Display for CheckError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CheckError::Diagnostic(d) => write!(f, "{}", d.render()),
            CheckError::Limit(m) => write!(f, "limit exceeded: {m}"),
            CheckError::Timeout {
                after,
                states: Some(states),
                ..
            } => write!(
                f,
                "timeout: no answer after {:.1} s ({states} machine states explored; \
                 raise --timeout)",
                after.as_secs_f64()
            ),
            CheckError::Timeout {
                after,
                candidates,
                pruned,
                states: None,
            } => write!(
                f,
                "timeout: no answer after {:.1} s ({candidates} candidates judged, \
                 {pruned} partial candidates cut; raise --timeout)",
                after.as_secs_f64()
            ),
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
    /// Partial candidates (rf or co prefixes) judged by the pruning checks,
    /// and how many of them were cut.
    pub partial: u64,
    pub pruned: u64,
    /// Partial orders visited inside the model's `with` searches, and cut.
    pub with_nodes: u64,
    pub with_pruned: u64,
    /// Work done with pruning on: candidates and partial candidates judged,
    /// each weighted by its size (1 + events/32); bounded by
    /// [`CheckOptions::max_candidates`].
    pub work: u64,
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

impl CheckResult {
    /// Counts `n` allowed executions whose final state does (`sat`) or does
    /// not satisfy the condition's proposition. herd's Positive counts those
    /// satisfying it, negated for `~exists`; every judge counts this way.
    pub fn count_allowed(&mut self, sat: bool, n: u64) {
        let positive = match self.quantifier {
            Quantifier::NotExists => !sat,
            _ => sat,
        };
        if positive {
            self.positive += n;
        } else {
            self.negative += n;
        }
    }

    /// Decides `validated` from the counts (herd's `Ok`): some positive
    /// execution for `exists`, no negative one for `forall` and `~exists`.
    pub fn settle(&mut self) {
        self.validated = match self.quantifier {
            Quantifier::Exists => self.positive > 0,
            Quantifier::NotExists | Quantifier::Forall => self.negative == 0,
        };
    }

    /// An empty result for `test` under the model named `model`: no state,
    /// no candidate yet. Every judge (cat models, operational machines)
    /// starts from it and fills in what it finds.
    pub fn new(test: &Test, model: &str) -> CheckResult {
        CheckResult {
            test: test.name.clone(),
            model: model.to_string(),
            quantifier: test.condition.quantifier,
            observed: observed_terms(test)
                .iter()
                .map(|t| term_name(test, t))
                .collect(),
            states: BTreeMap::new(),
            positive: 0,
            negative: 0,
            validated: false,
            flags: BTreeSet::new(),
            candidates: 0,
            partial: 0,
            pruned: 0,
            with_nodes: 0,
            with_pruned: 0,
            work: 0,
            rf_nodes: 0,
            cut_paths: 0,
            cyclic: 0,
            barrier_deadlocks: 0,
            forbidden: Vec::new(),
            allowed_why: Vec::new(),
            witnesses: Vec::new(),
            elapsed: Duration::ZERO,
            operational: None,
        }
    }
}

/// Checks `test` against `model`.
pub fn check(test: &Test, model: &Model, opts: &CheckOptions) -> Result<CheckResult, CheckError> {
    let start = Instant::now();
    let file = test
        .file
        .as_ref()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| test.name.clone());
    let deadline = opts.timeout.map(|t| start + t);
    let limits = PathLimits {
        unroll: opts.unroll,
        max_paths: opts.max_paths,
        max_events: opts.max_events,
        deadline,
        project: opts.timeout.map(|t| (start, t)),
    };
    let mut thread_paths: Vec<ThreadPaths> = Vec::new();
    for t in &test.threads {
        match thread::explore(&file, t, test.locations.len(), limits) {
            Ok(p) => thread_paths.push(p),
            Err(_) if deadline.is_some_and(|d| Instant::now() > d) => {
                return Err(CheckError::Timeout {
                    after: start.elapsed(),
                    candidates: 0,
                    pruned: 0,
                    states: None,
                });
            }
            Err(d) => return Err(d.into()),
        }
    }
    let observed_terms = observed_terms(test);
    let mut res = CheckResult::new(test, model.name());
    res.cut_paths = thread_paths.iter().map(|t| t.cut).sum();
    let mut forbidden: BTreeMap<Vec<Value>, Forbidden> = BTreeMap::new();
    let mut env_checked = false;
    // A model that builds `co` itself gets no pruning: its `co` is a value
    // of the model, not the engine's growing order (docs/pruning.md).
    let prune = opts.prune && !opts.why && !model.binds_co();
    let pruner = Pruner::new(model, prune);
    // A model building `co` from exactly the orders the engine enumerates
    // (herd's `cos.cat`) is run as the same model over the engine's `co`,
    // with pruning, for each choice of thread paths where the identity of
    // the two sets of orders is checked (see `Model::co_native`).
    let native = model.co_native().filter(|_| opts.co_native);
    let native_pruner = native.map(|m| Pruner::new(m, opts.prune && !opts.why));

    // Cartesian product of thread paths.
    let counts: Vec<usize> = thread_paths.iter().map(|t| t.paths.len()).collect();
    if counts.contains(&0) {
        res.elapsed = start.elapsed();
        return Ok(finish(res, forbidden));
    }
    let mut choice = vec![0usize; counts.len()];
    // Nodes visited over all path combinations (for the projection).
    let mut ticks = 0u64;
    // Under a timeout, the cost of each path combination is predicted
    // from its plain size for the projection (see `project`).
    let mut combo_cost = opts
        .timeout
        .and_then(|_| project::ComboCost::new(&thread_paths, test.locations.len()));
    loop {
        let paths = choice
            .iter()
            .enumerate()
            .map(|(t, &i)| &thread_paths[t].paths[i])
            .collect();
        let skel = Skeleton::new(test, paths);
        if !env_checked {
            // Before any candidate: a search that prunes everything must
            // still report a model naming something the engine lacks.
            let (rf, co, bar) = (
                Relation::new(skel.len()),
                base_coherence(&skel),
                Relation::new(skel.len()),
            );
            model.check_environment(
                &CandidateEnv::new(&skel, &rf, &co, &bar).lenient(opts.lenient),
            )?;
            env_checked = true;
        }
        let (model, pruner, prune) = match (&native, &native_pruner) {
            (Some(m), Some(p)) if co_choices_are_engine_orders(&skel, m) => {
                (*m, p, opts.prune && !opts.why)
            }
            _ => (model, &pruner, prune),
        };
        let mut cache = model.new_cache();
        cache.prune = prune;
        cache.deadline = deadline;
        // `with` orders count against the work budget like partial
        // candidates (with pruning on; off, the plain limits stay).
        let weight = 1 + skel.len() as u64 / 32;
        cache.with_limits = crate::cat::WithLimits {
            max_nodes: if prune {
                opts.max_candidates.saturating_sub(res.work) / weight
            } else {
                u64::MAX
            },
            timeout: opts.timeout.map(|t| (start, t)),
        };
        let mut search = RfSearch {
            skel: &skel,
            model,
            opts,
            observed: &observed_terms,
            res: &mut res,
            forbidden: &mut forbidden,
            values: Values::new(&skel),
            cache,
            pruner,
            rf: Relation::new(skel.len()),
            base_co: base_coherence(&skel),
            deadline,
            start,
            probe_evals: 0,
            rf_below: Vec::new(),
            co_below: Vec::new(),
            pos: Vec::new(),
            outer_done: 0.0,
            outer_share: 1.0,
            ticks,
            combos: combo_cost.as_ref(),
            combo_index: 0,
            combo_ticks: ticks,
            bar_memo: barrier::Memo::default(),
        };
        // The share of the path combinations before this one (the first
        // thread's path varies fastest).
        let (mut index, mut radix) = (0f64, 1f64);
        for (t, &c) in choice.iter().enumerate() {
            index += c as f64 * radix;
            radix *= counts[t] as f64;
        }
        search.outer_done = index / radix;
        search.outer_share = 1.0 / radix;
        let combo_index = index as usize;
        search.combo_index = combo_index;
        search.plain_bounds();
        let outcome = search.fail_fast().and_then(|()| search.run(0));
        ticks = search.ticks;
        let combo_ticks = ticks - search.combo_ticks;
        let with_limit = search.cache.limit.take();
        let (with_nodes, with_pruned) = (search.cache.with_nodes, search.cache.with_pruned);
        res.with_nodes += with_nodes;
        res.with_pruned += with_pruned;
        if prune {
            res.work = res.work.saturating_add(with_nodes.saturating_mul(weight));
        }
        if let Some(c) = combo_cost.as_mut() {
            c.finished(combo_index, combo_ticks);
        }
        match outcome {
            Ok(()) => {}
            Err(e) => {
                if let Some(msg) = with_limit {
                    return Err(CheckError::Limit(msg));
                }
                // Past the deadline, whatever stopped the search (an
                // evaluation interrupted inside a `with`) is the timeout.
                if deadline.is_some_and(|d| Instant::now() > d) {
                    return Err(CheckError::Timeout {
                        after: start.elapsed(),
                        candidates: res.candidates,
                        pruned: res.pruned,
                        states: None,
                    });
                }
                return Err(e);
            }
        }
        if !next_choice(&mut choice, |k| counts[k]) {
            res.elapsed = start.elapsed();
            return Ok(finish(res, forbidden));
        }
    }
}

/// Whether the set a [`Model::co_native`] model's original chose `co` from
/// is, for this choice of thread paths, exactly the set of coherence orders
/// the engine enumerates: per location, every strict total order of its
/// writes after its initial write. Each member must contain the engine's
/// init-first edges, order every pair of same-location writes one way,
/// be acyclic and have no other edge; the members are distinct (a set), so
/// as many of them as the engine has orders means the same set.
fn co_choices_are_engine_orders(skel: &Skeleton, native: &Model) -> bool {
    let n = skel.len();
    let (rf, co, bar) = (Relation::new(n), Relation::new(n), Relation::new(n));
    let env = CandidateEnv::new(skel, &rf, &co, &bar);
    let Some(choices) = native.co_choices(&env) else {
        return false;
    };
    let mut orders: u128 = 1;
    let mut pairs = 0;
    for ws in &skel.writes_by_loc {
        for k in 2..=ws.len() as u128 {
            orders = orders.saturating_mul(k);
        }
        pairs += ws.len() * ws.len().saturating_sub(1) / 2;
    }
    if choices.len() as u128 != orders {
        return false;
    }
    let base = base_coherence(skel);
    let edges = base.count() + pairs;
    choices.iter().all(|r| {
        r.universe() == n
            && r.count() == edges
            && base.is_subset(r)
            && skel.writes_by_loc.iter().all(|ws| {
                ws.iter().enumerate().all(|(i, &a)| {
                    ws[i + 1..]
                        .iter()
                        .all(|&b| r.contains(a, b) != r.contains(b, a))
                })
            })
            && r.is_acyclic()
    })
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

fn finish(mut res: CheckResult, forbidden: BTreeMap<Vec<Value>, Forbidden>) -> CheckResult {
    res.settle();
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

/// Random walks per estimate of a search tree's size ([`RfSearch::fail_fast`]).
const PROBES: usize = 8;

/// How far over the budget an estimate must be to refuse a search at once.
const PROBE_MARGIN: f64 = 10.0;

/// Nodes with fewer complete candidates below are not judged partially.
const MIN_SUBTREE: f64 = 4.0;

/// As [`MIN_SUBTREE`] with a [`StateFilter`] that skips the states it
/// lists: candidates reaching a skipped state cost nothing, those that
/// remain are worth cutting earlier (measured on `verify-mapping`
/// campaigns).
const MIN_SUBTREE_FILTERED: f64 = 2.0;

/// As [`MIN_SUBTREE`] with a [`StateFilter`] listing the only states
/// wanted: the candidates reaching other states are skipped without a
/// judgement, so judging a partial candidate rarely saves work; only
/// large subtrees are (measured on `verify-mapping` campaigns, whose
/// source runs and runs bounded by weaker programs take such filters:
/// judging from 2 candidates below took 1.9 times as long on a `sc11-ptx`
/// bound-5 slice).
const MIN_SUBTREE_ONLY: f64 = 1024.0;

/// With a deadline, searches whose plain bound exceeds 10^this are sized.
const PROBE_FROM_LOG10: f64 = 4.0;

/// With `--timeout`: after this share of the time, the search projects its
/// total time from the share of the tree it has covered, and gives up with
/// a limit message when the projection exceeds the timeout by
/// [`project::margin`].
const PROJECT_AFTER: f64 = 0.25;

/// Nodes between two projections.
const PROJECT_EVERY: u64 = 256;

struct RfSearch<'s, 'a> {
    skel: &'s Skeleton<'a>,
    model: &'s Model,
    opts: &'s CheckOptions,
    observed: &'s [Term],
    res: &'s mut CheckResult,
    forbidden: &'s mut BTreeMap<Vec<Value>, Forbidden>,
    values: Values<'s, 'a>,
    /// Model definitions that depend only on this skeleton.
    cache: crate::cat::StaticCache,
    pruner: &'s Pruner<'s>,
    /// The rf edges of the reads that have a source so far.
    rf: Relation,
    /// The coherence edges of every candidate (init first).
    base_co: Relation,
    deadline: Option<Instant>,
    start: Instant,
    /// Partial candidates judged by the size probes.
    probe_evals: u64,
    /// `rf_below[k]`: reads-from choices of reads `k..` (plain bound).
    rf_below: Vec<f64>,
    /// `co_below[l]`: coherence orders of locations `0..l`.
    co_below: Vec<f64>,
    /// Where the search is: per level of the tree (reads, then coherence
    /// placements), the child being explored and the number of children.
    pos: Vec<(u32, u32)>,
    /// The share of the whole test's search (all path combinations) done
    /// before this skeleton, and this skeleton's share.
    outer_done: f64,
    outer_share: f64,
    /// Under a timeout, the predicted costs of the path combinations, this
    /// one's index, and the nodes visited before it.
    combos: Option<&'s project::ComboCost>,
    combo_index: usize,
    combo_ticks: u64,
    /// Nodes visited (the projection is checked every [`PROJECT_EVERY`]).
    ticks: u64,
    /// Barrier matchings computed for this skeleton.
    bar_memo: barrier::Memo,
}

/// What a complete candidate needs beyond `rf` and `co`.
struct Judged<'j> {
    bar: &'j Relation,
    regs: &'j BTreeMap<(usize, String), Value>,
    vals: &'j [Option<Value>],
}

/// The coherence search state: per location its writes, a prefix of which
/// is placed, and the coherence edges every completion has.
struct CoState {
    order: Vec<Vec<usize>>,
    co: Relation,
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
        self.tick()?;
        if !self.constraints_possible() || self.filter_done() {
            return Ok(());
        }
        if k == self.skel.reads.len() {
            return self.judge_rf();
        }
        if k > 0 && !self.wanted_reachable() {
            return Ok(());
        }
        let r = self.skel.reads[k];
        let loc = self.skel.events[r].loc.unwrap_or(0);
        let mut sources = vec![self.skel.init[loc]];
        sources.extend(self.skel.writes_by_loc[loc].iter().copied());
        let n = sources.len() as u32;
        for (i, w) in sources.into_iter().enumerate() {
            self.pos.push((i as u32, n));
            self.values.set_rf(r, w);
            self.rf.add(w, r);
            if self.values.value(r) == Eval::Cyclic {
                // The value would depend on itself whatever the other reads
                // choose: the whole subtree is out of thin air. Worth a
                // warning only when the model does not reject it anyway.
                if !self.partial_fails(
                    &self.base_co.clone(),
                    &Relation::new(self.skel.len()),
                    false,
                ) {
                    self.res.cyclic += 1;
                }
            } else if !self.cut(
                &self.base_co.clone(),
                &Relation::new(self.skel.len()),
                false,
                self.rf_below[k + 1] * self.co_below[self.skel.writes_by_loc.len()],
            )? {
                self.run(k + 1)?;
            }
            self.rf.remove(w, r);
            self.pos.pop();
        }
        self.values.set_rf(r, usize::MAX);
        Ok(())
    }

    /// Refuses at once a search that cannot fit the budget even with
    /// pruning. The plain upper bound (every read from every same-location
    /// write, every coherence permutation) decides most tests; when it
    /// exceeds the budget, the size of the *pruned* search tree is
    /// estimated by Knuth's method: random walks from the root, each
    /// multiplying the number of children the pruning checks let through,
    /// averaged over [`PROBES`] walks (an unbiased estimate of the number of
    /// nodes). Only a clear excess ([`PROBE_MARGIN`] times the budget) is
    /// refused, with the figure; anything nearer runs under the budget.
    fn fail_fast(&mut self) -> Result<(), CheckError> {
        let skel = self.skel;
        let mut log_bound = 0f64;
        for &r in &skel.reads {
            let loc = skel.events[r].loc.unwrap_or(0);
            log_bound += ((1 + skel.writes_by_loc[loc].len()) as f64).log10();
        }
        for w in &skel.writes_by_loc {
            log_bound += (2..=w.len()).map(|k| (k as f64).log10()).sum::<f64>();
        }
        let budget = self.opts.max_candidates as f64;
        let weight = self.weight() as f64;
        // Without pruning the search keeps its plain limits (the reference
        // for `--no-prune` comparisons). With a deadline, smaller searches
        // are sized too, against the time they would take.
        let worth = log_bound > (budget / weight).log10()
            || self.deadline.is_some() && log_bound > PROBE_FROM_LOG10;
        if !worth || !self.pruner.enabled {
            return Ok(());
        }
        let mut rng: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut total = 0f64;
        let evals_before = self.probe_evals;
        let started = Instant::now();
        for _ in 0..PROBES {
            total += self.probe(&mut rng);
        }
        let per_node =
            started.elapsed().as_secs_f64() / (self.probe_evals - evals_before).max(1) as f64;
        let estimate = total / PROBES as f64;
        let bound = 10f64.powf(log_bound);
        if estimate * weight > budget * PROBE_MARGIN {
            return Err(CheckError::Limit(format!(
                "the search would judge about {estimate:.1e} partial candidates even with \
                 pruning (estimated from {PROBES} random probes of the search tree; at most \
                 {bound:.1e} reads-from and coherence choices), {:.0} times the budget of \
                 {} (raise --max-candidates)",
                estimate * weight / budget,
                self.opts.max_candidates
            )));
        }
        if let Some(limit) = self.opts.timeout {
            let seconds = estimate * per_node;
            if seconds > limit.as_secs_f64() * PROBE_MARGIN {
                return Err(CheckError::Limit(format!(
                    "the search would take about {seconds:.0} s even with pruning \
                     ({estimate:.1e} partial candidates estimated from {PROBES} random probes, \
                     {:.0} µs each), over --timeout {} s",
                    per_node * 1e6,
                    limit.as_secs_f64()
                )));
            }
        }
        Ok(())
    }

    /// The work weight of one judgement of a candidate of this skeleton.
    fn weight(&self) -> u64 {
        1 + self.skel.len() as u64 / 32
    }

    /// Adds one judgement to the work done; over the budget, a limit.
    fn work(&mut self) -> Result<(), CheckError> {
        self.res.work += self.weight();
        let with_work = self.cache.with_nodes.saturating_mul(self.weight());
        if self.res.work.saturating_add(with_work) > self.opts.max_candidates {
            return Err(CheckError::Limit(format!(
                "the search did more than {} units of work (candidates and partial candidates \
                 judged, weighted by size) (raise --max-candidates)",
                self.opts.max_candidates
            )));
        }
        Ok(())
    }

    /// One random walk down the (pruned) search tree: the estimated number
    /// of its nodes (1 + d1 + d1·d2 + ..., di the children at depth i).
    fn probe(&mut self, rng: &mut u64) -> f64 {
        let skel = self.skel;
        let mut next = || {
            *rng ^= *rng << 13;
            *rng ^= *rng >> 7;
            *rng ^= *rng << 17;
            *rng
        };
        let none = Relation::new(skel.len());
        let base_co = self.base_co.clone();
        let (mut nodes, mut width) = (1f64, 1f64);
        let mut assigned = Vec::new();
        let mut complete = true;
        // Past the deadline a probe stops where it is (its caller's next
        // look at the clock ends the search).
        let past = |d: Option<Instant>| d.is_some_and(|d| Instant::now() > d);
        for &r in &skel.reads {
            if !self.constraints_possible() || past(self.deadline) {
                complete = false;
                break;
            }
            let loc = skel.events[r].loc.unwrap_or(0);
            let mut sources = vec![skel.init[loc]];
            sources.extend(skel.writes_by_loc[loc].iter().copied());
            let mut alive = Vec::new();
            for w in sources {
                self.values.set_rf(r, w);
                self.rf.add(w, r);
                let cyclic = self.values.value(r) == Eval::Cyclic;
                if !(cyclic || self.pruner.enabled && self.partial_fails(&base_co, &none, false)) {
                    alive.push(w);
                }
                self.rf.remove(w, r);
            }
            self.values.set_rf(r, usize::MAX);
            if alive.is_empty() {
                complete = false;
                break;
            }
            width *= alive.len() as f64;
            nodes += width;
            let w = alive[(next() % alive.len() as u64) as usize];
            self.values.set_rf(r, w);
            self.rf.add(w, r);
            assigned.push((r, w));
        }
        // The barrier matching once every read has a source (when a value
        // is missing, judge coherence prefixes as partial in rf too).
        let bar = if complete {
            barrier::instances(
                skel,
                &self.values,
                &mut self.bar_memo,
                self.deadline,
                self.opts.timeout.map(|t| (self.start, t)),
            )
            .ok()
            .and_then(|b| b.matchings.first().cloned())
        } else {
            None
        };
        if complete {
            let rf_complete = bar.is_some();
            let bar = bar.unwrap_or_else(|| none.clone());
            let mut co = base_co.clone();
            let mut order = skel.writes_by_loc.clone();
            'locs: for loc in (0..order.len()).rev() {
                let len = order[loc].len();
                for k in 0..len.saturating_sub(1) {
                    if past(self.deadline) {
                        break 'locs;
                    }
                    let mut alive = Vec::new();
                    for i in k..len {
                        order[loc].swap(k, i);
                        let e = order[loc][k];
                        for &b in &order[loc][k + 1..] {
                            co.add(e, b);
                        }
                        if !(self.pruner.enabled && self.partial_fails(&co, &bar, rf_complete)) {
                            alive.push(i);
                        }
                        for &b in &order[loc][k + 1..] {
                            co.remove(e, b);
                        }
                        order[loc].swap(k, i);
                    }
                    if alive.is_empty() {
                        break 'locs;
                    }
                    width *= alive.len() as f64;
                    nodes += width;
                    let i = alive[(next() % alive.len() as u64) as usize];
                    order[loc].swap(k, i);
                    let e = order[loc][k];
                    for &b in &order[loc][k + 1..] {
                        co.add(e, b);
                    }
                }
            }
        }
        for (r, w) in assigned {
            self.values.set_rf(r, usize::MAX);
            self.rf.remove(w, r);
        }
        nodes
    }

    /// Fills `rf_below` and `co_below`.
    fn plain_bounds(&mut self) {
        let skel = self.skel;
        let mut rf_below = vec![1f64; skel.reads.len() + 1];
        for k in (0..skel.reads.len()).rev() {
            let loc = skel.events[skel.reads[k]].loc.unwrap_or(0);
            rf_below[k] = rf_below[k + 1] * (1 + skel.writes_by_loc[loc].len()) as f64;
        }
        let mut co_below = vec![1f64; skel.writes_by_loc.len() + 1];
        for (l, w) in skel.writes_by_loc.iter().enumerate() {
            co_below[l + 1] = co_below[l] * (2..=w.len()).map(|x| x as f64).product::<f64>();
        }
        self.rf_below = rf_below;
        self.co_below = co_below;
    }

    /// The share of the test's search tree covered so far, taking every
    /// subtree of a level to be the same size.
    fn share_done(&self) -> f64 {
        let (mut within, mut share) = (0.0, 1.0);
        for &(i, n) in &self.pos {
            let n = f64::from(n.max(1));
            within += share * f64::from(i) / n;
            share /= n;
        }
        // Each combination of thread paths counted alike, or weighted by
        // its predicted cost: the projection takes the less advanced one.
        let uniform = self.outer_done + self.outer_share * within;
        self.combos
            .and_then(|c| {
                c.done(
                    self.combo_index,
                    self.ticks,
                    self.ticks - self.combo_ticks,
                    within,
                )
            })
            .map_or(uniform, |d| d.min(uniform))
    }

    /// Fails once the test is past its deadline, or (with `--timeout`) once
    /// the time projected from the share of the tree covered is
    /// over it by [`project::margin`]: a limit message then, rather than
    /// a timeout later. Publishes progress.
    fn tick(&mut self) -> Result<(), CheckError> {
        self.ticks += 1;
        if self.ticks.is_multiple_of(PROJECT_EVERY)
            && let Some(limit) = self.opts.timeout
        {
            let (elapsed, limit) = (self.start.elapsed().as_secs_f64(), limit.as_secs_f64());
            // Late in the timeout, a search with nothing of its tree
            // covered yet projects past it too.
            let margin = project::margin(elapsed, limit);
            let done = self.share_done();
            if elapsed > limit * PROJECT_AFTER
                && (done > 0.0 || margin <= 1.0)
                && elapsed / done.max(1e-9) > limit * margin
            {
                return Err(CheckError::Limit(format!(
                    "the search would take about {:.0} s: {:.2}% of it done after {elapsed:.1} s \
                     (projected from the share of the search tree covered), over --timeout {limit} s",
                    elapsed / done.max(1e-9),
                    done * 100.0
                )));
            }
        }
        if let Some(p) = &self.opts.progress {
            use std::sync::atomic::Ordering::Relaxed;
            p.candidates.store(self.res.candidates, Relaxed);
            p.partial.store(self.res.partial, Relaxed);
            p.pruned.store(self.res.pruned, Relaxed);
        }
        if let Some(d) = self.deadline
            && Instant::now() > d
        {
            return Err(CheckError::Timeout {
                after: self.start.elapsed(),
                candidates: self.res.candidates,
                pruned: self.res.pruned,
                states: None,
            });
        }
        Ok(())
    }

    /// Whether the partial candidate (current `rf`, `co`, `bar`) fails a
    /// pruning check of the model; `rf_complete` once every read has its
    /// source and `bar` is final.
    fn partial_fails(&mut self, co: &Relation, bar: &Relation, rf_complete: bool) -> bool {
        self.probe_evals += 1;
        self.pruner
            .fails(self.skel, &self.rf, co, bar, rf_complete, &mut self.cache)
    }

    /// With pruning on: judges the partial candidate and says whether to
    /// cut it (counted), within the work budget.
    /// `below` bounds the complete candidates under the node: a node with
    /// fewer than [`MIN_SUBTREE`] is not worth a judgement of its own (the
    /// candidates below are judged whole anyway; results are the same).
    fn cut(
        &mut self,
        co: &Relation,
        bar: &Relation,
        rf_complete: bool,
        below: f64,
    ) -> Result<bool, CheckError> {
        let min = match &self.opts.skip {
            Some(f) if f.only => MIN_SUBTREE_ONLY,
            Some(_) => MIN_SUBTREE_FILTERED,
            None => MIN_SUBTREE,
        };
        if !self.pruner.enabled || below < min {
            return Ok(false);
        }
        self.res.partial += 1;
        self.work()?;
        self.tick()?;
        let fails = self.partial_fails(co, bar, rf_complete);
        if fails {
            self.res.pruned += 1;
        }
        Ok(fails)
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
                        self.count_thin_air();
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
                        self.count_thin_air();
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
        let bars = barrier::instances(
            skel,
            &self.values,
            &mut self.bar_memo,
            self.deadline,
            self.opts.timeout.map(|t| (self.start, t)),
        )?;
        // Counted, like thin-air choices, only when the model's pruning
        // checks do not reject this rf choice anyway: the count is then the
        // same whether pruning is on or off.
        if bars.deadlock {
            let (co, none) = (self.base_co.clone(), Relation::new(skel.len()));
            if !self.partial_fails(&co, &none, false) {
                self.res.barrier_deadlocks += 1;
            }
        }
        let regs = self.final_registers();
        for bar in &bars.matchings {
            self.judge_co(bar, &vals, &regs)?;
        }
        Ok(())
    }

    /// Judges every coherence order of the current `rf` choice under one
    /// barrier matching.
    fn judge_co(
        &mut self,
        bar: &Relation,
        vals: &[Option<Value>],
        regs: &BTreeMap<(usize, String), Value>,
    ) -> Result<(), CheckError> {
        let skel = self.skel;
        let lasts: Vec<&[usize]> = skel.writes_by_loc.iter().map(Vec::as_slice).collect();
        if self.all_states_skipped(regs, vals, &lasts) {
            return Ok(());
        }
        let base_co = self.base_co.clone();
        // With no barrier edges this is the partial candidate the last
        // read's choice was just judged as, with the same `below` (so it
        // was judged) and passed: when the coherence plan has the same
        // checks, judging it again cannot cut.
        let judged_already =
            !skel.reads.is_empty() && bar.is_empty() && self.pruner.co_plan_adds_nothing;
        if !judged_already
            && self.cut(&base_co, bar, true, self.co_below[skel.writes_by_loc.len()])?
        {
            return Ok(());
        }

        // Coherence orders multiply: without pruning, refuse before
        // enumerating them when they alone would exceed the candidate
        // budget. With pruning the search may cut most of them, and the
        // work budget and deadline bound it instead.
        let budget = self.opts.max_candidates.saturating_sub(self.res.candidates);
        let mut co_choices: u64 = 1;
        for w in &skel.writes_by_loc {
            for k in 2..=w.len() as u64 {
                co_choices = co_choices.saturating_mul(k);
            }
        }
        if !self.pruner.enabled {
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
        }
        if self.model.binds_co() {
            let rf = self.rf.clone();
            return self.judge_model_co(&rf, bar, regs, vals);
        }
        let mut cs = CoState {
            order: skel.writes_by_loc.clone(),
            co: base_co,
        };
        let judged = Judged { bar, regs, vals };
        self.co_locations(&mut cs, skel.writes_by_loc.len(), &judged)
    }

    /// Orders locations `0..left`, the last one first (so that the first
    /// location varies fastest, as an odometer would), then judges.
    fn co_locations(
        &mut self,
        cs: &mut CoState,
        left: usize,
        j: &Judged<'_>,
    ) -> Result<(), CheckError> {
        if left == 0 {
            return self.judge_candidate(cs, j);
        }
        self.co_place(cs, left - 1, 0, j)
    }

    /// Places a write at position `k` of location `loc`'s order, trying the
    /// remaining writes in turn (the swap order of a permutation
    /// enumeration), cutting each prefix a pruning check rejects.
    fn co_place(
        &mut self,
        cs: &mut CoState,
        loc: usize,
        k: usize,
        j: &Judged<'_>,
    ) -> Result<(), CheckError> {
        let len = cs.order[loc].len();
        if k + 1 >= len {
            return self.co_locations(cs, loc, j);
        }
        for i in k..len {
            if self.filter_done() {
                break;
            }
            self.pos.push(((i - k) as u32, (len - k) as u32));
            cs.order[loc].swap(k, i);
            let e = cs.order[loc][k];
            for &b in &cs.order[loc][k + 1..] {
                cs.co.add(e, b);
            }
            let below = (1..len - k).map(|x| x as f64).product::<f64>() * self.co_below[loc];
            if !self.cut(&cs.co, j.bar, true, below)? {
                self.co_place(cs, loc, k + 1, j)?;
            }
            for &b in &cs.order[loc][k + 1..] {
                cs.co.remove(e, b);
            }
            cs.order[loc].swap(k, i);
            self.pos.pop();
        }
        Ok(())
    }

    /// A thin-air choice is counted for the warning only when the model's
    /// pruning checks do not already reject it: then the count does not
    /// depend on whether pruning is on (a node they accept has every
    /// ancestor accepted too, so the pruning search reaches it).
    fn count_thin_air(&mut self) {
        let (co, bar) = (self.base_co.clone(), Relation::new(self.skel.len()));
        if !self.partial_fails(&co, &bar, false) {
            self.res.cyclic += 1;
        }
    }

    /// Judges one complete candidate with the whole model.
    fn judge_candidate(&mut self, cs: &CoState, j: &Judged<'_>) -> Result<(), CheckError> {
        let skel = self.skel;
        let (co, bar, regs, vals) = (&cs.co, j.bar, j.regs, j.vals);
        self.tick()?;
        if self.pruner.enabled {
            self.work()?;
        }
        self.res.candidates += 1;
        if self.res.candidates > self.opts.max_candidates {
            return Err(over_budget(self.opts.max_candidates));
        }
        let rf = &self.rf;
        let chosen: Vec<&Vec<usize>> = cs.order.iter().collect();
        let (state, sat, interesting) = self.judge_state(regs, &chosen, vals);
        if let Some(skip) = &self.opts.skip
            && skip.skips(&state)
        {
            return Ok(());
        }
        let env = CandidateEnv::new(skel, rf, co, bar).lenient(self.opts.lenient);
        let explain_allowed =
            self.opts.why && interesting && !self.res.allowed_why.iter().any(|a| a.state == state);
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
                    execution: view::view(skel, rf, co, vals, state.clone()),
                });
            }
            outcome
        } else {
            self.model.evaluate_cached(&env, &mut self.cache)?
        };
        if outcome.allowed {
            *self.res.states.entry(state.clone()).or_insert(0) += 1;
            self.res.count_allowed(sat, 1);
            self.res.flags.extend(outcome.flags.iter().cloned());
            if self.res.witnesses.len() < self.opts.keep_witnesses && interesting {
                self.res
                    .witnesses
                    .push(view::view(skel, rf, co, vals, state));
            }
        } else if self.opts.why
            && interesting
            && !self.res.states.contains_key(&state)
            && !self.forbidden.contains_key(&state)
            && let Some(failure) = self.model.evaluate_explain(&env)?.failure
        {
            let execution = view::view(skel, rf, co, vals, state.clone());
            self.forbidden.insert(
                state.clone(),
                Forbidden {
                    state,
                    failure,
                    execution,
                },
            );
        }
        Ok(())
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
        let (accepted, rejected) = if self.opts.why {
            self.model.evaluate_all_explained(&env, &mut self.cache)?
        } else {
            (self.model.evaluate_all(&env, &mut self.cache)?, Vec::new())
        };
        self.res.candidates += accepted.len().max(1) as u64;
        if self.res.candidates > self.opts.max_candidates {
            return Err(over_budget(self.opts.max_candidates));
        }
        // The final state a `co` gives, whether it satisfies the condition,
        // and whether the condition asks about it.
        let state_of_co = |me: &Self, co: &crate::rel::Relation| {
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
            me.judge_state(regs, &chosen, vals)
        };
        // --why: each rejected choice explains its outcome (the first one
        // reaching it), unless some execution turns out to allow it.
        for (co, failure) in rejected {
            let (state, _, interesting) = state_of_co(self, &co);
            if interesting && !self.forbidden.contains_key(&state) {
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
        }
        for a in accepted {
            let co = a.co.unwrap_or_else(|| empty.clone());
            let (state, sat, interesting) = state_of_co(self, &co);
            if let Some(skip) = &self.opts.skip
                && skip.skips(&state)
            {
                continue;
            }
            *self.res.states.entry(state.clone()).or_insert(0) += 1;
            self.res.count_allowed(sat, 1);
            self.res.flags.extend(a.flags.iter().cloned());
            if self.res.witnesses.len() < self.opts.keep_witnesses && interesting {
                self.res
                    .witnesses
                    .push(view::view(skel, rf, &co, vals, state));
            }
        }
        Ok(())
    }

    /// With a [`StateFilter`] listing the only states wanted: whether every
    /// one of them has been found allowed, so that the search can stop.
    fn filter_done(&self) -> bool {
        self.opts
            .skip
            .as_ref()
            .is_some_and(|f| f.only && self.res.states.len() >= f.states.len())
    }

    /// With a [`StateFilter`] listing the only states wanted: whether some
    /// wanted state agrees with the registers the reads chosen so far
    /// already determine (true without such a filter).
    fn wanted_reachable(&self) -> bool {
        let Some(f) = self.opts.skip.as_ref().filter(|f| f.only) else {
            return true;
        };
        // Observed registers known now, as (position in the state, value).
        let mut known: Vec<(usize, Value)> = Vec::new();
        for (pos, term) in self.observed.iter().enumerate() {
            let Term::Reg { thread, reg } = term else {
                continue;
            };
            let Some(k) = f.positions.iter().position(|&p| p == pos) else {
                continue;
            };
            if let Some(sym) = self
                .skel
                .paths
                .get(*thread)
                .and_then(|p| p.regs.get(reg.as_str()))
                && let Eval::Known(v) = self.values.sym(*thread, sym, &mut Vec::new())
            {
                known.push((k, v));
            }
        }
        f.states
            .iter()
            .any(|s| known.iter().all(|&(k, v)| s[k] == v))
    }

    /// Whether every final state the current `rf` choice can end in is
    /// skipped ([`CheckOptions::skip`]), when each location `l` may end with
    /// the value of any write of `lasts[l]` (or its initial value when that
    /// is empty): then no candidate below needs judging. The registers are
    /// fixed by `rf`.
    fn all_states_skipped(
        &self,
        regs: &BTreeMap<(usize, String), Value>,
        vals: &[Option<Value>],
        lasts: &[&[usize]],
    ) -> bool {
        /// Beyond this many combinations of last writes, judge as usual.
        const MAX_COMBINATIONS: usize = 64;
        let Some(skip) = &self.opts.skip else {
            return false;
        };
        let combos = lasts
            .iter()
            .try_fold(1usize, |n, w| n.checked_mul(w.len().max(1)))
            .unwrap_or(usize::MAX);
        if combos > MAX_COMBINATIONS {
            return false;
        }
        // `pick[l]`: which write of `lasts[l]` is taken as last (none when
        // `lasts[l]` is empty).
        let mut pick = vec![0usize; lasts.len()];
        loop {
            let last: Vec<Vec<usize>> = lasts
                .iter()
                .zip(&pick)
                .map(|(w, &i)| w.get(i).copied().into_iter().collect())
                .collect();
            let orders: Vec<&Vec<usize>> = last.iter().collect();
            if !skip.skips(&self.final_state(regs, &orders, vals)) {
                return false;
            }
            if !next_choice(&mut pick, |l| lasts[l].len().max(1)) {
                return true;
            }
        }
    }

    /// Final register values per thread (only the observed ones).
    fn final_registers(&self) -> BTreeMap<(usize, String), Value> {
        let mut out = BTreeMap::new();
        for term in self.observed {
            if let Term::Reg { thread, reg } = term {
                let v =
                    match self
                        .skel
                        .paths
                        .get(*thread)
                        .and_then(|p| p.regs.get(reg.as_str()))
                    {
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

    /// The final state of a candidate (per location, its writes in `co`
    /// order), whether it satisfies the condition, and whether the
    /// condition asks about it (a witness for `exists`, a counter-example
    /// for `forall`).
    fn judge_state(
        &self,
        regs: &BTreeMap<(usize, String), Value>,
        orders: &[&Vec<usize>],
        vals: &[Option<Value>],
    ) -> (Vec<Value>, bool, bool) {
        let state = self.final_state(regs, orders, vals);
        let sat = eval_prop(
            &self.skel.test.condition.prop,
            &state_lookup(self.observed, &state),
        );
        let interesting = match self.skel.test.condition.quantifier {
            Quantifier::Forall => !sat,
            _ => sat,
        };
        (state, sat, interesting)
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
