//! What follows the threads of a litmus test, in every format that has
//! it (the table format and herd's C format): the `scopes:` tree, the
//! `locations [...]` observed terms and the final condition (`exists`,
//! `~exists`, `forall`) with its propositions over registers and
//! locations.

use std::collections::{HashMap, HashSet};

use super::dialect::{Dialect, LocTable, ThreadHeader};
use super::lexer::{Lexer, Tok};
use super::table::{Parser, ThreadBuild, canon_level, levels_list, thread_number, thread_range};
use super::token_parser::{Nesting, TokenParser};
use crate::diag::Diagnostic;
use crate::ir::{CmpOp, Condition, Pos, Prop, Quantifier, Reg, ScopeLevel, Term, Value};

pub(super) const CONDITION_EXPECTED: &str = "a condition: 'exists', '~exists' or 'forall'";

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
    let mut p = Parser {
        lx,
        depth: 0,
        peeked: Default::default(),
    };
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

/// `scopes: (sys (gpu (cta P0) (cta P1)))`.
pub(super) fn parse_scopes(
    p: &mut Parser<'_>,
    threads: &mut [ThreadBuild],
) -> Result<(), Diagnostic> {
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
pub(super) fn parse_locations(
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
pub(super) fn parse_condition(
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
