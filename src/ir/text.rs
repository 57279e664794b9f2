//! The one printer of conditions: a proposition as text in the style a
//! caller needs (herd's result line, herd7's exact line, a compiled test's
//! condition, NVLitmus's `.test` syntax), with the caller's own rendering
//! of terms.

use super::{CmpOp, Prop, Quantifier, Term, Test, Value};

/// How negation is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NotStyle {
    /// `~` before the operand, which is bracketed only when it is a
    /// conjunction or disjunction (`~x=1`, `~(x=1 /\ y=1)`).
    Tilde,
    /// `~(...)` always.
    TildeParen,
    /// herd7's `not (...)`; a `!=` comparison is written `not (a=b)` too.
    HerdNot,
}

/// A style of proposition text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PropStyle {
    pub not: NotStyle,
    /// Bracket every conjunction and disjunction (`(a /\ b)`), instead of
    /// only where precedence needs it.
    pub always_paren: bool,
    /// Equality as `==` with spaces around every comparison operator
    /// (NVLitmus), instead of `=` with none (herd).
    pub c_like: bool,
}

impl PropStyle {
    /// herd's litmus syntax with minimal brackets (`1:r0=1 /\ ~x=2`).
    pub const HERD: PropStyle = PropStyle {
        not: NotStyle::Tilde,
        always_paren: false,
        c_like: false,
    };
    /// herd7's own result line (`[x]=1`, `not (0:r0=1)`).
    pub const HERD7: PropStyle = PropStyle {
        not: NotStyle::HerdNot,
        always_paren: false,
        c_like: false,
    };
    /// Fully bracketed herd syntax (a test compiled by a mapping).
    pub const BRACKETED: PropStyle = PropStyle {
        not: NotStyle::TildeParen,
        always_paren: true,
        c_like: false,
    };
    /// NVLitmus `.test` syntax (`P0:r0 == 1`).
    pub const NVLITMUS: PropStyle = PropStyle {
        not: NotStyle::TildeParen,
        always_paren: true,
        c_like: true,
    };
}

/// A condition's quantifier keyword (`exists`, `~exists`, `forall`).
pub fn quantifier_text(q: Quantifier) -> &'static str {
    match q {
        Quantifier::Exists => "exists",
        Quantifier::NotExists => "~exists",
        Quantifier::Forall => "forall",
    }
}

/// A comparison operator in herd syntax (`=`, `!=`, `<`, ...).
pub fn cmp_text(c: CmpOp) -> &'static str {
    match c {
        CmpOp::Eq => "=",
        CmpOp::Ne => "!=",
        CmpOp::Lt => "<",
        CmpOp::Le => "<=",
        CmpOp::Gt => ">",
        CmpOp::Ge => ">=",
    }
}

/// `p` as text in `style`, each term printed by `term` (whose error stops
/// the printing).
pub fn prop_text<E>(
    p: &Prop,
    style: PropStyle,
    term: &dyn Fn(&Term) -> Result<String, E>,
) -> Result<String, E> {
    let mut out = String::new();
    go(p, 0, style, term, &mut out)?;
    Ok(out)
}

/// Precedences: disjunction 1, conjunction 2, negation and atoms 3.
fn go<E>(
    p: &Prop,
    parent: u8,
    style: PropStyle,
    term: &dyn Fn(&Term) -> Result<String, E>,
    out: &mut String,
) -> Result<(), E> {
    match p {
        Prop::True => out.push_str("true"),
        Prop::False => out.push_str("false"),
        Prop::Cmp(CmpOp::Ne, a, b) if style.not == NotStyle::HerdNot => {
            out.push_str(&format!("not ({}={})", term(a)?, term(b)?));
        }
        Prop::Cmp(c, a, b) => {
            let (a, b) = (term(a)?, term(b)?);
            if style.c_like {
                let op = if *c == CmpOp::Eq { "==" } else { cmp_text(*c) };
                out.push_str(&format!("{a} {op} {b}"));
            } else {
                out.push_str(&format!("{a}{}{b}", cmp_text(*c)));
            }
        }
        Prop::Not(a) => match style.not {
            NotStyle::Tilde => {
                out.push('~');
                go(a, 3, style, term, out)?;
            }
            NotStyle::TildeParen | NotStyle::HerdNot => {
                out.push_str(if style.not == NotStyle::HerdNot {
                    "not ("
                } else {
                    "~("
                });
                go(a, 0, style, term, out)?;
                out.push(')');
            }
        },
        Prop::And(a, b) | Prop::Or(a, b) => {
            let (prec, op) = if matches!(p, Prop::And(..)) {
                (2, " /\\ ")
            } else {
                (1, " \\/ ")
            };
            let paren = style.always_paren || parent > prec;
            if paren {
                out.push('(');
            }
            go(a, prec, style, term, out)?;
            out.push_str(op);
            go(b, prec, style, term, out)?;
            if paren {
                out.push(')');
            }
        }
    }
    Ok(())
}

/// A state as herd prints it: `1:r0=1; x=2;`.
pub fn state_text(test: &Test, names: &[String], values: &[Value]) -> String {
    let mut s = String::new();
    for (n, v) in names.iter().zip(values) {
        s.push_str(&format!("{n}={}; ", super::outcome::value_text(test, *v)));
    }
    s.trim_end().to_string()
}
