//! The reductions of `verify-mapping` (docs/mappings.md, "Reductions")
//! checked against the plain canonical enumeration (`--no-reduce`): every
//! program a race cut skips is racy under the source model, every program
//! the edge-fence cut skips behaves as the program without its edge fences
//! in the source and allows no fewer target states, and a deliberately
//! wrong mapping keeps its minimal counterexamples.

use litmix::driver::ModelCache;
use litmix::mapping::check::{self, Verdict};
use litmix::mapping::enumerate::{self, OpKind, Program};
use litmix::mapping::verify;
use std::collections::BTreeSet;

/// A campaign's counterexamples as sorted (program, extra state) pairs.
fn found_programs(s: &verify::Summary) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = s
        .found
        .iter()
        .map(|c| (c.program.clone(), c.extra_state.clone()))
        .collect();
    v.sort();
    v
}

fn options(bound: usize, orders: &[&str], threads: usize, groups: usize) -> verify::Options {
    verify::Options {
        bound,
        shard: (1, 1),
        stop_at_first: false,
        out: None,
        check: check::Options::default(),
        all_scopes: false,
        max_threads: Some(threads),
        max_locations: Some(2),
        max_groups: Some(groups),
        max_thread_size: None,
        count_only: false,
        orders: orders.iter().map(|s| s.to_string()).collect(),
        no_reduce: false,
        // The other cuts are checked on their own here; the cycle cut has
        // its own test.
        no_cycle_cut: true,
        no_dominance: false,
    }
}

fn check(m: &litmix::mapping::Mapping, p: &Program, cache: &ModelCache) -> check::Report {
    let text = p.to_c("P", "x=0");
    let src = litmix::litmus::parse_str("P.litmus", &text).unwrap();
    check::check_test(m, &src, "P", cache, &check::Options::default()).unwrap()
}

/// `p` without the fences that start or end a thread.
fn strip_edge_fences(p: &Program) -> Program {
    let mut q = p.clone();
    for t in &mut q.threads {
        while t.ops.first().is_some_and(|o| o.kind == OpKind::Fence) {
            t.ops.remove(0);
        }
        while t.ops.last().is_some_and(|o| o.kind == OpKind::Fence) {
            t.ops.pop();
        }
    }
    q
}

/// The compiled text of `p` under `m`.
fn compiled(m: &litmix::mapping::Mapping, p: &Program) -> String {
    let text = p.to_c("P", "x=0");
    let src = litmix::litmus::parse_str("P.litmus", &text).unwrap();
    litmix::mapping::compile::compile(m, &src).unwrap().text
}

/// `p` with each atomic operation raised to the strongest order that
/// compiles to the same target text (rlx < acq, rel < acq_rel < sc).
fn strengthen(m: &litmix::mapping::Mapping, p: &Program) -> Program {
    let want = compiled(m, p);
    let mut q = p.clone();
    for t in 0..q.threads.len() {
        for i in 0..q.threads[t].ops.len() {
            let o = q.threads[t].ops[i].order;
            if o == 0 {
                continue;
            }
            for o2 in [5u8, 4, 3, 2] {
                if o2 <= o || (o == 2 && o2 == 3) || (o == 3 && o2 == 2) {
                    continue;
                }
                let mut r = q.clone();
                r.threads[t].ops[i].order = o2;
                let text = r.to_c("P", "x=0");
                let Ok(src) = litmix::litmus::parse_str("P.litmus", &text) else {
                    continue;
                };
                if litmix::mapping::compile::compile(m, &src).is_ok_and(|c| c.text == want) {
                    q = r;
                    break;
                }
            }
        }
    }
    q
}

/// Every program the reductions skip (in the plain enumeration, not in the
/// reduced one) is racy, or loses its edge fences harmlessly (same source
/// states and race verdict, no target state lost), or has a stronger twin
/// compiling to the same code that is race-free with fewer source states;
/// returns how many skipped programs took each path.
fn skipped_programs_are_harmless(
    mapping: &str,
    o: verify::Options,
) -> (usize, usize, usize, usize) {
    let m = litmix::mapping::load(mapping).unwrap();
    let reduced: BTreeSet<String> = verify::programs(&m, &o)
        .iter()
        .map(|(_, p)| p.summary())
        .collect();
    let mut plain = o.clone();
    plain.no_reduce = true;
    let all = verify::programs(&m, &plain);
    let cache = ModelCache::default();
    let (mut racy, mut fenced, mut stronger, mut placed) = (0, 0, 0, 0);
    let placements = verify::reductions(&m, &m.target).placements;
    for (_, p) in &all {
        if reduced.contains(&p.summary()) {
            continue;
        }
        let r = check(&m, p, &cache);
        if r.verdict == Verdict::Racy {
            racy += 1;
            continue;
        }
        let q = strip_edge_fences(p);
        if q != *p {
            let rq = check(&m, &q, &cache);
            assert_ne!(rq.verdict, Verdict::Racy, "{}", p.summary());
            assert_eq!(r.source_states, rq.source_states, "{}", p.summary());
            let tq: BTreeSet<_> = rq.target_states.iter().collect();
            assert!(
                r.target_states.iter().all(|s| tq.contains(s)),
                "{mapping}: removing edge fences lost a target state: {}",
                p.summary()
            );
            fenced += 1;
            continue;
        }
        if let Some(q) = placements
            .then(|| enumerate::coarser_placement_twin(&verify::space(&m, &plain), p))
            .flatten()
        {
            // The placement cut: the same threads with fewer work-groups or
            // devices and the same covered threads per scoped operation
            // behave alike under both models.
            let rq = check(&m, &q, &cache);
            assert_eq!(r.verdict, rq.verdict, "{}", p.summary());
            assert_eq!(r.source_states, rq.source_states, "{}", p.summary());
            assert_eq!(r.target_states, rq.target_states, "{}", p.summary());
            // The twin (or a coarser twin of it, in canonical thread order)
            // is enumerated.
            let space = verify::space(&m, &plain);
            let mut rep = enumerate::canonical(&q);
            while !reduced.contains(&rep.summary()) {
                match enumerate::coarser_placement_twin(&space, &rep) {
                    Some(t) => rep = enumerate::canonical(&t),
                    None => panic!(
                        "{mapping}: the coarser twin of {} is not enumerated: {}",
                        p.summary(),
                        rep.summary()
                    ),
                }
            }
            placed += 1;
            continue;
        }
        let q = strengthen(&m, p);
        assert!(
            q != *p,
            "{mapping}: skipped a race-free program without edge fences or stronger twin: {}",
            p.summary()
        );
        let rq = check(&m, &q, &cache);
        assert_ne!(rq.verdict, Verdict::Racy, "{}", q.summary());
        let sp: BTreeSet<_> = r.source_states.iter().collect();
        assert!(
            rq.source_states.iter().all(|s| sp.contains(s)),
            "{mapping}: a stronger twin has a new source state: {}",
            q.summary()
        );
        stronger += 1;
    }
    assert!(
        reduced.len() < all.len(),
        "{mapping}: nothing was reduced ({} programs)",
        all.len()
    );
    (racy, fenced, stronger, placed)
}

#[test]
fn sc11_ptx_skips_only_racy_or_edge_fenced_programs() {
    let (racy, fenced, _, placed) =
        skipped_programs_are_harmless("sc11-ptx", options(3, &["na", "rlx", "rel", "sc"], 3, 3));
    // Both race cuts, the fence cut and the placement cut fire (sc11-ptx
    // compiles every order differently: no stronger twins).
    assert!(
        racy > 1000 && fenced > 100 && placed > 100,
        "racy {racy}, fenced {fenced}, placed {placed}"
    );
}

#[test]
fn sc11_x86ptx_skips_only_racy_edge_fenced_or_dominated_programs() {
    let (racy, fenced, stronger, placed) =
        skipped_programs_are_harmless("sc11-x86ptx", options(3, &["na", "acq", "rel", "sc"], 2, 2));
    assert!(
        racy > 100 && fenced > 100 && stronger > 100 && placed > 10,
        "racy {racy}, fenced {fenced}, stronger {stronger}, placed {placed}"
    );
}

#[test]
fn rc11_x86_skips_only_racy_edge_fenced_or_dominated_programs() {
    let (racy, fenced, stronger, _) =
        skipped_programs_are_harmless("rc11-x86", options(3, &[], 3, 1));
    assert!(
        racy > 100 && fenced > 100 && stronger > 100,
        "racy {racy}, fenced {fenced}, stronger {stronger}"
    );
}

#[test]
fn heterogeneous_race_cut_matches_the_model() {
    // Two threads in different work-groups, conflicting accesses with a
    // work-group scope: skipped, and the model calls them racy.
    let m = litmix::mapping::load("sc11-ptx").unwrap();
    let o = options(2, &["rlx"], 2, 2);
    let reduced: Vec<String> = verify::programs(&m, &o)
        .iter()
        .map(|(_, p)| p.summary())
        .collect();
    let mut plain = o.clone();
    plain.no_reduce = true;
    let all = verify::programs(&m, &plain);
    let cache = ModelCache::default();
    let mut seen = 0;
    for (_, p) in &all {
        let s = p.summary();
        if s == "wg0.dev0: R.rlx.dev x | wg1.dev0: W.rlx.wg x" {
            seen += 1;
            assert!(!reduced.contains(&s));
            let r = check(&m, p, &cache);
            assert_eq!(r.verdict, Verdict::Racy);
            assert_eq!(r.undefined_flags, ["heterogeneous-race"]);
        }
        if s == "wg0.dev0: R.rlx.dev x | wg1.dev0: W.rlx.dev x" {
            seen += 1;
            // Race-free: kept, as its placement twin in one work-group
            // (the same covered threads with fewer work-groups).
            let twin = enumerate::coarser_placement_twin(&verify::space(&m, &plain), p).unwrap();
            let twin = enumerate::canonical(&twin).summary();
            assert!(
                twin.starts_with("wg0.dev0: R.rlx.wg x | wg0.dev0: W.rlx.wg x")
                    || twin == "wg0.dev0: W.rlx.wg x | wg0.dev0: R.rlx.wg x",
                "{twin}"
            );
            assert!(reduced.contains(&twin), "a race-free pair was cut: {twin}");
            assert_ne!(check(&m, p, &cache).verdict, Verdict::Racy);
        }
    }
    assert_eq!(seen, 2);
}

/// The counterexample programs (summaries) of a campaign.
fn counterexamples(m: &litmix::mapping::Mapping, o: &verify::Options) -> BTreeSet<String> {
    let s = verify::run(m, o, &|_| {});
    assert_eq!(s.errors, 0);
    s.found.iter().map(|c| c.program.clone()).collect()
}

#[test]
fn wrong_acquire_mapping_keeps_its_minimal_mp_counterexamples() {
    // PTX acquire loads compiled to ld.relaxed: MP (4 events) is the
    // smallest counterexample, with and without the reductions (the cycle
    // cut included).
    let m = litmix::mapping::load("tests/mappings/wrong/sc11-ptx-acq-relaxed.map").unwrap();
    let mut o = options(4, &["rel", "acq"], 2, 1);
    o.no_cycle_cut = false;
    let mut plain = o.clone();
    plain.no_reduce = true;
    let reduced = counterexamples(&m, &o);
    let all = counterexamples(&m, &plain);
    assert!(
        reduced.contains("wg0.dev0: R.acq.wg x; R.acq.wg y | wg0.dev0: W.rel.wg y; W.rel.wg x"),
        "no MP among {reduced:?}"
    );
    // At 4 events with two threads no counterexample has room for an edge
    // fence beside MP's four accesses, so the reductions keep them all.
    assert_eq!(reduced, all);
    // Nothing below 4 events, with or without the reductions.
    let mut o3 = options(3, &["rel", "acq"], 2, 1);
    assert!(counterexamples(&m, &o3).is_empty());
    o3.no_reduce = true;
    assert!(counterexamples(&m, &o3).is_empty());
}

#[test]
fn wrong_acquire_mapping_found_by_stop_at_first() {
    let m = litmix::mapping::load("tests/mappings/wrong/sc11-ptx-acq-relaxed.map").unwrap();
    let mut o = options(5, &["rel", "acq"], 2, 1);
    o.stop_at_first = true;
    o.no_cycle_cut = false;
    let s = verify::run(&m, &o, &|_| {});
    assert_eq!(s.complete_to, 4, "{s:?}");
    assert_eq!(s.found.len(), 1);
    assert_eq!(s.found[0].events, 4);
    assert!(s.counterexamples > 1);
}

#[test]
fn shards_partition_the_reduced_space() {
    let m = litmix::mapping::load("sc11-ptx").unwrap();
    // Sliced by program, and (cycle cut on, programs decided from weaker
    // ones of their shape) by shape: each shape's programs in one shard.
    for (bound, cycle_cut) in [(3, false), (4, true)] {
        let mut o = options(bound, &["na", "rlx", "sc"], 2, 2);
        o.no_cycle_cut = !cycle_cut;
        let whole = verify::programs(&m, &o);
        let mut parts = Vec::new();
        let mut shard_of = std::collections::HashMap::new();
        let mut unit_shape = std::collections::HashMap::new();
        for k in 1..=4 {
            let mut ok = o.clone();
            ok.shard = (k, 4);
            let mine = verify::programs(&m, &ok);
            assert!(!mine.is_empty());
            for (id, p) in &mine {
                let shape = litmix::mapping::dominance::shape_key(p);
                if cycle_cut {
                    // A unit is one shape, and a shape lies in one shard.
                    let verify::ProgramId::InShape(u, _) = *id else {
                        panic!("{id:?}: shape by shape, programs are named by shape");
                    };
                    assert_eq!(*unit_shape.entry(u).or_insert(shape.clone()), shape);
                    assert_eq!(*shard_of.entry(shape).or_insert(k), k);
                }
            }
            parts.extend(mine);
        }
        if cycle_cut {
            // Distinct units are distinct shapes.
            let shapes: std::collections::HashSet<_> = unit_shape.values().collect();
            assert_eq!(shapes.len(), unit_shape.len());
        }
        // Ids do not depend on the shard (by shape: the shape's place in
        // the whole space): the shards' programs, in id order, are the
        // whole campaign's.
        parts.sort_by_key(|p| p.0);
        assert_eq!(parts, whole);
    }
}

/// The fast path of a campaign (source IR built directly, target IR from
/// templates, the source model asked only about target states no SC
/// interleaving reaches) against the plain check of the printed program,
/// for correct and deliberately wrong mappings: the same verdict and extra
/// states, the fast target states (those outside the SC set) among the
/// plain ones, and the fast source states (the SC states, and those of the
/// target's other states the source allows) among the source's.
#[test]
fn fast_check_agrees_with_the_plain_check() {
    for (name, bound, orders, every) in [
        ("sc11-ptx", 3, &[][..], 7),
        (
            "tests/mappings/wrong/sc11-ptx-acq-relaxed.map",
            4,
            &["rel", "acq"][..],
            1,
        ),
        (
            "tests/mappings/wrong/rc11-x86-no-mfence.map",
            4,
            &["sc"][..],
            1,
        ),
        ("sc11-x86ptx", 3, &[][..], 11),
    ] {
        let m = litmix::mapping::load(name).unwrap();
        let o = options(bound, orders, bound, 2);
        let cache = ModelCache::default();
        let compiler = litmix::mapping::build::Compiler::new(&m);
        let (mut n, mut unsound, mut shortcut) = (0, 0, 0);
        for (i, (_, p)) in verify::programs(&m, &o).into_iter().enumerate() {
            if i % every != 0 {
                continue;
            }
            let plain = check(&m, p_ref(&p), &cache);
            let src = litmix::mapping::build::source_test(&p, "P");
            let compile = |t: &litmix::ir::Test| compiler.compile(&p, t);
            let race_free = p.race_free(m.source == "sc11");
            let fast = check::check_test_with(
                &m,
                &src,
                "P",
                &cache,
                &check::Options::default(),
                race_free,
                Some(&compile),
            )
            .unwrap();
            assert_eq!(plain.verdict, fast.verdict, "{name}: {}", p.summary());
            // The fast check leaves out the target states that are SC
            // states (it does not judge them); those are among its source
            // states.
            let pt: BTreeSet<_> = plain.target_states.iter().collect();
            let ft: BTreeSet<_> = fast.target_states.iter().collect();
            let fs: BTreeSet<_> = fast.source_states.iter().collect();
            assert!(ft.is_subset(&pt), "{name}: {}", p.summary());
            assert!(
                pt.difference(&ft).all(|s| fs.contains(s)),
                "{name}: a skipped target state is not an SC state: {}",
                p.summary()
            );
            assert_eq!(
                plain.extra_states,
                fast.extra_states,
                "{name}: {}",
                p.summary()
            );
            let sp: BTreeSet<_> = plain.source_states.iter().collect();
            assert!(fast.source_states.iter().all(|s| sp.contains(s)));
            if plain.verdict == Verdict::Racy {
                assert!(
                    !race_free,
                    "{name}: racy but statically race-free: {}",
                    p.summary()
                );
            }
            if !fast.source_model_ran {
                shortcut += 1;
            }
            unsound += (plain.verdict == Verdict::Unsound) as usize;
            n += 1;
        }
        assert!(n > 100, "{name}: {n}");
        // At 3 events every target state of sc11-ptx is an SC state (weak
        // shapes need 4): the source model never runs there.
        assert!(shortcut > 0, "{name}: shortcut {shortcut} of {n}");
        if name.contains("wrong") {
            assert!(unsound > 0, "{name}: no counterexample");
        }
    }
}

fn p_ref(p: &Program) -> &Program {
    p
}

#[test]
fn opencl_rsp_skips_only_racy_or_dominated_programs() {
    // docs/mappings.md item 12: the race cuts and the twin cut for
    // opencl-rsp (no edge fences: the RSP fragment has no fences).
    for mapping in ["opencl-rsp-original", "opencl-rsp-proposed"] {
        let (racy, fenced, stronger, placed) =
            skipped_programs_are_harmless(mapping, options(2, &[], 2, 2));
        assert_eq!(placed, 0, "{mapping}: no placement cut for opencl-rsp");
        assert!(
            racy > 500 && fenced == 0 && stronger > 1000,
            "{mapping}: racy {racy}, fenced {fenced}, stronger {stronger}"
        );
    }
}

#[test]
fn opencl_rsp_counterexamples_survive_the_cuts() {
    // The reduced counterexamples are plain ones, and every plain
    // counterexample strengthened to its enumerated twin is still one: the
    // cuts lose no bug, only the weaker copies of each (bound 2: the Fig. 5
    // shape, a remote device store against a work-group increment).
    let cache = ModelCache::default();
    for (mapping, expect) in [
        ("opencl-rsp-original", true),
        ("opencl-rsp-proposed", false),
    ] {
        let m = litmix::mapping::load(mapping).unwrap();
        let o = options(2, &[], 2, 2);
        let mut plain = o.clone();
        plain.no_reduce = true;
        let reduced = counterexamples(&m, &o);
        let all = counterexamples(&m, &plain);
        assert_eq!(!reduced.is_empty(), expect, "{mapping}: {reduced:?}");
        assert_eq!(!all.is_empty(), expect, "{mapping}: {all:?}");
        assert!(reduced.is_subset(&all), "{mapping}");
        let mut weaker = 0;
        for (_, p) in verify::programs(&m, &plain) {
            if !all.contains(&p.summary()) || reduced.contains(&p.summary()) {
                continue;
            }
            let q = strengthen(&m, &p);
            assert_ne!(q, p, "{mapping}: a lost counterexample {}", p.summary());
            assert_eq!(
                check(&m, &q, &cache).verdict,
                Verdict::Unsound,
                "{}",
                q.summary()
            );
            weaker += 1;
        }
        assert_eq!(weaker + reduced.len(), all.len(), "{mapping}");
    }
}

/// The program counts of docs/mappings.md at bound 3 (default dimensions),
/// plain and reduced: the enumeration's own shortcuts (canonical prefixes
/// cut at thread boundaries, round 5) change no count.
#[test]
fn bound_3_counts_are_the_documented_ones() {
    for (mapping, plain, reduced) in [
        ("sc11-ptx", 130_758, 19_342),
        ("sc11-x86ptx", 301_232, 25_716),
        ("opencl-rsp-original", 557_457, 21_428),
    ] {
        let m = litmix::mapping::load(mapping).unwrap();
        let mut o = options(3, &[], 3, 3);
        o.max_threads = None;
        o.max_locations = None;
        o.max_groups = None;
        o.count_only = true;
        let r = verify::run(&m, &o, &|_| {});
        o.no_reduce = true;
        let p = verify::run(&m, &o, &|_| {});
        assert_eq!((p.programs, r.programs), (plain, reduced), "{mapping}");
    }
}

/// The communication-cycle cut (docs/mappings.md, "Reductions", item 13):
/// every program it skips is decided `sound` by the SC shortcut, its target
/// allowing SC states only, and the programs it keeps are exactly those of
/// the space without it that have a communication cycle.
#[test]
fn cycle_cut_skips_only_programs_whose_target_is_sc() {
    for (name, threads, orders, every) in [
        ("sc11-ptx", 3, &["na", "rlx", "acq", "rel", "sc"][..], 5),
        ("sc11-x86ptx", 2, &["na", "rlx", "acq", "rel", "sc"][..], 5),
        ("rc11-x86", 4, &[][..], 1),
    ] {
        let m = litmix::mapping::load(name).unwrap();
        let mut cut = options(4, orders, threads, 2);
        cut.no_cycle_cut = false;
        let all = options(4, orders, threads, 2);
        let space = verify::space(&m, &cut);
        assert!(space.reduce.cycles, "{name}: the cut is off");
        let kept: BTreeSet<String> = verify::programs(&m, &cut)
            .iter()
            .map(|(_, p)| p.summary())
            .collect();
        let cache = ModelCache::default();
        let compiler = litmix::mapping::build::Compiler::new(&m);
        let (mut skipped, mut checked) = (0, 0);
        let mut with_cycle = BTreeSet::new();
        for (i, (_, p)) in verify::programs(&m, &all).into_iter().enumerate() {
            if enumerate::communication_cycle(&p.threads) {
                with_cycle.insert(p.summary());
                continue;
            }
            skipped += 1;
            if i % every != 0 {
                continue;
            }
            let src = litmix::mapping::build::source_test(&p, "P");
            let compile = |t: &litmix::ir::Test| compiler.compile(&p, t);
            assert!(p.race_free(m.source == "sc11"), "{}", p.summary());
            let r = check::check_test_with(
                &m,
                &src,
                "P",
                &cache,
                &check::Options::default(),
                true,
                Some(&compile),
            )
            .unwrap();
            assert!(
                r.verdict == Verdict::Sound && !r.source_model_ran,
                "{name}: the target of {} allows a state no interleaving reaches",
                p.summary()
            );
            checked += 1;
        }
        assert_eq!(kept, with_cycle, "{name}");
        eprintln!(
            "{name}: {skipped} programs cut ({checked} checked), {} kept",
            kept.len()
        );
        assert!(
            checked > 1000 && !kept.is_empty() && skipped > 10 * kept.len(),
            "{name}: checked {checked}, skipped {skipped}, kept {}",
            kept.len()
        );
    }
}

/// `--max-thread-size` keeps the programs whose threads have at most that
/// many events: at bound 4 with threads of at most 2 events, the programs
/// of the full space with that property, and no others.
#[test]
fn max_thread_size_keeps_exactly_the_small_threads() {
    let m = litmix::mapping::load("rc11-x86").unwrap();
    let all = options(4, &[], 4, 1);
    let mut small = all.clone();
    small.max_thread_size = Some(2);
    let want: Vec<String> = verify::programs(&m, &all)
        .into_iter()
        .filter(|(_, p)| p.threads.iter().all(|t| t.ops.len() <= 2))
        .map(|(_, p)| p.summary())
        .collect();
    let got: Vec<String> = verify::programs(&m, &small)
        .into_iter()
        .map(|(_, p)| p.summary())
        .collect();
    assert_eq!(got, want);
    assert!(got.len() > 100 && got.len() < verify::programs(&m, &all).len());
}

/// Deciding programs from weaker ones of their shape (docs/mappings.md,
/// "Checking a program in a campaign") gives the plain check's verdicts:
/// the same counts and the same counterexamples, on correct mappings and on
/// wrong ones full of counterexamples. Not vacuous: it decides programs.
#[test]
fn weaker_programs_decide_as_the_plain_check() {
    let wrong = |f: &str| format!("{}/tests/mappings/wrong/{f}", env!("CARGO_MANIFEST_DIR"));
    let cases = [
        ("sc11-ptx".to_string(), 4, 4, 0, true),
        ("sc11-x86ptx".to_string(), 4, 4, 0, true),
        ("rc11-x86".to_string(), 5, 5, 0, true),
        ("sc11-ptx-rmwsc-norel".to_string(), 4, 4, 0, true),
        (wrong("sc11-ptx-acq-relaxed.map"), 4, 4, 1, true),
        // Every CPU access compiles to one code whatever its order once the
        // SC store loses its MFENCE: the twin cut leaves one order per
        // operation, so no shape holds two programs.
        (wrong("rc11-x86-no-mfence.map"), 4, 4, 1, false),
    ];
    for (name, bound, threads, min_cex, decides) in cases {
        let m = litmix::mapping::load(&name).unwrap();
        let mut o = options(bound, &[], threads, 2);
        o.no_cycle_cut = false;
        let fast = verify::run(&m, &o, &|_| {});
        o.no_dominance = true;
        let plain = verify::run(&m, &o, &|_| {});
        let key = |s: &verify::Summary| {
            // (Names differ: shape by shape, programs are named by shape.)
            (
                s.programs,
                s.sound,
                s.racy,
                s.counterexamples,
                s.errors,
                found_programs(s),
            )
        };
        assert_eq!(key(&fast), key(&plain), "{name}");
        assert!(fast.counterexamples >= min_cex, "{name}");
        assert_eq!(
            plain.by_weaker + plain.by_stronger + plain.bounded,
            0,
            "{name}"
        );
        assert_eq!(plain.climb_runs, 0, "{name}");
        // Both directions decide programs: from weaker programs (target)
        // and from stronger ones found by climbing (source).
        assert_eq!(
            fast.by_weaker > 0 && fast.bounded > 0 && fast.by_stronger > 0 && fast.climb_runs > 0,
            decides,
            "{name}: {fast:?}"
        );
    }
}

/// The Fig. 11 scope gap at 5 events is found with and without the
/// shortcut, in a slice holding it.
#[test]
fn weaker_programs_keep_the_fig11_scope_gap() {
    let m = litmix::mapping::load("sc11-ptx").unwrap();
    let mut o = options(5, &["rlx", "sc"], 3, 2);
    o.no_cycle_cut = false;
    o.max_thread_size = Some(2);
    let fast = verify::run(&m, &o, &|_| {});
    o.no_dominance = true;
    let plain = verify::run(&m, &o, &|_| {});
    let names = |s: &verify::Summary| -> Vec<String> {
        s.found.iter().map(|c| c.program.clone()).collect()
    };
    assert_eq!(names(&fast), names(&plain));
    assert_eq!((fast.programs, fast.sound), (plain.programs, plain.sound));
    assert!(
        names(&fast)
            .iter()
            .any(|p| p == "wg0.dev0: R.sc.dev x; R.sc.dev y | wg1.dev0: W.sc.dev y; R.sc.wg x | wg1.dev0: W.sc.dev x"),
        "{:?}",
        names(&fast)
    );
    assert!(fast.by_weaker > 0);
}

/// Which operations count as weaker follows the compiled code: under Fig. 12's
/// mapping an RMW^SC (`fence.sc; atom.acquire`) is not above an RMW^acq_rel
/// (`atom.acq_rel`), under Fig. 11's (`fence.sc; atom.acq_rel`) it is.
#[test]
fn weaker_operations_follow_the_compiled_code() {
    use litmix::mapping::dominance::Table;
    let (rlx, acq, rel, acq_rel, sc, dev) = (1u8, 2u8, 3u8, 4u8, 5u8, 2u8);
    let fig11 = Table::new(&litmix::mapping::load("sc11-ptx").unwrap(), "ptx6").unwrap();
    let fig12 = Table::new(
        &litmix::mapping::load("sc11-ptx-rmwsc-norel").unwrap(),
        "ptx6",
    )
    .unwrap();
    assert!(
        fig11
            .weaker(false, OpKind::Rmw, sc, dev)
            .contains(&(acq_rel, dev))
    );
    assert!(
        !fig12
            .weaker(false, OpKind::Rmw, sc, dev)
            .contains(&(acq_rel, dev))
    );
    assert!(
        fig12
            .weaker(false, OpKind::Rmw, sc, dev)
            .contains(&(acq, dev))
    );
    // Loads: na < rlx < acq < sc, narrower scopes below wider ones.
    let load = fig11.weaker(false, OpKind::Load, sc, dev);
    for w in [(0, 0), (rlx, 1), (rlx, dev), (acq, 1), (acq, dev), (sc, 1)] {
        assert!(load.contains(&w), "{w:?} in {load:?}");
    }
    assert!(!load.contains(&(sc, 3)));
    // An acquire and a release fence are not comparable.
    assert!(
        !fig11
            .weaker(false, OpKind::Fence, rel, dev)
            .contains(&(acq, dev))
    );
    // Fig. 13 on a CPU thread: `MOV; MFENCE` (store sc) is above `MOV`
    // (store rel), not the other way round.
    let fig13 = Table::new(&litmix::mapping::load("sc11-x86ptx").unwrap(), "cmm").unwrap();
    assert!(fig13.weaker(true, OpKind::Store, sc, 3).contains(&(rel, 3)));
    assert!(!fig13.weaker(true, OpKind::Store, rel, 3).contains(&(sc, 3)));
    // Not argued for other targets.
    assert!(Table::new(&litmix::mapping::load("sc11-ptx").unwrap(), "ptx75").is_none());
}

/// Shards of a campaign sliced by shape (each generating only its shapes)
/// merge to the whole campaign: the same counts and the same
/// counterexample programs, on a wrong mapping full of them.
#[test]
fn sliced_shards_merge_to_the_whole_campaign() {
    let m = litmix::mapping::load("tests/mappings/wrong/sc11-ptx-acq-relaxed.map").unwrap();
    let mut o = options(4, &[], 4, 2);
    o.no_cycle_cut = false;
    let whole = verify::run(&m, &o, &|_| {});
    let parts: Vec<verify::Summary> = (1..=3)
        .map(|k| {
            let mut ok = o.clone();
            ok.shard = (k, 3);
            verify::run(&m, &ok, &|_| {})
        })
        .collect();
    assert!(
        parts
            .iter()
            .all(|p| p.programs > 0 && p.programs < whole.programs)
    );
    let merged = verify::merge(&parts).unwrap();
    assert!(whole.counterexamples > 0);
    assert_eq!(
        (
            merged.programs,
            merged.sound,
            merged.counterexamples,
            merged.by_weaker,
            merged.by_stronger,
            merged.bounded,
            merged.climb_runs
        ),
        (
            whole.programs,
            whole.sound,
            whole.counterexamples,
            whole.by_weaker,
            whole.by_stronger,
            whole.bounded,
            whole.climb_runs
        )
    );
    assert_eq!(found_programs(&merged), found_programs(&whole));
    // Programs are named by their shape's place in the whole space: a
    // shard names a counterexample as the whole campaign does.
    let names = |s: &verify::Summary| {
        let mut v: Vec<String> = s.found.iter().map(|c| c.name.clone()).collect();
        v.sort();
        v
    };
    assert_eq!(names(&merged), names(&whole));
    assert!(merged.found.iter().all(|c| c.name.contains("-u")));
}
