//! Compound CPU+GPU tests: `X86+PTX name` (also accepted: `PTX+X86`).
//!
//! ```text
//! X86+PTX MP-ptx-x86
//! { x=0; y=0; }
//!  P0@cta 0,gpu 0         | P1@cpu          ;
//!  st.weak x, 1           | MOV EAX,[y]     ;
//!  st.release.sys y, 1    | MOV EBX,[x]     ;
//! exists (P1:EAX == 1 /\ P1:EBX == 0)
//! ```
//!
//! Each thread's dialect is chosen from its header: a thread placed in a
//! `cpu` (`P0@cpu`, `P0@cpu 1`: several CPU devices) is an x86 thread in
//! herd's x86 syntax; a thread placed in a `cta`/`gpu` is a PTX thread. Both
//! share the locations, the init block and the condition, which may mix
//! registers of both kinds (`P1:EAX == 1 /\ P0:r0 == 0`).
//!
//! The scope tree has the system at its root and the CPU(s) and GPU(s)
//! below it. herd's `scopes:` clause expresses the same tree, e.g.
//! `scopes: (system (cpu P0) (gpu (cta P1) (cta P2)))`; with it the headers
//! may be bare (`P0 | P1`): a bare header's dialect is then read from the
//! clause (a thread under a `cpu` node is x86, any other PTX). A bare header
//! without a `scopes:` clause placing the thread is an error.
//!
//! x86 threads get placement `[cpu N]`; PTX threads keep their `gpu`/`cta`
//! placement. Events carry the arch tag of their thread (`X86` or `PTX`);
//! x86 events carry no scope tag: models treat them as system-scoped
//! (see `models/cmm.cat`).

use std::collections::HashMap;

use super::dialect::{Cursor, Dialect, DialectSelector, ThreadCtx, ThreadHeader};
use super::lexer::{Lexer, Tok};
use super::table;
use super::{ptx, x86};
use crate::diag::Diagnostic;
use crate::ir::{Arch, InstrKind, Reg, Test};

/// The name written into [`Test::arch`] for compound tests.
pub const ARCH: &str = "X86+PTX";

/// x86 on a CPU of a compound system: the x86 dialect with a `cpu` level.
pub struct X86OnCpu;

/// The instance used for x86 threads of compound tests.
pub static X86_ON_CPU: X86OnCpu = X86OnCpu;

impl Dialect for X86OnCpu {
    fn arch(&self) -> Arch {
        Arch::X86
    }

    fn scope_levels(&self) -> &'static [&'static str] {
        &["sys", "cpu"]
    }

    fn normalize_reg(&self, name: &str) -> Option<Reg> {
        x86::X86_DIALECT.normalize_reg(name)
    }

    fn register_hint(&self) -> &'static str {
        x86::X86_DIALECT.register_hint()
    }

    fn default_instance(&self, level: &str) -> Option<u32> {
        (level == "cpu").then_some(0)
    }

    fn parse_instr(
        &self,
        cur: &mut Cursor<'_>,
        ctx: &mut ThreadCtx<'_>,
    ) -> Result<Option<(InstrKind, Vec<String>)>, Diagnostic> {
        x86::X86_DIALECT.parse_instr(cur, ctx)
    }
}

/// Parses a compound test; `lx` is at the start of the file.
pub fn parse(lx: Lexer<'_>) -> Result<Test, Diagnostic> {
    let tree = scan_scope_tree(lx);
    let select = |h: &ThreadHeader| -> Result<&'static dyn Dialect, Diagnostic> {
        let levels: Vec<String> = if h.items.is_empty() {
            tree.get(&h.id).cloned().unwrap_or_default()
        } else {
            h.items.iter().map(|i| i.level.clone()).collect()
        };
        if levels.iter().any(|l| l == "cpu") {
            Ok(&X86_ON_CPU)
        } else if levels.iter().any(|l| l == "gpu" || l == "cta") {
            Ok(&ptx::PTX)
        } else {
            Err(lx
                .error(
                    h.pos,
                    format!("P{}: an X86+PTX thread must say its device", h.id),
                )
                .expected(
                    "a header like P0@cpu (x86) or P1@cta 0,gpu 0 (PTX), \
                     or a scopes: clause placing the thread",
                ))
        }
    };
    table::parse_table_test(lx, ARCH, &select as &DialectSelector<'_>)
}

/// Looks ahead for a `scopes:` clause and returns, for each thread it
/// places, the level names on its path (`system` written `sys`). Anything it
/// cannot read is left to the real parser, which reports it.
fn scan_scope_tree(mut lx: Lexer<'_>) -> HashMap<usize, Vec<String>> {
    let mut out = HashMap::new();
    loop {
        let Ok(t) = lx.next_token() else {
            return out;
        };
        if t.is_eof() {
            return out;
        }
        if t.is_ident("scopes") && lx.peek_token().is_ok_and(|n| n.is_punct(":")) {
            let _ = lx.next_token();
            let mut path = Vec::new();
            while lx.peek_token().is_ok_and(|n| n.is_punct("(")) {
                if scan_node(&mut lx, &mut path, &mut out, 0).is_none() {
                    break;
                }
            }
            return out;
        }
    }
}

fn scan_node(
    lx: &mut Lexer<'_>,
    path: &mut Vec<String>,
    out: &mut HashMap<usize, Vec<String>>,
    depth: u32,
) -> Option<()> {
    if depth > 64 || !lx.next_token().ok()?.is_punct("(") {
        return None;
    }
    let level = match lx.next_token().ok()?.tok {
        Tok::Ident(s) => s.to_ascii_lowercase(),
        _ => return None,
    };
    path.push(if level == "system" {
        "sys".to_string()
    } else {
        level
    });
    loop {
        let t = lx.peek_token().ok()?;
        if t.is_punct(")") {
            lx.next_token().ok()?;
            break;
        }
        if t.is_punct("(") {
            scan_node(lx, path, out, depth + 1)?;
            continue;
        }
        lx.next_token().ok()?;
        let n = t.ident().and_then(table::thread_number)?;
        out.insert(n, path.clone());
    }
    path.pop();
    Some(())
}
