//! The web playground (`litmix serve`): an HTTP layer over the same driver
//! the command line uses, and the page's assets embedded in the binary.
//!
//! - [`api`]: `POST /api/run`, `POST /api/step`, `GET /api/models`,
//!   `GET /api/examples`, the request limits and the JSON errors.
//! - [`check`]: one check, run on a blocking worker (parse, model, driver
//!   or operational judge, the response object).
//! - [`step`]: the step view of operational models: picks replayed over
//!   the machine by the same call `litmix step` makes.
//! - [`assets`]: the page (HTML, JS with the editor and the SVG graph
//!   renderer, CSS), served with a policy that forbids any other origin.
//! - [`examples`]: the bundled examples, the project's own verdict-tested
//!   litmus files.
//!
//! Checks never run on the async threads: each runs in `spawn_blocking`
//! under the engine's own deadline, in two lanes (docs/limits.md): every
//! check starts in the fast lane ([`ServeLimits::fast_workers`]) with a
//! short deadline ([`ServeLimits::grace`]); one that needs more starts again
//! in the long lane ([`ServeLimits::workers`]) with what is left of
//! [`ServeLimits::time`]. Small checks never queue behind runaways. The
//! connection layer ([`serve_on`]) caps connections and times out slow
//! headers, bodies and idle connections.

pub mod api;
pub mod assets;
pub mod check;
pub mod examples;
pub mod step;

use crate::driver::ModelCache;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Semaphore;

/// Candidate executions one check may judge by default: a few seconds of
/// search for the costliest shapes measured (docs/decisions.md); the time
/// bound answers anyway. A constant, so that the command line's default
/// costs nothing (the rest of [`ServeLimits::default`] asks the system for
/// its cores).
pub const DEFAULT_MAX_CANDIDATES: u64 = 100_000;

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
    /// Machine states one check of an operational model may visit.
    pub max_states: usize,
    /// Picks one `POST /api/step` may replay.
    pub max_picks: usize,
    /// Fast-lane deadline: every check runs first under this (at most a
    /// quarter of `time`); one cut off by it starts again in the long lane.
    pub grace: Duration,
    /// Checks running at once in the fast lane.
    pub fast_workers: usize,
    /// Checks that may wait for a long-lane worker; more get 503 at once.
    pub long_queue: usize,
    /// Time to send a request's headers, and then its body; also how long
    /// an idle kept-alive connection stays open.
    pub read_timeout: Duration,
    /// Longest life of one connection, whatever it does.
    pub connection_lifetime: Duration,
    /// Open connections; more are closed at once.
    pub max_connections: usize,
    /// Resident memory of the server process past which searches stop
    /// with a limit (see [`crate::budget::set_memory_limit`]).
    pub max_memory: Option<u64>,
    /// Largest response body; a larger result gets a 422 naming the limit.
    pub max_response_bytes: usize,
}

impl Default for ServeLimits {
    fn default() -> Self {
        ServeLimits {
            body_bytes: 1 << 20,
            time: Duration::from_secs(10),
            max_candidates: DEFAULT_MAX_CANDIDATES,
            max_events: 128,
            max_paths: 10_000,
            unroll: 2,
            workers: std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(2),
            // LOST-POP visits about 15,000 states a second on one core
            // (issue 9's figures): a few seconds, the time bound answers
            // anyway.
            max_states: 200_000,
            // Machine traces of the tests the page runs are tens of steps.
            max_picks: 1_000,
            // Every example of the page answers in under 100 ms.
            grace: Duration::from_millis(250),
            fast_workers: 8,
            long_queue: 4,
            read_timeout: Duration::from_secs(5),
            connection_lifetime: Duration::from_secs(120),
            max_connections: 256,
            max_memory: Some(2 << 30),
            max_response_bytes: 8 << 20,
        }
    }
}

/// What the server needs to answer requests.
pub struct AppState {
    pub limits: ServeLimits,
    /// Listening on loopback: requests must name a loopback host
    /// ([`loopback_host_only`]).
    pub loopback_only: bool,
    /// Built-in models, parsed once.
    pub models: ModelCache,
    /// One permit per check allowed to run at once in the long lane.
    pub workers: Arc<Semaphore>,
    /// One permit per check allowed to run at once in the fast lane.
    pub fast: Arc<Semaphore>,
    /// Checks waiting for a long-lane permit.
    pub long_waiting: std::sync::atomic::AtomicUsize,
}

impl AppState {
    /// A state with these limits, for a server listening on `addr`.
    pub fn new(limits: ServeLimits, addr: SocketAddr) -> Arc<AppState> {
        Arc::new(AppState {
            workers: Arc::new(Semaphore::new(limits.workers.max(1))),
            fast: Arc::new(Semaphore::new(limits.fast_workers.max(1))),
            long_waiting: Default::default(),
            loopback_only: addr.ip().is_loopback(),
            limits,
            models: ModelCache::default(),
        })
    }
}

/// The whole application: API and page.
pub fn router(state: Arc<AppState>) -> axum::Router {
    let app = api::routes(state.clone())
        .merge(assets::routes())
        .layer(axum::middleware::map_response(api::security_headers));
    if state.loopback_only {
        app.layer(axum::middleware::from_fn(loopback_host_only))
    } else {
        app
    }
}

/// Refuses a request whose `Host` is not a loopback name while the server
/// listens on loopback, so that a page elsewhere cannot reach the
/// playground through DNS rebinding.
async fn loopback_host_only(
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let host = req
        .headers()
        .get(axum::http::header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("")
        .to_string();
    if is_loopback_host(&host) {
        next.run(req).await
    } else {
        api::error(
            axum::http::StatusCode::FORBIDDEN,
            format!(
                "the playground listens on loopback and answers only requests for a \
                 loopback host (localhost, 127.0.0.1, [::1]), not '{host}' \
                 (start it with --host to serve other names)"
            ),
        )
    }
}

/// Whether a `Host` header value (`name[:port]`) names this machine's
/// loopback interface.
pub fn is_loopback_host(host: &str) -> bool {
    let name = if let Some(rest) = host.strip_prefix('[') {
        match rest.split_once(']') {
            Some((ip, _)) => ip,
            None => return false,
        }
    } else {
        match host.rsplit_once(':') {
            Some((n, port)) if port.bytes().all(|b| b.is_ascii_digit()) => n,
            _ => host,
        }
    };
    name.eq_ignore_ascii_case("localhost")
        || name
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
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

/// Builds the runtime the server runs on: `threads` async worker threads;
/// every thread (blocking workers included) gets the stack the parsers'
/// and the evaluator's limits are sized for.
fn runtime(threads: usize) -> std::io::Result<tokio::runtime::Runtime> {
    crate::budget::init_thread_pool();
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads.max(1))
        .thread_name("litmix-serve")
        .thread_stack_size(crate::budget::STACK_BYTES)
        .enable_all()
        .build()
}

/// Accepts connections on `listener` and serves `app` on each until
/// `shutdown` resolves: at most [`ServeLimits::max_connections`] at once
/// (more are closed at once), headers within
/// [`ServeLimits::read_timeout`] (also the idle time between requests of a
/// kept-alive connection), each connection closed after
/// [`ServeLimits::connection_lifetime`].
pub async fn serve_on(
    listener: tokio::net::TcpListener,
    app: axum::Router,
    limits: &ServeLimits,
    shutdown: impl std::future::Future<Output = ()>,
) {
    let open = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let (read_timeout, lifetime) = (limits.read_timeout, limits.connection_lifetime);
    tokio::pin!(shutdown);
    loop {
        let stream = tokio::select! {
            _ = &mut shutdown => return,
            r = listener.accept() => match r {
                Ok((stream, _)) => stream,
                // Out of file descriptors and the like: wait a little
                // rather than spin.
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    continue;
                }
            },
        };
        let Ok(permit) = open.clone().try_acquire_owned() else {
            drop(stream);
            continue;
        };
        let _ = stream.set_nodelay(true);
        let service = hyper_util::service::TowerToHyperService::new(app.clone());
        tokio::spawn(async move {
            let _permit = permit;
            let conn = hyper::server::conn::http1::Builder::new()
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(read_timeout)
                .max_buf_size(64 << 10)
                .serve_connection(hyper_util::rt::TokioIo::new(stream), service);
            let _ = tokio::time::timeout(lifetime, conn).await;
        });
    }
}

/// Binds `addr` (port 0: any free port) and serves on a background thread.
pub fn start(addr: SocketAddr, limits: ServeLimits) -> std::io::Result<Running> {
    let listener = std::net::TcpListener::bind(addr)?;
    listener.set_nonblocking(true)?;
    let addr = listener.local_addr()?;
    let rt = runtime(2)?;
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    crate::budget::set_memory_limit(limits.max_memory);
    let state = AppState::new(limits.clone(), addr);
    let thread = std::thread::Builder::new()
        .name("litmix-serve-main".into())
        .spawn(move || {
            rt.block_on(async move {
                let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
                    return;
                };
                serve_on(listener, router(state), &limits, async {
                    let _ = rx.await;
                })
                .await;
            });
            // Checks still running stop at their deadline; do not wait for
            // them here.
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
    crate::budget::set_memory_limit(limits.max_memory);
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        let bound = listener.local_addr()?;
        on_ready(bound);
        let app = router(AppState::new(limits.clone(), bound));
        serve_on(listener, app, &limits, std::future::pending()).await;
        Ok(())
    })
}
