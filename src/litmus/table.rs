//! The herd-style table format of a litmus test:
//!
//! ```text
//! ARCH name  junk...                 first line (junk ignored)
//! "doc string"  Key=Value ...        optional preamble
//! { x=0; P0:r1=0; y=&x; }            init block
//! { y @ generic aliases x; }         ... with proxy aliases (PTX 7.5)
//!  P0@cta 0,gpu 0 | P1 ;             thread table: header row ...
//!  instr          | instr ;          ... and code rows, cells split by '|'
//! scopes: (sys (gpu (cta P0) ...))   optional scope tree    } parsed by
//! locations [x; 1:r0;]               optional observed terms } [`super::tail`]
//! exists (P1:r0 == 1 /\ x = 2)       condition               }
//! << ... >>                          ignored
//! ```
//!
//! Instruction cells are handed to a [`Dialect`], chosen *per thread* by a
//! selector that sees the thread header (see [`super::dialect`]).

use std::collections::HashSet;

use super::dialect::{
    Cursor, Dialect, DialectSelector, LocTable, PlacementItem, ThreadCtx, ThreadHeader,
};
use super::lexer::{Lexer, Tok, Token};
use super::tail::{CONDITION_EXPECTED, parse_condition, parse_locations, parse_scopes};
use super::token_parser::{Nesting, TokenParser};
use crate::diag::Diagnostic;
use crate::ir::{Instr, InstrKind, Operand, Pos, Proxy, Reg, ScopeLevel, Test, Thread, Value};

/// The common parser state.
pub(super) struct Parser<'a> {
    pub(super) lx: Lexer<'a>,
    /// Nesting depth of parentheses, to refuse absurdly deep input.
    pub(super) depth: u32,
    /// The last token peeked, reused by a next or peek from the same state
    /// (binary-operator levels of a condition peek the same token often).
    pub(super) peeked: crate::lex_util::Lookahead<Lexer<'a>>,
}

impl TokenParser for Parser<'_> {
    fn file(&self) -> &str {
        self.lx.file()
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
pub(super) struct ThreadBuild {
    pub(super) header: ThreadHeader,
    pub(super) dialect: &'static dyn Dialect,
    pub(super) placement: Vec<ScopeLevel>,
    pub(super) reg_init: Vec<(Reg, Value)>,
    pub(super) init_regs: HashSet<Reg>,
    pub(super) code: Vec<Instr>,
    pub(super) flags: Option<(Operand, Operand)>,
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

/// Parses a table-format litmus test. `lx` is positioned at the start of the
/// file; the header line is re-read here. `arch_name` goes into
/// [`Test::arch`].
pub fn parse_table_test(
    lx: Lexer<'_>,
    arch_name: &str,
    select: &DialectSelector<'_>,
) -> Result<Test, Diagnostic> {
    let mut p = Parser {
        lx,
        depth: 0,
        peeked: Default::default(),
    };
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
        locations: locs.into_locations(),
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
                if locs.try_declare(&name, value).is_none() {
                    return Err(p
                        .err(e.pos, format!("location '{name}' is initialised twice"))
                        .expected("one init entry per location"));
                }
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

pub(super) fn thread_range(n: usize) -> String {
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
        // Looked at without a copy of the token (the row's tokens are many).
        let (eof, pos, ends) = p
            .peeked
            .peek_with(&p.lx, |t| (t.is_eof(), t.pos, ends_table(t)))?;
        if eof {
            return Err(if ncols.is_none() {
                p.err(pos, "unexpected end of file in the thread table header")
                    .expected("'|' or ';'")
            } else {
                p.err(
                    pos,
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
            && pos.line > prev_pos.line
            && ends
        {
            let at = Pos {
                line: prev_pos.line,
                col: prev_pos.col + prev_len as u32,
            };
            return Err(p
                .err(at, "missing ';' at the end of the thread table row")
                .expected("'|' or ';'"));
        }
        let t = p.next()?;
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

pub(super) fn levels_list(levels: &[&str]) -> String {
    match levels {
        [] => "nothing".to_string(),
        [a] => a.to_string(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

/// Canonical level name (`system` → `sys`).
pub(super) fn canon_level(level: &str) -> String {
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
