//! `litmix conform`: compare verdicts with a manifest of expected verdicts.

use super::{Limits, options};
use clap::Args;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct ConformArgs {
    /// Manifest `test,model,Ok|No`; test paths are relative to its folder.
    #[arg(long, default_value = "../shared/oracles/dat3m/expected.csv")]
    pub expected: PathBuf,
    /// Known differences `test,model,oracle,litmix,reason`.
    #[arg(long, default_value = "tests/known-differences.csv")]
    pub known: PathBuf,
    /// Only these models (comma-separated); default all in the manifest.
    #[arg(long, value_delimiter = ',')]
    pub models: Vec<String>,
    #[command(flatten)]
    pub limits: Limits,
}

/// Runs `litmix conform`.
pub fn conform(a: ConformArgs) -> ExitCode {
    use litmix::conformance::{read_expectations, read_known_differences, run};
    let exp = match read_expectations(&a.expected) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("litmix conform: {e}");
            return ExitCode::from(2);
        }
    };
    let known = match read_known_differences(&a.known) {
        Ok(k) => k,
        Err(e) => {
            eprintln!("litmix conform: {e}");
            return ExitCode::from(2);
        }
    };
    let root = a.expected.parent().map(PathBuf::from).unwrap_or_default();
    let models: Vec<&str> = a.models.iter().map(String::as_str).collect();
    let report = run(&root, &exp, &known, &models, &options(&a.limits));
    out!("{}", report.summary());
    if report.passed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
