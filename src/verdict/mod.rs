//! The verdict types every judge produces and every caller consumes: the
//! options of a check, its errors, its result and the report artefacts
//! (executions in reportable form, `--why` material, operational traces and
//! state views). Below both engines (`exec`, `op`) and the reporters: it
//! depends only on the IR (and the cat library's failure description).

mod error;
mod options;
mod result;
mod trace;
mod views;

pub use error::CheckError;
pub use options::{CheckOptions, Progress, StateFilter, StateSet};
pub use result::CheckResult;
pub use trace::{
    ConstraintView, ItemView, OpReport, OutcomeTrace, StateView, ThreadView, TransitionView,
};
pub use views::{AllowedWhy, EventView, ExecutionView, Forbidden, WHY_PATH, WHY_PREFIX, WhyReason};
