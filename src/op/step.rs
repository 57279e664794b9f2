//! Stepping through a machine by hand (`litmix step` and the playground's
//! step view): a session keeps the path taken from the initial state, so a
//! user can pick an enabled transition, undo, or replay a whole trace. The
//! session works on any [`Machine`]; what it shows is the plain
//! [`StateView`]. [`open`] builds the session for an operational model by
//! name and [`replay_view`] is the one call both front ends make to replay
//! a list of picks.

use super::machine::{Machine, MachineError};
use super::view::state_view;
use crate::diag::Diagnostic;
use crate::ir::Test;
use crate::verdict::StateView;
use serde::Serialize;

/// A stepping session over one machine (which it owns).
pub struct Stepper<M: Machine> {
    machine: M,
    /// States from the initial one to the current one (never empty).
    states: Vec<M::State>,
    /// Labels of the transitions taken, one fewer than `states`.
    taken: Vec<String>,
    /// Indices picked, as `pick` numbered them (a replayable trace).
    picks: Vec<usize>,
}

impl<M: Machine> Stepper<M> {
    /// A session at the machine's initial state.
    pub fn new(machine: M) -> Self {
        let initial = machine.initial();
        Stepper {
            machine,
            states: vec![initial],
            taken: Vec::new(),
            picks: Vec::new(),
        }
    }

    fn current(&self) -> &M::State {
        self.states.last().expect("a session always has a state")
    }
}

/// What a stepping front end can do with a session, whatever the machine
/// (so that one can be chosen by model name at run time, see [`open`]).
pub trait Session {
    /// The machine's name (`lostpop`, `rsp-cache`).
    fn model(&self) -> &str;
    /// The view of the current state, enabled transitions numbered.
    fn view(&self) -> StateView;
    /// Takes enabled transition number `index`; an error (and no change)
    /// when there is no such transition. The label of the step taken.
    fn pick(&mut self, index: usize) -> Result<String, String>;
    /// Goes back one step; false at the initial state.
    fn undo(&mut self) -> bool;
    /// Restarts from the initial state and picks `trace` in turn; stops at
    /// the first index that is not enabled, with its error (the session is
    /// then at the state before that step).
    fn replay(&mut self, trace: &[usize]) -> Result<(), ReplayError>;
    /// Labels of the transitions taken so far.
    fn history(&self) -> &[String];
    /// The picks so far, replayable with [`Session::replay`].
    fn picks(&self) -> &[usize];
}

/// A pick that could not be replayed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplayError {
    /// Position of the failing pick in the list (0-based).
    pub at: usize,
    pub message: String,
}

impl std::fmt::Display for ReplayError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "step {}: {}", self.at + 1, self.message)
    }
}

impl<M: Machine> Session for Stepper<M> {
    fn model(&self) -> &str {
        self.machine.name()
    }

    fn view(&self) -> StateView {
        state_view(&self.machine, self.current())
    }

    fn pick(&mut self, index: usize) -> Result<String, String> {
        let enabled = self.machine.enabled(self.current());
        let Some(t) = enabled.get(index) else {
            return Err(if enabled.is_empty() {
                format!("no transition {index}: none is enabled")
            } else {
                format!(
                    "no transition {index}: {} enabled (0..{})",
                    enabled.len(),
                    enabled.len() - 1
                )
            });
        };
        let label = self.machine.label(self.current(), t);
        let next = self
            .machine
            .apply(self.current(), t)
            .map_err(|e: MachineError| e.to_string())?;
        self.states.push(next);
        self.taken.push(label.clone());
        self.picks.push(index);
        Ok(label)
    }

    fn undo(&mut self) -> bool {
        if self.states.len() == 1 {
            return false;
        }
        self.states.pop();
        self.taken.pop();
        self.picks.pop();
        true
    }

    fn replay(&mut self, trace: &[usize]) -> Result<(), ReplayError> {
        self.states.truncate(1);
        self.taken.clear();
        self.picks.clear();
        for (at, &i) in trace.iter().enumerate() {
            self.pick(i)
                .map_err(|message| ReplayError { at, message })?;
        }
        Ok(())
    }

    fn history(&self) -> &[String] {
        &self.taken
    }

    fn picks(&self) -> &[usize] {
        &self.picks
    }
}

/// Why a session could not be opened.
#[derive(Clone, Debug)]
pub enum OpenError {
    /// The model is not an operational one.
    NotOperational(String),
    /// The test uses a construct the machine cannot run (with its
    /// position).
    Diagnostic(Diagnostic),
}

impl std::fmt::Display for OpenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OpenError::NotOperational(m) => write!(
                f,
                "'{m}' is not an operational model (expected lostpop, lostpop-unreduced, rsp-cache, rsp-cache-nolock or rsp-cache-unreduced)"
            ),
            OpenError::Diagnostic(d) => f.write_str(&d.render()),
        }
    }
}

/// A session of the operational model `model` on `test`, at its initial
/// state; `unroll` bounds backward jumps as `--unroll` does.
pub fn open<'t>(
    test: &'t Test,
    model: &str,
    unroll: usize,
) -> Result<Box<dyn Session + 't>, OpenError> {
    if model == "lostpop" || model == "lostpop-unreduced" {
        let m = super::lostpop::LostPop::new(test, unroll).map_err(OpenError::Diagnostic)?;
        if model == "lostpop-unreduced" {
            return Ok(Box::new(Stepper::new(m.without_catch_up())));
        }
        return Ok(Box::new(Stepper::new(m)));
    }
    if super::rsp::judge::is_model(model) {
        let opts = crate::exec::CheckOptions {
            unroll,
            ..Default::default()
        };
        let m = super::rsp::RspCache::new(test, super::rsp::judge::options(model, &opts))
            .map_err(OpenError::Diagnostic)?;
        return Ok(Box::new(Stepper::new(m)));
    }
    Err(OpenError::NotOperational(model.to_string()))
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
    let mut s = open(test, model, unroll).map_err(StepError::Open)?;
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

/// The state view as text for a terminal.
pub fn render(v: &StateView) -> String {
    let mut out = String::new();
    for s in &v.summary {
        out.push_str(&format!("{s}\n"));
    }
    for t in &v.threads {
        out.push_str(&format!("{} ({})", t.name, t.arch));
        if !t.info.is_empty() {
            out.push_str(&format!(": {}", t.info.join("; ")));
        }
        out.push('\n');
        for it in &t.items {
            if it.text.starts_with(&it.id) {
                out.push_str(&format!("  {}", it.text));
            } else {
                out.push_str(&format!("  {} {}", it.id, it.text));
            }
            if !it.detail.is_empty() {
                out.push_str(&format!("  [{}]", it.detail));
            }
            out.push('\n');
        }
    }
    if !v.constraints.is_empty() {
        let cs: Vec<String> = v
            .constraints
            .iter()
            .map(|c| {
                if c.scope.is_empty() {
                    format!("{} -> {}", c.from, c.to)
                } else {
                    format!("{} -> {} @{}", c.from, c.to, c.scope)
                }
            })
            .collect();
        out.push_str(&format!("order: {}\n", cs.join(", ")));
    }
    if let Some(o) = &v.outcome {
        out.push_str(&format!("final: {}\n", o.join("; ")));
    }
    if v.transitions.is_empty() {
        out.push_str("no transition enabled\n");
    } else {
        out.push_str("enabled:\n");
        for t in &v.transitions {
            out.push_str(&format!("  [{}] {}\n", t.index, t.label));
        }
    }
    out
}
