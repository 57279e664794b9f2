//! The `litmix` command line.

use clap::{Args, Parser, Subcommand};
use litmix::driver::{FileOutcome, ModelCache, check_path, collect_paths};
use litmix::exec::CheckOptions;
use litmix::report;
use rayon::prelude::*;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};

#[derive(Parser)]
#[command(
    name = "litmix",
    version,
    about = "Check litmus tests against GPU and CPU memory models"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check litmus tests (files or directories of *.litmus and NVLitmus *.test).
    Run(RunArgs),
    /// Write NVLitmus .test files in the herd-style litmus form (one test per template row).
    Convert(ConvertArgs),
    /// Time the checks of whole suites: tests/second and the slowest tests.
    Bench(BenchArgs),
    /// Compare litmix's verdicts with a manifest of expected verdicts.
    Conform(ConformArgs),
    /// List the built-in models.
    Models,
    /// List the built-in compiler mappings.
    Mappings,
    /// Print a source test compiled with a mapping (a litmus test `run` accepts).
    Compile(litmix::mapping::cli::CompileArgs),
    /// Compare source and target models on source tests compiled with a mapping.
    CheckMapping(litmix::mapping::cli::CheckMappingArgs),
    /// Check a mapping on every source program up to a bound.
    VerifyMapping(litmix::mapping::cli::VerifyMappingArgs),
    /// Add up the `verify-mapping --json` summaries of shards.
    Merge(litmix::mapping::cli::MergeArgs),
}

#[derive(Args)]
struct ConvertArgs {
    /// Write one FILE.litmus per test into this directory instead of stdout.
    #[arg(long, short, value_name = "DIR")]
    out: Option<PathBuf>,
    /// NVLitmus .test files.
    #[arg(required = true)]
    files: Vec<PathBuf>,
}

#[derive(Args)]
struct ConformArgs {
    /// Manifest `test,model,Ok|No`; test paths are relative to its folder.
    #[arg(long, default_value = "../shared/oracles/dat3m/expected.csv")]
    expected: PathBuf,
    /// Known differences `test,model,oracle,litmix,reason`.
    #[arg(long, default_value = "tests/known-differences.csv")]
    known: PathBuf,
    /// Only these models (comma-separated); default all in the manifest.
    #[arg(long, value_delimiter = ',')]
    models: Vec<String>,
    #[command(flatten)]
    limits: Limits,
}

#[derive(Args, Clone)]
struct Limits {
    /// Times a backward jump may be taken on one path.
    #[arg(long, default_value_t = 2)]
    unroll: usize,
    /// Give up on a test after this many candidate executions.
    #[arg(long, default_value_t = 2_000_000)]
    max_candidates: u64,
    /// Give up on a test whose thread path has more events than this.
    #[arg(long, default_value_t = 256)]
    max_events: usize,
}

#[derive(Args)]
struct RunArgs {
    /// Model: a built-in name (see `litmix models`) or a .cat file. Default: by the test's arch.
    #[arg(long)]
    model: Option<String>,
    /// One JSON object per test per line.
    #[arg(long)]
    json: bool,
    /// Explain each outcome of the condition the model forbids (axiom and cycle),
    /// and each it allows for a reason the model names (`why_` bindings, e.g.
    /// a missing or misplaced proxy fence).
    #[arg(long)]
    why: bool,
    /// Write Graphviz files of witness executions into this directory.
    #[arg(long, value_name = "DIR")]
    dot: Option<PathBuf>,
    #[command(flatten)]
    limits: Limits,
    /// Litmus files or directories.
    #[arg(required = true)]
    paths: Vec<PathBuf>,
}

#[derive(Args)]
struct BenchArgs {
    /// Model override (default: by arch).
    #[arg(long)]
    model: Option<String>,
    /// How many of the slowest tests to list.
    #[arg(long, default_value_t = 10)]
    slowest: usize,
    /// Repetitions of the whole run (the best is reported).
    #[arg(long, default_value_t = 3)]
    repeat: usize,
    #[command(flatten)]
    limits: Limits,
    /// Files or directories (default: the PTX and X86 oracle suites in
    /// ../shared/oracles/dat3m, without the PTX proxy tests).
    paths: Vec<PathBuf>,
}

fn options(l: &Limits) -> CheckOptions {
    CheckOptions {
        unroll: l.unroll,
        max_candidates: l.max_candidates,
        max_events: l.max_events,
        ..CheckOptions::default()
    }
}

/// Checks a write to stdout: a closed pipe (`litmix run ... | head`) ends
/// the program quietly, any other failure with a message.
fn emit(r: std::io::Result<()>) {
    if let Err(e) = r {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("litmix: cannot write output: {e}");
        std::process::exit(2);
    }
}

/// `println!` that goes through [`emit`].
macro_rules! outln {
    () => { emit(writeln!(std::io::stdout().lock())) };
    ($($t:tt)*) => { emit(writeln!(std::io::stdout().lock(), $($t)*)) };
}

/// `print!` that goes through [`emit`].
macro_rules! out {
    ($($t:tt)*) => { emit(write!(std::io::stdout().lock(), $($t)*)) };
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Run(a) => run(a),
        Command::Convert(a) => convert(a),
        Command::Bench(a) => bench(a),
        Command::Conform(a) => conform(a),
        Command::Mappings => litmix::mapping::cli::list(),
        Command::Compile(a) => litmix::mapping::cli::compile(a),
        Command::CheckMapping(a) => litmix::mapping::cli::check_mapping(a),
        Command::VerifyMapping(a) => litmix::mapping::cli::verify_mapping(a),
        Command::Merge(a) => litmix::mapping::cli::merge(a),
        Command::Models => {
            for b in litmix::models::BUILTINS {
                outln!("{:11} {}", b.name, b.description);
            }
            for (a, t) in litmix::models::ALIASES {
                outln!("{a:11} alias of {t}");
            }
            ExitCode::SUCCESS
        }
    }
}

fn progress(total: usize) -> Option<indicatif::ProgressBar> {
    if total > 1 && std::io::stderr().is_terminal() {
        let pb = indicatif::ProgressBar::new(total as u64);
        pb.set_style(
            indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} {msg}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        Some(pb)
    } else {
        None
    }
}

fn run(a: RunArgs) -> ExitCode {
    let files = collect_paths(&a.paths);
    if files.is_empty() {
        eprintln!("litmix: no litmus files found in the given paths");
        return ExitCode::from(2);
    }
    let mut opts = options(&a.limits);
    opts.why = a.why;
    opts.keep_witnesses = if a.dot.is_some() { 4 } else { 0 };
    if let Some(dir) = &a.dot
        && let Err(e) = std::fs::create_dir_all(dir)
    {
        eprintln!("litmix: cannot create {}: {e}", dir.display());
        return ExitCode::from(2);
    }
    let cache = ModelCache::default();
    let pb = progress(files.len());
    let outcomes: Vec<FileOutcome> = files
        .par_iter()
        .with_max_len(1)
        .flat_map_iter(|f| {
            let o = check_path(f, a.model.as_deref(), &cache, &opts);
            if let Some(pb) = &pb {
                pb.inc(1);
            }
            o
        })
        .collect();
    if let Some(pb) = pb {
        pb.finish_and_clear();
    }
    let mut failed = false;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    for o in &outcomes {
        match o {
            FileOutcome::Failed { file, message } => {
                failed = true;
                if a.json {
                    emit(writeln!(out, "{}", report::json::error(file, message)));
                } else {
                    eprintln!("{message}");
                }
            }
            FileOutcome::Checked { file, test, result } => {
                if a.json {
                    emit(writeln!(
                        out,
                        "{}",
                        report::json::result(file, test, result)
                    ));
                } else {
                    emit(writeln!(out, "{}", report::herd::block(test, result)));
                    if a.why {
                        let why = report::why::explain(test, result);
                        if !why.is_empty() {
                            emit(writeln!(out, "{why}"));
                        }
                    }
                }
                if let Some(dir) = &a.dot {
                    for (i, w) in result.witnesses.iter().enumerate() {
                        let title = format!("{} ({}) witness {}", result.test, result.model, i + 1);
                        let path = dir.join(format!("{}-{}.dot", sanitize(&result.test), i + 1));
                        if let Err(e) =
                            std::fs::write(&path, report::dot::execution(test, &title, w))
                        {
                            eprintln!("litmix: cannot write {}: {e}", path.display());
                            failed = true;
                        }
                    }
                    for (i, f) in result.forbidden.iter().enumerate() {
                        let title = format!(
                            "{} ({}) forbidden by {}",
                            result.test, result.model, f.failure.check
                        );
                        let path = dir.join(format!(
                            "{}-forbidden-{}.dot",
                            sanitize(&result.test),
                            i + 1
                        ));
                        if let Err(e) = std::fs::write(
                            &path,
                            report::dot::execution_with_cycle(
                                test,
                                &title,
                                &f.execution,
                                &f.failure.path,
                            ),
                        ) {
                            eprintln!("litmix: cannot write {}: {e}", path.display());
                            failed = true;
                        }
                    }
                }
            }
        }
    }
    if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

fn sanitize(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "+-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn bench(a: BenchArgs) -> ExitCode {
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
    let opts = options(&a.limits);
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
    outln!(
        "{n} tests ({} files) in {wall:.3} s ({:.0} tests/s, {} threads), {cands} candidate executions, {errors} failed",
        timings.len(),
        n as f64 / wall,
        rayon::current_num_threads()
    );
    timings.sort_by(|a, b| b.1.total_cmp(&a.1));
    outln!("slowest:");
    for (f, t, c, _) in timings.iter().take(a.slowest) {
        outln!("  {:8.2} ms  {:>9} candidates  {f}", t * 1000.0, c);
    }
    if errors > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

fn convert(a: ConvertArgs) -> ExitCode {
    use litmix::litmus::nvlitmus;
    if let Some(dir) = &a.out
        && let Err(e) = std::fs::create_dir_all(dir)
    {
        eprintln!("litmix: cannot create {}: {e}", dir.display());
        return ExitCode::from(2);
    }
    let mut failed = false;
    let mut first = true;
    for f in &a.files {
        if !nvlitmus::is_nvlitmus_path(f) {
            eprintln!(
                "litmix convert: {}: not an NVLitmus .test file",
                f.display()
            );
            failed = true;
            continue;
        }
        let name = f.display().to_string();
        let source = match std::fs::read_to_string(f) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("litmix convert: {name}: {e}");
                failed = true;
                continue;
            }
        };
        for inst in nvlitmus::parse_all(&name, &source) {
            let test = match inst.test {
                Ok(t) => t,
                Err(d) => {
                    eprintln!("{}", d.render());
                    failed = true;
                    continue;
                }
            };
            let doc = match inst.row {
                Some(r) => format!("Converted from {name}, template row {r}"),
                None => format!("Converted from {name}"),
            };
            let text = nvlitmus::to_herd(&test, &doc);
            match &a.out {
                Some(dir) => {
                    let path = dir.join(format!("{}.litmus", sanitize(&test.name)));
                    if let Err(e) = std::fs::write(&path, text) {
                        eprintln!("litmix: cannot write {}: {e}", path.display());
                        failed = true;
                    }
                }
                None => {
                    if !first {
                        outln!();
                    }
                    out!("{text}");
                    first = false;
                }
            }
        }
    }
    if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

fn conform(a: ConformArgs) -> ExitCode {
    use litmix::conformance::{read_expectations, read_known_differences, run};
    let exp = match read_expectations(&a.expected) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("litmix conform: {e}");
            return ExitCode::from(2);
        }
    };
    let known = match read_known_differences(&a.known) {
        Ok(k) => k,
        Err(e) => {
            eprintln!("litmix conform: {e}");
            return ExitCode::from(2);
        }
    };
    let root = a.expected.parent().map(PathBuf::from).unwrap_or_default();
    let models: Vec<&str> = a.models.iter().map(String::as_str).collect();
    let report = run(&root, &exp, &known, &models, &options(&a.limits));
    out!("{}", report.summary());
    if report.passed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
