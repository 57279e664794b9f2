//! The resolved program: values, compiled expressions, slots and statements.

use super::*;

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
    /// herd's page-table filters `oa-changes(W, r)` and
    /// `at-least-one-writable(W, r)`: the page-table stores of `W` whose
    /// one `r`-successor changes the output address / is writable. No
    /// front end of litmix makes page-table events, so always empty.
    PageTableStores,
    /// herd's `same-oa(r)`: the pairs of `r` whose page-table values have
    /// the same output address; empty, as above.
    SameOutputAddress,
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
    /// The environment names `expr` reads ([`Program::expr_inputs`]),
    /// found on first use: every skeleton of every test asks.
    pub inputs: std::sync::OnceLock<Option<super::Inputs>>,
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
