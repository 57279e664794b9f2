//! Operational judging's artefacts: witness traces per outcome, exploration
//! figures, and a plain, serialisable view of a machine state (shared by
//! `litmix step`, the playground and the reporters).

use crate::ir::Value;
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

/// One reachable outcome with a transition sequence reaching it.
#[derive(Clone, Debug, Serialize)]
pub struct OutcomeTrace {
    /// Values of the observed terms.
    #[serde(skip)]
    pub state: Vec<Value>,
    /// `1:r0=1; x=2`-style text of the state.
    pub outcome: String,
    /// Whether the state satisfies the condition's proposition.
    pub satisfies: bool,
    /// Transition labels, in order.
    pub steps: Vec<String>,
    /// The machine's own rendering of the trace (steps with state
    /// snapshots), for outcomes satisfying the condition when the machine
    /// has a renderer ([`Judging::render`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The final state reached (order constraints for `--dot`).
    pub final_view: StateView,
}

/// What an exploration adds to a [`CheckResult`].
#[derive(Clone, Debug, Serialize)]
pub struct OpReport {
    pub machine: String,
    /// Distinct machine states visited.
    pub states: u64,
    /// Transitions applied.
    pub transitions: u64,
    /// Terminal states that are not final (e.g. cut by the unroll bound).
    pub stuck: u64,
    /// States where the machine's reduction cut the enabled transitions.
    pub reduced: u64,
    /// One trace per reachable outcome (with [`CheckOptions::trace`] or
    /// witnesses asked for).
    pub traces: Vec<OutcomeTrace>,
}
