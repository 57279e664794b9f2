//! The seed-003 fragment of a PTX test: each thread's code as the judge
//! interprets it (modes wk/rlx/acq/rel/ra/sc, scopes cta/gpu/sys, direct
//! locations, integer values), or a located refusal of anything outside it
//! (proxies, aliases, barriers, address registers, other dialects).

use crate::diag::Diagnostic;
use crate::ir::{Address, Arch, BinOp, CmpOp, InstrKind, Operand, RmwOp, Test, Value};

/// Access and fence modes of seed 003 (L.33, L.163): wk ⊑ rlx ⊑ {rel, acq}
/// ⊑ ra ⊑ sc.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Wk,
    Rlx,
    Rel,
    Acq,
    Ra,
    Sc,
}

impl Mode {
    /// `μ ⊒ rel`.
    pub fn is_rel(self) -> bool {
        matches!(self, Mode::Rel | Mode::Ra | Mode::Sc)
    }
    /// `μ ⊒ acq`.
    pub fn is_acq(self) -> bool {
        matches!(self, Mode::Acq | Mode::Ra | Mode::Sc)
    }
    /// The seed's name of the mode.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Wk => "wk",
            Mode::Rlx => "rlx",
            Mode::Rel => "rel",
            Mode::Acq => "acq",
            Mode::Ra => "ra",
            Mode::Sc => "sc",
        }
    }
}

/// Scopes of seed 003.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    Cta,
    Gpu,
    Sys,
}

impl Scope {
    /// The seed's name of the scope.
    pub fn name(self) -> &'static str {
        match self {
            Scope::Cta => "cta",
            Scope::Gpu => "gpu",
            Scope::Sys => "sys",
        }
    }
}

/// A register or a constant.
#[derive(Clone, Copy, Debug)]
pub enum Opnd {
    Reg(usize),
    Imm(i64),
}

/// What an atomic computes (Def 1.8: FADD, EXCHG, CAS).
#[derive(Clone, Copy, Debug)]
pub enum AtomOp {
    Add(Opnd),
    Exch(Opnd),
    Cas(Opnd, Opnd),
}

/// One instruction of the fragment.
#[derive(Clone, Debug)]
pub enum Op {
    Load {
        dst: usize,
        loc: usize,
        mode: Mode,
        scope: Scope,
    },
    Store {
        loc: usize,
        src: Opnd,
        mode: Mode,
        scope: Scope,
    },
    /// `r := FADD/EXCHG/CAS^{μ,ν}_σ([loc], ...)`.
    Atom {
        dst: Option<usize>,
        loc: usize,
        op: AtomOp,
        read_mode: Mode,
        write_mode: Mode,
        scope: Scope,
    },
    Fence {
        mode: Mode,
        scope: Scope,
    },
    Mov {
        dst: usize,
        src: Opnd,
    },
    Bin {
        dst: usize,
        op: BinOp,
        a: Opnd,
        b: Opnd,
    },
    Branch {
        cmp: CmpOp,
        a: Opnd,
        b: Opnd,
        target: usize,
    },
    Goto {
        target: usize,
    },
    Nop,
}

/// One thread in the fragment.
#[derive(Clone, Debug)]
pub struct ThreadProg {
    pub code: Vec<Op>,
    /// Instruction texts, for reports.
    pub text: Vec<String>,
    pub reg_names: Vec<String>,
    /// Initial register values (0 unless the init block says otherwise).
    pub reg_init: Vec<i64>,
    /// `(gpu, cta)` instance numbers from the placement (0 when absent).
    pub gpu: u32,
    pub cta: u32,
}

impl ThreadProg {
    /// The index of register `name`, if the thread uses it.
    pub fn reg(&self, name: &str) -> Option<usize> {
        self.reg_names.iter().position(|r| r == name)
    }
}

/// A test in the fragment.
#[derive(Clone, Debug)]
pub struct Program {
    pub threads: Vec<ThreadProg>,
    /// Initial value per location (`LocId` order).
    pub init: Vec<i64>,
}

fn scope_of(tags: &[String]) -> Scope {
    if tags.iter().any(|t| t == "CTA") {
        Scope::Cta
    } else if tags.iter().any(|t| t == "GPU") {
        Scope::Gpu
    } else {
        Scope::Sys
    }
}

fn has(tags: &[String], t: &str) -> bool {
    tags.iter().any(|x| x == t)
}

/// Builds the fragment view of `test`, or a diagnostic at the first
/// construct outside it.
pub fn build(test: &Test) -> Result<Program, Diagnostic> {
    let file = test.source_name();
    let err = |pos: crate::ir::Pos, msg: String| Diagnostic::new(&file, pos, msg);
    let mut init = Vec::new();
    for l in &test.locations {
        if l.alias_of.is_some() {
            return Err(err(
                Default::default(),
                format!(
                    "pwt (seed 003) has no proxies or aliases: location '{}' is an alias",
                    l.name
                ),
            ));
        }
        match l.init {
            Value::Int(v) => init.push(v),
            Value::Addr(_) => {
                return Err(err(
                    Default::default(),
                    format!(
                        "pwt uses Fig. 1 without address calculation (§1.5): location '{}' holds an address",
                        l.name
                    ),
                ));
            }
        }
    }
    let mut threads = Vec::new();
    for th in &test.threads {
        if th.arch != Arch::Ptx {
            return Err(err(
                th.code.first().map(|i| i.pos).unwrap_or_default(),
                format!(
                    "pwt judges PTX threads only; P{} is {} code",
                    th.id,
                    th.arch.name()
                ),
            ));
        }
        let mut regs: Vec<String> = Vec::new();
        let mut reg_init = Vec::new();
        for (r, v) in &th.reg_init {
            let Value::Int(v) = v else {
                return Err(err(
                    Default::default(),
                    format!(
                        "pwt has no address values: register P{}:{r} holds an address",
                        th.id
                    ),
                ));
            };
            regs.push(r.clone());
            reg_init.push(*v);
        }
        let mut reg = |name: &str| -> usize {
            if let Some(i) = regs.iter().position(|r| r == name) {
                return i;
            }
            regs.push(name.to_string());
            reg_init.push(0);
            regs.len() - 1
        };
        let labels: Vec<(String, usize)> = th
            .code
            .iter()
            .enumerate()
            .filter_map(|(i, ins)| match &ins.kind {
                InstrKind::Label(l) => Some((l.clone(), i)),
                _ => None,
            })
            .collect();
        let mut code = Vec::new();
        let mut text = Vec::new();
        for ins in &th.code {
            let here = |msg: &str| {
                err(
                    ins.pos,
                    format!(
                        "pwt (seed 003 fragment) cannot judge P{} '{}': {msg}",
                        th.id, ins.text
                    ),
                )
            };
            for t in &ins.tags {
                if matches!(
                    t.as_str(),
                    "SURFACE" | "TEXTURE" | "CONSTANT" | "PROXY" | "ALIAS"
                ) {
                    return Err(here("proxies are outside the model"));
                }
            }
            let mut opnd = |o: &Operand| -> Result<Opnd, Diagnostic> {
                match o {
                    Operand::Reg(r) => Ok(Opnd::Reg(reg(r))),
                    Operand::Imm(Value::Int(v)) => Ok(Opnd::Imm(*v)),
                    Operand::Imm(Value::Addr(_)) => {
                        Err(here("address values are outside Fig. 1 (no §1.5)"))
                    }
                }
            };
            let loc = |a: &Address| -> Result<usize, Diagnostic> {
                match a {
                    Address::Loc(l) => Ok(*l),
                    Address::Reg(_) => Err(here(
                        "accesses through an address register are outside Fig. 1 (no §1.5)",
                    )),
                }
            };
            let access_mode = |write: bool| -> Result<Mode, Diagnostic> {
                let t = &ins.tags;
                Ok(if has(t, "WEAK") {
                    Mode::Wk
                } else if has(t, "RLX") {
                    Mode::Rlx
                } else if has(t, "ACQ") && !write {
                    Mode::Acq
                } else if has(t, "REL") && write {
                    Mode::Rel
                } else {
                    return Err(here("only weak, relaxed, acquire loads and release stores"));
                })
            };
            let target = |l: &str| -> Result<usize, Diagnostic> {
                labels
                    .iter()
                    .find(|(n, _)| n == l)
                    .map(|(_, i)| *i)
                    .ok_or_else(|| here("unknown label"))
            };
            let op = match &ins.kind {
                InstrKind::Load { dst, addr } => Op::Load {
                    dst: reg(dst),
                    loc: loc(addr)?,
                    mode: access_mode(false)?,
                    scope: scope_of(&ins.tags),
                },
                InstrKind::Store { addr, src } => Op::Store {
                    loc: loc(addr)?,
                    src: opnd(src)?,
                    mode: access_mode(true)?,
                    scope: scope_of(&ins.tags),
                },
                InstrKind::Rmw { dst, addr, op } => {
                    let t = &ins.tags;
                    let (read_mode, write_mode) = if has(t, "ACQ_REL") {
                        (Mode::Acq, Mode::Rel)
                    } else if has(t, "ACQ") {
                        (Mode::Acq, Mode::Rlx)
                    } else if has(t, "REL") {
                        (Mode::Rlx, Mode::Rel)
                    } else if has(t, "RLX") {
                        (Mode::Rlx, Mode::Rlx)
                    } else {
                        return Err(here("unsupported atomic semantics"));
                    };
                    let op = match op {
                        RmwOp::Bin(BinOp::Add, v) => AtomOp::Add(opnd(v)?),
                        RmwOp::Exch(v) => AtomOp::Exch(opnd(v)?),
                        RmwOp::Cas { expected, new } => AtomOp::Cas(opnd(expected)?, opnd(new)?),
                        _ => return Err(here("only atom add, exch and cas (Def 1.8)")),
                    };
                    Op::Atom {
                        dst: dst.as_ref().map(|d| reg(d)),
                        loc: loc(addr)?,
                        op,
                        read_mode,
                        write_mode,
                        scope: scope_of(t),
                    }
                }
                InstrKind::Fence => {
                    let t = &ins.tags;
                    let mode = if has(t, "SC") {
                        Mode::Sc
                    } else if has(t, "ACQ_REL") {
                        Mode::Ra
                    } else if has(t, "ACQ") {
                        Mode::Acq
                    } else if has(t, "REL") {
                        Mode::Rel
                    } else {
                        return Err(here("unsupported fence"));
                    };
                    Op::Fence {
                        mode,
                        scope: scope_of(t),
                    }
                }
                InstrKind::Barrier { .. } => {
                    return Err(here("execution barriers are outside the model"));
                }
                InstrKind::Mov { dst, src } => Op::Mov {
                    src: opnd(src)?,
                    dst: reg(dst),
                },
                InstrKind::Op { dst, op, a, b } => Op::Bin {
                    a: opnd(a)?,
                    b: opnd(b)?,
                    op: *op,
                    dst: reg(dst),
                },
                InstrKind::Branch {
                    cmp,
                    a,
                    b,
                    target: t,
                } => Op::Branch {
                    a: opnd(a)?,
                    b: opnd(b)?,
                    cmp: *cmp,
                    target: target(t)?,
                },
                InstrKind::Goto { target: t } => Op::Goto { target: target(t)? },
                InstrKind::Label(_) => Op::Nop,
            };
            code.push(op);
            text.push(ins.text.clone());
        }
        let level = |name: &str| {
            th.placement
                .iter()
                .find(|l| l.level == name)
                .map_or(0, |l| l.id)
        };
        threads.push(ThreadProg {
            code,
            text,
            reg_names: regs,
            reg_init,
            gpu: level("gpu"),
            cta: level("cta"),
        });
    }
    Ok(Program { threads, init })
}
