//! Operational models as `--model` choices: run a machine's exploration on
//! a test and present it as a [`CheckResult`], so the herd block, `--json`,
//! exit codes and the conformance harness work unchanged.

use super::explore::{ExploreError, ExploreOptions, explore, replay};
use super::lostpop::LostPop;
use super::machine::{Machine, MachineError};
use super::view::state_view;
use crate::exec::{CheckError, CheckOptions, CheckResult, satisfies};
use crate::ir::Test;
use crate::verdict::{OpReport, OutcomeTrace, StateView};

/// The operational models `--model` accepts, with a description.
pub const OPERATIONAL: &[(&str, &str)] = &[
    (
        "lostpop",
        "LOST-POP operational model (seed 000 §4, App. A): x86, PTX and X86+PTX tests, explored exhaustively",
    ),
    (
        "lostpop-unreduced",
        "LOST-POP without the catch-up reduction (same outcomes, more states; for checking the reduction)",
    ),
];

/// Every operational model with its description: LOST-POP and the cache
/// machines.
pub fn operational_models() -> impl Iterator<Item = (&'static str, &'static str)> {
    OPERATIONAL
        .iter()
        .chain(super::rsp::judge::MODELS)
        .map(|(n, d)| (*n, *d))
}

/// Whether `name` is an operational model: LOST-POP or one of the GPU
/// cache machines of [`super::rsp::judge`].
pub fn is_operational(name: &str) -> bool {
    OPERATIONAL.iter().any(|(n, _)| *n == name) || super::rsp::judge::is_model(name)
}

/// Checks `test` with the operational model `name`.
pub fn check(test: &Test, name: &str, opts: &CheckOptions) -> Result<CheckResult, CheckError> {
    if super::rsp::judge::is_model(name) {
        return super::rsp::judge::check(test, name, opts);
    }
    match name {
        "lostpop" => {
            let m = LostPop::new(test, opts.unroll)?;
            run_machine(test, &m, opts, &Judging::new(opts))
        }
        "lostpop-unreduced" => {
            let m = LostPop::new(test, opts.unroll)?.without_catch_up();
            run_machine(test, &m, opts, &Judging::new(opts))
        }
        other => Err(CheckError::Limit(format!(
            "unknown operational model '{other}'"
        ))),
    }
}

/// A machine's own picture of a whole trace (e.g. the cache machine's
/// steps with cache snapshots, seed 001 Figs. 4 and 5); without one, a
/// trace is its transition labels.
pub type RenderTrace<M> = fn(&M, &[<M as Machine>::Transition]) -> Result<String, MachineError>;

/// How [`run_machine`] explores a machine and renders its traces.
pub struct Judging<M: Machine> {
    /// The explorer's limits (from `--max-states`, `--timeout`).
    pub explore: ExploreOptions,
    /// The machine's trace renderer, if it has one.
    pub render: Option<RenderTrace<M>>,
}

impl<M: Machine> Judging<M> {
    /// The explorer options for `opts` (`max_states`, `timeout` as a
    /// deadline from now), a progress spinner on a terminal, no renderer.
    pub fn new(opts: &CheckOptions) -> Self {
        Judging {
            explore: ExploreOptions {
                max_states: opts.max_states,
                progress: true,
                parallel: true,
                deadline: opts.timeout.map(|t| std::time::Instant::now() + t),
            },
            render: None,
        }
    }

    /// The same with the machine's own trace renderer.
    pub fn with_render(mut self, render: RenderTrace<M>) -> Self {
        self.render = Some(render);
        self
    }
}

/// Explores `m` (built for `test`) and reports like an axiomatic check:
/// the one judge loop of every operational model.
pub fn run_machine<M: Machine>(
    test: &Test,
    m: &M,
    opts: &CheckOptions,
    how: &Judging<M>,
) -> Result<CheckResult, CheckError> {
    let ex = explore(m, &how.explore).map_err(|e| match e {
        ExploreError::Limit(msg) => CheckError::Limit(msg),
        ExploreError::Machine(e) => CheckError::Limit(format!("{}: {e}", m.name())),
        ExploreError::Timeout { after, states } => CheckError::Timeout {
            after,
            candidates: 0,
            pruned: 0,
            states: Some(states),
        },
    })?;
    let mut res = CheckResult::new(test, m.name());
    res.candidates = ex.states;
    res.rf_nodes = ex.transitions;
    let mut traces = Vec::new();
    for (state, count) in &ex.final_states {
        let sat = satisfies(test, state);
        res.count_allowed(sat, *count);
        res.states.insert(state.clone(), *count);
        if (opts.trace || opts.keep_witnesses > 0)
            && let Some(tr) = ex.outcomes.get(state)
        {
            let failed =
                |e: MachineError| CheckError::Limit(format!("{}: replay failed: {e}", m.name()));
            let states = replay(m, tr).map_err(failed)?;
            let steps = tr.iter().zip(&states).map(|(t, s)| m.label(s, t)).collect();
            let last = states.last().cloned().unwrap_or_else(|| m.initial());
            // Only the traces `--trace` prints get the machine's picture.
            let text = match how.render {
                Some(render) if sat => Some(render(m, tr).map_err(failed)?),
                _ => None,
            };
            traces.push(OutcomeTrace {
                state: state.clone(),
                outcome: crate::report::state_text(test, &res.observed, state),
                satisfies: sat,
                steps,
                text,
                final_view: state_view(m, &last),
            });
        }
    }
    res.settle();
    res.elapsed = ex.elapsed;
    res.operational = Some(Box::new(OpReport {
        machine: m.name().to_string(),
        states: ex.states,
        transitions: ex.transitions,
        stuck: ex.stuck,
        reduced: ex.reduced,
        traces,
    }));
    Ok(res)
}

/// The `--trace` text: for each outcome the condition asks about (those
/// satisfying its proposition), one transition sequence reaching it; or a
/// line saying that none is reachable.
pub fn trace_text(test: &Test, r: &CheckResult) -> String {
    let Some(op) = &r.operational else {
        return String::new();
    };
    let mut out = String::new();
    let asked: Vec<&OutcomeTrace> = op.traces.iter().filter(|t| t.satisfies).collect();
    if asked.is_empty() {
        out.push_str(&format!(
            "Trace {}: no reachable final state of {} satisfies {} ({} states explored): forbidden\n",
            r.test,
            op.machine,
            crate::report::herd::condition_text(test),
            op.states
        ));
    }
    for t in asked {
        out.push_str(&format!(
            "Trace {} reaching {} ({} steps):\n",
            r.test,
            t.outcome,
            t.steps.len()
        ));
        match &t.text {
            Some(text) => out.push_str(text),
            None => {
                for (i, s) in t.steps.iter().enumerate() {
                    out.push_str(&format!("  {:3}. {s}\n", i + 1));
                }
            }
        }
    }
    out
}

/// Graphviz picture of a final state's order constraints: one cluster per
/// thread with its remaining requests, edges labelled with their scope.
pub fn dot_constraints(title: &str, view: &StateView) -> String {
    let q = |s: &str| s.replace('\\', "\\\\").replace('"', "\\\"");
    let mut out = format!(
        "digraph lostpop {{\n  label=\"{}\";\n  node [shape=box, fontname=monospace];\n",
        q(title)
    );
    for (i, line) in view.summary.iter().enumerate() {
        out.push_str(&format!(
            "  \"init{i}\" [label=\"{}\", style=dashed];\n",
            q(line)
        ));
    }
    for (k, t) in view.threads.iter().enumerate() {
        out.push_str(&format!(
            "  subgraph cluster_{k} {{\n    label=\"{} ({})\";\n",
            q(&t.name),
            q(&t.arch)
        ));
        for it in &t.items {
            out.push_str(&format!(
                "    \"{}\" [label=\"{}\\n{}\"];\n",
                q(&it.id),
                q(&it.text),
                q(&it.detail)
            ));
        }
        out.push_str("  }\n");
    }
    let init_names: Vec<String> = view
        .summary
        .iter()
        .map(|l| {
            l.strip_prefix("init ")
                .and_then(|r| r.split('=').next())
                .map(|n| format!("init {n}"))
                .unwrap_or_default()
        })
        .collect();
    let node = |n: &str| {
        init_names
            .iter()
            .position(|x| x == n)
            .map(|i| format!("init{i}"))
            .unwrap_or_else(|| n.to_string())
    };
    for c in &view.constraints {
        out.push_str(&format!(
            "  \"{}\" -> \"{}\" [label=\"{}\"];\n",
            q(&node(&c.from)),
            q(&node(&c.to)),
            q(&c.scope)
        ));
    }
    out.push_str("}\n");
    out
}
