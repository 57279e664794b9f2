//! `litmix hw`: running PTX litmus tests on NVIDIA GPUs and checking what
//! the silicon shows against the model (docs/hw.md).
//!
//! The harness sits over the driver and the IR; no front end, engine or
//! model knows about it. From a parsed [`Test`] it builds a [`Plan`]:
//! which CTA group and warp each test thread takes (placement), which
//! registers and locations make up a final state, or why the test cannot
//! run on hardware ([`Refusal`]). [`emit`] turns a plan into PTX kernel
//! text in the parallel-testing-environment style (every thread of the
//! grid runs one role of one instance), [`layout`] computes the launch
//! geometry and the per-launch pairing of instances and location layout,
//! [`stress`] reads stress profiles, [`histogram`] counts final states and
//! compares them with the model's verdict (taken from the driver, the same
//! check `litmix run` does), [`sass`] checks that the assembler kept each
//! role's accesses, [`cuda`] binds the CUDA driver at run time (no CUDA is
//! needed to build litmix or to emit kernels) and [`run`] drives launches.
//! [`host`] runs X86 tests' roles on host threads (the host side of
//! compound CPU+GPU tests).

pub mod compound;
pub mod cuda;
pub mod emit;
pub mod histogram;
pub mod host;
pub mod launch;
pub mod layout;
pub mod plan;
pub mod rng;
pub mod run;
pub mod sass;
pub mod stress;
pub mod tune;

pub use plan::{Plan, Refusal, Role, plan};
