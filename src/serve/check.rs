//! One playground check: parse the litmus text, pick the model, run the
//! driver, build the response object. Runs on a blocking worker.

use super::AppState;
use crate::cat::Model;
use crate::diag::Diagnostic;
use crate::exec::{CheckError, CheckOptions, ExecutionView};
use crate::ir::Test;
use crate::report;
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
/// limit, see [`super::api`]).
// The struct update keeps this compiling when the engine adds options.
#[allow(clippy::needless_update)]
pub fn options(st: &AppState, req: &RunRequest, time: Duration) -> CheckOptions {
    let l = &st.limits;
    CheckOptions {
        unroll: l.unroll,
        max_candidates: l.max_candidates,
        max_events: l.max_events,
        max_paths: l.max_paths,
        why: req.why,
        keep_witnesses: if req.graphs { GRAPH_WITNESSES } else { 0 },
        max_states: l.max_states,
        // The engine stops at this deadline itself, so a cut-off check
        // frees its worker instead of running on to its candidate budget.
        timeout: Some(time),
        ..CheckOptions::default()
    }
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
    let spec = req
        .model
        .as_deref()
        .unwrap_or_else(|| crate::models::default_for_arch(&test.arch));
    let checked = if req.cat.is_none() && crate::op::is_operational(spec) {
        // An operational model: the same judge as `run --model`.
        crate::op::judge::check(&test, spec, &opts)
    } else {
        let (model, name) = match load_model(st, req, &test) {
            Ok(m) => m,
            Err(body) => return (StatusCode::BAD_REQUEST, body),
        };
        crate::driver::check_parsed(&test, &model, name, &opts)
    };
    match checked {
        Ok(result) => {
            let mut body = report::json::result(&file, &test, &result);
            if req.graphs {
                body["executions"] = executions(&test, &result);
                body["states_satisfy"] = result
                    .states
                    .keys()
                    .map(|s| crate::exec::outcome::satisfies(&test, s))
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

/// The model a request asks for: its `cat` text, a built-in name, or the
/// default for the test's architecture. Never a path on the server.
fn load_model(st: &AppState, req: &RunRequest, test: &Test) -> Result<(Arc<Model>, String), Json> {
    if let Some(cat) = &req.cat {
        if req.model.is_some() {
            return Err(json!({
                "error": "the request names both a built-in model and a cat text (expected one of them)"
            }));
        }
        let model = Model::parse(CAT_FILE, cat, &builtin_includes)
            .map_err(|d| diagnostic_json(CAT_FILE, &d))?;
        return Ok((Arc::new(model), CAT_FILE.to_string()));
    }
    let spec = req
        .model
        .as_deref()
        .unwrap_or_else(|| crate::models::default_for_arch(&test.arch));
    let Some(b) = crate::models::builtin(spec) else {
        let names: Vec<&str> = crate::models::BUILTINS
            .iter()
            .map(|b| b.name)
            .chain(crate::models::ALIASES.iter().map(|a| a.0))
            .chain(crate::op::judge::operational_models().map(|m| m.0))
            .collect();
        return Err(json!({
            "error": format!(
                "no built-in model named '{spec}' (expected one of {}, or a cat text in \"cat\")",
                names.join(", ")
            )
        }));
    };
    let model = st
        .models
        .get(b.name)
        .map_err(|message| json!({ "error": message }))?;
    Ok((model, b.name.to_string()))
}

/// Resolves a request's `include "x.cat"` against the built-in files only:
/// a request never reads the server's disk.
fn builtin_includes(name: &str) -> Option<(String, String)> {
    let stem = name.strip_suffix(".cat").unwrap_or(name);
    if let Some(b) = crate::models::builtin(stem) {
        return Some((format!("<builtin {}.cat>", b.name), b.source.to_string()));
    }
    crate::models::INCLUDES
        .iter()
        .find(|(n, _)| *n == stem)
        .map(|(n, src)| (format!("<builtin {n}.cat>"), src.to_string()))
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

/// The executions behind the result, for the page's graphs: witnesses,
/// forbidden executions with the violated axiom's cycle, and allowed
/// executions the model explains with its `why_` bindings.
fn executions(test: &Test, r: &crate::exec::CheckResult) -> Json {
    let mut out = Vec::new();
    for (i, w) in r.witnesses.iter().enumerate() {
        let title = format!("{} ({}) witness {}", r.test, r.model, i + 1);
        out.push(execution(
            test,
            "witness",
            &title,
            &report::state_text(test, &r.observed, &w.state),
            w,
            &[],
        ));
    }
    for f in &r.forbidden {
        let title = format!("{} ({}) forbidden by {}", r.test, r.model, f.failure.check);
        out.push(execution(
            test,
            "forbidden",
            &title,
            &report::state_text(test, &r.observed, &f.state),
            &f.execution,
            &f.failure.path,
        ));
    }
    for a in &r.allowed_why {
        let names: Vec<&str> = a.reasons.iter().map(|w| w.name.as_str()).collect();
        let title = format!("{} ({}) allowed: {}", r.test, r.model, names.join(", "));
        let steps: Vec<(usize, usize, String)> = a
            .reasons
            .iter()
            .flat_map(|w| w.edges.iter().map(|(x, y, _)| (*x, *y, w.name.clone())))
            .collect();
        out.push(execution(
            test,
            "allowed-why",
            &title,
            &report::state_text(test, &r.observed, &a.state),
            &a.execution,
            &steps,
        ));
    }
    Json::Array(out)
}

fn execution(
    test: &Test,
    kind: &str,
    title: &str,
    state: &str,
    ex: &ExecutionView,
    cycle: &[(usize, usize, String)],
) -> Json {
    let events: Vec<Json> = ex
        .events
        .iter()
        .enumerate()
        .map(|(i, e)| {
            json!({
                "name": report::event_name(i),
                "thread": e.thread,
                "kind": e.kind.to_string(),
                "loc": e.loc,
                "value": e.value.map(|v| crate::exec::value_text(test, v)),
                "instr": e.instr,
                "label": report::event_label(test, e),
            })
        })
        .collect();
    let edges: Vec<Json> = ex
        .relations
        .iter()
        .flat_map(|(rel, es)| {
            es.iter()
                .map(move |(a, b)| json!({"rel": rel, "from": a, "to": b}))
        })
        .collect();
    let steps: Vec<Json> = cycle
        .iter()
        .map(|(a, b, rel)| json!({"rel": rel, "from": a, "to": b}))
        .collect();
    json!({
        "kind": kind,
        "title": title,
        "state": state,
        "events": events,
        "edges": edges,
        "cycle": steps,
        "dot": report::dot::execution_with_cycle(test, title, ex, cycle),
    })
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
