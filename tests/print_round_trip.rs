//! Print → parse round trip over every X86, PTX and X86+PTX oracle test:
//! each test parsed from `../shared/oracles` (herd-style `.litmus` files
//! and NVLitmus `.test` files, every instance), and from litmix's own
//! `examples/` and `tests/`, is printed by
//! `litmix::litmus::print::print_test`, parsed back, and must give the same
//! IR up to source positions, instruction texts and the file name.

use std::path::{Path, PathBuf};

use litmix::ir::{Test, Value};
use litmix::litmus::print::print_test;
use litmix::litmus::{parse_file_all, parse_str};

fn oracles() -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for up in ["..", "../.."] {
        let d = root.join(up).join("shared/oracles");
        if d.is_dir() {
            return Some(d);
        }
    }
    println!("skipping: ../shared/oracles is absent");
    None
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            walk(&p, out);
        } else if p.extension().is_some_and(|e| e == "litmus" || e == "test") {
            out.push(p);
        }
    }
}

/// The test with what printing does not keep blanked: positions,
/// instruction texts, the file; and register initialisations to 0 dropped
/// (a register starts at 0 either way; the herd-style parser writes one for
/// a register the condition names, the NVLitmus parser does not).
fn normalised(t: &Test) -> Test {
    let mut t = t.clone();
    t.file = None;
    for th in &mut t.threads {
        th.reg_init.retain(|(_, v)| *v != Value::Int(0));
        for i in &mut th.code {
            i.pos = Default::default();
            i.text.clear();
        }
    }
    t
}

/// Where two tests first differ, briefly.
fn first_difference(a: &Test, b: &Test) -> String {
    if a.locations != b.locations {
        return format!("locations {:?} / {:?}", a.locations, b.locations);
    }
    for (x, y) in a.threads.iter().zip(&b.threads) {
        if x.placement != y.placement || x.reg_init != y.reg_init || x.arch != y.arch {
            return format!(
                "P{} header {:?} {:?} / {:?} {:?}",
                x.id, x.placement, x.reg_init, y.placement, y.reg_init
            );
        }
        for (i, j) in x.code.iter().zip(&y.code) {
            if i != j {
                return format!(
                    "P{}: {:?} {:?} / {:?} {:?}",
                    x.id, i.kind, i.tags, j.kind, j.tags
                );
            }
        }
        if x.code.len() != y.code.len() {
            return format!(
                "P{}: {} / {} instructions",
                x.id,
                x.code.len(),
                y.code.len()
            );
        }
    }
    if a.threads.len() != b.threads.len() {
        return "thread count".into();
    }
    if a.condition != b.condition {
        return format!("condition {:?} / {:?}", a.condition, b.condition);
    }
    format!("observed {:?} / {:?}", a.observed, b.observed)
}

#[test]
fn every_x86_and_ptx_oracle_test_prints_and_parses_back_the_same() {
    let Some(dir) = oracles() else {
        return;
    };
    let mut files = Vec::new();
    walk(&dir, &mut files);
    // litmix's own tests and examples too: they hold the compound X86+PTX
    // tests (the oracles have none) and the fuzzers' regressions.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    walk(&root.join("examples"), &mut files);
    walk(&root.join("tests"), &mut files);
    let (mut tests, mut x86, mut ptx, mut compound) = (0, 0, 0, 0);
    let mut failures = Vec::new();
    for f in &files {
        for parsed in parse_file_all(f) {
            // Files the front ends refuse are the front-end tests' business.
            let Ok(t) = parsed else { continue };
            match t.arch.as_str() {
                "X86" => x86 += 1,
                "PTX" => ptx += 1,
                "X86+PTX" => compound += 1,
                _ => continue,
            }
            tests += 1;
            let text = match print_test(&t) {
                Ok(s) => s,
                Err(e) => {
                    failures.push(format!("{}: not printed: {e}", f.display()));
                    continue;
                }
            };
            match parse_str(&t.name, &text) {
                Err(d) => failures.push(format!(
                    "{}: printed text does not parse:\n{}\n{text}",
                    f.display(),
                    d.render()
                )),
                Ok(back) => {
                    let (a, b) = (normalised(&t), normalised(&back));
                    if a != b {
                        failures.push(format!(
                            "{}: the reparsed IR differs: {}\n{text}",
                            f.display(),
                            first_difference(&a, &b)
                        ));
                    }
                }
            }
        }
    }
    println!("{tests} tests: {x86} X86, {ptx} PTX, {compound} X86+PTX");
    assert!(
        x86 >= 250 && ptx >= 300 && compound >= 20,
        "{x86} X86, {ptx} PTX, {compound} X86+PTX tests only"
    );
    assert!(
        failures.is_empty(),
        "{} of {tests} tests fail the round trip:\n{}",
        failures.len(),
        failures
            .iter()
            .take(12)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n\n")
    );
}
