//! The SC cut's states: a program's final states under sequential
//! consistency (every interleaving; an RMW is one atomic step, fences do
//! nothing). Every model litmix synthesises for allows these (none is
//! stronger than SC), so an outcome found here needs no model run
//! (docs/synthesis.md, "Cuts").
//!
//! Two ways to the same set: [`by_executions`] checks each choice of
//! reads-from and coherence for a cycle in `po ∪ rf ∪ co ∪ fr` (an
//! execution is an interleaving's exactly when there is none, an RMW
//! being one event that both reads and writes); [`by_interleavings`]
//! walks the interleavings. The first is used where it applies (programs
//! without adds, of few enough choices), the walk elsewhere; a test
//! compares the two on every program of a sample.

use super::judged::Judged;
use super::program::{SProgram, STerm, reads, writes};
use super::vocab::Vocab;
use crate::mapping::enumerate::OpKind;

/// Choices of reads-from, coherence and last writes past which
/// [`by_executions`] leaves a program to the walk (its cost grows with
/// them, the walk's with the interleavings).
const MAX_CHOICES: u64 = 1 << 14;

/// The final states of `p` under sequential consistency, in the form of a
/// [`Judged`] over `p`'s terms ([`SProgram::terms`]).
pub fn sc_judged(vocab: &Vocab, p: &SProgram) -> Judged {
    let terms = p.terms(vocab);
    let states =
        by_executions(vocab, p, &terms).unwrap_or_else(|| by_interleavings(vocab, p, &terms));
    Judged::new(terms.into_iter().map(Some).collect(), states, false)
}

/// One access of a program as [`by_executions`] sees it: a load, a store,
/// or an RMW as one event that reads and writes.
struct Access {
    loc: usize,
    reads: bool,
    writes: bool,
    value: u32,
}

/// The final states of `p` (values in `terms` order) by executions: every
/// choice of a source for each read (the initial value or a write to its
/// location other than itself) and of a last write for each written
/// location, kept when some coherence order with those last writes makes
/// `po ∪ rf ∪ co ∪ fr` acyclic. With an RMW one event, a cycle also
/// catches a write coming between its read's source and its write in
/// coherence (`fr` from it to that write, `co` back). `None` for a
/// program with an add (its written values depend on its reads), of more
/// than 32 accesses, or of more than [`MAX_CHOICES`] choices.
pub(super) fn by_executions(vocab: &Vocab, p: &SProgram, terms: &[STerm]) -> Option<Vec<Vec<i64>>> {
    if p.has_adds(vocab) {
        return None;
    }
    let mut acc: Vec<Access> = Vec::new();
    // Per access, the accesses before it in its thread.
    let mut po: Vec<u32> = Vec::new();
    // Per register term, the access that last writes it.
    let mut last_read: Vec<(usize, u8, usize)> = Vec::new();
    for (t, th) in p.threads.iter().enumerate() {
        let mut before = 0u32;
        for o in &th.ops {
            let (r, w) = (reads(vocab, o), writes(vocab, o));
            if !r && !w {
                continue;
            }
            if acc.len() == 32 {
                return None;
            }
            let i = acc.len();
            acc.push(Access {
                loc: o.loc as usize,
                reads: r,
                writes: w,
                value: o.value,
            });
            po.push(before);
            before |= 1 << i;
            if r {
                match last_read.iter_mut().find(|x| x.0 == t && x.1 == o.reg) {
                    Some(x) => x.2 = i,
                    None => last_read.push((t, o.reg, i)),
                }
            }
        }
    }
    let nl = acc.iter().map(|a| a.loc + 1).max().unwrap_or(0);
    let mut writes_to: Vec<Vec<usize>> = vec![Vec::new(); nl];
    for (i, a) in acc.iter().enumerate() {
        if a.writes {
            writes_to[a.loc].push(i);
        }
    }
    let read_list: Vec<usize> = (0..acc.len()).filter(|&i| acc[i].reads).collect();
    // Each read's possible sources: `None` (the initial value) or a write
    // to its location other than itself.
    let sources: Vec<Vec<Option<usize>>> = read_list
        .iter()
        .map(|&r| {
            std::iter::once(None)
                .chain(
                    writes_to[acc[r].loc]
                        .iter()
                        .filter(|&&w| w != r)
                        .map(|&w| Some(w)),
                )
                .collect()
        })
        .collect();
    let written: Vec<usize> = (0..nl).filter(|&l| !writes_to[l].is_empty()).collect();
    let mut choices: u64 = 1;
    for s in &sources {
        choices = choices.saturating_mul(s.len() as u64);
    }
    for &l in &written {
        // Each last write, with every order of the others.
        let k = writes_to[l].len() as u64;
        choices = choices.saturating_mul((1..=k).product());
    }
    if choices > MAX_CHOICES {
        return None;
    }
    // Each term's place: a read's access, or a written location's index
    // in `written`.
    let mut places: Vec<Result<usize, usize>> = Vec::with_capacity(terms.len());
    for t in terms {
        places.push(match *t {
            STerm::Reg { thread, reg } => Ok(last_read
                .iter()
                .find(|x| x.0 == thread && x.1 == reg)
                .map(|x| x.2)?),
            STerm::Loc(l) => Err(written.iter().position(|&w| w == l as usize)?),
        });
    }
    let mut search = Executions {
        acc: &acc,
        po: &po,
        writes_to: &writes_to,
        read_list: &read_list,
        sources: &sources,
        written: &written,
        src: vec![None; acc.len()],
        last: vec![0; written.len()],
        order: writes_to.clone(),
        places: &places,
        out: Vec::new(),
    };
    search.reads_from(0);
    Some(search.out)
}

/// The search of [`by_executions`]: the program's accesses and choices,
/// the current choice of sources and last writes, and the states found.
struct Executions<'a> {
    acc: &'a [Access],
    po: &'a [u32],
    writes_to: &'a [Vec<usize>],
    read_list: &'a [usize],
    sources: &'a [Vec<Option<usize>>],
    written: &'a [usize],
    /// Per access, its read's source.
    src: Vec<Option<usize>>,
    /// Per written location (in `written` order), its last write.
    last: Vec<usize>,
    /// Per location, its writes in the coherence order being tried.
    order: Vec<Vec<usize>>,
    places: &'a [Result<usize, usize>],
    out: Vec<Vec<i64>>,
}

impl Executions<'_> {
    /// Chooses the sources of reads `k..`, then the last writes.
    fn reads_from(&mut self, k: usize) {
        let Some(&r) = self.read_list.get(k) else {
            return self.last_writes(0);
        };
        for j in 0..self.sources[k].len() {
            let s = self.sources[k][j];
            // A read of a write after it in its thread is a cycle at once.
            if s.is_some_and(|w| self.po[w] & (1 << r) != 0) {
                continue;
            }
            self.src[r] = s;
            self.reads_from(k + 1);
        }
    }

    /// Chooses the last writes of written locations `k..`, then keeps the
    /// state if some coherence order fits.
    fn last_writes(&mut self, k: usize) {
        if k == self.written.len() {
            if self.coherence(0) {
                let state = self
                    .places
                    .iter()
                    .map(|&p| match p {
                        Ok(r) => self.src[r].map_or(0, |w| self.acc[w].value) as i64,
                        Err(l) => self.acc[self.last[l]].value as i64,
                    })
                    .collect();
                self.out.push(state);
            }
            return;
        }
        for &w in &self.writes_to[self.written[k]] {
            self.last[k] = w;
            self.last_writes(k + 1);
        }
    }

    /// Whether some coherence order of written locations `k..` (each
    /// ending with its chosen last write) leaves no cycle.
    fn coherence(&mut self, k: usize) -> bool {
        let Some(&l) = self.written.get(k) else {
            return self.acyclic();
        };
        // The location's writes, its last write at the end; the others in
        // every order (Heap's algorithm over the first `n - 1`), in place.
        let last = self.last[k];
        let ws = &mut self.order[l];
        ws.clear();
        ws.extend(self.writes_to[l].iter().filter(|&&w| w != last));
        ws.push(last);
        let n = ws.len();
        if self.coherence(k + 1) {
            return true;
        }
        let mut c = [0u8; 32];
        let mut i = 0;
        while i + 1 < n {
            if usize::from(c[i]) < i {
                let j = if i % 2 == 0 { 0 } else { usize::from(c[i]) };
                self.order[l].swap(j, i);
                if self.coherence(k + 1) {
                    return true;
                }
                c[i] += 1;
                i = 0;
            } else {
                c[i] = 0;
                i += 1;
            }
        }
        false
    }

    /// Whether `po ∪ rf ∪ co ∪ fr` of the current choice has no cycle
    /// (`co` as each location's chain, `fr` from a read to the write
    /// after its source in coherence: the rest follow along `co`).
    fn acyclic(&self) -> bool {
        let n = self.acc.len();
        let mut pred = [0u32; 32];
        pred[..n].copy_from_slice(self.po);
        for ws in &self.order {
            for pair in ws.windows(2) {
                pred[pair[1]] |= 1 << pair[0];
            }
        }
        for &r in self.read_list {
            let ws = &self.order[self.acc[r].loc];
            let next = match self.src[r] {
                None => ws.first(),
                Some(s) => {
                    pred[r] |= 1 << s;
                    ws.iter().position(|&w| w == s).and_then(|i| ws.get(i + 1))
                }
            };
            // An RMW reading the write just before its own is atomic.
            if let Some(&w) = next.filter(|&&w| w != r) {
                pred[w] |= 1 << r;
            }
        }
        let mut left: u64 = (1u64 << n) - 1;
        while left != 0 {
            let mut ready = 0u64;
            let mut rest = left;
            while rest != 0 {
                let i = rest.trailing_zeros() as usize;
                rest &= rest - 1;
                if u64::from(pred[i]) & left == 0 {
                    ready |= 1 << i;
                }
            }
            if ready == 0 {
                return false;
            }
            left &= !ready;
        }
        true
    }
}

/// The final states of `p` (values in `terms` order) by walking its
/// interleavings depth first, with a memo of the states met (program
/// counters, memory, registers); a thread at a fence steps past it at
/// once.
pub(super) fn by_interleavings(vocab: &Vocab, p: &SProgram, terms: &[STerm]) -> Vec<Vec<i64>> {
    let regs: Vec<Vec<u32>> = p
        .threads
        .iter()
        .map(|t| {
            let n = t
                .ops
                .iter()
                .filter(|o| o.reg != u8::MAX)
                .map(|o| o.reg as usize + 1)
                .max();
            vec![0; n.unwrap_or(0)]
        })
        .collect();
    let mut walk = ScWalk {
        vocab,
        p,
        terms,
        pcs: vec![0; p.threads.len()],
        mem: vec![0; p.locations().max(1)],
        regs,
        out: std::collections::HashSet::default(),
        seen: std::collections::HashSet::default(),
    };
    for t in 0..p.threads.len() {
        walk.skip_fences(t);
    }
    walk.go();
    walk.out.into_iter().collect()
}

/// The interleavings of [`by_interleavings`], depth first: the machine state
/// (program counters, memory, registers), the final states found, and the
/// states met.
struct ScWalk<'a> {
    vocab: &'a Vocab,
    p: &'a SProgram,
    terms: &'a [STerm],
    pcs: Vec<usize>,
    mem: Vec<u32>,
    regs: Vec<Vec<u32>>,
    out: std::collections::HashSet<Vec<i64>, crate::fast_hash::FastHash>,
    seen: std::collections::HashSet<[u8; 32], crate::fast_hash::FastHash>,
}

impl ScWalk<'_> {
    /// Explores from the current state unless it was met before (states
    /// already explored reach the same final states).
    fn go(&mut self) {
        // The state as a key: program counters, memory, registers, a byte
        // each (programs past 32 of them, or with values past 255, are
        // explored without the memo).
        let mut key = [0u8; 32];
        let parts = self
            .pcs
            .iter()
            .copied()
            .chain(self.mem.iter().map(|&v| v as usize))
            .chain(self.regs.iter().flatten().map(|&v| v as usize));
        let mut fits = true;
        for (i, v) in parts.enumerate() {
            match (key.get_mut(i), u8::try_from(v)) {
                (Some(k), Ok(b)) => *k = b,
                _ => {
                    fits = false;
                    break;
                }
            }
        }
        if !fits || self.seen.insert(key) {
            self.step();
        }
    }

    /// Moves thread `t` past the fences at its program counter (fences do
    /// nothing under SC, so a thread at one steps past it at once); how
    /// many it passed.
    fn skip_fences(&mut self, t: usize) -> usize {
        let ops = &self.p.threads[t].ops;
        let start = self.pcs[t];
        while ops
            .get(self.pcs[t])
            .is_some_and(|o| self.vocab.entries[o.entry].kind == OpKind::Fence)
        {
            self.pcs[t] += 1;
        }
        self.pcs[t] - start
    }

    /// One step of each thread in turn (an RMW is one atomic step; an add
    /// writes what it read plus its amount), or the final state when
    /// every thread is done.
    fn step(&mut self) {
        let (vocab, p) = (self.vocab, self.p);
        let mut done = true;
        for t in 0..p.threads.len() {
            let Some(o) = p.threads[t].ops.get(self.pcs[t]) else {
                continue;
            };
            done = false;
            let old_mem = self.mem[o.loc as usize];
            let old_reg = if reads(vocab, o) {
                std::mem::replace(&mut self.regs[t][o.reg as usize], old_mem)
            } else {
                0
            };
            if writes(vocab, o) {
                self.mem[o.loc as usize] = if vocab.entries[o.entry].adds {
                    old_mem + o.value
                } else {
                    o.value
                };
            }
            self.pcs[t] += 1;
            let passed = self.skip_fences(t);
            self.go();
            self.pcs[t] -= 1 + passed;
            self.mem[o.loc as usize] = old_mem;
            if reads(vocab, o) {
                self.regs[t][o.reg as usize] = old_reg;
            }
        }
        if done {
            let state = self
                .terms
                .iter()
                .map(|t| match *t {
                    STerm::Reg { thread, reg } => self.regs[thread][reg as usize] as i64,
                    STerm::Loc(l) => self.mem[l as usize] as i64,
                })
                .collect();
            self.out.insert(state);
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::mapping::enumerate::Place;
    use crate::synth::program::{SOp, SThread};
    use crate::synth::vocab::load;

    /// x86 SB (`W x; R y | W y; R x`, values 1 and 2), with an MFENCE
    /// between the accesses of each thread when `fence`.
    pub(crate) fn sb(vocab: &Vocab, fence: bool) -> SProgram {
        let e = |n: &str| vocab.entry_named(n);
        let (w, f, r) = (e("W"), e("MFENCE"), e("R"));
        let op = SOp::new;
        let thread = |x: u8, y: u8, v: u32| {
            let mut ops = vec![op(w, x, v, u8::MAX)];
            if fence {
                ops.push(op(f, 0, 0, u8::MAX));
            }
            ops.push(op(r, y, 0, 0));
            SThread {
                place: Place::Cpu,
                ops,
            }
        };
        SProgram {
            threads: vec![thread(0, 1, 1), thread(1, 0, 2)],
        }
    }

    /// Both ways to the states of `p`, which must agree; the states.
    fn both(vocab: &Vocab, p: &SProgram) -> Vec<Vec<i64>> {
        let terms = p.terms(vocab);
        let by_exec = by_executions(vocab, p, &terms).expect("few choices");
        let j = sc_judged(vocab, p);
        let walked = Judged::new(
            terms.iter().copied().map(Some).collect(),
            by_interleavings(vocab, p, &terms),
            false,
        );
        let execs = Judged::new(terms.iter().copied().map(Some).collect(), by_exec, false);
        assert_eq!(execs.states(), walked.states(), "{p:?}");
        assert_eq!(j.states(), walked.states(), "{p:?}");
        j.states()
    }

    /// SB with and without a fence in each thread (`W x; R y | W y; R x`):
    /// under SC P0's read of y and P1's read of x give (0, 1), (2, 0) or
    /// (2, 1), never both 0; each location ends with its one write. By
    /// hand: the three final states of the interleavings of the four
    /// accesses (fences do nothing).
    #[test]
    fn sc_states_of_sb_with_and_without_fences() {
        let vocab = load("x86").unwrap();
        for fence in [true, false] {
            let p = sb(&vocab, fence);
            // Terms: 0:EAX, 1:EAX, x, y.
            assert_eq!(sc_judged(&vocab, &p).terms.len(), 4);
            assert_eq!(
                both(&vocab, &p),
                vec![vec![0, 1, 1, 2], vec![2, 0, 1, 2], vec![2, 1, 1, 2]]
            );
        }
    }

    /// Two exchanges on x (`XCHG x ← 1 | XCHG x ← 2`): one reads 0 and the
    /// other reads its value, which is not the final one; never both 0
    /// (the RMWs are atomic). Three plain writes of x from three threads:
    /// x ends as any of them (coherence is not pinned). A thread writing
    /// x three times and one reading it: the read sees 0 or any of the
    /// writes, x ends as the last.
    #[test]
    fn sc_states_of_atomic_exchanges_and_unpinned_coherence() {
        let vocab = load("x86").unwrap();
        let e = |n: &str| vocab.entry_named(n);
        let (w, r, x) = (e("W"), e("R"), e("XCHG"));
        let cpu = |ops| SThread {
            place: Place::Cpu,
            ops,
        };
        let op = SOp::new;
        let xchg = SProgram {
            threads: vec![cpu(vec![op(x, 0, 1, 0)]), cpu(vec![op(x, 0, 2, 0)])],
        };
        // Terms: 0:EAX, 1:EAX, x.
        assert_eq!(both(&vocab, &xchg), vec![vec![0, 1, 2], vec![2, 0, 1]]);
        let three = SProgram {
            threads: (1..=3).map(|v| cpu(vec![op(w, 0, v, u8::MAX)])).collect(),
        };
        assert_eq!(both(&vocab, &three), vec![vec![1], vec![2], vec![3]]);
        let coww = SProgram {
            threads: vec![
                cpu((1..=3).map(|v| op(w, 0, v, u8::MAX)).collect()),
                cpu(vec![op(r, 0, 0, 0)]),
            ],
        };
        assert_eq!(
            both(&vocab, &coww),
            vec![vec![0, 3], vec![1, 3], vec![2, 3], vec![3, 3]]
        );
    }

    /// The two ways agree on 3,000 random programs of up to 8 operations
    /// on up to three locations in up to four threads, over every
    /// built-in vocabulary (adds left out: the walk alone takes them), at
    /// the places the dialect has; the executions' way takes nearly all
    /// of them.
    #[test]
    fn executions_and_interleavings_agree() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        for name in ["x86", "ptx", "c11", "opencl"] {
            let vocab = load(name).unwrap();
            let entries: Vec<usize> = (0..vocab.entries.len())
                .filter(|&e| !vocab.entries[e].adds)
                .collect();
            let places = [
                Place::Cpu,
                Place::Gpu { dev: 0, wg: 0 },
                Place::Gpu { dev: 0, wg: 1 },
                Place::Gpu { dev: 1, wg: 0 },
            ];
            let places = if name == "x86" || name == "c11" {
                &places[..1]
            } else {
                &places[1..]
            };
            let (mut taken, mut states, mut cut) = (0, 0, 0);
            for _ in 0..750 {
                let threads = 1 + next(4);
                let ops = threads + next(9 - threads);
                let mut p = SProgram {
                    threads: (0..threads)
                        .map(|_| SThread {
                            place: places[next(places.len())],
                            ops: Vec::new(),
                        })
                        .collect(),
                };
                let mut value = 0;
                for k in 0..ops {
                    // Each thread one operation at least.
                    let t = if k < threads { k } else { next(threads) };
                    let entry = entries[next(entries.len())];
                    let probe = SOp::new(entry, 0, 0, 0);
                    let (r, w) = (reads(&vocab, &probe), writes(&vocab, &probe));
                    let reg = p.threads[t].ops.iter().filter(|o| o.reg != u8::MAX).count();
                    let v = if w {
                        value += 1;
                        value
                    } else {
                        0
                    };
                    let loc = if r || w { next(3) as u8 } else { 0 };
                    let reg = if r { reg as u8 } else { u8::MAX };
                    p.threads[t].ops.push(SOp::new(entry, loc, v, reg));
                }
                let terms = p.terms(&vocab);
                let walked = Judged::new(
                    terms.iter().copied().map(Some).collect(),
                    by_interleavings(&vocab, &p, &terms),
                    false,
                );
                states += walked.states().len();
                if let Some(s) = by_executions(&vocab, &p, &terms) {
                    taken += 1;
                    let execs = Judged::new(terms.iter().copied().map(Some).collect(), s, false);
                    assert_eq!(execs.states(), walked.states(), "{name}: {p:?}");
                    // Some outcome is cut: SC does not reach it.
                    let (outcomes, _) = p.outcomes(&vocab);
                    if outcomes.iter().any(|c| !execs.allows(c)) {
                        cut += 1;
                    }
                }
            }
            assert!(taken >= 700, "{name}: {taken} of 750 taken");
            assert!(
                cut >= 300,
                "{name}: {cut} programs with an outcome SC does not reach"
            );
            assert!(states >= 2000, "{name}: {states} states");
        }
    }
}
