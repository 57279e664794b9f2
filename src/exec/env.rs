//! Presents one candidate execution to the cat interpreter: the predefined
//! sets and relations of docs/cat-environment.md.

use super::candidate::Skeleton;
use crate::cat::Environment;
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
        !DYNAMIC.contains(&name)
    }
}

fn fr(rf: &Relation, co: &Relation) -> Relation {
    rf.inverse().compose(co)
}
