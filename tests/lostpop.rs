//! LOST-POP (seed 000 §4–5, App. A): walk-throughs of Figs. 5–11 with the
//! outcome and the shape of a witness trace, and agreement/soundness
//! against the axiomatic models on the project's own tests. Oracle-wide
//! comparisons are in `tests/lostpop_oracles.rs`.

use litmix::driver::{FileOutcome, ModelCache, check_test};
use litmix::exec::{CheckOptions, CheckResult};
use litmix::ir::Test;
use litmix::op::lostpop::Meet;

fn parse(name: &str, src: &str) -> Test {
    litmix::litmus::parse_str(name, src).unwrap_or_else(|d| panic!("{}", d.render()))
}

fn check(test: &Test, model: &str) -> CheckResult {
    let opts = CheckOptions {
        trace: true,
        ..CheckOptions::default()
    };
    match check_test(
        "t.litmus".into(),
        test.clone(),
        Some(model),
        &ModelCache::default(),
        &opts,
    ) {
        FileOutcome::Checked { result, .. } => *result,
        FileOutcome::Failed { message, .. } => panic!("{model}: {message}"),
    }
}

/// The witness trace of the first outcome satisfying the condition.
fn witness(r: &CheckResult) -> Vec<String> {
    let op = r.operational.as_ref().expect("operational report");
    op.traces
        .iter()
        .find(|t| t.satisfies)
        .map(|t| t.steps.clone())
        .unwrap_or_default()
}

/// Index of the first step containing every one of `parts`.
fn step(trace: &[String], parts: &[&str]) -> usize {
    trace
        .iter()
        .position(|s| parts.iter().all(|p| s.contains(p)))
        .unwrap_or_else(|| panic!("no step with {parts:?} in\n{}", trace.join("\n")))
}

const FIG5_MP_WEAK: &str = "PTX Fig5-MP
{ x=0; y=0; }
 P0@cta 0,gpu 0 | P1@cta 1,gpu 0 ;
 st.weak x, 1   | ld.weak r0, y  ;
 st.weak y, 1   | ld.weak r1, x  ;
exists (1:r0 == 1 /\\ 1:r1 == 0)
";

#[test]
fn fig5_mp_weak_is_allowed_and_the_read_is_satisfied_after_propagating() {
    let t = parse("Fig5.litmus", FIG5_MP_WEAK);
    let r = check(&t, "lostpop");
    assert!(r.validated, "weak MP is allowed");
    let tr = witness(&r);
    // y=1 reaches P1 and the read of y is satisfied by it; the read of x
    // reads the initial write.
    let prop_y = step(&tr, &["propagate", "st.weak y, 1", "to P1"]);
    let sat_y = step(&tr, &["satisfy", "ld.weak r0, y", "from P0#1"]);
    assert!(prop_y < sat_y);
    step(&tr, &["satisfy", "ld.weak r1, x", "from init x=0"]);
    // Without the reordering, the plain outcomes are there too.
    assert_eq!(r.states.len(), 4);
}

const FIG6_IRIW_RLX: &str = "PTX Fig6-IRIW
{ x=0; y=0; }
 P0@cta 0,gpu 0    | P1@cta 1,gpu 0     | P2@cta 2,gpu 0     | P3@cta 3,gpu 0    ;
 st.relaxed.sys x, 1 | ld.relaxed.sys r0, x | ld.relaxed.sys r0, y | st.relaxed.sys y, 1 ;
                   | ld.relaxed.sys r1, y | ld.relaxed.sys r1, x |                   ;
exists (1:r0 == 1 /\\ 1:r1 == 0 /\\ 2:r0 == 1 /\\ 2:r1 == 0)
";

#[test]
fn fig6_iriw_is_non_mca_each_reader_sees_one_write_only() {
    let t = parse("Fig6.litmus", FIG6_IRIW_RLX);
    let r = check(&t, "lostpop");
    assert!(r.validated, "IRIW with relaxed reads is allowed (non-MCA)");
    let tr = witness(&r);
    // Non-MCA: P1 sees x=1 but not y=1, P2 sees y=1 but not x=1; reads of
    // different addresses are unordered for relaxed PTX, so the witness
    // may send a second read out first. Each read is satisfied by the
    // write the outcome names.
    step(&tr, &["satisfy", "P1#0", "from P0#0"]);
    step(&tr, &["satisfy", "P1#1", "from init y=0"]);
    step(&tr, &["satisfy", "P2#0", "from P3#0"]);
    step(&tr, &["satisfy", "P2#1", "from init x=0"]);
}

fn mp_fences(f0: &str, f1: &str) -> String {
    format!(
        "PTX MP+fences
{{ x=0; y=0; }}
 P0@cta 0,gpu 0      | P1@cta 1,gpu 0       ;
 st.relaxed.sys x, 1 | ld.relaxed.sys r0, y ;
 {f0:19} | {f1:20} ;
 st.relaxed.sys y, 1 | ld.relaxed.sys r1, x ;
exists (1:r0 == 1 /\\ 1:r1 == 0)
"
    )
}

#[test]
fn fig7_mp_with_fences_is_forbidden_and_each_fence_is_needed() {
    let both = parse(
        "Fig7.litmus",
        &mp_fences("fence.acq_rel.sys", "fence.acq_rel.sys"),
    );
    let r = check(&both, "lostpop");
    assert!(!r.validated, "MP with both fences is forbidden");
    assert!(litmix::report::trace::trace_text(&both, &r).contains("forbidden"));
    for (a, b) in [
        ("fence.acq_rel.sys", "ld.relaxed.sys r2, z"),
        ("st.relaxed.sys z, 1", "fence.acq_rel.sys"),
    ] {
        let t = parse("Fig7b.litmus", &mp_fences(a, b));
        assert!(check(&t, "lostpop").validated, "one fence only ({a} | {b})");
    }
    // §4.4: a cta-scoped fence between threads of different CTAs does not
    // order for the other thread.
    let cta = parse(
        "Fig7c.litmus",
        &mp_fences("fence.acq_rel.cta", "fence.acq_rel.sys"),
    );
    assert!(check(&cta, "lostpop").validated);
}

const FIG8_WRC: &str = "PTX Fig8-WRC
{ x=0; y=0; }
 P0@cta 0,gpu 0      | P1@cta 1,gpu 0       | P2@cta 2,gpu 0       ;
 st.relaxed.sys x, 1 | ld.relaxed.sys r0, x | ld.relaxed.sys r1, y ;
                     | fence.acq_rel.sys    | fence.acq_rel.sys    ;
                     | st.relaxed.sys y, 1  | ld.relaxed.sys r2, x ;
exists (1:r0 == 1 /\\ 2:r1 == 1 /\\ 2:r2 == 0)
";

#[test]
fn fig8_wrc_predecessor_keeps_the_chain_after_the_read_is_removed() {
    let t = parse("Fig8.litmus", FIG8_WRC);
    let r = check(&t, "lostpop");
    assert!(!r.validated, "WRC with cumulative fences is forbidden");
    // The state P1 reads x=1 in: x=1 reached P1 first (it becomes a
    // predecessor there), then the read could be satisfied.
    let tr = r
        .operational
        .as_ref()
        .unwrap()
        .traces
        .iter()
        .find(|t| t.outcome.starts_with("1:r0=1;"))
        .expect("an outcome where P1 reads x=1")
        .steps
        .clone();
    let p = step(&tr, &["propagate", "P0#0", "to P1"]);
    let s = step(&tr, &["satisfy", "P1#0", "from P0#0"]);
    assert!(p < s);
}

#[test]
fn fig9_compound_iriw_is_forbidden() {
    let src = include_str!("models/cmm/Fig9-IRIW-x86-ptx.litmus");
    let t = parse("Fig9.litmus", src);
    let r = check(&t, "lostpop");
    assert!(!r.validated);
    assert!(litmix::report::trace::trace_text(&t, &r).contains("forbidden"));
    // ... and the same shape with the PTX fence weakened to relaxed reads
    // only is allowed: the x86 thread alone cannot forbid it.
    let weaker = src.replace(" fence.sc.sys         ", " ld.relaxed.sys r9, z ");
    let w = parse("Fig9b.litmus", &weaker);
    assert!(check(&w, "lostpop").validated);
}

#[test]
fn fig10_compound_wrc_is_allowed_because_the_gpu_read_makes_no_predecessor() {
    let src = include_str!("models/cmm/Fig10-WRC-x86+ptx-rlx.gpu-rel.sys+ptx.litmus");
    let t = parse("Fig10.litmus", src);
    let r = check(&t, "lostpop");
    assert!(r.validated);
    let tr = witness(&r);
    // y=1 reaches P2 while x=1 has not (x=1 is no predecessor at P1).
    let y_at_p2 = step(&tr, &["propagate", "P1#1", "to P2"]);
    assert!(
        !tr[..y_at_p2]
            .iter()
            .any(|s| s.contains("propagate P0#0") && s.contains("to P2")),
        "{}",
        tr.join("\n")
    );
    // With a .sys read, the write becomes a predecessor and it is forbidden.
    let sys = parse(
        "Fig10b.litmus",
        &src.replace("ld.relaxed.gpu r0, x", "ld.relaxed.sys r0, x"),
    );
    assert!(!check(&sys, "lostpop").validated);
}

/// Fig. 11: allowed by PTX, forbidden by LOST-POP (a known strengthening).
#[test]
fn fig11_known_strengthenings() {
    let tests = [
        "PTX Fig11a-2+2W
{ x=0; y=0; }
 P0@cta 0,gpu 0      | P1@cta 1,gpu 0      ;
 st.release.sys x, 1 | st.release.sys y, 1 ;
 st.release.sys y, 2 | st.release.sys x, 2 ;
 ld.acquire.sys r1, y | ld.acquire.sys r2, x ;
exists (0:r1 == 1 /\\ 1:r2 == 1)
",
        "PTX Fig11b-ISA2-acq
{ x=0; y=0; z=0; }
 P0@cta 0,gpu 0      | P1@cta 1,gpu 0       | P2@cta 2,gpu 0       ;
 st.relaxed.sys x, 1 | ld.relaxed.sys r1, y | ld.relaxed.sys r2, z ;
 fence.release.sys   | fence.acquire.sys    | fence.acquire.sys    ;
 st.relaxed.sys y, 1 | st.relaxed.sys z, 1  | ld.relaxed.sys r3, x ;
exists (1:r1 == 1 /\\ 2:r2 == 1 /\\ 2:r3 == 0)
",
        "PTX Fig11c-ISA2-rel
{ x=0; y=0; z=0; }
 P0@cta 0,gpu 0      | P1@cta 1,gpu 0       | P2@cta 2,gpu 0       ;
 st.relaxed.sys x, 1 | ld.relaxed.sys r1, y | ld.relaxed.sys r2, z ;
 fence.release.sys   | fence.release.sys    | fence.acquire.sys    ;
 st.relaxed.sys y, 1 | st.relaxed.sys z, 1  | ld.relaxed.sys r3, x ;
exists (1:r1 == 1 /\\ 2:r2 == 1 /\\ 2:r3 == 0)
",
    ];
    for src in tests {
        let t = parse("Fig11.litmus", src);
        assert!(check(&t, "ptx6").validated, "{}: PTX allows", t.name);
        let r = check(&t, "lostpop");
        assert!(!r.validated, "{}: LOST-POP forbids", t.name);
        // Strictly stronger: every LOST-POP outcome is a PTX outcome.
        let ax = check(&t, "ptx6");
        assert!(r.states.keys().all(|s| ax.states.contains_key(s)));
    }
}

#[test]
fn x86_classics_match_x86tso() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/models/x86tso");
    let mut compared = 0;
    for f in litmix::driver::collect_paths(&[dir]) {
        let t = litmix::litmus::parse_file(&f).unwrap();
        let a = check(&t, "lostpop");
        let b = check(&t, "x86tso");
        assert_eq!(
            a.states.keys().collect::<Vec<_>>(),
            b.states.keys().collect::<Vec<_>>(),
            "{}",
            f.display()
        );
        compared += 1;
    }
    assert!(compared >= 5, "only {compared} x86 tests");
}

#[test]
fn outside_the_model_is_a_clear_error() {
    let bar = "PTX BAR
{ x=0; }
 P0@cta 0,gpu 0 | P1@cta 0,gpu 0 ;
 st.weak x, 1   | bar.sync 0     ;
 bar.sync 0     | ld.weak r0, x  ;
exists (1:r0 == 0)
";
    let t = parse("BAR.litmus", bar);
    let opts = CheckOptions::default();
    match check_test(
        "BAR.litmus".into(),
        t,
        Some("lostpop"),
        &ModelCache::default(),
        &opts,
    ) {
        FileOutcome::Failed { message, .. } => {
            assert!(message.contains("barrier"), "{message}");
            assert!(message.contains("BAR:5:2"), "{message}");
        }
        FileOutcome::Checked { .. } => panic!("barriers are outside LOST-POP"),
    }
}

#[test]
fn max_states_limit_is_reported() {
    let t = parse("Fig6.litmus", FIG6_IRIW_RLX);
    let opts = CheckOptions {
        max_states: 50,
        ..CheckOptions::default()
    };
    match check_test(
        "Fig6.litmus".into(),
        t,
        Some("lostpop"),
        &ModelCache::default(),
        &opts,
    ) {
        FileOutcome::Failed { message, .. } => {
            assert!(message.contains("more than 50 states"), "{message}")
        }
        FileOutcome::Checked { .. } => panic!("IRIW has more than 50 states"),
    }
}

const X86_IRIW: &str = "X86 IRIW
{ x=0; y=0; }
 P0          | P1         | P2          | P3         ;
 MOV EAX,[y] | MOV [x],$1 | MOV EAX,[x] | MOV [y],$1 ;
 MOV EBX,[x] |            | MOV EBX,[y] |            ;
exists (0:EAX=1 /\\ 0:EBX=0 /\\ 2:EAX=1 /\\ 2:EBX=0)
";

/// The catch-up reduction (docs/operational.md, rules 4 and 5): x86 IRIW
/// keeps its 15 states and its verdict with far fewer machine states, and
/// a catch-up macro step (x to P3, which never touches x, or y to P1)
/// shows in traces.
#[test]
fn catch_up_reduction_cuts_iriw_and_keeps_its_outcomes() {
    let t = parse("IRIW.litmus", X86_IRIW);
    let full = check(&t, "lostpop-unreduced");
    let red = check(&t, "lostpop");
    assert_eq!(
        full.states.keys().collect::<Vec<_>>(),
        red.states.keys().collect::<Vec<_>>()
    );
    assert_eq!(red.states.len(), 15);
    assert!(!red.validated && !full.validated, "x86 IRIW is forbidden");
    assert!(
        red.candidates * 4 < full.candidates,
        "reduced {} vs unreduced {} states",
        red.candidates,
        full.candidates
    );
    let op = red.operational.as_ref().expect("operational report");
    assert!(
        op.traces
            .iter()
            .flat_map(|t| &t.steps)
            .any(|s| s.starts_with("catch up x at P3") || s.starts_with("catch up y at P1")),
        "no catch-up step in the traces"
    );
    let op = full.operational.as_ref().expect("operational report");
    assert!(
        !op.traces
            .iter()
            .flat_map(|t| &t.steps)
            .any(|s| s.starts_with("catch up"))
    );
}

/// PTX IRIW with `fence.sc` in both readers (P1, P2 in CTA 0; the writers
/// in CTAs 1 and 2) at the scopes `f1`, `f2` and, with `x86`, the writers
/// on the CPU.
fn iriw_sc_fences(f1: &str, f2: &str, x86: bool) -> String {
    let (arch, p0, w0, p3, w3) = if x86 {
        ("X86+PTX", "P0@cpu", "MOV [x],1", "P3@cpu", "MOV [y],1")
    } else {
        (
            "PTX",
            "P0@cta 1,gpu 0",
            "st.relaxed.sys x, 1",
            "P3@cta 2,gpu 0",
            "st.relaxed.sys y, 1",
        )
    };
    format!(
        "{arch} IRIW-fence.sc.{f1}+{f2}
{{ x=0; y=0; }}
 {p0:19} | P1@cta 0,gpu 0       | P2@cta 0,gpu 0       | {p3:19} ;
 {w0:19} | ld.relaxed.sys r1, x | ld.relaxed.sys r3, y | {w3:19} ;
 {e:19} | fence.sc.{f1:11} | fence.sc.{f2:11} | {e:19} ;
 {e:19} | ld.weak r2, y        | ld.weak r4, x        | {e:19} ;
exists (1:r1 == 1 /\\ 1:r2 == 0 /\\ 2:r3 == 1 /\\ 2:r4 == 0)
",
        e = ""
    )
}

/// SB with `fence.sc` at the scopes `f0`, `f1`; P0 in CTA `c0`, P1 in CTA 1.
fn sb_sc_fences(f0: &str, f1: &str, c0: u32) -> String {
    format!(
        "PTX SB-fence.sc.{f0}+{f1}
{{ x=0; y=0; }}
 P0@cta {c0},gpu 0       | P1@cta 1,gpu 0       ;
 st.relaxed.sys x, 1  | st.relaxed.sys y, 1  ;
 fence.sc.{f0:11} | fence.sc.{f1:11} ;
 ld.relaxed.sys r0, y | ld.relaxed.sys r1, x ;
exists (0:r0 == 0 /\\ 1:r1 == 0)
"
    )
}

/// Seed 000 Fig. 3a and its scope variants (issue 9, round 3; derivations
/// in docs/known-differences.md, "Weaker case 2"). LOST-POP fences stall
/// only their own thread (§4.3) and a predecessor `w` is ordered before a
/// fence only when the scopes match (A.5.2: `{w.thread, t} ⊆ w ∧ F`, and
/// `w ∧ F = F.scope` for a fence): a CTA-scoped fence.sc does not wait for
/// a write from outside its CTA, so IRIW with a .cta fence in one reader is
/// allowed whatever the other reader's fence. PTX and CMM order the two
/// morally strong fences by `sc` and forbid it: LOST-POP is *weaker* there.
#[test]
fn scoped_sc_fences_iriw_and_sb() {
    let verdict = |src: &str, model: &str| check(&parse("t.litmus", src), model).validated;
    // (reader fences, x86 writers?, LOST-POP allows, ptx6/cmm allow)
    let iriw = [
        ("sys", "sys", false, false, false),
        ("gpu", "gpu", false, false, false),
        ("sys", "cta", false, true, false),
        ("cta", "sys", false, true, false),
        ("cta", "cta", false, true, false),
        // Fig. 3a itself and the CPU-writer variants (against cmm).
        ("sys", "cta", true, true, false),
        ("cta", "sys", true, true, false),
        ("gpu", "gpu", true, true, false),
        ("sys", "sys", true, false, false),
    ];
    for (f1, f2, x86, lp, ax) in iriw {
        let src = iriw_sc_fences(f1, f2, x86);
        let t = parse("t.litmus", &src);
        let r = check(&t, "lostpop");
        assert_eq!(r.validated, lp, "{}: lostpop", t.name);
        let model = if x86 { "cmm" } else { "ptx6" };
        assert_eq!(check(&t, model).validated, ax, "{}: {model}", t.name);
        if lp {
            // The witness: P2's weak read of x is satisfied from the
            // initial write, P2's read of y from the late y=1.
            let tr = witness(&r);
            step(&tr, &["satisfy P2#2", "from init x=0"]);
            step(&tr, &["satisfy P2#0", "from P3#0"]);
        }
    }
    // SB: the writes are the fences' own, so a .cta fence suffices inside
    // one CTA and the order of the threads does not matter; across CTAs a
    // .cta fence orders nothing for the other thread (both models allow).
    let sb = [
        ("sys", "sys", 0, false),
        ("gpu", "gpu", 0, false),
        ("cta", "sys", 1, false),
        ("sys", "cta", 1, false),
        ("cta", "cta", 1, false),
        ("cta", "sys", 0, true),
        ("sys", "cta", 0, true),
    ];
    for (f0, f1, c0, allowed) in sb {
        let src = sb_sc_fences(f0, f1, c0);
        assert_eq!(verdict(&src, "lostpop"), allowed, "lostpop: {src}");
        assert_eq!(verdict(&src, "ptx6"), allowed, "ptx6: {src}");
    }
}

const X86_SB_RFI_POS4: &str = "X86 4.SB+rfi-pos
{ x=0; y=0; z=0; a=0; }
 P0          | P1          | P2          | P3          ;
 MOV [x],$1  | MOV [y],$1  | MOV [z],$1  | MOV [a],$1  ;
 MOV EAX,[x] | MOV EAX,[y] | MOV EAX,[z] | MOV EAX,[a] ;
 MOV EBX,[y] | MOV EBX,[z] | MOV EBX,[a] | MOV EBX,[x] ;
exists (0:EBX=0 /\\ 1:EBX=0 /\\ 2:EBX=0 /\\ 3:EBX=0)
";

/// The sole-writer satisfy (docs/operational.md, rule 6): each `EAX` read
/// has one write it can ever read (its own thread's: the initial write is
/// behind it), so it is satisfied at once (store forwarding) and the
/// state space collapses. By hand (TSO): every `EAX` is 1 and the four
/// `EBX` are free (store buffering), so 16 states of the four `EBX`, the
/// condition's among them. The reduced and plain searches agree on them.
#[test]
fn sole_writer_satisfy_cuts_sb_rings_with_forwarding() {
    let t = parse("4.SB+rfi-pos.litmus", X86_SB_RFI_POS4);
    let red = check(&t, "lostpop");
    assert_eq!(red.states.len(), 16);
    assert!(red.validated, "store buffering with forwarding is allowed");
    let ax = check(&t, "x86tso");
    assert_eq!(
        red.states.keys().collect::<Vec<_>>(),
        ax.states.keys().collect::<Vec<_>>()
    );
    // The witness takes every forwarding read before any single
    // propagation (only catch-up macros of other locations come between).
    let w = witness(&red);
    let first_prop = w.iter().position(|s| s.starts_with("propagate ")).unwrap();
    let forwards: Vec<usize> = (0..w.len())
        .filter(|&i| w[i].contains("satisfy") && w[i].contains("EAX"))
        .collect();
    assert_eq!(forwards.len(), 4, "{w:#?}");
    assert!(forwards.iter().all(|&i| i < first_prop), "{w:#?}");
    // Plain search on a 2-thread ring (the 4-thread one is too big for a
    // test): same states, more machine states.
    let sb = parse(
        "SB+rfi-pos.litmus",
        "X86 SB+rfi-pos
{ x=0; y=0; }
 P0          | P1          ;
 MOV [x],$1  | MOV [y],$1  ;
 MOV EAX,[x] | MOV EAX,[y] ;
 MOV EBX,[y] | MOV EBX,[x] ;
exists (0:EBX=0 /\\ 1:EBX=0)
",
    );
    let full = check(&sb, "lostpop-unreduced");
    let red = check(&sb, "lostpop");
    assert_eq!(
        full.states.keys().collect::<Vec<_>>(),
        red.states.keys().collect::<Vec<_>>()
    );
    assert_eq!(red.states.len(), 4);
    assert!(
        red.candidates < full.candidates,
        "reduced {} vs unreduced {} states",
        red.candidates,
        full.candidates
    );
}

const X86_MP_SILENT: &str = "X86 MP+silent
{ x=0; y=0; z=0; }
 P0         | P1          | P2         | P3         ;
 MOV [x],$1 | MOV EAX,[y] | MOV [z],$1 | MOV [z],$2 ;
 MOV [y],$1 | MOV EBX,[x] |            |            ;
exists (1:EAX=1 /\\ 1:EBX=0)
";

/// Rule 7, silent groups (docs/operational.md): P2 and P3 never access
/// `x`, so with the reductions on a propagation of `P0`'s write of `x` to
/// one of them is one step to both (labelled so), while the plain machine
/// offers the two separately; P0 and P1 likewise for `z`. Both searches
/// allow the same states.
#[test]
fn silent_group_propagates_to_every_thread_that_never_accesses_the_location() {
    let t = parse("MP+silent.litmus", X86_MP_SILENT);
    let picks = [0; 6]; // every accept first (accepts are listed first)
    let labels = |model: &str| -> Vec<String> {
        let r = litmix::driver::replay_view(&t, model, 2, &picks).expect("replay");
        assert!(r.history.iter().all(|h| h.starts_with("accept")), "{r:?}");
        r.view
            .transitions
            .iter()
            .map(|tr| tr.label.clone())
            .filter(|l| l.starts_with("propagate P0#0"))
            .collect()
    };
    let red = labels("lostpop");
    assert_eq!(
        red.iter()
            .filter(|l| l.contains("to P2 and P3 (none of them accesses its location)"))
            .count(),
        1,
        "{red:#?}"
    );
    assert!(!red.iter().any(|l| l.ends_with("to P3")), "{red:#?}");
    let full = labels("lostpop-unreduced");
    assert!(full.iter().any(|l| l.ends_with("to P2")), "{full:#?}");
    assert!(full.iter().any(|l| l.ends_with("to P3")), "{full:#?}");
    assert_eq!(red.len() + 1, full.len(), "{red:#?} {full:#?}");
    let r = check(&t, "lostpop");
    let f = check(&t, "lostpop-unreduced");
    assert_eq!(
        r.states.keys().collect::<Vec<_>>(),
        f.states.keys().collect::<Vec<_>>()
    );
    assert!(!r.validated, "x86 MP is forbidden");
    assert!(
        r.candidates * 100 < f.candidates,
        "reduced {} vs unreduced {} states",
        r.candidates,
        f.candidates
    );
}

const X86_TWO_HALVES: &str = "X86 two-halves
{ x=0; y=0; }
 P0         | P1         | P2          | P3          ;
 MOV [x],$1 | MOV [y],$1 | MOV EAX,[x] | MOV EAX,[y] ;
            |            | MOV EBX,[x] | MOV EBX,[y] ;
exists (2:EAX=1 /\\ 2:EBX=0)
";

/// Rule 8, one location at a time (docs/operational.md): `x` (P0, P2) and
/// `y` (P1, P3) never meet in a thread, so once everything is accepted
/// the enabled transitions of one location are a stubborn set and the
/// search runs the two halves one after the other instead of their
/// product. Same states as the plain search and as x86tso; the reduced
/// search stays under 100 machine states (437 with rules 1–7 alone, 49,290
/// without any reduction).
#[test]
fn one_location_at_a_time_keeps_the_states_of_independent_halves() {
    let t = parse("two-halves.litmus", X86_TWO_HALVES);
    let red = check(&t, "lostpop");
    let full = check(&t, "lostpop-unreduced");
    let ax = check(&t, "x86tso");
    let keys = |r: &CheckResult| r.states.keys().cloned().collect::<Vec<_>>();
    assert_eq!(keys(&red), keys(&full));
    assert_eq!(keys(&red), keys(&ax));
    assert!(!red.validated, "coherence forbids reading 1 then 0");
    assert!(red.candidates < 100, "{} states", red.candidates);
}

const WRC_SC_DEP: &str = "PTX WRC+fence.sc+dep
{ x=0; y=0; }
 P0@cta 0,gpu 0      | P1@cta 0,gpu 0       | P2@cta 0,gpu 0       ;
 st.relaxed.sys x, 1 | ld.relaxed.sys r1, x | ld.relaxed.sys r2, y ;
                     | fence.sc.sys         | bne r2, 2, L2        ;
                     | st.relaxed.sys y, 1  | L2:                  ;
                     |                      | ld.relaxed.sys r3, x ;
exists (1:r1 == 1 /\\ 2:r2 == 1 /\\ 2:r3 == 0)
";

/// Issue 27: the control-dependent read of x is accepted on a guess,
/// before the read of y it depends on is satisfied (and so before x=1,
/// which the fence.sc sends everywhere ahead of y=1, reaches P2). Without
/// the dependency's branch the same shape was allowed already; with a
/// second fence.sc instead it stays forbidden, as in ptx6.
#[test]
fn wrc_fence_sc_dep_is_allowed_by_a_guess_past_the_branch() {
    let t = parse("WRC.litmus", WRC_SC_DEP);
    assert!(check(&t, "ptx6").validated);
    let r = check(&t, "lostpop");
    assert!(r.validated, "LOST-POP allows WRC+fence.sc+dep");
    let w = witness(&r);
    let guess = step(&w, &["guess P2", "bne r2", "taken"]);
    let accept_x = step(&w, &["accept P2", "r3"]);
    let satisfy_y = step(&w, &["satisfy P2#0"]);
    assert!(
        guess < accept_x && accept_x < satisfy_y,
        "the read of x is accepted on the guess, before y is read:\n{}",
        w.join("\n")
    );
    let fenced = WRC_SC_DEP.replace("| bne r2, 2, L2        ;", "| fence.sc.sys         ;");
    let t = parse("WRC2.litmus", &fenced);
    assert!(!check(&t, "ptx6").validated);
    assert!(!check(&t, "lostpop").validated, "fences still order");
}

/// A guess lets loads through, never stores: load buffering through
/// control dependencies (a value out of thin air) stays forbidden, as
/// ptx6's no-thin-air axiom says, and with the stores unguarded it is
/// allowed.
#[test]
fn guesses_never_let_a_store_through() {
    let src = "PTX LB+ctrls
{ x=0; y=0; }
 P0@cta 0,gpu 0       | P1@cta 1,gpu 0       ;
 ld.relaxed.sys r0, x | ld.relaxed.sys r1, y ;
 bne r0, 1, L0        | bne r1, 1, L1        ;
 st.relaxed.sys y, 1  | st.relaxed.sys x, 1  ;
 L0:                  | L1:                  ;
exists (0:r0 == 1 /\\ 1:r1 == 1)
";
    let t = parse("LB.litmus", src);
    assert!(!check(&t, "ptx6").validated);
    let r = check(&t, "lostpop");
    assert!(!r.validated, "no value out of thin air");
    let ax = check(&t, "ptx6");
    assert_eq!(
        r.states.keys().collect::<Vec<_>>(),
        ax.states.keys().collect::<Vec<_>>()
    );
    let plain = src
        .replace(" bne r0, 1, L0        | bne r1, 1, L1        ;\n", "")
        .replace(" L0:                  | L1:                  ;\n", "");
    let t = parse("LB2.litmus", &plain);
    assert!(check(&t, "ptx6").validated);
    assert!(check(&t, "lostpop").validated);
}

/// Weaker case 3 (docs/known-differences.md): with the seed's meet the
/// acquire's order into a narrower release takes the release's scope and
/// LOST-POP allows this load buffering, which ptx6 forbids; the
/// `acquire-meet` variant gives the acquire's scope and forbids it.
#[test]
fn acquire_meet_variant_forbids_weaker_case_3() {
    let src = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/models/ptx6/LB+weak-rel.sys+acq.sys-rel.cta.litmus"),
    )
    .unwrap();
    let t = parse("LB.litmus", &src);
    assert!(!check(&t, "ptx6").validated);
    assert!(check(&t, "lostpop").validated, "the seed's meet allows it");
    let opts = CheckOptions::default();
    let build = |meet| litmix::op::lostpop::Build {
        unreduced: false,
        meet,
    };
    let plain = litmix::op::lostpop::judge(&t, &opts, build(Meet::ReleaseFirst)).unwrap();
    let variant = litmix::op::lostpop::judge(&t, &opts, build(Meet::AcquireFirst)).unwrap();
    assert!(plain.validated);
    assert!(!variant.validated, "acquire-meet forbids it");
    assert_eq!(
        variant.states.keys().collect::<Vec<_>>(),
        check(&t, "ptx6").states.keys().collect::<Vec<_>>()
    );
}

/// The mirror of weaker case 3, found by `compare --distinguish lostpop
/// ptx6 --events 4` (docs/synthesis.md, round 15): an acquire narrower
/// than the release after it. Each printed order of A.5.2's overlapping
/// cases lets LOST-POP allow one of the two load buffering tests that ptx6
/// forbids; `scope-join` (the wider scope for an acquire before a
/// release) forbids both.
#[test]
fn each_meet_reading_against_both_load_buffering_tests() {
    const LB_REL_CTA: &str = "PTX LB+acq.gpu-rel.cta
{ x=0; y=0; }
 P0@cta 0,gpu 0        | P1@cta 1,gpu 0        ;
 ld.weak r0, x         | ld.acquire.gpu r0, y  ;
 st.release.gpu y, 1   | st.release.cta x, 2   ;
exists (0:r0=2 /\\ 1:r0=1 /\\ x=2 /\\ y=1)
";
    let mirror = LB_REL_CTA
        .replace("ld.weak r0, x        ", "ld.acquire.cta r0, x ")
        .replace("st.release.cta x, 2  ", "st.weak x, 2         ");
    assert!(mirror.contains("ld.acquire.cta r0, x"), "{mirror}");
    let rel_cta = parse("LB-rel-cta.litmus", LB_REL_CTA);
    let acq_cta = parse("LB-acq-cta.litmus", &mirror);
    let opts = CheckOptions::default();
    let allows = |t: &Test, meet| {
        let b = litmix::op::lostpop::Build {
            unreduced: false,
            meet,
        };
        litmix::op::lostpop::judge(t, &opts, b).unwrap().validated
    };
    for t in [&rel_cta, &acq_cta] {
        assert!(!check(t, "ptx6").validated, "ptx6 forbids {}", t.name);
    }
    // As printed: the later release's scope first.
    assert!(allows(&rel_cta, Meet::ReleaseFirst));
    assert!(!allows(&acq_cta, Meet::ReleaseFirst));
    // acquire-meet: the earlier acquire's scope first.
    assert!(!allows(&rel_cta, Meet::AcquireFirst));
    assert!(allows(&acq_cta, Meet::AcquireFirst));
    // scope-join: the wider of the two.
    assert!(!allows(&rel_cta, Meet::Join));
    assert!(!allows(&acq_cta, Meet::Join));
}
