//! One playground check: parse the litmus text, pick the model, run the
//! driver, build the response object. Runs on a blocking worker.

use super::AppState;
use crate::diag::Diagnostic;
use crate::driver::Judge;
use crate::driver::artefacts::{Artefact, ArtefactKind};
use crate::ir::Test;
use crate::report;
use crate::verdict::{CheckError, CheckOptions, CheckResult};
use axum::http::StatusCode;
use serde::Deserialize;
use serde_json::{Value as Json, json};
use std::sync::Arc;
use std::time::Duration;

/// The body of `POST /api/run`.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct RunRequest {
    /// The litmus test's text.
    pub source: String,
    /// A built-in model name or alias; default: by the test's architecture.
    #[serde(default)]
    pub model: Option<String>,
    /// A `.cat` model's text (its `include`s may name built-in files only).
    #[serde(default)]
    pub cat: Option<String>,
    /// Explain forbidden outcomes (as `--why`).
    #[serde(default)]
    pub why: bool,
    /// Add `executions` (witness and forbidden executions as event and edge
    /// lists with their DOT text), `states_satisfy` (per state of `states`,
    /// whether it satisfies the condition's proposition) and, with `why`,
    /// `why_text` (the text `run --why` prints).
    #[serde(default)]
    pub graphs: bool,
    /// The name the test is reported under (`file` in the result and in
    /// error positions); default `input.litmus`.
    #[serde(default)]
    pub file: Option<String>,
}

/// The file name used when the request names none.
pub const DEFAULT_FILE: &str = "input.litmus";

/// The file name a request's `cat` text is reported under.
pub const CAT_FILE: &str = "model.cat";

/// Witness executions kept for graphs (as `--dot`).
const GRAPH_WITNESSES: usize = 4;

/// The engine options for the server's limits, with `time` as the engine's
/// own deadline (`CheckOptions::timeout`: the lane's share of the time
/// limit, see [`super::api`]), through the driver's one conversion.
pub fn options(st: &AppState, req: &RunRequest, time: Duration) -> CheckOptions {
    let l = &st.limits;
    let mut opts = crate::driver::Limits {
        unroll: l.unroll,
        max_candidates: l.max_candidates,
        max_events: l.max_events,
        max_paths: l.max_paths,
        max_states: l.max_states,
        // The engine stops at this deadline itself, so a cut-off check
        // frees its worker instead of running on to its candidate budget.
        timeout: Some(time),
        prune: true,
    }
    .options();
    opts.why = req.why;
    opts.keep_witnesses = if req.graphs { GRAPH_WITNESSES } else { 0 };
    opts
}

/// Runs one request within `time`: the status and the JSON body to answer
/// with.
pub fn run_check(st: &Arc<AppState>, req: &RunRequest, time: Duration) -> (StatusCode, Json) {
    let file: String = req
        .file
        .as_deref()
        .filter(|f| !f.trim().is_empty())
        .unwrap_or(DEFAULT_FILE)
        .chars()
        .filter(|c| !c.is_control())
        .take(200)
        .collect();
    let test = match crate::litmus::parse_str(&file, &req.source) {
        Ok(t) => t,
        Err(d) => return (StatusCode::BAD_REQUEST, diagnostic_json(&file, &d)),
    };
    let opts = options(st, req, time);
    let judge = match resolve_judge(st, req, &test) {
        Ok(j) => j,
        Err(body) => return (StatusCode::BAD_REQUEST, body),
    };
    let checked = judge.check(&test, &opts);
    match checked {
        Ok(result) => {
            let mut body = report::json::result(&file, &test, &result);
            if req.graphs {
                body["executions"] = executions(&test, &result);
                body["states_satisfy"] = result
                    .states
                    .keys()
                    .map(|s| crate::ir::outcome::satisfies(&test, s))
                    .collect();
                if req.why {
                    body["why_text"] = json!(report::why::explain(&test, &result));
                }
            }
            (StatusCode::OK, body)
        }
        Err(CheckError::Diagnostic(d)) => (StatusCode::BAD_REQUEST, diagnostic_json(&file, &d)),
        // The engine's deadline (reached, or foreseen by its fail-fast
        // estimate against `--timeout`) is the server's time limit.
        Err(CheckError::Timeout { .. }) => {
            (StatusCode::UNPROCESSABLE_ENTITY, time_limit_json(&file, st))
        }
        Err(CheckError::Limit(m)) if m.contains("over --timeout") => {
            let mut body = time_limit_json(&file, st);
            body["detail"] = json!(m);
            (StatusCode::UNPROCESSABLE_ENTITY, body)
        }
        // A size limit.
        Err(e) => {
            let mut body = report::json::error(&file, &format!("{file}: {e}"));
            body["limit"] = json!("search");
            (StatusCode::UNPROCESSABLE_ENTITY, body)
        }
    }
}

/// The judge a request asks for: its `cat` text, a built-in name (a cat
/// model or a machine), or the default for the test's architecture. Never
/// a path on the server.
fn resolve_judge(st: &AppState, req: &RunRequest, test: &Test) -> Result<Judge, Json> {
    if let Some(cat) = &req.cat {
        if req.model.is_some() {
            return Err(json!({
                "error": "the request names both a built-in model and a cat text (expected one of them)"
            }));
        }
        return crate::driver::registry::cat_text(CAT_FILE, cat)
            .map_err(|d| diagnostic_json(CAT_FILE, &d));
    }
    let spec = req
        .model
        .as_deref()
        .unwrap_or_else(|| crate::models::default_for_arch(&test.arch));
    if !crate::driver::registry::is_builtin_name(spec) {
        return Err(json!({
            "error": format!(
                "no built-in model named '{spec}' (expected one of {}, or a cat text in \"cat\")",
                crate::driver::model_names().join(", ")
            )
        }));
    }
    st.models
        .judge(spec)
        .map_err(|message| json!({ "error": message }))
}

/// `{"error": rendered, "file", "line", "col", "message", "expected"}`.
pub fn diagnostic_json(file: &str, d: &Diagnostic) -> Json {
    let mut body = report::json::error(file, &d.render());
    body["file"] = json!(d.file);
    body["line"] = json!(d.pos.line);
    body["col"] = json!(d.pos.col);
    body["message"] = json!(d.message);
    if let Some(e) = &d.expected {
        body["expected"] = json!(e);
    }
    body
}

/// The artefacts behind the result, for the page's graphs: the driver's
/// list (witnesses, forbidden executions with the violated axiom's cycle,
/// allowed executions the model explains, operational traces), the same
/// that `run --dot` writes.
fn executions(test: &Test, r: &CheckResult) -> Json {
    crate::driver::artefacts::artefacts(test, r)
        .iter()
        .map(|a| execution(test, a))
        .collect()
}

fn execution(test: &Test, a: &Artefact<'_>) -> Json {
    let events: Vec<Json> = a
        .execution
        .map(|ex| {
            ex.events
                .iter()
                .enumerate()
                .map(|(i, e)| {
                    json!({
                        "name": report::event_name(i),
                        "thread": e.thread,
                        "kind": e.kind.to_string(),
                        "loc": e.loc,
                        "value": e.value.map(|v| crate::ir::outcome::value_text(test, v)),
                        "instr": e.instr,
                        "label": report::event_label(test, e),
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    let edges: Vec<Json> = a
        .execution
        .map(|ex| {
            ex.relations
                .iter()
                .flat_map(|(rel, es)| {
                    es.iter()
                        .map(move |(x, y)| json!({"rel": rel, "from": x, "to": y}))
                })
                .collect()
        })
        .unwrap_or_default();
    let steps: Vec<Json> = a
        .cycle
        .iter()
        .map(|(x, y, rel)| json!({"rel": rel, "from": x, "to": y}))
        .collect();
    let mut body = json!({
        "kind": a.kind.word(),
        "title": a.title,
        "state": a.state,
        "events": events,
        "edges": edges,
        "cycle": steps,
        "dot": a.dot,
    });
    if a.kind == ArtefactKind::Trace {
        body["steps"] = json!(a.steps);
    }
    body
}

/// The error for a check cut off by the server's time limit (the same
/// words whether the engine or the request timer noticed it first).
pub fn time_limit_json(file: &str, st: &AppState) -> Json {
    let mut body = report::json::error(
        file,
        &format!(
            "limit exceeded: the check ran over the time limit of {} s",
            st.limits.time.as_secs_f64()
        ),
    );
    body["limit"] = json!("time");
    body
}
