//! The assembly dialect of the GPU cache machine of seed 001 §5.2 (Table 1),
//! run by the `rsp-cache` operational model (`src/op/rsp/`, which decodes the
//! instructions from their IR tags).
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
use crate::ir::{Address, Arch, BinOp, CmpOp, InstrKind, LocId, Operand, Reg, RmwOp, Value};
use crate::litmus::lexer::Tok;

/// The RSP assembly dialect.
pub struct Rsp;

/// The RSP dialect instance.
pub static RSP_DIALECT: Rsp = Rsp;

const MNEMONICS: &str = "LD, ST, INC_L1, INC_L2, FLU_L1, FLU_L2, INV_L1, LK_L2, UL_L2, LK_RMW, \
UL_RMW, MOV, ADD, SUB, MUL, AND, OR, XOR, BEQ, BNE, BLT, BLE, BGT, BGE, GOTO or a label 'L:'";

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

/// Reads a scope word among `allowed` (`(word, tag)` pairs) and returns its
/// event tag (`WG`, `DEV`, `SYS`), which the machine decodes.
fn scope_word(
    cur: &mut Cursor<'_>,
    allowed: &[(&str, &'static str)],
) -> Result<&'static str, Diagnostic> {
    let words: Vec<&str> = allowed.iter().map(|(w, _)| *w).collect();
    let expected = format!("a scope: {}", words.join(" or "));
    let pos = cur.pos();
    let (w, _) = cur.expect_ident(&expected)?;
    allowed
        .iter()
        .find(|(word, _)| word.eq_ignore_ascii_case(w))
        .map(|(_, tag)| *tag)
        .ok_or_else(|| {
            cur.error(pos, format!("unexpected scope '{w}'"))
                .expected(expected)
        })
}

fn label(cur: &mut Cursor<'_>) -> Result<String, Diagnostic> {
    let (name, _) = cur.expect_ident("a label name")?;
    Ok(name.to_string())
}

/// Scope words of the assembly with their event tags: work-group, device, system.
const ALL_SCOPES: &[(&str, &str)] = &[("WG", "WG"), ("DV", "DEV"), ("SY", "SYS")];
const WIDE_SCOPES: &[(&str, &str)] = &[("DV", "DEV"), ("SY", "SYS")];

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
            (InstrKind::Fence, tags(&[&m, s]))
        }
        "FLU_L2" | "LK_RMW" | "UL_RMW" => {
            let s = scope_word(cur, WIDE_SCOPES)?;
            (InstrKind::Fence, tags(&[&m, s]))
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
