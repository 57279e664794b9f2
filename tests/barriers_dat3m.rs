//! Every barrier test of Dat3M's PTX suite (../shared/oracles/dat3m/PTX,
//! skipped when absent), read in Dat3M's dialect: `bar.cta.<mode> i{, id{,
//! quorum}}` (an instance tag, alone also the barrier id; then the id; then
//! the thread count; without a count an instance waits for the CTA's
//! threads that execute a barrier with that id). The state sets under
//! ptx6 were derived by hand (issue 27; the reading is in
//! docs/known-differences.md, "PTX barrier dialects"), each written as the values of the
//! terms of the test's condition.

use litmix::exec::{CheckOptions, check};
use litmix::litmus::parse_file;
use litmix::models::load;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn manual() -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for up in ["..", "../.."] {
        let d = root.join(up).join("shared/oracles/dat3m/PTX/Manual");
        if d.is_dir() {
            return Some(d);
        }
    }
    println!("skipping: ../shared/oracles/dat3m/PTX/Manual is absent");
    None
}

/// A state as a sorted set of `term=value` strings.
type State = BTreeSet<String>;

/// The states litmix lists, from the herd-style block.
fn states(file: &Path) -> (Vec<State>, bool, bool) {
    let test = parse_file(file).unwrap_or_else(|d| panic!("{}", d.render()));
    let model = load("ptx6").expect("ptx6");
    let r = check(&test, &model, &CheckOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    let block = litmix::report::herd::block(&test, &r);
    let mut out = Vec::new();
    let mut inside = false;
    for line in block.lines() {
        if line.starts_with("States ") {
            inside = true;
            continue;
        }
        if inside {
            if line == "Ok" || line == "No" {
                break;
            }
            out.push(
                line.split(';')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
                    .collect(),
            );
        }
    }
    out.sort();
    (out, r.validated, r.barrier_deadlocks > 0)
}

/// `"0:r0=1 1:r1=0 | 0:r0=1 1:r1=1"`: states separated by `|`.
fn expect(spec: &str) -> Vec<State> {
    let mut v: Vec<State> = spec
        .split('|')
        .map(|s| s.split_whitespace().map(str::to_string).collect())
        .filter(|s: &State| !s.is_empty())
        .collect();
    v.sort();
    v
}

/// (file, hand-derived states, condition validated, some execution blocks).
const CASES: &[(&str, &str, bool, bool)] = &[
    // Two CTAs: each `bar.cta.sync 1` has one executor in its CTA and
    // completes alone; SB is free.
    (
        "SB+bar-diff-cta",
        "0:r0=0 1:r1=0 | 0:r0=0 1:r1=1 | 0:r0=1 1:r1=0 | 0:r0=1 1:r1=1",
        false,
        false,
    ),
    // Same id in one CTA: the loads follow both stores.
    ("SB+bar-const-equal", "0:r0=1 1:r1=1", true, false),
    // Ids 0 and 1: one executor each, no synchronisation.
    (
        "SB+bar-const-diff",
        "0:r0=0 1:r1=0 | 0:r0=0 1:r1=1 | 0:r0=1 1:r1=0 | 0:r0=1 1:r1=1",
        false,
        false,
    ),
    // `bar.cta.sync 1, r2` with r2 = r3 = 0: id 0 for both.
    ("SB+named-bar-reg-equal", "0:r0=1 1:r1=1", true, false),
    // Ids r2 = 1 and r3 = 2.
    (
        "SB+named-bar-reg-diff",
        "0:r0=0 1:r1=0 | 0:r0=0 1:r1=1 | 0:r0=1 1:r1=0 | 0:r0=1 1:r1=1",
        false,
        false,
    ),
    ("SB+named-bar-reg-const-equal", "0:r0=1 1:r1=1", true, false),
    (
        "SB+named-bar-reg-const-diff",
        "0:r0=0 1:r1=0 | 0:r0=0 1:r1=1 | 0:r0=1 1:r1=0 | 0:r0=1 1:r1=1",
        false,
        false,
    ),
    // P0's id is the value it reads from z: 1 (P2's store) synchronises
    // with P1's id 1, 0 leaves both alone.
    (
        "SB+named-bar-dyn-reg-const",
        "0:r0=0 1:r1=0 | 0:r0=0 1:r1=1 | 0:r0=1 1:r1=0 | 0:r0=1 1:r1=1",
        false,
        false,
    ),
    (
        "SB+named-bar-sta-reg-const",
        "0:r0=0 0:r2=0 1:r1=0 | 0:r0=0 0:r2=0 1:r1=1 | 0:r0=1 0:r2=0 1:r1=0 \
         | 0:r0=1 0:r2=0 1:r1=1 | 0:r0=1 0:r2=1 1:r1=1",
        true,
        false,
    ),
    // Both barriers synchronise.
    ("SB+twice-bars", "0:r0=1 0:r1=1 1:r0=1 1:r1=1", true, false),
    // The second pair has ids 2 and 3: one executor each.
    (
        "SB+twice-bars-diff",
        "0:r0=1 0:r1=0 1:r0=1 1:r1=0 | 0:r0=1 0:r1=0 1:r0=1 1:r1=1 \
         | 0:r0=1 0:r1=1 1:r0=1 1:r1=0 | 0:r0=1 0:r1=1 1:r0=1 1:r1=1",
        false,
        false,
    ),
    // P0/P1 at id 1, P2/P3 at id 2: each pair synchronises only with
    // itself (the terms of the condition).
    (
        "barrier-instance-id-forall",
        "0:r0=1 1:r0=1 2:r1=1 3:r1=1",
        true,
        false,
    ),
    (
        "barrier-logical-id-forall",
        "0:r0=1 1:r0=1 2:r1=1 3:r1=1",
        true,
        false,
    ),
    ("barrier-instance-id-exists", ALL_FOUR_FREE, true, false),
    ("barrier-logical-id-exists", ALL_FOUR_FREE, true, false),
    // bar 0 puts the load before the store; bar 1 completes.
    ("PC-bar-sync-sync-1", "0:r0=0", true, false),
    ("PC-bar-sync-sync-2", "0:r0=0", true, false),
    // P0 waits at 0 for P1, P1 at 1 for P0: every execution blocks, no
    // final state, the `~exists` holds vacuously.
    ("PC-bar-sync-sync-3", "", true, true),
    ("PC-bar-sync-sync-4", "", true, true),
    // The arrive does not wait: load and store unordered.
    ("PC-bar-sync-arrive", "0:r0=0 | 0:r0=1", true, false),
    // The store precedes both atomics / loads through bar 0.
    (
        "counter-atomic-store-rmw",
        "0:r0=1 1:r0=2 | 0:r0=2 1:r0=1",
        true,
        false,
    ),
    (
        "counter-plain-store-rmw",
        "0:r0=1 1:r0=2 | 0:r0=2 1:r0=1",
        true,
        false,
    ),
    (
        "counter-plain-store-atomic-load",
        "0:r0=1 1:r0=1",
        true,
        false,
    ),
    (
        "counter-plain-store-plain-load",
        "0:r0=1 1:r0=1",
        true,
        false,
    ),
    // P0 is alone in its CTA; P1 and P2 synchronise with each other only.
    // P1 leaves its loop reading P0's f=0.
    (
        "XF-Barrier-rlx",
        "1:r1=0 1:r2=0 | 1:r1=1 1:r2=0",
        true,
        false,
    ),
    (
        "XF-Barrier-weak",
        "1:r1=0 1:r2=0 | 1:r1=1 1:r2=0",
        true,
        false,
    ),
    // The acquire reads P0's release, which carries x=1.
    ("XF-Barrier-relacq", "1:r1=1 1:r2=0", false, false),
];

const ALL_FOUR_FREE: &str = "0:r1=0 1:r1=0 2:r0=0 3:r0=0 | 0:r1=0 1:r1=0 2:r0=0 3:r0=1 \
    | 0:r1=0 1:r1=0 2:r0=1 3:r0=0 | 0:r1=0 1:r1=0 2:r0=1 3:r0=1 \
    | 0:r1=0 1:r1=1 2:r0=0 3:r0=0 | 0:r1=0 1:r1=1 2:r0=0 3:r0=1 \
    | 0:r1=0 1:r1=1 2:r0=1 3:r0=0 | 0:r1=0 1:r1=1 2:r0=1 3:r0=1 \
    | 0:r1=1 1:r1=0 2:r0=0 3:r0=0 | 0:r1=1 1:r1=0 2:r0=0 3:r0=1 \
    | 0:r1=1 1:r1=0 2:r0=1 3:r0=0 | 0:r1=1 1:r1=0 2:r0=1 3:r0=1 \
    | 0:r1=1 1:r1=1 2:r0=0 3:r0=0 | 0:r1=1 1:r1=1 2:r0=0 3:r0=1 \
    | 0:r1=1 1:r1=1 2:r0=1 3:r0=0 | 0:r1=1 1:r1=1 2:r0=1 3:r0=1";

#[test]
fn every_dat3m_barrier_test_gives_the_hand_derived_states() {
    let Some(dir) = manual() else { return };
    let mut bad = Vec::new();
    for (name, spec, validated, blocks) in CASES {
        let file = dir.join(format!("{name}.litmus"));
        let got = states(&file);
        let want = (expect(spec), *validated, *blocks);
        if got != want {
            bad.push(format!("{name}: got {got:?}, derived {want:?}"));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn the_list_covers_every_barrier_test_of_the_suite() {
    let Some(dir) = manual() else { return };
    let root = dir.parent().expect("PTX folder");
    let mut found = Vec::new();
    let mut todo = vec![root.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).expect("readable").flatten() {
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
            } else if p.extension().is_some_and(|x| x == "litmus") {
                let text = std::fs::read_to_string(&p).unwrap_or_default();
                if text.contains("bar.cta.") || text.contains("barrier.cta.") {
                    found.push(p.file_stem().unwrap().to_string_lossy().to_string());
                }
            }
        }
    }
    found.sort();
    let mut listed: Vec<String> = CASES.iter().map(|c| c.0.to_string()).collect();
    listed.sort();
    assert_eq!(found, listed);
}
