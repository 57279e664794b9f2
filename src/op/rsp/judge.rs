//! The cache machine as a judge: explore it on an `RSP` test and present
//! the result as a [`CheckResult`], so the herd block, `--json` and
//! `check-mapping` work as with an axiomatic model. The driver's registry
//! names its variants (`rsp-cache`, `rsp-cache-nolock`,
//! `rsp-cache-unreduced`) and picks their options; the machine itself knows
//! nothing of this.

use super::{RspCache, RspOptions};
use crate::ir::Test;
use crate::op::judge::{Judging, run_machine};
use crate::verdict::{CheckError, CheckOptions, CheckResult};

/// Explores `test` on the machine with options `machine` through the one
/// judge loop ([`run_machine`]), with the machine's Fig. 4/5-style trace
/// renderer. What the machine cannot run is a diagnostic pointing at the
/// construct.
pub fn check(
    test: &Test,
    machine: RspOptions,
    opts: &CheckOptions,
) -> Result<CheckResult, CheckError> {
    let m = RspCache::new(test, machine).map_err(CheckError::Diagnostic)?;
    run_machine(
        test,
        &m,
        opts,
        &Judging::new(opts).with_render(RspCache::render_trace),
    )
}
