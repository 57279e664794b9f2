//! Name resolution and static typing: parsed statements to a [`Program`].
//!
//! Names are resolved lexically, in order: a function parameter or a member
//! of the `let rec` group being defined, then the latest top-level binding,
//! then the built-in functions, and otherwise a name the environment must
//! provide (checked when the model is evaluated, see
//! [`super::Model::check_environment`]).
//!
//! Types are inferred where they are known: environment names follow the
//! naming convention of `docs/cat-environment.md` (upper case: event set;
//! lower case: relation), and function parameters are unknown until a call
//! site gives argument types. Definite mismatches are reported here; the
//! interpreter checks the rest at run time.

use super::ast::{
    BinOp, Binding, Check, Cond, Error, Expr, ExprKind, Loc, Pattern, Stmt, Test, UnOp,
};
use super::eval::{
    CCheck, CExpr, CForall, CStmt, CWith, CWithFrom, EnvName, Func, Lambda, Node, Program,
    RecGroup, SlotDef, SlotInfo, Ty, ValueRec,
};
use std::collections::HashMap;
use std::sync::Arc as Rc;

#[derive(Clone, Copy, Debug)]
enum Name {
    Slot(usize),
    Func(usize),
    /// A `let x = linearisations(...)`, usable only as `with y from x`.
    Lin(usize),
}

#[derive(Clone, Debug)]
struct LinSpec {
    set: CExpr,
    rel: Option<CExpr>,
}

/// Expected kind of an environment name from its spelling.
fn hint(name: &str) -> Ty {
    let upper = name.chars().any(|c| c.is_ascii_uppercase());
    let lower = name.chars().any(|c| c.is_ascii_lowercase());
    match (upper, lower) {
        (true, false) => Ty::Set,
        (false, true) => Ty::Rel,
        _ => Ty::Unknown,
    }
}

/// Compiles the statements of a model (includes already spliced in);
/// `variants` decide `if "variant"` (herd's `-variant`).
pub fn compile(stmts: &[Stmt], variants: &[String]) -> Result<Program, Error> {
    let mut c = Compiler {
        variants: variants.to_vec(),
        ..Compiler::default()
    };
    for s in stmts {
        c.stmt(s)?;
    }
    c.prog.number_memos();
    Ok(c.prog)
}

/// A procedure: its parameters, body and the names visible where it was defined.
#[derive(Clone)]
struct Proc {
    params: Pattern,
    body: Vec<Stmt>,
    scope: HashMap<String, Name>,
}

#[derive(Default)]
struct Compiler {
    prog: Program,
    globals: HashMap<String, Name>,
    env_index: HashMap<String, usize>,
    lins: Vec<LinSpec>,
    variants: Vec<String>,
    procs: HashMap<String, Proc>,
}

fn type_error(loc: Loc, what: &str, found: Ty) -> Error {
    Error::new(
        loc,
        format!("type error: {what}, found {}", found.describe()),
    )
}

impl Compiler {
    fn env_name(&mut self, name: &str, loc: Loc) -> usize {
        if let Some(&i) = self.env_index.get(name) {
            return i;
        }
        let i = self.prog.env_names.len();
        self.prog.env_names.push(EnvName {
            name: name.to_string(),
            hint: hint(name),
            loc,
            eager: false,
        });
        self.env_index.insert(name.to_string(), i);
        i
    }

    fn new_slot(&mut self, name: &str, def: SlotDef, ty: Ty) -> usize {
        self.prog.slots.push(SlotInfo {
            name: name.to_string(),
            def,
            ty,
        });
        self.prog.slots.len() - 1
    }

    fn is_linearisations_call(&self, e: &Expr) -> bool {
        matches!(&e.kind, ExprKind::App { func, .. }
            if func == "linearisations" && !self.globals.contains_key(func))
    }

    // ----- statements -----------------------------------------------------------

    fn stmt(&mut self, s: &Stmt) -> Result<(), Error> {
        match s {
            Stmt::Let {
                rec: false,
                bindings,
                ..
            } => {
                // All right-hand sides see the bindings from before the `let`.
                let mut bound = Vec::new();
                for b in bindings {
                    if let Some(names) = &b.tuple {
                        // `let (a, b) = e`: one slot for the tuple, one per name.
                        let body = self.expr(&b.body, &[])?;
                        let ty = self.infer(&body, &[])?;
                        let t = self.new_slot(&b.name, SlotDef::Expr(body), ty);
                        for (k, n) in names.iter().enumerate() {
                            let Some(n) = n else { continue };
                            let proj = CExpr {
                                memo: None,
                                node: Node::Proj(
                                    Box::new(CExpr {
                                        memo: None,
                                        node: Node::Slot(t),
                                        loc: b.loc,
                                    }),
                                    k,
                                    names.len(),
                                ),
                                loc: b.loc,
                            };
                            let slot = self.new_slot(n, SlotDef::Expr(proj), Ty::Unknown);
                            bound.push((n.clone(), Name::Slot(slot)));
                        }
                        continue;
                    }
                    let name = if let Some(params) = &b.params {
                        let locals: Vec<String> = params.iter().map(|p| p.0.clone()).collect();
                        let body = self.expr(&b.body, &locals)?;
                        self.infer(&body, &vec![Ty::Unknown; locals.len()])?;
                        self.prog.funcs.push(Func {
                            name: b.name.clone(),
                            arity: locals.len(),
                            body,
                        });
                        Name::Func(self.prog.funcs.len() - 1)
                    } else if self.is_linearisations_call(&b.body) {
                        let spec = self.linearisations(&b.body)?;
                        self.lins.push(spec);
                        Name::Lin(self.lins.len() - 1)
                    } else {
                        let body = self.expr(&b.body, &[])?;
                        let ty = self.infer(&body, &[])?;
                        Name::Slot(self.new_slot(&b.name, SlotDef::Expr(body), ty))
                    };
                    bound.push((b.name.clone(), name));
                }
                self.globals.extend(bound);
                Ok(())
            }
            Stmt::Let {
                rec: true,
                bindings,
                loc,
            } => {
                if bindings.iter().any(|b| b.tuple.is_some())
                    && bindings.iter().all(|b| b.params.is_none())
                {
                    // `let rec (a, b) = ... and c = ...`: one hidden slot
                    // holds the tuple of every name's value (the group's
                    // fixpoint); each name is a component of it.
                    let (g, scope) = self.value_rec(bindings, &[], *loc)?;
                    let names: Vec<String> = scope.into_iter().skip(bindings.len()).collect();
                    let plain: Vec<(usize, String)> = bindings
                        .iter()
                        .enumerate()
                        .filter(|(_, b)| b.tuple.is_none())
                        .map(|(k, b)| (k, b.name.clone()))
                        .collect();
                    // The tuple: plain members first (their locals), then
                    // the tuple members' components.
                    let mut all: Vec<(String, usize)> = Vec::new();
                    for (k, n) in &plain {
                        all.push((n.clone(), *k));
                    }
                    for (j, n) in names.iter().enumerate() {
                        all.push((n.clone(), bindings.len() + j));
                    }
                    let tuple = CExpr {
                        memo: None,
                        node: Node::Tuple(
                            all.iter()
                                .map(|(_, k)| CExpr {
                                    memo: None,
                                    node: Node::Local(*k),
                                    loc: *loc,
                                })
                                .collect(),
                        ),
                        loc: *loc,
                    };
                    let body = CExpr {
                        memo: None,
                        node: Node::LetRecVals(Rc::new(g), Box::new(tuple)),
                        loc: *loc,
                    };
                    let shown: Vec<&str> = bindings.iter().map(|b| b.name.as_str()).collect();
                    let t = self.new_slot(&shown.join(" and "), SlotDef::Expr(body), Ty::Tuple);
                    for (i, (n, _)) in all.iter().enumerate() {
                        if n.is_empty() {
                            continue;
                        }
                        let proj = CExpr {
                            memo: None,
                            node: Node::Proj(
                                Box::new(CExpr {
                                    memo: None,
                                    node: Node::Slot(t),
                                    loc: *loc,
                                }),
                                i,
                                all.len(),
                            ),
                            loc: *loc,
                        };
                        let slot = self.new_slot(n, SlotDef::Expr(proj), Ty::Unknown);
                        self.globals.insert(n.clone(), Name::Slot(slot));
                    }
                    return Ok(());
                }
                if let Some(b) = bindings.iter().find(|b| b.tuple.is_some()) {
                    return Err(Error::new(
                        b.loc,
                        "a 'let rec' mixing functions and tuple patterns is not supported",
                    ));
                }
                if bindings.iter().all(|b| b.params.is_some()) {
                    // Recursive functions: each name is a slot holding its closure.
                    let names: Vec<String> = bindings.iter().map(|b| b.name.clone()).collect();
                    let lams = Rc::new(self.rec_lambdas(bindings, &[])?);
                    for (k, name) in names.iter().enumerate() {
                        let body = CExpr {
                            memo: None,
                            node: Node::LetRec(
                                lams.clone(),
                                Box::new(CExpr {
                                    memo: None,
                                    node: Node::Local(k),
                                    loc: *loc,
                                }),
                            ),
                            loc: *loc,
                        };
                        let slot = self.new_slot(name, SlotDef::Expr(body), Ty::Fun);
                        self.globals.insert(name.clone(), Name::Slot(slot));
                    }
                    return Ok(());
                }
                if let Some(b) = bindings.iter().find(|b| b.params.is_some()) {
                    return Err(Error::new(
                        b.loc,
                        "a 'let rec' mixing functions and values is not supported",
                    ));
                }
                let names: Vec<String> = bindings.iter().map(|b| b.name.clone()).collect();
                let bodies = bindings
                    .iter()
                    .map(|b| self.expr(&b.body, &names))
                    .collect::<Result<Vec<_>, _>>()?;
                // Infer the members' types by iteration from "unknown".
                let mut tys = vec![Ty::Unknown; names.len()];
                for _ in 0..=names.len() {
                    let next = bodies
                        .iter()
                        .map(|b| self.infer(b, &tys))
                        .collect::<Result<Vec<_>, _>>()?;
                    if next == tys {
                        break;
                    }
                    tys = next;
                }
                let g = self.prog.groups.len();
                let mut members = Vec::new();
                for ((name, body), ty) in names.iter().zip(bodies).zip(&tys) {
                    let slot = self.new_slot(name, SlotDef::Rec(g), *ty);
                    members.push((slot, body, *ty));
                    self.globals.insert(name.clone(), Name::Slot(slot));
                }
                self.prog.groups.push(RecGroup { members, loc: *loc });
                Ok(())
            }
            Stmt::Check(c) => self.check(c),
            Stmt::With {
                var,
                expr,
                text,
                loc,
                ..
            } => {
                let spec = if self.is_linearisations_call(expr) {
                    self.linearisations(expr)?
                } else if let ExprKind::Var(v) = &expr.kind
                    && let Some(Name::Lin(i)) = self.globals.get(v)
                {
                    self.lins[*i].clone()
                } else {
                    // The set of choices is a slot of its own, so that it is
                    // computed once per skeleton when it is static.
                    let body = self.expr(expr, &[])?;
                    let loc = body.loc;
                    let set =
                        self.new_slot(&format!("{var} choices"), SlotDef::Expr(body), Ty::Unknown);
                    let e = CExpr {
                        memo: None,
                        node: Node::Slot(set),
                        loc,
                    };
                    let slot = self.new_slot(var, SlotDef::WithVar, Ty::Unknown);
                    self.globals.insert(var.clone(), Name::Slot(slot));
                    if var == "co" {
                        self.prog.co_slot = Some(slot);
                    }
                    self.prog.stmts.push(CStmt::WithFrom(CWithFrom {
                        slot,
                        expr: e,
                        label: text.clone(),
                        inputs: Default::default(),
                    }));
                    return Ok(());
                };
                let _ = loc;
                let slot = self.new_slot(var, SlotDef::WithVar, Ty::Rel);
                self.globals.insert(var.clone(), Name::Slot(slot));
                self.prog.stmts.push(CStmt::With(CWith {
                    slot,
                    set: spec.set,
                    rel: spec.rel,
                    label: text.clone(),
                }));
                Ok(())
            }
            Stmt::Include { .. } | Stmt::Show { .. } => Ok(()),
            Stmt::Instructions { expr, .. } => {
                // A declaration of the annotations instructions of a kind may
                // carry. litmix's front ends attach no bell annotations, so
                // no event can break it: it is resolved and type-checked only.
                let e = self.expr(expr, &[])?;
                // No environment name is a set of tags: a name that is not
                // an enum (or a binding) is unknown.
                if let Some((name, loc)) = self.first_env_name(&e) {
                    return Err(Error::new(
                        loc,
                        format!(
                            "'{name}' is neither an enum nor a set of tags (instructions K[...] takes tags and enum names)"
                        ),
                    ));
                }
                let ty = self.infer(&e, &[])?;
                if !matches!(ty, Ty::ValSet | Ty::Unknown | Ty::Tag) {
                    return Err(type_error(
                        e.loc,
                        "'instructions K[...]' expects a set of tags",
                        ty,
                    ));
                }
                Ok(())
            }
            Stmt::Enum { name, tags, loc } => {
                // The enumeration's name denotes the set of its tags.
                let body = CExpr {
                    memo: None,
                    node: Node::ExplicitSet(
                        tags.iter()
                            .map(|t| CExpr {
                                memo: None,
                                node: Node::Tag(t.clone()),
                                loc: *loc,
                            })
                            .collect(),
                    ),
                    loc: *loc,
                };
                let slot = self.new_slot(name, SlotDef::Expr(body), Ty::ValSet);
                self.globals.insert(name.clone(), Name::Slot(slot));
                Ok(())
            }
            Stmt::IfVariant {
                variant, then, els, ..
            } => {
                let branch = if variant.holds(&self.variants) {
                    then
                } else {
                    els
                };
                for s in branch {
                    self.stmt(s)?;
                }
                Ok(())
            }
            Stmt::Procedure {
                name, params, body, ..
            } => {
                let p = Proc {
                    params: params.clone(),
                    body: body.clone(),
                    scope: self.globals.clone(),
                };
                self.procs.insert(name.clone(), p);
                Ok(())
            }
            Stmt::Call {
                name, args, loc, ..
            } => {
                let Some(p) = self.procs.get(name).cloned() else {
                    return Err(Error::new(*loc, format!("unknown procedure '{name}'")));
                };
                let names: Vec<Option<String>> = p.params.names.clone();
                if (args.is_empty() || names.len() != 1) && names.len() != args.len() {
                    return Err(Error::new(
                        *loc,
                        format!(
                            "procedure '{name}' takes {} argument(s), found {}",
                            names.len(),
                            args.len()
                        ),
                    ));
                }
                // Arguments are evaluated where the call is; the body sees
                // the names of its definition plus its parameters.
                let args: Vec<Expr> = if names.len() == 1 && args.len() > 1 {
                    vec![Expr {
                        kind: ExprKind::Tuple(args.clone()),
                        loc: *loc,
                    }]
                } else {
                    args.clone()
                };
                let mut bound = Vec::new();
                for (pname, a) in names.iter().zip(&args) {
                    let body = self.expr(a, &[])?;
                    let ty = self.infer(&body, &[])?;
                    let slot =
                        self.new_slot(pname.as_deref().unwrap_or("_"), SlotDef::Expr(body), ty);
                    if let Some(n) = pname {
                        bound.push((n.clone(), Name::Slot(slot)));
                    }
                }
                let saved = std::mem::replace(&mut self.globals, p.scope.clone());
                self.globals.extend(bound);
                let res = p.body.iter().try_for_each(|s| self.stmt(s));
                self.globals = saved;
                res
            }
            Stmt::Forall {
                var,
                expr,
                body,
                loc,
            } => {
                let e = self.expr(expr, &[])?;
                let eloc = e.loc;
                let set = self.new_slot(&format!("{var} members"), SlotDef::Expr(e), Ty::Unknown);
                let slot = self.new_slot(var, SlotDef::WithVar, Ty::Unknown);
                let saved = self.globals.clone();
                self.globals.insert(var.clone(), Name::Slot(slot));
                let start = self.prog.stmts.len();
                let res = body.iter().try_for_each(|s| self.stmt(s));
                self.globals = saved;
                res?;
                let inner = self.prog.stmts.split_off(start);
                if let Some(c) = self.prog.co_slot
                    && slot < c
                {
                    return Err(Error::new(
                        *loc,
                        "'with co from' inside 'forall': the model's co must be chosen at top level",
                    ));
                }
                self.prog.stmts.push(CStmt::Forall(CForall {
                    slot,
                    set: CExpr {
                        memo: None,
                        node: Node::Slot(set),
                        loc: eloc,
                    },
                    body: inner,
                }));
                Ok(())
            }
        }
    }

    /// Compiles the functions of a `let rec` group whose names are pushed
    /// after `locals`; returns their lambda numbers.
    fn rec_lambdas(
        &mut self,
        bindings: &[Binding],
        locals: &[String],
    ) -> Result<Vec<usize>, Error> {
        let base = self.prog.lambdas.len();
        // Reserve the numbers first so the bodies can be compiled in any order.
        for b in bindings {
            self.prog.lambdas.push(Lambda {
                name: b.name.clone(),
                arity: 0,
                tuple: false,
                body: CExpr {
                    memo: None,
                    node: Node::EmptyRel,
                    loc: b.loc,
                },
            });
        }
        let mut scope: Vec<String> = locals.to_vec();
        scope.extend(bindings.iter().map(|b| b.name.clone()));
        for (k, b) in bindings.iter().enumerate() {
            let params = b.params.as_ref().expect("functions only");
            let mut inner = scope.clone();
            inner.extend(params.iter().map(|p| p.0.clone()));
            let body = self.expr(&b.body, &inner)?;
            self.prog.lambdas[base + k] = Lambda {
                name: b.name.clone(),
                arity: params.len(),
                tuple: params.len() != 1,
                body,
            };
        }
        Ok((base..base + bindings.len()).collect())
    }

    /// Compiles a `let rec` of values (plain names and tuple patterns)
    /// over `locals`; returns the group and the names it pushes after
    /// `locals`: one per binding (a tuple pattern's is its text), then the
    /// components of the tuple patterns (`""` for `_`).
    fn value_rec(
        &mut self,
        bindings: &[Binding],
        locals: &[String],
        loc: Loc,
    ) -> Result<(ValueRec, Vec<String>), Error> {
        let mut scope: Vec<String> = bindings.iter().map(|b| b.name.clone()).collect();
        for b in bindings {
            if let Some(names) = &b.tuple {
                scope.extend(names.iter().map(|n| n.clone().unwrap_or_default()));
            }
        }
        let mut inner = locals.to_vec();
        inner.extend(scope.iter().cloned());
        let mut members = Vec::new();
        for b in bindings {
            let body = self.expr(&b.body, &inner)?;
            members.push((body, b.tuple.as_ref().map(Vec::len)));
        }
        Ok((ValueRec { members, loc }, scope))
    }

    /// The value a `let ... in` binding gives: a function for `let f x =
    /// ...`, the body's value otherwise.
    fn binding_value(&mut self, b: &Binding, locals: &[String]) -> Result<CExpr, Error> {
        Ok(match &b.params {
            Some(ps) => {
                let names: Vec<String> = ps.iter().map(|p| p.0.clone()).collect();
                let l = self.lambda(&b.name, &names, names.len() != 1, &b.body, locals)?;
                CExpr {
                    memo: None,
                    node: Node::Lambda(l),
                    loc: b.loc,
                }
            }
            None => self.expr(&b.body, locals)?,
        })
    }

    /// A lambda for `fun params -> body` over `locals`.
    fn lambda(
        &mut self,
        name: &str,
        params: &[String],
        tuple: bool,
        body: &Expr,
        locals: &[String],
    ) -> Result<usize, Error> {
        let mut inner = locals.to_vec();
        inner.extend(params.iter().cloned());
        let body = self.expr(body, &inner)?;
        self.prog.lambdas.push(Lambda {
            name: name.to_string(),
            arity: params.len(),
            tuple,
            body,
        });
        Ok(self.prog.lambdas.len() - 1)
    }

    fn check(&mut self, c: &Check) -> Result<(), Error> {
        let expr = self.expr(&c.expr, &[])?;
        let ty = self.infer(&expr, &[])?;
        if ty == Ty::Set && c.test != Test::Empty {
            let what = if c.test == Test::Acyclic {
                "acyclic expects a relation"
            } else {
                "irreflexive expects a relation"
            };
            return Err(type_error(expr.loc, what, ty));
        }
        self.mark_eager(&expr);
        let mut refs = Vec::new();
        self.collect_refs(&expr, &mut refs);
        self.prog.stmts.push(CStmt::Check(CCheck {
            mode: c.mode,
            negated: c.negated,
            test: c.test,
            expr,
            label: c.name.clone().unwrap_or_else(|| c.text.clone()),
            refs,
        }));
        Ok(())
    }

    /// The first environment name `e` reads through operators and explicit
    /// sets, with where it is read.
    fn first_env_name(&self, e: &CExpr) -> Option<(String, Loc)> {
        match &e.node {
            Node::Env(i) => Some((self.prog.env_names[*i].name.clone(), e.loc)),
            Node::Unary(_, a) => self.first_env_name(a),
            Node::Binary(_, _, a, b) => self.first_env_name(a).or_else(|| self.first_env_name(b)),
            Node::ExplicitSet(xs) | Node::Tuple(xs) => {
                xs.iter().find_map(|x| self.first_env_name(x))
            }
            _ => None,
        }
    }

    /// Marks the environment names `e` reads directly (not under `try`,
    /// not through a `let`) as needed before evaluation.
    fn mark_eager(&mut self, e: &CExpr) {
        match &e.node {
            Node::Env(i) => self.prog.env_names[*i].eager = true,
            Node::Unary(_, a) | Node::Domain(a) | Node::Range(a) | Node::FenceRel(a, _) => {
                self.mark_eager(a)
            }
            Node::Binary(_, _, a, b) => {
                self.mark_eager(a);
                self.mark_eager(b);
            }
            _ => {}
        }
    }

    /// Names the expression reads directly, in order of first occurrence.
    fn collect_refs(&self, e: &CExpr, out: &mut Vec<(String, CExpr)>) {
        let name = match &e.node {
            Node::Slot(i) => Some(self.prog.slots[*i].name.clone()),
            Node::Env(i) => Some(self.prog.env_names[*i].name.clone()),
            _ => None,
        };
        if let Some(name) = name {
            if !out.iter().any(|(n, _)| *n == name) {
                out.push((name, e.clone()));
            }
            return;
        }
        match &e.node {
            Node::Unary(_, a) | Node::Domain(a) | Node::Range(a) | Node::FenceRel(a, _) => {
                self.collect_refs(a, out)
            }
            Node::Binary(_, _, a, b) => {
                self.collect_refs(a, out);
                self.collect_refs(b, out);
            }
            Node::Call(_, args) => args.iter().for_each(|a| self.collect_refs(a, out)),
            _ => {}
        }
    }

    fn linearisations(&mut self, e: &Expr) -> Result<LinSpec, Error> {
        let ExprKind::App { args, .. } = &e.kind else {
            unreachable!("checked by is_linearisations_call")
        };
        if args.is_empty() || args.len() > 2 {
            return Err(Error::new(
                e.loc,
                format!(
                    "linearisations takes 1 or 2 arguments, found {}",
                    args.len()
                ),
            )
            .expected("linearisations(S, r)"));
        }
        let set = self.expr(&args[0], &[])?;
        let ty = self.infer(&set, &[])?;
        if ty == Ty::Rel {
            return Err(type_error(set.loc, "linearisations expects a set", ty));
        }
        let rel = match args.get(1) {
            Some(Expr {
                kind: ExprKind::EmptyRel,
                ..
            })
            | None => None,
            Some(a) => {
                let r = self.expr(a, &[])?;
                let ty = self.infer(&r, &[])?;
                if ty == Ty::Set {
                    return Err(type_error(r.loc, "linearisations expects a relation", ty));
                }
                Some(r)
            }
        };
        Ok(LinSpec { set, rel })
    }

    // ----- expressions ------------------------------------------------------------

    fn expr(&mut self, e: &Expr, locals: &[String]) -> Result<CExpr, Error> {
        let node = match &e.kind {
            ExprKind::EmptyRel => Node::EmptyRel,
            ExprKind::Universe => Node::Universe,
            ExprKind::Var(name) => {
                if let Some(k) = locals.iter().rposition(|l| l == name) {
                    Node::Local(k)
                } else {
                    match self.globals.get(name) {
                        Some(Name::Slot(i)) => Node::Slot(*i),
                        Some(Name::Func(f)) => Node::FuncRef(*f),
                        Some(Name::Lin(_)) => {
                            return Err(Error::new(
                                e.loc,
                                format!(
                                    "'{name}' is a set of linearisations; use it as 'with x from {name}'"
                                ),
                            ));
                        }
                        None if let Some(p) = super::func::prim_named(name) => {
                            self.need_prim_env(p, e.loc);
                            Node::PrimRef(p)
                        }
                        None => Node::Env(self.env_name(name, e.loc)),
                    }
                }
            }
            ExprKind::Unary(op, a) => Node::Unary(*op, Box::new(self.expr(a, locals)?)),
            ExprKind::Binary {
                op,
                op_loc,
                lhs,
                rhs,
            } => Node::Binary(
                *op,
                *op_loc,
                Box::new(self.expr(lhs, locals)?),
                Box::new(self.expr(rhs, locals)?),
            ),
            ExprKind::App { func, args } => return self.app(e.loc, func, args, locals),
            ExprKind::Apply { func, arg } => Node::Apply(
                Box::new(self.expr(func, locals)?),
                Box::new(self.expr(arg, locals)?),
            ),
            ExprKind::Tuple(es) => Node::Tuple(
                es.iter()
                    .map(|x| self.expr(x, locals))
                    .collect::<Result<_, _>>()?,
            ),
            ExprKind::ExplicitSet(es) => Node::ExplicitSet(
                es.iter()
                    .map(|x| self.expr(x, locals))
                    .collect::<Result<_, _>>()?,
            ),
            ExprKind::Fun { params, body } => {
                let names: Vec<String> = params
                    .names
                    .iter()
                    .map(|n| n.clone().unwrap_or_default())
                    .collect();
                Node::Lambda(self.lambda("*fun*", &names, params.tuple, body, locals)?)
            }
            ExprKind::LetIn {
                rec: false,
                bindings,
                body,
            } if bindings.iter().any(|b| b.tuple.is_some()) => {
                // `let (a, b) = e and c = f in body`: the values (a tuple for
                // each pattern) first, then the patterns' components.
                let mut vals = Vec::new();
                let mut outer = locals.to_vec();
                for b in bindings {
                    vals.push(self.binding_value(b, locals)?);
                    outer.push(b.name.clone());
                }
                let mut projs = Vec::new();
                let mut inner = outer.clone();
                for (i, b) in bindings.iter().enumerate() {
                    let Some(names) = &b.tuple else { continue };
                    for (k, n) in names.iter().enumerate() {
                        projs.push(CExpr {
                            memo: None,
                            node: Node::Proj(
                                Box::new(CExpr {
                                    memo: None,
                                    node: Node::Local(locals.len() + i),
                                    loc: b.loc,
                                }),
                                k,
                                names.len(),
                            ),
                            loc: b.loc,
                        });
                        inner.push(n.clone().unwrap_or_default());
                    }
                }
                let body = self.expr(body, &inner)?;
                Node::LetIn(
                    vals,
                    Box::new(CExpr {
                        memo: None,
                        node: Node::LetIn(projs, Box::new(body)),
                        loc: e.loc,
                    }),
                )
            }
            ExprKind::LetIn {
                rec: false,
                bindings,
                body,
            } => {
                let mut vals = Vec::new();
                for b in bindings {
                    vals.push(self.binding_value(b, locals)?);
                }
                let mut inner = locals.to_vec();
                inner.extend(bindings.iter().map(|b| b.name.clone()));
                Node::LetIn(vals, Box::new(self.expr(body, &inner)?))
            }
            ExprKind::LetIn {
                rec: true,
                bindings,
                body,
            } => {
                if bindings.iter().all(|b| b.params.is_none()) {
                    let (g, scope) = self.value_rec(bindings, locals, e.loc)?;
                    let mut inner = locals.to_vec();
                    inner.extend(scope);
                    let body = self.expr(body, &inner)?;
                    return Ok(CExpr {
                        memo: None,
                        node: Node::LetRecVals(Rc::new(g), Box::new(body)),
                        loc: e.loc,
                    });
                }
                if let Some(b) = bindings.iter().find(|b| b.params.is_none()) {
                    return Err(Error::new(
                        b.loc,
                        "a local 'let rec' mixing functions and values is not supported",
                    ));
                }
                let lams = self.rec_lambdas(bindings, locals)?;
                let mut inner = locals.to_vec();
                inner.extend(bindings.iter().map(|b| b.name.clone()));
                Node::LetRec(Rc::new(lams), Box::new(self.expr(body, &inner)?))
            }
            ExprKind::MatchSet {
                scrutinee,
                empty,
                elem,
                rest,
                nonempty,
            } => {
                let sc = self.expr(scrutinee, locals)?;
                let em = self.expr(empty, locals)?;
                let mut inner = locals.to_vec();
                inner.push(elem.clone());
                inner.push(rest.clone());
                let ne = self.expr(nonempty, &inner)?;
                Node::MatchSet(Box::new(sc), Box::new(em), Box::new(ne))
            }
            ExprKind::Tag(t) => Node::Tag(t.clone()),
            ExprKind::BellSet(t) => Node::BellSet(t.clone()),
            ExprKind::MatchTag {
                scrutinee,
                clauses,
                default,
            } => {
                let sc = self.expr(scrutinee, locals)?;
                let cs = clauses
                    .iter()
                    .map(|(t, x)| Ok((t.clone(), self.expr(x, locals)?)))
                    .collect::<Result<Vec<_>, Error>>()?;
                let d = match default {
                    Some(x) => Some(Box::new(self.expr(x, locals)?)),
                    None => None,
                };
                Node::MatchTag(Box::new(sc), cs, d)
            }
            ExprKind::Try(a, b) => Node::Try(
                Box::new(self.expr(a, locals)?),
                Box::new(self.expr(b, locals)?),
            ),
            ExprKind::If { cond, then, els } => match &**cond {
                Cond::Variants(v) => {
                    return if v.holds(&self.variants) {
                        self.expr(then, locals)
                    } else {
                        self.expr(els, locals)
                    };
                }
                Cond::Eq(..) | Cond::Subset(..) | Cond::In(..) => {
                    return Err(Error::new(
                        e.loc,
                        "'if' on a condition over values (=, subset, in) is not supported yet",
                    ));
                }
            },
        };
        Ok(CExpr {
            node,
            loc: e.loc,
            memo: None,
        })
    }

    fn app(
        &mut self,
        loc: Loc,
        func: &str,
        args: &[Expr],
        locals: &[String],
    ) -> Result<CExpr, Error> {
        let arity_error = |want: usize| {
            Error::new(
                loc,
                format!(
                    "'{func}' takes {want} argument{}, found {}",
                    if want == 1 { "" } else { "s" },
                    args.len()
                ),
            )
        };
        let not_a_function = || Error::new(loc, format!("'{func}' is not a function"));
        // One argument value: the argument, or the tuple of the arguments.
        let single_arg = |c: &mut Self| -> Result<CExpr, Error> {
            if args.len() == 1 {
                c.expr(&args[0], locals)
            } else {
                Ok(CExpr {
                    memo: None,
                    node: Node::Tuple(
                        args.iter()
                            .map(|a| c.expr(a, locals))
                            .collect::<Result<_, _>>()?,
                    ),
                    loc,
                })
            }
        };
        if let Some(k) = locals.iter().rposition(|l| l == func) {
            let arg = single_arg(self)?;
            return Ok(CExpr {
                memo: None,
                node: Node::Apply(
                    Box::new(CExpr {
                        memo: None,
                        node: Node::Local(k),
                        loc,
                    }),
                    Box::new(arg),
                ),
                loc,
            });
        }
        let node = match self.globals.get(func).copied() {
            Some(Name::Func(f)) => {
                let arity = self.prog.funcs[f].arity;
                if args.len() != arity {
                    if args.len() == 1 {
                        // `f t` with `t` a tuple: checked when applied.
                        let arg = single_arg(self)?;
                        return Ok(CExpr {
                            memo: None,
                            node: Node::Apply(
                                Box::new(CExpr {
                                    memo: None,
                                    node: Node::FuncRef(f),
                                    loc,
                                }),
                                Box::new(arg),
                            ),
                            loc,
                        });
                    }
                    return Err(arity_error(arity));
                }
                let cargs = args
                    .iter()
                    .map(|a| self.expr(a, locals))
                    .collect::<Result<Vec<_>, _>>()?;
                Node::Call(f, cargs)
            }
            Some(Name::Slot(i)) => {
                let arg = single_arg(self)?;
                Node::Apply(
                    Box::new(CExpr {
                        memo: None,
                        node: Node::Slot(i),
                        loc,
                    }),
                    Box::new(arg),
                )
            }
            Some(Name::Lin(_)) => return Err(not_a_function()),
            None => match func {
                "domain" | "range" | "fencerel" => {
                    if args.len() != 1 {
                        return Err(arity_error(1));
                    }
                    let a = Box::new(self.expr(&args[0], locals)?);
                    match func {
                        "domain" => Node::Domain(a),
                        "range" => Node::Range(a),
                        _ => Node::FenceRel(a, self.env_name("po", loc)),
                    }
                }
                _ if let Some(p) = super::func::prim_named(func) => {
                    self.need_prim_env(p, loc);
                    let cargs = args
                        .iter()
                        .map(|a| self.expr(a, locals))
                        .collect::<Result<Vec<_>, _>>()?;
                    Node::PrimCall(p, cargs)
                }
                // An error when evaluated, so that `try` can catch it.
                _ => Node::Fail(format!("unknown function '{func}'")),
            },
        };
        Ok(CExpr {
            node,
            loc,
            memo: None,
        })
    }

    /// Makes sure the environment names a built-in needs are looked up.
    fn need_prim_env(&mut self, p: super::eval::Prim, loc: Loc) {
        use super::eval::Prim;
        match p {
            Prim::Partition => {
                let i = self.env_name("loc", loc);
                self.prog.loc_env = Some(i);
            }
            Prim::FenceRel => {
                self.env_name("po", loc);
            }
            _ => {}
        }
    }

    /// Infers the type of `e`; `locals` are the types of the `Local`s.
    fn infer(&self, e: &CExpr, locals: &[Ty]) -> Result<Ty, Error> {
        let not = |t: Ty, bad: Ty| t != bad;
        Ok(match &e.node {
            Node::EmptyRel => Ty::Rel,
            Node::Universe => Ty::Set,
            Node::Env(i) => self.prog.env_names[*i].hint,
            Node::Slot(i) => self.prog.slots[*i].ty,
            Node::Local(k) => locals.get(*k).copied().unwrap_or(Ty::Unknown),
            Node::Unary(op, a) => {
                let t = self.infer(a, locals)?;
                match op {
                    UnOp::Complement => t,
                    UnOp::ToId => {
                        if !not(t, Ty::Rel) {
                            return Err(type_error(a.loc, "'[...]' expects a set", t));
                        }
                        Ty::Rel
                    }
                    _ => {
                        if !not(t, Ty::Set) {
                            return Err(type_error(
                                a.loc,
                                &format!("'{}' expects a relation", op.symbol()),
                                t,
                            ));
                        }
                        Ty::Rel
                    }
                }
            }
            Node::Binary(op, op_loc, a, b) => {
                let (x, y) = (self.infer(a, locals)?, self.infer(b, locals)?);
                let found = || format!("found {} and {}", x.describe(), y.describe());
                match op {
                    BinOp::Union | BinOp::Inter | BinOp::Diff => {
                        if x != Ty::Unknown && y != Ty::Unknown && x != y {
                            return Err(Error::new(
                                *op_loc,
                                format!(
                                    "type error: '{}' needs two sets or two relations, {}",
                                    op.symbol(),
                                    found()
                                ),
                            ));
                        }
                        if x == Ty::Unknown { y } else { x }
                    }
                    BinOp::Seq => {
                        if x == Ty::Set || y == Ty::Set {
                            return Err(Error::new(
                                *op_loc,
                                format!("type error: ';' needs two relations, {}", found()),
                            ));
                        }
                        Ty::Rel
                    }
                    BinOp::Cartesian => {
                        if x == Ty::Rel || y == Ty::Rel {
                            return Err(Error::new(
                                *op_loc,
                                format!("type error: '*' needs two sets, {}", found()),
                            ));
                        }
                        Ty::Rel
                    }
                    BinOp::Add => Ty::Unknown,
                }
            }
            Node::Call(f, args) => {
                let tys = args
                    .iter()
                    .map(|a| self.infer(a, locals))
                    .collect::<Result<Vec<_>, _>>()?;
                let func = &self.prog.funcs[*f];
                self.infer(&func.body, &tys).map_err(|inner| {
                    Error::new(
                        e.loc,
                        format!("in this call to '{}': {}", func.name, inner.message),
                    )
                })?
            }
            Node::Domain(a) | Node::Range(a) => {
                let t = self.infer(a, locals)?;
                if t == Ty::Set {
                    let what = if matches!(e.node, Node::Domain(_)) {
                        "domain expects a relation"
                    } else {
                        "range expects a relation"
                    };
                    return Err(type_error(a.loc, what, t));
                }
                Ty::Set
            }
            Node::FenceRel(a, _) => {
                let t = self.infer(a, locals)?;
                if t == Ty::Rel {
                    return Err(type_error(a.loc, "fencerel expects a set", t));
                }
                Ty::Rel
            }
            Node::Try(a, b) => {
                let (x, y) = (self.infer(a, locals)?, self.infer(b, locals)?);
                if x == y { x } else { Ty::Unknown }
            }
            Node::LetRecVals(g, body) => {
                let comps: usize = g.members.iter().map(|m| m.1.unwrap_or(0)).sum();
                let mut inner = locals.to_vec();
                inner.extend(std::iter::repeat_n(Ty::Unknown, g.members.len() + comps));
                self.infer(body, &inner)?
            }
            Node::FuncRef(_) | Node::PrimRef(_) | Node::Lambda(_) | Node::LetRec(..) => Ty::Fun,
            Node::Tuple(_) => Ty::Tuple,
            Node::Tag(_) => Ty::Tag,
            Node::BellSet(_) => Ty::Set,
            Node::Apply(..)
            | Node::PrimCall(..)
            | Node::ExplicitSet(_)
            | Node::LetIn(..)
            | Node::MatchSet(..)
            | Node::MatchTag(..)
            | Node::Proj(..)
            | Node::Fail(_) => Ty::Unknown,
        })
    }
}
