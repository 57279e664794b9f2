//! What a caller asks of a check: limits, what to collect, which states to skip.

use crate::ir::Value;
use std::time::Duration;

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
    pub states: StateSet,
    /// `false`: the listed states are skipped; `true`: every other state is.
    pub only: bool,
}

/// A set of states (each a value per observed term). FxHash: the states
/// are those of one test, bounded by the engine's state limit, and the
/// filter asks about every candidate's state.
pub type StateSet = std::collections::HashSet<Vec<Value>, crate::fast_hash::FastHash>;

impl StateFilter {
    /// Whether the full observed state `state` is skipped.
    pub fn skips(&self, state: &[Value]) -> bool {
        // The key on the stack for states of up to 32 terms.
        let mut stack = [Value::Int(0); 32];
        let n = self.positions.len();
        let contains = if n <= stack.len() {
            for (k, &p) in stack.iter_mut().zip(&self.positions) {
                *k = state[p];
            }
            self.states.contains(&stack[..n])
        } else {
            let key: Vec<Value> = self.positions.iter().map(|&p| state[p]).collect();
            self.states.contains(key.as_slice())
        };
        contains != self.only
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
