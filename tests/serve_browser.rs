//! The playground page in a real browser: headless Chromium driven through
//! chromedriver (Debian's `chromium` and `chromium-driver`; `.ci/run`
//! installs them when missing). Picks examples, runs them with the button
//! and with Ctrl+Enter, checks the verdict, the outcome table and that SVG
//! graphs are drawn, follows a shared link, shows a parse error, walks an
//! operational machine in the step view (pick, undo, picks in the link),
//! and saves screenshots (`$CARGO_TARGET_TMPDIR/litmix-playground.png`,
//! `litmix-step.png`).
//!
//! Without a browser the test fails under CI (`CI` set) and is skipped
//! with a message elsewhere.

use fantoccini::{Client, ClientBuilder, Locator, key::Key};
use litmix::serve::{ServeLimits, start};
use serde_json::json;
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

fn find_binary(names: &[&str]) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    for dir in std::env::split_paths(&path) {
        for n in names {
            let p = dir.join(n);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    None
}

/// chromedriver on a free loopback port, in a process group of its own
/// with the browser it starts; the whole group is killed on drop, so a
/// failing test leaves no browser behind.
struct Driver {
    child: Child,
    port: u16,
}

impl Drop for Driver {
    fn drop(&mut self) {
        if let Ok(pgid) = i32::try_from(self.child.id()) {
            // SAFETY: killpg only sends a signal to the group this test
            // created (chromedriver is its leader).
            unsafe {
                libc::killpg(pgid, libc::SIGKILL);
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_driver(chromedriver: &PathBuf) -> Driver {
    let port = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port();
    let child = Command::new(chromedriver)
        .process_group(0)
        .arg(format!("--port={port}"))
        .arg("--allowed-ips=127.0.0.1")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start chromedriver");
    let driver = Driver { child, port };
    for _ in 0..100 {
        if TcpStream::connect((Ipv4Addr::LOCALHOST, port)).is_ok() {
            return driver;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("chromedriver did not listen on port {port} within 10 s");
}

async fn text_of(c: &Client, css: &str) -> String {
    c.find(Locator::Css(css))
        .await
        .unwrap_or_else(|e| panic!("{css}: {e}"))
        .text()
        .await
        .expect("text")
}

async fn count(c: &Client, css: &str) -> usize {
    c.find_all(Locator::Css(css)).await.expect(css).len()
}

/// Waits for a new result (the status line names the test) and returns
/// the verdict word.
async fn wait_verdict(c: &Client, test: &str) -> String {
    let status = Locator::XPath("//span[@id='status' and contains(., ' under ')]");
    let el = c
        .wait()
        .at_most(Duration::from_secs(30))
        .for_element(status)
        .await
        .expect("a result within 30 s");
    let s = el.text().await.unwrap();
    assert!(s.starts_with(test), "status '{s}' does not name {test}");
    text_of(c, "#verdict .verdict-word").await
}

async fn pick_example(c: &Client, name: &str) {
    c.find(Locator::Id("example"))
        .await
        .expect("example picker")
        .select_by_label(name)
        .await
        .unwrap_or_else(|e| panic!("pick {name}: {e}"));
}

async fn clear_status(c: &Client) {
    c.execute(
        "document.getElementById('status').textContent = '';",
        vec![],
    )
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn playground_in_headless_chromium() {
    let chromium = find_binary(&["chromium", "chromium-browser", "google-chrome"]);
    let chromedriver = find_binary(&["chromedriver"]);
    let (Some(chromium), Some(chromedriver)) = (chromium, chromedriver) else {
        if std::env::var_os("CI").is_some() {
            panic!("chromium and chromedriver are needed (.ci/run installs them with apt-get)");
        }
        println!(
            "SKIPPED: chromium or chromedriver not found (apt-get install chromium chromium-driver)"
        );
        return;
    };
    let server = start(
        SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
        ServeLimits::default(),
    )
    .expect("start server");
    let driver = start_driver(&chromedriver);
    let profile = std::env::temp_dir().join(format!("litmix-chromium-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&profile);
    let caps = json!({
        "goog:chromeOptions": {
            "binary": chromium,
            "args": [
                "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                "--no-first-run", "--disable-background-networking",
                "--disable-component-update", "--disable-sync",
                "--disable-dev-shm-usage", "--window-size=1400,1500",
                format!("--user-data-dir={}", profile.display()),
            ]
        }
    });
    let mut builder = ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new());
    builder.capabilities(caps.as_object().unwrap().clone());
    let c = builder
        .connect(&format!("http://127.0.0.1:{}", driver.port))
        .await
        .expect("a browser session");

    c.goto(&format!("{}/", server.url())).await.expect("page");
    c.wait()
        .at_most(Duration::from_secs(20))
        .for_element(Locator::Css("body[data-ready='true']"))
        .await
        .expect("page ready");
    assert_eq!(c.title().await.unwrap(), "litmix playground");
    assert!(count(&c, "#example option").await >= 30);
    assert!(count(&c, "#model option").await >= 9);
    // Highlighting: the editor shows coloured instructions.
    assert!(count(&c, "#editor .tok-op").await > 0);

    // 1. An allowed outcome with the Run button: a witness graph.
    pick_example(&c, "Fig2b-MP-ptx-rel.gpu+x86").await;
    let model = c.find(Locator::Id("model")).await.unwrap();
    assert_eq!(model.prop("value").await.unwrap().as_deref(), Some("cmm"));
    c.find(Locator::Id("run"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    assert_eq!(wait_verdict(&c, "Fig2b-MP-ptx-rel.gpu+x86").await, "Ok");
    assert!(count(&c, "#graphs figure.witness svg.execution").await >= 1);
    assert!(count(&c, "#outcomes tr.allowed").await == 4);

    // 2. A forbidden outcome with Ctrl+Enter: the forbidden row, the why
    //    text and a graph with the cycle drawn.
    clear_status(&c).await;
    pick_example(&c, "Fig2a-MP-ptx-rel.sys+x86").await;
    let editor = c.find(Locator::Id("source")).await.unwrap();
    editor
        .send_keys(&(Key::Control + &Key::Enter))
        .await
        .unwrap();
    assert_eq!(wait_verdict(&c, "Fig2a-MP-ptx-rel.sys+x86").await, "No");
    let forbidden = text_of(&c, "#outcomes tr.forbidden").await;
    assert!(
        forbidden.contains("1:EAX=1; 1:EBX=0;") && forbidden.contains("CMM-Causality"),
        "{forbidden}"
    );
    assert!(
        text_of(&c, "#why-text")
            .await
            .contains("violates CMM-Causality")
    );
    assert_eq!(count(&c, "#graphs figure.forbidden svg.execution").await, 1);
    // Events as boxes, po/rf/co/fr edges, cycle steps drawn.
    assert_eq!(count(&c, "figure.forbidden svg .node").await, 7);
    for rel in ["po", "rf", "co", "fr"] {
        assert!(
            count(&c, &format!("figure.forbidden svg path.rel-{rel}")).await > 0,
            "no {rel} edge drawn"
        );
    }
    assert!(count(&c, "figure.forbidden svg path.cycle").await >= 3);
    let png = c.screenshot().await.expect("screenshot");
    assert!(png.starts_with(b"\x89PNG") && png.len() > 10_000);
    let shot = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("litmix-playground.png");
    std::fs::write(&shot, &png).expect("write screenshot");
    println!("screenshot: {}", shot.display());

    // 3. The shared link holds the test and the model, and runs on load.
    c.find(Locator::Id("share"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let url = c.current_url().await.unwrap();
    let fragment = url.fragment().unwrap_or("").to_string();
    assert!(fragment.contains("model=cmm&test="), "{fragment}");
    c.goto("about:blank").await.unwrap();
    c.goto(url.as_str()).await.unwrap();
    assert_eq!(wait_verdict(&c, "Fig2a-MP-ptx-rel.sys+x86").await, "No");
    let source: String = c
        .execute("return document.getElementById('source').value;", vec![])
        .await
        .unwrap()
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        source.starts_with("X86+PTX Fig2a-MP-ptx-rel.sys+x86"),
        "{source}"
    );

    // 4. A parse error: shown with its position, the line marked.
    clear_status(&c).await;
    c.execute(
        "const t = document.getElementById('source');\
         t.value = t.value.replace('st.weak x', 'st.bogus x');\
         t.dispatchEvent(new Event('input'));",
        vec![],
    )
    .await
    .unwrap();
    c.find(Locator::Id("run"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let err = c
        .wait()
        .at_most(Duration::from_secs(30))
        .for_element(Locator::Id("error"))
        .await
        .expect("an error box")
        .text()
        .await
        .unwrap();
    assert!(
        err.contains("input.litmus:5:5: error: unknown qualifier"),
        "{err}"
    );
    assert_eq!(text_of(&c, "#editor .gutter .marked").await, "5");

    // 5. An operational example: the step view (state, enabled transitions
    //    as buttons, pick, undo), hidden again for an axiomatic model.
    assert!(
        !c.find(Locator::Id("step"))
            .await
            .unwrap()
            .is_displayed()
            .await
            .unwrap(),
        "no step view for cmm"
    );
    clear_status(&c).await;
    pick_example(&c, "MP.flu+inv-before.diffwg").await;
    let model = c.find(Locator::Id("model")).await.unwrap();
    assert_eq!(
        model.prop("value").await.unwrap().as_deref(),
        Some("rsp-cache")
    );
    let steps_taken = |n: usize| {
        let c = c.clone();
        async move {
            c.wait()
                .at_most(Duration::from_secs(30))
                .for_element(Locator::XPath(&format!(
                    "//span[@id='step-count' and starts-with(., '{n} step')]"
                )))
                .await
                .unwrap_or_else(|e| panic!("{n} steps taken: {e}"));
        }
    };
    steps_taken(0).await;
    let initial = text_of(&c, "#step-summary").await;
    assert_eq!(
        initial,
        "L1 wg0 (P0): {}\nL1 wg1 (P1): {}\nL2 dev0: {}\nmemory: x=0 y=0"
    );
    let buttons = count(&c, "#step-transitions button.pick").await;
    assert!(buttons >= 2, "{buttons} transitions");
    assert!(text_of(&c, "#step-state").await.contains("next: ST 1 x"));
    // Run works with the machine too.
    c.find(Locator::Id("run"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    assert_eq!(wait_verdict(&c, "MP.flu+inv-before.diffwg").await, "Ok");
    // Pick P0's store: the L1 of work-group 0 now holds x dirty.
    let store = c
        .find(Locator::XPath(
            "//div[@id='step-transitions']/button[contains(., 'P0: ST 1 x')]",
        ))
        .await
        .expect("a button for P0's store");
    store.click().await.unwrap();
    steps_taken(1).await;
    let after = text_of(&c, "#step-summary").await;
    assert!(after.starts_with("L1 wg0 (P0): {x↦D,V 1} [x]"), "{after}");
    assert!(text_of(&c, "#step-history").await.contains("P0: ST 1 x"));
    assert!(text_of(&c, "#step-state").await.contains("next: FLU_L1 WG"));
    // A second pick, then the link carries the picks.
    c.find(Locator::Css("#step-transitions button.pick"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    steps_taken(2).await;
    let shot = c.screenshot().await.expect("screenshot");
    let step_shot = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("litmix-step.png");
    std::fs::write(&step_shot, &shot).expect("write screenshot");
    println!("screenshot: {}", step_shot.display());
    c.find(Locator::Id("share"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let url = c.current_url().await.unwrap();
    let fragment = url.fragment().unwrap_or("").to_string();
    assert!(
        fragment.starts_with("model=rsp-cache&test=") && fragment.ends_with("&picks=0,0"),
        "{fragment}"
    );
    // Undo twice: back to the initial state.
    for n in [1, 0] {
        c.find(Locator::Id("step-undo"))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();
        steps_taken(n).await;
    }
    assert_eq!(text_of(&c, "#step-summary").await, initial);
    assert_eq!(count(&c, "#step-transitions button.pick").await, buttons);
    // The shared link restores the two steps.
    c.goto("about:blank").await.unwrap();
    c.goto(url.as_str()).await.unwrap();
    steps_taken(2).await;
    assert!(text_of(&c, "#step-history").await.contains("P0: ST 1 x"));
    // LOST-POP: requests per thread and order constraints.
    pick_example(&c, "R").await;
    steps_taken(0).await;
    for n in 1..=3 {
        c.find(Locator::Css("#step-transitions button.pick"))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();
        steps_taken(n).await;
    }
    let state = text_of(&c, "#step-state").await;
    assert!(state.contains("P0#1 MOV [y],$1 (writes 1)"), "{state}");
    let order = text_of(&c, "#step-constraints").await;
    assert!(order.contains("P0#0 → P0#1 @sys"), "{order}");
    assert!(
        text_of(&c, "#step-transitions")
            .await
            .contains("accept P1: MOV EAX,[x]")
    );
    let shot = c.screenshot().await.expect("screenshot");
    std::fs::write(
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("litmix-step-lostpop.png"),
        &shot,
    )
    .expect("write screenshot");
    // Back to an axiomatic model: the step view goes away.
    c.find(Locator::Id("model"))
        .await
        .unwrap()
        .select_by_value("sc")
        .await
        .unwrap();
    assert!(
        !c.find(Locator::Id("step"))
            .await
            .unwrap()
            .is_displayed()
            .await
            .unwrap()
    );

    c.close().await.expect("close the browser");
    drop(driver);
    let _ = std::fs::remove_dir_all(&profile);
}
