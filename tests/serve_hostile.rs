//! Hostile requests against `litmix serve`, run as a child process on a
//! loopback port (issue 32): inputs that used to overflow the stack or pin
//! a worker, runaways next to small requests, slow and unfinished requests,
//! cross-site content types, junk, and inputs from the mutation fuzzer.
//! Throughout, a watcher asks `GET /api/models` every 100 ms and the test
//! fails if one answer takes 1 s or more; the server's resident memory is
//! read from `/proc/PID/status`.
//!
//! Bounded: a 2 s time limit, a few hundred requests in all. The full
//! figures of docs/limits.md (200 small requests beside 20 runaways, a
//! 10-minute fuzz) run with `LITMIX_HOSTILE_FULL=1` (and `--ignored` for the
//! long fuzz).

use litmix::fuzz::{Rng, Target, mutate, seeds};
use serde_json::{Value as Json, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The server's time limit in these tests.
const LIMIT: Duration = Duration::from_secs(2);
/// Slack on top of the limit within which every answer must come.
const SLACK: Duration = Duration::from_secs(1);
/// The server's read timeout (`--read-timeout`).
const READ_TIMEOUT: Duration = Duration::from_secs(2);

/// A `litmix serve` child process, killed when dropped.
struct Server {
    child: Child,
    addr: SocketAddr,
}

impl Server {
    fn start(workers: usize) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_litmix"))
            .args([
                "serve",
                "--port",
                "0",
                "--time-limit",
                &LIMIT.as_secs_f64().to_string(),
                "--read-timeout",
                &READ_TIMEOUT.as_secs_f64().to_string(),
                "--workers",
                &workers.to_string(),
            ])
            .stderr(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .expect("litmix serve starts");
        let mut line = String::new();
        BufReader::new(child.stderr.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = line
            .split_whitespace()
            .find(|w| w.starts_with("http://"))
            .unwrap_or_else(|| panic!("no address in {line:?}"));
        let addr: SocketAddr = url
            .trim_start_matches("http://")
            .trim_end_matches('/')
            .parse()
            .unwrap();
        assert!(addr.ip().is_loopback());
        Server { child, addr }
    }

    /// Resident memory of the server process, in MiB.
    fn rss_mib(&self) -> u64 {
        let s = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .expect("the server process is alive");
        litmix::budget::vm_rss(&s).unwrap() >> 20
    }

    fn alive(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One answer: status, headers (lower-case names), body.
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Answer {
    fn json(&self) -> Json {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&self.body)))
    }
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Sends `raw` on a new connection and reads one answer (the server closes
/// or the length is reached); `None` when the connection closed without an
/// answer.
fn exchange(addr: SocketAddr, raw: &[u8], wait: Duration) -> Option<Answer> {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(wait)).unwrap();
    s.write_all(raw).ok()?;
    read_answer(&mut s)
}

fn read_answer(s: &mut TcpStream) -> Option<Answer> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 65536];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        match s.read(&mut chunk) {
            Ok(0) | Err(_) => return None,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let mut lines = head.lines();
    let status: u16 = lines.next()?.split_whitespace().nth(1)?.parse().ok()?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let len: usize = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = buf[head_end..].to_vec();
    while body.len() < len {
        match s.read(&mut chunk) {
            Ok(0) | Err(_) => return None,
            Ok(n) => body.extend_from_slice(&chunk[..n]),
        }
    }
    Some(Answer {
        status,
        headers,
        body,
    })
}

fn post_raw(addr: SocketAddr, path: &str, ctype: &str, body: &[u8]) -> Answer {
    let mut raw = format!(
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: {ctype}\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    raw.extend_from_slice(body);
    exchange(addr, &raw, LIMIT * 4).expect("an answer")
}

fn post(addr: SocketAddr, body: &Json) -> Answer {
    post_raw(
        addr,
        "/api/run",
        "application/json",
        body.to_string().as_bytes(),
    )
}

fn get(addr: SocketAddr, path: &str) -> Option<Answer> {
    exchange(
        addr,
        format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n").as_bytes(),
        Duration::from_secs(5),
    )
}

/// Asks `GET /api/models` every 100 ms until dropped; records the slowest
/// answer and any failure.
struct Watcher {
    stop: Arc<AtomicBool>,
    slowest_ms: Arc<AtomicU64>,
    failures: Arc<Mutex<Vec<String>>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Watcher {
    fn start(addr: SocketAddr) -> Watcher {
        let stop = Arc::new(AtomicBool::new(false));
        let slowest_ms = Arc::new(AtomicU64::new(0));
        let failures = Arc::new(Mutex::new(Vec::new()));
        let (st, sl, fl) = (stop.clone(), slowest_ms.clone(), failures.clone());
        let thread = std::thread::spawn(move || {
            while !st.load(Ordering::Relaxed) {
                let t = Instant::now();
                match get(addr, "/api/models") {
                    Some(a) if a.status == 200 => {}
                    Some(a) => fl.lock().unwrap().push(format!("status {}", a.status)),
                    None => fl.lock().unwrap().push("no answer".into()),
                }
                sl.fetch_max(t.elapsed().as_millis() as u64, Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(100));
            }
        });
        Watcher {
            stop,
            slowest_ms,
            failures,
            thread: Some(thread),
        }
    }

    /// Stops and asserts: every health check answered 200 within 1 s.
    fn finish(mut self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.take().unwrap().join().unwrap();
        let f = self.failures.lock().unwrap();
        assert!(f.is_empty(), "health checks failed: {f:?}");
        let slowest = self.slowest_ms.load(Ordering::Relaxed);
        assert!(slowest < 1000, "a health check took {slowest} ms");
        slowest
    }
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap()
}

/// The cat models and tests that used to crash or pin the server (issue 32).
fn crashers() -> Vec<(&'static str, Json)> {
    let sb = read("examples/SB-x86.litmus");
    let cat = |name: &'static str, text: String| (name, json!({"source": sb, "cat": text}));
    vec![
        cat(
            "let rec f x = f x",
            "let rec f x = f x\nacyclic (f po)\n".into(),
        ),
        cat(
            "500 nested parentheses",
            format!("acyclic {}po{}\n", "(".repeat(500), ")".repeat(500)),
        ),
        cat(
            "5,000-term union",
            format!("acyclic {}\n", vec!["po"; 5000].join(" | ")),
        ),
        cat(
            "5,000-term difference",
            format!("acyclic {}\n", vec!["po"; 5000].join(" \\ ")),
        ),
        cat(
            "5,000-term ++",
            format!(
                "let s = {} ++ {{}}\nacyclic po\n",
                vec!["po"; 5000].join(" ++ ")
            ),
        ),
        cat(
            "2,000 chained let ... in",
            format!(
                "acyclic {}po\n",
                (0..2000)
                    .map(|i| format!("let x{i} = po in "))
                    .collect::<String>()
            ),
        ),
        cat(
            "2,000 chained lets",
            format!(
                "let x0 = po\n{}acyclic x2000\n",
                (1..=2000)
                    .map(|i| format!("let x{i} = x{} | po\n", i - 1))
                    .collect::<String>()
            ),
        ),
        cat(
            "3,000 complements",
            format!("acyclic {}po\n", "~".repeat(3000)),
        ),
        cat(
            "3,000 postfix +",
            format!("acyclic po{}\n", "^+".repeat(3000)),
        ),
        cat(
            "mutual recursion",
            "let rec f x = g x and g x = f x\nacyclic (f po)\n".into(),
        ),
        cat(
            "recursion growing its argument",
            "let rec f x = f (x | x;x)\nacyclic (f po)\n".into(),
        ),
        (
            "500 nested litmus braces",
            json!({"source": format!("X86 a\n{}\n", "{".repeat(500))}),
        ),
        (
            "lostpop 8 threads x 10 stores",
            json!({"source": many_stores(8, 10), "model": "lostpop"}),
        ),
        ("x86, 300 threads", json!({"source": many_threads(300)})),
        ("x86, 1,000 threads", json!({"source": many_threads(1000)})),
    ]
}

/// `threads` threads of `stores` stores each to four locations (X86).
fn many_stores(threads: usize, stores: usize) -> String {
    let mut s = format!("X86 LP{threads}x{stores}\n{{ x0=0; x1=0; x2=0; x3=0; }}\n ");
    s += &(0..threads)
        .map(|t| format!("P{t}"))
        .collect::<Vec<_>>()
        .join(" | ");
    s += " ;\n";
    for i in 0..stores {
        let row: Vec<String> = (0..threads)
            .map(|t| format!("MOV [x{}],${}", (t + i) % 4, i + 1))
            .collect();
        s += &format!(" {} ;\n", row.join(" | "));
    }
    s + "exists (x0=1)\n"
}

/// `threads` threads, alternately a store and a load of `x` (X86).
fn many_threads(threads: usize) -> String {
    let mut s = format!("X86 T{threads}\n{{ x=0; }}\n ");
    s += &(0..threads)
        .map(|t| format!("P{t}"))
        .collect::<Vec<_>>()
        .join(" | ");
    s += " ;\n ";
    s += &(0..threads)
        .map(|t| {
            if t % 2 == 0 {
                "MOV [x],$1".to_string()
            } else {
                "MOV EAX,[x]".to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(" | ");
    s + " ;\nexists (1:EAX=0)\n"
}

/// Asserts that an answer is a located error or a named limit.
fn assert_bounded(name: &str, a: &Answer) {
    let v = a.json();
    match a.status {
        200 => {}
        400 => assert!(
            v["line"].is_u64() || v["error"].is_string(),
            "{name}: 400 without an error: {v}"
        ),
        422 | 503 => assert!(
            v["limit"].is_string(),
            "{name}: {} without a limit: {v}",
            a.status
        ),
        s => panic!("{name}: status {s}: {v}"),
    }
    assert!(
        a.body.len() < 16 << 10 || a.status == 200,
        "{name}: {} bytes of error",
        a.body.len()
    );
}

/// Every crashing or pinning input gets a located error or a limit within
/// the limit plus 1 s, the health checks keep answering, the worker is free
/// again (a small check is answered at once after each), and memory comes
/// back near its baseline.
#[test]
fn crashing_and_pinning_inputs_get_errors_or_limits() {
    let mut s = Server::start(2);
    let mp = json!({"source": read("examples/MP-gpu.litmus")});
    assert_eq!(post(s.addr, &mp).status, 200);
    let baseline = s.rss_mib();
    let w = Watcher::start(s.addr);
    for (name, body) in crashers() {
        let t = Instant::now();
        let a = post(s.addr, &body);
        let took = t.elapsed();
        println!(
            "{name}: {} in {:.0} ms: {}",
            a.status,
            took.as_secs_f64() * 1e3,
            {
                let v = a.json();
                let e = v["error"]
                    .as_str()
                    .unwrap_or("")
                    .lines()
                    .next()
                    .unwrap_or("")
                    .to_string();
                e.chars().take(140).collect::<String>()
            }
        );
        assert!(s.alive(), "{name}: the server died");
        assert_bounded(name, &a);
        assert!(took < LIMIT + SLACK, "{name}: answered after {took:?}");
        // The worker is free again: a small check is answered at once.
        let t = Instant::now();
        let r = post(s.addr, &mp);
        assert_eq!(r.status, 200, "{name}: then MP got {}", r.status);
        assert!(
            t.elapsed() < SLACK,
            "{name}: then MP took {:?}",
            t.elapsed()
        );
    }
    let slowest = w.finish();
    std::thread::sleep(Duration::from_millis(500));
    let after = s.rss_mib();
    println!("health checks: slowest {slowest} ms; memory {baseline} MiB -> {after} MiB");
    assert!(after < baseline + 50, "memory {baseline} -> {after} MiB");
}

/// The command line survives the same cat models: an error, not an abort.
#[test]
fn command_line_survives_deep_models() {
    let dir = std::env::temp_dir().join(format!("litmix-hostile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (i, (name, body)) in crashers().into_iter().enumerate().take(11) {
        let cat = dir.join(format!("m{i}.cat"));
        std::fs::write(&cat, body["cat"].as_str().unwrap()).unwrap();
        let t = Instant::now();
        let out = Command::new(env!("CARGO_BIN_EXE_litmix"))
            .args(["run", "--timeout", "2", "--model"])
            .arg(&cat)
            .arg(root().join("examples/SB-x86.litmus"))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.code().is_some_and(|c| c < 100),
            "{name}: {:?} {err}",
            out.status
        );
        assert!(t.elapsed() < LIMIT + SLACK * 2, "{name}: {:?}", t.elapsed());
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Cross-site content types get 415 (no check runs); junk is never echoed
/// in bulk; API answers carry the security headers.
#[test]
fn content_type_echo_and_headers() {
    let s = Server::start(2);
    let body = json!({"source": read("examples/MP-gpu.litmus")}).to_string();
    for ctype in [
        "text/plain",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
    ] {
        let a = post_raw(s.addr, "/api/run", ctype, body.as_bytes());
        assert_eq!(a.status, 415, "{ctype}");
        let a = post_raw(s.addr, "/api/step", ctype, body.as_bytes());
        assert_eq!(a.status, 415, "{ctype}");
    }
    let a = post_raw(
        s.addr,
        "/api/run",
        "application/json; charset=utf-8",
        body.as_bytes(),
    );
    assert_eq!(a.status, 200);
    for h in [
        "x-content-type-options",
        "x-frame-options",
        "content-security-policy",
        "cache-control",
    ] {
        assert!(a.header(h).is_some(), "no {h} on an API answer");
    }
    // 900 KB of junk in one line, then in lines of 50 (under the 1 MiB
    // body limit once escaped as JSON): a short error.
    let line: String = (0..900_000u32)
        .map(|i| char::from(b'!' + ((i * 7919) % 90) as u8))
        .collect();
    let lines: String = line
        .as_bytes()
        .chunks(50)
        .map(|c| String::from_utf8_lossy(c).to_string() + "\n")
        .collect();
    for junk in [line, lines] {
        let a = post(s.addr, &json!({"source": junk, "file": "x".repeat(5000)}));
        assert_eq!(a.status, 400);
        assert!(a.body.len() < 4096, "{} bytes of error", a.body.len());
        let a = post(s.addr, &json!({"source": "X86 a\n", "cat": junk}));
        assert!(a.body.len() < 4096, "{} bytes of error", a.body.len());
    }
}

/// Slow headers, slow and unfinished bodies, a short Content-Length and an
/// idle connection are all closed within the read timeout (plus 1 s).
#[test]
fn slow_and_unfinished_requests_are_closed() {
    let s = Server::start(2);
    let addr = s.addr;
    let w = Watcher::start(addr);
    let body = json!({"source": read("examples/MP-gpu.litmus")}).to_string();
    let cases: Vec<(&str, Vec<Vec<u8>>)> = vec![
        ("idle connection", vec![]),
        ("unfinished headers", vec![b"POST /api/run HTTP/1.1\r\nHost: 127.0.0.1\r\n".to_vec()]),
        (
            "unfinished chunked body",
            vec![
                b"POST /api/run HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
                  Transfer-Encoding: chunked\r\n\r\n5\r\n{\"sou"
                    .to_vec(),
            ],
        ),
        (
            "short Content-Length",
            vec![
                format!(
                    "POST /api/run HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
                     Content-Length: {}\r\n\r\n{}",
                    body.len() + 10,
                    body
                )
                .into_bytes(),
            ],
        ),
        (
            "slow headers, a byte a second",
            b"GET /api/models HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
                .iter()
                .map(|b| vec![*b])
                .collect(),
        ),
    ];
    let threads: Vec<_> = cases
        .into_iter()
        .map(|(name, pieces)| {
            std::thread::spawn(move || {
                let t = Instant::now();
                let mut c = TcpStream::connect(addr).unwrap();
                c.set_read_timeout(Some(Duration::from_millis(50))).unwrap();
                let mut pieces = pieces.into_iter();
                let mut buf = [0u8; 4096];
                let closed_after = loop {
                    if let Some(p) = pieces.next()
                        && c.write_all(&p).is_err()
                    {
                        break t.elapsed();
                    }
                    match c.read(&mut buf) {
                        Ok(0) => break t.elapsed(),
                        // An answer (408, 400): read on until closed.
                        Ok(_) => {}
                        Err(e)
                            if matches!(
                                e.kind(),
                                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                            ) => {}
                        Err(_) => break t.elapsed(),
                    }
                    if t.elapsed() > READ_TIMEOUT * 5 {
                        break t.elapsed();
                    }
                    if name.starts_with("slow") {
                        std::thread::sleep(Duration::from_millis(950));
                    }
                };
                (name, closed_after)
            })
        })
        .collect();
    for t in threads {
        let (name, after) = t.join().unwrap();
        println!("{name}: closed after {:.2} s", after.as_secs_f64());
        assert!(
            after < READ_TIMEOUT + SLACK,
            "{name}: still open after {after:?}"
        );
    }
    w.finish();
}

/// Small requests keep flowing while runaways run: `runaways` runaway
/// checks and `small` MP checks (from 10 clients, each one after the other)
/// sent at once. Returns (small answered 200, their p99, slowest health
/// check in ms, memory growth in MiB within 3 s of the runaways' end).
fn fairness(small: usize, runaways: usize) -> (usize, Duration, u64, i64) {
    let mut s = Server::start(2);
    let addr = s.addr;
    let mp = json!({"source": read("examples/MP-gpu.litmus")});
    assert_eq!(post(addr, &mp).status, 200);
    let baseline = s.rss_mib() as i64;
    let w = Watcher::start(addr);
    let mut long = Vec::new();
    for i in 0..runaways {
        let body = if i % 2 == 0 {
            json!({"source": many_stores(8, 10), "model": "lostpop"})
        } else {
            json!({"source": many_threads(300)})
        };
        long.push(std::thread::spawn(move || {
            let t = Instant::now();
            let a = post(addr, &body);
            assert_bounded("runaway", &a);
            assert!(
                t.elapsed() < LIMIT + SLACK,
                "a runaway took {:?}",
                t.elapsed()
            );
        }));
    }
    let per = small.div_ceil(10);
    let clients: Vec<_> = (0..10)
        .map(|k| {
            let mp = mp.clone();
            let n = per.min(small.saturating_sub(k * per));
            std::thread::spawn(move || {
                (0..n)
                    .map(|_| {
                        let t = Instant::now();
                        (post(addr, &mp).status, t.elapsed())
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let mut times: Vec<(u16, Duration)> = clients
        .into_iter()
        .flat_map(|c| c.join().unwrap())
        .collect();
    for l in long {
        l.join().unwrap();
    }
    assert!(s.alive());
    let slowest = w.finish();
    // A cut-off search is freed (and the heap trimmed) on a thread of its
    // own after the answer: memory must come back within a few seconds.
    let mut grown = i64::MAX;
    let settle = Instant::now();
    while settle.elapsed() < Duration::from_secs(3) {
        std::thread::sleep(Duration::from_millis(100));
        grown = grown.min(s.rss_mib() as i64 - baseline);
        if grown < 50 {
            break;
        }
    }
    let ok = times.iter().filter(|(st, _)| *st == 200).count();
    times.sort_by_key(|t| t.1);
    let p99 = times[(times.len() * 99 / 100).min(times.len() - 1)].1;
    (ok, p99, slowest, grown)
}

#[test]
fn small_requests_flow_beside_runaways() {
    let full = std::env::var_os("LITMIX_HOSTILE_FULL").is_some();
    let (small, runaways) = if full { (200, 20) } else { (60, 6) };
    let (ok, p99, slowest, grown) = fairness(small, runaways);
    println!(
        "{ok}/{small} small answered beside {runaways} runaways, p99 {:.0} ms; \
         slowest health check {slowest} ms; memory +{grown} MiB",
        p99.as_secs_f64() * 1e3
    );
    assert!(ok * 100 >= small * 99, "{ok}/{small} answered");
    assert!(p99 < Duration::from_secs(1), "p99 {p99:?}");
    assert!(grown < 50, "memory grew by {grown} MiB");
}

/// Mutated tests and cat models from the fuzzer's seeds through the API:
/// every answer is a verdict, a located error or a limit within the limit
/// plus 1 s, and the server stays up.
fn api_fuzz(budget: Duration, max_inputs: usize) -> (usize, usize) {
    let mut s = Server::start(2);
    let w = Watcher::start(s.addr);
    let all = seeds(&[root().join("examples"), root().join("models")]);
    let litmus: Vec<_> = all.iter().filter(|i| i.target == Target::Litmus).collect();
    let cats: Vec<_> = all.iter().filter(|i| i.target == Target::Cat).collect();
    assert!(!litmus.is_empty() && !cats.is_empty());
    let mut rng = Rng::new(0x5eed_0032);
    let (mut n, mut largest) = (0, 0);
    let start = Instant::now();
    while n < max_inputs && start.elapsed() < budget {
        let a = litmus[rng.below(litmus.len())];
        let b = litmus[rng.below(litmus.len())];
        let body = if n % 3 == 2 {
            let c = cats[rng.below(cats.len())];
            let d = cats[rng.below(cats.len())];
            json!({"source": a.text, "cat": mutate(&mut rng, &c.text, &d.text)})
        } else {
            json!({"source": mutate(&mut rng, &a.text, &b.text), "why": true, "graphs": n % 2 == 0})
        };
        let t = Instant::now();
        let r = post(s.addr, &body);
        assert!(s.alive(), "the server died on input {n}: {body}");
        assert_bounded("fuzz", &r);
        assert!(
            t.elapsed() < LIMIT + SLACK,
            "input {n} took {:?}: {body}",
            t.elapsed()
        );
        largest = largest.max(r.body.len());
        n += 1;
    }
    w.finish();
    (n, largest)
}

#[test]
fn fuzzed_requests_get_answers_within_the_limit() {
    let (n, largest) = api_fuzz(Duration::from_secs(40), 150);
    println!("{n} fuzzed requests, largest answer {largest} bytes");
    assert!(n >= 20);
}

/// The 10-minute fuzz of docs/limits.md: `nice cargo test --release --test
/// serve_hostile -- --ignored` (not in CI).
#[test]
#[ignore]
fn ten_minute_api_fuzz() {
    let (n, largest) = api_fuzz(Duration::from_secs(600), usize::MAX);
    println!("{n} fuzzed requests in 10 minutes, largest answer {largest} bytes");
}
