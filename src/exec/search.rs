//! The search for candidates of one choice of thread paths: reads-from
//! choices (values memoised, constraints checked as soon as decidable,
//! thin-air subtrees cut), then coherence orders per location, judging
//! partial candidates with the model's monotone checks (pruning) and
//! projecting time under a timeout. Sizing a hopeless search before it
//! runs is in `sizing.rs`.

use super::*;

/// The final value of each register among a test's observed terms, in the
/// observed terms' order (0 at the other terms' places), worked out once
/// per reads-from choice.
type FinalRegs = Vec<Value>;

/// The reads-from search may visit this many partial choices per allowed
/// candidate before it counts as runaway.
const RF_NODES_PER_CANDIDATE: u64 = 10;

/// Nodes with fewer complete candidates below are not judged partially
/// (8: on the oracle suites, 4 judged more partial candidates than it
/// saved on C11 and PTX tests, 16 lost 7 % on X86; measured in
/// instructions, docs/decisions.md).
const MIN_SUBTREE: f64 = 8.0;

/// As [`MIN_SUBTREE`] with a [`StateFilter`] that skips the states it
/// lists: candidates reaching a skipped state cost nothing, those that
/// remain are worth cutting earlier (measured on `verify-mapping`
/// campaigns).
const MIN_SUBTREE_FILTERED: f64 = 2.0;

/// As [`MIN_SUBTREE`] with a [`StateFilter`] listing the only states
/// wanted: the candidates reaching other states are skipped without a
/// judgement, so judging a partial candidate rarely saves work; only
/// large subtrees are (measured on `verify-mapping` campaigns, whose
/// source runs and runs bounded by weaker programs take such filters:
/// judging from 2 candidates below took 1.9 times as long on a `sc11-ptx`
/// bound-5 slice).
const MIN_SUBTREE_ONLY: f64 = 1024.0;

/// Nodes between two projections.
const PROJECT_EVERY: u64 = 256;

pub(super) struct RfSearch<'s, 'a> {
    pub(super) skel: &'s Skeleton<'a>,
    /// The model candidates are judged by: the one asked for, or its
    /// [`Model::co_native`] form once [`RfSearch::settle`] has checked it.
    pub(super) model: &'s Model,
    /// The native form, not yet checked on this skeleton (see
    /// [`RfSearch::settle`]).
    pub(super) pending: Option<super::NativeCheck<'s>>,
    pub(super) opts: &'s CheckOptions,
    pub(super) observed: &'s [Term],
    pub(super) res: &'s mut CheckResult,
    pub(super) forbidden: &'s mut BTreeMap<Vec<Value>, Forbidden>,
    pub(super) values: Values<'s, 'a>,
    /// Model definitions that depend only on this skeleton.
    pub(super) cache: crate::cat::StaticCache,
    pub(super) pruner: &'s Pruner<'s>,
    /// The rf edges of the reads that have a source so far.
    pub(super) rf: Relation,
    /// The coherence edges of every candidate (init first).
    pub(super) base_co: Relation,
    pub(super) deadline: Option<Instant>,
    pub(super) start: Instant,
    /// Partial candidates judged by the size probes.
    pub(super) probe_evals: u64,
    /// `rf_below[k]`: reads-from choices of reads `k..` (plain bound).
    pub(super) rf_below: Vec<f64>,
    /// `co_below[l]`: coherence orders of locations `0..l`.
    pub(super) co_below: Vec<f64>,
    /// Where the search is: per level of the tree (reads, then coherence
    /// placements), the child being explored and the number of children.
    pub(super) pos: Vec<(u32, u32)>,
    /// The share of the whole test's search (all path combinations) done
    /// before this skeleton, and this skeleton's share.
    pub(super) outer_done: f64,
    pub(super) outer_share: f64,
    /// Under a timeout, the predicted costs of the path combinations, this
    /// one's index, and the nodes visited before it.
    pub(super) combos: Option<&'s project::ComboCost>,
    pub(super) combo_index: usize,
    pub(super) combo_ticks: u64,
    /// Nodes visited (the projection is checked every [`PROJECT_EVERY`]).
    pub(super) ticks: u64,
    /// Barrier matchings computed for this skeleton.
    pub(super) bar_memo: barrier::Memo,
    /// For a model that reads nothing of `co`: per location, whether the
    /// test observes its final value. Coherence then only chooses the last
    /// write of each observed location (see [`RfSearch::co_last_write`]).
    pub(super) co_last_only: Option<&'s [bool]>,
    /// With [`RfSearch::co_last_only`], for a model that reads `co` only
    /// through `FW`: each chosen order stands for every order with the
    /// same last writes, and counts as that many candidates (see
    /// [`RfSearch::co_last_write`]).
    pub(super) co_weighted: bool,
    /// How many candidates the one being built stands for.
    pub(super) weight: u64,
}

/// What a complete candidate needs beyond `rf` and `co`.
struct Judged<'j> {
    bar: &'j Relation,
    regs: &'j FinalRegs,
    vals: &'j [Option<Value>],
}

/// The coherence search state: per location its writes, a prefix of which
/// is placed, and the coherence edges every completion has.
struct CoState {
    order: Vec<Vec<usize>>,
    co: Relation,
}

/// Adds (or removes) the edges of the total order `chain` to `co`.
fn set_chain(co: &mut Relation, chain: &[usize], present: bool) {
    for (a, &e) in chain.iter().enumerate() {
        for &b in &chain[a + 1..] {
            if present {
                co.add(e, b);
            } else {
                co.remove(e, b);
            }
        }
    }
}

impl RfSearch<'_, '_> {
    /// Assigns an rf source to read number `k` (of `skel.reads`) and recurses.
    pub(super) fn run(&mut self, k: usize) -> Result<(), CheckError> {
        self.descend(k, None)
    }

    /// [`RfSearch::run`] below a choice of the previous read. With `below`
    /// (the plain bound on the complete candidates under this node), the
    /// partial candidate is judged for a cut ([`RfSearch::cut`]), but only
    /// once the thread paths' constraints are still possible: a branch
    /// the read values already rule out is left at no cost, instead of
    /// after a judgement of the model (the same subtrees are left either
    /// way; only fewer partial candidates are judged).
    fn descend(&mut self, k: usize, below: Option<f64>) -> Result<(), CheckError> {
        self.res.rf_nodes += 1;
        if self.res.rf_nodes
            > self
                .opts
                .max_candidates
                .saturating_mul(RF_NODES_PER_CANDIDATE)
        {
            return Err(CheckError::Limit(format!(
                "the reads-from search visited more than {} choices (raise --max-candidates)",
                self.opts
                    .max_candidates
                    .saturating_mul(RF_NODES_PER_CANDIDATE)
            )));
        }
        self.tick()?;
        if !self.constraints_possible() || self.filter_done() {
            return Ok(());
        }
        if let Some(below) = below
            && self.cut(
                &self.base_co.clone(),
                &Relation::new(self.skel.len()),
                false,
                below,
            )?
        {
            return Ok(());
        }
        if k == self.skel.reads.len() {
            return self.judge_rf();
        }
        if k > 0 && !self.wanted_reachable() {
            return Ok(());
        }
        let r = self.skel.reads[k];
        let loc = self.skel.events[r].loc.unwrap_or(0);
        let mut sources = vec![self.skel.init[loc]];
        sources.extend(self.skel.writes_by_loc[loc].iter().copied());
        let n = sources.len() as u32;
        for (i, w) in sources.into_iter().enumerate() {
            self.pos.push((i as u32, n));
            self.values.set_rf(r, w);
            self.rf.add(w, r);
            if self.values.value(r) == Eval::Cyclic {
                // The value would depend on itself whatever the other reads
                // choose: the whole subtree is out of thin air. Worth a
                // warning only when the model does not reject it anyway.
                if !self.partial_fails(
                    &self.base_co.clone(),
                    &Relation::new(self.skel.len()),
                    false,
                ) {
                    self.res.cyclic += 1;
                }
            } else {
                let below = self.rf_below[k + 1] * self.co_below[self.skel.writes_by_loc.len()];
                self.descend(k + 1, Some(below))?;
            }
            self.rf.remove(w, r);
            self.pos.pop();
        }
        self.values.set_rf(r, usize::MAX);
        Ok(())
    }

    /// The work weight of one judgement of a candidate of this skeleton.
    pub(super) fn weight(&self) -> u64 {
        super::judgement_weight(self.skel)
    }

    /// Adds one judgement to the work done; over the budget, a limit.
    fn work(&mut self) -> Result<(), CheckError> {
        self.res.work += self.weight();
        let with_work = self.cache.with_nodes.saturating_mul(self.weight());
        if self.res.work.saturating_add(with_work) > self.opts.max_candidates {
            return Err(CheckError::Limit(format!(
                "the search did more than {} units of work (candidates and partial candidates \
                 judged, weighted by size) (raise --max-candidates)",
                self.opts.max_candidates
            )));
        }
        Ok(())
    }

    /// Fills `rf_below` and `co_below`.
    pub(super) fn plain_bounds(&mut self) {
        let skel = self.skel;
        let mut rf_below = vec![1f64; skel.reads.len() + 1];
        for k in (0..skel.reads.len()).rev() {
            let loc = skel.events[skel.reads[k]].loc.unwrap_or(0);
            rf_below[k] = rf_below[k + 1] * (1 + skel.writes_by_loc[loc].len()) as f64;
        }
        let mut co_below = vec![1f64; skel.writes_by_loc.len() + 1];
        for (l, w) in skel.writes_by_loc.iter().enumerate() {
            co_below[l + 1] = co_below[l] * self.co_orders(l, w.len());
        }
        self.rf_below = rf_below;
        self.co_below = co_below;
    }

    /// The share of the test's search tree covered so far, taking every
    /// subtree of a level to be the same size.
    fn share_done(&self) -> f64 {
        let (mut within, mut share) = (0.0, 1.0);
        for &(i, n) in &self.pos {
            let n = f64::from(n.max(1));
            within += share * f64::from(i) / n;
            share /= n;
        }
        // Each combination of thread paths counted alike, or weighted by
        // its predicted cost: the projection takes the less advanced one.
        let uniform = self.outer_done + self.outer_share * within;
        self.combos
            .and_then(|c| {
                c.done(
                    self.combo_index,
                    self.ticks,
                    self.ticks - self.combo_ticks,
                    within,
                )
            })
            .map_or(uniform, |d| d.min(uniform))
    }

    /// Fails once the test is past its deadline, or (with `--timeout`) once
    /// the time projected from the share of the tree covered is
    /// over it by [`crate::budget::margin`]: a limit message then, rather than
    /// a timeout later. Publishes progress.
    fn tick(&mut self) -> Result<(), CheckError> {
        self.ticks += 1;
        if self.ticks.is_multiple_of(PROJECT_EVERY)
            && let Some(limit) = self.opts.timeout
        {
            let budget = crate::budget::TimeBudget {
                start: self.start,
                timeout: limit,
            };
            let (elapsed, limit) = budget.elapsed_limit();
            // Late in the timeout, a search with nothing of its tree
            // covered yet projects past it too.
            let done = self.share_done();
            if budget.over(self.start, done, f64::INFINITY).is_some() {
                return Err(CheckError::Limit(format!(
                    "the search would take about {:.0} s: {:.2}% of it done after {elapsed:.1} s \
                     (projected from the share of the search tree covered), over --timeout {limit} s",
                    elapsed / done.max(1e-9),
                    done * 100.0
                )));
            }
        }
        if let Some(p) = &self.opts.progress {
            use std::sync::atomic::Ordering::Relaxed;
            p.candidates.store(self.res.candidates, Relaxed);
            p.partial.store(self.res.partial, Relaxed);
            p.pruned.store(self.res.pruned, Relaxed);
        }
        if let Some(d) = self.deadline
            && Instant::now() > d
        {
            return Err(CheckError::Timeout {
                after: self.start.elapsed(),
                candidates: self.res.candidates,
                pruned: self.res.pruned,
                states: None,
            });
        }
        Ok(())
    }

    /// Decides, before the search's first judgement, which model judges:
    /// the native form when its set of `co` choices is the engine's orders
    /// on this skeleton ([`super::co_choices_are_engine_orders`]), with
    /// its pruner and a cache that check has filled, else the model asked
    /// for. Nothing is judged before, so the search runs as if decided at
    /// its start; a skeleton whose branches the read values rule out never
    /// pays for the check.
    pub(super) fn settle(&mut self) {
        let Some(n) = self.pending.take() else {
            return;
        };
        let mut cache = n.model.new_cache();
        if super::co_choices_are_engine_orders(self.skel, n.model, &mut cache, n.lenient) {
            super::judging_cache(
                &mut cache,
                n.prune,
                self.deadline,
                self.opts,
                self.res.work,
                self.skel,
                self.start,
            );
            self.model = n.model;
            self.pruner = n.pruner;
            self.cache = cache;
        }
    }

    /// Whether the partial candidate (current `rf`, `co`, `bar`) fails a
    /// pruning check of the model; `rf_complete` once every read has its
    /// source and `bar` is final.
    pub(super) fn partial_fails(
        &mut self,
        co: &Relation,
        bar: &Relation,
        rf_complete: bool,
    ) -> bool {
        self.settle();
        self.probe_evals += 1;
        self.pruner
            .fails(self.skel, &self.rf, co, bar, rf_complete, &mut self.cache)
    }

    /// With pruning on: judges the partial candidate and says whether to
    /// cut it (counted), within the work budget.
    /// `below` bounds the complete candidates under the node: a node with
    /// fewer than [`MIN_SUBTREE`] is not worth a judgement of its own (the
    /// candidates below are judged whole anyway; results are the same).
    fn cut(
        &mut self,
        co: &Relation,
        bar: &Relation,
        rf_complete: bool,
        below: f64,
    ) -> Result<bool, CheckError> {
        let min = match &self.opts.skip {
            Some(f) if f.only => MIN_SUBTREE_ONLY,
            Some(_) => MIN_SUBTREE_FILTERED,
            None => MIN_SUBTREE,
        };
        if below < min {
            return Ok(false);
        }
        self.settle();
        if !self.pruner.enabled {
            return Ok(false);
        }
        self.res.partial += 1;
        self.work()?;
        self.tick()?;
        let fails = self.partial_fails(co, bar, rf_complete);
        if fails {
            self.res.pruned += 1;
        }
        Ok(fails)
    }

    /// False when some path constraint is already known to fail.
    pub(super) fn constraints_possible(&self) -> bool {
        for (t, p) in self.skel.paths.iter().enumerate() {
            for c in &p.constraints {
                match self.values.constraint(t, c) {
                    Eval::Known(Value::Int(0)) | Eval::Error(_) => return false,
                    Eval::Cyclic => return false,
                    _ => {}
                }
            }
        }
        true
    }

    /// All reads have a source: check constraints fully, then try every coherence order.
    fn judge_rf(&mut self) -> Result<(), CheckError> {
        let skel = self.skel;
        for (t, p) in skel.paths.iter().enumerate() {
            for c in &p.constraints {
                match self.values.constraint(t, c) {
                    Eval::Known(v) if v != Value::Int(0) => {}
                    Eval::Cyclic | Eval::Unknown => {
                        self.count_thin_air();
                        return Ok(());
                    }
                    _ => return Ok(()),
                }
            }
        }
        let n = skel.len();
        let mut vals = Vec::with_capacity(n);
        for e in 0..n {
            match self.values.value(e) {
                Eval::Known(v) => vals.push(Some(v)),
                Eval::Cyclic | Eval::Unknown => {
                    if skel.events[e].kind == EventKind::Read
                        || skel.events[e].kind == EventKind::Write
                    {
                        self.count_thin_air();
                        return Ok(());
                    }
                    vals.push(None);
                }
                Eval::Error(_) => return Ok(()),
            }
        }
        // Non-memory events carry no value.
        for (e, v) in vals.iter_mut().enumerate() {
            if !matches!(skel.events[e].kind, EventKind::Read | EventKind::Write) {
                *v = None;
            }
        }
        let bars = barrier::instances(
            skel,
            &self.values,
            &mut self.bar_memo,
            self.deadline,
            self.opts.timeout.map(|t| (self.start, t)),
        )?;
        // Counted, like thin-air choices, only when the model's pruning
        // checks do not reject this rf choice anyway: the count is then the
        // same whether pruning is on or off.
        if bars.deadlock {
            let (co, none) = (self.base_co.clone(), Relation::new(skel.len()));
            if !self.partial_fails(&co, &none, false) {
                self.res.barrier_deadlocks += 1;
            }
        }
        let regs = self.final_registers();
        for bar in &bars.matchings {
            self.judge_co(bar, &vals, &regs)?;
        }
        Ok(())
    }

    /// Judges every coherence order of the current `rf` choice under one
    /// barrier matching.
    fn judge_co(
        &mut self,
        bar: &Relation,
        vals: &[Option<Value>],
        regs: &FinalRegs,
    ) -> Result<(), CheckError> {
        let skel = self.skel;
        let lasts: Vec<&[usize]> = skel.writes_by_loc.iter().map(Vec::as_slice).collect();
        if self.all_states_skipped(regs, vals, &lasts) {
            return Ok(());
        }
        self.settle();
        let base_co = self.base_co.clone();
        // With no barrier edges this is the partial candidate the last
        // read's choice was just judged as, with the same `below` (so it
        // was judged) and passed: when the coherence plan has the same
        // checks, judging it again cannot cut.
        let judged_already =
            !skel.reads.is_empty() && bar.is_empty() && self.pruner.co_plan_adds_nothing;
        if !judged_already
            && self.cut(&base_co, bar, true, self.co_below[skel.writes_by_loc.len()])?
        {
            return Ok(());
        }

        // Coherence orders multiply: without pruning, refuse before
        // enumerating them when they alone would exceed the candidate
        // budget. With pruning the search may cut most of them, and the
        // work budget and deadline bound it instead.
        let budget = self.opts.max_candidates.saturating_sub(self.res.candidates);
        let co_choices = self.co_below[skel.writes_by_loc.len()].min(u64::MAX as f64) as u64;
        if !self.pruner.enabled {
            if co_choices > self.opts.max_candidates {
                return Err(CheckError::Limit(format!(
                    "{co_choices} coherence orders for one choice of reads-from exceed the budget \
                     of {} candidate executions (raise --max-candidates)",
                    self.opts.max_candidates
                )));
            }
            if co_choices > budget {
                return Err(over_budget(self.opts.max_candidates));
            }
        }
        if self.model.binds_co() {
            let rf = self.rf.clone();
            return self.judge_model_co(&rf, bar, regs, vals);
        }
        let mut cs = CoState {
            order: skel.writes_by_loc.clone(),
            co: base_co,
        };
        let judged = Judged { bar, regs, vals };
        self.co_locations(&mut cs, skel.writes_by_loc.len(), &judged)
    }

    /// The coherence orders the search tries for a location with `writes`
    /// writes: all of them, or with a model blind to `co` one per possible
    /// last write of an observed location (one for the others).
    pub(super) fn co_orders(&self, loc: usize, writes: usize) -> f64 {
        match self.co_last_only {
            Some(observed) if observed.get(loc).copied().unwrap_or(false) => writes.max(1) as f64,
            Some(_) => 1.0,
            None => (2..=writes).map(|x| x as f64).product(),
        }
    }

    /// Orders locations `0..left`, the last one first (so that the first
    /// location varies fastest, as an odometer would), then judges. Each
    /// location gets every order ([`RfSearch::co_place`]) or, with a model
    /// blind to `co`, one per choice of last write ([`RfSearch::co_last_write`]).
    fn co_locations(
        &mut self,
        cs: &mut CoState,
        left: usize,
        j: &Judged<'_>,
    ) -> Result<(), CheckError> {
        if left == 0 {
            return self.judge_candidate(cs, j);
        }
        if self.co_last_only.is_some() {
            self.co_last_write(cs, left - 1, j)
        } else {
            self.co_place(cs, left - 1, 0, j)
        }
    }

    /// For a model blind to `co`: orders location `loc`'s writes once per
    /// choice of its last write when its final value is observed, else in
    /// the skeleton's order, then the locations before it. The edges are
    /// those of a total order, so the final state and any view of the
    /// candidate read as usual.
    fn co_last_write(
        &mut self,
        cs: &mut CoState,
        loc: usize,
        j: &Judged<'_>,
    ) -> Result<(), CheckError> {
        let len = cs.order[loc].len();
        if len == 0 {
            return self.co_locations(cs, loc, j);
        }
        let choices = self.co_orders(loc, len) as usize;
        // Weighted, each last write stands for the (len - 1)! orders of
        // the others before it.
        let outer = self.weight;
        if self.co_weighted {
            self.weight = (1..len as u64).fold(outer, u64::saturating_mul);
        }
        let mut r = Ok(());
        for i in 0..choices {
            if self.filter_done() {
                break;
            }
            self.pos.push((i as u32, choices as u32));
            cs.order[loc].swap(i, len - 1);
            set_chain(&mut cs.co, &cs.order[loc], true);
            r = self.co_locations(cs, loc, j);
            set_chain(&mut cs.co, &cs.order[loc], false);
            cs.order[loc].swap(i, len - 1);
            self.pos.pop();
            if r.is_err() {
                break;
            }
        }
        self.weight = outer;
        r
    }

    /// Places a write at position `k` of location `loc`'s order, trying the
    /// remaining writes in turn (the swap order of a permutation
    /// enumeration), cutting each prefix a pruning check rejects.
    fn co_place(
        &mut self,
        cs: &mut CoState,
        loc: usize,
        k: usize,
        j: &Judged<'_>,
    ) -> Result<(), CheckError> {
        let len = cs.order[loc].len();
        if k + 1 >= len {
            return self.co_locations(cs, loc, j);
        }
        for i in k..len {
            if self.filter_done() {
                break;
            }
            self.pos.push(((i - k) as u32, (len - k) as u32));
            cs.order[loc].swap(k, i);
            let e = cs.order[loc][k];
            for &b in &cs.order[loc][k + 1..] {
                cs.co.add(e, b);
            }
            let below = (1..len - k).map(|x| x as f64).product::<f64>() * self.co_below[loc];
            if !self.cut(&cs.co, j.bar, true, below)? {
                self.co_place(cs, loc, k + 1, j)?;
            }
            for &b in &cs.order[loc][k + 1..] {
                cs.co.remove(e, b);
            }
            cs.order[loc].swap(k, i);
            self.pos.pop();
        }
        Ok(())
    }

    /// A thin-air choice is counted for the warning only when the model's
    /// pruning checks do not already reject it: then the count does not
    /// depend on whether pruning is on (a node they accept has every
    /// ancestor accepted too, so the pruning search reaches it).
    fn count_thin_air(&mut self) {
        let (co, bar) = (self.base_co.clone(), Relation::new(self.skel.len()));
        if !self.partial_fails(&co, &bar, false) {
            self.res.cyclic += 1;
        }
    }

    /// Judges one complete candidate with the whole model.
    fn judge_candidate(&mut self, cs: &CoState, j: &Judged<'_>) -> Result<(), CheckError> {
        let skel = self.skel;
        let (co, bar, regs, vals) = (&cs.co, j.bar, j.regs, j.vals);
        self.tick()?;
        if self.pruner.enabled {
            self.work()?;
        }
        self.res.candidates += self.weight;
        if self.res.candidates > self.opts.max_candidates {
            return Err(over_budget(self.opts.max_candidates));
        }
        let rf = &self.rf;
        let chosen: Vec<&Vec<usize>> = cs.order.iter().collect();
        let (state, sat, interesting) = self.judge_state(regs, &chosen, vals);
        if let Some(skip) = &self.opts.skip
            && skip.skips(&state)
        {
            return Ok(());
        }
        let env = CandidateEnv::new(skel, rf, co, bar).lenient(self.opts.lenient);
        let explain_allowed =
            self.opts.why && interesting && !self.res.allowed_why.iter().any(|a| a.state == state);
        let outcome = if explain_allowed {
            let (outcome, named) = self
                .model
                .evaluate_named(&env, &|n| n.starts_with(WHY_PREFIX))?;
            if outcome.allowed
                && let Some(reasons) = why_reasons(&named)
            {
                self.res.allowed_why.push(AllowedWhy {
                    state: state.clone(),
                    reasons,
                    execution: view::view(skel, rf, co, vals, state.clone()),
                });
            }
            outcome
        } else {
            self.model.evaluate_cached(&env, &mut self.cache)?
        };
        if outcome.allowed {
            *self.res.states.entry(state.clone()).or_insert(0) += self.weight;
            self.res.count_allowed(sat, self.weight);
            self.res.flags.extend(outcome.flags.iter().cloned());
            if self.res.witnesses.len() < self.opts.keep_witnesses && interesting {
                self.res
                    .witnesses
                    .push(view::view(skel, rf, co, vals, state));
            }
        } else if self.opts.why
            && interesting
            && !self.res.states.contains_key(&state)
            && !self.forbidden.contains_key(&state)
            && let Some(failure) = self.model.evaluate_explain(&env)?.failure
        {
            let execution = view::view(skel, rf, co, vals, state.clone());
            self.forbidden.insert(
                state.clone(),
                Forbidden {
                    state,
                    failure,
                    execution,
                },
            );
        }
        Ok(())
    }

    /// The model builds `co` itself (`with co from ...`): the engine hands
    /// it an empty `co` and counts each accepted choice as one execution,
    /// its final memory values taken from the `co` the model chose.
    fn judge_model_co(
        &mut self,
        rf: &crate::rel::Relation,
        bar: &crate::rel::Relation,
        regs: &FinalRegs,
        vals: &[Option<Value>],
    ) -> Result<(), CheckError> {
        let skel = self.skel;
        let empty = crate::rel::Relation::new(skel.len());
        let env = CandidateEnv::new(skel, rf, &empty, bar).lenient(self.opts.lenient);
        let (accepted, rejected) = if self.opts.why {
            self.model.evaluate_all_explained(&env, &mut self.cache)?
        } else {
            (self.model.evaluate_all(&env, &mut self.cache)?, Vec::new())
        };
        self.res.candidates += accepted.len().max(1) as u64;
        if self.res.candidates > self.opts.max_candidates {
            return Err(over_budget(self.opts.max_candidates));
        }
        // The final state a `co` gives, whether it satisfies the condition,
        // and whether the condition asks about it.
        let state_of_co = |me: &Self, co: &crate::rel::Relation| {
            // Per location, its writes in the order `co` gives them.
            let orders: Vec<Vec<usize>> = skel
                .writes_by_loc
                .iter()
                .map(|ws| {
                    let mut o = ws.clone();
                    o.sort_by_key(|&w| ws.iter().filter(|&&v| co.contains(v, w)).count());
                    o
                })
                .collect();
            let chosen: Vec<&Vec<usize>> = orders.iter().collect();
            me.judge_state(regs, &chosen, vals)
        };
        // --why: each rejected choice explains its outcome (the first one
        // reaching it), unless some execution turns out to allow it.
        for (co, failure) in rejected {
            let (state, _, interesting) = state_of_co(self, &co);
            if interesting && !self.forbidden.contains_key(&state) {
                let execution = view::view(skel, rf, &co, vals, state.clone());
                self.forbidden.insert(
                    state.clone(),
                    Forbidden {
                        state,
                        failure,
                        execution,
                    },
                );
            }
        }
        for a in accepted {
            let co = a.co.unwrap_or_else(|| empty.clone());
            let (state, sat, interesting) = state_of_co(self, &co);
            if let Some(skip) = &self.opts.skip
                && skip.skips(&state)
            {
                continue;
            }
            *self.res.states.entry(state.clone()).or_insert(0) += 1;
            self.res.count_allowed(sat, 1);
            self.res.flags.extend(a.flags.iter().cloned());
            if self.res.witnesses.len() < self.opts.keep_witnesses && interesting {
                self.res
                    .witnesses
                    .push(view::view(skel, rf, &co, vals, state));
            }
        }
        Ok(())
    }

    /// With a [`StateFilter`] listing the only states wanted: whether every
    /// one of them has been found allowed, so that the search can stop.
    fn filter_done(&self) -> bool {
        self.opts
            .skip
            .as_ref()
            .is_some_and(|f| f.only && self.res.states.len() >= f.states.len())
    }

    /// With a [`StateFilter`] listing the only states wanted: whether some
    /// wanted state agrees with the registers the reads chosen so far
    /// already determine (true without such a filter).
    fn wanted_reachable(&self) -> bool {
        let Some(f) = self.opts.skip.as_ref().filter(|f| f.only) else {
            return true;
        };
        // Observed registers known now, as (position in the state, value).
        let mut known: Vec<(usize, Value)> = Vec::new();
        for (pos, term) in self.observed.iter().enumerate() {
            let Term::Reg { thread, reg } = term else {
                continue;
            };
            let Some(k) = f.positions.iter().position(|&p| p == pos) else {
                continue;
            };
            if let Some(sym) = self
                .skel
                .paths
                .get(*thread)
                .and_then(|p| p.regs.get(reg.as_str()))
                && let Eval::Known(v) = self.values.sym(*thread, sym, &mut Vec::new())
            {
                known.push((k, v));
            }
        }
        f.states
            .iter()
            .any(|s| known.iter().all(|&(k, v)| s[k] == v))
    }

    /// Whether every final state the current `rf` choice can end in is
    /// skipped ([`CheckOptions::skip`]), when each location `l` may end with
    /// the value of any write of `lasts[l]` (or its initial value when that
    /// is empty): then no candidate below needs judging. The registers are
    /// fixed by `rf`.
    fn all_states_skipped(
        &self,
        regs: &FinalRegs,
        vals: &[Option<Value>],
        lasts: &[&[usize]],
    ) -> bool {
        /// Beyond this many combinations of last writes, judge as usual.
        const MAX_COMBINATIONS: usize = 64;
        let Some(skip) = &self.opts.skip else {
            return false;
        };
        let combos = lasts
            .iter()
            .try_fold(1usize, |n, w| n.checked_mul(w.len().max(1)))
            .unwrap_or(usize::MAX);
        if combos > MAX_COMBINATIONS {
            return false;
        }
        // `pick[l]`: which write of `lasts[l]` is taken as last (none when
        // `lasts[l]` is empty).
        let mut pick = vec![0usize; lasts.len()];
        loop {
            let last: Vec<Vec<usize>> = lasts
                .iter()
                .zip(&pick)
                .map(|(w, &i)| w.get(i).copied().into_iter().collect())
                .collect();
            let orders: Vec<&Vec<usize>> = last.iter().collect();
            if !skip.skips(&self.final_state(regs, &orders, vals)) {
                return false;
            }
            if !next_choice(&mut pick, |l| lasts[l].len().max(1)) {
                return true;
            }
        }
    }

    /// The final values of the observed registers ([`FinalRegs`]).
    fn final_registers(&self) -> FinalRegs {
        self.observed
            .iter()
            .map(|term| {
                let Term::Reg { thread, reg } = term else {
                    return Value::Int(0);
                };
                let v =
                    match self
                        .skel
                        .paths
                        .get(*thread)
                        .and_then(|p| p.regs.get(reg.as_str()))
                    {
                        None => self.skel.test.threads.get(*thread).and_then(|t| {
                            t.reg_init.iter().find(|(r, _)| r == reg).map(|(_, v)| *v)
                        }),
                        Some(sym) => match self.values.sym(*thread, sym, &mut Vec::new()) {
                            Eval::Known(v) => Some(v),
                            _ => None,
                        },
                    };
                v.unwrap_or(Value::Int(0))
            })
            .collect()
    }

    /// The final state of a candidate (per location, its writes in `co`
    /// order), whether it satisfies the condition, and whether the
    /// condition asks about it (a witness for `exists`, a counter-example
    /// for `forall`).
    fn judge_state(
        &self,
        regs: &FinalRegs,
        orders: &[&Vec<usize>],
        vals: &[Option<Value>],
    ) -> (Vec<Value>, bool, bool) {
        let state = self.final_state(regs, orders, vals);
        let sat = eval_prop(
            &self.skel.test.condition.prop,
            &state_lookup(self.observed, &state),
        );
        let interesting = match self.skel.test.condition.quantifier {
            Quantifier::Forall => !sat,
            _ => sat,
        };
        (state, sat, interesting)
    }

    fn final_state(
        &self,
        regs: &FinalRegs,
        orders: &[&Vec<usize>],
        vals: &[Option<Value>],
    ) -> Vec<Value> {
        self.observed
            .iter()
            .zip(regs)
            .map(|(t, &r)| match t {
                Term::Reg { .. } => r,
                Term::Loc(l) => {
                    let p = self.skel.test.physical(*l);
                    match orders[p].last() {
                        Some(&w) => vals[w].unwrap_or(Value::Int(0)),
                        None => self.skel.test.locations[p].init,
                    }
                }
                Term::Const(v) => *v,
            })
            .collect()
    }
}
