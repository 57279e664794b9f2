//! The step view of operational models (`POST /api/step`): the page sends
//! the test, the model and the transitions picked so far; the server
//! replays them over the machine with [`crate::driver::replay_view`], the
//! call `litmix step --replay` makes, and answers the state view (the
//! [`crate::op::StateView`] JSON, enabled transitions numbered for the
//! next pick) and the text `litmix step` prints. Stateless: undo is the
//! same request with one pick fewer, so a link can carry the picks.

use super::AppState;
use super::check::{DEFAULT_FILE, diagnostic_json};
use crate::driver::{OpenError, StepError, replay_view};
use axum::http::StatusCode;
use serde::Deserialize;
use serde_json::{Value as Json, json};
use std::sync::Arc;

/// The body of `POST /api/step`.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct StepRequest {
    /// The litmus test's text.
    pub source: String,
    /// An operational model (`lostpop`, `rsp-cache`, `rsp-cache-nolock`);
    /// default: by the test's architecture, when that is operational.
    #[serde(default)]
    pub model: Option<String>,
    /// Transition numbers to take in turn from the initial state, each as
    /// the state before it numbers its enabled transitions.
    #[serde(default)]
    pub picks: Vec<usize>,
    /// The name the test is reported under; default `input.litmus`.
    #[serde(default)]
    pub file: Option<String>,
}

/// Replays one request: the status and the JSON body to answer with.
pub fn run_step(st: &Arc<AppState>, req: &StepRequest) -> (StatusCode, Json) {
    let file: String = req
        .file
        .as_deref()
        .filter(|f| !f.trim().is_empty())
        .unwrap_or(DEFAULT_FILE)
        .chars()
        .filter(|c| !c.is_control())
        .take(200)
        .collect();
    let max = st.limits.max_picks;
    if req.picks.len() > max {
        return (
            StatusCode::UNPROCESSABLE_ENTITY,
            json!({
                "error": format!(
                    "limit exceeded: {} picks, at most {max} are replayed",
                    req.picks.len()
                ),
                "limit": "picks",
            }),
        );
    }
    let test = match crate::litmus::parse_str(&file, &req.source) {
        Ok(t) => t,
        Err(d) => return (StatusCode::BAD_REQUEST, diagnostic_json(&file, &d)),
    };
    let model = req
        .model
        .as_deref()
        .unwrap_or_else(|| crate::models::default_for_arch(&test.arch));
    match replay_view(&test, model, st.limits.unroll, &req.picks) {
        Ok(r) => {
            let mut body =
                serde_json::to_value(&r).unwrap_or_else(|e| json!({"error": e.to_string()}));
            body["file"] = json!(file);
            body["test"] = json!(test.name);
            (StatusCode::OK, body)
        }
        Err(StepError::Open(OpenError::Diagnostic(d))) => {
            (StatusCode::BAD_REQUEST, diagnostic_json(&file, &d))
        }
        Err(StepError::Open(e)) => (StatusCode::BAD_REQUEST, json!({ "error": e.to_string() })),
        // A pick that is not enabled where it is taken (a stale link, an
        // edited test): the position, so the page can keep the good prefix.
        Err(StepError::Pick(e)) => (
            StatusCode::BAD_REQUEST,
            json!({
                "error": e.to_string(),
                "pick": e.at,
                "valid_picks": &req.picks[..e.at.min(req.picks.len())],
            }),
        ),
    }
}
