//! Test synthesis (`litmix synth`) and distinguishing tests (`litmix
//! compare --distinguish`): every program up to a bound over a vocabulary,
//! every outcome the condition form can state, kept when a model forbids
//! it and every one-step weakening is allowed (or when one model allows it
//! and the other forbids it). See docs/synthesis.md.
//!
//! - `vocab.rs`: vocabularies (`vocab/*.vocab`), the weakening lattice;
//! - `program.rs`: programs, outcomes, weakenings;
//! - `search.rs`: shapes from the shared enumerator of
//!   [`crate::mapping::enumerate`], filled, judged, classified;
//! - `removals.rs`: a program's removals, checked for the search;
//! - `sc.rs`: final states under sequential consistency (the SC cut);
//! - `scope.rs`: effective scopes (the scope cut, the scope normal form);
//! - `judge.rs`: judging through the driver, cached per program;
//! - `assemble.rs`: a program's IR from its threads' parses, cached per thread;
//! - `print.rs`: X86, PTX and C/OpenCL printers;
//! - `family.rs`: family names (MP, SB, ...);
//! - this file: runs, verification of emitted tests, summaries, merge.

pub mod assemble;
pub mod family;
pub mod judge;
pub mod judged;
pub mod lattice;
pub mod print;
pub mod program;
mod removals;
pub mod sc;
pub mod scope;
pub mod search;
pub mod vocab;

use crate::driver::{FileOutcome, ModelCache, check_test};
use crate::exec::CheckOptions;
use judge::Judge;
use program::{SProgram, weakenings};
use search::{Criterion, Found, Mode, Space2};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;
use vocab::Vocab;

/// A synthesis or distinguishing run.
pub struct Run {
    pub vocab: Vocab,
    /// One model (synthesis) or two (distinguishing).
    pub models: Vec<String>,
    /// Emit only tests violating each of these checks (synthesis).
    pub axioms: Vec<String>,
    pub criterion: Criterion,
    pub space: Space2,
    pub opts: CheckOptions,
    /// Write the tests (and `expected.csv`) here.
    pub out: Option<PathBuf>,
    /// Also write each test's one-step weakenings (allowed by the model).
    pub allowed_set: bool,
}

/// One emitted test.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Test {
    pub name: String,
    pub events: usize,
    /// The program, one line (`P0: R x; W y | ...`).
    pub program: String,
    pub condition: String,
    /// Checks of the model the outcome violates (each check alone forbids
    /// it); empty for operational models.
    pub checks: Vec<String>,
    /// Distinguishing: the model that allows the outcome.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub allowed_by: Option<String>,
    /// Some execution raises a flag (a race) under a model.
    pub racy: bool,
    /// The name before a `-2`, `-3` suffix (family or shape name).
    #[serde(default)]
    pub base: String,
    /// Position in enumeration order (shape, program, outcome): `merge`
    /// names the shards' tests in this order, as one run would.
    #[serde(default)]
    pub order: (usize, usize, usize),
    /// The litmus text.
    #[serde(skip)]
    pub text: String,
    /// One-step weakenings as litmus texts (with `--allowed-set`).
    #[serde(skip)]
    pub mutants: Vec<(String, String)>,
}

/// The summary line of a run (`--json`), and what `merge` adds up.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Summary {
    pub models: Vec<String>,
    pub arch: String,
    pub vocab: String,
    pub bound: usize,
    #[serde(default)]
    pub axioms: Vec<String>,
    pub criterion: String,
    /// `K/M`, or `1/1`.
    pub shard: String,
    pub shapes: usize,
    /// Canonical programs enumerated (with the scope cut, those whose
    /// scopes are all effective).
    pub programs: usize,
    /// Model runs (programs and their weakenings).
    pub judged: u64,
    /// Outcomes stated (conditions).
    pub outcomes: usize,
    /// Forbidden (or distinguishing) outcomes whose one-event removals
    /// are all allowed (not distinguishing the same way).
    pub found: usize,
    /// Of those, minimal ones.
    pub minimal: usize,
    /// Minimal ones up to isomorphism, and with `--axiom` violating the
    /// named checks: the tests emitted.
    pub unique: usize,
    /// Outcomes on a location written three times or more: their
    /// coherence order is not pinned by final values (they are still
    /// judged as tests: forbidden when every coherence order is).
    pub inexpressible: usize,
    /// Fillings of shapes (before the isomorphism test) the scope cut
    /// leaves out, not counted in `programs`: an instruction's scope holds
    /// no thread its next narrower scope does not, so the program behaves
    /// as the one with that scope narrowed (docs/synthesis.md, "Cuts").
    #[serde(default)]
    pub scope_equivalent: usize,
    /// Emitted tests that some model flags as racy (distinguishing only:
    /// synthesis reads a racy program as allowing every outcome).
    pub racy: usize,
    /// One-step weakenings left out of `--allowed-set` because the model
    /// flags them as racy: allowed only as undefined behaviour, so no
    /// harness is owed the outcome and `litmix run` may still say No.
    #[serde(default)]
    pub racy_mutants: usize,
    /// Emitted tests per violated check.
    pub by_check: BTreeMap<String, usize>,
    /// Emitted tests per number of events.
    pub by_events: BTreeMap<usize, usize>,
    /// Emitted tests per family (`other` for unknown shapes).
    pub by_family: BTreeMap<String, usize>,
    /// Emitted tests that failed their final `litmix run` check (must be 0).
    pub verify_failures: usize,
    pub time_s: f64,
    pub tests: Vec<Test>,
}

/// Runs a synthesis or distinguishing search.
pub fn run(r: &Run, progress: &(dyn Fn() + Sync)) -> Result<Summary, String> {
    let start = std::time::Instant::now();
    let cache = ModelCache::default();
    let vocab = &r.vocab;
    let judges: Vec<Judge<'_>> = r
        .models
        .iter()
        .map(|m| {
            Judge::new(vocab, m, &[], &cache, r.opts.clone()).map(|mut j| {
                j.sc_cut = r.space.prune;
                j.scope_normal = r.space.prune;
                // Synthesis: a racy program promises nothing.
                j.catch_fire = r.models.len() == 1;
                j
            })
        })
        .collect::<Result<_, _>>()?;
    let mode = match judges.as_slice() {
        [j] => Mode::Synth {
            judge: j,
            criterion: r.criterion,
        },
        [a, b] => Mode::Distinguish { a, b },
        _ => return Err("give one model (synth) or two (distinguish)".into()),
    };
    let (found, counts) = search::search(vocab, &mode, &r.space, progress)?;
    let minimal = found.len();
    // Unique up to isomorphism, in enumeration order.
    let mut seen = HashSet::new();
    let unique: Vec<&Found> = found
        .iter()
        .filter(|f| seen.insert(search::iso_key(vocab, &f.program, &f.cond)))
        .collect();
    // Per-check labels (axiomatic models): each check alone forbids it.
    let checks: Vec<(String, Judge<'_>)> =
        if r.models.len() == 1 && !crate::driver::is_operational(&r.models[0]) {
            cache
                .get(&r.models[0])?
                .checks()
                .into_iter()
                .map(|c| {
                    let j = Judge::new(
                        vocab,
                        &r.models[0],
                        std::slice::from_ref(&c),
                        &cache,
                        r.opts.clone(),
                    );
                    j.map(|j| (c, j))
                })
                .collect::<Result<_, _>>()?
        } else {
            Vec::new()
        };
    if let Some(bad) = r.axioms.iter().find(|a| !checks.iter().any(|c| c.0 == **a)) {
        return Err(format!(
            "--axiom {bad}: {} has no such check (its checks: {})",
            r.models.join(" "),
            checks
                .iter()
                .map(|c| c.0.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let mut s = Summary {
        models: r.models.clone(),
        arch: vocab.dialect.arch().into(),
        vocab: vocab.name.clone(),
        bound: r.space.bound,
        axioms: r.axioms.clone(),
        criterion: match (r.models.len(), r.criterion) {
            (2, _) => "distinguish-minimal".into(),
            (_, Criterion::Minimal) => "minimal".into(),
            (_, Criterion::Forbidden) => "forbidden".into(),
        },
        shard: r
            .space
            .shard
            .map_or("1/1".into(), |(k, m)| format!("{k}/{m}")),
        shapes: counts.shapes,
        programs: counts.programs,
        outcomes: counts.outcomes,
        found: counts.found,
        minimal,
        unique: unique.len(),
        inexpressible: counts.inexpressible,
        scope_equivalent: counts.scope_equivalent,
        ..Summary::default()
    };
    let mut names: HashSet<String> = HashSet::new();
    for f in unique {
        let base = family::family(vocab, &f.program)
            .map(str::to_string)
            .unwrap_or_else(|| family::shape_name(vocab, &f.program));
        let mut name = base.clone();
        let mut k = 2;
        while !names.insert(name.clone()) {
            name = format!("{base}-{k}");
            k += 1;
        }
        let mut labels = Vec::new();
        for (c, j) in &checks {
            if !j.allows(&f.program, &f.cond)? {
                labels.push(c.clone());
            }
        }
        // `--axiom`: only tests violating each named check.
        if !r.axioms.iter().all(|a| labels.contains(a)) {
            names.remove(&name);
            continue;
        }
        let summary = describe(vocab, &f.program);
        let allowed_by = (r.models.len() == 2).then(|| {
            if f.a_allows {
                r.models[0].clone()
            } else {
                r.models[1].clone()
            }
        });
        let comment = match &allowed_by {
            Some(m) => format!("litmix synth: allowed by {m} only; {summary}"),
            None => format!("litmix synth: forbidden by {}; {summary}", r.models[0]),
        };
        let text = print::print(vocab, &f.program, &f.cond, &name, &comment);
        if !verify(&text, &r.models, &cache, &r.opts, f.a_allows)? {
            s.verify_failures += 1;
            continue;
        }
        let mut mutants = Vec::new();
        if r.allowed_set {
            let places = matches!(vocab.dialect, vocab::Dialect::Ptx | vocab::Dialect::OpenCl);
            for w in weakenings(vocab, &f.program, &f.cond, places) {
                if w.program.threads.is_empty() {
                    continue;
                }
                if judges[0].catch_fire && judges[0].judge(&w.program)?.flagged {
                    s.racy_mutants += 1;
                    continue;
                }
                let mname = format!("{name}+{}", w.what(vocab));
                let t = print::print(
                    vocab,
                    &w.program,
                    &w.cond,
                    &mname,
                    &describe(vocab, &w.program),
                );
                mutants.push((mname, t));
            }
        }
        *s.by_events.entry(f.events).or_default() += 1;
        *s.by_family
            .entry(family::family(vocab, &f.program).unwrap_or("other").into())
            .or_default() += 1;
        for l in &labels {
            *s.by_check.entry(l.clone()).or_default() += 1;
        }
        if f.racy {
            s.racy += 1;
        }
        s.tests.push(Test {
            name,
            base,
            order: f.order,
            events: f.events,
            program: summary,
            condition: judge::condition(vocab, &f.cond),
            checks: labels,
            allowed_by,
            racy: f.racy,
            text,
            mutants,
        });
    }
    s.unique = s.tests.len() + s.verify_failures;
    s.judged = judges
        .iter()
        .chain(checks.iter().map(|c| &c.1))
        .map(Judge::judged)
        .sum();
    s.time_s = start.elapsed().as_secs_f64();
    if let Some(dir) = &r.out {
        write_out(dir, &s)?;
    }
    Ok(s)
}

/// Parses the emitted text back and runs it as `litmix run` does: the
/// model (or, distinguishing, the model that forbids it) must answer No,
/// the other Ok.
fn verify(
    text: &str,
    models: &[String],
    cache: &ModelCache,
    opts: &CheckOptions,
    a_allows: bool,
) -> Result<bool, String> {
    for (i, m) in models.iter().enumerate() {
        let test = crate::litmus::parse_str("synth.litmus", text)
            .map_err(|d| format!("emitted test does not parse back: {}", d.render()))?;
        let want_ok = models.len() == 2 && (i == 0) == a_allows;
        match check_test("synth.litmus".into(), test, Some(m), cache, opts) {
            FileOutcome::Checked { result, .. } => {
                if result.validated != want_ok {
                    return Ok(false);
                }
            }
            FileOutcome::Failed { message, .. } => return Err(message),
        }
    }
    Ok(true)
}

/// A one-line program summary: `P0: W x; R y | P1@cta1,gpu0: ...`
/// (`@wg1,dev0` for OpenCL).
pub fn describe(vocab: &Vocab, p: &SProgram) -> String {
    p.threads
        .iter()
        .enumerate()
        .map(|(t, th)| {
            let place = match th.place {
                crate::mapping::enumerate::Place::Gpu { dev, wg } => match vocab.dialect {
                    vocab::Dialect::OpenCl => format!("@wg{wg},dev{dev}"),
                    _ => format!("@cta{wg},gpu{dev}"),
                },
                _ => String::new(),
            };
            let ops: Vec<String> = th
                .ops
                .iter()
                .map(|o| {
                    let e = &vocab.entries[o.entry];
                    if e.kind == crate::mapping::enumerate::OpKind::Fence {
                        e.name.clone()
                    } else {
                        format!(
                            "{} {}",
                            e.name,
                            crate::mapping::enumerate::loc_name(o.loc as usize)
                        )
                    }
                })
                .collect();
            format!("P{t}{place}: {}", ops.join("; "))
        })
        .collect::<Vec<_>>()
        .join(" | ")
}

/// Writes each test, its mutants and `expected.csv` (`litmix conform`'s
/// manifest: the test No under its model, mutants Ok).
fn write_out(dir: &std::path::Path, s: &Summary) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut csv = String::from("test,model,verdict\n");
    let write = |name: &str, text: &str| -> Result<(), String> {
        let p = dir.join(format!(
            "{}.litmus",
            crate::driver::artefacts::sanitize(name)
        ));
        std::fs::write(&p, text).map_err(|e| format!("{}: {e}", p.display()))
    };
    for t in &s.tests {
        write(&t.name, &t.text)?;
        for (i, m) in s.models.iter().enumerate() {
            let ok = t.allowed_by.as_deref() == Some(m.as_str()) && (i == 0 || s.models.len() == 2);
            csv.push_str(&format!(
                "{}.litmus,{m},{}\n",
                crate::driver::artefacts::sanitize(&t.name),
                if ok { "Ok" } else { "No" }
            ));
        }
        for (mname, text) in &t.mutants {
            write(mname, text)?;
            csv.push_str(&format!(
                "{}.litmus,{},Ok\n",
                crate::driver::artefacts::sanitize(mname),
                s.models[0]
            ));
        }
    }
    let p = dir.join("expected.csv");
    std::fs::write(&p, csv).map_err(|e| format!("{}: {e}", p.display()))
}

/// Adds shard summaries up: counts and times summed, tests concatenated
/// (shards partition shapes, and isomorphic tests share a shape). Errors
/// when the runs differ in models, vocabulary or bound, or a shard is
/// missing or repeated.
pub fn merge(parts: &[Summary]) -> Result<Summary, String> {
    let first = parts.first().ok_or("no summaries to merge")?;
    let m = first
        .shard
        .split('/')
        .nth(1)
        .and_then(|m| m.parse::<usize>().ok())
        .ok_or_else(|| format!("bad shard '{}'", first.shard))?;
    let mut seen = vec![false; m];
    let mut out = Summary {
        models: first.models.clone(),
        arch: first.arch.clone(),
        vocab: first.vocab.clone(),
        bound: first.bound,
        axioms: first.axioms.clone(),
        criterion: first.criterion.clone(),
        shard: "1/1".into(),
        ..Summary::default()
    };
    for p in parts {
        if (
            &p.models,
            &p.arch,
            &p.vocab,
            p.bound,
            &p.axioms,
            &p.criterion,
        ) != (
            &out.models,
            &out.arch,
            &out.vocab,
            out.bound,
            &out.axioms,
            &out.criterion,
        ) {
            return Err("summaries of different runs".into());
        }
        let (k, pm) = p
            .shard
            .split_once('/')
            .and_then(|(k, m)| Some((k.parse::<usize>().ok()?, m.parse::<usize>().ok()?)))
            .ok_or_else(|| format!("bad shard '{}'", p.shard))?;
        if pm != m || k == 0 || k > m || seen[k - 1] {
            return Err(format!(
                "shard {} missing, repeated or of another split",
                p.shard
            ));
        }
        seen[k - 1] = true;
        out.shapes += p.shapes;
        out.programs += p.programs;
        out.judged += p.judged;
        out.outcomes += p.outcomes;
        out.found += p.found;
        out.minimal += p.minimal;
        out.unique += p.unique;
        out.inexpressible += p.inexpressible;
        out.scope_equivalent += p.scope_equivalent;
        out.racy += p.racy;
        out.racy_mutants += p.racy_mutants;
        out.verify_failures += p.verify_failures;
        out.time_s += p.time_s;
        for (k, v) in &p.by_check {
            *out.by_check.entry(k.clone()).or_default() += v;
        }
        for (k, v) in &p.by_events {
            *out.by_events.entry(*k).or_default() += v;
        }
        for (k, v) in &p.by_family {
            *out.by_family.entry(k.clone()).or_default() += v;
        }
        out.tests.extend(p.tests.iter().cloned());
    }
    if let Some(k) = seen.iter().position(|s| !s) {
        return Err(format!("shard {}/{m} missing", k + 1));
    }
    // Tests in enumeration order and named as one run names them (the
    // suffixes in that order), so tests of different shards never share a
    // name and the merge lists exactly what the whole run lists.
    out.tests.sort_by_key(|t| t.order);
    let mut names: HashSet<String> = HashSet::new();
    for t in &mut out.tests {
        let base = if t.base.is_empty() {
            t.name.clone()
        } else {
            t.base.clone()
        };
        let mut name = base.clone();
        let mut k = 2;
        while !names.insert(name.clone()) {
            name = format!("{base}-{k}");
            k += 1;
        }
        t.name = name;
    }
    Ok(out)
}
