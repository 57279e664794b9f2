//! LOST-POP (seed 000 §4, §5, Appendix A): requests that propagate thread by
//! thread, order constraints labelled with scopes, predecessors for
//! cumulative orderings, and stalling-only fences. One machine serves x86,
//! PTX and compound X86+PTX tests: each thread keeps its own architecture,
//! which decides only the order constraints its own requests get
//! ([`order`]), and whether an incoming write becomes a predecessor there.
//!
//! Reading of the rules (docs/operational.md spells out every choice):
//! - *accept* `r` at `t`: edges `r' -> r` (system scope) from every active
//!   memory request `r'` already propagated to `t` with the same address,
//!   one of them a write; and `r' -> r` at the architecture's scope meet
//!   from every `r'` of `t` or predecessor at `t` the order condition picks.
//! - *propagate* `r` to `t`: blocked by an edge `r' -> r` at scope `s` when
//!   `r'` is of `r`'s thread (or a predecessor there) and has not reached
//!   every thread of `s` (a fence counts as reached once all its incoming
//!   edges are), or when `r'` is of another thread and has not reached `t`.
//!   Then edges `r -> r'` to `t`'s own same-address requests not yet at
//!   `r`'s thread; a write ordered before a read of `t` this way becomes a
//!   predecessor at `t` (PTX: when the scopes match) and is ordered before
//!   `t`'s requests after that read as the order condition says.
//! - *satisfy* `r` with `w`: same address, same propagation sets, `w -> r`,
//!   no same-address request between them; the read is removed (an RMW
//!   stays as a write with its new value; a failing CAS is removed like a
//!   read).
//! - Fences are requests that never propagate; they stall through the
//!   edges into and out of them. A PTX `acq_rel` fence is an acquire half
//!   and a release half.
//!
//! Register dependencies: a request is accepted once the registers it uses
//! (address, stored value, RMW operand) are known, i.e. the reads giving
//! them are satisfied; branches wait the same way. Local instructions run
//! as soon as their inputs are known (they touch only the thread's own
//! registers, so running them eagerly loses no behaviour).

mod build;
mod catch_up;
mod machine;
mod order;

pub use order::Meet;
mod reduce;
mod render;
mod speculate;
mod types;

pub use machine::LostPop;

use crate::diag::Diagnostic;
use crate::ir::Test;
use crate::verdict::{CheckError, CheckOptions, CheckResult};

/// LOST-POP's variants (`--variant NAME`), with what each changes.
pub const VARIANTS: &[(&str, &str)] = &[
    (
        "acquire-meet",
        "lostpop: A.5.2's scope meet takes an earlier acquire's scope before a later release's (docs/known-differences.md, weaker case 3)",
    ),
    (
        "scope-join",
        "lostpop: A.5.2's scope meet of an earlier acquire and a later release is the wider of their scopes (docs/known-differences.md, weaker case 3)",
    ),
];

/// How a LOST-POP machine is built: its reductions and its readings.
#[derive(Clone, Copy, Debug, Default)]
pub struct Build {
    /// No reductions beyond accepts (`lostpop-unreduced`).
    pub unreduced: bool,
    /// The reading of A.5.2's scope meet (`--variant acquire-meet`,
    /// `--variant scope-join`; the seed's printed order by default).
    pub meet: Meet,
}

impl Build {
    /// The build for the variants given (`--variant acquire-meet`).
    pub fn with_variants(unreduced: bool, variants: &[String]) -> Build {
        Build {
            unreduced,
            // `scope-join` wins when both variants are given.
            meet: if variants.iter().any(|v| v == "scope-join") {
                Meet::Join
            } else if variants.iter().any(|v| v == "acquire-meet") {
                Meet::AcquireFirst
            } else {
                Meet::ReleaseFirst
            },
        }
    }
}

/// The machine for `test`, built as `build` says.
pub fn machine(test: &Test, unroll: usize, build: Build) -> Result<LostPop<'_>, Diagnostic> {
    let mut m = LostPop::new(test, unroll)?;
    if build.unreduced {
        m = m.without_catch_up();
    }
    Ok(m.with_meet(build.meet))
}

/// LOST-POP as a judge: explores `test` (with the catch-up reduction
/// unless `build.unreduced`, docs/operational.md) through the one judge
/// loop.
pub fn judge(test: &Test, opts: &CheckOptions, build: Build) -> Result<CheckResult, CheckError> {
    let m = machine(test, opts.unroll, build)?;
    super::judge::run_machine(test, &m, opts, &super::judge::Judging::new(opts))
}
pub use types::{LpState, LpTransition};
