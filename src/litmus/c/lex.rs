//! The C front end's tokens: herd's litmus lexer with C punctuation and
//! a one-token look-ahead ([`CLex`]).

use crate::diag::Diagnostic;
use crate::lex_util;
use crate::litmus::lexer::{Lexer, Tok, Token};

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
pub(super) struct CLex<'a> {
    pub(super) lx: Lexer<'a>,
    /// Whether `(*` starts a comment (false inside code, where `(*p)` is C).
    pub(super) ocaml: bool,
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
    pub(super) fn off(&self) -> usize {
        self.lx.offset()
    }

    /// Whether `other` is at the same place with the same comment rule.
    fn same_place(&self, other: &CLex<'_>) -> bool {
        self.ocaml == other.ocaml && self.lx.same_place(&other.lx)
    }

    pub(super) fn skip_ws(&mut self) -> Result<(), Diagnostic> {
        let lx = &mut self.lx;
        loop {
            // A run of blanks at once (one byte test each for ASCII).
            lx.bump_while(crate::litmus::lexer::is_blank);
            match lx.peek_char() {
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

    pub(super) fn next(&mut self) -> Result<Token, Diagnostic> {
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
}
