//! `litmix bench`: time whole suites, list the slowest tests.

use super::{Limits, options};
use clap::Args;
use litmix::driver::{FileOutcome, ModelCache, check_path, collect_paths};
use rayon::prelude::*;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};

#[derive(Args)]
pub struct BenchArgs {
    #[command(flatten)]
    pub cat: super::CatArgs,
    /// Model override (default: by arch).
    #[arg(long)]
    pub model: Option<String>,
    /// How many of the slowest tests to list.
    #[arg(long, default_value_t = 10)]
    pub slowest: usize,
    /// Repetitions of the whole run (the best is reported).
    #[arg(long, default_value_t = 3)]
    pub repeat: usize,
    #[command(flatten)]
    pub limits: Limits,
    /// Files or directories (default: the PTX and X86 oracle suites in
    /// ../shared/oracles/dat3m, without the PTX proxy tests).
    pub paths: Vec<PathBuf>,
}

/// Runs `litmix bench`.
pub fn bench(a: BenchArgs) -> ExitCode {
    let files: Vec<PathBuf> = if a.paths.is_empty() {
        // The default suites: PTX (without the proxy tests, as before they
        // were supported, so timings stay comparable) and X86.
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        let dat3m = ["../shared/oracles/dat3m", "../../shared/oracles/dat3m"]
            .iter()
            .map(|d| root.join(d))
            .find(|d| d.is_dir())
            .unwrap_or_else(|| root.join("../shared/oracles/dat3m"));
        let dirs: Vec<PathBuf> = vec![
            dat3m.join("PTX/Manual"),
            dat3m.join("PTX/Nvidia"),
            dat3m.join("X86"),
        ]
        .into_iter()
        .filter(|p| p.is_dir())
        .collect();
        collect_paths(&dirs)
            .into_iter()
            .filter(|p| {
                !p.strip_prefix(&dat3m)
                    .unwrap_or(p)
                    .components()
                    .any(|c| c.as_os_str() == "proxy")
            })
            .collect()
    } else {
        collect_paths(&a.paths)
    };
    if files.is_empty() {
        eprintln!(
            "litmix bench: no litmus files found (pass paths, or place ../shared/oracles beside the repository)"
        );
        return ExitCode::from(2);
    }
    let mut opts = options(&a.limits);
    a.cat.apply(&mut opts);
    let cache = ModelCache::default();
    // (wall seconds, per-file (name, seconds, candidates), failures) of the fastest run.
    type Run = (f64, Vec<(String, f64, u64, usize)>, usize);
    let mut best: Option<Run> = None;
    for _ in 0..a.repeat.max(1) {
        let errors = AtomicUsize::new(0);
        let start = std::time::Instant::now();
        let timings: Vec<(String, f64, u64, usize)> = files
            .par_iter()
            .with_max_len(1)
            .map(|f| {
                let t = std::time::Instant::now();
                let outcomes = check_path(f, a.model.as_deref(), &cache, &opts);
                let mut cands = 0;
                for o in &outcomes {
                    match o {
                        FileOutcome::Checked { result, .. } => cands += result.candidates,
                        FileOutcome::Failed { .. } => {
                            errors.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                }
                (
                    f.display().to_string(),
                    t.elapsed().as_secs_f64(),
                    cands,
                    outcomes.len(),
                )
            })
            .collect();
        let wall = start.elapsed().as_secs_f64();
        if best.as_ref().is_none_or(|b| wall < b.0) {
            best = Some((wall, timings, errors.load(Ordering::Relaxed)));
        }
    }
    let Some((wall, mut timings, errors)) = best else {
        return ExitCode::from(2);
    };
    let n: usize = timings.iter().map(|t| t.3).sum();
    let cands: u64 = timings.iter().map(|t| t.2).sum();
    let operational = a
        .model
        .as_deref()
        .is_some_and(litmix::driver::is_operational);
    let work = if operational {
        // For a machine the count is of explored states (failed tests,
        // e.g. past --max-states, count nothing).
        format!(
            "{cands} machine states explored ({:.0} states/s)",
            cands as f64 / wall
        )
    } else {
        format!("{cands} candidate executions")
    };
    outln!(
        "{n} tests ({} files) in {wall:.3} s ({:.0} tests/s, {} threads), {work}, {errors} failed",
        timings.len(),
        n as f64 / wall,
        rayon::current_num_threads()
    );
    timings.sort_by(|a, b| b.1.total_cmp(&a.1));
    outln!("slowest:");
    for (f, t, c, _) in timings.iter().take(a.slowest) {
        let unit = if operational { "states" } else { "candidates" };
        outln!("  {:8.2} ms  {:>9} {unit}  {f}", t * 1000.0, c);
    }
    if errors > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
