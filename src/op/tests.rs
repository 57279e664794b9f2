//! A tiny machine exercising the trait and the explorer: `n` threads each
//! increment a shared counter non-atomically (load into a register, then
//! store register+1), with sequentially consistent memory.

use super::*;
use crate::ir::Value;

struct Counter {
    threads: usize,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct CState {
    mem: i64,
    /// Per thread: program counter (0 = load next, 1 = store next, 2 = done)
    /// and register.
    pcs: Vec<(u8, i64)>,
}

impl Machine for Counter {
    type State = CState;
    type Key = CState;
    type Transition = usize;

    fn name(&self) -> &str {
        "counter"
    }
    fn initial(&self) -> CState {
        CState {
            mem: 0,
            pcs: vec![(0, 0); self.threads],
        }
    }
    fn enabled(&self, s: &CState) -> Vec<usize> {
        (0..self.threads).filter(|&t| s.pcs[t].0 < 2).collect()
    }
    fn apply(&self, s: &CState, &t: &usize) -> Result<CState, MachineError> {
        let mut n = s.clone();
        match n.pcs[t].0 {
            0 => n.pcs[t] = (1, s.mem),
            1 => {
                n.mem = s.pcs[t].1 + 1;
                n.pcs[t].0 = 2;
            }
            _ => return Err(MachineError("thread already done".into())),
        }
        Ok(n)
    }
    fn outcome(&self, s: &CState) -> Option<Vec<Value>> {
        s.pcs
            .iter()
            .all(|p| p.0 == 2)
            .then(|| vec![Value::Int(s.mem)])
    }
    fn canonical(&self, s: &CState) -> CState {
        s.clone()
    }
    fn label(&self, s: &CState, &t: &usize) -> String {
        match s.pcs[t].0 {
            0 => format!("P{t} load"),
            _ => format!("P{t} store"),
        }
    }
    fn view(&self, s: &CState) -> StateView {
        StateView {
            summary: vec![format!("x={}", s.mem)],
            threads: s
                .pcs
                .iter()
                .enumerate()
                .map(|(i, p)| ThreadView {
                    name: format!("P{i}"),
                    arch: "SC".into(),
                    info: vec![format!("pc={} r={}", p.0, p.1)],
                    items: Vec::new(),
                })
                .collect(),
            ..StateView::default()
        }
    }
}

#[test]
fn lost_update_is_reachable_and_traced() {
    let m = Counter { threads: 2 };
    let r = explore(&m, &ExploreOptions::default()).unwrap();
    let outs: Vec<_> = r.outcomes.keys().cloned().collect();
    assert_eq!(outs, vec![vec![Value::Int(1)], vec![Value::Int(2)]]);
    // States: each thread at pc 0,1,2 with memory/register values; the
    // lost-update witness takes both loads before either store.
    let lost = &r.outcomes[&vec![Value::Int(1)]];
    assert_eq!(lost.len(), 4);
    let labels: Vec<String> = {
        let states = explore::replay(&m, lost).unwrap();
        lost.iter()
            .zip(&states)
            .map(|(t, s)| m.label(s, t))
            .collect()
    };
    assert_eq!(&labels[..2], &["P0 load", "P1 load"]);
    assert_eq!(r.stuck, 0);
    assert!(r.states > 5);
}

#[test]
fn parallel_and_serial_agree() {
    let m = Counter { threads: 5 };
    let par = explore(&m, &ExploreOptions::default()).unwrap();
    let ser = explore(
        &m,
        &ExploreOptions {
            parallel: false,
            ..ExploreOptions::default()
        },
    )
    .unwrap();
    assert_eq!(par.states, ser.states);
    assert_eq!(par.transitions, ser.transitions);
    assert_eq!(
        par.outcomes.keys().collect::<Vec<_>>(),
        ser.outcomes.keys().collect::<Vec<_>>()
    );
    // 5 racing increments can lose any number of updates but one.
    assert_eq!(par.outcomes.len(), 5);
}

#[test]
fn max_states_is_a_clear_limit() {
    let m = Counter { threads: 4 };
    let e = explore(
        &m,
        &ExploreOptions {
            max_states: 10,
            ..ExploreOptions::default()
        },
    )
    .unwrap_err();
    assert!(e.to_string().contains("more than 10 states"), "{e}");
}

#[test]
fn view_lists_enabled_transitions() {
    let m = Counter { threads: 2 };
    let v = state_view(&m, &m.initial());
    let labels: Vec<_> = v.transitions.iter().map(|t| t.label.as_str()).collect();
    assert_eq!(labels, ["P0 load", "P1 load"]);
    assert_eq!(v.summary, ["x=0"]);
    let json = serde_json::to_string(&v).unwrap();
    assert!(json.contains("\"transitions\""));
}

#[test]
fn deadline_is_a_timeout_and_a_far_one_changes_nothing() {
    let m = Counter { threads: 4 };
    let past = std::time::Instant::now();
    let e = explore(
        &m,
        &ExploreOptions {
            deadline: Some(past),
            ..ExploreOptions::default()
        },
    )
    .unwrap_err();
    assert!(matches!(e, ExploreError::Timeout { .. }), "{e}");
    assert!(e.to_string().starts_with("timeout after"), "{e}");
    let far = std::time::Instant::now() + std::time::Duration::from_secs(3600);
    let with = explore(
        &m,
        &ExploreOptions {
            deadline: Some(far),
            ..ExploreOptions::default()
        },
    )
    .unwrap();
    let without = explore(&m, &ExploreOptions::default()).unwrap();
    assert_eq!(with.states, without.states);
    assert_eq!(with.outcomes, without.outcomes);
}

#[test]
fn a_session_picks_undoes_and_replays_any_machine() {
    use super::step::{Session, Stepper};
    let mut s = Stepper::new(Counter { threads: 2 });
    assert_eq!(s.model(), "counter");
    assert_eq!(s.pick(1).unwrap(), "P1 load");
    assert_eq!(s.pick(0).unwrap(), "P0 load");
    assert_eq!(s.history(), ["P1 load", "P0 load"]);
    let two = s.view();
    assert!(s.undo());
    assert_ne!(s.view(), two);
    assert!(
        s.pick(7)
            .unwrap_err()
            .starts_with("no transition 7: 2 enabled")
    );
    s.replay(&[1, 0]).unwrap();
    assert_eq!(s.view(), two);
    assert_eq!(s.picks(), [1, 0]);
    let e = s.replay(&[0, 0, 0, 5]).unwrap_err();
    assert_eq!(e.at, 3);
    assert_eq!(s.picks(), [0, 0, 0], "stops before the bad pick");
    assert!(s.undo() && s.undo() && s.undo() && !s.undo());
}
