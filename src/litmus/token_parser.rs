//! The token-level steps shared by the recursive-descent parsers of the
//! litmus front ends (the table parser, C and NVLitmus): diagnostics,
//! expect/eat helpers and a nesting limit.

use super::lexer::{Tok, Token};
use crate::diag::Diagnostic;
use crate::ir::Pos;

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

    /// Whether punctuation `p` is next (not consumed). A parser with a
    /// look-ahead cache answers without copying the token.
    fn peek_is_punct(&self, p: &str) -> Result<bool, Diagnostic> {
        Ok(self.peek()?.is_punct(p))
    }

    /// Consumes punctuation `p` if it is next.
    fn eat_punct(&mut self, p: &str) -> Result<bool, Diagnostic> {
        if self.peek_is_punct(p)? {
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
