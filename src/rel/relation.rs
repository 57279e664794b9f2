//! Binary relations over events `0..n` as boolean matrices of bit rows.
//!
//! Row `i` holds the successors of `i`, in `words_per_row = ceil(n/64)`
//! words. When `n <= 64` every row is a single `u64` and the hot loops
//! (composition, closure, acyclicity) take a dedicated one-word path.

use super::bitset::{BitSet, Bits, last_word_mask, words_for};
use std::fmt;
use std::ops::ControlFlow;

/// A binary relation over a universe of `n` events.
#[derive(PartialEq, Eq, Hash)]
pub struct Relation {
    n: usize,
    wpr: usize,
    bits: Vec<u64>,
}

impl Clone for Relation {
    fn clone(&self) -> Self {
        Relation {
            n: self.n,
            wpr: self.wpr,
            bits: super::pool::copy_of(&self.bits),
        }
    }
}

impl Drop for Relation {
    fn drop(&mut self) {
        super::pool::recycle(std::mem::take(&mut self.bits));
    }
}

impl Relation {
    /// The empty relation over `n` events.
    pub fn empty(n: usize) -> Self {
        let wpr = words_for(n);
        Relation {
            n,
            wpr,
            bits: super::pool::zeroed(n * wpr),
        }
    }

    /// The empty relation over `n` events (same as [`Relation::empty`]).
    pub fn new(n: usize) -> Self {
        Self::empty(n)
    }

    /// The identity relation over all `n` events.
    pub fn identity(n: usize) -> Self {
        let mut r = Self::empty(n);
        for i in 0..n {
            r.add(i, i);
        }
        r
    }

    /// The relation of all pairs over `n` events.
    pub fn full(n: usize) -> Self {
        Self::cartesian(&BitSet::full(n), &BitSet::full(n))
    }

    /// `a × b`.
    pub fn cartesian(a: &BitSet, b: &BitSet) -> Self {
        assert_eq!(a.universe(), b.universe(), "sets over different universes");
        let mut r = Self::empty(a.universe());
        for i in a.iter() {
            r.row_mut(i).copy_from_slice(b.words());
        }
        r
    }

    /// The identity restricted to `s` (cat's `[S]`).
    pub fn identity_on(s: &BitSet) -> Self {
        let mut r = Self::empty(s.universe());
        for i in s.iter() {
            r.add(i, i);
        }
        r
    }

    /// The relation holding exactly the given pairs.
    pub fn from_pairs(n: usize, pairs: impl IntoIterator<Item = (usize, usize)>) -> Self {
        let mut r = Self::empty(n);
        for (i, j) in pairs {
            r.add(i, j);
        }
        r
    }

    /// Number of events in the universe.
    #[inline]
    pub fn universe(&self) -> usize {
        self.n
    }

    /// Words per row (`ceil(n/64)`).
    #[inline]
    pub fn words_per_row(&self) -> usize {
        self.wpr
    }

    /// The successors of `i` as raw words.
    #[inline]
    pub fn row(&self, i: usize) -> &[u64] {
        &self.bits[i * self.wpr..(i + 1) * self.wpr]
    }

    #[inline]
    fn row_mut(&mut self, i: usize) -> &mut [u64] {
        &mut self.bits[i * self.wpr..(i + 1) * self.wpr]
    }

    /// The successors of `i` as a set.
    pub fn successors(&self, i: usize) -> BitSet {
        BitSet::from_words(self.n, self.row(i).to_vec())
    }

    #[inline]
    fn check_pair(&self, i: usize, j: usize) {
        assert!(
            i < self.n && j < self.n,
            "pair ({i},{j}) out of universe of size {}",
            self.n
        );
    }

    #[inline]
    fn check(&self, other: &Relation) {
        assert_eq!(self.n, other.n, "relations over different universes");
    }

    /// Adds the pair `(i, j)`; returns true if it was new.
    #[inline]
    pub fn add(&mut self, i: usize, j: usize) -> bool {
        self.check_pair(i, j);
        let w = &mut self.bits[i * self.wpr + j / 64];
        let bit = 1u64 << (j % 64);
        let fresh = *w & bit == 0;
        *w |= bit;
        fresh
    }

    /// Removes the pair `(i, j)`; returns true if it was present.
    #[inline]
    pub fn remove(&mut self, i: usize, j: usize) -> bool {
        self.check_pair(i, j);
        let w = &mut self.bits[i * self.wpr + j / 64];
        let bit = 1u64 << (j % 64);
        let was = *w & bit != 0;
        *w &= !bit;
        was
    }

    /// Whether `(i, j)` is in the relation (false when out of range).
    #[inline]
    pub fn contains(&self, i: usize, j: usize) -> bool {
        i < self.n && j < self.n && self.bits[i * self.wpr + j / 64] & (1u64 << (j % 64)) != 0
    }

    /// Number of pairs.
    pub fn count(&self) -> usize {
        self.bits.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// Whether the relation has no pair.
    pub fn is_empty(&self) -> bool {
        self.bits.iter().all(|&w| w == 0)
    }

    /// All pairs, ordered by source then target.
    pub fn pairs(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        (0..self.n).flat_map(move |i| Bits::new(self.row(i)).map(move |j| (i, j)))
    }

    /// Whether every pair of `self` is in `other`.
    pub fn is_subset(&self, other: &Relation) -> bool {
        self.check(other);
        self.bits.iter().zip(&other.bits).all(|(a, b)| a & !b == 0)
    }

    /// Removes every pair.
    pub fn clear(&mut self) {
        self.bits.iter_mut().for_each(|w| *w = 0);
    }

    // ----- boolean algebra -------------------------------------------------

    /// `self := self ∪ other`.
    pub fn union_with(&mut self, other: &Relation) {
        self.check(other);
        for (a, b) in self.bits.iter_mut().zip(&other.bits) {
            *a |= b;
        }
    }

    /// `self := self ∩ other`.
    pub fn inter_with(&mut self, other: &Relation) {
        self.check(other);
        for (a, b) in self.bits.iter_mut().zip(&other.bits) {
            *a &= b;
        }
    }

    /// `self := self \ other`.
    pub fn diff_with(&mut self, other: &Relation) {
        self.check(other);
        for (a, b) in self.bits.iter_mut().zip(&other.bits) {
            *a &= !b;
        }
    }

    /// `self := (all pairs) \ self`.
    pub fn complement_in_place(&mut self) {
        let mask = last_word_mask(self.n);
        let wpr = self.wpr;
        for (k, w) in self.bits.iter_mut().enumerate() {
            *w = !*w;
            if k % wpr == wpr - 1 {
                *w &= mask;
            }
        }
    }

    /// `self ∪ other`.
    pub fn union(&self, other: &Relation) -> Relation {
        self.combine(other, |a, b| a | b)
    }

    /// `self ∩ other`.
    pub fn intersection(&self, other: &Relation) -> Relation {
        self.combine(other, |a, b| a & b)
    }

    /// `self \ other`.
    pub fn difference(&self, other: &Relation) -> Relation {
        self.combine(other, |a, b| a & !b)
    }

    /// The relation whose words are `f` of this one's and `other`'s, built
    /// in one pass (no copy of `self` first).
    #[inline]
    fn combine(&self, other: &Relation, f: impl Fn(u64, u64) -> u64) -> Relation {
        self.check(other);
        let mut bits = super::pool::take();
        bits.extend(self.bits.iter().zip(&other.bits).map(|(&a, &b)| f(a, b)));
        Relation {
            n: self.n,
            wpr: self.wpr,
            bits,
        }
    }

    /// `(all pairs) \ self`.
    pub fn complement(&self) -> Relation {
        let mut r = self.clone();
        r.complement_in_place();
        r
    }

    // ----- relational operators ---------------------------------------------

    /// Sequential composition `self ; other`:
    /// `{(x, y) | ∃z. (x, z) ∈ self ∧ (z, y) ∈ other}`.
    pub fn compose(&self, other: &Relation) -> Relation {
        self.check(other);
        if self.wpr == 1 {
            // Every row is written: no zero pass first.
            let mut bits = super::pool::take();
            bits.extend(self.bits.iter().map(|&row| {
                let mut w = row;
                let mut acc = 0u64;
                while w != 0 {
                    acc |= other.bits[w.trailing_zeros() as usize];
                    w &= w - 1;
                }
                acc
            }));
            return Relation {
                n: self.n,
                wpr: 1,
                bits,
            };
        }
        let mut out = Relation::empty(self.n);
        {
            let wpr = self.wpr;
            for i in 0..self.n {
                let dst = &mut out.bits[i * wpr..(i + 1) * wpr];
                for j in Bits::new(&self.bits[i * wpr..(i + 1) * wpr]) {
                    for (d, s) in dst.iter_mut().zip(&other.bits[j * wpr..(j + 1) * wpr]) {
                        *d |= s;
                    }
                }
            }
        }
        out
    }

    /// The inverse relation `self^-1`.
    pub fn inverse(&self) -> Relation {
        let mut out = Relation::empty(self.n);
        for i in 0..self.n {
            for j in Bits::new(self.row(i)) {
                out.bits[j * self.wpr + i / 64] |= 1u64 << (i % 64);
            }
        }
        out
    }

    /// `self := self+` in place (Warshall over bit rows).
    pub fn close_transitively(&mut self) {
        let n = self.n;
        if self.wpr == 1 {
            let b = &mut self.bits;
            for k in 0..n {
                let rk = b[k];
                if rk == 0 {
                    continue;
                }
                let bit = 1u64 << k;
                for w in b.iter_mut() {
                    if *w & bit != 0 {
                        *w |= rk;
                    }
                }
            }
        } else {
            let wpr = self.wpr;
            let mut rk = vec![0u64; wpr];
            for k in 0..n {
                rk.copy_from_slice(&self.bits[k * wpr..(k + 1) * wpr]);
                if rk.iter().all(|&w| w == 0) {
                    continue;
                }
                let (kw, bit) = (k / 64, 1u64 << (k % 64));
                for row in self.bits.chunks_exact_mut(wpr) {
                    if row[kw] & bit != 0 {
                        for (d, s) in row.iter_mut().zip(&rk) {
                            *d |= s;
                        }
                    }
                }
            }
        }
    }

    /// Transitive closure `self+`.
    pub fn plus(&self) -> Relation {
        let mut r = self.clone();
        r.close_transitively();
        r
    }

    /// Reflexive-transitive closure `self*` (reflexive over all `n` events).
    pub fn star(&self) -> Relation {
        let mut r = self.plus();
        r.add_identity();
        r
    }

    /// `self? = self ∪ id` (over all `n` events).
    pub fn optional(&self) -> Relation {
        let mut r = self.clone();
        r.add_identity();
        r
    }

    /// `self := self ∪ id` (over all `n` events).
    pub fn add_identity(&mut self) {
        for i in 0..self.n {
            self.bits[i * self.wpr + i / 64] |= 1u64 << (i % 64);
        }
    }

    /// Events with at least one successor.
    pub fn domain(&self) -> BitSet {
        let mut s = BitSet::new(self.n);
        for i in 0..self.n {
            if self.row(i).iter().any(|&w| w != 0) {
                s.insert(i);
            }
        }
        s
    }

    /// Events with at least one predecessor.
    pub fn range(&self) -> BitSet {
        let mut words = vec![0u64; self.wpr];
        for row in self.bits.chunks_exact(self.wpr.max(1)) {
            for (d, s) in words.iter_mut().zip(row) {
                *d |= s;
            }
        }
        BitSet::from_words(self.n, words)
    }

    /// Pairs `(x, y)` of `self` with `x ∈ dom` and `y ∈ ran`.
    pub fn restrict(&self, dom: &BitSet, ran: &BitSet) -> Relation {
        let mut r = self.restrict_range(ran);
        for i in 0..self.n {
            if !dom.contains(i) {
                r.row_mut(i).iter_mut().for_each(|w| *w = 0);
            }
        }
        r
    }

    /// `self` restricted to pairs inside `s × s`.
    pub fn restrict_to(&self, s: &BitSet) -> Relation {
        self.restrict(s, s)
    }

    /// Pairs `(x, y)` of `self` with `y ∈ ran` (`self ; [ran]`).
    pub fn restrict_range(&self, ran: &BitSet) -> Relation {
        assert_eq!(self.n, ran.universe(), "set over a different universe");
        let mut r = self.clone();
        for row in r.bits.chunks_exact_mut(self.wpr.max(1)) {
            for (d, s) in row.iter_mut().zip(ran.words()) {
                *d &= s;
            }
        }
        r
    }

    // ----- checks and witnesses ----------------------------------------------

    /// Whether no event is related to itself.
    pub fn is_irreflexive(&self) -> bool {
        self.irreflexive_witness().is_none()
    }

    /// An event `e` with `(e, e)` in the relation, if any.
    pub fn irreflexive_witness(&self) -> Option<usize> {
        (0..self.n).find(|&i| self.bits[i * self.wpr + i / 64] & (1u64 << (i % 64)) != 0)
    }

    /// Whether the relation has no cycle (self-loops count as cycles).
    pub fn is_acyclic(&self) -> bool {
        self.cyclic_core().is_empty()
    }

    /// The events left after repeatedly removing events with no successor
    /// among the remaining ones. Empty iff the relation is acyclic; otherwise
    /// every remaining event has a successor that also remains.
    pub fn cyclic_core(&self) -> BitSet {
        let n = self.n;
        if self.wpr == 1 {
            let mut remaining = if n == 0 { 0 } else { last_word_mask(n) };
            loop {
                let before = remaining;
                // Descending order peels chains of increasing events in one pass.
                for i in (0..n).rev() {
                    let bit = 1u64 << i;
                    if remaining & bit != 0 && self.bits[i] & remaining == 0 {
                        remaining &= !bit;
                    }
                }
                if remaining == before || remaining == 0 {
                    return BitSet::from_words(n, vec![remaining]);
                }
            }
        }
        let mut remaining = BitSet::full(n);
        loop {
            let mut changed = false;
            for i in (0..n).rev() {
                if remaining.contains(i)
                    && self
                        .row(i)
                        .iter()
                        .zip(remaining.words())
                        .all(|(a, b)| a & b == 0)
                {
                    remaining.remove(i);
                    changed = true;
                }
            }
            if !changed || remaining.is_empty() {
                return remaining;
            }
        }
    }

    /// A cycle `e0 -> e1 -> ... -> ek -> e0` made of edges of the relation
    /// itself, or `None` when the relation is acyclic. A self-loop gives a
    /// one-element cycle.
    pub fn cycle_witness(&self) -> Option<Vec<usize>> {
        let core = self.cyclic_core();
        let start = core.first()?;
        // Every event of the core has a successor in the core: walk until an
        // event repeats; the walk from its first visit is a simple cycle.
        let mut seen_at = vec![usize::MAX; self.n];
        let mut path = Vec::new();
        let mut cur = start;
        loop {
            if seen_at[cur] != usize::MAX {
                return Some(path.split_off(seen_at[cur]));
            }
            seen_at[cur] = path.len();
            path.push(cur);
            cur = self.first_successor_in(cur, &core)?;
        }
    }

    fn first_successor_in(&self, i: usize, s: &BitSet) -> Option<usize> {
        self.row(i)
            .iter()
            .zip(s.words())
            .enumerate()
            .find_map(|(k, (a, b))| {
                let w = a & b;
                (w != 0).then(|| k * 64 + w.trailing_zeros() as usize)
            })
    }

    /// A shortest path `a = e0 -> e1 -> ... -> ek = b` of edges of the
    /// relation, with k >= 1 (so `a == b` asks for a cycle through `a`);
    /// `None` when `b` is not reachable from `a`.
    pub fn path(&self, a: usize, b: usize) -> Option<Vec<usize>> {
        let n = self.universe();
        let mut prev = vec![usize::MAX; n];
        let mut queue = std::collections::VecDeque::new();
        for c in self.successors(a).iter() {
            prev[c] = a;
            queue.push_back(c);
        }
        while let Some(x) = queue.pop_front() {
            if x == b {
                let mut path = vec![b];
                let mut cur = prev[b];
                while cur != a {
                    path.push(cur);
                    cur = prev[cur];
                }
                path.push(a);
                path.reverse();
                return Some(path);
            }
            for c in self.successors(x).iter() {
                if prev[c] == usize::MAX {
                    prev[c] = x;
                    queue.push_back(c);
                }
            }
        }
        None
    }

    /// A shortest cycle of the relation (fewest edges), or `None` when
    /// acyclic. Costlier than [`Relation::cycle_witness`]; meant for
    /// explanations.
    pub fn shortest_cycle(&self) -> Option<Vec<usize>> {
        let core = self.cyclic_core();
        let mut best: Option<Vec<usize>> = None;
        let mut parent = vec![usize::MAX; self.n];
        for s in core.iter() {
            // Breadth-first search from s inside the core, back to s.
            parent.iter_mut().for_each(|p| *p = usize::MAX);
            let mut visited = BitSet::new(self.n);
            let mut frontier = vec![s];
            let mut depth = 0;
            let mut found = None;
            'bfs: while !frontier.is_empty() {
                depth += 1;
                if best.as_ref().is_some_and(|b| depth >= b.len()) {
                    break;
                }
                let mut next = Vec::new();
                for &u in &frontier {
                    for v in Bits::new(self.row(u)) {
                        if !core.contains(v) {
                            continue;
                        }
                        if v == s {
                            found = Some(u);
                            break 'bfs;
                        }
                        if visited.insert(v) {
                            parent[v] = u;
                            next.push(v);
                        }
                    }
                }
                frontier = next;
            }
            if let Some(last) = found {
                let mut cyc = vec![last];
                let mut u = last;
                while u != s {
                    u = parent[u];
                    cyc.push(u);
                }
                cyc.reverse();
                if best.as_ref().is_none_or(|b| cyc.len() < b.len()) {
                    best = Some(cyc);
                }
            }
        }
        best
    }

    // ----- linear extensions -------------------------------------------------

    /// Calls `f` on every strict total order of `set` that contains
    /// `constraint` restricted to `set`, enumerated lazily by backtracking;
    /// stops early when `f` returns `ControlFlow::Break`. The orders are
    /// relations over the whole universe whose pairs all lie in `set × set`.
    /// When `set` is empty, `f` is called once with the empty relation; when
    /// the constraint is cyclic on `set`, `f` is never called.
    pub fn for_each_linearisation<B>(
        set: &BitSet,
        constraint: &Relation,
        mut f: impl FnMut(&Relation) -> ControlFlow<B>,
    ) -> ControlFlow<B> {
        Relation::search_linearisations(set, constraint, |order, complete| {
            if complete {
                f(order)?;
            }
            ControlFlow::Continue(true)
        })
    }

    /// The search behind [`Relation::for_each_linearisation`], open to
    /// pruning. The orders are built by appending one element at a time;
    /// `visit(order, complete)` is called on every node of the search tree.
    /// For a partial node, `order` holds every pair that all completions of
    /// it share: placed before placed in placement order, and each placed
    /// element before every element not yet placed; returning
    /// `Continue(false)` there skips all its completions. For a complete
    /// node, `order` is the total order itself (same enumeration order as
    /// [`Relation::for_each_linearisation`]). The root (nothing placed) is
    /// not visited.
    pub fn search_linearisations<B>(
        set: &BitSet,
        constraint: &Relation,
        mut visit: impl FnMut(&Relation, bool) -> ControlFlow<B, bool>,
    ) -> ControlFlow<B> {
        Relation::search_linearisations_share(set, constraint, |order, complete, _| {
            visit(order, complete)
        })
    }

    /// [`Relation::search_linearisations`] whose `visit` also gets the share
    /// of the search tree covered before the node (each child of a node
    /// taken to be the same size): what a caller projects time from.
    pub fn search_linearisations_share<B>(
        set: &BitSet,
        constraint: &Relation,
        mut visit: impl FnMut(&Relation, bool, f64) -> ControlFlow<B, bool>,
    ) -> ControlFlow<B> {
        let n = set.universe();
        assert_eq!(
            n,
            constraint.universe(),
            "set and relation universes differ"
        );
        let r = constraint.restrict_to(set);
        if !r.is_acyclic() {
            return ControlFlow::Continue(());
        }
        let preds = r.inverse();
        let mut state = LinState {
            set,
            total: set.count(),
            preds: &preds,
            placed: BitSet::new(n),
            placed_list: Vec::with_capacity(set.count()),
            order: Relation::empty(n),
            pos: Vec::new(),
        };
        if state.total == 0 {
            return visit(&state.order, true, 0.0).map_continue(|_| ());
        }
        state.extend(&mut visit)
    }
}

struct LinState<'a> {
    set: &'a BitSet,
    total: usize,
    preds: &'a Relation,
    placed: BitSet,
    placed_list: Vec<usize>,
    /// Placed before placed (in placement order) and placed before unplaced.
    order: Relation,
    /// Per placed element: its index among its node's children, and their number.
    pos: Vec<(u32, u32)>,
}

impl LinState<'_> {
    /// The share of the tree before the current node.
    fn share_done(&self) -> f64 {
        let (mut done, mut share) = (0.0, 1.0);
        for &(i, n) in &self.pos {
            let n = f64::from(n.max(1));
            done += share * f64::from(i) / n;
            share /= n;
        }
        done
    }

    fn extend<B>(
        &mut self,
        visit: &mut impl FnMut(&Relation, bool, f64) -> ControlFlow<B, bool>,
    ) -> ControlFlow<B> {
        let candidates: Vec<usize> = self
            .set
            .iter()
            .filter(|&e| {
                !self.placed.contains(e)
                    && self
                        .preds
                        .row(e)
                        .iter()
                        .zip(self.placed.words())
                        .all(|(p, d)| p & !d == 0)
            })
            .collect();
        let width = candidates.len() as u32;
        for (i, e) in candidates.into_iter().enumerate() {
            self.pos.push((i as u32, width));
            self.placed.insert(e);
            self.placed_list.push(e);
            // Edges from earlier elements to `e` are already there.
            let later: Vec<usize> = self
                .set
                .iter()
                .filter(|&u| !self.placed.contains(u))
                .collect();
            for &u in &later {
                self.order.add(e, u);
            }
            let complete = self.placed_list.len() == self.total;
            let flow = match visit(&self.order, complete, self.share_done()) {
                ControlFlow::Break(b) => ControlFlow::Break(b),
                ControlFlow::Continue(true) if !complete => self.extend(visit),
                ControlFlow::Continue(_) => ControlFlow::Continue(()),
            };
            for &u in &later {
                self.order.remove(e, u);
            }
            self.placed_list.pop();
            self.placed.remove(e);
            self.pos.pop();
            flow?;
        }
        ControlFlow::Continue(())
    }
}

impl fmt::Debug for Relation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.pairs()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SIZES: [usize; 5] = [1, 5, 64, 65, 130];

    /// Naive reference implementation over pair lists.
    fn naive_compose(a: &Relation, b: &Relation) -> Relation {
        let n = a.universe();
        let mut r = Relation::empty(n);
        for (x, z) in a.pairs() {
            for y in 0..n {
                if b.contains(z, y) {
                    r.add(x, y);
                }
            }
        }
        r
    }

    fn naive_plus(a: &Relation) -> Relation {
        let mut r = a.clone();
        loop {
            let next = r.union(&naive_compose(&r, a));
            if next == r {
                return r;
            }
            r = next;
        }
    }

    /// Deterministic pseudo-random relation.
    fn random_rel(n: usize, seed: u64, density: u64) -> Relation {
        let mut x = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let mut r = Relation::empty(n);
        for i in 0..n {
            for j in 0..n {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                if x % 1000 < density {
                    r.add(i, j);
                }
            }
        }
        r
    }

    fn assert_is_cycle(r: &Relation, cyc: &[usize]) {
        assert!(!cyc.is_empty());
        for k in 0..cyc.len() {
            let (a, b) = (cyc[k], cyc[(k + 1) % cyc.len()]);
            assert!(
                r.contains(a, b),
                "({a},{b}) not an edge of the cycle {cyc:?}"
            );
        }
        let mut sorted = cyc.to_vec();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), cyc.len(), "cycle {cyc:?} is not simple");
    }

    #[test]
    fn constructors() {
        for n in SIZES {
            assert!(Relation::empty(n).is_empty());
            let id = Relation::identity(n);
            assert_eq!(id.count(), n);
            assert!(id.contains(n - 1, n - 1));
            assert!(!id.is_irreflexive());
            let full = Relation::full(n);
            assert_eq!(full.count(), n * n);
            let a = BitSet::from_indices(n, [0, n - 1]);
            let b = BitSet::from_indices(n, [n / 2]);
            let c = Relation::cartesian(&a, &b);
            assert_eq!(c.pairs().collect::<Vec<_>>(), {
                let mut v = vec![(0, n / 2), (n - 1, n / 2)];
                v.dedup();
                v
            });
            let ida = Relation::identity_on(&a);
            assert_eq!(ida.domain(), a);
            assert_eq!(ida.range(), a);
        }
    }

    #[test]
    fn add_remove_contains_pairs() {
        for n in SIZES {
            let mut r = Relation::empty(n);
            assert!(r.add(0, n - 1));
            assert!(!r.add(0, n - 1));
            assert!(r.contains(0, n - 1));
            assert!(!r.contains(n, 0) && !r.contains(0, n));
            assert!(r.remove(0, n - 1));
            assert!(!r.remove(0, n - 1));
            assert!(r.is_empty());
            r.add(n - 1, 0);
            r.add(n / 2, n - 1);
            let mut expected = vec![(n / 2, n - 1), (n - 1, 0)];
            expected.sort();
            expected.dedup();
            assert_eq!(r.pairs().collect::<Vec<_>>(), expected);
            assert_eq!(r.count(), expected.len());
            assert_eq!(Relation::from_pairs(n, expected.iter().copied()), r);
            assert!(r.successors(n - 1).contains(0));
        }
    }

    #[test]
    fn boolean_algebra() {
        for n in SIZES {
            let a = random_rel(n, 1, 300);
            let b = random_rel(n, 2, 300);
            let u = a.union(&b);
            let i = a.intersection(&b);
            let d = a.difference(&b);
            let c = a.complement();
            for x in 0..n {
                for y in 0..n {
                    assert_eq!(u.contains(x, y), a.contains(x, y) || b.contains(x, y));
                    assert_eq!(i.contains(x, y), a.contains(x, y) && b.contains(x, y));
                    assert_eq!(d.contains(x, y), a.contains(x, y) && !b.contains(x, y));
                    assert_eq!(c.contains(x, y), !a.contains(x, y));
                }
            }
            assert_eq!(c.count() + a.count(), n * n);
            assert!(i.is_subset(&a) && a.is_subset(&u));
            assert_eq!(Relation::empty(n).complement(), Relation::full(n));
        }
    }

    #[test]
    fn compose_matches_naive() {
        for n in SIZES {
            for seed in 0..3 {
                let a = random_rel(n, seed, 50);
                let b = random_rel(n, seed + 10, 50);
                assert_eq!(a.compose(&b), naive_compose(&a, &b), "n={n}");
            }
            let id = Relation::identity(n);
            let a = random_rel(n, 7, 100);
            assert_eq!(a.compose(&id), a);
            assert_eq!(id.compose(&a), a);
        }
    }

    #[test]
    fn compose_small_example() {
        let a = Relation::from_pairs(4, [(0, 1), (1, 2)]);
        let b = Relation::from_pairs(4, [(1, 3), (2, 0)]);
        assert_eq!(a.compose(&b), Relation::from_pairs(4, [(0, 3), (1, 0)]));
    }

    #[test]
    fn inverse_roundtrip() {
        for n in SIZES {
            let a = random_rel(n, 3, 100);
            let inv = a.inverse();
            assert_eq!(inv.count(), a.count());
            for (x, y) in a.pairs() {
                assert!(inv.contains(y, x));
            }
            assert_eq!(inv.inverse(), a);
        }
    }

    #[test]
    fn closures() {
        for n in SIZES {
            for seed in 0..3 {
                let a = random_rel(n, seed + 20, 2000 / (n as u64 + 1));
                let p = a.plus();
                assert_eq!(p, naive_plus(&a), "n={n}");
                let s = a.star();
                assert_eq!(s, p.union(&Relation::identity(n)));
                assert_eq!(a.optional(), a.union(&Relation::identity(n)));
                // Closure is idempotent and transitive.
                assert_eq!(p.plus(), p);
                assert!(p.compose(&p).is_subset(&p));
            }
        }
        // A chain closes into a strict total order.
        let n = 130;
        let chain = Relation::from_pairs(n, (0..n - 1).map(|i| (i, i + 1)));
        let p = chain.plus();
        assert_eq!(p.count(), n * (n - 1) / 2);
        assert!(p.contains(0, n - 1) && !p.contains(n - 1, 0));
        assert!(p.is_irreflexive() && p.is_acyclic());
    }

    #[test]
    fn domain_range_restrict() {
        for n in SIZES {
            let r = Relation::from_pairs(n, [(0, n - 1), (n / 2, n / 3)]);
            assert_eq!(r.domain(), BitSet::from_indices(n, [0, n / 2]));
            assert_eq!(r.range(), BitSet::from_indices(n, [n - 1, n / 3]));
            let s = BitSet::from_indices(n, [0, n - 1]);
            assert_eq!(r.restrict_to(&s), Relation::from_pairs(n, [(0, n - 1)]));
            let only_src = BitSet::from_indices(n, [n / 2]);
            assert_eq!(
                r.restrict(&only_src, &BitSet::full(n)),
                Relation::from_pairs(n, [(n / 2, n / 3)])
            );
            assert_eq!(
                r.restrict_range(&BitSet::from_indices(n, [n / 3])),
                Relation::from_pairs(n, [(n / 2, n / 3)])
            );
        }
    }

    #[test]
    fn irreflexive_and_witness() {
        for n in SIZES {
            let mut r = Relation::from_pairs(n, (0..n - 1).map(|i| (i, i + 1)));
            assert!(r.is_irreflexive());
            assert_eq!(r.irreflexive_witness(), None);
            r.add(n - 1, n - 1);
            assert_eq!(r.irreflexive_witness(), Some(n - 1));
        }
    }

    #[test]
    fn acyclicity_and_cycle_witness() {
        for n in SIZES {
            // Chains in both directions are acyclic.
            let up = Relation::from_pairs(n, (0..n - 1).map(|i| (i, i + 1)));
            let down = up.inverse();
            assert!(up.is_acyclic() && down.is_acyclic());
            assert_eq!(up.cycle_witness(), None);
            assert_eq!(down.shortest_cycle(), None);
            // Closing the chain makes one big cycle.
            let mut ring = up.clone();
            ring.add(n - 1, 0);
            assert!(!ring.is_acyclic());
            let cyc = ring.cycle_witness().unwrap();
            assert_is_cycle(&ring, &cyc);
            assert_eq!(cyc.len(), n);
            // Self loop.
            let mut sl = up.clone();
            sl.add(n / 2, n / 2);
            assert_eq!(sl.cycle_witness(), Some(vec![n / 2]));
        }
        // The witness comes from the relation, not its closure.
        let r = Relation::from_pairs(6, [(0, 1), (1, 2), (2, 3), (3, 1), (4, 5), (2, 4)]);
        let cyc = r.cycle_witness().unwrap();
        assert_is_cycle(&r, &cyc);
        assert_eq!(cyc.len(), 3);
        // Random relations: witness is a real cycle iff the naive closure is reflexive somewhere.
        for n in SIZES {
            for seed in 0..5 {
                let a = random_rel(n, seed + 40, 1500 / (n as u64 * 3 + 1));
                let cyclic = !naive_plus(&a).is_irreflexive();
                assert_eq!(!a.is_acyclic(), cyclic);
                match a.cycle_witness() {
                    Some(c) => {
                        assert!(cyclic);
                        assert_is_cycle(&a, &c);
                    }
                    None => assert!(!cyclic),
                }
                if let Some(c) = a.shortest_cycle() {
                    assert_is_cycle(&a, &c);
                    assert!(c.len() <= a.cycle_witness().unwrap().len());
                }
            }
        }
    }

    #[test]
    fn shortest_cycle_is_shortest() {
        // A long cycle 0->1->2->3->4->0 plus a shortcut 3->1 giving 1->2->3->1.
        let r = Relation::from_pairs(5, [(0, 1), (1, 2), (2, 3), (3, 4), (4, 0), (3, 1)]);
        let c = r.shortest_cycle().unwrap();
        assert_eq!(c.len(), 3);
        assert_is_cycle(&r, &c);
    }

    fn all_linearisations(set: &BitSet, r: &Relation) -> Vec<Relation> {
        let mut out = Vec::new();
        let _: ControlFlow<()> = Relation::for_each_linearisation(set, r, |o| {
            out.push(o.clone());
            ControlFlow::Continue(())
        });
        out
    }

    #[test]
    fn linearisations_count_and_shape() {
        let n = 5;
        let set = BitSet::from_indices(n, [0, 1, 2, 4]);
        let free = all_linearisations(&set, &Relation::empty(n));
        assert_eq!(free.len(), 24);
        for o in &free {
            assert_eq!(o.count(), 6);
            assert!(o.is_acyclic());
            assert_eq!(o.domain().union(&o.range()), set);
            // Totality on the set.
            for a in set.iter() {
                for b in set.iter() {
                    if a != b {
                        assert!(o.contains(a, b) ^ o.contains(b, a));
                    }
                }
            }
        }
        let mut uniq = free.clone();
        uniq.sort_by_key(|r| format!("{r:?}"));
        uniq.dedup();
        assert_eq!(uniq.len(), 24);
        // Constraint 0 < 1 < 2 leaves 4 positions for event 4; pairs outside
        // the set (3 -> 0) are ignored.
        let c = Relation::from_pairs(n, [(0, 1), (1, 2), (3, 0)]);
        let cons = all_linearisations(&set, &c);
        assert_eq!(cons.len(), 4);
        for o in &cons {
            assert!(o.contains(0, 1) && o.contains(0, 2) && o.contains(1, 2));
        }
        // Cyclic constraint: none.
        let cyc = Relation::from_pairs(n, [(0, 1), (1, 0)]);
        assert!(all_linearisations(&set, &cyc).is_empty());
        // Empty set: exactly the empty order.
        let none = all_linearisations(&BitSet::new(n), &cyc);
        assert_eq!(none, vec![Relation::empty(n)]);
    }

    #[test]
    fn linearisations_stop_early() {
        let n = 8;
        let mut calls = 0;
        let flow = Relation::for_each_linearisation(&BitSet::full(n), &Relation::empty(n), |_| {
            calls += 1;
            if calls == 3 {
                ControlFlow::Break("stop")
            } else {
                ControlFlow::Continue(())
            }
        });
        assert_eq!(flow, ControlFlow::Break("stop"));
        assert_eq!(calls, 3);
    }

    #[test]
    fn zero_sized_universe() {
        let r = Relation::empty(0);
        assert!(r.is_empty() && r.is_acyclic() && r.is_irreflexive());
        assert_eq!(r.plus(), r);
        assert_eq!(r.compose(&r), r);
        assert_eq!(r.complement(), r);
        assert!(r.domain().is_empty() && r.range().is_empty());
    }
}

#[cfg(test)]
mod path_tests {
    use super::Relation;

    #[test]
    fn path_finds_shortest_chains_and_cycles() {
        // 0 -> 1 -> 2 -> 3, shortcut 0 -> 2, back edge 3 -> 0; 4 isolated.
        let r = Relation::from_pairs(5, [(0, 1), (1, 2), (2, 3), (0, 2), (3, 0)]);
        assert_eq!(r.path(0, 3), Some(vec![0, 2, 3]));
        assert_eq!(r.path(1, 1), Some(vec![1, 2, 3, 0, 1]));
        assert_eq!(r.path(0, 4), None);
        assert_eq!(r.path(4, 4), None);
        let self_loop = Relation::from_pairs(2, [(1, 1)]);
        assert_eq!(self_loop.path(1, 1), Some(vec![1, 1]));
    }
}
