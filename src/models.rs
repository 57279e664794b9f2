//! The built-in model library: `.cat` files embedded in the binary, their
//! aliases, the default model per architecture, and loading a user's model.

use crate::cat::{LoadOptions, Model};
use crate::diag::Diagnostic;
use crate::ir::Pos;
use std::path::{Path, PathBuf};
use std::sync::RwLock;

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
        name: "c11",
        description: "C11 (Batty et al. POPL 2011) with the SC axiom of Batty, Donaldson, Wickerson POPL 2016",
        source: include_str!("../models/c11.cat"),
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
        "RSP" => "rsp-cache",
        _ => "sc",
    }
}

/// herd-style loading: where `include`s and `stdlib.cat` are looked for,
/// and the variants (`-I`, `--variant`); set once by the CLI.
#[derive(Clone, Debug, Default)]
pub struct LoadConfig {
    /// `-I DIR` directories, searched in order after the model's own directory.
    pub include_dirs: Vec<PathBuf>,
    /// `--variant NAME` (herd's `-variant`).
    pub variants: Vec<String>,
    /// `--bell FILE` (herd's `-bell`): loaded before a model file.
    pub bell: Option<PathBuf>,
}

static CONFIG: RwLock<Option<LoadConfig>> = RwLock::new(None);

/// Environment variable with more include directories (`:`-separated).
pub const CAT_PATH_VAR: &str = "LITMIX_CAT_PATH";

/// litmix's own stdlib (used when no `stdlib.cat` is on the search path).
pub const STDLIB: &str = include_str!("../models/stdlib.cat");

/// Sets the loading configuration used by [`load`] from now on.
pub fn configure(cfg: LoadConfig) {
    // Some variants also change how tests are read (herd's `S128`).
    crate::litmus::set_variants(&cfg.variants);
    *CONFIG.write().unwrap_or_else(|e| e.into_inner()) = Some(cfg);
}

/// Whether `--variant NAME` was given (herd's variants also change how
/// some tests are read, e.g. `S128`).
pub fn variant_is_set(name: &str) -> bool {
    config().variants.iter().any(|v| v == name)
}

fn config() -> LoadConfig {
    CONFIG
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .clone()
        .unwrap_or_default()
}

/// The directories searched for a user model's includes: its own
/// directory, the `-I` directories, then those of LITMIX_CAT_PATH.
fn search_path(dir: Option<&Path>, cfg: &LoadConfig) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = dir.map(Path::to_path_buf).into_iter().collect();
    out.extend(cfg.include_dirs.iter().cloned());
    if let Ok(v) = std::env::var(CAT_PATH_VAR) {
        out.extend(v.split(':').filter(|s| !s.is_empty()).map(PathBuf::from));
    }
    out
}

/// Reads a text file; bytes that are not UTF-8 (herd's files have some in
/// comments) become U+FFFD.
fn read_text(path: &Path) -> std::io::Result<String> {
    std::fs::read(path).map(|b| String::from_utf8_lossy(&b).into_owned())
}

fn find_in(path: &[PathBuf], name: &str) -> Option<(String, String)> {
    path.iter().find_map(|d| {
        let p = d.join(name);
        read_text(&p).ok().map(|s| (p.display().to_string(), s))
    })
}

/// Resolves `include "x.cat"` of a built-in model: built-ins only.
fn builtin_resolver(name: &str) -> Option<(String, String)> {
    let stem = name.strip_suffix(".cat").unwrap_or(name);
    if let Some(b) = builtin(stem) {
        return Some((format!("<builtin {}.cat>", b.name), b.source.to_string()));
    }
    INCLUDES
        .iter()
        .find(|(n, _)| *n == stem)
        .map(|(n, src)| (format!("<builtin {n}.cat>"), src.to_string()))
}

/// Loads `spec`: a built-in name/alias, or a path to a `.cat` file.
///
/// A user's model is loaded as herd loads it: `stdlib.cat` from the search
/// path (or litmix's own [`STDLIB`]) first, and its includes looked for in
/// the search path before litmix's built-ins, so a herd file never
/// resolves to a built-in of the same name.
pub fn load(spec: &str) -> Result<Model, Diagnostic> {
    if let Some(b) = builtin(spec) {
        let file = format!("<builtin {}.cat>", b.name);
        let cfg = config();
        if let Some(bell) = &cfg.bell {
            // herd's `-bell` applies to any model: its names are visible.
            let opts = LoadOptions {
                bell: Some(read_bell(bell, &search_path(None, &cfg))?),
                ..Default::default()
            };
            return Model::parse_with(&file, b.source, &builtin_resolver, &opts);
        }
        return Model::parse(&file, b.source, &builtin_resolver);
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
    let source = read_text(path)
        .map_err(|e| Diagnostic::new(spec, Pos::default(), format!("cannot read model: {e}")))?;
    let cfg = config();
    let dirs = search_path(path.parent(), &cfg);
    let resolve = |name: &str| find_in(&dirs, name).or_else(|| builtin_resolver(name));
    let prelude = find_in(&dirs, "stdlib.cat")
        .unwrap_or_else(|| ("<builtin stdlib.cat>".to_string(), STDLIB.to_string()));
    let bell = match &cfg.bell {
        Some(b) => Some(read_bell(b, &dirs)?),
        None => None,
    };
    let opts = LoadOptions {
        variants: cfg.variants.clone(),
        prelude: Some(prelude),
        bell,
    };
    Model::parse_with(spec, &source, &resolve, &opts)
}

/// Reads `--bell FILE`: the path as given, else looked for on the search
/// path (as herd looks for `-bell` files in its library).
fn read_bell(b: &Path, dirs: &[PathBuf]) -> Result<(String, String), Diagnostic> {
    if let Ok(s) = read_text(b) {
        return Ok((b.display().to_string(), s));
    }
    let name = b.display().to_string();
    find_in(dirs, &name).ok_or_else(|| {
        Diagnostic::new(&name, Pos::default(), "cannot find bell file")
            .expected("a .bell file (a path, or a name on the -I search path)")
    })
}

/// Parses a model from `source` (named `file` in diagnostics); includes
/// resolve to built-ins only, so a mutated model never reads the disk.
/// Used by the fuzzer.
pub fn load_source(file: &str, source: &str) -> Result<Model, Diagnostic> {
    Model::parse(file, source, &builtin_resolver)
}
