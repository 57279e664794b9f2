//! A progress line on stderr (terminals only) for each test running past
//! 2 s: candidates built, partial candidates judged and cut so far.

use litmix::exec::{CheckOptions, Progress};
use std::io::IsTerminal;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Tests shown after this long.
const SHOW_AFTER: Duration = Duration::from_secs(2);

type Running = Arc<Mutex<Vec<(String, Instant, Arc<Progress>)>>>;

/// The running tests and the thread that prints them.
pub struct LiveTests {
    running: Running,
    stop: Arc<AtomicBool>,
    printer: Option<std::thread::JoinHandle<()>>,
}

/// Removes its test from the live list when dropped.
pub struct Watch {
    running: Running,
    name: String,
}

impl Drop for Watch {
    fn drop(&mut self) {
        if let Ok(mut r) = self.running.lock()
            && let Some(i) = r.iter().position(|e| e.0 == self.name)
        {
            r.remove(i);
        }
    }
}

impl LiveTests {
    /// Starts the printer when stderr is a terminal.
    pub fn start() -> Option<LiveTests> {
        if !std::io::stderr().is_terminal() {
            return None;
        }
        let running: Running = Arc::default();
        let stop = Arc::new(AtomicBool::new(false));
        let (r, s) = (running.clone(), stop.clone());
        let printer = std::thread::spawn(move || {
            while !s.load(Relaxed) {
                std::thread::sleep(Duration::from_millis(500));
                let Ok(list) = r.lock() else { return };
                for (name, since, p) in list.iter() {
                    if since.elapsed() >= SHOW_AFTER {
                        eprint!(
                            "\r\x1b[K{name}: {:.0} s, {} candidates, {} partial, {} pruned",
                            since.elapsed().as_secs_f64(),
                            p.candidates.load(Relaxed),
                            p.partial.load(Relaxed),
                            p.pruned.load(Relaxed)
                        );
                    }
                }
            }
            eprint!("\r\x1b[K");
        });
        Some(LiveTests {
            running,
            stop,
            printer: Some(printer),
        })
    }

    /// Registers the test of `file`, giving `opts` its counters.
    pub fn watch(&self, file: &Path, opts: &mut CheckOptions) -> Watch {
        let p = Arc::new(Progress::default());
        opts.progress = Some(p.clone());
        let name = file.display().to_string();
        if let Ok(mut r) = self.running.lock() {
            r.push((name.clone(), Instant::now(), p));
        }
        Watch {
            running: self.running.clone(),
            name,
        }
    }
}

impl Drop for LiveTests {
    fn drop(&mut self) {
        self.stop.store(true, Relaxed);
        if let Some(h) = self.printer.take() {
            let _ = h.join();
        }
    }
}
