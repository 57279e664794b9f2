//! The x86 dialect (herd syntax, Intel operand order `dst, src`).
//!
//! Mnemonics and register names are case-insensitive; registers are
//! normalised to upper case (`eax` → `EAX`). Memory operands are `[x]` (a
//! location) or `[EAX]` (a register holding an address); immediates are
//! `$1` or `1`. Registers are exactly the x86 register names (`EAX`...`ESP`,
//! `RAX`...`RSP`, `R8`...`R15`, `R8D`...`R15D`), so there is no ambiguity
//! with location names.
//!
//! | syntax | IR | tags |
//! |---|---|---|
//! | `MOV [x], v` | `Store` | `X86` |
//! | `MOV r, [x]` | `Load` | `X86` |
//! | `MOV r, v` | `Mov` | `X86` |
//! | `MFENCE` | `Fence` | `X86 MFENCE` |
//! | `XCHG [x], r` / `XCHG r, [x]` | `Rmw` exchange, `r` gets the old value | `X86` |
//! | `LOCK XADD [x], r` | `Rmw` add, `r` gets the old value | `X86` |
//! | `LOCK CMPXCHG [x], r` | `Rmw` CAS comparing with `EAX`, `EAX` gets the old value | `X86` |
//! | `LOCK ADD/SUB/AND/OR/XOR [x], v`, `LOCK INC/DEC [x]` | `Rmw` without destination | `X86` |
//! | `ADD/SUB/AND/OR/XOR r, v`, `INC/DEC r` | `Op` | `X86` |
//! | `CMP a, b` then `JE/JZ/JNE/JNZ/JL/JLE/JG/JGE L` | one `Branch` | `X86` |
//! | `JMP L` | `Goto` | `X86` |
//!
//! `CMP` produces no instruction of its own: the conditional jump that
//! immediately follows it (no label in between) becomes a `Branch` comparing
//! the `CMP` operands.

use super::dialect::{Cursor, Dialect, ThreadCtx};
use crate::diag::Diagnostic;
use crate::ir::{Address, Arch, BinOp, CmpOp, InstrKind, Operand, Pos, Reg, RmwOp, Value};
use crate::litmus::lexer::Tok;

/// The x86 dialect.
pub struct X86;

/// The x86 dialect instance.
pub static X86_DIALECT: X86 = X86;

const MNEMONICS: &str = "MOV, MFENCE, XCHG, LOCK XADD, LOCK CMPXCHG, LOCK ADD/SUB/AND/OR/XOR/INC/DEC, \
ADD, SUB, AND, OR, XOR, INC, DEC, CMP, JE, JNE, JL, JLE, JG, JGE, JMP or a label 'L:'";

const REG_HINT: &str = "an x86 register such as EAX, EBX, ECX, EDX, ESI or EDI";

const REGISTERS: &[&str] = &[
    "EAX", "EBX", "ECX", "EDX", "ESI", "EDI", "EBP", "ESP", "RAX", "RBX", "RCX", "RDX", "RSI",
    "RDI", "RBP", "RSP", "R8", "R9", "R10", "R11", "R12", "R13", "R14", "R15", "R8D", "R9D",
    "R10D", "R11D", "R12D", "R13D", "R14D", "R15D",
];

/// The canonical name of an x86 register, if `name` is one.
pub fn register(name: &str) -> Option<Reg> {
    let up = name.to_ascii_uppercase();
    REGISTERS.contains(&up.as_str()).then_some(up)
}

impl Dialect for X86 {
    fn arch(&self) -> Arch {
        Arch::X86
    }

    fn scope_levels(&self) -> &'static [&'static str] {
        &[]
    }

    fn normalize_reg(&self, name: &str) -> Option<Reg> {
        register(name)
    }

    fn register_hint(&self) -> &'static str {
        REG_HINT
    }

    fn parse_instr(
        &self,
        cur: &mut Cursor<'_>,
        ctx: &mut ThreadCtx<'_>,
    ) -> Result<Option<(InstrKind, Vec<String>)>, Diagnostic> {
        let r = parse_instr(cur, ctx)?;
        Ok(r.map(|(k, tags)| (k, tags.iter().map(|s| s.to_string()).collect())))
    }
}

enum Opnd {
    Reg(Reg, Pos),
    Imm(i64, Pos),
    Mem(Address, Pos),
}

impl Opnd {
    fn pos(&self) -> Pos {
        match self {
            Opnd::Reg(_, p) | Opnd::Imm(_, p) | Opnd::Mem(_, p) => *p,
        }
    }
}

const OPERAND_EXPECTED: &str = "an operand: a register like EAX, [x] or an immediate like $1";

fn parse_operand(cur: &mut Cursor<'_>, ctx: &mut ThreadCtx<'_>) -> Result<Opnd, Diagnostic> {
    let pos = cur.pos();
    if cur.eat_punct("$") {
        return match cur.eat_int()? {
            Some(v) => Ok(Opnd::Imm(v, pos)),
            None => Err(cur.unexpected("a number after '$'")),
        };
    }
    if let Some(v) = cur.eat_int()? {
        return Ok(Opnd::Imm(v, pos));
    }
    if cur.eat_punct("[") {
        let name = cur.expect_bracketed_name()?;
        let addr = match register(name) {
            Some(r) => Address::Reg(r),
            None => Address::Loc(ctx.locs.id(name)),
        };
        return Ok(Opnd::Mem(addr, pos));
    }
    match cur.peek().map(|t| &t.tok) {
        Some(Tok::Ident(name)) => match register(name) {
            Some(r) => {
                cur.next_tok();
                Ok(Opnd::Reg(r, pos))
            }
            None => Err(cur
                .error(pos, format!("'{name}' is not an x86 register"))
                .expected(format!("{REG_HINT}; memory operands are written [{name}]"))),
        },
        _ => Err(cur.unexpected(OPERAND_EXPECTED)),
    }
}

fn comma(cur: &mut Cursor<'_>) -> Result<(), Diagnostic> {
    cur.expect_punct(",", "',' between operands").map(|_| ())
}

fn value(cur: &Cursor<'_>, o: Opnd) -> Result<Operand, Diagnostic> {
    match o {
        Opnd::Reg(r, _) => Ok(Operand::Reg(r)),
        Opnd::Imm(v, _) => Ok(Operand::Imm(Value::Int(v))),
        Opnd::Mem(_, p) => Err(cur
            .error(p, "a memory operand cannot be used here")
            .expected("a register or an immediate")),
    }
}

fn reg(cur: &Cursor<'_>, o: Opnd) -> Result<Reg, Diagnostic> {
    match o {
        Opnd::Reg(r, _) => Ok(r),
        o => Err(cur.error(o.pos(), "expected a register").expected(REG_HINT)),
    }
}

/// A value operand: a register or an immediate.
fn value_operand(cur: &mut Cursor<'_>, ctx: &mut ThreadCtx<'_>) -> Result<Operand, Diagnostic> {
    let o = parse_operand(cur, ctx)?;
    value(cur, o)
}

/// The second operand of `ADD`...`XOR` (`, v`), or the 1 of `INC`/`DEC`
/// (`unary`).
fn arith_source(
    cur: &mut Cursor<'_>,
    ctx: &mut ThreadCtx<'_>,
    unary: bool,
) -> Result<Operand, Diagnostic> {
    if unary {
        return Ok(Operand::Imm(Value::Int(1)));
    }
    comma(cur)?;
    value_operand(cur, ctx)
}

/// A memory operand `[x]` or `[register]`.
fn mem_operand(cur: &mut Cursor<'_>, ctx: &mut ThreadCtx<'_>) -> Result<Address, Diagnostic> {
    match parse_operand(cur, ctx)? {
        Opnd::Mem(a, _) => Ok(a),
        o => Err(cur
            .error(o.pos(), "expected a memory operand")
            .expected("[x] or [register]")),
    }
}

type Parsed = Option<(InstrKind, &'static [&'static str])>;

fn parse_instr(cur: &mut Cursor<'_>, ctx: &mut ThreadCtx<'_>) -> Result<Parsed, Diagnostic> {
    let Some(first) = cur.peek() else {
        return Err(cur.unexpected("an instruction"));
    };
    let Some(text) = first.ident() else {
        return Err(cur.unexpected(&format!("an instruction: {MNEMONICS}")));
    };
    let mpos = first.pos;
    cur.next_tok();
    let m = text.to_ascii_uppercase();
    // Conditional jumps consume the flags of a preceding CMP.
    if let Some(cmp) = jcc(&m) {
        let Some((a, b)) = ctx.flags.clone() else {
            return Err(cur
                .error(mpos, format!("'{text}' must directly follow a CMP"))
                .expected("CMP a, b on the row before the jump"));
        };
        let (target, _) = cur.expect_ident("a label")?;
        return Ok(Some((
            InstrKind::Branch {
                cmp,
                a,
                b,
                target: target.to_string(),
            },
            &[],
        )));
    }
    *ctx.flags = None;
    let kind = match m.as_str() {
        "MFENCE" => return Ok(Some((InstrKind::Fence, &["MFENCE"]))),
        "MOV" => {
            let d = parse_operand(cur, ctx)?;
            comma(cur)?;
            let s = parse_operand(cur, ctx)?;
            match (d, s) {
                (Opnd::Mem(addr, _), s) => {
                    let src = value(cur, s)?;
                    InstrKind::Store { addr, src }
                }
                (Opnd::Reg(dst, _), Opnd::Mem(addr, _)) => InstrKind::Load { dst, addr },
                (Opnd::Reg(dst, _), s) => InstrKind::Mov {
                    dst,
                    src: value(cur, s)?,
                },
                (Opnd::Imm(_, p), _) => {
                    return Err(cur
                        .error(p, "the destination of MOV cannot be an immediate")
                        .expected("a register or [x]"));
                }
            }
        }
        "XCHG" => {
            let a = parse_operand(cur, ctx)?;
            comma(cur)?;
            let b = parse_operand(cur, ctx)?;
            let (addr, r) = match (a, b) {
                (Opnd::Mem(addr, _), Opnd::Reg(r, _)) | (Opnd::Reg(r, _), Opnd::Mem(addr, _)) => {
                    (addr, r)
                }
                (a, _) => {
                    return Err(cur
                        .error(a.pos(), "XCHG needs one memory operand and one register")
                        .expected("XCHG [x], EAX or XCHG EAX, [x]"));
                }
            };
            InstrKind::Rmw {
                dst: Some(r.clone()),
                addr,
                op: RmwOp::Exch(Operand::Reg(r)),
            }
        }
        "LOCK" => return parse_locked(cur, ctx),
        "XADD" | "CMPXCHG" => {
            return Err(cur
                .error(mpos, format!("'{text}' without LOCK is not supported"))
                .expected(format!("LOCK {m}")));
        }
        "ADD" | "SUB" | "AND" | "OR" | "XOR" | "INC" | "DEC" => {
            let unary = matches!(m.as_str(), "INC" | "DEC");
            let operands = if unary { "" } else { ", v" };
            let d = parse_operand(cur, ctx)?;
            if let Opnd::Mem(_, p) = d {
                return Err(cur
                    .error(
                        p,
                        format!("'{text}' on memory without LOCK is not supported"),
                    )
                    .expected(format!("LOCK {m} [x]{operands} or {m} register{operands}")));
            }
            let dst = reg(cur, d)?;
            InstrKind::Op {
                dst: dst.clone(),
                op: binop(&m),
                a: Operand::Reg(dst),
                b: arith_source(cur, ctx, unary)?,
            }
        }
        "CMP" => {
            let a = value_operand(cur, ctx)?;
            comma(cur)?;
            let b = value_operand(cur, ctx)?;
            *ctx.flags = Some((a, b));
            return Ok(None);
        }
        "JMP" => {
            let (target, _) = cur.expect_ident("a label")?;
            InstrKind::Goto {
                target: target.to_string(),
            }
        }
        _ => {
            return Err(cur
                .error(mpos, format!("unsupported instruction '{text}'"))
                .expected(MNEMONICS));
        }
    };
    Ok(Some((kind, &[])))
}

/// The operation of `ADD`...`XOR`, `INC` and `DEC`.
fn binop(m: &str) -> BinOp {
    match m {
        "ADD" | "INC" => BinOp::Add,
        "SUB" | "DEC" => BinOp::Sub,
        "AND" => BinOp::And,
        "OR" => BinOp::Or,
        _ => BinOp::Xor,
    }
}

fn jcc(m: &str) -> Option<CmpOp> {
    Some(match m {
        "JE" | "JZ" => CmpOp::Eq,
        "JNE" | "JNZ" => CmpOp::Ne,
        "JL" => CmpOp::Lt,
        "JLE" => CmpOp::Le,
        "JG" => CmpOp::Gt,
        "JGE" => CmpOp::Ge,
        _ => return None,
    })
}

/// The instruction after a `LOCK` prefix.
fn parse_locked(cur: &mut Cursor<'_>, ctx: &mut ThreadCtx<'_>) -> Result<Parsed, Diagnostic> {
    const LOCKABLE: &str = "XADD, CMPXCHG, XCHG, ADD, SUB, AND, OR, XOR, INC or DEC after LOCK";
    let (text, mpos) = cur.expect_ident(LOCKABLE)?;
    let m = text.to_ascii_uppercase();
    let kind = match m.as_str() {
        "XADD" | "XCHG" | "CMPXCHG" => {
            let addr = mem_operand(cur, ctx)?;
            comma(cur)?;
            let r = parse_operand(cur, ctx)?;
            let r = reg(cur, r)?;
            match m.as_str() {
                "XADD" => InstrKind::Rmw {
                    dst: Some(r.clone()),
                    addr,
                    op: RmwOp::Bin(BinOp::Add, Operand::Reg(r)),
                },
                "XCHG" => InstrKind::Rmw {
                    dst: Some(r.clone()),
                    addr,
                    op: RmwOp::Exch(Operand::Reg(r)),
                },
                _ => InstrKind::Rmw {
                    dst: Some("EAX".to_string()),
                    addr,
                    op: RmwOp::Cas {
                        expected: Operand::Reg("EAX".to_string()),
                        new: Operand::Reg(r),
                    },
                },
            }
        }
        "ADD" | "SUB" | "AND" | "OR" | "XOR" | "INC" | "DEC" => {
            let addr = mem_operand(cur, ctx)?;
            let v = arith_source(cur, ctx, matches!(m.as_str(), "INC" | "DEC"))?;
            InstrKind::Rmw {
                dst: None,
                addr,
                op: RmwOp::Bin(binop(&m), v),
            }
        }
        _ => {
            return Err(cur
                .error(mpos, format!("unsupported instruction 'LOCK {text}'"))
                .expected(LOCKABLE));
        }
    };
    Ok(Some((kind, &[])))
}
