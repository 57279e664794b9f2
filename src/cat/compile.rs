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

use super::ast::{BinOp, Check, Error, Expr, ExprKind, Loc, Stmt, Test, UnOp};
use super::eval::{
    CCheck, CExpr, CStmt, CWith, EnvName, Func, Node, Program, RecGroup, SlotDef, SlotInfo, Ty,
};
use std::collections::HashMap;

/// Built-in functions of the relational core.
const BUILTINS: [&str; 4] = ["domain", "range", "fencerel", "linearisations"];

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

/// Compiles the statements of a model (includes already spliced in).
pub fn compile(stmts: &[Stmt]) -> Result<Program, Error> {
    let mut c = Compiler::default();
    for s in stmts {
        c.stmt(s)?;
    }
    Ok(c.prog)
}

#[derive(Default)]
struct Compiler {
    prog: Program,
    globals: HashMap<String, Name>,
    env_index: HashMap<String, usize>,
    lins: Vec<LinSpec>,
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
                if let Some(b) = bindings.iter().find(|b| b.params.is_some()) {
                    return Err(Error::new(
                        b.loc,
                        "recursive functions are not supported yet (herd's functional layer)",
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
                    return Err(Error::new(
                        expr.loc,
                        "'with' supports only linearisations(S, r) for now (herd's functional layer is not supported yet)",
                    )
                    .expected("linearisations(S, r)"));
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
        }
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
                        Some(Name::Func(_)) => {
                            return Err(Error::new(
                                e.loc,
                                format!("'{name}' is a function; call it as {name}(...)"),
                            ));
                        }
                        Some(Name::Lin(_)) => {
                            return Err(Error::new(
                                e.loc,
                                format!(
                                    "'{name}' is a set of linearisations; use it as 'with x from {name}'"
                                ),
                            ));
                        }
                        None if BUILTINS.contains(&name.as_str()) => {
                            return Err(Error::new(
                                e.loc,
                                format!("'{name}' is a built-in function; call it as {name}(...)"),
                            ));
                        }
                        None => Node::Env(self.env_name(name, e.loc)),
                    }
                }
            }
            ExprKind::Unary(op, a) => Node::Unary(*op, Box::new(self.expr(a, locals)?)),
            ExprKind::Binary {
                op: BinOp::Add,
                op_loc,
                ..
            } => {
                return Err(Error::new(
                    *op_loc,
                    "'++' is not supported yet (herd's functional layer)",
                ));
            }
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
        };
        Ok(CExpr { node, loc: e.loc })
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
        if locals.iter().any(|l| l == func) {
            return Err(not_a_function());
        }
        let node = match self.globals.get(func).copied() {
            Some(Name::Func(f)) => {
                let arity = self.prog.funcs[f].arity;
                if args.len() != arity {
                    return Err(arity_error(arity));
                }
                let cargs = args
                    .iter()
                    .map(|a| self.expr(a, locals))
                    .collect::<Result<Vec<_>, _>>()?;
                Node::Call(f, cargs)
            }
            Some(Name::Slot(_) | Name::Lin(_)) => return Err(not_a_function()),
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
                "linearisations" => {
                    return Err(Error::new(
                        loc,
                        "linearisations(...) can only be used in 'with x from linearisations(S, r)'",
                    ));
                }
                _ => return Err(Error::new(loc, format!("unknown function '{func}'"))),
            },
        };
        Ok(CExpr { node, loc })
    }

    /// Infers the type of `e`; `locals` are the types of the `Local`s.
    fn infer(&self, e: &CExpr, locals: &[Ty]) -> Result<Ty, Error> {
        let not = |t: Ty, bad: Ty| t != bad;
        Ok(match &e.node {
            Node::EmptyRel => Ty::Rel,
            Node::Universe => Ty::Set,
            Node::Env(i) => self.prog.env_names[*i].hint,
            Node::Slot(i) => self.prog.slots[*i].ty,
            Node::Local(k) => locals[*k],
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
        })
    }
}
