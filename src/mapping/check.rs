//! Checking a mapping on one source test: the source model's final states
//! against those of the compiled test under the target model.
//!
//! Both sides observe the *full* final state: every named register of the
//! source (renamed on the target side) and every location, whatever the
//! test's condition names. Verdicts:
//! - `racy`: some allowed source execution raises a flag the mapping calls
//!   undefined (`data-race`, ...): the program has no defined behaviour and
//!   any target behaviour is fine;
//! - `sound`: every final state the target allows, the source allows;
//! - `unsound`: the others, with the extra states.

use super::compile::{Compiled, compile};
use super::format::Mapping;
use crate::driver::ModelCache;
use crate::ir::{CmpOp, InstrKind, Prop, Quantifier, Term, Test, Value};
use crate::verdict::{CheckOptions, CheckResult, ExecutionView};
use std::collections::BTreeSet;

/// A set of final states (values in observed order).
pub use crate::verdict::StateSet;

/// The verdict on one test.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    Sound,
    Racy,
    Unsound,
}

impl Verdict {
    /// `sound`, `racy`, `unsound`.
    pub fn name(&self) -> &'static str {
        match self {
            Verdict::Sound => "sound",
            Verdict::Racy => "racy",
            Verdict::Unsound => "unsound",
        }
    }
}

/// Options of a mapping check.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Limits for each model run.
    pub check: CheckOptions,
    /// Explain an unsound verdict: the source axiom forbidding the first
    /// extra state and a target execution reaching it.
    pub why: bool,
    /// Target model instead of the mapping's (`--target-model`).
    pub target_model: Option<String>,
}

/// The outcome of checking one test.
#[derive(Clone, Debug)]
pub struct Report {
    pub file: String,
    pub test: String,
    pub mapping: String,
    pub source_model: String,
    pub target_model: String,
    pub verdict: Verdict,
    /// Names of the observed terms, in the source's names.
    pub observed: Vec<String>,
    /// Final states allowed by the source model (values in `observed` order).
    pub source_states: Vec<Vec<Value>>,
    /// Final states allowed by the target model, renamed to source names.
    /// With the SC shortcut only those outside the SC states; with a
    /// [`Hints::bound`], a set holding them (see [`check_test_bounded`]).
    pub target_states: Vec<Vec<Value>>,
    /// Target states the source forbids.
    pub extra_states: Vec<Vec<Value>>,
    /// Source flags raised by allowed executions that make it undefined.
    pub undefined_flags: Vec<String>,
    /// With `why`: the explanation text (source axiom, target witness).
    pub why: String,
    /// Whether the source model ran (not when every target state is an SC
    /// state of a race-free program, see [`check_test_with`]).
    pub source_model_ran: bool,
    /// The source test, with every register and location observed.
    pub source: Test,
    /// The compiled test (full observation); `None` when the check was
    /// decided without it (a campaign's check bounded by weaker programs
    /// whose source allows every bound state).
    pub compiled: Option<Compiled>,
}

impl Report {
    /// `0:r0=1; x=2;` for a state in source names.
    pub fn state_text(&self, st: &[Value]) -> String {
        crate::report::state_text(&self.source, &self.observed, st)
    }
}

/// Every named register a thread writes (not the front end's `%` temporaries)
/// and every location, as observed terms.
pub fn full_observation(test: &Test) -> Vec<Term> {
    let mut out = Vec::new();
    for t in &test.threads {
        for ins in &t.code {
            let dst = match &ins.kind {
                InstrKind::Load { dst, .. } | InstrKind::Mov { dst, .. } => Some(dst),
                InstrKind::Rmw { dst, .. } => dst.as_ref(),
                _ => None,
            };
            if let Some(d) = dst
                && !d.starts_with('%')
            {
                let term = Term::Reg {
                    thread: t.id,
                    reg: d.clone(),
                };
                if !out.contains(&term) {
                    out.push(term);
                }
            }
        }
    }
    for (l, loc) in test.locations.iter().enumerate() {
        if loc.alias_of.is_none() {
            out.push(Term::Loc(l));
        }
    }
    out
}

/// `test` with `exists (state)` as its condition (terms in `observed`).
pub fn with_state_condition(test: &Test, observed: &[Term], state: &[Value]) -> Test {
    let mut t = test.clone();
    let mut prop: Option<Prop> = None;
    for (term, v) in observed.iter().zip(state) {
        let c = Prop::Cmp(CmpOp::Eq, term.clone(), Term::Const(*v));
        prop = Some(match prop {
            None => c,
            Some(p) => Prop::And(Box::new(p), Box::new(c)),
        });
    }
    t.condition.quantifier = Quantifier::Exists;
    t.condition.prop = prop.unwrap_or(Prop::True);
    t
}

fn run(
    test: &Test,
    spec: &str,
    cache: &ModelCache,
    opts: &CheckOptions,
) -> Result<CheckResult, String> {
    let judge = cache.judge(spec)?;
    let operational = !matches!(judge, crate::driver::Judge::Cat { .. });
    judge.check(test, opts).map_err(|e| {
        if operational {
            return e.to_string();
        }
        let file = test.source_name();
        format!("{file}: {e}")
    })
}

/// The index in `observed` (printable term names) of each of `names`,
/// renamed by `rename`.
fn positions(
    observed: &[String],
    names: &[String],
    rename: &dyn Fn(&str) -> String,
) -> Result<Vec<usize>, String> {
    names
        .iter()
        .map(|n| {
            let tn = rename(n);
            observed
                .iter()
                .position(|o| *o == tn)
                .ok_or_else(|| format!("the compiled test does not observe {tn} (for {n})"))
        })
        .collect()
}

/// Observed terms in a canonical order and the index of each in `r`'s states.
fn project(
    r: &CheckResult,
    names: &[String],
    rename: &dyn Fn(&str) -> String,
) -> Result<Vec<Vec<Value>>, String> {
    let idx = positions(&r.observed, names, rename)?;
    let set: BTreeSet<Vec<Value>> = r
        .states
        .keys()
        .map(|st| idx.iter().map(|&i| st[i]).collect())
        .collect();
    Ok(set.into_iter().collect())
}

/// Checks `m` on the source test `src` (any condition; every register and
/// location is compared). `file` names the test in the report.
pub fn check_test(
    m: &Mapping,
    src: &Test,
    file: &str,
    cache: &ModelCache,
    opts: &Options,
) -> Result<Report, String> {
    check_test_with(m, src, file, cache, opts, false, None)
}

/// How a check compiles the source test (the default: [`compile`]).
pub type CompileFn<'a> = &'a (dyn Fn(&Test) -> Result<Compiled, crate::diag::Diagnostic> + Sync);

/// Whether the SC shortcut of [`check_test_with`] is sound for `m`'s source
/// model: every SC interleaving of a program is one of its consistent
/// executions (argued for the built-in `sc11` and `rc11`, docs/mappings.md).
pub fn sc_shortcut_sound(m: &Mapping) -> bool {
    matches!(m.source.as_str(), "sc11" | "rc11")
}

/// Whether [`check_test_with`] takes the SC shortcut for a program of `m`
/// (`race_free` as the caller knows it) under `opts`: not when explaining,
/// which needs both models' full runs.
pub fn sc_shortcut_applies(m: &Mapping, opts: &Options, race_free: bool) -> bool {
    race_free && sc_shortcut_sound(m) && !opts.why
}

/// [`check_test`], and with `race_free` (the caller knows that no source
/// execution of `src` raises an undefined flag, and [`sc_shortcut_sound`]
/// holds) the target runs first: a target state that some SC interleaving
/// reaches is source-allowed, so the source model runs only when the target
/// allows a state outside the SC states. `compiler` replaces [`compile`]
/// (`verify-mapping` builds the target IR directly, [`super::build`]). When it does not run, the report's
/// `source_states` are the SC states (a subset of the source's).
pub fn check_test_with(
    m: &Mapping,
    src: &Test,
    file: &str,
    cache: &ModelCache,
    opts: &Options,
    race_free: bool,
    compiler: Option<CompileFn<'_>>,
) -> Result<Report, String> {
    check_test_bounded(
        m,
        src,
        file,
        cache,
        opts,
        race_free,
        compiler,
        Hints::default(),
    )
    .map(|(r, _)| r)
}

/// What a campaign already knows about a program from the other programs
/// of its shape ([`super::dominance`]); used only when the SC shortcut
/// applies.
#[derive(Clone, Copy, Default)]
pub struct Hints<'a> {
    /// A set holding every final state outside the SC states that the
    /// target may allow: only those are judged.
    pub bound: Option<&'a StateSet>,
    /// The program's SC states, when known (they depend only on the shape).
    pub sc: Option<&'a BTreeSet<Vec<Value>>>,
}

/// [`check_test_with`] with what `hints` tell. Also returns, when
/// the SC shortcut applied, a set of states outside the SC states that
/// holds every such state the target allows (empty when the target allows
/// SC states only): without a bound, exactly the target's; with one, the
/// bound's states that the source allows or the target was found to reach.
/// With a bound the source model decides the bound's states first, and
/// the target runs only on those the source forbids: the program is sound
/// when the source allows every bound state the target may reach.
/// `verify-mapping` gets `bound` from weaker programs of the same shape
/// ([`super::dominance`]).
#[allow(clippy::too_many_arguments)]
pub fn check_test_bounded(
    m: &Mapping,
    src: &Test,
    file: &str,
    cache: &ModelCache,
    opts: &Options,
    race_free: bool,
    compiler: Option<CompileFn<'_>>,
    hints: Hints<'_>,
) -> Result<(Report, Option<StateSet>), String> {
    let (source, terms, names) = fully_observed(src);
    let do_compile = |source: &Test| {
        match compiler {
            Some(c) => c(source),
            None => compile(m, source),
        }
        .map_err(|d| d.render())
    };
    let target_model = opts
        .target_model
        .clone()
        .unwrap_or_else(|| m.target.clone());
    let mut report = Report {
        file: file.to_string(),
        test: src.name.clone(),
        mapping: m.name.clone(),
        source_model: m.source.clone(),
        target_model: target_model.clone(),
        verdict: Verdict::Racy,
        observed: names.clone(),
        source_states: Vec::new(),
        target_states: Vec::new(),
        extra_states: Vec::new(),
        undefined_flags: Vec::new(),
        why: String::new(),
        source_model_ran: true,
        source,
        compiled: None,
    };
    let sc = if sc_shortcut_applies(m, opts, race_free) {
        match hints.sc {
            Some(sc) => Some(sc.clone()),
            None => super::sc::sc_states(&report.source, &terms),
        }
    } else {
        None
    };
    let sc = match (sc, hints.bound) {
        (Some(sc), Some(b)) => {
            let target = Target {
                model: &target_model,
                compile: &do_compile,
            };
            return bounded(m, report, cache, opts, target, &names, sc, b);
        }
        (sc, _) => sc,
    };
    let compiled = do_compile(&report.source)?;
    if let Some(sc) = sc {
        return sc_shortcut(m, report, compiled, cache, opts, &target_model, &names, sc);
    }
    let src_res = run(&report.source, &m.source, cache, &opts.check)?;
    report.source_states = project(&src_res, &names, &|n| n.to_string())?;
    report.undefined_flags = undefined(m, &src_res);
    if !report.undefined_flags.is_empty() {
        return Ok((report, None));
    }
    let tgt_res = run(&compiled.test, &target_model, cache, &opts.check)?;
    report.target_states = project(&tgt_res, &names, &|n| compiled.term_name(n))?;
    report.compiled = Some(compiled);
    let mut report = finish(report);
    if opts.why && report.verdict == Verdict::Unsound {
        report.why = explain(m, &report, &terms, &target_model, cache, opts)?;
    }
    Ok((report, None))
}

/// The SC shortcut without a bound: the target run need not judge
/// candidates reaching an SC state (those states are source-allowed
/// anyway), so `target_states` holds the states outside the SC set only,
/// and the source run decides just those.
#[allow(clippy::too_many_arguments)]
fn sc_shortcut(
    m: &Mapping,
    mut report: Report,
    compiled: Compiled,
    cache: &ModelCache,
    opts: &Options,
    target_model: &str,
    names: &[String],
    sc: BTreeSet<Vec<Value>>,
) -> Result<(Report, Option<StateSet>), String> {
    let states = sc.iter().cloned().collect();
    report.target_states = target_run(&compiled, target_model, cache, opts, names, states, false)?;
    report.compiled = Some(compiled);
    // (A filter the test could not take leaves SC states in.)
    report.target_states.retain(|s| !sc.contains(s));
    let non_sc: StateSet = report.target_states.iter().cloned().collect();
    if non_sc.is_empty() {
        return Ok((sound_by_sc(report, sc), Some(non_sc)));
    }
    let allowed = source_allows(m, &mut report, cache, opts, names, &non_sc)?;
    if !report.undefined_flags.is_empty() {
        // Cannot happen for a race-free program; answer as the plain
        // check does.
        report.target_states.clear();
        return Ok((report, None));
    }
    report.source_states = sorted(allowed.into_iter().chain(sc));
    Ok((finish(report), Some(non_sc)))
}

/// The SC shortcut with `bound`, a set of non-SC states that holds every
/// non-SC state the target allows (from weaker programs of the shape). The
/// source run decides the bound's states first; the target runs only when
/// the source forbids some of them, and judges just those. The program is
/// sound when the source allows every bound state the target may reach.
/// Returns, as the set weaker programs give stronger ones, the bound's
/// states the source allows (the target may reach them or not: that set
/// still holds every non-SC target state) and those the target was found
/// to allow.
#[allow(clippy::too_many_arguments)]
fn bounded(
    m: &Mapping,
    mut report: Report,
    cache: &ModelCache,
    opts: &Options,
    target: Target<'_>,
    names: &[String],
    sc: BTreeSet<Vec<Value>>,
    bound: &StateSet,
) -> Result<(Report, Option<StateSet>), String> {
    if bound.is_empty() {
        return Ok((sound_by_sc(report, sc), Some(StateSet::default())));
    }
    let allowed = source_allows(m, &mut report, cache, opts, names, bound)?;
    if !report.undefined_flags.is_empty() {
        return Ok((report, None));
    }
    let forbidden: StateSet = bound.difference(&allowed).cloned().collect();
    let mut reached: StateSet = StateSet::default();
    if !forbidden.is_empty() {
        let compiled = (target.compile)(&report.source)?;
        reached = target_run(&compiled, target.model, cache, opts, names, forbidden, true)?
            .into_iter()
            .filter(|s| bound.contains(s))
            .collect();
        report.compiled = Some(compiled);
    }
    let may_reach: StateSet = allowed.union(&reached).cloned().collect();
    report.target_states = sorted(may_reach.iter().cloned());
    report.source_states = sorted(allowed.into_iter().chain(sc));
    Ok((finish(report), Some(may_reach)))
}

/// Whether the source model allows every state of `states` (full
/// observation, as [`check_test_bounded`] numbers them) for `src`, a
/// program that cannot race. Used to extend what a campaign knows about
/// the source ([`super::dominance::Shape::climb`]).
pub fn source_allows_all(
    m: &Mapping,
    src: &Test,
    cache: &ModelCache,
    opts: &Options,
    states: &StateSet,
) -> Result<bool, String> {
    let (source, _, names) = fully_observed(src);
    let (allowed, flags) = source_run(m, &source, cache, opts, &names, states)?;
    Ok(flags.is_empty() && states.is_subset(&allowed))
}

/// The target side of a bounded check: its model, and how to compile the
/// source (only done when the target has to run).
struct Target<'a> {
    model: &'a str,
    compile: &'a dyn Fn(&Test) -> Result<Compiled, String>,
}

/// Runs the source model judging only `states` (non-SC states of a
/// race-free program); returns those it allows and sets the report's
/// undefined flags.
fn source_allows(
    m: &Mapping,
    report: &mut Report,
    cache: &ModelCache,
    opts: &Options,
    names: &[String],
    states: &StateSet,
) -> Result<StateSet, String> {
    let (allowed, flags) = source_run(m, &report.source, cache, opts, names, states)?;
    report.undefined_flags = flags;
    Ok(allowed)
}

/// Runs the target model on `compiled` with a filter on `states` (named by
/// the source's `names`): skipped, or with `only` the only ones judged.
/// The allowed states, in source names.
fn target_run(
    compiled: &Compiled,
    model: &str,
    cache: &ModelCache,
    opts: &Options,
    names: &[String],
    states: StateSet,
    only: bool,
) -> Result<Vec<Vec<Value>>, String> {
    let rename = |n: &str| compiled.term_name(n);
    let check_opts = filtered(&opts.check, &compiled.test, names, &rename, states, only);
    let res = run(&compiled.test, model, cache, &check_opts)?;
    project(&res, names, &rename)
}

/// `src` observing every register and location ([`full_observation`]),
/// with those terms and their names.
fn fully_observed(src: &Test) -> (Test, Vec<Term>, Vec<String>) {
    let mut source = src.clone();
    let terms = full_observation(&source);
    source.observed = terms.clone();
    let names = terms
        .iter()
        .map(|t| crate::ir::outcome::term_name(&source, t))
        .collect();
    (source, terms, names)
}

/// Runs the source model on `source` (observing `names`) judging only
/// `states`: those of them it allows, and the undefined flags raised.
fn source_run(
    m: &Mapping,
    source: &Test,
    cache: &ModelCache,
    opts: &Options,
    names: &[String],
    states: &StateSet,
) -> Result<(StateSet, Vec<String>), String> {
    let keep = |n: &str| n.to_string();
    let src_opts = filtered(&opts.check, source, names, &keep, states.clone(), true);
    let res = run(source, &m.source, cache, &src_opts)?;
    let allowed = project(&res, names, &keep)?
        .into_iter()
        .filter(|s| states.contains(s))
        .collect();
    Ok((allowed, undefined(m, &res)))
}

/// `states` in order, without repeats.
fn sorted(states: impl IntoIterator<Item = Vec<Value>>) -> Vec<Vec<Value>> {
    states
        .into_iter()
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect()
}

/// `report` decided `sound` by the SC shortcut alone: every target state
/// is an SC state (`sc`), which the source allows.
fn sound_by_sc(mut report: Report, sc: BTreeSet<Vec<Value>>) -> Report {
    report.source_states = sc.into_iter().collect();
    report.verdict = Verdict::Sound;
    report.source_model_ran = false;
    report
}

/// `opts` with a [`StateFilter`](crate::verdict::StateFilter) over `test`:
/// `states` give the values of the terms `names` (renamed for `test` by
/// `rename`) and are skipped, or with `only` all others are. Unchanged when
/// `test` does not observe one of the terms.
fn filtered(
    opts: &CheckOptions,
    test: &Test,
    names: &[String],
    rename: &dyn Fn(&str) -> String,
    states: StateSet,
    only: bool,
) -> CheckOptions {
    let observed: Vec<String> = crate::ir::outcome::observed_terms(test)
        .iter()
        .map(|t| crate::ir::outcome::term_name(test, t))
        .collect();
    let mut out = opts.clone();
    if let Ok(positions) = positions(&observed, names, rename) {
        out.skip = Some(std::sync::Arc::new(crate::verdict::StateFilter {
            positions,
            states,
            only,
        }));
    }
    out
}

/// The source flags of `r` that `m` calls undefined.
fn undefined(m: &Mapping, r: &CheckResult) -> Vec<String> {
    r.flags
        .iter()
        .filter(|f| m.is_undefined_flag(f))
        .cloned()
        .collect()
}

/// Sets the extra states and the verdict from the two state sets.
fn finish(mut report: Report) -> Report {
    let allowed: BTreeSet<&Vec<Value>> = report.source_states.iter().collect();
    report.extra_states = report
        .target_states
        .iter()
        .filter(|s| !allowed.contains(s))
        .cloned()
        .collect();
    report.verdict = if report.extra_states.is_empty() {
        Verdict::Sound
    } else {
        Verdict::Unsound
    };
    report
}

/// The source axiom forbidding the first extra state, and a target
/// execution reaching it.
fn explain(
    m: &Mapping,
    r: &Report,
    terms: &[Term],
    target_model: &str,
    cache: &ModelCache,
    opts: &Options,
) -> Result<String, String> {
    let st = &r.extra_states[0];
    let mut out = format!("Extra state: {}\n", r.state_text(st));
    let src = with_state_condition(&r.source, terms, st);
    let mut o = opts.check.clone();
    o.why = true;
    let sres = run(&src, &r.source_model, cache, &o)?;
    let why = crate::report::why::explain(&src, &sres);
    out.push_str(&format!("Source ({}) forbids it:\n", r.source_model));
    out.push_str(if why.is_empty() {
        "  (no explanation: the state is not produced by any source candidate)\n"
    } else {
        &why
    });
    if !out.ends_with('\n') {
        out.push('\n');
    }
    let compiled = super::compile::compile(m, &src).map_err(|d| d.render())?;
    let mut o = opts.check.clone();
    o.keep_witnesses = 1;
    let tres = run(&compiled.test, target_model, cache, &o)?;
    // A machine's trace in its own notation (the cache machine's Figs.
    // 4/5 style) when it has one.
    if let Some(trace) = tres
        .operational
        .as_ref()
        .and_then(|op| op.traces.iter().find(|t| t.satisfies))
        .and_then(|t| t.text.clone())
    {
        out.push_str(&format!(
            "Target ({target_model}) machine trace reaching it:\n"
        ));
        out.push_str(&trace);
    } else if let Some(t) = tres
        .operational
        .as_ref()
        .and_then(|op| op.traces.iter().find(|t| t.satisfies))
    {
        out.push_str(&format!(
            "Target ({target_model}) machine trace reaching it:\n"
        ));
        for (i, step) in t.steps.iter().enumerate() {
            out.push_str(&format!("  {:3}. {step}\n", i + 1));
        }
    } else if let Some(w) = tres.witnesses.first() {
        out.push_str(&format!("Target ({target_model}) execution reaching it:\n"));
        out.push_str(&witness_text(&compiled.test, w));
    }
    Ok(out)
}

/// The rf and co edges of an execution, one per line.
pub fn witness_text(test: &Test, w: &ExecutionView) -> String {
    let mut out = String::new();
    for (name, edges) in &w.relations {
        if name != "rf" && name != "co" {
            continue;
        }
        for (a, b) in edges {
            out.push_str(&format!(
                "  {} -{name}-> {}\n",
                crate::report::event_label(test, &w.events[*a]),
                crate::report::event_label(test, &w.events[*b])
            ));
        }
    }
    out
}
