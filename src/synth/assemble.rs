//! The IR of a synthesised program without printing and parsing it whole.
//!
//! A search judges hundreds of thousands of programs built from a third
//! as many distinct threads or fewer, and parsing each printed program
//! back was a sixth of a distinguishing run at 5 events. Here each thread is printed alone, with
//! the locations of the program it belongs to declared, and parsed once by
//! litmix's own front end; a program's test is its threads' parses (each
//! renumbered to its place), its declared locations and the condition
//! observing its terms. That is what the front end makes of the whole
//! printed program, because the front ends parse a thread's code with no
//! other context than the init block and the thread's own header (and its
//! parameters, in C): the test `assembled_tests_are_the_parsed_ones`
//! compares the two on samples of two-thread programs of every built-in
//! vocabulary, and [`check_against_text`] makes every judged program
//! compared (`searches_judge_the_parsed_tests`).
//! Where a thread's parse touches anything outside itself (it names a
//! location the init block does not declare), [`assembled`] answers `None`
//! and the caller parses the whole text.

use super::print::{print_with_locations, reg_name, thread_parse_is_context_free};
use super::program::{SProgram, STerm, SThread};
use super::vocab::Vocab;
use crate::fast_hash::FastHash;
use crate::ir::{CmpOp, Condition, Location, Prop, Quantifier, Term, Test, Thread, Value};
use crate::mapping::enumerate::loc_name;
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};

/// Threads kept per thread of the search before the cache starts again.
const CACHE_LIMIT: usize = 50_000;

/// Parsed threads by vocabulary ([`Vocab::uid`]), number of declared
/// locations and thread number, then by thread; `None` for a thread that
/// cannot be parsed alone.
type ThreadCache =
    HashMap<(u64, usize, usize), HashMap<SThread, Option<Thread>, FastHash>, FastHash>;

thread_local! {
    static THREADS: RefCell<(usize, ThreadCache)> = RefCell::new((0, ThreadCache::default()));
}

static CHECK: AtomicBool = AtomicBool::new(false);

/// Turns on (or off) the comparison of every assembled test with the parse
/// of the printed program (for tests: a difference is reported as an
/// internal error of the judgement).
pub fn check_against_text(on: bool) {
    CHECK.store(on, Ordering::Relaxed);
}

/// Whether [`check_against_text`] is on.
pub fn checking() -> bool {
    CHECK.load(Ordering::Relaxed)
}

/// The test `parse_str(print(vocab, p, observe))` gives, where `observe`
/// is `terms` each at 0, named `synth`; `None` when some thread of `p`
/// does not parse alone as it would within `p` (the caller then parses the
/// printed program).
pub fn assembled(vocab: &Vocab, p: &SProgram, terms: &[STerm]) -> Option<Test> {
    let nl = p.locations();
    let mut threads = Vec::with_capacity(p.threads.len());
    for (t, th) in p.threads.iter().enumerate() {
        // In the table format a thread is parsed once for every program
        // (as thread 0, with its own locations declared).
        let mut ir = if thread_parse_is_context_free(vocab.dialect) {
            thread_ir(vocab, th, 0, 0)?
        } else {
            thread_ir(vocab, th, nl, t)?
        };
        ir.id = t;
        threads.push(ir);
    }
    let observed: Vec<Term> = terms
        .iter()
        .map(|t| match *t {
            STerm::Reg { thread, reg } => Term::Reg {
                thread,
                reg: reg_name(vocab.dialect, reg),
            },
            STerm::Loc(l) => Term::Loc(l as usize),
        })
        .collect();
    // The front end gives each register the condition names an initial
    // value of 0, in the condition's order.
    for term in &observed {
        if let Term::Reg { thread, reg } = term {
            let th = threads.get_mut(*thread)?;
            if !th.reg_init.iter().any(|(r, _)| r == reg) {
                th.reg_init.push((reg.clone(), Value::Int(0)));
            }
        }
    }
    Some(Test {
        arch: vocab.dialect.arch().to_string(),
        name: "synth".to_string(),
        file: None,
        locations: (0..nl)
            .map(|l| Location::new(loc_name(l), Value::Int(0)))
            .collect(),
        threads,
        condition: observing(observed),
        observed: Vec::new(),
    })
}

/// Whether `a` and `b` are the same test but for the source positions of
/// their instructions (an assembled test's are those of each thread
/// printed alone; only diagnostics show them).
pub fn same_but_positions(a: &Test, b: &Test) -> bool {
    let unplaced = |t: &Test| {
        let mut t = t.clone();
        for th in &mut t.threads {
            for i in &mut th.code {
                i.pos = Default::default();
            }
        }
        t
    };
    unplaced(a) == unplaced(b)
}

/// `exists (t1=0 /\ t2=0 /\ ...)` as the front end builds it (`/\` to the
/// left), `exists (true)` for no terms.
fn observing(terms: Vec<Term>) -> Condition {
    let prop = terms
        .into_iter()
        .map(|t| Prop::Cmp(CmpOp::Eq, t, Term::Const(Value::Int(0))))
        .reduce(|a, b| Prop::And(Box::new(a), Box::new(b)))
        .unwrap_or(Prop::True);
    Condition {
        quantifier: Quantifier::Exists,
        prop,
    }
}

/// Thread `th`, thread number `t` of a program declaring `nl` locations
/// (at least its own), parsed alone, from this thread's cache.
fn thread_ir(vocab: &Vocab, th: &SThread, nl: usize, t: usize) -> Option<Thread> {
    THREADS.with(|c| {
        let mut c = c.borrow_mut();
        let (count, cache) = &mut *c;
        if let Some(hit) = cache
            .get(&(vocab.uid, nl, t))
            .and_then(|by_thread| by_thread.get(th))
        {
            return hit.clone();
        }
        if *count >= CACHE_LIMIT {
            cache.clear();
            *count = 0;
        }
        let ir = parse_alone(vocab, th, nl, t);
        *count += 1;
        cache
            .entry((vocab.uid, nl, t))
            .or_default()
            .insert(th.clone(), ir.clone());
        ir
    })
}

/// `th` printed as thread `t` of a program declaring `nl` locations (at
/// least its own) whose other threads are empty (at `th`'s place: a front
/// end may place a thread by its number, as the C one does without `@`),
/// and parsed back;
/// `None` when that fails or the parse creates a location the init block
/// does not declare (its number would then depend on the other threads).
fn parse_alone(vocab: &Vocab, th: &SThread, nl: usize, t: usize) -> Option<Thread> {
    let empty = SThread {
        place: th.place,
        ops: Vec::new(),
    };
    let mut threads = vec![empty; t];
    threads.push(th.clone());
    let alone = SProgram { threads };
    let nl = nl.max(alone.locations());
    let text = print_with_locations(vocab, &alone, nl, &Vec::new(), "synth", "");
    let mut test = crate::litmus::parse_str("synth.litmus", &text).ok()?;
    if test.locations.len() != nl || test.threads.len() != t + 1 {
        return None;
    }
    test.threads.pop()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mapping::enumerate::Place;
    use crate::synth::print::print;
    use crate::synth::program::{Cond, SOp, reads, writes};
    use crate::synth::vocab::load;

    /// Programs of up to `max_ops` operations over two threads whose
    /// operations are drawn from `vocab`'s entries on locations 0 and 1
    /// (values and registers as a search numbers them), at places the
    /// dialect has.
    fn programs(vocab: &Vocab, max_ops: usize) -> Vec<SProgram> {
        let places: Vec<Place> = match vocab.dialect {
            crate::synth::vocab::Dialect::X86 => vec![Place::Cpu],
            _ => vec![
                Place::Cpu,
                Place::Gpu { dev: 0, wg: 0 },
                Place::Gpu { dev: 0, wg: 1 },
                Place::Gpu { dev: 1, wg: 0 },
            ],
        };
        let n = vocab.entries.len();
        let mut out = Vec::new();
        // Operation sequences as numbers in base 2n (entry, location).
        for len0 in 1..max_ops {
            for len1 in 1..=(max_ops - len0) {
                let total = (2 * n).pow((len0 + len1) as u32);
                // A sample of about 2,000 codes: a step coprime to the
                // digit base and the places reaches every digit.
                let mut step = (total / 2000).max(1) | 1;
                while gcd(step, 2 * n * places.len()) != 1 {
                    step += 2;
                }
                for code in (0..total).step_by(step) {
                    let mut c = code;
                    let mut value = 0u32;
                    let mut thread = |len: usize, place: Place| {
                        let mut ops = Vec::new();
                        let mut reg = 0u8;
                        for _ in 0..len {
                            let (entry, loc) = (c % (2 * n) / 2, (c % 2) as u8);
                            c /= 2 * n;
                            let probe = SOp::new(entry, loc, 0, 0);
                            let (reads, writes) = (reads(vocab, &probe), writes(vocab, &probe));
                            let v = if writes {
                                value += 1;
                                value
                            } else {
                                0
                            };
                            let r = if reads {
                                reg += 1;
                                reg - 1
                            } else {
                                u8::MAX
                            };
                            let loc = if reads || writes { loc } else { 0 };
                            ops.push(SOp::new(entry, loc, v, r));
                        }
                        SThread { place, ops }
                    };
                    let p0 = places[code % places.len()];
                    let p1 = places[(code / places.len()) % places.len()];
                    let a = thread(len0, p0);
                    let b = thread(len1, p1);
                    out.push(SProgram {
                        threads: vec![a, b],
                    });
                }
            }
        }
        out
    }

    /// Whole searches with every judged program's assembled test compared
    /// with the parse of its printed text (an error otherwise): synthesis
    /// over x86 (4 events), PTX with scopes (3), C11 (3) and OpenCL (3),
    /// and a distinguishing search (x86, 4), programs of up to four
    /// threads among them.
    #[test]
    fn searches_judge_the_parsed_tests() {
        use crate::synth::search::{Criterion, Space2};
        check_against_text(true);
        for (models, vocab, bound, want_found) in [
            (&["x86tso"][..], "x86", 4, 10),
            (&["ptx6"][..], "ptx", 3, 1),
            (&["rc11"][..], "c11", 3, 1),
            (&["opencl"][..], "opencl", 3, 1),
            (&["sc", "x86tso"][..], "x86", 4, 2),
        ] {
            let run = crate::synth::Run {
                vocab: load(vocab).unwrap(),
                models: models.iter().map(|m| m.to_string()).collect(),
                axioms: Vec::new(),
                criterion: Criterion::Minimal,
                space: Space2 {
                    bound,
                    shard: None,
                    prune: true,
                    max_gpus: 2,
                    max_ctas: 2,
                },
                opts: Default::default(),
                out: None,
                allowed_set: false,
            };
            let s = crate::synth::run(&run, &|| ()).unwrap_or_else(|e| panic!("{models:?}: {e}"));
            assert!(s.unique >= want_found, "{models:?}: {} tests", s.unique);
            assert_eq!(s.verify_failures, 0, "{models:?}");
        }
    }

    /// A thread whose parse names a location the init block does not
    /// declare (a user's vocabulary writing a fixed `zz`) is not
    /// assembled: its program is printed and parsed whole, and a search
    /// over that vocabulary emits the tests one over the plain x86
    /// vocabulary does (at 4 events no minimal test holds a fence).
    #[test]
    fn threads_naming_undeclared_locations_are_parsed_whole() {
        use crate::synth::search::{Criterion, Space2};
        let text = "vocab x86z\narch X86\nrmw-events 2\n\nload  R      \"MOV {r},[{x}]\"\n\
                    store W      \"MOV [{x}],${v}\"\nfence MFENCE \"MOV [zz],$0\"\n\
                    rmw XCHG \"MOV {r},${v}\" \"XCHG [{x}],{r}\" split R W\n";
        let vocab = crate::synth::vocab::parse("z.vocab", text).unwrap();
        let e = |n: &str| vocab.entry_named(n);
        let op = SOp::new;
        let plain = SProgram {
            threads: vec![SThread {
                place: Place::Cpu,
                ops: vec![op(e("W"), 0, 1, u8::MAX), op(e("R"), 1, 0, 0)],
            }],
        };
        let mut fenced = plain.clone();
        fenced.threads[0]
            .ops
            .insert(1, op(e("MFENCE"), 0, 0, u8::MAX));
        assert!(assembled(&vocab, &plain, &plain.terms(&vocab)).is_some());
        assert!(assembled(&vocab, &fenced, &fenced.terms(&vocab)).is_none());
        let run = |vocab: Vocab| crate::synth::Run {
            vocab,
            models: vec!["x86tso".to_string()],
            axioms: Vec::new(),
            criterion: Criterion::Minimal,
            space: Space2 {
                bound: 4,
                shard: None,
                prune: true,
                max_gpus: 1,
                max_ctas: 1,
            },
            opts: Default::default(),
            out: None,
            allowed_set: false,
        };
        let names = |s: crate::synth::Summary| {
            let mut v: Vec<String> = s.tests.into_iter().map(|t| t.name).collect();
            v.sort();
            v
        };
        let z = crate::synth::run(&run(vocab), &|| ()).unwrap();
        let x86 = crate::synth::run(&run(load("x86").unwrap()), &|| ()).unwrap();
        assert_eq!(z.verify_failures, 0);
        assert!(z.unique >= 10, "{} tests", z.unique);
        assert_eq!(names(z), names(x86));
    }

    fn gcd(a: usize, b: usize) -> usize {
        if b == 0 { a } else { gcd(b, a % b) }
    }

    /// On programs of up to four operations over two threads (a sample of
    /// about 2,000 per split of the operations between the threads), for
    /// each built-in vocabulary, the assembled test is
    /// the parse of the printed program, and a second assembly (from the
    /// cache) is too.
    #[test]
    fn assembled_tests_are_the_parsed_ones() {
        for name in ["x86", "ptx", "c11", "opencl"] {
            let vocab = load(name).unwrap();
            let mut compared = 0;
            for p in programs(&vocab, 4) {
                let terms = p.terms(&vocab);
                let observe: Cond = terms.iter().map(|&t| (t, 0)).collect();
                let text = print(&vocab, &p, &observe, "synth", "");
                let parsed = crate::litmus::parse_str("synth.litmus", &text)
                    .unwrap_or_else(|d| panic!("{}\n{text}", d.render()));
                for _ in 0..2 {
                    let Some(built) = assembled(&vocab, &p, &terms) else {
                        panic!("{name}: no assembly for\n{text}");
                    };
                    assert!(
                        same_but_positions(&built, &parsed),
                        "{name}:\n{text}\n{built:?}\n{parsed:?}"
                    );
                }
                compared += 1;
            }
            assert!(compared > 1000, "{name}: {compared} programs");
        }
    }
}
