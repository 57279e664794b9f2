//! CMM on pure tests: the compound model must behave like x86-TSO on tests
//! whose threads are all x86, and like PTX 6.0 on tests whose threads are
//! all PTX (seed 000, Sec. 3.1: "the behavior of a program that runs
//! entirely on one of the individual machines is precisely the same as if
//! running on that machine in isolation").
//!
//! Every available pure test is checked with `cmm` and with the pure model
//! (`x86tso` or `ptx6`), comparing the verdicts and the sets of allowed final
//! states: `/work/shared`'s `oracles/dat3m/X86/*.litmus` and
//! `oracles/dat3m/PTX/{Manual,Nvidia}/*.litmus` (found at
//! `CARGO_MANIFEST_DIR/../shared` or `../../shared`; skipped with a message
//! when absent), and every x86 or PTX test under `tests/models/`.
//!
//! Where the paper's formulas cannot agree, the difference is listed in
//! `tests/cmm-known-differences.csv` (`test,pure_model,kind,reason`; kind
//! `verdict` or `states`; the reasons are explained in docs/compound.md).
//! An unlisted difference, a listed one of another kind, or a listed one
//! that no longer happens fails the test.

use litmix::driver::{FileOutcome, ModelCache, check_file, collect_paths};
use litmix::exec::{CheckOptions, CheckResult};
use rayon::prelude::*;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn shared() -> Option<PathBuf> {
    ["../shared", "../../shared"]
        .iter()
        .map(|p| root().join(p))
        .find(|p| p.join("oracles/dat3m").is_dir())
}

/// Test files with the name they have in the manifest.
fn tests() -> (Vec<(String, PathBuf)>, bool) {
    let mut out = Vec::new();
    let models = root().join("tests/models");
    for p in collect_paths(std::slice::from_ref(&models)) {
        let rel = p.strip_prefix(&models).unwrap().display().to_string();
        out.push((format!("models/{rel}"), p));
    }
    let Some(shared) = shared() else {
        eprintln!("cmm agreement: shared oracles not found, checking tests/models only");
        return (out, false);
    };
    let dat3m = shared.join("oracles/dat3m");
    for sub in ["X86", "PTX/Manual", "PTX/Nvidia"] {
        let dir = dat3m.join(sub);
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "litmus"))
            .collect();
        files.sort();
        for p in files {
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            out.push((format!("dat3m/{sub}/{name}"), p));
        }
    }
    (out, true)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Verdict,
    States,
}

fn kind_name(k: Kind) -> &'static str {
    match k {
        Kind::Verdict => "verdict",
        Kind::States => "states",
    }
}

fn checked(o: FileOutcome) -> Result<CheckResult, String> {
    match o {
        FileOutcome::Checked { result, .. } => Ok(*result),
        FileOutcome::Failed { message, .. } => Err(message),
    }
}

/// `None` when they agree.
fn compare(pure: &CheckResult, cmm: &CheckResult) -> Option<Kind> {
    if pure.validated != cmm.validated {
        return Some(Kind::Verdict);
    }
    let a: BTreeSet<_> = pure.states.keys().collect();
    let b: BTreeSet<_> = cmm.states.keys().collect();
    (a != b).then_some(Kind::States)
}

fn read_known(path: &Path) -> BTreeMap<String, (String, Kind)> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut out = BTreeMap::new();
    for (i, line) in text.lines().enumerate().skip(1) {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let cols: Vec<&str> = line.split(',').map(str::trim).collect();
        let kind = match cols.get(2) {
            Some(&"verdict") => Kind::Verdict,
            Some(&"states") => Kind::States,
            _ => panic!("{}:{}: bad line '{line}'", path.display(), i + 1),
        };
        assert!(
            cols.len() >= 4 && !cols[3].is_empty(),
            "{}:{}: a reason is required",
            path.display(),
            i + 1
        );
        out.insert(cols[0].to_string(), (cols[1].to_string(), kind));
    }
    out
}

/// A pure test: its name, the pure model, how cmm differs from it.
type Compared = (String, &'static str, Option<Kind>);

#[test]
fn cmm_agrees_with_pure_models() {
    let (files, with_shared) = tests();
    let cache = ModelCache::default();
    let opts = CheckOptions::default();
    let results: Vec<Result<Option<Compared>, String>> = files
        .par_iter()
        .map(|(name, path)| {
            let test = litmix::litmus::parse_file(path).map_err(|d| d.render())?;
            let pure = match test.arch.as_str() {
                "X86" => "x86tso",
                "PTX" => "ptx6",
                _ => return Ok(None), // compound tests have no pure model
            };
            let p = checked(check_file(path, Some(pure), &cache, &opts))?;
            let c = checked(check_file(path, Some("cmm"), &cache, &opts))?;
            Ok(Some((name.clone(), pure, compare(&p, &c))))
        })
        .collect();

    let known = read_known(&root().join("tests/cmm-known-differences.csv"));
    let mut problems = Vec::new();
    let mut seen = BTreeSet::new();
    let mut counts: BTreeMap<&str, [usize; 3]> = BTreeMap::new();
    for r in results {
        let (name, pure, diff) = match r {
            Ok(Some(x)) => x,
            Ok(None) => continue,
            Err(e) => {
                problems.push(format!("error: {e}"));
                continue;
            }
        };
        let c = counts.entry(pure).or_default();
        c[0] += 1;
        if diff != Some(Kind::Verdict) {
            c[1] += 1;
        }
        if diff.is_none() {
            c[2] += 1;
        }
        match (diff, known.get(&name)) {
            (None, None) => {}
            (Some(k), None) => problems.push(format!(
                "{name}: cmm and {pure} differ ({}), not listed",
                kind_name(k)
            )),
            (Some(k), Some((m, lk))) if m == pure && *lk == k => {
                seen.insert(name);
            }
            (d, Some((m, lk))) => problems.push(format!(
                "{name}: listed as a {} difference with {m}, found {}",
                kind_name(*lk),
                d.map_or("agreement", kind_name)
            )),
        }
    }
    for name in known.keys() {
        let available = with_shared || name.starts_with("models/");
        if available && !seen.contains(name) && !problems.iter().any(|p| p.starts_with(name)) {
            problems.push(format!("{name}: listed but not found among the tests"));
        }
    }
    for (pure, [n, v, s]) in &counts {
        println!("cmm vs {pure}: {n} tests, {v} same verdict, {s} same allowed states");
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    let total: usize = counts.values().map(|c| c[0]).sum();
    assert!(
        total >= if with_shared { 400 } else { 70 },
        "only {total} tests"
    );
}
