//! The page and its scripts, embedded in the binary: nothing is fetched
//! from anywhere else at run time, and the content security policy sent
//! with the page forbids the browser to try.

use axum::Router;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

/// `index.html`: layout of the playground.
pub const INDEX_HTML: &str = include_str!("assets/index.html");
/// `app.js`: API calls, example and model pickers, outcome table, URL fragment.
pub const APP_JS: &str = include_str!("assets/app.js");
/// `editor.js`: the litmus editor with syntax highlighting.
pub const EDITOR_JS: &str = include_str!("assets/editor.js");
/// `graph.js`: the layered SVG renderer of executions.
pub const GRAPH_JS: &str = include_str!("assets/graph.js");
/// `step.js`: the step view of operational models.
pub const STEP_JS: &str = include_str!("assets/step.js");
/// `style.css`.
pub const STYLE_CSS: &str = include_str!("assets/style.css");
/// `favicon.svg`.
pub const FAVICON_SVG: &str = include_str!("assets/favicon.svg");

/// Same origin only: no CDN, no inline script, no outside connection.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; script-src 'self'; \
     style-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; \
     base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

fn asset(content_type: &'static str, body: &'static str) -> Response {
    (
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, content_type),
            (header::CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
        .into_response()
}

/// The page's routes.
pub fn routes() -> Router {
    Router::new()
        .route(
            "/",
            get(|| async { asset("text/html; charset=utf-8", INDEX_HTML) }),
        )
        .route(
            "/app.js",
            get(|| async { asset("text/javascript; charset=utf-8", APP_JS) }),
        )
        .route(
            "/editor.js",
            get(|| async { asset("text/javascript; charset=utf-8", EDITOR_JS) }),
        )
        .route(
            "/graph.js",
            get(|| async { asset("text/javascript; charset=utf-8", GRAPH_JS) }),
        )
        .route(
            "/step.js",
            get(|| async { asset("text/javascript; charset=utf-8", STEP_JS) }),
        )
        .route(
            "/style.css",
            get(|| async { asset("text/css; charset=utf-8", STYLE_CSS) }),
        )
        .route(
            "/favicon.svg",
            get(|| async { asset("image/svg+xml", FAVICON_SVG) }),
        )
        .fallback(|| async {
            super::api::error(StatusCode::NOT_FOUND, "no such page or API route")
        })
}
