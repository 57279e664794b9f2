//! Executions in reportable form: self-contained event lists and edge lists
//! that reporters (herd text, JSON, DOT, `--why`) print without touching
//! the engines' internal types.

use crate::cat::Failure;
use crate::ir::Value;

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
