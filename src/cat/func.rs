//! herd's functional tier: operations on the values beyond sets and
//! relations (the polymorphic `{}`, events, tuples, sets of values,
//! functions) and the built-ins that produce them (`classes-loc`,
//! `linearisations`).
//!
//! Sets of values are kept sorted by [`compare`] without duplicates, so
//! `{a, b}` and `{b, a}` are the same value and `++` adds an element once,
//! as in herd.

use super::ast::{BinOp, Error, Loc, UnOp};
use super::eval::{Prim, Value};
use crate::rel::{BitSet, Relation};
use std::cmp::Ordering;
use std::ops::ControlFlow;
use std::sync::Arc as Rc;

type Res<T> = Result<T, Box<Error>>;

/// A total order on values (the order of sets of values).
pub fn compare(a: &Value, b: &Value) -> Ordering {
    fn rank(v: &Value) -> u8 {
        match v {
            Value::Empty => 0,
            Value::Event(_) => 1,
            Value::Set(_) => 2,
            Value::Rel(_) => 3,
            Value::Tuple(_) => 4,
            Value::ValSet(_) => 5,
            Value::Prim(_) => 6,
            Value::Clo(_) => 7,
            Value::Tag(_) => 8,
        }
    }
    match (a, b) {
        (Value::Event(x), Value::Event(y)) => x.cmp(y),
        (Value::Set(x), Value::Set(y)) => x.words().cmp(y.words()),
        (Value::Rel(x), Value::Rel(y)) => {
            let n = x.universe().min(y.universe());
            for i in 0..n {
                match x.row(i).cmp(y.row(i)) {
                    Ordering::Equal => {}
                    o => return o,
                }
            }
            x.universe().cmp(&y.universe())
        }
        (Value::Tuple(x), Value::Tuple(y)) => cmp_seq(x, y),
        (Value::ValSet(x), Value::ValSet(y)) => cmp_seq(x, y),
        (Value::Prim(x), Value::Prim(y)) => x.cmp(y),
        (Value::Tag(x), Value::Tag(y)) => x.cmp(y),
        (Value::Clo(x), Value::Clo(y)) => (Rc::as_ptr(x) as usize).cmp(&(Rc::as_ptr(y) as usize)),
        _ => rank(a).cmp(&rank(b)),
    }
}

fn cmp_seq(x: &[Value], y: &[Value]) -> Ordering {
    for (a, b) in x.iter().zip(y) {
        match compare(a, b) {
            Ordering::Equal => {}
            o => return o,
        }
    }
    x.len().cmp(&y.len())
}

/// The set of the given values (`{}` when there are none).
pub fn valset(mut vals: Vec<Value>) -> Value {
    if vals.is_empty() {
        return Value::Empty;
    }
    vals.sort_by(compare);
    vals.dedup_by(|a, b| compare(a, b) == Ordering::Equal);
    Value::ValSet(Rc::new(vals))
}

fn members(v: Value) -> Option<Vec<Value>> {
    match v {
        Value::Empty => Some(Vec::new()),
        Value::ValSet(vs) => Some(Rc::try_unwrap(vs).unwrap_or_else(|rc| (*rc).clone())),
        _ => None,
    }
}

/// Takes a set apart for `match`: `None` when empty, else its first member
/// and the rest. Event sets give events, relations give pairs of events.
pub fn split(v: Value, loc: Loc) -> Res<Option<(Value, Value)>> {
    match v {
        Value::Empty => Ok(None),
        Value::ValSet(vs) => {
            if vs.is_empty() {
                return Ok(None);
            }
            let mut rest = Rc::try_unwrap(vs).unwrap_or_else(|rc| (*rc).clone());
            let first = rest.remove(0);
            let rest = if rest.is_empty() {
                Value::Empty
            } else {
                Value::ValSet(Rc::new(rest))
            };
            Ok(Some((first, rest)))
        }
        Value::Set(mut s) => match s.first() {
            None => Ok(None),
            Some(e) => {
                s.remove(e);
                Ok(Some((Value::Event(e), Value::Set(s))))
            }
        },
        Value::Rel(mut r) => match first_pair(&r) {
            None => Ok(None),
            Some((a, b)) => {
                r.remove(a, b);
                Ok(Some((
                    Value::Tuple(vec![Value::Event(a), Value::Event(b)]),
                    Value::Rel(r),
                )))
            }
        },
        other => Err(Box::new(Error::new(
            loc,
            format!(
                "set-matching on a value that is not a set: {}",
                other.kind().describe()
            ),
        ))),
    }
}

fn first_pair(r: &Relation) -> Option<(usize, usize)> {
    r.pairs().next()
}

/// `{}` given to a built-in: the empty set or relation it expects.
pub fn normalise_empty(v: Value, p: Prim, n: usize) -> Value {
    match (v, p) {
        (Value::Empty, Prim::FenceRel | Prim::Partition | Prim::PageTableStores) => {
            Value::Set(BitSet::new(n))
        }
        (Value::Empty, _) => Value::Rel(Relation::empty(n)),
        (v, _) => v,
    }
}

/// The name of a built-in as a model writes it.
pub fn prim_name(p: Prim) -> &'static str {
    match p {
        Prim::Domain => "domain",
        Prim::Range => "range",
        Prim::FenceRel => "fencerel",
        Prim::Linearisations => "linearisations",
        Prim::Partition => "classes-loc",
        Prim::TagToEvents => "tag2events",
        Prim::TagToScope => "tag2scope",
        Prim::PageTableStores => "oa-changes",
        Prim::SameOutputAddress => "same-oa",
    }
}

/// The built-in a name denotes, if any.
pub fn prim_named(name: &str) -> Option<Prim> {
    Some(match name {
        "domain" => Prim::Domain,
        "range" => Prim::Range,
        "fencerel" => Prim::FenceRel,
        "linearisations" => Prim::Linearisations,
        "classes-loc" | "partition" => Prim::Partition,
        "tag2events" => Prim::TagToEvents,
        "tag2scope" => Prim::TagToScope,
        "oa-changes" | "at-least-one-writable" => Prim::PageTableStores,
        "same-oa" => Prim::SameOutputAddress,
        _ => return None,
    })
}

/// `tag2events('t)` and `tag2scope('t)` over litmix's environment.
///
/// herd's bell files tag events with lower-case tags (`'acquire`) and
/// expose them as sets; litmix's front ends name their tags in upper case
/// (`ACQ`, docs/cat-environment.md). `tag2events('t)` is the first event
/// set the environment has under the name `t` as written, with its first
/// letter upper-cased, or all upper-case; `tag2scope('t)` the relation of
/// scope level `t` (`cta`, `gpu`, `wg`, `dev`, `sys`, ...: events of
/// threads in the same instance), as written or lower-cased. A tag the
/// environment has no value for is an error (which `try` catches).
pub fn tag_value(
    p: Prim,
    tag: &str,
    env: &dyn super::Environment,
    n: usize,
) -> Result<Value, String> {
    let mut names = vec![tag.to_string()];
    let mut push = |s: String| {
        if !names.contains(&s) {
            names.push(s);
        }
    };
    if p == Prim::TagToEvents {
        let mut cs = tag.chars();
        if let Some(c) = cs.next() {
            push(c.to_uppercase().chain(cs).collect());
        }
        push(tag.to_uppercase());
    } else {
        push(tag.to_lowercase());
    }
    for name in &names {
        let v = if p == Prim::TagToEvents {
            env.set(name).map(Value::Set)
        } else {
            env.relation(name).map(Value::Rel)
        };
        match v {
            Some(Value::Set(s)) if s.universe() == n => return Ok(Value::Set(s)),
            Some(Value::Rel(r)) if r.universe() == n => return Ok(Value::Rel(r)),
            Some(_) => return Err(format!("the environment's '{name}' has the wrong size")),
            None => {}
        }
    }
    Err(format!(
        "{}: the test defines no {} for the tag '{tag} (looked for {})",
        prim_name(p),
        if p == Prim::TagToEvents {
            "event set"
        } else {
            "scope relation"
        },
        names.join(", ")
    ))
}

/// The events of `s` grouped by location (`loc` classes), as a set of sets.
pub fn partition(s: &BitSet, loc: &Relation) -> Value {
    let mut left = s.clone();
    let mut classes = Vec::new();
    while let Some(e) = left.first() {
        let mut class = loc.successors(e).inter(s);
        class.insert(e);
        left.diff_with(&class);
        classes.push(Value::Set(class));
    }
    valset(classes)
}

/// Every strict total order of `s` containing `r` restricted to `s`; when
/// `r` is cyclic on `s`, the one value `r` restricted to `s` (as herd does,
/// so that a later acyclicity check fails rather than the choice vanishing).
pub fn linearisations(s: &BitSet, r: &Relation) -> Value {
    let mut out = Vec::new();
    let _: ControlFlow<()> = Relation::for_each_linearisation(s, r, |o| {
        out.push(Value::Rel(o.clone()));
        ControlFlow::Continue(())
    });
    if out.is_empty() {
        out.push(Value::Rel(r.restrict_to(s)));
    }
    valset(out)
}

fn type_mismatch(loc: Loc, op: BinOp, x: &Value, y: &Value) -> Error {
    Error::new(
        loc,
        format!(
            "type error: '{}' on {} and {}",
            op.symbol(),
            x.kind().describe(),
            y.kind().describe()
        ),
    )
}

/// Binary operators when an operand is not a set or relation, and `++`.
pub fn binary_other(op: BinOp, loc: Loc, x: Value, y: Value) -> Res<Value> {
    match op {
        BinOp::Add => match y {
            Value::Empty => Ok(valset(vec![x])),
            Value::ValSet(_) => {
                let mut vs = members(y).expect("a set");
                vs.push(x);
                Ok(valset(vs))
            }
            other => Err(Box::new(Error::new(
                loc,
                format!(
                    "type error: the right operand of '++' should be a set, found {}",
                    other.kind().describe()
                ),
            ))),
        },
        BinOp::Union => match (x, y) {
            (Value::Empty, v) | (v, Value::Empty) => Ok(v),
            (a @ Value::ValSet(_), b @ Value::ValSet(_)) => {
                let mut vs = members(a).expect("a set");
                vs.extend(members(b).expect("a set"));
                Ok(valset(vs))
            }
            (a, b) => Err(Box::new(type_mismatch(loc, op, &a, &b))),
        },
        BinOp::Inter => match (x, y) {
            (Value::Empty, _) | (_, Value::Empty) => Ok(Value::Empty),
            (a @ Value::ValSet(_), b @ Value::ValSet(_)) => {
                let bs = members(b).expect("a set");
                let vs = members(a)
                    .expect("a set")
                    .into_iter()
                    .filter(|v| bs.iter().any(|w| compare(v, w) == Ordering::Equal))
                    .collect();
                Ok(valset(vs))
            }
            (a, b) => Err(Box::new(type_mismatch(loc, op, &a, &b))),
        },
        BinOp::Diff => match (x, y) {
            (Value::Empty, _) => Ok(Value::Empty),
            (v, Value::Empty) => Ok(v),
            (a @ Value::ValSet(_), b @ Value::ValSet(_)) => {
                let bs = members(b).expect("a set");
                let vs = members(a)
                    .expect("a set")
                    .into_iter()
                    .filter(|v| !bs.iter().any(|w| compare(v, w) == Ordering::Equal))
                    .collect();
                Ok(valset(vs))
            }
            (a, b) => Err(Box::new(type_mismatch(loc, op, &a, &b))),
        },
        BinOp::Seq => match (&x, &y) {
            (Value::Empty, Value::Rel(r)) | (Value::Rel(r), Value::Empty) => {
                Ok(Value::Rel(Relation::empty(r.universe())))
            }
            (Value::Empty, Value::Empty) => Ok(Value::Empty),
            _ => Err(Box::new(type_mismatch(loc, op, &x, &y))),
        },
        BinOp::Cartesian => match (&x, &y) {
            (Value::Empty, Value::Set(s)) | (Value::Set(s), Value::Empty) => {
                Ok(Value::Rel(Relation::empty(s.universe())))
            }
            (Value::Empty, Value::Empty) => Ok(Value::Empty),
            _ => Err(Box::new(type_mismatch(loc, op, &x, &y))),
        },
    }
}

/// Unary operators on values other than sets and relations.
pub fn unary_other(op: UnOp, v: Value, loc: Loc) -> Res<Value> {
    match (op, &v) {
        (UnOp::Plus | UnOp::Inverse | UnOp::Complement | UnOp::ToId, Value::Empty) => {
            Ok(Value::Empty)
        }
        _ => Err(Box::new(Error::new(
            loc,
            format!("type error: '{}' on {}", op.symbol(), v.kind().describe()),
        ))),
    }
}
