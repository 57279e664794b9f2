//! Stepping through a machine by hand (`litmix step` and the playground's
//! step view): a session keeps the path taken from the initial state, so a
//! user can pick an enabled transition, undo, or replay a whole trace. The
//! session works on any [`Machine`]; what it shows is the plain
//! [`StateView`]. The driver opens a session for an operational model by
//! name (`driver::open_session`) and replays a list of picks for both front
//! ends (`driver::replay_view`).

use super::machine::{Machine, MachineError};
use super::view::state_view;
use crate::verdict::StateView;

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
/// (so that the driver can pick one by model name at run time).
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
