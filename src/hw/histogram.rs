//! Final-state histograms and what they say against the model: sightings
//! per million, the 95 % upper bound 3/N on the rate of a state never seen
//! (the "rule of three"), reproducibility (a state seen at least
//! [`REPRODUCIBLE`] times), and the verdict `observed ⊆ allowed` or the
//! forbidden states seen. The allowed states come from the driver's check
//! of the plan's test (the same check `litmix run` does).

use super::Plan;
use crate::fast_hash::FastHash;
use crate::ir::outcome::{satisfies, term_name, value_text};
use crate::ir::{Term, Value};
use crate::verdict::CheckResult;
use serde_json::{Value as Json, json};
use std::collections::{BTreeMap, HashMap};

/// Sightings from which a state counts as reproducible.
pub const REPRODUCIBLE: u64 = 3;

/// Counts of final states over the instances run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Histogram {
    /// Instances run.
    pub instances: u64,
    /// Final state (values in the plan's `observed` order) → sightings.
    pub counts: BTreeMap<Vec<Value>, u64>,
}

impl Histogram {
    /// Adds `n` sightings of `state`.
    pub fn add(&mut self, state: Vec<Value>, n: u64) {
        *self.counts.entry(state).or_insert(0) += n;
        self.instances += n;
    }

    /// Adds another histogram's counts.
    pub fn merge(&mut self, other: &Histogram) {
        for (s, n) in &other.counts {
            *self.counts.entry(s.clone()).or_insert(0) += n;
        }
        self.instances += other.instances;
    }

    /// Decodes one launch's results: `outputs[i · plan.outputs + k]` (the
    /// registers each role copied back) and `finals[i · locations + j]`
    /// (memory after the launch), for `instances` instances.
    pub fn add_launch(&mut self, plan: &Plan, outputs: &[u32], finals: &[u32], instances: usize) {
        let nout = plan.outputs;
        let nloc = plan.locations.len();
        // Where each observed term's value comes from.
        enum Src {
            Out(usize),
            Mem(usize),
            Fixed(Value),
        }
        let srcs: Vec<Src> = plan
            .observed
            .iter()
            .map(|t| match t {
                Term::Reg { thread, reg } => {
                    let role = plan.role_of_thread_id(*thread);
                    match role {
                        Some(r) => match r.outputs.iter().position(|x| x == reg) {
                            Some(k) => Src::Out(r.first_output + k),
                            None => Src::Fixed(
                                r.address_regs
                                    .iter()
                                    .find(|(x, _)| x == reg)
                                    .map(|(_, l)| Value::Addr(*l))
                                    .unwrap_or(Value::Int(0)),
                            ),
                        },
                        None => Src::Fixed(Value::Int(0)),
                    }
                }
                Term::Loc(l) => Src::Mem(plan.locations.iter().position(|x| x == l).unwrap_or(0)),
                Term::Const(v) => Src::Fixed(*v),
            })
            .collect();
        // Count raw words first (one hash per instance, no allocation
        // unless the state is new), then convert each distinct state once.
        let mut local: HashMap<Vec<u32>, u64, FastHash> = HashMap::default();
        let mut key: Vec<u32> = Vec::with_capacity(srcs.len());
        for i in 0..instances {
            key.clear();
            key.extend(srcs.iter().map(|s| match s {
                Src::Out(k) => outputs[i * nout + k],
                Src::Mem(j) => finals[i * nloc + j],
                Src::Fixed(_) => 0,
            }));
            match local.get_mut(key.as_slice()) {
                Some(n) => *n += 1,
                None => {
                    local.insert(key.clone(), 1);
                }
            }
        }
        for (words, n) in local {
            let state = srcs
                .iter()
                .zip(words)
                .map(|(s, w)| match s {
                    Src::Fixed(v) => *v,
                    _ => Value::Int(i64::from(w as i32)),
                })
                .collect();
            self.add(state, n);
        }
    }
}

/// Sightings per million instances.
pub fn per_million(count: u64, instances: u64) -> f64 {
    if instances == 0 {
        0.0
    } else {
        count as f64 * 1e6 / instances as f64
    }
}

/// The 95 % upper bound on the rate (per million) of a state never seen
/// in `instances` independent trials: 3/N.
pub fn unseen_bound_per_million(instances: u64) -> f64 {
    if instances == 0 {
        f64::INFINITY
    } else {
        3e6 / instances as f64
    }
}

/// One state of a report.
#[derive(Clone, Debug, PartialEq)]
pub struct StateLine {
    /// Values in the plan's `observed` order.
    pub state: Vec<Value>,
    /// Sightings (0 for an allowed state never seen).
    pub count: u64,
    /// Whether the model allows it.
    pub allowed: bool,
    /// Whether it satisfies the condition's proposition.
    pub satisfies: bool,
}

/// The comparison of one test's hardware histogram with its model.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    /// Instances run.
    pub instances: u64,
    /// Every state seen, then the allowed states never seen.
    pub states: Vec<StateLine>,
    /// Sightings of forbidden states in all.
    pub forbidden_sightings: u64,
    /// The instances whose state satisfies the proposition.
    pub condition_sightings: u64,
}

impl Comparison {
    /// Whether every state seen is allowed.
    pub fn observed_within_allowed(&self) -> bool {
        self.states.iter().all(|s| s.allowed || s.count == 0)
    }

    /// The forbidden states seen.
    pub fn forbidden_seen(&self) -> impl Iterator<Item = &StateLine> {
        self.states.iter().filter(|s| !s.allowed && s.count > 0)
    }
}

/// Compares a histogram with the model's allowed states (`result`, the
/// driver's check of `plan.test`, whose states are over `plan.observed`).
pub fn compare(plan: &Plan, result: &CheckResult, hist: &Histogram) -> Comparison {
    let mut states = Vec::new();
    let mut forbidden = 0;
    let mut cond = 0;
    for (s, &n) in &hist.counts {
        let allowed = result.states.contains_key(s);
        let sat = satisfies(&plan.test, s);
        if !allowed {
            forbidden += n;
        }
        if sat {
            cond += n;
        }
        states.push(StateLine {
            state: s.clone(),
            count: n,
            allowed,
            satisfies: sat,
        });
    }
    // Most seen first; ties in state order.
    states.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.state.cmp(&b.state)));
    for s in result.states.keys() {
        if !hist.counts.contains_key(s) {
            states.push(StateLine {
                state: s.clone(),
                count: 0,
                allowed: true,
                satisfies: satisfies(&plan.test, s),
            });
        }
    }
    Comparison {
        instances: hist.instances,
        states,
        forbidden_sightings: forbidden,
        condition_sightings: cond,
    }
}

/// `1:r0=0; x=1;` for a state.
pub fn state_text(plan: &Plan, state: &[Value]) -> String {
    let mut s = String::new();
    for (t, v) in plan.observed.iter().zip(state) {
        s.push_str(&format!(
            "{}={}; ",
            term_name(&plan.test, t),
            value_text(&plan.test, *v)
        ));
    }
    s.trim_end().to_string()
}

/// The herd-like text block of a comparison.
pub fn text(plan: &Plan, model: &str, c: &Comparison, header: &str) -> String {
    let mut out = String::new();
    out.push_str(&format!("Test {} hw ({header})\n", plan.test.name));
    out.push_str(&format!(
        "Instances {} ; model {model}\n",
        group_digits(c.instances)
    ));
    let seen = c.states.iter().filter(|s| s.count > 0).count();
    out.push_str(&format!("States seen {seen}\n"));
    for s in c.states.iter().filter(|s| s.count > 0) {
        out.push_str(&format!(
            "{:>14} {:>12.3}/M  {}{}{}{}\n",
            group_digits(s.count),
            per_million(s.count, c.instances),
            if s.satisfies { "* " } else { "  " },
            state_text(plan, &s.state),
            if s.allowed { "" } else { "  FORBIDDEN" },
            if s.count < REPRODUCIBLE {
                "  (not reproducible: < 3)"
            } else {
                ""
            }
        ));
    }
    let unseen: Vec<&StateLine> = c.states.iter().filter(|s| s.count == 0).collect();
    if !unseen.is_empty() {
        out.push_str(&format!(
            "Allowed, never seen ({}; each < {:.4}/M at 95%)\n",
            unseen.len(),
            unseen_bound_per_million(c.instances)
        ));
        for s in unseen {
            out.push_str(&format!(
                "{:>14} {:>12}    {}{}\n",
                0,
                "",
                if s.satisfies { "* " } else { "  " },
                state_text(plan, &s.state)
            ));
        }
    }
    out.push_str(&format!(
        "Condition {} seen {} times ({:.3}/M)\n",
        match plan.test.condition.quantifier {
            crate::ir::Quantifier::Exists => "exists",
            crate::ir::Quantifier::NotExists => "~exists",
            crate::ir::Quantifier::Forall => "forall",
        },
        group_digits(c.condition_sightings),
        per_million(c.condition_sightings, c.instances)
    ));
    if c.observed_within_allowed() {
        out.push_str("Verdict observed ⊆ allowed\n");
    } else {
        out.push_str(&format!(
            "Verdict FORBIDDEN STATES SEEN: {} state(s), {} sightings (a hardware or model bug)\n",
            c.forbidden_seen().count(),
            group_digits(c.forbidden_sightings)
        ));
    }
    out
}

/// The `--json` object of a comparison (extra fields merged by the caller).
pub fn json(plan: &Plan, model: &str, c: &Comparison) -> Json {
    let states: Vec<Json> = c
        .states
        .iter()
        .map(|s| {
            let values: serde_json::Map<String, Json> = plan
                .observed
                .iter()
                .zip(&s.state)
                .map(|(t, v)| {
                    (
                        term_name(&plan.test, t),
                        Json::String(value_text(&plan.test, *v)),
                    )
                })
                .collect();
            json!({
                "state": values,
                "count": s.count,
                "per_million": per_million(s.count, c.instances),
                "allowed": s.allowed,
                "satisfies": s.satisfies,
                "reproducible": s.count >= REPRODUCIBLE,
                "bound_per_million_95": if s.count == 0 { Some(unseen_bound_per_million(c.instances)) } else { None },
            })
        })
        .collect();
    json!({
        "test": plan.test.name,
        "model": model,
        "instances": c.instances,
        "states": states,
        "condition_sightings": c.condition_sightings,
        "forbidden_sightings": c.forbidden_sightings,
        "verdict": if c.observed_within_allowed() { "observed-within-allowed" } else { "forbidden-seen" },
    })
}

/// `1234567` → `1,234,567`.
pub fn group_digits(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Reads back the histogram of a `hw run --json` object (its `states`
/// with their counts; allowed states never seen have count 0) for
/// `plan`, so saved hardware results can be judged again (`hw judge`).
pub fn from_json(plan: &Plan, obj: &Json) -> Result<Histogram, String> {
    let states = obj
        .get("states")
        .and_then(|s| s.as_array())
        .ok_or("no 'states' array")?;
    let mut h = Histogram::default();
    for s in states {
        let count = s
            .get("count")
            .and_then(|c| c.as_u64())
            .ok_or("a state without a 'count'")?;
        let values = s
            .get("state")
            .and_then(|v| v.as_object())
            .ok_or("a state without a 'state' object")?;
        let mut state = Vec::new();
        for t in &plan.observed {
            let name = term_name(&plan.test, t);
            let text = values
                .get(&name)
                .and_then(|v| v.as_str())
                .ok_or_else(|| format!("a state without '{name}'"))?;
            state.push(
                parse_value(plan, text).ok_or_else(|| format!("bad value '{text}' of {name}"))?,
            );
        }
        if count > 0 {
            h.add(state, count);
        }
    }
    if let Some(n) = obj.get("instances").and_then(|n| n.as_u64()) {
        if n < h.instances {
            return Err(format!(
                "'instances' is {n}, below the {} sightings",
                h.instances
            ));
        }
        h.instances = n;
    }
    Ok(h)
}

fn parse_value(plan: &Plan, text: &str) -> Option<Value> {
    if let Some(name) = text.strip_prefix('&') {
        return plan.test.location(name).map(Value::Addr);
    }
    text.parse::<i64>().ok().map(Value::Int)
}
