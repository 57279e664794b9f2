//! Compiler mappings: a source language construct (memory order, scope,
//! placement) to a target instruction sequence, as data (docs/mappings.md).
//!
//! - [`format`]: the mapping file format and its parser;
//! - [`compile`]: a source litmus test to a target litmus test (text in the
//!   target's dialect, parsed back by the target front end);
//! - [`check`]: source model vs target model on one test: `sound`, `racy`
//!   or `unsound`;
//! - [`enumerate`]: every source program up to a bound, in canonical form,
//!   in a deterministic order that `--shard K/M` slices;
//! - [`dominance`]: deciding a program from weaker programs of its shape
//!   (same threads, kinds and locations; weaker orders and scopes);
//! - [`verify`]: the campaign over the enumeration (parallel, progress,
//!   counterexample files, summaries and `merge`);
//! - [`cli`]: the `compile`, `check-mapping`, `verify-mapping`, `merge`
//!   and `mappings` subcommands.
//!
//! Built-in mappings live in `mappings/*.map` and are embedded like the
//! `.cat` models.

pub mod build;
pub mod canon;
pub mod check;
pub mod compile;
pub mod dominance;
pub mod enumerate;
pub mod format;
pub mod sc;
pub mod verify;

pub use format::{Kind, Mapping, Rule};

use crate::diag::Diagnostic;
use crate::ir::Pos;

/// A mapping shipped inside the binary.
pub struct Builtin {
    /// Name used with `--mapping`.
    pub name: &'static str,
    /// The mapping file.
    pub source: &'static str,
}

/// Every built-in mapping, in listing order.
pub const BUILTINS: &[Builtin] = &[
    Builtin {
        name: "sc11-ptx",
        source: include_str!("../../mappings/sc11-ptx.map"),
    },
    Builtin {
        name: "sc11-ptx-rmwsc-norel",
        source: include_str!("../../mappings/sc11-ptx-rmwsc-norel.map"),
    },
    Builtin {
        name: "sc11-x86ptx",
        source: include_str!("../../mappings/sc11-x86ptx.map"),
    },
    Builtin {
        name: "rc11-x86",
        source: include_str!("../../mappings/rc11-x86.map"),
    },
    Builtin {
        name: "opencl-rsp-original",
        source: include_str!("../../mappings/opencl-rsp-original.map"),
    },
    Builtin {
        name: "opencl-rsp-proposed",
        source: include_str!("../../mappings/opencl-rsp-proposed.map"),
    },
];

/// Loads `spec`: a built-in mapping name, or a path to a mapping file.
pub fn load(spec: &str) -> Result<Mapping, Diagnostic> {
    if let Some(b) = BUILTINS.iter().find(|b| b.name == spec) {
        return format::parse(&format!("<builtin {}.map>", b.name), b.source);
    }
    let path = std::path::Path::new(spec);
    if !path.exists() {
        let names: Vec<&str> = BUILTINS.iter().map(|b| b.name).collect();
        return Err(Diagnostic::new(
            spec,
            Pos::default(),
            format!("no mapping named '{spec}' and no such file"),
        )
        .expected(format!(
            "a built-in mapping ({}) or a path to a mapping file",
            names.join(", ")
        )));
    }
    let text = std::fs::read_to_string(path)
        .map_err(|e| Diagnostic::new(spec, Pos::default(), format!("cannot read mapping: {e}")))?;
    format::parse(spec, &text)
}
