//! Character-level scanning shared by the lexers of cat models
//! ([`crate::cat::lexer`]), litmus tests ([`crate::litmus::lexer`]) and C
//! thread code. Each lexer keeps its own tokens; this module only walks the
//! text and reads integer literals.

use std::num::ParseIntError;

use crate::ir::Pos;

/// A cursor over source text that knows the line and column (1-based, in
/// characters) of its byte offset. It is `Copy`, so a lexer can look ahead
/// by copying it.
#[derive(Clone, Copy, Debug)]
pub struct Scanner<'a> {
    src: &'a str,
    off: usize,
    line: u32,
    col: u32,
}

impl<'a> Scanner<'a> {
    /// A scanner at the start of `src`.
    pub fn new(src: &'a str) -> Self {
        Scanner {
            src,
            off: 0,
            line: 1,
            col: 1,
        }
    }

    /// The whole source.
    pub fn src(&self) -> &'a str {
        self.src
    }

    /// Current byte offset.
    pub fn offset(&self) -> usize {
        self.off
    }

    /// Whether `other` is at the same place of the same text (so lexing
    /// from either gives the same tokens).
    pub fn same_place(&self, other: &Scanner<'_>) -> bool {
        self.off == other.off
            && self.line == other.line
            && self.col == other.col
            && std::ptr::eq(self.src, other.src)
    }

    /// Current position.
    pub fn pos(&self) -> Pos {
        Pos {
            line: self.line,
            col: self.col,
        }
    }

    /// The text from byte offset `start` to the current offset.
    pub fn since(&self, start: usize) -> &'a str {
        &self.src[start..self.off]
    }

    /// True when the rest of the text starts with `s`.
    pub fn starts_with(&self, s: &str) -> bool {
        self.src[self.off..].starts_with(s)
    }

    /// The next character, not consumed.
    pub fn peek(&self) -> Option<char> {
        self.peek_nth(0)
    }

    /// The character `k` places ahead of the next one, not consumed.
    pub fn peek_nth(&self, k: usize) -> Option<char> {
        let rest = &self.src.as_bytes()[self.off..];
        // ASCII fast path: the k-th character is the k-th byte when the
        // bytes up to it are ASCII.
        if rest.len() > k && rest[..=k].is_ascii() {
            return Some(rest[k] as char);
        }
        self.src[self.off..].chars().nth(k)
    }

    /// Consumes one character.
    pub fn bump(&mut self) -> Option<char> {
        let c = match self.src.as_bytes().get(self.off) {
            Some(&b) if b.is_ascii() => b as char,
            _ => self.peek()?,
        };
        self.off += c.len_utf8();
        if c == '\n' {
            self.line += 1;
            self.col = 1;
        } else {
            self.col += 1;
        }
        Some(c)
    }

    /// Consumes characters while `f` holds.
    pub fn bump_while(&mut self, f: impl Fn(char) -> bool) {
        let bytes = self.src.as_bytes();
        loop {
            match bytes.get(self.off) {
                // ASCII: one byte, one column (or a new line).
                Some(&b) if b.is_ascii() => {
                    if !f(b as char) {
                        return;
                    }
                    self.off += 1;
                    if b == b'\n' {
                        self.line += 1;
                        self.col = 1;
                    } else {
                        self.col += 1;
                    }
                }
                _ => {
                    if !self.peek().is_some_and(&f) {
                        return;
                    }
                    self.bump();
                }
            }
        }
    }

    /// Consumes the first string of the list `table` was built from that
    /// the text starts with (so list longer ones first), if any.
    pub fn eat_punct(&mut self, table: &PunctTable) -> Option<&'static str> {
        let rest = &self.src.as_bytes()[self.off..];
        let bucket = &table.buckets[rest.first().map_or(256, |&b| b as usize)];
        let p = *bucket.iter().find(|p| rest.starts_with(p.as_bytes()))?;
        for _ in 0..p.len() {
            self.bump();
        }
        Some(p)
    }
}

/// A list of punctuation strings by first byte, for
/// [`Scanner::eat_punct`]: each bucket keeps the list's order, and only
/// strings with that first byte (or the empty string) can start the text,
/// so the first match in a bucket is the first match in the list.
pub struct PunctTable {
    /// Per first byte, then one for the end of the text.
    buckets: Vec<Vec<&'static str>>,
}

impl PunctTable {
    pub fn new(puncts: &[&'static str]) -> Self {
        let mut buckets = vec![Vec::new(); 257];
        for &p in puncts {
            match p.as_bytes().first() {
                Some(&b) => buckets[b as usize].push(p),
                None => buckets.iter_mut().for_each(|b| b.push(p)),
            }
        }
        PunctTable { buckets }
    }
}

/// True for characters of a number token as the litmus and C lexers read
/// it: the whole alphanumeric run, so that `12ab` is one bad number.
pub fn is_number_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The value of an integer literal, decimal or `0x`/`0X` hexadecimal:
/// `None` when `text` is not one, `Some(Err(_))` when it does not fit in
/// 64 bits.
pub fn int_literal(text: &str) -> Option<Result<i64, ParseIntError>> {
    if let Some(hex) = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        if hex.is_empty() || !hex.chars().all(|c| c.is_ascii_hexdigit()) {
            None
        } else {
            Some(i64::from_str_radix(hex, 16))
        }
    } else if text.chars().all(|c| c.is_ascii_digit()) {
        Some(text.parse::<i64>())
    } else {
        None
    }
}

/// A lexer whose tokens are a function of its state, so that a token read
/// from one state can be reused by any later read from an equal state.
pub trait Relex: Copy {
    /// The token type.
    type Token: Clone;
    /// The error type.
    type Error;
    /// Reads the next token, advancing the state.
    fn lex(&mut self) -> Result<Self::Token, Self::Error>;
    /// Whether `other` is the same state (same text, place and rules).
    fn same_state(&self, other: &Self) -> bool;
}

/// One token of look-ahead for a parser: the last token peeked, with the
/// lexer state before and after it. A `peek` and the `next` that follows
/// it (or several peeks from one state, as binary-operator levels do) lex
/// the token once.
pub struct Lookahead<L: Relex> {
    last: std::cell::RefCell<Option<(L, L::Token, L)>>,
}

impl<L: Relex> Default for Lookahead<L> {
    fn default() -> Self {
        Lookahead {
            last: std::cell::RefCell::new(None),
        }
    }
}

impl<L: Relex> Lookahead<L> {
    /// The next token from `lx`, advancing it.
    pub fn next(&mut self, lx: &mut L) -> Result<L::Token, L::Error> {
        if let Some((before, tok, after)) = self.last.get_mut().take()
            && before.same_state(lx)
        {
            *lx = after;
            return Ok(tok);
        }
        lx.lex()
    }

    /// What `f` says of the next token from `lx` and of the lexer state
    /// after it, without advancing `lx` or copying the token: the one
    /// place that reads and fills the cache for the peeks below.
    fn cached<R>(&self, lx: &L, f: impl FnOnce(&L::Token, &L) -> R) -> Result<R, L::Error> {
        if let Some((before, tok, after)) = &*self.last.borrow()
            && before.same_state(lx)
        {
            return Ok(f(tok, after));
        }
        let mut after = *lx;
        let tok = after.lex()?;
        let r = f(&tok, &after);
        *self.last.borrow_mut() = Some((*lx, tok, after));
        Ok(r)
    }

    /// What `f` says of the next token from `lx`, without advancing `lx`
    /// or copying the token.
    pub fn peek_with<R>(&self, lx: &L, f: impl FnOnce(&L::Token) -> R) -> Result<R, L::Error> {
        self.cached(lx, |tok, _| f(tok))
    }

    /// The token after the next one from `lx`, without advancing it (the
    /// next one is lexed once, as for [`Lookahead::peek`]).
    pub fn peek_second(&self, lx: &L) -> Result<L::Token, L::Error> {
        let mut after = self.cached(lx, |_, after| *after)?;
        after.lex()
    }

    /// The next token from `lx`, without advancing it.
    pub fn peek(&self, lx: &L) -> Result<L::Token, L::Error> {
        self.cached(lx, |tok, _| tok.clone())
    }
}
