//! Limits → engine options, in one place: the command line's flags and the
//! server's configured limits both become a [`Limits`], and only
//! [`Limits::options`] turns that into [`CheckOptions`].

use crate::verdict::CheckOptions;
use std::time::Duration;

/// The search limits of one check, whoever sets them.
#[derive(Clone, Debug)]
pub struct Limits {
    /// Times a backward jump may be taken on one path (`--unroll`).
    pub unroll: usize,
    /// Candidate executions judged before giving up.
    pub max_candidates: u64,
    /// Events on one thread path.
    pub max_events: usize,
    /// Paths per thread.
    pub max_paths: usize,
    /// Operational models: distinct machine states before giving up.
    pub max_states: usize,
    /// Wall-clock bound of one check (the engines stop at it themselves).
    pub timeout: Option<Duration>,
    /// Prune partial candidates with the model's monotone checks (and run
    /// `co`-binding models over the engine's own `co`); `--no-prune` turns
    /// both off. Never changes a result.
    pub prune: bool,
}

impl Default for Limits {
    fn default() -> Self {
        let d = CheckOptions::default();
        Limits {
            unroll: d.unroll,
            max_candidates: d.max_candidates,
            max_events: d.max_events,
            max_paths: d.max_paths,
            max_states: d.max_states,
            timeout: d.timeout,
            prune: d.prune,
        }
    }
}

impl Limits {
    /// A timeout in seconds as the command line takes it: negative, NaN
    /// or infinite values mean none.
    pub fn timeout_secs(secs: Option<f64>) -> Option<Duration> {
        secs.filter(|t| t.is_finite() && *t >= 0.0)
            .map(Duration::from_secs_f64)
    }

    /// The engine options for these limits (everything else at its default).
    pub fn options(&self) -> CheckOptions {
        CheckOptions {
            unroll: self.unroll,
            max_candidates: self.max_candidates,
            max_events: self.max_events,
            max_paths: self.max_paths,
            max_states: self.max_states,
            prune: self.prune,
            co_native: self.prune,
            timeout: self.timeout,
            ..CheckOptions::default()
        }
    }
}
