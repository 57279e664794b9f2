//! The JSON API: `POST /api/run`, `POST /api/step`, `GET /api/models`,
//! `GET /api/examples`.
//!
//! Every error is a JSON object with an `"error"` string; parse errors add
//! `file`, `line`, `col` (and `expected` when known), limits add `limit`.
//! Error strings are clipped ([`clip_error`]): an error never echoes more
//! than a few short lines of the input. POST bodies must say
//! `Content-Type: application/json` (415 otherwise: a page elsewhere cannot
//! send one without the browser asking first) and arrive within the read
//! timeout (408).
//!
//! Admission (docs/limits.md): a check runs first in the fast lane under
//! [`ServeLimits::grace`](super::ServeLimits::grace); cut off there, it runs
//! again in the long lane ([`ServeLimits::workers`](super::ServeLimits::workers)
//! permits) with the rest of the time limit, or gets 503 at once when
//! [`ServeLimits::long_queue`](super::ServeLimits::long_queue) checks already
//! wait for one. The engine stops at each lane's deadline itself, so a
//! cut-off check frees its worker.

use super::AppState;
use super::check::{RunRequest, run_check};
use super::step::{StepRequest, run_step};
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use http_body_util::BodyExt;
use serde_json::{Value as Json, json};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The API routes.
pub fn routes(state: Arc<AppState>) -> Router {
    Router::new()
        .route("/api/run", post(run))
        .route("/api/step", post(step))
        .route("/api/models", get(models))
        .route("/api/examples", get(examples))
        .with_state(state)
}

/// Headers every response gets (the page's assets set their own policy):
/// no sniffing, no framing, no caching of API answers, no referrer.
pub async fn security_headers(mut r: Response) -> Response {
    let h = r.headers_mut();
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    if !h.contains_key(header::CONTENT_SECURITY_POLICY) {
        h.insert(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static("default-src 'none'; frame-ancestors 'none'"),
        );
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    r
}

/// Longest error string answered, in characters.
pub const MAX_ERROR_CHARS: usize = 2_000;
/// Lines of an error string answered (a rendered diagnostic: message,
/// source line, caret, expected).
pub const MAX_ERROR_LINES: usize = 8;
/// Characters of one line of an error string answered.
pub const MAX_ERROR_LINE_CHARS: usize = 240;

/// Clips every string of an error body: at most [`MAX_ERROR_LINES`] lines
/// of [`MAX_ERROR_LINE_CHARS`] characters, [`MAX_ERROR_CHARS`] in all.
pub fn clip_error(v: &mut Json) {
    match v {
        Json::String(s)
            if s.len() > MAX_ERROR_LINE_CHARS || s.lines().count() > MAX_ERROR_LINES =>
        {
            *s = clip_text(s);
        }
        Json::Array(a) => a.iter_mut().for_each(clip_error),
        Json::Object(o) => o.values_mut().for_each(clip_error),
        _ => {}
    }
}

fn clip_text(s: &str) -> String {
    let mut out = String::new();
    for (i, line) in s.lines().enumerate() {
        if i == MAX_ERROR_LINES {
            out.push_str("...\n");
            break;
        }
        let mut chars = line.char_indices();
        match chars.nth(MAX_ERROR_LINE_CHARS) {
            Some((cut, _)) => {
                out.push_str(&line[..cut]);
                out.push_str("...");
            }
            None => out.push_str(line),
        }
        out.push('\n');
    }
    if !s.ends_with('\n') {
        out.pop();
    }
    if let Some((cut, _)) = out.char_indices().nth(MAX_ERROR_CHARS) {
        out.truncate(cut);
        out.push_str("...");
    }
    out
}

/// A JSON response with a status. Error bodies are clipped
/// ([`clip_error`]); a success body over `max_bytes` becomes a 422 naming
/// the limit.
fn respond(status: StatusCode, mut body: Json, max_bytes: usize) -> Response {
    if status.as_u16() >= 400 {
        clip_error(&mut body);
    }
    let bytes = serde_json::to_vec(&body).unwrap_or_default();
    if bytes.len() > max_bytes {
        return respond(
            StatusCode::UNPROCESSABLE_ENTITY,
            json!({
                "error": format!(
                    "limit exceeded: the answer would be {} bytes, over the limit of {max_bytes} \
                     bytes (ask without graphs, or run it with litmix run)",
                    bytes.len()
                ),
                "limit": "response",
            }),
            max_bytes,
        );
    }
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        Bytes::from(bytes),
    )
        .into_response()
}

/// A JSON response with a status (error bodies clipped).
pub fn json_response(status: StatusCode, body: Json) -> Response {
    respond(status, body, usize::MAX)
}

/// `{"error": message}` with a status.
pub fn error(status: StatusCode, message: impl Into<String>) -> Response {
    json_response(status, json!({ "error": message.into() }))
}

/// An error after which the connection is closed (the rest of the body,
/// if any, is not read).
fn closing(mut r: Response) -> Response {
    r.headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    r
}

async fn run(State(st): State<Arc<AppState>>, req: Request) -> Response {
    on_worker::<RunRequest>(
        st,
        req,
        "a run request",
        r#"{"source": "<litmus text>", "model": "ptx6", "why": true}"#,
        run_check,
        true,
    )
    .await
}

async fn step(State(st): State<Arc<AppState>>, req: Request) -> Response {
    // A replay is bounded by its picks: it stays in the fast lane.
    on_worker::<StepRequest>(
        st,
        req,
        "a step request",
        r#"{"source": "<litmus text>", "model": "lostpop", "picks": [0, 2]}"#,
        |st, req, _| run_step(st, req),
        false,
    )
    .await
}

/// What a request runs on a worker: the state, the request, the engine's
/// deadline from now.
type Job<R> = fn(&Arc<AppState>, &R, Duration) -> (StatusCode, Json);

/// Whether a `Content-Type` value is JSON (`application/json`, any
/// parameters).
fn is_json(v: Option<&HeaderValue>) -> bool {
    v.and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|m| m.trim().eq_ignore_ascii_case("application/json"))
}

/// Reads a JSON request's body: the content type, the body limit, the read
/// timeout.
async fn read_body(st: &AppState, req: Request) -> Result<Bytes, Response> {
    let limit = st.limits.body_bytes;
    // These two leave the unread body to hyper, as axum's own limit did.
    let too_large = || {
        json_response(
            StatusCode::PAYLOAD_TOO_LARGE,
            json!({
                "error": format!("limit exceeded: the request body is over {limit} bytes"),
                "limit": "body",
            }),
        )
    };
    if !is_json(req.headers().get(header::CONTENT_TYPE)) {
        return Err(json_response(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            json!({
                "error": "the request body must be sent with Content-Type: application/json",
            }),
        ));
    }
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return Err(too_large());
    }
    let body = http_body_util::Limited::new(req.into_body(), limit);
    match tokio::time::timeout(st.limits.read_timeout, body.collect()).await {
        Ok(Ok(b)) => Ok(b.to_bytes()),
        Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => Err(too_large()),
        Ok(Err(e)) => Err(closing(error(
            StatusCode::BAD_REQUEST,
            format!("cannot read the request body: {e}"),
        ))),
        Err(_) => Err(closing(json_response(
            StatusCode::REQUEST_TIMEOUT,
            json!({
                "error": format!(
                    "the request body did not arrive within {} s",
                    st.limits.read_timeout.as_secs_f64()
                ),
                "limit": "read",
            }),
        ))),
    }
}

/// Reads a JSON request `R`, then runs `job` on a blocking worker: first in
/// the fast lane under the grace time, then (with `long`, when the engine
/// stopped it at that deadline) in the long lane with the rest of the time
/// limit.
async fn on_worker<R: serde::de::DeserializeOwned + Send + Sync + 'static>(
    st: Arc<AppState>,
    req: Request,
    what: &str,
    example: &str,
    job: Job<R>,
    long: bool,
) -> Response {
    let start = Instant::now();
    let body = match read_body(&st, req).await {
        Ok(b) => b,
        Err(r) => return r,
    };
    let req: Arc<R> = match serde_json::from_slice(&body) {
        Ok(r) => Arc::new(r),
        Err(e) => {
            return error(
                StatusCode::BAD_REQUEST,
                format!("the request body is not {what}: {e} (expected JSON like {example})"),
            );
        }
    };
    drop(body);
    let time = st.limits.time;
    let deadline = start + time;
    let grace = if long {
        st.limits.grace.min(time / 4)
    } else {
        time
    };
    let max = st.limits.max_response_bytes;
    let fast = st.fast.clone();
    let (status, body) = match lane(&st, &fast, &req, job, grace, deadline).await {
        Ok(answer) => answer,
        Err(r) => return r,
    };
    let cut_off = status == StatusCode::UNPROCESSABLE_ENTITY && body["limit"] == "time";
    if !(long && cut_off && Instant::now() < deadline) {
        return respond(status, body, max);
    }
    // The long lane: at most `long_queue` checks wait for it.
    let waiting = st.long_waiting.fetch_add(1, Ordering::SeqCst);
    let _waiting = Waiting(&st);
    if waiting >= st.limits.long_queue {
        return busy(&st, "the long checks' queue is full");
    }
    let workers = st.workers.clone();
    match lane(&st, &workers, &req, job, time, deadline).await {
        Ok((status, body)) => respond(status, body, max),
        Err(r) => r,
    }
}

/// Counts a request waiting for, or running in, the long lane.
struct Waiting<'a>(&'a AppState);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.long_waiting.fetch_sub(1, Ordering::SeqCst);
    }
}

/// 503: no worker for this request now.
fn busy(st: &AppState, why: &str) -> Response {
    json_response(
        StatusCode::SERVICE_UNAVAILABLE,
        json!({
            "error": format!(
                "server busy: {why} (time limit {} s; retry later, or run it with litmix run)",
                st.limits.time.as_secs_f64()
            ),
            "limit": "time",
        }),
    )
}

/// Runs `job` on a worker of `pool` once one is free (before `deadline`),
/// with the engine's deadline `time` from then, clipped to `deadline`.
async fn lane<R: Send + Sync + 'static>(
    st: &Arc<AppState>,
    pool: &Arc<Semaphore>,
    req: &Arc<R>,
    job: Job<R>,
    time: Duration,
    deadline: Instant,
) -> Result<(StatusCode, Json), Response> {
    let left = deadline.saturating_duration_since(Instant::now());
    let permit: OwnedSemaphorePermit =
        match tokio::time::timeout(left, pool.clone().acquire_owned()).await {
            Ok(Ok(p)) => p,
            Ok(Err(_)) => {
                return Err(error(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "the server is stopping",
                ));
            }
            Err(_) => return Err(busy(st, "no worker became free within the time limit")),
        };
    let left = deadline.saturating_duration_since(Instant::now());
    let engine_time = time.min(left);
    let (worker_state, req) = (st.clone(), req.clone());
    let job = tokio::task::spawn_blocking(move || {
        // The permit is held until the check ends, even if the client has
        // stopped waiting: a lane never runs more checks than it has.
        let _permit = permit;
        let answer = job(&worker_state, &req, engine_time);
        if answer.0 != StatusCode::OK || engine_time >= Duration::from_secs(1) {
            // A cut-off or long check may have grown the heap: give it back.
            crate::budget::release_memory();
        }
        answer
    });
    // The engine stops at its deadline; past that (and a margin for it to
    // notice), the request is answered anyway.
    match tokio::time::timeout(left + Duration::from_millis(200), job).await {
        Ok(Ok(answer)) => Ok(answer),
        Ok(Err(_)) => Err(error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal error: the check stopped unexpectedly",
        )),
        Err(_) => Err(json_response(
            StatusCode::UNPROCESSABLE_ENTITY,
            json!({
                "error": format!(
                    "limit exceeded: the check ran over the time limit of {} s",
                    st.limits.time.as_secs_f64()
                ),
                "limit": "time",
            }),
        )),
    }
}

async fn models() -> Response {
    let models: Vec<Json> = crate::models::BUILTINS
        .iter()
        .map(|b| (b.name, b.description))
        .chain(
            crate::driver::DENOTATIONAL
                .iter()
                .map(|m| (m.name, m.description)),
        )
        .map(|(name, description)| json!({"name": name, "description": description}))
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
