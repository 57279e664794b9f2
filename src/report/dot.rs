//! Graphviz rendering of executions (`--dot DIR`).

use super::{event_label, event_name};
use crate::ir::Test;
use crate::verdict::ExecutionView;

/// Colour of each base relation's edges.
fn colour(rel: &str) -> &'static str {
    match rel {
        "po" => "black",
        "rf" => "red",
        "co" => "blue",
        "fr" => "darkorange",
        "rmw" => "purple",
        _ => "gray40",
    }
}

/// A `digraph` of one execution, threads as clusters.
pub fn execution(test: &Test, title: &str, ex: &ExecutionView) -> String {
    execution_with_cycle(test, title, ex, &[])
}

/// Like [`execution`], with the steps of a violated axiom's cycle drawn as
/// bold crimson edges labelled by the relation each step is in.
pub fn execution_with_cycle(
    test: &Test,
    title: &str,
    ex: &ExecutionView,
    cycle: &[(usize, usize, String)],
) -> String {
    let mut out = format!(
        "digraph \"{}\" {{\n  label=\"{}\";\n  node [shape=box, fontname=\"monospace\"];\n",
        esc(title),
        esc(title)
    );
    let threads: std::collections::BTreeSet<Option<usize>> =
        ex.events.iter().map(|e| e.thread).collect();
    for t in threads {
        let name = t.map(|t| format!("P{t}")).unwrap_or_else(|| "init".into());
        out.push_str(&format!(
            "  subgraph \"cluster_{name}\" {{\n    label=\"{name}\";\n"
        ));
        for (i, e) in ex.events.iter().enumerate().filter(|(_, e)| e.thread == t) {
            out.push_str(&format!(
                "    {} [label=\"{}: {}\"];\n",
                event_name(i),
                event_name(i),
                esc(&event_label(test, e))
            ));
        }
        out.push_str("  }\n");
    }
    for (rel, edges) in &ex.relations {
        for (a, b) in edges {
            out.push_str(&format!(
                "  {} -> {} [label=\"{rel}\", color={}, fontcolor={}];\n",
                event_name(*a),
                event_name(*b),
                colour(rel),
                colour(rel)
            ));
        }
    }
    for (a, b, rel) in cycle {
        out.push_str(&format!(
            "  {} -> {} [label=\"{}\", color=crimson, fontcolor=crimson, penwidth=2.5];\n",
            event_name(*a),
            event_name(*b),
            esc(rel)
        ));
    }
    out.push_str("}\n");
    out
}

fn esc(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}
