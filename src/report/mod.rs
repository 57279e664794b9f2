//! Reporters: herd7-style text, JSON lines, Graphviz DOT, and `--why`
//! explanations. Each takes a parsed test and its [`crate::verdict::CheckResult`].

pub mod dot;
pub mod herd;
pub mod json;
pub mod trace;
pub mod why;

use crate::ir::{Prop, Term, Test};
use crate::verdict::EventView;

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
        .map(|v| format!("={}", crate::ir::outcome::value_text(test, v)))
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

/// Prints a proposition in herd syntax (`1:r0=1 /\ x=2`).
pub fn prop_text(test: &Test, p: &Prop) -> String {
    let term = |t: &Term| Ok::<_, std::convert::Infallible>(crate::ir::outcome::term_name(test, t));
    match crate::ir::text::prop_text(p, crate::ir::text::PropStyle::HERD, &term) {
        Ok(s) => s,
        Err(e) => match e {},
    }
}

pub use crate::ir::text::state_text;
