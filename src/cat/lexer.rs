//! Tokens of the cat language.

use super::ast::{Error, Loc};
use crate::lex_util::Scanner;

/// Reserved words. Those of herd's functional and procedural layers are
/// reserved too, so a model using them gets a clear "not supported" error
/// instead of a confusing parse error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kw {
    Let,
    Rec,
    And,
    In,
    Acyclic,
    Irreflexive,
    Empty,
    As,
    Flag,
    UndefinedUnless,
    Show,
    Unshow,
    Include,
    With,
    From,
    Procedure,
    Call,
    Forall,
    Do,
    End,
    Fun,
    Match,
    Begin,
    Enum,
    If,
    Then,
    Else,
    Try,
    When,
    Not,
    Subset,
    Variant,
}

impl Kw {
    fn from_word(w: &str) -> Option<Kw> {
        Some(match w {
            "let" => Kw::Let,
            "rec" => Kw::Rec,
            "and" => Kw::And,
            "in" => Kw::In,
            "acyclic" => Kw::Acyclic,
            "irreflexive" => Kw::Irreflexive,
            "empty" => Kw::Empty,
            "as" => Kw::As,
            "flag" => Kw::Flag,
            "undefined_unless" => Kw::UndefinedUnless,
            "show" => Kw::Show,
            "unshow" => Kw::Unshow,
            "include" => Kw::Include,
            "with" => Kw::With,
            "from" => Kw::From,
            "procedure" => Kw::Procedure,
            "call" => Kw::Call,
            "forall" => Kw::Forall,
            "do" => Kw::Do,
            "end" => Kw::End,
            "fun" => Kw::Fun,
            "match" => Kw::Match,
            "begin" => Kw::Begin,
            "enum" => Kw::Enum,
            "if" => Kw::If,
            "then" => Kw::Then,
            "else" => Kw::Else,
            "try" => Kw::Try,
            "when" => Kw::When,
            "not" => Kw::Not,
            "subset" => Kw::Subset,
            "variant" => Kw::Variant,
            _ => return None,
        })
    }

    /// The keyword as written.
    pub fn as_str(self) -> &'static str {
        match self {
            Kw::Let => "let",
            Kw::Rec => "rec",
            Kw::And => "and",
            Kw::In => "in",
            Kw::Acyclic => "acyclic",
            Kw::Irreflexive => "irreflexive",
            Kw::Empty => "empty",
            Kw::As => "as",
            Kw::Flag => "flag",
            Kw::UndefinedUnless => "undefined_unless",
            Kw::Show => "show",
            Kw::Unshow => "unshow",
            Kw::Include => "include",
            Kw::With => "with",
            Kw::From => "from",
            Kw::Procedure => "procedure",
            Kw::Call => "call",
            Kw::Forall => "forall",
            Kw::Do => "do",
            Kw::End => "end",
            Kw::Fun => "fun",
            Kw::Match => "match",
            Kw::Begin => "begin",
            Kw::Enum => "enum",
            Kw::If => "if",
            Kw::Then => "then",
            Kw::Else => "else",
            Kw::Try => "try",
            Kw::When => "when",
            Kw::Not => "not",
            Kw::Subset => "subset",
            Kw::Variant => "variant",
        }
    }
}

/// A token kind.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Tok {
    /// Identifier (letters, digits, `_`, `-`, `.`; starts with a letter or `_`).
    Ident(String),
    /// Keyword.
    Kw(Kw),
    /// Double-quoted string (no escapes, as in herd).
    Str(String),
    /// `'name`: a tag constant (functional layer, not supported yet).
    Tag(String),
    /// `0`: the empty relation.
    Zero,
    /// `_`: the universe set.
    Underscore,
    LParen,
    RParen,
    LBracket,
    RBracket,
    LBrace,
    RBrace,
    Comma,
    Equal,
    /// `|`
    Bar,
    /// `||` (match clauses, enum; not supported yet)
    BarBar,
    /// `&`
    Amp,
    /// `&&` (conditions on variants)
    AmpAmp,
    /// `;`
    Semi,
    /// `\`
    Backslash,
    /// `~`
    Tilde,
    /// `*`
    Star,
    /// `+`
    Plus,
    /// `++`
    PlusPlus,
    /// `?`
    Question,
    /// `^-1`
    HatInv,
    /// `^+`
    HatPlus,
    /// `^*`
    HatStar,
    /// `^?`
    HatQuestion,
    /// `->`
    Arrow,
    /// End of input.
    Eof,
}

impl Tok {
    /// How the token is shown in "found ..." messages.
    pub fn describe(&self) -> String {
        match self {
            Tok::Ident(s) => format!("identifier '{s}'"),
            Tok::Kw(k) => format!("keyword '{}'", k.as_str()),
            Tok::Str(s) => format!("string \"{s}\""),
            Tok::Tag(s) => format!("tag '{s}"),
            Tok::Zero => "'0'".into(),
            Tok::Underscore => "'_'".into(),
            Tok::LParen => "'('".into(),
            Tok::RParen => "')'".into(),
            Tok::LBracket => "'['".into(),
            Tok::RBracket => "']'".into(),
            Tok::LBrace => "'{'".into(),
            Tok::RBrace => "'}'".into(),
            Tok::Comma => "','".into(),
            Tok::Equal => "'='".into(),
            Tok::Bar => "'|'".into(),
            Tok::BarBar => "'||'".into(),
            Tok::Amp => "'&'".into(),
            Tok::AmpAmp => "'&&'".into(),
            Tok::Semi => "';'".into(),
            Tok::Backslash => "'\\'".into(),
            Tok::Tilde => "'~'".into(),
            Tok::Star => "'*'".into(),
            Tok::Plus => "'+'".into(),
            Tok::PlusPlus => "'++'".into(),
            Tok::Question => "'?'".into(),
            Tok::HatInv => "'^-1'".into(),
            Tok::HatPlus => "'^+'".into(),
            Tok::HatStar => "'^*'".into(),
            Tok::HatQuestion => "'^?'".into(),
            Tok::Arrow => "'->'".into(),
            Tok::Eof => "end of file".into(),
        }
    }

    /// Whether the token can start an operand (used to tell the binary
    /// cartesian product `S * T` from the postfix closure `r*`).
    pub fn starts_operand(&self) -> bool {
        matches!(
            self,
            Tok::Ident(_)
                | Tok::Zero
                | Tok::Underscore
                | Tok::LParen
                | Tok::LBracket
                | Tok::LBrace
                | Tok::Tilde
                | Tok::Tag(_)
                | Tok::Kw(Kw::Begin)
        )
    }
}

/// A token with its location and byte span in the source.
#[derive(Clone, Debug)]
pub struct Token {
    pub tok: Tok,
    pub loc: Loc,
    /// Byte offset of the first character.
    pub start: usize,
    /// Byte offset just past the last character.
    pub end: usize,
}

fn is_ident_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.'
}

struct Lexer<'s> {
    sc: Scanner<'s>,
    file: usize,
}

impl Lexer<'_> {
    fn peek(&self, k: usize) -> Option<char> {
        self.sc.peek_nth(k)
    }

    fn offset(&self) -> usize {
        self.sc.offset()
    }

    fn loc(&self) -> Loc {
        Loc {
            file: self.file,
            pos: self.sc.pos(),
        }
    }

    fn bump(&mut self) -> Option<char> {
        self.sc.bump()
    }

    fn err(&self, loc: Loc, message: impl Into<String>) -> Error {
        Error {
            loc,
            message: message.into(),
            expected: None,
        }
    }

    /// Skips whitespace and (nested) comments.
    fn skip_trivia(&mut self) -> Result<(), Error> {
        loop {
            match (self.peek(0), self.peek(1)) {
                (Some(c), _) if c.is_whitespace() => {
                    self.bump();
                }
                // `//` line comments: not herd, but common in Dat3M's models.
                (Some('/'), Some('/')) => self.sc.bump_while(|c| c != '\n'),
                // `#` line comments, as herd's lexer reads them.
                (Some('#'), _) => self.sc.bump_while(|c| c != '\n'),
                (Some('('), Some('*')) => {
                    let start = self.loc();
                    self.bump();
                    self.bump();
                    let mut depth = 1;
                    while depth > 0 {
                        match (self.peek(0), self.peek(1)) {
                            (None, _) => {
                                return Err(Error {
                                    expected: Some("'*)'".into()),
                                    ..self.err(start, "unterminated comment")
                                });
                            }
                            (Some('('), Some('*')) => {
                                self.bump();
                                self.bump();
                                depth += 1;
                            }
                            (Some('*'), Some(')')) => {
                                self.bump();
                                self.bump();
                                depth -= 1;
                            }
                            _ => {
                                self.bump();
                            }
                        }
                    }
                }
                _ => return Ok(()),
            }
        }
    }

    /// Skips blanks (herd accepts `r ^ -1`) and peeks at the next two characters.
    fn after_blanks(&mut self) -> (Option<char>, Option<char>) {
        self.sc.bump_while(|c| c == ' ' || c == '\t');
        (self.peek(0), self.peek(1))
    }

    fn next_token(&mut self) -> Result<Token, Error> {
        self.skip_trivia()?;
        let loc = self.loc();
        let start = self.offset();
        let Some(c) = self.bump() else {
            return Ok(Token {
                tok: Tok::Eof,
                loc,
                start,
                end: start,
            });
        };
        let tok = match c {
            '(' => Tok::LParen,
            ')' => Tok::RParen,
            '[' => Tok::LBracket,
            ']' => Tok::RBracket,
            '{' => Tok::LBrace,
            '}' => Tok::RBrace,
            ',' => Tok::Comma,
            '=' => Tok::Equal,
            '&' => {
                if self.peek(0) == Some('&') {
                    self.bump();
                    Tok::AmpAmp
                } else {
                    Tok::Amp
                }
            }
            ';' => Tok::Semi,
            '\\' => Tok::Backslash,
            '~' => Tok::Tilde,
            '*' => Tok::Star,
            '?' => Tok::Question,
            '|' => {
                if self.peek(0) == Some('|') {
                    self.bump();
                    Tok::BarBar
                } else {
                    Tok::Bar
                }
            }
            '+' => {
                if self.peek(0) == Some('+') {
                    self.bump();
                    Tok::PlusPlus
                } else {
                    Tok::Plus
                }
            }
            '-' if self.peek(0) == Some('>') => {
                self.bump();
                Tok::Arrow
            }
            '^' => match self.after_blanks() {
                (Some('-'), Some('1')) => {
                    self.bump();
                    self.bump();
                    Tok::HatInv
                }
                (Some('+'), _) => {
                    self.bump();
                    Tok::HatPlus
                }
                (Some('*'), _) => {
                    self.bump();
                    Tok::HatStar
                }
                (Some('?'), _) => {
                    self.bump();
                    Tok::HatQuestion
                }
                _ => {
                    return Err(Error {
                        expected: Some("'^-1', '^+', '^*' or '^?'".into()),
                        ..self.err(loc, "unexpected '^'")
                    });
                }
            },
            '"' => {
                let body_start = self.offset();
                loop {
                    match self.bump() {
                        None => {
                            return Err(Error {
                                expected: Some("closing '\"'".into()),
                                ..self.err(loc, "unterminated string")
                            });
                        }
                        Some('"') => break,
                        Some(_) => {}
                    }
                }
                let body_end = self.offset() - 1;
                Tok::Str(self.sc.src()[body_start..body_end].to_string())
            }
            '\'' if self.peek(0).is_some_and(is_ident_start) => {
                let s = self.offset();
                self.sc.bump_while(is_ident_char);
                Tok::Tag(self.sc.since(s).to_string())
            }
            c if c.is_ascii_digit() => {
                self.sc.bump_while(|c| c.is_ascii_alphanumeric());
                let text = self.sc.since(start);
                if text == "0" {
                    Tok::Zero
                } else {
                    return Err(Error {
                        expected: Some("'0' (the empty relation)".into()),
                        ..self.err(loc, format!("unexpected number '{text}'"))
                    });
                }
            }
            c if is_ident_start(c) => {
                while self.peek(0).is_some_and(is_ident_char) {
                    // `x->` is `x` followed by an arrow, as in `fun x -> e`.
                    if self.peek(0) == Some('-') && self.peek(1) == Some('>') {
                        break;
                    }
                    self.bump();
                }
                let text = self.sc.since(start);
                if text == "_" {
                    Tok::Underscore
                } else if let Some(kw) = Kw::from_word(text) {
                    Tok::Kw(kw)
                } else {
                    Tok::Ident(text.to_string())
                }
            }
            other => {
                return Err(self.err(loc, format!("unexpected character '{other}'")));
            }
        };
        Ok(Token {
            tok,
            loc,
            start,
            end: self.offset(),
        })
    }
}

/// Splits `src` (file number `file`) into tokens, ending with [`Tok::Eof`].
pub fn tokenize(src: &str, file: usize) -> Result<Vec<Token>, Error> {
    let mut lx = Lexer {
        sc: Scanner::new(src),
        file,
    };
    let mut out = Vec::new();
    loop {
        let t = lx.next_token()?;
        let eof = t.tok == Tok::Eof;
        out.push(t);
        if eof {
            return Ok(out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::Pos;

    fn toks(s: &str) -> Vec<Tok> {
        tokenize(s, 0).unwrap().into_iter().map(|t| t.tok).collect()
    }

    #[test]
    fn identifiers_with_dashes_and_dots() {
        assert_eq!(
            toks("po-loc DMB.ST ACQ_REL _ x1"),
            vec![
                Tok::Ident("po-loc".into()),
                Tok::Ident("DMB.ST".into()),
                Tok::Ident("ACQ_REL".into()),
                Tok::Underscore,
                Tok::Ident("x1".into()),
                Tok::Eof
            ]
        );
    }

    #[test]
    fn operators() {
        assert_eq!(
            toks("r^-1 r^+ r+ r* r? a|b a++b ~a [S] a\\b a&b a;b ||"),
            vec![
                Tok::Ident("r".into()),
                Tok::HatInv,
                Tok::Ident("r".into()),
                Tok::HatPlus,
                Tok::Ident("r".into()),
                Tok::Plus,
                Tok::Ident("r".into()),
                Tok::Star,
                Tok::Ident("r".into()),
                Tok::Question,
                Tok::Ident("a".into()),
                Tok::Bar,
                Tok::Ident("b".into()),
                Tok::Ident("a".into()),
                Tok::PlusPlus,
                Tok::Ident("b".into()),
                Tok::Tilde,
                Tok::Ident("a".into()),
                Tok::LBracket,
                Tok::Ident("S".into()),
                Tok::RBracket,
                Tok::Ident("a".into()),
                Tok::Backslash,
                Tok::Ident("b".into()),
                Tok::Ident("a".into()),
                Tok::Amp,
                Tok::Ident("b".into()),
                Tok::Ident("a".into()),
                Tok::Semi,
                Tok::Ident("b".into()),
                Tok::BarBar,
                Tok::Eof
            ]
        );
    }

    #[test]
    fn nested_comments_and_positions() {
        let ts = tokenize("(* a (* b *) c *)\n  let x = 0", 0).unwrap();
        assert_eq!(ts[0].tok, Tok::Kw(Kw::Let));
        assert_eq!(ts[0].loc.pos, Pos { line: 2, col: 3 });
        assert_eq!(ts[3].tok, Tok::Zero);
        assert_eq!(ts[3].loc.pos, Pos { line: 2, col: 11 });
    }

    #[test]
    fn line_comments() {
        let ts = tokenize("// note: a ; b\nlet x = po // trailing\n// last", 0).unwrap();
        assert_eq!(ts.len(), 5);
        assert_eq!(ts[0].loc.pos, Pos { line: 2, col: 1 });
        assert!(tokenize("let x = a / b", 0).is_err());
    }

    #[test]
    fn unterminated_comment() {
        let e = tokenize("let x = po\n  (* open (* nested *)\n", 0).unwrap_err();
        assert_eq!(e.message, "unterminated comment");
        assert_eq!(e.loc.pos, Pos { line: 2, col: 3 });
    }

    #[test]
    fn strings_and_bad_numbers() {
        assert_eq!(
            toks("include \"x.cat\""),
            vec![Tok::Kw(Kw::Include), Tok::Str("x.cat".into()), Tok::Eof]
        );
        assert!(tokenize("\"open", 0).is_err());
        let e = tokenize("let x = 12", 0).unwrap_err();
        assert_eq!(e.loc.pos, Pos { line: 1, col: 9 });
    }
}
