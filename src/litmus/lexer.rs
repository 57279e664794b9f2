//! Tokens with positions, shared by every litmus dialect.
//!
//! The lexer works on demand: the parser asks for one token at a time, so
//! text that is never reached (free-form junk after the condition, `<< >>`
//! blocks) is never tokenised and cannot cause errors. A few raw helpers
//! ([`Lexer::read_word`], [`Lexer::skip_line`]) serve the line-oriented parts
//! of the format (the first line, `Key=Value` lines).
//!
//! Token classes:
//! - identifiers `[A-Za-z_%][A-Za-z0-9_.]*` — dots are part of an identifier,
//!   so a PTX mnemonic such as `ld.acquire.gpu` is one token that the dialect
//!   splits into qualifiers;
//! - unsigned integers, decimal or `0x` hexadecimal (signs are tokens);
//! - double-quoted strings, which may span lines;
//! - punctuation, longest match first (`/\`, `\/`, `==`, `!=`, `<=`, ...).
//!
//! Whitespace (a byte-order mark included) and OCaml-style comments
//! `(* ... *)` (nested) separate tokens.

use crate::diag::Diagnostic;
use crate::ir::Pos;
use crate::lex_util::{self, Scanner};

/// What a token is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Tok {
    /// An identifier (may contain dots and start with `%`).
    Ident(String),
    /// An unsigned integer literal.
    Int(i64),
    /// A double-quoted string, without the quotes.
    Str(String),
    /// Punctuation such as `{`, `|`, `/\`.
    Punct(&'static str),
    /// End of input.
    Eof,
}

/// A token with its position and byte span in the source.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Token {
    pub tok: Tok,
    /// Position of the first character.
    pub pos: Pos,
    /// Byte offset of the first character.
    pub start: usize,
    /// Byte offset just past the last character.
    pub end: usize,
}

impl Token {
    /// The identifier text, if this is an identifier.
    pub fn ident(&self) -> Option<&str> {
        match &self.tok {
            Tok::Ident(s) => Some(s),
            _ => None,
        }
    }

    /// True when this is the punctuation `p`.
    pub fn is_punct(&self, p: &str) -> bool {
        matches!(&self.tok, Tok::Punct(q) if *q == p)
    }

    /// True when this is the identifier `s` (case-sensitive).
    pub fn is_ident(&self, s: &str) -> bool {
        matches!(&self.tok, Tok::Ident(q) if q == s)
    }

    /// True at end of input.
    pub fn is_eof(&self) -> bool {
        matches!(self.tok, Tok::Eof)
    }

    /// A short human description for error messages (`'foo'`, `end of file`).
    pub fn describe(&self) -> String {
        match &self.tok {
            Tok::Ident(s) => format!("'{s}'"),
            Tok::Int(v) => format!("'{v}'"),
            Tok::Str(_) => "a quoted string".to_string(),
            Tok::Punct(p) => format!("'{p}'"),
            Tok::Eof => "end of file".to_string(),
        }
    }
}

/// Punctuation, longest first so that `==` wins over `=`.
const PUNCTS: &[&str] = &[
    "/\\", "\\/", "==", "!=", "<>", "<=", ">=", "<<", ">>", "->", "{", "}", "(", ")", "[", "]",
    ";", ",", "|", ":", "=", "~", "&", "$", "@", "*", "+", "-", "<", ">", "!", "?", ".",
];

static PUNCT_TABLE: std::sync::LazyLock<lex_util::PunctTable> =
    std::sync::LazyLock::new(|| lex_util::PunctTable::new(PUNCTS));

/// True for characters that may start an identifier.
pub fn is_ident_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_' || c == '%'
}

/// True for characters that may continue an identifier.
pub fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '.'
}

/// An on-demand lexer. It is `Copy`, so the parser can peek by copying it.
#[derive(Clone, Copy, Debug)]
pub struct Lexer<'a> {
    sc: Scanner<'a>,
    file: &'a str,
}

impl lex_util::Relex for Lexer<'_> {
    type Token = Token;
    type Error = Diagnostic;
    fn lex(&mut self) -> Result<Token, Diagnostic> {
        self.next_token()
    }
    fn same_state(&self, other: &Self) -> bool {
        self.same_place(other)
    }
}

impl<'a> Lexer<'a> {
    /// A lexer at the start of `src`; `file` names it in diagnostics.
    pub fn new(file: &'a str, src: &'a str) -> Self {
        Lexer {
            sc: Scanner::new(src),
            file,
        }
    }

    /// Whether `other` is at the same place of the same text and file (so
    /// lexing from either gives the same tokens and diagnostics).
    pub fn same_place(&self, other: &Lexer<'_>) -> bool {
        self.sc.same_place(&other.sc) && std::ptr::eq(self.file, other.file)
    }

    /// The file name used in diagnostics.
    pub fn file(&self) -> &'a str {
        self.file
    }

    /// The whole source.
    pub fn src(&self) -> &'a str {
        self.sc.src()
    }

    /// Current position.
    pub fn pos(&self) -> Pos {
        self.sc.pos()
    }

    /// Current byte offset.
    pub fn offset(&self) -> usize {
        self.sc.offset()
    }

    /// A diagnostic at `pos`.
    pub fn error(&self, pos: Pos, msg: impl Into<String>) -> Diagnostic {
        Diagnostic::new(self.file, pos, msg)
    }

    /// The next character, not consumed.
    pub fn peek_char(&self) -> Option<char> {
        self.sc.peek()
    }

    fn peek_char2(&self) -> Option<char> {
        self.sc.peek_nth(1)
    }

    /// Consumes one character.
    pub fn bump(&mut self) -> Option<char> {
        self.sc.bump()
    }

    /// Consumes characters while `f` holds.
    pub fn bump_while(&mut self, f: impl Fn(char) -> bool) {
        self.sc.bump_while(f)
    }

    /// True when the rest of the source starts with `s`.
    pub fn starts_with(&self, s: &str) -> bool {
        self.sc.starts_with(s)
    }

    /// Consumes the first string of the list `table` was built from
    /// (longest first) the source continues with, if any.
    pub fn eat_punct(&mut self, table: &lex_util::PunctTable) -> Option<&'static str> {
        self.sc.eat_punct(table)
    }

    /// Skips spaces and tabs (not newlines).
    pub fn skip_inline_ws(&mut self) {
        while matches!(self.peek_char(), Some(' ' | '\t' | '\r')) {
            self.bump();
        }
    }

    /// Skips whitespace (newlines included) and `(* ... *)` comments.
    pub fn skip_ws(&mut self) -> Result<(), Diagnostic> {
        loop {
            // A run of blanks at once (one byte test each for ASCII).
            self.bump_while(is_blank);
            match self.peek_char() {
                Some('(') if self.peek_char2() == Some('*') => self.skip_comment()?,
                _ => return Ok(()),
            }
        }
    }

    /// Skips one (possibly nested) `(* ... *)` comment starting here.
    pub(super) fn skip_comment(&mut self) -> Result<(), Diagnostic> {
        let start = self.pos();
        self.bump();
        self.bump();
        let mut depth = 1u32;
        while depth > 0 {
            match self.bump() {
                None => {
                    return Err(self
                        .error(start, "unterminated comment '(*'")
                        .expected("'*)' before the end of the file"));
                }
                Some('(') if self.peek_char() == Some('*') => {
                    self.bump();
                    depth += 1;
                }
                Some('*') if self.peek_char() == Some(')') => {
                    self.bump();
                    depth -= 1;
                }
                Some(_) => {}
            }
        }
        Ok(())
    }

    /// Reads a double-quoted string starting at the current `"`.
    pub(super) fn read_string(&mut self) -> Result<String, Diagnostic> {
        let start = self.pos();
        self.bump();
        let mut out = String::new();
        loop {
            match self.bump() {
                None => {
                    return Err(self
                        .error(start, "unterminated string")
                        .expected("a closing '\"'"));
                }
                Some('"') => return Ok(out),
                Some(c) => out.push(c),
            }
        }
    }

    /// Skips the rest of the current line, newline included. A string or a
    /// comment that starts on this line is skipped entirely, even across lines.
    pub fn skip_line(&mut self) -> Result<(), Diagnostic> {
        loop {
            match self.peek_char() {
                None => return Ok(()),
                Some('\n') => {
                    self.bump();
                    return Ok(());
                }
                Some('"') => {
                    self.read_string()?;
                }
                Some('(') if self.peek_char2() == Some('*') => self.skip_comment()?,
                Some(_) => {
                    self.bump();
                }
            }
        }
    }

    /// Reads a run of non-whitespace characters on the current line, after
    /// skipping spaces and tabs. `None` at end of line or file.
    pub fn read_word(&mut self) -> Option<(String, Pos)> {
        self.skip_inline_ws();
        let pos = self.pos();
        let start = self.offset();
        self.bump_while(|c| !c.is_whitespace());
        if self.offset() == start {
            None
        } else {
            Some((self.sc.since(start).to_string(), pos))
        }
    }

    /// Reads the next token, skipping whitespace and comments first.
    pub fn next_token(&mut self) -> Result<Token, Diagnostic> {
        self.skip_ws()?;
        let pos = self.pos();
        let start = self.offset();
        let Some(c) = self.peek_char() else {
            return Ok(Token {
                tok: Tok::Eof,
                pos,
                start,
                end: start,
            });
        };
        let tok = if is_ident_start(c) {
            self.bump();
            self.bump_while(is_ident_char);
            Tok::Ident(self.sc.since(start).to_string())
        } else if c.is_ascii_digit() {
            self.read_number(pos)?
        } else if c == '"' {
            Tok::Str(self.read_string()?)
        } else if let Some(p) = self.eat_punct(&PUNCT_TABLE) {
            Tok::Punct(p)
        } else {
            return Err(self
                .error(pos, format!("unexpected character '{c}'"))
                .expected("an identifier, a number or punctuation"));
        };
        Ok(Token {
            tok,
            pos,
            start,
            end: self.offset(),
        })
    }

    fn read_number(&mut self, pos: Pos) -> Result<Tok, Diagnostic> {
        let start = self.offset();
        self.bump_while(lex_util::is_number_char);
        let text = self.sc.since(start);
        match lex_util::int_literal(text) {
            Some(Ok(v)) => Ok(Tok::Int(v)),
            Some(Err(_)) => Err(self
                .error(pos, format!("number '{text}' is out of range"))
                .expected("an integer that fits in 64 bits")),
            None => Err(self
                .error(pos, format!("bad number '{text}'"))
                .expected("a decimal or 0x-prefixed hexadecimal integer")),
        }
    }

    /// The next token without consuming it.
    pub fn peek_token(&self) -> Result<Token, Diagnostic> {
        let mut copy = *self;
        copy.next_token()
    }
}

/// Whitespace between tokens: Unicode white space and the byte-order mark.
pub(crate) fn is_blank(c: char) -> bool {
    c.is_whitespace() || c == '\u{feff}'
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<Tok> {
        let mut lx = Lexer::new("t", s);
        let mut out = Vec::new();
        loop {
            let t = lx.next_token().unwrap();
            if t.is_eof() {
                return out;
            }
            out.push(t.tok);
        }
    }

    #[test]
    fn lexes_mnemonics_and_punct() {
        assert_eq!(
            toks("ld.acquire.gpu r1, [y] /\\ \\/ == != (* c (* n *) *) %r2"),
            vec![
                Tok::Ident("ld.acquire.gpu".into()),
                Tok::Ident("r1".into()),
                Tok::Punct(","),
                Tok::Punct("["),
                Tok::Ident("y".into()),
                Tok::Punct("]"),
                Tok::Punct("/\\"),
                Tok::Punct("\\/"),
                Tok::Punct("=="),
                Tok::Punct("!="),
                Tok::Ident("%r2".into()),
            ]
        );
    }

    #[test]
    fn numbers() {
        assert_eq!(toks("0x1F 42"), vec![Tok::Int(31), Tok::Int(42)]);
        let err = Lexer::new("t", "\n  12ab").next_token().unwrap_err();
        assert_eq!(err.pos, Pos { line: 2, col: 3 });
        assert!(err.message.contains("12ab"));
        let err = Lexer::new("t", "99999999999999999999")
            .next_token()
            .unwrap_err();
        assert!(err.message.contains("out of range"));
    }

    #[test]
    fn positions_and_strings() {
        let mut lx = Lexer::new("t", "\"a\nb\" x");
        let s = lx.next_token().unwrap();
        assert_eq!(s.tok, Tok::Str("a\nb".into()));
        let x = lx.next_token().unwrap();
        assert_eq!(x.pos, Pos { line: 2, col: 4 });
        let err = Lexer::new("t", " \"abc").next_token().unwrap_err();
        assert_eq!(err.pos, Pos { line: 1, col: 2 });
    }
}
