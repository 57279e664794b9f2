//! The search: shapes from the shared enumerator
//! ([`crate::mapping::enumerate::for_each_shape_of_size_while`]), each
//! filled with vocabulary entries, each canonical program judged once and
//! every outcome of it classified (docs/synthesis.md).

use super::judge::{Judge, Prepared};
use super::judged::Judged;
use super::lattice::{self, Fillings, MayForbid, RemovalFacts};
use super::program::{Cond, SOp, SProgram, SThread, weakenings_of};
use super::removals::{Question, Removals};
use super::sc::sc_judged;
use super::scope::scope_effective;
use super::vocab::{Dialect, Vocab};
use crate::mapping::canon::CanonPlan;
use crate::mapping::enumerate::{
    self, Op, OpKind, Place, Reduce, Space, Thread, is_canonical_program, unit_hash,
};
use rayon::prelude::*;
use std::sync::Arc;

/// What makes an outcome a finding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Criterion {
    /// Forbidden, and every one-step weakening allowed.
    Minimal,
    /// Forbidden.
    Forbidden,
}

/// What the search ranges over.
#[derive(Clone, Debug)]
pub struct Space2 {
    pub bound: usize,
    /// `(k, m)`: only shapes whose hash is k-1 modulo m.
    pub shard: Option<(usize, usize)>,
    /// Judge each shape's strongest program first and skip the outcomes
    /// it allows in every weaker program (docs/synthesis.md, "Cuts").
    pub prune: bool,
    /// At most this many GPUs, and CTAs per GPU (scoped dialects).
    pub max_gpus: u8,
    pub max_ctas: u8,
}

/// How programs are judged: one model (synthesis) or two (distinguishing).
pub enum Mode<'a> {
    Synth {
        judge: &'a Judge<'a>,
        criterion: Criterion,
    },
    Distinguish {
        a: &'a Judge<'a>,
        b: &'a Judge<'a>,
    },
}

/// One finding.
#[derive(Clone, Debug)]
pub struct Found {
    pub program: SProgram,
    pub cond: Cond,
    pub events: usize,
    /// Distinguishing: true when A allows and B forbids.
    pub a_allows: bool,
    /// Some execution of the program raises a flag under a model.
    pub racy: bool,
    /// Position in enumeration order (shape, program, outcome).
    pub order: (usize, usize, usize),
}

/// Counts of one search.
#[derive(Clone, Debug, Default)]
pub struct Counts {
    pub shapes: usize,
    pub programs: usize,
    pub outcomes: usize,
    /// Forbidden (synthesis) or distinguishing outcomes.
    pub found: usize,
    /// Outcomes whose coherence order the final values cannot pin (a
    /// location written three times or more); still judged as tests.
    pub inexpressible: usize,
    /// Outcomes skipped by the strongest-program cut.
    pub cut: usize,
    /// Fillings of shapes (before the isomorphism test) the scope cut
    /// leaves out: some instruction's scope holds no thread its next
    /// narrower scope does not hold ([`super::scope::scope_effective`]).
    pub scope_equivalent: usize,
}

impl Counts {
    /// Adds another search's counts.
    pub fn add(&mut self, c: &Counts) {
        self.shapes += c.shapes;
        self.programs += c.programs;
        self.outcomes += c.outcomes;
        self.found += c.found;
        self.inexpressible += c.inexpressible;
        self.cut += c.cut;
        self.scope_equivalent += c.scope_equivalent;
    }
}

/// Every shape of the search, in enumeration order, with its number.
pub fn shapes(vocab: &Vocab, sp: &Space2) -> Vec<(usize, Vec<Thread>)> {
    let mut out = Vec::new();
    for_each_shape(vocab, sp, &mut |seq, threads| {
        out.push((seq, threads.to_vec()));
        true
    });
    out
}

/// Calls `f` on every shape of the search (this shard's), in enumeration
/// order, with its number, while `f` returns true.
fn for_each_shape(vocab: &Vocab, sp: &Space2, f: &mut dyn FnMut(usize, &[Thread]) -> bool) {
    let kinds: Vec<(OpKind, u8, u8, bool)> =
        [OpKind::Load, OpKind::Store, OpKind::Rmw, OpKind::Fence]
            .into_iter()
            .filter(|&k| vocab.has(k))
            .map(|k| (k, 0, 0, false))
            .collect();
    // Threads go into CTAs of GPUs (work-groups of devices) for PTX and
    // for an OpenCL vocabulary with scopes.
    let scoped = vocab.dialect == Dialect::Ptx
        || (vocab.dialect == Dialect::OpenCl && !vocab.scopes.is_empty());
    let space = Space {
        bound: sp.bound,
        cpu: vocab.dialect == Dialect::X86,
        gpu: scoped,
        scoped: vocab.dialect == Dialect::X86 || scoped,
        merge_scopes: false,
        max_threads: sp.bound,
        max_locations: sp.bound,
        max_groups: (sp.max_gpus * sp.max_ctas) as usize,
        max_thread_size: sp.bound,
        orders: Vec::new(),
        remote: false,
        rmw_add: false,
        fragment: Some(kinds),
        reduce: Reduce::default(),
        dominated: Vec::new(),
        slice: None,
    };
    let mut seq = 0;
    let mut going = true;
    for n in 1..=sp.bound {
        if !going {
            break;
        }
        // An RMW counts `extra` events more than its one operation, so a
        // shape of `n` operations within the bound has at most
        // `(bound - n) / extra` of them: the enumerator builds no other
        // (the event count below then never exceeds the bound).
        let extra = vocab.events(OpKind::Rmw).saturating_sub(1);
        let max_rmws = (sp.bound - n).checked_div(extra).unwrap_or(usize::MAX);
        enumerate::for_each_shape_of_size_while(&space, n, false, max_rmws, &mut |threads| {
            let events: usize = threads
                .iter()
                .flat_map(|t| &t.ops)
                .map(|o| vocab.events(o.kind))
                .sum();
            if events > sp.bound || !placement_ok(threads, sp) {
                return true;
            }
            let me = seq;
            seq += 1;
            if let Some((k, m)) = sp.shard {
                let places: Vec<Place> = threads.iter().map(|t| t.place).collect();
                if unit_hash(threads, &places) % m as u64 != (k - 1) as u64 {
                    return true;
                }
            }
            going = f(me, threads);
            going
        });
    }
}

/// At most `max_gpus` GPUs and `max_ctas` CTAs on each.
fn placement_ok(threads: &[Thread], sp: &Space2) -> bool {
    let mut cta: Vec<(u8, u8)> = Vec::new();
    for t in threads {
        if let Place::Gpu { dev, wg } = t.place {
            if dev >= sp.max_gpus {
                return false;
            }
            if !cta.contains(&(dev, wg)) {
                cta.push((dev, wg));
            }
        }
    }
    (0..sp.max_gpus).all(|d| cta.iter().filter(|c| c.0 == d).count() <= sp.max_ctas as usize)
}

/// The program of filled threads: written values 1, 2, ... in thread then
/// program order (1, 2, 4, ... when some entry is an add, so that sums of
/// values along chains of adds stay distinct), registers numbered per
/// thread.
fn build(vocab: &Vocab, threads: &[Thread]) -> SProgram {
    let bits = threads
        .iter()
        .flat_map(|t| &t.ops)
        .any(|o| vocab.entries[o.order as usize].adds);
    let mut value = 0;
    SProgram {
        threads: threads
            .iter()
            .map(|t| {
                let mut reg = 0;
                SThread {
                    place: t.place,
                    ops: t
                        .ops
                        .iter()
                        .map(|o: &Op| {
                            let entry = o.order as usize;
                            let kind = vocab.entries[entry].kind;
                            let mut op = SOp {
                                entry,
                                loc: o.loc,
                                value: 0,
                                reg: u8::MAX,
                            };
                            if matches!(kind, OpKind::Store | OpKind::Rmw) {
                                op.value = if bits { 1 << value } else { value + 1 };
                                value += 1;
                            }
                            if matches!(kind, OpKind::Load | OpKind::Rmw) {
                                op.reg = reg;
                                reg += 1;
                            }
                            op
                        })
                        .collect(),
                }
            })
            .collect(),
    }
}

/// `p` with each operation's entry replaced by its one extreme entry in
/// `extreme` (`Vocab::tops`: the strongest program above `p`;
/// `Vocab::bottoms`: the weakest below it), values and registers kept;
/// `None` when some entry has several.
pub(super) fn extreme_program(extreme: &[Option<usize>], p: &SProgram) -> Option<SProgram> {
    let mut q = p.clone();
    for t in &mut q.threads {
        for o in &mut t.ops {
            o.entry = extreme[o.entry]?;
        }
    }
    Some(q)
}

/// The mode's judges: the one judge, or A then B.
pub(super) fn judges_of<'a>(mode: &'a Mode<'a>) -> Vec<&'a Judge<'a>> {
    match mode {
        Mode::Synth { judge, .. } => vec![judge],
        Mode::Distinguish { a, b } => vec![a, b],
    }
}

/// How the mode classifies outcome `c` of `p` ([`classify_prepared`] with
/// `p` prepared for this one question).
fn classify(mode: &Mode<'_>, p: &SProgram, c: &Cond) -> Result<Option<bool>, String> {
    classify_prepared(mode, &prepare_all(&judges_of(mode), p, false)?, c)
}

/// `p` prepared under each judge ([`Judge::prepare`]); without SC
/// states when `sc_done` (the search applied the SC cut to `p` already).
pub(super) fn prepare_all(
    judges: &[&Judge<'_>],
    p: &SProgram,
    sc_done: bool,
) -> Result<Vec<Prepared>, String> {
    judges
        .iter()
        .map(|j| j.prepare_with(p, j.sc_cut && !sc_done))
        .collect()
}

/// How the mode classifies outcome `c` of a program prepared under each of
/// its judges ([`judges_of`]'s order): `Some(false)` when synthesis's judge
/// forbids it, `Some(x)` when distinguishing's A allows it (`x`) and B does
/// not or the other way round, `None` otherwise.
pub(super) fn classify_prepared(
    mode: &Mode<'_>,
    preps: &[Prepared],
    c: &Cond,
) -> Result<Option<bool>, String> {
    Ok(match (mode, preps) {
        (Mode::Synth { judge, .. }, [p]) => (!judge.allows_prepared(p, c)?).then_some(false),
        (Mode::Distinguish { a, b }, [pa, pb]) => {
            let (x, y) = (a.allows_prepared(pa, c)?, b.allows_prepared(pb, c)?);
            (x != y).then_some(x)
        }
        _ => return Err("internal: programs prepared for other judges".into()),
    })
}

/// What a shape's fillings with one pattern of adds (which RMW slots
/// add) share: the programs differ only in orders and scopes, so their
/// outcomes and the outcomes an interleaving reaches are the same.
struct Pattern {
    adds: u64,
    outcomes: Vec<Cond>,
    pinned: bool,
    /// The outcomes some interleaving reaches (with the SC cut).
    sc: Box<[u64]>,
}

/// The pattern of the filling `threads` (its adds `adds`) in `patterns`,
/// computed and added when missing: its outcomes and, with the SC cut,
/// those an interleaving reaches. The program built for a missing one is
/// left in `built` when asked for.
fn pattern_of(
    vocab: &Vocab,
    threads: &[Thread],
    adds: u64,
    prune: bool,
    patterns: &mut Vec<Pattern>,
    built: Option<&mut Option<SProgram>>,
) -> usize {
    if let Some(k) = patterns.iter().position(|q| q.adds == adds) {
        return k;
    }
    let p = build(vocab, threads);
    let (outcomes, pinned) = p.outcomes(vocab);
    let mut sc = vec![0u64; outcomes.len().div_ceil(64)].into_boxed_slice();
    if prune {
        let reached = sc_judged(vocab, &p);
        for (ci, c) in outcomes.iter().enumerate() {
            if reached.allows(c) {
                sc[ci / 64] |= 1 << (ci % 64);
            }
        }
    }
    patterns.push(Pattern {
        adds,
        outcomes,
        pinned,
        sc,
    });
    if let Some(b) = built {
        *b = Some(p);
    }
    patterns.len() - 1
}

/// Searches one shape; returns its findings and counts.
///
/// The fillings come in lattice order ([`Fillings`]); with the cuts on,
/// an outcome some filling one step stronger allows is allowed (the
/// lattice cut), and a filling whose every outcome is so allowed is
/// neither built nor judged.
pub fn search_shape(
    vocab: &Vocab,
    mode: &Mode<'_>,
    seq: usize,
    shape: &[Thread],
    prune: bool,
) -> Result<(Vec<Found>, Counts), String> {
    let mut counts = Counts {
        shapes: 1,
        ..Counts::default()
    };
    let places = matches!(vocab.dialect, Dialect::Ptx | Dialect::OpenCl);
    let judges = judges_of(mode);
    // Whether findings must be minimal (every criterion but `forbidden`).
    let minimality = !matches!(
        mode,
        Mode::Synth {
            criterion: Criterion::Forbidden,
            ..
        }
    );
    let fill = Fillings::new(vocab, shape, |t, e| {
        !prune || scope_effective(vocab, shape, t, e)
    });
    counts.scope_equivalent += fill.all - fill.total;
    // Found, with the filling's original rank for its number.
    let mut found: Vec<(usize, Found)> = Vec::new();
    if fill.total == 0 {
        return Ok((Vec::new(), counts));
    }
    // The strongest-program cut, worth it only when the shape has several
    // fillings: each program's strongest program above it, judged once
    // per distinct one (one per shape when each kind has a single
    // strongest entry; programs with adds in some slots have their own).
    let top_cut = prune && fill.total > 1;
    let mut top_judged: Vec<(SProgram, Vec<Arc<Judged>>)> = Vec::new();
    let mut patterns: Vec<Pattern> = Vec::new();
    let mut may = MayForbid::default();
    // Removals asked before judging (synthesis of minimal tests;
    // distinguishing with the cuts on): an outcome a removal keeps
    // forbidden stays so one step weaker in the removed slot (the same
    // program remains), so its removal checks are not made again; a
    // removal that allows it allows it one step weaker in any slot.
    let removals_first = match mode {
        Mode::Synth { .. } => minimality,
        Mode::Distinguish { .. } => prune,
    };
    let blocker_cut = prune && removals_first;
    let mut ups: Vec<(usize, usize, usize)> = Vec::new();
    // The original ranks of the canonical fillings (programs are numbered
    // in that order).
    let mut ranks: Vec<usize> = Vec::new();
    let mut threads: Vec<Thread> = shape.to_vec();
    let mut pick = vec![0usize; fill.slots.len()];
    // The shape's canonicity test, decided per filling on a few slots'
    // entries ([`CanonPlan`]), when the shape has fillings enough to pay
    // for the plan; each slot's entry as the test reads it.
    let plan = if fill.total > 8 {
        CanonPlan::new(shape)
    } else {
        None
    };
    let mut entry = vec![0u8; fill.slots.len()];
    let mut idx = 0usize;
    loop {
        let mut adds = 0u64;
        for (s, &(t, i)) in fill.slots.iter().enumerate() {
            let e = fill.per[s][pick[s]];
            threads[t].ops[i].order = e as u8;
            entry[s] = e as u8;
            if vocab.entries[e].adds {
                adds |= 1 << s;
            }
        }
        let canonical = match &plan {
            Some(plan) => plan.is_canonical(&entry),
            None => is_canonical_program(&threads),
        };
        // What every upper neighbour may forbid (the lattice cut).
        ups.clear();
        if prune {
            ups.extend(fill.upper_slots(idx, &pick));
        }
        let common = if prune {
            may.common(ups.iter().map(|u| u.2))
        } else {
            None
        };
        let dead = common.as_ref().is_some_and(|c| !lattice::any(c));
        // Only a filling with a weaker neighbour passes its set on.
        let passes = prune && !dead && fill.has_lower(&pick);
        // What the upper neighbours know of the removals (the blocker
        // cut).
        let mut facts = if blocker_cut && !dead && (canonical || passes) {
            inherited_facts(vocab, &fill, &pick, &ups, &may)
        } else {
            None
        };
        if !canonical {
            // Not judged: its neighbours' set passes on as it is (what an
            // interleaving reaches is the same for every filling of the
            // pattern, and taken out where a program is judged).
            if passes {
                let set = match common {
                    Some(c) => c,
                    None => {
                        let k = pattern_of(vocab, &threads, adds, prune, &mut patterns, None);
                        lattice::full(patterns[k].outcomes.len())
                    }
                };
                may.set_with(idx, set, facts);
            }
        } else {
            let rank = fill.original_rank(&pick);
            ranks.push(rank);
            let mut built = None;
            let k = pattern_of(
                vocab,
                &threads,
                adds,
                prune,
                &mut patterns,
                Some(&mut built),
            );
            let pat = &patterns[k];
            let n = pat.outcomes.len();
            counts.programs += 1;
            counts.outcomes += n;
            if !pat.pinned {
                counts.inexpressible += n;
            }
            // What this filling may forbid: what its upper neighbours all
            // may, less what an interleaving reaches.
            let maybe = (!dead).then(|| {
                let mut maybe = common.unwrap_or_else(|| lattice::full(n));
                for (m, s) in maybe.iter_mut().zip(pat.sc.iter()) {
                    *m &= !s;
                }
                maybe
            });
            if let Some(mut maybe) = maybe.filter(|m| lattice::any(m)) {
                let p = built.unwrap_or_else(|| build(vocab, &threads));
                if blocker_cut && facts.is_none() {
                    facts = Some(vec![RemovalFacts::NONE; n].into_boxed_slice());
                }
                search_program(
                    &mut Ctx {
                        vocab,
                        mode,
                        judges: &judges,
                        prune,
                        places,
                        minimality,
                        removals_first,
                        top_cut,
                        top_judged: &mut top_judged,
                        counts: &mut counts,
                    },
                    &p,
                    &pat.outcomes,
                    &mut maybe,
                    facts.as_deref_mut(),
                    &mut |f| found.push((rank, f)),
                )?;
                if passes {
                    may.set_with(idx, maybe, facts);
                }
            } else {
                // Every outcome is allowed by some upper neighbour or
                // reached by an interleaving: nothing to build or judge.
                counts.cut += n;
            }
        }
        if !super::program::next_pick(&mut pick, |s| fill.per[s].len()) {
            break;
        }
        idx += 1;
    }
    // Programs are numbered by their place among the canonical fillings
    // in the vocabulary's own order of each slot's entries, last slot
    // fastest (the order before the lattice cut).
    ranks.sort_unstable();
    let mut out: Vec<Found> = found
        .into_iter()
        .map(|(rank, mut f)| {
            f.order.1 = ranks.partition_point(|&r| r < rank);
            f.order.0 = seq;
            f
        })
        .collect();
    out.sort_by_key(|f| f.order);
    Ok((out, counts))
}

/// The blocker cut: per outcome, what the upper neighbours `ups` (slot,
/// pick, number) of the filling with picks `pick` know of its removals. A
/// neighbour that differs in slot `s` only, with the same adds, has the
/// same outcomes and the same program once slot `s` is removed: a removal
/// of `s` that kept an outcome forbidden there keeps it forbidden here. A
/// removal of any slot that allowed an outcome there allows it here (the
/// same program, or one a step weaker). `None` when no neighbour knows
/// anything.
fn inherited_facts(
    vocab: &Vocab,
    fill: &Fillings,
    pick: &[usize],
    ups: &[(usize, usize, usize)],
    may: &MayForbid,
) -> Option<Box<[RemovalFacts]>> {
    let mut out: Option<Box<[RemovalFacts]>> = None;
    for &(s, u, g) in ups {
        let here = vocab.entries[fill.per[s][pick[s]]].adds;
        if vocab.entries[fill.per[s][u]].adds != here {
            continue;
        }
        let Some(theirs) = may.facts(g) else {
            continue;
        };
        let mine = out.get_or_insert_with(|| vec![RemovalFacts::NONE; theirs.len()].into());
        for (m, t) in mine.iter_mut().zip(theirs) {
            if s < lattice::NO_BLOCKER as usize && t.blocker == s as u8 {
                m.blocker = t.blocker;
            }
            m.cleared |= t.cleared;
        }
    }
    out
}

/// What [`search_program`] works with: the search's settings, the shape's
/// strongest programs judged so far, and its counts.
pub(super) struct Ctx<'a, 'm> {
    pub(super) vocab: &'a Vocab,
    pub(super) mode: &'a Mode<'m>,
    pub(super) judges: &'a [&'a Judge<'m>],
    pub(super) prune: bool,
    pub(super) places: bool,
    pub(super) minimality: bool,
    /// Whether a program's removals are asked before it is judged: in
    /// synthesis of minimal tests, and in distinguishing with the cuts on
    /// (set once per shape; the blocker cut follows from it).
    pub(super) removals_first: bool,
    pub(super) top_cut: bool,
    pub(super) top_judged: &'a mut Vec<(SProgram, Vec<Arc<Judged>>)>,
    pub(super) counts: &'a mut Counts,
}

/// The strongest-program cut for `p`: takes out of `maybe` each outcome
/// every judge allows in the strongest program above `p` (same values and
/// registers, so the same condition), judged once per shape and kept in
/// `cx.top_judged`.
fn strongest_program_cut(
    cx: &mut Ctx<'_, '_>,
    p: &SProgram,
    outcomes: &[Cond],
    maybe: &mut [u64],
) -> Result<(), String> {
    if !cx.top_cut || !lattice::any(maybe) {
        return Ok(());
    }
    let Some(top) = extreme_program(&cx.vocab.tops, p) else {
        return Ok(());
    };
    let tj = match cx.top_judged.iter().find(|(q, _)| *q == top) {
        Some((_, j)) => j.clone(),
        None => {
            let j = cx
                .judges
                .iter()
                .map(|j| j.judge(&top))
                .collect::<Result<Vec<_>, _>>()?;
            cx.top_judged.push((top.clone(), j.clone()));
            j
        }
    };
    debug_assert_eq!(top.terms(cx.vocab), p.terms(cx.vocab));
    for (ci, c) in outcomes.iter().enumerate() {
        if lattice::has(maybe, ci) && tj.iter().all(|j| j.allows(c)) {
            cx.counts.cut += 1;
            lattice::remove(maybe, ci);
        }
    }
    Ok(())
}

/// Classifies the outcomes of canonical program `p` that `maybe` holds
/// (the others are allowed: reached by an interleaving, or allowed one
/// step stronger), reporting each finding; leaves in `maybe` what some
/// judge may forbid in `p`: the outcomes a removal settled, and of those
/// judged, exactly what some judge forbids.
fn search_program(
    cx: &mut Ctx<'_, '_>,
    p: &SProgram,
    outcomes: &[Cond],
    maybe: &mut [u64],
    mut facts: Option<&mut [RemovalFacts]>,
    report: &mut dyn FnMut(Found),
) -> Result<(), String> {
    for ci in 0..outcomes.len() {
        if !lattice::has(maybe, ci) {
            // An interleaving reaches it, or a stronger filling allows it.
            cx.counts.cut += 1;
        }
    }
    strongest_program_cut(cx, p, outcomes, maybe)?;
    if !lattice::any(maybe) {
        return Ok(());
    }
    let (mode, judges) = (cx.mode, cx.judges);
    let mut removals = Removals::new(p);
    // Removals first: an outcome some removal keeps forbidden under every
    // judge is no finding. Synthesis: it is not minimal. Distinguishing,
    // with the cuts on: a removal is a weakening, so it allows what the
    // program allows, and the program forbids the outcome under both
    // models too. Such an outcome is not judged and stays in `maybe`.
    let mut open = maybe.to_vec();
    if cx.removals_first {
        for (ci, c) in outcomes.iter().enumerate() {
            if !lattice::has(&open, ci) {
                continue;
            }
            // Without the cut (no facts), nothing is known and nothing kept.
            let mut none = RemovalFacts::NONE;
            let known = match facts.as_deref_mut() {
                Some(f) => &mut f[ci],
                None => &mut none,
            };
            if known.blocker == lattice::NO_BLOCKER {
                let Some(k) = removals.first_blocking(cx, c, Question::Forbidden, known)? else {
                    continue;
                };
                if k < lattice::NO_BLOCKER as usize {
                    known.blocker = k as u8;
                }
            }
            lattice::remove(&mut open, ci);
        }
    }
    if !lattice::any(&open) {
        return Ok(());
    }
    // Judged on the outcomes still in question only.
    let preps = prepare_all(judges, p, cx.prune)?;
    let wanted = in_question(outcomes, &open);
    for (j, prep) in judges.iter().zip(&preps) {
        j.restrict(prep, &wanted)?;
    }
    for (ci, c) in outcomes.iter().enumerate() {
        if !lattice::has(&open, ci) {
            continue;
        }
        let Some(dir) = classify_prepared(mode, &preps, c)? else {
            continue;
        };
        // Synthesis asked the removals already (the question is the same).
        let mut unknown = RemovalFacts::NONE;
        if cx.minimality
            && matches!(mode, Mode::Distinguish { .. })
            && removals
                .first_blocking(cx, c, Question::Distinguishes(dir), &mut unknown)?
                .is_some()
        {
            continue;
        }
        found(cx, p, c, ci, dir, report)?;
    }
    // Judged: keep only what some judge forbids.
    for (ci, c) in outcomes.iter().enumerate() {
        if lattice::has(&open, ci) && !forbidden_by_some(judges, &preps, c)? {
            lattice::remove(maybe, ci);
        }
    }
    Ok(())
}

/// The outcomes `maybe` holds.
fn in_question<'c>(outcomes: &'c [Cond], maybe: &[u64]) -> Vec<&'c Cond> {
    outcomes
        .iter()
        .enumerate()
        .filter(|&(k, _)| lattice::has(maybe, k))
        .map(|(_, c)| c)
        .collect()
}

/// Outcome `c` (number `ci`) of `p` classifies as `Some(dir)` and no
/// removal classifies it so: counted as found, and reported when no other
/// one-step weakening classifies it so either.
fn found(
    cx: &mut Ctx<'_, '_>,
    p: &SProgram,
    c: &Cond,
    ci: usize,
    dir: bool,
    report: &mut dyn FnMut(Found),
) -> Result<(), String> {
    cx.counts.found += 1;
    if cx.minimality {
        for w in &weakenings_of(cx.vocab, p, c, cx.places, false, true) {
            if classify(cx.mode, &w.program, &w.cond)? == Some(dir) {
                return Ok(());
            }
        }
    }
    let racy = cx
        .judges
        .iter()
        .map(|j| j.judge(p).map(|r| r.flagged))
        .collect::<Result<Vec<_>, _>>()?
        .into_iter()
        .any(|f| f);
    report(Found {
        events: p.events(cx.vocab),
        program: p.clone(),
        cond: c.clone(),
        a_allows: dir,
        racy,
        order: (0, 0, ci),
    });
    Ok(())
}

/// Whether some judge forbids outcome `c` of a program prepared under
/// each ([`judges_of`]'s order).
fn forbidden_by_some(judges: &[&Judge<'_>], preps: &[Prepared], c: &Cond) -> Result<bool, String> {
    for (j, p) in judges.iter().zip(preps) {
        if !j.allows_prepared(p, c)? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Shapes searched together: enumerated, then judged in parallel, so that
/// memory holds one chunk of shapes, not all of them.
const CHUNK: usize = 20_000;

/// Searches every shape (in parallel, a chunk at a time); findings in
/// enumeration order.
pub fn search(
    vocab: &Vocab,
    mode: &Mode<'_>,
    sp: &Space2,
    progress: &(dyn Fn() + Sync),
) -> Result<(Vec<Found>, Counts), String> {
    let mut found = Vec::new();
    let mut counts = Counts::default();
    let mut flush = |chunk: &mut Vec<(usize, Vec<Thread>)>| -> Result<(), String> {
        let results: Vec<Result<(Vec<Found>, Counts), String>> = chunk
            .par_iter()
            .with_max_len(1)
            .map(|(seq, shape)| {
                let r = search_shape(vocab, mode, *seq, shape, sp.prune);
                progress();
                r
            })
            .collect();
        chunk.clear();
        for r in results {
            let (f, c) = r?;
            found.extend(f);
            counts.add(&c);
        }
        Ok(())
    };
    // The shapes are enumerated on a thread of their own, a chunk ahead
    // of the search, so that the workers do not wait for the enumeration
    // between chunks.
    std::thread::scope(|scope| -> Result<(), String> {
        let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<(usize, Vec<Thread>)>>(1);
        scope.spawn(move || {
            let mut chunk = Vec::with_capacity(CHUNK);
            let mut open = true;
            for_each_shape(vocab, sp, &mut |seq, threads| {
                chunk.push((seq, threads.to_vec()));
                if chunk.len() == CHUNK {
                    // A closed channel: the search failed, stop.
                    open = tx
                        .send(std::mem::replace(&mut chunk, Vec::with_capacity(CHUNK)))
                        .is_ok();
                }
                open
            });
            if open && !chunk.is_empty() {
                let _ = tx.send(chunk);
            }
        });
        for mut chunk in rx {
            flush(&mut chunk)?;
        }
        Ok(())
    })?;
    found.sort_by_key(|f| f.order);
    Ok((found, counts))
}

/// How many shapes the search has (for a progress bar).
pub fn shape_count(vocab: &Vocab, sp: &Space2) -> usize {
    let mut n = 0;
    for_each_shape(vocab, sp, &mut |_, _| {
        n += 1;
        true
    });
    n
}

/// A key equal for isomorphic tests: their common canonical form.
pub fn iso_key(vocab: &Vocab, p: &SProgram, c: &Cond) -> String {
    format!("{:?}", super::program::canonical(p, c, p.has_adds(vocab)))
}
