//! Running the statements: checks, `with` choices (linearisation search
//! with pruning and limits), `forall`, and every accepted choice for
//! models that bind `co`.

use super::*;

impl Program {
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
        while let Some((x, r)) = super::super::func::split(rest, f.set.loc)? {
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
                CStmt::WithFrom(w) => (w.slot, self.with_from_set(w, st)?, &w.label),
                CStmt::With(w) => {
                    let (set, rel) = self.with_operands(w, st)?;
                    let choices = match super::super::func::linearisations(&set, &rel) {
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
        let choices = self.with_from_set(w, st)?;
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

    /// The members of the set `w` chooses from, kept across evaluations
    /// when `st` carries [`WithSources`].
    fn with_from_set(&self, w: &CWithFrom, st: &mut State<'_>) -> Res<Vec<Value>> {
        let Some(mut kept) = st.with_sources.take() else {
            return self.with_from_members(w, st);
        };
        let key = kept.key(self, w, st);
        let res = match key.as_ref().and_then(|k| kept.known(k)) {
            Some(v) => Ok(v.clone()),
            None => {
                let res = self.with_from_shared(kept.shared.as_deref(), w, st);
                if let (Ok(v), Some(k)) = (&res, key) {
                    kept.remember(k, v.clone());
                }
                res
            }
        };
        st.with_sources = Some(kept);
        res
    }

    /// The members of the set `w` chooses from, found in `shared` (up to a
    /// renumbering of the events) or computed and kept there.
    fn with_from_shared(
        &self,
        shared: Option<&SharedWithSets>,
        w: &CWithFrom,
        st: &mut State<'_>,
    ) -> Res<Vec<Value>> {
        let Some((shared, (key, canonical))) =
            shared.and_then(|sh| Some((sh, sh.canonical(self, w, st)?)))
        else {
            return self.with_from_members(w, st);
        };
        if let Some(members) = shared.get(&key, &canonical) {
            return Ok(members);
        }
        let members = self.with_from_members(w, st)?;
        shared.put(key, &canonical, &members);
        Ok(members)
    }

    fn with_from_members(&self, w: &CWithFrom, st: &mut State<'_>) -> Res<Vec<Value>> {
        match self.eval(&w.expr, st, &[])?.into_owned() {
            Value::Empty => Ok(Vec::new()),
            Value::ValSet(vs) => Ok(vs.as_ref().clone()),
            other => Err(type_error(
                w.expr.loc,
                "'with ... from' expects a set of values",
                other.kind(),
            )),
        }
    }

    /// Whether check `c` holds on `st` (flags and failures dropped); used on
    /// partial candidates by the pruning search.
    pub fn check_holds(&self, c: &CCheck, st: &State<'_>) -> Res<bool> {
        if st.deadline.is_some_and(|d| std::time::Instant::now() > d) {
            return Err(Box::new(super::super::guard::past_deadline(c.expr.loc)));
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
            CheckMode::Assert => Err(Box::new(Error::new(
                c.expr.loc,
                format!("assertion failed: {}", c.label),
            ))),
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
                    error = Some(Box::new(Error::new(w.set.loc, "time budget exceeded")));
                    return ControlFlow::Break(());
                }
                if let Some(msg) =
                    with_limit(&st.with_limits, st.with_nodes, visited, done, began, size)
                {
                    st.limit = Some(msg);
                    error = Some(Box::new(Error::new(w.set.loc, "work budget exceeded")));
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
    let budget = crate::budget::TimeBudget { start, timeout };
    let (elapsed, limit) = budget.elapsed_limit();
    let before = elapsed - began.elapsed().as_secs_f64();
    // Late in the timeout, nothing covered yet projects past it too.
    budget.over(began, done, f64::INFINITY).map(|projected| {
        format!(
            "a `with` search over the orders of {size} events would take up to about \
             {projected:.0} s: {:.2}% of its orders covered after {:.1} s (projected from the \
             share of its search tree covered), over --timeout {limit} s",
            done * 100.0,
            elapsed - before
        )
    })
}
