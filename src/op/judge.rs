//! The one judge loop of every machine: run a machine's exploration on a
//! test and present it as a [`CheckResult`], so the herd block, `--json`,
//! exit codes and the conformance harness work unchanged. Which machine a
//! model name means is the driver's registry's business.

use super::explore::{ExploreError, ExploreOptions, explore, replay};
use super::machine::{Machine, MachineError};
use super::view::state_view;
use crate::ir::Test;
use crate::ir::outcome::satisfies;
use crate::verdict::{CheckError, CheckOptions, CheckResult};
use crate::verdict::{OpReport, OutcomeTrace};

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
                outcome: crate::ir::text::state_text(test, &res.observed, state),
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
