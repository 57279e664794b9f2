//! Operational results as text: the `--trace` listing of a witness trace
//! per outcome, and a Graphviz picture of a final state's order
//! constraints.

use crate::ir::Test;
use crate::verdict::{CheckResult, OutcomeTrace, StateView};

/// The `--trace` text: for each outcome the condition asks about (those
/// satisfying its proposition), one transition sequence reaching it; or a
/// line saying that none is reachable.
pub fn trace_text(test: &Test, r: &CheckResult) -> String {
    let Some(op) = &r.operational else {
        return String::new();
    };
    let mut out = String::new();
    let asked: Vec<&OutcomeTrace> = op.traces.iter().filter(|t| t.satisfies).collect();
    if asked.is_empty() {
        out.push_str(&format!(
            "Trace {}: no reachable final state of {} satisfies {} ({} states explored): forbidden\n",
            r.test,
            op.machine,
            super::herd::condition_text(test),
            op.states
        ));
    }
    for t in asked {
        out.push_str(&format!(
            "Trace {} reaching {} ({} steps):\n",
            r.test,
            t.outcome,
            t.steps.len()
        ));
        match &t.text {
            Some(text) => out.push_str(text),
            None => {
                for (i, s) in t.steps.iter().enumerate() {
                    out.push_str(&format!("  {:3}. {s}\n", i + 1));
                }
            }
        }
    }
    out
}

/// Graphviz picture of a final state's order constraints: one cluster per
/// thread with its remaining requests, edges labelled with their scope.
pub fn dot_constraints(title: &str, view: &StateView) -> String {
    let q = |s: &str| s.replace('\\', "\\\\").replace('"', "\\\"");
    let mut out = format!(
        "digraph lostpop {{\n  label=\"{}\";\n  node [shape=box, fontname=monospace];\n",
        q(title)
    );
    for (i, line) in view.summary.iter().enumerate() {
        out.push_str(&format!(
            "  \"init{i}\" [label=\"{}\", style=dashed];\n",
            q(line)
        ));
    }
    for (k, t) in view.threads.iter().enumerate() {
        out.push_str(&format!(
            "  subgraph cluster_{k} {{\n    label=\"{} ({})\";\n",
            q(&t.name),
            q(&t.arch)
        ));
        for it in &t.items {
            out.push_str(&format!(
                "    \"{}\" [label=\"{}\\n{}\"];\n",
                q(&it.id),
                q(&it.text),
                q(&it.detail)
            ));
        }
        out.push_str("  }\n");
    }
    let init_names: Vec<String> = view
        .summary
        .iter()
        .map(|l| {
            l.strip_prefix("init ")
                .and_then(|r| r.split('=').next())
                .map(|n| format!("init {n}"))
                .unwrap_or_default()
        })
        .collect();
    let node = |n: &str| {
        init_names
            .iter()
            .position(|x| x == n)
            .map(|i| format!("init{i}"))
            .unwrap_or_else(|| n.to_string())
    };
    for c in &view.constraints {
        out.push_str(&format!(
            "  \"{}\" -> \"{}\" [label=\"{}\"];\n",
            q(&node(&c.from)),
            q(&node(&c.to)),
            q(&c.scope)
        ));
    }
    out.push_str("}\n");
    out
}
