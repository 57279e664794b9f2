//! A plain, serialisable view of a machine state, shared by `litmix step`
//! and the web playground.

use super::machine::Machine;
use crate::verdict::{StateView, TransitionView};

/// The full view of `state`: the machine's picture plus its enabled
/// transitions with their labels.
pub fn state_view<M: Machine>(machine: &M, state: &M::State) -> StateView {
    let mut v = machine.view(state);
    v.transitions = machine
        .enabled(state)
        .iter()
        .enumerate()
        .map(|(index, t)| TransitionView {
            index,
            label: machine.label(state, t),
        })
        .collect();
    v
}
