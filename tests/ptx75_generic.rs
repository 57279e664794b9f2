//! On programs that use only the generic proxy and no aliases, `ptx75` is
//! `ptx6` (seed 002 §5.2: "pre-existing code written using only generic
//! operations and avoiding virtual aliases continues to work unmodified").
//! Checked on every PTX test available: the Dat3M oracles, the NVLitmus
//! tests (each template row), and tests/models/ptx6. Both the verdict and
//! the set of allowed final states must be equal.

use litmix::exec::{CheckOptions, check};
use litmix::ir::{Proxy, Test};
use litmix::litmus::parse_file_all;
use std::path::{Path, PathBuf};

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            walk(&p, out);
        } else if p.extension().is_some_and(|x| x == "litmus" || x == "test") {
            out.push(p);
        }
    }
}

/// No alias, no proxy fence, no access through a non-generic proxy.
fn generic_only(t: &Test) -> bool {
    !t.has_aliases()
        && t.threads.iter().all(|th| {
            th.code.iter().all(|i| {
                !i.tags.iter().any(|tag| {
                    tag == "PROXY"
                        || Proxy::ALL
                            .iter()
                            .any(|p| *p != Proxy::Generic && p.tag() == tag)
                })
            })
        })
}

#[test]
fn generic_programs_get_ptx6_verdicts() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    walk(&root.join("tests/models/ptx6"), &mut files);
    let shared = ["..", "../.."]
        .iter()
        .map(|up| root.join(up).join("shared/oracles"))
        .find(|d| d.is_dir());
    match &shared {
        Some(s) => {
            walk(&s.join("dat3m/PTX"), &mut files);
            walk(&s.join("mixedproxy"), &mut files);
        }
        None => eprintln!("shared/oracles not found: checking tests/models/ptx6 only"),
    }
    files.sort();
    let ptx6 = litmix::models::load("ptx6").unwrap();
    let ptx75 = litmix::models::load("ptx75").unwrap();
    let opts = CheckOptions::default();
    let (mut same, mut skipped, mut unsupported) = (0, 0, 0);
    let mut diffs = Vec::new();
    for f in &files {
        for parsed in parse_file_all(f) {
            let t = match parsed {
                Ok(t) => t,
                Err(d) if d.message.contains("unsupported") => {
                    unsupported += 1;
                    continue;
                }
                Err(d) => panic!("{}", d.render()),
            };
            if t.arch != "PTX" || !generic_only(&t) {
                skipped += 1;
                continue;
            }
            let a = check(&t, &ptx6, &opts).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
            let b = check(&t, &ptx75, &opts).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
            let sa: Vec<_> = a.states.keys().collect();
            let sb: Vec<_> = b.states.keys().collect();
            if a.validated == b.validated && sa == sb {
                same += 1;
            } else {
                diffs.push(format!(
                    "{} ({}): ptx6 {} {:?}, ptx75 {} {:?}",
                    f.display(),
                    t.name,
                    a.validated,
                    sa,
                    b.validated,
                    sb
                ));
            }
        }
    }
    println!(
        "generic-only PTX tests: {same} identical, {} different; {skipped} use proxies or aliases, {unsupported} unsupported",
        diffs.len()
    );
    assert!(
        diffs.is_empty(),
        "ptx6 and ptx75 differ:\n{}",
        diffs.join("\n")
    );
    assert!(same >= 50, "only {same} generic-only tests");
}
