//! `litmix synth`: minimal forbidden tests of a model, and the shared
//! pieces of `litmix compare --distinguish` (docs/synthesis.md).

use super::{Limits, emit, options};
use clap::{Args, ValueEnum};
use litmix::synth::search::{Criterion, Space2};
use litmix::synth::vocab::{self, Dialect, Vocab};
use litmix::synth::{Run, Summary, merge, run};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Clone, Copy, ValueEnum)]
pub enum CriterionArg {
    /// Forbidden, and every one-step weakening allowed.
    Minimal,
    /// Forbidden.
    Forbidden,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum ArchArg {
    #[value(name = "X86", alias = "x86")]
    X86,
    #[value(name = "PTX", alias = "ptx")]
    Ptx,
    #[value(name = "C", alias = "c")]
    C,
    #[value(name = "OpenCL", alias = "opencl")]
    OpenCl,
}

/// What synthesis and distinguishing runs share.
#[derive(Args, Clone)]
pub struct SpaceArgs {
    /// The tests' dialect (the vocabulary's when omitted).
    #[arg(long, value_enum)]
    pub arch: Option<ArchArg>,
    /// Largest number of events (docs/synthesis.md: how events are counted).
    #[arg(long, default_value_t = 4)]
    pub events: usize,
    /// Vocabulary: a built-in name (x86, ptx, c11, opencl) or a .vocab file
    /// (default: the arch's).
    #[arg(long)]
    pub vocab: Option<String>,
    /// Only the shapes of shard K of M (`K/M`).
    #[arg(long, default_value = "1/1")]
    pub shard: String,
    /// At most this many GPUs, and CTAs per GPU (PTX).
    #[arg(long, default_value_t = 2)]
    pub max_gpus: u8,
    #[arg(long, default_value_t = 2)]
    pub max_ctas: u8,
    /// Write the tests and an `expected.csv` for `litmix conform` here.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Also write each test's one-step weakenings (its mutants, allowed).
    #[arg(long)]
    pub allowed_set: bool,
}

#[derive(Args)]
pub struct SynthArgs {
    /// The model (axiomatic or operational).
    #[arg(long, required_unless_present = "merge")]
    pub model: Option<String>,
    /// Emit only tests violating this check of the model (repeatable).
    #[arg(long)]
    pub axiom: Vec<String>,
    #[arg(long, value_enum, default_value = "minimal")]
    pub criterion: CriterionArg,
    /// Add up `--json` summaries of shards instead of searching.
    #[arg(long, num_args = 1.., value_name = "SUMMARY")]
    pub merge: Vec<PathBuf>,
    /// Print only the JSON summary line (with the tests).
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub space: SpaceArgs,
    #[command(flatten)]
    pub limits: Limits,
    #[command(flatten)]
    pub cat: super::CatArgs,
}

/// The vocabulary for these arguments.
pub fn vocab_for(s: &SpaceArgs) -> Result<Vocab, String> {
    let dialect = s.arch.map(|a| match a {
        ArchArg::X86 => Dialect::X86,
        ArchArg::Ptx => Dialect::Ptx,
        ArchArg::C => Dialect::C,
        ArchArg::OpenCl => Dialect::OpenCl,
    });
    let name = match (&s.vocab, dialect) {
        (Some(v), _) => v.clone(),
        (None, Some(d)) => vocab::default_for(d).to_string(),
        (None, None) => return Err("give --arch or --vocab".into()),
    };
    let mut v = vocab::load(&name)?;
    if let Some(d) = dialect {
        if d == Dialect::OpenCl && v.dialect == Dialect::C {
            v.dialect = Dialect::OpenCl;
        } else if d != v.dialect {
            return Err(format!(
                "vocabulary {} is for {}, not {}",
                v.name,
                v.dialect.arch(),
                d.arch()
            ));
        }
    }
    Ok(v)
}

/// Builds a run over these arguments for `models`.
pub fn make_run(
    s: &SpaceArgs,
    limits: &Limits,
    models: Vec<String>,
    axioms: Vec<String>,
    criterion: Criterion,
) -> Result<Run, String> {
    if s.events == 0 || s.events > 12 {
        return Err(format!("--events {} is out of range (1 to 12)", s.events));
    }
    let shard = litmix::mapping::verify::parse_shard(&s.shard)?;
    Ok(Run {
        vocab: vocab_for(s)?,
        models,
        axioms,
        criterion,
        space: Space2 {
            bound: s.events,
            shard: (shard != (1, 1)).then_some(shard),
            prune: !limits.no_prune,
            max_gpus: s.max_gpus.clamp(1, 4),
            max_ctas: s.max_ctas.clamp(1, 4),
        },
        opts: options(limits),
        out: s.out.clone(),
        allowed_set: s.allowed_set,
    })
}

/// Runs a search with a progress bar on a terminal.
pub fn run_with_progress(r: &Run) -> Result<Summary, String> {
    // Counting the shapes is a walk of its own (a tenth of a run at 6
    // events): only for a bar on a terminal.
    let pb = if std::io::stderr().is_terminal() {
        super::progress(litmix::synth::search::shape_count(&r.vocab, &r.space))
    } else {
        None
    };
    let tick = || {
        if let Some(pb) = &pb {
            pb.inc(1);
        }
    };
    let s = run(r, &tick);
    if let Some(pb) = pb {
        pb.finish_and_clear();
    }
    s
}

/// Runs `litmix synth`.
pub fn synth(a: SynthArgs) -> ExitCode {
    if !a.merge.is_empty() {
        return merge_files(&a.merge, a.json);
    }
    let criterion = match a.criterion {
        CriterionArg::Minimal => Criterion::Minimal,
        CriterionArg::Forbidden => Criterion::Forbidden,
    };
    let model = a.model.clone().unwrap_or_default();
    let mut r = match make_run(&a.space, &a.limits, vec![model], a.axiom.clone(), criterion) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("litmix synth: {e}");
            return ExitCode::from(2);
        }
    };
    a.cat.apply(&mut r.opts);
    match run_with_progress(&r) {
        Ok(s) => {
            print_summary(&s, a.json);
            if s.verify_failures > 0 {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            }
        }
        Err(e) => {
            eprintln!("litmix synth: {e}");
            ExitCode::from(2)
        }
    }
}

/// Prints a summary: the tests then a summary line, or one JSON line.
pub fn print_summary(s: &Summary, json: bool) {
    let out = std::io::stdout();
    let mut out = out.lock();
    if json {
        let j = serde_json::to_string(s).unwrap_or_default();
        emit(writeln!(out, "{j}"));
        return;
    }
    for t in &s.tests {
        let why = match &t.allowed_by {
            Some(m) => format!("allowed by {m} only"),
            None => t.checks.join(","),
        };
        let racy = if t.racy { " racy" } else { "" };
        emit(writeln!(
            out,
            "{:14} {} events  {why}{racy}  {}  {}",
            t.name, t.events, t.program, t.condition
        ));
    }
    emit(writeln!(
        out,
        "{} {} over {} ({}) bound {} shard {}: {} shapes, {} programs, {} outcomes, {} found, {} minimal, {} unique, {} inexpressible, {} judged, {:.2} s",
        s.models.join(" vs "),
        s.criterion,
        s.vocab,
        s.arch,
        s.bound,
        s.shard,
        s.shapes,
        s.programs,
        s.outcomes,
        s.found,
        s.minimal,
        s.unique,
        s.inexpressible,
        s.judged,
        s.time_s
    ));
    if !s.by_check.is_empty() {
        let parts: Vec<String> = s.by_check.iter().map(|(k, v)| format!("{k}:{v}")).collect();
        emit(writeln!(out, "  by check: {}", parts.join(" ")));
    }
    let parts: Vec<String> = s
        .by_events
        .iter()
        .map(|(k, v)| format!("{k}:{v}"))
        .collect();
    emit(writeln!(out, "  by events: {}", parts.join(" ")));
    if s.racy_mutants > 0 {
        emit(writeln!(
            out,
            "  {} racy weakenings left out of the allowed set (allowed only as undefined behaviour)",
            s.racy_mutants
        ));
    }
    if s.verify_failures > 0 {
        emit(writeln!(
            out,
            "  {} emitted tests failed their final check (a bug: please report)",
            s.verify_failures
        ));
    }
}

fn merge_files(files: &[PathBuf], json: bool) -> ExitCode {
    let mut parts = Vec::new();
    for f in files {
        let text = match std::fs::read_to_string(f) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("litmix synth --merge: {}: {e}", f.display());
                return ExitCode::from(2);
            }
        };
        let Some(s) = text
            .lines()
            .rev()
            .find_map(|l| serde_json::from_str::<Summary>(l).ok())
        else {
            eprintln!(
                "litmix synth --merge: {}: no summary line (run with --json)",
                f.display()
            );
            return ExitCode::from(2);
        };
        parts.push(s);
    }
    match merge(&parts) {
        Ok(s) => {
            print_summary(&s, json);
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("litmix synth --merge: {e}");
            ExitCode::from(2)
        }
    }
}
