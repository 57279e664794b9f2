//! The dialect-independent part of a herd-style litmus file.
//!
//! ```text
//! ARCH name  junk...                 first line (junk ignored)
//! "doc string"  Key=Value ...        optional preamble
//! { x=0; P0:r1=0; y=&x; }            init block
//! { y @ generic aliases x; }         ... with proxy aliases (PTX 7.5)
//!  P0@cta 0,gpu 0 | P1 ;             thread table: header row ...
//!  instr          | instr ;          ... and code rows, cells split by '|'
//! scopes: (sys (gpu (cta P0) ...))   optional scope tree
//! locations [x; 1:r0;]               optional observed terms
//! exists (P1:r0 == 1 /\ x = 2)       condition
//! << ... >>                          ignored
//! ```
//!
//! Instruction cells are handed to a [`Dialect`], chosen *per thread* by a
//! selector that sees the thread header, so a compound test (`X86+PTX`) only
//! needs a selector mapping `P0@cpu` to x86 and `P1@cta 0,gpu 0` to PTX.

use std::collections::{HashMap, HashSet};

use super::lexer::{Lexer, Tok, Token};
use crate::diag::Diagnostic;
use crate::ir::{
    Arch, CmpOp, Condition, Instr, InstrKind, LocId, Location, Operand, Pos, Prop, Proxy,
    Quantifier, Reg, ScopeLevel, Term, Test, Thread, Value,
};

/// The instruction syntax of one dialect, plugged into the common parser.
pub trait Dialect: Sync {
    /// The dialect; its name is added as a tag to every instruction.
    fn arch(&self) -> Arch;

    /// Scope levels a thread of this dialect may be placed in, outermost
    /// first. The first one is the implicit root (it is accepted in headers
    /// and scope trees but left out of placements). Empty: no placement.
    fn scope_levels(&self) -> &'static [&'static str];

    /// The canonical form of a register name written in the init block or a
    /// condition (`eax` → `EAX`), or `None` if it cannot be a register.
    fn normalize_reg(&self, name: &str) -> Option<Reg>;

    /// What a register looks like, for error messages.
    fn register_hint(&self) -> &'static str;

    /// The instance number of `level` when a header names it without one
    /// (`P0@cpu` is `cpu 0` in a compound test). `None`: a number is required.
    fn default_instance(&self, _level: &str) -> Option<u32> {
        None
    }

    /// Parses one instruction (labels are handled by the caller) from `cur`,
    /// which holds the tokens of one table cell. Returns the instruction kind
    /// and its tags (without the arch tag), or `None` for an instruction that
    /// produces no IR on its own (x86 `CMP`). Tokens left unconsumed are an
    /// error reported by the caller.
    fn parse_instr(
        &self,
        cur: &mut Cursor<'_>,
        ctx: &mut ThreadCtx<'_>,
    ) -> Result<Option<(InstrKind, Vec<String>)>, Diagnostic>;
}

/// Picks the dialect of a thread from its header.
pub type DialectSelector<'s> =
    dyn Fn(&ThreadHeader) -> Result<&'static dyn Dialect, Diagnostic> + 's;

/// `P1@cta 0,gpu 0`: a column header of the thread table.
#[derive(Clone, Debug)]
pub struct ThreadHeader {
    /// `N` of `PN`.
    pub id: usize,
    /// Position of `PN`.
    pub pos: Pos,
    /// Placement items after `@`: level name (lower case), optional number.
    pub items: Vec<PlacementItem>,
}

/// One `level N` item of a thread header.
#[derive(Clone, Debug)]
pub struct PlacementItem {
    pub level: String,
    pub id: Option<u32>,
    pub pos: Pos,
}

/// The locations of a test, in order of first mention.
#[derive(Debug, Default)]
pub struct LocTable {
    locs: Vec<Location>,
    declared: HashSet<String>,
}

impl LocTable {
    /// The id of location `name`, created (initial value 0) if new.
    pub fn id(&mut self, name: &str) -> LocId {
        if let Some(i) = self.locs.iter().position(|l| l.name == name) {
            return i;
        }
        self.locs.push(Location::new(name, Value::Int(0)));
        self.locs.len() - 1
    }

    /// True when the init block gives `name` a value as a location.
    pub fn is_declared(&self, name: &str) -> bool {
        self.declared.contains(name)
    }

    /// Declares a plain location `name` with initial value `init`. Fails on
    /// a second declaration.
    pub fn declare(&mut self, name: &str, init: Value) -> Result<LocId, String> {
        if !self.declared.insert(name.to_string()) {
            return Err(format!("location '{name}' is declared twice"));
        }
        let id = self.id(name);
        self.locs[id].init = init;
        Ok(id)
    }

    /// Declares `name` an alias of `of` through `proxy` (creating `of` if
    /// new). Fails on a second declaration of `name` or an alias cycle.
    pub fn declare_alias(&mut self, name: &str, proxy: Proxy, of: &str) -> Result<(), String> {
        if name == of {
            return Err(format!("location '{name}' cannot alias itself"));
        }
        if !self.declared.insert(name.to_string()) {
            return Err(format!("location '{name}' is initialised twice"));
        }
        let id = self.id(name);
        let target = self.id(of);
        // Follow the target's chain: reaching `id` would close a cycle.
        let mut cur = Some(target);
        let mut steps = 0;
        while let Some(c) = cur {
            if c == id || steps > self.locs.len() {
                return Err(format!("alias declarations form a cycle through '{name}'"));
            }
            cur = self.locs[c].alias_of;
            steps += 1;
        }
        self.locs[id].alias_of = Some(target);
        self.locs[id].proxy = proxy;
        Ok(())
    }

    /// The locations, in order of first mention.
    pub fn into_locations(self) -> Vec<Location> {
        self.locs
    }

    /// The locations, `LocId` order.
    pub fn locations(&self) -> &[Location] {
        &self.locs
    }
}

/// A thread of a front end that parses its code itself (the C dialect),
/// handed to [`parse_tail`] so that the shared `scopes`, `locations` and
/// condition parsers can see and extend it.
pub struct TailThread {
    /// Position of the thread's header, for diagnostics.
    pub pos: Pos,
    /// Its dialect (register names, scope levels).
    pub dialect: &'static dyn Dialect,
    /// Placement, outermost first; a `scopes:` clause may replace it.
    pub placement: Vec<ScopeLevel>,
    /// Register initial values; registers named by the condition are added
    /// with value 0.
    pub reg_init: Vec<(Reg, Value)>,
}

/// What follows the thread code: `scopes`, `locations` and the condition.
/// `lx` is positioned after the code. Returns the observed terms and the
/// condition; `threads` get the registers and placements the clauses add.
pub fn parse_tail(
    lx: Lexer<'_>,
    threads: &mut [TailThread],
    locs: &mut LocTable,
) -> Result<(Vec<Term>, Condition), Diagnostic> {
    let mut p = Parser { lx, depth: 0 };
    let mut builds: Vec<ThreadBuild> = threads
        .iter()
        .enumerate()
        .map(|(i, t)| ThreadBuild {
            header: ThreadHeader {
                id: i,
                pos: t.pos,
                items: Vec::new(),
            },
            dialect: t.dialect,
            placement: t.placement.clone(),
            init_regs: t.reg_init.iter().map(|(r, _)| r.clone()).collect(),
            reg_init: t.reg_init.clone(),
            code: Vec::new(),
            flags: None,
        })
        .collect();
    let mut observed = Vec::new();
    loop {
        let t = p.peek()?;
        match t.ident() {
            Some("scopes") => parse_scopes(&mut p, &mut builds)?,
            Some("locations") => parse_locations(&mut p, &mut builds, locs, &mut observed)?,
            Some("filter") => {
                return Err(p
                    .err(t.pos, "unsupported 'filter' clause")
                    .expected(CONDITION_EXPECTED));
            }
            // herd's `regions: x:PROP ...` (memory regions): no effect on
            // litmix's models, skipped up to the next clause.
            Some("regions") => {
                p.next()?;
                loop {
                    let t = p.peek()?;
                    if t.is_eof()
                        || t.is_punct("~")
                        || t.ident().is_some_and(|s| {
                            matches!(s, "exists" | "forall" | "locations" | "scopes" | "filter")
                        })
                    {
                        break;
                    }
                    p.next()?;
                }
            }
            _ => break,
        }
    }
    // herd accepts a test without a final condition: every execution is
    // reported, as for `forall true`.
    if p.peek()?.is_eof() {
        for (t, b) in threads.iter_mut().zip(builds) {
            t.placement = b.placement;
            t.reg_init = b.reg_init;
        }
        return Ok((
            observed,
            Condition {
                quantifier: Quantifier::Forall,
                prop: Prop::True,
            },
        ));
    }
    let condition = parse_condition(&mut p, &mut builds, locs)?;
    for (t, b) in threads.iter_mut().zip(builds) {
        t.placement = b.placement;
        t.reg_init = b.reg_init;
    }
    Ok((observed, condition))
}

/// What an instruction parser may consult and update about its thread.
pub struct ThreadCtx<'a> {
    /// Thread number.
    pub thread: usize,
    /// Locations of the test.
    pub locs: &'a mut LocTable,
    /// Registers of this thread named in the init block (normalised).
    pub init_regs: &'a HashSet<Reg>,
    /// Operands of the last x86 `CMP`, consumed by a following conditional
    /// jump; reset by anything else.
    pub flags: &'a mut Option<(Operand, Operand)>,
}

/// A cursor over the tokens of one table cell.
pub struct Cursor<'c> {
    toks: &'c [Token],
    i: usize,
    end_pos: Pos,
    file: &'c str,
    src: &'c str,
}

impl<'c> Cursor<'c> {
    /// A cursor over `toks`; `end_pos` is where the cell ends (its `|` or `;`).
    pub fn new(file: &'c str, src: &'c str, toks: &'c [Token], end_pos: Pos) -> Self {
        Cursor {
            toks,
            i: 0,
            end_pos,
            file,
            src,
        }
    }

    /// The current token.
    pub fn peek(&self) -> Option<&'c Token> {
        self.toks.get(self.i)
    }

    /// The token `k` places ahead of the current one.
    pub fn peek_at(&self, k: usize) -> Option<&'c Token> {
        self.toks.get(self.i + k)
    }

    /// Consumes and returns the current token.
    pub fn next_tok(&mut self) -> Option<&'c Token> {
        let t = self.toks.get(self.i)?;
        self.i += 1;
        Some(t)
    }

    /// The last consumed token.
    pub fn prev(&self) -> Option<&'c Token> {
        self.i.checked_sub(1).and_then(|j| self.toks.get(j))
    }

    /// True when every token has been consumed.
    pub fn at_end(&self) -> bool {
        self.i >= self.toks.len()
    }

    /// Position of the current token, or the end of the cell.
    pub fn pos(&self) -> Pos {
        self.peek().map_or(self.end_pos, |t| t.pos)
    }

    /// Index of the current token, to be given to [`Cursor::text_since`].
    pub fn mark(&self) -> usize {
        self.i
    }

    /// The source text from token `mark` to the last consumed token.
    pub fn text_since(&self, mark: usize) -> String {
        match (
            self.toks.get(mark),
            self.i.checked_sub(1).and_then(|j| self.toks.get(j)),
        ) {
            (Some(a), Some(b)) if b.end >= a.start => self.src[a.start..b.end].trim().to_string(),
            _ => String::new(),
        }
    }

    /// A diagnostic at `pos`.
    pub fn error(&self, pos: Pos, msg: impl Into<String>) -> Diagnostic {
        Diagnostic::new(self.file, pos, msg)
    }

    /// Describes the current token (`'x'` or `end of instruction`).
    pub fn found(&self) -> String {
        self.peek()
            .map_or_else(|| "end of instruction".to_string(), Token::describe)
    }

    /// A diagnostic at the current token: "expected X, found Y".
    pub fn unexpected(&self, expected: &str) -> Diagnostic {
        self.error(self.pos(), format!("unexpected {}", self.found()))
            .expected(expected)
    }

    /// Consumes punctuation `p` if it is next.
    pub fn eat_punct(&mut self, p: &str) -> bool {
        if self.peek().is_some_and(|t| t.is_punct(p)) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    /// Consumes punctuation `p` or fails with `expected`.
    pub fn expect_punct(&mut self, p: &str, expected: &str) -> Result<Pos, Diagnostic> {
        let pos = self.pos();
        if self.eat_punct(p) {
            Ok(pos)
        } else {
            Err(self.unexpected(expected))
        }
    }

    /// Consumes an identifier or fails with `expected`.
    pub fn expect_ident(&mut self, expected: &str) -> Result<(&'c str, Pos), Diagnostic> {
        match self.peek() {
            Some(Token {
                tok: Tok::Ident(s),
                pos,
                ..
            }) => {
                self.i += 1;
                Ok((s.as_str(), *pos))
            }
            _ => Err(self.unexpected(expected)),
        }
    }

    /// The name of a memory operand `[name]` whose `[` was just consumed,
    /// through the closing `]`. Offsets (`[x+4]`) are refused.
    pub fn expect_bracketed_name(&mut self) -> Result<&'c str, Diagnostic> {
        let (name, _) = self.expect_ident("a location or a register inside '[ ]'")?;
        if self
            .peek()
            .is_some_and(|t| t.is_punct("+") || t.is_punct("-"))
        {
            return Err(self
                .error(self.pos(), "address offsets are not supported")
                .expected("']'"));
        }
        self.expect_punct("]", "']'")?;
        Ok(name)
    }

    /// Consumes an integer with an optional leading `-` if one is next.
    pub fn eat_int(&mut self) -> Result<Option<i64>, Diagnostic> {
        let neg = self.peek().is_some_and(|t| t.is_punct("-"));
        let k = usize::from(neg);
        match self.peek_at(k).map(|t| &t.tok) {
            Some(Tok::Int(v)) => {
                let v = *v;
                let pos = self.pos();
                self.i += k + 1;
                if neg {
                    v.checked_neg().map(Some).ok_or_else(|| {
                        self.error(pos, "number is out of range")
                            .expected("an integer that fits in 64 bits")
                    })
                } else {
                    Ok(Some(v))
                }
            }
            _ => Ok(None),
        }
    }
}

/// The common parser state.
struct Parser<'a> {
    lx: Lexer<'a>,
    /// Nesting depth of parentheses, to refuse absurdly deep input.
    depth: u32,
}

/// Deepest nesting of parentheses accepted in conditions, scope trees and
/// (in the C front end) expressions and statements.
const MAX_DEPTH: u32 = 128;

/// The token-level steps shared by the recursive-descent parsers of the
/// litmus front ends (the table parser here, C and NVLitmus): a parser
/// names its file and its token source; diagnostics and the usual
/// expect/eat helpers come with it.
pub(super) trait TokenParser {
    /// The file named in diagnostics.
    fn file(&self) -> &str;

    /// Consumes and returns the next token.
    fn next(&mut self) -> Result<Token, Diagnostic>;

    /// The next token, not consumed.
    fn peek(&self) -> Result<Token, Diagnostic>;

    /// A diagnostic at `pos`.
    fn err(&self, pos: Pos, msg: impl Into<String>) -> Diagnostic {
        Diagnostic::new(self.file(), pos, msg)
    }

    /// "unexpected T", expecting `expected`.
    fn unexpected(&self, t: &Token, expected: &str) -> Diagnostic {
        self.err(t.pos, format!("unexpected {}", t.describe()))
            .expected(expected)
    }

    /// Consumes punctuation `p` or fails with `expected`.
    fn expect_punct(&mut self, p: &str, expected: &str) -> Result<Token, Diagnostic> {
        let t = self.next()?;
        if t.is_punct(p) {
            Ok(t)
        } else {
            Err(self.unexpected(&t, expected))
        }
    }

    /// Consumes punctuation `p` if it is next.
    fn eat_punct(&mut self, p: &str) -> Result<bool, Diagnostic> {
        if self.peek()?.is_punct(p) {
            self.next()?;
            Ok(true)
        } else {
            Ok(false)
        }
    }

    /// Consumes an identifier or fails with `expected`.
    fn expect_ident(&mut self, expected: &str) -> Result<(String, Pos), Diagnostic> {
        let t = self.next()?;
        match t.tok {
            Tok::Ident(s) => Ok((s, t.pos)),
            _ => Err(self.unexpected(&t, expected)),
        }
    }
}

/// A [`TokenParser`] that refuses absurdly deep nesting.
pub(super) trait Nesting: TokenParser {
    /// The current nesting depth.
    fn depth(&mut self) -> &mut u32;

    /// Goes one level deeper at `pos`; fails beyond [`MAX_DEPTH`] levels.
    fn enter(&mut self, pos: Pos) -> Result<(), Diagnostic> {
        *self.depth() += 1;
        if *self.depth() > MAX_DEPTH {
            return Err(self
                .err(pos, "nesting is too deep")
                .expected(format!("at most {MAX_DEPTH} nested levels")));
        }
        Ok(())
    }

    /// Comes back one level.
    fn leave(&mut self) {
        *self.depth() -= 1;
    }
}

impl TokenParser for Parser<'_> {
    fn file(&self) -> &str {
        self.lx.file()
    }

    fn next(&mut self) -> Result<Token, Diagnostic> {
        self.lx.next_token()
    }

    fn peek(&self) -> Result<Token, Diagnostic> {
        self.lx.peek_token()
    }
}

impl Nesting for Parser<'_> {
    fn depth(&mut self) -> &mut u32 {
        &mut self.depth
    }
}

/// A register or location named in the init block, before threads are known.
enum InitTarget {
    Loc(String),
    Reg { thread: usize, reg: String },
}

enum InitVal {
    Int(i64),
    Addr(String),
    /// `y @ generic aliases x`: the proxy and the aliased location.
    Alias(Proxy, String, Pos),
}

struct InitEntry {
    target: InitTarget,
    value: InitVal,
    pos: Pos,
}

/// A thread being built.
struct ThreadBuild {
    header: ThreadHeader,
    dialect: &'static dyn Dialect,
    placement: Vec<ScopeLevel>,
    reg_init: Vec<(Reg, Value)>,
    init_regs: HashSet<Reg>,
    code: Vec<Instr>,
    flags: Option<(Operand, Operand)>,
}

/// One cell of a table row.
struct Cell {
    toks: Vec<Token>,
    /// Position of the separator that ends the cell.
    end_pos: Pos,
}

/// `P12` → 12.
pub fn thread_number(name: &str) -> Option<usize> {
    let digits = name.strip_prefix('P')?;
    if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

const TABLE_END_WORDS: &[&str] = &["exists", "forall", "final", "locations", "scopes", "filter"];

fn ends_table(t: &Token) -> bool {
    t.is_eof() || t.is_punct("~") || t.ident().is_some_and(|s| TABLE_END_WORDS.contains(&s))
}

const CONDITION_EXPECTED: &str = "a condition: 'exists', '~exists' or 'forall'";

/// Parses a table-format litmus test. `lx` is positioned at the start of the
/// file; the header line is re-read here. `arch_name` goes into
/// [`Test::arch`].
pub fn parse_table_test(
    lx: Lexer<'_>,
    arch_name: &str,
    select: &DialectSelector<'_>,
) -> Result<Test, Diagnostic> {
    let mut p = Parser { lx, depth: 0 };
    let name = parse_first_line(&mut p)?;
    parse_preamble(&mut p)?;
    let init = parse_init(&mut p)?;

    // Thread table header.
    let first = p.peek()?;
    if ends_table(&first) {
        return Err(p
            .err(
                first.pos,
                format!("missing thread table, found {}", first.describe()),
            )
            .expected(HEADER_EXPECTED));
    }
    let (header_cells, _) = parse_row(&mut p, None)?;
    let mut threads = Vec::new();
    for (i, cell) in header_cells.iter().enumerate() {
        let header = parse_thread_header(&p, cell, i)?;
        let dialect = select(&header)?;
        let placement = header_placement(&p, &header, dialect)?;
        threads.push(ThreadBuild {
            header,
            dialect,
            placement,
            reg_init: Vec::new(),
            init_regs: HashSet::new(),
            code: Vec::new(),
            flags: None,
        });
    }

    let mut locs = LocTable::default();
    apply_init(&p, init, &mut threads, &mut locs)?;

    // Code rows.
    loop {
        let t = p.peek()?;
        if ends_table(&t) {
            break;
        }
        let (cells, row_pos) = parse_row(&mut p, Some(threads.len()))?;
        if cells.len() != threads.len() {
            return Err(p
                .err(
                    row_pos,
                    format!(
                        "row has {} column{} but the table header has {}",
                        cells.len(),
                        if cells.len() == 1 { "" } else { "s" },
                        threads.len()
                    ),
                )
                .expected(format!("{} cells separated by '|'", threads.len())));
        }
        for (th, cell) in threads.iter_mut().zip(&cells) {
            parse_cell(&p, cell, th, &mut locs)?;
        }
    }
    for th in &threads {
        check_labels(&p, th)?;
    }

    // Clauses before the condition.
    let mut observed = Vec::new();
    loop {
        let t = p.peek()?;
        match t.ident() {
            Some("scopes") => parse_scopes(&mut p, &mut threads)?,
            Some("locations") => parse_locations(&mut p, &mut threads, &mut locs, &mut observed)?,
            Some("filter") => {
                return Err(p
                    .err(t.pos, "unsupported 'filter' clause")
                    .expected(CONDITION_EXPECTED));
            }
            _ => break,
        }
    }
    let condition = parse_condition(&mut p, &mut threads, &mut locs)?;

    Ok(Test {
        arch: arch_name.to_string(),
        name,
        file: None,
        locations: locs.locs,
        threads: threads
            .into_iter()
            .map(|t| Thread {
                id: t.header.id,
                arch: t.dialect.arch(),
                placement: t.placement,
                reg_init: t.reg_init,
                code: t.code,
            })
            .collect(),
        condition,
        observed,
    })
}

/// `ARCH name junk...`: returns the name; the rest of the line is skipped.
fn parse_first_line(p: &mut Parser<'_>) -> Result<String, Diagnostic> {
    p.lx.skip_ws()?;
    let Some((arch, _)) = p.lx.read_word() else {
        return Err(p
            .err(p.lx.pos(), "empty file")
            .expected("a header line like 'PTX name'"));
    };
    let Some((name, _)) = p.lx.read_word() else {
        return Err(p
            .err(p.lx.pos(), format!("missing test name after '{arch}'"))
            .expected("a test name on the first line"));
    };
    p.lx.skip_line()?;
    Ok(name)
}

/// Doc strings and `Key=Value` lines up to the init block.
fn parse_preamble(p: &mut Parser<'_>) -> Result<(), Diagnostic> {
    const EXPECTED: &str = "a quoted doc string, a Key=Value line or the init block '{'";
    loop {
        p.lx.skip_ws()?;
        let pos = p.lx.pos();
        match p.lx.peek_char() {
            None => {
                return Err(p.err(pos, "unexpected end of file").expected(EXPECTED));
            }
            Some('{') => return Ok(()),
            Some('"') => {
                p.next()?;
            }
            Some(c) if super::lexer::is_ident_start(c) => {
                let key = p.next()?;
                let mut probe = p.lx;
                probe.skip_inline_ws();
                if probe.peek_char() == Some('=') {
                    p.lx.skip_line()?;
                } else {
                    return Err(p.unexpected(&key, EXPECTED));
                }
            }
            Some(c) => {
                return Err(p
                    .err(pos, format!("unexpected character '{c}'"))
                    .expected(EXPECTED));
            }
        }
    }
}

/// `{ entries }` with an optional `;` after it.
fn parse_init(p: &mut Parser<'_>) -> Result<Vec<InitEntry>, Diagnostic> {
    let mut entries = Vec::new();
    parse_init_block(p, |p| {
        entries.push(parse_init_entry(p)?);
        Ok(())
    })?;
    Ok(entries)
}

/// An init block `{ entry; ... }` with an optional `;` after it, for any
/// front end: `entry` parses one entry.
pub(super) fn parse_init_block<P: TokenParser>(
    p: &mut P,
    mut entry: impl FnMut(&mut P) -> Result<(), Diagnostic>,
) -> Result<(), Diagnostic> {
    p.expect_punct("{", "the init block '{'")?;
    loop {
        let t = p.peek()?;
        if t.is_punct("}") {
            p.next()?;
            break;
        }
        if t.is_punct(";") {
            p.next()?;
            continue;
        }
        if t.is_eof() {
            return Err(p
                .err(t.pos, "unexpected end of file in the init block")
                .expected("'}'"));
        }
        entry(p)?;
        let t = p.peek()?;
        if !(t.is_punct(";") || t.is_punct("}")) {
            return Err(p.unexpected(&t, "';' or '}' after an init entry"));
        }
    }
    p.eat_punct(";")?;
    Ok(())
}

/// `[type] x = v`, `P0:r1 = v`, `0:EAX = v`, `[x] = v`.
fn parse_init_entry(p: &mut Parser<'_>) -> Result<InitEntry, Diagnostic> {
    const EXPECTED: &str = "an init entry like 'x=0' or 'P0:r1=0'";
    let first = p.peek()?;
    let pos = first.pos;
    let target = loop {
        let t = p.next()?;
        match &t.tok {
            Tok::Int(n) => {
                p.expect_punct(":", "':' after a thread number")?;
                let (reg, _) = p.expect_ident("a register name")?;
                break InitTarget::Reg {
                    thread: usize::try_from(*n).unwrap_or(usize::MAX),
                    reg,
                };
            }
            Tok::Punct("[") => {
                let (name, _) = p.expect_ident("a location name")?;
                p.expect_punct("]", "']'")?;
                break InitTarget::Loc(name);
            }
            Tok::Ident(name) => {
                let next = p.peek()?;
                if next.is_punct(":") {
                    let Some(n) = thread_number(name) else {
                        return Err(p
                            .err(t.pos, format!("'{name}' is not a thread name"))
                            .expected("a thread like P0 before ':'"));
                    };
                    p.next()?;
                    let (reg, _) = p.expect_ident("a register name")?;
                    break InitTarget::Reg { thread: n, reg };
                }
                if next.ident().is_some() || next.is_punct("*") {
                    // A type word (`int x = 0`, `int* p = &x`): skip it.
                    while p.eat_punct("*")? {}
                    continue;
                }
                break InitTarget::Loc(name.clone());
            }
            _ => return Err(p.unexpected(&t, EXPECTED)),
        }
    };
    let t = p.next()?;
    if t.is_punct("@") {
        if !matches!(target, InitTarget::Loc(_)) {
            return Err(p
                .err(t.pos, "only a location can be declared an alias")
                .expected("'=' and an initial value"));
        }
        return parse_alias(p, target, pos);
    }
    if !t.is_punct("=") {
        return Err(p.unexpected(&t, "'='"));
    }
    let t = p.next()?;
    let value = match &t.tok {
        Tok::Int(v) => InitVal::Int(*v),
        Tok::Punct("-") => {
            let n = p.next()?;
            match n.tok {
                Tok::Int(v) => InitVal::Int(-v),
                _ => return Err(p.unexpected(&n, "a number after '-'")),
            }
        }
        Tok::Punct("&") => InitVal::Addr(p.expect_ident("a location name after '&'")?.0),
        Tok::Ident(name) => InitVal::Addr(name.clone()),
        _ => return Err(p.unexpected(&t, "an initial value: a number, &x or x")),
    };
    Ok(InitEntry { target, value, pos })
}

const PROXY_KINDS: &str = "a proxy kind: generic, surface, texture or constant";

/// The rest of `y @ generic aliases x` after the `@`.
fn parse_alias(p: &mut Parser<'_>, target: InitTarget, pos: Pos) -> Result<InitEntry, Diagnostic> {
    let (kind, kpos) = p.expect_ident(PROXY_KINDS)?;
    let Some(proxy) = Proxy::from_name(&kind) else {
        return Err(p
            .err(kpos, format!("unknown proxy kind '{kind}'"))
            .expected(PROXY_KINDS));
    };
    let (word, wpos) = p.expect_ident("'aliases'")?;
    if word != "aliases" {
        return Err(p
            .err(wpos, format!("unexpected '{word}'"))
            .expected(format!("'aliases' after '{kind}'")));
    }
    let (of, opos) = p.expect_ident("the name of the aliased location")?;
    Ok(InitEntry {
        target,
        value: InitVal::Alias(proxy, of, opos),
        pos,
    })
}

/// Applies init entries once the threads are known.
fn apply_init(
    p: &Parser<'_>,
    init: Vec<InitEntry>,
    threads: &mut [ThreadBuild],
    locs: &mut LocTable,
) -> Result<(), Diagnostic> {
    for e in init {
        let value = match &e.value {
            InitVal::Int(v) => Value::Int(*v),
            InitVal::Addr(name) => Value::Addr(locs.id(name)),
            InitVal::Alias(proxy, of, opos) => {
                let InitTarget::Loc(name) = &e.target else {
                    continue; // refused by the parser
                };
                declare_alias(p, locs, name, *proxy, of, e.pos, *opos)?;
                continue;
            }
        };
        match e.target {
            InitTarget::Loc(name) => {
                if !locs.declared.insert(name.clone()) {
                    return Err(p
                        .err(e.pos, format!("location '{name}' is initialised twice"))
                        .expected("one init entry per location"));
                }
                let id = locs.id(&name);
                locs.locs[id].init = value;
            }
            InitTarget::Reg { thread, reg } => {
                let n = threads.len();
                let Some(th) = threads.get_mut(thread) else {
                    return Err(p
                        .err(e.pos, format!("unknown thread P{thread} in the init block"))
                        .expected(thread_range(n)));
                };
                let Some(reg) = th.dialect.normalize_reg(&reg) else {
                    return Err(p
                        .err(e.pos, format!("'{reg}' is not a register"))
                        .expected(th.dialect.register_hint()));
                };
                if !th.init_regs.insert(reg.clone()) {
                    return Err(p
                        .err(
                            e.pos,
                            format!("register P{thread}:{reg} is initialised twice"),
                        )
                        .expected("one init entry per register"));
                }
                th.reg_init.push((reg, value));
            }
        }
    }
    Ok(())
}

/// Records `name @ proxy aliases of`: `name` becomes a declared location
/// mapped onto `of`'s physical location.
fn declare_alias(
    p: &Parser<'_>,
    locs: &mut LocTable,
    name: &str,
    proxy: Proxy,
    of: &str,
    pos: Pos,
    of_pos: Pos,
) -> Result<(), Diagnostic> {
    locs.declare_alias(name, proxy, of).map_err(|msg| {
        let at = if msg.contains("itself") || msg.contains("cycle") {
            of_pos
        } else {
            pos
        };
        p.err(at, msg)
            .expected("one declaration per location, aliasing another location")
    })
}

fn thread_range(n: usize) -> String {
    match n {
        0 => "no threads: the table has no columns".to_string(),
        1 => "P0 (the test has 1 thread)".to_string(),
        n => format!("P0 to P{} (the test has {n} threads)", n - 1),
    }
}

/// Reads one table row up to its `;`, split into cells at `|`. Returns the
/// cells and the position of the row's first token.
fn parse_row(p: &mut Parser<'_>, ncols: Option<usize>) -> Result<(Vec<Cell>, Pos), Diagnostic> {
    let first = p.peek()?;
    let row_pos = first.pos;
    let mut cells = Vec::new();
    let mut cur: Vec<Token> = Vec::new();
    let mut last_end: Option<(Pos, usize)> = None;
    loop {
        let t = p.peek()?;
        if t.is_eof() {
            return Err(if ncols.is_none() {
                p.err(t.pos, "unexpected end of file in the thread table header")
                    .expected("'|' or ';'")
            } else {
                p.err(
                    t.pos,
                    format!(
                        "unexpected end of file in a thread table row (the row starts at {row_pos})"
                    ),
                )
                .expected(
                    "'|' or ';' to end the row, or a condition: 'exists', '~exists' or 'forall'",
                )
            });
        }
        // A condition keyword on a new line means the row lacks its ';'.
        if let Some((prev_pos, prev_len)) = last_end
            && t.pos.line > prev_pos.line
            && ends_table(&t)
        {
            let at = Pos {
                line: prev_pos.line,
                col: prev_pos.col + prev_len as u32,
            };
            return Err(p
                .err(at, "missing ';' at the end of the thread table row")
                .expected("'|' or ';'"));
        }
        p.next()?;
        last_end = Some((t.pos, p.lx.src()[t.start..t.end].chars().count()));
        if t.is_punct("|") || t.is_punct(";") {
            cells.push(Cell {
                toks: std::mem::take(&mut cur),
                end_pos: t.pos,
            });
            if t.is_punct(";") {
                return Ok((cells, row_pos));
            }
        } else {
            cur.push(t);
        }
    }
}

const HEADER_EXPECTED: &str = "a thread header like P0 or P0@cta 0,gpu 0";

/// `P0` or `P0@cta 0,gpu 0`; `index` is the column number.
fn parse_thread_header(
    p: &Parser<'_>,
    cell: &Cell,
    index: usize,
) -> Result<ThreadHeader, Diagnostic> {
    let mut cur = Cursor::new(p.lx.file(), p.lx.src(), &cell.toks, cell.end_pos);
    let (name, pos) = match cur.peek().and_then(|t| t.ident().map(|s| (s, t.pos))) {
        Some(x) => x,
        None => return Err(cur.unexpected(HEADER_EXPECTED)),
    };
    let Some(id) = thread_number(name) else {
        return Err(p
            .err(pos, format!("'{name}' is not a thread name"))
            .expected(HEADER_EXPECTED));
    };
    if id != index {
        return Err(p
            .err(pos, format!("thread {name} in column {}", index + 1))
            .expected(format!(
                "P{index}: threads are numbered from P0, left to right"
            )));
    }
    cur.next_tok();
    let mut items = Vec::new();
    if cur.eat_punct("@") {
        loop {
            let (level, lpos) = cur.expect_ident("a scope level like cta, gpu or cpu")?;
            let id = match cur.peek().map(|t| &t.tok) {
                Some(Tok::Int(v)) => {
                    let v = *v;
                    let ipos = cur.pos();
                    cur.next_tok();
                    Some(u32::try_from(v).map_err(|_| {
                        cur.error(ipos, format!("scope instance number {v} is too large"))
                            .expected("a number below 2^32")
                    })?)
                }
                _ => None,
            };
            items.push(PlacementItem {
                level: level.to_ascii_lowercase(),
                id,
                pos: lpos,
            });
            if !cur.eat_punct(",") {
                break;
            }
        }
    }
    if !cur.at_end() {
        return Err(cur.unexpected("',', '|' or ';' after the thread header"));
    }
    Ok(ThreadHeader { id, pos, items })
}

fn levels_list(levels: &[&str]) -> String {
    match levels {
        [] => "nothing".to_string(),
        [a] => a.to_string(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

/// Canonical level name (`system` → `sys`).
fn canon_level(level: &str) -> String {
    let l = level.to_ascii_lowercase();
    if l == "system" { "sys".to_string() } else { l }
}

/// Converts header placement items into a placement, outermost first.
fn header_placement(
    p: &Parser<'_>,
    header: &ThreadHeader,
    dialect: &dyn Dialect,
) -> Result<Vec<ScopeLevel>, Diagnostic> {
    let levels = dialect.scope_levels();
    let mut ranked: Vec<(usize, ScopeLevel)> = Vec::new();
    for item in &header.items {
        let level = canon_level(&item.level);
        if levels.is_empty() {
            return Err(p
                .err(
                    item.pos,
                    format!(
                        "{} threads take no scope placement, found '{}'",
                        dialect.arch().name(),
                        item.level
                    ),
                )
                .expected("'|' or ';' after the thread name"));
        }
        let Some(rank) = levels.iter().position(|l| *l == level) else {
            return Err(p
                .err(item.pos, format!("unknown scope level '{}'", item.level))
                .expected(levels_list(levels)));
        };
        let Some(id) = item.id.or_else(|| dialect.default_instance(&level)) else {
            return Err(p
                .err(
                    item.pos,
                    format!("missing instance number after '{}'", item.level),
                )
                .expected(format!("a number, as in '{} 0'", item.level)));
        };
        if ranked.iter().any(|(r, _)| *r == rank) {
            return Err(p
                .err(
                    item.pos,
                    format!("scope level '{}' given twice", item.level),
                )
                .expected("each level at most once"));
        }
        ranked.push((rank, ScopeLevel { level, id }));
    }
    ranked.sort_by_key(|(r, _)| *r);
    Ok(ranked
        .into_iter()
        .filter(|(r, _)| *r != 0)
        .map(|(_, l)| l)
        .collect())
}

/// Parses the labels and the instruction of one cell into its thread.
fn parse_cell(
    p: &Parser<'_>,
    cell: &Cell,
    th: &mut ThreadBuild,
    locs: &mut LocTable,
) -> Result<(), Diagnostic> {
    let mut cur = Cursor::new(p.lx.file(), p.lx.src(), &cell.toks, cell.end_pos);
    let arch_tag = th.dialect.arch().name().to_string();
    // Leading labels `L:`.
    while let (Some(a), Some(b)) = (cur.peek(), cur.peek_at(1)) {
        let (Some(name), true) = (a.ident(), b.is_punct(":")) else {
            break;
        };
        let mark = cur.mark();
        cur.next_tok();
        cur.next_tok();
        th.flags = None;
        th.code.push(Instr {
            kind: InstrKind::Label(name.to_string()),
            tags: vec![arch_tag.clone()],
            pos: a.pos,
            text: cur.text_since(mark),
        });
    }
    if cur.at_end() {
        return Ok(());
    }
    let mark = cur.mark();
    let pos = cur.pos();
    let mut ctx = ThreadCtx {
        thread: th.header.id,
        locs,
        init_regs: &th.init_regs,
        flags: &mut th.flags,
    };
    let parsed = th.dialect.parse_instr(&mut cur, &mut ctx)?;
    if !cur.at_end() {
        if let (Some(prev), Some(next)) = (cur.prev(), cur.peek())
            && next.pos.line > prev.pos.line
        {
            let width = p.lx.src()[prev.start..prev.end].chars().count() as u32;
            let at = Pos {
                line: prev.pos.line,
                col: prev.pos.col + width,
            };
            return Err(p
                .err(at, "missing ';' at the end of the thread table row")
                .expected("'|' or ';'"));
        }
        return Err(cur.unexpected("'|' or ';' after the instruction"));
    }
    if let Some((kind, tags)) = parsed {
        let mut all = vec![arch_tag];
        all.extend(tags);
        th.code.push(Instr {
            kind,
            tags: all,
            pos,
            text: cur.text_since(mark),
        });
    }
    Ok(())
}

/// Labels are unique and every jump target exists.
fn check_labels(p: &Parser<'_>, th: &ThreadBuild) -> Result<(), Diagnostic> {
    let mut seen = HashSet::new();
    for i in &th.code {
        if let InstrKind::Label(l) = &i.kind
            && !seen.insert(l.as_str())
        {
            return Err(p
                .err(
                    i.pos,
                    format!("label '{l}' defined twice in P{}", th.header.id),
                )
                .expected("distinct labels within a thread"));
        }
    }
    for i in &th.code {
        let target = match &i.kind {
            InstrKind::Branch { target, .. } | InstrKind::Goto { target } => target,
            _ => continue,
        };
        if !seen.contains(target.as_str()) {
            return Err(p
                .err(
                    i.pos,
                    format!("undefined label '{target}' in P{}", th.header.id),
                )
                .expected("a label defined in the same thread"));
        }
    }
    Ok(())
}

/// `scopes: (sys (gpu (cta P0) (cta P1)))`.
fn parse_scopes(p: &mut Parser<'_>, threads: &mut [ThreadBuild]) -> Result<(), Diagnostic> {
    p.next()?; // scopes
    p.expect_punct(":", "':' after 'scopes'")?;
    let mut counters: HashMap<String, u32> = HashMap::new();
    let mut assigned: HashSet<usize> = HashSet::new();
    let mut path: Vec<(ScopeLevel, Pos)> = Vec::new();
    let mut any = false;
    while p.peek()?.is_punct("(") {
        parse_scope_node(p, threads, &mut counters, &mut assigned, &mut path, true)?;
        any = true;
    }
    if !any {
        let t = p.peek()?;
        return Err(p.unexpected(&t, "a scope tree like (sys (gpu (cta P0) (cta P1)))"));
    }
    Ok(())
}

fn parse_scope_node(
    p: &mut Parser<'_>,
    threads: &mut [ThreadBuild],
    counters: &mut HashMap<String, u32>,
    assigned: &mut HashSet<usize>,
    path: &mut Vec<(ScopeLevel, Pos)>,
    top: bool,
) -> Result<(), Diagnostic> {
    let open = p.expect_punct("(", "'('")?;
    p.enter(open.pos)?;
    let t = p.next()?;
    let Tok::Ident(level_name) = &t.tok else {
        return Err(p.unexpected(&t, "a scope level name like sys, gpu or cta"));
    };
    let level = canon_level(level_name);
    let is_root = top && level == "sys";
    if !is_root {
        let c = counters.entry(level.clone()).or_insert(0);
        path.push((ScopeLevel { level, id: *c }, t.pos));
        *c += 1;
    }
    loop {
        let t = p.peek()?;
        if t.is_punct(")") {
            p.next()?;
            break;
        }
        if t.is_punct("(") {
            parse_scope_node(p, threads, counters, assigned, path, false)?;
            continue;
        }
        let Some(n) = t.ident().and_then(thread_number) else {
            return Err(p.unexpected(&t, "a thread like P0, a nested '(' or ')'"));
        };
        p.next()?;
        let count = threads.len();
        let Some(th) = threads.get_mut(n) else {
            return Err(p
                .err(t.pos, format!("unknown thread P{n} in the scope tree"))
                .expected(thread_range(count)));
        };
        if !assigned.insert(n) {
            return Err(p
                .err(
                    t.pos,
                    format!("thread P{n} appears twice in the scope tree"),
                )
                .expected("each thread once"));
        }
        // Check the path against the thread's dialect.
        let levels = th.dialect.scope_levels();
        let mut last_rank = 0;
        for (sl, pos) in path.iter() {
            match levels.iter().position(|l| *l == sl.level) {
                Some(r) if r > last_rank => last_rank = r,
                Some(_) => {
                    return Err(p
                        .err(
                            *pos,
                            format!("scope level '{}' is misplaced in the tree", sl.level),
                        )
                        .expected(format!(
                            "levels nested from outermost to innermost: {}",
                            levels.join(" > ")
                        )));
                }
                None => {
                    return Err(p
                        .err(*pos, format!("unknown scope level '{}'", sl.level))
                        .expected(levels_list(levels)));
                }
            }
        }
        th.placement = path.iter().map(|(l, _)| l.clone()).collect();
    }
    if !is_root {
        path.pop();
    }
    p.leave();
    Ok(())
}

/// `locations [x; 1:r0;]`.
fn parse_locations(
    p: &mut Parser<'_>,
    threads: &mut [ThreadBuild],
    locs: &mut LocTable,
    observed: &mut Vec<Term>,
) -> Result<(), Diagnostic> {
    p.next()?; // locations
    p.expect_punct("[", "'[' after 'locations'")?;
    loop {
        let t = p.peek()?;
        if t.is_punct("]") {
            p.next()?;
            return Ok(());
        }
        if t.is_punct(";") {
            p.next()?;
            continue;
        }
        let term = parse_term(p, threads, locs, false)?;
        if matches!(term, Term::Const(_)) {
            return Err(p
                .err(t.pos, "a constant cannot be observed")
                .expected("a location or a register like 1:r0"));
        }
        observed.push(term);
        let t = p.peek()?;
        if !(t.is_punct(";") || t.is_punct("]")) {
            return Err(p.unexpected(&t, "';' or ']'"));
        }
    }
}

/// The quantifier and proposition; whatever follows is ignored.
fn parse_condition(
    p: &mut Parser<'_>,
    threads: &mut [ThreadBuild],
    locs: &mut LocTable,
) -> Result<Condition, Diagnostic> {
    let t = p.next()?;
    let quantifier = match &t.tok {
        Tok::Ident(s) if s == "exists" || s == "final" => Quantifier::Exists,
        Tok::Ident(s) if s == "forall" => Quantifier::Forall,
        Tok::Punct("~") => {
            let e = p.next()?;
            if !e.is_ident("exists") {
                return Err(p.unexpected(&e, "'exists' after '~'"));
            }
            Quantifier::NotExists
        }
        Tok::Eof => {
            return Err(p
                .err(t.pos, "missing final condition")
                .expected(CONDITION_EXPECTED));
        }
        _ => return Err(p.unexpected(&t, CONDITION_EXPECTED)),
    };
    // The proposition is optional (`exists` alone means `exists true`).
    let starts_prop = match p.peek() {
        Ok(n) => {
            n.is_punct("(")
                || n.is_punct("~")
                || n.is_punct("[")
                || n.is_punct("&")
                || n.is_punct("-")
                || matches!(n.tok, Tok::Int(_))
                || n.ident().is_some_and(|s| s != "with")
        }
        Err(_) => false,
    };
    let prop = if starts_prop {
        parse_or(p, threads, locs)?
    } else {
        Prop::True
    };
    // Nothing may follow on the same line except `;`, `<<` or a comment.
    let mut probe = p.lx;
    probe.skip_inline_ws();
    let rest = &probe.src()[probe.offset()..];
    let ok = rest.is_empty()
        || rest.starts_with('\n')
        || rest.starts_with(';')
        || rest.starts_with("<<")
        || rest.starts_with("(*")
        || rest.starts_with("with");
    if !ok {
        let pos = probe.pos();
        let found = probe
            .peek_token()
            .map(|t| t.describe())
            .unwrap_or_else(|_| format!("'{}'", rest.chars().next().unwrap_or(' ')));
        return Err(p
            .err(pos, format!("unexpected {found} after the condition"))
            .expected("'/\\', '\\/' or the end of the condition"));
    }
    Ok(Condition { quantifier, prop })
}

fn parse_or(
    p: &mut Parser<'_>,
    threads: &mut [ThreadBuild],
    locs: &mut LocTable,
) -> Result<Prop, Diagnostic> {
    let mut lhs = parse_and(p, threads, locs)?;
    while p.eat_punct("\\/")? {
        let rhs = parse_and(p, threads, locs)?;
        lhs = Prop::Or(Box::new(lhs), Box::new(rhs));
    }
    Ok(lhs)
}

fn parse_and(
    p: &mut Parser<'_>,
    threads: &mut [ThreadBuild],
    locs: &mut LocTable,
) -> Result<Prop, Diagnostic> {
    let mut lhs = parse_not(p, threads, locs)?;
    while p.eat_punct("/\\")? {
        let rhs = parse_not(p, threads, locs)?;
        lhs = Prop::And(Box::new(lhs), Box::new(rhs));
    }
    Ok(lhs)
}

fn parse_not(
    p: &mut Parser<'_>,
    threads: &mut [ThreadBuild],
    locs: &mut LocTable,
) -> Result<Prop, Diagnostic> {
    let t = p.peek()?;
    if t.is_punct("~") {
        p.next()?;
        p.enter(t.pos)?;
        let inner = parse_not(p, threads, locs)?;
        p.leave();
        return Ok(Prop::Not(Box::new(inner)));
    }
    if t.is_punct("(") {
        p.next()?;
        p.enter(t.pos)?;
        let inner = parse_or(p, threads, locs)?;
        p.expect_punct(")", "')' or a connective '/\\' or '\\/'")?;
        p.leave();
        return Ok(inner);
    }
    if t.is_ident("true") {
        p.next()?;
        return Ok(Prop::True);
    }
    if t.is_ident("false") {
        p.next()?;
        return Ok(Prop::False);
    }
    let lhs = parse_term(p, threads, locs, false)?;
    let op_tok = p.next()?;
    let op = match op_tok.tok {
        Tok::Punct("=" | "==") => CmpOp::Eq,
        Tok::Punct("!=" | "<>") => CmpOp::Ne,
        Tok::Punct("<") => CmpOp::Lt,
        Tok::Punct("<=") => CmpOp::Le,
        Tok::Punct(">") => CmpOp::Gt,
        Tok::Punct(">=") => CmpOp::Ge,
        _ => return Err(p.unexpected(&op_tok, "a comparison '==', '=' or '!='")),
    };
    let rhs = parse_term(p, threads, locs, true)?;
    Ok(Prop::Cmp(op, lhs, rhs))
}

/// A term of a condition or `locations` clause. A bare identifier is a
/// location's final value on the left of a comparison and its address on the
/// right (herd: `0:r1=x`); `[x]` is always the value.
fn parse_term(
    p: &mut Parser<'_>,
    threads: &mut [ThreadBuild],
    locs: &mut LocTable,
    rhs: bool,
) -> Result<Term, Diagnostic> {
    const EXPECTED: &str = "a register like P0:r1, a location, or a value";
    let t = p.next()?;
    match &t.tok {
        Tok::Int(n) => {
            if p.peek()?.is_punct(":") {
                p.next()?;
                let thread = usize::try_from(*n).unwrap_or(usize::MAX);
                return reg_term(p, threads, thread, t.pos);
            }
            Ok(Term::Const(Value::Int(*n)))
        }
        Tok::Punct("-") => {
            let n = p.next()?;
            match n.tok {
                Tok::Int(v) => Ok(Term::Const(Value::Int(-v))),
                _ => Err(p.unexpected(&n, "a number after '-'")),
            }
        }
        Tok::Punct("&") => {
            let (name, _) = p.expect_ident("a location name after '&'")?;
            Ok(Term::Const(Value::Addr(locs.id(&name))))
        }
        Tok::Punct("[") => {
            let (name, _) = p.expect_ident("a location name")?;
            p.expect_punct("]", "']'")?;
            Ok(Term::Loc(locs.id(&name)))
        }
        Tok::Ident(name) => {
            if p.peek()?.is_punct(":") {
                let Some(thread) = thread_number(name) else {
                    return Err(p
                        .err(t.pos, format!("'{name}' is not a thread name"))
                        .expected("a thread like P0 before ':'"));
                };
                p.next()?;
                return reg_term(p, threads, thread, t.pos);
            }
            let id = locs.id(name);
            Ok(if rhs {
                Term::Const(Value::Addr(id))
            } else {
                Term::Loc(id)
            })
        }
        _ => Err(p.unexpected(&t, EXPECTED)),
    }
}

/// The register after `P<thread>:`; it is created on the thread if new.
fn reg_term(
    p: &mut Parser<'_>,
    threads: &mut [ThreadBuild],
    thread: usize,
    pos: Pos,
) -> Result<Term, Diagnostic> {
    let n = threads.len();
    let Some(th) = threads.get_mut(thread) else {
        return Err(p
            .err(pos, format!("unknown thread P{thread}"))
            .expected(thread_range(n)));
    };
    let (name, rpos) = p.expect_ident("a register name after ':'")?;
    let Some(reg) = th.dialect.normalize_reg(&name) else {
        return Err(p
            .err(rpos, format!("'{name}' is not a register"))
            .expected(th.dialect.register_hint()));
    };
    if !th.reg_init.iter().any(|(r, _)| *r == reg) {
        th.reg_init.push((reg.clone(), Value::Int(0)));
    }
    Ok(Term::Reg { thread, reg })
}
