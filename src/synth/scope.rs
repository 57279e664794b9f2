//! Effective scopes: which scope annotations of a placed program change
//! what the program may do. A scope that holds no thread its next narrower
//! scope does not hold is *ineffective*: the program behaves as the same
//! program with that scope narrowed, under every model that sees scopes
//! only through which threads an instruction's scope instance holds
//! (docs/synthesis.md, "Cuts": the scope cut, and judging in normal form).

use super::program::SProgram;
use super::vocab::Vocab;
use crate::mapping::enumerate::{Place, Thread};

/// Whether entry `entry` on thread `t` of `threads` has an effective
/// scope: unscoped, the narrowest, or holding some thread its next
/// narrower scope does not hold (threads placed in CTAs of GPUs; a
/// vocabulary's three scope levels read as CTA, GPU and system, e.g. PTX's
/// `cta gpu sys`). It depends only on the placement. A program with an
/// ineffective scope behaves, under a model that sees scopes only through
/// which threads an instruction's scope instance holds (every built-in
/// scoped model: `incl` in ptx6, ptx75 and cmm, `incl1` in the OpenCL
/// models), exactly as its one-step weakening with that scope narrowed:
/// it is minimal for no outcome, and distinguishes nothing that weakening
/// does not (docs/synthesis.md, "Cuts").
pub fn scope_effective(vocab: &Vocab, threads: &[Thread], t: usize, entry: usize) -> bool {
    let others = threads
        .iter()
        .enumerate()
        .filter(|&(u, _)| u != t)
        .map(|(_, o)| o.place);
    effective_at(vocab, entry, threads[t].place, others)
}

/// [`scope_effective`] for an entry on a thread placed at `at`, the other
/// threads being placed at `others`.
fn effective_at(
    vocab: &Vocab,
    entry: usize,
    at: Place,
    mut others: impl Iterator<Item = Place>,
) -> bool {
    let scope = vocab.entries[entry].scope;
    if vocab.scopes.len() != 3 || scope < 2 {
        return true;
    }
    let Place::Gpu { dev, wg } = at else {
        return true;
    };
    others.any(|other| match other {
        Place::Gpu { dev: d, wg: w } => {
            if scope == 2 {
                d == dev && w != wg
            } else {
                d != dev
            }
        }
        _ => scope == 3,
    })
}

/// Whether some instruction of a filled program has an ineffective scope
/// ([`scope_effective`]).
pub fn scope_redundant(vocab: &Vocab, threads: &[Thread]) -> bool {
    threads.iter().enumerate().any(|(t, th)| {
        th.ops
            .iter()
            .any(|o| !scope_effective(vocab, threads, t, o.order as usize))
    })
}

/// The entry one scope narrower than `entry` (same instruction), if any.
fn narrower(vocab: &Vocab, entry: usize) -> Option<usize> {
    let e = &vocab.entries[entry];
    e.weaker
        .iter()
        .copied()
        .find(|&w| vocab.entries[w].scope + 1 == e.scope && vocab.entries[w].kind == e.kind)
}

/// `p` with every ineffective scope narrowed until it is effective (its
/// *scope normal form*), or `None` when every scope of `p` is effective.
/// The two programs behave alike under every model [`scope_effective`]
/// speaks of, so a judge may judge the normal form instead: the removals
/// and weakenings of synthesised programs, which lose a thread or move one,
/// often leave a scope that holds nothing more than the next narrower one.
pub fn normal_form(vocab: &Vocab, p: &SProgram) -> Option<SProgram> {
    if vocab.scopes.len() != 3 {
        return None;
    }
    let mut out: Option<SProgram> = None;
    for (t, th) in p.threads.iter().enumerate() {
        for (i, op) in th.ops.iter().enumerate() {
            let others = || {
                p.threads
                    .iter()
                    .enumerate()
                    .filter(move |&(u, _)| u != t)
                    .map(|(_, o)| o.place)
            };
            let mut entry = op.entry;
            while !effective_at(vocab, entry, th.place, others()) {
                match narrower(vocab, entry) {
                    Some(n) => entry = n,
                    None => break,
                }
            }
            if entry != op.entry {
                out.get_or_insert_with(|| p.clone()).threads[t].ops[i].entry = entry;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mapping::enumerate::Op;

    /// A thread at `(dev, wg)` with one instruction named `entry`.
    fn thread(vocab: &Vocab, dev: u8, wg: u8, entry: &str) -> Thread {
        let e = vocab
            .entries
            .iter()
            .position(|e| e.name == entry)
            .unwrap_or_else(|| panic!("no entry {entry}"));
        Thread {
            place: Place::Gpu { dev, wg },
            ops: vec![Op {
                kind: vocab.entries[e].kind,
                order: e as u8,
                scope: 0,
                loc: 0,
                remote: false,
            }],
        }
    }

    #[test]
    fn scope_redundancy_by_hand() {
        let v = super::super::vocab::load("ptx").unwrap();
        /// A thread: its GPU, its CTA and its one instruction.
        type Placed<'a> = (u8, u8, &'a str);
        let t = |&(d, w, e): &Placed| thread(&v, d, w, e);
        // (threads, whether some scope is redundant)
        let cases: &[(&[Placed], bool)] = &[
            // One CTA: .gpu and .sys hold no thread .cta does not.
            (&[(0, 0, "st.relaxed.gpu"), (0, 0, "ld.relaxed.cta")], true),
            (&[(0, 0, "st.relaxed.cta"), (0, 0, "ld.relaxed.sys")], true),
            (&[(0, 0, "st.relaxed.cta"), (0, 0, "ld.relaxed.cta")], false),
            // Two CTAs of one GPU: .gpu reaches the other CTA, .sys adds
            // nothing.
            (&[(0, 0, "st.release.gpu"), (0, 1, "ld.acquire.gpu")], false),
            (&[(0, 0, "st.release.sys"), (0, 1, "ld.acquire.gpu")], true),
            // Two GPUs: .gpu holds only the thread itself, .sys reaches the
            // other.
            (&[(0, 0, "st.release.gpu"), (1, 1, "ld.acquire.sys")], true),
            (&[(0, 0, "st.release.sys"), (1, 1, "ld.acquire.sys")], false),
            // Unscoped entries and fences at the narrowest scope never are.
            (&[(0, 0, "st.weak"), (0, 0, "fence.sc.cta")], false),
            // A three-level tree: .gpu is needed for the CTA beside it even
            // though a GPU apart exists.
            (
                &[(0, 0, "fence.sc.gpu"), (0, 1, "st.weak"), (1, 2, "st.weak")],
                false,
            ),
        ];
        for (threads, redundant) in cases {
            let threads: Vec<Thread> = threads.iter().map(t).collect();
            assert_eq!(scope_redundant(&v, &threads), *redundant, "{threads:?}");
        }
    }

    /// Scopes narrowed until they hold a thread the next narrower scope
    /// does not: one CTA makes `.sys` and `.gpu` act as `.cta`; two CTAs
    /// of one GPU make `.sys` act as `.gpu`; two GPUs keep `.sys`.
    #[test]
    fn normal_form_narrows_to_the_effective_scope() {
        let v = super::super::vocab::load("ptx").unwrap();
        let e = |n: &str| v.entry_named(n);
        let prog = |a: (u8, u8, &str), b: (u8, u8, &str)| SProgram {
            threads: [a, b]
                .into_iter()
                .map(|(dev, wg, name)| super::super::program::SThread {
                    place: Place::Gpu { dev, wg },
                    ops: vec![super::super::program::SOp::new(e(name), 0, 1, u8::MAX)],
                })
                .collect(),
        };
        let entries =
            |p: &SProgram| -> Vec<usize> { p.threads.iter().map(|t| t.ops[0].entry).collect() };
        let one_cta = normal_form(
            &v,
            &prog((0, 0, "st.release.sys"), (0, 0, "st.relaxed.gpu")),
        );
        assert_eq!(
            one_cta.as_ref().map(entries),
            Some(vec![e("st.release.cta"), e("st.relaxed.cta")])
        );
        let two_ctas = normal_form(&v, &prog((0, 0, "st.release.sys"), (0, 1, "fence.sc.sys")));
        assert_eq!(
            two_ctas.as_ref().map(entries),
            Some(vec![e("st.release.gpu"), e("fence.sc.gpu")])
        );
        assert!(normal_form(&v, &prog((0, 0, "st.release.sys"), (1, 1, "st.weak"))).is_none());
        assert!(normal_form(&v, &prog((0, 0, "st.release.gpu"), (0, 1, "st.weak"))).is_none());
        // Every program the scope cut keeps is its own normal form.
        assert!(normal_form(&v, &prog((0, 0, "st.relaxed.cta"), (0, 0, "st.weak"))).is_none());
    }
}
