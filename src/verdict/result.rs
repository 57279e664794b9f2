//! The judged outcome of one test under one model, whichever judge made it.

use super::{AllowedWhy, ExecutionView, Forbidden, OpReport};
use crate::ir::outcome::{observed_terms, term_name};
use crate::ir::{Quantifier, Test, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

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
    /// exploration figures and witness traces (see the operational judge).
    pub operational: Option<Box<OpReport>>,
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
