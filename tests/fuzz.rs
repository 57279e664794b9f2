//! The fuzz harness in CI: a short deterministic mutation run over every
//! front end and the cat parser (no panic, no hang), and the replay of
//! every earlier finding in `tests/fuzz-regressions/` (inputs that ran past
//! the 3 s limit of a fuzz run: each must still get an answer, a limit
//! message or a timeout result, and never panic). The long run is
//! `litmix fuzz --seconds 600` (docs/fuzzing.md).

use litmix::fuzz::{self, Config, Input, Verdict};
use rayon::prelude::*;
use std::path::PathBuf;
use std::time::Duration;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn short_fuzz_run_no_panic_no_hang() {
    let seeds = fuzz::seeds(&fuzz::default_seed_dirs(&root()));
    assert!(seeds.len() >= 10, "too few seeds: {}", seeds.len());
    assert!(seeds.iter().any(|s| s.target == fuzz::Target::Cat));
    assert!(seeds.iter().any(|s| s.target == fuzz::Target::Mapping));
    let config = Config {
        seed: 14,
        max_inputs: Some(1500),
        duration: None,
        limit: Duration::from_secs(2),
        max_mutations: 4,
    };
    let report = fuzz::run(&config, &seeds, |_| {});
    assert_eq!(report.inputs, 1500);
    assert!(report.cat > 0 && report.litmus > 0 && report.mapping > 0);
    let bad: Vec<String> = report
        .findings
        .iter()
        .filter(|f| {
            matches!(
                f.verdict,
                Verdict::Panicked(_) | Verdict::Hung | Verdict::Misprinted(_)
            )
        })
        .map(|f| format!("{:?}:\n{}", f.verdict, f.input.text))
        .collect();
    assert!(bad.is_empty(), "fuzz findings:\n{}", bad.join("\n\n"));
    println!(
        "{} inputs, {} timeouts at 2 s",
        report.inputs,
        report.findings.len()
    );
}

#[test]
fn earlier_findings_get_an_answer() {
    let inputs = fuzz::seeds(&[root().join("tests/fuzz-regressions")]);
    assert!(!inputs.is_empty());
    // A pool of its own: on rayon's global pool these checks would keep
    // its threads busy for seconds, and the operational explorer of the
    // fuzz run beside this test (it expands wide frontiers on the global
    // pool) would wait behind them and read as a hang.
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .stack_size(litmix::budget::STACK_BYTES)
        .build()
        .expect("a pool of two threads");
    let panicked: Vec<&str> = pool.install(|| {
        inputs
            .par_iter()
            .filter(|input| {
                matches!(
                    fuzz::run_blocking(input, Duration::from_millis(500)),
                    Verdict::Panicked(_) | Verdict::Misprinted(_)
                )
            })
            .map(|i| i.name.as_str())
            .collect()
    });
    assert!(panicked.is_empty(), "panicked or misprinted: {panicked:?}");
    // A mutated model that parses is evaluated, one that does not is a
    // diagnostic: neither panics.
    let cat = Input {
        target: fuzz::Target::Cat,
        name: "x.cat".into(),
        text: "let rec a = ~a\nacyclic a\n".into(),
    };
    assert_eq!(
        fuzz::run_blocking(&cat, Duration::from_secs(1)),
        Verdict::Answered
    );
}
