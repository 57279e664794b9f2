//! The one registry of judges. A model name resolves here, and only here,
//! to a judge: a cat model (built-in, alias, a `.cat` file or a text) run by
//! the axiomatic engine, or an operational machine explored by the one
//! explorer. Every caller (the command line, the server, mapping checks,
//! stepping, conformance, fuzzing, comparison) asks the driver; nothing
//! below it chooses a judge by name.

use crate::cat::Model;
use crate::diag::Diagnostic;
use crate::ir::Test;
use crate::op::step::{Session, Stepper};
use crate::verdict::{CheckError, CheckOptions, CheckResult};
use std::sync::Arc;

/// Opens a stepping session of a machine on a test (`usize`: the unroll bound).
pub type OpenSession = for<'t> fn(&'t Test, usize) -> Result<Box<dyn Session + 't>, Diagnostic>;

/// An operational model: a machine the explorer runs, under a name.
pub struct MachineModel {
    /// The name `--model` takes.
    pub name: &'static str,
    /// One line for `litmix models`.
    pub description: &'static str,
    /// Explores `test` and reports like any judge.
    pub check: fn(&Test, &CheckOptions) -> Result<CheckResult, CheckError>,
    /// A stepping session at the initial state (`litmix step`, the
    /// playground); the `usize` bounds backward jumps as `--unroll` does.
    pub open: OpenSession,
}

fn rsp_options(unroll: usize, l2_locking: bool, reduce: bool) -> crate::op::rsp::RspOptions {
    crate::op::rsp::RspOptions {
        l2_locking,
        reduce,
        unroll: unroll as u32,
    }
}

/// LOST-POP as the `--variant`s say (`acquire-meet`).
fn lostpop_build(unreduced: bool) -> crate::op::lostpop::Build {
    crate::op::lostpop::Build::with_variants(unreduced, &crate::models::variants())
}
fn lostpop_check(t: &Test, o: &CheckOptions) -> Result<CheckResult, CheckError> {
    crate::op::lostpop::judge(t, o, lostpop_build(false))
}
fn lostpop_unreduced_check(t: &Test, o: &CheckOptions) -> Result<CheckResult, CheckError> {
    crate::op::lostpop::judge(t, o, lostpop_build(true))
}
fn lostpop_open(t: &Test, unroll: usize) -> Result<Box<dyn Session + '_>, Diagnostic> {
    Ok(Box::new(Stepper::new(crate::op::lostpop::machine(
        t,
        unroll,
        lostpop_build(false),
    )?)))
}
fn lostpop_unreduced_open(t: &Test, unroll: usize) -> Result<Box<dyn Session + '_>, Diagnostic> {
    Ok(Box::new(Stepper::new(crate::op::lostpop::machine(
        t,
        unroll,
        lostpop_build(true),
    )?)))
}
fn rsp_check(t: &Test, o: &CheckOptions) -> Result<CheckResult, CheckError> {
    crate::op::rsp::judge::check(t, rsp_options(o.unroll, true, true), o)
}
fn rsp_nolock_check(t: &Test, o: &CheckOptions) -> Result<CheckResult, CheckError> {
    crate::op::rsp::judge::check(t, rsp_options(o.unroll, false, true), o)
}
fn rsp_unreduced_check(t: &Test, o: &CheckOptions) -> Result<CheckResult, CheckError> {
    crate::op::rsp::judge::check(t, rsp_options(o.unroll, true, false), o)
}
fn rsp_open(t: &Test, unroll: usize) -> Result<Box<dyn Session + '_>, Diagnostic> {
    rsp_session(t, rsp_options(unroll, true, true))
}
fn rsp_nolock_open(t: &Test, unroll: usize) -> Result<Box<dyn Session + '_>, Diagnostic> {
    rsp_session(t, rsp_options(unroll, false, true))
}
fn rsp_unreduced_open(t: &Test, unroll: usize) -> Result<Box<dyn Session + '_>, Diagnostic> {
    rsp_session(t, rsp_options(unroll, true, false))
}
fn rsp_session(
    t: &Test,
    opts: crate::op::rsp::RspOptions,
) -> Result<Box<dyn Session + '_>, Diagnostic> {
    Ok(Box::new(Stepper::new(crate::op::rsp::RspCache::new(
        t, opts,
    )?)))
}

/// Every operational model, in the order `litmix models` lists them.
pub static MACHINES: &[MachineModel] = &[
    MachineModel {
        name: "lostpop",
        description: "LOST-POP operational model (seed 000 §4, App. A): x86, PTX and X86+PTX tests, explored exhaustively",
        check: lostpop_check,
        open: lostpop_open,
    },
    MachineModel {
        name: "lostpop-unreduced",
        description: "LOST-POP without the catch-up reduction (same outcomes, more states; for checking the reduction)",
        check: lostpop_unreduced_check,
        open: lostpop_unreduced_open,
    },
    MachineModel {
        name: "rsp-cache",
        description: "GPU cache machine of seed 001 §5 (RSP assembly tests), explored exhaustively",
        check: rsp_check,
        open: rsp_open,
    },
    MachineModel {
        name: "rsp-cache-nolock",
        description: "rsp-cache without cacheline locking: LK_L2/UL_L2 do nothing",
        check: rsp_nolock_check,
        open: rsp_nolock_open,
    },
    MachineModel {
        name: "rsp-cache-unreduced",
        description: "rsp-cache without its reductions (same outcomes, more states; for checking them)",
        check: rsp_unreduced_check,
        open: rsp_unreduced_open,
    },
];

/// A denotational judge: a model decided from the program's meaning (seed
/// 003's pomsets with predicate transformers), under a name.
pub struct DenotationalModel {
    /// The name `--model` takes.
    pub name: &'static str,
    /// One line for `litmix models`.
    pub description: &'static str,
    /// Judges `test` (reading the `--variant`s itself).
    pub check: fn(&Test, &CheckOptions) -> Result<CheckResult, CheckError>,
}

fn pwt_check(t: &Test, o: &CheckOptions) -> Result<CheckResult, CheckError> {
    crate::pwt::check(t, &crate::models::variants(), o)
}

/// Every denotational model (`crate::pwt`).
pub static DENOTATIONAL: &[DenotationalModel] = &[DenotationalModel {
    name: crate::pwt::MODELS[0].0,
    description: crate::pwt::MODELS[0].1,
    check: pwt_check,
}];

/// The denotational model named `name`, if there is one.
pub fn denotational(name: &str) -> Option<&'static DenotationalModel> {
    DENOTATIONAL.iter().find(|m| m.name == name)
}

/// The operational model named `name`, if there is one.
pub fn machine(name: &str) -> Option<&'static MachineModel> {
    MACHINES.iter().find(|m| m.name == name)
}

/// Whether `name` names an operational model (not a cat model).
pub fn is_operational(name: &str) -> bool {
    machine(name).is_some()
}

/// Every name `--model` accepts without a path: built-in cat models, their
/// aliases, then the operational models.
pub fn model_names() -> Vec<&'static str> {
    crate::models::BUILTINS
        .iter()
        .map(|b| b.name)
        .chain(crate::models::ALIASES.iter().map(|a| a.0))
        .chain(MACHINES.iter().map(|m| m.name))
        .chain(DENOTATIONAL.iter().map(|m| m.name))
        .collect()
}

/// Whether `name` is a built-in cat model, an alias or a machine (a name
/// that needs no file).
pub fn is_builtin_name(name: &str) -> bool {
    is_operational(name) || denotational(name).is_some() || crate::models::builtin(name).is_some()
}

/// A resolved judge: what decides which final states a test may reach.
#[derive(Clone)]
pub enum Judge {
    /// A cat model run by the axiomatic engine, with the name results carry.
    Cat { model: Arc<Model>, name: String },
    /// An operational machine run by the explorer.
    Machine(&'static MachineModel),
    /// A denotational judge (`crate::pwt`).
    Denotational(&'static DenotationalModel),
}

impl Judge {
    /// The name results report (`--model`'s built-in name, a path, or the
    /// name a text model was given).
    pub fn name(&self) -> &str {
        match self {
            Judge::Cat { name, .. } => name,
            Judge::Machine(m) => m.name,
            Judge::Denotational(m) => m.name,
        }
    }

    /// The cat model, for a cat judge.
    pub fn cat(&self) -> Option<&Arc<Model>> {
        match self {
            Judge::Cat { model, .. } => Some(model),
            Judge::Machine(_) | Judge::Denotational(_) => None,
        }
    }

    /// Judges `test`: every final state the model allows, with the
    /// artefacts `opts` asks for.
    pub fn check(&self, test: &Test, opts: &CheckOptions) -> Result<CheckResult, CheckError> {
        match self {
            Judge::Cat { model, name } => crate::exec::check(test, model, opts).map(|mut r| {
                // Report the name users pass to --model, not the file's title.
                r.model = name.clone();
                r
            }),
            Judge::Machine(m) => (m.check)(test, opts),
            Judge::Denotational(m) => (m.check)(test, opts),
        }
    }

    /// A stepping session on `test` (operational models only).
    pub fn open<'t>(
        &self,
        test: &'t Test,
        unroll: usize,
    ) -> Result<Box<dyn Session + 't>, OpenError> {
        match self {
            Judge::Machine(m) => (m.open)(test, unroll).map_err(OpenError::Diagnostic),
            Judge::Cat { name, .. } => Err(OpenError::NotOperational(name.clone())),
            Judge::Denotational(m) => Err(OpenError::NotOperational(m.name.to_string())),
        }
    }
}

/// Why a stepping session could not be opened.
#[derive(Clone, Debug)]
pub enum OpenError {
    /// The model is not an operational one.
    NotOperational(String),
    /// The machine cannot run the test (points at the construct).
    Diagnostic(Diagnostic),
}

impl std::fmt::Display for OpenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OpenError::NotOperational(m) => {
                let names: Vec<&str> = MACHINES.iter().map(|m| m.name).collect();
                write!(
                    f,
                    "'{m}' is not an operational model (expected {})",
                    or_list(&names)
                )
            }
            OpenError::Diagnostic(d) => f.write_str(&d.render()),
        }
    }
}

/// `a, b or c`.
fn or_list(names: &[&str]) -> String {
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => names.join(""),
    }
}

/// The cat model named by a request's text, whose `include`s may name
/// built-in files only (a request never reads the server's disk).
pub fn cat_text(file: &str, text: &str) -> Result<Judge, Diagnostic> {
    let model = Model::parse(file, text, &builtin_includes)?;
    Ok(Judge::Cat {
        model: Arc::new(model),
        name: file.to_string(),
    })
}

/// Resolves `include "x.cat"` against the built-in files only.
fn builtin_includes(name: &str) -> Option<(String, String)> {
    let stem = name.strip_suffix(".cat").unwrap_or(name);
    if let Some(b) = crate::models::builtin(stem) {
        return Some((format!("<builtin {}.cat>", b.name), b.source.to_string()));
    }
    crate::models::INCLUDES
        .iter()
        .find(|(n, _)| *n == stem)
        .map(|(n, src)| (format!("<builtin {n}.cat>"), src.to_string()))
}
