//! The three orders of a whole-program pomset (dependency ⊴, synchronisation
//! ≤, per-location ⊑) over at most 64 events, as bit matrices with the
//! labelled edges they were built from, and the relations on actions they
//! are built with (seed 003 §1.2, with the decisions of docs/pomsets.md).

use super::program::{Mode, Scope};
use super::thread::Kind;

/// An event of the whole program (initial writes first).
#[derive(Clone, Debug)]
pub struct GEv {
    /// Thread index; `None` for an initial write.
    pub thread: Option<usize>,
    pub kind: Kind,
    pub loc: Option<usize>,
    pub val: i64,
    pub mode: Mode,
    pub scope: Scope,
    /// Instruction text (empty for initial writes).
    pub instr: String,
}

/// The readings of the seed a check uses (docs/pomsets.md, A2–A4, L.185).
#[derive(Clone, Copy, Debug, Default)]
pub struct Reading {
    /// L.185 footnote: `(Rx, R^⊒acq x)` is a sync-delay (`--variant ptx-acq-delay`).
    pub ptx_acq_delay: bool,
    /// A4 as printed: c8a orders every rf pair in ⊑ (`--variant literal-c8a`).
    pub literal_c8a: bool,
    /// A3 as printed: c7a for any rf pair (`--variant literal-c7a`).
    pub literal_c7a: bool,
    /// A2 as printed: only two F^sc strongly-fence (`--variant literal-fences`).
    pub literal_fences: bool,
    /// Adds `(Rx, Rx)` to co-delays (`--variant co-rr`; L.177 has no
    /// read-read pair, so Fig. 1 allows CoRR).
    pub co_rr: bool,
    /// c7a' (L.888) with `e'` anywhere after `e` in ≤, not only in `e`'s
    /// thread (`--variant c7a-any-successor`).
    pub c7a_any_successor: bool,
    /// Anton's C7a''' (L.906-910): c7a also through `rf; (rmw; rf)*`
    /// chains, PTX's release sequences (`--variant rmw-release-sequence`).
    pub rmw_chains: bool,
}

/// The actions of a program and the relations between them.
pub struct Actions<'a> {
    pub evs: &'a [GEv],
    /// `(gpu, cta)` per thread.
    pub place: &'a [(u32, u32)],
    pub reading: Reading,
}

impl Actions<'_> {
    fn same_gpu(&self, a: &GEv, b: &GEv) -> bool {
        match (a.thread, b.thread) {
            (Some(x), Some(y)) => self.place[x].0 == self.place[y].0,
            _ => true,
        }
    }
    fn same_cta(&self, a: &GEv, b: &GEv) -> bool {
        match (a.thread, b.thread) {
            (Some(x), Some(y)) => self.place[x] == self.place[y],
            _ => true,
        }
    }
    /// Conditions (1) or (2b, 2c) of strongly-overlaps (L.248-254).
    fn scope_strong(&self, a: &GEv, b: &GEv) -> bool {
        if a.thread == b.thread {
            return true;
        }
        let cta = a.scope == Scope::Cta || b.scope == Scope::Cta;
        let gpu = a.scope == Scope::Gpu || b.scope == Scope::Gpu;
        (!cta || self.same_cta(a, b)) && (!gpu || self.same_gpu(a, b))
    }
    fn access(a: &GEv) -> bool {
        a.kind != Kind::F
    }
    /// Same location, both accesses.
    pub fn overlaps(&self, a: usize, b: usize) -> bool {
        let (a, b) = (&self.evs[a], &self.evs[b]);
        Self::access(a) && Self::access(b) && a.loc == b.loc
    }
    /// Strongly-overlaps (L.248-254).
    pub fn so(&self, a: usize, b: usize) -> bool {
        let (x, y) = (&self.evs[a], &self.evs[b]);
        self.overlaps(a, b)
            && (x.thread == y.thread
                || (x.mode != Mode::Wk && y.mode != Mode::Wk && self.scope_strong(x, y)))
    }
    /// Strongly-fences (L.256).
    pub fn sf(&self, a: usize, b: usize) -> bool {
        let (x, y) = (&self.evs[a], &self.evs[b]);
        x.kind == Kind::F
            && y.kind == Kind::F
            && x.mode == Mode::Sc
            && y.mode == Mode::Sc
            && self.scope_strong(x, y)
    }
    /// Strongly-matches (L.258; with A2 decided, a fence strongly-matches
    /// when the pair is scope-strong, as PTX's morally strong).
    pub fn sm(&self, a: usize, b: usize) -> bool {
        let (x, y) = (&self.evs[a], &self.evs[b]);
        let release = x.kind != Kind::R && x.mode.is_rel();
        let acquire = y.kind != Kind::W && y.mode.is_acq();
        if !release || !acquire || a == b {
            return false;
        }
        if self.so(a, b) || self.sf(a, b) {
            return true;
        }
        !self.reading.literal_fences
            && (x.kind == Kind::F || y.kind == Kind::F)
            && self.scope_strong(x, y)
    }
    /// Sync-delays (L.179, optionally the L.185 pair).
    pub fn sync_delays(&self, a: usize, b: usize) -> bool {
        let (x, y) = (&self.evs[a], &self.evs[b]);
        use Kind::*;
        (y.kind == W && y.mode.is_rel())
            || (y.kind == F && y.mode.is_rel())
            || (x.kind == R && y.kind == F && y.mode.is_acq())
            || (x.kind == R && x.mode.is_acq())
            || (x.kind == F && x.mode.is_acq())
            || (x.kind == F && x.mode.is_rel() && y.kind == W)
            || (x.kind == W && x.mode.is_rel() && y.kind == W && x.loc == y.loc)
            || (self.reading.ptx_acq_delay
                && x.kind == R
                && y.kind == R
                && y.mode.is_acq()
                && x.loc == y.loc)
    }
    /// Co-delays (L.177).
    pub fn co_delays(&self, a: usize, b: usize) -> bool {
        let (x, y) = (&self.evs[a], &self.evs[b]);
        if !Self::access(x) || !Self::access(y) {
            return false;
        }
        (x.loc == y.loc && (x.kind == Kind::W || y.kind == Kind::W || self.reading.co_rr))
            || (x.mode == Mode::Sc && y.mode == Mode::Sc)
    }
}

/// A partial order under construction: labelled base edges and their
/// transitive closure.
#[derive(Clone, Debug)]
pub struct Order {
    pub base: Vec<u64>,
    pub edges: Vec<(usize, usize, &'static str)>,
    pub clo: Vec<u64>,
}

impl Order {
    /// The empty order on `n` events.
    pub fn new(n: usize) -> Order {
        Order {
            base: vec![0; n],
            edges: Vec::new(),
            clo: vec![0; n],
        }
    }
    /// Adds a base edge (the closure is stale until [`Order::close`]).
    pub fn add(&mut self, a: usize, b: usize, label: &'static str) {
        if self.base[a] >> b & 1 == 0 {
            self.base[a] |= 1 << b;
            self.edges.push((a, b, label));
        }
    }
    /// Recomputes the transitive closure.
    pub fn close(&mut self) {
        self.clo.clone_from(&self.base);
        let n = self.clo.len();
        for k in 0..n {
            let rk = self.clo[k];
            for i in 0..n {
                if self.clo[i] >> k & 1 == 1 {
                    self.clo[i] |= rk;
                }
            }
        }
    }
    /// `a` strictly before `b` in the closure.
    pub fn lt(&self, a: usize, b: usize) -> bool {
        self.clo[a] >> b & 1 == 1
    }
    /// `a = b` or `a` before `b`.
    pub fn le(&self, a: usize, b: usize) -> bool {
        a == b || self.lt(a, b)
    }
    /// A cycle of base edges (with labels), if the closure has one.
    pub fn cycle(&self) -> Option<Vec<(usize, usize, String)>> {
        let n = self.clo.len();
        let start = (0..n).find(|&i| self.lt(i, i))?;
        // Breadth-first search from `start` back to itself over base edges.
        let mut prev: Vec<Option<usize>> = vec![None; n];
        let mut queue = std::collections::VecDeque::from([start]);
        let mut seen = 0u64;
        while let Some(x) = queue.pop_front() {
            for (y, p) in prev.iter_mut().enumerate() {
                if self.base[x] >> y & 1 == 1 && seen >> y & 1 == 0 {
                    seen |= 1 << y;
                    *p = Some(x);
                    if y == start {
                        queue.clear();
                        break;
                    }
                    queue.push_back(y);
                }
            }
        }
        let mut path = Vec::new();
        let mut cur = start;
        loop {
            let p = prev[cur]?;
            let label = self
                .edges
                .iter()
                .find(|(a, b, _)| *a == p && *b == cur)
                .map_or("?", |e| e.2);
            path.push((p, cur, label.to_string()));
            cur = p;
            if cur == start || path.len() > n {
                break;
            }
        }
        path.reverse();
        Some(path)
    }
}

/// Applies M9c to `o` for the rmw pairs (atomicity: nothing overlapping
/// the read sits between it and its write); true when edges were added.
pub fn atomicity(o: &mut Order, act: &Actions<'_>, rmw: &[(usize, usize)]) -> bool {
    let mut added = false;
    for &(d, e) in rmw {
        for c in 0..act.evs.len() {
            if c == d || c == e || !act.overlaps(c, d) {
                continue;
            }
            if o.lt(c, e) && !o.lt(c, d) {
                o.add(c, d, "M9c");
                added = true;
            }
            if o.lt(d, c) && !o.lt(e, c) {
                o.add(e, c, "M9c");
                added = true;
            }
        }
    }
    added
}

/// Closes `o` under transitivity and M9c.
pub fn close_atomic(o: &mut Order, act: &Actions<'_>, rmw: &[(usize, usize)]) {
    loop {
        o.close();
        if !atomicity(o, act, rmw) {
            break;
        }
    }
}

/// Whether the closure has a cycle.
pub fn cyclic(o: &Order) -> bool {
    (0..o.clo.len()).any(|i| o.lt(i, i))
}
