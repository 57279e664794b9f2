//! Stepping through an operational model by hand: the session for a model
//! name, and the one replay call `litmix step --replay` and the
//! playground's `POST /api/step` make.

use super::registry::OpenError;
use crate::ir::Test;
use crate::op::step::{ReplayError, Session, render};
use crate::verdict::StateView;
use serde::Serialize;

/// A session of the operational model `model` on `test`, at its initial
/// state; `unroll` bounds backward jumps as `--unroll` does.
pub fn open_session<'t>(
    test: &'t Test,
    model: &str,
    unroll: usize,
) -> Result<Box<dyn Session + 't>, OpenError> {
    match super::registry::machine(model) {
        Some(m) => (m.open)(test, unroll).map_err(OpenError::Diagnostic),
        None => Err(OpenError::NotOperational(model.to_string())),
    }
}

/// The state reached by replaying `picks` from the initial state: what
/// `litmix step --replay` shows and what the playground's `POST /api/step`
/// answers.
#[derive(Clone, Debug, Serialize)]
pub struct Replayed {
    /// The machine's name.
    pub model: String,
    /// The picks taken (all of them when `error` is `None`).
    pub picks: Vec<usize>,
    /// Labels of the transitions taken, one per pick.
    pub history: Vec<String>,
    /// The state after them, its enabled transitions numbered for the next
    /// pick.
    pub view: StateView,
    /// The same as `litmix step` prints it ([`render`]).
    pub text: String,
}

/// Opens `model` on `test` and replays `picks`. A pick that is not enabled
/// is an error naming its position.
pub fn replay_view(
    test: &Test,
    model: &str,
    unroll: usize,
    picks: &[usize],
) -> Result<Replayed, StepError> {
    let mut s = open_session(test, model, unroll).map_err(StepError::Open)?;
    s.replay(picks).map_err(StepError::Pick)?;
    let view = s.view();
    Ok(Replayed {
        model: s.model().to_string(),
        picks: s.picks().to_vec(),
        history: s.history().to_vec(),
        text: render(&view),
        view,
    })
}

/// Why [`replay_view`] failed.
#[derive(Clone, Debug)]
pub enum StepError {
    Open(OpenError),
    Pick(ReplayError),
}

impl std::fmt::Display for StepError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StepError::Open(e) => e.fmt(f),
            StepError::Pick(e) => e.fmt(f),
        }
    }
}
