//! `litmix serve --bench N`: request latency and throughput of `POST
//! /api/run`, and latency of `POST /api/step`, on loopback, against a
//! server started in the same process.

use super::http_client::Client;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// Latencies of sequential requests on one connection.
pub struct Latency {
    pub samples: Vec<Duration>,
}

impl Latency {
    /// The `q`-quantile (0..=1), nearest rank.
    pub fn quantile(&self, q: f64) -> Duration {
        let mut s = self.samples.clone();
        s.sort();
        if s.is_empty() {
            return Duration::ZERO;
        }
        let rank = ((q * s.len() as f64).ceil() as usize).clamp(1, s.len());
        s[rank - 1]
    }

    /// The mean.
    pub fn mean(&self) -> Duration {
        if self.samples.is_empty() {
            return Duration::ZERO;
        }
        self.samples.iter().sum::<Duration>() / self.samples.len() as u32
    }
}

/// The request body for the benchmark's test: an example checked under its
/// model, optionally with what the page asks for (`why`, `graphs`).
pub fn body(example: &str, page: bool) -> Option<Vec<u8>> {
    let e = litmix::serve::examples::find(example)?;
    let v = serde_json::json!({
        "source": e.source,
        "model": e.model,
        "why": page,
        "graphs": page,
    });
    serde_json::to_vec(&v).ok()
}

/// The `POST /api/step` body replaying `picks` over an example's machine.
pub fn step_body(example: &str, picks: &[usize]) -> Option<Vec<u8>> {
    let e = litmix::serve::examples::find(example)?;
    let v = serde_json::json!({
        "source": e.source,
        "model": e.model,
        "picks": picks,
    });
    serde_json::to_vec(&v).ok()
}

fn one(c: &mut Client, body: &[u8]) -> std::io::Result<()> {
    one_at(c, "/api/run", body)
}

fn one_at(c: &mut Client, path: &str, body: &[u8]) -> std::io::Result<()> {
    let r = c.post_json(path, body)?;
    if r.status != 200 {
        return Err(std::io::Error::other(format!(
            "status {}: {}",
            r.status,
            r.text()
        )));
    }
    Ok(())
}

/// `n` runs one after the other on one keep-alive connection.
pub fn latency(addr: SocketAddr, body: &[u8], n: usize) -> std::io::Result<Latency> {
    latency_at(addr, "/api/run", body, n)
}

/// `n` requests to `path` one after the other on one keep-alive connection.
pub fn latency_at(addr: SocketAddr, path: &str, body: &[u8], n: usize) -> std::io::Result<Latency> {
    let mut c = Client::connect(addr, Duration::from_secs(30))?;
    // Warm-up: the model is parsed on first use.
    one_at(&mut c, path, body)?;
    let mut samples = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        one_at(&mut c, path, body)?;
        samples.push(t.elapsed());
    }
    Ok(Latency { samples })
}

/// `clients` connections sending `per_client` requests each, all at once:
/// (requests answered, wall time).
pub fn throughput(
    addr: SocketAddr,
    body: &[u8],
    clients: usize,
    per_client: usize,
) -> std::io::Result<(usize, Duration)> {
    let start = Instant::now();
    let handles: Vec<_> = (0..clients)
        .map(|_| {
            let body = body.to_vec();
            std::thread::spawn(move || -> std::io::Result<usize> {
                let mut c = Client::connect(addr, Duration::from_secs(30))?;
                for _ in 0..per_client {
                    one(&mut c, &body)?;
                }
                Ok(per_client)
            })
        })
        .collect();
    let mut done = 0;
    for h in handles {
        done += h
            .join()
            .map_err(|_| std::io::Error::other("a client thread panicked"))??;
    }
    Ok((done, start.elapsed()))
}
