//! Presents one candidate execution to the cat interpreter: the predefined
//! sets and relations of docs/cat-environment.md.

use super::CheckError;
use super::candidate::{Eval, Skeleton, Values};
use super::thread::EventKind;
use crate::cat::Environment;
use crate::diag::Diagnostic;
use crate::ir::Value;
use crate::rel::{BitSet, Relation};

/// A candidate: its skeleton plus the chosen `rf`, `co` and barrier matching.
pub struct CandidateEnv<'s, 'a> {
    skel: &'s Skeleton<'a>,
    rf: &'s Relation,
    co: &'s Relation,
    bar: &'s Relation,
}

impl<'s, 'a> CandidateEnv<'s, 'a> {
    /// Wraps the parts of one candidate.
    pub fn new(
        skel: &'s Skeleton<'a>,
        rf: &'s Relation,
        co: &'s Relation,
        bar: &'s Relation,
    ) -> Self {
        CandidateEnv { skel, rf, co, bar }
    }

    fn rel(&self, name: &str) -> &Relation {
        &self.skel.rels[name]
    }
}

/// Predefined names whose value depends on the candidate's `rf`/`co`.
const DYNAMIC: &[&str] = &[
    "rf", "co", "fr", "rfe", "rfi", "coe", "coi", "fre", "fri", "bar",
];

/// Whether predefined `name` depends on the candidate's choices (`rf`,
/// `co`, barrier matching) rather than on the skeleton alone.
pub fn is_dynamic(name: &str) -> bool {
    DYNAMIC.contains(&name)
}

/// True for names that denote tags (upper case, digits, `_`): unknown ones
/// are empty sets rather than errors.
pub fn is_tag_name(name: &str) -> bool {
    name.chars().next().is_some_and(|c| c.is_ascii_uppercase())
        && name
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

impl Environment for CandidateEnv<'_, '_> {
    fn num_events(&self) -> usize {
        self.skel.len()
    }

    fn set(&self, name: &str) -> Option<BitSet> {
        match self.skel.sets.get(name) {
            Some(s) => Some(s.clone()),
            None if is_tag_name(name) => Some(BitSet::new(self.skel.len())),
            None => None,
        }
    }

    fn relation(&self, name: &str) -> Option<Relation> {
        Some(match name {
            "rf" => self.rf.clone(),
            "co" => self.co.clone(),
            "fr" => fr(self.rf, self.co),
            "rfe" => self.rf.intersection(self.rel("ext")),
            "rfi" => self.rf.intersection(self.rel("int")),
            "coe" => self.co.intersection(self.rel("ext")),
            "coi" => self.co.intersection(self.rel("int")),
            "fre" => fr(self.rf, self.co).intersection(self.rel("ext")),
            "fri" => fr(self.rf, self.co).intersection(self.rel("int")),
            "bar" => self.bar.clone(),
            _ => return self.skel.rels.get(name).cloned(),
        })
    }

    /// Everything but `rf`, `co` and what is derived from them (including
    /// `bar`, whose operands may be read values) is fixed by the skeleton.
    fn is_static(&self, name: &str) -> bool {
        !is_dynamic(name)
    }
}

fn fr(rf: &Relation, co: &Relation) -> Relation {
    rf.inverse().compose(co)
}

/// Matches barrier events: same id and count values, same occurrence number
/// of that (id, count) in their threads, and the same instance of every
/// scope level the barrier is tagged with (`CTA` → same `cta`).
pub fn barrier_relation(skel: &Skeleton, values: &Values) -> Result<Relation, CheckError> {
    let n = skel.len();
    let mut bar = Relation::new(n);
    // (event, key, occurrence)
    let mut keyed: Vec<(usize, (Value, Option<Value>), usize)> = Vec::new();
    for (t, p) in skel.paths.iter().enumerate() {
        let mut seen: Vec<((Value, Option<Value>), usize)> = Vec::new();
        for (i, e) in p.events.iter().enumerate() {
            let (EventKind::Barrier(_), Some((id, count))) = (e.kind, &e.barrier) else {
                continue;
            };
            let g = skel.global(t, i);
            let eval = |s: &super::thread::Sym| -> Result<Value, CheckError> {
                match values.sym(t, s, &mut Vec::new()) {
                    Eval::Known(v) => Ok(v),
                    _ => {
                        let ins = &skel.test.threads[t].code[e.instr];
                        Err(CheckError::Diagnostic(Diagnostic::new(
                            skel.test.name.clone(),
                            ins.pos,
                            "barrier operand has no value in this execution",
                        )))
                    }
                }
            };
            let key = (eval(id)?, count.as_ref().map(|c| eval(c)).transpose()?);
            let occ = match seen.iter_mut().find(|(k, _)| *k == key) {
                Some((_, c)) => {
                    *c += 1;
                    *c
                }
                None => {
                    seen.push((key, 0));
                    0
                }
            };
            keyed.push((g, key, occ));
        }
    }
    let levels = super::candidate::scope_levels(skel.test);
    for &(a, ka, oa) in &keyed {
        for &(b, kb, ob) in &keyed {
            if a == b || ka != kb || oa != ob {
                continue;
            }
            let same_scope = levels.iter().all(|l| {
                let tag = l.to_ascii_uppercase();
                let tagged = |e: usize| skel.sets.get(&tag).is_some_and(|s| s.contains(e));
                !(tagged(a) || tagged(b)) || skel.rels[l.as_str()].contains(a, b)
            });
            if same_scope {
                bar.add(a, b);
            }
        }
    }
    Ok(bar)
}
