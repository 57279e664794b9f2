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

use super::Environment;
use super::ast::{BinOp, CheckMode, Error, Loc, Test, UnOp};
use super::{CheckKind, Failure};
use crate::rel::{BitSet, Relation};
use std::borrow::Cow;
use std::cell::OnceCell;
use std::ops::ControlFlow;
use std::sync::Arc as Rc;

/// A run-time value. The relational core has sets and relations; herd's
/// functional tier adds the polymorphic empty set `{}`, events (members of
/// a set taken apart by `match`), tuples, sets of values and functions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    Set(BitSet),
    Rel(Relation),
    /// `{}`: the empty set of any element type.
    Empty,
    /// One event (an element of an event set).
    Event(usize),
    Tuple(Vec<Value>),
    /// A set of values, sorted by [`super::func::compare`], without duplicates.
    ValSet(Rc<Vec<Value>>),
    /// A function value.
    Clo(Rc<Closure>),
    /// A built-in function used as a value.
    Prim(Prim),
    /// A tag `'name` (a constant of an `enum`).
    Tag(Rc<str>),
}

impl Value {
    pub(crate) fn kind(&self) -> Ty {
        match self {
            Value::Set(_) => Ty::Set,
            Value::Rel(_) => Ty::Rel,
            Value::Empty => Ty::Unknown,
            Value::Event(_) => Ty::Event,
            Value::Tuple(_) => Ty::Tuple,
            Value::ValSet(_) => Ty::ValSet,
            Value::Clo(_) | Value::Prim(_) => Ty::Fun,
            Value::Tag(_) => Ty::Tag,
        }
    }
}

/// A closure: the local values it captured and the code it runs.
#[derive(Debug)]
pub struct Closure {
    pub env: Vec<Value>,
    pub code: CloCode,
}

/// What a closure runs.
#[derive(Clone, Debug)]
pub enum CloCode {
    /// A top-level `let f(params) = ...` (no captured values).
    Func(usize),
    /// A `fun` or local function; `group` lists the lambdas of its
    /// `let rec` group, bound (as closures over the same `env`) before the
    /// parameters.
    Lambda {
        lam: usize,
        group: Option<Rc<Vec<usize>>>,
    },
}

impl PartialEq for Closure {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self, other)
    }
}
impl Eq for Closure {}

/// Built-in functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Prim {
    Domain,
    Range,
    FenceRel,
    Linearisations,
    /// `classes-loc` / `partition`: the events of a set grouped by location.
    Partition,
    /// `tag2events('t)`: the events the environment tags with `t`.
    TagToEvents,
    /// `tag2scope('s)`: the environment's relation of scope level `s`.
    TagToScope,
}

/// A `fun` (or local function) body: parameters are pushed after the
/// captured locals (and after the `let rec` group's functions).
#[derive(Clone, Debug)]
pub struct Lambda {
    /// The function's name (`*fun*` for an anonymous one), for debugging.
    #[allow(dead_code)]
    pub name: String,
    /// Number of parameters; `tuple`: one argument destructured.
    pub arity: usize,
    pub tuple: bool,
    pub body: CExpr,
}

/// Static type of an expression.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ty {
    Set,
    Rel,
    /// Not known before evaluation (e.g. a function parameter).
    Unknown,
    Event,
    Tuple,
    ValSet,
    Fun,
    Tag,
}

impl Ty {
    /// "a set", "a relation", "a value".
    pub fn describe(self) -> &'static str {
        match self {
            Ty::Set => "a set",
            Ty::Rel => "a relation",
            Ty::Unknown => "a value",
            Ty::Event => "an event",
            Ty::Tuple => "a tuple",
            Ty::ValSet => "a set of values",
            Ty::Fun => "a function",
            Ty::Tag => "a tag",
        }
    }
}

/// A resolved expression.
#[derive(Clone, Debug)]
pub struct CExpr {
    pub node: Node,
    pub loc: Loc,
    /// The number of an operator node of a definition or a check (see
    /// [`Program::number_memos`]): when the node is a largest static part
    /// of a definition that is not static itself, its value is kept per
    /// skeleton like a static definition's ([`Program::memo_plan`]).
    pub memo: Option<u32>,
}

/// Resolved expression forms.
#[derive(Clone, Debug)]
pub enum Node {
    EmptyRel,
    Universe,
    Env(usize),
    Slot(usize),
    Local(usize),
    Unary(UnOp, Box<CExpr>),
    Binary(BinOp, Loc, Box<CExpr>, Box<CExpr>),
    Call(usize, Vec<CExpr>),
    Domain(Box<CExpr>),
    Range(Box<CExpr>),
    /// `fencerel(S)` = `po; [S]; po`, with the environment's `po` (an `Env` index).
    FenceRel(Box<CExpr>, usize),
    // ----- functional tier -----
    /// Application of a function value to one argument.
    Apply(Box<CExpr>, Box<CExpr>),
    /// A top-level function as a value.
    FuncRef(usize),
    /// A built-in function as a value.
    PrimRef(Prim),
    /// A built-in applied to its arguments.
    PrimCall(Prim, Vec<CExpr>),
    /// `fun ...`: a closure over the current locals.
    Lambda(usize),
    Tuple(Vec<CExpr>),
    ExplicitSet(Vec<CExpr>),
    /// `let x1 = e1 and ... in body`: body sees the values pushed as locals.
    LetIn(Vec<CExpr>, Box<CExpr>),
    /// `let rec f1 ... and fk ... in body`: the lambdas are pushed as closures.
    LetRec(Rc<Vec<usize>>, Box<CExpr>),
    /// `let rec x1 = e1 and (a, b) = e2 ... in body` over values: the
    /// members' least fixpoint, iterated from `{}`; the members and bodies
    /// see the members' values pushed, then the components of tuple members.
    LetRecVals(Rc<ValueRec>, Box<CExpr>),
    /// `match e with {} -> a || x ++ s -> b end` (`b` sees x and s pushed).
    MatchSet(Box<CExpr>, Box<CExpr>, Box<CExpr>),
    Try(Box<CExpr>, Box<CExpr>),
    /// `'name`.
    Tag(String),
    /// The events annotated with a bell tag (herd's `Acquire` for
    /// `'acquire`): `tag2events('t)`, or no events when the test has none.
    BellSet(String),
    /// `match e with 'a -> x || ... || _ -> d end`.
    MatchTag(Box<CExpr>, Vec<(String, CExpr)>, Option<Box<CExpr>>),
    /// Component `k` of a tuple of `n` (a `let (a, b) = e` pattern).
    Proj(Box<CExpr>, usize, usize),
    /// An error raised when evaluated (e.g. an unknown function), so that
    /// `try` can catch it as herd does.
    Fail(String),
}

/// A name the environment must provide.
#[derive(Clone, Debug)]
pub struct EnvName {
    pub name: String,
    /// Expected kind from the naming convention (upper case: set; lower case: relation).
    pub hint: Ty,
    /// First use, for diagnostics.
    pub loc: Loc,
    /// Read directly by a check or `with` (outside `try`), so checked
    /// before evaluation; other names are looked up lazily, as in herd.
    pub eager: bool,
}

/// How a slot gets its value.
#[derive(Clone, Debug)]
pub enum SlotDef {
    Expr(CExpr),
    /// Member of the `let rec` group with this index.
    Rec(usize),
    /// Bound by a `with` for each choice.
    WithVar,
}

#[derive(Clone, Debug)]
pub struct SlotInfo {
    pub name: String,
    pub def: SlotDef,
    pub ty: Ty,
}

/// A `let rec` group: its slots, bodies (members are `Local(k)`) and types.
#[derive(Clone, Debug)]
pub struct RecGroup {
    pub members: Vec<(usize, CExpr, Ty)>,
    pub loc: Loc,
}

/// A `let rec` of values (not functions): each member's body and, for a
/// tuple pattern `(a, b) = e`, its number of components.
#[derive(Clone, Debug)]
pub struct ValueRec {
    pub members: Vec<(CExpr, Option<usize>)>,
    pub loc: Loc,
}

/// A user function `let f(a, b) = body` (parameters are `Local(k)`).
#[derive(Clone, Debug)]
pub struct Func {
    pub name: String,
    pub arity: usize,
    pub body: CExpr,
}

/// A compiled check.
#[derive(Clone, Debug)]
pub struct CCheck {
    pub mode: CheckMode,
    pub negated: bool,
    pub test: Test,
    pub expr: CExpr,
    /// The `as` name, or the source text.
    pub label: String,
    /// Names the check expression refers to directly (for explanations).
    pub refs: Vec<(String, CExpr)>,
}

impl CCheck {
    pub fn kind(&self) -> CheckKind {
        match (self.test, self.negated) {
            (Test::Acyclic, false) => CheckKind::Acyclic,
            (Test::Irreflexive, false) => CheckKind::Irreflexive,
            (Test::Empty, false) => CheckKind::Empty,
            (Test::Acyclic, true) => CheckKind::NotAcyclic,
            (Test::Irreflexive, true) => CheckKind::NotIrreflexive,
            (Test::Empty, true) => CheckKind::NotEmpty,
        }
    }
}

/// A compiled general `with x from e`: each member of the set `e` is a choice.
#[derive(Clone, Debug)]
pub struct CWithFrom {
    pub slot: usize,
    pub expr: CExpr,
    pub label: String,
}

/// A compiled `with x from linearisations(set, rel)`.
#[derive(Clone, Debug)]
pub struct CWith {
    pub slot: usize,
    pub set: CExpr,
    pub rel: Option<CExpr>,
    pub label: String,
}

#[derive(Clone, Debug)]
pub enum CStmt {
    Check(CCheck),
    With(CWith),
    WithFrom(CWithFrom),
    Forall(CForall),
}

/// A compiled `forall x in e do body end`: the body's checks must hold for
/// every member of `e` (bound to `slot` in turn).
#[derive(Clone, Debug)]
pub struct CForall {
    pub slot: usize,
    pub set: CExpr,
    pub body: Vec<CStmt>,
}

/// A resolved, type-checked model.
#[derive(Clone, Debug, Default)]
pub struct Program {
    pub env_names: Vec<EnvName>,
    pub slots: Vec<SlotInfo>,
    pub groups: Vec<RecGroup>,
    pub funcs: Vec<Func>,
    pub stmts: Vec<CStmt>,
    pub lambdas: Vec<Lambda>,
    /// The environment's `loc` (for `classes-loc`), when some code needs it.
    pub loc_env: Option<usize>,
    /// The slot a top-level `with co from ...` binds (the model builds `co`).
    pub co_slot: Option<usize>,
    /// In a model made by [`super::Model::co_native`]: the slot holding the
    /// set the original model chose `co` from.
    pub co_choices: Option<usize>,
    /// Per statement: for a `with`, the later checks that may cut a prefix
    /// of its linearisation (see `super::monotone::with_plans`).
    pub with_checks: Vec<Vec<usize>>,
    /// How many nodes [`Program::number_memos`] numbered.
    pub memo_count: usize,
}

/// Which numbered nodes keep their values per skeleton: per node number,
/// its place among the kept values, or `NO_MEMO`.
pub type MemoPlan = Vec<u32>;

/// A numbered node whose value is not kept.
pub const NO_MEMO: u32 = u32::MAX;

/// Accepted choices of `with`s: their flags and the `co` they bound.
pub type AcceptedChoices = Vec<(Vec<String>, Option<Value>)>;

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
/// A `with` search projects its time once the test has used this share of
/// its timeout, and stops with a limit message when the projection is over
/// it by the engine's margin (`crate::exec::project::margin`).
const WITH_PROJECT_AFTER: f64 = 0.25;

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

type Res<T> = Result<T, Error>;

fn type_error(loc: Loc, what: &str, found: Ty) -> Error {
    Error::new(
        loc,
        format!("type error: {what}, found {}", found.describe()),
    )
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
    /// Which environment names and slots are static for `env` (see
    /// `Environment::is_static`): a slot is static when its definition uses
    /// only static names and static slots (no `with` variable, no `let rec`,
    /// no function call).
    pub fn static_parts(&self, env: &dyn Environment) -> (Vec<bool>, Vec<bool>) {
        let env_static = self.env_static(env);
        let mut slot_static = vec![false; self.slots.len()];
        // Definitions only refer to earlier slots (recursion goes through
        // groups, which are never static), so one pass in order suffices;
        // iterate to a fixpoint anyway in case of forward references.
        loop {
            let mut changed = false;
            for i in 0..self.slots.len() {
                if slot_static[i] {
                    continue;
                }
                if let SlotDef::Expr(e) = &self.slots[i].def
                    && self.expr_static(e, &env_static, &slot_static)
                {
                    slot_static[i] = true;
                    changed = true;
                }
            }
            if !changed {
                return (env_static, slot_static);
            }
        }
    }

    /// Numbers the operator nodes (unary, binary, `domain`, `range`,
    /// `fencerel`) of the definitions and top-level checks, outside any
    /// other construct, so that [`Program::memo_plan`] can keep the values
    /// of their static ones. Copies of the program (pruning plans, the
    /// native-`co` model) keep the numbers: a number names the same
    /// subexpression in each.
    pub fn number_memos(&mut self) {
        fn number(e: &mut CExpr, next: &mut u32) {
            if !matches!(
                e.node,
                Node::Unary(..)
                    | Node::Binary(..)
                    | Node::Domain(_)
                    | Node::Range(_)
                    | Node::FenceRel(..)
            ) {
                return;
            }
            e.memo = Some(*next);
            *next += 1;
            match &mut e.node {
                Node::Unary(_, a) | Node::Domain(a) | Node::Range(a) | Node::FenceRel(a, _) => {
                    number(a, next)
                }
                Node::Binary(_, _, a, b) => {
                    number(a, next);
                    number(b, next);
                }
                _ => {}
            }
        }
        let mut next = self.memo_count as u32;
        for s in &mut self.slots {
            if let SlotDef::Expr(e) = &mut s.def {
                number(e, &mut next);
            }
        }
        for s in &mut self.stmts {
            if let CStmt::Check(c) = s {
                number(&mut c.expr, &mut next);
            }
        }
        self.memo_count = next as usize;
    }

    /// Which numbered nodes keep their values per skeleton, given the
    /// static names and slots: the largest static ones inside definitions
    /// and checks that are not static themselves (a static definition is
    /// kept whole). Such a node has the same value for every candidate of
    /// a skeleton ([`Program::static_parts`]), so reading the kept value
    /// gives what evaluating it would. Returns the plan and the number of
    /// kept nodes.
    pub fn memo_plan(&self, es: &[bool], ss: &[bool]) -> (MemoPlan, usize) {
        let mut plan = vec![NO_MEMO; self.memo_count];
        let mut kept = 0u32;
        let mut mark = |e: &CExpr, outer_static: bool| {
            let mut stack = vec![(e, outer_static)];
            while let Some((e, outer)) = stack.pop() {
                let Some(k) = e.memo else { continue };
                let s = outer || self.static_in(e, es, ss, &[]);
                if s && !outer {
                    plan[k as usize] = kept;
                    kept += 1;
                }
                match &e.node {
                    Node::Unary(_, a) | Node::Domain(a) | Node::Range(a) | Node::FenceRel(a, _) => {
                        stack.push((a, s))
                    }
                    Node::Binary(_, _, a, b) => {
                        stack.push((a, s));
                        stack.push((b, s));
                    }
                    _ => {}
                }
            }
        };
        for (i, s) in self.slots.iter().enumerate() {
            if let SlotDef::Expr(e) = &s.def {
                mark(e, ss.get(i).copied().unwrap_or(false));
            }
        }
        for s in &self.stmts {
            if let CStmt::Check(c) = s {
                mark(&c.expr, false);
            }
        }
        (plan, kept as usize)
    }

    /// Which environment names `env` calls static, by index.
    pub fn env_static(&self, env: &dyn Environment) -> Vec<bool> {
        self.env_names
            .iter()
            .map(|n| env.is_static(&n.name))
            .collect()
    }

    /// Whether `e` has the same value for every environment agreeing on
    /// the static names, given which locals (function arguments, `let`
    /// values, captured values) are static. A function value is static when
    /// its body is for static arguments.
    fn expr_static(&self, e: &CExpr, env_static: &[bool], slot_static: &[bool]) -> bool {
        self.static_in(e, env_static, slot_static, &[])
    }

    fn static_in(&self, e: &CExpr, es: &[bool], ss: &[bool], locals: &[bool]) -> bool {
        let all =
            |xs: &[CExpr], locals: &[bool]| xs.iter().all(|x| self.static_in(x, es, ss, locals));
        match &e.node {
            Node::EmptyRel
            | Node::Universe
            | Node::PrimRef(_)
            | Node::Fail(_)
            | Node::Tag(_)
            | Node::BellSet(_) => true,
            Node::MatchTag(sc, cs, d) => {
                self.static_in(sc, es, ss, locals)
                    && cs.iter().all(|(_, x)| self.static_in(x, es, ss, locals))
                    && d.as_ref().is_none_or(|x| self.static_in(x, es, ss, locals))
            }
            Node::Proj(x, _, _) => self.static_in(x, es, ss, locals),
            Node::Env(i) => es[*i],
            Node::Slot(i) => ss[*i],
            Node::Local(k) => locals.get(*k).copied().unwrap_or(false),
            Node::Call(f, args) => {
                all(args, locals) && {
                    let func = &self.funcs[*f];
                    self.static_in(&func.body, es, ss, &vec![true; func.arity])
                }
            }
            Node::FuncRef(f) => {
                let func = &self.funcs[*f];
                self.static_in(&func.body, es, ss, &vec![true; func.arity])
            }
            Node::Lambda(l) => {
                let lam = &self.lambdas[*l];
                let mut inner = locals.to_vec();
                inner.extend(std::iter::repeat_n(true, lam.arity));
                self.static_in(&lam.body, es, ss, &inner)
            }
            Node::LetRec(lams, body) => {
                let mut inner = locals.to_vec();
                inner.extend(std::iter::repeat_n(true, lams.len()));
                lams.iter().all(|&l| {
                    let lam = &self.lambdas[l];
                    let mut f = inner.clone();
                    f.extend(std::iter::repeat_n(true, lam.arity));
                    self.static_in(&lam.body, es, ss, &f)
                }) && self.static_in(body, es, ss, &inner)
            }
            Node::LetIn(vals, body) => {
                let mut inner = locals.to_vec();
                for v in vals {
                    inner.push(self.static_in(v, es, ss, locals));
                }
                self.static_in(body, es, ss, &inner)
            }
            Node::LetRecVals(g, body) => {
                // Static when every member is, assuming the members are.
                let mut inner = locals.to_vec();
                let comps: usize = g.members.iter().map(|m| m.1.unwrap_or(0)).sum();
                inner.extend(std::iter::repeat_n(true, g.members.len() + comps));
                g.members
                    .iter()
                    .all(|m| self.static_in(&m.0, es, ss, &inner))
                    && self.static_in(body, es, ss, &inner)
            }
            Node::MatchSet(sc, empty, nonempty) => {
                let s = self.static_in(sc, es, ss, locals);
                let mut inner = locals.to_vec();
                inner.extend([s, s]);
                s && self.static_in(empty, es, ss, locals)
                    && self.static_in(nonempty, es, ss, &inner)
            }
            Node::PrimCall(p, args) => {
                let env_ok = match p {
                    Prim::Partition => self.loc_env.is_some_and(|i| es[i]),
                    Prim::FenceRel => self
                        .env_names
                        .iter()
                        .position(|n| n.name == "po")
                        .is_some_and(|i| es[i]),
                    _ => true,
                };
                env_ok && all(args, locals)
            }
            Node::Apply(f, a) => {
                self.static_in(f, es, ss, locals) && self.static_in(a, es, ss, locals)
            }
            Node::Tuple(xs) | Node::ExplicitSet(xs) => all(xs, locals),
            Node::Try(a, b) | Node::Binary(_, _, a, b) => {
                self.static_in(a, es, ss, locals) && self.static_in(b, es, ss, locals)
            }
            Node::Unary(_, a) | Node::Domain(a) | Node::Range(a) => {
                self.static_in(a, es, ss, locals)
            }
            Node::FenceRel(a, po) => es[*po] && self.static_in(a, es, ss, locals),
        }
    }

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
            None => return Err(Error::new(loc, format!("unknown identifier '{name}'"))),
        };
        let size = match &v {
            Value::Set(s) => s.universe(),
            Value::Rel(r) => r.universe(),
            _ => st.n,
        };
        if size != st.n {
            return Err(Error::new(
                loc,
                format!(
                    "the environment's '{name}' ranges over {size} events, expected {}",
                    st.n
                ),
            ));
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
        Err(Error::new(
            group.loc,
            "let rec did not reach a fixpoint (is the definition monotone?)",
        ))
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
            Node::Fail(msg) => return Err(Error::new(e.loc, msg.clone())),
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
                            return Err(Error::new(
                                e.loc,
                                format!("no clause of this match takes the tag '{t}"),
                            ));
                        }
                    },
                }
            }
            Node::Proj(x, k, arity) => {
                let v = self.eval(x, st, locals)?;
                match &*v {
                    Value::Tuple(vs) if vs.len() == *arity => Owned(vs[*k].clone()),
                    other => {
                        return Err(Error::new(
                            e.loc,
                            format!(
                                "a tuple pattern of {arity} names, bound to {}",
                                match other {
                                    Value::Tuple(vs) => format!("a tuple of {}", vs.len()),
                                    v => v.kind().describe().to_string(),
                                }
                            ),
                        ));
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
                        return Err(Error::new(
                            body.loc,
                            format!(
                                "a tuple pattern of {k} names, bound to {}",
                                match other {
                                    Value::Tuple(vs) => format!("a tuple of {}", vs.len()),
                                    v => v.kind().describe().to_string(),
                                }
                            ),
                        ));
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
        Err(Error::new(
            g.loc,
            "let rec did not reach a fixpoint (is the definition monotone?)",
        ))
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
                other => Err(Error::new(
                    loc,
                    format!(
                        "argument mismatch: the function takes {arity} arguments, found {}",
                        match &other {
                            Value::Tuple(vs) => format!("a tuple of {}", vs.len()),
                            v => v.kind().describe().to_string(),
                        }
                    ),
                )),
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
            other => Err(Error::new(
                loc,
                format!(
                    "closure or primitive expected, found {}",
                    other.kind().describe()
                ),
            )),
        }
    }

    /// Runs a built-in function.
    fn prim(&self, p: Prim, args: Vec<Value>, st: &State<'_>, loc: Loc) -> Res<Value> {
        let want = if p == Prim::Linearisations { 2 } else { 1 };
        if args.len() != want {
            return Err(Error::new(
                loc,
                format!(
                    "primitive {}: argument mismatch (takes {want}, found {})",
                    super::func::prim_name(p),
                    args.len()
                ),
            ));
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

    // ----- instructions -----------------------------------------------------

    /// The relations bound by the `let`s whose names satisfy `want` (the
    /// last binding of a name wins), in `st` as left by an accepting
    /// [`Program::run`]: bindings after a `with` take the accepted choice.
    /// Sets and failed evaluations are left out.
    pub fn named_relations(
        &self,
        st: &State<'_>,
        want: &dyn Fn(&str) -> bool,
    ) -> Vec<(String, Relation)> {
        let mut out: Vec<(String, Relation)> = Vec::new();
        for (i, info) in self.slots.iter().enumerate() {
            if !want(&info.name) || matches!(info.def, SlotDef::WithVar) {
                continue;
            }
            if let Ok(Value::Rel(r)) = self.slot_value(i, st) {
                out.retain(|(n, _)| *n != info.name);
                out.push((info.name.clone(), r.clone()));
            }
        }
        out
    }

    /// Runs the model on `st`. With `explain`, failures carry shortest cycles
    /// and the values of the names the failing check refers to.
    pub fn run(
        &self,
        st: &mut State<'_>,
        explain: bool,
    ) -> Res<(bool, Vec<String>, Option<Failure>)> {
        let mut flags = Vec::new();
        match self.run_from(0, st, &mut flags, true, explain)? {
            Verdict::Allowed => Ok((true, flags, None)),
            Verdict::Forbidden(f) => Ok((false, Vec::new(), f)),
        }
    }

    fn run_from(
        &self,
        from: usize,
        st: &mut State<'_>,
        flags: &mut Vec<String>,
        want_failure: bool,
        explain: bool,
    ) -> Res<Verdict> {
        for (i, stmt) in self.stmts.iter().enumerate().skip(from) {
            match stmt {
                CStmt::Check(c) => {
                    if let Some(f) = self.run_check(c, st, flags, want_failure, explain)? {
                        return Ok(Verdict::Forbidden(f));
                    }
                }
                CStmt::With(w) => return self.run_with(i, w, st, flags, want_failure, explain),
                CStmt::WithFrom(w) => {
                    return self.run_with_from(i, w, st, flags, want_failure, explain);
                }
                CStmt::Forall(f) => {
                    if let Some(fail) = self.run_forall(f, st, flags, want_failure, explain)? {
                        return Ok(Verdict::Forbidden(fail));
                    }
                }
            }
        }
        if st.all_choices {
            // Record this choice and go on with the next one.
            let co = self.co_slot.and_then(|s| st.slots[s].get().cloned());
            st.accepted.push((flags.clone(), co));
            return Ok(Verdict::Forbidden(None));
        }
        Ok(Verdict::Allowed)
    }

    /// Like [`Program::run`], but enumerates every choice of the `with`s and
    /// returns, per accepted one, its flags and the value bound to `co`.
    pub fn run_all(&self, st: &mut State<'_>) -> Res<Vec<(Vec<String>, Option<Value>)>> {
        st.all_choices = true;
        st.accepted.clear();
        let mut flags = Vec::new();
        self.run_from(0, st, &mut flags, false, false)?;
        Ok(std::mem::take(&mut st.accepted))
    }

    /// Like [`Program::run_all`], and also returns, per rejected choice of
    /// the model's `with co from`, the `co` it bound and the failed check
    /// (with its shortest cycle and relations, as `evaluate_explain` gives
    /// them). Slower: every rejected choice is explained.
    pub fn run_all_explained(
        &self,
        st: &mut State<'_>,
    ) -> Res<(AcceptedChoices, Vec<(Value, Failure)>)> {
        st.all_choices = true;
        st.accepted.clear();
        st.rejected = Some(Vec::new());
        let mut flags = Vec::new();
        self.run_from(0, st, &mut flags, true, true)?;
        Ok((
            std::mem::take(&mut st.accepted),
            st.rejected.take().unwrap_or_default(),
        ))
    }

    /// Runs a `forall`; `Some(failure)` when a check of its body fails for
    /// some member.
    fn run_forall(
        &self,
        f: &CForall,
        st: &mut State<'_>,
        flags: &mut Vec<String>,
        want_failure: bool,
        explain: bool,
    ) -> Res<Option<Option<Failure>>> {
        let mut rest = self.eval(&f.set, st, &[])?.into_owned();
        while let Some((x, r)) = super::func::split(rest, f.set.loc)? {
            rest = r;
            for (k, cell) in st.slots.iter_mut().enumerate().skip(f.slot) {
                if !st.keep.get(k).copied().unwrap_or(false) {
                    cell.take();
                }
            }
            let _ = st.slots[f.slot].set(x);
            let failed = self.run_body(&f.body, st, flags, want_failure, explain)?;
            if failed.is_some() {
                return Ok(failed);
            }
        }
        Ok(None)
    }

    /// Runs the instructions of a `forall` body for the current member;
    /// `Some(failure)` when they fail. A `with` in the body is a local
    /// existential: the rest of the body must hold for some choice (its
    /// names stay inside the body, so nothing after the `forall` sees it).
    fn run_body(
        &self,
        body: &[CStmt],
        st: &mut State<'_>,
        flags: &mut Vec<String>,
        want_failure: bool,
        explain: bool,
    ) -> Res<Option<Option<Failure>>> {
        for (j, stmt) in body.iter().enumerate() {
            let (slot, choices, label) = match stmt {
                CStmt::Check(c) => {
                    if let Some(f) = self.run_check(c, st, flags, want_failure, explain)? {
                        return Ok(Some(f));
                    }
                    continue;
                }
                CStmt::Forall(g) => {
                    if let Some(f) = self.run_forall(g, st, flags, want_failure, explain)? {
                        return Ok(Some(f));
                    }
                    continue;
                }
                CStmt::WithFrom(w) => {
                    let choices = match self.eval(&w.expr, st, &[])?.into_owned() {
                        Value::Empty => Vec::new(),
                        Value::ValSet(vs) => vs.as_ref().clone(),
                        other => {
                            return Err(type_error(
                                w.expr.loc,
                                "'with ... from' expects a set of values",
                                other.kind(),
                            ));
                        }
                    };
                    (w.slot, choices, &w.label)
                }
                CStmt::With(w) => {
                    let (set, rel) = self.with_operands(w, st)?;
                    let choices = match super::func::linearisations(&set, &rel) {
                        Value::ValSet(vs) => vs.as_ref().clone(),
                        _ => Vec::new(),
                    };
                    (w.slot, choices, &w.label)
                }
            };
            let flags_len = flags.len();
            let mut first: Option<Option<Failure>> = None;
            for choice in choices {
                for (k, cell) in st.slots.iter_mut().enumerate().skip(slot) {
                    if !st.keep.get(k).copied().unwrap_or(false) {
                        cell.take();
                    }
                }
                let _ = st.slots[slot].set(choice);
                flags.truncate(flags_len);
                let want = want_failure && first.is_none();
                match self.run_body(&body[j + 1..], st, flags, want, explain)? {
                    None => return Ok(None),
                    Some(f) => {
                        if first.is_none() {
                            first = Some(f);
                        }
                    }
                }
            }
            flags.truncate(flags_len);
            return Ok(Some(match first {
                Some(f) => f,
                None => want_failure.then(|| Failure {
                    check: label.clone(),
                    kind: CheckKind::Empty,
                    witness: Vec::new(),
                    relations: Vec::new(),
                    path: Vec::new(),
                }),
            }));
        }
        Ok(None)
    }

    fn run_with_from(
        &self,
        i: usize,
        w: &CWithFrom,
        st: &mut State<'_>,
        flags: &mut Vec<String>,
        want_failure: bool,
        explain: bool,
    ) -> Res<Verdict> {
        let v = self.eval(&w.expr, st, &[])?.into_owned();
        let choices: Vec<Value> = match v {
            Value::Empty => Vec::new(),
            Value::ValSet(vs) => vs.as_ref().clone(),
            other => {
                return Err(type_error(
                    w.expr.loc,
                    "'with ... from' expects a set of values",
                    other.kind(),
                ));
            }
        };
        let flags_len = flags.len();
        let mut first_failure: Option<Option<Failure>> = None;
        for choice in choices {
            for (k, cell) in st.slots.iter_mut().enumerate().skip(w.slot) {
                if !st.keep.get(k).copied().unwrap_or(false) {
                    cell.take();
                }
            }
            let explained = st.rejected.is_some() && self.co_slot == Some(w.slot);
            let bound = explained.then(|| choice.clone());
            let _ = st.slots[w.slot].set(choice);
            flags.truncate(flags_len);
            let want = want_failure && (first_failure.is_none() || explained);
            match self.run_from(i + 1, st, flags, want, explain)? {
                Verdict::Allowed => return Ok(Verdict::Allowed),
                Verdict::Forbidden(f) => {
                    if let (Some(co), Some(fail), Some(out)) = (bound, &f, st.rejected.as_mut()) {
                        out.push((co, fail.clone()));
                    }
                    if first_failure.is_none() {
                        first_failure = Some(f);
                    }
                }
            }
        }
        flags.truncate(flags_len);
        Ok(Verdict::Forbidden(match first_failure {
            Some(f) => f,
            None => want_failure.then(|| Failure {
                check: w.label.clone(),
                kind: CheckKind::Empty,
                witness: Vec::new(),
                relations: Vec::new(),
                path: Vec::new(),
            }),
        }))
    }

    /// Whether check `c` holds on `st` (flags and failures dropped); used on
    /// partial candidates by the pruning search.
    pub fn check_holds(&self, c: &CCheck, st: &State<'_>) -> Res<bool> {
        if st.deadline.is_some_and(|d| std::time::Instant::now() > d) {
            return Err(super::guard::past_deadline(c.expr.loc));
        }
        Ok(self
            .run_check(c, st, &mut Vec::new(), false, false)?
            .is_none())
    }

    /// Sets every `with` variable at statement `from` or later to the empty
    /// relation (its least value) for a partial evaluation.
    pub fn least_with_values(&self, from: usize, st: &mut State<'_>) {
        for s in &self.stmts[from..] {
            if let CStmt::With(w) = s {
                st.set_slot(w.slot, Value::Rel(Relation::empty(st.n)));
            }
        }
    }

    /// Runs one check; `Some(failure)` when it forbids the execution.
    fn run_check(
        &self,
        c: &CCheck,
        st: &State<'_>,
        flags: &mut Vec<String>,
        want_failure: bool,
        explain: bool,
    ) -> Res<Option<Option<Failure>>> {
        let mut v = self.eval(&c.expr, st, &[])?;
        if *v == Value::Empty {
            v = Cow::Owned(Value::Rel(Relation::empty(st.n)));
        }
        let loc = c.expr.loc;
        let (positive, witness): (bool, Vec<usize>) = match c.test {
            Test::Acyclic => {
                let r = expect_rel(&v, loc, "acyclic expects a relation")?;
                let w = if explain && !c.negated {
                    r.shortest_cycle()
                } else {
                    r.cycle_witness()
                };
                (w.is_none(), w.unwrap_or_default())
            }
            Test::Irreflexive => {
                let r = expect_rel(&v, loc, "irreflexive expects a relation")?;
                let w = r.irreflexive_witness();
                (w.is_none(), w.into_iter().collect())
            }
            Test::Empty => match &*v {
                Value::Set(s) => (s.is_empty(), s.iter().collect()),
                Value::Rel(r) => (r.is_empty(), r.pairs().flat_map(|(a, b)| [a, b]).collect()),
                Value::ValSet(vs) => (vs.is_empty(), Vec::new()),
                other => {
                    return Err(type_error(
                        loc,
                        "empty expects a set or a relation",
                        other.kind(),
                    ));
                }
            },
        };
        let holds = positive != c.negated;
        match c.mode {
            CheckMode::Flag => {
                if holds {
                    flags.push(c.label.clone());
                }
                Ok(None)
            }
            CheckMode::UndefinedUnless => {
                if !holds {
                    flags.push("undefined".to_string());
                }
                Ok(None)
            }
            CheckMode::Assert if holds => Ok(None),
            CheckMode::Assert => Err(Error::new(
                c.expr.loc,
                format!("assertion failed: {}", c.label),
            )),
            CheckMode::Require if holds => Ok(None),
            CheckMode::Require => {
                if !want_failure {
                    return Ok(Some(None));
                }
                let mut relations = Vec::new();
                if explain {
                    if let Value::Rel(r) = &*v {
                        relations.push((c.label.clone(), r.clone()));
                    }
                    for (name, e) in &c.refs {
                        if let Ok(val) = self.eval(e, st, &[])
                            && let Value::Rel(r) = &*val
                        {
                            relations.push((name.clone(), r.clone()));
                        }
                    }
                }
                let mut path = Vec::new();
                if explain && !c.negated {
                    path = self.witness_path(c, &witness, st);
                }
                Ok(Some(Some(Failure {
                    check: c.label.clone(),
                    kind: c.kind(),
                    witness: if c.negated { Vec::new() } else { witness },
                    relations,
                    path,
                })))
            }
        }
    }

    /// The set and the relation of a `with x from linearisations(set,
    /// rel)` (no relation: the empty one).
    fn with_operands(&self, w: &CWith, st: &mut State<'_>) -> Res<(BitSet, Relation)> {
        let s = self.eval(&w.set, st, &[])?;
        let set = expect_set(&s, w.set.loc, "linearisations expects a set")?.clone();
        let rel = match &w.rel {
            Some(e) => into_rel(
                self.eval(e, st, &[])?,
                e.loc,
                "linearisations expects a relation",
            )?,
            None => Relation::empty(st.n),
        };
        Ok((set, rel))
    }

    fn run_with(
        &self,
        i: usize,
        w: &CWith,
        st: &mut State<'_>,
        flags: &mut Vec<String>,
        want_failure: bool,
        explain: bool,
    ) -> Res<Verdict> {
        let (set, rel) = self.with_operands(w, st)?;
        let flags_len = flags.len();
        let mut first_failure: Option<Option<Failure>> = None;
        let mut error = None;
        // Prefixes are judged only after the first complete order, whose
        // failure is the one reported: pruning then never changes it.
        let plan = self
            .with_checks
            .get(i)
            .filter(|p| st.prune && !p.is_empty());
        let mut leaf_seen = false;
        let began = std::time::Instant::now();
        let (mut visited, size) = (0u64, set.count());
        let flow = Relation::search_linearisations_share(&set, &rel, |order, complete, done| {
            if !complete {
                st.with_nodes += 1;
                visited += 1;
                if st.deadline.is_some_and(|d| std::time::Instant::now() > d) {
                    error = Some(Error::new(w.set.loc, "time budget exceeded"));
                    return ControlFlow::Break(());
                }
                if let Some(msg) =
                    with_limit(&st.with_limits, st.with_nodes, visited, done, began, size)
                {
                    st.limit = Some(msg);
                    error = Some(Error::new(w.set.loc, "work budget exceeded"));
                    return ControlFlow::Break(());
                }
                let Some(plan) = plan.filter(|_| leaf_seen) else {
                    return ControlFlow::Continue(true);
                };
                for (k, cell) in st.slots.iter_mut().enumerate().skip(w.slot) {
                    if !st.keep.get(k).copied().unwrap_or(false) {
                        cell.take();
                    }
                }
                self.least_with_values(i + 1, st);
                let _ = st.slots[w.slot].set(Value::Rel(order.clone()));
                for &j in plan {
                    if let CStmt::Check(c) = &self.stmts[j]
                        && let Ok(false) = self.check_holds(c, st)
                    {
                        st.with_pruned += 1;
                        return ControlFlow::Continue(false);
                    }
                }
                return ControlFlow::Continue(true);
            }
            leaf_seen = true;
            for (k, cell) in st.slots.iter_mut().enumerate().skip(w.slot) {
                if !st.keep.get(k).copied().unwrap_or(false) {
                    cell.take();
                }
            }
            let _ = st.slots[w.slot].set(Value::Rel(order.clone()));
            flags.truncate(flags_len);
            let want = want_failure && first_failure.is_none();
            match self.run_from(i + 1, st, flags, want, explain) {
                Ok(Verdict::Allowed) => ControlFlow::Break(()),
                Ok(Verdict::Forbidden(f)) => {
                    if first_failure.is_none() {
                        first_failure = Some(f);
                    }
                    ControlFlow::Continue(true)
                }
                Err(e) => {
                    error = Some(e);
                    ControlFlow::Break(())
                }
            }
        });
        if let Some(e) = error {
            return Err(e);
        }
        if flow.is_break() {
            return Ok(Verdict::Allowed);
        }
        flags.truncate(flags_len);
        Ok(Verdict::Forbidden(match first_failure {
            Some(f) => f,
            // No choice at all: the constraint is cyclic on the set.
            None => want_failure.then(|| Failure {
                check: w.label.clone(),
                kind: CheckKind::Acyclic,
                witness: rel.restrict_to(&set).cycle_witness().unwrap_or_default(),
                relations: Vec::new(),
                path: Vec::new(),
            }),
        }))
    }
}

/// Whether a `with` search over the linearisations of `size` elements,
/// `nodes` partial orders into the evaluation (`visited` in this search,
/// begun at `began`, `done` of its tree covered), must stop: its message.
fn with_limit(
    limits: &WithLimits,
    nodes: u64,
    visited: u64,
    done: f64,
    began: std::time::Instant,
    size: usize,
) -> Option<String> {
    if nodes > limits.max_nodes {
        return Some(format!(
            "a `with` search over the orders of {size} events visited more than {} partial \
             orders, the rest of the work budget (raise --max-candidates)",
            limits.max_nodes
        ));
    }
    let (start, timeout) = limits.timeout?;
    if !visited.is_multiple_of(WITH_PROJECT_EVERY) {
        return None;
    }
    let (elapsed, limit) = (start.elapsed().as_secs_f64(), timeout.as_secs_f64());
    let margin = crate::exec::project::margin(elapsed, limit);
    // Late in the timeout, nothing covered yet projects past it too.
    if done <= 0.0 && margin > 1.0 {
        return None;
    }
    let before = elapsed - began.elapsed().as_secs_f64();
    let projected = before + began.elapsed().as_secs_f64() / done.max(1e-9);
    (elapsed > limit * WITH_PROJECT_AFTER && projected > limit * margin).then(|| {
        format!(
            "a `with` search over the orders of {size} events would take up to about \
             {projected:.0} s: {:.2}% of its orders covered after {:.1} s (projected from the \
             share of its search tree covered), over --timeout {limit} s",
            done * 100.0,
            elapsed - before
        )
    })
}

/// Depth bound for spelling a witness out through definitions.
const EXPLAIN_DEPTH: usize = 64;

/// Names that relate events by where they are rather than by what happened;
/// an explanation through them says less than one through `po`, `rf`, ...
fn is_structural(label: &str) -> bool {
    let label = label.trim_end_matches("^-1");
    matches!(label, "loc" | "ext" | "int" | "id" | "_" | "derived")
        || label.chars().all(|c| c.is_ascii_lowercase())
            && !matches!(
                label,
                "po" | "rf"
                    | "co"
                    | "fr"
                    | "rmw"
                    | "addr"
                    | "data"
                    | "ctrl"
                    | "bar"
                    | "rfe"
                    | "rfi"
                    | "coe"
                    | "coi"
                    | "fre"
                    | "fri"
            )
            && label.len() <= 4
            && !label.contains('-')
}

impl Program {
    /// Spells a failing check's witness out as steps through the definitions.
    fn witness_path(
        &self,
        c: &CCheck,
        witness: &[usize],
        st: &State<'_>,
    ) -> Vec<(usize, usize, String)> {
        let pairs: Vec<(usize, usize)> = match c.test {
            Test::Acyclic => (0..witness.len())
                .map(|k| (witness[k], witness[(k + 1) % witness.len()]))
                .collect(),
            Test::Irreflexive => witness.iter().map(|&e| (e, e)).collect(),
            Test::Empty => witness
                .chunks(2)
                .filter(|p| p.len() == 2)
                .map(|p| (p[0], p[1]))
                .take(1)
                .collect(),
        };
        let mut out = Vec::new();
        for (a, b) in pairs {
            if !self.decompose(&c.expr, a, b, st, EXPLAIN_DEPTH, &mut out) {
                out.push((a, b, c.label.clone()));
            }
        }
        out
    }

    fn rel_value(&self, e: &CExpr, st: &State<'_>) -> Option<Relation> {
        match self.eval(e, st, &[]).ok()?.as_ref() {
            Value::Rel(r) => Some(r.clone()),
            _ => None,
        }
    }

    fn opaque_label(&self, e: &CExpr) -> String {
        match &e.node {
            Node::Env(i) => self.env_names[*i].name.clone(),
            Node::Slot(i) => self.slots[*i].name.clone(),
            Node::Call(f, _) => self.funcs[*f].name.clone(),
            _ => "derived".to_string(),
        }
    }

    /// Pushes steps from `a` to `b` through `e` (which must relate them);
    /// false when `e` does not relate them.
    fn decompose(
        &self,
        e: &CExpr,
        a: usize,
        b: usize,
        st: &State<'_>,
        depth: usize,
        out: &mut Vec<(usize, usize, String)>,
    ) -> bool {
        let Some(r) = self.rel_value(e, st) else {
            return false;
        };
        if !r.contains(a, b) {
            return false;
        }
        if depth == 0 {
            out.push((a, b, self.opaque_label(e)));
            return true;
        }
        let d = depth - 1;
        match &e.node {
            Node::Env(_)
            | Node::Call(..)
            | Node::Local(_)
            | Node::EmptyRel
            | Node::Universe
            | Node::Apply(..)
            | Node::FuncRef(_)
            | Node::PrimRef(_)
            | Node::PrimCall(..)
            | Node::Lambda(_)
            | Node::Tuple(_)
            | Node::ExplicitSet(_)
            | Node::LetIn(..)
            | Node::LetRec(..)
            | Node::LetRecVals(..)
            | Node::MatchSet(..)
            | Node::MatchTag(..)
            | Node::Proj(..)
            | Node::Tag(_)
            | Node::BellSet(_)
            | Node::Try(..)
            | Node::Fail(_) => {
                out.push((a, b, self.opaque_label(e)));
            }
            Node::Slot(i) => match &self.slots[*i].def {
                SlotDef::Expr(inner) => {
                    if !self.decompose(inner, a, b, st, d, out) {
                        out.push((a, b, self.opaque_label(e)));
                    }
                }
                SlotDef::Rec(_) | SlotDef::WithVar => out.push((a, b, self.opaque_label(e))),
            },
            Node::Unary(op, x) => match op {
                UnOp::ToId => {}
                UnOp::Opt if a == b => {}
                UnOp::Star if a == b => {}
                UnOp::Opt => {
                    self.decompose(x, a, b, st, d, out);
                }
                UnOp::Inverse => {
                    let mut tmp = Vec::new();
                    self.decompose(x, b, a, st, d, &mut tmp);
                    for (p, q, l) in tmp.into_iter().rev() {
                        out.push((q, p, format!("{l}^-1")));
                    }
                }
                UnOp::Plus | UnOp::Star => match self.rel_value(x, st).and_then(|s| s.path(a, b)) {
                    Some(hops) => {
                        for w in hops.windows(2) {
                            if !self.decompose(x, w[0], w[1], st, d, out) {
                                out.push((w[0], w[1], self.opaque_label(x)));
                            }
                        }
                    }
                    None => out.push((a, b, self.opaque_label(e))),
                },
                UnOp::Complement => out.push((a, b, "derived".to_string())),
            },
            Node::Binary(op, _, l, rr) => match op {
                BinOp::Union => {
                    if !self.decompose(l, a, b, st, d, out) && !self.decompose(rr, a, b, st, d, out)
                    {
                        out.push((a, b, "derived".to_string()));
                    }
                }
                BinOp::Inter => {
                    // Prefer the operand that explains by what happened (po,
                    // rf, ...) over one that only says where events are.
                    let mut left = Vec::new();
                    let mut right = Vec::new();
                    self.decompose(l, a, b, st, d, &mut left);
                    self.decompose(rr, a, b, st, d, &mut right);
                    let score = |v: &Vec<(usize, usize, String)>| {
                        v.iter().filter(|s| is_structural(&s.2)).count()
                    };
                    out.extend(if score(&right) < score(&left) {
                        right
                    } else {
                        left
                    });
                }
                BinOp::Diff => {
                    if !self.decompose(l, a, b, st, d, out) {
                        out.push((a, b, "derived".to_string()));
                    }
                }
                BinOp::Seq => {
                    let (Some(lv), Some(rv)) = (self.rel_value(l, st), self.rel_value(rr, st))
                    else {
                        out.push((a, b, "derived".to_string()));
                        return true;
                    };
                    match (0..st.n).find(|&c| lv.contains(a, c) && rv.contains(c, b)) {
                        Some(c) => {
                            self.decompose(l, a, c, st, d, out);
                            self.decompose(rr, c, b, st, d, out);
                        }
                        None => out.push((a, b, "derived".to_string())),
                    }
                }
                BinOp::Cartesian | BinOp::Add => out.push((a, b, "derived".to_string())),
            },
            Node::FenceRel(s, po_name) => {
                let set = match self.eval(s, st, &[]).ok().as_deref() {
                    Some(Value::Set(s)) => s.clone(),
                    _ => BitSet::new(st.n),
                };
                let po = match self.env_value(*po_name, e.loc, st) {
                    Ok(Value::Rel(po)) => po.clone(),
                    _ => Relation::empty(st.n),
                };
                match set.iter().find(|&c| po.contains(a, c) && po.contains(c, b)) {
                    Some(c) => {
                        out.push((a, c, "po".to_string()));
                        out.push((c, b, "po".to_string()));
                    }
                    None => out.push((a, b, "fencerel".to_string())),
                }
            }
            Node::Domain(_) | Node::Range(_) => return false,
        }
        true
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
                return Err(mismatch(&x, &y));
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
            (a, b) => Err(Error::new(
                loc,
                format!(
                    "type error: ';' needs two relations, found {} and {}",
                    a.kind().describe(),
                    b.kind().describe()
                ),
            )),
        },
        BinOp::Cartesian => match (&*x, &*y) {
            (Value::Set(a), Value::Set(b)) => Ok(Value::Rel(Relation::cartesian(a, b))),
            (a, b) => Err(Error::new(
                loc,
                format!(
                    "type error: '*' needs two sets, found {} and {}",
                    a.kind().describe(),
                    b.kind().describe()
                ),
            )),
        },
        BinOp::Add => unreachable!("handled by binary_other"),
    }
}
