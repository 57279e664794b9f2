//! `litmix serve`: the web playground; `--bench N` measures it instead.

use super::serve_bench as bench;
use clap::Args;
use litmix::serve::{self, ServeLimits};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::process::ExitCode;
use std::time::Duration;

#[derive(Args)]
pub struct ServeArgs {
    /// Address to listen on. Loopback by default: binding another address
    /// exposes the playground to that network.
    #[arg(long, default_value_t = IpAddr::V4(Ipv4Addr::LOCALHOST))]
    pub host: IpAddr,
    /// Port to listen on (0: any free port).
    #[arg(long, default_value_t = 8080)]
    pub port: u16,
    /// Seconds one check may take before the request gets a time-limit error.
    #[arg(long, default_value_t = 10.0)]
    pub time_limit: f64,
    /// Candidate executions one check may judge.
    #[arg(long, default_value_t = litmix::serve::DEFAULT_MAX_CANDIDATES)]
    pub max_candidates: u64,
    /// Checks running at once in the long lane (default: the number of
    /// cores); the fast lane runs more (docs/limits.md).
    #[arg(long)]
    pub workers: Option<usize>,
    /// Seconds a client may take to send a request's headers, then its
    /// body (also how long an idle connection stays open).
    #[arg(long, default_value_t = 5.0)]
    pub read_timeout: f64,
    /// Resident memory (MiB) of the server past which searches stop with a
    /// limit (0: none).
    #[arg(long, default_value_t = 2048)]
    pub max_memory: u64,
    /// Instead of serving: start on a free loopback port, time N sequential
    /// MP requests (p50/p99) and the throughput of concurrent clients, print
    /// the figures and exit.
    #[arg(long, value_name = "N")]
    pub bench: Option<usize>,
}

/// Runs `litmix serve`.
pub fn serve(a: ServeArgs) -> ExitCode {
    if !(a.time_limit.is_finite() && a.time_limit > 0.0 && a.time_limit <= 3600.0) {
        eprintln!("litmix: --time-limit must be between 0 and 3600 seconds");
        return ExitCode::from(2);
    }
    if !(a.read_timeout.is_finite() && a.read_timeout > 0.0 && a.read_timeout <= 3600.0) {
        eprintln!("litmix: --read-timeout must be between 0 and 3600 seconds");
        return ExitCode::from(2);
    }
    let mut limits = ServeLimits {
        time: Duration::from_secs_f64(a.time_limit),
        max_candidates: a.max_candidates,
        read_timeout: Duration::from_secs_f64(a.read_timeout),
        max_memory: (a.max_memory > 0).then_some(a.max_memory << 20),
        ..ServeLimits::default()
    };
    if let Some(w) = a.workers {
        limits.workers = w.max(1);
    }
    if let Some(n) = a.bench {
        return run_bench(limits, n);
    }
    let addr = SocketAddr::new(a.host, a.port);
    let r = serve::serve_forever(addr, limits, |bound| {
        eprintln!("litmix playground: http://{bound}/ (Ctrl+C stops it)");
    });
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("litmix: cannot serve on {addr}: {e}");
            ExitCode::from(2)
        }
    }
}

/// Up to `max` picks of the first enabled transition on an example's machine.
fn bench_picks(example: &str, max: usize) -> Option<Vec<usize>> {
    let e = litmix::serve::examples::find(example)?;
    let test = litmix::litmus::parse_str("bench.litmus", e.source).ok()?;
    let mut picks = Vec::new();
    while picks.len() < max {
        let r = litmix::driver::replay_view(&test, e.model, 2, &picks).ok()?;
        if r.view.transitions.is_empty() {
            break;
        }
        picks.push(0);
    }
    Some(picks)
}

fn run_bench(limits: ServeLimits, n: usize) -> ExitCode {
    let workers = limits.workers;
    let server = match serve::start(SocketAddr::from((Ipv4Addr::LOCALHOST, 0)), limits) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("litmix: cannot start the server: {e}");
            return ExitCode::from(2);
        }
    };
    let example = "MP+rel.gpu+acq.gpu";
    for page in [false, true] {
        let Some(body) = bench::body(example, page) else {
            eprintln!("litmix: example {example} missing");
            return ExitCode::from(2);
        };
        let what = if page {
            "with why + graphs (as the page asks)"
        } else {
            "plain (as `run --json`)"
        };
        if let Err(code) = print_latency(
            &format!("{example} {what}"),
            n,
            bench::latency(server.addr(), &body, n),
        ) {
            return code;
        }
        for clients in [1, 2, 4] {
            let per = n.div_ceil(clients);
            match bench::throughput(server.addr(), &body, clients, per) {
                Ok((done, t)) => println!(
                    "{example} {what}: {clients} clients, {workers} workers: {done} requests in {:.3} s = {:.0} requests/s",
                    t.as_secs_f64(),
                    done as f64 / t.as_secs_f64()
                ),
                Err(e) => {
                    eprintln!("litmix: bench failed: {e}");
                    return ExitCode::from(1);
                }
            }
        }
    }
    // The step view: a replay of up to 20 picks (always the first enabled
    // transition) per request, as the page sends after each click.
    for example in ["MP.flu+inv-before.diffwg", "R"] {
        let Some(picks) = bench_picks(example, 20) else {
            eprintln!("litmix: example {example} missing");
            return ExitCode::from(2);
        };
        let Some(body) = bench::step_body(example, &picks) else {
            eprintln!("litmix: example {example} missing");
            return ExitCode::from(2);
        };
        if let Err(code) = print_latency(
            &format!("step {example} ({} picks)", picks.len()),
            n,
            bench::latency_at(server.addr(), "/api/step", &body, n),
        ) {
            return code;
        }
    }
    ExitCode::SUCCESS
}

/// Prints one latency line of the bench (`label: n sequential requests:
/// p50, p99, mean`), or its error with the exit code to give.
fn print_latency(
    label: &str,
    n: usize,
    l: std::io::Result<bench::Latency>,
) -> Result<(), ExitCode> {
    match l {
        Ok(l) => {
            println!(
                "{label}: {n} sequential requests: p50 {:.3} ms, p99 {:.3} ms, mean {:.3} ms",
                ms(l.quantile(0.5)),
                ms(l.quantile(0.99)),
                ms(l.mean())
            );
            Ok(())
        }
        Err(e) => {
            eprintln!("litmix: bench failed: {e}");
            Err(ExitCode::from(1))
        }
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
