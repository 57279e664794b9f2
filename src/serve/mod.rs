//! The web playground (`litmix serve`): an HTTP layer over the same driver
//! the command line uses, and the page's assets embedded in the binary.
//!
//! - [`api`]: `POST /api/run`, `GET /api/models`, `GET /api/examples`, the
//!   request limits and the JSON errors.
//! - [`check`]: one check, run on a blocking worker (parse, model, driver,
//!   the response object).
//! - [`assets`]: the page (HTML, JS with the editor and the SVG graph
//!   renderer, CSS), served with a policy that forbids any other origin.
//! - [`examples`]: the bundled examples, the project's own verdict-tested
//!   litmus files.
//! - [`client`]: a small blocking HTTP/1.1 client for the tests and the
//!   benchmark ([`bench`]).
//!
//! Checks never run on the async threads: each takes a permit of a worker
//! pool ([`ServeLimits::workers`]) and runs in `spawn_blocking`; the request
//! waits at most [`ServeLimits::time`] for it, and the check itself is
//! bounded by the engine's candidate, path and event limits, so a worker
//! whose client gave up still finishes on its own.

pub mod api;
pub mod assets;
pub mod bench;
pub mod check;
pub mod client;
pub mod examples;

use crate::driver::ModelCache;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Semaphore;

/// Limits on what one request may cost.
#[derive(Clone, Debug)]
pub struct ServeLimits {
    /// Largest request body accepted; larger ones get 413.
    pub body_bytes: usize,
    /// Wall-clock bound for one check, waiting for a worker included.
    pub time: Duration,
    /// Candidate executions one check may judge.
    pub max_candidates: u64,
    /// Events on one thread path.
    pub max_events: usize,
    /// Paths per thread.
    pub max_paths: usize,
    /// Times a backward jump may be taken on one path.
    pub unroll: usize,
    /// Checks running at once (blocking worker threads).
    pub workers: usize,
}

impl Default for ServeLimits {
    fn default() -> Self {
        ServeLimits {
            body_bytes: 1 << 20,
            time: Duration::from_secs(10),
            // A few seconds of search for the costliest shapes measured
            // (docs/decisions.md); the time bound answers anyway.
            max_candidates: 100_000,
            max_events: 128,
            max_paths: 10_000,
            unroll: 2,
            workers: std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(2),
        }
    }
}

/// What the server needs to answer requests.
pub struct AppState {
    pub limits: ServeLimits,
    /// Built-in models, parsed once.
    pub models: ModelCache,
    /// One permit per check allowed to run at once.
    pub workers: Arc<Semaphore>,
}

impl AppState {
    /// A state with these limits.
    pub fn new(limits: ServeLimits) -> Arc<AppState> {
        Arc::new(AppState {
            workers: Arc::new(Semaphore::new(limits.workers.max(1))),
            limits,
            models: ModelCache::default(),
        })
    }
}

/// The whole application: API and page.
pub fn router(state: Arc<AppState>) -> axum::Router {
    api::routes(state.clone()).merge(assets::routes())
}

/// A server running on its own threads (tests, benchmark); stopped when
/// dropped.
pub struct Running {
    addr: SocketAddr,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Running {
    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The base URL, `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Builds the runtime the server runs on: `threads` async worker threads.
fn runtime(threads: usize) -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads.max(1))
        .thread_name("litmix-serve")
        .enable_all()
        .build()
}

/// Binds `addr` (port 0: any free port) and serves on a background thread.
pub fn start(addr: SocketAddr, limits: ServeLimits) -> std::io::Result<Running> {
    let listener = std::net::TcpListener::bind(addr)?;
    listener.set_nonblocking(true)?;
    let addr = listener.local_addr()?;
    let rt = runtime(2)?;
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let state = AppState::new(limits);
    let thread = std::thread::Builder::new()
        .name("litmix-serve-main".into())
        .spawn(move || {
            rt.block_on(async move {
                let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
                    return;
                };
                let _ = axum::serve(listener, router(state))
                    .with_graceful_shutdown(async {
                        let _ = rx.await;
                    })
                    .await;
            });
            // Checks still running finish on their own (they are bounded);
            // do not wait for them here.
            rt.shutdown_timeout(Duration::from_millis(100));
        })?;
    Ok(Running {
        addr,
        shutdown: Some(tx),
        thread: Some(thread),
    })
}

/// Serves on `addr` until the process ends (`litmix serve`); `on_ready` is
/// called with the bound address.
pub fn serve_forever(
    addr: SocketAddr,
    limits: ServeLimits,
    on_ready: impl FnOnce(SocketAddr),
) -> std::io::Result<()> {
    let rt = runtime(2)?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        on_ready(listener.local_addr()?);
        axum::serve(listener, router(AppState::new(limits))).await
    })
}
