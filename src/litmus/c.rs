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

use std::collections::{HashMap, HashSet};

use super::dialect::{Cursor, Dialect, LocTable, ThreadCtx};
use super::lexer::{Lexer, Tok, Token};
use super::tail::TailThread;
use super::token_parser::{Nesting, TokenParser};
use super::{table, tail};
use crate::diag::{Diagnostic, HerdForm};
use crate::ir::{
    Address, Arch, BarrierKind, BinOp, CmpOp, Instr, InstrKind, LocId, Operand, Pos, Reg, RmwOp,
    ScopeLevel, Test, Thread, Value,
};
use crate::lex_util;

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
// Tokens
// ---------------------------------------------------------------------------

const C_PUNCTS: &[&str] = &[
    "/\\", "\\/", "&&", "||", "==", "!=", "<=", ">=", "<<", ">>", "++", "--", "+=", "-=", "->",
    "{", "}", "(", ")", "[", "]", ";", ",", ":", "=", "<", ">", "!", "~", "&", "|", "^", "+", "-",
    "*", "/", "%", "?", ".", "@",
];

static C_PUNCT_TABLE: std::sync::LazyLock<lex_util::PunctTable> =
    std::sync::LazyLock::new(|| lex_util::PunctTable::new(C_PUNCTS));

/// An on-demand tokenizer for C code: `//` and `/* */` comments, and
/// OCaml-style `(* *)` comments outside thread bodies. Characters, strings
/// and `(* *)` comments are read as by the litmus [`Lexer`] it wraps.
#[derive(Clone, Copy)]
struct CLex<'a> {
    lx: Lexer<'a>,
    /// Whether `(*` starts a comment (false inside code, where `(*p)` is C).
    ocaml: bool,
}

impl lex_util::Relex for CLex<'_> {
    type Token = Token;
    type Error = Diagnostic;
    fn lex(&mut self) -> Result<Token, Diagnostic> {
        self.next()
    }
    fn same_state(&self, other: &Self) -> bool {
        self.same_place(other)
    }
}

impl CLex<'_> {
    /// Current byte offset.
    fn off(&self) -> usize {
        self.lx.offset()
    }

    /// Whether `other` is at the same place with the same comment rule.
    fn same_place(&self, other: &CLex<'_>) -> bool {
        self.ocaml == other.ocaml && self.lx.same_place(&other.lx)
    }

    fn skip_ws(&mut self) -> Result<(), Diagnostic> {
        let lx = &mut self.lx;
        loop {
            match lx.peek_char() {
                Some(c) if c.is_whitespace() || c == '\u{feff}' => {
                    lx.bump();
                }
                Some('/') if lx.starts_with("//") => lx.bump_while(|c| c != '\n'),
                Some('/') if lx.starts_with("/*") => {
                    let start = lx.pos();
                    lx.bump();
                    lx.bump();
                    loop {
                        if lx.starts_with("*/") {
                            lx.bump();
                            lx.bump();
                            break;
                        }
                        if lx.bump().is_none() {
                            return Err(lx
                                .error(start, "unterminated comment '/*'")
                                .expected("'*/' before the end of the file"));
                        }
                    }
                }
                Some('(') if self.ocaml && lx.starts_with("(*") => lx.skip_comment()?,
                _ => return Ok(()),
            }
        }
    }

    fn next(&mut self) -> Result<Token, Diagnostic> {
        self.skip_ws()?;
        let lx = &mut self.lx;
        let pos = lx.pos();
        let start = lx.offset();
        let Some(c) = lx.peek_char() else {
            return Ok(Token {
                tok: Tok::Eof,
                pos,
                start,
                end: start,
            });
        };
        let tok = if c.is_ascii_alphabetic() || c == '_' {
            lx.bump_while(|c| c.is_ascii_alphanumeric() || c == '_');
            Tok::Ident(lx.src()[start..lx.offset()].to_string())
        } else if c.is_ascii_digit() {
            lx.bump_while(lex_util::is_number_char);
            let text = &lx.src()[start..lx.offset()];
            match lex_util::int_literal(text) {
                Some(Ok(v)) => Tok::Int(v),
                _ => {
                    return Err(lx
                        .error(pos, format!("bad number '{text}'"))
                        .expected("a decimal or 0x-prefixed integer that fits in 64 bits"));
                }
            }
        } else if c == '"' {
            Tok::Str(lx.read_string()?)
        } else if let Some(p) = lx.eat_punct(&C_PUNCT_TABLE) {
            Tok::Punct(p)
        } else {
            return Err(lx
                .error(pos, format!("unexpected character '{c}'"))
                .expected("C code: an identifier, a number or an operator"));
        };
        Ok(Token {
            tok,
            pos,
            start,
            end: lx.offset(),
        })
    }

    fn peek2(&self) -> Result<(Token, Token), Diagnostic> {
        let mut c = *self;
        let a = c.next()?;
        let b = c.next()?;
        Ok((a, b))
    }
}

// ---------------------------------------------------------------------------
// AST
// ---------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BinKind {
    Arith(BinOp),
    Cmp(CmpOp),
    LAnd,
    LOr,
}

#[derive(Clone, Debug)]
enum ExprKind {
    Int(i64),
    Var(String),
    Deref(Box<Expr>),
    AddrOf(String),
    Call(String, Vec<Expr>),
    Bin(BinKind, Box<Expr>, Box<Expr>),
    Not(Box<Expr>),
    Neg(Box<Expr>),
}

#[derive(Clone, Debug)]
struct Expr {
    kind: ExprKind,
    pos: Pos,
    /// Byte span in the source.
    span: (usize, usize),
}

#[derive(Clone, Debug)]
enum StmtKind {
    Decl(String, Option<Expr>),
    Assign(String, Expr),
    Store(Expr, Expr),
    Expr(Expr),
    If(Expr, Vec<Stmt>, Vec<Stmt>),
    While(Expr, Vec<Stmt>),
    DoWhile(Vec<Stmt>, Expr),
    For(Vec<Stmt>, Option<Expr>, Vec<Stmt>, Vec<Stmt>),
    Block(Vec<Stmt>),
}

#[derive(Clone, Debug)]
struct Stmt {
    kind: StmtKind,
    pos: Pos,
    span: (usize, usize),
}

/// A pointer parameter `global volatile atomic_int* x`.
#[derive(Clone, Debug)]
struct Param {
    name: String,
    pos: Pos,
    atomic: bool,
    volatile: bool,
    local: bool,
}

struct ThreadSrc {
    id: usize,
    pos: Pos,
    placement: Vec<ScopeLevel>,
    params: Vec<Param>,
    body: Vec<Stmt>,
}

// ---------------------------------------------------------------------------
// Parser
// ---------------------------------------------------------------------------

struct Parser<'a> {
    lx: CLex<'a>,
    file: &'a str,
    depth: u32,
    /// The last token peeked, reused by a peek or next from the same state.
    peeked: lex_util::Lookahead<CLex<'a>>,
}

/// Whether herd's `S128` variant (128-bit values) is set: by the test's
/// header or by `--variant S128`.
fn has_s128_variant(src: &str) -> bool {
    crate::models::variant_is_set("S128")
        || src
            .lines()
            .take_while(|l| !l.trim_start().starts_with('{'))
            .any(|l| {
                l.trim_start()
                    .strip_prefix("Variant=")
                    .is_some_and(|v| v.split([',', ' ']).any(|x| x.trim() == "S128"))
            })
}

/// Words that may start a declaration or qualify a parameter type.
fn is_type_word(w: &str) -> bool {
    matches!(
        w,
        "int"
            | "unsigned"
            | "signed"
            | "long"
            | "short"
            | "char"
            | "bool"
            | "_Bool"
            | "intptr_t"
            | "uintptr_t"
            | "size_t"
            | "int32_t"
            | "int64_t"
            | "uint32_t"
            | "uint64_t"
            | "__int128"
            | "__int128_t"
            | "__uint128_t"
            | "volatile"
            | "const"
            | "_Atomic"
            | "global"
            | "__global"
            | "local"
            | "__local"
            | "private"
            | "__private"
            | "generic"
            | "__generic"
    ) || w.starts_with("atomic_")
        && !w.starts_with("atomic_load")
        && !w.starts_with("atomic_store")
        && !w.starts_with("atomic_fetch")
        && !w.starts_with("atomic_exchange")
        && !w.starts_with("atomic_compare")
        && !w.starts_with("atomic_thread")
        && !w.starts_with("atomic_work")
        && !w.starts_with("atomic_signal")
        && !w.starts_with("atomic_init")
        && !w.starts_with("atomic_flag")
}

const STMT_EXPECTED: &str = "a statement: a declaration, an assignment, '*p = e;', a call, 'if', 'while', 'do', 'for' or a block";

impl TokenParser for Parser<'_> {
    fn file(&self) -> &str {
        self.file
    }

    fn next(&mut self) -> Result<Token, Diagnostic> {
        self.peeked.next(&mut self.lx)
    }

    fn peek(&self) -> Result<Token, Diagnostic> {
        self.peeked.peek(&self.lx)
    }
}

impl Nesting for Parser<'_> {
    fn depth(&mut self) -> &mut u32 {
        &mut self.depth
    }
}

impl<'a> Parser<'a> {
    // ---- init block ------------------------------------------------------

    fn parse_init(
        &mut self,
        locs: &mut LocTable,
        facts: &mut LocFacts,
        reg_inits: &mut Vec<(usize, String, Value, Pos)>,
    ) -> Result<(), Diagnostic> {
        table::parse_init_block(self, |p| p.parse_init_entry(locs, facts, reg_inits))
    }

    fn parse_init_entry(
        &mut self,
        locs: &mut LocTable,
        facts: &mut LocFacts,
        reg_inits: &mut Vec<(usize, String, Value, Pos)>,
    ) -> Result<(), Diagnostic> {
        const EXPECTED: &str = "an init entry like '[x] = 0', 'atomic_int x = 0' or '0:r0 = 0'";
        let first = self.peek()?;
        let pos = first.pos;
        let mut is_atomic = false;
        let mut is_local = false;
        // Register `0:r` / `P0:r`.
        if let (Some(n), true) = (
            match &first.tok {
                Tok::Int(n) => usize::try_from(*n).ok(),
                Tok::Ident(s) => table::thread_number(s),
                _ => None,
            },
            self.lx.peek2()?.1.is_punct(":"),
        ) {
            self.next()?;
            self.next()?;
            let (reg, _) = self.expect_ident("a register name after ':'")?;
            self.expect_punct("=", "'='")?;
            let v = self.init_value(locs)?;
            reg_inits.push((n, reg, v, pos));
            return Ok(());
        }
        let name = if first.is_punct("[") {
            self.next()?;
            let (n, _) = self.expect_ident("a location name")?;
            self.expect_punct("]", "']'")?;
            n
        } else {
            // Optional type words, then the name.
            let mut words = Vec::new();
            loop {
                let t = self.next()?;
                match &t.tok {
                    Tok::Ident(w) => words.push((w.clone(), t.pos)),
                    _ => return Err(self.unexpected(&t, EXPECTED)),
                }
                let n = self.peek()?;
                if n.is_punct("*") {
                    return Err(self
                        .err(n.pos, "unsupported init entry: pointer-valued locations")
                        .expected("an integer location like 'int x = 0'"));
                }
                if n.ident().is_none() {
                    break;
                }
            }
            let (name, _) = words.pop().expect("at least one word");
            for (w, wpos) in &words {
                if !is_type_word(w) {
                    return Err(self
                        .err(*wpos, format!("unknown type word '{w}'"))
                        .expected("a type like int or atomic_int"));
                }
                if w.contains("int128") && !has_s128_variant(self.lx.lx.src()) {
                    return Err(self
                        .err(*wpos, format!("a '{w}' location needs the S128 variant"))
                        .expected(
                            "'Variant=S128' in the test header (herd rejects the test otherwise)",
                        )
                        // herd7's words for this rejection, as its outputs show them.
                        .herd(HerdForm::Message(
                            "mask 32 bit value 0x0 value with s128 mask".into(),
                        )));
                }
                is_atomic |= w.starts_with("atomic_") || w == "_Atomic";
                is_local |= matches!(w.as_str(), "local" | "__local");
            }
            name
        };
        let t = self.peek()?;
        if t.is_punct("[") {
            return self.parse_array(locs, facts, name, pos, is_atomic, is_local);
        }
        let v = if self.eat_punct("=")? {
            self.init_value(locs)?
        } else if t.is_punct(";") || t.is_punct("}") {
            Value::Int(0)
        } else {
            return Err(self.unexpected(&t, "'=' and an initial value"));
        };
        let id = self.declare_loc(locs, &name, v, pos)?;
        facts.record(id, is_atomic, is_local);
        Ok(())
    }

    /// Declares location `name` of the init entry at `pos` with value `v`;
    /// a second declaration of the same location is an error.
    fn declare_loc(
        &self,
        locs: &mut LocTable,
        name: &str,
        v: Value,
        pos: Pos,
    ) -> Result<LocId, Diagnostic> {
        locs.declare(name, v).map_err(|_| {
            self.err(pos, format!("location '{name}' is initialised twice"))
                .expected("one init entry per location")
        })
    }

    /// `type a[N] = {v0, v1, ...}` or `type a[N]`: locations `a` (element
    /// 0) and `a[1]` ... `a[N-1]`.
    fn parse_array(
        &mut self,
        locs: &mut LocTable,
        facts: &mut LocFacts,
        name: String,
        pos: Pos,
        is_atomic: bool,
        is_local: bool,
    ) -> Result<(), Diagnostic> {
        const MAX_ARRAY: i64 = 64;
        self.expect_punct("[", "'['")?;
        let t = self.next()?;
        let n = match t.tok {
            Tok::Int(n) if (1..=MAX_ARRAY).contains(&n) => n as usize,
            _ => {
                return Err(
                    self.unexpected(&t, &format!("an array length between 1 and {MAX_ARRAY}"))
                );
            }
        };
        self.expect_punct("]", "']' after the array length")?;
        let mut values = vec![Value::Int(0); n];
        if self.eat_punct("=")? {
            let open = self.expect_punct("{", "'{' and the initial values")?;
            let mut k = 0;
            if !self.eat_punct("}")? {
                loop {
                    let vpos = self.peek()?.pos;
                    let v = self.init_value(locs)?;
                    if k == n {
                        return Err(self
                            .err(vpos, format!("more than {n} initial values"))
                            .expected(format!("at most {n} values for '{name}[{n}]'")));
                    }
                    values[k] = v;
                    k += 1;
                    let s = self.next()?;
                    if s.is_punct("}") {
                        break;
                    }
                    if !s.is_punct(",") {
                        return Err(self.unexpected(
                            &s,
                            &format!("',' or '}}' in the initial values opened at {}", open.pos),
                        ));
                    }
                }
            }
        }
        let mut elems = Vec::new();
        for (k, v) in values.into_iter().enumerate() {
            let elem = if k == 0 {
                name.clone()
            } else {
                format!("{name}[{k}]")
            };
            let id = self.declare_loc(locs, &elem, v, pos)?;
            facts.record(id, is_atomic, is_local);
            elems.push(id);
        }
        facts.arrays.insert(elems[0], elems);
        Ok(())
    }

    fn init_value(&mut self, locs: &mut LocTable) -> Result<Value, Diagnostic> {
        let t = self.next()?;
        match &t.tok {
            Tok::Int(v) => Ok(Value::Int(*v)),
            Tok::Punct("-") => {
                let n = self.next()?;
                match n.tok {
                    Tok::Int(v) => Ok(Value::Int(-v)),
                    _ => Err(self.unexpected(&n, "a number after '-'")),
                }
            }
            Tok::Punct("&") => {
                let (n, _) = self.expect_ident("a location name after '&'")?;
                Ok(Value::Addr(locs.id(&n)))
            }
            Tok::Ident(n) => Ok(Value::Addr(locs.id(n))),
            Tok::Punct("{") => Err(self
                .err(t.pos, "unsupported init entry: array initialisers")
                .expected("a number, &x or x")),
            _ => Err(self.unexpected(&t, "an initial value: a number, &x or x")),
        }
    }

    // ---- thread headers -------------------------------------------------

    fn parse_thread(&mut self, index: usize) -> Result<ThreadSrc, Diagnostic> {
        let t = self.next()?;
        let (name, pos) = match &t.tok {
            Tok::Ident(s) => (s.clone(), t.pos),
            _ => return Err(self.unexpected(&t, "a thread function like P0(int* x) { ... }")),
        };
        let Some(id) = table::thread_number(&name) else {
            return Err(self
                .err(pos, format!("'{name}' is not a thread name"))
                .expected("a thread function like P0(int* x) { ... }"));
        };
        if id != index {
            return Err(self
                .err(
                    pos,
                    format!("thread {name} is function number {}", index + 1),
                )
                .expected(format!("P{index}: threads are numbered from P0, in order")));
        }
        let mut placement = Vec::new();
        if self.eat_punct("@")? {
            placement = self.parse_placement(id)?;
        } else {
            placement.push(ScopeLevel {
                level: "dev".into(),
                id: 0,
            });
            placement.push(ScopeLevel {
                level: "wg".into(),
                id: id as u32,
            });
        }
        self.expect_punct("(", "'(' and the parameter list")?;
        let mut params: Vec<Param> = Vec::new();
        if !self.eat_punct(")")? {
            loop {
                let p = self.parse_param()?;
                if params.iter().any(|q| q.name == p.name) {
                    return Err(self
                        .err(p.pos, format!("parameter '{}' given twice", p.name))
                        .expected("distinct parameter names"));
                }
                params.push(p);
                let t = self.next()?;
                if t.is_punct(")") {
                    break;
                }
                if !t.is_punct(",") {
                    return Err(self.unexpected(&t, "',' or ')' in the parameter list"));
                }
            }
        }
        let open = self.expect_punct("{", "'{' and the thread's code")?;
        self.lx.ocaml = false;
        let body = self.parse_block_rest(open.pos)?;
        self.lx.ocaml = true;
        Ok(ThreadSrc {
            id,
            pos,
            placement,
            params,
            body,
        })
    }

    /// `wg 0, dev 0` (or `cta 0, gpu 0`): the levels, in any order; or
    /// `cpu N` (`cpu` alone is CPU 0) for a thread on a CPU of a compound
    /// system (scoped C/C++ to x86+PTX, docs/mappings.md).
    fn parse_placement(&mut self, thread: usize) -> Result<Vec<ScopeLevel>, Diagnostic> {
        let mut wg: Option<u32> = None;
        let mut dev: Option<u32> = None;
        if self.peek()?.is_ident("cpu") {
            self.next()?;
            let mut id = 0;
            if let Tok::Int(n) = self.peek()?.tok {
                self.next()?;
                id = u32::try_from(n).map_err(|_| {
                    self.err(Pos::default(), format!("cpu number {n} is too large"))
                        .expected("a number below 2^32")
                })?;
            }
            return Ok(vec![ScopeLevel {
                level: "cpu".into(),
                id,
            }]);
        }
        loop {
            let (level, lpos) = self.expect_ident("a scope level: wg, dev (or cta, gpu)")?;
            let t = self.next()?;
            let Tok::Int(n) = t.tok else {
                return Err(self.unexpected(&t, &format!("an instance number after '{level}'")));
            };
            let n = u32::try_from(n).map_err(|_| {
                self.err(t.pos, format!("scope instance number {n} is too large"))
                    .expected("a number below 2^32")
            })?;
            let slot = match level.to_ascii_lowercase().as_str() {
                "wg" | "work_group" | "workgroup" | "cta" | "block" => &mut wg,
                "dev" | "device" | "gpu" => &mut dev,
                _ => {
                    return Err(self
                        .err(lpos, format!("unknown scope level '{level}'"))
                        .expected("wg or dev (cta and gpu are accepted as aliases)"));
                }
            };
            if slot.is_some() {
                return Err(self
                    .err(lpos, format!("scope level '{level}' given twice"))
                    .expected("each level at most once"));
            }
            *slot = Some(n);
            if !self.peek()?.is_punct(",") {
                break;
            }
            self.next()?;
        }
        Ok(vec![
            ScopeLevel {
                level: "dev".into(),
                id: dev.unwrap_or(0),
            },
            ScopeLevel {
                level: "wg".into(),
                // A thread placed on a device only gets a work-group of its own.
                id: wg.unwrap_or(u32::MAX - thread as u32),
            },
        ])
    }

    fn parse_param(&mut self) -> Result<Param, Diagnostic> {
        let mut p = Param {
            name: String::new(),
            pos: Pos::default(),
            atomic: false,
            volatile: false,
            local: false,
        };
        let mut words = 0;
        loop {
            let t = self.next()?;
            match &t.tok {
                Tok::Ident(w) if is_type_word(w) => {
                    words += 1;
                    p.atomic |= w.starts_with("atomic_") || w == "_Atomic";
                    p.volatile |= w == "volatile";
                    p.local |= matches!(w.as_str(), "local" | "__local");
                }
                Tok::Punct("*") if words > 0 => break,
                Tok::Ident(w) if words > 0 => {
                    return Err(self
                        .err(
                            t.pos,
                            format!("unsupported parameter '{w}': parameters must be pointers"),
                        )
                        .expected("a pointer parameter like 'atomic_int* x'"));
                }
                Tok::Ident(w) => {
                    return Err(self
                        .err(t.pos, format!("unknown type '{w}'"))
                        .expected("a parameter type like int* or atomic_int*")
                        .herd(HerdForm::Unexpected { token: w.clone() }));
                }
                _ => return Err(self.unexpected(&t, "a parameter like 'atomic_int* x'")),
            }
        }
        while self.peek()?.is_punct("*") || self.peek()?.is_ident("const") {
            let t = self.next()?;
            if t.is_punct("*") {
                return Err(self
                    .err(t.pos, "unsupported parameter: pointer to pointer")
                    .expected("a pointer to an integer location"));
            }
        }
        let (name, pos) = self.expect_ident("the parameter name")?;
        p.name = name;
        p.pos = pos;
        Ok(p)
    }

    // ---- statements ------------------------------------------------------

    /// Statements up to the `}` closing a block opened at `open`.
    fn parse_block_rest(&mut self, open: Pos) -> Result<Vec<Stmt>, Diagnostic> {
        self.enter(open)?;
        let mut out = Vec::new();
        loop {
            let t = self.peek()?;
            if t.is_punct("}") {
                self.next()?;
                break;
            }
            if t.is_eof() {
                return Err(self
                    .err(
                        t.pos,
                        format!("unexpected end of file in the block opened at {open}"),
                    )
                    .expected("'}'"));
            }
            out.extend(self.parse_stmt()?);
        }
        self.leave();
        Ok(out)
    }

    /// A statement as a body: a block's statements or one statement.
    fn parse_body(&mut self) -> Result<Vec<Stmt>, Diagnostic> {
        self.parse_stmt()
    }

    /// One statement (a declaration list may give several).
    fn parse_stmt(&mut self) -> Result<Vec<Stmt>, Diagnostic> {
        let t = self.peek()?;
        let pos = t.pos;
        let start = t.start;
        let mk = |kind: StmtKind, end: usize| Stmt {
            kind,
            pos,
            span: (start, end),
        };
        if t.is_punct("{") {
            self.next()?;
            let body = self.parse_block_rest(pos)?;
            return Ok(vec![mk(StmtKind::Block(body), self.lx.off())]);
        }
        if t.is_punct(";") {
            self.next()?;
            return Ok(Vec::new());
        }
        if t.is_punct("*") {
            let lhs = self.parse_unary()?;
            self.expect_punct("=", "'=' after '*p'")?;
            let rhs = self.parse_expr()?;
            let end = self.expect_punct(";", "';' after the statement")?.end;
            return Ok(vec![mk(StmtKind::Store(lhs, rhs), end)]);
        }
        let Some(word) = t.ident().map(str::to_string) else {
            return Err(self.unexpected(&t, STMT_EXPECTED));
        };
        let (_, second) = self.lx.peek2()?;
        match word.as_str() {
            "if" => {
                self.next()?;
                self.expect_punct("(", "'(' after 'if'")?;
                let c = self.parse_expr()?;
                self.expect_punct(")", "')' after the condition")?;
                self.enter(pos)?;
                let then = self.parse_body()?;
                let els = if self.peek()?.is_ident("else") {
                    self.next()?;
                    self.parse_body()?
                } else {
                    Vec::new()
                };
                self.leave();
                return Ok(vec![mk(StmtKind::If(c, then, els), self.lx.off())]);
            }
            "while" => {
                self.next()?;
                self.expect_punct("(", "'(' after 'while'")?;
                let c = self.parse_expr()?;
                self.expect_punct(")", "')' after the condition")?;
                self.enter(pos)?;
                let body = self.parse_body()?;
                self.leave();
                return Ok(vec![mk(StmtKind::While(c, body), self.lx.off())]);
            }
            "do" => {
                self.next()?;
                self.enter(pos)?;
                let body = self.parse_body()?;
                self.leave();
                let w = self.next()?;
                if !w.is_ident("while") {
                    return Err(self.unexpected(&w, "'while' after the body of 'do'"));
                }
                self.expect_punct("(", "'(' after 'while'")?;
                let c = self.parse_expr()?;
                self.expect_punct(")", "')' after the condition")?;
                let end = self
                    .expect_punct(";", "';' after 'do ... while (...)'")?
                    .end;
                return Ok(vec![mk(StmtKind::DoWhile(body, c), end)]);
            }
            "for" => {
                self.next()?;
                self.expect_punct("(", "'(' after 'for'")?;
                let init = if self.peek()?.is_punct(";") {
                    self.next()?;
                    Vec::new()
                } else {
                    self.parse_simple_stmt(true)?
                };
                let cond = if self.peek()?.is_punct(";") {
                    None
                } else {
                    Some(self.parse_expr()?)
                };
                self.expect_punct(";", "';' after the loop condition")?;
                let step = if self.peek()?.is_punct(")") {
                    Vec::new()
                } else {
                    self.parse_simple_stmt(false)?
                };
                self.expect_punct(")", "')' after the loop header")?;
                self.enter(pos)?;
                let body = self.parse_body()?;
                self.leave();
                return Ok(vec![mk(
                    StmtKind::For(init, cond, step, body),
                    self.lx.off(),
                )]);
            }
            "else" => {
                return Err(self.err(pos, "'else' without 'if'").expected(STMT_EXPECTED));
            }
            "return" | "break" | "continue" | "goto" | "switch" | "case" | "default" => {
                return Err(self
                    .err(pos, format!("unsupported statement '{word}'"))
                    .expected(STMT_EXPECTED));
            }
            _ => {}
        }
        // A label `B1:` (herd names barriers this way): ignored.
        if second.is_punct(":") && !is_type_word(&word) {
            self.next()?;
            self.next()?;
            self.enter(pos)?;
            let s = self.parse_stmt();
            self.leave();
            return s;
        }
        self.parse_simple_stmt(true)
    }

    /// A declaration, an assignment or an expression, with its `;` when
    /// `semi` (a `for` header's step has none).
    fn parse_simple_stmt(&mut self, semi: bool) -> Result<Vec<Stmt>, Diagnostic> {
        let t = self.peek()?;
        let pos = t.pos;
        let start = t.start;
        let finish = |p: &mut Self| -> Result<usize, Diagnostic> {
            if semi {
                Ok(p.expect_punct(";", "';' after the statement")?.end)
            } else {
                Ok(p.lx.off())
            }
        };
        let word = t.ident().map(str::to_string).unwrap_or_default();
        if is_type_word(&word) {
            // Declaration: type words, then `name [= e] {, name [= e]}`.
            while self.peek()?.ident().is_some_and(is_type_word) {
                self.next()?;
            }
            let mut decls = Vec::new();
            loop {
                let n = self.peek()?;
                if n.is_punct("*") {
                    return Err(self
                        .err(n.pos, "unsupported declaration: pointer-valued local")
                        .expected("an integer local like 'int r = 0'"));
                }
                let (name, npos) = self.expect_ident("the name of the declared variable")?;
                if self.peek()?.is_punct("[") {
                    return Err(self
                        .err(npos, "unsupported declaration: local array")
                        .expected("an integer local like 'int r = 0'"));
                }
                let init = if self.eat_punct("=")? {
                    Some(self.parse_expr()?)
                } else {
                    None
                };
                decls.push((name, npos, init));
                if !self.eat_punct(",")? {
                    break;
                }
            }
            let end = finish(self)?;
            return Ok(decls
                .into_iter()
                .map(|(name, npos, init)| Stmt {
                    kind: StmtKind::Decl(name, init),
                    pos: npos,
                    span: (start, end),
                })
                .collect());
        }
        let (_, second) = self.lx.peek2()?;
        if !word.is_empty() {
            let op = match &second.tok {
                Tok::Punct(p @ ("=" | "+=" | "-=" | "++" | "--")) => Some(*p),
                _ => None,
            };
            if let Some(op) = op {
                let name_tok = self.next()?;
                let op_tok = self.next()?;
                let var = Expr {
                    kind: ExprKind::Var(word.clone()),
                    pos: name_tok.pos,
                    span: (name_tok.start, name_tok.end),
                };
                let value = match op {
                    "=" => self.parse_expr()?,
                    "+=" | "-=" => {
                        let rhs = self.parse_expr()?;
                        let b = if op == "+=" { BinOp::Add } else { BinOp::Sub };
                        let span = (start, rhs.span.1);
                        Expr {
                            kind: ExprKind::Bin(BinKind::Arith(b), Box::new(var), Box::new(rhs)),
                            pos,
                            span,
                        }
                    }
                    _ => {
                        let b = if op == "++" { BinOp::Add } else { BinOp::Sub };
                        let one = Expr {
                            kind: ExprKind::Int(1),
                            pos: op_tok.pos,
                            span: (op_tok.start, op_tok.end),
                        };
                        Expr {
                            kind: ExprKind::Bin(BinKind::Arith(b), Box::new(var), Box::new(one)),
                            pos,
                            span: (start, op_tok.end),
                        }
                    }
                };
                let end = finish(self)?;
                return Ok(vec![Stmt {
                    kind: StmtKind::Assign(word, value),
                    pos,
                    span: (start, end),
                }]);
            }
        }
        let e = self.parse_expr()?;
        if matches!(e.kind, ExprKind::Deref(_)) && self.eat_punct("=")? {
            // `a[i] = v`.
            let rhs = self.parse_expr()?;
            let end = finish(self)?;
            return Ok(vec![Stmt {
                kind: StmtKind::Store(e, rhs),
                pos,
                span: (start, end),
            }]);
        }
        if !matches!(e.kind, ExprKind::Call(..)) {
            let n = self.peek()?;
            if !n.is_punct(";") {
                return Err(self.unexpected(&n, "';' after the statement"));
            }
            return Err(self
                .err(e.pos, "statement has no effect")
                .expected(STMT_EXPECTED));
        }
        let end = finish(self)?;
        Ok(vec![Stmt {
            kind: StmtKind::Expr(e),
            pos,
            span: (start, end),
        }])
    }

    // ---- expressions -----------------------------------------------------

    fn parse_expr(&mut self) -> Result<Expr, Diagnostic> {
        let pos = self.peek()?.pos;
        self.enter(pos)?;
        let e = self.parse_bin(0);
        self.leave();
        e
    }

    /// A binary expression whose operators are all of level `min_level`
    /// or tighter, by precedence climbing: the same trees as one
    /// left-associative recursive-descent function per level, with one
    /// look at the token after each operand instead of one per level.
    fn parse_bin(&mut self, min_level: usize) -> Result<Expr, Diagnostic> {
        const LEVELS: &[&[&str]] = &[
            &["||"],
            &["&&"],
            &["|"],
            &["^"],
            &["&"],
            &["==", "!="],
            &["<", "<=", ">", ">="],
            &["<<", ">>"],
            &["+", "-"],
            &["*", "/", "%"],
        ];
        let mut lhs = self.parse_unary()?;
        loop {
            let t = self.peek()?;
            let Tok::Punct(p) = t.tok else { break };
            let Some(level) = LEVELS.iter().position(|ops| ops.contains(&p)) else {
                break;
            };
            if level < min_level {
                break;
            }
            self.next()?;
            let kind = match p {
                "||" => BinKind::LOr,
                "&&" => BinKind::LAnd,
                "|" => BinKind::Arith(BinOp::Or),
                "^" => BinKind::Arith(BinOp::Xor),
                "&" => BinKind::Arith(BinOp::And),
                "==" => BinKind::Cmp(CmpOp::Eq),
                "!=" => BinKind::Cmp(CmpOp::Ne),
                "<" => BinKind::Cmp(CmpOp::Lt),
                "<=" => BinKind::Cmp(CmpOp::Le),
                ">" => BinKind::Cmp(CmpOp::Gt),
                ">=" => BinKind::Cmp(CmpOp::Ge),
                "+" => BinKind::Arith(BinOp::Add),
                "-" => BinKind::Arith(BinOp::Sub),
                "*" => BinKind::Arith(BinOp::Mul),
                _ => {
                    return Err(self
                        .err(t.pos, format!("unsupported operator '{p}'"))
                        .expected("+, -, *, &, |, ^, comparisons, && or ||"));
                }
            };
            let rhs = self.parse_bin(level + 1)?;
            let span = (lhs.span.0, rhs.span.1);
            let pos = lhs.pos;
            lhs = Expr {
                kind: ExprKind::Bin(kind, Box::new(lhs), Box::new(rhs)),
                pos,
                span,
            };
        }
        Ok(lhs)
    }

    fn parse_unary(&mut self) -> Result<Expr, Diagnostic> {
        let t = self.peek()?;
        let pos = t.pos;
        let start = t.start;
        let unary = |p: &mut Self, f: fn(Box<Expr>) -> ExprKind| -> Result<Expr, Diagnostic> {
            p.next()?;
            p.enter(pos)?;
            let e = p.parse_unary()?;
            p.leave();
            let span = (start, e.span.1);
            Ok(Expr {
                kind: f(Box::new(e)),
                pos,
                span,
            })
        };
        match &t.tok {
            Tok::Punct("!") => unary(self, ExprKind::Not),
            Tok::Punct("-") => unary(self, ExprKind::Neg),
            Tok::Punct("*") => unary(self, ExprKind::Deref),
            Tok::Punct("+") => {
                self.next()?;
                self.parse_unary()
            }
            Tok::Punct("&") => {
                self.next()?;
                self.enter(pos)?;
                let e = self.parse_unary()?;
                self.leave();
                let span = (start, e.span.1);
                match e.kind {
                    // &*p and &a[i] are the pointers themselves.
                    ExprKind::Deref(p) => Ok(Expr { span, ..*p }),
                    ExprKind::Var(name) => Ok(Expr {
                        kind: ExprKind::AddrOf(name),
                        pos,
                        span,
                    }),
                    _ => Err(self
                        .err(e.pos, "unsupported operand of '&'")
                        .expected("a variable, '*p' or 'a[i]'")),
                }
            }
            Tok::Punct("~") | Tok::Punct("++") | Tok::Punct("--") => Err(self
                .err(pos, format!("unsupported operator {}", t.describe()))
                .expected("an expression")),
            _ => self.parse_primary(),
        }
    }

    fn parse_primary(&mut self) -> Result<Expr, Diagnostic> {
        const EXPECTED: &str = "an expression: a number, a variable, '*p', a call or '('";
        let t = self.next()?;
        let pos = t.pos;
        match &t.tok {
            Tok::Int(v) => Ok(Expr {
                kind: ExprKind::Int(*v),
                pos,
                span: (t.start, t.end),
            }),
            Tok::Punct("(") => {
                if self.peek()?.ident().is_some_and(is_type_word) {
                    return Err(self
                        .err(pos, "unsupported cast")
                        .expected("an expression without casts"));
                }
                let mut e = self.parse_expr()?;
                let close = self.expect_punct(")", "')'")?;
                e.span = (t.start, close.end);
                Ok(e)
            }
            Tok::Ident(name) => {
                if self.peek()?.is_punct("(") {
                    self.next()?;
                    let mut args = Vec::new();
                    if !self.eat_punct(")")? {
                        loop {
                            args.push(self.parse_expr()?);
                            let s = self.next()?;
                            if s.is_punct(")") {
                                break;
                            }
                            if !s.is_punct(",") {
                                return Err(self.unexpected(&s, "',' or ')' in the arguments"));
                            }
                        }
                    }
                    return Ok(Expr {
                        kind: ExprKind::Call(name.clone(), args),
                        pos,
                        span: (t.start, self.lx.off()),
                    });
                }
                let var = Expr {
                    kind: ExprKind::Var(name.clone()),
                    pos,
                    span: (t.start, t.end),
                };
                if self.eat_punct("[")? {
                    // a[i] is *(a + i).
                    let idx = self.parse_expr()?;
                    let close = self.expect_punct("]", "']' after the index")?;
                    let span = (t.start, close.end);
                    let sum = Expr {
                        kind: ExprKind::Bin(
                            BinKind::Arith(BinOp::Add),
                            Box::new(var),
                            Box::new(idx),
                        ),
                        pos,
                        span,
                    };
                    return Ok(Expr {
                        kind: ExprKind::Deref(Box::new(sum)),
                        pos,
                        span,
                    });
                }
                Ok(var)
            }
            _ => Err(self.unexpected(&t, EXPECTED)),
        }
    }
}

// ---------------------------------------------------------------------------
// Code generation
// ---------------------------------------------------------------------------

/// Location facts gathered over the whole test, for tags set afterwards.
#[derive(Default)]
struct LocFacts {
    atomic: HashSet<LocId>,
    local: HashSet<LocId>,
    /// Arrays declared in the init block: first element → all elements.
    arrays: HashMap<LocId, Vec<LocId>>,
}

impl LocFacts {
    /// Records that `l` is declared atomic and/or local.
    fn record(&mut self, l: LocId, atomic: bool, local: bool) {
        if atomic {
            self.atomic.insert(l);
        }
        if local {
            self.local.insert(l);
        }
    }

    /// The array location `l` belongs to (its first element), or `l`.
    fn base(&self, l: LocId) -> LocId {
        self.arrays
            .iter()
            .find(|(_, es)| es.contains(&l))
            .map_or(l, |(b, _)| *b)
    }

    /// Marks `l` (and its whole array) atomic.
    fn set_atomic(&mut self, l: LocId) {
        let b = self.base(l);
        match self.arrays.get(&b) {
            Some(es) => self.atomic.extend(es.iter().copied()),
            None => {
                self.atomic.insert(l);
            }
        }
    }
}

struct Gen<'t> {
    file: &'t str,
    src: &'t str,
    params: HashMap<String, (LocId, bool)>,
    code: Vec<Instr>,
    ntmp: usize,
    nlabel: usize,
    /// Scope tag of atomics without an explicit scope (`SYS` for C, `DEV`
    /// for OpenCL).
    default_scope: &'static str,
    facts: &'t mut LocFacts,
    /// Registers holding a computed array element address → the array.
    reg_base: HashMap<Reg, LocId>,
    /// Position and text of the statement being compiled.
    pos: Pos,
    text: String,
}

/// A memory order constant → its tag.
fn memory_order(name: &str) -> Option<&'static str> {
    Some(match name {
        "memory_order_relaxed" => "RLX",
        "memory_order_consume" | "memory_order_acquire" => "ACQ",
        "memory_order_release" => "REL",
        "memory_order_acq_rel" => "ACQ_REL",
        "memory_order_seq_cst" => "SC",
        _ => return None,
    })
}

/// A memory scope constant → its tag (OpenCL and CUDA-style names).
fn memory_scope(name: &str) -> Option<&'static str> {
    Some(match name {
        "memory_scope_work_item" | "memory_scope_thread" | "memory_scope_wi" => "WI",
        "memory_scope_work_group"
        | "memory_scope_workgroup"
        | "memory_scope_block"
        | "memory_scope_cta"
        | "memory_scope_wg" => "WG",
        "memory_scope_device" | "memory_scope_gpu" | "memory_scope_dev" => "DEV",
        "memory_scope_all_svm_devices"
        | "memory_scope_all_devices"
        | "memory_scope_system"
        | "memory_scope_sys" => "SYS",
        _ => return None,
    })
}

const ORDER_EXPECTED: &str =
    "a memory order: memory_order_relaxed, _acquire, _release, _acq_rel or _seq_cst";
const SCOPE_EXPECTED: &str = "a memory scope: memory_scope_work_item, _work_group, _device or _all_svm_devices (or CUDA-style _thread, _block, _device, _system)";

impl Gen<'_> {
    fn err(&self, pos: Pos, msg: impl Into<String>) -> Diagnostic {
        Diagnostic::new(self.file, pos, msg)
    }

    fn tmp(&mut self) -> Reg {
        self.ntmp += 1;
        format!("%t{}", self.ntmp - 1)
    }

    fn label(&mut self) -> String {
        self.nlabel += 1;
        format!("%L{}", self.nlabel - 1)
    }

    fn emit(&mut self, kind: InstrKind, tags: Vec<&str>) {
        let mut all = vec!["C".to_string()];
        all.extend(tags.into_iter().map(str::to_string));
        self.code.push(Instr {
            kind,
            tags: all,
            pos: self.pos,
            text: self.text.clone(),
        });
    }

    fn emit_label(&mut self, l: &str) {
        self.emit(InstrKind::Label(l.to_string()), vec![]);
    }

    fn set_stmt(&mut self, pos: Pos, span: (usize, usize)) {
        self.pos = pos;
        self.text = squash(&self.src[span.0..span.1.min(self.src.len())]);
    }

    fn block(&mut self, stmts: &[Stmt]) -> Result<(), Diagnostic> {
        for s in stmts {
            self.stmt(s)?;
        }
        Ok(())
    }

    fn check_assignable(&self, name: &str, pos: Pos) -> Result<(), Diagnostic> {
        if self.params.contains_key(name) {
            return Err(self
                .err(
                    pos,
                    format!("unsupported: assignment to the pointer parameter '{name}'"),
                )
                .expected("a local variable"));
        }
        Ok(())
    }

    fn stmt(&mut self, s: &Stmt) -> Result<(), Diagnostic> {
        self.set_stmt(s.pos, s.span);
        match &s.kind {
            StmtKind::Decl(name, init) => {
                self.check_assignable(name, s.pos)?;
                match init {
                    Some(e) => self.assign(name, e),
                    None => Ok(()),
                }
            }
            StmtKind::Assign(name, e) => {
                self.check_assignable(name, s.pos)?;
                self.assign(name, e)
            }
            StmtKind::Store(lhs, rhs) => {
                let ExprKind::Deref(p) = &lhs.kind else {
                    return Err(self
                        .err(lhs.pos, "unsupported assignment target")
                        .expected("'*p = e' or 'r = e'"));
                };
                let (addr, volatile) = self.pointer(p)?;
                let v = self.value(rhs)?;
                self.set_stmt(s.pos, s.span);
                let tags = self.plain_tags(volatile);
                self.emit(InstrKind::Store { addr, src: v }, tags);
                Ok(())
            }
            StmtKind::Expr(e) => {
                self.expr(e, None)?;
                Ok(())
            }
            StmtKind::Block(b) => self.block(b),
            StmtKind::If(c, then, els) => {
                let l_else = self.label();
                self.cond(c, false, &l_else)?;
                self.block(then)?;
                if els.is_empty() {
                    self.set_stmt(s.pos, s.span);
                    self.emit_label(&l_else);
                } else {
                    let l_end = self.label();
                    self.set_stmt(s.pos, s.span);
                    self.emit(
                        InstrKind::Goto {
                            target: l_end.clone(),
                        },
                        vec![],
                    );
                    self.emit_label(&l_else);
                    self.block(els)?;
                    self.set_stmt(s.pos, s.span);
                    self.emit_label(&l_end);
                }
                Ok(())
            }
            StmtKind::While(c, body) => {
                let (top, end) = (self.label(), self.label());
                self.emit_label(&top);
                self.cond(c, false, &end)?;
                self.block(body)?;
                self.set_stmt(s.pos, s.span);
                self.emit(InstrKind::Goto { target: top }, vec![]);
                self.emit_label(&end);
                Ok(())
            }
            StmtKind::DoWhile(body, c) => {
                let top = self.label();
                self.emit_label(&top);
                self.block(body)?;
                self.set_stmt(s.pos, s.span);
                self.cond(c, true, &top)
            }
            StmtKind::For(init, c, step, body) => {
                self.block(init)?;
                let (top, end) = (self.label(), self.label());
                self.set_stmt(s.pos, s.span);
                self.emit_label(&top);
                if let Some(c) = c {
                    self.cond(c, false, &end)?;
                }
                self.block(body)?;
                self.block(step)?;
                self.set_stmt(s.pos, s.span);
                self.emit(InstrKind::Goto { target: top }, vec![]);
                self.emit_label(&end);
                Ok(())
            }
        }
    }

    fn assign(&mut self, name: &str, e: &Expr) -> Result<(), Diagnostic> {
        match self.expr(e, Some(name))? {
            Some(Operand::Reg(r)) if r == name => Ok(()),
            Some(v) => {
                self.emit(
                    InstrKind::Mov {
                        dst: name.to_string(),
                        src: v,
                    },
                    vec![],
                );
                Ok(())
            }
            None => Err(self
                .err(e.pos, "this call returns no value")
                .expected("an expression with a value")),
        }
    }

    /// The value of `e` as an operand; a void call is an error.
    fn value(&mut self, e: &Expr) -> Result<Operand, Diagnostic> {
        match self.expr(e, None)? {
            Some(v) => Ok(v),
            None => Err(self
                .err(e.pos, "this call returns no value")
                .expected("an expression with a value")),
        }
    }

    /// Compiles `e`; its value is returned (`None` for a void call). `dst`
    /// is a register the value may be put into directly.
    fn expr(&mut self, e: &Expr, dst: Option<&str>) -> Result<Option<Operand>, Diagnostic> {
        let dest = |g: &mut Self| dst.map(str::to_string).unwrap_or_else(|| g.tmp());
        Ok(Some(match &e.kind {
            ExprKind::Int(v) => Operand::Imm(Value::Int(*v)),
            ExprKind::Var(name) => match self.params.get(name) {
                Some(&(loc, _)) => Operand::Imm(Value::Addr(loc)),
                None => Operand::Reg(name.clone()),
            },
            ExprKind::AddrOf(name) => {
                return Err(self
                    .err(
                        e.pos,
                        format!("unsupported: the address of '{name}' outside a compare-exchange"),
                    )
                    .expected("a pointer parameter, used as 'x' or '*x'"));
            }
            ExprKind::Deref(p) => {
                let (addr, volatile) = self.pointer(p)?;
                let d = dest(self);
                let tags = self.plain_tags(volatile);
                self.emit(
                    InstrKind::Load {
                        dst: d.clone(),
                        addr,
                    },
                    tags,
                );
                Operand::Reg(d)
            }
            ExprKind::Neg(a) => {
                let a = self.value(a)?;
                if let Operand::Imm(Value::Int(v)) = a {
                    Operand::Imm(Value::Int(v.wrapping_neg()))
                } else {
                    let d = dest(self);
                    self.emit(
                        InstrKind::Op {
                            dst: d.clone(),
                            op: BinOp::Sub,
                            a: Operand::Imm(Value::Int(0)),
                            b: a,
                        },
                        vec![],
                    );
                    Operand::Reg(d)
                }
            }
            ExprKind::Bin(BinKind::Arith(op), a, b) => {
                let a = self.value(a)?;
                let b = self.value(b)?;
                if let (Operand::Imm(x), Operand::Imm(y)) = (&a, &b)
                    && let Ok(v) = op.apply(*x, *y)
                {
                    return Ok(Some(Operand::Imm(v)));
                }
                if matches!(a, Operand::Imm(Value::Addr(_)))
                    || matches!(b, Operand::Imm(Value::Addr(_)))
                {
                    return Err(self
                        .err(e.pos, "unsupported pointer arithmetic")
                        .expected("integer arithmetic"));
                }
                let d = dest(self);
                self.emit(
                    InstrKind::Op {
                        dst: d.clone(),
                        op: *op,
                        a,
                        b,
                    },
                    vec![],
                );
                Operand::Reg(d)
            }
            ExprKind::Bin(..) | ExprKind::Not(_) => {
                // A truth value: d = 0; if (e) d = 1.
                let d = dest(self);
                let l = self.label();
                let tmp = self.tmp();
                self.emit(
                    InstrKind::Mov {
                        dst: tmp.clone(),
                        src: Operand::Imm(Value::Int(0)),
                    },
                    vec![],
                );
                self.cond(e, false, &l)?;
                self.emit(
                    InstrKind::Mov {
                        dst: tmp.clone(),
                        src: Operand::Imm(Value::Int(1)),
                    },
                    vec![],
                );
                self.emit_label(&l);
                self.emit(
                    InstrKind::Mov {
                        dst: d.clone(),
                        src: Operand::Reg(tmp),
                    },
                    vec![],
                );
                Operand::Reg(d)
            }
            ExprKind::Call(name, args) => return self.call(e, name, args, dst),
        }))
    }

    /// Jumps to `target` when the truth of `e` equals `when`.
    fn cond(&mut self, e: &Expr, when: bool, target: &str) -> Result<(), Diagnostic> {
        match &e.kind {
            ExprKind::Not(a) => self.cond(a, !when, target),
            ExprKind::Bin(BinKind::LAnd, a, b) | ExprKind::Bin(BinKind::LOr, a, b) => {
                let is_and = matches!(e.kind, ExprKind::Bin(BinKind::LAnd, ..));
                if is_and == when {
                    // and/true or or/false: both must agree.
                    let skip = self.label();
                    self.cond(a, !when, &skip)?;
                    self.cond(b, when, target)?;
                    self.emit_label(&skip);
                } else {
                    self.cond(a, when, target)?;
                    self.cond(b, when, target)?;
                }
                Ok(())
            }
            ExprKind::Bin(BinKind::Cmp(c), a, b) => {
                let a = self.value(a)?;
                let b = self.value(b)?;
                let cmp = if when { *c } else { c.negate() };
                self.emit(
                    InstrKind::Branch {
                        cmp,
                        a,
                        b,
                        target: target.to_string(),
                    },
                    vec![],
                );
                Ok(())
            }
            _ => {
                let v = self.value(e)?;
                self.emit(
                    InstrKind::Branch {
                        cmp: if when { CmpOp::Ne } else { CmpOp::Eq },
                        a: v,
                        b: Operand::Imm(Value::Int(0)),
                        target: target.to_string(),
                    },
                    vec![],
                );
                Ok(())
            }
        }
    }

    /// The location a pointer expression designates, and whether it was
    /// declared volatile.
    fn pointer(&mut self, p: &Expr) -> Result<(Address, bool), Diagnostic> {
        match &p.kind {
            ExprKind::Var(name) => match self.params.get(name) {
                Some(&(loc, vol)) => Ok((Address::Loc(loc), vol)),
                None => Err(self
                    .err(p.pos, format!("'{name}' is not a pointer parameter"))
                    .expected("a pointer parameter of the thread")),
            },
            ExprKind::Bin(BinKind::Arith(BinOp::Add), a, b) => {
                let is_param =
                    |e: &Expr| matches!(&e.kind, ExprKind::Var(n) if self.params.contains_key(n));
                let (base, idx) = if is_param(a) {
                    (a, b)
                } else if is_param(b) {
                    (b, a)
                } else {
                    return Err(self
                        .err(p.pos, "unsupported pointer expression")
                        .expected("a pointer parameter, or an array parameter plus an index"));
                };
                let ExprKind::Var(name) = &base.kind else {
                    unreachable!("checked above")
                };
                let (loc, vol) = self.params[name];
                let Some(elems) = self.facts.arrays.get(&loc).cloned() else {
                    return Err(self
                        .err(
                            p.pos,
                            format!("unsupported pointer arithmetic: '{name}' is not an array"),
                        )
                        .expected(
                            "an array declared in the init block, like 'int a[2] = {0, 0}'",
                        ));
                };
                let i = self.value(idx)?;
                match i {
                    Operand::Imm(Value::Int(k)) => {
                        match usize::try_from(k).ok().and_then(|k| elems.get(k)) {
                            Some(&e) => Ok((Address::Loc(e), vol)),
                            None => Err(self
                                .err(idx.pos, format!("array index {k} is out of bounds"))
                                .expected(format!("an index below {}", elems.len()))),
                        }
                    }
                    Operand::Imm(Value::Addr(_)) => Err(self
                        .err(idx.pos, "an address used as an array index")
                        .expected("an integer index")),
                    Operand::Reg(_) => {
                        // A ladder of comparisons picks the element; an
                        // index out of bounds leaves an integer in the
                        // address register, which no location matches, so
                        // that path has no execution.
                        let pr = self.tmp();
                        self.emit(
                            InstrKind::Mov {
                                dst: pr.clone(),
                                src: i.clone(),
                            },
                            vec![],
                        );
                        let done = self.label();
                        for (k, e) in elems.iter().enumerate() {
                            let next = self.label();
                            self.emit(
                                InstrKind::Branch {
                                    cmp: CmpOp::Ne,
                                    a: i.clone(),
                                    b: Operand::Imm(Value::Int(k as i64)),
                                    target: next.clone(),
                                },
                                vec![],
                            );
                            self.emit(
                                InstrKind::Mov {
                                    dst: pr.clone(),
                                    src: Operand::Imm(Value::Addr(*e)),
                                },
                                vec![],
                            );
                            self.emit(
                                InstrKind::Goto {
                                    target: done.clone(),
                                },
                                vec![],
                            );
                            self.emit_label(&next);
                        }
                        self.emit_label(&done);
                        self.reg_base.insert(pr.clone(), loc);
                        Ok((Address::Reg(pr), vol))
                    }
                }
            }
            _ => Err(self
                .err(p.pos, "unsupported pointer expression")
                .expected("a pointer parameter of the thread")),
        }
    }

    /// Tags of a plain access: non-atomic, `VOL` added when the pointer
    /// is volatile (volatile gives no inter-thread guarantee in C11 or
    /// OpenCL C: the access stays non-atomic, docs/decisions.md issue 8).
    fn plain_tags(&self, volatile: bool) -> Vec<&'static str> {
        if volatile {
            vec!["NA", "VOL"]
        } else {
            vec!["NA"]
        }
    }

    fn atomic_loc(&mut self, p: &Expr) -> Result<Address, Diagnostic> {
        let (addr, _) = self.pointer(p)?;
        match &addr {
            Address::Loc(l) => self.facts.set_atomic(*l),
            Address::Reg(r) => {
                let b = self.reg_base[r];
                self.facts.set_atomic(b);
            }
        }
        Ok(addr)
    }

    fn ident_arg<'e>(&self, e: &'e Expr, expected: &str) -> Result<&'e str, Diagnostic> {
        match &e.kind {
            ExprKind::Var(n) => Ok(n),
            _ => Err(self.err(e.pos, "unexpected expression").expected(expected)),
        }
    }

    fn order_arg(&self, e: &Expr) -> Result<&'static str, Diagnostic> {
        let n = self.ident_arg(e, ORDER_EXPECTED)?;
        memory_order(n).ok_or_else(|| {
            self.err(e.pos, format!("unknown memory order '{n}'"))
                .expected(ORDER_EXPECTED)
        })
    }

    fn scope_arg(&self, e: &Expr) -> Result<&'static str, Diagnostic> {
        let n = self.ident_arg(e, SCOPE_EXPECTED)?;
        memory_scope(n).ok_or_else(|| {
            self.err(e.pos, format!("unknown memory scope '{n}'"))
                .expected(SCOPE_EXPECTED)
        })
    }

    /// Fence flags `CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE` → region tags.
    fn flags_arg(&self, e: &Expr, out: &mut Vec<&'static str>) -> Result<(), Diagnostic> {
        const EXPECTED: &str =
            "fence flags: CLK_GLOBAL_MEM_FENCE, CLK_LOCAL_MEM_FENCE or both joined by '|'";
        match &e.kind {
            ExprKind::Bin(BinKind::Arith(BinOp::Or), a, b) => {
                self.flags_arg(a, out)?;
                self.flags_arg(b, out)
            }
            ExprKind::Var(n) => {
                let tag = match n.as_str() {
                    "CLK_GLOBAL_MEM_FENCE" => "GLOBAL",
                    "CLK_LOCAL_MEM_FENCE" => "LOCAL",
                    "CLK_IMAGE_MEM_FENCE" => {
                        return Err(self
                            .err(e.pos, "unsupported fence flag CLK_IMAGE_MEM_FENCE")
                            .expected(EXPECTED));
                    }
                    _ => {
                        return Err(self
                            .err(e.pos, format!("unknown fence flag '{n}'"))
                            .expected(EXPECTED));
                    }
                };
                if !out.contains(&tag) {
                    out.push(tag);
                }
                Ok(())
            }
            _ => Err(self.err(e.pos, "unexpected expression").expected(EXPECTED)),
        }
    }

    /// Memory order, scope and remote flag from the trailing arguments of an
    /// `_explicit` call: `args` are those after the operands.
    fn order_scope(
        &self,
        call: &Expr,
        name: &str,
        explicit: bool,
        args: &[Expr],
        orders: usize,
    ) -> Result<(Vec<&'static str>, &'static str, bool), Diagnostic> {
        if !explicit {
            if let Some(a) = args.first() {
                return Err(self
                    .err(a.pos, format!("too many arguments to '{name}'"))
                    .expected(format!("'{name}_explicit' to give a memory order")));
            }
            return Ok((vec!["SC"; orders], self.default_scope, false));
        }
        if args.len() < orders {
            return Err(self
                .err(
                    call.pos,
                    format!("'{name}' takes {orders} memory order argument(s)"),
                )
                .expected(ORDER_EXPECTED));
        }
        let mut os = Vec::new();
        for a in &args[..orders] {
            os.push(self.order_arg(a)?);
        }
        let rest = &args[orders..];
        let mut scope = self.default_scope;
        let mut remote = false;
        if let Some(s) = rest.first() {
            scope = self.scope_arg(s)?;
        }
        if let Some(r) = rest.get(1) {
            match self.ident_arg(r, "'remote' or 'non_remote'")? {
                "remote" => remote = true,
                "non_remote" => {}
                other => {
                    return Err(self
                        .err(r.pos, format!("unexpected argument '{other}'"))
                        .expected("'remote' or 'non_remote' after the memory scope"));
                }
            }
        }
        if let Some(x) = rest.get(2) {
            return Err(self
                .err(x.pos, format!("too many arguments to '{name}'"))
                .expected("at most a memory scope and a remote flag after the memory order"));
        }
        Ok((os, scope, remote))
    }

    fn arity(&self, call: &Expr, name: &str, args: &[Expr], n: usize) -> Result<(), Diagnostic> {
        if args.len() < n {
            return Err(self
                .err(call.pos, format!("'{name}' needs at least {n} argument(s)"))
                .expected(format!("{n} operand(s)")));
        }
        Ok(())
    }

    fn call(
        &mut self,
        e: &Expr,
        name: &str,
        args: &[Expr],
        dst: Option<&str>,
    ) -> Result<Option<Operand>, Diagnostic> {
        // The text of the call itself for its instructions.
        let saved = (self.pos, self.text.clone());
        let (base, explicit) = match name.strip_suffix("_explicit") {
            Some(b) => (b, true),
            None => (name, false),
        };
        let mut result = None;
        let tagset = |ord: &'static str, scope: &'static str, remote: bool| {
            let mut t = vec![ord, scope];
            if remote {
                t.push("REMOTE");
            }
            t
        };
        match base {
            "atomic_load" => {
                self.arity(e, name, args, 1)?;
                let addr = self.atomic_loc(&args[0])?;
                let (os, scope, remote) = self.order_scope(e, name, explicit, &args[1..], 1)?;
                let d = dst.map(str::to_string).unwrap_or_else(|| self.tmp());
                self.set_stmt(e.pos, e.span);
                self.emit(
                    InstrKind::Load {
                        dst: d.clone(),
                        addr,
                    },
                    tagset(os[0], scope, remote),
                );
                result = Some(Operand::Reg(d));
            }
            "atomic_store" => {
                self.arity(e, name, args, 2)?;
                let addr = self.atomic_loc(&args[0])?;
                let v = self.value(&args[1])?;
                let (os, scope, remote) = self.order_scope(e, name, explicit, &args[2..], 1)?;
                self.set_stmt(e.pos, e.span);
                self.emit(
                    InstrKind::Store { addr, src: v },
                    tagset(os[0], scope, remote),
                );
            }
            "atomic_exchange" | "atomic_fetch_add" | "atomic_fetch_sub" | "atomic_fetch_and"
            | "atomic_fetch_or" | "atomic_fetch_xor" | "atomic_fetch_min" | "atomic_fetch_max" => {
                self.arity(e, name, args, 2)?;
                let addr = self.atomic_loc(&args[0])?;
                let v = self.value(&args[1])?;
                let (os, scope, remote) = self.order_scope(e, name, explicit, &args[2..], 1)?;
                let op = match base {
                    "atomic_exchange" => RmwOp::Exch(v),
                    "atomic_fetch_add" => RmwOp::Bin(BinOp::Add, v),
                    "atomic_fetch_sub" => RmwOp::Bin(BinOp::Sub, v),
                    "atomic_fetch_and" => RmwOp::Bin(BinOp::And, v),
                    "atomic_fetch_or" => RmwOp::Bin(BinOp::Or, v),
                    "atomic_fetch_xor" => RmwOp::Bin(BinOp::Xor, v),
                    "atomic_fetch_min" => RmwOp::Bin(BinOp::Min, v),
                    _ => RmwOp::Bin(BinOp::Max, v),
                };
                let d = dst.map(str::to_string).unwrap_or_else(|| self.tmp());
                self.set_stmt(e.pos, e.span);
                self.emit(
                    InstrKind::Rmw {
                        dst: Some(d.clone()),
                        addr,
                        op,
                    },
                    tagset(os[0], scope, remote),
                );
                result = Some(Operand::Reg(d));
            }
            "atomic_compare_exchange_strong" | "atomic_compare_exchange_weak" => {
                self.arity(e, name, args, 3)?;
                let addr = self.atomic_loc(&args[0])?;
                // The expected value lives in a local (`&r`) or a location.
                enum Exp {
                    Reg(String),
                    Loc(Address, bool),
                }
                let exp = match &args[1].kind {
                    ExprKind::AddrOf(r) if !self.params.contains_key(r) => Exp::Reg(r.clone()),
                    _ => {
                        let (a, vol) = self.pointer(&args[1])?;
                        Exp::Loc(a, vol)
                    }
                };
                let desired = self.value(&args[2])?;
                let (os, scope, remote) = self.order_scope(e, name, explicit, &args[3..], 2)?;
                self.set_stmt(e.pos, e.span);
                let exp_val = match &exp {
                    Exp::Reg(r) => Operand::Reg(r.clone()),
                    Exp::Loc(a, vol) => {
                        let t = self.tmp();
                        let tags = self.plain_tags(*vol);
                        self.emit(
                            InstrKind::Load {
                                dst: t.clone(),
                                addr: a.clone(),
                            },
                            tags,
                        );
                        Operand::Reg(t)
                    }
                };
                let old = self.tmp();
                // The failure order only differs on the lone read of a
                // failed CAS; the IR has one tag set per instruction, so the
                // success order is used for both (docs/decisions.md).
                let _ = os[1];
                self.emit(
                    InstrKind::Rmw {
                        dst: Some(old.clone()),
                        addr,
                        op: RmwOp::Cas {
                            expected: exp_val.clone(),
                            new: desired,
                        },
                    },
                    tagset(os[0], scope, remote),
                );
                let d = dst.map(str::to_string).unwrap_or_else(|| self.tmp());
                let (l_ok, l_end) = (self.label(), self.label());
                self.emit(
                    InstrKind::Branch {
                        cmp: CmpOp::Eq,
                        a: Operand::Reg(old.clone()),
                        b: exp_val,
                        target: l_ok.clone(),
                    },
                    vec![],
                );
                match &exp {
                    Exp::Reg(r) => self.emit(
                        InstrKind::Mov {
                            dst: r.clone(),
                            src: Operand::Reg(old),
                        },
                        vec![],
                    ),
                    Exp::Loc(a, vol) => {
                        let tags = self.plain_tags(*vol);
                        self.emit(
                            InstrKind::Store {
                                addr: a.clone(),
                                src: Operand::Reg(old),
                            },
                            tags,
                        )
                    }
                }
                self.emit(
                    InstrKind::Mov {
                        dst: d.clone(),
                        src: Operand::Imm(Value::Int(0)),
                    },
                    vec![],
                );
                self.emit(
                    InstrKind::Goto {
                        target: l_end.clone(),
                    },
                    vec![],
                );
                self.emit_label(&l_ok);
                self.emit(
                    InstrKind::Mov {
                        dst: d.clone(),
                        src: Operand::Imm(Value::Int(1)),
                    },
                    vec![],
                );
                self.emit_label(&l_end);
                result = Some(Operand::Reg(d));
            }
            "atomic_thread_fence" => {
                self.arity(e, name, args, 1)?;
                let o = self.order_arg(&args[0])?;
                let scope = match args.get(1) {
                    Some(s) => self.scope_arg(s)?,
                    None => self.default_scope,
                };
                if let Some(x) = args.get(2) {
                    return Err(self
                        .err(x.pos, format!("too many arguments to '{name}'"))
                        .expected("a memory order and an optional memory scope"));
                }
                self.set_stmt(e.pos, e.span);
                self.emit(InstrKind::Fence, vec![o, scope, "GLOBAL", "LOCAL"]);
            }
            "atomic_work_item_fence" => {
                if args.len() != 3 {
                    return Err(self
                        .err(e.pos, "'atomic_work_item_fence' takes 3 arguments")
                        .expected("flags, a memory order and a memory scope"));
                }
                let mut tags = Vec::new();
                self.flags_arg(&args[0], &mut tags)?;
                let o = self.order_arg(&args[1])?;
                let scope = self.scope_arg(&args[2])?;
                self.set_stmt(e.pos, e.span);
                let mut all = vec![o, scope];
                all.extend(tags);
                self.emit(InstrKind::Fence, all);
            }
            "barrier" | "work_group_barrier" => {
                if args.is_empty() || args.len() > 2 || (base == "barrier" && args.len() != 1) {
                    return Err(self
                        .err(e.pos, format!("wrong number of arguments to '{name}'"))
                        .expected("fence flags, and for work_group_barrier an optional scope"));
                }
                let mut tags = Vec::new();
                self.flags_arg(&args[0], &mut tags)?;
                if let Some(s) = args.get(1) {
                    let sc = self.scope_arg(s)?;
                    if sc != "WG" && sc != "DEV" {
                        return Err(self
                            .err(s.pos, "unsupported barrier scope")
                            .expected("memory_scope_work_group or memory_scope_device"));
                    }
                }
                self.set_stmt(e.pos, e.span);
                let mut all = vec!["WG"];
                all.extend(tags);
                self.emit(
                    InstrKind::Barrier {
                        kind: BarrierKind::Sync,
                        id: Operand::Imm(Value::Int(0)),
                        count: None,
                    },
                    all,
                );
            }
            _ => {
                return Err(self
                    .err(e.pos, format!("unsupported function '{name}'"))
                    .expected(
                        "atomic_load/store/exchange/fetch_<op>/compare_exchange_<strong|weak>[_explicit], atomic_thread_fence, atomic_work_item_fence or barrier",
                    ));
            }
        }
        self.pos = saved.0;
        self.text = saved.1;
        Ok(result)
    }
}

/// Source text on one line, whitespace collapsed.
fn squash(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
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
            Tok::Ident(_) if p.lx.peek2()?.1.is_punct("=") => {
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
            text: String::new(),
        };
        g.block(&ts.body)?;
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
            let addr = match &ins.kind {
                InstrKind::Load { addr, .. }
                | InstrKind::Store { addr, .. }
                | InstrKind::Rmw { addr, .. } => addr,
                _ => continue,
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
