//! Diagnostics: errors that point at `file:line:col` and say what was expected.
//!
//! Every front end (litmus dialects, the cat parser) reports problems as a
//! [`Diagnostic`]. Rendering shows the offending source line with a caret, in
//! the style of rustc/ariadne, so users can fix their input without guessing.

use crate::ir::Pos;
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
        }
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
}
