//! litmix: litmus tests against axiomatic GPU and CPU memory models.
//!
//! The pipeline, one module per stage (see ARCHITECTURE.md):
//! [`litmus`] front ends → [`ir`] program → [`exec`] per-thread execution into
//! events → candidate enumeration → [`cat`] model evaluation over [`rel`]
//! bitset relations → [`report`] herd-style text, JSON, DOT.
//!
//! ```
//! // Store buffering on x86: allowed by x86-TSO, forbidden by SC.
//! let src = "X86 SB\n{ x=0; y=0; }\n P0 | P1 ;\n MOV [x],$1 | MOV [y],$1 ;\n \
//!            MOV EAX,[y] | MOV EAX,[x] ;\nexists (0:EAX=0 /\\ 1:EAX=0)\n";
//! let test = litmix::litmus::parse_str("SB.litmus", src).unwrap();
//! let opts = litmix::exec::CheckOptions::default();
//! let tso = litmix::models::load("x86tso").unwrap();
//! assert!(litmix::exec::check(&test, &tso, &opts).unwrap().validated);
//! let sc = litmix::models::load("sc").unwrap();
//! assert!(!litmix::exec::check(&test, &sc, &opts).unwrap().validated);
//! ```

pub mod budget;
pub mod cat;
pub mod compare;
pub mod conformance;
pub mod diag;
pub mod driver;
pub mod exec;
pub mod fast_hash;
pub mod fuzz;
pub mod hw;
pub mod ir;
pub mod lex_util;
pub mod litmus;
pub mod mapping;
pub mod models;
pub mod op;
pub mod pwt;
pub mod rel;
pub mod report;
pub mod serve;
pub mod small_alloc;
pub mod synth;
pub mod verdict;
