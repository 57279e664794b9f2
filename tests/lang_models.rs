//! Language-level models (rc11, sc11, opencl, opencl-rsp): the flags of the
//! hand-derived tests, and remote-scope promotion being a conservative
//! extension of OpenCL.

use litmix::driver::{FileOutcome, ModelCache, check_file, collect_paths};
use litmix::exec::{CheckOptions, CheckResult};
use litmix::ir::Test;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `../shared/oracles/dat3m/<sub>` (or one level further up, for a git
/// worktree under `wt/`).
fn oracle_dir(sub: &str) -> Option<PathBuf> {
    ["..", "../.."]
        .iter()
        .map(|up| root().join(up).join("shared/oracles/dat3m").join(sub))
        .find(|d| d.is_dir())
}

fn checked(path: &Path, model: &str, cache: &ModelCache) -> (Box<Test>, Box<CheckResult>) {
    match check_file(path, Some(model), cache, &CheckOptions::default()) {
        FileOutcome::Checked { test, result, .. } => (test, result),
        FileOutcome::Failed { message, .. } => panic!("{}: {message}", path.display()),
    }
}

/// Every row of tests/models/flags.csv: the flags raised by allowed
/// executions are exactly the listed ones.
#[test]
fn hand_derived_flags() {
    let dir = root().join("tests/models");
    let text = std::fs::read_to_string(dir.join("flags.csv")).expect("flags.csv");
    let cache = ModelCache::default();
    let mut n = 0;
    let mut bad = Vec::new();
    for line in text.lines().skip(1) {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let cols: Vec<&str> = line.splitn(3, ',').collect();
        assert_eq!(cols.len(), 3, "bad row '{line}'");
        let expected: Vec<&str> = cols[2].split_whitespace().collect();
        let (_, r) = checked(&dir.join(cols[0]), cols[1], &cache);
        let got: Vec<&str> = r.flags.iter().map(String::as_str).collect();
        if got != expected {
            bad.push(format!(
                "{} [{}]: expected {expected:?}, got {got:?}",
                cols[0], cols[1]
            ));
        }
        n += 1;
    }
    assert!(n >= 90, "only {n} flag rows");
    assert!(bad.is_empty(), "flag mismatches:\n{}", bad.join("\n"));
}

fn has_remote(t: &Test) -> bool {
    t.threads
        .iter()
        .flat_map(|th| &th.code)
        .any(|i| i.tags.iter().any(|g| g == "REMOTE"))
}

/// Seed 001 Sec. 3: "Our extension is conservative in the sense that it
/// does not affect the semantics of OpenCL programs that do not exploit
/// RSP." On every C/OpenCL test at hand without a remote operation,
/// opencl and opencl-rsp give the same verdict, the same final states
/// (with the same candidate counts) and the same flags.
#[test]
fn rsp_is_conservative() {
    let mut dirs: Vec<PathBuf> = ["rc11", "sc11", "opencl", "opencl-rsp"]
        .iter()
        .map(|m| root().join("tests/models").join(m))
        .collect();
    for sub in ["C11", "OPENCL"] {
        match oracle_dir(sub) {
            Some(d) => dirs.push(d),
            None => println!("oracle folder {sub} absent: checking project tests only"),
        }
    }
    let cache = ModelCache::default();
    let (mut compared, mut remote, mut unsupported) = (0, 0, 0);
    let mut differ = Vec::new();
    for path in collect_paths(&dirs) {
        let Ok(test) = litmix::litmus::parse_file(&path) else {
            unsupported += 1;
            continue;
        };
        if has_remote(&test) {
            remote += 1;
            continue;
        }
        let (_, a) = checked(&path, "opencl", &cache);
        let (_, b) = checked(&path, "opencl-rsp", &cache);
        if a.validated != b.validated || a.states != b.states || a.flags != b.flags {
            differ.push(path.display().to_string());
        }
        compared += 1;
    }
    println!(
        "opencl vs opencl-rsp: {compared} tests without remote operations compared, {} differ; {remote} with remote operations; {unsupported} unsupported",
        differ.len()
    );
    assert!(compared >= 50, "only {compared} tests compared");
    assert!(
        differ.is_empty(),
        "opencl-rsp differs from opencl without remote operations:\n{}",
        differ.join("\n")
    );
    assert!(remote >= 5, "only {remote} tests with remote operations");
}

/// ... and remote operations do make a difference somewhere (the check
/// above is not vacuous).
#[test]
fn rsp_changes_remote_tests() {
    let dir = root().join("tests/models/opencl-rsp");
    let cache = ModelCache::default();
    let mut changed = 0;
    for path in collect_paths(&[dir]) {
        let (_, a) = checked(&path, "opencl", &cache);
        let (_, b) = checked(&path, "opencl-rsp", &cache);
        if a.validated != b.validated || a.flags != b.flags {
            changed += 1;
        }
    }
    assert!(changed >= 4, "only {changed} remote tests change");
}
