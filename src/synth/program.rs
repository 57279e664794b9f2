//! Synthesised programs, their outcomes, and the one-step weakenings
//! of a test (docs/synthesis.md, "Criterion" and "Weakenings").

use super::vocab::Vocab;
use crate::mapping::enumerate::{OpKind, Place};

/// One instruction: a vocabulary entry on a location.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SOp {
    /// Index into [`Vocab::entries`].
    pub entry: usize,
    pub loc: u8,
    /// The written value (stores and RMWs; distinct over the program), 0
    /// otherwise.
    pub value: u32,
    /// The register a read writes (its number in the thread), for loads
    /// and RMWs.
    pub reg: u8,
}

/// One thread.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SThread {
    pub place: Place,
    pub ops: Vec<SOp>,
}

/// A program: threads of vocabulary instructions.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SProgram {
    pub threads: Vec<SThread>,
}

/// A term of a condition.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum STerm {
    /// Register `reg` of thread `thread`.
    Reg { thread: usize, reg: u8 },
    /// The final value of a location.
    Loc(u8),
}

/// A condition: a conjunction of `term = value`, sorted.
pub type Cond = Vec<(STerm, u32)>;

impl SProgram {
    /// Number of locations (locations are numbered from 0).
    pub fn locations(&self) -> usize {
        self.threads
            .iter()
            .flat_map(|t| &t.ops)
            .filter(|o| o.value != 0 || o.reg != u8::MAX)
            .map(|o| o.loc as usize + 1)
            .max()
            .unwrap_or(0)
    }

    /// Events, RMWs counted as the vocabulary says.
    pub fn events(&self, vocab: &Vocab) -> usize {
        self.threads
            .iter()
            .flat_map(|t| &t.ops)
            .map(|o| vocab.events(vocab.entries[o.entry].kind))
            .sum()
    }

    /// Every term the program can observe: registers by thread, then the
    /// written locations.
    pub fn terms(&self, vocab: &Vocab) -> Vec<STerm> {
        let mut out = Vec::new();
        for (t, th) in self.threads.iter().enumerate() {
            for o in &th.ops {
                if reads(vocab, o) {
                    out.push(STerm::Reg {
                        thread: t,
                        reg: o.reg,
                    });
                }
            }
        }
        let mut locs: Vec<u8> = self
            .threads
            .iter()
            .flat_map(|t| &t.ops)
            .filter(|o| writes(vocab, o))
            .map(|o| o.loc)
            .collect();
        locs.sort_unstable();
        locs.dedup();
        out.extend(locs.into_iter().map(STerm::Loc));
        out
    }

    /// Every outcome the condition form can state: each read's value (0 or
    /// a value written to its location) and each written location's final
    /// value (a value written to it). Also says whether each outcome pins
    /// coherence (no location written three times or more).
    pub fn outcomes(&self, vocab: &Vocab) -> (Vec<Cond>, bool) {
        let nl = self.locations();
        let mut written: Vec<Vec<u32>> = vec![Vec::new(); nl];
        for o in self.threads.iter().flat_map(|t| &t.ops) {
            if writes(vocab, o) {
                written[o.loc as usize].push(o.value);
            }
        }
        let mut choices: Vec<(STerm, Vec<u32>)> = Vec::new();
        for (t, th) in self.threads.iter().enumerate() {
            for o in &th.ops {
                if reads(vocab, o) {
                    let mut vs = vec![0];
                    vs.extend(written[o.loc as usize].iter().copied());
                    choices.push((
                        STerm::Reg {
                            thread: t,
                            reg: o.reg,
                        },
                        vs,
                    ));
                }
            }
        }
        for (l, ws) in written.iter().enumerate() {
            if !ws.is_empty() {
                choices.push((STerm::Loc(l as u8), ws.clone()));
            }
        }
        let pinned = written.iter().all(|w| w.len() <= 2);
        let mut out = Vec::new();
        let mut cur = Vec::new();
        product(&choices, 0, &mut cur, &mut out);
        (out, pinned)
    }
}

fn product(choices: &[(STerm, Vec<u32>)], i: usize, cur: &mut Cond, out: &mut Vec<Cond>) {
    if i == choices.len() {
        let mut c = cur.clone();
        c.sort();
        out.push(c);
        return;
    }
    for &v in &choices[i].1 {
        cur.push((choices[i].0, v));
        product(choices, i + 1, cur, out);
        cur.pop();
    }
}

/// Whether the operation reads (a load or an RMW).
pub fn reads(vocab: &Vocab, o: &SOp) -> bool {
    matches!(vocab.entries[o.entry].kind, OpKind::Load | OpKind::Rmw)
}

/// Whether the operation writes (a store or an RMW).
pub fn writes(vocab: &Vocab, o: &SOp) -> bool {
    matches!(vocab.entries[o.entry].kind, OpKind::Store | OpKind::Rmw)
}

/// What a weakening did, for `--allowed-set` file names.
#[derive(Clone, Debug)]
pub struct Weakening {
    pub what: String,
    pub program: SProgram,
    pub cond: Cond,
}

/// The test `(p, c)` with operation `op` of thread `t` removed: reads that
/// read its value become unconstrained, and its location's final value
/// is dropped if it was the final write unless one write is left (which is
/// then final). A thread left empty disappears (threads renumbered).
fn remove(vocab: &Vocab, p: &SProgram, c: &Cond, t: usize, op: usize) -> (SProgram, Cond) {
    let gone = p.threads[t].ops[op].clone();
    let mut q = p.clone();
    q.threads[t].ops.remove(op);
    let empty = q.threads[t].ops.is_empty();
    if empty {
        q.threads.remove(t);
    }
    let left: Vec<u32> = q
        .threads
        .iter()
        .flat_map(|th| &th.ops)
        .filter(|o| writes(vocab, o) && o.loc == gone.loc)
        .map(|o| o.value)
        .collect();
    let mut out = Cond::new();
    for &(term, v) in c {
        match term {
            STerm::Reg { thread, reg } => {
                if thread == t && reg == gone.reg && reads(vocab, &gone) {
                    continue;
                }
                if writes(vocab, &gone) && v == gone.value {
                    continue;
                }
                let thread = if empty && thread > t {
                    thread - 1
                } else {
                    thread
                };
                out.push((STerm::Reg { thread, reg }, v));
            }
            STerm::Loc(l) => {
                if l == gone.loc && writes(vocab, &gone) && v == gone.value {
                    if left.len() == 1 {
                        out.push((term, left[0]));
                    }
                    continue;
                }
                out.push((term, v));
            }
        }
    }
    out.sort();
    (q, out)
}

/// Every one-step weakening of the test `(p, c)`: remove one operation (an
/// RMW with both its events), split an RMW into its read and write, demote
/// one operation one step in the vocabulary's lattice (scope included),
/// move one thread one placement level further out. Conditions follow
/// [`remove`]; the other weakenings keep the condition.
pub fn weakenings(vocab: &Vocab, p: &SProgram, c: &Cond, places: bool) -> Vec<Weakening> {
    weakenings_of(vocab, p, c, places, true, true)
}

/// The one-step weakenings of [`weakenings`], in its order: the removals
/// when `removals`, the others (split, demote, move) when `others`.
pub fn weakenings_of(
    vocab: &Vocab,
    p: &SProgram,
    c: &Cond,
    places: bool,
    removals: bool,
    others: bool,
) -> Vec<Weakening> {
    let mut out = Vec::new();
    for (t, th) in p.threads.iter().enumerate() {
        for (i, o) in th.ops.iter().enumerate() {
            let e = &vocab.entries[o.entry];
            if removals {
                let (program, cond) = remove(vocab, p, c, t, i);
                out.push(Weakening {
                    what: format!("remove-{t}-{i}"),
                    program,
                    cond,
                });
            }
            if !others {
                continue;
            }
            if let Some((r, w)) = e.split {
                let mut q = p.clone();
                let read = SOp {
                    entry: r,
                    loc: o.loc,
                    value: 0,
                    reg: o.reg,
                };
                let write = SOp {
                    entry: w,
                    loc: o.loc,
                    value: o.value,
                    reg: u8::MAX,
                };
                q.threads[t].ops.splice(i..=i, [read, write]);
                out.push(Weakening {
                    what: format!("split-{t}-{i}"),
                    program: q,
                    cond: c.clone(),
                });
            }
            for &w in &e.weaker {
                let mut q = p.clone();
                q.threads[t].ops[i].entry = w;
                out.push(Weakening {
                    what: format!("demote-{t}-{i}-{}", vocab.entries[w].name),
                    program: q,
                    cond: c.clone(),
                });
            }
        }
        if others
            && places
            && let Some(place) = further_out(p, t)
        {
            let mut q = p.clone();
            q.threads[t].place = place;
            out.push(Weakening {
                what: format!("move-{t}"),
                program: q,
                cond: c.clone(),
            });
        }
    }
    out
}

/// Thread `t` one placement level further out: from a CTA shared with
/// another thread to a CTA of its own on the same GPU, or from a GPU shared
/// with another thread to a GPU of its own (numbered past the others).
fn further_out(p: &SProgram, t: usize) -> Option<Place> {
    let Place::Gpu { dev, wg } = p.threads[t].place else {
        return None;
    };
    let others: Vec<(u8, u8)> = p
        .threads
        .iter()
        .enumerate()
        .filter(|&(u, _)| u != t)
        .filter_map(|(_, th)| match th.place {
            Place::Gpu { dev, wg } => Some((dev, wg)),
            _ => None,
        })
        .collect();
    let new_wg = others
        .iter()
        .map(|o| o.1 + 1)
        .max()
        .unwrap_or(0)
        .max(wg + 1);
    if others.contains(&(dev, wg)) {
        return Some(Place::Gpu { dev, wg: new_wg });
    }
    if others.iter().any(|o| o.0 == dev) {
        let new_dev = others
            .iter()
            .map(|o| o.0 + 1)
            .max()
            .unwrap_or(0)
            .max(dev + 1);
        return Some(Place::Gpu {
            dev: new_dev,
            wg: new_wg,
        });
    }
    None
}

/// The representative of a test's class under thread permutation (threads
/// kept by non-increasing length) and renaming of locations, written
/// values, registers, GPUs and CTAs (each numbered by first use): the
/// least encoding over permutations. Weakened programs are judged in this
/// form, so that every weakening of the same class shares one model run.
pub fn canonical(p: &SProgram, c: &Cond) -> (SProgram, Cond) {
    let mut best: Option<(SProgram, Cond)> = None;
    for_each_order(p, &mut |perm| {
        let cand = renamed(p, c, perm);
        if best.as_ref().is_none_or(|b| cand < *b) {
            best = Some(cand);
        }
    });
    best.unwrap_or_else(|| (p.clone(), c.clone()))
}

/// `p` and `c` with threads in `perm`'s order and everything renumbered
/// by first use.
fn renamed(p: &SProgram, c: &Cond, perm: &[usize]) -> (SProgram, Cond) {
    let (q, c, _) = renamed_full(p, c, perm);
    (q, c)
}

fn renamed_full(p: &SProgram, c: &Cond, perm: &[usize]) -> (SProgram, Cond, Renaming) {
    fn idx<T: PartialEq + Copy>(v: &mut Vec<T>, x: T) -> usize {
        match v.iter().position(|&y| y == x) {
            Some(i) => i,
            None => {
                v.push(x);
                v.len() - 1
            }
        }
    }
    let mut locs: Vec<u8> = Vec::new();
    let mut vals: Vec<u32> = Vec::new();
    let mut devs: Vec<u8> = Vec::new();
    let mut ctas: Vec<(u8, u8)> = Vec::new();
    let mut regmap: Vec<Vec<u8>> = vec![Vec::new(); p.threads.len()];
    let mut threads = Vec::with_capacity(p.threads.len());
    for &t in perm {
        let th = &p.threads[t];
        let place = match th.place {
            Place::Gpu { dev, wg } => Place::Gpu {
                dev: idx(&mut devs, dev) as u8,
                wg: idx(&mut ctas, (dev, wg)) as u8,
            },
            other => other,
        };
        let ops = th
            .ops
            .iter()
            .map(|o| SOp {
                entry: o.entry,
                loc: if o.value == 0 && o.reg == u8::MAX {
                    0
                } else {
                    idx(&mut locs, o.loc) as u8
                },
                value: if o.value == 0 {
                    0
                } else {
                    idx(&mut vals, o.value) as u32 + 1
                },
                reg: if o.reg == u8::MAX {
                    u8::MAX
                } else {
                    idx(&mut regmap[t], o.reg) as u8
                },
            })
            .collect();
        threads.push(SThread { place, ops });
    }
    let ren = Renaming {
        perm: perm.to_vec(),
        locs,
        vals,
        regmap,
    };
    let cond = ren.apply(c);
    (SProgram { threads }, cond, ren)
}

/// How [`canonical_program`] renamed a program: applied to a condition of
/// the original program, gives the condition of the canonical one.
#[derive(Clone, Debug)]
pub struct Renaming {
    perm: Vec<usize>,
    locs: Vec<u8>,
    vals: Vec<u32>,
    regmap: Vec<Vec<u8>>,
}

/// The canonical form of a program alone (least over thread permutations,
/// as [`canonical`]) with the renaming that gives it: weakened programs
/// are judged in this form, cached by their own text.
pub fn canonical_program(p: &SProgram) -> (SProgram, Renaming) {
    let empty = Cond::new();
    let mut best: Option<(SProgram, Vec<usize>)> = None;
    for_each_order(p, &mut |perm| {
        let (q, _) = renamed(p, &empty, perm);
        if best.as_ref().is_none_or(|b| q < b.0) {
            best = Some((q, perm.to_vec()));
        }
    });
    let perm = best.map(|b| b.1).unwrap_or_default();
    let (q, _, ren) = renamed_full(p, &empty, &perm);
    (q, ren)
}

impl Renaming {
    /// The condition renamed.
    pub fn apply(&self, c: &Cond) -> Cond {
        let (perm, locs, vals, regmap) = (&self.perm, &self.locs, &self.vals, &self.regmap);
        let mut cond: Cond = c
            .iter()
            .map(|&(term, v)| {
                let v = if v == 0 {
                    0
                } else {
                    vals.iter()
                        .position(|&w| w == v)
                        .map_or(u32::MAX, |i| i as u32 + 1)
                };
                let term = match term {
                    STerm::Reg { thread, reg } => {
                        let nt = perm.iter().position(|&x| x == thread).unwrap_or(usize::MAX);
                        let nr = regmap
                            .get(thread)
                            .and_then(|m| m.iter().position(|&r| r == reg))
                            .map_or(u8::MAX, |r| r as u8);
                        STerm::Reg {
                            thread: nt,
                            reg: nr,
                        }
                    }
                    STerm::Loc(l) => STerm::Loc(
                        locs.iter()
                            .position(|&m| m == l)
                            .map_or(u8::MAX, |i| i as u8),
                    ),
                };
                (term, v)
            })
            .collect();
        cond.sort();
        cond
    }
}

/// Calls `f` on every order of `p`'s threads that keeps them by
/// non-increasing length.
fn for_each_order(p: &SProgram, f: &mut dyn FnMut(&[usize])) {
    let n = p.threads.len();
    let mut perm: Vec<usize> = (0..n).collect();
    perm.sort_by_key(|&t| std::cmp::Reverse(p.threads[t].ops.len()));
    let mut runs: Vec<(usize, usize)> = Vec::new();
    let mut i = 0;
    while i < n {
        let mut j = i;
        while j < n && p.threads[perm[j]].ops.len() == p.threads[perm[i]].ops.len() {
            j += 1;
        }
        runs.push((i, j));
        i = j;
    }
    fn each(
        perm: &mut Vec<usize>,
        runs: &[(usize, usize)],
        r: usize,
        k: usize,
        f: &mut dyn FnMut(&[usize]),
    ) {
        if r == runs.len() {
            f(perm);
            return;
        }
        let b = runs[r].1;
        if k == b {
            each(perm, runs, r + 1, runs.get(r + 1).map_or(0, |x| x.0), f);
            return;
        }
        for i in k..b {
            perm.swap(k, i);
            each(perm, runs, r, k + 1, f);
            perm.swap(k, i);
        }
    }
    each(&mut perm, &runs, 0, 0, f);
}
