//! The JSON API: `POST /api/run`, `POST /api/step`, `GET /api/models`,
//! `GET /api/examples`.
//!
//! Every error is a JSON object with an `"error"` string; parse errors add
//! `file`, `line`, `col` (and `expected` when known), limits add `limit`.

use super::AppState;
use super::check::{RunRequest, run_check};
use super::step::{StepRequest, run_step};
use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value as Json, json};
use std::sync::Arc;
use std::time::Instant;

/// The API routes.
pub fn routes(state: Arc<AppState>) -> Router {
    let body_limit = state.limits.body_bytes;
    Router::new()
        .route("/api/run", post(run))
        .route("/api/step", post(step))
        .route("/api/models", get(models))
        .route("/api/examples", get(examples))
        .layer(DefaultBodyLimit::max(body_limit))
        .with_state(state)
}

/// A JSON response with a status.
pub fn json_response(status: StatusCode, body: Json) -> Response {
    (status, axum::Json(body)).into_response()
}

/// `{"error": message}` with a status.
pub fn error(status: StatusCode, message: impl Into<String>) -> Response {
    json_response(status, json!({ "error": message.into() }))
}

async fn run(State(st): State<Arc<AppState>>, body: Result<Bytes, BytesRejection>) -> Response {
    on_worker::<RunRequest>(
        st,
        body,
        "a run request",
        r#"{"source": "<litmus text>", "model": "ptx6", "why": true}"#,
        run_check,
    )
    .await
}

async fn step(State(st): State<Arc<AppState>>, body: Result<Bytes, BytesRejection>) -> Response {
    on_worker::<StepRequest>(
        st,
        body,
        "a step request",
        r#"{"source": "<litmus text>", "model": "lostpop", "picks": [0, 2]}"#,
        run_step,
    )
    .await
}

/// Reads a JSON request `R` (body limit, shape), then runs `job` on a
/// blocking worker of the pool, all within the time limit.
async fn on_worker<R: serde::de::DeserializeOwned + Send + 'static>(
    st: Arc<AppState>,
    body: Result<Bytes, BytesRejection>,
    what: &str,
    example: &str,
    job: fn(&Arc<AppState>, &R) -> (StatusCode, Json),
) -> Response {
    let start = Instant::now();
    let body = match body {
        Ok(b) => b,
        Err(r) if r.status() == StatusCode::PAYLOAD_TOO_LARGE => {
            return json_response(
                StatusCode::PAYLOAD_TOO_LARGE,
                json!({
                    "error": format!(
                        "limit exceeded: the request body is over {} bytes",
                        st.limits.body_bytes
                    ),
                    "limit": "body",
                }),
            );
        }
        Err(r) => return error(r.status(), format!("cannot read the request body: {r}")),
    };
    let req: R = match serde_json::from_slice(&body) {
        Ok(r) => r,
        Err(e) => {
            return error(
                StatusCode::BAD_REQUEST,
                format!("the request body is not {what}: {e} (expected JSON like {example})"),
            );
        }
    };
    let time = st.limits.time;
    let time_error = || {
        json_response(
            StatusCode::UNPROCESSABLE_ENTITY,
            json!({
                "error": format!(
                    "limit exceeded: the check ran over the time limit of {} s",
                    time.as_secs_f64()
                ),
                "limit": "time",
            }),
        )
    };
    let permit = match tokio::time::timeout(time, st.workers.clone().acquire_owned()).await {
        Ok(Ok(p)) => p,
        Ok(Err(_)) => return error(StatusCode::SERVICE_UNAVAILABLE, "the server is stopping"),
        Err(_) => {
            return json_response(
                StatusCode::SERVICE_UNAVAILABLE,
                json!({
                    "error": format!(
                        "server busy: no worker became free within the time limit of {} s",
                        time.as_secs_f64()
                    ),
                    "limit": "time",
                }),
            );
        }
    };
    let worker_state = st.clone();
    let job = tokio::task::spawn_blocking(move || {
        // The permit is held until the check ends, even if the client has
        // stopped waiting: the pool never runs more checks than it has.
        let _permit = permit;
        job(&worker_state, &req)
    });
    let left = time.saturating_sub(start.elapsed());
    match tokio::time::timeout(left, job).await {
        Ok(Ok((status, body))) => json_response(status, body),
        Ok(Err(_)) => error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal error: the check stopped unexpectedly",
        ),
        Err(_) => time_error(),
    }
}

async fn models() -> Response {
    let models: Vec<Json> = crate::models::BUILTINS
        .iter()
        .map(|b| json!({"name": b.name, "description": b.description}))
        .collect();
    let aliases: Vec<Json> = crate::models::ALIASES
        .iter()
        .map(|(a, t)| json!({"alias": a, "target": t}))
        .collect();
    let defaults: serde_json::Map<String, Json> = crate::litmus::SUPPORTED_ARCHS
        .iter()
        .map(|a| (a.to_string(), json!(crate::models::default_for_arch(a))))
        .collect();
    let operational: Vec<Json> = crate::driver::MACHINES
        .iter()
        .map(|m| json!({"name": m.name, "description": m.description}))
        .collect();
    json_response(
        StatusCode::OK,
        json!({
            "models": models,
            "aliases": aliases,
            "defaults": defaults,
            "operational": operational,
        }),
    )
}

async fn examples() -> Response {
    let list: Vec<Json> = super::examples::EXAMPLES
        .iter()
        .map(|e| {
            json!({
                "name": e.name,
                "group": e.group,
                "model": e.model,
                "source": e.source,
            })
        })
        .collect();
    json_response(StatusCode::OK, json!({ "examples": list }))
}
