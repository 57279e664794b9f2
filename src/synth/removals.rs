//! The removals of a program (weakening 1 of docs/synthesis.md): each
//! removed program prepared once, the weakest program below it asked
//! first, and the first removal that keeps an outcome forbidden (or
//! distinguishes it the same way) found for the search.

use super::judge::Prepared;
use super::lattice::RemovalFacts;
use super::program::{Cond, SProgram, removed_cond, removed_program};
use super::search::{Ctx, classify_prepared, extreme_program, prepare_all};

/// The removals of one program (each thread's each operation, in
/// [`super::program::weakenings_of`]'s order), each prepared under every judge on first
/// need: they do not depend on the outcome, only their conditions do.
pub(super) struct Removals<'p> {
    p: &'p SProgram,
    at: Vec<(usize, usize)>,
    prepared: Vec<Option<Vec<Prepared>>>,
    /// Per removal, once asked (synthesis with the cuts on): the weakest
    /// program below it, prepared, or `None` when it has none but itself.
    weakest: Vec<Option<Option<Vec<Prepared>>>>,
}

impl<'p> Removals<'p> {
    pub(super) fn new(p: &'p SProgram) -> Self {
        let at: Vec<(usize, usize)> = p
            .threads
            .iter()
            .enumerate()
            .flat_map(|(t, th)| (0..th.ops.len()).map(move |i| (t, i)))
            .collect();
        let prepared = at.iter().map(|_| None).collect();
        let weakest = at.iter().map(|_| None).collect();
        Removals {
            p,
            at,
            prepared,
            weakest,
        }
    }

    fn len(&self) -> usize {
        self.at.len()
    }

    /// Whether removal `k` answers `q` for outcome `c` of the program.
    /// With the cuts on, [`Question::Forbidden`] asks the weakest program
    /// below the removal first: what it forbids, the removal forbids
    /// (monotonicity, as for the lattice cut), and that program is one per
    /// shape and pattern of adds, judged once.
    fn blocks(
        &mut self,
        cx: &Ctx<'_, '_>,
        c: &Cond,
        k: usize,
        q: Question,
    ) -> Result<bool, String> {
        let (t, i) = self.at[k];
        let cond = removed_cond(cx.vocab, self.p, c, t, i);
        // The removed program, built once for both questions.
        let mut removed: Option<SProgram> = None;
        if cx.prune && q == Question::Forbidden {
            if self.weakest[k].is_none() {
                let r = removed.insert(removed_program(self.p, t, i));
                self.weakest[k] = Some(
                    match extreme_program(&cx.vocab.bottoms, r).filter(|w| w != r) {
                        Some(w) => Some(prepare_all(cx.judges, &w, false)?),
                        None => None,
                    },
                );
            }
            if let Some(Some(preps)) = &self.weakest[k]
                && q.answered(cx, preps, &cond)?
            {
                return Ok(true);
            }
        }
        if self.prepared[k].is_none() {
            let r = removed.unwrap_or_else(|| removed_program(self.p, t, i));
            self.prepared[k] = Some(prepare_all(cx.judges, &r, false)?);
        }
        let preps = self.prepared[k].as_deref().unwrap_or(&[]);
        q.answered(cx, preps, &cond)
    }

    /// The first removal that answers `q` for `c`, if any, leaving out
    /// those `facts` calls cleared and clearing there those found not to
    /// (for [`Question::Forbidden`]: a removal some judge allows `c` in).
    pub(super) fn first_blocking(
        &mut self,
        cx: &Ctx<'_, '_>,
        c: &Cond,
        q: Question,
        facts: &mut RemovalFacts,
    ) -> Result<Option<usize>, String> {
        for k in 0..self.len() {
            if facts.is_cleared(k) {
                continue;
            }
            if self.blocks(cx, c, k, q)? {
                return Ok(Some(k));
            }
            facts.clear(k);
        }
        Ok(None)
    }
}

/// What a removal is asked about an outcome.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Question {
    /// Does every judge forbid it? (Synthesis: then the outcome is not
    /// minimal. Distinguishing: then neither model allows it in the
    /// program either.)
    Forbidden,
    /// Does it distinguish the models in this direction (true: A allows,
    /// B forbids)? Then a distinguishing outcome is not minimal.
    Distinguishes(bool),
}

impl Question {
    /// The answer for outcome `c` of a program prepared under every judge.
    fn answered(self, cx: &Ctx<'_, '_>, preps: &[Prepared], c: &Cond) -> Result<bool, String> {
        match self {
            Question::Forbidden => {
                for (j, prep) in cx.judges.iter().zip(preps) {
                    if j.allows_prepared(prep, c)? {
                        return Ok(false);
                    }
                }
                Ok(true)
            }
            Question::Distinguishes(dir) => Ok(classify_prepared(cx.mode, preps, c)? == Some(dir)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::ModelCache;
    use crate::exec::CheckOptions;
    use crate::mapping::enumerate::Place;
    use crate::synth::judge::Judge;
    use crate::synth::program::STerm;
    use crate::synth::program::{SOp, SThread};
    use crate::synth::search::{Counts, Criterion, Mode, judges_of};
    use crate::synth::vocab::load;

    /// `f` given a search context for `mode`, with the cuts on.
    fn with_ctx<R>(mode: &Mode<'_>, f: impl FnOnce(&Ctx<'_, '_>) -> R) -> R {
        let judges = judges_of(mode);
        let mut top_judged = Vec::new();
        let mut counts = Counts::default();
        let cx = Ctx {
            vocab: judges[0].vocab,
            mode,
            judges: &judges,
            prune: true,
            places: true,
            minimality: true,
            removals_first: true,
            top_cut: true,
            top_judged: &mut top_judged,
            counts: &mut counts,
        };
        f(&cx)
    }

    /// Whether removal `k` of `p` keeps `cond` forbidden under `judge`'s
    /// model, with the cuts on.
    fn removal_blocks(judge: &Judge<'_>, p: &SProgram, cond: &Cond, k: usize) -> bool {
        let mode = Mode::Synth {
            judge,
            criterion: Criterion::Minimal,
        };
        with_ctx(&mode, |cx| {
            Removals::new(p)
                .blocks(cx, cond, k, Question::Forbidden)
                .unwrap()
        })
    }

    /// Distinguishing sc from x86tso: a removal both models forbid an
    /// outcome in settles it (the first such removal is found, and those
    /// before it are recorded as allowing); a removal that still
    /// distinguishes makes a finding not minimal.
    #[test]
    fn distinguishing_asks_removals_forbidden_by_both_and_distinguishing() {
        let v = load("x86").unwrap();
        let (w, r) = (v.entry_named("W"), v.entry_named("R"));
        let th = |ops| SThread {
            place: Place::Cpu,
            ops,
        };
        let op = SOp::new;
        let reg = |thread, reg| STerm::Reg { thread, reg };
        let cache = ModelCache::default();
        let opts = CheckOptions::default();
        let sc = Judge::new(&v, "sc", &[], &cache, opts.clone()).unwrap();
        let tso = Judge::new(&v, "x86tso", &[], &cache, opts).unwrap();
        let mode = Mode::Distinguish { a: &sc, b: &tso };
        // CoWW beside a store to y: P0 W x=1; W x=2 | P1 W y=3, x=1 at
        // the end. Removing either store to x leaves a final value some
        // interleaving reaches; removing the store to y leaves CoWW.
        let coww = SProgram {
            threads: vec![
                th(vec![op(w, 0, 1, u8::MAX), op(w, 0, 2, u8::MAX)]),
                th(vec![op(w, 1, 3, u8::MAX)]),
            ],
        };
        let c = vec![(STerm::Loc(0), 1), (STerm::Loc(1), 3)];
        let mut facts = RemovalFacts::NONE;
        let k = with_ctx(&mode, |cx| {
            Removals::new(&coww)
                .first_blocking(cx, &c, Question::Forbidden, &mut facts)
                .unwrap()
        });
        assert_eq!(k, Some(2));
        assert!(facts.is_cleared(0) && facts.is_cleared(1) && !facts.is_cleared(2));
        // SB, and SB with a store to z after P1's read: x86tso allows both
        // reads of 0, sc does not (direction false: A forbids).
        let sb = |extra: bool| {
            let mut p1 = vec![op(w, 1, 2, u8::MAX), op(r, 0, 0, 0)];
            if extra {
                p1.push(op(w, 2, 3, u8::MAX));
            }
            SProgram {
                threads: vec![th(vec![op(w, 0, 1, u8::MAX), op(r, 1, 0, 0)]), th(p1)],
            }
        };
        let both_zero = vec![
            (reg(0, 0), 0),
            (reg(1, 0), 0),
            (STerm::Loc(0), 1),
            (STerm::Loc(1), 2),
        ];
        let mut with_z = both_zero.clone();
        with_z.push((STerm::Loc(2), 3));
        with_ctx(&mode, |cx| {
            let mut none = RemovalFacts::NONE;
            let mut ask = |p: &SProgram, c: &Cond, q| {
                Removals::new(p)
                    .first_blocking(cx, c, q, &mut none)
                    .unwrap()
            };
            // No removal of SB is forbidden by both, or distinguishes.
            assert_eq!(ask(&sb(false), &both_zero, Question::Forbidden), None);
            assert_eq!(
                ask(&sb(false), &both_zero, Question::Distinguishes(false)),
                None
            );
            // Removing the store to z leaves SB, distinguishing the same way.
            assert_eq!(
                ask(&sb(true), &with_z, Question::Distinguishes(false)),
                Some(4)
            );
            assert_eq!(ask(&sb(true), &with_z, Question::Distinguishes(true)), None);
        });
    }

    /// The weakest program below a removal answers for it when it
    /// forbids the outcome: `st x=1; ld x` reading 0 is forbidden with weak
    /// accesses (coherence through program order), so removing the other
    /// thread's store keeps `r0=0` forbidden, for any orders and scopes of
    /// the two accesses, with one program judged (the weak one) for three
    /// removals. CoRR across two CTAs at `.gpu` is forbidden, but allowed
    /// with weak accesses (not morally strong): that removal is judged.
    #[test]
    fn the_weakest_program_below_a_removal_answers_when_it_forbids() {
        let v = load("ptx").unwrap();
        let e = |n: &str| v.entry_named(n);
        let at = |dev, wg| Place::Gpu { dev, wg };
        let th = |place, ops| SThread { place, ops };
        let op = SOp::new;
        let reg = |thread, reg| STerm::Reg { thread, reg };
        let cache = ModelCache::default();
        let judge = Judge::new(&v, "ptx6", &[], &cache, CheckOptions::default()).unwrap();
        // CoWR beside a store to y: P0 st x=1; ld x | P1 st y=2.
        let cowr = |st: &str, ld: &str| SProgram {
            threads: vec![
                th(at(0, 0), vec![op(e(st), 0, 1, u8::MAX), op(e(ld), 0, 0, 0)]),
                th(at(0, 0), vec![op(e("st.relaxed.cta"), 1, 2, u8::MAX)]),
            ],
        };
        let c = vec![(reg(0, 0), 0), (STerm::Loc(0), 1), (STerm::Loc(1), 2)];
        for (st, ld) in [
            ("st.relaxed.cta", "ld.relaxed.cta"),
            ("st.release.cta", "ld.acquire.cta"),
            ("st.weak", "ld.relaxed.cta"),
        ] {
            assert!(removal_blocks(&judge, &cowr(st, ld), &c, 2), "{st}; {ld}");
        }
        assert_eq!(judge.judged(), 1, "the weak program only");
        // CoRR beside a store to y: P0 st x=1 | P1 ld x; ld x | P2 st y=3.
        let corr = SProgram {
            threads: vec![
                th(at(0, 0), vec![op(e("st.relaxed.gpu"), 0, 1, u8::MAX)]),
                th(
                    at(0, 1),
                    vec![
                        op(e("ld.relaxed.gpu"), 0, 0, 0),
                        op(e("ld.relaxed.gpu"), 0, 0, 1),
                    ],
                ),
                th(at(0, 1), vec![op(e("st.relaxed.cta"), 1, 3, u8::MAX)]),
            ],
        };
        let c = vec![
            (reg(1, 0), 1),
            (reg(1, 1), 0),
            (STerm::Loc(0), 1),
            (STerm::Loc(1), 3),
        ];
        assert!(removal_blocks(&judge, &corr, &c, 3));
        assert_eq!(judge.judged(), 3, "the weak CoRR and the removal");
        // Removing the store to x leaves nothing forbidden.
        let c0 = vec![(reg(1, 0), 1), (reg(1, 1), 0), (STerm::Loc(0), 1)];
        assert!(!removal_blocks(&judge, &corr, &c0, 0));
    }
}
