//! One thread's pomsets: its control paths with a value per read (each a
//! top-level pomset candidate of the thread, every event present), and for
//! each write and fence the ⊆-minimal sets of earlier reads it must depend
//! on for its precondition to be a tautology (Fig. 1, s3b with ↓e).
//!
//! Validity is decided by running the thread again under every assignment
//! the predicate transformers allow (docs/pomsets.md, "Deciding
//! preconditions"): a read in D is pinned to its value (R4a), a read outside
//! D takes its value or the thread's own view of memory (R4b, with w4's
//! substitution and the initial writes), an atomic's read outside D and a
//! read the run meets off the path are free over the test's values (R4d,
//! R4c). The precondition holds when every such run reaches the event
//! (IF's φ conjunct) and computes its value (w3).

use super::program::{AtomOp, Mode, Op, Opnd, Scope, ThreadProg};

/// Event kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    R,
    W,
    F,
}

/// An event of a thread path.
#[derive(Clone, Debug)]
pub struct PathEv {
    /// Instruction index and how many times it ran before on the path
    /// (an event's identity across runs).
    pub instr: usize,
    pub occ: u16,
    pub kind: Kind,
    pub loc: Option<usize>,
    pub val: i64,
    pub mode: Mode,
    pub scope: Scope,
    /// For an atomic's write: the path index of its read (the rmw pair).
    pub rmw_read: Option<usize>,
    /// Whether this read is an atomic's read (READ', R4d).
    pub atomic: bool,
    /// For an atomic add's write: how many adds on its location its value
    /// went through (the read value's count plus one); 0 otherwise.
    pub adds: u32,
}

/// One path of a thread with a value per read.
#[derive(Clone, Debug)]
pub struct Path {
    pub events: Vec<PathEv>,
    /// Final register values.
    pub regs: Vec<i64>,
    /// Per event: the ⊆-minimal dependency sets (path indices of earlier
    /// reads); one empty set for reads.
    pub deps: Vec<Vec<Vec<usize>>>,
}

/// Bounds of the path search.
#[derive(Clone, Copy, Debug)]
pub struct Bounds {
    pub unroll: usize,
    pub max_events: usize,
    pub max_paths: usize,
}

fn eval(o: Opnd, regs: &[i64]) -> i64 {
    match o {
        Opnd::Reg(r) => regs[r],
        Opnd::Imm(v) => v,
    }
}

fn binop(op: crate::ir::BinOp, a: i64, b: i64) -> i64 {
    match crate::ir::BinOp::apply(op, crate::ir::Value::Int(a), crate::ir::Value::Int(b)) {
        Ok(crate::ir::Value::Int(v)) => v,
        _ => 0,
    }
}

fn atom_write(op: AtomOp, old: i64, regs: &[i64]) -> Option<i64> {
    match op {
        AtomOp::Add(v) => Some(old.wrapping_add(eval(v, regs))),
        AtomOp::Exch(v) => Some(eval(v, regs)),
        AtomOp::Cas(e, n) => (old == eval(e, regs)).then(|| eval(n, regs)),
    }
}

#[derive(Clone)]
struct PState {
    pc: usize,
    regs: Vec<i64>,
    occ: Vec<u16>,
    back: usize,
    events: Vec<PathEv>,
}

/// Every path of `t` with each read taking a value of its location's
/// domain (`depths` gives each value's count of adds, see [`PathEv::adds`]);
/// paths cut by the unroll bound are counted, not returned.
pub fn paths(
    t: &ThreadProg,
    domains: &[Vec<i64>],
    depths: &[Vec<u32>],
    b: Bounds,
) -> Result<(Vec<Path>, usize), String> {
    let mut out = Vec::new();
    let mut cut = 0;
    let mut stack = vec![PState {
        pc: 0,
        regs: t.reg_init.clone(),
        occ: vec![0; t.code.len()],
        back: 0,
        events: Vec::new(),
    }];
    while let Some(mut s) = stack.pop() {
        loop {
            if s.events.len() > b.max_events {
                return Err(format!(
                    "a thread path has more than {} events (raise --max-events)",
                    b.max_events
                ));
            }
            let Some(op) = t.code.get(s.pc) else {
                out.push(Path {
                    events: std::mem::take(&mut s.events),
                    regs: s.regs,
                    deps: Vec::new(),
                });
                if out.len() > b.max_paths {
                    return Err(format!(
                        "a thread has more than {} paths (raise --max-paths)",
                        b.max_paths
                    ));
                }
                break;
            };
            let pc = s.pc;
            let occ = s.occ[pc];
            s.occ[pc] += 1;
            let ev = |kind, loc, val, mode, scope| PathEv {
                instr: pc,
                occ,
                kind,
                loc,
                val,
                mode,
                scope,
                rmw_read: None,
                atomic: false,
                adds: 0,
            };
            let mut jump = None;
            match *op {
                Op::Load {
                    dst,
                    loc,
                    mode,
                    scope,
                } => {
                    let vals = &domains[loc];
                    for &v in &vals[1..] {
                        let mut c = s.clone();
                        c.regs[dst] = v;
                        c.events.push(ev(Kind::R, Some(loc), v, mode, scope));
                        c.pc += 1;
                        stack.push(c);
                    }
                    s.regs[dst] = vals[0];
                    s.events.push(ev(Kind::R, Some(loc), vals[0], mode, scope));
                }
                Op::Store {
                    loc,
                    src,
                    mode,
                    scope,
                } => {
                    let v = eval(src, &s.regs);
                    s.events.push(ev(Kind::W, Some(loc), v, mode, scope));
                }
                Op::Atom {
                    dst,
                    loc,
                    op,
                    read_mode,
                    write_mode,
                    scope,
                } => {
                    let vals = &domains[loc];
                    let depth = &depths[loc];
                    let mut branches = Vec::new();
                    for (&v, &d) in vals.iter().zip(depth).skip(1) {
                        branches.push((s.clone(), v, d));
                    }
                    let adds = |d: u32| {
                        if matches!(op, AtomOp::Add(_)) {
                            d + 1
                        } else {
                            0
                        }
                    };
                    let apply = |st: &mut PState, v: i64, d: u32| {
                        let w = atom_write(op, v, &st.regs);
                        let mut r = ev(Kind::R, Some(loc), v, read_mode, scope);
                        r.atomic = true;
                        st.events.push(r);
                        if let Some(w) = w {
                            let mut we = ev(Kind::W, Some(loc), w, write_mode, scope);
                            we.rmw_read = Some(st.events.len() - 1);
                            we.adds = adds(d);
                            st.events.push(we);
                        }
                        if let Some(d) = dst {
                            st.regs[d] = v;
                        }
                    };
                    for (mut c, v, d) in branches {
                        apply(&mut c, v, d);
                        c.pc += 1;
                        stack.push(c);
                    }
                    apply(&mut s, vals[0], depth[0]);
                }
                Op::Fence { mode, scope } => s.events.push(ev(Kind::F, None, 0, mode, scope)),
                Op::Mov { dst, src } => s.regs[dst] = eval(src, &s.regs),
                Op::Bin { dst, op, a, b } => {
                    s.regs[dst] = binop(op, eval(a, &s.regs), eval(b, &s.regs))
                }
                Op::Branch { cmp, a, b, target } => {
                    let va = crate::ir::Value::Int(eval(a, &s.regs));
                    let vb = crate::ir::Value::Int(eval(b, &s.regs));
                    if cmp.eval(va, vb) {
                        jump = Some(target);
                    }
                }
                Op::Goto { target } => jump = Some(target),
                Op::Nop => {}
            }
            match jump {
                Some(tg) if tg <= pc => {
                    s.back += 1;
                    if s.back > b.unroll {
                        cut += 1;
                        break;
                    }
                    s.pc = tg;
                }
                Some(tg) => s.pc = tg,
                None => s.pc += 1,
            }
        }
    }
    Ok((out, cut))
}

/// Whether the precondition of path event `e` is a tautology when it
/// depends on the reads in `dmask` (bit i = path event i).
fn valid(
    t: &ThreadProg,
    init: &[i64],
    vdom: &[i64],
    p: &Path,
    e: usize,
    dmask: u64,
    unroll: usize,
) -> bool {
    let target = &p.events[e];
    struct A {
        pc: usize,
        regs: Vec<i64>,
        mem: Vec<i64>,
        occ: Vec<u16>,
        back: usize,
    }
    let mut stack = vec![A {
        pc: 0,
        regs: t.reg_init.clone(),
        mem: init.to_vec(),
        occ: vec![0; t.code.len()],
        back: 0,
    }];
    // The values a read at (instr, occ) may take in a run.
    let choices = |pc: usize, occ: u16, mem_val: i64| -> Vec<i64> {
        match p
            .events
            .iter()
            .position(|x| x.instr == pc && x.occ == occ && x.kind == Kind::R)
        {
            Some(j) if dmask >> j & 1 == 1 => vec![p.events[j].val],
            Some(j) if p.events[j].atomic => vdom.to_vec(),
            Some(j) => {
                let v = p.events[j].val;
                if v == mem_val {
                    vec![v]
                } else {
                    vec![v, mem_val]
                }
            }
            None => vdom.to_vec(),
        }
    };
    let is_target = |pc: usize, occ: u16| target.instr == pc && target.occ == occ;
    while let Some(mut s) = stack.pop() {
        let ok = loop {
            let Some(op) = t.code.get(s.pc) else {
                break false;
            };
            let pc = s.pc;
            let occ = s.occ[pc];
            s.occ[pc] += 1;
            let mut jump = None;
            match *op {
                Op::Load { dst, loc, .. } => {
                    let vs = choices(pc, occ, s.mem[loc]);
                    for &v in &vs[1..] {
                        let mut c = A {
                            pc: pc + 1,
                            regs: s.regs.clone(),
                            mem: s.mem.clone(),
                            occ: s.occ.clone(),
                            back: s.back,
                        };
                        c.regs[dst] = v;
                        stack.push(c);
                    }
                    s.regs[dst] = vs[0];
                }
                Op::Store { loc, src, .. } => {
                    let v = eval(src, &s.regs);
                    if is_target(pc, occ) {
                        break v == target.val;
                    }
                    s.mem[loc] = v;
                }
                Op::Atom { dst, loc, op, .. } => {
                    let vs = choices(pc, occ, s.mem[loc]);
                    let mut res = None;
                    let (base_regs, base_mem) = (s.regs.clone(), s.mem.clone());
                    for (k, &v) in vs.iter().enumerate() {
                        let mut regs = base_regs.clone();
                        let w = atom_write(op, v, &regs);
                        if let Some(d) = dst {
                            regs[d] = v;
                        }
                        if is_target(pc, occ) && target.kind == Kind::W {
                            if w != Some(target.val) {
                                res = Some(false);
                                break;
                            }
                            continue;
                        }
                        let mut mem = base_mem.clone();
                        if let Some(w) = w {
                            mem[loc] = w;
                        }
                        if k == 0 {
                            s.regs = regs;
                            s.mem = mem;
                        } else {
                            stack.push(A {
                                pc: pc + 1,
                                regs,
                                mem,
                                occ: s.occ.clone(),
                                back: s.back,
                            });
                        }
                    }
                    if let Some(r) = res {
                        break r;
                    }
                    if is_target(pc, occ) && target.kind == Kind::W {
                        break true;
                    }
                }
                Op::Fence { .. } => {
                    if is_target(pc, occ) {
                        break true;
                    }
                }
                Op::Mov { dst, src } => s.regs[dst] = eval(src, &s.regs),
                Op::Bin { dst, op, a, b } => {
                    s.regs[dst] = binop(op, eval(a, &s.regs), eval(b, &s.regs))
                }
                Op::Branch { cmp, a, b, target } => {
                    let va = crate::ir::Value::Int(eval(a, &s.regs));
                    let vb = crate::ir::Value::Int(eval(b, &s.regs));
                    if cmp.eval(va, vb) {
                        jump = Some(target);
                    }
                }
                Op::Goto { target } => jump = Some(target),
                Op::Nop => {}
            }
            match jump {
                Some(tg) if tg <= pc => {
                    s.back += 1;
                    if s.back > unroll {
                        break false;
                    }
                    s.pc = tg;
                }
                Some(tg) => s.pc = tg,
                None => s.pc += 1,
            }
        };
        if !ok {
            return false;
        }
    }
    true
}

/// Fills `p.deps`: for each write and fence the ⊆-minimal sets of earlier
/// reads making its precondition a tautology (validity is upward closed in
/// D, Def 1.3, so the minimal sets describe every valid choice).
pub fn fill_deps(
    t: &ThreadProg,
    init: &[i64],
    vdom: &[i64],
    p: &mut Path,
    unroll: usize,
) -> Result<(), String> {
    let mut deps = Vec::with_capacity(p.events.len());
    for e in 0..p.events.len() {
        if p.events[e].kind == Kind::R {
            deps.push(vec![Vec::new()]);
            continue;
        }
        let reads: Vec<usize> = (0..e).filter(|&j| p.events[j].kind == Kind::R).collect();
        if reads.len() > 16 {
            return Err(format!(
                "an event follows {} reads in its thread; pwt decides dependencies for at most 16",
                reads.len()
            ));
        }
        let k = reads.len();
        let mut masks: Vec<u32> = (0..(1u32 << k)).collect();
        masks.sort_by_key(|m| m.count_ones());
        let mut minimal: Vec<u32> = Vec::new();
        for m in masks {
            // Skip supersets of a minimal set already found.
            if minimal.iter().any(|&f| f & !m == 0) {
                continue;
            }
            let dmask = reads
                .iter()
                .enumerate()
                .filter(|(i, _)| m >> i & 1 == 1)
                .fold(0u64, |acc, (_, &j)| acc | 1 << j);
            if valid(t, init, vdom, p, e, dmask, unroll) {
                minimal.push(m);
            }
        }
        deps.push(
            minimal
                .iter()
                .map(|&m| {
                    reads
                        .iter()
                        .enumerate()
                        .filter(|(i, _)| m >> i & 1 == 1)
                        .map(|(_, &j)| j)
                        .collect()
                })
                .collect(),
        );
    }
    p.deps = deps;
    Ok(())
}
