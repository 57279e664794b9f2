//! `litmix compare --model A --model B [--expect equal|subset] [--json] PATHS`.

use super::{Limits, emit, options, progress};
use clap::{Args, ValueEnum};
use litmix::compare::{Expect, Relation, TestComparison, compare_path, summarize};
use litmix::driver::{ModelCache, collect_paths};
use rayon::prelude::*;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Clone, Copy, ValueEnum)]
pub enum ExpectArg {
    Equal,
    Subset,
}

#[derive(Args)]
pub struct CompareArgs {
    /// The two models (axiomatic or operational), `--model A --model B`.
    #[arg(long, required_unless_present = "distinguish", num_args = 1)]
    pub model: Vec<String>,
    /// Instead of comparing files: every minimal program up to `--events`
    /// over a vocabulary whose outcome one model allows and the other
    /// forbids (docs/synthesis.md).
    #[arg(long, num_args = 2, value_names = ["A", "B"])]
    pub distinguish: Vec<String>,
    #[command(flatten)]
    pub space: super::synth::SpaceArgs,
    /// Make the exit status check it: every test has equal allowed states,
    /// or A's are a subset of B's. Errors fail it too.
    #[arg(long, value_enum)]
    pub expect: Option<ExpectArg>,
    /// One JSON object per test, then a summary object.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub limits: Limits,
    #[command(flatten)]
    pub cat: super::CatArgs,
    /// Litmus files or directories.
    #[arg(required_unless_present = "distinguish")]
    pub paths: Vec<PathBuf>,
}

/// Runs `litmix compare`.
pub fn compare(a: CompareArgs) -> ExitCode {
    if !a.distinguish.is_empty() {
        return distinguish(a);
    }
    let [ma, mb] = a.model.as_slice() else {
        eprintln!("litmix compare: give exactly two models (--model A --model B)");
        return ExitCode::from(2);
    };
    let files = collect_paths(&a.paths);
    if files.is_empty() {
        eprintln!("litmix: no litmus files found in the given paths");
        return ExitCode::from(2);
    }
    let mut opts = options(&a.limits);
    a.cat.apply(&mut opts);
    let cache = ModelCache::default();
    let pb = progress(files.len());
    let cs: Vec<TestComparison> = files
        .par_iter()
        .with_max_len(1)
        .flat_map_iter(|f| {
            let c = compare_path(f, ma, mb, &cache, &opts);
            if let Some(pb) = &pb {
                pb.inc(1);
            }
            c
        })
        .collect();
    if let Some(pb) = pb {
        pb.finish_and_clear();
    }
    let expect = a.expect.map(|e| match e {
        ExpectArg::Equal => Expect::Equal,
        ExpectArg::Subset => Expect::Subset,
    });
    let out = std::io::stdout();
    let mut out = out.lock();
    for c in &cs {
        if a.json {
            let j = serde_json::to_string(c).unwrap_or_default();
            emit(writeln!(out, "{j}"));
            continue;
        }
        let rel = match c.relation {
            Relation::Equal => "equal".to_string(),
            Relation::Subset => format!("{ma} stronger"),
            Relation::Superset => format!("{ma} weaker"),
            Relation::Incomparable => "incomparable".to_string(),
            Relation::Error => "error".to_string(),
        };
        emit(writeln!(
            out,
            "{:40} {ma}={:5} {mb}={:5} {rel}",
            c.test, c.verdict_a, c.verdict_b
        ));
        for s in &c.only_a {
            emit(writeln!(out, "    only {ma}: {s}"));
        }
        for s in &c.only_b {
            emit(writeln!(out, "    only {mb}: {s}"));
        }
        for e in &c.errors {
            emit(writeln!(out, "    {}", e.lines().next().unwrap_or("")));
        }
    }
    let s = summarize(&cs);
    if a.json {
        let j = serde_json::json!({ "summary": s, "model_a": ma, "model_b": mb });
        emit(writeln!(out, "{j}"));
    } else {
        emit(writeln!(
            out,
            "Summary: {} tests, {} equal, {} {ma} stronger, {} {ma} weaker, {} incomparable, {} errors; verdicts differ on {}",
            s.tests, s.equal, s.subset, s.superset, s.incomparable, s.errors, s.verdicts_differ
        ));
    }
    match expect {
        Some(e) if !cs.iter().all(|c| c.meets(e)) => ExitCode::from(1),
        _ => ExitCode::SUCCESS,
    }
}

/// Runs `litmix compare --distinguish A B`: the distinguishing tests, then
/// the bounded claim when there are none; `--expect equal` fails when
/// any test distinguishes, `--expect subset` when B forbids something A
/// allows.
fn distinguish(a: CompareArgs) -> ExitCode {
    let (ma, mb) = (a.distinguish[0].clone(), a.distinguish[1].clone());
    let mut r = match super::synth::make_run(
        &a.space,
        &a.limits,
        vec![ma.clone(), mb.clone()],
        Vec::new(),
        litmix::synth::search::Criterion::Minimal,
    ) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("litmix compare: {e}");
            return ExitCode::from(2);
        }
    };
    // Includes, variants and the bell file count here as for test lists.
    a.cat.apply(&mut r.opts);
    let s = match super::synth::run_with_progress(&r) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("litmix compare: {e}");
            return ExitCode::from(2);
        }
    };
    super::synth::print_summary(&s, a.json);
    let only_a = s
        .tests
        .iter()
        .filter(|t| t.allowed_by.as_deref() == Some(ma.as_str()))
        .count();
    let only_b = s.tests.len() - only_a;
    if !a.json {
        let out = std::io::stdout();
        let mut out = out.lock();
        if s.tests.is_empty() {
            emit(writeln!(
                out,
                "{ma} and {mb} agree on all {} programs of <= {} events over {}{}{}",
                s.programs,
                s.bound,
                s.vocab,
                if s.scope_equivalent > 0 {
                    " (and on every program with a scope wider than its threads need: \
                     each behaves as one of them with that scope narrowed)"
                } else {
                    ""
                },
                if s.shard == "1/1" {
                    String::new()
                } else {
                    format!(" (shard {})", s.shard)
                }
            ));
        } else {
            emit(writeln!(
                out,
                "{only_a} minimal tests allowed by {ma} only, {only_b} by {mb} only ({} racy)",
                s.racy
            ));
        }
    }
    let failed = s.verify_failures > 0
        || match a.expect {
            Some(ExpectArg::Equal) => !s.tests.is_empty(),
            Some(ExpectArg::Subset) => only_a > 0,
            None => false,
        };
    if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
