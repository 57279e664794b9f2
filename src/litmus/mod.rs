//! Litmus front ends.
