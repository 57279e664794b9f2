//! The architecture-specific parts of LOST-POP: the order condition, the
//! scope meet and the predecessor rule (seed 000 §5, Appendix A.5).

use super::types::{Kind, LpArch, Req, Sem};

/// Which reading of A.5.2's scope meet a machine uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Meet {
    /// The seed as written: a later release's scope comes first.
    #[default]
    ReleaseFirst,
    /// The `acquire-meet` variant: an earlier acquire's scope comes first
    /// (docs/known-differences.md, weaker case 3).
    AcquireFirst,
    /// The `scope-join` variant: an earlier acquire and a later release
    /// order at the wider of their two scopes (their union, scopes being
    /// nested); other pairs as written (docs/known-differences.md, weaker
    /// case 3).
    Join,
}

/// The scope meet `a ∧ b` of PTX (Appendix A.5.2), `a` the earlier
/// request: the later one's scope if it is a release, the earlier one's if
/// it is an acquire, else the smaller (intersection, scopes being nested).
/// With [`Meet::AcquireFirst`] the acquire's case is checked first; with
/// [`Meet::Join`] an acquire before a release takes both scopes.
pub fn meet(a: &Req, b: &Req, how: Meet) -> u64 {
    if how == Meet::Join && a.sem.acq() && b.sem.rel() {
        a.scope | b.scope
    } else if how == Meet::AcquireFirst && a.sem.acq() {
        a.scope
    } else if b.sem.rel() {
        b.scope
    } else if a.sem.acq() {
        a.scope
    } else {
        a.scope & b.scope
    }
}

/// The order condition of thread `t` (architecture `arch`): the scope of
/// the constraint `a -> b` it adds, if any. `b` is a request of `t`; `a` is
/// an earlier request of `t` or, with `a_pred`, a write from another thread
/// that is a predecessor at `t`. `all` is the system scope.
pub fn order(
    arch: LpArch,
    a: &Req,
    b: &Req,
    t: u32,
    a_pred: bool,
    all: u64,
    how: Meet,
) -> Option<u64> {
    match arch {
        LpArch::X86 => x86_order(a, b, a_pred).then_some(all),
        LpArch::Ptx => ptx_order(a, b, t, a_pred, all, how),
    }
}

/// x86-TSO (§5, A.5.1): `R + pred -> R/W` and `W -> W` always; `W -> R`
/// for the same address, through an MFENCE, or into/out of a locked RMW
/// (an RMW is a read and a write, so it is ordered with everything).
fn x86_order(a: &Req, b: &Req, a_pred: bool) -> bool {
    if a_pred || a.read_like() || a.kind == Kind::Fence || b.kind == Kind::Fence {
        return true;
    }
    // `a` is a plain write of this thread.
    match b.kind {
        Kind::Write | Kind::Rmw => true,
        Kind::Read => a.loc == b.loc,
        Kind::Fence => true,
    }
}

/// PTX (A.5.2): the edge is added at `s = a ∧ b` when the scopes match
/// (`{a.thread, t} ⊆ s`) and one of the six rules holds. Fences are split
/// into halves: an acquire half (`R -> F -> R/W`), a release half
/// (`R/W + pred -> F -> W`), an sc fence orders everything.
fn ptx_order(a: &Req, b: &Req, t: u32, a_pred: bool, all: u64, how: Meet) -> Option<u64> {
    let s = meet(a, b, how);
    let need = (1u64 << t) | (1u64 << a.thread().min(63));
    if s & need != need {
        return None;
    }
    let a_fence = a.kind == Kind::Fence;
    let b_fence = b.kind == Kind::Fence;
    // Rule 2 (same-address reads stay in order) keeps read-read coherence
    // (§4.1: "same-address read-to-read orderings are also preserved"):
    // it is an order of the location, not of the accesses' strength, so it
    // holds at system scope even for weak reads (whose own scope is the
    // thread alone, which would make the edge stall nothing).
    if !a_pred && a.read_like() && b.read_like() && a.loc == b.loc && !a_fence && !b_fence {
        return Some(all);
    }
    let ok = if a_pred {
        // Rule 5: a release (request or fence half) waits for predecessors;
        // so does an sc fence.
        b.sem.rel()
    } else {
        (a_fence && (b_fence || a.sem == Sem::Sc))
            || (b_fence && b.sem == Sem::Sc)
            // Rule 3: an acquire orders everything after it.
            || a.sem.acq()
            // Rule 4: an acquire waits for earlier reads.
            || (b.sem.acq() && a.read_like())
            // Rule 5: a release waits for everything earlier.
            || b.sem.rel()
            // Rule 6: a release orders later writes.
            || (a.sem.rel() && (b.writes() || (b_fence && b.sem.rel())))
    };
    ok.then_some(s)
}

/// Whether write `w`, ordered before read `r` of thread `t`, becomes a
/// predecessor at `t`: always on x86; on PTX when the scopes match.
pub fn makes_pred(arch: LpArch, w: &Req, r: &Req, t: u32, how: Meet) -> bool {
    match arch {
        LpArch::X86 => true,
        LpArch::Ptx => {
            let s = meet(w, r, how);
            let need = (1u64 << t) | (1u64 << w.thread().min(63));
            s & need == need
        }
    }
}
