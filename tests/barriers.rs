//! PTX barriers: the PTX ISA's `bar.sync a, b` (id, thread count) and Dat3M's
//! `bar.cta.sync i{, a{, b}}` (instance tag, id, count), arrive versus sync, several barrier ids, and
//! executions that block forever (`barrier-deadlock`). Verdicts derived by
//! hand from the PTX ISA rule in src/exec/barrier.rs: an instance of
//! barrier `a` in a CTA completes when `b` threads have arrived (no `b`:
//! every thread of the CTA in the test), `sync` waits for its instance,
//! `arrive` does not; ptx6 makes arrive/sync → sync of one instance `sw`.

use litmix::exec::{CheckOptions, CheckResult, check};
use litmix::litmus::parse_str;
use litmix::models::load;

fn run(src: &str) -> CheckResult {
    let test = parse_str("t.litmus", src).unwrap_or_else(|d| panic!("{}", d.render()));
    let model = load("ptx6").expect("ptx6");
    check(&test, &model, &CheckOptions::default()).unwrap_or_else(|e| panic!("{e}"))
}

/// SB between P0 and P1 with barrier instruction `b0` / `b1` between each
/// store and load; `extra` threads (same CTA unless their header says
/// otherwise) follow. The condition asks for the SB outcome.
fn sb(b0: &str, b1: &str, extra: &[(&str, &str)]) -> String {
    let mut heads = vec!["P0@cta 0,gpu 0".to_string(), "P1@cta 0,gpu 0".to_string()];
    let mut rows: Vec<Vec<String>> = vec![
        vec!["st.weak x, 1".into(), "st.weak y, 1".into()],
        vec![b0.into(), b1.into()],
        vec!["ld.weak r0, y".into(), "ld.weak r1, x".into()],
    ];
    for (i, (head, code)) in extra.iter().enumerate() {
        heads.push(format!("P{}@{head}", i + 2));
        let lines: Vec<&str> = code.split(';').map(str::trim).collect();
        for (k, row) in rows.iter_mut().enumerate() {
            row.push(lines.get(k).copied().unwrap_or("").to_string());
        }
    }
    let mut s = "PTX SB\n{ x=0; y=0; z=0; }\n".to_string();
    s.push_str(&heads.join(" | "));
    s.push_str(" ;\n");
    for row in rows {
        s.push_str(&row.join(" | "));
        s.push_str(" ;\n");
    }
    s.push_str("exists (P0:r0 == 0 /\\ P1:r1 == 0)\n");
    s
}

/// (SB outcome allowed, number of final states, some execution blocks).
fn verdict(r: &CheckResult) -> (bool, usize, bool) {
    (r.validated, r.states.len(), r.barrier_deadlocks > 0)
}

#[test]
fn count_equal_to_arrivals_synchronises() {
    // Two threads, count 2: one instance, both wait: each store is in
    // causality order before the other thread's load: only r0=r1=1.
    let r = run(&sb("bar.sync 1, 2", "bar.sync 1, 2", &[]));
    assert_eq!(verdict(&r), (false, 1, false));
    // A third CTA thread that takes no part does not matter with a count.
    let r = run(&sb(
        "bar.sync 1, 2",
        "bar.sync 1, 2",
        &[("cta 0,gpu 0", "st.weak z, 1")],
    ));
    assert_eq!(verdict(&r), (false, 1, false));
}

#[test]
fn count_below_arrivals_passes_without_synchronising() {
    // Count 1: each thread completes its own instance, nothing orders the
    // SB accesses: all four states, no blocking.
    let r = run(&sb("bar.sync 1, 1", "bar.sync 1, 1", &[]));
    assert_eq!(verdict(&r), (true, 4, false));
    // Four threads, count 2: two instances of two, any pairing: P0 and P1
    // need not share one, so SB is reachable; nobody blocks.
    let r = run(&sb(
        "bar.sync 1, 2",
        "bar.sync 1, 2",
        &[
            ("cta 0,gpu 0", "st.weak z, 1; bar.sync 1, 2"),
            ("cta 0,gpu 0", "st.weak z, 2; bar.sync 1, 2"),
        ],
    ));
    assert_eq!(verdict(&r), (true, 4, false));
}

#[test]
fn count_below_arrivals_can_hang() {
    // Three threads arrive with count 2: the first two complete an
    // instance, the third waits forever in every order: no final state.
    let r = run(&sb(
        "bar.sync 1, 2",
        "bar.sync 1, 2",
        &[("cta 0,gpu 0", "st.weak z, 1; bar.sync 1, 2")],
    ));
    assert_eq!(verdict(&r), (false, 0, true));
    assert_eq!(r.positive + r.negative, 0);
}

#[test]
fn count_above_arrivals_hangs() {
    // Count 3, two threads arrive: neither instance completes.
    let r = run(&sb(
        "bar.sync 1, 3",
        "bar.sync 1, 3",
        &[("cta 0,gpu 0", "st.weak z, 1")],
    ));
    assert_eq!(verdict(&r), (false, 0, true));
    // The third thread arriving completes it: synchronised again.
    let r = run(&sb(
        "bar.sync 1, 3",
        "bar.sync 1, 3",
        &[("cta 0,gpu 0", "st.weak z, 1; bar.arrive 1, 3")],
    ));
    assert_eq!(verdict(&r), (false, 1, false));
}

#[test]
fn no_count_means_every_thread_of_the_cta() {
    // Two of three CTA threads reach `bar.sync 0`: it waits for 3.
    let r = run(&sb(
        "bar.sync 0",
        "bar.sync 0",
        &[("cta 0,gpu 0", "st.weak z, 1")],
    ));
    assert_eq!(verdict(&r), (false, 0, true));
    // The third thread is in another CTA: the barrier of CTA 0 has two
    // threads, both arrive.
    let r = run(&sb(
        "bar.sync 0",
        "bar.sync 0",
        &[("cta 1,gpu 0", "st.weak z, 1")],
    ));
    assert_eq!(verdict(&r), (false, 1, false));
    // Different CTAs: one thread per CTA, each barrier completes alone.
    let src = sb("bar.sync 0", "bar.sync 0", &[]).replace("P1@cta 0", "P1@cta 1");
    assert_eq!(verdict(&run(&src)), (true, 4, false));
}

#[test]
fn arrive_does_not_wait() {
    // Both arrive (count 2): the instance completes but nobody waited and
    // arrive → arrive is no sw: SB is reachable, nobody blocks.
    let r = run(&sb("bar.arrive 1, 2", "bar.arrive 1, 2", &[]));
    assert_eq!(verdict(&r), (true, 4, false));
    // arrive (P0) → sync (P1): P0's store is before P1's load (r1 = 1),
    // P0's load is unordered (r0 ∈ {0, 1}): no SB, two states.
    let r = run(&sb("bar.arrive 1, 2", "bar.sync 1, 2", &[]));
    assert_eq!(verdict(&r), (false, 2, false));
    // An arrive with a count nobody reaches does not block its thread, but
    // the sync that waits on the same instance does.
    let r = run(&sb(
        "bar.arrive 1, 3",
        "bar.sync 1, 3",
        &[("cta 0,gpu 0", "st.weak z, 1")],
    ));
    assert_eq!(verdict(&r), (false, 0, true));
    // Arrives alone never block.
    let r = run(&sb(
        "bar.arrive 1, 3",
        "bar.arrive 1, 3",
        &[("cta 0,gpu 0", "st.weak z, 1")],
    ));
    assert_eq!(verdict(&r), (true, 4, false));
}

#[test]
fn two_barrier_ids() {
    // Different ids: separate counters; each gets one of two arrivals.
    let r = run(&sb("bar.sync 1, 2", "bar.sync 2, 2", &[]));
    assert_eq!(verdict(&r), (false, 0, true));
    // Crossed syncs: P0 waits at 1 before 2, P1 at 2 before 1: deadlock.
    let src = "PTX crossed
{ x=0; y=0; }
 P0@cta 0,gpu 0    | P1@cta 0,gpu 0    ;
 st.weak x, 1      | st.weak y, 1      ;
 bar.sync 1, 2 | bar.sync 2, 2 ;
 bar.sync 2, 2 | bar.sync 1, 2 ;
 ld.weak r0, y     | ld.weak r1, x     ;
exists (P0:r0 == 0 /\\ P1:r1 == 0)
";
    assert_eq!(verdict(&run(src)), (false, 0, true));
    // Crossed arrive/sync (producer-consumer): P0 arrives at 1 and waits at
    // 2; P1 arrives at 2 (releasing P0) and waits at 1 (already complete
    // with P0's arrival). P0's store reaches P1's load (arrive 1 → sync 1),
    // P1's store reaches P0's load (arrive 2 → sync 2): only r0=r1=1.
    let src = "PTX crossed-arrive
{ x=0; y=0; }
 P0@cta 0,gpu 0      | P1@cta 0,gpu 0      ;
 st.weak x, 1        | st.weak y, 1        ;
 bar.arrive 1, 2 | bar.arrive 2, 2 ;
 bar.sync 2, 2   | bar.sync 1, 2   ;
 ld.weak r0, y       | ld.weak r1, x       ;
exists (P0:r0 == 0 \\/ P1:r1 == 0)
";
    assert_eq!(verdict(&run(src)), (false, 1, false));
    // The same id twice in a row: instance k of P0 meets instance k of P1.
    let src = "PTX twice
{ x=0; y=0; }
 P0@cta 0,gpu 0    | P1@cta 0,gpu 0    ;
 bar.sync 1, 2 | bar.sync 1, 2 ;
 st.weak x, 1      | st.weak y, 1      ;
 bar.sync 1, 2 | bar.sync 1, 2 ;
 ld.weak r0, y     | ld.weak r1, x     ;
exists (P0:r0 == 0 \\/ P1:r1 == 0)
";
    assert_eq!(verdict(&run(src)), (false, 1, false));
}

#[test]
fn mismatched_or_bad_counts_block() {
    // Counts 1 and 2 on one barrier: the count-1 thread passes alone and
    // the other waits forever, or the mixed instance never completes.
    let r = run(&sb("bar.sync 1, 1", "bar.sync 1, 2", &[]));
    assert_eq!(verdict(&r), (false, 0, true));
    // A count of 0 is never reached.
    let r = run(&sb("bar.sync 1, 0", "bar.sync 1, 0", &[]));
    assert_eq!(verdict(&r), (false, 0, true));
}

#[test]
fn count_read_from_memory_blocks_only_some_executions() {
    // P0's count is the value it reads from z: 2 when P2's store is seen
    // (synchronised with P1), 0 otherwise (P0 blocks, and P1 with it).
    let src = "PTX dyn
{ x=0; y=0; z=0; }
 P0@cta 0,gpu 0    | P1@cta 0,gpu 0    | P2@cta 0,gpu 0 ;
 ld.weak r2, z     | st.weak y, 1      | st.weak z, 2   ;
 st.weak x, 1      | bar.sync 1, 2 |                ;
 bar.sync 1, r2 | ld.weak r1, x    |                ;
 ld.weak r0, y     |                   |                ;
exists (P0:r0 == 0 /\\ P1:r1 == 0)
";
    let r = run(src);
    assert!(!r.validated);
    assert!(r.barrier_deadlocks > 0);
    // Every final state has r2 = 2, r0 = r1 = 1.
    assert_eq!(r.states.len(), 1);
}

#[test]
fn dat3m_three_operand_spelling() {
    // `bar.cta.sync i, a, b`: instance tag i, id a, count b.
    let r = run(&sb("bar.cta.sync 7, 1, 2", "bar.cta.sync 8, 1, 2", &[]));
    assert_eq!(verdict(&r), (false, 1, false));
    let r = run(&sb("bar.cta.sync 7, 1, 1", "bar.cta.sync 7, 1, 1", &[]));
    assert_eq!(verdict(&r), (true, 4, false));
    // A fourth operand is an error at its position.
    let src = sb("bar.cta.sync 7, 1, 2, 3", "bar.cta.sync 1, 2", &[]);
    let err = parse_str("t.litmus", &src).expect_err("four operands");
    assert!(err.render().contains("t.litmus:5:"), "{}", err.render());
}

#[test]
fn deadlock_is_reported_in_herd_and_json_output() {
    let src = sb("bar.sync 1, 2", "bar.sync 2, 2", &[]);
    let test = parse_str("t.litmus", &src).unwrap();
    let r = run(&src);
    let herd = litmix::report::herd::block(&test, &r);
    assert!(herd.contains("Warning: barrier-deadlock"), "{herd}");
    assert!(herd.contains("States 0"), "{herd}");
    let json = litmix::report::json::result("t.litmus", &test, &r);
    assert_eq!(json["barrier_deadlock"], true);
    // No deadlock: no warning, `false` in JSON.
    let src = sb("bar.sync 1, 2", "bar.sync 1, 2", &[]);
    let test = parse_str("t.litmus", &src).unwrap();
    let r = run(&src);
    assert!(!litmix::report::herd::block(&test, &r).contains("barrier-deadlock"));
    assert_eq!(
        litmix::report::json::result("t.litmus", &test, &r)["barrier_deadlock"],
        false
    );
}
