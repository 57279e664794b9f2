//! Operational judging: state machines and one generic exhaustive explorer.
//!
//! The axiomatic path (`exec` + `cat`) enumerates candidate executions and
//! asks a model which are allowed. The operational path runs a *machine*
//! instead: a transition system built from the program IR whose reachable
//! final states are exactly the outcomes the model allows.
//!
//! - [`machine`]: the [`Machine`] trait every operational model implements
//!   (initial state, enabled transitions, apply, final outcome, canonical
//!   key for hashing, optional reduction hint, a plain state view).
//! - [`explore`]: the one explorer: exhaustive breadth-first search over
//!   canonical states, rayon for wide frontiers, `--max-states`, a progress
//!   bar on a terminal, one shortest witness trace per reachable outcome.
//! - [`view`]: the serialisable state view shared by `litmix step` and the
//!   web playground.
//! - [`judge`]: operational models as `--model` choices (results shaped
//!   like axiomatic ones, `--trace`, DOT of order constraints).
//! - [`lostpop`]: the LOST-POP machine (seed 000).
//!
//! See docs/operational.md for the rules and the soundness argument.

pub mod explore;
pub mod judge;
pub mod lostpop;
pub mod machine;
pub mod rsp;
pub mod step;
pub mod view;

#[cfg(test)]
mod tests;

pub use crate::verdict::{ConstraintView, ItemView, StateView, ThreadView, TransitionView};
pub use crate::verdict::{OpReport, OutcomeTrace};
pub use explore::{Exploration, ExploreError, ExploreOptions, explore};
pub use machine::{Machine, MachineError};
pub use view::state_view;
