//! Execution: from a program to judged candidate executions.
//!
//! [`thread`] runs each thread symbolically into paths of events;
//! [`candidate`] combines paths, chooses `rf` and `co`; [`env`] presents a
//! candidate to the cat interpreter; [`check`] drives it all and collects
//! the final states the model allows.

pub mod barrier;
pub mod candidate;
pub mod env;
pub mod project;
pub mod prune;
mod search;
mod sizing;
pub mod thread;
pub mod view;
use search::RfSearch;

// The verdict types and the outcome helpers live below the engines; they
// are re-exported here because `check` speaks them.
pub use crate::ir::outcome::{observed_terms, satisfies, term_name, value_text};
pub use crate::verdict::{
    AllowedWhy, CheckError, CheckOptions, CheckResult, EventView, ExecutionView, Forbidden,
    Progress, StateFilter, WHY_PATH, WHY_PREFIX, WhyReason,
};

use crate::cat::Model;
use crate::ir::outcome::{eval_prop, state_lookup};
use crate::ir::{Quantifier, Term, Test, Value};
use crate::rel::Relation;
use candidate::{Eval, Skeleton, Values};
use env::CandidateEnv;
use prune::{Pruner, base_coherence};
use std::collections::BTreeMap;
use std::time::Instant;
use thread::{EventKind, PathLimits, ThreadPaths};
use view::why_reasons;

/// Checks `test` against `model`.
pub fn check(test: &Test, model: &Model, opts: &CheckOptions) -> Result<CheckResult, CheckError> {
    let start = Instant::now();
    let file = test.source_name();
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
    // A model blind to `co` (docs/decisions.md): only the last write of
    // each observed location is chosen, as herd7 does for a model without
    // `co`; every other coherence order would repeat a candidate. A model
    // that reads `co` only through `FW` sees only the last write of every
    // location: one order per choice of last writes, counted as all the
    // orders it stands for, so the counts are those of the whole search.
    let blind = !model.binds_co() && !model.depends_on(env::CO_DEPENDENT);
    let reads_fw_only = !model.binds_co()
        && !blind
        && !model.reads_any(env::CO_DEPENDENT_BUT_FW)
        && model.reads_any(&["FW"]);
    let co_last_only = if reads_fw_only {
        Some(vec![true; test.locations.len()])
    } else {
        blind.then(|| {
            let mut observed = vec![false; test.locations.len()];
            for t in &observed_terms {
                if let Term::Loc(l) = t {
                    observed[test.physical(*l)] = true;
                }
            }
            observed
        })
    };

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
        // A model building `co` from the engine's orders is run over the
        // engine's `co` only once its set is checked for this skeleton, and
        // that check waits for the search's first judgement
        // (`RfSearch::settle`): a choice of thread paths the read values
        // rule out judges nothing and needs no check.
        let pending = native
            .zip(native_pruner.as_ref())
            .map(|(m, p)| NativeCheck {
                model: m,
                pruner: p,
                prune: opts.prune && !opts.why,
                lenient: opts.lenient,
            });
        let mut cache = model.new_cache();
        judging_cache(&mut cache, prune, deadline, opts, res.work, &skel, start);
        let mut search = RfSearch {
            skel: &skel,
            model,
            pending,
            opts,
            observed: &observed_terms,
            res: &mut res,
            forbidden: &mut forbidden,
            values: Values::new(&skel),
            cache,
            pruner: &pruner,
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
            co_last_only: co_last_only.as_deref(),
            co_weighted: reads_fw_only,
            weight: 1,
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
        // Whether the model that judged (the one asked for, or its native
        // form) pruned.
        let pruned_withs = search.cache.prune;
        res.with_nodes += with_nodes;
        res.with_pruned += with_pruned;
        if pruned_withs {
            let weight = judgement_weight(&skel);
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

/// A [`Model::co_native`] model waiting for its check on one skeleton
/// ([`co_choices_are_engine_orders`]): run in place of the original, with
/// its pruner, once the check passes.
pub(super) struct NativeCheck<'s> {
    pub(super) model: &'s Model,
    pub(super) pruner: &'s Pruner<'s>,
    /// Whether the native model's search prunes.
    pub(super) prune: bool,
    pub(super) lenient: bool,
}

/// The work weight of one judgement of a candidate of `skel` (large
/// skeletons cost more per judgement).
pub(super) fn judgement_weight(skel: &Skeleton) -> u64 {
    1 + skel.len() as u64 / 32
}

/// Sets up `cache` for judging the candidates of `skel`: whether the model
/// prunes its `with` searches, the deadline, and the `with` budget
/// (`with` orders count against the work budget like partial candidates
/// when pruning; unpruned, the plain limits stay).
pub(super) fn judging_cache(
    cache: &mut crate::cat::StaticCache,
    prune: bool,
    deadline: Option<Instant>,
    opts: &CheckOptions,
    work_done: u64,
    skel: &Skeleton,
    start: Instant,
) {
    cache.prune = prune;
    cache.deadline = deadline;
    let weight = judgement_weight(skel);
    cache.with_limits = crate::cat::WithLimits {
        max_nodes: if prune {
            opts.max_candidates.saturating_sub(work_done) / weight
        } else {
            u64::MAX
        },
        timeout: opts.timeout.map(|t| (start, t)),
    };
}

/// Whether the set a [`Model::co_native`] model's original chose `co` from
/// is, for this choice of thread paths, exactly the set of coherence orders
/// the engine enumerates: per location, every strict total order of its
/// writes after its initial write. Each member must contain the engine's
/// init-first edges, order every pair of same-location writes one way,
/// be acyclic and have no other edge; the members are distinct (a set), so
/// as many of them as the engine has orders means the same set.
pub(super) fn co_choices_are_engine_orders(
    skel: &Skeleton,
    native: &Model,
    cache: &mut crate::cat::StaticCache,
    lenient: bool,
) -> bool {
    let n = skel.len();
    let (rf, co, bar) = (Relation::new(n), Relation::new(n), Relation::new(n));
    let env = CandidateEnv::new(skel, &rf, &co, &bar).lenient(lenient);
    // What is checked below depends on the writes, the initial writes and
    // the locations only.
    native.co_choices_accepted(&env, cache, &["W", "IW", "loc"], |choices| {
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
