//! The search for complete pomsets of one combination of thread pomsets:
//! reads-from choices, then the dependency order (c6), the synchronisation
//! order (s7a, rmw, c7a to a fixpoint, c7b choices), the per-location order
//! (s8a, c8a, M8a, rmw, the final-value writes of A8) and the c8b choices.
//! Every order is the least one the rules force; only c7b and c8b branch.

use super::orders::{Actions, Order, close_atomic, cyclic};
use super::thread::Kind;

/// Why a candidate is not a complete pomset: the condition and its events.
#[derive(Clone, Debug)]
pub struct Violation {
    pub check: String,
    pub path: Vec<(usize, usize, String)>,
}

/// One combination of thread pomsets, assembled.
pub struct Combo<'a> {
    pub act: Actions<'a>,
    /// Dependency edges chosen for preconditions (s3b's ↓e).
    pub dep: Order,
    /// s7a edges (init included) and rmw (M9b).
    pub sync: Order,
    /// s8a edges (init included) and rmw (M9b).
    pub loc: Order,
    pub rmw: Vec<(usize, usize)>,
}

impl Combo<'_> {
    /// The dependency order with `rf` (c6, M6): a violation if cyclic.
    pub fn check_dep(&self, rf: &[(usize, usize)]) -> Result<(), Violation> {
        let mut dep = self.dep.clone();
        for &(d, e) in rf {
            dep.add(d, e, "rf");
        }
        close_atomic(&mut dep, &self.act, &self.rmw);
        match dep.cycle() {
            Some(path) => Err(Violation {
                check: "c6/M6: dependency order (preconditions' ↓e and rf) is cyclic".into(),
                path,
            }),
            None => Ok(()),
        }
    }

    /// The pairs c7a synchronises through: rf pairs that strongly overlap
    /// (A3), extended along `rmw; rf` with the C7a''' variant.
    fn observed(&self, rf: &[(usize, usize)]) -> Vec<(usize, usize)> {
        let strong = |d: usize, e: usize| self.act.reading.literal_c7a || self.act.so(d, e);
        let mut obs: Vec<(usize, usize)> =
            rf.iter().copied().filter(|&(d, e)| strong(d, e)).collect();
        if self.act.reading.rmw_chains {
            let mut k = 0;
            while k < obs.len() {
                let (d, e) = obs[k];
                for &(r, w) in &self.rmw {
                    if r != e {
                        continue;
                    }
                    for &(w2, e2) in rf {
                        if w2 == w && strong(w2, e2) && !obs.contains(&(d, e2)) {
                            obs.push((d, e2));
                        }
                    }
                }
                k += 1;
            }
        }
        obs
    }

    /// c7a and M9c on `o` to a fixpoint; false when `o` became cyclic.
    fn saturate_sync(&self, o: &mut Order, rf: &[(usize, usize)]) -> bool {
        let n = self.act.evs.len();
        let obs = self.observed(rf);
        loop {
            close_atomic(o, &self.act, &self.rmw);
            if cyclic(o) {
                return false;
            }
            let mut changed = false;
            for &(d, e) in &obs {
                let pre: Vec<usize> = (0..n).filter(|&x| o.le(x, d)).collect();
                // e' in e's thread (docs/pomsets.md, "c7a'"), unless the
                // variant lets it range over everything after e.
                let same = |y: usize| {
                    self.act.reading.c7a_any_successor
                        || self.act.evs[y].thread == self.act.evs[e].thread
                };
                let post: Vec<usize> = (0..n).filter(|&y| o.le(e, y) && same(y)).collect();
                for &x in &pre {
                    for &y in &post {
                        if x != y && !o.lt(x, y) && self.act.sm(x, y) {
                            o.add(x, y, "c7a");
                            changed = true;
                        }
                    }
                }
            }
            if !changed {
                return true;
            }
        }
    }

    /// Every least synchronisation order for `rf` (one per c7b choice), or
    /// the violation of the first choice that failed.
    pub fn syncs(&self, rf: &[(usize, usize)]) -> Result<Vec<Order>, Violation> {
        let mut sync = self.sync.clone();
        let mut out = Vec::new();
        let mut last = None;
        self.sync_branch(&mut sync, rf, &mut out, &mut last);
        if out.is_empty() {
            Err(last.unwrap_or(Violation {
                check: "M7: synchronisation order is cyclic".into(),
                path: Vec::new(),
            }))
        } else {
            Ok(out)
        }
    }

    fn sync_branch(
        &self,
        o: &mut Order,
        rf: &[(usize, usize)],
        out: &mut Vec<Order>,
        last: &mut Option<Violation>,
    ) {
        if !self.saturate_sync(o, rf) {
            *last = Some(Violation {
                check: "M7: synchronisation order (s7a, c7a, c7b) is cyclic".into(),
                path: o.cycle().unwrap_or_default(),
            });
            return;
        }
        let n = self.act.evs.len();
        let pair = (0..n)
            .flat_map(|a| (a + 1..n).map(move |b| (a, b)))
            .find(|&(a, b)| self.act.sf(a, b) && !o.lt(a, b) && !o.lt(b, a));
        match pair {
            None => out.push(o.clone()),
            Some((a, b)) => {
                for (x, y) in [(a, b), (b, a)] {
                    let mut c = o.clone();
                    c.add(x, y, "c7b");
                    self.sync_branch(&mut c, rf, out, last);
                }
            }
        }
    }

    /// The per-location order for `rf` and `sync` (s8a, c8a, M8a, rmw) with
    /// the final-value edges `finals` (each `(c, f)`: write `c` before the
    /// last write `f`), then a c8b choice for every read and blocking write.
    pub fn check_loc(
        &self,
        rf: &[(usize, usize)],
        sync: &Order,
        finals: &[(usize, usize)],
    ) -> Result<(), Violation> {
        let n = self.act.evs.len();
        let mut loc = self.loc.clone();
        for &(d, e) in rf {
            if self.act.reading.literal_c8a || self.act.so(d, e) {
                loc.add(d, e, "c8a");
            }
        }
        for a in 0..n {
            for b in 0..n {
                if a != b && sync.lt(a, b) && self.act.overlaps(a, b) {
                    loc.add(a, b, "M8a");
                }
            }
        }
        for &(c, f) in finals {
            loc.add(c, f, "final");
        }
        close_atomic(&mut loc, &self.act, &self.rmw);
        if let Some(path) = loc.cycle() {
            return Err(Violation {
                check: "M8: per-location order (s8a, c8a, M8a, final values) is cyclic".into(),
                path,
            });
        }
        let mut triples = Vec::new();
        for &(d, e) in rf {
            for c in 0..n {
                let ev = &self.act.evs[c];
                if c != d && ev.kind == Kind::W && ev.loc == self.act.evs[e].loc {
                    triples.push((d, e, c));
                }
            }
        }
        // c8a for a pair that does not strongly overlap: weak fulfilment
        // d ⊑̃ e (L.341-343), i.e. the read is never ⊑-before its source.
        let mut negs: Vec<Vec<(usize, usize)>> = Vec::new();
        if !self.act.reading.literal_c8a {
            for &(d, e) in rf {
                if !self.act.so(d, e) {
                    if loc.lt(e, d) {
                        let mut path = vec![(d, e, "rf".to_string())];
                        path.push((e, d, "⊑".to_string()));
                        return Err(Violation {
                            check: "c8a: a weak read is ⊑-before the write it reads (weak fulfilment d ⊑̃ e)"
                                .to_string(),
                            path,
                        });
                    }
                    negs.push(vec![(e, d)]);
                }
            }
        }
        let mut last = None;
        if self.c8b(&loc, &triples, 0, &mut negs, &mut last) {
            Ok(())
        } else {
            Err(last.unwrap_or(Violation {
                check: "c8b".into(),
                path: Vec::new(),
            }))
        }
    }

    /// Depth-first over the c8b choices: for `d rf e` and `c` blocking `e`,
    /// either `c ⊑̃ d` (not `d ⊑ c`; `c ⊑ d` if they strongly overlap) or
    /// `e ⊑̃ c` (not `c ⊑ e`; `e ⊑ c` if strongly overlapping). `negs` are
    /// the pairs that must stay unordered (each a disjunction).
    fn c8b(
        &self,
        loc: &Order,
        triples: &[(usize, usize, usize)],
        i: usize,
        negs: &mut Vec<Vec<(usize, usize)>>,
        last: &mut Option<Violation>,
    ) -> bool {
        let Some(&(d, e, c)) = triples.get(i) else {
            return true;
        };
        let a_pos = self.act.so(c, d).then_some((c, d));
        let b_pos = self.act.so(e, c).then_some((e, c));
        let fail = |what: &str, loc: &Order| Violation {
            check: format!(
                "c8b: a write to the location is neither ⊑̃-before the read's source nor ⊑̃-after the read ({what}; the rf edge, then the write)"
            ),
            path: {
                let label = |x: usize, y: usize, other: &str| {
                    if loc.lt(x, y) { "⊑" } else { other }.to_string()
                };
                vec![
                    (d, e, "rf".to_string()),
                    (d, c, label(d, c, "same location")),
                    (c, e, label(c, e, "blocks")),
                ]
            },
        };
        let needs = |p: Option<(usize, usize)>| p.filter(|&(x, y)| !loc.lt(x, y));
        if needs(a_pos).is_none() && needs(b_pos).is_none() {
            negs.push(vec![(d, c), (c, e)]);
            let ok = holds(loc, negs) && self.c8b(loc, triples, i + 1, negs, last);
            if !ok && last.is_none() {
                *last = Some(fail("it lies between them", loc));
            }
            negs.pop();
            return ok;
        }
        for (pos, neg) in [(a_pos, (d, c)), (b_pos, (c, e))] {
            let mut o = loc.clone();
            if let Some((x, y)) = needs(pos) {
                o.add(x, y, "c8b");
                close_atomic(&mut o, &self.act, &self.rmw);
                if cyclic(&o) {
                    continue;
                }
            }
            negs.push(vec![neg]);
            let ok = holds(&o, negs) && self.c8b(&o, triples, i + 1, negs, last);
            negs.pop();
            if ok {
                return true;
            }
        }
        if last.is_none() {
            *last = Some(fail("both placements contradict ⊑", loc));
        }
        false
    }
}

/// Whether each disjunction of `negs` has a pair unordered in `o`.
fn holds(o: &Order, negs: &[Vec<(usize, usize)>]) -> bool {
    negs.iter().all(|alt| alt.iter().any(|&(x, y)| !o.lt(x, y)))
}
