//! The state-machine interface behind every operational model.

use crate::ir::Value;
use crate::verdict::StateView;
use std::fmt;
use std::hash::Hash;

/// A machine step that cannot be carried out (e.g. arithmetic on an
/// address in a register). The explorer stops with this message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MachineError(pub String);

impl fmt::Display for MachineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for MachineError {}

/// An operational memory model instantiated for one test.
///
/// A machine is built from the program IR by its own constructor (e.g.
/// `LostPop::new(&test)`), which rejects constructs outside the model with
/// a clear error; the trait then describes the transition system. The
/// explorer ([`super::explore`]) treats states as opaque values and only
/// ever uses the methods below, so a new machine needs no explorer change.
///
/// Contract the explorer relies on:
/// - [`Machine::apply`] is deterministic: the same state and transition give
///   the same successor;
/// - two states with equal [`Machine::canonical`] keys have the same
///   future (same enabled transitions up to renaming, same outcomes);
/// - the reachable state space is finite (every machine bounds loops).
pub trait Machine: Sync {
    /// A full machine state. Cloned once per successor.
    type State: Clone + Send + Sync + 'static;
    /// The canonical form of a state used for the visited set: equal keys
    /// mean equivalent states (e.g. request ids renumbered, removed
    /// requests dropped).
    type Key: Hash + Eq + Send + Sync + 'static;
    /// One transition (a step label with the data needed to apply it).
    type Transition: Clone + fmt::Debug + Send + Sync + 'static;

    /// Short name of the model (`lostpop`), used in reports.
    fn name(&self) -> &str;

    /// The initial state (nothing executed yet).
    fn initial(&self) -> Self::State;

    /// Every transition enabled in `state`, in a deterministic order. An
    /// empty list means the state is terminal.
    fn enabled(&self, state: &Self::State) -> Vec<Self::Transition>;

    /// The successor of `state` by `transition` (which must be one of
    /// [`Machine::enabled`]`(state)`).
    fn apply(
        &self,
        state: &Self::State,
        transition: &Self::Transition,
    ) -> Result<Self::State, MachineError>;

    /// `Some(values)` when `state` is final, i.e. it counts as an outcome:
    /// the values of the observed terms, in the order of
    /// [`crate::exec::observed_terms`]. `None` otherwise. A terminal state
    /// (no transition enabled) that is not final is a *stuck* state: the
    /// explorer counts it and reports no outcome for it. A final state may
    /// still have transitions enabled (e.g. environment steps of a cache
    /// machine); the explorer keeps exploring from it.
    fn outcome(&self, state: &Self::State) -> Option<Vec<Value>>;

    /// The canonical key of `state` for the visited set.
    fn canonical(&self, state: &Self::State) -> Self::Key;

    /// A one-line human description of `transition` taken in `state`, for
    /// traces and the step view (`propagate W x=1 (P0) to P1`).
    fn label(&self, state: &Self::State, transition: &Self::Transition) -> String;

    /// Optional reduction: indices into `enabled` (the result of
    /// [`Machine::enabled`] on `state`) of a non-empty subset whose
    /// exploration alone is enough to reach every outcome reachable from
    /// `state` (a *persistent* set in the partial-order-reduction sense:
    /// no transition outside it, nor any sequence of such transitions, can
    /// disable or be dependent on a transition in it, and the transitions
    /// in it do not change the outcome). The machine must argue this in
    /// its docs. The default, `None`, explores everything.
    fn reduce(&self, state: &Self::State, enabled: &[Self::Transition]) -> Option<Vec<usize>> {
        let _ = (state, enabled);
        None
    }

    /// A plain, serialisable picture of `state` for `litmix step` and the
    /// web playground: summary lines, items per thread, order constraints.
    /// Leave [`StateView::transitions`] empty; [`super::state_view`] fills
    /// it from [`Machine::enabled`] and [`Machine::label`].
    fn view(&self, state: &Self::State) -> StateView;
}
