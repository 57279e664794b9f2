//! Final states and conditions: which terms a result observes, how they are
//! named and printed, and whether a final state satisfies the condition.

use super::{Prop, Term, Test, Value};

/// The terms a result reports: those of the condition, then `locations`.
pub fn observed_terms(test: &Test) -> Vec<Term> {
    let mut out: Vec<Term> = Vec::new();
    fn walk(p: &Prop, out: &mut Vec<Term>) {
        match p {
            Prop::True | Prop::False => {}
            Prop::Cmp(_, a, b) => {
                for t in [a, b] {
                    if !matches!(t, Term::Const(_)) && !out.contains(t) {
                        out.push(t.clone());
                    }
                }
            }
            Prop::Not(a) => walk(a, out),
            Prop::And(a, b) | Prop::Or(a, b) => {
                walk(a, out);
                walk(b, out);
            }
        }
    }
    walk(&test.condition.prop, &mut out);
    for t in &test.observed {
        if !out.contains(t) {
            out.push(t.clone());
        }
    }
    // herd prints registers (by thread) before memory locations.
    // (Keys borrowed, not copied: this runs once per judgement.)
    fn key<'t>(test: &'t Test, t: &'t Term) -> (u8, usize, &'t str) {
        match t {
            Term::Reg { thread, reg } => (0, *thread, reg.as_str()),
            Term::Loc(l) => (1, 0, test.locations[*l].name.as_str()),
            Term::Const(_) => (2, 0, ""),
        }
    }
    out.sort_by(|a, b| key(test, a).cmp(&key(test, b)));
    out
}

/// `1:r0` for registers, the location name for memory.
pub fn term_name(test: &Test, t: &Term) -> String {
    match t {
        Term::Reg { thread, reg } => format!("{thread}:{reg}"),
        Term::Loc(l) => test.locations[*l].name.clone(),
        Term::Const(v) => value_text(test, *v),
    }
}

/// Prints a value (`&x` style for addresses).
pub fn value_text(test: &Test, v: Value) -> String {
    match v {
        Value::Int(i) => i.to_string(),
        Value::Addr(l) => format!(
            "&{}",
            test.locations
                .get(l)
                .map(|l| l.name.as_str())
                .unwrap_or("?")
        ),
    }
}

pub fn state_lookup<'t>(observed: &'t [Term], state: &[Value]) -> Vec<(&'t Term, Value)> {
    observed.iter().zip(state.iter().copied()).collect()
}

pub fn eval_prop(p: &Prop, st: &[(&Term, Value)]) -> bool {
    let term = |t: &Term| -> Value {
        match t {
            Term::Const(v) => *v,
            _ => st
                .iter()
                .find(|(o, _)| *o == t)
                .map(|(_, v)| *v)
                .unwrap_or(Value::Int(0)),
        }
    };
    match p {
        Prop::True => true,
        Prop::False => false,
        Prop::Cmp(c, a, b) => c.eval(term(a), term(b)),
        Prop::Not(a) => !eval_prop(a, st),
        Prop::And(a, b) => eval_prop(a, st) && eval_prop(b, st),
        Prop::Or(a, b) => eval_prop(a, st) || eval_prop(b, st),
    }
}

/// Whether a final state (values in [`observed_terms`] order) satisfies
/// the test's proposition (for reporters marking the states a condition
/// asks about).
pub fn satisfies(test: &Test, state: &[Value]) -> bool {
    let observed = observed_terms(test);
    eval_prop(&test.condition.prop, &state_lookup(&observed, state))
}
