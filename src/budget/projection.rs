//! One rule for giving up a search under a timeout, shared by every search
//! of the engines (thread paths, barrier arrival orders, reads-from and
//! coherence, the cat interpreter's `with` orders): once a quarter of the
//! timeout is spent, a search projects when it would end from the share of
//! its tree it has covered, and stops with a limit message when that is
//! over the timeout by [`margin`]. Below both `cat` and `exec`.

use std::time::{Duration, Instant};

/// A search projects its time once the test has used this share of its
/// timeout.
pub const PROJECT_AFTER: f64 = 0.25;

/// The last share of a timeout in which [`margin`] is 1.
const LATE: f64 = 0.8;

/// How many times over the timeout (`limit` s) a projection must be to
/// stop a search `elapsed` s into it: 1.5 before the last fifth of the
/// timeout (a projection from a small share of a tree is rough, and a
/// search that would finish in time must not be refused), 1.0 in the last
/// fifth: the projection then rests on most of the time and the search
/// times out anyway unless it is wrong, and a limit message naming the
/// projected time says more than a bare timeout.
pub fn margin(elapsed: f64, limit: f64) -> f64 {
    if elapsed >= limit * LATE { 1.0 } else { 1.5 }
}

/// A test's timeout, counted from its start.
#[derive(Clone, Copy, Debug)]
pub struct TimeBudget {
    pub start: Instant,
    pub timeout: Duration,
}

impl TimeBudget {
    /// Seconds since the start and the timeout in seconds.
    pub fn elapsed_limit(&self) -> (f64, f64) {
        (
            self.start.elapsed().as_secs_f64(),
            self.timeout.as_secs_f64(),
        )
    }

    /// The projected end (seconds from the test's start) of a search begun
    /// at `began` with `covered` (0..1) of its tree covered, when it is over
    /// the timeout by the margin: the search must stop. `cap` bounds the
    /// growth factor of the search's own time (it ends at a size limit
    /// `cap` times its current size); with an infinite cap, a search with
    /// nothing covered projects only late in the timeout.
    pub fn over(&self, began: Instant, covered: f64, cap: f64) -> Option<f64> {
        let (elapsed, limit) = self.elapsed_limit();
        let margin = margin(elapsed, limit);
        let factor = if cap.is_infinite() {
            if covered <= 0.0 && margin > 1.0 {
                return None;
            }
            1.0 / covered.max(1e-9)
        } else if covered > 0.0 {
            cap.min(1.0 / covered)
        } else {
            cap
        };
        let own = began.elapsed().as_secs_f64();
        let projected = elapsed - own + own * factor;
        (elapsed > limit * PROJECT_AFTER && projected > limit * margin).then_some(projected)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_margin_drops_to_one_in_the_last_fifth() {
        assert_eq!(margin(0.5, 3.0), 1.5);
        assert_eq!(margin(2.3, 3.0), 1.5);
        assert_eq!(margin(2.5, 3.0), 1.0);
    }

    #[test]
    fn a_search_with_nothing_covered_projects_only_late() {
        let long_ago = Instant::now() - Duration::from_millis(500);
        let b = TimeBudget {
            start: long_ago,
            timeout: Duration::from_secs(1),
        };
        // Half the timeout spent, nothing covered, no size cap: not yet.
        assert_eq!(b.over(long_ago, 0.0, f64::INFINITY), None);
        // A tenth covered in half the timeout: about 5 s, over 1.5 s.
        let p = b.over(long_ago, 0.1, f64::INFINITY).expect("over");
        assert!(p > 4.0 && p < 6.0, "{p}");
        // Capped at twice its size: about 1 s, within the margin.
        assert_eq!(b.over(long_ago, 0.1, 2.0), None);
    }
}
