//! Judging partial candidates: the hooks the search uses to cut a branch
//! as soon as one of the model's monotone checks fails on it.
//!
//! [`crate::cat::monotone`] finds the checks whose relation can only grow
//! as the search adds `rf` edges, `co` edges and `with` orders. Here a
//! partial candidate is presented to those checks through the ordinary
//! [`CandidateEnv`], with under-approximations of the choices:
//!
//! * `rf`: the edges of the reads that have a source so far;
//! * `co`: the init write before every write of its location (true in every
//!   candidate), plus, per location being ordered, each placed write before
//!   the writes placed after it and before every write not yet placed;
//! * `bar` (barrier matching, computed from read values): empty until every
//!   read has a source;
//! * `fr`, `rfe`, `coi`, ...: derived from the above by the environment, so
//!   subsets of their final values too (all are monotone in `rf` and `co`).
//!
//! A failing check then fails on every completion, and the branch is cut.
//! docs/pruning.md has the argument and what keeps the output identical.

use super::candidate::Skeleton;
use super::env::{self, CandidateEnv};
use crate::cat::{Model, PrunePlan, StaticCache};
use crate::rel::Relation;

/// The pruning checks of one model for the engine's search.
pub struct Pruner<'m> {
    model: &'m Model,
    plan: PrunePlan,
    /// Cut branches (`--no-prune` turns it off). Even when off, the plan
    /// decides which thin-air choices are worth a warning (see
    /// [`Pruner::fails`]).
    pub enabled: bool,
}

impl<'m> Pruner<'m> {
    /// The plan for `model`, with the environment's dynamic names as the
    /// choices.
    pub fn new(model: &'m Model, enabled: bool) -> Self {
        let plan = model.prune_plan(&env::is_dynamic);
        let enabled = enabled && !plan.checks.is_empty();
        Pruner {
            model,
            plan,
            enabled,
        }
    }

    /// Whether the partial candidate (`rf`, `co`, `bar` under-approximating
    /// every completion) already fails a pruning check.
    pub fn fails(
        &self,
        skel: &Skeleton,
        rf: &Relation,
        co: &Relation,
        bar: &Relation,
        cache: &mut StaticCache,
    ) -> bool {
        if self.plan.checks.is_empty() {
            return false;
        }
        let env = CandidateEnv::new(skel, rf, co, bar);
        self.model.partial_fails(&env, &self.plan, cache)
    }
}

/// The coherence edges every candidate of `skel` has: each init write
/// before every write of its location.
pub fn base_coherence(skel: &Skeleton) -> Relation {
    let mut co = Relation::new(skel.len());
    for (l, ws) in skel.writes_by_loc.iter().enumerate() {
        if skel.init[l] == usize::MAX {
            continue;
        }
        for &w in ws {
            co.add(skel.init[l], w);
        }
    }
    co
}
