//! Recursive-descent parser for cat files.
//!
//! Operator precedence follows herd7's grammar (`lib/modelParser.mly`), from
//! loosest to tightest:
//!
//! | level | operators | associativity |
//! |---|---|---|
//! | 1 | `\|` | right (associative anyway) |
//! | 2 | `++` | right |
//! | 3 | `;` | right (associative anyway) |
//! | 4 | `\` | left |
//! | 5 | `&` | right (associative anyway) |
//! | 6 | `*` (cartesian) | none |
//! | 7 | prefix `~` | |
//! | 8 | postfix `^-1` `+` `*` `?` (`^+` `^*` `^?`) | |
//! | 9 | application `f(e, ...)`, `(e)`, `[e]` | |

use super::ast::{
    BinOp, Binding, Check, CheckMode, Cond, Error, Expr, ExprKind, File, Loc, Pattern, Stmt, Test,
    UnOp, VariantCond,
};
use super::lexer::{Kw, Tok, Token, tokenize};

/// Deepest nesting of expressions and blocks a model may use: parentheses,
/// brackets, `let ... in`, `fun`, `match`, `if`/`forall`/`procedure`
/// blocks, prefix `~`, postfix operators, curried applications and chains
/// of the non-associative `++` and `\` each count one level per step.
/// Every walk over the syntax tree (compiler, analyses, evaluator) recurses
/// at most this deep per level, so the worker's stack
/// ([`crate::budget::STACK_BYTES`]) bounds them all.
pub const MAX_NESTING: u32 = 200;

/// Operator chains of an associative operator (`|`, `;`, `&`) longer than
/// this are built as a balanced tree (height log2 of the length) instead of
/// leaning right, so that a 5,000-term union stays shallow.
const BALANCE_FROM: usize = 32;

/// Parses one cat file (`file` is its index in the model's file table).
pub fn parse_file(src: &str, file: usize) -> Result<File, Error> {
    let tokens = tokenize(src, file)?;
    let mut p = Parser {
        src,
        tokens,
        i: 0,
        prev_end: 0,
        pending: Vec::new(),
        depth: 0,
    };
    p.file()
}

struct Parser<'s> {
    src: &'s str,
    tokens: Vec<Token>,
    i: usize,
    /// Byte offset just past the last consumed token.
    prev_end: usize,
    /// Instructions an instruction brought along, to follow it (the check
    /// of `let rec ... when`).
    pending: Vec<Stmt>,
    /// Current nesting (see [`MAX_NESTING`]).
    depth: u32,
}

/// Collapses runs of whitespace into single spaces.
fn collapse_ws(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn unsupported(loc: Loc, what: &str) -> Error {
    Error::new(
        loc,
        format!("{what} is not supported yet (herd's functional layer)"),
    )
}

impl Parser<'_> {
    fn tok(&self) -> &Tok {
        &self.tokens[self.i].tok
    }

    fn peek_tok(&self, k: usize) -> &Tok {
        let j = (self.i + k).min(self.tokens.len() - 1);
        &self.tokens[j].tok
    }

    fn loc(&self) -> Loc {
        self.tokens[self.i].loc
    }

    fn start(&self) -> usize {
        self.tokens[self.i].start
    }

    fn advance(&mut self) -> Token {
        let t = self.tokens[self.i].clone();
        if t.tok != Tok::Eof {
            self.i += 1;
            self.prev_end = t.end;
        }
        t
    }

    fn eat(&mut self, t: &Tok) -> bool {
        if self.tok() == t {
            self.advance();
            true
        } else {
            false
        }
    }

    fn error_here(&self, expected: &str) -> Error {
        Error::new(
            self.loc(),
            format!("syntax error: unexpected {}", self.tok().describe()),
        )
        .expected(expected)
    }

    fn expect(&mut self, t: &Tok, expected: &str) -> Result<Token, Error> {
        if self.tok() == t {
            Ok(self.advance())
        } else {
            Err(self.error_here(expected))
        }
    }

    fn ident(&mut self, expected: &str) -> Result<(String, Loc), Error> {
        match self.tok().clone() {
            Tok::Ident(s) => {
                let loc = self.loc();
                self.advance();
                Ok((s, loc))
            }
            _ => Err(self.error_here(expected)),
        }
    }

    fn text_from(&self, start: usize) -> String {
        collapse_ws(&self.src[start..self.prev_end.max(start)])
    }

    /// Goes `levels` levels deeper at `loc`; fails past [`MAX_NESTING`].
    /// The caller gives them back with [`Parser::leave`].
    fn enter(&mut self, levels: usize, loc: Loc) -> Result<(), Error> {
        let levels = u32::try_from(levels).unwrap_or(u32::MAX);
        let depth = self.depth.saturating_add(levels);
        if depth > MAX_NESTING {
            return Err(Error::new(
                loc,
                format!(
                    "limit exceeded: the model nests deeper than {MAX_NESTING} levels here \
                     (parentheses, let ... in, blocks, unary operators, chains of '++' or '\\' \
                     and curried applications each count)"
                ),
            )
            .expected(format!("at most {MAX_NESTING} nested levels")));
        }
        self.depth = depth;
        Ok(())
    }

    fn leave(&mut self, levels: usize) {
        self.depth = self
            .depth
            .saturating_sub(u32::try_from(levels).unwrap_or(u32::MAX));
    }

    /// Runs `f` one nesting level deeper.
    fn nested<T>(&mut self, f: impl FnOnce(&mut Self) -> Result<T, Error>) -> Result<T, Error> {
        self.enter(1, self.loc())?;
        let r = f(self)?;
        self.leave(1);
        Ok(r)
    }

    // ----- files and instructions -------------------------------------------

    fn file(&mut self) -> Result<File, Error> {
        let title = self.title();
        let mut stmts = Vec::new();
        while *self.tok() != Tok::Eof {
            stmts.push(self.stmt()?);
            stmts.append(&mut self.pending);
        }
        Ok(File { title, stmts })
    }

    /// `[name] ["string"]` at the start of a file (herd's model identity).
    fn title(&mut self) -> Option<String> {
        match self.tok().clone() {
            Tok::Str(s) => {
                self.advance();
                Some(s)
            }
            Tok::Ident(_) if self.at_assert() || self.at_instructions() => None,
            Tok::Ident(s) => {
                self.advance();
                match self.tok().clone() {
                    Tok::Str(t) | Tok::Ident(t) => {
                        self.advance();
                        Some(t)
                    }
                    _ => Some(s),
                }
            }
            _ => None,
        }
    }

    fn stmt(&mut self) -> Result<Stmt, Error> {
        self.nested(Self::stmt_inner)
    }

    fn stmt_inner(&mut self) -> Result<Stmt, Error> {
        let loc = self.loc();
        match self.tok().clone() {
            Tok::Kw(Kw::Let) => self.let_stmt(),
            Tok::Kw(Kw::Flag) => {
                self.advance();
                self.check(CheckMode::Flag, loc)
            }
            Tok::Kw(Kw::UndefinedUnless) => {
                self.advance();
                self.check(CheckMode::UndefinedUnless, loc)
            }
            Tok::Tilde | Tok::Kw(Kw::Acyclic | Kw::Irreflexive | Kw::Empty) => {
                self.check(CheckMode::Require, loc)
            }
            Tok::Kw(Kw::With) => {
                let start = self.start();
                self.advance();
                let (var, var_loc) = self.ident("a name after 'with'")?;
                self.expect(&Tok::Kw(Kw::From), "'from'")?;
                let expr = self.expr()?;
                let text = self.text_from(start);
                Ok(Stmt::With {
                    var,
                    var_loc,
                    expr,
                    text,
                    loc,
                })
            }
            Tok::Kw(Kw::Include) => {
                self.advance();
                match self.tok().clone() {
                    Tok::Str(file) => {
                        self.advance();
                        Ok(Stmt::Include { file, loc })
                    }
                    _ => Err(self.error_here("a quoted file name")),
                }
            }
            Tok::Kw(Kw::Show | Kw::Unshow) => {
                self.advance();
                self.expr()?;
                while self.eat(&Tok::Comma) {
                    self.expr()?;
                }
                if self.eat(&Tok::Kw(Kw::As)) {
                    self.ident("a name after 'as'")?;
                }
                Ok(Stmt::Show { loc })
            }
            Tok::Kw(Kw::Procedure) => {
                self.advance();
                self.eat(&Tok::Kw(Kw::Rec));
                let (name, _) = self.ident("a procedure name")?;
                let params = self.params()?;
                self.expect(&Tok::Equal, "'='")?;
                let body = self.stmts_until(&[Kw::End])?;
                self.expect(&Tok::Kw(Kw::End), "'end'")?;
                Ok(Stmt::Procedure {
                    name,
                    params,
                    body,
                    loc,
                })
            }
            Tok::Kw(Kw::Call) => {
                self.advance();
                let (name, _) = self.ident("a procedure name")?;
                let args = match self.arg()? {
                    Expr {
                        kind: ExprKind::Tuple(es),
                        ..
                    } => es,
                    e => vec![e],
                };
                let label = if self.eat(&Tok::Kw(Kw::As)) {
                    Some(self.ident("a name after 'as'")?.0)
                } else {
                    None
                };
                Ok(Stmt::Call {
                    name,
                    args,
                    label,
                    loc,
                })
            }
            Tok::Kw(Kw::If) => {
                self.advance();
                let variant = self.variant_or()?;
                let then = self.stmts_until(&[Kw::Else, Kw::End])?;
                let els = if self.eat(&Tok::Kw(Kw::Else)) {
                    self.stmts_until(&[Kw::End])?
                } else {
                    Vec::new()
                };
                self.expect(&Tok::Kw(Kw::End), "'end'")?;
                Ok(Stmt::IfVariant {
                    variant,
                    then,
                    els,
                    loc,
                })
            }
            Tok::Kw(Kw::Forall) => {
                self.advance();
                let (var, _) = self.ident("a name after 'forall'")?;
                self.expect(&Tok::Kw(Kw::In), "'in'")?;
                let expr = self.expr()?;
                self.expect(&Tok::Kw(Kw::Do), "'do'")?;
                let body = self.stmts_until(&[Kw::End])?;
                self.expect(&Tok::Kw(Kw::End), "'end'")?;
                Ok(Stmt::Forall {
                    var,
                    expr,
                    body,
                    loc,
                })
            }
            // `instructions K[e]` (bell files): `instructions` is a keyword
            // only here, before a kind (a name cannot start an instruction).
            Tok::Ident(w) if w == "instructions" && matches!(self.peek_tok(1), Tok::Ident(_)) => {
                self.advance();
                let (kind, _) = self.ident("an instruction kind (R, W, F, RMW, ...)")?;
                self.expect(&Tok::LBracket, "'['")?;
                let expr = self.expr()?;
                self.expect(&Tok::RBracket, "']'")?;
                Ok(Stmt::Instructions { kind, expr, loc })
            }
            // herd's `catdep` marker: no meaning for litmix.
            Tok::Ident(w) if w == "catdep" => {
                self.advance();
                Ok(Stmt::Show { loc })
            }
            // `assert [~]test e [as name]`: `assert` is a keyword only here,
            // before a check.
            Tok::Ident(_) if self.at_assert() => {
                self.advance();
                self.check(CheckMode::Assert, loc)
            }
            Tok::Kw(Kw::Enum) => {
                self.advance();
                let (name, _) = self.ident("a name after 'enum'")?;
                self.expect(&Tok::Equal, "'='")?;
                self.eat(&Tok::BarBar);
                let mut tags = Vec::new();
                loop {
                    match self.tok().clone() {
                        Tok::Tag(t) => {
                            self.advance();
                            if !tags.contains(&t) {
                                tags.push(t);
                            }
                        }
                        _ => return Err(self.error_here("a tag like 'name")),
                    }
                    if !self.eat(&Tok::BarBar) {
                        break;
                    }
                }
                Ok(Stmt::Enum { name, tags, loc })
            }
            Tok::Kw(kw @ (Kw::Match | Kw::Try | Kw::Fun | Kw::Begin)) => {
                Err(unsupported(loc, &format!("'{}'", kw.as_str())))
            }
            _ => Err(self.error_here(
                "an instruction (let, acyclic, irreflexive, empty, flag, undefined_unless, assert, with, include, show, procedure, call, if, forall, enum, instructions)",
            )),
        }
    }

    /// Instructions up to (not including) one of the keywords `stops`.
    fn stmts_until(&mut self, stops: &[Kw]) -> Result<Vec<Stmt>, Error> {
        let mut out = Vec::new();
        loop {
            match self.tok() {
                Tok::Kw(k) if stops.contains(k) => return Ok(out),
                Tok::Eof => {
                    let what: Vec<String> =
                        stops.iter().map(|k| format!("'{}'", k.as_str())).collect();
                    return Err(self.error_here(&what.join(" or ")));
                }
                _ => {
                    out.push(self.stmt()?);
                    out.append(&mut self.pending);
                }
            }
        }
    }

    /// `x`, `_`, `(a, b, ...)` or `()`: the parameters of a function or procedure.
    fn params(&mut self) -> Result<Pattern, Error> {
        if self.eat(&Tok::Underscore) {
            return Ok(Pattern {
                names: vec![None],
                tuple: false,
            });
        }
        if let Tok::Ident(_) = self.tok() {
            let (n, _) = self.ident("a parameter")?;
            return Ok(Pattern {
                names: vec![Some(n)],
                tuple: false,
            });
        }
        self.expect(&Tok::LParen, "a parameter or '('")?;
        let mut names: Vec<Option<String>> = Vec::new();
        if !self.eat(&Tok::RParen) {
            loop {
                if self.eat(&Tok::Underscore) {
                    names.push(None);
                } else {
                    let (p, ploc) = self.ident("a parameter name")?;
                    if names.iter().any(|q| q.as_deref() == Some(p.as_str())) {
                        return Err(Error::new(ploc, format!("duplicate parameter '{p}'")));
                    }
                    names.push(Some(p));
                }
                if self.eat(&Tok::RParen) {
                    break;
                }
                self.expect(&Tok::Comma, "',' or ')'")?;
            }
        }
        let tuple = names.len() != 1;
        Ok(Pattern { names, tuple })
    }

    fn let_stmt(&mut self) -> Result<Stmt, Error> {
        let loc = self.loc();
        self.advance();
        let rec = self.eat(&Tok::Kw(Kw::Rec));
        let mut bindings = vec![self.binding()?];
        while self.eat(&Tok::Kw(Kw::And)) {
            bindings.push(self.binding()?);
        }
        if rec && *self.tok() == Tok::Kw(Kw::When) {
            // `let rec ... when test e [as name]`: herd checks the test at
            // each step of the fixpoint iteration and rejects the
            // execution as soon as it fails. The iteration grows from the
            // empty relation, so for the tests a relation can only fail
            // more as it grows (acyclic, irreflexive, empty) this is the
            // same as checking the fixpoint: the check follows the `let`.
            let when = self.loc();
            self.advance();
            let check = self.check(CheckMode::Require, when)?;
            self.pending.push(check);
        }
        // herd accepts an optional `in` after a top-level binding.
        self.eat(&Tok::Kw(Kw::In));
        Ok(Stmt::Let { rec, bindings, loc })
    }

    fn binding(&mut self) -> Result<Binding, Error> {
        if *self.tok() == Tok::LParen {
            // `let (a, b) = e`: a tuple pattern.
            let loc = self.loc();
            let pat = self.params()?;
            let names = pat.names.clone();
            let shown: Vec<&str> = names.iter().map(|n| n.as_deref().unwrap_or("_")).collect();
            self.expect(&Tok::Equal, "'='")?;
            let body = self.expr()?;
            return Ok(Binding {
                name: format!("({})", shown.join(", ")),
                loc,
                params: None,
                tuple: Some(names),
                body,
            });
        }
        let (name, loc) = self.ident("a name to bind")?;
        let params = if matches!(self.tok(), Tok::Ident(_) | Tok::Underscore) {
            // `let f x = e`: a function of one argument.
            let (p, ploc) = match self.tok().clone() {
                Tok::Ident(p) => {
                    let l = self.loc();
                    self.advance();
                    (p, l)
                }
                _ => {
                    let l = self.loc();
                    self.advance();
                    ("_".to_string(), l)
                }
            };
            Some(vec![(p, ploc)])
        } else if self.eat(&Tok::LParen) {
            let mut ps = Vec::new();
            if !self.eat(&Tok::RParen) {
                loop {
                    let (p, ploc) = self.ident("a parameter name")?;
                    if ps.iter().any(|(q, _)| *q == p) {
                        return Err(Error::new(ploc, format!("duplicate parameter '{p}'")));
                    }
                    ps.push((p, ploc));
                    if self.eat(&Tok::RParen) {
                        break;
                    }
                    self.expect(&Tok::Comma, "',' or ')'")?;
                }
            }
            Some(ps)
        } else {
            None
        };
        self.expect(&Tok::Equal, "'='")?;
        let body = self.expr()?;
        Ok(Binding {
            name,
            loc,
            params,
            tuple: None,
            body,
        })
    }

    fn check(&mut self, mode: CheckMode, loc: Loc) -> Result<Stmt, Error> {
        let start = self.start();
        let negated = self.eat(&Tok::Tilde);
        let test = match self.tok() {
            Tok::Kw(Kw::Acyclic) => Test::Acyclic,
            Tok::Kw(Kw::Irreflexive) => Test::Irreflexive,
            Tok::Kw(Kw::Empty) => Test::Empty,
            _ => return Err(self.error_here("'acyclic', 'irreflexive' or 'empty'")),
        };
        self.advance();
        let expr = self.expr()?;
        let text = self.text_from(start);
        let name = if self.eat(&Tok::Kw(Kw::As)) {
            Some(self.ident("a name after 'as'")?.0)
        } else {
            None
        };
        Ok(Stmt::Check(Check {
            mode,
            negated,
            test,
            expr,
            name,
            text,
            loc,
        }))
    }

    // ----- expressions ---------------------------------------------------------

    /// Parses an expression: `let ... in`, `fun`, `try`, `match` and `if`
    /// at this level only (as in herd's grammar, they are not operands).
    fn expr(&mut self) -> Result<Expr, Error> {
        self.nested(Self::expr_inner)
    }

    fn expr_inner(&mut self) -> Result<Expr, Error> {
        if matches!(
            self.tok(),
            Tok::Kw(Kw::Let | Kw::Fun | Kw::Try | Kw::Match | Kw::If)
        ) {
            return self.keyword_expr();
        }
        self.right_assoc(0)
    }

    /// Right-associative levels: `|` (0), `++` (1), `;` (2), then `\` and below.
    fn right_assoc(&mut self, level: usize) -> Result<Expr, Error> {
        const LEVELS: [(Tok, BinOp); 3] = [
            (Tok::Bar, BinOp::Union),
            (Tok::PlusPlus, BinOp::Add),
            (Tok::Semi, BinOp::Seq),
        ];
        if level == LEVELS.len() {
            return self.diff();
        }
        let (tok, op) = &LEVELS[level];
        self.chain(tok, *op, |p| p.right_assoc(level + 1))
    }

    /// `operand (tok operand)*` for a right-associative `op`, built without
    /// recursion per operator: right-leaning as written, or balanced when
    /// `op` is associative and the chain long ([`BALANCE_FROM`]); a long
    /// chain of `++` counts against [`MAX_NESTING`].
    fn chain(
        &mut self,
        tok: &Tok,
        op: BinOp,
        mut operand: impl FnMut(&mut Self) -> Result<Expr, Error>,
    ) -> Result<Expr, Error> {
        let first = operand(self)?;
        if self.tok() != tok {
            return Ok(first);
        }
        let mut operands = vec![first];
        let mut ops = Vec::new();
        let associative = op != BinOp::Add;
        while self.tok() == tok {
            let op_loc = self.loc();
            ops.push(op_loc);
            self.advance();
            if !associative {
                // Each `++` is one more level of the tree (an error ends
                // the parse: levels are given back on success only).
                self.enter(1, op_loc)?;
            }
            operands.push(operand(self)?);
        }
        if !associative {
            self.leave(ops.len());
        }
        if associative && operands.len() > BALANCE_FROM {
            return Ok(balanced(op, &ops, operands));
        }
        let mut acc = operands.pop().expect("a chain has operands");
        while let (Some(lhs), Some(op_loc)) = (operands.pop(), ops.pop()) {
            acc = binary(op, op_loc, lhs, acc);
        }
        Ok(acc)
    }

    /// `\`, left-associative; each operator counts one nesting level.
    fn diff(&mut self) -> Result<Expr, Error> {
        let mut lhs = self.inter()?;
        let mut steps = 0;
        while *self.tok() == Tok::Backslash {
            let op_loc = self.loc();
            self.advance();
            // An error ends the parse: levels are given back on success only.
            self.enter(1, op_loc)?;
            steps += 1;
            let rhs = self.inter()?;
            lhs = binary(BinOp::Diff, op_loc, lhs, rhs);
        }
        self.leave(steps);
        Ok(lhs)
    }

    /// `&`, right-associative.
    fn inter(&mut self) -> Result<Expr, Error> {
        self.chain(&Tok::Amp, BinOp::Inter, Self::cartesian)
    }

    /// Binary `*`, non-associative. The postfix loop leaves a `*` unconsumed
    /// exactly when an operand follows it.
    fn cartesian(&mut self) -> Result<Expr, Error> {
        let lhs = self.prefix()?;
        if *self.tok() == Tok::Star {
            let op_loc = self.loc();
            self.advance();
            let rhs = self.prefix()?;
            if *self.tok() == Tok::Star {
                return Err(Error::new(
                    self.loc(),
                    "the cartesian product '*' is not associative; add parentheses",
                ));
            }
            return Ok(binary(BinOp::Cartesian, op_loc, lhs, rhs));
        }
        Ok(lhs)
    }

    fn prefix(&mut self) -> Result<Expr, Error> {
        let mut tildes = Vec::new();
        while *self.tok() == Tok::Tilde {
            tildes.push(self.loc());
            self.advance();
        }
        if tildes.is_empty() {
            return self.postfix();
        }
        self.enter(tildes.len(), tildes[0])?;
        let mut e = self.postfix()?;
        self.leave(tildes.len());
        for loc in tildes.into_iter().rev() {
            e = Expr {
                kind: ExprKind::Unary(UnOp::Complement, Box::new(e)),
                loc,
            };
        }
        Ok(e)
    }

    fn postfix(&mut self) -> Result<Expr, Error> {
        let mut e = self.primary()?;
        let mut steps = 0;
        loop {
            let op = match self.tok() {
                Tok::HatInv => UnOp::Inverse,
                Tok::Plus | Tok::HatPlus => UnOp::Plus,
                Tok::HatStar => UnOp::Star,
                Tok::Question | Tok::HatQuestion => UnOp::Opt,
                Tok::Star if !self.peek_tok(1).starts_operand() => UnOp::Star,
                _ => {
                    self.leave(steps);
                    return Ok(e);
                }
            };
            self.enter(1, self.loc())?;
            steps += 1;
            self.advance();
            let loc = e.loc;
            e = Expr {
                kind: ExprKind::Unary(op, Box::new(e)),
                loc,
            };
        }
    }

    /// Whether the current token can start an argument of an application
    /// by juxtaposition (`f x`, `f (a, b)`, `f {}`, `f [S]`).
    fn starts_arg(&self) -> bool {
        matches!(
            self.tok(),
            Tok::Ident(_)
                | Tok::Zero
                | Tok::Underscore
                | Tok::LParen
                | Tok::LBracket
                | Tok::LBrace
                | Tok::Tag(_)
                | Tok::Kw(Kw::Begin)
        ) && !matches!(self.tok(), Tok::Ident(w) if w == "catdep")
            && !self.at_assert()
            && !self.at_instructions()
    }

    /// At `instructions K[`: the bell instruction, not a name.
    fn at_instructions(&self) -> bool {
        matches!(self.tok(), Tok::Ident(w) if w == "instructions")
            && matches!(self.peek_tok(1), Tok::Ident(_))
            && *self.peek_tok(2) == Tok::LBracket
    }

    /// At `assert` followed by a check: the instruction, not a name.
    fn at_assert(&self) -> bool {
        matches!(self.tok(), Tok::Ident(w) if w == "assert")
            && matches!(
                self.peek_tok(1),
                Tok::Tilde | Tok::Kw(Kw::Acyclic | Kw::Irreflexive | Kw::Empty)
            )
    }

    /// One argument of an application: a name or a simple expression
    /// (`(...)`, `{...}`, `[...]`, `0`, `_`, `begin ... end`).
    fn arg(&mut self) -> Result<Expr, Error> {
        let loc = self.loc();
        if let Tok::Ident(name) = self.tok().clone() {
            self.advance();
            return Ok(Expr {
                kind: ExprKind::Var(name),
                loc,
            });
        }
        self.simple()
    }

    fn primary(&mut self) -> Result<Expr, Error> {
        match self.tok().clone() {
            Tok::Kw(Kw::Let | Kw::Fun | Kw::Try | Kw::Match | Kw::If) => {
                Err(self.error_here("an expression"))
            }
            _ => self.operand(),
        }
    }

    fn keyword_expr(&mut self) -> Result<Expr, Error> {
        let loc = self.loc();
        match self.tok().clone() {
            Tok::Ident(name) => {
                self.advance();
                if !self.starts_arg() {
                    return Ok(Expr {
                        kind: ExprKind::Var(name),
                        loc,
                    });
                }
                let first = self.arg()?;
                let args = match first.kind {
                    ExprKind::Tuple(es) if first_was_paren(&self.tokens, self.i) => es,
                    kind => vec![Expr {
                        kind,
                        loc: first.loc,
                    }],
                };
                let mut e = Expr {
                    kind: ExprKind::App { func: name, args },
                    loc,
                };
                // Each curried argument is one more level of the tree (an
                // error ends the parse, so levels are given back on success).
                let mut steps = 0;
                while self.starts_arg() {
                    self.enter(1, self.loc())?;
                    steps += 1;
                    let a = self.arg()?;
                    e = Expr {
                        kind: ExprKind::Apply {
                            func: Box::new(e),
                            arg: Box::new(a),
                        },
                        loc,
                    };
                }
                self.leave(steps);
                Ok(e)
            }
            Tok::Kw(Kw::Let) => {
                self.advance();
                let rec = self.eat(&Tok::Kw(Kw::Rec));
                let mut bindings = vec![self.binding()?];
                while self.eat(&Tok::Kw(Kw::And)) {
                    bindings.push(self.binding()?);
                }
                self.expect(&Tok::Kw(Kw::In), "'in'")?;
                let body = self.expr()?;
                Ok(Expr {
                    kind: ExprKind::LetIn {
                        rec,
                        bindings,
                        body: Box::new(body),
                    },
                    loc,
                })
            }
            Tok::Kw(Kw::Fun) => {
                self.advance();
                let params = self.params()?;
                self.expect(&Tok::Arrow, "'->'")?;
                let body = self.expr()?;
                Ok(Expr {
                    kind: ExprKind::Fun {
                        params,
                        body: Box::new(body),
                    },
                    loc,
                })
            }
            Tok::Kw(Kw::Try) => {
                self.advance();
                let a = self.expr()?;
                self.expect(&Tok::Kw(Kw::With), "'with'")?;
                let b = self.expr()?;
                Ok(Expr {
                    kind: ExprKind::Try(Box::new(a), Box::new(b)),
                    loc,
                })
            }
            Tok::Kw(Kw::If) => {
                self.advance();
                let cond = self.cond()?;
                self.expect(&Tok::Kw(Kw::Then), "'then'")?;
                let then = self.expr()?;
                self.expect(&Tok::Kw(Kw::Else), "'else'")?;
                let els = self.expr()?;
                Ok(Expr {
                    kind: ExprKind::If {
                        cond: Box::new(cond),
                        then: Box::new(then),
                        els: Box::new(els),
                    },
                    loc,
                })
            }
            Tok::Kw(Kw::Match) => self.match_set(loc),
            _ => self.simple(),
        }
    }

    /// A name (possibly applied) or a simple expression.
    fn operand(&mut self) -> Result<Expr, Error> {
        self.keyword_expr()
    }

    /// `match e with [||] {} -> e1 || x ++ s -> e2 end` (either clause first).
    fn match_set(&mut self, loc: Loc) -> Result<Expr, Error> {
        self.advance();
        let scrutinee = self.expr()?;
        self.expect(&Tok::Kw(Kw::With), "'with'")?;
        self.eat(&Tok::BarBar);
        if matches!(self.tok(), Tok::Tag(_)) {
            return self.match_tag(loc, scrutinee);
        }
        let mut empty = None;
        let mut elem = None;
        for k in 0..2 {
            if k == 1 {
                self.expect(&Tok::BarBar, "'||'")?;
            }
            if *self.tok() == Tok::LBrace {
                self.advance();
                self.expect(&Tok::RBrace, "'}' (the empty-set pattern '{}')")?;
                self.expect(&Tok::Arrow, "'->'")?;
                empty = Some(self.expr()?);
            } else {
                let x = self.pat_name()?;
                self.expect(&Tok::PlusPlus, "'++'")?;
                let r = self.pat_name()?;
                self.expect(&Tok::Arrow, "'->'")?;
                elem = Some((x, r, self.expr()?));
            }
        }
        self.expect(&Tok::Kw(Kw::End), "'end'")?;
        let (Some(empty), Some((x, r, nonempty))) = (empty, elem) else {
            return Err(Error::new(
                loc,
                "a set match needs one '{} -> ...' clause and one 'x ++ s -> ...' clause",
            ));
        };
        Ok(Expr {
            kind: ExprKind::MatchSet {
                scrutinee: Box::new(scrutinee),
                empty: Box::new(empty),
                elem: x,
                rest: r,
                nonempty: Box::new(nonempty),
            },
            loc,
        })
    }

    /// The clauses of `match e with 'a -> e1 || 'b -> e2 [|| _ -> e3] end`
    /// (after `with` and the optional first `||`).
    fn match_tag(&mut self, loc: Loc, scrutinee: Expr) -> Result<Expr, Error> {
        let mut clauses: Vec<(String, Expr)> = Vec::new();
        let mut default = None;
        loop {
            match self.tok().clone() {
                Tok::Tag(t) if default.is_none() => {
                    let tloc = self.loc();
                    self.advance();
                    if clauses.iter().any(|(u, _)| *u == t) {
                        return Err(Error::new(tloc, format!("tag '{t} matched twice")));
                    }
                    self.expect(&Tok::Arrow, "'->'")?;
                    clauses.push((t, self.expr()?));
                }
                Tok::Underscore if default.is_none() => {
                    self.advance();
                    self.expect(&Tok::Arrow, "'->'")?;
                    default = Some(Box::new(self.expr()?));
                }
                _ => {
                    return Err(self.error_here(if default.is_none() {
                        "a tag like 'name or '_'"
                    } else {
                        "'end' (nothing may follow the '_' clause)"
                    }));
                }
            }
            if self.eat(&Tok::Kw(Kw::End)) {
                break;
            }
            self.expect(&Tok::BarBar, "'||' or 'end'")?;
        }
        Ok(Expr {
            kind: ExprKind::MatchTag {
                scrutinee: Box::new(scrutinee),
                clauses,
                default,
            },
            loc,
        })
    }

    /// The condition of an expression `if`: a formula over variants, or
    /// `e1 = e2`, `e1 subset e2`, `e1 in e2` (herd's `cond`).
    fn cond(&mut self) -> Result<Cond, Error> {
        let (start, prev_end) = (self.i, self.prev_end);
        if matches!(
            self.tok(),
            Tok::Str(_) | Tok::Kw(Kw::Variant | Kw::Not) | Tok::LParen
        ) {
            match self.variant_or() {
                Ok(v) if *self.tok() == Tok::Kw(Kw::Then) => return Ok(Cond::Variants(v)),
                // `(` may open an expression instead: `(a | b) = c`.
                Err(_) | Ok(_) if self.tokens[start].tok == Tok::LParen => {
                    self.i = start;
                    self.prev_end = prev_end;
                }
                Err(e) => return Err(e),
                Ok(_) => return Err(self.error_here("'then'")),
            }
        }
        let lhs = self.expr()?;
        let mk: fn(Expr, Expr) -> Cond = match self.tok() {
            Tok::Equal => Cond::Eq,
            Tok::Kw(Kw::Subset) => Cond::Subset,
            Tok::Kw(Kw::In) => Cond::In,
            _ => return Err(self.error_here("'=', 'subset' or 'in' (a condition)")),
        };
        self.advance();
        let rhs = self.expr()?;
        Ok(mk(lhs, rhs))
    }

    /// `c1 || c2` over variants (`||` binds loosest, then `&&`, then `not`).
    fn variant_or(&mut self) -> Result<VariantCond, Error> {
        let mut lhs = self.variant_and()?;
        while self.eat(&Tok::BarBar) {
            let rhs = self.variant_and()?;
            lhs = VariantCond::Or(Box::new(lhs), Box::new(rhs));
        }
        Ok(lhs)
    }

    fn variant_and(&mut self) -> Result<VariantCond, Error> {
        let mut lhs = self.variant_not()?;
        while self.eat(&Tok::AmpAmp) {
            let rhs = self.variant_not()?;
            lhs = VariantCond::And(Box::new(lhs), Box::new(rhs));
        }
        Ok(lhs)
    }

    fn variant_not(&mut self) -> Result<VariantCond, Error> {
        if self.eat(&Tok::Kw(Kw::Not)) {
            return Ok(VariantCond::Not(Box::new(self.variant_not()?)));
        }
        self.eat(&Tok::Kw(Kw::Variant));
        match self.tok().clone() {
            Tok::Str(v) => {
                self.advance();
                Ok(VariantCond::Is(v))
            }
            Tok::LParen => {
                self.advance();
                let c = self.variant_or()?;
                self.expect(&Tok::RParen, "')'")?;
                Ok(c)
            }
            _ => Err(self.error_here("a quoted variant name, 'not' or '('")),
        }
    }

    fn pat_name(&mut self) -> Result<String, Error> {
        if self.eat(&Tok::Underscore) {
            return Ok("_".to_string());
        }
        Ok(self.ident("a name, '_' or '{}'")?.0)
    }

    /// Simple expressions: `0`, `_`, `(e)`, `(e1, e2)`, `()`, `{...}`, `[e]`, `begin e end`.
    fn simple(&mut self) -> Result<Expr, Error> {
        let loc = self.loc();
        let kind = match self.tok().clone() {
            Tok::Zero => {
                self.advance();
                ExprKind::EmptyRel
            }
            Tok::Underscore => {
                self.advance();
                ExprKind::Universe
            }
            Tok::LParen => {
                self.advance();
                if self.eat(&Tok::RParen) {
                    ExprKind::Tuple(Vec::new())
                } else {
                    let e = self.expr()?;
                    if *self.tok() == Tok::Comma {
                        let mut es = vec![e];
                        while self.eat(&Tok::Comma) {
                            es.push(self.expr()?);
                        }
                        self.expect(&Tok::RParen, "',' or ')'")?;
                        ExprKind::Tuple(es)
                    } else {
                        self.expect(&Tok::RParen, "')'")?;
                        return Ok(e);
                    }
                }
            }
            Tok::Kw(Kw::Begin) => {
                self.advance();
                let e = self.expr()?;
                self.expect(&Tok::Kw(Kw::End), "'end'")?;
                return Ok(e);
            }
            Tok::LBracket => {
                self.advance();
                let e = self.expr()?;
                self.expect(&Tok::RBracket, "']'")?;
                ExprKind::Unary(UnOp::ToId, Box::new(e))
            }
            Tok::LBrace => {
                self.advance();
                let mut es = Vec::new();
                if !self.eat(&Tok::RBrace) {
                    loop {
                        es.push(self.expr()?);
                        if self.eat(&Tok::RBrace) {
                            break;
                        }
                        self.expect(&Tok::Comma, "',' or '}'")?;
                    }
                }
                ExprKind::ExplicitSet(es)
            }
            Tok::Tag(t) => {
                self.advance();
                ExprKind::Tag(t)
            }
            _ => return Err(self.error_here("an expression")),
        };
        Ok(Expr { kind, loc })
    }
}

/// A balanced tree of the associative `op` over `operands` (`ops[i]` is
/// the operator between operands `i` and `i + 1`).
fn balanced(op: BinOp, ops: &[Loc], mut operands: Vec<Expr>) -> Expr {
    fn build(op: BinOp, ops: &[Loc], operands: &mut [Option<Expr>]) -> Expr {
        if operands.len() == 1 {
            return operands[0].take().expect("each operand is used once");
        }
        let mid = operands.len() / 2;
        let (left, right) = operands.split_at_mut(mid);
        let lhs = build(op, &ops[..mid - 1], left);
        let rhs = build(op, &ops[mid..], right);
        binary(op, ops[mid - 1], lhs, rhs)
    }
    let mut slots: Vec<Option<Expr>> = operands.drain(..).map(Some).collect();
    build(op, ops, &mut slots)
}

/// Whether the argument just parsed (ending before token `i`) was written
/// in parentheses, i.e. `f(a, b)` rather than `f t` with `t` a tuple.
fn first_was_paren(tokens: &[Token], i: usize) -> bool {
    i > 0 && tokens[i - 1].tok == Tok::RParen
}

fn binary(op: BinOp, op_loc: Loc, lhs: Expr, rhs: Expr) -> Expr {
    let loc = lhs.loc;
    Expr {
        kind: ExprKind::Binary {
            op,
            op_loc,
            lhs: Box::new(lhs),
            rhs: Box::new(rhs),
        },
        loc,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::Pos;

    /// Renders an expression fully parenthesised, to check precedence.
    fn show(e: &Expr) -> String {
        match &e.kind {
            ExprKind::EmptyRel => "0".into(),
            ExprKind::Universe => "_".into(),
            ExprKind::Var(v) => v.clone(),
            ExprKind::Unary(UnOp::Complement, a) => format!("~{}", show(a)),
            ExprKind::Unary(UnOp::ToId, a) => format!("[{}]", show(a)),
            ExprKind::Unary(op, a) => format!("{}{}", show(a), op.symbol()),
            ExprKind::Binary { op, lhs, rhs, .. } => {
                format!("({} {} {})", show(lhs), op.symbol(), show(rhs))
            }
            ExprKind::App { func, args } => {
                format!(
                    "{func}({})",
                    args.iter().map(show).collect::<Vec<_>>().join(", ")
                )
            }
            ExprKind::Apply { func, arg } => format!("({} {})", show(func), show(arg)),
            ExprKind::Tuple(es) => {
                format!("({})", es.iter().map(show).collect::<Vec<_>>().join(", "))
            }
            ExprKind::ExplicitSet(es) => {
                format!("{{{}}}", es.iter().map(show).collect::<Vec<_>>().join(", "))
            }
            ExprKind::Fun { body, .. } => format!("fun -> {}", show(body)),
            ExprKind::LetIn { body, .. } => format!("let in {}", show(body)),
            ExprKind::MatchSet { scrutinee, .. } => format!("match {}", show(scrutinee)),
            ExprKind::Try(a, b) => format!("try {} with {}", show(a), show(b)),
            ExprKind::If { cond, .. } => format!("if {cond:?}"),
            ExprKind::Tag(t) => format!("'{t}"),
            ExprKind::BellSet(t) => format!("bell '{t}"),
            ExprKind::MatchTag { scrutinee, .. } => format!("match-tag {}", show(scrutinee)),
        }
    }

    fn parse_expr(s: &str) -> String {
        let f = parse_file(&format!("let x = {s}"), 0).unwrap();
        match &f.stmts[0] {
            Stmt::Let { bindings, .. } => show(&bindings[0].body),
            _ => unreachable!(),
        }
    }

    #[test]
    fn precedence_levels() {
        assert_eq!(parse_expr("a | b ; c"), "(a | (b ; c))");
        assert_eq!(parse_expr("a ; b | c"), "((a ; b) | c)");
        assert_eq!(parse_expr("a ; b \\ c"), "(a ; (b \\ c))");
        assert_eq!(parse_expr("a \\ b & c"), "(a \\ (b & c))");
        assert_eq!(parse_expr("a & b \\ c"), "((a & b) \\ c)");
        assert_eq!(parse_expr("a & B * C"), "(a & (B * C))");
        assert_eq!(parse_expr("a ++ b ; c | d"), "((a ++ (b ; c)) | d)");
        assert_eq!(
            parse_expr("po & (_ * MFENCE) ; po"),
            "((po & (_ * MFENCE)) ; po)"
        );
        assert_eq!(parse_expr("po & W*W | R*M"), "((po & (W * W)) | (R * M))");
    }

    #[test]
    fn associativity() {
        assert_eq!(parse_expr("a \\ b \\ c"), "((a \\ b) \\ c)");
        assert_eq!(parse_expr("a | b | c"), "(a | (b | c))");
        assert_eq!(parse_expr("a ; b ; c"), "(a ; (b ; c))");
        let e = parse_file("let x = A * B * C", 0).unwrap_err();
        assert!(e.message.contains("not associative"));
    }

    #[test]
    fn unary_and_postfix() {
        assert_eq!(parse_expr("~a | b"), "(~a | b)");
        assert_eq!(parse_expr("~r+"), "~r+");
        assert_eq!(parse_expr("r^-1 ; s*"), "(r^-1 ; s*)");
        assert_eq!(parse_expr("(r | s)+ ; t?"), "((r | s)+ ; t?)");
        assert_eq!(parse_expr("r^+ | r^* | r^?"), "(r+ | (r* | r?))");
        assert_eq!(parse_expr("r* ; s"), "(r* ; s)");
        assert_eq!(parse_expr("~A * B"), "(~A * B)");
        assert_eq!(parse_expr("A * ~B"), "(A * ~B)");
        assert_eq!(parse_expr("[R] ; po ; [W]"), "([R] ; (po ; [W]))");
        assert_eq!(parse_expr("r**"), "r**");
        assert_eq!(
            parse_expr("fencerel(F & SC) ; domain(r)"),
            "(fencerel((F & SC)) ; domain(r))"
        );
        assert_eq!(parse_expr("begin a | b end ; c"), "((a | b) ; c)");
    }

    #[test]
    fn instructions() {
        let src = r#""PTX model"
(* comment *)
let a = po and b = rf
let rec c = a | c ; c
let f(x, y) = x ; y
acyclic a | b as hb
flag ~empty c as data-race
undefined_unless irreflexive c
~empty   a
  ;  b
with S from linearisations(_, po)
show a, b
unshow a
include "x.cat"
"#;
        let f = parse_file(src, 0).unwrap();
        assert_eq!(f.title.as_deref(), Some("PTX model"));
        assert_eq!(f.stmts.len(), 11);
        match &f.stmts[3] {
            Stmt::Check(c) => {
                assert_eq!(c.name.as_deref(), Some("hb"));
                assert_eq!(c.text, "acyclic a | b");
                assert_eq!(c.mode, CheckMode::Require);
            }
            s => panic!("{s:?}"),
        }
        match &f.stmts[4] {
            Stmt::Check(c) => {
                assert_eq!(c.mode, CheckMode::Flag);
                assert!(c.negated);
                assert_eq!(c.test, Test::Empty);
                assert_eq!(c.name.as_deref(), Some("data-race"));
                assert_eq!(c.text, "~empty c");
            }
            s => panic!("{s:?}"),
        }
        match &f.stmts[6] {
            Stmt::Check(c) => assert_eq!(c.text, "~empty a ; b"),
            s => panic!("{s:?}"),
        }
        match &f.stmts[7] {
            Stmt::With { var, text, .. } => {
                assert_eq!(var, "S");
                assert_eq!(text, "with S from linearisations(_, po)");
            }
            s => panic!("{s:?}"),
        }
        assert!(matches!(&f.stmts[10], Stmt::Include { file, .. } if file == "x.cat"));
    }

    #[test]
    fn functional_tier() {
        assert_eq!(parse_expr("f e ++ g S"), "(f(e) ++ g(S))");
        assert_eq!(parse_expr("domain r | range r"), "(domain(r) | range(r))");
        assert_eq!(parse_expr("f (a, b | c)"), "f(a, (b | c))");
        assert_eq!(parse_expr("f a b"), "(f(a) b)");
        assert_eq!(parse_expr("(a, b)"), "(a, b)");
        assert_eq!(parse_expr("{}"), "{}");
        assert_eq!(parse_expr("try X with {}"), "try X with {}");
        assert_eq!(parse_expr("r ^ -1"), "r^-1");
        let f = parse_file(
            "# a comment\nlet map f = let rec m S = match S with || {} -> {} || e ++ S -> f e ++ m S end in m\nprocedure p(a, b) = empty a \\ b end\ncall p(x, y) as q\nif \"v\" let a = 0 else let a = po end",
            0,
        )
        .unwrap();
        assert_eq!(f.stmts.len(), 4);
        assert!(matches!(&f.stmts[1], Stmt::Procedure { body, .. } if body.len() == 1));
        assert!(
            matches!(&f.stmts[2], Stmt::Call { args, label: Some(l), .. } if args.len() == 2 && l == "q")
        );
    }

    #[test]
    fn conditions() {
        // Formulas over variants: `not` binds tightest, then `&&`, then `||`.
        let f = parse_file(
            "let a = if not \"x\" && \"y\" || variant \"z\" then po else 0",
            0,
        )
        .unwrap();
        let Stmt::Let { bindings, .. } = &f.stmts[0] else {
            panic!()
        };
        let ExprKind::If { cond, .. } = &bindings[0].body.kind else {
            panic!()
        };
        let Cond::Variants(v) = &**cond else {
            panic!("{cond:?}")
        };
        use VariantCond::*;
        let is = |s: &str| Box::new(Is(s.into()));
        assert_eq!(
            *v,
            Or(Box::new(And(Box::new(Not(is("x"))), is("y"))), is("z"))
        );
        assert!(v.holds(&["y".into()]));
        assert!(!v.holds(&["x".into(), "y".into()]));
        assert!(v.holds(&["x".into(), "z".into()]));
        // A parenthesised formula, and `(` opening an expression instead.
        for (src, variants) in [
            ("if (\"a\" || \"b\") && \"c\" then po else 0", true),
            ("if (po | rf) = po then po else 0", false),
            ("if po subset rf then po else 0", false),
            ("if 'a in {'a} then po else 0", false),
        ] {
            let f = parse_file(&format!("let a = {src}"), 0).unwrap();
            let Stmt::Let { bindings, .. } = &f.stmts[0] else {
                panic!()
            };
            let ExprKind::If { cond, .. } = &bindings[0].body.kind else {
                panic!()
            };
            assert_eq!(matches!(**cond, Cond::Variants(_)), variants, "{src}");
        }
        // Instruction-level `if` takes formulas too.
        let f = parse_file("if \"a\" || not \"b\" let x = po end", 0).unwrap();
        assert!(matches!(
            &f.stmts[0],
            Stmt::IfVariant {
                variant: VariantCond::Or(..),
                ..
            }
        ));
        let e = parse_file("let a = if po then 0 else 0", 0).unwrap_err();
        assert_eq!(
            e.expected.as_deref(),
            Some("'=', 'subset' or 'in' (a condition)")
        );
    }

    #[test]
    fn let_rec_when_is_followed_by_its_check() {
        let f = parse_file("let rec U = po | U;U\nwhen acyclic U as sc\nlet x = U", 0).unwrap();
        assert_eq!(f.stmts.len(), 3);
        assert!(matches!(&f.stmts[0], Stmt::Let { rec: true, .. }));
        match &f.stmts[1] {
            Stmt::Check(c) => {
                assert_eq!(c.name.as_deref(), Some("sc"));
                assert_eq!(c.mode, CheckMode::Require);
                assert_eq!(c.text, "acyclic U");
            }
            s => panic!("{s:?}"),
        }
        // Inside a procedure body too.
        let f = parse_file("procedure p() = let rec A = po when ~empty A end", 0).unwrap();
        assert!(matches!(&f.stmts[0], Stmt::Procedure { body, .. } if body.len() == 2));
    }

    #[test]
    fn titles() {
        assert_eq!(
            parse_file("PTX\nlet x = 0", 0).unwrap().title.as_deref(),
            Some("PTX")
        );
        assert_eq!(
            parse_file("X86 \"TSO\"\nlet x = 0", 0)
                .unwrap()
                .title
                .as_deref(),
            Some("TSO")
        );
        assert_eq!(parse_file("let x = 0", 0).unwrap().title, None);
    }

    #[test]
    fn syntax_errors_are_located() {
        let e = parse_file("let x = po |\nlet y = 0", 0).unwrap_err();
        assert_eq!(e.loc.pos, Pos { line: 2, col: 1 });
        assert_eq!(e.expected.as_deref(), Some("an expression"));
        let e = parse_file("let x = (po | rf", 0).unwrap_err();
        assert_eq!(e.loc.pos, Pos { line: 1, col: 17 });
        let e = parse_file("acyclic po as", 0).unwrap_err();
        assert_eq!(e.loc.pos, Pos { line: 1, col: 14 });
        let e = parse_file("let x = po\nenum e = 'a || b", 0).unwrap_err();
        assert_eq!(e.expected.as_deref(), Some("a tag like 'name"));
        assert_eq!(e.loc.pos, Pos { line: 2, col: 16 });
        let e = parse_file("let x = match t with 'a -> 0 || _ -> 0 || 'b -> 0 end", 0).unwrap_err();
        assert!(
            e.expected
                .as_deref()
                .unwrap()
                .contains("nothing may follow")
        );
        let e = parse_file("let x = match s with {} -> 0 end", 0).unwrap_err();
        assert_eq!(e.expected.as_deref(), Some("'||'"));
    }
}
