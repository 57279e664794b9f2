//! herd7-compatible result blocks.

use super::{prop_text, state_text};
use crate::exec::CheckResult;
use crate::ir::{Quantifier, Test};

/// `exists (1:r0=1 /\ 1:r1=0)` etc.
pub fn condition_text(test: &Test) -> String {
    let q = match test.condition.quantifier {
        Quantifier::Exists => "exists",
        Quantifier::NotExists => "~exists",
        Quantifier::Forall => "forall",
    };
    format!("{q} ({})", prop_text(test, &test.condition.prop))
}

/// A flag raised by an allowed execution makes the program undefined (a
/// data race in C/OpenCL): the line saying so, or `None` without flags.
pub fn undefined_note(r: &CheckResult) -> Option<String> {
    if r.flags.is_empty() {
        return None;
    }
    let names: Vec<&str> = r.flags.iter().map(String::as_str).collect();
    Some(format!(
        "Undefined behaviour (flag {}): raised by an allowed execution, so the program may behave arbitrarily",
        names.join(", flag ")
    ))
}

/// The block herd7 prints for one test.
pub fn block(test: &Test, r: &CheckResult) -> String {
    let kind = match r.quantifier {
        Quantifier::Exists => "Allowed",
        Quantifier::NotExists => "Forbidden",
        Quantifier::Forall => "Required",
    };
    let mut out = format!("Test {} {kind}\nStates {}\n", r.test, r.states.len());
    for state in r.states.keys() {
        out.push_str(&state_text(test, &r.observed, state));
        out.push('\n');
    }
    out.push_str(if r.validated { "Ok\n" } else { "No\n" });
    out.push_str(&format!(
        "Witnesses\nPositive: {} Negative: {}\n",
        r.positive, r.negative
    ));
    for f in &r.flags {
        out.push_str(&format!("Flag {f}\n"));
    }
    if let Some(note) = undefined_note(r) {
        out.push_str(&note);
        out.push('\n');
    }
    if r.cut_paths > 0 {
        out.push_str(&format!(
            "Warning: {} thread path(s) exceeded the unroll bound and were not explored\n",
            r.cut_paths
        ));
    }
    if r.cyclic > 0 {
        out.push_str(&format!(
            "Warning: {} reads-from choice(s) had values depending on themselves (out of thin air) and were discarded\n",
            r.cyclic
        ));
    }
    out.push_str(&format!("Condition {}\n", condition_text(test)));
    let obs = if r.positive == 0 {
        "Never"
    } else if r.negative == 0 {
        "Always"
    } else {
        "Sometimes"
    };
    out.push_str(&format!(
        "Observation {} {obs} {} {}\n",
        r.test, r.positive, r.negative
    ));
    out.push_str(&format!("Time {} {:.2}\n", r.test, r.elapsed.as_secs_f64()));
    out
}

/// The `--stats` line of one result: candidates built, partial candidates
/// judged and cut, consistent (allowed) candidates, `with` orders visited
/// and cut, time.
pub fn stats(r: &CheckResult) -> String {
    format!(
        "Stats {} candidates {} consistent {} partial {} pruned {} with-orders {} with-pruned {} time {:.3}s",
        r.test,
        r.candidates,
        r.positive + r.negative,
        r.partial,
        r.pruned,
        r.with_nodes,
        r.with_pruned,
        r.elapsed.as_secs_f64()
    )
}
