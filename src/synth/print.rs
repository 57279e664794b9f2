//! Printers: a synthesised test as litmus text in its vocabulary's
//! dialect (herd's table format for X86 and PTX, thread functions for
//! C/OpenCL), parsed back by litmix's own front ends before any use.

use super::program::{Cond, SProgram, STerm};
use super::vocab::{Dialect, Vocab};
use crate::mapping::enumerate::{Place, loc_name};
use std::fmt::Write as _;

const X86_REGS: &[&str] = &[
    "EAX", "EBX", "ECX", "EDX", "ESI", "EDI", "R8D", "R9D", "R10D", "R11D", "R12D", "R13D", "R14D",
    "R15D",
];

/// The name of register `reg` in `dialect`.
pub fn reg_name(dialect: Dialect, reg: u8) -> String {
    match dialect {
        Dialect::X86 => X86_REGS
            .get(reg as usize)
            .map_or_else(|| format!("R{reg}"), |r| r.to_string()),
        _ => format!("r{reg}"),
    }
}

/// A term as herd writes it in a condition (`1:EAX`, `x`, `[x]` in C).
pub fn term_text(dialect: Dialect, t: STerm) -> String {
    match t {
        STerm::Reg { thread, reg } => format!("{thread}:{}", reg_name(dialect, reg)),
        STerm::Loc(l) => match dialect {
            Dialect::C | Dialect::OpenCl => format!("[{}]", loc_name(l as usize)),
            _ => loc_name(l as usize),
        },
    }
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
    if cond.is_empty() {
        return "exists (true)".into();
    }
    let parts: Vec<String> = cond
        .iter()
        .map(|&(t, v)| format!("{}={v}", term_text(dialect, t)))
        .collect();
    format!("exists ({})", parts.join(" /\\ "))
}

/// The lines of one thread.
fn thread_lines(vocab: &Vocab, p: &SProgram, t: usize) -> Vec<String> {
    let mut out = Vec::new();
    for o in &p.threads[t].ops {
        let e = &vocab.entries[o.entry];
        for l in &e.lines {
            out.push(
                l.replace("{r}", &reg_name(vocab.dialect, o.reg))
                    .replace("{x}", &loc_name(o.loc as usize))
                    .replace("{v}", &o.value.to_string()),
            );
        }
    }
    out
}

/// The test as litmus text: `name`, a quoted comment, the program, the
/// condition.
pub fn print(vocab: &Vocab, p: &SProgram, cond: &Cond, name: &str, comment: &str) -> String {
    let nl = p.locations();
    let mut s = String::new();
    let _ = writeln!(s, "{} {name}", vocab.dialect.arch());
    if !comment.is_empty() {
        let _ = writeln!(s, "\"{}\"", comment.replace('"', "'"));
    }
    match vocab.dialect {
        Dialect::X86 | Dialect::Ptx => {
            s.push_str("{ ");
            for l in 0..nl {
                let _ = write!(s, "{}=0; ", loc_name(l));
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
            let row = |cells: Vec<&str>| -> String {
                let padded: Vec<String> = cells
                    .iter()
                    .enumerate()
                    .map(|(t, c)| format!(" {:w$} ", c, w = width[t]))
                    .collect();
                format!("{};\n", padded.join("|"))
            };
            s.push_str(&row(heads.iter().map(String::as_str).collect()));
            for r in 0..rows {
                s.push_str(&row(cols
                    .iter()
                    .map(|c| c.get(r).map_or("", String::as_str))
                    .collect()));
            }
        }
        Dialect::C | Dialect::OpenCl => {
            s.push_str("{ ");
            for l in 0..nl {
                let _ = write!(s, "[{}]=0; ", loc_name(l));
            }
            s.push_str("}\n");
            let params: Vec<String> = (0..nl)
                .map(|l| format!("atomic_int* {}", loc_name(l)))
                .collect();
            for (t, th) in p.threads.iter().enumerate() {
                let place = match th.place {
                    Place::Gpu { dev, wg } => format!("@wg {wg}, dev {dev}"),
                    _ => String::new(),
                };
                let _ = writeln!(s, "\nP{t}{place} ({}) {{", params.join(", "));
                for l in thread_lines(vocab, p, t) {
                    let _ = writeln!(s, "  {l}");
                }
                s.push_str("}\n");
            }
            s.push('\n');
        }
    }
    let _ = writeln!(s, "{}", condition_text(vocab.dialect, cond));
    s
}
