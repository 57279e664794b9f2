//! The machine's transitions: instructions (Table 1), environment steps
//! (Table 2), locks and completion, and the `Machine` implementation.

use super::encode::{Keep, encode, live_sets, op_regs};
use super::render::value_text;
use super::*;

impl RspCache {
    /// Builds the machine for `test` (an `RSP` assembly test). Errors name
    /// what the machine cannot run and, for an instruction, where it is.
    pub fn new(test: &Test, opts: RspOptions) -> Result<Self, Diagnostic> {
        let file = test.source_name();
        let at = |pos: Pos, m: String| Diagnostic::new(&file, pos, m);
        let err = |m: String| at(Pos::default(), m);
        if test.has_aliases() {
            return Err(err("rsp-cache: location aliases are not supported".into()));
        }
        if test.locations.len() > MAX_LOCATIONS {
            return Err(err(format!(
                "rsp-cache: the test has {} locations, at most {MAX_LOCATIONS} are supported",
                test.locations.len()
            )));
        }
        if test.threads.len() > MAX_THREADS {
            return Err(err(format!(
                "rsp-cache: the test has {} threads, at most {MAX_THREADS} are supported",
                test.threads.len()
            )));
        }
        // Devices and work-groups, numbered densely in order of appearance.
        let mut devs: Vec<u32> = Vec::new();
        let mut wgs: Vec<(usize, Option<u32>, usize)> = Vec::new(); // (dev, wg id, thread if unplaced)
        let mut threads = Vec::new();
        let mut reg_init = Vec::new();
        for (ti, th) in test.threads.iter().enumerate() {
            let level = |l: &str| th.placement.iter().find(|s| s.level == l).map(|s| s.id);
            let dv = level("dev").unwrap_or(0);
            let d = match devs.iter().position(|&x| x == dv) {
                Some(d) => d,
                None => {
                    devs.push(dv);
                    devs.len() - 1
                }
            };
            let wid = level("wg");
            let key = (d, wid, if wid.is_none() { ti } else { usize::MAX });
            let w = match wgs.iter().position(|k| *k == key) {
                Some(w) => w,
                None => {
                    wgs.push(key);
                    wgs.len() - 1
                }
            };
            let mut labels = HashMap::new();
            for (i, ins) in th.code.iter().enumerate() {
                if let crate::ir::InstrKind::Label(l) = &ins.kind {
                    labels.insert(l.clone(), i);
                }
            }
            let mut code = Vec::new();
            let mut text = Vec::new();
            for ins in &th.code {
                let op = decode(ins, test, &|l| labels.get(l).copied())
                    .map_err(|m| at(ins.pos, format!("P{}: {m}", th.id)))?;
                code.push(op);
                text.push(ins.text.clone());
            }
            if code.len() >= u16::MAX as usize {
                return Err(err(format!("rsp-cache: thread P{} is too long", th.id)));
            }
            let mut regs: Vec<Reg> = Vec::new();
            let mut add = |r: &Reg| {
                if !regs.contains(r) {
                    regs.push(r.clone());
                }
            };
            for (r, _) in &th.reg_init {
                add(r);
            }
            for op in &code {
                for r in op_regs(op) {
                    add(r);
                }
            }
            for t in observed_terms(test) {
                if let Term::Reg { thread, reg } = &t
                    && *thread == th.id
                {
                    add(reg);
                }
            }
            let init: Vec<Value> = regs
                .iter()
                .map(|r| {
                    th.reg_init
                        .iter()
                        .find(|(n, _)| n == r)
                        .map(|(_, v)| *v)
                        .unwrap_or(Value::Int(0))
                })
                .collect();
            reg_init.push(init);
            let live = live_sets(&code, false);
            let live_l1 = live_sets(&code, true);
            threads.push(ThreadInfo {
                id: th.id,
                dev: d,
                wg: w,
                code,
                text,
                regs,
                live,
                live_l1,
            });
        }
        let wg_dev = wgs.iter().map(|k| k.0).collect();
        let observed = observed_terms(test)
            .into_iter()
            .map(|t| match t {
                Term::Reg { thread, reg } => {
                    let ti = threads.iter().position(|x| x.id == thread).ok_or_else(|| {
                        err(format!(
                            "the condition names thread {thread}, which does not exist"
                        ))
                    })?;
                    let ri = threads[ti].regs.iter().position(|r| *r == reg).unwrap_or(0);
                    Ok(Observed::Reg(ti, ri))
                }
                Term::Loc(l) => Ok(Observed::Loc(test.physical(l))),
                Term::Const(v) => Ok(Observed::Const(v)),
            })
            .collect::<Result<Vec<_>, Diagnostic>>()?;
        let has = |f: &dyn Fn(&Op) -> bool| threads.iter().any(|t| t.code.iter().any(f));
        let has_flu_l1 = has(&|o| matches!(o, Op::FluL1(_)));
        let has_flu_l2 = has(&|o| matches!(o, Op::FluL2(_)));
        let name = match (opts.l2_locking, opts.reduce) {
            (true, true) => "rsp-cache",
            (false, true) => "rsp-cache-nolock",
            (true, false) => "rsp-cache-unreduced",
            (false, false) => "rsp-cache-nolock-unreduced",
        };
        Ok(RspCache {
            name: name.to_string(),
            opts,
            locs: test.locations.iter().map(|l| l.name.clone()).collect(),
            init: test.locations.iter().map(|l| l.init).collect(),
            threads,
            wg_dev,
            devices: devs.len().max(1),
            reg_init,
            observed,
            has_flu_l1,
            has_flu_l2,
        })
    }

    /// The threads as the machine sees them.
    pub fn threads(&self) -> &[ThreadInfo] {
        &self.threads
    }

    /// The options the machine runs with.
    pub fn options(&self) -> &RspOptions {
        &self.opts
    }

    pub(super) fn n(&self) -> usize {
        self.locs.len()
    }

    fn wgs(&self) -> usize {
        self.wg_dev.len()
    }

    fn done(&self, s: &State, t: usize) -> bool {
        s.pc[t] as usize >= self.threads[t].code.len()
    }

    fn all_done(&self, s: &State) -> bool {
        (0..self.threads.len()).all(|t| self.done(s, t))
    }

    fn complete(&self, s: &State) -> bool {
        !s.cut
            && self.all_done(s)
            && s.l1
                .iter()
                .chain(&s.l2)
                .all(|c| c.entries.iter().all(|e| e.is_none_or(|e| !e.dirty)))
    }

    /// `ready_t(l)`.
    fn ready(l: Option<u8>, t: usize) -> bool {
        l.is_none_or(|h| h as usize == t)
    }

    fn lock(&self, s: &State, d: usize, x: usize) -> Option<u8> {
        if self.opts.l2_locking {
            s.lockfile[d * self.n() + x]
        } else {
            None
        }
    }

    /// `unflushed_t(Σ)`: a flush marker of `t` is still in some fifo.
    fn unflushed(&self, s: &State, t: usize) -> bool {
        let t = t as u16;
        s.l1.iter().chain(&s.l2).any(|c| c.has_marker(t))
    }

    /// Locations some thread of work-group `w` (`Some`) or device `d` may
    /// still access.
    fn live_in(&self, s: &State, pick: impl Fn(&ThreadInfo) -> bool) -> u64 {
        let mut m = 0;
        for (t, th) in self.threads.iter().enumerate() {
            if pick(th) {
                m |= th.live[(s.pc[t] as usize).min(th.code.len())];
            }
        }
        m
    }

    /// Locations some thread of work-group `w` may still read from its L1
    /// before invalidating it (`live_l1`).
    fn live_l1(&self, s: &State, w: usize) -> u64 {
        let mut m = 0;
        for (t, th) in self.threads.iter().enumerate() {
            if th.wg == w {
                m |= th.live_l1[(s.pc[t] as usize).min(th.code.len())];
            }
        }
        m
    }

    fn val(&self, s: &State, t: usize, o: &Operand) -> Value {
        match o {
            Operand::Imm(v) => *v,
            Operand::Reg(r) => self.threads[t]
                .regs
                .iter()
                .position(|x| x == r)
                .map(|i| s.regs[t][i])
                .unwrap_or(Value::Int(0)),
        }
    }

    fn set_reg(&self, s: &mut State, t: usize, r: &Reg, v: Value) {
        if let Some(i) = self.threads[t].regs.iter().position(|x| x == r) {
            s.regs[t][i] = v;
        }
    }

    /// Whether thread `t`'s next instruction blocks (or the thread is
    /// done): exactly the conditions under which [`Self::exec`] returns
    /// `Ok(None)`, decided without building the successor.
    fn exec_blocked(&self, s: &State, t: usize) -> bool {
        let th = &self.threads[t];
        let Some(op) = th.code.get(s.pc[t] as usize) else {
            return true;
        };
        if !op.is_local() && self.unflushed(s, t) {
            return true;
        }
        let (d, w) = (th.dev, th.wg);
        match op {
            Op::Ld { loc, .. } => s.l1[w].valid_val(*loc).is_none(),
            Op::Inc { level, loc, .. } => {
                !Self::ready(s.rmw[w], t)
                    || match level {
                        Level::L1 => s.l1[w].valid_val(*loc).is_none(),
                        Level::L2 => {
                            !s.l1[w].not_dirty(*loc)
                                || !Self::ready(self.lock(s, d, *loc), t)
                                || s.l2[d].valid_val(*loc).is_none()
                        }
                    }
            }
            Op::LkL2(x) => self.opts.l2_locking && !Self::ready(s.lockfile[d * self.n() + x], t),
            Op::LkRmw(sc) => {
                (0..self.wgs()).any(|w2| self.in_scope(*sc, d, w, w2) && !Self::ready(s.rmw[w2], t))
            }
            _ => false,
        }
    }

    /// Runs thread `t`'s next instruction; `Ok(None)` when it blocks.
    fn exec(&self, s: &State, t: usize) -> Result<Option<State>, MachineError> {
        if self.exec_blocked(s, t) {
            return Ok(None);
        }
        let th = &self.threads[t];
        let pc = s.pc[t] as usize;
        let Some(op) = th.code.get(pc) else {
            return Ok(None);
        };
        let (d, w) = (th.dev, th.wg);
        let n = self.n();
        let mut ns = s.clone();
        let mut next = pc + 1;
        let me = t as u8;
        match op {
            Op::Ld { reg, loc } => {
                let Some(v) = s.l1[w].valid_val(*loc) else {
                    return Ok(None);
                };
                self.set_reg(&mut ns, t, reg, v);
            }
            Op::St { val, loc } => {
                let v = self.val(s, t, val);
                ns.l1[w].store(*loc, v);
            }
            Op::Inc {
                level,
                reg,
                loc,
                by,
            } => {
                if !Self::ready(s.rmw[w], t) {
                    return Ok(None);
                }
                let x = *loc;
                let by = self.val(s, t, by);
                match level {
                    Level::L1 => {
                        let Some(v) = s.l1[w].valid_val(x) else {
                            return Ok(None);
                        };
                        self.set_reg(&mut ns, t, reg, v);
                        let nv = BinOp::Add.apply(v, by).map_err(MachineError)?;
                        ns.l1[w].store(x, nv);
                    }
                    Level::L2 => {
                        if !s.l1[w].not_dirty(x) || !Self::ready(self.lock(s, d, x), t) {
                            return Ok(None);
                        }
                        let Some(v) = s.l2[d].valid_val(x) else {
                            return Ok(None);
                        };
                        ns.l1[w].invalidate(x);
                        for c in &mut ns.l2 {
                            c.invalidate(x);
                        }
                        self.set_reg(&mut ns, t, reg, v);
                        let nv = BinOp::Add.apply(v, by).map_err(MachineError)?;
                        ns.l2[d].store(x, nv);
                    }
                }
            }
            Op::FluL1(sc) => {
                for w2 in 0..self.wgs() {
                    if self.in_scope(*sc, d, w, w2) {
                        ns.l1[w2].fifo.push_back(FifoEl::Flush(t as u16));
                    }
                }
            }
            Op::FluL2(sc) => {
                for d2 in 0..self.devices {
                    if *sc == Scope::Sy || d2 == d {
                        ns.l2[d2].fifo.push_back(FifoEl::Flush(t as u16));
                    }
                }
            }
            Op::InvL1(sc) => {
                for w2 in 0..self.wgs() {
                    if self.in_scope(*sc, d, w, w2) {
                        for x in 0..n {
                            ns.l1[w2].invalidate(x);
                        }
                    }
                }
            }
            Op::LkL2(x) => {
                if self.opts.l2_locking {
                    if !Self::ready(s.lockfile[d * n + x], t) {
                        return Ok(None);
                    }
                    ns.lockfile[d * n + x] = Some(me);
                }
            }
            Op::UlL2(x) => {
                if self.opts.l2_locking {
                    ns.lockfile[d * n + x] = None;
                }
            }
            Op::LkRmw(sc) => {
                let ws: Vec<usize> = (0..self.wgs())
                    .filter(|&w2| self.in_scope(*sc, d, w, w2))
                    .collect();
                if ws.iter().any(|&w2| !Self::ready(s.rmw[w2], t)) {
                    return Ok(None);
                }
                for w2 in ws {
                    ns.rmw[w2] = Some(me);
                }
            }
            Op::UlRmw(sc) => {
                for w2 in 0..self.wgs() {
                    if self.in_scope(*sc, d, w, w2) {
                        ns.rmw[w2] = None;
                    }
                }
            }
            Op::Mov { reg, val } => {
                let v = self.val(s, t, val);
                self.set_reg(&mut ns, t, reg, v);
            }
            Op::Arith { reg, op, a, b } => {
                let v = op
                    .apply(self.val(s, t, a), self.val(s, t, b))
                    .map_err(|m| MachineError(format!("P{}: {m}", th.id)))?;
                self.set_reg(&mut ns, t, reg, v);
            }
            Op::Branch { cmp, a, b, target } => {
                if cmp.eval(self.val(s, t, a), self.val(s, t, b)) {
                    next = *target;
                }
            }
            Op::Goto(target) => next = *target,
            Op::Nop => {}
        }
        if next <= pc {
            ns.jumps[t] += 1;
            if ns.jumps[t] as u32 > self.opts.unroll {
                ns.cut = true;
            }
        }
        ns.pc[t] = next as u16;
        Ok(Some(ns))
    }

    /// Some thread waits for a lock held by a finished thread that no
    /// running thread can release any more: it never completes, so the
    /// state is dead (the explorer counts it as stuck).
    fn deadlocked(&self, s: &State) -> bool {
        let finished = |h: Option<u8>| h.is_some_and(|h| self.done(s, h as usize));
        let may_unlock = |f: &dyn Fn(&Op, usize) -> bool| {
            self.threads
                .iter()
                .enumerate()
                .any(|(t, th)| th.code.iter().skip(s.pc[t] as usize).any(|op| f(op, t)))
        };
        self.threads.iter().enumerate().any(|(t, th)| {
            let Some(op) = th.code.get(s.pc[t] as usize) else {
                return false;
            };
            let (d, w) = (th.dev, th.wg);
            match op {
                Op::Inc { level, loc, .. } => {
                    let rmw_dead =
                        finished(s.rmw[w]) && !may_unlock(&|o, _| matches!(o, Op::UlRmw(_)));
                    let l2_dead = *level == Level::L2
                        && finished(self.lock(s, d, *loc))
                        && !may_unlock(&|o, u| {
                            matches!(o, Op::UlL2(y) if y == loc) && self.threads[u].dev == d
                        });
                    rmw_dead || l2_dead
                }
                Op::LkRmw(sc) => {
                    (0..self.wgs()).any(|w2| self.in_scope(*sc, d, w, w2) && finished(s.rmw[w2]))
                        && !may_unlock(&|o, _| matches!(o, Op::UlRmw(_)))
                }
                Op::LkL2(x) => {
                    finished(self.lock(s, d, *x))
                        && !may_unlock(&|o, u| {
                            matches!(o, Op::UlL2(y) if y == x) && self.threads[u].dev == d
                        })
                }
                _ => false,
            }
        })
    }

    /// Work-group `w2` is within scope `sc` of a thread in work-group `w`
    /// of device `d`.
    fn in_scope(&self, sc: Scope, d: usize, w: usize, w2: usize) -> bool {
        match sc {
            Scope::Wg => w2 == w,
            Scope::Dv => self.wg_dev[w2] == d,
            Scope::Sy => true,
        }
    }

    /// The first thread that can trigger an environment transition on a
    /// cache of work-group `w` (L1) or device `d` (L2) touching location
    /// `x` under the lock file (`None` when every such thread is locked
    /// out). Without `x` the lock file does not matter.
    fn trigger(&self, s: &State, l1: bool, cache: usize, x: Option<usize>) -> Option<usize> {
        self.threads.iter().enumerate().find_map(|(t, th)| {
            let mine = if l1 { th.wg == cache } else { th.dev == cache };
            let ok = match x {
                Some(x) => Self::ready(self.lock(s, th.dev, x), t),
                None => true,
            };
            (mine && ok).then_some(t)
        })
    }

    /// Whether an environment transition's precondition holds and it
    /// changes the state: exactly when [`Self::env`] returns `Some`,
    /// decided without building the successor.
    fn env_enabled(&self, s: &State, env: Env, cache: usize, x: usize, by: usize) -> bool {
        let ready = |d: usize| Self::ready(self.lock(s, d, x), by);
        let clean_fetch = |v: Value| {
            Some(Entry {
                val: v,
                dirty: false,
                valid: true,
            })
        };
        match env {
            Env::EvictL1 => s.l1[cache].entries[x].is_some_and(|e| !e.dirty),
            Env::EvictL2 => s.l2[cache].entries[x].is_some_and(|e| !e.dirty) && ready(cache),
            Env::FlushL1 => {
                s.l1[cache].entries[x].is_some_and(|e| e.dirty) && ready(self.wg_dev[cache])
            }
            Env::FlushL2 => s.l2[cache].entries[x].is_some_and(|e| e.dirty) && ready(cache),
            Env::FetchL1 => {
                let d = self.wg_dev[cache];
                s.l2[d].valid_val(x).is_some_and(|v| {
                    s.l1[cache].not_dirty(x) && ready(d) && s.l1[cache].entries[x] != clean_fetch(v)
                })
            }
            Env::FetchL2 => {
                s.l2[cache].not_dirty(x)
                    && ready(cache)
                    && s.l2[cache].entries[x] != clean_fetch(s.gl[x])
            }
            Env::DeqLocL1 | Env::DeqLocL2 => {
                let c = if env.is_l1() {
                    &s.l1[cache]
                } else {
                    &s.l2[cache]
                };
                matches!(c.fifo.front(), Some(FifoEl::Loc(y)) if c.not_dirty(*y as usize))
            }
            Env::DeqMarkerL1 | Env::DeqMarkerL2 => {
                let c = if env.is_l1() {
                    &s.l1[cache]
                } else {
                    &s.l2[cache]
                };
                matches!(c.fifo.front(), Some(FifoEl::Flush(_)))
            }
        }
    }

    /// Applies an environment transition; `None` when its precondition
    /// does not hold (or it would not change the state).
    fn env(&self, s: &State, env: Env, cache: usize, x: usize, by: usize) -> Option<State> {
        if !self.env_enabled(s, env, cache, x, by) {
            return None;
        }
        let n = self.n();
        let mut ns = s.clone();
        let ready = |d: usize| Self::ready(self.lock(s, d, x), by);
        match env {
            Env::EvictL1 => {
                let e = s.l1[cache].entries[x]?;
                if e.dirty {
                    return None;
                }
                ns.l1[cache].entries[x] = None;
            }
            Env::EvictL2 => {
                let e = s.l2[cache].entries[x]?;
                if e.dirty || !ready(cache) {
                    return None;
                }
                ns.l2[cache].entries[x] = None;
            }
            Env::FlushL1 => {
                let d = self.wg_dev[cache];
                let e = s.l1[cache].entries[x]?;
                if !e.dirty || !ready(d) {
                    return None;
                }
                for c in &mut ns.l2 {
                    c.invalidate(x);
                }
                ns.l2[d].store(x, e.val);
                if let Some(e) = &mut ns.l1[cache].entries[x] {
                    e.dirty = false;
                }
            }
            Env::FlushL2 => {
                let e = s.l2[cache].entries[x]?;
                if !e.dirty || !ready(cache) {
                    return None;
                }
                ns.gl[x] = e.val;
                if let Some(e) = &mut ns.l2[cache].entries[x] {
                    e.dirty = false;
                }
            }
            Env::FetchL1 => {
                let d = self.wg_dev[cache];
                let v = s.l2[d].valid_val(x)?;
                if !s.l1[cache].not_dirty(x) || !ready(d) {
                    return None;
                }
                ns.l1[cache].entries[x] = Some(Entry {
                    val: v,
                    dirty: false,
                    valid: true,
                });
            }
            Env::FetchL2 => {
                if !s.l2[cache].not_dirty(x) || !ready(cache) {
                    return None;
                }
                ns.l2[cache].entries[x] = Some(Entry {
                    val: s.gl[x],
                    dirty: false,
                    valid: true,
                });
            }
            Env::DeqLocL1 | Env::DeqLocL2 => {
                let c = if env.is_l1() {
                    &mut ns.l1[cache]
                } else {
                    &mut ns.l2[cache]
                };
                match c.fifo.front() {
                    Some(FifoEl::Loc(y)) if c.not_dirty(*y as usize) => {
                        c.fifo.pop_front();
                    }
                    _ => return None,
                }
            }
            Env::DeqMarkerL1 | Env::DeqMarkerL2 => {
                let c = if env.is_l1() {
                    &mut ns.l1[cache]
                } else {
                    &mut ns.l2[cache]
                };
                match c.fifo.front() {
                    Some(FifoEl::Flush(_)) => {
                        c.fifo.pop_front();
                    }
                    _ => return None,
                }
            }
        }
        let _ = n;
        (ns != *s).then_some(ns)
    }

    /// Every environment transition enabled in `s` (each with one trigger).
    fn env_steps(&self, s: &State, out: &mut Vec<Step>) {
        let n = self.n();
        let push = |env: Env, cache: usize, x: usize, out: &mut Vec<Step>| {
            let locked = !matches!(
                env,
                Env::EvictL1 | Env::DeqLocL1 | Env::DeqLocL2 | Env::DeqMarkerL1 | Env::DeqMarkerL2
            );
            let Some(by) = self.trigger(s, env.is_l1(), cache, locked.then_some(x)) else {
                return;
            };
            if self.env_enabled(s, env, cache, x, by) {
                debug_assert!(self.env(s, env, cache, x, by).is_some());
                out.push(Step::Env {
                    env,
                    cache,
                    loc: x,
                    by,
                });
            }
        };
        for w in 0..self.wgs() {
            push(Env::DeqLocL1, w, 0, out);
            push(Env::DeqMarkerL1, w, 0, out);
            for x in 0..n {
                for env in [Env::FlushL1, Env::FetchL1, Env::EvictL1] {
                    push(env, w, x, out);
                }
            }
        }
        for d in 0..self.devices {
            push(Env::DeqLocL2, d, 0, out);
            push(Env::DeqMarkerL2, d, 0, out);
            for x in 0..n {
                for env in [Env::FlushL2, Env::FetchL2, Env::EvictL2] {
                    push(env, d, x, out);
                }
            }
        }
    }
}

impl Machine for RspCache {
    type State = State;
    type Key = Vec<u8>;
    type Transition = Step;

    fn name(&self) -> &str {
        &self.name
    }

    fn initial(&self) -> State {
        let n = self.n();
        let t = self.threads.len();
        State {
            gl: self.init.clone(),
            l2: vec![Cache::new(n); self.devices],
            lockfile: vec![None; self.devices * n],
            l1: vec![Cache::new(n); self.wgs()],
            rmw: vec![None; self.wgs()],
            pc: vec![0; t],
            jumps: vec![0; t],
            regs: self.reg_init.clone(),
            cut: false,
        }
    }

    fn enabled(&self, s: &State) -> Vec<Step> {
        if s.cut || self.complete(s) || self.deadlocked(s) {
            return Vec::new();
        }
        let mut out = Vec::new();
        for t in 0..self.threads.len() {
            if !self.exec_blocked(s, t) {
                out.push(Step::Exec(t));
            }
        }
        self.env_steps(s, &mut out);
        out
    }

    fn apply(&self, s: &State, step: &Step) -> Result<State, MachineError> {
        match *step {
            Step::Exec(t) => self
                .exec(s, t)?
                .ok_or_else(|| MachineError(format!("P{} is blocked", self.threads[t].id))),
            Step::Env {
                env,
                cache,
                loc,
                by,
            } => self
                .env(s, env, cache, loc, by)
                .ok_or_else(|| MachineError(format!("{} is not enabled", env.name()))),
        }
    }

    fn outcome(&self, s: &State) -> Option<Vec<Value>> {
        if !self.complete(s) {
            return None;
        }
        Some(
            self.observed
                .iter()
                .map(|o| match o {
                    Observed::Reg(t, r) => s.regs[*t].get(*r).copied().unwrap_or(Value::Int(0)),
                    Observed::Loc(x) => s.gl[*x],
                    Observed::Const(v) => *v,
                })
                .collect(),
        )
    }

    fn canonical(&self, s: &State) -> Vec<u8> {
        if !self.opts.reduce {
            return encode(s, &Keep::all(s));
        }
        // Clean entries of locations no thread of the cache will access
        // again are irrelevant (docs/rsp-cache.md, "dead entries"); fifos
        // matter only with flush markers in the program.
        let keep = Keep {
            l1_live: (0..self.wgs()).map(|w| self.live_l1(s, w)).collect(),
            l2_live: (0..self.devices)
                .map(|d| self.live_in(s, |th| th.dev == d))
                .collect(),
            l1_fifo: self.has_flu_l1,
            l2_fifo: self.has_flu_l2,
        };
        encode(s, &keep)
    }

    fn label(&self, s: &State, step: &Step) -> String {
        match *step {
            Step::Exec(t) => {
                let th = &self.threads[t];
                let text = th
                    .text
                    .get(s.pc[t] as usize)
                    .map(String::as_str)
                    .unwrap_or("(done)");
                format!("P{}: {text}", th.id)
            }
            Step::Env {
                env,
                cache,
                loc,
                by,
            } => {
                let who = format!("P{}", self.threads[by].id);
                let x = &self.locs[loc];
                let place = if env.is_l1() {
                    format!("wg{cache}")
                } else {
                    format!("dev{cache}")
                };
                match env {
                    Env::FlushL1 => {
                        let v = s.l1[cache].entries[loc].map(|e| e.val);
                        format!(
                            "{who}: {}({x}, {}) [{place}]",
                            env.name(),
                            v.map(|v| value_text(v, &self.locs)).unwrap_or_default()
                        )
                    }
                    Env::FlushL2 => {
                        let v = s.l2[cache].entries[loc].map(|e| e.val);
                        format!(
                            "{who}: {}({x}, {}) [{place}]",
                            env.name(),
                            v.map(|v| value_text(v, &self.locs)).unwrap_or_default()
                        )
                    }
                    Env::FetchL1 => {
                        let v = s.l2[self.wg_dev[cache]].entries[loc].map(|e| e.val);
                        format!(
                            "{who}: {}({x}, {}) [{place}]",
                            env.name(),
                            v.map(|v| value_text(v, &self.locs)).unwrap_or_default()
                        )
                    }
                    Env::FetchL2 => format!(
                        "{who}: {}({x}, {}) [{place}]",
                        env.name(),
                        value_text(s.gl[loc], &self.locs)
                    ),
                    Env::EvictL1 | Env::EvictL2 => format!("{who}: {}({x}) [{place}]", env.name()),
                    Env::DeqLocL1 | Env::DeqLocL2 => {
                        let c = if env.is_l1() {
                            &s.l1[cache]
                        } else {
                            &s.l2[cache]
                        };
                        let y = match c.fifo.front() {
                            Some(FifoEl::Loc(y)) => self.locs[*y as usize].clone(),
                            _ => String::new(),
                        };
                        format!("{who}: {}({y}) [{place}]", env.name())
                    }
                    Env::DeqMarkerL1 | Env::DeqMarkerL2 => {
                        format!("{who}: {} [{place}]", env.name())
                    }
                }
            }
        }
    }

    fn reduce(&self, s: &State, enabled: &[Step]) -> Option<Vec<usize>> {
        if !self.opts.reduce {
            return None;
        }
        // R1: a register-only instruction commutes with everything.
        if let Some(i) = enabled.iter().position(|st| {
            matches!(st, Step::Exec(t) if self.threads[*t].code.get(s.pc[*t] as usize).is_some_and(Op::is_local))
        }) {
            return Some(vec![i]);
        }
        // Fifos matter only to flush markers: without FLU_L1 (FLU_L2) in
        // the program the L1 (L2) fifos are left out of the key and their
        // dequeues out of the exploration.
        let relevant_deq = |st: &Step| match st {
            Step::Env {
                env: Env::DeqLocL1 | Env::DeqMarkerL1,
                ..
            } => Some(self.has_flu_l1),
            Step::Env {
                env: Env::DeqLocL2 | Env::DeqMarkerL2,
                ..
            } => Some(self.has_flu_l2),
            _ => None,
        };
        // R2: draining a fifo early never loses an outcome.
        if let Some(i) = enabled.iter().position(|st| relevant_deq(st) == Some(true)) {
            return Some(vec![i]);
        }
        // R6: with one device, writing a dirty L2 entry back to memory
        // early never loses an outcome (memory under a dirty L2 entry is
        // read by nothing).
        if self.devices == 1
            && let Some(i) = enabled.iter().position(|st| {
                matches!(
                    st,
                    Step::Env {
                        env: Env::FlushL2,
                        ..
                    }
                )
            })
        {
            return Some(vec![i]);
        }
        let all_done = self.all_done(s);
        let keep: Vec<usize> = enabled
            .iter()
            .enumerate()
            .filter(|(_, st)| match st {
                Step::Exec(_) => true,
                _ if relevant_deq(st) == Some(false) => false,
                Step::Env {
                    env, cache, loc, ..
                } => match env {
                    // R3: evictions only disable loads.
                    Env::EvictL1 | Env::EvictL2 => false,
                    // R4: once every thread is done only flushes matter.
                    Env::FlushL1 | Env::FlushL2 => true,
                    _ if all_done => false,
                    // R5: fetching a location no thread of the cache will
                    // access again is useless.
                    Env::FetchL1 => self.live_l1(s, *cache) & (1 << loc) != 0,
                    Env::FetchL2 => self.live_in(s, |th| th.dev == *cache) & (1 << loc) != 0,
                    _ => true,
                },
            })
            .map(|(i, _)| i)
            .collect();
        (!keep.is_empty() && keep.len() < enabled.len()).then_some(keep)
    }

    fn view(&self, s: &State) -> StateView {
        let mut v = StateView {
            summary: self.snapshot(s),
            ..Default::default()
        };
        for (t, th) in self.threads.iter().enumerate() {
            let next = th
                .text
                .get(s.pc[t] as usize)
                .cloned()
                .unwrap_or_else(|| "(done)".into());
            let regs: Vec<String> = th
                .regs
                .iter()
                .zip(&s.regs[t])
                .map(|(r, v)| format!("{r}={}", value_text(*v, &self.locs)))
                .collect();
            v.threads.push(ThreadView {
                name: format!("P{}", th.id),
                arch: "RSP".into(),
                info: vec![
                    format!("dev {} wg {}", th.dev, th.wg),
                    format!("next: {next}"),
                    format!("registers: {}", regs.join(" ")),
                ],
                items: th
                    .text
                    .iter()
                    .enumerate()
                    .map(|(i, text)| ItemView {
                        id: format!("{i}"),
                        text: text.clone(),
                        detail: if i < s.pc[t] as usize {
                            "done".into()
                        } else {
                            String::new()
                        },
                    })
                    .collect(),
            });
        }
        if let Some(o) = self.outcome(s) {
            v.outcome = Some(o.iter().map(|x| value_text(*x, &self.locs)).collect());
        }
        v
    }
}
