//! The assembly dialect of the GPU cache machine of seed 001 §5.2 (Table 1),
//! run by the `rsp-cache` operational model (`src/op/rsp_cache.rs`).
//!
//! Tests use herd's table format with `RSP` on the first line; threads are
//! placed with `P0@wg 0,dev 0` (levels `dev` and `wg`; a thread without a
//! placement is alone in its own work-group on device 0). Mnemonics and
//! scope words are case-insensitive; operands are positional, so registers
//! and locations never clash: `LD r x` loads location `x` into register `r`.
//! Full syntax in docs/rsp-cache.md.
//!
//! | syntax | IR | tags (besides `RSP`) |
//! |---|---|---|
//! | `LD r x` | `Load` | |
//! | `ST v x` (`v` a register or an integer) | `Store` | |
//! | `INC_L1 r x [v]`, `INC_L2 r x [v]` | `Rmw` add `v` (default 1) | `INC_L1` / `INC_L2` |
//! | `FLU_L1 WG\|DV\|SY`, `FLU_L2 DV\|SY` | `Fence` | `FLU_L1` / `FLU_L2`, `WG`/`DEV`/`SYS` |
//! | `INV_L1 WG\|DV\|SY` | `Fence` | `INV_L1`, scope |
//! | `LK_L2 x`, `UL_L2 x` | `Fence` (the location is the operand in [`ir::Instr::text`]) | `LK_L2` / `UL_L2` |
//! | `LK_RMW DV\|SY`, `UL_RMW DV\|SY` | `Fence` | `LK_RMW` / `UL_RMW`, scope |
//! | `MOV r v` | `Mov` | |
//! | `ADD r a b` (also `SUB MUL AND OR XOR`) | `Op` | |
//! | `BEQ a b L` (also `BNE BLT BLE BGT BGE`) | `Branch` | |
//! | `GOTO L` | `Goto` | |
//! | `L:` | `Label` | |
//!
//! [`decode`] turns such an IR instruction back into the machine's
//! [`Op`]; it is the only reader of the tags above.

use super::dialect::{Cursor, Dialect, ThreadCtx};
use crate::diag::Diagnostic;
use crate::ir::{self, Address, Arch, BinOp, CmpOp, InstrKind, LocId, Operand, Reg, RmwOp, Value};
use crate::litmus::lexer::Tok;

/// The RSP assembly dialect.
pub struct Rsp;

/// The RSP dialect instance.
pub static RSP_DIALECT: Rsp = Rsp;

const MNEMONICS: &str = "LD, ST, INC_L1, INC_L2, FLU_L1, FLU_L2, INV_L1, LK_L2, UL_L2, LK_RMW, \
UL_RMW, MOV, ADD, SUB, MUL, AND, OR, XOR, BEQ, BNE, BLT, BLE, BGT, BGE, GOTO or a label 'L:'";

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

impl Dialect for Rsp {
    fn arch(&self) -> Arch {
        Arch::Rsp
    }

    fn scope_levels(&self) -> &'static [&'static str] {
        &["sys", "dev", "wg"]
    }

    fn normalize_reg(&self, name: &str) -> Option<Reg> {
        Some(name.to_string())
    }

    fn register_hint(&self) -> &'static str {
        "a register name such as r0"
    }

    fn parse_instr(
        &self,
        cur: &mut Cursor<'_>,
        ctx: &mut ThreadCtx<'_>,
    ) -> Result<Option<(InstrKind, Vec<String>)>, Diagnostic> {
        parse_instr(cur, ctx).map(Some)
    }
}

fn reg(cur: &mut Cursor<'_>, what: &str) -> Result<Reg, Diagnostic> {
    let (name, _) = cur.expect_ident(what)?;
    Ok(name.to_string())
}

fn location(cur: &mut Cursor<'_>, ctx: &mut ThreadCtx<'_>) -> Result<LocId, Diagnostic> {
    let (name, _) = cur.expect_ident("a location name such as x")?;
    Ok(ctx.locs.id(name))
}

fn operand(cur: &mut Cursor<'_>, what: &str) -> Result<Operand, Diagnostic> {
    if let Some(v) = cur.eat_int()? {
        return Ok(Operand::Imm(Value::Int(v)));
    }
    match cur.peek().map(|t| &t.tok) {
        Some(Tok::Ident(name)) => {
            let name = name.clone();
            cur.next_tok();
            Ok(Operand::Reg(name))
        }
        _ => Err(cur.unexpected(what)),
    }
}

fn scope_word(cur: &mut Cursor<'_>, allowed: &[Scope]) -> Result<Scope, Diagnostic> {
    let words: Vec<&str> = allowed.iter().map(|s| s.word()).collect();
    let expected = format!("a scope: {}", words.join(" or "));
    let pos = cur.pos();
    let (w, _) = cur.expect_ident(&expected)?;
    allowed
        .iter()
        .copied()
        .find(|s| s.word().eq_ignore_ascii_case(w))
        .ok_or_else(|| {
            cur.error(pos, format!("unexpected scope '{w}'"))
                .expected(expected)
        })
}

fn label(cur: &mut Cursor<'_>) -> Result<String, Diagnostic> {
    let (name, _) = cur.expect_ident("a label name")?;
    Ok(name.to_string())
}

const ALL_SCOPES: &[Scope] = &[Scope::Wg, Scope::Dv, Scope::Sy];
const WIDE_SCOPES: &[Scope] = &[Scope::Dv, Scope::Sy];

fn parse_instr(
    cur: &mut Cursor<'_>,
    ctx: &mut ThreadCtx<'_>,
) -> Result<(InstrKind, Vec<String>), Diagnostic> {
    let pos = cur.pos();
    let (m, _) = cur.expect_ident(&format!("an instruction: {MNEMONICS}"))?;
    let m = m.to_ascii_uppercase();
    let tags = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let bin = |s: &str| {
        Some(match s {
            "ADD" => BinOp::Add,
            "SUB" => BinOp::Sub,
            "MUL" => BinOp::Mul,
            "AND" => BinOp::And,
            "OR" => BinOp::Or,
            "XOR" => BinOp::Xor,
            _ => return None,
        })
    };
    let cmp = |s: &str| {
        Some(match s {
            "BEQ" => CmpOp::Eq,
            "BNE" => CmpOp::Ne,
            "BLT" => CmpOp::Lt,
            "BLE" => CmpOp::Le,
            "BGT" => CmpOp::Gt,
            "BGE" => CmpOp::Ge,
            _ => return None,
        })
    };
    Ok(match m.as_str() {
        "LD" => {
            let dst = reg(cur, "a destination register")?;
            let l = location(cur, ctx)?;
            (
                InstrKind::Load {
                    dst,
                    addr: Address::Loc(l),
                },
                vec![],
            )
        }
        "ST" => {
            let src = operand(cur, "a register or an integer to store")?;
            let l = location(cur, ctx)?;
            (
                InstrKind::Store {
                    addr: Address::Loc(l),
                    src,
                },
                vec![],
            )
        }
        "INC_L1" | "INC_L2" => {
            let dst = reg(cur, "a destination register")?;
            let l = location(cur, ctx)?;
            let by = if cur.at_end() {
                Operand::Imm(Value::Int(1))
            } else {
                operand(
                    cur,
                    "an increment (register or integer) or the end of the instruction",
                )?
            };
            (
                InstrKind::Rmw {
                    dst: Some(dst),
                    addr: Address::Loc(l),
                    op: RmwOp::Bin(BinOp::Add, by),
                },
                tags(&[&m]),
            )
        }
        "FLU_L1" | "INV_L1" => {
            let s = scope_word(cur, ALL_SCOPES)?;
            (InstrKind::Fence, tags(&[&m, s.tag()]))
        }
        "FLU_L2" | "LK_RMW" | "UL_RMW" => {
            let s = scope_word(cur, WIDE_SCOPES)?;
            (InstrKind::Fence, tags(&[&m, s.tag()]))
        }
        "LK_L2" | "UL_L2" => {
            location(cur, ctx)?;
            (InstrKind::Fence, tags(&[&m]))
        }
        "MOV" => {
            let dst = reg(cur, "a destination register")?;
            let src = operand(cur, "a register or an integer")?;
            (InstrKind::Mov { dst, src }, vec![])
        }
        "GOTO" => (
            InstrKind::Goto {
                target: label(cur)?,
            },
            vec![],
        ),
        other => {
            if let Some(op) = bin(other) {
                let dst = reg(cur, "a destination register")?;
                let a = operand(cur, "a register or an integer")?;
                let b = operand(cur, "a register or an integer")?;
                (InstrKind::Op { dst, op, a, b }, vec![])
            } else if let Some(c) = cmp(other) {
                let a = operand(cur, "a register or an integer")?;
                let b = operand(cur, "a register or an integer")?;
                let target = label(cur)?;
                (
                    InstrKind::Branch {
                        cmp: c,
                        a,
                        b,
                        target,
                    },
                    vec![],
                )
            } else {
                return Err(cur
                    .error(pos, format!("unknown RSP instruction '{other}'"))
                    .expected(format!("an instruction: {MNEMONICS}")));
            }
        }
    })
}
