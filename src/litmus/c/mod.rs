//! The C / OpenCL front end: herd's C litmus format.
//!
//! ```text
//! C name | OpenCL name | OPENCL name      first line
//! { [x] = 0; atomic_int y = 1; 0:r0 = 0; }  init block
//! P0@wg 0, dev 0 (global atomic_int* x, volatile int* y) {
//!   int r0 = atomic_load_explicit(x, memory_order_acquire, memory_scope_device);
//!   if (r0 == 1) { *y = 1; }
//! }
//! exists (0:r0 = 1 /\ y = 1)                 shared condition syntax
//! ```
//!
//! Each thread is a function whose parameters are pointers to the shared
//! locations of the same name; the parameter name is also a register
//! holding the location's address (so `0:x` in a condition is `&x`, as in
//! herd). Locals are registers. The code is parsed into a small AST, then
//! compiled to IR: expressions into `Mov`/`Op`/loads into fresh registers
//! (`%t0`, ...), conditions into branches to fresh labels (`%L0`, ...),
//! loops into backward jumps (bounded by `--unroll` like every loop).
//!
//! Tags (docs/cat-environment.md): `C` on every event; one memory order
//! `NA RLX ACQ REL ACQ_REL SC`; a scope `WI WG DEV SYS` on atomics, fences
//! and barriers; the memory region `GLOBAL`/`LOCAL` (of the location for
//! accesses, of the fence flags for fences and barriers); `NAL` on accesses
//! to non-atomic locations; `VOL` on volatile (still non-atomic) accesses; `REMOTE` on
//! remote-scope-promoted atomics (a trailing `remote` argument, see
//! docs/language-models.md).
//!
//! The one scope hierarchy is work-item < work-group < device < system;
//! OpenCL names (`memory_scope_work_group`, ...) and CUDA-style names
//! (`memory_scope_block`, `cta`, `gpu`, ...) both map onto it, in scope
//! constants and in thread headers (`P0@wg 0, dev 0` = `P0@cta 0,gpu 0`).
//!
//! The pipeline, one module each: `lex` (tokens), `parse` (source to the
//! syntax tree of `ast`), `lower` (tree to IR instructions); this
//! module holds the dialect and the driver that runs them per thread and
//! hands the clauses after the threads to [`super::tail`].

mod ast;
mod lex;
mod lower;
mod parse;

use std::collections::HashMap;

use crate::diag::Diagnostic;
use crate::ir::{Address, Arch, InstrKind, LocId, Reg, Test, Thread, Value};
use crate::lex_util;
use crate::litmus::dialect::{Cursor, Dialect, LocTable, ThreadCtx};
use crate::litmus::lexer::{Lexer, Tok};
use crate::litmus::tail::TailThread;
use crate::litmus::token_parser::TokenParser;
use crate::litmus::{table, tail};
use ast::ThreadSrc;
use lex::CLex;
use lower::{Gen, LocFacts};
use parse::Parser;

/// The C dialect, as seen by the shared condition parser.
pub struct CDialect;

/// The one instance.
pub static C_DIALECT: CDialect = CDialect;

impl Dialect for CDialect {
    fn arch(&self) -> Arch {
        Arch::C
    }

    fn scope_levels(&self) -> &'static [&'static str] {
        &["sys", "dev", "wg"]
    }

    fn normalize_reg(&self, name: &str) -> Option<Reg> {
        let mut cs = name.chars();
        let ok = cs
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && cs.all(|c| c.is_ascii_alphanumeric() || c == '_');
        ok.then(|| name.to_string())
    }

    fn register_hint(&self) -> &'static str {
        "a local variable or parameter of the thread, like 0:r0"
    }

    fn parse_instr(
        &self,
        cur: &mut Cursor<'_>,
        _ctx: &mut ThreadCtx<'_>,
    ) -> Result<Option<(InstrKind, Vec<String>)>, Diagnostic> {
        Err(cur
            .error(cur.pos(), "unsupported: C code in a thread table")
            .expected("C threads written as functions: P0(int* x) { ... }"))
    }
}

// ---------------------------------------------------------------------------
// Driver
// ---------------------------------------------------------------------------

/// Parses a C or OpenCL litmus test. `lx` is at the start of the file;
/// `arch_name` is what goes into [`Test::arch`] (`C` or `OpenCL`).
pub fn parse(lx: Lexer<'_>, arch_name: &str) -> Result<Test, Diagnostic> {
    let file = lx.file();
    let src = lx.src();
    let mut head = lx;
    head.skip_ws()?;
    let Some((_arch, _)) = head.read_word() else {
        return Err(
            Diagnostic::new(file, head.pos(), "empty file").expected("a header line like 'C name'")
        );
    };
    let Some((name, _)) = head.read_word() else {
        return Err(Diagnostic::new(file, head.pos(), "missing test name")
            .expected("a test name on the first line"));
    };
    head.skip_line()?;
    let mut p = Parser {
        lx: CLex {
            lx: head,
            ocaml: true,
        },
        file,
        depth: 0,
        peeked: lex_util::Lookahead::default(),
    };
    // Preamble: doc strings and Key=Value lines.
    loop {
        let t = p.peek()?;
        match &t.tok {
            Tok::Str(_) => {
                p.next()?;
            }
            Tok::Ident(_) if p.peeked.peek_second(&p.lx)?.is_punct("=") => {
                // Key=Value: skip to the end of the line.
                p.lx.skip_ws()?;
                p.lx.lx.bump_while(|c| c != '\n');
            }
            _ => break,
        }
    }
    let mut locs = LocTable::default();
    let mut facts = LocFacts::default();
    let mut reg_inits = Vec::new();
    p.parse_init(&mut locs, &mut facts, &mut reg_inits)?;

    let mut srcs: Vec<ThreadSrc> = Vec::new();
    loop {
        let t = p.peek()?;
        let is_thread = t.ident().is_some_and(|s| table::thread_number(s).is_some());
        if !is_thread {
            if srcs.is_empty() {
                return Err(p.unexpected(&t, "a thread function like P0(int* x) { ... }"));
            }
            break;
        }
        srcs.push(p.parse_thread(srcs.len())?);
    }

    // Parameters become locations (and registers holding their address).
    let default_scope = if arch_name.eq_ignore_ascii_case("C") {
        "SYS"
    } else {
        "DEV"
    };
    let mut reg_bases: Vec<HashMap<Reg, LocId>> = Vec::new();
    let mut threads = Vec::new();
    let mut tails = Vec::new();
    for ts in &srcs {
        let mut params = HashMap::new();
        let mut reg_init = Vec::new();
        for prm in &ts.params {
            let l = locs.id(&prm.name);
            facts.record(l, prm.atomic, prm.local);
            params.insert(prm.name.clone(), (l, prm.volatile));
            reg_init.push((prm.name.clone(), Value::Addr(l)));
        }
        let mut g = Gen {
            file,
            src,
            params,
            code: Vec::new(),
            ntmp: 0,
            nlabel: 0,
            default_scope,
            facts: &mut facts,
            reg_base: HashMap::new(),
            pos: ts.pos,
            span: (0, 0),
            text: None,
            user_labels: HashMap::new(),
            jumps: Vec::new(),
        };
        g.body(&ts.body)?;
        reg_bases.push(g.reg_base);
        let code = g.code;
        threads.push(Thread {
            id: ts.id,
            arch: Arch::C,
            placement: Vec::new(),
            reg_init: Vec::new(),
            code,
        });
        tails.push(TailThread {
            pos: ts.pos,
            dialect: &C_DIALECT,
            placement: ts.placement.clone(),
            reg_init,
        });
    }
    for (t, reg, v, pos) in reg_inits {
        let n = tails.len();
        let Some(th) = tails.get_mut(t) else {
            return Err(Diagnostic::new(
                file,
                pos,
                format!("unknown thread P{t} in the init block"),
            )
            .expected(format!("a thread between P0 and P{}", n.saturating_sub(1))));
        };
        if let Some(slot) = th.reg_init.iter_mut().find(|(r, _)| *r == reg) {
            return Err(Diagnostic::new(
                file,
                pos,
                format!("'{}' is a pointer parameter of P{t}", slot.0),
            )
            .expected("a local variable of the thread"));
        }
        th.reg_init.push((reg, v));
    }

    // Hand the rest (scopes, locations, condition) to the shared parser.
    let (observed, condition) = tail::parse_tail(p.lx.lx, &mut tails, &mut locs)?;

    // Location-dependent tags.
    for (th, bases) in threads.iter_mut().zip(&reg_bases) {
        for ins in &mut th.code {
            let Some(addr) = ins.kind.address() else {
                continue;
            };
            // An array element takes the facts of its array.
            let l = match addr {
                Address::Loc(l) => *l,
                Address::Reg(r) => bases[r],
            };
            let b = facts.base(l);
            let local = facts.local.contains(&l) || facts.local.contains(&b);
            let atomic = facts.atomic.contains(&l) || facts.atomic.contains(&b);
            ins.tags
                .push(if local { "LOCAL" } else { "GLOBAL" }.to_string());
            if !atomic {
                ins.tags.push("NAL".to_string());
            }
        }
    }
    for (th, tail) in threads.iter_mut().zip(tails) {
        th.placement = tail.placement;
        th.reg_init = tail.reg_init;
    }
    Ok(Test {
        arch: arch_name.to_string(),
        name,
        file: None,
        locations: locs.into_locations(),
        threads,
        condition,
        observed,
    })
}
