//! The cache machine on classic shapes, verdicts derived by hand from
//! Tables 1 and 2 (the argument for each is in its comment). Every test
//! also checks that the reductions change no outcome set.

use super::*;
use crate::op::{ExploreOptions, explore};
use std::collections::BTreeSet;

fn machine(src: &str, opts: RspOptions) -> RspCache {
    let test =
        crate::litmus::parse_str("t.litmus", src).unwrap_or_else(|d| panic!("{}", d.render()));
    RspCache::new(&test, opts).unwrap()
}

/// Outcomes (as integers) reachable with `opts`.
fn run(src: &str, opts: RspOptions) -> BTreeSet<Vec<i64>> {
    let m = machine(src, opts);
    let e = explore(&m, &ExploreOptions::default()).unwrap();
    e.outcomes
        .keys()
        .map(|o| o.iter().map(|v| v.as_int().unwrap()).collect())
        .collect()
}

/// Outcomes with the reductions, after checking they equal the outcomes
/// without them.
fn outcomes(src: &str) -> BTreeSet<Vec<i64>> {
    let reduced = run(src, RspOptions::default());
    let full = run(
        src,
        RspOptions {
            reduce: false,
            ..RspOptions::default()
        },
    );
    assert_eq!(reduced, full, "reductions changed the outcomes");
    assert!(!reduced.is_empty(), "no outcome at all");
    reduced
}

fn set(v: &[&[i64]]) -> BTreeSet<Vec<i64>> {
    v.iter().map(|o| o.to_vec()).collect()
}

const TWO_WG: &str = "P0@wg 0,dev 0 | P1@wg 1,dev 0 ;";
const ONE_WG: &str = "P0@wg 0,dev 0 | P1@wg 0,dev 0 ;";

fn mp(header: &str, writer: [&str; 3], reader: [&str; 3]) -> String {
    format!(
        "RSP MP\n{{ x=0; y=0; }}\n {header}\n {} | {} ;\n {} | {} ;\n {} | {} ;\nexists (1:r0=1 /\\ 1:r1=0)\n",
        writer[0], reader[0], writer[1], reader[1], writer[2], reader[2]
    )
}

#[test]
fn mp_plain_across_work_groups_is_weak() {
    // y can be flushed to L2 before x and P1 fetches y=1 while its L1
    // still misses x, which it fetches as 0 from L2.
    let o = outcomes(&mp(
        TWO_WG,
        ["ST 1 x", "ST 1 y", ""],
        ["LD r0 y", "LD r1 x", ""],
    ));
    assert!(o.contains(&vec![1, 0]));
    assert_eq!(o.len(), 4);
}

#[test]
fn mp_plain_in_one_work_group_is_sc() {
    // One L1: P0's dirty entries cannot be evicted or refetched, so once
    // P1 sees y=1 it sees x=1.
    let o = outcomes(&mp(
        ONE_WG,
        ["ST 1 x", "ST 1 y", ""],
        ["LD r0 y", "LD r1 x", ""],
    ));
    assert_eq!(o, set(&[&[0, 0], &[0, 1], &[1, 1]]));
}

#[test]
fn mp_release_flush_acquire_invalidate_after_is_forbidden() {
    // The proposed scheme's shape: x is clean in L2 before P0 stores y;
    // P1's INV after LD y forces a refetch of x from L2.
    let o = outcomes(&mp(
        TWO_WG,
        ["ST 1 x", "FLU_L1 WG", "ST 1 y"],
        ["LD r0 y", "INV_L1 WG", "LD r1 x"],
    ));
    assert!(!o.contains(&vec![1, 0]));
    assert_eq!(o, set(&[&[0, 0], &[0, 1], &[1, 1]]));
}

#[test]
fn mp_invalidate_before_load_is_weak_fig4() {
    // Fig. 4: P1 invalidates first and refetches a stale x before P0
    // writes it.
    let o = outcomes(&mp(
        TWO_WG,
        ["ST 1 x", "FLU_L1 WG", "ST 1 y"],
        ["INV_L1 WG", "LD r0 y", "LD r1 x"],
    ));
    assert!(o.contains(&vec![1, 0]));
}

#[test]
fn mp_without_release_flush_is_weak() {
    let o = outcomes(&mp(
        TWO_WG,
        ["ST 1 x", "ST 1 y", ""],
        ["LD r0 y", "INV_L1 WG", "LD r1 x"],
    ));
    assert!(o.contains(&vec![1, 0]));
}

#[test]
fn sb_across_work_groups_is_weak_and_in_one_is_sc() {
    let sb = |h: &str| {
        format!(
            "RSP SB\n{{ x=0; y=0; }}\n {h}\n ST 1 x | ST 1 y ;\n LD r0 y | LD r1 x ;\nexists (0:r0=0 /\\ 1:r1=0)\n"
        )
    };
    assert!(outcomes(&sb(TWO_WG)).contains(&vec![0, 0]));
    assert_eq!(outcomes(&sb(ONE_WG)), set(&[&[0, 1], &[1, 0], &[1, 1]]));
}

#[test]
fn lb_is_forbidden() {
    // Loads complete before the thread's next instruction: no load can see
    // a store that comes after the other load in program order.
    let o = outcomes(&format!(
        "RSP LB\n{{ x=0; y=0; }}\n {TWO_WG}\n LD r0 x | LD r1 y ;\n ST 1 y | ST 1 x ;\nexists (0:r0=1 /\\ 1:r1=1)\n"
    ));
    assert!(!o.contains(&vec![1, 1]));
    assert_eq!(o.len(), 3);
}

#[test]
fn corr_reads_never_go_back() {
    // L2 only moves forward, a dirty L2 entry cannot be evicted, and global
    // memory gets the value before the L2 entry becomes clean.
    let o = outcomes(&format!(
        "RSP CoRR\n{{ x=0; }}\n {TWO_WG}\n ST 1 x | LD r0 x ;\n | LD r1 x ;\nexists (1:r0=1 /\\ 1:r1=0)\n"
    ));
    assert!(!o.contains(&vec![1, 0]));
    assert_eq!(o, set(&[&[0, 0], &[0, 1], &[1, 1]]));
}

#[test]
fn coww_same_thread_keeps_the_last_store() {
    let o =
        outcomes("RSP CoWW\n{ x=0; }\n P0@wg 0,dev 0 ;\n ST 1 x ;\n ST 2 x ;\nexists ([x]=1)\n");
    assert_eq!(o, set(&[&[2]]));
}

#[test]
fn two_plus_two_w_across_work_groups_is_weak() {
    // Each L1 flushes its two stores in any order relative to the other.
    // Reduced run only: without reductions this has ~375k states.
    let o = run(
        &format!(
            "RSP 2+2W\n{{ x=0; y=0; }}\n {TWO_WG}\n ST 1 x | ST 1 y ;\n ST 2 y | ST 2 x ;\nexists ([x]=1 /\\ [y]=1)\n"
        ),
        RspOptions::default(),
    );
    assert!(o.contains(&vec![1, 1]));
    assert_eq!(o.len(), 4);
}

#[test]
fn two_plus_two_w_with_release_flushes_is_forbidden() {
    // FLU_L1 WG makes the first store reach L2 before the second store is
    // even made: x=1 must be overwritten by P1's x=2 unless P1's x was
    // first, which puts P1's y=1 ... in L2 before P0's y=2.
    let o = run(
        &format!(
            "RSP 2+2W+flu\n{{ x=0; y=0; }}\n {TWO_WG}\n ST 1 x | ST 1 y ;\n FLU_L1 WG | FLU_L1 WG ;\n ST 2 y | ST 2 x ;\nexists ([x]=1 /\\ [y]=1)\n"
        ),
        RspOptions::default(),
    );
    assert!(!o.contains(&vec![1, 1]));
}

#[test]
fn iriw_with_invalidates_on_one_device_is_forbidden() {
    // One L2: x and y reach it in one order; a reader that sees the first
    // and then invalidates refetches the other from that L2.
    let src = "RSP IRIW\n{ x=0; y=0; }\n P0@wg 0,dev 0 | P1@wg 1,dev 0 | P2@wg 2,dev 0 | P3@wg 3,dev 0 ;\n ST 1 x | ST 1 y | LD r0 x | LD r0 y ;\n | | INV_L1 WG | INV_L1 WG ;\n | | LD r1 y | LD r1 x ;\nexists (2:r0=1 /\\ 2:r1=0 /\\ 3:r0=1 /\\ 3:r1=0)\n";
    let o = run(src, RspOptions::default());
    assert!(!o.contains(&vec![1, 0, 1, 0]));
    assert!(o.contains(&vec![1, 0, 0, 0]));
}

#[test]
fn iriw_without_invalidates_is_weak() {
    let src = "RSP IRIW\n{ x=0; y=0; }\n P0@wg 0,dev 0 | P1@wg 1,dev 0 | P2@wg 2,dev 0 | P3@wg 3,dev 0 ;\n ST 1 x | ST 1 y | LD r0 x | LD r0 y ;\n | | LD r1 y | LD r1 x ;\nexists (2:r0=1 /\\ 2:r1=0 /\\ 3:r0=1 /\\ 3:r1=0)\n";
    assert!(run(src, RspOptions::default()).contains(&vec![1, 0, 1, 0]));
}

#[test]
fn inc_l2_is_atomic_across_work_groups() {
    let o = outcomes(&format!(
        "RSP inc-L2\n{{ x=0; }}\n {TWO_WG}\n INC_L2 r0 x | INC_L2 r0 x ;\nexists ([x]=1)\n"
    ));
    assert_eq!(o, set(&[&[2]]));
}

#[test]
fn inc_l1_is_atomic_in_one_work_group_only() {
    let src = |h: &str| {
        format!("RSP inc-L1\n{{ x=0; }}\n {h}\n INC_L1 r0 x | INC_L1 r0 x ;\nexists ([x]=1)\n")
    };
    assert_eq!(outcomes(&src(ONE_WG)), set(&[&[2]]));
    assert_eq!(outcomes(&src(TWO_WG)), set(&[&[1], &[2]]));
}

#[test]
fn inc_reads_old_value_and_adds_its_operand() {
    let o = outcomes(
        "RSP inc\n{ x=5; }\n P0@wg 0,dev 0 ;\n INC_L2 r0 x 3 ;\n INC_L1 r1 x ;\nexists (0:r0=5 /\\ 0:r1=8 /\\ [x]=9)\n",
    );
    assert_eq!(o, set(&[&[5, 8, 9]]));
}

#[test]
fn fig5_remote_store_original_loses_the_increment() {
    // Fig. 5: the WG increment stays dirty in its L1 while the remote
    // store (original scheme) is flushed; the increment's x=1 lands last.
    let src = format!(
        "RSP fig5\n{{ x=0; }}\n {TWO_WG}\n INC_L1 r0 x | LK_L2 x ;\n | FLU_L1 WG ;\n | ST 2 x ;\n | INV_L1 DV ;\n | UL_L2 x ;\nexists ([x]=1)\n"
    );
    assert!(outcomes(&src).contains(&vec![1]));
}

#[test]
fn fig5_remote_store_proposed_keeps_atomicity() {
    let src = format!(
        "RSP fig5p\n{{ x=0; }}\n {TWO_WG}\n INC_L1 r0 x | LK_RMW DV ;\n | FLU_L1 DV ;\n | INV_L1 DV ;\n | ST 2 x ;\n | FLU_L1 WG ;\n | INV_L1 DV ;\n | UL_RMW DV ;\nexists ([x]=1)\n"
    );
    let o = outcomes(&src);
    assert!(!o.contains(&vec![1]));
    assert_eq!(o, set(&[&[2], &[3]]));
}

#[test]
fn rmw_lock_blocks_other_work_groups_increments() {
    // P1 holds every RMW lock of the device until it ends: P0's INC blocks
    // and the test completes only when P1 releases.
    let src = format!(
        "RSP rmw-lock\n{{ x=0; }}\n {TWO_WG}\n INC_L1 r0 x | LK_RMW DV ;\n | ST 5 x ;\n | FLU_L1 DV ;\n | UL_RMW DV ;\nexists ([x]=6)\n"
    );
    let o = outcomes(&src);
    assert!(o.contains(&vec![5]));
    // Never-released lock: P0 can increment only before P1 takes it.
    let stuck = format!(
        "RSP rmw-lock-held\n{{ x=0; }}\n {TWO_WG}\n LD r1 x | LK_RMW DV ;\n INC_L1 r0 x | ;\nexists (0:r0=0)\n"
    );
    let m = machine(&stuck, RspOptions::default());
    let e = explore(&m, &ExploreOptions::default()).unwrap();
    assert!(e.stuck > 0, "a state with P0 blocked for ever is stuck");
    assert!(!e.outcomes.is_empty());
}

#[test]
fn l2_lock_stalls_other_work_groups_flushes() {
    // While P1 holds x's L2 line, P0's dirty x cannot be flushed: P1's two
    // loads (after invalidating) both see the same L2 value.
    let src = format!(
        "RSP lk\n{{ x=0; }}\n {TWO_WG}\n ST 1 x | LK_L2 x ;\n | INV_L1 WG ;\n | LD r0 x ;\n | INV_L1 WG ;\n | LD r1 x ;\n | UL_L2 x ;\nexists (1:r0=0 /\\ 1:r1=1)\n"
    );
    assert!(!outcomes(&src).contains(&vec![0, 1]));
    let nolock = run(
        &src,
        RspOptions {
            l2_locking: false,
            ..RspOptions::default()
        },
    );
    assert!(nolock.contains(&vec![0, 1]));
}

#[test]
fn flush_marker_blocks_until_dequeued() {
    // P0's FLU_L1 DV waits until P1's dirty x is flushed: after it, an
    // L2 increment sees P1's store.
    let src = format!(
        "RSP flu\n{{ x=0; y=0; }}\n {TWO_WG}\n LD r1 y | ST 1 x ;\n BNE r1 1 L | ST 1 y ;\n FLU_L1 DV | ;\n INC_L2 r0 x | ;\n L: | ;\nexists (0:r1=1 /\\ 0:r0=0)\n"
    );
    let o = outcomes(&src);
    assert!(!o.contains(&vec![0, 1]), "{o:?}");
}

#[test]
fn loops_are_bounded_and_cut_paths_counted() {
    let src = format!(
        "RSP spin\n{{ x=0; }}\n {TWO_WG}\n ST 1 x | L: ;\n FLU_L1 WG | LD r0 x ;\n | INV_L1 WG ;\n | BNE r0 1 L ;\nexists (1:r0=1)\n"
    );
    let m = machine(&src, RspOptions::default());
    let e = explore(&m, &ExploreOptions::default()).unwrap();
    assert!(e.stuck > 0);
    let o: Vec<_> = e.outcomes.keys().cloned().collect();
    assert_eq!(o, vec![vec![Value::Int(1)]]);
}

#[test]
fn trace_replays_fig4() {
    let src = mp(
        TWO_WG,
        ["ST 42 x", "FLU_L1 WG", "ST 1 y"],
        ["INV_L1 WG", "LD r0 y", "LD r1 x"],
    );
    let m = machine(&src, RspOptions::default());
    let e = explore(&m, &ExploreOptions::default()).unwrap();
    let key = vec![Value::Int(1), Value::Int(0)];
    let trace = e.outcomes.get(&key).expect("Fig. 4 outcome");
    let text = m.render_trace(trace).unwrap();
    assert!(text.contains("P1: INV_L1 WG"), "{text}");
    assert!(text.contains("FETCH_L1(x, 0)"), "{text}");
    assert!(text.contains("P0: ST 42 x"), "{text}");
    assert!(text.contains("x↦C,V 42"), "{text}");
}

#[test]
fn machine_refuses_other_dialects() {
    let test = crate::litmus::parse_str(
        "t.litmus",
        "X86 t\n{ x=0; }\n P0 ;\n MOV [x],1 ;\nexists ([x]=1)\n",
    )
    .unwrap();
    let e = RspCache::new(&test, RspOptions::default()).err().unwrap();
    assert!(
        e.message.contains("not an RSP instruction"),
        "{}",
        e.render()
    );
    // It points at the instruction.
    assert_eq!((e.pos.line, e.pos.col), (4, 2), "{}", e.render());
}
