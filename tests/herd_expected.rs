//! herd's own regression outputs for its C tests
//! (`../shared/oracles/herd/tests/C/*.litmus.expected`), made with the
//! options of `tests/C/ci.cfg`: rc11, `-variant S128`, hexadecimal output.
//! litmix with `--herd-identical --hexa --variant S128` must print them line
//! for line (all but `Time` and `Hash`). A separate test binary, because the
//! variant is process-wide configuration.

use litmix::driver::{FileOutcome, ModelCache, check_path};
use litmix::exec::CheckOptions;
use litmix::report::herd::{HerdStyle, block_with};
use std::path::Path;

fn relevant(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| !l.starts_with("Time ") && !l.starts_with("Hash=") && !l.trim().is_empty())
        .map(str::to_string)
        .collect()
}

#[test]
fn herd_c_regression_outputs() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let Some(dir) = ["../shared/oracles/herd", "../../shared/oracles/herd"]
        .iter()
        .map(|d| root.join(d))
        .find(|d| d.is_dir())
    else {
        eprintln!("skipping: ../shared/oracles/herd not found");
        return;
    };
    litmix::models::configure(litmix::models::LoadConfig {
        include_dirs: vec![dir.join("libdir")],
        variants: vec!["S128".into()],
        ..Default::default()
    });
    let spec = dir.join("libdir/rc11.cat");
    let cache = ModelCache::default();
    let style = HerdStyle {
        identical: true,
        hexa: true,
    };
    let mut compared = 0;
    let mut bad = Vec::new();
    let mut entries: Vec<_> = std::fs::read_dir(dir.join("tests/C"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        let name = p.file_name().unwrap().to_str().unwrap().to_string();
        let Some(test) = name.strip_suffix(".litmus") else {
            continue;
        };
        let ok_file = dir.join(format!("tests/C/{test}.litmus.expected"));
        let failure_file = dir.join(format!("tests/C/{test}.litmus.expected-failure"));
        let outcomes = check_path(
            &p,
            Some(spec.to_str().unwrap()),
            &cache,
            &CheckOptions::default(),
        );
        compared += 1;
        if failure_file.exists() {
            // herd rejects the test: so must litmix.
            if !matches!(&outcomes[..], [FileOutcome::Failed { .. }]) {
                bad.push(format!("{test}: herd rejects it, litmix does not"));
            }
            continue;
        }
        let expected = std::fs::read_to_string(&ok_file).unwrap();
        match &outcomes[..] {
            [
                FileOutcome::Checked {
                    test: t, result, ..
                },
            ] => {
                let got = block_with(t, result, style);
                if relevant(&got) != relevant(&expected) {
                    bad.push(format!("{test}:\n--- herd\n{expected}--- litmix\n{got}"));
                }
            }
            [FileOutcome::Failed { message, .. }] => bad.push(format!("{test}: {message}")),
            _ => bad.push(format!("{test}: no single outcome")),
        }
    }
    assert_eq!(compared, 11, "tests/C holds 11 tests");
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
