//! The built-in model library: `.cat` files embedded in the binary, their
//! aliases, the default model per architecture, and loading a user's model.

use crate::cat::Model;
use crate::diag::Diagnostic;
use crate::ir::Pos;
use std::path::Path;

/// A model shipped inside the binary.
pub struct Builtin {
    /// Name used with `--model`.
    pub name: &'static str,
    /// One-line description for `litmix models`.
    pub description: &'static str,
    /// The cat source.
    pub source: &'static str,
}

/// Every built-in model, in listing order.
pub const BUILTINS: &[Builtin] = &[
    Builtin {
        name: "sc",
        description: "sequential consistency",
        source: include_str!("../models/sc.cat"),
    },
    Builtin {
        name: "x86tso",
        description: "x86-TSO (seed 000, Appendix B.2)",
        source: include_str!("../models/x86tso.cat"),
    },
    Builtin {
        name: "ptx6",
        description: "PTX 6.0 (seed 004, Section 3, Figures 4 and 7)",
        source: include_str!("../models/ptx6.cat"),
    },
    Builtin {
        name: "ptx75",
        description: "PTX 7.5 with proxies (seed 002, Section 6.2, on top of ptx6)",
        source: include_str!("../models/ptx75.cat"),
    },
    Builtin {
        name: "cmm",
        description: "compound x86-TSO + PTX, CMM (seed 000, Section 6.2)",
        source: include_str!("../models/cmm.cat"),
    },
    Builtin {
        name: "rc11",
        description: "RC11, repaired C11 (seed 004 Figure 10 without scopes)",
        source: include_str!("../models/rc11.cat"),
    },
    Builtin {
        name: "sc11",
        description: "scoped RC11 without No-Thin-Air (seed 004 Section 4.1, Figure 10; seed 000 Appendix B.3)",
        source: include_str!("../models/sc11.cat"),
    },
    Builtin {
        name: "opencl",
        description: "OpenCL 2.0 (seed 001 Figure 2, with memory orders, fences, barriers, regions)",
        source: include_str!("../models/opencl.cat"),
    },
    Builtin {
        name: "opencl-rsp",
        description: "OpenCL with remote-scope promotion (seed 001 Section 3)",
        source: include_str!("../models/opencl-rsp.cat"),
    },
];

/// Files that built-in models include and that are not models by
/// themselves (not listed, not loadable with `--model`).
pub const INCLUDES: &[(&str, &str)] = &[("opencl-base", include_str!("../models/opencl-base.cat"))];

/// Aliases: `ptx` names the newest PTX model available.
pub const ALIASES: &[(&str, &str)] = &[("ptx", "ptx75")];

/// Looks up a built-in model by name or alias.
pub fn builtin(name: &str) -> Option<&'static Builtin> {
    let name = ALIASES
        .iter()
        .find(|(a, _)| *a == name)
        .map(|(_, t)| *t)
        .unwrap_or(name);
    BUILTINS.iter().find(|b| b.name == name)
}

/// The model used when `--model` is not given, from the test's arch.
pub fn default_for_arch(arch: &str) -> &'static str {
    match arch.to_ascii_uppercase().as_str() {
        "PTX" => "ptx",
        "X86" => "x86tso",
        "X86+PTX" | "PTX+X86" => "cmm",
        "C" => "rc11",
        "OPENCL" => "opencl",
        _ => "sc",
    }
}

/// Resolves `include "x.cat"`: a built-in `x` first, then a file next to
/// the including model.
fn resolver(dir: Option<&Path>) -> impl Fn(&str) -> Option<(String, String)> + '_ {
    move |name: &str| {
        let stem = name.strip_suffix(".cat").unwrap_or(name);
        if let Some(b) = builtin(stem) {
            return Some((format!("<builtin {}.cat>", b.name), b.source.to_string()));
        }
        if let Some((n, src)) = INCLUDES.iter().find(|(n, _)| *n == stem) {
            return Some((format!("<builtin {n}.cat>"), src.to_string()));
        }
        let path = dir.map(|d| d.join(name)).unwrap_or_else(|| name.into());
        std::fs::read_to_string(&path)
            .ok()
            .map(|s| (path.display().to_string(), s))
    }
}

/// Loads `spec`: a built-in name/alias, or a path to a `.cat` file.
pub fn load(spec: &str) -> Result<Model, Diagnostic> {
    if let Some(b) = builtin(spec) {
        let file = format!("<builtin {}.cat>", b.name);
        return Model::parse(&file, b.source, &resolver(None));
    }
    let path = Path::new(spec);
    if !path.exists() {
        let names: Vec<&str> = BUILTINS
            .iter()
            .map(|b| b.name)
            .chain(ALIASES.iter().map(|a| a.0))
            .collect();
        return Err(Diagnostic::new(
            spec,
            Pos::default(),
            format!("no model named '{spec}' and no such file"),
        )
        .expected(format!(
            "a built-in model ({}) or a path to a .cat file",
            names.join(", ")
        )));
    }
    let source = std::fs::read_to_string(path)
        .map_err(|e| Diagnostic::new(spec, Pos::default(), format!("cannot read model: {e}")))?;
    Model::parse(spec, &source, &resolver(path.parent()))
}

/// Parses a model from `source` (named `file` in diagnostics); includes
/// resolve to built-ins first, then to files relative to the current
/// directory. Used by the fuzzer for mutated models.
pub fn load_source(file: &str, source: &str) -> Result<Model, Diagnostic> {
    Model::parse(file, source, &resolver(None))
}
