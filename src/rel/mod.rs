//! Relations and sets over events as bitsets.
//!
//! Events of a candidate execution are numbered `0..n`. A [`BitSet`] is a set
//! of events, a [`Relation`] an `n × n` boolean matrix stored as rows of `u64`
//! words (one word per row when `n <= 64`, the common case).

mod bitset;
mod pool;
mod relation;

pub use bitset::{BitSet, Bits};
pub use relation::Relation;
