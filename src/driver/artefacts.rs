//! The report artefacts of one result, built once for every caller: the
//! witness executions, the forbidden executions with the violated axiom's
//! cycle, the allowed executions a model explains (`why_` bindings), and
//! the operational witness traces, each with its title, a file-name stem,
//! the final state's text and its Graphviz picture. `run --dot` writes them
//! as files and the playground sends them as JSON: the same list.

use crate::ir::Test;
use crate::report;
use crate::verdict::{CheckResult, ExecutionView};

/// What an artefact shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArtefactKind {
    /// An allowed execution reaching a state (kept with `keep_witnesses`).
    Witness,
    /// A forbidden execution with the cycle of the violated axiom (`--why`).
    Forbidden,
    /// An allowed execution with the reason the model names (`--why`).
    AllowedWhy,
    /// An operational witness trace: the steps reaching an outcome and the
    /// final state's order constraints.
    Trace,
}

impl ArtefactKind {
    /// The word the playground's JSON uses.
    pub fn word(self) -> &'static str {
        match self {
            ArtefactKind::Witness => "witness",
            ArtefactKind::Forbidden => "forbidden",
            ArtefactKind::AllowedWhy => "allowed-why",
            ArtefactKind::Trace => "trace",
        }
    }
}

/// One artefact of a result.
pub struct Artefact<'r> {
    pub kind: ArtefactKind,
    pub title: String,
    /// A file-name-safe stem (`MP-1`, `MP-forbidden-1`, `MP-allowed-1`).
    pub stem: String,
    /// The final state's text (`1:r0=1; x=2`).
    pub state: String,
    /// The execution drawn (none for traces).
    pub execution: Option<&'r ExecutionView>,
    /// Highlighted steps: the violated axiom's cycle or the reason's edges.
    pub cycle: Vec<(usize, usize, String)>,
    /// A trace's transition labels, in order.
    pub steps: Vec<String>,
    /// The Graphviz text.
    pub dot: String,
}

/// Every artefact of `result`, in a fixed order: traces, witnesses,
/// forbidden executions, explained allowed executions.
pub fn artefacts<'r>(test: &Test, result: &'r CheckResult) -> Vec<Artefact<'r>> {
    let r = result;
    let base = sanitize(&r.test);
    let mut out = Vec::new();
    if let Some(op) = &r.operational {
        for (i, t) in op.traces.iter().enumerate() {
            let title = format!("{} ({}) {}", r.test, r.model, t.outcome);
            out.push(Artefact {
                kind: ArtefactKind::Trace,
                stem: format!("{base}-{}", i + 1),
                state: t.outcome.clone(),
                execution: None,
                cycle: Vec::new(),
                steps: t.steps.clone(),
                dot: report::trace::dot_constraints(&title, &t.final_view),
                title,
            });
        }
    }
    for (i, w) in r.witnesses.iter().enumerate() {
        let title = format!("{} ({}) witness {}", r.test, r.model, i + 1);
        out.push(Artefact {
            kind: ArtefactKind::Witness,
            stem: format!("{base}-{}", i + 1),
            state: report::state_text(test, &r.observed, &w.state),
            execution: Some(w),
            cycle: Vec::new(),
            steps: Vec::new(),
            dot: report::dot::execution(test, &title, w),
            title,
        });
    }
    for (i, f) in r.forbidden.iter().enumerate() {
        let title = format!("{} ({}) forbidden by {}", r.test, r.model, f.failure.check);
        out.push(Artefact {
            kind: ArtefactKind::Forbidden,
            stem: format!("{base}-forbidden-{}", i + 1),
            state: report::state_text(test, &r.observed, &f.state),
            execution: Some(&f.execution),
            cycle: f.failure.path.clone(),
            steps: Vec::new(),
            dot: report::dot::execution_with_cycle(test, &title, &f.execution, &f.failure.path),
            title,
        });
    }
    for (i, a) in r.allowed_why.iter().enumerate() {
        let names: Vec<&str> = a.reasons.iter().map(|w| w.name.as_str()).collect();
        let title = format!("{} ({}) allowed: {}", r.test, r.model, names.join(", "));
        let cycle: Vec<(usize, usize, String)> = a
            .reasons
            .iter()
            .flat_map(|w| w.edges.iter().map(|(x, y, _)| (*x, *y, w.name.clone())))
            .collect();
        out.push(Artefact {
            kind: ArtefactKind::AllowedWhy,
            stem: format!("{base}-allowed-{}", i + 1),
            state: report::state_text(test, &r.observed, &a.state),
            execution: Some(&a.execution),
            dot: report::dot::execution_with_cycle(test, &title, &a.execution, &cycle),
            cycle,
            steps: Vec::new(),
            title,
        });
    }
    out
}

/// A file-name-safe form of a test name.
pub fn sanitize(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "+-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}
