//! The one path from a request to a verdict. Every caller (the command
//! line, the playground server, mapping checks, stepping, conformance,
//! fuzzing, comparison) comes through here: the driver finds and parses
//! test files, resolves a model name to a judge ([`registry`]: a cat model
//! or an operational machine, the only place a name chooses a judge),
//! turns limits into options ([`limits`]), checks, and builds the report
//! artefacts ([`artefacts`]: witness, forbidden and explained executions,
//! traces) that callers only format.

pub mod artefacts;
pub mod limits;
pub mod registry;
pub mod step;

pub use limits::Limits;
pub use registry::{
    DENOTATIONAL, DenotationalModel, Judge, MACHINES, MachineModel, OpenError, denotational,
    is_builtin_name, is_operational, machine, model_names,
};
pub use step::{Replayed, StepError, open_session, replay_view};

use crate::cat::Model;
use crate::ir::Test;
use crate::verdict::{CheckError, CheckOptions, CheckResult};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// File extensions treated as litmus tests when a directory is given
/// (`test`: NVLitmus files, see [`crate::litmus::nvlitmus`]).
pub const TEST_EXTENSIONS: &[&str] = &["litmus", "test"];

/// Expands directories (recursively, sorted) into their litmus files; files
/// are kept as given, in order. The paths are looked at in parallel: a
/// command line of many files asks the file system about each.
pub fn collect_paths(paths: &[PathBuf]) -> Vec<PathBuf> {
    use rayon::prelude::*;
    let expanded: Vec<Vec<PathBuf>> = paths
        .par_iter()
        .map(|p| {
            if p.is_dir() {
                let mut found = Vec::new();
                walk(p, &mut found);
                found.sort();
                found
            } else {
                vec![p.clone()]
            }
        })
        .collect();
    expanded.concat()
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            walk(&p, out);
        } else if p
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| TEST_EXTENSIONS.contains(&e))
        {
            out.push(p);
        }
    }
}

/// A model being loaded or loaded (or the error that loading it gave).
type Loading = Arc<std::sync::OnceLock<Result<Arc<Model>, String>>>;

/// Parsed models, shared between worker threads.
#[derive(Default)]
pub struct ModelCache {
    models: Mutex<HashMap<String, Loading>>,
}

impl ModelCache {
    /// The model named `spec` (built-in or path), parsed once: workers
    /// asking for it while it is parsed wait for that parse rather than
    /// parse it again.
    pub fn get(&self, spec: &str) -> Result<Arc<Model>, String> {
        let slot = self
            .models
            .lock()
            .map_err(|e| e.to_string())?
            .entry(spec.to_string())
            .or_default()
            .clone();
        let loaded = slot
            .get_or_init(|| {
                crate::models::load(spec)
                    .map(Arc::new)
                    .map_err(|d| d.render())
            })
            .clone();
        if loaded.is_err() {
            // Not kept: a later call tries again (a server outlives a
            // missing file).
            if let Ok(mut models) = self.models.lock()
                && models.get(spec).is_some_and(|s| Arc::ptr_eq(s, &slot))
            {
                models.remove(spec);
            }
        }
        loaded
    }

    /// The judge `spec` names: an operational machine, or a cat model
    /// (built-in name, alias or `.cat` path, parsed once) reported under
    /// the built-in's name or the spec as given.
    pub fn judge(&self, spec: &str) -> Result<Judge, String> {
        if let Some(m) = registry::machine(spec) {
            return Ok(Judge::Machine(m));
        }
        if let Some(m) = registry::denotational(spec) {
            return Ok(Judge::Denotational(m));
        }
        let model = self.get(spec)?;
        let name = crate::models::builtin(spec)
            .map(|b| b.name.to_string())
            .unwrap_or_else(|| spec.to_string());
        Ok(Judge::Cat { model, name })
    }
}

/// What happened to one file.
pub enum FileOutcome {
    /// Parsed and checked.
    Checked {
        file: String,
        test: Box<Test>,
        result: Box<CheckResult>,
    },
    /// Parse error, model error or limit; the message is ready to print.
    /// `herd` is herd7's one-line wording of the same rejection, when litmix
    /// knows it (`--herd-identical` prints it instead).
    Failed {
        file: String,
        message: String,
        herd: Option<String>,
    },
}

impl FileOutcome {
    /// The failure a located error of file `file` reports, with herd7's
    /// wording of it when litmix knows one.
    pub fn from_diagnostic(file: String, d: crate::diag::Diagnostic) -> FileOutcome {
        FileOutcome::Failed {
            herd: d.herd_line(&file),
            message: d.render(),
            file,
        }
    }

    /// The file name.
    pub fn file(&self) -> &str {
        match self {
            FileOutcome::Checked { file, .. } | FileOutcome::Failed { file, .. } => file,
        }
    }
}

/// Parses and checks every test of one file (an NVLitmus template gives one
/// outcome per row, in row order; any other file one outcome).
pub fn check_path(
    path: &Path,
    model: Option<&str>,
    cache: &ModelCache,
    opts: &CheckOptions,
) -> Vec<FileOutcome> {
    check_parsed_path(parse_path(path), model, cache, opts)
}

/// One file's tests as parsed (an NVLitmus template gives one per row, in
/// row order; any other file one), or why each could not be.
pub struct ParsedPath {
    /// The file name.
    pub file: String,
    /// Each test, or its failure ready to report.
    pub tests: Vec<Result<Test, FileOutcome>>,
}

/// Parses every test of one file ([`check_parsed_path`] checks them).
pub fn parse_path(path: &Path) -> ParsedPath {
    let file = path.display().to_string();
    let failed = |d| FileOutcome::from_diagnostic(file.clone(), d);
    let tests = if crate::litmus::nvlitmus::is_nvlitmus_path(path) {
        crate::litmus::parse_file_all(path)
            .into_iter()
            .map(|parsed| parsed.map_err(failed))
            .collect()
    } else {
        vec![crate::litmus::parse_file(path).map_err(failed)]
    };
    ParsedPath { file, tests }
}

/// Checks the tests of a parsed file, in order.
pub fn check_parsed_path(
    parsed: ParsedPath,
    model: Option<&str>,
    cache: &ModelCache,
    opts: &CheckOptions,
) -> Vec<FileOutcome> {
    let file = parsed.file;
    parsed
        .tests
        .into_iter()
        .map(|t| match t {
            Ok(test) => check_test(file.clone(), test, model, cache, opts),
            Err(failed) => failed,
        })
        .collect()
}

/// Parses and checks one file. `model` overrides the arch default.
pub fn check_file(
    path: &Path,
    model: Option<&str>,
    cache: &ModelCache,
    opts: &CheckOptions,
) -> FileOutcome {
    let file = path.display().to_string();
    match crate::litmus::parse_file(path) {
        Ok(test) => check_test(file, test, model, cache, opts),
        Err(d) => FileOutcome::from_diagnostic(file, d),
    }
}

/// Checks a parsed test; `file` names it in the outcome.
pub fn check_test(
    file: String,
    test: Test,
    model: Option<&str>,
    cache: &ModelCache,
    opts: &CheckOptions,
) -> FileOutcome {
    let spec = model.unwrap_or_else(|| crate::models::default_for_arch(&test.arch));
    let judge = match cache.judge(spec) {
        Ok(j) => j,
        Err(message) => {
            return FileOutcome::Failed {
                file,
                message,
                herd: None,
            };
        }
    };
    let checked = judge.check(&test, opts);
    match checked {
        Ok(result) => FileOutcome::Checked {
            file,
            test: Box::new(test),
            result: Box::new(result),
        },
        Err(CheckError::Diagnostic(d)) => FileOutcome::from_diagnostic(file, d),
        Err(e) => FileOutcome::Failed {
            message: format!("{file}: {e}"),
            herd: None,
            file,
        },
    }
}

/// Checks a parsed test with the judge `model` names (built-in, alias,
/// machine or `.cat` path), for callers holding a name and no cache. A
/// model that cannot be loaded is a [`CheckError::Limit`] with the loader's
/// message.
pub fn check_named(
    test: &Test,
    model: &str,
    opts: &CheckOptions,
) -> Result<CheckResult, CheckError> {
    ModelCache::default()
        .judge(model)
        .map_err(CheckError::Limit)?
        .check(test, opts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workers_share_one_parse_and_errors_are_not_kept() {
        let cache = ModelCache::default();
        let models: Vec<Arc<Model>> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..4).map(|_| s.spawn(|| cache.get("ptx6"))).collect();
            hs.into_iter()
                .map(|h| h.join().expect("joins").expect("loads"))
                .collect()
        });
        assert!(models.iter().all(|m| Arc::ptr_eq(m, &models[0])));
        let missing = "/nonexistent/litmix-model.cat";
        assert!(cache.get(missing).is_err());
        assert!(!cache.models.lock().expect("lock").contains_key(missing));
        assert!(cache.models.lock().expect("lock").contains_key("ptx6"));
    }
}
