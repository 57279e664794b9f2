//! herd's own library run by litmix: every model file of
//! `../shared/oracles/herd/libdir` loads, and every (model, test) pair of
//! `expected/` prints herd7's output line for line (all but `Time` and
//! `Hash`), in `--herd-identical` style. herd7's errors (a test it
//! rejects) must be litmix errors too. Disagreements must be listed in
//! `tests/herd-known-differences.csv` (see docs/known-differences.md).

use litmix::driver::{FileOutcome, ModelCache, check_path};
use litmix::exec::CheckOptions;
use litmix::report::herd::{HerdStyle, block_with};
use std::path::{Path, PathBuf};

fn herd_dir() -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    ["../shared/oracles/herd", "../../shared/oracles/herd"]
        .iter()
        .map(|d| root.join(d))
        .find(|d| d.is_dir())
}

fn known() -> Vec<(String, String)> {
    let text = include_str!("herd-known-differences.csv");
    text.lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let mut f = l.split(',');
            (
                f.next().unwrap_or("").to_string(),
                f.next().unwrap_or("").to_string(),
            )
        })
        .collect()
}

fn relevant(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| !l.starts_with("Time ") && !l.starts_with("Hash=") && !l.trim().is_empty())
        .map(str::to_string)
        .collect()
}

fn configure(dir: &Path) {
    litmix::models::configure(litmix::models::LoadConfig {
        include_dirs: vec![dir.join("libdir")],
        variants: Vec::new(),
        ..Default::default()
    });
}

#[test]
fn every_library_model_loads() {
    let Some(dir) = herd_dir() else {
        eprintln!("skipping: ../shared/oracles/herd not found");
        return;
    };
    configure(&dir);
    let mut n = 0;
    for e in std::fs::read_dir(dir.join("libdir")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "cat") {
            litmix::models::load(p.to_str().unwrap())
                .unwrap_or_else(|d| panic!("{} does not load:\n{}", p.display(), d.render()));
            n += 1;
        }
    }
    assert_eq!(n, 16, "libdir holds 16 models");
}

#[test]
fn herd7_output_line_for_line() {
    let Some(dir) = herd_dir() else {
        eprintln!("skipping: ../shared/oracles/herd not found");
        return;
    };
    configure(&dir);
    let known = known();
    let cache = ModelCache::default();
    let opts = CheckOptions::default();
    let style = HerdStyle {
        identical: true,
        hexa: false,
    };
    let mut compared = 0;
    let mut agree = 0;
    let mut bad = Vec::new();
    for m in std::fs::read_dir(dir.join("expected")).unwrap() {
        let mdir = m.unwrap().path();
        let model = mdir.file_name().unwrap().to_str().unwrap().to_string();
        let spec = dir.join("libdir").join(format!("{model}.cat"));
        for t in std::fs::read_dir(&mdir).unwrap() {
            let out = t.unwrap().path();
            let test = out.file_stem().unwrap().to_str().unwrap().to_string();
            let litmus = ["x86", "C"]
                .iter()
                .map(|d| dir.join("tests").join(d).join(format!("{test}.litmus")))
                .find(|p| p.exists())
                .unwrap();
            let expected = std::fs::read_to_string(&out).unwrap();
            compared += 1;
            let outcomes = check_path(&litmus, Some(spec.to_str().unwrap()), &cache, &opts);
            // herd7 was run in the herd folder on `tests/<dir>/<test>.litmus`.
            let herd_path = litmus
                .strip_prefix(&dir)
                .unwrap()
                .to_str()
                .unwrap()
                .to_string();
            let ok = match (&outcomes[..], expected.starts_with("Warning:")) {
                ([FileOutcome::Failed { file, herd, .. }], true) => {
                    // herd's wording, for the file named as herd7 was given it.
                    herd.as_ref().map(|h| h.replace(file.as_str(), &herd_path))
                        == Some(expected.trim_end().to_string())
                }
                (
                    [
                        FileOutcome::Checked {
                            test: t, result, ..
                        },
                    ],
                    false,
                ) => relevant(&block_with(t, result, style)) == relevant(&expected),
                _ => false,
            };
            let listed = known.iter().any(|(kt, km)| *kt == test && *km == model);
            match (ok, listed) {
                (true, false) => agree += 1,
                (false, true) => {}
                (true, true) => bad.push(format!("{model}/{test}: listed but agrees")),
                (false, false) => {
                    let got = match &outcomes[..] {
                        [
                            FileOutcome::Checked {
                                test: t, result, ..
                            },
                        ] => block_with(t, result, style),
                        [FileOutcome::Failed { message, herd, .. }] => {
                            format!("{message}\n(herd form: {herd:?})\n")
                        }
                        _ => "?".into(),
                    };
                    bad.push(format!(
                        "{model}/{test}:\n--- herd7\n{expected}--- litmix\n{got}"
                    ))
                }
            }
        }
    }
    eprintln!("herd library: {agree} of {compared} (model, test) pairs identical");
    assert_eq!(compared, 102, "the expected/ folder holds 102 outputs");
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// `--why` for a model that binds `co` itself: each forbidden outcome the
/// condition asks about is explained by a rejected choice of its
/// `with co from`, with the failing check and a cycle, as for the others.
#[test]
fn why_explains_models_that_build_co() {
    let Some(dir) = herd_dir() else {
        eprintln!("skipping: ../shared/oracles/herd not found");
        return;
    };
    configure(&dir);
    let cache = ModelCache::default();
    let opts = CheckOptions {
        why: true,
        ..CheckOptions::default()
    };
    let spec = dir.join("libdir/x86tso.cat");
    for (test, forbidden) in [("MP", true), ("SB+mfences", true), ("SB", false)] {
        let litmus = dir.join(format!("tests/x86/{test}.litmus"));
        let outcomes = check_path(&litmus, Some(spec.to_str().unwrap()), &cache, &opts);
        let [FileOutcome::Checked { result, .. }] = &outcomes[..] else {
            panic!("{test} was not checked");
        };
        if !forbidden {
            assert!(
                result.forbidden.is_empty(),
                "{test}: the outcome is allowed"
            );
            continue;
        }
        assert_eq!(result.forbidden.len(), 1, "{test}: one forbidden outcome");
        let f = &result.forbidden[0].failure;
        assert_eq!(f.check, "tso", "{test}: herd's x86tso names its axiom tso");
        // A cycle of at least the four accesses, and through the chosen co.
        assert!(f.witness.len() >= 4, "{test}: {:?}", f.witness);
        assert!(
            f.path.iter().any(|(_, _, r)| r.contains("co")),
            "{test}: {:?}",
            f.path
        );
    }
}

/// herd's models build `co` with `with co from generate_cos(co0)`; where
/// that set is the engine's own coherence orders, the engine enumerates
/// (and prunes) them itself (`Model::co_native`). Differential: the output
/// is identical with that path off, on every herd model of libdir over
/// herd's X86 and C tests, and for `x86tso.cat` over the Dat3M X86 suite.
#[test]
fn native_co_gives_identical_output() {
    let Some(dir) = herd_dir() else {
        eprintln!("skipping: ../shared/oracles/herd not found");
        return;
    };
    configure(&dir);
    let cache = ModelCache::default();
    let native = CheckOptions::default();
    let model_built = CheckOptions {
        co_native: false,
        ..CheckOptions::default()
    };
    let style = HerdStyle {
        identical: true,
        hexa: false,
    };
    let render = |outcomes: &[FileOutcome]| -> Vec<String> {
        outcomes
            .iter()
            .map(|o| match o {
                FileOutcome::Checked { test, result, .. } => {
                    relevant(&block_with(test, result, style)).join("\n")
                }
                FileOutcome::Failed { message, .. } => message.clone(),
            })
            .collect()
    };
    let tests_of = |d: &Path| -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(d)
            .map(|r| r.map(|e| e.unwrap().path()).collect())
            .unwrap_or_default();
        v.retain(|p| p.extension().is_some_and(|x| x == "litmus"));
        v.sort();
        v
    };
    let mut pairs = Vec::new();
    for (model, tdir) in [
        ("x86tso", "x86"),
        ("sc", "x86"),
        ("uniproc", "x86"),
        ("rc11", "C"),
        ("sc", "C"),
        ("uniproc", "C"),
    ] {
        for t in tests_of(&dir.join("tests").join(tdir)) {
            pairs.push((model, t));
        }
    }
    for t in tests_of(&dir.join("../dat3m/X86")) {
        pairs.push(("x86tso", t));
    }
    let mut native_models = 0;
    for m in ["x86tso", "sc", "uniproc", "rc11"] {
        let spec = dir.join("libdir").join(format!("{m}.cat"));
        let loaded = litmix::models::load(spec.to_str().unwrap()).unwrap();
        native_models += usize::from(loaded.co_native().is_some());
    }
    assert!(native_models >= 1, "x86tso.cat runs over the engine's co");
    assert!(pairs.len() > 244, "{} pairs", pairs.len());
    let mut differ = Vec::new();
    for (model, t) in &pairs {
        let spec = dir.join("libdir").join(format!("{model}.cat"));
        let spec = spec.to_str().unwrap();
        let a = render(&check_path(t, Some(spec), &cache, &native));
        let b = render(&check_path(t, Some(spec), &cache, &model_built));
        if a != b {
            differ.push(format!("{model} {}:\n{a:?}\n{b:?}", t.display()));
        }
    }
    eprintln!(
        "native co: {} (model, test) pairs identical, {native_models} of 4 models native",
        pairs.len() - differ.len()
    );
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}

/// Every model file of herd's library run on every herd X86 test: all run
/// but `rc11.cat`, a C model, which names C's atomic accesses `A` (and
/// `RLX`, `SC`, ...) that X86 tests do not define: a located error, not a
/// silent empty set (`--lenient` runs it).
#[test]
fn every_library_model_runs_on_x86_tests() {
    let Some(dir) = herd_dir() else {
        eprintln!("skipping: ../shared/oracles/herd not found");
        return;
    };
    configure(&dir);
    let cache = ModelCache::default();
    let opts = CheckOptions::default();
    let mut tests: Vec<PathBuf> = std::fs::read_dir(dir.join("tests/x86"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    tests.sort();
    let (mut ran, mut refused) = (0, 0);
    for e in std::fs::read_dir(dir.join("libdir")).unwrap() {
        let m = e.unwrap().path();
        let name = m.file_name().unwrap().to_str().unwrap().to_string();
        for t in &tests {
            match &check_path(t, Some(m.to_str().unwrap()), &cache, &opts)[..] {
                [FileOutcome::Checked { .. }] => {
                    assert_ne!(name, "rc11.cat", "{}", t.display());
                    ran += 1;
                }
                [FileOutcome::Failed { message, .. }] => {
                    assert_eq!(name, "rc11.cat", "{}: {message}", t.display());
                    assert!(message.contains("unknown identifier 'A'"), "{message}");
                    refused += 1;
                }
                _ => panic!("one outcome per file"),
            }
        }
    }
    assert_eq!((ran, refused), (15 * 23, 23));
}
