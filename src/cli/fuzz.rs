//! `litmix fuzz`: the mutation fuzzer (`litmix::fuzz`) from the command
//! line; findings are written into a directory, ready to be moved into
//! `tests/fuzz-regressions/`.

use clap::Args;
use litmix::fuzz::{self, Config};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Args)]
pub struct FuzzArgs {
    /// Stop after this many seconds (default 60; the long run is 600).
    #[arg(long, default_value_t = 60.0)]
    pub seconds: f64,
    /// Stop after this many inputs (whichever comes first).
    #[arg(long)]
    pub inputs: Option<u64>,
    /// Seed of the random mutations (the same seed repeats a run).
    #[arg(long, default_value_t = 14)]
    pub seed: u64,
    /// Per-input deadline in seconds: an input without an answer by then is
    /// a finding.
    #[arg(long, default_value_t = 3.0)]
    pub limit: f64,
    /// Where findings are written (created when needed).
    #[arg(long, default_value = "fuzz-findings")]
    pub out: PathBuf,
    /// Seed files or directories (default: examples/, models/, mappings/, tests/models/
    /// and ../shared/oracles).
    pub corpus: Vec<PathBuf>,
}

/// Runs `litmix fuzz`.
pub fn fuzz(a: FuzzArgs) -> ExitCode {
    let dirs = if a.corpus.is_empty() {
        fuzz::default_seed_dirs(&PathBuf::from("."))
    } else {
        a.corpus.clone()
    };
    let seeds = fuzz::seeds(&dirs);
    if seeds.is_empty() {
        eprintln!("litmix: no .litmus, .test or .cat seeds under {dirs:?}");
        return ExitCode::from(2);
    }
    let config = Config {
        seed: a.seed,
        max_inputs: a.inputs,
        duration: Some(Duration::from_secs_f64(a.seconds.max(0.0))),
        limit: Duration::from_secs_f64(a.limit.max(0.001)),
        max_mutations: 4,
    };
    eprintln!(
        "litmix fuzz: {} seeds, seed {}, {} s, limit {} s per input",
        seeds.len(),
        a.seed,
        a.seconds,
        a.limit
    );
    let mut written = 0;
    let report = fuzz::run(&config, &seeds, |f| {
        let _ = std::fs::create_dir_all(&a.out);
        let path = a.out.join(&f.input.name);
        match std::fs::write(&path, &f.input.text) {
            Ok(()) => written += 1,
            Err(e) => eprintln!("litmix: cannot write {}: {e}", path.display()),
        }
        eprintln!(
            "finding {:?} after {:.2} s: {}",
            f.verdict,
            f.seconds,
            path.display()
        );
    });
    outln!(
        "{} inputs ({} litmus, {} cat, {} mapping), {} findings written to {}",
        report.inputs,
        report.litmus,
        report.cat,
        report.mapping,
        written,
        a.out.display()
    );
    if let Some((first_line, s)) = &report.slowest {
        outln!("slowest answered input: {s:.2} s ({first_line})");
    }
    if report.findings.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
