//! litmix: litmus tests against axiomatic GPU and CPU memory models.
//!
//! The pipeline, one module per stage (see ARCHITECTURE.md):
//! [`litmus`] front ends → [`ir`] program → [`exec`] per-thread execution into
//! events → candidate enumeration → [`cat`] model evaluation over [`rel`]
//! bitset relations → [`report`] herd-style text, JSON, DOT.

pub mod cat;
pub mod conformance;
pub mod diag;
pub mod driver;
pub mod exec;
pub mod ir;
pub mod litmus;
pub mod models;
pub mod rel;
pub mod report;
