//! `litmix hw`: run PTX litmus tests on an NVIDIA GPU (`run`), write the
//! kernels without one (`emit`), judge saved results again (`judge`),
//! search stress parameters (`tune`). See docs/hw.md.

use super::{Limits, options};
use clap::{Args, Subcommand};
use litmix::driver::{FileOutcome, ModelCache, check_test, collect_paths};
use litmix::exec::CheckResult;
use litmix::hw::cuda::{CudaError, Device};
use litmix::hw::histogram::{self, Histogram};
use litmix::hw::host::{self, HostRole};
use litmix::hw::run::{Budget, RunError, RunOptions, SassStatus};
use litmix::hw::stress::Profile;
use litmix::hw::{Plan, emit, plan};
use serde_json::json;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Args)]
pub struct HwArgs {
    #[command(subcommand)]
    pub command: HwCommand,
}

#[derive(Subcommand)]
pub enum HwCommand {
    /// Run tests on the GPU and compare the final states seen with the model.
    Run(HwRunArgs),
    /// Write each test's PTX kernels and a manifest (no GPU needed).
    Emit(HwEmitArgs),
    /// Judge saved `hw run --json` results again (e.g. under another model).
    Judge(HwJudgeArgs),
    /// Search stress parameters for a device on allowed-weak tests.
    Tune(HwTuneArgs),
}

/// What `run` and `judge` share: the model and its options.
#[derive(Args)]
pub struct ModelArgs {
    #[command(flatten)]
    pub cat: super::CatArgs,
    /// Model: a built-in name or a .cat file. Default: by the test's arch (ptx).
    #[arg(long)]
    pub model: Option<String>,
    #[command(flatten)]
    pub limits: Limits,
}

#[derive(Args)]
pub struct HwRunArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    /// Time per test (10s, 500ms, 2m).
    #[arg(long, default_value = "10s", conflicts_with = "instances")]
    pub budget: String,
    /// Instances per test instead of a time budget.
    #[arg(long)]
    pub instances: Option<u64>,
    /// Stress profile: default, none, or a profile file (docs/hw.md).
    #[arg(long, default_value = "default")]
    pub stress: String,
    /// Seed of pairings, location layouts and stress.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// CUDA device index.
    #[arg(long, default_value_t = 0)]
    pub device: i32,
    /// Run a test even when its SASS lost or reordered accesses.
    #[arg(long)]
    pub no_sass_check: bool,
    /// One JSON object per test per line.
    #[arg(long)]
    pub json: bool,
    /// Litmus files or directories.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
}

#[derive(Args)]
pub struct HwEmitArgs {
    /// Directory for the kernels (`NAME.ptx`) and `manifest.json`.
    #[arg(long)]
    pub out: PathBuf,
    /// Stress profile whose launch geometry the manifest records.
    #[arg(long, default_value = "default")]
    pub stress: String,
    /// Litmus files or directories.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
}

#[derive(Args)]
pub struct HwJudgeArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    /// A file of `hw run --json` lines.
    #[arg(long)]
    pub results: PathBuf,
    /// One JSON object per test per line.
    #[arg(long)]
    pub json: bool,
    /// The litmus files or directories the results came from.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
}

#[derive(Args)]
pub struct HwTuneArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    /// Where to write the best profile found.
    #[arg(long, default_value = "hw-profile.txt")]
    pub out: PathBuf,
    /// Profiles to try (the default and no stress are always among them).
    #[arg(long, default_value_t = 16)]
    pub trials: usize,
    /// Time per test and profile.
    #[arg(long, default_value = "1s")]
    pub budget: String,
    /// Seed of the candidates and of the runs.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// CUDA device index.
    #[arg(long, default_value_t = 0)]
    pub device: i32,
    /// Tests to tune on; those whose condition the model does not allow are skipped.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
}

/// Runs `litmix hw`.
pub fn hw(a: HwArgs) -> ExitCode {
    match a.command {
        HwCommand::Run(a) => run(a),
        HwCommand::Emit(a) => emit_cmd(a),
        HwCommand::Judge(a) => judge(a),
        HwCommand::Tune(a) => tune(a),
    }
}

/// A test read from a file, with its plan or why it has none.
struct Loaded {
    file: String,
    name: String,
    plan: Result<Plan, String>,
    /// For X86 tests: the host programs of the roles (run on the CPU).
    host: Option<Vec<HostRole>>,
}

/// Parses every test of the given paths and plans each.
fn load(paths: &[PathBuf]) -> Result<Vec<Loaded>, ExitCode> {
    let files = collect_paths(paths);
    if files.is_empty() {
        eprintln!("litmix: no litmus files found in the given paths");
        return Err(ExitCode::from(2));
    }
    let mut out = Vec::new();
    for f in files {
        let file = f.display().to_string();
        for (i, parsed) in litmix::litmus::parse_file_all(&f).into_iter().enumerate() {
            match parsed {
                Ok(t) if t.arch.eq_ignore_ascii_case("X86") => {
                    let (plan, host) = match host::plan_host(&t) {
                        Ok((p, h)) => (Ok(p), Some(h)),
                        Err(r) => (Err(r.0), None),
                    };
                    out.push(Loaded {
                        file: file.clone(),
                        name: t.name.clone(),
                        plan,
                        host,
                    })
                }
                Ok(t) => out.push(Loaded {
                    file: file.clone(),
                    name: t.name.clone(),
                    plan: plan(&t).map_err(|r| r.0),
                    host: None,
                }),
                Err(d) => out.push(Loaded {
                    file: file.clone(),
                    name: format!("{}#{}", stem(&f), i + 1),
                    plan: Err(format!("does not parse: {}", d.render().trim())),
                    host: None,
                }),
            }
        }
    }
    Ok(out)
}

fn stem(p: &Path) -> String {
    p.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The model's check of a plan's test (full final states), through the
/// driver as `litmix run` does it.
fn model_check(
    l: &Loaded,
    p: &Plan,
    m: &ModelArgs,
    cache: &ModelCache,
) -> Result<Box<CheckResult>, String> {
    let mut opts = options(&m.limits);
    m.cat.apply(&mut opts);
    match check_test(
        l.file.clone(),
        p.test.clone(),
        m.model.as_deref(),
        cache,
        &opts,
    ) {
        FileOutcome::Checked { result, .. } => Ok(result),
        FileOutcome::Failed { message, .. } => Err(message),
    }
}

fn run(a: HwRunArgs) -> ExitCode {
    let profile = match Profile::load(&a.stress) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("litmix: {e}");
            return ExitCode::from(2);
        }
    };
    let budget = match a.instances {
        Some(0) => {
            eprintln!("litmix: --instances must be positive");
            return ExitCode::from(2);
        }
        Some(n) => Budget::Instances(n),
        None => match Budget::parse_time(&a.budget) {
            Ok(b) => b,
            Err(e) => {
                eprintln!("litmix: {e}");
                return ExitCode::from(2);
            }
        },
    };
    let tests = match load(&a.paths) {
        Ok(t) => t,
        Err(c) => return c,
    };
    let mut device: Option<Device> = None;
    let opts = RunOptions {
        profile,
        seed: a.seed,
        budget,
        sass_required: !a.no_sass_check,
    };
    let cache = ModelCache::default();
    let mut code = 0u8;
    let (mut ran, mut refused) = (0, 0);
    for l in &tests {
        let p = match &l.plan {
            Ok(p) => p,
            Err(why) => {
                refused += 1;
                report_refusal(l, why, a.json);
                continue;
            }
        };
        let result = match model_check(l, p, &a.model, &cache) {
            Ok(r) => r,
            Err(m) => {
                eprintln!("{m}");
                code = code.max(2);
                continue;
            }
        };
        if let Some(roles) = &l.host {
            ran += 1;
            if host_run(l, p, roles, &result, &a, budget) {
                code = code.max(1);
            }
            continue;
        }
        if device.is_none() {
            match Device::open(a.device) {
                Ok(d) => {
                    if !a.json {
                        outln!(
                            "Device {} (sm_{}{}, {} SMs); stress {}; seed {}",
                            d.name,
                            d.capability.0,
                            d.capability.1,
                            d.sms,
                            a.stress,
                            a.seed
                        );
                    }
                    device = Some(d);
                }
                Err(e) => {
                    eprintln!(
                        "litmix: hw run needs an NVIDIA GPU and its driver: {e}\n\
                         (litmix hw emit --out DIR writes the kernels without one)"
                    );
                    return ExitCode::from(2);
                }
            }
        }
        let Some(dev) = &device else {
            return ExitCode::from(2);
        };
        let r = match litmix::hw::run::run(dev, p, &opts) {
            Ok(r) => r,
            Err(RunError::Sass(checks)) => {
                refused += 1;
                let why: Vec<String> = checks.iter().flat_map(|c| c.messages.clone()).collect();
                report_refusal(l, &format!("SASS check failed: {}", why.join("; ")), a.json);
                continue;
            }
            Err(RunError::Cuda(e @ CudaError::Call(_))) => {
                eprintln!("litmix: {}: {e}", l.name);
                code = code.max(2);
                continue;
            }
            Err(RunError::Cuda(e)) => {
                eprintln!("litmix: {e}");
                return ExitCode::from(2);
            }
        };
        ran += 1;
        let c = histogram::compare(p, &result, &r.hist);
        if !c.observed_within_allowed() {
            code = code.max(1);
        }
        let secs = r.elapsed.as_secs_f64();
        let rate = r.hist.instances as f64 / secs.max(1e-9);
        if a.json {
            let mut o = histogram::json(p, &result.model, &c);
            o["file"] = json!(l.file);
            o["device"] = json!(dev.name);
            o["launches"] = json!(r.launches);
            o["seconds"] = json!(secs);
            o["instances_per_second"] = json!(rate);
            o["device_seconds"] = json!(r.device_time.as_secs_f64());
            if let Some(x) = r.raced {
                o["raced"] = json!(x.raced);
                o["host_timeouts"] = json!(x.timeouts);
            }
            o["instances_per_launch"] = json!(r.geometry.instances());
            o["sass"] = sass_json(&r.sass);
            outln!("{o}");
        } else {
            let raced = r.raced.map_or(String::new(), |x| {
                format!(
                    "; CPU+GPU: {:.1} % of instances raced, {} host waits timed out",
                    100.0 * x.raced as f64 / r.hist.instances.max(1) as f64,
                    x.timeouts
                )
            });
            let header = format!(
                "{} launches of {}, {:.2} s, {:.1} M instances/s; SASS {}{raced}",
                r.launches,
                r.geometry.instances(),
                secs,
                rate / 1e6,
                sass_text(&r.sass)
            );
            out!("{}", histogram::text(p, &result.model, &c, &header));
            outln!();
        }
    }
    if !a.json {
        outln!("hw: {ran} test(s) run, {refused} refused");
    }
    ExitCode::from(code)
}

/// Runs an X86 test's roles on host threads; true when a forbidden state
/// was seen.
fn host_run(
    l: &Loaded,
    p: &Plan,
    roles: &[HostRole],
    result: &CheckResult,
    a: &HwRunArgs,
    budget: Budget,
) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        const PER_ROUND: usize = 1000;
        let mut r = host::run(p, roles, PER_ROUND, PER_ROUND as u64, a.seed);
        let more = match budget {
            Budget::Instances(n) => n.saturating_sub(r.hist.instances),
            Budget::Time(d) => {
                let per = r.elapsed.as_secs_f64() / r.hist.instances.max(1) as f64;
                ((d.as_secs_f64() - r.elapsed.as_secs_f64()).max(0.0) / per.max(1e-9)) as u64
            }
        };
        if more > 0 {
            let r2 = host::run(p, roles, PER_ROUND, more, a.seed.wrapping_add(1));
            r.hist.merge(&r2.hist);
            r.raced += r2.raced;
            r.rounds += r2.rounds;
            r.elapsed += r2.elapsed;
        }
        let c = histogram::compare(p, result, &r.hist);
        let secs = r.elapsed.as_secs_f64();
        let raced = 100.0 * r.raced as f64 / r.hist.instances.max(1) as f64;
        if a.json {
            let mut o = histogram::json(p, &result.model, &c);
            o["file"] = json!(l.file);
            o["device"] = json!("host CPU");
            o["rounds"] = json!(r.rounds);
            o["seconds"] = json!(secs);
            o["raced"] = json!(r.raced);
            outln!("{o}");
        } else {
            let header = format!(
                "host CPU threads, {} rounds of {PER_ROUND}, {secs:.2} s, {raced:.1} % of instances raced",
                r.rounds
            );
            out!("{}", histogram::text(p, &result.model, &c, &header));
            outln!();
        }
        !c.observed_within_allowed()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (p, roles, result, budget);
        report_refusal(l, "host roles run on x86-64 hosts only", a.json);
        false
    }
}

fn sass_text(s: &SassStatus) -> String {
    match s {
        SassStatus::Unchecked(why) => format!("unchecked ({why})"),
        SassStatus::Checked(c) => {
            let notes: Vec<String> = c.iter().flat_map(|r| r.messages.clone()).collect();
            let status = if c.iter().all(|r| r.ok) {
                "ok"
            } else {
                "FAILED"
            };
            if notes.is_empty() {
                status.to_string()
            } else {
                format!("{status} ({})", notes.join("; "))
            }
        }
    }
}

fn sass_json(s: &SassStatus) -> serde_json::Value {
    match s {
        SassStatus::Unchecked(why) => json!({"checked": false, "why": why}),
        SassStatus::Checked(c) => json!({
            "checked": true,
            "ok": c.iter().all(|r| r.ok),
            "roles": c.iter().map(|r| json!({
                "role": r.role, "ok": r.ok, "expected": r.expected,
                "found": r.found, "messages": r.messages,
            })).collect::<Vec<_>>(),
        }),
    }
}

fn report_refusal(l: &Loaded, why: &str, as_json: bool) {
    if as_json {
        outln!(
            "{}",
            json!({"test": l.name, "file": l.file, "refused": why})
        );
    } else {
        outln!("Test {} refused: {why}\n", l.name);
    }
}

fn emit_cmd(a: HwEmitArgs) -> ExitCode {
    let profile = match Profile::load(&a.stress) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("litmix: {e}");
            return ExitCode::from(2);
        }
    };
    let tests = match load(&a.paths) {
        Ok(t) => t,
        Err(c) => return c,
    };
    if let Err(e) = std::fs::create_dir_all(&a.out) {
        eprintln!("litmix: cannot create {}: {e}", a.out.display());
        return ExitCode::from(2);
    }
    let mut entries = Vec::new();
    let mut used = std::collections::HashSet::new();
    let (mut emitted, mut refused) = (0, 0);
    for l in &tests {
        if l.host.is_some() {
            refused += 1;
            entries.push(json!({"test": l.name, "file": l.file,
                "refused": "an X86 test: hw run runs it on host threads, there is no kernel"}));
            continue;
        }
        match &l.plan {
            Ok(p) => {
                let mut base = litmix::driver::artefacts::sanitize(&l.name);
                while !used.insert(base.clone()) {
                    base.push('_');
                }
                let file = format!("{base}.ptx");
                if let Err(e) = std::fs::write(a.out.join(&file), emit::module(p)) {
                    eprintln!("litmix: cannot write {file}: {e}");
                    return ExitCode::from(2);
                }
                emitted += 1;
                let g = litmix::hw::layout::Geometry::new(
                    p,
                    profile.threads_per_block,
                    profile.blocks_per_group,
                    profile.stress_blocks,
                    profile.line_words,
                    profile.spread,
                );
                entries.push(json!({
                    "test": l.name,
                    "file": l.file,
                    "kernel": file,
                    "roles": p.roles.iter().map(|r| if r.host.is_some() {
                        json!({
                            "thread": format!("P{}", p.test.threads[r.thread].id),
                            "host": true,
                            "outputs": r.outputs,
                        })
                    } else {
                        json!({
                            "thread": format!("P{}", p.test.threads[r.thread].id),
                            "cta_group": r.group,
                            "warp": r.warp,
                            "outputs": r.outputs,
                        })
                    }).collect::<Vec<_>>(),
                    "locations": p.locations.iter().map(|l| p.test.locations[*l].name.clone()).collect::<Vec<_>>(),
                    "observed": p.observed.iter().map(|t| litmix::exec::term_name(&p.test, t)).collect::<Vec<_>>(),
                    "geometry": {
                        "blocks": g.grid_blocks(), "test_blocks": g.test_blocks(),
                        "threads_per_block": g.block_threads(), "instances": g.instances(),
                    },
                }));
            }
            Err(why) => {
                refused += 1;
                entries.push(json!({"test": l.name, "file": l.file, "refused": why}));
            }
        }
    }
    let manifest = json!({
        "emitted": emitted,
        "refused": refused,
        "profile": profile.to_text(),
        "tests": entries,
    });
    let text = serde_json::to_string_pretty(&manifest).unwrap_or_default();
    if let Err(e) = std::fs::write(a.out.join("manifest.json"), text + "\n") {
        eprintln!("litmix: cannot write manifest.json: {e}");
        return ExitCode::from(2);
    }
    outln!(
        "hw emit: {emitted} kernel(s) written to {}, {refused} test(s) refused (reasons in manifest.json)",
        a.out.display()
    );
    ExitCode::SUCCESS
}

fn judge(a: HwJudgeArgs) -> ExitCode {
    let text = match std::fs::read_to_string(&a.results) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("litmix: cannot read {}: {e}", a.results.display());
            return ExitCode::from(2);
        }
    };
    let tests = match load(&a.paths) {
        Ok(t) => t,
        Err(c) => return c,
    };
    let cache = ModelCache::default();
    let mut code = 0u8;
    let mut judged = 0;
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let where_ = format!("{}:{}", a.results.display(), n + 1);
        let obj: serde_json::Value = match serde_json::from_str(line) {
            Ok(o) => o,
            Err(e) => {
                eprintln!("litmix: {where_}: not JSON: {e}");
                return ExitCode::from(2);
            }
        };
        if obj.get("refused").is_some() {
            continue;
        }
        let name = obj.get("test").and_then(|t| t.as_str()).unwrap_or("");
        let Some(l) = tests.iter().find(|l| l.name == name) else {
            eprintln!("litmix: {where_}: no test named '{name}' in the given paths");
            code = code.max(2);
            continue;
        };
        let p = match &l.plan {
            Ok(p) => p,
            Err(why) => {
                eprintln!("litmix: {where_}: test {name} has no plan: {why}");
                code = code.max(2);
                continue;
            }
        };
        let hist: Histogram = match histogram::from_json(p, &obj) {
            Ok(h) => h,
            Err(e) => {
                eprintln!("litmix: {where_}: {e}");
                return ExitCode::from(2);
            }
        };
        let result = match model_check(l, p, &a.model, &cache) {
            Ok(r) => r,
            Err(m) => {
                eprintln!("{m}");
                code = code.max(2);
                continue;
            }
        };
        judged += 1;
        let c = histogram::compare(p, &result, &hist);
        if !c.observed_within_allowed() {
            code = code.max(1);
        }
        if a.json {
            let mut o = histogram::json(p, &result.model, &c);
            o["file"] = json!(l.file);
            outln!("{o}");
        } else {
            out!("{}", histogram::text(p, &result.model, &c, "saved results"));
            outln!();
        }
    }
    if !a.json {
        outln!("hw judge: {judged} result(s) judged");
    }
    ExitCode::from(code)
}

fn tune(a: HwTuneArgs) -> ExitCode {
    let budget = match Budget::parse_time(&a.budget) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("litmix: {e}");
            return ExitCode::from(2);
        }
    };
    let tests = match load(&a.paths) {
        Ok(t) => t,
        Err(c) => return c,
    };
    let dev = match Device::open(a.device) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("litmix: hw tune needs an NVIDIA GPU and its driver: {e}");
            return ExitCode::from(2);
        }
    };
    // Tests whose condition's states the model allows (the weak outcomes
    // stress should bring out).
    let cache = ModelCache::default();
    let mut chosen = Vec::new();
    for l in &tests {
        let Ok(p) = &l.plan else { continue };
        match model_check(l, p, &a.model, &cache) {
            Ok(r) if r.states.keys().any(|s| litmix::exec::satisfies(&p.test, s)) => chosen.push(p),
            Ok(_) => {}
            Err(m) => eprintln!("{m}"),
        }
    }
    if chosen.is_empty() {
        eprintln!("litmix: hw tune: no test whose condition the model allows");
        return ExitCode::from(2);
    }
    let mut rng = litmix::hw::rng::Rng::new(a.seed);
    let mut best: Option<(f64, Profile)> = None;
    for (i, profile) in litmix::hw::tune::candidates(&mut rng, a.trials)
        .into_iter()
        .enumerate()
    {
        let opts = RunOptions {
            profile: profile.clone(),
            seed: a.seed,
            budget,
            sass_required: true,
        };
        let mut per_test = Vec::new();
        for p in &chosen {
            match litmix::hw::run::run(&dev, p, &opts) {
                Ok(r) => {
                    let seen = r
                        .hist
                        .counts
                        .iter()
                        .filter(|(s, _)| litmix::exec::satisfies(&p.test, s))
                        .map(|(_, n)| n)
                        .sum();
                    per_test.push((seen, r.elapsed.as_secs_f64()));
                }
                Err(RunError::Sass(_)) => {}
                Err(RunError::Cuda(e)) => {
                    eprintln!("litmix: {}: {e}", p.test.name);
                    return ExitCode::from(2);
                }
            }
        }
        let score = litmix::hw::tune::score(&per_test);
        outln!(
            "profile {i}: score {score:.2} ({})",
            per_test
                .iter()
                .map(|(s, t)| format!("{:.0}/s", *s as f64 / t))
                .collect::<Vec<_>>()
                .join(" ")
        );
        if best.as_ref().is_none_or(|(b, _)| score > *b) {
            best = Some((score, profile));
        }
    }
    let Some((score, profile)) = best else {
        return ExitCode::from(2);
    };
    let text = format!(
        "# litmix hw tune: {} on {} test(s), score {score:.2} (seed {})\n{}",
        dev.name,
        chosen.len(),
        a.seed,
        profile.to_text()
    );
    if let Err(e) = std::fs::write(&a.out, text) {
        eprintln!("litmix: cannot write {}: {e}", a.out.display());
        return ExitCode::from(2);
    }
    outln!(
        "best profile (score {score:.2}) written to {}",
        a.out.display()
    );
    ExitCode::SUCCESS
}
