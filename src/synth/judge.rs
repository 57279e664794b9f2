//! Judging synthesised programs through the driver: each program's test
//! (assembled from its threads' parses, [`super::assemble`], or printed
//! and parsed back whole where a thread does not parse alone) is checked
//! with the same entry `litmix run` uses ([`crate::driver::check_test`]), or, for one
//! axiom, the model restricted to it ([`crate::cat::Model::restricted_to`]
//! through the driver's [`crate::driver::Judge`]). Results are cached per program.

use super::judged::Judged;
use super::print::{condition_text, print, term_result_name};
use super::program::{Cond, SProgram, STerm};
use super::vocab::Vocab;
use crate::driver::ModelCache;
use crate::exec::CheckOptions;
use crate::ir::Test;
use crate::ir::Value;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// A program's canonical form as met ([`Judge::prepare_with`]): the
/// canonical program and the renaming into it, then, once looked up, its
/// SC states and its full judgement, so that the program met again (a
/// removal is met from every program it is a removal of) finds them
/// without asking the memos keyed by the canonical program.
struct Canon {
    program: SProgram,
    renaming: super::program::Renaming,
    sc: std::sync::OnceLock<Arc<Judged>>,
    judged: std::sync::OnceLock<Arc<Judged>>,
}

type CanonEntry = Arc<Canon>;

/// A memo keyed by programs. FxHash: the keys are programs the search
/// generates itself (never user input), and SipHash was a tenth of the
/// search's time at 7 events.
type Memo<V> = HashMap<SProgram, V, crate::fast_hash::FastHash>;

/// Entries the canonical-form and SC memos keep before they start again:
/// they only save work, and unbounded they held gigabytes at 7 events.
const MEMO_LIMIT: usize = 200_000;

/// Memo entries past which a dropped judge frees its memos on a thread of
/// its own (a search of 7 events leaves hundreds of thousands of programs
/// there, a twentieth of its time to free one by one; a command that ends
/// meanwhile does not wait for it).
const FREE_ASIDE: usize = 10_000;

/// Inserts into a memo of at most [`MEMO_LIMIT`] entries, starting it
/// again when full. The full memo is taken out under the lock and freed
/// after it: freeing 200,000 programs holds the lock for a good part of
/// a second, during which every other worker used to wait on it.
fn insert_bounded<V>(memo: &Mutex<Memo<V>>, key: SProgram, value: V) -> Result<(), String> {
    let old = {
        let mut memo = memo.lock().map_err(|e| e.to_string())?;
        let old = (memo.len() >= MEMO_LIMIT).then(|| std::mem::take(&mut *memo));
        memo.insert(key, value);
        old
    };
    drop(old);
    Ok(())
}

/// A program ready for judging many of its outcomes
/// ([`Judge::prepare`]): its canonical form with the renaming into it, its
/// SC states (with the SC cut), and the model's judgement once needed. The
/// empty program has none of them and allows everything.
#[derive(Default)]
pub struct Prepared {
    canon: Option<CanonEntry>,
    sc: Option<Arc<Judged>>,
    judged: std::sync::OnceLock<Arc<Judged>>,
}

/// A model (by name, or restricted to some checks) with a cache of
/// judged programs.
pub struct Judge<'a> {
    pub vocab: &'a Vocab,
    spec: String,
    /// The driver's judge for the model, resolved once (restricted to
    /// `--axiom` checks when asked).
    judge: crate::driver::Judge,
    opts: CheckOptions,
    memo: Mutex<Memo<Arc<Judged>>>,
    sc_memo: Mutex<Memo<Arc<Judged>>>,
    /// Programs as met, to their canonical form and renaming.
    canon_memo: Mutex<Memo<CanonEntry>>,
    /// Outcomes an interleaving reaches are allowed without a model run.
    pub sc_cut: bool,
    /// Programs are judged in their scope normal form
    /// ([`super::scope::normal_form`]), as the scope cut assumes they may.
    pub scope_normal: bool,
    /// A program some allowed execution of which raises a flag (a race:
    /// undefined behaviour in C and OpenCL) allows every outcome
    /// (synthesis; distinguishing lists such programs apart instead).
    pub catch_fire: bool,
    /// Model runs made.
    pub runs: AtomicU64,
    /// Whether a program may be judged on a few outcomes only
    /// ([`Judge::restrict`]): a cat model that raises no flag, so that a
    /// candidate matters only through the state it reaches.
    restrictable: bool,
    /// Runs restricted to some outcomes ([`Judge::restrict`]).
    restricted: AtomicU64,
}

impl<'a> Judge<'a> {
    /// A judge for model `spec`; with `checks`, the model keeps only those
    /// checks (axiomatic models only).
    pub fn new(
        vocab: &'a Vocab,
        spec: &str,
        checks: &[String],
        cache: &'a ModelCache,
        opts: CheckOptions,
    ) -> Result<Judge<'a>, String> {
        let judge = if checks.is_empty() {
            cache.judge(spec)?
        } else {
            if crate::driver::is_operational(spec) {
                return Err(format!(
                    "--axiom needs an axiomatic model; {spec} is operational"
                ));
            }
            let model = Arc::new(cache.get(spec)?.restricted_to(checks)?);
            let name = model.name().to_string();
            crate::driver::Judge::Cat { model, name }
        };
        let restrictable =
            matches!(&judge, crate::driver::Judge::Cat { model, .. } if !model.may_flag());
        Ok(Judge {
            vocab,
            spec: spec.to_string(),
            judge,
            opts,
            memo: Mutex::new(Memo::default()),
            sc_memo: Mutex::new(Memo::default()),
            canon_memo: Mutex::new(Memo::default()),
            sc_cut: true,
            scope_normal: false,
            catch_fire: false,
            runs: AtomicU64::new(0),
            restrictable,
            restricted: AtomicU64::new(0),
        })
    }

    /// Programs judged: distinct programs judged in full (the same
    /// whatever the thread count; a program two workers judge at once is
    /// run twice but counted once), and programs judged on some outcomes
    /// ([`Judge::restrict`]; answered from the full judgement when another
    /// worker has made it).
    pub fn judged(&self) -> u64 {
        self.memo.lock().map_or(0, |m| m.len() as u64) + self.restricted.load(Ordering::Relaxed)
    }

    /// The model's name as given.
    pub fn spec(&self) -> &str {
        &self.spec
    }

    /// The allowed states of `p` (cached).
    pub fn judge(&self, p: &SProgram) -> Result<Arc<Judged>, String> {
        if let Some(j) = self.memo.lock().map_err(|e| e.to_string())?.get(p) {
            return Ok(j.clone());
        }
        let j = Arc::new(self.run(p, None)?);
        self.memo
            .lock()
            .map_err(|e| e.to_string())?
            .insert(p.clone(), j.clone());
        Ok(j)
    }

    /// Whether the model allows outcome `cond` of `p` (an empty program
    /// allows everything, and so does a flagged one with `catch_fire`).
    /// The test is judged in its canonical form
    /// ([`super::program::canonical`]); with the SC cut on, an outcome some
    /// interleaving reaches is allowed without a model run.
    pub fn allows(&self, p: &SProgram, cond: &Cond) -> Result<bool, String> {
        let prepared = self.prepare(p)?;
        self.allows_prepared(&prepared, cond)
    }

    /// `p` made ready for judging many outcomes of it: its canonical form
    /// and renaming and its SC states, looked up once instead of once per
    /// outcome (the model's judgement is added on first need).
    pub fn prepare(&self, p: &SProgram) -> Result<Prepared, String> {
        self.prepare_with(p, self.sc_cut)
    }

    /// The states some interleaving of `q` reaches (cached).
    fn sc_states(&self, q: &SProgram) -> Result<Arc<Judged>, String> {
        if let Some(s) = self.sc_memo.lock().map_err(|e| e.to_string())?.get(q) {
            return Ok(s.clone());
        }
        let s = Arc::new(super::sc::sc_judged(self.vocab, q));
        insert_bounded(&self.sc_memo, q.clone(), s.clone())?;
        Ok(s)
    }

    /// [`Judge::prepare`], with the SC states only if `sc` (a caller that
    /// has already applied the SC cut to `p`'s outcomes passes false).
    pub fn prepare_with(&self, p: &SProgram, sc: bool) -> Result<Prepared, String> {
        if p.threads.is_empty() {
            return Ok(Prepared::default());
        }
        let canon = {
            let memo = self.canon_memo.lock().map_err(|e| e.to_string())?;
            memo.get(p).cloned()
        };
        let canon = match canon {
            Some(x) => x,
            None => {
                // The normal form differs only in entries: the renaming
                // into its canonical form serves `p`'s outcomes as well.
                let normal = self
                    .scope_normal
                    .then(|| super::scope::normal_form(self.vocab, p))
                    .flatten();
                let q = normal.as_ref().unwrap_or(p);
                let (program, renaming) =
                    super::program::canonical_program(q, q.has_adds(self.vocab));
                let x = Arc::new(Canon {
                    program,
                    renaming,
                    sc: std::sync::OnceLock::new(),
                    judged: std::sync::OnceLock::new(),
                });
                insert_bounded(&self.canon_memo, p.clone(), x.clone())?;
                x
            }
        };
        // Kept on the record: the program met again asks no memo.
        let sc = if sc {
            Some(match canon.sc.get() {
                Some(s) => s.clone(),
                None => {
                    let s = self.sc_states(&canon.program)?;
                    canon.sc.get_or_init(|| s).clone()
                }
            })
        } else {
            None
        };
        Ok(Prepared {
            canon: Some(canon),
            sc,
            judged: std::sync::OnceLock::new(),
        })
    }

    /// Makes `prepared` ready to answer [`Judge::allows_prepared`] for the
    /// outcomes `conds`, and only for them, by a model run restricted to
    /// their states (the engine's [`crate::verdict::StateFilter`]: a
    /// reads-from choice no wanted state agrees with is not followed).
    /// Nothing is done when the program's full judgement is known, when the
    /// model may raise a flag (then every candidate matters), when the
    /// interleavings reach every outcome, or when the outcomes do not all
    /// give the same terms; the full judgement is then made on first need,
    /// as before. The restricted judgement is not kept beyond `prepared`.
    pub fn restrict(&self, prepared: &Prepared, conds: &[&Cond]) -> Result<(), String> {
        let Some(canon) = &prepared.canon else {
            return Ok(());
        };
        if !self.restrictable || prepared.judged.get().is_some() {
            return Ok(());
        }
        let wanted: Vec<Cond> = conds
            .iter()
            .map(|c| canon.renaming.apply(c))
            .filter(|c| !prepared.sc.as_ref().is_some_and(|sc| sc.allows(c)))
            .collect();
        let Some(first) = wanted.first() else {
            return Ok(());
        };
        let terms: Vec<STerm> = first.iter().map(|c| c.0).collect();
        if wanted
            .iter()
            .any(|c| c.len() != terms.len() || c.iter().zip(&terms).any(|(a, t)| a.0 != *t))
        {
            return Ok(());
        }
        let states: crate::verdict::StateSet = wanted
            .iter()
            .map(|c| c.iter().map(|&(_, v)| Value::Int(v as i64)).collect())
            .collect();
        // Counted whether or not another worker has judged the program in
        // full meanwhile, so that the count does not depend on the timing.
        self.restricted.fetch_add(1, Ordering::Relaxed);
        if let Some(j) = canon.judged.get() {
            let _ = prepared.judged.set(j.clone());
            return Ok(());
        }
        if let Some(j) = self
            .memo
            .lock()
            .map_err(|e| e.to_string())?
            .get(&canon.program)
        {
            let _ = prepared.judged.set(j.clone());
            return Ok(());
        }
        let j = self.run(&canon.program, Some((&terms, states)))?;
        let _ = prepared.judged.set(Arc::new(j));
        Ok(())
    }

    /// [`Judge::allows`] for a prepared program (see [`Judge::prepare`]).
    pub fn allows_prepared(&self, prepared: &Prepared, cond: &Cond) -> Result<bool, String> {
        let Some(canon) = &prepared.canon else {
            return Ok(true);
        };
        let c = canon.renaming.apply(cond);
        if prepared.sc.as_ref().is_some_and(|sc| sc.allows(&c)) {
            return Ok(true);
        }
        let j = match prepared.judged.get() {
            Some(j) => j.clone(),
            None => {
                let j = match canon.judged.get() {
                    Some(j) => j.clone(),
                    None => {
                        let j = self.judge(&canon.program)?;
                        canon.judged.get_or_init(|| j).clone()
                    }
                };
                prepared.judged.get_or_init(|| j).clone()
            }
        };
        Ok((self.catch_fire && j.flagged) || j.allows(&c))
    }

    /// The allowed states of `p`; with `only` (terms, and the values of
    /// those terms in each wanted state), only the wanted states are
    /// looked for and reported.
    fn run(
        &self,
        p: &SProgram,
        only: Option<(&[STerm], crate::verdict::StateSet)>,
    ) -> Result<Judged, String> {
        self.runs.fetch_add(1, Ordering::Relaxed);
        let parsed = observing_test(self.vocab, p)?;
        let Parsed {
            test,
            names,
            term_of,
        } = &*parsed;
        let filtered;
        let opts = match only {
            None => &self.opts,
            Some((wanted, states)) => {
                let positions = wanted
                    .iter()
                    .map(|&t| {
                        term_of.iter().position(|o| *o == Some(t)).ok_or_else(|| {
                            format!(
                                "internal: the printed test does not observe {}\n{}",
                                term_result_name(self.vocab.dialect, t),
                                observing_text(self.vocab, p)
                            )
                        })
                    })
                    .collect::<Result<Vec<usize>, String>>()?;
                let mut o = self.opts.clone();
                o.skip = Some(Arc::new(crate::verdict::StateFilter {
                    positions,
                    states,
                    only: true,
                }));
                filtered = o;
                &filtered
            }
        };
        let result = self
            .judge
            .check(test, opts)
            .map_err(|e| format!("{e}\n{}", observing_text(self.vocab, p)))?;
        if result.observed != *names {
            return Err(format!(
                "the result observes {:?}, not {:?}\n{}",
                result.observed,
                names,
                observing_text(self.vocab, p)
            ));
        }
        let states: Vec<Vec<i64>> = result
            .states
            .keys()
            .map(|s| {
                s.iter()
                    .map(|v| match v {
                        Value::Int(i) => *i,
                        Value::Addr(_) => i64::MIN,
                    })
                    .collect()
            })
            .collect();
        Ok(Judged::new(
            term_of.clone(),
            states,
            !result.flags.is_empty(),
        ))
    }
}

impl Drop for Judge<'_> {
    fn drop(&mut self) {
        fn take<V>(m: &mut Mutex<Memo<V>>) -> Memo<V> {
            std::mem::take(m.get_mut().unwrap_or_else(|e| e.into_inner()))
        }
        let memos = (
            take(&mut self.memo),
            take(&mut self.sc_memo),
            take(&mut self.canon_memo),
        );
        if memos.0.len() + memos.1.len() + memos.2.len() > FREE_ASIDE {
            // Freed inline when no thread can be started.
            let _ = std::thread::Builder::new()
                .name("litmix-free".into())
                .spawn(move || drop(memos));
        }
    }
}

/// A program's test (assembled, or printed and parsed back), with what
/// every judgement of it needs of the test's observed terms.
struct Parsed {
    test: Test,
    /// The names of the test's observed terms, in the engine's order
    /// ([`crate::ir::outcome::observed_terms`]): a result's `observed`.
    names: Vec<String>,
    /// Per observed term, the program's term it is (`None` for a name no
    /// term of the program has).
    term_of: Vec<Option<STerm>>,
}

thread_local! {
    /// The program whose test this thread made last (with its
    /// vocabulary's [`Vocab::uid`]), and that test: a distinguishing
    /// search judges each program under two models, one right after the
    /// other, and the second reuses the first's test.
    static LAST_PARSED: std::cell::RefCell<Option<(u64, SProgram, std::rc::Rc<Parsed>)>> =
        const { std::cell::RefCell::new(None) };
}

/// The test of `p` with the condition observing its terms (each at 0),
/// as litmix's front end parses `p` printed: assembled from its threads'
/// parses ([`super::assemble::assembled`]), or, where a thread does not
/// parse alone, printed and parsed whole; with [`super::assemble::check_against_text`]
/// on, an assembled test is compared with the parsed one. The program
/// this thread made a test of last is not made again.
fn observing_test(vocab: &Vocab, p: &SProgram) -> Result<std::rc::Rc<Parsed>, String> {
    let hit = LAST_PARSED.with(|l| {
        l.borrow()
            .as_ref()
            .filter(|(uid, q, _)| *uid == vocab.uid && q == p)
            .map(|(_, _, t)| t.clone())
    });
    if let Some(t) = hit {
        return Ok(t);
    }
    let terms = p.terms(vocab);
    let test = match super::assemble::assembled(vocab, p, &terms) {
        Some(test) if super::assemble::checking() => {
            let parsed = parsed_text(vocab, p)?;
            if !super::assemble::same_but_positions(&test, &parsed) {
                return Err(format!(
                    "internal: the assembled test differs from the parsed one\n{}",
                    observing_text(vocab, p)
                ));
            }
            test
        }
        Some(test) => test,
        None => parsed_text(vocab, p)?,
    };
    let names: Vec<String> = crate::ir::outcome::observed_terms(&test)
        .iter()
        .map(|t| crate::ir::outcome::term_name(&test, t))
        .collect();
    let want: Vec<String> = terms
        .iter()
        .map(|&t| term_result_name(vocab.dialect, t))
        .collect();
    if let Some(w) = want.iter().find(|w| !names.contains(w)) {
        return Err(format!(
            "internal: the printed test does not observe {w} (it observes {names:?})\n{}",
            observing_text(vocab, p)
        ));
    }
    let term_of = names
        .iter()
        .map(|n| want.iter().position(|w| w == n).map(|i| terms[i]))
        .collect();
    let t = std::rc::Rc::new(Parsed {
        test,
        names,
        term_of,
    });
    LAST_PARSED.with(|l| *l.borrow_mut() = Some((vocab.uid, p.clone(), t.clone())));
    Ok(t)
}

/// `p` printed with the condition observing its terms (each at 0).
fn observing_text(vocab: &Vocab, p: &SProgram) -> String {
    let observe: Cond = p.terms(vocab).iter().map(|&t| (t, 0)).collect();
    print(vocab, p, &observe, "synth", "")
}

/// `p` printed with the condition observing its terms and parsed back.
fn parsed_text(vocab: &Vocab, p: &SProgram) -> Result<Test, String> {
    let text = observing_text(vocab, p);
    crate::litmus::parse_str("synth.litmus", &text)
        .map_err(|d| format!("printed test does not parse back: {}\n{text}", d.render()))
}

/// The condition of a test as text (for reports).
pub fn condition(vocab: &Vocab, cond: &Cond) -> String {
    condition_text(vocab.dialect, cond)
}

/// Terms of a condition, for callers that only need them.
pub fn cond_terms(cond: &Cond) -> Vec<STerm> {
    cond.iter().map(|c| c.0).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mapping::enumerate::Place;
    use crate::synth::program::{SOp, SThread};
    use crate::synth::vocab::load;

    /// A judgement restricted to one outcome answers as the full one, on
    /// every outcome of SB and MP, with and without fences, under x86-TSO
    /// (which forbids some of them and allows others).
    #[test]
    fn restricted_judgements_agree_with_full_ones() {
        let vocab = load("x86").unwrap();
        let e = |n: &str| vocab.entry_named(n);
        let (w, r) = (e("W"), e("R"));
        let op = SOp::new;
        let mp = SProgram {
            threads: vec![
                SThread {
                    place: Place::Cpu,
                    ops: vec![op(w, 0, 1, u8::MAX), op(w, 1, 2, u8::MAX)],
                },
                SThread {
                    place: Place::Cpu,
                    ops: vec![op(r, 1, 0, 0), op(r, 0, 0, 1)],
                },
            ],
        };
        let cache = ModelCache::default();
        let (mut allowed, mut forbidden) = (0, 0);
        let sb = crate::synth::sc::tests::sb;
        for p in [sb(&vocab, false), sb(&vocab, true), mp] {
            let full = Judge::new(&vocab, "x86tso", &[], &cache, CheckOptions::default()).unwrap();
            let (outcomes, _) = p.outcomes(&vocab);
            for c in &outcomes {
                let part =
                    Judge::new(&vocab, "x86tso", &[], &cache, CheckOptions::default()).unwrap();
                let prepared = part.prepare_with(&p, false).unwrap();
                part.restrict(&prepared, &[c]).unwrap();
                assert!(prepared.judged.get().is_some(), "restricted run made");
                assert_eq!(part.judged(), 1, "one program judged on one outcome");
                let want = full.allows(&p, c).unwrap();
                assert_eq!(part.allows_prepared(&prepared, c).unwrap(), want, "{c:?}");
                if want {
                    allowed += 1;
                } else {
                    forbidden += 1;
                }
            }
        }
        assert!(
            allowed > 0 && forbidden > 0,
            "{allowed} allowed, {forbidden} forbidden"
        );
    }
}
