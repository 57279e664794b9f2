//! Which checks of a model can judge a *partial* candidate.
//!
//! The engine builds a candidate by a sequence of choices: `rf` one read at
//! a time, `co` one location at a time as a growing prefix of a total order,
//! then inside the model each `with x from linearisations(S, r)` one element
//! at a time. At every node of that search the choices made so far give an
//! *under-approximation* of every completion: each choice relation (and
//! each name derived from them by the environment, such as `fr = rf^-1; co`)
//! is a subset of its value in every complete candidate below the node.
//!
//! A check's relation is *monotone* in the choices when growing the choices
//! can only grow it: it is built from the choices and fixed names with union,
//! intersection, sequence, cartesian product, closures, inverse, `[...]`,
//! `domain`, `range`, `fencerel` and the left side of `\`; a complement or
//! the right side of `\` flips the direction ([`Pol::Anti`]). Then:
//!
//! * `acyclic r`, `irreflexive r`, `empty r` with `r` monotone (or fixed):
//!   failing on the under-approximation means failing on every completion
//!   (a subset of an acyclic relation is acyclic, and so on);
//! * `~acyclic r`, `~irreflexive r`, `~empty r` with `r` anti-monotone:
//!   the same argument the other way round.
//!
//! A failing *required* check (not `flag`, not `undefined_unless`) forbids
//! the execution; for checks after a `with`, a failure with the `with`
//! variable at its least value (the empty relation, below every
//! linearisation) forbids it for every choice. So such a node is cut with
//! no change to which complete candidates are allowed, their final states,
//! their flags (flags come from allowed candidates only) or their order of
//! enumeration. See docs/pruning.md for the argument in full and what the
//! engine does to keep `--why`, thin-air counts and errors identical.
//!
//! A `let rec` whose body is not monotone in its own members could fail to
//! reach a fixpoint on some candidates only; such a model is never pruned,
//! so an error is reported exactly when an unpruned search would report it.
//! Anything the analysis does not know is [`Pol::Mixed`]: no pruning.

use super::ast::{BinOp, CheckMode, UnOp};
use super::eval::{CCheck, CExpr, CStmt, Node, Prim, Program, SlotDef, SlotInfo};
use std::fmt;

/// How an expression's value moves when the choices grow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pol {
    /// Does not depend on any choice.
    Const,
    /// Can only grow.
    Mono,
    /// Can only shrink.
    Anti,
    /// Unknown direction.
    Mixed,
}

impl Pol {
    /// The polarity of an operator monotone in both operands.
    pub fn join(self, other: Pol) -> Pol {
        match (self, other) {
            (Pol::Const, p) | (p, Pol::Const) => p,
            (a, b) if a == b => a,
            _ => Pol::Mixed,
        }
    }

    /// The polarity under a complement.
    pub fn flip(self) -> Pol {
        match self {
            Pol::Mono => Pol::Anti,
            Pol::Anti => Pol::Mono,
            p => p,
        }
    }
}

impl fmt::Display for Pol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Pol::Const => "fixed",
            Pol::Mono => "grows with the choices",
            Pol::Anti => "shrinks as the choices grow",
            Pol::Mixed => "neither grows nor shrinks with the choices",
        })
    }
}

/// What the analysis says about one check.
#[derive(Clone, Debug)]
pub struct CheckReport {
    /// The check's label (its `as` name or source text).
    pub label: String,
    /// Index of the check among the model's statements.
    pub stmt: usize,
    /// Whether it may cut partial candidates.
    pub prunes: bool,
    /// Why (or why not), in words.
    pub reason: String,
}

/// The checks that may judge partial candidates, for one notion of choice.
#[derive(Clone, Debug, Default)]
pub struct PrunePlan {
    /// Statement indices of the pruning checks, in model order.
    pub checks: Vec<usize>,
    /// One entry per check of the model.
    pub report: Vec<CheckReport>,
    /// Set when nothing may prune (e.g. a non-monotone `let rec`).
    pub disabled: Option<String>,
    /// When some check prunes through a *lower bound* of its relation (see
    /// [`lower_bounds`]): the model's program with the lower-bound
    /// definitions and checks appended; `checks` then index its statements.
    pub program: Option<Box<Program>>,
}

struct Ctx<'p> {
    prog: &'p Program,
    env_choice: Vec<bool>,
    slot_choice: Vec<bool>,
    slot_memo: Vec<Option<Pol>>,
}

impl<'p> Ctx<'p> {
    fn slot(&mut self, i: usize) -> Pol {
        if let Some(p) = self.slot_memo[i] {
            return p;
        }
        let p = match &self.prog.slots[i].def {
            SlotDef::WithVar => {
                if self.slot_choice[i] {
                    Pol::Mono
                } else {
                    Pol::Const
                }
            }
            SlotDef::Expr(e) => self.expr(e, &[]),
            SlotDef::Rec(g) => {
                self.group(*g);
                return self.slot_memo[i].unwrap_or(Pol::Mixed);
            }
        };
        self.slot_memo[i] = Some(p);
        p
    }

    /// Polarities of a `let rec` group: iterate from `Const` upwards (the
    /// lattice has height 2, so this ends).
    fn group(&mut self, g: usize) {
        let prog = self.prog;
        let members = &prog.groups[g].members;
        let mut cur = vec![Pol::Const; members.len()];
        for _ in 0..=2 * members.len() + 2 {
            let next: Vec<Pol> = members
                .iter()
                .map(|(_, body, _)| self.expr(body, &cur))
                .collect();
            let next: Vec<Pol> = next.iter().zip(&cur).map(|(a, b)| a.join(*b)).collect();
            if next == cur {
                break;
            }
            cur = next;
        }
        for ((slot, _, _), p) in members.iter().zip(cur) {
            self.slot_memo[*slot] = Some(p);
        }
    }

    fn expr(&mut self, e: &CExpr, locals: &[Pol]) -> Pol {
        match &e.node {
            Node::EmptyRel | Node::Universe => Pol::Const,
            Node::Env(i) => {
                if self.env_choice[*i] {
                    Pol::Mono
                } else {
                    Pol::Const
                }
            }
            Node::Slot(i) => self.slot(*i),
            Node::Local(k) => locals.get(*k).copied().unwrap_or(Pol::Mixed),
            Node::Unary(op, a) => {
                let p = self.expr(a, locals);
                match op {
                    UnOp::Complement => p.flip(),
                    UnOp::Plus | UnOp::Star | UnOp::Opt | UnOp::Inverse | UnOp::ToId => p,
                }
            }
            Node::Binary(op, _, a, b) => {
                let (x, y) = (self.expr(a, locals), self.expr(b, locals));
                match op {
                    // `a \ (a & F)` is `a \ F` (herd's `fre = fr \ fri` with
                    // `fri = fr & int`): with `F` fixed, it moves like `a`.
                    BinOp::Diff if self.minus_own_part(a, b, locals) => x,
                    BinOp::Diff => x.join(y.flip()),
                    BinOp::Union | BinOp::Inter | BinOp::Seq | BinOp::Cartesian => x.join(y),
                    BinOp::Add => Pol::Mixed,
                }
            }
            Node::Call(f, args) => {
                let ps: Vec<Pol> = args.iter().map(|a| self.expr(a, locals)).collect();
                let body = &self.prog.funcs[*f].body;
                self.expr(body, &ps)
            }
            Node::Domain(a) | Node::Range(a) => self.expr(a, locals),
            Node::FenceRel(a, po) => {
                let p = self.expr(a, locals);
                p.join(if self.env_choice[*po] {
                    Pol::Mono
                } else {
                    Pol::Const
                })
            }
            // `try a with b` is one of the two; whether `a` fails does not
            // depend on the choices (it fails on names the test lacks or on
            // types, which the skeleton fixes).
            Node::Try(a, b) => {
                let (x, y) = (self.expr(a, locals), self.expr(b, locals));
                x.join(y)
            }
            // `{}` and tags are constants; tag sets and scope relations are
            // fixed by the skeleton.
            Node::ExplicitSet(xs) if xs.is_empty() => Pol::Const,
            Node::Tag(_) | Node::BellSet(_) => Pol::Const,
            // Always empty (no page-table events).
            Node::PrimCall(Prim::PageTableStores | Prim::SameOutputAddress, _) => Pol::Const,
            Node::PrimCall(Prim::TagToEvents | Prim::TagToScope, args) => {
                let ps: Vec<Pol> = args.iter().map(|a| self.expr(a, locals)).collect();
                ps.into_iter().fold(Pol::Const, Pol::join)
            }
            // The rest of the functional tier (application, tuples, value
            // sets, ...): no direction is known.
            _ => Pol::Mixed,
        }
    }

    /// Whether `b` is `a & F` or `F & a` (through `let`s) with `F` fixed
    /// and `a` the same name as the left operand.
    fn minus_own_part(&mut self, a: &CExpr, b: &CExpr, locals: &[Pol]) -> bool {
        let b = self.through_slots(b);
        let Node::Binary(BinOp::Inter, _, l, r) = &b.node else {
            return false;
        };
        let a = self.through_slots(a);
        let same = |x: &CExpr| match (&x.node, &a.node) {
            (Node::Env(i), Node::Env(j)) | (Node::Slot(i), Node::Slot(j)) => i == j,
            _ => false,
        };
        let (l, r) = (self.through_slots(l), self.through_slots(r));
        (same(l) && self.expr(r, locals) == Pol::Const)
            || (same(r) && self.expr(l, locals) == Pol::Const)
    }

    /// `e`, or the definition of the slot it names (repeatedly) while that
    /// definition is itself just a name or an intersection.
    fn through_slots<'e>(&self, e: &'e CExpr) -> &'e CExpr
    where
        'p: 'e,
    {
        let mut e = e;
        while let Node::Slot(i) = &e.node {
            match &self.prog.slots[*i].def {
                SlotDef::Expr(inner)
                    if matches!(
                        inner.node,
                        Node::Slot(_) | Node::Env(_) | Node::Binary(BinOp::Inter, ..)
                    ) =>
                {
                    e = inner
                }
                _ => break,
            }
        }
        e
    }

    /// The first complement or subtraction that makes `e` lose its
    /// direction, as "`\` at line:col" (for `models --pruning`).
    fn blame(&mut self, e: &CExpr, locals: &[Pol]) -> Option<String> {
        match &e.node {
            Node::Unary(UnOp::Complement, a) if self.expr(a, locals) != Pol::Const => {
                Some(format!("a complement '~' at {}", e.loc.pos))
            }
            Node::Binary(BinOp::Diff, loc, a, b) if self.expr(b, locals) != Pol::Const => {
                self.blame(a, locals).or(Some(format!(
                    "a difference '\\' subtracting a choice-dependent relation at {}",
                    loc.pos
                )))
            }
            Node::Unary(_, a) | Node::Domain(a) | Node::Range(a) | Node::FenceRel(a, _) => {
                self.blame(a, locals)
            }
            Node::Binary(_, _, a, b) => self.blame(a, locals).or_else(|| self.blame(b, locals)),
            Node::Slot(i) => match &self.prog.slots[*i].def {
                SlotDef::Expr(inner) if !matches!(self.slot(*i), Pol::Const | Pol::Mono) => {
                    // Name only the definition the operator is written in.
                    let name = &self.prog.slots[*i].name;
                    self.blame(inner, &[]).map(|b| {
                        if b.contains(" in '") {
                            b
                        } else {
                            format!("{b} in '{name}'")
                        }
                    })
                }
                _ => None,
            },
            _ => None,
        }
    }
}

/// Whether every `let rec` of the program is monotone in its own members
/// (then its fixpoint iteration ends on every candidate); the first one
/// that is not, otherwise.
fn rec_groups_monotone(prog: &Program) -> Result<(), String> {
    for g in &prog.groups {
        let mut ctx = Ctx {
            prog,
            env_choice: vec![false; prog.env_names.len()],
            slot_choice: vec![false; prog.slots.len()],
            slot_memo: vec![None; prog.slots.len()],
        };
        let locals = vec![Pol::Mono; g.members.len()];
        for (slot, body, _) in &g.members {
            if !matches!(ctx.expr(body, &locals), Pol::Const | Pol::Mono) {
                return Err(format!(
                    "'let rec {}' is not monotone in itself, so whether it reaches a fixpoint \
                     may depend on the candidate",
                    prog.slots[*slot].name
                ));
            }
        }
    }
    Ok(())
}

/// The plan for choices `env_choice` (environment names, by index) and
/// `slot_choice` (`with` variables, by slot), over the checks with
/// statement index in `from..`.
fn plan(
    prog: &Program,
    env_choice: Vec<bool>,
    slot_choice: Vec<bool>,
    from: usize,
    lower: bool,
) -> PrunePlan {
    let mut out = PrunePlan::default();
    let mut lowered = Lowering {
        base: prog.slots.len(),
        slots: Vec::new(),
        memo: vec![None; prog.slots.len()],
        checks: Vec::new(),
    };
    let mut ctx = Ctx {
        prog,
        env_choice,
        slot_choice,
        slot_memo: vec![None; prog.slots.len()],
    };
    // A `with x from e` binds any value, not a growing relation: nothing
    // is known of checks in such a model on a partial candidate.
    let disabled = if prog.stmts.iter().any(|s| matches!(s, CStmt::WithFrom(_))) {
        Some("the model chooses values with 'with ... from' (no partial evaluation)".to_string())
    } else {
        rec_groups_monotone(prog).err()
    };
    for (i, s) in prog.stmts.iter().enumerate().skip(from) {
        let CStmt::Check(c) = s else { continue };
        let pol = ctx.expr(&c.expr, &[]);
        let grows = matches!(
            (c.negated, pol),
            (false, Pol::Const | Pol::Mono) | (true, Pol::Const | Pol::Anti)
        );
        if lower
            && !grows
            && !c.negated
            && c.mode == CheckMode::Require
            && disabled.is_none()
            && let Some(e) = lowered.expr(&mut ctx, &c.expr)
        {
            let stmt = prog.stmts.len() + lowered.checks.len();
            lowered.checks.push(CStmt::Check(CCheck {
                expr: e,
                ..c.clone()
            }));
            out.checks.push(stmt);
            let why = ctx
                .blame(&c.expr, &[])
                .map(|b| format!(" (because of {b})"))
                .unwrap_or_default();
            out.report.push(CheckReport {
                label: c.label.clone(),
                stmt: i,
                prunes: true,
                reason: format!(
                    "its relation {pol}{why}; a lower bound of it grows (the parts that \
                     do not grow taken as empty), and a failure there is final"
                ),
            });
            continue;
        }
        let (prunes, reason) = if c.mode != CheckMode::Require {
            (
                false,
                "a flag never forbids an execution, so it cannot cut one".to_string(),
            )
        } else if let Some(d) = &disabled {
            (false, d.clone())
        } else {
            match (c.negated, pol) {
                (false, Pol::Const | Pol::Mono) | (true, Pol::Const | Pol::Anti) => {
                    (true, format!("its relation {pol}"))
                }
                _ => {
                    let why = ctx
                        .blame(&c.expr, &[])
                        .map(|b| format!(" (because of {b})"))
                        .unwrap_or_default();
                    let need = if c.negated {
                        "a negated check needs a relation that shrinks"
                    } else {
                        "it needs a relation that grows"
                    };
                    (false, format!("its relation {pol}{why}; {need}"))
                }
            }
        };
        if prunes {
            out.checks.push(i);
        }
        out.report.push(CheckReport {
            label: c.label.clone(),
            stmt: i,
            prunes,
            reason,
        });
    }
    out.disabled = disabled;
    if !lowered.checks.is_empty() {
        let mut p = prog.clone();
        p.slots.extend(lowered.slots);
        p.stmts.extend(lowered.checks);
        out.program = Some(Box::new(p));
    }
    out
}

/// Lower bounds of relations that do not grow with the choices.
///
/// `lower(e)` is an expression that grows with the choices and is, on every
/// partial candidate, a subset of `e`'s value in every completion: a
/// growing (or fixed) `e` is its own lower bound; union, intersection,
/// sequence, product, closures, inverse, `[...]`, `domain`, `range` and
/// `fencerel` take the lower bounds of their operands; `a \ b` with `b`
/// fixed or shrinking is `lower(a) \ b` (the current `b` contains its final
/// value); anything else (a complement, a subtraction of a growing
/// relation, a function call, the functional tier) is bounded by the empty
/// relation, written `None`. A definition gets a lower-bound copy as a new
/// slot. So a check `acyclic e` (`irreflexive`, `empty`) that fails on
/// `lower(e)` fails on every completion: OpenCL's release sequences
/// (`(mo & rs1) \ ((mo \ rs1); mo)`) are taken as empty, and its `hb`
/// keeps `sb` and the direct synchronisation edges.
struct Lowering {
    /// Index of the first new slot.
    base: usize,
    slots: Vec<SlotInfo>,
    /// Per original slot: not yet lowered, or its lower bound (`Some(None)`:
    /// empty; `Some(Some(k))`: slot `k`).
    memo: Vec<Option<Option<usize>>>,
    checks: Vec<CStmt>,
}

impl Lowering {
    fn expr(&mut self, ctx: &mut Ctx<'_>, e: &CExpr) -> Option<CExpr> {
        if matches!(ctx.expr(e, &[]), Pol::Const | Pol::Mono) {
            return Some(e.clone());
        }
        let node = |n: Node| {
            Some(CExpr {
                memo: None,
                node: n,
                loc: e.loc,
            })
        };
        match &e.node {
            Node::Slot(i) => {
                let k = self.slot(ctx, *i)?;
                node(Node::Slot(k))
            }
            Node::Unary(op, a) => match (op, self.expr(ctx, a)) {
                (UnOp::Complement, _) => None,
                (UnOp::Star | UnOp::Opt, None) => node(Node::Unary(
                    *op,
                    Box::new(CExpr {
                        memo: None,
                        node: Node::EmptyRel,
                        loc: e.loc,
                    }),
                )),
                (_, None) => None,
                (_, Some(a)) => node(Node::Unary(*op, Box::new(a))),
            },
            Node::Binary(op, loc, a, b) => match op {
                BinOp::Diff => {
                    if !matches!(ctx.expr(b, &[]), Pol::Const | Pol::Anti) {
                        return None;
                    }
                    let a = self.expr(ctx, a)?;
                    node(Node::Binary(*op, *loc, Box::new(a), b.clone()))
                }
                BinOp::Union => match (self.expr(ctx, a), self.expr(ctx, b)) {
                    (Some(a), Some(b)) => node(Node::Binary(*op, *loc, Box::new(a), Box::new(b))),
                    (Some(x), None) | (None, Some(x)) => Some(x),
                    (None, None) => None,
                },
                BinOp::Inter | BinOp::Seq | BinOp::Cartesian => {
                    let a = self.expr(ctx, a)?;
                    let b = self.expr(ctx, b)?;
                    node(Node::Binary(*op, *loc, Box::new(a), Box::new(b)))
                }
                BinOp::Add => None,
            },
            Node::Domain(a) => node(Node::Domain(Box::new(self.expr(ctx, a)?))),
            Node::Range(a) => node(Node::Range(Box::new(self.expr(ctx, a)?))),
            Node::FenceRel(a, po) => node(Node::FenceRel(Box::new(self.expr(ctx, a)?), *po)),
            _ => None,
        }
    }

    /// The slot holding a lower bound of slot `i` (`None`: empty).
    fn slot(&mut self, ctx: &mut Ctx<'_>, i: usize) -> Option<usize> {
        if let Some(m) = self.memo[i] {
            return m;
        }
        let prog = ctx.prog;
        let info = &prog.slots[i];
        let lowered = match &info.def {
            SlotDef::Expr(e) => self.expr(ctx, e).map(|e| {
                self.slots.push(SlotInfo {
                    name: format!("{} (lower bound)", info.name),
                    def: SlotDef::Expr(e),
                    ty: info.ty,
                });
                self.base + self.slots.len() - 1
            }),
            SlotDef::Rec(_) | SlotDef::WithVar => None,
        };
        self.memo[i] = Some(lowered);
        lowered
    }
}

/// Plan for the engine's candidate search: the choices are the environment
/// names `dynamic` accepts (`rf`, `co` and what derives from them) and every
/// `with` variable (taken at its least value, the empty relation).
pub fn candidate_plan(prog: &Program, dynamic: &dyn Fn(&str) -> bool) -> PrunePlan {
    let env_choice = prog.env_names.iter().map(|n| dynamic(&n.name)).collect();
    let slot_choice = prog
        .slots
        .iter()
        .map(|s| matches!(s.def, SlotDef::WithVar))
        .collect();
    plan(prog, env_choice, slot_choice, 0, true)
}

/// Whether some statement's value may depend on an environment name
/// `names` accepts, through the definitions it uses (a definition no
/// statement uses does not count): a check's relation, the set (and
/// order) a `with` chooses from, a `forall`'s set or body.
pub fn statements_depend_on(prog: &Program, names: &dyn Fn(&str) -> bool) -> bool {
    let mut ctx = Ctx {
        prog,
        env_choice: prog.env_names.iter().map(|n| names(&n.name)).collect(),
        slot_choice: vec![false; prog.slots.len()],
        slot_memo: vec![None; prog.slots.len()],
    };
    fn depends(ctx: &mut Ctx<'_>, stmts: &[CStmt]) -> bool {
        stmts.iter().any(|s| match s {
            CStmt::Check(c) => ctx.expr(&c.expr, &[]) != Pol::Const,
            CStmt::With(w) => {
                ctx.expr(&w.set, &[]) != Pol::Const
                    || w.rel
                        .as_ref()
                        .is_some_and(|r| ctx.expr(r, &[]) != Pol::Const)
            }
            CStmt::WithFrom(w) => ctx.expr(&w.expr, &[]) != Pol::Const,
            CStmt::Forall(f) => ctx.expr(&f.set, &[]) != Pol::Const || depends(ctx, &f.body),
        })
    }
    depends(&mut ctx, &prog.stmts)
}

/// Plan for the `with` at statement `stmt`: the choice is its variable (a
/// growing prefix of a linearisation) and the variables of later `with`s
/// (at their least value); environment names and earlier `with`s are fixed.
pub fn with_plan(prog: &Program, stmt: usize) -> PrunePlan {
    let env_choice = vec![false; prog.env_names.len()];
    let mut slot_choice = vec![false; prog.slots.len()];
    for s in &prog.stmts[stmt..] {
        if let CStmt::With(w) = s {
            slot_choice[w.slot] = true;
        }
    }
    plan(prog, env_choice, slot_choice, stmt + 1, false)
}

/// The `with` plans of every statement (empty for checks), kept in the
/// program for [`Program::run`].
pub fn with_plans(prog: &Program) -> Vec<Vec<usize>> {
    prog.stmts
        .iter()
        .enumerate()
        .map(|(i, s)| match s {
            CStmt::With(_) => with_plan(prog, i).checks,
            CStmt::Check(_) | CStmt::WithFrom(_) | CStmt::Forall(_) => Vec::new(),
        })
        .collect()
}
