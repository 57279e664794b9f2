//! Deciding a program from weaker programs of the same shape
//! (docs/mappings.md, "Checking a program in a campaign", *weaker
//! programs*).
//!
//! Two programs have the same *shape* when they have the same threads,
//! placements, operation kinds and locations, and differ only in memory
//! orders and scopes. The enumeration generates a shape's programs one
//! after the other ([`super::enumerate`] with the cycle cut: skeleton
//! first), so a campaign checks them in order, weakest first.
//!
//! When the mapping compiles operation `b` to the code of operation `a`
//! with extra fences and stronger tags ([`code_dominates`]), a program `P'`
//! that has `b` where `P` has `a` (everything else equal) compiles to a
//! stronger target program: every execution the target model allows for
//! `P'` it allows for `P` (argued for `ptx6`, `cmm` and `x86tso`), so
//! `target(P') ⊆ target(P)`. Both programs have the same SC states. So the
//! target states of `P'` outside the SC states are among those of `P`:
//! when `P` has none, `P'` is sound without a check; otherwise its target
//! run judges only those states.

use super::check::StateSet;
use super::enumerate::{self, OpKind, Place, Program};
use super::format::Mapping;
use super::verify;
use crate::fast_hash::FastHash;
use crate::ir::{Instr, InstrKind, Value};
use std::collections::{BTreeSet, HashMap};

/// An operation's memory order and scope (indices into `ORDERS` and
/// `SCOPES`).
type Annotation = (u8, u8);

/// An operation as the table knows it: on a CPU thread, kind, order, scope.
type OpKey = (bool, OpKind, u8, u8);

/// An operation's code alone for one RMW operation (`exch`, `add`; the
/// same for all other kinds), `None` when it does not compile.
type RmwCode = (&'static str, Option<Vec<Instr>>);

/// What makes programs one shape: per thread, its placement and its
/// operations' kinds and locations.
pub type ShapeKey = Vec<(Place, Vec<(OpKind, u8)>)>;

/// Which operations compile to stronger code than which (per placement
/// class): for each operation, the annotations of the weaker ones.
pub struct Table {
    below: HashMap<OpKey, Vec<Annotation>>,
}

/// The models the target-side argument is made for: every tag set they
/// read grows with [`tags_le`], relations are built monotonically from
/// them, and removing fence events only removes edges (as for the
/// edge-fence cut, docs/mappings.md item 9).
const ARGUED_TARGETS: &[&str] = &["ptx6", "cmm", "x86tso"];

/// Semantic tags from weakest: `WEAK < RLX < ACQ, REL < ACQ_REL < SC`.
const SEMANTICS: &[&str] = &["WEAK", "RLX", "ACQ", "REL", "ACQ_REL", "SC"];

/// Scope tags from narrowest: `CTA < GPU < SYS` (an unscoped access is
/// below all of them).
const SCOPE_TAGS: &[&str] = &["CTA", "GPU", "SYS"];

/// Whether semantic tag `a` is at most `b`.
fn semantics_le(a: &str, b: &str) -> bool {
    a == b
        || match a {
            "WEAK" => true,
            "RLX" => b != "WEAK",
            "ACQ" | "REL" => b == "ACQ_REL" || b == "SC",
            "ACQ_REL" => b == "SC",
            _ => false,
        }
}

/// Whether an event tagged `a` carries at most the guarantees of one
/// tagged `b`: at most one semantic and one scope tag each, `a`'s at most
/// `b`'s (a missing scope is the least), every other tag the same.
pub fn tags_le(a: &[String], b: &[String]) -> bool {
    fn split(tags: &[String]) -> Option<(Option<&str>, Option<usize>, Vec<&str>)> {
        let (mut sem, mut scope, mut rest) = (None, None, Vec::new());
        for t in tags {
            if SEMANTICS.contains(&t.as_str()) {
                if sem.replace(t.as_str()).is_some() {
                    return None;
                }
            } else if let Some(i) = SCOPE_TAGS.iter().position(|s| s == t) {
                if scope.replace(i).is_some() {
                    return None;
                }
            } else {
                rest.push(t.as_str());
            }
        }
        rest.sort_unstable();
        Some((sem, scope, rest))
    }
    let (Some((sa, ca, ra)), Some((sb, cb, rb))) = (split(a), split(b)) else {
        return false;
    };
    let sem = match (sa, sb) {
        (None, None) => true,
        (Some(x), Some(y)) => semantics_le(x, y),
        _ => false,
    };
    let scope = match (ca, cb) {
        (None, _) => true,
        (Some(x), Some(y)) => x <= y,
        (Some(_), None) => false,
    };
    sem && scope && ra == rb
}

/// Whether `strong` is `weak` with fences inserted and tags strengthened:
/// `weak`'s instructions appear in `strong` in order, each with the same
/// operation and operands and tags at least as strong ([`tags_le`]), and
/// every other instruction of `strong` is a fence.
pub fn code_dominates(weak: &[Instr], strong: &[Instr]) -> bool {
    let mut rest = weak.iter().peekable();
    for s in strong {
        match rest.peek() {
            Some(w) if w.kind == s.kind && tags_le(&w.tags, &s.tags) => {
                rest.next();
            }
            _ if s.kind == InstrKind::Fence => {}
            _ => return false,
        }
    }
    rest.next().is_none()
}

impl Table {
    /// The table for `m` with target model `target`; `None` when the
    /// argument is not made for `target` or the SC shortcut does not hold
    /// for `m`'s source model (then no program is decided this way).
    pub fn new(m: &Mapping, target: &str) -> Option<Table> {
        if !ARGUED_TARGETS.contains(&target) || !super::check::sc_shortcut_sound(m) {
            return None;
        }
        let mut below: HashMap<OpKey, Vec<Annotation>> = HashMap::new();
        for (place, cls) in verify::class_places(m) {
            let cpu = place == Place::Cpu;
            for kind in [OpKind::Load, OpKind::Store, OpKind::Rmw, OpKind::Fence] {
                // Per (order, scope): the code for each RMW operation.
                let mut code: HashMap<Annotation, Vec<RmwCode>> = HashMap::new();
                for (k, order, scope, rmw_op) in verify::constructs(m, cls, &[kind]) {
                    let c = verify::compiled_thread(
                        m,
                        place,
                        vec![verify::op(k, order, scope, 0)],
                        rmw_op == "add",
                    );
                    code.entry((order, scope)).or_default().push((rmw_op, c));
                }
                for (&strong, sc) in &code {
                    for (&weak, wc) in &code {
                        let dominates = weak != strong
                            && wc.len() == sc.len()
                            && wc.iter().zip(sc).all(|(w, s)| match (w, s) {
                                ((wop, Some(w)), (sop, Some(s))) => {
                                    wop == sop && code_dominates(w, s)
                                }
                                _ => false,
                            });
                        if dominates {
                            below
                                .entry((cpu, kind, strong.0, strong.1))
                                .or_default()
                                .push(weak);
                        }
                    }
                }
            }
        }
        // Deterministic lookups (the results do not depend on the order).
        for v in below.values_mut() {
            v.sort_unstable();
            v.dedup();
        }
        Some(Table { below })
    }

    /// The (order, scope) of each operation that compiles to weaker code
    /// than (`kind`, `order`, `scope`) on a CPU thread (`cpu`) or not.
    pub fn weaker(&self, cpu: bool, kind: OpKind, order: u8, scope: u8) -> &[Annotation] {
        self.below
            .get(&(cpu, kind, order, scope))
            .map_or(&[][..], Vec::as_slice)
    }

    /// The orders and scopes of `p`'s operations, thread by thread, packed
    /// [`ANNOTATION_BITS`] bits each: what tells apart the programs of one
    /// shape. `None` past [`MAX_OPS`] operations.
    fn annotations(p: &Program) -> Option<u64> {
        let mut key = 0u64;
        for (n, o) in p.threads.iter().flat_map(|t| &t.ops).enumerate() {
            if n == MAX_OPS || o.order >= 8 || o.scope >= 4 {
                return None;
            }
            key |= annotation_bits((o.order, o.scope)) << (n * ANNOTATION_BITS);
        }
        Some(key)
    }

    /// What the checked programs of `p`'s shape say about `p`: the
    /// intersection of the recorded states (a set holding every target
    /// state outside the SC states) of every checked program that is `p`
    /// with one operation weakened, as a mask over the shape's numbered
    /// states ([`Shape::states_of`]); `None` when there is none.
    pub fn bound_mask(&self, shape: &Shape, p: &Program) -> Option<u64> {
        if p.threads.iter().any(|t| t.ops.iter().any(|o| o.remote)) {
            return None;
        }
        let key = Self::annotations(p)?;
        let mut out: Option<u64> = None;
        let mut shift = 0;
        for t in &p.threads {
            let cpu = t.place == Place::Cpu;
            for o in &t.ops {
                let own = annotation_bits((o.order, o.scope)) << shift;
                for &weak in self.weaker(cpu, o.kind, o.order, o.scope) {
                    let weaker = key ^ own ^ (annotation_bits(weak) << shift);
                    if let Some(&known) = shape.known.get(&weaker) {
                        let b = out.map_or(known, |b| b & known);
                        if b == 0 {
                            return Some(0);
                        }
                        out = Some(b);
                    }
                }
                shift += ANNOTATION_BITS;
            }
        }
        out
    }
}

/// Bits per operation in a program's packed annotations (order < 8,
/// scope < 4).
const ANNOTATION_BITS: usize = 5;

/// Operations a packed annotation key holds; programs with more are not
/// recorded (and so are checked without the table's help).
const MAX_OPS: usize = 64 / ANNOTATION_BITS;

/// One operation's (order, scope), packed.
fn annotation_bits((order, scope): Annotation) -> u64 {
    u64::from(order) | (u64::from(scope) << 3)
}

/// The checked programs of one shape, each with a set of states holding
/// every state its target allows outside the SC states. States are
/// numbered per shape and a set is a bit mask over them; a program whose
/// set holds a state numbered 64 or more is not recorded.
pub struct Shape {
    known: HashMap<u64, u64, FastHash>,
    states: Vec<Vec<Value>>,
    index: HashMap<Vec<Value>, usize, FastHash>,
    /// Programs (packed annotations) with states (a mask) their source was
    /// found to allow, by [`Shape::climb`].
    confirmed: Vec<(u64, u64)>,
    /// The SC states of the shape's programs (computed for the first one
    /// that needs them; `None` inside when they cannot be computed).
    pub sc: Option<Option<BTreeSet<Vec<Value>>>>,
    /// At most this many programs are recorded ([`MAX_RECORDS`]).
    limit: usize,
}

/// Programs a shape records at most (each record is two words), and
/// climbs it keeps at most: a worker's memory stays bounded whatever the
/// shape's size. Programs past the limit are still checked, with what the
/// records hold (fewer records only mean fewer decisions without a run).
pub const MAX_RECORDS: usize = 1 << 22;
const MAX_CLIMBS: usize = 4096;

impl Default for Shape {
    fn default() -> Shape {
        Shape {
            known: HashMap::default(),
            states: Vec::new(),
            index: HashMap::default(),
            confirmed: Vec::new(),
            sc: None,
            limit: MAX_RECORDS,
        }
    }
}

impl Shape {
    /// Records that `p`'s target allows no state outside `states` but its
    /// SC states.
    pub fn record(&mut self, p: &Program, states: &StateSet) {
        let Some(key) = Table::annotations(p) else {
            return;
        };
        let mut mask = 0u64;
        for st in states {
            let i = match self.index.get(st) {
                Some(&i) => i,
                None => {
                    self.states.push(st.clone());
                    self.index.insert(st.clone(), self.states.len() - 1);
                    self.states.len() - 1
                }
            };
            if i >= 64 {
                return;
            }
            mask |= 1 << i;
        }
        self.insert(key, mask);
    }

    fn insert(&mut self, key: u64, mask: u64) {
        if self.known.len() < self.limit || self.known.contains_key(&key) {
            self.known.insert(key, mask);
        }
    }

    /// Records that `p`'s target allows no state outside those of `mask`
    /// but its SC states.
    pub fn record_mask(&mut self, p: &Program, mask: u64) {
        if let Some(key) = Table::annotations(p) {
            self.insert(key, mask);
        }
    }

    /// The states of `mask`.
    pub fn states_of(&self, mask: u64) -> StateSet {
        (0..self.states.len().min(64))
            .filter(|i| mask & (1 << i) != 0)
            .map(|i| self.states[i].clone())
            .collect()
    }
}

/// Whether order `a` is at most order `b` for the source models `sc11`
/// and `rc11` (indices into [`super::format::ORDERS`], `na rlx acq rel
/// acq_rel sc`): `rlx < acq, rel < acq_rel < sc`; `na` is only itself (a
/// non-atomic location stays non-atomic).
fn source_order_le(a: u8, b: u8) -> bool {
    a == b
        || match a {
            1 => b >= 2,
            2 | 3 => b >= 4,
            4 => b == 5,
            _ => false,
        }
}

/// Whether an operation annotated `a` is at most one annotated `b` in the
/// source: order at most ([`source_order_le`]) and scope at most (`wg <
/// dev < sys`; unscoped only itself).
fn source_le((ao, asc): Annotation, (bo, bsc): Annotation) -> bool {
    source_order_le(ao, bo) && (asc == bsc || (asc >= 1 && asc <= bsc))
}

/// The annotations one step above `a` for an operation of `kind`: the next
/// stronger orders the kind has, and the next wider scope.
fn source_up(kind: OpKind, (order, scope): Annotation) -> Vec<Annotation> {
    if order == 0 {
        return Vec::new();
    }
    let mut out: Vec<Annotation> = enumerate::orders(kind)
        .iter()
        .filter(|&&o| o != order && source_order_le(order, o))
        .filter(|&&o| {
            // Only immediate successors: nothing strictly between.
            !enumerate::orders(kind).iter().any(|&m| {
                m != order && m != o && source_order_le(order, m) && source_order_le(m, o)
            })
        })
        .map(|&o| (o, scope))
        .collect();
    if (1..3).contains(&scope) {
        out.push((order, scope + 1));
    }
    out
}

/// The raises [`Shape::climb`] tries for an operation annotated `a`: first
/// straight to the strongest annotation (`sc`, widest scope), which an
/// operation the state does not depend on takes at once, then each one
/// step above ([`source_up`]).
fn source_raises(kind: OpKind, a: Annotation) -> Vec<Annotation> {
    let mut out = source_up(kind, a);
    let top = (5, if a.1 >= 1 { 3 } else { a.1 });
    if a.0 != 0 && top != a && !out.contains(&top) {
        out.insert(0, top);
    }
    out
}

/// The annotation of operation `n` in a packed key.
fn unpack(key: u64, n: usize) -> Annotation {
    let bits = (key >> (n * ANNOTATION_BITS)) & ((1 << ANNOTATION_BITS) - 1);
    ((bits & 7) as u8, (bits >> 3) as u8)
}

impl Shape {
    /// The states (as a mask) that the source is known to allow for the
    /// program with packed annotations `key` and `ops` operations: those
    /// some source-stronger program of the shape was found to allow.
    fn covered(&self, key: u64, ops: usize) -> u64 {
        self.confirmed
            .iter()
            .filter(|&&(m, _)| (0..ops).all(|n| source_le(unpack(key, n), unpack(m, n))))
            .fold(0, |acc, &(_, mask)| acc | mask)
    }

    /// The states of `mask` that the source is known to allow for `p`
    /// (from [`Shape::climb`]s of earlier programs).
    pub fn known_allowed(&self, p: &Program, mask: u64) -> u64 {
        match Table::annotations(p) {
            Some(key) if mask != 0 => self.covered(key, p.events()) & mask,
            _ => 0,
        }
    }

    /// The mask of `states`, `None` when one is not numbered below 64.
    pub fn mask_of(&self, states: &StateSet) -> Option<u64> {
        states
            .iter()
            .try_fold(0u64, |acc, st| match self.index.get(st) {
                Some(&i) if i < 64 => Some(acc | 1 << i),
                _ => None,
            })
    }

    /// `p`'s source allows every state of `states`: raises `p`'s
    /// operations one step at a time in the source order while `allows`
    /// (a source run) says the raised program still allows all of them,
    /// and records the program reached. The source models' consistent
    /// executions only shrink as orders and scopes grow (docs/mappings.md),
    /// so every program below it allows those states too: later programs
    /// of the shape below it need no source run for them. Returns the
    /// number of source runs made.
    pub fn climb(
        &mut self,
        p: &Program,
        states: &StateSet,
        allows: &mut dyn FnMut(&Program) -> Result<bool, String>,
    ) -> Result<usize, String> {
        let Some(mask) = self.mask_of(states).filter(|&m| m != 0) else {
            return Ok(0);
        };
        if Table::annotations(p).is_none() {
            return Ok(0);
        }
        let mut cur = p.clone();
        let mut failed: Vec<(usize, Annotation)> = Vec::new();
        let mut runs = 0;
        'raise: loop {
            let mut n = 0;
            for t in 0..cur.threads.len() {
                for j in 0..cur.threads[t].ops.len() {
                    let o = cur.threads[t].ops[j];
                    for up in source_raises(o.kind, (o.order, o.scope)) {
                        if failed.contains(&(n, up)) {
                            continue;
                        }
                        let mut next = cur.clone();
                        (next.threads[t].ops[j].order, next.threads[t].ops[j].scope) = up;
                        let known = self.known_allowed(&next, mask) == mask;
                        if known || {
                            runs += 1;
                            allows(&next)?
                        } {
                            cur = next;
                            continue 'raise;
                        }
                        failed.push((n, up));
                    }
                    n += 1;
                }
            }
            break;
        }
        if let Some(key) = Table::annotations(&cur) {
            // Drop what the new entry covers.
            let ops = cur.events();
            self.confirmed.retain(|&(m, mm)| {
                !(mm & !mask == 0 && (0..ops).all(|n| source_le(unpack(m, n), unpack(key, n))))
            });
            if self.confirmed.len() < MAX_CLIMBS {
                self.confirmed.push((key, mask));
            }
        }
        Ok(runs)
    }
}

/// What makes programs one shape: threads, placements, operation kinds
/// and locations.
pub fn shape_key(p: &Program) -> ShapeKey {
    p.threads
        .iter()
        .map(|t| (t.place, t.ops.iter().map(|o| (o.kind, o.loc)).collect()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tags(t: &[&str]) -> Vec<String> {
        t.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn tag_order() {
        assert!(tags_le(&tags(&["WEAK"]), &tags(&["RLX", "CTA"])));
        assert!(tags_le(&tags(&["RLX", "CTA"]), &tags(&["ACQ", "GPU"])));
        assert!(tags_le(&tags(&["ACQ", "GPU"]), &tags(&["ACQ_REL", "GPU"])));
        assert!(tags_le(&tags(&["ACQ_REL", "SYS"]), &tags(&["SC", "SYS"])));
        assert!(!tags_le(&tags(&["ACQ", "GPU"]), &tags(&["REL", "GPU"])));
        assert!(!tags_le(&tags(&["ACQ_REL", "GPU"]), &tags(&["ACQ", "GPU"])));
        assert!(!tags_le(&tags(&["RLX", "GPU"]), &tags(&["RLX", "CTA"])));
        assert!(!tags_le(&tags(&["RLX", "CTA"]), &tags(&["RLX"])));
        assert!(!tags_le(
            &tags(&["RLX", "CTA"]),
            &tags(&["RLX", "CTA", "VOL"])
        ));
        assert!(tags_le(&tags(&["MFENCE"]), &tags(&["MFENCE"])));
    }

    #[test]
    fn source_order() {
        // rlx < acq, rel < acq_rel < sc; na is only itself.
        for (a, b) in [(1, 2), (1, 3), (2, 4), (3, 4), (1, 5), (4, 5), (0, 0)] {
            assert!(source_order_le(a, b), "{a} <= {b}");
        }
        for (a, b) in [(2, 3), (3, 2), (0, 1), (1, 0), (5, 4), (2, 1)] {
            assert!(!source_order_le(a, b), "not {a} <= {b}");
        }
        assert!(source_le((1, 1), (2, 3)));
        assert!(!source_le((1, 2), (2, 1)));
        assert!(!source_le((1, 0), (1, 1)));
        assert_eq!(source_up(OpKind::Load, (1, 1)), vec![(2, 1), (1, 2)]);
        assert_eq!(source_up(OpKind::Load, (2, 3)), vec![(5, 3)]);
        assert_eq!(source_up(OpKind::Rmw, (1, 3)), vec![(2, 3), (3, 3)]);
        assert_eq!(source_up(OpKind::Fence, (3, 1)), vec![(4, 1), (3, 2)]);
        assert!(source_up(OpKind::Store, (0, 0)).is_empty());
        assert_eq!(
            source_raises(OpKind::Load, (1, 1)),
            vec![(5, 3), (2, 1), (1, 2)]
        );
        assert!(source_raises(OpKind::Load, (5, 3)).is_empty());
        // Unscoped (rc11): orders only.
        assert_eq!(source_raises(OpKind::Store, (1, 0)), vec![(5, 0), (3, 0)]);
    }

    fn program(annotations: &[Annotation]) -> Program {
        let thread = |i: usize, (order, scope): Annotation| enumerate::Thread {
            place: Place::Gpu {
                dev: 0,
                wg: i as u8,
            },
            ops: vec![enumerate::Op {
                kind: OpKind::Load,
                order,
                scope,
                loc: i as u8,
                remote: false,
            }],
        };
        Program {
            threads: annotations
                .iter()
                .enumerate()
                .map(|(i, &a)| thread(i, a))
                .collect(),
            rmw_add: false,
        }
    }

    #[test]
    fn records_stop_at_the_limit() {
        let mut shape = Shape {
            limit: 2,
            ..Shape::default()
        };
        let state: StateSet = [vec![Value::Int(1)]].into_iter().collect();
        let programs = [
            program(&[(1, 1), (1, 1)]),
            program(&[(1, 1), (1, 2)]),
            program(&[(1, 1), (1, 3)]),
        ];
        for p in &programs {
            shape.record(p, &state);
        }
        let table = Table {
            below: [((false, OpKind::Load, 1, 3), vec![(1, 2)])]
                .into_iter()
                .collect(),
        };
        // The third program's record was dropped; the second's is there.
        assert_eq!(shape.known.len(), 2);
        assert!(
            !shape
                .known
                .contains_key(&Table::annotations(&programs[2]).unwrap())
        );
        let above = program(&[(1, 1), (1, 3)]);
        assert_eq!(table.bound_mask(&shape, &above), Some(1));
        let mut past = shape.known.clone();
        past.remove(&Table::annotations(&programs[1]).unwrap());
        shape.known = past;
        assert_eq!(table.bound_mask(&shape, &above), None);
        // An existing record may still be updated at the limit.
        shape.record_mask(&programs[0], 0);
        assert_eq!(shape.known[&Table::annotations(&programs[0]).unwrap()], 0);
    }

    #[test]
    fn climb_covers_the_programs_below() {
        // A source that allows the state unless the first load is `sc`.
        let mut shape = Shape::default();
        let state: StateSet = [vec![Value::Int(1)]].into_iter().collect();
        let p = program(&[(1, 1), (1, 1)]);
        shape.record(&p, &state);
        let mut asked = Vec::new();
        let mut allows = |q: &Program| {
            asked.push(q.clone());
            Ok(q.threads[0].ops[0].order != 5)
        };
        let runs = shape.climb(&p, &state, &mut allows).unwrap();
        assert_eq!(runs, asked.len());
        // Straight to the top for the second load; one step at a time for
        // the first, never asking a raise that failed below again.
        assert_eq!(runs, 7, "{asked:?}");
        let mask = shape.mask_of(&state).unwrap();
        assert_eq!(mask, 1);
        for below in [[(2, 3), (5, 3)], [(1, 2), (2, 1)], [(2, 1), (5, 1)]] {
            assert_eq!(
                shape.known_allowed(&program(&below), mask),
                mask,
                "{below:?}"
            );
        }
        for above in [[(5, 1), (1, 1)], [(5, 3), (5, 3)]] {
            assert_eq!(shape.known_allowed(&program(&above), mask), 0, "{above:?}");
        }
    }
}
