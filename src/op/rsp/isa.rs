//! The machine's instruction set (seed 001 Table 1 plus moves and
//! branches), decoded from the IR: the front end (`litmus::rsp`) tags each
//! instruction with its mnemonic and scope, and [`decode`] reads those tags
//! back, as LOST-POP reads PTX and x86 tags.

use crate::ir::{self, Address, BinOp, CmpOp, InstrKind, LocId, Operand, Reg, RmwOp};

/// A scope of the machine's flush, invalidate and lock instructions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scope {
    /// The current work-group (`WG`).
    Wg,
    /// The current device (`DV`).
    Dv,
    /// The whole system (`SY`).
    Sy,
}

impl Scope {
    /// The event tag (`WG`, `DEV`, `SYS`), shared with the language front ends.
    pub fn tag(self) -> &'static str {
        match self {
            Scope::Wg => "WG",
            Scope::Dv => "DEV",
            Scope::Sy => "SYS",
        }
    }

    /// The word used in the assembly (`WG`, `DV`, `SY`).
    pub fn word(self) -> &'static str {
        match self {
            Scope::Wg => "WG",
            Scope::Dv => "DV",
            Scope::Sy => "SY",
        }
    }

    fn from_tag(tag: &str) -> Option<Scope> {
        match tag {
            "WG" => Some(Scope::Wg),
            "DEV" => Some(Scope::Dv),
            "SYS" => Some(Scope::Sy),
            _ => None,
        }
    }
}

/// Which cache an increment acts on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Level {
    L1,
    L2,
}

/// One machine instruction, decoded from the IR (Table 1 plus the usual
/// register-only instructions).
#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    /// `LD r x`.
    Ld { reg: Reg, loc: LocId },
    /// `ST v x`.
    St { val: Operand, loc: LocId },
    /// `INC_L1 r x v` / `INC_L2 r x v`: `r` gets the old value, `x` becomes old + `v`.
    Inc {
        level: Level,
        reg: Reg,
        loc: LocId,
        by: Operand,
    },
    /// `FLU_L1 s`.
    FluL1(Scope),
    /// `FLU_L2 s` (`DV` or `SY`).
    FluL2(Scope),
    /// `INV_L1 s`.
    InvL1(Scope),
    /// `LK_L2 x`.
    LkL2(LocId),
    /// `UL_L2 x`.
    UlL2(LocId),
    /// `LK_RMW s` (`DV` or `SY`).
    LkRmw(Scope),
    /// `UL_RMW s`.
    UlRmw(Scope),
    /// `MOV r v`.
    Mov { reg: Reg, val: Operand },
    /// `ADD r a b` etc.
    Arith {
        reg: Reg,
        op: BinOp,
        a: Operand,
        b: Operand,
    },
    /// `Bcc a b L`: jump to instruction index `target` when `a cmp b`.
    Branch {
        cmp: CmpOp,
        a: Operand,
        b: Operand,
        target: usize,
    },
    /// `GOTO L`.
    Goto(usize),
    /// `L:` (does nothing).
    Nop,
}

impl Op {
    /// True for instructions that only touch the thread's own registers and
    /// program counter (no memory, no caches, no locks).
    pub fn is_local(&self) -> bool {
        matches!(
            self,
            Op::Mov { .. } | Op::Arith { .. } | Op::Branch { .. } | Op::Goto(_) | Op::Nop
        )
    }
}

/// Decodes one IR instruction of an RSP thread into the machine's [`Op`].
/// `labels` gives the index of each label in the thread's code. The error
/// says what the instruction is and why the machine cannot run it.
pub fn decode(
    ins: &ir::Instr,
    test: &ir::Test,
    labels: &dyn Fn(&str) -> Option<usize>,
) -> Result<Op, String> {
    let has = |t: &str| ins.tags.iter().any(|x| x == t);
    let scope = || ins.tags.iter().find_map(|t| Scope::from_tag(t));
    let loc = |a: &Address| match a {
        Address::Loc(l) => Ok(test.physical(*l)),
        Address::Reg(r) => Err(format!(
            "'{}': addresses in registers ([{r}]) are not supported by rsp-cache",
            ins.text
        )),
    };
    let target = |l: &str| labels(l).ok_or_else(|| format!("'{}': unknown label '{l}'", ins.text));
    if !has("RSP") {
        return Err(format!(
            "'{}' is not an RSP instruction (rsp-cache runs RSP assembly tests only; compile source tests with a mapping)",
            ins.text
        ));
    }
    Ok(match &ins.kind {
        InstrKind::Load { dst, addr } => Op::Ld {
            reg: dst.clone(),
            loc: loc(addr)?,
        },
        InstrKind::Store { addr, src } => Op::St {
            val: src.clone(),
            loc: loc(addr)?,
        },
        InstrKind::Rmw {
            dst: Some(dst),
            addr,
            op: RmwOp::Bin(BinOp::Add, by),
        } => Op::Inc {
            level: if has("INC_L2") { Level::L2 } else { Level::L1 },
            reg: dst.clone(),
            loc: loc(addr)?,
            by: by.clone(),
        },
        InstrKind::Fence => {
            let s = scope();
            let need = |s: Option<Scope>| s.ok_or_else(|| format!("'{}': missing scope", ins.text));
            if has("FLU_L1") {
                Op::FluL1(need(s)?)
            } else if has("FLU_L2") {
                Op::FluL2(need(s)?)
            } else if has("INV_L1") {
                Op::InvL1(need(s)?)
            } else if has("LK_RMW") {
                Op::LkRmw(need(s)?)
            } else if has("UL_RMW") {
                Op::UlRmw(need(s)?)
            } else if has("LK_L2") || has("UL_L2") {
                let name = ins.text.split_whitespace().nth(1).unwrap_or_default();
                let l = test
                    .location(name)
                    .ok_or_else(|| format!("'{}': unknown location '{name}'", ins.text))?;
                let l = test.physical(l);
                if has("LK_L2") {
                    Op::LkL2(l)
                } else {
                    Op::UlL2(l)
                }
            } else {
                return Err(format!("'{}': not a machine instruction", ins.text));
            }
        }
        InstrKind::Mov { dst, src } => Op::Mov {
            reg: dst.clone(),
            val: src.clone(),
        },
        InstrKind::Op { dst, op, a, b } => Op::Arith {
            reg: dst.clone(),
            op: *op,
            a: a.clone(),
            b: b.clone(),
        },
        InstrKind::Branch {
            cmp,
            a,
            b,
            target: t,
        } => Op::Branch {
            cmp: *cmp,
            a: a.clone(),
            b: b.clone(),
            target: target(t)?,
        },
        InstrKind::Goto { target: t } => Op::Goto(target(t)?),
        InstrKind::Label(_) => Op::Nop,
        _ => {
            return Err(format!("'{}' is not supported by rsp-cache", ins.text));
        }
    })
}
