//! The resolved program and its interpreter.
//!
//! [`super::compile`] turns the parsed statements into a [`Program`] whose
//! names are resolved to indices:
//!
//! * `Env(i)`: a name the environment provides (`po`, `R`, ...), looked up at
//!   most once per evaluation and cached;
//! * `Slot(i)`: a top-level `let` binding. Slots are computed lazily, on first
//!   use, and cached for the rest of the evaluation, so a model whose first
//!   check fails never computes what only later checks need. Slots are
//!   numbered in definition order; a `with` resets every slot numbered after
//!   its own for each choice;
//! * `Local(i)`: a function parameter, or a member of the `let rec` group
//!   being iterated.
//!
//! Evaluation returns `Cow<Value>` so that reading a binding borrows it and
//! operators can work in place on temporaries.

mod explain;
mod memo;
mod program;
mod run;
mod with_sets;

pub use memo::Inputs;
pub use program::*;
pub use with_sets::{SharedWithSets, WithSources};

use super::Environment;
use super::ast::{BinOp, CheckMode, Error, Loc, Test, UnOp};
use super::{CheckKind, Failure};
use crate::rel::{BitSet, Relation};
use std::borrow::Cow;
use std::cell::OnceCell;
use std::ops::ControlFlow;
use std::sync::Arc as Rc;
/// Per-evaluation state: caches of environment values and slots.
pub struct State<'e> {
    env: &'e dyn Environment,
    pub(crate) n: usize,
    env_vals: Vec<OnceCell<Value>>,
    slots: Vec<OnceCell<Value>>,
    /// Values known from earlier evaluations of the same skeleton (static
    /// names and slots), read in place rather than copied (see
    /// [`State::seed`]); a value computed here goes to `env_vals`/`slots`.
    known_env: &'e [Option<Value>],
    known_slots: &'e [Option<Value>],
    /// Per numbered node, its place among the kept static parts (see
    /// [`Program::memo_plan`]); empty: none kept.
    memo_plan: &'e [u32],
    /// Kept static parts computed by this evaluation, and those known from
    /// earlier evaluations of the same skeleton.
    memo: Vec<OnceCell<Value>>,
    known_memo: &'e [Option<Value>],
    /// Enumerate every accepted choice of the `with`s instead of stopping
    /// at the first (see [`Program::run_all`]).
    pub(crate) all_choices: bool,
    /// With `all_choices`: per accepted choice, its flags and the value of
    /// the model's `co` slot.
    pub(crate) accepted: Vec<(Vec<String>, Option<Value>)>,
    /// With `all_choices`, for `--why`: per rejected choice of the model's
    /// `with co from`, the `co` it bound and the check it failed.
    pub(crate) rejected: Option<Vec<(Value, Failure)>>,
    /// Slots that are static (see [`Program::static_parts`]): they do not
    /// depend on `with` choices, so a new choice keeps their values.
    pub(crate) keep: &'e [bool],
    /// Cut prefixes of `with` linearisations that a monotone check rejects.
    pub prune: bool,
    /// Give up a `with` search after this instant (an error; the caller
    /// reports the timeout).
    pub deadline: Option<std::time::Instant>,
    /// Partial linearisations visited and cut by `with` searches.
    pub with_nodes: u64,
    pub with_pruned: u64,
    /// Limits of the `with` searches (see [`WithLimits`]); a search that
    /// stops for one of them leaves its message in [`State::limit`].
    pub with_limits: WithLimits,
    pub limit: Option<String>,
    /// The sets of `with ... from`s kept across the evaluations of one
    /// skeleton (none: every evaluation computes them).
    pub(crate) with_sources: Option<WithSources>,
}

/// Limits on the `with` searches of one evaluation: they count their
/// partial orders against the caller's work budget and, under a timeout,
/// project their time from the share of their tree covered (the same rule
/// as the engine's reads-from and coherence searches).
#[derive(Clone, Copy, Debug)]
pub struct WithLimits {
    /// Partial orders this evaluation may still visit.
    pub max_nodes: u64,
    /// When the test started and its timeout.
    pub timeout: Option<(std::time::Instant, std::time::Duration)>,
}

impl Default for WithLimits {
    fn default() -> Self {
        WithLimits {
            max_nodes: u64::MAX,
            timeout: None,
        }
    }
}

/// Partial orders between two time projections of a `with` search.
const WITH_PROJECT_EVERY: u64 = 64;

/// Values computed by one evaluation, by index (see [`State::harvest_pending`]).
pub type Computed = Vec<(usize, Value)>;

/// The environment names, slots and kept places (in this order) that are
/// static and whose values are not known yet (see [`State::harvest_pending`]).
pub type Pending = [Vec<usize>; 3];

/// Empty cell vectors of an evaluation state (environment names, slots),
/// kept to build the next state without allocating.
pub type Cells = (Vec<OnceCell<Value>>, Vec<OnceCell<Value>>);

enum Verdict {
    Allowed,
    /// Forbidden; the failure when one was asked for.
    Forbidden(Option<Failure>),
}

type Res<T> = Result<T, Box<Error>>;

fn type_error(loc: Loc, what: &str, found: Ty) -> Box<Error> {
    Box::new(Error::new(
        loc,
        format!("type error: {what}, found {}", found.describe()),
    ))
}

fn expect_rel<'v>(v: &'v Value, loc: Loc, what: &str) -> Res<&'v Relation> {
    match v {
        Value::Rel(r) => Ok(r),
        other => Err(type_error(loc, what, other.kind())),
    }
}

fn expect_set<'v>(v: &'v Value, loc: Loc, what: &str) -> Res<&'v BitSet> {
    match v {
        Value::Set(s) => Ok(s),
        other => Err(type_error(loc, what, other.kind())),
    }
}

fn into_rel(v: Cow<'_, Value>, loc: Loc, what: &str) -> Res<Relation> {
    match v.into_owned() {
        Value::Rel(r) => Ok(r),
        other => Err(type_error(loc, what, other.kind())),
    }
}

impl<'e> State<'e> {
    /// Sets slot `i` (a `with` variable) for a partial evaluation.
    pub fn set_slot(&mut self, i: usize, v: Value) {
        let cell = &mut self.slots[i];
        cell.take();
        let _ = cell.set(v);
    }

    /// Values known from earlier evaluations: read in place when needed.
    pub fn seed(&mut self, env_values: &'e [Option<Value>], slot_values: &'e [Option<Value>]) {
        self.known_env = env_values;
        self.known_slots = slot_values;
    }

    /// Keeps the static parts `plan` names (of `kept` places), reading
    /// those computed by earlier evaluations from `known`.
    pub fn seed_memo(&mut self, plan: &'e [u32], kept: usize, known: &'e [Option<Value>]) {
        self.memo_plan = plan;
        self.memo = (0..kept).map(|_| OnceCell::new()).collect();
        self.known_memo = known;
    }

    /// The values computed by this evaluation of the static names, slots
    /// and kept places in `pending` (those not known before): for the
    /// caches. Only those cells are looked at.
    pub fn harvest_pending(&mut self, pending: &Pending) -> [Computed; 3] {
        fn take(cells: &mut [OnceCell<Value>], at: &[usize]) -> Computed {
            at.iter()
                .filter_map(|&i| cells.get_mut(i)?.take().map(|v| (i, v)))
                .collect()
        }
        [
            take(&mut self.env_vals, &pending[0]),
            take(&mut self.slots, &pending[1]),
            take(&mut self.memo, &pending[2]),
        ]
    }

    /// The cell vectors of this state, emptied, for [`Program::state_in`].
    pub fn into_cells(mut self) -> Cells {
        let mut env = std::mem::take(&mut self.env_vals);
        let mut slots = std::mem::take(&mut self.slots);
        env.iter_mut().for_each(|c| drop(c.take()));
        slots.iter_mut().for_each(|c| drop(c.take()));
        (env, slots)
    }
}

impl Program {
    /// Fresh per-evaluation state.
    pub fn state<'e>(&self, env: &'e dyn Environment) -> State<'e> {
        self.state_in(env, Cells::default())
    }

    /// Fresh per-evaluation state whose cells reuse `cells` (emptied by
    /// [`State::into_cells`]).
    pub fn state_in<'e>(&self, env: &'e dyn Environment, cells: Cells) -> State<'e> {
        let (mut env_vals, mut slots) = cells;
        env_vals.truncate(self.env_names.len());
        env_vals.resize_with(self.env_names.len(), OnceCell::new);
        slots.truncate(self.slots.len());
        slots.resize_with(self.slots.len(), OnceCell::new);
        State {
            env,
            n: env.num_events(),
            env_vals,
            slots,
            known_env: &[],
            known_slots: &[],
            memo_plan: &[],
            memo: Vec::new(),
            known_memo: &[],
            all_choices: false,
            accepted: Vec::new(),
            rejected: None,
            keep: &[],
            prune: false,
            deadline: None,
            with_nodes: 0,
            with_pruned: 0,
            with_limits: WithLimits::default(),
            limit: None,
            with_sources: None,
        }
    }

    #[inline(always)]
    pub(crate) fn env_value<'a>(&self, i: usize, loc: Loc, st: &'a State<'_>) -> Res<&'a Value> {
        if let Some(v) = st.env_vals[i].get() {
            return Ok(v);
        }
        if let Some(Some(v)) = st.known_env.get(i) {
            return Ok(v);
        }
        self.env_fetch(i, loc, st)
    }

    /// [`Program::env_value`] when neither this evaluation nor the cache
    /// has the value yet.
    #[inline(never)]
    fn env_fetch<'a>(&self, i: usize, loc: Loc, st: &'a State<'_>) -> Res<&'a Value> {
        let cell = &st.env_vals[i];
        let EnvName { name, hint, .. } = &self.env_names[i];
        let as_set = || st.env.set(name).map(Value::Set);
        let as_rel = || st.env.relation(name).map(Value::Rel);
        let found = match hint {
            Ty::Set => as_set().or_else(as_rel),
            _ => as_rel().or_else(as_set),
        };
        let v = match found {
            Some(v) => v,
            None if name == "id" => Value::Rel(Relation::identity(st.n)),
            None => {
                return Err(Box::new(Error::new(
                    loc,
                    format!("unknown identifier '{name}'"),
                )));
            }
        };
        let size = match &v {
            Value::Set(s) => s.universe(),
            Value::Rel(r) => r.universe(),
            _ => st.n,
        };
        if size != st.n {
            return Err(Box::new(Error::new(
                loc,
                format!(
                    "the environment's '{name}' ranges over {size} events, expected {}",
                    st.n
                ),
            )));
        }
        let _ = cell.set(v);
        Ok(cell.get().expect("just set"))
    }

    #[inline(always)]
    pub(crate) fn slot_value<'a>(&'a self, i: usize, st: &'a State<'_>) -> Res<&'a Value> {
        if let Some(v) = st.slots[i].get() {
            return Ok(v);
        }
        if let Some(Some(v)) = st.known_slots.get(i) {
            return Ok(v);
        }
        self.slot_compute(i, st)
    }

    /// [`Program::slot_value`] when neither this evaluation nor the cache
    /// has the value yet.
    #[inline(never)]
    fn slot_compute<'a>(&'a self, i: usize, st: &'a State<'_>) -> Res<&'a Value> {
        match &self.slots[i].def {
            SlotDef::Expr(e) => {
                let v = self.eval(e, st, &[])?.into_owned();
                let _ = st.slots[i].set(v);
            }
            SlotDef::Rec(g) => self.compute_group(*g, st)?,
            SlotDef::WithVar => unreachable!("with variable read before its with"),
        }
        Ok(st.slots[i].get().expect("slot computed"))
    }

    /// Least fixpoint of a `let rec` group by iteration from empty values.
    fn compute_group(&self, g: usize, st: &State<'_>) -> Res<()> {
        let group = &self.groups[g];
        let empty = |ty: Ty| match ty {
            Ty::Set => Value::Set(BitSet::new(st.n)),
            _ => Value::Rel(Relation::empty(st.n)),
        };
        let mut cur: Vec<Value> = group.members.iter().map(|m| empty(m.2)).collect();
        // A monotone system over k values of at most n*n bits stabilises in
        // at most k*n*n + 1 rounds; the bound catches non-monotone ones.
        let limit = group.members.len() * st.n * st.n + 2;
        for _ in 0..limit {
            let mut next = Vec::with_capacity(cur.len());
            for (_, body, _) in &group.members {
                let v = self.eval(body, st, &cur)?.into_owned();
                next.push(v);
            }
            for ((k, v), (_, body, _)) in next.iter().enumerate().zip(&group.members) {
                if v.kind() != cur[k].kind() {
                    return Err(type_error(
                        body.loc,
                        &format!(
                            "this recursive definition started as {}",
                            cur[k].kind().describe()
                        ),
                        v.kind(),
                    ));
                }
            }
            if next == cur {
                for ((slot, _, _), v) in group.members.iter().zip(cur) {
                    let _ = st.slots[*slot].set(v);
                }
                return Ok(());
            }
            cur = next;
        }
        Err(Box::new(Error::new(
            group.loc,
            "let rec did not reach a fixpoint (is the definition monotone?)",
        )))
    }

    /// Evaluates `e`; `locals` are the current function arguments or
    /// recursive-group values.
    #[inline(always)]
    pub fn eval<'a>(
        &'a self,
        e: &'a CExpr,
        st: &'a State<'_>,
        locals: &'a [Value],
    ) -> Res<Cow<'a, Value>> {
        if let Some(k) = e.memo
            && let Some(&place) = st.memo_plan.get(k as usize)
            && place != NO_MEMO
        {
            let place = place as usize;
            if let Some(Some(v)) = st.known_memo.get(place) {
                return Ok(Cow::Borrowed(v));
            }
            let cell = &st.memo[place];
            if let Some(v) = cell.get() {
                return Ok(Cow::Borrowed(v));
            }
            let v = self.eval_node(e, st, locals)?.into_owned();
            let _ = cell.set(v);
            return Ok(Cow::Borrowed(cell.get().expect("just set")));
        }
        // Names and definitions (about half the nodes) are read here, in
        // the caller, without a call to `eval_node` and its result passed
        // through memory.
        match &e.node {
            Node::Env(i) => Ok(Cow::Borrowed(self.env_value(*i, e.loc, st)?)),
            Node::Slot(i) => Ok(Cow::Borrowed(self.slot_value(*i, st)?)),
            _ => self.eval_node(e, st, locals),
        }
    }

    /// Evaluates `e` itself (see [`Program::eval`]).
    fn eval_node<'a>(
        &'a self,
        e: &'a CExpr,
        st: &'a State<'_>,
        locals: &'a [Value],
    ) -> Res<Cow<'a, Value>> {
        super::guard::tick(st.deadline, e.loc)?;
        use Cow::{Borrowed, Owned};
        let n = st.n;
        Ok(match &e.node {
            Node::EmptyRel => Owned(Value::Rel(Relation::empty(n))),
            Node::Universe => Owned(Value::Set(BitSet::full(n))),
            Node::Env(i) => Borrowed(self.env_value(*i, e.loc, st)?),
            Node::Slot(i) => Borrowed(self.slot_value(*i, st)?),
            Node::Local(i) => Borrowed(&locals[*i]),
            Node::Unary(op, a) => {
                let mut v = self.eval(a, st, locals)?;
                if *v == Value::Empty {
                    v = Owned(match op {
                        UnOp::ToId | UnOp::Complement => Value::Set(BitSet::new(n)),
                        _ => Value::Rel(Relation::empty(n)),
                    });
                }
                Owned(self.unary(*op, v, a.loc)?)
            }
            Node::Binary(op, op_loc, a, b) => {
                let x = self.eval(a, st, locals)?;
                let y = self.eval(b, st, locals)?;
                Owned(binary(*op, *op_loc, x, y)?)
            }
            Node::Domain(a) => {
                let v = self.eval(a, st, locals)?;
                if *v == Value::Empty {
                    return Ok(Owned(Value::Set(BitSet::new(n))));
                }
                Owned(Value::Set(
                    expect_rel(&v, a.loc, "domain expects a relation")?.domain(),
                ))
            }
            Node::Range(a) => {
                let v = self.eval(a, st, locals)?;
                if *v == Value::Empty {
                    return Ok(Owned(Value::Set(BitSet::new(n))));
                }
                Owned(Value::Set(
                    expect_rel(&v, a.loc, "range expects a relation")?.range(),
                ))
            }
            Node::FenceRel(a, po) => {
                let v = self.eval(a, st, locals)?;
                if *v == Value::Empty {
                    return Ok(Owned(Value::Rel(Relation::empty(n))));
                }
                let s = expect_set(&v, a.loc, "fencerel expects a set")?;
                let po = expect_rel(
                    self.env_value(*po, e.loc, st)?,
                    e.loc,
                    "fencerel needs 'po' to be a relation",
                )?;
                Owned(Value::Rel(po.restrict_range(s).compose(po)))
            }
            _ => self.eval_rare(e, st, locals)?,
        })
    }

    /// The rarer forms of [`Program::eval_node`] (calls and the
    /// functional tier), kept out of it so that the common relational
    /// operators run in a small stack frame.
    #[inline(never)]
    fn eval_rare<'a>(
        &'a self,
        e: &'a CExpr,
        st: &'a State<'_>,
        locals: &'a [Value],
    ) -> Res<Cow<'a, Value>> {
        use Cow::Owned;
        let n = st.n;
        Ok(match &e.node {
            Node::Call(f, args) => {
                let mut vals = Vec::with_capacity(args.len());
                for a in args {
                    vals.push(self.eval(a, st, locals)?.into_owned());
                }
                Owned(self.eval(&self.funcs[*f].body, st, &vals)?.into_owned())
            }
            Node::Apply(f, a) => {
                let fv = self.eval(f, st, locals)?.into_owned();
                let av = self.eval(a, st, locals)?.into_owned();
                Owned(self.apply(fv, av, st, e.loc)?)
            }
            Node::FuncRef(f) => Owned(Value::Clo(Rc::new(Closure {
                env: Vec::new(),
                code: CloCode::Func(*f),
            }))),
            Node::PrimRef(p) => Owned(Value::Prim(*p)),
            Node::PrimCall(p, args) => {
                let mut vals = Vec::with_capacity(args.len());
                for a in args {
                    vals.push(self.eval(a, st, locals)?.into_owned());
                }
                Owned(self.prim(*p, vals, st, e.loc)?)
            }
            Node::Lambda(l) => Owned(Value::Clo(Rc::new(Closure {
                env: locals.to_vec(),
                code: CloCode::Lambda {
                    lam: *l,
                    group: None,
                },
            }))),
            Node::Tuple(es) => {
                let mut vals = Vec::with_capacity(es.len());
                for a in es {
                    vals.push(self.eval(a, st, locals)?.into_owned());
                }
                Owned(Value::Tuple(vals))
            }
            Node::ExplicitSet(es) => {
                let mut vals = Vec::with_capacity(es.len());
                for a in es {
                    vals.push(self.eval(a, st, locals)?.into_owned());
                }
                Owned(super::func::valset(vals))
            }
            Node::LetIn(vals, body) => {
                let mut frame = locals.to_vec();
                for v in vals {
                    let x = self.eval(v, st, locals)?.into_owned();
                    frame.push(x);
                }
                Owned(self.eval(body, st, &frame)?.into_owned())
            }
            Node::LetRec(lams, body) => {
                let mut frame = locals.to_vec();
                for &l in lams.iter() {
                    frame.push(Value::Clo(Rc::new(Closure {
                        env: locals.to_vec(),
                        code: CloCode::Lambda {
                            lam: l,
                            group: Some(lams.clone()),
                        },
                    })));
                }
                Owned(self.eval(body, st, &frame)?.into_owned())
            }
            Node::LetRecVals(g, body) => {
                let frame = self.value_rec(g, st, locals)?;
                Owned(self.eval(body, st, &frame)?.into_owned())
            }
            Node::MatchSet(scrut, empty, nonempty) => {
                let v = self.eval(scrut, st, locals)?.into_owned();
                match super::func::split(v, e.loc)? {
                    None => Owned(self.eval(empty, st, locals)?.into_owned()),
                    Some((x, rest)) => {
                        let mut frame = locals.to_vec();
                        frame.push(x);
                        frame.push(rest);
                        Owned(self.eval(nonempty, st, &frame)?.into_owned())
                    }
                }
            }
            Node::Try(a, b) => match self.eval(a, st, locals) {
                Ok(v) => v,
                Err(_) => self.eval(b, st, locals)?,
            },
            Node::Fail(msg) => return Err(Box::new(Error::new(e.loc, msg.clone()))),
            Node::Tag(t) => Owned(Value::Tag(Rc::from(t.as_str()))),
            Node::BellSet(t) => Owned(
                super::func::tag_value(Prim::TagToEvents, t, st.env, n)
                    .unwrap_or_else(|_| Value::Set(BitSet::new(n))),
            ),
            Node::MatchTag(scrut, clauses, default) => {
                let v = self.eval(scrut, st, locals)?;
                let Value::Tag(t) = &*v else {
                    return Err(type_error(
                        scrut.loc,
                        "match on tags expects a tag",
                        v.kind(),
                    ));
                };
                match clauses.iter().find(|(c, _)| **c == **t) {
                    Some((_, x)) => self.eval(x, st, locals)?,
                    None => match default {
                        Some(x) => self.eval(x, st, locals)?,
                        None => {
                            return Err(Box::new(Error::new(
                                e.loc,
                                format!("no clause of this match takes the tag '{t}"),
                            )));
                        }
                    },
                }
            }
            Node::Proj(x, k, arity) => {
                let v = self.eval(x, st, locals)?;
                match &*v {
                    Value::Tuple(vs) if vs.len() == *arity => Owned(vs[*k].clone()),
                    other => {
                        return Err(Box::new(Error::new(
                            e.loc,
                            format!(
                                "a tuple pattern of {arity} names, bound to {}",
                                match other {
                                    Value::Tuple(vs) => format!("a tuple of {}", vs.len()),
                                    v => v.kind().describe().to_string(),
                                }
                            ),
                        )));
                    }
                }
            }
            Node::EmptyRel
            | Node::Universe
            | Node::Env(_)
            | Node::Slot(_)
            | Node::Local(_)
            | Node::Unary(..)
            | Node::Binary(..)
            | Node::Domain(_)
            | Node::Range(_)
            | Node::FenceRel(..) => self.eval_node(e, st, locals)?,
        })
    }

    /// The frame a `let rec` of values gives its body: `locals`, then the
    /// members' least fixpoint (iterated from `{}`, a tuple of `{}` for a
    /// tuple pattern), then the components of the tuple members.
    fn value_rec(&self, g: &ValueRec, st: &State<'_>, locals: &[Value]) -> Res<Vec<Value>> {
        let frame = |cur: &[Value]| -> Res<Vec<Value>> {
            let mut f = locals.to_vec();
            f.extend(cur.iter().cloned());
            for ((body, arity), v) in g.members.iter().zip(cur) {
                let Some(k) = arity else { continue };
                match v {
                    Value::Tuple(vs) if vs.len() == *k => f.extend(vs.iter().cloned()),
                    other => {
                        return Err(Box::new(Error::new(
                            body.loc,
                            format!(
                                "a tuple pattern of {k} names, bound to {}",
                                match other {
                                    Value::Tuple(vs) => format!("a tuple of {}", vs.len()),
                                    v => v.kind().describe().to_string(),
                                }
                            ),
                        )));
                    }
                }
            }
            Ok(f)
        };
        let mut cur: Vec<Value> = g
            .members
            .iter()
            .map(|(_, arity)| match arity {
                Some(k) => Value::Tuple(vec![Value::Empty; *k]),
                None => Value::Empty,
            })
            .collect();
        // As for top-level groups: a monotone system over sets and
        // relations of n events stabilises within k*n*n + 1 rounds (plus
        // one for `{}` becoming a typed empty value).
        let limit = g.members.len().max(1) * (st.n * st.n + 1) + 3;
        for _ in 0..limit {
            let f = frame(&cur)?;
            let mut next = Vec::with_capacity(cur.len());
            for (body, _) in &g.members {
                next.push(self.eval(body, st, &f)?.into_owned());
            }
            if next == cur {
                return Ok(f);
            }
            cur = next;
        }
        Err(Box::new(Error::new(
            g.loc,
            "let rec did not reach a fixpoint (is the definition monotone?)",
        )))
    }

    /// Applies a function value to one argument (a tuple for several).
    pub(crate) fn apply(&self, f: Value, arg: Value, st: &State<'_>, loc: Loc) -> Res<Value> {
        let destructure = |arity: usize, tuple: bool, arg: Value| -> Res<Vec<Value>> {
            if !tuple && arity == 1 {
                return Ok(vec![arg]);
            }
            match arg {
                Value::Tuple(vs) if vs.len() == arity => Ok(vs),
                other if arity == 1 => Ok(vec![other]),
                other => Err(Box::new(Error::new(
                    loc,
                    format!(
                        "argument mismatch: the function takes {arity} arguments, found {}",
                        match &other {
                            Value::Tuple(vs) => format!("a tuple of {}", vs.len()),
                            v => v.kind().describe().to_string(),
                        }
                    ),
                ))),
            }
        };
        let _call = super::guard::call(st.deadline, loc)?;
        match f {
            Value::Clo(c) => match &c.code {
                CloCode::Func(fi) => {
                    let func = &self.funcs[*fi];
                    let args = destructure(func.arity, func.arity != 1, arg)?;
                    Ok(self.eval(&func.body, st, &args)?.into_owned())
                }
                CloCode::Lambda { lam, group } => {
                    let l = &self.lambdas[*lam];
                    let mut frame = c.env.clone();
                    if let Some(g) = group {
                        for &m in g.iter() {
                            frame.push(Value::Clo(Rc::new(Closure {
                                env: c.env.clone(),
                                code: CloCode::Lambda {
                                    lam: m,
                                    group: Some(g.clone()),
                                },
                            })));
                        }
                    }
                    frame.extend(destructure(l.arity, l.tuple, arg)?);
                    Ok(self.eval(&l.body, st, &frame)?.into_owned())
                }
            },
            Value::Prim(p) => {
                let args = match arg {
                    Value::Tuple(vs) => vs,
                    v => vec![v],
                };
                self.prim(p, args, st, loc)
            }
            other => Err(Box::new(Error::new(
                loc,
                format!(
                    "closure or primitive expected, found {}",
                    other.kind().describe()
                ),
            ))),
        }
    }

    /// Runs a built-in function.
    fn prim(&self, p: Prim, args: Vec<Value>, st: &State<'_>, loc: Loc) -> Res<Value> {
        let want = if matches!(p, Prim::Linearisations | Prim::PageTableStores) {
            2
        } else {
            1
        };
        if args.len() != want {
            return Err(Box::new(Error::new(
                loc,
                format!(
                    "primitive {}: argument mismatch (takes {want}, found {})",
                    super::func::prim_name(p),
                    args.len()
                ),
            )));
        }
        let n = st.n;
        let mut args = args.into_iter();
        let a = super::func::normalise_empty(args.next().expect("arity checked"), p, n);
        Ok(match p {
            Prim::TagToEvents | Prim::TagToScope => {
                let Value::Tag(t) = &a else {
                    return Err(type_error(
                        loc,
                        &format!("{} expects a tag", super::func::prim_name(p)),
                        a.kind(),
                    ));
                };
                super::func::tag_value(p, t, st.env, n).map_err(|m| Error::new(loc, m))?
            }
            Prim::Domain => Value::Set(expect_rel(&a, loc, "domain expects a relation")?.domain()),
            Prim::Range => Value::Set(expect_rel(&a, loc, "range expects a relation")?.range()),
            Prim::FenceRel => {
                let s = expect_set(&a, loc, "fencerel expects a set")?;
                let i = self
                    .env_names
                    .iter()
                    .position(|e| e.name == "po")
                    .ok_or_else(|| Error::new(loc, "fencerel needs 'po'"))?;
                let po = expect_rel(self.env_value(i, loc, st)?, loc, "'po' is a relation")?;
                Value::Rel(po.restrict_range(s).compose(po))
            }
            Prim::Partition => {
                let s = expect_set(&a, loc, "classes-loc expects a set")?;
                let i = self
                    .loc_env
                    .ok_or_else(|| Error::new(loc, "classes-loc needs 'loc'"))?;
                let l = expect_rel(self.env_value(i, loc, st)?, loc, "'loc' is a relation")?;
                super::func::partition(s, l)
            }
            Prim::PageTableStores => {
                expect_set(&a, loc, "oa-changes expects a set and a relation")?;
                Value::Set(crate::rel::BitSet::new(n))
            }
            Prim::SameOutputAddress => {
                expect_rel(&a, loc, "same-oa expects a relation")?;
                Value::Rel(Relation::empty(n))
            }
            Prim::Linearisations => {
                let r = super::func::normalise_empty(args.next().expect("arity checked"), p, n);
                let s = expect_set(&a, loc, "linearisations expects a set")?;
                let r = expect_rel(&r, loc, "linearisations expects a relation")?;
                super::func::linearisations(s, r)
            }
        })
    }

    fn unary(&self, op: UnOp, v: Cow<'_, Value>, loc: Loc) -> Res<Value> {
        let need_rel = |v: &Value| -> Res<()> {
            match v {
                Value::Rel(_) => Ok(()),
                other => Err(type_error(
                    loc,
                    &format!("'{}' expects a relation", op.symbol()),
                    other.kind(),
                )),
            }
        };
        if !matches!(*v, Value::Set(_) | Value::Rel(_)) {
            return super::func::unary_other(op, v.into_owned(), loc);
        }
        Ok(match op {
            UnOp::Complement => match v.into_owned() {
                Value::Set(mut s) => {
                    s.complement_in_place();
                    Value::Set(s)
                }
                Value::Rel(mut r) => {
                    r.complement_in_place();
                    Value::Rel(r)
                }
                _ => unreachable!("checked above"),
            },
            UnOp::Plus => {
                need_rel(&v)?;
                let mut r = into_rel(v, loc, "")?;
                r.close_transitively();
                Value::Rel(r)
            }
            UnOp::Star => {
                need_rel(&v)?;
                let mut r = into_rel(v, loc, "")?;
                r.close_transitively();
                r.add_identity();
                Value::Rel(r)
            }
            UnOp::Opt => {
                need_rel(&v)?;
                let mut r = into_rel(v, loc, "")?;
                r.add_identity();
                Value::Rel(r)
            }
            UnOp::Inverse => {
                need_rel(&v)?;
                Value::Rel(expect_rel(&v, loc, "")?.inverse())
            }
            UnOp::ToId => Value::Rel(Relation::identity_on(expect_set(
                &v,
                loc,
                "'[...]' expects a set",
            )?)),
        })
    }
}

/// `|`, `&`, `\`, `;`, `*` and `++` on two values.
fn binary(op: BinOp, loc: Loc, x: Cow<'_, Value>, y: Cow<'_, Value>) -> Res<Value> {
    if op == BinOp::Add
        || !matches!(*x, Value::Set(_) | Value::Rel(_))
        || !matches!(*y, Value::Set(_) | Value::Rel(_))
    {
        return super::func::binary_other(op, loc, x.into_owned(), y.into_owned());
    }
    let mismatch = |x: &Value, y: &Value| {
        Error::new(
            loc,
            format!(
                "type error: '{}' needs two sets or two relations, found {} and {}",
                op.symbol(),
                x.kind().describe(),
                y.kind().describe()
            ),
        )
    };
    match op {
        BinOp::Union | BinOp::Inter | BinOp::Diff => {
            if x.kind() != y.kind() {
                return Err(Box::new(mismatch(&x, &y)));
            }
            // Two relations read in place: one pass into a new buffer.
            if let (Cow::Borrowed(Value::Rel(a)), Cow::Borrowed(Value::Rel(b))) = (&x, &y) {
                return Ok(Value::Rel(match op {
                    BinOp::Union => a.union(b),
                    BinOp::Inter => a.intersection(b),
                    _ => a.difference(b),
                }));
            }
            // Work in place on an owned operand when there is one.
            let (mut acc, other) = match (x, y) {
                (Cow::Owned(a), b) => (a, b),
                (a @ Cow::Borrowed(_), Cow::Owned(b)) if op != BinOp::Diff => (b, a),
                (a, b) => (a.into_owned(), b),
            };
            match (&mut acc, &*other) {
                (Value::Set(s), Value::Set(t)) => match op {
                    BinOp::Union => s.union_with(t),
                    BinOp::Inter => s.inter_with(t),
                    _ => s.diff_with(t),
                },
                (Value::Rel(r), Value::Rel(q)) => match op {
                    BinOp::Union => r.union_with(q),
                    BinOp::Inter => r.inter_with(q),
                    _ => r.diff_with(q),
                },
                _ => unreachable!("kinds checked above"),
            }
            Ok(acc)
        }
        BinOp::Seq => match (&*x, &*y) {
            (Value::Rel(a), Value::Rel(b)) => Ok(Value::Rel(a.compose(b))),
            (a, b) => Err(Box::new(Error::new(
                loc,
                format!(
                    "type error: ';' needs two relations, found {} and {}",
                    a.kind().describe(),
                    b.kind().describe()
                ),
            ))),
        },
        BinOp::Cartesian => match (&*x, &*y) {
            (Value::Set(a), Value::Set(b)) => Ok(Value::Rel(Relation::cartesian(a, b))),
            (a, b) => Err(Box::new(Error::new(
                loc,
                format!(
                    "type error: '*' needs two sets, found {} and {}",
                    a.kind().describe(),
                    b.kind().describe()
                ),
            ))),
        },
        BinOp::Add => unreachable!("handled by binary_other"),
    }
}
