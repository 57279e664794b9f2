//! Conformance against published verdicts in `../shared/oracles/dat3m`
//! (or `../../shared`, for a git worktree under `wt/`). Skips (with a
//! message) when neither is present. An unexplained disagreement, an
//! error, or a stale known-difference entry fails.

use litmix::conformance::{read_expectations, read_known_differences, run};
use litmix::exec::CheckOptions;
use std::path::PathBuf;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `../shared/oracles/dat3m` relative to the crate root, or one level
/// further up (a git worktree under `wt/`).
fn oracle_dir() -> Option<PathBuf> {
    ["..", "../.."]
        .iter()
        .map(|up| root().join(up).join("shared/oracles/dat3m"))
        .find(|d| d.join("expected.csv").exists())
}

fn conform(models: &[&str], min_agree: usize) {
    let Some(oracle) = oracle_dir() else {
        eprintln!("skipping conformance for {models:?}: ../shared/oracles/dat3m not found");
        return;
    };
    let exp = read_expectations(&oracle.join("expected.csv")).expect("oracle manifest");
    let known = read_known_differences(&root().join("tests/known-differences.csv"))
        .expect("known differences");
    let report = run(&oracle, &exp, &known, models, &CheckOptions::default());
    println!("{}", report.summary());
    assert!(report.passed(), "conformance failed:\n{}", report.summary());
    let (agree, ..) = report.counts();
    assert!(agree >= min_agree, "only {agree} agreements for {models:?}");
}

#[test]
fn dat3m_ptx6() {
    conform(&["ptx6"], 80);
}

#[test]
fn dat3m_x86tso() {
    conform(&["x86tso"], 200);
}

#[test]
fn dat3m_ptx75() {
    conform(&["ptx75"], 219);
}

#[test]
fn dat3m_opencl() {
    conform(&["opencl"], 38);
}

#[test]
fn dat3m_rc11() {
    conform(&["rc11"], 21);
}

#[test]
fn dat3m_c11() {
    conform(&["c11"], 21);
}
