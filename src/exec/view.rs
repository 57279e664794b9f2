//! Executions in reportable form: self-contained event lists and edge lists
//! that reporters (herd text, JSON, DOT, `--why`) print without touching
//! the engine's internal types.

use super::candidate::Skeleton;
use super::thread::EventKind;
use crate::ir::Value;
use crate::verdict::{EventView, ExecutionView, WHY_PATH, WHY_PREFIX, WhyReason};

pub(super) fn view(
    skel: &Skeleton,
    rf: &crate::rel::Relation,
    co: &crate::rel::Relation,
    vals: &[Option<Value>],
    state: Vec<Value>,
) -> ExecutionView {
    let test = skel.test;
    let events = skel
        .events
        .iter()
        .enumerate()
        .map(|(i, e)| EventView {
            thread: e.thread,
            kind: match e.kind {
                EventKind::Read => 'R',
                EventKind::Write => 'W',
                EventKind::Fence => 'F',
                EventKind::Barrier(_) => 'B',
            },
            loc: e.addr.map(|l| test.locations[l].name.clone()),
            value: vals[i],
            instr: match (e.thread, e.instr) {
                (Some(t), Some(k)) => test.threads[t].code[k].text.clone(),
                _ => String::new(),
            },
        })
        .collect();
    let n = skel.len();
    let mut po = Vec::new();
    let mut rmw = Vec::new();
    for (t, p) in skel.paths.iter().enumerate() {
        for i in 1..p.events.len() {
            po.push((skel.global(t, i - 1), skel.global(t, i)));
        }
        for (i, e) in p.events.iter().enumerate() {
            if let Some(r) = e.rmw_read {
                rmw.push((skel.global(t, r), skel.global(t, i)));
            }
        }
    }
    let rf_pairs: Vec<(usize, usize)> = rf.pairs().collect();
    // Immediate coherence edges only, for readable graphs.
    let co_pairs: Vec<(usize, usize)> = co
        .pairs()
        .filter(|&(a, b)| !(0..n).any(|c| co.contains(a, c) && co.contains(c, b)))
        .collect();
    let mut fr = Vec::new();
    for &(w, r) in &rf_pairs {
        for &(a, b) in &co_pairs {
            if a == w {
                fr.push((r, b));
            }
        }
    }
    ExecutionView {
        events,
        relations: vec![
            ("po".into(), po),
            ("rf".into(), rf_pairs),
            ("co".into(), co_pairs),
            ("fr".into(), fr),
            ("rmw".into(), rmw),
        ],
        state,
    }
}

/// The non-empty `why_` relations (but `why_path`) as reasons, each edge
/// with a shortest `why_path` path; `None` when there is none.
pub(super) fn why_reasons(named: &[(String, crate::rel::Relation)]) -> Option<Vec<WhyReason>> {
    let path_rel = named.iter().find(|(n, _)| n == WHY_PATH).map(|(_, r)| r);
    let reasons: Vec<WhyReason> = named
        .iter()
        .filter(|(n, r)| n != WHY_PATH && !r.is_empty())
        .map(|(n, r)| WhyReason {
            name: n.strip_prefix(WHY_PREFIX).unwrap_or(n).to_string(),
            edges: r
                .pairs()
                .map(|(a, b)| {
                    let path = path_rel.and_then(|p| p.path(a, b)).unwrap_or_default();
                    (a, b, path)
                })
                .collect(),
        })
        .collect();
    (!reasons.is_empty()).then_some(reasons)
}
