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

    /// The orders and scopes of `p`'s operations, thread by thread: what
    /// tells apart the programs of one shape.
    fn annotations(p: &Program) -> Vec<Annotation> {
        p.threads
            .iter()
            .flat_map(|t| t.ops.iter().map(|o| (o.order, o.scope)))
            .collect()
    }

    /// What the checked programs of `p`'s shape say about `p`: the
    /// intersection of the target states outside the SC states of every
    /// checked program that is `p` with one operation weakened; `None`
    /// when there is none.
    pub fn bound(&self, shape: &Shape, p: &Program) -> Option<StateSet> {
        if p.threads.iter().any(|t| t.ops.iter().any(|o| o.remote)) {
            return None;
        }
        let mut key = Self::annotations(p);
        let mut out: Option<StateSet> = None;
        let mut j = 0;
        for t in &p.threads {
            let cpu = t.place == Place::Cpu;
            for o in &t.ops {
                let own = key[j];
                for &weak in self.weaker(cpu, o.kind, o.order, o.scope) {
                    key[j] = weak;
                    if let Some(known) = shape.known.get(&key) {
                        out = Some(match out {
                            None => known.clone(),
                            Some(b) => b.intersection(known).cloned().collect(),
                        });
                        if out.as_ref().is_some_and(StateSet::is_empty) {
                            return out;
                        }
                    }
                }
                key[j] = own;
                j += 1;
            }
        }
        out
    }
}

/// The checked programs of one shape, with their target states outside
/// the SC states.
#[derive(Default)]
pub struct Shape {
    known: HashMap<Vec<Annotation>, StateSet>,
    /// The SC states of the shape's programs (computed for the first one
    /// that needs them; `None` inside when they cannot be computed).
    pub sc: Option<Option<BTreeSet<Vec<Value>>>>,
}

impl Shape {
    /// Records that `p`'s target allows exactly `states` outside its SC
    /// states.
    pub fn record(&mut self, p: &Program, states: StateSet) {
        self.known.insert(Table::annotations(p), states);
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

/// Whether `p` has shape `key` (as [`shape_key`] would say, without
/// building it).
pub fn has_shape(p: &Program, key: &ShapeKey) -> bool {
    p.threads.len() == key.len()
        && p.threads.iter().zip(key).all(|(t, (place, ops))| {
            t.place == *place
                && t.ops.len() == ops.len()
                && t.ops
                    .iter()
                    .zip(ops)
                    .all(|(o, &(k, l))| o.kind == k && o.loc == l)
        })
}

/// Programs in one place for a shape's sequential check.
pub type Group = Vec<(usize, enumerate::Program)>;

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
}
