//! Which parts of a program are static (the same for every candidate of a
//! skeleton) and the memo plan that keeps their values across evaluations.

use super::*;

impl Program {
    /// Which environment names and slots are static for `env` (see
    /// `Environment::is_static`): a slot is static when its definition uses
    /// only static names and static slots (no `with` variable, no `let rec`,
    /// no function call).
    pub fn static_parts(&self, env: &dyn Environment) -> (Vec<bool>, Vec<bool>) {
        let env_static = self.env_static(env);
        let slot_static = self.static_slots(&env_static, vec![false; self.slots.len()]);
        (env_static, slot_static)
    }

    /// Marks static, in `slot_static` (those already marked stay so), every
    /// slot whose definition is static given the static names `env_static`
    /// and the slots marked so far.
    fn static_slots(&self, env_static: &[bool], mut slot_static: Vec<bool>) -> Vec<bool> {
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
                    && self.expr_static(e, env_static, &slot_static)
                {
                    slot_static[i] = true;
                    changed = true;
                }
            }
            if !changed {
                return slot_static;
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

    /// Whether some statement (check, `with`, `forall`) can read an
    /// environment name `names` selects, through the definitions,
    /// functions and closures it uses. A `with` variable counts as fixed
    /// (its set is a statement of its own); a `let rec` member or a
    /// `forall` body as reading everything. Unlike the polarity analysis
    /// of [`super::super::monotone`], it sees through the functional tier
    /// (applications, value sets), so a model that builds its orders with
    /// herd's `cross.cat` is not taken to read every name.
    pub fn statements_read(&self, names: &dyn Fn(&str) -> bool) -> bool {
        let es: Vec<bool> = self.env_names.iter().map(|n| !names(&n.name)).collect();
        let with_vars = self
            .slots
            .iter()
            .map(|s| matches!(s.def, SlotDef::WithVar))
            .collect();
        let ss = self.static_slots(&es, with_vars);
        let fixed = |e: &CExpr| self.expr_static(e, &es, &ss);
        self.stmts.iter().any(|s| match s {
            CStmt::Check(c) => !fixed(&c.expr),
            CStmt::With(w) => !fixed(&w.set) || w.rel.as_ref().is_some_and(|r| !fixed(r)),
            CStmt::WithFrom(w) => !fixed(&w.expr),
            CStmt::Forall(_) => true,
        })
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
}

/// What a value reads of the environment ([`Program::slot_inputs`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Inputs {
    /// The environment names (by index) it can read.
    pub names: Vec<usize>,
    /// Whether it is local to its inputs' events: it never builds an event
    /// that none of its inputs holds (no `_`, `~`, `*`, `?`, and no
    /// built-in but `domain`, `range`, `linearisations`, `partition` and
    /// `fencerel`). Its value on an environment is then its value on the
    /// inputs' events alone, renumbered (see [`super::super::canon`]).
    pub local: bool,
    /// The names it reads only on events its other inputs hold: through
    /// `partition` (herd's `loc`), or intersected with a value built from
    /// other inputs alone (herd's `co0 = loc & (IW * (W \ IW))`).
    pub restricted: Vec<usize>,
}

impl Program {
    /// What the value of slot `slot` can read of the environment, through
    /// the definitions, functions and closures it uses; `None` when it
    /// reads the environment in a way not named here (bell tags,
    /// `tag2events`, `tag2scope`) or depends on a `with` choice. Two
    /// environments that agree on every name returned give the slot the
    /// same value.
    pub fn slot_inputs(&self, slot: usize) -> Option<Inputs> {
        let mut w = Walk::new(self);
        w.slot(slot)?;
        Some(w.inputs())
    }

    /// The names of `inputs`, sorted and without repeats, and those of them
    /// read only restricted. A name can stand at two indices (the native
    /// form of a model that builds `co` reads `FW` as `W`): it is
    /// restricted only when neither reading of it is direct.
    pub fn input_names<'p>(&'p self, inputs: &Inputs) -> (Vec<&'p str>, Vec<&'p str>) {
        let name = |i: &usize| self.env_names[*i].name.as_str();
        let mut names: Vec<&str> = inputs.names.iter().map(name).collect();
        names.sort_unstable();
        names.dedup();
        let direct: Vec<&str> = inputs
            .names
            .iter()
            .filter(|i| !inputs.restricted.contains(i))
            .map(name)
            .collect();
        let restricted = names
            .iter()
            .copied()
            .filter(|n| !direct.contains(n))
            .collect();
        (names, restricted)
    }

    /// [`Program::slot_inputs`] for an expression outside any function.
    pub fn expr_inputs(&self, e: &CExpr) -> Option<Inputs> {
        let mut w = Walk::new(self);
        w.expr(e)?;
        Some(w.inputs())
    }
}

/// The walk of [`Program::slot_inputs`]: the names (and those read other
/// than through `partition`), slots, functions and closures met so far,
/// and whether everything met is local.
struct Walk<'p> {
    prog: &'p Program,
    names: Vec<bool>,
    direct: Vec<bool>,
    local: bool,
    slots: Vec<bool>,
    funcs: Vec<bool>,
    lambdas: Vec<bool>,
}
impl Walk<'_> {
    fn slot(&mut self, i: usize) -> Option<()> {
        if std::mem::replace(&mut self.slots[i], true) {
            return Some(());
        }
        match &self.prog.slots[i].def {
            SlotDef::Expr(e) => self.expr(e),
            SlotDef::Rec(g) => {
                for (s, e, _) in &self.prog.groups[*g].members {
                    self.slots[*s] = true;
                    self.expr(e)?;
                }
                Some(())
            }
            SlotDef::WithVar => None,
        }
    }
    fn lambda(&mut self, l: usize) -> Option<()> {
        if std::mem::replace(&mut self.lambdas[l], true) {
            return Some(());
        }
        self.expr(&self.prog.lambdas[l].body)
    }
    fn func(&mut self, f: usize) -> Option<()> {
        if std::mem::replace(&mut self.funcs[f], true) {
            return Some(());
        }
        self.expr(&self.prog.funcs[f].body)
    }
    /// Whether `e` is a first-order value whose events all come from the
    /// names it reads directly (so from the support of
    /// [`super::super::canon::Support::Inputs`]).
    fn bounded(&self, e: &CExpr) -> bool {
        match &e.node {
            Node::EmptyRel | Node::Env(_) => true,
            Node::Slot(i) => match &self.prog.slots[*i].def {
                SlotDef::Expr(d) => self.bounded(d),
                _ => false,
            },
            Node::Unary(UnOp::Plus | UnOp::Inverse | UnOp::ToId, a)
            | Node::Domain(a)
            | Node::Range(a) => self.bounded(a),
            Node::Binary(BinOp::Inter, _, a, b) => self.bounded(a) || self.bounded(b),
            Node::Binary(BinOp::Diff, _, a, _) => self.bounded(a),
            Node::Binary(BinOp::Union | BinOp::Seq | BinOp::Cartesian, _, a, b) => {
                self.bounded(a) && self.bounded(b)
            }
            _ => false,
        }
    }
    fn read(&mut self, i: usize) {
        self.names[i] = true;
        self.direct[i] = true;
    }
    /// The names a built-in reads besides its arguments.
    fn prim(&mut self, p: Prim) -> Option<()> {
        match p {
            Prim::TagToEvents | Prim::TagToScope => return None,
            Prim::Partition => self.names[self.prog.loc_env?] = true,
            Prim::FenceRel => {
                let po = self.prog.env_names.iter().position(|n| n.name == "po")?;
                self.read(po);
            }
            Prim::Domain | Prim::Range | Prim::Linearisations => {}
            Prim::PageTableStores | Prim::SameOutputAddress => self.local = false,
        }
        Some(())
    }
    fn all(&mut self, xs: &[CExpr]) -> Option<()> {
        xs.iter().try_for_each(|x| self.expr(x))
    }
    fn expr(&mut self, e: &CExpr) -> Option<()> {
        match &e.node {
            Node::EmptyRel | Node::Local(_) | Node::Tag(_) | Node::Fail(_) => Some(()),
            Node::Universe => {
                self.local = false;
                Some(())
            }
            Node::BellSet(_) => None,
            Node::PrimRef(p) => self.prim(*p),
            Node::Env(i) => {
                self.read(*i);
                Some(())
            }
            Node::Slot(i) => self.slot(*i),
            Node::Unary(op, a) => {
                if matches!(op, UnOp::Complement | UnOp::Star | UnOp::Opt) {
                    self.local = false;
                }
                self.expr(a)
            }
            Node::Domain(a) | Node::Range(a) | Node::Proj(a, _, _) => self.expr(a),
            Node::FenceRel(a, po) => {
                self.read(*po);
                self.expr(a)
            }
            Node::Binary(BinOp::Inter, _, a, b) => match (&a.node, &b.node) {
                // A name intersected with a value of the other inputs is
                // read on their events only.
                (Node::Env(i), _) if self.bounded(b) => {
                    self.names[*i] = true;
                    self.expr(b)
                }
                (_, Node::Env(i)) if self.bounded(a) => {
                    self.names[*i] = true;
                    self.expr(a)
                }
                _ => {
                    self.expr(a)?;
                    self.expr(b)
                }
            },
            Node::Binary(_, _, a, b) | Node::Apply(a, b) | Node::Try(a, b) => {
                self.expr(a)?;
                self.expr(b)
            }
            Node::Call(f, args) => {
                self.all(args)?;
                self.func(*f)
            }
            Node::FuncRef(f) => self.func(*f),
            Node::PrimCall(p, args) => {
                self.prim(*p)?;
                self.all(args)
            }
            Node::Lambda(l) => self.lambda(*l),
            Node::Tuple(xs) | Node::ExplicitSet(xs) => self.all(xs),
            Node::LetIn(vals, body) => {
                self.all(vals)?;
                self.expr(body)
            }
            Node::LetRec(lams, body) => {
                for &l in lams.iter() {
                    self.lambda(l)?;
                }
                self.expr(body)
            }
            Node::LetRecVals(g, body) => {
                for (m, _) in &g.members {
                    self.expr(m)?;
                }
                self.expr(body)
            }
            Node::MatchSet(a, b, c) => {
                self.expr(a)?;
                self.expr(b)?;
                self.expr(c)
            }
            Node::MatchTag(a, cases, d) => {
                self.expr(a)?;
                for (_, x) in cases {
                    self.expr(x)?;
                }
                d.as_deref().map_or(Some(()), |d| self.expr(d))
            }
        }
    }
}

impl<'p> Walk<'p> {
    fn new(prog: &'p Program) -> Self {
        Walk {
            prog,
            names: vec![false; prog.env_names.len()],
            direct: vec![false; prog.env_names.len()],
            local: true,
            slots: vec![false; prog.slots.len()],
            funcs: vec![false; prog.funcs.len()],
            lambdas: vec![false; prog.lambdas.len()],
        }
    }

    fn inputs(&self) -> Inputs {
        let on = |v: &[bool]| (0..v.len()).filter(|&i| v[i]).collect::<Vec<_>>();
        Inputs {
            names: on(&self.names),
            local: self.local,
            restricted: (0..self.names.len())
                .filter(|&i| self.names[i] && !self.direct[i])
                .collect(),
        }
    }
}
