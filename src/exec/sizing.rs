//! Sizing a search before it runs: the plain bound on its candidates,
//! and Knuth's estimate of the pruned tree's size by random walks, so
//! that a search far over the budget (or the timeout) is refused at once
//! with the figure instead of running into the limit.

use super::search::RfSearch;
use super::*;

/// Random walks per estimate of a search tree's size ([`RfSearch::fail_fast`]).
pub(super) const PROBES: usize = 8;

/// How far over the budget an estimate must be to refuse a search at once.
const PROBE_MARGIN: f64 = 10.0;

/// Every probe this far over the budget refuses a search too: a tree
/// within the budget gives that with probability at most 4^-8 = 1.5e-5
/// (Markov's inequality per probe, the probes independent).
pub(super) const PROBE_SURE_MARGIN: f64 = 4.0;

/// xorshift64: the next pseudo-random number of a probe's walk.
pub(super) fn next_random(rng: &mut u64) -> u64 {
    *rng ^= *rng << 13;
    *rng ^= *rng >> 7;
    *rng ^= *rng << 17;
    *rng
}

/// A ratio as a reader takes it in: whole up to a million, else `1.2e13`.
fn times(ratio: f64) -> String {
    if ratio < 1e6 {
        format!("{ratio:.0}")
    } else {
        format!("{ratio:.1e}")
    }
}

/// With a deadline, searches whose plain bound exceeds 10^this are sized.
const PROBE_FROM_LOG10: f64 = 4.0;

impl RfSearch<'_, '_> {
    /// Refuses at once a search that cannot fit the budget even with
    /// pruning. The plain upper bound (every read from every same-location
    /// write, every coherence permutation) decides most tests; when it
    /// exceeds the budget, the size of the *pruned* search tree is
    /// estimated by Knuth's method: random walks from the root, each
    /// multiplying the number of children the pruning checks let through,
    /// averaged over [`PROBES`] walks (an unbiased estimate of the number of
    /// nodes). Only a clear excess ([`PROBE_MARGIN`] times the budget) is
    /// refused, with the figure; anything nearer runs under the budget.
    pub(super) fn fail_fast(&mut self) -> Result<(), CheckError> {
        let skel = self.skel;
        let mut log_bound = 0f64;
        for &r in &skel.reads {
            let loc = skel.events[r].loc.unwrap_or(0);
            log_bound += ((1 + skel.writes_by_loc[loc].len()) as f64).log10();
        }
        for (l, w) in skel.writes_by_loc.iter().enumerate() {
            log_bound += self.co_orders(l, w.len()).log10();
        }
        let budget = self.opts.max_candidates as f64;
        let weight = self.weight() as f64;
        // Without pruning the search keeps its plain limits (the reference
        // for `--no-prune` comparisons). With a deadline, smaller searches
        // are sized too, against the time they would take.
        let worth = log_bound > (budget / weight).log10()
            || self.deadline.is_some() && log_bound > PROBE_FROM_LOG10;
        if !worth {
            return Ok(());
        }
        self.settle();
        if !self.pruner.enabled {
            return Ok(());
        }
        let mut rng: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut total = 0f64;
        let mut least = f64::INFINITY;
        let mut truncated = false;
        let evals_before = self.probe_evals;
        let started = Instant::now();
        for _ in 0..PROBES {
            let walk = self.probe(&mut rng, &mut truncated);
            total += walk;
            least = least.min(walk);
        }
        let per_node =
            started.elapsed().as_secs_f64() / (self.probe_evals - evals_before).max(1) as f64;
        let estimate = total / PROBES as f64;
        let bound = 10f64.powf(log_bound);
        // Refused: a mean far over the budget, or every walk over
        // PROBE_SURE_MARGIN times it (each walk is an unbiased estimate,
        // so by Markov's inequality a tree within the budget gives that
        // with probability at most (1/PROBE_SURE_MARGIN)^PROBES).
        if estimate * weight > budget * PROBE_MARGIN || least * weight > budget * PROBE_SURE_MARGIN
        {
            let about = if truncated { "at least" } else { "about" };
            // The budget comes first: the server clips a line at 240
            // characters.
            return Err(CheckError::Limit(format!(
                "the search would judge {about} {estimate:.1e} partial candidates even with \
                 pruning, {} times the budget of {} (raise --max-candidates; estimated from \
                 {PROBES} random probes of the search tree, the smallest {least:.1e}; at most \
                 {bound:.1e} reads-from and coherence choices)",
                times(estimate * weight / budget),
                self.opts.max_candidates
            )));
        }
        if let Some(limit) = self.opts.timeout {
            let seconds = estimate * per_node;
            if seconds > limit.as_secs_f64() * PROBE_MARGIN {
                return Err(CheckError::Limit(format!(
                    "the search would take about {seconds:.0} s even with pruning \
                     ({estimate:.1e} partial candidates estimated from {PROBES} random probes, \
                     {:.0} µs each), over --timeout {} s",
                    per_node * 1e6,
                    limit.as_secs_f64()
                )));
            }
        }
        Ok(())
    }

    /// One random walk down the (pruned) search tree: the estimated number
    /// of its nodes (1 + d1 + d1·d2 + ..., di the children at depth i).
    fn probe(&mut self, rng: &mut u64, truncated: &mut bool) -> f64 {
        let skel = self.skel;
        let mut next = || next_random(rng);
        let none = Relation::new(skel.len());
        let base_co = self.base_co.clone();
        let (mut nodes, mut width) = (1f64, 1f64);
        let mut assigned = Vec::new();
        let mut complete = true;
        // Past the deadline a probe stops where it is (its caller's next
        // look at the clock ends the search).
        let past = |d: Option<Instant>| d.is_some_and(|d| Instant::now() > d);
        // A walk past ten times the budget has made its point: its estimate
        // can only grow (each level adds at least one node), so it stops
        // there and counts as over every refusal margin.
        let enough = self.opts.max_candidates as f64 * PROBE_MARGIN / self.weight() as f64;
        for &r in &skel.reads {
            if nodes > enough {
                *truncated = true;
                complete = false;
                break;
            }
            if !self.constraints_possible() || past(self.deadline) {
                complete = false;
                break;
            }
            let loc = skel.events[r].loc.unwrap_or(0);
            let mut sources = vec![skel.init[loc]];
            sources.extend(skel.writes_by_loc[loc].iter().copied());
            let mut alive = Vec::new();
            for w in sources {
                self.values.set_rf(r, w);
                self.rf.add(w, r);
                let cyclic = self.values.value(r) == Eval::Cyclic;
                if !(cyclic || self.pruner.enabled && self.partial_fails(&base_co, &none, false)) {
                    alive.push(w);
                }
                self.rf.remove(w, r);
            }
            self.values.set_rf(r, usize::MAX);
            if alive.is_empty() {
                complete = false;
                break;
            }
            width *= alive.len() as f64;
            nodes += width;
            let w = alive[(next() % alive.len() as u64) as usize];
            self.values.set_rf(r, w);
            self.rf.add(w, r);
            assigned.push((r, w));
        }
        // The barrier matching once every read has a source (when a value
        // is missing, judge coherence prefixes as partial in rf too).
        let bar = if complete {
            barrier::instances(
                skel,
                &self.values,
                &mut self.bar_memo,
                self.deadline,
                self.opts.timeout.map(|t| (self.start, t)),
            )
            .ok()
            .and_then(|b| b.matchings.first().cloned())
        } else {
            None
        };
        if complete {
            let rf_complete = bar.is_some();
            let bar = bar.unwrap_or_else(|| none.clone());
            let mut co = base_co.clone();
            let mut order = skel.writes_by_loc.clone();
            'locs: for loc in (0..order.len()).rev() {
                let len = order[loc].len();
                for k in 0..len.saturating_sub(1) {
                    if nodes > enough {
                        *truncated = true;
                        break 'locs;
                    }
                    if past(self.deadline) {
                        break 'locs;
                    }
                    let mut alive = Vec::new();
                    for i in k..len {
                        order[loc].swap(k, i);
                        let e = order[loc][k];
                        for &b in &order[loc][k + 1..] {
                            co.add(e, b);
                        }
                        if !(self.pruner.enabled && self.partial_fails(&co, &bar, rf_complete)) {
                            alive.push(i);
                        }
                        for &b in &order[loc][k + 1..] {
                            co.remove(e, b);
                        }
                        order[loc].swap(k, i);
                    }
                    if alive.is_empty() {
                        break 'locs;
                    }
                    width *= alive.len() as f64;
                    nodes += width;
                    let i = alive[(next() % alive.len() as u64) as usize];
                    order[loc].swap(k, i);
                    let e = order[loc][k];
                    for &b in &order[loc][k + 1..] {
                        co.add(e, b);
                    }
                }
            }
        }
        for (r, w) in assigned {
            self.values.set_rf(r, usize::MAX);
            self.rf.remove(w, r);
        }
        nodes
    }
}
