//! Keys of an environment's values, exact or up to a renumbering of the
//! events, for the memos that keep a model's answers across candidates,
//! skeletons and tests.
//!
//! A model's values do not depend on how the events are numbered: cat has
//! no operation that reads an event's number, so renumbering the events of
//! an environment renumbers every value computed from it the same way. Two
//! environments with the same canonical key ([`canonical_numbering`]) are
//! one renumbering apart on the names the key covers, so an answer that is
//! a truth value is the same for both, and a value found for one is the
//! other's once renumbered back ([`renumber`]).

use super::Environment;
use super::eval::Value;
use crate::rel::{BitSet, Relation};

/// The values of `names` on `env`, as words: the number of events, then
/// per name whether it is static, its kind (set, relation, unknown) and
/// its members.
pub(crate) fn env_key(env: &dyn Environment, names: &[&str]) -> Vec<u64> {
    let n = env.num_events();
    let mut key = vec![n as u64];
    for &name in names {
        key.push(if env.is_static(name) { 4 } else { 0 });
        if let Some(s) = env.set(name) {
            key.push(1);
            key.push(s.words().len() as u64);
            key.extend_from_slice(s.words());
        } else if let Some(r) = env.relation(name) {
            key.push(2);
            key.push(r.count() as u64);
            key.extend(r.pairs().map(|(a, b)| (a * n + b) as u64));
        } else {
            key.push(3);
        }
    }
    key
}

/// An environment's key up to a renumbering of its events, and the
/// renumbering that puts it in canonical order.
pub(crate) struct Canonical {
    /// Equal for two environments exactly when [`Canonical::order`] maps
    /// each onto the same values (so one renumbering apart).
    pub key: Vec<u64>,
    /// Per event, its number in canonical order; `usize::MAX` for an event
    /// outside the support (see [`Support`]).
    pub order: Vec<usize>,
    /// How many events the canonical order numbers.
    pub len: usize,
}

/// Which events a canonical key covers.
#[derive(Clone, Copy)]
pub(crate) enum Support<'a> {
    /// Every event.
    All,
    /// The events the names hold (the members of the sets, the events
    /// the relations relate), for a value local to its inputs
    /// ([`super::eval::Inputs::local`]); the names listed are read only on
    /// the events the others hold ([`super::eval::Inputs::restricted`]),
    /// so they count on those events only. A relation listed must be an
    /// equivalence.
    Inputs { restricted: &'a [&'a str] },
}

impl<'a> Support<'a> {
    /// The support of a value that reads `restricted` restricted: its
    /// inputs' events when it is `local`, else every event.
    pub(crate) fn of(local: bool, restricted: &'a [&'a str]) -> Self {
        if local {
            Support::Inputs { restricted }
        } else {
            Support::All
        }
    }
}

/// The key of `names` on `env` up to a renumbering of the events, when
/// `names` are at most 60 sets and any relations.
///
/// Only the events of `support` are numbered. The first relation that is
/// an equivalence on the events it relates (herd's `loc`) groups them into
/// classes. An event's signature is its memberships in the sets and its
/// degrees in the other relations. Events are ordered by class (the events
/// outside every class first, then the classes by the sorted signatures of
/// their events), and within a group by signature; ties keep the events'
/// order. The key is the signatures in that order, the classes' sizes, and
/// every other relation renumbered. Two environments with equal keys
/// agree, once each is renumbered by its own order, on every name: the
/// key is never shared by environments that are not one renumbering
/// apart, whatever the ties. Ties only decide how often isomorphic
/// environments meet.
pub(crate) fn canonical_numbering(
    env: &dyn Environment,
    names: &[&str],
    support: Support<'_>,
) -> Option<Canonical> {
    let n = env.num_events();
    if names.len() > 60 {
        return None;
    }
    let restricted = |name: &str| match support {
        Support::All => false,
        Support::Inputs { restricted } => restricted.contains(&name),
    };
    let mut key = vec![u64::MAX];
    let mut member = vec![0u64; n];
    let mut rels: Vec<(Relation, bool)> = Vec::new();
    let mut held = BitSet::new(n);
    for (k, &name) in names.iter().enumerate() {
        key.push(if env.is_static(name) { 4 } else { 0 });
        let only_restricted = restricted(name);
        if let Some(s) = env.set(name) {
            key.push(1);
            for e in s.iter() {
                member[e] |= 1 << k;
                if !only_restricted {
                    held.insert(e);
                }
            }
        } else if let Some(r) = env.relation(name) {
            key.push(2);
            if !only_restricted {
                for (a, b) in r.pairs() {
                    held.insert(a);
                    held.insert(b);
                }
            }
            rels.push((r, only_restricted));
        } else {
            key.push(3);
        }
    }
    let inside = |e: usize| matches!(support, Support::All) || held.contains(e);
    // The classes of the first equivalence among the relations, on the
    // support; a restricted relation must be that one.
    let mut grouped = None;
    for (i, (r, only_restricted)) in rels.iter().enumerate() {
        match classes_of(r, n) {
            Some(classes) => {
                grouped = Some((i, classes));
                break;
            }
            None if *only_restricted => return None,
            None => {}
        }
    }
    let (equivalence, classes) = match grouped {
        Some((i, classes)) => (Some(i), classes),
        None => (None, Vec::new()),
    };
    if rels
        .iter()
        .enumerate()
        .any(|(i, (_, only_restricted))| *only_restricted && Some(i) != equivalence)
    {
        return None;
    }
    let classes: Vec<Vec<usize>> = classes
        .into_iter()
        .map(|c| c.into_iter().filter(|&e| inside(e)).collect::<Vec<_>>())
        .filter(|c| !c.is_empty())
        .collect();
    let mut in_class = vec![false; n];
    for c in &classes {
        for &e in c {
            in_class[e] = true;
        }
    }
    // Each event's signature: its memberships, then its out- and in-degree
    // in each relation besides the equivalence (the initial write of a
    // location in `co0`, say), so that events alike in the sets but not in
    // the relations are told apart before ties fall back on numbers. One
    // row of `width` words per event.
    let others: Vec<&Relation> = (0..rels.len())
        .filter(|&i| Some(i) != equivalence)
        .map(|i| &rels[i].0)
        .collect();
    let width = 1 + 2 * others.len();
    let mut sigs = vec![0u64; n * width];
    for (e, &m) in member.iter().enumerate() {
        sigs[e * width] = m;
    }
    for (k, r) in others.iter().enumerate() {
        for a in 0..n {
            let mut out = 0;
            for (w, &word) in r.row(a).iter().enumerate() {
                out += u64::from(word.count_ones());
                let mut bits = word;
                while bits != 0 {
                    let b = w * 64 + bits.trailing_zeros() as usize;
                    sigs[b * width + 2 + 2 * k] += 1;
                    bits &= bits - 1;
                }
            }
            sigs[a * width + 1 + 2 * k] = out;
        }
    }
    let sig = |e: usize| &sigs[e * width..(e + 1) * width];
    let by_signature =
        |group: &mut Vec<usize>| group.sort_by(|&a, &b| (sig(a), a).cmp(&(sig(b), b)));
    let mut outside: Vec<usize> = (0..n).filter(|&e| inside(e) && !in_class[e]).collect();
    by_signature(&mut outside);
    let mut classes: Vec<(Vec<&[u64]>, Vec<usize>)> = classes
        .into_iter()
        .map(|mut c| {
            by_signature(&mut c);
            (c.iter().map(|&e| sig(e)).collect(), c)
        })
        .collect();
    classes.sort();
    let len = outside.len() + classes.iter().map(|(_, c)| c.len()).sum::<usize>();
    key.push(len as u64);
    key.push(equivalence.map_or(u64::MAX, |i| i as u64));
    key.push(outside.len() as u64);
    for &e in &outside {
        key.extend_from_slice(sig(e));
    }
    for (sigs, _) in &classes {
        key.push(sigs.len() as u64);
        for s in sigs {
            key.extend_from_slice(s);
        }
    }
    let mut order = vec![usize::MAX; n];
    let events = outside.iter().chain(classes.iter().flat_map(|(_, c)| c));
    for (pos, &e) in events.enumerate() {
        order[e] = pos;
    }
    for r in &others {
        let mut pairs: Vec<u64> = r
            .pairs()
            .map(|(a, b)| (order[a] * len + order[b]) as u64)
            .collect();
        pairs.sort_unstable();
        key.push(pairs.len() as u64);
        key.extend(pairs);
    }
    Some(Canonical { key, order, len })
}

/// The classes of `r` when it is an equivalence on the events it relates
/// (reflexive, symmetric and transitive there, and relating no other).
fn classes_of(r: &Relation, n: usize) -> Option<Vec<Vec<usize>>> {
    let mut classes = Vec::new();
    let mut seen = vec![false; n];
    let related = r.range();
    let has = |row: &[u64], b: usize| row[b / 64] >> (b % 64) & 1 == 1;
    for e in 0..n {
        if seen[e] {
            continue;
        }
        let row = r.row(e);
        if row.iter().all(|&w| w == 0) {
            if related.contains(e) {
                return None;
            }
            continue;
        }
        if !has(row, e) {
            return None;
        }
        let mut class = Vec::new();
        for (w, &word) in row.iter().enumerate() {
            let mut bits = word;
            while bits != 0 {
                let b = w * 64 + bits.trailing_zeros() as usize;
                if seen[b] || r.row(b) != row {
                    return None;
                }
                seen[b] = true;
                class.push(b);
                bits &= bits - 1;
            }
        }
        classes.push(class);
    }
    Some(classes)
}

/// `v` with each event `e` renumbered `to[e]`, over `len` events, for the
/// values a renumbering reaches (sets, relations, events, `{}`); `None`
/// for others, and for a value holding an event `to` leaves out
/// (`usize::MAX`).
pub(crate) fn renumber(v: &Value, to: &[usize], len: usize) -> Option<Value> {
    let n = to.len();
    let map = |e: usize| Some(to[e]).filter(|&x| x < len);
    Some(match v {
        Value::Empty => Value::Empty,
        Value::Event(e) => Value::Event(map(*e)?),
        Value::Set(s) if s.universe() == n => {
            let mut out = BitSet::new(len);
            for e in s.iter() {
                out.insert(map(e)?);
            }
            Value::Set(out)
        }
        Value::Rel(r) if r.universe() == n => {
            let mut out = Relation::new(len);
            for (a, b) in r.pairs() {
                out.add(map(a)?, map(b)?);
            }
            Value::Rel(out)
        }
        _ => return None,
    })
}

/// The renumbering back from a canonical order of `len` events to the
/// `order.len()` events it numbers.
pub(crate) fn inverse(order: &[usize], len: usize) -> Vec<usize> {
    let mut back = vec![0; len];
    for (e, &pos) in order.iter().enumerate() {
        if pos < len {
            back[pos] = e;
        }
    }
    back
}
