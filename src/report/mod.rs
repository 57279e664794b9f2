//! Reporters: herd7-style text, JSON lines, Graphviz DOT, and `--why`
//! explanations. Each takes a parsed test and its [`crate::exec::CheckResult`].

pub mod dot;
pub mod herd;
pub mod json;
pub mod trace;
pub mod why;

use crate::exec::EventView;
use crate::ir::{CmpOp, Prop, Test, Value};

/// Short name of event `i` in reports: `a`, `b`, ..., `z`, `e26`, ...
pub fn event_name(i: usize) -> String {
    if i < 26 {
        ((b'a' + i as u8) as char).to_string()
    } else {
        format!("e{i}")
    }
}

/// One-line description of an event: `W x=1 (P0: st.weak x, 1)`.
pub fn event_label(test: &Test, e: &EventView) -> String {
    let val = e
        .value
        .map(|v| format!("={}", crate::exec::value_text(test, v)))
        .unwrap_or_default();
    let what = match &e.loc {
        Some(l) => format!("{} {l}{val}", e.kind),
        None => e.kind.to_string(),
    };
    match e.thread {
        Some(t) => format!("{what} (P{t}: {})", e.instr),
        None => format!("{what} (init)"),
    }
}

/// herd's rendering of a comparison operator in conditions.
fn cmp_text(c: CmpOp) -> &'static str {
    match c {
        CmpOp::Eq => "=",
        CmpOp::Ne => "!=",
        CmpOp::Lt => "<",
        CmpOp::Le => "<=",
        CmpOp::Gt => ">",
        CmpOp::Ge => ">=",
    }
}

/// Prints a proposition in herd syntax (`1:r0=1 /\ x=2`).
pub fn prop_text(test: &Test, p: &Prop) -> String {
    fn go(test: &Test, p: &Prop, parent: u8, out: &mut String) {
        // precedence: Or = 1, And = 2, Not/atom = 3
        match p {
            Prop::True => out.push_str("true"),
            Prop::False => out.push_str("false"),
            Prop::Cmp(c, a, b) => {
                out.push_str(&crate::exec::term_name(test, a));
                out.push_str(cmp_text(*c));
                out.push_str(&crate::exec::term_name(test, b));
            }
            Prop::Not(a) => {
                out.push('~');
                go(test, a, 3, out);
            }
            Prop::And(a, b) | Prop::Or(a, b) => {
                let (prec, op) = if matches!(p, Prop::And(..)) {
                    (2, " /\\ ")
                } else {
                    (1, " \\/ ")
                };
                if parent > prec {
                    out.push('(');
                }
                go(test, a, prec, out);
                out.push_str(op);
                go(test, b, prec, out);
                if parent > prec {
                    out.push(')');
                }
            }
        }
    }
    let mut s = String::new();
    go(test, p, 0, &mut s);
    s
}

/// A state as herd prints it: `1:r0=1; x=2;`.
pub fn state_text(test: &Test, names: &[String], values: &[Value]) -> String {
    let mut s = String::new();
    for (n, v) in names.iter().zip(values) {
        s.push_str(&format!("{n}={}; ", crate::exec::value_text(test, *v)));
    }
    s.trim_end().to_string()
}
