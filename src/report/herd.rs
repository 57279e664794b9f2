//! herd7-compatible result blocks.

use super::{prop_text, state_text};
use crate::ir::{Prop, Quantifier, Term, Test, Value};
use crate::verdict::CheckResult;

/// How closely to follow herd7's output.
#[derive(Clone, Copy, Debug, Default)]
pub struct HerdStyle {
    /// Exactly herd7's lines: `[x]` for memory locations, `not (...)`,
    /// `Undef` / `Flag *undef*`, and none of litmix's notes and warnings.
    pub identical: bool,
    /// Integers in hexadecimal (herd's `-hexa`).
    pub hexa: bool,
}

/// `exists (1:r0=1 /\ 1:r1=0)` etc.
pub fn condition_text(test: &Test) -> String {
    format!(
        "{} ({})",
        crate::ir::text::quantifier_text(test.condition.quantifier),
        prop_text(test, &test.condition.prop)
    )
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
    block_with(test, r, HerdStyle::default())
}

fn value_herd(test: &Test, v: Value, style: HerdStyle) -> String {
    match v {
        Value::Int(i) if style.hexa => {
            if i < 0 {
                format!("-0x{:x}", -(i as i128))
            } else {
                format!("0x{i:x}")
            }
        }
        _ => crate::ir::outcome::value_text(test, v),
    }
}

fn term_herd(test: &Test, t: &Term, style: HerdStyle) -> String {
    match t {
        Term::Loc(_) => format!("[{}]", crate::ir::outcome::term_name(test, t)),
        Term::Const(v) => value_herd(test, *v, style),
        _ => crate::ir::outcome::term_name(test, t),
    }
}

/// A proposition as herd7 prints it (`[x]=1`, `not (0:r0=1)`).
pub fn prop_herd(test: &Test, p: &Prop, style: HerdStyle) -> String {
    let term = |t: &Term| Ok::<_, std::convert::Infallible>(term_herd(test, t, style));
    match crate::ir::text::prop_text(p, crate::ir::text::PropStyle::HERD7, &term) {
        Ok(s) => s,
        Err(e) => match e {},
    }
}

/// The block, in the given style.
pub fn block_with(test: &Test, r: &CheckResult, style: HerdStyle) -> String {
    if !style.identical && !style.hexa {
        return block_litmix(test, r);
    }
    let kind = match r.quantifier {
        Quantifier::Exists => "Allowed",
        Quantifier::NotExists => "Forbidden",
        Quantifier::Forall => "Required",
    };
    let mut out = format!("Test {} {kind}\nStates {}\n", r.test, r.states.len());
    for state in r.states.keys() {
        let mut line = String::new();
        for (n, v) in r.observed.iter().zip(state) {
            let n = if n.contains(':') {
                n.clone()
            } else {
                format!("[{n}]")
            };
            line.push_str(&format!("{n}={}; ", value_herd(test, *v, style)));
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    let undef = r.flags.contains("undefined");
    out.push_str(if undef && style.identical {
        "Undef\n"
    } else if r.validated {
        "Ok\n"
    } else {
        "No\n"
    });
    out.push_str(&format!(
        "Witnesses\nPositive: {} Negative: {}\n",
        r.positive, r.negative
    ));
    for f in &r.flags {
        let f = if f == "undefined" {
            "*undef*"
        } else {
            f.as_str()
        };
        out.push_str(&format!("Flag {f}\n"));
    }
    let q = match test.condition.quantifier {
        Quantifier::Exists => "exists",
        Quantifier::NotExists => "~exists",
        Quantifier::Forall => "forall",
    };
    out.push_str(&format!(
        "Condition {q} ({})\n",
        prop_herd(test, &test.condition.prop, style)
    ));
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

/// litmix's herd-style block (with its notes and warnings).
fn block_litmix(test: &Test, r: &CheckResult) -> String {
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
    if r.barrier_deadlocks > 0 {
        out.push_str(&format!(
            "Warning: barrier-deadlock: in {} reads-from choice(s) some order of barrier arrivals leaves a thread waiting forever; those executions yield no final state\n",
            r.barrier_deadlocks
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
