//! A shape's fillings in lattice order, and the lattice cut
//! (docs/synthesis.md, "Cuts").
//!
//! A shape's slots are filled with vocabulary entries of their kind. Each
//! slot's entries are listed strongest first (by height in the
//! vocabulary's `weaker` lattice), so the fillings, listed with the last
//! slot fastest, come after every filling one step stronger than them:
//! when a filling is reached, what its upper neighbours forbid is known.
//! Models are monotone in the lattice (a stronger instruction never allows
//! more), so an outcome one upper neighbour allows is allowed, and only
//! the outcomes every upper neighbour may forbid need a look.

use super::vocab::Vocab;
use crate::mapping::enumerate::Thread;
use std::collections::HashMap;

/// A shape's fillings, strongest entries first in each slot.
pub struct Fillings {
    /// Each slot (thread, operation), threads then program order.
    pub slots: Vec<(usize, usize)>,
    /// Per slot, its entries, strongest first.
    pub per: Vec<Vec<usize>>,
    /// Per slot and entry, its position in the vocabulary's own order of
    /// the slot's entries (the order programs are numbered in); empty for
    /// a slot with one entry (as `ups` and `down`).
    orig: Vec<Vec<usize>>,
    /// Per slot and entry, the positions (all smaller) of the entries one
    /// step stronger than it that the slot has.
    ups: Vec<Vec<Vec<usize>>>,
    /// Per slot and entry, whether the slot has an entry one step weaker.
    down: Vec<Vec<bool>>,
    /// Per slot, the step of a filling's number when the slot's pick moves
    /// by one (the last slot steps by one).
    weights: Vec<usize>,
    /// How many fillings there are.
    pub total: usize,
    /// How many there are with every entry of each slot's kind (those
    /// `keep` leaves out included).
    pub all: usize,
}

impl Fillings {
    /// The fillings of `shape` whose entries pass `keep(thread, entry)`.
    pub fn new(vocab: &Vocab, shape: &[Thread], keep: impl Fn(usize, usize) -> bool) -> Fillings {
        let slots: Vec<(usize, usize)> = shape
            .iter()
            .enumerate()
            .flat_map(|(t, th)| (0..th.ops.len()).map(move |i| (t, i)))
            .collect();
        let heights = &vocab.heights;
        let mut all = 1;
        let mut per = Vec::with_capacity(slots.len());
        let mut orig = Vec::with_capacity(slots.len());
        let mut ups = Vec::with_capacity(slots.len());
        for &(t, i) in &slots {
            let mut own = vocab.of_kind(shape[t].ops[i].kind);
            all *= own.len();
            own.retain(|&e| keep(t, e));
            if own.len() <= 1 {
                // Nothing to order: no neighbours, rank 0 (and no
                // allocations, for vocabularies with one entry per kind).
                per.push(own);
                orig.push(Vec::new());
                ups.push(Vec::new());
                continue;
            }
            let mut order: Vec<usize> = (0..own.len()).collect();
            // Strongest first; ties keep the vocabulary's order.
            order.sort_by_key(|&k| std::cmp::Reverse(heights[own[k]]));
            let sorted: Vec<usize> = order.iter().map(|&k| own[k]).collect();
            // One step above is strictly higher, so listed before.
            let up: Vec<Vec<usize>> = sorted
                .iter()
                .enumerate()
                .map(|(at, &e)| {
                    (0..at)
                        .filter(|&k| vocab.entries[sorted[k]].weaker.contains(&e))
                        .collect()
                })
                .collect();
            per.push(sorted);
            orig.push(order);
            ups.push(up);
        }
        let mut weights = vec![1; slots.len()];
        for s in (0..slots.len().saturating_sub(1)).rev() {
            weights[s] = weights[s + 1] * per[s + 1].len();
        }
        let total = per.iter().map(Vec::len).product();
        // Empty for a slot with no neighbours (no allocation).
        let mut down: Vec<Vec<bool>> = ups.iter().map(|up| vec![false; up.len()]).collect();
        for (d, up) in down.iter_mut().zip(&ups) {
            for &u in up.iter().flatten() {
                d[u] = true;
            }
        }
        Fillings {
            slots,
            per,
            orig,
            ups,
            down,
            weights,
            total,
            all,
        }
    }

    /// The filling's number in the vocabulary's own order of each slot's
    /// entries (last slot fastest): the order programs are numbered in.
    pub fn original_rank(&self, pick: &[usize]) -> usize {
        pick.iter()
            .enumerate()
            .map(|(s, &k)| self.orig[s].get(k).copied().unwrap_or(0) * self.weights[s])
            .sum()
    }

    /// Whether some filling is one step weaker than the one with picks
    /// `pick` (only then is what it may forbid needed).
    pub fn has_lower(&self, pick: &[usize]) -> bool {
        pick.iter()
            .zip(&self.down)
            .any(|(&k, d)| d.get(k).copied().unwrap_or(false))
    }

    /// The fillings one step stronger than the filling numbered `idx`
    /// with picks `pick` (all numbered below `idx`), each with the slot it
    /// differs in and its pick there: (slot, pick, number).
    pub fn upper_slots<'a>(
        &'a self,
        idx: usize,
        pick: &'a [usize],
    ) -> impl Iterator<Item = (usize, usize, usize)> + 'a {
        (0..pick.len()).flat_map(move |s| {
            let k = pick[s];
            let w = self.weights[s];
            self.ups[s]
                .get(k)
                .into_iter()
                .flatten()
                .map(move |&u| (s, u, idx - (k - u) * w))
        })
    }
}

/// Outcome sets of fillings by number: what a filling may forbid (under
/// some judge), and, for synthesis, what is known of each outcome's
/// removals ([`RemovalFacts`]). A filling with no outcome is not stored.
///
/// Fillings are numbered densely and looked up near the one at hand, so
/// each number indexes a vector (its entry's place in `known`, plus one)
/// instead of a hash map, whose probes missed the cache in a third of the
/// filling loop's own time.
#[derive(Default)]
pub struct MayForbid {
    /// Per filling number, its entry's place in `known` plus one (0: not
    /// stored; [`OVERFLOW`]: in `overflow`).
    at: Vec<u32>,
    known: Vec<Known>,
    /// Entries past the four billionth (never met: they would not fit in
    /// memory), kept by number.
    overflow: HashMap<usize, Known, crate::fast_hash::FastHash>,
    /// The fillings stored, as a bit set by number: a filling with an
    /// upper neighbour not stored is settled without a lookup.
    stored: Vec<u64>,
}

/// The place of an entry kept in [`MayForbid`]'s `overflow`.
const OVERFLOW: u32 = u32::MAX;

/// What is known of one filling: the outcomes it may forbid, and the
/// facts of those outcomes' removals when some is known.
type Known = (Box<[u64]>, Option<Box<[RemovalFacts]>>);

/// No removal is known to keep the outcome forbidden.
pub const NO_BLOCKER: u8 = u8::MAX;

/// What is known, for one outcome of one filling, of its removals (each
/// operation's, numbered as the filling's slots): one that keeps the
/// outcome forbidden (`blocker`, [`NO_BLOCKER`] if none is known), and
/// those known to allow it (`cleared`, a bit per removal below
/// [`RemovalFacts::TRACKED`]). A removal that allows an outcome in a
/// filling allows it one step weaker in any slot: in its own slot the
/// removal leaves the same program, in another a program one step weaker,
/// which allows what the stronger one allows (monotonicity, as for the
/// lattice cut).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RemovalFacts {
    pub blocker: u8,
    pub cleared: u16,
}

impl RemovalFacts {
    /// Nothing known.
    pub const NONE: RemovalFacts = RemovalFacts {
        blocker: NO_BLOCKER,
        cleared: 0,
    };
    /// Removals numbered below this may be recorded as cleared.
    pub const TRACKED: usize = 16;

    /// Whether removal `k` is known to allow the outcome.
    pub fn is_cleared(&self, k: usize) -> bool {
        k < Self::TRACKED && self.cleared & (1 << k) != 0
    }

    /// Records that removal `k` allows the outcome (when tracked).
    pub fn clear(&mut self, k: usize) {
        if k < Self::TRACKED {
            self.cleared |= 1 << k;
        }
    }
}

impl MayForbid {
    /// Whether filling `idx` is stored.
    fn is_stored(&self, idx: usize) -> bool {
        self.stored
            .get(idx / 64)
            .is_some_and(|w| w & (1 << (idx % 64)) != 0)
    }

    /// What every upper neighbour may forbid: `None` when the filling has
    /// no upper neighbour (anything may be forbidden), an empty set as
    /// soon as one neighbour forbids nothing.
    pub fn common(&self, upper: impl Iterator<Item = usize> + Clone) -> Option<Box<[u64]>> {
        let mut any_upper = false;
        for u in upper.clone() {
            if !self.is_stored(u) {
                return Some(Box::default());
            }
            any_upper = true;
        }
        if !any_upper {
            return None;
        }
        let mut out: Option<Box<[u64]>> = None;
        for u in upper {
            let Some((set, _)) = self.get(u) else {
                return Some(Box::default());
            };
            let Some(o) = out.as_mut() else {
                out = Some(set.clone());
                continue;
            };
            let mut any = false;
            for (o, s) in o.iter_mut().zip(set.iter()) {
                *o &= s;
                any |= *o != 0;
            }
            if !any {
                return Some(Box::default());
            }
        }
        out
    }

    /// Records what filling `idx` may forbid, and per outcome what is
    /// known of its removals (`facts`, kept when something is).
    pub fn set_with(&mut self, idx: usize, set: Box<[u64]>, facts: Option<Box<[RemovalFacts]>>) {
        if set.iter().any(|&w| w != 0) {
            let facts = facts.filter(|f| f.iter().any(|&x| x != RemovalFacts::NONE));
            if self.at.len() <= idx {
                self.at.resize(idx + 1, 0);
            }
            match u32::try_from(self.known.len() + 1) {
                Ok(k) if k != OVERFLOW => {
                    self.known.push((set, facts));
                    self.at[idx] = k;
                }
                _ => {
                    self.overflow.insert(idx, (set, facts));
                    self.at[idx] = OVERFLOW;
                }
            }
            if self.stored.len() <= idx / 64 {
                self.stored.resize(idx / 64 + 1, 0);
            }
            self.stored[idx / 64] |= 1 << (idx % 64);
        }
    }

    /// Per outcome, what is known of its removals in filling `idx`, when
    /// something is.
    pub fn facts(&self, idx: usize) -> Option<&[RemovalFacts]> {
        self.get(idx).and_then(|(_, f)| f.as_deref())
    }

    /// What is kept of filling `idx`, if it is stored.
    fn get(&self, idx: usize) -> Option<&Known> {
        match self.at.get(idx).copied().unwrap_or(0) {
            0 => None,
            OVERFLOW => self.overflow.get(&idx),
            k => self.known.get(k as usize - 1),
        }
    }
}

/// A set of `n` outcomes, all in.
pub fn full(n: usize) -> Box<[u64]> {
    let mut v = vec![u64::MAX; n.div_ceil(64)].into_boxed_slice();
    if !n.is_multiple_of(64)
        && let Some(last) = v.last_mut()
    {
        *last = (1u64 << (n % 64)) - 1;
    }
    v
}

/// Whether outcome `i` is in `set` (an empty set holds none).
pub fn has(set: &[u64], i: usize) -> bool {
    set.get(i / 64).is_some_and(|w| w & (1 << (i % 64)) != 0)
}

/// Takes outcome `i` out of `set`.
pub fn remove(set: &mut [u64], i: usize) {
    if let Some(w) = set.get_mut(i / 64) {
        *w &= !(1 << (i % 64));
    }
}

/// Whether `set` holds some outcome.
pub fn any(set: &[u64]) -> bool {
    set.iter().any(|&w| w != 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mapping::enumerate::{Op, OpKind, Place};

    fn op(kind: OpKind, loc: u8) -> Op {
        Op {
            kind,
            order: 0,
            scope: 0,
            loc,
            remote: false,
        }
    }

    /// Message passing over the `ptx` vocabulary in one CTA: every filling
    /// comes after each filling one step stronger, the upper neighbours are
    /// exactly the one-step `weaker` pairs, and the original ranks number
    /// the fillings one to one.
    #[test]
    fn fillings_come_after_their_upper_neighbours() {
        let v = super::super::vocab::load("ptx").unwrap();
        let place = Place::Gpu { dev: 0, wg: 0 };
        let shape = vec![
            Thread {
                place,
                ops: vec![op(OpKind::Store, 0), op(OpKind::Store, 1)],
            },
            Thread {
                place,
                ops: vec![op(OpKind::Load, 1), op(OpKind::Load, 0)],
            },
        ];
        let f = Fillings::new(&v, &shape, |_, _| true);
        let stores = v.of_kind(OpKind::Store).len();
        let loads = v.of_kind(OpKind::Load).len();
        assert_eq!(f.total, stores * stores * loads * loads);
        let mut pick = vec![0; f.slots.len()];
        let mut ranks = vec![false; f.total];
        let mut idx = 0;
        let mut with_upper = 0;
        loop {
            let upper: Vec<usize> = f.upper_slots(idx, &pick).map(|u| u.2).collect();
            // By hand: the neighbours differ in one slot by one step.
            let mut expected = 0;
            for (per, &k) in f.per.iter().zip(&pick) {
                let e = per[k];
                expected += per
                    .iter()
                    .filter(|&&u| v.entries[u].weaker.contains(&e))
                    .count();
            }
            assert_eq!(upper.len(), expected, "filling {idx}");
            assert!(upper.iter().all(|&u| u < idx));
            with_upper += usize::from(!upper.is_empty());
            let r = f.original_rank(&pick);
            assert!(!std::mem::replace(&mut ranks[r], true), "rank {r} twice");
            if !super::super::program::next_pick(&mut pick, |s| f.per[s].len()) {
                break;
            }
            idx += 1;
        }
        assert_eq!(idx + 1, f.total);
        assert!(ranks.iter().all(|&r| r));
        // Only fillings of the slots' strongest entries have none.
        assert!(with_upper > 0 && with_upper < f.total);
    }

    /// What a filling may forbid: the intersection over its upper
    /// neighbours; none stored means nothing; no neighbour means anything.
    #[test]
    fn common_is_the_intersection_of_the_neighbours() {
        let mut m = MayForbid::default();
        let mut a = full(70);
        remove(&mut a, 3);
        let mut b = full(70);
        remove(&mut b, 69);
        m.set_with(0, a, None);
        m.set_with(1, b, None);
        m.set_with(2, vec![0, 0].into_boxed_slice(), None);
        assert!(m.common(std::iter::empty()).is_none());
        let c = m.common([0, 1].into_iter()).unwrap();
        assert!(!has(&c, 3) && !has(&c, 69) && has(&c, 0) && has(&c, 68));
        assert!(!has(&c, 70), "outside the 70 outcomes");
        assert!(!any(&m.common([0, 2].into_iter()).unwrap()));
        assert!(!any(&m.common([1, 7].into_iter()).unwrap()));
    }

    /// Removal facts are kept with a filling's set only when some outcome
    /// has one, and only for fillings that may forbid something.
    #[test]
    fn removal_facts_are_kept_with_their_set() {
        let f = |blocker: u8, cleared: u16| RemovalFacts { blocker, cleared };
        let none = RemovalFacts::NONE;
        let mut m = MayForbid::default();
        let b = |x: &[RemovalFacts]| Some(x.to_vec().into_boxed_slice());
        m.set_with(0, full(3), b(&[none, f(2, 0), none]));
        m.set_with(1, full(3), b(&[none; 3]));
        m.set_with(2, vec![0].into_boxed_slice(), b(&[f(1, 0); 3]));
        m.set_with(3, full(3), b(&[none, none, f(NO_BLOCKER, 0b101)]));
        assert_eq!(m.facts(0), Some(&[none, f(2, 0), none][..]));
        assert_eq!(m.facts(1), None);
        assert_eq!(m.facts(2), None);
        let kept = m.facts(3).unwrap()[2];
        assert!(kept.is_cleared(0) && !kept.is_cleared(1) && kept.is_cleared(2));
        assert!(has(&m.common([0, 1].into_iter()).unwrap(), 2));
    }

    /// Removals past the tracked ones are never recorded as cleared.
    #[test]
    fn only_tracked_removals_are_cleared() {
        let mut x = RemovalFacts::NONE;
        x.clear(3);
        x.clear(RemovalFacts::TRACKED);
        x.clear(40);
        assert!(x.is_cleared(3));
        assert!(!x.is_cleared(RemovalFacts::TRACKED) && !x.is_cleared(40));
        assert_eq!(x.cleared, 1 << 3);
    }
}
