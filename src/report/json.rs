//! One JSON object per test per line (`--json`).

use super::state_text;
use crate::ir::Test;
use crate::verdict::CheckResult;
use serde_json::{Value as Json, json};

/// The JSON object for a checked test.
pub fn result(file: &str, test: &Test, r: &CheckResult) -> Json {
    let states: Vec<Json> = r
        .states
        .iter()
        .map(|(s, count)| json!({"state": state_text(test, &r.observed, s), "count": count}))
        .collect();
    let forbidden: Vec<Json> = r
        .forbidden
        .iter()
        .map(|f| {
            json!({
                "state": state_text(test, &r.observed, &f.state),
                "axiom": f.failure.check,
                "cycle": f.failure.witness,
            })
        })
        .collect();
    let allowed_why: Vec<Json> = r
        .allowed_why
        .iter()
        .map(|a| {
            let reasons: Vec<Json> = a
                .reasons
                .iter()
                .map(|w| {
                    let edges: Vec<Json> = w
                        .edges
                        .iter()
                        .map(|(x, y, path)| json!({"from": x, "to": y, "path": path}))
                        .collect();
                    json!({"reason": w.name, "edges": edges})
                })
                .collect();
            json!({"state": state_text(test, &r.observed, &a.state), "reasons": reasons})
        })
        .collect();
    json!({
        "file": file,
        "test": r.test,
        "model": r.model,
        "verdict": if r.validated { "Ok" } else { "No" },
        "condition": super::herd::condition_text(test),
        "states": states,
        "positive": r.positive,
        "negative": r.negative,
        "flags": r.flags.iter().collect::<Vec<_>>(),
        "undefined": !r.flags.is_empty(),
        "candidates": r.candidates,
        "consistent": r.positive + r.negative,
        "partial_candidates": r.partial,
        "pruned": r.pruned,
        "with_orders": r.with_nodes,
        "with_pruned": r.with_pruned,
        "cut_paths": r.cut_paths,
        "cyclic_discarded": r.cyclic,
        "barrier_deadlock": r.barrier_deadlocks > 0,
        "barrier_deadlocks": r.barrier_deadlocks,
        "forbidden": forbidden,
        "allowed_why": allowed_why,
        "time_ms": r.elapsed.as_secs_f64() * 1000.0,
    })
}

/// The JSON object for a file that failed to parse or check.
pub fn error(file: &str, message: &str) -> Json {
    json!({"file": file, "error": message})
}
