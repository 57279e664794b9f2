//! Diagnostics: errors that point at `file:line:col` and say what was expected.
//!
//! Every front end (litmus dialects, the cat parser) reports problems as a
//! [`Diagnostic`]. Rendering shows the offending source line with a caret, in
//! the style of rustc/ariadne, so users can fix their input without guessing.

pub use crate::ir::Pos;
use std::fmt;

/// A located error message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// File name as given by the user (or a pseudo name like `<builtin ptx6.cat>`).
    pub file: String,
    /// Position of the problem.
    pub pos: Pos,
    /// What went wrong, e.g. `unsupported instruction 'ld.foo'`.
    pub message: String,
    /// What the parser expected instead, if that is known.
    pub expected: Option<String>,
    /// The source line at `pos` (without newline), for rendering.
    pub line_text: Option<String>,
    /// How herd7 reports the same rejection, where litmix knows it (printed
    /// instead of the rendering above by `--herd-identical`).
    pub herd: Option<Box<HerdForm>>,
}

/// herd7's wording of an error litmix also reports (herd prints it as one
/// `Warning: File ...` line and skips the test).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HerdForm {
    /// A token herd's lexer or grammar does not accept at this position:
    /// `File "f", line L, characters C0-C1: unexpected 'TOK' (in prog) (User error)`.
    Unexpected { token: String },
    /// A rejection of the whole test, without position: `File "f": MESSAGE`.
    Message(String),
}

impl Diagnostic {
    /// A diagnostic at `pos` in `file`.
    pub fn new(file: impl Into<String>, pos: Pos, message: impl Into<String>) -> Self {
        Diagnostic {
            file: file.into(),
            pos,
            message: message.into(),
            expected: None,
            line_text: None,
            herd: None,
        }
    }

    /// Records how herd7 words the same rejection.
    pub fn herd(mut self, form: HerdForm) -> Self {
        self.herd = Some(Box::new(form));
        self
    }

    /// herd7's one-line form of this error for the file named `file` (as
    /// given on the command line), if litmix knows it. Columns are herd's:
    /// counted from 0, the end exclusive.
    pub fn herd_line(&self, file: &str) -> Option<String> {
        Some(match self.herd.as_deref()? {
            HerdForm::Unexpected { token } => {
                let c0 = self.pos.col.max(1) - 1;
                let c1 = c0 as usize + token.len();
                format!(
                    "Warning: File \"{file}\", line {}, characters {c0}-{c1}: unexpected '{token}' (in prog) (User error)",
                    self.pos.line
                )
            }
            HerdForm::Message(m) => format!("Warning: File \"{file}\": {m}"),
        })
    }

    /// Adds what was expected.
    pub fn expected(mut self, what: impl Into<String>) -> Self {
        self.expected = Some(what.into());
        self
    }

    /// Attaches the source line at `self.pos` taken from `source`.
    pub fn with_source(mut self, source: &str) -> Self {
        if self.pos.line >= 1 {
            self.line_text = source
                .lines()
                .nth(self.pos.line as usize - 1)
                .map(|l| l.to_string());
        }
        self
    }

    /// Renders the diagnostic with the source line and a caret under the column.
    pub fn render(&self) -> String {
        let mut out = format!("{}:{}: error: {}", self.file, self.pos, self.message);
        if let Some(exp) = &self.expected {
            out.push_str(&format!(" (expected {exp})"));
        }
        if let Some(text) = &self.line_text {
            let lineno = self.pos.line.to_string();
            let pad = " ".repeat(lineno.len());
            let caret_col = (self.pos.col.max(1) - 1) as usize;
            let prefix: String = text
                .chars()
                .take(caret_col)
                .map(|c| if c == '\t' { '\t' } else { ' ' })
                .collect();
            out.push_str(&format!("\n{pad} |\n{lineno} | {text}\n{pad} | {prefix}^"));
        }
        out
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: error: {}", self.file, self.pos, self.message)?;
        if let Some(exp) = &self.expected {
            write!(f, " (expected {exp})")?;
        }
        Ok(())
    }
}

impl std::error::Error for Diagnostic {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn render_points_at_column() {
        let d = Diagnostic::new(
            "t.litmus",
            Pos { line: 2, col: 3 },
            "unsupported instruction 'foo'",
        )
        .expected("an instruction")
        .with_source("line one\n  foo x\n");
        let r = d.render();
        assert!(r.starts_with(
            "t.litmus:2:3: error: unsupported instruction 'foo' (expected an instruction)"
        ));
        assert!(r.contains("2 |   foo x"));
        assert!(r.ends_with("  |   ^"));
    }

    #[test]
    fn herd_line_uses_herd_columns() {
        let d = Diagnostic::new(
            "t.litmus",
            Pos { line: 6, col: 5 },
            "unknown type 'int128_t'",
        )
        .herd(HerdForm::Unexpected {
            token: "int128_t".into(),
        });
        assert_eq!(
            d.herd_line("tests/C/C07.litmus").unwrap(),
            "Warning: File \"tests/C/C07.litmus\", line 6, characters 4-12: unexpected 'int128_t' (in prog) (User error)"
        );
        let d = Diagnostic::new("t.litmus", Pos { line: 5, col: 2 }, "x")
            .herd(HerdForm::Message("some words".into()));
        assert_eq!(
            d.herd_line("f.litmus").unwrap(),
            "Warning: File \"f.litmus\": some words"
        );
        assert_eq!(
            Diagnostic::new("f", Pos { line: 1, col: 1 }, "x").herd_line("f"),
            None
        );
    }
}
