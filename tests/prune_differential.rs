//! Pruning never changes an answer: every example, model test, pruning
//! bench and oracle (`../shared/oracles`, skipped with a message when
//! absent) is checked under every built-in model with pruning on and off
//! (`--no-prune`), and the reports must be identical: the herd block
//! (without its time line), the JSON object without the search figures,
//! the kept witness executions (`--dot`), or the same error message.
//! Tests that hit a size limit in one mode only are counted, not compared
//! (pruning makes searches smaller, never larger), and there must be few.

use litmix::driver::{FileOutcome, ModelCache, check_path, collect_paths};
use litmix::exec::CheckOptions;
use litmix::report;
use rayon::prelude::*;
use std::path::PathBuf;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn oracles() -> Option<PathBuf> {
    ["..", "../.."]
        .iter()
        .map(|up| root().join(up).join("shared/oracles"))
        .find(|d| d.is_dir())
}

/// The search figures that differ by design (and the time).
const FIGURES: &[&str] = &[
    "candidates",
    "consistent",
    "partial_candidates",
    "pruned",
    "with_orders",
    "with_pruned",
    "time_ms",
];

/// One outcome in comparable form, or `None` for a size limit or timeout.
fn render(o: &FileOutcome) -> Option<String> {
    match o {
        FileOutcome::Failed { file, message, .. } => {
            if message.contains("limit exceeded") || message.contains("timeout:") {
                None
            } else {
                Some(format!("{file}: error {message}"))
            }
        }
        FileOutcome::Checked { file, test, result } => {
            let mut json = report::json::result(file, test, result);
            if let Some(obj) = json.as_object_mut() {
                for k in FIGURES {
                    obj.remove(*k);
                }
            }
            let herd: String = report::herd::block(test, result)
                .lines()
                .filter(|l| !l.starts_with("Time "))
                .collect::<Vec<_>>()
                .join("\n");
            Some(format!("{herd}\n{json}\nwitnesses {:?}", result.witnesses))
        }
    }
}

fn differential(dirs: &[PathBuf]) {
    let files = collect_paths(dirs);
    assert!(!files.is_empty(), "no tests under {dirs:?}");
    let models: Vec<&str> = litmix::models::BUILTINS.iter().map(|b| b.name).collect();
    // A smaller budget than the default keeps the unpruned side short.
    let on = CheckOptions {
        keep_witnesses: 4,
        max_candidates: 100_000,
        ..CheckOptions::default()
    };
    let off = CheckOptions {
        prune: false,
        ..on.clone()
    };
    let cache = ModelCache::default();
    let jobs: Vec<(&PathBuf, &str)> = files
        .iter()
        .flat_map(|f| models.iter().map(move |m| (f, *m)))
        .collect();
    let results: Vec<(String, usize, usize)> = jobs
        .par_iter()
        .with_max_len(1)
        .map(|(f, m)| {
            let a = check_path(f, Some(m), &cache, &on);
            let b = check_path(f, Some(m), &cache, &off);
            let mut bad = String::new();
            let (mut compared, mut limited) = (0, 0);
            for (x, y) in a.iter().zip(&b) {
                match (render(x), render(y)) {
                    (Some(p), Some(q)) => {
                        compared += 1;
                        if p != q {
                            bad.push_str(&format!(
                                "{} under {m}:\n--- pruned\n{p}\n--- unpruned\n{q}\n",
                                f.display()
                            ));
                        }
                    }
                    (None, Some(q)) => bad.push_str(&format!(
                        "{} under {m}: limit with pruning only:\n{q}\n",
                        f.display()
                    )),
                    _ => limited += 1,
                }
            }
            if a.len() != b.len() {
                bad.push_str(&format!("{}: different numbers of tests\n", f.display()));
            }
            (bad, compared, limited)
        })
        .collect();
    let bad: String = results.iter().map(|r| r.0.as_str()).collect();
    let compared: usize = results.iter().map(|r| r.1).sum();
    let limited: usize = results.iter().map(|r| r.2).sum();
    println!("{compared} test/model pairs identical, {limited} over a limit unpruned");
    assert!(bad.is_empty(), "pruning changed results:\n{bad}");
    assert!(compared > files.len(), "too few comparisons: {compared}");
    assert!(limited * 20 <= compared, "{limited} limits of {compared}");
}

#[test]
fn examples_models_and_benches_identical() {
    differential(&[
        root().join("examples"),
        root().join("tests/models"),
        root().join("benches/prune/small"),
    ]);
}

#[test]
fn oracles_identical() {
    let Some(dir) = oracles() else {
        eprintln!("skipping: ../shared/oracles not found");
        return;
    };
    differential(&[dir]);
}
