//! Comparing two models (axiomatic or operational) test by test: verdicts,
//! allowed final states, and whether the first model's states are equal
//! to, or a subset of, the second's. Used by `litmix compare` and by the
//! agreement tests.

use crate::driver::{FileOutcome, ModelCache, check_path};
use crate::report::state_text;
use crate::verdict::CheckOptions;
use serde::Serialize;
use std::path::Path;

/// How the allowed states of model A relate to those of model B.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Relation {
    Equal,
    /// A's states are a strict subset of B's (A is stronger).
    Subset,
    /// A's states are a strict superset of B's (A is weaker).
    Superset,
    Incomparable,
    /// One of the models gave no result (parse error, limit, construct
    /// outside a model).
    Error,
}

/// One test judged by both models.
#[derive(Clone, Debug, Serialize)]
pub struct TestComparison {
    pub file: String,
    pub test: String,
    /// `Ok`/`No` per model, or `error`.
    pub verdict_a: String,
    pub verdict_b: String,
    /// States allowed by A only / by B only (herd text).
    pub only_a: Vec<String>,
    pub only_b: Vec<String>,
    pub relation: Relation,
    /// Error messages, if any.
    pub errors: Vec<String>,
}

/// What `--expect` asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expect {
    /// Same allowed states on every test.
    Equal,
    /// A's allowed states within B's on every test.
    Subset,
}

impl TestComparison {
    /// Whether this test meets `e` (errors never do).
    pub fn meets(&self, e: Expect) -> bool {
        match e {
            Expect::Equal => self.relation == Relation::Equal,
            Expect::Subset => matches!(self.relation, Relation::Equal | Relation::Subset),
        }
    }
}

/// Compares two outcome lists for the same file (one per test of it).
pub fn compare_outcomes(a: &[FileOutcome], b: &[FileOutcome]) -> Vec<TestComparison> {
    a.iter().zip(b).map(|(x, y)| compare_one(x, y)).collect()
}

fn compare_one(a: &FileOutcome, b: &FileOutcome) -> TestComparison {
    let mut c = TestComparison {
        file: a.file().to_string(),
        test: String::new(),
        verdict_a: "error".into(),
        verdict_b: "error".into(),
        only_a: Vec::new(),
        only_b: Vec::new(),
        relation: Relation::Error,
        errors: Vec::new(),
    };
    let verdict = |ok: bool| if ok { "Ok" } else { "No" }.to_string();
    match (a, b) {
        (
            FileOutcome::Checked {
                test, result: ra, ..
            },
            FileOutcome::Checked { result: rb, .. },
        ) => {
            c.test = test.name.clone();
            c.verdict_a = verdict(ra.validated);
            c.verdict_b = verdict(rb.validated);
            let text = |s: &Vec<crate::ir::Value>| state_text(test, &ra.observed, s);
            c.only_a = ra
                .states
                .keys()
                .filter(|s| !rb.states.contains_key(*s))
                .map(text)
                .collect();
            c.only_b = rb
                .states
                .keys()
                .filter(|s| !ra.states.contains_key(*s))
                .map(text)
                .collect();
            c.relation = match (c.only_a.is_empty(), c.only_b.is_empty()) {
                (true, true) => Relation::Equal,
                (true, false) => Relation::Subset,
                (false, true) => Relation::Superset,
                (false, false) => Relation::Incomparable,
            };
        }
        _ => {
            for o in [a, b] {
                if let FileOutcome::Failed { message, .. } = o {
                    c.errors.push(message.clone());
                }
            }
            if let FileOutcome::Checked { test, result, .. } = a {
                c.test = test.name.clone();
                c.verdict_a = verdict(result.validated);
            }
            if let FileOutcome::Checked { test, result, .. } = b {
                c.test = test.name.clone();
                c.verdict_b = verdict(result.validated);
            }
        }
    }
    c
}

/// Checks `path` under both models and compares them.
pub fn compare_path(
    path: &Path,
    model_a: &str,
    model_b: &str,
    cache: &ModelCache,
    opts: &CheckOptions,
) -> Vec<TestComparison> {
    let a = check_path(path, Some(model_a), cache, opts);
    let b = check_path(path, Some(model_b), cache, opts);
    compare_outcomes(&a, &b)
}

/// Counts per relation.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Summary {
    pub tests: usize,
    pub equal: usize,
    pub subset: usize,
    pub superset: usize,
    pub incomparable: usize,
    pub errors: usize,
    pub verdicts_differ: usize,
}

/// Sums up a comparison.
pub fn summarize(cs: &[TestComparison]) -> Summary {
    let mut s = Summary {
        tests: cs.len(),
        ..Summary::default()
    };
    for c in cs {
        match c.relation {
            Relation::Equal => s.equal += 1,
            Relation::Subset => s.subset += 1,
            Relation::Superset => s.superset += 1,
            Relation::Incomparable => s.incomparable += 1,
            Relation::Error => s.errors += 1,
        }
        if c.relation != Relation::Error && c.verdict_a != c.verdict_b {
            s.verdicts_differ += 1;
        }
    }
    s
}
