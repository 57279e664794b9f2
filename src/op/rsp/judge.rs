//! `rsp-cache` and `rsp-cache-nolock` as `--model` choices: explore the
//! cache machine on an `RSP` test and present the result as a
//! [`CheckResult`], so the herd block, `--json` and `check-mapping` work
//! as with an axiomatic model. `op::judge::check` routes these names here;
//! the machine itself knows nothing of this.

use super::{RspCache, RspOptions};
use crate::exec::{CheckError, CheckOptions, CheckResult};
use crate::ir::Test;
use crate::op::judge::{Judging, run_machine};

/// The machine's model names with a description.
pub const MODELS: &[(&str, &str)] = &[
    (
        "rsp-cache",
        "GPU cache machine of seed 001 §5 (RSP assembly tests), explored exhaustively",
    ),
    (
        "rsp-cache-nolock",
        "rsp-cache without cacheline locking: LK_L2/UL_L2 do nothing",
    ),
    (
        "rsp-cache-unreduced",
        "rsp-cache without its reductions (same outcomes, more states; for checking them)",
    ),
];

/// Whether `name` is one of [`MODELS`].
pub fn is_model(name: &str) -> bool {
    MODELS.iter().any(|(n, _)| *n == name)
}

/// Machine options for model `name` and check options `opts`.
pub fn options(name: &str, opts: &CheckOptions) -> RspOptions {
    RspOptions {
        l2_locking: name != "rsp-cache-nolock",
        reduce: name != "rsp-cache-unreduced",
        unroll: opts.unroll as u32,
    }
}

/// Explores `test` on the machine `name` through the one judge loop
/// ([`super::judge::run_machine`]), with the machine's Fig. 4/5-style
/// trace renderer.
pub fn check(test: &Test, name: &str, opts: &CheckOptions) -> Result<CheckResult, CheckError> {
    let m = machine(test, name, opts)?;
    run_machine(
        test,
        &m,
        opts,
        &Judging::new(opts).with_render(RspCache::render_trace),
    )
}

/// The machine `name` for `test`; what it cannot run is a diagnostic
/// pointing at the construct.
pub fn machine(test: &Test, name: &str, opts: &CheckOptions) -> Result<RspCache, CheckError> {
    RspCache::new(test, options(name, opts)).map_err(CheckError::Diagnostic)
}
