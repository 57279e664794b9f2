//! Conformance: run published litmus tests and compare with other tools'
//! verdicts (`../shared/oracles/dat3m/expected.csv`), or with our own
//! hand-derived verdicts (`tests/models/expected.csv`).
//!
//! Every disagreement must be listed in a known-differences file
//! (`tests/known-differences.csv`, explained in docs/known-differences.md);
//! an unlisted disagreement, or a listed one that no longer happens, is a
//! failure.

use crate::driver::{FileOutcome, ModelCache, check_file};
use crate::verdict::CheckOptions;
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One expected verdict: test path (relative to the manifest's folder),
/// model, `true` for `Ok`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expectation {
    pub test: String,
    pub model: String,
    pub ok: bool,
}

/// Data rows of a small CSV file (header skipped, blank and `#` lines
/// ignored), split into at most `max_cols` trimmed columns, with line numbers.
fn csv_rows(text: &str, max_cols: usize) -> impl Iterator<Item = (usize, &str, Vec<&str>)> {
    text.lines()
        .enumerate()
        .skip(1)
        .filter_map(move |(i, line)| {
            let line = line.trim();
            (!line.is_empty() && !line.starts_with('#')).then(|| {
                (
                    i + 1,
                    line,
                    line.splitn(max_cols, ',').map(str::trim).collect(),
                )
            })
        })
}

/// Reads a `test,model,verdict` CSV (header line first).
pub fn read_expectations(csv: &Path) -> Result<Vec<Expectation>, String> {
    let text = std::fs::read_to_string(csv).map_err(|e| format!("{}: {e}", csv.display()))?;
    csv_rows(&text, 3)
        .map(|(line_no, line, cols)| {
            if cols.len() < 3 || !matches!(cols[2], "Ok" | "No") {
                return Err(format!(
                    "{}:{line_no}: expected 'test,model,Ok|No', found '{line}'",
                    csv.display()
                ));
            }
            Ok(Expectation {
                test: cols[0].to_string(),
                model: cols[1].to_string(),
                ok: cols[2] == "Ok",
            })
        })
        .collect()
}

/// A listed, explained disagreement.
#[derive(Clone, Debug)]
pub struct KnownDifference {
    pub test: String,
    pub model: String,
    /// litmix's verdict (`true` = Ok).
    pub litmix_ok: bool,
    /// Section of docs/known-differences.md that explains it.
    pub reason: String,
}

/// Reads `test,model,oracle,litmix,reason` rows (a missing file lists none).
pub fn read_known_differences(csv: &Path) -> Result<Vec<KnownDifference>, String> {
    let Ok(text) = std::fs::read_to_string(csv) else {
        return Ok(Vec::new());
    };
    csv_rows(&text, 5)
        .map(|(line_no, line, cols)| {
            if cols.len() < 5 || !matches!(cols[3], "Ok" | "No") {
                return Err(format!(
                    "{}:{line_no}: expected 'test,model,oracle,litmix,reason', found '{line}'",
                    csv.display()
                ));
            }
            Ok(KnownDifference {
                test: cols[0].to_string(),
                model: cols[1].to_string(),
                litmix_ok: cols[3] == "Ok",
                reason: cols[4].to_string(),
            })
        })
        .collect()
}

/// What happened to one expectation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Status {
    Agree,
    /// Disagreement listed in the known-differences file.
    Known(String),
    /// Disagreement nobody explained.
    Unexplained {
        litmix_ok: bool,
    },
    /// The test uses something litmix does not support (the message says what).
    Skipped(String),
    /// Any other failure (parse error, model error, limit).
    Error(String),
}

/// Outcome of a conformance run.
#[derive(Debug, Default)]
pub struct Report {
    pub rows: Vec<(Expectation, Status)>,
    /// Known differences that did not occur (stale entries).
    pub stale: Vec<KnownDifference>,
}

impl Report {
    /// Counts per status kind: (agree, known, unexplained, skipped, error).
    pub fn counts(&self) -> (usize, usize, usize, usize, usize) {
        let mut c = (0, 0, 0, 0, 0);
        for (_, s) in &self.rows {
            match s {
                Status::Agree => c.0 += 1,
                Status::Known(_) => c.1 += 1,
                Status::Unexplained { .. } => c.2 += 1,
                Status::Skipped(_) => c.3 += 1,
                Status::Error(_) => c.4 += 1,
            }
        }
        c
    }

    /// Per-model (agree, known, unexplained, skipped, error).
    pub fn by_model(&self) -> BTreeMap<String, [usize; 5]> {
        let mut m: BTreeMap<String, [usize; 5]> = BTreeMap::new();
        for (e, s) in &self.rows {
            let k = match s {
                Status::Agree => 0,
                Status::Known(_) => 1,
                Status::Unexplained { .. } => 2,
                Status::Skipped(_) => 3,
                Status::Error(_) => 4,
            };
            m.entry(e.model.clone()).or_default()[k] += 1;
        }
        m
    }

    /// True when nothing is unexplained, erroneous or stale.
    pub fn passed(&self) -> bool {
        let (_, _, unexplained, _, errors) = self.counts();
        unexplained == 0 && errors == 0 && self.stale.is_empty()
    }

    /// A human-readable summary with every non-agreeing row.
    pub fn summary(&self) -> String {
        let mut s = String::new();
        for (model, c) in self.by_model() {
            s.push_str(&format!(
                "{model:8} agree {:4}  known-difference {:3}  UNEXPLAINED {:3}  skipped {:3}  error {:3}\n",
                c[0], c[1], c[2], c[3], c[4]
            ));
        }
        for (e, st) in &self.rows {
            match st {
                Status::Agree => {}
                Status::Known(r) => {
                    s.push_str(&format!("  known      {} [{}]: {r}\n", e.test, e.model))
                }
                Status::Unexplained { litmix_ok } => s.push_str(&format!(
                    "  UNEXPLAINED {} [{}]: oracle {} litmix {}\n",
                    e.test,
                    e.model,
                    verdict(e.ok),
                    verdict(*litmix_ok)
                )),
                Status::Skipped(m) => {
                    s.push_str(&format!("  skipped    {} [{}]: {m}\n", e.test, e.model))
                }
                Status::Error(m) => {
                    s.push_str(&format!("  ERROR      {} [{}]: {m}\n", e.test, e.model))
                }
            }
        }
        for k in &self.stale {
            s.push_str(&format!(
                "  STALE known difference (no longer disagrees): {} [{}]\n",
                k.test, k.model
            ));
        }
        s
    }
}

fn verdict(ok: bool) -> &'static str {
    if ok { "Ok" } else { "No" }
}

/// True for parse failures caused by features litmix does not support yet.
pub fn is_unsupported(message: &str) -> bool {
    message.contains("unsupported")
}

/// Runs every expectation whose model is in `models` (all when empty).
/// Test paths are relative to `root`.
pub fn run(
    root: &Path,
    expectations: &[Expectation],
    known: &[KnownDifference],
    models: &[&str],
    opts: &CheckOptions,
) -> Report {
    let cache = ModelCache::default();
    let selected: Vec<&Expectation> = expectations
        .iter()
        .filter(|e| models.is_empty() || models.contains(&e.model.as_str()))
        .collect();
    let rows: Vec<(Expectation, Status)> = selected
        .par_iter()
        .with_max_len(1)
        .map(|e| {
            let path: PathBuf = root.join(&e.test);
            if crate::models::builtin(&e.model).is_none()
                && !crate::driver::is_operational(&e.model)
            {
                let status = Status::Skipped(format!("litmix has no model '{}'", e.model));
                return ((*e).clone(), status);
            }
            let status = match check_file(&path, Some(&e.model), &cache, opts) {
                FileOutcome::Failed { message, .. } if is_unsupported(&message) => {
                    Status::Skipped(first_line(&message))
                }
                FileOutcome::Failed { message, .. } => Status::Error(first_line(&message)),
                FileOutcome::Checked { result, .. } => {
                    if result.validated == e.ok {
                        Status::Agree
                    } else if let Some(k) = known.iter().find(|k| {
                        k.test == e.test && k.model == e.model && k.litmix_ok == result.validated
                    }) {
                        Status::Known(k.reason.clone())
                    } else {
                        Status::Unexplained {
                            litmix_ok: result.validated,
                        }
                    }
                }
            };
            ((*e).clone(), status)
        })
        .collect();
    // Entries for tests of another manifest (e.g. NVLitmus rows) are not
    // judged here.
    let stale = known
        .iter()
        .filter(|k| models.is_empty() || models.contains(&k.model.as_str()))
        .filter(|k| selected.iter().any(|e| e.test == k.test))
        .filter(|k| {
            !rows.iter().any(|(e, s)| {
                e.test == k.test && e.model == k.model && matches!(s, Status::Known(_))
            })
        })
        .cloned()
        .collect();
    Report { rows, stale }
}

/// Runs every test of the NVLitmus files `files` (paths relative to
/// `root`, e.g. `mixedproxy/tests/CoWR.test`) under `model`. Such a test
/// states its own verdict (see [`crate::litmus::nvlitmus`]): each is
/// expected `Ok`. A template row is named `FILE#ROW` (`FILE#ROW:COMMAND`
/// for files with several commands), as in the known-differences file.
pub fn run_nvlitmus(
    root: &Path,
    files: &[String],
    model: &str,
    known: &[KnownDifference],
    opts: &CheckOptions,
) -> Report {
    let cache = ModelCache::default();
    let rows: Vec<(Expectation, Status)> = files
        .par_iter()
        .with_max_len(1)
        .flat_map_iter(|rel| {
            let path = root.join(rel);
            let stem = path
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or("")
                .to_string();
            let parsed = crate::litmus::parse_file_all(&path);
            let cache = &cache;
            let rel = rel.clone();
            parsed.into_iter().enumerate().map(move |(i, r)| {
                let (id, status) = match r {
                    Err(d) => (
                        format!("{rel}#?{}", i + 1),
                        if is_unsupported(&d.message) {
                            Status::Skipped(first_line(&d.render()))
                        } else {
                            Status::Error(first_line(&d.render()))
                        },
                    ),
                    Ok(test) => {
                        let suffix = test.name.strip_prefix(&stem).unwrap_or("").to_string();
                        let id = format!("{rel}{suffix}");
                        let status = match crate::driver::check_test(
                            rel.clone(),
                            test,
                            Some(model),
                            cache,
                            opts,
                        ) {
                            FileOutcome::Failed { message, .. } => {
                                Status::Error(first_line(&message))
                            }
                            FileOutcome::Checked { result, .. } if result.validated => {
                                Status::Agree
                            }
                            FileOutcome::Checked { .. } => match known
                                .iter()
                                .find(|k| k.test == id && k.model == model && !k.litmix_ok)
                            {
                                Some(k) => Status::Known(k.reason.clone()),
                                None => Status::Unexplained { litmix_ok: false },
                            },
                        };
                        (id, status)
                    }
                };
                (
                    Expectation {
                        test: id,
                        model: model.to_string(),
                        ok: true,
                    },
                    status,
                )
            })
        })
        .collect();
    let prefixes: Vec<&str> = files.iter().map(String::as_str).collect();
    let stale = known
        .iter()
        .filter(|k| k.model == model && prefixes.iter().any(|p| k.test.starts_with(p)))
        .filter(|k| {
            !rows
                .iter()
                .any(|(e, s)| e.test == k.test && matches!(s, Status::Known(_)))
        })
        .cloned()
        .collect();
    Report { rows, stale }
}

fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or("").to_string()
}
