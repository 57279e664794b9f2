//! Printers: a synthesised test as litmus text in its vocabulary's
//! dialect (herd's table format for X86 and PTX, thread functions for
//! C/OpenCL), parsed back by litmix's own front ends before any use.

use super::program::{Cond, SProgram, STerm};
use super::vocab::{Dialect, Vocab};
use crate::mapping::enumerate::{LOC_NAMES, Place, loc_name};
use std::fmt::Write as _;

const X86_REGS: &[&str] = &[
    "EAX", "EBX", "ECX", "EDX", "ESI", "EDI", "R8D", "R9D", "R10D", "R11D", "R12D", "R13D", "R14D",
    "R15D",
];

/// Writes the name of register `reg` in `dialect` to `out`.
fn write_reg(out: &mut String, dialect: Dialect, reg: u8) {
    match (dialect, X86_REGS.get(reg as usize)) {
        (Dialect::X86, Some(r)) => out.push_str(r),
        (Dialect::X86, None) => {
            let _ = write!(out, "R{reg}");
        }
        _ => {
            let _ = write!(out, "r{reg}");
        }
    }
}

/// Writes the name of location `l` to `out` (as [`loc_name`], without
/// allocating for the first ones).
fn write_loc(out: &mut String, l: usize) {
    match LOC_NAMES.get(l) {
        Some(n) => out.push_str(n),
        None => out.push_str(&loc_name(l)),
    }
}

/// The name of register `reg` in `dialect`.
pub fn reg_name(dialect: Dialect, reg: u8) -> String {
    let mut s = String::new();
    write_reg(&mut s, dialect, reg);
    s
}

/// Writes a term as herd writes it in a condition (`1:EAX`, `x`, `[x]`
/// in C) to `out`.
fn write_term(out: &mut String, dialect: Dialect, t: STerm) {
    match t {
        STerm::Reg { thread, reg } => {
            let _ = write!(out, "{thread}:");
            write_reg(out, dialect, reg);
        }
        STerm::Loc(l) => match dialect {
            Dialect::C | Dialect::OpenCl => {
                out.push('[');
                write_loc(out, l as usize);
                out.push(']');
            }
            _ => write_loc(out, l as usize),
        },
    }
}

/// A term as herd writes it in a condition (`1:EAX`, `x`, `[x]` in C).
pub fn term_text(dialect: Dialect, t: STerm) -> String {
    let mut s = String::new();
    write_term(&mut s, dialect, t);
    s
}

/// The term as litmix's results name it (`1:EAX`, `x`).
pub fn term_result_name(dialect: Dialect, t: STerm) -> String {
    match t {
        STerm::Reg { thread, reg } => format!("{thread}:{}", reg_name(dialect, reg)),
        STerm::Loc(l) => loc_name(l as usize),
    }
}

/// `exists (a=1 /\ b=2)`; `exists (true)` when `cond` is empty.
pub fn condition_text(dialect: Dialect, cond: &Cond) -> String {
    let mut s = String::new();
    write_condition(&mut s, dialect, cond);
    s
}

fn write_condition(out: &mut String, dialect: Dialect, cond: &Cond) {
    if cond.is_empty() {
        out.push_str("exists (true)");
        return;
    }
    out.push_str("exists (");
    for (i, &(t, v)) in cond.iter().enumerate() {
        if i > 0 {
            out.push_str(" /\\ ");
        }
        write_term(out, dialect, t);
        let _ = write!(out, "={v}");
    }
    out.push(')');
}

/// Writes one vocabulary line with its `{r}`, `{x}` and `{v}` filled in.
fn write_line(out: &mut String, dialect: Dialect, line: &str, o: &super::program::SOp) {
    let mut rest = line;
    while let Some(i) = rest.find('{') {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        if let Some(t) = tail.strip_prefix("{r}") {
            write_reg(out, dialect, o.reg);
            rest = t;
        } else if let Some(t) = tail.strip_prefix("{x}") {
            write_loc(out, o.loc as usize);
            rest = t;
        } else if let Some(t) = tail.strip_prefix("{v}") {
            let _ = write!(out, "{}", o.value);
            rest = t;
        } else {
            out.push('{');
            rest = &tail[1..];
        }
    }
    out.push_str(rest);
}

/// The lines of one thread.
fn thread_lines(vocab: &Vocab, p: &SProgram, t: usize) -> Vec<String> {
    let mut out = Vec::new();
    for o in &p.threads[t].ops {
        let e = &vocab.entries[o.entry];
        for l in &e.lines {
            let mut line = String::with_capacity(l.len() + 8);
            write_line(&mut line, vocab.dialect, l, o);
            out.push(line);
        }
    }
    out
}

/// Writes one row of a table test: each column's cell padded to its width,
/// columns apart by `|`.
fn write_row<'a>(s: &mut String, width: &[usize], cell: impl Fn(usize) -> &'a str) {
    for (t, w) in width.iter().enumerate() {
        if t > 0 {
            s.push('|');
        }
        let c = cell(t);
        s.push(' ');
        s.push_str(c);
        for _ in c.len()..*w {
            s.push(' ');
        }
        s.push(' ');
    }
    s.push_str(";\n");
}

/// Whether a thread's parse depends on nothing but the thread itself
/// (its column and header in herd's table format, X86 and PTX: its code
/// names its locations, which the init block declares in number order),
/// so that it parses the same, but for its number, in every program. In
/// C and OpenCL a thread's header lists the program's locations as its
/// parameters, and a thread printed without a place is placed by its
/// number.
pub fn thread_parse_is_context_free(dialect: Dialect) -> bool {
    matches!(dialect, Dialect::X86 | Dialect::Ptx)
}

/// The test as litmus text: `name`, a quoted comment, the program, the
/// condition.
pub fn print(vocab: &Vocab, p: &SProgram, cond: &Cond, name: &str, comment: &str) -> String {
    print_with_locations(vocab, p, p.locations(), cond, name, comment)
}

/// As [`print`], declaring locations `0..nl` (at least the program's
/// own): a thread printed alone with the locations of the program it
/// belongs to parses as it does within that program.
pub fn print_with_locations(
    vocab: &Vocab,
    p: &SProgram,
    nl: usize,
    cond: &Cond,
    name: &str,
    comment: &str,
) -> String {
    let nl = nl.max(p.locations());
    let mut s = String::with_capacity(256);
    let _ = writeln!(s, "{} {name}", vocab.dialect.arch());
    if !comment.is_empty() {
        let _ = writeln!(s, "\"{}\"", comment.replace('"', "'"));
    }
    match vocab.dialect {
        Dialect::X86 | Dialect::Ptx => {
            s.push_str("{ ");
            for l in 0..nl {
                write_loc(&mut s, l);
                s.push_str("=0; ");
            }
            s.push_str("}\n");
            let cols: Vec<Vec<String>> = (0..p.threads.len())
                .map(|t| thread_lines(vocab, p, t))
                .collect();
            let heads: Vec<String> = p
                .threads
                .iter()
                .enumerate()
                .map(|(t, th)| match th.place {
                    Place::Gpu { dev, wg } => format!("P{t}@cta {wg},gpu {dev}"),
                    _ => format!("P{t}"),
                })
                .collect();
            let width: Vec<usize> = (0..cols.len())
                .map(|t| {
                    cols[t]
                        .iter()
                        .map(String::len)
                        .chain([heads[t].len()])
                        .max()
                        .unwrap_or(0)
                })
                .collect();
            let rows = cols.iter().map(Vec::len).max().unwrap_or(0);
            write_row(&mut s, &width, |t| heads[t].as_str());
            for r in 0..rows {
                write_row(&mut s, &width, |t| {
                    cols[t].get(r).map_or("", String::as_str)
                });
            }
        }
        Dialect::C | Dialect::OpenCl => {
            s.push_str("{ ");
            for l in 0..nl {
                s.push('[');
                write_loc(&mut s, l);
                s.push_str("]=0; ");
            }
            s.push_str("}\n");
            let mut params = String::new();
            for l in 0..nl {
                if l > 0 {
                    params.push_str(", ");
                }
                params.push_str("atomic_int* ");
                write_loc(&mut params, l);
            }
            for (t, th) in p.threads.iter().enumerate() {
                let _ = write!(s, "\nP{t}");
                if let Place::Gpu { dev, wg } = th.place {
                    let _ = write!(s, "@wg {wg}, dev {dev}");
                }
                let _ = writeln!(s, " ({params}) {{");
                for o in &th.ops {
                    for l in &vocab.entries[o.entry].lines {
                        s.push_str("  ");
                        write_line(&mut s, vocab.dialect, l, o);
                        s.push('\n');
                    }
                }
                s.push_str("}\n");
            }
            s.push('\n');
        }
    }
    write_condition(&mut s, vocab.dialect, cond);
    s.push('\n');
    s
}
