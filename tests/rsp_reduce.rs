//! The cache machine's reductions (docs/rsp-cache.md, R1-R6 and the byte
//! keys) against the plain machine (`rsp-cache-unreduced`): the same final
//! states on every seed example and on the programs `verify-mapping`
//! enumerates for both OpenCL+RSP schemes (the bound-2 programs and a deterministic slice of bound 3).

use litmix::exec::CheckOptions;
use litmix::ir::Test;
use litmix::mapping::{check, compile, verify};
use std::collections::BTreeSet;
use std::path::Path;

/// Final states under `model` and the states explored; `None` when the
/// exploration passes `cap` states.
fn states(test: &Test, model: &str, cap: usize) -> Option<(BTreeSet<Vec<litmix::ir::Value>>, u64)> {
    let opts = CheckOptions {
        max_states: cap,
        ..CheckOptions::default()
    };
    match litmix::driver::check_named(test, model, &opts) {
        Ok(r) => {
            let n = r.operational.as_ref().map_or(0, |o| o.states);
            Some((r.states.keys().cloned().collect(), n))
        }
        Err(litmix::exec::CheckError::Limit(_)) => None,
        Err(e) => panic!("{}: {model}: {e}", test.name),
    }
}

/// Same final states with and without the reductions; returns the state
/// counts (reduced, plain), or `None` when the plain machine passes
/// 200,000 states (too slow for a test; docs/rsp-cache.md has the bigger
/// comparisons).
fn same_states(test: &Test) -> Option<(u64, u64)> {
    let (a, na) = states(test, "rsp-cache", usize::MAX).expect("reduced machine within limits");
    let (b, nb) = states(test, "rsp-cache-unreduced", 200_000)?;
    assert!(!a.is_empty(), "{}: no outcome", test.name);
    assert_eq!(
        a, b,
        "{}: the reductions changed the final states",
        test.name
    );
    Some((na, nb))
}

/// A source test observing every register and location.
fn fully_observed(test: &Test) -> Test {
    let mut t = test.clone();
    t.observed = check::full_observation(&t);
    t
}

/// A machine-level test observing every location besides its condition.
fn with_locations(test: &Test) -> Test {
    let mut t = test.clone();
    t.observed = (0..t.locations.len()).map(litmix::ir::Term::Loc).collect();
    t
}

#[test]
fn seed_examples_keep_their_states() {
    let mut seen = 0;
    for dir in ["tests/models/rsp-cache"] {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "litmus") {
                let t = litmix::litmus::parse_file(&p).unwrap();
                if same_states(&with_locations(&t)).is_some() {
                    seen += 1;
                }
            }
        }
    }
    for file in [
        "tests/mappings/RSP-Fig4-MP-dv.litmus",
        "tests/mappings/RSP-Fig5-inc-wg-remote-store.litmus",
        "tests/mappings/RSP-MP-dv-remote-load.litmus",
    ] {
        let src = litmix::litmus::parse_file(Path::new(file)).unwrap();
        for mapping in ["opencl-rsp-original", "opencl-rsp-proposed"] {
            let m = litmix::mapping::load(mapping).unwrap();
            let c = compile::compile(&m, &fully_observed(&src)).unwrap();
            let (reduced, plain) = same_states(&c.test).expect("seed example within limits");
            assert!(reduced < plain, "{file} {mapping}: {reduced} vs {plain}");
            seen += 1;
        }
    }
    assert!(seen > 10, "only {seen} examples");
}

fn enumerated(mapping: &str, bound: usize, no_reduce: bool, every: usize) -> usize {
    let m = litmix::mapping::load(mapping).unwrap();
    let o = verify::Options {
        bound,
        shard: (1, every),
        stop_at_first: false,
        out: None,
        check: check::Options::default(),
        all_scopes: false,
        max_threads: None,
        max_locations: None,
        max_groups: None,
        max_thread_size: None,
        count_only: false,
        orders: Vec::new(),
        no_reduce,
        no_cycle_cut: false,
        no_dominance: false,
    };
    let progs = verify::programs(&m, &o);
    for (_, p) in &progs {
        let text = p.to_c("P", "x=0");
        let src = litmix::litmus::parse_str("P.litmus", &text).unwrap();
        let c = compile::compile(&m, &fully_observed(&src)).unwrap();
        assert!(same_states(&c.test).is_some(), "{}", p.summary());
    }
    progs.len()
}

#[test]
fn bound_2_programs_keep_their_states() {
    for mapping in ["opencl-rsp-original", "opencl-rsp-proposed"] {
        // Every reduced program, and every 8th of the plain enumeration
        // (racy and weaker-order programs too).
        assert_eq!(enumerated(mapping, 2, false, 1), 493, "{mapping}");
        assert!(enumerated(mapping, 2, true, 8) > 450, "{mapping}");
    }
}

#[test]
fn a_slice_of_bound_3_keeps_its_states() {
    for mapping in ["opencl-rsp-original", "opencl-rsp-proposed"] {
        // Every 1000th program of the reduced bound-3 enumeration.
        assert!(enumerated(mapping, 3, false, 1000) > 20, "{mapping}");
    }
}
