//! The seed-003 judge (`--model pwt`) beyond the verdicts of
//! tests/models/expected.csv: the `--variant`s that switch a decision of
//! docs/pomsets.md, `--why`, refusals outside the fragment and limits.

use litmix::exec::{CheckError, CheckOptions};
use litmix::ir::Test;
use std::path::PathBuf;

fn test(name: &str) -> Test {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/models/pwt")
        .join(format!("{name}.litmus"));
    litmix::litmus::parse_file(&path).expect("parses")
}

/// Whether pwt with `variants` validates the test's `exists` condition.
fn allowed(name: &str, variants: &[&str]) -> bool {
    let v: Vec<String> = variants.iter().map(|s| s.to_string()).collect();
    let r = litmix::pwt::check(&test(name), &v, &CheckOptions::default()).expect("checks");
    r.validated
}

#[test]
fn variants_switch_the_decisions() {
    // L.185: PTX's acquire pattern forbids MP+rfi-acq.
    assert!(allowed("V06-MP+rfi-acq", &[]));
    assert!(!allowed("V06-MP+rfi-acq", &["ptx-acq-delay"]));
    // A4: c8a as printed makes TC16_WK a per-location cycle.
    assert!(allowed("V14-TC16_WK", &[]));
    assert!(!allowed("V14-TC16_WK", &["literal-c8a"]));
    // A2: as printed, fences never strongly match.
    assert!(!allowed("V05-MP+Frel+Facq", &[]));
    assert!(allowed("V05-MP+Frel+Facq", &["literal-fences"]));
    assert!(allowed("V38d-MP+Frel+Facq", &["literal-fences"]));
    // L.177 has no (Rx, Rx) co-delay.
    assert!(allowed("V39-CoRR", &[]));
    assert!(!allowed("V39-CoRR", &["co-rr"]));
    // c7a' with e' outside e's thread forbids what L.1948 allows.
    assert!(allowed("V47a-FADD-rlx-read", &[]));
    assert!(!allowed("V47a-FADD-rlx-read", &["c7a-any-successor"]));
    // C7a''': a relaxed RMW continues the release sequence (MP+RMW).
    let src = "PTX MP+RMW\n{\nx=0; y=0;\n}\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 | P2@cta 2,gpu 0 ;\n st.relaxed.gpu x, 1 | atom.relaxed.gpu.add r0, y, 1 | ld.acquire.gpu r1, y ;\n st.release.gpu y, 1 | | ld.relaxed.gpu r2, x ;\nexists (1:r0 == 1 /\\ 2:r1 == 2 /\\ 2:r2 == 0)\n";
    let t = litmix::litmus::parse_str("mp.litmus", src).expect("parses");
    let run = |v: &[&str]| {
        let v: Vec<String> = v.iter().map(|s| s.to_string()).collect();
        litmix::pwt::check(&t, &v, &CheckOptions::default())
            .unwrap()
            .validated
    };
    assert!(run(&[]));
    assert!(!run(&["rmw-release-sequence"]));
    // Variants of other models are ignored.
    assert!(allowed("V14-TC16_WK", &["S128"]));
}

#[test]
fn why_names_the_violated_condition() {
    let opts = CheckOptions {
        why: true,
        ..CheckOptions::default()
    };
    let check = |name: &str| litmix::pwt::check(&test(name), &[], &opts).expect("checks");
    // MP with release/acquire: the initial x is read after Wx1 in ⊑ (c8b).
    let r = check("V12-PUB1_SYS");
    assert_eq!(r.forbidden.len(), 1);
    let f = &r.forbidden[0].failure;
    assert!(f.check.starts_with("c8b"), "{}", f.check);
    assert!(f.path.iter().any(|(_, _, rel)| rel == "rf"));
    // TC16 with relaxed accesses: a per-location cycle through c8a and s8a.
    let r = check("V15-TC16_SYS");
    let f = &r.forbidden[0].failure;
    assert!(f.check.starts_with("M8"), "{}", f.check);
    let labels: Vec<&str> = f.path.iter().map(|(_, _, l)| l.as_str()).collect();
    assert!(
        labels.contains(&"c8a") && labels.contains(&"s8a"),
        "{labels:?}"
    );
    // The cycle closes.
    assert_eq!(f.path.first().unwrap().0, f.path.last().unwrap().1);
    // The report names the condition and the events.
    let text = litmix::report::why::explain(&test("V15-TC16_SYS"), &r);
    assert!(
        text.contains("Forbidden outcome") && text.contains("M8"),
        "{text}"
    );
    assert!(text.contains("st.relaxed.sys x, 1"), "{text}");
}

#[test]
fn dependency_sets_follow_the_code() {
    // LB+ctrl on one side: the guarded write needs the read (↓e), the
    // constant write does not; the outcome is allowed.
    let src = "PTX LB+ctrl\n{\nx=0; y=0;\n}\n P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;\n ld.relaxed.sys r0, x | ld.relaxed.sys r1, y ;\n bne r0, 1, L | st.relaxed.sys x, 1 ;\n st.relaxed.sys y, 1 | ;\n L: | ;\nexists (0:r0 == 1 /\\ 1:r1 == 1)\n";
    let t = litmix::litmus::parse_str("lb.litmus", src).expect("parses");
    assert!(
        litmix::pwt::check(&t, &[], &CheckOptions::default())
            .unwrap()
            .validated
    );
    // Thin air: no pomset reaches it (the value 1 is never written).
    let r = litmix::pwt::check(&test("V09-OOTA"), &[], &CheckOptions::default()).unwrap();
    assert!(!r.validated);
    assert!(
        r.states
            .keys()
            .all(|s| s.iter().all(|v| *v == litmix::ir::Value::Int(0)))
    );
}

#[test]
fn outside_the_fragment_is_refused_with_a_position() {
    let src = "PTX B\n{\nx=0;\n}\n P0@cta 0,gpu 0 | P1@cta 0,gpu 0 ;\n st.weak x, 1 | bar.sync 0 ;\n bar.sync 0 | ld.weak r0, x ;\nexists (1:r0 == 0)\n";
    let t = litmix::litmus::parse_str("b.litmus", src).expect("parses");
    match litmix::pwt::check(&t, &[], &CheckOptions::default()) {
        Err(CheckError::Diagnostic(d)) => {
            let text = d.render();
            // The first barrier met: P0's, line 7, column 2.
            assert!(text.contains(":7:2"), "{text}");
            assert!(text.contains("P0") && text.contains("barrier"), "{text}");
        }
        other => panic!("expected a diagnostic, got {other:?}"),
    }
    let src = "PTX P\n{\nx=0;\n}\n P0@cta 0,gpu 0 ;\n fence.proxy.alias ;\nexists (x == 0)\n";
    let t = litmix::litmus::parse_str("p.litmus", src).expect("parses");
    assert!(matches!(
        litmix::pwt::check(&t, &[], &CheckOptions::default()),
        Err(CheckError::Diagnostic(_))
    ));
}

#[test]
fn limits_end_the_search_with_a_message() {
    let t = test("V07-RMW-chain");
    let opts = CheckOptions {
        max_candidates: 3,
        ..CheckOptions::default()
    };
    match litmix::pwt::check(&t, &[], &opts) {
        Err(CheckError::Limit(m)) => assert!(m.contains("max-candidates"), "{m}"),
        other => panic!("expected a limit, got {other:?}"),
    }
    let opts = CheckOptions {
        timeout: Some(std::time::Duration::ZERO),
        ..CheckOptions::default()
    };
    assert!(matches!(
        litmix::pwt::check(&t, &[], &opts),
        Err(CheckError::Timeout { .. })
    ));
}

#[test]
fn listed_models_and_variants() {
    assert!(litmix::pwt::is_model("pwt"));
    assert!(!litmix::pwt::is_model("ptx6"));
    let names: Vec<&str> = litmix::pwt::VARIANTS.iter().map(|(n, _)| *n).collect();
    for v in [
        "ptx-acq-delay",
        "literal-c8a",
        "literal-c7a",
        "literal-fences",
        "co-rr",
    ] {
        assert!(names.contains(&v), "{v}");
    }
}
