//! Hand-derived verdicts for the built-in models (tests/models/expected.csv).
//! Every verdict was derived by hand from the model's paper; no differences
//! are tolerated.

use litmix::conformance::{read_expectations, run};
use litmix::exec::CheckOptions;
use std::path::PathBuf;

#[test]
fn hand_derived_verdicts() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/models");
    let exp = read_expectations(&dir.join("expected.csv")).expect("manifest");
    assert!(exp.len() >= 40, "too few hand-derived tests: {}", exp.len());
    let report = run(&dir, &exp, &[], &[], &CheckOptions::default());
    println!("{}", report.summary());
    let (agree, _, _, skipped, _) = report.counts();
    assert_eq!(skipped, 0, "hand-derived tests must all be supported");
    assert!(
        report.passed(),
        "hand-derived verdicts disagree:\n{}",
        report.summary()
    );
    assert_eq!(agree, exp.len());
}
