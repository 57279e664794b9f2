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

/// A run-time value. The relational core has sets and relations; herd's
/// functional layer would add tuples, tags, functions (closures) and sets of
/// values as further variants.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    Set(BitSet),
    Rel(Relation),
}

impl Value {
    fn kind(&self) -> Ty {
        match self {
            Value::Set(_) => Ty::Set,
            Value::Rel(_) => Ty::Rel,
        }
    }
}

/// Static type of an expression.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ty {
    Set,
    Rel,
    /// Not known before evaluation (e.g. a function parameter).
    Unknown,
}

impl Ty {
    /// "a set", "a relation", "a value".
    pub fn describe(self) -> &'static str {
        match self {
            Ty::Set => "a set",
            Ty::Rel => "a relation",
            Ty::Unknown => "a value",
        }
    }
}

/// A resolved expression.
#[derive(Clone, Debug)]
pub struct CExpr {
    pub node: Node,
    pub loc: Loc,
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
}

/// A name the environment must provide.
#[derive(Clone, Debug)]
pub struct EnvName {
    pub name: String,
    /// Expected kind from the naming convention (upper case: set; lower case: relation).
    pub hint: Ty,
    /// First use, for diagnostics.
    pub loc: Loc,
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
}

/// A resolved, type-checked model.
#[derive(Clone, Debug, Default)]
pub struct Program {
    pub env_names: Vec<EnvName>,
    pub slots: Vec<SlotInfo>,
    pub groups: Vec<RecGroup>,
    pub funcs: Vec<Func>,
    pub stmts: Vec<CStmt>,
}

/// Per-evaluation state: caches of environment values and slots.
pub struct State<'e> {
    env: &'e dyn Environment,
    n: usize,
    env_vals: Vec<OnceCell<Value>>,
    slots: Vec<OnceCell<Value>>,
}

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

impl Program {
    /// Fresh per-evaluation state.
    pub fn state<'e>(&self, env: &'e dyn Environment) -> State<'e> {
        State {
            env,
            n: env.num_events(),
            env_vals: (0..self.env_names.len()).map(|_| OnceCell::new()).collect(),
            slots: (0..self.slots.len()).map(|_| OnceCell::new()).collect(),
        }
    }

    fn env_value<'a>(&self, i: usize, loc: Loc, st: &'a State<'_>) -> Res<&'a Value> {
        let cell = &st.env_vals[i];
        if let Some(v) = cell.get() {
            return Ok(v);
        }
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

    fn slot_value<'a>(&'a self, i: usize, st: &'a State<'_>) -> Res<&'a Value> {
        if let Some(v) = st.slots[i].get() {
            return Ok(v);
        }
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
    pub fn eval<'a>(
        &'a self,
        e: &'a CExpr,
        st: &'a State<'_>,
        locals: &'a [Value],
    ) -> Res<Cow<'a, Value>> {
        use Cow::{Borrowed, Owned};
        let n = st.n;
        Ok(match &e.node {
            Node::EmptyRel => Owned(Value::Rel(Relation::empty(n))),
            Node::Universe => Owned(Value::Set(BitSet::full(n))),
            Node::Env(i) => Borrowed(self.env_value(*i, e.loc, st)?),
            Node::Slot(i) => Borrowed(self.slot_value(*i, st)?),
            Node::Local(i) => Borrowed(&locals[*i]),
            Node::Unary(op, a) => {
                let v = self.eval(a, st, locals)?;
                Owned(self.unary(*op, v, a.loc)?)
            }
            Node::Binary(op, op_loc, a, b) => {
                let x = self.eval(a, st, locals)?;
                let y = self.eval(b, st, locals)?;
                Owned(binary(*op, *op_loc, x, y)?)
            }
            Node::Call(f, args) => {
                let mut vals = Vec::with_capacity(args.len());
                for a in args {
                    vals.push(self.eval(a, st, locals)?.into_owned());
                }
                Owned(self.eval(&self.funcs[*f].body, st, &vals)?.into_owned())
            }
            Node::Domain(a) => {
                let v = self.eval(a, st, locals)?;
                Owned(Value::Set(
                    expect_rel(&v, a.loc, "domain expects a relation")?.domain(),
                ))
            }
            Node::Range(a) => {
                let v = self.eval(a, st, locals)?;
                Owned(Value::Set(
                    expect_rel(&v, a.loc, "range expects a relation")?.range(),
                ))
            }
            Node::FenceRel(a, po) => {
                let v = self.eval(a, st, locals)?;
                let s = expect_set(&v, a.loc, "fencerel expects a set")?;
                let po = expect_rel(
                    self.env_value(*po, e.loc, st)?,
                    e.loc,
                    "fencerel needs 'po' to be a relation",
                )?;
                Owned(Value::Rel(po.restrict_range(s).compose(po)))
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
            }
        }
        Ok(Verdict::Allowed)
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
        let v = self.eval(&c.expr, st, &[])?;
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
                Ok(Some(Some(Failure {
                    check: c.label.clone(),
                    kind: c.kind(),
                    witness: if c.negated { Vec::new() } else { witness },
                    relations,
                })))
            }
        }
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
        let (set, rel) = {
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
            (set, rel)
        };
        let flags_len = flags.len();
        let mut first_failure: Option<Option<Failure>> = None;
        let mut error = None;
        let flow = Relation::for_each_linearisation(&set, &rel, |order| {
            for cell in &mut st.slots[w.slot..] {
                cell.take();
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
                    ControlFlow::Continue(())
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
            }),
        }))
    }
}

/// `|`, `&`, `\`, `;`, `*` and `++` on two values.
fn binary(op: BinOp, loc: Loc, x: Cow<'_, Value>, y: Cow<'_, Value>) -> Res<Value> {
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
        BinOp::Add => Err(Error::new(
            loc,
            "'++' is not supported yet (herd's functional layer)",
        )),
    }
}
