//! The sets `with ... from`s choose from, kept across evaluations: per
//! skeleton ([`WithSources`]) and, up to a renumbering of the events, per
//! model ([`SharedWithSets`]).

use super::super::canon::{self, Canonical};
use super::{CWithFrom, Program, State, Value};
use crate::cat::ast::Loc;
use crate::fast_hash::FastHash;
use std::sync::Arc as Rc;

/// A kept set's statement (its set's place and variable) and the key of
/// the values it reads.
type WithKey = (Loc, usize, Vec<u64>);

/// The sets `with ... from`s choose from, kept across the evaluations of
/// one skeleton: by statement and by the values of the non-static
/// environment names each set reads (see [`Program::expr_inputs`]). A set
/// that reads a `with` choice, bell tags or scope tags is not kept.
/// With a [`SharedWithSets`], a set not kept here is looked for among
/// those of every skeleton of every test, up to a renumbering of the
/// events.
#[derive(Default)]
pub struct WithSources {
    /// Per statement (its set's place and variable): the non-static names
    /// its set reads, or `None` when it is not kept.
    inputs: std::collections::HashMap<(Loc, usize), Option<Vec<String>>, FastHash>,
    values: std::collections::HashMap<WithKey, Vec<Value>, FastHash>,
    /// The model's sets across skeletons (see [`SharedWithSets`]).
    pub(crate) shared: Option<Rc<SharedWithSets>>,
}

/// Sets [`WithSources`] keeps before it starts again.
const WITH_SOURCES_LIMIT: usize = 256;

/// The sets of a model's `with ... from`s, shared by every skeleton the
/// model judges: by statement and by the canonical key of every name the
/// set reads ([`canon::canonical_numbering`]), each member
/// renumbered in canonical order. A set found here is the set the
/// statement gives, renumbered back and sorted as a set of values is.
#[derive(Default)]
pub struct SharedWithSets {
    sets: std::sync::Mutex<std::collections::HashMap<WithKey, Rc<Vec<Value>>, FastHash>>,
}

/// Sets [`SharedWithSets`] keeps before it starts again.
const SHARED_WITH_SETS_LIMIT: usize = 4096;

/// The largest set [`SharedWithSets`] keeps (larger ones are kept per
/// skeleton only).
const SHARED_WITH_SET_SIZE: usize = 1024;

impl SharedWithSets {
    /// How many sets are kept.
    pub(crate) fn len(&self) -> usize {
        self.sets.lock().map_or(0, |s| s.len())
    }

    /// The statement's key and the canonical order of `st`'s events, when
    /// its set reads only environment names.
    pub(super) fn canonical(
        &self,
        prog: &Program,
        w: &CWithFrom,
        st: &State<'_>,
    ) -> Option<(WithKey, Canonical)> {
        let inputs = w
            .inputs
            .get_or_init(|| prog.expr_inputs(&w.expr))
            .as_ref()?;
        let (names, restricted) = prog.input_names(inputs);
        let support = canon::Support::of(inputs.local, &restricted);
        let mut c = canon::canonical_numbering(st.env, &names, support)?;
        let key = std::mem::take(&mut c.key);
        Some(((w.expr.loc, w.slot, key), c))
    }

    /// The set kept under `key`, renumbered back from `c`'s order and
    /// sorted.
    pub(super) fn get(&self, key: &WithKey, c: &canon::Canonical) -> Option<Vec<Value>> {
        let members = self.sets.lock().ok()?.get(key).cloned()?;
        let back = canon::inverse(&c.order, c.len);
        let n = c.order.len();
        let mut out = members
            .iter()
            .map(|v| canon::renumber(v, &back, n))
            .collect::<Option<Vec<Value>>>()?;
        out.sort_by(super::super::func::compare);
        Some(out)
    }

    /// Keeps `members` under `key`, renumbered in `c`'s order, when every
    /// member is a value a renumbering reaches within the numbered events.
    pub(super) fn put(&self, key: WithKey, c: &Canonical, members: &[Value]) {
        if members.len() > SHARED_WITH_SET_SIZE {
            return;
        }
        let Some(renumbered) = members
            .iter()
            .map(|v| canon::renumber(v, &c.order, c.len))
            .collect::<Option<Vec<Value>>>()
        else {
            return;
        };
        if let Ok(mut sets) = self.sets.lock() {
            if sets.len() >= SHARED_WITH_SETS_LIMIT {
                sets.clear();
            }
            sets.insert(key, Rc::new(renumbered));
        }
    }
}

impl WithSources {
    /// The set kept under `key`.
    pub(super) fn known(&self, key: &WithKey) -> Option<&Vec<Value>> {
        self.values.get(key)
    }

    /// Keeps `members` under `key`.
    pub(super) fn remember(&mut self, key: WithKey, members: Vec<Value>) {
        if self.values.len() >= WITH_SOURCES_LIMIT {
            self.values.clear();
        }
        self.values.insert(key, members);
    }

    /// The key of statement `w`'s set on `st`'s environment, when it is kept.
    pub(super) fn key(&mut self, prog: &Program, w: &CWithFrom, st: &State<'_>) -> Option<WithKey> {
        let names = self
            .inputs
            .entry((w.expr.loc, w.slot))
            .or_insert_with(|| {
                let ix = w
                    .inputs
                    .get_or_init(|| prog.expr_inputs(&w.expr))
                    .as_ref()?;
                Some(
                    ix.names
                        .iter()
                        .map(|&i| prog.env_names[i].name.clone())
                        .filter(|n| !st.env.is_static(n))
                        .collect(),
                )
            })
            .as_ref()?;
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        Some((w.expr.loc, w.slot, canon::env_key(st.env, &names)))
    }
}
