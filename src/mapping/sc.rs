//! The final states of a straight-line test under sequential consistency:
//! every interleaving of the threads, each read taking the latest write.
//!
//! `verify-mapping` uses them to avoid running the source model: for the
//! source models `sc11` and `rc11` every SC interleaving is a consistent
//! execution (docs/mappings.md, "Lemma (SC interleavings)"), so on a
//! program that cannot race a target state reached by an interleaving is
//! source-allowed, and the source model needs to run only when the target
//! allows some state outside this set (docs/mappings.md, "Checking a
//! program").

use crate::ir::{Address, InstrKind, Operand, RmwOp, Term, Test, Value};
use std::collections::{BTreeSet, HashSet};

/// Most interleaving steps explored before giving up (the caller then runs
/// the source model as usual).
const MAX_STEPS: usize = 200_000;

/// One thread's code as the interpreter needs it.
enum Step {
    Load(usize, usize),
    Store(usize, Src),
    Rmw(Option<usize>, usize, RmwKind),
    Mov(usize, Src),
    Skip,
}

#[derive(Clone, Copy)]
enum Src {
    Reg(usize),
    Imm(Value),
}

enum RmwKind {
    Bin(crate::ir::BinOp, Src),
    Exch(Src),
    Cas(Src, Src),
    Inc(Src),
    Dec(Src),
}

/// The observed final states (values in the order of `terms`) of every SC
/// interleaving of `test`, or `None` when the test is not plain
/// straight-line code over named locations (branches, computed addresses,
/// aliases, barriers) or has too many interleavings.
pub fn sc_states(test: &Test, terms: &[Term]) -> Option<BTreeSet<Vec<Value>>> {
    if test.has_aliases() {
        return None;
    }
    // Registers of each thread, numbered.
    let mut regs: Vec<Vec<String>> = Vec::new();
    let mut code: Vec<Vec<Step>> = Vec::new();
    let mut reg_init: Vec<Vec<Value>> = Vec::new();
    for t in &test.threads {
        let mut names: Vec<String> = t.reg_init.iter().map(|(r, _)| r.clone()).collect();
        let idx = |r: &str, names: &mut Vec<String>| -> usize {
            match names.iter().position(|n| n == r) {
                Some(i) => i,
                None => {
                    names.push(r.to_string());
                    names.len() - 1
                }
            }
        };
        let src = |o: &Operand, names: &mut Vec<String>| match o {
            Operand::Reg(r) => Src::Reg(idx(r, names)),
            Operand::Imm(v) => Src::Imm(*v),
        };
        let mut steps = Vec::new();
        for ins in &t.code {
            let loc = |a: &Address| match a {
                Address::Loc(l) => Some(*l),
                Address::Reg(_) => None,
            };
            steps.push(match &ins.kind {
                InstrKind::Load { dst, addr } => {
                    let l = loc(addr)?;
                    Step::Load(idx(dst, &mut names), l)
                }
                InstrKind::Store { addr, src: v } => {
                    let l = loc(addr)?;
                    Step::Store(l, src(v, &mut names))
                }
                InstrKind::Rmw { dst, addr, op } => {
                    let l = loc(addr)?;
                    let kind = match op {
                        RmwOp::Bin(b, v) => RmwKind::Bin(*b, src(v, &mut names)),
                        RmwOp::Exch(v) => RmwKind::Exch(src(v, &mut names)),
                        RmwOp::Cas { expected, new } => {
                            RmwKind::Cas(src(expected, &mut names), src(new, &mut names))
                        }
                        RmwOp::Inc(v) => RmwKind::Inc(src(v, &mut names)),
                        RmwOp::Dec(v) => RmwKind::Dec(src(v, &mut names)),
                    };
                    let d = dst.as_ref().map(|d| idx(d, &mut names));
                    Step::Rmw(d, l, kind)
                }
                InstrKind::Mov { dst, src: v } => {
                    let s = src(v, &mut names);
                    Step::Mov(idx(dst, &mut names), s)
                }
                InstrKind::Fence | InstrKind::Label(_) => Step::Skip,
                InstrKind::Barrier { .. }
                | InstrKind::Op { .. }
                | InstrKind::Branch { .. }
                | InstrKind::Goto { .. } => return None,
            });
        }
        let mut init = vec![Value::Int(0); names.len()];
        for (r, v) in &t.reg_init {
            if let Some(i) = names.iter().position(|n| n == r) {
                init[i] = *v;
            }
        }
        regs.push(names);
        code.push(steps);
        reg_init.push(init);
    }
    // Where each observed term lives in the final machine.
    enum Obs {
        Reg(usize, usize),
        Loc(usize),
    }
    let obs: Vec<Obs> = terms
        .iter()
        .map(|t| match t {
            Term::Reg { thread, reg } => {
                let i = regs.get(*thread)?.iter().position(|n| n == reg)?;
                Some(Obs::Reg(*thread, i))
            }
            Term::Loc(l) => Some(Obs::Loc(*l)),
            Term::Const(_) => None,
        })
        .collect::<Option<_>>()?;
    let mem: Vec<Value> = test.locations.iter().map(|l| l.init).collect();
    let start = Machine {
        pc: vec![0; code.len()],
        mem,
        regs: reg_init,
    };
    let mut out = BTreeSet::new();
    let mut seen: HashSet<Machine> = HashSet::new();
    let mut stack = vec![start];
    let mut steps = 0usize;
    while let Some(m) = stack.pop() {
        if !seen.insert(m.clone()) {
            continue;
        }
        steps += 1;
        if steps > MAX_STEPS {
            return None;
        }
        let mut done = true;
        for (t, thread) in code.iter().enumerate() {
            let Some(step) = thread.get(m.pc[t]) else {
                continue;
            };
            done = false;
            let mut n = m.clone();
            n.pc[t] += 1;
            let val = |s: Src, n: &Machine| match s {
                Src::Reg(r) => n.regs[t][r],
                Src::Imm(v) => v,
            };
            match step {
                Step::Load(d, l) => n.regs[t][*d] = n.mem[*l],
                Step::Store(l, s) => n.mem[*l] = val(*s, &n),
                Step::Mov(d, s) => n.regs[t][*d] = val(*s, &n),
                Step::Skip => {}
                Step::Rmw(d, l, k) => {
                    let old = n.mem[*l];
                    let new = match k {
                        RmwKind::Bin(b, s) => Some(b.apply(old, val(*s, &n)).ok()?),
                        RmwKind::Exch(s) => Some(val(*s, &n)),
                        RmwKind::Cas(e, s) => (old == val(*e, &n)).then(|| val(*s, &n)),
                        RmwKind::Inc(s) => {
                            let (Value::Int(o), Value::Int(b)) = (old, val(*s, &n)) else {
                                return None;
                            };
                            Some(Value::Int(if o >= b { 0 } else { o + 1 }))
                        }
                        RmwKind::Dec(s) => {
                            let (Value::Int(o), Value::Int(b)) = (old, val(*s, &n)) else {
                                return None;
                            };
                            Some(Value::Int(if o == 0 || o > b { b } else { o - 1 }))
                        }
                    };
                    if let Some(v) = new {
                        n.mem[*l] = v;
                    }
                    if let Some(d) = d {
                        n.regs[t][*d] = old;
                    }
                }
            }
            stack.push(n);
        }
        if done {
            out.insert(
                obs.iter()
                    .map(|o| match *o {
                        Obs::Reg(t, r) => m.regs[t][r],
                        Obs::Loc(l) => m.mem[l],
                    })
                    .collect(),
            );
        }
    }
    Some(out)
}

#[derive(Clone, PartialEq, Eq, Hash)]
struct Machine {
    pc: Vec<usize>,
    mem: Vec<Value>,
    regs: Vec<Vec<Value>>,
}
