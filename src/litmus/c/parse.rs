//! C source to the syntax tree of [`super::ast`]: the init block, thread
//! headers and parameters, statements and expressions (precedence
//! climbing), with errors at file:line:col.

use super::ast::{BinKind, Expr, ExprKind, Param, Stmt, StmtKind, ThreadSrc};
use super::lex::CLex;
use super::lower::LocFacts;
use crate::diag::{Diagnostic, HerdForm};
use crate::ir::{BinOp, CmpOp, LocId, Pos, ScopeLevel, Value};
use crate::lex_util;
use crate::litmus::dialect::LocTable;
use crate::litmus::lexer::{Tok, Token};
use crate::litmus::table;
use crate::litmus::token_parser::{Nesting, TokenParser};

pub(super) struct Parser<'a> {
    pub(super) lx: CLex<'a>,
    pub(super) file: &'a str,
    pub(super) depth: u32,
    /// The last token peeked, reused by a peek or next from the same state.
    pub(super) peeked: lex_util::Lookahead<CLex<'a>>,
}

/// Whether herd's `S128` variant (128-bit values) is set: by the test's
/// header or by `--variant S128`.
fn has_s128_variant(src: &str) -> bool {
    super::super::variant_is_set("S128")
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

const STMT_EXPECTED: &str = "a statement: a declaration, an assignment, '*p = e;', a call, 'if', 'while', 'do', 'for', 'goto', a label or a block";

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

    fn peek_is_punct(&self, p: &str) -> Result<bool, Diagnostic> {
        self.peeked.peek_with(&self.lx, |t| t.is_punct(p))
    }
}

impl Nesting for Parser<'_> {
    fn depth(&mut self) -> &mut u32 {
        &mut self.depth
    }
}

impl<'a> Parser<'a> {
    // ---- init block ------------------------------------------------------

    pub(super) fn parse_init(
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
            self.peeked.peek_second(&self.lx)?.is_punct(":"),
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

    pub(super) fn parse_thread(&mut self, index: usize) -> Result<ThreadSrc, Diagnostic> {
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
            if !self.peek_is_punct(",")? {
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
        while self.peek_is_punct("*")? || self.peek()?.is_ident("const") {
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
        let second = self.peeked.peek_second(&self.lx)?;
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
                let init = if self.peek_is_punct(";")? {
                    self.next()?;
                    Vec::new()
                } else {
                    self.parse_simple_stmt(true)?
                };
                let cond = if self.peek_is_punct(";")? {
                    None
                } else {
                    Some(self.parse_expr()?)
                };
                self.expect_punct(";", "';' after the loop condition")?;
                let step = if self.peek_is_punct(")")? {
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
            "goto" => {
                self.next()?;
                let (label, _) = self.expect_ident("a label name after 'goto'")?;
                let end = self.expect_punct(";", "';' after 'goto L'")?.end;
                return Ok(vec![mk(StmtKind::Goto(label), end)]);
            }
            "return" | "break" | "continue" | "switch" | "case" | "default" => {
                return Err(self
                    .err(pos, format!("unsupported statement '{word}'"))
                    .expected(STMT_EXPECTED));
            }
            _ => {}
        }
        // A label `B1:` (herd names barriers this way): a jump target for
        // `goto`, then the statement it labels.
        if second.is_punct(":") && !is_type_word(&word) {
            self.next()?;
            let colon = self.next()?;
            self.enter(pos)?;
            let s = self.parse_stmt();
            self.leave();
            let mut out = vec![mk(StmtKind::Label(word), colon.end)];
            out.extend(s?);
            return Ok(out);
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
                if self.peek_is_punct("[")? {
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
        let second = self.peeked.peek_second(&self.lx)?;
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
                if self.peek_is_punct("(")? {
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
