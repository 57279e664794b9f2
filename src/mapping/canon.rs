//! Canonical forms of generated programs: the representative of a class
//! of programs under permutations of equally sized threads and the
//! renumbering of locations, devices and work-groups by first use. The
//! enumerator ([`super::enumerate`]) keeps only representatives; synthesis
//! asks the same question of each filling of a shape.

use super::enumerate::{Op, OpKind, Place, Program, Thread};

/// The encoding compared for canonical forms.
fn encode(threads: &[&Thread]) -> Vec<u8> {
    let mut e = Vec::with_capacity(64);
    for t in threads {
        e.push(t.size() as u8);
        match t.place {
            Place::Cpu => e.extend([0, 0, 0]),
            Place::Gpu { dev, wg } => e.extend([1, dev, wg]),
            Place::Plain => e.extend([2, 0, 0]),
        }
        e.push(t.ops.len() as u8);
        for o in &t.ops {
            e.extend([o.kind as u8, o.order, o.scope, o.loc, o.remote as u8]);
        }
    }
    e
}

/// Renumbers locations, devices and work-groups by first use, in order.
fn normalize(threads: &[&Thread]) -> Vec<Thread> {
    let mut locs: Vec<u8> = Vec::new();
    let mut devs: Vec<u8> = Vec::new();
    let mut wgs: Vec<u8> = Vec::new();
    let idx = |v: &mut Vec<u8>, x: u8| -> u8 {
        match v.iter().position(|&y| y == x) {
            Some(i) => i as u8,
            None => {
                v.push(x);
                (v.len() - 1) as u8
            }
        }
    };
    threads
        .iter()
        .map(|t| Thread {
            place: match t.place {
                Place::Cpu => Place::Cpu,
                Place::Plain => Place::Plain,
                Place::Gpu { dev, wg } => Place::Gpu {
                    dev: idx(&mut devs, dev),
                    wg: idx(&mut wgs, wg),
                },
            },
            ops: t
                .ops
                .iter()
                .map(|o| Op {
                    loc: if o.kind == OpKind::Fence {
                        0
                    } else {
                        idx(&mut locs, o.loc)
                    },
                    ..*o
                })
                .collect(),
        })
        .collect()
}

/// The representative of `p`'s class under permutations of equally sized
/// threads and renumbering (the one the enumeration generates), for tests.
pub fn canonical(p: &Program) -> Program {
    let n = p.threads.len();
    let mut best: Option<(Vec<u8>, Vec<Thread>)> = None;
    let mut perm: Vec<usize> = (0..n).collect();
    let sizes: Vec<usize> = p.threads.iter().map(Thread::size).collect();
    permute(&mut perm, 0, &mut |perm| {
        if perm.iter().enumerate().all(|(k, &j)| sizes[j] == sizes[k]) {
            let ts: Vec<&Thread> = perm.iter().map(|&j| &p.threads[j]).collect();
            let norm = normalize(&ts);
            let e = encode(&norm.iter().collect::<Vec<_>>());
            if best.as_ref().is_none_or(|(b, _)| e < *b) {
                best = Some((e, norm));
            }
        }
    });
    Program {
        threads: best.map(|b| b.1).unwrap_or_default(),
        rmw_add: p.rmw_add,
    }
}

fn permute(v: &mut Vec<usize>, k: usize, f: &mut dyn FnMut(&[usize])) {
    if k == v.len() {
        f(v);
        return;
    }
    for i in k..v.len() {
        v.swap(k, i);
        permute(v, k + 1, f);
        v.swap(k, i);
    }
}

/// Whether `p` is the smallest of its class under permutations of equally
/// sized threads (threads are already by non-increasing size).
///
/// The permuted programs are built thread by thread, renumbered as they
/// go, and compared with `p` as they are built ([`Canon`]): a thread that
/// already makes the permuted program larger cuts every permutation that
/// starts with it, and one that makes it smaller ends the test. A program
/// that is not renumbered by first use, or too large for the fixed tables,
/// is tested by [`is_canonical_by_all`], every permutation in full.
pub(crate) fn is_canonical(threads: &[Thread]) -> bool {
    let n = threads.len();
    if n < 2 {
        return true;
    }
    let mut sizes = [0usize; Canon::MAX_THREADS];
    if n > Canon::MAX_THREADS {
        return is_canonical_by_all(threads);
    }
    for (s, t) in sizes.iter_mut().zip(threads) {
        *s = t.size();
    }
    if sizes[..n].windows(2).all(|w| w[0] != w[1]) {
        // No two threads of equal size: the only permutation allowed is
        // the identity.
        return true;
    }
    let ops: usize = threads.iter().map(|t| t.ops.len()).sum();
    let small = |x: u8| (x as usize) < Canon::TABLE;
    let numbered_small = threads.iter().all(|t| {
        let place = match t.place {
            Place::Gpu { dev, wg } => small(dev) && small(wg),
            _ => true,
        };
        place && t.ops.iter().all(|o| small(o.loc))
    });
    if ops + 2 * n > Canon::MAX_NUMBERS || !numbered_small {
        return is_canonical_by_all(threads);
    }
    let mut mine = [0u8; Canon::MAX_BYTES];
    let mut len = 0;
    for t in threads {
        let need = 5 + 5 * t.ops.len();
        if len + need > Canon::MAX_BYTES {
            return is_canonical_by_all(threads);
        }
        encode_thread(t, &mut mine[len..len + need]);
        len += need;
    }
    let mut c = Canon {
        threads,
        sizes,
        mine: &mine[..len],
        locs: [u8::MAX; Canon::TABLE],
        devs: [u8::MAX; Canon::TABLE],
        wgs: [u8::MAX; Canon::TABLE],
        counts: [0; 3],
        undo: [(0, 0); Canon::MAX_NUMBERS],
        given: 0,
        used: 0,
    };
    // The identity, renumbered, must be `p` itself; otherwise compare
    // every permutation in full, as the test always did.
    let mut off = 0;
    for j in 0..n {
        match c.compare(j, off) {
            (std::cmp::Ordering::Equal, next) => off = next,
            _ => return is_canonical_by_all(threads),
        }
    }
    c.reset();
    c.smallest(0, 0)
}

/// One thread's bytes of [`encode`], as is.
fn encode_thread(t: &Thread, out: &mut [u8]) {
    out[0] = t.size() as u8;
    let (a, b, c) = match t.place {
        Place::Cpu => (0, 0, 0),
        Place::Gpu { dev, wg } => (1, dev, wg),
        Place::Plain => (2, 0, 0),
    };
    out[1..4].copy_from_slice(&[a, b, c]);
    out[4] = t.ops.len() as u8;
    for (o, chunk) in t.ops.iter().zip(out[5..].chunks_exact_mut(5)) {
        chunk.copy_from_slice(&[o.kind as u8, o.order, o.scope, o.loc, o.remote as u8]);
    }
}

/// The state of [`is_canonical`]'s search: which threads are placed, and
/// the renumbering of locations, devices and work-groups so far (by first
/// use, as [`normalize`] does), with a log to undo it.
struct Canon<'a> {
    threads: &'a [Thread],
    sizes: [usize; Canon::MAX_THREADS],
    /// The program's own encoding.
    mine: &'a [u8],
    /// Renumbered location, device and work-group, by original number
    /// (`u8::MAX`: not met yet).
    locs: [u8; Canon::TABLE],
    devs: [u8; Canon::TABLE],
    wgs: [u8; Canon::TABLE],
    /// How many locations, devices and work-groups are numbered.
    counts: [u8; 3],
    /// (table, original number) of each number given, in order: the first
    /// `given` entries.
    undo: [(u8, u8); Canon::MAX_NUMBERS],
    given: usize,
    /// The threads placed so far, as a bit set.
    used: u64,
}

impl Canon<'_> {
    const MAX_THREADS: usize = 64;
    const MAX_BYTES: usize = 256;
    /// Locations, devices and work-groups are numbered below this.
    const TABLE: usize = 32;
    /// Numbers given at most (one per operation's location and thread's
    /// device and work-group).
    const MAX_NUMBERS: usize = 128;

    /// The number of `x` in table `k` (0 locations, 1 devices, 2
    /// work-groups), given the next one if `x` is new.
    fn number(&mut self, k: u8, x: u8) -> u8 {
        let table = match k {
            0 => &mut self.locs,
            1 => &mut self.devs,
            _ => &mut self.wgs,
        };
        if table[x as usize] == u8::MAX {
            table[x as usize] = self.counts[k as usize];
            self.counts[k as usize] += 1;
            self.undo[self.given] = (k, x);
            self.given += 1;
        }
        table[x as usize]
    }

    /// Takes back the numbers given after the log had `len` entries.
    fn undo_to(&mut self, len: usize) {
        while self.given > len {
            self.given -= 1;
            let (k, x) = self.undo[self.given];
            let table = match k {
                0 => &mut self.locs,
                1 => &mut self.devs,
                _ => &mut self.wgs,
            };
            table[x as usize] = u8::MAX;
            self.counts[k as usize] -= 1;
        }
    }

    fn reset(&mut self) {
        self.undo_to(0);
        self.used = 0;
    }

    /// Compares thread `j`, renumbered after the threads placed so far,
    /// with `mine` from byte `off`: the first difference, and the offset
    /// after the thread. Numbers given stay (the caller undoes them).
    fn compare(&mut self, j: usize, off: usize) -> (std::cmp::Ordering, usize) {
        let t = &self.threads[j];
        let (a, b, c) = match t.place {
            Place::Cpu => (0, 0, 0),
            Place::Plain => (2, 0, 0),
            Place::Gpu { dev, wg } => (1, self.number(1, dev), self.number(2, wg)),
        };
        let head = [t.size() as u8, a, b, c, t.ops.len() as u8];
        let mut at = off;
        for x in head {
            match x.cmp(&self.mine[at]) {
                std::cmp::Ordering::Equal => at += 1,
                other => return (other, at),
            }
        }
        for o in &t.ops {
            let loc = if o.kind == OpKind::Fence {
                0
            } else {
                self.number(0, o.loc)
            };
            for x in [o.kind as u8, o.order, o.scope, loc, o.remote as u8] {
                match x.cmp(&self.mine[at]) {
                    std::cmp::Ordering::Equal => at += 1,
                    other => return (other, at),
                }
            }
        }
        (std::cmp::Ordering::Equal, at)
    }

    /// Whether no permutation placing the remaining threads from position
    /// `pos` (at byte `off`) is smaller than `mine`.
    fn smallest(&mut self, pos: usize, off: usize) -> bool {
        let n = self.threads.len();
        if pos == n {
            return true;
        }
        for j in 0..n {
            if self.used & (1u64 << j) != 0 || self.sizes[j] != self.sizes[pos] {
                continue;
            }
            let mark = self.given;
            let (ord, next) = self.compare(j, off);
            let fine = match ord {
                std::cmp::Ordering::Less => false,
                std::cmp::Ordering::Greater => true,
                std::cmp::Ordering::Equal => {
                    self.used |= 1u64 << j;
                    let r = self.smallest(pos + 1, next);
                    self.used &= !(1u64 << j);
                    r
                }
            };
            self.undo_to(mark);
            if !fine {
                return false;
            }
        }
        true
    }
}

/// [`is_canonical`] by every permutation of equally sized threads, each
/// renumbered and encoded in full.
fn is_canonical_by_all(threads: &[Thread]) -> bool {
    let n = threads.len();
    let sizes: Vec<usize> = threads.iter().map(Thread::size).collect();
    if sizes.windows(2).all(|w| w[0] != w[1]) {
        // No two threads of equal size: the only permutation allowed is
        // the identity.
        return true;
    }
    let mine = encode(&threads.iter().collect::<Vec<_>>());
    let mut perm: Vec<usize> = (0..n).collect();
    // Heap's algorithm over all permutations, keeping those that preserve
    // the size order; n is at most the bound (small).
    let mut c = vec![0usize; n];
    let mut i = 0;
    while i < n {
        if c[i] < i {
            if i % 2 == 0 {
                perm.swap(0, i);
            } else {
                perm.swap(c[i], i);
            }
            if perm.iter().enumerate().all(|(k, &j)| sizes[j] == sizes[k]) {
                let ts: Vec<&Thread> = perm.iter().map(|&j| &threads[j]).collect();
                let norm = normalize(&ts);
                if encode(&norm.iter().collect::<Vec<_>>()) < mine {
                    return false;
                }
            }
            c[i] += 1;
            i = 0;
        } else {
            c[i] = 0;
            i += 1;
        }
    }
    true
}

/// A shape's canonicity test for every choice of its operations' `order`
/// bytes, the rest fixed (synthesis fills a shape's slots, threads then
/// program order, with vocabulary entries stored in `order`): what
/// [`is_canonical`] answers on each filling, decided by comparing a few
/// slots' entries.
///
/// Renumbering depends on locations, devices and work-groups only, so for
/// each permutation of equally sized threads the permuted, renumbered
/// program's bytes are fixed but for its `order` bytes, each the entry of
/// some slot. Its comparison with the filling is then, in byte order, a
/// list of pairs of slots whose entries are compared ([`Step::Entries`]),
/// ended at the first fixed byte that differs: there the permuted program
/// is smaller ([`Step::Smaller`]) or larger (the list just ends).
pub struct CanonPlan {
    /// Per permutation that can be smaller than some filling, its steps.
    perms: Vec<Vec<Step>>,
}

/// One step of a permutation's comparison ([`CanonPlan`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Step {
    /// The permuted program has slot `.0`'s entry where the filling has
    /// slot `.1`'s.
    Entries(u8, u8),
    /// A fixed byte of the permuted program is smaller.
    Smaller,
}

impl CanonPlan {
    /// The plan of shape `threads` (by non-increasing size; their `order`
    /// bytes are ignored). `None` when the shape has 255 slots or more.
    pub fn new(threads: &[Thread]) -> Option<CanonPlan> {
        let n = threads.len();
        let sizes: Vec<usize> = threads.iter().map(Thread::size).collect();
        let mut perms = Vec::new();
        if n < 2 || sizes.windows(2).all(|w| w[0] != w[1]) {
            return Some(CanonPlan { perms });
        }
        // Each operation's `order` byte set to its slot number.
        let mut ids = threads.to_vec();
        let mut slot = 0usize;
        for t in &mut ids {
            for o in &mut t.ops {
                o.order = u8::try_from(slot).ok().filter(|&x| x < u8::MAX)?;
                slot += 1;
            }
        }
        let refs: Vec<&Thread> = ids.iter().collect();
        let mine = encode(&refs);
        let mut is_order = vec![false; mine.len()];
        let mut at = 0;
        for t in &ids {
            for k in 0..t.ops.len() {
                is_order[at + 5 + 5 * k + 1] = true;
            }
            at += 5 + 5 * t.ops.len();
        }
        let mut perm: Vec<usize> = (0..n).collect();
        permute(&mut perm, 0, &mut |perm| {
            if perm.iter().enumerate().all(|(k, &j)| j == k)
                || !perm.iter().enumerate().all(|(k, &j)| sizes[j] == sizes[k])
            {
                return;
            }
            let ts: Vec<&Thread> = perm.iter().map(|&j| &ids[j]).collect();
            let norm = normalize(&ts);
            let theirs = encode(&norm.iter().collect::<Vec<_>>());
            let mut steps = Vec::new();
            for (i, (&a, &b)) in theirs.iter().zip(&mine).enumerate() {
                if is_order[i] {
                    if a != b {
                        steps.push(Step::Entries(a, b));
                    }
                } else if a != b {
                    if a < b {
                        steps.push(Step::Smaller);
                    }
                    break;
                }
            }
            if !steps.is_empty() {
                perms.push(steps);
            }
        });
        // Permutations that compare alike are asked once.
        perms.sort_unstable();
        perms.dedup();
        Some(CanonPlan { perms })
    }

    /// Whether the filling whose slot `s` holds entry `entry[s]` is
    /// canonical (as [`is_canonical`] on the filled threads).
    pub fn is_canonical(&self, entry: &[u8]) -> bool {
        'perms: for steps in &self.perms {
            for step in steps {
                match *step {
                    Step::Entries(a, b) => match entry[a as usize].cmp(&entry[b as usize]) {
                        std::cmp::Ordering::Less => return false,
                        std::cmp::Ordering::Greater => continue 'perms,
                        std::cmp::Ordering::Equal => {}
                    },
                    Step::Smaller => return false,
                }
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fixed stream of small numbers (xorshift from `seed`): `next(m)`
    /// is below `m`.
    fn numbers(mut seed: u64) -> impl FnMut(u64) -> u8 {
        move |m| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % m) as u8
        }
    }

    /// Random programs (a fixed generator), threads by non-increasing
    /// size, renumbered by first use: the pruned test and the test by
    /// every permutation agree on each, and both answers occur.
    #[test]
    fn the_pruned_test_agrees_with_every_permutation() {
        let mut next = numbers(0x2545_f491_4f6c_dd1du64);
        let kinds = [OpKind::Load, OpKind::Store, OpKind::Rmw, OpKind::Fence];
        let (mut yes, mut no) = (0, 0);
        for _ in 0..20_000 {
            let nthreads = 2 + next(4) as usize;
            let mut threads: Vec<Thread> = (0..nthreads)
                .map(|_| Thread {
                    place: match next(3) {
                        0 => Place::Cpu,
                        1 => Place::Gpu {
                            dev: next(2),
                            wg: next(3),
                        },
                        _ => Place::Plain,
                    },
                    ops: (0..1 + next(3))
                        .map(|_| Op {
                            kind: kinds[next(4) as usize],
                            order: next(3),
                            scope: next(2),
                            loc: next(3),
                            remote: false,
                        })
                        .collect(),
                })
                .collect();
            threads.sort_by_key(|t| std::cmp::Reverse(t.size()));
            let threads = normalize(&threads.iter().collect::<Vec<_>>());
            let fast = is_canonical(&threads);
            assert_eq!(fast, is_canonical_by_all(&threads), "{threads:?}");
            if fast {
                yes += 1;
            } else {
                no += 1;
            }
        }
        assert!(yes > 1000 && no > 1000, "{yes} canonical, {no} not");
    }

    /// A shape's plan answers as the test on every filling: random shapes,
    /// each with random fillings of its `order` bytes.
    #[test]
    fn a_shapes_plan_answers_as_the_test() {
        let mut next = numbers(0x9e37_79b9_7f4a_7c15u64);
        let kinds = [OpKind::Load, OpKind::Store, OpKind::Fence];
        let (mut yes, mut no) = (0, 0);
        for _ in 0..3_000 {
            let nthreads = 2 + next(4) as usize;
            let mut threads: Vec<Thread> = (0..nthreads)
                .map(|_| Thread {
                    place: Place::Gpu {
                        dev: next(2),
                        wg: next(2),
                    },
                    ops: (0..1 + next(2))
                        .map(|_| Op {
                            kind: kinds[next(3) as usize],
                            order: 0,
                            scope: 0,
                            loc: next(2),
                            remote: false,
                        })
                        .collect(),
                })
                .collect();
            threads.sort_by_key(|t| std::cmp::Reverse(t.size()));
            let mut threads = normalize(&threads.iter().collect::<Vec<_>>());
            let plan = CanonPlan::new(&threads).unwrap();
            for _ in 0..8 {
                let mut entry = Vec::new();
                for t in &mut threads {
                    for o in &mut t.ops {
                        o.order = next(3);
                        entry.push(o.order);
                    }
                }
                let want = is_canonical_by_all(&threads);
                assert_eq!(plan.is_canonical(&entry), want, "{threads:?}");
                if want {
                    yes += 1;
                } else {
                    no += 1;
                }
            }
        }
        assert!(yes > 1000 && no > 1000, "{yes} canonical, {no} not");
    }
}
