//! Execution: events, candidates, judging.
