//! Reporters.
