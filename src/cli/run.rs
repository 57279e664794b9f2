//! `litmix run`: check tests, print herd blocks or JSON, `--why`, `--dot`.

use super::{Limits, emit, options, progress};
use clap::Args;
use litmix::driver::{FileOutcome, ModelCache, check_parsed_path, collect_paths, parse_path};
use litmix::report;
use rayon::prelude::*;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub cat: super::CatArgs,
    /// Print exactly herd7's lines (`[x]` locations, `Undef`, no litmix notes).
    #[arg(long)]
    pub herd_identical: bool,
    /// Print integers in hexadecimal (herd's -hexa).
    #[arg(long)]
    pub hexa: bool,
    /// Model: a built-in name (see `litmix models`) or a .cat file. Default: by the test's arch.
    #[arg(long)]
    pub model: Option<String>,
    /// One JSON object per test per line.
    #[arg(long)]
    pub json: bool,
    /// Explain each outcome of the condition the model forbids (axiom and cycle),
    /// and each it allows for a reason the model names (`why_` bindings, e.g.
    /// a missing or misplaced proxy fence).
    #[arg(long)]
    pub why: bool,
    /// Write Graphviz files of witness executions into this directory.
    #[arg(long, value_name = "DIR")]
    pub dot: Option<PathBuf>,
    /// Operational models: print a transition sequence reaching each outcome
    /// the condition asks about (or say that none is reachable).
    #[arg(long)]
    pub trace: bool,
    /// After each test, a `Stats` line: candidates built, consistent,
    /// partial candidates judged and cut, time (JSON always has them).
    #[arg(long)]
    pub stats: bool,
    #[command(flatten)]
    pub limits: Limits,
    /// Litmus files or directories.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
}

/// An outcome with its standard output text and its standard error line.
type Rendered = (FileOutcome, (String, Option<String>));

/// Files parsed together before they are checked (the model loads beside
/// the first batch's parsing), so that memory holds one batch of tests.
const BATCH: usize = 1024;

/// Runs `litmix run`.
pub fn run(a: RunArgs) -> ExitCode {
    let files = collect_paths(&a.paths);
    if files.is_empty() {
        eprintln!("litmix: no litmus files found in the given paths");
        return ExitCode::from(2);
    }
    let mut opts = options(&a.limits);
    a.cat.apply(&mut opts);
    opts.why = a.why;
    opts.trace = a.trace;
    opts.keep_witnesses = if a.dot.is_some() { 4 } else { 0 };
    if let Some(dir) = &a.dot
        && let Err(e) = std::fs::create_dir_all(dir)
    {
        eprintln!("litmix: cannot create {}: {e}", dir.display());
        return ExitCode::from(2);
    }
    let cache = ModelCache::default();
    let pb = progress(files.len());
    let live = super::live::LiveTests::start();
    // Each outcome with what it prints.
    let mut outcomes: Vec<Rendered> = Vec::with_capacity(files.len());
    for batch in files.chunks(BATCH) {
        // The named model loads while the batch is parsed (it is kept:
        // later batches find it loaded); the default models load on first
        // use, once per arch.
        let (_, parsed) = rayon::join(
            || {
                if let Some(m) = a.model.as_deref() {
                    // An error is reported by each test that needs it.
                    let _ = cache.judge(m);
                }
            },
            || {
                batch
                    .par_iter()
                    .with_max_len(1)
                    .map(|f| parse_path(f))
                    .collect::<Vec<_>>()
            },
        );
        let checked: Vec<Vec<Rendered>> = batch
            .par_iter()
            .zip(parsed)
            .with_max_len(1)
            .map(|(f, parsed)| {
                let mut opts = opts.clone();
                let watch = live.as_ref().map(|l| l.watch(f, &mut opts));
                let o = check_parsed_path(parsed, a.model.as_deref(), &cache, &opts);
                drop(watch);
                let o: Vec<Rendered> = o
                    .into_iter()
                    .map(|o| {
                        let r = render(&o, &a);
                        (o, r)
                    })
                    .collect();
                if let Some(pb) = &pb {
                    pb.inc(1);
                }
                o
            })
            .collect();
        outcomes.extend(checked.into_iter().flatten());
    }
    drop(live);
    if let Some(pb) = pb {
        pb.finish_and_clear();
    }
    let mut failed = false;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    for (o, (text, err)) in &outcomes {
        if let Some(err) = err {
            eprintln!("{err}");
        }
        emit(write!(out, "{text}"));
        match o {
            FileOutcome::Failed { .. } => failed = true,
            FileOutcome::Checked { test, result, .. } => {
                if let Some(dir) = &a.dot {
                    // Every artefact the driver builds: traces, witnesses,
                    // forbidden and explained executions.
                    for art in litmix::driver::artefacts::artefacts(test, result) {
                        let path = dir.join(format!("{}.dot", art.stem));
                        if let Err(e) = std::fs::write(&path, &art.dot) {
                            eprintln!("litmix: cannot write {}: {e}", path.display());
                            failed = true;
                        }
                    }
                }
            }
        }
    }
    // The process ends next: freeing every test and result one by one
    // would only delay that (about a millisecond per hundred tests).
    std::mem::forget(outcomes);
    std::mem::forget(cache);
    if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// What `litmix run` prints for one outcome: its standard output text
/// and its standard error line (built beside the checks, printed in
/// order afterwards).
fn render(o: &FileOutcome, a: &RunArgs) -> (String, Option<String>) {
    use std::fmt::Write as _;
    let mut out = String::new();
    match o {
        FileOutcome::Failed {
            file,
            message,
            herd,
        } => {
            if a.json {
                let _ = writeln!(out, "{}", report::json::error(file, message));
            } else if let (true, Some(line)) = (a.herd_identical, herd) {
                // herd7's own wording (it writes it to stderr too).
                return (out, Some(line.clone()));
            } else {
                return (out, Some(message.clone()));
            }
        }
        FileOutcome::Checked { file, test, result } => {
            if a.json {
                let _ = writeln!(out, "{}", report::json::result(file, test, result));
            } else {
                let style = report::herd::HerdStyle {
                    identical: a.herd_identical,
                    hexa: a.hexa,
                };
                let _ = writeln!(out, "{}", report::herd::block_with(test, result, style));
                if a.stats {
                    let _ = writeln!(out, "{}", report::herd::stats(result));
                }
                if a.trace {
                    out.push_str(&litmix::report::trace::trace_text(test, result));
                }
                if a.why {
                    let why = report::why::explain(test, result);
                    if !why.is_empty() {
                        let _ = writeln!(out, "{why}");
                    }
                }
            }
        }
    }
    (out, None)
}
