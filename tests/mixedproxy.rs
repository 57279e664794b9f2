//! NVIDIA's mixed-proxy tests (`shared/oracles/mixedproxy/tests/*.test`,
//! the NVLitmus format) under `ptx75`. Each test (each template row) states
//! the verdict of NVIDIA's model, so each is expected to be validated;
//! disagreements must be listed in tests/known-differences.csv. Skips (with
//! a message) when the oracle folder is absent.

use litmix::conformance::{read_known_differences, run_nvlitmus};
use litmix::exec::{CheckOptions, check};
use litmix::litmus::{nvlitmus, parse_str};
use std::path::PathBuf;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `shared/oracles` beside the crate or one level further up, and the
/// `.test` files under `mixedproxy/tests` relative to it.
fn oracles() -> Option<(PathBuf, Vec<String>)> {
    let dir = ["..", "../.."]
        .iter()
        .map(|up| root().join(up).join("shared/oracles"))
        .find(|d| d.join("mixedproxy/tests").is_dir());
    let Some(dir) = dir else {
        eprintln!("skipping: shared/oracles/mixedproxy/tests not found");
        return None;
    };
    let mut files: Vec<String> = std::fs::read_dir(dir.join("mixedproxy/tests"))
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| nvlitmus::is_nvlitmus_path(p))
        .map(|p| {
            format!(
                "mixedproxy/tests/{}",
                p.file_name().unwrap().to_string_lossy()
            )
        })
        .collect();
    files.sort();
    Some((dir, files))
}

#[test]
fn mixedproxy_ptx75() {
    let Some((dir, files)) = oracles() else {
        return;
    };
    assert!(files.len() >= 11, "only {} .test files", files.len());
    let known = read_known_differences(&root().join("tests/known-differences.csv"))
        .expect("known differences");
    let report = run_nvlitmus(&dir, &files, "ptx75", &known, &CheckOptions::default());
    println!("{}", report.summary());
    assert!(report.passed(), "mixedproxy failed:\n{}", report.summary());
    let (agree, known, ..) = report.counts();
    assert!(agree >= 120, "only {agree} agreements");
    assert!(agree + known >= 128, "only {} rows", agree + known);
}

/// `litmix convert` keeps the meaning: each row written in the herd-style
/// form parses with the PTX front end and gets the same verdict.
#[test]
fn converted_rows_keep_their_verdicts() {
    let Some((dir, files)) = oracles() else {
        return;
    };
    let model = litmix::models::load("ptx75").unwrap();
    let opts = CheckOptions::default();
    let mut n = 0;
    for rel in &files {
        let path = dir.join(rel);
        let src = std::fs::read_to_string(&path).unwrap();
        for inst in nvlitmus::parse_all(rel, &src) {
            let test = inst.test.unwrap_or_else(|d| panic!("{}", d.render()));
            let herd = nvlitmus::to_herd(&test, "converted");
            let back = parse_str("converted.litmus", &herd)
                .unwrap_or_else(|d| panic!("{}\n{herd}", d.render()));
            assert_eq!(back.name, test.name);
            let a = check(&test, &model, &opts).unwrap();
            let b = check(&back, &model, &opts).unwrap();
            assert_eq!(a.validated, b.validated, "{herd}");
            assert_eq!(a.states, b.states, "{herd}");
            n += 1;
        }
    }
    assert!(n >= 128, "only {n} rows");
}
