//! The NVLitmus `.test` format (NVIDIA's mixed-proxy tests, seed 002 §6.3).
//!
//! ```text
//! .global x;                              addresses: .global/.shared NAME
//! .global y physically aliases x;           a new virtual address, same memory
//! .surfref s virtually aliases x;           x's address through a proxy
//!                                           (.surfref, .texref, .conref)
//! d0.b0.t0 {                              thread: device, block (CTA), thread
//!   st [x], 42;                             PTX instructions (see [`super::ptx`])
//!   ld.acquire.cta r0, [flag] == 1;         `== v`: only executions where
//! }                                         this load returns v count
//! permit (r0 != 2) as name;               commands: permit / check (may
//! assert (r0 == 2 || r1 == 1) as name;      hold) and assert (must hold)
//! ```
//!
//! `//` starts a comment. Registers are global names: each may be the
//! destination of one thread only, and conditions name them bare (`r1`).
//! Conditions use `==`, `!=`, `&&`, `||`, `not` and parentheses.
//!
//! **Templates.** A file whose text contains a line starting with `$$` is
//! a template: the part before it has holes `$0`, `$1`, ...; each non-blank
//! line after it is a row whose `|`-separated cells fill the holes, in
//! order. Each row is a test of its own, named `STEM#N` (`N` counts rows
//! from 1); a file with several commands gives one test per command
//! (`STEM#N:command`).
//!
//! **Meaning.** A thread `dD.bB.tT` becomes `P<i>@cta B,gpu D` (threads
//! numbered in order of appearance). `permit(c)` / `check(c)` becomes
//! `exists (f /\ c)` and `assert(c)` becomes `forall (~f \/ c)`, where `f`
//! is the conjunction of the `== v` load constraints: the NVLitmus tool asks
//! its model whether `c` may hold (must hold) among the executions where
//! every constrained load returns its value. Each command states the
//! verdict NVIDIA's model gives, so a test is *expected to be validated*
//! (`Ok`) under the PTX 7.5 model. Weak accesses are `.weak`, volatile ones
//! `.relaxed.sys`, as in PTX.
//!
//! Aliases map onto the herd-style declarations of [`super::table`]:
//! `physically aliases` → `@ generic aliases`, `.surfref/.texref/.conref
//! ... virtually aliases` → `@ surface/texture/constant aliases`.
//! [`to_herd`] writes a test in the herd-style PTX form (`litmix convert`).

use crate::ir::text::{PropStyle, prop_text, quantifier_text};
use std::collections::{HashMap, HashSet};

use super::dialect::{Cursor, Dialect, LocTable, ThreadCtx};
use super::lexer::{Lexer, Tok, Token};
use super::ptx;
use super::token_parser::TokenParser;
use crate::diag::Diagnostic;
use crate::ir::outcome::value_text;
use crate::ir::{
    Arch, CmpOp, Condition, Instr, Pos, Prop, Proxy, Quantifier, Reg, ScopeLevel, Term, Test,
    Thread, Value,
};

/// True for file names the NVLitmus front end reads (`*.test`).
pub fn is_nvlitmus_path(path: &std::path::Path) -> bool {
    path.extension().is_some_and(|e| e == "test")
}

/// One test of a `.test` file: a template row (or the whole file) and one
/// of its commands.
pub struct Instance {
    /// 1-based row number for templates, `None` for a plain file.
    pub row: Option<usize>,
    /// The parsed test, or why it could not be parsed.
    pub test: Result<Test, Diagnostic>,
}

/// Parses every test of an NVLitmus file. `file_name` is used in
/// diagnostics and to name the tests (its stem). A problem with the
/// template itself gives one failed instance.
pub fn parse_all(file_name: &str, source: &str) -> Vec<Instance> {
    let stem = std::path::Path::new(file_name)
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("test")
        .to_string();
    let text = strip_comments(source);
    let Some((template, rows)) = split_template(&text) else {
        return parse_instance(file_name, &stem, &text, None)
            .into_iter()
            .map(|test| Instance { row: None, test })
            .collect();
    };
    let holes = max_hole(template).map_or(0, |m| m + 1);
    let mut out = Vec::new();
    for (n, (line_no, row)) in rows.iter().enumerate() {
        let row_no = n + 1;
        let name = format!("{stem}#{row_no}");
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        let filled = if cells.len() > holes {
            Err((
                Pos { line: 1, col: 1 },
                format!(
                    "the row has {} cells but the template has {holes} holes",
                    cells.len()
                ),
            ))
        } else {
            fill(template, &cells)
        };
        let tests = match filled {
            Ok(src) => parse_instance(file_name, &name, &src, Some(row_no)),
            Err((pos, msg)) => {
                let d = Diagnostic::new(
                    file_name,
                    Pos {
                        line: *line_no,
                        col: 1,
                    },
                    format!("template row {row_no}: {msg}"),
                )
                .expected(format!(
                    "as many '|'-separated cells as the template has holes (first unfilled hole at {pos})"
                ))
                .with_source(&text);
                vec![Err(d)]
            }
        };
        out.extend(tests.into_iter().map(|test| Instance {
            row: Some(row_no),
            test,
        }));
    }
    if out.is_empty() {
        out.push(Instance {
            row: None,
            test: Err(
                Diagnostic::new(file_name, Pos { line: 1, col: 1 }, "template without rows")
                    .expected("rows after the '$$' line"),
            ),
        });
    }
    out
}

/// Replaces `// ...` comments by spaces, keeping positions.
fn strip_comments(src: &str) -> String {
    let mut out = String::with_capacity(src.len());
    for line in src.split_inclusive('\n') {
        match line.find("//") {
            Some(i) => {
                out.push_str(&line[..i]);
                for c in line[i..].chars() {
                    out.push(if c == '\n' { '\n' } else { ' ' });
                }
            }
            None => out.push_str(line),
        }
    }
    out
}

/// The template (text before the `$$` line) and the non-blank rows after
/// it with their line numbers, or `None` for a plain file.
fn split_template(text: &str) -> Option<(&str, Vec<(u32, &str)>)> {
    let mut offset = 0;
    for (i, line) in text.split_inclusive('\n').enumerate() {
        if line.trim_start().starts_with("$$") {
            let rows = text[offset + line.len()..]
                .split('\n')
                .enumerate()
                .filter(|(_, l)| !l.trim().is_empty())
                .map(|(k, l)| ((i + 2 + k) as u32, l))
                .collect();
            return Some((&text[..offset], rows));
        }
        offset += line.len();
    }
    None
}

/// The largest `N` of the template's `$N` holes.
fn max_hole(template: &str) -> Option<usize> {
    let b = template.as_bytes();
    let mut best = None;
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'$' && b.get(i + 1).is_some_and(u8::is_ascii_digit) {
            let mut j = i + 1;
            let mut n = 0usize;
            while j < b.len() && b[j].is_ascii_digit() {
                n = n
                    .saturating_mul(10)
                    .saturating_add(usize::from(b[j] - b'0'));
                j += 1;
            }
            best = best.max(Some(n));
            i = j;
        } else {
            i += 1;
        }
    }
    best
}

/// Fills the `$N` holes of `template` with `cells`; line numbers are kept.
fn fill(template: &str, cells: &[&str]) -> Result<String, (Pos, String)> {
    let mut out = String::with_capacity(template.len() + 64);
    let mut chars = template.char_indices().peekable();
    let (mut line, mut col) = (1u32, 1u32);
    while let Some((_, c)) = chars.next() {
        if c == '$' && chars.peek().is_some_and(|(_, d)| d.is_ascii_digit()) {
            let at = Pos { line, col };
            let mut n = 0usize;
            while let Some(&(_, d)) = chars.peek() {
                let Some(v) = d.to_digit(10) else { break };
                n = n.saturating_mul(10).saturating_add(v as usize);
                chars.next();
                col += 1;
            }
            let Some(cell) = cells.get(n) else {
                return Err((
                    at,
                    format!(
                        "the row has {} cells but the template uses ${n}",
                        cells.len()
                    ),
                ));
            };
            out.push_str(cell);
        } else {
            out.push(c);
        }
        if c == '\n' {
            line += 1;
            col = 1;
        } else {
            col += 1;
        }
    }
    Ok(out)
}

/// What a command asks.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Command {
    /// `permit` / `check`: the condition may hold.
    Permit,
    /// `assert`: the condition must hold.
    Assert,
}

struct Parser<'a> {
    lx: Lexer<'a>,
    file: &'a str,
    /// The last token peeked, reused by a next or peek from the same state.
    peeked: crate::lex_util::Lookahead<Lexer<'a>>,
}

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

/// A thread being built.
struct ThreadBuild {
    device: u32,
    block: u32,
    id_text: String,
    code: Vec<Instr>,
    /// Load constraints `dst == v`.
    constraints: Vec<(Reg, i64)>,
}

/// Parses one (filled-in) instance; one test per command.
fn parse_instance(
    file: &str,
    name: &str,
    src: &str,
    row: Option<usize>,
) -> Vec<Result<Test, Diagnostic>> {
    match parse_instance_inner(file, name, src) {
        Ok(v) => v.into_iter().map(Ok).collect(),
        Err(d) => {
            let d = match row {
                Some(r) => Diagnostic {
                    message: format!("template row {r}: {}", d.message),
                    ..d
                },
                None => d,
            };
            vec![Err(d.with_source(src))]
        }
    }
}

fn parse_instance_inner(file: &str, name: &str, src: &str) -> Result<Vec<Test>, Diagnostic> {
    let mut p = Parser {
        lx: Lexer::new(file, src),
        file,
        peeked: crate::lex_util::Lookahead::default(),
    };
    let mut locs = LocTable::default();
    parse_addresses(&mut p, &mut locs)?;
    let mut threads: Vec<ThreadBuild> = Vec::new();
    let mut reg_owner: HashMap<Reg, usize> = HashMap::new();
    loop {
        let t = p.peek()?;
        match t.ident() {
            Some("check" | "permit" | "assert") => break,
            Some(_) => parse_thread(&mut p, &mut locs, &mut threads, &mut reg_owner)?,
            None if t.is_eof() => break,
            None => return Err(p.unexpected(&t, "a thread like d0.b0.t0 { ... }")),
        }
    }
    if threads.is_empty() {
        let t = p.peek()?;
        return Err(p
            .err(t.pos, "no threads")
            .expected("a thread like d0.b0.t0 { ... }"));
    }
    let mut commands = Vec::new();
    loop {
        let t = p.next()?;
        let cmd = match t.ident() {
            Some("permit" | "check") => Command::Permit,
            Some("assert") => Command::Assert,
            None if t.is_eof() => break,
            _ => return Err(p.unexpected(&t, "a command: permit, check or assert")),
        };
        let prop = parse_or(&mut p, &reg_owner)?;
        let (cname, _) = if p.peek()?.is_ident("as") {
            p.next()?;
            p.expect_ident("a command name after 'as'")?
        } else {
            (format!("command{}", commands.len()), t.pos)
        };
        p.expect_punct(";", "';' after the command")?;
        commands.push((cmd, prop, cname));
    }
    if commands.is_empty() {
        let t = p.peek()?;
        return Err(p
            .err(t.pos, "no command")
            .expected("permit (...) as name; or assert (...) as name;"));
    }

    // The load constraints, as a proposition over final register values.
    let mut filter = Prop::True;
    for (i, th) in threads.iter().enumerate() {
        for (r, v) in &th.constraints {
            let c = Prop::Cmp(
                CmpOp::Eq,
                Term::Reg {
                    thread: i,
                    reg: r.clone(),
                },
                Term::Const(Value::Int(*v)),
            );
            filter = match filter {
                Prop::True => c,
                f => Prop::And(Box::new(f), Box::new(c)),
            };
        }
    }
    let locations = locs.into_locations();
    let ir_threads: Vec<Thread> = threads
        .into_iter()
        .enumerate()
        .map(|(i, th)| Thread {
            id: i,
            arch: Arch::Ptx,
            placement: vec![
                ScopeLevel {
                    level: "gpu".into(),
                    id: th.device,
                },
                ScopeLevel {
                    level: "cta".into(),
                    id: th.block,
                },
            ],
            reg_init: Vec::new(),
            code: th.code,
        })
        .collect();
    let several = commands.len() > 1;
    let last = commands.len() - 1;
    // The last command's test takes the locations and threads, the others
    // copies of them.
    let mut shared = Some((locations, ir_threads));
    Ok(commands
        .into_iter()
        .enumerate()
        .map(|(k, (cmd, prop, cname))| {
            let (locations, threads) = if k == last {
                shared.take().expect("taken by the last command only")
            } else {
                let (l, t) = shared.as_ref().expect("kept until the last command");
                (l.clone(), t.clone())
            };
            let condition = match (cmd, &filter) {
                (Command::Permit, Prop::True) => Condition {
                    quantifier: Quantifier::Exists,
                    prop,
                },
                (Command::Permit, f) => Condition {
                    quantifier: Quantifier::Exists,
                    prop: Prop::And(Box::new(f.clone()), Box::new(prop)),
                },
                (Command::Assert, Prop::True) => Condition {
                    quantifier: Quantifier::Forall,
                    prop,
                },
                (Command::Assert, f) => Condition {
                    quantifier: Quantifier::Forall,
                    prop: Prop::Or(Box::new(Prop::Not(Box::new(f.clone()))), Box::new(prop)),
                },
            };
            Test {
                arch: "PTX".into(),
                name: if several {
                    format!("{name}:{cname}")
                } else {
                    name.to_string()
                },
                file: None,
                locations,
                threads,
                condition,
                observed: Vec::new(),
            }
        })
        .collect())
}

const ADDRESS_EXPECTED: &str = "an address declaration (.global x; .surfref s virtually aliases x;) \
or a thread like d0.b0.t0 { ... }";

/// `.global x;`, `.global y physically aliases x;`, `.texref t virtually aliases x;`.
fn parse_addresses(p: &mut Parser<'_>, locs: &mut LocTable) -> Result<(), Diagnostic> {
    while p.peek()?.is_punct(".") {
        p.next()?;
        let (space, spos) =
            p.expect_ident("an address kind: global, shared, surfref, texref or conref")?;
        let proxy = match space.as_str() {
            "global" | "shared" => Proxy::Generic,
            "surfref" => Proxy::Surface,
            "texref" => Proxy::Texture,
            "conref" => Proxy::Constant,
            _ => {
                return Err(p
                    .err(spos, format!("unknown address kind '.{space}'"))
                    .expected("global, shared, surfref, texref or conref"));
            }
        };
        let (name, npos) = p.expect_ident("an address name")?;
        let t = p.next()?;
        if t.is_punct(";") {
            if proxy != Proxy::Generic {
                return Err(p
                    .err(t.pos, format!("a .{space} must alias an address"))
                    .expected("'virtually aliases NAME;'"));
            }
            locs.declare(&name, Value::Int(0))
                .map_err(|m| p.err(npos, m).expected("one declaration per address"))?;
            continue;
        }
        let want = if proxy == Proxy::Generic {
            "physically"
        } else {
            "virtually"
        };
        match t.ident() {
            Some(w) if w == want => {}
            _ => {
                return Err(p.unexpected(&t, &format!("';' or '{want} aliases NAME;'")));
            }
        }
        let a = p.next()?;
        if !a.is_ident("aliases") {
            return Err(p.unexpected(&a, "'aliases'"));
        }
        let (of, opos) = p.expect_ident("the aliased address")?;
        if !locs.is_declared(&of) {
            return Err(p
                .err(opos, format!("undeclared address '{of}'"))
                .expected("an address declared above"));
        }
        locs.declare_alias(&name, proxy, &of)
            .map_err(|m| p.err(npos, m).expected("one declaration per address"))?;
        p.expect_punct(";", "';' after the declaration")?;
    }
    let t = p.peek()?;
    if t.ident().is_none() && !t.is_eof() {
        return Err(p.unexpected(&t, ADDRESS_EXPECTED));
    }
    Ok(())
}

/// `d0.b1.t2` → (0, 1, 2).
fn thread_id(s: &str) -> Option<(u32, u32, u32)> {
    let mut parts = s.split('.');
    let mut num =
        |prefix: char| -> Option<u32> { parts.next()?.strip_prefix(prefix)?.parse().ok() };
    let r = (num('d')?, num('b')?, num('t')?);
    parts.next().is_none().then_some(r)
}

fn parse_thread(
    p: &mut Parser<'_>,
    locs: &mut LocTable,
    threads: &mut Vec<ThreadBuild>,
    reg_owner: &mut HashMap<Reg, usize>,
) -> Result<(), Diagnostic> {
    let (id_text, pos) = p.expect_ident("a thread like d0.b0.t0")?;
    let Some((device, block, _)) = thread_id(&id_text) else {
        return Err(p
            .err(pos, format!("'{id_text}' is not a thread"))
            .expected("a thread like d0.b0.t0 (device, block, thread)"));
    };
    p.expect_punct("{", "'{' after the thread name")?;
    // A thread named twice continues its code.
    let index = match threads.iter().position(|t| t.id_text == id_text) {
        Some(i) => i,
        None => {
            threads.push(ThreadBuild {
                device,
                block,
                id_text,
                code: Vec::new(),
                constraints: Vec::new(),
            });
            threads.len() - 1
        }
    };
    let no_regs = HashSet::new();
    let mut flags = None;
    // The tokens of one instruction, up to its ';' (one buffer for all).
    let mut toks = Vec::new();
    loop {
        let mut t = p.next()?;
        if t.is_punct("}") {
            return Ok(());
        }
        if t.is_eof() {
            return Err(p.unexpected(&t, "'}' to end the thread"));
        }
        toks.clear();
        let end = loop {
            if t.is_punct(";") {
                break t.pos;
            }
            if t.is_eof() || t.is_punct("}") {
                let at = toks.last().map_or(t.pos, |l: &Token| l.pos);
                return Err(p
                    .err(at, "missing ';' after the instruction")
                    .expected("';'"));
            }
            toks.push(t);
            t = p.next()?;
        };
        // A trailing `== v` constrains the value the load returns.
        let mut constraint = None;
        let n = toks.len();
        if n >= 3
            && toks[n - 2].is_punct("==")
            && let Tok::Int(v) = toks[n - 1].tok
        {
            constraint = Some((v, toks[n - 2].pos));
            toks.truncate(n - 2);
        } else if n >= 4
            && toks[n - 3].is_punct("==")
            && toks[n - 2].is_punct("-")
            && let Tok::Int(v) = toks[n - 1].tok
        {
            constraint = Some((-v, toks[n - 3].pos));
            toks.truncate(n - 3);
        }
        let mut cur = Cursor::new(p.file, p.lx.src(), &toks, end);
        let mark = cur.mark();
        let ipos = cur.pos();
        let mut ctx = ThreadCtx {
            thread: index,
            locs,
            init_regs: &no_regs,
            flags: &mut flags,
        };
        let parsed = ptx::PTX.parse_instr(&mut cur, &mut ctx)?;
        if !cur.at_end() {
            return Err(cur.unexpected("';' after the instruction"));
        }
        let Some((kind, tags)) = parsed else {
            continue;
        };
        let dst = match &kind {
            crate::ir::InstrKind::Load { dst, .. } => Some(dst.clone()),
            crate::ir::InstrKind::Rmw { dst, .. } => dst.clone(),
            crate::ir::InstrKind::Mov { dst, .. } | crate::ir::InstrKind::Op { dst, .. } => {
                Some(dst.clone())
            }
            _ => None,
        };
        if let Some(d) = &dst
            && let Some(&other) = reg_owner.get(d)
            && other != index
        {
            return Err(p
                .err(
                    ipos,
                    format!(
                        "register '{d}' is already written by thread {}",
                        threads[other].id_text
                    ),
                )
                .expected("registers unique across threads (conditions name them bare)"));
        }
        if let Some(d) = &dst {
            reg_owner.insert(d.clone(), index);
        }
        if let Some((v, cpos)) = constraint {
            let Some(d) = dst.filter(|_| {
                matches!(
                    kind,
                    crate::ir::InstrKind::Load { .. } | crate::ir::InstrKind::Rmw { .. }
                )
            }) else {
                return Err(p
                    .err(
                        cpos,
                        "only a load or an atomic can have a '== value' constraint",
                    )
                    .expected("';'"));
            };
            threads[index].constraints.push((d, v));
        }
        let mut all = vec![Arch::Ptx.name().to_string()];
        all.extend(tags);
        threads[index].code.push(Instr {
            kind,
            tags: all,
            pos: ipos,
            // Template cells may be padded: `st   [x], 1`.
            text: cur
                .text_since(mark)
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" "),
        });
    }
}

/// `a || b`.
fn parse_or(p: &mut Parser<'_>, regs: &HashMap<Reg, usize>) -> Result<Prop, Diagnostic> {
    let mut lhs = parse_and(p, regs)?;
    while eat_double(p, "|")? {
        let rhs = parse_and(p, regs)?;
        lhs = Prop::Or(Box::new(lhs), Box::new(rhs));
    }
    Ok(lhs)
}

/// `a && b`.
fn parse_and(p: &mut Parser<'_>, regs: &HashMap<Reg, usize>) -> Result<Prop, Diagnostic> {
    let mut lhs = parse_atom(p, regs)?;
    while eat_double(p, "&")? {
        let rhs = parse_atom(p, regs)?;
        lhs = Prop::And(Box::new(lhs), Box::new(rhs));
    }
    Ok(lhs)
}

/// Consumes `||` (or `&&`): two adjacent `c` tokens.
fn eat_double(p: &mut Parser<'_>, c: &str) -> Result<bool, Diagnostic> {
    let t = p.peek()?;
    if !t.is_punct(c) {
        return Ok(false);
    }
    let mut probe = p.lx;
    probe.next_token()?;
    let u = probe.next_token()?;
    if u.is_punct(c) && u.start == t.end {
        p.lx = probe;
        Ok(true)
    } else {
        Err(p.unexpected(&t, &format!("'{c}{c}'")))
    }
}

fn parse_atom(p: &mut Parser<'_>, regs: &HashMap<Reg, usize>) -> Result<Prop, Diagnostic> {
    let t = p.peek()?;
    if t.is_ident("not") {
        p.next()?;
        let inner = parse_atom(p, regs)?;
        return Ok(Prop::Not(Box::new(inner)));
    }
    if t.is_punct("(") {
        p.next()?;
        let inner = parse_or(p, regs)?;
        p.expect_punct(")", "')' or a connective '&&' or '||'")?;
        return Ok(inner);
    }
    let a = parse_value(p, regs)?;
    let op = p.next()?;
    let cmp = if op.is_punct("==") {
        CmpOp::Eq
    } else if op.is_punct("!=") {
        CmpOp::Ne
    } else {
        return Err(p.unexpected(&op, "'==' or '!='"));
    };
    let b = parse_value(p, regs)?;
    Ok(Prop::Cmp(cmp, a, b))
}

fn parse_value(p: &mut Parser<'_>, regs: &HashMap<Reg, usize>) -> Result<Term, Diagnostic> {
    let t = p.next()?;
    match &t.tok {
        Tok::Int(v) => Ok(Term::Const(Value::Int(*v))),
        Tok::Punct("-") => match p.next()?.tok {
            Tok::Int(v) => Ok(Term::Const(Value::Int(-v))),
            _ => Err(p.unexpected(&t, "a number after '-'")),
        },
        Tok::Ident(r) => match regs.get(r) {
            Some(&thread) => Ok(Term::Reg {
                thread,
                reg: r.clone(),
            }),
            None => Err(p
                .err(
                    t.pos,
                    format!("register '{r}' is not written by any thread"),
                )
                .expected("a register that some instruction writes, or a number")),
        },
        _ => Err(p.unexpected(&t, "a register or a number")),
    }
}

/// Writes `test` in the herd-style PTX litmus form. Instructions are
/// written as their source text, which must be PTX-dialect syntax (true for
/// every test this front end produces).
pub fn to_herd(test: &Test, doc: &str) -> String {
    let mut s = format!("PTX {}\n", test.name);
    if !doc.is_empty() {
        s.push_str(&format!("\"{}\"\n", doc.replace('"', "'")));
    }
    s.push_str("{\n");
    for l in &test.locations {
        match l.alias_of {
            None => s.push_str(&format!("{} = {};\n", l.name, value_text(test, l.init))),
            Some(of) => s.push_str(&format!(
                "{} @ {} aliases {};\n",
                l.name,
                l.proxy.name(),
                test.locations[of].name
            )),
        }
    }
    s.push_str("}\n");
    let mut cols: Vec<Vec<String>> = test
        .threads
        .iter()
        .map(|t| {
            let place: Vec<String> = t
                .placement
                .iter()
                .rev()
                .map(|l| format!("{} {}", l.level, l.id))
                .collect();
            let mut col = vec![if place.is_empty() {
                format!("P{}", t.id)
            } else {
                format!("P{}@{}", t.id, place.join(","))
            }];
            col.extend(t.code.iter().map(|i| i.text.clone()));
            col
        })
        .collect();
    let rows = cols.iter().map(Vec::len).max().unwrap_or(0);
    for c in &mut cols {
        c.resize(rows, String::new());
    }
    let widths: Vec<usize> = cols
        .iter()
        .map(|c| c.iter().map(String::len).max().unwrap_or(0))
        .collect();
    for r in 0..rows {
        let cells: Vec<String> = cols
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!(" {:w$} ", c[r], w = *w))
            .collect();
        s.push_str(&cells.join("|"));
        s.push_str(";\n");
    }
    let term = |t: &Term| {
        Ok::<_, std::convert::Infallible>(match t {
            Term::Reg { thread, reg } => format!("P{thread}:{reg}"),
            Term::Loc(l) => format!("[{}]", test.locations[*l].name),
            Term::Const(v) => value_text(test, *v),
        })
    };
    let prop = match prop_text(&test.condition.prop, PropStyle::NVLITMUS, &term) {
        Ok(p) => p,
        Err(e) => match e {},
    };
    s.push_str(&format!(
        "{} ({prop})\n",
        quantifier_text(test.condition.quantifier)
    ));
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::InstrKind;

    fn one(src: &str) -> Test {
        let mut v = parse_all("t.test", src);
        assert_eq!(v.len(), 1);
        v.remove(0)
            .test
            .unwrap_or_else(|d| panic!("{}", d.render()))
    }

    fn err(src: &str) -> Diagnostic {
        let v = parse_all("t.test", src);
        v.into_iter().find_map(|i| i.test.err()).expect("an error")
    }

    const MP: &str = "// message passing\n.global x;\n.surfref s virtually aliases x;\n\
        .global y physically aliases x;\n.global flag;\n\n\
        d0.b0.t0 {\n  st [x], 42;\n  fence.proxy.surface;\n  st.release.gpu [flag], 1;\n}\n\
        d0.b1.t0 {\n  ld.acquire.gpu r0, [flag] == 1;\n  suld r1, [s];\n}\n\n\
        assert (r1 == 42) as outcome;\n";

    #[test]
    fn plain_file() {
        let t = one(MP);
        assert_eq!(t.name, "t");
        assert_eq!(t.threads.len(), 2);
        assert_eq!(t.threads[1].placement[0].level, "gpu");
        assert_eq!(t.threads[1].placement[1].id, 1);
        let s = t.location("s").unwrap();
        let y = t.location("y").unwrap();
        let x = t.location("x").unwrap();
        assert_eq!(t.locations[s].proxy, Proxy::Surface);
        assert_eq!(t.virtual_address(s), x);
        assert_eq!(t.virtual_address(y), y);
        assert_eq!(t.physical(y), x);
        assert_eq!(t.threads[1].code[1].tags, vec!["PTX", "WEAK", "SURFACE"]);
        assert_eq!(t.threads[1].code[0].text, "ld.acquire.gpu r0, [flag]");
        // assert with a load constraint: forall (~(r0 == 1) \/ r1 == 42).
        assert_eq!(t.condition.quantifier, Quantifier::Forall);
        let herd = to_herd(&t, "doc");
        assert!(herd.contains("s @ surface aliases x;"), "{herd}");
        assert!(herd.contains("y @ generic aliases x;"), "{herd}");
        assert!(
            herd.contains("forall ((~(P1:r0 == 1) \\/ P1:r1 == 42))"),
            "{herd}"
        );
        assert!(herd.contains("P1@cta 1,gpu 0"), "{herd}");
    }

    #[test]
    fn templates_give_one_test_per_row() {
        let src = ".global x;\n.surfref s virtually aliases x;\n\
            d0.b0.t0 {\n  $0, 1;\n  $1\n  $2 r0, $3;\n}\n\
            $4(r0 $5 1) as r0;\n\n$$\n\n\
            st [x] |                      | ld   | [x] | assert | ==\n\
            st [x] | fence.proxy.surface; | suld | [s] | permit | !=\n";
        let v = parse_all("dir/CoWR.test", src);
        assert_eq!(v.len(), 2);
        let a = v[0].test.as_ref().unwrap();
        let b = v[1].test.as_ref().unwrap();
        assert_eq!((a.name.as_str(), v[0].row), ("CoWR#1", Some(1)));
        assert_eq!(b.name, "CoWR#2");
        assert_eq!(a.threads[0].code.len(), 2);
        assert_eq!(b.threads[0].code.len(), 3);
        assert!(matches!(b.threads[0].code[2].kind, InstrKind::Load { .. }));
        assert_eq!(a.condition.quantifier, Quantifier::Forall);
        assert_eq!(b.condition.quantifier, Quantifier::Exists);
        assert_eq!(
            b.condition.prop,
            Prop::Cmp(
                CmpOp::Ne,
                Term::Reg {
                    thread: 0,
                    reg: "r0".into()
                },
                Term::Const(Value::Int(1))
            )
        );
    }

    #[test]
    fn conditions_and_commands() {
        let src = ".global x;\n.global y;\n\
            d0.b0.t0 { st [x], 1; ld r0, [y]; }\n\
            d0.b0.t1 { st [y], 2; ld r1, [x]; }\n\
            assert (r0 == 2 || r1 == 1 && not r0 != 0) as a;\n\
            check ((r0 == 0) && (r1 == 0)) as b;\n";
        let v = parse_all("SB.test", src);
        assert_eq!(v.len(), 2);
        let a = v[0].test.as_ref().unwrap();
        assert_eq!(a.name, "SB:a");
        assert!(matches!(a.condition.prop, Prop::Or(..)));
        let b = v[1].test.as_ref().unwrap();
        assert_eq!(b.condition.quantifier, Quantifier::Exists);
        assert!(matches!(b.condition.prop, Prop::And(..)));
    }

    #[test]
    fn errors_point_at_their_cause() {
        let d = err(
            ".global x;\nd0.b0.t0 { ld r0, [x]; }\nd0.b1.t0 { ld r0, [x]; }\n\
            permit (r0 == 1) as a;\n",
        );
        assert!(d.message.contains("already written"), "{}", d.render());
        assert_eq!(d.pos, Pos { line: 3, col: 12 });
        let d = err(".global x;\nd0.b0.t0 { st [x], 1 == 1; }\npermit (1 == 1) as a;\n");
        assert!(d.message.contains("only a load"), "{}", d.render());
        let d = err(".local x;\n");
        assert!(d.message.contains("unknown address kind"), "{}", d.render());
        let d = err(".texref t virtually aliases x;\n");
        assert!(
            d.message.contains("undeclared address 'x'"),
            "{}",
            d.render()
        );
        let d = err(".global x;\n.global y virtually aliases x;\n");
        assert!(
            d.message.contains("unexpected 'virtually'"),
            "{}",
            d.render()
        );
        let d = err(".global x;\nd0.b0 { ld r0, [x]; }\npermit (r0 == 1) as a;\n");
        assert!(d.message.contains("not a thread"), "{}", d.render());
        let d = err(".global x;\nd0.b0.t0 { ld r0, [x]; }\npermit (r9 == 1) as a;\n");
        assert!(d.message.contains("'r9' is not written"), "{}", d.render());
        let d = err(".global x;\nd0.b0.t0 { ld r0, [x] }\npermit (r0 == 1) as a;\n");
        assert!(d.message.contains("missing ';'"), "{}", d.render());
        let d = err(
            ".global x;\nd0.b0.t0 { $0 r0, [x]; }\npermit (r0 == 1) as a;\n$$\nld | extra\n\nld\n",
        );
        assert!(d.message.contains("template row"), "{}", d.render());
        let d = err(".global x;\nd0.b0.t0 { $1 r0, [x]; }\npermit (r0 == 1) as a;\n$$\nld\n");
        assert!(d.message.contains("uses $1"), "{}", d.render());
        assert_eq!(d.pos.line, 5);
        let d = err(".global x;\nd0.b0.t0 { ld r0, [x]; }\n");
        assert!(d.message.contains("no command"), "{}", d.render());
        let d = err(".global x;\nd0.b0.t0 { ld r0, [x]; }\npermit (r0 | r0) as a;\n");
        assert!(d.message.contains("unexpected"), "{}", d.render());
    }
}
