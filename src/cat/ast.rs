//! Surface syntax of cat models, as parsed (before name resolution).
//!
//! The tree mirrors herd's grammar: the relational core, then herd's
//! functional tier (tuples, explicit sets, tags, `fun`, `match`,
//! `let ... in`, procedures, `forall`, `enum`).

use crate::diag::Pos;

/// A position in one of the files making up a model (`file` indexes the
/// model's file table: 0 is the main file, then includes in load order).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Loc {
    pub file: usize,
    pub pos: Pos,
}

/// Prefix and postfix operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    /// `~e`: complement (set w.r.t. all events, relation w.r.t. all pairs).
    Complement,
    /// `e+` / `e^+`: transitive closure.
    Plus,
    /// `e*` / `e^*`: reflexive-transitive closure.
    Star,
    /// `e?` / `e^?`: `e | id`.
    Opt,
    /// `e^-1`: inverse.
    Inverse,
    /// `[e]`: identity restricted to a set.
    ToId,
}

impl UnOp {
    /// The operator as written.
    pub fn symbol(self) -> &'static str {
        match self {
            UnOp::Complement => "~",
            UnOp::Plus => "+",
            UnOp::Star => "*",
            UnOp::Opt => "?",
            UnOp::Inverse => "^-1",
            UnOp::ToId => "[...]",
        }
    }
}

/// Infix operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    /// `|`
    Union,
    /// `++`
    Add,
    /// `;`
    Seq,
    /// `\`
    Diff,
    /// `&`
    Inter,
    /// `*` between two operands: cartesian product of two sets.
    Cartesian,
}

impl BinOp {
    /// The operator as written.
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Union => "|",
            BinOp::Add => "++",
            BinOp::Seq => ";",
            BinOp::Diff => "\\",
            BinOp::Inter => "&",
            BinOp::Cartesian => "*",
        }
    }
}

/// An expression with the location of its first character.
#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub loc: Loc,
}

/// Expression forms.
#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    /// `0`: the empty relation.
    EmptyRel,
    /// `_`: the set of all events.
    Universe,
    /// A name: `let`-bound, a function parameter, or predefined.
    Var(String),
    /// Prefix or postfix operator.
    Unary(UnOp, Box<Expr>),
    /// Infix operator; `op_loc` is where the operator is written.
    Binary {
        op: BinOp,
        op_loc: Loc,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    /// `f(e1, ..., en)`, also `f e` (one argument) by juxtaposition.
    App { func: String, args: Vec<Expr> },
    // ----- herd's functional tier (docs/cat-language.md) -----
    /// `e1 e2` where `e1` is itself an application (curried `f a b`).
    Apply { func: Box<Expr>, arg: Box<Expr> },
    /// `(e1, ..., en)`; `()` is the empty tuple.
    Tuple(Vec<Expr>),
    /// `{e1, ..., en}`; `{}` is the empty (polymorphic) set.
    ExplicitSet(Vec<Expr>),
    /// `fun x -> e`, `fun (a, b) -> e`.
    Fun { params: Pattern, body: Box<Expr> },
    /// `let [rec] b1 and ... in e`.
    LetIn {
        rec: bool,
        bindings: Vec<Binding>,
        body: Box<Expr>,
    },
    /// `match e with || {} -> e1 || x ++ s -> e2 end`.
    MatchSet {
        scrutinee: Box<Expr>,
        empty: Box<Expr>,
        elem: String,
        rest: String,
        nonempty: Box<Expr>,
    },
    /// `try e with e'`: `e`, or `e'` when evaluating `e` fails.
    Try(Box<Expr>, Box<Expr>),
    /// `if cond then e1 else e2`: a condition on variants is decided when
    /// the model is loaded, one on values when the expression is evaluated.
    If {
        cond: Box<Cond>,
        then: Box<Expr>,
        els: Box<Expr>,
    },
    /// `'name`: a tag (a constant of an `enum`).
    Tag(String),
    /// The events annotated with the tag (herd's bell sets: an `enum` of a
    /// `.bell` file binds `Acquire` to the events annotated `'acquire`).
    /// Not written by users: the loader adds it for bell files.
    BellSet(String),
    /// `match e with 'a -> e1 || 'b -> e2 || _ -> e3 end`: by tag.
    MatchTag {
        scrutinee: Box<Expr>,
        clauses: Vec<(String, Expr)>,
        default: Option<Box<Expr>>,
    },
}

/// The condition of an `if` (herd's `cond`).
#[derive(Clone, Debug, PartialEq)]
pub enum Cond {
    /// A formula over variants (`"v"`, `variant "v"`, `not`, `&&`, `||`),
    /// decided when the model is loaded.
    Variants(VariantCond),
    /// `e1 = e2`: the two values are equal.
    Eq(Expr, Expr),
    /// `e1 subset e2`: inclusion of event sets, relations or sets of values.
    Subset(Expr, Expr),
    /// `e1 in e2`: membership of a value in a set of values.
    In(Expr, Expr),
}

/// A formula over model variants (herd's `-variant`).
#[derive(Clone, Debug, PartialEq)]
pub enum VariantCond {
    /// `"name"` (or `variant "name"`): set by `--variant name`.
    Is(String),
    /// `not c`.
    Not(Box<VariantCond>),
    /// `c1 && c2`.
    And(Box<VariantCond>, Box<VariantCond>),
    /// `c1 || c2`.
    Or(Box<VariantCond>, Box<VariantCond>),
}

impl VariantCond {
    /// Whether the formula holds when exactly `set` are set.
    pub fn holds(&self, set: &[String]) -> bool {
        match self {
            VariantCond::Is(v) => set.contains(v),
            VariantCond::Not(c) => !c.holds(set),
            VariantCond::And(a, b) => a.holds(set) && b.holds(set),
            VariantCond::Or(a, b) => a.holds(set) || b.holds(set),
        }
    }
}

/// Parameters of a function: one name (`fun x ->`, `let f x =`) or a tuple
/// (`fun (a, b) ->`, `let f(a, b) =`). `None` is `_`.
#[derive(Clone, Debug, PartialEq)]
pub struct Pattern {
    pub names: Vec<Option<String>>,
    /// Written as a tuple (so one argument is destructured).
    pub tuple: bool,
}

/// One binding of a `let`: `x = e` or `f(a, b) = e`.
#[derive(Clone, Debug, PartialEq)]
pub struct Binding {
    pub name: String,
    pub loc: Loc,
    /// `Some` for a function binding (its parameter names).
    pub params: Option<Vec<(String, Loc)>>,
    /// `Some` for a tuple pattern `let (a, b) = e` (`name` is then the
    /// pattern as written; `None` members are `_`).
    pub tuple: Option<Vec<Option<String>>>,
    pub body: Expr,
}

/// The test of a check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Test {
    Acyclic,
    Irreflexive,
    Empty,
}

/// How a check's result is used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CheckMode {
    /// A plain check: the execution is forbidden when it fails.
    Require,
    /// `flag`: raises a flag when the check holds; never forbids.
    Flag,
    /// `undefined_unless`: raises the flag `undefined` when the check fails.
    UndefinedUnless,
    /// `assert`: the model's author states the check always holds; a
    /// candidate where it fails is a model error, not a verdict.
    Assert,
}

/// `[flag|undefined_unless] [~]test e [as name]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Check {
    pub mode: CheckMode,
    pub negated: bool,
    pub test: Test,
    pub expr: Expr,
    pub name: Option<String>,
    /// Source text of the check from the test keyword (or `~`) to the end of
    /// the expression, whitespace collapsed, e.g. `acyclic (rf | po)`.
    pub text: String,
    pub loc: Loc,
}

/// A top-level instruction.
#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    /// `let [rec] b1 and b2 ...`.
    Let {
        rec: bool,
        bindings: Vec<Binding>,
        loc: Loc,
    },
    /// A check.
    Check(Check),
    /// `with x from e`.
    With {
        var: String,
        var_loc: Loc,
        expr: Expr,
        text: String,
        loc: Loc,
    },
    /// `include "file"`.
    Include { file: String, loc: Loc },
    /// `show ...` / `unshow ...`: parsed, ignored.
    Show { loc: Loc },
    /// `procedure name(params) = instructions end`.
    Procedure {
        name: String,
        params: Pattern,
        body: Vec<Stmt>,
        loc: Loc,
    },
    /// `call name(args) [as label]`.
    Call {
        name: String,
        args: Vec<Expr>,
        label: Option<String>,
        loc: Loc,
    },
    /// `if variants instructions [else instructions] end`, decided at load.
    IfVariant {
        variant: VariantCond,
        then: Vec<Stmt>,
        els: Vec<Stmt>,
        loc: Loc,
    },
    /// `enum Name = 'a || 'b || ...`: declares tags; `Name` is bound to
    /// the set of them.
    Enum {
        name: String,
        tags: Vec<String>,
        loc: Loc,
    },
    /// `instructions K[e]` (herd's bell files): the annotations (a set of
    /// tags) instructions of kind `K` (`R`, `W`, `F`, `RMW`, ...) may carry.
    Instructions { kind: String, expr: Expr, loc: Loc },
    /// `forall x in e do instructions end`.
    Forall {
        var: String,
        expr: Expr,
        body: Vec<Stmt>,
        loc: Loc,
    },
}

/// A parsed file: its optional title and its instructions.
#[derive(Clone, Debug, PartialEq)]
pub struct File {
    /// The leading name or quoted string, if any.
    pub title: Option<String>,
    pub stmts: Vec<Stmt>,
}

/// A located error of the cat front end or interpreter; turned into a
/// [`crate::diag::Diagnostic`] by the model, which knows the file names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    pub loc: Loc,
    pub message: String,
    pub expected: Option<String>,
}

impl Error {
    /// An error at `loc`.
    pub fn new(loc: Loc, message: impl Into<String>) -> Self {
        Error {
            loc,
            message: message.into(),
            expected: None,
        }
    }

    /// Adds what was expected.
    pub fn expected(mut self, what: impl Into<String>) -> Self {
        self.expected = Some(what.into());
        self
    }
}
