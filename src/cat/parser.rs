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
    BinOp, Binding, Check, CheckMode, Error, Expr, ExprKind, File, Loc, Stmt, Test, UnOp,
};
use super::lexer::{Kw, Tok, Token, tokenize};

/// Parses one cat file (`file` is its index in the model's file table).
pub fn parse_file(src: &str, file: usize) -> Result<File, Error> {
    let tokens = tokenize(src, file)?;
    let mut p = Parser {
        src,
        tokens,
        i: 0,
        prev_end: 0,
    };
    p.file()
}

struct Parser<'s> {
    src: &'s str,
    tokens: Vec<Token>,
    i: usize,
    /// Byte offset just past the last consumed token.
    prev_end: usize,
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

    // ----- files and instructions -------------------------------------------

    fn file(&mut self) -> Result<File, Error> {
        let title = self.title();
        let mut stmts = Vec::new();
        while *self.tok() != Tok::Eof {
            stmts.push(self.stmt()?);
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
            Tok::Kw(
                kw @ (Kw::Procedure
                | Kw::Call
                | Kw::Forall
                | Kw::Enum
                | Kw::Match
                | Kw::If
                | Kw::Try
                | Kw::Fun
                | Kw::Begin),
            ) => Err(unsupported(loc, &format!("'{}'", kw.as_str()))),
            _ => Err(self.error_here(
                "an instruction (let, acyclic, irreflexive, empty, flag, undefined_unless, with, include, show)",
            )),
        }
    }

    fn let_stmt(&mut self) -> Result<Stmt, Error> {
        let loc = self.loc();
        self.advance();
        let rec = self.eat(&Tok::Kw(Kw::Rec));
        let mut bindings = vec![self.binding()?];
        while self.eat(&Tok::Kw(Kw::And)) {
            bindings.push(self.binding()?);
        }
        // herd accepts an optional `in` after a top-level binding.
        self.eat(&Tok::Kw(Kw::In));
        Ok(Stmt::Let { rec, bindings, loc })
    }

    fn binding(&mut self) -> Result<Binding, Error> {
        if *self.tok() == Tok::LParen {
            return Err(unsupported(self.loc(), "a tuple pattern"));
        }
        let (name, loc) = self.ident("a name to bind")?;
        let params = if self.eat(&Tok::LParen) {
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

    /// Parses an expression.
    fn expr(&mut self) -> Result<Expr, Error> {
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
        let lhs = self.right_assoc(level + 1)?;
        let (tok, op) = &LEVELS[level];
        if self.tok() == tok {
            let op_loc = self.loc();
            self.advance();
            let rhs = self.right_assoc(level)?;
            return Ok(binary(*op, op_loc, lhs, rhs));
        }
        Ok(lhs)
    }

    /// `\`, left-associative.
    fn diff(&mut self) -> Result<Expr, Error> {
        let mut lhs = self.inter()?;
        while *self.tok() == Tok::Backslash {
            let op_loc = self.loc();
            self.advance();
            let rhs = self.inter()?;
            lhs = binary(BinOp::Diff, op_loc, lhs, rhs);
        }
        Ok(lhs)
    }

    /// `&`, right-associative.
    fn inter(&mut self) -> Result<Expr, Error> {
        let lhs = self.cartesian()?;
        if *self.tok() == Tok::Amp {
            let op_loc = self.loc();
            self.advance();
            let rhs = self.inter()?;
            return Ok(binary(BinOp::Inter, op_loc, lhs, rhs));
        }
        Ok(lhs)
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
        if *self.tok() == Tok::Tilde {
            let loc = self.loc();
            self.advance();
            let e = self.prefix()?;
            return Ok(Expr {
                kind: ExprKind::Unary(UnOp::Complement, Box::new(e)),
                loc,
            });
        }
        self.postfix()
    }

    fn postfix(&mut self) -> Result<Expr, Error> {
        let mut e = self.primary()?;
        loop {
            let op = match self.tok() {
                Tok::HatInv => UnOp::Inverse,
                Tok::Plus | Tok::HatPlus => UnOp::Plus,
                Tok::HatStar => UnOp::Star,
                Tok::Question | Tok::HatQuestion => UnOp::Opt,
                Tok::Star if !self.peek_tok(1).starts_operand() => UnOp::Star,
                _ => return Ok(e),
            };
            self.advance();
            let loc = e.loc;
            e = Expr {
                kind: ExprKind::Unary(op, Box::new(e)),
                loc,
            };
        }
    }

    fn primary(&mut self) -> Result<Expr, Error> {
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
            Tok::Ident(name) => {
                self.advance();
                if *self.tok() == Tok::LParen {
                    self.advance();
                    let mut args = Vec::new();
                    if !self.eat(&Tok::RParen) {
                        loop {
                            args.push(self.expr()?);
                            if self.eat(&Tok::RParen) {
                                break;
                            }
                            self.expect(&Tok::Comma, "',' or ')'")?;
                        }
                    }
                    ExprKind::App { func: name, args }
                } else {
                    ExprKind::Var(name)
                }
            }
            Tok::LParen => {
                self.advance();
                if *self.tok() == Tok::RParen {
                    return Err(unsupported(loc, "the empty tuple '()'"));
                }
                let e = self.expr()?;
                if *self.tok() == Tok::Comma {
                    return Err(unsupported(self.loc(), "a tuple"));
                }
                self.expect(&Tok::RParen, "')'")?;
                return Ok(e);
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
            Tok::LBrace => return Err(unsupported(loc, "an explicit set '{...}'")),
            Tok::Tag(t) => return Err(unsupported(loc, &format!("the tag '{t}"))),
            Tok::Kw(kw @ (Kw::Fun | Kw::Match | Kw::Try | Kw::If)) => {
                return Err(unsupported(
                    loc,
                    &format!("'{}' in an expression", kw.as_str()),
                ));
            }
            _ => return Err(self.error_here("an expression")),
        };
        Ok(Expr { kind, loc })
    }
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
    use crate::ir::Pos;

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
        let e = parse_file("let x = po\nprocedure p() = end", 0).unwrap_err();
        assert!(e.message.contains("not supported"));
        assert_eq!(e.loc.pos, Pos { line: 2, col: 1 });
        let e = parse_file("let x = {}", 0).unwrap_err();
        assert!(e.message.contains("explicit set"));
    }
}
