//! Why a check could not produce a verdict.

use crate::diag::Diagnostic;
use std::time::Duration;

/// Why a check could not produce a verdict.
#[derive(Debug)]
pub enum CheckError {
    /// The input or the model is wrong (points at a source position).
    Diagnostic(Diagnostic),
    /// A size limit was hit; the message names it and how to raise it.
    Limit(String),
    /// The test ran past its `--timeout`; the figures reached so far.
    Timeout {
        after: Duration,
        candidates: u64,
        pruned: u64,
        /// Set by operational models: the machine states explored (the
        /// candidate counts are then zero).
        states: Option<u64>,
    },
}

impl std::fmt::Display for CheckError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CheckError::Diagnostic(d) => write!(f, "{}", d.render()),
            CheckError::Limit(m) => write!(f, "limit exceeded: {m}"),
            CheckError::Timeout {
                after,
                states: Some(states),
                ..
            } => write!(
                f,
                "timeout: no answer after {:.1} s ({states} machine states explored; \
                 raise --timeout)",
                after.as_secs_f64()
            ),
            CheckError::Timeout {
                after,
                candidates,
                pruned,
                states: None,
            } => write!(
                f,
                "timeout: no answer after {:.1} s ({candidates} candidates judged, \
                 {pruned} partial candidates cut; raise --timeout)",
                after.as_secs_f64()
            ),
        }
    }
}

impl From<Diagnostic> for CheckError {
    fn from(d: Diagnostic) -> Self {
        CheckError::Diagnostic(d)
    }
}
