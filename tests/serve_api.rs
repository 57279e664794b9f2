//! The playground's HTTP API against a server on an ephemeral loopback
//! port: the same JSON as `litmix run --json`, errors with positions,
//! limits (body size, time, candidates), and a server that keeps answering
//! while a runaway test is being cut off.

// The command line's HTTP client (`serve --bench` uses it too).
#[path = "../src/cli/http_client.rs"]
mod client;
use client::{Client, Response};
use litmix::serve::{Running, ServeLimits, start};
use serde_json::{Value as Json, json};
use std::net::{Ipv4Addr, SocketAddr};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

fn server(limits: ServeLimits) -> Running {
    start(SocketAddr::from((Ipv4Addr::LOCALHOST, 0)), limits).expect("start server")
}

fn client(s: &Running) -> Client {
    Client::connect(s.addr(), Duration::from_secs(60)).expect("connect")
}

fn post(s: &Running, body: &Json) -> Response {
    client(s)
        .post_json("/api/run", body.to_string().as_bytes())
        .expect("request")
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).expect(rel)
}

/// `litmix run --json [extra] path` from the repository root, one object.
fn cli_json(path: &str, extra: &[&str]) -> Json {
    let o = Command::new(env!("CARGO_BIN_EXE_litmix"))
        .arg("run")
        .arg("--json")
        .args(extra)
        .arg(path)
        .current_dir(root())
        .output()
        .expect("run litmix");
    serde_json::from_slice(&o.stdout).expect("one JSON object")
}

fn without_time(mut v: Json) -> Json {
    v.as_object_mut().expect("object").remove("time_ms");
    v
}

/// A test whose search runs far past a small time bound: 6 writes to one
/// location (720 coherence orders) times 7³ reads-from choices, each judged
/// with the `fence.sc` linearisations of ptx75.
// Long even with pruning (issue 14): tens of thousands of consistent
// executions, each judged, over a 200,000-unit work budget.
const RUNAWAY: &str = r#"PTX runaway
{ x=0; }
 P0@cta 0,gpu 0 | P1@cta 1,gpu 0 | P2@cta 2,gpu 0 | P3@cta 3,gpu 0 ;
 st.relaxed.gpu x, 1 | st.relaxed.gpu x, 3 | st.relaxed.gpu x, 5 | ld.relaxed.gpu r0, x ;
 st.relaxed.gpu x, 2 | st.relaxed.gpu x, 4 | st.relaxed.gpu x, 6 | ld.relaxed.gpu r1, x ;
 fence.sc.gpu | fence.sc.gpu | fence.sc.gpu | ld.relaxed.gpu r2, x ;
 | | | ld.relaxed.gpu r3, x ;
 | | | ld.relaxed.gpu r4, x ;
exists (P3:r0 == 1)
"#;

/// A candidate budget far beyond what [`RUNAWAY`] can reach within the
/// time bounds below: the time bound is what stops it.
const BIG_BUDGET: u64 = 2_000_000;

#[test]
fn run_returns_exactly_the_cli_json() {
    let s = server(ServeLimits::default());
    let cases: &[(&str, Option<&str>, bool)] = &[
        ("examples/MP-gpu.litmus", None, false),
        ("examples/SB-x86.litmus", None, false),
        ("examples/MP-x86-ptx-sys.litmus", None, true),
        ("tests/models/rc11/MP+rel+acq.litmus", Some("rc11"), true),
        (
            "tests/models/ptx75/Fig8a-no-fence.litmus",
            Some("ptx75"),
            true,
        ),
        (
            "tests/models/opencl/MP+fences.dv.litmus",
            Some("opencl"),
            false,
        ),
    ];
    for (path, model, why) in cases {
        let mut req = json!({"source": read(path), "file": path, "why": why});
        let mut extra = Vec::new();
        if *why {
            extra.push("--why");
        }
        if let Some(m) = model {
            req["model"] = json!(m);
            extra.extend(["--model", m]);
        }
        let r = post(&s, &req);
        assert_eq!(r.status, 200, "{path}: {}", r.text());
        assert_eq!(r.header("content-type"), Some("application/json"));
        let api = without_time(r.json().unwrap());
        let cli = without_time(cli_json(path, &extra));
        assert_eq!(api, cli, "{path}: API and CLI differ");
        assert!(api["verdict"] == "Ok" || api["verdict"] == "No");
    }
}

#[test]
fn graphs_and_why_for_a_forbidden_outcome() {
    let s = server(ServeLimits::default());
    let path = "tests/models/cmm/Fig2a-MP-ptx-rel.sys+x86.litmus";
    let r = post(
        &s,
        &json!({"source": read(path), "model": "cmm", "why": true, "graphs": true}),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    let v = r.json().unwrap();
    assert_eq!(v["verdict"], "No");
    assert_eq!(v["file"], "input.litmus");
    assert_eq!(v["forbidden"][0]["axiom"], "CMM-Causality");
    let exs = v["executions"].as_array().unwrap();
    let f = exs
        .iter()
        .find(|e| e["kind"] == "forbidden")
        .expect("a forbidden execution");
    assert_eq!(f["state"], "1:EAX=1; 1:EBX=0;");
    // init x, y, z + two events per thread
    assert_eq!(f["events"].as_array().unwrap().len(), 7);
    let rels: Vec<&str> = f["edges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["rel"].as_str().unwrap())
        .collect();
    for rel in ["po", "rf", "co", "fr"] {
        assert!(rels.contains(&rel), "no {rel} edge: {rels:?}");
    }
    let cycle = f["cycle"].as_array().unwrap();
    assert!(cycle.len() >= 3, "{cycle:?}");
    // The steps chain and close.
    for w in cycle.windows(2) {
        assert_eq!(w[0]["to"], w[1]["from"]);
    }
    assert_eq!(cycle.last().unwrap()["to"], cycle[0]["from"]);
    let dot = f["dot"].as_str().unwrap();
    assert!(dot.starts_with("digraph") && dot.contains("color=crimson"));
    let why = v["why_text"].as_str().unwrap();
    assert!(why.contains("violates CMM-Causality"), "{why}");
    // One flag per state: only 1:EAX=1; 1:EBX=0; satisfies, and it is forbidden.
    let sat = v["states_satisfy"].as_array().unwrap();
    assert_eq!(sat.len(), v["states"].as_array().unwrap().len());
    assert!(sat.iter().all(|b| b == false));

    // The allowed variant (Fig. 2b) has witnesses satisfying the condition.
    let r = post(
        &s,
        &json!({"source": read("tests/models/cmm/Fig2b-MP-ptx-rel.gpu+x86.litmus"), "graphs": true}),
    );
    let v = r.json().unwrap();
    assert_eq!(v["model"], "cmm", "default model for X86+PTX");
    assert_eq!(v["verdict"], "Ok");
    let w = &v["executions"][0];
    assert_eq!(w["kind"], "witness");
    assert_eq!(w["state"], "1:EAX=1; 1:EBX=0;");
    assert!(
        v["states_satisfy"]
            .as_array()
            .unwrap()
            .contains(&json!(true))
    );
    assert!(v.get("why_text").is_none(), "why_text only with why");
}

#[test]
fn parse_errors_point_at_line_and_column() {
    let s = server(ServeLimits::default());
    let src = read("examples/MP-gpu.litmus").replace("st.release.gpu", "st.foo.gpu");
    let r = post(&s, &json!({"source": src, "file": "mine.litmus"}));
    assert_eq!(r.status, 400);
    let v = r.json().unwrap();
    assert_eq!((v["line"].as_u64(), v["col"].as_u64()), (Some(11), Some(5)));
    assert_eq!(v["file"], "mine.litmus");
    let e = v["error"].as_str().unwrap();
    assert!(
        e.starts_with("mine.litmus:11:5: error: unknown qualifier '.foo'"),
        "{e}"
    );
    assert!(v["expected"].as_str().unwrap().contains(".release"));

    // An unsupported architecture, reported at the header.
    let r = post(&s, &json!({"source": "ARM foo\n{}\n"}));
    assert_eq!(r.status, 400);
    let v = r.json().unwrap();
    assert_eq!((v["line"].as_u64(), v["col"].as_u64()), (Some(1), Some(1)));
    assert!(
        v["error"]
            .as_str()
            .unwrap()
            .contains("unsupported architecture 'ARM'")
    );

    // A cat text with an error points into model.cat.
    let r = post(
        &s,
        &json!({"source": read("examples/SB-x86.litmus"), "cat": "\"m\"\nacyclic po | rf as\n"}),
    );
    assert_eq!(r.status, 400, "{}", r.text());
    let v = r.json().unwrap();
    assert_eq!(v["file"], "model.cat");
    assert_eq!(v["line"].as_u64(), Some(3), "{v}");
}

#[test]
fn models_are_built_in_or_sent_as_text_never_read_from_disk() {
    let s = server(ServeLimits::default());
    let sb = read("examples/SB-x86.litmus");
    for bad in ["nosuch", "/etc/passwd", "models/sc.cat", "../models/sc.cat"] {
        let r = post(&s, &json!({"source": sb, "model": bad}));
        assert_eq!(r.status, 400, "{bad}");
        let e = r.json().unwrap()["error"].as_str().unwrap().to_string();
        assert!(
            e.contains(&format!("no built-in model named '{bad}'")),
            "{e}"
        );
        assert!(e.contains("x86tso"), "lists the models: {e}");
    }
    let r = post(
        &s,
        &json!({"source": sb, "cat": "\"m\"\ninclude \"/etc/passwd\"\n"}),
    );
    assert_eq!(r.status, 400);
    assert!(
        r.text().contains("cannot find included file"),
        "{}",
        r.text()
    );

    // SC as a cat text forbids SB's outcome; x86tso allows it.
    let sc = "\"my sc\"\nlet com = rf | co | fr\nacyclic po | com as sc\n";
    let v = post(&s, &json!({"source": sb, "cat": sc})).json().unwrap();
    assert_eq!(
        (v["model"].as_str(), v["verdict"].as_str()),
        (Some("model.cat"), Some("No"))
    );
    let v = post(&s, &json!({"source": sb})).json().unwrap();
    assert_eq!(
        (v["model"].as_str(), v["verdict"].as_str()),
        (Some("x86tso"), Some("Ok"))
    );
    // A cat text may include built-in files.
    let v = post(
        &s,
        &json!({"source": sb, "cat": "\"inc\"\ninclude \"sc.cat\"\n"}),
    )
    .json()
    .unwrap();
    assert_eq!(v["verdict"], "No", "{v}");
    // Both a model name and a cat text: refused.
    let r = post(&s, &json!({"source": sb, "cat": sc, "model": "sc"}));
    assert_eq!(r.status, 400);
}

#[test]
fn bad_requests_get_json_errors() {
    let s = server(ServeLimits::default());
    let mut c = client(&s);
    // 3 MB body: 413, with the limit named.
    let big = json!({"source": "x".repeat(3 << 20)}).to_string();
    let r = c.post_json("/api/run", big.as_bytes()).expect("413 answer");
    assert_eq!(r.status, 413);
    let v = r.json().unwrap();
    assert_eq!(v["limit"], "body");
    assert!(v["error"].as_str().unwrap().contains("1048576 bytes"));
    // Not JSON, wrong fields, wrong method, unknown route.
    let mut c = client(&s);
    let r = c.post_json("/api/run", b"{not json").unwrap();
    assert_eq!(r.status, 400);
    assert!(
        r.json().unwrap()["error"]
            .as_str()
            .unwrap()
            .contains("not a run request")
    );
    let r = c
        .post_json("/api/run", br#"{"source": "X86 a", "modle": "sc"}"#)
        .unwrap();
    assert_eq!(r.status, 400);
    assert!(r.text().contains("unknown field `modle`"), "{}", r.text());
    let r = c.post_json("/api/run", br#"{"model": "sc"}"#).unwrap();
    assert_eq!(r.status, 400);
    assert!(r.text().contains("missing field `source`"), "{}", r.text());
    let r = c.get("/api/run").unwrap();
    assert_eq!(r.status, 405);
    let r = c.get("/api/nothing").unwrap();
    assert_eq!(r.status, 404);
    assert!(r.json().unwrap()["error"].is_string());
    // Random bytes as a test: a parse error, not a crash.
    let junk: String = (0..2000u32)
        .map(|i| char::from(b' ' + ((i * 7919) % 94) as u8))
        .collect();
    let r = c
        .post_json("/api/run", json!({"source": junk}).to_string().as_bytes())
        .unwrap();
    assert_eq!(r.status, 400);
    assert!(r.json().unwrap()["line"].is_u64());
}

#[test]
fn models_and_examples_are_listed_and_every_example_runs_with_its_verdict() {
    let s = server(ServeLimits::default());
    let mut c = client(&s);
    let m = c.get("/api/models").unwrap().json().unwrap();
    let names: Vec<&str> = m["models"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["name"].as_str().unwrap())
        .collect();
    for want in ["sc", "x86tso", "ptx6", "ptx75", "cmm", "rc11", "opencl"] {
        assert!(names.contains(&want), "{want} missing from {names:?}");
    }
    assert_eq!(m["defaults"]["X86+PTX"], "cmm");
    let ex = c.get("/api/examples").unwrap().json().unwrap();
    let ex = ex["examples"].as_array().unwrap();
    assert!(ex.len() >= 30, "{} examples", ex.len());
    // Expected verdicts, by test name and model, from the hand-derived list.
    let expected = read("tests/models/expected.csv");
    let mut checked = 0;
    for e in ex {
        let name = e["name"].as_str().unwrap();
        let model = e["model"].as_str().unwrap();
        let r = c
            .post_json(
                "/api/run",
                json!({"source": e["source"], "model": model})
                    .to_string()
                    .as_bytes(),
            )
            .unwrap();
        assert_eq!(r.status, 200, "{name}: {}", r.text());
        let v = r.json().unwrap();
        assert_eq!(v["test"], name, "example name is the test's name");
        let row = expected
            .lines()
            .find(|l| {
                let cols: Vec<&str> = l.split(',').collect();
                cols.len() == 3 && cols[1] == model && cols[0].ends_with(&format!("/{name}.litmus"))
            })
            .unwrap_or_else(|| panic!("{name} [{model}] has no hand-derived verdict"));
        let want = row.rsplit(',').next().unwrap();
        assert_eq!(v["verdict"], want, "{name} [{model}]");
        checked += 1;
    }
    assert_eq!(checked, ex.len());
    // Every dialect and the classic shapes are there.
    let groups: Vec<&str> = ex.iter().map(|e| e["group"].as_str().unwrap()).collect();
    for g in ["PTX", "X86", "C", "OpenCL"] {
        assert!(groups.contains(&g), "no {g} group");
    }
    for shape in ["MP", "SB", "IRIW", "WRC"] {
        for g in ["PTX", "X86", "C"] {
            assert!(
                ex.iter()
                    .any(|e| e["group"] == g && e["name"].as_str().unwrap().starts_with(shape)),
                "no {shape} example for {g}"
            );
        }
    }
}

#[test]
fn page_and_assets_are_served_from_the_binary() {
    let s = server(ServeLimits::default());
    let mut c = client(&s);
    let r = c.get("/").unwrap();
    assert_eq!(r.status, 200);
    assert!(r.header("content-type").unwrap().starts_with("text/html"));
    let csp = r.header("content-security-policy").unwrap();
    assert!(csp.contains("default-src 'self'"), "{csp}");
    let html = r.text();
    for asset in [
        "/app.js",
        "/editor.js",
        "/graph.js",
        "/style.css",
        "/favicon.svg",
    ] {
        assert!(html.contains(asset), "page does not load {asset}");
        let r = c.get(asset).unwrap();
        assert_eq!(r.status, 200, "{asset}");
        let body = r.text();
        assert!(!body.is_empty());
        // Offline: nothing refers to another origin.
        assert!(
            !body.contains("http://") && !body.contains("https://")
                || asset == "/graph.js"
                || asset == "/favicon.svg",
            "{asset} refers to another origin"
        );
    }
    assert!(!html.contains("http"), "page refers to another origin");
}

/// A runaway test gets a time-limit error within the bound, the server
/// answers other requests meanwhile, and a worker still finishing a
/// cut-off check makes later requests wait at most the bound.
#[test]
fn runaway_test_is_cut_off_while_others_are_answered() {
    let limit = Duration::from_secs(1);
    let s = server(ServeLimits {
        time: limit,
        workers: 2,
        max_candidates: BIG_BUDGET,
        ..ServeLimits::default()
    });
    let addr = s.addr();
    let runaway = std::thread::spawn(move || {
        let t = Instant::now();
        let mut c = Client::connect(addr, Duration::from_secs(60)).unwrap();
        let r = c
            .post_json(
                "/api/run",
                json!({"source": RUNAWAY}).to_string().as_bytes(),
            )
            .unwrap();
        (r, t.elapsed(), Instant::now())
    });
    // Soon after it started (the engine may give up on it once a quarter of
    // the limit has passed, when it projects it cannot finish in time).
    std::thread::sleep(Duration::from_millis(50));
    // Meanwhile: the lists and a real check are answered.
    let mut c = client(&s);
    let t = Instant::now();
    assert_eq!(c.get("/api/models").unwrap().status, 200);
    let r = c
        .post_json(
            "/api/run",
            json!({"source": read("examples/MP-gpu.litmus")})
                .to_string()
                .as_bytes(),
        )
        .unwrap();
    assert_eq!(r.status, 200, "{}", r.text());
    let answered_at = Instant::now();
    let other = t.elapsed();
    let (r, took, runaway_done_at) = runaway.join().unwrap();
    assert!(
        answered_at < runaway_done_at,
        "the MP check ({other:?}) was not answered while the runaway ran"
    );
    assert_eq!(r.status, 422, "{}", r.text());
    let v = r.json().unwrap();
    assert_eq!(v["limit"], "time");
    assert!(
        v["error"].as_str().unwrap().contains("time limit of 1 s"),
        "{v}"
    );
    // The engine may also refuse before the limit when it projects the
    // search past it (issue 14); either way the answer names the limit.
    assert!(
        took >= limit
            || v["detail"]
                .as_str()
                .is_some_and(|d| d.contains("projected")),
        "answered before the limit: {took:?} {v}"
    );
    assert!(took < limit + Duration::from_secs(3), "took {took:?}");

    // With one worker busy finishing the cut-off check, a second runaway
    // still gets its answer within the bound.
    let t = Instant::now();
    let r = post(&s, &json!({"source": RUNAWAY}));
    assert!(r.status == 422 || r.status == 503, "{}", r.text());
    assert_eq!(r.json().unwrap()["limit"], "time");
    assert!(t.elapsed() < limit + Duration::from_secs(3));
}

/// With a time bound large enough, the candidate budget stops the search
/// and names itself.
#[test]
fn candidate_budget_is_named() {
    let s = server(ServeLimits {
        max_candidates: 5_000,
        time: Duration::from_secs(60),
        ..ServeLimits::default()
    });
    let t = Instant::now();
    let r = post(&s, &json!({"source": RUNAWAY}));
    assert_eq!(r.status, 422, "{}", r.text());
    let v = r.json().unwrap();
    assert_eq!(v["limit"], "search");
    let e = v["error"].as_str().unwrap();
    assert!(e.contains("limit exceeded") && e.contains("budget"), "{e}");
    assert!(t.elapsed() < Duration::from_secs(30));
}

/// The engine stops a cut-off check at the server's deadline, so a
/// one-worker server has its worker back at once: the next request is
/// answered normally, not "busy", and within the bound.
#[test]
fn cut_off_check_frees_its_worker() {
    let limit = Duration::from_millis(700);
    let s = server(ServeLimits {
        time: limit,
        workers: 1,
        max_candidates: BIG_BUDGET,
        ..ServeLimits::default()
    });
    let r = post(&s, &json!({"source": RUNAWAY}));
    assert_eq!(r.status, 422, "{}", r.text());
    assert_eq!(r.json().unwrap()["limit"], "time");
    let t = Instant::now();
    let r = post(&s, &json!({"source": read("examples/MP-gpu.litmus")}));
    assert_eq!(r.status, 200, "{}", r.text());
    // MP-gpu's condition is `~exists` of the stale read: validated.
    assert_eq!(r.json().unwrap()["verdict"], "Ok");
    assert!(t.elapsed() < limit + Duration::from_secs(3));
}

/// `litmix serve --port 0` listens on loopback, says where, and answers;
/// an address it cannot bind is a clear error.
#[test]
fn cli_serves_on_loopback_by_default() {
    use std::io::BufRead;
    let mut child = Command::new(env!("CARGO_BIN_EXE_litmix"))
        .args(["serve", "--port", "0"])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start litmix serve");
    let mut line = String::new();
    std::io::BufReader::new(child.stderr.take().unwrap())
        .read_line(&mut line)
        .expect("first line");
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap_or_else(|| panic!("no URL in '{line}'"));
    let addr: SocketAddr = url
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .parse()
        .unwrap_or_else(|e| panic!("'{url}': {e}"));
    assert!(addr.ip().is_loopback(), "{addr}");
    let r = Client::connect(addr, Duration::from_secs(30))
        .unwrap()
        .get("/api/examples")
        .unwrap();
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(r.status, 200);

    // 192.0.2.1 (TEST-NET-1) is no address of this machine: bind fails at once.
    let o = Command::new(env!("CARGO_BIN_EXE_litmix"))
        .args(["serve", "--host", "192.0.2.1", "--port", "0"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("cannot serve on 192.0.2.1:0"), "{err}");
}

/// Truncated and mutated examples get a verdict or a JSON error, never a
/// crash (500) or a dropped connection.
#[test]
fn mutated_examples_never_crash_the_server() {
    let s = server(ServeLimits {
        max_candidates: 20_000,
        ..ServeLimits::default()
    });
    let mut c = client(&s);
    let ex = c.get("/api/examples").unwrap().json().unwrap();
    let sources: Vec<String> = ex["examples"]
        .as_array()
        .unwrap()
        .iter()
        .step_by(5)
        .map(|e| e["source"].as_str().unwrap().to_string())
        .collect();
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let (mut ok, mut errors) = (0, 0);
    for src in &sources {
        let chars: Vec<char> = src.chars().collect();
        for _ in 0..40 {
            let mut m = chars.clone();
            match next() % 3 {
                0 => m.truncate((next() as usize) % chars.len()),
                1 => {
                    let i = (next() as usize) % m.len();
                    m[i] =
                        ['|', ';', '{', '}', '1', 'x', ' ', '\n', '.', '@'][(next() % 10) as usize];
                }
                _ => {
                    let i = (next() as usize) % m.len();
                    m.remove(i);
                }
            }
            let body =
                json!({"source": m.into_iter().collect::<String>(), "why": true, "graphs": true});
            let r = c
                .post_json("/api/run", body.to_string().as_bytes())
                .unwrap();
            let v = r
                .json()
                .unwrap_or_else(|e| panic!("not JSON ({e}): {}", r.text()));
            match r.status {
                200 => {
                    assert!(v["verdict"].is_string());
                    ok += 1;
                }
                400 | 422 => {
                    assert!(v["error"].is_string());
                    errors += 1;
                }
                s => panic!("status {s}: {v}"),
            }
        }
    }
    println!("{ok} verdicts, {errors} errors");
    assert!(ok > 0 && errors > 0, "{ok} verdicts, {errors} errors");
}

/// On loopback, a request naming another host (DNS rebinding) is refused;
/// loopback names are answered.
#[test]
fn loopback_server_refuses_other_host_names() {
    let s = server(ServeLimits::default());
    for (host, status) in [
        ("evil.example", 403),
        ("evil.example:8080", 403),
        ("127.0.0.1.evil.example", 403),
        ("localhost", 200),
        ("localhost:8080", 200),
        ("127.0.0.1:9", 200),
        ("[::1]:8080", 200),
    ] {
        let mut c = client(&s);
        c.set_host(host);
        let r = c.get("/api/models").unwrap();
        assert_eq!(r.status, status, "{host}: {}", r.text());
        if status == 403 {
            assert!(
                r.json().unwrap()["error"]
                    .as_str()
                    .unwrap()
                    .contains("loopback")
            );
        }
    }
    assert!(!litmix::serve::is_loopback_host("[::1"));
    assert!(!litmix::serve::is_loopback_host(""));
}

// --- The step view of operational models (`POST /api/step`) ---

const FIG4_RSP: &str = "tests/models/rsp-cache/MP.flu+inv-before.diffwg.litmus";
const R_X86: &str = "tests/models/x86tso/R.litmus";

fn step(s: &Running, body: &Json) -> Response {
    client(s)
        .post_json("/api/step", body.to_string().as_bytes())
        .expect("request")
}

/// What `litmix step --model M --replay P file` prints with no commands.
fn cli_step(model: &str, path: &str, picks: &[usize]) -> String {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_litmix"));
    cmd.args(["step", "--model", model]);
    if !picks.is_empty() {
        let p: Vec<String> = picks.iter().map(|i| i.to_string()).collect();
        cmd.arg("--replay").arg(p.join(","));
    }
    let o = cmd
        .arg(path)
        .current_dir(root())
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run litmix step");
    assert!(o.status.success(), "{o:?}");
    String::from_utf8(o.stdout).unwrap()
}

#[test]
fn step_replays_picks_with_the_state_view_litmix_step_shows() {
    let s = server(ServeLimits::default());
    for (model, path, picks) in [
        ("rsp-cache", FIG4_RSP, vec![0, 1, 1]),
        ("rsp-cache-nolock", FIG4_RSP, vec![1, 0]),
        ("lostpop", R_X86, vec![0, 1, 0]),
    ] {
        // Step by step, each pick taken from the previous answer's list.
        let mut taken: Vec<usize> = Vec::new();
        let mut answers = Vec::new();
        for k in 0..=picks.len() {
            let r = step(
                &s,
                &json!({"source": read(path), "model": model, "picks": taken}),
            );
            assert_eq!(r.status, 200, "{model} {taken:?}: {}", r.text());
            let v = r.json().unwrap();
            assert_eq!(v["model"], model);
            assert_eq!(v["picks"], json!(taken));
            assert_eq!(v["history"].as_array().unwrap().len(), taken.len());
            // The same text as `litmix step --replay` prints, and the same
            // view as the library's replay.
            assert_eq!(
                format!("{}\n", v["text"].as_str().unwrap()),
                cli_step(model, path, &taken),
                "{model} {taken:?}"
            );
            let test = litmix::litmus::parse_str("input.litmus", &read(path)).unwrap();
            let lib = litmix::driver::replay_view(&test, model, 2, &taken).unwrap();
            assert_eq!(v["view"], serde_json::to_value(&lib.view).unwrap());
            if k < picks.len() {
                let ts = v["view"]["transitions"].as_array().unwrap();
                let i = picks[k];
                assert!(i < ts.len(), "{model}: pick {i} of {}", ts.len());
                assert_eq!(ts[i]["index"], i);
                let label = ts[i]["label"].as_str().unwrap().to_string();
                taken.push(i);
                answers.push((v, label));
            } else {
                // The history names the transitions picked, in order.
                let labels: Vec<&str> = answers.iter().map(|(_, l)| l.as_str()).collect();
                let hist: Vec<&str> = v["history"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|x| x.as_str().unwrap())
                    .collect();
                assert_eq!(hist, labels, "{model}");
                answers.push((v, String::new()));
            }
        }
        // Undo is the same request with one pick fewer: the earlier state.
        let r = step(
            &s,
            &json!({"source": read(path), "model": model, "picks": &picks[..picks.len() - 1]}),
        );
        assert_eq!(
            r.json().unwrap(),
            answers[picks.len() - 1].0,
            "{model}: undo"
        );
        // The state changes with each pick.
        assert_ne!(answers[0].0["view"], answers[1].0["view"], "{model}");
    }
    // The initial state of the cache machine: empty caches, memory at init.
    let v = step(&s, &json!({"source": read(FIG4_RSP)})).json().unwrap();
    assert_eq!(v["model"], "rsp-cache", "RSP tests default to the machine");
    assert_eq!(
        v["view"]["summary"],
        json!([
            "L1 wg0 (P0): {}",
            "L1 wg1 (P1): {}",
            "L2 dev0: {}",
            "memory: x=0 y=0"
        ])
    );
    // LOST-POP: requests per thread and order constraints appear.
    let v = step(
        &s,
        &json!({"source": read(R_X86), "model": "lostpop", "picks": [0, 0, 0]}),
    )
    .json()
    .unwrap();
    let items: usize = v["view"]["threads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["items"].as_array().unwrap().len())
        .sum();
    assert!(items > 0, "{v}");
}

#[test]
fn step_errors_are_json_with_limits() {
    let s = server(ServeLimits {
        max_picks: 5,
        ..ServeLimits::default()
    });
    // A pick that is not enabled: its position and the good prefix.
    let r = step(&s, &json!({"source": read(FIG4_RSP), "picks": [0, 99]}));
    assert_eq!(r.status, 400);
    let v = r.json().unwrap();
    assert!(
        v["error"]
            .as_str()
            .unwrap()
            .starts_with("step 2: no transition 99:"),
        "{v}"
    );
    assert_eq!(v["pick"], 1);
    assert_eq!(v["valid_picks"], json!([0]));
    // A final state has no transition to pick.
    let t = "RSP one\n{ x=0; }\n P0@wg 0,dev 0 ;\n MOV r0 1 ;\nexists (0:r0=1)\n";
    let v = step(&s, &json!({"source": t, "picks": []})).json().unwrap();
    let mov = v["view"]["transitions"]
        .as_array()
        .unwrap()
        .iter()
        .position(|x| x["label"] == "P0: MOV r0 1")
        .unwrap_or_else(|| panic!("{v}"));
    let v = step(&s, &json!({"source": t, "picks": [mov]}))
        .json()
        .unwrap();
    assert_eq!(v["view"]["outcome"], json!(["1"]), "{v}");
    assert_eq!(v["view"]["transitions"], json!([]), "{v}");
    let r = step(&s, &json!({"source": t, "picks": [mov, 0]}));
    assert_eq!(r.status, 400);
    assert!(r.text().contains("none is enabled"), "{}", r.text());
    // Too many picks: the limit named.
    let r = step(&s, &json!({"source": t, "picks": [0, 0, 0, 0, 0, 0]}));
    assert_eq!(r.status, 422);
    assert_eq!(r.json().unwrap()["limit"], "picks");
    // Not an operational model, by name or by the test's architecture.
    let r = step(&s, &json!({"source": read(R_X86), "model": "x86tso"}));
    assert_eq!(r.status, 400);
    assert!(
        r.text().contains("not an operational model"),
        "{}",
        r.text()
    );
    let r = step(&s, &json!({"source": read(R_X86)}));
    assert_eq!(r.status, 400);
    // A parse error with its position; a construct the machine refuses.
    let r = step(
        &s,
        &json!({"source": read(FIG4_RSP).replace("LD r0 y", "FOO r0 y")}),
    );
    assert_eq!(r.status, 400);
    let v = r.json().unwrap();
    assert!(v["line"].is_u64() && v["col"].is_u64(), "{v}");
    let r = step(&s, &json!({"source": read(R_X86), "model": "rsp-cache"}));
    assert_eq!(r.status, 400);
    assert!(r.json().unwrap()["error"].is_string());
    // Malformed requests.
    let r = step(&s, &json!({"source": t, "picks": [-1]}));
    assert_eq!(r.status, 400);
    assert!(r.text().contains("not a step request"), "{}", r.text());
    let r = step(&s, &json!({"source": t, "steps": [0]}));
    assert_eq!(r.status, 400);
    // 3 MB: 413, as for runs.
    let big = format!("{{\"source\": \"{}\"}}", "x".repeat(3 << 20));
    let r = client(&s)
        .post_json("/api/step", big.as_bytes())
        .expect("413 answer");
    assert_eq!(r.status, 413);
    assert_eq!(r.json().unwrap()["limit"], "body");
}

#[test]
fn operational_models_are_listed_and_run_like_the_cli() {
    let s = server(ServeLimits::default());
    let m = client(&s).get("/api/models").unwrap().json().unwrap();
    let ops: Vec<&str> = m["operational"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        ops,
        [
            "lostpop",
            "lostpop-unreduced",
            "rsp-cache",
            "rsp-cache-nolock",
            "rsp-cache-unreduced"
        ]
    );
    assert_eq!(m["defaults"]["RSP"], "rsp-cache");
    for (model, path) in [("lostpop", R_X86), ("rsp-cache", FIG4_RSP)] {
        let r = post(
            &s,
            &json!({"source": read(path), "model": model, "file": path}),
        );
        assert_eq!(r.status, 200, "{}", r.text());
        assert_eq!(
            without_time(r.json().unwrap()),
            without_time(cli_json(path, &["--model", model])),
            "{model}"
        );
    }
    // A test the machine cannot run: a positioned error, not a limit.
    let r = post(&s, &json!({"source": read(R_X86), "model": "rsp-cache"}));
    assert_eq!(r.status, 400, "{}", r.text());
    let v = r.json().unwrap();
    assert!(v.get("limit").is_none(), "{v}");
    assert_eq!((v["line"].as_u64(), v["col"].as_u64()), (Some(7), Some(2)));
}

/// An operational check past the time limit is cut off by the explorer's
/// own deadline with the time limit named.
#[test]
fn operational_runaway_gets_the_time_limit() {
    let s = server(ServeLimits {
        time: Duration::from_millis(300),
        max_states: 5_000_000,
        ..ServeLimits::default()
    });
    let t = Instant::now();
    // Dat3M's `pso` under LOST-POP: four one-write threads and two
    // readers of four reads each, millions of states even with every
    // reduction (a 4-thread SB ring with forwarding, used before, now
    // takes about a thousand: the sole-writer satisfy).
    let pso = "X86 pso\n{ x=0; y=0; }\n P0 | P1 | P2 | P3 | P4 | P5 ;\n MOV [x],$1 | MOV [x],$2 | MOV [y],$1 | MOV [y],$2 | MOV EAX,[x] | MOV EAX,[y] ;\n | | | | MOV EBX,[x] | MOV EBX,[y] ;\n | | | | MOV ECX,[y] | MOV ECX,[x] ;\n | | | | MOV EDX,[y] | MOV EDX,[x] ;\nexists (4:EAX=1 /\\ 4:EBX=2 /\\ 4:ECX=0 /\\ 4:EDX=1 /\\ 5:EAX=1 /\\ 5:EBX=2 /\\ 5:ECX=0 /\\ 5:EDX=1)\n";
    let r = post(&s, &json!({"source": pso, "model": "lostpop"}));
    assert_eq!(r.status, 422, "{}", r.text());
    assert_eq!(r.json().unwrap()["limit"], "time");
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
}

/// The DOT texts `litmix run --why --dot DIR [--model M] FILE` writes.
fn cli_dots(file: &str, model: Option<&str>) -> std::collections::BTreeSet<String> {
    let dir = std::env::temp_dir().join(format!(
        "litmix-artefacts-{}-{}",
        std::process::id(),
        file.replace('/', "_")
    ));
    let _ = std::fs::remove_dir_all(&dir);
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_litmix"));
    cmd.args(["run", "--why", "--dot"]).arg(&dir);
    if let Some(m) = model {
        cmd.args(["--model", m]);
    }
    cmd.arg(file)
        .current_dir(root())
        .output()
        .expect("run litmix");
    let out = std::fs::read_dir(&dir)
        .expect("dot dir")
        .flatten()
        .map(|e| std::fs::read_to_string(e.path()).expect("dot file"))
        .collect();
    let _ = std::fs::remove_dir_all(&dir);
    out
}

#[test]
fn the_cli_and_the_server_give_the_same_artefacts() {
    let s = server(ServeLimits::default());
    // Witnesses and a forbidden execution (ptx), an explained allowed
    // outcome (a missing proxy fence, ptx75), operational traces (lostpop).
    let cases = [
        ("examples/MP-cta-mismatch.litmus", None, "witness"),
        (
            "tests/models/ptx75/Fig8a-no-fence.litmus",
            Some("ptx75"),
            "allowed-why",
        ),
        ("examples/MP-x86-ptx-sys.litmus", Some("lostpop"), "trace"),
        ("examples/MP-gpu.litmus", None, "forbidden"),
    ];
    for (file, model, kind) in cases {
        let mut body = json!({"source": read(file), "why": true, "graphs": true, "file": file});
        if let Some(m) = model {
            body["model"] = json!(m);
        }
        let r = post(&s, &body);
        assert_eq!(r.status, 200, "{file}: {}", r.text());
        let v = r.json().expect("json");
        let exs = v["executions"].as_array().expect("executions");
        assert!(
            exs.iter().any(|e| e["kind"] == kind),
            "{file}: no {kind} artefact in {exs:?}"
        );
        let server: std::collections::BTreeSet<String> = exs
            .iter()
            .map(|e| e["dot"].as_str().expect("dot").to_string())
            .collect();
        let cli = cli_dots(file, model);
        assert!(!cli.is_empty(), "{file}: the CLI wrote no artefact");
        assert_eq!(cli, server, "{file}: the CLI and the server differ");
    }
}
