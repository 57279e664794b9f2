//! `--why`: for each outcome the condition asks about that the model
//! forbids, the violated axiom and the cycle that violates it; for each
//! such outcome it allows, the reasons the model gives through its `why_`
//! bindings (e.g. ptx75: base causality that is not proxy-preserved because
//! a proxy fence is missing or misplaced), with the path behind each.

use super::{event_label, event_name, state_text};
use crate::ir::Test;
use crate::verdict::{CheckResult, ExecutionView};

/// Names of the base relations relating `a` to `b` in an execution.
fn edge_names(ex: &ExecutionView, a: usize, b: usize) -> Vec<String> {
    let mut names: Vec<String> = ex
        .relations
        .iter()
        .filter(|(_, edges)| edges.contains(&(a, b)))
        .map(|(n, _)| n.clone())
        .collect();
    let (ea, eb) = (&ex.events[a], &ex.events[b]);
    if names.is_empty() && ea.thread.is_some() && ea.thread == eb.thread && a < b {
        names.push("po".into());
    }
    names
}

/// The explanation text for a checked test (empty when there is nothing
/// to explain).
pub fn explain(test: &Test, r: &CheckResult) -> String {
    let mut out = String::new();
    for a in &r.allowed_why {
        let ex = &a.execution;
        out.push_str(&format!(
            "Allowed outcome: {}\n",
            state_text(test, &r.observed, &a.state)
        ));
        for reason in &a.reasons {
            out.push_str(&format!("  {}:\n", reason.name.replace('_', " ")));
            for (x, y, path) in &reason.edges {
                out.push_str(&format!(
                    "    {}: {}\n      -> {}: {}\n",
                    event_name(*x),
                    event_label(test, &ex.events[*x]),
                    event_name(*y),
                    event_label(test, &ex.events[*y])
                ));
                if path.len() >= 2 {
                    out.push_str("      path:");
                    for (k, &e) in path.iter().enumerate() {
                        if k > 0 {
                            let rel = edge_names(ex, path[k - 1], e);
                            let arrow = if rel.is_empty() {
                                "sync".to_string()
                            } else {
                                rel.join("|")
                            };
                            out.push_str(&format!(" --{arrow}-->"));
                        }
                        out.push_str(&format!(" {}", event_name(e)));
                    }
                    out.push('\n');
                    for &e in &path[1..path.len() - 1] {
                        out.push_str(&format!(
                            "        {}: {}\n",
                            event_name(e),
                            event_label(test, &ex.events[e])
                        ));
                    }
                }
            }
        }
    }
    for f in &r.forbidden {
        out.push_str(&format!(
            "Forbidden outcome: {}\n  violates {} ({})\n",
            state_text(test, &r.observed, &f.state),
            f.failure.check,
            f.failure.kind
        ));
        let ex = &f.execution;
        if !f.failure.path.is_empty() {
            out.push_str("  cycle:\n");
            for (a, b, rel) in &f.failure.path {
                out.push_str(&format!(
                    "    {}: {}\n      --{rel}--> {}\n",
                    event_name(*a),
                    event_label(test, &ex.events[*a]),
                    event_name(*b)
                ));
            }
            continue;
        }
        let w = &f.failure.witness;
        if w.is_empty() {
            continue;
        }
        out.push_str("  cycle:\n");
        for (k, &e) in w.iter().enumerate() {
            let next = w[(k + 1) % w.len()];
            let rel = edge_names(ex, e, next);
            let arrow = if rel.is_empty() {
                "(model-derived order)".to_string()
            } else {
                rel.join("|")
            };
            out.push_str(&format!(
                "    {}: {}\n      --{}--> {}\n",
                event_name(e),
                event_label(test, &ex.events[e]),
                arrow,
                event_name(next)
            ));
        }
    }
    out
}
