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

/// Predefined names that derive from `co` (with `rf` fixed): the choices of
/// the coherence search.
const FROM_CO: &[&str] = &["co", "coe", "coi", "fr", "fre", "fri"];

/// Whether `name` is a choice of the coherence search, where `rf` and the
/// barrier matching are already fixed.
pub fn is_coherence_choice(name: &str) -> bool {
    FROM_CO.contains(&name)
}

/// The pruning checks of one model for the engine's search.
pub struct Pruner<'m> {
    model: &'m Model,
    /// While reads get their sources: `rf`, `co` and all that derives from
    /// them are choices.
    rf_plan: &'m PrunePlan,
    /// Once `rf` is complete: only `co` and what derives from it. Every
    /// check of `rf_plan` is here too, and more may be (a relation that
    /// subtracts something built from `rf` is fixed now).
    co_plan: &'m PrunePlan,
    /// The coherence search prunes with exactly the checks (and program) of
    /// the reads-from search: once every read has a source, a partial
    /// candidate the reads-from search passed passes again.
    pub co_plan_adds_nothing: bool,
    /// Cut branches (`--no-prune` turns it off). Even when off, the plan
    /// decides which thin-air choices are worth a warning (see
    /// [`Pruner::fails`]).
    pub enabled: bool,
}

impl<'m> Pruner<'m> {
    /// The plan for `model`, with the environment's dynamic names as the
    /// choices.
    pub fn new(model: &'m Model, enabled: bool) -> Self {
        let (rf_plan, co_plan) = model.search_plans(&env::is_dynamic, &is_coherence_choice);
        let enabled = enabled && !co_plan.checks.is_empty();
        let co_plan_adds_nothing = rf_plan.checks == co_plan.checks
            && rf_plan.program.is_none()
            && co_plan.program.is_none();
        Pruner {
            model,
            rf_plan,
            co_plan,
            co_plan_adds_nothing,
            enabled,
        }
    }

    /// Whether the partial candidate already fails a pruning check:
    /// `rf_complete` false: `rf`, `co` and `bar` under-approximate every
    /// completion; true: `rf` and `bar` are final and `co` under-approximates.
    pub fn fails(
        &self,
        skel: &Skeleton,
        rf: &Relation,
        co: &Relation,
        bar: &Relation,
        rf_complete: bool,
        cache: &mut StaticCache,
    ) -> bool {
        let plan = if rf_complete {
            self.co_plan
        } else {
            self.rf_plan
        };
        if plan.checks.is_empty() {
            return false;
        }
        let env = CandidateEnv::new(skel, rf, co, bar);
        self.model.partial_fails(&env, plan, cache)
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

/// The pruning analysis of `model` in words (for `litmix models
/// --pruning`): for the engine's search (choices `rf`, `co` and what
/// derives from them, `with` variables at their least value) and for each
/// `with` search (its variable and later ones), each check with whether it
/// prunes and why.
pub fn report(model: &Model) -> String {
    let mut out = String::new();
    let native = model.co_native();
    if native.is_some() {
        out.push_str(
            "the model builds co with 'with co from'; where that set is the engine's own \
             coherence orders (checked per choice of thread paths), it runs over the \
             engine's co, as analysed here\n",
        );
    }
    let model = native.unwrap_or(model);
    let mut section = |title: &str, plan: &PrunePlan| {
        out.push_str(&format!(
            "{title}: {} of {} checks prune\n",
            plan.checks.len(),
            plan.report.len()
        ));
        if let Some(d) = &plan.disabled {
            out.push_str(&format!("  no pruning: {d}\n"));
        }
        for c in &plan.report {
            let mark = if c.prunes { "prunes " } else { "cannot " };
            out.push_str(&format!("  {mark} {}: {}\n", c.label, c.reason));
        }
    };
    section(
        &format!(
            "model {}, reads-from search (choices: rf, co and the names derived \
             from them, with-variables at their least value)",
            model.name()
        ),
        &model.prune_plan(&env::is_dynamic),
    );
    section(
        "coherence search (rf fixed; choices: co, coe, coi, fr, fre, fri, \
         with-variables at their least value)",
        &model.prune_plan(&is_coherence_choice),
    );
    for (label, plan) in model.with_prune_plans() {
        section(
            &format!("'{label}' (choice: the order, a growing prefix)"),
            &plan,
        );
    }
    out
}
