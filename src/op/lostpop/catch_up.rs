//! The reductions that move several propagations at once or take one
//! location at a time (docs/operational.md, "Reduction", rules 4 and 8):
//! the catch-up macro and its enabling, and the x86 one-location stubborn
//! set.

use super::machine::{LostPop, bit, enforced_at, forwards};
use super::reduce::live_pair;
use super::types::*;

impl LostPop<'_> {
    /// The catch-up macro (docs/operational.md, "Reduction", rule 4):
    /// thread `to` has no active request on `loc` and no thread may accept
    /// one any more; propagates to `to` every active request on `loc` that
    /// can get there now (in an order that respects the blocking rule: such
    /// propagations add no edge, so they only unblock one another), provided
    /// no request left behind could still be satisfied with or by one moved
    /// (the satisfy rule compares propagation sets). Returns the requests
    /// moved, or `None` (with `s` partly changed) when nothing moves or the
    /// conditions fail.
    pub(super) fn catch_up_run(&self, s: &mut LpState, loc: u32, to: u32) -> Option<Vec<Rid>> {
        let tb = bit(to);
        let on = |q: &Req| q.is_mem() && q.loc == loc;
        if s.reqs.iter().any(|q| on(q) && q.thread() == to)
            || (0..self.threads.len()).any(|v| self.future.may_access(s, v, loc))
        {
            return None;
        }
        let mut moved = Vec::new();
        loop {
            let next = s
                .reqs
                .iter()
                .find(|q| on(q) && q.prop & tb == 0 && self.can_propagate(s, q, to));
            let Some(q) = next.map(|q| q.id) else { break };
            self.propagate(s, q, to);
            moved.push(q);
        }
        if moved.is_empty() {
            return None;
        }
        let left: Vec<&Req> = s
            .reqs
            .iter()
            .filter(|q| on(q) && q.prop & tb == 0)
            .collect();
        for a in &left {
            for b in moved.iter().filter_map(|m| s.req(*m)) {
                if live_pair(s, a, b) {
                    return None;
                }
            }
        }
        Some(moved)
    }

    /// Adds every possible catch-up macro of `s` to `out`.
    pub(super) fn catch_ups(&self, s: &LpState, out: &mut Vec<LpTransition>) {
        let mut locs: Vec<u32> = s
            .reqs
            .iter()
            .filter(|q| q.is_mem() && q.prop != self.all)
            .map(|q| q.loc)
            .collect();
        locs.sort_unstable();
        locs.dedup();
        for loc in locs {
            if (0..self.threads.len()).any(|v| self.future.may_access(s, v, loc)) {
                continue;
            }
            for to in 0..self.threads.len() as u32 {
                let on = |q: &&Req| q.is_mem() && q.loc == loc;
                let needed = s.reqs.iter().filter(on).any(|q| q.prop & bit(to) == 0)
                    && !s.reqs.iter().filter(on).any(|q| q.thread() == to);
                if needed && self.catch_up_run(&mut s.clone(), loc, to).is_some() {
                    out.push(LpTransition::CatchUp { loc, to });
                }
            }
        }
    }

    /// Rule 8, one location at a time (docs/operational.md): in an x86
    /// test, the enabled propagations and satisfies of the requests on a
    /// location `L` form a stubborn set when an unsatisfied read of `L`
    /// remains, no thread may still accept an access to `L`, and every
    /// propagation of an `L` request that is not enabled is blocked by an
    /// `L` request (so only `L` transitions can enable it). Returns the
    /// indices of the smallest such set, if any is smaller than `enabled`.
    pub(super) fn one_location(&self, s: &LpState, enabled: &[LpTransition]) -> Option<Vec<usize>> {
        if !self.all_x86 {
            return None;
        }
        let mut locs: Vec<u32> = s.reqs.iter().filter(|q| q.reads()).map(|q| q.loc).collect();
        locs.sort_unstable();
        locs.dedup();
        let mut best: Option<Vec<usize>> = None;
        for l in locs {
            if (0..self.threads.len()).any(|v| self.future.may_access(s, v, l)) {
                continue;
            }
            let on = |id: Rid| s.req(id).is_some_and(|q| q.is_mem() && q.loc == l);
            let idx: Vec<usize> = enabled
                .iter()
                .enumerate()
                .filter(|(_, t)| match **t {
                    LpTransition::Propagate { req, .. } => on(req),
                    LpTransition::Satisfy { read, .. } => on(read),
                    _ => false,
                })
                .map(|(i, _)| i)
                .collect();
            if idx.is_empty() || idx.len() == enabled.len() {
                continue;
            }
            if best.as_ref().is_some_and(|b| b.len() <= idx.len()) {
                continue;
            }
            if self.blocked_within(s, l) {
                best = Some(idx);
            }
        }
        best
    }

    /// Whether every propagation of a request on `l` that is not enabled
    /// is blocked by a request on `l`: an own-thread or predecessor
    /// blocker on `l` that has not reached its edge's scope, or another
    /// thread's request on `l` that has not reached the target; and every
    /// unsatisfied read on `l` that may not take a value yet
    /// ([`Self::read_performable`]) is held back by such an own-thread or
    /// predecessor blocker on `l` (a blocker on another location, or a
    /// fence, could be released by other locations' transitions).
    fn blocked_within(&self, s: &LpState, l: u32) -> bool {
        for q in s.reqs.iter().filter(|q| q.is_mem() && q.loc == l) {
            if q.reads() && !self.read_performable(s, q) {
                let held = s.edges.iter().filter(|e| e.1 == q.id).any(|&(a, _, sc)| {
                    s.req(a).is_some_and(|aq| {
                        aq.is_mem()
                            && aq.loc == l
                            && enforced_at(aq, q, self.all, self.meet)
                            && aq.prop & sc != sc
                            && !forwards(aq, q)
                    })
                });
                if !held {
                    return false;
                }
            }
            let missing = self.all & !q.prop;
            if missing == 0 {
                continue;
            }
            let disabled = missing & !self.propagation_targets(s, q);
            if disabled == 0 {
                continue;
            }
            // Targets some `l` blocker keeps closed.
            let mut closed = 0u64;
            for &(a, _, sc) in s.edges.iter().filter(|e| e.1 == q.id) {
                let Some(aq) = s.req(a) else { continue };
                if !aq.is_mem() || aq.loc != l {
                    continue;
                }
                if enforced_at(aq, q, self.all, self.meet) {
                    if aq.prop & sc != sc {
                        closed = self.all;
                    }
                } else {
                    closed |= self.all & !aq.prop;
                }
            }
            if disabled & !closed != 0 {
                return false;
            }
        }
        true
    }
}
