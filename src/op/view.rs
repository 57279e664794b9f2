//! A plain, serialisable view of a machine state, shared by `litmix step`
//! and the web playground.

use super::machine::Machine;
use serde::Serialize;

/// One request (or other item) held by a thread.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ItemView {
    /// Stable id within the state (`r3`).
    pub id: String,
    /// What it is (`W x=1 rel.gpu`).
    pub text: String,
    /// Machine-specific details (`propagated to P0,P1; satisfied`).
    pub detail: String,
}

/// One thread's part of the state.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ThreadView {
    /// `P0`.
    pub name: String,
    /// Architecture or kind of the thread (`X86`, `PTX`).
    pub arch: String,
    /// Lines about the thread itself (next instruction, registers).
    pub info: Vec<String>,
    /// The thread's items (requests, cache lines...).
    pub items: Vec<ItemView>,
}

/// An order constraint `from -> to` at a scope.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ConstraintView {
    pub from: String,
    pub to: String,
    /// Scope label (`sys`, `gpu 0`); empty for unscoped machines.
    pub scope: String,
}

/// An enabled transition, numbered as [`Machine::enabled`] lists it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct TransitionView {
    pub index: usize,
    pub label: String,
}

/// Everything a stepping UI shows about one state.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct StateView {
    /// Free-form summary lines (memory, counters).
    pub summary: Vec<String>,
    pub threads: Vec<ThreadView>,
    pub constraints: Vec<ConstraintView>,
    pub transitions: Vec<TransitionView>,
    /// The outcome when the state is final (`0:r0=1` per observed term).
    pub outcome: Option<Vec<String>>,
}

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
