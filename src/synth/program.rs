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
    /// otherwise; for an `add` entry, the amount it adds. In a program
    /// with an add every value is a distinct power of two, so a value
    /// written along a chain of adds (a sum of amounts) still names one
    /// write.
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

#[cfg(test)]
impl SOp {
    /// An operation of entry `entry` (tests build programs by hand).
    pub(crate) fn new(entry: usize, loc: u8, value: u32, reg: u8) -> SOp {
        SOp {
            entry,
            loc,
            value,
            reg,
        }
    }
}

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

    /// Whether some operation is an `add` (its write depends on its read).
    pub fn has_adds(&self, vocab: &Vocab) -> bool {
        self.threads
            .iter()
            .flat_map(|t| &t.ops)
            .any(|o| vocab.entries[o.entry].adds)
    }

    /// Every outcome the condition form can state: each read's value (0 or
    /// a value written to its location) and each written location's final
    /// value (a value written to it). Also says whether each outcome pins
    /// coherence (no location written three times or more).
    pub fn outcomes(&self, vocab: &Vocab) -> (Vec<Cond>, bool) {
        if self.has_adds(vocab) {
            return self.outcomes_by_rf(vocab);
        }
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
        product(&choices, &mut cur, &mut out);
        (out, pinned)
    }

    /// [`SProgram::outcomes`] for a program with adds, whose written
    /// values depend on what the adds read: every choice of a source (the
    /// initial value or a write to the location) for every read, the
    /// values that follow (choices where adds read each other in a cycle
    /// give no values and no outcome), then every choice of each written
    /// location's last write.
    fn outcomes_by_rf(&self, vocab: &Vocab) -> (Vec<Cond>, bool) {
        let ops: Vec<(usize, &SOp)> = self
            .threads
            .iter()
            .enumerate()
            .flat_map(|(t, th)| th.ops.iter().map(move |o| (t, o)))
            .collect();
        let nl = self.locations();
        let mut writes_to: Vec<Vec<usize>> = vec![Vec::new(); nl];
        for (i, (_, o)) in ops.iter().enumerate() {
            if writes(vocab, o) {
                writes_to[o.loc as usize].push(i);
            }
        }
        let read_ops: Vec<usize> = (0..ops.len()).filter(|&i| reads(vocab, ops[i].1)).collect();
        // Per op, its source while enumerating: None (initial value) or a write.
        let mut src: Vec<Option<usize>> = vec![None; ops.len()];
        let mut out: std::collections::BTreeSet<Cond> = std::collections::BTreeSet::new();
        fn value(
            vocab: &Vocab,
            ops: &[(usize, &SOp)],
            src: &[Option<usize>],
            w: usize,
            depth: usize,
        ) -> Option<u32> {
            let o = ops[w].1;
            if !vocab.entries[o.entry].adds {
                return Some(o.value);
            }
            if depth > ops.len() {
                return None; // adds reading each other in a cycle
            }
            let read = match src[w] {
                None => 0,
                Some(s) => value(vocab, ops, src, s, depth + 1)?,
            };
            Some(read + o.value)
        }
        #[allow(clippy::too_many_arguments)]
        fn each(
            vocab: &Vocab,
            ops: &[(usize, &SOp)],
            read_ops: &[usize],
            writes_to: &[Vec<usize>],
            k: usize,
            src: &mut Vec<Option<usize>>,
            out: &mut std::collections::BTreeSet<Cond>,
        ) {
            if k < read_ops.len() {
                let r = read_ops[k];
                let loc = ops[r].1.loc as usize;
                src[r] = None;
                each(vocab, ops, read_ops, writes_to, k + 1, src, out);
                for &w in &writes_to[loc] {
                    src[r] = Some(w);
                    each(vocab, ops, read_ops, writes_to, k + 1, src, out);
                }
                src[r] = None;
                return;
            }
            let vals: Option<Vec<u32>> = (0..ops.len())
                .map(|w| {
                    if writes(vocab, ops[w].1) {
                        value(vocab, ops, src, w, 0)
                    } else {
                        Some(0)
                    }
                })
                .collect();
            let Some(vals) = vals else {
                return;
            };
            let mut regs: Cond = read_ops
                .iter()
                .map(|&r| {
                    let (thread, o) = ops[r];
                    let v = src[r].map_or(0, |w| vals[w]);
                    (STerm::Reg { thread, reg: o.reg }, v)
                })
                .collect();
            let finals: Vec<(STerm, Vec<u32>)> = writes_to
                .iter()
                .enumerate()
                .filter(|(_, ws)| !ws.is_empty())
                .map(|(l, ws)| (STerm::Loc(l as u8), ws.iter().map(|&w| vals[w]).collect()))
                .collect();
            let mut conds = Vec::new();
            product(&finals, &mut regs, &mut conds);
            out.extend(conds);
        }
        each(vocab, &ops, &read_ops, &writes_to, 0, &mut src, &mut out);
        let pinned = writes_to.iter().all(|w| w.len() <= 2);
        (out.into_iter().collect(), pinned)
    }
}

/// The value condition `c` gives the register of read `o` of thread `t`.
fn read_value(t: usize, o: &SOp, c: &Cond) -> Option<u32> {
    let me = STerm::Reg {
        thread: t,
        reg: o.reg,
    };
    c.iter().find(|x| x.0 == me).map(|&(_, v)| v)
}

/// The value operation `o` of thread `t` writes under condition `c`: its
/// own value, or for an add the value its register read (in `c`) plus its
/// amount (`None` when `c` does not give that register).
fn written_value(vocab: &Vocab, t: usize, o: &SOp, c: &Cond) -> Option<u32> {
    if !vocab.entries[o.entry].adds {
        return Some(o.value);
    }
    read_value(t, o, c).map(|v| v + o.value)
}

/// Every condition `cur` followed by one value for each term of `choices`
/// (the last term's value changing fastest), sorted, appended to `out`;
/// `cur` is left as it was. When the terms already come in order (as the
/// synthesised programs' registers and locations do) no condition needs
/// sorting.
fn product(choices: &[(STerm, Vec<u32>)], cur: &mut Cond, out: &mut Vec<Cond>) {
    if choices.iter().any(|(_, vs)| vs.is_empty()) {
        return;
    }
    let terms = || cur.iter().map(|c| c.0).chain(choices.iter().map(|c| c.0));
    let sorted = terms().zip(terms().skip(1)).all(|(a, b)| a < b);
    let total = choices
        .iter()
        .fold(1usize, |n, (_, vs)| n.saturating_mul(vs.len()));
    out.reserve(total.min(1 << 16));
    let base = cur.len();
    cur.extend(choices.iter().map(|(t, vs)| (*t, vs[0])));
    let mut idx = vec![0usize; choices.len()];
    loop {
        let mut c = cur.clone();
        if !sorted {
            c.sort();
        }
        out.push(c);
        if !next_pick(&mut idx, |k| choices[k].1.len()) {
            cur.truncate(base);
            return;
        }
        for (k, &i) in idx.iter().enumerate() {
            cur[base + k].1 = choices[k].1[i];
        }
    }
}

/// Steps `pick` to the next combination, digit `i` running below
/// `len(i)` and the last digit fastest; false (all digits back at 0) after
/// the last one.
pub(super) fn next_pick(pick: &mut [usize], len: impl Fn(usize) -> usize) -> bool {
    for k in (0..pick.len()).rev() {
        pick[k] += 1;
        if pick[k] < len(k) {
            return true;
        }
        pick[k] = 0;
    }
    false
}

/// Whether the operation reads (a load or an RMW).
pub fn reads(vocab: &Vocab, o: &SOp) -> bool {
    matches!(vocab.entries[o.entry].kind, OpKind::Load | OpKind::Rmw)
}

/// Whether the operation writes (a store or an RMW).
pub fn writes(vocab: &Vocab, o: &SOp) -> bool {
    matches!(vocab.entries[o.entry].kind, OpKind::Store | OpKind::Rmw)
}

/// Which one-step weakening (thread, operation; for a demotion, the
/// entry demoted to).
#[derive(Clone, Copy, Debug)]
pub enum Step {
    Remove(usize, usize),
    Split(usize, usize),
    Demote(usize, usize, usize),
    Move(usize),
}

/// A weakened test and the step that made it.
#[derive(Clone, Debug)]
pub struct Weakening {
    pub step: Step,
    pub program: SProgram,
    pub cond: Cond,
}

impl Weakening {
    /// What the weakening did, for `--allowed-set` file names
    /// (`remove-0-1`, `split-1-0`, `demote-0-0-ld.relaxed.gpu`, `move-2`);
    /// built only when asked, since the search makes millions.
    pub fn what(&self, vocab: &Vocab) -> String {
        match self.step {
            Step::Remove(t, i) => format!("remove-{t}-{i}"),
            Step::Split(t, i) => format!("split-{t}-{i}"),
            Step::Demote(t, i, w) => format!("demote-{t}-{i}-{}", vocab.entries[w].name),
            Step::Move(t) => format!("move-{t}"),
        }
    }
}

/// The test `(p, c)` with operation `op` of thread `t` removed: reads that
/// read its value become unconstrained, and its location's final value
/// is dropped if it was the final write unless one write is left (which is
/// then final). An add whose read becomes unconstrained writes an
/// unconstrained value in turn, so the reads of that value and a final
/// value it was go the same way. A thread left empty disappears (threads
/// renumbered).
fn remove(vocab: &Vocab, p: &SProgram, c: &Cond, t: usize, op: usize) -> (SProgram, Cond) {
    (removed_program(p, t, op), removed_cond(vocab, p, c, t, op))
}

/// `p` with operation `op` of thread `t` removed (a thread left empty
/// disappears): the program of [`remove`], which does not depend on the
/// condition.
pub fn removed_program(p: &SProgram, t: usize, op: usize) -> SProgram {
    let mut q = p.clone();
    q.threads[t].ops.remove(op);
    if q.threads[t].ops.is_empty() {
        q.threads.remove(t);
    }
    q
}

/// The condition of [`remove`] for `c` (see there), against
/// [`removed_program`]'s program.
pub fn removed_cond(vocab: &Vocab, p: &SProgram, c: &Cond, t: usize, op: usize) -> Cond {
    let gone = &p.threads[t].ops[op];
    // Values no longer written as the condition says: the removed write's,
    // then those of adds that read one of them.
    let mut lost: Vec<u32> = Vec::new();
    if writes(vocab, gone)
        && let Some(v) = written_value(vocab, t, gone, c)
    {
        lost.push(v);
    }
    loop {
        let before = lost.len();
        for (ti, th) in p.threads.iter().enumerate() {
            for (oi, o) in th.ops.iter().enumerate() {
                if (ti, oi) == (t, op) || !vocab.entries[o.entry].adds {
                    continue;
                }
                if let Some(v) = read_value(ti, o, c)
                    && lost.contains(&v)
                    && !lost.contains(&(v + o.value))
                {
                    lost.push(v + o.value);
                }
            }
        }
        if lost.len() == before {
            break;
        }
    }
    let empty = p.threads[t].ops.len() == 1;
    // Per location, the values of the writes left (None: unconstrained).
    let left = |loc: u8| -> Vec<Option<u32>> {
        p.threads
            .iter()
            .enumerate()
            .flat_map(|(ti, th)| th.ops.iter().enumerate().map(move |(oi, o)| (ti, oi, o)))
            .filter(|&(ti, oi, o)| (ti, oi) != (t, op) && writes(vocab, o) && o.loc == loc)
            .map(|(ti, _, o)| written_value(vocab, ti, o, c).filter(|v| !lost.contains(v)))
            .collect()
    };
    let mut out = Cond::with_capacity(c.len());
    for &(term, v) in c {
        match term {
            STerm::Reg { thread, reg } => {
                if thread == t && reg == gone.reg && reads(vocab, gone) {
                    continue;
                }
                if lost.contains(&v) {
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
                if lost.contains(&v) {
                    if let [Some(only)] = left(l)[..] {
                        out.push((term, only));
                    }
                    continue;
                }
                out.push((term, v));
            }
        }
    }
    out.sort();
    out
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
                    step: Step::Remove(t, i),
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
                    step: Step::Split(t, i),
                    program: q,
                    cond: c.clone(),
                });
            }
            for &w in &e.weaker {
                let mut q = p.clone();
                q.threads[t].ops[i].entry = w;
                out.push(Weakening {
                    step: Step::Demote(t, i, w),
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
                step: Step::Move(t),
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
pub fn canonical(p: &SProgram, c: &Cond, bits: bool) -> (SProgram, Cond) {
    let mut best: Option<(SProgram, Cond)> = None;
    for_each_order(p, &mut |perm| {
        let cand = renamed(p, c, perm, bits);
        if best.as_ref().is_none_or(|b| cand < *b) {
            best = Some(cand);
        }
    });
    best.unwrap_or_else(|| (p.clone(), c.clone()))
}

/// `p` and `c` with threads in `perm`'s order and everything renumbered
/// by first use: values become 1, 2, 3, ..., or with `bits` (programs with
/// adds, whose values are powers of two and conditions sums of them) 1, 2,
/// 4, ..., a condition's value renamed bit by bit.
fn renamed(p: &SProgram, c: &Cond, perm: &[usize], bits: bool) -> (SProgram, Cond) {
    let (q, c, _) = renamed_full(p, c, perm, bits);
    (q, c)
}

fn renamed_full(p: &SProgram, c: &Cond, perm: &[usize], bits: bool) -> (SProgram, Cond, Renaming) {
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
                } else if bits {
                    1 << idx(&mut vals, o.value)
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
        bits,
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
    /// Values are powers of two, renamed bit by bit.
    bits: bool,
}

/// The canonical form of a program alone (least over thread permutations,
/// as [`canonical`]) with the renaming that gives it: weakened programs
/// are judged in this form, cached by their own text.
pub fn canonical_program(p: &SProgram, bits: bool) -> (SProgram, Renaming) {
    let empty = Cond::new();
    let mut best: Option<(SProgram, Vec<usize>)> = None;
    for_each_order(p, &mut |perm| {
        let (q, _) = renamed(p, &empty, perm, bits);
        if best.as_ref().is_none_or(|b| q < b.0) {
            best = Some((q, perm.to_vec()));
        }
    });
    let perm = best.map(|b| b.1).unwrap_or_default();
    let (q, _, ren) = renamed_full(p, &empty, &perm, bits);
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
                } else if self.bits {
                    // A sum of amounts: each amount renamed.
                    (0..32)
                        .filter(|b| v & (1 << b) != 0)
                        .try_fold(0u32, |acc, b| {
                            vals.iter().position(|&w| w == 1 << b).map(|i| acc | 1 << i)
                        })
                        .unwrap_or(u32::MAX)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synth::vocab::load;

    /// `atom.relaxed.gpu.add x, 1 | atom.relaxed.gpu.add x, 2` on two CTAs.
    fn two_adds(vocab: &Vocab) -> SProgram {
        let add = vocab
            .entries
            .iter()
            .position(|e| e.name == "atom.relaxed.gpu.add")
            .unwrap();
        let thread = |wg: u8, value: u32| SThread {
            place: Place::Gpu { dev: 0, wg },
            ops: vec![SOp {
                entry: add,
                loc: 0,
                value,
                reg: 0,
            }],
        };
        SProgram {
            threads: vec![thread(0, 1), thread(1, 2)],
        }
    }

    fn reg(thread: usize) -> STerm {
        STerm::Reg { thread, reg: 0 }
    }

    /// By hand: each add reads the initial 0 or the other's write (both
    /// reading the other is a cycle with no values), and either write is
    /// last: 3 × 2 outcomes, with values following the reads.
    #[test]
    fn outcomes_of_two_adds_follow_their_reads() {
        let vocab = load("ptx").unwrap();
        let p = two_adds(&vocab);
        assert!(p.has_adds(&vocab));
        let (outcomes, pinned) = p.outcomes(&vocab);
        assert!(pinned);
        let x = STerm::Loc(0);
        let mut want: Vec<Cond> = vec![
            // Both read 0: the lost update (x is 1 or 2).
            vec![(reg(0), 0), (reg(1), 0), (x, 1)],
            vec![(reg(0), 0), (reg(1), 0), (x, 2)],
            // P1 reads P0's 1 and writes 3.
            vec![(reg(0), 0), (reg(1), 1), (x, 1)],
            vec![(reg(0), 0), (reg(1), 1), (x, 3)],
            // P0 reads P1's 2 and writes 3.
            vec![(reg(0), 2), (reg(1), 0), (x, 3)],
            vec![(reg(0), 2), (reg(1), 0), (x, 2)],
        ];
        for c in &mut want {
            c.sort();
        }
        want.sort();
        assert_eq!(outcomes, want);
    }

    /// Removing P0's add from "P1 read P0's 1, x=3": P1's read loses its
    /// source, so the 3 it wrote is unconstrained too, and so is the final
    /// value (the only write left is P1's, of unknown value).
    #[test]
    fn removing_an_add_unconstrains_what_follows_it() {
        let vocab = load("ptx").unwrap();
        let p = two_adds(&vocab);
        let x = STerm::Loc(0);
        let mut c = vec![(reg(0), 0), (reg(1), 1), (x, 3)];
        c.sort();
        let (q, d) = remove(&vocab, &p, &c, 0, 0);
        assert_eq!(q.threads.len(), 1);
        assert!(d.is_empty(), "{d:?}");
        // Removing P1's add instead keeps P0's read of 0 and makes P0's
        // write (1) final.
        let (q, d) = remove(&vocab, &p, &c, 1, 0);
        assert_eq!(q.threads.len(), 1);
        assert_eq!(d, vec![(reg(0), 0), (x, 1)]);
    }

    /// Canonical renaming of a program with adds renames values as powers
    /// of two and condition values bit by bit.
    #[test]
    fn canonical_forms_of_adds_rename_sums() {
        let vocab = load("ptx").unwrap();
        let mut p = two_adds(&vocab);
        p.threads.swap(0, 1);
        let x = STerm::Loc(0);
        // P0 (adding 2) reads P1's 1 and writes 3, which is final.
        let mut c = vec![(reg(0), 1), (reg(1), 0), (x, 3)];
        c.sort();
        let (q, d) = canonical(&p, &c, true);
        let values: Vec<u32> = q.threads.iter().map(|t| t.ops[0].value).collect();
        assert_eq!(values, [1, 2]);
        // Still: one add reads the other's value, the sum is final.
        assert!(d.contains(&(x, 3)), "{d:?}");
        assert!(
            d.iter()
                .any(|&(t, v)| matches!(t, STerm::Reg { .. }) && v == 0)
        );
        assert!(
            d.iter()
                .any(|&(t, v)| matches!(t, STerm::Reg { .. }) && v != 0 && v < 3)
        );
    }
}
