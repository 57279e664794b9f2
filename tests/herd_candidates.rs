//! Which candidates litmix builds for herd's models, as herd7 7.58 builds
//! them (docs/decisions.md): a model blind to `co` gets one coherence order
//! per choice of last write of each observed location; `pco` is init-first;
//! herd's page-table primitives are empty. Every count below was derived
//! by hand (and matches herd7's `Witnesses` on the same test and model).

use litmix::cat::Model;
use litmix::exec::{CheckOptions, CheckResult, check};
use litmix::litmus::parse_str;

fn run(test: &str, model: &str) -> CheckResult {
    let test = parse_str("t.litmus", test).unwrap_or_else(|d| panic!("{}", d.render()));
    let model =
        Model::parse("m.cat", model, &|_| None).unwrap_or_else(|d| panic!("{}", d.render()));
    check(&test, &model, &CheckOptions::default()).unwrap()
}

/// (states, positive + negative witnesses)
fn counts(test: &str, model: &str) -> (usize, u64) {
    let r = run(test, model);
    (r.states.len(), r.positive + r.negative)
}

/// Reads nothing of `co`: every coherence order is judged alike.
const BLIND: &str = "\"blind\"\nacyclic po | rf as causality\n";
/// Reads `co`: the engine's orders are all tried.
const SEES_CO: &str = "\"sees\"\nacyclic po | rf | co as sc\n";
/// Reads `co` only in a definition no check uses: still blind.
const UNUSED_CO: &str = "\"unused\"\nlet unused = co | fr\nacyclic po | rf as causality\n";

/// Three writes to `y` (two in P0, one in P1), and a condition that names
/// `y` or not.
fn three_writes(cond: &str) -> String {
    format!(
        "C t\n{{ [y] = 0; }}\n\nP0 (volatile int* y) {{\n  *y = 1;\n  *y = 2;\n}}\n\n\
         P1 (volatile int* y) {{\n  *y = 3;\n}}\n{cond}\n"
    )
}

#[test]
fn a_blind_model_chooses_only_observed_last_writes() {
    // y observed: one candidate per possible last write (1, 2 or 3).
    assert_eq!(
        counts(&three_writes("exists (y=1 \\/ true)"), BLIND),
        (3, 3)
    );
    // y unobserved: one candidate in all.
    assert_eq!(counts(&three_writes("exists (true)"), BLIND), (1, 1));
    assert_eq!(counts(&three_writes("exists (true)"), UNUSED_CO), (1, 1));
}

#[test]
fn a_model_reading_co_gets_every_order() {
    // The 3! orders of three writes, of which acyclic(po | rf | co) keeps
    // the three with 1 before 2: final values 2 (twice: 3,1,2 and 1,3,2)
    // and 3 (1,2,3).
    let r = run(&three_writes("exists (y=1 \\/ true)"), SEES_CO);
    assert_eq!(r.states.len(), 2);
    assert_eq!(r.positive + r.negative, 3);
    // Unobserved, the orders are still all judged: three candidates.
    assert_eq!(counts(&three_writes("exists (true)"), SEES_CO), (1, 3));
}

#[test]
fn a_blind_model_multiplies_reads_from_by_last_writes() {
    // P0 reads y once (from init, 1 or 3) and y is observed (final 1 or 3):
    // 3 x 2 candidates, 2 final states.
    let t = "C t\n{ [y] = 0; }\n\nP0 (volatile int* y) {\n  *y = 1;\n  int r0 = *y;\n}\n\n\
             P1 (volatile int* y) {\n  *y = 3;\n}\nexists (y=1 \\/ true)\n";
    assert_eq!(counts(t, BLIND), (2, 6));
}

/// Reads `co` only through `FW`: forbids a last write with a write
/// po-before it (so of the three writes, `*y = 2` may not be last).
const FW_ONLY: &str = "\"fw\"\nacyclic po | rf as causality\n\
                       irreflexive po ; [FW] ; po^-1 as not-after\n";
/// The same checks and one that reads `co` (and always holds).
const FW_AND_CO: &str = "\"fw-co\"\nacyclic po | rf as causality\n\
                         irreflexive po ; [FW] ; po^-1 as not-after\n\
                         irreflexive co as order\n";

#[test]
fn a_model_reading_only_fw_counts_every_order() {
    // Six orders of the three writes, two per last write; a last write of
    // 2 is forbidden. The FW-only model judges one order per last write,
    // each counted twice: the same counts as the model that reads `co`
    // and judges all six.
    let t = three_writes("exists (y=1 \\/ true)");
    let [fw, co] = [FW_ONLY, FW_AND_CO].map(|m| run(&t, m));
    for r in [&fw, &co] {
        let counts: Vec<u64> = r.states.values().copied().collect();
        assert_eq!(
            counts,
            vec![2, 2],
            "y=1 and y=3, twice each, in {}",
            r.model
        );
        assert_eq!(r.positive + r.negative, 4);
        assert_eq!(r.candidates, 6);
    }
    // The work done (candidates judged, by size) is less without `co`.
    assert!(fw.work < co.work, "{} against {}", fw.work, co.work);
}

/// A file of herd's library in the shared oracles, as a model's include
/// resolver gives it (`cos-ok-opt.cat` includes `cross.cat`).
fn herd_lib(name: &str) -> Option<(String, String)> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/oracles/herd/libdir")
        .join(name);
    let text = std::fs::read_to_string(&path).ok()?;
    Some((path.display().to_string(), text))
}

#[test]
fn pco_is_init_first_only() {
    // One write per location and three reads: 2 x 2 x 2 reads-from choices.
    // With pco holding the po-loc and rf observations, the read of a after
    // P0's own write of a could not read the initial value (4 candidates);
    // herd7's default pco (init first) keeps all 8.
    let t = "C fig\n{ [a] = 0; [x] = 0; [y] = 0; }\n\n\
             P0 (volatile int* a, atomic_int* x, atomic_int* y) {\n  *a = 1;\n  \
             int r0 = atomic_load_explicit(x, memory_order_relaxed);\n  int r1 = *a;\n  \
             atomic_store_explicit(y, 1, memory_order_relaxed);\n}\n\n\
             P1 (atomic_int* x, atomic_int* y) {\n  \
             int r2 = atomic_load_explicit(y, memory_order_relaxed);\n  \
             atomic_store_explicit(x, 1, memory_order_relaxed);\n}\n\n\
             exists (a=1 /\\ x=1 /\\ y=1)\n";
    let (file, text) = herd_lib("cos-ok-opt.cat").expect("../shared/oracles/herd/libdir");
    let test = parse_str("t.litmus", t).unwrap_or_else(|d| panic!("{}", d.render()));
    let model = Model::parse(&file, &text, &herd_lib).unwrap_or_else(|d| panic!("{}", d.render()));
    let r = check(&test, &model, &CheckOptions::default()).unwrap();
    assert_eq!(r.positive + r.negative, 8);
}

#[test]
fn page_table_primitives_are_empty() {
    let model = "\"pt\"\nflag ~empty oa-changes(W, po) as oa\n\
                 flag ~empty at-least-one-writable(W, po) as wr\n\
                 flag ~empty same-oa(po) as same\nflag ~empty W as has-writes\n";
    let t = "C t\n{ [y] = 0; }\n\nP0 (volatile int* y) {\n  *y = 1;\n  *y = 2;\n}\nexists (true)\n";
    let r = run(t, model);
    // The probe flag shows the flags are evaluated at all.
    assert_eq!(r.flags.iter().collect::<Vec<_>>(), vec!["has-writes"]);
}
