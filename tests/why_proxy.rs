//! `--why` on allowed outcomes: ptx75 names the base-causality path that is
//! not proxy-preserved and what is missing on it.

use litmix::exec::{CheckOptions, check};
use litmix::litmus::parse_file;
use litmix::report::why::explain;
use std::path::PathBuf;

fn why(file: &str, model: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(file);
    let test = parse_file(&path).unwrap();
    let m = litmix::models::load(model).unwrap();
    let opts = CheckOptions {
        why: true,
        ..CheckOptions::default()
    };
    let r = check(&test, &m, &opts).unwrap();
    explain(&test, &r)
}

#[test]
fn missing_alias_fence() {
    let s = why("tests/models/ptx75/Fig8a-no-fence.litmus", "ptx75");
    assert!(s.contains("Allowed outcome: 0:r3=0;"), "{s}");
    assert!(s.contains("no alias fence between aliases"), "{s}");
    assert!(s.contains("path: b --po--> c"), "{s}");
}

#[test]
fn proxy_fence_in_the_wrong_cta() {
    let s = why("tests/models/ptx75/Fig8e-fence-other-cta.litmus", "ptx75");
    assert!(s.contains("no proxy fence before destination"), "{s}");
    // The path crosses the release/acquire and shows the misplaced fence.
    assert!(s.contains("--rf-->"), "{s}");
    assert!(s.contains("F (P0: fence.proxy.constant)"), "{s}");
    assert!(s.contains("R rd2=0 (P1: ld.const.u32 r3, [rd2])"), "{s}");
}

#[test]
fn proxy_fences_in_the_wrong_order() {
    let s = why("tests/models/ptx75/Fig8f-wrong-order.litmus", "ptx75");
    assert!(s.contains("proxy fences not in path order"), "{s}");
    assert!(!s.contains("no proxy fence"), "{s}");
}

#[test]
fn nothing_to_explain_without_why_bindings_or_reasons() {
    // ptx6 has no why_ bindings; a fenced ptx75 test allows no asked-about
    // outcome; a generic MP test allows its outcome for no proxy reason.
    assert!(!why("tests/models/ptx75/Fig8a-no-fence.litmus", "ptx6").contains("Allowed"));
    assert!(!why("tests/models/ptx75/Fig8a-alias-fence.litmus", "ptx75").contains("Allowed"));
    assert!(!why("tests/models/ptx6/MP+weak.litmus", "ptx75").contains("Allowed"));
}
