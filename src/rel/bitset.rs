//! Fixed-universe bit sets of events.

use std::fmt;

/// Number of `u64` words needed for `n` bits.
#[inline]
pub(crate) fn words_for(n: usize) -> usize {
    n.div_ceil(64)
}

/// Mask of the valid bits of the last word for a universe of `n` bits
/// (all ones when `n` is a multiple of 64).
#[inline]
pub(crate) fn last_word_mask(n: usize) -> u64 {
    match n % 64 {
        0 => !0,
        r => (1u64 << r) - 1,
    }
}

/// Iterator over the set bits of a word slice, yielding bit indices.
#[derive(Clone)]
pub struct Bits<'a> {
    words: &'a [u64],
    index: usize,
    current: u64,
}

impl<'a> Bits<'a> {
    pub(crate) fn new(words: &'a [u64]) -> Self {
        Bits {
            words,
            index: 0,
            current: words.first().copied().unwrap_or(0),
        }
    }
}

impl Iterator for Bits<'_> {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        loop {
            if self.current != 0 {
                let bit = self.current.trailing_zeros() as usize;
                self.current &= self.current - 1;
                return Some(self.index * 64 + bit);
            }
            self.index += 1;
            if self.index >= self.words.len() {
                return None;
            }
            self.current = self.words[self.index];
        }
    }
}

/// A set of events `0..n` stored as a bit vector.
///
/// All binary operations require both operands to have the same universe
/// size; mixing sizes is a programming error and panics.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct BitSet {
    n: usize,
    words: Vec<u64>,
}

impl BitSet {
    /// The empty set over a universe of `n` events.
    pub fn new(n: usize) -> Self {
        BitSet {
            n,
            words: vec![0; words_for(n)],
        }
    }

    /// The empty set over a universe of `n` events (same as [`BitSet::new`]).
    pub fn empty(n: usize) -> Self {
        Self::new(n)
    }

    /// The set of all `n` events.
    pub fn full(n: usize) -> Self {
        let mut s = BitSet {
            n,
            words: vec![!0; words_for(n)],
        };
        s.trim();
        s
    }

    /// The set of the given events.
    pub fn from_indices(n: usize, items: impl IntoIterator<Item = usize>) -> Self {
        let mut s = Self::new(n);
        for i in items {
            s.insert(i);
        }
        s
    }

    /// Builds a set from raw words (bits beyond `n` are cleared).
    pub fn from_words(n: usize, mut words: Vec<u64>) -> Self {
        words.resize(words_for(n), 0);
        let mut s = BitSet { n, words };
        s.trim();
        s
    }

    /// Clears the bits beyond the universe in the last word.
    #[inline]
    fn trim(&mut self) {
        if let Some(last) = self.words.last_mut() {
            *last &= last_word_mask(self.n);
        }
    }

    /// Size of the universe (number of events), not the number of members.
    #[inline]
    pub fn universe(&self) -> usize {
        self.n
    }

    /// The underlying words (bit `i` is bit `i % 64` of word `i / 64`).
    #[inline]
    pub fn words(&self) -> &[u64] {
        &self.words
    }

    /// Adds `i`; returns true if it was not already a member.
    #[inline]
    pub fn insert(&mut self, i: usize) -> bool {
        assert!(i < self.n, "event {i} out of universe of size {}", self.n);
        let w = &mut self.words[i / 64];
        let bit = 1u64 << (i % 64);
        let fresh = *w & bit == 0;
        *w |= bit;
        fresh
    }

    /// Removes `i`; returns true if it was a member.
    #[inline]
    pub fn remove(&mut self, i: usize) -> bool {
        assert!(i < self.n, "event {i} out of universe of size {}", self.n);
        let w = &mut self.words[i / 64];
        let bit = 1u64 << (i % 64);
        let was = *w & bit != 0;
        *w &= !bit;
        was
    }

    /// Whether `i` is a member (false for `i >= n`).
    #[inline]
    pub fn contains(&self, i: usize) -> bool {
        i < self.n && self.words[i / 64] & (1u64 << (i % 64)) != 0
    }

    /// Members in increasing order.
    pub fn iter(&self) -> Bits<'_> {
        Bits::new(&self.words)
    }

    /// Number of members.
    pub fn count(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// Whether the set has no member.
    pub fn is_empty(&self) -> bool {
        self.words.iter().all(|&w| w == 0)
    }

    /// Smallest member, if any.
    pub fn first(&self) -> Option<usize> {
        self.iter().next()
    }

    /// Whether every member of `self` is a member of `other`.
    pub fn is_subset(&self, other: &BitSet) -> bool {
        self.check(other);
        self.words
            .iter()
            .zip(&other.words)
            .all(|(a, b)| a & !b == 0)
    }

    #[inline]
    fn check(&self, other: &BitSet) {
        assert_eq!(self.n, other.n, "bit sets over different universes");
    }

    /// `self := self ∪ other`.
    pub fn union_with(&mut self, other: &BitSet) {
        self.check(other);
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a |= b;
        }
    }

    /// `self := self ∩ other`.
    pub fn inter_with(&mut self, other: &BitSet) {
        self.check(other);
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a &= b;
        }
    }

    /// `self := self \ other`.
    pub fn diff_with(&mut self, other: &BitSet) {
        self.check(other);
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a &= !b;
        }
    }

    /// `self := universe \ self`.
    pub fn complement_in_place(&mut self) {
        for w in &mut self.words {
            *w = !*w;
        }
        self.trim();
    }

    /// `self ∪ other`.
    pub fn union(&self, other: &BitSet) -> BitSet {
        let mut r = self.clone();
        r.union_with(other);
        r
    }

    /// `self ∩ other`.
    pub fn inter(&self, other: &BitSet) -> BitSet {
        let mut r = self.clone();
        r.inter_with(other);
        r
    }

    /// `self \ other`.
    pub fn diff(&self, other: &BitSet) -> BitSet {
        let mut r = self.clone();
        r.diff_with(other);
        r
    }

    /// `universe \ self`.
    pub fn complement(&self) -> BitSet {
        let mut r = self.clone();
        r.complement_in_place();
        r
    }

    /// Removes every member.
    pub fn clear(&mut self) {
        self.words.iter_mut().for_each(|w| *w = 0);
    }
}

impl fmt::Debug for BitSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SIZES: [usize; 6] = [1, 5, 63, 64, 65, 130];

    #[test]
    fn new_full_count() {
        for n in SIZES {
            assert!(BitSet::new(n).is_empty());
            assert_eq!(BitSet::new(n).count(), 0);
            let f = BitSet::full(n);
            assert_eq!(f.count(), n, "n={n}");
            assert!(f.contains(n - 1));
            assert!(!f.contains(n));
            assert_eq!(f.iter().collect::<Vec<_>>(), (0..n).collect::<Vec<_>>());
        }
        assert_eq!(BitSet::full(0).count(), 0);
        assert!(BitSet::full(0).is_empty());
    }

    #[test]
    fn insert_remove_contains() {
        for n in SIZES {
            let mut s = BitSet::new(n);
            assert!(s.insert(n - 1));
            assert!(!s.insert(n - 1));
            assert!(s.contains(n - 1));
            assert_eq!(s.count(), 1);
            if n > 1 {
                assert!(s.insert(0));
                assert!(s.contains(0));
                assert_eq!(s.count(), 2);
                assert!(s.remove(0));
                assert!(!s.remove(0));
                assert!(!s.contains(0));
            }
            assert_eq!(s.first(), Some(n - 1));
            assert!(s.remove(n - 1));
            assert!(s.is_empty());
            assert_eq!(s.first(), None);
        }
    }

    #[test]
    #[should_panic]
    fn insert_out_of_range_panics() {
        BitSet::new(3).insert(3);
    }

    #[test]
    fn set_algebra() {
        for n in SIZES {
            let evens = BitSet::from_indices(n, (0..n).step_by(2));
            let threes = BitSet::from_indices(n, (0..n).step_by(3));
            let u = evens.union(&threes);
            let i = evens.inter(&threes);
            let d = evens.diff(&threes);
            let c = evens.complement();
            for k in 0..n {
                assert_eq!(u.contains(k), k % 2 == 0 || k % 3 == 0);
                assert_eq!(i.contains(k), k % 6 == 0);
                assert_eq!(d.contains(k), k % 2 == 0 && k % 3 != 0);
                assert_eq!(c.contains(k), k % 2 == 1);
            }
            assert_eq!(c.count() + evens.count(), n);
            assert_eq!(c.complement(), evens);
            assert!(i.is_subset(&evens) && i.is_subset(&threes));
            assert!(!evens.is_subset(&i) || n == 1);
            let mut m = evens.clone();
            m.union_with(&threes);
            assert_eq!(m, u);
            m.inter_with(&evens);
            assert_eq!(m, evens);
            m.diff_with(&threes);
            assert_eq!(m, d);
            m.clear();
            assert!(m.is_empty());
        }
    }

    #[test]
    fn equality_and_hash() {
        use std::collections::HashSet;
        let a = BitSet::from_indices(70, [1, 69]);
        let b = BitSet::from_indices(70, [69, 1]);
        assert_eq!(a, b);
        let mut h = HashSet::new();
        h.insert(a);
        assert!(h.contains(&b));
        assert_ne!(BitSet::new(3), BitSet::new(4));
    }

    #[test]
    fn from_words_trims() {
        let s = BitSet::from_words(3, vec![!0]);
        assert_eq!(s.count(), 3);
        assert_eq!(format!("{s:?}"), "{0, 1, 2}");
    }
}
