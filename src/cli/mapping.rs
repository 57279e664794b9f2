//! The mapping subcommands, called from `main.rs`: argument structs (clap)
//! and their implementations.

use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

/// `litmix compile`.
#[derive(Args)]
pub struct CompileArgs {
    /// Mapping: a built-in name (see `litmix mappings`) or a mapping file.
    #[arg(long)]
    pub mapping: String,
    /// Source litmus files (C / OpenCL).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
}

/// `litmix mappings`: lists the built-in mappings.
pub fn list() -> ExitCode {
    for b in litmix::mapping::BUILTINS {
        match litmix::mapping::format::parse(b.name, b.source) {
            Ok(m) => println!(
                "{:22} {} -> {}  {}",
                m.name, m.source, m.target, m.description
            ),
            Err(d) => {
                eprintln!("{}", d.render());
                return ExitCode::from(2);
            }
        }
    }
    ExitCode::SUCCESS
}

/// `litmix compile`: prints each file compiled with the mapping.
pub fn compile(a: CompileArgs) -> ExitCode {
    let m = match litmix::mapping::load(&a.mapping) {
        Ok(m) => m,
        Err(d) => {
            eprintln!("{}", d.render());
            return ExitCode::from(2);
        }
    };
    let mut failed = false;
    for (i, f) in a.files.iter().enumerate() {
        let src = match litmix::litmus::parse_file(f) {
            Ok(t) => t,
            Err(d) => {
                eprintln!("{}", d.render());
                failed = true;
                continue;
            }
        };
        match litmix::mapping::compile::compile(&m, &src) {
            Ok(c) => {
                if i > 0 {
                    println!();
                }
                print!("{}", c.text);
            }
            Err(d) => {
                eprintln!("{}", d.render());
                failed = true;
            }
        }
    }
    if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// Limits shared by the mapping subcommands.
#[derive(Args, Clone)]
pub struct MappingLimits {
    /// Times a backward jump may be taken on one path.
    #[arg(long, default_value_t = 2)]
    pub unroll: usize,
    /// Give up on a test after this many candidate executions.
    #[arg(long, default_value_t = 2_000_000)]
    pub max_candidates: u64,
    /// Target model instead of the mapping's (e.g. ptx75 for sc11-ptx).
    #[arg(long)]
    pub target_model: Option<String>,
}

impl MappingLimits {
    fn options(&self, why: bool) -> litmix::mapping::check::Options {
        litmix::mapping::check::Options {
            check: litmix::exec::CheckOptions {
                unroll: self.unroll,
                max_candidates: self.max_candidates,
                ..Default::default()
            },
            why,
            target_model: self.target_model.clone(),
        }
    }
}

/// `litmix check-mapping`.
#[derive(Args)]
pub struct CheckMappingArgs {
    /// Mapping: a built-in name (see `litmix mappings`) or a mapping file.
    #[arg(long)]
    pub mapping: String,
    /// One JSON object per test per line.
    #[arg(long)]
    pub json: bool,
    /// For an unsound test: the source axiom forbidding the first extra
    /// state and a target execution reaching it.
    #[arg(long)]
    pub why: bool,
    #[command(flatten)]
    pub limits: MappingLimits,
    /// Source litmus files or directories.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
}

/// A report as the JSON object of `check-mapping --json`.
pub fn report_json(r: &litmix::mapping::check::Report) -> serde_json::Value {
    let state = |st: &[litmix::ir::Value]| {
        let mut o = serde_json::Map::new();
        for (n, v) in r.observed.iter().zip(st) {
            o.insert(
                n.clone(),
                serde_json::Value::String(litmix::exec::value_text(&r.source, *v)),
            );
        }
        serde_json::Value::Object(o)
    };
    serde_json::json!({
        "file": r.file,
        "test": r.test,
        "mapping": r.mapping,
        "source_model": r.source_model,
        "target_model": r.target_model,
        "verdict": r.verdict.name(),
        "extra_states": r.extra_states.iter().map(|s| state(s)).collect::<Vec<_>>(),
        "source_states": r.source_states.len(),
        "target_states": r.target_states.len(),
        "undefined_flags": r.undefined_flags,
    })
}

/// The text block of `check-mapping` for one report.
pub fn report_text(r: &litmix::mapping::check::Report) -> String {
    let mut out = format!(
        "Test {} mapping {} ({} -> {}): {}\n",
        r.test,
        r.mapping,
        r.source_model,
        r.target_model,
        r.verdict.name()
    );
    match r.verdict {
        litmix::mapping::check::Verdict::Racy => out.push_str(&format!(
            "  the source program is undefined under {}: {}\n",
            r.source_model,
            r.undefined_flags.join(", ")
        )),
        _ => {
            out.push_str(&format!(
                "  source states {}, target states {}\n",
                r.source_states.len(),
                r.target_states.len()
            ));
            for s in &r.extra_states {
                out.push_str(&format!("  extra: {}\n", r.state_text(s)));
            }
        }
    }
    if !r.why.is_empty() {
        out.push_str(&r.why);
    }
    out
}

/// `litmix check-mapping`: exit 0 when every test is sound or racy, 1 when
/// some test is unsound, 2 on errors.
pub fn check_mapping(a: CheckMappingArgs) -> ExitCode {
    use rayon::prelude::*;
    let m = match litmix::mapping::load(&a.mapping) {
        Ok(m) => m,
        Err(d) => {
            eprintln!("{}", d.render());
            return ExitCode::from(2);
        }
    };
    let files = litmix::driver::collect_paths(&a.paths);
    if files.is_empty() {
        eprintln!("litmix: no litmus files found in the given paths");
        return ExitCode::from(2);
    }
    let opts = a.limits.options(a.why);
    let cache = litmix::driver::ModelCache::default();
    let results: Vec<Result<litmix::mapping::check::Report, String>> = files
        .par_iter()
        .with_max_len(1)
        .map(|f| {
            let src = litmix::litmus::parse_file(f).map_err(|d| d.render())?;
            litmix::mapping::check::check_test(&m, &src, &f.display().to_string(), &cache, &opts)
        })
        .collect();
    let (mut errors, mut unsound) = (false, false);
    for r in results {
        match r {
            Ok(r) => {
                unsound |= r.verdict == litmix::mapping::check::Verdict::Unsound;
                if a.json {
                    println!("{}", report_json(&r));
                } else {
                    print!("{}", report_text(&r));
                }
            }
            Err(e) => {
                errors = true;
                if a.json {
                    println!("{}", serde_json::json!({ "error": e }));
                } else {
                    eprintln!("{e}");
                }
            }
        }
    }
    if errors {
        ExitCode::from(2)
    } else if unsound {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// `litmix verify-mapping`.
#[derive(Args)]
pub struct VerifyMappingArgs {
    /// Mapping: a built-in name (see `litmix mappings`) or a mapping file.
    #[arg(long)]
    pub mapping: String,
    /// Check every source program of up to this many events (a load, store
    /// or fence is one event, and so is an RMW).
    #[arg(long)]
    pub bound: usize,
    /// Progress lines and, last, one summary line, as JSON.
    #[arg(long)]
    pub json: bool,
    /// Stop after the smallest size with a counterexample; report one.
    #[arg(long)]
    pub stop_at_first: bool,
    /// Write each counterexample here: NAME.litmus (source) and
    /// NAME.TARGET.litmus (compiled), both with the extra state as condition.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Run the K-th of M deterministic slices of the programs (1 <= K <= M).
    #[arg(long, value_name = "K/M", default_value = "1/1")]
    pub shard: String,
    /// Keep scope annotations that cover the same threads as a narrower one.
    #[arg(long)]
    pub all_scopes: bool,
    /// At most this many threads (default: the bound).
    #[arg(long)]
    pub max_threads: Option<usize>,
    /// At most this many locations (default: the bound).
    #[arg(long)]
    pub max_locations: Option<usize>,
    /// At most this many GPU work-groups, over all devices (default: the
    /// bound).
    #[arg(long)]
    pub max_groups: Option<usize>,
    /// At most this many events in one thread (default: the bound).
    #[arg(long)]
    pub max_thread_size: Option<usize>,
    /// Only these memory orders (comma-separated: na,rlx,acq,rel,acq_rel,sc).
    #[arg(long, value_delimiter = ',')]
    pub orders: Vec<String>,
    /// Only count the programs of the space (by events), check nothing.
    #[arg(long)]
    pub count: bool,
    /// Turn off the reductions (docs/mappings.md, "Reductions"): the plain
    /// canonical enumeration, to cross-check them.
    #[arg(long)]
    pub no_reduce: bool,
    /// Keep programs without a communication cycle (docs/mappings.md,
    /// "Reductions", item 13), to cross-check that cut alone.
    #[arg(long)]
    pub no_cycle_cut: bool,
    /// Check every program on its own instead of deciding it from the
    /// weaker programs of its shape checked before it (docs/mappings.md,
    /// "Checking a program in a campaign"), to cross-check that shortcut
    #[arg(long)]
    pub no_dominance: bool,
    #[command(flatten)]
    pub limits: MappingLimits,
}

/// `litmix verify-mapping`: exit 0 with no counterexample, 1 with some, 2
/// on errors.
pub fn verify_mapping(a: VerifyMappingArgs) -> ExitCode {
    use litmix::mapping::verify::{self, Event};
    use std::io::IsTerminal;
    let m = match litmix::mapping::load(&a.mapping) {
        Ok(m) => m,
        Err(d) => {
            eprintln!("{}", d.render());
            return ExitCode::from(2);
        }
    };
    let shard = match verify::parse_shard(&a.shard) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("litmix: {e}");
            return ExitCode::from(2);
        }
    };
    if a.bound == 0 || a.bound > 12 {
        eprintln!("litmix: --bound must be between 1 and 12");
        return ExitCode::from(2);
    }
    if let Some(dir) = &a.out
        && let Err(e) = std::fs::create_dir_all(dir)
    {
        eprintln!("litmix: cannot create {}: {e}", dir.display());
        return ExitCode::from(2);
    }
    let o = verify::Options {
        bound: a.bound,
        shard,
        stop_at_first: a.stop_at_first,
        out: a.out.clone(),
        check: a.limits.options(false),
        all_scopes: a.all_scopes,
        max_threads: a.max_threads,
        max_locations: a.max_locations,
        max_groups: a.max_groups,
        max_thread_size: a.max_thread_size,
        count_only: a.count,
        orders: a.orders.clone(),
        no_reduce: a.no_reduce,
        no_cycle_cut: a.no_cycle_cut,
        no_dominance: a.no_dominance,
    };
    if let Some(bad) = a
        .orders
        .iter()
        .find(|o| !litmix::mapping::format::ORDERS.contains(&o.as_str()))
    {
        eprintln!(
            "litmix: unknown memory order '{bad}' (expected {})",
            litmix::mapping::format::ORDERS.join(", ")
        );
        return ExitCode::from(2);
    }
    let bar: std::sync::OnceLock<indicatif::ProgressBar> = std::sync::OnceLock::new();
    let tty = !a.json && std::io::stderr().is_terminal();
    let last = std::sync::Mutex::new(std::time::Instant::now());
    let total = std::sync::atomic::AtomicUsize::new(0);
    let json = a.json;
    let on_event = |e: Event<'_>| match e {
        Event::Total(n, items) => {
            total.store(n, std::sync::atomic::Ordering::Relaxed);
            if tty {
                // 0: not counted (--stop-at-first), a spinner without a total.
                let (pb, template) = if n == 0 {
                    (
                        indicatif::ProgressBar::new_spinner(),
                        format!(
                            "{{spinner}} {{pos}} {}, {{msg}} ({{elapsed}})",
                            items.name()
                        ),
                    )
                } else {
                    (
                        indicatif::ProgressBar::new(n as u64),
                        format!(
                            "{{bar:40}} {{pos}}/{{len}} {}, {{msg}} ({{elapsed}}, eta {{eta}})",
                            items.name()
                        ),
                    )
                };
                pb.set_style(
                    indicatif::ProgressStyle::with_template(&template)
                        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
                );
                let _ = bar.set(pb);
            }
        }
        Event::Progress(d) => {
            if let Some(pb) = bar.get() {
                pb.set_position(d.items as u64);
                pb.set_message(if d.of == verify::Items::Shapes {
                    format!("{} programs, {} counterexamples", d.programs, d.found)
                } else {
                    format!("{} counterexamples", d.found)
                });
            } else if json && let Ok(mut t) = last.lock() {
                let n = total.load(std::sync::atomic::Ordering::Relaxed);
                if t.elapsed().as_secs_f64() >= 1.0 || d.items == n {
                    *t = std::time::Instant::now();
                    let total = (n > 0).then_some(n);
                    println!(
                        "{}",
                        serde_json::json!({"progress": d.items, "total": total, "of": d.of.name(),
                            "programs": d.programs, "counterexamples": d.found})
                    );
                }
            }
        }
        Event::Found(c) => {
            let line = format!(
                "counterexample {} ({} events): {}\n  extra state: {}",
                c.name, c.events, c.program, c.extra_state
            );
            if json {
                println!("{}", serde_json::json!({"counterexample": c}));
            } else if let Some(pb) = bar.get() {
                pb.println(line);
            } else {
                println!("{line}");
            }
        }
        Event::Error(e) => {
            if let Some(pb) = bar.get() {
                pb.println(e);
            } else {
                eprintln!("{e}");
            }
        }
    };
    let s = verify::run(&m, &o, &on_event);
    if let Some(pb) = bar.get() {
        pb.finish_and_clear();
    }
    print_summary(&s, json);
    if s.errors > 0 {
        ExitCode::from(2)
    } else if s.counterexamples > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

fn print_summary(s: &litmix::mapping::verify::Summary, json: bool) {
    if json {
        let mut v = serde_json::json!({
            "mapping": s.mapping,
            "bound": s.bound,
            "programs": s.programs,
            "counterexamples": s.counterexamples,
            "time_s": (s.time_s * 1000.0).round() / 1000.0,
        });
        if let (Some(o), Ok(serde_json::Value::Object(extra))) =
            (v.as_object_mut(), serde_json::to_value(s))
        {
            for (k, x) in extra {
                o.entry(k).or_insert(x);
            }
        }
        println!("{v}");
    } else {
        println!(
            "Mapping {} bound {} shard {}: {} programs ({} sound, {} racy, {} unsound, {} errors) in {:.2} s",
            s.mapping,
            s.bound,
            s.shard,
            s.programs,
            s.sound,
            s.racy,
            s.counterexamples,
            s.errors,
            s.time_s
        );
        let by: Vec<String> = s
            .by_events
            .iter()
            .enumerate()
            .skip(1)
            .map(|(n, c)| format!("{n}:{c}"))
            .collect();
        println!("  programs by events: {}", by.join(" "));
        if s.by_weaker + s.bounded > 0 {
            println!(
                "  from weaker programs of the same shape: {} sound without a model run, {} with a narrower target run",
                s.by_weaker, s.bounded
            );
        }
        if s.complete_to < s.bound {
            println!(
                "  stopped at the first counterexample: complete up to {} events",
                s.complete_to
            );
        }
    }
}

/// `litmix merge`.
#[derive(Args)]
pub struct MergeArgs {
    /// Output a JSON summary line.
    #[arg(long)]
    pub json: bool,
    /// Files holding `verify-mapping --json` output (the last summary line
    /// of each is used).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
}

/// `litmix merge`: adds up shard summaries.
pub fn merge(a: MergeArgs) -> ExitCode {
    let mut parts = Vec::new();
    for f in &a.files {
        let text = match std::fs::read_to_string(f) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("litmix merge: {}: {e}", f.display());
                return ExitCode::from(2);
            }
        };
        let summary = text.lines().rev().find_map(|l| {
            serde_json::from_str::<litmix::mapping::verify::Summary>(l)
                .ok()
                .filter(|s| !s.mapping.is_empty())
        });
        match summary {
            Some(s) => parts.push(s),
            None => {
                eprintln!(
                    "litmix merge: {}: no summary line (run verify-mapping with --json)",
                    f.display()
                );
                return ExitCode::from(2);
            }
        }
    }
    match litmix::mapping::verify::merge(&parts) {
        Ok(s) => {
            print_summary(&s, a.json);
            if s.counterexamples > 0 {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            }
        }
        Err(e) => {
            eprintln!("litmix merge: {e}");
            ExitCode::from(2)
        }
    }
}
