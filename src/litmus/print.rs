//! Printers: a parsed test ([`Test`]) back as litmus text in herd's table
//! format, for the X86 and PTX dialects and compound `X86+PTX` tests.
//!
//! Each instruction is written from its IR kind and tags (never from the
//! source text it was parsed from), so that [`crate::litmus::parse_str`]
//! of the printed text gives the same IR up to source positions and
//! instruction texts (`tests/print_round_trip.rs` checks this over every
//! X86 and PTX oracle file). Spellings are normalised: `membar.gl` prints
//! as `fence.sc.gpu`, `LOCK INC [x]` as `LOCK ADD [x],$1`, since both parse
//! to the same IR.
//!
//! C and OpenCL tests are printed by [`super::print_c`], which rebuilds
//! statements from their lowered code. Synthesised tests have their own
//! printer ([`crate::synth::print`]).

use crate::ir::text::{PropStyle, prop_text, quantifier_text};
use crate::ir::{
    Address, Arch, BarrierKind, BinOp, CmpOp, Instr, InstrKind, Operand, Proxy, RmwOp, Term, Test,
    Thread, Value,
};
use std::fmt::Write as _;

/// `test` as litmus text, or why it cannot be printed.
pub fn print_test(test: &Test) -> Result<String, String> {
    let compound = test.arch == super::compound::ARCH;
    if test.arch.eq_ignore_ascii_case("C") || test.arch.eq_ignore_ascii_case("OpenCL") {
        return super::print_c::print_c(test);
    }
    if !compound && test.arch != "X86" && test.arch != "PTX" {
        return Err(format!(
            "no printer for {} tests (X86, PTX, X86+PTX, C and OpenCL only)",
            test.arch
        ));
    }
    let mut s = String::new();
    let _ = writeln!(s, "{} {}", test.arch, test.name);
    s.push_str(&init_block(test)?);
    let mut cols: Vec<Vec<String>> = Vec::new();
    let mut heads: Vec<String> = Vec::new();
    for (t, th) in test.threads.iter().enumerate() {
        if th.id != t {
            return Err(format!("thread {t} is numbered P{}", th.id));
        }
        heads.push(header(th));
        let mut lines = Vec::new();
        for i in &th.code {
            lines.extend(instr(test, th, i)?);
        }
        cols.push(lines);
    }
    s.push_str(&table(&heads, &cols));
    s.push_str(&tail(test)?);
    Ok(s)
}

/// The clauses after the threads, the same in every dialect: `locations
/// [...]` when the test has one, and the condition.
pub(super) fn tail(test: &Test) -> Result<String, String> {
    let mut s = String::new();
    if !test.observed.is_empty() {
        let terms: Vec<String> = test
            .observed
            .iter()
            .map(|t| term(test, t))
            .collect::<Result<_, _>>()?;
        let _ = writeln!(s, "locations [{};]", terms.join("; "));
    }
    let prop = prop_text(&test.condition.prop, PropStyle::HERD, &|t: &Term| {
        term(test, t)
    })?;
    let _ = writeln!(s, "{} ({prop})", quantifier_text(test.condition.quantifier));
    Ok(s)
}

/// The init block: every location in [`Test::locations`] order (so that a
/// reparse numbers them alike), aliases as declarations, then registers.
fn init_block(test: &Test) -> Result<String, String> {
    // A location declared under a register's name would turn that
    // register into the location on the reparse.
    let registers: std::collections::HashSet<&str> = test
        .threads
        .iter()
        .flat_map(|th| {
            th.code
                .iter()
                .flat_map(|i| i.kind.registers())
                .chain(th.reg_init.iter().map(|(r, _)| r))
        })
        .map(String::as_str)
        .collect();
    let mut s = String::from("{ ");
    for (i, l) in test.locations.iter().enumerate() {
        if registers.contains(l.name.as_str()) {
            return Err(format!(
                "location '{}' has the name of a register: the printed test would not read back",
                l.name
            ));
        }
        match l.alias_of {
            Some(target) => {
                if target >= i {
                    return Err(format!("location '{}' aliases a later location", l.name));
                }
                let _ = write!(
                    s,
                    "{} @ {} aliases {}; ",
                    l.name,
                    proxy_name(l.proxy),
                    test.locations[target].name
                );
            }
            None => {
                let _ = write!(s, "{}={}; ", l.name, value(test, l.init));
            }
        }
    }
    for th in &test.threads {
        for (r, v) in &th.reg_init {
            let _ = write!(s, "P{}:{r}={}; ", th.id, value(test, *v));
        }
    }
    s.push_str("}\n");
    Ok(s)
}

fn proxy_name(p: Proxy) -> &'static str {
    match p {
        Proxy::Generic => "generic",
        Proxy::Surface => "surface",
        Proxy::Texture => "texture",
        Proxy::Constant => "constant",
    }
}

/// An init value: a number, or `&x` for an address.
pub(super) fn value(test: &Test, v: Value) -> String {
    match v {
        Value::Int(i) => i.to_string(),
        Value::Addr(l) => format!("&{}", test.locations[l].name),
    }
}

/// `P0`, or `P0@cta 1,gpu 0` (innermost level first), `P1@cpu 0`.
fn header(th: &Thread) -> String {
    if th.placement.is_empty() {
        return format!("P{}", th.id);
    }
    let levels: Vec<String> = th
        .placement
        .iter()
        .rev()
        .map(|l| format!("{} {}", l.level, l.id))
        .collect();
    format!("P{}@{}", th.id, levels.join(","))
}

/// The thread table, cells padded to their column's width.
fn table(heads: &[String], cols: &[Vec<String>]) -> String {
    let width: Vec<usize> = cols
        .iter()
        .zip(heads)
        .map(|(c, h)| {
            c.iter()
                .map(String::len)
                .chain([h.len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let row = |cells: Vec<&str>| -> String {
        let padded: Vec<String> = cells
            .iter()
            .zip(&width)
            .map(|(c, w)| format!(" {c:w$} "))
            .collect();
        format!("{};\n", padded.join("|"))
    };
    let mut s = row(heads.iter().map(String::as_str).collect());
    let rows = cols.iter().map(Vec::len).max().unwrap_or(0);
    for r in 0..rows {
        s.push_str(&row(cols
            .iter()
            .map(|c| c.get(r).map_or("", String::as_str))
            .collect()));
    }
    s
}

/// A condition term: `1:r0`, `x`, a number or `&x`.
fn term(test: &Test, t: &Term) -> Result<String, String> {
    Ok(match t {
        Term::Reg { thread, reg } => format!("{thread}:{reg}"),
        Term::Loc(l) => test.locations[*l].name.clone(),
        Term::Const(v) => value(test, *v),
    })
}

fn has(i: &Instr, tag: &str) -> bool {
    i.tags.iter().any(|t| t == tag)
}

/// The table lines of one instruction (two for an x86 branch: `CMP`
/// and the jump).
fn instr(test: &Test, th: &Thread, i: &Instr) -> Result<Vec<String>, String> {
    match th.arch {
        Arch::X86 => x86(test, i),
        Arch::Ptx => ptx(test, i).map(|l| vec![l]),
        a => Err(format!("no printer for {a:?} threads")),
    }
    .map_err(|e| format!("P{}: {e} ('{}')", th.id, i.text))
}

// ---------------------------------------------------------------- x86

fn x86_value(test: &Test, o: &Operand) -> Result<String, String> {
    match o {
        Operand::Reg(r) => Ok(r.clone()),
        Operand::Imm(Value::Int(v)) => Ok(format!("${v}")),
        Operand::Imm(Value::Addr(l)) => Err(format!(
            "the address of '{}' as an x86 operand",
            test.locations[*l].name
        )),
    }
}

fn x86_mem(test: &Test, a: &Address) -> String {
    match a {
        Address::Loc(l) => format!("[{}]", test.locations[*l].name),
        Address::Reg(r) => format!("[{r}]"),
    }
}

fn x86(test: &Test, i: &Instr) -> Result<Vec<String>, String> {
    let v = |o: &Operand| x86_value(test, o);
    Ok(vec![match &i.kind {
        InstrKind::Load { dst, addr } => format!("MOV {dst},{}", x86_mem(test, addr)),
        InstrKind::Store { addr, src } => format!("MOV {},{}", x86_mem(test, addr), v(src)?),
        InstrKind::Mov { dst, src } => format!("MOV {dst},{}", v(src)?),
        InstrKind::Fence if has(i, "MFENCE") => "MFENCE".into(),
        InstrKind::Rmw { dst, addr, op } => {
            let m = x86_mem(test, addr);
            match (dst, op) {
                (Some(d), RmwOp::Exch(Operand::Reg(r))) if d == r => format!("XCHG {m},{r}"),
                (Some(d), RmwOp::Bin(BinOp::Add, Operand::Reg(r))) if d == r => {
                    format!("LOCK XADD {m},{r}")
                }
                (
                    Some(d),
                    RmwOp::Cas {
                        expected: Operand::Reg(e),
                        new: Operand::Reg(r),
                    },
                ) if d == "EAX" && e == "EAX" => format!("LOCK CMPXCHG {m},{r}"),
                (
                    None,
                    RmwOp::Bin(
                        op @ (BinOp::Add | BinOp::Sub | BinOp::And | BinOp::Or | BinOp::Xor),
                        o,
                    ),
                ) => {
                    format!("LOCK {} {m},{}", op.name().to_uppercase(), v(o)?)
                }
                _ => return Err("an x86 read-modify-write of no x86 form".into()),
            }
        }
        InstrKind::Op { dst, op, a, b } => match (op, a) {
            (BinOp::Add | BinOp::Sub | BinOp::And | BinOp::Or | BinOp::Xor, Operand::Reg(r))
                if r == dst =>
            {
                format!("{} {dst},{}", op.name().to_uppercase(), v(b)?)
            }
            _ => return Err("an x86 operation of no x86 form".into()),
        },
        InstrKind::Branch { cmp, a, b, target } => {
            let j = match cmp {
                CmpOp::Eq => "JE",
                CmpOp::Ne => "JNE",
                CmpOp::Lt => "JL",
                CmpOp::Le => "JLE",
                CmpOp::Gt => "JG",
                CmpOp::Ge => "JGE",
            };
            return Ok(vec![
                format!("CMP {},{}", v(a)?, v(b)?),
                format!("{j} {target}"),
            ]);
        }
        InstrKind::Goto { target } => format!("JMP {target}"),
        InstrKind::Label(l) => format!("{l}:"),
        _ => return Err("an instruction of no x86 form".into()),
    }])
}

// ---------------------------------------------------------------- PTX

fn ptx_value(test: &Test, o: &Operand) -> String {
    match o {
        Operand::Reg(r) => r.clone(),
        Operand::Imm(Value::Int(v)) => v.to_string(),
        // In a value position a location stands for its address.
        Operand::Imm(Value::Addr(l)) => test.locations[*l].name.clone(),
    }
}

fn ptx_mem(test: &Test, a: &Address) -> String {
    match a {
        Address::Loc(l) => format!("[{}]", test.locations[*l].name),
        Address::Reg(r) => format!("[{r}]"),
    }
}

/// The `.sem.scope` qualifiers an access's tags stand for (`.weak`,
/// `.volatile`, `.relaxed.gpu`, ...).
fn ptx_sem_scope(i: &Instr, default_weak: bool) -> Result<String, String> {
    if has(i, "VOL") {
        return Ok(".volatile".into());
    }
    let sem = [
        ("WEAK", "weak"),
        ("RLX", "relaxed"),
        ("ACQ", "acquire"),
        ("REL", "release"),
        ("ACQ_REL", "acq_rel"),
        ("SC", "sc"),
    ]
    .iter()
    .find(|(t, _)| has(i, t))
    .map(|(_, n)| *n);
    let scope = [("CTA", "cta"), ("GPU", "gpu"), ("SYS", "sys")]
        .iter()
        .find(|(t, _)| has(i, t))
        .map(|(_, n)| *n);
    Ok(match (sem, scope) {
        (Some("weak"), None) => ".weak".into(),
        (None, None) if default_weak => ".weak".into(),
        (Some(sem), Some(scope)) if sem != "weak" => format!(".{sem}.{scope}"),
        _ => return Err("semantics and scope tags of no PTX form".into()),
    })
}

fn ptx_proxy(i: &Instr) -> Proxy {
    [Proxy::Surface, Proxy::Texture, Proxy::Constant]
        .into_iter()
        .find(|p| has(i, p.tag()))
        .unwrap_or(Proxy::Generic)
}

fn ptx(test: &Test, i: &Instr) -> Result<String, String> {
    let v = |o: &Operand| ptx_value(test, o);
    Ok(match &i.kind {
        InstrKind::Load { dst, addr } => {
            let m = ptx_mem(test, addr);
            match ptx_proxy(i) {
                Proxy::Generic => format!("ld{} {dst}, {m}", ptx_sem_scope(i, true)?),
                Proxy::Surface => format!("suld{} {dst}, {m}", ptx_sem_scope(i, true)?),
                Proxy::Texture => format!("tld.weak {dst}, {m}"),
                Proxy::Constant => format!("ldc {dst}, {m}"),
            }
        }
        InstrKind::Store { addr, src } => {
            let base = match ptx_proxy(i) {
                Proxy::Generic => "st",
                Proxy::Surface => "sust",
                _ => return Err("a texture or constant store".into()),
            };
            format!(
                "{base}{} {}, {}",
                ptx_sem_scope(i, true)?,
                ptx_mem(test, addr),
                v(src)
            )
        }
        InstrKind::Rmw { dst, addr, op } => {
            let (name, args) = match op {
                RmwOp::Bin(b, o) => (b.name(), vec![v(o)]),
                RmwOp::Exch(o) => ("exch", vec![v(o)]),
                RmwOp::Cas { expected, new } => ("cas", vec![v(expected), v(new)]),
                RmwOp::Inc(o) => ("inc", vec![v(o)]),
                RmwOp::Dec(o) => ("dec", vec![v(o)]),
            };
            if name == "mul" {
                return Err("a multiplying read-modify-write".into());
            }
            let surface = match ptx_proxy(i) {
                Proxy::Generic => false,
                Proxy::Surface => true,
                _ => return Err("a texture or constant read-modify-write".into()),
            };
            let quals = ptx_sem_scope(i, false)?;
            let mut operands = Vec::new();
            let base = match dst {
                Some(d) => {
                    operands.push(d.clone());
                    if surface { "suatom" } else { "atom" }
                }
                None => {
                    if surface {
                        "sured"
                    } else {
                        "red"
                    }
                }
            };
            operands.push(ptx_mem(test, addr));
            operands.extend(args);
            format!("{base}{quals}.{name} {}", operands.join(", "))
        }
        InstrKind::Fence => {
            if has(i, "PROXY") {
                let kind = if has(i, "ALIAS") {
                    "alias"
                } else {
                    match ptx_proxy(i) {
                        Proxy::Generic => return Err("a proxy fence of no kind".into()),
                        p => proxy_name(p),
                    }
                };
                format!("fence.proxy.{kind}")
            } else {
                format!("fence{}", ptx_sem_scope(i, false)?)
            }
        }
        InstrKind::Barrier {
            kind,
            id,
            count,
            executors,
        } => {
            let op = match kind {
                BarrierKind::Sync => "sync",
                BarrierKind::Arrive => "arrive",
                BarrierKind::Red => return Err("a reduction barrier".into()),
            };
            match (executors, count) {
                // Dat3M's form: an instance tag (the id again), then the id.
                (true, None) => format!("bar.cta.{op} {}, {}", v(id), v(id)),
                (false, None) => format!("bar.{op} {}", v(id)),
                (false, Some(c)) => format!("bar.{op} {}, {}", v(id), v(c)),
                (true, Some(_)) => return Err("a counted barrier waiting for executors".into()),
            }
        }
        InstrKind::Mov { dst, src } => format!("mov {dst}, {}", v(src)),
        InstrKind::Op { dst, op, a, b } => {
            format!("{} {dst}, {}, {}", op.name(), v(a), v(b))
        }
        InstrKind::Branch { cmp, a, b, target } => {
            let m = match cmp {
                CmpOp::Eq => "beq",
                CmpOp::Ne => "bne",
                CmpOp::Lt => "blt",
                CmpOp::Le => "ble",
                CmpOp::Gt => "bgt",
                CmpOp::Ge => "bge",
            };
            format!("{m} {}, {}, {target}", v(a), v(b))
        }
        InstrKind::Goto { target } => format!("goto {target}"),
        InstrKind::Label(l) => format!("{l}:"),
    })
}
