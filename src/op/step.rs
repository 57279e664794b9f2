//! Stepping through a machine by hand (`litmix step`): a session keeps the
//! path taken from the initial state, so a user (or the web playground) can
//! pick an enabled transition, undo, or replay a whole trace. The session
//! works on any [`Machine`]; what it shows is the plain [`StateView`].

use super::machine::{Machine, MachineError};
use super::view::{StateView, state_view};

/// A stepping session over one machine.
pub struct Stepper<'m, M: Machine> {
    machine: &'m M,
    /// States from the initial one to the current one (never empty).
    states: Vec<M::State>,
    /// Labels of the transitions taken, one fewer than `states`.
    taken: Vec<String>,
    /// Indices picked, as `pick` numbered them (a replayable trace).
    picks: Vec<usize>,
}

impl<'m, M: Machine> Stepper<'m, M> {
    /// A session at the machine's initial state.
    pub fn new(machine: &'m M) -> Self {
        Stepper {
            machine,
            states: vec![machine.initial()],
            taken: Vec::new(),
            picks: Vec::new(),
        }
    }

    fn current(&self) -> &M::State {
        self.states.last().expect("a session always has a state")
    }

    /// The view of the current state, enabled transitions numbered.
    pub fn view(&self) -> StateView {
        state_view(self.machine, self.current())
    }

    /// Takes enabled transition number `index`; an error (and no change)
    /// when there is no such transition.
    pub fn pick(&mut self, index: usize) -> Result<String, String> {
        let enabled = self.machine.enabled(self.current());
        let Some(t) = enabled.get(index) else {
            return Err(format!(
                "no transition {index}: {} enabled (0..{})",
                enabled.len(),
                enabled.len().saturating_sub(1)
            ));
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

    /// Goes back one step; false at the initial state.
    pub fn undo(&mut self) -> bool {
        if self.states.len() == 1 {
            return false;
        }
        self.states.pop();
        self.taken.pop();
        self.picks.pop();
        true
    }

    /// Restarts from the initial state and picks `trace` in turn; stops at
    /// the first index that is not enabled, with its error.
    pub fn replay(&mut self, trace: &[usize]) -> Result<(), String> {
        self.states.truncate(1);
        self.taken.clear();
        self.picks.clear();
        for (k, &i) in trace.iter().enumerate() {
            self.pick(i).map_err(|e| format!("step {}: {e}", k + 1))?;
        }
        Ok(())
    }

    /// Labels of the transitions taken so far.
    pub fn history(&self) -> &[String] {
        &self.taken
    }

    /// The picks so far, replayable with [`Stepper::replay`].
    pub fn picks(&self) -> &[usize] {
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
