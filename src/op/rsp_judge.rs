//! `rsp-cache` and `rsp-cache-nolock` as `--model` choices: explore the
//! cache machine on an `RSP` test and present the result as a
//! [`CheckResult`], so the herd block, `--json` and `check-mapping` work
//! as with an axiomatic model. `op::judge::check` routes these names here;
//! the machine itself knows nothing of this.

use super::explore::{ExploreError, ExploreOptions, explore};
use super::rsp_cache::{RspCache, RspOptions};
use crate::exec::{CheckError, CheckOptions, CheckResult, satisfies};
use crate::ir::Test;

/// The machine's model names with a description.
pub const MODELS: &[(&str, &str)] = &[
    (
        "rsp-cache",
        "GPU cache machine of seed 001 §5 (RSP assembly tests), explored exhaustively",
    ),
    (
        "rsp-cache-nolock",
        "rsp-cache without cacheline locking: LK_L2/UL_L2 do nothing",
    ),
];

/// Whether `name` is one of [`MODELS`].
pub fn is_model(name: &str) -> bool {
    MODELS.iter().any(|(n, _)| *n == name)
}

/// Machine options for model `name` and check options `opts`.
pub fn options(name: &str, opts: &CheckOptions) -> RspOptions {
    RspOptions {
        l2_locking: name != "rsp-cache-nolock",
        unroll: opts.unroll as u32,
        ..RspOptions::default()
    }
}

/// What the exploration measured, beside the [`CheckResult`].
#[derive(Clone, Debug)]
pub struct RspRun {
    pub states: u64,
    pub transitions: u64,
    pub stuck: u64,
    /// States where a reduction cut the enabled transitions.
    pub reduced: u64,
    /// Per reachable outcome satisfying the condition, a machine trace in
    /// the style of seed 001 Figs. 4 and 5 (the first one only).
    pub trace: Option<String>,
}

/// Explores `test` on the machine `name`.
pub fn check(
    test: &Test,
    name: &str,
    opts: &CheckOptions,
) -> Result<(CheckResult, RspRun), CheckError> {
    let m = RspCache::new(test, options(name, opts)).map_err(|e| {
        CheckError::Limit(format!(
            "{}: {e}",
            test.file
                .as_ref()
                .map(|p| p.display().to_string())
                .unwrap_or_else(|| test.name.clone())
        ))
    })?;
    let ex = explore(
        &m,
        &ExploreOptions {
            max_states: 5_000_000,
            progress: true,
            parallel: true,
        },
    )
    .map_err(|e| match e {
        ExploreError::Limit(m) => CheckError::Limit(m),
        ExploreError::Machine(e) => CheckError::Limit(format!("{name}: {e}")),
    })?;
    let mut res = CheckResult::new(test, name);
    res.candidates = ex.states;
    res.rf_nodes = ex.transitions;
    res.elapsed = ex.elapsed;
    let mut trace = None;
    for (state, count) in &ex.final_states {
        let sat = satisfies(test, state);
        res.count_allowed(sat, *count);
        if sat
            && trace.is_none()
            && let Some(tr) = ex.outcomes.get(state)
        {
            trace = Some(
                m.render_trace(tr)
                    .map_err(|e| CheckError::Limit(format!("{name}: {e}")))?,
            );
        }
        res.states.insert(state.clone(), *count);
    }
    res.settle();
    Ok((
        res,
        RspRun {
            states: ex.states,
            transitions: ex.transitions,
            stuck: ex.stuck,
            reduced: ex.reduced,
            trace,
        },
    ))
}
